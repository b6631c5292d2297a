/* The read indexes (docs/STORE.md "Read indexes"): what one rated round adds beside the log (its
 * number, P(A), outcome and members' results, each linked to the player's round before; the
 * pool's health sums of its day; its members' names). Written with every new round, and at
 * open for the rounds logged before the indexes existed, from the fold that rates them. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/strmap.h"
#include "engine/engine_internal.h"
#include "engine/seed.h"

#define SECONDS_PER_DAY 86400

/* When a round was played: its end, else its start, else when it was logged. */
static int64_t played_at(const eo_round *r, int64_t logged)
{
    return r->ended_at != 0 ? r->ended_at : r->started_at != 0 ? r->started_at : logged;
}

/* The number the next round of the pool gets. */
static int next_number(eo_engine *e, int64_t pool_id, int64_t *n)
{
    eo_round_ix last;
    int rc = eo_store_round_ix_last(e->store, pool_id, &last);
    *n = rc == 0 ? last.n + 1 : 1;
    return rc == EO_ENOTFOUND ? 0 : rc;
}

/* Round @p r's index entry and its members' results (prev left for the caller), and the
 * health sums it adds. */
static void describe(const eo_round *r, double p_a, const eo_member_result *m, int64_t n,
                     int64_t seq, int64_t logged, eo_round_ix *ix, eo_member_ix *mx,
                     const char **ids, eo_eval_sums *sums)
{
    *ix = (eo_round_ix){.n = n,
                        .seq = seq,
                        .round_id = r->id,
                        .at = played_at(r, logged),
                        .started_at = r->started_at,
                        .ended_at = r->ended_at,
                        .map = r->map,
                        .mode = r->mode,
                        .server = r->server,
                        .p_a = p_a,
                        .winner = r->winner};
    memset(sums, 0, sizeof *sums);
    (void)eo_eval_sums_round(sums, p_a, r->winner); /* a rated round's P(A) is in [0, 1] */
    size_t i = 0;
    for (int t = 0; t < 2; t++) {
        for (size_t j = 0; j < r->n[t]; j++, i++) {
            mx[i] = (eo_member_ix){.n = n,
                                   .at = ix->at,
                                   .team = t,
                                   .pos = (int)j,
                                   .rating = m[i].rating,
                                   .delta = m[i].delta,
                                   .mu = m[i].mu,
                                   .sigma = m[i].sigma,
                                   .rounds = m[i].rounds,
                                   .visible = m[i].visible,
                                   .weight = eo_round_member_weight(r, &r->team[t][j])};
            ids[i] = m[i].id;
            eo_eval_sums_member(sums, m[i].rating, m[i].delta);
        }
    }
}

static int put_entries(eo_engine *e, int64_t pool_id, const eo_round_ix *ix, const eo_member_ix *mx,
                       const char *const *ids, size_t count, const eo_eval_sums *sums)
{
    int rc = eo_store_round_ix_put(e->store, pool_id, ix, ids, mx, count);
    if (rc == 0)
        rc = eo_store_health_add(e->store, pool_id, ix->at / SECONDS_PER_DAY,
                                 eo_eval_bin_index(ix->p_a), sums);
    return rc;
}

int eo__engine_index_round(eo_engine *e, const eo__stored_pool *p, const eo_round *r, double p_a,
                           const eo_member_result *m, int64_t seq, int64_t now)
{
    eo_member_ix *mx = e->ix_members;
    const char **ids = e->ix_ids;
    eo_round_ix ix;
    eo_eval_sums sums;
    int64_t n;
    int rc = next_number(e, p->id, &n);
    if (rc)
        return rc;
    describe(r, p_a, m, n, seq, now, &ix, mx, ids, &sums);
    size_t i = 0;
    for (int t = 0; t < 2; t++)
        for (size_t j = 0; j < r->n[t] && rc == 0; j++, i++)
            rc = eo__engine_put_played(e, p, m[i].id, now, r->team[t][j].name, n, &mx[i].prev);
    return rc == 0 ? put_entries(e, p->id, &ix, mx, ids, i, &sums) : rc;
}

/* ---- rounds logged before the indexes, indexed at open ----------------------------------- */

/* A folded round waiting to be indexed: its P(A) and members' results (whose ids point into
 * it). */
typedef struct pending {
    eo_round r;
    double p_a;
    eo_member_result *m;
    int64_t seq, logged;
} pending;

/* What the backlog's player rows must say once indexed: their last round, the one before and
 * the last name seen (owned); known: read from the row or set by an indexed entry. */
typedef struct link {
    int64_t last, prev;
    char *name;
    bool known;
} link;

struct eo__ix_backlog {
    pending *v;
    size_t n, cap;
    eo__strmap *ids; /* players seen, indexing links */
    link *links;
    size_t links_cap;
};

int eo__ix_backlog_round(eo__ix_backlog **b, eo_round *r, double p_a, const eo_member_result *m,
                         int64_t seq, int64_t logged)
{
    if (*b == NULL && (*b = calloc(1, sizeof **b)) == NULL)
        return EO_ENOMEM;
    eo__ix_backlog *q = *b;
    pending *v = eo__grow(q->v, &q->cap, q->n + 1, sizeof *v);
    size_t k = r->n[0] + r->n[1];
    eo_member_result *copy = v != NULL ? malloc(k * sizeof *copy) : NULL;
    if (v != NULL)
        q->v = v;
    if (copy == NULL)
        return EO_ENOMEM;
    memcpy(copy, m, k * sizeof *copy);
    pending *p = &q->v[q->n++];
    p->r = *r; /* the round moves here: its ids stay where the results point */
    memset(r, 0, sizeof *r);
    p->p_a = p_a;
    p->m = copy;
    p->seq = seq;
    p->logged = logged;
    return 0;
}

size_t eo__ix_backlog_size(const eo__ix_backlog *b)
{
    return b != NULL ? b->n : 0;
}

/* The link of player @p id, its chain read from his row when first seen. NULL: out of memory
 * or a store error (*rc). */
static link *link_of(eo_engine *e, int64_t pool_id, eo__ix_backlog *b, const char *id, int *rc)
{
    size_t len = strlen(id);
    if (b->ids == NULL) /* ids come from clients: a secret seed, as a pool's own map has */
        b->ids = eo__strmap_create(eo__seed_fresh(b));
    uint64_t h = b->ids != NULL ? eo__strmap_hash(b->ids, id, len) : 0;
    int64_t i = b->ids != NULL ? eo__strmap_find(b->ids, id, len, h) : -1;
    if (b->ids != NULL && i < 0 && (i = eo__strmap_insert(b->ids, id, len, h)) >= 0) {
        link *v = eo__grow(b->links, &b->links_cap, (size_t)i + 1, sizeof *v);
        if (v != NULL)
            memset(&v[i], 0, sizeof v[i]);
        else
            i = -1;
        b->links = v != NULL ? v : b->links;
    }
    if (i < 0) {
        *rc = EO_ENOMEM;
        return NULL;
    }
    link *l = &b->links[i];
    if (!l->known) {
        int r = eo_store_player_last(e->store, pool_id, id, &l->last);
        if (r != 0 && r != EO_ENOTFOUND) {
            *rc = r;
            return NULL;
        }
        l->known = true;
    }
    return l;
}

/* Indexes one backlog entry, the players' links followed in memory. */
static int flush_one(eo_engine *e, int64_t pool_id, eo__ix_backlog *b, pending *p, int64_t n)
{
    eo_member_ix *mx = e->ix_members;
    const char **ids = e->ix_ids;
    int rc = 0;
    eo_round_ix ix;
    eo_eval_sums sums;
    describe(&p->r, p->p_a, p->m, n, p->seq, p->logged, &ix, mx, ids, &sums);
    size_t i = 0;
    for (int t = 0; t < 2 && rc == 0; t++) {
        for (size_t j = 0; j < p->r.n[t] && rc == 0; j++, i++) {
            link *l = link_of(e, pool_id, b, ids[i], &rc);
            const char *name = p->r.team[t][j].name;
            if (l == NULL)
                break;
            mx[i].prev = l->prev = l->last;
            l->last = n;
            if (name != NULL) {
                size_t len = strlen(name);
                free(l->name);
                if ((l->name = malloc(len + 1)) == NULL)
                    return EO_ENOMEM;
                memcpy(l->name, name, len + 1);
            }
        }
    }
    return rc == 0 ? put_entries(e, pool_id, &ix, mx, ids, i, &sums) : rc;
}

/* Writes every link the backlog changed into the players' rows, and forgets them. */
static int write_links(eo_engine *e, int64_t pool_id, eo__ix_backlog *b)
{
    int rc = 0;
    size_t n = b->ids != NULL ? eo__strmap_size(b->ids) : 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = eo_store_player_link(e->store, pool_id, eo__strmap_key(b->ids, (uint32_t)i),
                                  b->links[i].name, b->links[i].last, b->links[i].prev);
    for (size_t i = 0; i < n; i++)
        free(b->links[i].name);
    eo__strmap_destroy(b->ids);
    b->ids = NULL;
    return rc;
}

/* Forgets the entries the backlog holds (kept for reuse). */
static void backlog_clear(eo__ix_backlog *b)
{
    for (size_t i = 0; i < b->n; i++) {
        eo_round_free(&b->v[i].r);
        free(b->v[i].m);
    }
    b->n = 0;
}

int eo__ix_backlog_flush(eo_engine *e, int64_t pool_id, eo__ix_backlog *b)
{
    if (b == NULL || b->n == 0)
        return 0;
    int64_t n;
    int rc = eo_store_begin(e->store);
    if (rc == 0)
        rc = next_number(e, pool_id, &n);
    for (size_t i = 0; i < b->n && rc == 0; i++)
        rc = flush_one(e, pool_id, b, &b->v[i], n++);
    int lrc = write_links(e, pool_id, b);
    rc = rc != 0 ? rc : lrc;
    if (rc == 0)
        rc = eo_store_commit(e->store);
    else
        eo_store_rollback(e->store);
    backlog_clear(b);
    return rc;
}

void eo__ix_backlog_free(eo__ix_backlog *b)
{
    if (b == NULL)
        return;
    backlog_clear(b);
    free(b->v);
    free(b->links);
    free(b);
}
