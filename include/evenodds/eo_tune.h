/**
 * @file eo_tune.h
 * Tuning a pool's parameters on a round log (docs/EVAL.md, "Tuning"): a coordinate descent
 * over a few parameters (the "knobs"), each candidate scored by folding the whole log through a
 * fresh pool in order, as `evenodds replay` does, and predicting every round before rating it.
 *
 * The log is cut in three: rounds before train_from only rate (burn-in), rounds from
 * train_from to held_from are the **training** rounds whose mean log loss (or Brier) the search
 * minimises, and rounds from held_from on are **held out**: reported, never used to choose.
 * Draws are left out of every figure, as `evenodds eval` leaves them out. The held-out figures
 * of a configuration are exactly `eval --eval-from`'s on the same log when held_from is the
 * first round eval scores.
 *
 * Two guards against overfitting a small log, both in units of `gate` standard errors. After
 * the descent, a check puts each knob back to its start value, one at a time, unless that
 * costs the training objective more than gate standard errors of the paired per-round
 * difference (a knob must earn its move); then the search's answer is taken only when its
 * training gain over the start beats gate × the standard error of the start's held-out
 * figure (the noise of what the held-out rounds could show), otherwise the start (the
 * defaults, or the caller's starting point) is kept.
 *
 * Which knobs are searched, per model and per pool option and what the log holds, is one
 * table in src/core/tune.c (eo_tune_default_knobs() reads it).
 *
 * Pure: no I/O, clock or globals; the same rounds and configuration give the same bits. The
 * work is done one fold per eo_tune_step(), so a caller can show progress or stop between
 * folds. Ownership: a tune borrows the rounds (they must outlive it) and copies the rest.
 * Thread safety: one thread at a time per tune.
 */
#ifndef EO_TUNE_H
#define EO_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_metrics.h"
#include "eo_pool.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most knobs one search takes. */
#define EO_TUNE_KNOBS_MAX 8

/** How a search runs. Fill with eo_tune_config_default(), then change what you need. */
typedef struct eo_tune_config {
    uint32_t budget; /**< most folds of the descent, the start's included, >= 1 (default
                          60); the check adds at most one fold per knob */
    bool brier;      /**< minimise the Brier score instead of the log loss (default false) */
    double gate;     /**< the guards' threshold (above) in standard errors of the metric
                          minimised, >= 0 (default 1; 0: any gain counts) */
    size_t nknobs;   /**< 0: the default knobs (eo_tune_default_knobs()) */
    const char *knobs[EO_TUNE_KNOBS_MAX]; /**< else the parameters to search (borrowed) */
} eo_tune_config;

/** The defaults above. */
void eo_tune_config_default(eo_tune_config *c);

/**
 * The knobs searched by default for a pool of @p cfg over the rounds @p r[0..n): the model's
 * from the table in src/core/tune.c, the ones that depend on the options or on the log only
 * where they do something: the bias's with the bias on; with some round of partial play or
 * unequal teams, presence's with presence on, and with it off the start level of the models
 * that sum their members (TrueSkill's and Weng-Lin's mu, Elo's r0 with team=sum; with presence
 * on, strengths are relative to it and it cancels); hive's commander step when some member
 * commanded. Up to @p cap names (static strings) into @p names; returns how many.
 */
size_t eo_tune_default_knobs(const eo_pool_config *cfg, const eo_round *r, size_t n,
                             const char **names, size_t cap);

/** The value of knob @p name in @p cfg (a model parameter, or a pool's bias or presence
 *  parameter). Returns 0 or EO_ENOTFOUND. */
int eo_tune_knob_get(const eo_pool_config *cfg, const char *name, double *out);

/** Checks the knobs @p cfg names (none: nothing to check) for a start of @p start, as
 *  eo_tune_create() does. Returns 0 or EO_EINVAL with @p err (field "tune"). */
int eo_tune_check(const eo_pool_config *start, const eo_tune_config *cfg, eo_round_error *err);

typedef struct eo_tune eo_tune;

/**
 * Prepares a search from @p start (copied; it must be a configuration eo_pool_create()
 * accepts) over @p r[0..n) (borrowed, in log order) cut at @p train_from <= @p held_from <=
 * @p n. Returns 0, EO_ENOMEM, or EO_EINVAL with @p err (may be NULL): field "tune" and a
 * message for a knob that is unknown, given twice, a choice or fixed, a bias knob with the
 * bias off or a presence knob with presence off (the message names it); field "rounds" when no decided round lies in the training
 * rounds or none in the held-out ones; "" for a bad argument.
 */
int eo_tune_create(const eo_pool_config *start, const eo_tune_config *cfg, const eo_round *r,
                   size_t n, size_t train_from, size_t held_from, eo_tune **out,
                   eo_round_error *err);

/** Releases @p t. NULL is a no-op. */
void eo_tune_destroy(eo_tune *t);

/** Where a search stands after a step. */
typedef struct eo_tune_progress {
    uint32_t folds; /**< folds done, the start's included */
    uint32_t budget;
    bool done;        /**< no step is left: eo_tune_get() has the answer */
    const char *knob; /**< the knob the last fold moved (NULL for the start's fold) */
    double value;     /**< its value in that fold */
    double objective; /**< that fold's training objective */
    double best;      /**< the best training objective so far */
    size_t round;     /**< on a failed step: the index of the round the pool refused */
} eo_tune_progress;

/**
 * One fold: the start's first, then the next candidate of the coordinate descent (each knob
 * in turn a step up and a step down; a better value keeps its step, a knob whose step found
 * nothing better shrinks it: a factor f → √f for positive scales, half the step otherwise,
 * integers stopping below 1), until every step is small (a factor below 1.02) or the budget
 * is spent; then the check's folds (a knob put back, above). Candidates the model refuses
 * with the other values are skipped without a fold. A step once done only reports done.
 * Returns 0, EO_ENOMEM, or EO_EINVAL when the pool refused round @p p->round (the rounds must
 * be valid ones). @p p may be NULL.
 */
int eo_tune_step(eo_tune *t, eo_tune_progress *p);

/** A configuration's figures. */
typedef struct eo_tune_point {
    eo_pool_config cfg;
    eo_metrics_result train, held; /**< decided training and held-out rounds */
    double held_logloss_se;        /**< standard error of held.logloss over its rounds */
    double held_brier_se;          /**< and of held.brier */
} eo_tune_point;

/** What a finished search found. */
typedef struct eo_tune_result {
    uint32_t folds;
    size_t nknobs;
    const char *knobs[EO_TUNE_KNOBS_MAX]; /**< the knobs searched (the tune's; valid for its
                                               life) */
    eo_tune_point start, best;            /**< best: the search's answer (the descent's,
                                               after the check) */
    double gain;           /**< start's training objective − best's (below 0 when the check put
                                back knobs that cost together more than the threshold) */
    double threshold;      /**< gate × the start's held-out standard error of the objective
                                (NaN with fewer than two decided held-out rounds) */
    bool chose_best;       /**< gain > threshold: the best is the answer; else the start */
    eo_paired_result held; /**< the held-out rounds, start as A, best as B */
} eo_tune_result;

/** The answer once eo_tune_step() said done. Returns 0, or EO_EINVAL (not done yet). */
int eo_tune_get(const eo_tune *t, eo_tune_result *out);

/** The chosen configuration of a result: best when chose_best, else start. */
const eo_pool_config *eo_tune_chosen(const eo_tune_result *r);

#ifdef __cplusplus
}
#endif
#endif
