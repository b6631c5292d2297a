/**
 * @file eo_eval.h
 * One-step-ahead evaluation of a model over a round log (`evenodds eval`, docs/EVAL.md): the
 * figures of eo_metrics.h over every scored round, a calibration table of P(A) in ten bins,
 * the same figures over the tightest fifth of the rounds (seed 004's tight-match comparison)
 * and split by the players' experience.
 *
 * The caller folds the log through a pool and, for each round in file order, calls
 * eo_eval_players() (every round, so experience counts from the file's start), then
 * eo_eval_add() with the pool's P(A) at round start when the round is to be scored.
 *
 * Draws: counted (rounds, draws) but left out of every figure, as `evenodds replay` leaves
 * them out, except @c brier_draws_half, seed 000's F6 with a draw as outcome 0.5 (the pool's
 * Brier counts draws so).
 *
 * Pure: no I/O, no clock. Ownership: an eo_eval owns its memory; eo_eval_destroy() frees it.
 * Thread safety: none; one thread at a time per accumulator.
 */
#ifndef EO_EVAL_H
#define EO_EVAL_H

#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_metrics.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Calibration bins: bin i holds the rounds with floor(10·P(A)) = i (P(A) = 1 in bin 9). */
#define EO_EVAL_CALIB_BINS 10

/** Tightest rounds: the ceil(n / EO_EVAL_TIGHT_DIV) counted rounds with the smallest
 *  |P(A) − 0.5|, ties broken by file order (earlier first): the tightest 20 %. */
#define EO_EVAL_TIGHT_DIV 5

/** Experience groups by the round's mean experience e: [0, 10), [10, 50), [50, ∞). */
#define EO_EVAL_EXP_GROUPS 3
#define EO_EVAL_EXP_MID 10.0
#define EO_EVAL_EXP_HIGH 50.0

typedef struct eo_eval eo_eval;

/** Creates an empty accumulator in @p out. Returns 0, EO_EINVAL (@p out NULL) or EO_ENOMEM. */
int eo_eval_create(eo_eval **out);

/** Frees @p ev and everything it owns. NULL is a no-op. */
void eo_eval_destroy(eo_eval *ev);

/**
 * A round's experience: into @p mean, the mean over the round's members (both teams) of the
 * number of earlier rounds given to this function in which each member appeared (on either
 * team, any time played, draws included); then counts this round for each member. Call it for
 * every round of the log in order, scored or not. Members are told apart by id only.
 * Returns 0, or EO_EINVAL (NULL argument, a team empty, a NULL id; nothing counted) or
 * EO_ENOMEM (nothing counted).
 */
int eo_eval_players(eo_eval *ev, const eo_round *r, double *mean);

/**
 * Scores one round: @p p_a is P(A wins) at round start in [0, 1], @p winner its outcome,
 * @p experience the round's mean experience (eo_eval_players(); >= 0). A draw is counted and
 * enters only @c brier_draws_half. Returns 0, or EO_EINVAL (@p p_a outside [0, 1] or NaN, bad
 * winner, experience negative or NaN; @p ev unchanged) or EO_ENOMEM (@p ev unchanged).
 */
int eo_eval_add(eo_eval *ev, double p_a, eo_winner winner, double experience);

/** One calibration bin, P(A) in [@c from, @c to) (the last bin includes 1). */
typedef struct eo_eval_bin {
    double from, to;
    uint64_t count;  /**< counted rounds (draws left out) in the bin */
    double mean_p;   /**< mean P(A) of those rounds (NaN when count is 0) */
    double win_rate; /**< share of them that A won (NaN when count is 0) */
} eo_eval_bin;

/** Figures of one experience group: rounds with mean experience in [@c from, @c to). */
typedef struct eo_eval_group {
    double from, to;      /**< @c to is INFINITY for the last group */
    uint64_t draws;       /**< scored draws in the group (left out of @c m) */
    eo_metrics_result m;  /**< counted rounds of the group */
} eo_eval_group;

/** Everything eo_eval_get() computes. NaN where a figure has no rounds. */
typedef struct eo_eval_result {
    uint64_t scored;          /**< rounds given to eo_eval_add(), draws included */
    uint64_t draws;           /**< of which draws */
    eo_metrics_result all;    /**< the counted rounds: scored minus draws */
    double brier_draws_half;  /**< F6 over every scored round, a draw as outcome 0.5 */
    eo_eval_bin calib[EO_EVAL_CALIB_BINS];
    double ece;               /**< Σ_bins count/all.count · |mean_p − win_rate| */
    eo_metrics_result tight;  /**< the tightest ceil(all.count / 5) counted rounds */
    double tight_margin;      /**< largest |P(A) − 0.5| among them (NaN when none) */
    eo_eval_group exp[EO_EVAL_EXP_GROUPS];
} eo_eval_result;

/**
 * The figures so far into @p out. Sorts a copy of the counted predictions for the tight
 * selection (16 bytes a round, freed before returning). Returns 0, EO_EINVAL (NULL argument)
 * or EO_ENOMEM (@p out undefined).
 */
int eo_eval_get(const eo_eval *ev, eo_eval_result *out);

/* ---- Sums over spans of rounds: a pool's health over time --------------------------------
 * The service keeps these per day and calibration bin as rounds are rated and adds them up
 * over any span (docs/SERVICE.md "Pool health"), so the figures of a span equal eo_eval's over
 * the same rounds (up to the order of floating-point sums). */

/** The calibration bin of @p p_a in [0, 1]: floor(10·P(A)), P(A) = 1 in the last bin. */
int eo_eval_bin_index(double p_a);

/** A stomp: a round whose |P(A) − 0.5| exceeds this (P(A) > 0.8 or < 0.2, as docs/SIM.md
 *  counts them with the true P). */
#define EO_EVAL_STOMP_MARGIN 0.3

/** Sums over a set of rounds; each field adds, so zero-initialise and add rounds or sums. */
typedef struct eo_eval_sums {
    uint64_t rounds;  /**< rounds, draws included */
    uint64_t draws;
    uint64_t stomps;  /**< rounds with |P(A) − 0.5| > EO_EVAL_STOMP_MARGIN, draws included */
    double margin;    /**< Σ |P(A) − 0.5| over the rounds */
    eo_metrics m;     /**< the decided rounds (draws left out), as eo_eval_add() counts them */
    double p;         /**< Σ P(A) over the decided rounds */
    double a_wins;    /**< decided rounds that A won */
    uint64_t members; /**< member results in the three sums below */
    double rating;    /**< Σ display rating after the round */
    double rating2;   /**< Σ of its square */
    double delta;     /**< Σ change of the display rating */
} eo_eval_sums;

/** Adds one round of P(A) @p p_a and outcome @p winner. 0, or EO_EINVAL (@p p_a outside [0, 1]
 *  or NaN, bad winner; @p s unchanged). */
int eo_eval_sums_round(eo_eval_sums *s, double p_a, eo_winner winner);

/** Adds one member's result: display rating after the round and its change. */
void eo_eval_sums_member(eo_eval_sums *s, double rating, double delta);

/** @p to += @p from, field by field. */
void eo_eval_sums_add(eo_eval_sums *to, const eo_eval_sums *from);

/** The figures of a span of rounds. NaN where a figure has no rounds (or no members). */
typedef struct eo_eval_span {
    uint64_t rounds, draws;
    eo_metrics_result all; /**< the decided rounds */
    double margin;         /**< mean |P(A) − 0.5| of every round */
    double stomp_share;    /**< stomps / rounds */
    double rating_mean;    /**< mean display rating of the members after their rounds */
    double rating_sd;      /**< its standard deviation (population) */
    double delta_mean;     /**< mean change per member result: > 0 inflation, < 0 deflation */
} eo_eval_span;

/** The figures of @p s. */
void eo_eval_span_of(const eo_eval_sums *s, eo_eval_span *out);

/** Calibration bin @p b (0 … EO_EVAL_CALIB_BINS − 1) from the sums of the rounds in it. */
void eo_eval_bin_of_sums(int b, const eo_eval_sums *s, eo_eval_bin *out);

#ifdef __cplusplus
}
#endif
#endif
