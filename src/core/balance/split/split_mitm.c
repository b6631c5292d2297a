/* Exact answers for questions whose playing set is (almost) fixed (see split_internal.h).
 *
 * Late in the greedy of split.c most questions have every player decided but the sides of the
 * PLAY players, and at most one FREE player still to join. Proving "no" by branch and bound
 * visits most of the 2^h side assignments of the h PLAY players; meet in the middle splits them
 * into two halves of 2^(h/2) assignments each, sorted by (players on A, difference), and one
 * merge per count finds whether two halves add up to a gap within the target. Exact both ways.
 *
 * The same halves give team A directly once the playing set is fixed (eo__split_teams). */
#include "split_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/balance/common.h"

#define HALF_MAX (1 << EO__SPLIT_MITM_HALF)

typedef struct half {
    int64_t d[HALF_MAX];
    uint16_t m[HALF_MAX]; /* bit y: the y-th player of the half on A */
} half;

/* Lexicographically first team A (bit y of m1: the y-th player of the first part on A; of
 * m2: the y-th of the second part) among the splits with a difference in [lo, hi]. */
#define TEAMS_SECOND 8 /* players in the listed second part: 2^8 entries */
#define TEAMS_FIRST (2 * EO__SPLIT_MITM_HALF - TEAMS_SECOND)
#define TEAMS_SLOTS 1024 /* a power of two, 4 x 2^TEAMS_SECOND: probes stay short */
#define TEAMS_HASH_G 4    /* the hash table serves targets g <= this: 2g + 1 lookups a leaf */
typedef struct teams {
    const int64_t *q;
    const uint8_t *pl; /* the playing players, by index */
    int h1, h2, k;
    int64_t lo, hi;
    const half *r;
    int sr[EO__SPLIT_MITM_HALF + 2];
    int64_t gmin[EO__SPLIT_MITM_HALF + 1], gmax[EO__SPLIT_MITM_HALF + 1]; /* per na group */
    /* low[y][c] (high[y][c]): sum of the c lowest (highest) q among the first part from y on */
    int64_t low[TEAMS_FIRST + 1][TEAMS_FIRST + 1], high[TEAMS_FIRST + 1][TEAMS_FIRST + 1];
    int found;
    uint16_t m1, m2;
    /* With a small target (hashed = 1) the second part is kept in a hash table instead of the
     * sorted list r: one entry per (na, d), holding the lexicographically first m with them
     * (open addressing, linear probing, at most 2^8 of TEAMS_SLOTS slots in use). */
    int hashed;
    uint8_t used[TEAMS_SLOTS], hna[TEAMS_SLOTS];
    uint16_t hm[TEAMS_SLOTS];
    int64_t hd[TEAMS_SLOTS];
} teams;

struct eo__split_scratch {
    half l, r, tmp;
    teams t;
    eo__split_table tab[2]; /* for split.c */
};

/* Offsets of the groups of a list of all side assignments of h players: the assignments with
 * na players on A are entries start[na] .. start[na + 1] - 1 (C(h, na) of them). */
static void groups(int h, int *start)
{
    int c = 1; /* C(h, na) */
    start[0] = 0;
    for (int na = 0; na <= h; na++) {
        start[na + 1] = start[na] + c;
        c = c * (h - na) / (na + 1);
    }
}

/* All side assignments of the players who[0..h-1], grouped by na and sorted by d within each
 * group: each player doubles the list, group na of the new list merging the old group na (he
 * is on B: d - q) with the old group na - 1 (on A: d + q). */
static void build(half *out, half *tmp, const int64_t *q, const uint8_t *who, int h)
{
    half *cur = out, *nxt = tmp;
    if (h % 2) { /* so that the last merge lands in out */
        cur = tmp;
        nxt = out;
    }
    int so[EO__SPLIT_MITM_HALF + 3], sn[EO__SPLIT_MITM_HALF + 3];
    cur->d[0] = 0;
    cur->m[0] = 0;
    groups(0, so);
    for (int y = 0; y < h; y++) {
        int64_t v = q[who[y]];
        uint16_t bit = (uint16_t)(1u << y);
        /* groups(y + 1) from groups(y) by Pascal's rule, without groups()'s divisions:
         * start'[na] = start[na] + start[na - 1] (start[y + 2] reads as start[y + 1]). */
        so[y + 2] = so[y + 1];
        sn[0] = 0;
        for (int na = 1; na <= y + 2; na++)
            sn[na] = so[na] + so[na - 1];
        for (int na = 0; na <= y + 1; na++) {
            int u = na <= y ? so[na] : 0, ue = na <= y ? so[na + 1] : 0; /* on B */
            int w = na > 0 ? so[na - 1] : 0, we = na > 0 ? so[na] : 0;   /* on A */
            int o = sn[na];
            while (u < ue && w < we) { /* branch free: the comparison is a coin toss */
                int64_t db = cur->d[u] - v, da = cur->d[w] + v;
                uint16_t mb = cur->m[u], ma = (uint16_t)(cur->m[w] | bit);
                int tb = db <= da;
                nxt->d[o] = tb ? db : da;
                nxt->m[o++] = tb ? mb : ma;
                u += tb;
                w += 1 - tb;
            }
            for (; u < ue; u++, o++) {
                nxt->d[o] = cur->d[u] - v;
                nxt->m[o] = cur->m[u];
            }
            for (; w < we; w++, o++) {
                nxt->d[o] = cur->d[w] + v;
                nxt->m[o] = (uint16_t)(cur->m[w] | bit);
            }
        }
        for (int na = 0; na <= y + 2; na++)
            so[na] = sn[na];
        half *t = cur;
        cur = nxt;
        nxt = t;
    }
}

typedef struct mitm {
    half *l, *r;
    int sl[EO__SPLIT_MITM_HALF + 2], sr[EO__SPLIT_MITM_HALF + 2];
    int hl, hr;
} mitm;

/* Entries u of l and v of r with want players on A between them and lo <= d sum <= hi. */
static int match(const mitm *s, int want, int64_t lo, int64_t hi, int *uo, int *vo)
{
    for (int a = 0; a <= s->hl; a++) {
        int b = want - a;
        if (b < 0 || b > s->hr)
            continue;
        int u0 = s->sl[a], u1 = s->sl[a + 1], v0 = s->sr[b], v1 = s->sr[b + 1];
        if (u0 == u1 || v0 == v1)
            continue;
        /* as d1 grows the first d2 >= lo - d1 moves down */
        int v = v1;
        for (int u = u0; u < u1; u++) {
            int64_t d1 = s->l->d[u];
            while (v > v0 && s->r->d[v - 1] >= lo - d1)
                v--;
            if (v < v1 && s->r->d[v] <= hi - d1) {
                *uo = u;
                *vo = v;
                return 1;
            }
        }
    }
    return 0;
}

int eo__split_mitm(const eo__split_prob *p, eo__split_scratch *sc, int64_t g, eo__split_sol *w)
{
    const int64_t *q = p->q;
    uint8_t h[EO__SPLIT_N], f[EO__SPLIT_N];
    int nh = 0, nf = 0, ca = 0, cb = 0;
    int64_t d0 = p->offset; /* the gap is |d0 + the rest| */
    uint64_t a0 = 0, b0 = 0;
    int odd = (int)(p->offset & 1); /* parity of the offset and of everyone who surely plays */
    for (int t = 0; t < p->n; t++) {
        int i = p->order[t];
        int s_i = p->status[i];
        if (s_i == EO__SP_A || s_i == EO__SP_B || s_i == EO__SP_PLAY)
            odd ^= (int)(q[i] & 1);
        switch (s_i) {
        case EO__SP_A: d0 += q[i]; ca++; a0 |= UINT64_C(1) << i; break;
        case EO__SP_B: d0 -= q[i]; cb++; b0 |= UINT64_C(1) << i; break;
        case EO__SP_PLAY: h[nh++] = (uint8_t)i; break;
        case EO__SP_FREE: f[nf++] = (uint8_t)i; break;
        default: break;
        }
    }
    int r = 2 * p->k - ca - cb - nh;
    if (r < 0 || r > 1 || nh > 2 * EO__SPLIT_MITM_HALF || (r == 1 && nf == 0))
        return -1;
    if (ca > p->k || cb > p->k)
        return 0;
    /* ΣA - ΣB has the parity of ΣA + ΣB: gap 0 needs the sum of everyone who plays to have
     * the offset's parity. */
    if (g == 0) {
        int can = r == 0 ? !odd : 0;
        for (int c = 0; r == 1 && c < nf && !can; c++)
            can = (int)(q[f[c]] & 1) == odd;
        if (!can)
            return 0;
    }
    mitm s;
    /* the halves alternate along the rating order, so both span the whole range */
    uint8_t hl[EO__SPLIT_MITM_HALF] = {0}, hr[EO__SPLIT_MITM_HALF] = {0};
    s.hl = s.hr = 0;
    for (int y = 0; y < nh; y++) {
        if (y % 2 == 0)
            hl[s.hl++] = h[y];
        else
            hr[s.hr++] = h[y];
    }
    s.l = &sc->l;
    s.r = &sc->r;
    build(s.l, &sc->tmp, q, hl, s.hl);
    build(s.r, &sc->tmp, q, hr, s.hr);
    groups(s.hl, s.sl);
    groups(s.hr, s.sr);
    int ka = p->k - ca;
    /* r == 0: nothing joins; r == 1: each FREE player joins A or B */
    int cases = r == 0 ? 1 : 2 * nf;
    for (int c = 0; c < cases; c++) {
        int64_t e = 0;
        int ea = 0, x = -1;
        if (r == 1) {
            x = f[c / 2];
            ea = c % 2 == 0;
            e = ea ? q[x] : -q[x];
        }
        if (g == 0 && (odd ^ (x >= 0 ? (int)(q[x] & 1) : 0)))
            continue;
        int u, v;
        if (!match(&s, ka - ea, -g - d0 - e, g - d0 - e, &u, &v))
            continue;
        uint64_t a = a0, b = b0;
        eo__split_place(&a, &b, hl, s.hl, s.l->m[u]);
        eo__split_place(&a, &b, hr, s.hr, s.r->m[v]);
        if (x >= 0) {
            if (ea)
                a |= UINT64_C(1) << x;
            else
                b |= UINT64_C(1) << x;
        }
        int64_t dd = d0 + e + s.l->d[u] + s.r->d[v];
        w->a = a;
        w->b = b;
        w->gap = eo__abs64(dd);
        return 1;
    }
    return 0;
}

/* 1 when set x comes before set y: at the lowest player where they differ, x has him on A. */
static int lex_before(uint16_t x, uint16_t y)
{
    unsigned diff = (unsigned)(x ^ y);
    return diff && (x & (diff & (~diff + 1u)));
}

/* The slot of key (na, d) in t's hash table: where it is, or the empty slot where it goes. */
static int slot_of(const teams *t, int na, int64_t d)
{
    uint64_t h = (uint64_t)d * UINT64_C(0x9E3779B97F4A7C15) +
                 (uint64_t)na * UINT64_C(0xC2B2AE3D27D4EB4F);
    int at = (int)(h >> 54); /* top 10 bits: TEAMS_SLOTS == 1024 */
    while (t->used[at] && (t->hd[at] != d || t->hna[at] != na))
        at = (at + 1) & (TEAMS_SLOTS - 1);
    return at;
}

/* The hashed second part: all 2^h2 side assignments of its players listed unsorted (each player
 * doubles the list: the old entries with him on B, copies with him on A), then stored by
 * (na, d) keeping the lexicographically first m, with each group's least and greatest d. Same
 * answers at the leaves as the sorted list (the leaf takes the lexicographically first m among
 * all entries in range, whatever their order), without the merges. */
static void hash_second(teams *t, half *tmp, const int64_t *q, const uint8_t *who, int h)
{
    uint8_t na[1 << TEAMS_SECOND];
    tmp->d[0] = 0;
    tmp->m[0] = 0;
    na[0] = 0;
    for (int y = 0; y < h; y++) {
        int64_t v = q[who[y]];
        int half_n = 1 << y;
        for (int j = 0; j < half_n; j++) {
            tmp->d[j + half_n] = tmp->d[j] + v;
            tmp->m[j + half_n] = (uint16_t)(tmp->m[j] | 1u << y);
            na[j + half_n] = (uint8_t)(na[j] + 1);
            tmp->d[j] -= v;
        }
    }
    memset(t->used, 0, sizeof t->used);
    for (int c = 0; c <= h; c++) {
        t->gmin[c] = INT64_MAX;
        t->gmax[c] = INT64_MIN;
    }
    for (int j = 0; j < 1 << h; j++) {
        int64_t d = tmp->d[j];
        int c = na[j];
        int at = slot_of(t, c, d);
        if (!t->used[at]) {
            t->used[at] = 1;
            t->hna[at] = (uint8_t)c;
            t->hd[at] = d;
            t->hm[at] = tmp->m[j];
        } else if (lex_before(tmp->m[j], t->hm[at])) {
            t->hm[at] = tmp->m[j];
        }
        t->gmin[c] = d < t->gmin[c] ? d : t->gmin[c];
        t->gmax[c] = d > t->gmax[c] ? d : t->gmax[c];
    }
}

/* Can the first-part players from y on (c of them on A, the rest on B) and some second-part
 * group close the difference d into [lo, hi]? Interval bounds only: 0 is a proof of "no". */
static int reachable(const teams *t, int y, int na, int64_t d)
{
    int rem = t->h1 - y;
    /* c more first-part players on A leave want = k - na - c for the second part, which must
     * be in [0, h2]; B's count then holds by itself (h1 + h2 = 2k), and no group is empty. */
    int c0 = t->k - na - t->h2 > 0 ? t->k - na - t->h2 : 0;
    int c1 = t->k - na < rem ? t->k - na : rem;
    int64_t tot = t->high[y][rem]; /* all remaining */
    for (int c = c0; c <= c1; c++) {
        int want = t->k - na - c;
        int64_t dmax = d + t->high[y][c] - (tot - t->high[y][c]) + t->gmax[want];
        int64_t dmin = d + t->low[y][c] - (tot - t->low[y][c]) + t->gmin[want];
        if (dmax >= t->lo && dmin <= t->hi)
            return 1;
    }
    return 0;
}

/* Depth first over the first part in index order, A before B, which visits the first-part
 * assignments in lexicographic order: the first that has a completion is the answer's, and
 * its lexicographically first completion ends the answer. */
static void first_part(teams *t, int y, int na, int64_t d, uint16_t m)
{
    if (t->found || !reachable(t, y, na, d))
        return;
    if (y == t->h1 && t->hashed) {
        int want = t->k - na; /* in range: reachable() checked it */
        for (int64_t x = t->lo - d; x <= t->hi - d; x++) {
            int at = slot_of(t, want, x);
            if (t->used[at] && (!t->found || lex_before(t->hm[at], t->m2))) {
                t->found = 1;
                t->m1 = m;
                t->m2 = t->hm[at];
            }
        }
        return;
    }
    if (y == t->h1) {
        int want = t->k - na; /* in range: reachable() checked it */
        int64_t from = t->lo - d, to = t->hi - d;
        int l = eo__split_lower_bound(t->r->d, t->sr[want], t->sr[want + 1], from);
        for (; l < t->sr[want + 1] && t->r->d[l] <= to; l++) {
            if (!t->found || lex_before(t->r->m[l], t->m2)) {
                t->found = 1;
                t->m1 = m;
                t->m2 = t->r->m[l];
            }
        }
        return;
    }
    int64_t v = t->q[t->pl[y]];
    if (na < t->k)
        first_part(t, y + 1, na + 1, d + v, (uint16_t)(m | 1u << y));
    if (y - na < t->k)
        first_part(t, y + 1, na, d - v, m);
}

int eo__split_teams(eo__split_prob *p, eo__split_scratch *sc, int64_t g)
{
    uint8_t pl[EO__SPLIT_N];
    int np = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->status[i] == EO__SP_PLAY)
            pl[np++] = (uint8_t)i;
        else if (p->status[i] != EO__SP_BENCH)
            return -1;
    }
    if (np != 2 * p->k || p->k > EO__SPLIT_MITM_HALF)
        return -1;
    teams *t = &sc->t;
    t->q = p->q;
    t->pl = pl;
    t->k = p->k;
    t->h2 = np / 2 < TEAMS_SECOND ? np / 2 : TEAMS_SECOND;
    t->h1 = np - t->h2;
    t->lo = -g - p->offset; /* the differences with |d + offset| <= g */
    t->hi = g - p->offset;
    t->r = &sc->r;
    t->found = 0;
    t->m1 = t->m2 = 0;
    t->hashed = g <= TEAMS_HASH_G;
    if (t->hashed) {
        hash_second(t, &sc->tmp, p->q, pl + t->h1, t->h2);
    } else {
        build(&sc->r, &sc->tmp, p->q, pl + t->h1, t->h2);
        groups(t->h2, t->sr);
        for (int c = 0; c <= t->h2; c++) { /* each group is sorted by d */
            t->gmin[c] = sc->r.d[t->sr[c]];
            t->gmax[c] = sc->r.d[t->sr[c + 1] - 1];
        }
    }
    /* the q of players y.. of the first part, sorted ascending (at most 16): one insertion
     * per step as y goes down */
    int64_t v[TEAMS_FIRST];
    int nv = 0;
    for (int y = t->h1; y >= 0; y--) {
        if (y < t->h1) {
            eo__insert_asc(v, nv, p->q[pl[y]]);
            nv++;
        }
        t->low[y][0] = t->high[y][0] = 0;
        for (int c = 1; c <= nv; c++) {
            t->low[y][c] = t->low[y][c - 1] + v[c - 1];
            t->high[y][c] = t->high[y][c - 1] + v[nv - c];
        }
    }
    first_part(t, 0, 0, 0, 0);
    if (!t->found)
        return 0;
    for (int y = 0; y < np; y++) {
        int on_a = y < t->h1 ? (t->m1 >> y & 1) : (t->m2 >> (y - t->h1) & 1);
        p->status[pl[y]] = on_a ? EO__SP_A : EO__SP_B;
    }
    return 1;
}

eo__split_scratch *eo__split_scratch_new(void)
{
    return malloc(sizeof(eo__split_scratch));
}

eo__split_table *eo__split_scratch_tables(eo__split_scratch *s)
{
    return s->tab;
}

void eo__split_scratch_free(eo__split_scratch *s)
{
    free(s);
}
