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

typedef struct eo__bal_tail eo__bal_tail;

typedef struct eo__bal {
    int n, k;
    int mode;              /* eo_balance_mode */
    int allow_split;       /* parties are not items; broken parties cost */
    int64_t field;         /* rating units */
    int64_t q[EO__BAL_N];  /* rating - min rating */
    int64_t qs[EO__BAL_N]; /* q >> spread_shift: the spread term's scale (< 2^20) */
    int spread_shift;
    int64_t spread_eps; /* the tolerance on |sd(A) - sd(B)| on the spread scale (< 2^21) */
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
    int found;              /* the last eo__bal_search() left a split in its side[] (also when
                             * it stopped at the work limit) */
    int no_mitm;            /* test switch: eo__bal_mitm() declines */
    int tail_items;         /* items the search's tail takes (0: none; at most TAIL_ITEMS_MAX) */
    uint64_t dp_try;        /* test switch: a gap-only question's search budget before the
                             * table of split_dp.c answers (0: the default, 20,000 nodes) */
    /* a question's search calls midway once its work passes mid_work (decide(): the later
     * witness windows); a return of 1 stops it (eo__bal_search() returns 2), < 0 is an error */
    int (*midway)(struct eo__bal *b, void *ctx);
    void *mid_ctx;
    uint64_t mid_work;
    int late_windows; /* test switch: eo__balance_opts's */
    /* eo__bal_search()'s tables, built at its first call; owned, released by
     * eo__bal_search_free() */
    struct eo__bal_bs *scratch;
    /* eo__bal_repair()'s and eo__bal_finish()'s lists; owned (eo__bal_tail_free()) */
    struct eo__bal_tail *repair;
} eo__bal;

typedef int64_t eo__bal_vec[EO__BT_N];

/* The spread term's exact tests need products up to ~2^110. */
__extension__ typedef __int128 eo__i128;

/* The objective terms of a full assignment (side per player), every term (active or not). */
void eo__bal_eval(const eo__bal *b, const uint8_t *side, eo__bal_vec out);

/* The spread term of two teams of b->k players with Σqs sa, sb and Σqs² xa, xb: 0 when
 * |sd(A) - sd(B)| <= b->spread_eps, else k²|var(A) - var(B)| (docs/BALANCER.md, the rules,
 * *spread*). Exact in integers. */
int64_t eo__bal_spread(const eo__bal *b, int64_t sa, int64_t sb, int64_t xa, int64_t xb);

/* The most |va - vb| (k² var(A) - k² var(B)) can be for a split within the spread tolerance
 * when everyone plays with Σqs(A) - Σqs(B) = delta, Σqs = S and Σqs² = XS: with C = va + vb
 * (fixed by these), |√va - √vb| <= e = k eps is u² <= e²(2C - e²), or any u when C <= e². */
eo__i128 eo__bal_umax(const eo__bal *b, int64_t delta, int64_t S, int64_t XS);

/* -1, 0, 1 comparing a and b lexicographically over the active terms. */
int eo__bal_cmp(const eo__bal *b, const eo__bal_vec x, const eo__bal_vec y);

/*
 * Exact branch and bound over the items (n <= EO__BAL_EXACT), splits of k a side keeping every
 * status and |D| <= dev_max.
 * feas == 0: the least objective vector; returns 1 with *best and side[] (a split reaching
 *            it), 0 when no split exists.
 * feas == 1: is there a split with vector <= *best (lexicographically over the active terms)?
 *            1 with side[] and *best set to its vector, 0 when none. *best must be C*, the
 *            least vector under statuses these refine (the questions' splits are then all at
 *            least C*, and one at most C* has each of its terms: the search cuts by each).
 * feas == 2: as 0, seeded with an incumbent: *best is the vector of side[], a split keeping
 *            every status with |D| <= dev_max; returns 1 with the least vector and a split.
 * EO_ELIMIT when b->work passes b->work_limit (the answer is then unknown); 2 when
 * b->midway stopped it (its ctx holds what it found).
 */
int eo__bal_search(eo__bal *b, int64_t dev_max, int feas, eo__bal_vec best, uint8_t *side);

/* What the search can say before it starts: a lower bound of every term (L) over the splits
 * keeping every status with |D| <= dev_max, and of k²|var(A) - var(B)| (*vdiff) and of
 * k|sd(A) - sd(B)| (*sdiff), both on the spread scale. Returns 1, 0 when no such split exists,
 * EO_ENOMEM. */
int eo__bal_root_bound(eo__bal *b, int64_t dev_max, eo__bal_vec L, int64_t *vdiff, double *sdiff);

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

/* ---- meet in the middle (balance_mitm.c, balance_tail.c) ---- */

/* One side assignment of some items (eo__bal_list()): sums of A minus those of B, members on
 * A (those on B are the rest of the listed members), players moved and preference weight
 * denied, which items are on A, and the sides of the two best players when listed. 32 bytes:
 * the lists are long and their building and reading are bound by memory. */
typedef struct eo__bal_ent {
    int64_t d, x;   /* Σq, Σqs² */
    int32_t ds;     /* Σqs (|qs| < 2^20, at most 64 players) */
    int32_t dn;     /* preference weight denied (the lists need the total below 2^31:
                     * eo__bal_list_ok()) */
    uint32_t mask;  /* bit y: the list's item y is on A */
    uint8_t na, mv; /* members on A; players moved (n <= EO__BAL_EXACT) */
    uint8_t s1, s2; /* 0 when not among the items */
} eo__bal_ent;

/* 1 when the lists can hold b's sums: the preference weights total below 2^31. */
int eo__bal_list_ok(const eo__bal *b);

/* What a list keeps: at most na, nb members on A, B, mv players moved and dn weight denied. */
typedef struct eo__bal_lim {
    int na, nb, mv;
    int64_t dn;
} eo__bal_lim;

/* Every side assignment of the items it[0..h) (h <= 32) within the limits *lim, sorted by d,
 * then x: each item doubles the list by merging its B copy with its A copy (both sorted: a
 * shift keeps the order). Returns the count, in e; e and tmp need room for
 * eo__bal_list_room() entries, at least the most a stage holds (2^h without limits; the room
 * counts members and moves, not the denied weight). */
size_t eo__bal_list(const eo__bal *b, const int *it, int h, const eo__bal_lim *lim, eo__bal_ent *e,
                    eo__bal_ent *tmp);
size_t eo__bal_list_room(const eo__bal *b, const int *it, int h, const eo__bal_lim *lim);

/* src[0..cnt), sorted, into dst grouped by the count on A (stable: each group stays sorted):
 * the entries with na = c are dst[start[c] .. start[c + 1]), c <= nmax. */
void eo__bal_group(const eo__bal_ent *src, size_t cnt, eo__bal_ent *dst, int *start, int nmax);

/* side[] of a pair: items with status A or B as pinned, those of two lists by their masks. */
void eo__bal_sides(const eo__bal *b, const int *il, int hl, uint32_t ml, const int *ir, int hr,
                   uint32_t mr, uint8_t *side);

/* 1 when side x comes before side y by the tie rule (first differing player on A in x). */
int eo__bal_before(int n, const uint8_t *x, const uint8_t *y);

/*
 * The search's tail (balance_tail.c): in a full scramble (2k = n, parties whole, no side
 * preference) the last items of the search order are answered at once by meet in the middle
 * instead of by the search's subtrees. eo__bal_tail_build() lists the items items[0..cnt)
 * under their statuses (pinned ones included), cut into halves alternately within lim[0], or,
 * nleft > 0, into items[0..nleft) within lim[0] and the rest within lim[1]
 * into *tp (allocated at the first call, released with eo__bal_tail_free()); returns 0, 2 when
 * they do not fit (a BENCH status, more than room_max entries a half), EO_ENOMEM.
 * eo__bal_tail_ask() answers one node: q->feas, a completion with a vector <= best; else the
 * least completion, when it beats best (or !q->found). Returns 1 with the listed items' sides
 * in side[], else 0; *work counts the entries and pairs visited.
 */
/* the search's tail: at least tail_items items (TAIL_ITEMS by default), more while each half's
 * count-limited list stays within TAIL_ROOM entries */
#define TAIL_ITEMS_MAX 24
#define TAIL_ROOM ((size_t)1 << 15)
typedef struct eo__bal_tail_q {
    int na, nb;       /* members on A and on B outside the lists */
    int mv;           /* players moved outside the lists (rebalance: eo__bal_finish()) */
    int64_t dn;       /* preference weight denied outside the lists */
    int64_t d, ds, x; /* Σq, Σqs, Σqs² of A minus those of B outside the lists */
    int64_t s, xs;    /* Σqs and Σqs² of the members outside the lists */
    uint8_t s1, s2;   /* sides of the two best players outside the lists, else 0 */
    int64_t dev_max;
    int feas, found;  /* a feasibility question; an incumbent exists (least questions) */
    eo__bal_vec base; /* the vector's terms the lists do not change (top2 among them) */
} eo__bal_tail_q;
int eo__bal_tail_build(eo__bal_tail **tp, const eo__bal *b, const int *items, int cnt, int nleft,
                       const eo__bal_lim *lim, size_t room_max);
/* Whether eo__bal_tail_build() with these arguments (nleft 0) would build its lists (0) or
 * returns 2, without building them (the search builds its tail when a node first reaches it). */
int eo__bal_tail_fits(const eo__bal *b, const int *items, int cnt, const eo__bal_lim *lim,
                      size_t room_max);
/* Later questions of a search: the lists t was built from items[0..cnt) (nleft 0) hold the
 * completions under the statuses now when every item pinned then keeps its pin (items free
 * then may be pinned now: their entries on the other side are left out, eo__bal_tail_pin()).
 * Returns how many items were pinned since, -1 when the lists cannot serve. */
int eo__bal_tail_pins(const eo__bal_tail *t, const eo__bal *b, const int *items, int cnt);
/* The lists as built, less the entries that put an item pinned since on the other side. */
void eo__bal_tail_pin(eo__bal_tail *t, const eo__bal *b);
int eo__bal_tail_ask(const eo__bal_tail *t, const eo__bal *b, const eo__bal_tail_q *q,
                     const eo__bal_vec best, uint8_t *side, uint64_t *work);
void eo__bal_tail_free(eo__bal_tail *t);

/*
 * A cheap witness in a full scramble: from side[], a split keeping every status but maybe the
 * vector (item t just moved: the team-A question on t, or the second best player moved away
 * from the best), a split of vector <= best by moving other items: up to REPAIR_ITEMS undecided
 * items (the nearest to t in rating sum, fewer of them first, a spread of ratings, the largest,
 * a few drawn at random; never t) may change sides by the tail's lists (b->repair),
 * every other item keeps its side. t = -1: no item moved. windows: REPAIR_FIRST tries the
 * nearest, the spread and the largest (those that find most witnesses), REPAIR_REST the
 * others, REPAIR_ALL all. Returns 1 with side[] such a split, 0 when none was found (which
 * proves nothing; side[] may have changed then), EO_ENOMEM.
 */
#define REPAIR_ITEMS 24
enum { REPAIR_ALL, REPAIR_FIRST, REPAIR_REST }; /* windows: all, the first ones, the others */
int eo__bal_repair(eo__bal *b, int t, const eo__bal_vec best, uint8_t *side, int windows);

/*
 * The rest of team A at once when everyone plays (2k = n, parties whole; in scramble mode no
 * side preference), given side[], a split of vector best (= C*, the least) that keeps the
 * statuses, when the undecided items' lists (b->repair) stay within FINISH_ROOM entries a half:
 * among the completions of vector best, the one whose team A comes first in request order,
 * which the remaining questions would reach one by one. The lists match a pair to best by
 * spread window and top2 (scramble) or by moves and denied weight (rebalance), and d. Returns
 * 1 with side[], 2 when it does not apply, EO_ENOMEM.
 */
#define FINISH_ROOM ((size_t)1 << 14)
int eo__bal_finish(eo__bal *b, int64_t T, const eo__bal_vec best, uint8_t *side);

/*
 * C* (step 2) of a full rebalance (everyone plays, parties whole, every undecided item's
 * members on one current team) by the same lists: the split is who moves, and the moves from
 * A-home and B-home items differ by what the count on A fixes, so the fewest moves is the
 * least number of B-home movers with a split within T; then the least denied weight, then
 * |D|, by a binary search a run. Returns 1 with *best and side[] (a split reaching it), 2 when
 * it does not apply (an item without one home, lists past FINISH_ROOM: the search answers),
 * EO_ELIMIT, EO_ENOMEM.
 */
int eo__bal_least_moves(eo__bal *b, int64_t T, eo__bal_vec best, uint8_t *side);

/* -1, 0, 1: x against y by the local search's key (max(|D|, eps), then the active terms). */
int eo__bal_key_cmp(const eo__bal *b, int64_t eps, const eo__bal_vec x, const eo__bal_vec y);

/*
 * Swap local search with restarts (seed 000 F10, bench-aware): minimises
 * (max(|D|, eps), the active terms...) from the current teams and from random starts. Returns 1
 * with side[] and *vec, 0 when no start filled both teams, EO_ENOMEM.
 */
int eo__bal_local(const eo__bal *b, int64_t eps, uint64_t seed, int restarts, uint8_t *side,
                  eo__bal_vec vec);

/* Test switches of eo__balance_solve(). All zero (or a NULL pointer) is eo_balance_solve().
 * All but force_local only choose which exact path answers, so the answers stay the same (the
 * tests compare the paths); force_local gives up exactness as the work limit does. */
typedef struct eo__balance_opts {
    bool general_path; /* plain requests by the general path too, not by eo_split_solve() */
    bool no_mitm;      /* eo__bal_mitm() declines: the search answers full scrambles */
    bool table_early;  /* gap-only questions go to split_dp.c's table after one search node */
    bool force_local;  /* every k by local search (exact = 0) */
    int tail_items;    /* the search's tail: 0 the default (TAIL_ITEMS items), > 0 that
                        * many (tests reach it on small instances), < 0 none */
    uint64_t midway_work; /* > 0: a team-A question's search calls the later witness windows
                           * at this much work (tests reach them), 0 the default */
    bool late_windows;    /* every witness window midway, none before the search (tests: with
                           * midway_work 1, their witnesses stop searches) */
} eo__balance_opts;

/* eo_balance_solve() (same contract) with the test switches of opts, which may be NULL. */
int eo__balance_solve(const eo_balance_player *players, size_t n, const eo_balance_request *req,
                      eo_balance_result **out, uint32_t *bad_party, const eo__balance_opts *opts);

#endif
