/* SynElo per formula (eo_synelo.h). Every expected value is derived in the comment next to it,
 * by hand or with libm's exp (independent of the model's own eo__exp). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_synelo.h"
#include "core/numeric.h"
#include "core/models/synelo_gtab.h"

static eo_synelo_params defaults(void)
{
    eo_synelo_params p;
    eo_synelo_params_default(&p);
    return p;
}

/* Parameters with K fixed (k_min = k_max), so a round's change is exactly K * (S - P). */
static eo_synelo_params fixed_k(double k)
{
    eo_synelo_params p = defaults();
    p.k_min = k;
    p.k_max = k;
    return p;
}

/* One 1v1 round; returns eo_synelo_rate's code. */
static int duel(const eo_synelo_params *p, eo_synelo_player *x, eo_synelo_player *y,
                eo_winner w, eo_synelo_update out[2])
{
    eo_synelo_player *a[1] = {x};
    eo_synelo_player *b[1] = {y};
    return eo_synelo_rate(p, a, 1, b, 1, w, 1763800000, out);
}

static void theta_rule(void **state)
{
    (void)state;
    double t = 0;
    /* 400 * floor(median{1..k}); median{1..k} = (k+1)/2. */
    assert_int_equal(eo_synelo_theta_from_kmax(12, &t), 0);
    assert_true(t == 2400.0); /* median 6.5 -> 6 */
    assert_int_equal(eo_synelo_theta_from_kmax(1, &t), 0);
    assert_true(t == 400.0);  /* median 1 */
    assert_int_equal(eo_synelo_theta_from_kmax(2, &t), 0);
    assert_true(t == 400.0);  /* median 1.5 -> 1 */
    assert_int_equal(eo_synelo_theta_from_kmax(3, &t), 0);
    assert_true(t == 800.0);  /* median 2 */
    assert_int_equal(eo_synelo_theta_from_kmax(6, &t), 0);
    assert_true(t == 1200.0); /* median 3.5 -> 3 */
    assert_int_equal(eo_synelo_theta_from_kmax(128, &t), 0);
    assert_true(t == 25600.0); /* median 64.5 -> 64 */
    assert_int_equal(eo_synelo_theta_from_kmax(0, &t), EO_ERANGE);
    assert_int_equal(eo_synelo_theta_from_kmax(129, &t), EO_ERANGE);
}

static void params_check(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    assert_int_equal(eo_synelo_params_check(&p), 0);
    p.k_min = 80; /* above k_max */
    assert_int_equal(eo_synelo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.window = 1;
    assert_int_equal(eo_synelo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.theta = NAN;
    assert_int_equal(eo_synelo_params_check(&p), EO_EINVAL);
    p = defaults();
    p.r_min = 1200; /* above r0 */
    assert_int_equal(eo_synelo_params_check(&p), EO_EINVAL);
}

static void win_probability(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    /* Equal sums: 1 / (1 + e^0) = 1/2 exactly. */
    assert_true(eo_synelo_p_a(&p, 12000, 12000) == 0.5);
    /* Θ = 400, difference 400: 1 / (1 + e^-1) = 0.731058578630004879... (by hand from e). */
    p.theta = 400.0;
    assert_true(fabs(eo_synelo_p_a(&p, 1400, 1000) - 0.7310585786300049) < 1e-15);
    assert_true(fabs(eo_synelo_p_a(&p, 1000, 1400) - 0.2689414213699951) < 1e-15);
    /* Θ = 2400, difference 2400 * ln 3 ~ 2636.6: P = 1 / (1 + 1/3) = 0.75 (integer sums, so
     * check against libm at the exact integer difference 2637). */
    p.theta = 2400.0;
    double want = 1.0 / (1.0 + exp(-2637.0 / 2400.0));
    assert_true(fabs(eo_synelo_p_a(&p, 2637, 0) - want) < 1e-15);
    assert_true(fabs(want - 0.75) < 1e-4);
}

/* F2 with K fixed and P = 0.5 (equal ratings), so R + K*(S - P) = R +- K/2 lands on .5 exactly
 * for odd K; banker's rounding must go to the even neighbour in both directions. */
static void bankers_rounding(void **state)
{
    (void)state;
    struct { double k; int32_t r; eo_winner w; int32_t want; } cases[] = {
        {3.0, 1000, EO_WIN_A, 1002}, /* 1001.5 -> 1002 (up to even) */
        {5.0, 1000, EO_WIN_A, 1002}, /* 1002.5 -> 1002 (down to even) */
        {3.0, 1000, EO_WIN_B, 998},  /* 998.5 -> 998 (down to even) */
        {5.0, 1000, EO_WIN_B, 998},  /* 997.5 -> 998 (up to even) */
        {3.0, 1001, EO_WIN_A, 1002}, /* 1002.5 -> 1002 */
        {5.0, 1001, EO_WIN_A, 1004}, /* 1003.5 -> 1004 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eo_synelo_params p = fixed_k(cases[i].k);
        eo_synelo_player x, y;
        eo_synelo_player_init(&x, &p);
        eo_synelo_player_init(&y, &p);
        x.rating = cases[i].r;
        y.rating = cases[i].r;
        eo_synelo_update out[2];
        assert_int_equal(duel(&p, &x, &y, cases[i].w, out), 0);
        assert_true(out[0].expected == 0.5);
        assert_int_equal(x.rating, cases[i].want);
        /* The opponent moves the other way and, by symmetry, is rounded to the even
         * neighbour of the mirrored value: 2r - want is even exactly when want is. */
        assert_int_equal(y.rating, 2 * cases[i].r - cases[i].want);
        eo_synelo_player_free(&x);
        eo_synelo_player_free(&y);
    }
}

/* A fresh player: empty window (C = 1) and R = R0 (G = 1), so K = K_max = 72; equal 1v1:
 * P = 0.5, so the winner gets +36 and the loser -36. */
static void first_round(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    eo_synelo_player x, y;
    eo_synelo_player_init(&x, &p);
    eo_synelo_player_init(&y, &p);
    assert_int_equal(x.rating, 1000);
    assert_true(eo_synelo_convergence(&p, &x.win) == 1.0);
    assert_true(eo_synelo_k(&p, &x) == 72.0);
    eo_synelo_update out[2];
    assert_int_equal(duel(&p, &x, &y, EO_WIN_A, out), 0);
    assert_true(out[0].k == 72.0 && out[1].k == 72.0);
    assert_int_equal(out[0].before, 1000);
    assert_int_equal(out[0].after, 1036);
    assert_int_equal(out[1].after, 964);
    assert_int_equal(x.rounds, 1);
    assert_int_equal(x.last_ended_at, 1763800000);
    /* Window: one entry (1036, Q31 of 0.5 = 2^30, win = 2 halves). */
    assert_int_equal(x.win.len, 1);
    assert_int_equal(x.win.sum_r, 1036);
    assert_int_equal(x.win.sum_e, 1073741824);
    assert_int_equal(x.win.sum_o, 2);
    assert_int_equal(y.win.sum_o, 0);
    /* Still fewer than 2 entries: C = 1. */
    assert_true(eo_synelo_convergence(&p, &x.win) == 1.0);
    eo_synelo_player_free(&x);
    eo_synelo_player_free(&y);
}

/* G: 1 at R0; at R0 + 400 = R0 + σ, exp(-1/2) = 0.60653065971263342 (libm). With C = 1,
 * K = 2 + 70 * 0.60653065971263342 = 44.457146179884340. */
static void gaussian_compression(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    eo_synelo_player x;
    eo_synelo_player_init(&x, &p);
    x.rating = 1400;
    assert_true(fabs(eo_synelo_k(&p, &x) - (2.0 + 70.0 * exp(-0.5))) < 1e-12);
    assert_true(fabs(eo_synelo_k(&p, &x) - 44.45714617988434) < 1e-12);
    x.rating = 600; /* both directions */
    assert_true(fabs(eo_synelo_k(&p, &x) - 44.45714617988434) < 1e-12);
    x.rating = 1000000; /* G underflows to 0: K = K_min */
    assert_true(eo_synelo_k(&p, &x) == 2.0);
}

/* Convergence on a window built by rounds with fixed K = 20 against equal opponents
 * (P = 0.5, so each win is +10 and each loss -10): ratings 1010, 1000, 1010, 1020, from a
 * win, loss, win, win. Then, with the default parameters (K_max 72, weights .25 .25 .5):
 *   m = 2: mean(w_old) = 1005, mean(w_new) = 1015: v_vel = 10/72
 *   mean(o) = 3/4, mean(e) = 1/2: v_wre = 0.25 / 0.1 = 2.5
 *   mean(w) = 1010, deviations 0, -10, 0, 10: population var 50: v_vol = sqrt(50)/72
 *   C = clamp(0.25*10/72 + 0.25*2.5 + 0.5*sqrt(50)/72) = clamp(0.0347 + 0.625 + 0.0491)
 *     = 0.708826...
 * and with 5 entries (one more win: 1030): m = 2, old {1010, 1000}, new {1020, 1030}:
 *   v_vel = |1025 - 1005|/72 = 20/72; mean(o) = 4/5: v_wre = 3; mean 1014, deviations
 *   -4, -14, -4, 6, 16: var = (16+196+16+36+256)/5 = 104:
 *   C = 0.25*20/72 + 0.75 + 0.5*sqrt(104)/72 = 0.0694 + 0.75 + 0.0708 = 0.890264...
 * and one more loss (1020, 6 entries, m = 3): old {1010, 1000, 1010}, new {1020, 1030, 1020}:
 *   v_vel = (3070 - 3020)/3/72, v_wre = |4/6 - 1/2|/0.1 = 5/3, mean 1015, deviations
 *   -5, -15, -5, 5, 15, 5: var = 550/6: C = 0.0579 + 0.4167 + 0.0665 = 0.541025...;
 *   with w_vol = 10 instead, 10 * sqrt(550/6)/72 = 1.33 alone: clamped to 1. */
static void convergence_halves(void **state)
{
    (void)state;
    eo_synelo_params k20 = fixed_k(20.0);
    eo_synelo_params p = defaults();
    eo_synelo_player x;
    eo_synelo_player_init(&x, &k20);
    eo_winner seq[5] = {EO_WIN_A, EO_WIN_B, EO_WIN_A, EO_WIN_A, EO_WIN_A};
    int32_t ratings[5] = {1010, 1000, 1010, 1020, 1030};
    for (int i = 0; i < 5; i++) {
        eo_synelo_player y;
        eo_synelo_player_init(&y, &k20);
        y.rating = x.rating;
        assert_int_equal(duel(&k20, &x, &y, seq[i], NULL), 0);
        assert_int_equal(x.rating, ratings[i]);
        eo_synelo_player_free(&y);
        if (i == 3) {
            assert_int_equal(x.win.sum_old, 1010 + 1000);
            assert_int_equal(x.win.sum_new, 1010 + 1020);
            double want = 0.25 * 10.0 / 72.0 + 0.25 * 2.5 + 0.5 * sqrt(50.0) / 72.0;
            assert_true(fabs(eo_synelo_convergence(&p, &x.win) - want) < 1e-12);
            assert_true(fabs(want - 0.70882679) < 1e-7);
        }
    }
    /* Odd length 5: the middle entry (1010) is in neither half. */
    assert_int_equal(x.win.sum_old, 1010 + 1000);
    assert_int_equal(x.win.sum_new, 1020 + 1030);
    double want5 = 0.25 * 20.0 / 72.0 + 0.75 + 0.5 * sqrt(104.0) / 72.0;
    assert_true(fabs(eo_synelo_convergence(&p, &x.win) - want5) < 1e-12);
    assert_true(fabs(want5 - 0.890264) < 1e-6);
    /* The same with a small velocity only: weights (1, 0, 0) give v_vel = 20/72. */
    p.w_vel = 1.0;
    p.w_wre = 0.0;
    p.w_vol = 0.0;
    assert_true(fabs(eo_synelo_convergence(&p, &x.win) - 20.0 / 72.0) < 1e-15);
    /* Volatility only: sqrt(104)/72. */
    p.w_vel = 0.0;
    p.w_vol = 1.0;
    assert_true(fabs(eo_synelo_convergence(&p, &x.win) - sqrt(104.0) / 72.0) < 1e-15);
    eo_synelo_player y;
    eo_synelo_player_init(&y, &k20);
    y.rating = x.rating;
    assert_int_equal(duel(&k20, &x, &y, EO_WIN_B, NULL), 0);
    eo_synelo_player_free(&y);
    assert_int_equal(x.rating, 1020);
    assert_int_equal(x.win.sum_old, 1010 + 1000 + 1010);
    assert_int_equal(x.win.sum_new, 1020 + 1030 + 1020);
    p = defaults();
    double want6 = 0.25 * (50.0 / 3.0) / 72.0 + 0.25 * (1.0 / 6.0) / 0.1 +
                   0.5 * sqrt(550.0 / 6.0) / 72.0;
    assert_true(fabs(eo_synelo_convergence(&p, &x.win) - want6) < 1e-12);
    assert_true(fabs(want6 - 0.541025) < 1e-6);
    p.w_vol = 10.0;
    assert_true(eo_synelo_convergence(&p, &x.win) == 1.0);
    eo_synelo_player_free(&x);
}

/* Sums recomputed from the ring, oldest first, by the definitions of F3. */
static void check_sums(const eo_synelo_window *w)
{
    int64_t r = 0, r2 = 0, e = 0, o = 0, old = 0, nw = 0;
    uint32_t m = w->len / 2;
    for (uint32_t i = 0; i < w->len; i++) {
        const eo_synelo_entry *en = &w->ring[(w->head + i) % w->capacity];
        int64_t v = en->rating;
        r += v;
        r2 += v * v;
        e += en->e_q31;
        o += en->o_half;
        if (i < m)
            old += v;
        if (i >= w->len - m)
            nw += v;
    }
    assert_int_equal(w->sum_r, r);
    assert_int_equal(w->sum_r2, r2);
    assert_int_equal(w->sum_e, e);
    assert_int_equal(w->sum_o, o);
    assert_int_equal(w->sum_old, old);
    assert_int_equal(w->sum_new, nw);
}

/* Eviction at W, for an even and an odd W: the window keeps the last W ratings in order and
 * its running sums equal the sums recomputed from scratch after every round. K = 2 with P = .5
 * gives +-1 per round, so the ratings are known: start 1000, the i-th round's result is
 * 1000 + (wins - losses) so far. */
static void window_eviction(void **state)
{
    (void)state;
    int32_t wins[2] = {4, 7};
    for (int t = 0; t < 2; t++) {
        eo_synelo_params p = fixed_k(2.0);
        p.window = wins[t];
        eo_synelo_player x;
        eo_synelo_player_init(&x, &p);
        int32_t hist[64];
        uint32_t seed = 7;
        for (int i = 0; i < 40; i++) {
            seed = seed * 1103515245u + 12345u;
            eo_winner w = (seed >> 16) % 3 == 0 ? EO_WIN_B : EO_WIN_A;
            eo_synelo_player y;
            eo_synelo_player_init(&y, &p);
            y.rating = x.rating;
            int32_t before = x.rating;
            assert_int_equal(duel(&p, &x, &y, w, NULL), 0);
            eo_synelo_player_free(&y);
            hist[i] = before + (w == EO_WIN_A ? 1 : -1);
            assert_int_equal(x.rating, hist[i]);
            uint32_t len = (uint32_t)(i + 1 < p.window ? i + 1 : p.window);
            assert_int_equal(x.win.len, len);
            assert_true(x.win.capacity <= (uint32_t)p.window);
            for (uint32_t j = 0; j < len; j++) {
                const eo_synelo_entry *en = &x.win.ring[(x.win.head + j) % x.win.capacity];
                assert_int_equal(en->rating, hist[i + 1 - len + j]);
            }
            check_sums(&x.win);
        }
        assert_int_equal(x.rounds, 40);
        eo_synelo_player_free(&x);
    }
}

/* The floor: K = 72 fixed, 120 vs 120, the loser gets 120 - 36 = 84 -> R_min 100. */
static void rating_floor(void **state)
{
    (void)state;
    eo_synelo_params p = fixed_k(72.0);
    eo_synelo_player x, y;
    eo_synelo_player_init(&x, &p);
    eo_synelo_player_init(&y, &p);
    x.rating = 120;
    y.rating = 120;
    assert_int_equal(duel(&p, &x, &y, EO_WIN_B, NULL), 0);
    assert_int_equal(x.rating, 100);
    assert_int_equal(y.rating, 156);
    assert_int_equal(x.win.sum_r, 100); /* the floored value enters the window */
    eo_synelo_player_free(&x);
    eo_synelo_player_free(&y);
}

/* Graduation cap: K = 72 fixed, 2190 vs 2190, the winner would get 2226. Capped to 2200 only
 * on the round that brings rounds to 50, and the capped value enters the window. */
static void graduation_cap(void **state)
{
    (void)state;
    eo_synelo_params p = fixed_k(72.0);
    uint32_t before_rounds[3] = {48, 49, 50};
    int32_t want[3] = {2226, 2200, 2226};
    for (int i = 0; i < 3; i++) {
        eo_synelo_player x, y;
        eo_synelo_player_init(&x, &p);
        eo_synelo_player_init(&y, &p);
        x.rating = 2190;
        y.rating = 2190;
        x.rounds = before_rounds[i];
        assert_false(eo_synelo_visible(&p, &x) != (before_rounds[i] >= 50));
        assert_int_equal(duel(&p, &x, &y, EO_WIN_A, NULL), 0);
        assert_int_equal(x.rating, want[i]);
        assert_int_equal(x.win.sum_r, want[i]);
        assert_int_equal(x.rounds, before_rounds[i] + 1);
        assert_true(eo_synelo_visible(&p, &x) == (before_rounds[i] + 1 >= 50));
        eo_synelo_player_free(&x);
        eo_synelo_player_free(&y);
    }
}

/* Stalemate: S = 1/2 for everyone. Equal teams: S - P = 0, no change, but the round counts
 * and enters the window with o = 1/2. Unequal: A 1100 vs B 1000 (Θ 2400):
 * P_A = 1/(1+exp(-100/2400)) = 0.510414711... ; A's K = 2 + 70 * exp(-100²/320000)
 * = 2 + 70 * 0.969233234... = 69.8463264...; A: 1100 + 69.846 * (0.5 - 0.5104147) = 1099.27 -> 1099;
 * B: K = 72 (G = 1), 1000 + 72 * 0.0104147 = 1000.75 -> 1001. */
static void stalemate(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    eo_synelo_player x, y;
    eo_synelo_player_init(&x, &p);
    eo_synelo_player_init(&y, &p);
    assert_int_equal(duel(&p, &x, &y, EO_DRAW, NULL), 0);
    assert_int_equal(x.rating, 1000);
    assert_int_equal(y.rating, 1000);
    assert_int_equal(x.rounds, 1);
    assert_int_equal(x.win.sum_o, 1);
    x.rating = 1100;
    eo_synelo_player_free(&y);
    eo_synelo_player_init(&y, &p);
    eo_synelo_update out[2];
    x.win.len = 0; /* back to C = 1 for the hand computation */
    x.win.sum_r = x.win.sum_r2 = x.win.sum_e = x.win.sum_o = 0;
    x.win.sum_old = x.win.sum_new = 0;
    assert_int_equal(duel(&p, &x, &y, EO_DRAW, out), 0);
    double pa = 1.0 / (1.0 + exp(-100.0 / 2400.0));
    assert_true(fabs(out[0].expected - pa) < 1e-15);
    assert_true(fabs(out[1].expected - (1.0 - pa)) < 1e-15);
    assert_true(fabs(out[0].k - (2.0 + 70.0 * exp(-10000.0 / 320000.0))) < 1e-12);
    assert_int_equal(x.rating, 1099);
    assert_int_equal(y.rating, 1001);
    eo_synelo_player_free(&x);
    eo_synelo_player_free(&y);
}

/* K comes from the window before the round: a player's 3rd round uses the two entries of
 * rounds 1 and 2, not the entry the 3rd round adds. The win-rate weight is set to 0 (weights
 * are pool parameters) so that C stays below 1 and the check has teeth. X meets a new 1000
 * each time and wins:
 *  round 1: empty window, C = 1, G = 1: K = 72, 1000 -> 1036 (P 0.5)
 *  round 2: one entry, still C = 1; G = exp(-36²/320000) = 0.99596; K2 = 71.717;
 *           P2 = 1/(1+exp(-36/2400)) = 0.50375; R2 = round(1036 + 71.717 * 0.49625) = 1072
 *  round 3: entries 1036 and 1072: m = 1, v_vel = 36/72, v_vol = 18/72 (std of two values is
 *           half their gap): C3 = 0.25 * 0.5 + 0.5 * 0.25 = 0.25;
 *           K3 = 2 + 70 * 0.25 * exp(-72²/320000) = 19.219
 *  (with the window after the round, C3 would see three entries and differ).
 * Computed with libm's exp. */
static void k_from_window_before(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    p.w_wre = 0.0;
    eo_synelo_player x;
    eo_synelo_player_init(&x, &p);
    eo_synelo_update out[2];
    double k2 = 2.0 + 70.0 * exp(-(36.0 * 36.0) / 320000.0);
    double k3 = 2.0 + 70.0 * 0.25 * exp(-(72.0 * 72.0) / 320000.0);
    double want_k[3] = {72.0, k2, k3};
    int32_t want_r[3] = {1036, 1072, 0};
    for (int i = 0; i < 3; i++) {
        eo_synelo_player y;
        eo_synelo_player_init(&y, &p);
        assert_int_equal(duel(&p, &x, &y, EO_WIN_A, out), 0);
        assert_true(fabs(out[0].k - want_k[i]) < 1e-12);
        if (want_r[i] != 0)
            assert_int_equal(x.rating, want_r[i]);
        eo_synelo_player_free(&y);
    }
    assert_true(fabs(k3 - 19.219) < 1e-3);
    eo_synelo_player_free(&x);
}

/* Every participant is updated from round-start ratings: A = {1000, 1200}, B = {1100, 1100}
 * have equal sums, so everyone's P is exactly 1/2 whatever the order of updates, and each
 * "before" is the round-start rating. */
static void round_start_state(void **state)
{
    (void)state;
    eo_synelo_params p = fixed_k(10.0);
    eo_synelo_player pl[4];
    int32_t r[4] = {1000, 1200, 1100, 1100};
    for (int i = 0; i < 4; i++) {
        eo_synelo_player_init(&pl[i], &p);
        pl[i].rating = r[i];
    }
    eo_synelo_player *a[2] = {&pl[0], &pl[1]};
    eo_synelo_player *b[2] = {&pl[2], &pl[3]};
    eo_synelo_update out[4];
    assert_int_equal(eo_synelo_rate(&p, a, 2, b, 2, EO_WIN_A, 5, out), 0);
    for (int i = 0; i < 4; i++) {
        assert_true(out[i].expected == 0.5);
        assert_int_equal(out[i].before, r[i]);
        assert_int_equal(pl[i].rating, r[i] + (i < 2 ? 5 : -5)); /* 10 * (±1/2) */
        eo_synelo_player_free(&pl[i]);
    }
}

static void stale_flag(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    eo_synelo_player x;
    eo_synelo_player_init(&x, &p);
    assert_false(eo_synelo_stale(&p, &x, 4000000000)); /* no rounds */
    x.rounds = 3;
    x.last_ended_at = 1000000;
    assert_false(eo_synelo_stale(&p, &x, 1000000 + 30 * 86400));    /* exactly 30 days */
    assert_true(eo_synelo_stale(&p, &x, 1000000 + 30 * 86400 + 1)); /* more than 30 days */
}

static void rate_rejects(void **state)
{
    (void)state;
    eo_synelo_params p = defaults();
    eo_synelo_player x, y;
    eo_synelo_player_init(&x, &p);
    eo_synelo_player_init(&y, &p);
    eo_synelo_player *a[1] = {&x};
    eo_synelo_player *b[1] = {&y};
    assert_int_equal(eo_synelo_rate(&p, a, 0, b, 1, EO_WIN_A, 0, NULL), EO_EINVAL);
    assert_int_equal(eo_synelo_rate(&p, a, 1, b, 1, (eo_winner)7, 0, NULL), EO_EINVAL);
    assert_int_equal(x.rounds, 0);
    assert_int_equal(x.rating, 1000);
}

/* The pool rates through a table of G for ratings near R0 (core/models/synelo_gtab.h). Its entries
 * must be the direct formula's values at the right ratings, and rating through it must give
 * the same bits as eo_synelo_rate(), also for ratings at and past the table's ends. */
static void gauss_table_same_bits(void **state)
{
    (void)state;
    static eo__gtab t; /* 32 KiB: not on the stack */
    eo_synelo_params p = defaults();
    eo__gtab_init(&t, &p);
    assert_true(t.lo == 1000 - EO__GTAB_HALF);
    /* G(R) = exp(-(R - R0)^2 / (2 sigma^2)) at the ends, at R0 and near it: the index maps
     * rating lo + i to g[i] (an off-by-one would pair a rating with its neighbour's G). */
    const int32_t at[] = {1, 2, 999, 1000, 1001, 1400, 3047, 3048};
    for (size_t i = 0; i < sizeof at / sizeof at[0]; i++) {
        double d = (double)at[i] - 1000.0;
        double want = eo__exp(-(d * d) / (2.0 * 400.0 * 400.0));
        assert_true(t.g[at[i] - t.lo] == want);
    }
    assert_true(t.g[1000 - t.lo] == 1.0); /* exp(0) */

    /* Two copies of 8 players start at ratings around both ends of the table (R0 +- 2048) and
     * in the middle; one copy is rated with the table, the other with eo_synelo_rate(), over
     * the same random 2v2 rounds. K_max = 8 keeps the ratings near where they started, so
     * both the table and the direct path are taken, with windows that fill and evict (W = 16). */
    p.k_max = 8.0;
    p.window = 16;
    p.r_min = 1;
    eo__gtab_init(&t, &p);
    const int32_t start[8] = {1000 + 2046, 1000 + 2048, 1000 + 2049, 1000 + 2060,
                              1000 - 960,  1000 - 998,  1000,        1000 + 500};
    eo_synelo_player x[8], y[8];
    for (int i = 0; i < 8; i++) {
        eo_synelo_player_init(&x[i], &p);
        eo_synelo_player_init(&y[i], &p);
        x[i].rating = y[i].rating = start[i];
    }
    uint64_t rng = 12345;
    int past = 0;   /* updates of a player rated past the table's end (direct path) */
    int at_end = 0; /* updates of a player at its last entry */
    for (int round = 0; round < 3000; round++) {
        int pick[4];
        for (int j = 0; j < 4; j++) {
            int again;
            do {
                rng = rng * 6364136223846793005u + 1442695040888963407u;
                pick[j] = (int)(rng >> 61);
                again = 0;
                for (int k = 0; k < j; k++)
                    again |= pick[k] == pick[j];
            } while (again);
        }
        eo_winner w = (eo_winner[]){EO_WIN_A, EO_WIN_B, EO_DRAW}[(rng >> 20) % 3];
        eo_synelo_player *xa[2] = {&x[pick[0]], &x[pick[1]]};
        eo_synelo_player *xb[2] = {&x[pick[2]], &x[pick[3]]};
        eo_synelo_player *ya[2] = {&y[pick[0]], &y[pick[1]]};
        eo_synelo_player *yb[2] = {&y[pick[2]], &y[pick[3]]};
        eo_synelo_update ux[4], uy[4];
        assert_int_equal(eo__synelo_rate_tab(&p, &t, xa, 2, xb, 2, w, 0.0, 1, ux), 0);
        assert_int_equal(eo_synelo_rate(&p, ya, 2, yb, 2, w, 1, uy), 0);
        for (int j = 0; j < 4; j++) {
            past += ux[j].before > 1000 + EO__GTAB_HALF;
            at_end += ux[j].before == 1000 + EO__GTAB_HALF;
            assert_int_equal(ux[j].after, uy[j].after);
            assert_memory_equal(&ux[j].k, &uy[j].k, sizeof(double));
            assert_memory_equal(&ux[j].expected, &uy[j].expected, sizeof(double));
        }
    }
    for (int i = 0; i < 8; i++) {
        assert_int_equal(x[i].rating, y[i].rating);
        assert_int_equal(x[i].win.sum_r2, y[i].win.sum_r2);
        eo_synelo_player_free(&x[i]);
        eo_synelo_player_free(&y[i]);
    }
    assert_true(past > 0);
    assert_true(at_end > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(theta_rule),
        cmocka_unit_test(params_check),
        cmocka_unit_test(win_probability),
        cmocka_unit_test(bankers_rounding),
        cmocka_unit_test(first_round),
        cmocka_unit_test(gaussian_compression),
        cmocka_unit_test(convergence_halves),
        cmocka_unit_test(window_eviction),
        cmocka_unit_test(rating_floor),
        cmocka_unit_test(graduation_cap),
        cmocka_unit_test(stalemate),
        cmocka_unit_test(k_from_window_before),
        cmocka_unit_test(round_start_state),
        cmocka_unit_test(stale_flag),
        cmocka_unit_test(rate_rejects),
        cmocka_unit_test(gauss_table_same_bits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
