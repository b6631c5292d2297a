/* Glicko-2 (eo_glicko2.h and the eo_model.h interface). Published values name their source;
 * the other expectations come from ref_period() below, a plain transcription of Glickman's
 * steps 1-8 with libm's exp and log (independent of the model's code, its own exp and log, its
 * per-player periods and its composite arithmetic), or from hand formulas in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "core/models/glicko2_internal.h"
#include "core/numeric.h"
#include "evenodds/eo_glicko2.h"
#include "evenodds/eo_model.h"

#define DAY 86400
#define T0 ((int64_t)20000 * DAY) /* a period start for a period of one day */

#define near(x, y, tol) assert_true(fabs((x) - (y)) <= (tol))

/* Glickman, "Example of the Glicko-2 system" (glicko.net/glicko/glicko2.pdf): a player of
 * 1500 / 200 / 0.06 with τ = 0.5 beats 1400 / 30, loses to 1550 / 100 and to 1700 / 300 in one
 * rating period. Exact doubles of the paper's computation as listed in the project's
 * reference notes (ANCHORS.md §1 "Glicko-2"; the paper prints 1464.06 / 151.52 / 0.05999). */
#define GLICKMAN_R 1464.0506705393013
#define GLICKMAN_RD 151.51652412385727
#define GLICKMAN_VOL 0.059995984286488495
/* Same reference: the three games applied one at a time (each its own period). */
#define GLICKMAN_PER_GAME_VOL 0.059997514049860735
/* The published σ' values above come from Glickman's Illinois iteration with ε = 1e-6, which
 * stops up to ε away from the root on ln σ²: the exact root of the paper's example is
 * σ' = 0.059995984400677826 (1.1e-10 above GLICKMAN_VOL; 4.9e-12 above GLICKMAN_PER_GAME_VOL
 * after the three games one at a time). The model solves step 5 by a Newton iteration that
 * ends within ~1e-15 of the root: its rating, RD and σ' for the example are 2.1e-10, 4.5e-10
 * and 1.1e-10 from the published values, which are checked to 1e-9. The reference below runs
 * its Illinois iteration to REF_EPS instead, where the two agree to 1e-12 on σ'. */
#define REF_EPS 1e-12

static const double opp_r[3] = {1400, 1550, 1700}, opp_rd[3] = {30, 100, 300};
static const double opp_s[3] = {1, 0, 0};

/* ---- the independent reference ---- */

typedef struct ref_game {
    double r, rd, s, w, field; /* opponent rating and RD (Glicko scale), score, weight, logit */
} ref_game;

/* One rating period of Glickman's steps 1-8 for a player r / rd / vol against @p n games,
 * each weighted by its w (w = 1: the paper), φ* capped at rd_cap (evenodds' rd_max; the paper
 * has no cap, and the cases here stay below it unless they test it). */
static void ref_period(double r, double rd, double vol, const ref_game *g, int n, double tau,
                       double eps, double rd_cap, double *r1, double *rd1, double *vol1)
{
    const double S = 173.7178;
    double mu = (r - 1500) / S, phi = rd / S;
    double s1 = 0, s2 = 0;
    for (int j = 0; j < n; j++) {
        double muj = (g[j].r - 1500) / S, phij = g[j].rd / S;
        double gg = 1 / sqrt(1 + 3 * phij * phij / (M_PI * M_PI));
        double E = 1 / (1 + exp(-(gg * (mu - muj) + g[j].field)));
        s1 += g[j].w * gg * gg * E * (1 - E);
        s2 += g[j].w * gg * (g[j].s - E);
    }
    double v = 1 / s1, D = v * s2, a = log(vol * vol);
#define F(x) (exp(x) * (D * D - phi * phi - v - exp(x)) / \
              (2 * (phi * phi + v + exp(x)) * (phi * phi + v + exp(x))) - ((x) - a) / (tau * tau))
    double A = a, B;
    if (D * D > phi * phi + v) {
        B = log(D * D - phi * phi - v);
    } else {
        int k = 1;
        while (F(a - k * tau) < 0)
            k++;
        B = a - k * tau;
    }
    double fA = F(A), fB = F(B);
    while (fabs(B - A) > eps) {
        double C = A + (A - B) * fA / (fB - fA), fC = F(C);
        if (fC * fB <= 0) {
            A = B;
            fA = fB;
        } else {
            fA /= 2;
        }
        B = C;
        fB = fC;
    }
#undef F
    double vn = exp(A / 2);
    double ps = sqrt(phi * phi + vn * vn);
    if (ps > rd_cap / S)
        ps = rd_cap / S;
    double pn = 1 / sqrt(1 / (ps * ps) + 1 / v);
    *r1 = S * (mu + pn * pn * s2) + 1500;
    *rd1 = S * pn;
    *vol1 = vn;
}

/* ---- helpers for the interface ---- */

typedef struct model {
    eo_model_ctx *ctx;
    eo_glicko2_player st[32];
} model;

/* A prepared Glicko-2 model with @p period seconds and the players initialised. */
static void model_open(model *m, int64_t period)
{
    eo_model_config c;
    assert_int_equal(eo_model_config_default(EO_MODEL_GLICKO2, &c), 0);
    assert_int_equal(eo_model_config_set_number(&c, "period", (double)period, NULL), 0);
    assert_int_equal(eo_model_prepare(&c, &m->ctx, NULL), 0);
    assert_int_equal(eo_model_state_size(m->ctx), sizeof(eo_glicko2_player));
    for (int i = 0; i < 32; i++)
        eo_model_player_init(m->ctx, &m->st[i]);
}

/* Team A = players ia[0..na), B = ib[0..nb), weights wa / wb (NULL: all 1). */
static int play(model *m, const int *ia, const double *wa, size_t na, const int *ib,
                const double *wb, size_t nb, eo_winner w, double field, int64_t at,
                double *p_a, eo_model_update *out)
{
    eo_participant a[16], b[16];
    for (size_t i = 0; i < na; i++)
        a[i] = (eo_participant){&m->st[ia[i]], wa ? wa[i] : 1.0};
    for (size_t i = 0; i < nb; i++)
        b[i] = (eo_participant){&m->st[ib[i]], wb ? wb[i] : 1.0};
    return eo_model_rate(m->ctx, a, na, b, nb, w, field, at, p_a, out);
}

static int duel(model *m, int x, int y, eo_winner w, int64_t at, eo_model_update *out)
{
    return play(m, &x, NULL, 1, &y, NULL, 1, w, 0.0, at, NULL, out);
}

static eo_rating_view view(model *m, int i, int64_t now)
{
    eo_rating_view v;
    eo_model_view(m->ctx, &m->st[i], now, &v);
    return v;
}

/* Player 0 = Glickman's 1500 / 200, players 1-3 his opponents. */
static void glickman_setup(model *m)
{
    assert_int_equal(eo_model_set(m->ctx, &m->st[0], 1500, 200), 0);
    for (int j = 0; j < 3; j++)
        assert_int_equal(eo_model_set(m->ctx, &m->st[1 + j], opp_r[j], opp_rd[j]), 0);
}

/* ---- published vectors ---- */

/* The math API: three games added to one period, then the period closed. */
static void glickman_example_math(void **state)
{
    (void)state;
    eo_glicko2_params p;
    eo_glicko2_params_default(&p);
    eo_glicko2_player pl;
    eo_glicko2_player_init(&pl, &p);
    eo_glicko2_set(&p, &pl, 1500, 200);
    for (int j = 0; j < 3; j++)
        eo_glicko2_add_game(&pl, eo_glicko2_mu(opp_r[j]), opp_rd[j] / EO_GLICKO2_SCALE,
                            opp_s[j], 1.0, 0.0);
    assert_int_equal(pl.games, 3);
    eo_glicko2_close_period(&p, &pl);
    near(eo_glicko2_rating(pl.mu), GLICKMAN_R, 1e-9);
    near(EO_GLICKO2_SCALE * pl.phi, GLICKMAN_RD, 1e-9);
    near(pl.vol, GLICKMAN_VOL, 1e-9);
    assert_int_equal(pl.games, 0);
    assert_true(pl.s1 == 0.0 && pl.s2 == 0.0);
    /* The paper's intermediate quantities: g(0.1727) = 0.9955, E = 0.639 against the first
     * opponent (its step 3 table, rounded as printed). */
    near(eo_glicko2_g(30 / EO_GLICKO2_SCALE), 0.9955, 5e-5);
    near(eo_glicko2_e(0, eo_glicko2_mu(1400), 30 / EO_GLICKO2_SCALE, 0), 0.639, 5e-4);
}

/* The interface in period mode (one day): the three games as three 1v1 rounds in one period;
 * nothing moves until the period ends; a view in the next period and a round in the next period
 * both see Glickman's result. */
static void glickman_example_periods(void **state)
{
    (void)state;
    model m;
    model_open(&m, DAY);
    glickman_setup(&m);
    eo_model_update out[2];
    for (int j = 0; j < 3; j++) {
        assert_int_equal(duel(&m, 0, 1 + j, opp_s[j] == 1 ? EO_WIN_A : EO_WIN_B,
                              T0 + 100 + 1000 * j, out), 0);
        /* Inside the period the rating and RD do not change. */
        near(out[0].before, 1500, 1e-9);
        assert_true(out[0].after == out[0].before);
        near(out[0].sigma, 200, 1e-9);
    }
    eo_rating_view v = view(&m, 0, T0 + DAY - 1); /* still the same period */
    near(v.display, 1500, 1e-9);
    near(v.sigma, 200, 1e-9);
    assert_int_equal(v.rounds, 3);
    v = view(&m, 0, T0 + DAY); /* the next period: closed */
    near(v.display, GLICKMAN_R, 1e-9);
    near(v.mu, GLICKMAN_R, 1e-9);
    near(v.sigma, GLICKMAN_RD, 1e-9);
    near(v.volatility, GLICKMAN_VOL, 1e-9);
    /* view() is pure: the state still holds the open period. */
    assert_int_equal(m.st[0].games, 3);
    eo_strength s;
    eo_model_strength(m.ctx, &m.st[0], T0 + DAY + 5, &s);
    near(s.mu, GLICKMAN_R, 1e-9);
    near(s.var, GLICKMAN_RD * GLICKMAN_RD, 1e-6);
    /* A round in the next period closes it in the state; before = Glickman's values. */
    assert_int_equal(duel(&m, 0, 4, EO_DRAW, T0 + DAY + 10, out), 0);
    near(out[0].before, GLICKMAN_R, 1e-9);
    near(out[0].sigma, GLICKMAN_RD, 1e-9);
    near(m.st[0].vol, GLICKMAN_VOL, 1e-9);
    assert_int_equal(m.st[0].games, 1);
    /* The opponents were closed by their own views: 1400 / 30 lost to 1500 / 200. */
    double r1, rd1, vol1;
    ref_game g = {1500, 200, 0, 1, 0};
    ref_period(1400, 30, 0.06, &g, 1, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
    v = view(&m, 1, T0 + DAY);
    near(v.display, r1, 1e-9);
    near(v.sigma, rd1, 1e-9);
    near(v.volatility, vol1, 1e-12);
    eo_model_release(m.ctx);
}

/* Per-round mode: the same games one at a time (three periods). σ' is the reference notes'
 * published per-game value; rating and RD from ref_period applied three times. */
static void glickman_per_game(void **state)
{
    (void)state;
    model m;
    model_open(&m, 0);
    glickman_setup(&m);
    double r = 1500, rd = 200, vol = 0.06;
    eo_model_update out[2];
    for (int j = 0; j < 3; j++) {
        assert_int_equal(duel(&m, 0, 1 + j, opp_s[j] == 1 ? EO_WIN_A : EO_WIN_B,
                              T0 + 100 * j, out), 0);
        ref_game g = {opp_r[j], opp_rd[j], opp_s[j], 1, 0};
        ref_period(r, rd, vol, &g, 1, 0.5, REF_EPS, 350, &r, &rd, &vol);
        near(out[0].after, r, 1e-9);
        near(out[0].mu, r, 1e-9);
        near(out[0].sigma, rd, 1e-9);
        assert_true(out[0].k == 0.0);
    }
    eo_rating_view v = view(&m, 0, T0 + 1000 * DAY);
    near(v.volatility, GLICKMAN_PER_GAME_VOL, 1e-9);
    near(v.volatility, vol, 1e-12);
    /* Per-round mode counts no time: a year later RD is the same. */
    near(v.sigma, rd, 1e-9);
    near(v.display, r, 1e-9);
    eo_model_release(m.ctx);
}

/* ---- rating periods ---- */

/* RD over idle periods: sqrt(RD'² + n σ'²) by hand after the closed period, capped at rd_max;
 * and the same as closing every idle period one by one (what a pool-wide pass would do). */
static void idle_growth(void **state)
{
    (void)state;
    model m;
    model_open(&m, DAY);
    glickman_setup(&m);
    for (int j = 0; j < 3; j++)
        assert_int_equal(duel(&m, 0, 1 + j, opp_s[j] == 1 ? EO_WIN_A : EO_WIN_B, T0 + j, NULL), 0);
    const double S = 173.7178;
    eo_rating_view v1 = view(&m, 0, T0 + DAY + 7); /* the played period closed */
    near(v1.sigma, GLICKMAN_RD, 1e-9);
    near(v1.volatility, GLICKMAN_VOL, 1e-9);
    double phi1 = v1.sigma / S, vol1 = v1.volatility;
    for (int n = 0; n <= 40; n += 5) {
        /* In period T0/DAY + 1 + n: the played period closed, then n idle periods. */
        eo_rating_view v = view(&m, 0, T0 + (int64_t)(1 + n) * DAY + 7);
        double want = S * sqrt(phi1 * phi1 + n * vol1 * vol1);
        near(v.sigma, want, 1e-9);
        near(v.display, GLICKMAN_R, 1e-9); /* idle periods move only RD */
        assert_true(v.volatility == vol1);
    }
    /* n = 20: sqrt(151.5165² + 20 (0.059996 · 173.7178)²) = sqrt(22957.3 + 2172.5) = 158.524 */
    near(view(&m, 0, T0 + 21 * DAY).sigma, 158.524, 0.001);
    /* Ten thousand idle periods reach the cap: sqrt(151.5² + 10^4 · 10.42²) > 350. */
    near(view(&m, 0, T0 + 10001 * DAY).sigma, 350, 1e-9);

    /* Period by period with the math API gives the same. */
    eo_glicko2_params p;
    eo_glicko2_params_default(&p);
    p.period = DAY;
    eo_glicko2_player step = m.st[0], jump;
    eo_glicko2_at(&p, &m.st[0], T0 + 9 * DAY, &jump);
    eo_glicko2_close_period(&p, &step); /* the played period */
    for (int k = 0; k < 8; k++)
        eo_glicko2_close_period(&p, &step); /* an idle period: no games pending */
    near(step.phi, jump.phi, 1e-14);
    near(step.mu, jump.mu, 1e-14);
    assert_true(jump.period == T0 / DAY + 9);
    eo_model_release(m.ctx);
}

/* Where periods start and end; rounds earlier than the open period; undated rounds. */
static void period_boundaries(void **state)
{
    (void)state;
    eo_glicko2_params p;
    eo_glicko2_params_default(&p);
    p.period = 3600;
    assert_true(eo_glicko2_period_of(&p, 3600) == 1);
    assert_true(eo_glicko2_period_of(&p, 7199) == 1);
    assert_true(eo_glicko2_period_of(&p, 7200) == 2);
    assert_true(eo_glicko2_period_of(&p, -1) == -1);     /* floor, not truncation */
    assert_true(eo_glicko2_period_of(&p, -3600) == -1);
    assert_true(eo_glicko2_period_of(&p, -3601) == -2);
    assert_true(eo_glicko2_period_of(&p, 0) == EO_GLICKO2_NO_PERIOD); /* no time */
    p.period = 0;
    assert_true(eo_glicko2_period_of(&p, 7200) == EO_GLICKO2_NO_PERIOD);

    model m;
    model_open(&m, 3600);
    const int64_t h = 500000; /* hour index of the first round */
    /* The last second of an hour and the first of the next: two periods. */
    assert_int_equal(duel(&m, 0, 1, EO_WIN_A, h * 3600 + 3599, NULL), 0);
    assert_true(m.st[0].period == h && m.st[0].games == 1);
    eo_rating_view v = view(&m, 0, h * 3600 + 3599);
    near(v.display, 1500, 1e-9); /* still open */
    assert_int_equal(duel(&m, 0, 1, EO_WIN_A, (h + 1) * 3600, NULL), 0);
    assert_true(m.st[0].period == h + 1 && m.st[0].games == 1);
    /* The first period closed: one win against 1500 / 350 by ref_period (φ* capped at 350). */
    double r1, rd1, vol1;
    ref_game g = {1500, 350, 1, 1, 0};
    ref_period(1500, 350, 0.06, &g, 1, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
    near(eo_glicko2_rating(m.st[0].mu), r1, 1e-9);
    near(EO_GLICKO2_SCALE * m.st[0].phi, rd1, 1e-9);
    /* A round dated in an earlier period counts in the open one (h + 1). */
    assert_int_equal(duel(&m, 0, 2, EO_WIN_B, (h - 5) * 3600, NULL), 0);
    assert_true(m.st[0].period == h + 1 && m.st[0].games == 2);
    /* Player 2 had no open period: the old date opens h - 5 for it. */
    assert_true(m.st[2].period == h - 5);
    /* Closing h + 1 gives both games of that period from its start values. */
    eo_glicko2_player pl0 = m.st[0];
    double r0 = eo_glicko2_rating(pl0.mu), rd0 = EO_GLICKO2_SCALE * pl0.phi;
    v = view(&m, 0, (h + 2) * 3600);
    /* Player 1's period-(h+1) start: it closed h (a loss to 0) when it played at h + 1. Player
     * 2 played at its own period h - 5, so its start values are its initial ones. */
    eo_rating_view o1 = view(&m, 1, (h + 1) * 3600);
    ref_game g2[2] = {{o1.display, o1.sigma, 1, 1, 0}, {1500, 350, 0, 1, 0}};
    ref_period(r0, rd0, pl0.vol, g2, 2, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
    near(v.display, r1, 1e-9);
    near(v.sigma, rd1, 1e-9);
    near(v.volatility, vol1, 1e-12);

    /* Undated rounds (at = 0) in period mode join the open period, or for a player without one
     * the period of its next dated round. */
    assert_int_equal(duel(&m, 5, 6, EO_WIN_A, 0, NULL), 0);
    assert_true(m.st[5].period == EO_GLICKO2_NO_PERIOD && m.st[5].games == 1);
    assert_true(m.st[5].last_ended_at == 0 && m.st[5].rounds == 1);
    v = view(&m, 5, (h + 100) * 3600);
    near(v.display, 1500, 1e-9); /* pending, undated: nothing to close */
    assert_int_equal(duel(&m, 5, 7, EO_WIN_A, h * 3600 + 10, NULL), 0);
    assert_true(m.st[5].period == h && m.st[5].games == 2);
    assert_true(m.st[5].last_ended_at == h * 3600 + 10);
    eo_model_release(m.ctx);
}

/* ---- teams: the composite opponent ---- */

/* 2v2, per-round mode: each player plays one game against the other team's composite, rating
 * the mean and RD the root mean square of the opposing RDs (Williams 2013, composite opponent).
 * A = (1500, 350), (1700, 300); B = (1600, 100), (1400, 200); A wins. */
static void composite_2v2(void **state)
{
    (void)state;
    model m;
    model_open(&m, 0);
    const double r[4] = {1500, 1700, 1600, 1400}, rd[4] = {350, 300, 100, 200};
    for (int i = 0; i < 4; i++)
        assert_int_equal(eo_model_set(m.ctx, &m.st[i], r[i], rd[i]), 0);
    int ia[2] = {0, 1}, ib[2] = {2, 3};
    eo_model_update out[4];
    double pa;
    assert_int_equal(play(&m, ia, NULL, 2, ib, NULL, 2, EO_WIN_A, 0.0, T0, &pa, out), 0);
    /* Composites: A = 1600 / sqrt((350² + 300²)/2) = 325.96; B = 1500 / sqrt((100² + 200²)/2)
     * = 158.11. */
    double rdA = sqrt((350.0 * 350 + 300.0 * 300) / 2), rdB = sqrt((100.0 * 100 + 200.0 * 200) / 2);
    for (int i = 0; i < 4; i++) {
        ref_game g = i < 2 ? (ref_game){1500, rdB, 1, 1, 0} : (ref_game){1600, rdA, 0, 1, 0};
        double r1, rd1, vol1;
        ref_period(r[i], rd[i], 0.06, &g, 1, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
        near(out[i].after, r1, 1e-9);
        near(out[i].sigma, rd1, 1e-9);
        near(m.st[i].vol, vol1, 1e-12);
        near(out[i].before, r[i], 1e-9);
    }
    /* P(A) = 1 / (1 + exp(-g(φ) (1600 - 1500)/173.7178)), φ² = (rdA² + rdB²)/173.7178². */
    double phi = sqrt(rdA * rdA + rdB * rdB) / 173.7178;
    double want = 1 / (1 + exp(-(100 / 173.7178) / sqrt(1 + 3 * phi * phi / (M_PI * M_PI))));
    near(pa, want, 1e-15);
    near(out[0].expected, want, 1e-15);
    near(out[3].expected, 1 - want, 1e-15);
    eo_model_release(m.ctx);
}

/* team_expectation = 1: the same 2v2 as composite_2v2, but each player's expected score is his
 * team's composite against the other's. Glicko-2's own rating enters a game only through E,
 * so the reference plays each player against the opponent composite shifted by his distance
 * from his own team's composite (E(r − (r_opp + r − r_own)) = E(r_own − r_opp)). On an even
 * 2v2 (equal composites) a draw moves nobody's rating, where the composite opponent method
 * pulls the strong player down and the weak one up. */
static void composite_team_expectation(void **state)
{
    (void)state;
    const double r[4] = {1500, 1700, 1600, 1400}, rd[4] = {350, 300, 100, 200};
    int ia[2] = {0, 1}, ib[2] = {2, 3};
    eo_model_update out[4];
    double pa;
    model m;
    eo_model_config c;
    assert_int_equal(eo_model_config_default(EO_MODEL_GLICKO2, &c), 0);
    assert_int_equal(eo_model_config_set(&c, "team_expectation", "2", NULL), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "team_expectation", "1", NULL), 0);
    assert_int_equal(eo_model_prepare(&c, &m.ctx, NULL), 0);
    for (int i = 0; i < 4; i++) {
        eo_model_player_init(m.ctx, &m.st[i]);
        assert_int_equal(eo_model_set(m.ctx, &m.st[i], r[i], rd[i]), 0);
    }
    assert_int_equal(play(&m, ia, NULL, 2, ib, NULL, 2, EO_WIN_A, 0.0, T0, &pa, out), 0);
    double rdA = sqrt((350.0 * 350 + 300.0 * 300) / 2), rdB = sqrt((100.0 * 100 + 200.0 * 200) / 2);
    for (int i = 0; i < 4; i++) {
        double own = i < 2 ? 1600 : 1500;
        ref_game g = i < 2 ? (ref_game){1500 + r[i] - own, rdB, 1, 1, 0}
                           : (ref_game){1600 + r[i] - own, rdA, 0, 1, 0};
        double r1, rd1, vol1;
        ref_period(r[i], rd[i], 0.06, &g, 1, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
        near(out[i].after, r1, 1e-9);
        near(out[i].sigma, rd1, 1e-9);
        near(m.st[i].vol, vol1, 1e-12);
    }
    /* teammates with equal RD gain equally (0 and 1 differ in RD; compare the gains' signs) */
    assert_true(out[0].after > r[0] && out[1].after > r[1]);
    assert_true(out[2].after < r[2] && out[3].after < r[3]);

    /* An even 2v2: composites 1600 and 1600 with equal RDs; a draw. */
    const double e[4] = {1800, 1400, 1700, 1500};
    for (int mode = 0; mode < 2; mode++) {
        eo_model_ctx *ctx = m.ctx;
        model m0;
        if (mode == 0) {
            model_open(&m0, 0);
            ctx = m0.ctx;
        }
        model *mm = mode == 0 ? &m0 : &m;
        for (int i = 0; i < 4; i++) {
            eo_model_player_init(ctx, &mm->st[i]);
            assert_int_equal(eo_model_set(ctx, &mm->st[i], e[i], 100), 0);
        }
        assert_int_equal(play(mm, ia, NULL, 2, ib, NULL, 2, EO_DRAW, 0.0, T0, &pa, out), 0);
        near(pa, 0.5, 1e-15);
        if (mode == 1) {
            for (int i = 0; i < 4; i++)
                near(out[i].after, e[i], 1e-9);
        } else {
            assert_true(out[0].after < e[0] - 1 && out[1].after > e[1] + 1);
        }
        if (mode == 0)
            eo_model_release(m0.ctx);
    }
    eo_model_release(m.ctx);
}

/* Partial play, draws and the field term: 3v2 with weights A = (1, 0.5, 0), B = (1, 0.25).
 * The composite is weighted (rating Σwr/Σw, RD² Σw²RD²/Σw²), each game's sums are weighted
 * by its w, and the field is a logit offset in A's favour (−field for B). */
static void composite_weights_draw_field(void **state)
{
    (void)state;
    model m;
    model_open(&m, 0);
    const double r[5] = {1450, 1620, 2500, 1510, 1800}, rd[5] = {80, 200, 50, 120, 300};
    for (int i = 0; i < 5; i++)
        assert_int_equal(eo_model_set(m.ctx, &m.st[i], r[i], rd[i]), 0);
    eo_glicko2_player idle = m.st[2];
    int ia[3] = {0, 1, 2}, ib[2] = {3, 4};
    double wa[3] = {1, 0.5, 0}, wb[2] = {1, 0.25};
    const double field = 0.3;
    eo_model_update out[5];
    double pa;
    assert_int_equal(play(&m, ia, wa, 3, ib, wb, 2, EO_DRAW, field, T0, &pa, out), 0);
    /* A: rating (1450 + 0.5·1620)/1.5 = 1506.67, RD² (80² + 0.25·200²)/1.25 = 13120.
     * B: rating (1510 + 0.25·1800)/1.25 = 1568, RD² (120² + 0.0625·300²)/1.0625 = 18847.06. */
    double cA = (1450 + 0.5 * 1620) / 1.5, vA = (80.0 * 80 + 0.25 * 200 * 200) / 1.25;
    double cB = (1510 + 0.25 * 1800) / 1.25, vB = (120.0 * 120 + 0.0625 * 300 * 300) / 1.0625;
    for (int i = 0; i < 5; i++) {
        if (i == 2)
            continue;
        double w = i < 3 ? wa[i] : wb[i - 3];
        ref_game g = i < 3 ? (ref_game){cB, sqrt(vB), 0.5, w, field}
                           : (ref_game){cA, sqrt(vA), 0.5, w, -field};
        double r1, rd1, vol1;
        ref_period(r[i], rd[i], 0.06, &g, 1, 0.5, REF_EPS, 350, &r1, &rd1, &vol1);
        near(out[i].after, r1, 1e-9);
        near(out[i].sigma, rd1, 1e-9);
        near(m.st[i].vol, vol1, 1e-12);
        assert_int_equal(m.st[i].rounds, 1);
    }
    /* The weight-0 player is untouched and reported as it stands. */
    assert_memory_equal(&m.st[2], &idle, sizeof idle);
    near(out[2].before, 2500, 1e-9);
    assert_true(out[2].after == out[2].before);
    double phi = sqrt(vA + vB) / 173.7178;
    double x = (cA - cB) / 173.7178 / sqrt(1 + 3 * phi * phi / (M_PI * M_PI)) + field;
    near(pa, 1 / (1 + exp(-x)), 1e-15);
    eo_model_release(m.ctx);
}

/* rate()'s P(A) is eo_model_predict over eo_team_agg of eo_model_strength at the round's time,
 * bit for bit, in both modes and with idle periods in the way. */
static void predict_matches_rate(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        model m;
        model_open(&m, mode ? DAY : 0);
        uint64_t s = 77;
        for (int round = 0; round < 300; round++) {
            int ia[4], ib[4];
            double wa[4], wb[4];
            for (int i = 0; i < 4; i++) {
                s = s * 6364136223846793005u + 1442695040888963407u;
                ia[i] = i * 2 + (int)((s >> 33) % 2);
                ib[i] = 8 + i * 2 + (int)((s >> 40) % 2);
                wa[i] = (double)((s >> 20) % 5) / 4.0;
                wb[i] = (double)((s >> 50) % 5) / 4.0;
            }
            int64_t at = T0 + (int64_t)round * 7 * 3600;
            double field = ((double)((s >> 10) % 11) - 5.0) / 10.0;
            eo_team_agg A = {0, 0, 0, 0, 0}, B = {0, 0, 0, 0, 0};
            for (int i = 0; i < 4; i++) {
                eo_strength st;
                eo_model_strength(m.ctx, &m.st[ia[i]], at, &st);
                eo_team_agg_add(&A, &st, wa[i]);
                eo_model_strength(m.ctx, &m.st[ib[i]], at, &st);
                eo_team_agg_add(&B, &st, wb[i]);
            }
            double want = eo_model_predict(m.ctx, &A, &B, field), pa;
            eo_winner w = (s >> 60) % 3 == 0 ? EO_WIN_A : (s >> 60) % 3 == 1 ? EO_WIN_B : EO_DRAW;
            assert_int_equal(play(&m, ia, wa, 4, ib, wb, 4, w, field, at, &pa, NULL), 0);
            assert_true(pa == want);
        }
        eo_model_release(m.ctx);
    }
}

/* ---- properties ---- */

/* Random rounds of up to 6v6 among 30 players, per-round and period mode, random weights,
 * outcomes and fields. Per round: winners never lose rating and losers never gain (weight > 0);
 * RD after <= sqrt(RD² + σ'²) (no growth beyond τ's inflation); weight-0 players unchanged;
 * swapping the teams (and negating the field) gives the same states and outputs bit for bit. */
static void properties(void **state)
{
    (void)state;
    for (int mode = 0; mode < 2; mode++) {
        model m, mirror;
        model_open(&m, mode ? 6 * 3600 : 0);
        model_open(&mirror, mode ? 6 * 3600 : 0);
        uint64_t s = 1234 + (uint64_t)mode;
        for (int round = 0; round < 3000; round++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            size_t na = 1 + (s >> 33) % 6, nb = 1 + (s >> 37) % 6;
            int ids[12], n = 0;
            while (n < (int)(na + nb)) { /* distinct players */
                s = s * 6364136223846793005u + 1442695040888963407u;
                int id = (int)((s >> 35) % 30), dup = 0;
                for (int k = 0; k < n; k++)
                    dup |= ids[k] == id;
                if (!dup)
                    ids[n++] = id;
            }
            double w[12];
            for (int k = 0; k < n; k++) {
                s = s * 6364136223846793005u + 1442695040888963407u;
                int c = (int)((s >> 40) % 8);
                w[k] = c == 0 ? 0.0 : c == 1 ? 0.3 : 1.0;
            }
            eo_winner win = (s >> 61) % 4 == 0 ? EO_DRAW : (s >> 62) ? EO_WIN_A : EO_WIN_B;
            double field = ((double)((s >> 8) % 21) - 10.0) / 10.0;
            int64_t at = T0 + (int64_t)round * 1800;
            eo_glicko2_player before[12];
            eo_rating_view vb[12];
            for (int k = 0; k < n; k++) {
                before[k] = m.st[ids[k]];
                vb[k] = view(&m, ids[k], at);
            }
            eo_model_update out[12], mout[12];
            double pa, mpa;
            assert_int_equal(play(&m, ids, w, na, ids + na, w + na, nb, win, field, at, &pa, out), 0);
            eo_winner mwin = win == EO_WIN_A ? EO_WIN_B : win == EO_WIN_B ? EO_WIN_A : EO_DRAW;
            assert_int_equal(play(&mirror, ids + na, w + na, nb, ids, w, na, mwin, -field, at,
                                  &mpa, mout), 0);
            assert_true(isfinite(pa) && pa > 0 && pa < 1);
            for (int k = 0; k < n; k++) {
                const eo_glicko2_player *pl = &m.st[ids[k]];
                assert_true(isfinite(out[k].after) && isfinite(out[k].sigma));
                if (w[k] == 0.0) {
                    assert_memory_equal(pl, &before[k], sizeof *pl);
                    continue;
                }
                bool on_a = k < (int)na;
                if (win != EO_DRAW) {
                    bool won = (win == EO_WIN_A) == on_a;
                    if (mode == 0) {
                        assert_true(won ? out[k].after >= out[k].before
                                        : out[k].after <= out[k].before);
                    } else {
                        /* In period mode the change shows when the period closes, and
                         * reflects every game of the period: check the sign of this game's
                         * contribution to Σ g (s − E). */
                        double ds = pl->s2 - (pl->period == before[k].period ? before[k].s2 : 0);
                        assert_true(won ? ds >= 0 : ds <= 0);
                    }
                }
                if (mode == 0) {
                    /* RD' <= sqrt(RD² + (173.7178 σ')²): step 7 only shrinks φ*. */
                    double cap = sqrt(vb[k].sigma * vb[k].sigma +
                                      pow(EO_GLICKO2_SCALE * pl->vol, 2));
                    assert_true(out[k].sigma <= cap * (1 + 1e-12));
                    assert_true(out[k].sigma <= 350 * (1 + 1e-15));
                }
            }
            /* The mirror round: same bits. */
            assert_true(mpa == 1 - pa || fabs(mpa - (1 - pa)) <= 1e-15);
            for (int k = 0; k < n; k++) {
                int mk = k < (int)na ? (int)nb + k : k - (int)na;
                assert_memory_equal(&m.st[ids[k]], &mirror.st[ids[k]], sizeof(eo_glicko2_player));
                assert_true(out[k].after == mout[mk].after && out[k].sigma == mout[mk].sigma);
                assert_true(out[k].expected == mout[mk].expected);
            }
        }
        /* Period mode: after the periods close, winners-only players are above their start. */
        eo_model_release(m.ctx);
        eo_model_release(mirror.ctx);
    }
}

/* In period mode a player who only wins in a period ends it higher, one who only loses lower,
 * and RD after the period is at most sqrt(RD² + σ'²). */
static void period_sign(void **state)
{
    (void)state;
    model m;
    model_open(&m, DAY);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(duel(&m, 0, 1 + k, EO_WIN_A, T0 + k, NULL), 0);
        assert_int_equal(duel(&m, 6 + k, 11, EO_WIN_A, T0 + k, NULL), 0);
    }
    eo_rating_view w = view(&m, 0, T0 + DAY), l = view(&m, 11, T0 + DAY);
    assert_true(w.display > 1500 && l.display < 1500);
    assert_true(w.sigma <= sqrt(350.0 * 350 + pow(EO_GLICKO2_SCALE * w.volatility, 2)));
    assert_true(w.sigma < 350 && l.sigma < 350);
    eo_model_release(m.ctx);
}

/* predict(A, B) + predict(B, A) = 1 and P grows with A's strength, for random aggregates. */
static void predict_properties(void **state)
{
    (void)state;
    model m;
    model_open(&m, 0);
    uint64_t s = 99;
    for (int i = 0; i < 100000; i++) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        eo_team_agg a = {3, 2.5, 2.25, 2.5 * (500 + (double)((s >> 40) % 2000)),
                         2.25 * pow((double)((s >> 20) % 350), 2)};
        eo_team_agg b = {2, 1.75, 1.5625, 1.75 * (500 + (double)((s >> 50) % 2000)),
                         1.5625 * pow((double)((s >> 10) % 350), 2)};
        double f = ((double)(s % 41) - 20.0) / 10.0;
        double p = eo_model_predict(m.ctx, &a, &b, f), q = eo_model_predict(m.ctx, &b, &a, -f);
        assert_true(fabs(p + q - 1.0) <= 1e-15);
        assert_true(p >= 0 && p <= 1);
        eo_team_agg a2 = a;
        a2.mu += 2.5 * 10; /* 10 rating points stronger */
        assert_true(eo_model_predict(m.ctx, &a2, &b, f) >= p);
        assert_true(eo_model_predict(m.ctx, &a, &b, f + 0.1) >= p);
        double qual = eo_model_quality(m.ctx, &a, &b, f);
        near(qual, 1 - fabs(2 * p - 1), 1e-15);
    }
    /* Equal teams and no field: 1/2. */
    eo_team_agg e = {2, 2, 2, 3000, 20000};
    near(eo_model_predict(m.ctx, &e, &e, 0), 0.5, 1e-16);
    eo_model_release(m.ctx);
}

/* ---- the volatility iteration ---- */

/* Step 5 against a plain bisection of Glickman's f (libm) on both sides of a: roots above a
 * (upsets, Δ² > φ² + v + σ²) and below. */
static void volatility_root(void **state)
{
    (void)state;
    const double cases[][4] = {
        /* φ, σ, s1, s2 */
        {1.1513, 0.06, 0.5623, -0.2718},  /* Glickman's example: a − kτ branch */
        {0.5, 0.06, 0.01, 0.099},         /* a big upset: Δ² ≫ φ² + v */
        {2.0, 0.2, 0.2, 0.3},
        {0.05, 0.01, 3.0, 0.0},
        {1.0, 0.06, 1e-90, 1e-45},        /* almost no information, still finite */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double phi = cases[c][0], vol = cases[c][1], s1 = cases[c][2], s2 = cases[c][3];
        double got = eo_glicko2_volatility(phi, vol, s1, s2, 0.5, 1e-12);
        assert_true(isfinite(got) && got > 0);
        double v = 1 / s1, D = v * s2, a = log(vol * vol);
        double lo = a - 50, hi = a + 50; /* f decreasing: f(lo) > 0 > f(hi) */
        for (int it = 0; it < 200; it++) {
            double x = 0.5 * (lo + hi), ex = exp(x), d = phi * phi + v + ex;
            double f = ex * (D * D - phi * phi - v - ex) / (2 * d * d) - (x - a) / 0.25;
            if (f > 0)
                lo = x;
            else
                hi = x;
        }
        near(log(got * got), 0.5 * (lo + hi), 1e-9 * fabs(lo) + 1e-11);
    }
    /* No information at all: σ kept. */
    assert_true(eo_glicko2_volatility(1.0, 0.06, 0.0, 0.0, 0.5, 1e-6) == 0.06);
}

/* Glickman's f of step 5 (libm), with v = 1/s1 and Δ = v s2. */
static double vol_f(double x, double phi, double vol, double s1, double s2, double tau)
{
    double v = 1 / s1, D = v * s2, a = log(vol * vol), ex = exp(x), d = phi * phi + v + ex;
    /* e^x (Δ² − φ² − v − e^x) / (2 d²) as two bounded quotients, so that Δ² up to 1e205
     * does not overflow the product */
    return 0.5 * (ex / d) * ((D * D - phi * phi - v - ex) / d) - (x - a) / (tau * tau);
}

/* The root of f nearest to a = ln σ² on the side the sign of f(a) points to: steps outward
 * from a that grow by 2 % from 1e-12 up to the first sign change, then bisection until the
 * bracket is at most 1e-14 (relative to |x| beyond 1). NAN when no sign change is found
 * within 2000 of a. */
static double nearest_root(double phi, double vol, double s1, double s2, double tau)
{
    double a = log(vol * vol), fa = vol_f(a, phi, vol, s1, s2, tau);
    if (fa == 0)
        return a;
    double dir = fa > 0 ? 1 : -1, lo = a, hi = a;
    bool found = false;
    for (double h = 1e-12; h < 2000; h *= 1.02) {
        hi = a + dir * h;
        double fh = vol_f(hi, phi, vol, s1, s2, tau);
        if (fh == 0)
            return hi;
        if ((fh > 0) != (fa > 0)) {
            found = true;
            break;
        }
        lo = hi;
    }
    if (!found)
        return NAN;
    while (fabs(hi - lo) > 1e-14 * fmax(1, fabs(lo))) {
        double mid = 0.5 * (lo + hi);
        if (mid == lo || mid == hi)
            break;
        if ((vol_f(mid, phi, vol, s1, s2, tau) > 0) == (fa > 0))
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* e^U with U uniform in [ln lo, ln hi), from the LCG state *s. */
static double log_uniform(uint64_t *s, double lo, double hi)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return exp(log(lo) + (double)(*s >> 11) * 0x1p-53 * (log(hi) - log(lo)));
}

/* The safeguarded Newton iteration of step 5 (docs/MODELS.md, "Numerics") against
 * nearest_root() on 20,000 random inputs spread over many orders of magnitude: φ from 1e-3
 * to 60 (RD 0.17 … 10,000), σ from 1e-6 to 10, s1 = Σ g² E(1 − E) from 1e-100 (v = 1e100)
 * to 30 (v = 0.03), s2 = Σ g (s − E) of either sign from 1e-6 to 300 (Δ up to 3e102), τ from
 * 0.01 to 10. With ε = 1e-6 the root it returns (as ln σ'²) is within 1e-10 of the bisection
 * (relative beyond 1), four orders below ε; with ε = 1e-12, within 1e-12. */
static void volatility_random(void **state)
{
    (void)state;
    uint64_t s = 4242;
    int checked = 0;
    for (int i = 0; i < 20000; i++) {
        double phi = log_uniform(&s, 1e-3, 60), vol = log_uniform(&s, 1e-6, 10);
        double s1 = log_uniform(&s, 1e-100, 30), s2 = log_uniform(&s, 1e-6, 300);
        double tau = log_uniform(&s, 0.01, 10);
        s2 = (s >> 20) & 1 ? s2 : -s2;
        double want = nearest_root(phi, vol, s1, s2, tau);
        assert_false(isnan(want));
        double got6 = eo_glicko2_volatility(phi, vol, s1, s2, tau, 1e-6);
        double got12 = eo_glicko2_volatility(phi, vol, s1, s2, tau, 1e-12);
        assert_true(isfinite(got6) && got6 > 0 && isfinite(got12) && got12 > 0);
        double scale = fmax(1, fabs(want));
        if (fabs(2 * log(got6) - want) > 1e-10 * scale ||
            fabs(2 * log(got12) - want) > 1e-12 * scale)
            fail_msg("phi %.17g vol %.17g s1 %.17g s2 %.17g tau %.17g: ln σ'² %.17g / %.17g, "
                     "bisection %.17g", phi, vol, s1, s2, tau, 2 * log(got6), 2 * log(got12),
                     want);
        checked++;
    }
    assert_int_equal(checked, 20000);
}

/* ---- step 5's paired fast path against the general iteration ---- */

/* Uniform in [0, 1) from the LCG state *s. */
static double unit01(uint64_t *s)
{
    *s = *s * 6364136223846793005u + 1442695040888963407u;
    return (double)(*s >> 11) * 0x1p-53;
}

/* One player's step-5 inputs of kind @p kind: 0 a typical per-round update (one game against
 * a composite of RD 30-350 at most ±600 points away, φ for RD 30-350, σ near 0.06), 1 the
 * extreme ranges of volatility_random, 2 no information (s1 below the 1e-100 threshold, or
 * 0), 3 the threshold's neighbourhood (s1 in [1e-101, 1e-99]), 4 a game that ended exactly as
 * expected (s2 = 0). */
static void vol_input(uint64_t *s, int kind, eo_glicko2_player *y)
{
    memset(y, 0, sizeof *y);
    if (kind == 0 || kind == 4) {
        y->phi = (30 + 320 * unit01(s)) / EO_GLICKO2_SCALE;
        y->vol = 0.03 + 0.06 * unit01(s);
        double phj = (30 + 320 * unit01(s)) / EO_GLICKO2_SCALE;
        double g = 1 / sqrt(1 + 3 * phj * phj / (M_PI * M_PI));
        double e = 1 / (1 + exp(-g * (1200 * unit01(s) - 600) / EO_GLICKO2_SCALE));
        double sc = unit01(s) < 0.5 ? 1.0 : unit01(s) < 0.1 ? 0.5 : 0.0;
        y->s1 = g * g * e * (1 - e);
        y->s2 = kind == 4 ? 0.0 : g * (sc - e);
    } else {
        y->phi = log_uniform(s, 1e-3, 60);
        y->vol = log_uniform(s, 1e-6, 10);
        y->s1 = kind == 1 ? log_uniform(s, 1e-100, 30)
                : kind == 2 ? (unit01(s) < 0.5 ? 0.0 : log_uniform(s, 1e-300, 1e-100))
                            : log_uniform(s, 1e-101, 1e-99);
        y->s2 = log_uniform(s, 1e-6, 300) * (unit01(s) < 0.5 ? -1 : 1);
    }
    y->ln_vol2 = eo__log(y->vol * y->vol);
}

/* eo_glicko2_rate() solves step 5 for the players of a round two at a time by a branch-free
 * copy of the first Newton steps and sends the players that copy does not settle to the
 * general iteration; each player's σ'² and ln σ'² must be the bits the general iteration
 * alone gives (glicko2.c: "the same bits"). Rounds of 1 to EO_PLAYERS_MAX players (odd counts
 * included: the last player pairs with itself), players of every kind of vol_input() mixed,
 * τ and ε at the defaults, at their limits and random. Typical players must mostly take the
 * fast path (else this would test nothing) and extreme ones must reach the general one. */
static void vol_fast_path_bits(void **state)
{
    (void)state;
    uint64_t s = 20260101;
    static eo_glicko2_player ys[EO_PLAYERS_MAX];
    eo_glicko2_player *in[EO_PLAYERS_MAX];
    double ex[EO_PLAYERS_MAX], ln[EO_PLAYERS_MAX];
    size_t fast_typical = 0, n_typical = 0, fast_all = 0, n_all = 0;
    for (int trial = 0; trial < 3000; trial++) {
        size_t n = trial < EO_PLAYERS_MAX ? (size_t)trial % 9 + 1
                                          : 1 + (size_t)(unit01(&s) * EO_PLAYERS_MAX);
        int mix = trial % 4; /* 0: all typical, 1: all extreme, 2-3: a mix of every kind */
        double tau = trial % 5 == 0   ? 0.5
                     : trial % 5 == 1 ? 0.01
                     : trial % 5 == 2 ? 10
                                      : log_uniform(&s, 0.01, 10);
        double eps = trial % 3 == 0 ? 1e-6 : trial % 3 == 1 ? 1e-12 : log_uniform(&s, 1e-12, 1);
        for (size_t i = 0; i < n; i++) {
            int kind = mix == 0 ? 0 : mix == 1 ? 1 : (int)(unit01(&s) * 5);
            vol_input(&s, kind, &ys[i]);
            in[i] = &ys[i];
        }
        size_t nf = eo__glicko2_vol_solve(tau, eps, n, in, ex, ln);
        assert_true(nf <= n);
        fast_all += nf;
        n_all += n;
        if (mix == 0 && tau == 0.5 && eps == 1e-6) {
            fast_typical += nf;
            n_typical += n;
        }
        for (size_t i = 0; i < n; i++) {
            double ex1, ln1;
            eo__glicko2_vol_scalar(tau, eps, &ys[i], &ex1, &ln1);
            if (memcmp(&ex1, &ex[i], sizeof ex1) != 0 || memcmp(&ln1, &ln[i], sizeof ln1) != 0)
                fail_msg("trial %d, player %zu of %zu (tau %.17g eps %.17g; phi %.17g vol %.17g "
                         "s1 %.17g s2 %.17g): paired %a / %a, scalar %a / %a",
                         trial, i, n, tau, eps, ys[i].phi, ys[i].vol, ys[i].s1, ys[i].s2, ex[i],
                         ln[i], ex1, ln1);
        }
    }
    /* The fast path settles nearly every typical update, and not every update. */
    assert_true(n_typical > 1000 && fast_typical * 10 >= n_typical * 9);
    assert_true(fast_all < n_all);
}

/* ---- the interface: parameters, view, set, extremes ---- */

static void parameters_and_view(void **state)
{
    (void)state;
    size_t n;
    const eo_param_spec *ps = eo_model_params(EO_MODEL_GLICKO2, &n);
    assert_non_null(ps);
    const char *names[] = {"r0", "rd0", "vol0", "tau", "epsilon", "rd_max", "period",
                           "visible_rounds", "visible_rd", "t_stale_days", "team_expectation"};
    const double defs[] = {1500, 350, 0.06, 0.5, 1e-6, 350, 0, 0, 0, 30, 0};
    assert_int_equal(n, 11);
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(ps[i].name, names[i]);
        assert_true(ps[i].def == defs[i]);
        assert_non_null(ps[i].help);
    }
    eo_model m;
    assert_int_equal(eo_model_parse("glicko2", &m), 0);
    assert_int_equal(m, EO_MODEL_GLICKO2);
    assert_string_equal(eo_model_name(EO_MODEL_GLICKO2), "glicko2");

    eo_model_config c;
    eo_round_error err;
    eo_model_config_default(EO_MODEL_GLICKO2, &c);
    assert_int_equal(eo_model_config_set(&c, "period", "1.5", &err), EO_EINVAL); /* integer */
    assert_int_equal(eo_model_config_set(&c, "tau", "0", &err), EO_EINVAL);
    assert_int_equal(eo_model_config_set(&c, "rd0", "400", &err), 0);
    eo_model_ctx *ctx;
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), EO_EINVAL); /* rd0 > rd_max */
    assert_string_equal(err.field, "rd0");
    assert_int_equal(eo_model_config_set(&c, "rd_max", "500", &err), 0);
    assert_int_equal(eo_model_config_set(&c, "visible_rounds", "2", &err), 0);
    assert_int_equal(eo_model_config_set(&c, "visible_rd", "300", &err), 0);
    assert_int_equal(eo_model_config_set(&c, "t_stale_days", "2", &err), 0);
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), 0);
    assert_false(eo_model_integer_display(ctx));

    eo_glicko2_player st[2];
    eo_model_player_init(ctx, &st[0]);
    eo_model_player_init(ctx, &st[1]);
    eo_rating_view v;
    eo_model_view(ctx, &st[0], T0, &v);
    assert_true(v.display == 1500 && v.mu == 1500);
    near(v.sigma, 400, 1e-12);
    assert_true(v.volatility == 0.06);
    assert_true(v.rounds == 0 && !v.visible && !v.stale && v.last_ended_at == 0);
    eo_participant a = {&st[0], 1}, b = {&st[1], 1};
    for (int k = 0; k < 2; k++) {
        assert_int_equal(eo_model_rate(ctx, &a, 1, &b, 1, EO_WIN_A, 0, T0 + k, NULL, NULL), 0);
        eo_model_view(ctx, &st[0], T0 + k, &v);
        /* Two rounds and RD below 300 are both needed (RD after two games from 400: ~286). */
        assert_true(v.visible == (k == 1 && v.sigma <= 300));
        assert_true(v.last_ended_at == T0 + k);
    }
    assert_true(v.visible);
    eo_model_view(ctx, &st[0], T0 + 1 + 2 * DAY, &v);
    assert_false(v.stale);
    eo_model_view(ctx, &st[0], T0 + 2 + 2 * DAY, &v);
    assert_true(v.stale);

    /* Admin set: a rating outside [-10000, 10000] or an RD outside [0, rd_max] is refused and
     * changes nothing; within them it is taken as given; rounds kept. */
    eo_rating_view was;
    eo_model_view(ctx, &st[0], T0, &was);
    assert_int_equal(eo_model_set(ctx, &st[0], 12345, 100), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, &st[0], 1500, 9999), EO_ERANGE);
    eo_model_view(ctx, &st[0], T0, &v);
    assert_memory_equal(&v, &was, sizeof v);
    assert_int_equal(eo_model_set(ctx, &st[0], 10000, 500), 0);
    eo_model_view(ctx, &st[0], T0, &v);
    near(v.display, 10000, 1e-9);
    near(v.sigma, 500, 1e-9);
    assert_int_equal(v.rounds, 2);
    assert_int_equal(eo_model_set(ctx, &st[0], 1234.5, -1), 0); /* RD kept */
    eo_model_view(ctx, &st[0], T0, &v);
    near(v.display, 1234.5, 1e-9);
    near(v.sigma, 500, 1e-9);
    assert_int_equal(eo_model_set(ctx, &st[0], NAN, 1), EO_EINVAL);
    eo_model_release(ctx);
}

/* Weight-0 rounds leave the state alone (rounds and time included); a period-mode set drops the
 * open period's pending games. */
static void weight_zero_and_set(void **state)
{
    (void)state;
    model m;
    model_open(&m, DAY);
    assert_int_equal(duel(&m, 0, 1, EO_WIN_A, T0, NULL), 0);
    eo_glicko2_player keep = m.st[0];
    double w0 = 0.0, w1 = 1.0;
    int x = 0, y = 1;
    eo_model_update out[2];
    assert_int_equal(play(&m, &x, &w0, 1, &y, &w1, 1, EO_WIN_B, 0, T0 + 5 * DAY, NULL, out), 0);
    assert_memory_equal(&m.st[0], &keep, sizeof keep);
    /* Its before/after are its view at the round's time (the closed period, 4 idle ones). */
    eo_rating_view v = view(&m, 0, T0 + 5 * DAY);
    assert_true(out[0].before == v.display && out[0].after == v.display);
    assert_true(out[0].sigma == v.sigma);
    /* Set in period mode: pending games dropped, period kept. */
    assert_int_equal(m.st[1].games, 1);
    assert_int_equal(eo_model_set(m.ctx, &m.st[1], 1600, 100), 0);
    assert_int_equal(m.st[1].games, 0);
    assert_true(m.st[1].period == T0 / DAY + 5);
    /* The next period shows the set values with one idle period of RD growth. */
    v = view(&m, 1, T0 + 6 * DAY);
    near(v.display, 1600, 1e-9);
    near(v.sigma, sqrt(100.0 * 100 + pow(m.st[1].vol * EO_GLICKO2_SCALE, 2)), 1e-9);
    eo_model_release(m.ctx);
}

/* Extreme but finite inputs never give NaN or infinity. */
static void extremes_finite(void **state)
{
    (void)state;
    const double fields[] = {0, 50, -50, 1e300, -1e300, 800};
    for (int mode = 0; mode < 2; mode++) {
        for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
            model m;
            model_open(&m, mode ? 60 : 0);
            assert_int_equal(eo_model_set(m.ctx, &m.st[0], -10000, 0), 0);
            assert_int_equal(eo_model_set(m.ctx, &m.st[1], 10000, 350), 0);
            assert_int_equal(eo_model_set(m.ctx, &m.st[2], 10000, 0), 0);
            for (int k = 0; k < 200; k++) {
                int ia[2] = {0, 3}, ib[1] = {k % 2 ? 1 : 2};
                eo_model_update out[3];
                double pa;
                eo_winner w = k % 3 == 0 ? EO_WIN_A : k % 3 == 1 ? EO_DRAW : EO_WIN_B;
                assert_int_equal(play(&m, ia, NULL, 2, ib, NULL, 1, w, fields[f],
                                      T0 + 61 * k, &pa, out), 0);
                assert_true(isfinite(pa) && pa >= 0 && pa <= 1);
                for (int i = 0; i < 3; i++) {
                    assert_true(isfinite(out[i].after) && isfinite(out[i].sigma));
                    assert_true(out[i].sigma >= 0 && out[i].sigma <= 350 * (1 + 1e-15));
                }
            }
            for (int i = 0; i < 4; i++) {
                eo_rating_view v = view(&m, i, T0 + 1000000);
                assert_true(isfinite(v.display) && isfinite(v.sigma) && isfinite(v.volatility));
                assert_true(v.volatility > 0);
            }
            eo_model_release(m.ctx);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(glickman_example_math),
        cmocka_unit_test(glickman_example_periods),
        cmocka_unit_test(glickman_per_game),
        cmocka_unit_test(idle_growth),
        cmocka_unit_test(period_boundaries),
        cmocka_unit_test(composite_2v2),
        cmocka_unit_test(composite_team_expectation),
        cmocka_unit_test(composite_weights_draw_field),
        cmocka_unit_test(predict_matches_rate),
        cmocka_unit_test(properties),
        cmocka_unit_test(period_sign),
        cmocka_unit_test(predict_properties),
        cmocka_unit_test(volatility_root),
        cmocka_unit_test(volatility_random),
        cmocka_unit_test(vol_fast_path_bits),
        cmocka_unit_test(parameters_and_view),
        cmocka_unit_test(weight_zero_and_set),
        cmocka_unit_test(extremes_finite),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
