/* Loading the matchmaking state from the store (mm.h): at start, and again after a failed
 * commit or a request undone to its savepoint, so that memory never runs ahead of or behind
 * the disk (docs/MATCHMAKING.md "Durability"). Each object is read back through the decoder
 * of the request that made it (queues, tickets, instances) or from its document (sessions). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/mm.h"
#include "service/service.h"

typedef struct load_ctx {
    eo__mm *mm;
    int64_t now_ms;
    char *err;
    size_t errlen;
} load_ctx;

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
load_fail(load_ctx *c, int rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return rc;
}

static json_t *parse(const char *text)
{
    return json_loads(text, EO_JSON_DECODE_FLAGS, NULL);
}

static int load_queue(void *ctx, const eo_mm_row *row)
{
    load_ctx *c = ctx;
    json_t *o = parse(row->request);
    eo_queue_config *cfg = malloc(sizeof *cfg);
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team = 0;
    eo_request_error err = {0};
    int rc = o && cfg ? eo_queue_head_from_json(o, name, pool, &team, &err) : EO_ENOMEM;
    if (rc == 0)
        rc = eo_queue_config_init(name, pool, team, cfg);
    if (rc == 0)
        rc = eo_queue_request_apply(o, false, cfg, &err);
    mm_queue *q = NULL;
    if (rc == 0)
        rc = eo__mm_queue_add(c->mm, cfg, row->created_at, &q);
    if (q != NULL)
        q->next_ms = c->now_ms + cfg->interval_ms;
    json_decref(o);
    free(cfg);
    if (rc != 0)
        return load_fail(c, rc == EO_ENOMEM ? rc : EO_EIO, "queue '%s' in the store: %s%s%s",
                         row->name, err.field, err.field[0] ? ": " : "", err.message);
    return 0;
}

static int load_instance(void *ctx, const eo_mm_row *row)
{
    load_ctx *c = ctx;
    json_t *o = parse(row->request);
    mm_instance *in = calloc(1, sizeof *in);
    eo_request_error err = {0};
    int rc = o && in ? eo_instance_request_from_json(o, &in->reg, &err) : EO_ENOMEM;
    json_decref(o);
    if (rc == 0 && (in->request = strdup(row->request)) == NULL)
        rc = EO_ENOMEM;
    if (rc == 0) {
        snprintf(in->token, sizeof in->token, "%.32s", row->token);
        /* a draining row without "drained" was written before silence drained instances */
        json_t *doc = parse(row->doc);
        const json_t *drained = json_object_get(doc, "drained");
        in->drained = drained ? json_is_true(drained) : strcmp(row->status, "draining") == 0;
        in->silent = json_is_true(json_object_get(doc, "silent"));
        json_decref(doc);
        in->state = in->drained || in->silent ? MM_I_DRAINING : MM_I_LIVE;
        in->created_ms = row->created_at;
        /* its silence counts from the start: a whole heartbeat timeout to show up (and, when
         * it was silent already, the grace after it) */
        in->seen_ms = c->now_ms;
        rc = eo__smap_put(c->mm->instances, in->reg.id, in);
    }
    if (rc != 0) {
        if (in != NULL)
            free(in->request);
        free(in);
        return load_fail(c, rc == EO_ENOMEM ? rc : EO_EIO, "instance '%s' in the store: %s",
                         row->name, err.message);
    }
    return 0;
}

static void str_of(const json_t *o, const char *key, char *dst, size_t cap)
{
    const char *s = json_string_value(json_object_get(o, key));
    snprintf(dst, cap, "%s", s ? s : "");
}

static int64_t int_of(const json_t *o, const char *key)
{
    return (int64_t)json_integer_value(json_object_get(o, key));
}

static uint8_t team_of(const json_t *o)
{
    const char *s = json_string_value(json_object_get(o, "team"));
    return s && s[0] == 'B' ? EO_BALANCE_B : EO_BALANCE_A;
}

/* A session's seats and backfill from its document. */
static int session_parts(eo__mm *mm, mm_session *s, const json_t *doc)
{
    const json_t *players = json_object_get(doc, "players");
    size_t n = json_array_size(players);
    s->seats = calloc(n ? n : 1, sizeof *s->seats);
    if (s->seats == NULL)
        return EO_ENOMEM;
    s->capseats = n ? n : 1;
    size_t i;
    const json_t *p;
    json_array_foreach(players, i, p)
    {
        mm_seat *seat = &s->seats[s->nseats++];
        str_of(p, "id", seat->player, sizeof seat->player);
        str_of(p, "ticket", seat->ticket, sizeof seat->ticket);
        str_of(p, "secret", seat->secret, sizeof seat->secret);
        seat->team = team_of(p);
    }
    const json_t *bf = json_object_get(doc, "backfill");
    s->bf_team = -1;
    if (json_is_object(bf)) {
        eo__mm_set_backfill(mm, s, team_of(bf));
        s->bf_slots = (int)int_of(bf, "slots");
        s->bf_rating = json_number_value(json_object_get(bf, "rating"));
        s->bf_ms = int_of(bf, "asked_at");
    }
    return 0;
}

static int load_session(void *ctx, const eo_mm_row *row)
{
    load_ctx *c = ctx;
    mm_instance *in = eo__smap_get(c->mm->instances, row->owner);
    json_t *doc = parse(row->doc);
    const json_t *m = json_object_get(doc, "match");
    mm_session *s = calloc(1, sizeof *s);
    if (doc == NULL || s == NULL || in == NULL || !json_is_object(m)) {
        json_decref(doc);
        free(s);
        return load_fail(c, EO_EIO,
                         "session '%s' in the store: its document or instance is "
                         "missing",
                         row->name);
    }
    snprintf(s->id, sizeof s->id, "%.33s", row->name);
    s->inst = in;
    str_of(doc, "pool", s->pool, sizeof s->pool);
    str_of(m, "id", s->match_id, sizeof s->match_id);
    str_of(m, "queue", s->queue, sizeof s->queue);
    str_of(m, "map", s->map, sizeof s->map);
    str_of(m, "region", s->region, sizeof s->region);
    s->p_a = json_number_value(json_object_get(m, "p_a"));
    s->quality = json_number_value(json_object_get(m, "quality"));
    s->team_size = (int)int_of(m, "team_size");
    s->formed_ms = int_of(m, "formed_at");
    s->created_ms = row->created_at;
    s->updated_ms = row->updated_at;
    int rc = session_parts(c->mm, s, doc);
    json_decref(doc);
    if (rc == 0)
        rc = eo__smap_put(c->mm->sessions, s->id, s);
    if (rc != 0) {
        eo__mm_session_free(s);
        return rc;
    }
    in->open++;
    return 0;
}

/* A live ticket: queued again whatever it was (a match waiting for its ready check or an
 * instance is not kept across a reload: its tickets keep their age, so their place). */
static int load_ticket(void *ctx, const eo_mm_row *row)
{
    load_ctx *c = ctx;
    eo__mm *mm = c->mm;
    mm_queue *q = eo__mm_queue(mm, row->owner);
    json_t *o = parse(row->request);
    eo_ticket_request *r = malloc(sizeof *r);
    eo_request_error err = {0};
    int rc = o && r ? 0 : EO_ENOMEM;
    if (rc == 0 && q == NULL)
        rc = load_fail(c, EO_EIO, "ticket '%s' in the store: no queue '%s'", row->name, row->owner);
    if (rc == 0 && eo_ticket_request_from_json(o, &q->cfg, r, &err) != 0)
        rc = load_fail(c, EO_EIO, "ticket '%s' in the store: %s: %s", row->name, err.field,
                       err.message);
    json_decref(o);
    mm_ticket *t = NULL;
    if (rc == 0)
        rc = eo__mm_ticket_make(mm, q, r, row->request, row->created_at, &t);
    free(r);
    if (rc != 0)
        return rc;
    snprintf(t->id, sizeof t->id, "%s", row->name);
    snprintf(t->token, sizeof t->token, "%.32s", row->token);
    rc = eo__mm_ticket_enter(mm, t);
    if (rc == 0 && strcmp(row->status, "queued") != 0)
        rc = eo__mm_ticket_store(mm, t, "queued", NULL, c->now_ms);
    if (rc != 0)
        eo__mm_ticket_free(mm, t);
    return rc;
}

/* Loads every live object, in an order where each finds what it refers to. */
static int load_all(eo__mm *mm, char *err, size_t errlen)
{
    load_ctx c = {mm, eo__mm_now_ms(), err, errlen};
    snprintf(err, errlen, "reading the matchmaking objects: %s", "out of memory");
    int rc = eo_store_mm_each(mm->st, EO_MM_QUEUE, true, load_queue, &c);
    if (rc == 0)
        rc = eo_store_mm_each(mm->st, EO_MM_INSTANCE, true, load_instance, &c);
    if (rc == 0)
        rc = eo_store_mm_each(mm->st, EO_MM_SESSION, true, load_session, &c);
    if (rc == 0)
        rc = eo_store_mm_each(mm->st, EO_MM_TICKET, true, load_ticket, &c);
    if (rc == EO_EIO && strstr(err, "in the store") == NULL)
        snprintf(err, errlen, "reading the matchmaking objects: %s", eo_store_errmsg(mm->st));
    for (size_t i = 0; i < mm->nqueues; i++)
        mm->queues[i]->changed = true;
    return rc;
}

/* Loads inside a transaction of its own unless the store has one open (a reload after a
 * savepoint's rollback, inside the writer's batch). */
static int load(eo__mm *mm, bool own_txn, char *err, size_t errlen)
{
    int rc = own_txn ? eo_store_begin(mm->st) : 0;
    if (rc != 0) {
        snprintf(err, errlen, "%s", eo_store_errmsg(mm->st));
        return rc;
    }
    if (own_txn) /* after a failed commit: what it counted did not happen */
        eo__mm_stats_drop(mm);
    rc = eo__mm_state_clear(mm);
    if (rc == 0)
        rc = load_all(mm, err, errlen);
    if (own_txn)
        rc = rc == 0 ? eo_store_commit(mm->st) : (eo_store_rollback(mm->st), rc);
    mm->broken = rc != 0;
    if (rc == 0)
        eo__mm_publish(mm);
    return rc;
}

int eo__mm_open(const eo__mm_config *cfg, eo_engine *e, const eo__logger *lg, char *err,
                size_t errlen, eo__mm **out)
{
    eo__mm *mm = calloc(1, sizeof *mm);
    if (mm == NULL) {
        snprintf(err, errlen, "out of memory");
        return EO_ENOMEM;
    }
    mm->cfg = *cfg;
    mm->e = e;
    mm->st = eo_engine_store(e);
    mm->lg = lg;
    mm->seed = eo__seed_fresh(mm);
    pthread_rwlock_init(&mm->lock, NULL);
    mm->ws = eo_match_ws_new();
    int rc = mm->ws ? load(mm, true, err, errlen) : EO_ENOMEM;
    if (mm->ws == NULL)
        snprintf(err, errlen, "out of memory");
    if (rc != 0) {
        eo__mm_close(mm);
        return rc;
    }
    eo__mm_stats_publish(mm);
    *out = mm;
    return 0;
}

int eo__mm_reload(eo__mm *mm)
{
    if (mm == NULL)
        return 0;
    char err[256];
    /* After a failed commit the store has no transaction; after a rollback to a savepoint the
     * batch's is still open. */
    bool in_txn = eo_store_savepoint(mm->st) == 0;
    if (in_txn)
        (void)eo_store_release(mm->st);
    int rc = load(mm, !in_txn, err, sizeof err);
    if (rc != 0)
        eo__log_msg(mm->lg, EO_LOG_ERROR, err);
    return rc;
}

void eo__mm_close(eo__mm *mm)
{
    if (mm == NULL)
        return;
    (void)eo__mm_state_clear(mm);
    eo__smap_free(mm->tickets);
    eo__smap_free(mm->sessions);
    eo__smap_free(mm->instances);
    free(mm->queues);
    free(mm->pub);
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_window_free(&mm->stats[i]->win);
        eo__mm_stage_free(&mm->stats[i]->stage);
        free(mm->stats[i]);
    }
    free(mm->stats);
    eo_match_ws_free(mm->ws);
    pthread_rwlock_destroy(&mm->lock);
    free(mm);
}
