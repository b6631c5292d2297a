/*
 * The CLI against the service: rounds posted to the real service, exported with
 * `evenodds export` and folded again with `evenodds replay`, give every player exactly the
 * rating, round count and visibility the service answers (the log is the source of truth);
 * `evenodds import` then `export` gives the input back byte for byte, and a bad file changes
 * nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_model.h"
#include "gen.h"

/* Writes @p n generated rounds (team sizes 1..12, stalemates, 60 players so that many pass the
 * 50-round shadow period) as canonical JSONL to @p path. */
static void write_log(const char *path, size_t n, uint64_t seed)
{
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.seed = seed;
    c.players = 60;
    c.team_min = 1;
    c.team_max = 12;
    c.draw_permille = 40;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&c, &g), 0);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    static char line[16384];
    for (size_t i = 0; i < n; i++) {
        eo_round r;
        eo_gen_next(g, &r);
        int len = eo_gen_jsonl(&r, line, sizeof line);
        assert_true(len > 0);
        assert_int_equal(fwrite(line, 1, (size_t)len, f), (size_t)len);
    }
    assert_int_equal(fclose(f), 0);
    eo_gen_destroy(g);
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return buf;
}

static void path_in(const e2e_server *s, const char *name, char *out, size_t cap)
{
    assert_true(snprintf(out, cap, "%s/%s", s->dir, name) < (int)cap);
}

static void test_service_equals_replay(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools", s.admin_key,
                              "{\"name\":\"arena\",\"model\":\"synelo\",\"params\":{\"kmax_team\":12}}",
                              &r), 0);
    assert_int_equal(r.status, 201);
    e2e_resp_free(&r);

    char log[400], exported[400], ratings[400];
    path_in(&s, "posted.jsonl", log, sizeof log);
    path_in(&s, "exported.jsonl", exported, sizeof exported);
    path_in(&s, "ratings.jsonl", ratings, sizeof ratings);
    write_log(log, 400, 7);
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    char line[16384];
    size_t posted = 0;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(e2e_call(&s, "POST", "/v1/pools/arena/rounds", s.server_key, line, &r), 0);
        assert_int_equal(r.status, 200);
        e2e_resp_free(&r);
        posted++;
    }
    fclose(f);
    assert_int_equal(posted, 400);

    /* Export while the service runs (a read-only transaction beside the writer). */
    char err[512];
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "arena", "--out",
                              exported, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    size_t la, lb;
    char *a = slurp(log, &la), *b = slurp(exported, &lb);
    assert_int_equal(la, lb); /* the generator writes canonical records, so export returns them */
    assert_memory_equal(a, b, la);
    free(a);
    free(b);

    const char *rep_argv[] = {"evenodds", "replay", "--model", "synelo", "--kmax-team", "12",
                              "--ratings-out", ratings, exported, NULL};
    assert_int_equal(e2e_run(rep_argv, NULL, err, sizeof err), 0);

    f = fopen(ratings, "r");
    assert_non_null(f);
    size_t players = 0, visible = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *want = json_loads(line, 0, &je);
        assert_non_null(want);
        const char *id = json_string_value(json_object_get(want, "id"));
        char path[256];
        assert_true(snprintf(path, sizeof path, "/v1/pools/arena/players/%s", id) < (int)sizeof path);
        assert_int_equal(e2e_call(&s, "GET", path, s.server_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *got = e2e_json(&r);
        assert_non_null(got);
        assert_int_equal(json_integer_value(json_object_get(got, "rating")),
                         json_integer_value(json_object_get(want, "rating")));
        assert_int_equal(json_integer_value(json_object_get(got, "rounds")),
                         json_integer_value(json_object_get(want, "rounds")));
        assert_int_equal(json_is_true(json_object_get(got, "visible")),
                         json_is_true(json_object_get(want, "visible")));
        visible += json_is_true(json_object_get(want, "visible"));
        players++;
        json_decref(got);
        json_decref(want);
        e2e_resp_free(&r);
    }
    fclose(f);
    assert_int_equal(players, 60);
    assert_true(visible > 0); /* the comparison covers graduated players too */

    int status = -1;
    assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
    assert_int_equal(status, 0);
    e2e_cleanup(&s);
}

/* Posts every line of @p path to pool @p pool; returns how many. */
static size_t post_all(const e2e_server *s, const char *pool, const char *path)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char url[128], line[16384];
    snprintf(url, sizeof url, "/v1/pools/%s/rounds", pool);
    size_t n = 0;
    e2e_resp r;
    while (fgets(line, sizeof line, f)) {
        assert_int_equal(e2e_call(s, "POST", url, s->server_key, line, &r), 0);
        if (r.status != 200)
            fail_msg("%s: %ld %s", url, r.status, r.body);
        e2e_resp_free(&r);
        n++;
    }
    fclose(f);
    return n;
}

/* Exports pool @p pool, replays it with @p model and checks that every player's lookup shows
 * exactly what the replay computed (every field of its --ratings-out line). */
/* The other reads work for every model: quality counts the rounds and players and gives a
 * Brier score in [0, 1]; a split of 8 known players gives k = 2, 3, 4 with P(A) in [0, 1]. */
static void expect_reads(const e2e_server *s, const char *pool, const char *model,
                         const char *ids)
{
    char path[256], body[640];
    snprintf(path, sizeof path, "/v1/pools/%s/quality", pool);
    e2e_resp r;
    assert_int_equal(e2e_call(s, "GET", path, s->admin_key, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    json_t *q = e2e_json(&r);
    assert_non_null(q);
    assert_true(json_integer_value(json_object_get(q, "rounds")) % 150 == 0);
    assert_int_equal(json_integer_value(json_object_get(q, "players")), 60);
    double brier = json_number_value(json_object_get(q, "brier_all"));
    if (!(brier > 0.0 && brier < 1.0))
        fail_msg("model %s: quality %s", model, r.body);
    json_decref(q);
    e2e_resp_free(&r);

    snprintf(path, sizeof path, "/v1/pools/%s/splits", pool);
    snprintf(body, sizeof body, "{\"players\":[%s]}", ids);
    assert_int_equal(e2e_call(s, "POST", path, s->server_key, body, &r), 0);
    if (r.status != 200)
        fail_msg("model %s: splits %ld %s", model, r.status, r.body);
    json_t *j = e2e_json(&r);
    json_t *splits = json_object_get(j, "splits");
    assert_int_equal(json_array_size(splits), 3);
    for (size_t i = 0; i < 3; i++) {
        json_t *sp = json_array_get(splits, i);
        assert_int_equal(json_integer_value(json_object_get(sp, "k")), (json_int_t)i + 2);
        double pa = json_number_value(json_object_get(sp, "p_a"));
        if (!(pa >= 0.0 && pa <= 1.0))
            fail_msg("model %s: split %s", model, r.body);
    }
    json_decref(j);
    e2e_resp_free(&r);
}

static void expect_service_equals_replay(const e2e_server *s, const char *pool, const char *model)
{
    char exported[400], ratings[400], err[512];
    path_in(s, "m-exported.jsonl", exported, sizeof exported);
    path_in(s, "m-ratings.jsonl", ratings, sizeof ratings);
    const char *exp_argv[] = {"evenodds", "export", "--db", s->db, "--pool", pool, "--out",
                              exported, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    const char *rep_argv[] = {"evenodds", "replay", "--model", model, "--ratings-out", ratings,
                              exported, NULL};
    if (e2e_run(rep_argv, NULL, err, sizeof err) != 0)
        fail_msg("replay --model %s: %s", model, err);
    FILE *f = fopen(ratings, "r");
    assert_non_null(f);
    char line[4096];
    size_t players = 0;
    char first_ids[512] = "";
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *want = json_loads(line, 0, &je);
        assert_non_null(want);
        const char *id = json_string_value(json_object_get(want, "id"));
        if (players < 8) {
            size_t used = strlen(first_ids);
            snprintf(first_ids + used, sizeof first_ids - used, "%s\"%s\"", players ? "," : "",
                     id);
        }
        char path[256];
        snprintf(path, sizeof path, "/v1/pools/%s/players/%s", pool, id);
        e2e_resp r;
        assert_int_equal(e2e_call(s, "GET", path, s->server_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *got = e2e_json(&r);
        assert_non_null(got);
        const char *key;
        json_t *v;
        json_object_foreach(want, key, v) {
            if (!json_equal(v, json_object_get(got, key)))
                fail_msg("model %s, player %s, \"%s\": service %s, replay %s", model, id, key,
                         r.body, line);
        }
        json_decref(got);
        json_decref(want);
        e2e_resp_free(&r);
        players++;
    }
    fclose(f);
    assert_int_equal(players, 60);
    expect_reads(s, pool, model, first_ids);
}

/* A pool of every model through the service, with partial play and stalemates: the lookups
 * equal `evenodds replay` of the exported log, before and after a restart (which folds the log
 * again) and after more rounds on the folded state. */
static void test_every_model(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    char log1[400], log2[400];
    path_in(&s, "m-log1.jsonl", log1, sizeof log1);
    path_in(&s, "m-log2.jsonl", log2, sizeof log2);
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.seed = 11;
    c.players = 60;
    c.team_min = 1;
    c.team_max = 6;
    c.draw_permille = 40;
    c.partial_permille = 250;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&c, &g), 0);
    for (int part = 0; part < 2; part++) {
        FILE *f = fopen(part ? log2 : log1, "w");
        assert_non_null(f);
        static char line[16384];
        for (int i = 0; i < 150; i++) {
            eo_round r;
            eo_gen_next(g, &r);
            int len = eo_gen_jsonl(&r, line, sizeof line);
            assert_true(len > 0 && fwrite(line, 1, (size_t)len, f) == (size_t)len);
        }
        assert_int_equal(fclose(f), 0);
    }
    eo_gen_destroy(g);

    int models = 0;
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        const char *name = eo_model_name((eo_model)m);
        if (name == NULL)
            continue;
        char body[200];
        snprintf(body, sizeof body, "{\"name\":\"m-%s\",\"model\":\"%s\"}", name, name);
        e2e_resp r;
        assert_int_equal(e2e_call(&s, "POST", "/v1/pools", s.admin_key, body, &r), 0);
        assert_int_equal(r.status, 201);
        e2e_resp_free(&r);
        char pool[64];
        snprintf(pool, sizeof pool, "m-%s", name);
        assert_int_equal(post_all(&s, pool, log1), 150);
        expect_service_equals_replay(&s, pool, name);
        models++;
    }
    int status = -1;
    assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
    assert_int_equal(status, 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        const char *name = eo_model_name((eo_model)m);
        if (name == NULL)
            continue;
        char pool[64];
        snprintf(pool, sizeof pool, "m-%s", name);
        expect_service_equals_replay(&s, pool, name);
        assert_int_equal(post_all(&s, pool, log2), 150);
        expect_service_equals_replay(&s, pool, name);
    }
    assert_true(models >= 1);
    assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
    assert_int_equal(status, 0);
    e2e_cleanup(&s);
}

static void test_import_export(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory; no service runs here */
    assert_int_equal(e2e_init(&s), 0);
    char log[400], out[400], bad[400], err[1024];
    path_in(&s, "in.jsonl", log, sizeof log);
    path_in(&s, "out.jsonl", out, sizeof out);
    path_in(&s, "bad.jsonl", bad, sizeof bad);
    write_log(log, 300, 11);

    const char *imp[] = {"evenodds", "import", "--db", s.db, "--pool", "p", "--create",
                         "--kmax-team", "12", log, NULL};
    assert_int_equal(e2e_run(imp, NULL, err, sizeof err), 0);
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "p", "--out", out, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    size_t la, lb;
    char *a = slurp(log, &la), *b = slurp(out, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);

    /* Importing the same file again skips every round and changes nothing. */
    assert_int_equal(e2e_run(imp, NULL, err, sizeof err), 0);

    /* A file whose third line is bad: exit 1, the line and field named, nothing written. */
    FILE *f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"id\":\"new-1\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x2\"]}\n", f);
    fputs("{\"id\":\"new-2\",\"winner\":\"B\",\"A\":[\"x1\"],\"B\":[\"x2\"]}\n", f);
    fputs("{\"id\":\"new-3\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x1\"]}\n", f);
    fclose(f);
    const char *imp_bad[] = {"evenodds", "import", "--db", s.db, "--pool", "p", bad, NULL};
    assert_int_equal(e2e_run(imp_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "bad.jsonl:3:"));
    assert_non_null(strstr(err, "\"B[0].id\": player \"x1\" is on both teams"));
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    free(b);
    b = slurp(out, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);

    /* Usage errors exit 2. */
    const char *no_pool[] = {"evenodds", "export", "--db", s.db, NULL};
    assert_int_equal(e2e_run(no_pool, NULL, err, sizeof err), 2);
    free(a);
    free(b);
    e2e_cleanup(&s);
}

/* `evenodds autobalance` and `evenodds triggers` offline: seed 000 F11's joint choice for a
 * 6v2 (ratings 1600 1400 1200 500 300 100 v 1400 1900, D = 1800: the pair 500 + 300 leaves
 * gap 200; moving the closest to T twice would leave −800) and the arena round 2 scramble; bad
 * input exits 1 with the field named, bad usage 2, and --help 0. */
static void test_autobalance_triggers(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char in[400], out[400], bad[400], tin[400], tout[400], err[1024];
    path_in(&s, "ab.json", in, sizeof in);
    path_in(&s, "ab.out", out, sizeof out);
    path_in(&s, "ab_bad.json", bad, sizeof bad);
    path_in(&s, "tr.json", tin, sizeof tin);
    path_in(&s, "tr.out", tout, sizeof tout);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("{\"now\":1000,\"players\":[{\"id\":\"a\",\"team\":\"A\",\"rating\":1600},"
          "{\"id\":\"b\",\"team\":\"A\",\"rating\":1400},{\"id\":\"c\",\"team\":\"A\",\"rating\":1200},"
          "{\"id\":\"d\",\"team\":\"A\",\"rating\":500},{\"id\":\"e\",\"team\":\"A\",\"rating\":300},"
          "{\"id\":\"f\",\"team\":\"A\",\"rating\":100},{\"id\":\"g\",\"team\":\"B\",\"rating\":1400},"
          "{\"id\":\"h\",\"team\":\"B\",\"rating\":1900}],\"policy\":{\"delay\":0}}",
          f);
    assert_int_equal(fclose(f), 0);
    const char *ab[] = {"evenodds", "autobalance", "--file", in, "--out", out, NULL};
    assert_int_equal(e2e_run(ab, NULL, err, sizeof err), 0);
    json_error_t jerr;
    json_t *j = json_load_file(out, 0, &jerr);
    assert_non_null(j);
    assert_string_equal(json_string_value(json_object_get(j, "action")), "act");
    assert_int_equal(json_integer_value(json_object_get(j, "gap_after")), 200);
    json_t *moves = json_object_get(j, "moves");
    assert_int_equal(json_array_size(moves), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(moves, 0), "id")), "d");
    assert_string_equal(json_string_value(json_object_get(json_array_get(moves, 1), "id")), "e");
    json_decref(j);

    f = fopen(bad, "w");
    assert_non_null(f);
    fputs("{\"players\":[{\"id\":\"a\",\"team\":\"A\",\"rating\":1},{\"id\":\"b\",\"team\":\"A\"}]}", f);
    assert_int_equal(fclose(f), 0);
    const char *ab_bad[] = {"evenodds", "autobalance", "--file", bad, NULL};
    assert_int_equal(e2e_run(ab_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "\"players[1].rating\": required here"));

    f = fopen(tin, "w");
    assert_non_null(f);
    fputs("{\"mode\":\"arena\",\"round\":1,\"winner\":\"A\",\"wins\":[1,0],\"streak_team\":\"A\","
          "\"streak\":1,\"players\":8}",
          f);
    assert_int_equal(fclose(f), 0);
    const char *tr[] = {"evenodds", "triggers", "--file", tin, "--out", tout, NULL};
    assert_int_equal(e2e_run(tr, NULL, err, sizeof err), 0);
    j = json_load_file(tout, 0, &jerr);
    assert_non_null(j);
    assert_true(json_is_true(json_object_get(j, "scramble")));
    assert_string_equal(json_string_value(json_object_get(j, "rule")), "arena_round2");
    json_decref(j);
    const char *tr_bad[] = {"evenodds", "triggers", "--file", bad, NULL};
    assert_int_equal(e2e_run(tr_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "\"players\": expected an integer")); /* a count there */

    const char *usage[] = {"evenodds", "triggers", "--nope", NULL};
    assert_int_equal(e2e_run(usage, NULL, err, sizeof err), 2);
    const char *help[] = {"evenodds", "autobalance", "--help", NULL};
    assert_int_equal(e2e_run(help, NULL, err, sizeof err), 0);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_service_equals_replay),
        cmocka_unit_test(test_import_export),
        cmocka_unit_test(test_every_model),
        cmocka_unit_test(test_autobalance_triggers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
