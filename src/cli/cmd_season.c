/* evenodds season: ends a pool's season in a store (archiving its standings, then the soft
 * reset of every player), or lists the pool's seasons. The same work as
 * POST /v1/pools/{pool}/seasons, for an operator with the database file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_engine.h"

static const char season_usage[] =
    "usage: evenodds season --db FILE --pool NAME --end SEASON [--f F] [--s S]\n"
    "       evenodds season --db FILE --pool NAME --list\n"
    "\n"
    "--end archives every player's current state as the final standings of SEASON (a name\n"
    "unused in the pool), then starts the next season with a soft reset toward the model's\n"
    "start values: models without a deviation (synelo, elo) move each rating by the factor F\n"
    "toward the start value (R ← R0 + F·(R − R0)); models with one (trueskill, wenglin, glicko2)\n"
    "widen the deviation (σ ← min(σ0, √(σ² + S²))). Logged, so a restart or a replay of the\n"
    "store gives the same state. Prints {\"season\":…,\"players\":…,\"at\":…}.\n"
    "--list prints {\"seasons\":[{\"name\":…,\"at\":…,\"players\":…}, …]}, oldest first.\n"
    "\n"
    "  --db FILE      the SQLite store\n"
    "  --pool NAME    the pool\n"
    "  --end SEASON   the season that ends now\n"
    "  --f F          pull toward the start value, in [0, 1] (default 0.5)\n"
    "  --s S          deviation added, >= 0 (default: a third of a new player's deviation)\n"
    "  --list         list the seasons instead\n"
    "\n"
    "Exit status: 0 done, 1 failure (nothing changed), 2 bad usage.\n";

typedef struct season_opts {
    const char *db, *pool, *end;
    double f, s;
    bool list;
} season_opts;

static int parse_args(int argc, char **argv, season_opts *o)
{
    const char *val = NULL;
    o->f = 0.5;
    o->s = -1.0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(season_usage, stdout);
            return 1;
        } else if (strcmp(argv[i], "--list") == 0) {
            o->list = true;
        } else if ((r = eo_opt_value("season", argc, argv, &i, "--db", &val)) != 0) {
            if (r < 0)
                return -1;
            o->db = val;
        } else if ((r = eo_opt_value("season", argc, argv, &i, "--pool", &val)) != 0) {
            if (r < 0)
                return -1;
            o->pool = val;
        } else if ((r = eo_opt_value("season", argc, argv, &i, "--end", &val)) != 0) {
            if (r < 0)
                return -1;
            o->end = val;
        } else if ((r = eo_opt_value("season", argc, argv, &i, "--f", &val)) != 0) {
            if (r < 0 || eo_opt_real("season", "--f", val, 0.0, 1.0, &o->f) != 0)
                return -1;
        } else if ((r = eo_opt_value("season", argc, argv, &i, "--s", &val)) != 0) {
            if (r < 0 || eo_opt_real("season", "--s", val, 0.0, 1e9, &o->s) != 0)
                return -1;
        } else {
            fprintf(stderr, "evenodds season: unknown argument '%s' (see --help)\n", argv[i]);
            return -1;
        }
    }
    const char *missing = !o->db ? "--db FILE" : !o->pool ? "--pool NAME"
                          : (!o->end && !o->list) ? "--end SEASON or --list" : NULL;
    if (missing != NULL) {
        fprintf(stderr, "evenodds season: %s is required (see --help)\n", missing);
        return -1;
    }
    if (o->end && o->list) {
        fputs("evenodds season: give --end or --list, not both\n", stderr);
        return -1;
    }
    return 0;
}

static int list_one(void *ctx, const char *name, int64_t seq, int64_t at, int64_t players)
{
    (void)seq;
    return json_array_append_new(ctx, json_pack("{s:s,s:I,s:I}", "name", name, "at",
                                                (json_int_t)at, "players", (json_int_t)players))
               ? EO_ENOMEM
               : 0;
}

/* Prints @p o as one compact line; 0 or 1. */
static int print_json(json_t *o)
{
    char *text = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(o);
    if (text == NULL) {
        fputs("evenodds season: out of memory\n", stderr);
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int run(const season_opts *o)
{
    eo_store *s = NULL;
    char msg[512];
    /* Read-only first: a mistyped path must not create an empty store. */
    if (eo_store_open(o->db, EO_STORE_READONLY, &s, msg, sizeof msg) != 0) {
        fprintf(stderr, "evenodds season: %s\n", msg);
        return 1;
    }
    if (!o->list) {
        eo_store_close(s);
        s = NULL;
    }
    if (s == NULL && eo_store_open(o->db, 0, &s, msg, sizeof msg) != 0) {
        fprintf(stderr, "evenodds season: %s\n", msg);
        return 1;
    }
    eo_pool_row row;
    int rc = eo_store_pool_get(s, o->pool, &row);
    if (rc != 0) {
        fprintf(stderr, "evenodds season: %s\n",
                rc == EO_ENOTFOUND ? "no such pool in the store" : eo_store_errmsg(s));
        eo_store_close(s);
        return 1;
    }
    int64_t pool_id = row.id;
    eo_pool_row_free(&row);
    if (o->list) {
        json_t *arr = json_array();
        rc = arr ? eo_store_seasons_each(s, pool_id, list_one, arr) : EO_ENOMEM;
        if (rc != 0)
            fprintf(stderr, "evenodds season: %s\n", eo_store_errmsg(s));
        eo_store_close(s);
        if (rc != 0) {
            json_decref(arr);
            return 1;
        }
        return print_json(json_pack("{s:o}", "seasons", arr));
    }
    eo_engine *e = NULL;
    eo_engine_error err;
    if (eo_engine_open(s, &e, &err) != 0) { /* the engine closes the store on failure */
        fprintf(stderr, "evenodds season: %s: %s\n", o->db, err.message);
        return 1;
    }
    int64_t now = (int64_t)time(NULL), players = 0;
    rc = eo_engine_season(e, o->pool, o->end, o->f, o->s, now, &players, &err);
    eo_engine_close(e);
    if (rc != 0) {
        fprintf(stderr, "evenodds season: %s%s%s\n", err.field, err.field[0] ? ": " : "",
                err.message);
        return 1;
    }
    return print_json(json_pack("{s:s,s:I,s:I}", "season", o->end, "players",
                                (json_int_t)players, "at", (json_int_t)now));
}

int eo_cmd_season(int argc, char **argv)
{
    season_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    return rc < 0 ? 2 : rc > 0 ? 0 : run(&o);
}
