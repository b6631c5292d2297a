/* Mid-round autobalance (eo_autobalance.h).
 *
 * Sources of the expected answers (docs/BALANCER.md, "Autobalance", states the rules):
 * - seed 000 (/work/shared/seeds/000_ac68b704568dcab2.txt), "Autobalance on Mid-Round Joins" and
 *   F11: act when |k(A) − k(B)| >= 2; move the larger team's player closest to
 *   T = |ΣA − ΣB| / 2; several moves are chosen jointly, not greedily; with |Δk| = 1 the odd
 *   player goes where |ΣA − ΣB| is least; act within 10 s.
 * - seed 003 (/work/shared/seeds/003_eb6c224740452938.txt), Sector's Edge: off in sandbox,
 *   tournament or scrim, FFA and with < 3 minutes left; size rules 2v0, 3v1, 4v2; power gap
 *   >= 10; movers not in a party, not autobalanced before, in the bottom 2/3 of their team by
 *   points; wait 20 s; never move someone when that puts the other team ahead by the threshold.
 * - Valve TF2 autobalance (ANCHORS.md §2): dead players first, then recent joiners; 300 s
 *   protection after a move.
 * Hand-made cases state their arithmetic next to them. The reference answers of the random
 * tests come from code written here: a brute force over every move set (e <= 14) and an
 * eligibility check re-derived from the documented rules. */
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_autobalance.h"

/* ---- helpers ---------------------------------------------------------------------------- */

#define NOW INT64_C(1700000000)

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

/* A table of players: team A ratings then team B ratings; ids 1..n in that order; everyone
 * alive, joined at NOW − 600 + index (later index = more recent joiner), never moved. */
typedef struct {
    eo_ab_player p[EO_AB_PLAYERS_MAX];
    size_t n;
} roster;

static void add(roster *r, eo_ab_team t, int64_t rating)
{
    eo_ab_player *p = &r->p[r->n];
    memset(p, 0, sizeof *p);
    p->id = (uint32_t)(r->n + 1);
    p->team = t;
    p->rating = rating;
    p->joined_at = NOW - 600 + (int64_t)r->n;
    p->last_moved = EO_AB_NEVER;
    r->n++;
}

static roster teams(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    roster r;
    memset(&r, 0, sizeof r);
    for (size_t i = 0; i < na; i++)
        add(&r, EO_AB_A, a[i]);
    for (size_t i = 0; i < nb; i++)
        add(&r, EO_AB_B, b[i]);
    return r;
}

#define TEAMS(a, b) teams(a, sizeof a / sizeof a[0], b, sizeof b / sizeof b[0])

/* A policy that acts at once (no delay) with the defaults otherwise. */
static eo_ab_policy now_policy(void)
{
    eo_ab_policy p;
    eo_autobalance_policy_default(&p);
    p.delay = 0;
    return p;
}

static eo_ab_state state_of(const roster *r)
{
    eo_ab_state st;
    memset(&st, 0, sizeof st);
    st.players = r->p;
    st.n = r->n;
    st.now = NOW;
    st.time_left = 900;
    st.unbalanced_since = EO_AB_NEVER;
    return st;
}

static eo_ab_result check(const eo_ab_policy *pol, const eo_ab_state *st)
{
    eo_ab_result res;
    assert_int_equal(eo_autobalance_check(pol, st, &res), 0);
    return res;
}

/* The ids moved, in order, against an expected list. */
static void expect_moves_(const eo_ab_result *res, const uint32_t *ids, size_t n, int line)
{
    if (res->nmoves != n)
        fail_msg("line %d: %zu moves, want %zu", line, res->nmoves, n);
    for (size_t i = 0; i < n; i++)
        if (res->moves[i].id != ids[i])
            fail_msg("line %d: move %zu is id %u, want %u", line, i, res->moves[i].id, ids[i]);
}
#define EXPECT_MOVES(res, ...)                                                                     \
    do {                                                                                           \
        const uint32_t want_[] = {__VA_ARGS__};                                                    \
        const eo_ab_result got_ = (res);                                                           \
        expect_moves_(&got_, want_, sizeof want_ / sizeof want_[0], __LINE__);                     \
    } while (0)

/* ---- seed 000 F11 ------------------------------------------------------------------------- */

/* |Δk| = 2: one move, the larger team's player closest to T. */
static void test_f11_one_move(void **state)
{
    (void)state;
    /* A 6 players, ΣA = 7500; B 4 players, ΣB = 5650: D = 1850, T = 925. Closest to 925 in A:
     * 1000 (id 6, |75|); the next, 1100, is 175 away. Gap after: 1850 − 2·1000 = −150. */
    int64_t a[] = {1500, 1400, 1300, 1200, 1100, 1000}, b[] = {1600, 1450, 1350, 1250};
    roster r = TEAMS(a, b);
    eo_ab_policy pol = now_policy();
    eo_ab_state st = state_of(&r);
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_SIZE_GAP);
    assert_int_equal(res.action, EO_AB_ACT);
    assert_int_equal(res.needed, 1);
    assert_int_equal(res.ka, 6);
    assert_int_equal(res.kb, 4);
    assert_int_equal(res.gap_before, 1850);
    EXPECT_MOVES(res, 6);
    assert_int_equal(res.moves[0].from, EO_AB_A);
    assert_int_equal(res.moves[0].to, EO_AB_B);
    assert_int_equal(res.moves[0].reason, EO_AB_REASON_SIZE_GAP);
    assert_string_equal(eo_ab_reason_name(res.moves[0].reason), "size_gap");
    assert_int_equal(res.gap_after, -150);
    assert_true(res.exact);
    assert_true(isnan(res.p_before) && isnan(res.p_after));

    /* The same with the teams swapped: B is the larger team, the mover goes B -> A. */
    roster r2 = TEAMS(b, a);
    st = state_of(&r2);
    res = check(&pol, &st);
    EXPECT_MOVES(res, 10);
    assert_int_equal(res.moves[0].from, EO_AB_B);
    assert_int_equal(res.moves[0].to, EO_AB_A);
    assert_int_equal(res.gap_after, 150);
}

/* T is signed: when the larger team is the weaker one, every move widens the gap and the least
 * harm is the lowest rating, not the rating closest to |ΣA − ΣB| / 2. */
static void test_f11_signed_target(void **state)
{
    (void)state;
    /* ΣA = 640 (4 players), ΣB = 1100 (2): D = ΣL − ΣS = −460; |D| / 2 = 230 would pick 300
     * (gap −1060); the least |−460 − 2r| is r = 90 (gap −640). */
    int64_t a[] = {300, 150, 100, 90}, b[] = {1000, 100};
    roster r = TEAMS(a, b);
    eo_ab_policy pol = now_policy();
    eo_ab_state st = state_of(&r);
    eo_ab_result res = check(&pol, &st);
    EXPECT_MOVES(res, 4);
    assert_int_equal(res.gap_after, -640);
}

/* |Δk| = 4: two moves chosen jointly beat the closest-to-T move repeated. */
static void test_f11_joint_beats_greedy(void **state)
{
    (void)state;
    /* ΣA = 5100 (6 players), ΣB = 3300 (2): D = 1800, T = 900. Greedy: 1200 first (|1800 −
     * 2400| = 600 is the least single-move gap), then from the 5v3 teams the least harm, 100:
     * gap 1800 − 2·1300 = −800. Jointly: 500 + 300 = 800, gap 1800 − 1600 = 200, the least of
     * the 15 pairs (no pair sums to 1000; the next closest, 500 + 100 = 600 and 1200 + 100 =
     * 1300, give 600 and −800). Listed in preference order: the later joiner (id 5) first. */
    int64_t a[] = {1600, 1400, 1200, 500, 300, 100}, b[] = {1400, 1900};
    roster r = TEAMS(a, b);
    eo_ab_policy pol = now_policy();
    eo_ab_state st = state_of(&r);
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.needed, 2);
    EXPECT_MOVES(res, 5, 4);
    assert_int_equal(res.gap_after, 200);
    assert_true(res.exact);
}

/* |Δk| = 3: one move leaves 4v3, two leave 3v4; the odd player goes where the gap is least. */
static void test_f11_odd_gap(void **state)
{
    (void)state;
    /* ΣA = 3200 (5), ΣB = 900 (2): D = 2300. One move: least |2300 − 2r| at r = 1000: 300.
     * Two moves: no pair sums to 1150; |gap| = 100 for the sums 1100 (800 + 300, 900 + 200)
     * and 1200 (1000 + 200, 900 + 300). Ties go to the preferred movers: all alive, so the
     * most recent joiner first, preference order ids 5 (200), 4 (300), 3 (800), 2 (900),
     * 1 (1000); the first pair in that order within 100 is {5, 2} (200 + 900 = 1100, gap 100):
     * 3v4 teams, ΣA = 2100, ΣB = 2000. */
    int64_t a[] = {1000, 900, 800, 300, 200}, b[] = {500, 400};
    roster r = TEAMS(a, b);
    eo_ab_policy pol = now_policy();
    eo_ab_state st = state_of(&r);
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.needed, 1);
    assert_int_equal(res.nmoves, 2);
    EXPECT_MOVES(res, 5, 2);
    assert_int_equal(res.gap_after, 100);
    assert_int_equal(res.ka - 2, 3);

    /* Without the odd player's choice: one move, 1000 (gap 300). */
    pol.odd_extra = false;
    res = check(&pol, &st);
    EXPECT_MOVES(res, 1);
    assert_int_equal(res.gap_after, 300);

    /* With a tolerance of 200 the extra move gains 200, not more: one move, and any mover
     * within 300 + 200 of even may go: 900 (gap 500) and 1000 (300); the preferred, the later
     * joiner, is id 2 (900). */
    pol.odd_extra = true;
    pol.gap_tolerance = 200;
    res = check(&pol, &st);
    EXPECT_MOVES(res, 2);
    assert_int_equal(res.gap_after, 500);
    /* Tolerance 199: the extra move wins by more than the tolerance. */
    pol.gap_tolerance = 199;
    res = check(&pol, &st);
    assert_int_equal(res.nmoves, 2);
}

/* A joiner with |Δk| = 0 goes where the gap is least; with |Δk| = 1 to the smaller team. */
static void test_join_placement(void **state)
{
    (void)state;
    int64_t a[] = {1500, 1400, 1300}, b[] = {1600, 1450, 1200}; /* ΣA 4200, ΣB 4250 */
    roster r = TEAMS(a, b);
    eo_ab_policy pol = now_policy();
    eo_ab_placement pl;
    /* 3v3: to A gives 4200 + 1000 − 4250 = 950, to B −1050: A. */
    assert_int_equal(eo_autobalance_place_joiner(&pol, r.p, r.n, 1000, &pl), 0);
    assert_int_equal(pl.action, EO_AB_ACT);
    assert_int_equal(pl.team, EO_AB_A);
    assert_false(pl.by_size);
    assert_int_equal(pl.gap_after, 950);
    /* A rating of −50 (a model's mean may be negative): A gives −100, B 0: B. */
    assert_int_equal(eo_autobalance_place_joiner(&pol, r.p, r.n, -50, &pl), 0);
    assert_int_equal(pl.team, EO_AB_B);
    assert_int_equal(pl.gap_after, 0);
    /* A tie: teams 4200 v 4200 and rating 100 give 100 (A) and −100 (B): the smaller team,
     * then A. */
    int64_t c[] = {2100, 2100}, d[] = {2100, 2100};
    roster r2 = TEAMS(c, d);
    assert_int_equal(eo_autobalance_place_joiner(&pol, r2.p, r2.n, 100, &pl), 0);
    assert_int_equal(pl.team, EO_AB_A);
    assert_int_equal(pl.gap_after, 100);
    /* 4v3: joining A would make 5v3 (|Δk| = 2): B, by size, even though A's gap is less. */
    add(&r, EO_AB_A, 1000); /* ΣA 5200 */
    assert_int_equal(eo_autobalance_place_joiner(&pol, r.p, r.n, 3000, &pl), 0);
    assert_int_equal(pl.team, EO_AB_B);
    assert_true(pl.by_size);
    assert_int_equal(pl.gap_after, 5200 - 7250);
    /* Off: the game decides. */
    pol.mode = EO_AB_MODE_TOURNAMENT;
    assert_int_equal(eo_autobalance_place_joiner(&pol, r.p, r.n, 3000, &pl), 0);
    assert_int_equal(pl.team, EO_AB_TEAM_NONE);
    assert_int_equal(pl.action, EO_AB_OFF_MODE);
    pol = now_policy();
    pol.enabled = false;
    assert_int_equal(eo_autobalance_place_joiner(&pol, r.p, r.n, 3000, &pl), 0);
    assert_int_equal(pl.action, EO_AB_OFF_DISABLED);
}

/* ---- seed 003 policy ---------------------------------------------------------------------- */

static const int64_t A5[] = {1500, 1400, 1300, 1200, 1100};
static const int64_t B3[] = {1600, 1450, 1350};

static void test_off_rules(void **state)
{
    (void)state;
    roster r = TEAMS(A5, B3); /* 5v3: size rule */
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    static const struct {
        eo_ab_mode mode;
        eo_ab_action want;
    } modes[] = {{EO_AB_MODE_NORMAL, EO_AB_ACT},
                 {EO_AB_MODE_SANDBOX, EO_AB_OFF_MODE},
                 {EO_AB_MODE_TOURNAMENT, EO_AB_OFF_MODE},
                 {EO_AB_MODE_FFA, EO_AB_OFF_MODE},
                 {EO_AB_MODE_ARENA, EO_AB_OFF_MODE}};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        pol.mode = modes[i].mode;
        eo_ab_result res = check(&pol, &st);
        assert_int_equal(res.action, modes[i].want);
        assert_int_equal(res.rule, EO_AB_RULE_SIZE_GAP); /* reported even when off */
        assert_int_equal(res.nmoves, modes[i].want == EO_AB_ACT ? 1 : 0);
    }
    pol.mode = EO_AB_MODE_NORMAL;
    pol.enabled = false;
    assert_int_equal(check(&pol, &st).action, EO_AB_OFF_DISABLED);
    assert_string_equal(eo_ab_action_name(EO_AB_OFF_DISABLED), "disabled");
    pol.enabled = true;

    /* The last minutes: default 180 s; off below, on at 180 and when the round has no clock. */
    st.time_left = 179;
    assert_int_equal(check(&pol, &st).action, EO_AB_OFF_LAST_MINUTES);
    assert_string_equal(eo_ab_action_name(EO_AB_OFF_LAST_MINUTES), "last_minutes");
    st.time_left = 180;
    assert_int_equal(check(&pol, &st).action, EO_AB_ACT);
    st.time_left = EO_AB_TIME_UNKNOWN;
    assert_int_equal(check(&pol, &st).action, EO_AB_ACT);
    /* Configurable: the last 60 s (ANCHORS §2: what players ask for). */
    pol.last_minutes = 60;
    st.time_left = 61;
    assert_int_equal(check(&pol, &st).action, EO_AB_ACT);
    st.time_left = 59;
    assert_int_equal(check(&pol, &st).action, EO_AB_OFF_LAST_MINUTES);
    pol.last_minutes = 0;
    st.time_left = 0;
    assert_int_equal(check(&pol, &st).action, EO_AB_ACT);
}

/* Size rules: any gap >= 2 (default), or seed 003's 2v0, 3v1, 4v2. */
static void test_size_rules(void **state)
{
    (void)state;
    static const struct {
        int ka, kb;
        eo_ab_rule gap, sectors;
        int needed;
    } rows[] = {
        {0, 0, EO_AB_RULE_NONE, EO_AB_RULE_NONE, 0},
        {1, 0, EO_AB_RULE_NONE, EO_AB_RULE_NONE, 0},
        {2, 0, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_2V0, 1},
        {0, 5, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_2V0, 2},
        {2, 1, EO_AB_RULE_NONE, EO_AB_RULE_NONE, 0},
        {3, 1, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_3V1, 1},
        {1, 6, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_3V1, 2},
        {3, 2, EO_AB_RULE_NONE, EO_AB_RULE_NONE, 0},
        {4, 2, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_4V2, 1},
        {2, 7, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_SIZE_4V2, 2},
        {5, 3, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_NONE, 1}, /* not in seed 003's list */
        {12, 9, EO_AB_RULE_SIZE_GAP, EO_AB_RULE_NONE, 1},
        {12, 11, EO_AB_RULE_NONE, EO_AB_RULE_NONE, 0},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        roster r;
        memset(&r, 0, sizeof r);
        for (int k = 0; k < rows[i].ka; k++)
            add(&r, EO_AB_A, 1000 + k);
        for (int k = 0; k < rows[i].kb; k++)
            add(&r, EO_AB_B, 1000 + k);
        eo_ab_state st = state_of(&r);
        eo_ab_policy pol = now_policy();
        eo_ab_result res = check(&pol, &st);
        if (res.rule != rows[i].gap || res.needed != rows[i].needed)
            fail_msg("row %zu (%dv%d): rule %s needed %d", i, rows[i].ka, rows[i].kb,
                     eo_ab_rule_name(res.rule), res.needed);
        pol.size_rule = EO_AB_SIZE_SECTORS_EDGE;
        res = check(&pol, &st);
        if (res.rule != rows[i].sectors)
            fail_msg("row %zu (%dv%d) sectors: rule %s", i, rows[i].ka, rows[i].kb,
                     eo_ab_rule_name(res.rule));
        assert_int_equal(res.action, res.rule == EO_AB_RULE_NONE ? EO_AB_OFF_BALANCED : EO_AB_ACT);
    }
    assert_string_equal(eo_ab_rule_name(EO_AB_RULE_SIZE_2V0), "size_2v0");
    assert_string_equal(eo_ab_rule_name(EO_AB_RULE_SIZE_3V1), "size_3v1");
    assert_string_equal(eo_ab_rule_name(EO_AB_RULE_SIZE_4V2), "size_4v2");
    assert_string_equal(eo_ab_rule_name(EO_AB_RULE_SIZE_GAP), "size_gap");
    assert_string_equal(eo_ab_rule_name(EO_AB_RULE_NONE), "none");

    /* size_gap_min 3: 5v3 is fine, 6v3 is not. */
    int64_t a6[] = {1, 2, 3, 4, 5, 6}, b3[] = {1, 2, 3};
    roster r = teams(a6, 5, b3, 3);
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    pol.size_gap_min = 3;
    assert_int_equal(check(&pol, &st).rule, EO_AB_RULE_NONE);
    r = TEAMS(a6, b3);
    st = state_of(&r);
    assert_int_equal(check(&pol, &st).rule, EO_AB_RULE_SIZE_GAP);
}

/* Strength rule without a predictor: |ΣA − ΣB| >= threshold (seed 003: ">= 10"). */
static void test_strength_threshold(void **state)
{
    (void)state;
    /* 3v3, ΣA = 36, ΣB = 27 (small numbers like seed 003's sortedPower): gap 9 < 10:
     * balanced; gap 10 fires. */
    int64_t a[] = {13, 12, 11}, b[] = {10, 9, 8};
    roster r = TEAMS(a, b);
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_NONE); /* default: no strength rule without a scale */
    assert_int_equal(res.action, EO_AB_OFF_BALANCED);
    pol.strength_threshold = 10;
    res = check(&pol, &st); /* gap 9 */
    assert_int_equal(res.rule, EO_AB_RULE_NONE);
    r.p[0].rating = 14; /* gap 10 */
    res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_STRENGTH_GAP);
    assert_int_equal(res.action, EO_AB_ACT);
    /* Equal sizes: a single move would make 2v4, so a swap. Swapping a of A (14 12 11) with
     * b of B (10 9 8) gives 10 − 2(a − b): only a − b = 5, (14, 9) = ids 1 and 5, gives 0. */
    assert_int_equal(res.nmoves, 2);
    EXPECT_MOVES(res, 1, 5);
    assert_int_equal(res.moves[0].reason, EO_AB_REASON_STRENGTH_GAP);
    assert_int_equal(res.moves[1].reason, EO_AB_REASON_STRENGTH_GAP);
    assert_int_equal(res.moves[1].from, EO_AB_B);
    assert_int_equal(res.gap_after, 0);
    assert_string_equal(eo_ab_rule_name(res.rule), "strength_gap");

    /* No swaps allowed: nothing fits. */
    pol.strength_swaps = false;
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_NO_IMPROVEMENT);
    assert_int_equal(res.nmoves, 0);
    assert_int_equal(res.gap_after, res.gap_before);

    /* 4v3, A stronger and larger: one move fits (4v3 -> 3v4). A 20 15 15 10 (60), B 10 9 8
     * (27): gap 33; moving r gives 33 − 2r: r = 15 -> 3, r = 20 -> −7, r = 10 -> 13. Least:
     * 15; ids 2 and 3 tie, the more recent joiner (3) wins. */
    int64_t a4[] = {20, 15, 15, 10}, b3[] = {10, 9, 8};
    roster r2 = TEAMS(a4, b3);
    st = state_of(&r2);
    pol = now_policy();
    pol.strength_threshold = 10;
    res = check(&pol, &st);
    EXPECT_MOVES(res, 3);
    assert_int_equal(res.gap_after, 3);

    /* Overshoot (seed 003): never move when the other team then leads by the threshold.
     * A 40 30 (70) v B 25, gap 45: moving 30 gives 40 v 55 (−15), moving 40 gives 30 v 65
     * (−35), both leave B ahead by >= 10: no single move. Swaps: 40 <-> 25 gives 55 v 40 (15,
     * A still ahead, by less: allowed), 30 <-> 25 gives 65 v 30 (35). So 40 <-> 25. */
    int64_t a2[] = {40, 30}, b1[] = {25};
    roster r3 = TEAMS(a2, b1);
    st = state_of(&r3);
    res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_STRENGTH_GAP);
    EXPECT_MOVES(res, 1, 3);
    assert_int_equal(res.gap_after, 15);
    /* 100 v 1 (1v1): a move empties a team, the swap gives −99, beyond the threshold the
     * other way: no improvement. */
    int64_t a1[] = {100}, b1b[] = {1};
    roster r4 = TEAMS(a1, b1b);
    st = state_of(&r4);
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_NO_IMPROVEMENT);
    assert_string_equal(eo_ab_action_name(res.action), "no_improvement");
}

/* A logistic predictor on the sum gap (scale 400, as Elo), for the p_threshold rule. */
static double logistic(void *ctx, int64_t sa, int na, int64_t sb, int nb)
{
    (void)na;
    (void)nb;
    int *calls = ctx;
    (*calls)++;
    return 1.0 / (1.0 + pow(10.0, (double)(sb - sa) / 400.0));
}

static double bad_predictor(void *ctx, int64_t sa, int na, int64_t sb, int nb)
{
    (void)ctx;
    (void)sa;
    (void)na;
    (void)sb;
    (void)nb;
    return 1.5;
}

static void test_strength_predictor(void **state)
{
    (void)state;
    /* P(A) = 1 / (1 + 10^(−gap/400)); p_threshold 0.10 fires at P >= 0.6, gap >= 400·log10(1.5)
     * ≈ 70.4: gap 70 does not (P ≈ 0.5994), gap 72 does (P ≈ 0.6022). */
    int64_t a[] = {1534, 1500, 1500}, b[] = {1500, 1500, 1464}; /* gap 70 */
    roster r = TEAMS(a, b);
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    int calls = 0;
    pol.predict = logistic;
    pol.predict_ctx = &calls;
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_NONE);
    assert_true(res.p_before > 0.59 && res.p_before < 0.6);
    assert_true(calls > 0);
    r.p[0].rating = 1536; /* gap 72 */
    res = check(&pol, &st);
    assert_int_equal(res.rule, EO_AB_RULE_STRENGTH_GAP);
    assert_int_equal(res.action, EO_AB_ACT);
    /* Swaps with a − b = 36 give gap 0 (P exactly 0.5): (1536, 1500) and (1500, 1464). Ties go
     * to A's mover earlier in preference order, the most recent joiner: id 3 (1500), with
     * id 6 (1464). */
    assert_int_equal(res.nmoves, 2);
    EXPECT_MOVES(res, 3, 6);
    assert_int_equal(res.gap_after, 0);
    assert_true(res.p_after == 0.5);
    /* A predictor out of [0, 1] is an error. */
    pol.predict = bad_predictor;
    eo_ab_result keep;
    memset(&keep, 0x5a, sizeof keep);
    eo_ab_result out = keep;
    assert_int_equal(eo_autobalance_check(&pol, &st, &out), EO_ERANGE);
    assert_memory_equal(&out, &keep, sizeof out);
}

/* Who may move: parties, protected, cooldown, bottom 2/3 by score, dead only. */
static void test_eligibility(void **state)
{
    (void)state;
    /* 4v2, need 1 move; ΣA = 4000, ΣB = 2000: D = 2000, T = 1000. */
    int64_t a[] = {1000, 1000, 1000, 1000}, b[] = {1000, 1000};
    roster r = TEAMS(a, b);
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    /* Everyone alike: the most recent joiner, id 4. */
    eo_ab_result res = check(&pol, &st);
    EXPECT_MOVES(res, 4);
    assert_int_equal(res.eligible, 4);
    /* Id 4 in a party: id 3. Allowed parties: id 4 again. */
    r.p[3].party = 7;
    res = check(&pol, &st);
    EXPECT_MOVES(res, 3);
    assert_int_equal(res.eligible, 3);
    pol.allow_party = true;
    EXPECT_MOVES(check(&pol, &st), 4);
    pol.allow_party = false;
    /* Id 3 protected: id 2. */
    r.p[2].is_protected = true;
    EXPECT_MOVES(check(&pol, &st), 2);
    /* Id 2 moved 299 s ago (cooldown 300): id 1; 300 s ago: id 2 again. */
    r.p[1].last_moved = NOW - 299;
    EXPECT_MOVES(check(&pol, &st), 1);
    r.p[1].last_moved = NOW - 300;
    EXPECT_MOVES(check(&pol, &st), 2);
    /* Once per round (seed 003): cooldown INT64_MAX. */
    pol.cooldown = INT64_MAX;
    EXPECT_MOVES(check(&pol, &st), 1);
    /* Nobody left: id 1 moved too. */
    r.p[0].last_moved = NOW - 1000;
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_NO_ELIGIBLE);
    assert_int_equal(res.nmoves, 0);
    assert_int_equal(res.short_by, 1);
    assert_int_equal(res.eligible, 0);
    assert_string_equal(eo_ab_action_name(res.action), "no_eligible");

    /* Dead first, before recent joiners: id 1 dead. */
    r = TEAMS(a, b);
    r.p[0].dead = true;
    EXPECT_MOVES(check(&pol, &st), 1);
    /* dead_only: only the dead may move; nobody dead -> no_eligible. */
    pol.dead_only = true;
    EXPECT_MOVES(check(&pol, &st), 1);
    r.p[0].dead = false;
    assert_int_equal(check(&pol, &st).action, EO_AB_OFF_NO_ELIGIBLE);
    pol.dead_only = false;

    /* Bottom 2/3 by score among those passing the other tests (seed 003). Six on A v 2 on B
     * (need 2): scores 60 50 40 30 20 10: floor(2·6/3) = 4 in: scores 10..40 (ids 3..6).
     * Ratings all 1000: the two most recent, ids 6 and 5. Give ids 5 and 6 top scores: ids
     * 3 and 4 would... scores ids 1..6 = 10 20 30 40 50 60: ids 1..4 in; ids 4, 3 move. */
    int64_t a6[] = {1000, 1000, 1000, 1000, 1000, 1000};
    r = TEAMS(a6, b);
    for (int i = 0; i < 6; i++)
        r.p[i].score = 10 * (i + 1);
    st = state_of(&r);
    st.has_scores = true;
    res = check(&pol, &st);
    assert_int_equal(res.eligible, 4);
    EXPECT_MOVES(res, 4, 3);
    /* Without scores the rule does not apply: ids 6, 5. */
    st.has_scores = false;
    EXPECT_MOVES(check(&pol, &st), 6, 5);
    /* The ranking excludes party members: id 1 (10 points) in a party: five ranked, floor(10/3)
     * = 3 in: ids 2, 3, 4; ids 4 and 3 move. Ties at the cut are all in: ids 4 and 5 both on
     * 40 points: 4 in (ids 2..5); ids 5, 4 move. */
    st.has_scores = true;
    r.p[0].party = 3;
    res = check(&pol, &st);
    assert_int_equal(res.eligible, 3);
    EXPECT_MOVES(res, 4, 3);
    r.p[4].score = 40;
    res = check(&pol, &st);
    assert_int_equal(res.eligible, 4);
    EXPECT_MOVES(res, 5, 4);
}

/* Fewer eligible than needed: they all move, short_by says how many are missing. */
static void test_short(void **state)
{
    (void)state;
    int64_t a[] = {1, 2, 3, 4, 5, 6, 7, 8}, b[] = {1, 2};
    roster r = TEAMS(a, b); /* 8v2: need 3 */
    for (int i = 0; i < 6; i++)
        r.p[i].party = 1;
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol = now_policy();
    eo_ab_result res = check(&pol, &st);
    assert_int_equal(res.needed, 3);
    assert_int_equal(res.eligible, 2);
    assert_int_equal(res.short_by, 1);
    assert_int_equal(res.action, EO_AB_ACT);
    EXPECT_MOVES(res, 8, 7);
}

/* The delay before acting: seed 000 within 10 s (default), seed 003 20 s. */
static void test_delay(void **state)
{
    (void)state;
    roster r = TEAMS(A5, B3);
    eo_ab_state st = state_of(&r);
    eo_ab_policy pol;
    eo_autobalance_policy_default(&pol);
    assert_int_equal(pol.delay, 10);
    assert_int_equal(pol.last_minutes, 180);
    eo_ab_result res = check(&pol, &st); /* first seen now */
    assert_int_equal(res.action, EO_AB_OFF_DELAY);
    assert_int_equal(res.act_at, NOW + 10);
    assert_int_equal(res.nmoves, 0);
    assert_string_equal(eo_ab_action_name(res.action), "delay");
    st.unbalanced_since = NOW - 9;
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_DELAY);
    assert_int_equal(res.act_at, NOW + 1);
    st.unbalanced_since = NOW - 10;
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_ACT);
    assert_int_equal(res.act_at, EO_AB_NEVER);
    pol.delay = EO_AB_DELAY_SECTORS_EDGE;
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_DELAY);
    assert_int_equal(res.act_at, NOW + 10);
    st.unbalanced_since = NOW - 20;
    assert_int_equal(check(&pol, &st).action, EO_AB_ACT);
    /* Balanced teams never wait. */
    roster r2 = TEAMS(B3, B3);
    st = state_of(&r2);
    res = check(&pol, &st);
    assert_int_equal(res.action, EO_AB_OFF_BALANCED);
    assert_int_equal(res.act_at, EO_AB_NEVER);
}

/* Invalid input: a clear error code and nothing written. */
static void test_invalid(void **state)
{
    (void)state;
    roster r = TEAMS(A5, B3);
    eo_ab_state st0 = state_of(&r);
    eo_ab_policy pol0 = now_policy();
    eo_ab_result keep;
    memset(&keep, 0x5a, sizeof keep);
#define BAD(code, pol, st)                                                                         \
    do {                                                                                           \
        eo_ab_result out_ = keep;                                                                  \
        assert_int_equal(eo_autobalance_check(pol, st, &out_), code);                             \
        assert_memory_equal(&out_, &keep, sizeof out_);                                            \
    } while (0)
    BAD(EO_EINVAL, NULL, &st0);
    BAD(EO_EINVAL, &pol0, NULL);
    assert_int_equal(eo_autobalance_check(&pol0, &st0, NULL), EO_EINVAL);

    eo_ab_policy pol = pol0;
    pol.mode = (eo_ab_mode)9;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.size_rule = (eo_ab_size_rule)2;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.size_gap_min = 1;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.last_minutes = -1;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.delay = -5;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.cooldown = -1;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.strength_threshold = -1;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.p_threshold = 0.6;
    BAD(EO_EINVAL, &pol, &st0);
    pol.p_threshold = NAN;
    BAD(EO_EINVAL, &pol, &st0);
    pol = pol0;
    pol.gap_tolerance = -1;
    BAD(EO_EINVAL, &pol, &st0);

    eo_ab_state st = st0;
    st.players = NULL;
    BAD(EO_EINVAL, &pol0, &st);
    st = st0;
    st.time_left = -2;
    BAD(EO_EINVAL, &pol0, &st);
    st = st0;
    st.now = INT64_MAX;
    BAD(EO_EINVAL, &pol0, &st);
    st = st0;
    st.n = EO_AB_PLAYERS_MAX + 1;
    BAD(EO_ELIMIT, &pol0, &st);

    roster bad = r;
    st = state_of(&bad);
    bad.p[2].team = EO_AB_TEAM_NONE;
    BAD(EO_EINVAL, &pol0, &st);
    bad = r;
    bad.p[2].rating = EO_AB_RATING_MAX + 1;
    BAD(EO_EINVAL, &pol0, &st);
    bad.p[2].rating = -EO_AB_RATING_MAX; /* the bound itself is fine */
    eo_ab_result ok;
    assert_int_equal(eo_autobalance_check(&pol0, &st, &ok), 0);
    bad = r;
    bad.p[2].joined_at = INT64_MIN;
    BAD(EO_EINVAL, &pol0, &st);

    /* 65 on a team. */
    roster big;
    memset(&big, 0, sizeof big);
    for (int i = 0; i < EO_AB_TEAM_MAX + 1; i++)
        add(&big, EO_AB_A, 1000);
    st = state_of(&big);
    BAD(EO_ELIMIT, &pol0, &st);
    eo_ab_placement pl, pkeep;
    memset(&pkeep, 0x5a, sizeof pkeep);
    pl = pkeep;
    assert_int_equal(eo_autobalance_place_joiner(&pol0, big.p, big.n, 1, &pl), EO_ELIMIT);
    assert_memory_equal(&pl, &pkeep, sizeof pl);
    assert_int_equal(eo_autobalance_place_joiner(&pol0, r.p, r.n, EO_AB_RATING_MAX + 1, &pl),
                     EO_EINVAL);
    assert_int_equal(eo_autobalance_place_joiner(&pol0, NULL, 3, 1, &pl), EO_EINVAL);
    assert_int_equal(eo_autobalance_place_joiner(NULL, r.p, r.n, 1, &pl), EO_EINVAL);
    assert_memory_equal(&pl, &pkeep, sizeof pl);
#undef BAD
}

/* ---- brute force and properties --------------------------------------------------------- */

/* Eligibility re-derived from the documented rules (docs/BALANCER.md "Autobalance"). */
static void ref_eligible(const eo_ab_policy *pol, const eo_ab_state *st, bool *ok)
{
    const eo_ab_player *pl = st->players;
    bool base[EO_AB_PLAYERS_MAX];
    for (size_t i = 0; i < st->n; i++) {
        bool cool = pl[i].last_moved == EO_AB_NEVER ||
                    (pl[i].last_moved <= st->now && st->now - pl[i].last_moved >= pol->cooldown);
        base[i] = (pol->allow_party || pl[i].party == 0) && !pl[i].is_protected && cool;
    }
    for (size_t i = 0; i < st->n; i++) {
        ok[i] = base[i] && (!pol->dead_only || pl[i].dead);
        if (!ok[i] || !st->has_scores)
            continue;
        int c = 0, below = 0;
        for (size_t j = 0; j < st->n; j++)
            if (base[j] && pl[j].team == pl[i].team) {
                c++;
                below += pl[j].score < pl[i].score;
            }
        ok[i] = below < 2 * c / 3;
    }
}

/* Preference: dead first, then the later joiner, then the lower index. */
static bool prefer(const eo_ab_player *pl, int i, int j)
{
    if (pl[i].dead != pl[j].dead)
        return pl[i].dead;
    if (pl[i].joined_at != pl[j].joined_at)
        return pl[i].joined_at > pl[j].joined_at;
    return i < j;
}

static int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

/* Brute force of the size rule's move set: every set of m (and m + 1 when |Δk| is odd) of the
 * eligible players of the larger team; the least |gap|; fewer moves unless more gain by more
 * than the tolerance; then within the tolerance the lexicographically first set in preference
 * order. Writes the movers in preference order; returns their count. */
static int brute_moves(const eo_ab_policy *pol, const eo_ab_state *st, int *movers)
{
    const eo_ab_player *pl = st->players;
    bool ok[EO_AB_PLAYERS_MAX];
    ref_eligible(pol, st, ok);
    int ka = 0, kb = 0;
    int64_t sa = 0, sb = 0;
    for (size_t i = 0; i < st->n; i++) {
        if (pl[i].team == EO_AB_A)
            ka++, sa += pl[i].rating;
        else
            kb++, sb += pl[i].rating;
    }
    eo_ab_team lt = ka > kb ? EO_AB_A : EO_AB_B;
    int d = abs(ka - kb), m = d / 2;
    int64_t D = lt == EO_AB_A ? sa - sb : sb - sa;
    int cand[EO_AB_TEAM_MAX], e = 0;
    for (size_t i = 0; i < st->n; i++)
        if (ok[i] && pl[i].team == lt)
            cand[e++] = (int)i;
    for (int x = 1; x < e; x++) /* preference order */
        for (int y = x; y > 0 && prefer(pl, cand[y], cand[y - 1]); y--) {
            int t = cand[y];
            cand[y] = cand[y - 1];
            cand[y - 1] = t;
        }
    if (e <= m) {
        memcpy(movers, cand, (size_t)e * sizeof cand[0]);
        return e;
    }
    int64_t best[2] = {INT64_MAX, INT64_MAX};
    for (uint32_t mask = 0; mask < (UINT32_C(1) << e); mask++) {
        int c = __builtin_popcount(mask);
        if (c != m && c != m + 1)
            continue;
        int64_t s = 0;
        for (int q = 0; q < e; q++)
            if (mask >> q & 1)
                s += pl[cand[q]].rating;
        int64_t g = abs64(D - 2 * s);
        if (g < best[c - m])
            best[c - m] = g;
    }
    int use = m;
    if (pol->odd_extra && d % 2 != 0 && best[1] < best[0] && best[0] - best[1] > pol->gap_tolerance)
        use = m + 1;
    int64_t bound = best[use - m] + pol->gap_tolerance;
    /* Lexicographically first set of preference ranks: the set whose bit pattern, read from
     * rank 0, has a 1 earliest; i.e. the greatest mask when rank 0 is the top bit. */
    uint32_t pickmask = 0;
    bool found = false;
    for (uint32_t mask = 0; mask < (UINT32_C(1) << e); mask++) {
        if (__builtin_popcount(mask) != use)
            continue;
        int64_t s = 0;
        for (int q = 0; q < e; q++)
            if (mask >> (e - 1 - q) & 1)
                s += pl[cand[q]].rating;
        if (abs64(D - 2 * s) <= bound && (!found || mask > pickmask)) {
            pickmask = mask;
            found = true;
        }
    }
    int c = 0;
    for (int q = 0; q < e; q++)
        if (pickmask >> (e - 1 - q) & 1)
            movers[c++] = cand[q];
    return c;
}

static void random_roster(uint64_t *s, roster *r, int ka, int kb, int64_t spread)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < ka + kb; i++) {
        add(r, i < ka ? EO_AB_A : EO_AB_B, 1500 + rng_range(s, -spread, spread));
        eo_ab_player *p = &r->p[r->n - 1];
        p->dead = rng_range(s, 0, 3) == 0;
        p->joined_at = NOW - rng_range(s, 0, 30); /* ties happen */
        p->party = rng_range(s, 0, 5) == 0 ? (uint32_t)rng_range(s, 1, 3) : 0;
        p->is_protected = rng_range(s, 0, 9) == 0;
        p->last_moved = rng_range(s, 0, 7) == 0 ? NOW - rng_range(s, 0, 600) : EO_AB_NEVER;
        p->score = rng_range(s, 0, 5) * 10;
    }
    /* Shuffle the order so team A is not always first. */
    for (size_t i = r->n; i > 1; i--) {
        size_t j = (size_t)rng_range(s, 0, (int64_t)i - 1);
        eo_ab_player t = r->p[i - 1];
        r->p[i - 1] = r->p[j];
        r->p[j] = t;
    }
    for (size_t i = 0; i < r->n; i++)
        r->p[i].id = (uint32_t)(100 + i);
}

/* The size rule against the brute force over every move set, e <= 14. */
static void test_brute_force(void **state)
{
    (void)state;
    uint64_t seed = 42;
    int acted = 0, extra = 0;
    for (int it = 0; it < 4000; it++) {
        int big = (int)rng_range(&seed, 2, 14), small = (int)rng_range(&seed, 0, big - 2);
        bool a_big = rng_range(&seed, 0, 1);
        roster r;
        int64_t spread = rng_range(&seed, 0, 2) == 0 ? 3 : 400; /* small: many ties */
        random_roster(&seed, &r, a_big ? big : small, a_big ? small : big, spread);
        eo_ab_policy pol = now_policy();
        pol.gap_tolerance = rng_range(&seed, 0, 3) == 0 ? rng_range(&seed, 0, 50) : 0;
        pol.odd_extra = rng_range(&seed, 0, 4) != 0;
        pol.allow_party = rng_range(&seed, 0, 4) == 0;
        eo_ab_state st = state_of(&r);
        st.has_scores = rng_range(&seed, 0, 1);
        eo_ab_result res = check(&pol, &st);
        int want[EO_AB_TEAM_MAX];
        int nw = brute_moves(&pol, &st, want);
        assert_int_equal(res.rule, EO_AB_RULE_SIZE_GAP);
        assert_true(res.exact);
        if (res.nmoves != (size_t)nw)
            fail_msg("it %d: %zu moves, brute force %d", it, res.nmoves, nw);
        for (int i = 0; i < nw; i++)
            if (res.moves[i].index != want[i])
                fail_msg("it %d: move %d is %u, brute force %d", it, i, res.moves[i].index,
                         want[i]);
        acted += nw > 0;
        extra += res.nmoves > (size_t)res.needed;
    }
    assert_true(acted > 2000); /* the test exercised the search, not only "nobody may move" */
    assert_true(extra > 50);   /* and the odd player's extra move */
}

/* Large random instances: sizes end within one, movers come from the larger team only and are
 * eligible, every move reason is size_gap, and gap_after is the recomputed gap. */
static void test_properties(void **state)
{
    (void)state;
    uint64_t seed = 7;
    for (int it = 0; it < 600; it++) {
        int big = (int)rng_range(&seed, 2, EO_AB_TEAM_MAX), small = (int)rng_range(&seed, 0, big - 2);
        bool a_big = rng_range(&seed, 0, 1);
        roster r;
        random_roster(&seed, &r, a_big ? big : small, a_big ? small : big,
                      rng_range(&seed, 0, 1) ? 500 : 20000);
        eo_ab_policy pol = now_policy();
        pol.size_rule = rng_range(&seed, 0, 3) == 0 ? EO_AB_SIZE_SECTORS_EDGE : EO_AB_SIZE_GAP;
        pol.work_limit = rng_range(&seed, 0, 3) == 0 ? 1000 : 0; /* cut searches too */
        eo_ab_state st = state_of(&r);
        st.has_scores = rng_range(&seed, 0, 1);
        eo_ab_result res = check(&pol, &st);
        bool ok[EO_AB_PLAYERS_MAX];
        ref_eligible(&pol, &st, ok);
        if (res.rule == EO_AB_RULE_NONE) {
            assert_int_equal(pol.size_rule, EO_AB_SIZE_SECTORS_EDGE);
            assert_true(small >= 3);
            continue;
        }
        eo_ab_team lt = a_big ? EO_AB_A : EO_AB_B;
        int64_t gap = res.gap_before;
        int ka = res.ka, kb = res.kb;
        bool seen[EO_AB_PLAYERS_MAX] = {false};
        for (size_t i = 0; i < res.nmoves; i++) {
            const eo_ab_move *mv = &res.moves[i];
            assert_true(mv->index < r.n);
            assert_false(seen[mv->index]);
            seen[mv->index] = true;
            assert_int_equal(mv->id, r.p[mv->index].id);
            assert_int_equal(mv->from, lt);
            assert_int_equal(r.p[mv->index].team, lt);
            assert_int_not_equal(mv->to, lt);
            assert_true(ok[mv->index]);
            assert_int_equal(mv->reason, EO_AB_REASON_SIZE_GAP);
            int64_t rt = r.p[mv->index].rating;
            gap += lt == EO_AB_A ? -2 * rt : 2 * rt;
            ka += lt == EO_AB_A ? -1 : 1;
            kb += lt == EO_AB_A ? 1 : -1;
        }
        assert_int_equal(gap, res.gap_after);
        if (res.short_by == 0)
            assert_true(abs(ka - kb) <= 1);
        else
            assert_int_equal(res.short_by, res.needed - (int)res.nmoves);
        for (size_t i = 1; i < res.nmoves; i++) /* ordered by preference */
            assert_true(prefer(r.p, res.moves[i - 1].index, res.moves[i].index));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f11_one_move),
        cmocka_unit_test(test_f11_signed_target),
        cmocka_unit_test(test_f11_joint_beats_greedy),
        cmocka_unit_test(test_f11_odd_gap),
        cmocka_unit_test(test_join_placement),
        cmocka_unit_test(test_off_rules),
        cmocka_unit_test(test_size_rules),
        cmocka_unit_test(test_strength_threshold),
        cmocka_unit_test(test_strength_predictor),
        cmocka_unit_test(test_eligibility),
        cmocka_unit_test(test_short),
        cmocka_unit_test(test_delay),
        cmocka_unit_test(test_invalid),
        cmocka_unit_test(test_brute_force),
        cmocka_unit_test(test_properties),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
