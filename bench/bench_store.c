/* Store and engine throughput: generated 12v12 rounds through eo_engine_round() into a
 * temporary SQLite store in batches (group commit, durable at commit per eo_store.h), then the
 * cost of opening that store again (the fold of the whole log), and of its parts.
 *
 *   bench_store [--rounds N] [--batch B] [--sync-full] [--isolate] [--model M]
 *
 * --isolate runs each round behind a savepoint, as the service's writer does
 * (eo_engine_isolate()); --model rates a pool of model M (default synelo) with its defaults.
 *
 * Prints one JSON line. Commands and figures: docs/STORE.md. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"
#include "gen.h"
#include "store_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int count_entry(void *ctx, const eo_log_entry *e)
{
    size_t *n = ctx;
    *n += strlen(e->body) > 0;
    return 0;
}

static int parse_entry(void *ctx, const eo_log_entry *e)
{
    size_t *n = ctx;
    eo_round r;
    eo_round_error err;
    if (eo_round_from_text(e->body, strlen(e->body), &r, &err) != 0)
        return -1;
    eo_round_free(&r);
    (*n)++;
    return 0;
}

int main(int argc, char **argv)
{
    long rounds = 100000, batch = 100;
    unsigned flags = 0;
    bool isolate = false;
    const char *model = "synelo";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--batch") == 0 && i + 1 < argc)
            batch = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--sync-full") == 0)
            flags |= EO_STORE_SYNC_FULL;
        else if (strcmp(argv[i], "--isolate") == 0)
            isolate = true;
        else if (strcmp(argv[i], "--model") == 0 && i + 1 < argc)
            model = argv[++i];
        else {
            fprintf(stderr, "usage: bench_store [--rounds N] [--batch B] [--sync-full] "
                            "[--isolate] [--model M]\n");
            return 2;
        }
    }
    if (rounds < 1 || batch < 1)
        return 2;
    char path[] = "/tmp/eo_bench_store_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return 1;
    close(fd);

    eo_gen_config c;
    eo_gen_config_default(&c);
    eo_gen *g = NULL;
    if (eo_gen_create(&c, &g) != 0)
        return 1;
    /* the request objects are made before the clock starts: the service parses them in its
     * HTTP threads, not in the writer */
    json_t **objs = calloc((size_t)rounds, sizeof *objs);
    static char line[1 << 16];
    for (long i = 0; i < rounds && objs; i++) {
        eo_round r;
        eo_gen_next(g, &r);
        eo_gen_jsonl(&r, line, sizeof line);
        objs[i] = json_loads(line, 0, NULL);
    }
    eo_gen_destroy(g);

    int rc = 1;
    eo_engine *e = test_engine_open(path, flags);
    eo_engine_error err;
    if (e == NULL || eo_engine_pool_create(e, "bench", model, NULL, 0, &err) != 0)
        goto out;
    eo_engine_isolate(e, isolate);
    double t0 = now_s();
    /* the rate over the first and the last tenth shows whether a growing log slows writes */
    long tenth = rounds / 10 > batch ? rounds / 10 / batch * batch : batch;
    double t_first = 0, t_last_start = 0;
    for (long i = 0; i < rounds; i += batch) {
        if (i == tenth)
            t_first = now_s() - t0;
        if (t_last_start == 0 && i >= rounds - tenth)
            t_last_start = now_s();
        if (eo_engine_begin(e) != 0)
            goto out;
        for (long j = i; j < i + batch && j < rounds; j++) {
            char *resp = NULL;
            int replayed = 0;
            if (eo_engine_round(e, "bench", objs[j], 1763900000, &resp, &replayed, &err) != 0) {
                fprintf(stderr, "bench_store: %s\n", err.message);
                goto out;
            }
            free(resp);
        }
        if (eo_engine_commit(e) != 0)
            goto out;
    }
    double t_write = now_s() - t0;
    double t_last = now_s() - t_last_start;
    eo_engine_close(e);
    e = NULL;

    /* the open, and its parts: reading the log, parsing it, and the whole fold */
    eo_store *s = NULL;
    char msg[256];
    size_t n_read = 0, n_parsed = 0;
    if (eo_store_open(path, EO_STORE_READONLY, &s, msg, sizeof msg) != 0)
        goto out;
    eo_pool_row row;
    eo_store_pool_get(s, "bench", &row);
    t0 = now_s();
    eo_store_log_each(s, row.id, 0, count_entry, &n_read);
    double t_read = now_s() - t0;
    t0 = now_s();
    eo_store_log_each(s, row.id, 0, parse_entry, &n_parsed);
    double t_parse = now_s() - t0;
    eo_pool_row_free(&row);
    eo_store_close(s);
    t0 = now_s();
    e = test_engine_open(path, 0);
    double t_open = now_s() - t0;
    if (e == NULL || n_read != (size_t)rounds || n_parsed != (size_t)rounds)
        goto out;
    FILE *fp = fopen(path, "rb");
    long size = 0;
    if (fp && fseek(fp, 0, SEEK_END) == 0)
        size = ftell(fp);
    if (fp)
        fclose(fp);
    printf("{\"rounds\":%ld,\"batch\":%ld,\"sync\":\"%s\",\"write_rounds_per_s\":%.0f,"
           "\"first_tenth_per_s\":%.0f,\"last_tenth_per_s\":%.0f,\"open_s\":%.3f,\"log_read_s\":%.3f,\"log_read_parse_s\":%.3f,\"db_bytes\":%ld}\n",
           rounds, batch, (flags & EO_STORE_SYNC_FULL) ? "full" : "normal",
           (double)rounds / t_write, (double)tenth / t_first, (double)tenth / t_last, t_open, t_read, t_parse, size);
    rc = 0;
out:
    eo_engine_close(e);
    for (long i = 0; i < rounds && objs; i++)
        json_decref(objs[i]);
    free(objs);
    test_store_remove(path);
    return rc;
}
