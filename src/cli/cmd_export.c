/* evenodds export: a pool's rounds (and refits) as JSONL, in log order, exactly as stored. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_store.h"

static const char export_usage[] =
    "usage: evenodds export --db FILE --pool NAME [--out FILE]\n"
    "\n"
    "Writes the rounds of pool NAME in the store FILE as JSONL, one canonical round record per\n"
    "line (as stored: unknown fields kept), in the order they were rated. A refit (the admin\n"
    "endpoint's fitted states) is a line {\"refit\":{\"players\":[[id,mean(,sigma)],...],\n"
    "\"upto\":P}} in its place, which `evenodds replay` applies, so a replay of the export\n"
    "gives the pool's ratings. Other admin edits (set and reset of a rating, seasons) are not\n"
    "written. The store is opened read-only, so this runs beside a live service.\n"
    "\n"
    "  --db FILE    the SQLite store\n"
    "  --pool NAME  the pool\n"
    "  --out FILE   write to FILE instead of standard output\n"
    "\n"
    "Exit status: 0 done, 1 failure, 2 bad usage.\n";

typedef struct writer {
    FILE *out;
    size_t n;
} writer;

static int put_round(void *ctx, const eo_log_entry *le)
{
    writer *w = ctx;
    if (le->kind == EO_LOG_REFIT) {
        /* The stored body as is: the line holds exactly the values the pool applied. */
        if (fputs("{\"refit\":", w->out) == EOF || fputs(le->body, w->out) == EOF ||
            fputs("}\n", w->out) == EOF)
            return 1;
        return 0;
    }
    if (le->kind != EO_LOG_ROUND)
        return 0;
    if (fputs(le->body, w->out) == EOF || fputc('\n', w->out) == EOF)
        return 1;
    w->n++;
    return 0;
}

int eo_cmd_export(int argc, char **argv)
{
    const char *db = NULL, *pool = NULL, *out = NULL, *val = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(export_usage, stdout);
            return 0;
        } else if ((r = eo_opt_value("export", argc, argv, &i, "--db", &val)) != 0) {
            if (r < 0)
                return 2;
            db = val;
        } else if ((r = eo_opt_value("export", argc, argv, &i, "--pool", &val)) != 0) {
            if (r < 0)
                return 2;
            pool = val;
        } else if ((r = eo_opt_value("export", argc, argv, &i, "--out", &val)) != 0) {
            if (r < 0)
                return 2;
            out = val;
        } else {
            fprintf(stderr, "evenodds export: unexpected argument '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (db == NULL || pool == NULL) {
        fprintf(stderr, "evenodds export: %s is required (see --help)\n",
                db == NULL ? "--db FILE" : "--pool NAME");
        return 2;
    }
    eo_store *s = NULL;
    char msg[512];
    if (eo_store_open(db, EO_STORE_READONLY, &s, msg, sizeof msg) != 0) {
        fprintf(stderr, "evenodds export: %s\n", msg);
        return 1;
    }
    eo_pool_row row;
    int rc = eo_store_pool_get(s, pool, &row);
    if (rc != 0) {
        if (rc == EO_ENOTFOUND)
            fprintf(stderr, "evenodds export: pool \"%s\" is not in %s\n", pool, db);
        else
            fprintf(stderr, "evenodds export: %s\n", eo_store_errmsg(s));
        eo_store_close(s);
        return 1;
    }
    int64_t pool_id = row.id;
    eo_pool_row_free(&row);
    writer w = {out ? fopen(out, "w") : stdout, 0};
    if (w.out == NULL) {
        fprintf(stderr, "evenodds export: %s: %s\n", out, strerror(errno));
        eo_store_close(s);
        return 1;
    }
    /* One read transaction: the export is a consistent snapshot even while a writer runs. */
    rc = eo_store_begin(s);
    if (rc == 0)
        rc = eo_store_log_each(s, pool_id, 0, put_round, &w);
    int status = 0;
    if (rc < 0) {
        fprintf(stderr, "evenodds export: %s\n", eo_store_errmsg(s));
        status = 1;
    }
    eo_store_rollback(s);
    eo_store_close(s);
    bool werr = rc > 0 || fflush(w.out) != 0 || ferror(w.out);
    if (out != NULL && fclose(w.out) != 0)
        werr = true;
    if (werr) {
        fprintf(stderr, "evenodds export: %s: write error: %s\n", out ? out : "<stdout>",
                strerror(errno));
        status = 1;
    }
    if (status != 0 && out != NULL)
        remove(out); /* no half-written export left behind */
    return status;
}
