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
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

#include "client/client_internal.h"

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

size_t eo__client_on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    eo__answer_buf *a = arg;
    size_t n = size * nmemb;
    if (a->len + n > EO__ANSWER_MAX) {
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

/* Abandons a transfer as soon as the client is being destroyed (a backstop: destroy also
 * shuts the transfer's socket down, which libcurl notices at once). */
static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    eo_client *c = arg;
    return __atomic_load_n(&c->stop, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* The transfer's socket is recorded so that eo_client_destroy() can shut it down: a request
 * waiting on a service that never answers then ends at once, not at libcurl's next progress
 * call (about once a second). */
static curl_socket_t on_open(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
    (void)purpose;
    eo_client *c = arg;
    curl_socket_t fd = socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
    pthread_mutex_lock(&c->mu);
    c->sock = fd;
    if (c->stop && fd != CURL_SOCKET_BAD)
        shutdown(fd, SHUT_RDWR);
    pthread_mutex_unlock(&c->mu);
    return fd;
}

static int on_close(void *arg, curl_socket_t fd)
{
    eo_client *c = arg;
    pthread_mutex_lock(&c->mu);
    if (c->sock == fd)
        c->sock = -1;
    pthread_mutex_unlock(&c->mu);
    return close(fd);
}

/* One request. *status is the HTTP status, or 0 when the service was not reached (then
 * @p why says how). The answer body lands in @p a (empty when there is none). */
static void request(eo_client *c, CURL *h, const char *method, const char *path, const char *body,
                    long *status, eo__answer_buf *a, char *why, size_t whylen)
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
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, eo__client_on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    a->len = 0;
    a->too_big = false;
    if (a->p != NULL)
        a->p[0] = '\0';
    CURLcode rc = curl_easy_perform(h);
    *status = 0;
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
    else
        snprintf(why, whylen, "%s", a->too_big ? "answer too large" : curl_easy_strerror(rc));
    /* A connection in an unknown state is not reused. */
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, rc == CURLE_OK ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
}

/* The service answered: the backoff ends (mu held). */
static void reached(eo_client *c)
{
    if (!c->stats.service_up && c->stats.send_failures > 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "service reachable again");
    c->stats.service_up = true;
    c->backoff_ms = 0;
    c->next_try_ms = 0;
    c->lookup_try_ms = 0;
}

/* A report or lookup failed: the backoff grows (mu held). A network failure (the service not
 * reached) holds back reports and lookups; an HTTP failure only the kind that failed, so that
 * a store failing round reports does not keep joiners from their ratings. */
static void failed(eo_client *c, bool network, bool lookup, const char *what, const char *why)
{
    c->stats.send_failures++;
    if (c->stats.service_up || c->backoff_ms == 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "%s failed: %s; retrying with backoff",
                              what, why);
    c->stats.service_up = !network;
    c->backoff_ms = c->backoff_ms == 0 ? c->cfg.retry_min_ms : c->backoff_ms * 2;
    if (c->backoff_ms > c->cfg.retry_max_ms)
        c->backoff_ms = c->cfg.retry_max_ms;
    int64_t at = eo__client_mono_ms() + c->backoff_ms;
    if (network || !lookup)
        c->next_try_ms = at;
    if (network || lookup)
        c->lookup_try_ms = at;
}

/* Results made without the lock, handed over in one step. */
typedef struct batch {
    eo__result *head, *tail;
} batch;

static eo__result *batch_new(batch *b, eo__res_type type)
{
    eo__result *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->type = type;
    if (b->tail != NULL)
        b->tail->next = r;
    else
        b->head = r;
    b->tail = r;
    return r;
}

static void batch_rating(void *ctx, const char *id, const eo_client_rating *r)
{
    eo__result *res = batch_new(ctx, EO__RES_RATING);
    if (res == NULL)
        return;
    snprintf(res->id, sizeof res->id, "%s", id);
    res->rating = *r;
}

/* Appends @p b's results (mu held). */
static void batch_hand_over(eo_client *c, batch *b)
{
    for (eo__result *r = b->head; r != NULL;) {
        eo__result *next = r->next;
        eo__client_push_result(c, r);
        r = next;
    }
    b->head = b->tail = NULL;
}

/* Sends the oldest queued report (mu held on entry and exit). */
static void send_report(eo_client *c, CURL *h, eo__answer_buf *a)
{
    eo__report *r = eo__client_state_at(&c->st, 0);
    char *id = strdup(r->id), *text = strdup(r->text);
    if (id == NULL || text == NULL) {
        free(id);
        free(text);
        failed(c, false, false, "report", "out of memory");
        return;
    }
    c->busy = true;
    c->sending = id;
    pthread_mutex_unlock(&c->mu);
    char path[512], why[256] = "";
    snprintf(path, sizeof path, "/v1/pools/%s/rounds", c->pool_esc);
    long status;
    request(c, h, "POST", path, text, &status, a, why, sizeof why);
    batch b = {0};
    bool malformed = false;
    if (status == 200)
        malformed = eo__client_parse_round_answer(a->p ? a->p : "", a->len, batch_rating, &b) != 0;
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    c->sending = NULL;
    bool done = status == 200 || status == 400 || status == 409 || status == 413 ||
                status == 415 || status == 422;
    if (!done) {
        if (status != 0)
            snprintf(why, sizeof why, "HTTP %ld", status);
        failed(c, status == 0, false, "report", why); /* 5xx, 401, 403, 404: kept */
        free(id);
        free(text);
        return;
    }
    reached(c);
    /* The head is still this report unless the game thread dropped it from a full ring
     * meanwhile (only this thread pops). */
    if (c->st.count > 0 && strcmp(eo__client_state_at(&c->st, 0)->id, id) == 0) {
        eo__client_state_pop(&c->st);
        c->dirty = true;
    }
    eo__result *res = batch_new(&b, EO__RES_REPORT);
    if (res != NULL) {
        res->status = (int)status;
        snprintf(res->id, sizeof res->id, "%s", id);
    }
    batch_hand_over(c, &b);
    if (status == 200) {
        c->stats.reports_acked++;
        if (malformed)
            eo__client_log_locked(c, EO_CLIENT_LOG_WARN,
                                  "round %s: malformed answer from the service", id);
    } else {
        c->stats.reports_refused++;
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                              "round %s refused by the service (HTTP %ld): %.200s; dropped", id,
                              status, a->p ? a->p : "");
    }
    free(id);
    free(text);
}

/* Sends the first split job (mu held on entry and exit). Split requests are sent whatever the
 * backoff, and their failures leave it alone: otherwise a few round ends during a short outage
 * would stretch it to the cap and hold queued reports back long after the service returned. */
static void send_job(eo_client *c, CURL *h, eo__answer_buf *a)
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
    batch b = {0};
    eo__result *res = batch_new(&b, EO__RES_SPLITS);
    int prc = EO_EPARSE;
    if (res != NULL && status == 200)
        prc = eo__client_parse_splits(a->p ? a->p : "", a->len, &res->splits);
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    c->njobs--;
    if (status >= 200 && status < 500)
        reached(c);
    if (status == 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "split request failed: %s", why);
    else if (status != 200)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "split request: HTTP %ld: %.200s", status,
                              a->p ? a->p : "");
    else if (prc != 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "split request: malformed answer");
    if (res != NULL) {
        res->tag = j->tag;
        res->ok = status == 200 && prc == 0;
        c->stats.splits += res->ok;
        batch_hand_over(c, &b);
    }
    free(j->body);
    free(j);
}

/* Looks up the newest queued player (mu held on entry and exit). */
static void send_lookup(eo_client *c, CURL *h, eo__answer_buf *a)
{
    char *id = c->lookups[c->nlookups - 1];
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char *esc = curl_easy_escape(h, id, 0);
    char path[1024], why[256] = "out of memory";
    snprintf(path, sizeof path, "/v1/pools/%s/players/%s", c->pool_esc, esc ? esc : "");
    curl_free(esc);
    long status = 0;
    if (esc != NULL)
        request(c, h, "GET", path, NULL, &status, a, why, sizeof why);
    char got[EO_ID_MAX + 1];
    eo_client_rating r;
    int prc = status == 200 ? eo__client_parse_lookup(a->p ? a->p : "", a->len, got, &r)
                            : EO_EPARSE;
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    if (status == 0 || status >= 500) {
        if (status != 0)
            snprintf(why, sizeof why, "HTTP %ld", status);
        failed(c, status == 0, true, "lookup", why);
        return; /* stays queued for the next try */
    }
    reached(c);
    /* Done with this id either way. The game thread may have appended since, so it is found
     * again by its pointer (only this thread removes). */
    for (size_t i = c->nlookups; i-- > 0;) {
        if (c->lookups[i] == id) {
            c->lookups[i] = c->lookups[--c->nlookups];
            break;
        }
    }
    if (prc == 0 && strcmp(got, id) == 0) {
        c->stats.lookups++;
        batch b = {0};
        batch_rating(&b, got, &r);
        batch_hand_over(c, &b);
    } else {
        eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "lookup of %s: HTTP %ld%s", id, status,
                              status == 200 ? ", malformed answer" : "");
    }
    free(id);
}

/* Writes the state file (mu held on entry and exit). A failed write is retried with its own
 * backoff (a full disk must not spin the worker), and reports not yet in the file are not sent
 * meanwhile: a report acknowledged before its sequence number reached the disk could see its id
 * reused after a crash. */
static void persist(eo_client *c)
{
    char *text = NULL;
    size_t len = 0;
    if (eo__client_state_format(&c->st, &text, &len) != 0) {
        c->save_at_ms = eo__client_mono_ms() + c->cfg.retry_min_ms; /* out of memory */
        return;
    }
    size_t saving = c->unsaved;
    c->dirty = false;
    c->busy = true;
    pthread_mutex_unlock(&c->mu);
    char err[512] = "";
    int rc = eo__client_file_write(c->state_file, text, len, err, sizeof err);
    free(text);
    pthread_mutex_lock(&c->mu);
    c->busy = false;
    if (rc == 0) {
        c->unsaved -= saving < c->unsaved ? saving : c->unsaved;
        if (c->save_backoff_ms > 0)
            eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "state file written again");
        c->save_backoff_ms = 0;
        return;
    }
    c->dirty = true;
    if (c->save_backoff_ms == 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                              "state file: %s; new reports wait until it can be written", err);
    c->save_backoff_ms = c->save_backoff_ms == 0 ? c->cfg.retry_min_ms : 2 * c->save_backoff_ms;
    if (c->save_backoff_ms > c->cfg.retry_max_ms)
        c->save_backoff_ms = c->cfg.retry_max_ms;
    c->save_at_ms = eo__client_mono_ms() + c->save_backoff_ms;
}

bool eo__client_idle(const eo_client *c)
{
    return !c->busy && !c->dirty && c->st.count == 0 && c->jobs == NULL && c->nlookups == 0;
}

void *eo__client_worker(void *arg)
{
    eo_client *c = arg;
    CURL *h = curl_easy_init();
    eo__answer_buf a = {0};
    if (h != NULL) {
        curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->cfg.connect_timeout_ms);
        curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->cfg.request_timeout_ms);
        curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
        curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, on_open);
        curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, c);
        curl_easy_setopt(h, CURLOPT_CLOSESOCKETFUNCTION, on_close);
        curl_easy_setopt(h, CURLOPT_CLOSESOCKETDATA, c);
        curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(h, CURLOPT_USERAGENT, "libevenodds-client/0.1");
    }
    pthread_mutex_lock(&c->mu);
    if (h == NULL)
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR, "libcurl could not start: no reports");
    while (!c->stop) {
        int64_t now = eo__client_mono_ms();
        bool save = c->dirty && now >= c->save_at_ms;
        bool report = h != NULL && c->st.count > c->unsaved && now >= c->next_try_ms;
        bool lookup = h != NULL && c->nlookups > 0 && now >= c->lookup_try_ms;
        if (save) {
            persist(c);
        } else if (report) {
            send_report(c, h, &a);
        } else if (h != NULL && c->jobs != NULL) {
            send_job(c, h, &a);
        } else if (lookup) {
            send_lookup(c, h, &a);
        } else {
            if (eo__client_idle(c))
                pthread_cond_broadcast(&c->idle);
            /* Sleep until the earliest gate that holds something back opens, or a wake-up. */
            int64_t at = INT64_MAX;
            if (c->dirty)
                at = c->save_at_ms;
            if (h != NULL && c->st.count > c->unsaved && c->next_try_ms < at)
                at = c->next_try_ms;
            if (h != NULL && c->nlookups > 0 && c->lookup_try_ms < at)
                at = c->lookup_try_ms;
            if (at == INT64_MAX) {
                pthread_cond_wait(&c->wake, &c->mu);
            } else {
                struct timespec ts = {.tv_sec = (time_t)(at / 1000),
                                      .tv_nsec = (long)(at % 1000) * 1000000};
                pthread_cond_timedwait(&c->wake, &c->mu, &ts);
            }
        }
    }
    pthread_cond_broadcast(&c->idle);
    pthread_mutex_unlock(&c->mu);
    free(a.p);
    curl_easy_cleanup(h);
    return NULL;
}
