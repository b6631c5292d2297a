/* Prediction metrics (eo_metrics.h); expected values by hand from their definitions. */
#include <math.h>
#include <string.h>
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

/* The standard error of a mean: the sample deviation over √n, by the two-pass formula. */
static void mean_se(void **state)
{
    (void)state;
    static const double x[] = {0.3, 1.7, -0.4, 2.2, 0.9, 0.0, 1.1};
    eo_mean_se s = {0, 0, 0};
    assert_true(isnan(eo_mean_se_error(&s)));
    double sum = 0;
    for (size_t i = 0; i < 7; i++) {
        eo_mean_se_add(&s, x[i]);
        sum += x[i];
    }
    double mean = sum / 7, ss = 0;
    for (size_t i = 0; i < 7; i++)
        ss += (x[i] - mean) * (x[i] - mean);
    assert_true(fabs(s.mean - mean) < 1e-15);
    assert_true(fabs(eo_mean_se_error(&s) - sqrt(ss / 6) / sqrt(7)) < 1e-15);
    eo_mean_se one = {0, 0, 0};
    eo_mean_se_add(&one, 4.0);
    assert_true(isnan(eo_mean_se_error(&one)));
}

/* Paired differences B - A of log loss and Brier: their means are the figures' differences,
 * their standard errors those of the per-round differences; a round B predicts exactly as A
 * adds a difference of 0. */
static void paired(void **state)
{
    (void)state;
    static const double pa[] = {0.7, 0.4, 0.55, 0.9, 0.2};
    static const double pb[] = {0.8, 0.3, 0.5, 0.95, 0.2};
    static const int won[] = {1, 0, 1, 1, 0};
    eo_paired c;
    memset(&c, 0, sizeof c);
    double dl[5], db[5], ml = 0, mb = 0;
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(eo_paired_add(&c, pa[i], pb[i], won[i]), 0);
        double ha = won[i] ? pa[i] : 1 - pa[i], hb = won[i] ? pb[i] : 1 - pb[i];
        dl[i] = -log(hb) + log(ha);
        db[i] = (pb[i] - won[i]) * (pb[i] - won[i]) - (pa[i] - won[i]) * (pa[i] - won[i]);
        ml += dl[i] / 5;
        mb += db[i] / 5;
    }
    double sl = 0, sb = 0;
    for (size_t i = 0; i < 5; i++) {
        sl += (dl[i] - ml) * (dl[i] - ml);
        sb += (db[i] - mb) * (db[i] - mb);
    }
    eo_paired_result r;
    eo_paired_get(&c, &r);
    assert_int_equal(r.a.count, 5);
    assert_true(fabs(r.logloss_diff - (r.b.logloss - r.a.logloss)) < 1e-15);
    assert_true(fabs(r.logloss_diff - ml) < 1e-15);
    assert_true(fabs(r.brier_diff - mb) < 1e-15);
    assert_true(fabs(r.logloss_se - sqrt(sl / 4 / 5)) < 1e-15);
    assert_true(fabs(r.brier_se - sqrt(sb / 4 / 5)) < 1e-15);
    assert_int_equal(eo_paired_add(&c, 0.5, 1.5, 1), EO_EINVAL);
    assert_int_equal(c.a.count, 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mean_se),
        cmocka_unit_test(paired),
        cmocka_unit_test(empty_is_nan),
        cmocka_unit_test(three_rounds),
        cmocka_unit_test(clamped),
        cmocka_unit_test(rejects),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
