/* Tests of the core's deterministic numeric helpers (src/core/numeric.h). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/numeric.h"

/* Distance in ulps between two finite doubles of the same sign. */
static int64_t ulps(double a, double b)
{
    int64_t ia, ib;
    memcpy(&ia, &a, sizeof ia);
    memcpy(&ib, &b, sizeof ib);
    return ia > ib ? ia - ib : ib - ia;
}

/* eo__exp against glibc's exp (which is accurate to < 1 ulp) at 2,000,000 points spread over
 * [-700, 700] and, densely, over [-2, 2] where P and G live; docs/MODELS.md quotes the bound. */
static void exp_matches_libm(void **state)
{
    (void)state;
    uint64_t s = 0x1234567u;
    int64_t worst = 0;
    for (int i = 0; i < 2000000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        double u = (double)(s >> 11) * 0x1p-53;
        double x = (i % 2) ? u * 1400.0 - 700.0 : u * 4.0 - 2.0;
        int64_t d = ulps(eo__exp(x), exp(x));
        if (d > worst)
            worst = d;
    }
    assert_true(worst <= 2);
}

static void exp_special_values(void **state)
{
    (void)state;
    assert_true(eo__exp(0.0) == 1.0);
    /* e and 1/e to 17 digits (well-known constants). */
    assert_true(ulps(eo__exp(1.0), 2.7182818284590452) <= 1);
    assert_true(ulps(eo__exp(-1.0), 0.36787944117144233) <= 1);
    /* ln 2 -> 2: the reduction gives k = 1, r ~ 0. */
    assert_true(ulps(eo__exp(0.6931471805599453), 2.0) <= 1);
    assert_true(isinf(eo__exp(710.0)) && eo__exp(710.0) > 0);
    assert_true(eo__exp(-746.0) == 0.0);
    assert_true(isnan(eo__exp(NAN)));
    /* Near the top: e^709.7 is finite (k = 1024 path). */
    assert_true(isfinite(eo__exp(709.7)));
    assert_true(ulps(eo__exp(709.7), exp(709.7)) <= 2);
    /* Subnormal results stay close to libm (k < -1022 path). */
    double sub = eo__exp(-740.0);
    assert_true(sub > 0.0 && fabs(sub - exp(-740.0)) <= 1e-323);
}

/* eo__log against glibc's log (accurate to < 1 ulp) at 3,000,000 points: log-uniform over
 * [1e-308, 1e308], dense on [0.5, 2] (around 1, where the result is small and the relative
 * error hardest to keep) and on [1e-5, 10] (volatilities and Glicko-2's step 5). */
static void log_matches_libm(void **state)
{
    (void)state;
    uint64_t s = 0x9e3779b97f4a7c15u;
    int64_t worst = 0;
    for (int i = 0; i < 3000000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        double u = (double)(s >> 11) * 0x1p-53;
        double x;
        switch (i % 3) {
        case 0: x = exp((u * 2.0 - 1.0) * 709.0); break;
        case 1: x = 0.5 + 1.5 * u; break;
        default: x = 1e-5 * exp(u * 13.82); break;
        }
        double got = eo__log(x), want = log(x);
        if (want == 0.0) {
            assert_true(got == 0.0);
            continue;
        }
        int64_t d = ulps(got, want);
        if (d > worst)
            worst = d;
    }
    assert_true(worst <= 2);
}

static void log_special_values(void **state)
{
    (void)state;
    assert_true(eo__log(1.0) == 0.0 && !signbit(eo__log(1.0)));
    assert_true(isinf(eo__log(0.0)) && eo__log(0.0) < 0);
    assert_true(isinf(eo__log(-0.0)) && eo__log(-0.0) < 0);
    assert_true(isnan(eo__log(-1.0)));
    assert_true(isnan(eo__log(-INFINITY)));
    assert_true(isnan(eo__log(NAN)));
    assert_true(isinf(eo__log(INFINITY)) && eo__log(INFINITY) > 0);
    /* ln 2 and ln 10 to 17 digits (well-known constants); e -> 1. */
    assert_true(ulps(eo__log(2.0), 0.69314718055994531) <= 1);
    assert_true(ulps(eo__log(10.0), 2.3025850929940457) <= 1);
    assert_true(ulps(eo__log(2.7182818284590452), 1.0) <= 1);
    /* Powers of two are k ln 2 (m = 1, f = 0): exact to the rounding of k ln 2. */
    assert_true(ulps(eo__log(0x1p-1000), -1000.0 * 0.69314718055994531) <= 2);
    assert_true(ulps(eo__log(0x1p1000), log(0x1p1000)) <= 1);
    /* Next to 1 the result is about x - 1 (relative accuracy near the zero of log). */
    assert_true(ulps(eo__log(1.0 + 0x1p-52), 0x1p-52) <= 1);
    assert_true(ulps(eo__log(1.0 - 0x1p-53), -0x1p-53) <= 1);
    /* Extremes: largest double, smallest normal, subnormals down to the smallest. */
    assert_true(ulps(eo__log(1.7976931348623157e308), log(1.7976931348623157e308)) <= 1);
    assert_true(ulps(eo__log(0x1p-1022), log(0x1p-1022)) <= 1);
    assert_true(ulps(eo__log(3e-320), log(3e-320)) <= 1);
    assert_true(ulps(eo__log(4.9406564584124654e-324), log(4.9406564584124654e-324)) <= 1);
    /* exp and log invert each other to a few ulps on the range Glicko-2 uses. */
    for (double x = -30.0; x <= 30.0; x += 0.37)
        assert_true(fabs(eo__log(eo__exp(x)) - x) <= 4.0 * 0x1p-52 * (fabs(x) > 1 ? fabs(x) : 1));
}

/* Banker's rounding, each expected value by hand. */
static void round_half_even_cases(void **state)
{
    (void)state;
    assert_int_equal(eo__round_half_even(0.5), 0);
    assert_int_equal(eo__round_half_even(1.5), 2);
    assert_int_equal(eo__round_half_even(2.5), 2);
    assert_int_equal(eo__round_half_even(3.5), 4);
    assert_int_equal(eo__round_half_even(1002.5), 1002);
    assert_int_equal(eo__round_half_even(1001.5), 1002);
    assert_int_equal(eo__round_half_even(-0.5), 0);
    assert_int_equal(eo__round_half_even(-1.5), -2);
    assert_int_equal(eo__round_half_even(-2.5), -2);
    assert_int_equal(eo__round_half_even(2.4999999999), 2);
    assert_int_equal(eo__round_half_even(2.5000000001), 3);
    assert_int_equal(eo__round_half_even(-2.5000000001), -3);
    assert_int_equal(eo__round_half_even(7.0), 7);
    assert_int_equal(eo__round_half_even(-7.0), -7);
    assert_int_equal(eo__round_half_even(0x1p52 + 1.0), 4503599627370497LL);
    /* Q31 of P = 0.5 and P = 1. */
    assert_int_equal(eo__round_half_even(0.5 * 2147483648.0), 1073741824LL);
    assert_int_equal(eo__round_half_even(1.0 * 2147483648.0), 2147483648LL);
}

static void clamp01_cases(void **state)
{
    (void)state;
    assert_true(eo__clamp01(-0.1) == 0.0);
    assert_true(eo__clamp01(0.25) == 0.25);
    assert_true(eo__clamp01(1.5) == 1.0);
    assert_true(eo__clamp01(NAN) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(exp_matches_libm),
        cmocka_unit_test(exp_special_values),
        cmocka_unit_test(log_matches_libm),
        cmocka_unit_test(log_special_values),
        cmocka_unit_test(round_half_even_cases),
        cmocka_unit_test(clamp01_cases),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
