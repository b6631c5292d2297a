/* The matchmaking requests, applied by the writer (mm.h): each checks everything it needs
 * before it changes anything, so a refused request changes nothing; a store failure undoes the
 * request to its savepoint and reloads the state (docs/MATCHMAKING.md, docs/SERVICE.md "Poison
 * isolation"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "service/mm.h"
#include "service/service.h"

/* What an op answers: the status and a document (stolen), or its text (malloc'd), or a refusal
 * in err. */
typedef struct answer {
    int status;
    json_t *doc;
    char *text;
} answer;

static int give(answer *a, int status, json_t *doc)
{
    a->status = status;
    a->doc = doc;
    return doc ? 0 : EO_ENOMEM;
}

/* ---- queues ------------------------------------------------------------------------------ */

static int queue_row(eo__mm *mm, const mm_queue *q, const char *status, int64_t now_ms)
{
    json_t *o = eo_queue_config_to_json(&q->cfg);
    char *text = o ? json_dumps(o, EO__MM_JSON) : NULL;
    json_decref(o);
    if (text == NULL)
        return EO_ENOMEM;
    eo_mm_row row = {.live = !q->deleted,
                     .request = text,
                     .doc = text,
                     .created_at = q->created_ms,
                     .updated_at = now_ms};
    snprintf(row.name, sizeof row.name, "%s", q->cfg.name);
    snprintf(row.status, sizeof row.status, "%s", status);
    int rc = eo_store_mm_put(mm->st, EO_MM_QUEUE, &row);
    free(text);
    return rc;
}

static mm_queue *need_queue(eo__mm *mm, const char *name, eo_engine_error *err)
{
    mm_queue *q = eo__mm_queue(mm, name);
    if (q == NULL)
        eo__mm_refuse(err, 404, "unknown_queue", "queue", "no queue of that name");
    return q;
}

static int queue_create(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                        eo_engine_error *err)
{
    const eo_queue_config *cfg = r->u.queue;
    if (eo__mm_queue(mm, cfg->name) != NULL)
        return eo__mm_refuse(err, 409, "queue_exists", "name", "a queue of that name exists");
    if (eo_engine_pool(mm->e, cfg->pool) == NULL)
        return eo__mm_refuse(err, 400, "unknown_pool", "pool", "no pool of that name");
    mm_queue *q = NULL;
    int rc = eo__mm_queue_add(mm, cfg, now_ms, &q);
    if (rc == 0) {
        q->next_ms = now_ms + cfg->interval_ms;
        rc = queue_row(mm, q, "live", now_ms);
    }
    return rc ? rc : give(a, 201, eo__mm_queue_json(mm, q));
}

static int queue_patch(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                       eo_engine_error *err)
{
    mm_queue *q = need_queue(mm, r->name, err);
    if (q == NULL)
        return EO__MM_REFUSED;
    eo_queue_config cfg = q->cfg;
    eo_request_error rerr;
    int rc = eo_queue_request_apply(r->body, true, &cfg, &rerr);
    if (rc == EO_ENOMEM)
        return rc;
    if (rc != 0)
        return eo__mm_refuse(err, rerr.status, rerr.code, rerr.field, "%s", rerr.message);
    q->cfg = cfg;
    q->changed = true;
    if (q->next_ms > now_ms + cfg.interval_ms)
        q->next_ms = now_ms + cfg.interval_ms;
    rc = queue_row(mm, q, "live", now_ms);
    return rc ? rc : give(a, 200, eo__mm_queue_json(mm, q));
}

/* Every ticket of @p q ends cancelled: the waiting ones, and those of its pending matches. */
static int cancel_all(eo__mm *mm, mm_queue *q, const char *reason, int64_t now_ms, int64_t *n)
{
    int rc = 0;
    bool all[EO_MATCH_TEAM_MAX * 2];
    memset(all, 1, sizeof all);
    while (rc == 0 && q->pending != NULL) {
        *n += (int64_t)q->pending->nt;
        rc = eo__mm_dissolve(mm, q->pending, all, reason, now_ms);
    }
    for (size_t i = 0; rc == 0 && i < q->nwait; i++)
        if (q->wait[i] != NULL) {
            (*n)++;
            rc = eo__mm_ticket_finish(mm, q->wait[i], "cancelled", reason, now_ms);
        }
    return rc;
}

static int queue_delete(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                        eo_engine_error *err)
{
    mm_queue *q = need_queue(mm, r->name, err);
    if (q == NULL)
        return EO__MM_REFUSED;
    int64_t n = 0;
    int rc = cancel_all(mm, q, "the queue was deleted", now_ms, &n);
    q->deleted = true;
    q->changed = true;
    if (rc == 0)
        rc = queue_row(mm, q, "deleted", now_ms);
    return rc ? rc
              : give(a, 200,
                     json_pack("{s:s,s:s,s:I}", "queue", q->cfg.name, "status", "deleted",
                               "cancelled", (json_int_t)n));
}

static int queue_get(eo__mm *mm, const eo__mm_req *r, answer *a, eo_engine_error *err)
{
    mm_queue *q = need_queue(mm, r->name, err);
    return q ? give(a, 200, eo__mm_queue_json(mm, q)) : EO__MM_REFUSED;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(mm_queue *const *)a)->cfg.name, (*(mm_queue *const *)b)->cfg.name);
}

static int queue_list(eo__mm *mm, answer *a)
{
    json_t *arr = json_array();
    mm_queue **sorted = malloc((mm->nqueues ? mm->nqueues : 1) * sizeof *sorted);
    size_t n = 0;
    for (size_t i = 0; sorted != NULL && i < mm->nqueues; i++)
        if (!mm->queues[i]->deleted)
            sorted[n++] = mm->queues[i];
    if (n > 0)
        qsort(sorted, n, sizeof *sorted, by_name);
    for (size_t i = 0; arr != NULL && i < n; i++)
        if (json_array_append_new(arr, eo__mm_queue_json(mm, sorted[i])) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    if (sorted == NULL) {
        json_decref(arr);
        arr = NULL;
    }
    free(sorted);
    return give(a, 200, arr ? json_pack("{s:o}", "queues", arr) : NULL);
}

/* ---- tickets ----------------------------------------------------------------------------- */

static json_t *ticket_created(const char *id, const char *token, const char *status)
{
    return json_pack("{s:s,s:s,s:s}", "ticket", id, "token", token, "status", status);
}

/* A ticket id given again: the same ticket when the content is the same, else 409. */
static int ticket_again(eo__mm *mm, const eo__mm_req *r, answer *a, eo_engine_error *err)
{
    const char *id = r->u.ticket->id;
    mm_ticket *t = eo__smap_get(mm->tickets, id);
    if (t != NULL) {
        if (strcmp(t->q->cfg.name, r->name) != 0 || strcmp(t->request, r->ticket_text) != 0)
            return eo__mm_refuse(err, 409, "ticket_conflict", "id",
                                 "a ticket with this id exists with other content");
        return give(
            a, 200,
            ticket_created(t->id, t->token, t->state == MM_T_QUEUED ? "queued" : "matched"));
    }
    eo_mm_row row;
    int rc = eo_store_mm_get(mm->st, EO_MM_TICKET, id, &row);
    if (rc == EO_ENOTFOUND)
        return 0;
    if (rc != 0)
        return rc;
    bool same = strcmp(row.owner, r->name) == 0 && strcmp(row.request, r->ticket_text) == 0;
    rc = same ? give(a, 200, ticket_created(id, row.token, row.status))
              : eo__mm_refuse(err, 409, "ticket_conflict", "id",
                              "a ticket with this id exists with other content");
    eo_mm_row_free(&row);
    return rc;
}

static int ticket_create(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                         eo_engine_error *err)
{
    mm_queue *q = need_queue(mm, r->name, err);
    if (q == NULL)
        return EO__MM_REFUSED;
    const eo_ticket_request *t = r->u.ticket;
    if (t->id[0] != '\0') {
        int rc = ticket_again(mm, r, a, err);
        if (rc != 0 || a->doc != NULL)
            return rc;
    }
    for (size_t i = 0; i < t->nplayers; i++) {
        const mm_ticket *other = eo__smap_get(q->players, t->players[i]);
        if (other != NULL) {
            char field[64];
            snprintf(field, sizeof field, "players[%zu].id", i);
            return eo__mm_refuse(err, 409, "player_queued", field,
                                 "this player is in ticket %.64s of this queue already", other->id);
        }
    }
    char id[EO_ID_MAX + 1];
    if (t->id[0] != '\0') {
        snprintf(id, sizeof id, "%s", t->id);
    } else {
        id[0] = 't';
        eo__mm_random_hex(mm, id + 1);
    }
    mm_ticket *made = NULL;
    int rc = eo__mm_ticket_create(mm, q, t, r->ticket_text, id, now_ms, &made);
    return rc ? rc : give(a, 201, ticket_created(made->id, made->token, "queued"));
}

/* The ticket the request names and may act on: live (in memory) or, with @p row, finished
 * (its stored row, the caller's to free). Refused: unknown (404 with a key; 401 with a token,
 * which tells nothing of other tickets), or a token that is not the ticket's. */
static int ticket_auth(eo__mm *mm, const eo__mm_req *r, mm_ticket **live, eo_mm_row *row,
                       eo_engine_error *err)
{
    *live = eo__smap_get(mm->tickets, r->name);
    int rc = 0;
    const char *token = "";
    if (*live != NULL) {
        token = (*live)->token;
    } else if ((rc = eo_store_mm_get(mm->st, EO_MM_TICKET, r->name, row)) == 0) {
        token = row->token;
    } else if (rc != EO_ENOTFOUND) {
        return rc;
    }
    if (r->by == EO__MM_BY_TOKEN && !eo__mm_token_is(r, token)) {
        if (rc == 0 && *live == NULL)
            eo_mm_row_free(row);
        return eo__mm_refuse(err, 401, "unauthorized", "", "invalid key or ticket token");
    }
    if (rc == EO_ENOTFOUND)
        return eo__mm_refuse(err, 404, "unknown_ticket", "ticket", "no ticket of that id");
    return 0;
}

static int ticket_cancel(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                         eo_engine_error *err)
{
    mm_ticket *t = NULL;
    eo_mm_row row = {0};
    int rc = ticket_auth(mm, r, &t, &row, err);
    if (rc != 0)
        return rc;
    if (t == NULL) { /* finished: a repeat of a cancel is answered again */
        bool assigned = strcmp(row.status, "assigned") == 0;
        rc = assigned
                 ? eo__mm_refuse(err, 409, "ticket_assigned", "ticket",
                                 "the ticket has a session already; it cannot be cancelled")
                 : give(a, 200, json_pack("{s:s,s:s}", "ticket", row.name, "status", row.status));
        eo_mm_row_free(&row);
        return rc;
    }
    char id[EO_ID_MAX + 1];
    snprintf(id, sizeof id, "%s", t->id);
    if (t->state == MM_T_MATCHED) {
        bool cancel[EO_MATCH_TEAM_MAX * 2] = {false};
        for (size_t i = 0; i < t->match->nt; i++)
            cancel[i] = t->match->tickets[i] == t;
        rc = eo__mm_dissolve(mm, t->match, cancel, NULL, now_ms);
    } else {
        rc = eo__mm_ticket_finish(mm, t, "cancelled", NULL, now_ms);
    }
    return rc ? rc : give(a, 200, json_pack("{s:s,s:s}", "ticket", id, "status", "cancelled"));
}

/* A decline dissolves the match (the decliner's ticket cancelled); the last accept sends it
 * to an instance. */
static int ticket_ready(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                        eo_engine_error *err)
{
    mm_ticket *t = NULL;
    eo_mm_row row = {0};
    int rc = ticket_auth(mm, r, &t, &row, err);
    if (rc != 0)
        return rc;
    if (t == NULL || t->state != MM_T_MATCHED || t->match->deadline_ms == 0) {
        if (t == NULL)
            eo_mm_row_free(&row);
        return eo__mm_refuse(err, 409, "no_ready_check", "ticket",
                             "the ticket has no ready check open");
    }
    const eo_ready_request *rr = &r->u.ready;
    mm_match *m = t->match;
    size_t seat = 0, ti = 0;
    for (; m->tickets[ti] != t; ti++)
        seat += m->tickets[ti]->n;
    bool found = rr->player[0] == '\0';
    for (size_t j = 0; j < t->n; j++)
        if (rr->player[0] == '\0' || strcmp(rr->player, t->players[j]) == 0) {
            found = true;
            if (rr->accept)
                m->accepted[seat + j] = true;
        }
    if (!found)
        return eo__mm_refuse(err, 400, "invalid_request", "player", "not a player of this ticket");
    char id[EO_ID_MAX + 1];
    snprintf(id, sizeof id, "%s", t->id);
    if (!rr->accept) {
        bool cancel[EO_MATCH_TEAM_MAX * 2] = {false};
        cancel[ti] = true;
        rc = eo__mm_dissolve(mm, m, cancel, "declined the ready check", now_ms);
        return rc ? rc : give(a, 200, json_pack("{s:s,s:s}", "ticket", id, "status", "cancelled"));
    }
    bool all = true;
    for (size_t i = 0; i < m->nseats; i++)
        all &= m->accepted[i];
    if (all)
        m->deadline_ms = 0;
    int alloc = all ? eo__mm_allocate(mm, m, now_ms) : 0;
    if (alloc < 0)
        return alloc;
    for (size_t i = 0; alloc == 0 && rc == 0 && i < m->nt; i++)
        rc = eo__mm_ticket_store(mm, m->tickets[i], "matched", NULL, now_ms);
    return rc ? rc
              : give(
                    a, 200,
                    json_pack("{s:s,s:s}", "ticket", id, "status", alloc ? "assigned" : "matched"));
}

/* ---- dispatch ----------------------------------------------------------------------------- */


static int dispatch(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, answer *a,
                    eo_engine_error *err)
{
    switch (r->op) {
    case EO__MM_QUEUE_CREATE: return queue_create(mm, r, now_ms, a, err);
    case EO__MM_QUEUE_PATCH: return queue_patch(mm, r, now_ms, a, err);
    case EO__MM_QUEUE_DELETE: return queue_delete(mm, r, now_ms, a, err);
    case EO__MM_QUEUE_GET: return queue_get(mm, r, a, err);
    case EO__MM_QUEUE_LIST: return queue_list(mm, a);
    case EO__MM_TICKET_CREATE: return ticket_create(mm, r, now_ms, a, err);
    case EO__MM_TICKET_CANCEL: return ticket_cancel(mm, r, now_ms, a, err);
    case EO__MM_TICKET_READY: return ticket_ready(mm, r, now_ms, a, err);
    case EO__MM_TICK: {
        int rc = eo__mm_tick(mm, now_ms);
        return rc ? rc : give(a, 200, json_object());
    }
    default: return eo__mm_instance_op(mm, r, now_ms, &a->status, &a->text, err);
    }
}

void eo__mm_apply(eo__mm *mm, const eo__mm_req *r, int64_t now_ms, int *status, char **resp,
                  eo_engine_error *err)
{
    memset(err, 0, sizeof *err);
    *resp = NULL;
    answer a = {0, NULL, NULL};
    int rc = mm->broken ? eo__mm_reload(mm) : 0;
    if (rc == 0)
        rc = eo_store_savepoint(mm->st);
    if (rc == 0) {
        eo__mm_stats_mark(mm);
        rc = dispatch(mm, r, now_ms, &a, err);
        if (rc < 0) {
            /* memory may be ahead of the store: both go back to the savepoint */
            (void)eo_store_rollback_to(mm->st);
            eo__mm_stats_undo(mm);
            (void)eo__mm_reload(mm);
        } else {
            (void)eo_store_release(mm->st);
        }
    }
    if (rc == 0)
        *resp = a.text ? a.text : json_dumps(a.doc, EO__MM_JSON);
    else
        free(a.text);
    json_decref(a.doc);
    if (rc == 0 && *resp == NULL)
        rc = EO_ENOMEM;
    if (rc < 0) {
        eo_engine_fail(err, EO_OP_ANY, rc, "", "%s",
                       rc == EO_ENOMEM ? "out of memory" : eo_store_errmsg(mm->st));
    }
    *status = rc == 0 ? a.status : err->status;
}
