/* Cheap witnesses for the tie-rule questions of split.c (see split_internal.h).
 *
 * A question adds one decision (player i plays, or player i is on A) to a problem for which a
 * split w with gap <= g is known that breaks only that decision. With integer ratings the
 * splits near a good one are many and their gaps spread over a small range, so one or two
 * exchanges of players usually give a split that keeps every decision and the gap: found in
 * O(k^2 log n) instead of a search. A miss proves nothing (the search then decides), and a hit
 * is checked against every status before it is used, so this file can only make things faster. */
#include "split_internal.h"

#include "core/balance/common.h"

typedef struct list {
    int n;
    uint8_t who[EO__SPLIT_N]; /* by q ascending, or by index for the lists walked outside */
} list;

static void list_of(const eo__split_prob *p, uint64_t set, list *l)
{
    l->n = 0;
    for (int t = p->n - 1; t >= 0; t--)
        if (set >> p->order[t] & 1)
            l->who[l->n++] = p->order[t];
}

static void list_by_index(const eo__split_prob *p, uint64_t set, list *l)
{
    l->n = 0;
    for (int i = 0; i < p->n; i++)
        if (set >> i & 1)
            l->who[l->n++] = (uint8_t)i;
}

static int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((1 - v) / 2); }

/* The first position in l (a list by q ascending) whose player has q >= want; l->n when none. */
static int first_at_least(const int64_t *q, const list *l, int64_t want)
{
    int lo = 0, hi = l->n;
    while (lo < hi) {
        int m = (lo + hi) / 2;
        if (q[l->who[m]] < want)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

/* x in X (not skip), z in Z (not skip) with lo <= q[z] - q[x] <= hi; 1 when found. X is
 * walked from the highest index down and the lowest-indexed z in range is taken: the new
 * witness then keeps the earlier players where the tie rules want them (playing, on A), so
 * it answers more of the next questions by itself. */
static int find_pair(const int64_t *q, const list *x, const list *z, int skip, int64_t lo,
                     int64_t hi, int *xo, int *zo)
{
    if (lo > hi || z->n == 0)
        return 0;
    for (int a = x->n - 1; a >= 0; a--) {
        int xi = x->who[a];
        if (xi == skip)
            continue;
        int l = first_at_least(q, z, q[xi] + lo);
        int zbest = -1;
        for (; l < z->n && q[z->who[l]] - q[xi] <= hi; l++)
            if (z->who[l] != skip && (zbest < 0 || z->who[l] < zbest))
                zbest = z->who[l];
        if (zbest >= 0) {
            *xo = xi;
            *zo = zbest;
            return 1;
        }
    }
    return 0;
}

/* Σq(A) - Σq(B) + the offset: the gap is its absolute value. */
static int64_t diff_of(const eo__split_prob *p, uint64_t a, uint64_t b)
{
    int64_t d = p->offset;
    for (int i = 0; i < p->n; i++) {
        if (a >> i & 1)
            d += p->q[i];
        else if (b >> i & 1)
            d -= p->q[i];
    }
    return d;
}

/* The safety net: w keeps every status, has k players a side and gap <= g. */
static int valid(const eo__split_prob *p, int64_t g, eo__split_sol *w)
{
    if (w->a & w->b || __builtin_popcountll(w->a) != p->k || __builtin_popcountll(w->b) != p->k)
        return 0;
    for (int i = 0; i < p->n; i++) {
        int on_a = (int)(w->a >> i & 1), on_b = (int)(w->b >> i & 1);
        switch (p->status[i]) {
        case EO__SP_PLAY: if (!on_a && !on_b) return 0; break;
        case EO__SP_BENCH: if (on_a || on_b) return 0; break;
        case EO__SP_A: if (!on_a) return 0; break;
        case EO__SP_B: if (!on_b) return 0; break;
        default: break;
        }
    }
    if (p->n < 64 && ((w->a | w->b) >> p->n))
        return 0;
    int64_t d = diff_of(p, w->a, w->b);
    w->gap = eo__abs64(d);
    return w->gap <= g;
}

static uint64_t with_status(const eo__split_prob *p, int s)
{
    uint64_t m = 0;
    for (int i = 0; i < p->n; i++)
        if (p->status[i] == s)
            m |= UINT64_C(1) << i;
    return m;
}

/* Player i is now on A; w has him on B. First exchange: i for some x of A whose side is still
 * open; second (if needed): an open y of A for an open z of B. */
static int repair_side(const eo__split_prob *p, int i, int64_t g, eo__split_sol *w)
{
    const int64_t *q = p->q;
    uint64_t open = with_status(p, EO__SP_PLAY), bit = UINT64_C(1) << i;
    list xa, zb;
    list_by_index(p, w->a & open, &xa);
    list_of(p, w->b & open & ~bit, &zb);
    int64_t d = diff_of(p, w->a, w->b);
    for (int t = xa.n - 1; t >= 0; t--) { /* the latest player moves to B first */
        int x = xa.who[t], y = -1, z = -1;
        int64_t d1 = d + 2 * (q[i] - q[x]);
        if (d1 > g || d1 < -g) {
            if (!find_pair(q, &xa, &zb, x, -floor_half(g + d1), floor_half(g - d1), &y, &z))
                continue;
        }
        eo__split_sol c = *w;
        uint64_t bx = UINT64_C(1) << x;
        c.a = (c.a & ~bx) | bit;
        c.b = (c.b & ~bit) | bx;
        if (y >= 0) {
            uint64_t by = UINT64_C(1) << y, bz = UINT64_C(1) << z;
            c.a = (c.a & ~by) | bz;
            c.b = (c.b & ~bz) | by;
        }
        if (valid(p, g, &c)) {
            *w = c;
            return 1;
        }
    }
    return 0;
}

/* Player i now plays; w benches him. First exchange: i takes the place of some FREE player j
 * on j's team; second (if needed): a swap across the teams, or a FREE player on a team for a
 * FREE player on the bench. */
static int repair_play(const eo__split_prob *p, int i, int64_t g, eo__split_sol *w)
{
    const int64_t *q = p->q;
    uint64_t fr = with_status(p, EO__SP_FREE), bit = UINT64_C(1) << i;
    uint64_t bench = ~(w->a | w->b) & fr & ~bit;
    list pa, pb, fa, fb, bn, out;
    list_by_index(p, w->a, &pa);
    list_of(p, w->b, &pb);
    list_by_index(p, w->a & fr, &fa);
    list_by_index(p, w->b & fr, &fb);
    list_of(p, bench, &bn);
    list_by_index(p, (w->a | w->b) & fr, &out);
    int64_t d = diff_of(p, w->a, w->b);
    for (int t = out.n - 1; t >= 0; t--) { /* the latest player leaves first */
        int j = out.who[t];
        int on_a = (int)(w->a >> j & 1);
        int64_t d1 = on_a ? d + q[i] - q[j] : d - q[i] + q[j];
        int kind = 0, x = -1, z = -1;
        if (d1 > g || d1 < -g) {
            if (find_pair(q, &pa, &pb, j, -floor_half(g + d1), floor_half(g - d1), &x, &z))
                kind = 1; /* x from A to B, z from B to A */
            else if (find_pair(q, &fa, &bn, j, -g - d1, g - d1, &x, &z))
                kind = 2; /* z from the bench takes x's place on A */
            else if (find_pair(q, &fb, &bn, j, d1 - g, d1 + g, &x, &z))
                kind = 3; /* the same on B */
            else
                continue;
        }
        eo__split_sol c = *w;
        uint64_t bj = UINT64_C(1) << j;
        if (on_a)
            c.a = (c.a & ~bj) | bit;
        else
            c.b = (c.b & ~bj) | bit;
        uint64_t bx = x >= 0 ? UINT64_C(1) << x : 0, bz = z >= 0 ? UINT64_C(1) << z : 0;
        if (kind == 1) {
            c.a = (c.a & ~bx) | bz;
            c.b = (c.b & ~bz) | bx;
        } else if (kind == 2) {
            c.a = (c.a & ~bx) | bz;
        } else if (kind == 3) {
            c.b = (c.b & ~bx) | bz;
        }
        if (valid(p, g, &c)) {
            *w = c;
            return 1;
        }
    }
    return 0;
}

int eo__split_repair(const eo__split_prob *p, int i, int64_t g, eo__split_sol *w)
{
    if (p->status[i] == EO__SP_A && (w->b >> i & 1))
        return repair_side(p, i, g, w);
    if (p->status[i] == EO__SP_PLAY && !((w->a | w->b) >> i & 1))
        return repair_play(p, i, g, w);
    return 0;
}

/* Lists of a split kept across the tries of eo__split_extend(). */
typedef struct side_lists {
    list a_i, b_i, a_q, bn_q; /* open players of A, B by index; of A by q; FREE bench by q */
} side_lists;

/* One exchange that brings c (difference d) within g, among the players that were placed
 * before x and z joined: a player of A for one of B, or a player of a team for one of the
 * bench. Returns 1 with c changed (the caller checks it: an exchange that picks x or z
 * again breaks the team sizes and is rejected). */
static int one_exchange(const eo__split_prob *p, const side_lists *l, int64_t d, int64_t g,
                        int xj, eo__split_sol *c)
{
    const int64_t *q = p->q;
    int x, z;
    /* z of A to B and x of B to A: d - 2 (q[z] - q[x]) */
    if (find_pair(q, &l->b_i, &l->a_q, -1, -floor_half(g - d), floor_half(g + d), &x, &z)) {
        uint64_t bx = UINT64_C(1) << x, bz = UINT64_C(1) << z;
        c->a = (c->a & ~bz) | bx;
        c->b = (c->b & ~bx) | bz;
        return 1;
    }
    /* z from the bench replaces x of A: d - q[x] + q[z] */
    if (find_pair(q, &l->a_i, &l->bn_q, xj, -g - d, g - d, &x, &z)) {
        c->a = (c->a & ~(UINT64_C(1) << x)) | UINT64_C(1) << z;
        return 1;
    }
    /* z from the bench replaces x of B: d + q[x] - q[z] */
    if (find_pair(q, &l->b_i, &l->bn_q, xj, d - g, d + g, &x, &z)) {
        c->b = (c->b & ~(UINT64_C(1) << x)) | UINT64_C(1) << z;
        return 1;
    }
    return 0;
}

#define EXTEND_FEW 6

int eo__split_extend(const eo__split_prob *p, const eo__split_sol *prev, int64_t g,
                     eo__split_sol *w)
{
    const int64_t *q = p->q;
    uint64_t cand = 0;
    for (int i = 0; i < p->n; i++)
        if (p->status[i] != EO__SP_BENCH && !((prev->a | prev->b) >> i & 1))
            cand |= UINT64_C(1) << i;
    list by_q, by_i;
    list_of(p, cand, &by_q);
    list_by_index(p, cand, &by_i);
    int64_t d = diff_of(p, prev->a, prev->b);
    /* x joins A and z joins B: the difference becomes d + q[x] - q[z], within g when
     * d - g <= q[z] - q[x] <= d + g. The earliest x first, so early players tend to play. */
    for (int t = 0; t < by_i.n; t++) {
        int x = by_i.who[t];
        int l = first_at_least(q, &by_q, q[x] + d - g);
        for (; l < by_q.n && q[by_q.who[l]] - q[x] <= d + g; l++) {
            int z = by_q.who[l];
            if (z == x)
                continue;
            eo__split_sol c;
            c.a = prev->a | UINT64_C(1) << x;
            c.b = prev->b | UINT64_C(1) << z;
            if (valid(p, g, &c)) {
                *w = c;
                return 1;
            }
        }
    }
    /* No pair closes the gap by itself: add two of the earliest few and fix with one exchange. */
    int few = by_i.n < EXTEND_FEW ? by_i.n : EXTEND_FEW;
    uint64_t open = with_status(p, EO__SP_FREE) | with_status(p, EO__SP_PLAY);
    side_lists l;
    list_by_index(p, prev->a & open, &l.a_i);
    list_by_index(p, prev->b & open, &l.b_i);
    list_of(p, prev->a & open, &l.a_q);
    list_of(p, cand & with_status(p, EO__SP_FREE), &l.bn_q);
    for (int t = 0; t < few; t++) {
        for (int u = 0; u < few; u++) {
            if (u == t)
                continue;
            int x = by_i.who[t], z = by_i.who[u];
            eo__split_sol c;
            c.a = prev->a | UINT64_C(1) << x;
            c.b = prev->b | UINT64_C(1) << z;
            if (one_exchange(p, &l, d + q[x] - q[z], g, x, &c) && valid(p, g, &c)) {
                *w = c;
                return 1;
            }
        }
    }
    return 0;
}

int eo__split_check(const eo__split_prob *p, int64_t g, const eo__split_sol *w)
{
    eo__split_sol c = *w;
    return valid(p, g, &c) && c.gap == w->gap;
}
