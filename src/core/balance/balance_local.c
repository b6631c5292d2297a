/* Local search of the balancer (balance_internal.h): seed 000 F10's fallback, bench-aware.
 * From a start that honours every status, the best improving exchange of two items of the same
 * size between A, B and the bench is applied, and the scan starts again, until no exchange
 * improves; the first start keeps the current teams, the others are random (seeded). The key
 * minimised is (max(|D|, eps), the active terms in their order): splits within the tolerance
 * compare by the secondary terms, as in the exact solver. No optimality is claimed. */
#include <string.h>

#include "balance_internal.h"

static uint64_t next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* -1, 0, 1: x against y by (max(dev, eps), active terms). */
static int key_cmp(const eo__bal *b, int64_t eps, const eo__bal_vec x, const eo__bal_vec y)
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

int eo__bal_local(const eo__bal *b, int64_t eps, uint64_t seed, int restarts, uint8_t *side,
                  eo__bal_vec vec)
{
    uint64_t rng = seed;
    int found = 0;
    uint8_t cur[EO__BAL_N], its[EO__BAL_N];
    for (int r = 0; r <= restarts; r++) {
        if (!start(b, r, &rng, cur, its))
            continue;
        eo__bal_vec v;
        eo__bal_eval(b, cur, v);
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
                    put(b, cur, x, sy);
                    put(b, cur, y, sx);
                    eo__bal_vec t;
                    eo__bal_eval(b, cur, t);
                    if (key_cmp(b, eps, t, bv) < 0) {
                        memcpy(bv, t, sizeof bv);
                        bx = x;
                        by = y;
                    }
                    put(b, cur, x, sx);
                    put(b, cur, y, sy);
                }
            if (bx < 0)
                break;
            uint8_t t = its[bx];
            its[bx] = its[by];
            its[by] = t;
            put(b, cur, bx, its[bx]);
            put(b, cur, by, its[by]);
            memcpy(v, bv, sizeof v);
        }
        if (!found || key_cmp(b, eps, v, vec) < 0) {
            memcpy(vec, v, sizeof(eo__bal_vec));
            memcpy(side, cur, (size_t)b->n);
            found = 1;
        }
    }
    return found;
}
