/* Balancer timings (issue 3 §6): p50/p99/max per call of scramble mode with parties and locks and
 * of rebalance mode, N = 24, 32, 64, and how many answers were exact within the work limit.
 *
 *   bench_balance [instances] [work_limit] [all]
 *
 * Ratings normal(1000, 300) rounded (clamped >= 100), seeded. Scramble rows: a party of 2 or 3
 * for about a quarter of the players, two players locked (one per side), current teams ignored.
 * Rebalance rows: everyone on a current team (alternating by arrival), one party of 3, two
 * protected players, preferences for a third with weights 1..8. One team size per call, k = N/2
 * (a full server), unless "all" is given (every k). docs/BALANCER.md has the figures. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evenodds/eo_balance.h"

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double unif(uint64_t *s) { return ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0; }

static int64_t normal_rating(uint64_t *s)
{
    double u = unif(s), v = unif(s);
    double z = sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
    int64_t r = (int64_t)llround(1000.0 + 300.0 * z);
    return r < 100 ? 100 : r;
}

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void row(int n, int scramble, int count, uint64_t work, int all)
{
    uint64_t s = (uint64_t)n * 1000 + (uint64_t)scramble;
    double *t = malloc(sizeof(double) * (size_t)count);
    int exact = 0, total = 0, errs = 0;
    for (int c = 0; c < count; c++) {
        eo_balance_player p[64];
        memset(p, 0, sizeof p);
        for (int i = 0; i < n; i++)
            p[i].rating = normal_rating(&s);
        eo_balance_request r;
        memset(&r, 0, sizeof r);
        r.work_limit = work;
        if (!all)
            r.k_min = r.k_max = n / 2;
        if (scramble) {
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
                    p[i].weight = (uint32_t)(1 + rng_next(&s) % 8);
                }
            }
            p[0].party = p[2].party = p[4].party = 9; /* all on A */
            p[5].protect = p[6].protect = 1;
        }
        eo_balance_result *res = NULL;
        double t0 = now_us();
        int rc = eo_balance_solve(p, (size_t)n, &r, &res, NULL);
        t[c] = now_us() - t0;
        if (rc) {
            errs++;
            continue;
        }
        for (size_t x = 0; x < res->count; x++) {
            total++;
            exact += res->split[x].err == 0 && res->split[x].exact;
            errs += res->split[x].err != 0;
        }
        eo_balance_free(res);
    }
    qsort(t, (size_t)count, sizeof *t, cmp_d);
    printf("| %2d | %-9s | %10.0f | %10.0f | %10.0f | %d/%d | %d |\n", n,
           scramble ? "scramble" : "rebalance", t[count / 2], t[(count * 99) / 100],
           t[count - 1], exact, total, errs);
    free(t);
}

int main(int argc, char **argv)
{
    int count = argc > 1 ? (int)strtol(argv[1], NULL, 10) : 100;
    uint64_t work = argc > 2 ? strtoull(argv[2], NULL, 10) : UINT64_C(10000000);
    int all = argc > 3 && strcmp(argv[3], "all") == 0;
    if (count < 1)
        count = 1;
    printf("instances %d, work limit %llu nodes, %s\n", count, (unsigned long long)work,
           all ? "every k" : "k = N/2");
    printf("| N  | mode      | p50 us     | p99 us     | max us     | exact | errors |\n");
    printf("|----|-----------|-----------:|-----------:|-----------:|------:|-------:|\n");
    int ns[3] = {24, 32, 64};
    for (int x = 0; x < 3; x++) {
        row(ns[x], 1, count, work, all);
        row(ns[x], 0, count, work, all);
    }
    return 0;
}
