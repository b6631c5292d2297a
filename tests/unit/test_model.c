/* The generic part of the model interface (eo_model.h, src/core/models/model.c): parameter
 * tables, configuration by name and text, checks, contexts, argument checks, the balancer's
 * integer scale. Exercised through SynElo, whose values are known by hand; each model's own
 * formulas are tested in its own file. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_model.h"
#include "evenodds/eo_synelo.h"
#include "models.h"

static void names_and_tables(void **state)
{
    (void)state;
    eo_model m;
    for (int i = 0; i < EO_MODEL_COUNT; i++) {
        const char *name = eo_model_name((eo_model)i);
        if (name == NULL)
            continue; /* not registered in this build */
        assert_int_equal(eo_model_parse(name, &m), 0);
        assert_int_equal(m, i);
        size_t n = 0;
        const eo_param_spec *spec = eo_model_params((eo_model)i, &n);
        assert_non_null(spec);
        assert_true(n > 0 && n <= EO_PARAMS_MAX);
        /* Every table: unique names, defaults inside their bounds, a stale period. */
        for (size_t j = 0; j < n; j++) {
            assert_int_equal(eo_model_param_index((eo_model)i, spec[j].name), (int)j);
            assert_non_null(spec[j].help);
            if (spec[j].choices == NULL)
                assert_true(spec[j].def >= spec[j].min && spec[j].def <= spec[j].max);
        }
        assert_true(eo_model_param_index((eo_model)i, "t_stale_days") >= 0);
        eo_model_config c;
        assert_int_equal(eo_model_config_default((eo_model)i, &c), 0);
        assert_int_equal(eo_model_config_check(&c, NULL), 0);
    }
    assert_string_equal(eo_model_name(EO_MODEL_SYNELO), "synelo");
    assert_null(eo_model_name(EO_MODEL_COUNT));
    assert_null(eo_model_name((eo_model)-1));
    assert_int_equal(eo_model_parse("SynElo", &m), EO_EINVAL); /* names are exact */
    assert_int_equal(eo_model_parse(NULL, &m), EO_EINVAL);
    size_t n;
    assert_null(eo_model_params(EO_MODEL_COUNT, &n));
    assert_int_equal(eo_model_param_index(EO_MODEL_SYNELO, "nope"), -1);
}

/* The list messages give: every registered name, in enum order; cut at a name when short. */
static void names_list(void **state)
{
    (void)state;
    char buf[EO_MODEL_NAMES_MAX];
    const char *want = "synelo, trueskill, glicko2, elo, wenglin, hive";
    assert_int_equal(eo_model_names(buf, sizeof buf), strlen(want));
    assert_string_equal(buf, want);
    /* The list is the registry's: each name in it parses, in order. */
    size_t at = 0;
    for (int i = 0; i < EO_MODEL_COUNT; i++) {
        const char *name = eo_model_name((eo_model)i);
        assert_non_null(name);
        assert_memory_equal(buf + at, name, strlen(name));
        at += strlen(name) + 2;
    }
    char small[20];
    assert_int_equal(eo_model_names(small, sizeof small), strlen(want));
    assert_string_equal(small, "synelo, trueskill"); /* not "synelo, trueskill, g" */
    assert_int_equal(eo_model_names(small, 7), strlen(want));
    assert_string_equal(small, "synelo");
    assert_int_equal(eo_model_names(small, 6), strlen(want));
    assert_string_equal(small, "");
    assert_int_equal(eo_model_names(NULL, 0), strlen(want));
}

static void set_by_name(void **state)
{
    (void)state;
    eo_model_config c;
    eo_round_error err;
    assert_int_equal(eo_model_config_default(EO_MODEL_SYNELO, &c), 0);
    int k_max = eo_model_param_index(EO_MODEL_SYNELO, "k_max");
    int window = eo_model_param_index(EO_MODEL_SYNELO, "window");
    assert_true(c.v[k_max] == 72.0 && c.given == 0);

    assert_int_equal(eo_model_config_set(&c, "k_max", "64.5", &err), 0);
    assert_true(c.v[k_max] == 64.5);
    assert_true(c.given == 1u << k_max);
    assert_int_equal(eo_model_config_set_number(&c, "window", 100, &err), 0);
    assert_true(c.v[window] == 100.0);

    /* Errors name the parameter and leave the configuration as it was. */
    eo_model_config before = c;
    assert_int_equal(eo_model_config_set(&c, "window", "12.5", &err), EO_EINVAL);
    assert_string_equal(err.field, "window");
    assert_non_null(strstr(err.message, "integer"));
    assert_int_equal(eo_model_config_set(&c, "window", "1", &err), EO_EINVAL);
    assert_non_null(strstr(err.message, "2 to 4096"));
    assert_int_equal(eo_model_config_set(&c, "window", "abc", &err), EO_EINVAL);
    assert_non_null(strstr(err.message, "expected a number"));
    assert_int_equal(eo_model_config_set(&c, "window", "", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "window", "10x", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "k_max", "nan", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "k_max", "inf", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "bogus", "1", &err), EO_EINVAL);
    assert_string_equal(err.field, "bogus");
    assert_non_null(strstr(err.message, "unknown parameter"));
    assert_memory_equal(&c, &before, sizeof c);
}

static void check_rules(void **state)
{
    (void)state;
    eo_model_config c;
    eo_round_error err;
    int theta = eo_model_param_index(EO_MODEL_SYNELO, "theta");
    int kmax = eo_model_param_index(EO_MODEL_SYNELO, "kmax_team");

    /* kmax_team 5: Θ = 400 · floor(median{1..5}) = 400 · 3 = 1200; then spent to 0. */
    eo_model_config_default(EO_MODEL_SYNELO, &c);
    assert_int_equal(eo_model_config_set(&c, "kmax_team", "5", &err), 0);
    assert_int_equal(eo_model_config_check(&c, &err), 0);
    assert_true(c.v[theta] == 1200.0 && c.v[kmax] == 0.0);
    assert_int_equal(eo_model_config_check(&c, &err), 0); /* stable: stored and read back */
    assert_true(c.v[theta] == 1200.0);

    eo_model_config_default(EO_MODEL_SYNELO, &c);
    assert_int_equal(eo_model_config_set(&c, "kmax_team", "12", &err), 0);
    assert_int_equal(eo_model_config_set(&c, "theta", "2400", &err), 0);
    assert_int_equal(eo_model_config_check(&c, &err), EO_EINVAL);
    assert_string_equal(err.field, "kmax_team");

    eo_model_config_default(EO_MODEL_SYNELO, &c);
    assert_int_equal(eo_model_config_set(&c, "k_min", "80", &err), 0);
    assert_int_equal(eo_model_config_check(&c, &err), EO_EINVAL);
    assert_string_equal(err.field, "k_min");

    eo_model_config_default(EO_MODEL_SYNELO, &c);
    assert_int_equal(eo_model_config_set(&c, "r_min", "1500", &err), 0);
    assert_int_equal(eo_model_config_check(&c, &err), EO_EINVAL);
    assert_string_equal(err.field, "r_min");

    /* A value written around the setters is caught by the check too. */
    eo_model_config_default(EO_MODEL_SYNELO, &c);
    c.v[eo_model_param_index(EO_MODEL_SYNELO, "window")] = 5000;
    assert_int_equal(eo_model_config_check(&c, &err), EO_EINVAL);
    assert_string_equal(err.field, "window");
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), EO_EINVAL);
    assert_null(ctx);
    c.model = EO_MODEL_COUNT;
    assert_int_equal(eo_model_config_check(&c, &err), EO_EINVAL);
    assert_string_equal(err.field, "model");
}

static eo_model_ctx *synelo_ctx(void)
{
    eo_model_config c;
    eo_model_ctx *ctx = NULL;
    eo_model_config_default(EO_MODEL_SYNELO, &c);
    assert_int_equal(eo_model_prepare(&c, &ctx, NULL), 0);
    return ctx;
}

static void context_and_players(void **state)
{
    (void)state;
    eo_model_ctx *ctx = synelo_ctx();
    assert_int_equal(eo_model_ctx_config(ctx)->model, EO_MODEL_SYNELO);
    assert_true(eo_model_integer_display(ctx));
    assert_false(eo_model_has_deviation(ctx));
    size_t size = eo_model_state_size(ctx);
    assert_true(size >= sizeof(eo_synelo_player) && size % 8 == 0);

    uint64_t a[64], b[64];
    eo_model_player_init(ctx, a);
    eo_model_player_init(ctx, b);
    eo_rating_view v;
    eo_model_view(ctx, a, 0, &v);
    assert_true(v.display == 1000 && v.mu == 1000 && v.sigma == 0);
    assert_true(v.rounds == 0 && !v.visible && !v.stale && v.last_ended_at == 0);
    eo_strength s;
    eo_model_strength(ctx, a, 0, &s);
    assert_true(s.mu == 1000 && s.var == 0);

    /* Argument checks of eo_model_rate(): nothing changes on error. */
    eo_participant pa = {a, 1.0}, pb = {b, 1.0};
    double p_a = -1;
    eo_model_update u[2];
    pa.w = 1.5;
    assert_int_equal(eo_model_rate(ctx, &pa, 1, &pb, 1, EO_WIN_A, 0, 10, &p_a, u), EO_EINVAL);
    pa.w = NAN;
    assert_int_equal(eo_model_rate(ctx, &pa, 1, &pb, 1, EO_WIN_A, 0, 10, &p_a, u), EO_EINVAL);
    pa.w = 1.0;
    assert_int_equal(eo_model_rate(ctx, &pa, 0, &pb, 1, EO_WIN_A, 0, 10, &p_a, u), EO_EINVAL);
    assert_int_equal(eo_model_rate(ctx, &pa, 1, &pb, 1, (eo_winner)7, 0, 10, &p_a, u), EO_EINVAL);
    assert_int_equal(eo_model_rate(ctx, &pa, 1, &pb, 1, EO_WIN_A, INFINITY, 10, &p_a, u),
                     EO_EINVAL);
    assert_true(p_a == -1);
    eo_model_view(ctx, a, 0, &v);
    assert_true(v.display == 1000 && v.rounds == 0);

    /* 1v1 at 1000 each, A wins: P = 0.5; C = 1 (empty window), G = 1, K = 72;
     * 1000 + 72 · 0.5 = 1036 and 964. */
    assert_int_equal(eo_model_rate(ctx, &pa, 1, &pb, 1, EO_WIN_A, 0, 10, &p_a, u), 0);
    assert_true(p_a == 0.5);
    assert_true(u[0].before == 1000 && u[0].after == 1036 && u[0].k == 72 && u[0].mu == 1036);
    assert_true(u[1].after == 964 && u[1].expected == 0.5 && u[1].sigma == 0);
    eo_model_view(ctx, a, 10, &v);
    assert_true(v.display == 1036 && v.rounds == 1 && v.last_ended_at == 10);

    /* Admin set: integers in [r_min, max] only, nothing changed otherwise. */
    assert_int_equal(eo_model_set(ctx, a, 99, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, a, 1200.5, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, a, NAN, -1), EO_EINVAL);
    assert_int_equal(eo_model_set(ctx, a, 1200, NAN), EO_EINVAL);
    eo_model_view(ctx, a, 10, &v);
    assert_true(v.display == 1036);
    assert_int_equal(eo_model_set(ctx, a, 1200, -1), 0);
    eo_model_view(ctx, a, 10, &v);
    assert_true(v.display == 1200 && v.rounds == 1);
    eo_model_player_free(ctx, a);
    eo_model_player_free(ctx, b);
    eo_model_release(ctx);
    eo_model_release(NULL);
}

static void predict_and_split_scale(void **state)
{
    (void)state;
    eo_model_ctx *ctx = synelo_ctx();
    /* F1: P = 1 / (1 + e^(-(ΣA - ΣB) / Θ)); ΣA - ΣB = 2400 → 1 / (1 + e^-1) = 0.7310585786. */
    eo_strength s[4] = {{2000, 0}, {1400, 0}, {500, 0}, {500, 0}};
    uint16_t a[2] = {0, 1}, b[2] = {2, 3};
    double p = eo_model_predict_idx(ctx, s, a, 2, b, 2, 0.0);
    assert_true(fabs(p - 0.7310585786300049) < 1e-15);
    assert_true(fabs(eo_model_predict_idx(ctx, s, b, 2, a, 2, 0.0) - (1 - p)) < 1e-15);
    /* The field term is a logit offset: +1 for A is like 2400 more rating. */
    double q = eo_model_predict_idx(ctx, s, b, 2, b, 2, 1.0);
    assert_true(fabs(q - 0.7310585786300049) < 1e-15);
    /* Quality of the non-Gaussian models: 1 - |2P - 1|. */
    eo_team_agg ta = {0}, tb = {0};
    eo_team_agg_add(&ta, &s[0], 1.0);
    eo_team_agg_add(&ta, &s[1], 1.0);
    eo_team_agg_add(&tb, &s[2], 1.0);
    eo_team_agg_add(&tb, &s[3], 1.0);
    assert_true(fabs(eo_model_quality(ctx, &ta, &tb, 0.0) - (1 - fabs(2 * p - 1))) < 1e-15);
    assert_true(eo_model_quality(ctx, &ta, &ta, 0.0) == 1.0);
    /* Integer models split their ratings as they are. */
    assert_int_equal(eo_model_split_unit(ctx), 1);
    assert_int_equal(eo_model_split_rating(ctx, 1234), 1234);
    assert_int_equal(eo_model_split_rating(ctx, 2.5), 2); /* ties to even */
    assert_int_equal(eo_model_split_rating(ctx, 1e300), (int64_t)1 << 40);
    eo_model_release(ctx);
}

/* ε in rating units from a tolerance on P(A) (eo_model_split_tolerance). Expected values from the
 * models' formulas: SynElo P = 1/(1 + e^(−ΔΣ/Θ)), Θ = 2400: Θ·ln(0.51/0.49) = 96.013;
 * Elo (team means, scale 400, whole points): k·400·log10(0.51/0.49) = 6.9496·k, so 13.899 at
 * k = 2 and 20.849 at k = 3; TrueSkill (β = 25/6, tenths of μ) P = Φ(Δ/c),
 * c² = 2k·β² + Σσ², and Φ⁻¹(0.51) = 0.0250689 (standard normal quantile, e.g. Python's
 * statistics.NormalDist().inv_cdf(0.51)): k = 2, Σσ² = 0: 10·2β·0.0250689 = 2.089; Σσ² =
 * 4·(25/3)²: 10·0.0250689·sqrt(4β² + 4·(25/3)²) = 4.671. */
static void test_split_tolerance(void **state)
{
    (void)state;
    eo_model_ctx *syn = test_model_named("synelo");
    eo_model_ctx *elo = test_model_named("elo");
    eo_model_ctx *ts = test_model_named("trueskill");
    assert_int_equal(eo_model_split_unit(syn), 1);
    assert_int_equal(eo_model_split_tolerance(syn, 0.01, 2, 0.0, 1, 0.0), 96);
    assert_int_equal(eo_model_split_tolerance(syn, 0.01, 12, 0.0, 1, 0.0), 96); /* sums: any k */
    assert_int_equal(eo_model_split_tolerance(syn, 0.01, 2, 0.0, 1, 10.0), 86); /* rounding slack */
    assert_int_equal(eo_model_split_tolerance(syn, 0.01, 2, 0.0, 1, 96.5), 0);
    assert_int_equal(eo_model_split_tolerance(syn, 0.0, 2, 0.0, 1, 0.0), 0);
    assert_int_equal(eo_model_split_tolerance(syn, -1.0, 2, 0.0, 1, 0.0), 0);
    assert_int_equal(eo_model_split_tolerance(syn, 0.5, 2, 0.0, 1, 0.0), INT64_C(1) << 50);
    assert_int_equal(eo_model_split_tolerance(NULL, 0.01, 2, 0.0, 1, 0.0), 0);
    int64_t u = eo_model_split_unit(elo);
    assert_int_equal(u, 1);
    assert_int_equal(eo_model_split_tolerance(elo, 0.01, 2, 0.0, u, 0.0), 13);
    assert_int_equal(eo_model_split_tolerance(elo, 0.01, 3, 0.0, u, 0.0), 20);
    u = eo_model_split_unit(ts);
    assert_int_equal(u, 10);
    double s0 = 25.0 / 3.0;
    assert_int_equal(eo_model_split_tolerance(ts, 0.01, 2, 0.0, u, 0.0), 2);
    assert_int_equal(eo_model_split_tolerance(ts, 0.01, 2, 4 * s0 * s0, u, 0.0), 4);
    /* The largest such E: E meets the tolerance, E + 1 does not (Glicko-2 with RDs). */
    eo_model_ctx *g2 = test_model_named("glicko2");
    u = eo_model_split_unit(g2);
    for (int k = 1; k <= 12; k++) {
        double vs = 2.0 * k * 50.0 * 50.0;
        int64_t e = eo_model_split_tolerance(g2, 0.02, k, vs, u, 3.0);
        assert_true(e > 0);
        eo_team_agg a = {k, k, k, ((double)e + 3.0) / (double)u, vs / 2}, b = {k, k, k, 0, vs / 2};
        assert_true(eo_model_predict(g2, &a, &b, 0.0) - 0.5 <= 0.02);
        a.mu = ((double)e + 4.0) / (double)u;
        assert_true(eo_model_predict(g2, &a, &b, 0.0) - 0.5 > 0.02);
    }
    eo_model_release(syn);
    eo_model_release(elo);
    eo_model_release(ts);
    eo_model_release(g2);
}

/* The field in rating units (eo_model_field_units): SynElo's logit is Θ = 2400 points of
 * team sum (unit 1); Elo's is 400/ln 10 = 173.72 points of team mean (its default), so
 * 4 · 173.72 of sum for k = 4 (unit 100: 69487); TrueSkill's field is μ already (unit 100,
 * whatever the variance); odd in the field, 0 for 0. */
static void test_split_field_units(void **state)
{
    (void)state;
    eo_model_ctx *syn = test_model_named("synelo");
    eo_model_ctx *elo = test_model_named("elo");
    eo_model_ctx *ts = test_model_named("trueskill");
    assert_int_equal(eo_model_field_units(syn, 0.5, 6, 0.0, 1), 1200);
    assert_int_equal(eo_model_field_units(syn, -0.5, 6, 0.0, 1), -1200);
    assert_int_equal(eo_model_field_units(syn, 0.0, 6, 0.0, 1), 0);
    assert_int_equal(eo_model_field_units(elo, 1.0, 4, 0.0, 100), 69487);
    assert_int_equal(eo_model_field_units(ts, 1.5, 4, 8 * 8.33 * 8.33, 100), 150);
    assert_int_equal(eo_model_field_units(ts, -1.5, 12, 0.0, 100), -150);
    /* A huge field saturates P(A) at 1: the difference where the model's P reaches 1 too. */
    int64_t big = eo_model_field_units(syn, 1e9, 6, 0.0, 1);
    assert_true(big > 36 * 2400 && big <= INT64_C(1) << 46);
    eo_model_release(syn);
    eo_model_release(elo);
    eo_model_release(ts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_tolerance),
        cmocka_unit_test(test_split_field_units),
        cmocka_unit_test(names_and_tables),
        cmocka_unit_test(names_list),
        cmocka_unit_test(set_by_name),
        cmocka_unit_test(check_rules),
        cmocka_unit_test(context_and_players),
        cmocka_unit_test(predict_and_split_scale),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
