/* End-to-end tests of `evenodds serve`: the real binary on 127.0.0.1 (port 0) with a temporary
 * database, driven over HTTP with libcurl. Expected values are derived by hand in comments. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>
#include <curl/curl.h>
#include <jansson.h>
#include <sqlite3.h>

#include "e2e.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_store.h"

/* A 2v2 round: @p a1,a2 against @p b1,b2. */
static void round_json(char *buf, size_t cap, const char *id, const char *a1, const char *a2,
                       const char *b1, const char *b2, const char *winner)
{
    snprintf(buf, cap,
             "{\"id\":\"%s\",\"server\":\"srv1\",\"map\":\"arena_well\",\"started_at\":1763800000,"
             "\"ended_at\":1763800391,\"winner\":\"%s\",\"A\":[\"%s\",\"%s\"],\"B\":[\"%s\",\"%s\"]}",
             id, winner, a1, a2, b1, b2);
}

static void start(e2e_server *s, const char *const *extra)
{
    assert_int_equal(e2e_init(s), 0);
    assert_int_equal(e2e_start(s, extra), 0);
}

/* SIGTERM, then expect exit 0: under ASan this also fails on any leak or memory error the
 * service met while the test ran. */
static void stop_clean(e2e_server *s)
{
    int st = -1;
    assert_int_equal(e2e_stop(s, SIGTERM, 20000, &st), 0);
    if (st != 0) {
        char *log = e2e_read_log(s);
        fprintf(stderr, "service exit %d; its stderr:\n%s\n", st, log ? log : "(none)");
        free(log);
    }
    assert_int_equal(st, 0);
}

/* Sends a request and checks its status; returns the parsed body (caller decrefs). */
static json_t *expect(const e2e_server *s, const char *method, const char *path, const char *key,
                      const char *body, long status)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, method, path, key, body, &r), 0);
    if (r.status != status)
        fprintf(stderr, "%s %s -> %ld %s\n", method, path, r.status, r.body);
    assert_int_equal(r.status, status);
    json_t *j = e2e_json(&r);
    assert_non_null(j);
    e2e_resp_free(&r);
    return j;
}

static json_int_t jint(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_true(json_is_integer(v));
    return json_integer_value(v);
}

static double jnum(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static bool jbool(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    assert_true(json_is_boolean(v));
    return json_is_true(v);
}

/* Splits read the ratings lookups read (SynElo: the split rating is the rating): the k = 2
 * split of p1..p4 in pool @p pool has the least |ΣA − ΣB| over the three pairings of their
 * looked-up ratings. Checked after every kind of write and after a restart. */
static void expect_split_as_lookups(const e2e_server *s, const char *pool)
{
    json_int_t r[4];
    char path[128];
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "/v1/pools/%s/players/p%d", pool, i + 1);
        json_t *j = expect(s, "GET", path, s->server_key, NULL, 200);
        r[i] = jint(j, "rating");
        json_decref(j);
    }
    json_int_t d0 = r[0] + r[1] - r[2] - r[3], d1 = r[0] + r[2] - r[1] - r[3],
               d2 = r[0] + r[3] - r[1] - r[2];
    d0 = d0 < 0 ? -d0 : d0;
    d1 = d1 < 0 ? -d1 : d1;
    d2 = d2 < 0 ? -d2 : d2;
    json_int_t least = d0 < d1 ? (d0 < d2 ? d0 : d2) : (d1 < d2 ? d1 : d2);
    snprintf(path, sizeof path, "/v1/pools/%s/splits", pool);
    json_t *j = expect(s, "POST", path, s->server_key,
                       "{\"players\":[\"p1\",\"p2\",\"p3\",\"p4\"]}", 200);
    assert_int_equal(jint(json_array_get(json_object_get(j, "splits"), 0), "gap"), least);
    json_decref(j);
}

static void create_pool(const e2e_server *s, const char *name)
{
    char body[200];
    snprintf(body, sizeof body, "{\"name\":\"%s\",\"model\":\"synelo\",\"params\":{\"kmax_team\":12}}",
             name);
    json_t *j = expect(s, "POST", "/v1/pools", s->admin_key, body, 201);
    assert_string_equal(json_string_value(json_object_get(j, "name")), name);
    json_decref(j);
}

/* ---- pool names ----------------------------------------------------------------------- */

/* New pools follow the documented name rule (400 naming "name", the rule as message); pools
 * that got other names before the rule keep working: listed, rated, looked up, exported. */
static void test_pool_names(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    /* Made before the rule: written into the store before the service opens it. */
    static const char *const legacy[] = {"a/b", "x');DROP TABLE pools;--"};
    eo_store *st = NULL;
    char msg[256];
    assert_int_equal(eo_store_open(s.db, 0, &st, msg, sizeof msg), 0);
    eo_pool_config cfg;
    assert_int_equal(eo_pool_config_from_json("synelo", NULL, &cfg, NULL), 0);
    json_t *params = eo_pool_config_to_json(&cfg);
    char *text = json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(eo_store_pool_create(st, legacy[i], "synelo", text, 1763800000, NULL), 0);
    free(text);
    json_decref(params);
    eo_store_close(st);
    assert_int_equal(e2e_start(&s, NULL), 0);

    static const char *const bad[] = {"a/b", "../x", "x');DROP TABLE pools;--", "..", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *req = json_pack("{s:s,s:s}", "name", bad[i], "model", "synelo");
        char *body = json_dumps(req, JSON_COMPACT);
        json_decref(req);
        json_t *j = expect(&s, "POST", "/v1/pools", s.admin_key, body, 400);
        free(body);
        json_t *e = json_object_get(j, "error");
        assert_string_equal(json_string_value(json_object_get(e, "code")), "invalid_request");
        assert_string_equal(json_string_value(json_object_get(e, "field")), "name");
        assert_string_equal(json_string_value(json_object_get(e, "message")), EO_POOL_NAME_RULE);
        json_decref(j);
    }
    json_t *j = expect(&s, "GET", "/v1/pools", s.admin_key, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(j, "pools")), 2);
    json_decref(j);
    static const char *const path[] = {"a%2Fb", "x%27%29%3BDROP%20TABLE%20pools%3B--"};
    for (size_t i = 0; i < 2; i++) {
        char url[160], body[400];
        snprintf(url, sizeof url, "/v1/pools/%s/rounds", path[i]);
        round_json(body, sizeof body, "r1", "p1", "p2", "p3", "p4", "A");
        json_decref(expect(&s, "POST", url, s.server_key, body, 200));
        snprintf(url, sizeof url, "/v1/pools/%s/players/p1", path[i]);
        j = expect(&s, "GET", url, s.server_key, NULL, 200);
        assert_int_equal(jint(j, "rounds"), 1);
        json_decref(j);
        char out[400], err[512];
        e2e_path(&s, "legacy.jsonl", out, sizeof out);
        const char *argv[] = {"evenodds", "export", "--db", s.db, "--pool", legacy[i], "--out",
                              out, NULL};
        assert_int_equal(e2e_run(argv, NULL, err, sizeof err), 0);
        size_t len;
        char *exported = e2e_slurp(out, &len);
        assert_non_null(strstr(exported, "\"id\":\"r1\""));
        free(exported);
    }
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- create, rate, look up, split, admin, restart ----------------------------------------- */

static void test_flow(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--default-pool", "default", NULL};
    start(&s, extra);

    json_t *j = expect(&s, "GET", "/healthz", NULL, NULL, 200);
    json_decref(j);
    j = expect(&s, "GET", "/readyz", NULL, NULL, 200);
    json_decref(j);

    /* kmax_team 12: Θ = 400 * floor(median{1..12}) = 400 * floor(6.5) = 2400 (seed F1). */
    j = expect(&s, "POST", "/v1/pools", s.admin_key,
               "{\"name\":\"arena\",\"model\":\"synelo\",\"params\":{\"kmax_team\":12}}", 201);
    assert_string_equal(json_string_value(json_object_get(j, "model")), "synelo");
    json_t *params = json_object_get(j, "params");
    assert_true(jnum(params, "theta") == 2400.0);
    assert_int_equal(jint(params, "r0"), 1000); /* the seed's table */
    assert_int_equal(jint(params, "t_shadow"), 50);
    json_decref(j);

    /* Listed by name: "arena" < "default". */
    j = expect(&s, "GET", "/v1/pools", s.admin_key, NULL, 200);
    json_t *pools = json_object_get(j, "pools");
    assert_int_equal(json_array_size(pools), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(pools, 0), "name")), "arena");
    assert_string_equal(json_string_value(json_object_get(json_array_get(pools, 1), "name")), "default");
    json_decref(j);

    /* Unknown player: R0, nothing written (the pool still has no player afterwards). */
    j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "id")), "p1");
    assert_int_equal(jint(j, "rating"), 1000);
    assert_int_equal(jint(j, "rounds"), 0);
    assert_false(jbool(j, "visible"));
    assert_false(jbool(j, "stale"));
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/arena/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(j, "players"), 0);
    assert_int_equal(jint(j, "rounds"), 0);
    json_decref(j);

    /* One round between four new players: equal sums give P = 1/(1+10^0) = 0.5 for everyone,
     * all have the same state hence the same K, so winners gain what losers lose. */
    char round[512];
    round_json(round, sizeof round, "r1", "p1", "p2", "p3", "p4", "A");
    e2e_resp first;
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools/arena/rounds", s.server_key, round, &first), 0);
    assert_int_equal(first.status, 200);
    j = e2e_json(&first);
    assert_string_equal(json_string_value(json_object_get(j, "round")), "r1");
    json_t *pl = json_object_get(j, "players");
    assert_int_equal(json_array_size(pl), 4);
    json_int_t d1 = jint(json_array_get(pl, 0), "delta");
    assert_true(d1 > 0);
    for (size_t i = 0; i < 4; i++) {
        json_t *p = json_array_get(pl, i);
        assert_true(jnum(p, "expected") == 0.5);
        assert_int_equal(jint(p, "delta"), i < 2 ? d1 : -d1);
        assert_int_equal(jint(p, "rating"), 1000 + (i < 2 ? d1 : -d1));
        assert_int_equal(jint(p, "rounds"), 1);
        assert_false(jbool(p, "visible"));
    }
    json_decref(j);

    j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1000 + d1);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);

    /* The same round again: the first answer, byte for byte, and no second update. */
    e2e_resp again;
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools/arena/rounds", s.server_key, round, &again), 0);
    assert_int_equal(again.status, 200);
    assert_string_equal(again.body, first.body);
    e2e_resp_free(&again);
    /* Same id, other content: 409. */
    char other[512];
    round_json(other, sizeof other, "r1", "p1", "p2", "p3", "p4", "B");
    j = expect(&s, "POST", "/v1/pools/arena/rounds", s.server_key, other, 409);
    json_decref(j);

    /* Quality after one round with P = 0.5 and A winning: Brier = (0.5 - 1)^2 = 0.25;
     * balance = |0.5 - 0.5| = 0. */
    j = expect(&s, "GET", "/v1/pools/arena/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), 1);
    assert_int_equal(jint(j, "players"), 4);
    assert_int_equal(jint(j, "visible_players"), 0);
    assert_true(jnum(j, "brier_all") == 0.25);
    assert_true(jnum(j, "brier_recent") == 0.25);
    assert_true(jnum(j, "balance_recent") == 0.0);
    json_decref(j);

    /* Splits from stored ratings: p1,p2 = 1000+d, p3,p4 = 1000-d. The only zero-gap split of
     * k = 2 pairs one winner with one loser; the sums are equal so P(A) = 0.5. */
    j = expect(&s, "POST", "/v1/pools/arena/splits", s.server_key,
               "{\"players\":[\"p1\",\"p2\",\"p3\",\"p4\"]}", 200);
    json_t *sp = json_object_get(j, "splits");
    assert_int_equal(json_array_size(sp), 1);
    json_t *k2 = json_array_get(sp, 0);
    assert_int_equal(jint(k2, "k"), 2);
    assert_int_equal(jint(k2, "gap"), 0);
    assert_true(jnum(k2, "p_a") == 0.5);
    json_decref(j);
    /* Ratings given: 1000,1100,1200,1300 -> {1000,1300} vs {1100,1200}, gap 0. */
    j = expect(&s, "POST", "/v1/pools/arena/splits", s.server_key,
               "{\"players\":[{\"id\":\"a\",\"rating\":1000},{\"id\":\"b\",\"rating\":1100},"
               "{\"id\":\"c\",\"rating\":1200},{\"id\":\"d\",\"rating\":1300}]}",
               200);
    k2 = json_array_get(json_object_get(j, "splits"), 0);
    assert_int_equal(jint(k2, "gap"), 0);
    json_t *ta = json_object_get(k2, "A"), *tb = json_object_get(k2, "B");
    assert_int_equal(json_array_size(ta), 2);
    assert_int_equal(json_array_size(tb), 2);
    const char *a0 = json_string_value(json_array_get(ta, 0));
    const char *a1 = json_string_value(json_array_get(ta, 1));
    bool ad = (!strcmp(a0, "a") && !strcmp(a1, "d")) || (!strcmp(a0, "d") && !strcmp(a1, "a"));
    bool bc = (!strcmp(a0, "b") && !strcmp(a1, "c")) || (!strcmp(a0, "c") && !strcmp(a1, "b"));
    assert_true(ad || bc);
    json_decref(j);

    /* Admin set: the rating changes, the rounds stay. */
    j = expect(&s, "PUT", "/v1/pools/arena/players/p1", s.admin_key, "{\"rating\":1500}", 200);
    assert_int_equal(jint(j, "rating"), 1500);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1500);
    json_decref(j);
    expect_split_as_lookups(&s, "arena");
    /* Admin reset: back to R0, 0 rounds, shadow. */
    j = expect(&s, "DELETE", "/v1/pools/arena/players/p2", s.admin_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1000);
    assert_int_equal(jint(j, "rounds"), 0);
    assert_false(jbool(j, "visible"));
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/arena/players/p2", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1000);
    assert_int_equal(jint(j, "rounds"), 0);
    json_decref(j);
    expect_split_as_lookups(&s, "arena");

    /* Metrics count what happened. */
    e2e_resp m;
    assert_int_equal(e2e_call(&s, "GET", "/metrics", NULL, NULL, &m), 0);
    assert_int_equal(m.status, 200);
    assert_non_null(strstr(m.ctype, "text/plain"));
    assert_non_null(strstr(m.body, "\nevenodds_rounds_rated_total 1\n"));
    assert_non_null(strstr(m.body, "evenodds_http_requests_total{route=\"/v1/pools/{pool}/rounds\","
                                   "method=\"POST\",code=\"409\"} 1\n"));
    assert_non_null(strstr(m.body, "evenodds_commit_duration_seconds_count"));
    assert_non_null(strstr(m.body, "evenodds_writer_queue_depth 0\n"));
    e2e_resp_free(&m);

    /* Restart and re-read. */
    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    assert_int_equal(e2e_start(&s, extra), 0);
    j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1500);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/arena/players/p3", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1000 - d1);
    json_decref(j);
    expect_split_as_lookups(&s, "arena"); /* the ratings splits read, loaded at start */
    j = expect(&s, "GET", "/v1/pools/arena/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools/arena/rounds", s.server_key, round, &again), 0);
    assert_int_equal(again.status, 200);
    assert_string_equal(again.body, first.body);
    e2e_resp_free(&again);
    e2e_resp_free(&first);

    /* The log has a line per request and never a key. */
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    char *log = e2e_read_log(&s);
    assert_non_null(log);
    assert_null(strstr(log, s.server_key));
    assert_null(strstr(log, s.admin_key));
    assert_null(strstr(log, "Bearer"));
    assert_non_null(strstr(log, "msg=request method=POST path=/v1/pools/arena/rounds status=409"));
    assert_non_null(strstr(log, "remote=127.0.0.1:"));
    free(log);
    e2e_cleanup(&s);
}

/* ---- map bias ---------------------------------------------------------------------------- */

/* GET /maps of a pool with bias by map and prior 0 (SynElo). Round 1 on arena_well, p1, p2
 * beat p3, p4, all new: field 0, P(A) 0.5; it teaches P0 0.5, g 0.25: U = 0.5, I = 0.25, so
 * bias 2 logits, uncertainty 1/√0.25 = 2. Round 2 on the same map, new players: P(A) = σ(2) =
 * 0.8808, B wins: U back to 0, bias 0. A restart refolds the log to the same table; a pool
 * without bias lists no maps. Presence (on in both, as in new pools) the same way: "biased"
 * saw equal teams only (no estimate); in "plain" (presence_prior 0) two new players beat one:
 * Δ 1, P0 0.5 (new players at the start level), so U = 0.5, I = 0.25, π 2 logits,
 * uncertainty 2; a pool with presence off answers null. */
static void test_maps(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    /* Θ 2400 as pools had before new pools took each round's own (docs/MODELS.md, "Defaults
     * of new pools"); "plain" without the map bias, which new pools have on. */
    json_decref(expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"plain\",\"model\":\"synelo\",\"params\":"
                       "{\"kmax_team\":12,\"bias\":\"off\",\"presence_prior\":0}}",
                       201));
    json_decref(expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"old\",\"model\":\"elo\",\"params\":{\"presence\":\"off\"}}",
                       201));
    json_decref(expect(&s, "POST", "/v1/pools/plain/rounds", s.server_key,
                       "{\"id\":\"u1\",\"server\":\"srv1\",\"map\":\"arena_well\","
                       "\"started_at\":1763800000,\"ended_at\":1763800391,\"winner\":\"A\","
                       "\"A\":[\"q1\",\"q2\"],\"B\":[\"q3\"]}",
                       200));
    json_t *j = expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"biased\",\"model\":\"synelo\",\"params\":"
                       "{\"bias\":\"map\",\"bias_prior\":0,\"theta\":2400}}", 201);
    json_t *params = json_object_get(j, "params");
    assert_string_equal(json_string_value(json_object_get(params, "bias")), "map");
    assert_true(jnum(params, "bias_prior") == 0.0 && jnum(params, "bias_strength") == 1.0);
    json_decref(j);
    char round[512];
    round_json(round, sizeof round, "r1", "p1", "p2", "p3", "p4", "A");
    j = expect(&s, "POST", "/v1/pools/biased/rounds", s.server_key, round, 200);
    json_t *m0 = json_array_get(json_object_get(j, "players"), 0);
    assert_true(jnum(m0, "expected") == 0.5);
    json_decref(j);

    j = expect(&s, "GET", "/v1/pools/biased/maps", s.server_key, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "by")), "map");
    assert_string_equal(json_string_value(json_object_get(j, "units")), "logit");
    json_t *maps = json_object_get(j, "maps");
    assert_int_equal(json_array_size(maps), 1);
    json_t *e = json_array_get(maps, 0);
    assert_string_equal(json_string_value(json_object_get(e, "map")), "arena_well");
    assert_int_equal(jint(e, "plays"), 1);
    assert_int_equal(jint(e, "a_wins"), 1);
    assert_int_equal(jint(e, "b_wins"), 0);
    assert_int_equal(jint(e, "draws"), 0);
    assert_true(jnum(e, "a_win_rate") == 1.0);
    assert_true(fabs(jnum(e, "bias") - 2.0) < 1e-6);
    assert_true(fabs(jnum(e, "applied") - 2.0) < 1e-6);
    assert_true(fabs(jnum(e, "uncertainty") - 2.0) < 1e-6);
    assert_null(json_object_get(e, "size"));
    json_t *pres = json_object_get(j, "presence");
    assert_int_equal(jint(pres, "rounds"), 0);
    assert_true(jnum(pres, "pi") == 0.0);
    assert_true(json_is_null(json_object_get(pres, "uncertainty")));
    json_decref(j);

    /* Splits on that map see its bias in P(A): four new players (all 1000), plain and
     * balancer requests alike: σ(2) for any split; without the map, 0.5. A balancer request's
     * objective |ΣA − ΣB + F| has F = 2 · Θ = 4800 points for every split here. */
#define NPLAYERS "{\"players\":[\"n1\",\"n2\",\"n3\",\"n4\"]"
    const char *bodies[] = {NPLAYERS ",\"map\":\"arena_well\"}",
                            (NPLAYERS ",\"map\":\"arena_well\",\"mode\":\"scramble\"}"),
                            NPLAYERS "}"};
#undef NPLAYERS
    for (int b = 0; b < 3; b++) {
        j = expect(&s, "POST", "/v1/pools/biased/splits", s.server_key, bodies[b], 200);
        json_t *k2 = json_array_get(json_object_get(j, "splits"), 0);
        double want = b < 2 ? 1.0 / (1.0 + exp(-2.0)) : 0.5;
        assert_true(fabs(jnum(k2, "p_a") - want) < 1e-6);
        if (b == 1)
            assert_int_equal(jint(k2, "dev"), 4800);
        json_decref(j);
    }

    round_json(round, sizeof round, "r2", "p5", "p6", "p7", "p8", "B");
    j = expect(&s, "POST", "/v1/pools/biased/rounds", s.server_key, round, 200);
    m0 = json_array_get(json_object_get(j, "players"), 0);
    assert_true(fabs(jnum(m0, "expected") - 1.0 / (1.0 + exp(-2.0))) < 1e-6);
    json_decref(j);

    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    j = expect(&s, "GET", "/v1/pools/biased/maps", s.server_key, NULL, 200);
    e = json_array_get(json_object_get(j, "maps"), 0);
    assert_int_equal(jint(e, "plays"), 2);
    assert_int_equal(jint(e, "b_wins"), 1);
    assert_true(jnum(e, "a_win_rate") == 0.5);
    assert_true(fabs(jnum(e, "bias")) < 1e-9);
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/plain/maps", s.server_key, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "by")), "off");
    assert_int_equal(json_array_size(json_object_get(j, "maps")), 0);
    pres = json_object_get(j, "presence");
    assert_int_equal(jint(pres, "rounds"), 1);
    assert_true(fabs(jnum(pres, "pi") - 2.0) < 1e-9);
    assert_true(fabs(jnum(pres, "applied") - 2.0) < 1e-9);
    assert_true(fabs(jnum(pres, "uncertainty") - 2.0) < 1e-9);
    assert_true(json_is_null(json_object_get(pres, "partial_share"))); /* SynElo: none */
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/old/maps", s.server_key, NULL, 200);
    assert_true(json_is_null(json_object_get(j, "presence")));
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/nope/maps", s.server_key, NULL, 404);
    json_decref(j);
    /* A read of the public dashboard (the default): no key needed. */
    j = expect(&s, "GET", "/v1/pools/biased/maps", NULL, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "by")), "map");
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- seasons and divisions ------------------------------------------------------------- */

/* t_shadow 1 so that players are visible (and get a division) after one round; p1, p2 beat
 * p3, p4 once at 1000 each: P = 0.5, K = 72 (empty windows, G = 1), so p1, p2 reach 1036 and
 * p3, p4 964. Ending season "S1" with f = 0.5 moves each halfway back: 1018 and 982. */
static void test_seasons(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    json_t *j = expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"ladder\",\"model\":\"synelo\",\"params\":{\"t_shadow\":1,"
                       "\"theta\":2400,\"bias\":\"off\"," /* as pools were before new pools'
                                                       * defaults (docs/MODELS.md) */
                       "\"divisions\":[{\"name\":\"Bronze\",\"from\":0},{\"name\":\"Silver\","
                       "\"from\":1000},{\"name\":\"Gold\",\"from\":1030}]}}", 201);
    assert_int_equal(json_array_size(json_object_get(json_object_get(j, "params"), "divisions")),
                     3);
    json_decref(j);
    char body[512];
    round_json(body, sizeof body, "r1", "p1", "p2", "p3", "p4", "A");
    json_decref(expect(&s, "POST", "/v1/pools/ladder/rounds", s.server_key, body, 200));
    j = expect(&s, "GET", "/v1/pools/ladder/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1036);
    assert_string_equal(json_string_value(json_object_get(j, "division")), "Gold");
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/ladder/players/p3", s.server_key, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "division")), "Bronze");
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/ladder/players/nobody", s.server_key, NULL, 200);
    assert_true(json_is_null(json_object_get(j, "division"))); /* not visible: no division */
    json_decref(j);

    /* Errors first: nothing may change. */
    json_decref(expect(&s, "POST", "/v1/pools/ladder/seasons", s.server_key, "{\"name\":\"S1\"}",
                       403));
    json_decref(expect(&s, "POST", "/v1/pools/ladder/seasons", s.admin_key, "{\"name\":\"S1\","
                       "\"f\":1.5}", 400));
    json_decref(expect(&s, "POST", "/v1/pools/ladder/seasons", s.admin_key, "{\"name\":\"\"}",
                       400));
    json_decref(expect(&s, "POST", "/v1/pools/ladder/seasons", s.admin_key, "{\"f\":0.5}", 400));
    json_decref(expect(&s, "POST", "/v1/pools/nope/seasons", s.admin_key, "{\"name\":\"S1\"}",
                       404));
    j = expect(&s, "GET", "/v1/pools/ladder/seasons", s.server_key, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(j, "seasons")), 0);
    json_decref(j);

    j = expect(&s, "POST", "/v1/pools/ladder/seasons", s.admin_key,
               "{\"name\":\"S1\",\"f\":0.5}", 201);
    assert_string_equal(json_string_value(json_object_get(j, "season")), "S1");
    assert_int_equal(jint(j, "players"), 4);
    json_decref(j);
    json_decref(expect(&s, "POST", "/v1/pools/ladder/seasons", s.admin_key, "{\"name\":\"S1\"}",
                       409));
    j = expect(&s, "GET", "/v1/pools/ladder/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rating"), 1018);
    assert_int_equal(jint(j, "rounds"), 1); /* kept */
    assert_string_equal(json_string_value(json_object_get(j, "division")), "Silver");
    json_decref(j);
    /* Splits see the season's ratings too: p1 at 1018 pairs with a 1000 against 1018 + 1000
     * (gap 0); at the old 1036 the least gap would be 18. */
    j = expect(&s, "POST", "/v1/pools/ladder/splits", s.server_key,
               "{\"players\":[\"p1\",{\"id\":\"x\",\"rating\":1018},{\"id\":\"y\",\"rating\":1000},"
               "{\"id\":\"z\",\"rating\":1000}]}", 200);
    assert_int_equal(jint(json_array_get(json_object_get(j, "splits"), 0), "gap"), 0);
    json_decref(j);

    /* The archive: final standings, best first, paged. */
    j = expect(&s, "GET", "/v1/pools/ladder/seasons/S1?limit=2", s.server_key, NULL, 200);
    json_t *st = json_object_get(j, "standings");
    assert_int_equal(json_array_size(st), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(st, 0), "id")), "p1");
    assert_int_equal(jint(json_array_get(st, 0), "rating"), 1036);
    assert_int_equal(jint(json_array_get(st, 0), "rank"), 1);
    assert_string_equal(json_string_value(json_object_get(json_array_get(st, 1), "id")), "p2");
    json_decref(j);
    j = expect(&s, "GET", "/v1/pools/ladder/seasons/S1?offset=2", s.server_key, NULL, 200);
    st = json_object_get(j, "standings");
    assert_int_equal(json_array_size(st), 2);
    assert_int_equal(jint(json_array_get(st, 0), "rank"), 3);
    assert_int_equal(jint(json_array_get(st, 1), "rating"), 964);
    json_decref(j);
    json_decref(expect(&s, "GET", "/v1/pools/ladder/seasons/S1?limit=x", s.server_key, NULL, 400));
    json_decref(expect(&s, "GET", "/v1/pools/ladder/seasons/S2", s.server_key, NULL, 404));
    j = expect(&s, "GET", "/v1/pools/ladder/seasons", s.server_key, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(j, "seasons")), 1);
    assert_int_equal(jint(json_array_get(json_object_get(j, "seasons"), 0), "players"), 4);
    json_decref(j);

    /* A restart folds the log, season included: the same state, and rating goes on from it. */
    int st_code = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st_code), 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    round_json(body, sizeof body, "r2", "p1", "p2", "p3", "p4", "A");
    j = expect(&s, "POST", "/v1/pools/ladder/rounds", s.server_key, body, 200);
    /* 1018 + 1018 vs 982 + 982: P_A = 1 / (1 + e^(-72/2400)) = 0.5074994; one window entry,
     * so C = 1; G(1018) = exp(-18² / (2·400²)) = 0.9989880, K = 2 + 70·G = 71.929;
     * 1018 + 71.929 · (1 - 0.5074994) = 1053.43 -> 1053 (by hand, not with our code). */
    json_t *m0 = json_array_get(json_object_get(j, "players"), 0);
    assert_int_equal(jint(m0, "rating"), 1053);
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- malformed requests ------------------------------------------------------------------ */

enum { K_NONE, K_SERVER, K_ADMIN, K_WRONG };

typedef struct bad_case {
    const char *method, *path;
    int key;
    const char *ctype; /* NULL: application/json */
    const char *body;  /* NULL: none; "@BIG": 1 MiB + 1 bytes */
    long status;
    const char *code;  /* NULL: any code */
    const char *extra_header;
} bad_case;

#define ROUND_OK_TAIL "\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x2\"]}"

static const bad_case bad_cases[] = {
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{", 400, "invalid_json", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "", 400, "invalid_json", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "[]", 400, "invalid_request", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"id\":\"q\"," ROUND_OK_TAIL, 400, "invalid_json", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"x\":\"\xff\"," ROUND_OK_TAIL, 400, "invalid_json", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":5,\"A\":[\"x1\"],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"C\",\"A\":[\"x1\"],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"A\",\"A\":[],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x1\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"A\",\"A\":[{\"id\":\"x1\",\"time\":1.5}],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"A\",\"A\":[{\"id\":\"x1\",\"joined\":50,\"left\":10}],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"winner\":\"A\",\"A\":[\"x1\"],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":\"q\",\"winner\":\"A\",\"A\":[\"x\\u0001\"],\"B\":[\"x2\"]}", 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "{\"id\":7," ROUND_OK_TAIL, 400, "invalid_round", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, NULL, "@BIG", 413, "body_too_large", NULL},
    {"POST", "/v1/pools/nope/rounds", K_SERVER, NULL, "{\"id\":\"q\"," ROUND_OK_TAIL, 404, "unknown_pool", NULL},
    {"POST", "/v1/pools/arena/rounds", K_NONE, NULL, "{\"id\":\"q\"," ROUND_OK_TAIL, 401, "unauthorized", NULL},
    {"POST", "/v1/pools/arena/rounds", K_WRONG, NULL, "{\"id\":\"q\"," ROUND_OK_TAIL, 401, "unauthorized", NULL},
    {"GET", "/v1/pools/arena/players/x1", K_NONE, NULL, NULL, 401, "unauthorized", "Authorization: Basic dXNlcjpwYXNz"},
    {"POST", "/v1/pools", K_SERVER, NULL, "{\"name\":\"zz\"}", 403, "forbidden", NULL},
    {"GET", "/v1/pools", K_SERVER, NULL, NULL, 403, "forbidden", NULL},
    {"PUT", "/v1/pools/arena/players/x1", K_SERVER, NULL, "{\"rating\":1200}", 403, "forbidden", NULL},
    {"DELETE", "/v1/pools/arena/players/p1", K_SERVER, NULL, NULL, 403, "forbidden", NULL},
    {"GET", "/v1/pools/arena/quality", K_SERVER, NULL, NULL, 403, "forbidden", NULL},
    {"GET", "/v1/pools/arena/players/%zz", K_SERVER, NULL, NULL, 400, "invalid_path", NULL},
    {"GET", "/v1/pools/arena/players/a%01b", K_SERVER, NULL, NULL, 400, "invalid_path", NULL},
    {"GET", "/v1/pools/arena/players/%C3%28", K_SERVER, NULL, NULL, 400, "invalid_path", NULL},
    {"GET", "/v1/pools/arena/players/"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
     K_SERVER, NULL, NULL, 400, "invalid_path", NULL},
    {"DELETE", "/v1/pools/arena/rounds", K_ADMIN, NULL, NULL, 405, "method_not_allowed", NULL},
    {"PATCH", "/v1/pools", K_ADMIN, NULL, NULL, 405, "method_not_allowed", NULL},
    {"GET", "/v1/nothing", K_ADMIN, NULL, NULL, 404, "not_found", NULL},
    {"GET", "/v1/pools/arena", K_ADMIN, NULL, NULL, 404, "not_found", NULL},
    {"GET", "/v1/pools/arena/players/", K_ADMIN, NULL, NULL, 404, "not_found", NULL},
    {"POST", "/v1/pools/arena/rounds", K_SERVER, "text/plain", "{\"id\":\"q\"," ROUND_OK_TAIL, 415, "unsupported_media_type", NULL},
    {"PUT", "/v1/pools/arena/players/x1", K_ADMIN, NULL, "{\"rating\":\"abc\"}", 400, "invalid_request", NULL},
    {"PUT", "/v1/pools/arena/players/x1", K_ADMIN, NULL, "{\"rating\":1.5}", 400, "invalid_request", NULL},
    {"PUT", "/v1/pools/arena/players/x1", K_ADMIN, NULL, "{\"rating\":1200,\"bonus\":1}", 400, "invalid_request", NULL},
    {"PUT", "/v1/pools/arena/players/x1", K_ADMIN, NULL, "{\"rating\":2000000}", 400, "invalid_request", NULL},
    {"PUT", "/v1/pools/nope/players/x1", K_ADMIN, NULL, "{\"rating\":1200}", 404, "unknown_pool", NULL},
    {"POST", "/v1/pools", K_ADMIN, NULL, "{\"model\":\"synelo\"}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools", K_ADMIN, NULL, "{\"name\":\"zz\",\"model\":\"glicko9\"}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools", K_ADMIN, NULL, "{\"name\":\"zz\",\"params\":{\"foo\":1}}", 400, NULL, NULL},
    {"POST", "/v1/pools", K_ADMIN, NULL, "{\"name\":\"zz\",\"params\":[1]}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools", K_ADMIN, NULL, "{\"name\":\"arena\"}", 409, NULL, NULL},
    {"POST", "/v1/pools/arena/splits", K_SERVER, NULL, "{\"players\":[\"a\"]}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools/arena/splits", K_SERVER, NULL, "{\"players\":[\"a\",\"b\",\"a\",\"c\"]}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools/arena/splits", K_SERVER, NULL, "{\"players\":\"abcd\"}", 400, "invalid_request", NULL},
    {"POST", "/v1/pools/arena/splits", K_SERVER, NULL, "{\"players\":[\"a\",\"b\",\"c\",{\"id\":\"d\",\"rating\":\"high\"}]}", 400, "invalid_request", NULL},
    {"GET", "/v1/pools/nope/quality", K_ADMIN, NULL, NULL, 404, "unknown_pool", NULL},
};

/* The status and body of a GET of each of @p paths[0..n), one per line (admin key). */
static char *snapshot_of(const e2e_server *s, const char *const *paths, size_t n)
{
    size_t cap = 1, len = 0;
    char *out = calloc(1, 1);
    for (size_t i = 0; i < n; i++) {
        e2e_resp r;
        assert_int_equal(e2e_call(s, "GET", paths[i], s->admin_key, NULL, &r), 0);
        char head[16];
        int hn = snprintf(head, sizeof head, "%ld ", r.status);
        cap += (size_t)hn + r.len + 1;
        out = realloc(out, cap);
        assert_non_null(out);
        memcpy(out + len, head, (size_t)hn);
        len += (size_t)hn;
        memcpy(out + len, r.body, r.len);
        len += r.len;
        out[len++] = '\n';
        out[len] = '\0';
        e2e_resp_free(&r);
    }
    return out;
}

/* What must not change: the pool list, arena's quality and two players. */
static char *snapshot(const e2e_server *s)
{
    const char *paths[] = {"/v1/pools", "/v1/pools/arena/quality", "/v1/pools/arena/players/p1",
                           "/v1/pools/arena/players/x1", "/v1/pools/zz/quality"};
    return snapshot_of(s, paths, sizeof paths / sizeof paths[0]);
}

static void test_malformed(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "arena");
    char round[512];
    round_json(round, sizeof round, "r1", "p1", "p2", "p3", "p4", "A");
    json_decref(expect(&s, "POST", "/v1/pools/arena/rounds", s.server_key, round, 200));

    size_t big_n = (1u << 20) + 1;
    char *big = malloc(big_n + 1);
    assert_non_null(big);
    memset(big, ' ', big_n);
    big[0] = '{';
    big[big_n - 1] = '}';
    big[big_n] = '\0';

    char *before = snapshot(&s);
    assert_true(sizeof bad_cases / sizeof bad_cases[0] >= 30);
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        const bad_case *c = &bad_cases[i];
        const char *key = c->key == K_SERVER ? s.server_key
                          : c->key == K_ADMIN ? s.admin_key
                          : c->key == K_WRONG ? "0123456789abcdef0123456789abcdef"
                                              : NULL;
        const char *body = c->body && strcmp(c->body, "@BIG") == 0 ? big : c->body;
        const char *hdrs[] = {c->extra_header, NULL};
        e2e_resp r;
        int rc = e2e_request(&s, c->method, c->path, key, c->ctype, body, body ? strlen(body) : 0,
                             c->extra_header ? hdrs : NULL, &r);
        if (rc != 0 || r.status != c->status || !e2e_is_error(&r, c->code) ||
            !strstr(r.ctype, "application/json"))
            fprintf(stderr, "case %zu: %s %s -> rc %d status %ld (want %ld %s) %s\n", i, c->method,
                    c->path, rc, r.status, c->status, c->code ? c->code : "", r.body);
        assert_int_equal(rc, 0);
        assert_int_equal(r.status, c->status);
        assert_true(e2e_is_error(&r, c->code));
        assert_non_null(strstr(r.ctype, "application/json"));
        if (c->status == 405)
            assert_true(r.allow[0] != '\0');
        e2e_resp_free(&r);
    }
    char *after = snapshot(&s);
    assert_string_equal(before, after);
    free(before);
    free(after);
    free(big);

    /* 405 names what is allowed. */
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "DELETE", "/v1/pools/arena/rounds", s.admin_key, NULL, &r), 0);
    assert_string_equal(r.allow, "GET, HEAD, POST");
    e2e_resp_free(&r);
    /* An id with an encoded '/' is one segment: a valid (unknown) player. */
    json_t *j = expect(&s, "GET", "/v1/pools/arena/players/a%2Fb", s.server_key, NULL, 200);
    assert_string_equal(json_string_value(json_object_get(j, "id")), "a/b");
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- kill -9 in the middle of a burst ------------------------------------------------------ */

#define BURST_THREADS 3
#define BURST_MAX 400

typedef struct burst {
    const e2e_server *s;
    int t;
    atomic_int sent, acked; /* read by the main thread while the sender runs */
    char *answer[BURST_MAX];
    atomic_int *stop;
} burst;

static void burst_round(char *buf, size_t cap, int t, int i)
{
    char id[32], p[4][16];
    snprintf(id, sizeof id, "t%d-r%d", t, i);
    for (int k = 0; k < 4; k++)
        snprintf(p[k], sizeof p[k], "t%dp%d", t, k);
    round_json(buf, cap, id, p[0], p[1], p[2], p[3], i % 2 ? "B" : "A");
}

static void *burst_main(void *arg)
{
    burst *b = arg;
    char round[512];
    for (int i = 0; i < BURST_MAX && !*b->stop; i++) {
        burst_round(round, sizeof round, b->t, i);
        e2e_resp r;
        b->sent = i + 1;
        if (e2e_call(b->s, "POST", "/v1/pools/burst/rounds", b->s->server_key, round, &r) != 0 ||
            r.status != 200) {
            e2e_resp_free(&r);
            break;
        }
        b->answer[i] = r.body;
        b->acked = i + 1;
    }
    return NULL;
}

static void test_kill9(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "burst");
    atomic_int stop = 0;
    burst b[BURST_THREADS];
    pthread_t th[BURST_THREADS];
    memset(b, 0, sizeof b);
    for (int t = 0; t < BURST_THREADS; t++) {
        b[t].s = &s;
        b[t].t = t;
        b[t].stop = &stop;
        assert_int_equal(pthread_create(&th[t], NULL, burst_main, &b[t]), 0);
    }
    /* Kill once some rounds are acknowledged, while the threads keep sending. */
    for (int waited = 0; waited < 20000; waited += 5) {
        int acked = 0;
        for (int t = 0; t < BURST_THREADS; t++)
            acked += b[t].acked;
        if (acked >= 100)
            break;
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int st;
    e2e_stop(&s, SIGKILL, 5000, &st);
    assert_int_equal(st, 128 + SIGKILL);
    stop = 1;
    for (int t = 0; t < BURST_THREADS; t++)
        pthread_join(th[t], NULL);

    print_message("kill -9 after %d+%d+%d acknowledged rounds\n", b[0].acked, b[1].acked,
                  b[2].acked);
    assert_int_equal(e2e_start(&s, NULL), 0);
    json_int_t total = 0;
    for (int t = 0; t < BURST_THREADS; t++) {
        /* Each thread's rounds are sequential and all four of its players play in each, so
         * every one of them has played exactly the stored rounds of the thread: the acknowledged
         * ones and at most the one in flight at the kill. */
        json_int_t count = -1;
        for (int k = 0; k < 4; k++) {
            char path[64];
            snprintf(path, sizeof path, "/v1/pools/burst/players/t%dp%d", t, k);
            json_t *j = expect(&s, "GET", path, s.server_key, NULL, 200);
            if (count < 0)
                count = jint(j, "rounds");
            assert_int_equal(jint(j, "rounds"), count); /* nothing half-applied */
            json_decref(j);
        }
        assert_true(count >= b[t].acked);
        assert_true(count <= b[t].acked + 1);
        assert_true(count <= b[t].sent);
        total += count;
    }
    json_t *q = expect(&s, "GET", "/v1/pools/burst/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(q, "rounds"), total);
    json_decref(q);
    /* Every acknowledged round is there exactly once: resending gives the first answer. */
    char round[512];
    for (int t = 0; t < BURST_THREADS; t++)
        for (int i = 0; i < b[t].acked; i++) {
            burst_round(round, sizeof round, t, i);
            e2e_resp r;
            assert_int_equal(e2e_call(&s, "POST", "/v1/pools/burst/rounds", s.server_key, round, &r), 0);
            assert_int_equal(r.status, 200);
            assert_string_equal(r.body, b[t].answer[i]);
            e2e_resp_free(&r);
            free(b[t].answer[i]);
        }
    q = expect(&s, "GET", "/v1/pools/burst/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(q, "rounds"), total);
    json_decref(q);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- SIGTERM drains ----------------------------------------------------------------------- */

static void test_sigterm(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "burst");
    atomic_int stop = 0;
    burst b[2];
    pthread_t th[2];
    memset(b, 0, sizeof b);
    for (int t = 0; t < 2; t++) {
        b[t].s = &s;
        b[t].t = t;
        b[t].stop = &stop;
        assert_int_equal(pthread_create(&th[t], NULL, burst_main, &b[t]), 0);
    }
    for (int waited = 0; waited < 20000 && b[0].acked + b[1].acked < 10; waited += 5) {
        struct timespec ts = {0, 5 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    stop = 1;
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    assert_int_equal(e2e_start(&s, NULL), 0);
    for (int t = 0; t < 2; t++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/pools/burst/players/t%dp0", t);
        json_t *j = expect(&s, "GET", path, s.server_key, NULL, 200);
        assert_true(jint(j, "rounds") >= b[t].acked);
        assert_true(jint(j, "rounds") <= b[t].sent);
        json_decref(j);
        for (int i = 0; i < b[t].acked; i++)
            free(b[t].answer[i]);
    }
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* Updates that arrive while the service stops, on connections it accepted before the signal.
 * Regression: the drain used to end as soon as no request was in flight, and a round whose
 * request was read in the HTTP threads' last turn parked its connection for the writer; the
 * library then aborted ("MHD_stop_daemon() called while we have suspended connections", exit
 * 134). Each update sent now is either answered 200 and stored, answered 503 and not stored, or
 * dropped unanswered with the connection, and the service always exits 0. The requests are
 * spread over a few milliseconds from the moment the log says "draining", to hit the end of the
 * drain. Before the fix about one round in three aborted (11 of 34) on a loaded 2-core machine
 * under ASan, so the test failed in 11 of 12 runs; after it, 60 rounds in a row passed. Run
 * only this test with EO_TEST_ONLY=test_sigterm_race to loop on it. */
enum { RACE_ROUNDS = 6, RACE_CONNS = 24 };

static bool log_has(const e2e_server *s, const char *needle)
{
    char *log = e2e_read_log(s);
    bool has = log && strstr(log, needle);
    free(log);
    return has;
}

static void test_sigterm_race(void **state)
{
    (void)state;
    for (int k = 0; k < RACE_ROUNDS; k++) {
        e2e_server s;
        start(&s, NULL);
        create_pool(&s, "race");
        int fd[RACE_CONNS];
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)s.port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        for (int i = 0; i < RACE_CONNS; i++) {
            fd[i] = socket(AF_INET, SOCK_STREAM, 0);
            assert_true(fd[i] >= 0);
            assert_int_equal(connect(fd[i], (struct sockaddr *)&sa, sizeof sa), 0);
        }
        struct timespec settle = {0, 50 * 1000 * 1000}; /* let the service accept them all */
        nanosleep(&settle, NULL);

        assert_int_equal(kill(s.pid, SIGTERM), 0);
        for (int i = 0; i < 4000 && !log_has(&s, "msg=draining"); i++) {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
        for (int i = 0; i < RACE_CONNS; i++) {
            char round[512], req[1024], id[32], p[4][32];
            snprintf(id, sizeof id, "r%d", i);
            for (int j = 0; j < 4; j++)
                snprintf(p[j], sizeof p[j], "c%dp%d", i, j);
            round_json(round, sizeof round, id, p[0], p[1], p[2], p[3], "A");
            int n = snprintf(req, sizeof req,
                             "POST /v1/pools/race/rounds HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                             "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
                             s.server_key, strlen(round), round);
            /* The service may already have closed the connection: MSG_NOSIGNAL, any result. */
            (void)send(fd[i], req, (size_t)n, MSG_NOSIGNAL);
            struct timespec ts = {0, 50 * 1000};
            nanosleep(&ts, NULL);
        }
        int st = -1;
        assert_int_equal(e2e_stop(&s, 0, 20000, &st), 0); /* already signalled: just wait */
        if (st != 0) {
            char *log = e2e_read_log(&s);
            fprintf(stderr, "round %d: exit %d\n%s\n", k, st, log ? log : "");
            free(log);
        }
        assert_int_equal(st, 0);

        int answer[RACE_CONNS]; /* HTTP status, 0 for none */
        for (int i = 0; i < RACE_CONNS; i++) {
            char resp[2048];
            size_t got = 0;
            ssize_t n;
            while (got < sizeof resp - 1 &&
                   (n = recv(fd[i], resp + got, sizeof resp - 1 - got, 0)) > 0)
                got += (size_t)n;
            resp[got] = '\0';
            close(fd[i]);
            answer[i] = strncmp(resp, "HTTP/1.1 ", 9) == 0 ? (int)strtol(resp + 9, NULL, 10) : 0;
            assert_true(answer[i] == 0 || answer[i] == 200 || answer[i] == 503);
        }
        assert_int_equal(e2e_start(&s, NULL), 0);
        int ok = 0, refused = 0;
        for (int i = 0; i < RACE_CONNS; i++) {
            char path[64];
            snprintf(path, sizeof path, "/v1/pools/race/players/c%dp0", i);
            e2e_resp r;
            assert_int_equal(e2e_call(&s, "GET", path, s.server_key, NULL, &r), 0);
            json_t *j = r.status == 200 ? e2e_json(&r) : NULL;
            json_int_t rounds = j ? jint(j, "rounds") : 0;
            json_decref(j);
            e2e_resp_free(&r);
            if (answer[i] == 200) {
                assert_int_equal(rounds, 1);
                ok++;
            } else if (answer[i] == 503) {
                assert_int_equal(rounds, 0);
                refused++;
            }
        }
        print_message("sigterm race %d: %d stored, %d refused, %d unanswered\n", k, ok, refused,
                      RACE_CONNS - ok - refused);
        stop_clean(&s);
        e2e_cleanup(&s);
    }
}

/* ---- refusing to start ---------------------------------------------------------------------- */

static void test_startup_errors(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char err[2048];
    const char *noconf[] = {"evenodds", "serve", "--db", s.db, "--listen", "127.0.0.1:0", NULL};
    assert_int_equal(e2e_run(noconf, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "EVENODDS_SERVER_KEY"));
    assert_non_null(strstr(err, "EVENODDS_ADMIN_KEY"));

    /* A 15-character key is one short of the minimum. */
    const char *withconf[] = {"evenodds", "serve", "--db", s.db, "--listen", "127.0.0.1:0",
                              "--config", s.config, NULL};
    assert_int_equal(e2e_run(withconf, "EVENODDS_ADMIN_KEY=abcdefghijklmno", err, sizeof err), 2);
    assert_non_null(strstr(err, "16"));
    assert_null(strstr(err, "abcdefghijklmno"));

    /* A keys file others can read is refused, and its keys are not echoed. */
    assert_int_equal(chmod(s.config, 0644), 0);
    assert_int_equal(e2e_run(withconf, NULL, err, sizeof err), 2);
    assert_non_null(strstr(err, "chmod 600"));
    assert_null(strstr(err, s.server_key));
    assert_int_equal(chmod(s.config, 0600), 0);

    const char *nodb[] = {"evenodds", "serve", "--listen", "127.0.0.1:0", NULL};
    assert_int_equal(e2e_run(nodb, NULL, err, sizeof err), 2);
    const char *badlisten[] = {"evenodds", "serve", "--db", s.db, "--listen", "nowhere",
                               "--config", s.config, NULL};
    assert_int_equal(e2e_run(badlisten, NULL, err, sizeof err), 1);
    assert_non_null(strstr(err, "--listen"));
    e2e_cleanup(&s);
}

/* ---- keep-alive and concurrent duplicates ---------------------------------------------------- */

static size_t discard(char *d, size_t sz, size_t nm, void *ud)
{
    (void)d;
    (void)ud;
    return sz * nm;
}

/* Every request after the first reuses the connection: answers are queued only once a request
 * is complete, and updates answered by the writer keep the connection too. */
static void test_keepalive(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "arena");
    char round[512], auth[128], url[256];
    round_json(round, sizeof round, "k1", "p1", "p2", "p3", "p4", "A");
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", s.server_key);
    struct curl_slist *h = curl_slist_append(NULL, auth);
    h = curl_slist_append(h, "Content-Type: application/json");
    h = curl_slist_append(h, "Expect:");
    CURL *c = curl_easy_init();
    assert_non_null(c);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    struct {
        const char *method, *path, *body;
        long status;
    } seq[] = {
        {"GET", "/healthz", NULL, 200},
        {"POST", "/v1/pools/arena/rounds", round, 200},
        {"GET", "/v1/pools/arena/players/p1", NULL, 200},
        {"POST", "/v1/pools/arena/splits", "{\"players\":[\"p1\",\"p2\",\"p3\",\"p4\"]}", 200},
        {"POST", "/v1/pools/arena/rounds", "{", 400},
        {"POST", "/v1/pools/arena/rounds", round, 200},
        {"GET", "/v1/pools/nope/players/p1", NULL, 404},
    };
    for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
        snprintf(url, sizeof url, "%s%s", s.url, seq[i].path);
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, seq[i].method);
        if (seq[i].body)
            curl_easy_setopt(c, CURLOPT_POSTFIELDS, seq[i].body);
        else
            curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
        assert_int_equal(curl_easy_perform(c), CURLE_OK);
        long status = 0, connects = -1;
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_easy_getinfo(c, CURLINFO_NUM_CONNECTS, &connects);
        assert_int_equal(status, seq[i].status);
        assert_int_equal(connects, i == 0 ? 1 : 0);
    }
    curl_easy_cleanup(c);
    curl_slist_free_all(h);
    stop_clean(&s);
    e2e_cleanup(&s);
}

typedef struct dup_arg {
    const e2e_server *s;
    const char *round;
    e2e_resp r;
    int rc;
} dup_arg;

static void *dup_main(void *p)
{
    dup_arg *a = p;
    a->rc = e2e_call(a->s, "POST", "/v1/pools/arena/rounds", a->s->server_key, a->round, &a->r);
    return NULL;
}

/* The same round from several clients at once (often in one batch): one update, one answer. */
static void test_concurrent_duplicates(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "arena");
    char round[512];
    round_json(round, sizeof round, "dup", "p1", "p2", "p3", "p4", "B");
    dup_arg a[6];
    pthread_t th[6];
    for (int i = 0; i < 6; i++) {
        a[i].s = &s;
        a[i].round = round;
        assert_int_equal(pthread_create(&th[i], NULL, dup_main, &a[i]), 0);
    }
    for (int i = 0; i < 6; i++)
        pthread_join(th[i], NULL);
    for (int i = 0; i < 6; i++) {
        assert_int_equal(a[i].rc, 0);
        assert_int_equal(a[i].r.status, 200);
        assert_string_equal(a[i].r.body, a[0].r.body);
    }
    for (int i = 0; i < 6; i++)
        e2e_resp_free(&a[i].r);
    json_t *q = expect(&s, "GET", "/v1/pools/arena/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(q, "rounds"), 1);
    json_decref(q);
    json_t *j = expect(&s, "GET", "/v1/pools/arena/players/p3", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- a full writer queue ----------------------------------------------------------------------- */

typedef struct flood {
    const e2e_server *s;
    int t, ok, busy, other;
} flood;

static void *flood_main(void *p)
{
    flood *f = p;
    char round[512], id[32], pl[4][16];
    for (int i = 0; i < 15; i++) {
        snprintf(id, sizeof id, "f%d-%d", f->t, i);
        for (int k = 0; k < 4; k++)
            snprintf(pl[k], sizeof pl[k], "f%dp%d", f->t, k);
        round_json(round, sizeof round, id, pl[0], pl[1], pl[2], pl[3], "A");
        e2e_resp r;
        if (e2e_call(f->s, "POST", "/v1/pools/arena/rounds", f->s->server_key, round, &r) != 0)
            f->other++;
        else if (r.status == 200)
            f->ok++;
        else if (r.status == 503 && strcmp(r.retry_after, "1") == 0 && e2e_is_error(&r, "overloaded"))
            f->busy++;
        else {
            fprintf(stderr, "flood: HTTP %ld %s (Retry-After '%s')\n", r.status, r.body,
                    r.retry_after);
            f->other++;
        }
        e2e_resp_free(&r);
    }
    return NULL;
}

/* With room for one queued update, concurrent clients get 200 or 503 + Retry-After, and only
 * the 200s are stored (each thread's players count exactly its accepted rounds). */
static void test_queue_full(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--queue-max", "1", "--batch-max", "1", NULL};
    start(&s, extra);
    create_pool(&s, "arena");
    flood f[6];
    pthread_t th[6];
    for (int t = 0; t < 6; t++) {
        memset(&f[t], 0, sizeof f[t]);
        f[t].s = &s;
        f[t].t = t;
        assert_int_equal(pthread_create(&th[t], NULL, flood_main, &f[t]), 0);
    }
    int ok = 0, busy = 0;
    for (int t = 0; t < 6; t++) {
        pthread_join(th[t], NULL);
        assert_int_equal(f[t].other, 0);
        ok += f[t].ok;
        busy += f[t].busy;
        char path[64];
        snprintf(path, sizeof path, "/v1/pools/arena/players/f%dp0", t);
        json_t *j = expect(&s, "GET", path, s.server_key, NULL, 200);
        assert_int_equal(jint(j, "rounds"), f[t].ok);
        json_decref(j);
    }
    print_message("queue-max 1: %d accepted, %d refused with 503\n", ok, busy);
    assert_int_equal(ok + busy, 6 * 15);
    json_t *q = expect(&s, "GET", "/v1/pools/arena/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(q, "rounds"), ok);
    json_decref(q);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- draining: in-flight requests finish, /readyz says 503 --------------------------------- */

static void test_drain(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "arena");

    /* A keep-alive connection opened before the signal, to ask /readyz while draining. */
    char url[256];
    long status = 0;
    CURL *c = curl_easy_init();
    assert_non_null(c);
    snprintf(url, sizeof url, "%s/readyz", s.url);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    assert_int_equal(curl_easy_perform(c), CURLE_OK);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    assert_int_equal(status, 200);

    /* A round whose body is only half sent: a request in flight. */
    char round[512], head[1024];
    round_json(round, sizeof round, "slow", "p1", "p2", "p3", "p4", "A");
    size_t blen = strlen(round), half = blen / 2;
    int hn = snprintf(head, sizeof head,
                      "POST /v1/pools/arena/rounds HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                      "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
                      s.server_key, blen);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)s.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(write(fd, head, (size_t)hn), hn);
    assert_int_equal(write(fd, round, half), (ssize_t)half);
    /* Wait until the service holds it: in flight = it plus the /metrics request asking. */
    bool held = false;
    for (int i = 0; i < 500 && !held; i++) {
        e2e_resp m;
        assert_int_equal(e2e_call(&s, "GET", "/metrics", NULL, NULL, &m), 0);
        held = strstr(m.body, "\nevenodds_http_requests_in_flight 2\n") != NULL;
        e2e_resp_free(&m);
        struct timespec ts = {0, 10 * 1000 * 1000};
        if (!held)
            nanosleep(&ts, NULL);
    }
    assert_true(held);

    assert_int_equal(kill(s.pid, SIGTERM), 0);
    /* Draining: not ready, on the connection that was already open. */
    bool saw503 = false;
    for (int i = 0; i < 1000 && !saw503; i++) {
        if (curl_easy_perform(c) == CURLE_OK) {
            curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
            saw503 = status == 503;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        if (!saw503)
            nanosleep(&ts, NULL);
    }
    assert_true(saw503);
    curl_easy_cleanup(c);

    /* The request in flight completes and is committed. */
    assert_int_equal(write(fd, round + half, blen - half), (ssize_t)(blen - half));
    char resp[4096];
    size_t got = 0;
    ssize_t n;
    while (got < sizeof resp - 1 && (n = read(fd, resp + got, sizeof resp - 1 - got)) > 0)
        got += (size_t)n;
    resp[got] = '\0';
    close(fd);
    assert_int_equal(strncmp(resp, "HTTP/1.1 200", 12), 0);
    assert_non_null(strstr(resp, "\"round\":\"slow\""));

    int st = -1;
    assert_int_equal(e2e_stop(&s, 0, 20000, &st), 0); /* already signalled: just wait */
    assert_int_equal(st, 0);
    assert_int_equal(e2e_start(&s, NULL), 0);
    json_t *j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), 1);
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- autobalance and scramble triggers (docs/BALANCER.md) -------------------------------- */

static const char *err_field(const json_t *j)
{
    return json_string_value(json_object_get(json_object_get(j, "error"), "field"));
}

static const char *err_code(const json_t *j)
{
    return json_string_value(json_object_get(json_object_get(j, "error"), "code"));
}

/* p1, p2 beat p3, p4 once (t_shadow 1): 1036 and 964 in the pool (test_seasons derives them).
 * Autobalance with A = p1..p4 (ratings from the pool: ΣA = 4000) against B = p5 (new: R0 1000)
 * and p6 (given 1000): 4v2, one move; D = 2000, T = 1000: 1036 and 964 tie at |gap| 72; p3 is
 * dead, so p3 moves (gap 4000 − 964 − 2964 = 72). A joiner p7 cannot join A (5v2): B. */
/* A new pool (presence on) learns from its rounds what a player more is worth, the writer
 * publishes it, and autobalance's predictor uses it: after 40 rounds in which the side of three
 * beat the side of two in 3 of 4, three newcomers against two are favoured, but not as the old
 * Elo "sum" called them (σ(1500·ln 10/400) = 0.9998: the start level of the extra member). */
static void test_presence_autobalance(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    static const char *const pools[] = {"{\"name\":\"new\",\"model\":\"elo\"}",
                                        "{\"name\":\"old\",\"model\":\"elo\",\"params\":"
                                        "{\"team\":\"sum\",\"presence\":\"off\"}}"};
    for (int p = 0; p < 2; p++)
        json_decref(expect(&s, "POST", "/v1/pools", s.admin_key, pools[p], 201));
    char body[512];
    for (int r = 0; r < 40; r++) {
        snprintf(body, sizeof body,
                 "{\"id\":\"r%d\",\"winner\":\"%s\",\"A\":[\"a%d\",\"b%d\"],"
                 "\"B\":[\"c%d\",\"d%d\",\"e%d\"]}",
                 r, r % 4 == 0 ? "A" : "B", r % 5, r % 7, r % 3, r % 11, r % 13);
        json_decref(expect(&s, "POST", "/v1/pools/new/rounds", s.server_key, body, 200));
    }
    const char *req = "{\"players\":[{\"id\":\"n1\",\"team\":\"A\"},{\"id\":\"n2\",\"team\":\"A\"},"
                      "{\"id\":\"n3\",\"team\":\"A\"},{\"id\":\"n4\",\"team\":\"B\"},"
                      "{\"id\":\"n5\",\"team\":\"B\"}]}";
    json_t *j = expect(&s, "POST", "/v1/pools/new/autobalance", s.server_key, req, 200);
    double pb = jnum(j, "p_before");
    json_decref(j);
    assert_true(pb > 0.55 && pb < 0.9);
    j = expect(&s, "POST", "/v1/pools/old/autobalance", s.server_key, req, 200);
    assert_true(jnum(j, "p_before") > 0.9998);
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

static void test_autobalance_triggers(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    /* presence off, as pools were before new pools' defaults: the 4v2 below is favoured by
     * the start level of its extra members (docs/MODELS.md "Presence") */
    json_decref(expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"ladder\",\"model\":\"synelo\",\"params\":{\"t_shadow\":1,"
                       "\"presence\":\"off\"}}",
                       201));
    char body[512];
    round_json(body, sizeof body, "r1", "p1", "p2", "p3", "p4", "A");
    json_decref(expect(&s, "POST", "/v1/pools/ladder/rounds", s.server_key, body, 200));

    const char *req =
        "{\"players\":[{\"id\":\"p1\",\"team\":\"A\"},{\"id\":\"p2\",\"team\":\"A\"},"
        "{\"id\":\"p3\",\"team\":\"A\",\"dead\":true},{\"id\":\"p4\",\"team\":\"A\"},"
        "{\"id\":\"p5\",\"team\":\"B\"},{\"id\":\"p6\",\"team\":\"B\",\"rating\":1000}],"
        "\"policy\":{\"delay\":0},\"joiner\":{\"id\":\"p7\"}}";
    json_t *j = expect(&s, "POST", "/v1/pools/ladder/autobalance", s.server_key, req, 200);
    assert_string_equal(json_string_value(json_object_get(j, "rule")), "size_gap");
    assert_string_equal(json_string_value(json_object_get(j, "action")), "act");
    assert_int_equal(jint(j, "sum_a"), 4000);
    assert_int_equal(jint(j, "sum_b"), 2000);
    assert_int_equal(jint(j, "gap_after"), 72);
    assert_true(jbool(j, "exact"));
    json_t *moves = json_object_get(j, "moves");
    assert_int_equal(json_array_size(moves), 1);
    json_t *m = json_array_get(moves, 0);
    assert_string_equal(json_string_value(json_object_get(m, "id")), "p3");
    assert_string_equal(json_string_value(json_object_get(m, "from")), "A");
    assert_string_equal(json_string_value(json_object_get(m, "to")), "B");
    assert_string_equal(json_string_value(json_object_get(m, "reason")), "size_gap");
    double pb = jnum(j, "p_before");
    assert_true(pb > 0.5 && pb < 1.0);
    json_t *jn = json_object_get(j, "joiner");
    assert_string_equal(json_string_value(json_object_get(jn, "team")), "B");
    assert_true(jbool(jn, "by_size"));
    json_decref(j);

    /* The default delay (10 s): first seen now, act at now + 10. */
    j = expect(&s, "POST", "/v1/pools/ladder/autobalance", s.server_key,
               "{\"now\":1763800000,\"players\":[{\"id\":\"p1\",\"team\":\"A\"},"
               "{\"id\":\"p2\",\"team\":\"A\"},{\"id\":\"p3\",\"team\":\"A\"}]}",
               200);
    assert_string_equal(json_string_value(json_object_get(j, "action")), "delay");
    assert_int_equal(jint(j, "act_at"), 1763800010);
    assert_int_equal(json_array_size(json_object_get(j, "moves")), 0);
    json_decref(j);

    /* Errors name the field; nothing is written. */
    j = expect(&s, "POST", "/v1/pools/ladder/autobalance", s.server_key,
               "{\"players\":[],\"policy\":{\"dealy\":0}}", 400);
    assert_string_equal(err_field(j), "policy.dealy");
    json_decref(j);
    j = expect(&s, "POST", "/v1/pools/ladder/autobalance", s.server_key,
               "{\"players\":[{\"id\":\"p1\",\"team\":\"C\"}]}", 400);
    assert_string_equal(err_field(j), "players[0].team");
    json_decref(j);
    json_decref(expect(&s, "POST", "/v1/pools/nope/autobalance", s.server_key, "{\"players\":[]}",
                       404));
    json_decref(expect(&s, "POST", "/v1/pools/ladder/autobalance", NULL, "{\"players\":[]}", 401));
    json_decref(expect(&s, "GET", "/v1/pools/ladder/autobalance", s.server_key, NULL, 405));

    /* Triggers: arena round 1 ended -> round 2 is always scrambled (seed 000). */
    j = expect(&s, "POST", "/v1/pools/ladder/triggers", s.server_key,
               "{\"mode\":\"arena\",\"round\":1,\"winner\":\"A\",\"wins\":[1,0],"
               "\"streak_team\":\"A\",\"streak\":1,\"players\":8}",
               200);
    assert_true(jbool(j, "scramble"));
    assert_string_equal(json_string_value(json_object_get(j, "rule")), "arena_round2");
    assert_string_equal(json_string_value(json_object_get(j, "guard")), "none");
    json_decref(j);
    /* KOTH shutout blocked near the map's end (time left 100 s <= 300 s). */
    j = expect(&s, "POST", "/v1/pools/ladder/triggers", s.server_key,
               "{\"mode\":\"koth\",\"round\":3,\"winner\":\"B\",\"wins\":[1,2],"
               "\"streak_team\":\"B\",\"streak\":1,\"captured\":[false,true],\"players\":12,"
               "\"time_left\":100}",
               200);
    assert_false(jbool(j, "scramble"));
    assert_string_equal(json_string_value(json_object_get(j, "rule")), "koth_shutout");
    assert_string_equal(json_string_value(json_object_get(j, "reason")), "map_end");
    json_decref(j);
    /* An inconsistent record: a 5-round streak after 2 rounds. */
    j = expect(&s, "POST", "/v1/pools/ladder/triggers", s.server_key,
               "{\"mode\":\"arena\",\"round\":2,\"winner\":\"A\",\"wins\":[2,0],"
               "\"streak_team\":\"A\",\"streak\":5,\"players\":8}",
               400);
    assert_string_equal(err_field(j), "streak");
    json_decref(j);
    j = expect(&s, "POST", "/v1/pools/ladder/triggers", s.server_key, "{\"mode\":\"dm\"}", 400);
    assert_string_equal(err_field(j), "mode");
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- splits with balancer inputs (docs/SERVICE.md) ----------------------------------------- */

/* Balancer inputs through POST /v1/pools/{pool}/splits, expected answers derived by hand. */
static void test_splits_balancer(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "bal"); /* SynElo, kmax_team 12: Θ 2400, so ε = 96 for the default 0.01 */

    /* Rebalance, k = 3 of 7: A = a 1000, b 1100, e 950 (locked A): 3050; B = c 1200 and d 900
     * (party p), g 1050: 3150; f has no team and no rating here (the pool's R0 1000). With f
     * out, |D| = 100 > 96: no answer with 0 moves. One move: a or b to the bench with f on A
     * gives 3050 : 3150 or 2950 : 3150; g to the bench with f on B gives 3050 : 3100, |D| = 50
     * <= 96. So g sits out (a move: the bench counts) and f plays for B. */
    const char *req =
        "{\"players\":[{\"id\":\"a\",\"rating\":1000,\"team\":\"A\"},"
        "{\"id\":\"b\",\"rating\":1100,\"team\":\"A\"},"
        "{\"id\":\"c\",\"rating\":1200,\"team\":\"B\",\"party\":\"p\"},"
        "{\"id\":\"d\",\"rating\":900,\"team\":\"B\",\"party\":\"p\"},"
        "{\"id\":\"e\",\"rating\":950,\"team\":\"A\",\"lock\":\"A\"},"
        "{\"id\":\"f\"},"
        "{\"id\":\"g\",\"rating\":1050,\"team\":\"B\"}],\"mode\":\"rebalance\",\"k_min\":3,"
        "\"budget_ms\":500}";
    json_t *j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key, req, 200);
    json_t *sp = json_object_get(j, "splits");
    assert_int_equal(json_array_size(sp), 1);
    json_t *k3 = json_array_get(sp, 0);
    assert_int_equal(jint(k3, "k"), 3);
    assert_int_equal(jint(k3, "gap"), 50);
    assert_int_equal(jint(k3, "epsilon"), 96);
    assert_true(jbool(k3, "exact"));
    assert_int_equal(jint(k3, "parties_broken"), 0);
    assert_true(jnum(k3, "p_a") < 0.5);
    json_t *tb = json_object_get(k3, "B");
    assert_int_equal(json_array_size(tb), 3);
    assert_string_equal(json_string_value(json_array_get(tb, 2)), "f");
    json_t *bench = json_object_get(k3, "bench");
    assert_int_equal(json_array_size(bench), 1);
    assert_string_equal(json_string_value(json_array_get(bench, 0)), "g");
    json_t *moves = json_object_get(k3, "moves");
    assert_int_equal(json_array_size(moves), 1);
    json_t *m0 = json_array_get(moves, 0);
    assert_string_equal(json_string_value(json_object_get(m0, "id")), "g");
    assert_string_equal(json_string_value(json_object_get(m0, "from")), "B");
    assert_string_equal(json_string_value(json_object_get(m0, "to")), "bench");
    json_t *terms = json_object_get(k3, "terms");
    assert_int_equal(jint(terms, "moves"), 1);
    assert_int_equal(jint(terms, "dev"), 50);
    assert_int_equal(jint(terms, "broken"), 0);
    assert_int_equal(jint(terms, "denied"), 0);
    json_decref(j);

    /* Scramble by hand, k = 2: a 1200, b 800, c 1000, d 1000 and "epsilon": 0.5 (every split
     * near-optimal): {a,b} v {c,d} has spreads 200² and 0, {a,c} v {b,d} puts the two best (a,
     * then c by request order) together, {a,d} v {b,c} neither (A holds a). A map is accepted
     * (no map bias yet). */
    j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key,
               "{\"players\":[{\"id\":\"a\",\"rating\":1200},{\"id\":\"b\",\"rating\":800},"
               "{\"id\":\"c\",\"rating\":1000},{\"id\":\"d\",\"rating\":1000}],"
               "\"mode\":\"scramble\",\"epsilon\":0.5,\"map\":\"cp_well\"}",
               200);
    json_t *k2 = json_array_get(json_object_get(j, "splits"), 0);
    json_t *ta = json_object_get(k2, "A");
    assert_int_equal(json_array_size(ta), 2);
    assert_string_equal(json_string_value(json_array_get(ta, 0)), "a");
    assert_string_equal(json_string_value(json_array_get(ta, 1)), "d");
    assert_int_equal(jint(k2, "gap"), 400);
    assert_int_equal(jint(json_object_get(k2, "terms"), "top2"), 0);
    assert_true(jnum(json_object_get(k2, "terms"), "spread") == 0.0);
    assert_true(jnum(json_object_get(k2, "terms"), "spread_sd") == 0.0);
    assert_int_equal(json_array_size(json_object_get(k2, "moves")), 0);
    assert_int_equal(jint(k2, "spread_epsilon"), 1); /* the default: one SynElo point */
    assert_true(json_equal(json_object_get(k2, "bound"), json_object_get(k2, "terms")));
    json_decref(j);

    /* The spread tolerance: with "epsilon": 0 only {a,b} v {c,d} has gap 0 (sds 200 and 0);
     * any "spread_epsilon" keeps it, and the answer echoes the tolerance used. */
    j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key,
               "{\"players\":[{\"id\":\"a\",\"rating\":1200},{\"id\":\"b\",\"rating\":800},"
               "{\"id\":\"c\",\"rating\":1000},{\"id\":\"d\",\"rating\":1000}],"
               "\"mode\":\"scramble\",\"epsilon\":0,\"spread_epsilon\":250}",
               200);
    k2 = json_array_get(json_object_get(j, "splits"), 0);
    assert_int_equal(jint(k2, "spread_epsilon"), 250);
    assert_int_equal(jint(k2, "gap"), 0);
    assert_true(jnum(json_object_get(k2, "terms"), "spread_sd") == 200.0);
    json_decref(j);

    /* A party larger than k: that k's entry names it, the others are answered. */
    j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key,
               "{\"players\":[\"a\",{\"id\":\"b\",\"party\":\"trio\"},{\"id\":\"c\",\"party\":"
               "\"trio\"},{\"id\":\"d\",\"party\":\"trio\"},\"e\",\"f\"]}",
               200);
    sp = json_object_get(j, "splits");
    assert_int_equal(json_array_size(sp), 2);
    json_t *e = json_object_get(json_array_get(sp, 0), "error");
    assert_string_equal(json_string_value(json_object_get(e, "code")), "party_too_large");
    assert_string_equal(json_string_value(json_object_get(e, "party")), "trio");
    assert_string_equal(json_string_value(json_object_get(e, "field")), "players[1].party");
    assert_null(json_object_get(json_array_get(sp, 1), "error"));
    json_decref(j);

    /* Errors name the field. */
    static const struct {
        const char *body, *field;
    } bad[] = {
        {"{\"players\":[{\"id\":\"a\",\"team\":\"C\"},\"b\"]}", "players[0].team"},
        {"{\"players\":[\"a\",\"b\"],\"epsilon\":2}", "epsilon"},
        {"{\"players\":[\"a\",\"b\"],\"spread_epsilon\":-3}", "spread_epsilon"},
        {"{\"players\":[\"a\",\"b\"],\"mode\":\"swap\"}", "mode"},
        {"{\"players\":[\"a\",\"b\"],\"budget_ms\":0}", "budget_ms"},
        {"{\"players\":[\"a\",\"b\"],\"map\":\"\"}", "map"},
        {"{\"players\":[\"a\",\"b\",\"c\",\"d\"],\"k_max\":3}", "k_max"},
        {"{\"players\":[\"a\",\"b\"],\"mode\":\"scramble\",\"bench\":\"queue\"}", "bench"},
        {"{\"players\":[{\"id\":\"a\",\"party\":\"p\",\"lock\":\"A\"},{\"id\":\"b\",\"party\":"
         "\"p\",\"lock\":\"B\"}]}",
         "players[1].party"},
        {"{\"players\":[{\"id\":\"a\",\"team\":\"B\",\"protected\":true,\"lock\":\"A\"},\"b\"]}",
         "players[0].lock"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key, bad[i].body, 400);
        assert_string_equal(json_string_value(json_object_get(json_object_get(j, "error"),
                                                               "code")),
                            "invalid_request");
        assert_string_equal(err_field(j), bad[i].field);
        json_decref(j);
    }
    /* A plain request keeps the splitter's answer (no balancer fields). */
    j = expect(&s, "POST", "/v1/pools/bal/splits", s.server_key,
               "{\"players\":[{\"id\":\"a\",\"rating\":1200},{\"id\":\"b\",\"rating\":800},"
               "{\"id\":\"c\",\"rating\":1000},{\"id\":\"d\",\"rating\":1000}]}",
               200);
    k2 = json_array_get(json_object_get(j, "splits"), 0);
    assert_int_equal(jint(k2, "gap"), 0);
    assert_null(json_object_get(k2, "moves"));
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* ---- poison isolation: one request never fails another ------------------------------------- */

#define POISON_THREADS 4
#define POISON_ROUNDS 50

typedef struct poison_sender {
    const e2e_server *s;
    int t;
    int ok; /* rounds answered 200 */
} poison_sender;

/* Thread t's round i: its own four players, 2v2, in the Weng-Lin pool. */
static void *poison_main(void *arg)
{
    poison_sender *ps = arg;
    for (int i = 0; i < POISON_ROUNDS; i++) {
        char id[32], p[4][16], body[512];
        snprintf(id, sizeof id, "w%d-r%d", ps->t, i);
        for (int k = 0; k < 4; k++)
            snprintf(p[k], sizeof p[k], "w%dp%d", ps->t, k);
        round_json(body, sizeof body, id, p[0], p[1], p[2], p[3], i % 3 ? "A" : "B");
        e2e_resp r;
        if (e2e_call(ps->s, "POST", "/v1/pools/wl/rounds", ps->s->server_key, body, &r) == 0 &&
            r.status == 200)
            ps->ok++;
        else
            fprintf(stderr, "%s -> %ld %s\n", id, r.status, r.body ? r.body : "");
        e2e_resp_free(&r);
    }
    return NULL;
}

/* Every player's lookup in pool wl, for a before/after comparison. */
static char *wl_lookups(const e2e_server *s)
{
    enum { N = POISON_THREADS * 4 + 3 };
    char buf[N][64];
    const char *paths[N];
    const char *extra[] = {"edge1", "edge2", "bad"};
    for (int i = 0; i < N; i++) {
        if (i < POISON_THREADS * 4)
            snprintf(buf[i], sizeof buf[i], "/v1/pools/wl/players/w%dp%d", i / 4, i % 4);
        else
            snprintf(buf[i], sizeof buf[i], "/v1/pools/wl/players/%s",
                     extra[i - POISON_THREADS * 4]);
        paths[i] = buf[i];
    }
    return snapshot_of(s, paths, N);
}

/* An admin edit of a Weng-Lin mean of -1e9 (it used to be taken, and to fail every later
 * round of that player and of whoever shared its group commit) is 400 naming "rating" with
 * the range, μ0 ± 1e8 = [-99999975, 100000025] (docs/MODELS.md). Two players set to the top of
 * the range play an even 1v1: the winner would rise past it, so that round is 422 for itself,
 * sent ten times while four threads send 200 valid rounds that all get 200 (some share its
 * group commits). Then SIGTERM exits 0 and a restart shows the same ratings. */
static void test_poison_isolation(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    json_decref(expect(&s, "POST", "/v1/pools", s.admin_key,
                       "{\"name\":\"wl\",\"model\":\"wenglin\"}", 201));
    json_t *j = expect(&s, "PUT", "/v1/pools/wl/players/bad", s.admin_key,
                       "{\"rating\":-1e9}", 400);
    assert_string_equal(err_field(j), "rating");
    const char *msg =
        json_string_value(json_object_get(json_object_get(j, "error"), "message"));
    assert_non_null(strstr(msg, "[-99999975, 100000025]"));
    json_decref(j);
    j = expect(&s, "PUT", "/v1/pools/wl/players/bad", s.admin_key,
               "{\"rating\":25,\"sigma\":2e6}", 400);
    assert_string_equal(err_field(j), "sigma");
    json_decref(j);
    for (int k = 1; k <= 2; k++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/pools/wl/players/edge%d", k);
        json_decref(expect(&s, "PUT", path, s.admin_key, "{\"rating\":100000025}", 200));
    }
    const char *over = "{\"id\":\"over\",\"winner\":\"A\",\"A\":[\"edge1\"],\"B\":[\"edge2\"]}";
    poison_sender ps[POISON_THREADS];
    pthread_t th[POISON_THREADS];
    for (int t = 0; t < POISON_THREADS; t++) {
        ps[t] = (poison_sender){&s, t, 0};
        assert_int_equal(pthread_create(&th[t], NULL, poison_main, &ps[t]), 0);
    }
    for (int k = 0; k < 10; k++) {
        j = expect(&s, "POST", "/v1/pools/wl/rounds", s.server_key, over, 422);
        assert_string_equal(err_code(j), "out_of_range");
        assert_string_equal(err_field(j), "A[0]");
        json_decref(j);
    }
    int ok = 0;
    for (int t = 0; t < POISON_THREADS; t++) {
        assert_int_equal(pthread_join(th[t], NULL), 0);
        ok += ps[t].ok;
    }
    assert_int_equal(ok, POISON_THREADS * POISON_ROUNDS);
    j = expect(&s, "GET", "/v1/pools/wl/quality", s.admin_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), POISON_THREADS * POISON_ROUNDS);
    json_decref(j);
    char *before = wl_lookups(&s);
    stop_clean(&s);
    assert_int_equal(e2e_start(&s, NULL), 0);
    char *after = wl_lookups(&s);
    assert_string_equal(after, before);
    free(before);
    free(after);
    stop_clean(&s);
    e2e_cleanup(&s);
}

/* A commit that fails (here a deferred foreign key added to the database behind the service's
 * back, which SQLite checks at COMMIT, when a round "commitfail" is logged) answers 500
 * "storage" for its batch and stores nothing; the next batch commits, and SIGTERM exits 0 even
 * right after a failed commit (it used to exit 1 then). */
static void test_commit_failure_recovers(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    create_pool(&s, "arena");
    stop_clean(&s);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(s.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE guard (pool INTEGER REFERENCES pools(id) "
                                  "DEFERRABLE INITIALLY DEFERRED); CREATE TRIGGER commitfail "
                                  "AFTER INSERT ON log WHEN NEW.round_id = 'commitfail' "
                                  "BEGIN INSERT INTO guard VALUES (-1); END",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(e2e_start(&s, NULL), 0);
    char body[512];
    round_json(body, sizeof body, "commitfail", "p1", "p2", "p3", "p4", "A");
    json_t *j = expect(&s, "POST", "/v1/pools/arena/rounds", s.server_key, body, 500);
    assert_string_equal(err_code(j), "storage");
    json_decref(j);
    round_json(body, sizeof body, "fine", "p1", "p2", "p3", "p4", "B");
    json_decref(expect(&s, "POST", "/v1/pools/arena/rounds", s.server_key, body, 200));
    char *log = e2e_read_log(&s);
    assert_non_null(log);
    assert_non_null(strstr(log, "commit failed"));
    free(log);
    /* and when the failed commit is the last one before the stop */
    round_json(body, sizeof body, "commitfail", "p1", "p2", "p3", "p4", "A");
    json_decref(expect(&s, "POST", "/v1/pools/arena/rounds", s.server_key, body, 500));
    stop_clean(&s);
    assert_int_equal(e2e_start(&s, NULL), 0);
    j = expect(&s, "GET", "/v1/pools/arena/players/p1", s.server_key, NULL, 200);
    assert_int_equal(jint(j, "rounds"), 1); /* "fine" only */
    json_decref(j);
    stop_clean(&s);
    e2e_cleanup(&s);
}

int main(void)
{
    const char *only = getenv("EO_TEST_ONLY");
    if (only && *only)
        cmocka_set_test_filter(only);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_startup_errors),
        cmocka_unit_test(test_flow),
        cmocka_unit_test(test_pool_names),
        cmocka_unit_test(test_seasons),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_autobalance_triggers),
        cmocka_unit_test(test_presence_autobalance),
        cmocka_unit_test(test_splits_balancer),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_keepalive),
        cmocka_unit_test(test_concurrent_duplicates),
        cmocka_unit_test(test_queue_full),
        cmocka_unit_test(test_kill9),
        cmocka_unit_test(test_sigterm),
        cmocka_unit_test(test_sigterm_race),
        cmocka_unit_test(test_drain),
        cmocka_unit_test(test_poison_isolation),
        cmocka_unit_test(test_commit_failure_recovers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
