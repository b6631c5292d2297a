/* evenodds tune: searches a model's parameters on a training prefix of a round log and reports
 * the best found with its held-out figures (docs/EVAL.md, "Tuning").
 *
 * Every candidate folds the whole log in memory, in file order, as replay does: the rounds in
 * [--eval-from, --train) score it (the search's objective), those after --train are held out
 * and only reported, so the held-out figures are one-step-ahead predictions by ratings that
 * went on learning, exactly as a pool would. The search is a coordinate descent: each tuned
 * parameter in turn is tried a step up and a step down (a factor for positive scales, a share
 * of its range otherwise), the best of the three is kept, and a step that finds nothing better
 * shrinks; it stops when every step is small or the --budget of folds is spent. Deterministic:
 * the same log and options give the same answer. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/fold.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

static const char tune_usage[] =
    "usage: evenodds tune [--model M] [--param NAME=VALUE]... [--tune NAME]...\n"
    "                     [--train F] [--eval-from F] [--metric logloss|brier]\n"
    "                     [--budget N] [--format table|json] [--no-weights]\n"
    "                     [--skip-duplicates] ROUNDS.jsonl\n"
    "\n"
    "Searches the model's parameters for the best one-step-ahead predictions on a training\n"
    "prefix of the log, then reports the held-out figures of the best and of the starting\n"
    "point (the defaults with the --param values), and prints the best as the body of\n"
    "POST /v1/pools. Each candidate folds the whole log in memory in file order; rounds in\n"
    "[--eval-from, --train) are its score, later rounds are held out. Coordinate descent:\n"
    "each parameter a step up and down, the best kept, steps shrinking when nothing improves.\n"
    "\n"
EO_OPT_MODEL_HELP
EO_OPT_NO_WEIGHTS_HELP
    "  --tune NAME         a parameter to search (repeatable). Default per model: synelo\n"
    "                      theta, k_max, k_min, sigma; trueskill beta, tau, draw_probability,\n"
    "                      mu; wenglin beta, tau, mu; glicko2 tau, rd_max; elo k, k_new; hive\n"
    "                      alpha, alpha_commander\n"
    "  --train F           fraction of the rounds in the training prefix (default 0.7)\n"
    "  --eval-from F       fraction before which rounds are not scored: the ratings'\n"
    "                      burn-in (default 0.1; below --train)\n"
    "  --metric M          what the search minimises: logloss (default) or brier\n"
    "  --budget N          most folds of the log, the starting point included (default 60)\n"
    "  --format table|json aligned text, or one JSON object (default: table on a terminal)\n"
    "  --skip-duplicates   skip a round whose id appeared earlier in the file\n"
    "\n"
    "Progress goes to stderr on a terminal. Exit status: 0 done, 1 unreadable or invalid\n"
    "input (file, line and field named), 2 bad usage.\n";

#define TUNE_MAX 8

typedef struct tune_opts {
    eo_cli_head h;
    const char *tune[TUNE_MAX];
    int ntune;
    double train, eval_from;
    bool brier;
    int64_t budget;
} tune_opts;

static int tune_arg(void *ctx, int argc, char **argv, int *i)
{
    tune_opts *o = ctx;
    const char *val = NULL;
    int r;
    if ((r = eo_opt_value("tune", argc, argv, i, "--tune", &val)) > 0) {
        if (o->ntune == TUNE_MAX) {
            fprintf(stderr, "evenodds tune: --tune: at most %d parameters\n", TUNE_MAX);
            return -1;
        }
        o->tune[o->ntune++] = val;
    }
    if (r == 0)
        r = eo_opt_real_arg("tune", argc, argv, i, "--train", 0.01, 0.99, &o->train);
    if (r == 0)
        r = eo_opt_real_arg("tune", argc, argv, i, "--eval-from", 0.0, 0.98, &o->eval_from);
    if (r == 0)
        r = eo_opt_int_arg("tune", argc, argv, i, "--budget", 1, 100000, &o->budget);
    if (r == 0 && (r = eo_opt_value("tune", argc, argv, i, "--metric", &val)) > 0) {
        if (strcmp(val, "brier") != 0 && strcmp(val, "logloss") != 0) {
            fprintf(stderr, "evenodds tune: --metric: expected logloss or brier, got '%s'\n", val);
            return -1;
        }
        o->brier = val[0] == 'b';
    }
    return r;
}

static int tune_check(void *ctx)
{
    const tune_opts *o = ctx;
    if (o->eval_from >= o->train) {
        fprintf(stderr, "evenodds tune: --eval-from (%g) must be below --train (%g)\n",
                o->eval_from, o->train);
        return -1;
    }
    return 0;
}

/* ---- the parameters searched ---- */

typedef struct knob {
    int index;            /* in the model's parameter table, or one of the BIAS_* below */
    const eo_param_spec *spec;
    double step;          /* a factor > 1 (log steps) or an absolute step */
    bool log;             /* positive scale: multiplicative steps */
} knob;

/* The pool's bias parameters (eo_bias.h), searched like a model's when the bias is on. */
enum { BIAS_PRIOR = -1, BIAS_STRENGTH = -2 };
static const eo_param_spec bias_specs[2] = {
    {"bias_prior", "the bias prior's weight in average plays", EO_BIAS_PRIOR_DEFAULT, 0, 1e6,
     false, NULL},
    {"bias_strength", "share of the bias estimate applied", 1, 0, 1, false, NULL},
};

static double knob_get(const knob *k, const eo_pool_config *c)
{
    return k->index == BIAS_PRIOR      ? c->bias.prior
           : k->index == BIAS_STRENGTH ? c->bias.strength
                                       : c->model.v[k->index];
}

/* Sets a knob in @p c and checks the whole; 0, or -1 when the model refuses the value with
 * the others (e.g. k_min above k_max). */
static int knob_set(const knob *k, eo_pool_config *c, double x)
{
    eo_round_error err;
    if (k->index == BIAS_PRIOR)
        c->bias.prior = x;
    else if (k->index == BIAS_STRENGTH)
        c->bias.strength = x;
    else if (eo_model_config_set_number(&c->model, k->spec->name, x, &err) != 0)
        return -1;
    return eo_model_config_check(&c->model, &err) == 0 ? 0 : -1;
}

static const char *const default_knobs[][5] = {
    [EO_MODEL_SYNELO] = {"theta", "k_max", "k_min", "sigma", NULL},
    [EO_MODEL_TRUESKILL] = {"beta", "tau", "draw_probability", "mu", NULL},
    [EO_MODEL_GLICKO2] = {"tau", "rd_max", NULL},
    [EO_MODEL_ELO] = {"k", "k_new", NULL},
    [EO_MODEL_WENGLIN] = {"beta", "tau", "mu", NULL},
    [EO_MODEL_HIVE] = {"alpha", "alpha_commander", NULL},
};

/* The knobs to search: --tune's names, else the model's default set. -1 after a message. */
static int make_knobs(const tune_opts *o, knob *k, int *nk)
{
    eo_model m = o->h.cfg.model.model;
    size_t n = 0;
    const eo_param_spec *spec = eo_model_params(m, &n);
    const char *names[TUNE_MAX];
    int count = 0;
    for (int i = 0; i < o->ntune; i++)
        names[count++] = o->tune[i];
    for (int i = 0; o->ntune == 0 && i < 4 && default_knobs[m][i] != NULL; i++)
        names[count++] = default_knobs[m][i];
    if (o->ntune == 0 && o->h.cfg.bias.by != EO_BIAS_OFF) {
        names[count++] = "bias_strength";
        names[count++] = "bias_prior";
    }
    *nk = 0;
    for (int i = 0; i < count; i++) {
        int idx = eo_model_param_index(m, names[i]);
        const eo_param_spec *s = idx >= 0 ? &spec[idx] : NULL;
        for (int b = 0; b < 2 && s == NULL; b++) {
            if (strcmp(names[i], bias_specs[b].name) == 0) {
                idx = b == 0 ? BIAS_PRIOR : BIAS_STRENGTH;
                s = &bias_specs[b];
            }
        }
        if (s != NULL && idx < 0 && o->h.cfg.bias.by == EO_BIAS_OFF) {
            fprintf(stderr, "evenodds tune: --tune %s: the bias is off (--param bias=map)\n",
                    names[i]);
            return -1;
        }
        if (s == NULL) {
            fprintf(stderr, "evenodds tune: --tune %s: not a parameter of model \"%s\"\n",
                    names[i], eo_model_name(m));
            return -1;
        }
        if (s->choices != NULL || s->min == s->max) {
            fprintf(stderr, "evenodds tune: --tune %s: a choice or fixed value cannot be "
                            "searched; set it with --param\n", names[i]);
            return -1;
        }
        for (int j = 0; j < *nk; j++)
            if (k[j].index == idx) {
                fprintf(stderr, "evenodds tune: --tune %s: given twice\n", names[i]);
                return -1;
            }
        knob *kb = &k[(*nk)++];
        kb->index = idx;
        kb->spec = s;
        double v = knob_get(kb, &o->h.cfg);
        kb->log = s->min >= 0 && v > 0;
        kb->step = kb->log ? 2.0 : fmax(0.25 * (s->max - s->min > 1e6 ? fabs(v) + 1 : s->max - s->min),
                                          s->integer ? 1.0 : 1e-9);
    }
    return 0;
}

/* A knob's value moved by its step (+1 up, -1 down), clamped and rounded as the spec asks. */
static double moved(const knob *k, double v, int dir)
{
    double x = k->log ? (dir > 0 ? v * k->step : v / k->step) : v + dir * k->step;
    x = fmin(fmax(x, k->spec->min), k->spec->max);
    if (k->spec->integer)
        x = dir > 0 ? ceil(x) : floor(x);
    return fmin(fmax(x, k->spec->min), k->spec->max);
}

/* ---- one fold ---- */

typedef struct score {
    eo_metrics_result train, held;
    double objective;
} score;

/* Folds every round through a fresh pool of @p cfg. 0, or -1 (message printed: a config the
 * model refuses, or out of memory). */
static int fold(const tune_opts *o, const eo_cli_rounds *lg, const eo_pool_config *cfg, score *out)
{
    eo_pool *pool = NULL;
    if (eo_pool_create(cfg, &pool) != 0)
        return -1;
    size_t from = (size_t)floor(o->eval_from * (double)lg->n);
    size_t train = (size_t)floor(o->train * (double)lg->n);
    eo_metrics mt, mh;
    eo_metrics_init(&mt);
    eo_metrics_init(&mh);
    for (size_t i = 0; i < lg->n; i++) {
        eo_round_result res;
        int rc = eo_pool_apply(pool, &lg->r[i], &res, NULL);
        if (rc != 0) {
            fprintf(stderr, "evenodds tune: round %zu (%s): %s\n", i + 1, lg->r[i].id,
                    eo_strerror(rc));
            eo_pool_destroy(pool);
            return -1;
        }
        if (i < from || lg->r[i].winner == EO_DRAW)
            continue;
        eo_metrics_add(i < train ? &mt : &mh, res.p_a, lg->r[i].winner == EO_WIN_A);
    }
    eo_pool_destroy(pool);
    eo_metrics_get(&mt, &out->train);
    eo_metrics_get(&mh, &out->held);
    out->objective = o->brier ? out->train.brier : out->train.logloss;
    return 0;
}

/* ---- output ---- */

static json_t *knobs_json(const knob *k, int nk, const eo_pool_config *cfg)
{
    json_t *o = json_object();
    for (int i = 0; i < nk; i++)
        json_object_set_new(o, k[i].spec->name, json_real(knob_get(&k[i], cfg)));
    return o;
}

static void print_row(const char *label, const eo_metrics_result *m)
{
    printf("  %-10s %8llu %9.5f %8.5f %9.4f\n", label, (unsigned long long)m->count, m->logloss,
           m->brier, m->accuracy);
}

/* ---- the run ---- */

static int keep_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    (void)pos;
    (void)res;
    return eo_cli_rounds_push(ctx, r);
}

/* Reads the whole log into @p lg. 0, or -1 after a message. */
static int load(const tune_opts *o, eo_cli_rounds *lg)
{
    eo_cli_fold f = {.head = &o->h, .round = keep_round, .ctx = lg};
    if (eo_cli_fold_open(&f) != 0)
        return -1;
    int rc = eo_cli_fold_run(&f);
    eo_cli_fold_close(&f);
    if (rc != 0)
        return -1;
    if (lg->n < 10) {
        fprintf(stderr, "evenodds tune: %s: %zu rounds; at least 10 are needed\n", o->h.input,
                lg->n);
        return -1;
    }
    return 0;
}

/* What the search found. */
typedef struct found {
    eo_pool_config best;
    score start, cur; /* the starting point's figures and the best's */
    int64_t folds;
} found;

/* The coordinate descent: sweeps over the knobs until every step is small or the budget is
 * spent. 0, or -1 after a message (a fold that failed). */
static int search(const tune_opts *o, const eo_cli_rounds *lg, knob *k, int nk, found *fd)
{
    bool tty = eo_opt_tty();
    fd->best = o->h.cfg;
    if (fold(o, lg, &fd->best, &fd->start) != 0)
        return -1;
    fd->cur = fd->start;
    fd->folds = 1;
    for (bool moving = true; moving && fd->folds < o->budget;) {
        moving = false;
        for (int i = 0; i < nk && fd->folds < o->budget; i++) {
            knob *kb = &k[i];
            double v = knob_get(kb, &fd->best);
            bool small = kb->log ? kb->step < 1.02 : kb->step < (kb->spec->integer ? 1.0 : 1e-6 * (fabs(v) + 1));
            if (small)
                continue;
            moving = true;
            bool improved = false;
            for (int dir = 1; dir >= -1 && fd->folds < o->budget; dir -= 2) {
                double x = moved(kb, v, dir);
                if (x == v)
                    continue;
                eo_pool_config c = fd->best;
                score s;
                if (knob_set(kb, &c, x) != 0)
                    continue; /* outside what the model allows with the other values */
                fd->folds++;
                if (fold(o, lg, &c, &s) != 0)
                    return -1;
                if (tty)
                    fprintf(stderr, "\revenodds tune: fold %lld/%lld, %s = %g: %.5f (best %.5f)   ",
                            (long long)fd->folds, (long long)o->budget, kb->spec->name, x,
                            s.objective, fd->cur.objective);
                if (s.objective < fd->cur.objective) {
                    fd->best = c;
                    fd->cur = s;
                    improved = true;
                    break; /* keep the step: the next sweep goes on in this direction */
                }
            }
            if (!improved)
                kb->step = kb->log ? sqrt(kb->step) : (kb->spec->integer ? floor(kb->step / 2) : kb->step / 2);
        }
    }
    if (tty)
        fputc('\n', stderr);
    return 0;
}

static void write_table(const tune_opts *o, size_t n, const knob *k, int nk, const found *fd,
                        const json_t *pool)
{
    printf("model %s, %zu rounds: %s; %lld folds, minimising %s over rounds %zu-%zu\n\n",
           eo_model_name(fd->best.model.model), n, o->h.input, (long long)fd->folds,
           o->brier ? "Brier" : "log loss", (size_t)floor(o->eval_from * (double)n) + 1,
           (size_t)floor(o->train * (double)n));
    printf("  %-10s %8s %9s %8s %9s\n", "", "rounds", "log loss", "Brier", "accuracy");
    printf("start:");
    for (int i = 0; i < nk; i++)
        printf(" %s=%g", k[i].spec->name, knob_get(&k[i], &o->h.cfg));
    printf("\n");
    print_row("train", &fd->start.train);
    print_row("held out", &fd->start.held);
    printf("best:");
    for (int i = 0; i < nk; i++)
        printf(" %s=%g", k[i].spec->name, knob_get(&k[i], &fd->best));
    printf("\n");
    print_row("train", &fd->cur.train);
    print_row("held out", &fd->cur.held);
    char *body = json_dumps(pool, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    printf("\npool configuration (POST /v1/pools):\n%s\n", body ? body : "?");
    free(body);
}

/* The answer in the chosen format, with the best as the body of POST /v1/pools. 0, or -1 after
 * a message. */
static int write_answer(const tune_opts *o, size_t n, const knob *k, int nk, const found *fd)
{
    json_t *pool = json_pack("{s:s,s:s,s:o}", "name", "tuned", "model",
                             eo_model_name(fd->best.model.model), "params",
                             eo_pool_config_to_json(&fd->best));
    if (!o->h.json) {
        write_table(o, n, k, nk, fd, pool);
        json_decref(pool);
        return 0;
    }
    json_t *out = json_pack(
        "{s:s,s:I,s:I,s:f,s:f,s:s,s:{s:o,s:o,s:o},s:{s:o,s:o,s:o},s:o}", "model",
        eo_model_name(fd->best.model.model), "rounds", (json_int_t)n, "folds",
        (json_int_t)fd->folds, "eval_from", o->eval_from, "train", o->train, "metric",
        o->brier ? "brier" : "logloss", "start", "params", knobs_json(k, nk, &o->h.cfg), "train",
        eo_cli_metrics_json(&fd->start.train), "held_out", eo_cli_metrics_json(&fd->start.held),
        "best", "params", knobs_json(k, nk, &fd->best), "train",
        eo_cli_metrics_json(&fd->cur.train), "held_out", eo_cli_metrics_json(&fd->cur.held),
        "pool", json_incref(pool));
    size_t flags = JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10);
    int rc = 0;
    if (out == NULL || json_dumpf(out, stdout, flags) != 0) {
        fprintf(stderr, "evenodds tune: cannot write the answer\n");
        rc = -1;
    } else {
        putchar('\n');
    }
    json_decref(out);
    json_decref(pool);
    return rc;
}

int eo_cmd_tune(int argc, char **argv)
{
    tune_opts o = {.h = {.cmd = "tune", .usage = tune_usage, .format = true},
                   .train = 0.7, .eval_from = 0.1, .budget = 60};
    int pr = eo_cli_head_parse(&o.h, argc, argv, tune_arg, tune_check, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    knob k[TUNE_MAX];
    int nk = 0;
    if (make_knobs(&o, k, &nk) != 0)
        return 2;
    eo_cli_rounds lg = {0};
    found fd;
    int status = 1;
    if (load(&o, &lg) == 0 && search(&o, &lg, k, nk, &fd) == 0 &&
        write_answer(&o, lg.n, k, nk, &fd) == 0)
        status = 0;
    eo_cli_rounds_free(&lg);
    return status;
}
