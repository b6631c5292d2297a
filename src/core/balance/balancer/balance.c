/* The balancer (eo_balance.h): validation, items and statuses, the rules as exact questions,
 * the fallback, the result block. docs/BALANCER.md ("The balancer: constraints and secondary
 * objectives") states the rules and why they are exact.
 *
 * eo__balance_solve() goes step by step: 1. read_request (defaults, checks, the team sizes);
 * 2. load_players (normalised ratings, parties, orders); 3. apply_request (mode, field, the
 * objective terms that count); 4. build_items (unsplittable parties and their pins); then
 * solve_sizes: 5. plain_answers, once (a plain request is the splitter's), and 6. solve_size
 * for each k (pins_fit, then answer_k: solve_k below, or local search past the work limit).
 *
 * solve_k() answers one k by the rules as exact questions:
 *   1. g = the least |D| under the hard constraints (search, the gap term alone);
 *   2. C* = the least objective vector over the splits with |D| <= T = max(g, epsilon);
 *   3. who plays: players in priority order, each plays if a split with vector C* still exists
 *      with the decisions so far, else sits out; team A: players in request order, each on A if
 *      a split with vector C* still exists so, else on B.
 * A witness from the last "yes" answers every question it already agrees with. A plain request
 * (no constraint, no secondary term; any epsilon, any field) is the splitter's problem and goes
 * to eo__split_solve_field(), whose rules these reduce to. */
#include "evenodds/eo_balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"
#include "core/balance/split/split_internal.h" /* eo__split_solve_field() */

#define RATING_MAX (INT64_C(1) << 40)
#define FIELD_MAX (INT64_C(1) << 46)
#define DEV_INF (INT64_C(1) << 60)
#define SPREAD_BITS 20 /* qs < 2^SPREAD_BITS keeps the spread term within int64 */
#define SPREAD_EPS_MAX (INT64_C(1) << (SPREAD_BITS + 1))
#define RESTARTS_DEFAULT 4
#define TAIL_ITEMS 24 /* the least the search's tail takes (at most TAIL_ITEMS_MAX) */

static int side_ok(uint8_t s) { return s <= EO_BALANCE_B; }

/* Fills the result entry of one k from an assignment: proven (bound NULL: the bound is the
 * answer's terms) or not (exact 0, with what was proven). */
static void fill(eo_balance_split *s, const eo__bal *b, const eo_balance_player *pl,
                 const uint8_t *side, uint16_t *idx, eo_balance_move *mv,
                 const eo_balance_terms *bound)
{
    int n = b->n, k = b->k;
    uint16_t *a = idx, *bb = idx + k, *z = idx + 2 * k;
    size_t na = 0, nb = 0, nz = 0, nm = 0;
    s->sum_a = s->sum_b = 0;
    double ma = 0, mb = 0;
    for (int i = 0; i < n; i++) {
        if (side[i] == EO__SIDE_A) {
            a[na++] = (uint16_t)i;
            s->sum_a += pl[i].rating;
            ma += (double)b->q[i];
        } else if (side[i] == EO__SIDE_B) {
            bb[nb++] = (uint16_t)i;
            s->sum_b += pl[i].rating;
            mb += (double)b->q[i];
        } else {
            z[nz++] = (uint16_t)i;
        }
        if (pl[i].team != EO_BALANCE_NONE && pl[i].team != side[i]) {
            mv[nm].player = (uint16_t)i;
            mv[nm].from = pl[i].team;
            mv[nm].to = side[i];
            nm++;
        }
    }
    ma /= k;
    mb /= k;
    double va = 0, vb = 0;
    for (int i = 0; i < n; i++) {
        double x = (double)b->q[i];
        if (side[i] == EO__SIDE_A)
            va += (x - ma) * (x - ma);
        else if (side[i] == EO__SIDE_B)
            vb += (x - mb) * (x - mb);
    }
    eo__bal_vec v;
    eo__bal_eval(b, side, v);
    s->a = a;
    s->b = bb;
    s->bench = z;
    s->nbench = nz;
    s->gap = eo__abs64(s->sum_a - s->sum_b);
    s->dev = v[EO__BT_DEV];
    s->p_a = NAN; /* the model's P(A) is the caller's (eo_balance.h) */
    s->moves = mv;
    s->nmoves = nm;
    s->terms.broken = v[EO__BT_BROKEN];
    s->terms.moves = v[EO__BT_MOVES];
    s->terms.top2 = v[EO__BT_TOP2];
    s->terms.spread = fabs(va / k - vb / k);
    s->terms.spread_sd = fabs(sqrt(va / k) - sqrt(vb / k));
    s->terms.denied = v[EO__BT_DENIED];
    s->terms.bench_again = v[EO__BT_BENCH];
    s->terms.dev = v[EO__BT_DEV];
    s->bound = bound ? *bound : s->terms;
    s->exact = bound == NULL;
}

/* Every item's status from the pins alone (base[t]: the side item t is pinned to, or none). */
static void base_statuses(eo__bal *b, const uint8_t *base)
{
    for (int t = 0; t < b->m; t++)
        b->ist[t] = base[t] == EO_BALANCE_A   ? EO__BS_A
                    : base[t] == EO_BALANCE_B ? EO__BS_B
                                              : EO__BS_FREE;
}

/* A team-A question's search past this much work (nodes and list entries; a quarter of the
 * service's default budget) pauses for the later witness windows, once (decide()): nearly
 * every search ends before (a "no" proven, or a witness found), and one that hunts a rare
 * "yes" may be spared by a window. */
#define MIDWAY_WORK 1000000

/* The later witness windows of the team-A question on item t (b->midway): from moved (the
 * witness with t moved to A) into found, 1 when they give a split of vector cstar. */
typedef struct midway {
    int t;
    const int64_t *cstar;
    const uint8_t *moved;
    uint8_t found[EO__BAL_N];
} midway;

static int rest_windows(eo__bal *b, void *ctx)
{
    midway *m = ctx;
    memcpy(m->found, m->moved, (size_t)b->n);
    return eo__bal_repair(b, m->t, m->cstar, m->found,
                          b->late_windows ? REPAIR_ALL : REPAIR_REST);
}

/* One question of step 3: item t takes status yes when a split with vector C* (within T)
 * still exists so, else no. `kept`: the witness side[] already agrees with yes; otherwise a
 * witness from the lists (team A: eo__bal_repair()'s first windows, then its others midway
 * through the search) or the search's split, when there is one, becomes the witness. Returns
 * 0 or an error. */
static int decide(eo__bal *b, int t, int yes, int no, int kept, int64_t T,
                  const eo__bal_vec cstar, uint8_t *side)
{
    b->ist[t] = (uint8_t)yes;
    if (kept)
        return 0;
    uint8_t alt[EO__BAL_N], moved[EO__BAL_N];
    midway mid = {t, cstar, moved, {0}};
    int rc = 0;
    if (yes == EO__BS_A) {
        memcpy(moved, side, (size_t)b->n);
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            moved[b->mem[u]] = EO__SIDE_A;
        memcpy(alt, moved, (size_t)b->n);
        if (!b->late_windows && (rc = eo__bal_repair(b, t, cstar, alt, REPAIR_FIRST)) != 0) {
            if (rc == 1)
                memcpy(side, alt, (size_t)b->n);
            return rc < 0 ? rc : 0;
        }
        b->midway = rest_windows; /* at b->mid_work */
        b->mid_ctx = &mid;
    }
    eo__bal_vec v;
    memcpy(v, cstar, sizeof v);
    rc = eo__bal_search(b, T, 1, v, alt);
    b->midway = NULL;
    if (rc == 1 || rc == 2)
        memcpy(side, rc == 1 ? alt : mid.found, (size_t)b->n);
    else if (rc == 0)
        b->ist[t] = (uint8_t)no;
    return rc < 0 ? rc : 0;
}

/* How far solve_k() got, for the answer past the work limit: step 1 proves g (stage 1), step 2
 * proves C* (stage 2); have_side says side[] holds a split keeping the base statuses. */
typedef struct progress {
    int stage;
    int64_t g;
    eo__bal_vec cstar;
    int have_side;
} progress;

/* Step 2's least vector C* within T (stage 2 of *pg), seeded with the better of step 1's split
 * (in side[]) and one local-search descent from the current teams (when within T); or, for a
 * full scramble, the meet in the middle's whole answer (returns 2: side[] is final). Returns 1,
 * 2, EO_ELIMIT or an error. */
static int least_vector(eo__bal *b, int64_t T, uint8_t *side, progress *pg)
{
    int rc = eo__bal_mitm(b, T, pg->cstar, side);
    if (rc != 2)
        return rc == 0 ? EO_EINTERNAL : rc == 1 ? 2 : rc; /* step 1 found a split within T */
    if ((rc = eo__bal_least_moves(b, T, pg->cstar, side)) != 2)
        return rc == 0 ? EO_EINTERNAL : rc;
    eo__bal_eval(b, side, pg->cstar);
    eo__bal_vec lv;
    uint8_t ls[EO__BAL_N];
    rc = eo__bal_local(b, T, 1, 0, ls, lv);
    if (rc < 0)
        return rc;
    if (rc == 1 && lv[EO__BT_DEV] <= T && eo__bal_cmp(b, lv, pg->cstar) < 0) {
        memcpy(pg->cstar, lv, sizeof lv);
        memcpy(side, ls, (size_t)b->n);
    }
    /* a full scramble: the lists may carry the seed to the search's root bound (which the
     * search then proves at its first node) */
    eo__bal_vec R;
    int64_t vd;
    double sd;
    if ((rc = eo__bal_root_bound(b, T, R, &vd, &sd)) < 0)
        return rc;
    R[EO__BT_DEV] = R[EO__BT_DEV] > pg->g ? R[EO__BT_DEV] : pg->g;
    memcpy(ls, side, (size_t)b->n);
    int moved = -1, b1 = b->best[0], b2 = b->best[1], t2 = b->item_of[b2];
    if (pg->cstar[EO__BT_TOP2] > R[EO__BT_TOP2] && b->item_of[b1] != t2 &&
        b->ist[t2] == EO__BS_FREE) { /* the second best away from the best first */
        moved = t2;
        for (int u = b->istart[t2]; u < b->istart[t2 + 1]; u++)
            ls[b->mem[u]] = ls[b1] == EO__SIDE_A ? EO__SIDE_B : EO__SIDE_A;
    }
    if (rc == 1 && b->mode == EO_BALANCE_SCRAMBLE && eo__bal_cmp(b, pg->cstar, R) > 0 &&
        (rc = eo__bal_repair(b, moved, R, ls, REPAIR_ALL)) != 0) {
        if (rc < 0)
            return rc;
        eo__bal_eval(b, ls, pg->cstar);
        memcpy(side, ls, (size_t)b->n);
    }
    rc = eo__bal_search(b, T, 2, pg->cstar, side);
    if (rc <= 0)
        return rc < 0 ? rc : EO_EINTERNAL; /* step 1 found a split within T */
    return 1;
}

/* Questions 1-3 of the file comment (solve_k's list) for b->k with the base statuses in
 * b->ist. Returns 1 with side[] the answer, 0 when no split exists, EO_ELIMIT past the work
 * limit (*pg then says what was proven, and whether side[] holds a split), or an error. */
static int solve_k(eo__bal *b, int64_t eps, uint8_t *side, progress *pg)
{
    memset(pg, 0, sizeof *pg);
    int saved[EO__BT_N];
    memcpy(saved, b->active, sizeof saved);
    memset(b->active, 0, sizeof b->active);
    b->active[EO__BT_DEV] = 1;
    eo__bal_vec g;
    int rc = eo__bal_search(b, DEV_INF, 0, g, side);
    memcpy(b->active, saved, sizeof saved);
    pg->have_side = b->found;
    if (rc <= 0)
        return rc;
    pg->stage = pg->have_side = 1;
    pg->g = g[EO__BT_DEV];
    int64_t T = pg->g > eps ? pg->g : eps;
    rc = least_vector(b, T, side, pg);
    if (rc < 0 || rc == 2)
        return rc < 0 ? rc : 1;
    pg->stage = 2;
    for (int x = 0; x < b->n; x++) { /* who plays, by priority */
        int p = b->prio[x], t = b->item_of[p];
        if (b->ist[t] == EO__BS_FREE &&
            (rc = decide(b, t, EO__BS_PLAY, EO__BS_BENCH, side[p] != EO__SIDE_BENCH, T, pg->cstar,
                         side)) < 0)
            return rc;
    }
    for (int p = 0; p < b->n; p++) { /* team A, in request order */
        int t = b->item_of[p];
        if (b->ist[t] != EO__BS_PLAY)
            continue;
        if ((rc = eo__bal_finish(b, T, pg->cstar, side)) != 2) {
            if (rc < 0)
                return rc;
            break;
        }
        if ((rc = decide(b, t, EO__BS_A, EO__BS_B, side[p] == EO__SIDE_A, T, pg->cstar, side)) < 0)
            return rc;
    }
    eo__bal_vec v;
    eo__bal_eval(b, side, v);
    if (eo__bal_cmp(b, v, pg->cstar) != 0)
        return EO_EINTERNAL; /* every kept witness reaches C* */
    return 1;
}

/* The plain request: the splitter's rules exactly, with the field as its offset. Every term
 * but |D| is 0 for every split, so C* is (0, ..., g) whatever epsilon is. */
static int is_plain(const eo_balance_player *pl, size_t n, const eo_balance_request *req)
{
    if (n > EO_SPLIT_EXACT_MAX || req->mode != EO_BALANCE_REBALANCE)
        return 0;
    for (size_t i = 0; i < n; i++) {
        if (pl[i].team || pl[i].lock || pl[i].prefer || pl[i].sat_out ||
            pl[i].priority != pl[0].priority)
            return 0;
        for (size_t j = 0; j < i && pl[i].party; j++)
            if (pl[j].party == pl[i].party)
                return 0;
    }
    return 1;
}

int eo_balance_player_pin(const eo_balance_player *p, int allow_protected)
{
    int s = p->lock;
    if (p->protect && !allow_protected && p->team != EO_BALANCE_NONE) {
        if (s && s != p->team)
            return -1;
        s = p->team;
    }
    return s;
}

/* ---- eo__balance_solve(), step by step --------------------------------------------------- */

/* Step 1. *req: the request with its defaults (reqp may be NULL); *kmin and *count: the team
 * sizes it asks for (count 0 when an empty range was asked by leaving both bounds 0). Returns
 * 0, or EO_EINVAL for a request or a player out of range (eo_balance_solve()'s contract). */
static int read_request(const eo_balance_player *pl, size_t n, const eo_balance_request *reqp,
                        eo_balance_request *req, int *kmin, size_t *count)
{
    if (reqp)
        *req = *reqp;
    else
        memset(req, 0, sizeof *req);
    if ((req->mode != EO_BALANCE_REBALANCE && req->mode != EO_BALANCE_SCRAMBLE) ||
        req->epsilon < 0 || req->field > FIELD_MAX || req->field < -FIELD_MAX ||
        req->spread_epsilon < 0 || req->spread_epsilon > RATING_MAX || req->restarts < 0)
        return EO_EINVAL;
    int lo = req->k_min ? req->k_min : 2, hi = req->k_max ? req->k_max : (int)n / 2;
    if (req->k_min < 0 || req->k_max < 0 || lo < 2 || hi > (int)n / 2 ||
        (lo > hi && (req->k_min || req->k_max)))
        return EO_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (pl[i].rating > RATING_MAX || pl[i].rating < -RATING_MAX || !side_ok(pl[i].team) ||
            !side_ok(pl[i].lock) || !side_ok(pl[i].prefer) || pl[i].protect > 1 ||
            pl[i].sat_out > 1)
            return EO_EINVAL;
    *kmin = lo;
    *count = hi >= lo ? (size_t)(hi - lo + 1) : 0;
    return 0;
}

/* Step 2. The n checked players as the searches see them: ratings shifted to the least (q),
 * the spread term's scale (qs < 2^SPREAD_BITS), sides, preference weights, dense party
 * indices, and the players by rating and by priority (both descending, ties by index). */
static void load_players(eo__bal *b, const eo_balance_player *pl, size_t n)
{
    int64_t lo = pl[0].rating, qmax = 0;
    for (size_t i = 1; i < n; i++)
        lo = pl[i].rating < lo ? pl[i].rating : lo;
    for (size_t i = 0; i < n; i++) {
        b->q[i] = pl[i].rating - lo;
        qmax = b->q[i] > qmax ? b->q[i] : qmax;
    }
    int sh = 0;
    while ((qmax >> sh) >= (INT64_C(1) << SPREAD_BITS))
        sh++;
    int64_t priority[EO__BAL_N];
    b->n = (int)n;
    b->spread_shift = sh;
    b->wmin = 0;
    b->npart = 0;
    for (int i = 0; i < (int)n; i++) {
        b->qs[i] = b->q[i] >> sh;
        b->team[i] = pl[i].team;
        b->prefer[i] = pl[i].prefer;
        b->sat_out[i] = pl[i].sat_out;
        b->w[i] = pl[i].prefer ? (pl[i].weight ? pl[i].weight : 1) : 0;
        if (pl[i].prefer && (b->wmin == 0 || b->w[i] < b->wmin))
            b->wmin = b->w[i];
        b->party[i] = -1;
        if (pl[i].party) {
            for (int j = 0; j < i; j++)
                if (pl[j].party == pl[i].party) {
                    b->party[i] = b->party[j];
                    break;
                }
            if (b->party[i] < 0)
                b->party[i] = b->npart++;
        }
        /* q keeps the ratings' order */
        priority[i] = pl[i].priority;
        eo__insert_by_key_desc(b->best, i, i, b->q);
        eo__insert_by_key_desc(b->prio, i, i, priority);
    }
}

/* Step 3. The request's part of b: its mode, field and work limit, which objective terms count
 * (docs/BALANCER.md, "The balancer: constraints and secondary objectives"), and the test
 * switches of opts. */
static void apply_request(eo__bal *b, const eo_balance_request *req, const eo__balance_opts *opts)
{
    b->mode = req->mode;
    b->allow_split = req->allow_party_split != 0;
    b->field = req->field;
    /* an sd difference above the spread scale's range is reached by every split */
    int64_t se = req->spread_epsilon >> b->spread_shift;
    b->spread_eps = se < SPREAD_EPS_MAX ? se : SPREAD_EPS_MAX;
    b->work_limit = req->work_limit;
    b->no_mitm = opts->no_mitm;
    b->tail_items = opts->tail_items == 0               ? TAIL_ITEMS
                    : opts->tail_items < 0              ? 0
                    : opts->tail_items < TAIL_ITEMS_MAX ? opts->tail_items
                                                        : TAIL_ITEMS_MAX;
    b->dp_try = opts->table_early ? 1 : 0;
    b->mid_work = opts->midway_work ? opts->midway_work : MIDWAY_WORK;
    b->late_windows = opts->late_windows;
    b->active[EO__BT_DEV] = 1;
    b->active[EO__BT_BROKEN] = b->allow_split;
    b->active[EO__BT_MOVES] = req->mode == EO_BALANCE_REBALANCE;
    b->active[EO__BT_TOP2] = b->active[EO__BT_SPREAD] = req->mode == EO_BALANCE_SCRAMBLE;
    b->active[EO__BT_DENIED] = b->active[EO__BT_BENCH] = 1;
}

/* Step 4. The items the searches place whole (a party that may not be split, or one player)
 * into b->m, item_of, istart and mem; base[t] is the side item t is pinned to by locks and,
 * unless allow_protected, protection (0: none). Needs steps 2 and 3. Returns 0, or
 * EO_EINVAL when a player or an item is pinned to both sides (*bad_party, when not NULL, is
 * then the item's party id). */
static int build_items(eo__bal *b, const eo_balance_player *pl, int allow_protected,
                       uint8_t *base, uint32_t *bad_party)
{
    int n = b->n, nm = 0, rc = 0;
    b->m = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        int t = -1;
        if (!b->allow_split && b->party[i] >= 0)
            for (int j = 0; j < i; j++)
                if (b->party[j] == b->party[i]) {
                    t = b->item_of[j];
                    break;
                }
        if (t >= 0)
            continue; /* a member of an item already built */
        t = b->m++;
        b->istart[t] = nm;
        int pin = 0;
        for (int j = i; j < n; j++) {
            if (j != i && (b->allow_split || b->party[i] < 0 || b->party[j] != b->party[i]))
                continue;
            b->item_of[j] = t;
            b->mem[nm++] = j;
            int s = eo_balance_player_pin(&pl[j], allow_protected);
            if (s < 0 || (s && pin && s != pin)) {
                if (bad_party)
                    *bad_party = pl[i].party;
                rc = EO_EINVAL;
            }
            if (s > 0)
                pin = s;
        }
        base[t] = (uint8_t)pin;
    }
    b->istart[b->m] = nm;
    return rc;
}

/* The result block of `count` team sizes for n players, zeroed: the header, the entries, then
 * per entry n moves (*mvs) and n indices (*idx: team A, team B, bench). NULL when out of
 * memory. One allocation, released by eo_balance_free(). */
static eo_balance_result *result_new(size_t count, size_t n, eo_balance_move **mvs,
                                     uint16_t **idx)
{
    size_t bytes = sizeof(eo_balance_result) + count * sizeof(eo_balance_split) +
                   count * n * sizeof(eo_balance_move) + count * n * sizeof(uint16_t);
    eo_balance_result *res = calloc(1, bytes);
    if (!res)
        return NULL;
    res->count = count;
    res->split = count ? (eo_balance_split *)(res + 1) : NULL;
    *mvs = (eo_balance_move *)((eo_balance_split *)(res + 1) + count);
    *idx = (uint16_t *)(*mvs + count * n);
    return res;
}

/* Step 5. The splitter's answers for a plain request, k = kmin .. kmin + count - 1 (its rules
 * are the balancer's there: docs/BALANCER.md, "The balancer: constraints and secondary
 * objectives"); NULL when the request is not plain, or when the splitter stopped (past the
 * work limit, or out of memory): the general path then answers. Released with
 * eo_splits_free(). */
static eo_splits *plain_answers(const eo_balance_player *pl, size_t n,
                                const eo_balance_request *req, int kmin, size_t count)
{
    if (!is_plain(pl, n, req))
        return NULL;
    eo_split_player sp[EO_SPLIT_EXACT_MAX];
    for (size_t i = 0; i < n; i++)
        sp[i].rating = pl[i].rating;
    eo_split_options so = {.bench = EO_BENCH_SOLVER, .work_limit = req->work_limit};
    eo_splits *plain = NULL;
    if (eo__split_solve_field(sp, n, &so, req->field, kmin, kmin + (int)count - 1, &plain) != 0)
        plain = NULL;
    return plain;
}

/* The base statuses for b->k (b->ist), and whether the pins leave a split of that size
 * possible: 0, or the entry's error: EO_EINVAL for an item larger than k (s->bad_party names
 * its party), EO_ERANGE for more than k players pinned to one side. */
static int pins_fit(eo__bal *b, const eo_balance_player *pl, const uint8_t *base,
                    eo_balance_split *s)
{
    int na = 0, nb = 0, k = b->k;
    base_statuses(b, base);
    for (int t = 0; t < b->m; t++) {
        int sz = b->istart[t + 1] - b->istart[t];
        if (sz > k) {
            s->bad_party = pl[b->mem[b->istart[t]]].party;
            return EO_EINVAL;
        }
        na += base[t] == EO_BALANCE_A ? sz : 0;
        nb += base[t] == EO_BALANCE_B ? sz : 0;
    }
    return na > k || nb > k ? EO_ERANGE : 0;
}

/* A bound for an answer that is not proven (eo_balance_split.bound): the search's root bound
 * over the base statuses (within T once g is proven), raised by what solve_k() proved: g for
 * |D|, every active term of C* once that is known. All 0 beyond the exact sizes. */
static int proven_bound(eo__bal *b, const progress *pg, int64_t eps, eo_balance_terms *out)
{
    memset(out, 0, sizeof *out);
    if (b->n > EO__BAL_EXACT)
        return 0;
    eo__bal_vec L;
    int64_t vd, k = b->k;
    double sd;
    int64_t T = pg->stage == 0 ? DEV_INF : pg->g > eps ? pg->g : eps;
    int rc = eo__bal_root_bound(b, T, L, &vd, &sd);
    if (rc <= 0)
        return rc;
    if (pg->stage >= 1 && L[EO__BT_DEV] < pg->g)
        L[EO__BT_DEV] = pg->g;
    for (int t = 0; pg->stage == 2 && t < EO__BT_N; t++)
        if (b->active[t])
            L[t] = pg->cstar[t];
    if (pg->stage == 2 && b->active[EO__BT_SPREAD] && pg->cstar[EO__BT_SPREAD] > vd)
        vd = pg->cstar[EO__BT_SPREAD]; /* beyond the tolerance: the optimum's own */
    out->broken = L[EO__BT_BROKEN];
    out->moves = L[EO__BT_MOVES];
    out->top2 = L[EO__BT_TOP2];
    out->denied = L[EO__BT_DENIED];
    out->bench_again = L[EO__BT_BENCH];
    out->dev = L[EO__BT_DEV];
    if (b->spread_shift == 0) { /* else the spread scale is not the ratings' */
        out->spread = (double)vd / (double)(k * k);
        out->spread_sd = sd / (double)k;
    }
    return 0;
}

/* Past the work limit: the better by the rules' key (|D| up to T = max(g, epsilon) once g is
 * proven, else up to epsilon, counting as equal) of the local search's split and the split
 * solve_k() held, into side[]; *bound what was proven. Returns 1, 0 when neither has a split,
 * or an error. */
static int fallback(eo__bal *b, const eo_balance_request *req, const progress *pg, uint8_t *side,
                    eo_balance_terms *bound)
{
    int64_t T = pg->stage == 0 || pg->g < req->epsilon ? req->epsilon : pg->g;
    eo__bal_vec lv, hv;
    uint8_t ls[EO__BAL_N];
    int got = eo__bal_local(b, T, req->seed + (uint64_t)b->k,
                            req->restarts ? req->restarts : RESTARTS_DEFAULT, ls, lv);
    if (got < 0)
        return got;
    if (pg->have_side)
        eo__bal_eval(b, side, hv);
    if (got && (!pg->have_side || eo__bal_key_cmp(b, T, lv, hv) < 0))
        memcpy(side, ls, (size_t)b->n);
    got |= pg->have_side;
    int rc = proven_bound(b, pg, req->epsilon, bound);
    return rc < 0 ? rc : got;
}

/* One team size with its base statuses set: the rules exactly (solve_k), or, once *limited
 * (set here when the work limit stops the exact search: the later sizes follow), fallback().
 * Returns 1 with side[] the answer, *exact and (when not exact) *bound, 0 when no split
 * exists or local search found none, or an error that ends the call. */
static int answer_k(eo__bal *b, const eo_balance_request *req, const uint8_t *base, int *limited,
                    uint8_t *side, int *exact, eo_balance_terms *bound)
{
    progress pg;
    memset(&pg, 0, sizeof pg);
    *exact = 0;
    if (!*limited) {
        int got = solve_k(b, req->epsilon, side, &pg);
        if (got != EO_ELIMIT) {
            *exact = got == 1;
            return got;
        }
        *limited = 1;
        base_statuses(b, base); /* solve_k left decisions in the statuses */
    }
    return fallback(b, req, &pg, side, bound);
}

/* Step 6. The entry s of team size b->k (idx and mv: its room in the result block): from the
 * plain answer ps when there is one, else the pins' check, then answer_k(). Returns 0 (a size
 * without an answer has s->err set), or an error that ends the call. */
static int solve_size(eo__bal *b, const eo_balance_player *pl, const eo_balance_request *req,
                      const uint8_t *base, const eo_split *ps, int *limited,
                      eo_balance_split *s, uint16_t *idx, eo_balance_move *mv)
{
    uint8_t side[EO__BAL_N];
    s->k = b->k;
    if (ps) {
        memset(side, EO__SIDE_BENCH, (size_t)b->n);
        for (int x = 0; x < b->k; x++) {
            side[ps->a[x]] = EO__SIDE_A;
            side[ps->b[x]] = EO__SIDE_B;
        }
        fill(s, b, pl, side, idx, mv, NULL);
        return 0;
    }
    int err = pins_fit(b, pl, base, s), exact = 0;
    if (err) {
        s->err = err;
        return 0;
    }
    eo_balance_terms bound;
    int got = answer_k(b, req, base, limited, side, &exact, &bound);
    if (got < 0)
        return got;
    if (got == 0)
        s->err = EO_ERANGE;
    else
        fill(s, b, pl, side, idx, mv, exact ? NULL : &bound);
    return 0;
}

/* Steps 5 and 6 for every size kmin .. kmin + count - 1 into a new result block (*out on
 * success). Returns 0, EO_ENOMEM, or an error of a size that ends the call (nothing is kept). */
static int solve_sizes(eo__bal *b, const eo_balance_player *pl, const eo_balance_request *req,
                       const eo__balance_opts *opts, int kmin, size_t count,
                       const uint8_t *base, eo_balance_result **out)
{
    size_t n = (size_t)b->n;
    eo_balance_move *mvs;
    uint16_t *idx;
    eo_balance_result *res = result_new(count, n, &mvs, &idx);
    if (!res)
        return EO_ENOMEM;
    eo_splits *plain = count && !opts->general_path && !opts->force_local
                           ? plain_answers(pl, n, req, kmin, count)
                           : NULL;
    int limited = opts->force_local || b->n > EO__BAL_EXACT, rc = 0;
    for (size_t c = 0; c < count && rc == 0; c++) {
        b->k = kmin + (int)c;
        rc = solve_size(b, pl, req, base, plain ? &plain->split[c] : NULL, &limited,
                        &res->split[c], idx + c * n, mvs + c * n);
    }
    eo_splits_free(plain);
    if (rc) {
        free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int eo__balance_solve(const eo_balance_player *pl, size_t n, const eo_balance_request *reqp,
                      eo_balance_result **out, uint32_t *bad_party, const eo__balance_opts *opts)
{
    static const eo__balance_opts defaults = {0};
    if (!opts)
        opts = &defaults;
    if (bad_party)
        *bad_party = 0;
    if (!out)
        return EO_EINVAL;
    *out = NULL;
    if (n > EO_PLAYERS_MAX)
        return EO_ELIMIT;
    if (n < 2 || !pl)
        return EO_EINVAL;
    eo_balance_request req;
    int kmin;
    size_t count;
    int rc = read_request(pl, n, reqp, &req, &kmin, &count);
    if (rc)
        return rc;
    eo__bal *b = calloc(1, sizeof *b);
    if (!b)
        return EO_ENOMEM;
    uint8_t base[EO__BAL_N]; /* the side each item is pinned to */
    load_players(b, pl, n);
    apply_request(b, &req, opts);
    rc = build_items(b, pl, req.allow_protected, base, bad_party);
    if (rc == 0)
        rc = solve_sizes(b, pl, &req, opts, kmin, count, base, out);
    eo__bal_search_free(b);
    eo__bal_tail_free(b->repair);
    free(b);
    return rc;
}

int eo_balance_solve(const eo_balance_player *players, size_t n, const eo_balance_request *req,
                     eo_balance_result **out, uint32_t *bad_party)
{
    return eo__balance_solve(players, n, req, out, bad_party, NULL);
}

void eo_balance_free(eo_balance_result *r)
{
    free(r);
}
