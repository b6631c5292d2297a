/**
 * @file eo_metrics.h
 * Prediction quality of a model over rounds: an accumulator of (P(A wins), outcome) pairs
 * giving mean log loss (natural log), Brier score (F6) and accuracy. `evenodds replay` reports
 * these over the rounds from a fraction of the file on, draws left out. Pure, no allocation.
 */
#ifndef EO_METRICS_H
#define EO_METRICS_H

#include <stdint.h>

#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Probabilities are clamped to [EO_METRICS_P_EPS, 1 - EO_METRICS_P_EPS] for the log loss. */
#define EO_METRICS_P_EPS 1e-15

/** The accumulator. Zero-initialise it or call eo_metrics_init(). */
typedef struct eo_metrics {
    uint64_t count;     /**< rounds added */
    double logloss_sum; /**< Σ -ln(P of the actual outcome) */
    double brier_sum;   /**< Σ (P_A - O)² */
    double correct;     /**< rounds called right; a P_A of exactly 0.5 counts half */
} eo_metrics;

/** The figures of an accumulator. */
typedef struct eo_metrics_result {
    uint64_t count;   /**< rounds */
    double logloss;   /**< mean log loss, nats (NaN when count is 0) */
    double brier;     /**< mean Brier score (NaN when count is 0) */
    double accuracy;  /**< fraction called right, in [0, 1] (NaN when count is 0) */
} eo_metrics_result;

/** Empties @p m. */
void eo_metrics_init(eo_metrics *m);

/**
 * Adds one round: @p p_a is P(A wins) in [0, 1]; @p a_won is 1 if A won, 0 if B won (draws
 * are the caller's to leave out or not). Returns 0, or EO_EINVAL (P not in [0, 1] or NaN,
 * a_won not 0 or 1) and @p m is unchanged.
 */
int eo_metrics_add(eo_metrics *m, double p_a, int a_won);

/** The figures so far. */
void eo_metrics_get(const eo_metrics *m, eo_metrics_result *out);

/**
 * One prediction's losses: *logloss = −ln(P of the outcome, clamped as eo_metrics_add() clamps
 * it) and *brier = (P_A − O)², O = 1 when A won. Returns 0, or EO_EINVAL (as
 * eo_metrics_add()) with nothing written.
 */
int eo_metrics_loss(double p_a, int a_won, double *logloss, double *brier);

/** A running mean with its standard error (Welford's update: stable, and the same bits for the
 *  same values in the same order). Zero-initialise it. */
typedef struct eo_mean_se {
    uint64_t n;
    double mean; /**< of the values so far (0 when none) */
    double m2;   /**< Σ (x − mean)² so far */
} eo_mean_se;

/** Adds @p x (finite). */
void eo_mean_se_add(eo_mean_se *s, double x);

/** The standard error of the mean: the sample deviation (n − 1 in the denominator) over √n;
 *  NaN below 2 values. */
double eo_mean_se_error(const eo_mean_se *s);

/**
 * Two predictions of the same rounds compared round by round, draws left out by the caller:
 * the mean of (loss of B − loss of A) for log loss and Brier, each with its standard error
 * over the rounds (the paired difference: what the rounds have in common cancels). A negative
 * difference means B predicted better. Zero-initialise it.
 */
typedef struct eo_paired {
    eo_metrics a, b;
    eo_mean_se logloss, brier; /**< of the per-round differences, B − A */
} eo_paired;

/** The figures of a paired comparison (NaN where there are too few rounds). */
typedef struct eo_paired_result {
    eo_metrics_result a, b;
    double logloss_diff, logloss_se; /**< mean of B − A and its standard error */
    double brier_diff, brier_se;
} eo_paired_result;

/** Adds one round predicted @p p_a by A and @p p_b by B. Returns 0 or EO_EINVAL (either P not
 *  in [0, 1], a_won not 0 or 1), @p c unchanged. */
int eo_paired_add(eo_paired *c, double p_a, double p_b, int a_won);

/** The figures so far. */
void eo_paired_get(const eo_paired *c, eo_paired_result *out);

#ifdef __cplusplus
}
#endif
#endif
