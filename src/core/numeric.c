/* Deterministic exp and rounding: see numeric.h for why libm is avoided. */
#include "core/numeric.h"

#include <math.h>
#include <string.h>

/* ln 2 split so that k * LN2_HI is exact for |k| < 2^11 (LN2_HI has 21 trailing zero bits);
 * the classic Cody-Waite constants (values of ln 2, not code). */
#define LN2_HI 0x1.62e42feep-1
#define LN2_LO 0x1.a39ef35793c76p-33
#define INV_LN2 0x1.71547652b82fep+0

/* 2^k for k in [-1022, 1023], built from its bits. */
static double pow2i(int k)
{
    uint64_t bits = (uint64_t)(k + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

double eo__exp(double x)
{
    if (x != x)
        return x;
    if (x > 709.782712893384)
        return INFINITY;
    if (x < -745.1332191019412)
        return 0.0;
    double t = x * INV_LN2;
    int k = (int)(t >= 0.0 ? t + 0.5 : t - 0.5);
    double kd = (double)k;
    double r = (x - kd * LN2_HI) - kd * LN2_LO;
    /* e^r = 1 + r + r^2 q(r), q the Taylor series 1/2! + r/3! + ... + r^11/13! (truncation
     * error r^14/14! < 5e-18). Adding the small tail before 1 + r keeps the final rounding
     * near half an ulp. q is evaluated by Estrin's scheme, not Horner's: a dependency depth of
     * 4 instead of 11, which matters because every player update waits on one exp. */
    double r2 = r * r;
    double r4 = r2 * r2;
    double r8 = r4 * r4;
    double a0 = 1.0 / 2.0 + r * (1.0 / 6.0);
    double a1 = 1.0 / 24.0 + r * (1.0 / 120.0);
    double a2 = 1.0 / 720.0 + r * (1.0 / 5040.0);
    double a3 = 1.0 / 40320.0 + r * (1.0 / 362880.0);
    double a4 = 1.0 / 3628800.0 + r * (1.0 / 39916800.0);
    double a5 = 1.0 / 479001600.0 + r * (1.0 / 6227020800.0);
    double b0 = a0 + r2 * a1;
    double b1 = a2 + r2 * a3;
    double b2 = a4 + r2 * a5;
    double q = (b0 + r4 * b1) + r8 * b2;
    double p = 1.0 + (r + r2 * q);
    if (k > 1023)
        return (p * 2.0) * pow2i(k - 1);
    if (k < -1022)
        return (p * pow2i(k + 600)) * pow2i(-600);
    return p * pow2i(k);
}

/* sqrt(2) rounded down to a double: mantissas above it are halved (k + 1) so that |f| stays
 * below 0.4143 and |s| below 0.1716. */
#define SQRT2 0x1.6a09e667f3bccp+0

double eo__log(double x)
{
    if (x != x || x < 0.0)
        return x != x ? x : NAN;
    if (x == 0.0)
        return -INFINITY;
    if (x == INFINITY)
        return x;
    uint64_t bits;
    int k = 0;
    if (x < 0x1p-1022) { /* subnormal: make it normal, exactly */
        x *= 0x1p54;
        k = -54;
    }
    memcpy(&bits, &x, sizeof bits);
    k += (int)((bits >> 52) & 0x7ff) - 1023;
    bits = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL; /* m in [1, 2) */
    double m;
    memcpy(&m, &bits, sizeof m);
    if (m > SQRT2) {
        m *= 0.5; /* exact */
        k += 1;
    }
    /* f is exact (Sterbenz: m and 1 are within a factor 2). ln(1 + f) = 2 atanh(s) and
     * 2 s = f - s f, s f = f^2/2 - s f^2/2, so ln(1 + f) = f - hfsq + s (hfsq + R): the large
     * term f is exact and everything after it is a small correction (fdlibm's arrangement of
     * the same identity). R(z) = sum_{j=1..11} 2 z^j / (2j + 1), by Estrin's scheme. */
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double z = s * s;
    double z2 = z * z;
    double z4 = z2 * z2;
    double z8 = z4 * z4;
    double c0 = 2.0 / 3.0 + z * (2.0 / 5.0);
    double c1 = 2.0 / 7.0 + z * (2.0 / 9.0);
    double c2 = 2.0 / 11.0 + z * (2.0 / 13.0);
    double c3 = 2.0 / 15.0 + z * (2.0 / 17.0);
    double c4 = 2.0 / 19.0 + z * (2.0 / 21.0);
    double d0 = c0 + z2 * c1;
    double d1 = c2 + z2 * c3;
    double d2 = c4 + z2 * (2.0 / 23.0);
    double r = z * ((d0 + z4 * d1) + z8 * d2);
    double hfsq = 0.5 * f * f;
    double kd = (double)k;
    return kd * LN2_HI + (f - (hfsq - (s * (hfsq + r) + kd * LN2_LO)));
}
