/* Game-server instances and their sessions, applied by the writer (mm.h; docs/MATCHMAKING.md
 * "Instances", "Sessions", "Backfill"). An instance acts with the token its registration gave
 * (or an operator with the admin key): a token of another instance is refused naming the
 * instance or session it is not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/mm.h"
#include "service/service.h"

typedef struct owner_ctx {
    const char *bearer;
    mm_instance *found;
} owner_ctx;

static int token_owner(void *ctx, const char *key, void *val)
{
    (void)key;
    owner_ctx *c = ctx;
    mm_instance *in = val;
    if (eo__mm_bearer_is(c->bearer, in->token)) {
        c->found = in;
        return 1;
    }
    return 0;
}

/* The instance whose token is @p bearer, or NULL (a walk over the instances: only refusals
 * ask, to tell another instance's token, 403, from none, 401). */
static mm_instance *by_token(eo__mm *mm, const char *bearer)
{
    owner_ctx c = {bearer, NULL};
    eo__smap_each(mm->instances, token_owner, &c);
    return c.found;
}

/* Whether the caller may act as instance @p in (NULL: unknown): the admin key, the server key
 * when @p server_may, or @p in's own token. */
static int caller_is(eo__mm *mm, const eo__mm_req *q, mm_instance *in, bool server_may,
                     const char *field, eo_engine_error *err)
{
    if (q->by == EO__MM_BY_ADMIN || (q->by == EO__MM_BY_SERVER && server_may))
        return 0;
    if (q->by == EO__MM_BY_SERVER)
        return eo__mm_refuse(err, 403, "forbidden", "",
                             "an instance acts with its own token (from POST /v1/instances)");
    if (in != NULL && eo__mm_token_is(q, in->token))
        return 0;
    if (by_token(mm, q->token) != NULL)
        return eo__mm_refuse(err, 403, "forbidden", field,
                             "this token belongs to another instance");
    return eo__mm_refuse(err, 401, "unauthorized", "", "invalid key or instance token");
}

/* ---- documents ------------------------------------------------------------------------------- */

/* Session @p s's document (@p status), its text in *out. 0 or a code. */
static int session_text(const mm_session *s, const char *status, char **out)
{
    eo_mm_seat *seats = calloc(s->nseats ? s->nseats : 1, sizeof *seats);
    if (seats == NULL)
        return EO_ENOMEM;
    eo_mm_match_view mv;
    eo_session_view v;
    eo__mm_session_view(s, seats, &mv, &v, status);
    int rc = eo_session_view_text(&v, out, NULL);
    free(seats);
    return rc;
}

typedef struct sessions_ctx {
    const mm_instance *in;
    const mm_session **s;
    size_t n, cap;
} sessions_ctx;

static int collect_sessions(void *ctx, const char *key, void *val)
{
    (void)key;
    sessions_ctx *c = ctx;
    const mm_session *s = val;
    if (s->inst != c->in)
        return 0;
    const mm_session **v = eo__grow(c->s, &c->cap, c->n + 1, sizeof *v);
    if (v == NULL)
        return EO_ENOMEM;
    c->s = v;
    c->s[c->n++] = s;
    return 0;
}

static int by_created(const void *a, const void *b)
{
    const mm_session *x = *(const mm_session *const *)a, *y = *(const mm_session *const *)b;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return strcmp(x->id, y->id);
}

/* The instance's document: its registration, state and open sessions (oldest first) with
 * every seat's join secret: what it polls. Its text in *out. */
static int instance_text(eo__mm *mm, mm_instance *in, char **out)
{
    json_t *o = eo_instance_request_to_json(&in->reg);
    if (o != NULL &&
        (json_object_set_new(o, "status", json_string(eo__mm_instance_state(in->state))) != 0 ||
         json_object_set_new(o, "open", json_integer(in->open)) != 0)) {
        json_decref(o);
        o = NULL;
    }
    char *head = o ? json_dumps(o, EO__MM_JSON) : NULL;
    json_decref(o);
    sessions_ctx c = {in, NULL, 0, 0};
    if (head == NULL || eo__smap_each(mm->sessions, collect_sessions, &c) != 0) {
        free(head);
        free(c.s);
        return EO_ENOMEM;
    }
    if (c.n > 0)
        qsort(c.s, c.n, sizeof c.s[0], by_created);
    /* the registration's object with the sessions as its last member */
    eo__buf b;
    eo__buf_init(&b, (size_t)64 << 20);
    eo__buf_add(&b, head, strlen(head) - 1);
    eo__buf_str(&b, ",\"sessions\":[");
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < c.n; i++) {
        char *one = NULL;
        rc = session_text(c.s[i], "open", &one);
        eo__buf_str(&b, i ? "," : "");
        eo__buf_str(&b, one ? one : "");
        free(one);
    }
    eo__buf_str(&b, "]}");
    free(head);
    free(c.s);
    rc = rc ? rc : b.err;
    *out = rc == 0 ? eo__buf_take(&b, NULL) : NULL;
    eo__buf_free(&b);
    return rc ? rc : *out ? 0 : EO_ENOMEM;
}

/* ---- instances ------------------------------------------------------------------------------- */

/* The queues an instance names exist, and its region is one of each queue's (when it has). */
static int check_queues(eo__mm *mm, const eo_instance_request *r, eo_engine_error *err)
{
    for (size_t i = 0; i < r->nqueues; i++) {
        char field[64];
        snprintf(field, sizeof field, "queues[%zu]", i);
        const mm_queue *q = eo__mm_queue(mm, r->queues[i]);
        if (q == NULL)
            return eo__mm_refuse(err, 400, "unknown_queue", field, "no queue of that name");
        bool ok = q->cfg.match.nregions == 0;
        for (int x = 0; !ok && x < q->cfg.match.nregions; x++)
            ok = strcmp(q->cfg.regions[x], r->region) == 0;
        if (!ok)
            return eo__mm_refuse(err, 400, "unknown_region", "region",
                                 "queue %.64s has regions and this is not one of them",
                                 q->cfg.name);
    }
    return 0;
}

static json_t *registered(const mm_instance *in)
{
    return json_pack("{s:s,s:s,s:s}", "instance", in->reg.id, "token", in->token, "status",
                     eo__mm_instance_state(in->state));
}

static int instance_register(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status,
                             char **out, eo_engine_error *err)
{
    const eo_instance_request *r = q->u.instance;
    int rc = check_queues(mm, r, err);
    if (rc != 0)
        return rc;
    json_t *o = eo_instance_request_to_json(r);
    char *text = o ? json_dumps(o, EO__MM_JSON) : NULL;
    json_decref(o);
    if (text == NULL)
        return EO_ENOMEM;
    mm_instance *in = eo__smap_get(mm->instances, r->id);
    bool same = in != NULL && strcmp(in->request, text) == 0;
    if (in != NULL && !same && in->state != MM_I_LOST && in->open > 0) {
        free(text);
        return eo__mm_refuse(err, 409, "instance_conflict", "id",
                             "an instance of this id runs sessions with another registration");
    }
    *status = in == NULL ? 201 : 200;
    if (in == NULL) {
        if ((in = calloc(1, sizeof *in)) == NULL || eo__smap_put(mm->instances, r->id, in) != 0) {
            free(in);
            free(text);
            return EO_ENOMEM;
        }
        eo__mm_random_hex(mm, in->token);
        in->created_ms = now_ms;
    }
    free(in->request);
    in->request = text;
    in->reg = *r;
    in->state = MM_I_LIVE;
    mm->instances_changed = true;
    in->seen_ms = now_ms;
    rc = same ? 0 : eo__mm_instance_store(mm, in, now_ms);
    o = rc ? NULL : registered(in);
    *out = o ? json_dumps(o, EO__MM_JSON) : NULL;
    json_decref(o);
    return rc ? rc : *out ? 0 : EO_ENOMEM;
}

static int instance_op(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status, char **text,
                       eo_engine_error *err)
{
    mm_instance *in = eo__smap_get(mm->instances, q->name);
    int rc = caller_is(mm, q, in, q->op == EO__MM_INSTANCE_GET, "instance", err);
    if (rc != 0)
        return rc;
    if (in == NULL)
        return eo__mm_refuse(err, 404, "unknown_instance", "instance", "no instance of that id");
    if (q->op == EO__MM_INSTANCE_HEARTBEAT) {
        if (in->state == MM_I_LOST)
            return eo__mm_refuse(err, 410, "instance_lost", "instance",
                                 "missed heartbeats ended its sessions; register again");
        in->seen_ms = now_ms;
    } else if (q->op == EO__MM_INSTANCE_DELETE && in->state == MM_I_LIVE) {
        in->state = MM_I_DRAINING; /* its sessions run to their end; no new one */
        mm->instances_changed = true;
        if ((rc = eo__mm_instance_store(mm, in, now_ms)) != 0)
            return rc;
    }
    *status = 200;
    return instance_text(mm, in, text);
}

/* ---- sessions -------------------------------------------------------------------------------- */

/* The mean rating of the session's players now, for a backfill request without one. */
static double session_mean(eo__mm *mm, const mm_session *s, uint8_t team, int64_t now_ms)
{
    const eo_pool *pool = eo_engine_pool(mm->e, s->pool);
    double sum = 0.0;
    size_t n = 0;
    for (size_t i = 0; pool != NULL && i < s->nseats; i++) {
        if (s->seats[i].team != team)
            continue;
        eo_rating_view v;
        (void)eo_pool_lookup(pool, s->seats[i].player, now_ms / 1000, &v);
        sum += v.mu;
        n++;
    }
    if (n == 0 && pool != NULL) {
        eo_rating_view v;
        eo_pool_new_player_view(pool, now_ms / 1000, &v);
        return v.mu;
    }
    return n ? sum / (double)n : 0.0;
}

static int session_backfill(eo__mm *mm, const eo__mm_req *q, mm_session *s, int64_t now_ms,
                            eo_engine_error *err)
{
    const eo_backfill_request *b = &q->u.backfill;
    if (b->slots > s->team_size)
        return eo__mm_refuse(err, 400, "invalid_request", "slots",
                             "more players than a team of this session (%d)", s->team_size);
    if (eo__mm_queue(mm, s->queue) == NULL)
        return eo__mm_refuse(err, 409, "queue_gone", "session",
                             "the session's queue was deleted: nobody can be found for it");
    eo__mm_set_backfill(mm, s, b->team);
    s->bf_slots = b->slots;
    s->bf_rating = b->has_rating ? b->rating : session_mean(mm, s, b->team, now_ms);
    s->bf_ms = now_ms;
    return eo__mm_session_store(mm, s, "open", now_ms);
}

/* A finished session (only in the store): its document for a read, a repeat of its close. */
static int session_finished(eo__mm *mm, const eo__mm_req *q, int *status, char **text,
                            eo_engine_error *err)
{
    eo_mm_row row;
    int rc = eo_store_mm_get(mm->st, EO_MM_SESSION, q->name, &row);
    if (rc == EO_ENOTFOUND && q->by != EO__MM_BY_TOKEN)
        return eo__mm_refuse(err, 404, "unknown_session", "session", "no session of that id");
    if (rc == EO_ENOTFOUND)
        return eo__mm_refuse(err, 401, "unauthorized", "", "invalid key or instance token");
    if (rc != 0)
        return rc;
    rc = caller_is(mm, q, eo__smap_get(mm->instances, row.owner), q->op == EO__MM_SESSION_GET,
                   "session", err);
    if (rc == 0 && q->op == EO__MM_SESSION_BACKFILL)
        rc = eo__mm_refuse(err, 409, "session_closed", "session", "the session is %s", row.status);
    if (rc == 0) {
        *status = 200;
        *text = row.doc; /* as stored: the document answered as it was last written */
        row.doc = NULL;
    }
    eo_mm_row_free(&row);
    return rc;
}

static int session_op(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status, char **text,
                      eo_engine_error *err)
{
    mm_session *s = eo__smap_get(mm->sessions, q->name);
    if (s == NULL)
        return session_finished(mm, q, status, text, err);
    int rc = caller_is(mm, q, s->inst, q->op == EO__MM_SESSION_GET, "session", err);
    if (rc != 0)
        return rc;
    const char *state = "open";
    if (q->op == EO__MM_SESSION_BACKFILL) {
        rc = session_backfill(mm, q, s, now_ms, err);
    } else if (q->op == EO__MM_SESSION_CLOSE) {
        state = "closed";
        eo__mm_set_backfill(mm, s, -1);
        rc = eo__mm_session_store(mm, s, state, now_ms);
    }
    if (rc != 0)
        return rc;
    *status = 200;
    rc = session_text(s, state, text);
    if (q->op == EO__MM_SESSION_CLOSE) {
        s->inst->open--;
        eo__smap_del(mm->sessions, s->id);
        eo__mm_session_free(s);
    }
    return rc;
}

/* ---- the rounds of a session --------------------------------------------------------------- */

/* Who runs session @p name and in which pool, from memory (open) or the store (finished and
 * still kept): the owner's token in @p token ("" when its instance is gone too) and the pool
 * in @p pool. 0, EO_ENOTFOUND, or the store's code. */
static int session_owner(eo__mm *mm, const char *name, char *token, char *pool)
{
    const mm_session *s = eo__smap_get(mm->sessions, name);
    if (s != NULL) {
        snprintf(token, EO__MM_TOKEN_LEN + 1, "%s", s->inst->token);
        snprintf(pool, EO_ID_MAX + 1, "%s", s->pool);
        return 0;
    }
    eo_mm_row row;
    int rc = eo_store_mm_get(mm->st, EO_MM_SESSION, name, &row);
    if (rc != 0)
        return rc;
    json_t *doc = json_loads(row.doc, 0, NULL);
    const char *p = json_string_value(json_object_get(doc, "pool"));
    snprintf(pool, EO_ID_MAX + 1, "%s", p ? p : "");
    json_decref(doc);
    const mm_instance *in = eo__smap_get(mm->instances, row.owner);
    eo_mm_row inst;
    token[0] = '\0';
    if (in != NULL) {
        snprintf(token, EO__MM_TOKEN_LEN + 1, "%s", in->token);
    } else if ((rc = eo_store_mm_get(mm->st, EO_MM_INSTANCE, row.owner, &inst)) == 0) {
        snprintf(token, EO__MM_TOKEN_LEN + 1, "%.32s", inst.token);
        eo_mm_row_free(&inst);
    }
    eo_mm_row_free(&row);
    return rc == EO_ENOTFOUND ? 0 : rc;
}

int eo__mm_round_session(eo__mm *mm, const char *pool, const char *session, const char *bearer,
                         eo_round_error *if_new, eo_engine_error *err)
{
    memset(if_new, 0, sizeof *if_new);
    /* without a coordinator (a writer started without one) no session is known */
    int rc = mm == NULL ? EO_ENOTFOUND : mm->broken ? eo__mm_reload(mm) : 0;
    char token[EO__MM_TOKEN_LEN + 1], spool[EO_ID_MAX + 1];
    if (rc == 0)
        rc = session_owner(mm, session, token, spool);
    if (rc != 0 && rc != EO_ENOTFOUND) {
        eo_engine_fail(err, EO_OP_ROUND, rc == EO_ENOMEM ? rc : EO_EIO, "", "%s",
                       rc == EO_ENOMEM ? "out of memory" : eo_store_errmsg(mm->st));
        return rc == EO_ENOMEM ? rc : EO_EIO;
    }
    bool known = rc == 0;
    if (bearer[0] != '\0' && !(known && eo__mm_bearer_is(bearer, token))) {
        if (mm == NULL || by_token(mm, bearer) == NULL)
            return eo__mm_refuse(err, 401, "unauthorized", "", "invalid key or instance token");
        if (known)
            return eo__mm_refuse(err, 403, "forbidden", "session",
                                 "the session is another instance's: an instance reports the "
                                 "rounds of its own sessions");
    }
    if (!known) {
        snprintf(if_new->field, sizeof if_new->field, "session");
        snprintf(if_new->message, sizeof if_new->message,
                 "no session \"%.64s\" (never made, or finished longer ago than serve "
                 "--mm-keep)",
                 session);
    } else if (strcmp(spool, pool) != 0) {
        snprintf(if_new->field, sizeof if_new->field, "session");
        snprintf(if_new->message, sizeof if_new->message,
                 "the session plays in pool \"%.64s\": report its rounds there", spool);
    }
    return 0;
}

int eo__mm_instance_op(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status, char **text,
                       eo_engine_error *err)
{
    switch (q->op) {
    case EO__MM_INSTANCE_REGISTER: return instance_register(mm, q, now_ms, status, text, err);
    case EO__MM_INSTANCE_HEARTBEAT:
    case EO__MM_INSTANCE_GET:
    case EO__MM_INSTANCE_DELETE: return instance_op(mm, q, now_ms, status, text, err);
    case EO__MM_SESSION_GET:
    case EO__MM_SESSION_BACKFILL:
    case EO__MM_SESSION_CLOSE: return session_op(mm, q, now_ms, status, text, err);
    default: return EO_EINTERNAL;
    }
}
