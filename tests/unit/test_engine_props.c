/* Poison isolation, as a property of the engine: EVERY registered model (with its defaults,
 * with the map bias on, and with parameters at the ends of their bounds) rated through the real
 * engine on a real SQLite store in a temporary file, with isolation on as the service's writer
 * runs it, by random batches of:
 *  - admin edits: means and deviations at the ends of the model's range (eo_model_range_of())
 *    and one step beyond, far outside (±1e9, ±1e12), tiny, negative zero, NaN and infinities,
 *    both straight into the engine and as JSON request text through the codec
 *    (eo_rating_request_from_json(), which caps numbers at ±1e9; "NaN", "1e999" and the like
 *    are not JSON numbers at all);
 *  - resets;
 *  - rounds as JSON text: 1 to 8 members a side, weights from `time` (0, 1e-300, fractions, 1)
 *    or `joined`/`left`, commanders and playtimes (0 to 1e300) for the hive model, maps (the
 *    bias keys), every outcome, now and then an invalid member field (400) or an id sent again
 *    (a replay, or a conflict).
 * The properties, after every call and every batch:
 *  1. no call ends in a 5xx-class error: everything is 200, or 400, 409 or 422 for itself;
 *  2. an edit is taken exactly when eo_model_check_set() takes its values (the range is what
 *     the engine enforces), and the range's own bounds are taken;
 *  3. every batch commits;
 *  4. nothing non-finite is stored: every number of every player row, of every logged admin
 *     edit and of every logged answer, read back from the store, is finite;
 *  5. memory equals a fresh fold of the log: a second engine opened on the same file after
 *     each batch shows every player's view bit for bit as the live one (and the same rounds
 *     count), and the stored rows equal the live views (but for Glicko-2 in period mode, whose
 *     rows lag by design: docs/MODELS.md).
 * Per configuration, a line with the counts of each outcome shows what the run exercised. */
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

#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"
#include "prng.h"
#include "store_util.h"

#define NOW 1763900000
#define PLAYERS 20
#define BATCHES 8
#define CALLS 14

/* ---- configurations ---- */

typedef struct config {
    const char *model;
    const char *params; /* JSON object text */
    bool rows_lag;      /* Glicko-2 in period mode: rows show the open period's start */
} config;

static const config CONFIGS[] = {
    {"synelo", "{}", false},
    {"synelo",
     "{\"bias\":\"map\",\"bias_prior\":0,\"k_max\":100000,\"r0\":1000000,"
     "\"r_grad_cap\":1000000}",
     false},
    {"trueskill", "{\"bias\":\"map\"}", false},
    {"trueskill", "{\"beta\":1e-9,\"tau\":0,\"display_k\":1000,\"draw_probability\":0.999999}",
     false},
    {"trueskill", "{\"mu\":1e12,\"sigma\":1e6,\"tau\":1e6,\"bias\":\"map\",\"bias_prior\":0}",
     false},
    {"glicko2", "{\"bias\":\"map\"}", false},
    {"glicko2", "{\"period\":3600,\"rd_max\":10000,\"rd0\":10000}", true},
    {"glicko2", "{\"r0\":10000,\"tau\":10,\"vol0\":10,\"team_expectation\":1}", false},
    {"elo", "{\"bias\":\"map\",\"bias_prior\":0}", false},
    {"elo", "{\"scale\":1,\"k\":1e6,\"k_new\":1e6,\"k_high\":1e6,\"r_min\":-1e9,\"r0\":1e9,"
            "\"team\":\"sum\"}",
     false},
    {"wenglin", "{\"bias\":\"map\"}", false},
    {"wenglin", "{\"beta\":1e-9,\"tau\":1e6,\"display_k\":1000,\"variant\":\"bt_full\","
                "\"kappa\":1e-12}",
     false},
    {"wenglin", "{\"mu\":-1e9,\"sigma\":1e6,\"bias\":\"map\",\"bias_prior\":0}", false},
    {"hive", "{\"bias\":\"map\"}", false},
    {"hive", "{\"alpha\":1e6,\"alpha_commander\":1e6,\"side_share\":1,\"side_rounds\":3,"
             "\"playtime_c\":1000,\"round_length\":0}",
     false},
};

/* What one configuration's run did. */
typedef struct tally {
    int rated, replayed, refused_round[3], edits, edits_refused, bounds_taken;
} tally;

#define ROUNDS_MAX (BATCHES * CALLS)

typedef struct run {
    const config *c;
    char (*texts)[4096]; /* each round id's text, to send it again */
    char path[64];
    eo_engine *e;
    eo_model_range range;
    const eo_model_ctx *model;
    prng r;
    int64_t clock;
    int next_round;
    tally t;
} run;

static json_t *parse(const char *text)
{
    json_error_t jerr;
    return json_loads(text, EO_JSON_DECODE_FLAGS, &jerr);
}

/* An engine on @p path; fails the test when it cannot be opened. */
static eo_engine *open_engine(const char *path)
{
    eo_engine *e = test_engine_open(path, 0);
    assert_non_null(e);
    return e;
}

/* Property 1: a failed call is the caller's (4xx), never the engine's. */
static void expect_own_error(const run *rn, int rc, const eo_engine_error *err, const char *what)
{
    if (rc != 0 && !(err->status >= 400 && err->status < 500))
        fail_msg("%s %s: %s -> %d %s %s: %s", rn->c->model, rn->c->params, what, err->status,
                 err->code, err->field, err->message);
}

/* ---- admin edits ---- */

/* A mean worth trying: the range's bounds, one step beyond, far outside, special values. */
static double pick_mean(run *rn)
{
    const eo_model_range *g = &rn->range;
    switch (below(&rn->r, 14)) {
    case 0: return g->set_lo;
    case 1: return g->set_hi;
    case 2: return nextafter(g->set_lo, -INFINITY);
    case 3: return nextafter(g->set_hi, INFINITY);
    case 4: return below(&rn->r, 2) ? -1e9 : 1e9;
    case 5: return below(&rn->r, 2) ? -1e12 : 1e12;
    case 6: return below(&rn->r, 2) ? 1e-300 : -0.0;
    case 7: return below(&rn->r, 2) ? NAN : (below(&rn->r, 2) ? INFINITY : -INFINITY);
    case 8: return g->set_lo + 0.5;
    default: {
        double x = g->set_lo + (g->set_hi - g->set_lo) * unif(&rn->r);
        /* mostly near the middle, where rounds are even */
        if (below(&rn->r, 3) != 0)
            x = (g->set_lo + g->set_hi) / 2 + 100.0 * (unif(&rn->r) - 0.5);
        return g->integer ? floor(x) : x;
    }
    }
}

static double pick_sigma(run *rn)
{
    const eo_model_range *g = &rn->range;
    switch (below(&rn->r, 9)) {
    case 0: return g->sigma_max;
    case 1: return nextafter(g->sigma_max, INFINITY);
    case 2: return 0.0;
    case 3: return 1e-300;
    case 4: return NAN;
    case 5: return 1e12;
    case 6: return g->sigma_max * unif(&rn->r);
    default: return -1.0; /* keep */
    }
}

/* Property 2: the engine takes an edit exactly when eo_model_check_set() does. */
static void edit_direct(run *rn, const char *player)
{
    double mu = pick_mean(rn), sigma = pick_sigma(rn);
    eo_engine_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_engine_set_rating(rn->e, "p", player, mu, sigma, rn->clock, &err);
    expect_own_error(rn, rc, &err, "set");
    int want = eo_model_check_set(rn->model, mu, sigma, NULL);
    if ((rc == 0) != (want == 0))
        fail_msg("%s: set %.17g (sigma %.17g) gave %d, the range says %d", rn->c->model, mu,
                 sigma, rc, want);
    if (rc != 0 && strcmp(err.field, "rating") != 0 && strcmp(err.field, "sigma") != 0)
        fail_msg("%s: set refused without naming rating or sigma: \"%s\"", rn->c->model,
                 err.field);
    rn->t.edits++;
    rn->t.edits_refused += rc != 0;
    rn->t.bounds_taken += rc == 0 && (mu == rn->range.set_lo || mu == rn->range.set_hi);
}

/* One edit that must be taken (@p field NULL) or refused naming @p field. */
static void edge_edit(run *rn, const char *player, double mu, double sigma, const char *field)
{
    eo_engine_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_engine_set_rating(rn->e, "p", player, mu, sigma, rn->clock, &err);
    if (field == NULL ? rc != 0 : (rc == 0 || strcmp(err.field, field) != 0))
        fail_msg("%s %s: set %.17g (sigma %.17g): %d %s %s", rn->c->model, rn->c->params, mu,
                 sigma, rc, err.field, err.message);
    rn->t.edits++;
    rn->t.edits_refused += rc != 0;
    rn->t.bounds_taken += rc == 0;
}

/* The bounds of the range are taken, one step beyond them is refused, for the mean and (in
 * models with one) the deviation. */
static void edge_edits(run *rn)
{
    const eo_model_range *g = &rn->range;
    edge_edit(rn, "u0", g->set_lo, -1, NULL);
    edge_edit(rn, "u1", g->set_hi, -1, NULL);
    edge_edit(rn, "u2", nextafter(g->set_lo, -INFINITY), -1, "rating");
    edge_edit(rn, "u2", nextafter(g->set_hi, INFINITY), -1, "rating");
    if (g->sigma_max > 0) {
        edge_edit(rn, "u3", g->set_lo, g->sigma_max, NULL);
        edge_edit(rn, "u3", g->set_hi, nextafter(g->sigma_max, INFINITY), "sigma");
    }
}

/* The same through the request's JSON text and the codec. */
static void edit_json(run *rn, const char *player)
{
    static const char *const odd[] = {"NaN", "Infinity", "-Infinity", "1e999", "-1e999",
                                      "null", "\"5\"", "1e-400", "-0", "[1]"};
    char text[160];
    if (below(&rn->r, 4) == 0)
        snprintf(text, sizeof text, "{\"rating\":%s}", odd[below(&rn->r, 10)]);
    else if (below(&rn->r, 2))
        snprintf(text, sizeof text, "{\"rating\":%.17g}", pick_mean(rn));
    else
        snprintf(text, sizeof text, "{\"rating\":%.17g,\"sigma\":%.17g}", pick_mean(rn),
                 pick_sigma(rn));
    json_t *o = parse(text); /* nan and inf print as text that is not JSON: a 400 already */
    double mu = 0, sigma = -1;
    eo_request_error rerr;
    if (o == NULL || eo_rating_request_from_json(o, &mu, &sigma, &rerr) != 0) {
        json_decref(o);
        rn->t.edits_refused++;
        return;
    }
    json_decref(o);
    eo_engine_error err;
    int rc = eo_engine_set_rating(rn->e, "p", player, mu, sigma, rn->clock, &err);
    expect_own_error(rn, rc, &err, text);
    assert_int_equal(rc == 0, eo_model_check_set(rn->model, mu, sigma, NULL) == 0);
    rn->t.edits++;
    rn->t.edits_refused += rc != 0;
}

/* ---- rounds ---- */

/* One member's object: an id and now and then a weight, a commander flag, a playtime, or
 * (rarely) an invalid field. */
static int member_text(run *rn, char *out, size_t cap, int player, bool *invalid)
{
    char extra[160] = "";
    size_t k = below(&rn->r, 12);
    if (k == 0)
        snprintf(extra, sizeof extra, ",\"time\":0");
    else if (k == 1)
        snprintf(extra, sizeof extra, ",\"time\":1e-300");
    else if (k == 2)
        snprintf(extra, sizeof extra, ",\"time\":%.17g", unif(&rn->r));
    else if (k == 3)
        snprintf(extra, sizeof extra, ",\"joined\":%d,\"left\":%d", (int)below(&rn->r, 300),
                 300 + (int)below(&rn->r, 900));
    else if (k == 4)
        snprintf(extra, sizeof extra, ",\"commander\":true");
    else if (k == 5)
        snprintf(extra, sizeof extra, ",\"playtime\":%s",
                 below(&rn->r, 2) ? "1e300" : (below(&rn->r, 2) ? "0" : "36000"));
    else if (k == 6 && below(&rn->r, 8) == 0) {
        snprintf(extra, sizeof extra, ",\"time\":%s", below(&rn->r, 2) ? "1.5" : "-0.25");
        *invalid = true;
    }
    return snprintf(out, cap, "{\"id\":\"u%d\"%s}", player, extra);
}

/* A round's JSON text with id @p id, @p na and @p nb distinct members. */
static void round_text(run *rn, char *out, size_t cap, const char *id, bool *invalid)
{
    int perm[PLAYERS];
    for (int i = 0; i < PLAYERS; i++)
        perm[i] = i;
    for (int i = PLAYERS - 1; i > 0; i--) {
        int j = (int)below(&rn->r, (size_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    size_t na = 1 + below(&rn->r, 8), nb = 1 + below(&rn->r, 8);
    static const char *const winners[] = {"A", "B", "draw"};
    static const char *const maps[] = {"", ",\"map\":\"m0\"", ",\"map\":\"m1\"", ",\"map\":\"m2\""};
    rn->clock += 600;
    int n = snprintf(out, cap,
                     "{\"id\":\"%s\",\"winner\":\"%s\",\"started_at\":%lld,\"ended_at\":%lld%s,"
                     "\"A\":[",
                     id, winners[below(&rn->r, 3)], (long long)rn->clock - 500,
                     (long long)rn->clock - (long long)below(&rn->r, 400), maps[below(&rn->r, 4)]);
    for (size_t i = 0; i < na + nb; i++) {
        if (i == na)
            n += snprintf(out + n, cap - (size_t)n, "],\"B\":[");
        else if (i > 0)
            n += snprintf(out + n, cap - (size_t)n, ",");
        n += member_text(rn, out + n, cap - (size_t)n, perm[i], invalid);
    }
    snprintf(out + n, cap - (size_t)n, "]}");
}

/* A new round, or now and then one sent before: the same text (a replay) or new content
 * under its id (a conflict). */
static void one_round(run *rn)
{
    char id[32], text[4096];
    bool again = rn->next_round > 0 && below(&rn->r, 8) == 0;
    int which = again ? (int)below(&rn->r, (size_t)rn->next_round) : rn->next_round++;
    snprintf(id, sizeof id, "g%d", which);
    bool invalid = false;
    round_text(rn, text, sizeof text, id, &invalid);
    if (again && below(&rn->r, 2) && rn->texts[which][0] != '\0') {
        memcpy(text, rn->texts[which], sizeof text);
        invalid = false; /* sent before: rated then, or refused then and now for the same reason */
    }
    if (!again)
        memcpy(rn->texts[which], text, sizeof text);
    json_t *o = parse(text);
    assert_non_null(o);
    char *resp = NULL;
    int replayed = 0;
    eo_engine_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_engine_round(rn->e, "p", o, rn->clock, &resp, &replayed, &err);
    json_decref(o);
    expect_own_error(rn, rc, &err, text);
    if (rc == 0) {
        assert_false(invalid);
        json_t *a = parse(resp); /* the answer is JSON */
        assert_non_null(a);
        json_decref(a);
        free(resp);
        rn->t.rated += !replayed;
        rn->t.replayed += replayed;
        return;
    }
    assert_null(resp);
    rn->t.refused_round[err.status == 400 ? 0 : err.status == 409 ? 1 : 2]++;
    if (err.status == 400 && !invalid && !again)
        fail_msg("%s: a valid round refused: %s: %s\n%s", rn->c->model, err.field, err.message,
                 text);
}

/* ---- the store read back ---- */

static void expect_finite_json(const json_t *v, const char *where)
{
    if (json_is_real(v) && !isfinite(json_real_value(v)))
        fail_msg("non-finite number in %s", where);
    const char *key;
    json_t *x;
    size_t i;
    if (json_is_object(v))
        json_object_foreach((json_t *)v, key, x) expect_finite_json(x, where);
    if (json_is_array(v))
        json_array_foreach(v, i, x) expect_finite_json(x, where);
}

/* Property 4 for the log: every entry is JSON with finite numbers (the answers: below). */
static int check_entry(void *ctx, const eo_log_entry *le)
{
    (void)ctx;
    json_t *o = parse(le->body);
    assert_non_null(o);
    expect_finite_json(o, le->body);
    json_decref(o);
    return 0;
}

static int check_row(void *ctx, const char *id, const eo_player_row *row)
{
    (void)ctx;
    bool ok = isfinite(row->rating) && isfinite(row->mu) && isfinite(row->sigma) &&
              isfinite(row->volatility);
    for (int k = 0; k < EO_VIEW_EXTRA; k++)
        ok = ok && isfinite(row->extra[k]);
    if (!ok)
        fail_msg("player %s: a non-finite value in his row", id);
    return 0;
}

static void check_answers(eo_store *st, int64_t pool, int rounds)
{
    for (int i = 0; i < rounds; i++) {
        char id[32], *body = NULL, *resp = NULL;
        snprintf(id, sizeof id, "g%d", i);
        if (eo_store_round_find(st, pool, id, &body, &resp) != 0)
            continue; /* refused */
        json_t *a = parse(resp);
        assert_non_null(a);
        expect_finite_json(a, resp);
        json_decref(a);
        free(body);
        free(resp);
    }
}

/* ---- memory against a fresh fold and the rows ---- */

typedef struct cmp_ctx {
    const eo_pool *other;
    eo_store *st;
    int64_t pool;
    bool rows;
    size_t n;
} cmp_ctx;

static bool same_view(const eo_rating_view *a, const eo_rating_view *b)
{
    bool same = a->display == b->display && a->mu == b->mu && a->sigma == b->sigma &&
                a->volatility == b->volatility && a->rounds == b->rounds &&
                a->visible == b->visible && a->last_ended_at == b->last_ended_at;
    for (int k = 0; k < EO_VIEW_EXTRA; k++)
        same = same && a->extra[k] == b->extra[k];
    return same;
}

static int compare_one(void *ctx, const char *id, const eo_rating_view *v)
{
    cmp_ctx *c = ctx;
    eo_rating_view w;
    assert_int_equal(eo_pool_lookup(c->other, id, NOW, &w), 0);
    if (!same_view(v, &w))
        fail_msg("player %s: memory mu %.17g sigma %.17g rounds %u, fold mu %.17g sigma %.17g "
                 "rounds %u",
                 id, v->mu, v->sigma, v->rounds, w.mu, w.sigma, w.rounds);
    eo_player_row row;
    int rc = eo_store_player_get(c->st, c->pool, id, &row);
    assert_true(rc == 0 || rc == EO_ENOTFOUND); /* an edit to a refused value writes no row */
    if (c->rows && rc == 0 &&
        !(row.mu == v->mu && row.sigma == v->sigma && row.rounds == v->rounds))
        fail_msg("player %s: row mu %.17g rounds %u, memory mu %.17g rounds %u", id, row.mu,
                 row.rounds, v->mu, v->rounds);
    c->n++;
    return 0;
}

static int64_t pool_id(eo_engine *e)
{
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(eo_engine_store(e), "p", &row), 0);
    int64_t id = row.id;
    eo_pool_row_free(&row);
    return id;
}

/* Properties 4 and 5 after a committed batch. */
static void check_store(run *rn)
{
    eo_store *st = eo_engine_store(rn->e);
    int64_t pid = pool_id(rn->e);
    assert_int_equal(eo_store_log_each(st, pid, 0, check_entry, NULL), 0);
    assert_int_equal(eo_store_players_each(st, pid, check_row, NULL), 0);
    check_answers(st, pid, rn->next_round);
    eo_engine *fresh = open_engine(rn->path);
    const eo_pool *live = eo_engine_pool(rn->e, "p"), *fold = eo_engine_pool(fresh, "p");
    cmp_ctx c = {fold, st, pid, !rn->c->rows_lag, 0};
    assert_int_equal(eo_pool_each_player(live, NOW, compare_one, &c), 0);
    assert_int_equal(c.n, eo_pool_player_count(fold));
    eo_pool_quality q1, q2;
    eo_pool_get_quality(live, NOW, &q1);
    eo_pool_get_quality(fold, NOW, &q2);
    assert_true(q1.rounds == q2.rounds && q1.players == q2.players);
    eo_engine_close(fresh);
}

/* ---- one configuration ---- */

static void run_config(const config *c, uint64_t seed)
{
    run rn;
    memset(&rn, 0, sizeof rn);
    rn.c = c;
    rn.r.s = seed;
    rn.clock = 1763800000;
    rn.texts = calloc(ROUNDS_MAX, sizeof *rn.texts);
    assert_non_null(rn.texts);
    snprintf(rn.path, sizeof rn.path, "/tmp/eo_test_engine_props_XXXXXX");
    int fd = mkstemp(rn.path);
    assert_true(fd >= 0);
    close(fd);
    rn.e = open_engine(rn.path);
    eo_engine_isolate(rn.e, true);
    eo_engine_track_written(rn.e, true);
    json_t *params = parse(c->params);
    assert_non_null(params);
    eo_engine_error err;
    if (eo_engine_pool_create(rn.e, "p", c->model, params, NOW, &err) != 0)
        fail_msg("%s %s: %s: %s", c->model, c->params, err.field, err.message);
    json_decref(params);
    rn.model = eo_pool_model(eo_engine_pool(rn.e, "p"));
    eo_model_range_of(rn.model, &rn.range);
    for (int b = 0; b < BATCHES; b++) {
        assert_int_equal(eo_engine_begin(rn.e), 0);
        if (b == 0)
            edge_edits(&rn);
        for (int k = 0; k < CALLS; k++) {
            char player[16];
            snprintf(player, sizeof player, "u%d", (int)below(&rn.r, PLAYERS));
            size_t what = below(&rn.r, 20);
            if (what < 3)
                edit_direct(&rn, player);
            else if (what < 6)
                edit_json(&rn, player);
            else if (what == 6)
                expect_own_error(&rn, eo_engine_reset_player(rn.e, "p", player, rn.clock, &err),
                                 &err, "reset");
            else
                one_round(&rn);
        }
        assert_int_equal(eo_engine_commit(rn.e), 0); /* property 3 */
        check_store(&rn);
    }
    print_message("%-9s %-70.70s rated %3d replayed %2d refused 400:%2d 409:%2d 422:%2d edits "
                  "%3d (refused %3d, bounds taken %2d)\n",
                  c->model, c->params, rn.t.rated, rn.t.replayed, rn.t.refused_round[0],
                  rn.t.refused_round[1], rn.t.refused_round[2], rn.t.edits, rn.t.edits_refused,
                  rn.t.bounds_taken);
    assert_true(rn.t.rated > 0);
    eo_engine_close(rn.e);
    test_store_remove(rn.path);
    free(rn.texts);
}

/* Every registered model appears in CONFIGS: a model added to the registry must be added
 * here too. */
static void every_model_listed(void **unused)
{
    (void)unused;
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        bool found = false;
        for (size_t i = 0; i < sizeof CONFIGS / sizeof CONFIGS[0]; i++)
            found = found || strcmp(CONFIGS[i].model, eo_model_name((eo_model)m)) == 0;
        if (!found)
            fail_msg("model %s has no configuration here", eo_model_name((eo_model)m));
    }
}

static void poison_isolation(void **unused)
{
    (void)unused;
    for (size_t i = 0; i < sizeof CONFIGS / sizeof CONFIGS[0]; i++)
        run_config(&CONFIGS[i], 0x5eed0000u + i);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_model_listed),
        cmocka_unit_test(poison_isolation),
    };
    return cmocka_run_group_tests_name("engine_props", tests, NULL, NULL);
}
