/* Prometheus counters and histograms. Updates are relaxed atomic adds (no lock on the request
 * path); a scrape reads each value once, so a scrape may mix figures a few requests apart. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/service.h"

static const double lat_bounds[EO__LAT_BUCKETS - 1] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0};
static const unsigned batch_bounds[EO__BATCH_BUCKETS - 1] = {1, 2, 4, 8, 16, 32, 64, 128, 256};
static const int status_codes[] = {200, 201, 202, 400, 401, 403, 404,
                                   405, 409, 413, 415, 422, 500, 503};
#define N_STATUS (sizeof status_codes / sizeof status_codes[0])

void eo__metrics_init(eo__metrics *m)
{
    memset(m, 0, sizeof *m);
}

static size_t status_slot(int status)
{
    for (size_t i = 0; i < N_STATUS; i++)
        if (status_codes[i] == status)
            return i;
    return N_STATUS; /* "other" */
}

void eo__hist_add(eo__hist *h, double seconds)
{
    size_t b = 0;
    while (b < EO__LAT_BUCKETS - 1 && seconds > lat_bounds[b])
        b++;
    atomic_fetch_add_explicit(&h->bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
    double us = seconds * 1e6;
    atomic_fetch_add_explicit(&h->sum_us, us > 0 ? (uint_fast64_t)us : 0, memory_order_relaxed);
}

void eo__metrics_request(eo__metrics *m, int route, int status, double seconds)
{
    size_t r = route >= 0 && (size_t)route < eo__route_count ? (size_t)route : EO__ROUTES_MAX;
    atomic_fetch_add_explicit(&m->requests[r][status_slot(status)], 1, memory_order_relaxed);
    eo__hist_add(&m->latency[r], seconds);
}

void eo__metrics_commit(eo__metrics *m, double seconds, size_t batch, size_t rounds_rated, bool ok)
{
    eo__hist_add(&m->commit, seconds);
    size_t b = 0;
    while (b < EO__BATCH_BUCKETS - 1 && batch > batch_bounds[b])
        b++;
    atomic_fetch_add_explicit(&m->batch_bucket[b], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->batch_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&m->batch_sum, batch, memory_order_relaxed);
    if (ok)
        atomic_fetch_add_explicit(&m->rounds_rated, rounds_rated, memory_order_relaxed);
    else
        atomic_fetch_add_explicit(&m->commit_failures, 1, memory_order_relaxed);
}

/* The exposition is built in a bounded buffer (core/buf.h); a failure is reported at the end. */
#define METRICS_MAX ((size_t)8 << 20)

/* A metrics row's labels: its route's template and method, "unmatched" and "" for the last. */
static const char *route_path(size_t r)
{
    return r < eo__route_count ? eo__routes[r].path : "unmatched";
}

static const char *route_method(size_t r)
{
    return r < eo__route_count ? eo__routes[r].method : "";
}

static uint64_t ld(atomic_uint_fast64_t *a)
{
    return (uint64_t)atomic_load_explicit(a, memory_order_relaxed);
}

void eo__hist_render(eo__buf *t, const char *name, const char *labels, eo__hist *h)
{
    uint64_t cum = 0;
    const char *sep = labels[0] ? "," : "";
    for (size_t b = 0; b < EO__LAT_BUCKETS; b++) {
        cum += ld(&h->bucket[b]);
        if (b < EO__LAT_BUCKETS - 1)
            eo__buf_printf(t, "%s_bucket{%s%sle=\"%g\"} %llu\n", name, labels, sep, lat_bounds[b],
                           (unsigned long long)cum);
        else
            eo__buf_printf(t, "%s_bucket{%s%sle=\"+Inf\"} %llu\n", name, labels, sep,
                           (unsigned long long)cum);
    }
    const char *open = labels[0] ? "{" : "", *close = labels[0] ? "}" : "";
    eo__buf_printf(t, "%s_sum%s%s%s %.6f\n", name, open, labels, close,
                   (double)ld(&h->sum_us) / 1e6);
    eo__buf_printf(t, "%s_count%s%s%s %llu\n", name, open, labels, close,
                   (unsigned long long)ld(&h->count));
}

/* The connection guard's and the compute pool's figures (docs/SERVICE.md "Connections and
 * limits"). */
static void render_connections(eo__buf *t, eo__metrics *m)
{
    static const char *const refused[EO__REFUSE_COUNT] = {"total_cap", "address_cap"};
    static const char *const dropped[EO__DROP_COUNT] = {"header_deadline", "slow_body"};
    eo__buf_printf(t,
                   "# HELP evenodds_connections_open Connections open now.\n"
                   "# TYPE evenodds_connections_open gauge\nevenodds_connections_open %llu\n",
                   (unsigned long long)ld(&m->conn_open));
    eo__buf_printf(t,
                   "# HELP evenodds_connections_accepted_total Connections accepted.\n"
                   "# TYPE evenodds_connections_accepted_total counter\n"
                   "evenodds_connections_accepted_total %llu\n",
                   (unsigned long long)ld(&m->conn_accepted));
    eo__buf_printf(t,
                   "# HELP evenodds_connections_refused_total Connections closed at accept, by "
                   "the cap that was full.\n# TYPE evenodds_connections_refused_total counter\n");
    for (int i = 0; i < EO__REFUSE_COUNT; i++)
        eo__buf_printf(t, "evenodds_connections_refused_total{reason=\"%s\"} %llu\n", refused[i],
                       (unsigned long long)ld(&m->conn_refused[i]));
    eo__buf_printf(t, "# HELP evenodds_connections_dropped_total Connections closed for a missed "
                      "deadline.\n# TYPE evenodds_connections_dropped_total counter\n");
    for (int i = 0; i < EO__DROP_COUNT; i++)
        eo__buf_printf(t, "evenodds_connections_dropped_total{reason=\"%s\"} %llu\n", dropped[i],
                       (unsigned long long)ld(&m->conn_dropped[i]));
    eo__buf_printf(t,
                   "# HELP evenodds_compute_queue_depth Heavy requests waiting for the compute "
                   "pool.\n# TYPE evenodds_compute_queue_depth gauge\n"
                   "evenodds_compute_queue_depth %zu\n",
                   atomic_load_explicit(&m->compute_depth, memory_order_relaxed));
    static const char *const busy[EO__BUSY_COUNT] = {"writer_queue", "compute_queue",
                                                     "body_budget", "refits"};
    eo__buf_printf(t, "# HELP evenodds_requests_refused_total Requests answered 503 overloaded, "
                      "by what was full.\n# TYPE evenodds_requests_refused_total counter\n");
    for (int i = 0; i < EO__BUSY_COUNT; i++)
        eo__buf_printf(t, "evenodds_requests_refused_total{reason=\"%s\"} %llu\n", busy[i],
                       (unsigned long long)ld(&m->refused[i]));
    if (m->body_held)
        eo__buf_printf(t, "# HELP evenodds_body_bytes_held Request body bytes held in memory "
                          "against --body-budget.\n# TYPE evenodds_body_bytes_held gauge\n"
                          "evenodds_body_bytes_held %zu\n",
                       atomic_load_explicit(m->body_held, memory_order_relaxed));
}

/* Requests by route, method and status, and their durations. */
static void render_requests(eo__buf *t, eo__metrics *m)
{
    char labels[160];
    eo__buf_printf(t, "# HELP evenodds_http_requests_total HTTP requests answered, by route, "
                      "method and status code.\n# TYPE evenodds_http_requests_total counter\n");
    for (size_t r = 0; r <= EO__ROUTES_MAX; r++)
        for (size_t s = 0; s <= N_STATUS; s++) {
            uint64_t v = ld(&m->requests[r][s]);
            if (!v)
                continue;
            char code[8];
            if (s < N_STATUS)
                snprintf(code, sizeof code, "%d", status_codes[s]);
            else
                snprintf(code, sizeof code, "other");
            eo__buf_printf(
                t, "evenodds_http_requests_total{route=\"%s\",method=\"%s\",code=\"%s\"} %llu\n",
                route_path(r), route_method(r), code, (unsigned long long)v);
        }
    eo__buf_printf(t, "# HELP evenodds_http_request_duration_seconds Time from the first byte of "
                      "a request to its completion, by route.\n"
                      "# TYPE evenodds_http_request_duration_seconds histogram\n");
    for (size_t r = 0; r <= EO__ROUTES_MAX; r++) {
        if (!ld(&m->latency[r].count))
            continue;
        snprintf(labels, sizeof labels, "route=\"%s\",method=\"%s\"", route_path(r),
                 route_method(r));
        eo__hist_render(t, "evenodds_http_request_duration_seconds", labels, &m->latency[r]);
    }
}

/* The writer: rounds rated, its queue, its commits and their batches. */
static void render_writer(eo__buf *t, eo__metrics *m)
{
    eo__buf_printf(t, "# HELP evenodds_rounds_rated_total Rounds rated and committed (replays "
                      "not counted).\n# TYPE evenodds_rounds_rated_total counter\n"
                      "evenodds_rounds_rated_total %llu\n",
                   (unsigned long long)ld(&m->rounds_rated));
    eo__buf_printf(t, "# HELP evenodds_writer_queue_depth Updates waiting for the writer.\n"
                      "# TYPE evenodds_writer_queue_depth gauge\nevenodds_writer_queue_depth %zu\n",
                   atomic_load_explicit(&m->queue_depth, memory_order_relaxed));
    eo__buf_printf(t, "# HELP evenodds_commit_failures_total Group commits that failed.\n"
                      "# TYPE evenodds_commit_failures_total counter\n"
                      "evenodds_commit_failures_total %llu\n",
                   (unsigned long long)ld(&m->commit_failures));
    eo__buf_printf(t, "# HELP evenodds_commit_duration_seconds Time to apply and commit one "
                      "batch.\n# TYPE evenodds_commit_duration_seconds histogram\n");
    eo__hist_render(t, "evenodds_commit_duration_seconds", "", &m->commit);
    eo__buf_printf(t, "# HELP evenodds_commit_batch_size Updates per group commit.\n"
                      "# TYPE evenodds_commit_batch_size histogram\n");
    uint64_t cum = 0;
    for (size_t b = 0; b < EO__BATCH_BUCKETS; b++) {
        cum += ld(&m->batch_bucket[b]);
        if (b < EO__BATCH_BUCKETS - 1)
            eo__buf_printf(t, "evenodds_commit_batch_size_bucket{le=\"%u\"} %llu\n",
                           batch_bounds[b], (unsigned long long)cum);
        else
            eo__buf_printf(t, "evenodds_commit_batch_size_bucket{le=\"+Inf\"} %llu\n",
                           (unsigned long long)cum);
    }
    eo__buf_printf(t,
                   "evenodds_commit_batch_size_sum %llu\nevenodds_commit_batch_size_count %llu\n",
                   (unsigned long long)ld(&m->batch_sum), (unsigned long long)ld(&m->batch_count));
}

int eo__metrics_render(eo__metrics *m, void (*more)(void *ctx, eo__buf *t), void *ctx, char **out,
                       size_t *len)
{
    eo__buf t;
    eo__buf_init(&t, METRICS_MAX);
    render_requests(&t, m);
    render_writer(&t, m);
    if (m->inflight)
        eo__buf_printf(&t, "# HELP evenodds_http_requests_in_flight Requests received and not "
                           "yet completed (this scrape included).\n"
                           "# TYPE evenodds_http_requests_in_flight gauge\n"
                           "evenodds_http_requests_in_flight %ld\n",
                       atomic_load_explicit(m->inflight, memory_order_relaxed));
    render_connections(&t, m);
    if (more != NULL)
        more(ctx, &t);
    int rc = t.err;
    *out = eo__buf_take(&t, len);
    return rc != 0 ? EO_ENOMEM : 0;
}
