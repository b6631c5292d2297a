/* The instance side's worker thread (eo_instance.h): registers, heartbeats (the answer brings
 * the sessions, compared with the last ones to make events), and sends the backfill and close
 * requests the game queued, oldest first, with backoff while the service cannot be reached.
 * The service's answers are read defensively: a malformed one changes nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "client/client_internal.h"
#include "client/instance_internal.h"

static int on_progress(void *arg, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    eo_instance *in = arg;
    return __atomic_load_n(&in->stop, __ATOMIC_ACQUIRE) ? 1 : 0;
}

/* One POST with bearer @p bearer. The HTTP status, or 0 when the service was not reached. */
static long post(eo_instance *in, CURL *h, const char *path, const char *bearer, const char *body,
                 eo__answer_buf *a)
{
    char url[1024], auth[600];
    snprintf(url, sizeof url, "%s%s", in->url, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
    struct curl_slist *hdrs = curl_slist_append(NULL, auth);
    if (body != NULL)
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, eo__client_on_data);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, a);
    a->len = 0;
    a->too_big = false;
    if (a->p != NULL)
        a->p[0] = '\0';
    long status = 0;
    CURLcode rc = curl_easy_perform(h);
    if (rc == CURLE_OK)
        curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, rc == CURLE_OK ? 0L : 1L);
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
    curl_slist_free_all(hdrs);
    return status;
}

/* ---- reading the sessions ------------------------------------------------------------------ */

static bool copy_str(const json_t *o, const char *key, char *dst, size_t cap, bool required)
{
    const json_t *v = json_object_get(o, key);
    if (v == NULL || json_is_null(v)) {
        dst[0] = '\0';
        return !required;
    }
    if (!json_is_string(v) || json_string_length(v) >= cap)
        return false;
    memcpy(dst, json_string_value(v), json_string_length(v) + 1);
    return true;
}

static bool parse_seat(const json_t *p, eo__inst_session *s)
{
    if (s->pub.nseats == EO_INSTANCE_SEATS_MAX)
        return false;
    eo_instance_seat *seat = &s->pub.seats[s->pub.nseats];
    char team[4];
    if (!copy_str(p, "id", seat->player, sizeof seat->player, true) ||
        !copy_str(p, "ticket", seat->ticket, sizeof seat->ticket, true) ||
        !copy_str(p, "team", team, sizeof team, true) ||
        !copy_str(p, "secret", s->secret[s->pub.nseats], EO__INST_SECRET_LEN + 1, true) ||
        (strcmp(team, "A") != 0 && strcmp(team, "B") != 0))
        return false;
    seat->team = team[0] == 'A' ? EO_TRACK_A : EO_TRACK_B;
    s->pub.nseats++;
    return true;
}

static bool parse_session(const json_t *o, eo__inst_session *s)
{
    const json_t *m = json_object_get(o, "match");
    const json_t *players = json_object_get(o, "players");
    memset(s, 0, sizeof *s);
    if (!json_is_object(m) || !json_is_array(players) ||
        !copy_str(o, "session", s->pub.id, sizeof s->pub.id, true) ||
        !copy_str(o, "pool", s->pub.pool, sizeof s->pub.pool, true) ||
        !copy_str(m, "queue", s->pub.queue, sizeof s->pub.queue, true) ||
        !copy_str(m, "map", s->pub.map, sizeof s->pub.map, false) ||
        !copy_str(m, "region", s->pub.region, sizeof s->pub.region, false) ||
        !json_is_number(json_object_get(m, "p_a")) ||
        !json_is_integer(json_object_get(m, "team_size")))
        return false;
    s->pub.p_a = json_number_value(json_object_get(m, "p_a"));
    s->pub.quality = json_number_value(json_object_get(m, "quality"));
    s->pub.team_size = (int)json_integer_value(json_object_get(m, "team_size"));
    size_t i;
    const json_t *p;
    json_array_foreach(players, i, p) if (!parse_seat(p, s)) return false;
    return true;
}

int eo__inst_parse_sessions(const char *text, size_t len, eo__inst_session **tab, size_t *n)
{
    json_t *o = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
    const json_t *arr = json_object_get(o, "sessions");
    size_t count = json_array_size(arr);
    eo__inst_session *t = calloc(count ? count : 1, sizeof *t);
    int rc = o == NULL || !json_is_array(arr) ? EO_EPARSE : t == NULL ? EO_ENOMEM : 0;
    for (size_t i = 0; rc == 0 && i < count; i++)
        if (!parse_session(json_array_get(arr, i), &t[i]))
            rc = EO_EPARSE;
    json_decref(o);
    if (rc != 0) {
        free(t);
        return rc;
    }
    *tab = t;
    *n = count;
    return 0;
}

/* ---- the worker -------------------------------------------------------------------------- */

/* Events for what changed from the old table to @p tab (mu held): new sessions, new seats,
 * sessions gone that the game did not close. Sessions the game is closing stay closing. */
static void swap_table(eo_instance *in, eo__inst_session *tab, size_t n)
{
    eo_instance_event ev;
    for (size_t i = 0; i < n; i++) {
        const eo__inst_session *old = NULL;
        for (size_t j = 0; j < in->ntab && old == NULL; j++)
            if (strcmp(in->tab[j].pub.id, tab[i].pub.id) == 0)
                old = &in->tab[j];
        memset(&ev, 0, sizeof ev);
        snprintf(ev.session, sizeof ev.session, "%s", tab[i].pub.id);
        if (old == NULL) {
            ev.type = EO_INSTANCE_EV_SESSION;
            eo__inst_event(in, &ev);
        } else {
            tab[i].closing = old->closing;
            if (tab[i].pub.nseats > old->pub.nseats) {
                ev.type = EO_INSTANCE_EV_SEATS;
                ev.first = old->pub.nseats;
                ev.n = tab[i].pub.nseats - old->pub.nseats;
                eo__inst_event(in, &ev);
            }
        }
    }
    for (size_t j = 0; j < in->ntab; j++) {
        bool kept = false;
        for (size_t i = 0; i < n && !kept; i++)
            kept = strcmp(in->tab[j].pub.id, tab[i].pub.id) == 0;
        if (!kept && !in->tab[j].closing) {
            memset(&ev, 0, sizeof ev);
            ev.type = EO_INSTANCE_EV_LOST;
            snprintf(ev.session, sizeof ev.session, "%s", in->tab[j].pub.id);
            eo__inst_event(in, &ev);
        }
    }
    free(in->tab);
    in->tab = tab;
    in->ntab = n;
}

/* The service could not be reached or failed: wait longer before the next try (mu held). */
static void back_off(eo_instance *in, const char *what, long status)
{
    in->backoff_ms = in->backoff_ms ? in->backoff_ms * 2 : in->cfg.retry_min_ms;
    if (in->backoff_ms > in->cfg.retry_max_ms)
        in->backoff_ms = in->cfg.retry_max_ms;
    in->retry_at_ms = eo__client_mono_ms() + in->backoff_ms;
    eo__inst_log(in, EO_CLIENT_LOG_WARN, "%s: %s %ld; again in %ld ms", what,
                 status ? "status" : "no answer", status, in->backoff_ms);
}

/* The instance must register again (the service lost or forgot it): its sessions are gone. */
static void unregister(eo_instance *in, const char *why)
{
    in->registered = false;
    in->polled = false;
    swap_table(in, NULL, 0);
    eo__inst_log(in, EO_CLIENT_LOG_WARN, "registering again: %s", why);
}

static void do_register(eo_instance *in, CURL *h, eo__answer_buf *a)
{
    pthread_mutex_unlock(&in->mu);
    long st = post(in, h, "/v1/instances", in->key, in->reg_body, a);
    json_t *o = (st == 200 || st == 201) ? json_loadb(a->p, a->len, 0, NULL) : NULL;
    const char *tok = json_string_value(json_object_get(o, "token"));
    pthread_mutex_lock(&in->mu);
    if (tok != NULL && strlen(tok) == EO__INST_SECRET_LEN) {
        snprintf(in->token, sizeof in->token, "%s", tok);
        in->registered = true;
        in->backoff_ms = 0;
        in->beat_at_ms = 0; /* heartbeat at once: it brings the sessions */
        eo_instance_event ev = {.type = EO_INSTANCE_EV_REGISTERED};
        eo__inst_event(in, &ev);
    } else if (st >= 400 && st < 500) {
        /* a configuration the service refuses: said once per try, at the slowest pace */
        eo__inst_log(in, EO_CLIENT_LOG_ERROR, "registration refused (%ld): %.160s", st,
                     a->p ? a->p : "");
        in->backoff_ms = in->cfg.retry_max_ms / 2;
        back_off(in, "registration", st);
    } else {
        back_off(in, "registration", st);
    }
    json_decref(o);
}

static void do_heartbeat(eo_instance *in, CURL *h, eo__answer_buf *a)
{
    char path[512], token[EO__INST_SECRET_LEN + 1];
    snprintf(path, sizeof path, "/v1/instances/%s/heartbeat", in->id_esc);
    snprintf(token, sizeof token, "%s", in->token);
    pthread_mutex_unlock(&in->mu);
    long st = post(in, h, path, token, NULL, a);
    eo__inst_session *tab = NULL;
    size_t n = 0;
    int prc = st == 200 ? eo__inst_parse_sessions(a->p, a->len, &tab, &n) : EO_EPARSE;
    pthread_mutex_lock(&in->mu);
    in->beat_at_ms = eo__client_mono_ms() + in->cfg.heartbeat_ms;
    if (prc == 0) {
        in->backoff_ms = 0;
        in->polled = true;
        swap_table(in, tab, n);
    } else if (st == 401 || st == 403 || st == 404 || st == 410) {
        unregister(in, st == 410 ? "the service lost this instance (missed heartbeats)"
                                 : "the service does not know this instance's token");
    } else if (st == 200) {
        eo__inst_log(in, EO_CLIENT_LOG_ERROR, "heartbeat: an answer that cannot be read");
    } else {
        back_off(in, "heartbeat", st);
    }
}

static void do_command(eo_instance *in, CURL *h, eo__answer_buf *a)
{
    eo__inst_cmd c = *in->head;
    char path[512], token[EO__INST_SECRET_LEN + 1];
    snprintf(path, sizeof path, "/v1/sessions/%s/%s", c.session, c.close ? "close" : "backfill");
    snprintf(token, sizeof token, "%s", in->token);
    in->busy = true;
    pthread_mutex_unlock(&in->mu);
    long st = post(in, h, path, token, c.close ? NULL : c.body, a);
    pthread_mutex_lock(&in->mu);
    in->busy = false;
    if (st == 0 || st >= 500) {
        back_off(in, c.close ? "close" : "backfill", st);
        return;
    }
    if (st == 401 || st == 410) {
        unregister(in, "the service does not know this instance's token");
        return;
    }
    eo__inst_cmd *done = in->head;
    in->head = done->next;
    if (in->head == NULL)
        in->tail = NULL;
    free(done);
    in->backoff_ms = 0;
    eo_instance_event ev;
    memset(&ev, 0, sizeof ev);
    snprintf(ev.session, sizeof ev.session, "%s", c.session);
    ev.status = (int)st;
    ev.type = st == 200 && c.close ? EO_INSTANCE_EV_CLOSED : st == 200 ? 0 : EO_INSTANCE_EV_REFUSED;
    if (st != 200)
        snprintf(ev.msg, sizeof ev.msg, "%.200s", a->p ? a->p : "");
    if (ev.type != 0)
        eo__inst_event(in, &ev);
    if (c.close) { /* the table drops it: the next heartbeat will not have it */
        for (size_t i = 0; i < in->ntab; i++)
            if (strcmp(in->tab[i].pub.id, c.session) == 0) {
                in->tab[i] = in->tab[--in->ntab];
                break;
            }
    }
}

static CURL *handle(eo_instance *in)
{
    CURL *h = curl_easy_init();
    if (h == NULL)
        return NULL;
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, in->cfg.connect_timeout_ms);
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, in->cfg.request_timeout_ms);
    curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(h, CURLOPT_XFERINFODATA, in);
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_USERAGENT, "libevenodds-client/0.1");
    return h;
}

void *eo__inst_worker(void *arg)
{
    eo_instance *in = arg;
    CURL *h = handle(in);
    eo__answer_buf a = {0};
    pthread_mutex_lock(&in->mu);
    if (h == NULL)
        eo__inst_log(in, EO_CLIENT_LOG_ERROR, "libcurl could not start: not registered");
    while (!in->stop && h != NULL) {
        int64_t now = eo__client_mono_ms();
        bool gate = now >= in->retry_at_ms;
        if (!in->registered && gate) {
            do_register(in, h, &a);
        } else if (in->registered && in->head != NULL && gate) {
            do_command(in, h, &a);
        } else if (in->registered && now >= in->beat_at_ms) {
            do_heartbeat(in, h, &a);
        } else {
            if (eo__inst_idle(in))
                pthread_cond_broadcast(&in->idle);
            int64_t at = in->registered ? in->beat_at_ms : in->retry_at_ms;
            if (in->registered && in->head != NULL && in->retry_at_ms < at)
                at = in->retry_at_ms;
            struct timespec ts = {.tv_sec = (time_t)(at / 1000),
                                  .tv_nsec = (long)(at % 1000) * 1000000};
            pthread_cond_timedwait(&in->wake, &in->mu, &ts);
        }
    }
    pthread_cond_broadcast(&in->idle);
    pthread_mutex_unlock(&in->mu);
    free(a.p);
    curl_easy_cleanup(h);
    return NULL;
}
