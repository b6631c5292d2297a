/* The coordinator's figures in /metrics (docs/SERVICE.md "Metrics"): per queue, the tickets
 * waiting, created and ended, the matches formed, assigned and dissolved, how long its passes
 * take and the instances that serve it; the sessions open. The writer counts events as they
 * happen and publishes them after the commit that stored them (eo__mm_publish()), so a scrape
 * never counts what a failed commit undid; the HTTP threads read the published atomics under
 * the state's lock. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/mm.h"
#include "service/service.h"

static const char *const end_names[MM_END_COUNT] = {"assigned", "cancelled", "expired"};
static const char *const match_names[MM_MATCH_COUNT] = {"formed", "assigned", "dissolved"};

static eo__mm_qstats *find(const eo__mm *mm, const char *name)
{
    for (size_t i = 0; i < mm->nstats; i++)
        if (strcmp(mm->stats[i]->queue, name) == 0)
            return mm->stats[i];
    return NULL;
}

eo__mm_qstats *eo__mm_stats(eo__mm *mm, const char *name)
{
    eo__mm_qstats *st = find(mm, name);
    if (st != NULL)
        return st;
    st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    snprintf(st->queue, sizeof st->queue, "%s", name);
    char *l = st->label; /* an id has no control characters: only these two need escaping */
    for (const char *c = name; *c != '\0' && l < st->label + sizeof st->label - 2; c++) {
        if (*c == '"' || *c == '\\')
            *l++ = '\\';
        *l++ = *c;
    }
    *l = '\0';
    pthread_rwlock_wrlock(&mm->lock);
    eo__mm_qstats **v = eo__grow(mm->stats, &mm->capstats, mm->nstats + 1, sizeof *v);
    if (v != NULL) {
        mm->stats = v;
        mm->stats[mm->nstats++] = st;
    }
    pthread_rwlock_unlock(&mm->lock);
    if (v == NULL) {
        free(st);
        return NULL;
    }
    return st;
}

static unsigned long long ld(const atomic_uint_fast64_t *a)
{
    return (unsigned long long)atomic_load_explicit(a, memory_order_relaxed);
}

static const double wait_bounds[EO__MM_WAIT_BUCKETS - 1] = EO__MM_WAIT_BOUNDS;

int eo__mm_stats_started(eo__mm *mm, const mm_match *m)
{
    const eo_queue_config *qc = &m->q->cfg;
    double waits[EO_MATCH_TEAM_MAX * 2];
    for (size_t i = 0; i < m->nt; i++)
        waits[i] = (double)(m->formed_ms - m->tickets[i]->created_ms) / 1000.0;
    for (size_t i = 0; i < m->nt; i++) /* a wall clock set back: no negative wait */
        waits[i] = waits[i] < 0.0 ? 0.0 : waits[i];
    const eo_pool *pool = eo_engine_pool(mm->e, qc->pool);
    bool gauss = pool != NULL && eo_model_has_deviation(eo_pool_model(pool));
    eo__mm_wmatch w = {m->formed_ms, m->p_a, m->quality,
                       (int8_t)(!gauss ? -1 : m->quality < qc->match.steps[0].quality_min),
                       (uint32_t)m->nt};
    return eo__mm_stage_add(&m->q->st->stage, &w, waits);
}

/* Moves the matches started since the last commit into the window and the wait histogram
 * (under the state's write lock: readers copy the window). */
static void publish_started(eo__mm_qstats *st)
{
    const eo__mm_stage *g = &st->stage;
    for (size_t i = 0, k = 0; i < g->nm; k += g->m[i].nt, i++) {
        (void)eo__mm_window_add(&st->win, &g->m[i], g->w + k);
        for (size_t j = k; j < k + g->m[i].nt; j++) {
            size_t b = 0;
            while (b < EO__MM_WAIT_BUCKETS - 1 && g->w[j] > wait_bounds[b])
                b++;
            atomic_fetch_add_explicit(&st->wait_bucket[b], 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->wait_count, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&st->wait_sum_ms, (uint_fast64_t)llround(g->w[j] * 1000.0),
                                      memory_order_relaxed);
        }
    }
}

/* The oldest queued ticket's creation (0: none). The waiting list is in order of age but for
 * tickets back from a dissolved match, which the next pass puts in their place. */
static int64_t oldest_queued(mm_queue *q)
{
    while (q->head < q->nwait && q->wait[q->head] == NULL)
        q->head++;
    int64_t oldest = 0;
    for (size_t i = q->head; i < q->nwait; i++) {
        const mm_ticket *t = q->wait[i];
        if (t != NULL && (oldest == 0 || t->created_ms < oldest))
            oldest = t->created_ms;
        if (oldest != 0 && !q->unsorted)
            break;
    }
    return oldest;
}

/* Adds the counts since the last commit to the published counters. */
static void publish_counts(eo__mm_qstats *st)
{
    atomic_fetch_add_explicit(&st->created, st->n.created, memory_order_relaxed);
    for (int i = 0; i < MM_END_COUNT; i++)
        atomic_fetch_add_explicit(&st->ended[i], st->n.ended[i], memory_order_relaxed);
    for (int i = 0; i < MM_MATCH_COUNT; i++)
        atomic_fetch_add_explicit(&st->matches[i], st->n.matches[i], memory_order_relaxed);
}

/* Counts the live and draining instances of every queue (after a change of instances). */
static int count_instances(void *ctx, const char *key, void *val)
{
    (void)key;
    eo__mm *mm = ctx;
    const mm_instance *in = val;
    for (size_t i = 0; in->state != MM_I_LOST && i < in->reg.nqueues; i++) {
        eo__mm_qstats *st = find(mm, in->reg.queues[i]);
        if (st != NULL && in->state == MM_I_LIVE)
            st->w_live++;
        else if (st != NULL)
            st->w_draining++;
    }
    return 0;
}

void eo__mm_stats_publish(eo__mm *mm)
{
    if (mm == NULL)
        return;
    bool recount = mm->instances_changed;
    pthread_rwlock_wrlock(&mm->lock);
    for (size_t i = 0; i < mm->nstats; i++)
        if (mm->stats[i]->stage.nm > 0)
            publish_started(mm->stats[i]);
    pthread_rwlock_unlock(&mm->lock);
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        publish_counts(st);
        st->w_shown = false;
        if (recount)
            st->w_live = st->w_draining = 0;
    }
    eo__mm_stats_drop(mm);
    if (recount)
        eo__smap_each(mm->instances, count_instances, mm);
    mm->instances_changed = false;
    for (size_t i = 0; i < mm->nqueues; i++) {
        mm_queue *q = mm->queues[i];
        if (q->deleted)
            continue;
        q->st->w_shown = true;
        atomic_store_explicit(&q->st->waiting[0], q->nqueued, memory_order_relaxed);
        atomic_store_explicit(&q->st->waiting[1], q->nmatched, memory_order_relaxed);
        atomic_store_explicit(&q->st->oldest_ms, oldest_queued(q), memory_order_relaxed);
    }
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        atomic_store_explicit(&st->instances[0], st->w_live, memory_order_relaxed);
        atomic_store_explicit(&st->instances[1], st->w_draining, memory_order_relaxed);
        atomic_store_explicit(&st->shown, st->w_shown, memory_order_relaxed);
    }
    atomic_store_explicit(&mm->sessions_open, eo__smap_size(mm->sessions), memory_order_relaxed);
}

void eo__mm_stats_drop(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        memset(&st->n, 0, sizeof st->n);
        memset(&st->m, 0, sizeof st->m);
        st->stage.nm = st->stage.nw = st->stage_mm = st->stage_mw = 0;
    }
}

void eo__mm_stats_mark(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        st->m = st->n;
        st->stage_mm = st->stage.nm;
        st->stage_mw = st->stage.nw;
    }
}

void eo__mm_stats_undo(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        st->n = st->m;
        st->stage.nm = st->stage_mm;
        st->stage.nw = st->stage_mw;
    }
}

/* A figure, or null where nothing was counted. */
static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* The summary of @p st's window: the matches' figures under the lock, the waits copied there
 * and sorted outside it (so the writer's publish never waits for a sort). */
static int summarize(eo__mm *mm, const eo__mm_qstats *st, eo__mm_summary *s)
{
    pthread_rwlock_rdlock(&mm->lock);
    eo__mm_window_matches(&st->win, s);
    double *w = malloc((st->win.nw ? st->win.nw : 1) * sizeof *w);
    size_t n = w ? eo__mm_window_waits(&st->win, w) : 0;
    pthread_rwlock_unlock(&mm->lock);
    if (w == NULL)
        return EO_ENOMEM;
    eo__mm_summary_waits(w, n, s);
    free(w);
    return 0;
}

int eo__mm_figures_add(eo__mm *mm, eo__mm_qstats *st, int64_t now_ms, json_t *f)
{
    eo__mm_summary s;
    if (summarize(mm, st, &s) != 0)
        return EO_ENOMEM;
    int64_t oldest = atomic_load_explicit(&st->oldest_ms, memory_order_relaxed);
    json_t *wait = json_pack("{s:o,s:o,s:o,s:o}", "p50", real_or_null(s.wait_p50), "p95",
                             real_or_null(s.wait_p95), "max", real_or_null(s.wait_max), "mean",
                             real_or_null(s.wait_mean));
    json_t *recent = json_pack(
        "{s:I,s:I,s:o,s:o,s:o,s:o,s:o}", "matches", (json_int_t)s.matches, "tickets",
        (json_int_t)s.tickets, "since", s.matches ? json_integer(s.since_ms) : json_null(),
        "wait_s", wait, "quality_mean", real_or_null(s.quality_mean), "quality_below",
        real_or_null(s.quality_below), "p_dev_mean", real_or_null(s.p_dev_mean));
    int rc = recent == NULL;
    rc = rc || json_object_set_new(
                   f, "formed", json_integer((json_int_t)ld(&st->matches[MM_MATCH_FORMED]))) != 0;
    rc = rc ||
         json_object_set_new(f, "dissolved",
                             json_integer((json_int_t)ld(&st->matches[MM_MATCH_DISSOLVED]))) != 0;
    rc = rc || json_object_set_new(f, "oldest_wait_s",
                                   oldest ? json_real((double)(now_ms - oldest) / 1000.0)
                                          : json_null()) != 0;
    rc = rc || json_object_set_new(f, "recent", recent) != 0;
    return rc ? EO_ENOMEM : 0;
}

/* What the pool's read shows of a queue: its name, teams and regions, and its figures. */
typedef struct pub_queue {
    char name[EO_ID_MAX + 1];
    int team_size;
    int nregions;
    char regions[EO_MATCH_REGIONS_MAX][EO_ID_MAX + 1];
    eo__mm_qstats *st;
} pub_queue;

static int pub_by_name(const void *a, const void *b)
{
    return strcmp(((const pub_queue *)a)->name, ((const pub_queue *)b)->name);
}

/* One queue of the pool's read: the published counts and eo__mm_figures_add()'s. */
static json_t *pub_queue_json(eo__mm *mm, const pub_queue *p, int64_t now_ms)
{
    json_t *regions = json_array();
    for (int r = 0; regions != NULL && r < p->nregions; r++)
        json_array_append_new(regions, json_string(p->regions[r]));
    const eo__mm_qstats *st = p->st;
    json_t *f =
        json_pack("{s:I,s:I,s:I,s:I}", "waiting", (json_int_t)ld(&st->waiting[0]), "matched",
                  (json_int_t)ld(&st->waiting[1]), "tickets", (json_int_t)ld(&st->created),
                  "matches", (json_int_t)ld(&st->matches[MM_MATCH_ASSIGNED]));
    if (f == NULL || eo__mm_figures_add(mm, p->st, now_ms, f) != 0) {
        json_decref(f);
        json_decref(regions);
        return NULL;
    }
    return json_pack("{s:s,s:i,s:o,s:o}", "name", p->name, "team_size", p->team_size, "regions",
                     regions, "figures", f);
}

json_t *eo__mm_pool_queues_json(eo__mm *mm, const char *pool, int64_t now_ms)
{
    pthread_rwlock_rdlock(&mm->lock);
    pub_queue *v = calloc(mm->npub ? mm->npub : 1, sizeof *v);
    size_t n = 0;
    for (size_t i = 0; v != NULL && i < mm->npub; i++) {
        const eo_queue_config *c = &mm->pub[i];
        eo__mm_qstats *st = find(mm, c->name);
        if (strcmp(c->pool, pool) != 0 || st == NULL)
            continue;
        pub_queue *p = &v[n++];
        snprintf(p->name, sizeof p->name, "%s", c->name);
        p->team_size = c->match.team_size;
        p->nregions = c->match.nregions;
        memcpy(p->regions, c->regions, sizeof p->regions);
        p->st = st;
    }
    pthread_rwlock_unlock(&mm->lock);
    json_t *arr = v ? json_array() : NULL;
    if (n > 0)
        qsort(v, n, sizeof *v, pub_by_name);
    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, pub_queue_json(mm, &v[i], now_ms)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    free(v);
    return arr ? json_pack("{s:s,s:o}", "pool", pool, "queues", arr) : NULL;
}

/* One family of counters or gauges by queue and one label @p key over @p names (NULL: only
 * the queue), values at @p off (bytes into eo__mm_qstats) for each name in turn. */
static void family(eo__buf *t, eo__mm *mm, const char *name, const char *type, const char *help,
                   const char *key, const char *const *names, size_t n, size_t off)
{
    eo__buf_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        if (!atomic_load_explicit(&st->shown, memory_order_relaxed))
            continue;
        const atomic_uint_fast64_t *v = (const atomic_uint_fast64_t *)((char *)st + off);
        for (size_t k = 0; k < n; k++) {
            if (key != NULL)
                eo__buf_printf(t, "%s{queue=\"%s\",%s=\"%s\"} %llu\n", name, st->label, key,
                               names[k], ld(&v[k]));
            else
                eo__buf_printf(t, "%s{queue=\"%s\"} %llu\n", name, st->label, ld(&v[k]));
        }
    }
}

/* The waits of started matches' tickets (a histogram in seconds) and each queue's oldest
 * queued ticket's wait at the last commit (under the state's read lock). */
static void render_waits(eo__buf *t, eo__mm *mm)
{
    static const char *const name = "evenodds_matchmaking_wait_seconds";
    eo__buf_printf(t,
                   "# HELP %s How long tickets waited from their creation to the formation of "
                   "their match, counted when the match started on an instance.\n"
                   "# TYPE %s histogram\n",
                   name, name);
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        if (!atomic_load_explicit(&st->shown, memory_order_relaxed))
            continue;
        unsigned long long cum = 0;
        for (size_t b = 0; b < EO__MM_WAIT_BUCKETS; b++) {
            cum += ld(&st->wait_bucket[b]);
            if (b < EO__MM_WAIT_BUCKETS - 1)
                eo__buf_printf(t, "%s_bucket{queue=\"%s\",le=\"%g\"} %llu\n", name, st->label,
                               wait_bounds[b], cum);
            else
                eo__buf_printf(t, "%s_bucket{queue=\"%s\",le=\"+Inf\"} %llu\n", name, st->label,
                               cum);
        }
        eo__buf_printf(t, "%s_sum{queue=\"%s\"} %.3f\n%s_count{queue=\"%s\"} %llu\n", name,
                       st->label, (double)ld(&st->wait_sum_ms) / 1000.0, name, st->label,
                       ld(&st->wait_count));
    }
    eo__buf_printf(t, "# HELP evenodds_matchmaking_oldest_wait_seconds How long the oldest "
                      "ticket waiting for a pass has waited (0: none).\n"
                      "# TYPE evenodds_matchmaking_oldest_wait_seconds gauge\n");
    int64_t now = eo__mm_now_ms();
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        int64_t oldest = atomic_load_explicit(&st->oldest_ms, memory_order_relaxed);
        if (atomic_load_explicit(&st->shown, memory_order_relaxed))
            eo__buf_printf(t, "evenodds_matchmaking_oldest_wait_seconds{queue=\"%s\"} %.3f\n",
                           st->label, oldest ? (double)(now - oldest) / 1000.0 : 0.0);
    }
}

void eo__mm_metrics(void *ctx, eo__buf *t)
{
    static const char *const waiting[2] = {"queued", "matched"};
    static const char *const inst[2] = {"live", "draining"};
    eo__mm *mm = ctx;
    if (mm == NULL)
        return;
    pthread_rwlock_rdlock(&mm->lock);
    family(t, mm, "evenodds_matchmaking_tickets_waiting", "gauge",
           "Tickets waiting in a queue: for a pass (queued), or in a formed match for its ready "
           "check or an instance (matched).",
           "state", waiting, 2, offsetof(eo__mm_qstats, waiting));
    family(t, mm, "evenodds_matchmaking_tickets_created_total", "counter",
           "Tickets filed (idempotent repeats not counted).", NULL, NULL, 1,
           offsetof(eo__mm_qstats, created));
    family(t, mm, "evenodds_matchmaking_tickets_finished_total", "counter",
           "Tickets that ended, by how.", "status", end_names, MM_END_COUNT,
           offsetof(eo__mm_qstats, ended));
    family(t, mm, "evenodds_matchmaking_matches_total", "counter",
           "Matches formed by the passes, assigned to an instance, dissolved (a cancel, a "
           "decline or a ready check's timeout).",
           "event", match_names, MM_MATCH_COUNT, offsetof(eo__mm_qstats, matches));
    family(t, mm, "evenodds_matchmaking_instances", "gauge",
           "Registered instances that serve the queue, by state (lost ones not counted).", "status",
           inst, 2, offsetof(eo__mm_qstats, instances));
    eo__buf_printf(t, "# HELP evenodds_matchmaking_pass_duration_seconds Time of one queue's "
                      "periodic pass on the writer.\n"
                      "# TYPE evenodds_matchmaking_pass_duration_seconds histogram\n");
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        if (!atomic_load_explicit(&st->shown, memory_order_relaxed))
            continue;
        char labels[sizeof st->label + 16];
        snprintf(labels, sizeof labels, "queue=\"%s\"", st->label);
        eo__hist_render(t, "evenodds_matchmaking_pass_duration_seconds", labels, &st->pass);
    }
    render_waits(t, mm);
    pthread_rwlock_unlock(&mm->lock);
    eo__buf_printf(t,
                   "# HELP evenodds_matchmaking_sessions_open Sessions open on instances.\n"
                   "# TYPE evenodds_matchmaking_sessions_open gauge\n"
                   "evenodds_matchmaking_sessions_open %llu\n",
                   ld(&mm->sessions_open));
}
