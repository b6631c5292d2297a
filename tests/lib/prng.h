/* Test helper: a small deterministic PRNG (splitmix64) for property tests, the same sequence
 * on every machine. Header only. */
#ifndef EO_TEST_PRNG_H
#define EO_TEST_PRNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct prng {
    uint64_t s;
} prng;

static inline uint64_t next_u64(prng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double unif(prng *r)
{
    return (double)(next_u64(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n). */
static inline size_t below(prng *r, size_t n)
{
    return (size_t)(next_u64(r) % n);
}

#endif
