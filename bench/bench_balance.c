/* Balancer timings (docs/BALANCER.md, "Balancer figures"): p50/p99/max per call of scramble
 * mode with parties and locks and of rebalance mode, N = 24, 32, 64, and how many answers were
 * exact within the work limit; with "map", plain requests that name a map instead, N = 25 and
 * 64 (ratings only, rebalance, epsilon 0, side A's field 240 rating points: the splitter's
 * path with the field as its offset, docs/BALANCER.md "Map-named plain splits").
 *
 *   bench_balance [instances] [work_limit] [all] [n=N] [se=E] [dump] [map] [only=I,J,...]
 *
 * The work limit defaults to the service's default budget in nodes (EO_SPLIT_BUDGET_DEFAULT_MS
 * times EO_SPLIT_NODES_PER_MS: 4·10^6), the spread tolerance (se=) to one rating unit, the
 * service's default for integer models (se=0 compares the spreads exactly, the earlier rule).
 *
 * Ratings normal(1000, 300) rounded (clamped >= 100), seeded. Scramble rows: a party of 2 or 3
 * for about a quarter of the players, two players locked (one per side), current teams ignored.
 * Rebalance rows: everyone on a current team (alternating by arrival), one party of 3, two
 * protected players, preferences for a third with weights 1..8. One team size per call, k = N/2
 * (a full server), unless "all" is given (every k). "n=32" runs one N only. "dump" writes one
 * line per instance to stderr (N, mode, instance, exact answers, checksum, time) to find which
 * answers changed. "only=25,150" solves only those instances (the others are still drawn, so
 * instance I is the same request; for profiling the slow ones: the rows' figures then cover
 * the listed instances alone). Times are wall clock per call, and the calling thread's CPU time
 * ("cpu" columns: what the call costs when other jobs share the cores). Each row first solves its
 * first instance (with only=, the first listed) twice untimed (the first large allocations' page
 * faults, in mmap and then in the grown heap, are not a call's cost).
 *
 * The checksum column is an FNV-1a hash of every answer of the row (k, err, team A, team B,
 * exact): a change of the solver that keeps the rules gives the same checksum, except where an
 * answer that local search gave (exact 0) becomes exact. docs/BALANCER.md has the figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "evenodds/eo_balance.h"
#include "evenodds/eo_codec.h"

/* CPU time of this thread: not counting the time other jobs on a shared machine take the core */
static double cpu_us(void) { return bench_clock_us(CLOCK_THREAD_CPUTIME_ID); }

static uint64_t fnv(uint64_t h, uint64_t v)
{
    for (int x = 0; x < 8; x++) {
        h ^= (v >> (8 * x)) & 0xff;
        h *= UINT64_C(0x100000001b3);
    }
    return h;
}

enum { REBALANCE, SCRAMBLE, MAP };
static const char *const kinds[] = {"rebalance", "scramble", "map"};

/* only=: the instances to solve (none listed: all) */
#define ONLY_MAX 4096
static unsigned char only_set[ONLY_MAX];
static int only_any;

static void row(int n, int kind, int count, uint64_t work, int64_t se, int all, int dump)
{
    uint64_t sum = UINT64_C(0xcbf29ce484222325);
    uint64_t s = (uint64_t)n * 1000 + (uint64_t)kind;
    double *t = malloc(sizeof(double) * 2 * (size_t)count), *u = t + count;
    int exact = 0, total = 0, errs = 0, solved = 0, warm = 1;
    for (int c = 0; c < count; c++) {
        eo_balance_player p[64];
        memset(p, 0, sizeof p);
        for (int i = 0; i < n; i++)
            p[i].rating = bench_normal_rating(&s);
        eo_balance_request r;
        memset(&r, 0, sizeof r);
        r.work_limit = work;
        r.spread_epsilon = se;
        if (!all)
            r.k_min = r.k_max = n / 2;
        if (kind == MAP) {
            r.mode = EO_BALANCE_REBALANCE;
            r.field = 240;
        } else if (kind == SCRAMBLE) {
            r.mode = EO_BALANCE_SCRAMBLE;
            for (int i = 0; i + 3 < n; i += 8) { /* parties of 2 and 3 */
                p[i].party = p[i + 1].party = (uint32_t)(i + 1);
                if (i % 16 == 0)
                    p[i + 2].party = (uint32_t)(i + 1);
            }
            p[n - 1].lock = EO_BALANCE_A;
            p[n - 2].lock = EO_BALANCE_B;
        } else {
            r.mode = EO_BALANCE_REBALANCE;
            for (int i = 0; i < n; i++) {
                p[i].team = i % 2 ? EO_BALANCE_B : EO_BALANCE_A;
                if (i % 3 == 0) {
                    p[i].prefer = p[i].team;
                    p[i].weight = (uint32_t)(1 + bench_rng_next(&s) % 8);
                }
            }
            p[0].party = p[2].party = p[4].party = 9; /* all on A */
            p[5].protect = p[6].protect = 1;
        }
        if (only_any && (c >= ONLY_MAX || !only_set[c]))
            continue;
        eo_balance_result *res = NULL;
        for (int w = 0; warm && w < 2; w++) /* warm-up, untimed */
            if (eo_balance_solve(p, (size_t)n, &r, &res, NULL) == 0)
                eo_balance_free(res);
        warm = 0;
        double t0 = bench_now_us(), u0 = cpu_us();
        int rc = eo_balance_solve(p, (size_t)n, &r, &res, NULL);
        t[solved] = bench_now_us() - t0;
        u[solved] = cpu_us() - u0;
        int c_t = solved++;
        if (rc) {
            errs++;
            continue;
        }
        uint64_t h = UINT64_C(0xcbf29ce484222325);
        int ex = 0;
        for (size_t x = 0; x < res->count; x++) {
            const eo_balance_split *sp = &res->split[x];
            total++;
            ex += sp->err == 0 && sp->exact;
            errs += sp->err != 0;
            h = fnv(h, (uint64_t)sp->k);
            h = fnv(h, (uint64_t)(int64_t)sp->err);
            h = fnv(h, (uint64_t)sp->exact);
            for (int y = 0; sp->err == 0 && y < sp->k; y++)
                h = fnv(h, (uint64_t)sp->a[y] | (uint64_t)sp->b[y] << 16);
        }
        exact += ex;
        sum = fnv(sum, h);
        if (dump)
            fprintf(stderr, "%d %s %d exact %d hash %016llx us %.0f cpu %.0f\n", n, kinds[kind], c,
                    ex, (unsigned long long)h, t[c_t], u[c_t]);
        eo_balance_free(res);
    }
    if (solved == 0) {
        free(t);
        return;
    }
    count = solved;
    qsort(t, (size_t)count, sizeof *t, bench_cmp_double);
    qsort(u, (size_t)count, sizeof *u, bench_cmp_double);
    printf("| %2d | %-9s | %10.0f | %10.0f | %10.0f | %10.0f | %10.0f | %d/%d | %d | %016llx |\n",
           n, kinds[kind], t[count / 2], t[(count * 99) / 100], t[count - 1], u[count / 2],
           u[(count * 99) / 100], exact, total, errs, (unsigned long long)sum);
    free(t);
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 100;
    /* the work limit is the second argument when it is a number (0: none), else the default */
    int numeric = argc > 2 && argv[2][0] >= '0' && argv[2][0] <= '9';
    uint64_t work = numeric ? strtoull(argv[2], NULL, 10)
                            : (uint64_t)EO_SPLIT_BUDGET_DEFAULT_MS * EO_SPLIT_NODES_PER_MS;
    int all = 0, dump = 0, only = 0, map = 0;
    int64_t se = 1;
    for (int x = numeric ? 3 : 2; x < argc; x++) {
        if (strncmp(argv[x], "n=", 2) == 0)
            only = (int)strtol(argv[x] + 2, NULL, 10);
        if (strncmp(argv[x], "se=", 3) == 0)
            se = strtoll(argv[x] + 3, NULL, 10);
        all |= strcmp(argv[x], "all") == 0;
        dump |= strcmp(argv[x], "dump") == 0;
        map |= strcmp(argv[x], "map") == 0;
        if (strncmp(argv[x], "only=", 5) == 0)
            for (char *q = argv[x] + 5; *q;) {
                long v = strtol(q, &q, 10);
                if (v >= 0 && v < ONLY_MAX)
                    only_set[v] = only_any = 1;
                q += *q == ',';
            }
    }
    if (count < 1)
        count = 1;
    printf("instances %d, work limit %llu nodes, spread_epsilon %lld, %s\n", count,
           (unsigned long long)work, (long long)se, all ? "every k" : "k = N/2");
    printf("| N  | mode      | p50 us     | p99 us     | max us     | cpu p50    | cpu p99    "
           "| exact | errors | checksum         |\n");
    printf("|----|-----------|-----------:|-----------:|-----------:|-----------:|-----------:"
           "|------:|-------:|------------------|\n");
    int ns[3] = {24, 32, 64}, nm[2] = {25, 64};
    for (int x = 0; !map && x < 3; x++) {
        if (only && ns[x] != only)
            continue;
        row(ns[x], SCRAMBLE, count, work, se, all, dump);
        row(ns[x], REBALANCE, count, work, se, all, dump);
    }
    for (int x = 0; map && x < 2; x++)
        if (!only || nm[x] == only)
            row(nm[x], MAP, count, work, se, all, dump);
    return 0;
}
