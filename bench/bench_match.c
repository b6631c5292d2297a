/* The matcher in process (eo_match.h): one pass over N waiting tickets, p50 / p99 / max of the
 * pass's wall time (and of the thread's CPU time, steadier on a shared machine) over repeated
 * passes on the same queue, and the tickets a pass places per second of pass time.
 *
 *   bench_match [--reps R] [--only WORD] [--model NAME] [--seed S] [--fresh]
 *
 * Rows: N = 1,000, 10,000 and 100,000 waiting tickets at 2v2, 6v6 and 12v12. Each queue is
 * drawn once per row with a fixed seed (own PRNG): players' means normal(1000, 300) (a settled
 * SynElo pool's look), one player in ten calibrating (fewer than 10 rounds), 20 % of tickets
 * parties of 2 or 3 (2 at 2v2), arrivals spread over the last 150 s (so every step of the
 * default widening schedule is in use), three regions with latencies 10-150 ms (one player in
 * twenty cannot reach a region), eight maps with fields in ±0.1. The configuration is
 * eo_match_config_default() with an 80 ms latency limit from the third step on. Passes are
 * independent (the matcher is pure): each one sees the same N tickets, as the service's first
 * pass after a burst would, and places as many as it can; `--reps` passes per row (default
 * 200, 20 for N = 100,000). Passes run in one work space per row (eo_match_pass_ws(), as the
 * service runs them), warmed by one pass that is not timed; `--fresh` times eo_match_pass()
 * instead (new memory every pass). A checksum of every pass's matches shows that changes kept
 * the answers; the untimed pass through the other function must agree with it. */
#include <inttypes.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "evenodds/eo_match.h"

#define T_NOW INT64_C(1763800000)
#define NREG 3

typedef struct queue {
    eo_match_ticket *t;
    eo_match_player *pl;
    double *lat;
    size_t n, np;
} queue;

static double normal(uint64_t *s)
{
    double u = bench_rng_unit(s), v = bench_rng_unit(s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

static int make_queue(queue *q, size_t n, int team, uint64_t seed)
{
    q->t = calloc(n, sizeof *q->t);
    q->pl = calloc(3 * n, sizeof *q->pl);
    q->lat = calloc(3 * n * NREG, sizeof *q->lat);
    if (q->t == NULL || q->pl == NULL || q->lat == NULL)
        return -1;
    q->n = n;
    q->np = 0;
    uint64_t s = seed;
    for (size_t i = 0; i < n; i++) {
        double u = bench_rng_unit(&s);
        size_t size = u < 0.8 ? 1 : team >= 3 && u < 0.9 ? 3 : 2;
        double centre = 1000.0 + 300.0 * normal(&s);
        eo_match_player *p = &q->pl[q->np];
        for (size_t j = 0; j < size; j++) {
            double *l = &q->lat[(q->np + j) * NREG];
            for (int r = 0; r < NREG; r++)
                l[r] = bench_rng_unit(&s) < 0.05 ? -1.0 : 10.0 + 140.0 * bench_rng_unit(&s);
            p[j] = (eo_match_player){.mu = centre + 60.0 * normal(&s),
                                     .sigma = 0.0,
                                     .rounds = bench_rng_unit(&s) < 0.1 ? 3 : 200,
                                     .latency = l};
        }
        q->t[i] = (eo_match_ticket){.key = bench_rng_next(&s),
                                    .created_at = T_NOW - (int64_t)(bench_rng_next(&s) % 150),
                                    .players = p,
                                    .nplayers = size};
        q->np += size;
    }
    return 0;
}

static void free_queue(queue *q)
{
    free(q->t);
    free(q->pl);
    free(q->lat);
}

static uint64_t checksum(const eo_match_result *r)
{
    uint64_t h = 1469598103934665603u;
    for (size_t i = 0; i < r->nentries; i++)
        h = (h ^ (r->entries[i].ticket * 4 + r->entries[i].team)) * 1099511628211u;
    for (size_t i = 0; i < r->nmatches; i++) {
        uint64_t b;
        memcpy(&b, &r->matches[i].p_a, sizeof b);
        h = (h ^ b) * 1099511628211u;
    }
    return h;
}

/* One pass, timed: wall and thread CPU microseconds in *us and *cpu; the result's checksum,
 * placed tickets, matches, refused groups and inexact matches in @p out. */
typedef struct tally {
    uint64_t sum;
    size_t placed, matches, rejected, inexact;
} tally;

static int one_pass(eo_match_ws *ws, const eo_match_config *c, const eo_model_ctx *m,
                    const queue *q, double *us, double *cpu, tally *out)
{
    eo_match_result *own = NULL;
    const eo_match_result *r = NULL;
    eo_round_error err;
    double t0 = bench_now_us(), c0 = bench_clock_us(CLOCK_THREAD_CPUTIME_ID);
    int rc = ws ? eo_match_pass_ws(ws, c, m, q->t, q->n, NULL, 0, T_NOW, &r, &err)
                : eo_match_pass(c, m, q->t, q->n, NULL, 0, T_NOW, &own, &err);
    *us = bench_now_us() - t0;
    *cpu = bench_clock_us(CLOCK_THREAD_CPUTIME_ID) - c0;
    if (rc != 0) {
        fprintf(stderr, "bench_match: %s: %s\n", err.field, err.message);
        return -1;
    }
    r = ws ? r : own;
    *out = (tally){checksum(r), q->n - r->waiting, r->nmatches, r->rejected, 0};
    for (size_t x = 0; x < r->nmatches; x++)
        out->inexact += !r->matches[x].exact;
    eo_match_result_free(own);
    return 0;
}

static int row(const eo_model_ctx *m, size_t n, int team, int reps, uint64_t seed, bool fresh)
{
    queue q;
    eo_match_config c;
    if (make_queue(&q, n, team, seed) != 0 || eo_match_config_default(team, &c) != 0)
        return -1;
    c.nregions = NREG;
    c.nmaps = 8;
    for (int i = 0; i < 8; i++)
        c.map_field[i] = 0.1 * (i - 3.5) / 3.5;
    for (int i = 2; i < c.nsteps; i++)
        c.steps[i].latency_ms = 80;
    double *us = malloc((size_t)reps * sizeof *us), *cpu = malloc((size_t)reps * sizeof *cpu);
    eo_match_ws *ws = eo_match_ws_new();
    if (us == NULL || cpu == NULL || ws == NULL)
        return -1;
    /* The untimed pass through the function not timed: both must give the same answer. */
    tally first, t;
    if (one_pass(fresh ? ws : NULL, &c, m, &q, &us[0], &cpu[0], &first) != 0)
        return -1;
    for (int i = 0; i < reps; i++) {
        if (one_pass(fresh ? NULL : ws, &c, m, &q, &us[i], &cpu[i], &t) != 0)
            return -1;
        if (t.sum != first.sum) {
            fprintf(stderr, "bench_match: passes over the same queue differ\n");
            return -1;
        }
    }
    qsort(us, (size_t)reps, sizeof *us, bench_cmp_double);
    qsort(cpu, (size_t)reps, sizeof *cpu, bench_cmp_double);
    size_t i99 = (size_t)((reps - 1) * 0.99 + 0.5);
    double p50 = us[reps / 2], p99 = us[i99], mx = us[reps - 1];
    printf("| %zu | %dv%d | %.2f | %.2f | %.2f | %.2f | %.2f | %zu | %zu | %zu | %zu | %.0f | "
           "%016" PRIx64 " |\n",
           n, team, team, p50 / 1e3, p99 / 1e3, mx / 1e3, cpu[reps / 2] / 1e3, cpu[i99] / 1e3,
           t.matches, t.placed, t.rejected, t.inexact, (double)t.placed / (p50 / 1e6), t.sum);
    fflush(stdout);
    eo_match_ws_free(ws);
    free(us);
    free(cpu);
    free_queue(&q);
    return 0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_match [--reps R] [--only WORD] [--model NAME] [--seed S] [--fresh]\n"
               "  one matcher pass over 1,000 / 10,000 / 100,000 waiting tickets at 2v2, 6v6,\n"
               "  12v12: p50/p99/max ms per pass, tickets placed per second (bench/README.md)\n"
               "  --only WORD   rows whose label (e.g. \"100000 6v6\") contains WORD\n"
               "  --fresh       time eo_match_pass() (new memory per pass), not a work space\n");
}

int main(int argc, char **argv)
{
    unsigned long long reps = 0, seed = 17;
    const char *only = NULL, *model = "synelo";
    bool fresh = false;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return 0;
        }
        if (strcmp(argv[i], "--fresh") == 0) {
            fresh = true;
            continue;
        }
        if (i + 1 >= argc) {
            usage(stderr);
            return 2;
        }
        const char *v = argv[++i];
        if ((strcmp(argv[i - 1], "--reps") == 0 && bench_parse_u(v, &reps) == 0 && reps > 0) ||
            (strcmp(argv[i - 1], "--seed") == 0 && bench_parse_u(v, &seed) == 0))
            continue;
        if (strcmp(argv[i - 1], "--only") == 0)
            only = v;
        else if (strcmp(argv[i - 1], "--model") == 0)
            model = v;
        else {
            fprintf(stderr, "bench_match: bad option %s %s\n", argv[i - 1], v);
            usage(stderr);
            return 2;
        }
    }
    eo_model mk;
    eo_model_config mc;
    eo_model_ctx *m = NULL;
    if (eo_model_parse(model, &mk) != 0 || eo_model_config_default(mk, &mc) != 0 ||
        eo_model_prepare(&mc, &m, NULL) != 0) {
        fprintf(stderr, "bench_match: --model: unknown model \"%s\"\n", model);
        return 2;
    }
    printf("model %s, seed %llu, %s; ms per pass (wall, then the thread's CPU time); placed/s = "
           "tickets placed / wall p50\n\n",
           model, seed,
           fresh ? "eo_match_pass (fresh memory)" : "eo_match_pass_ws (a warm work space)");
    printf("| waiting | teams | p50 ms | p99 ms | max ms | cpu p50 ms | cpu p99 ms | matches "
           "| placed | refused groups | inexact | placed/s | checksum |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    static const size_t ns[] = {1000, 10000, 100000};
    static const int teams[] = {2, 6, 12};
    for (size_t a = 0; a < 3; a++)
        for (size_t b = 0; b < 3; b++) {
            char label[64];
            snprintf(label, sizeof label, "%zu %dv%d", ns[a], teams[b], teams[b]);
            if (only != NULL && strstr(label, only) == NULL)
                continue;
            int r = reps ? (int)reps : ns[a] >= 100000 ? 20 : 200;
            if (row(m, ns[a], teams[b], r, seed + a * 3 + b, fresh) != 0) {
                eo_model_release(m);
                return 1;
            }
        }
    eo_model_release(m);
    return 0;
}
