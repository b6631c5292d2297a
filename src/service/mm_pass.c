/* The periodic work of the coordinator, on the writer thread (mm.h): each queue's pass when it
 * is due (expired tickets, ready checks past their deadline, the matcher over the waiting
 * tickets and the backfill requests of its sessions, then instances for the matches that wait),
 * instances that stopped heartbeating, and the pruning of finished objects
 * (docs/MATCHMAKING.md "States of a ticket", "Instances", "Backfill"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "evenodds/eo_match.h"
#include "service/mm.h"
#include "service/service.h"

/* ---- dissolving and allocating matches ----------------------------------------------------- */

/* Matches wait in a list, oldest first; they leave it mostly from its head. */
static void pending_remove(mm_queue *q, mm_match *m)
{
    mm_match *prev = NULL;
    for (mm_match **p = &q->pending; *p != NULL; prev = *p, p = &(*p)->next)
        if (*p == m) {
            *p = m->next;
            if (q->pending_last == m)
                q->pending_last = prev;
            q->nmatched -= m->nt;
            return;
        }
}

static void pending_append(mm_queue *q, mm_match *m)
{
    m->next = NULL;
    if (q->pending_last != NULL)
        q->pending_last->next = m;
    else
        q->pending = m;
    q->pending_last = m;
    q->nmatched += m->nt;
}

int eo__mm_dissolve(eo__mm *mm, mm_match *m, const bool *cancel, const char *reason, int64_t now_ms)
{
    int rc = 0;
    pending_remove(m->q, m);
    m->q->st->n.matches[MM_MATCH_DISSOLVED]++;
    for (size_t i = 0; i < m->nt; i++) {
        mm_ticket *t = m->tickets[i];
        t->match = NULL;
        t->state = MM_T_QUEUED;
        if (cancel[i]) {
            int r = eo__mm_ticket_finish(mm, t, "cancelled", reason, now_ms);
            rc = rc ? rc : r;
            continue;
        }
        int r = eo__mm_wait_push(m->q, t, true);
        if (r == 0)
            r = eo__mm_ticket_store(mm, t, "queued", NULL, now_ms);
        rc = rc ? rc : r;
    }
    eo__mm_match_free(m);
    return rc;
}

/* The worst latency of @p m's players to region @p r (-1 when one cannot play there). */
static double worst_latency(const mm_match *m, int r)
{
    double worst = 0.0;
    for (size_t i = 0; i < m->nt; i++)
        for (size_t j = 0; j < m->tickets[i]->n; j++) {
            const double *lat = m->tickets[i]->mp[j].latency;
            if (lat == NULL)
                continue;
            if (!(lat[r] >= 0.0))
                return -1.0;
            worst = fmax(worst, lat[r]);
        }
    return worst;
}

static int region_of(const eo_queue_config *q, const char *name)
{
    for (int r = 0; r < q->match.nregions; r++)
        if (strcmp(q->regions[r], name) == 0)
            return r;
    return -1;
}

typedef struct pick_ctx {
    const mm_match *m;
    double limit; /* the latency limit at the match's longest wait (0: none) */
    mm_instance *best;
    double best_lat, best_load;
} pick_ctx;

static bool serves(const mm_instance *in, const char *queue)
{
    for (size_t i = 0; i < in->reg.nqueues; i++)
        if (strcmp(in->reg.queues[i], queue) == 0)
            return true;
    return false;
}

/* The best free instance: lowest worst latency for the match's players (when the queue has
 * regions), then the least loaded, then the smallest id (the same choice every time). */
static int pick(void *ctx, const char *key, void *val)
{
    (void)key;
    pick_ctx *c = ctx;
    mm_instance *in = val;
    const mm_queue *q = c->m->q;
    if (in->state != MM_I_LIVE || in->open >= in->reg.capacity || !serves(in, q->cfg.name))
        return 0;
    double lat = 0.0;
    if (q->cfg.match.nregions > 0) {
        int r = region_of(&q->cfg, in->reg.region);
        lat = r < 0 ? -1.0 : worst_latency(c->m, r);
        if (lat < 0.0 || (c->limit > 0.0 && lat > c->limit))
            return 0;
    }
    double load = (double)in->open / (double)in->reg.capacity;
    if (c->best == NULL || lat < c->best_lat ||
        (lat == c->best_lat &&
         (load < c->best_load ||
          (load == c->best_load && strcmp(in->reg.id, c->best->reg.id) < 0)))) {
        c->best = in;
        c->best_lat = lat;
        c->best_load = load;
    }
    return 0;
}

/* A session for match @p m on instance @p in, every seat with a fresh join secret. */
static mm_session *session_make(eo__mm *mm, const mm_match *m, mm_instance *in, int64_t now_ms)
{
    mm_session *s = calloc(1, sizeof *s);
    if (s == NULL || (s->seats = calloc(m->nseats ? m->nseats : 1, sizeof *s->seats)) == NULL) {
        free(s);
        return NULL;
    }
    const eo_queue_config *qc = &m->q->cfg;
    s->id[0] = 's';
    eo__mm_random_hex(mm, s->id + 1);
    s->inst = in;
    snprintf(s->queue, sizeof s->queue, "%s", qc->name);
    snprintf(s->pool, sizeof s->pool, "%s", qc->pool);
    snprintf(s->match_id, sizeof s->match_id, "%s", m->id);
    snprintf(s->map, sizeof s->map, "%s", m->map >= 0 ? qc->maps[m->map] : "");
    snprintf(s->region, sizeof s->region, "%s", in->reg.region);
    s->p_a = m->p_a;
    s->quality = m->quality;
    s->team_size = m->team_size;
    s->formed_ms = m->formed_ms;
    s->created_ms = s->updated_ms = now_ms;
    s->bf_team = -1;
    s->capseats = m->nseats ? m->nseats : 1;
    for (size_t i = 0; i < m->nt; i++)
        for (size_t j = 0; j < m->tickets[i]->n; j++) {
            mm_seat *seat = &s->seats[s->nseats++];
            snprintf(seat->player, sizeof seat->player, "%s", m->tickets[i]->players[j]);
            snprintf(seat->ticket, sizeof seat->ticket, "%s", m->tickets[i]->id);
            seat->team = m->team[i];
            eo__mm_random_hex(mm, seat->secret);
        }
    return s;
}

int eo__mm_allocate(eo__mm *mm, mm_match *m, int64_t now_ms)
{
    int64_t oldest = m->formed_ms;
    for (size_t i = 0; i < m->nt; i++)
        if (m->tickets[i]->created_ms < oldest)
            oldest = m->tickets[i]->created_ms;
    eo_match_step step;
    eo_match_step_at(&m->q->cfg.match, (now_ms - oldest) / 1000, &step);
    pick_ctx c = {m, step.latency_ms, NULL, 0.0, 0.0};
    eo__smap_each(mm->instances, pick, &c);
    if (c.best == NULL)
        return 0; /* the match waits for an instance */
    mm_session *s = session_make(mm, m, c.best, now_ms);
    if (s == NULL || eo__smap_put(mm->sessions, s->id, s) != 0) {
        eo__mm_session_free(s);
        return EO_ENOMEM;
    }
    c.best->open++;
    int rc = eo__mm_stats_started(mm, m); /* before its tickets are freed */
    if (rc == 0)
        rc = eo__mm_session_store(mm, s, "open", now_ms);
    for (size_t i = 0; rc == 0 && i < m->nt; i++)
        rc = eo__mm_ticket_assign(mm, m->tickets[i], s, now_ms);
    pending_remove(m->q, m);
    m->q->st->n.matches[MM_MATCH_ASSIGNED]++;
    eo__mm_match_free(m);
    return rc < 0 ? rc : 1;
}

/* ---- the pass ------------------------------------------------------------------------------ */

/* Tickets that waited past the queue's ticket_ttl_s expire. */
static int expire(eo__mm *mm, mm_queue *q, int64_t now_ms)
{
    int rc = 0;
    int64_t limit = now_ms - q->cfg.ticket_ttl_s * 1000;
    for (size_t i = 0; rc == 0 && i < q->nwait; i++)
        if (q->wait[i] != NULL && q->wait[i]->created_ms < limit)
            rc = eo__mm_ticket_finish(mm, q->wait[i], "expired", NULL, now_ms);
    return rc;
}

/* Ready checks past their deadline: the tickets with a player who did not accept are
 * cancelled, the others go back to the queue. */
static int ready_timeouts(eo__mm *mm, mm_queue *q, int64_t now_ms)
{
    int rc = 0;
    for (mm_match *m = q->pending, *next; rc == 0 && m != NULL; m = next) {
        next = m->next;
        if (m->deadline_ms == 0 || now_ms < m->deadline_ms)
            continue;
        bool cancel[EO_MATCH_TEAM_MAX * 2] = {false};
        for (size_t i = 0, seat = 0; i < m->nt; i++)
            for (size_t j = 0; j < m->tickets[i]->n; j++, seat++)
                cancel[i] |= !m->accepted[seat];
        rc = eo__mm_dissolve(mm, m, cancel, "ready check timed out", now_ms);
    }
    return rc;
}

/* A backfill request of an open session of the queue, as the pass sees it. */
typedef struct bf_ctx {
    const mm_queue *q;
    mm_session **s;
    eo_match_backfill *b;
    size_t n, cap, capb;
    int err;
} bf_ctx;

static int collect_backfill(void *ctx, const char *key, void *val)
{
    (void)key;
    bf_ctx *c = ctx;
    mm_session *s = val;
    /* a silent instance's sessions wait: it may not be there to let the players in */
    if (s->bf_team < 0 || s->bf_slots <= 0 || s->inst->silent ||
        strcmp(s->queue, c->q->cfg.name) != 0)
        return 0;
    mm_session **v = eo__grow(c->s, &c->cap, c->n + 1, sizeof *v);
    if (v != NULL)
        c->s = v;
    eo_match_backfill *b = v ? eo__grow(c->b, &c->capb, c->n + 1, sizeof *b) : NULL;
    if (b == NULL)
        return c->err = EO_ENOMEM;
    c->b = b;
    c->s[c->n] = s;
    c->b[c->n++] =
        (eo_match_backfill){.key = (uint64_t)c->n,
                            .team = (uint8_t)s->bf_team,
                            .slots = s->bf_slots,
                            .rating = s->bf_rating,
                            .region = s->region[0] ? region_of(&c->q->cfg, s->region) : -1,
                            .created_at = s->bf_ms / 1000};
    return 0;
}

/* Seats the tickets of fill @p f in its session, which learns them at its next poll. */
static int apply_fill(eo__mm *mm, const eo_match_result *res, const eo_match_fill *f, mm_session *s,
                      int64_t now_ms)
{
    mm_queue *q = eo__mm_queue(mm, s->queue);
    for (size_t e = f->first; e < f->first + f->count; e++) {
        mm_ticket *t = q->wait[res->entries[e].ticket];
        mm_seat *v = eo__grow(s->seats, &s->capseats, s->nseats + t->n, sizeof *v);
        if (v == NULL)
            return EO_ENOMEM;
        s->seats = v;
        for (size_t j = 0; j < t->n; j++) {
            mm_seat *seat = &s->seats[s->nseats++];
            snprintf(seat->player, sizeof seat->player, "%s", t->players[j]);
            snprintf(seat->ticket, sizeof seat->ticket, "%s", t->id);
            seat->team = res->entries[e].team;
            eo__mm_random_hex(mm, seat->secret);
        }
    }
    s->bf_slots -= f->players;
    if (s->bf_slots <= 0)
        eo__mm_set_backfill(mm, s, -1);
    int rc = eo__mm_session_store(mm, s, "open", now_ms);
    for (size_t e = f->first; rc == 0 && e < f->first + f->count; e++)
        rc = eo__mm_ticket_assign(mm, q->wait[res->entries[e].ticket], s, now_ms);
    return rc;
}

/* Match @p x of @p res as a pending match of @p q (its tickets leave the waiting list). */
static int make_match(eo__mm *mm, mm_queue *q, const eo_match_result *res, const eo_match *x,
                      int64_t now_ms, mm_match **out)
{
    mm_match *m = calloc(1, sizeof *m);
    if (m == NULL || (m->tickets = calloc(x->count, sizeof *m->tickets)) == NULL ||
        (m->team = calloc(x->count, sizeof *m->team)) == NULL) {
        eo__mm_match_free(m);
        return EO_ENOMEM;
    }
    m->id[0] = 'm';
    eo__mm_random_hex(mm, m->id + 1);
    m->q = q;
    m->nt = x->count;
    for (size_t i = 0; i < x->count; i++) {
        const eo_match_entry *en = &res->entries[x->first + i];
        m->tickets[i] = q->wait[en->ticket];
        m->team[i] = en->team;
        m->nseats += m->tickets[i]->n;
    }
    if ((m->accepted = calloc(m->nseats, sizeof *m->accepted)) == NULL) {
        eo__mm_match_free(m);
        return EO_ENOMEM;
    }
    m->map = x->map;
    m->region = x->region;
    m->team_size = x->team_size;
    m->p_a = x->p_a;
    m->quality = x->quality;
    m->formed_ms = now_ms;
    if (q->cfg.ready_check_s > 0)
        m->deadline_ms = now_ms + q->cfg.ready_check_s * 1000;
    for (size_t i = 0; i < m->nt; i++) {
        eo__mm_wait_remove(q, m->tickets[i]);
        m->tickets[i]->state = MM_T_MATCHED;
        m->tickets[i]->match = m;
    }
    pending_append(q, m);
    q->st->n.matches[MM_MATCH_FORMED]++;
    *out = m;
    return 0;
}

/* The matcher's view of the waiting list (compacted first): tickets[i] is q->wait[i]. */
static int pass_input(eo__mm *mm, mm_queue *q, eo_match_ticket **out, eo_match_config *cfg)
{
    eo__mm_wait_compact(q);
    eo_match_ticket *t = calloc(q->nwait ? q->nwait : 1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < q->nwait; i++)
        t[i] = (eo_match_ticket){q->wait[i]->key, q->wait[i]->created_ms / 1000, q->wait[i]->mp,
                                 q->wait[i]->n};
    *cfg = q->cfg.match;
    cfg->seed = mm->next_key;
    const eo_pool *pool = eo_engine_pool(mm->e, q->cfg.pool);
    for (int i = 0; pool != NULL && i < cfg->nmaps; i++)
        (void)eo_pool_bias_field(pool, q->cfg.maps[i], (size_t)cfg->team_size,
                                 (size_t)cfg->team_size, NULL, &cfg->map_field[i]);
    *out = t;
    return 0;
}

/* Applies a pass's result: fills first, then the new matches (a ready check, or an instance
 * at once when one is free). */
static int apply_result(eo__mm *mm, mm_queue *q, const eo_match_result *res, bf_ctx *bf,
                        int64_t now_ms)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < res->nfills; i++)
        rc = apply_fill(mm, res, &res->fills[i], bf->s[res->fills[i].backfill], now_ms);
    for (size_t i = 0; rc == 0 && i < res->nmatches; i++) {
        mm_match *m = NULL;
        rc = make_match(mm, q, res, &res->matches[i], now_ms, &m);
        if (rc == 0 && m->deadline_ms == 0)
            rc = eo__mm_allocate(mm, m, now_ms);
        if (rc == 0) /* waiting (ready check or no instance free): the tickets say matched */
            for (size_t j = 0; rc == 0 && j < m->nt; j++)
                rc = eo__mm_ticket_store(mm, m->tickets[j], "matched", NULL, now_ms);
        rc = rc > 0 ? 0 : rc;
    }
    return rc;
}

static int run_pass(eo__mm *mm, mm_queue *q, int64_t now_ms)
{
    const eo_pool *pool = eo_engine_pool(mm->e, q->cfg.pool);
    eo_match_ticket *tickets = NULL;
    eo_match_config cfg;
    bf_ctx bf = {.q = q};
    int rc = pass_input(mm, q, &tickets, &cfg);
    if (rc == 0 && mm->backfills > 0)
        eo__smap_each(mm->sessions, collect_backfill, &bf);
    rc = rc ? rc : bf.err;
    const eo_match_result *res = NULL; /* mm->ws's until the next pass */
    eo_round_error err = {{0}, {0}};
    if (rc == 0 && pool != NULL && (q->nwait > 0 || bf.n > 0)) {
        int prc = eo_match_pass_ws(mm->ws, &cfg, eo_pool_model(pool), tickets, q->nwait, bf.b,
                                   bf.n, now_ms / 1000, &res, &err);
        if (prc == EO_ENOMEM) {
            rc = prc;
        } else if (prc != 0) {
            eo__logline l;
            eo__log_begin(&l, EO_LOG_ERROR, "matcher pass failed");
            eo__log_str(&l, "queue", q->cfg.name);
            eo__log_str(&l, "field", err.field);
            eo__log_str(&l, "error", err.message);
            eo__log_end(mm->lg, EO_LOG_ERROR, &l);
        }
    }
    if (res != NULL)
        rc = apply_result(mm, q, res, &bf, now_ms);
    free(tickets);
    free(bf.s);
    free(bf.b);
    return rc;
}

typedef struct free_ctx {
    const mm_queue *q;
    bool any;
} free_ctx;

static int any_free(void *ctx, const char *key, void *val)
{
    (void)key;
    free_ctx *c = ctx;
    const mm_instance *in = val;
    c->any |= in->state == MM_I_LIVE && in->open < in->reg.capacity && serves(in, c->q->cfg.name);
    return c->any;
}

/* Matches that wait for an instance (ready check done), oldest first, while instances are free. */
static int allocate_waiting(eo__mm *mm, mm_queue *q, int64_t now_ms)
{
    free_ctx f = {q, false};
    if (q->pending != NULL)
        eo__smap_each(mm->instances, any_free, &f);
    if (!f.any)
        return 0;
    int rc = 0;
    for (mm_match *m = q->pending, *next; rc == 0 && m != NULL; m = next) {
        next = m->next;
        if (m->deadline_ms == 0) {
            int r = eo__mm_allocate(mm, m, now_ms);
            rc = r < 0 ? r : 0;
        }
    }
    return rc;
}

/* ---- instances and pruning ----------------------------------------------------------------- */

typedef struct watch_ctx {
    eo__mm *mm;
    int64_t now_ms;
    mm_instance *due[64]; /* a tick's share; the others are found at the next */
    size_t n;
    mm_session **ended; /* every open session of a lost instance */
    size_t ns, capns;
} watch_ctx;

/* Instances whose silence changes their state: past the heartbeat timeout (drained), and past
 * the grace after it (lost). */
static int find_silent(void *ctx, const char *key, void *val)
{
    (void)key;
    watch_ctx *c = ctx;
    mm_instance *in = val;
    int64_t quiet = c->now_ms - in->seen_ms, timeout = c->mm->cfg.heartbeat_ms;
    if (in->state != MM_I_LOST && quiet > timeout &&
        (!in->silent || quiet > timeout + c->mm->cfg.grace_ms) &&
        c->n < sizeof c->due / sizeof c->due[0])
        c->due[c->n++] = in;
    return 0;
}

static int find_sessions(void *ctx, const char *key, void *val)
{
    (void)key;
    watch_ctx *c = ctx;
    mm_session *s = val;
    if (s->inst->state != MM_I_LOST)
        return 0;
    mm_session **v = eo__grow(c->ended, &c->capns, c->ns + 1, sizeof *v);
    if (v == NULL)
        return EO_ENOMEM;
    c->ended = v;
    c->ended[c->ns++] = s;
    return 0;
}

/* Instance @p in fell silent (drained: its sessions go on, nothing new comes) or stayed silent
 * through the grace (lost). */
static int fall_silent(eo__mm *mm, mm_instance *in, int64_t now_ms)
{
    bool lost = now_ms - in->seen_ms > mm->cfg.heartbeat_ms + mm->cfg.grace_ms;
    in->silent = true;
    in->state = lost ? MM_I_LOST : MM_I_DRAINING;
    if (lost)
        in->open = 0;
    eo__logline l;
    eo__log_begin(&l, EO_LOG_WARN, lost ? "instance lost" : "instance silent: draining");
    eo__log_str(&l, "instance", in->reg.id);
    eo__log_end(mm->lg, EO_LOG_WARN, &l);
    return eo__mm_instance_store(mm, in, now_ms);
}

/* Instances silent past the heartbeat timeout are drained; past the grace too, they are lost,
 * and their open sessions with them (their tickets stay assigned: the players were told where
 * to go). */
static int heartbeats(eo__mm *mm, int64_t now_ms)
{
    watch_ctx c = {.mm = mm, .now_ms = now_ms};
    eo__smap_each(mm->instances, find_silent, &c);
    int rc = 0;
    bool any_lost = false;
    mm->instances_changed |= c.n > 0;
    for (size_t i = 0; rc == 0 && i < c.n; i++) {
        rc = fall_silent(mm, c.due[i], now_ms);
        any_lost |= c.due[i]->state == MM_I_LOST;
    }
    if (rc == 0 && any_lost)
        rc = eo__smap_each(mm->sessions, find_sessions, &c);
    for (size_t i = 0; rc == 0 && i < c.ns; i++) {
        eo__mm_set_backfill(mm, c.ended[i], -1);
        rc = eo__mm_session_store(mm, c.ended[i], "lost", now_ms);
        eo__smap_del(mm->sessions, c.ended[i]->id);
        eo__mm_session_free(c.ended[i]);
    }
    free(c.ended);
    return rc;
}

/* How often finished objects older than keep_ms are deleted. */
#define PRUNE_EVERY_MS 60000

int eo__mm_tick(eo__mm *mm, int64_t now_ms)
{
    int rc = heartbeats(mm, now_ms);
    for (size_t i = 0; rc == 0 && i < mm->nqueues; i++) {
        mm_queue *q = mm->queues[i];
        if (q->deleted || q->next_ms > now_ms)
            continue;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = expire(mm, q, now_ms);
        if (rc == 0)
            rc = ready_timeouts(mm, q, now_ms);
        if (rc == 0)
            rc = run_pass(mm, q, now_ms);
        if (rc == 0)
            rc = allocate_waiting(mm, q, now_ms);
        q->next_ms = now_ms + q->cfg.interval_ms;
        clock_gettime(CLOCK_MONOTONIC, &t1);
        eo__hist_add(&q->st->pass,
                     (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    }
    if (rc == 0 && now_ms >= mm->next_prune_ms) {
        rc = eo_store_mm_prune(mm->st, now_ms - mm->cfg.keep_ms, NULL);
        mm->next_prune_ms = now_ms + PRUNE_EVERY_MS;
    }
    return rc;
}
