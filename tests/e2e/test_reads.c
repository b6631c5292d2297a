/* End-to-end tests of the dashboard's reads (docs/SERVICE.md "Dashboard and reads"): the real
 * service on loopback, generated rounds posted to it, and every read compared with what the
 * same rounds give when folded here through the core (eo_pool_apply(), as a replay does) or with
 * `evenodds eval` on the exported log. */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>
#include <sqlite3.h>

#include "e2e.h"
#include "evenodds/eo_codec.h"
#include "gen.h"

#define ROUNDS 80
#define POPULATION 36

/* ---- the log and its replay here ---------------------------------------------------------- */

/* What the replay gave one member of one round. */
typedef struct result {
    char id[EO_ID_MAX + 1];
    int team;
    double rating, delta, mu, sigma, weight;
    uint32_t rounds;
    bool visible;
} result;

/* A round as posted, and what the replay gave it. */
typedef struct posted {
    char *text; /* the JSON posted */
    char id[32];
    int64_t at;
    double p_a;
    eo_winner winner;
    size_t n;
    result m[16];
} posted;

typedef struct world {
    posted r[ROUNDS];
    eo_pool *pool;      /* the replay's, after every round */
    const char *params; /* the pool's creation parameters */
} world;

/* The name a generated member carries in round @p k: every third player has one, and player 0
 * changes his half-way (the last name seen is the one shown). */
static const char *name_of(const char *id, size_t k, char *buf, size_t cap)
{
    unsigned long tail = strtoul(id + strlen(id) - 4, NULL, 10);
    if (tail % 3 != 0)
        return NULL;
    snprintf(buf, cap, "%s%lu", k < ROUNDS / 2 ? "Ace " : "ace renamed ", tail);
    return buf;
}

/* Generates the rounds (names added), their texts, and folds them through a pool of @p model
 * with @p params, as the service will. */
static void make_world(world *w, const char *model, const char *params)
{
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.seed = 18;
    gc.players = POPULATION;
    gc.team_min = 2;
    gc.team_max = 5;
    gc.draw_permille = 60;
    gc.partial_permille = 150;
    gc.spacing = 3 * 3600; /* 80 rounds over ten days: several days and weeks */
    gc.start = 1763000000;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&gc, &g), 0);
    memset(w, 0, sizeof *w);
    w->params = params;
    json_error_t jerr;
    json_t *pj = json_loads(params, 0, &jerr);
    eo_pool_config cfg;
    eo_round_error rerr;
    assert_non_null(pj);
    assert_int_equal(eo_pool_config_new_from_json(model, pj, &cfg, &rerr), 0);
    json_decref(pj);
    assert_int_equal(eo_pool_create(&cfg, &w->pool), 0);
    char names[16][64];
    for (size_t k = 0; k < ROUNDS; k++) {
        eo_round r;
        eo_gen_next(g, &r);
        posted *p = &w->r[k];
        snprintf(p->id, sizeof p->id, "g%zu", k);
        r.id = p->id;
        size_t i = 0;
        for (int t = 0; t < 2; t++)
            for (size_t j = 0; j < r.n[t]; j++, i++)
                r.team[t][j].name = (char *)name_of(r.team[t][j].id, k, names[i], sizeof names[i]);
        json_t *o = eo_round_to_json(&r);
        p->text = json_dumps(o, JSON_COMPACT);
        json_decref(o);
        eo_round rr;
        assert_int_equal(eo_round_from_text(p->text, strlen(p->text), &rr, &rerr), 0);
        eo_round_result res;
        eo_member_result mr[16];
        assert_true(rr.n[0] + rr.n[1] <= 16);
        assert_int_equal(eo_pool_apply(w->pool, &rr, &res, mr), 0);
        p->at = rr.ended_at ? rr.ended_at : rr.started_at;
        p->p_a = res.p_a;
        p->winner = rr.winner;
        p->n = res.n;
        for (i = 0; i < res.n; i++) {
            result *m = &p->m[i];
            bool on_a = i < rr.n[0];
            snprintf(m->id, sizeof m->id, "%s", mr[i].id);
            m->team = on_a ? 0 : 1;
            m->rating = mr[i].rating;
            m->delta = mr[i].delta;
            m->mu = mr[i].mu;
            m->sigma = mr[i].sigma;
            m->rounds = mr[i].rounds;
            m->visible = mr[i].visible;
            m->weight =
                eo_round_member_weight(&rr, on_a ? &rr.team[0][i] : &rr.team[1][i - rr.n[0]]);
        }
        eo_round_free(&rr);
    }
    eo_gen_destroy(g);
}

static void free_world(world *w)
{
    for (size_t k = 0; k < ROUNDS; k++)
        free(w->r[k].text);
    eo_pool_destroy(w->pool);
}

/* ---- the service -------------------------------------------------------------------------- */

static void start(e2e_server *s, const char *const *extra)
{
    assert_int_equal(e2e_init(s), 0);
    assert_int_equal(e2e_start(s, extra), 0);
}

static void stop_clean(e2e_server *s)
{
    int st = -1;
    assert_int_equal(e2e_stop(s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
}

/* GET @p path (printf-style) with @p key (NULL: none): the status must be @p status; returns the
 * body parsed (the caller's). */
static json_t *get(const e2e_server *s, const char *key, long status, const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    e2e_resp r;
    assert_int_equal(e2e_call(s, "GET", path, key, NULL, &r), 0);
    if (r.status != status)
        fprintf(stderr, "GET %s -> %ld %s\n", path, r.status, r.body);
    assert_int_equal(r.status, status);
    json_t *j = e2e_json(&r);
    assert_non_null(j);
    e2e_resp_free(&r);
    return j;
}

static void post_world(const e2e_server *s, const char *pool, const char *model, const world *w)
{
    char body[512];
    snprintf(body, sizeof body, "{\"name\":\"%s\",\"model\":\"%s\",\"params\":%s}", pool, model,
             w->params);
    e2e_create_pool(s, body);
    char path[128];
    snprintf(path, sizeof path, "/v1/pools/%s/rounds", pool);
    for (size_t k = 0; k < ROUNDS; k++) {
        e2e_resp r;
        assert_int_equal(e2e_call(s, "POST", path, s->server_key, w->r[k].text, &r), 0);
        assert_int_equal(r.status, 200);
        e2e_resp_free(&r);
    }
}

static double num(const json_t *o, const char *k)
{
    const json_t *v = json_object_get(o, k);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

static const char *str(const json_t *o, const char *k)
{
    const char *v = json_string_value(json_object_get(o, k));
    assert_non_null(v);
    return v;
}

/* A member's values in a read equal the replay's, bit for bit (reals travel as 17 digits). */
static void expect_member(const json_t *o, const result *m, bool deviation)
{
    assert_true(num(o, "display") == m->rating);
    assert_true(num(o, "delta") == m->delta);
    assert_int_equal((int64_t)num(o, "rounds"), m->rounds);
    assert_int_equal(json_is_true(json_object_get(o, "visible")), m->visible);
    if (deviation) {
        assert_true(num(o, "mu") == m->mu);
        assert_true(num(o, "sigma") == m->sigma);
    } else {
        assert_true(num(o, "rating") == m->mu);
    }
}

/* The rounds of player @p id in @p w, in order: round indexes into *k (ROUNDS entries). */
static size_t rounds_of(const world *w, const char *id, size_t *k, size_t *pos)
{
    size_t n = 0;
    for (size_t i = 0; i < ROUNDS; i++)
        for (size_t j = 0; j < w->r[i].n; j++)
            if (strcmp(w->r[i].m[j].id, id) == 0) {
                pos[n] = j;
                k[n++] = i;
            }
    return n;
}

/* ---- history: what a replay of the log gives at each of the player's rounds ------------- */

static void expect_history(const e2e_server *s, const char *pool, const world *w, bool deviation)
{
    size_t k[ROUNDS], pos[ROUNDS], players = 0;
    for (size_t r = 0; r < ROUNDS; r++) {
        for (size_t m = 0; m < w->r[r].n; m++) {
            const char *id = w->r[r].m[m].id;
            size_t n = rounds_of(w, id, k, pos);
            if (k[0] != r || pos[0] != m) /* each player once, at his first round */
                continue;
            players++;
            eo_rating_view v;
            assert_int_equal(eo_pool_lookup(w->pool, id, 0, &v), 0);
            json_t *h = get(s, s->server_key, 200, "/v1/pools/%s/players/%s/history", pool, id);
            json_t *pts = json_object_get(h, "history");
            assert_int_equal(json_array_size(pts), n);
            for (size_t i = 0; i < n; i++) {
                json_t *pt = json_array_get(pts, i);
                assert_int_equal((int64_t)num(pt, "number"), (int64_t)k[i] + 1);
                assert_int_equal((int64_t)num(pt, "at"), w->r[k[i]].at);
                expect_member(pt, &w->r[k[i]].m[pos[i]], deviation);
            }
            json_t *now = json_object_get(h, "player");
            assert_string_equal(str(now, "id"), id);
            assert_true(num(now, "display") == v.display);
            json_decref(h);
            /* since: the rounds played from then on; limit: the last ones */
            h = get(s, s->server_key, 200, "/v1/pools/%s/players/%s/history?since=%lld&limit=3",
                    pool, id, (long long)w->r[k[n / 2]].at);
            pts = json_object_get(h, "history");
            size_t want = n - n / 2 < 3 ? n - n / 2 : 3;
            assert_int_equal(json_array_size(pts), want);
            assert_int_equal((int64_t)num(json_array_get(pts, want - 1), "number"),
                             (int64_t)k[n - 1] + 1);
            json_decref(h);
        }
    }
    assert_true(players > POPULATION / 2);
}

/* ---- rounds -------------------------------------------------------------------------------- */

static void expect_round(const json_t *o, const posted *p, size_t number, bool deviation)
{
    static const char *const winner[] = {"A", "B", "draw"};
    assert_string_equal(str(o, "round"), p->id);
    assert_int_equal((int64_t)num(o, "number"), (int64_t)number);
    assert_true(num(o, "p_a") == p->p_a);
    assert_string_equal(str(o, "winner"), winner[p->winner]);
    json_t *team[2] = {json_object_get(o, "A"), json_object_get(o, "B")};
    assert_int_equal(json_array_size(team[0]) + json_array_size(team[1]), p->n);
    size_t i = 0;
    for (int t = 0; t < 2; t++)
        for (size_t j = 0; j < json_array_size(team[t]); j++, i++) {
            json_t *m = json_array_get(team[t], j);
            assert_int_equal(p->m[i].team, t);
            assert_string_equal(str(m, "id"), p->m[i].id);
            assert_true(num(m, "played") == p->m[i].weight);
            expect_member(m, &p->m[i], deviation);
        }
}

static void expect_rounds(const e2e_server *s, const char *pool, const world *w, bool deviation)
{
    /* The pool's rounds, newest first, in pages of 7. */
    size_t seen = 0;
    for (int64_t off = 0; off < ROUNDS; off += 7) {
        json_t *pg = get(s, s->server_key, 200, "/v1/pools/%s/rounds?offset=%lld&limit=7", pool,
                         (long long)off);
        json_t *rs = json_object_get(pg, "rounds");
        assert_int_equal((int64_t)num(pg, "total"), ROUNDS);
        assert_int_equal(json_is_true(json_object_get(pg, "more")), off + 7 < ROUNDS);
        for (size_t i = 0; i < json_array_size(rs); i++, seen++)
            expect_round(json_array_get(rs, i), &w->r[ROUNDS - 1 - seen], ROUNDS - seen, deviation);
        json_decref(pg);
    }
    assert_int_equal(seen, ROUNDS);
    /* One round, and an unknown one. */
    json_t *one = get(s, s->server_key, 200, "/v1/pools/%s/rounds/%s", pool, w->r[17].id);
    expect_round(one, &w->r[17], 18, deviation);
    assert_string_equal(str(one, "pool"), pool);
    json_decref(one);
    json_decref(get(s, s->server_key, 404, "/v1/pools/%s/rounds/nope", pool));
    /* A player's rounds, newest first, with his side. */
    size_t k[ROUNDS], pos[ROUNDS];
    const char *id = w->r[5].m[1].id;
    size_t n = rounds_of(w, id, k, pos);
    json_t *pg =
        get(s, s->server_key, 200, "/v1/pools/%s/players/%s/rounds?offset=1&limit=100", pool, id);
    json_t *rs = json_object_get(pg, "rounds");
    assert_int_equal(json_array_size(rs), n - 1);
    assert_true(json_is_null(json_object_get(pg, "total")));
    for (size_t i = 0; i < n - 1; i++) {
        json_t *o = json_array_get(rs, i);
        size_t r = k[n - 2 - i];
        expect_round(o, &w->r[r], r + 1, deviation);
        assert_string_equal(str(o, "side"), w->r[r].m[pos[n - 2 - i]].team ? "B" : "A");
    }
    json_decref(pg);
}

/* ---- the board ------------------------------------------------------------------------------ */

typedef struct board_entry {
    char id[EO_ID_MAX + 1];
    double display;
} board_entry;

typedef struct board {
    board_entry v[POPULATION];
    size_t n;
} board;

static int board_add(void *ctx, const char *id, const eo_rating_view *v)
{
    board *b = ctx;
    if (v->visible) {
        snprintf(b->v[b->n].id, sizeof b->v[b->n].id, "%s", id);
        b->v[b->n++].display = v->display;
    }
    return 0;
}

static int board_cmp(const void *x, const void *y)
{
    const board_entry *a = x, *b = y;
    if (a->display != b->display)
        return a->display > b->display ? -1 : 1;
    return strcmp(a->id, b->id);
}

/* The last name player @p id carried in @p w, or NULL. */
static const char *last_name(const world *w, const char *id, char *buf, size_t cap)
{
    const char *name = NULL;
    for (size_t k = 0; k < ROUNDS; k++)
        for (size_t j = 0; j < w->r[k].n; j++)
            if (strcmp(w->r[k].m[j].id, id) == 0)
                name = name_of(id, k, buf, cap);
    return name;
}

static void expect_board(const e2e_server *s, const char *pool, const world *w)
{
    board b = {.n = 0};
    eo_pool_each_player(w->pool, 0, board_add, &b);
    qsort(b.v, b.n, sizeof b.v[0], board_cmp);
    assert_true(b.n > 3 && b.n < (size_t)eo_pool_player_count(w->pool)); /* some not visible */
    json_t *all = get(s, NULL, 200, "/v1/pools/%s/standings?limit=500", pool);
    json_t *rows = json_object_get(all, "standings");
    assert_int_equal(json_array_size(rows), b.n);
    assert_int_equal((int64_t)num(all, "total"), (int64_t)b.n);
    for (size_t i = 0; i < b.n; i++) {
        json_t *row = json_array_get(rows, i);
        char buf[64];
        const char *name = last_name(w, b.v[i].id, buf, sizeof buf);
        assert_string_equal(str(row, "id"), b.v[i].id);
        assert_int_equal((int64_t)num(row, "rank"), (int64_t)i + 1);
        assert_true(num(row, "display") == b.v[i].display);
        if (name != NULL)
            assert_string_equal(str(row, "name"), name);
        else
            assert_true(json_is_null(json_object_get(row, "name")));
    }
    /* Pages of 4 put together are the board. */
    for (size_t off = 0; off < b.n; off += 4) {
        json_t *pg = get(s, NULL, 200, "/v1/pools/%s/standings?offset=%zu&limit=4", pool, off);
        json_t *r = json_object_get(pg, "standings");
        assert_int_equal(json_is_true(json_object_get(pg, "more")), off + 4 < b.n);
        for (size_t i = 0; i < json_array_size(r); i++)
            assert_string_equal(str(json_array_get(r, i), "id"), b.v[off + i].id);
        json_decref(pg);
    }
    /* Search: by a name in any case, by the start of an id; each match keeps its rank. */
    json_t *q = get(s, NULL, 200, "/v1/pools/%s/standings?q=ACE+RENAMED", pool);
    json_t *found = json_object_get(q, "standings");
    assert_true(json_array_size(found) > 0);
    assert_true(json_is_null(json_object_get(q, "total")));
    int64_t last_rank = 0;
    for (size_t i = 0; i < json_array_size(found); i++) {
        json_t *row = json_array_get(found, i);
        assert_non_null(strstr(str(row, "name"), "ace renamed "));
        int64_t rank = (int64_t)num(row, "rank");
        assert_true(rank > last_rank);
        assert_string_equal(str(row, "id"), b.v[rank - 1].id);
        last_rank = rank;
    }
    json_decref(q);
    q = get(s, NULL, 200, "/v1/pools/%s/standings?q=%s", pool, b.v[b.n - 1].id);
    assert_int_equal(json_array_size(json_object_get(q, "standings")), 1);
    assert_int_equal((int64_t)num(json_array_get(json_object_get(q, "standings"), 0), "rank"),
                     (int64_t)b.n);
    json_decref(q);
    /* A player not visible is neither listed nor found. */
    for (size_t k = 0; k < ROUNDS; k++) {
        eo_rating_view v;
        const char *id = w->r[k].m[0].id;
        if (eo_pool_lookup(w->pool, id, 0, &v) == 0 && !v.visible) {
            q = get(s, NULL, 200, "/v1/pools/%s/standings?q=%s", pool, id);
            assert_int_equal(json_array_size(json_object_get(q, "standings")), 0);
            json_decref(q);
            break;
        }
    }
    json_decref(all);
}

/* ---- the tests ---------------------------------------------------------------------------- */

/* SynElo with a shadow period that the players who played least have not finished. */
static const char se_params[] = "{\"t_shadow\":16,\"divisions\":[{\"name\":\"Low\",\"from\":0},"
                                "{\"name\":\"High\",\"from\":1050}]}";

/* A service with pool "se" (SynElo, se_params) holding @p w's rounds. */
static void serve_world(e2e_server *s, world *w)
{
    make_world(w, "synelo", se_params);
    start(s, NULL);
    post_world(s, "se", "synelo", w);
}

static void test_reads_equal_replay(void **state)
{
    (void)state;
    static world se, ts;
    make_world(&se, "synelo", se_params);
    make_world(&ts, "trueskill", "{}");
    e2e_server s;
    start(&s, NULL);
    post_world(&s, "se", "synelo", &se);
    post_world(&s, "ts", "trueskill", &ts);
    expect_history(&s, "se", &se, false);
    expect_history(&s, "ts", &ts, true);
    expect_rounds(&s, "se", &se, false);
    expect_rounds(&s, "ts", &ts, true);
    expect_board(&s, "se", &se);
    stop_clean(&s);
    e2e_cleanup(&s);
    free_world(&se);
    free_world(&ts);
}

/* Without a key (the public dashboard), a player's values show once he is visible. */
static void test_keyless_view(void **state)
{
    (void)state;
    static world w;
    e2e_server s;
    serve_world(&s, &w);
    const posted *first = &w.r[0]; /* nobody is visible after his first round */
    const char *id = first->m[0].id;
    size_t k[ROUNDS], pos[ROUNDS];
    size_t n = rounds_of(&w, id, k, pos), visible = 0;
    for (size_t i = 0; i < n; i++)
        visible += w.r[k[i]].m[pos[i]].visible;
    assert_true(visible < n);
    json_t *h = get(&s, NULL, 200, "/v1/pools/se/players/%s/history", id);
    assert_int_equal(json_array_size(json_object_get(h, "history")), visible);
    json_decref(h);
    h = get(&s, s.server_key, 200, "/v1/pools/se/players/%s/history", id);
    assert_int_equal(json_array_size(json_object_get(h, "history")), n);
    json_decref(h);
    json_t *r = get(&s, NULL, 200, "/v1/pools/se/rounds/%s", first->id);
    json_t *m = json_array_get(json_object_get(r, "A"), 0);
    assert_true(json_is_null(json_object_get(m, "display")));
    assert_true(json_is_null(json_object_get(m, "delta")));
    assert_false(json_is_true(json_object_get(m, "visible")));
    json_decref(r);
    r = get(&s, s.server_key, 200, "/v1/pools/se/rounds/%s", first->id);
    expect_round(r, first, 1, false);
    json_decref(r);
    /* A key that is given is checked. */
    e2e_resp bad;
    assert_int_equal(
        e2e_call(&s, "GET", "/v1/pools/se/standings", "0123456789abcdef0123", NULL, &bad), 0);
    assert_int_equal(bad.status, 401);
    e2e_resp_free(&bad);
    stop_clean(&s);
    e2e_cleanup(&s);
    free_world(&w);
}

/* Runs EO_BIN with @p args (plain words), standard output into @p out; the exit code. */
static int run_stdout(const char *args, const char *out)
{
    const char *bin = getenv("EO_BIN");
    char cmd[2048];
    assert_non_null(bin);
    assert_true(snprintf(cmd, sizeof cmd, "'%s' %s > '%s'", bin, args, out) < (int)sizeof cmd);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

/* `evenodds eval` prints 10 significant digits. */
static bool close_to(double a, double b)
{
    return fabs(a - b) <= 1e-9 * (1.0 + fabs(b));
}

/* The health sums equal `evenodds eval` on the exported log: the same rounds, figures and
 * calibration, whatever the bucket. */
static void test_health_equals_eval(void **state)
{
    (void)state;
    static world w;
    e2e_server s;
    serve_world(&s, &w);
    char log[400], out[400], args[1200];
    e2e_path(&s, "se.jsonl", log, sizeof log);
    e2e_path(&s, "eval.json", out, sizeof out);
    snprintf(args, sizeof args, "export --db %s --pool se --out %s", s.db, log);
    assert_int_equal(run_stdout(args, out), 0);
    snprintf(args, sizeof args, "eval --model synelo --param t_shadow=16 --format json %s", log);
    assert_int_equal(run_stdout(args, out), 0);
    char *text = e2e_slurp(out, NULL);
    json_error_t jerr;
    json_t *ev = json_loads(text, 0, &jerr);
    free(text);
    assert_non_null(ev);
    json_t *h = get(&s, NULL, 200, "/v1/pools/se/health");
    json_t *tot = json_object_get(h, "total");
    assert_int_equal((int64_t)num(tot, "rounds"), (int64_t)num(ev, "scored"));
    assert_int_equal((int64_t)num(tot, "draws"), (int64_t)num(ev, "draws"));
    assert_true(close_to(num(tot, "brier"), num(ev, "brier")));
    assert_true(close_to(num(tot, "logloss"), num(ev, "logloss")));
    assert_true(close_to(num(tot, "accuracy"), num(ev, "accuracy")));
    json_t *bins = json_object_get(json_object_get(h, "calibration"), "bins");
    json_t *ebins = json_object_get(json_object_get(ev, "calibration"), "bins");
    assert_int_equal(json_array_size(bins), 10);
    for (size_t b = 0; b < 10; b++) {
        json_t *x = json_array_get(bins, b), *y = json_array_get(ebins, b);
        assert_int_equal((int64_t)num(x, "count"), (int64_t)num(y, "count"));
        if (num(y, "count") > 0) {
            assert_true(close_to(num(x, "mean_p"), num(y, "mean_p")));
            assert_true(close_to(num(x, "win_rate"), num(y, "win_rate")));
        }
    }
    assert_true(close_to(num(json_object_get(h, "calibration"), "ece"),
                         num(json_object_get(ev, "calibration"), "ece")));
    /* Days and weeks both add up to the total; weeks start on Mondays (UTC). */
    for (int wk = 0; wk < 2; wk++) {
        json_t *hb = wk ? get(&s, NULL, 200, "/v1/pools/se/health?bucket=week") : json_incref(h);
        json_t *bk = json_object_get(hb, "buckets");
        int64_t rounds = 0, last = -1;
        assert_true(json_array_size(bk) > (wk ? 1u : 5u));
        for (size_t i = 0; i < json_array_size(bk); i++) {
            int64_t start = (int64_t)num(json_array_get(bk, i), "start");
            assert_true(start > last && start % 86400 == 0);
            if (wk)
                assert_int_equal((start / 86400 + 3) % 7, 0);
            rounds += (int64_t)num(json_array_get(bk, i), "rounds");
            last = start;
        }
        assert_int_equal(rounds, ROUNDS);
        json_decref(hb);
    }
    json_decref(h);
    json_decref(ev);
    stop_clean(&s);
    e2e_cleanup(&s);
    free_world(&w);
}

/* The documents of every read, for comparing two states of one pool. */
static char *reads_text(const e2e_server *s, const world *w)
{
    const char *paths[] = {"/v1/pools/se/standings?limit=500", "/v1/pools/se/rounds?limit=100",
                           "/v1/pools/se/health", "/v1/pools/se/health?bucket=week"};
    json_t *all = json_array();
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
        json_array_append_new(all, get(s, s->server_key, 200, "%s", paths[i]));
    for (size_t k = 0; k < ROUNDS; k += 9)
        json_array_append_new(
            all, get(s, s->server_key, 200, "/v1/pools/se/players/%s/history", w->r[k].m[0].id));
    char *text = json_dumps(all, JSON_COMPACT);
    json_decref(all);
    return text;
}

/* A store whose read indexes are missing (rounds logged before them) gets them at open, equal
 * to those written round by round, an admin's reset between a player's rounds included. */
static void test_indexes_built_at_open(void **state)
{
    (void)state;
    static world w;
    e2e_server s;
    serve_world(&s, &w);
    char path[512];
    snprintf(path, sizeof path, "/v1/pools/se/players/%s", w.r[3].m[0].id);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "DELETE", path, s.admin_key, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    e2e_resp_free(&r);
    snprintf(path, sizeof path, "{\"id\":\"after\",\"winner\":\"A\",\"A\":[\"%s\"],\"B\":[\"%s\"]}",
             w.r[3].m[0].id, w.r[3].m[1].id);
    assert_int_equal(e2e_call(&s, "POST", "/v1/pools/se/rounds", s.server_key, path, &r), 0);
    assert_int_equal(r.status, 200);
    e2e_resp_free(&r);
    char *before = reads_text(&s, &w);
    stop_clean(&s);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(s.db, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "DELETE FROM round_ix; DELETE FROM health; UPDATE players "
                                  "SET last_n = 0, prev_n = 0, name = NULL, name_key = NULL",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(e2e_start(&s, NULL), 0);
    char *after = reads_text(&s, &w);
    assert_string_equal(before, after);
    free(before);
    free(after);
    stop_clean(&s);
    e2e_cleanup(&s);
    free_world(&w);
}

/* --dashboard key and off; the pages' files and headers; malformed arguments. */
static void test_dashboard_modes(void **state)
{
    (void)state;
    e2e_server s;
    const char *key_mode[] = {"--dashboard", "key", NULL};
    start(&s, key_mode);
    e2e_create_pool(&s, "{\"name\":\"p\"}");
    json_decref(get(&s, NULL, 401, "/v1/pools/p/standings"));
    json_decref(get(&s, NULL, 401, "/v1/pools/p/maps"));
    json_t *d = get(&s, s.server_key, 200, "/v1/dashboard");
    assert_string_equal(str(d, "dashboard"), "key");
    json_decref(d);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "GET", "/pools/p", NULL, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.ctype, "text/html"));
    assert_non_null(strstr(r.csp, "default-src 'none'"));
    assert_non_null(strstr(r.body, "/static/app.js"));
    e2e_resp_free(&r);
    /* A file, then the same file again with its ETag: 304. */
    assert_int_equal(e2e_call(&s, "GET", "/static/app.js", NULL, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    assert_non_null(strstr(r.ctype, "text/javascript"));
    assert_string_equal(r.cache, "no-cache");
    char inm[96];
    snprintf(inm, sizeof inm, "If-None-Match: %s", r.etag);
    assert_true(r.etag[0] == '"');
    e2e_resp_free(&r);
    const char *hdrs[] = {inm, NULL};
    assert_int_equal(e2e_request(&s, "GET", "/static/app.js", NULL, NULL, NULL, 0, hdrs, &r), 0);
    assert_int_equal(r.status, 304);
    e2e_resp_free(&r);
    json_decref(get(&s, NULL, 404, "/static/nope.js"));
    stop_clean(&s);
    e2e_cleanup(&s);

    const char *off_mode[] = {"--dashboard", "off", NULL};
    start(&s, off_mode);
    e2e_create_pool(&s, "{\"name\":\"p\"}");
    json_decref(get(&s, NULL, 404, "/"));
    json_decref(get(&s, NULL, 404, "/static/app.js"));
    json_decref(get(&s, NULL, 401, "/v1/pools/p/rounds"));
    json_decref(get(&s, s.server_key, 200, "/v1/pools/p/rounds"));
    /* Malformed arguments: 400 naming the argument, in any mode. */
    static const struct {
        const char *path, *field;
    } bad[] = {{"/v1/pools/p/standings?offset=-1", "offset"},
               {"/v1/pools/p/standings?limit=0", "limit"},
               {"/v1/pools/p/standings?limit=501", "limit"},
               {"/v1/pools/p/standings?limit=4x", "limit"},
               {"/v1/pools/p/standings?q=", "q"},
               {"/v1/pools/p/standings?q=%zz", "q"},
               {"/v1/pools/p/standings?q=a%00b", "q"},
               {"/v1/pools/p/rounds?limit=101", "limit"},
               {"/v1/pools/p/health?bucket=month", "bucket"},
               {"/v1/pools/p/health?since=yesterday", "since"},
               {"/v1/pools/p/players/x/history?limit=10001", "limit"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_t *e = get(&s, s.server_key, 400, "%s", bad[i].path);
        assert_string_equal(str(json_object_get(e, "error"), "field"), bad[i].field);
        json_decref(e);
    }
    json_decref(get(&s, s.server_key, 404, "/v1/pools/p/players/x/history"));
    json_decref(get(&s, s.server_key, 404, "/v1/pools/nope/standings"));
    stop_clean(&s);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reads_equal_replay), cmocka_unit_test(test_keyless_view),
        cmocka_unit_test(test_health_equals_eval), cmocka_unit_test(test_indexes_built_at_open),
        cmocka_unit_test(test_dashboard_modes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
