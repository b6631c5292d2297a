/**
 * @file eo_glicko2.h
 * Glicko-2 (Glickman, "Example of the Glicko-2 system", steps 1-8) for two teams, with rating
 * periods kept per player (no pool-wide pass) and team games by the composite-opponent method
 * (Williams, "Abstracting Glicko-2 for Team Games", M.S. thesis, University of Cincinnati,
 * 2013): each player plays one game against a composite of the opposing team.
 *
 * Scales: ratings and RDs are on the Glicko scale (1500 / 350); the state holds the Glicko-2
 * scale values mu = (r - 1500) / 173.7178 and phi = RD / 173.7178 (Glickman's step 2).
 *
 * Rating periods: period index = floor(at / period) for a round ending at @c at (Unix seconds).
 * Within a period a player's rating and RD do not change; each game adds to the player's own
 * sums (Glickman's steps 3-4: Σ w g² E(1 − E) and Σ w g (s − E)), from period-start values of
 * the player and the opponents. When the player is next touched in a later period, the pending
 * period is closed (steps 5-8) and RD grows over the idle periods between: φ² + n σ² for n idle
 * periods, capped at rd_max. That is what applying every period at its boundary to every player
 * would give. With period 0 (per-round mode) every round is its own rating period and is closed
 * at once; time then plays no part (RD grows only by step 6 of each round).
 *
 * Pure and deterministic: exp and log are the core's own (src/core/numeric.h), sqrt is IEEE;
 * no NaN or infinity from finite inputs. docs/MODELS.md ("Glicko-2") states every choice.
 */
#ifndef EO_GLICKO2_H
#define EO_GLICKO2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Glickman's factor between the Glicko and Glicko-2 scales (step 2: mu = (r - 1500) / 173.7178). */
#define EO_GLICKO2_SCALE 173.7178

/** Lowest and highest rating an admin may set (eo_glicko2_set() refuses others); r0 too. */
#define EO_GLICKO2_RATING_MIN (-10000.0)
#define EO_GLICKO2_RATING_MAX 10000.0

/** Largest RD (Glicko scale) of any parameter: rd0, rd_max, visible_rd. */
#define EO_GLICKO2_RD_LIMIT 10000.0

/** A player's open period when none is known yet (a new player, or only undated rounds). */
#define EO_GLICKO2_NO_PERIOD INT64_MIN

/** Parameters of a Glicko-2 pool (defaults from eo_glicko2_params_default()). */
typedef struct eo_glicko2_params {
    double r0;             /**< starting rating (1500), in [EO_GLICKO2_RATING_MIN, _MAX] */
    double rd0;            /**< starting RD (350), in [0, rd_max] */
    double vol0;           /**< starting volatility σ (0.06), in [1e-6, 10] */
    double tau;            /**< τ, the constraint on volatility change (0.5), in [0.01, 10] */
    double epsilon;        /**< step 5: stop after a step of at most this on ln σ² (1e-6) */
    double rd_max;         /**< cap on RD growth (350), in [1, EO_GLICKO2_RD_LIMIT] */
    int64_t period;        /**< rating period in seconds; 0 = per-round mode (0) */
    int32_t visible_rounds;/**< rounds before the rating is visible (0) */
    double visible_rd;     /**< visible only with RD <= this; 0 = not used (0) */
    int32_t t_stale_days;  /**< days without a round before a lookup says stale (30) */
    int32_t team_expectation; /**< 0 (Williams's composite opponent): a player's expected score
                                   is his own rating against the other team's composite; 1: his
                                   team's composite against the other's, so that a strong player
                                   on an even team expects ½ (0) */
} eo_glicko2_params;

/** Fills @p p with the defaults above. */
void eo_glicko2_params_default(eo_glicko2_params *p);

/**
 * Checks every parameter against the bounds above (finite; epsilon in [1e-12, 1]; period in
 * [0, 2^40]; visible_rounds and t_stale_days >= 0; rd0 <= rd_max; team_expectation 0 or 1).
 * Returns 0 or EO_EINVAL.
 */
int eo_glicko2_params_check(const eo_glicko2_params *p);

/**
 * One player's state (72 bytes; plain data, owns nothing). mu, phi, vol and ln_vol2 are the
 * values at the start of the player's open period; s1, s2 and games are that period's pending
 * games. vol and ln_vol2 change together (only eo_glicko2_player_init() and the closing of a
 * period write them): step 5's iteration ends with both σ'² and ln σ'², and keeping the
 * logarithm saves a log per update.
 */
typedef struct eo_glicko2_player {
    double mu;             /**< rating on the Glicko-2 scale, (r - 1500) / 173.7178 */
    double phi;            /**< RD on the Glicko-2 scale, RD / 173.7178 */
    double vol;            /**< volatility σ */
    double ln_vol2;        /**< ln σ² (step 5's a) */
    double s1;             /**< pending Σ w g(φ_j)² E (1 − E) (1/v of step 3) */
    double s2;             /**< pending Σ w g(φ_j) (s − E) (Δ/v of step 4) */
    int64_t period;        /**< open period index, or EO_GLICKO2_NO_PERIOD */
    int64_t last_ended_at; /**< end of the last rated round (Unix seconds), 0 if none */
    uint32_t rounds;       /**< rated rounds (weight > 0) */
    uint32_t games;        /**< games pending in the open period */
} eo_glicko2_player;

/** Sets a new player: r0, rd0, vol0, no rounds, no open period. */
void eo_glicko2_player_init(eo_glicko2_player *pl, const eo_glicko2_params *p);

/** Glicko-2 scale of a rating: (r - 1500) / 173.7178. */
double eo_glicko2_mu(double rating);
/** Rating of a Glicko-2 scale value: 173.7178 mu + 1500. */
double eo_glicko2_rating(double mu);

/** Glickman's g(φ) = 1 / sqrt(1 + 3 φ² / π²), φ on the Glicko-2 scale. */
double eo_glicko2_g(double phi);

/**
 * Glickman's E(μ, μ_j, φ_j) with a logit offset: 1 / (1 + exp(-(g(φ_j)(μ - μ_j) + field))),
 * Glicko-2 scale. In [0, 1]; never NaN for finite inputs.
 */
double eo_glicko2_e(double mu, double mu_j, double phi_j, double field);

/**
 * Step 5: the new volatility σ' for a player of deviation @p phi and volatility @p vol, with
 * v = 1 / @p s1 and Δ = v @p s2 (the pending sums), constraint @p tau, tolerance @p eps on
 * ln σ². Glickman's f(x) of step 5 is solved by a safeguarded Newton iteration from
 * x = ln σ² (bisection of a bracket whenever a Newton step is refused), not by his Illinois
 * iteration. It finds the root next to ln σ² and stops after a step of at most @p eps, which
 * leaves it within ~1e-15 of the root in replays (docs/MODELS.md, "Numerics").
 * At most 200 steps (one or two in practice). With s1 < 1e-100 (no information: every E is 0
 * or 1 to 100 digits) σ is returned unchanged. Only + − × ÷, sqrt and the core's exp and log:
 * the same bits on every machine.
 */
double eo_glicko2_volatility(double phi, double vol, double s1, double s2, double tau, double eps);

/**
 * Adds one game to @p pl's open period: against an opponent of Glicko-2 values @p mu_j, @p phi_j,
 * score @p s (1 win, 0.5 draw, 0 loss), weight @p w in (0, 1], logit offset @p field in the
 * player's favour: s1 += w g² E (1 − E), s2 += w g (s − E), games += 1, with the player's own
 * period-start mu. Changes nothing else.
 */
void eo_glicko2_add_game(eo_glicko2_player *pl, double mu_j, double phi_j, double s, double w,
                         double field);

/**
 * Closes @p pl's open period (steps 5-8 from its pending sums; with no pending game, an idle
 * period: φ ← min(sqrt(φ² + σ²), φ_max)), clearing the sums. The pre-period deviation φ* of
 * step 6 is capped at rd_max as well. The period index is not changed.
 */
void eo_glicko2_close_period(const eo_glicko2_params *p, eo_glicko2_player *pl);

/** @p n >= 0 idle periods: φ ← min(sqrt(φ² + n σ²), φ_max). */
void eo_glicko2_idle(const eo_glicko2_params *p, eo_glicko2_player *pl, int64_t n);

/** The period index of time @p at: floor(at / period); EO_GLICKO2_NO_PERIOD when at == 0 or
 *  in per-round mode. */
int64_t eo_glicko2_period_of(const eo_glicko2_params *p, int64_t at);

/**
 * Brings @p pl to the period of time @p at (period mode only; at == 0 does nothing): a player
 * with no open period opens it (undated pending games join it); a later period closes the open
 * one and adds the idle periods between; an earlier or equal period changes nothing (a round
 * earlier than the open period counts in the open period).
 */
void eo_glicko2_advance(const eo_glicko2_params *p, eo_glicko2_player *pl, int64_t at);

/** Pure: @p out = @p pl as eo_glicko2_advance() would leave it at @p now (@p out may be @p pl). */
void eo_glicko2_at(const eo_glicko2_params *p, const eo_glicko2_player *pl, int64_t now,
                   eo_glicko2_player *out);

/**
 * P(A wins) for composites of ratings @p r_a, @p r_b and RD² @p rd2_a, @p rd2_b (Glicko scale),
 * with a logit offset @p field in A's favour: 1 / (1 + exp(-(g(φ)(μ_a - μ_b) + field))) with
 * φ² = φ_a² + φ_b² (Glickman's expected outcome of a game between two rated players).
 */
double eo_glicko2_p_a(double r_a, double rd2_a, double r_b, double rd2_b, double field);

/**
 * The composite of a team aggregate (eo_team_agg over eo_glicko2 strengths: rating, RD²):
 * rating Σwμ / Σw and RD² Σw²RD² / Σw² (the root-mean-square RD with full weights); for a team
 * of total weight 0, r0 and rd0².
 */
void eo_glicko2_composite(const eo_glicko2_params *p, const eo_team_agg *t, double *rating,
                          double *rd2);

/**
 * Rates one round (see eo_model_rate() for the contract: distinct players, na, nb >= 1,
 * weights in [0, 1], @p out NULL or na + nb entries). Every participant of weight > 0 is first
 * brought to the round's period (eo_glicko2_advance()); then each plays one game against the
 * composite of the other team (eo_glicko2_composite() of the participants' strengths at the
 * round's period, weights included) with score 1, 0.5 or 0, weight w and the field term in
 * team A's favour (−field for team B); in per-round mode the period is closed at once. Weight-0
 * participants are not changed. Returns 0 (arguments are the caller's to check).
 */
int eo_glicko2_rate(const eo_glicko2_params *p, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out);

/** Visible: rounds >= visible_rounds and (visible_rd == 0 or RD <= visible_rd), for @p pl as
 *  eo_glicko2_at() gives it. */
bool eo_glicko2_visible(const eo_glicko2_params *p, const eo_glicko2_player *pl);

/**
 * Admin: rating @p rating in [EO_GLICKO2_RATING_MIN, _MAX] and, when @p rd >= 0, RD @p rd in
 * [0, rd_max]; the pending games of the open period are dropped (they were measured against the
 * old rating); rounds, volatility and the open period are kept. A negative @p rd keeps the RD.
 * Returns 0, or EO_ERANGE (nothing changed) for a value outside those ranges or NaN.
 */
int eo_glicko2_set(const eo_glicko2_params *p, eo_glicko2_player *pl, double rating, double rd);

#ifdef __cplusplus
}
#endif
#endif
