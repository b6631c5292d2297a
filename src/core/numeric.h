/* Deterministic numeric helpers of the core (internal).
 *
 * Everything that feeds a rating goes through these instead of libm, so that a replay gives the
 * same bits with any C library: only + - * / and conversions, which IEEE 754 defines exactly
 * (the build also passes -ffp-contract=off so no a*b+c becomes an FMA). */
#ifndef EO_NUMERIC_H
#define EO_NUMERIC_H

#include <stdint.h>

/* e^x. Cody-Waite reduction x = k*ln2 + r (|r| <= ln2/2), a degree-13 Taylor polynomial for
 * e^r (Estrin's scheme), then an exact scaling by 2^k. Max error measured against glibc's exp: see
 * docs/MODELS.md (tests/unit/test_numeric.c checks <= 2 ulp on [-700, 700]).
 * NaN gives NaN, x > 709.78 gives +inf, x < -745.14 gives +0. */
double eo__exp(double x);

/* Natural logarithm. x = 2^k * m with m in [sqrt(1/2), sqrt(2)) (subnormals scaled by 2^54
 * first), f = m - 1, s = f / (2 + f), ln m = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R(s^2)) with
 * R the atanh series 2 z/3 + 2 z^2/5 + ... + 2 z^11/23 (truncation error < 1e-19 for
 * |s| <= 0.172), plus k ln 2 in two parts (k * LN2_HI exact). Max error measured against glibc's
 * log: see docs/MODELS.md (tests/unit/test_numeric.c checks <= 2 ulp over [1e-308, 1e308]).
 * log(1) = +0, log(+0) = log(-0) = -inf, x < 0 gives NaN, log(+inf) = +inf, NaN gives NaN. */
double eo__log(double x);

/* Rounds to the nearest integer, ties to even (banker's rounding). |v| must be < 2^62 and
 * finite; the caller keeps it so. Exact: no rounding mode is read. Inline: it runs once per
 * player update. */
static inline int64_t eo__round_half_even(double v)
{
    /* Branch-free on purpose: the tie and direction tests are coin flips for real ratings,
     * and a mispredicted branch here would stall every update on the whole K computation. */
    int64_t i = (int64_t)v;      /* toward zero */
    i -= (double)i > v;          /* now floor(v) */
    double frac = v - (double)i; /* exact: v and floor(v) are within 1 of each other */
    int64_t up = (frac > 0.5) | ((frac == 0.5) & (int)(i & 1));
    return i + up;
}

/* splitmix64's finaliser (Steele, Lea, Flood 2014) of x + the golden gamma: a fixed, well-mixed
 * 64-bit function, for draws that are a hash of what they are about (the matcher's map, the
 * matchmaking simulation's world). */
static inline uint64_t eo__mix64(uint64_t x)
{
    x += UINT64_C(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
    return x ^ (x >> 31);
}

/* min(1, max(0, v)); NaN gives 0. */
static inline double eo__clamp01(double v)
{
    v = v >= 0.0 ? v : 0.0;
    return v > 1.0 ? 1.0 : v;
}

#endif
