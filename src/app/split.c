/* Split requests through the core (eo_app.h): a decoded request, the players' strengths and the
 * pool's model in, the answer the codec encodes out. The one path of the service's splits and
 * `evenodds split`: integer ratings from the model, the exact splitter for a plain request, the
 * balancer for one with balancer inputs (the tolerance on P(A) turned into rating units, the
 * time budget into search nodes), and each split's P(A) (docs/BALANCER.md "The balancer
 * through the service"). */
#include "evenodds/eo_app.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/round_internal.h" /* eo__fail */

/* Every answered split's P(A wins): the model's, from the players' strengths, with @p field
 * (model units). The only place a split's P(A) is computed: the solvers leave it NaN. */
static void answer_p_a(eo_split_answer *a, const eo_model_ctx *model, const eo_strength *st,
                       double field)
{
    for (size_t c = 0; a->splits != NULL && c < a->splits->count; c++) {
        eo_split *s = &a->splits->split[c];
        s->p_a = eo_model_predict_idx(model, st, s->a, (size_t)s->k, s->b, (size_t)s->k, field);
    }
    for (size_t c = 0; c < a->count; c++) {
        eo_balance_split *s = a->split[c];
        if (s->err == 0)
            s->p_a = eo_model_predict_idx(model, st, s->a, (size_t)s->k, s->b, (size_t)s->k,
                                          field);
    }
}

/* ---- balancer requests -------------------------------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int oom(eo_split_answer *out, eo_round_error *err)
{
    eo_split_answer_free(out);
    eo__fail(err, "", "out of memory");
    return EO_ENOMEM;
}

/* The players' integer ratings into @p req, and @p var (their variances, ascending) and @p rerr
 * (their rounding errors in split units, largest first, negated) for the tolerances. */
static void split_ratings(eo_split_request *req, const eo_model_ctx *model,
                          const eo_strength *strength, int64_t unit, double *var, double *rerr)
{
    for (size_t i = 0; i < req->n; i++) {
        req->players[i].rating = eo_model_split_rating(model, strength[i].mu);
        var[i] = strength[i].var > 0.0 ? strength[i].var : 0.0;
        /* negated: sorted ascending, the largest errors come first */
        rerr[i] = -fabs(strength[i].mu * (double)unit - (double)req->players[i].rating);
    }
    qsort(var, req->n, sizeof var[0], cmp_double);
    qsort(rerr, req->n, sizeof rerr[0], cmp_double);
}

/* The tolerance (out->epsilon) and the field per k, from the 2k smallest variances and the 2k
 * largest rounding errors: the same variance for both, so the field is worth in ratings what it
 * is worth in P(A) for those players. Returns the number of runs of equal tolerance and field
 * (each one eo_balance_solve() call). */
static size_t tolerances(const eo_split_request *req, const eo_model_ctx *model,
                         const double *var, const double *rerr, eo_split_answer *out,
                         int64_t *field)
{
    size_t groups = 0;
    for (size_t c = 0; c < out->count; c++) {
        int k = req->k_min + (int)c;
        double vs = 0.0, slack = 0.0;
        for (int i = 0; i < 2 * k; i++) {
            vs += var[i];
            slack -= rerr[i];
        }
        out->epsilon[c] = eo_model_split_tolerance(model, req->epsilon, k, vs, out->unit, slack);
        field[c] = eo_model_field_units(model, req->field, k, vs, out->unit);
        groups += c == 0 || out->epsilon[c] != out->epsilon[c - 1] || field[c] != field[c - 1];
    }
    return groups;
}

/* The error of a call the core refused: the party it names, else the players. The decoder
 * checks what the core refuses; this is a safety net. */
static int refused(const eo_split_request *req, int rc, uint32_t bad, eo_round_error *err)
{
    for (size_t i = 0; bad && i < req->n; i++)
        if (req->players[i].party == bad) {
            char f[48];
            snprintf(f, sizeof f, "players[%zu].party", i);
            return eo__fail(err, f, "party \"%s\": %s", req->party_ids[bad - 1],
                            eo_strerror(rc));
        }
    return eo__fail(err, "players", "%s", eo_strerror(rc ? rc : EO_EINVAL));
}

/* Solves each run of k with equal tolerance and field in one eo_balance_solve() call, the
 * budget's nodes shared equally between the @p groups runs. */
static int solve_runs(const eo_split_request *req, const int64_t *field, size_t groups,
                      eo_split_answer *out, eo_round_error *err)
{
    uint64_t work = (uint64_t)req->budget_ms * EO_SPLIT_NODES_PER_MS / groups;
    for (size_t c = 0; c < out->count;) {
        size_t e = c + 1;
        while (e < out->count && out->epsilon[e] == out->epsilon[c] && field[e] == field[c])
            e++;
        eo_balance_request br;
        memset(&br, 0, sizeof br);
        br.mode = req->mode;
        br.k_min = req->k_min + (int)c;
        br.k_max = req->k_min + (int)e - 1;
        br.epsilon = out->epsilon[c];
        br.spread_epsilon = out->spread_epsilon;
        br.field = field[c];
        br.allow_party_split = req->allow_party_split;
        br.allow_protected = req->allow_protected;
        br.work_limit = work > 0 ? work : 1;
        uint32_t bad = 0;
        eo_balance_result *r = NULL;
        int rc = eo_balance_solve(req->players, req->n, &br, &r, &bad);
        if (rc == EO_ENOMEM)
            return oom(out, err);
        if (rc != 0 || r->count != e - c) {
            eo_balance_free(r);
            eo_split_answer_free(out);
            return refused(req, rc, bad, err);
        }
        out->res[out->nres++] = r;
        for (size_t x = c; x < e; x++)
            out->split[x] = &r->split[x - c];
        c = e;
    }
    return 0;
}

int eo_app_split_balance(eo_split_request *req, const eo_model_ctx *model,
                         const eo_strength *strength, eo_split_answer *out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    if (req == NULL || !req->balance || model == NULL || strength == NULL || req->n < 2 ||
        req->n > EO_SPLIT_EXACT_MAX)
        return eo__fail(err, "", "not a balancer request");
    out->unit = eo_model_split_unit(model);
    out->spread_epsilon = eo_model_spread_units(model, req->spread_epsilon);
    double var[EO_SPLIT_EXACT_MAX], rerr[EO_SPLIT_EXACT_MAX];
    split_ratings(req, model, strength, out->unit, var, rerr);
    out->count = req->k_min >= 2 && req->k_max >= req->k_min
                     ? (size_t)(req->k_max - req->k_min + 1)
                     : 0;
    if (out->count == 0)
        return 0;
    out->split = calloc(out->count, sizeof *out->split);
    out->epsilon = calloc(out->count, sizeof *out->epsilon);
    out->res = calloc(out->count, sizeof *out->res);
    int64_t *field = calloc(out->count, sizeof *field);
    if (!out->split || !out->epsilon || !out->res || !field) {
        free(field);
        return oom(out, err);
    }
    size_t groups = tolerances(req, model, var, rerr, out, field);
    int rc = solve_runs(req, field, groups, out, err);
    free(field);
    if (rc == 0)
        answer_p_a(out, model, strength, req->field);
    return rc;
}

/* ---- plain requests and the entry point --------------------------------------------------- */

/* round(μ) as a split rating at unit 1, ties to even, clamped to the solver's ±2^40 like
 * eo_model_split_rating(). */
static int64_t whole_point(double mu)
{
    double r = nearbyint(mu);
    if (!(r > -0x1p40)) /* NaN too */
        r = -0x1p40;
    if (r > 0x1p40)
        r = 0x1p40;
    return (int64_t)r;
}

/* A plain request: the exact splitter on the players' integer ratings. A plain request names no
 * map ("map" makes it a balancer request): its P(A) has field 0. */
static int split_plain(const eo_split_request *req, const eo_model_ctx *model,
                       const eo_strength *strength, const eo_app_split_options *opt,
                       eo_split_answer *out, eo_round_error *err)
{
    bool whole = opt != NULL && opt->whole_points;
    eo_split_ws *ws = opt != NULL ? opt->ws : NULL;
    eo_split_options so = {.bench = req->bench, .work_limit = opt != NULL ? opt->work_limit : 0};
    if (req->n > EO_SPLIT_EXACT_MAX) { /* the splitter's own answer to that */
        eo__fail(err, "players", "%s", eo_strerror(EO_ELIMIT));
        return EO_ELIMIT;
    }
    eo_split_player players[EO_SPLIT_EXACT_MAX];
    for (size_t i = 0; i < req->n; i++)
        players[i].rating = whole ? whole_point(strength[i].mu)
                                  : eo_model_split_rating(model, strength[i].mu);
    eo_splits *s = NULL;
    int rc = ws ? eo_split_solve_ws(ws, players, req->n, &so, &s)
                : eo_split_solve(players, req->n, &so, &s);
    if (rc != 0) {
        if (!ws)
            eo_splits_free(s);
        eo__fail(err, "players", "%s", eo_strerror(rc));
        return rc;
    }
    out->unit = whole ? 1 : eo_model_split_unit(model);
    out->splits = s;
    out->splits_borrowed = ws != NULL;
    answer_p_a(out, model, strength, 0.0);
    return 0;
}

int eo_app_split(eo_split_request *req, const eo_model_ctx *model, const eo_strength *strength,
                 const eo_app_split_options *opt, eo_split_answer *out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    if (req == NULL || model == NULL || strength == NULL)
        return eo__fail(err, "", "no request, model or strengths");
    if (req->balance)
        return eo_app_split_balance(req, model, strength, out, err);
    return split_plain(req, model, strength, opt, out, err);
}
