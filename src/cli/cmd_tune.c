/* evenodds tune: searches a model's parameters on the training rounds of a round log, reports
 * the start's and the best's held-out figures, and prints the chosen configuration in the form
 * every modelling command reads back (--params FILE) and POST /v1/pools takes (docs/EVAL.md,
 * "Tuning"). The search is the core's (eo_tune.h); this command reads the log, cuts it where
 * eval would score, shows progress and writes the answers. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/fold.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_tune.h"

static const char tune_usage[] =
    "usage: evenodds tune [--model M] [--params FILE] [--param NAME=VALUE]... [--tune NAME]...\n"
    "                     [--eval-from F] [--burn-in F] [--metric logloss|brier]\n"
    "                     [--budget N] [--gate Z] [--name NAME] [--report FILE]\n"
    "                     [--format table|json] [--no-weights] [--skip-invalid]\n"
    "                     [--skip-duplicates] ROUNDS.jsonl\n"
    "\n"
    "Searches the model's parameters for the best one-step-ahead predictions of the training\n"
    "rounds (from --burn-in to --eval-from), reports the start's (the defaults with the\n"
    "--params and --param values) and the best's figures on the held-out rounds (from\n"
    "--eval-from on: exactly the rounds `evenodds eval --eval-from F` scores), and keeps the\n"
    "start unless the best's gain in training beats --gate times the standard error of the\n"
    "start's held-out figure. Prints the chosen configuration as {\"model\",\"params\"}: the\n"
    "file --params reads, and with --name a POST /v1/pools body. Each candidate folds the\n"
    "whole log in memory in file order (coordinate descent: each parameter a step up and down,\n"
    "the best kept, steps shrinking when nothing improves).\n"
    "\n" EO_OPT_MODEL_HELP EO_OPT_NO_WEIGHTS_HELP EO_OPT_SKIP_HELP
    "  --tune NAME         a parameter to search (repeatable, at most 8). Default: per model\n"
    "                      and options (docs/EVAL.md, \"Tuning\")\n"
    "  --eval-from F       fraction of the file, in (0, 1), from which rounds are held out:\n"
    "                      scored, never used to choose (default 0.5; eval's meaning)\n"
    "  --burn-in F         fraction before which rounds only rate, in [0, --eval-from)\n"
    "                      (default 0.1)\n"
    "  --metric M          what the search minimises: logloss (default) or brier\n"
    "  --budget N          most folds of the log, the starting point included (default 60)\n"
    "  --gate Z            take the best only when its training gain exceeds Z standard\n"
    "                      errors of the start's held-out figure (default 1; 0: any gain)\n"
    "  --name NAME         a pool name for the printed configuration (POST /v1/pools needs one)\n"
    "  --report FILE       also write every figure as one JSON object\n"
    "  --format table|json the report as aligned text ending with the configuration, or the\n"
    "                      configuration alone (default: table on a terminal)\n"
    "\n"
    "Progress goes to stderr on a terminal. Exit status: 0 done, 1 unreadable or invalid\n"
    "input (file, line and field named), 2 bad usage.\n";

typedef struct tune_opts {
    eo_cli_head h;
    eo_tune_config tc;
    double eval_from, burn_in;
    const char *name, *report;
} tune_opts;

static int tune_arg(void *ctx, int argc, char **argv, int *i)
{
    tune_opts *o = ctx;
    const char *val = NULL;
    int64_t budget = 0;
    int r;
    if (strcmp(argv[*i], "--train") == 0 || strncmp(argv[*i], "--train=", 8) == 0) {
        fprintf(stderr, "evenodds tune: --train: gone; --eval-from F says where the held-out "
                        "rounds start, as in replay and eval, and training ends there\n");
        return -1;
    }
    if ((r = eo_opt_value("tune", argc, argv, i, "--tune", &val)) > 0) {
        if (o->tc.nknobs == EO_TUNE_KNOBS_MAX) {
            fprintf(stderr, "evenodds tune: --tune: at most %d parameters\n", EO_TUNE_KNOBS_MAX);
            return -1;
        }
        o->tc.knobs[o->tc.nknobs++] = val;
    }
    if (r == 0)
        r = eo_opt_real_arg("tune", argc, argv, i, "--eval-from", 0.01, 0.99, &o->eval_from);
    if (r == 0)
        r = eo_opt_real_arg("tune", argc, argv, i, "--burn-in", 0.0, 0.98, &o->burn_in);
    if (r == 0)
        r = eo_opt_real_arg("tune", argc, argv, i, "--gate", 0.0, 100.0, &o->tc.gate);
    if (r == 0 &&
        (r = eo_opt_int_arg("tune", argc, argv, i, "--budget", 1, EO_TUNE_BUDGET_MAX, &budget)) > 0)
        o->tc.budget = (uint32_t)budget;
    if (r == 0)
        r = eo_opt_value("tune", argc, argv, i, "--name", &o->name);
    if (r == 0)
        r = eo_opt_value("tune", argc, argv, i, "--report", &o->report);
    if (r == 0 && (r = eo_opt_value("tune", argc, argv, i, "--metric", &val)) > 0) {
        if (strcmp(val, "brier") != 0 && strcmp(val, "logloss") != 0) {
            fprintf(stderr, "evenodds tune: --metric: expected logloss or brier, got '%s'\n", val);
            return -1;
        }
        o->tc.brier = val[0] == 'b';
    }
    return r;
}

static int tune_check(void *ctx)
{
    const tune_opts *o = ctx;
    const char *rule = NULL;
    if (o->burn_in >= o->eval_from) {
        fprintf(stderr, "evenodds tune: --burn-in (%g) must be below --eval-from (%g)\n",
                o->burn_in, o->eval_from);
        return -1;
    }
    if (o->name != NULL && eo_pool_name_check(o->name, strlen(o->name), &rule) != 0) {
        fprintf(stderr, "evenodds tune: --name: %s\n", rule);
        return -1;
    }
    return 0;
}

/* ---- reading the log ---- */

/* The log in memory and where its parts start: the first kept round at or after each cut. */
typedef struct tune_log {
    eo_cli_rounds rs;
    size_t train_pos, held_pos;   /* positions among the non-blank lines */
    size_t train_from, held_from; /* indices into rs */
} tune_log;

static int keep_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    tune_log *lg = ctx;
    (void)res;
    int rc = eo_cli_rounds_push(&lg->rs, r);
    if (rc == 0 && pos < lg->train_pos)
        lg->train_from = lg->rs.n;
    if (rc == 0 && pos < lg->held_pos)
        lg->held_from = lg->rs.n;
    return rc;
}

/* Reads the whole log into @p lg. 0, or -1 after a message. */
static int load(const tune_opts *o, tune_log *lg, eo_cli_fold *f)
{
    f->head = &o->h;
    f->round = keep_round;
    f->ctx = lg;
    if (eo_cli_fold_open(f) != 0 || eo_cli_fold_count(f) != 0)
        return -1;
    lg->train_pos = (size_t)floor(o->burn_in * (double)f->total);
    lg->held_pos = (size_t)floor(o->eval_from * (double)f->total);
    return eo_cli_fold_run(f) == 0 ? 0 : -1;
}

/* ---- the search ---- */

/* Runs the search to its end, with progress on a terminal. 0, or -1 after a message. */
static int search(const tune_opts *o, const tune_log *lg, eo_tune_result *res)
{
    eo_tune *t = NULL;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_tune_create(&o->h.cfg, &o->tc, lg->rs.r, lg->rs.n, lg->train_from, lg->held_from,
                            &t, &err);
    if (rc != 0) {
        fprintf(stderr, "evenodds tune: %s: %s\n", o->h.input,
                rc == EO_EINVAL ? err.message : eo_strerror(rc));
        return -1;
    }
    bool tty = eo_opt_tty();
    eo_tune_progress p;
    do {
        rc = eo_tune_step(t, &p);
        if (rc == 0 && tty && p.knob != NULL)
            fprintf(stderr, "\revenodds tune: fold %u/%u, %s = %g: %.5f (best %.5f)   ", p.folds,
                    p.budget, p.knob, p.value, p.objective, p.best);
    } while (rc == 0 && !p.done);
    if (tty)
        fputc('\n', stderr);
    if (rc == 0)
        rc = eo_tune_get(t, res);
    else
        fprintf(stderr, "evenodds tune: round %zu (%s): %s\n", p.round + 1, lg->rs.r[p.round].id,
                eo_strerror(rc));
    eo_tune_destroy(t);
    return rc == 0 ? 0 : -1;
}

/* ---- output ---- */

static void knob_values(const eo_tune_result *r, const eo_pool_config *c)
{
    for (size_t i = 0; i < r->nknobs; i++) {
        double x = NAN;
        (void)eo_tune_knob_get(c, r->knobs[i], &x);
        printf(" %s=%g", r->knobs[i], x);
    }
    putchar('\n');
}

static void row(const char *label, const eo_metrics_result *m, double se)
{
    printf("  %-10s %8llu %9.5f", label, (unsigned long long)m->count, m->logloss);
    if (isfinite(se))
        printf(" %8.5f", se);
    else
        printf(" %8s", "");
    printf(" %8.5f %9.4f\n", m->brier, m->accuracy);
}

static void point_rows(const char *label, const eo_tune_result *r, const eo_tune_point *p)
{
    printf("%s:", label);
    knob_values(r, &p->cfg);
    row("train", &p->train, NAN);
    row("held out", &p->held, p->held_logloss_se);
}

static void write_table(const tune_opts *o, const tune_log *lg, const eo_tune_result *r,
                        const char *config)
{
    const char *metric = o->tc.brier ? "Brier" : "log loss";
    printf("model %s, %zu rounds: %s; %u folds, minimising %s\n",
           eo_model_name(o->h.cfg.model.model), lg->rs.n, o->h.input, r->folds, metric);
    printf("training rounds %zu-%zu (from --burn-in %g), held out from round %zu "
           "(--eval-from %g); draws left out\n\n",
           lg->train_from + 1, lg->held_from, o->burn_in, lg->held_from + 1, o->eval_from);
    printf("  %-10s %8s %9s %8s %8s %9s\n", "", "rounds", "log loss", "±se", "Brier", "accuracy");
    point_rows("start", r, &r->start);
    point_rows("best", r, &r->best);
    const eo_paired_result *h = &r->held;
    printf("\nheld out, best - start: log loss %+.5f ± %.5f, Brier %+.5f ± %.5f (%llu rounds)\n",
           h->logloss_diff, h->logloss_se, h->brier_diff, h->brier_se,
           (unsigned long long)h->a.count);
    if (r->chose_best)
        printf("chosen: best (training %s gain %.5f beats %.5f = %g x the start's held-out "
               "standard error)\n",
               metric, r->gain, r->threshold, o->tc.gate);
    else
        printf("chosen: start (training %s gain %.5f does not beat %.5f = %g x the start's "
               "held-out standard error)\n",
               metric, r->gain, r->threshold, o->tc.gate);
    printf("\nconfiguration (--params FILE; POST /v1/pools with a name):\n%s\n", config);
}

/* The chosen configuration as the file --params reads: {"name"?,"model","params"}. */
static json_t *config_json(const tune_opts *o, const eo_tune_result *r)
{
    const eo_pool_config *c = eo_tune_chosen(r);
    json_t *out = json_object();
    if (o->name != NULL)
        json_object_set_new(out, "name", json_string(o->name));
    json_object_set_new(out, "model", json_string(eo_model_name(c->model.model)));
    json_object_set_new(out, "params", eo_pool_config_to_json(c));
    return out;
}

static int write_report(const tune_opts *o, const tune_log *lg, const eo_cli_fold *fold,
                        const eo_tune_result *r, json_t *config)
{
    FILE *f = fopen(o->report, "w");
    if (f == NULL) {
        fprintf(stderr, "evenodds tune: --report: cannot create '%s'\n", o->report);
        return -1;
    }
    json_t *out = eo_tune_result_to_json(r, o->tc.brier);
    int bad = out == NULL;
    if (!bad) {
        json_object_set_new(out, "model", json_string(eo_model_name(o->h.cfg.model.model)));
        json_object_set_new(out, "rounds", json_integer((json_int_t)lg->rs.n));
        json_object_set_new(out, "eval_from", json_real(o->eval_from));
        json_object_set_new(out, "burn_in", json_real(o->burn_in));
        json_object_set_new(out, "gate", json_real(o->tc.gate));
        json_object_set_new(out, "config", json_incref(config));
        eo_cli_skipped_json(fold, out);
        bad = json_dumpf(out, f, JSON_COMPACT | JSON_REAL_PRECISION(10)) != 0 ||
              fputc('\n', f) == EOF;
    }
    json_decref(out);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "evenodds tune: --report: cannot write '%s'\n", o->report);
        return -1;
    }
    return 0;
}

/* The answers: --report, then the table or the configuration. 0, or -1 after a message. */
static int write_answer(const tune_opts *o, const tune_log *lg, const eo_cli_fold *f,
                        const eo_tune_result *r)
{
    json_t *config = config_json(o, r);
    /* 17 digits: the configuration reads back to the same doubles. */
    char *text =
        config ? json_dumps(config, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17))
               : NULL;
    int rc = text != NULL ? 0 : -1;
    if (rc == 0 && o->report != NULL)
        rc = write_report(o, lg, f, r, config); /* says why it failed */
    else if (rc != 0)
        fprintf(stderr, "evenodds tune: cannot write the answer\n");
    if (rc == 0) {
        if (o->h.json)
            printf("%s\n", text);
        else
            write_table(o, lg, r, text);
        if (fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "evenodds tune: cannot write the answer\n");
            rc = -1;
        }
    }
    free(text);
    json_decref(config);
    return rc;
}

int eo_cmd_tune(int argc, char **argv)
{
    tune_opts o = {.h = {.cmd = "tune", .usage = tune_usage, .format = true},
                   .eval_from = 0.5,
                   .burn_in = 0.1};
    eo_tune_config_default(&o.tc);
    int pr = eo_cli_head_parse(&o.h, argc, argv, tune_arg, tune_check, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    if (eo_tune_check(&o.h.cfg, &o.tc, &err) != 0) {
        fprintf(stderr, "evenodds tune: --tune %s\n", err.message);
        return 2;
    }
    tune_log lg;
    memset(&lg, 0, sizeof lg);
    eo_cli_fold f;
    memset(&f, 0, sizeof f);
    eo_tune_result res;
    int status = 1;
    if (load(&o, &lg, &f) == 0 && search(&o, &lg, &res) == 0 &&
        write_answer(&o, &lg, &f, &res) == 0)
        status = 0;
    eo_cli_fold_close(&f);
    eo_cli_rounds_free(&lg.rs);
    return status;
}
