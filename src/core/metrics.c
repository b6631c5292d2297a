/* Log loss, Brier and accuracy accumulators: see eo_metrics.h. These figures only report on
 * ratings and never feed them, so libm's log is fine here. */
#include "evenodds/eo_metrics.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

void eo_metrics_init(eo_metrics *m)
{
    memset(m, 0, sizeof *m);
}

int eo_metrics_loss(double p_a, int a_won, double *logloss, double *brier)
{
    if (!(p_a >= 0.0 && p_a <= 1.0) || (a_won != 0 && a_won != 1))
        return EO_EINVAL;
    double p_hit = a_won ? p_a : 1.0 - p_a;
    if (p_hit < EO_METRICS_P_EPS)
        p_hit = EO_METRICS_P_EPS;
    if (p_hit > 1.0 - EO_METRICS_P_EPS)
        p_hit = 1.0 - EO_METRICS_P_EPS;
    double d = p_a - (double)a_won;
    *logloss = -log(p_hit);
    *brier = d * d;
    return 0;
}

int eo_metrics_add(eo_metrics *m, double p_a, int a_won)
{
    double ll, br;
    if (eo_metrics_loss(p_a, a_won, &ll, &br) != 0)
        return EO_EINVAL;
    m->count++;
    m->logloss_sum += ll;
    m->brier_sum += br;
    if (p_a == 0.5)
        m->correct += 0.5;
    else if ((p_a > 0.5) == (a_won == 1))
        m->correct += 1.0;
    return 0;
}

void eo_metrics_get(const eo_metrics *m, eo_metrics_result *out)
{
    out->count = m->count;
    if (m->count == 0) {
        out->logloss = NAN;
        out->brier = NAN;
        out->accuracy = NAN;
        return;
    }
    double n = (double)m->count;
    out->logloss = m->logloss_sum / n;
    out->brier = m->brier_sum / n;
    out->accuracy = m->correct / n;
}

void eo_mean_se_add(eo_mean_se *s, double x)
{
    s->n++;
    double d = x - s->mean;
    s->mean += d / (double)s->n;
    s->m2 += d * (x - s->mean);
}

double eo_mean_se_error(const eo_mean_se *s)
{
    if (s->n < 2)
        return NAN;
    double var = s->m2 / (double)(s->n - 1);
    return sqrt(var > 0.0 ? var : 0.0) / sqrt((double)s->n);
}

int eo_paired_add(eo_paired *c, double p_a, double p_b, int a_won)
{
    double lla, bra, llb, brb;
    if (eo_metrics_loss(p_a, a_won, &lla, &bra) != 0 ||
        eo_metrics_loss(p_b, a_won, &llb, &brb) != 0)
        return EO_EINVAL;
    (void)eo_metrics_add(&c->a, p_a, a_won);
    (void)eo_metrics_add(&c->b, p_b, a_won);
    eo_mean_se_add(&c->logloss, llb - lla);
    eo_mean_se_add(&c->brier, brb - bra);
    return 0;
}

void eo_paired_get(const eo_paired *c, eo_paired_result *out)
{
    eo_metrics_get(&c->a, &out->a);
    eo_metrics_get(&c->b, &out->b);
    bool any = c->logloss.n > 0;
    out->logloss_diff = any ? c->logloss.mean : NAN;
    out->brier_diff = any ? c->brier.mean : NAN;
    out->logloss_se = eo_mean_se_error(&c->logloss);
    out->brier_se = eo_mean_se_error(&c->brier);
}
