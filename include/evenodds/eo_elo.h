/**
 * @file eo_elo.h
 * Classic Elo for two teams: a logistic win probability with base 10 and scale 400 on the
 * difference of the teams' strengths (team mean or team sum, per pool), a per-player K by
 * FIDE-style tiers (new players, regular players, high-rated players), partial play as a
 * weight on each member's strength and change, draws as half a win, and a field term (map or
 * side bias) added to A's logit.
 *
 * The formulas and every choice where sources differ are in docs/MODELS.md ("Elo"). This
 * header is the model's math for tests and tools; pools use it through eo_model.h
 * (EO_MODEL_ELO). Pure and deterministic: exp is the core's own eo__exp, so the same inputs
 * give the same bits on every machine.
 */
#ifndef EO_ELO_H
#define EO_ELO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Highest rating a player can hold (updates are clamped to it; admin set refuses more). */
#define EO_ELO_RATING_MAX 1e9

/** Lowest value of the floor r_min (and of r0). */
#define EO_ELO_RATING_MIN (-1e9)

/** How a team's strength is formed from its members' ratings. */
typedef enum {
    EO_ELO_TEAM_SUM = 0,  /**< Σ w·R: a bigger (or fuller) team is stronger */
    EO_ELO_TEAM_MEAN = 1  /**< Σ w·R / Σ w: the weighted mean; team sizes do not matter */
} eo_elo_team;

/** Parameters of an Elo pool (defaults from eo_elo_params_default()). */
typedef struct eo_elo_params {
    double scale;          /**< rating difference for 10:1 odds (400) */
    double r0;             /**< starting rating (1500) */
    double r_min;          /**< rating floor (0); r_min <= r0 */
    eo_elo_team team;      /**< team strength (EO_ELO_TEAM_MEAN) */
    double k_new;          /**< K while rounds < games_new (40) */
    int32_t games_new;     /**< rounds a player is new for (30) */
    double k;              /**< K otherwise (20) */
    double k_high;         /**< K once the rating is >= rating_high, after the new tier (10) */
    double rating_high;    /**< rating from which k_high applies (2400) */
    int32_t visible_rounds;/**< rounds before the rating is shown (0) */
    int32_t t_stale_days;  /**< days without a round before a lookup says stale (30) */
} eo_elo_params;

/** Fills @p p with the defaults listed in eo_elo_params. */
void eo_elo_params_default(eo_elo_params *p);

/**
 * Checks every parameter: finite; scale in [1, 1e9]; EO_ELO_RATING_MIN <= r_min <= r0 <=
 * EO_ELO_RATING_MAX; the three K in [0, 1e6]; games_new, visible_rounds in [0, 1e6];
 * t_stale_days in [0, 36500]; team one of eo_elo_team. Returns 0 or EO_EINVAL.
 */
int eo_elo_params_check(const eo_elo_params *p);

/**
 * A player's Elo state (24 bytes; eo_model_state_size() for EO_MODEL_ELO). Plain data: no
 * ownership, copy freely.
 */
typedef struct eo_elo_player {
    double rating;          /**< current rating, in [r_min, EO_ELO_RATING_MAX]; not rounded */
    int64_t last_ended_at;  /**< Unix seconds of the last rated round's end, 0 if none */
    uint32_t rounds;        /**< rated rounds (those played with weight > 0) */
    uint32_t reserved;      /**< 0 */
} eo_elo_player;

/** Sets a new player: rating r0, no rounds, no last round end. */
void eo_elo_player_init(eo_elo_player *pl, const eo_elo_params *p);

/**
 * Win probability of a side whose strength exceeds the other's by @p diff rating points, with
 * a field term @p field (natural-log logit units) in its favour:
 *   1 / (1 + 10^(−diff/scale) · e^(−field)),
 * computed as the logistic of x = diff·ln(10)/scale + field from e^(−|x|), so that swapping the
 * sides (negating both) gives exactly the other side's value. In [0, 1], never NaN for finite
 * inputs.
 */
double eo_elo_expected(const eo_elo_params *p, double diff, double field);

/**
 * Strength difference of A over B from the teams' sums of weighted ratings (@p wr_a = Σ w·R
 * over A) and weights (@p w_a = Σ w): team sum: wr_a − wr_b; team mean: wr_a/w_a − wr_b/w_b,
 * and 0 when either team's weights sum to 0 (a team that did not play counts as equal to its
 * opponent).
 */
double eo_elo_diff(const eo_elo_params *p, double wr_a, double w_a, double wr_b, double w_b);

/**
 * K for a player's next round from its state at round start: k_new while rounds < games_new,
 * else k_high when rating >= rating_high, else k.
 */
double eo_elo_k(const eo_elo_params *p, const eo_elo_player *pl);

/**
 * The rating after one round: R + K·w·(S − E), then clamped to [r_min, EO_ELO_RATING_MAX].
 * @p k from eo_elo_k(), @p w the partial-play weight in [0, 1], @p s the score (1 win, 0 loss,
 * ½ draw), @p e the expected score of the player's team.
 */
double eo_elo_new_rating(const eo_elo_params *p, double rating, double k, double w, double s,
                         double e);

/**
 * Rates one round: team A @p a[0..na), team B @p b[0..nb) (states are eo_elo_player; distinct
 * players; na, nb >= 1, na + nb <= EO_PLAYERS_MAX; weights in [0, 1]), @p winner, @p field as
 * in eo_elo_expected() in A's favour, @p at the round's end (0: unknown, last_ended_at kept).
 * P(A wins) comes from the round-start strengths (eo_elo_diff over the weighted sums); every
 * participant of weight > 0 gets eo_elo_new_rating() with its own K from its round-start
 * state, rounds + 1 and last_ended_at = @p at (when nonzero); a participant of weight 0 is left
 * unchanged. @p p_a (may be NULL) gets P(A wins); @p out (NULL or na + nb entries, A's then
 * B's) gets before/after rating, the team's expected score, K, mu = after and sigma = 0.
 * Returns 0 or EO_EINVAL (bad arguments; then nothing changes). Allocation-free.
 */
int eo_elo_rate(const eo_elo_params *p, const eo_participant *a, size_t na,
                const eo_participant *b, size_t nb, eo_winner winner, double field, int64_t at,
                double *p_a, eo_model_update *out);

/** True when the rating is shown to the player (rounds >= visible_rounds). */
bool eo_elo_visible(const eo_elo_params *p, const eo_elo_player *pl);

#ifdef __cplusplus
}
#endif
#endif
