/* evenodds fit: whole-history refit of a round log (eo_fit.h, docs/MODELS.md,
 * "Whole-history refit"). Reads the log once into the fit (and, with --holdout, two online pools
 * of the same model over the same training rounds), sweeps to convergence with a progress bar
 * on a terminal, reads it again to score the fitted values on the training rounds, writes the
 * fitted ratings, and reports how the refit and the online ratings predict the held-out
 * rounds. Every figure leaves draws out, as eval does. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/fold.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_fit.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

static const char fit_usage[] =
    "usage: evenodds fit [--model M] [--params FILE] [--param NAME=VALUE]...\n"
    "                    [--method map|smooth] [--sweeps N] [--tol X] [--prior S]\n"
    "                    [--prior-mean M] [--holdout F | --eval-from F] [--ratings-out FILE]\n"
    "                    [--truth FILE.json] [--no-weights] [--format table|json]\n"
    "                    [--skip-invalid] [--skip-duplicates] ROUNDS.jsonl\n"
    "\n"
    "Recomputes every player's rating from the whole log at once (docs/MODELS.md,\n"
    "\"Whole-history refit\"). map: the most probable static skills under the model's own\n"
    "win probability and a prior (Newton sweeps). smooth (trueskill, wenglin): each skill a\n"
    "random walk with the model's tau per round played, smoothed forward and backward; a\n"
    "player's rating is his state at his last round. With --param bias=map the map bias is\n"
    "fitted too (smooth: by the map fit first, then held).\n"
    "\n"
EO_OPT_MODEL_HELP
EO_OPT_NO_WEIGHTS_HELP
    "  --method map|smooth the fit (default smooth for trueskill and wenglin, map for the\n"
    "                      others, which only have map)\n"
    "  --sweeps N          most sweeps (default 100)\n"
    "  --tol X             stop when no Newton step (map) or no sweep (smooth) moves a\n"
    "                      rating by X (default: the prior's deviation / 10^4)\n"
    "  --prior S           deviation of the prior on each skill (default: the model's start\n"
    "                      deviation; synelo and elo 350; hive 8)\n"
    "  --prior-mean M      its centre (default: the model's start value; hive: the Gamma\n"
    "                      prior's mean, 10, which must exceed --prior)\n"
    "  --eval-from F       fit the rounds before fraction F only; score those from F on (as\n"
    "                      `replay --eval-from F`) with the refit frozen and continuing\n"
    "                      online, beside the online ratings frozen and continuing\n"
    "                      (default: fit everything)\n"
    "  --holdout F         the same as --eval-from 1-F: score the last share F\n"
    "  --truth FILE.json   also score the oracle's P_true on the held-out rounds (a sim's\n"
    "                      --truth-out)\n"
    "  --ratings-out FILE  one JSON object per player, sorted by id: {\"id\", \"rating\" or\n"
    "                      \"mu\", \"sigma\" (models with a deviation), \"rounds\"}\n"
    "  --format table|json aligned text, or one JSON object (default: table on a terminal)\n"
EO_OPT_SKIP_HELP
    "\n"
    "Every figure leaves draws out, as eval does: the training rounds scored with the fitted\n"
    "values (in sample), and the held-out rounds. With presence on, pi too. The objective\n"
    "is the fit's own (MAP: the log posterior; smooth: ln P at the forward pass; draws as\n"
    "half a win). Progress on stderr: a bar on a terminal, always a final line (sweeps,\n"
    "last change, objective, time). Exit status: 0 done, 1 unreadable or invalid input\n"
    "(file, line and field named), 2 bad usage.\n";

typedef struct fit_opts {
    eo_cli_head h;
    int64_t sweeps;
    double tol, prior, prior_mean, holdout, eval_from;
    bool has_tol, has_prior, has_mean, has_method, has_eval_from;
    eo_fit_method method;
    const char *ratings_out;
    const char *truth; /* --truth */
} fit_opts;

static int fit_arg(void *ctx, int argc, char **argv, int *i)
{
    fit_opts *o = ctx;
    const char *method = NULL;
    int r;
    if ((r = eo_opt_value("fit", argc, argv, i, "--method", &method)) != 0) {
        if (r > 0 && eo_fit_method_parse(method, &o->method) != 0) {
            fprintf(stderr, "evenodds fit: --method: expected map or smooth, got '%s'\n", method);
            return -1;
        }
        o->has_method = true; /* a -1 ends the parse */
        return r;
    }
    if ((r = eo_opt_int_arg("fit", argc, argv, i, "--sweeps", 1, 1000000, &o->sweeps)) != 0)
        return r;
    if ((r = eo_opt_real_arg("fit", argc, argv, i, "--tol", 1e-300, 1e300, &o->tol)) != 0) {
        o->has_tol = true;
        return r;
    }
    if ((r = eo_opt_real_arg("fit", argc, argv, i, "--prior", 1e-300, 1e300, &o->prior)) != 0) {
        o->has_prior = true;
        return r;
    }
    if ((r = eo_opt_real_arg("fit", argc, argv, i, "--prior-mean", -1e300, 1e300,
                             &o->prior_mean)) != 0) {
        o->has_mean = true;
        return r;
    }
    if ((r = eo_opt_real_arg("fit", argc, argv, i, "--holdout", 0.0, 0.9, &o->holdout)) != 0)
        return r;
    if ((r = eo_opt_real_arg("fit", argc, argv, i, "--eval-from", 0.1, 0.999999,
                             &o->eval_from)) != 0) {
        o->has_eval_from = true;
        return r;
    }
    if ((r = eo_opt_value("fit", argc, argv, i, "--truth", &o->truth)) != 0)
        return r;
    return eo_opt_value("fit", argc, argv, i, "--ratings-out", &o->ratings_out);
}

static int fit_check(void *ctx)
{
    fit_opts *o = ctx;
    if (o->has_eval_from && o->holdout > 0.0) {
        fprintf(stderr, "evenodds fit: --eval-from and --holdout say the same thing; give one\n");
        return -1;
    }
    if (!o->has_eval_from && o->holdout > 0.0) {
        o->eval_from = 1.0 - o->holdout;
        o->has_eval_from = true;
    }
    if (o->truth != NULL && !o->has_eval_from) {
        fprintf(stderr, "evenodds fit: --truth: scores held-out rounds, so needs --holdout F > 0 "
                        "or --eval-from F\n");
        return -1;
    }
    return 0;
}

/* The fit's configuration from the options; -1 after a message naming the option. */
static int fit_config(const fit_opts *o, eo_fit_config *fc)
{
    if (eo_fit_config_default(&o->h.cfg, fc) != 0) {
        fprintf(stderr, "evenodds fit: --param: the model refuses these parameters\n");
        return -1;
    }
    if (o->has_prior) {
        fc->prior_sd = o->prior;
        if (!o->has_tol)
            fc->tol = o->prior * 1e-4;
    }
    if (o->has_mean)
        fc->prior_mean = o->prior_mean;
    if (o->has_tol)
        fc->tol = o->tol;
    if (o->has_method)
        fc->method = o->method;
    fc->max_sweeps = (uint32_t)o->sweeps;
    eo_model m = o->h.cfg.model.model;
    if (fc->method == EO_FIT_SMOOTH && m != EO_MODEL_TRUESKILL && m != EO_MODEL_WENGLIN) {
        fprintf(stderr, "evenodds fit: --method smooth: only trueskill and wenglin (the "
                        "Gaussian models) have it; %s has map\n", eo_model_name(m));
        return -1;
    }
    if (o->h.cfg.model.model == EO_MODEL_HIVE && !(fc->prior_mean > fc->prior_sd)) {
        fprintf(stderr, "evenodds fit: --prior: the hive model's Gamma prior needs a deviation "
                        "below its mean (%g), got %g\n", fc->prior_mean, fc->prior_sd);
        return -1;
    }
    return 0;
}

/* ---- held-out rounds ---- */

typedef struct scores {
    eo_metrics_result refit, refit_cont, frozen, cont, oracle;
} scores;

/* Scores the held-out rounds (draws left out, as eval does): the refit frozen; the online pool
 * frozen after the training rounds, then the same pool rating them as it goes; and the second
 * online pool, given the refit's states as the service's refit gives them (eo_refit_values(),
 * eo_refit_apply()), rating them as it goes. */
static int score_held(const eo_fit *f, const eo_pool_config *cfg, eo_pool *online,
                      eo_pool *refitted, const eo_cli_rounds *h, scores *out)
{
    eo_refit_value *v = NULL;
    size_t nv = 0;
    if (eo_refit_values(f, cfg, &v, &nv) != 0)
        return -1;
    int rc = eo_refit_apply(refitted, v, nv, NULL);
    free(v);
    if (rc != 0)
        return -1;
    eo_metrics mr, mf, mc, mrc;
    eo_metrics_init(&mr);
    eo_metrics_init(&mf);
    eo_metrics_init(&mc);
    eo_metrics_init(&mrc);
    for (size_t i = 0; i < h->n; i++) {
        const eo_round *r = &h->r[i];
        double pr, pf;
        if (eo_fit_predict(f, r, &pr) != 0 || eo_pool_predict(online, r, &pf) != 0)
            return -1;
        if (r->winner != EO_DRAW) {
            eo_metrics_add(&mr, pr, r->winner == EO_WIN_A);
            eo_metrics_add(&mf, pf, r->winner == EO_WIN_A);
        }
    }
    for (size_t i = 0; i < h->n; i++) {
        const eo_round *r = &h->r[i];
        eo_round_result res, rres;
        if (eo_pool_apply(online, r, &res, NULL) != 0 ||
            eo_pool_apply(refitted, r, &rres, NULL) != 0)
            return -1;
        if (r->winner != EO_DRAW) {
            eo_metrics_add(&mc, res.p_a, r->winner == EO_WIN_A);
            eo_metrics_add(&mrc, rres.p_a, r->winner == EO_WIN_A);
        }
    }
    eo_metrics_get(&mr, &out->refit);
    eo_metrics_get(&mrc, &out->refit_cont);
    eo_metrics_get(&mf, &out->frozen);
    eo_metrics_get(&mc, &out->cont);
    return 0;
}

/* ---- output ---- */

typedef struct by_id {
    const char *id;
    size_t i;
} by_id;

static int cmp_by_id(const void *x, const void *y)
{
    return strcmp(((const by_id *)x)->id, ((const by_id *)y)->id);
}

static int write_ratings(const eo_fit *f, const eo_pool_config *cfg, const char *path)
{
    size_t n = eo_fit_player_count(f);
    by_id *order = malloc((n ? n : 1) * sizeof *order);
    FILE *out = order != NULL ? fopen(path, "w") : NULL;
    if (out == NULL) {
        free(order);
        fprintf(stderr, "evenodds fit: --ratings-out: cannot create '%s'\n", path);
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        eo_fit_player p;
        (void)eo_fit_player_get(f, i, &p);
        order[i].id = p.id;
        order[i].i = i;
    }
    qsort(order, n, sizeof *order, cmp_by_id); /* ids are unique: the order is total */
    eo_model m = cfg->model.model;
    bool gaussian = m == EO_MODEL_TRUESKILL || m == EO_MODEL_WENGLIN;
    bool deviation = gaussian || m == EO_MODEL_GLICKO2;
    int bad = 0;
    for (size_t k = 0; k < n && !bad; k++) {
        eo_fit_player p;
        (void)eo_fit_player_get(f, order[k].i, &p);
        json_t *o = json_object();
        json_object_set_new(o, "id", json_string(p.id));
        json_object_set_new(o, gaussian ? "mu" : "rating", json_real(p.skill));
        if (deviation)
            json_object_set_new(o, "sigma", json_real(p.sigma));
        json_object_set_new(o, "rounds", json_integer(p.rounds));
        bad = json_dumpf(o, out, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17)) !=
                  0 ||
              fputc('\n', out) == EOF;
        json_decref(o);
    }
    free(order);
    if (fclose(out) != 0 || bad) {
        fprintf(stderr, "evenodds fit: --ratings-out: cannot write '%s'\n", path);
        return -1;
    }
    return 0;
}

typedef struct run {
    const fit_opts *o;
    const eo_fit_config *fc;
    const eo_cli_fold *fold;
    eo_metrics_result train_fit; /* the fitted values on the training rounds, draws left out */
    size_t rounds, train, players;
    eo_fit_sweep_stats st;
    uint32_t passes;
    double seconds;
    bool has_held, has_oracle;
    scores sc;
    /* Presence's π in logits (the pool's presence on): the fit's, and with held-out rounds
     * the online pool's after the training rounds, its deviation and rounds of unequal
     * presence (docs/MODELS.md "Presence"). */
    bool presence;
    double pi_fit, pi_online, pi_online_sd;
    uint64_t pi_online_rounds;
} run;

/* π of the fit and of the online pool as it stands (after the training rounds). */
static void presence_figures(const eo_fit *f, const eo_pool *online, run *r)
{
    const eo_presence_config *c = &r->o->h.cfg.presence;
    r->presence = c->on;
    r->pi_fit = eo_fit_presence(f);
    const eo_presence *e = online != NULL ? eo_pool_presence(online) : NULL;
    if (e != NULL) {
        r->pi_online = eo_presence_value(c, e, &r->pi_online_sd);
        r->pi_online_rounds = e->rounds;
    }
}

static json_t *presence_json(const run *r)
{
    json_t *p = json_pack("{s:f}", "fit", r->pi_fit);
    if (p != NULL && r->has_held &&
        (json_object_set_new(p, "online", json_real(r->pi_online)) != 0 ||
         json_object_set_new(p, "online_uncertainty", eo_cli_json_real(r->pi_online_sd)) != 0 ||
         json_object_set_new(p, "online_rounds", json_integer((json_int_t)r->pi_online_rounds)) !=
             0)) {
        json_decref(p);
        return NULL;
    }
    return p;
}

static int write_json(const run *r)
{
    json_t *out = json_object();
    json_object_set_new(out, "model", json_string(eo_model_name(r->o->h.cfg.model.model)));
    json_object_set_new(out, "method", json_string(eo_fit_method_name(r->fc->method)));
    json_object_set_new(out, "rounds", json_integer((json_int_t)r->rounds));
    json_object_set_new(out, "train_rounds", json_integer((json_int_t)r->train));
    json_object_set_new(out, "players", json_integer((json_int_t)r->players));
    json_object_set_new(out, "prior", json_pack("{s:f,s:f}", "mean", r->fc->prior_mean, "sd",
                                                r->fc->prior_sd));
    json_object_set_new(out, "sweeps", json_integer(r->st.sweep));
    json_object_set_new(out, "passes", json_integer(r->passes));
    json_object_set_new(out, "converged", json_boolean(r->st.converged));
    json_object_set_new(out, "max_change", eo_cli_json_real(r->st.max_change));
    json_object_set_new(out, "tol", json_real(r->fc->tol));
    json_object_set_new(out, "objective", eo_cli_json_real(r->st.objective));
    json_object_set_new(out, "train", eo_cli_metrics_json(&r->train_fit));
    json_object_set_new(out, "seconds", json_real(r->seconds));
    if (r->presence)
        json_object_set_new(out, "presence", presence_json(r));
    eo_cli_skipped_json(r->fold, out);
    if (r->has_held) {
        json_t *h = json_object();
        json_object_set_new(h, "eval_from", json_real(r->o->eval_from));
        json_object_set_new(h, "refit", eo_cli_metrics_json(&r->sc.refit));
        json_object_set_new(h, "refit_continuing", eo_cli_metrics_json(&r->sc.refit_cont));
        json_object_set_new(h, "online_frozen", eo_cli_metrics_json(&r->sc.frozen));
        json_object_set_new(h, "online_continuing", eo_cli_metrics_json(&r->sc.cont));
        if (r->has_oracle)
            json_object_set_new(h, "oracle", eo_cli_metrics_json(&r->sc.oracle));
        json_object_set_new(out, "holdout", h);
    }
    int rc = json_dumpf(out, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) == 0 &&
                     putchar('\n') != EOF
                 ? 0
                 : -1;
    json_decref(out);
    return rc;
}

static void row(const char *label, const eo_metrics_result *m)
{
    printf("  %-20s %8llu %9.5f %8.5f %9.4f\n", label, (unsigned long long)m->count, m->logloss,
           m->brier, m->accuracy);
}

static void write_table(const run *r)
{
    printf("model %s, %zu rounds (%zu fitted), %zu players: %s\n",
           eo_model_name(r->o->h.cfg.model.model), r->rounds, r->train, r->players, r->o->h.input);
    printf("method %s, prior mean %g, sd %g; %u sweeps, %u passes, %s (max change %.3g, "
           "tol %.3g)\n",
           eo_fit_method_name(r->fc->method), r->fc->prior_mean, r->fc->prior_sd, r->st.sweep,
           r->passes,
           r->st.converged ? "converged" : "not converged", r->st.max_change, r->fc->tol);
    printf("objective %.6g (the fit's own; draws as half a win), %.3f s\n", r->st.objective,
           r->seconds);
    if (r->presence) {
        printf("presence pi (logits a player): fit %.4f", r->pi_fit);
        if (r->has_held)
            printf("; online after the training rounds %.4f +- %.4f (%llu rounds of unequal "
                   "presence)",
                   r->pi_online, r->pi_online_sd, (unsigned long long)r->pi_online_rounds);
        printf("\n");
    }
    printf("\ndraws left out, as eval does\n");
    printf("  %-20s %8s %9s %8s %9s\n", "", "rounds", "log loss", "Brier", "accuracy");
    row("train: fitted values", &r->train_fit);
    if (!r->has_held)
        return;
    printf("held out (from --eval-from %g):\n", r->o->eval_from);
    row("refit (frozen)", &r->sc.refit);
    row("refit, then online", &r->sc.refit_cont);
    row("online (frozen)", &r->sc.frozen);
    row("online (continuing)", &r->sc.cont);
    if (r->has_oracle)
        row("oracle (--truth)", &r->sc.oracle);
}

/* ---- the run ---- */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The progress bar: sweeps done of the most, with the last change against the tolerance. */
static void progress(const eo_fit_sweep_stats *st, const eo_fit_config *fc)
{
    enum { WIDTH = 30 };
    int done = (int)((double)WIDTH * st->sweep / fc->max_sweeps);
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++)
        bar[i] = i < done ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\rfit [%s] sweep %u/%u, change %.3g (tol %.3g)   ", bar, st->sweep,
            fc->max_sweeps, st->max_change, fc->tol);
}

/* What fit does with each round read: the rounds before position train into the fit and, with
 * held-out rounds, the two online pools; the rest kept for scoring. */
typedef struct fit_load {
    size_t train;
    eo_fit *f;
    eo_pool *online, *refitted; /* NULL without held-out rounds */
    eo_cli_rounds held;
} fit_load;

static int fit_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    fit_load *l = ctx;
    (void)res;
    if (pos >= l->train)
        return eo_cli_rounds_push(&l->held, r);
    int rc = eo_fit_add_round(l->f, r);
    if (rc == 0 && l->online != NULL)
        rc = eo_pool_apply(l->online, r, NULL, NULL);
    if (rc == 0 && l->refitted != NULL)
        rc = eo_pool_apply(l->refitted, r, NULL, NULL);
    return rc;
}

/* Sweeps to convergence or the most sweeps, with the progress bar on a terminal and the final
 * line. 0, or -1 after a message. */
static int sweep(eo_fit *f, const eo_fit_config *fc, run *r)
{
    bool tty = eo_opt_tty();
    double t0 = now_s();
    for (;;) {
        int rc = eo_fit_sweep(f, &r->st);
        if (rc != 0) {
            fprintf(stderr, "evenodds fit: %s\n", eo_strerror(rc));
            return -1;
        }
        r->passes += r->st.passes;
        if (tty)
            progress(&r->st, fc);
        if (r->st.converged || r->st.sweep >= fc->max_sweeps)
            break;
    }
    r->seconds = now_s() - t0;
    if (tty)
        fputc('\n', stderr);
    fprintf(stderr, "fit: %u sweeps (%u passes over %zu rounds), %s, max change %.3g, "
                    "objective %.10g, %.3f s\n",
            r->st.sweep, r->passes, r->train, r->st.converged ? "converged" : "not converged",
            r->st.max_change, r->st.objective, r->seconds);
    return 0;
}

/* The second pass: the fitted values' P of each training round, draws left out, as the
 * held-out rounds are scored. */
typedef struct train_score {
    const eo_fit *f;
    size_t train;
    eo_metrics m;
} train_score;

static int score_round(void *ctx, size_t pos, eo_round *r, const eo_round_result *res)
{
    train_score *t = ctx;
    (void)res;
    double p;
    if (pos >= t->train || r->winner == EO_DRAW)
        return 0;
    int rc = eo_fit_predict(t->f, r, &p);
    if (rc == 0)
        eo_metrics_add(&t->m, p, r->winner == EO_WIN_A);
    return rc;
}

/* Reads the log of @p lf again (quietly: its skipped lines were told) to score the training
 * rounds with the fitted values into r->train_fit. 0, or -1 after a message. */
static int score_train(const eo_cli_fold *lf, const eo_fit *f, size_t train, run *r)
{
    train_score t = {f, train, {0, 0, 0, 0}};
    eo_cli_fold again = {.head = lf->head, .in = lf->in, .total = lf->total, .quiet = true,
                         .round = score_round, .ctx = &t};
    rewind(lf->in);
    int rc = eo_cli_fold_run(&again); /* not closed: the file is lf's */
    eo_metrics_get(&t.m, &r->train_fit);
    return rc;
}

/* Reads the log into the fit (and the pools and held-out rounds of @p l) with the oracle of
 * --truth on the held-out rounds. 0, or -1 after a message. */
static int load(const fit_opts *o, eo_cli_fold *lf, fit_load *l, run *r)
{
    /* The held-out rounds are replay's scored rounds for the same fraction. */
    r->has_held = o->has_eval_from;
    l->train = r->has_held ? (size_t)floor(o->eval_from * (double)lf->total) : lf->total;
    if (r->has_held && (eo_pool_create(&o->h.cfg, &l->online) != 0 ||
                        eo_pool_create(&o->h.cfg, &l->refitted) != 0)) {
        fprintf(stderr, "evenodds fit: %s\n", eo_strerror(EO_ENOMEM));
        return -1;
    }
    eo_truth *truth = NULL;
    eo_metrics oracle;
    eo_metrics_init(&oracle);
    if (o->truth != NULL && eo_opt_truth_load("fit", o->truth, &truth) != 0)
        return -1;
    lf->truth = truth;
    lf->truth_from = l->train;
    lf->oracle = &oracle;
    int rc = eo_cli_fold_run(lf);
    r->rounds = lf->rounds;
    r->has_oracle = truth != NULL;
    eo_metrics_get(&oracle, &r->sc.oracle);
    eo_truth_destroy(truth);
    lf->truth = NULL;
    lf->oracle = NULL;
    if (rc != 0)
        return -1;
    r->train = r->rounds - l->held.n;
    r->players = eo_fit_player_count(l->f);
    if (r->train == 0) {
        fprintf(stderr, "evenodds fit: %s: no rounds to fit\n", o->h.input);
        return -1;
    }
    return 0;
}

int eo_cmd_fit(int argc, char **argv)
{
    fit_opts o = {.h = {.cmd = "fit", .usage = fit_usage, .format = true}, .sweeps = 100};
    int pr = eo_cli_head_parse(&o.h, argc, argv, fit_arg, fit_check, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    eo_fit_config fc;
    if (fit_config(&o, &fc) != 0)
        return 2;
    fit_load l = {0};
    if (eo_fit_create(&o.h.cfg, &fc, &l.f) != 0) {
        fprintf(stderr, "evenodds fit: --prior: a prior of mean %g and deviation %g is not "
                        "allowed\n", fc.prior_mean, fc.prior_sd);
        return 2;
    }
    int status = 1;
    run r;
    memset(&r, 0, sizeof r);
    r.o = &o;
    r.fc = &fc;
    eo_cli_fold lf = {.head = &o.h, .round = fit_round, .ctx = &l};
    /* fit's message for a log it cannot open is the one for a log it cannot read. */
    lf.in = fopen(o.h.input, "r");
    if (lf.in == NULL || eo_opt_count_lines(lf.in, &lf.total) != 0) {
        fprintf(stderr, "evenodds fit: cannot read '%s'\n", o.h.input);
        goto done;
    }
    r.fold = &lf;
    if (load(&o, &lf, &l, &r) != 0 || sweep(l.f, &fc, &r) != 0 ||
        score_train(&lf, l.f, l.train, &r) != 0)
        goto done;
    presence_figures(l.f, l.online, &r);
    if (r.has_held && score_held(l.f, &o.h.cfg, l.online, l.refitted, &l.held, &r.sc) != 0) {
        fprintf(stderr, "evenodds fit: scoring the held-out rounds failed\n");
        goto done;
    }
    if (o.ratings_out && write_ratings(l.f, &o.h.cfg, o.ratings_out) != 0)
        goto done;
    if (o.h.json) {
        if (write_json(&r) != 0)
            goto done;
    } else {
        write_table(&r);
    }
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    eo_cli_fold_close(&lf);
    eo_cli_rounds_free(&l.held);
    eo_pool_destroy(l.online);
    eo_pool_destroy(l.refitted);
    eo_fit_destroy(l.f);
    return status;
}
