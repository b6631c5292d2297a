/* The dashboard's reads on a large pool: builds (once, through the engine, as the service
 * writes) a SynElo pool of generated 12v12 rounds with named players, then starts
 * `evenodds serve` on it and times every read from one keep-alive client, each request with
 * random arguments over the whole pool (deep pages, rare and common searches, any player, any
 * round). Prints p50, p99 and the largest time per read, in ms.
 *
 *   bench_reads [--db FILE] [--players N] [--rounds N] [--requests N] [--build-only]
 *
 * Defaults: 100,000 players, 1,000,000 rounds, 200 requests per read; the store is kept at
 * --db (default bench_reads.db) and reused when it holds the pool at that size. Needs the
 * Release binary: $EO_BIN, else build-bench/evenodds. Figures: docs/SERVICE.md "Dashboard and
 * reads", bench/README.md. */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"
#include "gen.h"
#include "prng.h"

#define POOL "bench"
#define BATCH 2000

typedef struct opts {
    const char *db;
    long players, rounds, requests;
    bool build_only;
} opts;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Player @p i's name: two syllables and a number, so that one letter matches many players and
 * a whole name few. */
static void name_of(long i, char *buf, size_t cap)
{
    static const char *const syl[] = {"ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo",
                                      "ze", "ba", "do", "fu", "gi", "ha", "jo", "ku"};
    snprintf(buf, cap, "%s%s %ld", syl[i % 16], syl[(i / 16) % 16], i);
}

/* The pool's rounds so far: 0 when the store or the pool does not exist yet. */
static long rounds_in(const char *db)
{
    struct stat st;
    eo_store *s = NULL;
    eo_pool_row row;
    int64_t n = 0;
    char err[256];
    if (stat(db, &st) != 0 || eo_store_open(db, EO_STORE_READONLY, &s, err, sizeof err) != 0)
        return 0;
    if (eo_store_pool_get(s, POOL, &row) == 0) {
        eo_store_round_count(s, row.id, &n);
        eo_pool_row_free(&row);
    }
    eo_store_close(s);
    return (long)n;
}

/* Builds the pool through the engine, BATCH rounds per transaction, with progress on stderr. */
static int build(const opts *o)
{
    char err[512];
    eo_store *s = NULL;
    eo_engine *e = NULL;
    eo_engine_error eerr;
    eo_store_remove(o->db);
    if (eo_store_open(o->db, 0, &s, err, sizeof err) != 0 || eo_engine_open(s, &e, &eerr) != 0 ||
        eo_engine_pool_create(e, POOL, "synelo", NULL, 1763000000, &eerr) != 0) {
        fprintf(stderr, "bench_reads: %s: cannot create the store\n", o->db);
        eo_engine_close(e);
        return -1;
    }
    eo_gen_config gc;
    eo_gen_config_default(&gc);
    gc.players = (uint32_t)o->players;
    gc.start = 1700000000;
    gc.spacing = 60; /* a million rounds over two years */
    eo_gen *g = NULL;
    if (eo_gen_create(&gc, &g) != 0)
        return -1;
    char names[EO_PLAYERS_MAX][48], id[32];
    double t0 = now_s();
    int rc = 0;
    for (long k = 0; k < o->rounds && rc == 0; k++) {
        if (k % BATCH == 0 && (rc = eo_engine_begin(e)) != 0)
            break;
        eo_round r;
        eo_gen_next(g, &r);
        snprintf(id, sizeof id, "r%ld", k);
        r.id = id;
        size_t i = 0;
        for (int t = 0; t < 2; t++)
            for (size_t j = 0; j < r.n[t]; j++, i++) {
                name_of(strtol(r.team[t][j].id + 8, NULL, 10), names[i], sizeof names[i]);
                r.team[t][j].name = names[i];
            }
        json_t *obj = eo_round_to_json(&r);
        char *resp = NULL;
        int replayed = 0;
        rc = obj ? eo_engine_round(e, POOL, obj, r.ended_at, &resp, &replayed, &eerr) : EO_ENOMEM;
        json_decref(obj);
        free(resp);
        if (rc == 0 && ((k + 1) % BATCH == 0 || k + 1 == o->rounds))
            rc = eo_engine_commit(e);
        if ((k + 1) % 50000 == 0)
            fprintf(stderr, "bench_reads: %ld rounds, %.0f s\n", k + 1, now_s() - t0);
    }
    if (rc != 0)
        fprintf(stderr, "bench_reads: building: %s (%s)\n", eerr.message, eo_strerror(rc));
    eo_gen_destroy(g);
    eo_engine_close(e);
    printf("{\"built\":%ld,\"players\":%ld,\"seconds\":%.1f}\n", o->rounds, o->players,
           now_s() - t0);
    return rc == 0 ? 0 : -1;
}

/* ---- timing the reads ------------------------------------------------------------------- */

typedef struct client {
    CURL *c;
    char base[128];
    size_t got;
} client;

static size_t sink(char *data, size_t sz, size_t nm, void *ud)
{
    (void)data;
    *(size_t *)ud += sz * nm;
    return sz * nm;
}

/* One GET; its time in ms, or -1 when it did not answer 200. */
static double timed_get(client *cl, const char *path)
{
    char url[600];
    long status = 0;
    snprintf(url, sizeof url, "%s%s", cl->base, path);
    curl_easy_setopt(cl->c, CURLOPT_URL, url);
    double t0 = now_s();
    CURLcode rc = curl_easy_perform(cl->c);
    double ms = (now_s() - t0) * 1000.0;
    curl_easy_getinfo(cl->c, CURLINFO_RESPONSE_CODE, &status);
    if (rc != CURLE_OK || status != 200) {
        fprintf(stderr, "bench_reads: GET %s: %s %ld\n", path, curl_easy_strerror(rc), status);
        return -1;
    }
    return ms;
}

/* The CPU time process @p pid has used (user and system), in ms: on a shared machine the
 * service's CPU per request says what a request costs whatever the load. */
static double cpu_ms(pid_t pid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "r");
    size_t n = f != NULL ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f != NULL)
        fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* fields after the command's name */
    unsigned long long ut = 0, st = 0;
    if (p == NULL ||
        sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
        return 0;
    return (double)(ut + st) * 1000.0 / (double)sysconf(_SC_CLK_TCK);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The paths of one kind of read, one per call with random arguments. */
typedef void (*path_fn)(const opts *o, prng *r, char *path, size_t cap);

static void p_board(const opts *o, prng *r, char *path, size_t cap)
{
    long visible = o->players * 9 / 10; /* offsets spread over the board's pages */
    snprintf(path, cap, "/v1/pools/" POOL "/standings?offset=%ld&limit=50",
             (long)(below(r, (size_t)visible / 50) * 50));
}

static void p_search(const opts *o, prng *r, char *path, size_t cap)
{
    char name[48];
    long i = (long)below(r, (size_t)o->players);
    name_of(i, name, sizeof name);
    switch (below(r, 4)) {
    case 0: /* a whole name: few matches, the whole board walked */
        snprintf(path, cap, "/v1/pools/" POOL "/standings?q=%.4s%%20%ld", name, i);
        break;
    case 1: /* two syllables: one player in 256 */
        snprintf(path, cap, "/v1/pools/" POOL "/standings?q=%.4s", name);
        break;
    case 2: /* an id's start: everyone, the page found at once */
        snprintf(path, cap, "/v1/pools/" POOL "/standings?q=7656119&offset=%llu",
                 (unsigned long long)below(r, 20) * 50);
        break;
    default: /* one syllable, a later page */
        snprintf(path, cap, "/v1/pools/" POOL "/standings?q=%.2s&offset=%llu", name,
                 (unsigned long long)below(r, 100) * 50);
    }
}

static void p_history(const opts *o, prng *r, char *path, size_t cap)
{
    snprintf(path, cap, "/v1/pools/" POOL "/players/%llu/history",
             76561198000000000ull + below(r, (size_t)o->players));
}

static void p_player_rounds(const opts *o, prng *r, char *path, size_t cap)
{
    snprintf(path, cap, "/v1/pools/" POOL "/players/%llu/rounds?offset=%llu",
             76561198000000000ull + below(r, (size_t)o->players),
             (unsigned long long)below(r, 5) * 20);
}

static void p_rounds(const opts *o, prng *r, char *path, size_t cap)
{
    snprintf(path, cap, "/v1/pools/" POOL "/rounds?offset=%llu",
             (unsigned long long)below(r, (size_t)o->rounds - 20));
}

static void p_round(const opts *o, prng *r, char *path, size_t cap)
{
    snprintf(path, cap, "/v1/pools/" POOL "/rounds/r%llu",
             (unsigned long long)below(r, (size_t)o->rounds));
}

static void p_health_day(const opts *o, prng *r, char *path, size_t cap)
{
    (void)o, (void)r;
    snprintf(path, cap, "/v1/pools/" POOL "/health");
}

static void p_health_week(const opts *o, prng *r, char *path, size_t cap)
{
    (void)o, (void)r;
    snprintf(path, cap, "/v1/pools/" POOL "/health?bucket=week");
}

static void p_dashboard(const opts *o, prng *r, char *path, size_t cap)
{
    (void)o, (void)r;
    snprintf(path, cap, "/v1/dashboard");
}

static void p_maps(const opts *o, prng *r, char *path, size_t cap)
{
    (void)o, (void)r;
    snprintf(path, cap, "/v1/pools/" POOL "/maps");
}

/* A page: every page path answers the same built-in file; its script asks the reads above. */
static void p_page(const opts *o, prng *r, char *path, size_t cap)
{
    (void)o, (void)r;
    snprintf(path, cap, "/pools/" POOL);
}

static int time_reads(const opts *o, const e2e_server *s)
{
    static const struct {
        const char *name;
        path_fn fn;
    } reads[] = {{"standings", p_board},
                 {"standings?q", p_search},
                 {"history", p_history},
                 {"player rounds", p_player_rounds},
                 {"rounds", p_rounds},
                 {"round", p_round},
                 {"health day", p_health_day},
                 {"health week", p_health_week},
                 {"maps", p_maps},
                 {"dashboard", p_dashboard},
                 {"page", p_page}};
    client cl = {curl_easy_init(), "", 0};
    snprintf(cl.base, sizeof cl.base, "%s", s->url);
    curl_easy_setopt(cl.c, CURLOPT_WRITEFUNCTION, sink);
    curl_easy_setopt(cl.c, CURLOPT_WRITEDATA, &cl.got);
    double *t = malloc((size_t)o->requests * sizeof *t);
    prng r = {18};
    int rc = t != NULL ? 0 : -1;
    for (size_t k = 0; rc == 0 && k < sizeof reads / sizeof reads[0]; k++) {
        char path[400];
        size_t bytes = cl.got;
        double cpu = cpu_ms(s->pid);
        for (long i = 0; rc == 0 && i < o->requests; i++) {
            reads[k].fn(o, &r, path, sizeof path);
            rc = (t[i] = timed_get(&cl, path)) < 0 ? -1 : 0;
        }
        if (rc != 0)
            break;
        cpu = (cpu_ms(s->pid) - cpu) / (double)o->requests;
        qsort(t, (size_t)o->requests, sizeof *t, cmp_double);
        printf("{\"read\":\"%s\",\"requests\":%ld,\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,"
               "\"cpu_ms\":%.2f,\"bytes\":%zu}\n",
               reads[k].name, o->requests, t[o->requests / 2], t[o->requests * 99 / 100],
               t[o->requests - 1], cpu, (cl.got - bytes) / (size_t)o->requests);
        fflush(stdout);
    }
    free(t);
    curl_easy_cleanup(cl.c);
    return rc;
}

static int parse(int argc, char **argv, opts *o)
{
    *o = (opts){"bench_reads.db", 100000, 1000000, 200, false};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--db") == 0 && i + 1 < argc)
            o->db = argv[++i];
        else if (strcmp(argv[i], "--players") == 0 && i + 1 < argc)
            o->players = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            o->rounds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--requests") == 0 && i + 1 < argc)
            o->requests = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--build-only") == 0)
            o->build_only = true;
        else {
            fprintf(stderr, "usage: bench_reads [--db FILE] [--players N] [--rounds N] "
                            "[--requests N] [--build-only]\n");
            return -1;
        }
    }
    if (o->players < 100 || o->rounds < 100 || o->requests < 10) {
        fprintf(stderr, "bench_reads: --players and --rounds >= 100, --requests >= 10\n");
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    opts o;
    if (parse(argc, argv, &o) != 0)
        return 2;
    if (rounds_in(o.db) != o.rounds && build(&o) != 0)
        return 1;
    if (o.build_only)
        return 0;
    if (getenv("EO_BIN") == NULL)
        setenv("EO_BIN", "build-bench/evenodds", 1);
    e2e_server s;
    const char *extra[] = {"--log-level", "warn", NULL};
    if (e2e_init(&s) != 0)
        return 1;
    snprintf(s.db, sizeof s.db, "%s", o.db);
    s.start_s = 1800; /* the service folds the whole log at start */
    if (e2e_start(&s, extra) != 0) {
        fprintf(stderr, "bench_reads: cannot start %s serve on %s\n", getenv("EO_BIN"), o.db);
        e2e_cleanup(&s);
        return 1;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    int rc = time_reads(&o, &s);
    int st = 0;
    e2e_stop(&s, SIGTERM, 60000, &st);
    e2e_cleanup(&s);
    return rc == 0 && st == 0 ? 0 : 1;
}
