/* The in-memory pool (eo_pool.h). Expected values by hand; see each comment. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_pool.h"
#include "evenodds/eo_synelo.h"
#include "gen.h"

static eo_pool *new_pool(void)
{
    eo_pool_config cfg;
    eo_pool *p = NULL;
    eo_pool_config_default(&cfg);
    assert_int_equal(eo_pool_create(&cfg, &p), 0);
    return p;
}

/* A round of plain members: ids a[0..na) vs b[0..nb). */
typedef struct test_round {
    eo_round r;
    eo_member m[2][16];
} test_round;

static eo_round *mk(test_round *t, const char *const *a, size_t na, const char *const *b,
                    size_t nb, eo_winner w, int64_t ended_at)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < na; i++)
        t->m[0][i].id = (char *)a[i];
    for (size_t i = 0; i < nb; i++)
        t->m[1][i].id = (char *)b[i];
    t->r.id = (char *)"r";
    t->r.team[0] = t->m[0];
    t->r.team[1] = t->m[1];
    t->r.n[0] = na;
    t->r.n[1] = nb;
    t->r.winner = w;
    t->r.ended_at = ended_at;
    return &t->r;
}

static void unknown_lookup(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(p, "76561198000000001", 100, &v), EO_ENOTFOUND);
    assert_int_equal(v.display, 1000);
    assert_int_equal(v.rounds, 0);
    assert_false(v.visible);
    assert_false(v.stale);
    assert_int_equal(eo_pool_player_count(p), 0); /* nothing written */
    assert_int_equal(eo_pool_reset_player(p, "nobody"), EO_ENOTFOUND);
    assert_int_equal(eo_pool_player_count(p), 0);
    eo_pool_destroy(p);
    eo_pool_destroy(NULL);
}

/* First round of two new players 1v1: K = 72, P = 0.5: +36 / -36. */
static void apply_and_lookup(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    const char *a[] = {"x"};
    const char *b[] = {"y"};
    test_round t;
    eo_round_result res;
    eo_member_result m[2];
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, EO_WIN_A, 1000), &res, m), 0);
    assert_true(res.p_a == 0.5);
    assert_int_equal(res.n, 2);
    assert_string_equal(m[0].id, "x");
    assert_int_equal(m[0].before, 1000);
    assert_int_equal(m[0].rating, 1036);
    assert_int_equal(m[0].delta, 36);
    assert_int_equal(m[1].delta, -36);
    assert_true(m[0].expected == 0.5 && m[0].k == 72.0);
    assert_int_equal(m[0].rounds, 1);
    assert_false(m[0].visible);
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(p, "x", 1000, &v), 0);
    assert_int_equal(v.display, 1036);
    assert_int_equal(v.rounds, 1);
    assert_int_equal(v.last_ended_at, 1000);
    assert_int_equal(eo_pool_lookup(p, "y", 1000, &v), 0);
    assert_int_equal(v.display, 964);
    assert_int_equal(eo_pool_player_count(p), 2);
    /* Stale: more than 30 days after the last round's end, not at exactly 30 days. */
    assert_int_equal(eo_pool_lookup(p, "x", 1000 + 30 * 86400, &v), 0);
    assert_false(v.stale);
    assert_int_equal(eo_pool_lookup(p, "x", 1000 + 30 * 86400 + 1, &v), 0);
    assert_true(v.stale);
    eo_pool_destroy(p);
}

/* Admin: set accepts integers in [R_min, RATING_MAX] (else EO_ERANGE, nothing changed) and
 * keeps rounds; reset makes the player new. */
static void set_and_reset(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    const char *a[] = {"x"};
    const char *b[] = {"y"};
    test_round t;
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, EO_WIN_A, 5), NULL, NULL), 0);
    eo_rating_view v;
    eo_pool_lookup(p, "x", 5, &v);
    double before = v.display;
    assert_int_equal(eo_pool_set_rating(p, "x", 99, -1), EO_ERANGE);
    assert_int_equal(eo_pool_set_rating(p, "x", EO_SYNELO_RATING_MAX + 1, -1), EO_ERANGE);
    assert_int_equal(eo_pool_set_rating(p, "x", 1500.5, -1), EO_ERANGE);
    assert_int_equal(eo_pool_set_rating(p, "x", NAN, -1), EO_EINVAL);
    eo_pool_lookup(p, "x", 5, &v);
    assert_true(v.display == before);
    assert_int_equal(v.rounds, 1);
    assert_int_equal(eo_pool_set_rating(p, "x", 100, -1), 0);
    eo_pool_lookup(p, "x", 5, &v);
    assert_true(v.display == 100);
    assert_int_equal(eo_pool_set_rating(p, "x", 1500, 3.0), 0); /* SynElo has no deviation */
    eo_pool_lookup(p, "x", 5, &v);
    assert_int_equal(v.display, 1500);
    /* A refused set on an unknown player does not create it; an accepted one does. */
    assert_int_equal(eo_pool_set_rating(p, "z", 99, -1), EO_ERANGE);
    assert_int_equal(eo_pool_lookup(p, "z", 5, &v), EO_ENOTFOUND);
    assert_int_equal(eo_pool_set_rating(p, "z", 1234, -1), 0);
    assert_int_equal(eo_pool_lookup(p, "z", 5, &v), 0);
    assert_int_equal(v.display, 1234);
    assert_int_equal(v.rounds, 0);
    assert_int_equal(eo_pool_set_rating(p, "bad\x01id", 1234, -1), EO_EINVAL);
    assert_int_equal(eo_pool_reset_player(p, "x"), 0);
    assert_int_equal(eo_pool_lookup(p, "x", 5, &v), 0);
    assert_int_equal(v.display, 1000);
    assert_int_equal(v.rounds, 0);
    assert_int_equal(v.last_ended_at, 0);
    /* After the reset x is new again: C = 1, G = 1, K = 72 (vs y at 964: P_x > 0.5). */
    eo_member_result m[2];
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, EO_WIN_A, 6), NULL, m), 0);
    assert_true(m[0].k == 72.0);
    assert_int_equal(m[0].rounds, 1);
    eo_pool_destroy(p);
}

/* Invalid rounds leave the pool unchanged, new players included. */
static void apply_rejects(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    test_round t;
    const char *a[] = {"x", "y"};
    const char *b[] = {"z", "x"};
    const char *c[] = {"u", "u"};
    const char *d[] = {"ok", "bad\nid"};
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 2, b, 2, EO_WIN_A, 1), NULL, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, c, 2, EO_WIN_A, 1), NULL, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, d, 2, EO_WIN_A, 1), NULL, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 2, b, 0, EO_WIN_A, 1), NULL, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, (eo_winner)9, 1), NULL, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_pool_player_count(p), 0);
    /* Known players twice: x is known now. */
    const char *e[] = {"x"};
    const char *f[] = {"w"};
    assert_int_equal(eo_pool_apply(p, mk(&t, e, 1, f, 1, EO_WIN_A, 1), NULL, NULL), 0);
    const char *g[] = {"x", "w"};
    const char *h[] = {"x"};
    assert_int_equal(eo_pool_apply(p, mk(&t, g, 2, h, 1, EO_WIN_A, 1), NULL, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_player_count(p), 2);
    eo_rating_view v;
    eo_pool_lookup(p, "x", 1, &v);
    assert_int_equal(v.rounds, 1);
    eo_pool_destroy(p);
}

typedef struct collect {
    char ids[8][8];
    int n;
    int stop_at;
} collect;

static int collect_fn(void *ctx, const char *id, const eo_rating_view *v)
{
    collect *c = ctx;
    (void)v;
    snprintf(c->ids[c->n], sizeof c->ids[c->n], "%s", id);
    c->n++;
    return c->n == c->stop_at ? 42 : 0;
}

/* each_player: ascending byte order of id ("B" < "a" < "ab" < "b" in ASCII), and a non-zero
 * return stops the walk and is returned. */
static void each_player_order(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    const char *ids[] = {"b", "ab", "a", "B"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(eo_pool_set_rating(p, ids[i], 1000 + i, -1), 0);
    collect c = {.n = 0, .stop_at = -1};
    assert_int_equal(eo_pool_each_player(p, 0, collect_fn, &c), 0);
    assert_int_equal(c.n, 4);
    assert_string_equal(c.ids[0], "B");
    assert_string_equal(c.ids[1], "a");
    assert_string_equal(c.ids[2], "ab");
    assert_string_equal(c.ids[3], "b");
    collect d = {.n = 0, .stop_at = 2};
    assert_int_equal(eo_pool_each_player(p, 0, collect_fn, &d), 42);
    assert_int_equal(d.n, 2);
    eo_pool_destroy(p);
}

/* Quality on a tiny log:
 *   round 1: x vs y, both new: P_A = 0.5, A wins: (0.5 - 1)² = 0.25, |P - .5| = 0
 *   round 2: u vs v, both new, draw: P_A = 0.5, O = 0.5: 0, 0
 *   round 3: x (1036) vs z (new, 1000), B wins: P_A = 1/(1+exp(-36/2400)) = 0.503749929...
 *            P_A² = 0.253764..., |P - .5| = 0.003749929...
 * Brier (all = last 500 here) = (0.25 + 0 + P_A²)/3; balance = (P_A - 0.5)/3. */
static void quality(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    eo_pool_quality q;
    eo_pool_get_quality(p, 0, &q);
    assert_int_equal(q.rounds, 0);
    assert_true(isnan(q.brier_all) && isnan(q.brier_recent) && isnan(q.balance_recent));
    test_round t;
    const char *x[] = {"x"}, *y[] = {"y"}, *u[] = {"u"}, *v[] = {"v"}, *z[] = {"z"};
    assert_int_equal(eo_pool_apply(p, mk(&t, x, 1, y, 1, EO_WIN_A, 1), NULL, NULL), 0);
    assert_int_equal(eo_pool_apply(p, mk(&t, u, 1, v, 1, EO_DRAW, 2), NULL, NULL), 0);
    eo_round_result res;
    assert_int_equal(eo_pool_apply(p, mk(&t, x, 1, z, 1, EO_WIN_B, 3), &res, NULL), 0);
    double pa = 1.0 / (1.0 + exp(-36.0 / 2400.0));
    assert_true(fabs(res.p_a - pa) < 1e-15);
    eo_pool_get_quality(p, 0, &q);
    assert_int_equal(q.rounds, 3);
    assert_int_equal(q.players, 5);
    assert_int_equal(q.visible_players, 0);
    assert_true(fabs(q.brier_all - (0.25 + pa * pa) / 3.0) < 1e-15);
    assert_true(fabs(q.brier_recent - (0.25 + pa * pa) / 3.0) < 1e-15);
    assert_true(fabs(q.balance_recent - (pa - 0.5) / 3.0) < 1e-15);
    assert_true(fabs(q.brier_all - 0.16792) < 1e-5);
    eo_pool_destroy(p);
}

/* The recent window holds the last 500 rounds: 500 draws of equal new players (Brier 0 each)
 * after 100 decided ones (0.25 each): all = 25/600, recent = 0. */
static void quality_recent(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    test_round t;
    char ida[32], idb[32];
    for (int i = 0; i < 600; i++) {
        snprintf(ida, sizeof ida, "a%d", i);
        snprintf(idb, sizeof idb, "b%d", i);
        const char *a[] = {ida}, *b[] = {idb};
        assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, i < 100 ? EO_WIN_B : EO_DRAW, 1),
                                       NULL, NULL), 0);
    }
    eo_pool_quality q;
    eo_pool_get_quality(p, 0, &q);
    assert_true(fabs(q.brier_all - 25.0 / 600.0) < 1e-15);
    assert_true(q.brier_recent == 0.0);
    assert_true(q.balance_recent == 0.0);
    eo_pool_destroy(p);
}

/* Visibility: 50 rounds. */
static void visible_after_50(void **state)
{
    (void)state;
    eo_pool *p = new_pool();
    test_round t;
    char opp[32];
    for (int i = 0; i < 50; i++) {
        snprintf(opp, sizeof opp, "o%d", i);
        const char *a[] = {"x"}, *b[] = {opp};
        eo_member_result m[2];
        assert_int_equal(eo_pool_apply(p, mk(&t, a, 1, b, 1, i % 2 ? EO_WIN_A : EO_WIN_B, 1),
                                       NULL, m), 0);
        assert_true(m[0].visible == (i == 49));
    }
    eo_pool_quality q;
    eo_pool_get_quality(p, 0, &q);
    assert_int_equal(q.visible_players, 1);
    eo_pool_destroy(p);
}

typedef struct cmp_ctx {
    const eo_pool *other;
    int n;
} cmp_ctx;

static int same_as_other(void *ctx, const char *id, const eo_rating_view *v)
{
    cmp_ctx *c = ctx;
    eo_rating_view w;
    assert_int_equal(eo_pool_lookup(c->other, id, 0, &w), 0);
    assert_true(v->display == w.display);
    assert_int_equal(v->rounds, w.rounds);
    assert_int_equal(v->last_ended_at, w.last_ended_at);
    c->n++;
    return 0;
}

/* The handle path gives exactly what eo_pool_apply gives, round by round. */
static void handles_match_apply(void **state)
{
    (void)state;
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.players = 200;
    gc.team_min = 1;
    gc.team_max = 8;
    gc.seed = 99;
    eo_gen *g;
    assert_int_equal(eo_gen_create(&gc, &g), 0);
    eo_pool *p1 = new_pool();
    eo_pool *p2 = new_pool();
    for (int i = 0; i < 3000; i++) {
        eo_round r;
        eo_gen_next(g, &r);
        eo_round_result r1, r2;
        eo_member_result m[16];
        eo_model_update u[16];
        assert_int_equal(eo_pool_apply(p1, &r, &r1, m), 0);
        eo_player_handle h[16];
        size_t n = r.n[0] + r.n[1];
        for (size_t j = 0; j < n; j++) {
            const char *id = j < r.n[0] ? r.team[0][j].id : r.team[1][j - r.n[0]].id;
            assert_int_equal(eo_pool_handle(p2, id, &h[j]), 0);
            assert_string_equal(eo_pool_handle_id(p2, h[j]), id);
        }
        assert_int_equal(eo_pool_apply_handles(p2, h, r.n[0], h + r.n[0], r.n[1], r.winner,
                                               r.ended_at, &r2, u), 0);
        assert_true(r1.p_a == r2.p_a);
        for (size_t j = 0; j < n; j++) {
            assert_true(m[j].rating == u[j].after);
            assert_true(m[j].k == u[j].k);
        }
    }
    /* A repeated handle is rejected. */
    eo_player_handle dup[2] = {0, 0};
    assert_int_equal(eo_pool_apply_handles(p2, dup, 1, dup + 1, 1, EO_WIN_A, 0, NULL, NULL),
                     EO_EINVAL);
    assert_null(eo_pool_handle_id(p2, 1000000));
    cmp_ctx c = {p2, 0};
    assert_int_equal(eo_pool_each_player(p1, 0, same_as_other, &c), 0);
    assert_int_equal((size_t)c.n, eo_pool_player_count(p2));
    eo_pool_quality q1, q2;
    eo_pool_get_quality(p1, 0, &q1);
    eo_pool_get_quality(p2, 0, &q2);
    assert_true(q1.brier_all == q2.brier_all && q1.brier_recent == q2.brier_recent);
    eo_pool_destroy(p1);
    eo_pool_destroy(p2);
    eo_gen_destroy(g);
}

static void model_names(void **state)
{
    (void)state;
    eo_model m;
    assert_int_equal(eo_model_parse("synelo", &m), 0);
    assert_int_equal(m, EO_MODEL_SYNELO);
    assert_string_equal(eo_model_name(EO_MODEL_SYNELO), "synelo");
    assert_int_equal(eo_model_parse("nosuchmodel", &m), EO_EINVAL);
    eo_pool_config cfg;
    eo_pool_config_default(&cfg);
    cfg.model.v[eo_model_param_index(EO_MODEL_SYNELO, "window")] = 0;
    eo_pool *p = NULL;
    assert_int_equal(eo_pool_create(&cfg, &p), EO_EINVAL);
    assert_null(p);
}


static eo_pool *new_bias_pool(eo_model model, eo_bias_by by, double prior)
{
    eo_pool_config cfg;
    eo_pool_config_default(&cfg);
    assert_int_equal(eo_model_config_default(model, &cfg.model), 0);
    cfg.bias.by = by;
    cfg.bias.prior = prior;
    eo_pool *p = NULL;
    assert_int_equal(eo_pool_create(&cfg, &p), 0);
    return p;
}

/* SynElo, bias by map with prior 0. Round 1 on "m", x vs y (both new, 1000): field 0, P(A)
 * 0.5; then P0 = 0.5, g = 0.25 (the logistic slope, by symmetric difference), A wins:
 * U = 0.25 · 0.5 / 0.25 = 0.5, I = 0.0625 / 0.25 = 0.25, bias = 2 logits. Round 2 on "m", u
 * vs v (new): P(A) = σ(2) = 0.8808, and every member's expected says so. A round without a
 * map takes field 0 and leaves the table alone; a round on "n" starts its own key. */
static void bias_field_enters_p_a(void **state)
{
    (void)state;
    eo_pool *p = new_bias_pool(EO_MODEL_SYNELO, EO_BIAS_MAP, 0.0);
    test_round t;
    eo_round_result res;
    eo_member_result mr[2];
    const char *x[] = {"x"}, *y[] = {"y"}, *u[] = {"u"}, *v[] = {"v"}, *w[] = {"w"}, *z[] = {"z"};
    eo_round *r = mk(&t, x, 1, y, 1, EO_WIN_A, 1);
    r->map = (char *)"m";
    assert_int_equal(eo_pool_apply(p, r, &res, NULL), 0);
    assert_true(res.p_a == 0.5);
    double f;
    assert_int_equal(eo_pool_bias_field(p, "m", 1, 1, NULL, &f), 0);
    assert_true(fabs(f - 2.0) < 1e-6);
    r = mk(&t, u, 1, v, 1, EO_WIN_B, 2);
    r->map = (char *)"m";
    assert_int_equal(eo_pool_apply(p, r, &res, mr), 0);
    double pa = 1.0 / (1.0 + exp(-f));
    assert_true(fabs(res.p_a - pa) < 1e-12);
    assert_true(fabs(mr[0].expected - pa) < 1e-12);
    assert_true(fabs(mr[1].expected - (1.0 - pa)) < 1e-12);
    /* U = 0.5 + 0.25 · (0 − 0.5) / 0.25 = 0, so the bias is back to 0. */
    assert_int_equal(eo_pool_bias_field(p, "m", 1, 1, NULL, &f), 0);
    assert_true(fabs(f) < 1e-9);
    assert_int_equal(eo_pool_apply(p, mk(&t, w, 1, z, 1, EO_WIN_A, 3), &res, NULL), 0);
    assert_true(res.p_a == 0.5);
    assert_int_equal(eo_bias_count(eo_pool_bias(p)), 1);
    assert_int_equal(eo_pool_bias_field(p, "n", 1, 1, NULL, &f), 0);
    assert_true(f == 0.0);
    assert_int_equal(eo_pool_bias_field(p, NULL, 1, 1, NULL, &f), 0);
    assert_true(f == 0.0);
    eo_bias_stats s;
    assert_int_equal(eo_bias_get(eo_pool_bias(p), 0, &s), 0);
    assert_int_equal(s.plays, 2);
    assert_int_equal(s.a_wins, 1);
    assert_int_equal(s.b_wins, 1);
    eo_pool_destroy(p);

    p = new_pool(); /* off: no table, field 0 */
    assert_null(eo_pool_bias(p));
    assert_int_equal(eo_pool_bias_field(p, "m", 1, 1, NULL, &f), 0);
    assert_true(f == 0.0);
    r = mk(&t, x, 1, y, 1, EO_WIN_A, 1);
    r->map = (char *)"m";
    assert_int_equal(eo_pool_apply(p, r, &res, NULL), 0);
    assert_true(res.p_a == 0.5);
    eo_pool_destroy(p);
}

/* eo_pool_predict() says what eo_pool_apply() then gives as p_a, for every model, with the bias
 * on and players known and unknown, and changes nothing. */
static void predict_matches_apply(void **state)
{
    (void)state;
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        eo_pool *p = new_bias_pool((eo_model)m, EO_BIAS_MAP, 1.0);
        test_round t;
        eo_round_result res;
        const char *a[] = {"a1", "a2", "a3"}, *b[] = {"b1", "b2", "b3"}, *c[] = {"a1", "n1"},
                   *d[] = {"b2", "n2", "n3"};
        for (int i = 0; i < 6; i++) {
            eo_round *r = i == 5 ? mk(&t, c, 2, d, 3, EO_WIN_B, 100 + i)
                                 : mk(&t, a, 3, b, 3, i % 2 ? EO_WIN_B : EO_WIN_A, 100 + i);
            r->map = (char *)"m";
            double pa;
            assert_int_equal(eo_pool_predict(p, r, &pa), 0);
            size_t before = eo_pool_player_count(p);
            assert_int_equal(eo_pool_predict(p, r, &pa), 0);
            assert_int_equal(eo_pool_player_count(p), before);
            assert_int_equal(eo_pool_apply(p, r, &res, NULL), 0);
            assert_true(pa == res.p_a);
        }
        eo_round *r = mk(&t, a, 0, b, 3, EO_WIN_A, 1);
        double pa;
        assert_int_equal(eo_pool_predict(p, r, &pa), EO_EINVAL);
        eo_pool_destroy(p);
    }
}

/* Swapping the teams and the winner of every round negates every key's bias, for a logistic
 * and a Gaussian model (to rounding: the models' P(A) of swapped teams is 1 − P(A) to an ulp
 * or so), and keys by size bucket and mode follow the rounds. */
static void bias_mirror(void **state)
{
    (void)state;
    const eo_model models[] = {EO_MODEL_ELO, EO_MODEL_TRUESKILL};
    const char *maps[] = {"goldrush", "oasis", "radar"};
    for (size_t mi = 0; mi < 2; mi++) {
        eo_pool *p = new_bias_pool(models[mi], EO_BIAS_MAP_SIZE, 20.0);
        eo_pool *q = new_bias_pool(models[mi], EO_BIAS_MAP_SIZE, 20.0);
        eo_gen_config gc;
        eo_gen_config_default(&gc);
        gc.players = 60;
        gc.team_min = 4;
        gc.team_max = 8;
        eo_gen *g = NULL;
        assert_int_equal(eo_gen_create(&gc, &g), 0);
        for (int i = 0; i < 600; i++) {
            eo_round r;
            eo_gen_next(g, &r);
            r.map = (char *)maps[i % 3];
            assert_int_equal(eo_pool_apply(p, &r, NULL, NULL), 0);
            eo_member *ta = r.team[0];
            size_t na = r.n[0];
            r.team[0] = r.team[1];
            r.n[0] = r.n[1];
            r.team[1] = ta;
            r.n[1] = na;
            r.winner = r.winner == EO_WIN_A ? EO_WIN_B : r.winner == EO_WIN_B ? EO_WIN_A : EO_DRAW;
            assert_int_equal(eo_pool_apply(q, &r, NULL, NULL), 0);
        }
        eo_gen_destroy(g);
        const eo_bias *bp = eo_pool_bias(p), *bq = eo_pool_bias(q);
        assert_int_equal(eo_bias_count(bp), 6); /* 3 maps × buckets 1-6 and 7-12 */
        for (size_t i = 0; i < eo_bias_count(bp); i++) {
            eo_bias_stats s, m;
            assert_int_equal(eo_bias_get(bp, i, &s), 0);
            assert_int_equal(eo_bias_get(bq, i, &m), 0);
            assert_string_equal(s.map, m.map);
            assert_string_equal(s.size, m.size);
            assert_int_equal(s.a_wins, m.b_wins);
            assert_true(s.plays > 50);
            assert_true(fabs(s.bias + m.bias) <= 1e-9 * (1.0 + fabs(s.bias)));
            assert_true(fabs(s.uncertainty - m.uncertainty) <= 1e-9 * s.uncertainty);
        }
        eo_pool_destroy(p);
        eo_pool_destroy(q);
    }
}

/* Bias parameters are checked when the pool is created. */
static void bias_config_checked(void **state)
{
    (void)state;
    eo_pool_config cfg;
    eo_pool_config_default(&cfg);
    assert_int_equal(cfg.bias.by, EO_BIAS_OFF);
    cfg.bias.strength = 2.0;
    eo_pool *p = NULL;
    assert_int_equal(eo_pool_create(&cfg, &p), EO_EINVAL);
    assert_null(p);
}

static int view_line(void *ctx, const char *id, const eo_rating_view *v)
{
    char *out = ctx;
    size_t len = strlen(out);
    snprintf(out + len, 4096 - len, "%s %.17g %.17g %u %lld;", id, v->mu, v->sigma, v->rounds,
             (long long)v->last_ended_at);
    return 0;
}

/* eo_pool_apply_checked() on Weng-Lin with a and c at the top of the range μ0 + 1e8 (an even
 * 2v2 on map "m"): the winners would rise past it, so the round is EO_ERANGE naming a (index
 * 0), and the pool is exactly as before: states, players (b and d not created), rounds, the
 * bias table; the refused update is in members[0]. The same round through eo_pool_apply(),
 * which folds logs, is taken (the update clamps only at the state limit, ±1e9). */
static void apply_checked_range(void **state)
{
    (void)state;
    eo_pool *p = new_bias_pool(EO_MODEL_WENGLIN, EO_BIAS_MAP, 20);
    eo_model_range r;
    eo_model_range_of(eo_pool_model(p), &r);
    assert_true(r.hi == 25.0 + EO_MODEL_RANGE_WINDOW && r.set_hi == r.hi && !r.kept);
    assert_int_equal(eo_pool_set_rating(p, "a", r.hi, -1), 0);
    assert_int_equal(eo_pool_set_rating(p, "c", r.hi, -1), 0);
    static char before[4096], after[4096];
    before[0] = after[0] = '\0';
    assert_int_equal(eo_pool_each_player(p, 0, view_line, before), 0);
    test_round t;
    const char *a[] = {"a", "b"}, *b[] = {"c", "d"};
    eo_round *rd = mk(&t, a, 2, b, 2, EO_WIN_A, 1763800000);
    rd->map = (char *)"m";
    eo_member_result m[4];
    eo_round_result res;
    size_t bad = 99;
    assert_int_equal(eo_pool_apply_checked(p, rd, &res, m, &bad), EO_ERANGE);
    assert_int_equal(bad, 0);
    assert_string_equal(m[0].id, "a");
    assert_true(m[0].mu > r.hi);
    assert_int_equal(eo_pool_each_player(p, 0, view_line, after), 0);
    assert_string_equal(after, before);
    assert_int_equal(eo_pool_player_count(p), 2);
    eo_pool_quality q;
    eo_pool_get_quality(p, 0, &q);
    assert_true(q.rounds == 0);
    assert_int_equal(eo_bias_count(eo_pool_bias(p)), 0);
    assert_int_equal(eo_pool_apply_checked(p, rd, &res, NULL, &bad), EO_EINVAL);
    /* unchecked: rated */
    assert_int_equal(eo_pool_apply(p, rd, &res, m), 0);
    assert_true(m[0].mu > r.hi && m[0].mu < 1e9);
    assert_int_equal(eo_pool_outside_range(p, 0, NULL), 1); /* a; c lost */
    eo_pool_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unknown_lookup),
        cmocka_unit_test(apply_and_lookup),
        cmocka_unit_test(set_and_reset),
        cmocka_unit_test(apply_rejects),
        cmocka_unit_test(each_player_order),
        cmocka_unit_test(quality),
        cmocka_unit_test(quality_recent),
        cmocka_unit_test(visible_after_50),
        cmocka_unit_test(handles_match_apply),
        cmocka_unit_test(model_names),
        cmocka_unit_test(bias_field_enters_p_a),
        cmocka_unit_test(bias_mirror),
        cmocka_unit_test(predict_matches_apply),
        cmocka_unit_test(bias_config_checked),
        cmocka_unit_test(apply_checked_range),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
