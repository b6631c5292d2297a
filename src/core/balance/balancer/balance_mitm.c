/* Meet in the middle for scramble mode when everyone plays (balance_internal.h,
 * docs/BALANCER.md "The balancer", "Scramble with everyone playing").
 *
 * When 2k = N, parties may not be split and nobody has a side preference, every split plays
 * everyone, so the terms broken, moves, denied and bench_again are 0 (or inactive) and the
 * objective vector is (top2, spread, dev). The free items (not pinned to a side) are cut into
 * two halves; every side assignment of each half is listed with its member count on A, its q
 * difference d, its spread-scale difference δ and its Σqs² difference X. The right half's list
 * is built sorted by d (merging, as split_mitm.c) and grouped by count; each left entry meets
 * the right entries of the complementary count whose d keeps |D| <= T (a binary search, then a
 * walk), and each pair's vector is computed exactly. The least vector, and among splits of that vector the one whose team A comes first in
 * request order (everyone plays, so that is the whole tie rule), is the rules' answer: every
 * split within T is one pair, so nothing is missed. */
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"

#define HALF_MAX 17 /* 2^17 entries a half at most: 4 lists of 32-byte entries, ~17 MB */

typedef eo__bal_ent ent;

/* What an item adds to an entry: its sums and members, whether it holds the two best players,
 * and on each side (0: A, 1: B) the moves and the denied preference weight it costs. */
typedef struct part {
    int64_t q, qs, x, dn[2];
    int sz, h1, h2, mv[2];
} part;

static part part_of(const eo__bal *b, int t)
{
    part p;
    memset(&p, 0, sizeof p);
    for (int u = b->istart[t]; u < b->istart[t + 1]; u++) {
        int i = b->mem[u];
        p.q += b->q[i];
        p.qs += b->qs[i];
        p.x += b->qs[i] * b->qs[i];
        p.sz++;
        p.h1 |= i == b->best[0];
        p.h2 |= i == b->best[1];
        for (int sd = 0; sd < 2; sd++) {
            p.mv[sd] += b->team[i] != EO__SIDE_BENCH && b->team[i] != EO__SIDE_A + sd;
            p.dn[sd] +=
                b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != EO__SIDE_A + sd ? b->w[i] : 0;
        }
    }
    return p;
}

/* What putting the list's item y (p) on side sd adds to an entry: the sums, members, moves,
 * denied weight and mask bit as increments; h1, h2 (the two best players' sides) are set, not
 * added. */
typedef struct step {
    ent add;
    int h1, h2;
    uint8_t sd;
} step;

static step step_of(int y, int sd, const part *p)
{
    step st;
    int sg = sd == EO__SIDE_A ? 1 : -1, x = sd == EO__SIDE_A ? 0 : 1;
    memset(&st, 0, sizeof st);
    st.add.d = sg * p->q;
    st.add.ds = (int32_t)(sg * p->qs);
    st.add.x = sg * p->x;
    st.add.mv = (uint8_t)p->mv[x];
    st.add.dn = (int32_t)p->dn[x];
    st.add.na = (uint8_t)(sd == EO__SIDE_A ? p->sz : 0);
    st.add.mask = sd == EO__SIDE_A ? UINT32_C(1) << y : 0;
    st.h1 = p->h1;
    st.h2 = p->h2;
    st.sd = (uint8_t)sd;
    return st;
}

/* *o = *c with step st taken (built in registers and stored once: the lists' inner loop). */
static inline void put(ent *o, const ent *c, const step *st)
{
    ent e = *c;
    e.d += st->add.d;
    e.ds += st->add.ds;
    e.x += st->add.x;
    e.dn += st->add.dn;
    e.mask |= st->add.mask;
    e.na = (uint8_t)(e.na + st->add.na);
    e.mv = (uint8_t)(e.mv + st->add.mv);
    if (st->h1)
        e.s1 = st->sd;
    if (st->h2)
        e.s2 = st->sd;
    *o = e;
}

/* eo__bal_list_room() by members on A alone (no moves or denials to limit). */
static size_t room_by_count(const eo__bal *b, const int *it, int h, const eo__bal_lim *lim)
{
    uint64_t cnt[EO__BAL_N + 1] = {1}, most = 1, cap = (uint64_t)1 << 40;
    int placed = 0, nas = lim->na < b->n ? lim->na : b->n;
    for (int y = 0; y < h; y++) {
        int sz = b->istart[it[y] + 1] - b->istart[it[y]];
        uint64_t total = 0;
        placed += sz;
        for (int na = nas; na >= 0; na--) { /* in place: cnt[na - sz] is still the old */
            uint64_t v = placed - na <= lim->nb && na <= placed ? cnt[na] : 0;
            if (na >= sz)
                v += cnt[na - sz];
            cnt[na] = v < cap ? v : cap;
            total += cnt[na];
        }
        most = total > most ? total : most;
    }
    return most < cap ? (size_t)most : (size_t)cap;
}

size_t eo__bal_list_room(const eo__bal *b, const int *it, int h, const eo__bal_lim *lim)
{
    if (lim->mv >= b->n && lim->dn == INT64_MAX) /* nothing to count but members */
        return room_by_count(b, it, h, lim);
    /* entries by (members on A, players moved); an item whose side alone denies more than the
     * limit cannot take it */
    int mvs = (lim->mv < b->n ? lim->mv : b->n) + 1;
    int nas = (lim->na < b->n ? lim->na : b->n) + 1;
    uint64_t cnt[(EO__BAL_EXACT + 1) * (EO__BAL_EXACT + 1)], most = 1, cap = (uint64_t)1 << 40;
    memset(cnt, 0, sizeof cnt[0] * (size_t)(nas * mvs));
    cnt[0] = 1;
    int placed = 0;
    for (int y = 0; y < h; y++) {
        part p = part_of(b, it[y]);
        uint64_t total = 0;
        placed += p.sz;
        for (int na = nas - 1; na >= 0; na--) /* in place: na - sz is still the old row */
            for (int mv = mvs - 1; mv >= 0; mv--) {
                uint64_t v = 0;
                if (placed - na <= lim->nb && na <= placed && mv >= p.mv[1] && p.dn[1] <= lim->dn)
                    v += cnt[na * mvs + mv - p.mv[1]]; /* the item on B */
                if (na >= p.sz && mv >= p.mv[0] && p.dn[0] <= lim->dn)
                    v += cnt[(na - p.sz) * mvs + mv - p.mv[0]]; /* on A */
                cnt[na * mvs + mv] = v < cap ? v : cap;
                total += cnt[na * mvs + mv];
            }
        most = total > most ? total : most;
    }
    return most < cap ? (size_t)most : (size_t)cap;
}

int eo__bal_list_ok(const eo__bal *b)
{
    int64_t w = 0;
    for (int i = 0; i < b->n; i++)
        w += b->w[i];
    return w < INT32_MAX;
}

/* 1 when entry e with n members on the item's side cannot take it: past the side's limits. */
static inline int over(int n, const ent *e, int nmax, int mvmax, int64_t dnmax)
{
    return n > nmax || e->mv > mvmax || e->dn > dnmax;
}

size_t eo__bal_list(const eo__bal *b, const int *it, int h, const eo__bal_lim *lim, ent *e,
                    ent *tmp)
{
    /* each item swaps the buffers: start in the one that ends as e */
    ent *cur = h % 2 ? tmp : e, *nx = h % 2 ? e : tmp;
    memset(&cur[0], 0, sizeof cur[0]);
    size_t cnt = 1;
    int placed = 0; /* members of the items so far: those on B are placed - na */
    for (int y = 0; y < h; y++) {
        part p = part_of(b, it[y]);
        step sa = step_of(y, EO__SIDE_A, &p), sb = step_of(y, EO__SIDE_B, &p);
        /* an entry takes the item on A (B) while na (nb), moves and denials stay in the limits;
         * the limits as locals: the stores below may alias lim for the compiler */
        int namax = lim->na - p.sz, nbmax = lim->nb - p.sz;
        int mvamax = lim->mv - p.mv[0], mvbmax = lim->mv - p.mv[1];
        int64_t dnamax = lim->dn - p.dn[0], dnbmax = lim->dn - p.dn[1], q = p.q, x = p.x;
        size_t pb = 0, pa = 0, o = 0;
        while (pb < cnt && over(placed - cur[pb].na, &cur[pb], nbmax, mvbmax, dnbmax))
            pb++;
        while (pa < cnt && over(cur[pa].na, &cur[pa], namax, mvamax, dnamax))
            pa++;
        while (pb < cnt || pa < cnt) { /* pb, pa: the next entries that may take B, A */
            int b_first = pa >= cnt;
            if (!b_first && pb < cnt) {
                int64_t db = cur[pb].d - q, da = cur[pa].d + q;
                b_first = db < da || (db == da && cur[pb].x - x <= cur[pa].x + x);
            }
            if (b_first) {
                put(&nx[o++], &cur[pb++], &sb);
                while (pb < cnt && over(placed - cur[pb].na, &cur[pb], nbmax, mvbmax, dnbmax))
                    pb++;
            } else {
                put(&nx[o++], &cur[pa++], &sa);
                while (pa < cnt && over(cur[pa].na, &cur[pa], namax, mvamax, dnamax))
                    pa++;
            }
        }
        ent *sw = cur;
        cur = nx;
        nx = sw;
        cnt = o;
        placed += p.sz;
    }
    return cnt;
}

void eo__bal_group(const ent *src, size_t cnt, ent *dst, int *start, int nmax)
{
    memset(start, 0, sizeof(int) * (size_t)(nmax + 2));
    for (size_t r = 0; r < cnt; r++)
        start[src[r].na + 1]++;
    for (int c = 0; c <= nmax; c++)
        start[c + 1] += start[c];
    int fill[EO__BAL_N + 1];
    memcpy(fill, start, sizeof(int) * (size_t)(nmax + 1));
    for (size_t r = 0; r < cnt; r++)
        dst[fill[src[r].na]++] = src[r];
}

void eo__bal_sides(const eo__bal *b, const int *il, int hl, uint32_t ml, const int *ir, int hr,
                   uint32_t mr, uint8_t *side)
{
    for (int t = 0; t < b->m; t++)
        if (b->ist[t] == EO__BS_A || b->ist[t] == EO__BS_B)
            for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
                side[b->mem[u]] = b->ist[t] == EO__BS_A ? EO__SIDE_A : EO__SIDE_B;
    for (int y = 0; y < hl + hr; y++) {
        int t = y < hl ? il[y] : ir[y - hl];
        int on_a = y < hl ? (ml >> y) & 1 : (mr >> (y - hl)) & 1;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            side[b->mem[u]] = on_a ? EO__SIDE_A : EO__SIDE_B;
    }
}

int eo__bal_before(int n, const uint8_t *x, const uint8_t *y)
{
    for (int i = 0; i < n; i++)
        if (x[i] != y[i])
            return x[i] == EO__SIDE_A;
    return 0;
}

int eo__bal_mitm(eo__bal *b, int64_t T, eo__bal_vec best, uint8_t *side)
{
    int n = b->n, k = b->k;
    if (b->mode != EO_BALANCE_SCRAMBLE || b->allow_split || 2 * k != n || b->no_mitm ||
        !eo__bal_list_ok(b))
        return 2;
    for (int i = 0; i < n; i++)
        if (b->prefer[i] != EO__SIDE_BENCH)
            return 2;
    int fr[EO__BAL_N], nf = 0, na0 = 0;
    int64_t d0 = 0, ds0 = 0, x0 = 0, S = 0;
    int b1 = b->best[0], b2 = b->best[1];
    uint8_t s10 = 0, s20 = 0;
    for (int t = 0; t < b->m; t++) {
        int st = b->ist[t];
        if (st == EO__BS_BENCH)
            return 2;
        if (st == EO__BS_FREE || st == EO__BS_PLAY) {
            fr[nf++] = t;
            continue;
        }
        int sg = st == EO__BS_A ? 1 : -1;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++) {
            int i = b->mem[u];
            d0 += sg * b->q[i];
            ds0 += sg * b->qs[i];
            x0 += sg * b->qs[i] * b->qs[i];
            na0 += st == EO__BS_A;
            if (i == b1)
                s10 = st == EO__BS_A ? EO__SIDE_A : EO__SIDE_B;
            if (i == b2)
                s20 = st == EO__BS_A ? EO__SIDE_A : EO__SIDE_B;
        }
    }
    int64_t XT = 0; /* everyone plays: Σqs and Σqs² of A are (S + δ) / 2 and (XT + X) / 2 */
    for (int i = 0; i < n; i++) {
        S += b->qs[i];
        XT += b->qs[i] * b->qs[i];
    }
    int hl = nf / 2, hr = nf - hl;
    if (hr > HALF_MAX)
        return 2;
    size_t nl = (size_t)1 << hl, nr = (size_t)1 << hr;
    ent *el = malloc(sizeof(ent) * (nl + 3 * nr));
    if (!el)
        return EO_ENOMEM;
    ent *er = el + nl, *rs = er + nr, *tmp = rs + nr;
    eo__bal_lim all = {n, n, n, INT64_MAX};
    eo__bal_list(b, fr, hl, &all, el, tmp);
    eo__bal_list(b, fr + hl, hr, &all, rs, tmp);
    int start[EO__BAL_N + 2]; /* right entries with na = c: er[start[c] .. start[c+1]), by d */
    eo__bal_group(rs, nr, er, start, n);
    /* the pairs to visit, counted first against the work limit */
    uint64_t pairs = 0;
    size_t *lo = malloc(sizeof(size_t) * 2 * nl);
    if (!lo) {
        free(el);
        return EO_ENOMEM;
    }
    size_t *hi = lo + nl;
    for (size_t l = 0; l < nl; l++) {
        int c = k - na0 - el[l].na;
        lo[l] = hi[l] = 0;
        if (c < 0 || c > n)
            continue;
        /* right d in [-T - field - d0 - dL, T - field - d0 - dL] */
        int64_t base = b->field + d0 + el[l].d, dmin = -T - base, dmax = T - base;
        size_t a = (size_t)start[c], z = (size_t)start[c + 1];
        while (a < z) {
            size_t mid = a + (z - a) / 2;
            if (er[mid].d < dmin)
                a = mid + 1;
            else
                z = mid;
        }
        lo[l] = a;
        z = (size_t)start[c + 1];
        size_t e = a;
        while (e < z) {
            size_t mid = e + (z - e) / 2;
            if (er[mid].d <= dmax)
                e = mid + 1;
            else
                z = mid;
        }
        hi[l] = e;
        pairs += e - a;
    }
    b->work += nl + nr + pairs;
    if (b->work_limit && b->work > b->work_limit) {
        free(lo);
        free(el);
        return EO_ELIMIT;
    }
    int found = 0;
    eo__bal_vec v;
    memset(v, 0, sizeof v);
    uint8_t cand[EO__BAL_N];
    for (size_t l = 0; l < nl; l++)
        for (size_t r = lo[l]; r < hi[l]; r++) {
            const ent *x = &el[l], *y = &er[r];
            uint8_t s1 = s10 | x->s1 | y->s1, s2 = s20 | x->s2 | y->s2;
            v[EO__BT_TOP2] = s1 == s2;
            int64_t ds = ds0 + x->ds + (int64_t)y->ds, xx = x0 + x->x + y->x;
            v[EO__BT_SPREAD] =
                eo__bal_spread(b, (S + ds) / 2, (S - ds) / 2, (XT + xx) / 2, (XT - xx) / 2);
            v[EO__BT_DEV] = eo__abs64(d0 + x->d + y->d + b->field);
            int c = found ? eo__bal_cmp(b, v, best) : -1;
            if (c > 0)
                continue;
            eo__bal_sides(b, fr, hl, x->mask, fr + hl, hr, y->mask, cand);
            if (c == 0 && !eo__bal_before(n, cand, side))
                continue;
            memcpy(best, v, sizeof v);
            memcpy(side, cand, (size_t)n);
            found = 1;
        }
    free(lo);
    free(el);
    if (found)
        eo__bal_eval(b, side, best); /* every term, for the caller's check */
    return found;
}
