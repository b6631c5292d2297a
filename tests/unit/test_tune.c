/* Tuning a pool's parameters (eo_tune.h): the figures of a configuration are those of a plain
 * fold of the rounds; the search improves a bad start and is deterministic; the gate keeps the
 * start when the gain is within the noise; the check puts back a knob that does nothing; the
 * default knobs follow the model, its options and the log; bad knobs are refused by name. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_tune.h"
#include "gen.h"

/* Rounds of a generated world, owned: 80 players, @p team_min..@p team_max a side, 3 %
 * stalemates, @p partial ‰ of members part-time. */
typedef struct world {
    eo_round r[1200];
    size_t n;
} world;

static world *make_world(size_t n, uint32_t team_min, uint32_t team_max, uint32_t partial)
{
    world *w = calloc(1, sizeof *w);
    assert_non_null(w);
    assert_true(n <= sizeof w->r / sizeof w->r[0]);
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.seed = 7;
    c.players = 80;
    c.team_min = team_min;
    c.team_max = team_max;
    c.draw_permille = 30;
    c.partial_permille = partial;
    eo_gen *g = NULL;
    assert_int_equal(eo_gen_create(&c, &g), 0);
    static char line[16384];
    for (size_t i = 0; i < n; i++) {
        eo_round r;
        eo_gen_next(g, &r);
        int len = eo_gen_jsonl(&r, line, sizeof line);
        assert_true(len > 0);
        eo_round_error err;
        assert_int_equal(eo_round_from_text(line, (size_t)len, &w->r[i], &err), 0);
    }
    w->n = n;
    eo_gen_destroy(g);
    return w;
}

static void free_world(world *w)
{
    for (size_t i = 0; i < w->n; i++)
        eo_round_free(&w->r[i]);
    free(w);
}

static eo_pool_config config_of(eo_model m)
{
    eo_pool_config c;
    eo_pool_config_default(&c);
    assert_int_equal(eo_model_config_default(m, &c.model), 0);
    return c;
}

static void set(eo_pool_config *c, const char *name, const char *value)
{
    eo_round_error err;
    assert_int_equal(eo_model_config_set(&c->model, name, value, &err), 0);
    assert_int_equal(eo_model_config_check(&c->model, &err), 0);
}

/* Runs a search to its end into @p out. */
static void run(const eo_pool_config *start, const eo_tune_config *tc, const world *w,
                size_t train_from, size_t held_from, eo_tune_result *out)
{
    eo_tune *t = NULL;
    eo_round_error err;
    assert_int_equal(eo_tune_create(start, tc, w->r, w->n, train_from, held_from, &t, &err), 0);
    eo_tune_progress p;
    assert_int_equal(eo_tune_get(t, out), EO_EINVAL); /* not done yet */
    do
        assert_int_equal(eo_tune_step(t, &p), 0);
    while (!p.done);
    assert_int_equal(eo_tune_step(t, &p), 0); /* done stays done */
    assert_true(p.done);
    assert_int_equal(eo_tune_get(t, out), 0);
    eo_tune_destroy(t);
}

/* The figures of @p c over @p w by a plain fold: held-out log loss from @p held_from on. */
static eo_metrics_result fold_held(const eo_pool_config *c, const world *w, size_t held_from)
{
    eo_pool *pool = NULL;
    assert_int_equal(eo_pool_create(c, &pool), 0);
    eo_metrics m;
    eo_metrics_init(&m);
    for (size_t i = 0; i < w->n; i++) {
        eo_round_result res;
        assert_int_equal(eo_pool_apply(pool, &w->r[i], &res, NULL), 0);
        if (i >= held_from && w->r[i].winner != EO_DRAW)
            eo_metrics_add(&m, res.p_a, w->r[i].winner == EO_WIN_A);
    }
    eo_pool_destroy(pool);
    eo_metrics_result r;
    eo_metrics_get(&m, &r);
    return r;
}

/* Elo started with a K far too small: the search raises it, lowers the training and the
 * held-out log loss, passes the gate, stays within its budget, and gives the same bits twice;
 * the start's and the answer's held-out figures are those of plain folds. */
static void improves_a_bad_start(void **state)
{
    (void)state;
    world *w = make_world(1200, 4, 4, 0);
    eo_pool_config start = config_of(EO_MODEL_ELO);
    set(&start, "k", "1");
    set(&start, "k_new", "1");
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    tc.budget = 30;
    eo_tune_result a, b;
    run(&start, &tc, w, 120, 600, &a);
    run(&start, &tc, w, 120, 600, &b);
    assert_memory_equal(eo_tune_chosen(&a), eo_tune_chosen(&b), sizeof(eo_pool_config));
    assert_true(a.best.held.logloss == b.best.held.logloss);
    assert_true(a.folds <= 30 + 2);
    assert_true(a.chose_best);
    assert_true(a.best.train.logloss < a.start.train.logloss);
    assert_true(a.best.held.logloss < a.start.held.logloss);
    assert_true(a.gain > a.threshold && a.threshold == a.start.held_logloss_se);
    double k = 0, k_new = 0;
    assert_int_equal(eo_tune_knob_get(&a.best.cfg, "k", &k), 0);
    assert_int_equal(eo_tune_knob_get(&a.best.cfg, "k_new", &k_new), 0);
    assert_true(k > 1.0 || k_new > 1.0);
    eo_metrics_result fs = fold_held(&a.start.cfg, w, 600), fb = fold_held(&a.best.cfg, w, 600);
    assert_true(fs.logloss == a.start.held.logloss && fs.count == a.start.held.count);
    assert_true(fb.logloss == a.best.held.logloss);
    assert_true(fabs(a.held.logloss_diff - (fb.logloss - fs.logloss)) < 1e-12);
    assert_true(a.held.logloss_se > 0.0);
    free_world(w);
}

/* A gate of 100 standard errors keeps the start; the answer is then the start itself. */
static void gate_keeps_the_start(void **state)
{
    (void)state;
    world *w = make_world(600, 4, 4, 0);
    eo_pool_config start = config_of(EO_MODEL_ELO);
    set(&start, "k", "1");
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    tc.budget = 10;
    tc.gate = 100;
    eo_tune_result r;
    run(&start, &tc, w, 60, 300, &r);
    assert_false(r.chose_best);
    assert_memory_equal(eo_tune_chosen(&r), &r.start.cfg, sizeof(eo_pool_config));
    free_world(w);
}

/* TrueSkill's start mean does nothing with equal teams and no partial play (every team sum
 * moves by the same amount): whatever the descent did with it, the check puts it back. */
static void check_puts_back_a_knob_that_does_nothing(void **state)
{
    (void)state;
    world *w = make_world(600, 3, 3, 0);
    eo_pool_config start = config_of(EO_MODEL_TRUESKILL);
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    tc.budget = 20;
    tc.nknobs = 2;
    tc.knobs[0] = "mu";
    tc.knobs[1] = "beta";
    eo_tune_result r;
    run(&start, &tc, w, 60, 300, &r);
    double mu0 = 0, mu = 1;
    assert_int_equal(eo_tune_knob_get(&r.start.cfg, "mu", &mu0), 0);
    assert_int_equal(eo_tune_knob_get(&r.best.cfg, "mu", &mu), 0);
    assert_true(mu == mu0);
    free_world(w);
}

/* The table's reason for leaving the start level out with presence on, checked against the
 * models: on a log of partial play and unequal teams, TrueSkill's and Weng-Lin's mu and Elo's
 * r0 (team=sum) move the held-out log loss with presence off, and with it on leave it as it
 * was but for rounding. */
static void start_level_cancels_with_presence(void **state)
{
    (void)state;
    world *w = make_world(400, 2, 4, 300);
    static const struct {
        eo_model m;
        const char *name, *value;
    } cases[] = {
        {EO_MODEL_TRUESKILL, "mu", "40"},
        {EO_MODEL_WENGLIN, "mu", "40"},
        {EO_MODEL_ELO, "r0", "1800"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int on = 0; on < 2; on++) {
            eo_pool_config a = config_of(cases[i].m);
            if (cases[i].m == EO_MODEL_ELO)
                set(&a, "team", "sum");
            a.presence.on = on;
            eo_pool_config b = a;
            set(&b, cases[i].name, cases[i].value);
            double la = fold_held(&a, w, 200).logloss, lb = fold_held(&b, w, 200).logloss;
            bool same = fabs(la - lb) <= 1e-9 * la;
            if (same != (bool)on)
                fail_msg("%s %s=%s, presence %s: held out %.12g against %.12g",
                         eo_model_name(cases[i].m), cases[i].name, cases[i].value,
                         on ? "on" : "off", lb, la);
        }
    }
    free_world(w);
}

static void expect_knobs(const eo_pool_config *c, const world *w, const char *want)
{
    const char *names[EO_TUNE_KNOBS_MAX];
    size_t n = eo_tune_default_knobs(c, w->r, w->n, names, EO_TUNE_KNOBS_MAX);
    char got[200] = "";
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        len += (size_t)snprintf(got + len, sizeof got - len, "%s%s", i ? "," : "", names[i]);
    if (strcmp(got, want) != 0)
        fail_msg("knobs %s, expected %s", got, want);
}

/* The default knobs: the model's, with the ones that need an option or the log only then. */
static void default_knobs(void **state)
{
    (void)state;
    world *even = make_world(50, 3, 3, 0), *uneven = make_world(50, 3, 3, 0);
    world *partial = make_world(50, 3, 3, 300);
    uneven->r[9].n[1]--; /* one round of 3 against 2 (put back before the rounds are freed) */
    eo_pool_config c = config_of(EO_MODEL_TRUESKILL);
    expect_knobs(&c, even, "beta,tau,draw_probability");
    expect_knobs(&c, uneven, "beta,tau,draw_probability,mu");
    expect_knobs(&c, partial, "beta,tau,draw_probability,mu");
    c = config_of(EO_MODEL_WENGLIN);
    expect_knobs(&c, even, "beta,tau");
    expect_knobs(&c, uneven, "beta,tau,mu");
    c = config_of(EO_MODEL_ELO);
    expect_knobs(&c, uneven, "k,k_new");
    set(&c, "team", "sum");
    expect_knobs(&c, uneven, "k,k_new,r0");
    expect_knobs(&c, even, "k,k_new");
    /* Presence on: strengths are relative to the start level (mu, r0 cancel), and presence's
     * knobs are searched where some round's presences differ. */
    c.presence.on = true;
    expect_knobs(&c, uneven, "k,k_new,presence_strength,presence_prior");
    expect_knobs(&c, even, "k,k_new");
    c = config_of(EO_MODEL_TRUESKILL);
    c.presence.on = true;
    expect_knobs(&c, uneven, "beta,tau,draw_probability,presence_strength,presence_prior");
    expect_knobs(&c, partial, "beta,tau,draw_probability,presence_strength,presence_prior");
    expect_knobs(&c, even, "beta,tau,draw_probability");
    assert_int_equal(eo_pool_config_new(EO_MODEL_WENGLIN, &c), 0);
    expect_knobs(&c, uneven, "beta,tau,bias_strength,bias_prior,presence_strength,presence_prior");
    c = config_of(EO_MODEL_GLICKO2);
    expect_knobs(&c, even, "rd0,vol0,rd_max");
    c = config_of(EO_MODEL_HIVE);
    expect_knobs(&c, even, "alpha");
    even->r[7].team[0][0].commander = true;
    expect_knobs(&c, even, "alpha,alpha_commander");
    c = config_of(EO_MODEL_SYNELO);
    eo_round_error err;
    assert_int_equal(eo_bias_config_set(&c.bias, "bias", "map", &err), 0);
    expect_knobs(&c, even, "theta,k_max,k_min,sigma,bias_strength,bias_prior");
    double x = 0;
    assert_int_equal(eo_tune_knob_get(&c, "bias_prior", &x), 0);
    assert_true(x == EO_BIAS_PRIOR_DEFAULT);
    c.presence.on = true;
    c.presence.prior = 7;
    assert_int_equal(eo_tune_knob_get(&c, "presence_prior", &x), 0);
    assert_true(x == 7);
    assert_int_equal(eo_tune_knob_get(&c, "nope", &x), EO_ENOTFOUND);
    uneven->r[9].n[1]++;
    free_world(even);
    free_world(uneven);
    free_world(partial);
}

static void expect_refused(const eo_pool_config *c, const world *w, const char *k1, const char *k2,
                           size_t train, size_t held, const char *field, const char *says)
{
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    tc.knobs[0] = k1;
    tc.knobs[1] = k2;
    tc.nknobs = k1 == NULL ? 0 : k2 == NULL ? 1 : 2;
    eo_tune *t = (eo_tune *)1;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_tune_create(c, &tc, w->r, w->n, train, held, &t, &err), EO_EINVAL);
    assert_null(t);
    assert_string_equal(err.field, field);
    if (strstr(err.message, says) == NULL)
        fail_msg("%s: %s, expected %s", err.field, err.message, says);
    if (strcmp(field, "tune") == 0) {
        memset(&err, 0, sizeof err);
        assert_int_equal(eo_tune_check(c, &tc, &err), EO_EINVAL);
        assert_non_null(strstr(err.message, says));
    }
}

/* Knobs that cannot be searched and cuts without rounds to score are refused by name. */
static void refusals(void **state)
{
    (void)state;
    world *w = make_world(100, 3, 3, 0);
    eo_pool_config c = config_of(EO_MODEL_ELO);
    expect_refused(&c, w, "nope", NULL, 10, 50, "tune", "nope: not a parameter of model \"elo\"");
    expect_refused(&c, w, "k", "k", 10, 50, "tune", "k: given twice");
    expect_refused(&c, w, "team", NULL, 10, 50, "tune", "team: a choice");
    expect_refused(&c, w, "bias_prior", NULL, 10, 50, "tune", "the bias is off");
    expect_refused(&c, w, "presence_strength", NULL, 10, 50, "tune", "presence is off");
    expect_refused(&c, w, NULL, NULL, 10, 10, "rounds", "no decided round to train on");
    expect_refused(&c, w, NULL, NULL, 10, 100, "rounds", "no decided round held out");
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    eo_round_error err;
    assert_int_equal(eo_tune_check(&c, &tc, &err), 0);
    eo_tune *t = NULL;
    assert_int_equal(eo_tune_create(&c, &tc, w->r, w->n, 60, 50, &t, &err), EO_EINVAL);
    free_world(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(improves_a_bad_start),
        cmocka_unit_test(gate_keeps_the_start),
        cmocka_unit_test(check_puts_back_a_knob_that_does_nothing),
        cmocka_unit_test(start_level_cancels_with_presence),
        cmocka_unit_test(default_knobs),
        cmocka_unit_test(refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
