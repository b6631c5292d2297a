/**
 * @file eo_split.h
 * Exact team splits (seed 000 F7): for N eligible players and every team size k in
 * [2, floor(N/2)], teams A and B of k players each minimising |ΣA - ΣB|, with the other N - 2k
 * players benched. This is the solver the balancer grows from (eo_balance.h adds constraints
 * and secondary objectives); it is exact, not heuristic, and deterministic.
 *
 * Request order is priority: earlier players have waited longer. Tie rule (EO_BENCH_SOLVER):
 * among splits with the least gap, the bench is chosen so that players later in the request sit
 * out first (docs/BALANCER.md states the rule precisely); among splits with the same players,
 * the one listed first by that document's order of A/B assignments is returned.
 *
 * Ownership: eo_split_solve() allocates one eo_splits block; eo_splits_free() releases it.
 * Pure, no globals: safe to call from several threads at once.
 *
 * Repeated calls (a service): eo_split_solve_ws() does the same work in a caller-owned work
 * space (eo_split_ws_new(), one per thread, reused for every call of that thread, freed with
 * eo_split_ws_free()), so a typical call allocates nothing; its result lives in the work space.
 */
#ifndef EO_SPLIT_H
#define EO_SPLIT_H

#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest N the exact solver takes. */
#define EO_SPLIT_EXACT_MAX 64

/** One eligible player. */
typedef struct eo_split_player {
    int64_t rating; /**< integer rating, |rating| <= 2^40 */
} eo_split_player;

/** Who sits out when 2k < N. */
typedef enum {
    EO_BENCH_SOLVER = 0, /**< the solver chooses (F7); ties bench later players */
    EO_BENCH_QUEUE = 1   /**< the first 2k players of the request play (arena queue) */
} eo_bench_mode;

typedef struct eo_split_options {
    eo_bench_mode bench;
    /** Branch-and-bound search nodes allowed for the whole call; 0 = no limit. The solver
     *  never returns a split it has not proven optimal: past the limit it fails with
     *  EO_ELIMIT. Typical requests (ratings ~1000 +- 300) need few nodes (~13 ns each): most
     *  questions go to exact oracles of bounded cost, which are not counted. Very wide rating
     *  ranges can need far more (docs/BALANCER.md), so a service should set a limit. */
    uint64_t work_limit;
} eo_split_options;

/** The best split for one team size. Index arrays point into the request (0-based). */
typedef struct eo_split {
    int k;
    const uint16_t *a;     /**< k indices, ascending */
    const uint16_t *b;     /**< k indices, ascending */
    const uint16_t *bench; /**< nbench indices, ascending */
    size_t nbench;         /**< N - 2k */
    int64_t sum_a, sum_b;
    int64_t gap;           /**< |sum_a - sum_b| */
    double p_a;            /**< NaN from the solver: P(A wins) is the model's, which the
                                caller fills in (eo_app_split(), eo_app.h) */
} eo_split;

/** All splits of one request, k ascending from 2. One allocation. */
typedef struct eo_splits {
    size_t count;     /**< floor(N/2) - 1 */
    eo_split *split;  /**< count entries */
} eo_splits;

/**
 * Solves every k in [2, floor(N/2)] for @p n players (4 <= n <= EO_SPLIT_EXACT_MAX; with n < 4
 * there is no k and the result has count 0 for n in [2, 3]). @p opt may be NULL (defaults).
 * Returns 0, EO_EINVAL (n < 2, or a rating out of range), EO_ELIMIT (n > EO_SPLIT_EXACT_MAX)
 * or EO_ENOMEM. On success *out is the caller's, to free with eo_splits_free().
 */
int eo_split_solve(const eo_split_player *players, size_t n, const eo_split_options *opt,
                   eo_splits **out);

/** Releases a result of eo_split_solve(). NULL is a no-op. */
void eo_splits_free(eo_splits *s);

/**
 * Work space of the solver, for callers that solve many requests (a service): everything the
 * solver needs besides the caller's arrays, kept between calls so that a typical call makes no
 * allocation. Opaque. About 220 KiB when created; while solving a hard instance (ratings crowded
 * in a narrow band, docs/BALANCER.md) it may grow tables of up to 32 MiB for that call, and it
 * keeps at most EO_SPLIT_WS_KEEP bytes of them for the next calls.
 *
 * Threads: a work space is used by one call at a time. Give each thread its own (create it
 * once, e.g. at thread start, and reuse it); a work space may pass from one thread to another
 * between calls. Different work spaces are independent: calls on different ones may run at once.
 */
typedef struct eo_split_ws eo_split_ws;

/** Bytes of grown tables a work space keeps between calls (more is released after the call). */
#define EO_SPLIT_WS_KEEP ((size_t)4 << 20)

/** Creates a work space. Returns NULL when out of memory. Free it with eo_split_ws_free(). */
eo_split_ws *eo_split_ws_new(void);

/** Releases a work space and the result it holds. NULL is a no-op. */
void eo_split_ws_free(eo_split_ws *ws);

/**
 * eo_split_solve() in the work space @p ws: same arguments, errors and answers (bit for bit),
 * without allocating (except that a hard instance may grow the work space, see eo_split_ws;
 * when that growth fails the solver takes a slower path, never a different answer).
 * On success *out points to the result inside @p ws: the caller may read it and change its
 * p_a fields, must not free it, and must not use it after the next eo_split_solve_ws() call
 * with the same @p ws or after eo_split_ws_free(ws). On error *out is NULL. Returns 0,
 * EO_EINVAL (ws or out NULL, n < 2, a rating out of range, an unknown bench mode),
 * EO_ELIMIT (n > EO_SPLIT_EXACT_MAX, or opt->work_limit reached) or EO_EINTERNAL.
 */
int eo_split_solve_ws(eo_split_ws *ws, const eo_split_player *players, size_t n,
                      const eo_split_options *opt, eo_splits **out);

#ifdef __cplusplus
}
#endif
#endif
