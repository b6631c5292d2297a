/*
 * eo_round_validate(): each rule of the canonical record (docs/ROUNDS.md) on its own, on
 * rounds built by hand in C (no JSON), and eo_round_free() on partial records. Every expected
 * field path and message fragment is taken from the rule it tests, as the docs state it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_round.h"

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    assert_non_null(p);
    memcpy(p, s, n);
    return p;
}

/* A valid round: A = a0..a{na-1}, B = b0..b{nb-1}, A wins. */
static void make(eo_round *r, size_t na, size_t nb)
{
    memset(r, 0, sizeof *r);
    r->id = dup("srv1:1");
    r->winner = EO_WIN_A;
    size_t n[2] = {na, nb};
    for (int t = 0; t < 2; t++) {
        r->n[t] = n[t];
        r->team[t] = calloc(n[t] ? n[t] : 1, sizeof(eo_member));
        assert_non_null(r->team[t]);
        for (size_t i = 0; i < n[t]; i++) {
            char id[32];
            snprintf(id, sizeof id, "%c%zu", t == 0 ? 'a' : 'b', i);
            r->team[t][i].id = dup(id);
        }
    }
}

static void set_id(char **slot, const char *s)
{
    free(*slot);
    *slot = s ? dup(s) : NULL;
}

/* Validates r, expects failure at field with a message containing frag, and frees r. */
static void expect_bad(eo_round *r, const char *field, const char *frag)
{
    eo_round_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_round_validate(r, &err), EO_EINVAL);
    assert_string_equal(err.field, field);
    if (strstr(err.message, frag) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.message, frag);
    eo_round_free(r);
}

static void expect_ok(eo_round *r)
{
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_round_validate(r, &err);
    if (rc != 0)
        fail_msg("unexpected error at \"%s\": %s", err.field, err.message);
    eo_round_free(r);
}

static void test_valid_minimal(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 1);
    expect_ok(&r);
    /* eo_round_free zeroes the record. */
    assert_null(r.id);
    assert_null(r.team[0]);
    assert_int_equal(r.n[0], 0);
}

static void test_valid_all_options(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 2, 2);
    r.server = dup("srv1");
    r.map = dup("arena_well");
    r.mode = dup("arena");
    r.started_at = 1763800000;
    r.ended_at = 1763800391;
    r.winner = EO_DRAW;
    r.team[0][1].has = EO_MEMBER_TIME;
    r.team[0][1].time = 0.5;
    r.team[0][1].commander = true;
    r.team[1][1].has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    r.team[1][1].joined = 40;
    r.team[1][1].left = 391;
    r.team[1][0].party = dup("party-1");
    expect_ok(&r);
}

static void test_bounds_inclusive(void **state)
{
    (void)state;
    eo_round r;
    /* time 0 and 1 are both inside [0, 1]; joined == left is allowed (left >= joined). */
    make(&r, 2, 1);
    r.team[0][0].has = EO_MEMBER_TIME;
    r.team[0][0].time = 0.0;
    r.team[0][1].has = EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    r.team[0][1].time = 1.0;
    r.team[0][1].joined = 12.5;
    r.team[0][1].left = 12.5;
    r.started_at = r.ended_at = 1763800000;
    expect_ok(&r);
}

static void test_missing_id(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 1);
    set_id(&r.id, NULL);
    expect_bad(&r, "id", "missing");
}

static void test_empty_id(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 1);
    set_id(&r.id, "");
    expect_bad(&r, "id", "empty");
}

static void test_long_ids(void **state)
{
    (void)state;
    char id[EO_ID_MAX + 2];
    /* Exactly 128 bytes is the longest valid id. */
    memset(id, 'x', EO_ID_MAX);
    id[EO_ID_MAX] = '\0';
    eo_round r;
    make(&r, 1, 1);
    set_id(&r.id, id);
    set_id(&r.team[1][0].id, id);
    expect_ok(&r);
    id[EO_ID_MAX] = 'x';
    id[EO_ID_MAX + 1] = '\0';
    make(&r, 1, 1);
    set_id(&r.id, id);
    expect_bad(&r, "id", "longer than 128 bytes");
    make(&r, 1, 3);
    set_id(&r.team[1][2].id, id);
    expect_bad(&r, "B[2].id", "longer than 128 bytes");
    make(&r, 1, 1);
    r.team[0][0].party = dup(id);
    expect_bad(&r, "A[0].party", "longer than 128 bytes");
}

static void test_control_and_utf8(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 2, 1);
    set_id(&r.team[0][1].id, "bad\tid");
    expect_bad(&r, "A[1].id", "control character");
    make(&r, 1, 1);
    set_id(&r.team[1][0].id, "del\x7f");
    expect_bad(&r, "B[0].id", "control character");
    /* 0xC3 0x28: a lead byte followed by a non-continuation byte. */
    make(&r, 1, 1);
    set_id(&r.id, "r\xC3\x28");
    expect_bad(&r, "id", "invalid UTF-8");
    make(&r, 1, 1);
    r.team[1][0].party = dup("\xFF");
    expect_bad(&r, "B[0].party", "invalid UTF-8");
    make(&r, 1, 1);
    set_id(&r.server, "s\n");
    expect_bad(&r, "server", "control character");
    make(&r, 1, 1);
    set_id(&r.map, "");
    expect_bad(&r, "map", "empty");
    make(&r, 1, 1);
    set_id(&r.mode, "\x01");
    expect_bad(&r, "mode", "control character");
    /* Non-ASCII UTF-8 is fine: "Jörg" and a CJK name. */
    make(&r, 1, 1);
    set_id(&r.team[0][0].id, "J\xC3\xB6rg");
    set_id(&r.team[1][0].id, "\xE5\x90\x8D");
    expect_ok(&r);
}

/* The name rule of new pools (docs/ROUNDS.md): letters, digits, '_', '-', '.'; 1..128 bytes;
 * not "." or "..". */
static void test_pool_name_check(void **state)
{
    (void)state;
    static const char *const good[] = {"arena", "a", "A-Z_0.9", "...", ".x", "x..", "-"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
        assert_int_equal(eo_pool_name_check(good[i], strlen(good[i]), NULL), 0);
    static const char *const bad[] = {"a/b", "../x", "x');DROP TABLE pools;--", ".", "..",
                                      "a b", "caf\xC3\xA9", "a%2Fb", "a\\b", "a\tb", "\xFF"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *msg = NULL;
        assert_int_equal(eo_pool_name_check(bad[i], strlen(bad[i]), &msg), EO_EINVAL);
        assert_string_equal(msg, "a pool name is 1 to 128 bytes of letters, digits, '_', '-' "
                                 "or '.', and not \".\" or \"..\"");
    }
    const char *msg = NULL;
    assert_int_equal(eo_pool_name_check("", 0, &msg), EO_EINVAL);
    assert_non_null(msg);
    assert_int_equal(eo_pool_name_check(NULL, 3, NULL), EO_EINVAL);
    assert_int_equal(eo_pool_name_check("a\0b", 3, NULL), EO_EINVAL); /* the length counts */
    char name[EO_ID_MAX + 2];
    memset(name, 'n', sizeof name);
    assert_int_equal(eo_pool_name_check(name, EO_ID_MAX, NULL), 0);
    msg = NULL;
    assert_int_equal(eo_pool_name_check(name, EO_ID_MAX + 1, &msg), EO_ELIMIT);
    assert_string_equal(msg, EO_POOL_NAME_RULE);
}

static void test_winner(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 1);
    r.winner = (eo_winner)3;
    expect_bad(&r, "winner", "expected \"A\", \"B\" or \"draw\"");
    make(&r, 1, 1);
    r.winner = EO_WIN_B;
    expect_ok(&r);
}

static void test_empty_team(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 0, 2);
    expect_bad(&r, "A", "team is empty");
    make(&r, 3, 0);
    expect_bad(&r, "B", "team is empty");
}

static void test_duplicates(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 3, 2);
    set_id(&r.team[0][2].id, "a0");
    expect_bad(&r, "A[2].id", "already on team A at A[0]");
    make(&r, 3, 2);
    set_id(&r.team[1][1].id, "a1");
    expect_bad(&r, "B[1].id", "on both teams (also at A[1])");
    /* Two repeats: the one met first in record order is reported (A[2] before B[0]). */
    make(&r, 3, 2);
    set_id(&r.team[1][0].id, "a0");
    set_id(&r.team[0][2].id, "a1");
    expect_bad(&r, "A[2].id", "at A[1]");
    /* Three times the same id: the second occurrence is the first repeat. */
    make(&r, 1, 3);
    set_id(&r.team[1][0].id, "a0");
    set_id(&r.team[1][2].id, "a0");
    expect_bad(&r, "B[0].id", "also at A[0]");
}

static void test_times(void **state)
{
    (void)state;
    eo_round r;
    const double bad[] = {-0.001, 1.0000001, 2.0, -1e300};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        make(&r, 2, 2);
        r.team[0][1].has = EO_MEMBER_TIME;
        r.team[0][1].time = bad[i];
        expect_bad(&r, "A[1].time", "[0, 1]");
    }
    make(&r, 1, 1);
    r.team[1][0].has = EO_MEMBER_TIME;
    r.team[1][0].time = NAN; /* NaN fails every comparison: must still be rejected */
    expect_bad(&r, "B[0].time", "[0, 1]");
    /* A time value that is not flagged as given is ignored. */
    make(&r, 1, 1);
    r.team[1][0].time = 7.0;
    expect_ok(&r);
}

static void test_joined_left(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 2);
    r.team[1][1].has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    r.team[1][1].joined = 100;
    r.team[1][1].left = 99.5;
    expect_bad(&r, "B[1].left", "before joined");
    make(&r, 1, 1);
    r.team[0][0].has = EO_MEMBER_JOINED;
    r.team[0][0].joined = -1;
    expect_bad(&r, "A[0].joined", ">= 0");
    make(&r, 1, 1);
    r.team[0][0].has = EO_MEMBER_LEFT;
    r.team[0][0].left = -0.5;
    expect_bad(&r, "A[0].left", ">= 0");
    make(&r, 1, 1);
    r.team[0][0].has = EO_MEMBER_LEFT;
    r.team[0][0].left = INFINITY;
    expect_bad(&r, "A[0].left", ">= 0");
    /* Either may be given alone. */
    make(&r, 2, 1);
    r.team[0][0].has = EO_MEMBER_LEFT;
    r.team[0][0].left = 30;
    r.team[0][1].has = EO_MEMBER_JOINED;
    r.team[0][1].joined = 500;
    expect_ok(&r);
}

static void test_started_ended(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 1, 1);
    r.started_at = 1763800391;
    r.ended_at = 1763800000;
    expect_bad(&r, "ended_at", "before started_at");
    make(&r, 1, 1);
    r.started_at = -5;
    expect_bad(&r, "started_at", ">= 0");
    /* Only one of them given: no order to check. */
    make(&r, 1, 1);
    r.ended_at = 10;
    expect_ok(&r);
}

static void test_players_max(void **state)
{
    (void)state;
    eo_round r;
    make(&r, EO_PLAYERS_MAX / 2, EO_PLAYERS_MAX / 2); /* 128 + 128 = 256: the maximum */
    expect_ok(&r);
    make(&r, EO_PLAYERS_MAX / 2, EO_PLAYERS_MAX / 2 + 1);
    expect_bad(&r, "B", "257");
    make(&r, EO_PLAYERS_MAX + 1, 1);
    expect_bad(&r, "A", "at most 256");
}

static void test_free_null_and_partial(void **state)
{
    (void)state;
    eo_round_free(NULL);
    eo_round r;
    memset(&r, 0, sizeof r);
    eo_round_free(&r);
    /* A record with n set but no array (as left by a failed allocation) is freed safely. */
    r.n[0] = 3;
    r.id = dup("x");
    eo_round_free(&r);
    assert_null(r.id);
    /* Validation with a NULL error pointer still fails. */
    make(&r, 0, 1);
    assert_int_equal(eo_round_validate(&r, NULL), EO_EINVAL);
    eo_round_free(&r);
    assert_int_equal(eo_round_validate(NULL, NULL), EO_EINVAL);
}

/* Partial-play weights (eo_round_member_weight): time first, then joined/left over the round's
 * length, else the whole round. */
static void test_member_weight(void **state)
{
    (void)state;
    eo_round r;
    eo_member m;
    memset(&r, 0, sizeof r);
    memset(&m, 0, sizeof m);
    assert_true(eo_round_member_weight(&r, &m) == 1.0); /* nothing given */
    m.has = EO_MEMBER_TIME;
    m.time = 0.25;
    assert_true(eo_round_member_weight(&r, &m) == 0.25);
    m.has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    m.joined = 60;
    m.left = 240;
    assert_true(eo_round_member_weight(&r, &m) == 1.0); /* no round length known */
    r.started_at = 1000;
    r.ended_at = 1600; /* 600 s */
    assert_true(eo_round_member_weight(&r, &m) == 0.3); /* (240 - 60) / 600 */
    m.has = EO_MEMBER_JOINED; /* stayed to the end */
    assert_true(eo_round_member_weight(&r, &m) == 0.9);
    m.has = EO_MEMBER_LEFT; /* there from the start */
    assert_true(eo_round_member_weight(&r, &m) == 0.4);
    m.left = 900; /* past the end counts to the end */
    assert_true(eo_round_member_weight(&r, &m) == 1.0);
    m.has = EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    m.time = 0.5; /* time wins over joined/left */
    assert_true(eo_round_member_weight(&r, &m) == 0.5);
    m.has = EO_MEMBER_JOINED;
    m.joined = 700; /* joined after the end: nothing played */
    assert_true(eo_round_member_weight(&r, &m) == 0.0);
}

/* eo_round_drop_times(): every member weighs 1 afterwards; playtime, commander, party stay. */
static void test_drop_times(void **state)
{
    (void)state;
    eo_round r;
    make(&r, 2, 2);
    r.started_at = 1000;
    r.ended_at = 1600;
    r.team[0][0].has = EO_MEMBER_TIME | EO_MEMBER_PLAYTIME;
    r.team[0][0].time = 0.25;
    r.team[0][0].playtime = 3600.0;
    r.team[0][0].commander = true;
    r.team[1][1].has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    r.team[1][1].joined = 60;
    r.team[1][1].left = 240;
    r.team[1][1].party = dup("p1");
    assert_true(eo_round_member_weight(&r, &r.team[0][0]) == 0.25);
    assert_true(eo_round_member_weight(&r, &r.team[1][1]) == 0.3);
    eo_round_drop_times(&r);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < r.n[t]; i++)
            assert_true(eo_round_member_weight(&r, &r.team[t][i]) == 1.0);
    assert_int_equal(r.team[0][0].has, EO_MEMBER_PLAYTIME);
    assert_true(r.team[0][0].playtime == 3600.0);
    assert_true(r.team[0][0].commander);
    assert_int_equal(r.team[1][1].has, 0);
    assert_string_equal(r.team[1][1].party, "p1");
    assert_int_equal(eo_round_validate(&r, NULL), 0);
    eo_round_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_minimal),     cmocka_unit_test(test_valid_all_options),
        cmocka_unit_test(test_bounds_inclusive),  cmocka_unit_test(test_missing_id),
        cmocka_unit_test(test_empty_id),          cmocka_unit_test(test_long_ids),
        cmocka_unit_test(test_control_and_utf8),  cmocka_unit_test(test_winner),
        cmocka_unit_test(test_empty_team),        cmocka_unit_test(test_duplicates),
        cmocka_unit_test(test_times),             cmocka_unit_test(test_joined_left),
        cmocka_unit_test(test_started_ended),     cmocka_unit_test(test_players_max),
        cmocka_unit_test(test_free_null_and_partial), cmocka_unit_test(test_member_weight),
        cmocka_unit_test(test_drop_times),       cmocka_unit_test(test_pool_name_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
