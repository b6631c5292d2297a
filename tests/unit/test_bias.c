/* Map and side bias (eo_bias.h): hand-computed estimates, continuity, antisymmetry,
 * shrinkage, keys and parameters. Arithmetic in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_bias.h"

/* |x − y| <= tol (tol 0: equal). */
#define assert_near(x, y, tol) assert_true(fabs((double)(x) - (double)(y)) <= (tol))

static eo_bias *new_table(eo_bias_by by, double prior)
{
    eo_bias_config c;
    eo_bias_config_default(&c);
    c.by = by;
    c.prior = prior;
    eo_bias *t = NULL;
    assert_int_equal(eo_bias_create(&c, &t), 0);
    return t;
}

static size_t slot_of(eo_bias *t, const char *map)
{
    eo_bias_key k = {map, NULL, NULL};
    size_t i;
    assert_int_equal(eo_bias_slot(t, &k, &i), 0);
    return i;
}

/* A logistic model at P0 = 0.5: g = P0·(1 − P0) = 0.25. */
static void observe_even(eo_bias *t, size_t i, eo_winner w)
{
    assert_int_equal(eo_bias_observe(t, i, 0.5, 0.25, w), 0);
}

/* Rounds A, A, B at P0 = 0.5, g = 0.25, prior 20:
 *   U = Σ g(S − P0)/(P0(1 − P0)) = (0.5 + 0.5 − 0.5) = 0.5,  I = 3 · 0.0625/0.25 = 0.75,
 *   κ = 20 · 0.75 / 3 = 5,  bias = 0.5 / 5.75 = 0.0869565…,  sd = 1/√5.75 = 0.4170288…;
 * win rate 2/3. */
static void hand_three_rounds(void **state)
{
    (void)state;
    eo_bias *t = new_table(EO_BIAS_MAP, 20.0);
    size_t i = slot_of(t, "supply");
    observe_even(t, i, EO_WIN_A);
    observe_even(t, i, EO_WIN_A);
    observe_even(t, i, EO_WIN_B);
    eo_bias_stats s;
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_string_equal(s.map, "supply");
    assert_null(s.size);
    assert_null(s.mode);
    assert_int_equal(s.plays, 3);
    assert_int_equal(s.a_wins, 2);
    assert_int_equal(s.b_wins, 1);
    assert_int_equal(s.draws, 0);
    assert_near(s.a_win_rate, 2.0 / 3.0, 1e-15);
    assert_near(s.bias, 0.5 / 5.75, 1e-15);
    assert_near(s.uncertainty, 1.0 / sqrt(5.75), 1e-15);
    assert_near(s.applied, s.bias, 0.0);
    assert_near(eo_bias_field(t, i), s.bias, 0.0);
    eo_bias_destroy(t);
}

/* Prior 0, one round at P0 = 0.75 with the logistic slope g = 0.1875 (= 0.75 · 0.25), A wins:
 *   U = 0.1875 · 0.25 / 0.1875 = 0.25,  I = 0.1875² / 0.1875 = 0.1875,
 *   bias = 0.25 / 0.1875 = 4/3,  sd = 1/√0.1875.
 * A draw at P0 = 0.5 then adds U 0, I 0.25: bias = 0.25 / 0.4375 = 4/7. Strength ½ halves
 * the applied field only. */
static void hand_prior_zero_and_draw(void **state)
{
    (void)state;
    eo_bias_config c;
    eo_bias_config_default(&c);
    c.by = EO_BIAS_MAP;
    c.prior = 0.0;
    c.strength = 0.5;
    eo_bias *t = NULL;
    assert_int_equal(eo_bias_create(&c, &t), 0);
    size_t i = slot_of(t, "radar");
    assert_near(eo_bias_field(t, i), 0.0, 0.0); /* no plays: 0 */
    eo_bias_stats s;
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_true(isnan(s.a_win_rate));
    assert_true(isinf(s.uncertainty));
    assert_int_equal(eo_bias_observe(t, i, 0.75, 0.1875, EO_WIN_A), 0);
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_near(s.bias, 4.0 / 3.0, 1e-15);
    assert_near(s.uncertainty, 1.0 / sqrt(0.1875), 1e-15);
    observe_even(t, i, EO_DRAW);
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_int_equal(s.draws, 1);
    assert_near(s.a_win_rate, 0.75, 0.0);
    assert_near(s.bias, 4.0 / 7.0, 1e-15);
    assert_near(s.applied, 2.0 / 7.0, 1e-15);
    assert_near(eo_bias_field(t, i), 2.0 / 7.0, 1e-15);
    eo_bias_destroy(t);
}

/* 100 even rounds with k A wins and 100 − k B wins, prior 20: U = k − 50, I = 25, κ = 5, so
 * bias(k) = (k − 50)/30: monotone, steps of exactly 1/30 all the way, 0 at k = 50 — no jump
 * at a 50 % win rate (ET: Legacy's virtual player jumps there). Turning one B win into a draw
 * moves the bias by half a step. */
static void continuity_sweep(void **state)
{
    (void)state;
    double prev = 0.0;
    for (int k = 0; k <= 100; k++) {
        eo_bias *t = new_table(EO_BIAS_MAP, 20.0);
        size_t i = slot_of(t, "m");
        for (int r = 0; r < 100; r++)
            observe_even(t, i, r < k ? EO_WIN_A : EO_WIN_B);
        double b = eo_bias_field(t, i);
        assert_near(b, (k - 50) / 30.0, 1e-12);
        if (k > 0) {
            assert_true(b > prev);
            assert_near(b - prev, 1.0 / 30.0, 1e-12);
        }
        if (k < 100) {
            eo_bias *d = new_table(EO_BIAS_MAP, 20.0);
            size_t j = slot_of(d, "m");
            for (int r = 0; r < 100; r++)
                observe_even(d, j, r < k ? EO_WIN_A : r == k ? EO_DRAW : EO_WIN_B);
            assert_near(eo_bias_field(d, j) - b, 0.5 / 30.0, 1e-12);
            eo_bias_destroy(d);
        }
        prev = b;
        eo_bias_destroy(t);
    }
}

/* A small change of P0 moves the bias a little too (no threshold anywhere): one A win at
 * P0 = 0.5 ± 1e-9 against P0 = 0.5. */
static void continuity_in_p0(void **state)
{
    (void)state;
    double b[3];
    const double p0[3] = {0.5 - 1e-9, 0.5, 0.5 + 1e-9};
    for (int k = 0; k < 3; k++) {
        eo_bias *t = new_table(EO_BIAS_MAP, 20.0);
        size_t i = slot_of(t, "m");
        assert_int_equal(eo_bias_observe(t, i, p0[k], p0[k] * (1 - p0[k]), EO_WIN_A), 0);
        b[k] = eo_bias_field(t, i);
        eo_bias_destroy(t);
    }
    assert_true(b[0] > b[1] && b[1] > b[2]);
    assert_true(b[0] - b[2] < 1e-8);
}

/* splitmix64, for reproducible sequences. */
static uint64_t next(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Swapping the sides of every round (P0 → 1 − P0, A ↔ B) negates the bias bit for bit and
 * leaves the uncertainty unchanged. P0 = k/64 keeps 1 − P0 exact, so the mirror sees exactly
 * the mirrored inputs; the Gaussian-like slopes are arbitrary doubles. */
static void antisymmetry(void **state)
{
    (void)state;
    eo_bias *t = new_table(EO_BIAS_MAP, 7.5);
    eo_bias *m = new_table(EO_BIAS_MAP, 7.5);
    size_t i = slot_of(t, "m"), j = slot_of(m, "m");
    uint64_t rng = 42;
    for (int r = 0; r < 1000; r++) {
        double p0 = (double)(1 + next(&rng) % 63) / 64.0;
        double g = (double)(next(&rng) >> 11) * 0x1p-53 * 0.1;
        uint64_t o = next(&rng) % 10;
        eo_winner w = o < 4 ? EO_WIN_A : o < 9 ? EO_WIN_B : EO_DRAW;
        eo_winner mw = w == EO_WIN_A ? EO_WIN_B : w == EO_WIN_B ? EO_WIN_A : EO_DRAW;
        assert_int_equal(eo_bias_observe(t, i, p0, g, w), 0);
        assert_int_equal(eo_bias_observe(m, j, 1.0 - p0, g, mw), 0);
        eo_bias_stats s, ms;
        assert_int_equal(eo_bias_get(t, i, &s), 0);
        assert_int_equal(eo_bias_get(m, j, &ms), 0);
        assert_true(s.bias == -ms.bias);
        assert_true(s.uncertainty == ms.uncertainty);
        assert_int_equal(s.a_wins, ms.b_wins);
    }
    eo_bias_destroy(t);
    eo_bias_destroy(m);
}

/* Few plays stay near 0: two A wins give U = 1, I = 0.5, κ = 20 · 0.25 = 5, bias = 1/5.5 =
 * 0.18 logit where the win rate alone (100 %) would say infinity. Many plays of a map with a
 * true logit bias of 0.4 (at P0 = 0.5, A wins σ(0.4) = 59.87 %: 5987 of 10000) reach it:
 * U = 987, I = 2500, κ = 5, bias = 987/2505 = 0.394, sd 0.02 (one Fisher step from 0
 * understates a logit bias β by about β³/12, 0.005 here). */
static void shrinkage(void **state)
{
    (void)state;
    eo_bias *t = new_table(EO_BIAS_MAP, 20.0);
    size_t i = slot_of(t, "few");
    observe_even(t, i, EO_WIN_A);
    observe_even(t, i, EO_WIN_A);
    assert_near(eo_bias_field(t, i), 1.0 / 5.5, 1e-15);
    size_t j = slot_of(t, "many");
    for (int r = 0; r < 10000; r++)
        observe_even(t, j, r < 5987 ? EO_WIN_A : EO_WIN_B);
    eo_bias_stats s;
    assert_int_equal(eo_bias_get(t, j, &s), 0);
    assert_near(s.bias, 987.0 / 2505.0, 1e-12);
    assert_true(fabs(s.bias - 0.4) < s.uncertainty);
    assert_near(s.uncertainty, 1.0 / sqrt(2505.0), 1e-15);
    eo_bias_destroy(t);
}

/* A foregone round (P0 0 or 1, or no slope) counts as a play and teaches nothing. */
static void no_information(void **state)
{
    (void)state;
    eo_bias *t = new_table(EO_BIAS_MAP, 20.0);
    size_t i = slot_of(t, "m");
    assert_int_equal(eo_bias_observe(t, i, 1.0, 0.0, EO_WIN_B), 0);
    assert_int_equal(eo_bias_observe(t, i, 0.0, 0.5, EO_WIN_A), 0);
    assert_int_equal(eo_bias_observe(t, i, 0.5, NAN, EO_WIN_A), 0);
    assert_int_equal(eo_bias_observe(t, i, 0.5, -1.0, EO_WIN_A), 0);
    eo_bias_stats s;
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_int_equal(s.plays, 4);
    assert_near(s.bias, 0.0, 0.0);
    assert_true(isinf(s.uncertainty));
    assert_int_equal(eo_bias_observe(t, i, 0.5, 0.25, (eo_winner)7), EO_EINVAL);
    assert_int_equal(eo_bias_observe(t, 5, 0.5, 0.25, EO_WIN_A), EO_EINVAL);
    assert_int_equal(eo_bias_get(t, i, &s), 0);
    assert_int_equal(s.plays, 4);
    eo_bias_destroy(t);
}

static int collect(void *ctx, const eo_bias_stats *s)
{
    char *buf = ctx;
    size_t at = strlen(buf);
    snprintf(buf + at, 256 - at, "%s/%s/%s;", s->map, s->size ? s->size : "-",
             s->mode ? s->mode : "-");
    return 0;
}

/* Keys: by map only, map and size bucket (by the larger team), map and mode (none is a key of
 * its own); the listing is sorted by map, bucket order, then mode with none first. */
static void keys_and_order(void **state)
{
    (void)state;
    eo_bias_config c;
    eo_bias_config_default(&c);
    eo_bias_key k;
    assert_int_equal(eo_bias_key_of(&c, "m", 6, 6, NULL, &k), EO_ENOTFOUND); /* off */
    c.by = EO_BIAS_MAP;
    assert_int_equal(eo_bias_key_of(&c, NULL, 6, 6, NULL, &k), EO_ENOTFOUND);
    assert_int_equal(eo_bias_key_of(&c, "m", 6, 6, "cw", &k), 0);
    assert_string_equal(k.map, "m");
    assert_null(k.size);
    assert_null(k.mode);
    c.by = EO_BIAS_MAP_SIZE;
    assert_int_equal(eo_bias_key_of(&c, "m", 6, 5, "cw", &k), 0);
    assert_string_equal(k.size, "1-6");
    assert_null(k.mode);
    assert_string_equal(eo_bias_size_bucket(7, 6), "7-12");
    assert_string_equal(eo_bias_size_bucket(12, 12), "7-12");
    assert_string_equal(eo_bias_size_bucket(12, 13), "13+");
    c.by = EO_BIAS_MAP_MODE;
    assert_int_equal(eo_bias_key_of(&c, "m", 6, 6, "cw", &k), 0);
    assert_null(k.size);
    assert_string_equal(k.mode, "cw");

    eo_bias *t = new_table(EO_BIAS_MAP_SIZE, 20.0);
    const eo_bias_key keys[] = {{"oasis", "13+", NULL}, {"goldrush", "7-12", NULL},
                                {"oasis", "1-6", NULL}, {"goldrush", "13+", NULL},
                                {"oasis", "7-12", NULL}};
    for (size_t n = 0; n < 5; n++) {
        size_t i;
        assert_int_equal(eo_bias_slot(t, &keys[n], &i), 0);
        assert_int_equal(i, n);
        assert_int_equal(eo_bias_slot(t, &keys[n], &i), 0); /* found again */
        assert_int_equal(i, n);
    }
    eo_bias_key bad = {"oasis", "2-3", NULL};
    size_t i;
    assert_int_equal(eo_bias_slot(t, &bad, &i), EO_EINVAL);
    bad.size = NULL;
    bad.map = "bad\x01map";
    assert_int_equal(eo_bias_slot(t, &bad, &i), EO_EINVAL);
    assert_int_equal(eo_bias_find(t, &keys[3], &i), 0);
    assert_int_equal(i, 3);
    char buf[256] = "";
    assert_int_equal(eo_bias_each(t, collect, buf), 0);
    assert_string_equal(buf, "goldrush/7-12/-;goldrush/13+/-;oasis/1-6/-;oasis/7-12/-;oasis/13+/-;");
    eo_bias_truncate(t, 2); /* undo of the last three */
    assert_int_equal(eo_bias_count(t), 2);
    assert_int_equal(eo_bias_find(t, &keys[3], &i), EO_ENOTFOUND);
    assert_int_equal(eo_bias_slot(t, &keys[3], &i), 0);
    assert_int_equal(i, 2);
    eo_bias_destroy(t);

    t = new_table(EO_BIAS_MAP_MODE, 20.0);
    const eo_bias_key mk[] = {{"m", NULL, "stopwatch"}, {"m", NULL, NULL}, {"m", NULL, "cw"}};
    for (size_t n = 0; n < 3; n++)
        assert_int_equal(eo_bias_slot(t, &mk[n], &i), 0);
    buf[0] = '\0';
    assert_int_equal(eo_bias_each(t, collect, buf), 0);
    assert_string_equal(buf, "m/-/-;m/-/cw;m/-/stopwatch;");
    eo_bias_destroy(t);
    eo_bias_destroy(NULL);
}

/* Parameters: names and values checked with clear errors; unknown names pass through. */
static void parameters(void **state)
{
    (void)state;
    eo_bias_config c;
    eo_bias_config_default(&c);
    assert_int_equal(c.by, EO_BIAS_OFF);
    assert_near(c.prior, EO_BIAS_PRIOR_DEFAULT, 0.0);
    assert_near(c.strength, 1.0, 0.0);
    eo_round_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_bias_config_set(&c, "beta", "3", &err), EO_ENOTFOUND);
    assert_string_equal(err.field, "");
    assert_int_equal(eo_bias_config_set(&c, "bias", "map_mode", &err), 0);
    assert_int_equal(c.by, EO_BIAS_MAP_MODE);
    assert_int_equal(eo_bias_config_set(&c, "bias", "maps", &err), EO_EINVAL);
    assert_string_equal(err.field, "bias");
    assert_non_null(strstr(err.message, "map_size"));
    assert_int_equal(c.by, EO_BIAS_MAP_MODE);
    assert_int_equal(eo_bias_config_set(&c, "bias_prior", "12.5", &err), 0);
    assert_near(c.prior, 12.5, 0.0);
    assert_int_equal(eo_bias_config_set(&c, "bias_prior", "-1", &err), EO_EINVAL);
    assert_string_equal(err.field, "bias_prior");
    assert_int_equal(eo_bias_config_set(&c, "bias_prior", "12x", &err), EO_EINVAL);
    assert_int_equal(eo_bias_config_set(&c, "bias_strength", "nan", &err), EO_EINVAL);
    assert_string_equal(err.field, "bias_strength");
    assert_int_equal(eo_bias_config_set(&c, "bias_strength", "1.5", &err), EO_EINVAL);
    assert_int_equal(eo_bias_config_set_number(&c, "bias_strength", 0.25, &err), 0);
    assert_near(c.strength, 0.25, 0.0);
    assert_int_equal(eo_bias_config_set_number(&c, "bias", 1.0, &err), EO_EINVAL);
    assert_int_equal(eo_bias_config_check(&c, &err), 0);
    c.by = (eo_bias_by)9;
    assert_int_equal(eo_bias_config_check(&c, &err), EO_EINVAL);
    eo_bias *t = NULL;
    assert_int_equal(eo_bias_create(&c, &t), EO_EINVAL);
    assert_string_equal(eo_bias_by_name(EO_BIAS_MAP_SIZE), "map_size");
    assert_null(eo_bias_by_name(EO_BIAS_BY_COUNT));
    memset(&c, 0, sizeof c); /* a zeroed config is valid and off */
    assert_int_equal(eo_bias_config_check(&c, NULL), 0);
    assert_int_equal(c.by, EO_BIAS_OFF);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_three_rounds),
        cmocka_unit_test(hand_prior_zero_and_draw),
        cmocka_unit_test(continuity_sweep),
        cmocka_unit_test(continuity_in_p0),
        cmocka_unit_test(antisymmetry),
        cmocka_unit_test(shrinkage),
        cmocka_unit_test(no_information),
        cmocka_unit_test(keys_and_order),
        cmocka_unit_test(parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
