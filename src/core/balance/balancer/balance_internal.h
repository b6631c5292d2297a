/* The balancer's internals (eo_balance.h; docs/BALANCER.md, "The balancer: constraints and
 * secondary objectives", states the rules).
 *
 * A problem for one k: players (normalised ratings, current team, preference, ...), items (a
 * party that may not be split, or one player) with a status each, and the objective vector.
 * balance_search.c answers exact questions about it (least objective vector under the
 * statuses; is there a split at most as bad as a given vector), balance_local.c is the swap
 * local search used beyond the exact sizes or the work limit, balance.c builds the tie rules
 * from the questions and fills the result. */
#ifndef EO_BALANCE_INTERNAL_H
#define EO_BALANCE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_balance.h"
#include "evenodds/eo_common.h"

#define EO__BAL_N EO_PLAYERS_MAX
#define EO__BAL_EXACT EO_BALANCE_EXACT_MAX

/* Objective terms, compared lexicographically in this order (docs/BALANCER.md, "The
 * balancer: constraints and secondary objectives", the rules). */
enum {
    EO__BT_BROKEN = 0, /* parties broken (only when splitting them is allowed) */
    EO__BT_MOVES,      /* rebalance: players moved */
    EO__BT_TOP2,       /* scramble: the two best playing players on one team */
    EO__BT_SPREAD,     /* scramble: k^2 |var(A) - var(B)| on the spread scale */
    EO__BT_DENIED,     /* preference weight denied */
    EO__BT_BENCH,      /* players benched twice running */
    EO__BT_DEV,        /* |ΣA - ΣB + field| */
    EO__BT_N
};

/* Item statuses (as split_internal.h's, per item). */
enum { EO__BS_FREE = 0, EO__BS_PLAY, EO__BS_BENCH, EO__BS_A, EO__BS_B };

/* Sides of an assignment. */
enum { EO__SIDE_BENCH = 0, EO__SIDE_A = 1, EO__SIDE_B = 2 };

typedef struct eo__bal {
    int n, k;
    int mode;              /* eo_balance_mode */
    int allow_split;       /* parties are not items; broken parties cost */
    int64_t field;         /* rating units */
    int64_t q[EO__BAL_N];  /* rating - min rating */
    int64_t qs[EO__BAL_N]; /* q >> spread_shift: the spread term's scale (< 2^20) */
    uint8_t team[EO__BAL_N], prefer[EO__BAL_N], sat_out[EO__BAL_N];
    int64_t w[EO__BAL_N];  /* preference weights (>= 1) */
    int64_t wmin;          /* least weight of a player with a preference */
    int party[EO__BAL_N];  /* dense party index, -1 = none */
    int npart;
    int best[EO__BAL_N];   /* players by rating descending, ties by index */
    int prio[EO__BAL_N];   /* players by priority descending, ties by index */
    /* items */
    int m;
    int item_of[EO__BAL_N];
    int istart[EO__BAL_N + 1]; /* members of item t: mem[istart[t] .. istart[t+1]) */
    int mem[EO__BAL_N];
    uint8_t ist[EO__BAL_N]; /* EO__BS_* */
    int active[EO__BT_N];   /* 1 when the term counts in the objective */
    uint64_t work, work_limit;
    int no_mitm;            /* test switch: eo__bal_mitm() declines */
    uint64_t dp_try;        /* test switch: a gap-only question's search budget before the
                             * table of split_dp.c answers (0: the default, 20,000 nodes) */
    /* eo__bal_search()'s tables, built at its first call; owned, released by
     * eo__bal_search_free() */
    struct eo__bal_bs *scratch;
} eo__bal;

typedef int64_t eo__bal_vec[EO__BT_N];

/* The objective terms of a full assignment (side per player), every term (active or not). */
void eo__bal_eval(const eo__bal *b, const uint8_t *side, eo__bal_vec out);

/* -1, 0, 1 comparing a and b lexicographically over the active terms. */
int eo__bal_cmp(const eo__bal *b, const eo__bal_vec x, const eo__bal_vec y);

/*
 * Exact branch and bound over the items (n <= EO__BAL_EXACT), splits of k a side keeping every
 * status and |D| <= dev_max.
 * feas == 0: the least objective vector; returns 1 with *best and side[] (a split reaching
 *            it), 0 when no split exists.
 * feas == 1: is there a split with vector <= *best (lexicographically over the active terms)?
 *            1 with side[] and *best set to its vector, 0 when none.
 * feas == 2: as 0, seeded with an incumbent: *best is the vector of side[], a split keeping
 *            every status with |D| <= dev_max; returns 1 with the least vector and a split.
 * EO_ELIMIT when b->work passes b->work_limit (the answer is then unknown).
 */
int eo__bal_search(eo__bal *b, int64_t dev_max, int feas, eo__bal_vec best, uint8_t *side);

/* Releases b->scratch (NULL is fine). */
void eo__bal_search_free(eo__bal *b);

/*
 * Scramble mode with everyone playing (2k = n), parties kept whole and no side preference: the
 * rules' answer for the statuses in b->ist (base pins only) among the splits with |D| <= T, by
 * meet in the middle (balance_mitm.c). 1 with side[] and *best its vector, 0 when no split
 * exists, 2 when the case does not fit (the caller asks the search), EO_ELIMIT when its work
 * would pass b->work_limit, EO_ENOMEM.
 */
int eo__bal_mitm(eo__bal *b, int64_t T, eo__bal_vec best, uint8_t *side);

/*
 * Swap local search with restarts (seed 000 F10, bench-aware): minimises
 * (max(|D|, eps), the active terms...) from the current teams and from random starts. Returns 1
 * with side[] and *vec, 0 when no start filled both teams, EO_ENOMEM.
 */
int eo__bal_local(const eo__bal *b, int64_t eps, uint64_t seed, int restarts, uint8_t *side,
                  eo__bal_vec vec);

/* Test switches of eo__balance_solve(). All false (or a NULL pointer) is eo_balance_solve().
 * The first three only choose which exact path answers, so the answers stay the same (the
 * tests compare the paths); force_local gives up exactness as the work limit does. */
typedef struct eo__balance_opts {
    bool general_path; /* plain requests by the general path too, not by eo_split_solve() */
    bool no_mitm;      /* eo__bal_mitm() declines: the search answers full scrambles */
    bool table_early;  /* gap-only questions go to split_dp.c's table after one search node */
    bool force_local;  /* every k by local search (exact = 0) */
} eo__balance_opts;

/* eo_balance_solve() (same contract) with the test switches of opts, which may be NULL. */
int eo__balance_solve(const eo_balance_player *players, size_t n, const eo_balance_request *req,
                      eo_balance_result **out, uint32_t *bad_party, const eo__balance_opts *opts);

#endif
