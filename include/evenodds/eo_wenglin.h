/**
 * @file eo_wenglin.h
 * The Weng-Lin model (Weng & Lin, "A Bayesian Approximation Method for Online Ranking", JMLR 12,
 * 2011), as the OpenSkill libraries implement it (openskill.py, openskill.js), for two teams:
 * Bradley-Terry with full pairing (the paper's Algorithm 1) and Plackett-Luce (Algorithm 4),
 * each player a Gaussian N(μ, σ²), a team's strength the weighted sum of its members' skills.
 *
 * For two teams the two variants are the same update in exact arithmetic (docs/MODELS.md,
 * "Weng-Lin", shows it); both are computed as their algorithms state them and agree to
 * rounding. Partial play: a member of weight w in [0, 1] enters its team's strength as w·θ, so
 * its mean update scales with w and its variance update with w² (TrueSkill's rule, our choice
 * for Weng-Lin; at weight 1 everywhere this is exactly openskill's update). Formulas, choices
 * and sources are in docs/MODELS.md; pools use the model through eo_model.h (EO_MODEL_WENGLIN).
 *
 * The update, with σ̃² = σ² + τ² per member and team sums over members of weight w:
 *   μ_t = Σ w·μ (+ field for team A),  v_t = Σ w²·σ̃²,  c = √(v_A + v_B + 2β²),
 *   a member of team t:  μ += w·σ̃²·om_t,  σ² = σ̃²·max(1 − w²·σ̃²·de_t, κ),
 * with om_t, de_t from eo_wenglin_team_terms(). P(A wins) and quality are openskill's and
 * TrueSkill's two-team formulas (eo_wenglin_predict(), eo_wenglin_quality()).
 *
 * Pure and deterministic: exp is the core's eo__exp and Φ the core's Gaussian helper, so the
 * same inputs give the same bits on every machine. No allocation. No NaN or infinity from
 * finite inputs: updates keep |μ| <= EO_WENGLIN_MU_MAX and σ <= EO_WENGLIN_SIGMA_MAX.
 */
#ifndef EO_WENGLIN_H
#define EO_WENGLIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest |μ| a player can hold (admin sets beyond it are refused; updates stop at it). */
#define EO_WENGLIN_MU_MAX 1e9

/** Largest σ a player can hold (admin sets beyond it are refused; updates stop at it). */
#define EO_WENGLIN_SIGMA_MAX 1e6

/** The update's algorithm (identical results for two teams, up to rounding). */
typedef enum {
    EO_WENGLIN_BT_FULL = 0, /**< Bradley-Terry, full pairing (Weng & Lin Algorithm 1) */
    EO_WENGLIN_PL = 1       /**< Plackett-Luce (Weng & Lin Algorithm 4) */
} eo_wenglin_variant;

/** Parameters of a Weng-Lin pool (defaults from eo_wenglin_params_default(): openskill's). */
typedef struct eo_wenglin_params {
    double mu;              /**< starting mean (25) */
    double sigma;           /**< starting deviation (25/3) */
    double beta;            /**< performance deviation of a team (25/6) */
    double tau;             /**< dynamics: σ² grows by τ² before each update (25/300) */
    double kappa;           /**< floor of the variance shrink factor (0.0001) */
    eo_wenglin_variant variant; /**< EO_WENGLIN_PL (openskill's default model) */
    bool limit_sigma;       /**< an update never raises σ above its round-start value
                                 (openskill's limit_sigma; false) */
    double display_k;       /**< display = μ − k·σ (3) */
    int32_t visible_rounds; /**< rounds before the rating is visible (0) */
    double visible_sigma;   /**< visible only once σ <= this; 0: not used (0) */
    int32_t t_stale_days;   /**< days without a round before a lookup says stale (30) */
} eo_wenglin_params;

/** Fills @p p with the defaults listed in eo_wenglin_params. */
void eo_wenglin_params_default(eo_wenglin_params *p);

/**
 * Checks every parameter: finite; |mu| <= EO_WENGLIN_MU_MAX; sigma in [1e-9,
 * EO_WENGLIN_SIGMA_MAX]; beta in [1e-9, 1e6]; tau in [0, 1e6]; kappa in [1e-12, 1]; the variant
 * one of the enum; display_k in [0, 1000]; visible_rounds in [0, 1e9]; visible_sigma in [0,
 * EO_WENGLIN_SIGMA_MAX]; t_stale_days in [0, 36500]. Returns 0 or EO_EINVAL (also for NULL).
 */
int eo_wenglin_params_check(const eo_wenglin_params *p);

/** A player's Weng-Lin state (32 bytes). Plain data: no ownership. */
typedef struct eo_wenglin_player {
    double mu;              /**< mean, in [−EO_WENGLIN_MU_MAX, EO_WENGLIN_MU_MAX] */
    double sigma;           /**< deviation, in [0, EO_WENGLIN_SIGMA_MAX] */
    int64_t last_ended_at;  /**< Unix seconds of the last rated round's end, 0 if none */
    uint32_t rounds;        /**< rated rounds (played with weight > 0) */
    uint32_t reserved;      /**< 0 */
} eo_wenglin_player;

/** Sets a new player: (mu, sigma) of @p p, no rounds, no last round end. */
void eo_wenglin_player_init(eo_wenglin_player *pl, const eo_wenglin_params *p);

/**
 * P(A wins) for teams given as aggregates (eo_team_agg: Σ w·μ, Σ w²·σ², Σ w², no τ) with
 * @p field added to A's mean (μ units): openskill's predict_win for two teams, with its
 * n·β² read as β²·Σ w² (the same at weight 1):
 *   Φ((a.mu − b.mu + field) / √(a.var + b.var + β²·(a.w2 + b.w2))),
 * ½ when that variance is 0. A non-finite @p field reads as 0. Swapping the teams (and
 * negating field) gives 1 minus the value up to one rounding.
 */
double eo_wenglin_predict(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field);

/**
 * Two-team match quality as TrueSkill defines it, on the same variance V as predict:
 *   √(β²·(a.w2 + b.w2) / V) · exp(−(a.mu − b.mu + field)² / (2V)), in [0, 1];
 * 1 when V is 0. A non-finite @p field reads as 0.
 */
double eo_wenglin_quality(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field);

/**
 * The team-level terms of one update, per unit of member variance: for team A (index 0) and
 * B (1), om[t] = Ω_t/σ_t² and de[t] = δ_t/σ_t² of the paper (δ with γ = σ_t/c applied), from
 * the teams' means @p mu_a, @p mu_b (Σ w·μ) and variances @p var_a, @p var_b (Σ w²·σ̃², τ
 * included), the outcome, and @p field added to A's mean. A member of team t with weight w and
 * variance σ̃² then gets μ += w·σ̃²·om[t] and σ² = σ̃²·max(1 − w²·σ̃²·de[t], κ).
 * Both variants: c = √(var_a + var_b + 2β²), x = (mu_a + field − mu_b)/c.
 * BT-full: p = 1/(1 + e^(−x)) for A (the mirror for B), s = 1, ½ or 0 as the team won, drew
 * or lost; om = (s − p)/c, de = γ·p·(1 − p)/c².
 * PL: Plackett-Luce's sums over the teams ranked at or below each team (a draw ties the two
 * ranks), as Algorithm 4 states them; for two teams the same values up to rounding.
 * Finite for every finite input (exp overflow reads as a certain outcome). @p winner must be
 * EO_WIN_A, EO_WIN_B or EO_DRAW (anything else reads as a draw).
 */
void eo_wenglin_team_terms(const eo_wenglin_params *p, double mu_a, double var_a, double mu_b,
                           double var_b, eo_winner winner, double field, double om[2],
                           double de[2]);

/**
 * Rates one round: team A @p a[0..na), team B @p b[0..nb) (states are eo_wenglin_player;
 * distinct players, not checked; na, nb >= 1, na + nb <= EO_PLAYERS_MAX; weights in [0, 1]),
 * @p winner, @p field on A's mean (finite), @p at the round's end (0: unknown, last_ended_at
 * kept). Everyone is computed from round-start state; participants of weight 0 are left
 * entirely unchanged; the others get rounds + 1 and last_ended_at = @p at (when nonzero).
 * @p p_a (may be NULL) gets eo_wenglin_predict() of the round-start teams; @p out (NULL or
 * na + nb entries, A's then B's) gets display before and after (μ − k·σ), the team's P, k = 0,
 * μ and σ after. Returns 0 or EO_EINVAL (bad arguments; then nothing changes).
 */
int eo_wenglin_rate(const eo_wenglin_params *p, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out);

/** The number players see: μ − display_k·σ. */
double eo_wenglin_display(const eo_wenglin_params *p, const eo_wenglin_player *pl);

/** True when rounds >= visible_rounds and (visible_sigma == 0 or σ <= visible_sigma). */
bool eo_wenglin_visible(const eo_wenglin_params *p, const eo_wenglin_player *pl);

/**
 * Admin: sets μ to @p mu and, when @p sigma >= 0, σ to @p sigma. Rounds and last end are
 * kept. Returns 0; EO_EINVAL for NULL, a non-finite @p mu or a NaN @p sigma; EO_ERANGE when
 * |mu| > EO_WENGLIN_MU_MAX or sigma > EO_WENGLIN_SIGMA_MAX (never clamped). On error nothing
 * changes.
 */
int eo_wenglin_set(eo_wenglin_player *pl, double mu, double sigma);

#ifdef __cplusplus
}
#endif
#endif
