/* Whole-history refit (eo_fit.h). MAP: one Newton step and the optimum by hand, monotone
 * convergence, invariances, and the test on a simulated world (the refit ranks players
 * and predicts held-out rounds better than online ratings). Smoother: the fixed point of a
 * two-round 1v1 against an independent expectation propagation written here, online TrueSkill
 * where the smoother must equal it, convergence, invariances, and a world with drift. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_fit.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"
#include "evenodds/eo_sim.h"

#define assert_near(x, y, tol) assert_true(fabs((double)(x) - (double)(y)) <= (tol))

static eo_pool_config pool_of(eo_model m)
{
    eo_pool_config c;
    eo_pool_config_default(&c);
    assert_int_equal(eo_model_config_default(m, &c.model), 0);
    return c;
}

/* A round of ids a[0..na) against b[0..nb); weights of b given by wb (NULL: 1); into the fit
 * and, when @p online is not NULL, rated by that pool too. */
static void add_both(eo_fit *f, eo_pool *online, const char *const *a, size_t na,
                     const char *const *b, size_t nb, const double *wb, eo_winner w)
{
    eo_member ma[8], mb[8];
    memset(ma, 0, sizeof ma);
    memset(mb, 0, sizeof mb);
    for (size_t i = 0; i < na; i++)
        ma[i].id = (char *)a[i];
    for (size_t i = 0; i < nb; i++) {
        mb[i].id = (char *)b[i];
        if (wb != NULL) {
            mb[i].has = EO_MEMBER_TIME;
            mb[i].time = wb[i];
        }
    }
    eo_round r;
    memset(&r, 0, sizeof r);
    r.team[0] = ma;
    r.team[1] = mb;
    r.n[0] = na;
    r.n[1] = nb;
    r.winner = w;
    assert_int_equal(eo_fit_add_round(f, &r), 0);
    if (online != NULL)
        assert_int_equal(eo_pool_apply(online, &r, NULL, NULL), 0);
}

static void add(eo_fit *f, const char *const *a, size_t na, const char *const *b, size_t nb,
                const double *wb, eo_winner w)
{
    add_both(f, NULL, a, na, b, nb, wb, w);
}

static double skill_of(const eo_fit *f, const char *id)
{
    eo_fit_player p;
    assert_int_equal(eo_fit_lookup(f, id, &p), 0);
    return p.skill;
}

/* Elo (team sum, scale 400, start 1500), prior N(1500, 350²); x beats y twice, y beats x once.
 * c = ln 10 / 400. At the start d = 0 and P = ½, so for x
 *   g = Σ (S − P)·c − 0 = (½ + ½ − ½)·c = c/2,   h = 3·¼·c² + 1/350²,
 * and y mirrors it: the first sweep's Newton step is Δ = (c/2)/(¾c² + 350⁻²) = 87.18 points,
 * scaled by the line search's factor η (both players move, so the whole step overshoots:
 * d changes by 2cΔ where each player's step assumed c·Δ). The log posterior starts at
 * 3·ln ½ = −2.0794. The optimum x = 1500 + δ, y = 1500 − δ solves the zero of the gradient,
 *   2c·(1 − P) − c·P − δ/350² = 0 with P = σ(2cδ), i.e. δ = 350²·c·(2 − 3P), δ ≈ 50.9. */
static void hand_computed(void **state)
{
    (void)state;
    eo_pool_config pc = pool_of(EO_MODEL_ELO);
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    assert_near(fc.prior_mean, 1500.0, 0);
    assert_near(fc.prior_sd, EO_FIT_ELO_SD, 0);
    fc.tol = 1e-7;
    fc.max_sweeps = 100;
    eo_fit *f = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    const char *x[] = {"x"}, *y[] = {"y"};
    add(f, x, 1, y, 1, NULL, EO_WIN_A);
    add(f, y, 1, x, 1, NULL, EO_WIN_A);
    add(f, x, 1, y, 1, NULL, EO_WIN_A);

    const double c = log(10.0) / 400.0;
    const double step = (c / 2) / (0.75 * c * c + 1.0 / (350.0 * 350.0));
    eo_fit_sweep_stats st;
    assert_int_equal(eo_fit_sweep(f, &st), 0);
    assert_true(st.step > 0.0 && st.step <= 2.0);
    assert_near(skill_of(f, "x"), 1500.0 + st.step * step, 1e-9);
    assert_near(skill_of(f, "y"), 1500.0 - st.step * step, 1e-9);
    assert_near(st.max_change, st.step * step, 1e-9);
    assert_true(st.objective > 3.0 * log(0.5));

    assert_int_equal(eo_fit_run(f, &st), 0);
    assert_true(st.converged);
    double dx = skill_of(f, "x") - 1500.0, dy = skill_of(f, "y") - 1500.0;
    assert_near(dx, -dy, 1e-9);
    double p = 1.0 / (1.0 + exp(-2.0 * c * dx));
    assert_near(dx, 350.0 * 350.0 * c * (2.0 - 3.0 * p), 1e-6);
    assert_true(dx > 50.0 && dx < 52.0);
    eo_fit_player pl;
    assert_int_equal(eo_fit_lookup(f, "x", &pl), 0);
    assert_int_equal(pl.rounds, 3);
    /* σ = 1/√(3·P(1−P)·c² + 350⁻²) */
    assert_near(pl.sigma, 1.0 / sqrt(3.0 * p * (1.0 - p) * c * c + 1.0 / (350.0 * 350.0)),
                1e-6);
    /* An unknown player is the prior. */
    assert_int_equal(eo_fit_lookup(f, "nobody", &pl), EO_ENOTFOUND);
    assert_near(pl.skill, 1500.0, 0);
    assert_near(pl.sigma, 350.0, 1e-9);
    eo_fit_destroy(f);
}

/* Random 4v4 rounds among 40 players with a hidden skill each; deterministic. */
static uint64_t rng(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Into @p f, and when given, into @p mirror with the sides swapped and into the pool
 * @p online; @p last (NULL or 8) receives the indices of the last round's players. */
static void random_rounds_into(eo_fit *f, eo_fit *mirror, eo_pool *online, int rounds,
                               uint64_t seed, int *last)
{
    char names[40][8];
    const char *ids[40];
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "p%02d", i);
        ids[i] = names[i];
    }
    for (int k = 0; k < rounds; k++) {
        int perm[40];
        for (int i = 0; i < 40; i++)
            perm[i] = i;
        for (int i = 0; i < 8; i++) {
            int j = i + (int)(rng(&seed) % (uint64_t)(40 - i));
            int t = perm[i];
            perm[i] = perm[j];
            perm[j] = t;
        }
        const char *a[4], *b[4];
        double diff = 0.0;
        for (int i = 0; i < 4; i++) {
            a[i] = ids[perm[i]];
            b[i] = ids[perm[4 + i]];
            diff += perm[i] - perm[4 + i]; /* skill = index */
        }
        double pa = 1.0 / (1.0 + exp(-diff / 20.0));
        double u = (double)(rng(&seed) >> 11) / 9007199254740992.0;
        eo_winner w = u < 0.03 ? EO_DRAW : u < pa ? EO_WIN_A : EO_WIN_B;
        add_both(f, online, a, 4, b, 4, NULL, w);
        if (last != NULL)
            memcpy(last, perm, 8 * sizeof *last);
        if (mirror != NULL)
            add(mirror, b, 4, a, 4, NULL, w == EO_DRAW ? EO_DRAW : w == EO_WIN_A ? EO_WIN_B
                                                                                 : EO_WIN_A);
    }
}

static void random_rounds(eo_fit *f, eo_fit *mirror, int rounds, uint64_t seed)
{
    random_rounds_into(f, mirror, NULL, rounds, seed, NULL);
}

/* MAP: the objective never falls, and the sweeps stop converged, for every model. */
static void converges(void **state)
{
    (void)state;
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        eo_pool_config pc = pool_of((eo_model)m);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
        fc.method = EO_FIT_MAP;
        fc.max_sweeps = 300;
        eo_fit *f = NULL;
        assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
        random_rounds(f, NULL, 400, 7);
        eo_fit_sweep_stats st;
        double before = -INFINITY;
        bool done = false;
        for (int i = 0; i < 300 && !done; i++) {
            assert_int_equal(eo_fit_sweep(f, &st), 0);
            assert_true(st.objective >= before);
            assert_true(isfinite(st.objective) && isfinite(st.logloss));
            before = st.objective;
            done = st.converged;
        }
        assert_true(done);
        assert_true(st.max_change < fc.tol);
        /* The strongest (index 39) ends above the weakest (index 0). */
        assert_true(skill_of(f, "p39") > skill_of(f, "p00"));
        eo_fit_destroy(f);
    }
}

/* Swapping the sides with the outcomes flipped gives the same skills, with either method. */
static void side_swap(void **state)
{
    (void)state;
    const eo_model models[] = {EO_MODEL_ELO, EO_MODEL_TRUESKILL, EO_MODEL_HIVE,
                               EO_MODEL_TRUESKILL, EO_MODEL_WENGLIN};
    const eo_fit_method methods[] = {EO_FIT_MAP, EO_FIT_MAP, EO_FIT_MAP, EO_FIT_SMOOTH,
                                     EO_FIT_SMOOTH};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        eo_pool_config pc = pool_of(models[m]);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
        fc.method = methods[m];
        eo_fit *f = NULL, *g = NULL;
        assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
        assert_int_equal(eo_fit_create(&pc, &fc, &g), 0);
        random_rounds(f, g, 200, 11);
        eo_fit_sweep_stats sf, sg;
        assert_int_equal(eo_fit_run(f, &sf), 0);
        assert_int_equal(eo_fit_run(g, &sg), 0);
        assert_int_equal(sf.sweep, sg.sweep);
        assert_near(sf.objective, sg.objective, 1e-9 * fabs(sf.objective));
        for (size_t i = 0; i < eo_fit_player_count(f); i++) {
            eo_fit_player p;
            assert_int_equal(eo_fit_player_get(f, i, &p), 0);
            assert_near(p.skill, skill_of(g, p.id), 1e-9 * fc.prior_sd);
            eo_fit_player q;
            assert_int_equal(eo_fit_lookup(g, p.id, &q), 0);
            assert_near(p.sigma, q.sigma, 1e-9 * fc.prior_sd);
        }
        eo_fit_destroy(f);
        eo_fit_destroy(g);
    }
}

/* A member of weight 0 in every round learns nothing: it stays at the prior, with either
 * method. */
static void weight_zero_with(eo_fit_method method)
{
    eo_pool_config pc = pool_of(EO_MODEL_TRUESKILL);
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    fc.method = method;
    eo_fit *f = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    const char *a[] = {"a1"}, *b[] = {"b1", "ghost"};
    const double wb[] = {1.0, 0.0};
    for (int i = 0; i < 20; i++)
        add(f, a, 1, b, 2, wb, i % 3 ? EO_WIN_A : EO_WIN_B);
    eo_fit_sweep_stats st;
    assert_int_equal(eo_fit_run(f, &st), 0);
    assert_true(st.converged);
    eo_fit_player p;
    assert_int_equal(eo_fit_lookup(f, "ghost", &p), 0);
    assert_near(p.skill, fc.prior_mean, 0);
    assert_int_equal(p.rounds, 0);
    assert_near(p.sigma, fc.prior_sd, 1e-12);
    assert_true(skill_of(f, "a1") > fc.prior_mean);
    assert_true(skill_of(f, "b1") < fc.prior_mean);
    eo_fit_destroy(f);
}

static void weight_zero(void **state)
{
    (void)state;
    weight_zero_with(EO_FIT_MAP);
    weight_zero_with(EO_FIT_SMOOTH);
}

/* Bad input changes nothing; bad configurations are refused. */
static void errors(void **state)
{
    (void)state;
    eo_pool_config pc = pool_of(EO_MODEL_HIVE);
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    assert_near(fc.prior_mean, EO_FIT_HIVE_MEAN, 0);
    eo_fit *f = NULL;
    eo_fit_config bad = fc;
    bad.prior_sd = bad.prior_mean; /* a Gamma of shape 1 has its mode at 0 */
    assert_int_equal(eo_fit_create(&pc, &bad, &f), EO_EINVAL);
    bad = fc;
    bad.tol = 0.0;
    assert_int_equal(eo_fit_create(&pc, &bad, &f), EO_EINVAL);
    /* Only the Gaussian models are smoothed; they are by default, the others are not. */
    assert_int_equal(fc.method, EO_FIT_MAP);
    bad = fc;
    bad.method = EO_FIT_SMOOTH;
    assert_int_equal(eo_fit_create(&pc, &bad, &f), EO_EINVAL);
    bad.method = (eo_fit_method)7;
    assert_int_equal(eo_fit_create(&pc, &bad, &f), EO_EINVAL);
    eo_pool_config ts = pool_of(EO_MODEL_TRUESKILL), wl = pool_of(EO_MODEL_WENGLIN);
    eo_fit_config tc, wc;
    assert_int_equal(eo_fit_config_default(&ts, &tc), 0);
    assert_int_equal(eo_fit_config_default(&wl, &wc), 0);
    assert_int_equal(tc.method, EO_FIT_SMOOTH);
    assert_int_equal(wc.method, EO_FIT_SMOOTH);
    eo_fit_method meth;
    assert_int_equal(eo_fit_method_parse("smooth", &meth), 0);
    assert_int_equal(meth, EO_FIT_SMOOTH);
    assert_string_equal(eo_fit_method_name(EO_FIT_MAP), "map");
    assert_int_equal(eo_fit_method_parse("Smooth", &meth), EO_EINVAL);
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    eo_fit_sweep_stats st;
    assert_int_equal(eo_fit_sweep(f, &st), EO_ENOTFOUND);
    eo_member m[2];
    memset(m, 0, sizeof m);
    m[0].id = "same";
    m[1].id = "same";
    eo_round r;
    memset(&r, 0, sizeof r);
    r.team[0] = &m[0];
    r.team[1] = &m[1];
    r.n[0] = r.n[1] = 1;
    assert_int_equal(eo_fit_add_round(f, &r), EO_EINVAL);
    m[1].id = "bad\x01id";
    assert_int_equal(eo_fit_add_round(f, &r), EO_EINVAL);
    assert_int_equal(eo_fit_player_count(f), 0);
    eo_fit_destroy(f);
}

/* The test. A world of 300 players with fixed true skills, random 12v12 teams, map bias
 * and partial play: 6000 rounds, the first 4800 to fit, the last 1200 held out. The refit (Elo's
 * scale, which is the world's: a team-sum difference of 400 is 10:1) must rank players closer
 * to their true skills than online Elo after the same 4800 rounds (Spearman), and predict the
 * held-out rounds with a lower log loss than online Elo frozen at the same point. */
/* Spearman's correlation with the sim's true skills of the fitted skills (*rho_fit) and of the
 * online pool's means (*rho_online), over the players the fit rated; returns their count. */
static size_t spearman_pair(const eo_sim *sim, const eo_fit *f, const eo_pool *online,
                            double *rho_fit, double *rho_online)
{
    size_t n = eo_sim_player_count(sim);
    double *truth = calloc(n, sizeof *truth), *fit = calloc(n, sizeof *fit),
           *onl = calloc(n, sizeof *onl);
    assert_true(truth != NULL && fit != NULL && onl != NULL);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        eo_sim_player sp;
        eo_fit_player fp;
        eo_rating_view v;
        assert_int_equal(eo_sim_player_get(sim, i, &sp), 0);
        if (eo_fit_lookup(f, sp.id, &fp) != 0 || fp.rounds == 0)
            continue;
        assert_int_equal(eo_pool_lookup(online, sp.id, 0, &v), 0);
        truth[k] = sp.skill;
        fit[k] = fp.skill;
        onl[k] = v.mu;
        k++;
    }
    assert_int_equal(eo_sim_spearman(truth, fit, k, rho_fit), 0);
    assert_int_equal(eo_sim_spearman(truth, onl, k, rho_online), 0);
    free(truth);
    free(fit);
    free(onl);
    return k;
}

static void beats_online(void **state)
{
    (void)state;
    eo_sim_config sc;
    eo_sim_config_default(&sc);
    sc.seed = 5;
    sc.players = 300;
    sc.balancer = EO_SIM_BAL_RANDOM;
    eo_pool_config pc = pool_of(EO_MODEL_ELO);
    pc.bias.by = EO_BIAS_MAP;
    pc.bias.prior = EO_BIAS_PRIOR_DEFAULT;
    pc.bias.strength = 1.0;
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    eo_fit *f = NULL;
    eo_pool *online = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    assert_int_equal(eo_pool_create(&pc, &online), 0);

    enum { TOTAL = 6000, TRAIN = 4800 };
    eo_sim *sim = NULL;
    assert_int_equal(eo_sim_create(&sc, &pc, &sim), 0);
    for (int i = 0; i < TRAIN; i++) {
        eo_sim_round sr;
        assert_int_equal(eo_sim_step(sim, &sr), 0);
        assert_int_equal(eo_fit_add_round(f, sr.round), 0);
        assert_int_equal(eo_pool_apply(online, sr.round, NULL, NULL), 0);
    }
    eo_fit_sweep_stats st;
    assert_int_equal(eo_fit_run(f, &st), 0);
    assert_true(st.converged);

    double rho_fit, rho_online;
    size_t k = spearman_pair(sim, f, online, &rho_fit, &rho_online);
    print_message("spearman: refit %.4f, online %.4f over %zu players\n", rho_fit, rho_online, k);
    assert_true(rho_fit > rho_online);

    eo_metrics mf, mo;
    eo_metrics_init(&mf);
    eo_metrics_init(&mo);
    for (int i = TRAIN; i < TOTAL; i++) {
        eo_sim_round sr;
        assert_int_equal(eo_sim_step(sim, &sr), 0);
        if (sr.round->winner == EO_DRAW)
            continue;
        double pf, po;
        assert_int_equal(eo_fit_predict(f, sr.round, &pf), 0);
        assert_int_equal(eo_pool_predict(online, sr.round, &po), 0);
        eo_metrics_add(&mf, pf, sr.round->winner == EO_WIN_A);
        eo_metrics_add(&mo, po, sr.round->winner == EO_WIN_A);
    }
    eo_metrics_result rf, ro;
    eo_metrics_get(&mf, &rf);
    eo_metrics_get(&mo, &ro);
    print_message("held-out log loss: refit %.5f, online frozen %.5f (%llu rounds; %u sweeps)\n",
                  rf.logloss, ro.logloss, (unsigned long long)rf.count, st.sweep);
    assert_true(rf.logloss < ro.logloss);
    eo_sim_destroy(sim);
    eo_pool_destroy(online);
    eo_fit_destroy(f);
}

/* ---- the smoother ---- */

static eo_pool_config trueskill_with(double tau, double draw_probability)
{
    eo_pool_config pc = pool_of(EO_MODEL_TRUESKILL);
    assert_int_equal(eo_model_config_set_number(&pc.model, "tau", tau, NULL), 0);
    assert_int_equal(eo_model_config_set_number(&pc.model, "draw_probability", draw_probability,
                                                NULL),
                     0);
    return pc;
}

/* A Gaussian in natural parameters: precision p, precision × mean t. */
typedef struct nat {
    double p, t;
} nat;

static nat nat_of(double mean, double var)
{
    return (nat){1.0 / var, mean / var};
}

static nat times(nat a, nat b)
{
    return (nat){a.p + b.p, a.t + b.t};
}

static nat plus_var(nat a, double var) /* a flat message stays flat */
{
    return a.p > 0.0 ? nat_of(a.t / a.p, 1.0 / a.p + var) : a;
}

/* TrueSkill's 1v1 update without draw margin and without τ (Herbrich, Minka, Graepel 2006),
 * written from the paper with libm: the winner's and the loser's cavities in, their messages
 * (posterior ÷ cavity) out. */
static void ts_1v1(double beta, nat win, nat lose, nat *mw, nat *ml)
{
    double mu_w = win.t / win.p, v_w = 1.0 / win.p, mu_l = lose.t / lose.p, v_l = 1.0 / lose.p;
    double c2 = v_w + v_l + 2.0 * beta * beta, c = sqrt(c2), t = (mu_w - mu_l) / c;
    double pdf = exp(-0.5 * t * t) / sqrt(2.0 * 3.141592653589793);
    double cdf = 0.5 * erfc(-t / sqrt(2.0));
    double v = pdf / cdf, w = v * (v + t);
    nat pw = nat_of(mu_w + v_w / c * v, v_w * (1.0 - v_w / c2 * w));
    nat pl = nat_of(mu_l - v_l / c * v, v_l * (1.0 - v_l / c2 * w));
    *mw = (nat){pw.p - win.p, pw.t - win.t};
    *ml = (nat){pl.p - lose.p, pl.t - lose.t};
}

/* The smoother's fixed point on the smallest case with a chain: x beats y, then y beats x,
 * TrueSkill without draws, τ = 1. Each player's chain is prior → +τ² → round 1 → +τ² →
 * round 2. The same expectation propagation is computed here independently, with another
 * schedule (all four messages updated at once from the last ones, until nothing moves), from
 * the paper's formulas: both must end at the same marginals. */
static void smooth_two_rounds(void **state)
{
    (void)state;
    const double tau = 1.0, mu0 = 25.0, s0 = 25.0 / 3.0, beta = 25.0 / 6.0;
    nat msg[2][2] = {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}}; /* [x, y][round] */
    nat start = plus_var(nat_of(mu0, s0 * s0), tau * tau);
    double moved = 1.0;
    int it = 0;
    for (; it < 1000 && moved > 1e-14; it++) {
        nat cav[2][2];
        for (int p = 0; p < 2; p++) {
            cav[p][0] = times(start, plus_var(msg[p][1], tau * tau));
            cav[p][1] = plus_var(times(start, msg[p][0]), tau * tau);
        }
        nat next[2][2];
        ts_1v1(beta, cav[0][0], cav[1][0], &next[0][0], &next[1][0]); /* x won round 1 */
        ts_1v1(beta, cav[1][1], cav[0][1], &next[1][1], &next[0][1]); /* y won round 2 */
        moved = 0.0;
        for (int p = 0; p < 2; p++)
            for (int k = 0; k < 2; k++) {
                moved = fmax(moved, fabs(next[p][k].t - msg[p][k].t));
                moved = fmax(moved, fabs(next[p][k].p - msg[p][k].p));
                msg[p][k] = next[p][k];
            }
    }
    assert_true(moved <= 1e-14);
    /* The marginal at each player's last round: the forward message there times round 2's. */
    nat last[2];
    for (int p = 0; p < 2; p++)
        last[p] = times(plus_var(times(start, msg[p][0]), tau * tau), msg[p][1]);

    eo_pool_config pc = trueskill_with(tau, 0.0);
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    assert_int_equal(fc.method, EO_FIT_SMOOTH);
    fc.tol = 1e-13;
    fc.max_sweeps = 200;
    eo_fit *f = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    const char *x[] = {"x"}, *y[] = {"y"};
    add(f, x, 1, y, 1, NULL, EO_WIN_A);
    add(f, x, 1, y, 1, NULL, EO_WIN_B);
    eo_fit_sweep_stats st;
    assert_int_equal(eo_fit_run(f, &st), 0);
    assert_true(st.converged);
    assert_true(st.sweep > 2); /* the backward messages changed the first round's cavities */
    assert_int_equal(st.passes, 2);
    print_message("independent: %d iterations; smoother: %u sweeps\n", it, st.sweep);
    const char *ids[] = {"x", "y"};
    for (int p = 0; p < 2; p++) {
        eo_fit_player fp;
        assert_int_equal(eo_fit_lookup(f, ids[p], &fp), 0);
        print_message("%s: smoother %.12f ± %.12f, independent %.12f ± %.12f\n", ids[p],
                      fp.skill, fp.sigma, last[p].t / last[p].p, sqrt(1.0 / last[p].p));
        assert_near(fp.skill, last[p].t / last[p].p, 1e-9);
        assert_near(fp.sigma, sqrt(1.0 / last[p].p), 1e-9);
        assert_int_equal(fp.rounds, 2);
    }
    /* y won the last round: he ends above x. */
    assert_true(skill_of(f, "y") > skill_of(f, "x"));
    /* Frozen prediction: the model's own P from the marginals. */
    eo_member ma, mb;
    memset(&ma, 0, sizeof ma);
    memset(&mb, 0, sizeof mb);
    ma.id = "x";
    mb.id = "y";
    eo_round r;
    memset(&r, 0, sizeof r);
    r.team[0] = &ma;
    r.team[1] = &mb;
    r.n[0] = r.n[1] = 1;
    r.winner = EO_WIN_A;
    double p_a, vx = 1.0 / last[0].p, vy = 1.0 / last[1].p;
    double d = last[0].t / last[0].p - last[1].t / last[1].p;
    assert_int_equal(eo_fit_predict(f, &r, &p_a), 0);
    assert_near(p_a, 0.5 * erfc(-d / sqrt(2.0 * (vx + vy + 2.0 * beta * beta))), 1e-12);
    eo_fit_destroy(f);
}

/* With one round per player nothing comes back along a chain: the smoothed state is the online
 * posterior, with τ = 0 and with the default τ (added once before the round, as online), with
 * partial play, a member of weight 0 and a draw. */
static void smooth_one_round_each(void **state)
{
    (void)state;
    const double taus[] = {0.0, 25.0 / 300.0};
    for (size_t k = 0; k < 2; k++) {
        eo_pool_config pc = trueskill_with(taus[k], 0.1);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
        eo_fit *f = NULL;
        eo_pool *online = NULL;
        assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
        assert_int_equal(eo_pool_create(&pc, &online), 0);
        const char *a1[] = {"a1", "a2"}, *b1[] = {"b1", "b2", "b3"};
        const char *a2[] = {"c1"}, *b2[] = {"d1", "d2"};
        const char *a3[] = {"e1", "e2"}, *b3[] = {"f1", "f2"};
        const double w1[] = {1.0, 0.5, 0.25}, w2[] = {0.0, 1.0};
        add_both(f, online, a1, 2, b1, 3, w1, EO_WIN_A);
        add_both(f, online, a2, 1, b2, 2, w2, EO_WIN_B);
        add_both(f, online, a3, 2, b3, 2, NULL, EO_DRAW);
        eo_fit_sweep_stats st;
        assert_int_equal(eo_fit_run(f, &st), 0);
        assert_true(st.converged);
        assert_int_equal(st.sweep, 2); /* the second sweep finds nothing to change */
        assert_int_equal(eo_fit_player_count(f), 12);
        for (size_t i = 0; i < eo_fit_player_count(f); i++) {
            eo_fit_player fp;
            eo_rating_view v;
            assert_int_equal(eo_fit_player_get(f, i, &fp), 0);
            assert_int_equal(eo_pool_lookup(online, fp.id, 0, &v), 0);
            assert_near(fp.skill, v.mu, 1e-12);
            assert_near(fp.sigma, v.sigma, 1e-12);
            assert_int_equal(fp.rounds, v.rounds);
        }
        /* d1 had weight 0: the prior, untouched. */
        eo_fit_player d1;
        assert_int_equal(eo_fit_lookup(f, "d1", &d1), 0);
        assert_near(d1.skill, 25.0, 0);
        assert_near(d1.sigma, 25.0 / 3.0, 0);
        eo_pool_destroy(online);
        eo_fit_destroy(f);
    }
}

/* The first sweep's forward pass is online rating (the backward messages are still flat): the
 * players of the last round, whose chains end there, leave the first sweep with the online
 * model's states; the others do not (later rounds' messages came back to them). Both models,
 * a τ large enough to matter. */
static void smooth_first_sweep_is_online(void **state)
{
    (void)state;
    const eo_model models[] = {EO_MODEL_TRUESKILL, EO_MODEL_WENGLIN};
    for (size_t k = 0; k < 2; k++) {
        eo_pool_config pc = pool_of(models[k]);
        assert_int_equal(eo_model_config_set_number(&pc.model, "tau", 0.5, NULL), 0);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
        eo_fit *f = NULL;
        eo_pool *online = NULL;
        assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
        assert_int_equal(eo_pool_create(&pc, &online), 0);
        int last[8];
        random_rounds_into(f, NULL, online, 300, 3, last);
        eo_fit_sweep_stats st;
        assert_int_equal(eo_fit_sweep(f, &st), 0);
        assert_int_equal(st.sweep, 1);
        assert_false(st.converged);
        bool in_last[40] = {false};
        for (int i = 0; i < 8; i++)
            in_last[last[i]] = true;
        int differ = 0;
        for (int i = 0; i < 40; i++) {
            char id[8];
            snprintf(id, sizeof id, "p%02d", i);
            eo_fit_player fp;
            eo_rating_view v;
            assert_int_equal(eo_fit_lookup(f, id, &fp), 0);
            assert_int_equal(eo_pool_lookup(online, id, 0, &v), 0);
            if (in_last[i]) {
                assert_near(fp.skill, v.mu, 1e-9);
                assert_near(fp.sigma, v.sigma, 1e-9);
            } else {
                differ += fabs(fp.skill - v.mu) > 1e-6;
            }
        }
        assert_true(differ > 16);
        eo_pool_destroy(online);
        eo_fit_destroy(f);
    }
}

/* Both models converge (no marginal mean moves by tol), a further sweep stays below tol, and the
 * strongest player ends above the weakest; the smoothed deviations are below the prior's. */
static void smooth_converges(void **state)
{
    (void)state;
    const eo_model models[] = {EO_MODEL_TRUESKILL, EO_MODEL_WENGLIN};
    for (size_t k = 0; k < 2; k++) {
        eo_pool_config pc = pool_of(models[k]);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
        eo_fit *f = NULL;
        assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
        random_rounds(f, NULL, 400, 7);
        eo_fit_sweep_stats st;
        double first = 0.0;
        for (int i = 0; i < 100; i++) {
            assert_int_equal(eo_fit_sweep(f, &st), 0);
            assert_true(isfinite(st.objective) && isfinite(st.logloss) && st.logloss > 0.0);
            if (i == 0)
                first = st.max_change;
            if (st.converged)
                break;
        }
        assert_true(st.converged);
        assert_true(st.max_change < fc.tol && first > 100 * fc.tol);
        print_message("%s: %u sweeps, training log loss %.4f\n", eo_model_name(models[k]),
                      st.sweep, st.logloss);
        assert_int_equal(eo_fit_sweep(f, &st), 0);
        assert_true(st.max_change < fc.tol);
        assert_true(skill_of(f, "p39") > skill_of(f, "p20"));
        assert_true(skill_of(f, "p20") > skill_of(f, "p00"));
        for (size_t i = 0; i < eo_fit_player_count(f); i++) {
            eo_fit_player p;
            assert_int_equal(eo_fit_player_get(f, i, &p), 0);
            assert_true(p.sigma > 0.0 && p.sigma < fc.prior_sd);
        }
        eo_fit_destroy(f);
    }
}

/* Rounds added after sweeps are taken in: the next sweeps converge to what a fit of all the
 * rounds at once gives (within what the MAP fit of the biases leaves, ~1e-6). With a map bias,
 * the biases are the MAP fit's. */
static void smooth_more_rounds(void **state)
{
    (void)state;
    eo_pool_config pc = pool_of(EO_MODEL_TRUESKILL);
    pc.bias.by = EO_BIAS_MAP;
    pc.bias.prior = EO_BIAS_PRIOR_DEFAULT;
    pc.bias.strength = 1.0;
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    fc.tol = 1e-10;
    fc.max_sweeps = 1000;
    eo_fit *f = NULL, *g = NULL, *map = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    assert_int_equal(eo_fit_create(&pc, &fc, &g), 0);
    eo_fit_config mc = fc;
    mc.method = EO_FIT_MAP;
    assert_int_equal(eo_fit_create(&pc, &mc, &map), 0);
    const char *a[] = {"a", "b"}, *b[] = {"c", "d"};
    eo_member ma[2], mb[2];
    memset(ma, 0, sizeof ma);
    memset(mb, 0, sizeof mb);
    for (int i = 0; i < 40; i++) {
        eo_round r;
        memset(&r, 0, sizeof r);
        for (int j = 0; j < 2; j++) {
            ma[j].id = (char *)a[(i + j) % 2];
            mb[j].id = (char *)b[(i / 2 + j) % 2];
        }
        /* A wins 3 of 4 on "m1", 1 of 2 on "m2" */
        r.team[0] = ma;
        r.team[1] = mb;
        r.n[0] = r.n[1] = 2;
        r.map = i % 2 ? "m1" : "m2";
        r.winner = i % 2 ? (i % 8 == 7 ? EO_WIN_B : EO_WIN_A) : (i % 4 ? EO_WIN_A : EO_WIN_B);
        if (i < 20)
            assert_int_equal(eo_fit_add_round(f, &r), 0);
        assert_int_equal(eo_fit_add_round(g, &r), 0);
        assert_int_equal(eo_fit_add_round(map, &r), 0);
        if (i == 19) {
            eo_fit_sweep_stats st;
            assert_int_equal(eo_fit_run(f, &st), 0);
            assert_true(st.converged);
        }
    }
    /* the remaining 20 rounds into f */
    eo_fit_sweep_stats sf, sg, sm;
    assert_int_equal(eo_fit_run(g, &sg), 0);
    assert_int_equal(eo_fit_run(map, &sm), 0);
    for (int i = 20; i < 40; i++) {
        eo_round r;
        memset(&r, 0, sizeof r);
        for (int j = 0; j < 2; j++) {
            ma[j].id = (char *)a[(i + j) % 2];
            mb[j].id = (char *)b[(i / 2 + j) % 2];
        }
        r.team[0] = ma;
        r.team[1] = mb;
        r.n[0] = r.n[1] = 2;
        r.map = i % 2 ? "m1" : "m2";
        r.winner = i % 2 ? (i % 8 == 7 ? EO_WIN_B : EO_WIN_A) : (i % 4 ? EO_WIN_A : EO_WIN_B);
        assert_int_equal(eo_fit_add_round(f, &r), 0);
    }
    assert_int_equal(eo_fit_run(f, &sf), 0);
    assert_true(sf.converged && sg.converged && sm.converged);
    for (size_t i = 0; i < eo_fit_player_count(g); i++) {
        eo_fit_player p, q;
        assert_int_equal(eo_fit_player_get(g, i, &p), 0);
        assert_int_equal(eo_fit_lookup(f, p.id, &q), 0);
        assert_near(p.skill, q.skill, 1e-5);
        assert_near(p.sigma, q.sigma, 1e-5);
    }
    assert_int_equal(eo_fit_bias_count(g), 2);
    for (size_t k = 0; k < 2; k++) {
        eo_bias_key kg, km;
        double bg, bm, bf;
        assert_int_equal(eo_fit_bias_get(g, k, &kg, &bg), 0);
        assert_int_equal(eo_fit_bias_get(map, k, &km, &bm), 0);
        assert_int_equal(eo_fit_bias_get(f, k, NULL, &bf), 0);
        assert_string_equal(kg.map, km.map);
        assert_near(bg, bm, 1e-6);
        assert_near(bg, bf, 1e-6);
        if (strcmp(kg.map, "m1") == 0)
            assert_true(bg > 0.5); /* μ units: A won 3 of 4 there */
    }
    eo_fit_destroy(f);
    eo_fit_destroy(g);
    eo_fit_destroy(map);
}

/* The test for the smoother: a world whose true skills drift (a random walk every
 * round), 200 players, random 6v6 teams; the first 3200 rounds fitted, the last 800 held out.
 * The smoothed states at each player's last round must rank the players' true skills at that
 * point better than online TrueSkill after the same rounds, and predict the held-out rounds
 * better than online frozen there and than the static MAP fit. */
static void smooth_beats_online_with_drift(void **state)
{
    (void)state;
    eo_sim_config sc;
    eo_sim_config_default(&sc);
    sc.seed = 5;
    sc.players = 200;
    sc.team_min = sc.team_max = 6;
    sc.drift = 1.0;
    sc.balancer = EO_SIM_BAL_RANDOM;
    eo_pool_config pc = pool_of(EO_MODEL_TRUESKILL);
    assert_int_equal(eo_model_config_set_number(&pc.model, "tau", 0.2, NULL), 0);
    eo_fit_config fc, mc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
    mc = fc;
    mc.method = EO_FIT_MAP;
    eo_fit *f = NULL, *map = NULL;
    eo_pool *online = NULL;
    assert_int_equal(eo_fit_create(&pc, &fc, &f), 0);
    assert_int_equal(eo_fit_create(&pc, &mc, &map), 0);
    assert_int_equal(eo_pool_create(&pc, &online), 0);

    enum { TOTAL = 4000, TRAIN = 3200 };
    eo_sim *sim = NULL;
    assert_int_equal(eo_sim_create(&sc, &pc, &sim), 0);
    for (int i = 0; i < TRAIN; i++) {
        eo_sim_round sr;
        assert_int_equal(eo_sim_step(sim, &sr), 0);
        assert_int_equal(eo_fit_add_round(f, sr.round), 0);
        assert_int_equal(eo_fit_add_round(map, sr.round), 0);
        assert_int_equal(eo_pool_apply(online, sr.round, NULL, NULL), 0);
    }
    eo_fit_sweep_stats st, sm;
    assert_int_equal(eo_fit_run(f, &st), 0);
    assert_true(st.converged);
    assert_int_equal(eo_fit_run(map, &sm), 0);

    double rho_fit, rho_online;
    size_t k = spearman_pair(sim, f, online, &rho_fit, &rho_online);
    print_message("spearman with the drifted truth: smoothed %.4f, online %.4f over %zu players "
                  "(%u sweeps)\n", rho_fit, rho_online, k, st.sweep);
    assert_true(rho_fit > rho_online);

    eo_metrics ms, mm, mo;
    eo_metrics_init(&ms);
    eo_metrics_init(&mm);
    eo_metrics_init(&mo);
    for (int i = TRAIN; i < TOTAL; i++) {
        eo_sim_round sr;
        assert_int_equal(eo_sim_step(sim, &sr), 0);
        if (sr.round->winner == EO_DRAW)
            continue;
        double ps, pm, po;
        assert_int_equal(eo_fit_predict(f, sr.round, &ps), 0);
        assert_int_equal(eo_fit_predict(map, sr.round, &pm), 0);
        assert_int_equal(eo_pool_predict(online, sr.round, &po), 0);
        eo_metrics_add(&ms, ps, sr.round->winner == EO_WIN_A);
        eo_metrics_add(&mm, pm, sr.round->winner == EO_WIN_A);
        eo_metrics_add(&mo, po, sr.round->winner == EO_WIN_A);
    }
    eo_metrics_result rs, rm, ro;
    eo_metrics_get(&ms, &rs);
    eo_metrics_get(&mm, &rm);
    eo_metrics_get(&mo, &ro);
    print_message("held-out log loss: smoothed %.5f, static %.5f, online frozen %.5f (%llu "
                  "rounds)\n", rs.logloss, rm.logloss, ro.logloss, (unsigned long long)rs.count);
    assert_true(rs.logloss < ro.logloss);
    assert_true(rs.logloss < rm.logloss);
    eo_sim_destroy(sim);
    eo_pool_destroy(online);
    eo_fit_destroy(f);
    eo_fit_destroy(map);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_computed), cmocka_unit_test(converges),
        cmocka_unit_test(side_swap),     cmocka_unit_test(weight_zero),
        cmocka_unit_test(errors),        cmocka_unit_test(beats_online),
        cmocka_unit_test(smooth_two_rounds),
        cmocka_unit_test(smooth_one_round_each),
        cmocka_unit_test(smooth_first_sweep_is_online),
        cmocka_unit_test(smooth_converges),
        cmocka_unit_test(smooth_more_rounds),
        cmocka_unit_test(smooth_beats_online_with_drift),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
