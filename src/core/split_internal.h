/* Exact team-split search shared by split.c (internal).
 *
 * A problem is N players with normalised ratings q (shifted by the minimum and divided by the
 * gcd of the differences, so q >= 0 and the gap only changes scale), a team size k and one
 * status per player. eo__split_search() answers one question about it exactly: the least
 * |ΣA - ΣB| over all completions of the statuses, stopping early at a known lower bound.
 * split.c builds the tie rules (docs/BALANCER.md) from a sequence of such questions; the
 * balancer milestone adds its constraints as further statuses and pruning rules here. */
#ifndef EO_SPLIT_INTERNAL_H
#define EO_SPLIT_INTERNAL_H

#include <stdint.h>

#define EO__SPLIT_N 64

/* What is known about one player. */
enum {
    EO__SP_FREE = 0, /* plays on A, plays on B, or sits out */
    EO__SP_PLAY = 1, /* plays, on either team */
    EO__SP_BENCH = 2,
    EO__SP_A = 3,
    EO__SP_B = 4
};

/* A bound no gap reaches: sums of 64 ratings of at most 2^41 stay below 2^48. */
#define EO__SPLIT_INF (INT64_C(1) << 60)

typedef struct eo__split_prob {
    int n;
    int k;
    const int64_t *q;            /* n normalised ratings, 0 <= q < 2^42 */
    const uint8_t *order;        /* the n indices by q descending, ties by index ascending */
    uint8_t status[EO__SPLIT_N]; /* EO__SP_* per player */
    uint64_t work;               /* search nodes visited so far (accumulates across calls) */
    uint64_t work_limit;         /* 0 = none */
    uint64_t try_limit;          /* 0 = none; else one search gives up after this many nodes */
} eo__split_prob;

/* A split found by the search: bit i of a (b) set when player i is on team A (B). */
typedef struct eo__split_sol {
    uint64_t a, b;
    int64_t gap; /* |Σq(A) - Σq(B)| */
} eo__split_sol;

/*
 * Searches the completions of p's statuses (k players on each team) for the least gap, among
 * those with gap <= max_gap, and stops as soon as one has gap <= stop_gap (a proven lower bound
 * or the target of a feasibility question). Returns 1 with *sol set to the best found (so
 * sol->gap is the exact minimum when it is > stop_gap), 0 when no completion has gap <= max_gap,
 * EO__SPLIT_GAVE_UP when p->try_limit nodes did not settle the question (a heuristic try: the
 * answer is unknown), EO_ELIMIT when p->work would pass p->work_limit.
 */
#define EO__SPLIT_GAVE_UP 2
int eo__split_search(eo__split_prob *p, int64_t max_gap, int64_t stop_gap, eo__split_sol *sol);

/*
 * Cheap witness for the decision just made on player i (status A, or PLAY), given a split w with
 * gap <= g that keeps every other status: tries one or two exchanges of players. Returns 1 with
 * *w replaced by a split that keeps every status with gap <= g (checked), 0 when none was found
 * (which proves nothing). Never searches; O(k^2 log n).
 */
int eo__split_repair(const eo__split_prob *p, int i, int64_t g, eo__split_sol *w);

#endif
