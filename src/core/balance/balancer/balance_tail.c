/* Meet in the middle over part of a full split (balance_internal.h; docs/BALANCER.md, "The
 * balancer", "Full servers: N = 64"): the search's tail and the team-A witnesses of a scramble
 * (eo__bal_repair()), and the rest of team A at once in either mode (eo__bal_finish(); in
 * rebalance mode the lists match moves, denied weight and d exactly).
 *
 * In a full scramble (2k = N, parties whole, no side preference) every split plays everyone,
 * so a split's vector is (top2, spread, dev) and, once Σq(A) - Σq(B) is fixed, so are both
 * teams' Σq and the sum of their k² variances: whether it is within the spread tolerance then
 * only depends on X = Σq²(A) - Σq²(B) lying in one window (x_window()). Some items are cut into
 * two halves, each half's side assignments listed by (d, x) and grouped by their count on A
 * (eo__bal_list()); a left entry then meets the right entries of one D and one X window by one
 * binary search, so a question that wants the spread term 0 costs a search per left entry,
 * not per pair. The other items are fixed (above the tail, or kept from a witness). */
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"

typedef eo__bal_ent ent;

struct eo__bal_tail {
    int h, hl; /* free items, of which the first hl are the left half */
    int fr[EO__BAL_N];
    int64_t d0, ds0, x0; /* the pinned items listed: Σq, Σqs, Σqs² of A minus B */
    int na0, nb0, mv0;   /* pinned members on A, on B; players they move */
    int64_t dn0;         /* and the preference weight they deny */
    int64_t s, x;        /* Σqs and Σqs² of every listed member */
    uint8_t s1, s2;      /* sides of the two best players when pinned here, else 0 */
    int top_free;        /* one of the two best players is in a listed free item */
    /* each half's entries by count on A, each count by (d, x): the queries read el, er (the
     * lists as built, el0 and er0, or those of them that keep later pins: eo__bal_tail_pin()) */
    int lstart[EO__BAL_N + 2], rstart[EO__BAL_N + 2];
    ent *el, *er;
    int lstart0[EO__BAL_N + 2], rstart0[EO__BAL_N + 2];
    ent *el0, *er0;
    /* per count group of el, er: bounds of the least and largest z = x - zc·d (zc: twice the
     * listed players' mean q), whose ranges are far narrower than x's (each player adds
     * ±q·(q - zc)): a group pair that cannot reach the X window of a D is not walked
     * (best_at()) */
    int64_t zc;
    int zon; /* 0: every z range the widest (z_built()) */
    int64_t lz[2][EO__BAL_N + 1], rz[2][EO__BAL_N + 1];
    int64_t lz0[2][EO__BAL_N + 1], rz0[2][EO__BAL_N + 1]; /* those of el0, er0 */
    ent *buf;
    size_t cap, room; /* entries in buf; a list's room in it */
    /* what the lists were built from (record_key()) */
    int built, key_k, key_cnt, key_nleft;
    int key_items[EO__BAL_N];
    uint8_t key_st[EO__BAL_N];
};

/* Room for 4 * room entries in *t's buffer. 0 or EO_ENOMEM. */
static int room_for(eo__bal_tail *t, size_t room)
{
    if (4 * room <= t->cap)
        return 0;
    ent *nb = realloc(t->buf, sizeof(ent) * 4 * room);
    if (!nb)
        return EO_ENOMEM;
    t->buf = nb;
    t->cap = 4 * room;
    return 0;
}

/* An item's status as the lists see it: FREE and PLAY alike (every listed item plays). */
static uint8_t listed_status(const eo__bal *b, int t)
{
    return b->ist[t] == EO__BS_PLAY ? EO__BS_FREE : b->ist[t];
}

/* Records what the lists are built from (eo__bal_tail_pins() compares a later question's
 * statuses with them). */
static void record_key(eo__bal_tail *t, const eo__bal *b, const int *items, int cnt, int nleft)
{
    t->key_k = b->k;
    t->key_cnt = cnt;
    t->key_nleft = nleft;
    for (int y = 0; y < cnt; y++) {
        t->key_items[y] = items[y];
        t->key_st[y] = listed_status(b, items[y]);
    }
}

/* src (sorted by d, then x) into dst by (count on A when counts, moves <= mvmax), stably: each
 * run of one count and moves stays by d. */
static void by_moves(const ent *src, size_t cnt, ent *dst, int counts, int mvmax)
{
    int start[(EO__BAL_EXACT + 1) * (EO__BAL_EXACT + 1) + 1];
    int keys = (counts + 1) * (mvmax + 1);
    memset(start, 0, sizeof(int) * (size_t)(keys + 1));
    for (size_t r = 0; r < cnt; r++)
        start[(counts ? src[r].na : 0) * (mvmax + 1) + src[r].mv + 1]++;
    for (int c = 0; c < keys; c++)
        start[c + 1] += start[c];
    for (size_t r = 0; r < cnt; r++)
        dst[start[(counts ? src[r].na : 0) * (mvmax + 1) + src[r].mv]++] = src[r];
}

/* eo__bal_tail_build() up to the lists: the pinned items' sums, the halves, each half's limits
 * (lim) and the entries a half needs (*room). Returns 0, or 2 when they do not fit. */
static int plan(eo__bal_tail *t, const eo__bal *b, const int *items, int cnt, int nleft,
                const eo__bal_lim *all, size_t room_max, eo__bal_lim *lim, size_t *room)
{
    int fr[EO__BAL_N], h = 0, hl = 0;
    t->na0 = t->nb0 = t->mv0 = 0;
    t->dn0 = 0;
    t->d0 = t->ds0 = t->x0 = t->s = t->x = 0;
    t->s1 = t->s2 = 0;
    for (int y = 0; y < cnt; y++) {
        int it = items[y], st = b->ist[it];
        if (st == EO__BS_BENCH)
            return 2;
        if (st == EO__BS_FREE || st == EO__BS_PLAY) {
            fr[h++] = it;
            hl += y < nleft;
        }
        int sg = st == EO__BS_A ? 1 : st == EO__BS_B ? -1 : 0;
        for (int u = b->istart[it]; u < b->istart[it + 1]; u++) {
            int i = b->mem[u];
            t->d0 += sg * b->q[i];
            t->ds0 += sg * b->qs[i];
            t->x0 += sg * b->qs[i] * b->qs[i];
            t->na0 += sg > 0;
            t->nb0 += sg < 0;
            int sd = sg > 0 ? EO__SIDE_A : EO__SIDE_B;
            t->mv0 += sg && b->team[i] != EO__SIDE_BENCH && b->team[i] != sd;
            t->dn0 += sg && b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != sd ? b->w[i] : 0;
            t->s += b->qs[i];
            t->x += b->qs[i] * b->qs[i];
            if (sg && i == b->best[0])
                t->s1 = sg > 0 ? EO__SIDE_A : EO__SIDE_B;
            if (sg && i == b->best[1])
                t->s2 = sg > 0 ? EO__SIDE_A : EO__SIDE_B;
        }
    }
    t->top_free = 0;
    for (int y = 0; y < h; y++)
        t->top_free |= fr[y] == b->item_of[b->best[0]] || fr[y] == b->item_of[b->best[1]];
    /* the halves as given, else alternate items: alike in size and in the ratings they reach */
    t->h = h;
    t->hl = nleft > 0 ? hl : (h + 1) / 2; /* the even positions */
    if (t->hl > 32 || h - t->hl > 32)
        return 2;
    for (int y = 0; y < h; y++)
        t->fr[nleft > 0 ? y : y % 2 ? t->hl + y / 2 : y / 2] = fr[y];
    for (int x = 0; x < 2; x++) { /* each half's limits: what the pinned listed items leave */
        const eo__bal_lim *a = &all[nleft > 0 ? x : 0];
        lim[x] = (eo__bal_lim){a->na - t->na0, a->nb - t->nb0, a->mv - t->mv0, a->dn - t->dn0};
        if (lim[x].na < 0 || lim[x].nb < 0 || lim[x].mv < 0 || lim[x].dn < 0)
            return 2;
    }
    size_t rl = eo__bal_list_room(b, t->fr, t->hl, &lim[0]);
    size_t rr = eo__bal_list_room(b, t->fr + t->hl, h - t->hl, &lim[1]);
    *room = rl > rr ? rl : rr;
    return *room > room_max ? 2 : 0;
}

int eo__bal_tail_fits(const eo__bal *b, const int *items, int cnt, const eo__bal_lim *all,
                      size_t room_max)
{
    eo__bal_tail t; /* the plan's sums only: a built tail keeps its own */
    eo__bal_lim lim[2];
    size_t room;
    return plan(&t, b, items, cnt, 0, all, room_max, lim, &room);
}

/* Bounds of the least and largest z (by_z; else d) of each count group (members on A) of half
 * x's lists under the items' statuses now, into z: every player adds ±q·(q - zc) to z (±q to
 * d), a player on A the +, so with c of the free players on A the least is the free ones' -Σ
 * plus twice the c least, the largest the same with the c largest (parties taken apart: only
 * wider). Cheap beside a pass over the lists, as narrow as one for single players, and needs
 * no lists (tail_may()). */
static void sum_bounds(const eo__bal_tail *t, const eo__bal *b, int x, int by_z,
                       int64_t z[2][EO__BAL_N + 1])
{
    int64_t zf[EO__BAL_N], base = 0;
    int nf = 0, fa = 0;
    for (int y = x ? t->hl : 0; y < (x ? t->h : t->hl); y++) {
        int it = t->fr[y], st = b->ist[it];
        for (int u = b->istart[it]; u < b->istart[it + 1]; u++) {
            int64_t q = b->q[b->mem[u]], zi = by_z ? q * (q - t->zc) : q;
            if (st == EO__BS_A || st == EO__BS_B) {
                base += st == EO__BS_A ? zi : -zi;
                fa += st == EO__BS_A;
                continue;
            }
            base -= zi;
            int p = nf++; /* insertion: ascending */
            for (; p > 0 && zf[p - 1] > zi; p--)
                zf[p] = zf[p - 1];
            zf[p] = zi;
        }
    }
    int64_t lo = base, hi = base;
    for (int c = 0; c <= b->n; c++) {
        int cf = c - fa;
        if (cf > 0 && cf <= nf) {
            lo += 2 * zf[cf - 1];
            hi += 2 * zf[nf - cf];
        }
        z[0][c] = cf >= 0 && cf <= nf ? lo : INT64_MAX / 4; /* empty: no pair meets it */
        z[1][c] = cf >= 0 && cf <= nf ? hi : INT64_MIN / 4;
    }
}

/* The lists as built are the ones the queries read. */
static void view_built(eo__bal_tail *t)
{
    t->el = t->el0;
    t->er = t->er0;
    memcpy(t->lstart, t->lstart0, sizeof t->lstart);
    memcpy(t->rstart, t->rstart0, sizeof t->rstart);
    memcpy(t->lz, t->lz0, sizeof t->lz);
    memcpy(t->rz, t->rz0, sizeof t->rz);
}

/* zc: twice the listed free players' mean q. */
static void z_center(eo__bal_tail *t, const eo__bal *b)
{
    int64_t sq = 0, cnt = 0;
    for (int y = 0; y < t->h; y++)
        for (int u = b->istart[t->fr[y]]; u < b->istart[t->fr[y] + 1]; u++, cnt++)
            sq += b->q[b->mem[u]];
    t->zc = cnt > 0 ? 2 * sq / cnt : 0;
}

/* The z ranges of the lists as built. Only a scramble's tail or witness lists (as halves of
 * alternate items, nleft 0) with the ratings' spread scale are queried by them (best_at()), and
 * only there do the sums not overflow: zc is then twice the free members' mean q; otherwise
 * every range is the widest, which skips nothing. */
static void z_built(eo__bal_tail *t, const eo__bal *b, int nleft)
{
    if (b->mode != EO_BALANCE_SCRAMBLE || b->spread_shift != 0 || nleft > 0) {
        t->zc = t->zon = 0;
        for (int c = 0; c <= b->n; c++) {
            t->lz0[0][c] = t->rz0[0][c] = INT64_MIN / 4;
            t->lz0[1][c] = t->rz0[1][c] = INT64_MAX / 4;
        }
        return;
    }
    z_center(t, b);
    t->zon = 1;
    sum_bounds(t, b, 0, 1, t->lz0);
    sum_bounds(t, b, 1, 1, t->rz0);
}

int eo__bal_tail_build(eo__bal_tail **tp, const eo__bal *b, const int *items, int cnt, int nleft,
                       const eo__bal_lim *all, size_t room_max)
{
    if (!*tp && !(*tp = calloc(1, sizeof **tp)))
        return EO_ENOMEM;
    eo__bal_tail *t = *tp;
    eo__bal_lim lim[2];
    size_t room;
    int rc = plan(t, b, items, cnt, nleft, all, room_max, lim, &room);
    if (rc != 0)
        return rc;
    t->built = 0; /* until the lists below are done */
    record_key(t, b, items, cnt, nleft);
    int h = t->h;
    if (room_for(t, room) != 0)
        return EO_ENOMEM;
    ent *tmp = t->buf + 2 * room, *tmp2 = tmp + room;
    t->room = room;
    t->el0 = t->buf;
    t->er0 = t->buf + room;
    size_t nl = eo__bal_list(b, t->fr, t->hl, &lim[0], tmp2, tmp);
    eo__bal_group(tmp2, nl, t->el0, t->lstart0, b->n);
    size_t nr = eo__bal_list(b, t->fr + t->hl, h - t->hl, &lim[1], tmp2, tmp);
    eo__bal_group(tmp2, nr, t->er0, t->rstart0, b->n);
    if (b->mode == EO_BALANCE_REBALANCE) {     /* by moves too: moves_run() */
        memcpy(tmp, t->el0, sizeof(ent) * nl); /* left by moves alone, right by count first */
        by_moves(tmp, nl, t->el0, 0, lim[0].mv);
        memcpy(tmp, t->er0, sizeof(ent) * nr);
        by_moves(tmp, nr, t->er0, b->n, lim[1].mv);
    }
    z_built(t, b, nleft);
    view_built(t);
    t->built = 1;
    return 0;
}

int eo__bal_tail_pins(const eo__bal_tail *t, const eo__bal *b, const int *items, int cnt)
{
    if (!t || !t->built || t->key_k != b->k || t->key_cnt != cnt || t->key_nleft != 0)
        return -1;
    int pins = 0;
    for (int y = 0; y < cnt; y++) {
        uint8_t now = listed_status(b, items[y]);
        if (t->key_items[y] != items[y] || now == EO__BS_BENCH ||
            (t->key_st[y] != EO__BS_FREE && t->key_st[y] != now))
            return -1;
        pins += t->key_st[y] != now;
    }
    return pins;
}

/* src's groups start[0 .. nmax + 1] into dst (new starts in dst_start), keeping the entries
 * whose mask has the bits of want under care. */
static void keep_pinned(const ent *src, const int *start, int nmax, uint32_t care, uint32_t want,
                        ent *dst, int *dst_start)
{
    int o = 0;
    for (int c = 0; c <= nmax; c++) {
        dst_start[c] = o;
        for (int r = start[c]; r < start[c + 1]; r++)
            if ((src[r].mask & care) == want)
                dst[o++] = src[r];
    }
    dst_start[nmax + 1] = o;
}

void eo__bal_tail_pin(eo__bal_tail *t, const eo__bal *b)
{
    uint32_t care[2] = {0, 0}, want[2] = {0, 0};
    for (int y = 0; y < t->h; y++) {
        int st = b->ist[t->fr[y]], x = y >= t->hl, bit = y - (x ? t->hl : 0);
        if (st == EO__BS_A || st == EO__BS_B) {
            care[x] |= UINT32_C(1) << bit;
            want[x] |= st == EO__BS_A ? UINT32_C(1) << bit : 0;
        }
    }
    view_built(t);
    if (care[0]) {
        t->el = t->buf + 2 * t->room;
        keep_pinned(t->el0, t->lstart0, b->n, care[0], want[0], t->el, t->lstart);
        if (t->zon)
            sum_bounds(t, b, 0, 1, t->lz);
    }
    if (care[1]) {
        t->er = t->buf + 3 * t->room;
        keep_pinned(t->er0, t->rstart0, b->n, care[1], want[1], t->er, t->rstart);
        if (t->zon)
            sum_bounds(t, b, 1, 1, t->rz);
    }
}

void eo__bal_tail_free(eo__bal_tail *t)
{
    if (t)
        free(t->buf);
    free(t);
}

/* The window [*xlo, *xhi] of X = Σqs²(A) - Σqs²(B) of the splits with D = dt (everyone plays,
 * qs = q: δ = dt - field) within the spread tolerance (eo__bal_umax()); S and XS are the
 * players' Σqs and Σqs². 0 when no split has D = dt (parity). */
static int x_window(const eo__bal *b, int64_t dt, int64_t S, int64_t XS, int64_t *xlo, int64_t *xhi)
{
    int64_t delta = dt - b->field, k = b->k;
    if ((S + delta) % 2 != 0)
        return 0;
    eo__i128 umax = eo__bal_umax(b, delta, S, XS);
    eo__i128 lo = (eo__i128)delta * S - umax, hi = (eo__i128)delta * S + umax;
    /* k X in [lo, hi]: the ceiling of lo / k and the floor of hi / k */
    *xlo = (int64_t)(lo >= 0 ? (lo + k - 1) / k : -((-lo) / k));
    *xhi = (int64_t)(hi >= 0 ? hi / k : -((-hi + k - 1) / k));
    return *xlo <= *xhi;
}

/* The first entry of [R, Re) (sorted by d, then x) at or after (d, x). */
static const ent *lower(const ent *R, const ent *Re, int64_t d, int64_t x)
{
    while (R < Re) {
        const ent *m = R + (Re - R) / 2;
        if (m->d < d || (m->d == d && m->x < x))
            R = m + 1;
        else
            Re = m;
    }
    return R;
}

/* lower() when the answer is at or just after p (every entry before p is before (d, x)): steps
 * doubling from p, then a binary search of the last step. */
static const ent *lower_near(const ent *p, const ent *Re, int64_t d, int64_t x)
{
    size_t step = 1;
    const ent *hi = p;
    while (hi < Re && (hi->d < d || (hi->d == d && hi->x < x))) {
        p = hi + 1;
        hi = (size_t)(Re - p) > step ? p + step : Re;
        step *= 2;
    }
    return lower(p, hi, d, x);
}

/* The node's sums with the pinned listed items added: q->d then includes the field, q->s and
 * q->xs are every player's. */
static eo__bal_tail_q whole(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *q)
{
    eo__bal_tail_q w = *q;
    w.na += t->na0;
    w.nb += t->nb0;
    w.mv += t->mv0;
    w.dn += t->dn0;
    w.d += t->d0 + b->field;
    w.ds += t->ds0;
    w.x += t->x0;
    w.s += t->s;
    w.xs += t->x;
    w.s1 |= t->s1;
    w.s2 |= t->s2;
    return w;
}

/* The groups of a left count cl: *L..*Le and the right entries *R..*Re that complete the count
 * on A to k. 0 when either is empty. */
static int groups(const eo__bal_tail *t, const eo__bal *b, int need, int cl, const ent **L,
                  const ent **Le, const ent **R, const ent **Re)
{
    int cr = need - cl;
    if (cr < 0 || cr > b->n)
        return 0;
    *L = t->el + t->lstart[cl];
    *Le = t->el + t->lstart[cl + 1];
    *R = t->er + t->rstart[cr];
    *Re = t->er + t->rstart[cr + 1];
    return *L < *Le && *R < *Re;
}

/* 0 when no pair of left group cl (L..Le) and right group cr (R..Re) has d = dw and x in
 * [xlo, xhi]: d by the groups' ends (each is sorted by d), x through z = x - zc·d, which with d
 * fixed must lie in [xlo - zc·dw, xhi - zc·dw]. */
static int group_meets(const eo__bal_tail *t, int cl, int cr, const ent *L, const ent *Le,
                       const ent *R, const ent *Re, int64_t dw, int64_t xlo, int64_t xhi)
{
    if (L->d + R->d > dw || Le[-1].d + Re[-1].d < dw)
        return 0;
    int64_t zd = t->zc * dw;
    return t->lz[0][cl] + t->rz[0][cr] <= xhi - zd && t->lz[1][cl] + t->rz[1][cr] >= xlo - zd;
}

/* For D = dt: the pair with the least spread term, *term (0: within the tolerance, found as soon
 * as one is; else |k X - δ S| > 0). A left entry meets the right entries with the d that makes
 * D = dt, a run sorted by x, where the nearest to the window are the first at or above its
 * lower end and the one before. zero: only pairs within the tolerance count (tail_ask()'s
 * settled questions): those of the window alone, and a left entry without a right entry of
 * its d costs one pointer step. Returns 1 with *bl, *br, 0 when no pair (zero: in the window)
 * has D = dt. w: the whole split's sums (whole()). */
static int best_at(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *w, int64_t dt,
                   int zero, int64_t *term, int *top2, const ent **bl, const ent **br,
                   uint64_t *work)
{
    int64_t xlo, xhi, delta = dt - b->field, k = b->k, need = b->k - w->na;
    if ((w->s + delta) % 2 != 0)
        return 0;
    if (!x_window(b, dt, w->s, w->xs, &xlo, &xhi) && zero)
        return 0; /* an empty window: no term is 0 */
    int found = 0, lim = t->top_free ? w->base[EO__BT_TOP2] : 1;
    int64_t dw = dt - w->d, xw = w->x; /* in locals: stores through work may alias *w */
    uint64_t seen = 0;
    for (int cl = 0; cl <= need && cl <= b->n; cl++) {
        const ent *L, *Le, *R, *Re;
        if (!groups(t, b, (int)need, cl, &L, &Le, &R, &Re) ||
            (zero && !group_meets(t, cl, (int)need - cl, L, Le, R, Re, dw, xlo - xw, xhi - xw)))
            continue;
        /* the left entries by d ascending want the right d descending: the first right entry
         * of d >= dr (p) only moves back, and the answer is near it */
        const ent *p = Re;
        for (const ent *l = L; l < Le; l++) {
            ++seen;
            int64_t dr = dw - l->d, x0 = xw + l->x;
            while (p > R && p[-1].d >= dr)
                p--;
            if (zero && (p == Re || p->d != dr))
                continue;
            const ent *r = lower_near(p, Re, dr, xlo - x0);
            /* the one before the window (not when zero) and those from its start on: all of
             * the window when the two best players are listed (each pair then has its own
             * top2), else the first; the first past it (not when zero) */
            for (const ent *c = r > R && !zero ? r - 1 : r; c < Re && c->d <= dr; c++) {
                int in = c->x >= xlo - x0 && c->x <= xhi - x0;
                if (!in && (zero || (c > r && c[-1].x > xhi - x0)))
                    break;
                if (c->d != dr)
                    continue;
                int t2 = t->top_free ? (w->s1 | l->s1 | c->s1) == (w->s2 | l->s2 | c->s2)
                                     : (int)w->base[EO__BT_TOP2];
                int64_t u = eo__abs64(k * (x0 + c->x) - delta * w->s);
                u = in ? 0 : u > 0 ? u : 1;
                if (t2 > lim || (found && (t2 > *top2 || (t2 == *top2 && u >= *term))))
                    continue;
                *term = u;
                *top2 = t2;
                *bl = l;
                *br = c;
                found = 1;
                if (u == 0 && t2 == 0) {
                    *work += seen;
                    return 1;
                }
                if (in && !t->top_free)
                    break;
            }
        }
    }
    *work += seen;
    return found;
}

/* Every pair of the groups with D in [-dev_max, dev_max] (left by d descending, so the right
 * window only moves up): the first with a vector <= best (feas), else the least, into *cur,
 * *bl, *br (*have). Returns 1 when a feasibility question is answered. */
static int tail_scan(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *w,
                     const eo__bal_vec best, eo__bal_vec cur, const ent **bl, const ent **br,
                     int *have, uint64_t *work)
{
    int need = b->k - w->na;
    eo__bal_vec v;
    memcpy(v, w->base, sizeof v);
    for (int cl = 0; cl <= need && cl <= b->n; cl++) {
        const ent *L, *Le, *R, *Re;
        if (!groups(t, b, need, cl, &L, &Le, &R, &Re))
            continue;
        int64_t lo = -w->dev_max - w->d, hi = w->dev_max - w->d;
        const ent *a = R, *z = R;
        for (const ent *l = Le; l-- > L;) {
            ++*work;
            while (a < Re && a->d < lo - l->d)
                a++;
            z = z < a ? a : z;
            while (z < Re && z->d <= hi - l->d)
                z++;
            for (const ent *r = a; r < z; r++) {
                ++*work;
                int64_t ds = w->ds + l->ds + (int64_t)r->ds, xx = w->x + l->x + r->x;
                v[EO__BT_SPREAD] = eo__bal_spread(b, (w->s + ds) / 2, (w->s - ds) / 2,
                                                  (w->xs + xx) / 2, (w->xs - xx) / 2);
                v[EO__BT_DEV] = eo__abs64(w->d + l->d + r->d);
                if (t->top_free) /* each pair's own */
                    v[EO__BT_TOP2] = (w->s1 | l->s1 | r->s1) == (w->s2 | l->s2 | r->s2);
                if (w->feas ? eo__bal_cmp(b, v, best) > 0 : *have && eo__bal_cmp(b, v, cur) >= 0)
                    continue;
                memcpy(cur, v, sizeof v);
                *bl = l;
                *br = r;
                *have = 1;
                if (w->feas)
                    return 1;
            }
        }
    }
    return 0;
}

/* 1 when best has the spread term 0 and every other term but dev as base (the terms every
 * completion has): a completion then beats best (feasibility: matches it) only with spread 0
 * and a smaller (no larger) |D|. */
static int spread_zero(const eo__bal *b, const eo__bal_vec base, const eo__bal_vec best)
{
    int same = best[EO__BT_SPREAD] == 0 && b->spread_shift == 0;
    for (int t = 0; t < EO__BT_N; t++)
        same &= t == EO__BT_SPREAD || t == EO__BT_DEV || !b->active[t] || base[t] == best[t];
    return same;
}

/* The least completion by D = 0, ±1, ... cap (each by best_at(); zero: only the spread term 0
 * counts): the first with the spread term 0 ends it (a larger |D| cannot beat it); a
 * feasibility question ends at its first completion <= best. Returns 1 with *cur, *bl, *br. */
static int tail_least(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *q,
                      const eo__bal_tail_q *w, int64_t cap, int zero, const eo__bal_vec best,
                      eo__bal_vec cur, const ent **bl, const ent **br, uint64_t *work)
{
    int have = 0;
    eo__bal_vec v;
    memcpy(v, q->base, sizeof v);
    for (int64_t a = 0; a <= cap; a++)
        for (int sg = 1; sg >= (a ? -1 : 1); sg -= 2) {
            const ent *l, *r;
            int t2 = 0;
            if (!best_at(t, b, w, sg * a, zero, &v[EO__BT_SPREAD], &t2, &l, &r, work))
                continue;
            v[EO__BT_TOP2] = t2;
            v[EO__BT_DEV] = a;
            if (have && eo__bal_cmp(b, v, cur) >= 0)
                continue;
            memcpy(cur, v, sizeof v);
            *bl = l;
            *br = r;
            have = 1;
            if ((v[EO__BT_SPREAD] == 0 && v[EO__BT_TOP2] <= q->base[EO__BT_TOP2]) ||
                (q->feas && eo__bal_cmp(b, v, best) <= 0))
                return 1;
        }
    return have;
}

/* How far tail_least() looks for question q: when spread_zero() and there is a best
 * (feasibility, or an incumbent), only spread 0 counts and up to best's |D| (least questions:
 * below it), so the answer is settled there (*settles); otherwise the D window, when it is at
 * most TAIL_FAST_DEV wide (a completion with spread 0 ends the look earlier). -1 when the
 * lists cannot answer so (the spread scale is not the ratings', or a wider window) and every
 * pair of the window is visited instead (tail_scan()). */
#define TAIL_FAST_DEV 64
static int64_t fast_cap(const eo__bal *b, const eo__bal_tail_q *q, const eo__bal_vec best,
                        int *settles)
{
    *settles = (q->feas || q->found) && spread_zero(b, q->base, best);
    int64_t cap = q->dev_max;
    if (*settles) {
        cap = best[EO__BT_DEV] - (q->feas ? 0 : 1);
        cap = cap < q->dev_max ? cap : q->dev_max;
    }
    return b->spread_shift == 0 && cap <= TAIL_FAST_DEV ? cap : -1;
}

/* Of [R, Re) (one count on A, by moves, then d: by_moves()), those with moves mv and d in
 * [lo, hi]: [*r0, *r1). */
static void moves_d(const ent *R, const ent *Re, int mv, int64_t lo, int64_t hi, const ent **r0,
                    const ent **r1)
{
    const ent *a = R, *z = Re;
    while (a < z) {
        const ent *m = a + (z - a) / 2;
        if (m->mv < mv || (m->mv == mv && m->d < lo))
            a = m + 1;
        else
            z = m;
    }
    const ent *e = a;
    z = Re;
    while (e < z) {
        const ent *m = e + (z - e) / 2;
        if (m->mv < mv || (m->mv == mv && m->d <= hi))
            e = m + 1;
        else
            z = m;
    }
    *r0 = a;
    *r1 = e;
}

/* The right entries that complete left entry l to a split of vector best with D = dt, a run
 * [*r0, *r1) of the right list (empty when none): scramble, those with the d of D = dt and X
 * in [xlo, xhi] (the caller judges top2); rebalance, those with the count, moves and d that
 * make best's (best being the least vector, nothing less exists; the caller judges the
 * denied weight). w: whole(). */
static void run_of(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *w,
                   const eo__bal_vec best, const ent *l, int64_t dt, int64_t xlo, int64_t xhi,
                   const ent **r0, const ent **r1)
{
    int cr = b->k - w->na - l->na;
    *r0 = *r1 = NULL;
    if (cr < 0 || cr > b->n)
        return;
    const ent *R = t->er + t->rstart[cr], *Re = t->er + t->rstart[cr + 1];
    int64_t dr = dt - w->d - l->d;
    if (b->mode == EO_BALANCE_SCRAMBLE) {
        const ent *r = lower(R, Re, dr, xlo - w->x - l->x), *e = r;
        while (e < Re && e->d == dr && e->x <= xhi - w->x - l->x)
            e++;
        *r0 = r;
        *r1 = e;
        return;
    }
    moves_d(R, Re, (int)(best[EO__BT_MOVES] - w->mv - l->mv), dr, dr, r0, r1);
}

/* Whether the lists can hold a split of vector best at all, and the X window of D = dt
 * (scramble; *xlo > *xhi when none is within the tolerance). */
static int window_for(const eo__bal *b, const eo__bal_tail_q *w, int64_t dt, int64_t *xlo,
                      int64_t *xhi)
{
    *xlo = 1;
    *xhi = 0;
    if (b->mode == EO_BALANCE_SCRAMBLE)
        return x_window(b, dt, w->s, w->xs, xlo, xhi);
    return 1;
}

/* Of the pairs of vector best, the one whose team A comes first in request order, into side[]
 * (every other item as there): 1, or 0 when there is none. */
static int first_pair(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *w,
                      const eo__bal_vec best, uint8_t *side, uint64_t *work)
{
    int found = 0;
    uint8_t cand[EO__BAL_N];
    memcpy(cand, side, (size_t)b->n);
    int64_t dev = best[EO__BT_DEV];
    for (int sg = 1; sg >= (dev ? -1 : 1); sg -= 2) {
        int64_t xlo, xhi;
        if (!window_for(b, w, sg * dev, &xlo, &xhi))
            continue;
        for (const ent *l = t->el; l < t->el + t->lstart[b->n + 1]; l++) {
            const ent *r, *e;
            ++*work;
            if (b->mode == EO_BALANCE_REBALANCE && l->mv > best[EO__BT_MOVES] - w->mv)
                break; /* by_moves(): the rest move even more */
            run_of(t, b, w, best, l, sg * dev, xlo, xhi, &r, &e);
            for (; r < e; r++) {
                ++*work;
                if (b->mode == EO_BALANCE_SCRAMBLE
                        ? ((w->s1 | l->s1 | r->s1) == (w->s2 | l->s2 | r->s2)) !=
                              (best[EO__BT_TOP2] != 0)
                        : w->dn + l->dn + (int64_t)r->dn != best[EO__BT_DENIED])
                    continue;
                eo__bal_sides(b, t->fr, t->hl, l->mask, t->fr + t->hl, t->h - t->hl, r->mask, cand);
                if (!found || eo__bal_before(b->n, cand, side)) {
                    memcpy(side, cand, (size_t)b->n);
                    found = 1;
                }
            }
        }
    }
    return found;
}

/* 1 when the lists can judge a split of vector best exactly: rebalance always (moves, denied and
 * d are matched), scramble when best has the spread term 0 and the constant terms of q->base
 * (top2 judged per pair). */
static int exact_match(const eo__bal *b, const eo__bal_tail_q *q, const eo__bal_vec best)
{
    if (b->mode == EO_BALANCE_REBALANCE)
        return best[EO__BT_BROKEN] == 0 && best[EO__BT_BENCH] == 0;
    eo__bal_vec base;
    memcpy(base, q->base, sizeof base);
    base[EO__BT_TOP2] = best[EO__BT_TOP2];
    return spread_zero(b, base, best);
}

/* eo__bal_tail_ask()'s question as the lists see it: q (each pair has its own top2 when the two
 * best players are listed: those above best's are skipped), w (whole()) and fast_cap(). */
static int64_t ask_setup(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *qq,
                         const eo__bal_vec best, eo__bal_tail_q *q, eo__bal_tail_q *w, int *settles)
{
    *q = *qq;
    if (t->top_free && q->feas)
        q->base[EO__BT_TOP2] = best[EO__BT_TOP2];
    *w = whole(t, b, q);
    return fast_cap(b, q, best, settles);
}

/* 0 when the lists of items[0..cnt) (halves of alternate items) would not answer question qq
 * (eo__bal_tail_ask() returns 0), decided without building them: a settled question with no
 * count group pair whose d and z bounds (sum_bounds()) meet D's window for any D up to its cap.
 * 2 when plan() refuses the lists (as eo__bal_tail_build() would: too many entries), else 1. */
static int tail_may(const eo__bal *b, const int *items, int cnt, const eo__bal_lim *all,
                    size_t room_max, const eo__bal_tail_q *qq, const eo__bal_vec best)
{
    eo__bal_tail t; /* the plan's sums and bounds only */
    eo__bal_lim lim[2];
    size_t room;
    if (plan(&t, b, items, cnt, 0, all, room_max, lim, &room) != 0)
        return 2;
    eo__bal_tail_q q, w;
    int settles;
    int64_t cap = ask_setup(&t, b, qq, best, &q, &w, &settles);
    if (cap < 0 || !settles)
        return 1;
    int64_t ld[2][EO__BAL_N + 1], rd[2][EO__BAL_N + 1], xlo, xhi;
    z_center(&t, b);
    sum_bounds(&t, b, 0, 1, t.lz);
    sum_bounds(&t, b, 1, 1, t.rz);
    sum_bounds(&t, b, 0, 0, ld);
    sum_bounds(&t, b, 1, 0, rd);
    int need = b->k - w.na;
    for (int64_t a = 0; a <= cap; a++)
        for (int sg = 1; sg >= (a ? -1 : 1); sg -= 2) {
            int64_t dt = sg * a, dw = dt - w.d, zd = t.zc * dw;
            if ((w.s + dt - b->field) % 2 != 0 || !x_window(b, dt, w.s, w.xs, &xlo, &xhi))
                continue;
            for (int cl = 0; cl <= need && cl <= b->n; cl++) {
                int cr = need - cl;
                if (cr <= b->n && ld[0][cl] + rd[0][cr] <= dw && ld[1][cl] + rd[1][cr] >= dw &&
                    t.lz[0][cl] + t.rz[0][cr] <= xhi - w.x - zd &&
                    t.lz[1][cl] + t.rz[1][cr] >= xlo - w.x - zd)
                    return 1;
            }
        }
    return 0;
}

int eo__bal_tail_ask(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *qq,
                     const eo__bal_vec best, uint8_t *side, uint64_t *work)
{
    eo__bal_tail_q c, *q = &c, w;
    int have = 0, settles;
    eo__bal_vec cur;
    const ent *bl = NULL, *br = NULL;
    int64_t cap = ask_setup(t, b, qq, best, q, &w, &settles);
    if (cap >= 0) {
        have = tail_least(t, b, q, &w, cap, settles, best, cur, &bl, &br, work);
        if (settles && have && cur[EO__BT_SPREAD] != 0)
            have = 0; /* only spread 0 could do */
    } else {
        tail_scan(t, b, &w, best, cur, &bl, &br, &have, work);
    }
    if (!have ||
        (q->feas ? eo__bal_cmp(b, cur, best) > 0 : q->found && eo__bal_cmp(b, cur, best) >= 0))
        return 0;
    eo__bal_sides(b, t->fr, t->hl, bl->mask, t->fr + t->hl, t->h - t->hl, br->mask, side);
    return 1;
}

/* A full split: everyone plays (2k = N, parties whole, no BENCH status), so the lists place
 * every free item; in scramble mode, also nobody prefers a side (the vector is then top2,
 * spread, dev; in rebalance mode moves, denied, dev). */
static int full_split(const eo__bal *b)
{
    if (b->allow_split || 2 * b->k != b->n || !eo__bal_list_ok(b))
        return 0;
    for (int i = 0; i < b->n && b->mode == EO_BALANCE_SCRAMBLE; i++)
        if (b->prefer[i] != EO__SIDE_BENCH)
            return 0;
    for (int t = 0; t < b->m; t++)
        if (b->ist[t] == EO__BS_BENCH)
            return 0;
    return 1;
}

/* The sums of the items not in w[0..nw) (in_w) with their sides in side[], into *q. */
static void fixed_sums(const eo__bal *b, const uint8_t *in_w, const uint8_t *side,
                       eo__bal_tail_q *q)
{
    memset(q, 0, sizeof *q);
    for (int x = 0; x < b->m; x++) {
        if (in_w[x])
            continue;
        int sd = side[b->mem[b->istart[x]]];
        for (int u = b->istart[x]; u < b->istart[x + 1]; u++) {
            int i = b->mem[u], sg = sd == EO__SIDE_A ? 1 : -1;
            q->na += sd == EO__SIDE_A;
            q->nb += sd == EO__SIDE_B;
            q->mv += b->team[i] != EO__SIDE_BENCH && b->team[i] != sd;
            q->dn += b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != sd ? b->w[i] : 0;
            q->d += sg * b->q[i];
            q->ds += sg * b->qs[i];
            q->x += sg * b->qs[i] * b->qs[i];
            q->s += b->qs[i];
            q->xs += b->qs[i] * b->qs[i];
            if (i == b->best[0])
                q->s1 = (uint8_t)sd;
            if (i == b->best[1])
                q->s2 = (uint8_t)sd;
        }
    }
}

#define REPAIR_RANDOM 3 /* windows drawn at random after the three fixed ones */
/* the nearest few first: lists of 2^8 entries a half, a sixteenth of the full window's, and
 * most witnesses are near t */
#define REPAIR_SMALL 16
#define REPAIR_ROOM ((size_t)1 << (REPAIR_ITEMS / 2))
#define REPAIR_BIG ((size_t)1 << 13) /* the last, widest window's entries a half */

/* One try of eo__bal_repair() with the window w[0..nw): everyone else as in side[]. */
static int repair_try(eo__bal *b, const int *w, int nw, const eo__bal_vec best, uint8_t *side,
                      size_t room)
{
    uint8_t in_w[EO__BAL_N] = {0};
    for (int y = 0; y < nw; y++)
        in_w[w[y]] = 1;
    eo__bal_tail_q q;
    fixed_sums(b, in_w, side, &q);
    eo__bal_eval(b, side, q.base); /* top2 and the constant terms */
    q.dev_max = best[EO__BT_DEV];
    q.feas = 1;
    eo__bal_lim lim = {b->k - q.na, b->k - q.nb, b->n, INT64_MAX};
    int rc = tail_may(b, w, nw, &lim, room, &q, best); /* no lists built in vain */
    if (rc != 1)
        return rc;
    rc = eo__bal_tail_build(&b->repair, b, w, nw, 0, &lim, room);
    if (rc != 0)
        return rc; /* 2: too many entries */
    uint64_t work = room;
    rc = eo__bal_tail_ask(b->repair, b, &q, best, side, &work);
    b->work += work;
    return rc;
}

/* The undecided items but t (ist FREE or PLAY) by rating sum descending into by_q, and by
 * distance to t's sum into near. Returns their number. */
static int undecided_by_q(const eo__bal *b, int t, int *by_q, int *near)
{
    int64_t sum[EO__BAL_N], dist[EO__BAL_N], qt = 0;
    for (int u = t < 0 ? 0 : b->istart[t]; t >= 0 && u < b->istart[t + 1]; u++)
        qt += b->q[b->mem[u]];
    int nu = 0;
    for (int x = 0; x < b->m; x++) {
        if ((b->ist[x] != EO__BS_PLAY && b->ist[x] != EO__BS_FREE) || x == t)
            continue;
        sum[x] = 0;
        for (int u = b->istart[x]; u < b->istart[x + 1]; u++)
            sum[x] += b->q[b->mem[u]];
        dist[x] = -eo__abs64(sum[x] - qt);
        eo__insert_by_key_desc(by_q, nu, x, sum);
        eo__insert_by_key_desc(near, nu, x, dist);
        nu++;
    }
    return nu;
}

/* eo__bal_repair()'s later windows (REPAIR_REST): a few drawn at random, then the widest
 * spread of ratings whose lists fit within REPAIR_BIG. */
static int repair_rest(eo__bal *b, int t, const eo__bal_vec best, uint8_t *side,
                       const uint8_t *keep, const int *by_q, int nu, int nw)
{
    int rc = 0;
    uint64_t rng = (uint64_t)t * 0x9E3779B97F4A7C15u + (uint64_t)nu;
    for (int tr = 0; rc == 0 && tr < REPAIR_RANDOM; tr++) {
        int pick[EO__BAL_N];
        memcpy(pick, by_q, sizeof(int) * (size_t)nu);
        for (int y = 0; y < nw; y++) { /* the first nw of a shuffle */
            rng = rng * 6364136223846793005u + 1442695040888963407u;
            int z = y + (int)((rng >> 33) % (uint64_t)(nu - y));
            int tmpv = pick[y];
            pick[y] = pick[z];
            pick[z] = tmpv;
        }
        memcpy(side, keep, (size_t)b->n);
        rc = repair_try(b, pick, nw, best, side, REPAIR_ROOM);
    }
    for (int big = nu; (rc == 0 || rc == 2) && big > nw; big--) {
        int wide[EO__BAL_N];
        for (int y = 0; y < big; y++)
            wide[y] = by_q[(int)((int64_t)y * nu / big)];
        memcpy(side, keep, (size_t)b->n);
        if ((rc = repair_try(b, wide, big, best, side, REPAIR_BIG)) != 2)
            break;
    }
    return rc;
}

int eo__bal_repair(eo__bal *b, int t, const eo__bal_vec best, uint8_t *side, int windows)
{
    /* scramble only: in rebalance most team-A questions are "no" (a player asked onto A who is
     * on B and need not move), where a witness is sought in vain */
    if (b->mode != EO_BALANCE_SCRAMBLE || !full_split(b) || b->spread_shift != 0)
        return 0;
    int by_q[EO__BAL_N], near[EO__BAL_N];
    int nu = undecided_by_q(b, t, by_q, near);
    int nw = nu < REPAIR_ITEMS ? nu : REPAIR_ITEMS, rc = 0;
    if (nw == 0 || (windows == REPAIR_REST && nu <= nw))
        return 0;
    uint8_t keep[EO__BAL_N];
    memcpy(keep, side, (size_t)b->n);
    if (windows != REPAIR_REST) { /* the nearest to t, every (nu / nw)-th by rating, the largest */
        int spread[REPAIR_ITEMS];
        for (int y = 0; y < nw; y++)
            spread[y] = by_q[(int)((int64_t)y * nu / nw)];
        rc = nw > REPAIR_SMALL ? repair_try(b, near, REPAIR_SMALL, best, side, REPAIR_ROOM) : 0;
        if (rc == 0) {
            memcpy(side, keep, (size_t)b->n);
            rc = repair_try(b, near, nw, best, side, REPAIR_ROOM);
        }
        rc = rc == 2 ? 0 : rc;
        if (rc == 0 && nu > nw) {
            memcpy(side, keep, (size_t)b->n);
            rc = repair_try(b, spread, nw, best, side, REPAIR_ROOM);
        }
        if (rc == 0 && nu > nw) { /* the largest: the most reach in Σq and Σq² */
            memcpy(side, keep, (size_t)b->n);
            rc = repair_try(b, by_q, nw, best, side, REPAIR_ROOM);
        }
    }
    if (rc == 0 && windows != REPAIR_FIRST && nu > nw)
        rc = repair_rest(b, t, best, side, keep, by_q, nu, nw);
    return rc == 2 ? 0 : rc;
}

/* The undecided items (status FREE or PLAY) into w, and the sums of the others as side[] has
 * them into *q. Returns their number. */
static int undecided(const eo__bal *b, const uint8_t *side, int *w, eo__bal_tail_q *q)
{
    int nw = 0;
    uint8_t in_w[EO__BAL_N] = {0};
    for (int x = 0; x < b->m; x++)
        if (b->ist[x] == EO__BS_PLAY || b->ist[x] == EO__BS_FREE) {
            w[nw++] = x;
            in_w[x] = 1;
        }
    fixed_sums(b, in_w, side, q);
    return nw;
}

/* Rebalance: the undecided items w[0..nw) reordered by home (items whose members all have
 * current team A, then those whose members all have B), and each half's limits in lim[0..1]:
 * best is the least vector, so no pair moves or denies more than it leaves (mv, dn), and when
 * every item has one home a pair's moves from each are fixed by the count on A (an A-home item
 * that moves leaves A; a B-home one joins it): the lists then hold only those. Returns the
 * number of A-home items (the left half), 0 for the usual halves (an item without one home). */
static int by_home(const eo__bal *b, const eo__bal_vec best, const eo__bal_tail_q *q, int *w,
                   int nw, eo__bal_lim *lim)
{
    lim[0].mv = (int)(best[EO__BT_MOVES] - q->mv);
    lim[0].dn = best[EO__BT_DENIED] - q->dn;
    int home[EO__BAL_N], na = 0, nb = 0, ma = 0;
    for (int y = 0; y < nw; y++) {
        int t = w[y], h = b->team[b->mem[b->istart[t]]];
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            h = b->team[b->mem[u]] == h ? h : EO__SIDE_BENCH;
        if (h == EO__SIDE_BENCH)
            return 0;
        home[y] = h;
        na += h == EO__SIDE_A;
        nb += h == EO__SIDE_B;
        ma += h == EO__SIDE_A ? b->istart[t + 1] - b->istart[t] : 0;
    }
    /* ma - mv(A-home) + mv(B-home) = k - q->na members on A, and the two moves add to lim.mv */
    int twice = lim[0].mv + ma - (b->k - q->na);
    if (twice < 0 || twice % 2 != 0 || twice / 2 > lim[0].mv || na == 0 || nb == 0)
        return 0;
    int tmp[EO__BAL_N], x = 0;
    for (int side = EO__SIDE_A; side <= EO__SIDE_B; side++)
        for (int y = 0; y < nw; y++)
            if (home[y] == side)
                tmp[x++] = w[y];
    memcpy(w, tmp, sizeof(int) * (size_t)nw);
    lim[1] = lim[0];
    lim[0].mv = twice / 2;
    lim[1].mv -= twice / 2;
    return na;
}

int eo__bal_finish(eo__bal *b, int64_t T, const eo__bal_vec best, uint8_t *side)
{
    if (!full_split(b) || (b->mode == EO_BALANCE_SCRAMBLE && b->spread_shift != 0))
        return 2;
    int w[EO__BAL_N];
    eo__bal_tail_q q;
    int nw = undecided(b, side, w, &q);
    eo__bal_eval(b, side, q.base); /* the constant terms (top2 is each pair's) */
    q.dev_max = T;
    eo__bal_lim lim[2] = {{b->k - q.na, b->k - q.nb, b->n, INT64_MAX}};
    int nleft = b->mode == EO_BALANCE_REBALANCE ? by_home(b, best, &q, w, nw, lim) : 0;
    int rc = eo__bal_tail_build(&b->repair, b, w, nw, nleft, lim, FINISH_ROOM);
    if (rc != 0)
        return rc;
    uint64_t work = FINISH_ROOM / 8;
    eo__bal_tail_q wq = whole(b->repair, b, &q);
    rc = exact_match(b, &q, best) ? first_pair(b->repair, b, &wq, best, side, &work) : 2;
    b->work += work;
    return rc == 0 ? EO_EINTERNAL : rc; /* a witness keeps the statuses */
}

/* For the left entry l and the right entries of moves mb (and the count that completes l's),
 * those with |D| <= T: the least (denied weight, |D|) of them, into *dn, *dev, *br when it
 * beats what they hold (*br NULL: nothing yet). Returns 1 when it did. */
static int least_pair(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *w,
                      const ent *l, int mb, int64_t T, int64_t *dn, int64_t *dev, const ent **br,
                      uint64_t *work)
{
    int cr = b->k - w->na - l->na;
    if (cr < 0 || cr > b->n)
        return 0;
    const ent *r, *e;
    int better = 0;
    moves_d(t->er + t->rstart[cr], t->er + t->rstart[cr + 1], mb, -T - w->d - l->d, T - w->d - l->d,
            &r, &e);
    for (const ent *c = r; c < e; c++) {
        ++*work;
        int64_t v = (int64_t)l->dn + c->dn, a = eo__abs64(w->d + l->d + c->d);
        if (!*br || v < *dn || (v == *dn && a < *dev)) {
            *dn = v;
            *dev = a;
            *br = c;
            better = 1;
        }
    }
    return better;
}

#define LEAST_ROOM ((size_t)1 << 16) /* once a call, not a question: wider than FINISH_ROOM */
int eo__bal_least_moves(eo__bal *b, int64_t T, eo__bal_vec best, uint8_t *side)
{
    if (b->mode != EO_BALANCE_REBALANCE || !full_split(b))
        return 2;
    int w[EO__BAL_N];
    eo__bal_tail_q q;
    int nw = undecided(b, side, w, &q);
    /* moves from the A-home items (ma) and the B-home ones (mb): ma - mb is fixed by the count
     * on A, so the fewest moves is the least mb with a split within T */
    int ma0 = 0; /* the A-home members (by_home() checks that every item has one home) */
    for (int y = 0; y < nw; y++)
        ma0 += b->team[b->mem[b->istart[w[y]]]] == EO__SIDE_A
                   ? b->istart[w[y] + 1] - b->istart[w[y]]
                   : 0;
    for (int mb = 0; mb <= b->n; mb++) {
        int ma = ma0 - (b->k - q.na) + mb;
        if (ma < 0)
            continue;
        eo__bal_vec probe; /* these moves, any denials */
        memset(probe, 0, sizeof probe);
        probe[EO__BT_MOVES] = q.mv + ma + mb;
        probe[EO__BT_DENIED] = INT64_MAX / 2;
        eo__bal_lim lim[2] = {{b->k - q.na, b->k - q.nb, b->n, INT64_MAX}};
        int nleft = by_home(b, probe, &q, w, nw, lim);
        if (nleft == 0 || lim[0].mv != ma)
            return 2;
        int rc = eo__bal_tail_build(&b->repair, b, w, nw, nleft, lim, LEAST_ROOM);
        if (rc != 0)
            return rc;
        const eo__bal_tail *t = b->repair;
        eo__bal_tail_q wq = whole(t, b, &q);
        uint64_t work = LEAST_ROOM / 8;
        int64_t dn = 0, dev = 0;
        const ent *bl = NULL, *br = NULL;
        for (const ent *l = t->el; l < t->el + t->lstart[b->n + 1] && l->mv <= ma; l++) {
            ++work;
            if (l->mv == ma && (!br || l->dn <= dn) &&
                least_pair(t, b, &wq, l, mb, T, &dn, &dev, &br, &work))
                bl = l;
        }
        b->work += work;
        if (br) {
            eo__bal_sides(b, t->fr, t->hl, bl->mask, t->fr + t->hl, t->h - t->hl, br->mask, side);
            eo__bal_eval(b, side, best);
            return 1;
        }
        if (b->work_limit && b->work > b->work_limit)
            return EO_ELIMIT;
    }
    return 2;
}
