/* Replay benchmark: a rating model over generated rounds, in memory.
 *
 * Prints rounds/s (and ns per player update) for three ways of feeding the pool:
 *   apply     eo_pool_apply() on eo_round values (ids hashed per member): the path of
 *             `evenodds replay` after parsing;
 *   handles   eo_pool_apply_handles() with ids resolved beforehand;
 *   json      eo_round_from_text() on canonical JSONL lines, then eo_pool_apply().
 * Each figure is the best of --reps runs over a fresh pool. Usage:
 *   bench_replay [--rounds N] [--players P] [--team K] [--reps R] [--seed S]
 * --only runs one of the three (for profiling); --cpu times with the thread's CPU clock.
 * --model and --param pick the model (default SynElo with its defaults).
 * Defaults: 100000 rounds of 12v12 among 5000 players, 3 reps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static int parse_u(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0')
        return -1;
    *out = v;
    return 0;
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

int main(int argc, char **argv)
{
    unsigned long long rounds = 100000, players = 5000, team = 12, reps = 3, seed = 1;
    const char *only = NULL;
    const char *params[32];
    int nparams = 0;
    eo_model model = EO_MODEL_SYNELO;
    for (int i = 1; i < argc; i++) {
        unsigned long long *dst = NULL;
        if (strcmp(argv[i], "--model") == 0 && i + 1 < argc) {
            if (eo_model_parse(argv[++i], &model) != 0) {
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
            only = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--rounds") == 0) dst = &rounds;
        else if (strcmp(argv[i], "--players") == 0) dst = &players;
        else if (strcmp(argv[i], "--team") == 0) dst = &team;
        else if (strcmp(argv[i], "--reps") == 0) dst = &reps;
        else if (strcmp(argv[i], "--seed") == 0) dst = &seed;
        if (dst == NULL || i + 1 >= argc || parse_u(argv[++i], dst) != 0 || *dst == 0) {
            fprintf(stderr, "usage: bench_replay [--model M] [--param NAME=VALUE]... "
                            "[--rounds N] [--players P] [--team K] [--reps R] [--seed S] "
                            "[--only apply|handles|json] [--cpu]\n");
            return 2;
        }
    }
    eo_model_config_default(model, &pool_cfg.model);
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
        if (eo_model_config_set(&pool_cfg.model, name, eq + 1, &err) != 0) {
            fprintf(stderr, "bench_replay: --param %s: %s\n", err.field, err.message);
            return 2;
        }
    }
    eo_gen_config c;
    eo_gen_config_default(&c);
    c.seed = seed;
    c.players = (uint32_t)players;
    c.team_min = c.team_max = (uint32_t)team;
    eo_gen_log *log;
    if (eo_gen_log_create(&c, (size_t)rounds, &log) != 0) {
        fprintf(stderr, "bench_replay: bad configuration\n");
        return 2;
    }
    /* The JSONL text of the whole log, one line per round. */
    size_t cap = (size_t)rounds * (64 + 2 * team * 24) + 1, len = 0;
    char *text = malloc(cap);
    size_t *off = malloc(((size_t)rounds + 1) * sizeof *off);
    if (text == NULL || off == NULL)
        return 1;
    for (size_t i = 0; i < log->n; i++) {
        off[i] = len;
        int n = eo_gen_jsonl(&log->rounds[i], text + len, cap - len);
        if (n < 0)
            return 1;
        len += (size_t)n;
    }
    off[log->n] = len;

    double best[3] = {1e300, 1e300, 1e300};
    uint64_t sums[3] = {0, 0, 0};
    for (unsigned long long r = 0; r < reps; r++) {
        double t;
        if (only == NULL || strcmp(only, "apply") == 0) {
            t = run_apply(log, &sums[0]);
            if (t < best[0]) best[0] = t;
        }
        if (only == NULL || strcmp(only, "handles") == 0) {
            t = run_handles(log, &sums[1]);
            if (t < best[1]) best[1] = t;
        }
        if (only == NULL || strcmp(only, "json") == 0) {
            t = run_json(log, text, off, &sums[2]);
            if (t < best[2]) best[2] = t;
        }
    }
    if (only == NULL && (sums[0] != sums[1] || sums[0] != sums[2])) {
        fprintf(stderr, "bench_replay: the three paths disagree\n");
        return 1;
    }
    const char *names[3] = {"apply", "handles", "json"};
    double updates = (double)rounds * 2.0 * (double)team;
    printf("replay: %s, %llu rounds of %llu v %llu, %llu players, seed %llu, best of %llu, "
           "%s time\n",
           eo_model_name(model), rounds, team, team, players, seed, reps,
           bench_clock == CLOCK_MONOTONIC ? "wall" : "thread CPU");
    /* The digest of the final ratings: equal before and after a speed change of the model
     * shows that the change kept the results (bit-identical ratings). */
    for (int i = 0; i < 3; i++)
        if (best[i] < 1e300) {
            printf("checksum %016" PRIx64 "\n", sums[i]);
            break;
        }
    for (int i = 0; i < 3; i++)
        if (best[i] < 1e300)
            printf("%-8s %12.0f rounds/s  %7.1f ns/player-update  (%.3f s)\n", names[i],
               (double)rounds / best[i], best[i] * 1e9 / updates, best[i]);
    free(text);
    free(off);
    eo_gen_log_destroy(log);
    return 0;
}
