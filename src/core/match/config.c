/* The queue's configuration as the matcher reads it: defaults, checks, and the widening
 * schedule at a wait (docs/MATCHMAKING.md, "Choosing windows and quality"). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/round_internal.h"
#include "evenodds/eo_match.h"

/* The default schedule: windows in rating points (Elo-like scales), |P - 0.5| and quality
 * relaxing as the wait grows. */
static const eo_match_step default_steps[] = {
    {0, 100.0, 0.0, 0.10, 0.50, 0},   {10, 200.0, 0.0, 0.15, 0.45, 0},
    {20, 400.0, 0.0, 0.20, 0.40, 0},  {30, 800.0, 0.0, 0.25, 0.35, 0},
    {45, 1600.0, 0.0, 0.30, 0.30, 0},
};

int eo_match_config_default(int team_size, eo_match_config *c)
{
    if (c == NULL || team_size < 1 || team_size > EO_MATCH_TEAM_MAX)
        return EO_EINVAL;
    memset(c, 0, sizeof *c);
    c->team_size = team_size;
    c->nsteps = (int)(sizeof default_steps / sizeof default_steps[0]);
    memcpy(c->steps, default_steps, sizeof default_steps);
    c->sigma_z = 1.0;
    c->calib_rounds = 10;
    c->calib_window = 200.0;
    return 0;
}

int eo_match_config_scale(eo_match_config *c, double factor)
{
    if (c == NULL || !isfinite(factor) || factor <= 0.0)
        return EO_EINVAL;
    eo_match_config t = *c;
    for (int i = 0; i < t.nsteps && i < EO_MATCH_STEPS_MAX; i++)
        t.steps[i].window *= factor;
    t.calib_window *= factor;
    t.calib_sigma *= factor;
    for (int i = 0; i < t.nsteps && i < EO_MATCH_STEPS_MAX; i++)
        if (!isfinite(t.steps[i].window))
            return EO_EINVAL;
    if (!isfinite(t.calib_window) || !isfinite(t.calib_sigma))
        return EO_EINVAL;
    *c = t;
    return 0;
}

static bool in(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

static int check_step(const eo_match_config *c, int i, eo_round_error *err)
{
    const eo_match_step *s = &c->steps[i];
    char f[64];
    if (i == 0 ? s->after != 0 : s->after <= c->steps[i - 1].after) {
        snprintf(f, sizeof f, "steps[%d].after", i);
        return eo__fail(err, f,
                        i == 0 ? "the first step starts at 0 s of waiting"
                               : "must be later than the previous step's");
    }
    const char *name = NULL, *rule = NULL;
    if (!in(s->window, 0.0, HUGE_VAL))
        name = "window", rule = "a finite number >= 0 (model mean units)";
    else if (!in(s->latency_ms, 0.0, HUGE_VAL))
        name = "latency_ms", rule = "a finite number of ms >= 0 (0: no limit)";
    else if (!in(s->p_max, 0.0, 0.5))
        name = "p_max", rule = "a number in [0, 0.5]";
    else if (!in(s->quality_min, 0.0, 1.0))
        name = "quality_min", rule = "a number in [0, 1]";
    else if (s->team_min < 0 || s->team_min > c->team_size)
        name = "team_min", rule = "an integer in [1, team_size] (0: team_size)";
    if (name == NULL)
        return 0;
    snprintf(f, sizeof f, "steps[%d].%s", i, name);
    return eo__fail(err, f, "must be %s", rule);
}

int eo_match_config_check(const eo_match_config *c, eo_round_error *err)
{
    if (c == NULL)
        return eo__fail(err, "config", "missing");
    if (c->team_size < 1 || c->team_size > EO_MATCH_TEAM_MAX)
        return eo__fail(err, "team_size", "must be an integer in [1, %d]", EO_MATCH_TEAM_MAX);
    if (c->nregions < 0 || c->nregions > EO_MATCH_REGIONS_MAX)
        return eo__fail(err, "nregions", "at most %d regions", EO_MATCH_REGIONS_MAX);
    if (c->nmaps < 0 || c->nmaps > EO_MATCH_MAPS_MAX)
        return eo__fail(err, "nmaps", "at most %d maps", EO_MATCH_MAPS_MAX);
    for (int i = 0; i < c->nmaps; i++)
        if (!isfinite(c->map_field[i])) {
            char f[64];
            snprintf(f, sizeof f, "map_field[%d]", i);
            return eo__fail(err, f, "must be a finite number");
        }
    if (c->nsteps < 1 || c->nsteps > EO_MATCH_STEPS_MAX)
        return eo__fail(err, "steps", "1 to %d steps", EO_MATCH_STEPS_MAX);
    for (int i = 0; i < c->nsteps; i++) {
        int rc = check_step(c, i, err);
        if (rc != 0)
            return rc;
    }
    if (!in(c->sigma_z, 0.0, HUGE_VAL))
        return eo__fail(err, "sigma_z", "must be a finite number >= 0");
    if (!in(c->calib_sigma, 0.0, HUGE_VAL))
        return eo__fail(err, "calib_sigma", "must be a finite number >= 0 (0: no rule)");
    if (!in(c->calib_window, 0.0, HUGE_VAL))
        return eo__fail(err, "calib_window", "must be a finite number >= 0");
    return 0;
}

static double lerp(double a, double b, double t)
{
    return a + (b - a) * t;
}

void eo_match_step_at(const eo_match_config *c, int64_t wait, eo_match_step *out)
{
    int i = 0;
    while (i + 1 < c->nsteps && c->steps[i + 1].after <= wait)
        i++;
    *out = c->steps[i];
    if (out->team_min == 0)
        out->team_min = c->team_size;
    if (!c->linear || i + 1 >= c->nsteps || wait <= out->after)
        return;
    const eo_match_step *n = &c->steps[i + 1];
    double t = (double)(wait - out->after) / (double)(n->after - out->after);
    out->window = lerp(out->window, n->window, t);
    out->p_max = lerp(out->p_max, n->p_max, t);
    out->quality_min = lerp(out->quality_min, n->quality_min, t);
    /* 0 is "no limit": interpolating towards or from it would invent a limit. */
    if (out->latency_ms > 0.0 && n->latency_ms > 0.0)
        out->latency_ms = lerp(out->latency_ms, n->latency_ms, t);
}

/* P(A) of two teams of k whose means differ by @p d, no variance, no field. */
static double p_at(const eo_model_ctx *m, int k, double d)
{
    eo_team_agg a = {0}, b = {0};
    eo_strength sa = {d, 0.0}, sb = {0.0, 0.0};
    for (int i = 0; i < k; i++) {
        eo_team_agg_add(&a, &sa, 1.0);
        eo_team_agg_add(&b, &sb, 1.0);
    }
    return eo_model_predict(m, &a, &b, 0.0);
}

double eo_match_model_scale(const eo_model_ctx *model, int team_size)
{
    if (model == NULL || team_size < 1 || team_size > EO_MATCH_TEAM_MAX)
        return 0.0;
    const double target = 0.7310585786300049; /* σ(1) */
    double lo = 0.0, hi = 1e-6;
    while (p_at(model, team_size, hi) < target) {
        lo = hi;
        hi *= 2.0;
        if (hi > 1e12)
            return 0.0;
    }
    for (int i = 0; i < 200 && lo < hi; i++) {
        double mid = lo + (hi - lo) / 2.0;
        if (mid <= lo || mid >= hi)
            break;
        *(p_at(model, team_size, mid) < target ? &lo : &hi) = mid;
    }
    return hi / (400.0 / 2.302585092994046);
}
