/* Prediction metrics (eo_metrics.h); expected values by hand from their definitions. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "evenodds/eo_metrics.h"

static void empty_is_nan(void **state)
{
    (void)state;
    eo_metrics m;
    eo_metrics_result r;
    eo_metrics_init(&m);
    eo_metrics_get(&m, &r);
    assert_int_equal(r.count, 0);
    assert_true(isnan(r.logloss) && isnan(r.brier) && isnan(r.accuracy));
}

/* Three rounds:
 *   P_A 0.8, A won:  log loss -ln 0.8 = 0.22314355131420976, Brier 0.04, right
 *   P_A 0.5, B won:  log loss ln 2 = 0.69314718055994531, Brier 0.25, half
 *   P_A 0.3, A won:  log loss -ln 0.3 = 1.2039728043259361, Brier 0.49, wrong
 * means: log loss 2.120263536200091/3 = 0.706754512066697, Brier 0.78/3 = 0.26,
 * accuracy 1.5/3 = 0.5. */
static void three_rounds(void **state)
{
    (void)state;
    eo_metrics m;
    eo_metrics_result r;
    eo_metrics_init(&m);
    assert_int_equal(eo_metrics_add(&m, 0.8, 1), 0);
    assert_int_equal(eo_metrics_add(&m, 0.5, 0), 0);
    assert_int_equal(eo_metrics_add(&m, 0.3, 1), 0);
    eo_metrics_get(&m, &r);
    assert_int_equal(r.count, 3);
    assert_true(fabs(r.logloss - 0.706754512066697) < 1e-14);
    assert_true(fabs(r.brier - 0.26) < 1e-15);
    assert_true(r.accuracy == 0.5);
}

/* A certain prediction that fails is clamped: -ln(1e-15) = 34.538776394910684. */
static void clamped(void **state)
{
    (void)state;
    eo_metrics m;
    eo_metrics_result r;
    eo_metrics_init(&m);
    assert_int_equal(eo_metrics_add(&m, 0.0, 1), 0);
    eo_metrics_get(&m, &r);
    assert_true(fabs(r.logloss - 34.538776394910684) < 1e-9);
    assert_true(r.brier == 1.0);
    assert_true(r.accuracy == 0.0);
    /* A certain prediction that holds costs -ln(1 - 1e-15) ~ 1e-15, not 0 (clamped too). */
    eo_metrics_init(&m);
    assert_int_equal(eo_metrics_add(&m, 1.0, 1), 0);
    eo_metrics_get(&m, &r);
    assert_true(r.logloss > 0.0 && r.logloss < 2e-15);
    assert_true(r.accuracy == 1.0);
}

static void rejects(void **state)
{
    (void)state;
    eo_metrics m;
    eo_metrics_init(&m);
    assert_int_equal(eo_metrics_add(&m, 1.5, 1), EO_EINVAL);
    assert_int_equal(eo_metrics_add(&m, -0.1, 0), EO_EINVAL);
    assert_int_equal(eo_metrics_add(&m, NAN, 0), EO_EINVAL);
    assert_int_equal(eo_metrics_add(&m, 0.5, 2), EO_EINVAL);
    assert_int_equal(m.count, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_is_nan),
        cmocka_unit_test(three_rounds),
        cmocka_unit_test(clamped),
        cmocka_unit_test(rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
