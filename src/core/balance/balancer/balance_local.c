/* Local search of the balancer (balance_internal.h): seed 000 F10's fallback, bench-aware.
 * From a start that honours every status, the best improving exchange of two items of the same
 * size between A, B and the bench is applied, and the scan starts again, until no exchange
 * improves; the first start keeps the current teams, the others are random (seeded). The key
 * minimised is (max(|D|, eps), the active terms in their order): splits within the tolerance
 * compare by the secondary terms, as in the exact solver. No optimality is claimed. Each
 * exchange is evaluated from running totals in O(1) (inc_eval), not by a pass over the players. */
#include <stdlib.h>
#include <string.h>

#include "balance_internal.h"
#include "core/balance/common.h"

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

int eo__bal_key_cmp(const eo__bal *b, int64_t eps, const eo__bal_vec x, const eo__bal_vec y)
{
    int64_t fx = x[EO__BT_DEV] > eps ? x[EO__BT_DEV] : eps;
    int64_t fy = y[EO__BT_DEV] > eps ? y[EO__BT_DEV] : eps;
    if (fx != fy)
        return fx < fy ? -1 : 1;
    return eo__bal_cmp(b, x, y);
}

static int size_of(const eo__bal *b, int t) { return b->istart[t + 1] - b->istart[t]; }

static void put(const eo__bal *b, uint8_t *side, int t, int sd)
{
    for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
        side[b->mem[u]] = (uint8_t)sd;
}

static int may(const eo__bal *b, int t, int sd)
{
    int st = b->ist[t];
    if (st == EO__BS_FREE)
        return 1;
    if (st == EO__BS_PLAY)
        return sd != EO__SIDE_BENCH;
    return (st == EO__BS_A && sd == EO__SIDE_A) || (st == EO__BS_B && sd == EO__SIDE_B) ||
           (st == EO__BS_BENCH && sd == EO__SIDE_BENCH);
}

/* A start honouring every status with k players a side; 0 when the greedy fill fails. */
static int start(const eo__bal *b, int r, uint64_t *rng, uint8_t *side, uint8_t *itside)
{
    int m = b->m, k = b->k, na = 0, nb = 0;
    int ord[EO__BAL_N], seen[EO__BAL_N], no = 0;
    memset(seen, 0, sizeof(int) * (size_t)m);
    for (int x = 0; x < b->n; x++) { /* items by their first member in priority order */
        int t = b->item_of[b->prio[x]];
        if (!seen[t]) {
            seen[t] = 1;
            ord[no++] = t;
        }
    }
    if (r > 0)
        for (int x = no - 1; x > 0; x--) {
            int y = (int)(next(rng) % (uint64_t)(x + 1));
            int t = ord[x];
            ord[x] = ord[y];
            ord[y] = t;
        }
    for (int t = 0; t < m; t++)
        itside[t] = 0xff;
    for (int t = 0; t < m; t++) {
        int st = b->ist[t], sz = size_of(b, t);
        if (st == EO__BS_A || st == EO__BS_B || st == EO__BS_BENCH) {
            itside[t] = st == EO__BS_A ? EO__SIDE_A : st == EO__BS_B ? EO__SIDE_B : EO__SIDE_BENCH;
            na += st == EO__BS_A ? sz : 0;
            nb += st == EO__BS_B ? sz : 0;
        }
    }
    /* first start: everyone whose item has one current team stays there while it fits */
    for (int x = 0; x < no && r == 0; x++) {
        int t = ord[x], sz = size_of(b, t), cur = b->team[b->mem[b->istart[t]]];
        if (itside[t] != 0xff || cur == EO__SIDE_BENCH)
            continue;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            if (b->team[b->mem[u]] != cur)
                cur = EO__SIDE_BENCH;
        if (cur == EO__SIDE_A && na + sz <= k) {
            itside[t] = EO__SIDE_A;
            na += sz;
        } else if (cur == EO__SIDE_B && nb + sz <= k) {
            itside[t] = EO__SIDE_B;
            nb += sz;
        }
    }
    for (int pass = 0; pass < 2; pass++) /* items that must play first */
        for (int x = 0; x < no; x++) {
            int t = ord[x], sz = size_of(b, t);
            if (itside[t] != 0xff || (pass == 0) != (b->ist[t] == EO__BS_PLAY))
                continue;
            int first = nb < na ? EO__SIDE_B : EO__SIDE_A;
            int other = first == EO__SIDE_A ? EO__SIDE_B : EO__SIDE_A;
            int nf = first == EO__SIDE_A ? na : nb, nothr = first == EO__SIDE_A ? nb : na;
            int sd = nf + sz <= k ? first : nothr + sz <= k ? other : EO__SIDE_BENCH;
            if (!may(b, t, sd))
                return 0;
            itside[t] = (uint8_t)sd;
            na += sd == EO__SIDE_A ? sz : 0;
            nb += sd == EO__SIDE_B ? sz : 0;
        }
    if (na != k || nb != k)
        return 0;
    for (int t = 0; t < m; t++)
        put(b, side, t, itside[t]);
    return 1;
}

/* The running totals of an assignment, and what each item adds on each side: an exchange is
 * then evaluated in O(1) (plus the scan for the two best playing players), giving exactly the
 * vector eo__bal_eval() gives for the exchanged assignment. */
typedef struct inc {
    int64_t d, sa, sb, xa, xb, moves, denied, bench, broken;
    int64_t q[EO__BAL_N], qs[EO__BAL_N], x2[EO__BAL_N];      /* per item */
    int64_t mv[EO__BAL_N][3], dn[EO__BAL_N][3], bn[EO__BAL_N][3]; /* per item and side */
    int pc[EO__BAL_N][3];                                     /* party members per side */
} inc;

static int is_broken(const int *c) { return (c[0] != 0) + (c[1] != 0) + (c[2] != 0) >= 2; }

static void inc_items(const eo__bal *b, inc *z)
{
    for (int t = 0; t < b->m; t++) {
        z->q[t] = z->qs[t] = z->x2[t] = 0;
        for (int sd = 0; sd < 3; sd++)
            z->mv[t][sd] = z->dn[t][sd] = z->bn[t][sd] = 0;
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++) {
            int i = b->mem[u];
            z->q[t] += b->q[i];
            z->qs[t] += b->qs[i];
            z->x2[t] += b->qs[i] * b->qs[i];
            for (int sd = 0; sd < 3; sd++) {
                z->mv[t][sd] += b->team[i] != EO__SIDE_BENCH && b->team[i] != sd;
                z->dn[t][sd] += b->prefer[i] != EO__SIDE_BENCH && b->prefer[i] != sd ? b->w[i] : 0;
                z->bn[t][sd] += b->sat_out[i] && sd == EO__SIDE_BENCH;
            }
        }
    }
}

/* Totals of the item sides its[]. */
static void inc_totals(const eo__bal *b, const uint8_t *its, inc *z)
{
    z->d = z->sa = z->sb = z->xa = z->xb = z->moves = z->denied = z->bench = z->broken = 0;
    for (int p = 0; p < b->npart; p++)
        z->pc[p][0] = z->pc[p][1] = z->pc[p][2] = 0;
    for (int t = 0; t < b->m; t++) {
        int sd = its[t];
        if (sd == EO__SIDE_A) {
            z->d += z->q[t];
            z->sa += z->qs[t];
            z->xa += z->x2[t];
        } else if (sd == EO__SIDE_B) {
            z->d -= z->q[t];
            z->sb += z->qs[t];
            z->xb += z->x2[t];
        }
        z->moves += z->mv[t][sd];
        z->denied += z->dn[t][sd];
        z->bench += z->bn[t][sd];
        for (int u = b->istart[t]; u < b->istart[t + 1]; u++)
            if (b->party[b->mem[u]] >= 0)
                z->pc[b->party[b->mem[u]]][sd]++;
    }
    for (int p = 0; p < b->npart; p++)
        z->broken += is_broken(z->pc[p]);
}

/* Moves item t's members from side f to side g in the party counts; returns the change of the
 * number of broken parties. */
static int64_t party_move(const eo__bal *b, inc *z, int t, int f, int g)
{
    int64_t ch = 0;
    for (int u = b->istart[t]; u < b->istart[t + 1]; u++) {
        int p = b->party[b->mem[u]];
        if (p < 0)
            continue;
        ch -= is_broken(z->pc[p]);
        z->pc[p][f]--;
        z->pc[p][g]++;
        ch += is_broken(z->pc[p]);
    }
    return ch;
}

/* The vector after exchanging items x (on sx) and y (on sy): x goes to sy, y to sx. */
static void inc_eval(const eo__bal *b, inc *z, const uint8_t *its, int x, int y, eo__bal_vec v)
{
    int sx = its[x], sy = its[y];
    int64_t d = z->d, sa = z->sa, sb = z->sb, xa = z->xa, xb = z->xb;
    int xs[2] = {x, y}, from[2] = {sx, sy}, to[2] = {sy, sx};
    for (int e = 0; e < 2; e++) {
        int t = xs[e];
        if (from[e] == EO__SIDE_A) {
            d -= z->q[t];
            sa -= z->qs[t];
            xa -= z->x2[t];
        } else if (from[e] == EO__SIDE_B) {
            d += z->q[t];
            sb -= z->qs[t];
            xb -= z->x2[t];
        }
        if (to[e] == EO__SIDE_A) {
            d += z->q[t];
            sa += z->qs[t];
            xa += z->x2[t];
        } else if (to[e] == EO__SIDE_B) {
            d -= z->q[t];
            sb += z->qs[t];
            xb += z->x2[t];
        }
    }
    v[EO__BT_MOVES] = z->moves - z->mv[x][sx] + z->mv[x][sy] - z->mv[y][sy] + z->mv[y][sx];
    v[EO__BT_DENIED] = z->denied - z->dn[x][sx] + z->dn[x][sy] - z->dn[y][sy] + z->dn[y][sx];
    v[EO__BT_BENCH] = z->bench - z->bn[x][sx] + z->bn[x][sy] - z->bn[y][sy] + z->bn[y][sx];
    v[EO__BT_BROKEN] = z->broken;
    if (b->npart) {
        int64_t ch = party_move(b, z, x, sx, sy);
        ch += party_move(b, z, y, sy, sx);
        v[EO__BT_BROKEN] += ch;
        party_move(b, z, y, sx, sy);
        party_move(b, z, x, sy, sx);
    }
    /* the two best playing players (rating, then index) after the exchange */
    int first = -1;
    v[EO__BT_TOP2] = 0;
    for (int r = 0; r < b->n; r++) {
        int i = b->best[r], t = b->item_of[i];
        int sd = t == x ? sy : t == y ? sx : its[t];
        if (sd == EO__SIDE_BENCH)
            continue;
        if (first < 0) {
            first = sd;
        } else {
            v[EO__BT_TOP2] = sd == first;
            break;
        }
    }
    v[EO__BT_SPREAD] = eo__bal_spread(b, sa, sb, xa, xb);
    v[EO__BT_DEV] = eo__abs64(d + b->field);
}

int eo__bal_local(const eo__bal *b, int64_t eps, uint64_t seed, int restarts, uint8_t *side,
                  eo__bal_vec vec)
{
    uint64_t rng = seed;
    int found = 0;
    uint8_t cur[EO__BAL_N], its[EO__BAL_N];
    inc *z = malloc(sizeof *z);
    if (!z)
        return EO_ENOMEM;
    inc_items(b, z);
    for (int r = 0; r <= restarts; r++) {
        if (!start(b, r, &rng, cur, its))
            continue;
        eo__bal_vec v;
        eo__bal_eval(b, cur, v);
        inc_totals(b, its, z);
        /* steepest descent over exchanges of two items of one size on different sides */
        for (int step = 0; step < 4 * b->n + 16; step++) {
            int bx = -1, by = -1;
            eo__bal_vec bv;
            memcpy(bv, v, sizeof bv);
            for (int x = 0; x < b->m; x++)
                for (int y = x + 1; y < b->m; y++) {
                    int sx = its[x], sy = its[y];
                    if (sx == sy || size_of(b, x) != size_of(b, y) || !may(b, x, sy) ||
                        !may(b, y, sx))
                        continue;
                    eo__bal_vec t;
                    inc_eval(b, z, its, x, y, t);
                    if (eo__bal_key_cmp(b, eps, t, bv) < 0) {
                        memcpy(bv, t, sizeof bv);
                        bx = x;
                        by = y;
                    }
                }
            if (bx < 0)
                break;
            uint8_t t = its[bx];
            its[bx] = its[by];
            its[by] = t;
            put(b, cur, bx, its[bx]);
            put(b, cur, by, its[by]);
            memcpy(v, bv, sizeof v);
            inc_totals(b, its, z);
        }
        if (!found || eo__bal_key_cmp(b, eps, v, vec) < 0) {
            memcpy(vec, v, sizeof(eo__bal_vec));
            memcpy(side, cur, (size_t)b->n);
            found = 1;
        }
    }
    free(z);
    return found;
}
