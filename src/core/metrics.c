/* Log loss, Brier and accuracy accumulators: see eo_metrics.h. These figures only report on
 * ratings and never feed them, so libm's log is fine here. */
#include "evenodds/eo_metrics.h"

#include <math.h>
#include <string.h>

void eo_metrics_init(eo_metrics *m)
{
    memset(m, 0, sizeof *m);
}

int eo_metrics_add(eo_metrics *m, double p_a, int a_won)
{
    if (!(p_a >= 0.0 && p_a <= 1.0) || (a_won != 0 && a_won != 1))
        return EO_EINVAL;
    double p_hit = a_won ? p_a : 1.0 - p_a;
    if (p_hit < EO_METRICS_P_EPS)
        p_hit = EO_METRICS_P_EPS;
    if (p_hit > 1.0 - EO_METRICS_P_EPS)
        p_hit = 1.0 - EO_METRICS_P_EPS;
    double d = p_a - (double)a_won;
    m->count++;
    m->logloss_sum += -log(p_hit);
    m->brier_sum += d * d;
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
