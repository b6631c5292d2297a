/* evenodds import: a JSONL round log into a pool of a store, through the engine, in batches.
 * The whole file is checked first (syntax, rules, and conflicts with rounds already stored), so
 * bad input changes nothing. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"

static const char import_usage[] =
    "usage: evenodds import --db FILE --pool NAME [--create [--model M] [--param NAME=VALUE]...]\n"
    "                       [--skip-duplicates] [--batch N] ROUNDS.jsonl\n"
    "\n"
    "Rates every round of ROUNDS.jsonl (one canonical round record per line; '-' reads standard\n"
    "input) in pool NAME of the store FILE, in file order, exactly as the service would, and\n"
    "prints {\"imported\":…,\"skipped\":…,\"pool\":…}. The whole file is checked first: a malformed\n"
    "line, or a round id already in the pool with other content, stops the import before\n"
    "anything is written. Rounds already in the pool with the same content are skipped (so an\n"
    "import that was interrupted can be run again). A storage failure during the import keeps\n"
    "the batches committed before it, except in a store this import created, which is removed.\n"
    "\n"
    "  --db FILE          the SQLite store (created with --create if missing)\n"
    "  --pool NAME        the pool (a new one: letters, digits, '_', '-', '.')\n"
    "  --create           create the pool if it does not exist, with the model options:\n"
EO_OPT_MODEL_HELP
    "  --skip-duplicates  skip a round whose id appeared earlier in the file (counted as\n"
    "                     skipped) instead of stopping\n"
    "  --batch N          rounds per transaction (default 1000)\n"
    "\n"
    "Exit status: 0 done, 1 failure (nothing of a bad file is written), 2 bad usage.\n";

typedef struct import_opts {
    const char *db, *pool, *input;
    bool create, skip_duplicates;
    eo_opt_model model; /* --model, --param, --kmax-team, --theta for --create */
    const char *model_name;
    json_t *params;     /* the complete parameters for --create */
    int64_t batch;
} import_opts;

static int parse_args(int argc, char **argv, import_opts *o)
{
    const char *val = NULL;
    o->batch = 1000;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(import_usage, stdout);
            return 1;
        } else if ((r = eo_opt_value("import", argc, argv, &i, "--db", &val)) != 0) {
            if (r < 0)
                return -1;
            o->db = val;
        } else if ((r = eo_opt_value("import", argc, argv, &i, "--pool", &val)) != 0) {
            if (r < 0)
                return -1;
            o->pool = val;
        } else if ((r = eo_opt_value("import", argc, argv, &i, "--batch", &val)) != 0) {
            if (r < 0 || eo_opt_int("import", "--batch", val, 1, 1000000, &o->batch) != 0)
                return -1;
        } else if ((r = eo_opt_model_arg("import", argc, argv, &i, &o->model)) != 0) {
            if (r < 0)
                return -1;
        } else if (strcmp(argv[i], "--create") == 0) {
            o->create = true;
        } else if (strcmp(argv[i], "--skip-duplicates") == 0) {
            o->skip_duplicates = true;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "evenodds import: unknown option '%s' (see --help)\n", argv[i]);
            return -1;
        } else if (o->input != NULL) {
            fprintf(stderr, "evenodds import: one input file only (got '%s' and '%s')\n",
                    o->input, argv[i]);
            return -1;
        } else {
            o->input = argv[i];
        }
    }
    const char *missing = !o->db ? "--db FILE" : !o->pool ? "--pool NAME"
                                               : !o->input ? "ROUNDS.jsonl" : NULL;
    if (missing != NULL) {
        fprintf(stderr, "evenodds import: %s is required (see --help)\n", missing);
        return -1;
    }
    if ((o->model.model != NULL || o->model.nparam > 0) && !o->create) {
        fputs("evenodds import: --model and the model parameters need --create\n", stderr);
        return -1;
    }
    if (o->create) {
        eo_pool_config cfg;
        memset(&cfg, 0, sizeof cfg);
        if (eo_opt_pool_finish("import", &o->model, &cfg) != 0)
            return -1;
        o->model_name = eo_model_name(cfg.model.model);
        o->params = eo_pool_config_to_json(&cfg);
        if (o->params == NULL) {
            fputs("evenodds import: out of memory\n", stderr);
            return -1;
        }
    }
    return 0;
}

/* The input as a seekable stream: the file itself, or standard input copied to a temporary
 * file, since the import reads it twice. */
static FILE *open_input(const char *name)
{
    if (strcmp(name, "-") != 0)
        return fopen(name, "rb");
    FILE *t = tmpfile();
    if (t == NULL)
        return NULL;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        if (fwrite(buf, 1, n, t) != n) {
            fclose(t);
            return NULL;
        }
    if (ferror(stdin) || fflush(t) != 0 || fseek(t, 0, SEEK_SET) != 0) {
        fclose(t);
        return NULL;
    }
    return t;
}

static void progress(bool tty, const char *what, size_t n, bool last)
{
    if (tty && (last || n % 1000 == 0))
        fprintf(stderr, "\revenodds import: %s %zu rounds%s", what, n, last ? "\n" : "");
}

/* One round of pass 1 against what is stored: a round id stored with other content is a
 * conflict; a new round must fit a line (EO_ROUND_TEXT_MAX), as the engine will check. A round
 * stored with the same content is skipped in pass 2, so its length is not asked. Returns 0 or
 * -1 (said). */
static int check_round(const import_opts *o, eo_store *s, int64_t pool_id, const json_t *obj,
                       const eo_round *r, const char *where)
{
    char *canon = NULL, *body = NULL;
    int rc = eo_round_canonical(obj, &canon);
    if (rc == 0)
        rc = pool_id >= 0 ? eo_store_round_find(s, pool_id, r->id, &body, NULL) : EO_ENOTFOUND;
    int ok = 0;
    eo_round_error rerr;
    if (rc == 0 && strcmp(body, canon) != 0) {
        fprintf(stderr,
                "%s\"id\": round \"%s\" is in pool \"%s\" already, with different content\n",
                where, r->id, o->pool);
        ok = -1;
    } else if (rc == EO_ENOTFOUND && eo_round_text_check(obj, strlen(canon), &rerr) != 0) {
        fprintf(stderr, "%s\"%s\": %s\n", where, rerr.field, rerr.message);
        ok = -1;
    } else if (rc != 0 && rc != EO_ENOTFOUND) {
        fprintf(stderr, "%s%s\n", where, rc == EO_ENOMEM ? "out of memory" : eo_store_errmsg(s));
        ok = -1;
    }
    free(canon);
    free(body);
    return ok;
}

/* Pass 1: every line valid, no round id already stored with other content, every new round
 * short enough to store. @p pool_id < 0 when the pool does not exist yet (then @p s may be
 * NULL: nothing is stored to compare with). */
static int validate(FILE *in, const import_opts *o, eo_store *s, int64_t pool_id, bool tty)
{
    eo_jsonl_reader *rd = NULL;
    const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
    if (eo_jsonl_open(in, name, o->skip_duplicates, &rd) != 0) {
        fputs("evenodds import: out of memory\n", stderr);
        return -1;
    }
    char msg[512];
    size_t n = 0;
    int ok = 0;
    for (;;) {
        eo_round r;
        json_t *obj = NULL;
        eo_refit_record rf;
        int rc = eo_jsonl_next_entry(rd, &r, &obj, &rf, msg, sizeof msg);
        if (rc == 0)
            break;
        if (rc < 0) {
            fprintf(stderr, "%sevenodds import: %s\n", tty ? "\n" : "", msg);
            ok = -1;
            break;
        }
        if (rc == EO_JSONL_REFIT) {
            /* A refit replaces states as of its place in the log; an import that skips rounds
             * already stored could not put it back in that place, so it is refused rather than
             * applied somewhere else (docs/STORE.md). */
            eo_refit_free(&rf);
            fprintf(stderr,
                    "%sevenodds import: %s:%zu: a refit record: import takes rounds only "
                    "(`evenodds replay` applies refits)\n",
                    tty ? "\n" : "", name, eo_jsonl_line(rd));
            ok = -1;
            break;
        }
        char where[600];
        snprintf(where, sizeof where, "%sevenodds import: %s:%zu: ", tty ? "\n" : "", name,
                 eo_jsonl_line(rd));
        ok = check_round(o, s, pool_id, obj, &r, where);
        json_decref(obj);
        eo_round_free(&r);
        if (ok)
            break;
        progress(tty, "checked", ++n, false);
    }
    if (ok == 0)
        progress(tty, "checked", n, true);
    eo_jsonl_close(rd);
    return ok;
}

typedef struct counts {
    size_t imported, skipped;
} counts;

/* Pass 2: every round through the engine, @p o->batch per transaction. */
static int apply_all(FILE *in, const import_opts *o, eo_engine *e, bool create, bool tty,
                     counts *c)
{
    eo_jsonl_reader *rd = NULL;
    const char *name = strcmp(o->input, "-") == 0 ? "<stdin>" : o->input;
    if (fseek(in, 0, SEEK_SET) != 0 || eo_jsonl_open(in, name, o->skip_duplicates, &rd) != 0) {
        fprintf(stderr, "evenodds import: %s: cannot read it again\n", name);
        return -1;
    }
    int64_t now = (int64_t)time(NULL);
    eo_engine_error err;
    char msg[512];
    int ok = eo_engine_begin(e) == 0 ? 0 : -1;
    if (ok != 0)
        fprintf(stderr, "evenodds import: %s\n", eo_store_errmsg(eo_engine_store(e)));
    if (ok == 0 && create && eo_engine_pool_create(e, o->pool, o->model_name, o->params, now,
                                                    &err)) {
        fprintf(stderr, "evenodds import: --create: %s%s%s\n", err.field,
                err.field[0] ? ": " : "", err.message);
        ok = -1;
    }
    size_t in_batch = 0;
    while (ok == 0) {
        eo_round r;
        json_t *obj = NULL;
        int rc = eo_jsonl_next(rd, &r, &obj, msg, sizeof msg);
        if (rc == 0)
            break;
        if (rc < 0) { /* the file changed since it was checked */
            fprintf(stderr, "%sevenodds import: %s\n", tty ? "\n" : "", msg);
            ok = -1;
            break;
        }
        eo_round_free(&r);
        char *resp = NULL;
        int replayed = 0;
        rc = eo_engine_round(e, o->pool, obj, now, &resp, &replayed, &err);
        json_decref(obj);
        free(resp);
        if (rc != 0) {
            fprintf(stderr, "%sevenodds import: %s:%zu: %s%s%s%s\n", tty ? "\n" : "", name,
                    eo_jsonl_line(rd), err.field[0] ? "\"" : "", err.field,
                    err.field[0] ? "\": " : "", err.message);
            ok = -1;
            break;
        }
        if (replayed)
            c->skipped++;
        else
            c->imported++;
        progress(tty, "imported", c->imported + c->skipped, false);
        if (++in_batch == (size_t)o->batch) {
            in_batch = 0;
            if (eo_engine_commit(e) != 0 || eo_engine_begin(e) != 0) {
                fprintf(stderr, "%sevenodds import: %s\n", tty ? "\n" : "",
                        eo_store_errmsg(eo_engine_store(e)));
                ok = -1;
            }
        }
    }
    if (ok == 0 && eo_engine_commit(e) != 0) {
        fprintf(stderr, "evenodds import: commit failed: %s\n",
                eo_store_errmsg(eo_engine_store(e)));
        ok = -1;
    } else if (ok != 0) {
        eo_engine_rollback(e);
    }
    if (ok == 0)
        progress(tty, "imported", c->imported + c->skipped, true);
    c->skipped += eo_jsonl_skipped(rd);
    eo_jsonl_close(rd);
    return ok;
}

/* The --create rule for the name of a pool that does not exist yet (eo_pool_name_check()):
 * refused before anything is written. Returns 0 or -1 (said). */
static int new_pool_name_ok(const import_opts *o)
{
    const char *rule = NULL;
    if (eo_pool_name_check(o->pool, strlen(o->pool), &rule) == 0)
        return 0;
    fprintf(stderr, "evenodds import: --pool: %s\n", rule);
    return -1;
}

/* Opens the store and finds the pool (*pool_id -1 when --create is to make it); for a store
 * that existed, pass 1 runs here against its rounds. Returns the store, or NULL (said). */
static eo_store *open_store(const import_opts *o, FILE *in, bool fresh, bool tty,
                            int64_t *pool_id)
{
    eo_store *s = NULL;
    char msg[512];
    if (eo_store_open(o->db, 0, &s, msg, sizeof msg) != 0) {
        fprintf(stderr, "evenodds import: %s\n", msg);
        return NULL;
    }
    eo_pool_row row;
    int rc = eo_store_pool_get(s, o->pool, &row);
    *pool_id = -1;
    if (rc == 0) {
        *pool_id = row.id;
        eo_pool_row_free(&row);
    } else if (rc == EO_ENOTFOUND && !o->create) {
        fprintf(stderr, "evenodds import: pool \"%s\" is not in %s (use --create)\n", o->pool,
                o->db);
    } else if (rc == EO_ENOTFOUND) {
        rc = new_pool_name_ok(o);
    } else {
        fprintf(stderr, "evenodds import: %s\n", eo_store_errmsg(s));
    }
    if (rc != 0 || (!fresh && validate(in, o, s, *pool_id, tty) != 0)) {
        eo_store_close(s);
        return NULL;
    }
    return s;
}

/* Pass 2 through an engine over @p s (taken over). Returns 0 or -1 (said). */
static int import_into(eo_store *s, FILE *in, const import_opts *o, bool create, bool tty,
                       counts *c)
{
    eo_engine *e = NULL;
    eo_engine_error err;
    if (eo_engine_open(s, &e, &err) != 0) { /* the engine closes the store on failure */
        fprintf(stderr, "evenodds import: %s: %s\n", o->db, err.message);
        return -1;
    }
    int ok = apply_all(in, o, e, create, tty, c);
    eo_engine_close(e);
    return ok;
}

static int run(const import_opts *o)
{
    bool tty = eo_opt_tty();
    bool fresh = access(o->db, F_OK) != 0;
    if (fresh && !o->create) {
        fprintf(stderr, "evenodds import: %s: %s (use --create to make a new store)\n", o->db,
                strerror(errno));
        return 1;
    }
    if (fresh && new_pool_name_ok(o) != 0)
        return 1;
    FILE *in = open_input(o->input);
    if (in == NULL) {
        fprintf(stderr, "evenodds import: %s: %s\n", o->input, strerror(errno));
        return 1;
    }
    /* A new store is made only once the whole file has passed (nothing stored can conflict
     * with it), and removed again if the import fails after all. */
    int64_t pool_id = -1;
    eo_store *s = NULL;
    if (!fresh || validate(in, o, NULL, -1, tty) == 0)
        s = open_store(o, in, fresh, tty, &pool_id);
    counts c = {0, 0};
    int ok = s != NULL ? import_into(s, in, o, pool_id < 0, tty, &c) : -1;
    fclose(in);
    if (ok != 0 && fresh)
        eo_store_remove(o->db); /* a failed `import --create` leaves nothing */
    if (ok != 0)
        return 1;
    json_t *sum = json_pack("{s:I,s:I,s:s}", "imported", (json_int_t)c.imported, "skipped",
                            (json_int_t)c.skipped, "pool", o->pool);
    char *text = sum ? json_dumps(sum, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
    json_decref(sum);
    if (text == NULL) {
        fputs("evenodds import: out of memory\n", stderr);
        return 1;
    }
    printf("%s\n", text);
    free(text);
    return fflush(stdout) == 0 ? 0 : 1;
}

int eo_cmd_import(int argc, char **argv)
{
    import_opts o;
    memset(&o, 0, sizeof o);
    int rc = parse_args(argc, argv, &o);
    int status = rc < 0 ? 2 : rc > 0 ? 0 : run(&o);
    json_decref(o.params);
    return status;
}
