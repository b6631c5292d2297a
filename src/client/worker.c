/* The client's worker thread: the only place that waits on the network or the disk. It sends
 * the queued reports oldest first (one at a time, so the service applies them in order), then
 * split requests, then lookups, writes the state file after each change, and hands every
 * answer to the game thread as a result. The game thread never waits on it: they share only
 * queues under one mutex, held for copies, never across I/O. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "client/client_internal.h"

/* Largest answer read: a splits answer for 256 players is ~50 KiB. */
#define ANSWER_MAX ((size_t)4 << 20)

int64_t eo__client_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void eo__client_push_result(eo_client *c, eo__result *r)
{
    r->next = NULL;
    if (c->res_tail != NULL)
        c->res_tail->next = r;
    else
        c->res = r;
    c->res_tail = r;
}

void eo__client_log_locked(eo_client *c, eo_client_log_level lvl, const char *fmt, ...)
{
    if (c->cfg.log == NULL)
        return;
    eo__result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return;
    r->type = EO__RES_LOG;
    r->level = lvl;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->msg, sizeof r->msg, fmt, ap);
    va_end(ap);
    eo__client_push_result(c, r);
}

typedef struct answer {
    char *p;
    size_t len, cap;
    bool too_big;
} answer;

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    answer *a = arg;
    size_t n = size * nmemb;
    if (a->len + n > ANSWER_MAX) {
        a->too_big = true;
        return 0;
    }
    if (a->len + n + 1 > a->cap) {
        size_t cap = a->cap ? a->cap : 4096;
        while (cap < a->len + n + 1)
            cap *= 2;
        char *p = realloc(a->p, cap);
        if (p == NULL)
            return 0;
        a->p = p;
        a->cap = cap;
    }
    memcpy(a->p + a->len, data, n);
    a->len += n;
    a->p[a->len] = '\0';
    return n;
}

/* Abandons a transfer as soon as the client is being destroyed. */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    eo_client *c = arg;
    return __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* One request. *status is the HTTP status, or 0 when the service was not reached (then
 * @p why says how). The answer body lands in @p a. */
static void request(eo_client *c, CURL *h, const char *method, const char *path,
                    const char *body, long *status, answer *a, char *why, size_t whylen)
{
    char url[1024];
    snprintf(url, sizeof url, "%s%s", c->url, path);
    char auth[600];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->key);
    struct curl_slist *hdrs = curl_slist_append(NULL, auth);
    if (body != NULL)
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(h, CURLOPT_HTTPGET, body == NULL ? 1L : 0L);
    if (body != NULL)
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    a->len = 0;
    a->too_big = false;
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    if (rc == CURLE_OK) {
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    } else {
        snprintf(why, whylen, "%s", a->too_big ? "answer too large" : curl_easy_strerror(rc));
        /* A connection in an unknown state is not reused. */
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);
    }
    if (rc == CURLE_OK)
        curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 0L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
}

/* The service answered a request or not: adjusts the backoff (mu held). */
static void reached(eo_client *c, bool ok, const char *what, const char *why)
{
    if (ok) {
        if (!c->stats.service_up && c->stats.send_failures > 0)
            eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "service reachable again");
        c->stats.service_up = true;
        c->backoff_ms = 0;
        c->next_try_ms = 0;
        return;
    }
    c->stats.send_failures++;
    if (c->stats.service_up || c->backoff_ms == 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "%s failed: %s; retrying with backoff",
                              what, why);
    c->stats.service_up = false;
    c->backoff_ms = c->backoff_ms == 0 ? c->cfg.retry_min_ms : c->backoff_ms * 2;
    if (c->backoff_ms > c->cfg.retry_max_ms)
        c->backoff_ms = c->cfg.retry_max_ms;
    c->next_try_ms = eo__client_mono_ms() + c->backoff_ms;
}

static void rating_result(void *ctx, const char *id, const eo_client_rating *r)
{
    eo_client *c = ctx;
    eo__result *res = calloc(1, sizeof *res);
    if (res == NULL)
        return;
    res->type = EO__RES_RATING;
    snprintf(res->id, sizeof res->id, "%s", id);
    res->rating = *r;
    eo__client_push_result(c, res);
}

/* Sends the oldest queued report (mu held on entry and exit). */
static void send_report(eo_client *c, CURL *h, answer *a)
{
    eo__report *r = eo__client_state_at(&c->st, 0);
    char *id = strdup(r->id), *text = strdup(r->text);
    if (id == NULL || text == NULL) {
        free(id);
        free(text);
        reached(c, false, "report", "out of memory");
        return;
    }
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char path[512], why[256] = "";
    snprintf(path, sizeof path, "/v1/pools/%s/rounds", c->pool_esc);
    long status;
    request(c, h, "POST", path, text, &status, a, why, sizeof why);
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    /* The head is still this report: only this thread pops, and the game thread's push drops
     * the oldest only from a full ring, which may have dropped it meanwhile. */
    bool still_head = c->st.count > 0 && strcmp(eo__client_state_at(&c->st, 0)->id, id) == 0;
    bool done = status == 200 || status == 400 || status == 409 || status == 413 ||
                status == 415 || status == 422;
    if (status == 0 || !done) {
        if (status != 0)
            snprintf(why, sizeof why, "HTTP %ld", status);
        reached(c, false, "report", why); /* 5xx, 401, 403, 404: kept, retried later */
    } else {
        reached(c, true, "report", "");
        if (still_head) {
            eo__client_state_pop(&c->st);
            c->dirty = true;
        }
        eo__result *res = calloc(1, sizeof *res);
        if (res != NULL) {
            res->type = EO__RES_REPORT;
            res->status = (int)status;
            snprintf(res->id, sizeof res->id, "%s", id);
            eo__client_push_result(c, res);
        }
        if (status == 200) {
            c->stats.reports_acked++;
            if (eo__client_parse_round_answer(a->p ? a->p : "", a->len, rating_result, c) != 0)
                eo__client_log_locked(c, EO_CLIENT_LOG_WARN,
                                      "round %s: malformed answer from the service", id);
        } else {
            c->stats.reports_refused++;
            eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                                  "round %s refused by the service (HTTP %ld): %.200s; dropped",
                                  id, status, a->p ? a->p : "");
        }
    }
    free(id);
    free(text);
}

/* Sends the first split job (mu held on entry and exit). */
static void send_job(eo_client *c, CURL *h, answer *a)
{
    eo__job *j = c->jobs;
    c->jobs = j->next;
    if (c->jobs == NULL)
        c->jobs_tail = NULL;
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char path[512], why[256] = "";
    snprintf(path, sizeof path, "/v1/pools/%s/splits", c->pool_esc);
    long status;
    request(c, h, "POST", path, j->body, &status, a, why, sizeof why);
    eo__result *res = calloc(1, sizeof *res);
    int prc = EO_EPARSE;
    if (res != NULL && status == 200)
        prc = eo__client_parse_splits(a->p ? a->p : "", a->len, &res->splits);
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    /* A failed split request does not grow the reports' backoff: split requests are sent
     * whatever the backoff, and their failures would otherwise stretch it to the cap during a
     * short outage and hold the queued reports back long after the service returned. */
    if (status != 0)
        reached(c, true, "split request", "");
    else
        eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "split request failed: %s", why);
    if (status != 0 && status != 200)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "split request: HTTP %ld: %.200s", status,
                              a->p ? a->p : "");
    else if (status == 200 && prc != 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "split request: malformed answer");
    if (res != NULL) {
        res->type = EO__RES_SPLITS;
        res->tag = j->tag;
        res->ok = status == 200 && prc == 0;
        if (res->ok)
            c->stats.splits++;
        eo__client_push_result(c, res);
    }
    free(j->body);
    free(j);
}

/* Looks up the last queued player (mu held on entry and exit). */
static void send_lookup(eo_client *c, CURL *h, answer *a)
{
    char *id = c->lookups[c->nlookups - 1];
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char *esc = curl_easy_escape(h, id, 0);
    char path[1024], why[256] = "";
    snprintf(path, sizeof path, "/v1/pools/%s/players/%s", c->pool_esc, esc ? esc : "");
    curl_free(esc);
    long status = 0;
    if (esc != NULL)
        request(c, h, "GET", path, NULL, &status, a, why, sizeof why);
    else
        snprintf(why, sizeof why, "out of memory");
    char got[EO_ID_MAX + 1];
    eo_client_rating r;
    int prc = status == 200 ? eo__client_parse_lookup(a->p ? a->p : "", a->len, got, &r)
                            : EO_EPARSE;
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    reached(c, status != 0, "lookup", why);
    if (status == 0)
        return; /* stays queued for the next try */
    /* Done with this id either way; it is still the last one (only this thread removes, the
     * game thread only appends, so find it again). */
    for (size_t i = c->nlookups; i-- > 0;) {
        if (c->lookups[i] == id) {
            c->lookups[i] = c->lookups[--c->nlookups];
            break;
        }
    }
    if (prc == 0 && strcmp(got, id) == 0) {
        c->stats.lookups++;
        rating_result(c, got, &r);
    } else {
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "lookup of %s: HTTP %ld%s", id, status,
                              status == 200 ? ", malformed answer" : "");
    }
    free(id);
}

/* Writes the state file when it changed (mu held on entry and exit). */
static void persist(eo_client *c)
{
    char *text = NULL;
    size_t len = 0;
    int rc = eo__client_state_format(&c->st, &text, &len);
    if (rc != 0)
        return;
    c->dirty = false;
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char err[512] = "";
    rc = eo__client_file_write(c->state_file, text, len, err, sizeof err);
    free(text);
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    if (rc != 0) {
        c->dirty = true; /* try again on the next change or wake-up */
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR, "state file: %s", err);
    }
}

bool eo__client_idle(const eo_client *c)
{
    return !c->busy && !c->dirty && c->st.count == 0 && c->jobs == NULL && c->nlookups == 0;
}

void *eo__client_worker(void *arg)
{
    eo_client *c = arg;
    CURL *h = curl_easy_init();
    answer a = {0};
    if (h != NULL) {
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->cfg.request_timeout_ms);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_USERAGENT, "libevenodds-client/0.1");
    }
    pthread_mutex_lock(&c->mu);
    if (h == NULL)
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR, "libcurl could not start: no reports");
    while (!c->stop) {
        if (c->dirty) {
            persist(c);
            continue;
        }
        int64_t now = eo__client_mono_ms();
        bool gate_open = now >= c->next_try_ms;
        if (h != NULL && c->st.count > 0 && gate_open) {
            send_report(c, h, &a);
        } else if (h != NULL && c->jobs != NULL) {
            send_job(c, h, &a);
        } else if (h != NULL && c->nlookups > 0 && gate_open) {
            send_lookup(c, h, &a);
        } else {
            if (eo__client_idle(c))
                pthread_cond_broadcast(&c->idle);
            bool gated = h != NULL && (c->st.count > 0 || c->nlookups > 0);
            if (gated) {
                struct timespec ts;
                int64_t at = c->next_try_ms;
                ts.tv_sec = (time_t)(at / 1000);
                ts.tv_nsec = (long)(at % 1000) * 1000000;
                pthread_cond_timedwait(&c->wake, &c->mu, &ts);
            } else {
                pthread_cond_wait(&c->wake, &c->mu);
            }
        }
    }
    pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->mu);
    free(a.p);
    curl_easy_cleanup(h);
    return NULL;
}
