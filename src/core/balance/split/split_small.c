/* Exact "who plays" questions for small team sizes (see split_internal.h).
 *
 * In the greedy of split.c, question i has the decided players fixed (PLAY or BENCH), player i
 * playing, and the players after i FREE; r more of them must play. For small k the question is
 * mostly asked with r <= 2 (the first players are kept, one or two late ones complete the set),
 * and a fixed set of 2k players rarely splits to the optimal gap, so most answers are "no" and
 * the branch and bound has to prove each by visiting every side assignment of the PLAY players
 * times every choice of the late ones. Here the side assignments of the decided PLAY players are
 * enumerated once into sorted lists (one per number of them on A), extended as players join,
 * and a question enumerates only player i and the r late players, each combination answered by
 * a binary search: meet in the middle, with one half kept between questions. Exact both ways:
 * a "yes" comes with its witness split, a "no" has tried every completion. */
#include "split_internal.h"

#include <string.h>

#include "core/balance/common.h"

void eo__split_table_init(eo__split_table *t, int k)
{
    t->k = k;
    t->p = 0;
    t->odd = 0;
    memset(t->cnt, 0, sizeof t->cnt);
    t->cnt[0] = 1; /* nobody placed: nobody on A, difference 0 */
    t->d[0][0] = 0;
    t->a[0][0] = 0;
}

/* Player x joins the PLAY players: every entry appears with x on A (one more on A, d + q) and
 * with x on B (d - q). Groups whose A or B count would pass k cannot complete and are dropped;
 * the merge keeps each group sorted by d. Groups are rebuilt from the highest na down, so
 * group na - 1 is still the old one when group na reads it. */
void eo__split_table_add(eo__split_table *t, int x, int64_t qx)
{
    int k = t->k, p = t->p + 1;
    int64_t nd[EO__SPLIT_TABLE_CAP];
    uint16_t na_[EO__SPLIT_TABLE_CAP];
    uint16_t bit = (uint16_t)(1u << t->p);
    for (int na = k; na >= 0; na--) {
        int n = 0;
        if (p - na <= k) {
            int ca = na > 0 ? t->cnt[na - 1] : 0; /* x on A */
            int cb = p - 1 - na >= 0 ? t->cnt[na] : 0; /* x on B: na unchanged */
            const int64_t *da = na > 0 ? t->d[na - 1] : NULL, *db = t->d[na];
            int u = 0, v = 0;
            while (u < ca || v < cb) {
                int take_a = v >= cb || (u < ca && da[u] + qx <= db[v] - qx);
                if (take_a) {
                    nd[n] = da[u] + qx;
                    na_[n++] = (uint16_t)(t->a[na - 1][u++] | bit);
                } else {
                    nd[n] = db[v] - qx;
                    na_[n++] = t->a[na][v++];
                }
            }
        }
        memcpy(t->d[na], nd, (size_t)n * sizeof *nd);
        memcpy(t->a[na], na_, (size_t)n * sizeof *na_);
        t->cnt[na] = n;
    }
    t->who[t->p] = (uint8_t)x;
    t->p = p;
    t->odd ^= (int)(qx & 1);
}

/* Index of an entry of group na with lo <= d <= hi, or -1. */
static int find(const eo__split_table *t, int na, int64_t lo, int64_t hi)
{
    if (na < 0 || na > t->k)
        return -1;
    const int64_t *d = t->d[na];
    int l = eo__split_lower_bound(d, 0, t->cnt[na], lo);
    return l < t->cnt[na] && d[l] <= hi ? l : -1;
}

typedef struct ask {
    const eo__split_table *t;
    const int64_t *q;
    int64_t g;
    int64_t off; /* the problem's offset: the gap is |d + off| */
    int nf, r;
    const uint8_t *f; /* the FREE players */
    uint8_t pick[1 + EO__SPLIT_TABLE_MAXR]; /* chosen: player i, then the late ones */
    int npick;
    eo__split_sol *w;
} ask;

/* Items pick[0..npick-1] are chosen; give each a side (sides[] bit s = item s on A), then look
 * the rest of the difference up among the PLAY players' assignments. */
static int settle(ask *s)
{
    const eo__split_table *t = s->t;
    /* ΣA - ΣB has the parity of ΣA + ΣB, fixed once the players are: gap 0 needs it to be
     * the offset's. */
    if (s->g == 0) {
        int odd = t->odd ^ (int)(s->off & 1);
        for (int x = 0; x < s->npick; x++)
            odd ^= (int)(s->q[s->pick[x]] & 1);
        if (odd)
            return 0;
    }
    /* Without an offset player i (item 0) goes on A: the mirror of every PLAY assignment is in
     * the table too, and has the same gap. An offset breaks that symmetry: both sides. */
    unsigned first = s->off ? 0 : 1, stride = s->off ? 1 : 2;
    for (unsigned sides = first; sides < (1u << s->npick); sides += stride) {
        int64_t e = s->off;
        int ea = 0;
        for (int x = 0; x < s->npick; x++) {
            if (sides >> x & 1) {
                e += s->q[s->pick[x]];
                ea++;
            } else {
                e -= s->q[s->pick[x]];
            }
        }
        int na = t->k - ea;
        int at = find(t, na, -s->g - e, s->g - e);
        if (at < 0)
            continue;
        uint64_t a = 0, b = 0;
        eo__split_place(&a, &b, t->who, t->p, t->a[na][at]);
        eo__split_place(&a, &b, s->pick, s->npick, sides);
        s->w->a = a;
        s->w->b = b;
        s->w->gap = eo__abs64(t->d[na][at] + e);
        return 1;
    }
    return 0;
}

/* Chooses the late players from f[from..] one by one, then settles. */
static int choose(ask *s, int from, int left)
{
    if (left == 0)
        return settle(s);
    for (int j = from; j <= s->nf - left; j++) {
        s->pick[s->npick++] = s->f[j];
        int rc = choose(s, j + 1, left - 1);
        s->npick--;
        if (rc)
            return 1;
    }
    return 0;
}

/* Copies the used part of a table. */
static void copy_table(eo__split_table *dst, const eo__split_table *src)
{
    dst->k = src->k;
    dst->p = src->p;
    dst->odd = src->odd;
    memcpy(dst->who, src->who, sizeof dst->who);
    memcpy(dst->cnt, src->cnt, sizeof dst->cnt);
    for (int na = 0; na <= src->k; na++) {
        memcpy(dst->d[na], src->d[na], (size_t)src->cnt[na] * sizeof src->d[na][0]);
        memcpy(dst->a[na], src->a[na], (size_t)src->cnt[na] * sizeof src->a[na][0]);
    }
}

int eo__split_table_try(const eo__split_table *t, eo__split_table *tmp, const eo__split_prob *p,
                        int i, int r, int64_t g, eo__split_sol *w)
{
    if (r <= EO__SPLIT_TABLE_MAXR || t->p + 1 + r != 2 * t->k)
        return 0;
    uint8_t f[EO__SPLIT_N];
    int nf = 0;
    for (int j = 0; j < p->n; j++)
        if (p->status[j] == EO__SP_FREE)
            f[nf++] = (uint8_t)j;
    int fixed = r - EO__SPLIT_TABLE_MAXR;
    for (int v = 0; v < EO__SPLIT_TABLE_TRIES && v + fixed + EO__SPLIT_TABLE_MAXR <= nf; v++) {
        /* fixed = the FREE players at positions v .. v + fixed - 1; the rest stay candidates */
        copy_table(tmp, t);
        eo__split_table_add(tmp, i, p->q[i]);
        uint8_t c[EO__SPLIT_N];
        int nc = 0;
        for (int x = 0; x < nf; x++) {
            if (x >= v && x < v + fixed)
                eo__split_table_add(tmp, f[x], p->q[f[x]]);
            else
                c[nc++] = f[x];
        }
        ask s = {tmp, p->q, g, p->offset, nc, EO__SPLIT_TABLE_MAXR, c, {0, 0, 0}, 0, w};
        if (choose(&s, 0, EO__SPLIT_TABLE_MAXR))
            return 1;
    }
    return 0;
}

int eo__split_table_ask(const eo__split_table *t, const eo__split_prob *p, int i, int r,
                        int64_t g, eo__split_sol *w)
{
    if (r < 0 || r > EO__SPLIT_TABLE_MAXR || t->p + 1 + r != 2 * t->k)
        return -1;
    uint8_t f[EO__SPLIT_N];
    int nf = 0;
    for (int j = 0; j < p->n; j++)
        if (p->status[j] == EO__SP_FREE)
            f[nf++] = (uint8_t)j;
    ask s = {t, p->q, g, p->offset, nf, r, f, {(uint8_t)i, 0, 0}, 1, w};
    return choose(&s, 0, r);
}
