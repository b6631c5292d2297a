/* Gaussian helpers (gauss.h): every value from + - * /, sqrt, fabs and eo__exp, so the same
 * bits with any C library.
 *
 * erfcx(x) = exp(x²)·erfc(x) is the core; everything else is built on it:
 *  - x in [0, 2): four Chebyshev series (one per interval of width 1/2, in x), summed by
 *    Clenshaw's recurrence;
 *  - x in [2, 16): erfcx(x) = (1 - h)/(√π·x) with h = k(x)/(2x²) and
 *    k(x) = 2x²·(1 - √π·x·erfcx(x)), which tends to 1: two Chebyshev series in y = 1/x
 *    ([2, 4) and [4, 16));
 *  - x >= 16: k is the asymptotic series Σ (-1)^j (2j+1)!! u^j, u = 1/(2x²), to j = 11 (the
 *    first omitted term is below 3e-20).
 * Keeping h (not erfcx) for large x is what makes the tails exact: the Mills ratio of z = x√2
 * is M = (1 - h)/z, and 1 - z·M = h, so TrueSkill's w = v·(v - z) = k/(1 - h)² needs no
 * subtraction of nearly equal numbers however far out z is.
 *
 * The coefficients are Chebyshev interpolants of the exact functions, computed with mpmath
 * (mp.dps = 50, 60 Chebyshev nodes per interval) and cut where the sum of the dropped
 * coefficients is below 2^-60 of the smallest value on the interval; 17 significant digits
 * each. The Gauss-Legendre nodes are mpmath's gauss_quadrature(10, "legendre") mapped to
 * [0, 1]. Generator (Python, mpmath 1.3):
 *
 *   def cheb(f, a, b, N=60):
 *       m, h = (a + b) / 2, (b - a) / 2
 *       xs = [m + h * cos(pi * (j + 0.5) / N) for j in range(N)]
 *       c = [2 * fsum(f(x) * cos(pi * k * (j + 0.5) / N) for j, x in enumerate(xs)) / N
 *            for k in range(N)]
 *       c[0] /= 2
 *       return c        # f(m + h t) = Σ c_k T_k(t); then truncate as above
 *   erfcx = lambda x: exp(x * x) * erfc(x)
 *   k = lambda x: 2 * x * x * (1 - sqrt(pi) * x * erfcx(x))
 *   cheb(erfcx, i / 2, (i + 1) / 2) for i in 0..3;  cheb(lambda y: k(1 / y), 1/4, 1/2),
 *   cheb(lambda y: k(1 / y), 1/16, 1/4)
 *
 * Accuracy is measured against mpmath (60-100 digits) in tests/unit/test_trueskill.c (erfcx,
 * Φ, Φ⁻¹, v and w within 2e-15 relative at its points); see there and docs/MODELS.md
 * ("TrueSkill", "Numerics"). */
#include "core/models/gauss.h"

#include <math.h>

#include "core/numeric.h"

#define SQRT_PI 1.7724538509055160273
#define INV_SQRT2 0.70710678118654752440
#define INV_SQRT_2PI 0.39894228040143267794
#define SQRT_HALF_PI 1.2533141373155002512   /* √(π/2) */
#define TWO_OVER_SQRT_PI 1.1283791670955125739

/* erfcx on [i/2, (i+1)/2], i = 0..3, in t = 4x - (2i + 1). */
static const double ERFCX_0[16] = {
    0.78897420432983188,
    -0.19054959076559183,
    0.018748766414046566,
    -0.0015967385395194618,
    0.00012165370853879293,
    -8.4655607079541557e-6,
    5.4576345805536026e-7,
    -3.2936085321716833e-8,
    1.8753468988852800e-9,
    -1.0137357663517626e-10,
    5.2284505652553844e-12,
    -2.5835414602093492e-13,
    1.2273025246362480e-14,
    -5.6215578912286297e-16,
    2.4890188568030208e-17,
    -1.0676302350281890e-18,
};
static const double ERFCX_1[15] = {
    0.51425403004481406,
    -0.093534361576316469,
    0.0073495435679659607,
    -0.00051702876831709545,
    3.3274891810398319e-5,
    -1.9877609419315704e-6,
    1.1137198399251981e-7,
    -5.8986496093891293e-9,
    2.9712990142852805e-10,
    -1.4304881857762571e-11,
    6.6086162842655768e-13,
    -2.9395552899978546e-14,
    1.2625028540389157e-15,
    -5.2483535009959204e-17,
    2.1162858025358237e-18,
};
static const double ERFCX_2[14] = {
    0.37119279434207158,
    -0.052799551940465686,
    0.0033807623615918897,
    -0.00019896338415156292,
    1.0911979120987142e-5,
    -5.6323720661959361e-7,
    2.7564656102315983e-8,
    -1.2864435796900214e-9,
    5.7518943436920402e-11,
    -2.4731802381949120e-12,
    1.0258794609509988e-13,
    -4.1161816337273053e-15,
    1.6012087659273513e-16,
    -6.0509378290474905e-18,
};
static const double ERFCX_3[14] = {
    0.28672723893640484,
    -0.033006801084811476,
    0.0017591477886840760,
    -8.7881957186246638e-5,
    4.1516102756111997e-6,
    -1.8669721329085599e-7,
    8.0337844615388626e-9,
    -3.3218361442789990e-10,
    1.3243525744778221e-11,
    -5.1055788923347435e-13,
    1.9079334307984005e-14,
    -6.9258207597226783e-16,
    2.4466018310021199e-17,
    -8.4243580029741978e-19,
};

/* k(x) = 2x²(1 - √π·x·erfcx(x)) on [2, 4) in t = 8/x - 3, and on [4, 16) in t = (32/x - 5)/3. */
static const double KX_0[18] = {
    0.83900477505831434,
    -0.081069002134089958,
    -0.0012008229958432790,
    0.00046588931673673574,
    -3.4352493945667292e-5,
    5.7401614357889213e-7,
    1.5987918084758498e-7,
    -2.1717317118695003e-8,
    1.3851584023997934e-9,
    -3.8561683995309943e-12,
    -1.0612263717146542e-11,
    1.4401931423661222e-12,
    -1.0548382654031677e-13,
    2.0055878087598625e-15,
    6.7950149321599972e-16,
    -1.1947440868357767e-16,
    1.1488884791816996e-17,
    -5.8936064690759702e-19,
};
static const double KX_1[18] = {
    0.96085604584796303,
    -0.038225626323326028,
    -0.0045785441857963266,
    0.00031531313960691761,
    7.1205146699346663e-6,
    -2.0735650475818755e-6,
    7.8024845201759486e-8,
    9.0946279206773798e-9,
    -1.2335002018656707e-9,
    2.0952620387189974e-11,
    9.0747137359150257e-12,
    -9.9314354791687360e-13,
    2.2613316023179355e-15,
    1.0174309428135897e-14,
    -1.0667848771819206e-15,
    -3.0778476153023991e-18,
    1.3149259411095116e-17,
    -1.4783292238418478e-18,
};

/* Σ c_k T_k(t) by Clenshaw's recurrence. */
static double cheb(const double *c, int n, double t)
{
    double b1 = 0.0, b2 = 0.0, t2 = 2.0 * t;
    for (int k = n - 1; k >= 1; k--) {
        double b0 = t2 * b1 - b2 + c[k];
        b2 = b1;
        b1 = b0;
    }
    return t * b1 - b2 + c[0];
}

#define NC(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* x·x = *hi + *lo exactly (Dekker's product with Veltkamp's split; exact without FMA, which
 * the build forbids, for |x| < 2^500). */
static void square2(double x, double *hi, double *lo)
{
    double c = 134217729.0 * x; /* 2^27 + 1 */
    double xh = c - (c - x);
    double xl = x - xh;
    *hi = x * x;
    *lo = ((xh * xh - *hi) + 2.0 * xh * xl) + xl * xl;
}

/* exp(-x²) and exp(-x²/2) without the rounding of x² (which would cost up to 1e-13 relative
 * in the tails): exp(-hi)·exp(-lo) with exp(-lo) = 1 - lo to within 1e-26. */
static double exp_neg_sq(double x)
{
    double hi, lo;
    x = fabs(x);
    if (!(x < 27.3)) /* exp(-745.3) is below the smallest subnormal */
        return x != x ? x : 0.0;
    square2(x, &hi, &lo);
    return eo__exp(-hi) * (1.0 - lo);
}

static double exp_neg_half_sq(double x)
{
    double hi, lo;
    x = fabs(x);
    if (!(x < 38.61))
        return x != x ? x : 0.0;
    square2(x, &hi, &lo);
    return eo__exp(-0.5 * hi) * (1.0 - 0.5 * lo);
}

/* exp(y) - 1 without cancellation for small |y|: Taylor to y^18/18! below 1/2 (remainder
 * under 1e-21 relative). */
static double em1(double y)
{
    if (!(fabs(y) < 0.5))
        return eo__exp(y) - 1.0;
    static const double c[] = {
        1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040, 1.0 / 40320,
        1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800,
        1.0 / 87178291200, 1.0 / 1307674368000, 1.0 / 20922789888000,
        1.0 / 355687428096000, 1.0 / 6402373705728000,
    };
    double s = 0.0;
    for (int k = NC(c) - 1; k >= 0; k--)
        s = s * y + c[k];
    return y + y * y * s;
}

/* k(x) for x >= 2 (see the top of the file); 1 for x = +inf. */
static double k_of(double x)
{
    if (x < 4.0)
        return cheb(KX_0, NC(KX_0), 8.0 / x - 3.0);
    if (x < 16.0)
        return cheb(KX_1, NC(KX_1), (32.0 / x - 5.0) / 3.0);
    /* Σ (-1)^j (2j+1)!! u^j; u = 0 once x² overflows. */
    static const double c[] = {
        1.0, -3.0, 15.0, -105.0, 945.0, -10395.0, 135135.0, -2027025.0, 34459425.0,
        -654729075.0, 13749310575.0, -316234143225.0,
    };
    double u = 0.5 / (x * x), s = 0.0;
    for (int j = NC(c) - 1; j >= 0; j--)
        s = s * u + c[j];
    return s;
}

/* erfcx(x) for x >= 0 (x = +inf gives 0). */
static double erfcx_pos(double x)
{
    if (x < 2.0) {
        int i = (int)(x * 2.0);
        double t = 4.0 * x - (double)(2 * i + 1);
        switch (i) {
        case 0:
            return cheb(ERFCX_0, NC(ERFCX_0), t);
        case 1:
            return cheb(ERFCX_1, NC(ERFCX_1), t);
        case 2:
            return cheb(ERFCX_2, NC(ERFCX_2), t);
        default:
            return cheb(ERFCX_3, NC(ERFCX_3), t);
        }
    }
    double h = k_of(x) / (2.0 * x * x);
    return (1.0 - h) / (SQRT_PI * x);
}

double eo__erfcx(double x)
{
    if (x != x)
        return x;
    if (x >= 0.0)
        return erfcx_pos(x);
    if (x < -26.62) /* 2·exp(x²) > DBL_MAX */
        return INFINITY;
    double hi, lo;
    square2(x, &hi, &lo);
    return 2.0 * (eo__exp(hi) * (1.0 + lo)) - erfcx_pos(-x);
}

double eo__erfc(double x)
{
    if (x != x)
        return x;
    if (x >= 0.0)
        return erfcx_pos(x) * exp_neg_sq(x);
    return 2.0 - erfcx_pos(-x) * exp_neg_sq(x);
}

double eo__erf(double x)
{
    double a = fabs(x);
    if (a < 0.5) {
        /* Maclaurin series (2/√π) Σ (-1)^n x^(2n+1) / (n!(2n+1)), to n = 14 (next term below
         * 1e-20 relative for |x| < 1/2). */
        static const double c[] = {
            1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360,
            -1.0 / 75600, 1.0 / 685440, -1.0 / 6894720, 1.0 / 76204800, -1.0 / 918086400,
            1.0 / 11975040000.0, -1.0 / 168129561600.0, 1.0 / 2528170444800.0,
        };
        double x2 = x * x, s = 0.0;
        for (int n = NC(c) - 1; n >= 0; n--)
            s = s * x2 + c[n];
        return TWO_OVER_SQRT_PI * x * s;
    }
    if (x != x)
        return x;
    double r = 1.0 - erfcx_pos(a) * exp_neg_sq(a);
    return x < 0.0 ? -r : r;
}

double eo__gauss_pdf(double x)
{
    return INV_SQRT_2PI * exp_neg_half_sq(x);
}

/* Q(a) = P(Z > a) for a >= 0. */
static double upper_tail(double a)
{
    return 0.5 * erfcx_pos(a * INV_SQRT2) * exp_neg_half_sq(a);
}

double eo__gauss_cdf(double x)
{
    if (x != x)
        return x;
    double q = upper_tail(fabs(x));
    return x < 0.0 ? q : 1.0 - q;
}

/* The residual of Φ(x) = p that keeps its relative accuracy: near the centre through erf
 * (p - 1/2 is exact there), in the lower tail through Φ itself. */
static double ppf_residual(double x, double p)
{
    if (p >= 0.25)
        return 0.5 * eo__erf(x * INV_SQRT2) - (p - 0.5);
    return eo__gauss_cdf(x) - p;
}

/* Φ⁻¹(p) for p in (0, 1/2]. */
static double ppf_lower(double p)
{
    if (p == 0.5)
        return 0.0;
    double lo = -40.0, hi = 0.0; /* Φ(-40) = 0 < p < Φ(0) */
    for (int i = 0; i < 2000; i++) {
        double mid = 0.5 * (lo + hi);
        if (mid <= lo || mid >= hi)
            break;
        if (ppf_residual(mid, p) < 0.0)
            lo = mid;
        else
            hi = mid;
    }
    /* Newton steps from the bracket's end, kept inside it. */
    double x = hi;
    for (int i = 0; i < 2; i++) {
        double d = eo__gauss_pdf(x);
        if (!(d > 0.0))
            break;
        double nx = x - ppf_residual(x, p) / d;
        if (!(nx >= lo && nx <= hi))
            break;
        x = nx;
    }
    return x;
}

double eo__gauss_ppf(double p)
{
    if (!(p >= 0.0 && p <= 1.0))
        return NAN;
    if (p == 0.0)
        return -INFINITY;
    if (p == 1.0)
        return INFINITY;
    if (p > 0.5)
        return -ppf_lower(1.0 - p); /* exact for p >= 1/2 (Sterbenz) */
    return ppf_lower(p);
}

/* The upper tail at z >= 0 of a standard normal: the Mills ratio M = Q(z)/φ(z), the mean
 * excess mu1 = E[Z - z | Z > z] = 1/M - z, and w1 = (1/M)·mu1 = 1 - Var(Z | Z > z) (TrueSkill's
 * w_win at -z). Each to a few ulp for every z, +inf included. */
typedef struct tail {
    double m, inv_m, mu1, w1;
} tail;

static tail tail_at(double z)
{
    tail r;
    double x = z * INV_SQRT2;
    if (x >= 2.0) {
        double k = k_of(x);
        double h = k / (z * z); /* 1 - z·M */
        double one_h = 1.0 - h;
        r.m = one_h / z;
        r.inv_m = z / one_h;
        r.mu1 = (k / z) / one_h;
        r.w1 = k / (one_h * one_h);
    } else {
        r.m = SQRT_HALF_PI * erfcx_pos(x);
        r.inv_m = 1.0 / r.m;
        r.mu1 = r.inv_m - z;
        r.w1 = r.inv_m * r.mu1;
    }
    return r;
}

static double clamp01(double v)
{
    return v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
}

/* v and w of a win at x = t - eps: the mean and 1 - variance of Z conditioned on Z > -x. */
static void vw_win_x(double x, double *v, double *w)
{
    if (x != x) {
        *v = *w = x;
        return;
    }
    if (x < 0.0) {
        tail tl = tail_at(-x);
        *v = tl.inv_m;
        *w = clamp01(tl.w1);
        return;
    }
    if (x > 40.0) { /* φ(x) underflows: both are below the smallest subnormal */
        *v = *w = 0.0;
        return;
    }
    double phi = eo__gauss_pdf(x);
    double vv = phi / (1.0 - phi * tail_at(x).m);
    *v = vv;
    *w = clamp01(vv * (vv + x));
}

void eo__gauss_vw_win(double t, double eps, double *v, double *w)
{
    vw_win_x(t - (eps > 0.0 ? eps : 0.0), v, w);
}

/* Gauss-Legendre, 10 points on [0, 1]: node, weight. */
static const double GL10[10][2] = {
    {0.013046735741414140, 0.033335672154344069},
    {0.067468316655507745, 0.074725674575290297},
    {0.16029521585048780, 0.10954318125799102},
    {0.28330230293537640, 0.13463335965499818},
    {0.42556283050918439, 0.14776211235737644},
    {0.57443716949081561, 0.14776211235737644},
    {0.71669769706462360, 0.13463335965499818},
    {0.83970478414951220, 0.10954318125799102},
    {0.93253168334449226, 0.074725674575290297},
    {0.98695326425858586, 0.033335672154344069},
};

/* The draw for t >= 0, eps >= 0: the region |d| <= eps is Z in [a, b] for a standard normal
 * Z, a = -eps - t, b = eps - t; v = E[Z] and w = 1 - Var(Z) there. Three forms, each free of
 * cancellation where it is used:
 *  - b > 0 (the region holds 0): D = Φ(b) - Φ(a) as a sum of two erf, the densities through
 *    φ(a) = φ(b)·r with r = exp(-2·eps·t);
 *  - b <= 0 and a small log-density range y = 2·eps·t <= 1 (short or flat region): moments of
 *    X = -Z = B + U, U in [0, L], L = 2 eps, B = t - eps, density ∝ exp(-B·U - U²/2), by
 *    10-point Gauss-Legendre (exact to ~1e-19 when the exponent varies by at most 1);
 *  - b <= 0, y > 1: the two-sided truncation as the tail above B minus the tail above
 *    A = eps + t (weight rho = r·M(A)/M(B) <= 1/e), with the tails' moments from tail_at(). */
static void vw_draw_pos(double t, double e, double *v, double *w)
{
    double b = e - t, y = 2.0 * e * t, L = 2.0 * e, B = t - e;
    if (b > 0.0) {
        double aa = e + t; /* -a */
        double d = 0.5 * (eo__erf(b * INV_SQRT2) + eo__erf(aa * INV_SQRT2));
        if (d > 1e-290) {
            double phib = eo__gauss_pdf(b);
            double r = eo__exp(-y);
            double vv = phib * em1(-y) / d; /* (φ(a) - φ(b)) / D */
            *v = vv;
            *w = clamp01(vv * vv + phib * (b + (r > 0.0 ? aa * r : 0.0)) / d);
            return;
        }
        /* a vanishing region (eps and t both near 0): the GL form below is exact there */
    }
    if (fabs(B) * L + 0.5 * L * L <= 1.0) {
        double z0 = 0.0, z1 = 0.0, z2 = 0.0;
        for (int i = 0; i < 10; i++) {
            double s = GL10[i][0], u = L * s;
            double f = GL10[i][1] * eo__exp(-(B + 0.5 * u) * u);
            z0 += f;
            z1 += f * s;
            z2 += f * s * s;
        }
        double m = z1 / z0, var = L * L * (z2 / z0 - m * m);
        *v = -(B + L * m);
        *w = 1.0 - clamp01(var);
        return;
    }
    tail tb = tail_at(B);
    double r = eo__exp(-y), rho = 0.0, la = 0.0, sa = 0.0;
    if (r > 0.0) {
        tail ta = tail_at(e + t);
        rho = r * (ta.m / tb.m);
        la = L + ta.mu1;
        sa = (1.0 - ta.w1) + la * la;
    }
    double den = 1.0 - rho;
    double m1 = (tb.mu1 - rho * la) / den;
    double s2 = ((1.0 - tb.w1) + tb.mu1 * tb.mu1 - rho * sa) / den;
    *v = -(B + m1);
    *w = 1.0 - clamp01(s2 - m1 * m1);
}

void eo__gauss_vw_draw(double t, double eps, double *v, double *w)
{
    if (t != t || eps != eps) {
        *v = *w = t + eps;
        return;
    }
    double e = eps > 0.0 ? eps : 0.0;
    double vv;
    vw_draw_pos(fabs(t), e, &vv, w);
    /* t = 0: the region is symmetric and its mean exactly 0 (the quadrature's rounding would
     * leave ~1e-16·eps, breaking oddness and a draw of equal teams keeping μ exactly). */
    *v = t == 0.0 ? 0.0 : t < 0.0 ? -vv : vv;
}

/* v (@p which 0) or w (1) of the pair @p vw gives at (t, eps): the single-value forms. */
static double one_of(void (*vw)(double, double, double *, double *), double t, double eps,
                     int which)
{
    double r[2];
    vw(t, eps, &r[0], &r[1]);
    return r[which];
}

double eo__gauss_v_win(double t, double eps)
{
    return one_of(eo__gauss_vw_win, t, eps, 0);
}

double eo__gauss_w_win(double t, double eps)
{
    return one_of(eo__gauss_vw_win, t, eps, 1);
}

double eo__gauss_v_draw(double t, double eps)
{
    return one_of(eo__gauss_vw_draw, t, eps, 0);
}

double eo__gauss_w_draw(double t, double eps)
{
    return one_of(eo__gauss_vw_draw, t, eps, 1);
}

double eo__gauss_team_p(double beta2, double mu_a, double var_a, double w2_a, double mu_b,
                        double var_b, double w2_b, double field)
{
    double var = (var_a + var_b) + beta2 * (w2_a + w2_b);
    if (!(var > 0.0))
        return 0.5;
    return eo__gauss_cdf(((mu_a - mu_b) + field) / sqrt(var));
}

double eo__gauss_team_quality(double beta2, double mu_a, double var_a, double w2_a, double mu_b,
                              double var_b, double w2_b, double field)
{
    double bw = beta2 * (w2_a + w2_b);
    double den = bw + (var_a + var_b);
    if (!(den > 0.0))
        return 1.0;
    double d = (mu_a - mu_b) + field;
    return sqrt(bw / den) * eo__exp(-(d * d) / (2.0 * den));
}
