/* The splitter's internals (eo_split.h; docs/BALANCER.md, "3. The algorithm", names each
 * file's part).
 *
 * A problem is N players with normalised ratings q (shifted by the minimum and divided by the
 * gcd of the differences, so q >= 0 and the gap only changes scale), a team size k and one
 * status per player. eo__split_search() answers one question about it exactly: the least
 * |ΣA - ΣB| over all completions of the statuses, stopping early at a known lower bound.
 * split.c builds the tie rules (docs/BALANCER.md, "2. The rules") from a sequence of such
 * questions, each sent to the cheapest oracle below that fits it. The balancer
 * (../balancer/) asks split_dp.c's table its gap-only questions, through eo__split_dp(). */
#ifndef EO_SPLIT_INTERNAL_H
#define EO_SPLIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_split.h"

#define EO__SPLIT_N 64

/* A grow-only buffer of a work space (eo_split_ws): memory for tables whose size depends on the
 * instance, reused from call to call. */
typedef struct eo__split_buf {
    void *p;
    size_t cap; /* bytes */
} eo__split_buf;

/* At least `bytes` bytes of b (contents not kept), aligned for uint64_t; NULL when out of
 * memory (b is then unchanged). */
void *eo__split_buf_get(eo__split_buf *b, size_t bytes);

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
    uint64_t dp_budget;          /* 0 = the default; nodes one search spends before split_dp.c
                                  * answers (tests set it small to send questions there) */
    uint64_t dp_words;           /* 0 = the default; memory cap of split_dp.c in 64-bit words
                                  * (tests set it small to make it recompute or give up) */
    uint64_t dp_first;           /* 0 = the default; with dp_budget 0, nodes a search of a
                                  * question with a max_gap spends before it weighs the table's
                                  * cost and extends its budget by it (tests set it small) */
    struct eo__split_scratch *scratch; /* work space of split_mitm.c */
    eo__split_buf *dp_buf;             /* tables of split_dp.c */
    int64_t offset;              /* the gap is |Σq(A) − Σq(B) + offset|: a map's field in q
                                  * units (eo__split_solve_field(); the balancer's tables),
                                  * 0 for eo_split.h's splits. Every oracle below takes it;
                                  * with it a split and its mirror have different gaps. */
} eo__split_prob;

/* A split found by the search: bit i of a (b) set when player i is on team A (B). */
typedef struct eo__split_sol {
    uint64_t a, b;
    int64_t gap; /* |Σq(A) - Σq(B) + offset| */
} eo__split_sol;

/* Largest |field| of eo__split_solve_field() (the balancer's bound). */
#define EO__SPLIT_FIELD_MAX (INT64_C(1) << 46)

/*
 * eo_split_solve() with side A's map field (rating units, |field| <= EO__SPLIT_FIELD_MAX), for
 * the team sizes kmin .. kmax only (2 <= kmin, kmax <= n / 2; none when kmax < kmin): each k's
 * split minimises |ΣA - ΣB + field|, then the same tie rules (docs/BALANCER.md §2: who plays
 * first in request order, then team A first in request order, among the ordered splits of that
 * least value: A no longer holds the first player who plays when the field favours B). These
 * are the balancer's rules for a plain request with a field. split[c] is k = kmin + c; its gap
 * is |sum_a - sum_b| as in eo_split.h. Same errors as eo_split_solve() (EO_EINVAL also for a
 * bad k range or field); *out is freed with eo_splits_free().
 */
int eo__split_solve_field(const eo_split_player *players, size_t n, const eo_split_options *opt,
                          int64_t field, int kmin, int kmax, eo_splits **out);

/* Puts players who[0..h) on the teams *a and *b (bit masks of player indices): who[y] on A
 * when bit y of sides is set, else on B. How the tables' side assignments (a bit per listed
 * player) become a split. */
static inline void eo__split_place(uint64_t *a, uint64_t *b, const uint8_t *who, int h,
                                   uint64_t sides)
{
    for (int y = 0; y < h; y++) {
        if (sides >> y & 1)
            *a |= UINT64_C(1) << who[y];
        else
            *b |= UINT64_C(1) << who[y];
    }
}

/* The first index in [lo, hi) with d[index] >= x, d sorted ascending there; hi when none. */
static inline int eo__split_lower_bound(const int64_t *d, int lo, int hi, int64_t x)
{
    while (lo < hi) {
        int m = (lo + hi) / 2;
        if (d[m] < x)
            lo = m + 1;
        else
            hi = m;
    }
    return lo;
}

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
 * The least gap over the completions of p's statuses by dynamic programming (split_dp.c): a
 * bitset of the reachable differences per (players added to A, players added to B); a split is
 * read back from tables kept at checkpoints (or by halving) within a memory cap. Returns 1
 * with *sol a completion of least gap when that gap is <= max_gap, 0 when no completion has
 * gap <= max_gap, -1 when the answer is unknown (too wide for the cap, out of
 * memory, or a "yes" without the tables to read the split back). Exact.
 * eo__split_dp_cost() is a bound on its word operations (0 when it would not run): O(F k^2
 * range / 64) for F undecided players; *count is what eo__split_dp_words() costs (cells it
 * looks at).
 */
int eo__split_dp(const eo__split_prob *p, int64_t max_gap, eo__split_sol *sol);
uint64_t eo__split_dp_cost(const eo__split_prob *p, uint64_t *count);
/* The table's cost for a question with this max_gap, in words: about the words its forward
 * pass steps (each cell only over the differences that can still end within max_gap; counted
 * at up to 16 of the players and scaled) plus its packed table size, weighted for the copies,
 * the read-back and fresh pages. A closer estimate of its time than eo__split_dp_cost(), at
 * O(k^2) cells per sample to compute; 0 when it would not run. */
uint64_t eo__split_dp_words(const eo__split_prob *p, int64_t max_gap);

/*
 * Cheap witness for the decision just made on player i (status A, or PLAY), given a split w with
 * gap <= g that keeps every other status: tries one or two exchanges of players. Returns 1 with
 * *w replaced by a split that keeps every status with gap <= g (checked), 0 when none was found
 * (which proves nothing). Never searches; O(k^2 log n).
 */
int eo__split_repair(const eo__split_prob *p, int i, int64_t g, eo__split_sol *w);

/* 1 when w keeps every status of p, has k players a side, gap <= g and w->gap right. O(n). */
int eo__split_check(const eo__split_prob *p, int64_t g, const eo__split_sol *w);

/*
 * Cheap witness for the least gap of team size k from a split prev of size k - 1 (same
 * normalisation): one more player on each side, taken from those not BENCH in p and not in
 * prev. Returns 1 with *w a split keeping every status of p with gap <= g (checked), else 0
 * (which proves nothing). O(n log n).
 */
int eo__split_extend(const eo__split_prob *p, const eo__split_sol *prev, int64_t g,
                     eo__split_sol *w);

/*
 * Side assignments of the PLAY players for small k (split_small.c): for each number na of them
 * on A, the differences Σq(A) - Σq(B) sorted ascending, with the A members (bit y = who[y]).
 * Assignments with more than k on a side are left out. Holds up to 2k - 1 players.
 */
#define EO__SPLIT_TABLE_K 6      /* largest k the table serves */
#define EO__SPLIT_TABLE_CAP 462  /* C(11, 5): the largest group for p <= 2 * 6 - 1 */
#define EO__SPLIT_TABLE_MAXR 2   /* late players a question may still need */
typedef struct eo__split_table {
    int k, p;
    int odd; /* parity of the players' q sum */
    uint8_t who[2 * EO__SPLIT_TABLE_K];
    int cnt[EO__SPLIT_TABLE_K + 1];
    int64_t d[EO__SPLIT_TABLE_K + 1][EO__SPLIT_TABLE_CAP];
    uint16_t a[EO__SPLIT_TABLE_K + 1][EO__SPLIT_TABLE_CAP];
} eo__split_table;

/* Empty table for team size k <= EO__SPLIT_TABLE_K. */
void eo__split_table_init(eo__split_table *t, int k);
/* Player x (rating qx) joins the PLAY players; needs t->p < 2k - 1. */
void eo__split_table_add(eo__split_table *t, int x, int64_t qx);
/*
 * The "who plays" question of split.c, exactly: the table holds every PLAY player of p except
 * i, player i plays, the other players are BENCH or FREE, and r = 2k - 1 - t->p of the FREE ones
 * must play. Returns 1 with *w a split with gap <= g keeping every status, 0 when none exists,
 * -1 when the question is outside what the table serves (r > EO__SPLIT_TABLE_MAXR).
 * O(C(FREE, r) 2^r log) for FREE undecided players.
 */
int eo__split_table_ask(const eo__split_table *t, const eo__split_prob *p, int i, int r,
                        int64_t g, eo__split_sol *w);

/*
 * A cheap witness for the same question when r > EO__SPLIT_TABLE_MAXR: a few fixed choices of
 * r - EO__SPLIT_TABLE_MAXR late players (windows of the FREE players, earliest first) are
 * added with i to a copy of t in *tmp, and the last ones are chosen exactly. Returns 1 with *w
 * set (a split with gap <= g keeping every status), 0 on a miss, which proves nothing.
 */
#define EO__SPLIT_TABLE_TRIES 3
int eo__split_table_try(const eo__split_table *t, eo__split_table *tmp, const eo__split_prob *p,
                        int i, int r, int64_t g, eo__split_sol *w);

/* Fixed work space of the solver, allocated with the eo_split_ws: the lists of the
 * meet-in-the-middle answers (three of 2^EO__SPLIT_MITM_HALF side assignments), team A's hash
 * table and two tables (~200 KiB). */
#define EO__SPLIT_MITM_HALF 12
typedef struct eo__split_scratch eo__split_scratch;
eo__split_scratch *eo__split_scratch_new(void); /* NULL when out of memory */
void eo__split_scratch_free(eo__split_scratch *s);
/* The two tables of the work space. */
eo__split_table *eo__split_scratch_tables(eo__split_scratch *s);


/*
 * Exact answer by meet in the middle when at most one FREE player still has to play: statuses
 * A, B, BENCH, up to 2 * EO__SPLIT_MITM_HALF PLAY players, and FREE players of which exactly
 * 2k - |A| - |B| - |PLAY| (0 or 1) must join. Returns 1 with *w a split with gap <= g keeping
 * every status, 0 when none exists, -1 when the question is not of that shape.
 * O(h 2^(h/2) + 2^(h/2) * FREE players) for h PLAY players.
 */
int eo__split_mitm(const eo__split_prob *p, eo__split_scratch *sc, int64_t g, eo__split_sol *w);

/*
 * Step 3 of the rules (split.c) at once, for a fixed playing set (statuses PLAY and BENCH only)
 * of 2k <= 2 * EO__SPLIT_MITM_HALF players: sets the statuses of the lexicographically first
 * team A among the splits with gap <= g and returns 1; 0 when no split reaches g; -1 when the
 * problem is not of that shape. The side assignments of the later k players are listed and
 * sorted once; those of the first k are visited in lexicographic order of their A part until
 * one has a completion, whose lexicographically first A part is taken: together the
 * lexicographically first A, since every index of the first part precedes the second's.
 */
int eo__split_teams(eo__split_prob *p, eo__split_scratch *sc, int64_t g);

/*
 * Fast exact "who plays" for dense ratings (split_dense.c): a table of the (count, sum) pairs
 * reachable by subsets of the first players, extended as k grows within one call.
 * With an offset, "gap 0" is a difference of -offset (the problem's offset; its equations ask
 * for both a split and its mirror). eo__split_dense_new() builds it in buf and returns NULL
 * when the ratings are too wide for it (or out of memory: the general path then runs, so
 * nothing is lost); q and buf must outlive the table, which needs no release.
 */
typedef struct eo__split_dense eo__split_dense;
eo__split_dense *eo__split_dense_new(const int64_t *q, int n, int64_t offset, eo__split_buf *buf);
/*
 * Solver mode, 2 <= k, 2k < n, called with k increasing: the lexicographically first playing
 * set of 2k players that splits with gap 0, when it is the first 2k - 1 players and one more,
 * the first 2k - 2 and two more, or the first 2k - 3 and three more. Returns 1 with *set (bit
 * i: player i plays), 0 when no such set exists (which says nothing about sets with more late
 * players). Exact. O(n^3) lookups plus the table's growth (amortised over the call).
 */
int eo__split_dense_plays(eo__split_dense *d, int k, uint64_t *set);

#endif
