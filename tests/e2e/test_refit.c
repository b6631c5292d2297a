/*
 * The admin refit through the real service: rounds of a simulated world posted, POST
 * /v1/pools/{pool}/refit, GET polled until done; the lookups then hold exactly what `evenodds
 * fit --ratings-out` computes from the exported log up to the refit's position; more rounds
 * after it and a restart keep every lookup equal to `evenodds replay` of the export (the
 * refit is a logged record the fold and replay apply the same way). Also: a second POST while
 * one runs is 409, a bad body 400 naming the field, the server key 403.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"

static void expect_service_equals_replay(const e2e_server *s, const char *pool)
{
    char exported[400], ratings[400], err[512];
    e2e_path(s, "x-exported.jsonl", exported, sizeof exported);
    e2e_path(s, "x-ratings.jsonl", ratings, sizeof ratings);
    const char *exp_argv[] = {"evenodds", "export", "--db", s->db, "--pool", pool, "--out",
                              exported, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    const char *rep_argv[] = {"evenodds", "replay", "--model", "trueskill", "--ratings-out",
                              ratings, exported, NULL};
    if (e2e_run(rep_argv, NULL, err, sizeof err) != 0)
        fail_msg("replay: %s", err);
    assert_true(e2e_expect_lookups(s, pool, ratings, NULL) >= 60);
}

/* Polls GET …/refit until the job is not running (at most 300 s: the long job below, niced,
 * took 139 s on a 2-core box under a load average of 11); returns its answer. */
static json_t *wait_refit(const e2e_server *s, const char *pool)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/pools/%s/refit", pool);
    for (int i = 0; i < 30000; i++) {
        e2e_resp r;
        assert_int_equal(e2e_call(s, "GET", path, s->admin_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *o = e2e_json(&r);
        e2e_resp_free(&r);
        assert_non_null(o);
        if (strcmp(json_string_value(json_object_get(o, "state")), "running") != 0)
            return o;
        json_decref(o);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("the refit did not finish in 300 s");
    return NULL;
}


static void test_refit(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], upto[400], fitted[400], err[1024];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "upto.jsonl", upto, sizeof upto);
    e2e_path(&s, "fitted.jsonl", fitted, sizeof fitted);
    const char *sim[] = {"evenodds", "sim", "--seed", "5", "--rounds", "900", "--players",
                         "80", "--team", "6", "--balancer", "random", "--rounds-out", world,
                         NULL};
    assert_int_equal(e2e_run(sim, NULL, err, sizeof err), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools", s.admin_key,
                              "{\"name\":\"w\",\"model\":\"trueskill\"}", &r), 0);
    assert_int_equal(r.status, 201);
    e2e_resp_free(&r);
    e2e_post_lines(&s, "w", world, 0, 700);

    const char *path = "/v1/pools/w/refit";
    e2e_expect_error(&s, "GET", path, s.admin_key, NULL, 404, "no_refit", NULL);
    e2e_expect_error(&s, "POST", path, s.server_key, "{}", 403, "forbidden", NULL);
    e2e_expect_error(&s, "GET", path, s.server_key, NULL, 403, "forbidden", NULL);
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"sweeps\":0}", 400, "invalid_request",
                 "sweeps");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"sweeps\":2.5}", 400, "invalid_request",
                 "sweeps");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"prior\":-1}", 400, "invalid_request",
                 "prior");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"tol\":\"x\"}", 400, "invalid_request",
                 "tol");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"sweep\":3}", 400, "invalid_request",
                 "sweep");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"method\":\"mean\"}", 400,
                 "invalid_request", "method");
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"method\":1}", 400, "invalid_request",
                 "method");
    e2e_expect_error(&s, "POST", path, s.admin_key, "[1]", 400, "invalid_request", NULL);
    e2e_expect_error(&s, "POST", path, s.admin_key, "{\"sweeps\":", 400, "invalid_json", NULL);
    e2e_expect_error(&s, "POST", "/v1/pools/nope/refit", s.admin_key, NULL, 404, "unknown_pool",
                 NULL);

    /* A long job (2,000 sweeps: a tolerance it never meets), and a second at once: 409. The
     * long job keeps the check from depending on how fast the machine is. */
    assert_int_equal(e2e_call(&s, "POST", path, s.admin_key, "{\"sweeps\":2000,\"tol\":1e-300}",
                              &r), 0);
    if (r.status != 202)
        fail_msg("POST refit: %ld %s", r.status, r.body);
    e2e_resp_free(&r);
    e2e_expect_error(&s, "POST", path, s.admin_key, "{}", 409, "refit_running", NULL);
    json_t *o = wait_refit(&s, "w");
    if (strcmp(json_string_value(json_object_get(o, "state")), "done") != 0)
        fail_msg("long refit: %s", json_dumps(o, 0));
    print_message("long refit: %lld sweeps, %.3f s\n",
                  (long long)json_integer_value(json_object_get(o, "sweeps")),
                  json_number_value(json_object_get(o, "seconds")));
    json_decref(o);

    /* The refit the rest checks, with the fit's defaults. */
    assert_int_equal(e2e_call(&s, "POST", path, s.admin_key, NULL, &r), 0);
    if (r.status != 202)
        fail_msg("POST refit: %ld %s", r.status, r.body);
    o = e2e_json(&r);
    assert_string_equal(json_string_value(json_object_get(o, "state")), "running");
    json_int_t job = json_integer_value(json_object_get(o, "job"));
    assert_true(job >= 2);
    json_decref(o);
    e2e_resp_free(&r);

    o = wait_refit(&s, "w");
    if (strcmp(json_string_value(json_object_get(o, "state")), "done") != 0)
        fail_msg("refit: %s", json_dumps(o, 0));
    assert_int_equal(json_integer_value(json_object_get(o, "job")), job);
    /* The log up to the job: 700 rounds and the long job's refit record. */
    assert_int_equal(json_integer_value(json_object_get(o, "upto")), 701);
    assert_int_equal(json_integer_value(json_object_get(o, "rounds")), 700);
    assert_int_equal(json_integer_value(json_object_get(o, "records")), 1);
    json_int_t players = json_integer_value(json_object_get(o, "players"));
    assert_true(players >= 60);
    assert_true(json_integer_value(json_object_get(o, "sweeps")) >= 1);
    assert_true(json_is_number(json_object_get(o, "objective")));
    json_decref(o);

    /* The lookups hold what `evenodds fit` computes from the log up to the refit (the export
     * now ends with the refit line, which the fit passes over). */
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "w", "--out", upto,
                              NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    const char *fit_argv[] = {"evenodds", "fit", "--model", "trueskill", "--format", "json",
                              "--ratings-out", fitted, upto, NULL};
    if (e2e_run(fit_argv, NULL, err, sizeof err) != 0)
        fail_msg("fit: %s", err);
    const char *keys[] = {"mu", "sigma", NULL};
    assert_int_equal(e2e_expect_lookups(&s, "w", fitted, keys), (size_t)players);
    expect_service_equals_replay(&s, "w");

    /* More rounds on the refitted states, then a restart (the fold applies the refit record
     * in its place): the service still equals a replay of its export. */
    e2e_post_lines(&s, "w", world, 700, 900);
    expect_service_equals_replay(&s, "w");
    int status = -1;
    assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
    assert_int_equal(status, 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    expect_service_equals_replay(&s, "w");
    /* A job is the service's memory, not the store's: a new process has none. */
    e2e_expect_error(&s, "GET", path, s.admin_key, NULL, 404, "no_refit", NULL);

    /* The static fit on request ("method": "map"; smoothing is TrueSkill's default): the
     * lookups hold what `evenodds fit --method map` computes from the export. */
    assert_int_equal(e2e_call(&s, "POST", path, s.admin_key, "{\"method\":\"map\"}", &r), 0);
    if (r.status != 202)
        fail_msg("POST refit map: %ld %s", r.status, r.body);
    e2e_resp_free(&r);
    o = wait_refit(&s, "w");
    if (strcmp(json_string_value(json_object_get(o, "state")), "done") != 0)
        fail_msg("refit map: %s", json_dumps(o, 0));
    json_decref(o);
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    const char *map_argv[] = {"evenodds", "fit", "--model", "trueskill", "--method", "map",
                              "--format", "json", "--ratings-out", fitted, upto, NULL};
    if (e2e_run(map_argv, NULL, err, sizeof err) != 0)
        fail_msg("fit --method map: %s", err);
    const char *mu_only[] = {"mu", NULL};
    assert_true(e2e_expect_lookups(&s, "w", fitted, mu_only) >= (size_t)players);
    expect_service_equals_replay(&s, "w");
    assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
    assert_int_equal(status, 0);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
