/* libevenodds-client without a service (src/client/client.c): configuration errors, a corrupt
 * state file moved aside, provisional ratings, round ids, joiner placement and autobalance
 * moves decided locally. The service is "http://127.0.0.1:1", where nothing listens. The
 * end-to-end cases with the real service are in tests/e2e/test_client.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "evenodds/eo_client.h"

typedef struct ctx {
    char dir[64];
    char state[128];
    char log[8192];
} ctx;

static void on_log(void *p, eo_client_log_level lvl, const char *msg)
{
    ctx *x = p;
    size_t used = strlen(x->log);
    snprintf(x->log + used, sizeof x->log - used, "%d %s\n", (int)lvl, msg);
}

static void setup_ctx(ctx *x, eo_client_config *cfg)
{
    memset(x, 0, sizeof *x);
    snprintf(x->dir, sizeof x->dir, "/tmp/eo_client_XXXXXX");
    assert_non_null(mkdtemp(x->dir));
    snprintf(x->state, sizeof x->state, "%s/c.state", x->dir);
    eo_client_config_init(cfg);
    cfg->url = "http://127.0.0.1:1";
    cfg->server_id = "srv";
    cfg->key = "0123456789abcdef0123";
    cfg->state_file = x->state;
    cfg->connect_timeout_ms = 200;
    cfg->retry_min_ms = 10;
    cfg->retry_max_ms = 50;
    cfg->log = on_log;
    cfg->log_ctx = x;
}

static void cleanup_ctx(ctx *x)
{
    DIR *d = opendir(x->dir);
    assert_non_null(d);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char p[400];
        snprintf(p, sizeof p, "%s/%s", x->dir, e->d_name);
        unlink(p);
    }
    closedir(d);
    rmdir(x->dir);
}

/* Every bad configuration is refused with the field named; nothing is created. */
static void test_config_errors(void **state)
{
    (void)state;
    ctx x;
    eo_client_config good;
    setup_ctx(&x, &good);
    static const struct {
        int field; /* which change */
        const char *want;
    } cases[] = {
        {0, "url:"}, {1, "url:"}, {2, "pool:"}, {3, "server_id:"}, {4, "server_id:"},
        {5, "key:"}, {6, "key:"}, {7, "state_file:"}, {8, "queue_slots:"}, {9, "queue_slots:"},
        {10, "retry_min_ms/retry_max_ms:"}, {11, "start_rating/rating_scale:"},
        {12, "timeouts:"}, {13, "map:"}, {14, "trigger_mode:"}, {15, "server_id:"},
        {16, "team_size_max:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        eo_client_config cfg = good;
        switch (cases[i].field) {
        case 0: cfg.url = NULL; break;
        case 1: cfg.url = "ftp://x"; break;
        case 2: cfg.pool = ""; break;
        case 3: cfg.server_id = NULL; break;
        case 4: cfg.server_id = "a:b"; break;
        case 5: cfg.key = "short"; break;
        case 6: cfg.key = "0123456789abcdef 0123"; break;
        case 7: cfg.state_file = NULL; break;
        case 8: cfg.queue_slots = 0; break;
        case 9: cfg.queue_slots = 1025; break;
        case 10: cfg.retry_max_ms = 1; break;
        case 11: cfg.rating_scale = 0; break;
        case 12: cfg.request_timeout_ms = 0; break;
        case 13: cfg.map = "bad\nmap"; break;
        case 14: cfg.trigger_mode = EO_TRIGGER_MODE_COUNT; break;
        case 15: cfg.server_id = "EU 1"; break; /* a space would split the state file's lines */
        case 16: cfg.team_size_max = -1; break;
        }
        eo_client *c = (eo_client *)&cfg; /* must be reset to NULL */
        char err[256] = "";
        assert_int_equal(eo_client_create(&cfg, &c, err, sizeof err), EO_EINVAL);
        assert_null(c);
        if (strncmp(err, cases[i].want, strlen(cases[i].want)) != 0)
            fail_msg("case %zu: \"%s\"", i, err);
    }
    assert_int_not_equal(access(x.state, F_OK), 0); /* nothing written */
    /* A state file whose folder does not exist. */
    eo_client_config cfg = good;
    cfg.state_file = "/nonexistent-dir/c.state";
    eo_client *c = NULL;
    char err[256] = "";
    assert_int_equal(eo_client_create(&cfg, &c, err, sizeof err), EO_EIO);
    assert_non_null(strstr(err, "/nonexistent-dir/c.state"));
    cleanup_ctx(&x);
}

static int drain(eo_client *c, double now, eo_client_event *evs, int cap)
{
    int n = 0;
    eo_client_event ev;
    while (eo_client_poll(c, now, &ev) == 1)
        if (n < cap)
            evs[n++] = ev;
    return n;
}

/* A state file that cannot be read back is moved aside, byte for byte, and logged; a new one
 * starts. */
static void test_corrupt_state_moved_aside(void **state)
{
    (void)state;
    ctx x;
    eo_client_config cfg;
    setup_ctx(&x, &cfg);
    const char junk[] = "evenodds-client-state 1\nepoch 1\nnext 9\ndropped 0\nreport a {bad\n";
    FILE *f = fopen(x.state, "w");
    assert_non_null(f);
    fputs(junk, f);
    fclose(f);
    eo_client *c = NULL;
    char err[256] = "";
    assert_int_equal(eo_client_create(&cfg, &c, err, sizeof err), 0);
    eo_client_event evs[4];
    drain(c, 0, evs, 4);
    assert_non_null(strstr(x.log, "line 5: report text is not a round record with its id"));
    const char *aside = strstr(x.log, "moved to ");
    assert_non_null(aside);
    char path[256];
    assert_int_equal(sscanf(aside + 9, "%255[^,]", path), 1);
    f = fopen(path, "r");
    assert_non_null(f);
    char back[256] = "";
    size_t n = fread(back, 1, sizeof back - 1, f);
    fclose(f);
    assert_int_equal(n, strlen(junk));
    assert_string_equal(back, junk);
    eo_client_stats st;
    eo_client_get_stats(c, &st);
    assert_int_equal(st.next_seq, 1);
    assert_int_equal(st.queued, 0);
    eo_client_destroy(c);
    eo_client_destroy(NULL);
    cleanup_ctx(&x);
}

static void seat(eo_client *c, const char *const *ids, int n, eo_track_team team, double now)
{
    for (int i = 0; i < n; i++) {
        assert_int_equal(eo_client_player_connect(c, ids[i], now), 0);
        assert_int_equal(eo_client_player_team(c, ids[i], team, now), 0);
    }
}

/* Unreachable service: provisional start ratings; reports queue with consecutive ids; a round
 * with nobody rated on one side is not reported and takes no sequence number. */
static void test_offline_rounds(void **state)
{
    (void)state;
    ctx x;
    eo_client_config cfg;
    setup_ctx(&x, &cfg);
    cfg.start_rating = 1500;
    cfg.autobalance.enabled = false;
    eo_client *c = NULL;
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    const char *a[] = {"a1", "a2"}, *b[] = {"b1", "b2"};
    seat(c, a, 2, EO_TRACK_A, 100);
    seat(c, b, 2, EO_TRACK_B, 100);
    eo_client_rating r;
    assert_int_equal(eo_client_rating_of(c, "a1", &r), 0);
    assert_true(r.provisional && r.mean == 1500 && r.display == 1500 && !r.visible &&
                r.rounds == 0);
    assert_int_equal(eo_client_rating_of(c, "bad\x01", &r), EO_EINVAL);
    char id1[EO_ID_MAX + 1], id2[EO_ID_MAX + 1];
    assert_int_equal(eo_client_round_end(c, EO_WIN_A, NULL, 200, id1, sizeof id1), EO_EINVAL);
    assert_int_equal(eo_client_round_start(c, 200), 0);
    assert_int_equal(eo_client_round_start(c, 201), EO_EBUSY);
    assert_int_equal(eo_client_round_end(c, EO_WIN_A, NULL, 500, id1, sizeof id1), 0);
    assert_int_equal(eo_client_round_start(c, 520), 0);
    assert_int_equal(eo_client_round_end(c, EO_DRAW, NULL, 820, id2, sizeof id2), 0);
    eo_client_stats st;
    eo_client_get_stats(c, &st);
    char want[64];
    const char *epoch = strchr(id1, ':') + 1;
    snprintf(want, sizeof want, "srv:%.*s:2", (int)(strchr(epoch, ':') - epoch), epoch);
    assert_string_equal(id2, want);
    assert_int_equal(strcmp(id1 + strlen(id1) - 2, ":1"), 0);
    assert_int_equal(st.next_seq, 3);
    assert_int_equal(st.reports_made, 2);
    /* Team B disconnects without taking part: nobody rated on B, nothing reported. */
    assert_int_equal(eo_client_round_start(c, 900), 0);
    assert_int_equal(eo_client_player_disconnect(c, "b1", 910), 0);
    assert_int_equal(eo_client_player_disconnect(c, "b2", 910), 0);
    assert_int_equal(eo_client_round_end(c, EO_WIN_A, NULL, 1200, NULL, 0), EO_EINVAL);
    eo_client_get_stats(c, &st);
    assert_int_equal(st.next_seq, 3);
    assert_int_equal(st.reports_made, 2);
    eo_client_event evs[8];
    drain(c, 1300, evs, 8);
    assert_non_null(strstr(x.log, "round not reported: B:"));
    eo_client_destroy(c);
    cleanup_ctx(&x);
}

/* Joiners go where sizes and then sums are fairest; a 6v2 mid-round triggers two moves from A
 * to B (seed 000 F11), decided locally while the service is unreachable. */
static void test_place_and_autobalance(void **state)
{
    (void)state;
    ctx x;
    eo_client_config cfg;
    setup_ctx(&x, &cfg);
    cfg.autobalance.delay = 0;
    eo_client *c = NULL;
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    const char *a[] = {"a1", "a2", "a3"}, *b[] = {"b1", "b2"};
    seat(c, a, 3, EO_TRACK_A, 100);
    seat(c, b, 2, EO_TRACK_B, 100);
    eo_track_team t;
    assert_int_equal(eo_client_place_joiner(c, "j1", &t), 0);
    assert_int_equal(t, EO_TRACK_B);
    const char *more[] = {"a4", "a5", "a6"};
    seat(c, more, 3, EO_TRACK_A, 100);
    assert_int_equal(eo_client_round_start(c, 100), 0);
    eo_client_event evs[16];
    int n = drain(c, 101, evs, 16);
    int moves = 0;
    for (int i = 0; i < n; i++) {
        if (evs[i].type != EO_CLIENT_EV_MOVE)
            continue;
        moves++;
        assert_int_equal(evs[i].to, EO_TRACK_B);
        assert_string_equal(evs[i].rule, "size_gap");
        assert_string_equal(evs[i].reason, "size_gap");
        assert_int_equal(evs[i].id[0], 'a');
        assert_int_equal(eo_client_player_team(c, evs[i].id, evs[i].to, 102), 0);
    }
    assert_int_equal(moves, 2);
    /* 4v4 now: no more moves, however often it is asked. */
    for (double now = 103; now < 110; now += 1) {
        n = drain(c, now, evs, 16);
        for (int i = 0; i < n; i++)
            assert_int_not_equal(evs[i].type, EO_CLIENT_EV_MOVE);
    }
    assert_int_equal(eo_client_round_end(c, EO_WIN_B, NULL, 400, NULL, 0), 0);
    /* With autobalance off the game decides. */
    eo_client_destroy(c);
    cfg.autobalance.enabled = false;
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    assert_int_equal(eo_client_place_joiner(c, "j2", &t), 0);
    assert_int_equal(t, EO_TRACK_NONE);
    eo_client_destroy(c);
    cleanup_ctx(&x);
}

/* A round can be abandoned (nothing reported, no sequence number used), a map change abandons
 * a running round, a move for a player who left is refused, and the commander flag reaches the
 * record; tournament mode turns the scramble rules off. */
static void test_abandon_mode_commander(void **state)
{
    (void)state;
    ctx x;
    eo_client_config cfg;
    setup_ctx(&x, &cfg);
    cfg.autobalance.enabled = false;
    eo_client *c = NULL;
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    const char *a[] = {"a1", "a2"}, *b[] = {"b1", "b2"};
    seat(c, a, 2, EO_TRACK_A, 100);
    seat(c, b, 2, EO_TRACK_B, 100);
    assert_int_equal(eo_client_player_team(c, "gone", EO_TRACK_A, 100), EO_ENOTFOUND);
    assert_int_equal(eo_client_round_start(c, 100), 0);
    assert_int_equal(eo_client_round_abandon(c, 150), 0);
    assert_int_equal(eo_client_round_abandon(c, 150), 0); /* none running: nothing to do */
    assert_int_equal(eo_client_round_start(c, 200), 0);
    assert_int_equal(eo_client_map_start(c, "ns2_veil", 250), 0);
    assert_int_equal(eo_client_round_start(c, 300), 0); /* the map change ended the round */
    assert_int_equal(eo_client_player_commander(c, "a1"), 0);
    assert_int_equal(eo_client_player_commander(c, "nobody"), EO_ENOTFOUND);
    assert_int_equal(eo_client_set_mode(c, "ns2", EO_TRIGGER_MODE_OTHER, true), 0);
    assert_int_equal(eo_client_set_mode(c, "ns2", EO_TRIGGER_MODE_COUNT, false), EO_EINVAL);
    assert_int_equal(eo_client_round_end(c, EO_WIN_A, NULL, 600, NULL, 0), 0);
    assert_int_equal(eo_client_wfp_expired(c, 610), 0); /* tournament: no scramble */
    eo_client_stats st;
    eo_client_get_stats(c, &st);
    assert_int_equal(st.next_seq, 2);
    assert_false(st.scramble_pending);
    eo_client_destroy(c);
    /* The state file holds the one report: commander on a1, map and mode named. */
    FILE *f = fopen(x.state, "r");
    assert_non_null(f);
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "\"commander\":true"));
    assert_non_null(strstr(text, "\"map\":\"ns2_veil\""));
    assert_non_null(strstr(text, "\"mode\":\"ns2\""));
    assert_null(strstr(strstr(text, "\"commander\":true") + 1, "\"commander\":true"));
    /* Without tournament mode the expired wait scrambles (pending: nothing answers here). */
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    seat(c, a, 2, EO_TRACK_A, 700);
    seat(c, b, 2, EO_TRACK_B, 700);
    assert_int_equal(eo_client_wfp_expired(c, 710), 0);
    eo_client_get_stats(c, &st);
    assert_true(st.scramble_pending);
    eo_client_destroy(c);
    cleanup_ctx(&x);
}

/* The state file cannot be written (its folder vanished): the new report is kept in memory and
 * not sent, the failure is logged once (no spinning retries), and once the folder is back the
 * worker writes the file by itself. */
static void test_state_write_failure(void **state)
{
    (void)state;
    ctx x;
    eo_client_config cfg;
    setup_ctx(&x, &cfg);
    cfg.retry_min_ms = 20;
    cfg.retry_max_ms = 40;
    cfg.autobalance.enabled = false;
    eo_client *c = NULL;
    assert_int_equal(eo_client_create(&cfg, &c, NULL, 0), 0);
    const char *a[] = {"a1"}, *b[] = {"b1"};
    seat(c, a, 1, EO_TRACK_A, 100);
    seat(c, b, 1, EO_TRACK_B, 100);
    assert_int_equal(unlink(x.state), 0);
    assert_int_equal(rmdir(x.dir), 0);
    assert_int_equal(eo_client_round_start(c, 100), 0);
    assert_int_equal(eo_client_round_end(c, EO_WIN_A, NULL, 400, NULL, 0), 0);
    eo_client_event evs[8];
    /* Until the first failure is logged, then 0.5 s more: a spinning worker would log
     * thousands of lines by then. */
    for (int i = 0; i < 1000 && strstr(x.log, "state file: cannot") == NULL; i++) {
        usleep(10000);
        drain(c, 400, evs, 8);
    }
    for (int i = 0; i < 50; i++) {
        usleep(10000);
        drain(c, 400, evs, 8);
    }
    size_t fails = 0;
    for (const char *p = x.log; (p = strstr(p, "state file: cannot")) != NULL; p++)
        fails++;
    assert_int_equal(fails, 1);
    eo_client_stats st;
    eo_client_get_stats(c, &st);
    assert_int_equal(st.queued, 1);
    assert_true(mkdir(x.dir, 0700) == 0);
    for (int i = 0; i < 1000 && access(x.state, F_OK) != 0; i++)
        usleep(10000);
    assert_int_equal(access(x.state, F_OK), 0);
    for (int i = 0; i < 1000 && strstr(x.log, "state file written again") == NULL; i++) {
        usleep(10000);
        drain(c, 400, evs, 8);
    }
    assert_non_null(strstr(x.log, "state file written again"));
    FILE *f = fopen(x.state, "r");
    assert_non_null(f);
    char text[2048];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    assert_non_null(strstr(text, "\nreport srv:"));
    eo_client_destroy(c);
    cleanup_ctx(&x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_corrupt_state_moved_aside),
        cmocka_unit_test(test_offline_rounds),
        cmocka_unit_test(test_place_and_autobalance),
        cmocka_unit_test(test_abandon_mode_commander),
        cmocka_unit_test(test_state_write_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
