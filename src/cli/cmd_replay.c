/* evenodds replay: folds a JSONL round log through a model in memory and reports how well the
 * ratings predicted each round before it was rated. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

static const char replay_usage[] =
    "usage: evenodds replay [--model M] [--param NAME=VALUE]... [--eval-from F]\n"
    "                       [--ratings-out FILE] [--no-weights] [--skip-duplicates]\n"
    "                       ROUNDS.jsonl\n"
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
    "  --skip-duplicates   skip a round whose id appeared earlier in the file (default: error)\n"
    "\n"
    "A refit line of `evenodds export` ({\"refit\":…}) sets the players' states it lists, as\n"
    "the service did; it is not a round and is not scored.\n";

typedef struct replay_opts {
    eo_opt_model model;
    eo_pool_config cfg;
    double eval_from;
    const char *ratings_out;
    const char *input;
    bool skip_duplicates;
    bool no_weights; /* --no-weights */
} replay_opts;

static int parse_args(int argc, char **argv, replay_opts *o)
{
    const char *val = NULL;
    eo_pool_config_default(&o->cfg);
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(replay_usage, stdout);
            return 1;
        } else if (strcmp(argv[i], "--skip-duplicates") == 0) {
            o->skip_duplicates = true;
        } else if (strcmp(argv[i], "--no-weights") == 0) {
            o->no_weights = true;
        } else if ((r = eo_opt_model_arg("replay", argc, argv, &i, &o->model)) != 0) {
            if (r < 0)
                return -1;
        } else if ((r = eo_opt_value("replay", argc, argv, &i, "--eval-from", &val)) != 0) {
            if (r < 0 || eo_opt_real("replay", "--eval-from", val, 0.0, 0.999999, &o->eval_from) != 0)
                return -1;
        } else if ((r = eo_opt_value("replay", argc, argv, &i, "--ratings-out", &val)) != 0) {
            if (r < 0)
                return -1;
            o->ratings_out = val;
        } else if (eo_opt_input("replay", argv[i], replay_usage, &o->input) != 0) {
            return -1;
        }
    }
    if (!o->input) {
        fprintf(stderr, "evenodds replay: missing ROUNDS.jsonl\n%s", replay_usage);
        return -1;
    }
    return eo_opt_pool_finish("replay", &o->model, &o->cfg);
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

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

int eo_cmd_replay(int argc, char **argv)
{
    replay_opts o;
    memset(&o, 0, sizeof o);
    int pr = parse_args(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;

    FILE *in = fopen(o.input, "r");
    if (!in) {
        fprintf(stderr, "evenodds replay: cannot open '%s'\n", o.input);
        return 1;
    }
    int status = 1;
    size_t total = 0;
    eo_pool *pool = NULL;
    eo_jsonl_reader *rd = NULL;
    eo_round round;
    memset(&round, 0, sizeof round);
    char msg[512];

    if (eo_opt_count_lines(in, &total) != 0) {
        fprintf(stderr, "evenodds replay: cannot read '%s'\n", o.input);
        goto done;
    }
    int rc = eo_pool_create(&o.cfg, &pool);
    if (rc == 0)
        rc = eo_jsonl_open(in, o.input, o.skip_duplicates, &rd);
    if (rc != 0) {
        fprintf(stderr, "evenodds replay: %s\n", eo_strerror(rc));
        goto done;
    }

    size_t eval_start = (size_t)floor(o.eval_from * (double)total);
    size_t rounds = 0;
    int64_t last_end = 0;
    eo_metrics m;
    eo_metrics_init(&m);
    bool tty = eo_opt_tty();
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        eo_refit_record rf;
        rc = eo_jsonl_next_entry(rd, &round, NULL, &rf, msg, sizeof msg);
        if (rc == 0)
            break;
        if (rc < 0) {
            fprintf(stderr, "evenodds replay: %s\n", msg);
            goto done;
        }
        if (rc == EO_JSONL_REFIT) {
            /* An exported refit: the states the service set, applied the way it did. */
            size_t bad = 0;
            rc = eo_refit_apply(pool, rf.v, rf.n, &bad);
            if (rc != 0)
                fprintf(stderr, "evenodds replay: %s:%zu: \"refit.players[%zu]\": %s\n",
                        o.input, eo_jsonl_line(rd), bad, eo_strerror(rc));
            eo_refit_free(&rf);
            if (rc != 0)
                goto done;
            continue;
        }
        /* Position among non-blank lines, so skipped duplicates keep later rounds in place. */
        size_t pos = rounds + eo_jsonl_skipped(rd);
        if (o.no_weights)
            eo_round_drop_times(&round);
        eo_round_result res;
        int64_t end = round.ended_at != 0 ? round.ended_at : round.started_at;
        last_end = end > last_end ? end : last_end;
        rc = eo_pool_apply(pool, &round, &res, NULL);
        if (rc != 0) {
            fprintf(stderr, "evenodds replay: %s:%zu: %s\n", o.input, eo_jsonl_line(rd),
                    eo_strerror(rc));
            goto done;
        }
        if (pos >= eval_start && round.winner != EO_DRAW)
            eo_metrics_add(&m, res.p_a, round.winner == EO_WIN_A);
        eo_round_free(&round);
        rounds++;
        if (tty && (rounds & 0xFFFF) == 0)
            fprintf(stderr, "\rreplay: %zu / %zu rounds", rounds, total);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (tty && rounds >= 0x10000)
        fputc('\n', stderr);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;

    if (o.ratings_out && write_ratings(pool, o.ratings_out, last_end) != 0)
        goto done;

    eo_metrics_result mr;
    eo_metrics_get(&m, &mr);
    json_t *out = json_object();
    json_object_set_new(out, "rounds", json_integer((json_int_t)rounds));
    json_object_set_new(out, "players", json_integer((json_int_t)eo_pool_player_count(pool)));
    json_object_set_new(out, "logloss", real_or_null(mr.logloss));
    json_object_set_new(out, "brier", real_or_null(mr.brier));
    json_object_set_new(out, "accuracy", real_or_null(mr.accuracy));
    json_object_set_new(out, "rounds_per_s", real_or_null(secs > 0 ? (double)rounds / secs : NAN));
    if (json_dumpf(out, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) == 0 &&
        putchar('\n') != EOF && fflush(stdout) == 0)
        status = 0;
    json_decref(out);
done:
    eo_round_free(&round);
    eo_jsonl_close(rd);
    eo_pool_destroy(pool);
    fclose(in);
    return status;
}
