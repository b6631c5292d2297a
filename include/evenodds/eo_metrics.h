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

#ifdef __cplusplus
}
#endif
#endif
