/* Exact branch and bound of the balancer (balance_internal.h): items (unsplittable parties or
 * single players) by rating sum, highest first, each put on A, B or the bench as its status
 * allows. A node is cut when the split cannot reach |D| <= dev_max, or when a lower bound of the
 * objective vector (every term bounded from below separately, see bound()) cannot beat the best
 * found (least-vector questions) or stay within the given vector (feasibility questions).
 * Correctness needs only that every bound is a true lower bound; the order of the choices only
 * changes the speed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"
#include "core/balance/split/split_internal.h"

#define NMAX EO__BAL_EXACT
/* Least search budget of a gap-only question before the table answers (split.c's rule). */
#define DP_TRY_MIN 20000
/* A later question reads the lists of an earlier one when its own tail would be at most this
 * many items longer (tail_lists()). */
#define TAIL_REGROW 1

typedef struct state {
    int64_t d;      /* Σq(A) - Σq(B) */
    int64_t sa, sb; /* Σqs per team */
    int64_t xa, xb; /* Σqs^2 per team */
    int64_t moves, denied, bench, broken;
    int na, nb;
} state;

typedef struct eo__bal_bs {
    eo__bal *b;
    int m;
    int order[NMAX]; /* items by q sum descending, ties by first member */
    /* over the items order[j..m-1]: member count, and prefix sums of their q, qs, qs^2 with the
     * members sorted by q descending (qs and qs^2 are then sorted too) */
    int cnt[NMAX + 1];
    int64_t pq[NMAX + 1][NMAX + 1], ps[NMAX + 1][NMAX + 1], px[NMAX + 1][NMAX + 1];
    /* the same for (qs - mid)², sorted on their own: Σqs² bounded around the ratings' middle */
    int64_t pz[NMAX + 1][NMAX + 1];
    int64_t mid;
    /* members of items order[j..] with status PLAY/A/B, A, B; with current team A, B; preferring
     * A, B; who sat out last time */
    int mustp[NMAX + 1], musta[NMAX + 1], mustb[NMAX + 1];
    int cura[NMAX + 1], curb[NMAX + 1], prefa[NMAX + 1], prefb[NMAX + 1], sat[NMAX + 1];
    /* rebalance, over the members of items order[j..]: Σq of those with current team A, B and
     * none; 2q of the current-A (current-B) members, by q descending, as prefix sums */
    int64_t qa[NMAX + 1], qb[NMAX + 1], qn[NMAX + 1];
    int64_t ma2[NMAX + 1][NMAX + 1], mb2[NMAX + 1][NMAX + 1];
    int64_t mod;    /* 2·gcd of every q: d ≡ Σq of the playing members (mod mod); 0 = none */
    int spread_d;   /* 1: qs = q, so δ = d and |D| <= dev_max bounds δ */
    int top_pos;    /* the later search position of the two best players' items */
    /* full scrambles: the search aims X = Σqs²(A) - Σqs²(B) at the middle of the spread window
     * of D = 0 as well as D at 0 */
    int aim_x;
    int64_t x_mid;
    uint8_t side[NMAX];
    int pmask[NMAX];
    int64_t dev_max;
    int feas, found, done, err;
    int64_t *best;
    uint8_t *out_side;
    eo__bal_vec root;
    int have_root;
    /* gap-only problems (gap_only()): a question's search budget, then split_dp.c's table */
    int gap_only;
    uint64_t try_end; /* 0 = none */
    int gave_up;
    uint64_t mid_at;    /* b->midway's call: at this work (0: none or called) */
    int mid_stop;       /* b->midway stopped the search */
    uint8_t by_q[NMAX];  /* players by q descending, ties by index (the table's order) */
    eo__split_buf dp;    /* the table's memory, kept across questions */
    /* full scrambles: the items order[tail_j..] are answered by the tail's lists (-1: none),
     * built within tail_lim and tail_room when a node first reaches them (tail_built) */
    int tail_j, tail_built;
    eo__bal_lim tail_lim;
    size_t tail_room;
    int head; /* tail_head() of the order the tables were built for */
    int tail_base, tail_pin; /* the items order[tail_base..] hold the tail's lists as built
                              * (-1: none); this question reads them with its pins (tail_pin) */
    int no_pref; /* nobody has a side preference */
    eo__bal_tail *tail;
} bs;

int64_t eo__bal_spread(const eo__bal *b, int64_t sa, int64_t sb, int64_t xa, int64_t xb)
{
    int64_t k = b->k, va = k * xa - sa * sa, vb = k * xb - sb * sb; /* k² var */
    int64_t diff = eo__abs64(va - vb);
    if (diff == 0 || b->spread_eps == 0)
        return diff;
    /* k sd = √v, so the test is |√va - √vb| <= e with e = k eps; with hi >= lo that is
     * hi - lo - e² <= 2e√lo, i.e. (when the left side is positive) its square <= 4e² lo */
    int64_t hi = va > vb ? va : vb, lo = va > vb ? vb : va, e = k * b->spread_eps;
    eo__i128 c = (eo__i128)hi - lo - (eo__i128)e * e;
    return c <= 0 || c * c <= (eo__i128)4 * e * e * lo ? 0 : diff;
}

/* Integer square root (floor) of 0 <= v < 2^120. */
static int64_t isqrt(eo__i128 v)
{
    int64_t r = (int64_t)sqrt((double)v);
    while (r > 0 && (eo__i128)r * r > v)
        r--;
    while ((eo__i128)(r + 1) * (r + 1) <= v)
        r++;
    return r;
}

eo__i128 eo__bal_umax(const eo__bal *b, int64_t delta, int64_t S, int64_t XS)
{
    int64_t k = b->k;
    int64_t sa = (S + delta) / 2, sb = (S - delta) / 2;
    eo__i128 C = (eo__i128)k * XS - (eo__i128)sa * sa - (eo__i128)sb * sb;
    eo__i128 e = (eo__i128)k * b->spread_eps;
    /* |√va - √vb| <= e with va + vb = C: C - e² <= 2√(va vb) = √(C² - u²) */
    return C <= e * e ? C : isqrt(e * e * (2 * C - e * e));
}

void eo__bal_eval(const eo__bal *b, const uint8_t *side, eo__bal_vec out)
{
    int64_t d = 0, sa = 0, sb = 0, xa = 0, xb = 0;
    memset(out, 0, sizeof(eo__bal_vec));
    int pm[EO__BAL_N];
    for (int t = 0; t < b->npart; t++)
        pm[t] = 0;
    for (int i = 0; i < b->n; i++) {
        int s = side[i];
        if (s == EO__SIDE_A) {
            d += b->q[i];
            sa += b->qs[i];
            xa += b->qs[i] * b->qs[i];
        } else if (s == EO__SIDE_B) {
            d -= b->q[i];
            sb += b->qs[i];
            xb += b->qs[i] * b->qs[i];
        }
        if (b->team[i] != EO__SIDE_BENCH && b->team[i] != s)
            out[EO__BT_MOVES]++;
        if (b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != s)
            out[EO__BT_DENIED] += b->w[i];
        if (b->sat_out[i] && s == EO__SIDE_BENCH)
            out[EO__BT_BENCH]++;
        if (b->party[i] >= 0)
            pm[b->party[i]] |= 1 << s;
    }
    for (int t = 0; t < b->npart; t++)
        if (pm[t] & (pm[t] - 1))
            out[EO__BT_BROKEN]++;
    int first = -1;
    for (int r = 0; r < b->n; r++) {
        int i = b->best[r];
        if (side[i] == EO__SIDE_BENCH)
            continue;
        if (first < 0) {
            first = side[i];
        } else {
            out[EO__BT_TOP2] = side[i] == first;
            break;
        }
    }
    out[EO__BT_SPREAD] = eo__bal_spread(b, sa, sb, xa, xb);
    out[EO__BT_DEV] = eo__abs64(d + b->field);
}

int eo__bal_cmp(const eo__bal *b, const eo__bal_vec x, const eo__bal_vec y)
{
    for (int t = 0; t < EO__BT_N; t++) {
        if (!b->active[t] || x[t] == y[t])
            continue;
        return x[t] < y[t] ? -1 : 1;
    }
    return 0;
}

static int64_t min4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a < b ? a : b;
    m = m < c ? m : c;
    return m < d ? m : d;
}

static int64_t max4(int64_t a, int64_t b, int64_t c, int64_t d)
{
    int64_t m = a > b ? a : b;
    m = m > c ? m : c;
    return m > d ? m : d;
}

/* Least |x| over x in [lo, hi] with x ≡ r (mod m), m > 0; -1 when there is none. */
static int64_t least_abs_mod(int64_t lo, int64_t hi, int64_t r, int64_t m)
{
    r %= m;
    if (r < 0)
        r += m;
    if (lo > 0) {
        int64_t x = lo + ((r - lo) % m + m) % m;
        return x <= hi ? x : -1;
    }
    if (hi < 0) {
        int64_t x = hi - ((hi - r) % m + m) % m;
        return x >= lo ? -x : -1;
    }
    int64_t up = r, dn = r - m, best = -1; /* the nearest values >= 0 and < 0 */
    if (up <= hi)
        best = up;
    if (dn >= lo && (best < 0 || -dn < best))
        best = -dn;
    return best;
}

/* Fewest entries of the prefix sums p[0..cnt] whose sum reaches need (> 0); cnt + 1 when even
 * all of them fall short. */
static int fewest(const int64_t *p, int cnt, int64_t need)
{
    int x = 0;
    while (x < cnt && p[x] < need)
        x++;
    return p[x] >= need ? x : cnt + 1;
}

/* The ranges of X = Σqs²(A) - Σqs²(B), δ = Σqs(A) - Σqs(B) and S = Σqs(A) + Σqs(B) over the
 * completions of node (j, c) with ka and kb players still to put on A and B, each bounded on
 * its own (δ also by |D| <= dev_max when qs = q). */
typedef struct sbox {
    int64_t xlo, xhi, dlo, dhi, slo, shi;
} sbox;

static sbox spread_box(const bs *s, int j, const state *c, int ka, int kb)
{
    const eo__bal *b = s->b;
    int cn = s->cnt[j], need = ka + kb;
    const int64_t *PS = s->ps[j], *PX = s->px[j];
    sbox x;
    x.xhi = c->xa - c->xb + PX[ka] - (PX[cn] - PX[cn - kb]);
    x.xlo = c->xa - c->xb + (PX[cn] - PX[cn - ka]) - PX[kb];
    x.dhi = c->sa - c->sb + PS[ka] - (PS[cn] - PS[cn - kb]);
    x.dlo = c->sa - c->sb + (PS[cn] - PS[cn - ka]) - PS[kb];
    if (s->spread_d) { /* δ = d and |d + field| <= dev_max at every leaf */
        int64_t dmin = -s->dev_max - b->field, dmax = s->dev_max - b->field;
        x.dlo = x.dlo > dmin ? x.dlo : dmin;
        x.dhi = x.dhi < dmax ? x.dhi : dmax;
    }
    x.slo = c->sa + c->sb + (PS[cn] - PS[cn - need]);
    x.shi = c->sa + c->sb + PS[need];
    /* X = Z + 2 mid δ with Z = Σ(qs - mid)² of A minus B (both teams of k): a far narrower
     * range than Σqs²'s, since the squares of the ratings' distances to their middle vary
     * much less than the squares themselves */
    const int64_t *PZ = s->pz[j], m = s->mid;
    int64_t z = c->xa - c->xb - 2 * m * (c->sa - c->sb) + m * m * (c->na - c->nb);
    int64_t zhi = z + PZ[ka] - (PZ[cn] - PZ[cn - kb]) + 2 * m * x.dhi;
    int64_t zlo = z + (PZ[cn] - PZ[cn - ka]) - PZ[kb] + 2 * m * x.dlo;
    x.xhi = zhi < x.xhi ? zhi : x.xhi;
    x.xlo = zlo > x.xlo ? zlo : x.xlo;
    return x;
}

/* A lower bound of k²|var(A) - var(B)| = |k X - δ S| from the box, by interval arithmetic. */
static int64_t vdiff_lb(const eo__bal *b, const sbox *x)
{
    int64_t plo = min4(x->dlo * x->slo, x->dlo * x->shi, x->dhi * x->slo, x->dhi * x->shi);
    int64_t phi = max4(x->dlo * x->slo, x->dlo * x->shi, x->dhi * x->slo, x->dhi * x->shi);
    return eo__least_abs((int64_t)b->k * x->xlo - phi, (int64_t)b->k * x->xhi - plo);
}

/* An upper bound of √va + √vb (k sd(A) + k sd(B)) over the completions of node (j, c): va is
 * at most k (the largest Σqs²(A)) - (the least Σqs(A))², and √ rounded up. */
static int64_t sd_sum_hi(const bs *s, int j, const state *c, int ka, int kb)
{
    int64_t k = s->b->k;
    int cn = s->cnt[j];
    const int64_t *PS = s->ps[j], *PX = s->px[j];
    int64_t sa = c->sa + (PS[cn] - PS[cn - ka]), sb = c->sb + (PS[cn] - PS[cn - kb]);
    int64_t va = k * (c->xa + PX[ka]) - sa * sa, vb = k * (c->xb + PX[kb]) - sb * sb;
    va = va > 0 ? va : 0;
    vb = vb > 0 ? vb : 0;
    /* below 2^53, so the doubles are exact and the rounded root is off by less than 1 */
    return (int64_t)sqrt((double)va) + (int64_t)sqrt((double)vb) + 2;
}

/* 1 when no completion of node (j, c) is within the spread tolerance, every one having
 * k²|var(A) - var(B)| >= vlo. With a tolerance 0: vlo > 0. When every remaining player plays and
 * qs = q, S and the players' Σqs² are known, and a split within it has |k X - δ S| <= the most
 * eo__bal_umax() allows over the box's δ (at the δ nearest 0): X must lie in one hull.
 * Otherwise, one within it has |va - vb| = |√va - √vb| (√va + √vb) <= k eps (√va + √vb). */
static int outside_eps(const bs *s, int j, const state *c, int ka, int kb, const sbox *x,
                       int64_t vlo)
{
    const eo__bal *b = s->b;
    int64_t e = b->k * b->spread_eps;
    if (e == 0)
        return vlo > 0;
    if (s->spread_d && ka + kb == s->cnt[j] && x->dlo <= x->dhi) {
        int64_t S = x->slo, XS = c->xa + c->xb + s->px[j][s->cnt[j]], k = b->k;
        int64_t d0 = x->dlo > 0 ? x->dlo : x->dhi < 0 ? x->dhi : 0;
        eo__i128 u = eo__bal_umax(b, d0, S, XS);
        return (eo__i128)k * x->xhi < (eo__i128)x->dlo * S - u ||
               (eo__i128)k * x->xlo > (eo__i128)x->dhi * S + u;
    }
    return vlo > e * sd_sum_hi(s, j, c, ka, kb);
}

/* A lower bound of every term over the completions of node (j, c); 0 when none can have k
 * players a side or reach |D| <= dev_max. Each term is bounded separately; since each is a
 * lower bound of its own term, the vector is <= (lexicographically) that of every completion. */
static int bound(const bs *s, int j, const state *c, eo__bal_vec L)
{
    const eo__bal *b = s->b;
    int k = b->k, ka = k - c->na, kb = k - c->nb, need = ka + kb, cn = s->cnt[j];
    if (ka < 0 || kb < 0 || need > cn || s->mustp[j] > need || s->musta[j] > ka ||
        s->mustb[j] > kb)
        return 0;
    const int64_t *P = s->pq[j];
    /* the extreme differences: A takes the ka highest remaining and B the kb lowest, or the
     * reverse (disjoint since ka + kb <= cn; statuses relaxed, which only widens the range) */
    int64_t hi = c->d + P[ka] - (P[cn] - P[cn - kb]) + b->field;
    int64_t lo = c->d + (P[cn] - P[cn - ka]) - P[kb] + b->field;
    if (hi < -s->dev_max || lo > s->dev_max)
        return 0;
    int64_t dev = eo__least_abs(lo, hi);
    if (need == cn && s->mod) {
        /* every remaining member plays: each adds ±q ≡ q (mod 2·gcd), so D's residue is known
         * (the parity bound of split.c, through the common factor) */
        dev = least_abs_mod(lo, hi, c->d + P[cn] + b->field, s->mod);
        if (dev < 0 || dev > s->dev_max)
            return 0;
    }
    L[EO__BT_DEV] = dev;
    L[EO__BT_BROKEN] = c->broken;
    int64_t mv = c->moves;
    if (b->active[EO__BT_MOVES]) {
        /* players who must leave a full current team, and the movers needed to bring D within
         * dev_max: with everyone else home (no-team members anywhere) D lies in [blo, bhi];
         * raising it takes current-B members moving (each adds at most 2q), lowering it
         * current-A members */
        int64_t mva = s->cura[j] > ka ? s->cura[j] - ka : 0;
        int64_t mvb = s->curb[j] > kb ? s->curb[j] - kb : 0;
        int64_t home = c->d + s->qa[j] - s->qb[j] + b->field;
        int64_t bhi = home + s->qn[j], blo = home - s->qn[j];
        if (bhi < -s->dev_max) {
            int x = fewest(s->mb2[j], s->curb[j], -s->dev_max - bhi);
            if (x > s->curb[j])
                return 0;
            mvb = x > mvb ? x : mvb;
        } else if (blo > s->dev_max) {
            int x = fewest(s->ma2[j], s->cura[j], blo - s->dev_max);
            if (x > s->cura[j])
                return 0;
            mva = x > mva ? x : mva;
        }
        mv += mva + mvb;
    }
    L[EO__BT_MOVES] = mv;
    /* the two best players placed on one team are the two best playing */
    int b1 = b->best[0], b2 = b->best[1];
    L[EO__BT_TOP2] = j > s->top_pos && s->side[b1] == s->side[b2] && s->side[b1] != 0;
    L[EO__BT_SPREAD] = 0;
    if (b->active[EO__BT_SPREAD]) {
        sbox x = spread_box(s, j, c, ka, kb);
        int64_t vlo = vdiff_lb(b, &x);
        /* outside the tolerance the term is |va - vb| > 0 */
        L[EO__BT_SPREAD] = outside_eps(s, j, c, ka, kb, &x, vlo) ? (vlo > 1 ? vlo : 1) : 0;
    }
    int64_t den = 0;
    if (s->prefa[j] > ka)
        den += s->prefa[j] - ka;
    if (s->prefb[j] > kb)
        den += s->prefb[j] - kb;
    L[EO__BT_DENIED] = c->denied + den * b->wmin;
    L[EO__BT_BENCH] = c->bench + (s->sat[j] > need ? s->sat[j] - need : 0);
    return 1;
}

/* A feasibility question's cut: its *best is C*, the least vector of the splits under the base
 * statuses, and every question's splits are among those, so a split with a vector <= C* has
 * C*'s every term: a node is cut as soon as one term's bound passes C*'s, whatever the terms
 * before it (a rebalance node short of C*'s moves but already denying more, say). */
static int above(const eo__bal *b, const eo__bal_vec L, const eo__bal_vec best)
{
    for (int t = 0; t < EO__BT_N; t++)
        if (b->active[t] && L[t] > best[t])
            return 1;
    return 0;
}

static void leaf(bs *s)
{
    eo__bal *b = s->b;
    eo__bal_vec v;
    eo__bal_eval(b, s->side, v);
    if (s->feas ? eo__bal_cmp(b, v, s->best) > 0 : s->found && eo__bal_cmp(b, v, s->best) >= 0)
        return;
    memcpy(s->best, v, sizeof(eo__bal_vec));
    memcpy(s->out_side, s->side, (size_t)b->n);
    s->found = 1;
    if (s->feas || (s->have_root && eo__bal_cmp(b, v, s->root) <= 0))
        s->done = 1;
}

/* Node j = s->tail_j: the items order[j..] by the tail's lists (eo__bal_tail_ask()), the
 * completion it picks judged by leaf() like any other. */
static void tail(bs *s, int j, const state *c, const eo__bal_vec L)
{
    eo__bal *b = s->b;
    eo__bal_tail_q q;
    memset(&q, 0, sizeof q);
    q.na = c->na;
    q.nb = c->nb;
    q.d = c->d;
    q.ds = c->sa - c->sb;
    q.x = c->xa - c->xb;
    q.s = c->sa + c->sb;
    q.xs = c->xa + c->xb;
    q.dev_max = s->dev_max;
    q.feas = s->feas;
    q.found = s->found;
    memcpy(q.base, L, sizeof q.base); /* top2 is settled above the tail: L has it exactly */
    uint64_t work = 0;
    if (!s->tail_built && s->tail_pin) {
        eo__bal_tail_pin(s->tail, b);
    } else if (!s->tail_built) {
        int rc =
            eo__bal_tail_build(&s->tail, b, s->order + j, s->m - j, 0, &s->tail_lim, s->tail_room);
        if (rc != 0) { /* tail_lists() saw them fit */
            s->err = rc < 0 ? rc : EO_EINTERNAL;
            s->done = 1;
            return;
        }
        s->tail_base = j;
    }
    s->tail_built = 1;
    if (eo__bal_tail_ask(s->tail, b, &q, s->best, s->side, &work))
        leaf(s);
    b->work += work;
    for (int y = j; y < s->m; y++)
        for (int u = b->istart[s->order[y]]; u < b->istart[s->order[y] + 1]; u++)
            s->side[b->mem[u]] = EO__SIDE_BENCH;
}

static void dfs(bs *s, int j, const state *c)
{
    eo__bal *b = s->b;
    if (s->done)
        return;
    if (b->work_limit && b->work >= b->work_limit) {
        s->err = EO_ELIMIT;
        s->done = 1;
        return;
    }
    if (s->try_end && b->work >= s->try_end) {
        s->gave_up = 1;
        s->done = 1;
        return;
    }
    if (s->mid_at && b->work >= s->mid_at) {
        s->mid_at = 0;
        int rc = b->midway(b, b->mid_ctx);
        if (rc != 0) {
            s->err = rc < 0 ? rc : 0;
            s->mid_stop = rc == 1;
            s->done = 1;
            return;
        }
    }
    b->work++;
    eo__bal_vec L;
    if (!bound(s, j, c, L))
        return;
    if (s->feas ? above(b, L, s->best) : s->found && eo__bal_cmp(b, L, s->best) >= 0)
        return;
    if (j == 0 && !s->have_root) {
        memcpy(s->root, L, sizeof L);
        s->have_root = 1;
    }
    if (j == s->m) {
        leaf(s);
        return;
    }
    if (j == s->tail_j) {
        tail(s, j, c, L);
        return;
    }
    int it = s->order[j];
    int st = b->ist[it], sz = b->istart[it + 1] - b->istart[it];
    const int *mem = b->mem + b->istart[it];
    int opt[3], nopt = 0;
    if (st == EO__BS_FREE || st == EO__BS_PLAY || st == EO__BS_A)
        opt[nopt++] = EO__SIDE_A;
    if (st == EO__BS_FREE || st == EO__BS_PLAY || st == EO__BS_B)
        opt[nopt++] = EO__SIDE_B;
    if (st == EO__BS_FREE || st == EO__BS_BENCH)
        opt[nopt++] = EO__SIDE_BENCH;
    state nx[3];
    int64_t key1[3];
    double key2[3];
    int ka = b->k - c->na, kb = b->k - c->nb, left = s->cnt[j] - sz;
    int64_t rest = s->pq[j + 1][s->cnt[j + 1]], scale = left > 0 ? left : 1;
    int64_t restx = s->px[j + 1][s->cnt[j + 1]] > 0 ? s->px[j + 1][s->cnt[j + 1]] : 1;
    for (int x = 0; x < nopt; x++) {
        state *e = &nx[x];
        *e = *c;
        int sd = opt[x];
        int64_t cost = 0;
        for (int u = 0; u < sz; u++) {
            int i = mem[u];
            int64_t q = b->q[i], qs = b->qs[i];
            if (sd == EO__SIDE_A) {
                e->d += q;
                e->sa += qs;
                e->xa += qs * qs;
                e->na++;
            } else if (sd == EO__SIDE_B) {
                e->d -= q;
                e->sb += qs;
                e->xb += qs * qs;
                e->nb++;
            }
            if (b->team[i] != EO__SIDE_BENCH && b->team[i] != sd) {
                e->moves++;
                cost += b->active[EO__BT_MOVES];
            }
            if (b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != sd) {
                e->denied += b->w[i];
                cost += b->active[EO__BT_DENIED];
            }
            if (b->sat_out[i] && sd == EO__SIDE_BENCH) {
                e->bench++;
                cost += b->active[EO__BT_BENCH];
            }
        }
        /* aim d at where a random completion of the rest would take it (as split_search.c) */
        int ka1 = ka - (sd == EO__SIDE_A ? sz : 0), kb1 = kb - (sd == EO__SIDE_B ? sz : 0);
        key1[x] = cost;
        key2[x] = (double)eo__abs64((e->d + b->field) * scale + (int64_t)(ka1 - kb1) * rest);
        if (s->aim_x && rest > 0) /* and X at the spread window's middle, each in its scale */
            key2[x] =
                key2[x] / (double)rest + fabs((double)(e->xa - e->xb - s->x_mid) * (double)scale +
                                              (double)(ka1 - kb1) * (double)restx) /
                                             (double)restx;
    }
    int ord[3] = {0, 1, 2};
    for (int x = 1; x < nopt; x++)
        for (int y = x; y > 0; y--) {
            int p = ord[y - 1], q = ord[y];
            if (key1[q] < key1[p] || (key1[q] == key1[p] && key2[q] < key2[p])) {
                ord[y - 1] = q;
                ord[y] = p;
            } else {
                break;
            }
        }
    for (int x = 0; x < nopt && !s->done; x++) {
        int o = ord[x], sd = opt[o];
        int saved[NMAX];
        state *e = &nx[o];
        for (int u = 0; u < sz; u++) {
            int i = mem[u];
            s->side[i] = (uint8_t)sd;
            int p = b->party[i];
            if (b->allow_split && p >= 0) {
                saved[u] = s->pmask[p];
                int nm = s->pmask[p] | 1 << sd;
                if (nm != s->pmask[p] && s->pmask[p] && !(s->pmask[p] & (s->pmask[p] - 1)))
                    e->broken++; /* its members were on one side so far: now broken */
                s->pmask[p] = nm;
            }
        }
        dfs(s, j + 1, e);
        for (int u = sz - 1; u >= 0; u--) {
            int i = mem[u];
            s->side[i] = EO__SIDE_BENCH;
            if (b->allow_split && b->party[i] >= 0)
                s->pmask[b->party[i]] = saved[u];
        }
    }
}

/* 1 when no term but the gap can be above 0 in any split: no parties, and nobody has a current
 * team, a preference or a sat-out mark, outside scramble mode. A question is then the
 * splitter's with the field as an offset. */
static int gap_only(const eo__bal *b)
{
    if (b->m != b->n || b->npart > 0 || b->active[EO__BT_TOP2] || b->active[EO__BT_SPREAD])
        return 0;
    for (int i = 0; i < b->n; i++)
        if (b->team[i] != EO__SIDE_BENCH || b->prefer[i] != EO__SIDE_BENCH || b->sat_out[i])
            return 0;
    return 1;
}

/* Scramble (where the search's tail may answer, tail_lists()): the items by rating sum, but
 * from item `head` on every other one moved to the end, in the same order. The tail is a
 * suffix of the order, and so holds ratings of every size: from the smallest items alone it
 * could not move Σq² far, and most of the search's nodes above it would be left with an X no
 * completion reaches. The largest items stay first (they shape D and X the most, and hold the
 * two best players, which top2 needs above the tail). */
static void tail_order(const eo__bal *b, int head, int *order)
{
    int tmp[NMAX], nt = 0, nr = 0;
    for (int y = 0; y < b->m; y++)
        if (y < head || y % 2 == 0)
            order[nt++] = order[y];
        else
            tmp[nr++] = order[y];
    memcpy(order + nt, tmp, sizeof(int) * (size_t)nr);
}

/* How many items keep their place at the head of the search order (tail_order()): none
 * outside scramble; a quarter of them in a full scramble whose tail answers (measured: fewer
 * nodes above the tail than with a third, 22% fewer instructions on the slow N = 64
 * scrambles), else a third. */
static int tail_head(const eo__bal *b)
{
    if (b->mode != EO_BALANCE_SCRAMBLE || b->allow_split || b->tail_items <= 0)
        return 0;
    int no_pref = 1;
    for (int i = 0; i < b->n; i++)
        no_pref &= b->prefer[i] == EO__SIDE_BENCH;
    return 2 * b->k == b->n && no_pref ? b->m / 4 : b->m / 3;
}

/* The tables that do not depend on the statuses or the question (item order, sorted prefix
 * sums, current teams, preferences), built at the call's first question into b->scratch, and
 * again when a team size wants another order (tail_head()); NULL when out of memory. */
static bs *prepare(eo__bal *b)
{
    bs *s = b->scratch;
    int head = tail_head(b);
    if (s && s->head == head)
        return s;
    if (!s) {
        if (!(s = malloc(sizeof *s)))
            return NULL;
        b->scratch = s;
        s->tail = NULL;
        s->dp.p = NULL;
        s->dp.cap = 0;
    }
    s->head = head;
    s->b = b;
    s->m = b->m;
    s->gap_only = gap_only(b);
    s->try_end = 0;
    s->tail_j = s->tail_base = -1;
    s->no_pref = 1;
    for (int i = 0; i < b->n; i++)
        s->no_pref &= b->prefer[i] == EO__SIDE_BENCH;
    for (int i = 0; i < b->n; i++)
        s->by_q[i] = (uint8_t)b->best[i];
    int64_t sum[NMAX];
    for (int t = 0; t < b->m; t++) {
        sum[t] = 0;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            sum[t] += b->q[b->mem[u]];
        eo__insert_by_key_desc(s->order, t, t, sum);
    }
    if (head > 0)
        tail_order(b, head, s->order);
    /* sorted members of the items from j on, built from the last item backwards */
    int64_t qsum = 0;
    for (int i = 0; i < b->n; i++)
        qsum += b->qs[i];
    s->mid = (qsum + b->n / 2) / b->n;
    int64_t zs[NMAX]; /* (qs - mid)² of the members so far, descending */
    int si[NMAX]; /* members so far, by q descending */
    int64_t la[NMAX], lb[NMAX]; /* q of the current-A (current-B) members so far, descending */
    int64_t sqa = 0, sqb = 0, sqn = 0;
    int cn = 0;
    int ca = 0, cb = 0, pa = 0, pb = 0, sat = 0;
    for (int j = b->m; j >= 0; j--) {
        if (j < b->m) {
            int it = s->order[j];
            for (int u = b->istart[it]; u < b->istart[it + 1]; u++) {
                int i = b->mem[u];
                int64_t q = b->q[i];
                eo__insert_desc(zs, cn, (b->qs[i] - s->mid) * (b->qs[i] - s->mid));
                eo__insert_by_key_desc(si, cn++, i, b->q);
                if (b->team[i] == EO__SIDE_A)
                    eo__insert_desc(la, ca, q);
                else if (b->team[i] == EO__SIDE_B)
                    eo__insert_desc(lb, cb, q);
                sqa += b->team[i] == EO__SIDE_A ? q : 0;
                sqb += b->team[i] == EO__SIDE_B ? q : 0;
                sqn += b->team[i] == EO__SIDE_BENCH ? q : 0;
                ca += b->team[i] == EO__SIDE_A;
                cb += b->team[i] == EO__SIDE_B;
                pa += b->prefer[i] == EO__SIDE_A;
                pb += b->prefer[i] == EO__SIDE_B;
                sat += b->sat_out[i] != 0;
            }
        }
        s->cnt[j] = cn;
        s->pq[j][0] = s->ps[j][0] = s->px[j][0] = s->pz[j][0] = 0;
        for (int x = 0; x < cn; x++) {
            s->pz[j][x + 1] = s->pz[j][x] + zs[x];
            /* q is shifted to the minimum, so qs = q >> shift keeps q's order */
            int64_t qs = b->qs[si[x]];
            s->pq[j][x + 1] = s->pq[j][x] + b->q[si[x]];
            s->ps[j][x + 1] = s->ps[j][x] + qs;
            s->px[j][x + 1] = s->px[j][x] + qs * qs;
        }
        s->cura[j] = ca;
        s->curb[j] = cb;
        s->qa[j] = sqa;
        s->qb[j] = sqb;
        s->qn[j] = sqn;
        s->ma2[j][0] = s->mb2[j][0] = 0;
        for (int x = 0; x < ca; x++)
            s->ma2[j][x + 1] = s->ma2[j][x] + 2 * la[x];
        for (int x = 0; x < cb; x++)
            s->mb2[j][x + 1] = s->mb2[j][x] + 2 * lb[x];
        s->prefa[j] = pa;
        s->prefb[j] = pb;
        s->sat[j] = sat;
    }
    s->top_pos = 0;
    for (int j = 0; j < b->m; j++)
        if (s->order[j] == b->item_of[b->best[0]] || s->order[j] == b->item_of[b->best[1]])
            s->top_pos = j;
    int64_t g = 0;
    s->spread_d = 1;
    for (int i = 0; i < b->n; i++) {
        g = eo__gcd64(b->q[i], g);
        s->spread_d &= b->qs[i] == b->q[i];
    }
    s->mod = 2 * g;
    return s;
}

void eo__bal_search_free(eo__bal *b)
{
    if (b->scratch) {
        free(b->scratch->dp.p);
        eo__bal_tail_free(b->scratch->tail);
    }
    free(b->scratch);
    b->scratch = NULL;
}

/* A gap-only question by split_dp.c's table: 1 with side[] and *best (a split of least
 * |D| <= max_gap), 0 when none, -1 when the table cannot tell (too wide, out of memory),
 * EO_ELIMIT when its cost would pass the work limit. Its cost (eo__split_dp_words(), in
 * words) counts against the work limit as one node per 16 words. */
static int by_table(bs *s, int64_t max_gap, eo__bal_vec best, uint8_t *side)
{
    eo__bal *b = s->b;
    eo__split_prob p;
    memset(&p, 0, sizeof p);
    p.n = b->n;
    p.k = b->k;
    p.q = b->q;
    p.order = s->by_q;
    for (int i = 0; i < b->n; i++)
        p.status[i] = b->ist[b->item_of[i]]; /* EO__BS_* and EO__SP_* are the same codes */
    p.dp_buf = &s->dp;
    p.offset = b->field;
    uint64_t cost = eo__split_dp_words(&p, max_gap);
    if (cost == 0)
        return -1;
    uint64_t nodes = cost / 16 + 1;
    if (b->work_limit && b->work + nodes > b->work_limit)
        return EO_ELIMIT;
    b->work += nodes;
    eo__split_sol sol;
    int rc = eo__split_dp(&p, max_gap, &sol);
    if (rc != 1)
        return rc;
    for (int i = 0; i < b->n; i++)
        side[i] = (sol.a >> i & 1)   ? EO__SIDE_A
                  : (sol.b >> i & 1) ? EO__SIDE_B
                                     : EO__SIDE_BENCH;
    eo__bal_eval(b, side, best);
    return 1;
}

/* The statuses' counts over the items order[j..] (members that must play, on A, on B). */
static void status_counts(bs *s)
{
    const eo__bal *b = s->b;
    int mp = 0, ma = 0, mb = 0;
    s->mustp[b->m] = s->musta[b->m] = s->mustb[b->m] = 0;
    for (int j = b->m - 1; j >= 0; j--) {
        int it = s->order[j], st = b->ist[it], sz = b->istart[it + 1] - b->istart[it];
        mp += st == EO__BS_PLAY || st == EO__BS_A || st == EO__BS_B ? sz : 0;
        ma += st == EO__BS_A ? sz : 0;
        mb += st == EO__BS_B ? sz : 0;
        s->mustp[j] = mp;
        s->musta[j] = ma;
        s->mustb[j] = mb;
    }
}

/* The tail for this question (s->tail_j; tail() builds or pins its lists when a node reaches
 * it), when it fits: a full scramble (2k = n, parties whole, no side preference; every
 * completion's vector is then (top2, spread, dev)) whose spread term counts (step 1's question
 * of the gap alone is the search's: its window is all of |D|), with the two best players' items
 * above the tail so that top2 is settled there. (In rebalance the search's moves bound cuts
 * deep in the tree, which a tail would skip: it was measured slower.) */
static void tail_lists(bs *s)
{
    const eo__bal *b = s->b;
    s->tail_j = -1;
    s->tail_built = s->tail_pin = 0;
    s->aim_x = 0;
    int j = b->m - b->tail_items;
    if (b->active[EO__BT_SPREAD] && 2 * b->k == b->n && s->spread_d) {
        /* everyone plays: the window of D = 0 is centred on X = -field S / k */
        s->aim_x = 1;
        s->x_mid = -b->field * s->ps[0][s->cnt[0]] / b->k;
    }
    if (b->tail_items <= 0 || !b->active[EO__BT_SPREAD] || b->allow_split || 2 * b->k != b->n ||
        !s->no_pref || j <= s->top_pos)
        return;
    /* as many items as the count-limited lists allow within TAIL_ROOM entries a half (at
     * least tail_items): the members pinned above the tail leave the tail fewer places */
    int pa[NMAX + 1], pb[NMAX + 1];
    pa[0] = pb[0] = 0;
    for (int y = 0; y < b->m; y++) {
        int it = s->order[y], sz = b->istart[it + 1] - b->istart[it];
        pa[y + 1] = pa[y] + (b->ist[it] == EO__BS_A ? sz : 0);
        pb[y + 1] = pb[y] + (b->ist[it] == EO__BS_B ? sz : 0);
    }
    size_t room = (size_t)1 << (b->tail_items / 2);
    room = room > TAIL_ROOM ? room : TAIL_ROOM;
    for (int h = b->m - s->top_pos - 1; h >= b->tail_items; h--) {
        int jj = b->m - h, jb = s->tail_base;
        eo__bal_lim lim = {b->k - pa[jj], b->k - pb[jj], b->n, INT64_MAX};
        if (eo__bal_tail_fits(b, s->order + jj, h, &lim, room) != 0)
            continue;
        s->tail_lim = lim;
        s->tail_room = room;
        /* an earlier question's lists, when they still serve and the tail they hold is not
         * much shorter: one pass drops the entries that later pins rule out, where a build
         * takes one merge pass per item */
        s->tail_pin = jb >= jj && jb - jj <= TAIL_REGROW &&
                      eo__bal_tail_pins(s->tail, b, s->order + jb, b->m - jb) >= 0;
        s->tail_j = s->tail_pin ? jb : jj;
        return;
    }
}

int eo__bal_root_bound(eo__bal *b, int64_t dev_max, eo__bal_vec L, int64_t *vdiff, double *sdiff)
{
    bs *s = prepare(b);
    if (!s)
        return EO_ENOMEM;
    status_counts(s);
    memset(s->side, EO__SIDE_BENCH, sizeof s->side);
    s->dev_max = dev_max;
    state c;
    memset(&c, 0, sizeof c);
    *vdiff = 0;
    *sdiff = 0;
    if (!bound(s, 0, &c, L))
        return 0;
    sbox x = spread_box(s, 0, &c, b->k, b->k);
    *vdiff = vdiff_lb(b, &x);
    *sdiff = (double)*vdiff / (double)sd_sum_hi(s, 0, &c, b->k, b->k);
    return 1;
}

int eo__bal_search(eo__bal *b, int64_t dev_max, int feas, eo__bal_vec best, uint8_t *side)
{
    if (b->n > NMAX || b->m > NMAX)
        return EO_EINVAL;
    bs *s = prepare(b);
    if (!s)
        return EO_ENOMEM;
    status_counts(s);
    tail_lists(s);
    memset(s->side, EO__SIDE_BENCH, sizeof s->side);
    for (int t = 0; t < b->npart; t++)
        s->pmask[t] = 0;
    s->dev_max = dev_max;
    s->feas = feas == 1;
    s->found = feas == 2; /* seeded: *best and side[] hold an incumbent */
    s->done = s->err = s->mid_stop = 0;
    s->mid_at = b->midway ? b->work + b->mid_work : 0;
    s->best = best;
    s->out_side = side;
    s->have_root = 0;
    state c;
    memset(&c, 0, sizeof c);
    /* A gap-only question (the other terms are 0 in every split, and in *best when it bounds
     * a feasibility question): the search within a budget, as split.c runs its questions;
     * past it the table answers exactly, and where it cannot tell the search goes on. */
    int64_t max_gap = dev_max;
    int table = s->gap_only && b->n <= EO__SPLIT_N;
    for (int t = 0; table && feas != 0 && t < EO__BT_DEV; t++)
        table = !b->active[t] || best[t] == 0;
    if (table && feas != 0 && best[EO__BT_DEV] < max_gap)
        max_gap = best[EO__BT_DEV];
    if (table) {
        s->gave_up = 0;
        s->try_end = b->work + (b->dp_try ? b->dp_try : DP_TRY_MIN);
        dfs(s, 0, &c);
        s->try_end = 0;
        if (!s->gave_up) {
            b->found = s->found;
            return s->err ? s->err : s->found;
        }
        int rc = by_table(s, max_gap, best, side);
        if (rc == 1 || rc == EO_ELIMIT || (rc == 0 && feas != 2)) {
            b->found = rc == 1 || (rc == EO_ELIMIT && s->found);
            return rc;
        }
        /* The table cannot tell: the search from the start, unbudgeted, keeping what the
         * budgeted one found as its incumbent (s->found: side[] and *best hold a split within
         * dev_max; never for a feasibility question, which stops at its first split). */
        s->done = s->err = 0;
        s->have_root = 0;
        memset(s->side, EO__SIDE_BENCH, sizeof s->side);
        memset(&c, 0, sizeof c);
    }
    dfs(s, 0, &c);
    b->found = s->found && !s->mid_stop;
    return s->err ? s->err : s->mid_stop ? 2 : s->found;
}
