/* The model registry and everything generic about models: names, parameter tables, bounds,
 * prepared contexts, argument checks. Each model's own work is in its ops
 * (model_internal.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/models/model_internal.h"
#include "core/numeric.h"

/* Indexed by eo_model. A model is added here and in the eo_model enum. */
static const eo__model_ops *const registry[EO_MODEL_COUNT] = {
    [EO_MODEL_SYNELO] = &eo__synelo_ops,
    [EO_MODEL_TRUESKILL] = &eo__trueskill_ops,
    [EO_MODEL_GLICKO2] = &eo__glicko2_ops,
    [EO_MODEL_ELO] = &eo__elo_ops,
    [EO_MODEL_WENGLIN] = &eo__wenglin_ops,
    [EO_MODEL_HIVE] = &eo__hive_ops,
};

static const eo__model_ops *ops_of(eo_model m)
{
    return (unsigned)m < EO_MODEL_COUNT ? registry[m] : NULL;
}

const char *eo_model_name(eo_model m)
{
    const eo__model_ops *o = ops_of(m);
    return o != NULL ? o->name : NULL;
}

int eo_model_parse(const char *name, eo_model *out)
{
    for (unsigned m = 0; name != NULL && m < EO_MODEL_COUNT; m++) {
        if (registry[m] != NULL && strcmp(registry[m]->name, name) == 0) {
            *out = (eo_model)m;
            return 0;
        }
    }
    return EO_EINVAL;
}

size_t eo_model_names(char *buf, size_t cap)
{
    size_t need = 0, at = 0;
    bool cut = false;
    if (buf != NULL && cap > 0)
        buf[0] = '\0';
    for (unsigned m = 0; m < EO_MODEL_COUNT; m++) {
        if (registry[m] == NULL)
            continue;
        const char *sep = need > 0 ? ", " : "";
        size_t slen = strlen(sep), nlen = strlen(registry[m]->name);
        need += slen + nlen;
        /* Once a name is cut, later (shorter) ones must not follow it. */
        cut = cut || buf == NULL || at + slen + nlen >= cap;
        if (cut)
            continue;
        memcpy(buf + at, sep, slen);
        memcpy(buf + at + slen, registry[m]->name, nlen + 1);
        at += slen + nlen;
    }
    return need;
}

const eo_param_spec *eo_model_params(eo_model m, size_t *n)
{
    const eo__model_ops *o = ops_of(m);
    if (o == NULL)
        return NULL;
    *n = o->n_params;
    return o->params;
}

int eo_model_param_index(eo_model m, const char *name)
{
    const eo__model_ops *o = ops_of(m);
    for (size_t i = 0; o != NULL && name != NULL && i < o->n_params; i++)
        if (strcmp(o->params[i].name, name) == 0)
            return (int)i;
    return -1;
}

int eo_model_config_default(eo_model m, eo_model_config *c)
{
    const eo__model_ops *o = ops_of(m);
    if (o == NULL || c == NULL)
        return EO_EINVAL;
    memset(c, 0, sizeof *c);
    c->model = m;
    for (size_t i = 0; i < o->n_params; i++)
        c->v[i] = o->params[i].def;
    return 0;
}

int eo_model_config_new(eo_model m, eo_model_config *c)
{
    int rc = eo_model_config_default(m, c);
    if (rc == 0 && ops_of(m)->fresh != NULL)
        ops_of(m)->fresh(c);
    return rc;
}

static int fail(eo_round_error *err, const char *field, const char *fmt, const char *arg)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, fmt, arg);
    }
    return EO_EINVAL;
}

/* "one of \"a\", \"b\"" into buf. */
static void choice_list(const eo_param_spec *s, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; s->choices[i] != NULL && at < len; i++) {
        int w = snprintf(buf + at, len - at, "%s\"%s\"", i ? ", " : "", s->choices[i]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

/* Checks one value against its spec; fills err on failure. */
static int check_value(const eo_param_spec *s, double v, eo_round_error *err)
{
    char msg[128];
    if (s->choices != NULL) {
        size_t n = 0;
        while (s->choices[n] != NULL)
            n++;
        if (!(v >= 0 && v < (double)n && v == floor(v))) {
            choice_list(s, msg, sizeof msg);
            return fail(err, s->name, "expected one of %s", msg);
        }
        return 0;
    }
    if (!isfinite(v))
        return fail(err, s->name, "expected a finite number%s", "");
    if (s->integer && v != floor(v))
        return fail(err, s->name, "expected an integer%s", "");
    if (v < s->min || v > s->max) {
        if (s->integer)
            snprintf(msg, sizeof msg, "%.0f to %.0f", s->min, s->max);
        else
            snprintf(msg, sizeof msg, "%.17g to %.17g", s->min, s->max);
        return fail(err, s->name, "out of range (allowed: %s)", msg);
    }
    return 0;
}

int eo_model_config_set_number(eo_model_config *c, const char *name, double value,
                               eo_round_error *err)
{
    if (c == NULL || name == NULL)
        return EO_EINVAL;
    int i = eo_model_param_index(c->model, name);
    if (i < 0) {
        const char *mname = eo_model_name(c->model);
        char msg[80];
        snprintf(msg, sizeof msg, "unknown parameter of model \"%s\"", mname ? mname : "?");
        return fail(err, name, "%s", msg);
    }
    const eo_param_spec *s = &ops_of(c->model)->params[i];
    int rc = check_value(s, value, err);
    if (rc != 0)
        return rc;
    c->v[i] = value;
    c->given |= 1u << i;
    return 0;
}

int eo_model_config_set(eo_model_config *c, const char *name, const char *text,
                        eo_round_error *err)
{
    if (c == NULL || name == NULL || text == NULL)
        return EO_EINVAL;
    int i = eo_model_param_index(c->model, name);
    if (i >= 0 && ops_of(c->model)->params[i].choices != NULL) {
        const eo_param_spec *s = &ops_of(c->model)->params[i];
        for (size_t k = 0; s->choices[k] != NULL; k++)
            if (strcmp(s->choices[k], text) == 0)
                return eo_model_config_set_number(c, name, (double)k, err);
        char msg[128];
        choice_list(s, msg, sizeof msg);
        return fail(err, name, "expected one of %s", msg);
    }
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end != '\0') {
        if (i < 0)
            return eo_model_config_set_number(c, name, 0, err); /* names the unknown parameter */
        return fail(err, name, "expected a number, got \"%s\"", text);
    }
    return eo_model_config_set_number(c, name, v, err);
}

int eo_model_config_check(eo_model_config *c, eo_round_error *err)
{
    const eo__model_ops *o = c != NULL ? ops_of(c->model) : NULL;
    if (o == NULL)
        return fail(err, "model", "unknown model%s", "");
    for (size_t i = 0; i < o->n_params; i++) {
        int rc = check_value(&o->params[i], c->v[i], err);
        if (rc != 0)
            return rc;
    }
    for (size_t i = o->n_params; i < EO_PARAMS_MAX; i++)
        c->v[i] = 0;
    return o->check != NULL ? o->check(c, err) : 0;
}

int eo_model_prepare(const eo_model_config *c, eo_model_ctx **out, eo_round_error *err)
{
    if (c == NULL || out == NULL)
        return EO_EINVAL;
    eo_model_config cfg = *c;
    int rc = eo_model_config_check(&cfg, err);
    if (rc != 0)
        return rc;
    const eo__model_ops *o = ops_of(cfg.model);
    eo_model_ctx *ctx = calloc(1, sizeof *ctx);
    void *impl = calloc(1, o->impl_size);
    if (ctx == NULL || impl == NULL || o->prepare(&cfg, impl) != 0) {
        free(ctx);
        free(impl);
        return EO_ENOMEM;
    }
    ctx->ops = o;
    ctx->cfg = cfg;
    ctx->impl = impl;
    *out = ctx;
    return 0;
}

void eo_model_release(eo_model_ctx *ctx)
{
    if (ctx == NULL)
        return;
    if (ctx->ops->release != NULL)
        ctx->ops->release(ctx->impl);
    free(ctx->impl);
    free(ctx);
}

const eo_model_config *eo_model_ctx_config(const eo_model_ctx *ctx)
{
    return &ctx->cfg;
}

size_t eo_model_state_size(const eo_model_ctx *ctx)
{
    return ctx->ops->state_size;
}

void eo_model_player_init(const eo_model_ctx *ctx, void *st)
{
    ctx->ops->player_init(ctx->impl, st);
}

void eo_model_player_free(const eo_model_ctx *ctx, void *st)
{
    if (ctx->ops->player_free != NULL)
        ctx->ops->player_free(st);
}

void eo_model_strength(const eo_model_ctx *ctx, const void *st, int64_t now, eo_strength *out)
{
    ctx->ops->strength(ctx->impl, st, now, out);
}

double eo_model_predict(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                        double field)
{
    return ctx->ops->predict(ctx->impl, a, b, isfinite(field) ? field : 0.0);
}

double eo_model_level_field(const eo_model_ctx *ctx, const eo_team_agg *a,
                            const eo_team_agg *b)
{
    return ctx->ops->level != NULL ? ctx->ops->level(ctx->impl, a, b) : 0.0;
}

/* Step of the symmetric difference for dP/dfield, in field units. Both kinds of units (a logit,
 * a few μ) make P smooth at this scale: the truncation error is O(h²) relative, far below the
 * information a single round carries, and the rounding error about 1e-16/h. */
#define FIELD_STEP 1e-3

void eo_model_field_slope(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                          double base, double *p0, double *g)
{
    *p0 = eo_model_predict(ctx, a, b, base);
    double hi = eo_model_predict(ctx, a, b, base + FIELD_STEP);
    double lo = eo_model_predict(ctx, a, b, base - FIELD_STEP);
    *g = (hi - lo) / (2.0 * FIELD_STEP);
}

double eo_model_logit_field(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                            double base, double logit, double *p0, double *g)
{
    double p, slope;
    eo_model_field_slope(ctx, a, b, base, &p, &slope);
    if (p0 != NULL)
        *p0 = p;
    if (g != NULL)
        *g = slope;
    double v = p * (1.0 - p);
    return slope > 0.0 && v > 0.0 && logit != 0.0 ? logit * (v / slope) : 0.0;
}

double eo_model_predict_idx(const eo_model_ctx *ctx, const eo_strength *s, const uint16_t *a,
                            size_t na, const uint16_t *b, size_t nb, double field)
{
    eo_team_agg ta = {0}, tb = {0};
    for (size_t i = 0; i < na; i++)
        eo_team_agg_add(&ta, &s[a[i]], 1.0);
    for (size_t i = 0; i < nb; i++)
        eo_team_agg_add(&tb, &s[b[i]], 1.0);
    return eo_model_predict(ctx, &ta, &tb, field);
}

int64_t eo_model_split_unit(const eo_model_ctx *ctx)
{
    return ctx->ops->split_unit;
}

int64_t eo_model_split_rating(const eo_model_ctx *ctx, double mu)
{
    double x = mu * (double)eo_model_split_unit(ctx);
    const double lim = 1099511627776.0; /* the solver's |rating| <= 2^40 */
    x = x < -lim ? -lim : x > lim ? lim : x;
    return eo__round_half_even(x);
}

/* ---- the balancer's tolerance and field in split units ---- */

/* Every split's |D| fits far below this (2k ratings of at most 2^40 each, plus the field). */
#define TOLERANCE_CAP (INT64_C(1) << 50)

/* |P(A) − 0.5| for two teams of k whose mean sums differ by @p delta (model scale). */
static double dev_at(const eo_model_ctx *m, int k, double var_sum, double delta)
{
    eo_team_agg a = {(double)k, (double)k, (double)k, delta, var_sum / 2.0};
    eo_team_agg b = {(double)k, (double)k, (double)k, 0.0, var_sum / 2.0};
    return fabs(eo_model_predict(m, &a, &b, 0.0) - 0.5);
}

int64_t eo_model_split_tolerance(const eo_model_ctx *model, double p_tol, int k, double var_sum,
                                 int64_t unit, double slack)
{
    if (model == NULL || !(p_tol > 0.0) || k < 1 || unit < 1)
        return 0;
    if (!(var_sum >= 0.0) || !isfinite(var_sum))
        var_sum = 0.0;
    if (!(slack >= 0.0) || !isfinite(slack))
        return 0;
    const double u = (double)unit, cap = (double)TOLERANCE_CAP;
    /* lo is within the tolerance, hi beyond it; P(A) is monotone in delta. */
    double lo = 0.0, hi = 1.0 / u;
    while (dev_at(model, k, var_sum, hi) <= p_tol) {
        lo = hi;
        hi *= 2.0;
        if (hi * u > cap)
            return TOLERANCE_CAP;
    }
    for (int it = 0; it < 200 && hi - lo > lo * 1e-15; it++) {
        double mid = lo + (hi - lo) / 2.0;
        if (mid <= lo || mid >= hi)
            break;
        if (dev_at(model, k, var_sum, mid) <= p_tol)
            lo = mid;
        else
            hi = mid;
    }
    double e = floor(lo * u - slack);
    if (!(e > 0.0))
        return 0;
    int64_t E = (int64_t)e;
    /* The products above round; step down until the bound holds as the model computes it. */
    for (int guard = 0; E > 0 && guard < 64; guard++) {
        if (dev_at(model, k, var_sum, ((double)E + slack) / u) <= p_tol)
            return E;
        E--;
    }
    return E > 0 && dev_at(model, k, var_sum, ((double)E + slack) / u) <= p_tol ? E : 0;
}

/* P(A) of two teams of k whose mean sums differ by @p delta, with field @p field. */
static double p_at(const eo_model_ctx *m, int k, double var_sum, double delta, double field)
{
    eo_team_agg a = {(double)k, (double)k, (double)k, delta, var_sum / 2.0};
    eo_team_agg b = {(double)k, (double)k, (double)k, 0.0, var_sum / 2.0};
    return eo_model_predict(m, &a, &b, field);
}

#define FIELD_CAP (INT64_C(1) << 46)

int64_t eo_model_field_units(const eo_model_ctx *model, double field, int k, double var_sum,
                             int64_t unit)
{
    if (model == NULL || k < 1 || unit < 1 || !isfinite(field) || field == 0.0)
        return 0;
    if (!(var_sum >= 0.0) || !isfinite(var_sum))
        var_sum = 0.0;
    /* Odd by construction: solve for |field| and give the sign back. */
    double f = fabs(field), target = p_at(model, k, var_sum, 0.0, f);
    const double u = (double)unit, cap = (double)FIELD_CAP;
    double lo = 0.0, hi = 1.0 / u;
    while (p_at(model, k, var_sum, hi, 0.0) < target) {
        lo = hi;
        hi *= 2.0;
        if (hi * u > cap)
            return field > 0 ? FIELD_CAP : -FIELD_CAP;
    }
    for (int it = 0; it < 200; it++) {
        double mid = lo + (hi - lo) / 2.0;
        if (mid <= lo || mid >= hi)
            break;
        if (p_at(model, k, var_sum, mid, 0.0) < target)
            lo = mid;
        else
            hi = mid;
    }
    double r = nearbyint((lo + (hi - lo) / 2.0) * u); /* ties to even (default rounding) */
    int64_t F = r > cap ? FIELD_CAP : (int64_t)r;
    return field > 0 ? F : -F;
}

double eo_model_quality(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                        double field)
{
    field = isfinite(field) ? field : 0.0;
    if (ctx->ops->quality != NULL)
        return ctx->ops->quality(ctx->impl, a, b, field);
    return 1.0 - fabs(2.0 * ctx->ops->predict(ctx->impl, a, b, field) - 1.0);
}

static bool weights_ok(const eo_participant *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i].st == NULL || !(p[i].w >= 0.0 && p[i].w <= 1.0))
            return false;
    return true;
}

bool eo__rate_args_ok(const eo_participant *a, size_t na, const eo_participant *b, size_t nb,
                      eo_winner winner, double field)
{
    return a != NULL && b != NULL && na != 0 && nb != 0 && na + nb <= EO_PLAYERS_MAX &&
           (winner == EO_WIN_A || winner == EO_WIN_B || winner == EO_DRAW) &&
           isfinite(field) && weights_ok(a, na) && weights_ok(b, nb);
}

bool eo__playtimes_ok(const eo_participant_info *info, size_t n)
{
    for (size_t i = 0; info != NULL && i < n; i++)
        if (isnan(info[i].playtime) || isinf(info[i].playtime))
            return false;
    return true;
}

int eo_model_rate(const eo_model_ctx *ctx, const eo_participant *a, size_t na,
                  const eo_participant *b, size_t nb, eo_winner winner, double field,
                  int64_t at, double *p_a, eo_model_update *out)
{
    if (ctx == NULL || !eo__rate_args_ok(a, na, b, nb, winner, field))
        return EO_EINVAL;
    return ctx->ops->rate(ctx->impl, a, na, b, nb, winner, field, at, p_a, out);
}

int eo_model_rate_info(const eo_model_ctx *ctx, const eo_participant *a, size_t na,
                       const eo_participant *b, size_t nb, const eo_participant_info *info,
                       eo_winner winner, double field, int64_t at, double *p_a,
                       eo_model_update *out)
{
    if (info == NULL || ctx == NULL || ctx->ops->rate_info == NULL)
        return eo_model_rate(ctx, a, na, b, nb, winner, field, at, p_a, out);
    if (!eo__rate_args_ok(a, na, b, nb, winner, field) || !eo__playtimes_ok(info, na + nb))
        return EO_EINVAL;
    return ctx->ops->rate_info(ctx->impl, a, na, b, nb, info, winner, field, at, p_a, out);
}

double eo_model_member_weight(const eo_model_ctx *ctx, const eo_round *r, const eo_member *m,
                              double pool_length)
{
    if (ctx->ops->member_weight != NULL)
        return ctx->ops->member_weight(ctx->impl, r, m, pool_length);
    return eo_round_member_weight(r, m);
}

bool eo_model_wants_pool_length(const eo_model_ctx *ctx)
{
    return ctx->ops->wants_pool_length != NULL && ctx->ops->wants_pool_length(ctx->impl);
}

void eo_model_view(const eo_model_ctx *ctx, const void *st, int64_t now, eo_rating_view *out)
{
    ctx->ops->view(ctx->impl, st, now, out);
}

bool eo_model_integer_display(const eo_model_ctx *ctx)
{
    return ctx->ops->integer_display;
}

bool eo_model_uses_weights(const eo_model_ctx *ctx)
{
    return !ctx->ops->unweighted;
}

bool eo_model_has_deviation(const eo_model_ctx *ctx)
{
    return ctx->ops->has_deviation;
}

int eo_model_set(const eo_model_ctx *ctx, void *st, double mu, double sigma)
{
    if (ctx == NULL || st == NULL || !isfinite(mu) || isnan(sigma))
        return EO_EINVAL;
    return ctx->ops->set(ctx->impl, st, mu, sigma);
}

void eo_model_range_of(const eo_model_ctx *ctx, eo_model_range *out)
{
    memset(out, 0, sizeof *out);
    ctx->ops->range(ctx->impl, out);
}

/* "expected … in [lo, hi]" for the model's range, into err. */
static int range_fail(const eo_model_ctx *ctx, eo_round_error *err, const char *field,
                      const char *what, double lo, double hi)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message,
                 "outside the range of model \"%s\": expected %s in [%.17g, %.17g] "
                 "(docs/MODELS.md)",
                 ctx->ops->name, what, lo, hi);
    }
    return EO_ERANGE;
}

int eo_model_check_set(const eo_model_ctx *ctx, double mu, double sigma, eo_round_error *err)
{
    if (ctx == NULL)
        return EO_EINVAL;
    if (!isfinite(mu) || isnan(sigma)) {
        if (err != NULL) {
            snprintf(err->field, sizeof err->field, "%s", isfinite(mu) ? "sigma" : "rating");
            snprintf(err->message, sizeof err->message, "expected a finite number");
        }
        return EO_EINVAL;
    }
    eo_model_range r;
    eo_model_range_of(ctx, &r);
    if (!(mu >= r.set_lo && mu <= r.set_hi) || (r.integer && mu != floor(mu)))
        return range_fail(ctx, err, "rating", r.integer ? "an integer" : "a number", r.set_lo,
                          r.set_hi);
    if (ctx->ops->has_deviation && sigma >= 0.0 && !(sigma <= r.sigma_max))
        return range_fail(ctx, err, "sigma", "a number", 0.0, r.sigma_max);
    /* The model's own set on a scratch player: a range wider than what it takes is a bug, and
     * answered as such rather than logged. */
    uint64_t scratch[64];
    int rc = EO_ERANGE;
    if (ctx->ops->state_size <= sizeof scratch) {
        ctx->ops->player_init(ctx->impl, scratch);
        rc = ctx->ops->set(ctx->impl, scratch, mu, sigma);
        eo_model_player_free(ctx, scratch);
    }
    if (rc != 0)
        return range_fail(ctx, err, "rating", "a number", r.set_lo, r.set_hi);
    return 0;
}
