/* Exact split solver timings: every k in one eo_split_solve() call, p50 / p99 / max over many
 * random requests per row, with a fixed seed (own PRNG) so runs are comparable.
 *
 *   bench_split [instances-per-row [typical]]     (default 1000; "typical": no pathological rows)
 *
 * Realistic rows draw ratings from a normal distribution around 1000 (sd 300, rounded, clamped
 * to >= 100), as a settled SynElo pool looks, and from a young pool's mixture (most players
 * within ~40 of R0, one in eight spread by 200). Pathological rows show the worst cases. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evenodds/eo_split.h"

typedef struct rng {
    uint64_t s;
} rng;

/* splitmix64 */
static uint64_t rng_next(rng *r)
{
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double rng_unit(rng *r) /* (0, 1) */
{
    return ((double)(rng_next(r) >> 11) + 0.5) / 9007199254740992.0;
}

static int64_t rng_range(rng *r, int64_t lo, int64_t hi) /* [lo, hi], bias negligible here */
{
    return lo + (int64_t)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static double rng_normal(rng *r)
{
    return sqrt(-2.0 * log(rng_unit(r))) * cos(6.283185307179586 * rng_unit(r));
}

enum dist { NORMAL, YOUNG, UNIFORM_1M, UNIFORM_2_40, EQUAL, POW2, POW2_NOISE };

static const char *dist_name[] = {
    "normal(1000,300)>=100", "young pool mixture", "uniform[100,1e6]", "uniform[0,2^40]",
    "all equal (1500)", "2^(i mod 41)", "2^(i mod 20)+noise"};

static void gen(rng *r, enum dist d, eo_split_player *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int64_t v = 0;
        switch (d) {
        case NORMAL:
            v = (int64_t)llround(1000.0 + 300.0 * rng_normal(r));
            if (v < 100)
                v = 100;
            break;
        case YOUNG: /* a young pool: most players a few rounds (steps of ~36) from R0, a few
                     * regulars far from it (seen in a service benchmark's pool) */
            v = (int64_t)llround(1000.0 + (rng_range(r, 0, 7) == 0 ? 200.0 : 40.0) * rng_normal(r));
            break;
        case UNIFORM_1M: v = rng_range(r, 100, 1000000); break;
        case UNIFORM_2_40: v = rng_range(r, 0, INT64_C(1) << 40); break;
        case EQUAL: v = 1500; break;
        case POW2: v = INT64_C(1) << (i % 41); break;
        case POW2_NOISE: v = (INT64_C(1) << (i % 20)) + rng_range(r, 0, 99); break;
        }
        p[i].rating = v;
    }
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One row: `count` random requests of n players; work_limit 0 = none. */
static int row(uint64_t seed, enum dist d, size_t n, eo_bench_mode mode, int count,
               uint64_t work_limit)
{
    rng r = {seed};
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    double *t = calloc((size_t)count, sizeof *t);
    if (!t)
        return 1;
    int limited = 0, done = 0;
    int64_t gap_sum = 0;
    eo_split_options opt;
    memset(&opt, 0, sizeof opt);
    opt.bench = mode;
    opt.work_limit = work_limit;
    for (int i = 0; i < count; i++) {
        gen(&r, d, p, n);
        eo_splits *s = NULL;
        double t0 = now_us();
        int rc = eo_split_solve(p, n, &opt, &s);
        double t1 = now_us();
        if (rc == EO_ELIMIT) {
            limited++;
            continue;
        }
        if (rc != 0) {
            fprintf(stderr, "eo_split_solve: %s\n", eo_strerror(rc));
            free(t);
            return 1;
        }
        gap_sum += s->split[s->count - 1].gap;
        eo_splits_free(s);
        t[done++] = t1 - t0;
    }
    qsort(t, (size_t)done, sizeof *t, cmp_double);
    if (done > 0) {
        size_t i99 = (size_t)ceil(0.99 * done) - 1;
        printf("%-24s N=%-2zu %-6s n=%-5d p50=%10.1f us  p99=%10.1f us  max=%10.1f us",
               dist_name[d], n, mode == EO_BENCH_QUEUE ? "queue" : "solver", done,
               t[(done - 1) / 2], t[i99], t[done - 1]);
    } else {
        printf("%-24s N=%-2zu %-6s n=0", dist_name[d], n,
               mode == EO_BENCH_QUEUE ? "queue" : "solver");
    }
    if (limited)
        printf("  over work limit %" PRIu64 ": %d", work_limit, limited);
    printf("  mean gap(k=N/2)=%.2f\n", done ? (double)gap_sum / done : 0.0);
    fflush(stdout);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int count = 1000;
    if (argc > 1) {
        char *end;
        long v = strtol(argv[1], &end, 10);
        if (*end || v < 1 || v > 1000000) {
            fprintf(stderr, "usage: bench_split [instances-per-row [typical]]\n");
            return 2;
        }
        count = (int)v;
    }
    static const size_t sizes[] = {16, 24, 32, 64};
    int bad = 0;
    printf("# all k in [2, N/2] per call; times per call\n");
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], NORMAL, sizes[i], EO_BENCH_SOLVER, count, 0);
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], NORMAL, sizes[i], EO_BENCH_QUEUE, count, 0);
    /* A young pool's mixture is realistic and, today, far slower in its tail (see
     * docs/BALANCER.md): bounded like the pathological rows, N=64 on fewer requests. */
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], YOUNG, sizes[i], EO_BENCH_SOLVER,
                   sizes[i] < 64 ? count : (count < 20 ? count : 20), UINT64_C(100000000));
    if (argc > 2 && strcmp(argv[2], "typical") == 0)
        return bad;
    printf("# pathological\n");
    /* Pathological rows run with a work limit of 10^8 search nodes (a few seconds) and report
     * how many requests passed it (EO_ELIMIT: no split is ever returned unproven). */
    int few = count < 20 ? count : 20;
    uint64_t lim = UINT64_C(100000000);
    bad |= row(7, EQUAL, 64, EO_BENCH_SOLVER, few, lim);
    bad |= row(7, POW2, 41, EO_BENCH_SOLVER, 1, lim);
    bad |= row(7, POW2, 64, EO_BENCH_SOLVER, 1, lim);
    bad |= row(7, POW2_NOISE, 64, EO_BENCH_SOLVER, few, lim);
    bad |= row(7, UNIFORM_1M, 24, EO_BENCH_SOLVER, few, lim);
    bad |= row(7, UNIFORM_1M, 64, EO_BENCH_SOLVER, few, lim);
    bad |= row(7, UNIFORM_2_40, 16, EO_BENCH_SOLVER, few, lim);
    bad |= row(7, UNIFORM_2_40, 24, EO_BENCH_SOLVER, few, lim);
    return bad;
}
