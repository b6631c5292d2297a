/**
 * @file eo_hive.h
 * The NS2 hive skill model (seed 001, Moulton 2014; per-side offsets after Hiveskill 3.0): a
 * logistic win probability on the time-weighted mean of the members' skills over BOTH teams,
 *   p = σ( Σ_i T_i·t_i·s_i / Σ_i t_i + Σ_c T_c·t_c·k_c / Σ_c t_c + b ),
 * T_i = +1 on team A (side 1), −1 on team B (side 2); t_i the member's time weight, which
 * counts the start of a round more than its end; b the field term (map/side bias, A's logit).
 * Field players (sum over i) and commanders (sum over c, `commander: true`) have separate skills
 * and separate normalisations. A member's skill on a side is its skill plus (side 1) or minus
 * (side 2) its offset. Online update, G the score of A (1, 0, ½ for a draw):
 *   s_i += α·(G − p)·T_i·t_i / Σ_j t_j   (commanders: α_c and Σ over commanders),
 * split between the skill and the offset by the side share λ (the side played moves by the
 * full step; docs/MODELS.md "NS2 hive").
 *
 * This header is the model's math for tests and tools; pools use it through eo_model.h
 * (EO_MODEL_HIVE). Pure and deterministic: exp and log are the core's eo__exp and eo__log, so
 * the same inputs give the same bits on every machine.
 */
#ifndef EO_HIVE_H
#define EO_HIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest |skill| (field or commander, with or without offset): updates are clamped to it,
 *  eo_hive_set() refuses more. */
#define EO_HIVE_SKILL_MAX 1e6

/** Longest round_length parameter, seconds (about 116 days). */
#define EO_HIVE_ROUND_LENGTH_MAX 1e7

/** Parameters of a hive pool (defaults from eo_hive_params_default()). */
typedef struct eo_hive_params {
    double alpha;           /**< step size α of field skills (8, the seed's choice) */
    double alpha_commander; /**< step size of commander skills (8) */
    double side_share;      /**< λ in [0, 1]: share of each step that goes to the side offset
                                 (0: no offsets, the seed's model) */
    int32_t side_rounds;    /**< the share ramps up linearly over a player's first side_rounds
                                 rounds (0: no ramp) */
    double round_length;    /**< r, seconds: the median round length in a = 2^(2/r); −1 (the
                                 default) = the pool's median from its log, 0 = each round's
                                 own length (eo_hive_member_weight()) */
    double playtime_c;      /**< c: a new player's skill is c·ln(1 + playtime) (0) */
    int32_t visible_rounds; /**< rounds before the skill is shown (0) */
    int32_t t_stale_days;   /**< days without a round before a lookup says stale (30) */
    double alpha_size;      /**< N0: 0 (the default, the seed's step α·t/Σt), or the round
                                 size Σt that alpha is the step of: a round of Σt then steps
                                 its field skills by α·(Σt/N0)²·t/Σt (docs/MODELS.md) */
} eo_hive_params;

/** Fills @p p with the defaults listed in eo_hive_params. */
void eo_hive_params_default(eo_hive_params *p);

/**
 * Checks every parameter: alpha, alpha_commander in [0, 1e6]; alpha_size 0 or in
 * [1, EO_PLAYERS_MAX]; side_share in [0, 1];
 * side_rounds, visible_rounds in [0, 1e6]; round_length −1, 0 or in [1, EO_HIVE_ROUND_LENGTH_MAX];
 * playtime_c in [0, 1e3]; t_stale_days in [0, 36500]; NaN fails. Returns 0 or EO_EINVAL.
 */
int eo_hive_params_check(const eo_hive_params *p);

/** eo_hive_player.flags: the initial skill has been decided (first rated round, or set). */
#define EO_HIVE_SEEDED 1u

/**
 * A player's hive state (56 bytes; eo_model_state_size() for EO_MODEL_HIVE). Plain data: no
 * ownership, copy freely. Side-1 (team A) skill = skill + offset, side-2 (team B) skill =
 * skill − offset; the same for the commander pair.
 */
typedef struct eo_hive_player {
    double skill;          /**< field skill (the side-neutral mean; what lookups show) */
    double offset;         /**< field side offset */
    double com_skill;      /**< commander skill */
    double com_offset;     /**< commander side offset */
    int64_t last_ended_at; /**< Unix seconds of the last rated round's end, 0 if none */
    uint32_t rounds;       /**< rated rounds (weight > 0), commanding or not */
    uint32_t com_rounds;   /**< of which commanding */
    uint32_t flags;        /**< EO_HIVE_SEEDED */
    uint32_t reserved;     /**< 0 */
} eo_hive_player;

/** Sets a new player: every skill and offset 0, no rounds, not seeded. */
void eo_hive_player_init(eo_hive_player *pl);

/**
 * The seed's time weight of a stint from @p joined to @p left seconds after the round start:
 * a^(−joined) − a^(−left) with a = 2^(2/r), r = @p r seconds (> 0). @p left may be INFINITY
 * (to the end of a round of unknown length: a^(−left) = 0). Requires 0 <= joined <= left.
 * A whole round of length r weighs 1 − 2^(−2) = 0.75.
 */
double eo_hive_time_weight(double r, double joined, double left);

/**
 * A member's weight in [0, 1] for eo_hive_rate(): its time weight relative to a member who
 * played the whole round, so that every member of one round shares one scale (p and the
 * update only depend on ratios of time weights):
 *  - with `joined` or `left` and a scale r (round_length when > 0; or else, when round_length
 *    is −1, @p pool_length, the pool's median round length over its earlier rounds, when > 0;
 *    or else the round's own length
 *    L = ended_at − started_at when both are known and L > 0): with L known,
 *    (a^(−joined) − a^(−min(left, L))) / (1 − a^(−L)), left defaulting to L; with L unknown,
 *    a^(−joined) − a^(−left), left defaulting to ∞; joined defaults to 0;
 *  - else `time` when given (a fraction of a full round, taken as it is);
 *  - else eo_round_member_weight() (1 for a member with nothing given, or the linear share
 *    when joined/left are given but no scale is known).
 * NaN inputs (an unvalidated record) give 0.
 */
double eo_hive_member_weight(const eo_hive_params *p, const eo_round *r, const eo_member *m,
                             double pool_length);

/** A new player's field skill from its playtime (seconds, >= 0): c·ln(1 + playtime). */
double eo_hive_initial_skill(const eo_hive_params *p, double playtime);

/**
 * P(the side with logit @p x wins) = 1 / (1 + e^(−x)), computed from e^(−|x|) so that
 * eo_hive_expected(−x) is exactly the mirror. In [0, 1], never NaN for finite x.
 */
double eo_hive_expected(double x);

/**
 * Rates one round: team A @p a[0..na) (side 1), team B @p b[0..nb) (side 2), states
 * eo_hive_player, distinct, na, nb >= 1, na + nb <= EO_PLAYERS_MAX, weights t in [0, 1] (from
 * eo_hive_member_weight()); @p info NULL (nobody commands, no playtimes) or na + nb entries,
 * A's then B's; @p winner; @p field b in A's favour; @p at the round's end (0: unknown,
 * last_ended_at kept).
 *
 * Round start: a participant of weight > 0 not yet seeded takes eo_hive_initial_skill() of its
 * playtime when one is given (>= 0) as its field skill; either way it is seeded from then on.
 * Then x = P_A − P_B over field players + C_A − C_B over commanders + field, where
 * P_A − P_B = (Σ_A t·(s + o) − Σ_B t·(s − o)) / Σ t over the field players of both teams (0
 * when that Σ t is 0) and the commander term likewise with the commander skills; P(A) =
 * eo_hive_expected(x). A member of team k with weight t > 0 takes the step
 * g = α·(S_k − E_k)·t / Σ t (its role's α and Σ t; S_k its team's score, E_k = P(k wins)):
 * its skill moves by (1 − λ)·g and its offset by ±λ·g (+ on side 1), λ = side_share, ramped
 * by rounds/side_rounds; each result is clamped to ±EO_HIVE_SKILL_MAX. Rounds + 1 (commanders
 * also com_rounds + 1), last_ended_at = @p at when nonzero. Weight 0: entirely unchanged.
 * @p p_a (may be NULL) gets P(A); @p out (NULL or na + nb entries) gets the field skill before
 * and after (display and mu), the team's expected score, k = the α used, sigma 0.
 * Returns 0 or EO_EINVAL (bad arguments, a NaN/infinite playtime; nothing changes).
 * Allocation-free.
 */
int eo_hive_rate(const eo_hive_params *p, const eo_participant *a, size_t na,
                 const eo_participant *b, size_t nb, const eo_participant_info *info,
                 eo_winner winner, double field, int64_t at, double *p_a, eo_model_update *out);

/** True when the skill is shown to the player (rounds >= visible_rounds). */
bool eo_hive_visible(const eo_hive_params *p, const eo_hive_player *pl);

#ifdef __cplusplus
}
#endif
#endif
