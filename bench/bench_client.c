/* What libevenodds-client costs the game's frame loop (docs/CLIENT.md): the time of each call a
 * plugin makes, with 32 players on a 16v16 server and the service unreachable (the worker
 * keeps retrying meanwhile, as it would during an outage). Prints one line per call: count,
 * mean, p50, p99 and max in microseconds (wall clock), then the whole frame loop's worst.
 *
 *   build-bench/bench/bench_client [--rounds N]      (default 2000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "evenodds/eo_client.h"

#define PLAYERS 32
#define KINDS 5

static const char *kind_name[KINDS] = {"player_event", "poll", "round_start", "round_end",
                                       "player_team"};

typedef struct samples {
    double *v;
    size_t n, cap;
} samples;

static void add(samples *s, double us)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        if (s->v == NULL)
            abort();
    }
    s->v[s->n++] = us;
}

#define TIME(kind, call)                                                                       \
    do {                                                                                       \
        double t0_ = bench_now_us();                                                           \
        (void)(call);                                                                          \
        add(&smp[kind], bench_now_us() - t0_);                                                 \
    } while (0)

int main(int argc, char **argv)
{
    long rounds = 2000;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            char *end;
            rounds = strtol(argv[++i], &end, 10);
            if (*end != '\0' || rounds < 1) {
                fprintf(stderr, "bench_client: --rounds: expected a positive integer\n");
                return 2;
            }
        } else {
            fprintf(stderr, "usage: bench_client [--rounds N]\n");
            return 2;
        }
    }
    char dir[] = "/tmp/eo_bench_client_XXXXXX";
    if (mkdtemp(dir) == NULL)
        return 1;
    char state[128];
    snprintf(state, sizeof state, "%s/c.state", dir);
    eo_client_config cfg;
    eo_client_config_init(&cfg);
    cfg.url = "http://127.0.0.1:1"; /* nothing listens: an outage */
    cfg.server_id = "bench";
    cfg.key = "0123456789abcdef0123";
    cfg.state_file = state;
    cfg.retry_min_ms = 10;
    cfg.retry_max_ms = 100;
    cfg.autobalance.delay = 0;
    eo_client *c = NULL;
    char err[256];
    if (eo_client_create(&cfg, &c, err, sizeof err) != 0) {
        fprintf(stderr, "bench_client: %s\n", err);
        return 1;
    }
    samples smp[KINDS] = {{0}};
    char ids[PLAYERS][16];
    double now = 1763800000;
    for (int i = 0; i < PLAYERS; i++) {
        snprintf(ids[i], sizeof ids[i], "7656119800%04d", i);
        eo_client_player_connect(c, ids[i], now);
        eo_client_player_team(c, ids[i], i % 2 ? EO_TRACK_B : EO_TRACK_A, now);
    }
    uint64_t rng = 7;
    eo_client_event ev;
    for (long r = 0; r < rounds; r++) {
        TIME(2, eo_client_round_start(c, now));
        /* A round: 60 frames of 100 damage events each, a poll per frame, one team switch. */
        for (int f = 0; f < 60; f++) {
            now += 5;
            for (int e = 0; e < 100; e++)
                TIME(0, eo_client_player_event(c, ids[bench_rng_next(&rng) % PLAYERS],
                                               EO_TRACK_DAMAGE_DEALT, now));
            if (f == 30) {
                int p = (int)(bench_rng_next(&rng) % PLAYERS);
                TIME(4, eo_client_player_team(c, ids[p], p % 2 ? EO_TRACK_A : EO_TRACK_B, now));
            }
            int got;
            do {
                double t0 = bench_now_us();
                got = eo_client_poll(c, now, &ev);
                add(&smp[1], bench_now_us() - t0);
                if (got == 1 && ev.type == EO_CLIENT_EV_MOVE)
                    eo_client_player_team(c, ev.id, ev.to, now);
            } while (got == 1);
        }
        now += 5;
        TIME(3, eo_client_round_end(c, bench_rng_next(&rng) % 2 ? EO_WIN_A : EO_WIN_B, NULL,
                                    now, NULL, 0));
        now += 10;
    }
    printf("bench_client: %d players, %ld rounds, service unreachable (ring full after 8)\n",
           PLAYERS, rounds);
    printf("%-13s %9s %9s %9s %9s %9s\n", "call", "count", "mean_us", "p50_us", "p99_us",
           "max_us");
    double worst = 0;
    for (int k = 0; k < KINDS; k++) {
        samples *s = &smp[k];
        double sum = 0;
        for (size_t i = 0; i < s->n; i++)
            sum += s->v[i];
        qsort(s->v, s->n, sizeof *s->v, bench_cmp_double);
        double max = s->v[s->n - 1];
        if (max > worst)
            worst = max;
        printf("%-13s %9zu %9.3f %9.3f %9.3f %9.1f\n", kind_name[k], s->n, sum / (double)s->n,
               s->v[s->n / 2], s->v[(size_t)((double)s->n * 0.99)], max);
        free(s->v);
    }
    printf("longest frame-loop call: %.1f us\n", worst);
    eo_client_destroy(c);
    unlink(state);
    rmdir(dir);
    return 0;
}
