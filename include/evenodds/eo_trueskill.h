/**
 * @file eo_trueskill.h
 * TrueSkill for two teams with partial play (Herbrich, Minka & Graepel, "TrueSkill: A Bayesian
 * skill rating system", NIPS 2006), in the closed form that two teams allow: one exact update
 * of every participant from round-start state, no factor-graph iteration. Partial-play weights
 * w in [0, 1] scale each member's performance in its team's sum (the mean update scales with
 * w, the variance update with w²), as in the reference implementations (moserware/Skills,
 * sublee/trueskill), whose published vectors the tests reproduce.
 *
 * The formulas, with σ̃² = σ² + τ² and sums over the members of both teams:
 *   c² = Σ w²(σ̃² + β²),  ε = Φ⁻¹((1 + p_draw)/2)·√n·β  (n: all participants, weight 0 too),
 *   t = (Σ_A w·μ − Σ_B w·μ + field) / c;
 *   winner's members μ += w·σ̃²/c·v, loser's μ −= w·σ̃²/c·v, σ² = σ̃²·(1 − w²·σ̃²/c²·W),
 *   with (v, W) TrueSkill's win corrections at (±t, ε/c), or the draw corrections at (t, ε/c)
 *   (team A's members +, team B's −). A member of weight 0 is left unchanged.
 *   P(A wins) = Φ((Σ_A w·μ − Σ_B w·μ + field) / √(Σ w²σ² + Σ w²·β²)) (no τ, as published);
 *   quality q = √(Σw²·β² / (Σw²·β² + Σ w²σ²)) · exp(−(Σ_A w·μ − Σ_B w·μ + field)² /
 *   (2(Σw²·β² + Σ w²σ²))).
 * docs/MODELS.md ("TrueSkill") states every choice where the sources differ or are silent.
 *
 * Pure and deterministic: all Gaussian functions are the core's own (no libm exp or erfc), so a
 * replay gives the same bits with any C library. No allocation. Never NaN or infinity from
 * finite inputs: extreme upsets use scaled (erfcx) forms, and means are kept within
 * ±EO_TRUESKILL_MU_MAX, deviations within [0, EO_TRUESKILL_SIGMA_MAX].
 */
#ifndef EO_TRUESKILL_H
#define EO_TRUESKILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest |μ| a player can hold (updates are clamped to it; admin sets beyond it fail). */
#define EO_TRUESKILL_MU_MAX 1e12

/** Largest σ a player can hold (updates are clamped to it; admin sets beyond it fail). */
#define EO_TRUESKILL_SIGMA_MAX 1e6

/** Parameters of a TrueSkill pool (defaults from eo_trueskill_params_default()). */
typedef struct eo_trueskill_params {
    double mu;               /**< starting mean μ0 (25) */
    double sigma;            /**< starting deviation σ0 (25/3) */
    double beta;             /**< performance deviation β (25/6), > 0 */
    double tau;              /**< dynamics τ: σ² grows by τ² before each update (25/300) */
    double draw_probability; /**< probability of a draw between equal teams, in [0, 1) (0.10) */
    double display_k;        /**< display = μ − k·σ (3) */
    int32_t visible_rounds;  /**< rounds before the rating is visible (0) */
    double visible_sigma;    /**< visible only once σ <= this; 0: not used (0) */
    int32_t t_stale_days;    /**< days without a round before a lookup says stale (30) */
} eo_trueskill_params;

/** Fills @p p with the published defaults (μ 25, σ 25/3, β 25/6, τ 25/300, draw 0.10, k 3). */
void eo_trueskill_params_default(eo_trueskill_params *p);

/**
 * Checks every parameter: all finite; |mu| <= EO_TRUESKILL_MU_MAX; 0 < sigma <=
 * EO_TRUESKILL_SIGMA_MAX; 0 < beta <= 1e6; 0 <= tau <= 1e6; 0 <= draw_probability < 1;
 * 0 <= display_k <= 1000; visible_rounds >= 0; 0 <= visible_sigma <= EO_TRUESKILL_SIGMA_MAX;
 * 0 <= t_stale_days <= 36500. Returns 0 or EO_EINVAL.
 */
int eo_trueskill_params_check(const eo_trueskill_params *p);

/** A player's TrueSkill state (32 bytes, no owned memory). */
typedef struct eo_trueskill_player {
    double mu;             /**< mean μ, in [−EO_TRUESKILL_MU_MAX, EO_TRUESKILL_MU_MAX] */
    double sigma;          /**< deviation σ, in [0, EO_TRUESKILL_SIGMA_MAX] */
    uint32_t rounds;       /**< rated rounds played (with weight > 0) */
    uint32_t reserved;     /**< zero */
    int64_t last_ended_at; /**< Unix seconds of the last rated round's end, 0 if none */
} eo_trueskill_player;

/** Sets a new player: μ0, σ0, no rounds, no last end. */
void eo_trueskill_player_init(eo_trueskill_player *pl, const eo_trueskill_params *p);

/** A member of a team: its player and its partial-play weight in [0, 1]. */
typedef struct eo_trueskill_member {
    eo_trueskill_player *pl;
    double w;
} eo_trueskill_member;

/**
 * The draw margin ε = Φ⁻¹((1 + p_draw)/2)·√n·β for @p n participants (μ units; 0 when
 * draw_probability is 0). Computed as −Φ⁻¹((1 − p_draw)/2), which keeps its precision for
 * p_draw close to 1.
 */
double eo_trueskill_draw_margin(const eo_trueskill_params *p, size_t n);

/**
 * P(team A wins) for teams @p a [0..na) and @p b [0..nb) at their current states, with a field
 * term @p field in A's favour (μ units; 0 for none): Φ(Δ/√(Σw²σ² + Σw²β²)) as in the header's
 * summary. ½ when no member has a weight, and for invalid arguments (NULL, an empty team,
 * more than EO_PLAYERS_MAX members, a weight outside [0, 1]). Members are only read.
 */
double eo_trueskill_win_probability(const eo_trueskill_params *p, const eo_trueskill_member *a,
                                    size_t na, const eo_trueskill_member *b, size_t nb,
                                    double field);

/** Two-team match quality in [0, 1] (1 when no member has a weight, and for invalid arguments
 *  as above). A non-finite @p field reads as 0 here and above. Members are only read. */
double eo_trueskill_quality(const eo_trueskill_params *p, const eo_trueskill_member *a,
                            size_t na, const eo_trueskill_member *b, size_t nb, double field);

/** What one round did to one participant. */
typedef struct eo_trueskill_update {
    double mu_before, sigma_before; /**< state at round start */
    double mu, sigma;               /**< state after the round */
    double expected;                /**< P(this member's team wins) at round start */
} eo_trueskill_update;

/**
 * Rates one round: team A @p a [0..na), team B @p b [0..nb) (distinct players, na, nb >= 1,
 * na + nb <= EO_PLAYERS_MAX, weights in [0, 1]), @p winner, a field term @p field in A's
 * favour (finite, μ units), @p ended_at the round's end (Unix seconds; 0: unknown, the
 * players' last end is kept). Every participant is updated from round-start state; those with
 * weight > 0 count the round (rounds + 1, last end = @p ended_at). Weight-0 members are left
 * unchanged but count in n for the draw margin. @p out is NULL or receives na + nb updates,
 * A's then B's; @p p_a (may be NULL) receives P(A wins) at round start as
 * eo_trueskill_win_probability() gives it. Returns 0 or EO_EINVAL (bad arguments: then no
 * player is changed). A player must not appear twice (not checked).
 */
int eo_trueskill_rate(const eo_trueskill_params *p, const eo_trueskill_member *a, size_t na,
                      const eo_trueskill_member *b, size_t nb, eo_winner winner, double field,
                      int64_t ended_at, double *p_a, eo_trueskill_update *out);

/** The number players see: μ − display_k·σ. */
double eo_trueskill_display(const eo_trueskill_params *p, const eo_trueskill_player *pl);

/** True when rounds >= visible_rounds and (visible_sigma is 0 or σ <= visible_sigma). */
bool eo_trueskill_visible(const eo_trueskill_params *p, const eo_trueskill_player *pl);

/**
 * Admin: sets μ to @p mu and, when @p sigma >= 0, σ to @p sigma (a negative @p sigma keeps σ).
 * Rounds and last end are kept. Returns 0; EO_EINVAL for a NULL @p pl, a NaN or infinite
 * @p mu or a NaN @p sigma; EO_ERANGE when |@p mu| > EO_TRUESKILL_MU_MAX or @p sigma >
 * EO_TRUESKILL_SIGMA_MAX (+inf included). Values are never clamped; on error nothing changes.
 */
int eo_trueskill_set(eo_trueskill_player *pl, double mu, double sigma);

#ifdef __cplusplus
}
#endif
#endif
