/* Helpers shared by the benchmarks (header only): one PRNG and one rating draw, so that rows of
 * different programs that say "the same draws" are the same draws, and the clocks. */
#ifndef EO_BENCH_UTIL_H
#define EO_BENCH_UTIL_H

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/* splitmix64 (Steele, Lea, Flood 2014). */
static inline uint64_t bench_rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

/* Uniform in (0, 1): the top 53 bits, centred. */
static inline double bench_rng_unit(uint64_t *s)
{
    return ((double)(bench_rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
}

/* normal(1000, 300) by Box-Muller from two draws (u first, then v), rounded, clamped >= 100. */
static inline int64_t bench_normal_rating(uint64_t *s)
{
    double u = bench_rng_unit(s), v = bench_rng_unit(s);
    double z = sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
    int64_t r = (int64_t)llround(1000.0 + 300.0 * z);
    return r < 100 ? 100 : r;
}

static inline double bench_clock_us(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* Wall clock (monotonic), microseconds. */
static inline double bench_now_us(void) { return bench_clock_us(CLOCK_MONOTONIC); }

/* qsort comparator for doubles, ascending. */
/* A whole decimal number without sign or trailing characters. 0, or -1 (not one). */
static inline int bench_parse_u(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#endif
