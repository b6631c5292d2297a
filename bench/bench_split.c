/* Exact split solver timings: every k in one eo_split_solve() call, p50 / p99 / max over many
 * random requests per row, with a fixed seed (own PRNG) so runs are comparable.
 *
 *   bench_split [instances-per-row [typical]] [--ws] [--only WORD]
 *
 * (default 1000 instances; "typical": no pathological rows; --ws: eo_split_solve_ws() with one
 * work space for the whole run, as a service thread does, instead of eo_split_solve(); --only:
 * the rows whose name contains WORD, e.g. "young" or "N=24 solver".) Each row prints p50, p99,
 * max and mean per call and a checksum of every split it returned: a change that keeps the
 * checksums kept the answers.
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

#include "bench_util.h"
#include "evenodds/eo_split.h"

typedef struct rng {
    uint64_t s;
} rng;

static int64_t rng_range(rng *r, int64_t lo, int64_t hi) /* [lo, hi], bias negligible here */
{
    return lo + (int64_t)(bench_rng_next(&r->s) % (uint64_t)(hi - lo + 1));
}

/* Box-Muller, u drawn before v (as bench_normal_rating(): bench_gosper repeats the NORMAL rows'
 * draws); two calls in one expression would leave their order to the compiler. */
static double rng_normal(rng *r)
{
    double u = bench_rng_unit(&r->s), v = bench_rng_unit(&r->s);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
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

static eo_split_ws *g_ws;        /* --ws: the run's work space, else NULL */
static const char *g_only;       /* --only: rows whose name contains this */

/* FNV-1a over every split's teams and gap: equal checksums, equal answers. */
static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * UINT64_C(1099511628211);
}

static uint64_t checksum(uint64_t h, const eo_splits *s)
{
    for (size_t c = 0; c < s->count; c++) {
        const eo_split *x = &s->split[c];
        for (int i = 0; i < x->k; i++)
            h = mix(mix(h, x->a[i]), x->b[i] + 100u);
        h = mix(h, (uint64_t)x->gap);
    }
    return h;
}

/* One row: `count` random requests of n players; work_limit 0 = none. */
static int row(uint64_t seed, enum dist d, size_t n, eo_bench_mode mode, int count,
               uint64_t work_limit)
{
    char name[96];
    snprintf(name, sizeof name, "%-24s N=%-2zu %-6s", dist_name[d], n,
             mode == EO_BENCH_QUEUE ? "queue" : "solver");
    if (g_only && !strstr(name, g_only))
        return 0;
    rng r = {seed};
    eo_split_player p[EO_SPLIT_EXACT_MAX];
    double *t = calloc((size_t)count, sizeof *t);
    if (!t)
        return 1;
    int limited = 0, done = 0;
    int64_t gap_sum = 0;
    uint64_t sum = UINT64_C(1469598103934665603);
    double total = 0;
    eo_split_options opt;
    memset(&opt, 0, sizeof opt);
    opt.bench = mode;
    opt.work_limit = work_limit;
    for (int i = 0; i < count; i++) {
        gen(&r, d, p, n);
        eo_splits *s = NULL;
        double t0 = bench_now_us();
        int rc = g_ws ? eo_split_solve_ws(g_ws, p, n, &opt, &s) : eo_split_solve(p, n, &opt, &s);
        double t1 = bench_now_us();
        sum = mix(sum, (uint64_t)(rc + 1000));
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
        sum = checksum(sum, s);
        if (!g_ws)
            eo_splits_free(s);
        t[done++] = t1 - t0;
        total += t1 - t0;
    }
    qsort(t, (size_t)done, sizeof *t, bench_cmp_double);
    if (done > 0) {
        size_t i99 = (size_t)ceil(0.99 * done) - 1;
        printf("%s n=%-5d p50=%10.1f us  p99=%10.1f us  max=%10.1f us  mean=%9.1f us", name,
               done, t[(done - 1) / 2], t[i99], t[done - 1], total / done);
    } else {
        printf("%s n=0", name);
    }
    if (limited)
        printf("  over work limit %" PRIu64 ": %d", work_limit, limited);
    printf("  mean gap(k=N/2)=%.2f  sum=%016" PRIx64 "\n", done ? (double)gap_sum / done : 0.0,
           sum);
    fflush(stdout);
    free(t);
    return 0;
}

int main(int argc, char **argv)
{
    int count = 1000, typical = 0, npos = 0, ws = 0;
    for (int a = 1; a < argc; a++) {
        char *end;
        long v;
        if (strcmp(argv[a], "--ws") == 0) {
            ws = 1;
        } else if (strcmp(argv[a], "--only") == 0 && a + 1 < argc) {
            g_only = argv[++a];
        } else if (npos == 0 && (v = strtol(argv[a], &end, 10), !*end && v >= 1 &&
                                                                 v <= 1000000)) {
            count = (int)v;
            npos++;
        } else if (npos == 1 && strcmp(argv[a], "typical") == 0) {
            typical = 1;
            npos++;
        } else {
            fprintf(stderr, "usage: bench_split [instances-per-row [typical]] [--ws] "
                            "[--only WORD]\n");
            return 2;
        }
    }
    if (ws && !(g_ws = eo_split_ws_new())) {
        fprintf(stderr, "eo_split_ws_new: out of memory\n");
        return 1;
    }
    static const size_t sizes[] = {16, 24, 32, 64};
    int bad = 0;
    printf("# all k in [2, N/2] per call; times per call; %s\n",
           g_ws ? "eo_split_solve_ws, one work space" : "eo_split_solve");
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], NORMAL, sizes[i], EO_BENCH_SOLVER, count, 0);
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], NORMAL, sizes[i], EO_BENCH_QUEUE, count, 0);
    /* A young pool's mixture is realistic and, today, far slower in its tail (see
     * docs/BALANCER.md): bounded like the pathological rows, N=64 on fewer requests. */
    for (size_t i = 0; i < 4; i++)
        bad |= row(42 + sizes[i], YOUNG, sizes[i], EO_BENCH_SOLVER,
                   sizes[i] < 64 ? count : (count < 20 ? count : 20), UINT64_C(100000000));
    if (typical) {
        eo_split_ws_free(g_ws);
        return bad;
    }
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
    eo_split_ws_free(g_ws);
    return bad;
}
