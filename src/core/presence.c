/* Presence as its own term (eo_presence.h; docs/MODELS.md "Presence"): the pool's parameters
 * and its running Fisher estimate of π, the worth of one unit of presence. */
#include "evenodds/eo_presence.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void eo_presence_config_default(eo_presence_config *c)
{
    c->on = false;
    c->prior = EO_PRESENCE_PRIOR_DEFAULT;
    c->strength = 1.0;
    c->partial = false;
    c->partial_prior = EO_PRESENCE_PRIOR_DEFAULT;
}

bool eo_presence_param_name(const char *name)
{
    return name != NULL && (strcmp(name, "presence") == 0 || strcmp(name, "presence_prior") == 0 ||
                            strcmp(name, "presence_strength") == 0 ||
                            strcmp(name, "partial") == 0 || strcmp(name, "partial_prior") == 0);
}

static int fail(eo_round_error *err, const char *field, const char *msg)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return EO_EINVAL;
}

/* Each value against its bounds, written as !(lo <= x <= hi) so that NaN fails too. */
static int check_value(const char *name, double x, eo_round_error *err)
{
    if (strcmp(name, "presence") == 0 && !(x == 0.0 || x == 1.0))
        return fail(err, name, "expected \"on\" or \"off\"");
    if (strcmp(name, "partial") == 0 && !(x == 0.0 || x == 1.0))
        return fail(err, name, "expected \"learn\" or \"time\"");
    if ((strcmp(name, "presence_prior") == 0 || strcmp(name, "partial_prior") == 0) &&
        !(x >= 0.0 && x <= 1e6))
        return fail(err, name, "expected a number of rounds from 0 to 1e6");
    if (strcmp(name, "presence_strength") == 0 && !(x >= 0.0 && x <= 1.0))
        return fail(err, name, "expected a number from 0 to 1");
    return 0;
}

int eo_presence_config_set_number(eo_presence_config *c, const char *name, double value,
                                  eo_round_error *err)
{
    if (c == NULL)
        return EO_EINVAL;
    if (!eo_presence_param_name(name))
        return EO_ENOTFOUND;
    int rc = check_value(name, value, err);
    if (rc != 0)
        return rc;
    if (strcmp(name, "presence") == 0)
        c->on = value == 1.0;
    else if (strcmp(name, "presence_prior") == 0)
        c->prior = value;
    else if (strcmp(name, "presence_strength") == 0)
        c->strength = value;
    else if (strcmp(name, "partial") == 0)
        c->partial = value == 1.0;
    else
        c->partial_prior = value;
    return 0;
}

int eo_presence_config_set(eo_presence_config *c, const char *name, const char *text,
                           eo_round_error *err)
{
    if (c == NULL || text == NULL)
        return EO_EINVAL;
    if (!eo_presence_param_name(name))
        return EO_ENOTFOUND;
    if (strcmp(name, "presence") == 0) {
        bool on = strcmp(text, "on") == 0;
        if (!on && strcmp(text, "off") != 0)
            return fail(err, name, "expected \"on\" or \"off\"");
        c->on = on;
        return 0;
    }
    if (strcmp(name, "partial") == 0) {
        bool learn = strcmp(text, "learn") == 0;
        if (!learn && strcmp(text, "time") != 0)
            return fail(err, name, "expected \"learn\" or \"time\"");
        c->partial = learn;
        return 0;
    }
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE)
        return fail(err, name, "expected a number");
    return eo_presence_config_set_number(c, name, x, err);
}

int eo_presence_config_check(const eo_presence_config *c, eo_round_error *err)
{
    if (c == NULL)
        return EO_EINVAL;
    if (check_value("presence_prior", c->prior, err) != 0 ||
        check_value("presence_strength", c->strength, err) != 0 ||
        check_value("partial_prior", c->partial_prior, err) != 0)
        return EO_EINVAL;
    return 0;
}

int eo_presence_observe(eo_presence *e, double delta, double p0, double g, eo_winner winner)
{
    if (e == NULL || (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW))
        return EO_EINVAL;
    double v = p0 * (1.0 - p0);
    /* Equal presence, a foregone round or a P the field does not move says nothing about π
     * (and could not be given its term). */
    if (delta == 0.0 || !isfinite(delta) || !(p0 > 0.0 && p0 < 1.0) || !(v > 0.0) || !(g > 0.0) ||
        !isfinite(g))
        return 0;
    double s = winner == EO_WIN_A ? 1.0 : winner == EO_WIN_B ? 0.0 : 0.5;
    e->rounds++;
    e->u += delta * (s - p0);
    e->info += delta * delta * v;
    return 0;
}

/* κ = prior·I/n makes the prior worth `prior` average informative rounds, so it needs no
 * scale per size of Δ (as the map bias's). */
double eo_presence_value(const eo_presence_config *c, const eo_presence *e, double *sd)
{
    if (c == NULL || e == NULL || e->rounds == 0 || !(e->info > 0.0)) {
        if (sd != NULL)
            *sd = INFINITY;
        return 0.0;
    }
    double prec = e->info + c->prior * e->info / (double)e->rounds;
    if (sd != NULL)
        *sd = 1.0 / sqrt(prec);
    return e->u / prec;
}

double eo_presence_field(const eo_presence_config *c, const eo_presence *e, double delta)
{
    if (c == NULL || !c->on || delta == 0.0)
        return 0.0;
    return c->strength * eo_presence_value(c, e, NULL) * delta;
}

double eo_presence_partial_share(const eo_presence_config *c, const eo_presence *e)
{
    if (c == NULL || e == NULL || !c->on || !c->partial || e->rounds == 0 || !(e->info > 0.0))
        return 0.0;
    double theta = e->u / (e->info + c->partial_prior * e->info / (double)e->rounds);
    return fmin(fmax(theta, 0.0), 1.0);
}
