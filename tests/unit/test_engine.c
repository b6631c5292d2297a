/* The engine over a real SQLite store in a temporary file.
 * Expected values: the first round of two new players is worked out by hand from the seed's
 * F1-F5 (equal sums give P = 0.5; an empty window gives C = 1 and R = R0 gives G = 1, so
 * K = K_max = 72 and the winner moves by 72 * (1 - 0.5) = 36); the rest are round trips (what
 * the engine answered must be what the store and a fold of the log give back) and the error
 * statuses and codes documented in eo_engine.h. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"
#include "evenodds/eo_synelo.h"
#include "gen.h"
#include "store_util.h"

#define NOW 1763900000

typedef struct fixture {
    char path[64];
    eo_engine *e;
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    snprintf(f->path, sizeof f->path, "/tmp/eo_test_engine_XXXXXX");
    int fd = mkstemp(f->path);
    if (fd < 0) {
        free(f);
        return -1;
    }
    close(fd);
    f->e = test_engine_open(f->path, 0);
    if (f->e == NULL)
        return -1;
    eo_engine_error err;
    if (eo_engine_pool_create(f->e, "arena", "synelo", NULL, NOW, &err) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    eo_engine_close(f->e);
    test_store_remove(f->path);
    free(f);
    return 0;
}

static void reopen(fixture *f)
{
    eo_engine_close(f->e);
    f->e = test_engine_open(f->path, 0);
    assert_non_null(f->e);
}

static json_t *js(const char *text)
{
    json_error_t jerr;
    json_t *o = json_loads(text, 0, &jerr);
    if (o == NULL)
        fail_msg("bad test JSON: %s", jerr.text);
    return o;
}

/* Rates @p text in pool @p pool; returns the engine's code, the answer in *resp (or NULL). */
static int rate(eo_engine *e, const char *pool, const char *text, char **resp, int *replayed,
                eo_engine_error *err)
{
    json_t *o = js(text);
    int rc = eo_engine_round(e, pool, o, NOW, resp, replayed, err);
    json_decref(o);
    return rc;
}

static const char *ROUND1 =
    "{\"id\":\"r1\",\"winner\":\"A\",\"started_at\":1763800000,\"ended_at\":1763800391,"
    "\"A\":[\"a\"],\"B\":[\"b\"],\"extra\":{\"kept\":true}}";

static const char *ROUND1_ANSWER =
    "{\"round\":\"r1\",\"players\":["
    "{\"id\":\"a\",\"rating\":1036,\"delta\":36,\"expected\":0.5,\"k\":72,\"rounds\":1,"
    "\"visible\":false},"
    "{\"id\":\"b\",\"rating\":964,\"delta\":-36,\"expected\":0.5,\"k\":72,\"rounds\":1,"
    "\"visible\":false}]}";

static int64_t pool_id(eo_engine *e, const char *name)
{
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(eo_engine_store(e), name, &row), 0);
    int64_t id = row.id;
    eo_pool_row_free(&row);
    return id;
}

static int64_t round_count(eo_engine *e, const char *name)
{
    int64_t n = -1;
    assert_int_equal(eo_store_round_count(eo_engine_store(e), pool_id(e, name), &n), 0);
    return n;
}

static void expect_player(eo_engine *e, const char *pool, const char *id, int32_t rating,
                          uint32_t rounds)
{
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(eo_engine_pool(e, pool), id, NOW, &v), 0);
    assert_int_equal(v.display, rating);
    assert_int_equal(v.rounds, rounds);
    eo_player_row row;
    assert_int_equal(eo_store_player_get(eo_engine_store(e), pool_id(e, pool), id, &row), 0);
    assert_int_equal(row.rating, rating);
    assert_int_equal(row.rounds, rounds);
}

/* Rates @p text in @p pool and expects it rated (the answer is freed). */
static void rate_ok(eo_engine *e, const char *pool, const char *text)
{
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    if (rate(e, pool, text, &resp, &replayed, &err) != 0)
        fail_msg("%s: %d %s %s", text, err.status, err.code, err.message);
    free(resp);
}

/* Rates @p text in @p pool and expects @p rc with @p status and @p code, and no answer. */
static void rate_err(eo_engine *e, const char *pool, const char *text, int rc, int status,
                     const char *code, eo_engine_error *err)
{
    char *resp = NULL;
    int replayed = 0;
    assert_int_equal(rate(e, pool, text, &resp, &replayed, err), rc);
    assert_null(resp);
    assert_int_equal(err->status, status);
    assert_string_equal(err->code, code);
}

static void test_round_response(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = -1;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    assert_string_equal(resp, ROUND1_ANSWER);
    assert_int_equal(replayed, 0);
    free(resp);
    expect_player(f->e, "arena", "a", 1036, 1);
    expect_player(f->e, "arena", "b", 964, 1);
    eo_player_row row;
    assert_int_equal(eo_store_player_get(eo_engine_store(f->e), pool_id(f->e, "arena"), "a", &row),
                     0);
    assert_true(row.last_ended_at == 1763800391); /* the round's ended_at */
    /* the log holds the canonical record, unknown fields kept */
    char *body = NULL;
    assert_int_equal(eo_store_round_find(eo_engine_store(f->e), pool_id(f->e, "arena"), "r1",
                                         &body, NULL), 0);
    json_t *o = js(ROUND1);
    char *canon = NULL;
    assert_int_equal(eo_round_canonical(o, &canon), 0);
    assert_string_equal(body, canon);
    assert_non_null(strstr(body, "\"kept\":true"));
    json_decref(o);
    free(canon);
    free(body);
}

static void test_round_replayed(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    /* the same content with other key order and spacing */
    const char *again = "{ \"B\": [\"b\"], \"A\": [\"a\"], \"extra\": {\"kept\": true}, "
                        "\"ended_at\": 1763800391, \"started_at\": 1763800000, "
                        "\"winner\": \"A\", \"id\": \"r1\" }";
    assert_int_equal(rate(f->e, "arena", again, &resp, &replayed, &err), 0);
    assert_int_equal(replayed, 1);
    assert_string_equal(resp, ROUND1_ANSWER);
    free(resp);
    assert_true(round_count(f->e, "arena") == 1);
    expect_player(f->e, "arena", "a", 1036, 1); /* no second update */
}

static void test_round_conflict(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    const char *other = "{\"id\":\"r1\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", other, &resp, &replayed, &err), EO_ECONFLICT);
    assert_null(resp);
    assert_int_equal(err.status, 409);
    assert_string_equal(err.code, "round_conflict");
    assert_string_equal(err.field, "id");
    expect_player(f->e, "arena", "a", 1036, 1);
    assert_true(round_count(f->e, "arena") == 1);
}

static void test_unknown_pool_and_bad_round(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "nope", ROUND1, &resp, &replayed, &err), EO_ENOTFOUND);
    assert_int_equal(err.status, 404);
    assert_string_equal(err.code, "unknown_pool");
    const char *bad = "{\"id\":\"r9\",\"winner\":\"C\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", bad, &resp, &replayed, &err), EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.code, "invalid_round");
    assert_string_equal(err.field, "winner");
    const char *both = "{\"id\":\"r9\",\"winner\":\"A\",\"A\":[\"a\"],\"B\":[\"a\"]}";
    assert_int_equal(rate(f->e, "arena", both, &resp, &replayed, &err), EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_null(resp);
    assert_true(round_count(f->e, "arena") == 0);
    assert_int_equal(eo_pool_player_count(eo_engine_pool(f->e, "arena")), 0);
}

static void test_batch_commit(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(eo_engine_begin(f->e), 0);
    assert_int_equal(eo_engine_begin(f->e), EO_EINVAL);
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    /* the same id again inside the batch: a replay, then a conflict */
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    assert_int_equal(replayed, 1);
    assert_string_equal(resp, ROUND1_ANSWER);
    free(resp);
    const char *other = "{\"id\":\"r1\",\"winner\":\"draw\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", other, &resp, &replayed, &err), EO_ECONFLICT);
    /* a 409 does not spoil the batch */
    const char *r2 = "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"c\"],\"B\":[\"d\"]}";
    assert_int_equal(rate(f->e, "arena", r2, &resp, &replayed, &err), 0);
    free(resp);
    /* a reader sees nothing before the commit */
    eo_store *ro = NULL;
    char msg[256];
    assert_int_equal(eo_store_open(f->path, EO_STORE_READONLY, &ro, msg, sizeof msg), 0);
    int64_t n = -1, pid = pool_id(f->e, "arena");
    assert_int_equal(eo_store_round_count(ro, pid, &n), 0);
    assert_true(n == 0);
    assert_int_equal(eo_engine_commit(f->e), 0);
    assert_int_equal(eo_store_round_count(ro, pid, &n), 0);
    assert_true(n == 2);
    eo_player_row row;
    assert_int_equal(eo_store_player_get(ro, pid, "d", &row), 0);
    assert_int_equal(row.rating, 1036); /* r2 is r1 mirrored: B's new player wins, +36 */
    eo_store_close(ro);
    assert_int_equal(eo_engine_commit(f->e), EO_EINVAL); /* no batch open */
}

static void test_batch_rollback(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(eo_engine_begin(f->e), 0);
    const char *r2 = "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", r2, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(eo_engine_pool_create(f->e, "tmp", NULL, NULL, NOW, &err), 0);
    assert_non_null(eo_engine_pool(f->e, "tmp"));
    assert_int_equal(eo_engine_rollback(f->e), 0);
    /* back to the state after r1, in memory and in the store */
    expect_player(f->e, "arena", "a", 1036, 1);
    assert_true(round_count(f->e, "arena") == 1);
    assert_null(eo_engine_pool(f->e, "tmp"));
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(eo_engine_store(f->e), "tmp", &row), EO_ENOTFOUND);
}

/* An insert the store refuses (an SQL trigger added behind the engine's back) fails the whole
 * batch, and memory goes back to what the store holds. */
static void add_failing_trigger(const char *path)
{
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TRIGGER boom BEFORE INSERT ON log "
                                  "WHEN NEW.round_id = 'boom' "
                                  "BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
}

static void test_storage_failure(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    add_failing_trigger(f->path);
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    /* outside a batch: the one update fails, the pool is as before */
    const char *boom = "{\"id\":\"boom\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", boom, &resp, &replayed, &err), EO_EIO);
    assert_int_equal(err.status, 500);
    expect_player(f->e, "arena", "a", 1036, 1);
    /* inside a batch: the earlier answer is void, later calls fail, the commit fails */
    assert_int_equal(eo_engine_begin(f->e), 0);
    const char *r2 = "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", r2, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(rate(f->e, "arena", boom, &resp, &replayed, &err), EO_EIO);
    const char *r3 = "{\"id\":\"r3\",\"winner\":\"A\",\"A\":[\"c\"],\"B\":[\"d\"]}";
    assert_int_equal(rate(f->e, "arena", r3, &resp, &replayed, &err), EO_EIO);
    assert_int_equal(eo_engine_commit(f->e), EO_EIO);
    expect_player(f->e, "arena", "a", 1036, 1);
    assert_true(round_count(f->e, "arena") == 1);
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "arena"), "c", NOW, &v), EO_ENOTFOUND);
    /* and the engine goes on working */
    assert_int_equal(rate(f->e, "arena", r2, &resp, &replayed, &err), 0);
    free(resp);
    /* r2 by hand (F1-F5): P_A = 1 / (1 + e^(-(1036 - 964) / 2400)) = 0.507499; one window entry
     * so C = 1; G = exp(-36^2 / (2 * 400^2)) = 0.995958 for both, K = 2 + 70 G = 71.7171;
     * a: 1036 + 71.7171 * (0 - 0.507499) = 999.60 -> 1000; b: 964 + 71.7171 * 0.507499 =
     * 1000.40 -> 1000 (checked with a short Python script, not with our code). */
    expect_player(f->e, "arena", "a", 1000, 2);
    expect_player(f->e, "arena", "b", 1000, 2);
}

typedef struct snap {
    size_t n;
    char line[4096][96];
} snap;

static int snap_one(void *ctx, const char *id, const eo_rating_view *v)
{
    snap *s = ctx;
    if (s->n >= 4096)
        return -1;
    snprintf(s->line[s->n++], sizeof s->line[0], "%s %d %u %d %lld", id, (int)v->display,
             (unsigned)v->rounds, (int)v->visible, (long long)v->last_ended_at);
    return 0;
}

static void take_snap(eo_engine *e, snap *s)
{
    s->n = 0;
    assert_int_equal(eo_pool_each_player(eo_engine_pool(e, "arena"), NOW, snap_one, s), 0);
}

/* Rates the generator's next round in pool "arena" (a new round, not a replay). */
static void rate_next(eo_engine *e, eo_gen *g)
{
    static char line[65536];
    eo_round r;
    eo_gen_next(g, &r);
    assert_true(eo_gen_jsonl(&r, line, sizeof line) > 0);
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(e, "arena", line, &resp, &replayed, &err), 0);
    assert_int_equal(replayed, 0);
    free(resp);
}

static void test_reopen_fold(void **state)
{
    fixture *f = *state;
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.players = 300;
    c.team_min = 2;
    c.team_max = 12;
    c.seed = 7;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&c, &g), 0);
    eo_engine_error err;
    for (int b = 0; b < 8; b++) {
        assert_int_equal(eo_engine_begin(f->e), 0);
        for (int i = 0; i < 50; i++)
            rate_next(f->e, g);
        /* admin edits between rounds, so the fold must replay them in place */
        assert_int_equal(eo_engine_set_rating(f->e, "arena", eo_gen_player_id(g, (uint32_t)b),
                                              1500 + b, -1, NOW, &err), 0);
        assert_int_equal(eo_engine_reset_player(f->e, "arena",
                                                eo_gen_player_id(g, (uint32_t)(b + 20)), NOW,
                                                &err), 0);
        assert_int_equal(eo_engine_commit(f->e), 0);
    }
    eo_gen_destroy(g);
    static snap live, folded;
    take_snap(f->e, &live);
    assert_true(live.n > 100);
    reopen(f);
    take_snap(f->e, &folded);
    assert_int_equal(live.n, folded.n);
    for (size_t i = 0; i < live.n; i++)
        assert_string_equal(live.line[i], folded.line[i]);
    eo_pool_quality q;
    eo_pool_get_quality(eo_engine_pool(f->e, "arena"), NOW, &q);
    assert_true(q.rounds == 400);
}

typedef struct kinds {
    int n;
    int kind[8];
    char body[8][64];
} kinds;

static int collect_kind(void *ctx, const eo_log_entry *le)
{
    kinds *k = ctx;
    if (k->n >= 8)
        return -1;
    snprintf(k->body[k->n], sizeof k->body[0], "%s", le->body);
    k->kind[k->n++] = (int)le->kind;
    return 0;
}

static void test_set_reset(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "a", 1500, -1, NOW, &err), 0);
    expect_player(f->e, "arena", "a", 1500, 1); /* rounds are kept */
    assert_int_equal(eo_engine_reset_player(f->e, "arena", "b", NOW, &err), 0);
    expect_player(f->e, "arena", "b", 1000, 0); /* R0, no rounds */
    assert_int_equal(eo_engine_reset_player(f->e, "arena", "never-seen", NOW, &err), 0);
    /* range and target checks; R_min is 100 by default */
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "a", 99, -1, NOW, &err), EO_ERANGE);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.field, "rating");
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "a", EO_SYNELO_RATING_MAX + 1, -1, NOW,
                                          &err),
                     EO_ERANGE);
    assert_int_equal(eo_engine_set_rating(f->e, "nope", "a", 1500, -1, NOW, &err), EO_ENOTFOUND);
    assert_int_equal(err.status, 404);
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "bad\x01id", 1500, -1, NOW, &err),
                     EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_int_equal(eo_engine_reset_player(f->e, "nope", "a", NOW, &err), EO_ENOTFOUND);
    /* logged as edits in order: round, set, reset, reset */
    kinds k = {0};
    assert_int_equal(eo_store_log_each(eo_engine_store(f->e), pool_id(f->e, "arena"), 0,
                                       collect_kind, &k), 0);
    assert_int_equal(k.n, 4);
    assert_int_equal(k.kind[0], EO_LOG_ROUND);
    assert_int_equal(k.kind[1], EO_LOG_SET);
    assert_int_equal(k.kind[2], EO_LOG_RESET);
    assert_int_equal(k.kind[3], EO_LOG_RESET);
    assert_string_equal(k.body[1], "{\"player\":\"a\",\"rating\":1500}");
    reopen(f);
    expect_player(f->e, "arena", "a", 1500, 1);
    expect_player(f->e, "arena", "b", 1000, 0);
    assert_true(round_count(f->e, "arena") == 1);
}

/* What eo_engine_written_each() reports. */
typedef struct written {
    size_t n;
    char pool[8][16], id[8][16];
    bool deleted[8];
    double mu[8];
    size_t stop_at; /* returns 7 at this entry (0: never) */
} written;

static int collect_written(void *ctx, const char *pool, const char *id, const eo_player_row *row)
{
    written *w = ctx;
    assert_true(w->n < 8);
    snprintf(w->pool[w->n], sizeof w->pool[w->n], "%s", pool);
    snprintf(w->id[w->n], sizeof w->id[w->n], "%s", id);
    w->deleted[w->n] = row == NULL;
    w->mu[w->n] = row ? row->mu : -1;
    return ++w->n == w->stop_at ? 7 : 0;
}

/* The rows a committed batch wrote, in order, as the store holds them; nothing inside a batch
 * or after one that did not commit; a call's own transaction counts as a batch. */
static void test_written_each(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    written w = {0};
    /* Off by default: nothing is kept. */
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "z", 1100, -1, NOW, &err), 0);
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), EO_EINVAL);
    assert_int_equal(w.n, 0);
    eo_engine_track_written(f->e, true);
    eo_engine_track_written(NULL, true);
    assert_int_equal(eo_engine_begin(f->e), 0);
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "a", 1500, -1, NOW, &err), 0);
    assert_int_equal(eo_engine_reset_player(f->e, "arena", "never-seen", NOW, &err), 0);
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), EO_EINVAL);
    assert_int_equal(eo_engine_commit(f->e), 0);
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), 0);
    assert_int_equal(w.n, 4);
    static const char *const ids[] = {"a", "b", "a", "never-seen"};
    static const double mus[] = {1036, 964, 1500, -1};
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(w.pool[i], "arena");
        assert_string_equal(w.id[i], ids[i]);
        assert_int_equal(w.deleted[i], i == 3);
        assert_true(w.mu[i] == mus[i]);
    }
    eo_player_row row;
    int64_t pid = pool_id(f->e, "arena");
    assert_int_equal(eo_store_player_get(eo_engine_store(f->e), pid, "a", &row), 0);
    assert_true(row.mu == 1500);
    assert_int_equal(eo_store_player_get(eo_engine_store(f->e), pid, "never-seen", &row),
                     EO_ENOTFOUND);
    /* fn's non-zero value stops the walk. */
    memset(&w, 0, sizeof w);
    w.stop_at = 2;
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), 7);
    assert_int_equal(w.n, 2);
    /* A batch that rolls back reports nothing, not even the one before. */
    assert_int_equal(eo_engine_begin(f->e), 0);
    const char *r2 = "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "arena", r2, &resp, &replayed, &err), 0);
    free(resp);
    assert_int_equal(eo_engine_rollback(f->e), 0);
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), EO_EINVAL);
    /* One call outside a batch: its own transaction. */
    memset(&w, 0, sizeof w);
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "b", 1200, -1, NOW, &err), 0);
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), 0);
    assert_int_equal(w.n, 1);
    assert_string_equal(w.id[0], "b");
    assert_true(w.mu[0] == 1200);
    assert_int_equal(eo_engine_written_each(NULL, collect_written, &w), EO_EINVAL);
    assert_int_equal(eo_engine_written_each(f->e, NULL, &w), EO_EINVAL);
}

/* A refit: values checked before anything is logged, one record per 2048 players, rounds
 * counts kept, rows rewritten, and a fold of the log gives the same pool. */
static void test_refit(void **state)
{
    fixture *f = *state;
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    assert_int_equal(rate(f->e, "arena", ROUND1, &resp, &replayed, &err), 0);
    free(resp);
    enum { N = 2100 };
    eo_refit_value *v = calloc(N, sizeof *v);
    assert_non_null(v);
    snprintf(v[0].id, sizeof v[0].id, "a");
    snprintf(v[1].id, sizeof v[1].id, "b");
    v[0].mean = 1200;
    v[1].mean = 99; /* below R_min: refused, nothing logged */
    v[0].sigma = v[1].sigma = -1;
    for (int i = 2; i < N; i++) {
        snprintf(v[i].id, sizeof v[i].id, "p%04d", i);
        v[i].mean = 1000 + i % 50;
        v[i].sigma = -1;
    }
    size_t records = 9;
    assert_int_equal(eo_engine_refit(f->e, "arena", 1, v, N, NOW, &records, &err), EO_ERANGE);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.field, "players[1]");
    assert_int_equal(records, 0);
    v[1].mean = 900.5; /* SynElo ratings are integers */
    assert_int_equal(eo_engine_refit(f->e, "arena", 1, v, N, NOW, NULL, &err), EO_ERANGE);
    v[1].mean = 900;
    assert_int_equal(eo_engine_refit(f->e, "nope", 1, v, N, NOW, NULL, &err), EO_ENOTFOUND);
    assert_int_equal(eo_engine_refit(f->e, "arena", 1, v, 0, NOW, NULL, &err), EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_int_equal(eo_engine_refit(f->e, "arena", 1, v, N, NOW, &records, &err), 0);
    assert_int_equal(records, 2);
    expect_player(f->e, "arena", "a", 1200, 1);
    expect_player(f->e, "arena", "b", 900, 1);
    expect_player(f->e, "arena", "p2099", 1049, 0);
    kinds k = {0};
    assert_int_equal(eo_store_log_each(eo_engine_store(f->e), pool_id(f->e, "arena"), 0,
                                       collect_kind, &k), 0);
    assert_int_equal(k.n, 3);
    assert_int_equal(k.kind[1], EO_LOG_REFIT);
    assert_int_equal(k.kind[2], EO_LOG_REFIT);
    assert_memory_equal(k.body[1], "{\"players\":[[\"a\",1200],[\"b\",900],", 33);
    static snap live, folded;
    take_snap(f->e, &live);
    reopen(f);
    take_snap(f->e, &folded);
    assert_int_equal(live.n, folded.n);
    assert_int_equal(live.n, N);
    for (size_t i = 0; i < live.n; i++)
        assert_string_equal(live.line[i], folded.line[i]);
    expect_player(f->e, "arena", "a", 1200, 1);

    /* A model with a deviation: sigma is set too, and reals survive the log bit for bit. */
    json_t *params = js("{}");
    assert_int_equal(eo_engine_pool_create(f->e, "ts", "trueskill", params, NOW, &err), 0);
    json_decref(params);
    v[0].mean = 27.123456789012345;
    v[0].sigma = 1.0 / 3.0;
    assert_int_equal(eo_engine_refit(f->e, "ts", 0, v, 1, NOW, NULL, &err), 0);
    reopen(f);
    eo_rating_view rv;
    assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "ts"), "a", NOW, &rv), 0);
    assert_true(rv.mu == 27.123456789012345);
    assert_true(rv.sigma == 1.0 / 3.0);
    free(v);
}

/* A re-tune's apply: the stored parameters change and the log is folded again under them
 * (rounds and admin edits in place), every row rewritten; a restart folds the same state; a
 * batch rolled back leaves the old parameters; a configuration the model refuses changes
 * nothing. */
static void test_pool_configure(void **state)
{
    fixture *f = *state;
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.players = 100;
    c.team_min = 3;
    c.team_max = 6;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&c, &g), 0);
    eo_engine_error err;
    for (int i = 0; i < 200; i++) {
        rate_next(f->e, g);
        if (i == 100)
            assert_int_equal(
                eo_engine_set_rating(f->e, "arena", eo_gen_player_id(g, 3), 1500, -1, NOW, &err),
                0);
    }
    char who[64];
    snprintf(who, sizeof who, "%s", eo_gen_player_id(g, 5));
    eo_gen_destroy(g);
    static snap before, after, folded;
    take_snap(f->e, &before);
    eo_pool_config cfg = *eo_pool_get_config(eo_engine_pool(f->e, "arena"));
    eo_round_error rerr;
    assert_int_equal(eo_model_config_set_number(&cfg.model, "theta", 1200, &rerr), 0);

    eo_pool_config refused = cfg;
    refused.bias.prior = -1; /* eo_pool_create() refuses it */
    assert_int_equal(eo_engine_pool_configure(f->e, "arena", &refused, NOW, NULL, &err), EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.field, "params");
    assert_int_equal(eo_engine_pool_configure(f->e, "nope", &cfg, NOW, NULL, &err), EO_ENOTFOUND);
    assert_int_equal(eo_engine_begin(f->e), 0);
    assert_int_equal(eo_engine_pool_configure(f->e, "arena", &cfg, NOW, NULL, &err), 0);
    assert_int_equal(eo_engine_rollback(f->e), 0);
    take_snap(f->e, &after);
    assert_int_equal(before.n, after.n);
    for (size_t i = 0; i < before.n; i++)
        assert_string_equal(before.line[i], after.line[i]);

    size_t players = 0;
    assert_int_equal(eo_engine_pool_configure(f->e, "arena", &cfg, NOW, &players, &err), 0);
    assert_int_equal(players, before.n);
    assert_true(eo_pool_get_config(eo_engine_pool(f->e, "arena"))
                    ->model.v[eo_model_param_index(EO_MODEL_SYNELO, "theta")] == 1200);
    take_snap(f->e, &after);
    size_t moved = 0;
    for (size_t i = 0; i < before.n; i++)
        moved += strcmp(before.line[i], after.line[i]) != 0;
    assert_true(moved > before.n / 2); /* another Θ, other ratings */
    /* The player rows are rewritten: a lookup from the store is the pool's view. */
    eo_player_row row;
    eo_rating_view v;
    assert_int_equal(eo_store_player_get(eo_engine_store(f->e), pool_id(f->e, "arena"), who, &row),
                     0);
    assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "arena"), who, NOW, &v), 0);
    assert_true(row.rating == v.display && row.rounds == v.rounds && row.mu == v.mu);
    reopen(f);
    take_snap(f->e, &folded);
    assert_int_equal(after.n, folded.n);
    for (size_t i = 0; i < after.n; i++)
        assert_string_equal(after.line[i], folded.line[i]);
}

static void expect_create_fails(eo_engine *e, const char *name, const char *model,
                                const char *params, int rc, int status, const char *field)
{
    json_t *p = params ? js(params) : NULL;
    eo_engine_error err;
    assert_int_equal(eo_engine_pool_create(e, name, model, p, NOW, &err), rc);
    assert_int_equal(err.status, status);
    if (strcmp(err.field, field) != 0)
        fail_msg("field '%s', expected '%s' (%s)", err.field, field, err.message);
    json_decref(p);
}

static void test_pool_create(void **state)
{
    fixture *f = *state;
    expect_create_fails(f->e, "arena", "synelo", NULL, EO_EEXIST, 409, "name");
    expect_create_fails(f->e, "", "synelo", NULL, EO_EINVAL, 400, "name");
    expect_create_fails(f->e, "x", "nosuchmodel", NULL, EO_EINVAL, 400, "model");
    expect_create_fails(f->e, "x", "synelo", "[1]", EO_EINVAL, 400, "params");
    expect_create_fails(f->e, "x", "synelo", "{\"bogus\":1}", EO_EINVAL, 400, "params.bogus");
    expect_create_fails(f->e, "x", "synelo", "{\"theta\":2400,\"kmax_team\":12}", EO_EINVAL, 400,
                        "params.kmax_team");
    expect_create_fails(f->e, "x", "synelo", "{\"window\":1}", EO_EINVAL, 400, "params.window");
    expect_create_fails(f->e, "x", "synelo", "{\"window\":\"500\"}", EO_EINVAL, 400,
                        "params.window");
    expect_create_fails(f->e, "x", "synelo", "{\"kmax_team\":129}", EO_EINVAL, 400,
                        "params.kmax_team");
    expect_create_fails(f->e, "x", "synelo", "{\"kmax_team\":2.5}", EO_EINVAL, 400,
                        "params.kmax_team");
    /* each fine alone (default r0 1000), wrong together: r_min 900 > r0 800 */
    expect_create_fails(f->e, "x", "synelo", "{\"r_min\":900,\"r0\":800}", EO_EINVAL, 400,
                        "params.r_min");
    assert_null(eo_engine_pool(f->e, "x"));

    /* kmax_team 4: Θ = 400 * floor(median{1,2,3,4}) = 400 * floor(2.5) = 800 (F1's rule) */
    json_t *p = js("{\"kmax_team\":4,\"t_shadow\":10}");
    eo_engine_error err;
    assert_int_equal(eo_engine_pool_create(f->e, "small", "synelo", p, NOW, &err), 0);
    json_decref(p);
    int theta = eo_model_param_index(EO_MODEL_SYNELO, "theta");
    int shadow = eo_model_param_index(EO_MODEL_SYNELO, "t_shadow");
    assert_true(theta >= 0 && shadow >= 0);
    assert_true(eo_pool_get_config(eo_engine_pool(f->e, "small"))->model.v[theta] == 800.0);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(eo_engine_store(f->e), "small", &row), 0);
    assert_string_equal(row.model, "synelo");
    assert_true(row.created_at == NOW);
    json_t *stored = js(row.params_json);
    eo_pool_row_free(&row);
    /* all fourteen parameters of SynElo's table, Θ as theta, kmax_team spent (0), and the
     * bias's and presence's switches, off as the engine's table defaults have them */
    assert_int_equal(json_object_size(stored), 16);
    assert_string_equal(json_string_value(json_object_get(stored, "presence")), "off");
    assert_int_equal(json_integer_value(json_object_get(stored, "kmax_team")), 0);
    assert_true(json_number_value(json_object_get(stored, "theta")) == 800.0);
    assert_int_equal(json_integer_value(json_object_get(stored, "t_shadow")), 10);
    assert_int_equal(json_integer_value(json_object_get(stored, "window")), 500);
    json_decref(stored);
    reopen(f);
    assert_true(eo_pool_get_config(eo_engine_pool(f->e, "small"))->model.v[theta] == 800.0);
    assert_true(eo_pool_get_config(eo_engine_pool(f->e, "small"))->model.v[shadow] == 10);
}

/* Names against the documented rule on creation; a pool that has another name (created
 * before the rule) keeps working. */
static void test_pool_name_rule(void **state)
{
    fixture *f = *state;
    static const char *const bad[] = {"a/b", "../x", "x');DROP TABLE pools;--", "..", ".", "",
                                      "caf\xC3\xA9", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eo_engine_error err;
        assert_int_equal(eo_engine_pool_create(f->e, bad[i], "synelo", NULL, NOW, &err),
                         EO_EINVAL);
        assert_int_equal(err.status, 400);
        assert_string_equal(err.code, "invalid_request");
        assert_string_equal(err.field, "name");
        assert_string_equal(err.message, EO_POOL_NAME_RULE);
        assert_null(eo_engine_pool(f->e, bad[i]));
    }
    eo_engine_error err;
    assert_int_equal(eo_engine_pool_create(f->e, NULL, "synelo", NULL, NOW, &err), EO_EINVAL);
    assert_string_equal(err.field, "name");
    assert_int_equal(eo_engine_pool_create(f->e, "Ok_1.2-3", "synelo", NULL, NOW, &err), 0);
    /* An unknown model is answered with every model of the registry. */
    assert_int_equal(eo_engine_pool_create(f->e, "m", "glicko9", NULL, NOW, &err), EO_EINVAL);
    assert_string_equal(err.field, "model");
    assert_string_equal(err.message,
                        "unknown model (known: synelo, trueskill, glicko2, elo, wenglin, hive)");

    /* "a/b" stored before the rule: folded at open, rated, refolded. */
    json_t *full = NULL;
    eo_pool_config cfg;
    assert_int_equal(eo_pool_config_from_json("synelo", NULL, &cfg, NULL), 0);
    full = eo_pool_config_to_json(&cfg);
    char *params = json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(full);
    int64_t id = 0;
    assert_int_equal(eo_store_pool_create(eo_engine_store(f->e), "a/b", "synelo", params, NOW,
                                          &id), 0);
    free(params);
    reopen(f);
    assert_non_null(eo_engine_pool(f->e, "a/b"));
    char *resp = NULL;
    int replayed = 0;
    assert_int_equal(rate(f->e, "a/b", ROUND1, &resp, &replayed, &err), 0);
    assert_string_equal(resp, ROUND1_ANSWER);
    free(resp);
    reopen(f);
    assert_int_equal(round_count(f->e, "a/b"), 1);
    assert_int_equal(rate(f->e, "a/b", ROUND1, &resp, &replayed, &err), 0);
    assert_int_equal(replayed, 1);
    free(resp);
}

/* A round of exactly @p len canonical bytes: ROUND1's players, an unknown string "pad". */
static json_t *round_of_length(const char *id, size_t len)
{
    json_t *o = json_pack("{s:s,s:s,s:[s],s:[s],s:s}", "id", id, "winner", "A", "A", "a", "B",
                          "b", "pad", "");
    char *c = NULL;
    assert_int_equal(eo_round_canonical(o, &c), 0);
    size_t base = strlen(c);
    free(c);
    char *fill = calloc(len - base + 1, 1);
    assert_non_null(fill);
    memset(fill, '.', len - base);
    json_object_set_new(o, "pad", json_string(fill));
    free(fill);
    return o;
}

/* New rounds longer than a line import reads are refused, naming the field; one logged before
 * that rule is still answered when sent again. */
static void test_round_text_max(void **state)
{
    fixture *f = *state;
    eo_engine_error err;
    char *resp = NULL;
    int replayed = 0;
    json_t *o = round_of_length("edge", EO_ROUND_TEXT_MAX);
    assert_int_equal(eo_engine_round(f->e, "arena", o, NOW, &resp, &replayed, &err), 0);
    free(resp);
    json_decref(o);
    o = round_of_length("over", EO_ROUND_TEXT_MAX + 1);
    assert_int_equal(eo_engine_round(f->e, "arena", o, NOW, &resp, &replayed, &err), EO_EINVAL);
    assert_null(resp);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.code, "invalid_round");
    assert_string_equal(err.field, "pad");
    assert_non_null(strstr(err.message, "1048577 bytes, more than 1048576"));
    assert_int_equal(round_count(f->e, "arena"), 1);
    /* Logged before the cap (written to the store directly here): a replay, not a 400. */
    char *canon = NULL;
    assert_int_equal(eo_round_canonical(o, &canon), 0);
    assert_int_equal(eo_store_log_append(eo_engine_store(f->e), pool_id(f->e, "arena"),
                                         EO_LOG_ROUND, "over", canon, "{\"round\":\"over\"}",
                                         NOW, NULL), 0);
    free(canon);
    assert_int_equal(eo_engine_round(f->e, "arena", o, NOW, &resp, &replayed, &err), 0);
    assert_int_equal(replayed, 1);
    assert_string_equal(resp, "{\"round\":\"over\"}");
    free(resp);
    json_decref(o);
}

static void test_open_bad_log(void **state)
{
    fixture *f = *state;
    /* a log entry that is not a round: opening names the pool and the entry */
    assert_int_equal(eo_store_log_append(eo_engine_store(f->e), pool_id(f->e, "arena"),
                                         EO_LOG_ROUND, "x", "{\"id\":\"x\"}", "{}", NOW, NULL),
                     0);
    eo_engine_close(f->e);
    f->e = NULL;
    eo_store *s = NULL;
    char msg[256];
    assert_int_equal(eo_store_open(f->path, 0, &s, msg, sizeof msg), 0);
    eo_engine_error err;
    eo_engine *e = (eo_engine *)1;
    assert_int_equal(eo_engine_open(s, &e, &err), EO_EIO);
    assert_null(e);
    assert_non_null(strstr(err.message, "arena"));
    assert_non_null(strstr(err.message, "log entry 1"));
}

/* With isolation (the service's writer), the update the store refuses fails alone: the calls
 * around it in the batch commit, its rows are not reported as written, and memory is what a
 * fold of the store gives. */
static void test_isolated_failure(void **state)
{
    fixture *f = *state;
    eo_engine_error err;
    add_failing_trigger(f->path);
    eo_engine_isolate(f->e, true);
    eo_engine_track_written(f->e, true);
    rate_ok(f->e, "arena", ROUND1);
    assert_int_equal(eo_engine_begin(f->e), 0);
    rate_ok(f->e, "arena", "{\"id\":\"r2\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}");
    /* a and b as after r2 (test_storage_failure works it out): 1000 each */
    rate_err(f->e, "arena", "{\"id\":\"boom\",\"winner\":\"B\",\"A\":[\"a\"],\"B\":[\"b\"]}",
             EO_EIO, 500, "storage", &err);
    expect_player(f->e, "arena", "a", 1000, 2); /* undone in memory at once */
    rate_ok(f->e, "arena", "{\"id\":\"r3\",\"winner\":\"A\",\"A\":[\"c\"],\"B\":[\"d\"]}");
    assert_int_equal(eo_engine_set_rating(f->e, "arena", "e", 1200, -1, NOW, &err), 0);
    assert_int_equal(eo_engine_commit(f->e), 0);
    written w = {0};
    assert_int_equal(eo_engine_written_each(f->e, collect_written, &w), 0);
    assert_int_equal(w.n, 5); /* r2's a and b, r3's c and d, e; nothing of boom */
    static const char *const ids[] = {"a", "b", "c", "d", "e"};
    for (size_t i = 0; i < 5; i++)
        assert_string_equal(w.id[i], ids[i]);
    assert_true(round_count(f->e, "arena") == 3);
    assert_int_equal(eo_store_round_find(eo_engine_store(f->e), pool_id(f->e, "arena"), "boom",
                                         NULL, NULL),
                     EO_ENOTFOUND);
    reopen(f);
    expect_player(f->e, "arena", "a", 1000, 2);
    expect_player(f->e, "arena", "b", 1000, 2);
    expect_player(f->e, "arena", "c", 1036, 1);
    expect_player(f->e, "arena", "e", 1200, 0);
}

/* A mean of 1e9 or more (a TrueSkill pool may start at ±1e12) is written with %.17g: the answer
 * is JSON and gives back the pool's doubles exactly, where it used to fail the whole batch. */
static void test_large_means(void **state)
{
    fixture *f = *state;
    eo_engine_error err;
    json_t *params = js("{\"mu\":2e9}");
    assert_int_equal(eo_engine_pool_create(f->e, "big", "trueskill", params, NOW, &err), 0);
    json_decref(params);
    char *resp = NULL;
    int replayed = 0;
    const char *r = "{\"id\":\"g1\",\"winner\":\"A\",\"ended_at\":1763800391,"
                    "\"A\":[\"a\"],\"B\":[\"b\"]}";
    assert_int_equal(rate(f->e, "big", r, &resp, &replayed, &err), 0);
    /* equal teams: P = 0.5 exactly, written as before */
    assert_non_null(strstr(resp, "\"expected\":0.5,"));
    json_t *o = js(resp);
    json_t *players = json_object_get(o, "players");
    assert_int_equal(json_array_size(players), 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *pl = json_array_get(players, i);
        eo_rating_view v;
        assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "big"),
                                        json_string_value(json_object_get(pl, "id")), NOW, &v),
                         0);
        assert_true(v.mu > 1e9 && v.mu != 2e9);
        assert_true(json_number_value(json_object_get(pl, "mu")) == v.mu);
        assert_true(json_number_value(json_object_get(pl, "rating")) == v.display);
    }
    json_decref(o);
    free(resp);
}

/* Sets @p player of @p pool and expects @p rc; on an error, the field and a piece of the
 * message (the allowed range). */
static void expect_set(eo_engine *e, const char *pool, const char *player, double rating,
                       double sigma, int rc, const char *field, const char *range)
{
    eo_engine_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_engine_set_rating(e, pool, player, rating, sigma, NOW, &err), rc);
    if (rc == 0)
        return;
    assert_int_equal(err.status, 400);
    assert_string_equal(err.code, "invalid_request");
    assert_string_equal(err.field, field);
    if (strstr(err.message, range) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.message, range);
}

static void create(eo_engine *e, const char *name, const char *model)
{
    eo_engine_error err;
    assert_int_equal(eo_engine_pool_create(e, name, model, NULL, NOW, &err), 0);
}

/* Admin edits outside a model's range are refused naming the field and the range, the bounds
 * themselves are taken; a round that would move a mean past the range is 422 for itself and
 * changes nothing, and the same player's rounds that stay inside are rated. Ranges
 * (docs/MODELS.md): Weng-Lin μ0 ± 1e8 = [-99999975, 100000025], σ up to 1e6; SynElo integers
 * [r_min 100, 1e6]; Glicko-2 ratings ±10000, RD up to rd_max 350. */
static void test_ranges(void **state)
{
    fixture *f = *state;
    create(f->e, "wl", "wenglin");
    create(f->e, "g2", "glicko2");
    expect_set(f->e, "wl", "x", -1e9, -1, EO_ERANGE, "rating", "[-99999975, 100000025]");
    expect_set(f->e, "wl", "x", 30, 2e6, EO_ERANGE, "sigma", "[0, 1000000]");
    expect_set(f->e, "wl", "x", 100000025.0, -1, 0, NULL, NULL);
    expect_set(f->e, "wl", "z", 100000025.0, -1, 0, NULL, NULL);
    expect_set(f->e, "wl", "x", nextafter(100000025.0, 1e300), -1, EO_ERANGE, "rating",
               "[-99999975, 100000025]");
    expect_set(f->e, "arena", "x", -1, -1, EO_ERANGE, "rating", "an integer in [100, 1000000]");
    expect_set(f->e, "arena", "x", 1500.5, -1, EO_ERANGE, "rating", "[100, 1000000]");
    expect_set(f->e, "g2", "x", 12345, -1, EO_ERANGE, "rating", "[-10000, 10000]");
    expect_set(f->e, "g2", "x", 1500, 351, EO_ERANGE, "sigma", "[0, 350]");
    expect_set(f->e, "g2", "x", 10000, 350, 0, NULL, NULL);
    eo_engine_error err;
    /* x and z at the top of the range: an even round; the winner would rise past it */
    const char *up = "{\"id\":\"u1\",\"winner\":\"A\",\"A\":[\"y\",\"x\"],\"B\":[\"z\",\"w\"]}";
    rate_err(f->e, "wl", up, EO_ERANGE, 422, "out_of_range", &err);
    assert_string_equal(err.field, "A[1]");
    assert_non_null(strstr(err.message, "\"x\""));
    assert_non_null(strstr(err.message, "100000025"));
    /* nothing of the round: x and z as set, y and w never created, nothing logged */
    const eo_pool *wl = eo_engine_pool(f->e, "wl");
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(wl, "x", NOW, &v), 0);
    assert_true(v.mu == 100000025.0 && v.rounds == 0);
    assert_int_equal(eo_pool_lookup(wl, "z", NOW, &v), 0);
    assert_true(v.mu == 100000025.0 && v.rounds == 0);
    assert_int_equal(eo_pool_player_count(wl), 2);
    assert_true(round_count(f->e, "wl") == 0);
    /* an upset against x's team moves x down: rated */
    rate_ok(f->e, "wl", "{\"id\":\"u2\",\"winner\":\"B\",\"A\":[\"y\",\"x\"],\"B\":[\"w\"]}");
    assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "wl"), "x", NOW, &v), 0);
    assert_true(v.mu < 100000025.0 && v.rounds == 1);
}

/* A log written before the ranges existed may hold an admin edit outside them (the old service
 * took a Weng-Lin mean of -1e9): it is folded as logged, the pool loads, the player is
 * reported outside, his rounds are 422 and the others' are rated; an edit back into range
 * makes his rounds work again. */
static void test_fold_outside_range(void **state)
{
    fixture *f = *state;
    create(f->e, "wl", "wenglin");
    eo_store *st = eo_engine_store(f->e);
    int64_t pid = pool_id(f->e, "wl");
    assert_int_equal(eo_store_log_append(st, pid, EO_LOG_SET, NULL,
                                         "{\"player\":\"x\",\"rating\":-1000000000}", NULL, NOW,
                                         NULL),
                     0);
    reopen(f);
    const char *first = NULL;
    assert_int_equal(eo_pool_outside_range(eo_engine_pool(f->e, "wl"), NOW, &first), 1);
    assert_string_equal(first, "x");
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(eo_engine_pool(f->e, "wl"), "x", NOW, &v), 0);
    assert_true(v.mu == -1e9);
    eo_engine_error err;
    const char *his = "{\"id\":\"h1\",\"winner\":\"A\",\"A\":[\"x\"],\"B\":[\"y\"]}";
    rate_err(f->e, "wl", his, EO_ERANGE, 422, "out_of_range", &err);
    assert_string_equal(err.field, "A[0]");
    rate_ok(f->e, "wl", "{\"id\":\"o1\",\"winner\":\"A\",\"A\":[\"y\"],\"B\":[\"z\"]}");
    expect_set(f->e, "wl", "x", 25, -1, 0, NULL, NULL);
    assert_int_equal(eo_pool_outside_range(eo_engine_pool(f->e, "wl"), NOW, NULL), 0);
    rate_ok(f->e, "wl", his);
}

/* The one mapping from a failure to the client's status and code (docs/SERVICE.md "Errors"),
 * written out by hand. */
static void test_error_mapping(void **state)
{
    (void)state;
    static const struct {
        int rc;
        eo_engine_op op;
        int status;
        const char *code;
    } want[] = {
        {EO_ENOTFOUND, EO_OP_ROUND, 404, "unknown_pool"},
        {EO_ENOTFOUND, EO_OP_READ, 404, "unknown_pool"},
        {EO_ECONFLICT, EO_OP_ROUND, 409, "round_conflict"},
        {EO_EEXIST, EO_OP_POOL, 409, "pool_exists"},
        {EO_EEXIST, EO_OP_SEASON, 409, "season_exists"},
        {EO_ERANGE, EO_OP_ROUND, 422, "out_of_range"},
        {EO_ERANGE, EO_OP_EDIT, 400, "invalid_request"},
        {EO_ERANGE, EO_OP_REFIT, 400, "invalid_request"},
        {EO_EINVAL, EO_OP_ROUND, 400, "invalid_round"},
        {EO_EINVAL, EO_OP_POOL, 400, "invalid_request"},
        {EO_ELIMIT, EO_OP_ROUND, 400, "invalid_round"},
        {EO_EIO, EO_OP_ANY, 500, "storage"},
        {EO_EBUSY, EO_OP_ROUND, 500, "storage"},
        {EO_ENOMEM, EO_OP_ROUND, 500, "internal"},
        {EO_EINTERNAL, EO_OP_EDIT, 500, "internal"},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int status = 0;
        const char *code = NULL;
        eo_engine_status(want[i].rc, want[i].op, &status, &code);
        assert_int_equal(status, want[i].status);
        assert_string_equal(code, want[i].code);
    }
    eo_engine_error err;
    assert_int_equal(eo_engine_fail(&err, EO_OP_ROUND, EO_EINVAL, "A[2].time", "bad %d", 7),
                     EO_EINVAL);
    assert_int_equal(err.status, 400);
    assert_string_equal(err.code, "invalid_round");
    assert_string_equal(err.field, "A[2].time");
    assert_string_equal(err.message, "bad 7");
    assert_int_equal(eo_engine_fail(NULL, EO_OP_ANY, EO_EIO, NULL, "x"), EO_EIO);
}


/* The read indexes as text, for comparing two states of a store; with @p ratings the players'
 * ratings too. */
static char *indexes_text(const char *path, bool ratings)
{
    const char *sql[] = {
        "SELECT n, seq, round_id, at, started_at, ended_at, map, p_a, winner, hex(members) "
        "FROM round_ix ORDER BY pool_id, n",
        "SELECT day, bin, rounds, draws, stomps, margin, decided, logloss, brier, p, a_wins, "
        "members, rating, rating2, delta FROM health ORDER BY pool_id, day, bin",
        ratings ? "SELECT player_id, name, name_key, last_n, prev_n, rating FROM players "
                  "ORDER BY pool_id, player_id"
                : "SELECT player_id, name, name_key, last_n, prev_n FROM players "
                  "ORDER BY pool_id, player_id"};
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    size_t len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    assert_non_null(out);
    for (size_t q = 0; q < sizeof sql / sizeof sql[0]; q++) {
        sqlite3_stmt *st = NULL;
        assert_int_equal(sqlite3_prepare_v2(db, sql[q], -1, &st, NULL), SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
            for (int c = 0; c < sqlite3_column_count(st); c++) {
                const char *t = (const char *)sqlite3_column_text(st, c);
                size_t n = t ? strlen(t) : 1;
                while (len + n + 2 > cap)
                    assert_non_null(out = realloc(out, cap *= 2));
                memcpy(out + len, t ? t : "-", n);
                len += n;
                out[len++] = c + 1 < sqlite3_column_count(st) ? '|' : '\n';
            }
        }
        sqlite3_finalize(st);
    }
    out[len] = '\0';
    sqlite3_close(db);
    return out;
}

/* Rounds of a generated log, names on some: round @p k's JSON text (the caller's). */
static char *gen_round(eo_gen *g, int k)
{
    eo_round r;
    char names[2][16];
    eo_gen_next(g, &r);
    for (size_t i = 0; i < 2; i++) {
        snprintf(names[i], sizeof names[i], "N%d", (k / 100) % 7);
        r.team[0][i].name = k % 3 ? names[i] : NULL;
    }
    json_t *o = eo_round_to_json(&r);
    char *text = json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(o);
    return text;
}

/* Rounds @p from to @p to of the generated log through engine @p e, one transaction. */
static void rate_rounds(eo_engine *e, eo_gen *g, int from, int to)
{
    eo_engine_error err;
    assert_int_equal(eo_engine_begin(e), 0);
    for (int k = from; k < to; k++) {
        char *text = gen_round(g, k), *resp = NULL;
        json_t *o = js(text);
        int replayed = 0;
        assert_int_equal(eo_engine_round(e, "arena", o, NOW + k, &resp, &replayed, &err), 0);
        free(resp);
        free(text);
        json_decref(o);
    }
    assert_int_equal(eo_engine_commit(e), 0);
}

static eo_gen *small_gen(void)
{
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.players = 60;
    gc.team_min = gc.team_max = 2;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&gc, &g), 0);
    return g;
}

#define INDEX_ROUNDS 4500 /* more than two chunks of the open's indexing */

/* Rounds logged before the indexes are indexed when the engine opens the store, a few thousand
 * per transaction, to exactly what was written round by round: with none of them indexed, and
 * with the first ones indexed already (each player's chain picks up from his row). */
static void test_indexes_at_open(void **state)
{
    fixture *f = *state;
    eo_gen *g = small_gen();
    rate_rounds(f->e, g, 0, INDEX_ROUNDS);
    eo_gen_destroy(g);
    eo_engine_close(f->e);
    f->e = NULL;
    char *live = indexes_text(f->path, true);
    /* None indexed: a store migrated to the indexes, before its engine opened. */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "DELETE FROM round_ix; DELETE FROM health; UPDATE players "
                                      "SET last_n = 0, prev_n = 0, name = NULL, name_key = NULL",
                                  NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    reopen(f);
    char *built = indexes_text(f->path, true);
    assert_string_equal(live, built);
    free(built);
    free(live);
    live = indexes_text(f->path, false);
    /* The first 2000 rated (and indexed), the rest only logged: the open indexes the rest. */
    char other[64];
    snprintf(other, sizeof other, "/tmp/eo_test_engine_XXXXXX");
    int fd = mkstemp(other);
    assert_true(fd >= 0);
    close(fd);
    eo_engine *e = test_engine_open(other, 0);
    eo_engine_error err;
    assert_int_equal(eo_engine_pool_create(e, "arena", "synelo", NULL, NOW, &err), 0);
    g = small_gen();
    rate_rounds(e, g, 0, 2000);
    eo_store *st = eo_engine_store(e);
    assert_int_equal(eo_store_begin(st), 0);
    for (int k = 2000; k < INDEX_ROUNDS; k++) {
        char *text = gen_round(g, k), *canon = NULL;
        json_t *o = js(text);
        assert_int_equal(eo_round_canonical(o, &canon), 0);
        const char *id = json_string_value(json_object_get(o, "id"));
        assert_int_equal(eo_store_log_append(st, 1, EO_LOG_ROUND, id, canon, "{}", NOW + k, NULL),
                         0);
        free(canon);
        free(text);
        json_decref(o);
    }
    assert_int_equal(eo_store_commit(st), 0);
    eo_gen_destroy(g);
    eo_engine_close(e);
    eo_engine_close(test_engine_open(other, 0));
    /* The fold does not write rows: ratings in `other` stay as of round 2000, so they are
     * left out of the comparison. */
    built = indexes_text(other, false);
    assert_string_equal(live, built);
    free(built);
    free(live);
    test_store_remove(other);
}

int main(void)
{
#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_error_mapping),
        CASE(test_round_response),
        CASE(test_round_replayed),
        CASE(test_round_conflict),
        CASE(test_unknown_pool_and_bad_round),
        CASE(test_batch_commit),
        CASE(test_batch_rollback),
        CASE(test_storage_failure),
        CASE(test_reopen_fold),
        CASE(test_written_each),
        CASE(test_set_reset),
        CASE(test_refit),
        CASE(test_pool_configure),
        CASE(test_pool_create),
        CASE(test_pool_name_rule),
        CASE(test_round_text_max),
        CASE(test_open_bad_log),
        CASE(test_large_means),
        CASE(test_isolated_failure),
        CASE(test_ranges),
        CASE(test_fold_outside_range),
        CASE(test_indexes_at_open),
    };
#undef CASE
    return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
