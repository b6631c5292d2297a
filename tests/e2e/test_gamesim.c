/*
 * evenodds-gamesim against the real service: two simulated game servers play through the
 * client library; every round they made is acknowledged, and the pool's log (exported after
 * the service stopped) holds exactly those rounds, ids SERVER:EPOCH:1..N per server, none
 * twice; `evenodds replay` of that log gives every player exactly the service's lookup. Also:
 * bad usage exits 2 naming the option, a service that cannot be reached exits 1 with the
 * reports still queued, and an interrupted run still flushes and sums up.
 */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"

/* The gamesim binary sits beside EO_BIN (both in the build directory). */
static void gamesim_bin(char *out, size_t cap)
{
    const char *bin = getenv("EO_BIN");
    const char *slash = bin ? strrchr(bin, '/') : NULL;
    if (slash != NULL)
        assert_true(snprintf(out, cap, "%.*s/evenodds-gamesim", (int)(slash - bin), bin) <
                    (int)cap);
    else
        assert_true(snprintf(out, cap, "./evenodds-gamesim") < (int)cap);
    assert_int_equal(access(out, X_OK), 0);
}

/* Starts the gamesim with @p args (NULL-ended, without argv[0]); its stdout and stderr go to
 * the files @p out and @p err. The server keys of the test's own environment are not passed
 * on: the gamesim must get its key from its arguments. Returns the child's pid. */
static pid_t spawn_gamesim(const char *const *args, const char *out, const char *err)
{
    char bin[512];
    gamesim_bin(bin, sizeof bin);
    const char *argv[48];
    size_t n = 0;
    argv[n++] = bin;
    for (size_t i = 0; args[i] != NULL && n < 47; i++)
        argv[n++] = args[i];
    argv[n] = NULL;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0)
            _exit(126);
        dup2(o, 1);
        dup2(e, 2);
        close(o);
        close(e);
        unsetenv("EVENODDS_SERVER_KEY");
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    return pid;
}

static int wait_exit(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Runs the gamesim to its end: returns its exit code, *summary its stdout as JSON (NULL when
 * it printed none) and @p err (capacity errlen) the start of its stderr. */
static int run_gamesim(const e2e_server *s, const char *const *args, json_t **summary, char *err,
                       size_t errlen)
{
    char out_path[400], err_path[400];
    e2e_path(s, "gamesim.out", out_path, sizeof out_path);
    e2e_path(s, "gamesim.err", err_path, sizeof err_path);
    int code = wait_exit(spawn_gamesim(args, out_path, err_path));
    char *text = e2e_slurp(out_path, NULL);
    *summary = json_loads(text, 0, NULL);
    free(text);
    text = e2e_slurp(err_path, NULL);
    snprintf(err, errlen, "%s", text);
    free(text);
    unlink(out_path);
    unlink(err_path);
    return code;
}

static json_int_t jint(const json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v))
        fail_msg("\"%s\" is not an integer", k);
    return json_integer_value(v);
}

/* Removes the gamesim's state directory (its state files and nothing else). */
static void remove_state(const char *dir, const json_t *sum)
{
    json_t *per = json_object_get(sum, "per_server"), *sv;
    size_t i;
    json_array_foreach(per, i, sv) {
        const char *f = json_string_value(json_object_get(sv, "state_file"));
        if (f != NULL)
            unlink(f);
    }
    rmdir(dir);
}

static void export_pool(const e2e_server *s, const char *out)
{
    char err[512];
    const char *argv[] = {"evenodds", "export", "--db", s->db, "--pool", "default", "--out",
                          out, NULL};
    if (e2e_run(argv, NULL, err, sizeof err) != 0)
        fail_msg("export: %s", err);
}

/* The log's rounds: @p nsv servers, server i's ids "PREFIX_i" + 1..made_i, each once, with
 * the record's "server" field naming it. */
static void expect_log(const char *log, const json_t *per, size_t total)
{
    size_t nsv = json_array_size(per);
    assert_true(nsv >= 1 && nsv <= 8);
    char prefix[8][160];
    const char *sid[8];
    json_int_t made[8];
    bool *seen[8];
    for (size_t i = 0; i < nsv; i++) {
        json_t *sv = json_array_get(per, i);
        sid[i] = json_string_value(json_object_get(sv, "id"));
        const char *first = json_string_value(json_object_get(sv, "first_round"));
        assert_non_null(sid[i]);
        assert_non_null(first);
        made[i] = jint(sv, "rounds_made");
        /* "SERVER:EPOCH:1": the prefix is everything up to the last ':'. */
        const char *colon = strrchr(first, ':');
        assert_non_null(colon);
        assert_string_equal(colon + 1, "1");
        assert_true(snprintf(prefix[i], sizeof prefix[i], "%.*s", (int)(colon + 1 - first),
                             first) < (int)sizeof prefix[i]);
        size_t sl = strlen(sid[i]);
        assert_true(strncmp(first, sid[i], sl) == 0 && first[sl] == ':');
        seen[i] = calloc((size_t)made[i] + 1, sizeof *seen[i]);
        assert_non_null(seen[i]);
    }
    FILE *f = fopen(log, "r");
    assert_non_null(f);
    static char line[65536];
    size_t rounds = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *r = json_loads(line, 0, NULL);
        assert_non_null(r);
        const char *id = json_string_value(json_object_get(r, "id"));
        assert_non_null(id);
        size_t which = nsv;
        for (size_t i = 0; i < nsv && which == nsv; i++)
            if (strncmp(id, prefix[i], strlen(prefix[i])) == 0)
                which = i;
        if (which == nsv)
            fail_msg("round %s: no server's id prefix", id);
        const char *seq_text = id + strlen(prefix[which]);
        char *end = NULL;
        long long seq = strtoll(seq_text, &end, 10);
        if (end == seq_text || *end != '\0' || seq < 1 || seq > made[which])
            fail_msg("round %s: sequence out of 1..%lld", id, (long long)made[which]);
        if (seen[which][seq])
            fail_msg("round %s twice in the log", id);
        seen[which][seq] = true;
        assert_string_equal(json_string_value(json_object_get(r, "server")), sid[which]);
        json_decref(r);
        rounds++;
    }
    fclose(f);
    assert_int_equal(rounds, total);
    for (size_t i = 0; i < nsv; i++)
        free(seen[i]);
}

/* ---- the run ------------------------------------------------------------------------------ */

static void test_gamesim_run(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, extra), 0);

    char dir[400];
    e2e_path(&s, "gs-state", dir, sizeof dir);
    const char *args[] = {"--url",  s.url, "--keys",      s.config, "--servers", "2",
                          "--rounds", "60", "--state-dir", dir,      "--seed",    "7",
                          "--wait-ms", "30000", "--quiet", NULL};
    json_t *sum = NULL;
    char err[8192];
    int code = run_gamesim(&s, args, &sum, err, sizeof err);
    if (code != 0 || sum == NULL)
        fail_msg("gamesim exited %d: %s", code, err);

    /* Every round made was acknowledged: none dropped, refused or left queued. */
    assert_true(json_is_true(json_object_get(sum, "ok")));
    assert_int_equal(jint(sum, "servers"), 2);
    assert_int_equal(jint(sum, "rounds_per_server"), 60);
    json_int_t made = jint(sum, "rounds_made");
    /* A round is not reported only when a side has nobody rated: with 24 players, never. */
    assert_int_equal(jint(sum, "rounds_unreported"), 0);
    assert_int_equal(made, 120);
    assert_int_equal(jint(sum, "reports_acked"), made);
    assert_int_equal(jint(sum, "reports_dropped"), 0);
    assert_int_equal(jint(sum, "reports_refused"), 0);
    assert_int_equal(jint(sum, "queued_left"), 0);
    assert_int_equal(jint(sum, "call_errors"), 0);
    json_t *scr = json_object_get(sum, "scrambles");
    assert_true(jint(scr, "fresh") >= 1); /* at least the Waiting For Players scramble */
    assert_true(jint(json_object_get(sum, "moves"), "scramble") >= 1);
    assert_true(jint(json_object_get(sum, "players"), "leaves") >= 1);
    json_t *per = json_object_get(sum, "per_server");
    assert_int_equal(json_array_size(per), 2);
    for (size_t i = 0; i < 2; i++)
        assert_int_equal(jint(json_array_get(per, i), "reports_acked"),
                         jint(json_array_get(per, i), "rounds_made"));

    /* The service's lookups equal the replay of its log, for every player who played. */
    char live[400], log[400], ratings[400];
    e2e_path(&s, "gs-live.jsonl", live, sizeof live);
    e2e_path(&s, "gs-log.jsonl", log, sizeof log);
    e2e_path(&s, "gs-ratings.jsonl", ratings, sizeof ratings);
    export_pool(&s, live);
    const char *rep[] = {"evenodds", "replay", "--model", "synelo", "--ratings-out", ratings, live,
                         NULL};
    if (e2e_run(rep, NULL, err, sizeof err) != 0)
        fail_msg("replay: %s", err);
    size_t players = e2e_expect_lookups(&s, "default", ratings, NULL);
    assert_true(players > 24);

    /* After the service stops, the log is the same (nothing came in late) and holds exactly
     * the rounds made. */
    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    export_pool(&s, log);
    char *a = e2e_slurp(live, NULL), *b = e2e_slurp(log, NULL);
    assert_string_equal(a, b);
    free(a);
    free(b);
    expect_log(log, per, (size_t)made);

    remove_state(dir, sum);
    json_decref(sum);
    unlink(live);
    unlink(log);
    unlink(ratings);
    e2e_cleanup(&s);
}

/* ---- failures ----------------------------------------------------------------------------- */

/* Bad usage: exit 2, the message names the option, and nothing is printed on stdout. */
/* Queue-fed servers: three servers register as instances of a queue through the library and
 * play what the coordinator gives them; a lobby files tickets (some parties). Every session
 * is played and closed, every player got in with his own secret and nobody with a forged one,
 * and every round reached the pool carrying its session. */
static void test_gamesim_queue(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, extra), 0);
    e2e_resp r;
    assert_int_equal(e2e_call(&s, "POST", "/v1/queues", s.admin_key,
                              "{\"name\":\"q3\",\"pool\":\"default\",\"team_size\":3,"
                              "\"interval_ms\":20}",
                              &r),
                     0);
    assert_int_equal(r.status, 201);
    e2e_resp_free(&r);
    char dir[400];
    e2e_path(&s, "gs-state", dir, sizeof dir);
    const char *args[] = {
        "--url",    s.url, "--keys",      s.config, "--queue",          "q3", "--servers",   "3",
        "--rounds", "4",   "--team-size", "3",      "--session-rounds", "2",  "--state-dir", dir,
        "--seed",   "5",   "--quiet",     NULL};
    json_t *sum = NULL;
    char err[8192];
    int code = run_gamesim(&s, args, &sum, err, sizeof err);
    if (code != 0 || sum == NULL)
        fail_msg("gamesim exited %d: %s", code, err);
    assert_true(json_is_true(json_object_get(sum, "ok")));
    assert_int_equal(jint(sum, "sessions"), 12);
    assert_int_equal(jint(sum, "rounds_made"), 24);
    assert_int_equal(jint(sum, "reports_acked"), 24);
    assert_int_equal(jint(sum, "joins"), 12 * 6);
    assert_int_equal(jint(sum, "secrets_refused"), 12);
    assert_int_equal(jint(sum, "sessions_lost"), 0);
    assert_true(jint(sum, "max_call_us") < 1000000); /* no call waited on the network */
    json_decref(sum);
    /* the rounds carry their sessions, each closed, on the instance that played it */
    char path[400];
    e2e_path(&s, "export.jsonl", path, sizeof path);
    const char *exp[] = {"evenodds", "export", "--db", s.db, "--pool",
                         "default",  "--out",  path,   NULL};
    assert_int_equal(e2e_run(exp, NULL, err, sizeof err), 0);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char line[65536];
    size_t rounds = 0;
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        const char *sess = json_string_value(json_object_get(o, "session"));
        assert_non_null(sess);
        char url[128];
        snprintf(url, sizeof url, "/v1/sessions/%s", sess);
        assert_int_equal(e2e_call(&s, "GET", url, s.server_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *doc = e2e_json(&r);
        assert_string_equal(json_string_value(json_object_get(doc, "status")), "closed");
        assert_string_equal(json_string_value(json_object_get(doc, "instance")),
                            json_string_value(json_object_get(o, "server")));
        json_decref(doc);
        e2e_resp_free(&r);
        json_decref(o);
        rounds++;
    }
    fclose(f);
    assert_int_equal(rounds, 24);
    e2e_cleanup(&s);
}

static void test_gamesim_usage(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    static const struct {
        const char *args[6];
        const char *names;
    } cases[] = {
        {{"--rounds", "abc", NULL}, "--rounds"},
        {{"--servers", "65", NULL}, "--servers"},
        {{"--churn", "1.5", NULL}, "--churn"},
        {{"--mode", "deathmatch", NULL}, "--mode"},
        {{"--queue", "", NULL}, "--queue"},
        {{"--session-rounds", "0", NULL}, "--session-rounds"},
        {{"--bogus", NULL}, "--bogus"},
        {{"--players", NULL}, "--players"},
        {{"--quiet=1", NULL}, "--quiet"},
        {{"--keys", "/nonexistent/keys.env", NULL}, "--keys"},
        {{"--url", "ftp://x", NULL}, "--url"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *args[10];
        size_t n = 0;
        for (size_t k = 0; cases[i].args[k] != NULL; k++)
            args[n++] = cases[i].args[k];
        if (strcmp(cases[i].names, "--keys") != 0) {
            args[n++] = "--key";
            args[n++] = "0123456789abcdef0123";
        }
        args[n] = NULL;
        json_t *sum = NULL;
        char err[2048];
        int code = run_gamesim(&s, args, &sum, err, sizeof err);
        if (code != 2 || strstr(err, cases[i].names) == NULL || sum != NULL)
            fail_msg("%s: exit %d, stderr: %s", cases[i].names, code, err);
    }
    /* No key at all names --key. */
    const char *nokey[] = {"--rounds", "1", NULL};
    json_t *sum = NULL;
    char err[2048];
    assert_int_equal(run_gamesim(&s, nokey, &sum, err, sizeof err), 2);
    assert_non_null(strstr(err, "--key"));
    /* --help: every option, exit 0. */
    const char *help[] = {"--help", NULL};
    char out_path[400], err_path[400];
    e2e_path(&s, "help.out", out_path, sizeof out_path);
    e2e_path(&s, "help.err", err_path, sizeof err_path);
    assert_int_equal(wait_exit(spawn_gamesim(help, out_path, err_path)), 0);
    char *text = e2e_slurp(out_path, NULL);
    static const char *const opts[] = {
        "--url",         "--pool",           "--key",        "--keys",    "--servers",
        "--rounds",      "--players",        "--team-size",  "--mode",    "--round-seconds",
        "--churn",       "--seed",           "--state-dir",  "--pace-ms", "--wait-ms",
        "--queue-slots", "--timeout-ms",     "--quiet",      "--verbose", "--intermission-ms",
        "--queue",       "--session-rounds", "--party-rate",
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (strstr(text, opts[i]) == NULL)
            fail_msg("--help does not mention %s", opts[i]);
    free(text);
    unlink(out_path);
    unlink(err_path);
    e2e_cleanup(&s);
}

/* Nothing listens: the reports stay queued, the summary says so, exit 1. */
static void test_gamesim_service_down(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char dir[400];
    e2e_path(&s, "gs-down", dir, sizeof dir);
    /* Port 1 is privileged and unused here: connections are refused at once. */
    const char *args[] = {"--url", "http://127.0.0.1:1", "--keys", s.config, "--rounds", "3",
                          "--state-dir", dir, "--wait-ms", "300", "--quiet", NULL};
    json_t *sum = NULL;
    char err[4096];
    int code = run_gamesim(&s, args, &sum, err, sizeof err);
    if (code != 1 || sum == NULL)
        fail_msg("gamesim exited %d: %s", code, err);
    assert_false(json_is_true(json_object_get(sum, "ok")));
    assert_int_equal(jint(sum, "rounds_made"), 3);
    assert_int_equal(jint(sum, "reports_acked"), 0);
    assert_int_equal(jint(sum, "queued_left"), 3);
    assert_true(jint(sum, "send_failures") >= 1);
    remove_state(dir, sum);
    json_decref(sum);
    e2e_cleanup(&s);
}

/* SIGINT: the run stops, flushes what it made, prints the summary and exits 1. */
static void test_gamesim_interrupt(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--default-pool", "default", NULL};
    assert_int_equal(e2e_init(&s), 0);
    assert_int_equal(e2e_start(&s, extra), 0);
    char dir[400], out_path[400], err_path[400];
    e2e_path(&s, "gs-int", dir, sizeof dir);
    e2e_path(&s, "int.out", out_path, sizeof out_path);
    e2e_path(&s, "int.err", err_path, sizeof err_path);
    const char *args[] = {"--url",  s.url, "--keys",    s.config, "--rounds", "100000",
                          "--pace-ms", "5", "--state-dir", dir,   "--quiet",  NULL};
    pid_t pid = spawn_gamesim(args, out_path, err_path);
    /* Let it play a few rounds (an ASan build starts slowly). */
    struct timespec ts = {1, 500000000};
    nanosleep(&ts, NULL);
    assert_int_equal(kill(pid, SIGINT), 0);
    assert_int_equal(wait_exit(pid), 1);
    char *text = e2e_slurp(out_path, NULL);
    json_t *sum = json_loads(text, 0, NULL);
    if (sum == NULL)
        fail_msg("no summary; stderr: %s", e2e_slurp(err_path, NULL));
    free(text);
    assert_true(json_is_true(json_object_get(sum, "interrupted")));
    assert_false(json_is_true(json_object_get(sum, "ok")));
    json_int_t made = jint(sum, "rounds_made");
    assert_true(made >= 1 && made < 100000);
    assert_int_equal(jint(sum, "reports_acked"), made);
    assert_int_equal(jint(sum, "queued_left"), 0);
    remove_state(dir, sum);
    json_decref(sum);
    unlink(out_path);
    unlink(err_path);
    int st = -1;
    assert_int_equal(e2e_stop(&s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gamesim_run),       cmocka_unit_test(test_gamesim_queue),
        cmocka_unit_test(test_gamesim_usage),     cmocka_unit_test(test_gamesim_service_down),
        cmocka_unit_test(test_gamesim_interrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
