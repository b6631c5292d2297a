/* evenodds replay: folds a JSONL round log through a model in memory and reports how well the
 * ratings predicted each round before it was rated. */
#include <math.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/fold.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

static const char replay_usage[] =
    "usage: evenodds replay [--model M] [--params FILE] [--param NAME=VALUE]...\n"
    "                       [--eval-from F] [--ratings-out FILE] [--no-weights]\n"
    "                       [--skip-invalid] [--skip-duplicates] ROUNDS.jsonl\n"
    "\n"
    "Folds the round log through the model in memory, in file order, and prints one JSON line:\n"
    "{\"rounds\":…,\"players\":…,\"logloss\":…,\"brier\":…,\"accuracy\":…,\"rounds_per_s\":…}.\n"
    "Metrics are one step ahead (each round predicted before it is rated), over the rounds from\n"
    "fraction F of the file on; draws are left out, and a prediction of exactly 0.5 counts half.\n"
    "\n"
EO_OPT_MODEL_HELP
EO_OPT_NO_WEIGHTS_HELP
    "  --eval-from F       fraction of the file, in [0, 1), after which rounds are scored (default 0)\n"
    "  --ratings-out FILE  write one JSON object per player, sorted by id: {\"id\":…, the\n"
    "                      model's state (\"rating\"; \"mu\",\"sigma\"; or \"rating\",\"rd\",\n"
    "                      \"volatility\"), \"display\":…,\"rounds\":…,\"visible\":…}, as of the\n"
    "                      last round's end\n"
EO_OPT_SKIP_HELP
    "\n"
    "A refit line of `evenodds export` ({\"refit\":…}) sets the players' states it lists, as\n"
    "the service did; it is not a round and is not scored.\n";

typedef struct replay_opts {
    eo_cli_head h;
    double eval_from;
    const char *ratings_out;
} replay_opts;

static int replay_arg(void *ctx, int argc, char **argv, int *i)
{
    replay_opts *o = ctx;
    int r = eo_opt_real_arg("replay", argc, argv, i, "--eval-from", 0.0, 0.999999, &o->eval_from);
    if (r != 0)
        return r;
    return eo_opt_value("replay", argc, argv, i, "--ratings-out", &o->ratings_out);
}

typedef struct write_ctx {
    FILE *f;
    const eo_pool *pool;
} write_ctx;

static int write_player(void *ctx, const char *id, const eo_rating_view *v)
{
    write_ctx *w = ctx;
    const eo_pool_config *cfg = eo_pool_get_config(w->pool);
    const char *division = v->visible ? eo_pool_division(cfg, v->display) : NULL;
    json_t *o = eo_rating_view_to_json(eo_pool_model(w->pool), id, v, division, false);
    int rc = (!o || json_dumpf(o, w->f, JSON_COMPACT | JSON_PRESERVE_ORDER) != 0 ||
              fputc('\n', w->f) == EOF)
                 ? -1
                 : 0;
    json_decref(o);
    return rc;
}

static int write_ratings(const eo_pool *pool, const char *path, int64_t now)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "evenodds replay: --ratings-out: cannot create '%s'\n", path);
        return -1;
    }
    write_ctx w = {f, pool};
    int rc = eo_pool_each_player(pool, now, write_player, &w);
    if (fclose(f) != 0 || rc != 0) {
        fprintf(stderr, "evenodds replay: --ratings-out: cannot write '%s'\n", path);
        return -1;
    }
    return 0;
}

/* What replay takes from each round: the metrics from --eval-from on, the last round's end. */
typedef struct replay_run {
    size_t eval_start; /* first scored position among the non-blank lines */
    int64_t last_end;
    eo_metrics m;
} replay_run;

static int replay_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    replay_run *run = ctx;
    int64_t end = r->ended_at != 0 ? r->ended_at : r->started_at;
    run->last_end = end > run->last_end ? end : run->last_end;
    if (pos >= run->eval_start && r->winner != EO_DRAW)
        eo_metrics_add(&run->m, res->p_a, r->winner == EO_WIN_A);
    return 0;
}

static int write_report(const eo_cli_fold *f, const replay_run *run, double secs)
{
    eo_metrics_result mr;
    eo_metrics_get(&run->m, &mr);
    size_t rounds = f->rounds;
    json_t *out = json_object();
    json_object_set_new(out, "rounds", json_integer((json_int_t)rounds));
    json_object_set_new(out, "players", json_integer((json_int_t)eo_pool_player_count(f->pool)));
    json_object_set_new(out, "logloss", eo_cli_json_real(mr.logloss));
    json_object_set_new(out, "brier", eo_cli_json_real(mr.brier));
    json_object_set_new(out, "accuracy", eo_cli_json_real(mr.accuracy));
    json_object_set_new(out, "rounds_per_s",
                        eo_cli_json_real(secs > 0 ? (double)rounds / secs : NAN));
    eo_cli_skipped_json(f, out);
    size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10);
    int rc = json_dumpf(out, stdout, flags) == 0 && putchar('\n') != EOF && fflush(stdout) == 0
                 ? 0
                 : -1;
    json_decref(out);
    return rc;
}

int eo_cmd_replay(int argc, char **argv)
{
    replay_opts o = {.h = {.cmd = "replay", .usage = replay_usage}};
    int pr = eo_cli_head_parse(&o.h, argc, argv, replay_arg, NULL, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    replay_run run = {0};
    eo_metrics_init(&run.m);
    eo_cli_fold f = {.head = &o.h, .rate = true, .refits = true, .progress = true,
                     .round = replay_round, .ctx = &run};
    if (eo_cli_fold_open(&f) != 0)
        return 1;
    int status = 1;
    if (eo_cli_fold_count(&f) != 0)
        goto done;
    run.eval_start = (size_t)floor(o.eval_from * (double)f.total);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (eo_cli_fold_run(&f) != 0)
        goto done;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    if (o.ratings_out && write_ratings(f.pool, o.ratings_out, run.last_end) != 0)
        goto done;
    status = write_report(&f, &run, secs) == 0 ? 0 : 1;
done:
    eo_cli_fold_close(&f);
    return status;
}
