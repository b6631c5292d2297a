/* A queue's recent matches (src/service/mm_window.c, docs/MATCHMAKING.md "Queue figures"): the
 * nearest-rank quantile, the window that keeps the last EO__MM_WINDOW matches with their
 * tickets' waits through eviction and growth, the stage of a batch, and the summary. Expected
 * values written out by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "service/mm.h"

static void quantile_by_rank(void **state)
{
    (void)state;
    const double v[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    assert_true(isnan(eo__quantile(v, 0, 0.5)));
    assert_true(eo__quantile(v, 10, 0.5) == 5);   /* rank ceil(5) = 5 */
    assert_true(eo__quantile(v, 10, 0.95) == 10); /* rank ceil(9.5) = 10 */
    assert_true(eo__quantile(v, 10, 0.91) == 10); /* rank ceil(9.1) = 10 */
    assert_true(eo__quantile(v, 10, 0.9) == 9);
    assert_true(eo__quantile(v, 10, 0.0) == 1);
    assert_true(eo__quantile(v, 10, 1.0) == 10);
    assert_true(eo__quantile(v, 1, 0.5) == 1);
    assert_true(eo__quantile(v, 4, 0.5) == 2); /* the lower middle of an even count */
}

/* Match i: formed at 1000·i ms, i % 3 + 1 tickets waiting i, i + 0.5, i + 0.25 s. */
static eo__mm_wmatch match_no(int i, double *waits)
{
    eo__mm_wmatch m = {1000 * (int64_t)i, 0.5 + 0.001 * (i % 100), 0.9, (int8_t)(i % 2),
                       (uint32_t)(i % 3 + 1)};
    const double add[3] = {0, 0.5, 0.25};
    for (uint32_t k = 0; k < m.nt; k++)
        waits[k] = i + add[k];
    return m;
}

static void window_keeps_the_last(void **state)
{
    (void)state;
    eo__mm_window w = {0};
    eo__mm_summary s;
    eo__mm_window_matches(&w, &s);
    assert_int_equal(s.matches, 0);
    assert_true(isnan(s.quality_mean) && isnan(s.p_dev_mean) && isnan(s.quality_below));
    const int total = EO__MM_WINDOW + 537; /* wraps the rings, and grows the waits' */
    double waits[3];
    for (int i = 0; i < total; i++) {
        eo__mm_wmatch m = match_no(i, waits);
        assert_int_equal(eo__mm_window_add(&w, &m, waits), 0);
    }
    /* the window holds matches 537 .. total-1 and exactly their waits, oldest first */
    eo__mm_window_matches(&w, &s);
    assert_int_equal(s.matches, EO__MM_WINDOW);
    assert_int_equal(s.since_ms, 537 * 1000);
    double *all = malloc(w.nw * sizeof *all);
    assert_non_null(all);
    size_t n = eo__mm_window_waits(&w, all), k = 0;
    size_t want = 0, below = 0;
    double dev = 0.0, max = 0.0;
    for (int i = 537; i < total; i++) {
        double exp[3];
        eo__mm_wmatch m = match_no(i, exp);
        for (uint32_t j = 0; j < m.nt; j++, k++) {
            assert_true(all[k] == exp[j]);
            max = fmax(max, exp[j]);
        }
        want += m.nt;
        below += m.below > 0;
        dev += fabs(m.p_a - 0.5);
    }
    assert_int_equal(n, want);
    assert_true(s.quality_below == (double)below / EO__MM_WINDOW);
    assert_true(fabs(s.p_dev_mean - dev / EO__MM_WINDOW) < 1e-12);
    assert_true(fabs(s.quality_mean - 0.9) < 1e-12);
    eo__mm_summary_waits(all, n, &s);
    assert_int_equal(s.tickets, want);
    assert_true(s.wait_max == max && max == total - 1); /* the last has one ticket */
    assert_true(s.wait_p50 == eo__quantile(all, n, 0.5));
    assert_true(all[0] == 537); /* sorted in place */
    free(all);
    eo__mm_window_free(&w);
}

static void summary_of_few(void **state)
{
    (void)state;
    eo__mm_window w = {0};
    /* two matches of a model without quality_min (below -1): no share */
    const double a[2] = {4.0, 1.0}, b[2] = {3.0, 2.0};
    eo__mm_wmatch ma = {10, 0.6, 0.8, -1, 2}, mb = {20, 0.45, 0.6, -1, 2};
    assert_int_equal(eo__mm_window_add(&w, &ma, a), 0);
    assert_int_equal(eo__mm_window_add(&w, &mb, b), 0);
    eo__mm_summary s;
    eo__mm_window_matches(&w, &s);
    assert_true(isnan(s.quality_below));
    assert_true(fabs(s.quality_mean - 0.7) < 1e-15);
    assert_true(fabs(s.p_dev_mean - 0.075) < 1e-15);
    assert_int_equal(s.since_ms, 10);
    double v[4];
    size_t n = eo__mm_window_waits(&w, v);
    assert_int_equal(n, 4);
    assert_true(v[0] == 4.0 && v[1] == 1.0 && v[2] == 3.0 && v[3] == 2.0);
    eo__mm_summary_waits(v, n, &s);
    assert_true(s.wait_p50 == 2.0 && s.wait_p95 == 4.0 && s.wait_max == 4.0);
    assert_true(s.wait_mean == 2.5);
    eo__mm_summary_waits(v, 0, &s);
    assert_true(isnan(s.wait_p50) && isnan(s.wait_mean) && isnan(s.wait_max));
    eo__mm_window_free(&w);
}

static void stage_in_order(void **state)
{
    (void)state;
    eo__mm_stage g = {0};
    double waits[3];
    for (int i = 0; i < 50; i++) {
        eo__mm_wmatch m = match_no(i, waits);
        assert_int_equal(eo__mm_stage_add(&g, &m, waits), 0);
    }
    assert_int_equal(g.nm, 50);
    size_t k = 0;
    for (int i = 0; i < 50; i++) {
        eo__mm_wmatch m = match_no(i, waits);
        assert_int_equal(g.m[i].formed_ms, m.formed_ms);
        for (uint32_t j = 0; j < m.nt; j++)
            assert_true(g.w[k++] == waits[j]);
    }
    assert_int_equal(g.nw, k);
    eo__mm_stage_free(&g);
    assert_int_equal(g.nm, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(quantile_by_rank),
        cmocka_unit_test(window_keeps_the_last),
        cmocka_unit_test(summary_of_few),
        cmocka_unit_test(stage_in_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
