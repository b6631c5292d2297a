/* The dashboard in a real browser: headless Chromium through chromedriver (webdriver.h) against
 * `evenodds serve` on loopback. Every page loads without a console error and shows what the
 * read APIs answer; search works; the key form refuses a wrong key and takes the admin key; a
 * screenshot of every page, wide and at phone width, goes to $EO_SCREENSHOTS for a person to
 * look at. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_codec.h"
#include "gen.h"
#include "webdriver.h"

#define WIDE_W 1280
#define WIDE_H 900
#define PHONE_W 390
#define PHONE_H 844
#define LOAD_MS 20000

static e2e_server srv;
static wd browser;
static char shots[512];

/* ---- the service and its data -------------------------------------------------------------- */

static json_t *api(const char *fmt, ...)
{
    char path[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(path, sizeof path, fmt, ap);
    va_end(ap);
    e2e_resp r;
    assert_int_equal(e2e_call(&srv, "GET", path, NULL, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    json_t *j = e2e_json(&r);
    e2e_resp_free(&r);
    assert_non_null(j);
    return j;
}

/* POST @p body to @p path with @p key; the answer must be @p status. */
static void post_as(const char *key, const char *path, const char *body, long status)
{
    e2e_resp r;
    assert_int_equal(e2e_call(&srv, "POST", path, key, body, &r), 0);
    if (r.status != status)
        fprintf(stderr, "POST %s -> %ld %s\n", path, r.status, r.body);
    assert_int_equal(r.status, status);
    e2e_resp_free(&r);
}

static void post(const char *path, const char *body)
{
    post_as(srv.server_key, path, body, 200);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* A 2v2 queue on the first pool with an instance, and a match of four tickets filed 300 ms
 * apart that starts on it (so the queues page has waits and a quality to show). */
static void duel_started(void)
{
    post_as(srv.admin_key, "/v1/queues",
            "{\"name\":\"duel\",\"pool\":\"arena\",\"team_size\":2,\"interval_ms\":20}", 201);
    post_as(srv.server_key, "/v1/instances",
            "{\"id\":\"i1\",\"queues\":[\"duel\"],\"address\":\"h:1\"}", 201);
    for (int i = 0; i < 4; i++) {
        char body[64];
        snprintf(body, sizeof body, "{\"id\":\"d%d\",\"players\":[{\"id\":\"d%d\"}]}", i, i);
        post_as(srv.server_key, "/v1/queues/duel/tickets", body, 201);
        if (i < 3)
            sleep_ms(300);
    }
    for (int k = 0; k < 500; k++) { /* the pool's read shows it once published */
        json_t *q = api("/v1/pools/arena/queues");
        json_t *duel = json_array_get(json_object_get(q, "queues"), 0);
        json_int_t n = json_integer_value(json_object_get(
            json_object_get(json_object_get(duel, "figures"), "recent"), "matches"));
        json_decref(q);
        if (n == 1)
            return;
        sleep_ms(20);
    }
    fail_msg("the duel's match never started");
}

/* A TrueSkill pool with divisions and a map bias (so the player chart has its band and the maps
 * page its table), 70 players in 160 rounds with names and maps; a small SynElo pool; two
 * matchmaking queues on the first: one with two tickets waiting (too few players for a match),
 * one with a match started (duel_started()). */
static void fill(void)
{
    static const char *const maps[] = {"goldrush", "upward", "badwater", "swiftwater"};
    e2e_create_pool(&srv, "{\"name\":\"arena\",\"model\":\"trueskill\",\"params\":{"
                          "\"visible_rounds\":5,\"bias\":\"map\",\"divisions\":["
                          "{\"name\":\"Bronze\",\"from\":-100},{\"name\":\"Silver\",\"from\":5},"
                          "{\"name\":\"Gold\",\"from\":12}]}}");
    e2e_create_pool(&srv, "{\"name\":\"classic\",\"model\":\"synelo\"}");
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.seed = 7;
    gc.players = 70;
    gc.team_min = 5;
    gc.team_max = 6;
    gc.spacing = 5 * 3600;
    gc.start = 1763000000;
    gc.partial_permille = 100;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&gc, &g), 0);
    char names[16][48], id[32];
    for (int k = 0; k < 160; k++) {
        eo_round r;
        eo_gen_next(g, &r);
        snprintf(id, sizeof id, "srv1:%d", 1000 + k);
        r.id = id;
        r.map = (char *)maps[k % 4];
        r.server = (char *)"srv1";
        size_t i = 0;
        for (int t = 0; t < 2; t++)
            for (size_t j = 0; j < r.n[t]; j++, i++) {
                unsigned long n = strtoul(r.team[t][j].id + 11, NULL, 10);
                snprintf(names[i], sizeof names[i], "%s %lu", n % 2 ? "Ace" : "Bolt", n);
                r.team[t][j].name = names[i];
            }
        json_t *o = eo_round_to_json(&r);
        char *text = json_dumps(o, JSON_COMPACT);
        post("/v1/pools/arena/rounds", text);
        if (k < 12)
            post("/v1/pools/classic/rounds", text);
        free(text);
        json_decref(o);
    }
    eo_gen_destroy(g);
    post_as(srv.admin_key, "/v1/queues",
            "{\"name\":\"ranked6\",\"pool\":\"arena\",\"team_size\":6}", 201);
    post_as(srv.server_key, "/v1/queues/ranked6/tickets", "{\"players\":[{\"id\":\"w1\"}]}", 201);
    post_as(srv.server_key, "/v1/queues/ranked6/tickets",
            "{\"players\":[{\"id\":\"w2\"},{\"id\":\"w3\"}]}", 201);
    duel_started();
}

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("EO_SCREENSHOTS");
    snprintf(shots, sizeof shots, "%s", dir != NULL ? dir : "screenshots");
    mkdir(shots, 0755);
    if (e2e_init(&srv) != 0 || e2e_start(&srv, NULL) != 0)
        return -1;
    fill();
    return wd_start(&browser, WIDE_W, WIDE_H);
}

static int teardown(void **state)
{
    (void)state;
    wd_stop(&browser);
    int st = -1;
    int rc = e2e_stop(&srv, SIGTERM, 20000, &st);
    e2e_cleanup(&srv);
    return rc == 0 && st == 0 ? 0 : -1;
}

/* ---- the browser ------------------------------------------------------------------------- */

/* Console entries since the last look, but for those @p allowed (a substring; NULL: none)
 * matches: each is printed, and their number returned. */
static size_t console_errors(const char *allowed)
{
    json_t *logs = wd_logs(&browser);
    size_t i, bad = 0;
    json_t *e;
    assert_non_null(logs);
    json_array_foreach(logs, i, e)
    {
        const char *msg = json_string_value(json_object_get(e, "message"));
        const char *level = json_string_value(json_object_get(e, "level"));
        if (level == NULL || strcmp(level, "SEVERE") != 0 || msg == NULL)
            continue;
        if (allowed != NULL && strstr(msg, allowed) != NULL)
            continue;
        fprintf(stderr, "console: %s\n", msg);
        bad++;
    }
    json_decref(logs);
    return bad;
}

/* Opens page @p path; it must load, draw without a console error, and is saved as @p shot
 * (wide, the whole page). */
static void open_page(const char *path, const char *shot)
{
    char url[600], file[700];
    snprintf(url, sizeof url, "%s%s", srv.url, path);
    char r = wd_open(&browser, url, LOAD_MS);
    if (r != 'o') {
        json_t *t = wd_exec(&browser, "return document.getElementById('app').innerText", NULL);
        fprintf(stderr, "%s: %c: %s\n", path, r ? r : '?', json_string_value(t));
        json_decref(t);
    }
    assert_int_equal(r, 'o');
    assert_int_equal(console_errors(NULL), 0);
    snprintf(file, sizeof file, "%s/%s.png", shots, shot);
    assert_int_equal(wd_screenshot(&browser, file, true, WIDE_W, WIDE_H), 0);
}

/* The result of @p script in the page, as a string (the caller's copy) or a number. */
static char *page_text(const char *script)
{
    json_t *v = wd_exec(&browser, script, NULL);
    assert_true(json_is_string(v));
    char *s = strdup(json_string_value(v));
    json_decref(v);
    return s;
}

static long page_num(const char *script)
{
    json_t *v = wd_exec(&browser, script, NULL);
    assert_true(json_is_integer(v));
    long n = (long)json_integer_value(v);
    json_decref(v);
    return n;
}

static const char *jstr(const json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    assert_non_null(s);
    return s;
}

/* The id under the player link of row @p row of the table @p table selects (its link's path
 * ends in it). */
static char *row_player(const char *table, const char *row)
{
    char js[512];
    int n = snprintf(js, sizeof js,
                     "const a = document.querySelector('table%s tbody tr:%s a');"
                     "return decodeURIComponent(a.getAttribute('href').split('/').pop())",
                     table, row);
    assert_true(n > 0 && (size_t)n < sizeof js);
    return page_text(js);
}

/* ---- the pages ----------------------------------------------------------------------------- */

static void test_pools_and_board(void **state)
{
    (void)state;
    open_page("/", "pools");
    assert_int_equal(page_num("return document.querySelectorAll('#pools tbody tr').length"), 2);
    /* The leaderboard's first row and its last page's last row are the API's. */
    json_t *all = api("/v1/pools/arena/standings?limit=500");
    json_t *rows = json_object_get(all, "standings");
    size_t n = json_array_size(rows);
    assert_true(n > 50); /* two pages */
    open_page("/pools/arena", "board");
    char *first = row_player("#board", "first-child");
    assert_string_equal(first, jstr(json_array_get(rows, 0), "id"));
    free(first);
    char *rank = page_text("return document.querySelector('#board tbody tr td').innerText");
    assert_string_equal(rank, "1");
    free(rank);
    assert_true(wd_exec(&browser, "document.querySelector('[data-page=last]').click()", NULL) !=
                NULL);
    assert_true(wd_wait(&browser,
                        "return location.search.includes('offset=50') && "
                        "document.body.dataset.ready === 'ok'",
                        LOAD_MS));
    assert_int_equal(console_errors(NULL), 0);
    char *last = row_player("#board", "last-child");
    assert_string_equal(last, jstr(json_array_get(rows, n - 1), "id"));
    free(last);
    /* Search: the form's answer is the API's, ranks included. */
    open_page("/pools/arena", "board-again");
    json_t *q = api("/v1/pools/arena/standings?q=ace+1");
    json_t *found = json_object_get(q, "standings");
    assert_true(json_array_size(found) > 0);
    assert_true(wd_exec(&browser,
                        "const i = document.querySelector('input[name=q]');"
                        "i.value = 'ACE 1'; i.form.requestSubmit()",
                        NULL) != NULL);
    assert_true(wd_wait(&browser,
                        "return location.search.includes('q=') && "
                        "document.body.dataset.ready === 'ok'",
                        LOAD_MS));
    assert_int_equal(console_errors(NULL), 0);
    assert_int_equal(page_num("return document.querySelectorAll('#board tbody tr').length"),
                     (long)json_array_size(found));
    char *hit = row_player("#board", "first-child");
    assert_string_equal(hit, jstr(json_array_get(found, 0), "id"));
    free(hit);
    char file[700];
    snprintf(file, sizeof file, "%s/board-search.png", shots);
    assert_int_equal(wd_screenshot(&browser, file, true, WIDE_W, WIDE_H), 0);
    json_decref(q);
    json_decref(all);
}

/* The text the page shows of figure @p name of queue @p queue. */
static char *figure_cell(const char *queue, const char *name)
{
    char script[256];
    snprintf(script, sizeof script,
             "return document.querySelector('section[data-queue=\"%s\"] td[data-figure=\"%s\"]')"
             ".textContent",
             queue, name);
    return page_text(script);
}

/* A wait as the page writes it: tenths of a second under a minute. */
static void wait_text(const json_t *v, char *out, size_t cap)
{
    if (json_is_null(v))
        snprintf(out, cap, "–");
    else
        snprintf(out, cap, "%.1f s", json_number_value(v));
}

/* The queues page shows, for each of the pool's queues, the figures of the pool's read
 * (without a key: the dashboard is public). */
static void queues_page(void)
{
    json_t *q = api("/v1/pools/arena/queues");
    open_page("/pools/arena/queues", "queues");
    const json_t *qs = json_object_get(q, "queues");
    assert_int_equal(json_array_size(qs), 2);
    assert_int_equal(page_num("return document.querySelectorAll('section.queue').length"), 2);
    size_t i;
    const json_t *x;
    json_array_foreach(qs, i, x)
    {
        const char *name = json_string_value(json_object_get(x, "name"));
        const json_t *f = json_object_get(x, "figures");
        const json_t *r = json_object_get(f, "recent"), *w = json_object_get(r, "wait_s");
        char want[64], *cell;
        const char *counts[] = {"waiting", "matched", "tickets", "formed", "matches", "dissolved"};
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
            snprintf(want, sizeof want, "%lld",
                     (long long)json_integer_value(json_object_get(f, counts[k])));
            cell = figure_cell(name, counts[k]);
            assert_string_equal(cell, want);
            free(cell);
        }
        const char *waits[] = {"p50", "p95", "max", "mean"};
        for (size_t k = 0; k < 4; k++) {
            char fig[16];
            snprintf(fig, sizeof fig, "wait_%s", waits[k]);
            wait_text(json_object_get(w, waits[k]), want, sizeof want);
            cell = figure_cell(name, fig);
            assert_string_equal(cell, want);
            free(cell);
        }
        const json_t *qm = json_object_get(r, "quality_mean");
        if (json_is_null(qm))
            snprintf(want, sizeof want, "–");
        else
            snprintf(want, sizeof want, "%.3f", json_number_value(qm));
        cell = figure_cell(name, "quality_mean");
        assert_string_equal(cell, want);
        free(cell);
    }
    /* the duel's match: four waits of about 0.9, 0.6, 0.3 and 0 s */
    const json_t *duel = json_array_get(qs, 0);
    assert_string_equal(json_string_value(json_object_get(duel, "name")), "duel");
    double max = json_number_value(json_object_get(
        json_object_get(json_object_get(json_object_get(duel, "figures"), "recent"), "wait_s"),
        "max"));
    assert_true(max >= 0.9 && max < 5.0);
    json_decref(q);
}

static void test_player_round_and_others(void **state)
{
    (void)state;
    json_t *board = api("/v1/pools/arena/standings?limit=1");
    const char *id = jstr(json_array_get(json_object_get(board, "standings"), 0), "id");
    json_t *h = api("/v1/pools/arena/players/%s/history", id);
    json_t *rs = api("/v1/pools/arena/players/%s/rounds", id);
    char path[300];
    snprintf(path, sizeof path, "/pools/arena/players/%s", id);
    open_page(path, "player");
    /* The chart has a point per history entry and the uncertainty band (TrueSkill's σ). */
    assert_int_equal(page_num("return Number(document.querySelector('svg.chart polyline"
                              "[data-series=\"0\"]').dataset.points)"),
                     (long)json_array_size(json_object_get(h, "history")));
    assert_int_equal(page_num("return document.querySelectorAll('svg.chart polygon.band').length"),
                     1);
    json_t *rounds = json_object_get(rs, "rounds");
    assert_int_equal(page_num("return document.querySelectorAll('#player-rounds tbody tr').length"),
                     (long)json_array_size(rounds));
    char *newest = page_text("const a = document.querySelector('#player-rounds tbody tr a');"
                             "return decodeURIComponent(a.getAttribute('href').split('/').pop())");
    const char *round = jstr(json_array_get(rounds, 0), "round");
    assert_string_equal(newest, round);
    free(newest);
    /* The round: both teams as the API has them, in order. */
    json_t *r = api("/v1/pools/arena/rounds/%s", round);
    snprintf(path, sizeof path, "/pools/arena/rounds/%s", round);
    open_page(path, "round");
    for (int t = 0; t < 2; t++) {
        json_t *team = json_object_get(r, t ? "B" : "A");
        char js[200];
        snprintf(js, sizeof js,
                 "return document.querySelectorAll('table.team[data-side=%s] "
                 "tbody tr').length",
                 t ? "B" : "A");
        assert_int_equal(page_num(js), (long)json_array_size(team));
        snprintf(js, sizeof js, ".team[data-side=%s]", t ? "B" : "A");
        char *who = row_player(js, "last-child");
        assert_string_equal(who, jstr(json_array_get(team, json_array_size(team) - 1), "id"));
        free(who);
    }
    open_page("/pools/arena/rounds", "rounds");
    assert_int_equal(page_num("return document.querySelectorAll('#rounds tbody tr').length"), 25);
    json_t *maps = api("/v1/pools/arena/maps");
    open_page("/pools/arena/maps", "maps");
    assert_int_equal(page_num("return document.querySelectorAll('#maps tbody tr').length"),
                     (long)json_array_size(json_object_get(maps, "maps")));
    json_t *health = api("/v1/pools/arena/health");
    open_page("/pools/arena/health", "health");
    assert_int_equal(page_num("return Number(document.querySelector('svg.chart polyline')"
                              ".dataset.points)"),
                     (long)json_array_size(json_object_get(health, "buckets")));
    open_page("/pools/arena/health?bucket=week", "health-week");
    queues_page();
    json_decref(health);
    json_decref(maps);
    json_decref(r);
    json_decref(rs);
    json_decref(h);
    json_decref(board);
}

/* Enters @p key in the key panel and returns the status it shows (the caller's copy). */
static char *enter_key(const char *key)
{
    json_t *args = json_pack("[s]", key);
    json_decref(wd_exec(&browser,
                        "document.getElementById('key-panel').classList.remove('hidden');"
                        "document.getElementById('key-input').value = arguments[0];"
                        "document.getElementById('key-form').requestSubmit()",
                        args));
    json_decref(args);
    assert_true(wd_wait(&browser,
                        "const s = document.getElementById('key-status').textContent;"
                        "return s !== '' && s !== 'Checking…'",
                        LOAD_MS));
    return page_text("return document.getElementById('key-status').textContent");
}

static void test_admin_key(void **state)
{
    (void)state;
    open_page("/pools/arena", "board-keyless");
    assert_int_equal(page_num("return document.querySelectorAll('.admin').length"), 0);
    char *st = enter_key("not-the-key-0123456789");
    assert_non_null(strstr(st, "Wrong key"));
    free(st);
    /* The refused key's 401 is the only console error; nothing was kept, no admin form. */
    assert_int_equal(console_errors("401"), 0);
    assert_int_equal(page_num("return sessionStorage.length"), 0);
    assert_int_equal(page_num("return document.querySelectorAll('.admin').length"), 0);
    char file[700];
    snprintf(file, sizeof file, "%s/key-refused.png", shots);
    assert_int_equal(wd_screenshot(&browser, file, false, WIDE_W, WIDE_H), 0);
    st = enter_key(srv.admin_key);
    assert_non_null(strstr(st, "Admin key accepted"));
    free(st);
    assert_true(
        wd_wait(&browser, "return document.querySelectorAll('.admin').length === 1", LOAD_MS));
    assert_int_equal(console_errors(NULL), 0);
    /* The key is not in any URL the page holds. */
    char *urls = page_text("return [location.href, ...[...document.querySelectorAll('a')]"
                           ".map((a) => a.href)].join(' ')");
    assert_null(strstr(urls, srv.admin_key));
    free(urls);
    snprintf(file, sizeof file, "%s/board-admin.png", shots);
    assert_int_equal(wd_screenshot(&browser, file, true, WIDE_W, WIDE_H), 0);
    json_decref(wd_exec(&browser, "sessionStorage.clear()", NULL));
}

/* At phone width nothing overflows the page sideways (tables scroll in their own box). */
static void test_phone(void **state)
{
    (void)state;
    json_t *board = api("/v1/pools/arena/standings?limit=1");
    const char *id = jstr(json_array_get(json_object_get(board, "standings"), 0), "id");
    char player[300];
    snprintf(player, sizeof player, "/pools/arena/players/%s", id);
    const char *pages[][2] = {{"/", "phone-pools"},
                              {"/pools/arena", "phone-board"},
                              {player, "phone-player"},
                              {"/pools/arena/rounds/srv1%3A1159", "phone-round"},
                              {"/pools/arena/maps", "phone-maps"},
                              {"/pools/arena/health", "phone-health"},
                              {"/pools/arena/queues", "phone-queues"}};
    assert_int_equal(wd_resize(&browser, PHONE_W, PHONE_H), 0);
    for (size_t i = 0; i < sizeof pages / sizeof pages[0]; i++) {
        char url[600], file[700];
        snprintf(url, sizeof url, "%s%s", srv.url, pages[i][0]);
        assert_int_equal(wd_open(&browser, url, LOAD_MS), 'o');
        assert_int_equal(console_errors(NULL), 0);
        assert_true(page_num("return document.documentElement.scrollWidth - window.innerWidth") <=
                    0);
        snprintf(file, sizeof file, "%s/%s.png", shots, pages[i][1]);
        assert_int_equal(wd_screenshot(&browser, file, true, PHONE_W, PHONE_H), 0);
    }
    assert_int_equal(wd_resize(&browser, WIDE_W, WIDE_H), 0);
    json_decref(board);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pools_and_board),
        cmocka_unit_test(test_player_round_and_others),
        cmocka_unit_test(test_admin_key),
        cmocka_unit_test(test_phone),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
