/* Whole-history refit benchmark (the target: 1,000,000 12v12 rounds, 10 sweeps, in <= 60 s).
 *
 * Streams generated rounds (tests/lib/gen.c) into an eo_fit, then runs exactly --sweeps sweeps
 * (the tolerance set below reach, so none stops early) and prints, per model: the method, the
 * time to add the rounds (interning ids, weights, linear forms), seconds per sweep and in all,
 * passes over the rounds (a MAP sweep is one pass plus its line search, a smoothing sweep a
 * forward and a backward pass), the objective, and the process's peak resident memory so far.
 * Wall clock.
 * Usage: bench_fit [--rounds N] [--players P] [--team K] [--sweeps S] [--method map|smooth]
 *                  [--model M]...
 * Defaults: 1000000 rounds of 12v12 among 20000 players, 10 sweeps, synelo and trueskill, each
 * model's default method (smooth for trueskill and wenglin, map for the others). */
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "evenodds/eo_fit.h"
#include "gen.h"

/* Peak resident memory of the process so far, MiB. */
static double peak_mib(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss / 1024.0 : 0.0;
}

static int bench_model(eo_model m, unsigned long long rounds, unsigned long long players,
                       unsigned long long team, unsigned long long sweeps, int method)
{
    eo_pool_config pc;
    eo_pool_config_default(&pc);
    eo_model_config_default(m, &pc.model);
    eo_fit_config fc;
    eo_fit *f = NULL;
    eo_gen *g = NULL;
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.players = (uint32_t)players;
    gc.team_min = gc.team_max = (uint32_t)team;
    if (eo_fit_config_default(&pc, &fc) != 0)
        return -1;
    fc.max_sweeps = (uint32_t)sweeps;
    fc.tol = 1e-300;
    if (method >= 0)
        fc.method = (eo_fit_method)method;
    if (eo_fit_create(&pc, &fc, &f) != 0 || eo_gen_create(&gc, &g) != 0) {
        fprintf(stderr, "bench_fit: %s: no %s fit (smooth is for trueskill and wenglin)\n",
                eo_model_name(m), eo_fit_method_name(fc.method));
        eo_fit_destroy(f);
        return -1;
    }
    double t0 = bench_now_us();
    for (unsigned long long i = 0; i < rounds; i++) {
        eo_round r;
        eo_gen_next(g, &r);
        if (eo_fit_add_round(f, &r) != 0) {
            fprintf(stderr, "bench_fit: round %llu refused\n", i + 1);
            eo_gen_destroy(g);
            eo_fit_destroy(f);
            return -1;
        }
    }
    double t1 = bench_now_us();
    unsigned passes = 0;
    eo_fit_sweep_stats st;
    memset(&st, 0, sizeof st);
    double slowest = 0.0;
    for (unsigned long long s = 0; s < sweeps; s++) {
        double a = bench_now_us();
        if (eo_fit_sweep(f, &st) != 0)
            break;
        double b = bench_now_us();
        slowest = b - a > slowest ? b - a : slowest;
        passes += st.passes;
        if (st.converged)
            break;
    }
    double t2 = bench_now_us();
    printf("%-9s %-6s rounds %llu (%llux%llu) players %zu: add %.2f s; %u sweeps, %u passes: "
           "%.3f s, %.3f s/sweep (slowest %.3f s), %.3f s/pass; objective %.6g, "
           "last change %.3g; peak RSS %.0f MiB\n",
           eo_model_name(m), eo_fit_method_name(fc.method), rounds, team, team,
           eo_fit_player_count(f), (t1 - t0) / 1e6, st.sweep, passes, (t2 - t1) / 1e6,
           (t2 - t1) / 1e6 / (st.sweep ? st.sweep : 1), slowest / 1e6,
           (t2 - t1) / 1e6 / (passes ? passes : 1), st.objective, st.max_change, peak_mib());
    fflush(stdout);
    eo_gen_destroy(g);
    eo_fit_destroy(f);
    return 0;
}

int main(int argc, char **argv)
{
    unsigned long long rounds = 1000000, players = 20000, team = 12, sweeps = 10;
    int method = -1; /* each model's default */
    eo_model models[EO_MODEL_COUNT];
    int nm = 0;
    for (int i = 1; i < argc; i++) {
        unsigned long long *dst = NULL;
        if (i + 1 >= argc) {
            fprintf(stderr, "bench_fit: '%s' needs a value\n", argv[i]);
            return 2;
        }
        if (strcmp(argv[i], "--rounds") == 0)
            dst = &rounds;
        else if (strcmp(argv[i], "--players") == 0)
            dst = &players;
        else if (strcmp(argv[i], "--team") == 0)
            dst = &team;
        else if (strcmp(argv[i], "--sweeps") == 0)
            dst = &sweeps;
        if (dst != NULL) {
            if (bench_parse_u(argv[++i], dst) != 0) {
                fprintf(stderr, "bench_fit: %s: not a number\n", argv[i - 1]);
                return 2;
            }
        } else if (strcmp(argv[i], "--method") == 0) {
            eo_fit_method fm;
            if (eo_fit_method_parse(argv[++i], &fm) != 0) {
                fprintf(stderr, "bench_fit: --method: expected map or smooth\n");
                return 2;
            }
            method = (int)fm;
        } else if (strcmp(argv[i], "--model") == 0 && nm < EO_MODEL_COUNT) {
            if (eo_model_parse(argv[++i], &models[nm++]) != 0) {
                fprintf(stderr, "bench_fit: --model: unknown '%s'\n", argv[i]);
                return 2;
            }
        } else {
            fprintf(stderr, "bench_fit: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (team < 1 || team > 64 || players < 2 * team || sweeps < 1) {
        fprintf(stderr, "bench_fit: need 1 <= team <= 64, players >= 2*team, sweeps >= 1\n");
        return 2;
    }
    if (nm == 0) {
        models[nm++] = EO_MODEL_SYNELO;
        models[nm++] = EO_MODEL_TRUESKILL;
    }
    for (int i = 0; i < nm; i++)
        if (bench_model(models[i], rounds, players, team, sweeps, method) != 0)
            return 1;
    return 0;
}
