/**
 * @file eo_autobalance.h
 * Mid-round autobalance: given the policy, the current teams and the time, says
 * whether the teams are unbalanced and by which named rule, and either the ordered moves that
 * fix it (each with its reason) or the named rule that keeps autobalance from acting.
 *
 * Sources: seed 000 ("Autobalance on Mid-Round Joins", F11: when |k(A) − k(B)| >= 2 move the
 * larger team's player(s) whose rating brings the sums closest, several moves chosen jointly;
 * when the join leaves |Δk| = 1, the odd player goes where the sum gap is least; act within 10 s),
 * seed 003 (Sector's Edge: off in sandbox, tournament/scrim, FFA and the last 3 minutes; size rules
 * 2v0, 3v1, 4v2; a power-gap threshold; movers not in a party, not autobalanced before, in the
 * bottom 2/3 of their team by points; wait 20 s; never overshoot the other way) and Valve's TF2
 * autobalance (dead players first, recent joiners first, 300 s protection after a move).
 * docs/BALANCER.md "Autobalance" states every rule, the tie rules and the complexity.
 *
 * Ratings are the balancer's integers (eo_model_split_rating(): the model's mean in units of
 * 1/eo_model_split_unit()), so sums and ties are exact. Times are Unix seconds supplied by the
 * caller (the core reads no clock); the caller also keeps the one piece of state autobalance
 * needs across calls, the time it first saw the current imbalance (@c unbalanced_since).
 *
 * Ownership: every input is the caller's and is only read during the call; results are written
 * into caller-owned structs of fixed size (no allocation). Pure, no globals: thread-safe.
 */
#ifndef EO_AUTOBALANCE_H
#define EO_AUTOBALANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest number of players on one team. */
#define EO_AB_TEAM_MAX 64
/** Largest number of players in one call (both teams). */
#define EO_AB_PLAYERS_MAX (2 * EO_AB_TEAM_MAX)
/** Most moves one call can return (floor(|Δk| / 2), + 1 for an odd |Δk| <= 63: at most 32;
 *  a swap is 2). */
#define EO_AB_MOVES_MAX (EO_AB_TEAM_MAX / 2)
/** Largest |rating| accepted (as eo_split). */
#define EO_AB_RATING_MAX (INT64_C(1) << 40)
/** "Never" for a time (last_moved, unbalanced_since). */
#define EO_AB_NEVER INT64_MIN
/** time_left when the round has no clock (the last-minutes rule then never applies). */
#define EO_AB_TIME_UNKNOWN INT64_C(-1)

/** Defaults (seconds) and seed 003's alternative delay. */
#define EO_AB_DEFAULT_LAST_MINUTES 180
#define EO_AB_DEFAULT_DELAY 10            /**< seed 000: act within 10 s */
#define EO_AB_DELAY_SECTORS_EDGE 20       /**< seed 003: wait 20 s */
#define EO_AB_DEFAULT_COOLDOWN 300        /**< Valve: protected 300 s after a move */
#define EO_AB_DEFAULT_P_THRESHOLD 0.10    /**< |P(A) − 0.5| with a predictor */
#define EO_AB_DEFAULT_WORK_LIMIT UINT64_C(2000000) /**< search nodes per call */

/** A team. */
typedef enum { EO_AB_A = 0, EO_AB_B = 1, EO_AB_TEAM_NONE = 2 } eo_ab_team;

/** The game mode kind: autobalance acts only in EO_AB_MODE_NORMAL. */
typedef enum {
    EO_AB_MODE_NORMAL = 0,     /**< public team game */
    EO_AB_MODE_SANDBOX = 1,    /**< sandbox, trailer or endless mode (seed 003) */
    EO_AB_MODE_TOURNAMENT = 2, /**< tournament or scrimmage: teams are fixed (seed 003, Valve) */
    EO_AB_MODE_FFA = 3,        /**< free for all: no teams (seed 003) */
    EO_AB_MODE_ARENA = 4       /**< arena or duel: teams come from the queue split (Valve) */
} eo_ab_mode;

/** When team sizes alone count as unbalanced. */
typedef enum {
    /** |k(A) − k(B)| >= size_gap_min (default 2: seed 000 F11, Valve's unbalance limit 1). */
    EO_AB_SIZE_GAP = 0,
    /** Seed 003's list: 2 (or more) v 0, 3 (or more) v 1 (or less), 4 (or more) v 2 (or
     *  less); i.e. |Δk| >= 2 and the smaller team has at most 2 players. 5v3 is not. */
    EO_AB_SIZE_SECTORS_EDGE = 1
} eo_ab_size_rule;

/**
 * Optional predictor of P(A wins) from the teams' integer rating sums and sizes (e.g. the
 * pool's model through eo_model_predict() on the means). Must return a value in [0, 1].
 */
typedef double (*eo_ab_predict_fn)(void *ctx, int64_t sum_a, int n_a, int64_t sum_b, int n_b);

/** The operator's policy. Fill with eo_autobalance_policy_default(), then change fields. */
typedef struct eo_ab_policy {
    eo_ab_mode mode;          /**< default EO_AB_MODE_NORMAL */
    bool enabled;             /**< default true */
    int64_t last_minutes;     /**< s; off when time_left < this (default 180; 0 = never off) */
    int64_t delay;            /**< s from first detection to acting (default 10; 0 = at once) */
    int64_t cooldown;         /**< s after a player's last move in which he may not move
                                   again (default 300; INT64_MAX = once per round, seed 003) */
    eo_ab_size_rule size_rule; /**< default EO_AB_SIZE_GAP */
    int size_gap_min;         /**< EO_AB_SIZE_GAP only: >= 2 (default 2) */
    /** Strength rule without a predictor: unbalanced when |ΣA − ΣB| >= this (rating units);
     *  0 = no strength rule (default: the scale depends on the model). */
    int64_t strength_threshold;
    /** Strength rule with a predictor: unbalanced when |P(A) − 0.5| >= this, in (0, 0.5];
     *  0 = no strength rule. Default EO_AB_DEFAULT_P_THRESHOLD. */
    double p_threshold;
    eo_ab_predict_fn predict; /**< may be NULL (default) */
    void *predict_ctx;
    bool allow_party;         /**< party members may move (default false) */
    bool dead_only;           /**< only dead players may move (seed 003 moves on death; Valve's
                                   first 15 s); default false: dead is a preference only */
    bool strength_swaps;      /**< the strength rule may swap one player from each team when
                                   no single move fits (default true) */
    /** Size moves: among move sets whose resulting |ΣA − ΣB| is within this of the least,
     *  the preferred movers (dead, recent joiners) win. Rating units, >= 0 (default 0: the
     *  least gap first, preference only breaks ties). */
    int64_t gap_tolerance;
    /** Odd |Δk| (3, 5, ...): after floor(|Δk| / 2) moves one team is still larger by one, and
     *  seed 000 puts that odd player where |ΣA − ΣB| is least. When true (default), the joint
     *  choice also weighs floor(|Δk| / 2) + 1 moves and takes them only when their least gap
     *  beats the fewer moves' least gap by more than gap_tolerance (fewer moves win ties). */
    bool odd_extra;
    /** Search nodes allowed for the joint choice; past it the best move set found so far is
     *  returned with exact = false. 0 = EO_AB_DEFAULT_WORK_LIMIT. */
    uint64_t work_limit;
} eo_ab_policy;

/** One player on a team. */
typedef struct eo_ab_player {
    uint32_t id;          /**< the caller's id (an index into its own table), echoed in moves */
    eo_ab_team team;      /**< EO_AB_A or EO_AB_B */
    int64_t rating;       /**< integer rating (the model's mean in split units), |r| <= 2^40 */
    uint32_t party;       /**< party id, 0 = none */
    bool is_protected;    /**< the game says: do not move (charged medic, flag carrier ...) */
    bool dead;            /**< dead now: moved first */
    int64_t joined_at;    /**< s (Unix) when he joined this round; later = more recent */
    int64_t last_moved;   /**< s when autobalance last moved him, or EO_AB_NEVER */
    int64_t score;        /**< in-round score (points); read only when has_scores */
} eo_ab_player;

/** The situation of one call. */
typedef struct eo_ab_state {
    const eo_ab_player *players; /**< n players, caller-owned */
    size_t n;                    /**< 0 .. EO_AB_PLAYERS_MAX */
    bool has_scores;             /**< in-round scores are given (bottom-2/3 rule applies) */
    int64_t now;                 /**< s (Unix) */
    int64_t time_left;           /**< s left in the round, or EO_AB_TIME_UNKNOWN */
    /** When the caller first saw the current imbalance, or EO_AB_NEVER. When a call reports
     *  teams unbalanced and this was NEVER, store @c now and pass it next time; reset it to
     *  NEVER when a call reports them balanced or after acting on the moves. */
    int64_t unbalanced_since;
} eo_ab_state;

/** Why teams count as unbalanced. */
typedef enum {
    EO_AB_RULE_NONE = 0,     /**< they do not */
    EO_AB_RULE_SIZE_GAP,     /**< |Δk| >= size_gap_min */
    EO_AB_RULE_SIZE_2V0,     /**< seed 003: 2 (or more) v 0 */
    EO_AB_RULE_SIZE_3V1,     /**< seed 003: 3 (or more) v 1 (or less) */
    EO_AB_RULE_SIZE_4V2,     /**< seed 003: 4 (or more) v 2 (or less) */
    EO_AB_RULE_STRENGTH_GAP  /**< sizes fine; rating-sum gap or |P(A) − 0.5| over threshold */
} eo_ab_rule;

/** What the call decided: act (moves given) or the rule that kept autobalance off. */
typedef enum {
    EO_AB_ACT = 0,           /**< moves are given */
    EO_AB_OFF_DISABLED,      /**< policy.enabled is false */
    EO_AB_OFF_MODE,          /**< the mode is not NORMAL */
    EO_AB_OFF_LAST_MINUTES,  /**< time_left < last_minutes */
    EO_AB_OFF_BALANCED,      /**< nothing to fix */
    EO_AB_OFF_DELAY,         /**< unbalanced, delay not yet elapsed: call again at act_at */
    EO_AB_OFF_NO_ELIGIBLE,   /**< unbalanced, nobody may move */
    EO_AB_OFF_NO_IMPROVEMENT /**< strength rule: no allowed move or swap lowers the gap
                                  without overshooting the threshold the other way */
} eo_ab_action;

/** Why a player moves. */
typedef enum {
    EO_AB_REASON_SIZE_GAP = 0,
    EO_AB_REASON_STRENGTH_GAP,
    EO_AB_REASON_JOIN_PLACEMENT
} eo_ab_reason;

/** One move. */
typedef struct eo_ab_move {
    uint16_t index;      /**< position in the state's players array */
    uint32_t id;         /**< that player's id */
    eo_ab_team from, to;
    eo_ab_reason reason;
} eo_ab_move;

/** The answer of eo_autobalance_check(). */
typedef struct eo_ab_result {
    eo_ab_rule rule;       /**< why unbalanced, or EO_AB_RULE_NONE */
    eo_ab_action action;   /**< EO_AB_ACT, or the rule that kept it off */
    int64_t act_at;        /**< EO_AB_OFF_DELAY: the time acting becomes due; else NEVER */
    int ka, kb;            /**< team sizes now */
    int64_t sum_a, sum_b;  /**< rating sums now */
    int needed;            /**< moves the size rule needs (floor(|Δk| / 2)); 0 otherwise.
                                nmoves may be needed + 1 (odd |Δk|, policy odd_extra) */
    int short_by;          /**< needed − size moves given when too few players may move */
    int eligible;          /**< players of the moving team who may move */
    bool exact;            /**< the moves are the ones the documented rules name (false only
                                when the work limit cut the joint search) */
    size_t nmoves;
    eo_ab_move moves[EO_AB_MOVES_MAX]; /**< in order: dead first, then recent joiners, ... */
    int64_t gap_before;    /**< sum_a − sum_b (signed) */
    int64_t gap_after;     /**< the same after the moves */
    double p_before, p_after; /**< predictor's P(A) before/after, NaN without a predictor */
} eo_ab_result;

/** The placement of a joining player. */
typedef struct eo_ab_placement {
    eo_ab_team team;       /**< A or B; EO_AB_TEAM_NONE when off (the game decides) */
    eo_ab_action action;   /**< EO_AB_ACT, EO_AB_OFF_DISABLED or EO_AB_OFF_MODE */
    bool by_size;          /**< the size rule left one team only (else: least gap) */
    int64_t gap_after;     /**< sum_a − sum_b with the joiner placed (0 when off) */
} eo_ab_placement;

/** Sets @p p to the defaults listed on eo_ab_policy. */
void eo_autobalance_policy_default(eo_ab_policy *p);

/**
 * Decides what autobalance does now. Rules in order (docs/BALANCER.md "Autobalance"): off when
 * disabled, when the mode is not NORMAL, in the last minutes; else the size rule (m =
 * floor(|Δk| / 2) players move from the larger team, or one more when |Δk| is odd and that
 * gives a smaller gap (policy odd_extra), chosen jointly: the least resulting |ΣA − ΣB|, ties
 * to the preferred movers), else the strength rule (one move from the
 * stronger team, or a swap, lowering the gap without overshooting); a found imbalance waits for
 * the delay. Only eligible players move: not in a party (unless allowed), not protected, not
 * moved within the cooldown, dead when dead_only, and with scores in the bottom
 * floor(2c/3) of their team by score (c = the team's players passing the other tests).
 * Fewer eligible players than needed: all of them move and short_by says how many are missing.
 * Returns 0, EO_EINVAL (NULL argument, team not A/B, rating out of range, bad policy value) or
 * EO_ELIMIT (more than EO_AB_TEAM_MAX on a team); *out is written on success only.
 */
int eo_autobalance_check(const eo_ab_policy *pol, const eo_ab_state *st, eo_ab_result *out);

/**
 * Where a joining player of rating @p rating goes: of the teams whose join leaves the size
 * rule satisfied, the one with the least |ΣA − ΣB| after the join (ties: the smaller team,
 * then A); when only one does, that one; when neither does (already unbalanced), the smaller
 * team. With equal teams this is seed 000's "odd player" rule. Off (team NONE) when disabled or
 * the mode is not NORMAL. @p players / @p n as in eo_ab_state (the joiner not among them).
 * Returns 0, EO_EINVAL or EO_ELIMIT as eo_autobalance_check().
 */
int eo_autobalance_place_joiner(const eo_ab_policy *pol, const eo_ab_player *players, size_t n,
                                int64_t rating, eo_ab_placement *out);

/** Names for logs and JSON ("size_gap", "size_2v0", "strength_gap", "none" ...). Static. */
const char *eo_ab_rule_name(eo_ab_rule r);
/** "act", "disabled", "mode", "last_minutes", "balanced", "delay", "no_eligible",
 *  "no_improvement". Static. */
const char *eo_ab_action_name(eo_ab_action a);
/** "size_gap", "strength_gap", "join_placement". Static. */
const char *eo_ab_reason_name(eo_ab_reason r);

#ifdef __cplusplus
}
#endif
#endif
