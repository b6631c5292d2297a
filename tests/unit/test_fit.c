/* Whole-history refit (eo_fit.h): one Newton step and the optimum by hand, monotone
 * convergence, invariances, and the test on a simulated world (the refit ranks players
 * and predicts held-out rounds better than online ratings). */
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

/* A round of ids a[0..na) against b[0..nb); weights of b given by wb (NULL: 1). */
static void add(eo_fit *f, const char *const *a, size_t na, const char *const *b, size_t nb,
                const double *wb, eo_winner w)
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

static void random_rounds(eo_fit *f, eo_fit *mirror, int rounds, uint64_t seed)
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
        add(f, a, 4, b, 4, NULL, w);
        if (mirror != NULL)
            add(mirror, b, 4, a, 4, NULL, w == EO_DRAW ? EO_DRAW : w == EO_WIN_A ? EO_WIN_B
                                                                                 : EO_WIN_A);
    }
}

/* The objective never falls, and the sweeps stop converged, for every model. */
static void converges(void **state)
{
    (void)state;
    for (int m = 0; m < EO_MODEL_COUNT; m++) {
        eo_pool_config pc = pool_of((eo_model)m);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
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

/* Swapping the sides with the outcomes flipped gives the same skills. */
static void side_swap(void **state)
{
    (void)state;
    const eo_model models[] = {EO_MODEL_ELO, EO_MODEL_TRUESKILL, EO_MODEL_HIVE};
    for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
        eo_pool_config pc = pool_of(models[m]);
        eo_fit_config fc;
        assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
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
        }
        eo_fit_destroy(f);
        eo_fit_destroy(g);
    }
}

/* A member of weight 0 in every round learns nothing: it stays at the prior's mean. */
static void weight_zero(void **state)
{
    (void)state;
    eo_pool_config pc = pool_of(EO_MODEL_TRUESKILL);
    eo_fit_config fc;
    assert_int_equal(eo_fit_config_default(&pc, &fc), 0);
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

    size_t n = eo_sim_player_count(sim);
    double *truth = calloc(n, sizeof *truth), *fit = calloc(n, sizeof *fit),
           *onl = calloc(n, sizeof *onl);
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
    double rho_fit, rho_online;
    assert_int_equal(eo_sim_spearman(truth, fit, k, &rho_fit), 0);
    assert_int_equal(eo_sim_spearman(truth, onl, k, &rho_online), 0);
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
    free(truth);
    free(fit);
    free(onl);
    eo_sim_destroy(sim);
    eo_pool_destroy(online);
    eo_fit_destroy(f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hand_computed), cmocka_unit_test(converges),
        cmocka_unit_test(side_swap),     cmocka_unit_test(weight_zero),
        cmocka_unit_test(errors),        cmocka_unit_test(beats_online),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
