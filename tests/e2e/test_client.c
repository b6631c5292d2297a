/*
 * End-to-end tests of libevenodds-client (docs/CLIENT.md): the real service on loopback, the real
 * client library, and a fault-injection proxy between them (tests/lib/proxy.h) that passes,
 * drops replies, hangs or refuses. The "game" is this test's thread, driving the client's frame
 * loop calls with a virtual clock.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_client.h"
#include "proxy.h"

/* ---- a test bed: service, proxy, client, log ---------------------------------------------- */

typedef struct bed {
    e2e_server s;
    proxy *px;
    eo_client *c;
    char url[64];
    char state[400];
    double now;       /* the game's virtual clock */
    char log[16384];  /* the client's log lines */
    int dropped_logs; /* error lines about a dropped report */
    double max_call_ms; /* the longest client call seen by timed() */
    eo_track_team team[64]; /* team of player p<i> as the game applied it */
} bed;

/* The number of player id "p<i>". */
static int pnum(const char *id)
{
    int n = (int)strtol(id + 1, NULL, 10);
    assert_true(id[0] == 'p' && n > 0 && n < 64);
    return n;
}

static void on_log(void *ctx, eo_client_log_level lvl, const char *msg)
{
    bed *b = ctx;
    size_t used = strlen(b->log);
    snprintf(b->log + used, sizeof b->log - used, "%d %s\n", (int)lvl, msg);
    /* "… dropped, never rated", or "… dropped while being sent" when the worker was trying
     * that very report (the service is down, so it is not rated either). */
    if (lvl == EO_CLIENT_LOG_ERROR && strstr(msg, "report queue full") != NULL)
        b->dropped_logs++;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void client_config(bed *b, eo_client_config *cfg)
{
    eo_client_config_init(cfg);
    cfg->url = b->url;
    cfg->server_id = "srv1";
    cfg->key = b->s.server_key;
    cfg->state_file = b->state;
    cfg->connect_timeout_ms = 500;
    cfg->request_timeout_ms = 2000;
    cfg->retry_min_ms = 20;
    cfg->retry_max_ms = 200;
    cfg->log = on_log;
    cfg->log_ctx = b;
    cfg->autobalance.enabled = false;
    cfg->scramble_on = false;
}

static void open_client(bed *b, const eo_client_config *cfg)
{
    char err[256] = "";
    if (eo_client_create(cfg, &b->c, err, sizeof err) != 0)
        fail_msg("eo_client_create: %s", err);
}

static void bed_up(bed *b, const eo_client_config *cfg_or_null)
{
    memset(b, 0, sizeof *b);
    assert_int_equal(e2e_init(&b->s), 0);
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_start(&b->s, extra), 0);
    assert_int_equal(proxy_start(b->s.port, &b->px), 0);
    snprintf(b->url, sizeof b->url, "http://127.0.0.1:%u", proxy_port(b->px));
    snprintf(b->state, sizeof b->state, "%s/client.state", b->s.dir);
    b->now = 1763800000;
    eo_client_config cfg;
    if (cfg_or_null == NULL)
        client_config(b, &cfg);
    else
        cfg = *cfg_or_null;
    cfg.url = b->url;
    cfg.key = b->s.server_key;
    cfg.state_file = b->state;
    cfg.log = on_log;
    cfg.log_ctx = b;
    open_client(b, &cfg);
}

static void service_stop(bed *b)
{
    int st = -1;
    assert_int_equal(e2e_stop(&b->s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
}

static void service_start(bed *b)
{
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_start(&b->s, extra), 0);
    proxy_set_upstream(b->px, b->s.port);
}

static void bed_down(bed *b)
{
    eo_client_destroy(b->c);
    proxy_stop(b->px);
    if (b->s.pid != 0)
        service_stop(b);
    e2e_cleanup(&b->s);
}

/* Times one client call: the frame loop must never wait on the network. */
#define TIMED(b, call)                                                                         \
    do {                                                                                       \
        double t0_ = mono_ms();                                                                \
        int rc_ = (call);                                                                      \
        double dt_ = mono_ms() - t0_;                                                          \
        if (dt_ > (b)->max_call_ms)                                                            \
            (b)->max_call_ms = dt_;                                                            \
        assert_true(rc_ >= 0);                                                                 \
    } while (0)

/* Events seen by pump(). */
typedef struct seen {
    char acked[64][EO_ID_MAX + 1]; /* REPORTED ids with 200, in order */
    size_t nacked;
    size_t refused, ratings, scrambles, moves;
    char scramble_source[16];
} seen;

/* Polls until @p until returns true or @p ms of real time pass; applies MOVE events. */
static void pump(bed *b, seen *sn, double ms, bool (*until)(bed *, seen *))
{
    double end = mono_ms() + ms;
    do {
        eo_client_event ev;
        int rc;
        for (;;) {
            double t0 = mono_ms();
            rc = eo_client_poll(b->c, b->now, &ev);
            double dt = mono_ms() - t0;
            if (dt > b->max_call_ms)
                b->max_call_ms = dt;
            if (rc != 1)
                break;
            switch (ev.type) {
            case EO_CLIENT_EV_REPORTED:
                if (ev.status == 200 && sn->nacked < 64)
                    snprintf(sn->acked[sn->nacked++], EO_ID_MAX + 1, "%s", ev.id);
                else if (ev.status != 200)
                    sn->refused++;
                break;
            case EO_CLIENT_EV_RATING:
                sn->ratings++;
                break;
            case EO_CLIENT_EV_SCRAMBLE:
                sn->scrambles++;
                snprintf(sn->scramble_source, sizeof sn->scramble_source, "%s", ev.source);
                break;
            case EO_CLIENT_EV_MOVE:
                sn->moves++;
                assert_int_equal(eo_client_player_team(b->c, ev.id, ev.to, b->now), 0);
                b->team[pnum(ev.id)] = ev.to;
                break;
            }
        }
        assert_int_equal(rc, 0);
        if (until != NULL && until(b, sn))
            return;
        usleep(2000);
    } while (mono_ms() < end);
}

static bool service_seen_down(bed *b, seen *sn)
{
    (void)sn;
    eo_client_stats st;
    eo_client_get_stats(b->c, &st);
    return !st.service_up;
}

static bool scramble_deferred(bed *b, seen *sn)
{
    (void)sn;
    eo_client_stats st;
    eo_client_get_stats(b->c, &st);
    return st.scrambles_deferred >= 1;
}

static bool queue_empty(bed *b, seen *sn)
{
    (void)sn;
    eo_client_stats st;
    eo_client_get_stats(b->c, &st);
    return st.queued == 0;
}

/* Connects players p<first>..p<first+n-1> on alternating teams (A, B, A, …). */
static void seat(bed *b, int first, int n)
{
    for (int i = first; i < first + n; i++) {
        char id[32];
        snprintf(id, sizeof id, "p%d", i);
        TIMED(b, eo_client_player_connect(b->c, id, b->now));
        b->team[i] = (i - first) % 2 ? EO_TRACK_B : EO_TRACK_A;
        TIMED(b, eo_client_player_team(b->c, id, b->team[i], b->now));
    }
}

/* Plays one round of 300 s: everyone on a team takes part; player @p leaver (or NULL) leaves
 * at 100 s after dealing damage. The winner alternates with the round's parity. Writes the
 * round's id into @p id (capacity EO_ID_MAX + 1). */
static void play_round(bed *b, int n_players, const char *leaver, char *id)
{
    TIMED(b, eo_client_round_start(b->c, b->now));
    for (int i = 1; i <= n_players; i++) {
        char pid[32];
        snprintf(pid, sizeof pid, "p%d", i);
        TIMED(b, eo_client_player_event(b->c, pid, EO_TRACK_DAMAGE_DEALT, b->now + 10));
    }
    if (leaver != NULL)
        TIMED(b, eo_client_player_disconnect(b->c, leaver, b->now + 100));
    b->now += 300;
    eo_client_stats st;
    eo_client_get_stats(b->c, &st);
    TIMED(b, eo_client_round_end(b->c, st.next_seq % 2 ? EO_WIN_A : EO_WIN_B, NULL, b->now, id,
                                 EO_ID_MAX + 1));
    if (leaver != NULL)
        TIMED(b, eo_client_player_connect(b->c, leaver, b->now)); /* back for the next round */
    if (leaver != NULL)
        TIMED(b, eo_client_player_team(b->c, leaver, b->team[pnum(leaver)], b->now));
    b->now += 20;
}

/* The ids of the pool's logged rounds, in log order (via `evenodds export`). */
static size_t exported_ids(bed *b, char ids[][EO_ID_MAX + 1], size_t cap)
{
    char path[400], err[512];
    snprintf(path, sizeof path, "%s/exported.jsonl", b->s.dir);
    const char *argv[] = {"evenodds", "export", "--db", b->s.db, "--pool", "default", "--out",
                          path, NULL};
    if (e2e_run(argv, NULL, err, sizeof err) != 0)
        fail_msg("export: %s", err);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char line[65536];
    size_t n = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *o = json_loads(line, 0, &je);
        if (o == NULL)
            continue; /* admin edits are logged too; rounds are objects with "winner" */
        if (json_object_get(o, "winner") != NULL) {
            assert_true(n < cap);
            snprintf(ids[n++], EO_ID_MAX + 1, "%s", json_string_value(json_object_get(o, "id")));
        }
        json_decref(o);
    }
    fclose(f);
    return n;
}

/* No id twice in @p ids. */
static void expect_unique(char ids[][EO_ID_MAX + 1], size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (strcmp(ids[i], ids[j]) == 0)
                fail_msg("round %s logged twice", ids[i]);
}

/* The pool's ratings equal `evenodds replay` of its exported log, and the client's cached
 * ratings of @p players equal the service's lookups. */
static void expect_replay_and_cache(bed *b, int players)
{
    char exported[400], ratings[400], err[512];
    snprintf(exported, sizeof exported, "%s/exported.jsonl", b->s.dir);
    snprintf(ratings, sizeof ratings, "%s/ratings.jsonl", b->s.dir);
    const char *argv[] = {"evenodds", "replay", "--model", "synelo", "--ratings-out", ratings,
                          exported, NULL};
    if (e2e_run(argv, NULL, err, sizeof err) != 0)
        fail_msg("replay: %s", err);
    FILE *f = fopen(ratings, "r");
    assert_non_null(f);
    char line[4096];
    int seen_players = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *want = json_loads(line, 0, &je);
        assert_non_null(want);
        const char *id = json_string_value(json_object_get(want, "id"));
        char path[256];
        snprintf(path, sizeof path, "/v1/pools/default/players/%s", id);
        e2e_resp r;
        assert_int_equal(e2e_call(&b->s, "GET", path, b->s.server_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *got = e2e_json(&r);
        assert_true(json_equal(json_object_get(want, "rating"), json_object_get(got, "rating")));
        assert_true(json_equal(json_object_get(want, "rounds"), json_object_get(got, "rounds")));
        eo_client_rating cr;
        assert_int_equal(eo_client_rating_of(b->c, id, &cr), 0);
        if (cr.provisional || cr.mean != json_number_value(json_object_get(got, "rating")) ||
            cr.rounds != json_integer_value(json_object_get(got, "rounds")))
            fail_msg("client cache of %s: %g (%lld rounds%s), service %s", id, cr.mean,
                     (long long)cr.rounds, cr.provisional ? ", provisional" : "", r.body);
        json_decref(got);
        json_decref(want);
        e2e_resp_free(&r);
        seen_players++;
    }
    fclose(f);
    assert_int_equal(seen_players, players);
}

/* ---- the cases ---------------------------------------------------------------------------- */

/* Normal play, with a player leaving mid-round each round: every round recorded exactly once,
 * in order; the pool equals a replay of its log; the client's cache equals the service. */
static void test_normal_play(void **state)
{
    (void)state;
    static bed b;
    bed_up(&b, NULL);
    seat(&b, 1, 8);
    char ids[64][EO_ID_MAX + 1];
    seen sn = {0};
    for (int r = 0; r < 20; r++) {
        char leaver[8];
        snprintf(leaver, sizeof leaver, "p%d", 1 + r % 8);
        play_round(&b, 8, r % 3 == 0 ? leaver : NULL, ids[r]);
        pump(&b, &sn, 20000, queue_empty); /* a real round lasts minutes: the queue drains */
    }
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    pump(&b, &sn, 2000, NULL);
    if (sn.nacked != 20)
        fail_msg("acked %zu, refused %zu; log:\n%s", sn.nacked, sn.refused, b.log);
    for (int r = 0; r < 20; r++)
        assert_string_equal(sn.acked[r], ids[r]);
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.reports_made, 20);
    assert_int_equal(st.reports_acked, 20);
    assert_int_equal(st.reports_dropped, 0);
    assert_int_equal(st.queued, 0);
    char got[64][EO_ID_MAX + 1];
    size_t n = exported_ids(&b, got, 64);
    assert_int_equal(n, 20);
    for (size_t r = 0; r < n; r++)
        assert_string_equal(got[r], ids[r]);
    expect_replay_and_cache(&b, 8);
    bed_down(&b);
}

/* The service stopped for 6 rounds (within 8 slots), then for 11 (3 more than fit): every
 * queued round is applied once, in order; exactly the oldest 3 are dropped, and reported. */
static void test_outage(void **state)
{
    (void)state;
    static bed b;
    bed_up(&b, NULL);
    seat(&b, 1, 6);
    char ids[40][EO_ID_MAX + 1];
    seen sn = {0};
    int r = 0;
    for (; r < 3; r++)
        play_round(&b, 6, NULL, ids[r]);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);

    service_stop(&b);
    for (; r < 9; r++) {
        play_round(&b, 6, NULL, ids[r]);
        pump(&b, &sn, 5, NULL);
    }
    pump(&b, &sn, 20000, service_seen_down); /* the worker has tried and failed */
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 6);
    assert_int_equal(st.reports_dropped, 0);
    assert_false(st.service_up);
    service_start(&b);
    pump(&b, &sn, 20000, queue_empty);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);

    char got[40][EO_ID_MAX + 1];
    size_t n = exported_ids(&b, got, 40);
    assert_int_equal(n, 9);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got[i], ids[i]);

    /* Longer than the ring: 11 rounds into 8 slots. */
    service_stop(&b);
    for (; r < 20; r++) {
        play_round(&b, 6, NULL, ids[r]);
        pump(&b, &sn, 5, NULL);
    }
    pump(&b, &sn, 50, NULL);
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 8);
    assert_int_equal(st.reports_dropped, 3);
    assert_int_equal(b.dropped_logs, 3);
    for (int i = 9; i < 12; i++)
        assert_non_null(strstr(b.log, ids[i])); /* the log names each dropped round */
    service_start(&b);
    pump(&b, &sn, 20000, queue_empty);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    n = exported_ids(&b, got, 40);
    assert_int_equal(n, 17);
    for (size_t i = 0; i < 9; i++)
        assert_string_equal(got[i], ids[i]);
    for (size_t i = 9; i < 17; i++)
        assert_string_equal(got[i], ids[i + 3]); /* rounds 9, 10, 11 dropped: the oldest */
    expect_unique(got, n);
    expect_replay_and_cache(&b, 6);
    bed_down(&b);
}

/* The service commits a round but its reply is lost: the retry is answered with the first
 * answer, and the round counts once. */
static void test_lost_reply(void **state)
{
    (void)state;
    static bed b;
    bed_up(&b, NULL);
    seat(&b, 1, 4);
    char ids[4][EO_ID_MAX + 1];
    seen sn = {0};
    proxy_set_mode(b.px, PROXY_DROP_REPLY, 1);
    unsigned long before = proxy_requests(b.px);
    play_round(&b, 4, NULL, ids[0]);
    pump(&b, &sn, 20000, queue_empty);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    pump(&b, &sn, 20, NULL);
    assert_int_equal(proxy_dropped(b.px), 1);
    assert_true(proxy_requests(b.px) >= before + 2); /* the lost one and its retry */
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_true(st.send_failures >= 1);
    assert_int_equal(st.reports_acked, 1);
    assert_int_equal(sn.nacked, 1);
    char got[4][EO_ID_MAX + 1];
    assert_int_equal(exported_ids(&b, got, 4), 1);
    assert_string_equal(got[0], ids[0]);
    /* Each player has one round, not two. */
    eo_client_rating cr;
    assert_int_equal(eo_client_rating_of(b.c, "p1", &cr), 0);
    assert_false(cr.provisional);
    assert_int_equal(cr.rounds, 1);
    expect_replay_and_cache(&b, 4);
    bed_down(&b);
}

/* The game server restarts (the client destroyed and made again from its state file) with four
 * reports still queued: nothing is lost, the sequence goes on. */
static void test_game_restart(void **state)
{
    (void)state;
    static bed b;
    bed_up(&b, NULL);
    seat(&b, 1, 4);
    char ids[8][EO_ID_MAX + 1];
    service_stop(&b);
    for (int r = 0; r < 4; r++)
        play_round(&b, 4, NULL, ids[r]);
    eo_client_destroy(b.c);
    b.c = NULL;

    eo_client_config cfg;
    client_config(&b, &cfg);
    open_client(&b, &cfg);
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 4);
    assert_int_equal(st.next_seq, 5);
    seat(&b, 1, 4);
    service_start(&b);
    seen sn = {0};
    pump(&b, &sn, 20000, queue_empty);
    play_round(&b, 4, NULL, ids[4]);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    pump(&b, &sn, 20, NULL);
    assert_non_null(strstr(ids[4], ":5")); /* sequence 5 follows the restored 1..4 */
    char got[8][EO_ID_MAX + 1];
    size_t n = exported_ids(&b, got, 8);
    assert_int_equal(n, 5);
    for (size_t i = 0; i < n; i++)
        assert_string_equal(got[i], ids[i]);
    expect_replay_and_cache(&b, 4);
    bed_down(&b);
}

/* The game server is killed (SIGKILL) with three reports queued and the service unreachable:
 * the state file has them, and the next start delivers them, in order. The child is forked
 * before this test starts any thread. */
static void test_game_killed(void **state)
{
    (void)state;
    char dir[] = "/tmp/eo_killed_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/client.state", dir);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        eo_client_config cfg;
        eo_client_config_init(&cfg);
        cfg.url = "http://127.0.0.1:1"; /* nothing listens */
        cfg.server_id = "srv1";
        cfg.key = "0123456789abcdef0123";
        cfg.state_file = path;
        cfg.retry_min_ms = 20;
        cfg.autobalance.enabled = false;
        eo_client *c = NULL;
        if (eo_client_create(&cfg, &c, NULL, 0) != 0)
            _exit(3);
        const char *ids[] = {"p1", "p2", "p3", "p4"};
        for (int i = 0; i < 4; i++) {
            eo_client_player_connect(c, ids[i], 1000);
            eo_client_player_team(c, ids[i], i % 2 ? EO_TRACK_B : EO_TRACK_A, 1000);
        }
        for (int r = 0; r < 3; r++) {
            eo_client_round_start(c, 1000 + 400 * r);
            if (eo_client_round_end(c, EO_WIN_A, NULL, 1300 + 400 * r, NULL, 0) != 0)
                _exit(4);
        }
        /* The worker writes the state file after each change: wait until it holds all three
         * reports (as a crash could come any time after that), then die without a word. */
        for (int i = 0; i < 2000; i++) {
            FILE *f = fopen(path, "r");
            char text[8192];
            size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
            if (f)
                fclose(f);
            text[n] = '\0';
            int reports = 0;
            for (const char *p = text; (p = strstr(p, "\nreport ")) != NULL; p++)
                reports++;
            if (reports == 3)
                break;
            usleep(5000);
        }
        raise(SIGKILL);
        _exit(5);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    static bed b;
    memset(&b, 0, sizeof b);
    assert_int_equal(e2e_init(&b.s), 0);
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_start(&b.s, extra), 0);
    assert_int_equal(proxy_start(b.s.port, &b.px), 0);
    snprintf(b.url, sizeof b.url, "http://127.0.0.1:%u", proxy_port(b.px));
    snprintf(b.state, sizeof b.state, "%s", path);
    eo_client_config cfg;
    client_config(&b, &cfg);
    open_client(&b, &cfg);
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 3);
    assert_int_equal(st.next_seq, 4);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    char got[4][EO_ID_MAX + 1];
    assert_int_equal(exported_ids(&b, got, 4), 3);
    for (int i = 0; i < 3; i++) {
        char tail[8];
        snprintf(tail, sizeof tail, ":%d", i + 1);
        assert_string_equal(got[i] + strlen(got[i]) - strlen(tail), tail);
    }
    bed_down(&b);
    unlink(path);
    rmdir(dir);
}

/* The service hangs (accepts, never answers): no frame-loop call waits for it. Every call is
 * timed; a call that waited on the network would take the request timeout (30 s). When the
 * service answers again, the queued rounds go through. */
static void test_hang_never_blocks(void **state)
{
    (void)state;
    static bed b;
    eo_client_config cfg;
    client_config(&b, &cfg);
    cfg.request_timeout_ms = 30000;
    cfg.autobalance.enabled = true;
    cfg.scramble_on = true;
    bed_up(&b, &cfg);
    proxy_set_mode(b.px, PROXY_HANG, 0);
    seat(&b, 1, 10);
    char ids[8][EO_ID_MAX + 1];
    seen sn = {0};
    double t0 = mono_ms();
    for (int r = 0; r < 6; r++) {
        play_round(&b, 10, "p3", ids[r]);
        TIMED(&b, eo_client_scramble(b.c, b.now));
        pump(&b, &sn, 5, NULL);
    }
    double spent = mono_ms() - t0;
    print_message("hung service: 6 rounds in %.0f ms, longest client call %.3f ms\n", spent,
                  b.max_call_ms);
    assert_true(b.max_call_ms < 1000.0); /* 30x below the request timeout */
    assert_true(spent < 10000.0);
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 6);
    assert_int_equal(st.reports_acked, 0);
    /* The game server shuts down while a request hangs: destroy abandons it at once, and the
     * next start finds all six reports in the state file. */
    double d0 = mono_ms();
    eo_client_destroy(b.c);
    double destroy_ms = mono_ms() - d0;
    print_message("destroy with a hung request: %.1f ms\n", destroy_ms);
    assert_true(destroy_ms < 5000.0);
    open_client(&b, &cfg);
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.queued, 6);
    proxy_set_mode(b.px, PROXY_PASS, 0);
    pump(&b, &sn, 40000, queue_empty);
    assert_int_equal(eo_client_flush(b.c, 40000), 0);
    char got[8][EO_ID_MAX + 1];
    assert_int_equal(exported_ids(&b, got, 8), 6);
    for (size_t i = 0; i < 6; i++)
        assert_string_equal(got[i], ids[i]);
    bed_down(&b);
}

/* Scrambles: fresh splits from the service (arena round 2), the cache when the service is
 * down, pending with an empty cache until the next round end finds the service back. */
static bool scrambled(bed *b, seen *sn)
{
    (void)b;
    return sn->scrambles > 0;
}

/* The service's 4v4 split of p1..p9 (asked directly) equals the teams the game now has, up to
 * the sides' labels, and the one player it benches waits. */
static void expect_service_split(bed *b)
{
    e2e_resp r;
    assert_int_equal(e2e_call(&b->s, "POST", "/v1/pools/default/splits", b->s.server_key,
                              "{\"players\":[\"p1\",\"p2\",\"p3\",\"p4\",\"p5\",\"p6\","
                              "\"p7\",\"p8\",\"p9\"]}", &r), 0);
    assert_int_equal(r.status, 200);
    json_t *j = e2e_json(&r);
    json_t *k4 = json_array_get(json_object_get(j, "splits"), 2);
    assert_int_equal(json_integer_value(json_object_get(k4, "k")), 4);
    eo_track_team side_of_a = b->team[pnum(json_string_value(
        json_array_get(json_object_get(k4, "A"), 0)))];
    assert_true(side_of_a == EO_TRACK_A || side_of_a == EO_TRACK_B);
    eo_track_team side_of_b = side_of_a == EO_TRACK_A ? EO_TRACK_B : EO_TRACK_A;
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(b->team[pnum(json_string_value(
                             json_array_get(json_object_get(k4, "A"), i)))], side_of_a);
        assert_int_equal(b->team[pnum(json_string_value(
                             json_array_get(json_object_get(k4, "B"), i)))], side_of_b);
    }
    json_t *bench = json_object_get(k4, "bench");
    assert_int_equal(json_array_size(bench), 1);
    assert_int_equal(b->team[pnum(json_string_value(json_array_get(bench, 0)))],
                     EO_TRACK_WAITING);
    json_decref(j);
    e2e_resp_free(&r);
}

static void test_scramble(void **state)
{
    (void)state;
    static bed b;
    eo_client_config cfg;
    client_config(&b, &cfg);
    cfg.scramble_on = true;
    cfg.trigger_mode = EO_TRIGGER_MODE_ARENA;
    cfg.bench_waits = true;
    bed_up(&b, &cfg);
    seat(&b, 1, 9); /* 9 eligible: a 4v4 split benches one */
    char id[EO_ID_MAX + 1];
    seen sn = {0};
    play_round(&b, 9, NULL, id); /* arena round 1 ends: round 2 is always scrambled */
    pump(&b, &sn, 20000, scrambled);
    assert_int_equal(sn.scrambles, 1);
    assert_string_equal(sn.scramble_source, "fresh");
    pump(&b, &sn, 50, NULL);
    expect_service_split(&b);
    eo_client_stats st;
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.scrambles_fresh, 1);

    /* Service down: a requested scramble comes from the cache. */
    proxy_set_mode(b.px, PROXY_DOWN, 0);
    sn.scrambles = 0;
    TIMED(&b, eo_client_scramble(b.c, b.now));
    pump(&b, &sn, 20000, scrambled);
    assert_int_equal(sn.scrambles, 1);
    assert_string_equal(sn.scramble_source, "cache");
    eo_client_get_stats(b.c, &st);
    assert_int_equal(st.scrambles_cache, 1);
    eo_client_destroy(b.c);

    /* A new client has an empty cache: the scramble stays pending while the service is down. */
    b.c = NULL;
    remove(b.state);
    open_client(&b, &cfg);
    seat(&b, 1, 8);
    sn.scrambles = 0;
    TIMED(&b, eo_client_scramble(b.c, b.now));
    pump(&b, &sn, 20000, scramble_deferred); /* the split request failed, the cache is empty */
    assert_int_equal(sn.scrambles, 0);
    eo_client_get_stats(b.c, &st);
    assert_true(st.scramble_pending);
    assert_true(st.scrambles_deferred >= 1);
    /* The service is back; the next round end retries and applies it. */
    proxy_set_mode(b.px, PROXY_PASS, 0);
    play_round(&b, 8, NULL, id);
    pump(&b, &sn, 20000, scrambled);
    assert_int_equal(sn.scrambles, 1);
    assert_string_equal(sn.scramble_source, "fresh");
    eo_client_get_stats(b.c, &st);
    assert_false(st.scramble_pending);
    assert_int_equal(eo_client_flush(b.c, 20000), 0);
    bed_down(&b);
}

/* docs/CLIENT.md's example (examples/minimal_plugin.c, built beside EO_BIN) runs against the
 * real service as its guide says: exit 0, and its three rounds are in the pool, once each. */
static void test_example_plugin(void **state)
{
    (void)state;
    static bed b;
    bed_up(&b, NULL);
    const char *bin = getenv("EO_BIN");
    const char *slash = strrchr(bin, '/');
    assert_non_null(slash);
    char exe[512], st[400];
    snprintf(exe, sizeof exe, "%.*s/examples/minimal_plugin", (int)(slash - bin), bin);
    snprintf(st, sizeof st, "%s/example.state", b.s.dir);
    char keyvar[128];
    snprintf(keyvar, sizeof keyvar, "EVENODDS_SERVER_KEY=%s", b.s.server_key);
    char *const envp[] = {keyvar, NULL}; /* made before the fork: the child only execs */
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 1);
        execle(exe, exe, b.url, st, (char *)NULL, envp);
        _exit(127);
    }
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    char got[8][EO_ID_MAX + 1];
    size_t n = exported_ids(&b, got, 8);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_true(strncmp(got[i], "example-1:", 10) == 0);
    expect_unique(got, n);
    bed_down(&b);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_normal_play),
        cmocka_unit_test(test_outage),
        cmocka_unit_test(test_lost_reply),
        cmocka_unit_test(test_game_restart),
        cmocka_unit_test(test_game_killed),
        cmocka_unit_test(test_hang_never_blocks),
        cmocka_unit_test(test_scramble),
        cmocka_unit_test(test_example_plugin),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
