/* The Gaussian (μ, σ) models' shared adapter (internal): TrueSkill and Weng-Lin behind eo_model.h.
 *
 * Both models keep a player as a mean and a deviation with a round count and a last end, take
 * the same common parameters (mu, sigma, beta, tau first; display_k, visible_rounds,
 * visible_sigma, t_stale_days last), predict and score quality with the same two-team
 * formulas (gauss.h's, beside Φ), and update a member of weight w the same way once their own
 * rule has given each team a mean term om and a variance term de:
 *   σ̃² = σ² + τ²,  μ += w·σ̃²·om,  σ² = σ̃²·max(1 − w²·σ̃²·de, floor)
 * (TrueSkill: om = ±v/c, de = W/c², floor 0; Weng-Lin: its om and de, floor κ, limit_sigma).
 * docs/MODELS.md, "TrueSkill" and "Weng-Lin", "The formulas as implemented".
 *
 * Here is everything but the rule: parameter tables and reading, the prepared head every
 * model's impl starts with, player init, strength, predict, quality, view, set and range (the
 * ops, in gaussian.c), and the round's sums and member updates, which are static inline and
 * always inlined so that the rate path stays one function per model with the record's offsets
 * as constants (no call through a pointer, no load of a layout). Each model keeps its rule,
 * its own parameters and checks, and its public API (eo_trueskill.h, eo_wenglin.h). */
#ifndef EO_GAUSSIAN_H
#define EO_GAUSSIAN_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/models/gauss.h"
#include "core/models/model_internal.h"

/* Every Gaussian player record (eo_trueskill_player, eo_wenglin_player) is 32 bytes and starts
 * with its mean and deviation: double μ at offset 0, σ at 8. Constants, so that the ops read
 * them without a layout and player init zeroes a record with two stores instead of a call to
 * memset (the smoother inits a cavity per member of every round it rates). */
#define EO__GAUSSIAN_RECORD_SIZE 32
#define EO__GAUSSIAN_MU_AT 0
#define EO__GAUSSIAN_SIGMA_AT 8

/* Where a model's player record keeps the rest (offsetof()), and the model's limits:
 * |μ| <= mu_max and σ <= sigma_max after every update and admin set. The record's rounds is a
 * uint32_t and last_ended_at an int64_t (EO__GAUSSIAN_RECORD_CHECK). */
typedef struct eo__gaussian_shape {
    size_t rounds, ended;
    double mu_max, sigma_max;
} eo__gaussian_shape;

/* The shape of player record type @p T (its fields named rounds and last_ended_at). */
#define EO__GAUSSIAN_SHAPE_OF(T, mu_max, sigma_max)                                                \
    {offsetof(T, rounds), offsetof(T, last_ended_at), (mu_max), (sigma_max)}

/* Fails the build unless record type @p T has the size, layout and field types the shared code
 * uses. */
#define EO__GAUSSIAN_RECORD_CHECK(T)                                                               \
    _Static_assert(_Generic(((T *)0)->mu, double: 1, default: 0) &&                                \
                       _Generic(((T *)0)->sigma, double: 1, default: 0) &&                         \
                       _Generic(((T *)0)->rounds, uint32_t: 1, default: 0) &&                      \
                       _Generic(((T *)0)->last_ended_at, int64_t: 1, default: 0) &&                \
                       offsetof(T, mu) == EO__GAUSSIAN_MU_AT &&                                    \
                       offsetof(T, sigma) == EO__GAUSSIAN_SIGMA_AT &&                              \
                       sizeof(T) == EO__GAUSSIAN_RECORD_SIZE,                                      \
                   #T " is not a Gaussian player record")

/* The parameters both models have, by the same names and meanings. */
typedef struct eo__gaussian_params {
    double mu, sigma, beta, tau, display_k, visible_sigma;
    int32_t visible_rounds, t_stale_days;
} eo__gaussian_params;

/* The common fields of a model's public parameter struct @p p (eo_trueskill_params,
 * eo_wenglin_params: the same names). */
#define EO__GAUSSIAN_PARAMS_OF(p)                                                                  \
    ((eo__gaussian_params){.mu = (p)->mu,                                                          \
                           .sigma = (p)->sigma,                                                    \
                           .beta = (p)->beta,                                                      \
                           .tau = (p)->tau,                                                        \
                           .display_k = (p)->display_k,                                            \
                           .visible_sigma = (p)->visible_sigma,                                    \
                           .visible_rounds = (p)->visible_rounds,                                  \
                           .t_stale_days = (p)->t_stale_days})

/* True when the common parameters are within their documented bounds (eo_trueskill.h,
 * eo_wenglin.h): |mu| <= mu_max, sigma in [1e-9, sigma_max], beta in [1e-9, 1e6], tau in
 * [0, 1e6], display_k in [0, 1000], visible_rounds >= 0, visible_sigma in [0, sigma_max],
 * t_stale_days in [0, 36500]; false for NaN. A model adds its own parameters' checks. */
bool eo__gaussian_params_ok(const eo__gaussian_params *p, double mu_max, double sigma_max);

/* ---- parameter tables ---- */

/* A Gaussian model's table (eo_param_spec) starts with mu, sigma, beta, tau and ends with
 * display_k, visible_rounds, visible_sigma, t_stale_days (EO__GAUSSIAN_TAIL_COUNT); the model's
 * own parameters stand between, from EO__GAUSSIAN_P_OWN on. */
enum { EO__GAUSSIAN_P_MU, EO__GAUSSIAN_P_SIGMA, EO__GAUSSIAN_P_BETA, EO__GAUSSIAN_P_TAU,
       EO__GAUSSIAN_P_OWN };
enum { EO__GAUSSIAN_TAIL_COUNT = 4 };

/* The head entries of the table (designated initializers); @p beta_help says what β means in
 * the model. */
#define EO__GAUSSIAN_SPECS_HEAD(mu_max, sigma_max, beta_help)                                      \
    [EO__GAUSSIAN_P_MU] = {"mu", "starting mean", 25.0, -(mu_max), (mu_max), false, NULL},         \
    [EO__GAUSSIAN_P_SIGMA] = {"sigma", "starting deviation", 25.0 / 3.0, 1e-9, (sigma_max),        \
                              false, NULL},                                                        \
    [EO__GAUSSIAN_P_BETA] = {"beta", (beta_help), 25.0 / 6.0, 1e-9, 1e6, false, NULL},             \
    [EO__GAUSSIAN_P_TAU] = {"tau", "dynamics: sigma^2 grows by tau^2 before each update",          \
                            25.0 / 300.0, 0.0, 1e6, false, NULL}

/* The tail entries, from index @p tail (the table's length minus EO__GAUSSIAN_TAIL_COUNT). */
#define EO__GAUSSIAN_SPECS_TAIL(tail, sigma_max)                                                   \
    [(tail)] = {"display_k", "display rating = mu - display_k * sigma", 3.0, 0.0, 1000.0,          \
                false, NULL},                                                                      \
    [(tail) + 1] = {"visible_rounds", "rounds before the rating is visible", 0, 0, 1e9, true,      \
                    NULL},                                                                         \
    [(tail) + 2] = {"visible_sigma", "visible only once sigma <= visible_sigma (0: not used)",     \
                    0.0, 0.0, (sigma_max), false, NULL},                                           \
    [(tail) + 3] = {"t_stale_days", "days without a round before a lookup says stale", 30, 0,      \
                    36500, true, NULL}

/* The common parameters of a checked configuration whose table is laid out as above, its tail
 * at index @p tail. */
void eo__gaussian_params_read(const eo_model_config *c, size_t tail, eo__gaussian_params *p);

/* ---- the prepared head ---- */

/* The start of every Gaussian model's impl (model_internal.h): the shared ops read only this. */
typedef struct eo__gaussian_impl {
    eo__gaussian_params p;
    const eo__gaussian_shape *shape; /* the model's, static */
    double beta2;                    /* β² */
    double tau2;                     /* τ² */
} eo__gaussian_impl;

/* Fills @p g from checked parameters and the model's record shape (kept by pointer). */
void eo__gaussian_impl_init(eo__gaussian_impl *g, const eo__gaussian_params *p,
                            const eo__gaussian_shape *shape);

/* ---- values both models' public APIs and ops give ---- */

/* The number players see: μ − display_k·σ. */
static inline double eo__gaussian_display(double display_k, double mu, double sigma)
{
    return mu - display_k * sigma;
}

/* Visible when rounds >= visible_rounds and (visible_sigma is 0 or σ <= visible_sigma). */
static inline bool eo__gaussian_visible(int32_t visible_rounds, double visible_sigma,
                                        uint32_t rounds, double sigma)
{
    return rounds >= (uint32_t)visible_rounds && (visible_sigma == 0.0 || sigma <= visible_sigma);
}

/* Admin set of the fields @p mu_at and @p sigma_at of one record: μ to @p mu and, when
 * @p sigma >= 0, σ to @p sigma. EO_EINVAL for a non-finite @p mu or a NaN @p sigma, EO_ERANGE
 * when |mu| > mu_max or sigma > sigma_max (never clamped); on error nothing changes. */
int eo__gaussian_set(double *mu_at, double *sigma_at, double mu, double sigma, double mu_max,
                     double sigma_max);

/* ---- the shared ops ---- */

/* The ops of model_internal.h by the same names (set: eo__gaussian_set_op), for every Gaussian
 * model: @p impl is the model's prepared struct, an eo__gaussian_impl first; @p st a player
 * record of its shape. init zeroes the record and sets μ0, σ0; strength is (μ, σ²) whatever
 * @p now; predict and quality are gauss.h's eo__gauss_team_p() and eo__gauss_team_quality() on
 * the aggregates (the one formula behind predict, rate's P(A) and the models' direct APIs, so
 * all of them give the same bits); view fills display, μ, σ, rounds, visible, stale and the
 * last end (the rest 0); set is eo__gaussian_set() with the model's limits. */
void eo__gaussian_player_init(const void *impl, void *st);
void eo__gaussian_strength(const void *impl, const void *st, int64_t now, eo_strength *out);
double eo__gaussian_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                            double field);
double eo__gaussian_quality(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                            double field);
/* New pools (eo_model_config_new()): β = σ0 = 25/3 instead of 25/6 (docs/MODELS.md, "Defaults
 * of new pools": better calibrated whatever the team size). */
void eo__gaussian_fresh(eo_model_config *c);
/* −μ0·(w_A − w_B): team performance relative to the start mean (eo_model_level_field()). */
double eo__gaussian_level(const void *impl, const eo_team_agg *a, const eo_team_agg *b);
void eo__gaussian_view(const void *impl, const void *st, int64_t now, eo_rating_view *out);
int eo__gaussian_set_op(const void *impl, void *st, double mu, double sigma);
/* μ within EO_MODEL_RANGE_WINDOW of μ0 (and the model's mu_max), σ up to its sigma_max
 * (docs/MODELS.md, "The range of a model"). */
void eo__gaussian_range(const void *impl, eo_model_range *out);

/* The ops table entries every Gaussian model shares; a model's table adds its id, name,
 * parameters, sizes, split unit, prepare and rate. */
#define EO__GAUSSIAN_OPS                                                                           \
    .integer_display = false, .has_deviation = true, .fresh = eo__gaussian_fresh,                  \
    .player_init = eo__gaussian_player_init,                                                       \
    .strength = eo__gaussian_strength, .predict = eo__gaussian_predict,                            \
    .quality = eo__gaussian_quality, .level = eo__gaussian_level, .view = eo__gaussian_view,       \
    .set = eo__gaussian_set_op, .range = eo__gaussian_range

/* ---- a round (the rate path: always inlined, the shape a compile-time constant) ---- */

/* One team's sums at round start, in member order as eo_team_agg_add() forms them (so rate's
 * P(A) equals eo_model_predict()'s): Σ w·μ, Σ w²σ², Σ w², and vt = Σ w²·(σ² + τ²), with β²
 * added inside each member's term when the model's rule wants it there (TrueSkill's c²). */
typedef struct eo__gaussian_sums {
    double mu, var, w2, vt;
} eo__gaussian_sums;

/* A round between its two halves: the teams' sums and P at round start (the shared half), then
 * the model's rule fills om, de (team A 0, B 1), floor and limit_sigma (the update of the top
 * of this file). */
typedef struct eo__gaussian_round {
    eo__gaussian_sums a, b;
    double p_a, p_b; /* P(A wins), P(B wins) */
    double om[2], de[2], floor;
    bool limit_sigma;
} eo__gaussian_round;

/* A double field of record @p st at offset @p at: read (any record, const) and as a pointer to
 * the record's own member, so that writes keep their type. */
static inline double eo__gaussian_get(const void *st, size_t at)
{
    double v;
    memcpy(&v, (const char *)st + at, sizeof v);
    return v;
}

static inline double *eo__gaussian_f64(void *st, size_t at)
{
    return (double *)(void *)((char *)st + at);
}

/* Team sums of members @p m[0..n) (eo__gaussian_sums), @p beta_in a constant of the model. */
static inline __attribute__((always_inline)) eo__gaussian_sums
eo__gaussian_sums_of(const eo__gaussian_impl *g, bool beta_in, const eo_participant *m, size_t n)
{
    eo__gaussian_sums t = {0.0, 0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        double mu = eo__gaussian_get(m[i].st, EO__GAUSSIAN_MU_AT);
        double sigma = eo__gaussian_get(m[i].st, EO__GAUSSIAN_SIGMA_AT);
        double w = m[i].w, ww = w * w, s2 = sigma * sigma;
        t.mu += w * mu;
        t.var += ww * s2;
        t.w2 += ww;
        t.vt += ww * (beta_in ? (s2 + g->tau2) + g->beta2 : s2 + g->tau2);
    }
    return t;
}

/* The shared half of a round's start: both teams' sums and P(A), P(B) from round-start state,
 * with @p field in A's favour. The model's rule then fills r->om, de, floor and limit_sigma. */
static inline __attribute__((always_inline)) void
eo__gaussian_round_start(const eo__gaussian_impl *g, bool beta_in, const eo_participant *a,
                         size_t na, const eo_participant *b, size_t nb, double field,
                         eo__gaussian_round *r)
{
    r->a = eo__gaussian_sums_of(g, beta_in, a, na);
    r->b = eo__gaussian_sums_of(g, beta_in, b, nb);
    r->p_a = eo__gauss_team_p(g->beta2, r->a.mu, r->a.var, r->a.w2, r->b.mu, r->b.var, r->b.w2,
                              field);
    r->p_b = eo__gauss_team_p(g->beta2, r->b.mu, r->b.var, r->b.w2, r->a.mu, r->a.var, r->a.w2,
                              -field);
}

/* Updates the members @p m[0..n) of team @p t (0 A, 1 B) of round @p r (the update of the top
 * of this file; a member of weight 0 is left unchanged), writing @p out[0..n) when not NULL:
 * display before and after, the team's P, k = 0, μ and σ after. */
static inline __attribute__((always_inline)) void
eo__gaussian_update_team(const eo__gaussian_impl *g, const eo__gaussian_shape *sh,
                         const eo__gaussian_round *r, int t, const eo_participant *m, size_t n,
                         int64_t at, eo_model_update *out)
{
    double om = r->om[t], de = r->de[t], expected = t == 0 ? r->p_a : r->p_b;
    for (size_t i = 0; i < n; i++) {
        double *mu_at = eo__gaussian_f64(m[i].st, EO__GAUSSIAN_MU_AT);
        double *sigma_at = eo__gaussian_f64(m[i].st, EO__GAUSSIAN_SIGMA_AT);
        double w = m[i].w;
        if (out != NULL) {
            out[i].before = eo__gaussian_display(g->p.display_k, *mu_at, *sigma_at);
            out[i].expected = expected;
            out[i].k = 0.0;
        }
        if (w > 0.0) {
            double sigma = *sigma_at, s2t = sigma * sigma + g->tau2;
            double f = 1.0 - (w * w) * s2t * de;
            double sig = sqrt(s2t * (f > r->floor ? f : r->floor));
            if (r->limit_sigma && sig > sigma)
                sig = sigma;
            double mu = *mu_at + w * s2t * om;
            *mu_at = mu > sh->mu_max ? sh->mu_max : mu < -sh->mu_max ? -sh->mu_max : mu;
            *sigma_at = sig < sh->sigma_max ? sig : sh->sigma_max;
            *(uint32_t *)(void *)((char *)m[i].st + sh->rounds) += 1;
            if (at != 0)
                *(int64_t *)(void *)((char *)m[i].st + sh->ended) = at;
        }
        if (out != NULL) {
            out[i].after = eo__gaussian_display(g->p.display_k, *mu_at, *sigma_at);
            out[i].mu = *mu_at;
            out[i].sigma = *sigma_at;
        }
    }
}

/* The shared half of a round's end, once the rule has filled @p r: *p_a (when not NULL) and
 * every member's update, A's then B's (@p out NULL or na + nb entries). */
static inline __attribute__((always_inline)) void
eo__gaussian_round_end(const eo__gaussian_impl *g, const eo__gaussian_shape *sh,
                       const eo__gaussian_round *r, const eo_participant *a, size_t na,
                       const eo_participant *b, size_t nb, int64_t at, double *p_a,
                       eo_model_update *out)
{
    if (p_a != NULL)
        *p_a = r->p_a;
    eo__gaussian_update_team(g, sh, r, 0, a, na, at, out);
    eo__gaussian_update_team(g, sh, r, 1, b, nb, at, out != NULL ? out + na : NULL);
}

#endif
