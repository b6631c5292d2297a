/*
 * A pool re-tunes itself through the real service (docs/SERVICE.md "Tuning a pool"): POST
 * /v1/pools/{pool}/tune runs in the background and GET shows the figures `evenodds tune`
 * computes from the exported log, nothing changes until POST …/tune/apply, which sets the
 * chosen parameters and folds the log again under them: the lookups then equal `evenodds
 * replay --params` of the export, also after more rounds, a kill -9 right after the apply and
 * a restart. The schedule (serve --tune-every) tunes in the background and applies nothing.
 * Bad bodies are 400 naming the field; applying what cannot be applied is 409 naming why.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"

static json_t *get_json(const e2e_server *s, const char *path, long status)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, "GET", path, s->admin_key, NULL, &r), 0);
    if (r.status != status)
        fail_msg("GET %s: %ld %s", path, r.status, r.body);
    json_t *o = e2e_json(&r);
    e2e_resp_free(&r);
    assert_non_null(o);
    return o;
}

/* Polls GET /v1/pools/w/tune until its job @p job is done (at most 120 s). */
static json_t *wait_tune(const e2e_server *s, json_int_t job)
{
    for (int i = 0; i < 12000; i++) {
        json_t *o = get_json(s, "/v1/pools/w/tune", 200);
        const char *state = json_string_value(json_object_get(o, "state"));
        if (json_integer_value(json_object_get(o, "job")) == job && strcmp(state, "running") != 0) {
            if (strcmp(state, "done") != 0)
                fail_msg("the tune failed: %s", json_string_value(json_object_get(o, "error")));
            return o;
        }
        json_decref(o);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    fail_msg("the tune did not finish in 120 s");
    return NULL;
}

/* POST @p path with @p body must answer @p status; the answer (new reference). */
static json_t *post(const e2e_server *s, const char *path, const char *body, long status)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, "POST", path, s->admin_key, body, &r), 0);
    if (r.status != status)
        fail_msg("POST %s %s: %ld %s", path, body ? body : "", r.status, r.body);
    json_t *o = e2e_json(&r);
    e2e_resp_free(&r);
    return o;
}

/* The pool's log exported into @p out. */
static void export_pool(const e2e_server *s, const char *out)
{
    char err[512];
    const char *argv[] = {"evenodds", "export", "--db", s->db, "--pool", "w", "--out", out, NULL};
    assert_int_equal(e2e_run(argv, NULL, err, sizeof err), 0);
}

/* Every lookup equals `evenodds replay --params @p cfg` of the exported log. */
static void expect_lookups_replay(const e2e_server *s, const char *cfg)
{
    char exported[400], ratings[400], args[1400];
    e2e_path(s, "lk-exported.jsonl", exported, sizeof exported);
    e2e_path(s, "lk-ratings.jsonl", ratings, sizeof ratings);
    export_pool(s, exported);
    snprintf(args, sizeof args, "replay --params '%s' --ratings-out '%s' '%s'", cfg, ratings,
             exported);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 0);
    assert_true(e2e_expect_lookups(s, "w", ratings, NULL) >= 60);
}

/* The pool's parameters as GET /v1/pools lists them equal @p params. */
static void expect_params(const e2e_server *s, const json_t *params)
{
    json_t *list = get_json(s, "/v1/pools", 200);
    json_t *p = json_object_get(json_array_get(json_object_get(list, "pools"), 0), "params");
    if (!json_equal(p, params)) {
        char *a = json_dumps(p, JSON_COMPACT), *b = json_dumps(params, JSON_COMPACT);
        fail_msg("pool params %s, expected %s", a, b);
    }
    json_decref(list);
}

/* The tune's figures are `evenodds tune`'s on the exported log, to the digits printed. */
static void expect_cli_figures(const e2e_server *s, const json_t *job)
{
    char exported[400], rep[400], args[1400];
    e2e_path(s, "cli-exported.jsonl", exported, sizeof exported);
    e2e_path(s, "cli-report.json", rep, sizeof rep);
    export_pool(s, exported);
    snprintf(args, sizeof args,
             "tune --model trueskill --param beta=25 --budget 25 --report '%s' --format json "
             "'%s' 2>/dev/null",
             rep, exported);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 0);
    json_error_t je;
    json_t *cli = json_load_file(rep, 0, &je);
    assert_non_null(cli);
    const json_t *t = json_object_get(job, "tune");
    static const char *const keys[] = {"knobs", "folds", "chosen"};
    for (size_t i = 0; i < 3; i++)
        assert_true(json_equal(json_object_get(t, keys[i]), json_object_get(cli, keys[i])));
    static const char *const points[] = {"start", "best"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *a = json_object_get(json_object_get(t, points[i]), "held_out");
        const json_t *b = json_object_get(json_object_get(cli, points[i]), "held_out");
        double x = json_number_value(json_object_get(a, "logloss"));
        double y = json_number_value(json_object_get(b, "logloss"));
        if (!(x > 0 && (x - y) / y < 1e-9 && (y - x) / y < 1e-9))
            fail_msg("%s held out: service %.17g, tune %.17g", points[i], x, y);
        assert_int_equal(json_integer_value(json_object_get(a, "rounds")),
                         json_integer_value(json_object_get(b, "rounds")));
    }
    json_decref(cli);
}

/* The chosen configuration of a done job as a --params file at @p path. */
static void write_config(const json_t *job, const char *path)
{
    json_t *c = json_pack("{s:O,s:O}", "model", json_object_get(job, "model"), "params",
                          json_object_get(job, "params"));
    assert_int_equal(json_dump_file(c, path, JSON_COMPACT | JSON_REAL_PRECISION(17)), 0);
    json_decref(c);
}

static void bad_requests(const e2e_server *s)
{
    const char *path = "/v1/pools/w/tune", *apply = "/v1/pools/w/tune/apply";
    json_decref(get_json(s, path, 404));
    e2e_expect_error(s, "POST", apply, s->admin_key, NULL, 404, "no_tune", NULL);
    e2e_expect_error(s, "POST", path, s->server_key, NULL, 403, "forbidden", NULL);
    e2e_expect_error(s, "POST", path, s->admin_key, "{\"budget\":0}", 400, "invalid_request",
                     "budget");
    e2e_expect_error(s, "POST", path, s->admin_key, "{\"knobs\":[\"nope\"]}", 400,
                     "invalid_request", "knobs");
    e2e_expect_error(s, "POST", path, s->admin_key,
                     "{\"knobs\":[\"draw_probability\",\"draw_probability\"]}", 400,
                     "invalid_request", "knobs");
    e2e_expect_error(s, "POST", path, s->admin_key, "{\"metric\":\"auc\"}", 400, "invalid_request",
                     "metric");
    e2e_expect_error(s, "POST", path, s->admin_key, "{\"eval_from\":0.3,\"burn_in\":0.4}", 400,
                     "invalid_request", "burn_in");
    e2e_expect_error(s, "POST", path, s->admin_key, "{\"budjet\":3}", 400, "invalid_request",
                     "budjet");
    e2e_expect_error(s, "POST", path, s->admin_key, "[1]", 400, "invalid_request", NULL);
    e2e_expect_error(s, "POST", "/v1/pools/nope/tune", s->admin_key, NULL, 404, "unknown_pool",
                     NULL);
}

static void test_tune_service(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], cfg[400], err[512];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "chosen.json", cfg, sizeof cfg);
    const char *sim[] = {"evenodds",   "sim",       "--seed",       "5",      "--rounds",
                         "900",        "--players", "80",           "--team", "6",
                         "--balancer", "random",    "--rounds-out", world,    NULL};
    assert_int_equal(e2e_run(sim, NULL, err, sizeof err), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    /* beta three times a new pool's (which fits the simulator's worlds): a start to improve */
    e2e_create_pool(&s, "{\"name\":\"w\",\"model\":\"trueskill\",\"params\":{\"beta\":25}}");
    json_t *list = get_json(&s, "/v1/pools", 200);
    json_t *start =
        json_incref(json_object_get(json_array_get(json_object_get(list, "pools"), 0), "params"));
    json_decref(list);
    e2e_post_lines(&s, "w", world, 0, 800);
    bad_requests(&s);

    /* The tune runs, shows eval's held-out comparison, and changes nothing. */
    json_t *o = post(&s, "/v1/pools/w/tune", "{\"budget\":25}", 202);
    json_int_t job = json_integer_value(json_object_get(o, "job"));
    json_decref(o);
    json_t *done = wait_tune(&s, job);
    assert_string_equal(json_string_value(json_object_get(json_object_get(done, "tune"), "chosen")),
                        "best");
    assert_int_equal(json_integer_value(json_object_get(done, "rounds")), 800);
    assert_false(json_is_true(json_object_get(done, "applied")));
    assert_false(json_is_true(json_object_get(done, "scheduled")));
    expect_cli_figures(&s, done);
    expect_params(&s, start);
    write_config(done, cfg);

    /* The apply: the wrong job is refused, the right one sets the parameters and refolds. */
    e2e_expect_error(&s, "POST", "/v1/pools/w/tune/apply", s.admin_key, "{\"job\":99}", 409,
                     "tune_replaced", "job");
    e2e_expect_error(&s, "POST", "/v1/pools/w/tune/apply", s.admin_key, "{\"jab\":1}", 400,
                     "invalid_request", "jab");
    char body[64];
    snprintf(body, sizeof body, "{\"job\":%lld}", (long long)job);
    o = post(&s, "/v1/pools/w/tune/apply", body, 200);
    assert_true(json_equal(json_object_get(o, "params"), json_object_get(done, "params")));
    assert_int_equal(json_integer_value(json_object_get(o, "players")), 80);
    json_decref(o);
    expect_params(&s, json_object_get(done, "params"));
    expect_lookups_replay(&s, cfg);
    e2e_expect_error(&s, "POST", "/v1/pools/w/tune/apply", s.admin_key, NULL, 409,
                     "already_applied", NULL);
    json_t *again = get_json(&s, "/v1/pools/w/tune", 200);
    assert_true(json_is_true(json_object_get(again, "applied")));
    json_decref(again);

    /* More rounds rate under the new parameters; a tune whose answer cannot beat its gate
     * leaves nothing to apply. */
    e2e_post_lines(&s, "w", world, 800, 850);
    o = post(&s, "/v1/pools/w/tune", "{\"budget\":3,\"gate\":100}", 202);
    json_int_t job2 = json_integer_value(json_object_get(o, "job"));
    json_decref(o);
    json_decref(wait_tune(&s, job2));
    e2e_expect_error(&s, "POST", "/v1/pools/w/tune/apply", s.admin_key, NULL, 409,
                     "nothing_to_apply", NULL);
    expect_lookups_replay(&s, cfg);

    /* A kill -9 loses nothing acknowledged: the parameters and the fold survive. */
    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGKILL, 20000, &st), 0);
    const char *every[] = {"--tune-every", "1", NULL};
    assert_int_equal(e2e_start(&s, every), 0);
    expect_params(&s, json_object_get(done, "params"));
    expect_lookups_replay(&s, cfg);
    e2e_post_lines(&s, "w", world, 850, 900);
    expect_lookups_replay(&s, cfg);

    /* The schedule tunes in the background, once a second here (one may have started while
     * the last rounds arrived: the next reads them all), and applies nothing. */
    json_t *sched = NULL;
    for (int i = 0; i < 12000 && sched == NULL; i++) {
        e2e_resp r;
        assert_int_equal(e2e_call(&s, "GET", "/v1/pools/w/tune", s.admin_key, NULL, &r), 0);
        assert_true(r.status == 200 || r.status == 404); /* 404: none started yet */
        json_t *g = r.status == 200 ? e2e_json(&r) : json_object();
        e2e_resp_free(&r);
        if (json_is_true(json_object_get(g, "scheduled")) &&
            strcmp(json_string_value(json_object_get(g, "state")), "done") == 0 &&
            json_integer_value(json_object_get(g, "rounds")) == 900)
            sched = g;
        else
            json_decref(g);
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (sched == NULL)
        fail_msg("no scheduled tune of the 900 rounds finished in 120 s");
    json_decref(sched);
    expect_params(&s, json_object_get(done, "params"));
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    json_decref(done);
    json_decref(start);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_tune_service)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
