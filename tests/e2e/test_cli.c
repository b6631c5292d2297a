/*
 * The CLI against the service: rounds posted to the real service, exported with
 * `evenodds export` and folded again with `evenodds replay`, give every player exactly the
 * rating, round count and visibility the service answers (the log is the source of truth);
 * `evenodds import` then `export` gives the input back byte for byte, and a bad file changes
 * nothing.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_codec.h"
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

/* Writes @p text to the file at @p path (created or truncated). */
static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
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
    e2e_path(&s, "posted.jsonl", log, sizeof log);
    e2e_path(&s, "exported.jsonl", exported, sizeof exported);
    e2e_path(&s, "ratings.jsonl", ratings, sizeof ratings);
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
    char *a = e2e_slurp(log, &la), *b = e2e_slurp(exported, &lb);
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
    e2e_path(s, "m-exported.jsonl", exported, sizeof exported);
    e2e_path(s, "m-ratings.jsonl", ratings, sizeof ratings);
    const char *exp_argv[] = {"evenodds", "export", "--db", s->db, "--pool", pool, "--out",
                              exported, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    const char *rep_argv[] = {"evenodds", "replay", "--model", model, "--ratings-out", ratings,
                              exported, NULL};
    if (e2e_run(rep_argv, NULL, err, sizeof err) != 0)
        fail_msg("replay --model %s: %s", model, err);
    assert_int_equal(e2e_expect_lookups(s, pool, ratings, NULL), 60);
    /* The first eight players, for the reads below. */
    FILE *f = fopen(ratings, "r");
    assert_non_null(f);
    char line[4096], first_ids[512] = "";
    for (size_t players = 0; players < 8 && fgets(line, sizeof line, f); players++) {
        json_t *want = json_loads(line, 0, NULL);
        assert_non_null(want);
        size_t used = strlen(first_ids);
        snprintf(first_ids + used, sizeof first_ids - used, "%s\"%s\"", players ? "," : "",
                 json_string_value(json_object_get(want, "id")));
        json_decref(want);
    }
    fclose(f);
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
    e2e_path(&s, "m-log1.jsonl", log1, sizeof log1);
    e2e_path(&s, "m-log2.jsonl", log2, sizeof log2);
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

/* The hive model's commander skill and side offsets reach lookups (docs/MODELS.md "NS2 hive"): a pool with
 * side offsets on, rounds with a commander per team, timed rounds of varying length and late
 * joiners (so the pool's median round length sets the time weights). Every field of every
 * lookup, the commander and offsets included, equals `evenodds replay` of the export, before
 * and after a restart (the fold at start rebuilds the median too). */
static void test_hive_lookups(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools", s.admin_key,
                              "{\"name\":\"ns2\",\"model\":\"hive\","
                              "\"params\":{\"side_share\":0.5}}",
                              &r), 0);
    assert_int_equal(r.status, 201);
    e2e_resp_free(&r);
    char log[400], exported[400], ratings[400], err[512];
    e2e_path(&s, "hive.jsonl", log, sizeof log);
    e2e_path(&s, "hive-exported.jsonl", exported, sizeof exported);
    e2e_path(&s, "hive-ratings.jsonl", ratings, sizeof ratings);
    FILE *f = fopen(log, "w");
    assert_non_null(f);
    for (int i = 0; i < 24; i++) {
        long start = 1763800000L + 4000L * i, len = 600 + 150 * (i % 5);
        /* c1 commands side A (marines) in even rounds and side B in odd ones */
        const char *ca = i % 2 ? "c2" : "c1", *cb = i % 2 ? "c1" : "c2";
        fprintf(f,
                "{\"id\":\"h%d\",\"winner\":\"%s\",\"started_at\":%ld,\"ended_at\":%ld,"
                "\"A\":[{\"id\":\"%s\",\"commander\":true},\"f1\",{\"id\":\"f2\",\"joined\":%d}],"
                "\"B\":[{\"id\":\"%s\",\"commander\":true},\"f3\",\"f4\"]}\n",
                i, i % 3 ? "A" : "B", start, start + len, ca, 60 * (i % 4), cb);
    }
    assert_int_equal(fclose(f), 0);
    assert_int_equal(post_all(&s, "ns2", log), 24);
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "ns2", "--out",
                              exported, NULL};
    const char *rep_argv[] = {"evenodds", "replay", "--model", "hive", "--param",
                              "side_share=0.5", "--ratings-out", ratings, exported, NULL};
    for (int restart = 0; restart < 2; restart++) {
        assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
        if (e2e_run(rep_argv, NULL, err, sizeof err) != 0)
            fail_msg("replay: %s", err);
        assert_int_equal(e2e_expect_lookups(&s, "ns2", ratings, NULL), 6);
        assert_int_equal(e2e_call(&s, "GET", "/v1/pools/ns2/players/c1", s.server_key, NULL, &r),
                         0);
        json_t *c1 = e2e_json(&r);
        json_t *com = json_object_get(c1, "commander");
        assert_int_equal(json_integer_value(json_object_get(com, "rounds")), 24);
        assert_true(json_real_value(json_object_get(com, "skill")) != 0.0);
        assert_true(json_real_value(json_object_get(com, "offset")) != 0.0);
        assert_true(json_real_value(json_object_get(c1, "offset")) == 0.0); /* never on the field */
        json_decref(c1);
        e2e_resp_free(&r);
        assert_int_equal(e2e_call(&s, "GET", "/v1/pools/ns2/players/f3", s.server_key, NULL, &r),
                         0);
        json_t *f3 = e2e_json(&r);
        assert_true(json_real_value(json_object_get(f3, "offset")) != 0.0);
        assert_int_equal(json_integer_value(json_object_get(json_object_get(f3, "commander"),
                                                            "rounds")), 0);
        json_decref(f3);
        e2e_resp_free(&r);
        int status = -1;
        assert_int_equal(e2e_stop(&s, 15, 10000, &status), 0);
        assert_int_equal(status, 0);
        if (restart == 0)
            assert_int_equal(e2e_start(&s, NULL), 0);
    }
    e2e_cleanup(&s);
}

static void test_import_export(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory; no service runs here */
    assert_int_equal(e2e_init(&s), 0);
    char log[400], out[400], bad[400], err[1024];
    e2e_path(&s, "in.jsonl", log, sizeof log);
    e2e_path(&s, "out.jsonl", out, sizeof out);
    e2e_path(&s, "bad.jsonl", bad, sizeof bad);
    write_log(log, 300, 11);

    const char *imp[] = {"evenodds", "import", "--db", s.db, "--pool", "p", "--create",
                         "--kmax-team", "12", log, NULL};
    assert_int_equal(e2e_run(imp, NULL, err, sizeof err), 0);
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "p", "--out", out, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    size_t la, lb;
    char *a = e2e_slurp(log, &la), *b = e2e_slurp(out, &lb);
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
    b = e2e_slurp(out, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);

    /* Usage errors exit 2. */
    const char *no_pool[] = {"evenodds", "export", "--db", s.db, NULL};
    assert_int_equal(e2e_run(no_pool, NULL, err, sizeof err), 2);
    free(a);
    free(b);
    e2e_cleanup(&s);
}

/* Neither the store @p db nor SQLite's side files exist. */
static void expect_no_store(const char *db)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; i < sizeof suffix / sizeof suffix[0]; i++) {
        char path[600];
        snprintf(path, sizeof path, "%s%s", db, suffix[i]);
        if (access(path, F_OK) == 0)
            fail_msg("%s was left behind", path);
    }
}

/* A failed import leaves nothing: `--create` of a new store no file at all (the bad file, a
 * pool name against the rule, a round too long to store), an existing store its exact bytes. */
static void test_import_failure_leaves_nothing(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char good[400], bad[400], lng[400], fresh[400], err[1024];
    e2e_path(&s, "good.jsonl", good, sizeof good);
    e2e_path(&s, "bad.jsonl", bad, sizeof bad);
    e2e_path(&s, "long.jsonl", lng, sizeof lng);
    e2e_path(&s, "new.db", fresh, sizeof fresh);
    write_log(good, 50, 5);
    write_text(bad, "{\"id\":\"b1\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x2\"]}\n"
                    "{\"id\":\"b2\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x1\"]}\n");
    /* 240 kB of 0.1 on one line: a line import reads, a record of 1.2 MB. */
    FILE *f = fopen(lng, "w");
    assert_non_null(f);
    fputs("{\"id\":\"l1\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x2\"],\"x\":[0.1", f);
    for (int i = 1; i < 60000; i++)
        fputs(",0.1", f);
    fputs("]}\n", f);
    assert_int_equal(fclose(f), 0);

    const char *c_bad[] = {"evenodds", "import", "--db", fresh, "--pool", "p", "--create", bad,
                           NULL};
    assert_int_equal(e2e_run(c_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "bad.jsonl:2: \"B[0].id\""));
    expect_no_store(fresh);
    const char *c_name[] = {"evenodds", "import", "--db", fresh, "--pool", "../x", "--create",
                            good, NULL};
    assert_int_equal(e2e_run(c_name, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, EO_POOL_NAME_RULE));
    expect_no_store(fresh);
    const char *c_long[] = {"evenodds", "import", "--db", fresh, "--pool", "p", "--create", lng,
                            NULL};
    assert_int_equal(e2e_run(c_long, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "long.jsonl:1: \"x\": the round's canonical text would be "
                                "1200"));
    assert_non_null(strstr(err, "more than 1048576"));
    expect_no_store(fresh);

    /* An existing store: every failure leaves it byte for byte. */
    const char *ok[] = {"evenodds", "import", "--db", s.db, "--pool", "p", "--create", good, NULL};
    assert_int_equal(e2e_run(ok, NULL, err, sizeof err), 0);
    size_t len, len2;
    char *before = e2e_slurp(s.db, &len);
    const char *e_bad[] = {"evenodds", "import", "--db", s.db, "--pool", "p", bad, NULL};
    const char *e_name[] = {"evenodds", "import", "--db", s.db, "--pool",
                            "x');DROP TABLE pools;--", "--create", good, NULL};
    const char *e_long[] = {"evenodds", "import", "--db", s.db, "--pool", "q", "--create", lng,
                            NULL};
    const char *const *runs[] = {e_bad, e_name, e_long};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(e2e_run(runs[i], NULL, err, sizeof err), 1);
        char *after = e2e_slurp(s.db, &len2);
        assert_int_equal(len, len2);
        assert_memory_equal(before, after, len);
        free(after);
        char side[600];
        snprintf(side, sizeof side, "%s-wal", s.db);
        assert_int_not_equal(access(side, F_OK), 0);
    }
    assert_non_null(strstr(err, "long.jsonl:1: \"x\""));
    free(before);
    e2e_cleanup(&s);
}

/* ---- the largest rounds move ------------------------------------------------------------ */

#define MAX_POP 300 /* players of the largest rounds: 256 a round, so most play several */

/* @p raw as one percent-encoded path segment (every byte but A-Z a-z 0-9 - _ . ~). */
static void pct_segment(const char *raw, char *out, size_t cap)
{
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)raw; *c != '\0'; c++) {
        bool plain = (*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
                     (*c >= '0' && *c <= '9') || *c == '-' || *c == '_' || *c == '.' || *c == '~';
        assert_true(o + 4 < cap);
        o += (size_t)snprintf(out + o, cap - o, plain ? "%c" : "%%%02X", *c);
    }
    out[o] = '\0';
}

/* The canonical text of @p body (the record the service stores). */
static char *canonical(const char *body)
{
    char *c = eo_gen_canonical(body);
    assert_non_null(c);
    return c;
}

/* Round @p n of the largest size, its unknown fields chosen so that its canonical text is
 * exactly @p canon_len bytes (0: no unknown field): an array "x" of @p reals copies of 0.1
 * (the real that grows most: 4 bytes sent, 20 stored) and a string "y" that makes up the
 * rest. @p spaces spaces are added after the record (the body grows, not the record). */
static char *max_round(unsigned n, size_t canon_len, size_t reals, size_t spaces)
{
    const char *winner = n % 3 == 0 ? "draw" : n % 2 ? "A" : "B";
    if (canon_len == 0)
        return eo_gen_max_round(n, n * 37, MAX_POP, winner, 0, NULL);
    size_t cap = 16 + reals * 4 + canon_len + 16;
    char *extra = malloc(cap);
    assert_non_null(extra);
    size_t at = (size_t)snprintf(extra, cap, ",\"x\":[");
    for (size_t i = 0; i < reals; i++)
        at += (size_t)snprintf(extra + at, cap - at, "%s0.1", i ? "," : "");
    at += (size_t)snprintf(extra + at, cap - at, "],\"y\":\"\"");
    char *body = eo_gen_max_round(n, n * 37, MAX_POP, winner, 0, extra);
    char *c = canonical(body);
    size_t base = strlen(c);
    free(c);
    free(body);
    assert_true(base <= canon_len && at + (canon_len - base) + 1 < cap);
    memset(extra + at - 1, 'y', canon_len - base); /* inside the quotes of "y" */
    memcpy(extra + at - 1 + (canon_len - base), "\"", 2);
    body = eo_gen_max_round(n, n * 37, MAX_POP, winner, 0, extra);
    free(extra);
    size_t len = strlen(body);
    body = realloc(body, len + spaces + 1);
    assert_non_null(body);
    memset(body + len, ' ', spaces);
    body[len + spaces] = '\0';
    return body;
}

/* Posts @p body to pool "big"; returns the status and the answer's error field (or ""). */
static long post_round(const e2e_server *s, const char *body, char *field, size_t cap,
                       char *message, size_t mcap)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, "POST", "/v1/pools/big/rounds", s->server_key, body, &r), 0);
    json_t *j = e2e_json(&r);
    json_t *e = json_object_get(j, "error");
    const char *f = json_string_value(json_object_get(e, "field"));
    const char *m = json_string_value(json_object_get(e, "message"));
    snprintf(field, cap, "%s", f != NULL ? f : "");
    snprintf(message, mcap, "%s", m != NULL ? m : "");
    json_decref(j);
    long status = r.status;
    e2e_resp_free(&r);
    return status;
}

/* Every player of the largest rounds answers the same, byte for byte, from both services. */
static void expect_same_lookups(const e2e_server *a, const e2e_server *b)
{
    size_t rated = 0;
    for (unsigned i = 0; i < MAX_POP; i++) {
        char id[EO_ID_MAX + 1], seg[3 * EO_ID_MAX + 1], path[3 * EO_ID_MAX + 64];
        eo_gen_max_id('P', i, id);
        pct_segment(id, seg, sizeof seg);
        snprintf(path, sizeof path, "/v1/pools/big/players/%s", seg);
        e2e_resp ra, rb;
        assert_int_equal(e2e_call(a, "GET", path, a->server_key, NULL, &ra), 0);
        assert_int_equal(e2e_call(b, "GET", path, b->server_key, NULL, &rb), 0);
        assert_int_equal(ra.status, 200);
        if (rb.status != 200 || strcmp(ra.body, rb.body) != 0)
            fail_msg("player %u: service %s, imported %ld %s", i, ra.body, rb.status, rb.body);
        rated += strstr(ra.body, "\"rounds\":0,") == NULL;
        e2e_resp_free(&ra);
        e2e_resp_free(&rb);
    }
    assert_int_equal(rated, MAX_POP); /* 8 rounds of 256 from 300: everyone played */
}

/* Posts 8 of the largest rounds to pool "big": 6 without unknown fields, one whose body is
 * exactly the default cap and whose record is exactly a line (a long string), one whose record
 * is exactly a line of growing reals. Each is stored at most 5 times its size. *posted gets
 * each one's canonical text (malloc'd). */
static void post_max_rounds(const e2e_server *s, char *posted[8])
{
    size_t at_cap = 0;
    for (unsigned k = 0; k < 8; k++) {
        size_t canon_len = k == 5 || k == 6 ? EO_ROUND_TEXT_MAX : 0;
        size_t reals = k == 6 ? 40000 : 0; /* 160 kB sent, 800 kB stored */
        char *body = max_round(k, canon_len, reals, 0);
        if (k == 5) { /* the body at the default cap: the record and spaces after it */
            size_t len = strlen(body);
            free(body);
            body = max_round(k, canon_len, reals, EO_REQUEST_BODY_MAX - len);
            assert_int_equal(strlen(body), EO_REQUEST_BODY_MAX);
        }
        char field[64], message[256];
        long status = post_round(s, body, field, sizeof field, message, sizeof message);
        if (status != 200)
            fail_msg("round %u: %ld \"%s\": %s", k, status, field, message);
        posted[k] = canonical(body);
        assert_true(strlen(posted[k]) <= 5 * strlen(body)); /* stored at most 5 times sent */
        at_cap += strlen(posted[k]) == EO_ROUND_TEXT_MAX;
        free(body);
    }
    assert_int_equal(at_cap, 2);
}

/* One byte more than a line holds, and 600 kB of 1e-7 (2.6 MB stored): 400 naming the field
 * and the limit. */
static void expect_too_long_refused(const e2e_server *s)
{
    char *over = max_round(9, EO_ROUND_TEXT_MAX + 1, 40000, 0);
    char field[64], message[256];
    assert_int_equal(post_round(s, over, field, sizeof field, message, sizeof message), 400);
    assert_string_equal(field, "x");
    assert_non_null(strstr(message, "1048577 bytes, more than 1048576"));
    free(over);
    char *small = malloc(700000);
    assert_non_null(small);
    size_t at = (size_t)snprintf(small, 700000, "{\"id\":\"tiny\",\"winner\":\"A\",\"A\":[\"a\"],"
                                                "\"B\":[\"b\"],\"blob\":[");
    while (at < 600000)
        at += (size_t)snprintf(small + at, 700000 - at, "1e-7,");
    memcpy(small + at - 1, "]}", 3);
    assert_int_equal(post_round(s, small, field, sizeof field, message, sizeof message), 400);
    assert_string_equal(field, "blob");
    assert_non_null(strstr(message, "more than 1048576"));
    free(small);
}

/* The export at @p path is the @p n records of @p posted, one a line, none longer than import
 * reads; returns its text (malloc'd) and *len. Frees @p posted's texts. */
static char *expect_export_lines(const char *path, char **posted, size_t n, size_t *len)
{
    char *text = e2e_slurp(path, len);
    char *line = text;
    for (size_t i = 0; i < n; i++) {
        char *nl = strchr(line, '\n');
        assert_non_null(nl);
        assert_true((size_t)(nl - line) <= EO_JSONL_LINE_MAX);
        assert_int_equal((size_t)(nl - line), strlen(posted[i]));
        assert_memory_equal(line, posted[i], strlen(posted[i]));
        line = nl + 1;
        free(posted[i]);
    }
    assert_int_equal((size_t)(line - text), *len);
    return text;
}

/* The largest rounds the service takes by default (docs/ROUNDS.md "How large a stored round
 * can be"): 256 players, every id 128 bytes of escapes, every member with four growing reals,
 * unknown fields up to the record's cap (one body of exactly 1 MiB), are stored at most 5 times
 * their size, exported as lines `import` reads, and imported into a new store give the same
 * lookups. What would store longer is refused, naming the field and the limit. */
static void test_max_rounds_move(void **state)
{
    (void)state;
    e2e_server s, t;
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_init(&t), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    e2e_create_pool(&s, "{\"name\":\"big\",\"model\":\"synelo\"}");
    char *posted[8];
    post_max_rounds(&s, posted);
    expect_too_long_refused(&s);

    char exported[400], again[400], err[1024];
    e2e_path(&s, "big.jsonl", exported, sizeof exported);
    e2e_path(&t, "again.jsonl", again, sizeof again);
    const char *exp_argv[] = {"evenodds", "export", "--db", s.db, "--pool", "big", "--out",
                              exported, NULL};
    assert_int_equal(e2e_run(exp_argv, NULL, err, sizeof err), 0);
    size_t len;
    char *text = expect_export_lines(exported, posted, 8, &len);

    /* Import into a new store, export again: the same bytes; served: the same lookups. */
    const char *imp[] = {"evenodds", "import", "--db", t.db, "--pool", "big", "--create",
                         exported, NULL};
    if (e2e_run(imp, NULL, err, sizeof err) != 0)
        fail_msg("import: %s", err);
    const char *exp2[] = {"evenodds", "export", "--db", t.db, "--pool", "big", "--out", again,
                          NULL};
    assert_int_equal(e2e_run(exp2, NULL, err, sizeof err), 0);
    size_t len2;
    char *text2 = e2e_slurp(again, &len2);
    assert_int_equal(len, len2);
    assert_memory_equal(text, text2, len);
    free(text);
    free(text2);
    assert_int_equal(e2e_start(&t, NULL), 0);
    expect_same_lookups(&s, &t);
    e2e_cleanup(&t);
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
    e2e_path(&s, "ab.json", in, sizeof in);
    e2e_path(&s, "ab.out", out, sizeof out);
    e2e_path(&s, "ab_bad.json", bad, sizeof bad);
    e2e_path(&s, "tr.json", tin, sizeof tin);
    e2e_path(&s, "tr.out", tout, sizeof tout);
    write_text(in,
               "{\"now\":1000,\"players\":[{\"id\":\"a\",\"team\":\"A\",\"rating\":1600},"
               "{\"id\":\"b\",\"team\":\"A\",\"rating\":1400},{\"id\":\"c\",\"team\":\"A\",\"rating\":1200},"
               "{\"id\":\"d\",\"team\":\"A\",\"rating\":500},{\"id\":\"e\",\"team\":\"A\",\"rating\":300},"
               "{\"id\":\"f\",\"team\":\"A\",\"rating\":100},{\"id\":\"g\",\"team\":\"B\",\"rating\":1400},"
               "{\"id\":\"h\",\"team\":\"B\",\"rating\":1900}],\"policy\":{\"delay\":0}}");
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

    write_text(bad,
               "{\"players\":[{\"id\":\"a\",\"team\":\"A\",\"rating\":1},{\"id\":\"b\",\"team\":\"A\"}]}");
    const char *ab_bad[] = {"evenodds", "autobalance", "--file", bad, NULL};
    assert_int_equal(e2e_run(ab_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "\"players[1].rating\": required here"));

    write_text(tin,
               "{\"mode\":\"arena\",\"round\":1,\"winner\":\"A\",\"wins\":[1,0],\"streak_team\":\"A\","
               "\"streak\":1,\"players\":8}");
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

/* `evenodds split` with balancer inputs (docs/BALANCER.md): the service's request and answer
 * offline. Rebalance by hand (SynElo, Θ 2400: ε = 96 for 0.01): A = a 1000, b 1100, e 950
 * (locked A), B = c 1200 and d 900 (party p), f 1050; |D| = 100 > 96, and the only split of
 * k = 3 with |D| <= 96 and the party whole is a <-> f (3100 : 3100), two moves. A bad field
 * exits 1 naming it; a plain request keeps the splitter's answer (no "moves"). */
static void test_split_balancer(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char in[400], out[400], bad[400], err[1024];
    e2e_path(&s, "split.json", in, sizeof in);
    e2e_path(&s, "split.out", out, sizeof out);
    e2e_path(&s, "split_bad.json", bad, sizeof bad);
    write_text(in,
               "{\"players\":[{\"id\":\"a\",\"rating\":1000,\"team\":\"A\"},"
               "{\"id\":\"b\",\"rating\":1100,\"team\":\"A\"},"
               "{\"id\":\"c\",\"rating\":1200,\"team\":\"B\",\"party\":\"p\"},"
               "{\"id\":\"d\",\"rating\":900,\"team\":\"B\",\"party\":\"p\"},"
               "{\"id\":\"e\",\"rating\":950,\"team\":\"A\",\"lock\":\"A\"},"
               "{\"id\":\"f\",\"rating\":1050,\"team\":\"B\"}],\"mode\":\"rebalance\"}");
    /* Θ 2400, the default before new pools took each round's own (docs/MODELS.md) */
    const char *run[] = {"evenodds", "split", "--theta", "2400", "--file", in, "--out", out,
                         NULL};
    assert_int_equal(e2e_run(run, NULL, err, sizeof err), 0);
    json_error_t jerr;
    json_t *j = json_load_file(out, 0, &jerr);
    assert_non_null(j);
    json_t *sp = json_object_get(j, "splits");
    assert_int_equal(json_array_size(sp), 2); /* k = 2 and 3 */
    json_t *k3 = json_array_get(sp, 1);
    assert_int_equal(json_integer_value(json_object_get(k3, "k")), 3);
    assert_int_equal(json_integer_value(json_object_get(k3, "gap")), 0);
    assert_int_equal(json_integer_value(json_object_get(k3, "epsilon")), 96);
    assert_true(json_is_true(json_object_get(k3, "exact")));
    json_t *moves = json_object_get(k3, "moves");
    assert_int_equal(json_array_size(moves), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(moves, 0), "id")), "a");
    assert_string_equal(json_string_value(json_object_get(json_array_get(moves, 1), "id")), "f");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(k3, "terms"), "moves")),
                     2);
    assert_int_equal(json_integer_value(json_object_get(k3, "spread_epsilon")), 1);
    assert_true(json_equal(json_object_get(k3, "bound"), json_object_get(k3, "terms")));
    json_decref(j);

    write_text(bad,
               "{\"players\":[{\"id\":\"a\",\"rating\":1,\"lock\":\"C\"},{\"id\":\"b\",\"rating\":2}]}");
    const char *run_bad[] = {"evenodds", "split", "--file", bad, NULL};
    assert_int_equal(e2e_run(run_bad, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "\"players[0].lock\": expected \"A\", \"B\" or null"));

    write_text(in,
               "{\"players\":[{\"id\":\"a\",\"rating\":1000},{\"id\":\"b\",\"rating\":1100},"
               "{\"id\":\"c\",\"rating\":1200},{\"id\":\"d\",\"rating\":900}]}");
    assert_int_equal(e2e_run(run, NULL, err, sizeof err), 0);
    j = json_load_file(out, 0, &jerr);
    assert_non_null(j);
    json_t *k2 = json_array_get(json_object_get(j, "splits"), 0);
    assert_int_equal(json_integer_value(json_object_get(k2, "gap")), 0);
    assert_null(json_object_get(k2, "moves"));
    json_decref(j);

    const char *help[] = {"evenodds", "split", "--help", NULL};
    assert_int_equal(e2e_run(help, NULL, err, sizeof err), 0);
    e2e_cleanup(&s);
}

static size_t count_of(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* `evenodds eval` (docs/EVAL.md) on a generated log of 600 rounds (4 % stalemates) for two
 * models: the JSON report is consistent with itself (bins and experience groups add up to the
 * counted rounds, draws to the draws, the tight set is ceil(counted / 5)) and with `replay`
 * (same log loss, Brier and accuracy on the same file and --eval-from); the SVG has the
 * diagonal and the model's curve as its two polylines and one dot per non-empty bin. A bad
 * line exits 1 naming the line and the field; a bad option exits 2. */
static void test_eval(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char log[400], out[400], svg[400], rep[400], bad[400], args[1600], err[1024];
    e2e_path(&s, "eval.jsonl", log, sizeof log);
    e2e_path(&s, "eval.json", out, sizeof out);
    e2e_path(&s, "eval.svg", svg, sizeof svg);
    e2e_path(&s, "replay.json", rep, sizeof rep);
    e2e_path(&s, "eval_bad.jsonl", bad, sizeof bad);
    write_log(log, 600, 11);

    static const char *const models[] = {"synelo", "trueskill"};
    double logloss[2];
    for (int mi = 0; mi < 2; mi++) {
        const char *model = models[mi];
        snprintf(args, sizeof args, "eval --model %s --eval-from 0.25 --format json --plot %s %s",
                 model, svg, log);
        assert_int_equal(e2e_run_stdout(args, out), 0);
        json_error_t jerr;
        json_t *j = json_load_file(out, 0, &jerr);
        if (!j)
            fail_msg("eval --model %s: %s", model, jerr.text);
        assert_string_equal(json_string_value(json_object_get(j, "model")), model);
        assert_int_equal(json_integer_value(json_object_get(j, "rounds")), 600);
        json_int_t scored = json_integer_value(json_object_get(j, "scored"));
        json_int_t draws = json_integer_value(json_object_get(j, "draws"));
        json_int_t counted = json_integer_value(json_object_get(j, "counted"));
        assert_int_equal(scored, 600 - 150); /* floor(0.25 · 600) rounds before scoring */
        assert_true(draws > 0);              /* the generator's stalemates */
        assert_int_equal(counted + draws, scored);

        json_t *bins = json_object_get(json_object_get(j, "calibration"), "bins");
        assert_int_equal(json_array_size(bins), 10);
        json_int_t sum = 0;
        size_t nonempty = 0;
        for (size_t b = 0; b < 10; b++) {
            json_t *bin = json_array_get(bins, b);
            json_int_t c = json_integer_value(json_object_get(bin, "count"));
            sum += c;
            if (c == 0) {
                assert_true(json_is_null(json_object_get(bin, "mean_p")));
                continue;
            }
            nonempty++;
            double p = json_real_value(json_object_get(bin, "mean_p"));
            assert_true(p >= (double)b / 10 - 1e-9 && p <= (double)(b + 1) / 10 + 1e-9);
            double w = json_real_value(json_object_get(bin, "win_rate"));
            assert_true(w >= 0.0 && w <= 1.0);
        }
        assert_int_equal(sum, counted);

        json_t *exp = json_object_get(j, "experience");
        assert_int_equal(json_array_size(exp), 3);
        json_int_t ecount = 0, edraws = 0;
        for (size_t g = 0; g < 3; g++) {
            ecount += json_integer_value(json_object_get(json_array_get(exp, g), "count"));
            edraws += json_integer_value(json_object_get(json_array_get(exp, g), "draws"));
        }
        assert_int_equal(ecount, counted);
        assert_int_equal(edraws, draws);

        json_t *tight = json_object_get(j, "tight");
        assert_int_equal(json_integer_value(json_object_get(tight, "count")), (counted + 4) / 5);
        assert_true(json_real_value(json_object_get(tight, "max_margin")) >= 0.0);

        /* Same predictions as replay, so the same figures, printed alike. */
        snprintf(args, sizeof args, "replay --model %s --eval-from 0.25 %s", model, log);
        assert_int_equal(e2e_run_stdout(args, rep), 0);
        json_t *r = json_load_file(rep, 0, &jerr);
        assert_non_null(r);
        static const char *const keys[] = {"logloss", "brier", "accuracy"};
        for (size_t k = 0; k < 3; k++) {
            double a = json_real_value(json_object_get(j, keys[k]));
            double b = json_real_value(json_object_get(r, keys[k]));
            if (a != b)
                fail_msg("model %s, %s: eval %.17g, replay %.17g", model, keys[k], a, b);
        }
        logloss[mi] = json_real_value(json_object_get(j, "logloss"));
        assert_true(logloss[mi] > 0.0 && logloss[mi] < 1.0);
        json_decref(r);
        json_decref(j);

        size_t len = 0;
        char *text = e2e_slurp(svg, &len);
        assert_true(len > 4 && strncmp(text, "<svg", 4) == 0);
        assert_non_null(strstr(text, "</svg>\n"));
        assert_int_equal(count_of(text, "<polyline"), 2);
        assert_int_equal(count_of(text, "<circle"), nonempty);
        assert_int_equal(count_of(text, "<text"), count_of(text, "</text>"));
        free(text);
    }
    assert_true(logloss[0] != logloss[1]); /* --model is honoured */

    /* --format table: the aligned text. */
    snprintf(args, sizeof args, "eval --format table %s", log);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    size_t tlen = 0;
    char *table = e2e_slurp(out, &tlen);
    assert_non_null(strstr(table, "tightest 20 %"));
    assert_non_null(strstr(table, "[0.9, 1.0]"));
    free(table);

    /* A bad second line: exit 1, the message names the file's line and the field. */
    write_text(bad,
               "{\"id\":\"r1\",\"winner\":\"A\",\"A\":[\"a\"],\"B\":[\"b\"]}\n"
               "{\"id\":\"r2\",\"winner\":\"C\",\"A\":[\"a\"],\"B\":[\"b\"]}\n");
    const char *bad_argv[] = {"evenodds", "eval", "--format", "json", bad, NULL};
    assert_int_equal(e2e_run(bad_argv, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "eval_bad.jsonl:2:"));
    assert_non_null(strstr(err, "\"winner\""));
    const char *fmt_argv[] = {"evenodds", "eval", "--format", "yaml", log, NULL};
    assert_int_equal(e2e_run(fmt_argv, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "--format"));
    const char *help[] = {"evenodds", "eval", "--help", NULL};
    assert_int_equal(e2e_run(help, NULL, err, sizeof err), 0);
    e2e_cleanup(&s);
}

/* `evenodds sim` (docs/SIM.md): the rounds it writes are a log `evenodds replay` accepts, with
 * every player who played rated; the same arguments give the same files byte for byte, another
 * seed other ones; bad arguments exit 2. */
static void test_sim(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char ra[400], rb[400], rc[400], ta[400], tb[400], ratings[400], err[2048];
    e2e_path(&s, "sim_a.jsonl", ra, sizeof ra);
    e2e_path(&s, "sim_b.jsonl", rb, sizeof rb);
    e2e_path(&s, "sim_c.jsonl", rc, sizeof rc);
    e2e_path(&s, "sim_a.json", ta, sizeof ta);
    e2e_path(&s, "sim_b.json", tb, sizeof tb);
    e2e_path(&s, "sim_ratings.jsonl", ratings, sizeof ratings);
    const char *run_a[] = {"evenodds", "sim", "--seed", "5", "--rounds", "300", "--players",
                           "60", "--team-min", "2", "--team-max", "8", "--model", "trueskill",
                           "--partial", "200", "--drift", "1", "--arrivals", "50",
                           "--departures", "50", "--report-every", "100", "--format", "json",
                           "--rounds-out", ra, "--truth-out", ta, NULL};
    assert_int_equal(e2e_run(run_a, NULL, err, sizeof err), 0);
    const char *run_b[] = {"evenodds", "sim", "--seed", "5", "--rounds", "300", "--players",
                           "60", "--team-min", "2", "--team-max", "8", "--model", "trueskill",
                           "--partial", "200", "--drift", "1", "--arrivals", "50",
                           "--departures", "50", "--report-every", "100", "--format", "json",
                           "--rounds-out", rb, "--truth-out", tb, NULL};
    assert_int_equal(e2e_run(run_b, NULL, err, sizeof err), 0);
    size_t la, lb, lc;
    char *a = e2e_slurp(ra, &la), *b = e2e_slurp(rb, &lb);
    assert_true(la > 0);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    size_t lines = 0;
    for (size_t i = 0; i < la; i++)
        lines += a[i] == '\n';
    assert_int_equal(lines, 300);
    assert_non_null(strstr(a, "\"joined\":")); /* partial play is written */
    free(b);
    char *x = e2e_slurp(ta, &la), *y = e2e_slurp(tb, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);

    const char *run_c[] = {"evenodds", "sim", "--seed", "6", "--rounds", "300", "--players",
                           "60", "--team-min", "2", "--team-max", "8", "--model", "trueskill",
                           "--partial", "200", "--drift", "1", "--arrivals", "50",
                           "--departures", "50", "--rounds-out", rc, NULL};
    assert_int_equal(e2e_run(run_c, NULL, err, sizeof err), 0);
    char *c = e2e_slurp(rc, &lc);
    assert_true(lc != la || memcmp(a, c, lc) != 0);
    free(c);
    free(a);

    const char *rep[] = {"evenodds", "replay", "--model", "trueskill", "--ratings-out",
                         ratings, ra, NULL};
    assert_int_equal(e2e_run(rep, NULL, err, sizeof err), 0);
    json_error_t jerr;
    json_t *truth = json_load_file(ta, 0, &jerr);
    assert_non_null(truth);
    json_t *players = json_object_get(truth, "players");
    size_t played = 0, idx;
    json_t *p;
    json_array_foreach(players, idx, p) {
        played += json_integer_value(json_object_get(p, "rounds")) > 0;
    }
    assert_true(json_array_size(players) >= 60);
    assert_int_equal(json_array_size(json_object_get(truth, "maps")), 8);
    json_decref(truth);
    char *r = e2e_slurp(ratings, &la);
    size_t rated = 0;
    for (size_t i = 0; i < la; i++)
        rated += r[i] == '\n';
    free(r);
    assert_int_equal(rated, played);

    const char *bad[] = {"evenodds", "sim", "--balancer", "greedy", NULL};
    assert_int_equal(e2e_run(bad, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "--balancer"));
    const char *both[] = {"evenodds", "sim", "--team", "4", "--team-max", "6", NULL};
    assert_int_equal(e2e_run(both, NULL, err, sizeof err), 2);
    const char *help[] = {"evenodds", "sim", "--help", NULL};
    assert_int_equal(e2e_run(help, NULL, err, sizeof err), 0);
    e2e_cleanup(&s);
}

/* `evenodds mmsim` (docs/MATCHMAKING.md, "The matcher in a simulated day") on a small world:
 * one JSON line with the three policies and their figures, the same bytes twice, parties never
 * split; bad options exit 2 naming the option. */
static void test_mmsim(void **state)
{
    (void)state;
    e2e_server s; /* only for its temporary directory */
    assert_int_equal(e2e_init(&s), 0);
    char out[2][400], errf[400], line[2400];
    e2e_path(&s, "mmsim_1.json", out[0], sizeof out[0]);
    e2e_path(&s, "mmsim_2.json", out[1], sizeof out[1]);
    e2e_path(&s, "mmsim.err", errf, sizeof errf);
    for (int i = 0; i < 2; i++) {
        snprintf(line, sizeof line,
                 "'%s' mmsim --seed 3 --team 3 --online 60 --population 400 --history 40 "
                 "--instances 4 --warmup 1800 --duration 3600 > '%s' 2> '%s'",
                 getenv("EO_BIN"), out[i], errf);
        int rc = system(line);
        assert_true(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
    }
    size_t la, lb;
    char *a = e2e_slurp(out[0], &la), *b = e2e_slurp(out[1], &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    assert_true(la > 0 && a[la - 1] == '\n' && strchr(a, '\n') == a + la - 1); /* one line */
    json_error_t jerr;
    json_t *j = json_loads(a, 0, &jerr);
    assert_non_null(j);
    json_t *pol = json_object_get(j, "policies");
    assert_int_equal(json_array_size(pol), 3);
    const char *names[] = {"ours", "fcfs", "fixed"};
    const char *keys[] = {"matches", "wait_p50_s", "wait_p95_s", "wait_p99_s", "abandoned",
                          "stomps", "p_true_dev_mean", "rating_spread_mean", "parties_split",
                          "instance_utilisation"};
    for (size_t i = 0; i < 3; i++) {
        json_t *p = json_array_get(pol, i);
        assert_string_equal(json_string_value(json_object_get(p, "policy")), names[i]);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
            if (!json_is_number(json_object_get(p, keys[k])))
                fail_msg("%s: no number %s", names[i], keys[k]);
        assert_int_equal(json_integer_value(json_object_get(p, "parties_split")), 0);
        assert_true(json_integer_value(json_object_get(p, "matches")) > 0);
    }
    json_decref(j);
    free(a);
    free(b);
    const char *bad[] = {"evenodds", "mmsim", "--policy", "random", NULL};
    char err[2048];
    assert_int_equal(e2e_run(bad, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "--policy"));
    const char *few[] = {"evenodds", "mmsim", "--online", "300", "--population", "500", NULL};
    assert_int_equal(e2e_run(few, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "population"));
    const char *help[] = {"evenodds", "mmsim", "--help", NULL};
    assert_int_equal(e2e_run(help, NULL, err, sizeof err), 0);
    e2e_cleanup(&s);
}


/* `evenodds fit` (docs/MODELS.md "Whole-history refit") on a simulated world: converges, writes one rating per player
 * sorted by id, gives the same bytes twice, and with --holdout reports the refit beside the
 * online ratings (the refit's held-out log loss below online Elo's, frozen). A bad option exits
 * 2 naming it; a bad log line exits 1 naming the line and the field. */
static void test_fit(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], out1[400], out2[400], r1[400], r2[400], args[1600], err[1024];
    e2e_path(&s, "fit_world.jsonl", world, sizeof world);
    e2e_path(&s, "fit1.json", out1, sizeof out1);
    e2e_path(&s, "fit2.json", out2, sizeof out2);
    e2e_path(&s, "fit_r1.jsonl", r1, sizeof r1);
    e2e_path(&s, "fit_r2.jsonl", r2, sizeof r2);
    const char *sim[] = {"evenodds", "sim", "--seed", "4", "--rounds", "3000", "--players",
                         "200", "--balancer", "random", "--rounds-out", world, NULL};
    assert_int_equal(e2e_run(sim, NULL, err, sizeof err), 0);
    /* Elo as pools were before new pools' defaults (docs/MODELS.md), whose online ratings
     * the static refit beats */
#define ELO_OLD "--param team=mean --param k_new=40 --param k=20 --param k_high=10 " \
                "--param presence=off"
    snprintf(args, sizeof args,
             "fit --model elo " ELO_OLD " --param bias=map --holdout 0.2 --format json "
             "--ratings-out '%s' '%s' 2>/dev/null", r1, world);
    assert_int_equal(e2e_run_stdout(args, out1), 0);
    snprintf(args, sizeof args,
             "fit --model elo " ELO_OLD " --param bias=map --holdout 0.2 --format json "
             "--ratings-out '%s' '%s' 2>/dev/null", r2, world);
#undef ELO_OLD
    assert_int_equal(e2e_run_stdout(args, out2), 0);
    size_t l1, n1, n2;
    char *a = e2e_slurp(r1, &n1), *b = e2e_slurp(r2, &n2), *save = NULL;
    assert_int_equal(n1, n2);
    assert_memory_equal(a, b, n1);
    free(b);
    /* One object per player, ids ascending, every one with a rating and rounds. */
    size_t players = 0;
    char prev[128] = "";
    for (char *line = strtok_r(a, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        assert_non_null(o);
        const char *id = json_string_value(json_object_get(o, "id"));
        assert_non_null(id);
        assert_true(strcmp(prev, id) < 0);
        snprintf(prev, sizeof prev, "%s", id);
        assert_true(json_is_real(json_object_get(o, "rating")));
        assert_null(json_object_get(o, "sigma"));
        assert_true(json_integer_value(json_object_get(o, "rounds")) >= 0);
        json_decref(o);
        players++;
    }
    free(a);
    a = e2e_slurp(out1, &l1);
    json_error_t je;
    json_t *j = json_loads(a, 0, &je);
    assert_non_null(j);
    free(a);
    assert_true(json_is_true(json_object_get(j, "converged")));
    assert_int_equal(json_integer_value(json_object_get(j, "rounds")), 3000);
    assert_int_equal(json_integer_value(json_object_get(j, "train_rounds")), 2400);
    assert_int_equal(json_integer_value(json_object_get(j, "players")), players);
    json_t *h = json_object_get(j, "holdout");
    double refit = json_number_value(json_object_get(json_object_get(h, "refit"), "logloss"));
    double frozen =
        json_number_value(json_object_get(json_object_get(h, "online_frozen"), "logloss"));
    if (!(refit < frozen))
        fail_msg("refit %g does not beat online frozen %g", refit, frozen);
    assert_string_equal(json_string_value(json_object_get(j, "method")), "map");
    assert_true(json_is_number(
        json_object_get(json_object_get(h, "refit_continuing"), "logloss")));
    json_decref(j);
    /* TrueSkill is smoothed by default, its file has mu and sigma; --method map gives the
     * static fit, with other values. */
    snprintf(args, sizeof args, "fit --model trueskill --holdout 0.2 --format json "
             "--ratings-out '%s' '%s' 2>/dev/null", r1, world);
    assert_int_equal(e2e_run_stdout(args, out1), 0);
    a = e2e_slurp(r1, &n1);
    assert_non_null(strstr(a, "\"mu\":"));
    assert_non_null(strstr(a, "\"sigma\":"));
    snprintf(args, sizeof args, "fit --model trueskill --method map --holdout 0.2 --format json "
             "--ratings-out '%s' '%s' 2>/dev/null", r2, world);
    assert_int_equal(e2e_run_stdout(args, out2), 0);
    b = e2e_slurp(r2, &n2);
    assert_true(n1 != n2 || memcmp(a, b, n1) != 0);
    free(a);
    free(b);
    const char *outs[] = {out1, out2}, *methods[] = {"smooth", "map"};
    for (int k = 0; k < 2; k++) {
        a = e2e_slurp(outs[k], &l1);
        j = json_loads(a, 0, &je);
        assert_non_null(j);
        free(a);
        assert_string_equal(json_string_value(json_object_get(j, "method")), methods[k]);
        assert_true(json_is_true(json_object_get(j, "converged")));
        h = json_object_get(j, "holdout");
        const char *rows[] = {"refit", "refit_continuing", "online_frozen", "online_continuing"};
        for (int i = 0; i < 4; i++) {
            double ll = json_number_value(json_object_get(json_object_get(h, rows[i]), "logloss"));
            assert_true(ll > 0.0 && ll < 1.0);
        }
        json_decref(j);
    }
    /* Bad usage exits 2 naming the option. */
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"--sweeps 0", "--sweeps"},
        {"--tol x", "--tol"},
        {"--holdout 0.95", "--holdout"},
        {"--model hive --prior 20", "--prior: the hive model's Gamma prior"},
        {"--format xml", "--format: expected table or json"},
        {"--method x", "--method: expected map or smooth"},
        {"--model elo --method smooth", "--method smooth: only trueskill and wenglin"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        e2e_expect_usage("fit", bad[i].args, world, out1, bad[i].says);
    /* A bad third line exits 1 naming the line and the field. */
    char badlog[400];
    e2e_path(&s, "fit_bad.jsonl", badlog, sizeof badlog);
    write_text(badlog, "{\"id\":\"r1\",\"winner\":\"A\",\"A\":[\"x\"],\"B\":[\"y\"]}\n"
                       "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"x\"],\"B\":[\"y\"]}\n"
                       "{\"id\":\"r3\",\"winner\":\"C\",\"A\":[\"x\"],\"B\":[\"y\"]}\n");
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "'%s' fit '%s' 2> '%s' > /dev/null", getenv("EO_BIN"), badlog,
             out1);
    int rc = system(cmd);
    assert_true(rc != -1 && WIFEXITED(rc));
    char *msg = e2e_slurp(out1, &n1);
    if (WEXITSTATUS(rc) != 1 || strstr(msg, ":3:") == NULL || strstr(msg, "winner") == NULL)
        fail_msg("fit on a bad line: exit %d, %s", WEXITSTATUS(rc), msg);
    free(msg);
    e2e_cleanup(&s);
}

/* The oracle (`eval --truth`, `fit --truth`, docs/EVAL.md) on a simulated world with partial play
 * and map bias: eval's oracle Brier over every round is the sim's own brier_true (the same
 * P_true, bit for bit, to the 10 digits printed), fit's oracle on the held-out rounds is eval's
 * from the same round on; --no-weights changes a weighted model's figures but never the
 * oracle's, and changes nothing on a log without partial play. A malformed truth file exits 1
 * naming its field; --truth on fit without --holdout is bad usage. */
static double json_path_num(const char *text, const char *a, const char *b)
{
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    json_t *v = json_object_get(j, a);
    if (b != NULL)
        v = json_object_get(v, b);
    assert_true(json_is_number(v));
    double x = json_number_value(v);
    json_decref(j);
    return x;
}

static void test_truth_oracle(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], truth[400], flat[400], flat_truth[400], out[400], args[1600], err[1024];
    e2e_path(&s, "oracle_world.jsonl", world, sizeof world);
    e2e_path(&s, "oracle_truth.json", truth, sizeof truth);
    e2e_path(&s, "oracle_flat.jsonl", flat, sizeof flat);
    e2e_path(&s, "oracle_flat.json", flat_truth, sizeof flat_truth);
    e2e_path(&s, "oracle_out.json", out, sizeof out);
    snprintf(args, sizeof args,
             "sim --seed 9 --rounds 800 --players 60 --team 4 --balancer random --partial 300 "
             "--bias 0.6 --skill-mean 100 --report-every 0 --format json --rounds-out '%s' "
             "--truth-out '%s'", world, truth);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    size_t n;
    char *text = e2e_slurp(out, &n);
    double brier_true = json_path_num(text, "brier_true", NULL);
    free(text);

    snprintf(args, sizeof args, "eval --model trueskill --truth '%s' --format json '%s'", truth,
             world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    text = e2e_slurp(out, &n);
    double oracle = json_path_num(text, "oracle", "brier");
    double counted = json_path_num(text, "oracle", "counted");
    double model_ll = json_path_num(text, "logloss", NULL);
    double oracle_ll = json_path_num(text, "oracle", "logloss");
    assert_true(counted == json_path_num(text, "counted", NULL));
    free(text);
    if (fabs(oracle - brier_true) > 1e-9)
        fail_msg("eval's oracle Brier %.10g, sim's %.10g", oracle, brier_true);
    if (!(oracle_ll < model_ll))
        fail_msg("the oracle (%g) should beat default TrueSkill (%g)", oracle_ll, model_ll);

    /* --no-weights: the model's figures move, the oracle's do not. */
    snprintf(args, sizeof args,
             "eval --model trueskill --no-weights --truth '%s' --format json '%s'", truth, world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    text = e2e_slurp(out, &n);
    assert_true(json_path_num(text, "oracle", "logloss") == oracle_ll);
    assert_true(json_path_num(text, "logloss", NULL) != model_ll);
    free(text);

    /* fit: the oracle on the last 25 %, as eval scores it from 0.75 on. */
    snprintf(args, sizeof args,
             "fit --model hive --holdout 0.25 --truth '%s' --format json '%s' 2>/dev/null",
             truth, world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    text = e2e_slurp(out, &n);
    json_error_t je;
    json_t *j = json_loads(text, 0, &je);
    assert_non_null(j);
    json_t *orc = json_object_get(json_object_get(j, "holdout"), "oracle");
    double fit_ll = json_number_value(json_object_get(orc, "logloss"));
    json_int_t fit_n = json_integer_value(json_object_get(orc, "rounds"));
    json_decref(j);
    free(text);
    snprintf(args, sizeof args,
             "eval --model hive --eval-from 0.75 --truth '%s' --format json '%s'", truth, world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    text = e2e_slurp(out, &n);
    assert_true(json_path_num(text, "oracle", "logloss") == fit_ll);
    assert_true(json_path_num(text, "oracle", "counted") == (double)fit_n);
    free(text);

    /* Without partial play --no-weights is a no-op: the same bytes. */
    const char *sim_flat[] = {"evenodds", "sim", "--seed", "9", "--rounds", "300", "--players",
                              "60", "--team", "4", "--balancer", "random", "--partial", "0",
                              "--report-every", "0", "--rounds-out", flat, "--truth-out",
                              flat_truth, NULL};
    assert_int_equal(e2e_run(sim_flat, NULL, err, sizeof err), 0);
    char out2[400];
    e2e_path(&s, "oracle_out2.json", out2, sizeof out2);
    snprintf(args, sizeof args, "eval --model hive --truth '%s' --format json '%s'", flat_truth,
             flat);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    snprintf(args, sizeof args,
             "eval --model hive --no-weights --truth '%s' --format json '%s'", flat_truth, flat);
    assert_int_equal(e2e_run_stdout(args, out2), 0);
    size_t n2;
    char *a = e2e_slurp(out, &n), *b = e2e_slurp(out2, &n2);
    assert_int_equal(n, n2);
    assert_memory_equal(a, b, n);
    free(a);
    free(b);

    /* Malformed truth files exit 1 naming the file and the field; a player the truth does not
     * know names the line and the member. */
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"{\"maps\":[],\"players\":[]}", "scale: required field missing"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"p000001\",\"skill\":\"x\"}]}",
         "players[0].skill: expected a number"},
        {"{\"scale\":1,\"maps\":[],\"players\":[],\"extra\":1}", "extra: unknown field"},
        {"{\"scale\":1,", "invalid JSON"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"p000001\",\"skill\":1}]}",
         "is not in the truth file"},
    };
    char badtruth[400];
    e2e_path(&s, "oracle_bad.json", badtruth, sizeof badtruth);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(badtruth, bad[i].text);
        for (int cmd = 0; cmd < 2; cmd++) {
            char line[1600];
            snprintf(line, sizeof line, "'%s' %s --truth '%s' '%s' 2> '%s' > /dev/null",
                     getenv("EO_BIN"), cmd == 0 ? "eval" : "fit --holdout 0.5", badtruth, flat,
                     out);
            int rc = system(line);
            assert_true(rc != -1 && WIFEXITED(rc));
            char *msg = e2e_slurp(out, &n);
            if (WEXITSTATUS(rc) != 1 || strstr(msg, bad[i].says) == NULL ||
                strstr(msg, "--truth") == NULL)
                fail_msg("%s with truth %s: exit %d, %s", cmd == 0 ? "eval" : "fit",
                         bad[i].text, WEXITSTATUS(rc), msg);
            free(msg);
        }
    }
    snprintf(args, sizeof args, "fit --truth '%s' '%s' 2> '%s'", flat_truth, flat, out2);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 2);
    a = e2e_slurp(out2, &n);
    assert_non_null(strstr(a, "needs --holdout"));
    free(a);
    char cmdline[1600];
    snprintf(cmdline, sizeof cmdline, "'%s' eval --truth /nonexistent/t.json '%s' 2> '%s'",
             getenv("EO_BIN"), flat, out2);
    int rc = system(cmdline);
    assert_true(rc != -1 && WIFEXITED(rc) && WEXITSTATUS(rc) == 1);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sim),
        cmocka_unit_test(test_mmsim),
        cmocka_unit_test(test_service_equals_replay),
        cmocka_unit_test(test_import_export),
        cmocka_unit_test(test_max_rounds_move),
        cmocka_unit_test(test_import_failure_leaves_nothing),
        cmocka_unit_test(test_every_model),
        cmocka_unit_test(test_hive_lookups),
        cmocka_unit_test(test_autobalance_triggers),
        cmocka_unit_test(test_split_balancer),
        cmocka_unit_test(test_eval),
        cmocka_unit_test(test_fit),
        cmocka_unit_test(test_truth_oracle),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
