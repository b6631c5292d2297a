/* evenodds eval: folds a JSONL round log through a model in memory, as replay does, and reports
 * how well it predicted each round before rating it: log loss, Brier, accuracy, calibration,
 * the tightest rounds and a split by experience (eo_eval.h; docs/EVAL.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/fold.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_eval.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

static const char eval_usage[] =
    "usage: evenodds eval [--model M] [--params FILE] [--param NAME=VALUE]... [--eval-from F]\n"
    "                     [--format table|json] [--plot FILE.svg] [--truth FILE.json]\n"
    "                     [--predictions-out FILE] [--no-weights] [--skip-invalid]\n"
    "                     [--skip-duplicates] ROUNDS.jsonl\n"
    "\n"
    "Folds the round log through the model in memory, in file order, exactly as replay does,\n"
    "and scores each round's P(A wins) at round start (before the round is rated): log loss,\n"
    "Brier, accuracy (a P of exactly 0.5 counts half), a 10-bin calibration table, the same\n"
    "figures over the tightest 20 % of rounds (smallest |P - 0.5|) and by the players'\n"
    "experience (mean earlier rounds of the round's players: 0-9, 10-49, 50+). Draws are\n"
    "counted but left out of every figure except \"Brier with draws as 0.5\". docs/EVAL.md\n"
    "defines each figure.\n"
    "\n"
EO_OPT_MODEL_HELP
EO_OPT_NO_WEIGHTS_HELP
    "  --eval-from F       fraction of the file, in [0, 1), after which rounds are scored\n"
    "                      (default 0); earlier rounds still rate and count as experience\n"
    "  --format table|json aligned text, or one JSON object (default: table when standard\n"
    "                      output is a terminal, json otherwise)\n"
    "  --plot FILE.svg     also write the calibration curve as a self-contained SVG\n"
    "  --truth FILE.json   a simulated world's truth (evenodds sim --truth-out): also score\n"
    "                      the oracle's P_true (true skills, time weights, map bias) on the\n"
    "                      same counted rounds (docs/EVAL.md, \"The oracle\")\n"
    "  --predictions-out FILE  one JSON line per scored round, draws included:\n"
    "                      {\"id\",\"p_a\",\"outcome\"} (P(A wins) at round start; \"A\", \"B\"\n"
    "                      or \"draw\"), for `evenodds compare`\n"
EO_OPT_SKIP_HELP
    "\n"
    "Exit status: 0 done, 1 unreadable or invalid input (the message names file, line and\n"
    "field), 2 bad usage.\n";

typedef struct eval_opts {
    eo_cli_head h;
    double eval_from;
    const char *plot;
    const char *truth; /* --truth */
    const char *predictions; /* --predictions-out */
} eval_opts;

static int eval_arg(void *ctx, int argc, char **argv, int *i)
{
    eval_opts *o = ctx;
    int r = eo_opt_real_arg("eval", argc, argv, i, "--eval-from", 0.0, 0.999999, &o->eval_from);
    if (r == 0)
        r = eo_opt_value("eval", argc, argv, i, "--truth", &o->truth);
    if (r == 0)
        r = eo_opt_value("eval", argc, argv, i, "--predictions-out", &o->predictions);
    if (r == 0)
        r = eo_opt_value("eval", argc, argv, i, "--plot", &o->plot);
    return r;
}

/* What the run found, for the writers. */
typedef struct eval_run {
    const char *model;
    const char *input;
    double eval_from;
    size_t rounds;     /* rounds read */
    size_t players;
    size_t eval_start; /* first scored position (0-based, among non-blank lines) */
    eo_eval_result r;
    bool has_oracle;   /* --truth given */
    eo_metrics_result oracle; /* P_true over the same counted rounds */
} eval_run;

/* ---- JSON ---- */

static void set_metrics(json_t *o, const eo_metrics_result *m)
{
    json_object_set_new(o, "logloss", eo_cli_json_real(m->logloss));
    json_object_set_new(o, "brier", eo_cli_json_real(m->brier));
    json_object_set_new(o, "accuracy", eo_cli_json_real(m->accuracy));
}

static int write_json(const eval_run *e, const eo_cli_fold *f)
{
    const eo_eval_result *r = &e->r;
    json_t *out = json_object();
    json_object_set_new(out, "model", json_string(e->model));
    json_object_set_new(out, "rounds", json_integer((json_int_t)e->rounds));
    json_object_set_new(out, "players", json_integer((json_int_t)e->players));
    json_object_set_new(out, "eval_from", json_real(e->eval_from));
    json_object_set_new(out, "scored", json_integer((json_int_t)r->scored));
    json_object_set_new(out, "draws", json_integer((json_int_t)r->draws));
    json_object_set_new(out, "counted", json_integer((json_int_t)r->all.count));
    set_metrics(out, &r->all);
    json_object_set_new(out, "brier_draws_half", eo_cli_json_real(r->brier_draws_half));
    if (e->has_oracle) {
        json_t *orc = json_object();
        json_object_set_new(orc, "counted", json_integer((json_int_t)e->oracle.count));
        set_metrics(orc, &e->oracle);
        json_object_set_new(out, "oracle", orc);
    }

    json_t *tight = json_object();
    json_object_set_new(tight, "share", json_real(1.0 / EO_EVAL_TIGHT_DIV));
    json_object_set_new(tight, "count", json_integer((json_int_t)r->tight.count));
    json_object_set_new(tight, "max_margin", eo_cli_json_real(r->tight_margin));
    set_metrics(tight, &r->tight);
    json_object_set_new(out, "tight", tight);

    json_t *cal = json_object(), *bins = json_array();
    json_object_set_new(cal, "ece", eo_cli_json_real(r->ece));
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        const eo_eval_bin *c = &r->calib[b];
        json_t *o = json_object();
        json_object_set_new(o, "from", json_real(c->from));
        json_object_set_new(o, "to", json_real(c->to));
        json_object_set_new(o, "count", json_integer((json_int_t)c->count));
        json_object_set_new(o, "mean_p", eo_cli_json_real(c->mean_p));
        json_object_set_new(o, "win_rate", eo_cli_json_real(c->win_rate));
        json_array_append_new(bins, o);
    }
    json_object_set_new(cal, "bins", bins);
    json_object_set_new(out, "calibration", cal);

    json_t *exp = json_array();
    for (int g = 0; g < EO_EVAL_EXP_GROUPS; g++) {
        const eo_eval_group *x = &r->exp[g];
        json_t *o = json_object();
        json_object_set_new(o, "from", json_real(x->from));
        json_object_set_new(o, "to", eo_cli_json_real(x->to));
        json_object_set_new(o, "count", json_integer((json_int_t)x->m.count));
        json_object_set_new(o, "draws", json_integer((json_int_t)x->draws));
        set_metrics(o, &x->m);
        json_array_append_new(exp, o);
    }
    json_object_set_new(out, "experience", exp);
    eo_cli_skipped_json(f, out);

    int rc = json_dumpf(out, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) == 0 &&
                     putchar('\n') != EOF
                 ? 0
                 : -1;
    json_decref(out);
    return rc;
}

/* ---- table ---- */

/* A figure with @p prec decimals in @p w columns, "-" when it has no value. */
static void cell(double v, int w, int prec)
{
    if (isfinite(v))
        printf(" %*.*f", w, prec, v);
    else
        printf(" %*s", w, "-");
}

static void metrics_row(const char *label, const eo_metrics_result *m)
{
    printf("%-22s %8llu", label, (unsigned long long)m->count);
    cell(m->logloss, 9, 4);
    cell(m->brier, 8, 4);
    cell(m->accuracy, 9, 4);
}

static void write_table(const eval_run *e)
{
    const eo_eval_result *r = &e->r;
    printf("model %s, %zu rounds, %zu players: %s\n", e->model, e->rounds, e->players, e->input);
    printf("scored: %llu rounds from round %zu on (--eval-from %g); %llu draws left out, "
           "%llu counted\n\n",
           (unsigned long long)r->scored, e->eval_start + 1, e->eval_from,
           (unsigned long long)r->draws, (unsigned long long)r->all.count);
    printf("%-22s %8s %9s %8s %9s\n", "", "rounds", "log loss", "Brier", "accuracy");
    metrics_row("all", &r->all);
    putchar('\n');
    if (e->has_oracle) {
        metrics_row("oracle (--truth)", &e->oracle);
        if (isfinite(r->all.logloss) && isfinite(e->oracle.logloss) && e->oracle.logloss > 0.0)
            printf("   (model's log loss %+.2f %%)",
                   100.0 * (r->all.logloss / e->oracle.logloss - 1.0));
        putchar('\n');
    }
    char label[64];
    snprintf(label, sizeof label, "tightest %d %%", 100 / EO_EVAL_TIGHT_DIV);
    metrics_row(label, &r->tight);
    if (isfinite(r->tight_margin))
        printf("   (|P - 0.5| <= %.4f)", r->tight_margin);
    putchar('\n');
    for (int g = 0; g < EO_EVAL_EXP_GROUPS; g++) {
        const eo_eval_group *x = &r->exp[g];
        if (isfinite(x->to))
            snprintf(label, sizeof label, "experience %.0f-%.0f", x->from, x->to - 1);
        else
            snprintf(label, sizeof label, "experience %.0f+", x->from);
        metrics_row(label, &x->m);
        printf("   (%llu draws)\n", (unsigned long long)x->draws);
    }
    printf("\nBrier with draws as 0.5 (seed 000 F6):");
    cell(r->brier_draws_half, 0, 4);
    printf(" over %llu rounds\n\n", (unsigned long long)r->scored);

    printf("%-14s %8s %8s %8s\n", "P(A) bin", "rounds", "mean P", "A won");
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        const eo_eval_bin *c = &r->calib[b];
        snprintf(label, sizeof label, "[%.1f, %.1f%c", c->from, c->to,
                 b == EO_EVAL_CALIB_BINS - 1 ? ']' : ')');
        printf("%-14s %8llu", label, (unsigned long long)c->count);
        cell(c->mean_p, 8, 4);
        cell(c->win_rate, 8, 4);
        putchar('\n');
    }
    printf("expected calibration error (ECE):");
    cell(r->ece, 0, 4);
    putchar('\n');
}

/* ---- SVG ---- */

/* Writes @p s with XML's five special characters escaped. */
static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* The plot's frame: 520 x 540 units, the unit square mapped to [70, 500] x [50, 480]. */
#define SVG_X0 70.0
#define SVG_Y0 50.0
#define SVG_SIDE 430.0

static double svg_x(double p) { return SVG_X0 + SVG_SIDE * p; }
static double svg_y(double r) { return SVG_Y0 + SVG_SIDE * (1.0 - r); }

/* The plot's grid, ticks, axes, their labels and the headline. */
static void svg_frame(FILE *f, const eval_run *e)
{
    const eo_eval_result *r = &e->r;
    /* grid, ticks and labels every 0.1 */
    for (int t = 0; t <= 10; t++) {
        double v = t / 10.0;
        fprintf(f,
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#eeeeee\"/>\n"
                "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#eeeeee\"/>\n",
                svg_x(v), svg_y(0), svg_x(v), svg_y(1), svg_x(0), svg_y(v), svg_x(1), svg_y(v));
        if (t % 2 == 0)
            fprintf(f,
                    "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">%.1f</text>\n"
                    "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">%.1f</text>\n",
                    svg_x(v), svg_y(0) + 18, v, svg_x(0) - 8, svg_y(v) + 4, v);
    }
    /* axes */
    fprintf(f,
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n"
            "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"black\"/>\n",
            svg_x(0), svg_y(0), svg_x(1), svg_y(0), svg_x(0), svg_y(0), svg_x(0), svg_y(1));
    fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">predicted P(A wins)</text>\n",
            svg_x(0.5), svg_y(0) + 40);
    fprintf(f,
            "<text x=\"20\" y=\"%.2f\" text-anchor=\"middle\" transform=\"rotate(-90 20 %.2f)\">"
            "observed share of rounds A won</text>\n",
            svg_y(0.5), svg_y(0.5));
    fputs("<text x=\"20\" y=\"24\" font-size=\"13\">", f);
    xml_text(f, e->model);
    fprintf(f, ": %llu rounds, log loss ", (unsigned long long)r->all.count);
    if (isfinite(r->all.logloss))
        fprintf(f, "%.4f, Brier %.4f, ECE %.4f", r->all.logloss, r->all.brier, r->ece);
    else
        fputs("-", f);
    fputs("</text>\n", f);
}

/* The diagonal (perfect calibration), the model's line through the non-empty bins and a dot per
 * bin. */
static void svg_series(FILE *f, const eval_run *e)
{
    const eo_eval_result *r = &e->r;
    /* series 1: the diagonal (perfect calibration) */
    fprintf(f,
            "<polyline points=\"%.2f,%.2f %.2f,%.2f\" fill=\"none\" stroke=\"#888888\" "
            "stroke-dasharray=\"5 4\"><title>perfect calibration</title></polyline>\n",
            svg_x(0), svg_y(0), svg_x(1), svg_y(1));
    /* series 2: the model, through the non-empty bins */
    fputs("<polyline points=\"", f);
    const char *sep = "";
    uint64_t most = 0;
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        const eo_eval_bin *c = &r->calib[b];
        most = c->count > most ? c->count : most;
        if (c->count == 0)
            continue;
        fprintf(f, "%s%.2f,%.2f", sep, svg_x(c->mean_p), svg_y(c->win_rate));
        sep = " ";
    }
    fputs("\" fill=\"none\" stroke=\"#1f5fa8\" stroke-width=\"2\"><title>", f);
    xml_text(f, e->model);
    fputs("</title></polyline>\n", f);
    /* the bins: area of each dot proportional to its rounds */
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        const eo_eval_bin *c = &r->calib[b];
        if (c->count == 0)
            continue;
        double rad = 2.0 + 8.0 * sqrt((double)c->count / (double)most);
        fprintf(f,
                "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"#1f5fa8\" fill-opacity=\"0.5\">"
                "<title>P(A) in [%.1f, %.1f%c: %llu rounds, mean P %.4f, A won %.4f</title>"
                "</circle>\n",
                svg_x(c->mean_p), svg_y(c->win_rate), rad, c->from, c->to,
                b == EO_EVAL_CALIB_BINS - 1 ? ']' : ')', (unsigned long long)c->count, c->mean_p,
                c->win_rate);
    }
}

static int write_svg(const eval_run *e, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "evenodds eval: --plot: cannot create '%s'\n", path);
        return -1;
    }
    fputs("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"520\" height=\"540\" "
          "viewBox=\"0 0 520 540\" font-family=\"sans-serif\" font-size=\"12\">\n",
          f);
    fputs("<title>Calibration of ", f);
    xml_text(f, e->model);
    fputs(" on ", f);
    xml_text(f, e->input);
    fputs("</title>\n<rect width=\"520\" height=\"540\" fill=\"white\"/>\n", f);
    svg_frame(f, e);
    svg_series(f, e);
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "evenodds eval: --plot: cannot write '%s'\n", path);
        return -1;
    }
    return 0;
}

/* ---- the run ---- */

/* What eval does with each round: its players' experience (every round), then its score. The
 * experience is eo_eval's own count, so taking it once the pool has rated the round is the same
 * as before. */
typedef struct eval_fold {
    eo_eval *ev;
    size_t eval_start; /* first scored position */
    FILE *predictions; /* --predictions-out, or NULL */
    bool lost;         /* a prediction could not be written (said once the fold ends) */
} eval_fold;

/* One line of --predictions-out; P with 17 digits, so `compare` scores the very same P. */
static void write_prediction(eval_fold *e, const eo_round *r, double p_a)
{
    json_t *o = eo_prediction_to_json(r->id, p_a, r->winner);
    e->lost |= o == NULL ||
               json_dumpf(o, e->predictions,
                          JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) != 0 ||
               fputc('\n', e->predictions) == EOF;
    json_decref(o);
}

static int eval_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    eval_fold *e = ctx;
    double experience = 0.0;
    int rc = eo_eval_players(e->ev, r, &experience);
    if (rc == 0 && pos >= e->eval_start)
        rc = eo_eval_add(e->ev, res->p_a, r->winner, experience);
    if (rc == 0 && pos >= e->eval_start && e->predictions != NULL)
        write_prediction(e, r, res->p_a);
    return rc;
}

/* The report of a completed fold: the --plot SVG, then JSON or the table. 0, or -1 after a
 * message. */
static int report(const eval_opts *o, const eo_cli_fold *f, const eval_fold *e,
                  const eo_metrics *oracle)
{
    if (e->predictions != NULL &&
        (e->lost || fflush(e->predictions) != 0 || ferror(e->predictions))) {
        fprintf(stderr, "evenodds eval: --predictions-out: cannot write '%s'\n", o->predictions);
        return -1;
    }
    eval_run run;
    memset(&run, 0, sizeof run);
    run.model = eo_model_name(o->h.cfg.model.model);
    run.input = o->h.input;
    run.eval_from = o->eval_from;
    run.eval_start = e->eval_start;
    run.rounds = f->rounds;
    run.players = eo_pool_player_count(f->pool);
    run.has_oracle = f->truth != NULL;
    eo_metrics_get(oracle, &run.oracle);
    int rc = eo_eval_get(e->ev, &run.r);
    if (rc != 0) {
        fprintf(stderr, "evenodds eval: %s\n", eo_strerror(rc));
        return -1;
    }
    if (o->plot && write_svg(&run, o->plot) != 0)
        return -1;
    if (o->h.json) {
        if (write_json(&run, f) != 0)
            return -1;
    } else {
        write_table(&run);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "evenodds eval: cannot write the report\n");
        return -1;
    }
    return 0;
}

int eo_cmd_eval(int argc, char **argv)
{
    eval_opts o = {.h = {.cmd = "eval", .usage = eval_usage, .format = true}};
    int pr = eo_cli_head_parse(&o.h, argc, argv, eval_arg, NULL, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    eval_fold e = {0};
    eo_truth *truth = NULL;
    eo_metrics oracle;
    eo_metrics_init(&oracle);
    eo_cli_fold f = {.head = &o.h, .rate = true, .progress = true, .progress_eol = true,
                     .oracle = &oracle, .round = eval_round, .ctx = &e};
    if (eo_cli_fold_open(&f) != 0)
        return 1;
    int status = 1;
    if (o.truth != NULL && eo_opt_truth_load("eval", o.truth, &truth) != 0)
        goto done;
    if (eo_cli_fold_count(&f) != 0)
        goto done;
    int rc = eo_eval_create(&e.ev);
    if (rc != 0) {
        fprintf(stderr, "evenodds eval: %s\n", eo_strerror(rc));
        goto done;
    }
    if (o.predictions != NULL && (e.predictions = fopen(o.predictions, "w")) == NULL) {
        fprintf(stderr, "evenodds eval: --predictions-out: cannot create '%s'\n", o.predictions);
        goto done;
    }
    e.eval_start = (size_t)floor(o.eval_from * (double)f.total);
    f.truth = truth;
    f.truth_from = e.eval_start;
    if (eo_cli_fold_run(&f) == 0 && report(&o, &f, &e, &oracle) == 0)
        status = 0;
done:
    if (e.predictions != NULL && fclose(e.predictions) != 0 && status == 0) {
        fprintf(stderr, "evenodds eval: --predictions-out: cannot write '%s'\n", o.predictions);
        status = 1;
    }
    eo_cli_fold_close(&f);
    eo_eval_destroy(e.ev);
    eo_truth_destroy(truth);
    return status;
}
