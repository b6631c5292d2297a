/* The median round length of a pool (src/core/roundlen.c): against a sort of the same lengths
 * after every round, on random lengths, wide gaps, clamped and unknown lengths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/roundlen.h"

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Adds @p n rounds of length gen(i) (negative: no times), checking the median after each. */
static void check(int64_t (*gen)(size_t), size_t n)
{
    eo__roundlen rl;
    assert_int_equal(eo__roundlen_init(&rl), 0);
    assert_true(eo__roundlen_median(&rl) == 0.0);
    uint32_t *seen = malloc(n * sizeof *seen), *sorted = malloc(n * sizeof *sorted);
    assert_non_null(seen);
    assert_non_null(sorted);
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t len = gen(i);
        eo_round r;
        memset(&r, 0, sizeof r);
        if (len >= 0) {
            r.started_at = 1700000000;
            r.ended_at = r.started_at + len;
        }
        eo__roundlen_add(&rl, &r);
        if (len > 0)
            seen[m++] = len > EO__ROUNDLEN_MAX ? EO__ROUNDLEN_MAX : (uint32_t)len;
        memcpy(sorted, seen, m * sizeof *seen);
        qsort(sorted, m, sizeof *sorted, cmp_u32);
        double want = m > 0 ? (double)sorted[(m - 1) / 2] : 0.0;
        assert_true(eo__roundlen_median(&rl) == want);
    }
    free(seen);
    free(sorted);
    eo__roundlen_free(&rl);
}

static int64_t uniform(size_t i)
{
    (void)i;
    return 1 + (int64_t)(next() % 3600);
}

/* Alternately far below and far above, so the cursor crosses wide empty stretches. */
static int64_t extremes(size_t i)
{
    return i % 2 ? 1 + (int64_t)(next() % 3) : EO__ROUNDLEN_MAX - (int64_t)(next() % 3);
}

/* Unknown lengths (no times; zero and negative lengths), beyond the cap, and repeats. */
static int64_t mixed(size_t i)
{
    switch (next() % 6) {
    case 0: return -1;
    case 1: return 0;
    case 2: return EO__ROUNDLEN_MAX + 1 + (int64_t)(next() % 1000000);
    case 3: return 600;
    default: return 1 + (int64_t)(i % 5000);
    }
}

static void median_matches_sort(void **state)
{
    (void)state;
    check(uniform, 3000);
    check(extremes, 2000);
    check(mixed, 3000);
}

static void times_that_do_not_count(void **state)
{
    (void)state;
    eo__roundlen rl;
    assert_int_equal(eo__roundlen_init(&rl), 0);
    eo_round r;
    memset(&r, 0, sizeof r);
    r.ended_at = 500; /* no start */
    eo__roundlen_add(&rl, &r);
    r.started_at = 900; /* ends before it starts */
    eo__roundlen_add(&rl, &r);
    assert_true(eo__roundlen_median(&rl) == 0.0);
    r.ended_at = 1500;
    eo__roundlen_add(&rl, &r);
    assert_true(eo__roundlen_median(&rl) == 600.0);
    eo__roundlen_free(&rl);
    /* an empty (freed or never allocated) histogram counts nothing */
    eo__roundlen_add(&rl, &r);
    assert_true(eo__roundlen_median(&rl) == 0.0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(median_matches_sort),
        cmocka_unit_test(times_that_do_not_count),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
