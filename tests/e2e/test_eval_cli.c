/*
 * Tuning and evaluating through the real binary (docs/EVAL.md): `tune`'s configuration read
 * back by replay, eval, fit and sim (--params FILE) and taken by POST /v1/pools, its held-out
 * figures exactly eval's; the small log on which an unguarded search overfits and the gate
 * keeps the defaults; the knobs searched per model, option and log; --skip-invalid on every
 * folding command; eval --predictions-out and `compare` against a direct computation of the
 * paired standard error; fit's figures (draws left out) and its held-out rounds equal to
 * replay's on an odd-length log.
 */
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"

/* The JSON file at @p path (fails the test when it is not JSON). */
static json_t *load(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (j == NULL)
        fail_msg("%s: %s", path, je.text);
    return j;
}

/* The value at the dotted @p path ("best.held_out.logloss") of @p j, or NULL. */
static json_t *at(const json_t *j, const char *path)
{
    char part[64];
    const json_t *v = j;
    while (v != NULL && *path != '\0') {
        size_t n = strcspn(path, ".");
        assert_true(n < sizeof part);
        memcpy(part, path, n);
        part[n] = '\0';
        v = json_object_get(v, part);
        path += n + (path[n] == '.');
    }
    return (json_t *)v;
}

static double num(const json_t *j, const char *path)
{
    const json_t *v = at(j, path);
    if (!json_is_number(v))
        fail_msg("%s is not a number", path);
    return json_number_value(v);
}

/* The number at @p path of the JSON file @p file. */
static double file_num(const char *file, const char *path)
{
    json_t *j = load(file);
    double x = num(j, path);
    json_decref(j);
    return x;
}

/* `evenodds sim` with @p args writing its rounds to @p out. */
static void simulate(const char *args, const char *out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "sim %s --rounds-out '%s'", args, out);
    assert_int_equal(e2e_run_stdout(cmd, "/dev/null"), 0);
}

/* Decided rounds (not draws) among lines [from, to) of @p path. */
static size_t decided(const char *path, size_t from, size_t to)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    static char line[65536];
    size_t pos = 0, n = 0;
    while (fgets(line, sizeof line, f)) {
        if (pos >= from && pos < to && strstr(line, "\"winner\":\"draw\"") == NULL)
            n++;
        pos++;
    }
    fclose(f);
    return n;
}

/* Line @p i (from 0) of @p path, without its newline, into @p out. */
static void line_of(const char *path, size_t i, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    for (size_t k = 0; k <= i; k++)
        assert_non_null(fgets(out, (int)cap, f));
    fclose(f);
    out[strcspn(out, "\n")] = '\0';
}

/* Copies lines [0, n) of @p from to @p to. */
static void head(const char *from, const char *to, size_t n)
{
    FILE *f = fopen(from, "r"), *g = fopen(to, "w");
    assert_true(f != NULL && g != NULL);
    static char line[65536];
    for (size_t i = 0; i < n && fgets(line, sizeof line, f); i++)
        fputs(line, g);
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

/* ---- tune's round trip ---- */

/* `sim` with the configuration spelled as --model and --param options and with --params
 * @p cfgpath gives the same bytes. */
static void expect_sim_same(const e2e_server *s, const json_t *config, const char *cfgpath)
{
    char a[400], b[400], args[4096];
    e2e_path(s, "sim_a.json", a, sizeof a);
    e2e_path(s, "sim_b.json", b, sizeof b);
    const char *base = "sim --seed 4 --rounds 300 --players 40 --team 4 --format json";
    int n = snprintf(args, sizeof args, "%s --model %s", base,
                     json_string_value(json_object_get(config, "model")));
    const char *key;
    json_t *v;
    json_object_foreach(json_object_get(config, "params"), key, v)
    {
        if (json_is_string(v))
            n += snprintf(args + n, sizeof args - (size_t)n, " --param %s=%s", key,
                          json_string_value(v));
        else if (json_is_integer(v))
            n += snprintf(args + n, sizeof args - (size_t)n, " --param %s=%lld", key,
                          (long long)json_integer_value(v));
        else
            n += snprintf(args + n, sizeof args - (size_t)n, " --param %s=%.17g", key,
                          json_number_value(v));
    }
    assert_true(n < (int)sizeof args);
    assert_int_equal(e2e_run_stdout(args, a), 0);
    snprintf(args, sizeof args, "%s --params '%s'", base, cfgpath);
    assert_int_equal(e2e_run_stdout(args, b), 0);
    size_t la, lb;
    char *x = e2e_slurp(a, &la), *y = e2e_slurp(b, &lb);
    assert_true(la > 0);
    assert_int_equal(la, lb);
    assert_memory_equal(x, y, la);
    free(x);
    free(y);
}

/* The configuration @p cfgpath is a POST /v1/pools body as it is, and GET /v1/pools lists the
 * pool with exactly its parameters. */
static void expect_post_takes(e2e_server *s, const char *cfgpath, const json_t *config)
{
    assert_int_equal(e2e_start(s, NULL), 0);
    char *body = e2e_slurp(cfgpath, NULL);
    e2e_create_pool(s, body);
    free(body);
    e2e_resp r;
    assert_int_equal(e2e_call(s, "GET", "/v1/pools", s->admin_key, NULL, &r), 0);
    json_t *list = e2e_json(&r);
    e2e_resp_free(&r);
    json_t *pool = json_array_get(json_object_get(list, "pools"), 0);
    assert_string_equal(json_string_value(json_object_get(pool, "name")), "tuned");
    assert_true(json_equal(json_object_get(pool, "params"), json_object_get(config, "params")));
    json_decref(list);
    int st = -1;
    assert_int_equal(e2e_stop(s, SIGTERM, 20000, &st), 0);
    assert_int_equal(st, 0);
}

/* `evenodds tune` (docs/EVAL.md "Tuning") from a start whose scale does not fit the world
 * (beta three times a new pool's, which fits the simulator's worlds): the configuration it prints is the same bytes twice, replay, eval and fit read it back
 * (--params) and score the held-out rounds exactly as tune reported, sim runs it as the same
 * options spelled out, and the service takes it as a POST /v1/pools body. Training and
 * held-out rounds are eval's cuts. Bad usage and bad files exit 2 naming the option or
 * field. */
static void test_tune_round_trip(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], cfg[400], cfg2[400], rep[400], out[400], bad[400], args[2048];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "tuned.json", cfg, sizeof cfg);
    e2e_path(&s, "tuned2.json", cfg2, sizeof cfg2);
    e2e_path(&s, "report.json", rep, sizeof rep);
    e2e_path(&s, "out.json", out, sizeof out);
    e2e_path(&s, "bad.json", bad, sizeof bad);
    simulate("--seed 3 --rounds 1600 --players 120 --team 6 --balancer random", world);
    snprintf(args, sizeof args,
             "tune --model trueskill --param beta=25 --budget 25 --name tuned --report '%s' "
             "--format json '%s'",
             rep, world);
    assert_int_equal(e2e_run_stdout(args, cfg), 0);
    assert_int_equal(e2e_run_stdout(args, cfg2), 0);
    size_t l1, l2;
    char *a = e2e_slurp(cfg, &l1), *b = e2e_slurp(cfg2, &l2);
    assert_int_equal(l1, l2);
    assert_memory_equal(a, b, l1);
    free(a);
    free(b);

    json_t *r = load(rep), *c = load(cfg);
    assert_string_equal(json_string_value(at(r, "chosen")), "best");
    /* the descent's budget, then one fold a knob */
    assert_true(num(r, "folds") <= 25 + (double)json_array_size(at(r, "knobs")));
    double held = num(r, "best.held_out.logloss");
    if (!(held < num(r, "start.held_out.logloss")))
        fail_msg("tune did not improve held out: %g -> %g", num(r, "start.held_out.logloss"), held);
    assert_true(num(r, "gain") > num(r, "threshold"));
    assert_true(num(r, "threshold") == num(r, "start.held_out.logloss_se"));
    assert_int_equal((size_t)num(r, "best.train.rounds"), decided(world, 160, 800));
    assert_int_equal((size_t)num(r, "best.held_out.rounds"), decided(world, 800, 1600));
    assert_string_equal(json_string_value(at(c, "name")), "tuned");
    assert_string_equal(json_string_value(at(c, "model")), "trueskill");
    assert_int_equal(json_object_size(c), 3);
    assert_true(fabs(num(c, "params.beta") / num(r, "best.params.beta") - 1.0) < 1e-9);

    snprintf(args, sizeof args, "eval --params '%s' --eval-from 0.5 --format json '%s'", cfg,
             world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    assert_true(file_num(out, "logloss") == held);
    assert_true(file_num(out, "counted") == num(r, "best.held_out.rounds"));
    snprintf(args, sizeof args, "replay --params '%s' --eval-from 0.5 '%s'", cfg, world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    assert_true(file_num(out, "logloss") == held);
    snprintf(args, sizeof args,
             "fit --params '%s' --eval-from 0.5 --format json '%s' "
             "2>/dev/null",
             cfg, world);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    assert_true(file_num(out, "holdout.online_continuing.logloss") == held);
    expect_sim_same(&s, c, cfg);
    expect_post_takes(&s, cfg, c);

    /* Bad usage and bad files: exit 2, the option or the field named. */
    static const struct {
        const char *cmd, *args, *says;
    } usage[] = {
        {"tune", "--train 0.7", "--train: gone"},
        {"tune", "--burn-in 0.6 --eval-from 0.5", "--burn-in (0.6) must be below"},
        {"tune", "--model synelo --tune nope", "--tune nope: not a parameter of model \"synelo\""},
        {"tune", "--model elo --tune team", "--tune team: a choice"},
        {"tune", "--model trueskill --param bias=off --tune bias_prior",
         "--tune bias_prior: the bias is off"},
        {"tune", "--model elo --param presence=off --tune presence_prior",
         "--tune presence_prior: presence is off"},
        {"tune", "--budget 0", "--budget"},
        {"tune", "--gate -1", "--gate"},
        {"tune", "--metric auc", "--metric: expected logloss or brier"},
        {"tune", "--name 'a b'", "--name"},
        {"eval", "--model elo --params PARAMS", "--model elo: --params"},
        {"replay", "--params /nonexistent.json", "--params: cannot read"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        char opt[600];
        const char *p = strstr(usage[i].args, "PARAMS");
        if (p != NULL)
            snprintf(opt, sizeof opt, "%.*s'%s'", (int)(p - usage[i].args), usage[i].args, cfg);
        else
            snprintf(opt, sizeof opt, "%s", usage[i].args);
        e2e_expect_usage(usage[i].cmd, opt, world, out, usage[i].says);
    }
    static const struct {
        const char *text, *says;
    } files[] = {
        {"{\"model\":\"trueskill\",\"params\":{\"beta\":-1}}", "params.beta"},
        {"{\"model\":\"nope\"}", "model"},
        {"{\"modle\":\"elo\"}", "modle: unknown field"},
        {"{\"model\":\"elo\",\"params\":[]}", "params"},
        {"[1]", "expected a JSON object"},
        {"{\"model\":", "invalid JSON"},
    };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        FILE *f = fopen(bad, "w");
        assert_non_null(f);
        fputs(files[i].text, f);
        assert_int_equal(fclose(f), 0);
        snprintf(args, sizeof args, "--params '%s'", bad);
        e2e_expect_usage("eval", args, world, out, files[i].says);
    }
    json_decref(r);
    json_decref(c);
    e2e_cleanup(&s);
}

/* ---- the small log, and the knobs searched ---- */

/* The report of `tune ARGS --report` on @p log (the configuration to /dev/null). */
static json_t *tune_report(const e2e_server *s, const char *args, const char *log)
{
    char rep[400], cmd[1200];
    e2e_path(s, "small_report.json", rep, sizeof rep);
    snprintf(cmd, sizeof cmd, "tune %s --report '%s' --format json '%s' 2>/dev/null", args, rep,
             log);
    assert_int_equal(e2e_run_stdout(cmd, "/dev/null"), 0);
    return load(rep);
}

/* The knobs a report searched, comma-joined, into @p out. */
static void knobs_of(const json_t *r, char *out, size_t cap)
{
    size_t i, n = 0;
    json_t *k;
    out[0] = '\0';
    json_array_foreach(at(r, "knobs"), i, k) n +=
        (size_t)snprintf(out + n, cap - n, "%s%s", i ? "," : "", json_string_value(k));
}

static void expect_knobs(const e2e_server *s, const char *args, const char *log, const char *want)
{
    char got[200];
    json_t *r = tune_report(s, args, log);
    knobs_of(r, got, sizeof got);
    if (strcmp(got, want) != 0)
        fail_msg("tune %s: knobs %s, expected %s", args, got, want);
    json_decref(r);
}

/* A configuration tune prints with the bias and presence off says so ("off"): read back as
 * --params over a new pool's defaults (both on) it scores @p log as the options themselves. */
static void expect_off_reads_off(const e2e_server *s, const char *log)
{
    char cfg[400], out[400], args[1200];
    e2e_path(s, "off.json", cfg, sizeof cfg);
    e2e_path(s, "off-eval.json", out, sizeof out);
    const char *off = "--model trueskill --param bias=off --param presence=off";
    snprintf(args, sizeof args, "tune %s --budget 2 --format json '%s' 2>/dev/null", off, log);
    assert_int_equal(e2e_run_stdout(args, cfg), 0);
    json_t *c = load(cfg);
    assert_string_equal(json_string_value(at(c, "params.bias")), "off");
    assert_string_equal(json_string_value(at(c, "params.presence")), "off");
    json_decref(c);
    snprintf(args, sizeof args, "eval %s --format json '%s'", off, log);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    double want = file_num(out, "logloss");
    snprintf(args, sizeof args, "eval --params '%s' --format json '%s'", cfg, log);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    assert_true(file_num(out, "logloss") == want);
}

/* On 300 rounds (60 players, 2v2 to 8v8) Elo's search without the gate drives k to about 900
 * and loses more than 0.1 in held-out log loss; with the default gate the answer's held-out
 * log loss stays within 0.005 of the defaults'. The default knobs follow the model, its
 * options and the log: the start level (the Gaussian models' mu, Elo's r0 with team=sum) only
 * with presence off and partial play or unequal teams, Glicko-2's start deviation and
 * volatility (not τ), hive's commander step only with commanders, the bias's knobs with the
 * bias on, presence's with presence on and partial play or unequal teams. */
static void test_tune_small_log(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char small[400], even[400];
    e2e_path(&s, "small.jsonl", small, sizeof small);
    e2e_path(&s, "even.jsonl", even, sizeof even);
    simulate("--seed 8 --rounds 300 --players 60 --team-min 2 --team-max 8 --balancer random",
             small);
    json_t *r0 = tune_report(&s, "--model elo --gate 0", small);
    double start = num(r0, "start.held_out.logloss");
    if (!(num(r0, "best.held_out.logloss") > start + 0.1))
        fail_msg("without the gate the search no longer overfits this log (%g against %g): "
                 "the case tests nothing",
                 num(r0, "best.held_out.logloss"), start);
    json_decref(r0);
    json_t *r1 = tune_report(&s, "--model elo", small);
    const char *chosen = json_string_value(at(r1, "chosen"));
    double got =
        num(r1, strcmp(chosen, "best") == 0 ? "best.held_out.logloss" : "start.held_out.logloss");
    if (!(got <= num(r1, "start.held_out.logloss") + 0.005))
        fail_msg("tune overfits a small log: held out %g against the defaults' %g", got,
                 num(r1, "start.held_out.logloss"));
    assert_true(num(r1, "start.held_out.logloss_se") > 0.0);
    assert_true(num(r1, "threshold") == num(r1, "start.held_out.logloss_se"));
    json_decref(r1);

    /* Old pools' options (no bias, no presence): the start level where strengths are sums. */
    const char *old = "--param bias=off --param presence=off --budget 2";
    char args[200];
    static const struct {
        const char *model, *more, *knobs;
    } olds[] = {
        {"elo", "--param team=mean", "k,k_new"},
        {"elo", "", "k,k_new,r0"},
        {"glicko2", "", "rd0,vol0,rd_max"},
        {"hive", "", "alpha"},
        {"trueskill", "", "beta,tau,draw_probability,mu"},
        {"synelo", "", "theta,k_max,k_min,sigma"},
        {"elo", "--tune k", "k"},
    };
    for (size_t i = 0; i < sizeof olds / sizeof olds[0]; i++) {
        snprintf(args, sizeof args, "--model %s %s %s", olds[i].model, olds[i].more, old);
        expect_knobs(&s, args, small, olds[i].knobs);
    }
    expect_off_reads_off(&s, small);
    /* A new pool's (map bias and presence on): the bias's and presence's knobs, and no start
     * level (strengths are relative to it); one of the two off, its knobs go. */
    expect_knobs(&s, "--model elo --budget 2", small,
                 "k,k_new,bias_strength,bias_prior,presence_strength,presence_prior");
    expect_knobs(&s, "--model trueskill --param bias=off --budget 2", small,
                 "beta,tau,draw_probability,presence_strength,presence_prior");
    expect_knobs(&s, "--model wenglin --param presence=off --budget 2", small,
                 "beta,tau,mu,bias_strength,bias_prior");
    simulate("--seed 9 --rounds 200 --players 40 --team 4 --partial 0 --balancer random", even);
    /* Equal full teams: neither presence nor the start level can do anything. */
    expect_knobs(&s, "--model trueskill --budget 2", even,
                 "beta,tau,draw_probability,bias_strength,bias_prior");
    expect_knobs(&s, "--model trueskill --param presence=off --param bias=off --budget 2", even,
                 "beta,tau,draw_probability");
    e2e_cleanup(&s);
}

/* ---- --skip-invalid ---- */

/* The first 200 lines of @p world into @p clean, and into @p dirty with bad lines between
 * them: an invalid winner after line 50, a line that is not JSON after 100, a repeat of round
 * 3's id (another winner) after 120, a player on both teams after 150, and a blank line. */
static void write_logs(const char *world, const char *clean, const char *dirty)
{
    head(world, clean, 200);
    FILE *f = fopen(clean, "r"), *g = fopen(dirty, "w");
    assert_true(f != NULL && g != NULL);
    static char line[65536], third[65536];
    line_of(clean, 2, third, sizeof third);
    char *w = strstr(third, "\"winner\":\"");
    assert_non_null(w);
    w[10] = w[10] == 'A' ? 'B' : 'A';
    for (size_t i = 0; fgets(line, sizeof line, f); i++) {
        fputs(line, g);
        if (i == 49)
            fputs("{\"id\":\"bad1\",\"winner\":\"C\",\"A\":[\"a\"],\"B\":[\"b\"]}\n", g);
        if (i == 99)
            fputs("not json\n\n", g);
        if (i == 119)
            fprintf(g, "%s\n", third);
        if (i == 149)
            fputs("{\"id\":\"bad2\",\"winner\":\"A\",\"A\":[\"a\"],\"B\":[\"a\"]}\n", g);
    }
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

/* `CMD ARGS` on @p log; exit status, stdout into @p out, stderr into @p errf. */
static int run_cmd(const char *cmd, const char *args, const char *log, const char *out,
                   const char *errf)
{
    char line[1400];
    snprintf(line, sizeof line, "%s %s '%s' 2> '%s'", cmd, args, log, errf);
    return e2e_run_stdout(line, out);
}

/* One malformed-and-duplicate log through replay, eval, fit and tune: without --skip-invalid
 * each exits 1 naming the first bad line and its field; with it each exits 0, tells the first
 * reasons and counts them ("skipped":{"invalid":3,"duplicates":1}), keeps the first of the
 * repeated round, and scores exactly what the clean log scores. */
static void test_skip_invalid(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], clean[400], dirty[400], out[400], out2[400], errf[400];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "clean.jsonl", clean, sizeof clean);
    e2e_path(&s, "dirty.jsonl", dirty, sizeof dirty);
    e2e_path(&s, "out.json", out, sizeof out);
    e2e_path(&s, "out2.json", out2, sizeof out2);
    e2e_path(&s, "err.txt", errf, sizeof errf);
    simulate("--seed 6 --rounds 200 --players 50 --team 5 --balancer random", world);
    write_logs(world, clean, dirty);
    static const struct {
        const char *cmd, *args, *figure;
    } cmds[] = {
        {"replay", "--model trueskill", "logloss"},
        {"eval", "--model trueskill --format json", "logloss"},
        {"fit", "--model elo --format json", "train.logloss"},
        {"tune", "--model elo --budget 3 --format json", NULL},
    };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[200];
        assert_int_equal(run_cmd(cmds[i].cmd, cmds[i].args, dirty, out, errf), 1);
        char *msg = e2e_slurp(errf, NULL);
        if (strstr(msg, "dirty.jsonl:51:") == NULL || strstr(msg, "\"winner\"") == NULL)
            fail_msg("%s without --skip-invalid: %s", cmds[i].cmd, msg);
        free(msg);
        snprintf(args, sizeof args, "%s --skip-invalid", cmds[i].args);
        assert_int_equal(run_cmd(cmds[i].cmd, args, dirty, out, errf), 0);
        msg = e2e_slurp(errf, NULL);
        if (strstr(msg, "skipped") == NULL || strstr(msg, "dirty.jsonl:102:") == NULL ||
            strstr(msg, "dirty.jsonl:155:") == NULL)
            fail_msg("%s --skip-invalid: %s", cmds[i].cmd, msg);
        free(msg);
        if (cmds[i].figure == NULL)
            continue; /* tune prints the configuration; its report is checked below */
        json_t *j = load(out);
        assert_int_equal((int)num(j, "skipped.invalid"), 3);
        assert_int_equal((int)num(j, "skipped.duplicates"), 1);
        assert_int_equal(run_cmd(cmds[i].cmd, cmds[i].args, clean, out2, errf), 0);
        if (num(j, cmds[i].figure) != file_num(out2, cmds[i].figure))
            fail_msg("%s --skip-invalid scores %.17g, the clean log %.17g", cmds[i].cmd,
                     num(j, cmds[i].figure), file_num(out2, cmds[i].figure));
        json_decref(j);
    }
    json_t *r = tune_report(&s, "--model elo --budget 3 --skip-invalid", dirty);
    assert_int_equal((int)num(r, "skipped.invalid"), 3);
    assert_int_equal((int)num(r, "skipped.duplicates"), 1);
    json_decref(r);
    e2e_cleanup(&s);
}

/* ---- predictions and compare ---- */

typedef struct pair_stats {
    size_t n;
    double ll_a, ll_diff, ll_se, br_diff, br_se;
} pair_stats;

static double clamped_loss(double p, bool a_won)
{
    double hit = a_won ? p : 1.0 - p;
    hit = hit < 1e-15 ? 1e-15 : hit > 1.0 - 1e-15 ? 1.0 - 1e-15 : hit;
    return -log(hit);
}

/* The paired differences B - A computed here from the two files (same rounds, same order),
 * draws left out: the mean and the sample deviation over √n. */
static pair_stats direct(const char *pa, const char *pb)
{
    FILE *fa = fopen(pa, "r"), *fb = fopen(pb, "r");
    assert_true(fa != NULL && fb != NULL);
    char la[1024], lb[1024];
    double sl = 0, sl2 = 0, sb = 0, sb2 = 0, sa = 0;
    size_t n = 0;
    while (fgets(la, sizeof la, fa) && fgets(lb, sizeof lb, fb)) {
        json_error_t je;
        json_t *x = json_loads(la, 0, &je), *y = json_loads(lb, 0, &je);
        assert_true(x != NULL && y != NULL);
        assert_string_equal(json_string_value(at(x, "id")), json_string_value(at(y, "id")));
        const char *o = json_string_value(at(x, "outcome"));
        if (strcmp(o, "draw") != 0) {
            bool a_won = strcmp(o, "A") == 0;
            double p = num(x, "p_a"), q = num(y, "p_a"), w = a_won ? 1.0 : 0.0;
            double dl = clamped_loss(q, a_won) - clamped_loss(p, a_won);
            double db = (q - w) * (q - w) - (p - w) * (p - w);
            sa += clamped_loss(p, a_won);
            sl += dl;
            sl2 += dl * dl;
            sb += db;
            sb2 += db * db;
            n++;
        }
        json_decref(x);
        json_decref(y);
    }
    fclose(fa);
    fclose(fb);
    pair_stats st = {n, sa / (double)n, sl / (double)n, 0, sb / (double)n, 0};
    st.ll_se = sqrt((sl2 - (double)n * st.ll_diff * st.ll_diff) / (double)(n - 1) / (double)n);
    st.br_se = sqrt((sb2 - (double)n * st.br_diff * st.br_diff) / (double)(n - 1) / (double)n);
    return st;
}

static void expect_close(const char *what, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
        fail_msg("%s: %.17g, computed directly %.17g", what, got, want);
}

/* Writes @p path as @p from with line @p skip left out, or (@p flip) its outcome changed, or
 * (@p twice) written twice. */
static void variant(const char *from, const char *path, size_t which, int how)
{
    FILE *f = fopen(from, "r"), *g = fopen(path, "w");
    assert_true(f != NULL && g != NULL);
    char line[1024];
    for (size_t i = 0; fgets(line, sizeof line, f); i++) {
        if (i == which && how == 0)
            continue;
        if (i == which && how == 1) {
            char *o = strstr(line, "\"outcome\":\"");
            assert_non_null(o);
            memcpy(o + 11, o[11] == 'A' ? "B\"}\n" : "A\"}\n", 5);
        }
        fputs(line, g);
        if (i == which && how == 2)
            fputs(line, g);
    }
    fclose(f);
    assert_int_equal(fclose(g), 0);
}

/* eval --predictions-out writes one line per scored round (draws too) whose figures are
 * eval's; `compare` of two models' files gives the paired difference and standard error a
 * direct computation gives, a verdict that follows them, and an error naming the round when
 * the files do not hold the same rounds. */
static void test_compare(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], pa[400], pb[400], pc[400], ev[400], out[400], errf[400], args[1400];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "a.jsonl", pa, sizeof pa);
    e2e_path(&s, "b.jsonl", pb, sizeof pb);
    e2e_path(&s, "c.jsonl", pc, sizeof pc);
    e2e_path(&s, "eval.json", ev, sizeof ev);
    e2e_path(&s, "out.json", out, sizeof out);
    e2e_path(&s, "err.txt", errf, sizeof errf);
    simulate("--seed 2 --rounds 1000 --players 80 --team 5 --balancer random --draws 40", world);
    snprintf(args, sizeof args,
             "eval --model trueskill --eval-from 0.4 --predictions-out '%s' "
             "--format json '%s'",
             pa, world);
    assert_int_equal(e2e_run_stdout(args, ev), 0);
    snprintf(args, sizeof args,
             "eval --model elo --eval-from 0.4 --predictions-out '%s' "
             "--format json '%s'",
             pb, world);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 0);
    size_t len = 0, lines = 0;
    char *text = e2e_slurp(pa, &len);
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    free(text);
    assert_int_equal(lines, 600);
    assert_true(file_num(ev, "scored") == 600);

    snprintf(args, sizeof args, "compare --format json '%s' '%s'", pa, pb);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    json_t *j = load(out);
    pair_stats d = direct(pa, pb);
    assert_int_equal((size_t)num(j, "counted"), d.n);
    assert_true(num(j, "draws") > 0);
    assert_int_equal((size_t)num(j, "counted") + (size_t)num(j, "draws"), 600);
    expect_close("A's log loss", num(j, "logloss.a"), file_num(ev, "logloss"), 1e-9);
    expect_close("A's log loss", num(j, "logloss.a"), d.ll_a, 1e-9);
    expect_close("log loss B - A", num(j, "logloss.diff"), d.ll_diff, 1e-9);
    expect_close("its standard error", num(j, "logloss.se"), d.ll_se, 1e-7);
    expect_close("Brier B - A", num(j, "brier.diff"), d.br_diff, 1e-9);
    expect_close("its standard error", num(j, "brier.se"), d.br_se, 1e-7);
    const char *verdict = json_string_value(at(j, "verdict"));
    const char *want = fabs(d.ll_diff) > 2 * d.ll_se ? (d.ll_diff < 0 ? "B" : "A") : "neither";
    assert_string_equal(verdict, want);
    json_decref(j);

    snprintf(args, sizeof args, "compare --format json '%s' '%s'", pa, pa);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    j = load(out);
    assert_true(num(j, "logloss.diff") == 0.0);
    assert_string_equal(json_string_value(at(j, "verdict")), "neither");
    json_decref(j);
    snprintf(args, sizeof args, "compare --format table '%s' '%s'", pa, pb);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    text = e2e_slurp(out, NULL);
    assert_non_null(strstr(text, "verdict:"));
    free(text);

    /* Rounds that do not match: the round named. */
    char id[1024];
    line_of(pb, 7, id, sizeof id);
    json_error_t je;
    json_t *line = json_loads(id, 0, &je);
    snprintf(id, sizeof id, "round \"%s\"", json_string_value(at(line, "id")));
    json_decref(line);
    static const char *const says[] = {"is not in", "another outcome", "again"};
    for (int how = 0; how < 3; how++) {
        variant(pb, pc, 7, how);
        snprintf(args, sizeof args, "compare '%s' '%s' 2> '%s'", pa, pc, errf);
        assert_int_equal(e2e_run_stdout(args, "/dev/null"), 1);
        char *msg = e2e_slurp(errf, NULL);
        if (strstr(msg, id) == NULL || strstr(msg, says[how]) == NULL)
            fail_msg("compare with a mismatch (%d): %s", how, msg);
        free(msg);
    }
    FILE *f = fopen(pc, "w");
    assert_non_null(f);
    fputs("{\"id\":\"r1\",\"p_a\":1.5,\"outcome\":\"A\"}\n", f);
    assert_int_equal(fclose(f), 0);
    snprintf(args, sizeof args, "compare '%s' '%s' 2> '%s'", pa, pc, errf);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 1);
    text = e2e_slurp(errf, NULL);
    assert_non_null(strstr(text, "c.jsonl:1: \"p_a\""));
    free(text);
    snprintf(args, sizeof args, "compare '%s' 2> '%s'", pa, errf);
    assert_int_equal(e2e_run_stdout(args, "/dev/null"), 2);
    e2e_cleanup(&s);
}

/* ---- fit's figures ---- */

/* On an odd-length log, fit's held-out rounds are replay's for the same fraction
 * (--holdout F is --eval-from 1 - F): the online pool continuing through them scores exactly
 * replay's figures; its training figures leave draws out and are labelled so. */
static void test_fit_figures(void **state)
{
    (void)state;
    e2e_server s;
    assert_int_equal(e2e_init(&s), 0);
    char world[400], odd[400], out[400], out2[400], ev[400], args[1400];
    e2e_path(&s, "world.jsonl", world, sizeof world);
    e2e_path(&s, "odd.jsonl", odd, sizeof odd);
    e2e_path(&s, "fit.json", out, sizeof out);
    e2e_path(&s, "fit2.json", out2, sizeof out2);
    e2e_path(&s, "eval.json", ev, sizeof ev);
    simulate("--seed 5 --rounds 1000 --players 80 --team 5 --balancer random --draws 40", world);
    head(world, odd, 999);
    snprintf(args, sizeof args, "fit --model elo --holdout 0.5 --format json '%s' 2>/dev/null",
             odd);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    snprintf(args, sizeof args, "fit --model elo --eval-from 0.5 --format json '%s' 2>/dev/null",
             odd);
    assert_int_equal(e2e_run_stdout(args, out2), 0);
    snprintf(args, sizeof args, "eval --model elo --eval-from 0.5 --format json '%s'", odd);
    assert_int_equal(e2e_run_stdout(args, ev), 0);
    json_t *j = load(out), *k = load(out2);
    assert_true(num(j, "holdout.online_continuing.logloss") == file_num(ev, "logloss"));
    assert_true(num(j, "holdout.online_continuing.rounds") == file_num(ev, "counted"));
    assert_true(json_equal(at(j, "holdout"), at(k, "holdout")));
    assert_int_equal((size_t)num(j, "train_rounds"), 499); /* floor(0.5 · 999) */
    assert_int_equal((size_t)num(j, "train.rounds"), decided(odd, 0, 499));
    assert_true(decided(odd, 0, 499) < 499); /* the log has draws to leave out */
    double ll = num(j, "train.logloss");
    assert_true(ll > 0.0 && ll < 0.69);
    assert_null(at(j, "train_logloss"));
    /* Presence's π (on, as in new pools): the sim's truth weighs members by their time, so a
     * fuller team is stronger and both estimates see it from the training rounds. */
    assert_true(num(j, "presence.fit") > 0.05 && num(j, "presence.online") > 0.05);
    assert_true(num(j, "presence.online_rounds") > 0 && num(j, "presence.online_rounds") <= 499);
    assert_true(num(j, "presence.online_uncertainty") > 0.0);
    json_decref(j);
    json_decref(k);
    /* Without the times every 5-a-side round has equal presence: nothing to learn. */
    snprintf(args, sizeof args,
             "fit --model elo --holdout 0.5 --no-weights --format json '%s' 2>/dev/null", odd);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    j = load(out);
    assert_true(num(j, "presence.fit") == 0.0 && num(j, "presence.online") == 0.0);
    assert_true(num(j, "presence.online_rounds") == 0.0);
    assert_true(json_is_null(at(j, "presence.online_uncertainty")));
    json_decref(j);
    snprintf(args, sizeof args,
             "fit --model elo --param presence=off --format json '%s' 2>/dev/null", odd);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    j = load(out);
    assert_null(at(j, "presence"));
    json_decref(j);
    snprintf(args, sizeof args, "fit --model elo --holdout 0.5 --format table '%s' 2>/dev/null",
             odd);
    assert_int_equal(e2e_run_stdout(args, out), 0);
    char *text = e2e_slurp(out, NULL);
    assert_non_null(strstr(text, "train: fitted values"));
    assert_non_null(strstr(text, "draws left out"));
    assert_non_null(strstr(text, "the fit's own"));
    assert_non_null(strstr(text, "presence pi (logits a player): fit "));
    free(text);
    e2e_expect_usage("fit", "--holdout 0.2 --eval-from 0.8", odd, out2, "say the same thing");
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tune_round_trip), cmocka_unit_test(test_tune_small_log),
        cmocka_unit_test(test_skip_invalid),    cmocka_unit_test(test_compare),
        cmocka_unit_test(test_fit_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
