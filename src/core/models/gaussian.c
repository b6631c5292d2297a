/* The Gaussian models' shared adapter (gaussian.h): parameters, the prepared head and the ops
 * TrueSkill and Weng-Lin share. Their update rules are in trueskill.c and wenglin.c; the
 * Gaussian numerics (Φ, erfcx, v and w, the two-team P(A) and quality) in gauss.c. */
#include "core/models/gaussian.h"

#include "core/models/gauss.h"
#include "core/numeric.h"

bool eo__gaussian_params_ok(const eo__gaussian_params *p, double mu_max, double sigma_max)
{
    return eo__in(p->mu, -mu_max, mu_max) && eo__in(p->sigma, 1e-9, sigma_max) &&
           eo__in(p->beta, 1e-9, 1e6) && eo__in(p->tau, 0.0, 1e6) &&
           eo__in(p->display_k, 0.0, 1000.0) && p->visible_rounds >= 0 &&
           eo__in(p->visible_sigma, 0.0, sigma_max) && p->t_stale_days >= 0 &&
           p->t_stale_days <= 36500;
}

void eo__gaussian_params_read(const eo_model_config *c, size_t tail, eo__gaussian_params *p)
{
    p->mu = c->v[EO__GAUSSIAN_P_MU];
    p->sigma = c->v[EO__GAUSSIAN_P_SIGMA];
    p->beta = c->v[EO__GAUSSIAN_P_BETA];
    p->tau = c->v[EO__GAUSSIAN_P_TAU];
    p->display_k = c->v[tail];
    p->visible_rounds = eo__param_int(c, tail + 1);
    p->visible_sigma = c->v[tail + 2];
    p->t_stale_days = eo__param_int(c, tail + 3);
}

void eo__gaussian_impl_init(eo__gaussian_impl *g, const eo__gaussian_params *p,
                            const eo__gaussian_shape *shape)
{
    g->p = *p;
    g->shape = shape;
    g->beta2 = p->beta * p->beta;
    g->tau2 = p->tau * p->tau;
}

int eo__gaussian_set(double *mu_at, double *sigma_at, double mu, double sigma, double mu_max,
                     double sigma_max)
{
    if (!isfinite(mu) || isnan(sigma))
        return EO_EINVAL;
    if (!(fabs(mu) <= mu_max) || sigma > sigma_max)
        return EO_ERANGE; /* +inf σ too; never clamped: the caller learns the range */
    *mu_at = mu;
    if (sigma >= 0.0)
        *sigma_at = sigma;
    return 0;
}

/* ---- the shared ops ---- */

void eo__gaussian_player_init(const void *impl, void *st)
{
    const eo__gaussian_impl *g = impl;
    memset(st, 0, EO__GAUSSIAN_RECORD_SIZE);
    *eo__gaussian_f64(st, EO__GAUSSIAN_MU_AT) = g->p.mu;
    *eo__gaussian_f64(st, EO__GAUSSIAN_SIGMA_AT) = g->p.sigma;
}

void eo__gaussian_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    double sigma = eo__gaussian_get(st, EO__GAUSSIAN_SIGMA_AT);
    out->mu = eo__gaussian_get(st, EO__GAUSSIAN_MU_AT);
    out->var = sigma * sigma;
}

double eo__gaussian_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                            double field)
{
    const eo__gaussian_impl *g = impl;
    return eo__gauss_team_p(g->beta2, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

double eo__gaussian_quality(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                            double field)
{
    const eo__gaussian_impl *g = impl;
    return eo__gauss_team_quality(g->beta2, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

void eo__gaussian_fresh(eo_model_config *c)
{
    c->v[EO__GAUSSIAN_P_BETA] = 25.0 / 3.0;
}

double eo__gaussian_level(const void *impl, const eo_team_agg *a, const eo_team_agg *b)
{
    const eo__gaussian_impl *g = impl;
    return -(g->p.mu * (a->w - b->w));
}

void eo__gaussian_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const eo__gaussian_impl *g = impl;
    const eo__gaussian_shape *sh = g->shape;
    uint32_t rounds;
    int64_t ended;
    memcpy(&rounds, (const char *)st + sh->rounds, sizeof rounds);
    memcpy(&ended, (const char *)st + sh->ended, sizeof ended);
    memset(out, 0, sizeof *out);
    out->mu = eo__gaussian_get(st, EO__GAUSSIAN_MU_AT);
    out->sigma = eo__gaussian_get(st, EO__GAUSSIAN_SIGMA_AT);
    out->display = eo__gaussian_display(g->p.display_k, out->mu, out->sigma);
    out->rounds = rounds;
    out->visible =
        eo__gaussian_visible(g->p.visible_rounds, g->p.visible_sigma, rounds, out->sigma);
    out->stale = eo__stale(ended, now, g->p.t_stale_days);
    out->last_ended_at = ended;
}

int eo__gaussian_set_op(const void *impl, void *st, double mu, double sigma)
{
    const eo__gaussian_shape *sh = ((const eo__gaussian_impl *)impl)->shape;
    return eo__gaussian_set(eo__gaussian_f64(st, EO__GAUSSIAN_MU_AT),
                            eo__gaussian_f64(st, EO__GAUSSIAN_SIGMA_AT), mu, sigma, sh->mu_max,
                            sh->sigma_max);
}

void eo__gaussian_range(const void *impl, eo_model_range *out)
{
    const eo__gaussian_impl *g = impl;
    eo__range_window(g->p.mu, -g->shape->mu_max, g->shape->mu_max, out);
    out->sigma_max = g->shape->sigma_max;
}
