/* The matchmaking routes' handlers (the rows are in routes.c; docs/MATCHMAKING.md, "The API").
 * Bodies are decoded and checked here, on the HTTP thread, against the queue configurations the
 * writer publishes; what changes state goes to the writer as an EO__W_MM request. A ticket's
 * poll is answered here from the store (its document as last committed), with the server key
 * or the ticket's own token. */
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"
#include "service/mm.h"
#include "service/service.h"

/* A request between its decoding here and the writer's answer (freed when it completes). */
typedef struct mm_work {
    eo__mm_req req;
    char *text; /* a ticket's canonical text */
    union {
        eo_queue_config queue;
        eo_ticket_request ticket;
        eo_instance_request instance;
    } u;
} mm_work;

static void mm_work_free(void *p)
{
    mm_work *w = p;
    if (w != NULL)
        free(w->text);
    free(w);
}

static void answer_request_error(eo__answer *a, const eo_request_error *e)
{
    eo__answer_error(a, e->status, e->code, e->message, e->field);
}

static int parse(eo__call *c, eo__answer *a)
{
    eo_request_error rerr;
    if (eo_request_parse(c->body, c->body_len, c->svc->cfg.body_max, EO_REQUEST_DEPTH_MAX, &c->json,
                         &rerr) != 0) {
        answer_request_error(a, &rerr);
        return -1;
    }
    return 0;
}

/* A new request of @p op for the path parameter @p param (NULL: none), the caller taken from
 * the key or the bearer token. NULL (the answer in @p a) when out of memory. */
static mm_work *work_new(eo__call *c, eo__mm_op op, const char *param, eo__answer *a)
{
    mm_work *w = calloc(1, sizeof *w);
    if (w == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return NULL;
    }
    w->req.op = op;
    w->req.by = c->role == EO__ROLE_ADMIN    ? EO__MM_BY_ADMIN
                : c->role == EO__ROLE_SERVER ? EO__MM_BY_SERVER
                                             : EO__MM_BY_TOKEN;
    /* a bearer too long to be a token is kept empty: it matches nothing */
    if (w->req.by == EO__MM_BY_TOKEN &&
        eo__auth_bearer(c->authz, w->req.token, sizeof w->req.token) != 0)
        w->req.token[0] = '\0';
    if (param != NULL)
        snprintf(w->req.name, sizeof w->req.name, "%s", eo__path_param(c->m, param));
    return w;
}

/* Hands @p w to the writer (the body's tree stays alive when the writer reads it). */
static eo__run to_writer(eo__call *c, mm_work *w, bool keep_json)
{
    c->work = w;
    c->work_free = mm_work_free;
    if (!keep_json) {
        json_decref(c->json);
        c->json = NULL;
    }
    w->req.body = c->json;
    c->w.kind = EO__W_MM;
    c->w.u.mm = &w->req;
    return EO__RUN_WRITER;
}

static eo__run simple(eo__call *c, eo__answer *a, eo__mm_op op, const char *param)
{
    mm_work *w = work_new(c, op, param, a);
    return w ? to_writer(c, w, false) : EO__RUN_DONE;
}

/* ---- queues ------------------------------------------------------------------------------ */

/* The defaults of a new queue: eo_match_config_default()'s windows are on the Elo scale, moved
 * to the pool model's mean units for this team size (docs/MATCHMAKING.md "Choosing windows and
 * quality"); a model without such a scale keeps them. */
static int queue_defaults(const eo__pool_facts *pi, const char *name, int team_size,
                          eo_queue_config *cfg)
{
    int rc = eo_queue_config_init(name, pi->name, team_size, cfg);
    double f = rc == 0 ? eo_match_model_scale(pi->model, team_size) : 0.0;
    if (f > 0.0)
        rc = eo_match_config_scale(&cfg->match, f);
    return rc;
}

eo__run eo__h_queue_create(eo__call *c, eo__answer *a)
{
    if (parse(c, a))
        return EO__RUN_DONE;
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team_size = 0;
    eo_request_error rerr;
    if (eo_queue_head_from_json(c->json, name, pool, &team_size, &rerr) != 0) {
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    eo__pool_facts pi;
    if (eo__pools_get(&c->svc->pools, pool, &pi) != 0) {
        eo__answer_error(a, 400, "unknown_pool", "no pool of that name", "pool");
        return EO__RUN_DONE;
    }
    mm_work *w = work_new(c, EO__MM_QUEUE_CREATE, NULL, a);
    if (w == NULL)
        return EO__RUN_DONE;
    if (queue_defaults(&pi, name, team_size, &w->u.queue) != 0) {
        mm_work_free(w);
        eo__answer_error(a, 500, "internal", "the queue's defaults cannot be made", NULL);
        return EO__RUN_DONE;
    }
    if (eo_queue_request_apply(c->json, false, &w->u.queue, &rerr) != 0) {
        mm_work_free(w);
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    w->req.u.queue = &w->u.queue;
    return to_writer(c, w, false);
}

eo__run eo__h_queue_patch(eo__call *c, eo__answer *a)
{
    if (parse(c, a))
        return EO__RUN_DONE;
    eo_queue_config cfg;
    if (eo__mm_queue_get(c->svc->mm, eo__path_param(c->m, "queue"), &cfg) != 0) {
        eo__answer_error(a, 404, "unknown_queue", "no queue of that name", "queue");
        return EO__RUN_DONE;
    }
    /* checked here against the queue as published; the writer applies it to the queue as it
     * is then */
    eo_request_error rerr;
    if (eo_queue_request_apply(c->json, true, &cfg, &rerr) != 0) {
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    mm_work *w = work_new(c, EO__MM_QUEUE_PATCH, "queue", a);
    return w ? to_writer(c, w, true) : EO__RUN_DONE;
}

eo__run eo__h_queue_list(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_QUEUE_LIST, NULL);
}

eo__run eo__h_queue_get(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_QUEUE_GET, "queue");
}

eo__run eo__h_queue_delete(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_QUEUE_DELETE, "queue");
}

/* ---- tickets ----------------------------------------------------------------------------- */

eo__run eo__h_ticket_create(eo__call *c, eo__answer *a)
{
    eo_queue_config *q = malloc(sizeof *q);
    if (q == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    mm_work *w = NULL;
    eo_request_error rerr;
    if (eo__mm_queue_get(c->svc->mm, eo__path_param(c->m, "queue"), q) != 0) {
        eo__answer_error(a, 404, "unknown_queue", "no queue of that name", "queue");
    } else if (parse(c, a) == 0 && (w = work_new(c, EO__MM_TICKET_CREATE, "queue", a)) != NULL) {
        if (eo_ticket_request_from_json(c->json, q, &w->u.ticket, &rerr) != 0) {
            answer_request_error(a, &rerr);
        } else if (eo_ticket_request_text(&w->u.ticket, q, &w->text) != 0) {
            eo__answer_error(a, 500, "internal", "out of memory", NULL);
        } else {
            free(q);
            w->req.u.ticket = &w->u.ticket;
            w->req.ticket_text = w->text;
            return to_writer(c, w, false);
        }
    }
    mm_work_free(w);
    free(q);
    return EO__RUN_DONE;
}

/* GET /v1/tickets/{ticket}: the ticket's document as last committed, read here from the store
 * (a poll never waits for the writer). */
eo__run eo__h_ticket_get(eo__call *c, eo__answer *a)
{
    eo_store *rs = eo__reader(c->svc);
    if (rs == NULL) {
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return EO__RUN_DONE;
    }
    char token[EO__MM_TOKEN_LEN + 1] = "";
    bool by_token = c->role == EO__ROLE_NONE;
    if (by_token && eo__auth_bearer(c->authz, token, sizeof token) != 0)
        token[0] = '\0';
    eo_mm_row row;
    int rc = eo_store_mm_get(rs, EO_MM_TICKET, eo__path_param(c->m, "ticket"), &row);
    bool ok = rc == 0 && (!by_token || (strlen(token) == EO__MM_TOKEN_LEN &&
                                        eo__ct_equal(token, row.token, EO__MM_TOKEN_LEN)));
    if (rc != 0 && rc != EO_ENOTFOUND) {
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
    } else if (by_token && !ok) { /* unknown or not this ticket's: the same answer */
        a->www_auth = "Bearer realm=\"evenodds\", error=\"invalid_token\"";
        eo__answer_error(a, 401, "unauthorized", "invalid key or ticket token", NULL);
    } else if (rc == EO_ENOTFOUND) {
        eo__answer_error(a, 404, "unknown_ticket", "no ticket of that id", "ticket");
    } else {
        a->status = 200;
        a->body = row.doc;
        a->len = strlen(row.doc);
        row.doc = NULL;
    }
    if (rc == 0)
        eo_mm_row_free(&row);
    return EO__RUN_DONE;
}

eo__run eo__h_ticket_delete(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_TICKET_CANCEL, "ticket");
}

eo__run eo__h_ticket_ready(eo__call *c, eo__answer *a)
{
    if (parse(c, a))
        return EO__RUN_DONE;
    mm_work *w = work_new(c, EO__MM_TICKET_READY, "ticket", a);
    eo_request_error rerr;
    if (w != NULL && eo_ready_request_from_json(c->json, &w->req.u.ready, &rerr) != 0) {
        mm_work_free(w);
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    return w ? to_writer(c, w, false) : EO__RUN_DONE;
}

/* ---- instances and sessions --------------------------------------------------------------- */

eo__run eo__h_instance_register(eo__call *c, eo__answer *a)
{
    if (parse(c, a))
        return EO__RUN_DONE;
    mm_work *w = work_new(c, EO__MM_INSTANCE_REGISTER, NULL, a);
    eo_request_error rerr;
    if (w != NULL && eo_instance_request_from_json(c->json, &w->u.instance, &rerr) != 0) {
        mm_work_free(w);
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    if (w != NULL)
        w->req.u.instance = &w->u.instance;
    return w ? to_writer(c, w, false) : EO__RUN_DONE;
}

eo__run eo__h_instance_get(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_INSTANCE_GET, "instance");
}

eo__run eo__h_instance_delete(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_INSTANCE_DELETE, "instance");
}

eo__run eo__h_instance_heartbeat(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_INSTANCE_HEARTBEAT, "instance");
}

eo__run eo__h_session_get(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_SESSION_GET, "session");
}

eo__run eo__h_session_close(eo__call *c, eo__answer *a)
{
    return simple(c, a, EO__MM_SESSION_CLOSE, "session");
}

eo__run eo__h_session_backfill(eo__call *c, eo__answer *a)
{
    if (parse(c, a))
        return EO__RUN_DONE;
    mm_work *w = work_new(c, EO__MM_SESSION_BACKFILL, "session", a);
    eo_request_error rerr;
    if (w != NULL && eo_backfill_request_from_json(c->json, &w->req.u.backfill, &rerr) != 0) {
        mm_work_free(w);
        answer_request_error(a, &rerr);
        return EO__RUN_DONE;
    }
    return w ? to_writer(c, w, false) : EO__RUN_DONE;
}

/* GET /v1/pools/{pool}/queues: a read of "Dashboard and reads" (the server key, or none on a
 * public dashboard): the pool's queues with their figures as the writer last published them,
 * never through the writer. Their settings stay the admin's (GET /v1/queues). */
eo__run eo__h_pool_queues(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    json_t *o = eo__mm_pool_queues_json(c->svc->mm, pi.name, eo__mm_now_ms());
    char *text = o ? json_dumps(o, EO__MM_JSON) : NULL;
    json_decref(o);
    if (text == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    a->status = 200;
    a->body = text;
    a->len = strlen(text);
    return EO__RUN_DONE;
}
