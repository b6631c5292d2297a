/* The round tracker (eo_tracker.h).
 *
 * Every expected record is computed by hand from the rules the header states (segments summed
 * per team, the team with most time, ties to the last team, participation, joined/left in
 * seconds from round start). Rounds start at 1000 and last 100 s unless said otherwise, so a
 * share is seconds / 100 and every expected value is exact in binary or within 1e-12. A
 * randomized test then checks the record's invariants over 2,000 event sequences. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_tracker.h"

/* ---- helpers ---------------------------------------------------------------------------- */

#define OK(x) assert_int_equal((x), 0)

static eo_tracker *mk(void)
{
    eo_tracker *t = NULL;
    OK(eo_tracker_create(&t));
    assert_non_null(t);
    return t;
}

/* Connects @p id at @p now and puts him on @p team. */
static void put(eo_tracker *t, const char *id, eo_track_team team, double now)
{
    OK(eo_tracker_connect(t, id, now));
    OK(eo_tracker_set_team(t, id, team, now));
}

static void near_(double got, double want, const char *what, int line)
{
    if (!(fabs(got - want) <= 1e-12))
        fail_msg("line %d: %s = %.17g, want %.17g", line, what, got, want);
}

/* The member at @p index of team @p team (0 A, 1 B) is @p id with these numbers. */
static void member_(const eo_round *r, int team, size_t index, const char *id, double time,
                    double joined, double left, int line)
{
    if (index >= r->n[team])
        fail_msg("line %d: team %c has %zu members, want one at %zu", line, "AB"[team],
                 r->n[team], index);
    const eo_member *m = &r->team[team][index];
    if (strcmp(m->id, id) != 0)
        fail_msg("line %d: %c[%zu] is \"%s\", want \"%s\"", line, "AB"[team], index, m->id, id);
    assert_int_equal(m->has, EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT);
    near_(m->time, time, "time", line);
    near_(m->joined, joined, "joined", line);
    near_(m->left, left, "left", line);
}
#define MEMBER(r, team, i, id, time, joined, left) \
    member_((r), (team), (i), (id), (time), (joined), (left), __LINE__)

/* Ends the running round at @p now (A wins) and expects a valid record. */
static void end_ok(eo_tracker *t, double now, eo_round *r)
{
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_tracker_round_end(t, now, EO_WIN_A, "srv:1", NULL, NULL, NULL, r, &err);
    if (rc != 0)
        fail_msg("round_end: %d at %s: %s", rc, err.field, err.message);
    assert_false(eo_tracker_round_running(t));
    OK(eo_round_validate(r, NULL));
}

/* Ends the running round expecting EO_EINVAL at @p field; the round is over and out empty. */
static void end_bad(eo_tracker *t, double now, const char *field, const char *frag)
{
    eo_round r;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_tracker_round_end(t, now, EO_WIN_B, "srv:1", NULL, NULL, NULL, &r, &err),
                     EO_EINVAL);
    assert_string_equal(err.field, field);
    if (strstr(err.message, frag) == NULL)
        fail_msg("message \"%s\" lacks \"%s\"", err.message, frag);
    assert_null(r.id);
    assert_null(r.team[0]);
    assert_null(r.team[1]);
    assert_false(eo_tracker_round_running(t));
    eo_round_free(&r);
}

static bool has_member(const eo_round *r, const char *id)
{
    for (int s = 0; s < 2; s++)
        for (size_t i = 0; i < r->n[s]; i++)
            if (strcmp(r->team[s][i].id, id) == 0)
                return true;
    return false;
}

/* ---- lifecycle and arguments ------------------------------------------------------------ */

static void test_create_destroy(void **state)
{
    (void)state;
    eo_tracker_destroy(NULL);
    assert_int_equal(eo_tracker_create(NULL), EO_EINVAL);
    eo_tracker *t = mk();
    assert_false(eo_tracker_round_running(t));
    assert_false(eo_tracker_round_running(NULL));
    assert_int_equal(eo_tracker_count(t), 0);
    assert_int_equal(eo_tracker_count(NULL), 0);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_NONE), 0);
    eo_track_player p;
    assert_int_equal(eo_tracker_player_at(t, 0, &p), EO_ERANGE);
    assert_int_equal(eo_tracker_connect(NULL, "a", 1.0), EO_EINVAL);
    assert_int_equal(eo_tracker_connect(t, "a", NAN), EO_EINVAL);
    assert_int_equal(eo_tracker_connect(t, "a", INFINITY), EO_EINVAL);
    assert_int_equal(eo_tracker_round_start(NULL, 1.0), EO_EINVAL);
    assert_int_equal(eo_tracker_count(t), 0);
    eo_tracker_destroy(t);
}

static void test_bad_ids(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    char long_id[EO_ID_MAX + 2];
    memset(long_id, 'x', sizeof long_id);
    long_id[EO_ID_MAX + 1] = '\0'; /* 129 bytes */
    const char *bad[] = {"", long_id, "a\x01" "b", "tab\there", "del\x7f", "\xff\xfe", NULL};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(eo_tracker_connect(t, bad[i], 1.0), EO_EINVAL);
        assert_int_equal(eo_tracker_set_team(t, bad[i], EO_TRACK_A, 1.0), EO_EINVAL);
        assert_int_equal(eo_tracker_disconnect(t, bad[i], 1.0), EO_EINVAL);
        assert_int_equal(eo_tracker_participate(t, bad[i], EO_TRACK_DAMAGE_DEALT, 1.0), EO_EINVAL);
        assert_int_equal(eo_tracker_set_dead(t, bad[i], true), EO_EINVAL);
        assert_int_equal(eo_tracker_set_protected(t, bad[i], true), EO_EINVAL);
        assert_int_equal(eo_tracker_set_score(t, bad[i], 1), EO_EINVAL);
        assert_int_equal(eo_tracker_set_party(t, bad[i], "p"), EO_EINVAL);
        assert_int_equal(eo_tracker_player(t, bad[i], NULL), EO_EINVAL);
    }
    assert_int_equal(eo_tracker_count(t), 0);

    /* 128 bytes is the longest id. */
    long_id[EO_ID_MAX] = '\0';
    OK(eo_tracker_connect(t, long_id, 1.0));
    OK(eo_tracker_player(t, long_id, NULL));
    OK(eo_tracker_connect(t, "ünï", 1.0)); /* UTF-8 is fine */

    /* Bad team, bad event, bad party. */
    assert_int_equal(eo_tracker_set_team(t, "a", (eo_track_team)4, 1.0), EO_EINVAL);
    assert_int_equal(eo_tracker_set_team(t, "a", (eo_track_team)-1, 1.0), EO_EINVAL);
    assert_int_equal(eo_tracker_count(t), 2); /* "a" was not connected by the refused call */
    assert_int_equal(eo_tracker_participate(t, long_id, (eo_track_event)3, 1.0), EO_EINVAL);
    assert_int_equal(eo_tracker_set_party(t, long_id, ""), EO_EINVAL);
    assert_int_equal(eo_tracker_set_party(t, long_id, "p\n"), EO_EINVAL);

    /* Valid ids that are not connected. */
    assert_int_equal(eo_tracker_disconnect(t, "nobody", 1.0), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_participate(t, "nobody", EO_TRACK_HEALED, 1.0), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_set_dead(t, "nobody", true), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_set_protected(t, "nobody", true), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_set_score(t, "nobody", 3), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_set_party(t, "nobody", "p"), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_player(t, "nobody", NULL), EO_ENOTFOUND);
    eo_tracker_destroy(t);
}

static void test_round_start_end_errors(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a", EO_TRACK_A, 1000);
    put(t, "b", EO_TRACK_B, 1000);
    eo_round r;
    eo_round_error err;

    /* No round yet. */
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_tracker_round_end(t, 1100, EO_WIN_A, "r", NULL, NULL, NULL, &r, &err),
                     EO_EINVAL);
    assert_non_null(strstr(err.message, "no round"));

    OK(eo_tracker_round_start(t, 1000));
    assert_true(eo_tracker_round_running(t));
    assert_int_equal(eo_tracker_round_start(t, 1010), EO_EBUSY);
    assert_true(eo_tracker_round_running(t));

    /* Bad arguments are refused and change nothing: the round still runs. */
    struct {
        eo_winner w;
        const char *id, *server, *map, *mode, *field;
    } bad[] = {
        {EO_WIN_A, "", NULL, NULL, NULL, "id"},
        {EO_WIN_A, NULL, NULL, NULL, NULL, "id"},
        {EO_WIN_A, "r", "bad\x02", NULL, NULL, "server"},
        {EO_WIN_A, "r", NULL, "", NULL, "map"},
        {EO_WIN_A, "r", NULL, NULL, "m\x1f", "mode"},
        {(eo_winner)3, "r", NULL, NULL, NULL, "winner"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(eo_tracker_round_end(t, 1100, bad[i].w, bad[i].id, bad[i].server,
                                              bad[i].map, bad[i].mode, &r, &err),
                         EO_EINVAL);
        assert_string_equal(err.field, bad[i].field);
        assert_null(r.id);
        assert_true(eo_tracker_round_running(t));
    }
    assert_int_equal(eo_tracker_round_end(t, NAN, EO_WIN_A, "r", NULL, NULL, NULL, &r, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_tracker_round_end(t, 1100, EO_WIN_A, "r", NULL, NULL, NULL, NULL, NULL),
                     EO_EINVAL);
    assert_true(eo_tracker_round_running(t));

    /* A round of zero length rates nobody, and is over. */
    end_bad(t, 1000, "", "round has zero length");

    /* The next round ends normally, with server, map and mode copied. */
    OK(eo_tracker_round_start(t, 2000.75));
    memset(&err, 0, sizeof err);
    OK(eo_tracker_round_end(t, 2100.5, EO_DRAW, "srv:2", "srv", "ctf_2fort", "ctf", &r, &err));
    assert_string_equal(r.id, "srv:2");
    assert_string_equal(r.server, "srv");
    assert_string_equal(r.map, "ctf_2fort");
    assert_string_equal(r.mode, "ctf");
    assert_int_equal(r.winner, EO_DRAW);
    assert_int_equal(r.started_at, 2000); /* floors */
    assert_int_equal(r.ended_at, 2100);
    MEMBER(&r, 0, 0, "a", 1.0, 0.0, 99.75);
    MEMBER(&r, 1, 0, "b", 1.0, 0.0, 99.75);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

/* ---- rating rules ----------------------------------------------------------------------- */

/* Everyone present from start to end: time 1, joined 0, left the length; the record maps to
 * JSON and back unchanged. */
static void test_full_round(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 900);
    put(t, "b1", EO_TRACK_B, 910);
    put(t, "a2", EO_TRACK_A, 920);
    put(t, "b2", EO_TRACK_B, 930);
    OK(eo_tracker_set_party(t, "a1", "duo"));
    OK(eo_tracker_set_party(t, "a2", "duo"));
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "a1", EO_TRACK_DAMAGE_DEALT, 1010));
    eo_round r;
    eo_round_error err;
    OK(eo_tracker_round_end(t, 1100, EO_WIN_B, "srv:1", "srv", "pl_upward", "payload", &r, &err));
    OK(eo_round_validate(&r, NULL));
    assert_int_equal(r.winner, EO_WIN_B);
    assert_int_equal(r.started_at, 1000);
    assert_int_equal(r.ended_at, 1100);
    assert_int_equal(r.n[0], 2);
    assert_int_equal(r.n[1], 2);
    /* Present at the start: in connection order. */
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "a2", 1.0, 0.0, 100.0);
    MEMBER(&r, 1, 0, "b1", 1.0, 0.0, 100.0);
    MEMBER(&r, 1, 1, "b2", 1.0, 0.0, 100.0);
    assert_string_equal(r.team[0][0].party, "duo");
    assert_string_equal(r.team[0][1].party, "duo");
    assert_null(r.team[1][0].party);

    json_t *j = eo_round_to_json(&r);
    assert_non_null(j);
    eo_round back;
    OK(eo_round_from_json(j, &back, &err));
    json_decref(j);
    assert_string_equal(back.id, "srv:1");
    assert_string_equal(back.server, "srv");
    assert_string_equal(back.map, "pl_upward");
    assert_string_equal(back.mode, "payload");
    assert_int_equal(back.started_at, 1000);
    assert_int_equal(back.ended_at, 1100);
    assert_int_equal(back.winner, EO_WIN_B);
    for (int s = 0; s < 2; s++) {
        assert_int_equal(back.n[s], r.n[s]);
        for (size_t i = 0; i < r.n[s]; i++) {
            const eo_member *m = &r.team[s][i];
            MEMBER(&back, s, i, m->id, m->time, m->joined, m->left);
            if (m->party == NULL)
                assert_null(back.team[s][i].party);
            else
                assert_string_equal(back.team[s][i].party, m->party);
        }
    }
    eo_round_free(&back);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

static void test_mid_round_joiner(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    OK(eo_tracker_round_start(t, 1000));
    /* Connects at 1020 as spectator, joins B at 1025: 75 s of 100. */
    OK(eo_tracker_connect(t, "late", 1020));
    OK(eo_tracker_set_team(t, "late", EO_TRACK_B, 1025));
    /* set_team connects an unknown id first: joins A at 1080. */
    OK(eo_tracker_set_team(t, "later", EO_TRACK_A, 1080));
    eo_round r;
    end_ok(t, 1100, &r);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "later", 0.2, 80.0, 100.0);
    MEMBER(&r, 1, 0, "b1", 1.0, 0.0, 100.0);
    MEMBER(&r, 1, 1, "late", 0.75, 25.0, 100.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

static void test_disconnects(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "a2", EO_TRACK_A, 1000);
    put(t, "a3", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    OK(eo_tracker_round_start(t, 1000));
    /* a2 takes damage, then leaves at 1040: rated for 40 s. */
    OK(eo_tracker_participate(t, "a2", EO_TRACK_DAMAGE_TAKEN, 1030));
    OK(eo_tracker_disconnect(t, "a2", 1040));
    /* a3 leaves at 1050 without taking part: not rated. */
    OK(eo_tracker_disconnect(t, "a3", 1050));
    assert_int_equal(eo_tracker_count(t), 2);
    assert_int_equal(eo_tracker_player(t, "a2", NULL), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_disconnect(t, "a2", 1060), EO_ENOTFOUND);
    assert_int_equal(eo_tracker_participate(t, "a2", EO_TRACK_DAMAGE_DEALT, 1060), EO_ENOTFOUND);
    eo_round r;
    end_ok(t, 1100, &r);
    assert_int_equal(r.n[0], 2);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "a2", 0.4, 0.0, 40.0);
    assert_false(has_member(&r, "a3"));
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

/* Time before a disconnect still counts after a reconnect (seed 004). */
static void test_reconnect(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "back", EO_TRACK_A, 1000);
    put(t, "idle", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    OK(eo_tracker_round_start(t, 1000));
    /* Events in time order:
     * back: A 0..20 (took part), gone 20..50, spectator 50..60, A 60..100: 60 s.
     * idle: A 0..30 without taking part, gone, back at 70 as a spectator for good: his
     *       participation on NONE does not count, so he is not rated.
     * b1:   took part, left at 10, back at 90 as a spectator: 10 s.
     * b2:   B from 20: 80 s. */
    OK(eo_tracker_participate(t, "b1", EO_TRACK_HEALED, 1005));
    OK(eo_tracker_participate(t, "back", EO_TRACK_DAMAGE_DEALT, 1010));
    OK(eo_tracker_disconnect(t, "b1", 1010));
    OK(eo_tracker_disconnect(t, "back", 1020));
    put(t, "b2", EO_TRACK_B, 1020);
    OK(eo_tracker_disconnect(t, "idle", 1030));
    OK(eo_tracker_connect(t, "back", 1050));
    eo_track_player p;
    OK(eo_tracker_player(t, "back", &p));
    assert_int_equal(p.team, EO_TRACK_NONE);
    near_(p.team_since, 1050.0, "team_since", __LINE__);
    OK(eo_tracker_set_team(t, "back", EO_TRACK_A, 1060));
    OK(eo_tracker_connect(t, "idle", 1070));
    OK(eo_tracker_participate(t, "idle", EO_TRACK_HEALED, 1075));
    OK(eo_tracker_connect(t, "b1", 1090));
    eo_round r;
    end_ok(t, 1100, &r);
    assert_int_equal(r.n[0], 2);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "back", 0.6, 0.0, 100.0);
    assert_false(has_member(&r, "idle"));
    assert_int_equal(r.n[1], 2);
    MEMBER(&r, 1, 0, "b1", 0.1, 0.0, 10.0);
    MEMBER(&r, 1, 1, "b2", 0.8, 20.0, 100.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

static void test_team_switch(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    put(t, "to_b", EO_TRACK_A, 1000);   /* A 0..30, B 30..100: B, 70 s */
    put(t, "tie_b", EO_TRACK_A, 1000);  /* A 0..50, B 50..100: tie, last B */
    put(t, "tie_a", EO_TRACK_B, 1000);  /* B 0..50, A 50..100: tie, last A */
    put(t, "zigzag", EO_TRACK_A, 1000); /* A 0..20, B 20..60, A 60..100: A 60 s over 2 */
    put(t, "tie_gone", EO_TRACK_A, 1000); /* A 0..20, B 20..40, left: tie, last B */
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_set_team(t, "zigzag", EO_TRACK_B, 1020));
    OK(eo_tracker_set_team(t, "tie_gone", EO_TRACK_B, 1020));
    OK(eo_tracker_set_team(t, "to_b", EO_TRACK_B, 1030));
    OK(eo_tracker_participate(t, "tie_gone", EO_TRACK_DAMAGE_DEALT, 1030));
    OK(eo_tracker_disconnect(t, "tie_gone", 1040));
    OK(eo_tracker_set_team(t, "tie_b", EO_TRACK_B, 1050));
    OK(eo_tracker_set_team(t, "tie_a", EO_TRACK_A, 1050));
    OK(eo_tracker_set_team(t, "zigzag", EO_TRACK_A, 1060));
    /* Setting the team he is on changes nothing. */
    OK(eo_tracker_set_team(t, "zigzag", EO_TRACK_A, 1070));
    eo_round r;
    end_ok(t, 1100, &r);
    /* A in order of first joining A in the round: those at the start in connection order,
     * then tie_a (joined A at 50). */
    assert_int_equal(r.n[0], 3);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "zigzag", 0.6, 0.0, 100.0);
    MEMBER(&r, 0, 2, "tie_a", 0.5, 50.0, 100.0);
    /* B: b1 at the start, then by first joining B: tie_gone at 20 (zigzag, also at 20, is an A
     * member), to_b at 30, tie_b at 50. */
    assert_int_equal(r.n[1], 4);
    MEMBER(&r, 1, 0, "b1", 1.0, 0.0, 100.0);
    MEMBER(&r, 1, 1, "tie_gone", 0.2, 20.0, 40.0);
    MEMBER(&r, 1, 2, "to_b", 0.7, 30.0, 100.0);
    MEMBER(&r, 1, 3, "tie_b", 0.5, 50.0, 100.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

/* Going to spectator (NONE) closes the segment like leaving the team. */
static void test_spectator(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    put(t, "back", EO_TRACK_A, 1000); /* A 0..40, NONE 40..70, A 70..100, no damage: 70 s */
    put(t, "watch", EO_TRACK_A, 1000); /* A 0..40, then NONE to the end, no damage: not rated */
    put(t, "fought", EO_TRACK_B, 1000); /* B 0..40, took part, then NONE to the end: 40 s */
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "fought", EO_TRACK_DAMAGE_TAKEN, 1039));
    OK(eo_tracker_set_team(t, "back", EO_TRACK_NONE, 1040));
    OK(eo_tracker_set_team(t, "watch", EO_TRACK_NONE, 1040));
    OK(eo_tracker_set_team(t, "fought", EO_TRACK_NONE, 1040));
    OK(eo_tracker_set_team(t, "back", EO_TRACK_A, 1070));
    eo_round r;
    end_ok(t, 1100, &r);
    assert_int_equal(r.n[0], 2);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "back", 0.7, 0.0, 100.0);
    assert_false(has_member(&r, "watch"));
    assert_int_equal(r.n[1], 2);
    MEMBER(&r, 1, 0, "b1", 1.0, 0.0, 100.0);
    MEMBER(&r, 1, 1, "fought", 0.4, 0.0, 40.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

/* WAITING is not playing; participation counts only in a round and on A or B. */
static void test_waiting_and_participation(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 900);
    put(t, "b1", EO_TRACK_B, 900);
    put(t, "queue", EO_TRACK_WAITING, 900); /* waits the whole round, "takes part" */
    put(t, "called", EO_TRACK_WAITING, 900); /* waits, then A 50..100 */
    put(t, "early", EO_TRACK_A, 900);  /* took part before the round, spectator at 10 */
    put(t, "nonesh", EO_TRACK_NONE, 900); /* takes part on NONE, A 30..40, NONE again */
    put(t, "waitsh", EO_TRACK_WAITING, 900); /* takes part waiting, A 60..70, WAITING again */
    OK(eo_tracker_participate(t, "early", EO_TRACK_DAMAGE_DEALT, 950));
    OK(eo_tracker_participate(t, "queue", EO_TRACK_DAMAGE_DEALT, 950));
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "queue", EO_TRACK_DAMAGE_DEALT, 1005));
    OK(eo_tracker_set_team(t, "early", EO_TRACK_NONE, 1010));
    OK(eo_tracker_participate(t, "nonesh", EO_TRACK_HEALED, 1020));
    OK(eo_tracker_set_team(t, "nonesh", EO_TRACK_A, 1030));
    OK(eo_tracker_set_team(t, "nonesh", EO_TRACK_NONE, 1040));
    OK(eo_tracker_participate(t, "nonesh", EO_TRACK_HEALED, 1045));
    OK(eo_tracker_set_team(t, "called", EO_TRACK_A, 1050));
    OK(eo_tracker_participate(t, "waitsh", EO_TRACK_HEALED, 1055));
    OK(eo_tracker_set_team(t, "waitsh", EO_TRACK_A, 1060));
    OK(eo_tracker_set_team(t, "waitsh", EO_TRACK_WAITING, 1070));
    OK(eo_tracker_participate(t, "waitsh", EO_TRACK_HEALED, 1075));
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_WAITING), 2);
    eo_round r;
    end_ok(t, 1100, &r);
    assert_int_equal(r.n[0], 2);
    MEMBER(&r, 0, 0, "a1", 1.0, 0.0, 100.0);
    MEMBER(&r, 0, 1, "called", 0.5, 50.0, 100.0);
    assert_int_equal(r.n[1], 1);
    assert_false(has_member(&r, "queue"));
    assert_false(has_member(&r, "early"));
    assert_false(has_member(&r, "nonesh"));
    assert_false(has_member(&r, "waitsh"));
    eo_round_free(&r);

    /* Participation between rounds is not carried into the next one: "late" takes part after
     * the round ended and leaves the next one at 1210 without taking part. */
    put(t, "late", EO_TRACK_A, 1110);
    OK(eo_tracker_participate(t, "late", EO_TRACK_DAMAGE_DEALT, 1150));
    OK(eo_tracker_round_start(t, 1200));
    OK(eo_tracker_disconnect(t, "late", 1210));
    end_ok(t, 1300, &r);
    assert_false(has_member(&r, "late"));
    assert_int_equal(r.n[0], 2); /* a1 and called */
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

static void test_empty_team(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "a2", EO_TRACK_A, 1000);
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "a2", EO_TRACK_DAMAGE_DEALT, 1010));
    OK(eo_tracker_disconnect(t, "a2", 1020));
    end_bad(t, 1100, "B", "empty");
    /* The round ended all the same: a2, who left, is forgotten, and a new round can start. */
    assert_int_equal(eo_tracker_count(t), 1);
    OK(eo_tracker_connect(t, "a2", 1101));
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_A), 1);

    /* A's only player leaves without taking part: A is empty. */
    put(t, "b1", EO_TRACK_B, 1101);
    OK(eo_tracker_round_start(t, 1200));
    OK(eo_tracker_disconnect(t, "a1", 1250));
    end_bad(t, 1300, "A", "empty");

    /* A player who arrives on a team at the very end has no time there: not rated. */
    put(t, "a3", EO_TRACK_NONE, 1300);
    OK(eo_tracker_round_start(t, 1400));
    OK(eo_tracker_set_team(t, "a3", EO_TRACK_A, 1500));
    OK(eo_tracker_participate(t, "a3", EO_TRACK_DAMAGE_DEALT, 1500));
    end_bad(t, 1500, "A", "empty");
    eo_tracker_destroy(t);
}

/* A smaller time is taken as the last one seen. */
static void test_monotonic_time(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    put(t, "a2", EO_TRACK_A, 1000);
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_set_team(t, "b1", EO_TRACK_B, 1050)); /* no change, but the clock moves */
    OK(eo_tracker_participate(t, "a2", EO_TRACK_DAMAGE_DEALT, 1050));
    OK(eo_tracker_disconnect(t, "a2", 1040)); /* taken as 1050 */
    eo_round r;
    end_ok(t, 1100, &r);
    MEMBER(&r, 0, 1, "a2", 0.5, 0.0, 50.0);
    eo_round_free(&r);

    /* A round that starts "before" the last time starts at it, and ends at it: zero length. */
    OK(eo_tracker_round_start(t, 900));
    end_bad(t, 1099, "", "zero length");
    eo_tracker_destroy(t);
}

static void test_limit(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    char id[32];
    for (int i = 0; i < EO_TRACK_PLAYERS_MAX; i++) {
        snprintf(id, sizeof id, "p%d", i);
        OK(eo_tracker_set_team(t, id, i % 2 ? EO_TRACK_B : EO_TRACK_A, 1000));
    }
    assert_int_equal(eo_tracker_count(t), 256);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_A), 128);
    assert_int_equal(eo_tracker_connect(t, "extra", 1000), EO_ELIMIT);
    assert_int_equal(eo_tracker_set_team(t, "extra", EO_TRACK_A, 1000), EO_ELIMIT);
    OK(eo_tracker_connect(t, "p7", 1000)); /* already connected: nothing changes */
    assert_int_equal(eo_tracker_count(t), 256);

    /* During a round, those who leave are remembered in the same 256 slots. p0..p3 leave; p0
     * (10 s) and p1 (20 s) took part, p2 and p3 did not. Three newcomers need slots: the
     * non-participants go first, then the participant with the least time, p0 (a fourth would
     * take p1's slot). */
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "p0", EO_TRACK_DAMAGE_DEALT, 1005));
    OK(eo_tracker_participate(t, "p1", EO_TRACK_DAMAGE_DEALT, 1005));
    OK(eo_tracker_disconnect(t, "p0", 1010));
    OK(eo_tracker_disconnect(t, "p1", 1020));
    OK(eo_tracker_disconnect(t, "p2", 1030));
    OK(eo_tracker_disconnect(t, "p3", 1030));
    assert_int_equal(eo_tracker_count(t), 252);
    for (int i = 0; i < 3; i++) {
        snprintf(id, sizeof id, "new%d", i);
        OK(eo_tracker_connect(t, id, 1040));
    }
    assert_int_equal(eo_tracker_count(t), 255);
    eo_round r;
    end_ok(t, 1100, &r);
    /* p4..p255 on their teams (252) and p1 (B, 20 s). */
    assert_int_equal(r.n[0] + r.n[1], 253);
    assert_false(has_member(&r, "p0"));
    MEMBER(&r, 1, 0, "p1", 0.2, 0.0, 20.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

/* Outside a round a disconnect forgets at once; during one, at its end. */
static void test_forgotten_after_round(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    put(t, "a1", EO_TRACK_A, 1000);
    put(t, "b1", EO_TRACK_B, 1000);
    put(t, "gone", EO_TRACK_A, 1000);
    OK(eo_tracker_round_start(t, 1000));
    OK(eo_tracker_participate(t, "gone", EO_TRACK_DAMAGE_DEALT, 1010));
    OK(eo_tracker_disconnect(t, "gone", 1020));
    eo_round r;
    end_ok(t, 1100, &r);
    MEMBER(&r, 0, 1, "gone", 0.2, 0.0, 20.0);
    eo_round_free(&r);
    assert_int_equal(eo_tracker_count(t), 2);

    /* Next round: he comes back at 1150 with nothing carried over (A 50..100). */
    OK(eo_tracker_round_start(t, 1100));
    put(t, "gone", EO_TRACK_A, 1150);
    end_ok(t, 1200, &r);
    MEMBER(&r, 0, 1, "gone", 0.5, 50.0, 100.0);
    eo_round_free(&r);

    /* Between rounds a disconnect forgets him: back in a round later, he starts afresh. */
    OK(eo_tracker_disconnect(t, "gone", 1210));
    assert_int_equal(eo_tracker_player(t, "gone", NULL), EO_ENOTFOUND);
    OK(eo_tracker_round_start(t, 1300));
    OK(eo_tracker_set_team(t, "gone", EO_TRACK_B, 1375));
    end_ok(t, 1400, &r);
    MEMBER(&r, 1, 1, "gone", 0.25, 75.0, 100.0);
    eo_round_free(&r);
    eo_tracker_destroy(t);
}

static void test_roster(void **state)
{
    (void)state;
    eo_tracker *t = mk();
    OK(eo_tracker_connect(t, "x", 10));
    OK(eo_tracker_set_team(t, "y", EO_TRACK_A, 20));
    OK(eo_tracker_set_team(t, "z", EO_TRACK_B, 30));
    OK(eo_tracker_set_team(t, "w", EO_TRACK_WAITING, 40));
    assert_int_equal(eo_tracker_count(t), 4);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_NONE), 1);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_A), 1);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_B), 1);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_WAITING), 1);
    assert_int_equal(eo_tracker_count_team(t, (eo_track_team)9), 0);

    OK(eo_tracker_set_party(t, "y", "squad"));
    OK(eo_tracker_set_dead(t, "y", true));
    OK(eo_tracker_set_protected(t, "y", true));
    OK(eo_tracker_set_score(t, "y", -7));
    eo_track_player p;
    OK(eo_tracker_player(t, "y", &p));
    assert_string_equal(p.id, "y");
    assert_int_equal(p.team, EO_TRACK_A);
    near_(p.team_since, 20.0, "team_since", __LINE__);
    assert_string_equal(p.party, "squad");
    assert_true(p.dead);
    assert_true(p.is_protected);
    assert_true(p.has_score);
    assert_int_equal(p.score, -7);

    /* Same team: nothing is reset. */
    OK(eo_tracker_set_team(t, "y", EO_TRACK_A, 50));
    OK(eo_tracker_player(t, "y", &p));
    assert_true(p.dead && p.is_protected && p.has_score);
    near_(p.team_since, 20.0, "team_since", __LINE__);
    /* A new team resets dead, protected and score, not the party. */
    OK(eo_tracker_set_team(t, "y", EO_TRACK_B, 60));
    OK(eo_tracker_player(t, "y", &p));
    assert_int_equal(p.team, EO_TRACK_B);
    near_(p.team_since, 60.0, "team_since", __LINE__);
    assert_false(p.dead);
    assert_false(p.is_protected);
    assert_false(p.has_score);
    assert_int_equal(p.score, 0);
    assert_string_equal(p.party, "squad");
    OK(eo_tracker_set_party(t, "y", NULL));
    OK(eo_tracker_player(t, "y", &p));
    assert_null(p.party);

    /* Connection order; a reconnect is a new connection, so it goes last. */
    const char *order1[] = {"x", "y", "z", "w"};
    for (size_t i = 0; i < 4; i++) {
        OK(eo_tracker_player_at(t, i, &p));
        assert_string_equal(p.id, order1[i]);
    }
    assert_int_equal(eo_tracker_player_at(t, 4, &p), EO_ERANGE);
    OK(eo_tracker_disconnect(t, "x", 70));
    assert_int_equal(eo_tracker_count(t), 3);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_NONE), 0);
    OK(eo_tracker_connect(t, "x", 80));
    const char *order2[] = {"y", "z", "w", "x"};
    for (size_t i = 0; i < 4; i++) {
        OK(eo_tracker_player_at(t, i, &p));
        assert_string_equal(p.id, order2[i]);
    }
    OK(eo_tracker_player_at(t, 3, &p));
    assert_int_equal(p.team, EO_TRACK_NONE);
    near_(p.team_since, 80.0, "team_since", __LINE__);
    assert_null(p.party);
    assert_false(p.has_score);

    /* Players who left during a round are not in the roster. */
    OK(eo_tracker_round_start(t, 100));
    OK(eo_tracker_participate(t, "z", EO_TRACK_DAMAGE_DEALT, 110));
    OK(eo_tracker_disconnect(t, "z", 120));
    assert_int_equal(eo_tracker_count(t), 3);
    assert_int_equal(eo_tracker_count_team(t, EO_TRACK_B), 1);
    for (size_t i = 0; i < 3; i++) {
        OK(eo_tracker_player_at(t, i, &p));
        assert_string_not_equal(p.id, "z");
    }
    assert_int_equal(eo_tracker_player_at(t, 3, &p), EO_ERANGE);
    assert_int_equal(eo_tracker_set_dead(t, "z", true), EO_ENOTFOUND);
    eo_tracker_destroy(t);
}

/* ---- randomized invariants -------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static unsigned below(uint64_t *s, unsigned n)
{
    return (unsigned)(splitmix64(s) % n);
}

#define PROP_IDS 40

/* What the test knows without the tracker's rules: who is connected, where, and who was on a
 * playing team during the running round. */
typedef struct model {
    bool connected[PROP_IDS];
    eo_track_team team[PROP_IDS];
    bool played[PROP_IDS];
    bool running;
    double start;
} model;

/* The index k of the id "q<k>", or -1. */
static int id_index(const char *id)
{
    if (id[0] != 'q')
        return -1;
    char *end;
    long v = strtol(id + 1, &end, 10);
    return *end == '\0' && v >= 0 && v < PROP_IDS ? (int)v : -1;
}

static void check_record(const eo_round *r, const model *m, double len, int seq)
{
    if (eo_round_validate(r, NULL) != 0)
        fail_msg("sequence %d: record does not validate", seq);
    bool seen[PROP_IDS] = {false};
    for (int s = 0; s < 2; s++) {
        assert_true(r->n[s] >= 1);
        for (size_t i = 0; i < r->n[s]; i++) {
            const eo_member *x = &r->team[s][i];
            int k = id_index(x->id);
            assert_true(k >= 0);
            assert_false(seen[k]); /* no id twice */
            seen[k] = true;
            assert_true(m->played[k]);
            assert_int_equal(x->has, EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT);
            assert_true(x->time >= 0.0 && x->time <= 1.0);
            assert_true(x->joined >= 0.0);
            assert_true(x->joined <= x->left);
            assert_true(x->left <= len);
            /* His time on the team lies within [joined, left], so never more than the round. */
            assert_true(x->time * len <= x->left - x->joined + 1e-9 * len);
            assert_true(x->time * len <= len * (1 + 1e-12));
            assert_true(x->time > 0.0);
        }
    }
}

static void model_round_start(model *m, double now)
{
    m->running = true;
    m->start = now;
    for (int k = 0; k < PROP_IDS; k++)
        m->played[k] = m->connected[k] && (m->team[k] == EO_TRACK_A || m->team[k] == EO_TRACK_B);
}

static void check_roster(const eo_tracker *t, const model *m)
{
    size_t n = 0, per[4] = {0, 0, 0, 0};
    for (int k = 0; k < PROP_IDS; k++)
        if (m->connected[k]) {
            n++;
            per[m->team[k]]++;
        }
    assert_int_equal(eo_tracker_count(t), n);
    for (int team = 0; team < 4; team++)
        assert_int_equal(eo_tracker_count_team(t, (eo_track_team)team), per[team]);
    assert_int_equal(eo_tracker_round_running(t), m->running);
}

/* 2,000 random sequences of events (seeded splitmix64): return codes follow the roster, and
 * every record built passes validation with times, joined and left within the round. */
static void test_random_sequences(void **state)
{
    (void)state;
    uint64_t seed = 0x7a3c9e1d5b2f4086u;
    int built = 0, refused = 0;
    for (int seq = 0; seq < 2000; seq++) {
        eo_tracker *t = mk();
        model m;
        memset(&m, 0, sizeof m);
        unsigned nids = 2 + below(&seed, PROP_IDS - 1);
        double now = 1000.0 + below(&seed, 1000);
        unsigned steps = 50 + below(&seed, 250);
        for (unsigned step = 0; step < steps; step++) {
            switch (below(&seed, 4)) {
            case 0: /* same time: zero-length segments */
                break;
            case 1:
                now += 1.0;
                break;
            case 2:
                now += below(&seed, 30) + 0.25 * below(&seed, 4);
                break;
            default:
                now += (double)(splitmix64(&seed) >> 11) * 0x1p-53 * 10.0;
                break;
            }
            unsigned k = below(&seed, nids);
            char id[16];
            snprintf(id, sizeof id, "q%u", k);
            unsigned op = below(&seed, 100);
            int rc;
            if (op < 10) {
                OK(eo_tracker_connect(t, id, now));
                if (!m.connected[k])
                    m.team[k] = EO_TRACK_NONE;
                m.connected[k] = true;
            } else if (op < 18) {
                rc = eo_tracker_disconnect(t, id, now);
                assert_int_equal(rc, m.connected[k] ? 0 : EO_ENOTFOUND);
                m.connected[k] = false;
            } else if (op < 45) {
                eo_track_team team = (eo_track_team)below(&seed, 4);
                OK(eo_tracker_set_team(t, id, team, now));
                if (!m.connected[k] || m.team[k] != team)
                    m.team[k] = team;
                m.connected[k] = true;
                if (m.running && (team == EO_TRACK_A || team == EO_TRACK_B))
                    m.played[k] = true;
            } else if (op < 85) {
                rc = eo_tracker_participate(t, id, (eo_track_event)below(&seed, 3), now);
                assert_int_equal(rc, m.connected[k] ? 0 : EO_ENOTFOUND);
            } else if (op < 90) {
                int want = m.connected[k] ? 0 : EO_ENOTFOUND;
                assert_int_equal(eo_tracker_set_dead(t, id, below(&seed, 2)), want);
                assert_int_equal(eo_tracker_set_score(t, id, (int64_t)below(&seed, 50)), want);
                assert_int_equal(eo_tracker_set_party(t, id, below(&seed, 2) ? "p" : NULL), want);
            } else if (op < 95) {
                rc = eo_tracker_round_start(t, now);
                assert_int_equal(rc, m.running ? EO_EBUSY : 0);
                if (rc == 0)
                    model_round_start(&m, now);
            } else {
                eo_round r;
                rc = eo_tracker_round_end(t, now, EO_WIN_A, "srv:r", NULL, NULL, NULL, &r, NULL);
                if (!m.running) {
                    assert_int_equal(rc, EO_EINVAL);
                } else if (rc == 0) {
                    check_record(&r, &m, now - m.start, seq);
                    built++;
                } else {
                    assert_int_equal(rc, EO_EINVAL);
                    assert_null(r.team[0]);
                    assert_null(r.team[1]);
                    refused++;
                }
                eo_round_free(&r);
                m.running = false;
            }
            check_roster(t, &m);
        }
        eo_tracker_destroy(t);
    }
    /* The generator reaches both outcomes often. */
    assert_true(built > 1000);
    assert_true(refused > 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_create_destroy),
        cmocka_unit_test(test_bad_ids),
        cmocka_unit_test(test_round_start_end_errors),
        cmocka_unit_test(test_full_round),
        cmocka_unit_test(test_mid_round_joiner),
        cmocka_unit_test(test_disconnects),
        cmocka_unit_test(test_reconnect),
        cmocka_unit_test(test_team_switch),
        cmocka_unit_test(test_spectator),
        cmocka_unit_test(test_waiting_and_participation),
        cmocka_unit_test(test_empty_team),
        cmocka_unit_test(test_monotonic_time),
        cmocka_unit_test(test_limit),
        cmocka_unit_test(test_forgotten_after_round),
        cmocka_unit_test(test_roster),
        cmocka_unit_test(test_random_sequences),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
