/* A queue's recent figures as the writer publishes them (src/service/mm_metrics.c,
 * docs/MATCHMAKING.md "Queue figures"): a started match shows only after the commit's publish;
 * one counted by a request that was undone, or in a batch whose commit failed, never shows. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>
#include <jansson.h>

#include "service/mm.h"

/* The fields of eo__mm the figures use: the lock, the figures by queue, no sessions. */
static eo__mm *mm_new(void)
{
    eo__mm *mm = calloc(1, sizeof *mm);
    assert_non_null(mm);
    pthread_rwlock_init(&mm->lock, NULL);
    mm->sessions = eo__smap_new(1);
    mm->instances = eo__smap_new(1);
    assert_non_null(mm->sessions);
    return mm;
}

static void mm_free(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_window_free(&mm->stats[i]->win);
        eo__mm_stage_free(&mm->stats[i]->stage);
        free(mm->stats[i]);
    }
    free(mm->stats);
    eo__smap_free(mm->sessions);
    eo__smap_free(mm->instances);
    pthread_rwlock_destroy(&mm->lock);
    free(mm);
}

/* Match formed at @p formed_ms of two tickets that waited @p a and @p b seconds. */
static void started(eo__mm_qstats *st, int64_t formed_ms, double a, double b)
{
    const double w[2] = {a, b};
    eo__mm_wmatch m = {formed_ms, 0.6, 0.8, -1, 2};
    assert_int_equal(eo__mm_stage_add(&st->stage, &m, w), 0);
}

/* @p st's figures object as published (eo__mm_figures_add()). */
static json_t *figures_of(eo__mm *mm, eo__mm_qstats *st)
{
    json_t *f = json_object();
    assert_int_equal(eo__mm_figures_add(mm, st, 0, f), 0);
    return f;
}

static json_int_t matches(eo__mm *mm, eo__mm_qstats *st)
{
    json_t *f = figures_of(mm, st);
    json_int_t n = json_integer_value(json_object_get(json_object_get(f, "recent"), "matches"));
    json_decref(f);
    return n;
}

static void only_committed_shows(void **state)
{
    (void)state;
    eo__mm *mm = mm_new();
    eo__mm_qstats *st = eo__mm_stats(mm, "q");
    assert_non_null(st);
    /* counted, not yet published: not shown */
    started(st, 1000, 4.0, 2.0);
    assert_int_equal(matches(mm, st), 0);
    eo__mm_stats_publish(mm);
    assert_int_equal(matches(mm, st), 1);
    /* a request counts one, the next counts one and is undone: only the first is published */
    eo__mm_stats_mark(mm);
    started(st, 2000, 1.0, 1.0);
    eo__mm_stats_mark(mm);
    started(st, 3000, 9.0, 9.0);
    eo__mm_stats_undo(mm);
    eo__mm_stats_publish(mm);
    assert_int_equal(matches(mm, st), 2);
    /* a batch whose commit failed: dropped */
    eo__mm_stats_mark(mm);
    started(st, 4000, 30.0, 30.0);
    eo__mm_stats_drop(mm);
    eo__mm_stats_publish(mm);
    json_t *f = figures_of(mm, st);
    const json_t *r = json_object_get(f, "recent");
    assert_int_equal(json_integer_value(json_object_get(r, "matches")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "tickets")), 4);
    assert_int_equal(json_integer_value(json_object_get(r, "since")), 1000);
    const json_t *w = json_object_get(r, "wait_s");
    /* waits 1, 1, 2, 4: p50 the 2nd, p95 the 4th, mean 2 */
    assert_true(json_real_value(json_object_get(w, "p50")) == 1.0);
    assert_true(json_real_value(json_object_get(w, "p95")) == 4.0);
    assert_true(json_real_value(json_object_get(w, "max")) == 4.0);
    assert_true(json_real_value(json_object_get(w, "mean")) == 2.0);
    assert_true(json_is_null(json_object_get(r, "quality_below")));
    assert_true(fabs(json_real_value(json_object_get(r, "p_dev_mean")) - 0.1) < 1e-12);
    json_decref(f);
    /* the /metrics histogram counted the same four waits */
    assert_int_equal(atomic_load(&st->wait_count), 4);
    assert_int_equal(atomic_load(&st->wait_sum_ms), 8000);
    assert_int_equal(atomic_load(&st->wait_bucket[0]), 2); /* <= 1 s */
    assert_int_equal(atomic_load(&st->wait_bucket[1]), 1); /* <= 2 s */
    assert_int_equal(atomic_load(&st->wait_bucket[2]), 1); /* <= 5 s */
    mm_free(mm);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(only_committed_shows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
