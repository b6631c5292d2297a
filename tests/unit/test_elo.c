/* The Elo model (include/evenodds/eo_elo.h, src/core/models/elo.c): published vectors, team
 * cases computed by hand, K tiers, partial play, the field term, properties, and the same
 * through the model interface (eo_model.h). Hand values below were computed with a pocket
 * calculator's 10^x (Python's float ** operator), not with the code under test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_elo.h"
#include "evenodds/eo_model.h"

#define AT 1763800000

static eo_elo_params defaults(void)
{
    eo_elo_params p;
    eo_elo_params_default(&p);
    return p;
}

/* One K everywhere. */
static eo_elo_params plain_k(double k)
{
    eo_elo_params p = defaults();
    p.k_new = p.k = p.k_high = k;
    return p;
}

/* A player past the new tier. */
static eo_elo_player seasoned(const eo_elo_params *p, double rating)
{
    eo_elo_player pl;
    eo_elo_player_init(&pl, p);
    pl.rating = rating;
    pl.rounds = 100;
    return pl;
}

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void params_and_check(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    assert_true(p.scale == 400 && p.r0 == 1500 && p.r_min == 0 && p.team == EO_ELO_TEAM_MEAN);
    assert_true(p.k_new == 40 && p.games_new == 30 && p.k == 20 && p.k_high == 10);
    assert_true(p.rating_high == 2400 && p.visible_rounds == 0 && p.t_stale_days == 30);
    assert_int_equal(eo_elo_params_check(&p), 0);
    p.r_min = 1600; /* above r0 */
    assert_int_equal(eo_elo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.scale = 0;
    assert_int_equal(eo_elo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.k = NAN;
    assert_int_equal(eo_elo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.team = (eo_elo_team)2;
    assert_int_equal(eo_elo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.t_stale_days = 36501;
    assert_int_equal(eo_elo_params_check(&p), EO_EINVAL);
    assert_int_equal(eo_elo_params_check(NULL), EO_EINVAL);
}

/* The logistic itself: 0.5 at 0; 10:1 odds at one scale (1/(1 + 10^-1) = 10/11); the field
 * term ln(10)/4 is worth a quarter scale (100 points). */
static void expected_score(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    assert_true(eo_elo_expected(&p, 0, 0) == 0.5);
    near(eo_elo_expected(&p, 400, 0), 10.0 / 11.0, 1e-15);
    near(eo_elo_expected(&p, -400, 0), 1.0 / 11.0, 1e-15);
    /* 1/(1 + 10^-0.25) = 0.6400649998028851 */
    near(eo_elo_expected(&p, 100, 0), 0.6400649998028851, 1e-15);
    near(eo_elo_expected(&p, 0, log(10.0) / 4.0), 0.6400649998028851, 1e-15);
    near(eo_elo_expected(&p, 200, -log(10.0) / 4.0), 0.6400649998028851, 1e-15);
    /* Mirror values are exact complements in bits of the same exp. */
    for (double d = -3000; d <= 3000; d += 37.5) {
        double x = eo_elo_expected(&p, d, 0.3), y = eo_elo_expected(&p, -d, -0.3);
        assert_true(fabs(x + y - 1.0) <= 1e-15);
    }
    /* Extremes: finite, in [0, 1], ordered. */
    assert_true(eo_elo_expected(&p, 1e12, 0) == 1.0);
    assert_true(eo_elo_expected(&p, -1e12, 0) == 0.0);
    assert_true(eo_elo_expected(&p, 0, 1e300) == 1.0);
    assert_true(eo_elo_expected(&p, 0, -1e300) == 0.0);
}

/* ANCHORS.md §1 "Classic Elo": K 32, 1000 beats 1000 -> 1016 / 984 (also the textbook
 * example, e.g. Wikipedia "Elo rating system"). */
static void classic_k32(void **state)
{
    (void)state;
    eo_elo_params p = plain_k(32);
    p.r0 = 1000;
    eo_elo_player x, y;
    eo_elo_player_init(&x, &p);
    eo_elo_player_init(&y, &p);
    eo_participant a = {&x, 1.0}, b = {&y, 1.0};
    eo_model_update out[2];
    double pa = -1;
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_A, 0.0, AT, &pa, out), 0);
    assert_true(pa == 0.5);
    assert_true(x.rating == 1016.0 && y.rating == 984.0);
    assert_true(out[0].before == 1000 && out[0].after == 1016 && out[0].k == 32);
    assert_true(out[1].expected == 0.5 && out[1].mu == 984 && out[1].sigma == 0);
    assert_int_equal(x.rounds, 1);
    assert_int_equal(y.last_ended_at, AT);
}

/* ANCHORS.md §1 "Classic Elo", FIDE-style K (15 below 2400, 10 from 2400, 25 provisional):
 * 2600 beats 2500 -> 2603.6 / 2496.4 (published to one decimal). By hand: E = 1/(1 + 10^-0.25)
 * = 0.6400649998028851; both are rated >= 2400 so K = 10: 2600 + 3.599350001971149 and
 * 2500 - 3.599350001971149. The default tiers (40/20/10) give the same here. */
static void fide_k(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    p.k_new = 25;
    p.k = 15;
    for (int pass = 0; pass < 2; pass++) {
        eo_elo_player x = seasoned(&p, 2600), y = seasoned(&p, 2500);
        eo_participant a = {&x, 1.0}, b = {&y, 1.0};
        eo_model_update out[2];
        assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_A, 0.0, AT, NULL, out), 0);
        assert_true(out[0].k == 10 && out[1].k == 10);
        near(x.rating, 2603.6, 0.05);
        near(y.rating, 2496.4, 0.05);
        near(x.rating, 2603.5993500019713, 1e-9);
        near(y.rating, 2496.4006499980287, 1e-9);
        p = defaults();
    }
}

/* FIDE-style tiers: new first (rounds < games_new), then k_high from rating_high, else k. */
static void k_tiers(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    eo_elo_player pl;
    eo_elo_player_init(&pl, &p);
    assert_true(eo_elo_k(&p, &pl) == 40);
    pl.rounds = 29;
    assert_true(eo_elo_k(&p, &pl) == 40);
    pl.rounds = 30;
    assert_true(eo_elo_k(&p, &pl) == 20);
    pl.rating = 2399.999;
    assert_true(eo_elo_k(&p, &pl) == 20);
    pl.rating = 2400;
    assert_true(eo_elo_k(&p, &pl) == 10);
    pl.rounds = 3; /* a new player rated high is still new */
    assert_true(eo_elo_k(&p, &pl) == 40);
    /* Through rounds: a new player's 30th round uses 40, the 31st 20. Equal opponents at
     * 1500 with a draw keep everyone at 1500 (S = E), so only the K changes. */
    eo_elo_player x, y;
    eo_elo_player_init(&x, &p);
    eo_elo_player_init(&y, &p);
    eo_participant a = {&x, 1.0}, b = {&y, 1.0};
    eo_model_update out[2];
    for (int r = 0; r < 30; r++) {
        assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_DRAW, 0.0, AT, NULL, out), 0);
        assert_true(out[0].k == 40 && out[0].after == 1500);
    }
    assert_int_equal(x.rounds, 30);
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_A, 0.0, AT, NULL, out), 0);
    assert_true(out[0].k == 20 && x.rating == 1510 && y.rating == 1490);
}

/* Team mean (default), 2v2: A {1700, 1500} (mean 1600) beats B {1400, 1400} (mean 1400).
 * By hand: E_A = 1/(1 + 10^-0.5) = 0.7597469266479578; K 20: each A member gains
 * 20 * (1 - E_A) = 4.805061467040844, each B member loses as much. */
static void team_mean(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    eo_elo_player pl[4] = {seasoned(&p, 1700), seasoned(&p, 1500), seasoned(&p, 1400),
                           seasoned(&p, 1400)};
    eo_participant a[2] = {{&pl[0], 1}, {&pl[1], 1}}, b[2] = {{&pl[2], 1}, {&pl[3], 1}};
    eo_model_update out[4];
    double pa;
    assert_int_equal(eo_elo_rate(&p, a, 2, b, 2, EO_WIN_A, 0.0, AT, &pa, out), 0);
    near(pa, 0.7597469266479578, 1e-15);
    near(out[2].expected, 1.0 - 0.7597469266479578, 1e-15);
    near(pl[0].rating, 1704.8050614670408, 1e-9);
    near(pl[1].rating, 1504.8050614670408, 1e-9);
    near(pl[2].rating, 1395.1949385329592, 1e-9);
    near(pl[3].rating, 1395.1949385329592, 1e-9);
    /* Mean ignores team size: 1v2 of the same means is the same P. */
    assert_true(eo_elo_diff(&p, 1600, 1, 2800, 2) == 200);
}

/* Team sum, 3v2: A {1500, 1500, 1500} (sum 4500) beats B {2000, 2000} (sum 4000). By hand:
 * E_A = 1/(1 + 10^-1.25) = 0.9467597847979775; K 20: A members +1.0648043040405, B members
 * -1.0648043040405. */
static void team_sum(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    p.team = EO_ELO_TEAM_SUM;
    eo_elo_player pl[5] = {seasoned(&p, 1500), seasoned(&p, 1500), seasoned(&p, 1500),
                           seasoned(&p, 2000), seasoned(&p, 2000)};
    eo_participant a[3] = {{&pl[0], 1}, {&pl[1], 1}, {&pl[2], 1}};
    eo_participant b[2] = {{&pl[3], 1}, {&pl[4], 1}};
    double pa;
    assert_int_equal(eo_elo_rate(&p, a, 3, b, 2, EO_WIN_A, 0.0, AT, &pa, NULL), 0);
    near(pa, 0.9467597847979775, 1e-15);
    for (int i = 0; i < 3; i++)
        near(pl[i].rating, 1501.0648043040405, 1e-9);
    near(pl[3].rating, 1998.9351956959595, 1e-9);
    near(pl[4].rating, 1998.9351956959595, 1e-9);
}

/* Partial play, team mean: A {1600 w 1, 1300 w 0.5}: weighted mean (1600 + 650)/1.5 = 1500;
 * B {1500 w 1, 1450 w 0.25}: (1500 + 362.5)/1.25 = 1490. B wins. By hand: E_A =
 * 1/(1 + 10^-0.025) = 0.5143871841659987; K 20, changes K w (S - E):
 *   1600 -> 1600 - 20 E_A = 1589.71225631668, 1300 -> 1300 - 10 E_A = 1294.85612815834,
 *   1500 -> 1500 + 20 E_A = 1510.28774368332, 1450 -> 1450 + 5 E_A = 1452.57193592083. */
static void partial_play(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    eo_elo_player pl[5] = {seasoned(&p, 1600), seasoned(&p, 1300), seasoned(&p, 1500),
                           seasoned(&p, 1450), seasoned(&p, 3000)};
    /* pl[4] joins B with weight 0: it changes nothing, not even the team mean. */
    eo_participant a[2] = {{&pl[0], 1}, {&pl[1], 0.5}};
    eo_participant b[3] = {{&pl[2], 1}, {&pl[4], 0}, {&pl[3], 0.25}};
    eo_elo_player idle = pl[4];
    eo_model_update out[5];
    double pa;
    assert_int_equal(eo_elo_rate(&p, a, 2, b, 3, EO_WIN_B, 0.0, AT, &pa, out), 0);
    near(pa, 0.5143871841659987, 1e-15);
    near(pl[0].rating, 1589.71225631668, 1e-9);
    near(pl[1].rating, 1294.85612815834, 1e-9);
    near(pl[2].rating, 1510.28774368332, 1e-9);
    near(pl[3].rating, 1452.57193592083, 1e-9);
    assert_memory_equal(&pl[4], &idle, sizeof idle);
    assert_true(out[3].before == 3000 && out[3].after == 3000);
    assert_int_equal(pl[1].rounds, 101);
    assert_int_equal(pl[4].rounds, 100);
    /* A team whose weights are all 0, team mean: counts as equal to its opponent. */
    eo_participant z[1] = {{&pl[4], 0}};
    assert_int_equal(eo_elo_rate(&p, a, 2, z, 1, EO_WIN_A, 0.0, AT, &pa, NULL), 0);
    assert_true(pa == 0.5);
    assert_memory_equal(&pl[4], &idle, sizeof idle);
}

/* Draw, 1v1 team sum: 1800 draws 1500. By hand: E = 1/(1 + 10^-0.75) = 0.8490204427886767;
 * K 20: 1800 + 20 (0.5 - E) = 1793.0195911442265, 1500 + 20 (0.5 - (1 - E)) =
 * 1506.9804088557735. */
static void draw(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    p.team = EO_ELO_TEAM_SUM;
    eo_elo_player x = seasoned(&p, 1800), y = seasoned(&p, 1500);
    eo_participant a = {&x, 1}, b = {&y, 1};
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_DRAW, 0.0, AT, NULL, NULL), 0);
    near(x.rating, 1793.0195911442265, 1e-9);
    near(y.rating, 1506.9804088557735, 1e-9);
}

/* The field term enters rate as in expected(): ln(10)/4 in A's favour between equal teams is
 * the 1800 - 1700 = 100-point case. */
static void field_term(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    eo_elo_player x = seasoned(&p, 1700), y = seasoned(&p, 1700);
    eo_participant a = {&x, 1}, b = {&y, 1};
    double pa;
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_A, log(10.0) / 4.0, AT, &pa, NULL),
                     0);
    near(pa, 0.6400649998028851, 1e-15);
    near(x.rating, 1700 + 20 * (1 - 0.6400649998028851), 1e-9);
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_A, NAN, AT, &pa, NULL), EO_EINVAL);
}

/* Floor and bounds: a loser at r_min stays there; no NaN for extreme ratings. */
static void floor_and_extremes(void **state)
{
    (void)state;
    eo_elo_params p = defaults();
    eo_elo_player x = seasoned(&p, 0), y = seasoned(&p, 5);
    eo_participant a = {&x, 1}, b = {&y, 1};
    assert_int_equal(eo_elo_rate(&p, &a, 1, &b, 1, EO_WIN_B, 0.0, AT, NULL, NULL), 0);
    assert_true(x.rating == 0.0);
    assert_true(eo_elo_new_rating(&p, 3, 20, 1, 0, 1) == 0.0);
    assert_true(eo_elo_new_rating(&p, EO_ELO_RATING_MAX, 1e6, 1, 1, 0) == EO_ELO_RATING_MAX);
    p.k_new = p.k = p.k_high = 1e6;
    p.team = EO_ELO_TEAM_SUM;
    eo_elo_player big = seasoned(&p, EO_ELO_RATING_MAX), small = seasoned(&p, 0);
    eo_participant c = {&big, 1}, d = {&small, 1};
    for (int i = 0; i < 3; i++) {
        double pa;
        assert_int_equal(eo_elo_rate(&p, &d, 1, &c, 1, EO_WIN_A, 1e300, AT, &pa, NULL), 0);
        assert_true(isfinite(pa) && isfinite(big.rating) && isfinite(small.rating));
        assert_true(small.rating >= 0 && big.rating <= EO_ELO_RATING_MAX);
    }
}

/* A tiny deterministic generator for property tests (splitmix64). */
static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* Random rounds in both team modes: winners never lose, losers never gain, weight-0 members
 * are unchanged in every byte, and the same round with the teams swapped (field negated) gives
 * the same bits to every player. */
static void properties(void **state)
{
    (void)state;
    uint64_t seed = 42;
    for (int mode = 0; mode < 2; mode++) {
        eo_elo_params p = defaults();
        p.team = mode == 0 ? EO_ELO_TEAM_SUM : EO_ELO_TEAM_MEAN;
        for (int round = 0; round < 2000; round++) {
            size_t na = 1 + rng_next(&seed) % 12, nb = 1 + rng_next(&seed) % 12;
            eo_elo_player s1[24], s2[24];
            eo_participant a1[12], b1[12], a2[12], b2[12];
            for (size_t i = 0; i < na + nb; i++) {
                s1[i] = seasoned(&p, 3000 * rng_unit(&seed));
                s1[i].rounds = (uint32_t)(rng_next(&seed) % 60);
                s2[i] = s1[i];
            }
            for (size_t i = 0; i < na + nb; i++) {
                uint64_t r = rng_next(&seed) % 4;
                double w = r == 0 ? 0.0 : r == 1 ? rng_unit(&seed) : 1.0;
                if (i < na) {
                    a1[i] = (eo_participant){&s1[i], w};
                    a2[i] = (eo_participant){&s2[i], w};
                } else {
                    b1[i - na] = (eo_participant){&s1[i], w};
                    b2[i - na] = (eo_participant){&s2[i], w};
                }
            }
            eo_winner win = (eo_winner)(rng_next(&seed) % 3);
            eo_winner mirror = win == EO_WIN_A ? EO_WIN_B : win == EO_WIN_B ? EO_WIN_A : EO_DRAW;
            double field = (rng_unit(&seed) - 0.5) * 2;
            eo_model_update o1[24], o2[24];
            double pa1, pa2;
            assert_int_equal(eo_elo_rate(&p, a1, na, b1, nb, win, field, AT, &pa1, o1), 0);
            assert_int_equal(eo_elo_rate(&p, b2, nb, a2, na, mirror, -field, AT, &pa2, o2), 0);
            assert_true(fabs(pa1 + pa2 - 1.0) <= 1e-15);
            for (size_t i = 0; i < na + nb; i++) {
                /* Same player in the mirrored round: B's members come first there. */
                const eo_model_update *u1 = &o1[i];
                const eo_model_update *u2 = i < na ? &o2[nb + i] : &o2[i - na];
                assert_memory_equal(&s1[i], &s2[i], sizeof s1[i]);
                assert_memory_equal(u1, u2, sizeof *u1);
                bool on_a = i < na;
                double w = on_a ? a1[i].w : b1[i - na].w;
                if (w == 0.0) {
                    assert_true(u1->after == u1->before);
                    continue;
                }
                bool won = (win == EO_WIN_A && on_a) || (win == EO_WIN_B && !on_a);
                bool lost = (win == EO_WIN_B && on_a) || (win == EO_WIN_A && !on_a);
                if (won)
                    assert_true(u1->after >= u1->before);
                if (lost)
                    assert_true(u1->after <= u1->before);
                assert_true(isfinite(u1->after));
            }
        }
    }
}

/* ---- Through the model interface ---- */

static eo_model_ctx *prepare(const char *team)
{
    eo_model_config c;
    assert_int_equal(eo_model_config_default(EO_MODEL_ELO, &c), 0);
    if (team != NULL)
        assert_int_equal(eo_model_config_set(&c, "team", team, NULL), 0);
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&c, &ctx, NULL), 0);
    return ctx;
}

static void interface_config(void **state)
{
    (void)state;
    eo_model m;
    assert_int_equal(eo_model_parse("elo", &m), 0);
    assert_int_equal(m, EO_MODEL_ELO);
    assert_string_equal(eo_model_name(EO_MODEL_ELO), "elo");
    size_t n;
    const eo_param_spec *spec = eo_model_params(EO_MODEL_ELO, &n);
    assert_non_null(spec);
    const char *names[] = {"scale", "r0", "r_min", "team", "k_new", "games_new", "k", "k_high",
                           "rating_high", "visible_rounds", "t_stale_days"};
    assert_int_equal(n, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(eo_model_param_index(EO_MODEL_ELO, names[i]), (int)i);
    eo_model_config c;
    eo_round_error err;
    assert_int_equal(eo_model_config_default(EO_MODEL_ELO, &c), 0);
    int team = eo_model_param_index(EO_MODEL_ELO, "team");
    assert_true(c.v[team] == 1); /* "mean" */
    assert_int_equal(eo_model_config_set(&c, "team", "sum", &err), 0);
    assert_true(c.v[team] == 0);
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_model_config_set(&c, "team", "median", &err), EO_EINVAL);
    assert_string_equal(err.field, "team");
    assert_non_null(strstr(err.message, "\"mean\""));
    assert_int_equal(eo_model_config_set(&c, "games_new", "2.5", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "scale", "0", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "r_min", "2000", &err), 0);
    memset(&err, 0, sizeof err);
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), EO_EINVAL); /* r_min > r0 */
    assert_null(ctx);
    assert_string_equal(err.field, "r_min");
    assert_int_equal(eo_model_config_set(&c, "r0", "2000", &err), 0);
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), 0);
    assert_int_equal(eo_model_state_size(ctx), sizeof(eo_elo_player));
    assert_int_equal(eo_model_state_size(ctx) % 8, 0);
    assert_false(eo_model_integer_display(ctx));
    assert_false(eo_model_has_deviation(ctx));
    assert_int_equal(eo_model_split_unit(ctx), 1);
    eo_model_release(ctx);
}

/* The classic and team-mean vectors again through eo_model_rate, and predict() over team
 * aggregates equals rate's P. */
static void interface_rate(void **state)
{
    (void)state;
    eo_model_ctx *ctx = prepare(NULL);
    eo_elo_player pl[4];
    for (int i = 0; i < 4; i++) {
        eo_model_player_init(ctx, &pl[i]);
        assert_true(pl[i].rating == 1500 && pl[i].rounds == 0);
        pl[i].rounds = 50;
    }
    pl[0].rating = 1700;
    pl[1].rating = 1500;
    pl[2].rating = 1400;
    pl[3].rating = 1400;
    eo_team_agg ta = {0}, tb = {0};
    for (int i = 0; i < 4; i++) {
        eo_strength s;
        eo_model_strength(ctx, &pl[i], AT, &s);
        assert_true(s.mu == pl[i].rating && s.var == 0);
        eo_team_agg_add(i < 2 ? &ta : &tb, &s, 1.0);
    }
    double pred = eo_model_predict(ctx, &ta, &tb, 0.0);
    near(pred, 0.7597469266479578, 1e-15);
    near(eo_model_predict(ctx, &tb, &ta, 0.0) + pred, 1.0, 1e-15);
    near(eo_model_quality(ctx, &ta, &tb, 0.0), 1 - fabs(2 * pred - 1), 1e-15);
    eo_strength str[4];
    for (int i = 0; i < 4; i++)
        eo_model_strength(ctx, &pl[i], AT, &str[i]);
    uint16_t ia[2] = {0, 1}, ib[2] = {2, 3};
    assert_true(eo_model_predict_idx(ctx, str, ia, 2, ib, 2, 0.0) == pred);
    eo_participant a[2] = {{&pl[0], 1}, {&pl[1], 1}}, b[2] = {{&pl[2], 1}, {&pl[3], 1}};
    eo_model_update out[4];
    double pa;
    assert_int_equal(eo_model_rate(ctx, a, 2, b, 2, EO_WIN_A, 0.0, AT, &pa, out), 0);
    assert_true(pa == pred);
    near(pl[0].rating, 1704.8050614670408, 1e-9);
    near(pl[3].rating, 1395.1949385329592, 1e-9);
    assert_true(out[0].k == 20 && out[0].sigma == 0 && out[0].mu == pl[0].rating);
    /* Partial-play aggregates: predict equals rate's P with the same weights. */
    eo_team_agg pa_agg = {0}, pb_agg = {0};
    eo_team_agg_add(&pa_agg, &str[0], 1.0);
    eo_team_agg_add(&pa_agg, &str[1], 0.5);
    eo_team_agg_add(&pb_agg, &str[2], 0.25);
    double want = eo_model_predict(ctx, &pa_agg, &pb_agg, 0.2);
    eo_elo_player q[3] = {pl[0], pl[1], pl[2]};
    q[0].rating = str[0].mu;
    q[1].rating = str[1].mu;
    q[2].rating = str[2].mu;
    eo_participant qa[2] = {{&q[0], 1.0}, {&q[1], 0.5}}, qb[1] = {{&q[2], 0.25}};
    assert_int_equal(eo_model_rate(ctx, qa, 2, qb, 1, EO_WIN_B, 0.2, AT, &pa, NULL), 0);
    assert_true(pa == want);
    /* Bad arguments change nothing. */
    eo_elo_player keep = q[0];
    qa[1].w = 1.5;
    assert_int_equal(eo_model_rate(ctx, qa, 2, qb, 1, EO_WIN_B, 0.0, AT, &pa, NULL), EO_EINVAL);
    assert_memory_equal(&keep, &q[0], sizeof keep);
    eo_model_release(ctx);

    /* Team sum through the interface: the 3v2 vector. */
    ctx = prepare("sum");
    eo_elo_player s[5];
    for (int i = 0; i < 5; i++) {
        eo_model_player_init(ctx, &s[i]);
        s[i].rounds = 30;
        s[i].rating = i < 3 ? 1500 : 2000;
    }
    eo_participant sa[3] = {{&s[0], 1}, {&s[1], 1}, {&s[2], 1}}, sb[2] = {{&s[3], 1}, {&s[4], 1}};
    assert_int_equal(eo_model_rate(ctx, sa, 3, sb, 2, EO_WIN_A, 0.0, AT, &pa, NULL), 0);
    near(pa, 0.9467597847979775, 1e-15);
    near(s[0].rating, 1501.0648043040405, 1e-9);
    near(s[4].rating, 1998.9351956959595, 1e-9);
    eo_model_release(ctx);
}

/* P monotone in strength, through predict over aggregates, both modes. */
static void interface_monotone(void **state)
{
    (void)state;
    const char *modes[] = {"sum", "mean"};
    for (int m = 0; m < 2; m++) {
        eo_model_ctx *ctx = prepare(modes[m]);
        double last = -1;
        for (double r = 0; r <= 4000; r += 25) {
            eo_team_agg ta = {0}, tb = {0};
            eo_strength x = {r, 0}, y = {1500, 0}, z = {1600, 0};
            eo_team_agg_add(&ta, &x, 1);
            eo_team_agg_add(&ta, &z, 1);
            eo_team_agg_add(&tb, &y, 1);
            eo_team_agg_add(&tb, &y, 1);
            double pr = eo_model_predict(ctx, &ta, &tb, 0.0);
            assert_true(pr >= last && pr >= 0 && pr <= 1);
            assert_true(fabs(pr + eo_model_predict(ctx, &tb, &ta, 0.0) - 1.0) <= 1e-15);
            last = pr;
        }
        eo_model_release(ctx);
    }
}

static void interface_view_and_set(void **state)
{
    (void)state;
    eo_model_config c;
    eo_model_config_default(EO_MODEL_ELO, &c);
    assert_int_equal(eo_model_config_set(&c, "visible_rounds", "2", NULL), 0);
    assert_int_equal(eo_model_config_set(&c, "t_stale_days", "10", NULL), 0);
    eo_model_ctx *ctx;
    assert_int_equal(eo_model_prepare(&c, &ctx, NULL), 0);
    eo_elo_player x, y;
    eo_model_player_init(ctx, &x);
    eo_model_player_init(ctx, &y);
    eo_rating_view v;
    eo_model_view(ctx, &x, AT, &v);
    assert_true(v.display == 1500 && v.mu == 1500 && v.sigma == 0 && v.volatility == 0);
    assert_false(v.visible);
    assert_false(v.stale);
    assert_int_equal(v.rounds, 0);
    eo_participant a = {&x, 1}, b = {&y, 1};
    for (int i = 0; i < 2; i++)
        assert_int_equal(eo_model_rate(ctx, &a, 1, &b, 1, EO_WIN_A, 0, AT, NULL, NULL), 0);
    eo_model_view(ctx, &x, AT + 10 * 86400, &v);
    assert_true(v.visible);
    assert_false(v.stale);
    assert_int_equal(v.rounds, 2);
    assert_true(v.last_ended_at == AT && v.display == x.rating);
    eo_model_view(ctx, &x, AT + 10 * 86400 + 1, &v);
    assert_true(v.stale);
    /* at = 0 keeps the last end. */
    assert_int_equal(eo_model_rate(ctx, &a, 1, &b, 1, EO_WIN_A, 0, 0, NULL, NULL), 0);
    assert_true(x.last_ended_at == AT && x.rounds == 3);
    /* Admin set: [r_min, EO_ELO_RATING_MAX]; sigma ignored; rounds kept. */
    assert_int_equal(eo_model_set(ctx, &x, 2100.25, 5.0), 0);
    assert_true(x.rating == 2100.25 && x.rounds == 3);
    assert_int_equal(eo_model_set(ctx, &x, -1, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, &x, 2e9, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, &x, INFINITY, -1), EO_EINVAL);
    assert_true(x.rating == 2100.25);
    assert_int_equal(eo_model_set(ctx, &x, 0, -1), 0);
    eo_model_release(ctx);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params_and_check),
        cmocka_unit_test(expected_score),
        cmocka_unit_test(classic_k32),
        cmocka_unit_test(fide_k),
        cmocka_unit_test(k_tiers),
        cmocka_unit_test(team_mean),
        cmocka_unit_test(team_sum),
        cmocka_unit_test(partial_play),
        cmocka_unit_test(draw),
        cmocka_unit_test(field_term),
        cmocka_unit_test(floor_and_extremes),
        cmocka_unit_test(properties),
        cmocka_unit_test(interface_config),
        cmocka_unit_test(interface_rate),
        cmocka_unit_test(interface_monotone),
        cmocka_unit_test(interface_view_and_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
