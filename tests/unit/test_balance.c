/* The balancer (eo_balance.h; rules in docs/BALANCER.md, "The balancer: constraints and secondary objectives").
 *
 * The reference answers come from code written here, independently of src/core/balance/:
 * - brute force (N <= 12): every assignment of every player to A, B or the bench, filtered by
 *   the hard constraints, ordered by the rules (least |D|; within T = max(g, epsilon) the
 *   objective terms in order; then the playing set first in priority order; then team A first
 *   in request order) and the unique least one compared with the solver's, term by term;
 * - eo_split_solve() for plain requests (the balancer must give its answers bit for bit);
 * - properties recomputed from the teams for large instances and for the local search.
 * Hand-made cases state their derivation next to them. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_balance.h"
#include "evenodds/eo_split.h"
/* test switches: the general path for plain requests, local search for every k */
#include "core/balance/balancer/balance_internal.h"

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

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Terms of an assignment (side: 0 bench, 1 A, 2 B), by the definitions of eo_balance.h and
 * docs/BALANCER.md ("The balancer"), written independently of the solver. t[] in the solver's
 * order: broken, moves, top2, spread (0 when |sd A - sd B| <= the request's spread_epsilon, else
 * k^2 |var A - var B|, both on the spread scale), denied, bench, dev. */
enum { BROKEN, MOVES, TOP2, SPREAD, DENIED, BENCH, DEV, NTERM };

static int spread_shift(const eo_balance_player *p, int n, int64_t *lo)
{
    int64_t mn = p[0].rating, mx = p[0].rating;
    for (int i = 1; i < n; i++) {
        mn = p[i].rating < mn ? p[i].rating : mn;
        mx = p[i].rating > mx ? p[i].rating : mx;
    }
    int sh = 0;
    while (((mx - mn) >> sh) >= (INT64_C(1) << 20))
        sh++;
    *lo = mn;
    return sh;
}

/* 1 when |sqrt(va) - sqrt(vb)| <= e (va, vb >= 0): squared, va + vb - e^2 <= 2 sqrt(va vb),
 * and squared again when the left side is positive. */
__extension__ typedef __int128 i128;
static int sd_within(int64_t va, int64_t vb, int64_t e)
{
    i128 lhs = (i128)va + vb - (i128)e * e;
    return lhs <= 0 || lhs * lhs <= (i128)4 * va * vb;
}

static void terms(const eo_balance_player *p, int n, int k, const uint8_t *side,
                  const eo_balance_request *r, int64_t *t)
{
    int64_t field = r->field;
    int64_t lo;
    int sh = spread_shift(p, n, &lo);
    memset(t, 0, sizeof(int64_t) * NTERM);
    int64_t sa = 0, sb = 0, xa = 0, xb = 0, ra = 0, rb = 0;
    for (int i = 0; i < n; i++) {
        int64_t qs = (p[i].rating - lo) >> sh;
        if (side[i] == 1) {
            ra += p[i].rating;
            sa += qs;
            xa += qs * qs;
        } else if (side[i] == 2) {
            rb += p[i].rating;
            sb += qs;
            xb += qs * qs;
        }
        if (p[i].team && p[i].team != side[i])
            t[MOVES]++;
        if (p[i].prefer && p[i].prefer != side[i])
            t[DENIED] += p[i].weight ? p[i].weight : 1;
        if (p[i].sat_out && side[i] == 0)
            t[BENCH]++;
    }
    for (int i = 0; i < n; i++) { /* a party is broken when two members are on different sides */
        if (!p[i].party)
            continue;
        int first = 1;
        for (int j = 0; j < i; j++)
            if (p[j].party == p[i].party)
                first = 0;
        if (!first)
            continue;
        for (int j = i + 1; j < n; j++)
            if (p[j].party == p[i].party && side[j] != side[i]) {
                t[BROKEN]++;
                break;
            }
    }
    /* the two best playing players (highest rating, then lowest index) */
    int b1 = -1, b2 = -1;
    for (int i = 0; i < n; i++) {
        if (!side[i])
            continue;
        if (b1 < 0 || p[i].rating > p[b1].rating) {
            b2 = b1;
            b1 = i;
        } else if (b2 < 0 || p[i].rating > p[b2].rating) {
            b2 = i;
        }
    }
    t[TOP2] = b2 >= 0 && side[b1] == side[b2];
    int64_t va = k * xa - sa * sa, vb = k * xb - sb * sb; /* k^2 var */
    int64_t eps = r->spread_epsilon >> sh;
    eps = eps < (INT64_C(1) << 21) ? eps : INT64_C(1) << 21;
    t[SPREAD] = sd_within(va, vb, k * eps) ? 0 : abs64(va - vb);
    t[DEV] = abs64(ra - rb + field);
}

typedef struct ref {
    int ok;
    int64_t t[NTERM];
    uint8_t side[16];
} ref;

static int active(const eo_balance_request *r, int term)
{
    switch (term) {
    case BROKEN: return r->allow_party_split;
    case MOVES: return r->mode == EO_BALANCE_REBALANCE;
    case TOP2:
    case SPREAD: return r->mode == EO_BALANCE_SCRAMBLE;
    default: return 1;
    }
}

/* Hard constraints: locks; protected players with a team stay on it unless allowed; parties
 * on one side unless allowed. */
static int allowed(const eo_balance_player *p, int n, const eo_balance_request *r,
                   const uint8_t *side)
{
    for (int i = 0; i < n; i++) {
        if (p[i].lock && side[i] != p[i].lock)
            return 0;
        if (p[i].protect && !r->allow_protected && p[i].team && side[i] != p[i].team)
            return 0;
        if (!r->allow_party_split && p[i].party)
            for (int j = 0; j < i; j++)
                if (p[j].party == p[i].party && side[j] != side[i])
                    return 0;
    }
    return 1;
}

/* -1 when x comes first by the rules (given both are within T). */
static int rule_cmp(const eo_balance_player *p, int n, const eo_balance_request *r,
                    const int64_t *tx, const uint8_t *sx, const int64_t *ty, const uint8_t *sy)
{
    for (int t = 0; t < NTERM; t++)
        if (active(r, t) && tx[t] != ty[t])
            return tx[t] < ty[t] ? -1 : 1;
    /* playing set: priority descending, then index; the one where the first differing player
     * plays comes first */
    int ord[16], no = 0;
    for (int i = 0; i < n; i++) {
        int x = no++;
        while (x > 0 && p[ord[x - 1]].priority < p[i].priority) {
            ord[x] = ord[x - 1];
            x--;
        }
        ord[x] = i;
    }
    for (int x = 0; x < n; x++) {
        int i = ord[x];
        if ((sx[i] != 0) != (sy[i] != 0))
            return sx[i] ? -1 : 1;
    }
    for (int i = 0; i < n; i++)
        if (sx[i] != sy[i])
            return sx[i] == 1 ? -1 : 1;
    return 0;
}

/* The answer for k by brute force over 3^n assignments. */
static ref brute(const eo_balance_player *p, int n, int k, const eo_balance_request *r)
{
    ref best;
    memset(&best, 0, sizeof best);
    uint8_t side[16];
    int total = 1;
    for (int i = 0; i < n; i++)
        total *= 3;
    int64_t g = INT64_MAX;
    for (int pass = 0; pass < 2; pass++) {
        int64_t T = g > r->epsilon ? g : r->epsilon;
        for (int c = 0; c < total; c++) {
            int v = c, na = 0, nb = 0;
            for (int i = 0; i < n; i++) {
                side[i] = (uint8_t)(v % 3);
                v /= 3;
                na += side[i] == 1;
                nb += side[i] == 2;
            }
            if (na != k || nb != k || !allowed(p, n, r, side))
                continue;
            int64_t t[NTERM];
            terms(p, n, k, side, r, t);
            if (pass == 0) {
                g = t[DEV] < g ? t[DEV] : g;
                continue;
            }
            if (t[DEV] > T)
                continue;
            if (!best.ok || rule_cmp(p, n, r, t, side, best.t, best.side) < 0) {
                best.ok = 1;
                memcpy(best.t, t, sizeof t);
                memcpy(best.side, side, (size_t)n);
            }
        }
        if (g == INT64_MAX)
            break;
    }
    return best;
}

/* An answer is well formed and its reported terms are those of its teams; returns its sides. */
static void check_answer(const eo_balance_split *s, const eo_balance_player *p, int n,
                         const eo_balance_request *r, uint8_t *side)
{
    int k = s->k;
    int seen[EO_PLAYERS_MAX] = {0};
    memset(side, 0, (size_t)n);
    assert_int_equal(s->nbench, (size_t)(n - 2 * k));
    int64_t sa = 0, sb = 0;
    for (int x = 0; x < k; x++) {
        if (x) {
            assert_true(s->a[x] > s->a[x - 1]);
            assert_true(s->b[x] > s->b[x - 1]);
        }
        seen[s->a[x]]++;
        seen[s->b[x]]++;
        side[s->a[x]] = 1;
        side[s->b[x]] = 2;
        sa += p[s->a[x]].rating;
        sb += p[s->b[x]].rating;
    }
    for (size_t x = 0; x < s->nbench; x++)
        seen[s->bench[x]]++;
    for (int i = 0; i < n; i++)
        assert_int_equal(seen[i], 1); /* every player placed exactly once */
    assert_true(s->sum_a == sa && s->sum_b == sb && s->gap == abs64(sa - sb));
    assert_true(allowed(p, n, r, side)); /* locks, protection, parties */
    int64_t t[NTERM];
    terms(p, n, k, side, r, t);
    assert_true(s->dev == t[DEV] && s->terms.dev == t[DEV]);
    assert_true(s->terms.broken == t[BROKEN]);
    assert_true(s->terms.moves == t[MOVES]);
    assert_true(s->terms.top2 == t[TOP2]);
    assert_true(s->terms.denied == t[DENIED]);
    assert_true(s->terms.bench_again == t[BENCH]);
    /* spread reported in rating^2: |var A - var B| */
    double ma = (double)sa / k, mb = (double)sb / k, va = 0, vb = 0;
    for (int i = 0; i < n; i++) {
        double x = (double)p[i].rating;
        if (side[i] == 1)
            va += (x - ma) * (x - ma);
        else if (side[i] == 2)
            vb += (x - mb) * (x - mb);
    }
    double sp = fabs(va / k - vb / k), sd = fabs(sqrt(va / k) - sqrt(vb / k));
    assert_true(fabs(s->terms.spread - sp) <= 1e-6 * (1 + sp));
    assert_true(fabs(s->terms.spread_sd - sd) <= 1e-6 * (1 + sd));
    /* the bound of a proven answer is its terms (test_fallback_bound checks the others) */
    if (s->exact)
        assert_memory_equal(&s->bound, &s->terms, sizeof s->bound);
    /* moves list: exactly the players with a team who end elsewhere */
    size_t nm = 0;
    for (int i = 0; i < n; i++)
        if (p[i].team && p[i].team != side[i]) {
            assert_true(nm < s->nmoves);
            assert_int_equal(s->moves[nm].player, i);
            assert_int_equal(s->moves[nm].from, p[i].team);
            assert_int_equal(s->moves[nm].to, side[i]);
            nm++;
        }
    assert_int_equal(nm, s->nmoves);
}

/* A random request of n players: ratings of a few shapes, and each constraint with some
 * probability (cfg bits switch families on). */
static void gen(uint64_t *s, int n, eo_balance_player *p, eo_balance_request *r, int cfg)
{
    memset(p, 0, sizeof(*p) * (size_t)n);
    memset(r, 0, sizeof *r);
    int shape = (int)rng_range(s, 0, 3);
    for (int i = 0; i < n; i++) {
        switch (shape) {
        case 0: p[i].rating = rng_range(s, 0, 5); break;
        case 1: p[i].rating = rng_range(s, 0, 60); break;
        case 2: p[i].rating = rng_range(s, 500, 2500); break;
        default: p[i].rating = rng_range(s, -(INT64_C(1) << 40), INT64_C(1) << 40); break;
        }
        if (cfg & 1)
            p[i].team = (uint8_t)rng_range(s, 0, 2);
        if ((cfg & 2) && rng_range(s, 0, 2) == 0)
            p[i].party = (uint32_t)rng_range(s, 1, 3);
        if ((cfg & 4) && rng_range(s, 0, 7) == 0)
            p[i].lock = (uint8_t)rng_range(s, 1, 2);
        if ((cfg & 8) && rng_range(s, 0, 3) == 0)
            p[i].protect = 1;
        if ((cfg & 16) && rng_range(s, 0, 1) == 0) {
            p[i].prefer = (uint8_t)rng_range(s, 1, 2);
            p[i].weight = (uint32_t)rng_range(s, 0, 8);
        }
        if ((cfg & 32) && rng_range(s, 0, 2) == 0)
            p[i].sat_out = 1;
        if (cfg & 64)
            p[i].priority = (int32_t)rng_range(s, 0, 2);
    }
    r->mode = rng_range(s, 0, 1) ? EO_BALANCE_SCRAMBLE : EO_BALANCE_REBALANCE;
    if (rng_range(s, 0, 1))
        r->epsilon = shape == 3 ? rng_range(s, 0, INT64_C(1) << 38) : rng_range(s, 0, 40);
    if (rng_range(s, 0, 3) == 0)
        r->field = shape == 3 ? rng_range(s, -(INT64_C(1) << 38), INT64_C(1) << 38)
                              : rng_range(s, -30, 30);
    if (rng_range(s, 0, 1))
        r->spread_epsilon = shape == 3   ? rng_range(s, 0, INT64_C(1) << 40)
                            : shape == 2 ? rng_range(s, 0, 300)
                                         : rng_range(s, 0, 20);
    r->allow_party_split = rng_range(s, 0, 3) == 0;
    r->allow_protected = rng_range(s, 0, 3) == 0;
}

/* ---- brute force against the solver ------------------------------------------------------ */

/* eo__balance_solve()'s test switches */
static const eo__balance_opts DEFAULTS = {0};
static const eo__balance_opts GENERAL = {.general_path = true};
static const eo__balance_opts GENERAL_NO_MITM = {.general_path = true, .no_mitm = true};
static const eo__balance_opts GENERAL_TABLE = {.general_path = true, .table_early = true};

static void run_brute(int nmin, int nmax, int count, uint64_t seed, const eo__balance_opts *opts)
{
    uint64_t s = seed;
    for (int c = 0; c < count; c++) {
        int n = (int)rng_range(&s, nmin, nmax);
        eo_balance_player p[16];
        eo_balance_request r;
        int cfg = (int)rng_range(&s, 0, 127);
        /* bit 4: gap-only requests (no current teams, parties, preferences or sat-out marks;
         * locks and priorities allowed), whose questions the table answers */
        gen(&s, n, p, &r, opts->table_early ? cfg & (4 | 64) : cfg);
        if (opts->table_early)
            r.mode = EO_BALANCE_REBALANCE;
        eo_balance_result *res = NULL;
        uint32_t bad = 0;
        int rc = eo__balance_solve(p, (size_t)n, &r, &res, &bad, opts);
        /* a player or an unsplittable party pinned to both sides is a request error */
        int conflict = 0, pin[16];
        for (int i = 0; i < n; i++) {
            pin[i] = p[i].lock;
            if (p[i].protect && !r.allow_protected && p[i].team) {
                conflict |= pin[i] && pin[i] != p[i].team;
                pin[i] = p[i].team;
            }
            for (int j = 0; j < i && !r.allow_party_split; j++)
                conflict |= p[i].party && p[j].party == p[i].party && pin[i] && pin[j] &&
                            pin[i] != pin[j];
        }
        if (conflict) {
            assert_int_equal(rc, EO_EINVAL);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(res->count, (size_t)(n / 2 - 1));
        for (size_t x = 0; x < res->count; x++) {
            const eo_balance_split *sp = &res->split[x];
            int k = (int)x + 2;
            assert_int_equal(sp->k, k);
            int too_big = 0;
            for (int i = 0; i < n && !r.allow_party_split; i++) {
                int size = 0;
                for (int j = 0; j < n; j++)
                    size += p[i].party && p[j].party == p[i].party;
                too_big |= size > k;
            }
            if (too_big) {
                assert_int_equal(sp->err, EO_EINVAL);
                assert_true(sp->bad_party != 0);
                continue;
            }
            ref want = brute(p, n, k, &r);
            if (!want.ok) {
                assert_int_equal(sp->err, EO_ERANGE);
                continue;
            }
            assert_int_equal(sp->err, 0);
            assert_int_equal(sp->exact, 1);
            uint8_t side[16];
            check_answer(sp, p, n, &r, side);
            if (memcmp(side, want.side, (size_t)n) != 0) {
                print_error("case %d n=%d k=%d mode=%d eps=%lld field=%lld se=%lld\n", c, n, k,
                            r.mode, (long long)r.epsilon, (long long)r.field,
                            (long long)r.spread_epsilon);
                for (int i = 0; i < n; i++)
                    print_error("  %d: r=%lld team=%d party=%u lock=%d prot=%d pref=%d w=%u "
                                "sat=%d prio=%d  got %d want %d\n",
                                i, (long long)p[i].rating, p[i].team, p[i].party, p[i].lock,
                                p[i].protect, p[i].prefer, p[i].weight, p[i].sat_out,
                                p[i].priority, side[i], want.side[i]);
                fail();
            }
        }
        eo_balance_free(res);
    }
}

static void test_brute_small(void **state)
{
    (void)state;
    run_brute(2, 8, 3000, 1, &DEFAULTS);
}

static void test_brute_medium(void **state)
{
    (void)state;
    run_brute(9, 10, 300, 2, &DEFAULTS);
}

static void test_brute_large(void **state)
{
    (void)state;
    run_brute(11, 12, 12, 3, &DEFAULTS);
}

/* Gap-only requests (a map field, a bench, locks, priorities) with every question past its
 * first search node answered by split_dp.c's table (with the field as its offset): the same
 * answers as brute force; ratings up to 2^40 are too wide for the table, whose "cannot tell"
 * sends the question back to the search. */
static void test_brute_gap_table(void **state)
{
    (void)state;
    run_brute(2, 10, 1500, 11, &GENERAL_TABLE);
    run_brute(11, 12, 40, 12, &GENERAL_TABLE);
}

/* Everyone playing (2k = n), parties whole, in @p mode; a tolerance of at most 4 past 12
 * players (a wide one makes the search's comparison slow). */
static void full_request(eo_balance_request *r, int n, eo_balance_mode mode)
{
    r->mode = mode;
    r->allow_party_split = 0;
    r->k_min = r->k_max = n / 2;
    if (n > 12 && r->epsilon > 4)
        r->epsilon = 4;
}

/* Scramble with everyone playing (2k = n), parties whole, no preference: the meet in the middle
 * answers (balance_mitm.c). Against brute force for n <= 12, and against the search (the
 * no_mitm switch turns the meet in the middle off) for n up to 20. */
static void test_scramble_full(void **state)
{
    (void)state;
    uint64_t s = 41;
    for (int c = 0; c < 1500; c++) {
        int n = c < 1200 ? 2 * (int)rng_range(&s, 2, 6) : 2 * (int)rng_range(&s, 7, 10);
        eo_balance_player p[20];
        eo_balance_request r;
        gen(&s, n, p, &r, (int)rng_range(&s, 0, 127) & ~16);
        full_request(&r, n, EO_BALANCE_SCRAMBLE);
        eo_balance_result *res = NULL, *ref_res = NULL;
        int rc = eo__balance_solve(p, (size_t)n, &r, &res, NULL, &GENERAL);
        if (rc == EO_EINVAL) /* a party pinned to both sides */
            continue;
        assert_int_equal(rc, 0);
        const eo_balance_split *sp = &res->split[0];
        uint8_t side[20];
        if (n <= 12) {
            ref want = brute(p, n, n / 2, &r);
            if (!want.ok || sp->err == EO_EINVAL) {
                assert_true(sp->err != 0);
            } else {
                assert_int_equal(sp->err, 0);
                check_answer(sp, p, n, &r, side);
                assert_memory_equal(side, want.side, (size_t)n);
            }
        } else {
            assert_int_equal(
                eo__balance_solve(p, (size_t)n, &r, &ref_res, NULL, &GENERAL_NO_MITM), 0);
            const eo_balance_split *w = &ref_res->split[0];
            assert_int_equal(sp->err, w->err);
            if (sp->err == 0) {
                check_answer(sp, p, n, &r, side);
                assert_int_equal(sp->exact, 1);
                assert_memory_equal(sp->a, w->a, sizeof(uint16_t) * (size_t)sp->k);
                assert_memory_equal(sp->b, w->b, sizeof(uint16_t) * (size_t)sp->k);
            }
            eo_balance_free(ref_res);
        }
        eo_balance_free(res);
    }
}

/* The bound: brute force up to N = 14 (a few instances: 3^14 assignments per k). */
static void test_brute_14(void **state)
{
    (void)state;
    run_brute(13, 14, 4, 5, &DEFAULTS);
}

/* Full splits (everyone plays) by the search instead of the meet in the middle (no_mitm), with
 * the search's tail cut to tail_items items so that it runs on small instances: its lists, the
 * team-A witnesses (repair) and the rest of team A at once (finish) answer, and must give
 * brute force's answer (n <= 12), or the meet in the middle's (larger n, scramble). Ratings:
 * realistic (the lists' fast path, spread 0 within the tolerance), narrow and a few wide. In
 * rebalance mode (finish matching moves and denials) against brute force only. late_windows:
 * every team-A witness window at the search's first node (b->midway), none before it. */
static void run_full_paths(int nmin, int nmax, int count, uint64_t seed, int tail_items,
                           eo_balance_mode mode, bool late_windows)
{
    uint64_t s = seed;
    eo__balance_opts paths = {.general_path = true,
                              .no_mitm = true,
                              .tail_items = tail_items,
                              .midway_work = late_windows ? 1 : 0,
                              .late_windows = late_windows};
    for (int c = 0; c < count; c++) {
        int n = 2 * (int)rng_range(&s, nmin / 2, nmax / 2);
        eo_balance_player p[32];
        eo_balance_request r;
        int cfg = (int)rng_range(&s, 0, 127);
        gen(&s, n, p, &r, mode == EO_BALANCE_SCRAMBLE ? cfg & ~16 : cfg | 1);
        int shape = (int)rng_range(&s, 0, 3);
        for (int i = 0; i < n && shape < 3; i++)
            p[i].rating = shape == 0 ? 1000 + rng_range(&s, -300, 300) + rng_range(&s, -300, 300)
                                     : rng_range(&s, 0, 30);
        full_request(&r, n, mode);
        r.spread_epsilon = rng_range(&s, 0, 3) == 0 ? 0 : rng_range(&s, 1, 40);
        eo_balance_result *res = NULL, *ref_res = NULL;
        int rc = eo__balance_solve(p, (size_t)n, &r, &res, NULL, &paths);
        if (rc == EO_EINVAL) /* a party pinned to both sides */
            continue;
        assert_int_equal(rc, 0);
        const eo_balance_split *sp = &res->split[0];
        uint8_t side[32], want[32];
        if (n <= 12) {
            ref w = brute(p, n, n / 2, &r);
            assert_int_equal(sp->err != 0, !w.ok || sp->err == EO_EINVAL);
            memcpy(want, w.side, (size_t)n);
        } else {
            assert_int_equal(eo__balance_solve(p, (size_t)n, &r, &ref_res, NULL, &GENERAL), 0);
            assert_int_equal(sp->err, ref_res->split[0].err);
            if (sp->err == 0)
                check_answer(&ref_res->split[0], p, n, &r, want);
            eo_balance_free(ref_res);
        }
        if (sp->err == 0) {
            check_answer(sp, p, n, &r, side);
            assert_int_equal(sp->exact, 1);
            assert_memory_equal(side, want, (size_t)n);
        }
        eo_balance_free(res);
    }
}

static void test_full_paths(void **state)
{
    (void)state;
    run_full_paths(4, 10, 600, 51, 4, EO_BALANCE_SCRAMBLE, false);
    run_full_paths(12, 12, 40, 52, 6, EO_BALANCE_SCRAMBLE, false);
    run_full_paths(14, 22, 40, 53, 10, EO_BALANCE_SCRAMBLE, false);
    run_full_paths(4, 10, 500, 54, 4, EO_BALANCE_REBALANCE, false);
    run_full_paths(12, 12, 30, 55, 6, EO_BALANCE_REBALANCE, false);
    /* every witness window midway, at a search's first node: a window's witness stops the
     * search, which must not change an answer */
    run_full_paths(4, 10, 300, 56, 4, EO_BALANCE_SCRAMBLE, true);
    run_full_paths(14, 22, 20, 57, 10, EO_BALANCE_SCRAMBLE, true);
}

/* The spread tolerance by hand: 8 players, k = 4, everyone plays; the two best are players 4
 * (1500) and 2 (1400, before player 5 in request order). Gap-0 splits with them apart include
 *   A = {0, 2, 5, 6} = 800 1400 1400 500 v 1300 700 1500 600: sd 389.71 v 383.24 (6.47 apart),
 *       k² |var A - var B| = 80,000, the least of all;
 *   A = {0, 1, 4, 6} = 800 1300 1500 500 v 1400 700 1400 600: sd 396.07 v 376.66 (19.41),
 *       240,000;
 *   A = {0, 1, 2, 7} = 800 1300 1400 600 v 700 1500 1400 500: sd 334.48 v 432.29 (97.8).
 * ε 0 and 6: the least spread, {0, 2, 5, 6}; ε 7 and 19: {0, 2, 5, 6} alone is within (its
 * mirror {1, 3, 4, 7} too, but team A with player 0 comes first); ε 20: {0, 1, 4, 6} is within
 * as well and comes first in request order; ε 1000: every split is within, and {0, 1, 2, 7}
 * comes first of them all (found with a brute-force script over the 70 splits). */
static void test_spread_tolerance(void **state)
{
    (void)state;
    int64_t r[8] = {800, 1300, 1400, 700, 1500, 1400, 500, 600};
    static const struct {
        int64_t eps;
        uint16_t a[4];
        int64_t term; /* the spread term is 0 within the tolerance */
    } want[] = {{0, {0, 2, 5, 6}, 80000}, {6, {0, 2, 5, 6}, 80000}, {7, {0, 2, 5, 6}, 0},
                {19, {0, 2, 5, 6}, 0},    {20, {0, 1, 4, 6}, 0},    {1000, {0, 1, 2, 7}, 0}};
    eo_balance_player p[8];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 8; i++)
        p[i].rating = r[i];
    eo_balance_request q;
    memset(&q, 0, sizeof q);
    q.mode = EO_BALANCE_SCRAMBLE;
    q.k_min = q.k_max = 4;
    for (size_t x = 0; x < sizeof want / sizeof want[0]; x++) {
        q.spread_epsilon = want[x].eps;
        for (int path = 0; path < 3; path++) { /* meet in the middle; search; its lists */
            eo__balance_opts o = {
                .general_path = true, .no_mitm = path > 0, .tail_items = path == 2 ? 4 : -1};
            eo_balance_result *res = NULL;
            assert_int_equal(eo__balance_solve(p, 8, &q, &res, NULL, &o), 0);
            const eo_balance_split *s = &res->split[0];
            uint8_t side[8];
            check_answer(s, p, 8, &q, side);
            assert_true(s->gap == 0 && s->terms.top2 == 0 && s->exact);
            assert_memory_equal(s->a, want[x].a, sizeof want[x].a);
            int64_t t[NTERM];
            terms(p, 8, 4, side, &q, t);
            assert_true(t[SPREAD] == want[x].term);
            eo_balance_free(res);
        }
    }
    eo_balance_result *res = NULL;
    q.spread_epsilon = -1;
    assert_int_equal(eo_balance_solve(p, 8, &q, &res, NULL), EO_EINVAL);
    q.spread_epsilon = (INT64_C(1) << 40) + 1;
    assert_int_equal(eo_balance_solve(p, 8, &q, &res, NULL), EO_EINVAL);
}

/* Past the work limit: exact = 1 only for the answer the unlimited call gives; the bound never
 * above the unlimited (proven) answer's terms: it bounds the rules' answer, not the split the
 * budget allowed, which may be outside the tolerance of the least |D|. */
static void test_fallback_bound(void **state)
{
    (void)state;
    uint64_t s = 61;
    static const uint64_t limits[] = {1, 30, 300, 3000, 30000};
    for (int c = 0; c < 60; c++) {
        int n = (int)rng_range(&s, 16, 28);
        eo_balance_player p[32];
        eo_balance_request r;
        gen(&s, n, p, &r, (int)rng_range(&s, 0, 127));
        for (int i = 0; i < n; i++)
            p[i].rating = 1000 + rng_range(&s, -300, 300);
        r.k_min = r.k_max = n / 2 - (int)rng_range(&s, 0, 2);
        if (r.epsilon > 4)
            r.epsilon = 4;
        eo_balance_result *full = NULL;
        if (eo_balance_solve(p, (size_t)n, &r, &full, NULL) != 0)
            continue; /* a pin conflict */
        const eo_balance_split *w = &full->split[0];
        uint8_t want[32], side[32];
        if (w->err == 0)
            check_answer(w, p, n, &r, want);
        for (size_t x = 0; x < sizeof limits / sizeof limits[0]; x++) {
            eo_balance_request lr = r;
            lr.work_limit = limits[x];
            eo_balance_result *res = NULL;
            assert_int_equal(eo_balance_solve(p, (size_t)n, &lr, &res, NULL), 0);
            const eo_balance_split *sp = &res->split[0];
            if (sp->err == 0 && w->err == 0) {
                check_answer(sp, p, n, &lr, side);
                if (sp->exact)
                    assert_memory_equal(side, want, (size_t)n);
                const eo_balance_terms *bd = &sp->bound, *tm = &w->terms;
                assert_true(bd->broken <= tm->broken && bd->moves <= tm->moves &&
                            bd->top2 <= tm->top2 && bd->denied <= tm->denied &&
                            bd->bench_again <= tm->bench_again && bd->dev <= tm->dev);
                assert_true(bd->spread <= tm->spread * (1 + 1e-9) + 1e-9 &&
                            bd->spread_sd <= tm->spread_sd * (1 + 1e-9) + 1e-9);
            }
            eo_balance_free(res);
        }
        eo_balance_free(full);
    }
}

/* ---- plain requests are the splitter's ------------------------------------------------------ */

static void compare_plain(const eo_balance_player *p, int n, const eo__balance_opts *opts)
{
    eo_split_player sp[EO_SPLIT_EXACT_MAX];
    for (int i = 0; i < n; i++)
        sp[i].rating = p[i].rating;
    eo_splits *want = NULL;
    assert_int_equal(eo_split_solve(sp, (size_t)n, NULL, &want), 0);
    eo_balance_result *got = NULL;
    assert_int_equal(eo__balance_solve(p, (size_t)n, NULL, &got, NULL, opts), 0);
    assert_int_equal(got->count, want->count);
    for (size_t x = 0; x < want->count; x++) {
        const eo_split *w = &want->split[x];
        const eo_balance_split *g = &got->split[x];
        assert_int_equal(g->k, w->k);
        assert_int_equal(g->err, 0);
        assert_int_equal(g->exact, 1);
        assert_memory_equal(g->a, w->a, sizeof(uint16_t) * (size_t)w->k);
        assert_memory_equal(g->b, w->b, sizeof(uint16_t) * (size_t)w->k);
        assert_true(g->gap == w->gap && g->dev == w->gap && g->nmoves == 0);
    }
    eo_splits_free(want);
    eo_balance_free(got);
}

static void test_plain_equals_split(void **state)
{
    (void)state;
    uint64_t s = 11;
    for (int c = 0; c < 400; c++) {
        int n = (int)rng_range(&s, 2, c < 350 ? 14 : 40);
        eo_balance_player p[64];
        memset(p, 0, sizeof p);
        int shape = (int)rng_range(&s, 0, 2);
        for (int i = 0; i < n; i++)
            p[i].rating = shape == 0   ? rng_range(&s, 0, 4)
                          : shape == 1 ? rng_range(&s, 0, 50)
                                       : rng_range(&s, 100, 3000);
        compare_plain(p, n, &DEFAULTS);
        if (n <= 14)
            compare_plain(p, n, &GENERAL); /* the general path reaches the same answers */
    }
}

/* A plain request that names a map (a field) and any epsilon goes to the splitter with the
 * field as its offset (eo__split_solve_field()): the same answers as the general path, whose
 * rules it follows (every term but |D| is 0, so epsilon changes nothing), term by term. Some
 * requests ask for one team size. */
static void test_plain_field_equals_general(void **state)
{
    (void)state;
    uint64_t s = 15;
    for (int c = 0; c < 300; c++) {
        int n = (int)rng_range(&s, 2, 14), shape = (int)rng_range(&s, 0, 2);
        eo_balance_player p[16];
        memset(p, 0, sizeof p);
        for (int i = 0; i < n; i++)
            p[i].rating = shape == 0   ? rng_range(&s, 0, 4)
                          : shape == 1 ? rng_range(&s, 0, 50)
                                       : rng_range(&s, 100, 3000);
        eo_balance_request r;
        memset(&r, 0, sizeof r);
        r.field = shape == 0   ? rng_range(&s, -6, 6)
                  : shape == 1 ? rng_range(&s, -80, 80)
                               : rng_range(&s, -3000, 3000);
        r.epsilon = rng_range(&s, 0, 1) ? rng_range(&s, 0, 50) : 0;
        if (c % 4 == 0 && n >= 4)
            r.k_min = r.k_max = (int)rng_range(&s, 2, n / 2);
        eo_balance_result *got = NULL, *want = NULL;
        assert_int_equal(eo__balance_solve(p, (size_t)n, &r, &got, NULL, &DEFAULTS), 0);
        assert_int_equal(eo__balance_solve(p, (size_t)n, &r, &want, NULL, &GENERAL), 0);
        assert_int_equal(got->count, want->count);
        for (size_t x = 0; x < got->count; x++) {
            const eo_balance_split *g = &got->split[x], *w = &want->split[x];
            assert_true(g->k == w->k && g->err == 0 && w->err == 0);
            assert_true(g->exact == 1 && w->exact == 1);
            assert_memory_equal(g->a, w->a, sizeof(uint16_t) * (size_t)w->k);
            assert_memory_equal(g->b, w->b, sizeof(uint16_t) * (size_t)w->k);
            assert_true(g->dev == w->dev && g->gap == w->gap);
            assert_true(g->dev == abs64(g->sum_a - g->sum_b + r.field));
            assert_memory_equal(&g->terms, &w->terms, sizeof g->terms);
        }
        eo_balance_free(got);
        eo_balance_free(want);
    }
}

/* ---- properties on large instances ---------------------------------------------------------- */

static void run_props(int n, int count, uint64_t seed, int force_local, uint64_t work, int full)
{
    uint64_t s = seed;
    for (int c = 0; c < count; c++) {
        eo_balance_player p[EO_PLAYERS_MAX];
        eo_balance_request r;
        gen(&s, n, p, &r, (int)rng_range(&s, 0, 127));
        for (int i = 0; i < n; i++) /* realistic ratings; parties of up to 3 */
            p[i].rating = 1000 + rng_range(&s, -300, 300);
        for (int i = 0; i < n; i++)
            if (p[i].party)
                p[i].party = (uint32_t)(i / 3 + 1);
        r.k_min = r.k_max = n / 2 - (int)rng_range(&s, 0, 2);
        if (full) { /* everyone plays, parties whole, scramble and rebalance in turn */
            full_request(&r, n, c % 2 ? EO_BALANCE_REBALANCE : EO_BALANCE_SCRAMBLE);
            if (r.spread_epsilon == 0)
                r.spread_epsilon = 1; /* the service's default: exact spreads exhaust the budget */
            for (int i = 0; i < n && c % 2 == 0; i++)
                p[i].prefer = EO_BALANCE_NONE; /* the scramble's lists need no preference */
        }
        r.work_limit = work;
        eo_balance_result *res = NULL;
        uint32_t bad = 0;
        eo__balance_opts opts = {.force_local = force_local};
        int rc = eo__balance_solve(p, (size_t)n, &r, &res, &bad, &opts);
        if (rc == EO_EINVAL) /* a player locked to one side and protected on the other */
            continue;
        assert_int_equal(rc, 0);
        assert_int_equal(res->count, 1);
        const eo_balance_split *sp = &res->split[0];
        if (sp->err == 0) {
            uint8_t side[EO_PLAYERS_MAX];
            check_answer(sp, p, n, &r, side);
            if (force_local || n > EO_BALANCE_EXACT_MAX)
                assert_int_equal(sp->exact, 0);
            if (!r.allow_party_split)
                assert_true(sp->terms.broken == 0);
        } else {
            assert_true(sp->err == EO_ERANGE);
        }
        eo_balance_free(res);
    }
}

static void test_props_exact(void **state)
{
    (void)state;
    run_props(24, 30, 21, 0, 2000000, 0);
    run_props(32, 10, 22, 0, 1000000, 0);
    run_props(64, 3, 23, 0, 500000, 0);
    run_props(64, 6, 24, 0, 4000000, 1); /* full servers at the default budget */
}

static void test_props_local(void **state)
{
    (void)state;
    run_props(12, 100, 31, 1, 0, 0);
    run_props(40, 20, 32, 1, 0, 0);
    run_props(100, 3, 33, 0, 0, 0); /* beyond the exact sizes */
}

/* ---- hand-made cases ---------------------------------------------------------------------- */

/* Rebalance, the NS2 way (seed 001): A = {100, 90}, B = {80, 70}, gap 40. No split keeps
 * everyone; every exchange of one A and one B player moves 2. The exchanges 90<->70 (A = {100,
 * 70}, 170 v 170) and 100<->80 (A = {80, 90}, 170 v 170) reach gap 0; team A first in request
 * order holds player 0: moves of players 1 and 3. */
static void test_rebalance_fewest_moves(void **state)
{
    (void)state;
    eo_balance_player p[4];
    memset(p, 0, sizeof p);
    int64_t r[4] = {100, 90, 80, 70};
    for (int i = 0; i < 4; i++) {
        p[i].rating = r[i];
        p[i].team = i < 2 ? EO_BALANCE_A : EO_BALANCE_B;
    }
    eo_balance_request q;
    memset(&q, 0, sizeof q);
    eo_balance_result *res = NULL;
    assert_int_equal(eo_balance_solve(p, 4, &q, &res, NULL), 0);
    const eo_balance_split *s = &res->split[0];
    assert_int_equal(s->a[0], 0);
    assert_int_equal(s->a[1], 3);
    assert_int_equal(s->nmoves, 2);
    assert_int_equal(s->moves[0].player, 1);
    assert_int_equal(s->moves[1].player, 3);
    assert_true(s->gap == 0 && s->terms.moves == 2);
    eo_balance_free(res);
    /* with epsilon 40 the current teams are within the tolerance: nobody moves */
    q.epsilon = 40;
    assert_int_equal(eo_balance_solve(p, 4, &q, &res, NULL), 0);
    s = &res->split[0];
    assert_true(s->nmoves == 0 && s->gap == 40 && s->a[0] == 0 && s->a[1] == 1);
    eo_balance_free(res);
}

/* A party of 3 cannot be on one team of 2: k = 2 is an error naming it; k = 3 places it. */
static void test_party_larger_than_k(void **state)
{
    (void)state;
    eo_balance_player p[6];
    memset(p, 0, sizeof p);
    for (int i = 0; i < 6; i++)
        p[i].rating = 1000 + 10 * i;
    p[1].party = p[3].party = p[4].party = 77;
    eo_balance_result *res = NULL;
    assert_int_equal(eo_balance_solve(p, 6, NULL, &res, NULL), 0);
    assert_int_equal(res->count, 2);
    assert_int_equal(res->split[0].err, EO_EINVAL);
    assert_int_equal(res->split[0].bad_party, 77);
    assert_int_equal(res->split[1].err, 0);
    const eo_balance_split *s = &res->split[1];
    /* {1010, 1030, 1040} = 3080 against {1000, 1020, 1050} = 3070: gap 10, the least with the
     * party together (the sum 6150 is even, but a gap of 0 needs 3075 on each side) */
    assert_true(s->gap == 10 && s->terms.broken == 0);
    eo_balance_free(res);
    /* allowed to split, it is split when that helps, and reported */
    eo_balance_request q;
    memset(&q, 0, sizeof q);
    q.allow_party_split = 1;
    assert_int_equal(eo_balance_solve(p, 6, &q, &res, NULL), 0);
    assert_int_equal(res->split[0].err, 0);
    assert_true(res->split[0].terms.broken == 1);
    assert_true(res->split[1].terms.broken == 0); /* breaking costs first: kept at k = 3 */
    eo_balance_free(res);
}

static void test_errors(void **state)
{
    (void)state;
    eo_balance_player p[4];
    memset(p, 0, sizeof p);
    eo_balance_result *res = NULL;
    uint32_t bad = 0;
    p[0].party = p[1].party = 5;
    p[0].lock = EO_BALANCE_A;
    p[1].lock = EO_BALANCE_B;
    assert_int_equal(eo_balance_solve(p, 4, NULL, &res, &bad), EO_EINVAL);
    assert_null(res);
    assert_int_equal(bad, 5);
    memset(p, 0, sizeof p);
    p[2].rating = (INT64_C(1) << 40) + 1;
    assert_int_equal(eo_balance_solve(p, 4, NULL, &res, NULL), EO_EINVAL);
    p[2].rating = 0;
    p[2].team = 3;
    assert_int_equal(eo_balance_solve(p, 4, NULL, &res, NULL), EO_EINVAL);
    p[2].team = 0;
    eo_balance_request q;
    memset(&q, 0, sizeof q);
    q.epsilon = -1;
    assert_int_equal(eo_balance_solve(p, 4, &q, &res, NULL), EO_EINVAL);
    q.epsilon = 0;
    q.k_min = 3;
    assert_int_equal(eo_balance_solve(p, 4, &q, &res, NULL), EO_EINVAL);
    assert_int_equal(eo_balance_solve(p, 1, NULL, &res, NULL), EO_EINVAL);
    assert_int_equal(eo_balance_solve(p, EO_PLAYERS_MAX + 1, NULL, &res, NULL), EO_ELIMIT);
    /* three locked on A leave no split of 2 a side */
    p[0].lock = p[1].lock = p[2].lock = EO_BALANCE_A;
    assert_int_equal(eo_balance_solve(p, 4, NULL, &res, NULL), 0);
    assert_int_equal(res->split[0].err, EO_ERANGE);
    eo_balance_free(res);
    eo_balance_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rebalance_fewest_moves),
        cmocka_unit_test(test_party_larger_than_k),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_plain_equals_split),
        cmocka_unit_test(test_plain_field_equals_general),
        cmocka_unit_test(test_brute_small),
        cmocka_unit_test(test_brute_medium),
        cmocka_unit_test(test_brute_large),
        cmocka_unit_test(test_brute_gap_table),
        cmocka_unit_test(test_brute_14),
        cmocka_unit_test(test_scramble_full),
        cmocka_unit_test(test_full_paths),
        cmocka_unit_test(test_spread_tolerance),
        cmocka_unit_test(test_fallback_bound),
        cmocka_unit_test(test_props_exact),
        cmocka_unit_test(test_props_local),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
