/* The balancer (eo_balance.h): validation, items and statuses, the rules as exact questions,
 * the fallback, the result block. docs/BALANCER.md ("The balancer: constraints and secondary objectives") states the rules and why they are exact.
 *
 * For each k:
 *   1. g = the least |D| under the hard constraints (search, the gap term alone);
 *   2. C* = the least objective vector over the splits with |D| <= T = max(g, epsilon);
 *   3. who plays: players in priority order, each plays if a split with vector C* still exists
 *      with the decisions so far, else sits out; team A: players in request order, each on A if
 *      a split with vector C* still exists so, else on B.
 * A witness from the last "yes" answers every question it already agrees with. A plain request
 * (no constraint, no secondary term, epsilon 0) is the splitter's problem and goes to
 * eo_split_solve(), whose rules these reduce to. */
#include "evenodds/eo_balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"

#define RATING_MAX (INT64_C(1) << 40)
#define FIELD_MAX (INT64_C(1) << 46)
#define DEV_INF (INT64_C(1) << 60)
#define SPREAD_BITS 20 /* qs < 2^SPREAD_BITS keeps the spread term within int64 */
#define RESTARTS_DEFAULT 4

static int side_ok(uint8_t s) { return s <= EO_BALANCE_B; }

/* Fills the result entry of one k from an assignment. */
static void fill(eo_balance_split *s, const eo__bal *b, const eo_balance_player *pl,
                 const uint8_t *side, const eo_balance_request *req, uint16_t *idx,
                 eo_balance_move *mv, int exact)
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
    s->p_a = req->predict ? req->predict(req->predict_ctx, s->sum_a, s->sum_b) : NAN;
    s->moves = mv;
    s->nmoves = nm;
    s->terms.broken = v[EO__BT_BROKEN];
    s->terms.moves = v[EO__BT_MOVES];
    s->terms.top2 = v[EO__BT_TOP2];
    s->terms.spread = fabs(va / k - vb / k);
    s->terms.denied = v[EO__BT_DENIED];
    s->terms.bench_again = v[EO__BT_BENCH];
    s->exact = exact;
}

/* Every item's status from the pins alone (base[t]: the side item t is pinned to, or none). */
static void base_statuses(eo__bal *b, const uint8_t *base)
{
    for (int t = 0; t < b->m; t++)
        b->ist[t] = base[t] == EO_BALANCE_A   ? EO__BS_A
                    : base[t] == EO_BALANCE_B ? EO__BS_B
                                              : EO__BS_FREE;
}

/* One question of step 3: item t takes status yes when a split with vector C* (within T)
 * still exists so, else no. `kept`: the witness side[] already agrees with yes; otherwise the
 * search's split, when there is one, becomes the witness. Returns 0 or an error. */
static int decide(eo__bal *b, int t, int yes, int no, int kept, int64_t T,
                  const eo__bal_vec cstar, uint8_t *side)
{
    b->ist[t] = (uint8_t)yes;
    if (kept)
        return 0;
    eo__bal_vec v;
    uint8_t alt[EO__BAL_N];
    memcpy(v, cstar, sizeof v);
    int rc = eo__bal_search(b, T, 1, v, alt);
    if (rc < 0)
        return rc;
    if (rc == 1)
        memcpy(side, alt, (size_t)b->n);
    else
        b->ist[t] = (uint8_t)no;
    return 0;
}

/* Steps 1-3 of the file comment for b->k with the base statuses in b->ist. Returns 1 with
 * side[] the answer, 0 when no split exists, EO_ELIMIT past the work limit, or an error. */
static int solve_k(eo__bal *b, int64_t eps, uint8_t *side)
{
    int saved[EO__BT_N];
    memcpy(saved, b->active, sizeof saved);
    memset(b->active, 0, sizeof b->active);
    b->active[EO__BT_DEV] = 1;
    eo__bal_vec g;
    int rc = eo__bal_search(b, DEV_INF, 0, g, side);
    memcpy(b->active, saved, sizeof saved);
    if (rc <= 0)
        return rc;
    int64_t T = g[EO__BT_DEV] > eps ? g[EO__BT_DEV] : eps;
    eo__bal_vec cstar, v;
    rc = eo__bal_mitm(b, T, cstar, side);
    if (rc != 2)
        return rc == 0 ? EO_EINTERNAL : rc; /* step 1 found a split within T */
    /* the least vector, seeded with the better of step 1's split and one local-search descent
     * from the current teams (when within T) */
    eo__bal_eval(b, side, cstar);
    {
        eo__bal_vec lv;
        uint8_t ls[EO__BAL_N];
        rc = eo__bal_local(b, T, 1, 0, ls, lv);
        if (rc < 0)
            return rc;
        if (rc == 1 && lv[EO__BT_DEV] <= T && eo__bal_cmp(b, lv, cstar) < 0) {
            memcpy(cstar, lv, sizeof lv);
            memcpy(side, ls, (size_t)b->n);
        }
    }
    rc = eo__bal_search(b, T, 2, cstar, side);
    if (rc <= 0)
        return rc < 0 ? rc : EO_EINTERNAL; /* step 1 found a split within T */
    for (int x = 0; x < b->n; x++) { /* who plays, by priority */
        int p = b->prio[x], t = b->item_of[p];
        if (b->ist[t] == EO__BS_FREE &&
            (rc = decide(b, t, EO__BS_PLAY, EO__BS_BENCH, side[p] != EO__SIDE_BENCH, T, cstar,
                         side)) < 0)
            return rc;
    }
    for (int p = 0; p < b->n; p++) { /* team A, in request order */
        int t = b->item_of[p];
        if (b->ist[t] == EO__BS_PLAY &&
            (rc = decide(b, t, EO__BS_A, EO__BS_B, side[p] == EO__SIDE_A, T, cstar, side)) < 0)
            return rc;
    }
    eo__bal_eval(b, side, v);
    if (eo__bal_cmp(b, v, cstar) != 0)
        return EO_EINTERNAL; /* every kept witness reaches C* */
    return 1;
}

/* The plain request: the splitter's rules exactly. */
static int is_plain(const eo_balance_player *pl, size_t n, const eo_balance_request *req)
{
    if (n > EO_SPLIT_EXACT_MAX || req->mode != EO_BALANCE_REBALANCE || req->epsilon != 0 ||
        req->field != 0)
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

/* The side a party (or player) is pinned to by locks and protection: 0 none, -1 a conflict. */
static int pinned(const eo_balance_player *p, int allow_protected)
{
    int s = p->lock;
    if (p->protect && !allow_protected && p->team != EO_BALANCE_NONE) {
        if (s && s != p->team)
            return -1;
        s = p->team;
    }
    return s;
}

int eo__balance_solve(const eo_balance_player *pl, size_t n, const eo_balance_request *reqp,
                      eo_balance_result **out, uint32_t *bad_party, int no_plain,
                      int force_local)
{
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
    if (reqp)
        req = *reqp;
    else
        memset(&req, 0, sizeof req);
    if ((req.mode != EO_BALANCE_REBALANCE && req.mode != EO_BALANCE_SCRAMBLE) ||
        req.epsilon < 0 || req.field > FIELD_MAX || req.field < -FIELD_MAX || req.restarts < 0)
        return EO_EINVAL;
    int kmin = req.k_min ? req.k_min : 2, kmax = req.k_max ? req.k_max : (int)n / 2;
    if (req.k_min < 0 || req.k_max < 0 || kmin < 2 || kmax > (int)n / 2 ||
        (kmin > kmax && (req.k_min || req.k_max)))
        return EO_EINVAL;
    size_t count = kmax >= kmin ? (size_t)(kmax - kmin + 1) : 0;
    int64_t lo = 0;
    for (size_t i = 0; i < n; i++) {
        if (pl[i].rating > RATING_MAX || pl[i].rating < -RATING_MAX || !side_ok(pl[i].team) ||
            !side_ok(pl[i].lock) || !side_ok(pl[i].prefer) || pl[i].protect > 1 ||
            pl[i].sat_out > 1)
            return EO_EINVAL;
        if (i == 0 || pl[i].rating < lo)
            lo = pl[i].rating;
    }
    eo__bal *b = calloc(1, sizeof *b);
    if (!b)
        return EO_ENOMEM;
    b->n = (int)n;
    b->mode = req.mode;
    b->allow_split = req.allow_party_split != 0;
    b->field = req.field;
    b->work_limit = req.work_limit;
    b->no_mitm = (no_plain & 2) != 0;
    b->dp_try = (no_plain & 4) ? 1 : 0;
    no_plain &= 1;
    int64_t qmax = 0;
    for (size_t i = 0; i < n; i++) {
        b->q[i] = pl[i].rating - lo;
        qmax = b->q[i] > qmax ? b->q[i] : qmax;
    }
    int sh = 0;
    while ((qmax >> sh) >= (INT64_C(1) << SPREAD_BITS))
        sh++;
    b->wmin = 0;
    uint8_t base[EO__BAL_N]; /* pinned side per player's unit */
    int rc = 0;
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
        /* players by rating descending (ties: index), and by priority descending */
        int x = i;
        while (x > 0 && pl[b->best[x - 1]].rating < pl[i].rating) {
            b->best[x] = b->best[x - 1];
            x--;
        }
        b->best[x] = i;
        x = i;
        while (x > 0 && pl[b->prio[x - 1]].priority < pl[i].priority) {
            b->prio[x] = b->prio[x - 1];
            x--;
        }
        b->prio[x] = i;
    }
    /* items: a party that may not be split, or one player; its pinned side */
    b->m = 0;
    int nm = 0;
    for (int i = 0; i < (int)n && rc == 0; i++) {
        int t = -1;
        if (!b->allow_split && b->party[i] >= 0)
            for (int j = 0; j < i; j++)
                if (b->party[j] == b->party[i]) {
                    t = b->item_of[j];
                    break;
                }
        if (t >= 0)
            continue;
        t = b->m++;
        b->istart[t] = nm;
        int pin = 0;
        for (int j = i; j < (int)n; j++) {
            if (j != i && (b->allow_split || b->party[i] < 0 || b->party[j] != b->party[i]))
                continue;
            b->item_of[j] = t;
            b->mem[nm++] = j;
            int s = pinned(&pl[j], req.allow_protected);
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
    if (rc) {
        free(b);
        return rc;
    }
    b->active[EO__BT_DEV] = 1;
    b->active[EO__BT_BROKEN] = b->allow_split;
    b->active[EO__BT_MOVES] = req.mode == EO_BALANCE_REBALANCE;
    b->active[EO__BT_TOP2] = b->active[EO__BT_SPREAD] = req.mode == EO_BALANCE_SCRAMBLE;
    b->active[EO__BT_DENIED] = b->active[EO__BT_BENCH] = 1;

    size_t bytes = sizeof(eo_balance_result) + count * sizeof(eo_balance_split) +
                   count * n * sizeof(eo_balance_move) + count * n * sizeof(uint16_t);
    eo_balance_result *res = calloc(1, bytes);
    if (!res) {
        free(b);
        return EO_ENOMEM;
    }
    res->count = count;
    res->split = count ? (eo_balance_split *)(res + 1) : NULL;
    eo_balance_move *mvs = (eo_balance_move *)((eo_balance_split *)(res + 1) + count);
    uint16_t *idx = (uint16_t *)(mvs + count * n);

    eo_splits *plain = NULL;
    if (count && !no_plain && !force_local && is_plain(pl, n, &req)) {
        eo_split_player sp[EO_SPLIT_EXACT_MAX];
        for (size_t i = 0; i < n; i++)
            sp[i].rating = pl[i].rating;
        eo_split_options so = {.bench = EO_BENCH_SOLVER, .work_limit = req.work_limit};
        if (eo_split_solve(sp, n, &so, &plain) != 0)
            plain = NULL; /* past the work limit, or no memory: the general path answers */
    }
    uint8_t side[EO__BAL_N];
    int limited = force_local || n > EO__BAL_EXACT;
    for (size_t c = 0; c < count && rc == 0; c++) {
        eo_balance_split *s = &res->split[c];
        int k = kmin + (int)c;
        b->k = k;
        s->k = k;
        if (plain) {
            const eo_split *ps = &plain->split[k - 2];
            memset(side, EO__SIDE_BENCH, n);
            for (int x = 0; x < k; x++) {
                side[ps->a[x]] = EO__SIDE_A;
                side[ps->b[x]] = EO__SIDE_B;
            }
            fill(s, b, pl, side, &req, idx + c * n, mvs + c * n, 1);
            continue;
        }
        int na = 0, nb = 0, too_big = 0;
        base_statuses(b, base);
        for (int t = 0; t < b->m; t++) {
            int sz = b->istart[t + 1] - b->istart[t];
            na += base[t] == EO_BALANCE_A ? sz : 0;
            nb += base[t] == EO_BALANCE_B ? sz : 0;
            if (sz > k && !too_big) {
                too_big = 1;
                s->bad_party = pl[b->mem[b->istart[t]]].party;
            }
        }
        if (too_big) {
            s->err = EO_EINVAL;
            continue;
        }
        if (na > k || nb > k) {
            s->err = EO_ERANGE;
            continue;
        }
        int got = 0, exact = 0;
        if (!limited) {
            got = solve_k(b, req.epsilon, side);
            if (got == EO_ELIMIT) {
                limited = 1; /* the remaining sizes go to local search too */
                got = 0;
                base_statuses(b, base); /* solve_k left decisions in the statuses */
            } else if (got < 0) {
                rc = got;
                break;
            } else {
                exact = 1;
            }
        }
        if (limited) {
            eo__bal_vec v;
            got = eo__bal_local(b, req.epsilon, req.seed + (uint64_t)k,
                                req.restarts ? req.restarts : RESTARTS_DEFAULT, side, v);
            if (got < 0) {
                rc = got;
                break;
            }
        }
        if (!got) {
            s->err = EO_ERANGE;
            continue;
        }
        fill(s, b, pl, side, &req, idx + c * n, mvs + c * n, exact);
    }
    eo_splits_free(plain);
    eo__bal_search_free(b);
    free(b);
    if (rc) {
        free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int eo_balance_solve(const eo_balance_player *players, size_t n, const eo_balance_request *req,
                     eo_balance_result **out, uint32_t *bad_party)
{
    return eo__balance_solve(players, n, req, out, bad_party, 0, 0);
}

void eo_balance_free(eo_balance_result *r)
{
    free(r);
}
