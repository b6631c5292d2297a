/* Replay benchmark: a rating model over generated rounds, in memory.
 *
 * Prints rounds/s (and ns per player update) for four ways of feeding the pool:
 *   apply     eo_pool_apply() on eo_round values (ids hashed per member): the path of
 *             `evenodds replay` after parsing (parsing excluded);
 *   handles   eo_pool_apply_handles() with ids resolved beforehand;
 *   json      eo_round_from_text() on canonical JSONL lines, then eo_pool_apply();
 *   jsonl     the whole log as JSONL text through eo_jsonl_reader (an in-memory FILE), then
 *             eo_pool_apply(): `evenodds replay`'s own loop without the disk (parsing included,
 *             duplicate round ids checked as replay does).
 * Each figure is the best of --reps runs over a fresh pool. Usage:
 *   bench_replay [--rounds N] [--players P] [--team K] [--reps R] [--seed S] [--partial PM]
 * --only runs one of the four (repeatable); --cpu times with the thread's CPU clock.
 * --model and --param pick the model and the pool's parameters (default SynElo with what a new
 * pool gets, eo_pool_config_new(): map bias and presence on); --model all runs every
 * registered model with a new pool's parameters, one after the other, on the same rounds.
 * Pools created before the new defaults are measured with their parameters given, e.g.
 * --param bias=off --param presence=off --param theta=2400 for SynElo (docs/MODELS.md,
 * "Defaults of new pools"). With the map bias on the generated rounds get 8 maps in turn, and
 * the handles path, which takes no map, is left out.
 * --partial PM gives each member a partial-play `time` with chance PM per mille (default 0);
 * the handles path, which takes no weights, is then left out.
 * Defaults: 100000 rounds of 12v12 among 5000 players, 3 reps. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_pool.h"
#include "gen.h"

/* Wall time by default. With --cpu, the thread's CPU time instead: on a machine shared with
 * other jobs, time spent descheduled is then left out (cache contention is not). */
static clockid_t bench_clock = CLOCK_MONOTONIC;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(bench_clock, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A digest of the ratings of the players of the first rounds: keeps the optimiser from
 * dropping the work, and shows that the three paths agree. */
static uint64_t checksum(const eo_pool *pool, const eo_gen_log *log)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < log->n; i++) {
        for (int t = 0; t < 2; t++) {
            for (size_t j = 0; j < log->rounds[i].n[t]; j++) {
                eo_rating_view v;
                eo_pool_lookup(pool, log->rounds[i].team[t][j].id, 0, &v);
                uint64_t bits[2];
                memcpy(&bits[0], &v.mu, sizeof v.mu);
                memcpy(&bits[1], &v.sigma, sizeof v.sigma);
                h = (h ^ bits[0]) * 1099511628211u;
                h = (h ^ bits[1]) * 1099511628211u;
            }
        }
        if (i > 1000)
            break;
    }
    return h;
}

/* The pool configuration of every run (--model, --param). */
static eo_pool_config pool_cfg;

static eo_pool *fresh_pool(void)
{
    eo_pool *pool;
    if (eo_pool_create(&pool_cfg, &pool) != 0) {
        fprintf(stderr, "bench_replay: pool create failed\n");
        exit(1);
    }
    return pool;
}

static double run_apply(const eo_gen_log *log, uint64_t *sum)
{
    eo_pool *pool = fresh_pool();
    double t0 = now_s();
    for (size_t i = 0; i < log->n; i++) {
        eo_round_result res;
        if (eo_pool_apply(pool, &log->rounds[i], &res, NULL) != 0) {
            fprintf(stderr, "bench_replay: apply failed at round %zu\n", i);
            exit(1);
        }
    }
    double dt = now_s() - t0;
    *sum = checksum(pool, log);
    eo_pool_destroy(pool);
    return dt;
}

static double run_handles(const eo_gen_log *log, uint64_t *sum)
{
    eo_pool *pool = fresh_pool();
    size_t total = 0;
    for (size_t i = 0; i < log->n; i++)
        total += log->rounds[i].n[0] + log->rounds[i].n[1];
    eo_player_handle *h = malloc(total * sizeof *h);
    if (h == NULL)
        exit(1);
    size_t at = 0;
    for (size_t i = 0; i < log->n; i++)
        for (int t = 0; t < 2; t++)
            for (size_t j = 0; j < log->rounds[i].n[t]; j++)
                if (eo_pool_handle(pool, log->rounds[i].team[t][j].id, &h[at++]) != 0)
                    exit(1);
    double t0 = now_s();
    at = 0;
    for (size_t i = 0; i < log->n; i++) {
        const eo_round *r = &log->rounds[i];
        eo_round_result res;
        int64_t ended = r->ended_at != 0 ? r->ended_at : r->started_at;
        if (eo_pool_apply_handles(pool, h + at, r->n[0], h + at + r->n[0], r->n[1], r->winner,
                                  ended, &res, NULL) != 0) {
            fprintf(stderr, "bench_replay: apply_handles failed at round %zu\n", i);
            exit(1);
        }
        at += r->n[0] + r->n[1];
    }
    double dt = now_s() - t0;
    *sum = checksum(pool, log);
    free(h);
    eo_pool_destroy(pool);
    return dt;
}

/* `evenodds replay`'s loop (src/cli/cmd_replay.c) over the text in memory. */
static double run_jsonl(const eo_gen_log *log, const char *text, size_t len, uint64_t *sum)
{
    eo_pool *pool = fresh_pool();
    FILE *f = fmemopen((void *)text, len, "r");
    eo_jsonl_reader *rd = NULL;
    if (f == NULL || eo_jsonl_open(f, "bench", false, &rd) != 0) {
        fprintf(stderr, "bench_replay: cannot read the text in memory\n");
        exit(1);
    }
    char msg[256];
    size_t n = 0;
    double t0 = now_s();
    for (;;) {
        eo_round r;
        int rc = eo_jsonl_next(rd, &r, NULL, msg, sizeof msg);
        if (rc == 0)
            break;
        if (rc < 0) {
            fprintf(stderr, "bench_replay: %s\n", msg);
            exit(1);
        }
        eo_round_result res;
        rc = eo_pool_apply(pool, &r, &res, NULL);
        eo_round_free(&r);
        if (rc != 0)
            exit(1);
        n++;
    }
    double dt = now_s() - t0;
    if (n != log->n) {
        fprintf(stderr, "bench_replay: jsonl read %zu rounds of %zu\n", n, log->n);
        exit(1);
    }
    eo_jsonl_close(rd);
    fclose(f);
    *sum = checksum(pool, log);
    eo_pool_destroy(pool);
    return dt;
}

static double run_json(const eo_gen_log *log, const char *text, const size_t *off,
                       uint64_t *sum)
{
    eo_pool *pool = fresh_pool();
    double t0 = now_s();
    for (size_t i = 0; i < log->n; i++) {
        eo_round r;
        eo_round_error err;
        if (eo_round_from_text(text + off[i], off[i + 1] - off[i], &r, &err) != 0) {
            fprintf(stderr, "bench_replay: parse failed at round %zu: %s: %s\n", i, err.field,
                    err.message);
            exit(1);
        }
        eo_round_result res;
        int rc = eo_pool_apply(pool, &r, &res, NULL);
        eo_round_free(&r);
        if (rc != 0)
            exit(1);
    }
    double dt = now_s() - t0;
    *sum = checksum(pool, log);
    eo_pool_destroy(pool);
    return dt;
}

#define PATHS 4
static const char *const path_names[PATHS] = {"apply", "handles", "json", "jsonl"};

/* The generated log and its JSONL text (built only when a parsing path runs). */
typedef struct bench_input {
    const eo_gen_log *log;
    const char *text;
    size_t len;
    const size_t *off;
    unsigned long long rounds, team, players, seed, reps;
} bench_input;

/* Runs the chosen paths for the model in pool_cfg and prints its block. Returns 0 or 1. */
static int bench_model(const bench_input *in, const bool *run)
{
    double best[PATHS] = {1e300, 1e300, 1e300, 1e300};
    uint64_t sums[PATHS] = {0, 0, 0, 0};
    for (unsigned long long r = 0; r < in->reps; r++) {
        for (int k = 0; k < PATHS; k++) {
            if (!run[k])
                continue;
            double t = k == 0   ? run_apply(in->log, &sums[k])
                       : k == 1 ? run_handles(in->log, &sums[k])
                       : k == 2 ? run_json(in->log, in->text, in->off, &sums[k])
                                : run_jsonl(in->log, in->text, in->len, &sums[k]);
            if (t < best[k])
                best[k] = t;
        }
    }
    int first = -1;
    for (int k = 0; k < PATHS; k++) {
        if (!run[k])
            continue;
        if (first < 0)
            first = k;
        else if (sums[k] != sums[first]) {
            fprintf(stderr, "bench_replay: %s: paths %s and %s disagree\n",
                    eo_model_name(pool_cfg.model.model), path_names[first], path_names[k]);
            return 1;
        }
    }
    double updates = (double)in->rounds * 2.0 * (double)in->team;
    printf("replay: %s, %llu rounds of %llu v %llu, %llu players, seed %llu, best of %llu, "
           "%s time\n",
           eo_model_name(pool_cfg.model.model), in->rounds, in->team, in->team, in->players,
           in->seed, in->reps, bench_clock == CLOCK_MONOTONIC ? "wall" : "thread CPU");
    /* The digest of the final ratings: equal before and after a speed change of the model
     * shows that the change kept the results (bit-identical ratings). */
    if (first >= 0)
        printf("checksum %016" PRIx64 "\n", sums[first]);
    for (int k = 0; k < PATHS; k++)
        if (run[k])
            printf("%-8s %12.0f rounds/s  %7.1f ns/player-update  (%.3f s)\n", path_names[k],
                   (double)in->rounds / best[k], best[k] * 1e9 / updates, best[k]);
    fflush(stdout);
    return 0;
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_replay [--model M|all] [--param NAME=VALUE]... "
                    "[--rounds N] [--players P] [--team K] [--reps R] [--seed S] "
                    "[--partial PERMILLE] [--only apply|handles|json|jsonl]... [--cpu]\n");
}

int main(int argc, char **argv)
{
    unsigned long long rounds = 100000, players = 5000, team = 12, reps = 3, seed = 1;
    unsigned long long partial = 0;
    bool run[PATHS] = {false, false, false, false}, only = false;
    const char *params[32];
    int nparams = 0;
    bool all = false;
    eo_model model = EO_MODEL_SYNELO;
    for (int i = 1; i < argc; i++) {
        unsigned long long *dst = NULL;
        bool zero_ok = false;
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            if (strcmp(argv[++i], "all") == 0) {
                all = true;
            } else if (eo_model_parse(argv[i], &model) != 0) {
                fprintf(stderr, "bench_replay: unknown model '%s'\n", argv[i]);
                return 2;
            }
            continue;
        }
        if (strcmp(argv[i], "--param") == 0 && i + 1 < argc && nparams < 32) {
            params[nparams++] = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--cpu") == 0) {
            bench_clock = CLOCK_THREAD_CPUTIME_ID;
            continue;
        }
        if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            int k = 0;
            while (k < PATHS && strcmp(argv[i + 1], path_names[k]) != 0)
                k++;
            if (k == PATHS) {
                usage();
                return 2;
            }
            run[k] = only = true;
            i++;
            continue;
        }
        if (strcmp(argv[i], "--rounds") == 0) dst = &rounds;
        else if (strcmp(argv[i], "--players") == 0) dst = &players;
        else if (strcmp(argv[i], "--team") == 0) dst = &team;
        else if (strcmp(argv[i], "--reps") == 0) dst = &reps;
        else if (strcmp(argv[i], "--seed") == 0) dst = &seed;
        else if (strcmp(argv[i], "--partial") == 0) {
            dst = &partial;
            zero_ok = true;
        }
        if (dst == NULL || i + 1 >= argc || bench_parse_u(argv[++i], dst) != 0 ||
            (*dst == 0 && !zero_ok)) {
            usage();
            return 2;
        }
    }
    if (!only)
        for (int k = 0; k < PATHS; k++)
            run[k] = true;
    if (all && nparams > 0) {
        fprintf(stderr, "bench_replay: --param needs one model, not --model all\n");
        return 2;
    }
    if (partial > 1000) {
        fprintf(stderr, "bench_replay: --partial is per mille (0..1000)\n");
        return 2;
    }
    eo_pool_config_new(model, &pool_cfg);
    for (int i = 0; i < nparams; i++) {
        char name[64];
        const char *eq = strchr(params[i], '=');
        eo_round_error err;
        if (eq == NULL || (size_t)(eq - params[i]) >= sizeof name) {
            fprintf(stderr, "bench_replay: --param: expected NAME=VALUE\n");
            return 2;
        }
        memcpy(name, params[i], (size_t)(eq - params[i]));
        name[eq - params[i]] = '\0';
        int rc = eo_bias_config_set(&pool_cfg.bias, name, eq + 1, &err);
        if (rc == EO_ENOTFOUND)
            rc = eo_presence_config_set(&pool_cfg.presence, name, eq + 1, &err);
        if (rc == EO_ENOTFOUND)
            rc = eo_model_config_set(&pool_cfg.model, name, eq + 1, &err);
        if (rc != 0) {
            fprintf(stderr, "bench_replay: --param %s: %s\n", err.field, err.message);
            return 2;
        }
    }
    if ((partial > 0 || pool_cfg.bias.by != EO_BIAS_OFF) && run[1]) {
        /* eo_pool_apply_handles() takes no weights and no map: every member plays in full */
        if (only) {
            fprintf(stderr, "bench_replay: --only handles has no partial play and no map "
                            "(--partial 0 --param bias=off)\n");
            return 2;
        }
        run[1] = false;
    }
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.seed = seed;
    c.players = (uint32_t)players;
    c.team_min = c.team_max = (uint32_t)team;
    c.partial_permille = (uint32_t)partial;
    eo_gen_log *log;
    if (eo_gen_log_create(&c, (size_t)rounds, &log) != 0) {
        fprintf(stderr, "bench_replay: bad configuration\n");
        return 2;
    }
    static const char *const maps[8] = {"map01", "map02", "map03", "map04",
                                        "map05", "map06", "map07", "map08"};
    for (size_t i = 0; pool_cfg.bias.by != EO_BIAS_OFF && i < log->n; i++)
        log->rounds[i].map = (char *)maps[i % 8];
    /* The JSONL text of the whole log, one line per round, when a parsing path runs. Memory
     * for 1,000,000 rounds of 12v12: ~1.5 GB for the rounds, ~0.7 GB more for the text. A
     * member with a partial `time` is written as an object, longer than a plain id. */
    char *text = NULL;
    size_t *off = NULL, len = 0;
    if (run[2] || run[3]) {
        size_t cap = (size_t)rounds * (80 + 2 * team * (partial > 0 ? 48 : 24)) + 1;
        text = malloc(cap);
        off = malloc(((size_t)rounds + 1) * sizeof *off);
        if (text == NULL || off == NULL) {
            fprintf(stderr, "bench_replay: out of memory for the JSONL text\n");
            return 1;
        }
        for (size_t i = 0; i < log->n; i++) {
            off[i] = len;
            int n = eo_gen_jsonl(&log->rounds[i], text + len, cap - len);
            if (n < 0) {
                fprintf(stderr, "bench_replay: JSONL text larger than its buffer\n");
                return 1;
            }
            len += (size_t)n;
        }
        off[log->n] = len;
    }
    bench_input in = {log, text, len, off, rounds, team, players, seed, reps};
    int status = 0;
    if (all) {
        for (int m = 0; m < EO_MODEL_COUNT && status == 0; m++) {
            if (eo_pool_config_new((eo_model)m, &pool_cfg) != 0)
                continue; /* not registered in this build */
            status = bench_model(&in, run);
        }
    } else {
        status = bench_model(&in, run);
    }
    free(text);
    free(off);
    eo_gen_log_destroy(log);
    return status;
}
