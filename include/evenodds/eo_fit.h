/**
 * @file eo_fit.h
 * Whole-history refit: every player's rating recomputed from the whole round log at once
 * instead of folded one round at a time. Two methods; docs/MODELS.md, "Whole-history refit",
 * gives the formulas and the choices.
 *
 * EO_FIT_MAP (every model; the default but for TrueSkill and Weng-Lin): one static skill per
 * player, the maximum a posteriori estimate. The fit reads each round as its members (interned
 * to dense indices), their partial-play weights (eo_model_member_weight()), the outcome and the
 * map key of the pool's bias, and models P(A wins) with the pool model's own link on the
 * weighted team sums or means:
 *  - logistic (SynElo, Elo, Glicko-2, hive): P = σ(d), d the model's logit;
 *  - Gaussian (TrueSkill, Weng-Lin): P = Φ(d), d = (Σ_A w·μ − Σ_B w·μ + b) / (β·√Σ w²).
 * With the pool's presence on, d also has the round's level field and π·Δ (Δ = Σ_A w − Σ_B w;
 * π in logits, for Φ at the centre's slope, so π/1.5958 in d) with π fitted beside the skills
 * (docs/MODELS.md "Presence").
 * Draws count as half a win for each side. The objective is the log likelihood plus a log
 * prior per player (Gaussian around the model's start value; for the hive model seed 001's
 * Gamma prior), per bias key (Gaussian around 0, worth `bias_prior` plays) and for π (around
 * 0, worth `presence_prior` rounds of unequal presence). It is maximised
 * by sweeps: one pass over every round accumulates each parameter's gradient and diagonal
 * Hessian, then every parameter takes its Newton step, scaled by a common factor that is halved
 * until the objective does not fall.
 *
 * EO_FIT_SMOOTH (TrueSkill and Weng-Lin; their default): the idea of TrueSkill Through Time
 * (Dangauthier, Herbrich, Minka, Graepel, NIPS 2007). Each player's skill is a Gaussian random
 * walk over the rounds he plays (weight > 0): the prior N(prior_mean, prior_sd²), then the
 * model's τ² added before each of his rounds, as online. Each round is a factor given by the
 * model's own update (eo_model_rate() with τ = 0) applied to its members' cavities; expectation
 * propagation finds the skills' marginals by sweeps of a forward and a backward pass over the
 * log until no marginal mean moves by tol. A player's result is his marginal at his last round
 * (mean and deviation): the state online rating continues from. Map biases, when the pool keys
 * them, and π, when its presence is on, are the MAP fit's, held fixed.
 *
 * Pure: no I/O, no clock, no globals. Deterministic: the same rounds, added in the same order,
 * give the same bits on every machine (fixed summation order, the core's own exp and log).
 * Ownership: an eo_fit owns copies of every id and key it keeps; strings it returns stay valid
 * for its life. Thread safety: none; one thread at a time per fit.
 */
#ifndef EO_FIT_H
#define EO_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_pool.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The method of a fit (above). */
typedef enum eo_fit_method {
    EO_FIT_MAP = 0,   /**< static skills, maximum a posteriori (every model) */
    EO_FIT_SMOOTH = 1 /**< skills as random walks, smoothed (TrueSkill, Weng-Lin) */
} eo_fit_method;

/** "map" or "smooth"; NULL for another value. */
const char *eo_fit_method_name(eo_fit_method m);

/** Parses "map" or "smooth". Returns 0 or EO_EINVAL. */
int eo_fit_method_parse(const char *name, eo_fit_method *out);

/** How a fit runs. Fill with eo_fit_config_default(), then change what you need. */
typedef struct eo_fit_config {
    eo_fit_method method; /**< default EO_FIT_SMOOTH for TrueSkill and Weng-Lin, else
                               EO_FIT_MAP */
    double prior_mean; /**< centre of the skill prior, model units (default: the model's start
                            value; hive: the Gamma's mean, EO_FIT_HIVE_MEAN) */
    double prior_sd;   /**< its standard deviation, > 0 (default: the model's start deviation;
                            SynElo and Elo EO_FIT_ELO_SD; hive EO_FIT_HIVE_SD, below the mean).
                            The smoother's chains start from N(prior_mean, prior_sd²) */
    uint32_t max_sweeps; /**< most sweeps of eo_fit_run(), >= 1 (default 100) */
    double tol;        /**< converged when no Newton step (MAP), or no sweep (smoother), moves a
                            skill by tol or more, > 0 (default prior_sd / 10^4) */
} eo_fit_config;

/** Default prior deviation of the models without one (SynElo, Elo), rating points. */
#define EO_FIT_ELO_SD 350.0
/** Default mean and deviation of the hive model's Gamma prior, skill units: shape
 *  k = (mean/sd)² = 1.5625, scale θ = sd²/mean = 6.4 (mode 3.6). docs/MODELS.md says why. */
#define EO_FIT_HIVE_MEAN 10.0
#define EO_FIT_HIVE_SD 8.0

/**
 * The defaults for a pool of configuration @p pool (its model's start values). Returns 0 or
 * EO_EINVAL (a configuration eo_pool_create() would refuse).
 */
int eo_fit_config_default(const eo_pool_config *pool, eo_fit_config *out);

typedef struct eo_fit eo_fit;

/**
 * Creates an empty fit for rounds of a pool of configuration @p pool (copied; its bias decides
 * the map keys) with @p cfg (copied). Returns 0, EO_EINVAL (bad pool configuration, or a
 * non-finite or out-of-range field of @p cfg; for the hive model prior_mean must exceed
 * prior_sd, so that the Gamma's shape is above 1; EO_FIT_SMOOTH with a model other than
 * TrueSkill or Weng-Lin) or EO_ENOMEM. *out is owned by the caller.
 */
int eo_fit_create(const eo_pool_config *pool, const eo_fit_config *cfg, eo_fit **out);

/** Destroys @p f. NULL is a no-op. */
void eo_fit_destroy(eo_fit *f);

/**
 * Adds one round (in log order). Checks what eo_pool_apply() checks (teams non-empty, at most
 * EO_PLAYERS_MAX players, a valid winner, valid ids, no player twice); unknown players and map
 * keys are created. Rounds may be added after sweeps: new players start at the prior's mode,
 * and the next sweep reads every round. Returns 0, EO_EINVAL or EO_ENOMEM; on error the fit is
 * unchanged.
 */
int eo_fit_add_round(eo_fit *f, const eo_round *r);

/** What one sweep did. */
typedef struct eo_fit_sweep_stats {
    uint32_t sweep;     /**< sweeps taken so far, this one included */
    uint32_t passes;    /**< passes over the rounds this sweep made (MAP: 1 + halvings;
                             smoother: 2, plus the MAP fit of the biases on a first sweep) */
    double step;        /**< MAP: the factor of the Newton steps applied, in (0, 2]; 0: none.
                             Smoother: 1 */
    double max_change;  /**< MAP: largest |change| of a skill or bias this sweep (model units);
                             when converged, the largest full Newton step, which was not taken.
                             Smoother: largest |change| of a marginal mean at any appearance of
                             any player between its last two visits */
    double objective;   /**< MAP: log posterior after the sweep (never below the one before).
                             Smoother: Σ over the rounds of ln P(outcome) at the cavities of the
                             forward pass (the model's P(A wins); draws as half a win and half a
                             loss): not monotone */
    double logloss;     /**< MAP: mean log loss of the rounds at the skills after the sweep
                             (nats; draws as half a win and half a loss). Smoother: −objective
                             / rounds */
    bool converged;     /**< MAP: every Newton step was below tol (the values were left as they
                             were), or no step raised the objective any more (rounding level).
                             Smoother: max_change below tol */
} eo_fit_sweep_stats;

/**
 * One sweep. MAP: one pass for the gradients (skipped when the last sweep left them), the
 * Newton steps, and one to a few passes of line search along them. Smoother: a forward and a
 * backward pass over the rounds, each round's factor recomputed from its members' cavities
 * (preceded, on the first sweep after rounds were added to a pool with map keys, by the MAP
 * fit that gives the biases). Returns 0, EO_ENOTFOUND (no rounds added), EO_EINVAL, EO_ENOMEM
 * (smoother: its per-appearance messages, 40 bytes each) or EO_ERANGE (smoother: a cavity
 * outside the model's range; the values are then those of a partly done sweep).
 */
int eo_fit_sweep(eo_fit *f, eo_fit_sweep_stats *st);

/**
 * Sweeps until converged or max_sweeps sweeps (counted over this fit's life). @p last (may be
 * NULL) receives the last sweep's figures. Returns as eo_fit_sweep().
 */
int eo_fit_run(eo_fit *f, eo_fit_sweep_stats *last);

/** One player's fitted values. */
typedef struct eo_fit_player {
    const char *id;   /**< the fit's copy */
    double skill;     /**< the fitted mean in the model's units (SynElo, Elo, Glicko-2: rating
                           points; TrueSkill, Weng-Lin: μ; hive: skill) */
    double sigma;     /**< MAP: Laplace deviation 1/√(diagonal of the negative Hessian of the
                           log posterior) at the fitted skills. Smoother: the deviation of the
                           marginal at the player's last round. Same units */
    uint32_t rounds;  /**< rounds with a weight above 0 */
} eo_fit_player;

/** Players the fit knows (dense indices 0 .. n−1 in order of first appearance). */
size_t eo_fit_player_count(const eo_fit *f);

/** Player @p i. Returns 0 or EO_EINVAL (out of range). */
int eo_fit_player_get(const eo_fit *f, size_t i, eo_fit_player *out);

/** Player @p id. Returns 0 or EO_ENOTFOUND (then @p out holds the prior's mode, 0 rounds, the
 *  prior's deviation and a NULL id). */
int eo_fit_lookup(const eo_fit *f, const char *id, eo_fit_player *out);

/** Bias keys the fit knows, and key @p i: its parts (NULL where the pool does not key by them)
 *  and fitted field term (model's field units). Returns 0 or EO_EINVAL. */
size_t eo_fit_bias_count(const eo_fit *f);
int eo_fit_bias_get(const eo_fit *f, size_t i, eo_bias_key *key, double *value);

/** The fitted presence π in logits (0 when the pool's presence is off): the MAP fit's, with
 *  `presence_prior` rounds of unequal presence as its prior (docs/MODELS.md "Presence"). */
double eo_fit_presence(const eo_fit *f);

/**
 * P(A wins) of round @p r with the fitted values frozen: players the fit does not know at the
 * prior's mode (smoother: the prior), a map key it does not know at 0. MAP: the link of the
 * fit at point skills; smoother: the model's own prediction (eo_model_predict()) from each
 * player's last marginal, mean and variance. The round is not added. Returns 0 or EO_EINVAL (as
 * eo_fit_add_round()).
 */
int eo_fit_predict(const eo_fit *f, const eo_round *r, double *p_a);

/**
 * The values a refit sets from fit @p f in a pool of configuration @p cfg (eo_refit_apply(),
 * docs/MODELS.md "Whole-history refit"), one per player the fit knows, in the fit's order: the
 * fitted mean (rounded half to even for models with integer ratings, SynElo) and, for models
 * with a deviation, the fitted deviation (else -1), each brought to the nearest value the
 * model accepts when it is outside the model's range (a non-finite mean: the model's start
 * value). *out is malloc'd (NULL when the fit has no players), the caller's to free(); *n its
 * length. Returns 0, EO_EINVAL (a NULL argument, or @p cfg refused by eo_pool_create()) or
 * EO_ENOMEM; on failure *out and *n are untouched. Implemented in src/core/fit_refit.c.
 */
int eo_refit_values(const eo_fit *f, const eo_pool_config *cfg, eo_refit_value **out,
                    size_t *n);

#ifdef __cplusplus
}
#endif
#endif
