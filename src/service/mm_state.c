/* The matchmaking state in memory (mm.h): queues with their waiting tickets, instances and open
 * sessions; their documents in the store; loading them at start and after a failed commit;
 * the queue configurations published to the HTTP threads. Writer thread only, but for
 * eo__mm_queue_get() and eo__mm_next_due(). */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "core/buf.h"
#include "service/mm.h"
#include "service/service.h"

int64_t eo__mm_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void eo__mm_random_hex(eo__mm *mm, char *out)
{
    static const char hex[] = "0123456789abcdef";
    const size_t need = EO__MM_TOKEN_LEN / 2;
    if (mm->rnd_left < need) { /* a fresh buffer: the few bytes left over are dropped */
        size_t got = 0;
        while (got < sizeof mm->rnd) {
            ssize_t n = getrandom(mm->rnd + got, sizeof mm->rnd - got, 0);
            if (n > 0) {
                got += (size_t)n;
            } else if (errno != EINTR) { /* no kernel source: still unpredictable to a client */
                uint64_t x = eo__seed_fresh(out);
                size_t k = sizeof mm->rnd - got < sizeof x ? sizeof mm->rnd - got : sizeof x;
                memcpy(mm->rnd + got, &x, k);
                got += k;
            }
        }
        mm->rnd_left = sizeof mm->rnd;
    }
    unsigned char *b = mm->rnd + sizeof mm->rnd - mm->rnd_left;
    for (size_t i = 0; i < need; i++) {
        out[2 * i] = hex[b[i] >> 4];
        out[2 * i + 1] = hex[b[i] & 15];
    }
    memset(b, 0, need); /* a secret handed out does not stay behind in the buffer */
    mm->rnd_left -= need;
    out[EO__MM_TOKEN_LEN] = '\0';
}

void eo__mm_set_backfill(eo__mm *mm, mm_session *s, int team)
{
    if (s->bf_team < 0 && team >= 0)
        mm->backfills++;
    else if (s->bf_team >= 0 && team < 0)
        mm->backfills--;
    s->bf_team = team;
}

int eo__mm_refuse(eo_engine_error *err, int status, const char *code, const char *field,
                  const char *fmt, ...)
{
    err->status = status;
    snprintf(err->code, sizeof err->code, "%s", code);
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return EO__MM_REFUSED;
}

bool eo__mm_bearer_is(const char *bearer, const char *token)
{
    return strlen(bearer) == EO__MM_TOKEN_LEN && strlen(token) == EO__MM_TOKEN_LEN &&
           eo__ct_equal(bearer, token, EO__MM_TOKEN_LEN);
}

bool eo__mm_token_is(const eo__mm_req *q, const char *token)
{
    return eo__mm_bearer_is(q->token, token);
}

/* ---- queues ------------------------------------------------------------------------------ */

mm_queue *eo__mm_queue(eo__mm *mm, const char *name)
{
    for (size_t i = 0; i < mm->nqueues; i++)
        if (!mm->queues[i]->deleted && strcmp(mm->queues[i]->cfg.name, name) == 0)
            return mm->queues[i];
    return NULL;
}

int eo__mm_queue_add(eo__mm *mm, const eo_queue_config *cfg, int64_t created_ms, mm_queue **out)
{
    mm_queue **v = eo__grow(mm->queues, &mm->capqueues, mm->nqueues + 1, sizeof *v);
    if (v == NULL)
        return EO_ENOMEM;
    mm->queues = v;
    mm_queue *q = calloc(1, sizeof *q);
    if (q == NULL || (q->st = eo__mm_stats(mm, cfg->name)) == NULL ||
        (q->players = eo__smap_new(mm->seed)) == NULL) {
        free(q);
        return EO_ENOMEM;
    }
    q->cfg = *cfg;
    q->created_ms = created_ms;
    q->changed = true;
    mm->instances_changed = true; /* instances name queues: count them for this one */
    mm->queues[mm->nqueues++] = q;
    *out = q;
    return 0;
}

static void queue_free(mm_queue *q)
{
    if (q == NULL)
        return;
    eo__smap_free(q->players);
    free(q->wait);
    free(q);
}

int eo__mm_wait_push(mm_queue *q, mm_ticket *t, bool back)
{
    mm_ticket **v = eo__grow(q->wait, &q->capwait, q->nwait + 1, sizeof *v);
    if (v == NULL)
        return EO_ENOMEM;
    q->wait = v;
    t->pos = q->nwait;
    q->wait[q->nwait++] = t;
    q->nqueued++;
    t->state = MM_T_QUEUED;
    t->match = NULL;
    q->unsorted |= back;
    return 0;
}

void eo__mm_wait_remove(mm_queue *q, mm_ticket *t)
{
    if (t->state == MM_T_QUEUED && t->pos < q->nwait && q->wait[t->pos] == t) {
        q->wait[t->pos] = NULL;
        q->nqueued--;
    }
}

static int by_age(const void *a, const void *b)
{
    const mm_ticket *x = *(mm_ticket *const *)a, *y = *(mm_ticket *const *)b;
    if (x->created_ms != y->created_ms)
        return x->created_ms < y->created_ms ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

void eo__mm_wait_compact(mm_queue *q)
{
    size_t k = 0;
    for (size_t i = 0; i < q->nwait; i++)
        if (q->wait[i] != NULL)
            q->wait[k++] = q->wait[i];
    q->nwait = k;
    q->head = 0;
    if (q->unsorted)
        qsort(q->wait, k, sizeof *q->wait, by_age);
    q->unsorted = false;
    for (size_t i = 0; i < k; i++)
        q->wait[i]->pos = i;
}

/* ---- tickets ----------------------------------------------------------------------------- */

/* Frees what a ticket owns and the ticket. */
static void ticket_release(mm_ticket *t)
{
    free(t->players);
    free(t->mp);
    free(t->lat);
    free(t->request);
    free(t);
}

void eo__mm_ticket_free(eo__mm *mm, mm_ticket *t)
{
    if (t == NULL)
        return;
    eo__mm_wait_remove(t->q, t);
    for (size_t i = 0; i < t->n; i++)
        if (eo__smap_get(t->q->players, t->players[i]) == t)
            eo__smap_del(t->q->players, t->players[i]);
    if (eo__smap_get(mm->tickets, t->id) == t)
        eo__smap_del(mm->tickets, t->id);
    ticket_release(t);
}

int eo__mm_ticket_make(eo__mm *mm, mm_queue *q, const eo_ticket_request *r, const char *request,
                       int64_t created_ms, mm_ticket **out)
{
    mm_ticket *t = calloc(1, sizeof *t);
    size_t nr = (size_t)q->cfg.match.nregions;
    if (t == NULL || (t->players = calloc(r->nplayers, sizeof *t->players)) == NULL ||
        (t->mp = calloc(r->nplayers, sizeof *t->mp)) == NULL ||
        (nr > 0 && (t->lat = calloc(r->nplayers * nr, sizeof *t->lat)) == NULL) ||
        (t->request = strdup(request)) == NULL) {
        if (t != NULL)
            ticket_release(t);
        return EO_ENOMEM;
    }
    t->q = q;
    t->n = r->nplayers;
    t->created_ms = created_ms;
    t->key = mm->next_key++;
    const eo_pool *pool = eo_engine_pool(mm->e, q->cfg.pool);
    for (size_t i = 0; i < r->nplayers; i++) {
        memcpy(t->players[i], r->players[i], sizeof t->players[i]);
        eo_rating_view v;
        memset(&v, 0, sizeof v);
        if (pool != NULL)
            (void)eo_pool_lookup(pool, r->players[i], created_ms / 1000, &v);
        t->mp[i].mu = v.mu;
        t->mp[i].sigma = v.sigma;
        t->mp[i].rounds = v.rounds;
        if (nr > 0 && r->has_latency[i]) {
            memcpy(&t->lat[i * nr], r->latency[i], nr * sizeof *t->lat);
            t->mp[i].latency = &t->lat[i * nr];
        }
    }
    *out = t;
    return 0;
}

int eo__mm_ticket_enter(eo__mm *mm, mm_ticket *t)
{
    int rc = eo__smap_put(mm->tickets, t->id, t);
    for (size_t i = 0; rc == 0 && i < t->n; i++)
        rc = eo__smap_put(t->q->players, t->players[i], t);
    if (rc == 0)
        rc = eo__mm_wait_push(t->q, t, false);
    return rc;
}

/* The seats of match @p m in ticket order, secrets NULL; *out malloc'd. */
static int match_seats(const mm_match *m, eo_mm_seat **out)
{
    eo_mm_seat *s = calloc(m->nseats ? m->nseats : 1, sizeof *s);
    if (s == NULL)
        return EO_ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < m->nt; i++)
        for (size_t j = 0; j < m->tickets[i]->n; j++)
            s[k++] = (eo_mm_seat){m->tickets[i]->players[j], m->tickets[i]->id, m->team[i], NULL};
    *out = s;
    return 0;
}

/* Map @p i (or region, when not @p map) of queue @p c by name; NULL for -1 (none). */
static const char *opt_name(const eo_queue_config *c, bool map, int i)
{
    return i < 0 ? NULL : map ? c->maps[i] : c->regions[i];
}

/* Writes the document of ticket @p t (matched or queued: live) to the store. */
static int ticket_write(eo__mm *mm, mm_ticket *t, const char *status, const char *reason, bool live,
                        int64_t now_ms, bool insert)
{
    eo_mm_seat *seats = NULL;
    eo_mm_match_view mv;
    const char *players[EO_MATCH_TEAM_MAX];
    for (size_t i = 0; i < t->n; i++)
        players[i] = t->players[i];
    eo_ticket_view v = {.id = t->id,
                        .queue = t->q->cfg.name,
                        .status = status,
                        .reason = reason,
                        .players = players,
                        .nplayers = t->n,
                        .created_at = t->created_ms,
                        .updated_at = now_ms};
    const mm_match *m = live ? t->match : NULL;
    if (m != NULL) {
        if (match_seats(m, &seats) != 0)
            return EO_ENOMEM;
        mv = (eo_mm_match_view){m->id,
                                m->q->cfg.name,
                                opt_name(&m->q->cfg, true, m->map),
                                opt_name(&m->q->cfg, false, m->region),
                                m->p_a,
                                m->quality,
                                m->team_size,
                                seats,
                                m->nseats,
                                m->formed_ms};
        v.match = &mv;
        v.accepted = m->deadline_ms > 0 ? m->accepted : NULL;
        v.ready_deadline = m->deadline_ms;
    }
    char *text = NULL;
    int rc = eo_ticket_view_text(&v, &text, NULL);
    free(seats);
    if (rc != 0)
        return rc;
    if (insert) {
        eo_mm_row row = {.live = live,
                         .request = t->request,
                         .doc = text,
                         .created_at = t->created_ms,
                         .updated_at = now_ms};
        snprintf(row.name, sizeof row.name, "%s", t->id);
        snprintf(row.owner, sizeof row.owner, "%s", t->q->cfg.name);
        snprintf(row.status, sizeof row.status, "%s", status);
        snprintf(row.token, sizeof row.token, "%s", t->token);
        rc = eo_store_mm_put(mm->st, EO_MM_TICKET, &row);
    } else {
        rc = eo_store_mm_set(mm->st, EO_MM_TICKET, t->id, status, live, text, now_ms);
    }
    free(text);
    return rc;
}

/* The document of ticket @p t assigned to session @p s: the session's match, where to join and
 * the ticket's players' seats with their secrets. */
static int assigned_write(eo__mm *mm, const mm_ticket *t, const mm_session *s, int64_t now_ms)
{
    eo_mm_seat *seats = calloc(s->nseats ? s->nseats : 1, sizeof *seats);
    if (seats == NULL)
        return EO_ENOMEM;
    eo_mm_match_view mv;
    eo_session_view sv;
    eo__mm_session_view(s, seats, &mv, &sv, "open");
    const char *players[EO_MATCH_TEAM_MAX];
    for (size_t i = 0; i < t->n; i++)
        players[i] = t->players[i];
    eo_ticket_view v = {.id = t->id,
                        .queue = t->q->cfg.name,
                        .status = "assigned",
                        .players = players,
                        .nplayers = t->n,
                        .created_at = t->created_ms,
                        .updated_at = now_ms,
                        .match = &mv,
                        .session = s->id,
                        .instance = s->inst->reg.id,
                        .address = s->inst->reg.address};
    char *text = NULL;
    int rc = eo_ticket_view_text(&v, &text, NULL);
    free(seats);
    if (rc == 0)
        rc = eo_store_mm_set(mm->st, EO_MM_TICKET, t->id, "assigned", false, text, now_ms);
    free(text);
    return rc;
}

int eo__mm_ticket_assign(eo__mm *mm, mm_ticket *t, const mm_session *s, int64_t now_ms)
{
    int rc = assigned_write(mm, t, s, now_ms);
    t->q->st->n.ended[MM_END_ASSIGNED]++;
    eo__mm_ticket_free(mm, t);
    return rc;
}

int eo__mm_ticket_store(eo__mm *mm, mm_ticket *t, const char *status, const char *reason,
                        int64_t now_ms)
{
    return ticket_write(mm, t, status, reason, true, now_ms, false);
}

int eo__mm_ticket_finish(eo__mm *mm, mm_ticket *t, const char *status, const char *reason,
                         int64_t now_ms)
{
    int rc = ticket_write(mm, t, status, reason, false, now_ms, false);
    t->q->st->n.ended[strcmp(status, "expired") == 0 ? MM_END_EXPIRED : MM_END_CANCELLED]++;
    eo__mm_ticket_free(mm, t);
    return rc;
}

int eo__mm_ticket_create(eo__mm *mm, mm_queue *q, const eo_ticket_request *r, const char *request,
                         const char *id, int64_t now_ms, mm_ticket **out)
{
    mm_ticket *t = NULL;
    int rc = eo__mm_ticket_make(mm, q, r, request, now_ms, &t);
    if (rc != 0)
        return rc;
    snprintf(t->id, sizeof t->id, "%s", id);
    eo__mm_random_hex(mm, t->token);
    rc = eo__mm_ticket_enter(mm, t);
    if (rc == 0)
        rc = ticket_write(mm, t, "queued", NULL, true, now_ms, true);
    if (rc != 0) {
        eo__mm_ticket_free(mm, t);
        return rc;
    }
    q->st->n.created++;
    *out = t;
    return 0;
}

/* ---- sessions and instances ---------------------------------------------------------------- */

const char *eo__mm_instance_state(int state)
{
    return state == MM_I_LIVE ? "live" : state == MM_I_DRAINING ? "draining" : "lost";
}

void eo__mm_session_view(const mm_session *s, eo_mm_seat *seats, eo_mm_match_view *mv,
                         eo_session_view *v, const char *status)
{
    for (size_t i = 0; i < s->nseats; i++)
        seats[i] = (eo_mm_seat){s->seats[i].player, s->seats[i].ticket, s->seats[i].team,
                                s->seats[i].secret};
    *mv = (eo_mm_match_view){s->match_id,
                             s->queue,
                             s->map[0] ? s->map : NULL,
                             s->region[0] ? s->region : NULL,
                             s->p_a,
                             s->quality,
                             s->team_size,
                             seats,
                             s->nseats,
                             s->formed_ms};
    *v = (eo_session_view){
        s->id,         s->inst->reg.id, s->inst->reg.address, s->pool,     status,       mv,
        s->created_ms, s->updated_ms,   s->bf_team,           s->bf_slots, s->bf_rating, s->bf_ms};
}

int eo__mm_session_store(eo__mm *mm, mm_session *s, const char *status, int64_t now_ms)
{
    eo_mm_seat *seats = calloc(s->nseats ? s->nseats : 1, sizeof *seats);
    if (seats == NULL)
        return EO_ENOMEM;
    eo_mm_match_view mv;
    eo_session_view v;
    s->updated_ms = now_ms;
    eo__mm_session_view(s, seats, &mv, &v, status);
    char *text = NULL;
    int rc = eo_session_view_text(&v, &text, NULL);
    free(seats);
    if (rc != 0)
        return rc;
    eo_mm_row row = {.live = strcmp(status, "open") == 0,
                     .request = (char *)"",
                     .doc = text,
                     .created_at = s->created_ms,
                     .updated_at = now_ms};
    snprintf(row.name, sizeof row.name, "%s", s->id);
    snprintf(row.owner, sizeof row.owner, "%s", s->inst->reg.id);
    snprintf(row.status, sizeof row.status, "%s", status);
    rc = eo_store_mm_put(mm->st, EO_MM_SESSION, &row);
    free(text);
    return rc;
}

void eo__mm_session_free(mm_session *s)
{
    if (s != NULL)
        free(s->seats);
    free(s);
}

json_t *eo__mm_instance_json(const mm_instance *in)
{
    json_t *o = eo_instance_request_to_json(&in->reg);
    if (o != NULL &&
        (json_object_set_new(o, "status", json_string(eo__mm_instance_state(in->state))) != 0 ||
         json_object_set_new(o, "drained", json_boolean(in->drained)) != 0 ||
         json_object_set_new(o, "silent", json_boolean(in->silent)) != 0)) {
        json_decref(o);
        o = NULL;
    }
    return o;
}

int eo__mm_instance_store(eo__mm *mm, mm_instance *in, int64_t now_ms)
{
    json_t *doc = eo__mm_instance_json(in);
    char *text = doc ? json_dumps(doc, EO__MM_JSON) : NULL;
    json_decref(doc);
    if (text == NULL)
        return EO_ENOMEM;
    eo_mm_row row = {.live = in->state != MM_I_LOST,
                     .request = in->request,
                     .doc = text,
                     .created_at = in->created_ms,
                     .updated_at = now_ms};
    snprintf(row.name, sizeof row.name, "%s", in->reg.id);
    snprintf(row.status, sizeof row.status, "%s", eo__mm_instance_state(in->state));
    snprintf(row.token, sizeof row.token, "%s", in->token);
    int rc = eo_store_mm_put(mm->st, EO_MM_INSTANCE, &row);
    free(text);
    return rc;
}

static int instance_free_cb(void *ctx, const char *key, void *val)
{
    (void)ctx, (void)key;
    mm_instance *in = val;
    free(in->request);
    free(in);
    return 0;
}

static int session_free_cb(void *ctx, const char *key, void *val)
{
    (void)ctx, (void)key;
    eo__mm_session_free(val);
    return 0;
}

static int ticket_free_cb(void *ctx, const char *key, void *val)
{
    (void)ctx, (void)key;
    ticket_release(val);
    return 0;
}

static void match_free(mm_match *m)
{
    if (m == NULL)
        return;
    free(m->tickets);
    free(m->team);
    free(m->accepted);
    free(m);
}

int eo__mm_state_clear(eo__mm *mm)
{
    if (mm->tickets)
        eo__smap_each(mm->tickets, ticket_free_cb, NULL);
    if (mm->sessions)
        eo__smap_each(mm->sessions, session_free_cb, NULL);
    if (mm->instances)
        eo__smap_each(mm->instances, instance_free_cb, NULL);
    eo__smap_free(mm->tickets);
    eo__smap_free(mm->sessions);
    eo__smap_free(mm->instances);
    for (size_t i = 0; i < mm->nqueues; i++) {
        for (mm_match *m = mm->queues[i]->pending, *next; m != NULL; m = next) {
            next = m->next;
            match_free(m);
        }
        queue_free(mm->queues[i]);
    }
    mm->nqueues = 0;
    mm->backfills = 0;
    mm->instances_changed = true;
    mm->tickets = eo__smap_new(mm->seed);
    mm->sessions = eo__smap_new(mm->seed);
    mm->instances = eo__smap_new(mm->seed);
    return mm->tickets && mm->sessions && mm->instances ? 0 : EO_ENOMEM;
}

void eo__mm_match_free(mm_match *m)
{
    match_free(m);
}

/* ---- publishing -------------------------------------------------------------------------------
 */

void eo__mm_publish(eo__mm *mm)
{
    if (mm == NULL)
        return;
    bool any = false;
    size_t live = 0;
    for (size_t i = 0; i < mm->nqueues; i++) {
        any |= mm->queues[i]->changed;
        live += !mm->queues[i]->deleted;
    }
    int64_t due = INT64_MAX;
    for (size_t i = 0; i < mm->nqueues; i++)
        if (!mm->queues[i]->deleted && mm->queues[i]->next_ms < due)
            due = mm->queues[i]->next_ms;
    /* instances' heartbeats are watched once a second; without any, only the pruning is due */
    int64_t now = eo__mm_now_ms();
    int64_t watch = eo__smap_size(mm->instances) > 0 ? 1000 : 60000;
    if (due > now + watch)
        due = now + watch;
    atomic_store(&mm->next_due, due);
    if (!any)
        return;
    eo_queue_config *pub = live ? malloc(live * sizeof *pub) : NULL;
    if (live > 0 && pub == NULL)
        return; /* the old table stays: a change is published with the next commit */
    size_t k = 0;
    for (size_t i = 0; i < mm->nqueues; i++) {
        mm->queues[i]->changed = false;
        if (!mm->queues[i]->deleted)
            pub[k++] = mm->queues[i]->cfg;
    }
    pthread_rwlock_wrlock(&mm->lock);
    free(mm->pub);
    mm->pub = pub;
    mm->npub = k;
    pthread_rwlock_unlock(&mm->lock);
}

int eo__mm_queue_get(eo__mm *mm, const char *name, eo_queue_config *out)
{
    int rc = EO_ENOTFOUND;
    pthread_rwlock_rdlock(&mm->lock);
    for (size_t i = 0; i < mm->npub; i++)
        if (strcmp(mm->pub[i].name, name) == 0) {
            *out = mm->pub[i];
            rc = 0;
            break;
        }
    pthread_rwlock_unlock(&mm->lock);
    return rc;
}

int64_t eo__mm_next_due(eo__mm *mm)
{
    return atomic_load(&mm->next_due);
}

bool eo__mm_broken(const eo__mm *mm)
{
    return mm->broken;
}

json_t *eo__mm_queue_json(eo__mm *mm, const mm_queue *q)
{
    eo__mm_qstats *st = q->st;
    uint64_t tickets = atomic_load(&st->created) + st->n.created;
    uint64_t matches =
        atomic_load(&st->matches[MM_MATCH_ASSIGNED]) + st->n.matches[MM_MATCH_ASSIGNED];
    json_t *o = eo_queue_config_to_json(&q->cfg);
    json_t *f = json_pack("{s:I,s:I,s:I,s:I}", "waiting", (json_int_t)q->nqueued, "matched",
                          (json_int_t)q->nmatched, "tickets", (json_int_t)tickets, "matches",
                          (json_int_t)matches);
    if (o == NULL || f == NULL || eo__mm_figures_add(mm, st, eo__mm_now_ms(), f) != 0) {
        json_decref(o);
        json_decref(f);
        return NULL;
    }
    if (json_object_set_new(o, "figures", f) != 0 ||
        json_object_set_new(o, "created_at", json_integer(q->created_ms)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}
