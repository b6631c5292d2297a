/* The values a refit sets from a fit (eo_fit.h, eo_refit_values()): the fitted means and
 * deviations as the pool's model accepts them, so that the admin set of every value succeeds
 * (docs/MODELS.md "Whole-history refit"). */
#include "evenodds/eo_fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static bool accepted(const eo_model_ctx *m, void *st, double mean, double sigma)
{
    eo_model_player_init(m, st);
    int rc = eo_model_set(m, st, mean, sigma);
    eo_model_player_free(m, st);
    return rc == 0;
}

/* The closest value to @p want the model accepts, between @p ok (accepted) and @p want, by
 * bisection (on whole numbers for integer models). A fitted skill rarely leaves the model's
 * range; when it does, the admin set would refuse it, so it is brought to the edge. */
static double edge(const eo_model_ctx *m, void *st, bool integer, double ok, double want,
                   bool is_sigma, double other)
{
    for (int i = 0; i < 200 && ok != want; i++) {
        double mid = ok + (want - ok) / 2;
        if (integer)
            mid = ok < want ? floor(mid) : ceil(mid);
        if (mid == ok || mid == want)
            break;
        if (is_sigma ? accepted(m, st, other, mid) : accepted(m, st, mid, other))
            ok = mid;
        else
            want = mid;
    }
    return ok;
}

int eo_refit_values(const eo_fit *f, const eo_pool_config *cfg, eo_refit_value **out,
                    size_t *n)
{
    if (f == NULL || cfg == NULL || out == NULL || n == NULL)
        return EO_EINVAL;
    eo_pool *scratch_pool = NULL;
    int rc = eo_pool_create(cfg, &scratch_pool);
    if (rc != 0)
        return rc;
    const eo_model_ctx *m = eo_pool_model(scratch_pool);
    bool integer = eo_model_integer_display(m);
    bool dev = eo_model_has_deviation(m);
    eo_rating_view start;
    eo_pool_new_player_view(scratch_pool, 0, &start);
    size_t np = eo_fit_player_count(f);
    eo_refit_value *v = np ? calloc(np, sizeof *v) : NULL;
    void *st = malloc(eo_model_state_size(m));
    if ((np && v == NULL) || st == NULL) {
        free(v);
        free(st);
        eo_pool_destroy(scratch_pool);
        return EO_ENOMEM;
    }
    for (size_t i = 0; i < np; i++) {
        eo_fit_player p;
        (void)eo_fit_player_get(f, i, &p);
        snprintf(v[i].id, sizeof v[i].id, "%s", p.id);
        double mean = integer ? nearbyint(p.skill) : p.skill;
        double sigma = dev && isfinite(p.sigma) ? p.sigma : -1.0;
        if (sigma >= 0 && !accepted(m, st, start.mu, sigma))
            sigma = edge(m, st, false, start.sigma, sigma, true, start.mu);
        if (!isfinite(mean))
            mean = start.mu;
        if (!accepted(m, st, mean, sigma))
            mean = edge(m, st, integer, start.mu, mean, false, sigma);
        v[i].mean = mean;
        v[i].sigma = sigma;
    }
    free(st);
    eo_pool_destroy(scratch_pool);
    *out = v;
    *n = np;
    return 0;
}
