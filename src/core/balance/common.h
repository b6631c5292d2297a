/* Integer helpers shared by the parts of src/core/balance/ (internal): the splitter (split/),
 * the balancer (balancer/) and mid-round autobalance (autobalance/); the scramble triggers
 * (triggers/) need none. docs/BALANCER.md describes each part and names its files.
 *
 * Inline: they run in the searches' inner loops, where a call would cost more than the work. */
#ifndef EO_BALANCE_COMMON_H
#define EO_BALANCE_COMMON_H

#include <stdint.h>

/* |v|. v > INT64_MIN: ratings, sums and gaps stay far below 2^62 in magnitude. */
static inline int64_t eo__abs64(int64_t v)
{
    return v < 0 ? -v : v;
}

/* Least |v| over v in [lo, hi] (lo <= hi): how close to 0 an interval of reachable
 * differences comes, the bound of the branch-and-bound searches. */
static inline int64_t eo__least_abs(int64_t lo, int64_t hi)
{
    return lo > 0 ? lo : hi < 0 ? -hi : 0;
}

/* Greatest common divisor of a >= 0 and b >= 0 (gcd(a, 0) = a, gcd(0, 0) = 0): the solvers
 * divide the ratings shifted to their minimum by it (docs/BALANCER.md, "3. The algorithm",
 * normalisation). */
static inline int64_t eo__gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Inserts v into a[0..n), sorted ascending, which stays sorted; a has room for n + 1. */
static inline void eo__insert_asc(int64_t *a, int n, int64_t v)
{
    while (n > 0 && a[n - 1] > v) {
        a[n] = a[n - 1];
        n--;
    }
    a[n] = v;
}

/* The same, a[0..n) sorted descending. */
static inline void eo__insert_desc(int64_t *a, int n, int64_t v)
{
    while (n > 0 && a[n - 1] < v) {
        a[n] = a[n - 1];
        n--;
    }
    a[n] = v;
}

/* Inserts index i into ord[0..n), indices by key[] descending and ties in insertion order
 * (stable): called for i = 0, 1, ... it sorts by key descending, ties by index. */
static inline void eo__insert_by_key_desc(int *ord, int n, int i, const int64_t *key)
{
    while (n > 0 && key[ord[n - 1]] < key[i]) {
        ord[n] = ord[n - 1];
        n--;
    }
    ord[n] = i;
}

#endif
