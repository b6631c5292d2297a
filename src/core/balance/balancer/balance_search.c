/* Exact branch and bound of the balancer (balance_internal.h): items (unsplittable parties or
 * single players) by rating sum, highest first, each put on A, B or the bench as its status
 * allows. A node is cut when the split cannot reach |D| <= dev_max, or when a lower bound of the
 * objective vector (every term bounded from below separately, see bound()) cannot beat the best
 * found (least-vector questions) or stay within the given vector (feasibility questions).
 * Correctness needs only that every bound is a true lower bound; the order of the choices only
 * changes the speed. */
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"
#include "core/balance/split/split_internal.h"

#define NMAX EO__BAL_EXACT
/* Least search budget of a gap-only question before the table answers (split.c's rule). */
#define DP_TRY_MIN 20000

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
    uint8_t by_q[NMAX];  /* players by q descending, ties by index (the table's order) */
    eo__split_buf dp;    /* the table's memory, kept across questions */
} bs;

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
    out[EO__BT_SPREAD] = eo__abs64((int64_t)b->k * (xa - xb) - (sa - sb) * (sa + sb));
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
    L[EO__BT_TOP2] = 0;
    L[EO__BT_SPREAD] = 0;
    if (b->active[EO__BT_SPREAD]) {
        /* V = k X - δ S with X = Σqs^2(A) - Σqs^2(B), δ = Σqs(A) - Σqs(B), S = Σqs(A) + Σqs(B):
         * each of X, δ, S bounded on its own, then interval arithmetic */
        const int64_t *PS = s->ps[j], *PX = s->px[j];
        int64_t xhi = c->xa - c->xb + PX[ka] - (PX[cn] - PX[cn - kb]);
        int64_t xlo = c->xa - c->xb + (PX[cn] - PX[cn - ka]) - PX[kb];
        int64_t dhi = c->sa - c->sb + PS[ka] - (PS[cn] - PS[cn - kb]);
        int64_t dlo = c->sa - c->sb + (PS[cn] - PS[cn - ka]) - PS[kb];
        if (s->spread_d) { /* δ = d and |d + field| <= dev_max at every leaf */
            int64_t dmin = -s->dev_max - b->field, dmax = s->dev_max - b->field;
            dlo = dlo > dmin ? dlo : dmin;
            dhi = dhi < dmax ? dhi : dmax;
        }
        int64_t slo = c->sa + c->sb + (PS[cn] - PS[cn - need]);
        int64_t shi = c->sa + c->sb + PS[need];
        int64_t plo = min4(dlo * slo, dlo * shi, dhi * slo, dhi * shi);
        int64_t phi = max4(dlo * slo, dlo * shi, dhi * slo, dhi * shi);
        L[EO__BT_SPREAD] = eo__least_abs((int64_t)k * xlo - phi, (int64_t)k * xhi - plo);
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
    b->work++;
    eo__bal_vec L;
    if (!bound(s, j, c, L))
        return;
    if (s->feas ? eo__bal_cmp(b, L, s->best) > 0 : s->found && eo__bal_cmp(b, L, s->best) >= 0)
        return;
    if (j == 0 && !s->have_root) {
        memcpy(s->root, L, sizeof L);
        s->have_root = 1;
    }
    if (j == s->m) {
        leaf(s);
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
    int64_t key1[3], key2[3];
    int ka = b->k - c->na, kb = b->k - c->nb, left = s->cnt[j] - sz;
    int64_t rest = s->pq[j + 1][s->cnt[j + 1]], scale = left > 0 ? left : 1;
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
        key2[x] = eo__abs64((e->d + b->field) * scale + (int64_t)(ka1 - kb1) * rest);
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

/* The tables that do not depend on the statuses or the question (item order, sorted prefix
 * sums, current teams, preferences), built once per call into b->scratch; NULL when out of
 * memory. */
static bs *prepare(eo__bal *b)
{
    if (b->scratch)
        return b->scratch;
    bs *s = malloc(sizeof *s);
    if (!s)
        return NULL;
    b->scratch = s;
    s->b = b;
    s->m = b->m;
    s->gap_only = gap_only(b);
    s->try_end = 0;
    s->dp.p = NULL;
    s->dp.cap = 0;
    for (int i = 0; i < b->n; i++)
        s->by_q[i] = (uint8_t)b->best[i];
    int64_t sum[NMAX];
    for (int t = 0; t < b->m; t++) {
        sum[t] = 0;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            sum[t] += b->q[b->mem[u]];
        eo__insert_by_key_desc(s->order, t, t, sum);
    }
    /* sorted members of the items from j on, built from the last item backwards */
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
        s->pq[j][0] = s->ps[j][0] = s->px[j][0] = 0;
        for (int x = 0; x < cn; x++) {
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
    if (b->scratch)
        free(b->scratch->dp.p);
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

int eo__bal_search(eo__bal *b, int64_t dev_max, int feas, eo__bal_vec best, uint8_t *side)
{
    if (b->n > NMAX || b->m > NMAX)
        return EO_EINVAL;
    bs *s = prepare(b);
    if (!s)
        return EO_ENOMEM;
    /* the statuses' counts over the items order[j..] */
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
    memset(s->side, EO__SIDE_BENCH, sizeof s->side);
    for (int t = 0; t < b->npart; t++)
        s->pmask[t] = 0;
    s->dev_max = dev_max;
    s->feas = feas == 1;
    s->found = feas == 2; /* seeded: *best and side[] hold an incumbent */
    s->done = s->err = 0;
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
        if (!s->gave_up)
            return s->err ? s->err : s->found;
        int rc = by_table(s, max_gap, best, side);
        if (rc == 1 || rc == EO_ELIMIT || (rc == 0 && feas != 2))
            return rc;
        /* The table cannot tell: the search from the start, unbudgeted, keeping what the
         * budgeted one found as its incumbent (s->found: side[] and *best hold a split within
         * dev_max; never for a feasibility question, which stops at its first split). */
        s->done = s->err = 0;
        s->have_root = 0;
        memset(s->side, EO__SIDE_BENCH, sizeof s->side);
        memset(&c, 0, sizeof c);
    }
    dfs(s, 0, &c);
    return s->err ? s->err : s->found;
}
