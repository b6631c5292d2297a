/* The matchmaking simulation (eo_mmsim.h; docs/MATCHMAKING.md, "The matcher in a simulated
 * day"): its configuration checks, its determinism, and what it must show on a small world:
 * parties never split, every policy facing the same arrivals, and the matcher's teams fairer
 * than first come first served's. Small worlds (a few hours, 80 online) keep it to a second. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_mmsim.h"

static void small(eo_mmsim_config *c)
{
    eo_mmsim_config_default(c);
    c->online = 80;
    c->population = 600;
    c->history = 60;
    c->team_size = 4;
    c->party_max = 3;
    c->instances = 6;
    c->warmup = 3600;
    c->duration = 4 * 3600;
    (void)eo_match_config_default(4, &c->match);
    for (int i = 0; i < c->match.nsteps; i++)
        c->match.steps[i].latency_ms = c->match.steps[i].after >= 30 ? 250 : 80;
}

static void run(const eo_mmsim_config *c, eo_mmsim_policy p, eo_mmsim_report *r)
{
    eo_pool_config pool;
    eo_pool_config_default(&pool);
    eo_round_error err;
    int rc = eo_mmsim_run(c, &pool, p, NULL, NULL, r, &err);
    if (rc != 0)
        fail_msg("eo_mmsim_run: %d %s: %s", rc, err.field, err.message);
}

static void test_config_checks(void **state)
{
    (void)state;
    eo_mmsim_config c, d;
    eo_round_error err;
    eo_mmsim_config_default(&c);
    assert_int_equal(eo_mmsim_config_check(&c, &err), 0);
    d = c, d.online = 0;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "online");
    d = c, d.population = 100; /* fewer than 4 x online */
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "population");
    d = c, d.continue_p = 1.0;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "continue_p");
    d = c, d.party_max = 4;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "party_max");
    d = c, d.match.steps[1].window = -1;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "match.steps[1].window");
    d = c, d.fixed_after[1] = 0;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "fixed_after[1]");
    d = c, d.match_max = d.match_min - 1;
    assert_int_equal(eo_mmsim_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "match_min");
    eo_pool_config pool;
    eo_pool_config_default(&pool);
    eo_mmsim_report r;
    assert_int_equal(eo_mmsim_run(&d, &pool, EO_MMSIM_OURS, NULL, NULL, &r, &err), EO_EINVAL);
    assert_int_equal(eo_mmsim_run(&c, &pool, EO_MMSIM_POLICIES, NULL, NULL, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "policy");
    assert_string_equal(eo_mmsim_policy_name(EO_MMSIM_FIXED), "fixed");
    assert_null(eo_mmsim_policy_name(EO_MMSIM_POLICIES));
}

/* The same configuration gives the same report, bit for bit; another seed another one. */
static void test_deterministic(void **state)
{
    (void)state;
    eo_mmsim_config c;
    small(&c);
    c.duration = 3600;
    eo_mmsim_report a, b, x;
    run(&c, EO_MMSIM_OURS, &a);
    run(&c, EO_MMSIM_OURS, &b);
    assert_memory_equal(&a.wait_p95, &b.wait_p95, sizeof a.wait_p95);
    assert_memory_equal(&a.mean_dev, &b.mean_dev, sizeof a.mean_dev);
    assert_memory_equal(&a.brier, &b.brier, sizeof a.brier);
    assert_int_equal(a.matches, b.matches);
    assert_int_equal(a.abandoned, b.abandoned);
    assert_int_equal(a.tickets, b.tickets);
    c.seed = 2;
    run(&c, EO_MMSIM_OURS, &x);
    assert_true(x.matches != a.matches || x.mean_dev != a.mean_dev);
}

/* On one world: every policy plays, no party is split, the figures are in range, and the
 * matcher's teams are fairer (fewer stomps, a smaller mean |P_true - 0.5|) than FCFS's. */
static void test_policies(void **state)
{
    (void)state;
    eo_mmsim_config c;
    small(&c);
    eo_mmsim_report r[EO_MMSIM_POLICIES];
    for (int p = 0; p < EO_MMSIM_POLICIES; p++) {
        run(&c, (eo_mmsim_policy)p, &r[p]);
        assert_int_equal(r[p].policy, p);
        assert_true(r[p].matches > 50);
        assert_int_equal(r[p].parties_split, 0);
        assert_true(r[p].wait_p50 <= r[p].wait_p95 && r[p].wait_p95 <= r[p].wait_p99);
        assert_true(r[p].stomps >= 0 && r[p].stomps <= 1);
        assert_true(r[p].utilisation > 0 && r[p].utilisation <= 1);
        assert_true(r[p].party_tickets > 0.05 && r[p].party_tickets < 0.5);
        assert_true(r[p].online_mean > 10);
    }
    assert_true(r[EO_MMSIM_OURS].mean_dev < r[EO_MMSIM_FCFS].mean_dev);
    assert_true(r[EO_MMSIM_OURS].stomps < r[EO_MMSIM_FCFS].stomps);
    /* FCFS takes tickets in arrival order with no rule: nobody waits longer for a match. */
    assert_true(r[EO_MMSIM_FCFS].wait_p50 <= r[EO_MMSIM_OURS].wait_p50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_checks),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
