/* The client's state file (src/client/state.c) and the decoders of the service's answers
 * (src/client/answers.c): round trips, the ring's overflow, and malformed input refused whole
 * with the line named. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "client/client_internal.h"

static void push(eo__client_state *st, const char *id, char **gone)
{
    char text[256];
    snprintf(text, sizeof text, "{\"id\":\"%s\",\"winner\":\"A\",\"A\":[\"a\"],\"B\":[\"b\"]}",
             id);
    char *i = strdup(id), *t = strdup(text);
    assert_int_equal(eo__client_state_push(st, i, t, gone), 0);
}

/* A ring of 3 slots takes 5 reports: the oldest two go, in order, and are counted. */
static void test_ring_overflow(void **state)
{
    (void)state;
    eo__client_state st;
    assert_int_equal(eo__client_state_init(&st, 3, 1700000000), 0);
    char *gone = NULL;
    const char *ids[] = {"s:1:1", "s:1:2", "s:1:3", "s:1:4", "s:1:5"};
    for (int i = 0; i < 5; i++) {
        push(&st, ids[i], &gone);
        if (i < 3) {
            assert_null(gone);
        } else {
            assert_string_equal(gone, ids[i - 3]);
            free(gone);
        }
    }
    assert_int_equal(st.count, 3);
    assert_int_equal(st.dropped, 2);
    for (int i = 0; i < 3; i++)
        assert_string_equal(eo__client_state_at(&st, (size_t)i)->id, ids[i + 2]);
    eo__client_state_pop(&st);
    assert_string_equal(eo__client_state_at(&st, 0)->id, "s:1:4");
    eo__client_state_free(&st);
    eo__client_state_free(NULL);
}

/* format then parse gives the same state; a smaller ring keeps the newest and counts the rest
 * as dropped. */
static void test_round_trip(void **state)
{
    (void)state;
    eo__client_state st;
    assert_int_equal(eo__client_state_init(&st, 8, 1763800000), 0);
    st.next_seq = 42;
    st.dropped = 7;
    char *gone;
    push(&st, "srv:1763800000:39", &gone);
    push(&st, "srv:1763800000:40", &gone);
    push(&st, "srv:1763800000:41", &gone);
    char *text;
    size_t len;
    assert_int_equal(eo__client_state_format(&st, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    assert_non_null(strstr(text, "evenodds-client-state 1\nepoch 1763800000\nnext 42\n"
                                 "dropped 7\nreport srv:1763800000:39 {"));
    eo__client_state back;
    char err[128] = "";
    assert_int_equal(eo__client_state_parse(text, len, 8, &back, err, sizeof err), 0);
    assert_int_equal(back.epoch, 1763800000);
    assert_int_equal(back.next_seq, 42);
    assert_int_equal(back.dropped, 7);
    assert_int_equal(back.count, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(eo__client_state_at(&back, i)->id, eo__client_state_at(&st, i)->id);
        assert_string_equal(eo__client_state_at(&back, i)->text,
                            eo__client_state_at(&st, i)->text);
    }
    eo__client_state_free(&back);
    assert_int_equal(eo__client_state_parse(text, len, 2, &back, err, sizeof err), 0);
    assert_int_equal(back.count, 2);
    assert_int_equal(back.dropped, 8);
    assert_int_equal(back.overflow, 1);
    assert_string_equal(eo__client_state_at(&back, 0)->id, "srv:1763800000:40");
    eo__client_state_free(&back);
    free(text);
    eo__client_state_free(&st);
}

/* Every malformed file is refused with the line named; nothing is left allocated. */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        const char *err;
    } cases[] = {
        {"", "line 1: missing header lines"},
        {"evenodds-client-state 2\n", "line 1: not an evenodds client state file"},
        {"evenodds-client-state 1", "line 1: missing end of line (truncated file)"},
        {"evenodds-client-state 1\nepoch x\n", "line 2: expected \"epoch N\""},
        {"evenodds-client-state 1\nepoch -5\n", "line 2: expected \"epoch N\""},
        {"evenodds-client-state 1\nepoch 99999999999999999999\n", "line 2: expected \"epoch N\""},
        {"evenodds-client-state 1\nepoch 1\nnext 0\n", "line 3: expected \"next N\" with N >= 1"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\n", "line 4: missing header lines"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 1 \n", "line 4: expected \"dropped N\""},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreprt a {}\n",
         "line 5: expected \"report ID TEXT\""},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a\n",
         "line 5: report without text"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a {\"id\":\"b\"}\n",
         "line 5: report text is not a round record with its id"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a {\"id\":\"a\"\n",
         "line 5: report text is not a round record with its id"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a [\"a\"]\n",
         "line 5: report text is not a round record with its id"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a {\"id\":\"a\",\"id\":\"a\"}\n",
         "line 5: report text is not a round record with its id"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport \x01 {\"id\":\"\x01\"}\n",
         "line 5: invalid report id"},
        {"evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a {\"id\":\"a\"}",
         "line 5: missing end of line (truncated file)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eo__client_state st;
        char err[128] = "";
        int rc = eo__client_state_parse(cases[i].text, strlen(cases[i].text), 8, &st, err,
                                        sizeof err);
        if (rc != EO_EPARSE || strcmp(err, cases[i].err) != 0)
            fail_msg("case %zu: rc %d, \"%s\" (want \"%s\")", i, rc, err, cases[i].err);
        assert_null(st.ring);
    }
    /* A NUL inside a line. */
    const char nul[] = "evenodds-client-state 1\nepoch 1\nnext 1\ndropped 0\nreport a {\"id\":\"a\"}\0\n";
    eo__client_state st;
    char err[128];
    assert_int_equal(eo__client_state_parse(nul, sizeof nul - 1, 8, &st, err, sizeof err),
                     EO_EPARSE);
    assert_string_equal(err, "line 5: NUL byte");
}

/* The atomic write: the file holds the text, no temporary file is left; reads back; a missing
 * folder is EO_EIO naming the path. */
static void test_file_io(void **state)
{
    (void)state;
    char dir[] = "/tmp/eo_state_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128], tmp[140];
    snprintf(path, sizeof path, "%s/s.state", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    char err[256] = "";
    assert_int_equal(eo__client_file_write(path, "abc\n", 4, err, sizeof err), 0);
    assert_int_equal(eo__client_file_write(path, "hello\n", 6, err, sizeof err), 0);
    assert_int_not_equal(access(tmp, F_OK), 0);
    char *text;
    size_t len;
    assert_int_equal(eo__client_file_read(path, 100, &text, &len, err, sizeof err), 0);
    assert_int_equal(len, 6);
    assert_string_equal(text, "hello\n");
    free(text);
    assert_int_equal(eo__client_file_read(path, 5, &text, &len, err, sizeof err), EO_ELIMIT);
    char missing[160];
    snprintf(missing, sizeof missing, "%s/none/s.state", dir);
    assert_int_equal(eo__client_file_read(missing, 100, &text, &len, err, sizeof err),
                     EO_ENOTFOUND);
    assert_int_equal(eo__client_file_write(missing, "x", 1, err, sizeof err), EO_EIO);
    assert_non_null(strstr(err, "none/s.state.tmp"));
    unlink(path);
    rmdir(dir);
}

/* What a round answer's callback saw. */
typedef struct got {
    int n;
    double mean[2], display[2];
} got;

static void each(void *ctx, const char *pid, const eo_client_rating *pr)
{
    got *g = ctx;
    (void)pid;
    if (g->n < 2) {
        g->mean[g->n] = pr->mean;
        g->display[g->n] = pr->display;
    }
    g->n++;
}

/* Lookups of every model's shape; malformed ones refused. */
static void test_parse_lookup(void **state)
{
    (void)state;
    char id[EO_ID_MAX + 1];
    eo_client_rating r;
    const char *synelo = "{\"id\":\"p1\",\"rating\":1234,\"display\":1234,\"division\":null,"
                         "\"rounds\":60,\"visible\":true,\"stale\":false}";
    assert_int_equal(eo__client_parse_lookup(synelo, strlen(synelo), id, &r), 0);
    assert_string_equal(id, "p1");
    assert_true(r.mean == 1234 && r.display == 1234 && r.rounds == 60 && r.visible &&
                !r.stale && !r.provisional);
    const char *ts = "{\"id\":\"p2\",\"mu\":27.5,\"sigma\":3.25,\"display\":17.75,\"rounds\":3,"
                     "\"visible\":false,\"stale\":true}";
    assert_int_equal(eo__client_parse_lookup(ts, strlen(ts), id, &r), 0);
    assert_true(r.mean == 27.5 && r.display == 17.75 && r.rounds == 3 && !r.visible && r.stale);
    /* A round answer's player: "rating" is the display, "mu" the mean; no "stale". */
    const char *ans = "{\"round\":\"s:1:1\",\"players\":[{\"id\":\"a\",\"rating\":990,\"delta\":-10,"
                      "\"expected\":0.5,\"k\":20,\"rounds\":1,\"visible\":false},{\"id\":\"b\","
                      "\"rating\":20.5,\"delta\":1,\"expected\":0.5,\"mu\":26,\"sigma\":8,"
                      "\"rounds\":1,\"visible\":false}]}";
    got g = {0};
    assert_int_equal(eo__client_parse_round_answer(ans, strlen(ans), each, &g), 0);
    assert_int_equal(g.n, 2);
    assert_true(g.mean[0] == 990 && g.display[0] == 990 && g.mean[1] == 26 &&
                g.display[1] == 20.5);
    static const char *bad[] = {
        "", "[]", "{", "{\"id\":\"p\"}",
        "{\"id\":\"p\",\"rating\":\"1\",\"rounds\":1,\"visible\":true}",
        "{\"id\":\"p\",\"rating\":1,\"rounds\":-1,\"visible\":true}",
        "{\"id\":\"p\",\"rating\":1,\"rounds\":1.5,\"visible\":true}",
        "{\"id\":\"p\",\"rating\":1,\"rounds\":1,\"visible\":1}",
        "{\"id\":\"p\",\"rating\":1,\"rounds\":1,\"visible\":true,\"stale\":\"no\"}",
        "{\"id\":\"\",\"rating\":1,\"rounds\":1,\"visible\":true}",
        "{\"id\":7,\"rating\":1,\"rounds\":1,\"visible\":true}",
        "{\"id\":\"p\",\"mu\":1,\"rounds\":1,\"visible\":true}", /* no display at all */
        "{\"id\":\"p\",\"id\":\"q\",\"rating\":1,\"rounds\":1,\"visible\":true}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (eo__client_parse_lookup(bad[i], strlen(bad[i]), id, &r) != EO_EPARSE)
            fail_msg("accepted %s", bad[i]);
    const char *bad_ans = "{\"round\":\"x\",\"players\":[{\"id\":\"a\"}]}";
    assert_int_equal(eo__client_parse_round_answer(bad_ans, strlen(bad_ans), each, &g),
                     EO_EPARSE);
}

/* Splits answers: teams copied in order; malformed ones refused whole. */
static void test_parse_splits(void **state)
{
    (void)state;
    const char *ok = "{\"splits\":[{\"k\":2,\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"d\"],\"bench\":[\"e\"],"
                     "\"gap\":0,\"p_a\":0.5},{\"k\":3,\"A\":[\"a\",\"b\",\"e\"],\"B\":[\"c\",\"d\","
                     "\"f\"],\"bench\":[],\"gap\":1,\"p_a\":0.5}]}";
    eo__splits s;
    assert_int_equal(eo__client_parse_splits(ok, strlen(ok), &s), 0);
    assert_int_equal(s.count, 2);
    assert_int_equal(s.s[0].k, 2);
    assert_string_equal(s.s[0].ids[0], "a");
    assert_string_equal(s.s[0].ids[3], "d");
    assert_int_equal(s.s[1].k, 3);
    assert_string_equal(s.s[1].ids[2], "e");
    assert_string_equal(s.s[1].ids[5], "f");
    eo__splits_free(&s);
    assert_int_equal(s.count, 0);
    const char *empty = "{\"splits\":[]}";
    assert_int_equal(eo__client_parse_splits(empty, strlen(empty), &s), 0);
    assert_int_equal(s.count, 0);
    static const char *bad[] = {
        "", "{}", "{\"splits\":{}}", "{\"splits\":[1]}",
        "{\"splits\":[{\"k\":1,\"A\":[\"a\"],\"B\":[\"b\"]}]}",
        "{\"splits\":[{\"k\":2,\"A\":[\"a\"],\"B\":[\"c\",\"d\"]}]}",
        "{\"splits\":[{\"k\":2,\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"a\"]}]}",
        "{\"splits\":[{\"k\":2,\"A\":[\"a\",2],\"B\":[\"c\",\"d\"]}]}",
        "{\"splits\":[{\"k\":2,\"A\":[\"a\",\"b\"]}]}",
        "{\"splits\":[{\"k\":\"2\",\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"d\"]}]}",
        "{\"splits\":[{\"k\":2,\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"d\"]},{\"k\":3}]}",
        "{\"splits\":[{\"k\":999,\"A\":[],\"B\":[]}]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (eo__client_parse_splits(bad[i], strlen(bad[i]), &s) != EO_EPARSE)
            fail_msg("accepted %s", bad[i]);
        assert_int_equal(s.count, 0);
        assert_null(s.s);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_overflow), cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_malformed),     cmocka_unit_test(test_file_io),
        cmocka_unit_test(test_parse_lookup),  cmocka_unit_test(test_parse_splits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
