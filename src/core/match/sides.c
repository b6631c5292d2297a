/* Two teams of k from a group's tickets, parties whole, with the least |D| = |ΣA − ΣB + F|
 * (split units, F the map's field): the balancer's primary objective (docs/BALANCER.md),
 * answered fast enough for a matcher's pass, where thousands of groups are split per second
 * (docs/MATCHMAKING.md, "Teams").
 *
 * 1. Greedy: tickets by value per player, largest first, each to the side that lowers |D| (if
 *    it fits). 2. Swaps of two tickets of one size across the sides while one lowers |D|.
 * 3. Unless that reached the parity bound (D has the parity of ΣA + ΣB + F), a branch and bound
 *    over the same order, each branch bounded by its relaxation (parties cut into players, the
 *    remaining players sorted by value: the most and the least the undecided players can add to
 *    D with the seats left on each side). Finished, or at the parity bound, the answer is
 *    proven best; past its node budget it is the best found, and the caller asks the balancer. */
#include <math.h>

#include "match_internal.h"

#define M_MAX (2 * EO_MATCH_TEAM_MAX)

typedef struct bb {
    int m, k;
    const int64_t *v; /* value of each ticket: Σ (rating − least rating) of its players */
    const int *size;
    int order[M_MAX];         /* tickets by value per player, descending */
    int first[M_MAX + 1];     /* players before order[i] in that order */
    double pp[2 * M_MAX + 1]; /* prefix sums of the players' values in that order */
    int64_t lb;
    uint64_t nodes, limit;
    uint8_t cur[M_MAX];
    uint8_t *best;
    int64_t best_dev;
} bb;

static int64_t abs64(int64_t x)
{
    return x < 0 ? -x : x;
}

/* The least |D| any completion from order[i] on can reach, with @p ca and @p cb seats left:
 * the relaxation's interval of D, and its distance from 0 (rounded up: D is an integer). */
static int64_t bound(const bb *s, int i, int ca, int cb, int64_t d)
{
    int o = s->first[i], e = o + ca + cb;
    double hi = (double)d + (s->pp[o + ca] - s->pp[o]) - (s->pp[e] - s->pp[o + ca]);
    double lo = (double)d + (s->pp[e] - s->pp[e - ca]) - (s->pp[e - ca] - s->pp[o]);
    double x = lo > 0 ? lo : hi < 0 ? -hi : 0;
    return (int64_t)ceil(x - 1e-6 * (1.0 + x));
}

static void search(bb *s, int i, int ca, int cb, int64_t d)
{
    if (s->best_dev <= s->lb || s->nodes >= s->limit)
        return;
    s->nodes++;
    if (i == s->m) {
        if (abs64(d) < s->best_dev) {
            s->best_dev = abs64(d);
            for (int j = 0; j < s->m; j++)
                s->best[j] = s->cur[j];
        }
        return;
    }
    if (bound(s, i, ca, cb, d) >= s->best_dev)
        return;
    int t = s->order[i], sz = s->size[t];
    uint8_t side = d > 0 ? EO_BALANCE_B : EO_BALANCE_A;
    for (int pass = 0; pass < 2; pass++, side = (uint8_t)(EO_BALANCE_A + EO_BALANCE_B - side)) {
        if ((side == EO_BALANCE_A ? ca : cb) < sz)
            continue;
        s->cur[t] = side;
        if (side == EO_BALANCE_A)
            search(s, i + 1, ca - sz, cb, d + s->v[t]);
        else
            search(s, i + 1, ca, cb - sz, d - s->v[t]);
    }
}

/* Steps 1 and 2 into s->best; false when the greedy pass finds no seats for a ticket. */
static bool greedy(bb *s, int64_t field)
{
    int ca = s->k, cb = s->k;
    int64_t d = field;
    for (int i = 0; i < s->m; i++) {
        int t = s->order[i], sz = s->size[t];
        bool a = d <= 0 ? ca >= sz : cb < sz;
        if ((a ? ca : cb) < sz)
            return false;
        s->best[t] = a ? EO_BALANCE_A : EO_BALANCE_B;
        a ? (ca -= sz) : (cb -= sz);
        d += a ? s->v[t] : -s->v[t];
    }
    for (bool better = true; better && abs64(d) > s->lb;) {
        better = false;
        int64_t best = abs64(d);
        int bx = -1, by = -1;
        int on_b[M_MAX], nb = 0;
        for (int y = 0; y < s->m; y++)
            if (s->best[y] == EO_BALANCE_B)
                on_b[nb++] = y;
        for (int x = 0; x < s->m; x++) {
            if (s->best[x] != EO_BALANCE_A)
                continue;
            for (int j = 0; j < nb; j++) {
                int y = on_b[j];
                int64_t dev = abs64(d - 2 * (s->v[x] - s->v[y]));
                if (dev < best && s->size[x] == s->size[y])
                    best = dev, bx = x, by = y;
            }
        }
        if (bx >= 0) {
            d -= 2 * (s->v[bx] - s->v[by]);
            s->best[bx] = EO_BALANCE_B, s->best[by] = EO_BALANCE_A;
            better = true;
        }
    }
    s->best_dev = abs64(d);
    return true;
}

static void prepare(bb *s)
{
    for (int i = 0; i < s->m; i++) {
        int j = i; /* insertion by value per player descending, ties in group order */
        for (; j > 0 && s->v[s->order[j - 1]] * s->size[i] < s->v[i] * s->size[s->order[j - 1]];
             j--)
            s->order[j] = s->order[j - 1];
        s->order[j] = i;
    }
    int x = 0;
    s->pp[0] = 0.0;
    for (int i = 0; i < s->m; i++) {
        int t = s->order[i];
        s->first[i] = x;
        for (int j = 0; j < s->size[t]; j++, x++)
            s->pp[x + 1] = s->pp[x] + (double)s->v[t] / s->size[t];
    }
    s->first[s->m] = x;
}

int eo__match_sides(const int64_t *v, const int *size, int m, int k, int64_t field, uint64_t limit,
                    uint8_t *side)
{
    bb s; /* its arrays are filled before they are read: no need to clear them */
    s.m = m, s.k = k, s.v = v, s.size = size, s.limit = limit, s.best = side, s.nodes = 0;
    int64_t total = field;
    for (int i = 0; i < m; i++)
        total += v[i];
    s.lb = abs64(total) % 2;
    s.best_dev = INT64_MAX;
    prepare(&s);
    if (greedy(&s, field) && s.best_dev <= s.lb)
        return 1;
    search(&s, 0, k, k, field);
    if (s.best_dev == INT64_MAX)
        return -1;
    return s.best_dev <= s.lb || s.nodes < s.limit;
}
