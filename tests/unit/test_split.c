/* Exact team splits (eo_split.h, seed 000 F7).
 *
 * The reference answers come from code written here, independently of src/core/split*.c:
 * - brute force (N <= 14): every playing set and every team A, compared by the rules of
 *   docs/BALANCER.md (least gap; playing set with the lexicographically smallest sorted index
 *   list; team A with the lexicographically smallest sorted index list);
 * - a dynamic programme over (players on A, players on B, difference) for N = 32 and 64 with
 *   small ratings, which gives the least gap exactly and the same tie rules by greedy
 *   feasibility questions answered from a table;
 * - for realistic ratings at N = 32 and 64, the lower bound (0, or 1 unit of the gcd when all
 *   play and the sum is odd): reaching it proves the gap optimal.
 * Hand-made cases state their derivation next to them. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_split.h"
/* The internal question API, for the search's table fallback (test_search_table_fallback). */
#include "core/balance/split/split_internal.h"

/* ---- helpers ---------------------------------------------------------------------------- */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static int64_t rng_range(uint64_t *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

/* Ratings of several shapes: tiny ranges make many ties, which is what the tie rules are for. */
static void gen(uint64_t *s, int shape, eo_split_player *p, int n)
{
    for (int i = 0; i < n; i++) {
        switch (shape % 5) {
        case 0: p[i].rating = rng_range(s, 0, 3); break;
        case 1: p[i].rating = rng_range(s, 0, 20); break;
        case 2: p[i].rating = rng_range(s, 100, 3000); break;
        case 3: p[i].rating = rng_range(s, -(INT64_C(1) << 40), INT64_C(1) << 40); break;
        default: p[i].rating = 1000 + 7 * rng_range(s, -50, 50); break; /* common factor 7 */
        }
    }
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* A split's arrays are well formed: sizes, ascending, disjoint, covering, sums and gap. */
static void check_split(const eo_split *s, const eo_split_player *p, int n, int k)
{
    int seen[EO_SPLIT_EXACT_MAX] = {0};
    int64_t sa = 0, sb = 0;
    assert_int_equal(s->k, k);
    assert_int_equal(s->nbench, (size_t)(n - 2 * k));
    for (int i = 0; i < k; i++) {
        assert_true(s->a[i] < n && s->b[i] < n);
        if (i > 0) {
            assert_true(s->a[i] > s->a[i - 1]);
            assert_true(s->b[i] > s->b[i - 1]);
        }
        seen[s->a[i]]++;
        seen[s->b[i]]++;
        sa += p[s->a[i]].rating;
        sb += p[s->b[i]].rating;
    }
    for (size_t i = 0; i < s->nbench; i++) {
        assert_true(s->bench[i] < n);
        if (i > 0)
            assert_true(s->bench[i] > s->bench[i - 1]);
        seen[s->bench[i]]++;
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(seen[i], 1);
    assert_true(sa == s->sum_a && sb == s->sum_b);
    assert_true(s->gap == abs64(sa - sb));
}

static uint64_t mask_of(const uint16_t *idx, size_t len)
{
    uint64_t m = 0;
    for (size_t i = 0; i < len; i++)
        m |= UINT64_C(1) << idx[i];
    return m;
}

/* Compares two sets by their sorted index lists: the one holding the lowest index where they
 * differ comes first (for sets of equal size that is lexicographic order). -1 when x first. */
static int lex_cmp(uint64_t x, uint64_t y)
{
    uint64_t diff = x ^ y;
    if (!diff)
        return 0;
    uint64_t low = diff & (~diff + 1);
    return (x & low) ? -1 : 1;
}

static eo_splits *solve(const eo_split_player *p, int n, eo_bench_mode mode)
{
    eo_split_options opt;
    memset(&opt, 0, sizeof opt);
    opt.bench = mode;
    eo_splits *s = NULL;
    assert_int_equal(eo_split_solve(p, (size_t)n, &opt, &s), 0);
    assert_non_null(s);
    assert_int_equal(s->count, (size_t)(n / 2 - 1));
    return s;
}

/* ---- brute force -------------------------------------------------------------------------- */

typedef struct best {
    int64_t gap;
    uint64_t play, a;
} best;

/* Every split of every playing set of size 2k (queue: only the first 2k players), by
 * |ΣA - ΣB + field| (field 0: the plain rules; else a map's field, eo__split_solve_field()). */
static best brute_field(const eo_split_player *p, int n, int k, int queue, int64_t field)
{
    best b = {INT64_MAX, 0, 0};
    uint64_t all = (UINT64_C(1) << n) - 1;
    for (uint64_t play = 0; play <= all; play++) {
        if (__builtin_popcountll(play) != 2 * k)
            continue;
        if (queue && play != (UINT64_C(1) << 2 * k) - 1)
            continue;
        for (uint64_t a = play;; a = (a - 1) & play) {
            if (__builtin_popcountll(a) == k) {
                int64_t d = field;
                for (int i = 0; i < n; i++) {
                    if (a >> i & 1)
                        d += p[i].rating;
                    else if (play >> i & 1)
                        d -= p[i].rating;
                }
                d = abs64(d);
                int better = d < b.gap ||
                             (d == b.gap && (lex_cmp(play, b.play) < 0 ||
                                             (play == b.play && lex_cmp(a, b.a) < 0)));
                if (better) {
                    b.gap = d;
                    b.play = play;
                    b.a = a;
                }
            }
            if (a == 0)
                break;
        }
    }
    return b;
}

static best brute(const eo_split_player *p, int n, int k, int queue)
{
    return brute_field(p, n, k, queue, 0);
}

static void brute_compare(int nmin, int nmax, int per_n, uint64_t seed, eo_bench_mode mode)
{
    uint64_t s = seed;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = nmin; n <= nmax; n++) {
        for (int t = 0; t < per_n; t++) {
            gen(&s, t, p, n);
            eo_splits *r = solve(p, n, mode);
            for (int k = 2; k <= n / 2; k++) {
                const eo_split *sp = &r->split[k - 2];
                check_split(sp, p, n, k);
                best b = brute(p, n, k, mode == EO_BENCH_QUEUE);
                uint64_t play = mask_of(sp->a, (size_t)k) | mask_of(sp->b, (size_t)k);
                if (sp->gap != b.gap || play != b.play || mask_of(sp->a, (size_t)k) != b.a)
                    fail_msg("n=%d t=%d k=%d: got gap %lld play %llx a %llx, brute force gap "
                             "%lld play %llx a %llx", n, t, k, (long long)sp->gap,
                             (unsigned long long)play,
                             (unsigned long long)mask_of(sp->a, (size_t)k), (long long)b.gap,
                             (unsigned long long)b.play, (unsigned long long)b.a);
            }
            eo_splits_free(r);
        }
    }
}

static void test_brute_small(void **state)
{
    (void)state;
    brute_compare(2, 10, 150, 1, EO_BENCH_SOLVER);
}

static void test_brute_larger(void **state)
{
    (void)state;
    brute_compare(11, 14, 10, 2, EO_BENCH_SOLVER);
}

static void test_brute_queue(void **state)
{
    (void)state;
    brute_compare(2, 12, 60, 3, EO_BENCH_QUEUE);
}

/* The solver's answers for the team sizes k in [kmin, kmax] against the brute force. */
static void compare_some_k(const eo_split_player *p, int n, int t, int kmin, int kmax)
{
    eo_splits *r = solve(p, n, EO_BENCH_SOLVER);
    for (int k = kmin; k <= kmax && k <= n / 2; k++) {
        const eo_split *sp = &r->split[k - 2];
        check_split(sp, p, n, k);
        best b = brute(p, n, k, 0);
        uint64_t play = mask_of(sp->a, (size_t)k) | mask_of(sp->b, (size_t)k);
        if (sp->gap != b.gap || play != b.play || mask_of(sp->a, (size_t)k) != b.a)
            fail_msg("n=%d t=%d k=%d: got gap %lld play %llx a %llx, brute force gap "
                     "%lld play %llx a %llx", n, t, k, (long long)sp->gap,
                     (unsigned long long)play,
                     (unsigned long long)mask_of(sp->a, (size_t)k), (long long)b.gap,
                     (unsigned long long)b.play, (unsigned long long)b.a);
    }
    eo_splits_free(r);
}

/* Brute force for the team sizes k in [kmin, kmax] only, for n in [nmin, nmax]. */
static void brute_some_k(int nmin, int nmax, int kmin, int kmax, int per_n, uint64_t seed)
{
    uint64_t s = seed;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = nmin; n <= nmax; n++) {
        for (int t = 0; t < per_n; t++) {
            gen(&s, t % 2 ? 1 : 2, p, n);
            compare_some_k(p, n, t, kmin, kmax);
        }
    }
}

/* Small team sizes with many more players than places: the solver answers "who plays" from a
 * table of the playing players' side assignments and picks the last one or two players from
 * the many undecided ones (docs/BALANCER.md §3), and proves the least gap from the answer for
 * k - 1 when it can. Ratings 100..3000 (few exact splits per playing set, so most of those
 * questions are "no") and 0..20 (many ties). */
static void test_brute_small_k_many_players(void **state)
{
    (void)state;
    brute_some_k(15, 17, 2, 3, 4, 4);
}

/* k = 7, 8 with one to three players benched: the questions with at most one undecided player
 * still to play are answered by meet in the middle over the playing players' sides. */
static void test_brute_mid_k_bench(void **state)
{
    (void)state;
    brute_some_k(16, 17, 7, 8, 2, 8);
}

/* Every k with a bench, ratings 100..3000 and 0..20: the table of subset sums of the first
 * players (split_dense.c) answers "who plays" when the first playing set with gap 0 has at most
 * two late players, and hands over to the general path otherwise (common at k = 2, 3 with
 * 100..3000); both outcomes and the hand-over are compared with the brute force. */
static void test_brute_dense_prefix_sets(void **state)
{
    (void)state;
    brute_some_k(11, 13, 2, 6, 4, 21);
}

/* k = 2..4 where the first playing set with gap 0 leaves out player 2k - 3 and takes three
 * later players (split_dense.c's three-late-player family), or has still more late players
 * (the general path after that family misses). Ratings 100..400 make the family hit often,
 * 100..3000 make it miss often; a scratch instrumented copy of the solver counted, for this
 * seed, 22 hits and 7 misses of the family at k = 2..4 with 100..400 and 14 hits and 39
 * misses with 100..3000. */
static void test_brute_dense_three_late(void **state)
{
    (void)state;
    uint64_t s = 77;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 12; n <= 14; n++) {
        for (int t = 0; t < 12; t++) {
            for (int i = 0; i < n; i++)
                p[i].rating = rng_range(&s, 100, t % 2 ? 3000 : 400);
            compare_some_k(p, n, t, 2, 4);
        }
    }
}

/* The subset-sum table of split_dense.c shifts each count's bitset by a player's q: a whole
 * number of 64-bit words plus a bit shift, the words inside the band in one branch-free run and
 * the band's edge words apart. Here players 4 and 8 have q = r - 100 a multiple of 64 (bit
 * shift 0: the run without the neighbour word), the others q in 1..200 (bands of several
 * words), with player 0 at 100 so the q are not rescaled. k = 2..6 with a bench against the
 * brute force. (Checked to bite: a scratch copy of the solver whose word-aligned run dropped
 * its words gave a different answer on 5 of these 16 requests.) */
static void test_brute_dense_word_shifts(void **state)
{
    (void)state;
    uint64_t s = 91;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 11; n <= 12; n++) {
        for (int t = 0; t < 8; t++) {
            p[0].rating = 100;
            for (int i = 1; i < n; i++)
                p[i].rating = i % 4 != 0 ? rng_range(&s, 101, 300)
                                         : 100 + 64 * rng_range(&s, 1, 4);
            compare_some_k(p, n, t, 2, 6);
        }
    }
}

/* Team A for a fixed playing set (2k = n) by split_mitm.c: with a least gap g of at most 4 (in
 * units of the ratings' common step) the second part's assignments sit in a hash table and a
 * leaf looks up the 2g + 1 differences that close the gap; above 4 the sorted list is searched.
 * Ratings 100..3000 with n = 12, 14, 16 give least gaps from 0 to 28 (a scratch program
 * counted, for this seed, gaps 0: 9, 1..4: 13, above 4: 8 of those 30 requests); ratings
 * 100..103 give many assignments with the same (count on A, difference), where the table keeps
 * the lexicographically first. Each against the brute force. */
static void test_brute_fixed_set_teams(void **state)
{
    (void)state;
    uint64_t s = 123;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 12; n <= 16; n += 2) {
        for (int t = 0; t < 12; t++) {
            for (int i = 0; i < n; i++)
                p[i].rating = rng_range(&s, 100, t < 10 ? 3000 : 103);
            compare_some_k(p, n, t, n / 2, n / 2);
        }
    }
}

/* ---- a map's field (eo__split_solve_field) ------------------------------------------------- */

/* A field for the ratings p: a few units either way, about one rating's spread, a multiple of
 * the common factor 7 of gen()'s last shape (the solver's gcd then keeps it), the largest
 * allowed either way (beyond every difference), or up to n spreads. */
static int64_t gen_field(uint64_t *s, const eo_split_player *p, int n)
{
    int64_t lo = p[0].rating, hi = p[0].rating;
    for (int i = 1; i < n; i++) {
        lo = p[i].rating < lo ? p[i].rating : lo;
        hi = p[i].rating > hi ? p[i].rating : hi;
    }
    int64_t span = hi - lo + 1;
    switch (rng_range(s, 0, 4)) {
    case 0: return rng_range(s, -3, 3);
    case 1: return rng_range(s, -span, span);
    case 2: return 7 * rng_range(s, -20, 20);
    case 3: return rng_range(s, 0, 1) ? EO__SPLIT_FIELD_MAX : -EO__SPLIT_FIELD_MAX;
    default: return rng_range(s, -(int64_t)n * span, (int64_t)n * span);
    }
}

/* eo__split_solve_field() for k in [kmin, kmax] against the brute force by |ΣA - ΣB + field|. */
static void compare_field(const eo_split_player *p, int n, int64_t field, int kmin, int kmax, int t)
{
    eo_splits *r = NULL;
    assert_int_equal(eo__split_solve_field(p, (size_t)n, NULL, field, kmin, kmax, &r), 0);
    assert_int_equal(r->count, (size_t)(kmax - kmin + 1));
    for (int k = kmin; k <= kmax; k++) {
        const eo_split *sp = &r->split[k - kmin];
        check_split(sp, p, n, k);
        best b = brute_field(p, n, k, 0, field);
        uint64_t a = mask_of(sp->a, (size_t)k), play = a | mask_of(sp->b, (size_t)k);
        int64_t dev = abs64(sp->sum_a - sp->sum_b + field);
        if (dev != b.gap || play != b.play || a != b.a)
            fail_msg("n=%d t=%d k=%d field=%lld: got %lld play %llx a %llx, brute force %lld "
                     "play %llx a %llx", n, t, k, (long long)field, (long long)dev,
                     (unsigned long long)play, (unsigned long long)a, (long long)b.gap,
                     (unsigned long long)b.play, (unsigned long long)b.a);
    }
    eo_splits_free(r);
}

/* Random fields for n = 4..14 (every oracle of docs/BALANCER.md §3 with a bench, the dense
 * table and the small-k table among them, and team A by meet in the middle), some requests for
 * a part of the team sizes only; then n = 16, 17 at k = 7, 8, where meet in the middle answers
 * the questions with one player still to play. Ratings of every shape of gen(), ties included:
 * with a field the mirror of a split has another |D|, so team A need not hold the first
 * player who plays. */
static void test_brute_field(void **state)
{
    (void)state;
    uint64_t s = 2026;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 4; n <= 14; n++) {
        for (int t = 0; t < (n <= 10 ? 60 : 8); t++) {
            gen(&s, t, p, n);
            int64_t field = gen_field(&s, p, n);
            int kmin = t % 3 == 1 ? (int)rng_range(&s, 2, n / 2) : 2;
            int kmax = t % 3 == 2 ? (int)rng_range(&s, kmin, n / 2) : n / 2;
            compare_field(p, n, field, kmin, kmax, t);
        }
    }
    for (int n = 16; n <= 17; n++) {
        for (int t = 0; t < 2; t++) {
            for (int i = 0; i < n; i++)
                p[i].rating = rng_range(&s, 100, t ? 3000 : 130);
            compare_field(p, n, gen_field(&s, p, n), 7, 8, t);
        }
    }
}

/* ---- dynamic programme for large N, small ratings ---------------------------------------- */

/* Table over (players left j, ra, rb, incoming difference d): can players j.. take ra more on A
 * and rb more on B, each within allow[j] (bit 0 sit out, 1 A, 2 B), and end with |d| <= g? */
typedef struct dp {
    int n, k, dmax, w;
    uint8_t *t;
} dp;

static uint8_t *dp_at(const dp *x, int j, int ra, int rb, int d)
{
    return &x->t[(((size_t)j * (size_t)(x->k + 1) + (size_t)ra) * (size_t)(x->k + 1) +
                  (size_t)rb) * (size_t)x->w + (size_t)(d + x->dmax)];
}

static void dp_build(dp *x, const int64_t *q, const uint8_t *allow, int64_t g)
{
    int n = x->n, k = x->k;
    memset(x->t, 0, (size_t)(n + 1) * (size_t)(k + 1) * (size_t)(k + 1) * (size_t)x->w);
    for (int d = -x->dmax; d <= x->dmax; d++)
        *dp_at(x, n, 0, 0, d) = abs64(d) <= g;
    for (int j = n - 1; j >= 0; j--)
        for (int ra = 0; ra <= k; ra++)
            for (int rb = 0; rb <= k; rb++)
                for (int d = -x->dmax; d <= x->dmax; d++) {
                    int ok = (allow[j] & 1) && *dp_at(x, j + 1, ra, rb, d);
                    int da = d + (int)q[j], db = d - (int)q[j];
                    if (!ok && (allow[j] & 2) && ra > 0 && da <= x->dmax)
                        ok = *dp_at(x, j + 1, ra - 1, rb, da);
                    if (!ok && (allow[j] & 4) && rb > 0 && db >= -x->dmax)
                        ok = *dp_at(x, j + 1, ra, rb - 1, db);
                    *dp_at(x, j, ra, rb, d) = (uint8_t)ok;
                }
}

/* The reference split for one k: least gap |ΣA - ΣB + off| by trying g = 0, 1, ... against the
 * table, then the playing set and team A greedily in request order, each step kept only when
 * the table says a split with that gap still exists. Forward states are (na, nb, d) sets, d
 * starting at off. */
static best dp_reference(const int64_t *q, int n, int k, int off)
{
    best res = {0, 0, 0};
    dp x = {n, k, 0, 0, NULL};
    int64_t qmax = 0;
    for (int i = 0; i < n; i++)
        qmax = q[i] > qmax ? q[i] : qmax;
    x.dmax = (int)(k * qmax) + abs(off);
    x.w = 2 * x.dmax + 1;
    x.t = malloc((size_t)(n + 1) * (size_t)(k + 1) * (size_t)(k + 1) * (size_t)x.w);
    size_t fsz = (size_t)(k + 1) * (size_t)(k + 1) * (size_t)x.w;
    uint8_t *f = malloc(fsz), *f2 = malloc(fsz);
    assert_non_null(x.t);
    assert_non_null(f);
    assert_non_null(f2);
    uint8_t allow[EO_SPLIT_EXACT_MAX];
    memset(allow, 7, sizeof allow);
    int64_t g = 0;
    for (;; g++) {
        dp_build(&x, q, allow, g);
        if (*dp_at(&x, 0, k, k, off))
            break;
    }
    res.gap = g;
    /* Phase 1 (who plays) then phase 2 (who is on A), each a greedy walk over the players. */
    for (int phase = 1; phase <= 2; phase++) {
        if (phase == 2) {
            for (int i = 0; i < n; i++)
                allow[i] = (res.play >> i & 1) ? 6 : 1;
            dp_build(&x, q, allow, g);
        }
        memset(f, 0, fsz);
        f[(size_t)(x.dmax + off)] = 1; /* na = nb = 0, d = off */
        for (int i = 0; i < n; i++) {
            /* choices in order of preference: phase 1 "plays" (A or B) then "sits out";
             * phase 2 "A" then "B" (players who sit out just pass). */
            int prefs[2][2] = {{6, 1}, {2, 4}};
            int *pr = prefs[phase - 1];
            int npr = phase == 2 && !(res.play >> i & 1) ? 0 : 2;
            int chosen = 0;
            for (int c = 0; c < (npr ? npr : 1); c++) {
                int mask = npr ? pr[c] : 1;
                int ok = 0;
                memset(f2, 0, fsz);
                for (int na = 0; na <= k; na++)
                    for (int nb = 0; nb <= k; nb++)
                        for (int d = -x.dmax; d <= x.dmax; d++) {
                            if (!f[((size_t)na * (size_t)(k + 1) + (size_t)nb) * (size_t)x.w +
                                   (size_t)(d + x.dmax)])
                                continue;
                            int to[3][3] = {{na, nb, d}, {na + 1, nb, d + (int)q[i]},
                                            {na, nb + 1, d - (int)q[i]}};
                            for (int o = 0; o < 3; o++) {
                                if (!(mask >> o & 1))
                                    continue;
                                int a2 = to[o][0], b2 = to[o][1], d2 = to[o][2];
                                if (a2 > k || b2 > k || d2 < -x.dmax || d2 > x.dmax)
                                    continue;
                                if (!*dp_at(&x, i + 1, k - a2, k - b2, d2))
                                    continue;
                                f2[((size_t)a2 * (size_t)(k + 1) + (size_t)b2) * (size_t)x.w +
                                   (size_t)(d2 + x.dmax)] = 1;
                                ok = 1;
                            }
                        }
                if (ok) {
                    chosen = mask;
                    break;
                }
            }
            assert_true(chosen != 0); /* the table promised a completion */
            if (phase == 1 && chosen == 6)
                res.play |= UINT64_C(1) << i;
            if (phase == 2 && chosen == 2)
                res.a |= UINT64_C(1) << i;
            uint8_t *t = f;
            f = f2;
            f2 = t;
        }
    }
    free(f);
    free(f2);
    free(x.t);
    return res;
}

/* off != 0: eo__split_solve_field() with the field off for every k, against dp_reference()
 * with it. */
static void dp_compare(int n, int count, int64_t maxr, uint64_t seed, int off)
{
    uint64_t s = seed;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    int64_t q[EO_SPLIT_EXACT_MAX];
    for (int t = 0; t < count; t++) {
        /* ratings 0..maxr with a zero present, so the solver's shift is the identity and its
         * gcd division only rescales; the reference works on the raw values */
        for (int i = 0; i < n; i++)
            q[i] = rng_range(&s, 0, maxr);
        q[rng_range(&s, 0, n - 1)] = 0;
        for (int i = 0; i < n; i++)
            p[i].rating = q[i] + 5000; /* a common shift changes no difference */
        eo_splits *r = NULL;
        if (off)
            assert_int_equal(eo__split_solve_field(p, (size_t)n, NULL, off, 2, n / 2, &r), 0);
        else
            r = solve(p, n, EO_BENCH_SOLVER);
        for (int k = 2; k <= n / 2; k++) {
            const eo_split *sp = &r->split[k - 2];
            check_split(sp, p, n, k);
            best b = dp_reference(q, n, k, off);
            uint64_t play = mask_of(sp->a, (size_t)k) | mask_of(sp->b, (size_t)k);
            if (abs64(sp->sum_a - sp->sum_b + off) != b.gap || play != b.play ||
                mask_of(sp->a, (size_t)k) != b.a)
                fail_msg("n=%d t=%d k=%d: got gap %lld play %llx a %llx, DP gap %lld play "
                         "%llx a %llx", n, t, k, (long long)sp->gap, (unsigned long long)play,
                         (unsigned long long)mask_of(sp->a, (size_t)k), (long long)b.gap,
                         (unsigned long long)b.play, (unsigned long long)b.a);
        }
        eo_splits_free(r);
    }
}

static void test_dp_n32(void **state)
{
    (void)state;
    dp_compare(32, 4, 9, 11, 0);
}

/* n = 22 with ratings 0..15: k = 9, 10 with two to four players benched, where the questions
 * with at most one undecided player still to play go to meet in the middle. */
static void test_dp_n22(void **state)
{
    (void)state;
    dp_compare(22, 3, 15, 13, 0);
}

/* Fields at n = 32 and 26 with ratings 0..9: every k, team A above 24 players (k = 13 .. 16)
 * player by player, where the first player who plays is asked about like the others. A field
 * of 60 at n = 26 (total about 117) leaves team A about the 13 lowest ratings, so the first
 * player is often on B. */
static void test_dp_field_n32(void **state)
{
    (void)state;
    dp_compare(32, 2, 9, 14, 3);
    dp_compare(32, 2, 9, 15, -5);
    dp_compare(26, 3, 9, 16, 60);
}

static void test_dp_n64(void **state)
{
    (void)state;
    dp_compare(64, 1, 3, 12, 0);
}

/* Realistic ratings: the gap reaches the lower bound for every k >= 4 (with ~10^9 or more
 * splits over a difference range of a few thousand, a perfect split is overwhelmingly likely;
 * the assertion proves optimality whenever it holds, and the bound itself is independent:
 * differences are multiples of the gcd of rating differences, and with all players on the
 * field ΣA - ΣB has the parity of ΣA + ΣB). */
static void test_lower_bound_large(void **state)
{
    (void)state;
    uint64_t s = 99;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    static const int sizes[] = {32, 64};
    for (int z = 0; z < 2; z++) {
        int n = sizes[z];
        for (int t = 0; t < 5; t++) {
            int64_t total = 0;
            for (int i = 0; i < n; i++) {
                p[i].rating = 400 + rng_range(&s, 0, 1200) + rng_range(&s, 0, 1200);
                total += p[i].rating;
            }
            /* the gcd of differences is 1 as soon as two ratings differ by 1; force it */
            total += 1 + p[1].rating - p[0].rating;
            p[0].rating = p[1].rating + 1;
            eo_splits *r = solve(p, n, EO_BENCH_SOLVER);
            for (int k = 2; k <= n / 2; k++) {
                const eo_split *sp = &r->split[k - 2];
                check_split(sp, p, n, k);
                int64_t lb = (2 * k == n && (total & 1)) ? 1 : 0;
                assert_true(sp->gap >= lb);
                if (k >= 4)
                    assert_true(sp->gap == lb);
            }
            eo_splits_free(r);
        }
    }
}

/* ---- hand-made cases ----------------------------------------------------------------------- */

static void expect(const eo_split *s, const int *a, const int *b, const int *z, int k,
                   int nz, int64_t gap)
{
    assert_int_equal(s->k, k);
    for (int i = 0; i < k; i++) {
        assert_int_equal(s->a[i], a[i]);
        assert_int_equal(s->b[i], b[i]);
    }
    assert_int_equal(s->nbench, (size_t)nz);
    for (int i = 0; i < nz; i++)
        assert_int_equal(s->bench[i], z[i]);
    assert_true(s->gap == gap);
}

static void test_hand_made(void **state)
{
    (void)state;
    {
        /* 10 20 30 40: {0,3} = 50 = {1,2}; {0,1} v {2,3} = 30 v 70, {0,2} v {1,3} = 40 v 60. */
        eo_split_player p[] = {{10}, {20}, {30}, {40}};
        eo_splits *r = solve(p, 4, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 3}, (int[]){1, 2}, NULL, 2, 0, 0);
        assert_true(r->split[0].sum_a == 50 && r->split[0].sum_b == 50);
        eo_splits_free(r);
    }
    {
        /* all equal: every split has gap 0; the first four play, A = {0,1} is the smallest. */
        eo_split_player p[] = {{100}, {100}, {100}, {100}, {100}};
        eo_splits *r = solve(p, 5, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 1}, (int[]){2, 3}, (int[]){4}, 2, 1, 0);
        eo_splits_free(r);
    }
    {
        /* 1000 1 2 3 4: with player 0 playing the gap is >= 1000 + 1 - 3 - 4 = 994; without
         * him {1,4} = 5 = {2,3}. So the top (and first) player sits out: no anchoring. */
        eo_split_player p[] = {{1000}, {1}, {2}, {3}, {4}};
        eo_splits *r = solve(p, 5, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){1, 4}, (int[]){2, 3}, (int[]){0}, 2, 1, 0);
        eo_splits_free(r);
    }
    {
        /* 1 1 2 3 3. Playing sets: {0,1,2,3} = 1 1 2 3 has best gap 1 (3 v 4), and so have
         * {0,1,2,4}, {0,2,3,4}, {1,2,3,4} (1 2 3 3: 4 v 5); only {0,1,3,4} = 1 1 3 3 splits
         * evenly ({0,3} v {1,4} and {0,4} v {1,3}, both 4 v 4). So player 2 sits out, not the
         * last player, and A = {0,3} is the smaller of the two. Queue mode keeps {0,1,2,3}:
         * gap 1 by {0,2} v {1,3} (3 v 4) or {0,3} v {1,2} (4 v 3); A = {0,2}. */
        eo_split_player p[] = {{1}, {1}, {2}, {3}, {3}};
        eo_splits *r = solve(p, 5, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 3}, (int[]){1, 4}, (int[]){2}, 2, 1, 0);
        eo_splits_free(r);
        r = solve(p, 5, EO_BENCH_QUEUE);
        expect(&r->split[0], (int[]){0, 2}, (int[]){1, 3}, (int[]){4}, 2, 1, 1);
        eo_splits_free(r);
    }
    {
        /* 1 2 3 5: odd total 11, so the gap is odd; {0,3} v {1,2} = 6 v 5 reaches 1 and the
         * others are 3 v 8 and 4 v 7. */
        eo_split_player p[] = {{1}, {2}, {3}, {5}};
        eo_splits *r = solve(p, 4, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 3}, (int[]){1, 2}, NULL, 2, 0, 1);
        eo_splits_free(r);
    }
    {
        /* 1000 1010 1020 1050: {0,3} v {1,2} = 2050 v 2030 (20), {0,2} v {1,3} = 2020 v 2060,
         * {0,1} v {2,3} = 2010 v 2070. */
        eo_split_player p[] = {{1000}, {1010}, {1020}, {1050}};
        eo_splits *r = solve(p, 4, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 3}, (int[]){1, 2}, NULL, 2, 0, 20);
        eo_splits_free(r);
    }
    {
        /* -5 5 -3 3 0 0. k = 2: {0,1} v {2,3} = 0 v 0 with the first four, A = {0,1}.
         * k = 3 (all play, total 0): A holds 0; {0,1,2} = -3 v 3, {0,1,3} = 3 v -3,
         * {0,1,4} = 0 v 0, so A = {0,1,4}, B = {2,3,5}. */
        eo_split_player p[] = {{-5}, {5}, {-3}, {3}, {0}, {0}};
        eo_splits *r = solve(p, 6, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 1}, (int[]){2, 3}, (int[]){4, 5}, 2, 2, 0);
        expect(&r->split[1], (int[]){0, 1, 4}, (int[]){2, 3, 5}, NULL, 3, 0, 0);
        eo_splits_free(r);
    }
    {
        /* extreme ratings: 2^40, -2^40, 2^40, -2^40: {0,1} v {2,3} = 0 v 0 */
        int64_t e = INT64_C(1) << 40;
        eo_split_player p[] = {{e}, {-e}, {e}, {-e}};
        eo_splits *r = solve(p, 4, EO_BENCH_SOLVER);
        expect(&r->split[0], (int[]){0, 1}, (int[]){2, 3}, NULL, 2, 0, 0);
        eo_splits_free(r);
    }
}

/* ---- F9 defects, queue mode, determinism, errors ------------------------------------------ */

static void test_every_k_equal_sizes(void **state)
{
    (void)state;
    uint64_t s = 5;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 4; n <= EO_SPLIT_EXACT_MAX; n += 5) {
        gen(&s, 2, p, n);
        eo_splits *r = solve(p, n, EO_BENCH_SOLVER);
        for (size_t c = 0; c < r->count; c++)
            check_split(&r->split[c], p, n, (int)c + 2); /* |A| = |B| = k, k = 2 .. n/2 */
        eo_splits_free(r);
    }
}

static void test_queue_mode(void **state)
{
    (void)state;
    uint64_t s = 6;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int n = 4; n <= EO_SPLIT_EXACT_MAX; n += 7) {
        gen(&s, 1, p, n);
        eo_splits *r = solve(p, n, EO_BENCH_QUEUE);
        for (size_t c = 0; c < r->count; c++) {
            const eo_split *sp = &r->split[c];
            int k = (int)c + 2;
            check_split(sp, p, n, k);
            for (size_t i = 0; i < sp->nbench; i++)
                assert_int_equal(sp->bench[i], 2 * k + (int)i);
        }
        eo_splits_free(r);
    }
}

static void same(const eo_splits *x, const eo_splits *y, int n)
{
    assert_int_equal(x->count, y->count);
    for (size_t c = 0; c < x->count; c++) {
        const eo_split *a = &x->split[c], *b = &y->split[c];
        assert_int_equal(a->k, b->k);
        assert_memory_equal(a->a, b->a, (size_t)a->k * sizeof *a->a);
        assert_memory_equal(a->b, b->b, (size_t)a->k * sizeof *a->b);
        assert_int_equal(a->nbench, b->nbench);
        if (a->nbench)
            assert_memory_equal(a->bench, b->bench, a->nbench * sizeof *a->bench);
        assert_true(a->gap == b->gap && a->sum_a == b->sum_a);
    }
    (void)n;
}

typedef struct job {
    const eo_split_player *p;
    int n;
    eo_splits *out;
    int rc;
} job;

static void *run_job(void *arg)
{
    job *j = arg;
    j->rc = eo_split_solve(j->p, (size_t)j->n, NULL, &j->out);
    return NULL;
}

static void test_determinism_and_threads(void **state)
{
    (void)state;
    uint64_t s = 7;
    eo_split_player p[40];
    gen(&s, 2, p, 40);
    eo_splits *first = solve(p, 40, EO_BENCH_SOLVER);
    eo_splits *again = solve(p, 40, EO_BENCH_SOLVER);
    same(first, again, 40);
    job jobs[2] = {{p, 40, NULL, -1}, {p, 40, NULL, -1}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(jobs[i].rc, 0);
        same(first, jobs[i].out, 40);
        eo_splits_free(jobs[i].out);
    }
    eo_splits_free(first);
    eo_splits_free(again);
}

static void test_small_n_and_errors(void **state)
{
    (void)state;
    eo_split_player p[EO_SPLIT_EXACT_MAX + 1];
    for (int i = 0; i <= EO_SPLIT_EXACT_MAX; i++)
        p[i].rating = 1000 + i;
    eo_splits *r = NULL;
    for (int n = 2; n <= 3; n++) { /* no k in [2, n/2] */
        assert_int_equal(eo_split_solve(p, (size_t)n, NULL, &r), 0);
        assert_int_equal(r->count, 0);
        eo_splits_free(r);
    }
    r = (eo_splits *)p; /* must be reset to NULL on error */
    assert_int_equal(eo_split_solve(p, 1, NULL, &r), EO_EINVAL);
    assert_null(r);
    assert_int_equal(eo_split_solve(p, 0, NULL, &r), EO_EINVAL);
    assert_int_equal(eo_split_solve(p, EO_SPLIT_EXACT_MAX + 1, NULL, &r), EO_ELIMIT);
    assert_null(r);
    assert_int_equal(eo_split_solve(NULL, 4, NULL, &r), EO_EINVAL);
    assert_int_equal(eo_split_solve(p, 4, NULL, NULL), EO_EINVAL);
    p[2].rating = (INT64_C(1) << 40) + 1;
    assert_int_equal(eo_split_solve(p, 4, NULL, &r), EO_EINVAL);
    p[2].rating = -(INT64_C(1) << 40) - 1;
    assert_int_equal(eo_split_solve(p, 4, NULL, &r), EO_EINVAL);
    p[2].rating = 1002;
    eo_split_options opt;
    memset(&opt, 0, sizeof opt);
    opt.bench = (eo_bench_mode)7;
    assert_int_equal(eo_split_solve(p, 4, &opt, &r), EO_EINVAL);

    /* P(A) is the caller's (eo_app_split()): the solver leaves NaN */
    opt.bench = EO_BENCH_SOLVER;
    assert_int_equal(eo_split_solve(p, 10, NULL, &r), 0);
    assert_true(isnan(r->split[0].p_a));
    eo_splits_free(r);

    /* a work limit too small for the search gives EO_ELIMIT, never an unproven split */
    opt.work_limit = 3;
    r = NULL;
    assert_int_equal(eo_split_solve(p, 64, &opt, &r), EO_ELIMIT);
    assert_null(r);
    eo_splits_free(NULL);
}

/* ---- one search question through the table fallback (split_dp.c) -------------------------- */

/* The least |ΣA - ΣB| over every completion of the statuses with k a side, by listing each
 * undecided player's three choices (A, B, out; PLAY players not out); INT64_MAX when none. */
static int64_t brute_question(const int64_t *q, const uint8_t *st, int n, int k)
{
    int64_t bestg = INT64_MAX;
    int und[EO__SPLIT_N], m = 0, na0 = 0, nb0 = 0;
    int64_t d0 = 0;
    for (int i = 0; i < n; i++) {
        if (st[i] == EO__SP_A) {
            d0 += q[i];
            na0++;
        } else if (st[i] == EO__SP_B) {
            d0 -= q[i];
            nb0++;
        } else if (st[i] != EO__SP_BENCH) {
            und[m++] = i;
        }
    }
    int64_t total = 1;
    for (int j = 0; j < m; j++)
        total *= 3;
    for (int64_t c = 0; c < total; c++) {
        int64_t x = c, d = d0;
        int na = na0, nb = nb0, ok = 1;
        for (int j = 0; j < m && ok; j++) {
            int ch = (int)(x % 3); /* 0 out, 1 A, 2 B */
            x /= 3;
            if (ch == 0 && st[und[j]] == EO__SP_PLAY)
                ok = 0;
            else if (ch == 1) {
                d += q[und[j]];
                na++;
            } else if (ch == 2) {
                d -= q[und[j]];
                nb++;
            }
        }
        if (ok && na == k && nb == k) {
            int64_t g = d < 0 ? -d : d;
            if (g < bestg)
                bestg = g;
        }
    }
    return bestg;
}

/* sol keeps every status, has k a side, and its gap is its own |ΣA - ΣB|: checked here from
 * the bits, independently of eo__split_check(). */
static void check_question_sol(const int64_t *q, const uint8_t *st, int n, int k,
                               const eo__split_sol *sol)
{
    int na = 0, nb = 0;
    int64_t d = 0;
    assert_int_equal(sol->a & sol->b, 0);
    for (int i = 0; i < n; i++) {
        int ina = (int)(sol->a >> i & 1), inb = (int)(sol->b >> i & 1);
        if (st[i] == EO__SP_A)
            assert_true(ina);
        if (st[i] == EO__SP_B)
            assert_true(inb);
        if (st[i] == EO__SP_BENCH)
            assert_false(ina || inb);
        if (st[i] == EO__SP_PLAY)
            assert_true(ina || inb);
        na += ina;
        nb += inb;
        d += ina ? q[i] : inb ? -q[i] : 0;
    }
    assert_true((sol->a | sol->b) >> n == 0);
    assert_int_equal(na, k);
    assert_int_equal(nb, k);
    assert_int_equal(sol->gap, d < 0 ? -d : d);
}

/* Random questions (statuses, max_gap, stop_gap) on up to 9 players with crowded ratings,
 * asked with a node budget of 1, so that nearly every one goes to the table (with the default
 * memory cap, and with tiny caps that make it read the split back by checkpoints, by halving,
 * or not at all), and with the default budget (the search alone); each against the least gap
 * listed by brute force: 0 when it is above max_gap, else a valid split with gap <= stop_gap
 * or with the least gap. (Checked to bite: reading back from the wrong checkpoint, or halving
 * without recomputing the middle table, fails it.) */
static void test_search_table_fallback(void **state)
{
    (void)state;
    uint64_t s = 31;
    int via_table = 0;
    for (int t = 0; t < 400; t++) {
        int n = (int)rng_range(&s, 4, 9);
        int k = (int)rng_range(&s, 1, n / 2);
        int64_t q[EO__SPLIT_N];
        uint8_t order[EO__SPLIT_N];
        /* a young pool's shape: most ratings in a narrow band, some far off */
        for (int i = 0; i < n; i++)
            q[i] = rng_range(&s, 0, 7) == 0 ? rng_range(&s, 0, 200) : rng_range(&s, 90, 110);
        for (int i = 0; i < n; i++)
            order[i] = (uint8_t)i;
        for (int x = 1; x < n; x++) /* q descending, ties by index ascending */
            for (int y = x; y > 0 && q[order[y]] > q[order[y - 1]]; y--) {
                uint8_t tmp = order[y];
                order[y] = order[y - 1];
                order[y - 1] = tmp;
            }
        eo__split_prob p;
        memset(&p, 0, sizeof p);
        p.n = n;
        p.k = k;
        p.q = q;
        p.order = order;
        for (int i = 0; i < n; i++) {
            int r = (int)rng_range(&s, 0, 9); /* mostly undecided */
            p.status[i] = r < 5 ? EO__SP_FREE : r < 7 ? EO__SP_PLAY : r == 7 ? EO__SP_BENCH
                          : r == 8 ? EO__SP_A : EO__SP_B;
        }
        static const int64_t gaps[] = {0, 1, 2, 5, 20};
        int64_t max_gap = rng_range(&s, 0, 5) == 5 ? EO__SPLIT_INF : gaps[rng_range(&s, 0, 4)];
        int64_t stop_gap = rng_range(&s, 0, 1) ? max_gap : 0;
        if (max_gap == EO__SPLIT_INF && stop_gap == max_gap)
            stop_gap = 0;
        int64_t least = brute_question(q, p.status, n, k);
        uint64_t work[2];
        /* passes 2..: tiny memory caps (a grid of ratio ~1.2), so that for some of them the
         * tables are recomputed segment by segment on the way back, for smaller ones only
         * "no" is answered or the search goes on */
        int passes = 2 + 24;
        for (int pass = 0; pass < passes; pass++) {
            eo__split_sol sol;
            memset(&sol, 0, sizeof sol);
            p.dp_budget = pass != 1 ? 1 : 0;
            p.dp_words = pass >= 2 ? (uint64_t)(16.0 * pow(1.2, pass - 2)) : 0;
            p.work = 0;
            int rc = eo__split_search(&p, max_gap, stop_gap, &sol);
            if (least > max_gap) {
                assert_int_equal(rc, 0);
            } else {
                assert_int_equal(rc, 1);
                check_question_sol(q, p.status, n, k, &sol);
                assert_true(sol.gap <= max_gap);
                if (sol.gap > stop_gap)
                    assert_int_equal(sol.gap, least);
            }
            if (pass < 2)
                work[pass] = p.work;
        }
        /* with a budget of 1 the search stops at its second node: when the search alone
         * needed more, the table answered */
        if (work[0] <= 1 && work[1] > 1)
            via_table++;
    }
    /* 214 of the 400 (counted once with a print); the rest settle at the root or cannot go
     * to the table (more than k decided on a side) */
    assert_true(via_table > 100);
}

/* The table's windows (split_dp.c: each cell only keeps the differences that can still end
 * within max_gap): thousands of random questions with a young pool's ratings (a narrow band
 * and a few far off, so the whole range is far wider than any max_gap and the windows cut),
 * small max_gaps, asked with a node budget of 1 (the table answers, with the default memory
 * cap or caps that make it read back by segments or by halving), with the default budget
 * (the search), and with tiny first budgets (the search weighs the table's cost, goes on,
 * then the table answers); each against brute force as in test_search_table_fallback.
 * (Checked to bite: a window one word too narrow fails it.) */
static void test_search_table_windows(void **state)
{
    (void)state;
    uint64_t s = 77;
    for (int t = 0; t < 3000; t++) {
        int n = t % 10 == 0 ? (int)rng_range(&s, 11, 12) : (int)rng_range(&s, 4, 10);
        int k = (int)rng_range(&s, 1, n / 2);
        int64_t q[EO__SPLIT_N];
        uint8_t order[EO__SPLIT_N];
        for (int i = 0; i < n; i++)
            q[i] = rng_range(&s, 0, 7) == 0 ? rng_range(&s, 0, 1200) : rng_range(&s, 560, 640);
        for (int i = 0; i < n; i++)
            order[i] = (uint8_t)i;
        for (int x = 1; x < n; x++)
            for (int y = x; y > 0 && q[order[y]] > q[order[y - 1]]; y--) {
                uint8_t tmp = order[y];
                order[y] = order[y - 1];
                order[y - 1] = tmp;
            }
        eo__split_prob p;
        memset(&p, 0, sizeof p);
        p.n = n;
        p.k = k;
        p.q = q;
        p.order = order;
        for (int i = 0; i < n; i++) {
            int r = (int)rng_range(&s, 0, 11);
            p.status[i] = r < 6 ? EO__SP_FREE : r < 9 ? EO__SP_PLAY : r == 9 ? EO__SP_BENCH
                          : r == 10 ? EO__SP_A : EO__SP_B;
        }
        static const int64_t gaps[] = {0, 1, 2, 3, 10, 64, 200};
        int64_t max_gap = rng_range(&s, 0, 7) == 7 ? EO__SPLIT_INF : gaps[rng_range(&s, 0, 6)];
        int64_t stop_gap = rng_range(&s, 0, 1) ? max_gap : 0;
        if (max_gap == EO__SPLIT_INF && stop_gap == max_gap)
            stop_gap = 0;
        int64_t least = brute_question(q, p.status, n, k);
        /* passes 2..13: memory caps of 64 .. 2^17 words, doubling; 14, 15: the default budget
         * rule with a first budget of 1 and 30 nodes (the search weighs the table's cost at
         * once and goes on for that many more nodes, then the table answers) */
        for (int pass = 0; pass < 2 + 12 + 2; pass++) {
            eo__split_sol sol;
            memset(&sol, 0, sizeof sol);
            p.dp_budget = pass != 1 && pass < 14 ? 1 : 0;
            p.dp_words = pass >= 2 && pass < 14 ? (uint64_t)64 << (pass - 2) : 0;
            p.dp_first = pass == 14 ? 1 : pass == 15 ? 30 : 0;
            p.work = 0;
            int rc = eo__split_search(&p, max_gap, stop_gap, &sol);
            if (least > max_gap) {
                assert_int_equal(rc, 0);
            } else {
                assert_int_equal(rc, 1);
                check_question_sol(q, p.status, n, k, &sol);
                assert_true(sol.gap <= max_gap);
                if (sol.gap > stop_gap)
                    assert_int_equal(sol.gap, least);
            }
        }
    }
}

/* ---- eo_split_solve_ws: the same answers from one reused work space ---------------------- */

/* Same splits, sums, gaps and p_a (NaN or the same bits). */
static void same_all(const eo_splits *x, const eo_splits *y, int n)
{
    same(x, y, n);
    for (size_t c = 0; c < x->count; c++) {
        const eo_split *a = &x->split[c], *b = &y->split[c];
        assert_true(a->sum_b == b->sum_b && a->gap == b->gap);
        if (isnan(a->p_a))
            assert_true(isnan(b->p_a));
        else
            assert_memory_equal(&a->p_a, &b->p_a, sizeof a->p_a);
    }
}

/* Every rating distribution the tests above use (gen()'s five shapes, the dense families'
 * 100..400, dp_compare's small values shifted by 5000, test_lower_bound_large's sum of two
 * uniforms, test_search_table_fallback's young pool, test_brute_dense_word_shifts' multiples
 * of 64), as shapes 0..9. */
#define WS_SHAPES 10
static void ws_gen(uint64_t *s, int shape, eo_split_player *p, int n)
{
    if (shape < 5) {
        gen(s, shape, p, n);
        return;
    }
    for (int i = 0; i < n; i++) {
        int64_t v;
        switch (shape) {
        case 5: v = rng_range(s, 100, 400); break;
        case 6: v = 5000 + rng_range(s, 0, 15); break;
        case 7: v = 400 + rng_range(s, 0, 1200) + rng_range(s, 0, 1200); break;
        case 8: v = rng_range(s, 0, 7) == 0 ? rng_range(s, 0, 200) : rng_range(s, 90, 110); break;
        default: v = i % 4 ? rng_range(s, 101, 300) : 100 + 64 * rng_range(s, 1, 4); break;
        }
        p[i].rating = v;
    }
}

/* One request through eo_split_solve() and through eo_split_solve_ws() on @p ws: the same
 * return code and, on success, the same answer. Returns the return code. */
static int ws_compare(eo_split_ws *ws, const eo_split_player *p, int n,
                      const eo_split_options *opt)
{
    eo_splits *ref = NULL, *got = (eo_splits *)p;
    int rc = eo_split_solve(p, (size_t)n, opt, &ref);
    int rcw = eo_split_solve_ws(ws, p, (size_t)n, opt, &got);
    if (rc != rcw)
        fail_msg("n=%d: eo_split_solve %d, eo_split_solve_ws %d", n, rc, rcw);
    if (rc != 0) {
        assert_null(got);
        return rc;
    }
    assert_non_null(got);
    assert_int_equal(got->count, (size_t)(n >= 4 ? n / 2 - 1 : 0));
    for (size_t c = 0; c < got->count; c++)
        check_split(&got->split[c], p, n, (int)c + 2);
    same_all(ref, got, n);
    eo_splits_free(ref);
    return 0;
}

/* Thousands of random requests, every shape, both bench modes, N from 2 to 64 in one random
 * order, all through ONE work space (so each call finds the tables of a call of another N, mode
 * and shape), each against eo_split_solve() (a fresh work space per call). Shape 3 (ratings up
 * to 2^40) stays at N <= 14: beyond, the search needs far more than the work limit (both
 * answer EO_ELIMIT, which is compared too, but slowly). N >= 28 on one request in eight:
 * those are the slow ones under the sanitizers. */
static void test_ws_equals_solve_random(void **state)
{
    (void)state;
    uint64_t s = 2027;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    eo_split_ws *ws = eo_split_ws_new();
    assert_non_null(ws);
    int calls = 0, limited = 0;
    for (int t = 0; t < 3000; t++) {
        int shape = t % WS_SHAPES;
        int n = rng_range(&s, 0, 7) == 0 ? (int)rng_range(&s, 28, 64) : (int)rng_range(&s, 2, 27);
        if (shape == 3 && n > 14)
            n = (int)rng_range(&s, 2, 14);
        ws_gen(&s, shape, p, n);
        eo_split_options opt;
        memset(&opt, 0, sizeof opt);
        opt.bench = (t / WS_SHAPES) % 2 ? EO_BENCH_QUEUE : EO_BENCH_SOLVER;
        opt.work_limit = 2000000;
        int rc = ws_compare(ws, p, n, &opt);
        assert_true(rc == 0 || rc == EO_ELIMIT);
        limited += rc == EO_ELIMIT;
        calls++;
    }
    assert_int_equal(calls, 3000);
    /* the limit is for time only: few requests reach it (shape 3 at N = 13, 14) */
    assert_true(limited < 30);
    eo_split_ws_free(ws);
}

/* Young-pool requests whose table fallback (split_dp.c) asks the work space for more than
 * EO_SPLIT_WS_KEEP bytes (4,671,660 for the N = 32 one and 6,413,708 for the N = 40 one,
 * measured by a scratch program wrapping eo__split_buf_get), so the call grows the buffer and
 * releases it at its end; then small requests, an error, the hard ones again and n < 4, all
 * in the same work space and each against eo_split_solve(). */
static void test_ws_grow_and_shrink(void **state)
{
    (void)state;
    static const int64_t hard32[] = {979, 952, 1003, 966, 967, 968, 1030, 1002, 1034, 964, 976,
                                     970, 999, 1016, 1017, 1025, 961, 974, 1010, 1020, 809, 1036,
                                     971, 981, 919, 1029, 976, 987, 1011, 988, 979, 965};
    static const int64_t hard40[] = {980, 1027, 1017, 1011, 1008, 1006, 976, 1010, 980, 992,
                                     1036, 1005, 973, 1014, 972, 978, 993, 961, 952, 1000,
                                     986, 808, 1029, 973, 1059, 1130, 1013, 970, 995, 1039,
                                     1076, 1023, 970, 1024, 1040, 989, 972, 1024, 964, 979};
    eo_split_player h32[32], h40[40], p[EO_SPLIT_EXACT_MAX];
    for (int i = 0; i < 32; i++)
        h32[i].rating = hard32[i];
    for (int i = 0; i < 40; i++)
        h40[i].rating = hard40[i];
    eo_split_ws *ws = eo_split_ws_new();
    assert_non_null(ws);
    uint64_t s = 5;
    for (int round = 0; round < 2; round++) {
        assert_int_equal(ws_compare(ws, round ? h40 : h32, round ? 40 : 32, NULL), 0);
        for (int t = 0; t < 20; t++) { /* small ones after the large tables are gone */
            int n = (int)rng_range(&s, 4, 16);
            ws_gen(&s, t % WS_SHAPES, p, n);
            assert_int_equal(ws_compare(ws, p, n, NULL), 0);
        }
        eo_splits *r = NULL;
        assert_int_equal(eo_split_solve_ws(ws, p, EO_SPLIT_EXACT_MAX + 1, NULL, &r), EO_ELIMIT);
        assert_int_equal(ws_compare(ws, round ? h32 : h40, round ? 32 : 40, NULL), 0);
        for (int n = 2; n <= 3; n++) {
            assert_int_equal(eo_split_solve_ws(ws, p, (size_t)n, NULL, &r), 0);
            assert_int_equal(r->count, 0);
        }
    }
    eo_split_ws_free(ws);
    eo_split_ws_free(NULL);
}

/* The result lives in the work space until its next call; each work space keeps its own. */
static void test_ws_result_lifetime(void **state)
{
    (void)state;
    uint64_t s = 17;
    eo_split_player p[24], q[24];
    gen(&s, 2, p, 24);
    gen(&s, 2, q, 24);
    eo_split_ws *w1 = eo_split_ws_new(), *w2 = eo_split_ws_new();
    assert_non_null(w1);
    assert_non_null(w2);
    eo_splits *r1 = NULL, *r2 = NULL;
    assert_int_equal(eo_split_solve_ws(w1, p, 24, NULL, &r1), 0);
    assert_int_equal(eo_split_solve_ws(w2, q, 24, NULL, &r2), 0);
    eo_splits *ref = solve(p, 24, EO_BENCH_SOLVER);
    same_all(ref, r1, 24); /* untouched by w2's call */
    eo_splits_free(ref);
    /* the caller may write p_a */
    r1->split[0].p_a = 0.25;
    assert_true(r1->split[0].p_a == 0.25);
    eo_split_ws_free(w1);
    eo_split_ws_free(w2);
}

typedef struct ws_job {
    uint64_t seed;
    int bad;
} ws_job;

/* A thread with its own work space: 150 requests, each against eo_split_solve(). */
static void *ws_thread(void *arg)
{
    ws_job *j = arg;
    eo_split_ws *ws = eo_split_ws_new();
    if (!ws) {
        j->bad = 1;
        return NULL;
    }
    uint64_t s = j->seed;
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    for (int t = 0; t < 150 && !j->bad; t++) {
        int n = (int)rng_range(&s, 4, 26);
        ws_gen(&s, t % WS_SHAPES == 3 ? 2 : t % WS_SHAPES, p, n);
        eo_splits *ref = NULL, *got = NULL;
        if (eo_split_solve(p, (size_t)n, NULL, &ref) != 0 ||
            eo_split_solve_ws(ws, p, (size_t)n, NULL, &got) != 0) {
            j->bad = 1;
        } else {
            for (size_t c = 0; c < ref->count && !j->bad; c++) {
                const eo_split *a = &ref->split[c], *b = &got->split[c];
                j->bad = a->gap != b->gap ||
                         memcmp(a->a, b->a, (size_t)a->k * sizeof *a->a) != 0 ||
                         memcmp(a->b, b->b, (size_t)a->k * sizeof *a->b) != 0;
            }
        }
        eo_splits_free(ref);
    }
    eo_split_ws_free(ws);
    return NULL;
}

/* Two threads, a work space each, at the same time (under TSan/ASan builds this also shows no
 * shared state between work spaces). */
static void test_ws_threads(void **state)
{
    (void)state;
    ws_job jobs[2] = {{101, 0}, {202, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, ws_thread, &jobs[i]), 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(pthread_join(th[i], NULL), 0);
        assert_int_equal(jobs[i].bad, 0);
    }
}

/* Errors: *out is NULL after each, and the work space still answers right afterwards. */
static void test_ws_errors(void **state)
{
    (void)state;
    eo_split_player p[EO_SPLIT_EXACT_MAX + 1];
    for (int i = 0; i <= EO_SPLIT_EXACT_MAX; i++)
        p[i].rating = 1000 + 3 * i;
    eo_split_ws *ws = eo_split_ws_new();
    assert_non_null(ws);
    eo_splits *r = (eo_splits *)p; /* must be reset to NULL on error */
    assert_int_equal(eo_split_solve_ws(NULL, p, 8, NULL, &r), EO_EINVAL);
    assert_null(r);
    assert_int_equal(eo_split_solve_ws(ws, p, 8, NULL, NULL), EO_EINVAL);
    r = (eo_splits *)p;
    assert_int_equal(eo_split_solve_ws(ws, p, EO_SPLIT_EXACT_MAX + 1, NULL, &r), EO_ELIMIT);
    assert_null(r);
    r = (eo_splits *)p;
    assert_int_equal(eo_split_solve_ws(ws, p, 1, NULL, &r), EO_EINVAL);
    assert_null(r);
    assert_int_equal(eo_split_solve_ws(ws, p, 0, NULL, &r), EO_EINVAL);
    assert_int_equal(eo_split_solve_ws(ws, NULL, 8, NULL, &r), EO_EINVAL);
    assert_null(r);
    eo_split_options opt;
    memset(&opt, 0, sizeof opt);
    opt.bench = (eo_bench_mode)7;
    assert_int_equal(eo_split_solve_ws(ws, p, 8, &opt, &r), EO_EINVAL);
    assert_null(r);
    p[3].rating = (INT64_C(1) << 40) + 1;
    assert_int_equal(eo_split_solve_ws(ws, p, 8, NULL, &r), EO_EINVAL);
    assert_null(r);
    p[3].rating = 1009;
    /* work limit: EO_ELIMIT in the middle of the k loop, no result */
    opt.bench = EO_BENCH_SOLVER;
    opt.work_limit = 3;
    r = (eo_splits *)p;
    assert_int_equal(eo_split_solve_ws(ws, p, 64, &opt, &r), EO_ELIMIT);
    assert_null(r);
    /* after every error above, the same answers as a fresh solve */
    assert_int_equal(ws_compare(ws, p, 64, NULL), 0);
    assert_int_equal(ws_compare(ws, p, 10, NULL), 0);
    eo_split_ws_free(ws);
}

/* eo__split_solve_field(): the field's range and the team sizes are checked, field 0 gives
 * eo_split_solve()'s answers, and a field can put the first player on B. */
static void test_field_errors(void **state)
{
    (void)state;
    eo_split_player p[6] = {{10}, {20}, {30}, {45}, {50}, {61}};
    eo_splits *r = (eo_splits *)&r, *w = NULL;
    int64_t big = EO__SPLIT_FIELD_MAX;
    assert_int_equal(eo__split_solve_field(p, 6, NULL, big + 1, 2, 3, &r), EO_EINVAL);
    assert_null(r);
    assert_int_equal(eo__split_solve_field(p, 6, NULL, -big - 1, 2, 3, &r), EO_EINVAL);
    assert_int_equal(eo__split_solve_field(p, 6, NULL, 0, 1, 3, &r), EO_EINVAL);
    assert_int_equal(eo__split_solve_field(p, 6, NULL, 0, 2, 4, &r), EO_EINVAL);
    assert_int_equal(eo__split_solve_field(p, 6, NULL, 0, 2, 3, NULL), EO_EINVAL);
    assert_int_equal(eo__split_solve_field(p, 6, NULL, 0, 2, 3, &r), 0);
    assert_int_equal(eo_split_solve(p, 6, NULL, &w), 0);
    same(r, w, 6);
    eo_splits_free(r);
    eo_splits_free(w);
    /* 10 20 30 45 50 61, k = 3 (everyone plays): the plain answer is {0,3,4} (105) v {1,2,5}
     * (111), gap 6 (no three of them sum to 107 .. 109). With field -7, D = ΣA - ΣB - 7 =
     * 2ΣA - 223 is odd, and |D| = 1 needs ΣA = 111 or 112: of the 20 triples only {1,2,5}
     * (111). So A = {1,2,5}: the mirror of the plain answer, player 0 on B. */
    assert_int_equal(eo__split_solve_field(p, 6, NULL, -7, 3, 3, &r), 0);
    assert_int_equal(r->count, 1);
    const int a[3] = {1, 2, 5}, b[3] = {0, 3, 4};
    expect(&r->split[0], a, b, NULL, 3, 0, 6);
    eo_splits_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hand_made),
        cmocka_unit_test(test_small_n_and_errors),
        cmocka_unit_test(test_every_k_equal_sizes),
        cmocka_unit_test(test_queue_mode),
        cmocka_unit_test(test_determinism_and_threads),
        cmocka_unit_test(test_brute_small),
        cmocka_unit_test(test_brute_queue),
        cmocka_unit_test(test_brute_larger),
        cmocka_unit_test(test_brute_small_k_many_players),
        cmocka_unit_test(test_brute_mid_k_bench),
        cmocka_unit_test(test_brute_dense_prefix_sets),
        cmocka_unit_test(test_brute_dense_three_late),
        cmocka_unit_test(test_brute_dense_word_shifts),
        cmocka_unit_test(test_brute_fixed_set_teams),
        cmocka_unit_test(test_brute_field),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_lower_bound_large),
        cmocka_unit_test(test_dp_n32),
        cmocka_unit_test(test_dp_n22),
        cmocka_unit_test(test_dp_n64),
        cmocka_unit_test(test_dp_field_n32),
        cmocka_unit_test(test_search_table_fallback),
        cmocka_unit_test(test_search_table_windows),
        cmocka_unit_test(test_ws_errors),
        cmocka_unit_test(test_ws_result_lifetime),
        cmocka_unit_test(test_ws_grow_and_shrink),
        cmocka_unit_test(test_ws_threads),
        cmocka_unit_test(test_ws_equals_solve_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
