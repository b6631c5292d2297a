/**
 * @file eo_balance.h
 * The balancer: team splits for every team size k with hard constraints (locks,
 * parties, protected players) and, within a tolerance of the best gap, secondary objectives in a
 * fixed order (parties broken, fewest players moved or the spread difference, side preferences,
 * bench fairness). It extends the exact splitter of eo_split.h, which answers the plain request
 * (no constraint, no secondary objective, epsilon 0) bit for bit. docs/BALANCER.md ("The
 * balancer: constraints and secondary objectives") states every rule, the tie rules that make
 * the answer unique, and the algorithm.
 *
 * Ratings are integers (the model's split ratings, eo_model_split_rating()), so sums and ties are
 * exact. The primary objective is |D| with D = ΣA − ΣB + field, where @c field is the map's
 * advantage for side A in rating units (0 without a map); a predictor that is monotone in D
 * (every team-sum model) gives |P(A) − 0.5| the same order, and the caller converts a tolerance
 * on P(A) into @c epsilon in rating units through it.
 *
 * Exact for N <= EO_BALANCE_EXACT_MAX within the work limit; beyond either, a swap local search
 * with restarts answers and the result says so (@c exact = 0).
 *
 * Ownership: every input is the caller's and only read during the call. eo_balance_solve()
 * allocates one result block, released with eo_balance_free(). Pure, no globals, no clock:
 * safe to call from several threads at once.
 */
#ifndef EO_BALANCE_H
#define EO_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_split.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest N the exact solver takes; larger requests (up to EO_PLAYERS_MAX) go to local search. */
#define EO_BALANCE_EXACT_MAX 64

/** A side: current team, lock and preference use it. */
typedef enum {
    EO_BALANCE_NONE = 0, /**< no team / no lock / no preference; in a move: the bench */
    EO_BALANCE_A = 1,
    EO_BALANCE_B = 2
} eo_balance_side;

/** What the secondary objectives look for. */
typedef enum {
    /** fewest players moved from their current team (NS2 "fewest swaps", seed 001) */
    EO_BALANCE_REBALANCE = 0,
    /** teams reassigned freely: the least spread difference (no top-heavy team) */
    EO_BALANCE_SCRAMBLE = 1
} eo_balance_mode;

/** One eligible player. Zero-initialised means: no team, no party, no lock, no preference. */
typedef struct eo_balance_player {
    int64_t rating;     /**< integer rating, |rating| <= 2^40 */
    uint32_t party;     /**< 0 = none; players with the same non-zero id are one party */
    int32_t priority;   /**< higher plays first when someone must sit out (then request order) */
    uint32_t weight;    /**< weight of the side preference (the pool's denial history: doubled
                         *   per round denied, halved when met; Shine); 0 is taken as 1 */
    uint8_t team;       /**< eo_balance_side: current team */
    uint8_t lock;       /**< eo_balance_side: must play on this side */
    uint8_t prefer;     /**< eo_balance_side: preferred side */
    uint8_t protect;    /**< 1: stays on its current team unless the request allows moving it */
    uint8_t sat_out;    /**< 1: sat out the previous split (bench fairness) */
} eo_balance_player;

/** The request. Zero-initialised gives: rebalance, every k, epsilon 0, no field, no limit. */
typedef struct eo_balance_request {
    eo_balance_mode mode;
    int k_min, k_max;         /**< team sizes to solve; 0 = 2 and floor(N/2) */
    int64_t epsilon;          /**< >= 0: tolerance on |D| (rating units) within which the
                               *   secondary objectives may trade gap away */
    int64_t field;            /**< side A's map advantage in rating units, |field| <= 2^46 */
    /** >= 0, at most 2^40: scramble's tolerance on |sd(A) - sd(B)| (rating units): splits
     *  within it tie on the spread term and the next terms decide; 0 compares the spreads
     *  exactly (docs/BALANCER.md, the rules, *spread*). The service's default is one rating
     *  unit (eo_model_split_unit()). */
    int64_t spread_epsilon;
    int allow_party_split;    /**< 1: parties may be split (each broken party costs, first) */
    int allow_protected;      /**< 1: protected players may be moved like the others */
    /** Search nodes for the exact solver over the whole call; 0 = no limit. Past it the
     *  remaining team sizes are answered by local search (exact = 0). The caller converts a
     *  time budget into nodes (docs/BALANCER.md gives the rate). */
    uint64_t work_limit;
    uint64_t seed;            /**< local search restarts' random seed */
    int restarts;             /**< local search starts besides the first; 0 = 4 */
} eo_balance_request;

/** One player's change of team (from != to). */
typedef struct eo_balance_move {
    uint16_t player; /**< index into the request */
    uint8_t from;    /**< current team (A or B) */
    uint8_t to;      /**< new team, or EO_BALANCE_NONE: the bench */
} eo_balance_move;

/** The objective terms of one answer, each recomputable from the teams. */
typedef struct eo_balance_terms {
    int64_t broken;      /**< parties whose members are not all on one side (A, B or bench) */
    int64_t moves;       /**< players with a current team who end elsewhere (bench included);
                          *   an objective in rebalance mode, reported in both */
    int64_t top2;        /**< scramble: 1 when the two best playing players share a team */
    double spread;       /**< |var(A) - var(B)| of the ratings (rating^2); scramble objective */
    double spread_sd;    /**< |sd(A) - sd(B)| of the ratings (rating units): within the request's
                          *   spread_epsilon the spread term counts as 0 */
    int64_t denied;      /**< sum of weights of players with a preference not on that side */
    int64_t bench_again; /**< players who sat out the previous split and sit out again */
    int64_t dev;         /**< |ΣA - ΣB + field| (the split's dev) */
} eo_balance_terms;

/** The answer for one team size. Index arrays point into the request (0-based). */
typedef struct eo_balance_split {
    int k;
    /** 0, or why this k has no answer: EO_EINVAL when a party is larger than k and may not be
     *  split (@c bad_party names it), EO_ERANGE when the locks and protected players allow no
     *  split of this size (or local search found none). Teams are empty then. */
    int err;
    uint32_t bad_party;
    const uint16_t *a, *b, *bench; /**< k, k and nbench indices, ascending */
    size_t nbench;
    int64_t sum_a, sum_b;
    int64_t gap;                   /**< |sum_a - sum_b| */
    int64_t dev;                   /**< |sum_a - sum_b + field|: the primary objective */
    double p_a;                    /**< NaN from the solver: the caller fills in the model's
                                    *   P(A wins) (eo_app_split(), eo_app.h) */
    const eo_balance_move *moves;  /**< by player index */
    size_t nmoves;
    eo_balance_terms terms;
    /** What the exact search proved before it stopped: each member a lower bound of that term
     *  for the rules' answer (and for every split within its tolerance of the least |D|).
     *  Equal to @c terms when @c exact; with exact = 0 a plugin compares the two to weigh
     *  whether acting on the answer is worth it. @c bound.dev is the least |D| of any split
     *  once that was proven. spread and spread_sd bound |var(A) - var(B)| and |sd(A) - sd(B)|
     *  (0 when nothing was proven). docs/BALANCER.md, "Output per k". */
    eo_balance_terms bound;
    int exact; /**< 1: proven to be the rules' answer; 0: the best split the budget allowed (the
                *   local search's, or the exact search's best so far when that is better) */
} eo_balance_split;

/** All answers of one request, k ascending. One allocation. */
typedef struct eo_balance_result {
    size_t count;
    eo_balance_split *split;
} eo_balance_result;

/**
 * The side player @p p is pinned to: its lock, or, when it is protected (and @p
 * allow_protected is 0) and on a team, that team. 0 when it is free; -1 when its lock and its
 * protection disagree (the request cannot be met). The balancer and the request decoder both
 * judge pins by this.
 */
int eo_balance_player_pin(const eo_balance_player *p, int allow_protected);

/**
 * Solves every k in [k_min, k_max] for @p n players (2 <= n <= EO_PLAYERS_MAX; k_max <= n/2).
 * @p req may be NULL (defaults). A request without constraints or secondary objectives
 * (see docs/BALANCER.md; any epsilon, any field) is answered by the exact splitter: without a
 * field it gives eo_split_solve()'s answers bit for bit, with one the splitter takes the field
 * as an offset (docs/BALANCER.md §3, "A map's field").
 * Returns 0 (per-k problems are in each entry's @c err), EO_EINVAL (n < 2, a rating or field
 * out of range, a bad side or mode, epsilon < 0, bad k range, two locks or protections that
 * pin one party to both sides: @p bad_party, may be NULL, names it), EO_ELIMIT (n above
 * EO_PLAYERS_MAX) or EO_ENOMEM. On success *out is the caller's, to free with eo_balance_free().
 */
int eo_balance_solve(const eo_balance_player *players, size_t n, const eo_balance_request *req,
                     eo_balance_result **out, uint32_t *bad_party);

/** Releases a result of eo_balance_solve(). NULL is a no-op. */
void eo_balance_free(eo_balance_result *r);

#ifdef __cplusplus
}
#endif
#endif
