/* The instance side of libevenodds-client, the game thread's calls (eo_instance.h): nothing here
 * waits on the network; the worker (instance_worker.c) does the HTTP. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "client/client_internal.h"
#include "client/instance_internal.h"

void eo_instance_config_init(eo_instance_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->capacity = 1;
    cfg->heartbeat_ms = 1000;
    cfg->connect_timeout_ms = 2000;
    cfg->request_timeout_ms = 5000;
    cfg->retry_min_ms = 500;
    cfg->retry_max_ms = 30000;
}

static int bad(char *err, size_t errlen, const char *what)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", what);
    return EO_EINVAL;
}

static int check_config(const eo_instance_config *cfg, char *err, size_t errlen)
{
    if (cfg->url == NULL || strncmp(cfg->url, "http", 4) != 0)
        return bad(err, errlen, "url: required, http://HOST:PORT");
    if (cfg->key == NULL || cfg->key[0] == '\0')
        return bad(err, errlen, "key: required (the server key)");
    if (cfg->id == NULL || eo_id_check(cfg->id, strlen(cfg->id)) != 0)
        return bad(err, errlen,
                   "id: required, 1 to 128 bytes of UTF-8 without control "
                   "characters");
    if (cfg->nqueues < 1 || cfg->nqueues > EO_INSTANCE_QUEUES)
        return bad(err, errlen, "queues: 1 to 16 queue names");
    for (size_t i = 0; i < cfg->nqueues; i++)
        if (cfg->queues[i] == NULL || cfg->queues[i][0] == '\0')
            return bad(err, errlen, "queues: a name is missing");
    if (cfg->address == NULL || cfg->address[0] == '\0')
        return bad(err, errlen, "address: required, HOST:PORT");
    if (cfg->capacity < 1 || cfg->heartbeat_ms < 10 || cfg->retry_min_ms < 1 ||
        cfg->retry_max_ms < cfg->retry_min_ms)
        return bad(err, errlen,
                   "capacity >= 1, heartbeat_ms >= 10, 1 <= retry_min_ms <= "
                   "retry_max_ms");
    return 0;
}

/* The registration body, {"id","queues","address","region"?,"capacity"}. */
static char *registration(const eo_instance *in)
{
    json_t *q = json_array();
    for (size_t i = 0; q != NULL && i < in->cfg.nqueues; i++)
        json_array_append_new(q, json_string(in->queues[i]));
    json_t *o = json_pack("{s:s,s:o,s:s,s:i}", "id", in->id, "queues", q, "address", in->address,
                          "capacity", in->cfg.capacity);
    if (o != NULL && in->region != NULL)
        json_object_set_new(o, "region", json_string(in->region));
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static char *dup_or_null(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    *oom |= d == NULL;
    return d;
}

static int copy_config(eo_instance *in, const eo_instance_config *cfg)
{
    bool oom = false;
    in->cfg = *cfg;
    in->cfg.url = in->url = dup_or_null(cfg->url, &oom);
    in->cfg.key = in->key = dup_or_null(cfg->key, &oom);
    in->cfg.id = in->id = dup_or_null(cfg->id, &oom);
    in->cfg.address = in->address = dup_or_null(cfg->address, &oom);
    in->cfg.region = in->region = dup_or_null(cfg->region, &oom);
    for (size_t i = 0; i < cfg->nqueues; i++)
        in->cfg.queues[i] = in->queues[i] = dup_or_null(cfg->queues[i], &oom);
    char *esc = oom ? NULL : curl_easy_escape(NULL, in->id, 0);
    in->id_esc = dup_or_null(esc, &oom);
    curl_free(esc);
    in->reg_body = oom ? NULL : registration(in);
    return oom || in->id_esc == NULL || in->reg_body == NULL ? EO_ENOMEM : 0;
}

void eo_instance_destroy(eo_instance *in)
{
    if (in == NULL)
        return;
    if (in->thread_started) {
        pthread_mutex_lock(&in->mu);
        in->stop = true;
        pthread_cond_broadcast(&in->wake);
        pthread_mutex_unlock(&in->mu);
        pthread_join(in->thread, NULL);
    }
    pthread_cond_destroy(&in->wake);
    pthread_cond_destroy(&in->idle);
    pthread_mutex_destroy(&in->mu);
    for (eo__inst_cmd *c = in->head, *next; c != NULL; c = next) {
        next = c->next;
        free(c);
    }
    free(in->tab);
    free(in->ev);
    free(in->url);
    free(in->key);
    free(in->id);
    free(in->address);
    free(in->region);
    free(in->id_esc);
    free(in->reg_body);
    for (size_t i = 0; i < EO_INSTANCE_QUEUES; i++)
        free(in->queues[i]);
    free(in);
}

int eo_instance_create(const eo_instance_config *cfg, eo_instance **out, char *err, size_t errlen)
{
    if (cfg == NULL || out == NULL)
        return bad(err, errlen, "no configuration");
    *out = NULL;
    int rc = check_config(cfg, err, errlen);
    if (rc != 0)
        return rc;
    eo__client_curl_once();
    eo_instance *in = calloc(1, sizeof *in);
    if (in == NULL)
        return EO_ENOMEM;
    pthread_mutex_init(&in->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&in->wake, &ca);
    pthread_cond_init(&in->idle, &ca);
    pthread_condattr_destroy(&ca);
    if (copy_config(in, cfg) != 0 || pthread_create(&in->thread, NULL, eo__inst_worker, in) != 0) {
        eo_instance_destroy(in);
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "out of memory");
        return EO_ENOMEM;
    }
    in->thread_started = true;
    *out = in;
    return 0;
}

/* ---- events ----------------------------------------------------------------------------- */

void eo__inst_event(eo_instance *in, const eo_instance_event *ev)
{
    if (in->ev_count == in->ev_cap) {
        size_t cap = in->ev_cap ? in->ev_cap * 2 : 16;
        eo_instance_event *v = malloc(cap * sizeof *v);
        if (v == NULL)
            return;
        for (size_t i = 0; i < in->ev_count; i++)
            v[i] = in->ev[(in->ev_head + i) % in->ev_cap];
        free(in->ev);
        in->ev = v;
        in->ev_cap = cap;
        in->ev_head = 0;
    }
    in->ev[(in->ev_head + in->ev_count++) % in->ev_cap] = *ev;
}

void eo__inst_log(eo_instance *in, eo_client_log_level level, const char *fmt, ...)
{
    eo_instance_event ev;
    memset(&ev, 0, sizeof ev);
    ev.type = EO_INSTANCE_EV_LOG;
    ev.level = level;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ev.msg, sizeof ev.msg, fmt, ap);
    va_end(ap);
    eo__inst_event(in, &ev);
}

int eo_instance_poll(eo_instance *in, eo_instance_event *ev)
{
    if (in == NULL || ev == NULL)
        return 0;
    pthread_mutex_lock(&in->mu);
    int got = in->ev_count > 0;
    if (got) {
        *ev = in->ev[in->ev_head];
        in->ev_head = (in->ev_head + 1) % in->ev_cap;
        in->ev_count--;
    }
    pthread_mutex_unlock(&in->mu);
    if (got && ev->type == EO_INSTANCE_EV_LOG && in->cfg.log != NULL)
        in->cfg.log(in->cfg.log_ctx, ev->level, ev->msg);
    return got;
}

/* ---- sessions ---------------------------------------------------------------------------- */

static eo__inst_session *find(eo_instance *in, const char *id)
{
    for (size_t i = 0; i < in->ntab; i++)
        if (strcmp(in->tab[i].pub.id, id) == 0)
            return &in->tab[i];
    return NULL;
}

int eo_instance_session_get(eo_instance *in, const char *id, eo_instance_session *out)
{
    if (in == NULL || id == NULL || out == NULL)
        return EO_EINVAL;
    pthread_mutex_lock(&in->mu);
    const eo__inst_session *s = find(in, id);
    if (s != NULL)
        *out = s->pub;
    pthread_mutex_unlock(&in->mu);
    return s ? 0 : EO_ENOTFOUND;
}

size_t eo_instance_sessions(eo_instance *in, char (*ids)[EO_INSTANCE_SESSION_MAX + 1], size_t cap)
{
    if (in == NULL)
        return 0;
    pthread_mutex_lock(&in->mu);
    size_t n = 0;
    for (size_t i = 0; i < in->ntab; i++)
        if (!in->tab[i].closing) {
            if (n < cap)
                snprintf(ids[n], sizeof ids[n], "%s", in->tab[i].pub.id);
            n++;
        }
    pthread_mutex_unlock(&in->mu);
    return n;
}

int eo_instance_check_secret(eo_instance *in, const char *player, const char *secret,
                             eo_track_team *team, char *session)
{
    if (in == NULL || player == NULL || secret == NULL || team == NULL)
        return EO_EINVAL;
    bool ok_len = strlen(secret) == EO__INST_SECRET_LEN;
    int rc = EO_ENOTFOUND;
    pthread_mutex_lock(&in->mu);
    for (size_t i = 0; i < in->ntab && rc == EO_ENOTFOUND; i++) {
        const eo__inst_session *s = &in->tab[i];
        for (size_t j = 0; !s->closing && j < s->pub.nseats; j++) {
            if (strcmp(s->pub.seats[j].player, player) != 0)
                continue;
            volatile unsigned diff = !ok_len;
            for (size_t k = 0; ok_len && k < EO__INST_SECRET_LEN; k++)
                diff |= (unsigned)(s->secret[j][k] ^ secret[k]);
            rc = diff == 0 ? 0 : EO_EINVAL;
            if (rc == 0) {
                *team = s->pub.seats[j].team;
                if (session != NULL)
                    snprintf(session, EO_INSTANCE_SESSION_MAX + 1, "%s", s->pub.id);
            }
            break;
        }
    }
    pthread_mutex_unlock(&in->mu);
    return rc;
}

static int queue_cmd(eo_instance *in, const char *session, bool close, const char *body)
{
    eo__inst_cmd *c = calloc(1, sizeof *c);
    if (c == NULL)
        return EO_ENOMEM;
    c->close = close;
    snprintf(c->session, sizeof c->session, "%s", session);
    snprintf(c->body, sizeof c->body, "%s", body ? body : "");
    pthread_mutex_lock(&in->mu);
    eo__inst_session *s = find(in, session);
    if (s == NULL || s->closing) {
        pthread_mutex_unlock(&in->mu);
        free(c);
        return EO_ENOTFOUND;
    }
    s->closing |= close;
    if (in->tail != NULL)
        in->tail->next = c;
    else
        in->head = c;
    in->tail = c;
    pthread_cond_signal(&in->wake);
    pthread_mutex_unlock(&in->mu);
    return 0;
}

int eo_instance_backfill(eo_instance *in, const char *session, eo_track_team team, int slots)
{
    if (in == NULL || session == NULL || (team != EO_TRACK_A && team != EO_TRACK_B) || slots < 1 ||
        slots > 32)
        return EO_EINVAL;
    char body[96];
    snprintf(body, sizeof body, "{\"team\":\"%s\",\"slots\":%d}", team == EO_TRACK_A ? "A" : "B",
             slots);
    return queue_cmd(in, session, false, body);
}

int eo_instance_close_session(eo_instance *in, const char *session)
{
    if (in == NULL || session == NULL)
        return EO_EINVAL;
    return queue_cmd(in, session, true, NULL);
}

bool eo__inst_idle(const eo_instance *in)
{
    return in->registered && in->polled && in->head == NULL && !in->busy;
}

int eo_instance_flush(eo_instance *in, long timeout_ms)
{
    if (in == NULL)
        return EO_EINVAL;
    int64_t until = eo__client_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    struct timespec ts = {.tv_sec = (time_t)(until / 1000),
                          .tv_nsec = (long)(until % 1000) * 1000000};
    pthread_mutex_lock(&in->mu);
    int rc = 0;
    while (!eo__inst_idle(in)) {
        pthread_cond_signal(&in->wake);
        if (pthread_cond_timedwait(&in->idle, &in->mu, &ts) != 0 && eo__client_mono_ms() >= until) {
            rc = EO_EBUSY;
            break;
        }
    }
    pthread_mutex_unlock(&in->mu);
    return rc;
}
