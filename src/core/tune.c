/* Tuning a pool's parameters on a round log: eo_tune.h, docs/EVAL.md "Tuning". */
#include "evenodds/eo_tune.h"

#include <math.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "core/round_internal.h" /* eo__fail */

/* ---- the knobs ---- */

/* What the log holds, for the knobs that only matter with it. */
typedef struct log_facts {
    bool commanders; /* a member commanded */
    bool uneven;     /* partial play, or teams of unequal size: a member's weight counts */
} log_facts;

typedef bool (*knob_when)(const eo_pool_config *c, const log_facts *f);

/* The start level counts: team strengths are sums of the members' ratings (not relative to
 * the start level, as with presence on: docs/MODELS.md "Presence") and some round's teams sum
 * different weights, so the level is what a member is worth against nobody. */
static bool level_counts(const eo_pool_config *c, const log_facts *f)
{
    return !c->presence.on && f->uneven;
}

static bool elo_level_counts(const eo_pool_config *c, const log_facts *f)
{
    int i = eo_model_param_index(EO_MODEL_ELO, "team");
    size_t n;
    const eo_param_spec *s = eo_model_params(EO_MODEL_ELO, &n);
    return i >= 0 && strcmp(s[i].choices[(size_t)c->model.v[i]], "sum") == 0 && level_counts(c, f);
}

static bool bias_on(const eo_pool_config *c, const log_facts *f)
{
    (void)f;
    return c->bias.by != EO_BIAS_OFF;
}

/* Presence is on and some round's teams sum different weights (Δ ≠ 0 somewhere: without it
 * the term is never applied and π never learnt). */
static bool presence_learns(const eo_pool_config *c, const log_facts *f)
{
    return c->presence.on && f->uneven;
}

static bool has_commanders(const eo_pool_config *c, const log_facts *f)
{
    (void)c;
    return f->commanders;
}

/* The table of default knobs: per model (EO_MODEL_COUNT: any model), in the order searched,
 * with the condition under which the knob does something (NULL: always). A knob that does
 * nothing on a log only spends folds, and one that matters and is missing leaves the defaults'
 * worst errors in place (docs/EVAL.md "Tuning" says why each is here). */
static const struct knob_row {
    eo_model model;
    const char *name;
    knob_when when;
} knob_table[] = {
    {EO_MODEL_SYNELO, "theta", NULL},
    {EO_MODEL_SYNELO, "k_max", NULL},
    {EO_MODEL_SYNELO, "k_min", NULL},
    {EO_MODEL_SYNELO, "sigma", NULL},
    {EO_MODEL_TRUESKILL, "beta", NULL},
    {EO_MODEL_TRUESKILL, "tau", NULL},
    {EO_MODEL_TRUESKILL, "draw_probability", NULL},
    {EO_MODEL_TRUESKILL, "mu", level_counts},
    {EO_MODEL_GLICKO2, "rd0", NULL},
    {EO_MODEL_GLICKO2, "vol0", NULL},
    {EO_MODEL_GLICKO2, "rd_max", NULL},
    {EO_MODEL_ELO, "k", NULL},
    {EO_MODEL_ELO, "k_new", NULL},
    {EO_MODEL_ELO, "r0", elo_level_counts},
    {EO_MODEL_WENGLIN, "beta", NULL},
    {EO_MODEL_WENGLIN, "tau", NULL},
    {EO_MODEL_WENGLIN, "mu", level_counts},
    {EO_MODEL_HIVE, "alpha", NULL},
    {EO_MODEL_HIVE, "alpha_commander", has_commanders},
    {EO_MODEL_COUNT, "bias_strength", bias_on},
    {EO_MODEL_COUNT, "bias_prior", bias_on},
    {EO_MODEL_COUNT, "presence_strength", presence_learns},
    {EO_MODEL_COUNT, "presence_prior", presence_learns},
};

/* The pool's own parameters a knob may be (beside the model's): the map bias's and presence's,
 * each with its bounds (eo_bias.h, eo_presence.h) and its place in the configuration. */
static const struct pool_param {
    eo_param_spec spec;
    bool presence; /* presence's (else the bias's) */
    size_t off;    /* of its double in eo_pool_config */
} pool_params[] = {
    {{"bias_prior", "the bias prior's weight in average plays", EO_BIAS_PRIOR_DEFAULT, 0, 1e6,
      false, NULL},
     false,
     offsetof(eo_pool_config, bias.prior)},
    {{"bias_strength", "share of the bias estimate applied", 1, 0, 1, false, NULL},
     false,
     offsetof(eo_pool_config, bias.strength)},
    {{"presence_prior", "the presence prior's weight in average rounds of unequal presence",
      EO_PRESENCE_PRIOR_DEFAULT, 0, 1e6, false, NULL},
     true,
     offsetof(eo_pool_config, presence.prior)},
    {{"presence_strength", "share of the presence estimate applied", 1, 0, 1, false, NULL},
     true,
     offsetof(eo_pool_config, presence.strength)},
};

static double pool_param_get(const struct pool_param *pp, const eo_pool_config *c)
{
    double x;
    memcpy(&x, (const char *)c + pp->off, sizeof x);
    return x;
}

#define NPOOL_PARAMS (sizeof pool_params / sizeof pool_params[0])

static log_facts facts_of(const eo_round *r, size_t n)
{
    log_facts f = {false, false};
    for (size_t i = 0; i < n; i++) {
        f.uneven |= r[i].n[0] != r[i].n[1];
        for (int t = 0; t < 2; t++) {
            for (size_t j = 0; j < r[i].n[t]; j++) {
                f.commanders |= r[i].team[t][j].commander;
                f.uneven |= eo_round_member_weight(&r[i], &r[i].team[t][j]) < 1.0;
            }
        }
    }
    return f;
}

size_t eo_tune_default_knobs(const eo_pool_config *cfg, const eo_round *r, size_t n,
                             const char **names, size_t cap)
{
    log_facts f = facts_of(r, n);
    size_t k = 0;
    for (size_t i = 0; i < sizeof knob_table / sizeof knob_table[0] && k < cap; i++) {
        const struct knob_row *row = &knob_table[i];
        if ((row->model == cfg->model.model || row->model == EO_MODEL_COUNT) &&
            (row->when == NULL || row->when(cfg, &f)))
            names[k++] = row->name;
    }
    return k;
}

/* One knob being searched. */
typedef struct knob {
    const char *name;
    int index; /* in the model's table, or -1 for a pool parameter */
    const struct pool_param *pp;
    const eo_param_spec *spec;
    double step; /* a factor > 1 (log steps) or an absolute step */
    bool log;    /* positive scale: multiplicative steps */
} knob;

static double knob_get(const knob *k, const eo_pool_config *c)
{
    return k->pp != NULL ? pool_param_get(k->pp, c) : c->model.v[k->index];
}

int eo_tune_knob_get(const eo_pool_config *cfg, const char *name, double *out)
{
    int i = eo_model_param_index(cfg->model.model, name);
    if (i >= 0) {
        *out = cfg->model.v[i];
        return 0;
    }
    for (size_t p = 0; p < NPOOL_PARAMS; p++) {
        if (strcmp(pool_params[p].spec.name, name) == 0) {
            *out = pool_param_get(&pool_params[p], cfg);
            return 0;
        }
    }
    return EO_ENOTFOUND;
}

/* Sets a knob in @p c and checks the whole; 0, or -1 when the model refuses the value with the
 * others (e.g. k_min above k_max). */
static int knob_set(const knob *k, eo_pool_config *c, double x)
{
    eo_round_error err;
    if (k->pp != NULL) {
        memcpy((char *)c + k->pp->off, &x, sizeof x);
        int rc = k->pp->presence ? eo_presence_config_check(&c->presence, &err)
                                 : eo_bias_config_check(&c->bias, &err);
        return rc == 0 ? 0 : -1;
    }
    if (eo_model_config_set_number(&c->model, k->spec->name, x, &err) != 0)
        return -1;
    return eo_model_config_check(&c->model, &err) == 0 ? 0 : -1;
}

/* Resolves @p name into @p kb for a start of @p c. 0, or EO_EINVAL with @p err. */
static int knob_make(const eo_pool_config *c, const char *name, knob *kb, eo_round_error *err)
{
    size_t n = 0;
    const eo_param_spec *spec = eo_model_params(c->model.model, &n);
    memset(kb, 0, sizeof *kb);
    kb->name = name;
    kb->index = eo_model_param_index(c->model.model, name);
    if (kb->index >= 0)
        kb->spec = &spec[kb->index];
    for (size_t p = 0; p < NPOOL_PARAMS && kb->spec == NULL; p++) {
        if (strcmp(pool_params[p].spec.name, name) == 0) {
            kb->pp = &pool_params[p];
            kb->spec = &pool_params[p].spec;
        }
    }
    if (kb->spec == NULL)
        return eo__fail(err, "tune", "%.40s: not a parameter of model \"%s\"", name,
                        eo_model_name(c->model.model));
    if (kb->pp != NULL && !kb->pp->presence && c->bias.by == EO_BIAS_OFF)
        return eo__fail(err, "tune", "%.40s: the bias is off (bias=map turns it on)", name);
    if (kb->pp != NULL && kb->pp->presence && !c->presence.on)
        return eo__fail(err, "tune", "%.40s: presence is off (presence=on turns it on)", name);
    if (kb->spec->choices != NULL || kb->spec->min == kb->spec->max)
        return eo__fail(err, "tune", "%.40s: a choice or fixed value cannot be searched; set it",
                        name);
    const eo_param_spec *s = kb->spec;
    double v = knob_get(kb, c);
    double range = s->max - s->min > 1e6 ? fabs(v) + 1 : s->max - s->min;
    kb->log = s->min >= 0 && v > 0;
    kb->step = kb->log ? 2.0 : fmax(0.25 * range, s->integer ? 1.0 : 1e-9);
    return 0;
}

/* A knob's value moved by its step (+1 up, -1 down), clamped and rounded as the spec asks. */
static double moved(const knob *k, double v, int dir)
{
    double x = k->log ? (dir > 0 ? v * k->step : v / k->step) : v + dir * k->step;
    x = fmin(fmax(x, k->spec->min), k->spec->max);
    if (k->spec->integer)
        x = dir > 0 ? ceil(x) : floor(x);
    return fmin(fmax(x, k->spec->min), k->spec->max);
}

/* The step is too small to try: the knob is settled. */
static bool settled(const knob *k, double v)
{
    if (k->log)
        return k->step < 1.02;
    return k->step < (k->spec->integer ? 1.0 : 1e-6 * (fabs(v) + 1));
}

static void shrink(knob *k)
{
    k->step = k->log ? sqrt(k->step) : (k->spec->integer ? floor(k->step / 2) : k->step / 2);
}

/* ---- the search ---- */

/* Objectives this close (relative) are equal: a knob that does nothing moves the sums only in
 * their last bits (TrueSkill's start mean with equal teams), which must not count as a gain. */
#define NOISE 1e-12

/* One fold's figures, and its P of each round from train_from on (in *p). */
typedef struct score {
    eo_metrics_result train, held;
    double objective;
} score;

struct eo_tune {
    eo_tune_config cfg;
    const eo_round *r;
    size_t n, train_from, held_from;
    knob k[EO_TUNE_KNOBS_MAX];
    size_t nk;
    eo_pool_config start, best, cand;
    score s_start, s_best;
    double *p_start, *p_best, *p_cand; /* P(A) of rounds train_from .. n-1 */
    uint32_t folds;
    double threshold; /* gate × the start's held-out standard error (the final gate) */
    enum { START, DESCENT, CHECK, DONE } phase;
    /* where the descent is: knob ki, the direction to try next (+1, -1; 0: the knob is
     * through), a fresh knob not yet looked at, and what this sweep and knob found */
    size_t ki;
    int dir;
    bool fresh, moving, improved;
    size_t ci; /* the check: the next knob to put back to its start value */
};

void eo_tune_config_default(eo_tune_config *c)
{
    memset(c, 0, sizeof *c);
    c->budget = 60;
    c->gate = 1.0;
}

/* Decided rounds in [from, to). */
static size_t decided(const eo_round *r, size_t from, size_t to)
{
    size_t k = 0;
    for (size_t i = from; i < to; i++)
        k += r[i].winner != EO_DRAW;
    return k;
}

/* The knobs @p names[0..n) for a start of @p c into @p k. 0, or EO_EINVAL with @p err. */
static int resolve_knobs(const eo_pool_config *c, const char *const *names, size_t n, knob *k,
                         eo_round_error *err)
{
    if (n > EO_TUNE_KNOBS_MAX)
        return eo__fail(err, "tune", "at most %d knobs", EO_TUNE_KNOBS_MAX);
    for (size_t i = 0; i < n; i++) {
        if (names[i] == NULL)
            return eo__fail(err, "tune", "no knob name");
        int rc = knob_make(c, names[i], &k[i], err);
        if (rc != 0)
            return rc;
        for (size_t j = 0; j < i; j++)
            if (k[j].spec == k[i].spec)
                return eo__fail(err, "tune", "%.40s: given twice", names[i]);
    }
    return 0;
}

int eo_tune_check(const eo_pool_config *start, const eo_tune_config *cfg, eo_round_error *err)
{
    knob k[EO_TUNE_KNOBS_MAX];
    if (start == NULL || cfg == NULL)
        return eo__fail(err, "", "bad argument");
    return resolve_knobs(start, cfg->knobs, cfg->nknobs, k, err);
}

static int make_knobs(eo_tune *t, eo_round_error *err)
{
    const char *names[EO_TUNE_KNOBS_MAX];
    size_t n = t->cfg.nknobs;
    if (n == 0)
        n = eo_tune_default_knobs(&t->start, t->r, t->n, names, EO_TUNE_KNOBS_MAX);
    int rc = resolve_knobs(&t->start, t->cfg.nknobs > 0 ? t->cfg.knobs : names, n, t->k, err);
    t->nk = rc == 0 ? n : 0;
    return rc;
}

int eo_tune_create(const eo_pool_config *start, const eo_tune_config *cfg, const eo_round *r,
                   size_t n, size_t train_from, size_t held_from, eo_tune **out,
                   eo_round_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (start == NULL || cfg == NULL || (r == NULL && n > 0) || out == NULL ||
        !(train_from <= held_from && held_from <= n) || cfg->budget < 1 || !(cfg->gate >= 0))
        return eo__fail(err, "", "bad argument");
    if (decided(r, train_from, held_from) == 0)
        return eo__fail(err, "rounds", "no decided round to train on");
    if (decided(r, held_from, n) == 0)
        return eo__fail(err, "rounds", "no decided round held out");
    eo_tune *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    t->cfg = *cfg;
    t->r = r;
    t->n = n;
    t->train_from = train_from;
    t->held_from = held_from;
    t->start = *start;
    int rc = make_knobs(t, err);
    size_t m = n - train_from;
    if (rc == 0) {
        t->p_start = malloc(m * sizeof *t->p_start);
        t->p_best = malloc(m * sizeof *t->p_best);
        t->p_cand = malloc(m * sizeof *t->p_cand);
        if (t->p_start == NULL || t->p_best == NULL || t->p_cand == NULL)
            rc = EO_ENOMEM;
    }
    if (rc != 0) {
        eo_tune_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

void eo_tune_destroy(eo_tune *t)
{
    if (t == NULL)
        return;
    free(t->p_start);
    free(t->p_best);
    free(t->p_cand);
    free(t);
}

/* Folds every round through a fresh pool of @p c, P of the scored rounds into @p p. 0, 1 when
 * the model refuses @p c (no fold), EO_ENOMEM, or EO_EINVAL with *bad the round refused. */
static int fold(const eo_tune *t, const eo_pool_config *c, double *p, score *s, size_t *bad)
{
    eo_pool *pool = NULL;
    int rc = eo_pool_create(c, &pool);
    if (rc != 0)
        return rc == EO_ENOMEM ? rc : 1;
    eo_metrics mt, mh;
    eo_metrics_init(&mt);
    eo_metrics_init(&mh);
    for (size_t i = 0; i < t->n; i++) {
        eo_round_result res;
        rc = eo_pool_apply(pool, &t->r[i], &res, NULL);
        if (rc != 0) {
            *bad = i;
            eo_pool_destroy(pool);
            return rc;
        }
        if (i < t->train_from)
            continue;
        p[i - t->train_from] = res.p_a;
        if (t->r[i].winner != EO_DRAW)
            eo_metrics_add(i < t->held_from ? &mt : &mh, res.p_a, t->r[i].winner == EO_WIN_A);
    }
    eo_pool_destroy(pool);
    eo_metrics_get(&mt, &s->train);
    eo_metrics_get(&mh, &s->held);
    s->objective = t->cfg.brier ? s->train.brier : s->train.logloss;
    return 0;
}

static void next_knob(eo_tune *t)
{
    t->ki++;
    t->fresh = true;
}

/* The next candidate of the descent into t->cand (its knob in *which); false when the search
 * is over. */
static bool next_candidate(eo_tune *t, const knob **which, double *value)
{
    for (;;) {
        if (t->folds >= t->cfg.budget)
            return false;
        if (t->ki == t->nk) {
            if (!t->moving)
                return false;
            t->moving = false;
            t->ki = 0;
            t->fresh = true;
        }
        knob *k = &t->k[t->ki];
        double v = knob_get(k, &t->best);
        if (t->fresh) {
            t->fresh = false;
            if (settled(k, v)) {
                next_knob(t);
                continue;
            }
            t->moving = true;
            t->improved = false;
            t->dir = 1;
        }
        if (t->dir == 0) {
            if (!t->improved)
                shrink(k);
            next_knob(t);
            continue;
        }
        int dir = t->dir;
        t->dir = dir > 0 ? -1 : 0;
        double x = moved(k, v, dir);
        t->cand = t->best;
        if (x == v || knob_set(k, &t->cand, x) != 0)
            continue; /* no move, or outside what the model allows with the other values */
        *which = k;
        *value = x;
        return true;
    }
}

/* The next candidate of the check into t->cand: the answer with one more knob put back to
 * its start value; false when every knob was looked at. */
static bool next_check(eo_tune *t, const knob **which, double *value)
{
    while (t->ci < t->nk) {
        const knob *k = &t->k[t->ci++];
        double x = knob_get(k, &t->start);
        t->cand = t->best;
        if (knob_get(k, &t->best) == x || knob_set(k, &t->cand, x) != 0)
            continue;
        *which = k;
        *value = x;
        return true;
    }
    return false;
}

/* The standard error of the paired difference of the training objective between the
 * candidate (p_cand) and the answer so far (p_best). */
static double train_se(const eo_tune *t)
{
    eo_paired c;
    memset(&c, 0, sizeof c);
    for (size_t i = t->train_from; i < t->held_from; i++)
        if (t->r[i].winner != EO_DRAW)
            (void)eo_paired_add(&c, t->p_best[i - t->train_from], t->p_cand[i - t->train_from],
                                t->r[i].winner == EO_WIN_A);
    eo_paired_result r;
    eo_paired_get(&c, &r);
    return t->cfg.brier ? r.brier_se : r.logloss_se;
}

/* The start's fold, and the gate's threshold from its held-out rounds. */
static int start_fold(eo_tune *t, eo_tune_progress *p)
{
    score s;
    int rc = fold(t, &t->start, t->p_start, &s, &p->round);
    if (rc != 0)
        return rc == 1 ? EO_EINVAL : rc; /* a start eo_pool_create() refuses: the caller's */
    eo_mean_se se = {0, 0, 0};
    for (size_t i = t->held_from; i < t->n; i++) {
        double l, b;
        if (t->r[i].winner == EO_DRAW)
            continue;
        (void)eo_metrics_loss(t->p_start[i - t->train_from], t->r[i].winner == EO_WIN_A, &l, &b);
        eo_mean_se_add(&se, t->cfg.brier ? b : l);
    }
    t->threshold = t->cfg.gate * eo_mean_se_error(&se);
    t->folds = 1;
    t->best = t->start;
    t->s_best = s;
    t->s_start = s;
    memcpy(t->p_best, t->p_start, (t->n - t->train_from) * sizeof *t->p_best);
    t->ki = 0;
    t->fresh = true;
    t->phase = DESCENT;
    p->objective = s.objective;
    return 0;
}

/* The next fold of the descent (while folds < budget), then of the check. 0 with the fold's
 * figures in @p s, 1 when no fold is left, or a fold's failure. */
static int next_fold(eo_tune *t, const knob **k, double *x, score *s, size_t *bad)
{
    for (;;) {
        bool more = false;
        if (t->phase == DESCENT && !(more = next_candidate(t, k, x)))
            t->phase = CHECK;
        if (t->phase == CHECK && !more && !(more = next_check(t, k, x)))
            t->phase = DONE;
        if (!more)
            return 1;
        int rc = fold(t, &t->cand, t->p_cand, s, bad);
        if (rc != 1)
            return rc;
        /* refused only at creation: passed over like one the configuration check refuses */
    }
}

int eo_tune_step(eo_tune *t, eo_tune_progress *p)
{
    eo_tune_progress tmp;
    if (p == NULL)
        p = &tmp;
    memset(p, 0, sizeof *p);
    if (t == NULL)
        return EO_EINVAL;
    int rc = 0;
    if (t->phase == START) {
        rc = start_fold(t, p);
    } else if (t->phase != DONE) {
        const knob *k = NULL;
        double x = 0;
        score s;
        rc = next_fold(t, &k, &x, &s, &p->round);
        if (rc == 1) {
            rc = 0;
        } else if (rc == 0) {
            t->folds++;
            p->knob = k->name;
            p->value = x;
            p->objective = s.objective;
            /* The descent keeps what is better by more than rounding; the check puts a knob
             * back to its start value unless that costs the training rounds more than gate
             * paired standard errors: a knob must earn its move. */
            double noise = NOISE * fabs(t->s_best.objective);
            bool keep =
                t->phase == DESCENT
                    ? s.objective < t->s_best.objective - noise
                    : !(s.objective - t->s_best.objective > fmax(t->cfg.gate * train_se(t), noise));
            if (keep) {
                t->best = t->cand;
                t->s_best = s;
                double *swap = t->p_best;
                t->p_best = t->p_cand;
                t->p_cand = swap;
            }
            if (keep && t->phase == DESCENT) {
                t->improved = true;
                t->dir = 0; /* keep the step: the next sweep goes on in this direction */
            }
        }
    }
    p->folds = t->folds;
    p->budget = t->cfg.budget;
    p->done = t->phase == DONE;
    p->best = t->s_best.objective;
    return rc;
}

/* A point's figures with the standard errors of its held-out figures from its P's. */
static void point(const eo_tune *t, const eo_pool_config *c, const score *s, const double *p,
                  eo_tune_point *out)
{
    eo_mean_se ll = {0, 0, 0}, br = {0, 0, 0};
    for (size_t i = t->held_from; i < t->n; i++) {
        double l, b;
        if (t->r[i].winner == EO_DRAW)
            continue;
        (void)eo_metrics_loss(p[i - t->train_from], t->r[i].winner == EO_WIN_A, &l, &b);
        eo_mean_se_add(&ll, l);
        eo_mean_se_add(&br, b);
    }
    out->cfg = *c;
    out->train = s->train;
    out->held = s->held;
    out->held_logloss_se = eo_mean_se_error(&ll);
    out->held_brier_se = eo_mean_se_error(&br);
}

int eo_tune_get(const eo_tune *t, eo_tune_result *out)
{
    if (t == NULL || out == NULL || t->phase != DONE)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    out->folds = t->folds;
    out->nknobs = t->nk;
    for (size_t i = 0; i < t->nk; i++)
        out->knobs[i] = t->k[i].name;
    point(t, &t->start, &t->s_start, t->p_start, &out->start);
    point(t, &t->best, &t->s_best, t->p_best, &out->best);
    out->gain = t->s_start.objective - t->s_best.objective;
    out->threshold = t->threshold;
    /* With fewer than two decided held-out rounds there is no error to beat: the start stays. */
    out->chose_best = out->gain > 0 && isfinite(out->threshold) && out->gain > out->threshold;
    eo_paired c;
    memset(&c, 0, sizeof c);
    for (size_t i = t->held_from; i < t->n; i++)
        if (t->r[i].winner != EO_DRAW)
            (void)eo_paired_add(&c, t->p_start[i - t->train_from], t->p_best[i - t->train_from],
                                t->r[i].winner == EO_WIN_A);
    eo_paired_get(&c, &out->held);
    return 0;
}

const eo_pool_config *eo_tune_chosen(const eo_tune_result *r)
{
    return r->chose_best ? &r->best.cfg : &r->start.cfg;
}
