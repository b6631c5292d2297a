/* A queue's recent matches for its figures (docs/MATCHMAKING.md "Queue figures"): the last
 * EO__MM_WINDOW matches that started (each with its P(A), quality and its tickets' waits), the
 * matches a batch adds before its commit, and their summary (wait quantiles by nearest rank,
 * means, shares). Pure: no locks, no clock; mm_metrics.c keeps them per queue and locks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/mm.h"

int eo__mm_stage_add(eo__mm_stage *s, const eo__mm_wmatch *m, const double *waits)
{
    eo__mm_wmatch *v = eo__grow(s->m, &s->capm, s->nm + 1, sizeof *v);
    if (v != NULL)
        s->m = v;
    double *w = v ? eo__grow(s->w, &s->capw, s->nw + m->nt, sizeof *w) : NULL;
    if (w == NULL)
        return EO_ENOMEM;
    s->w = w;
    s->m[s->nm++] = *m;
    memcpy(s->w + s->nw, waits, m->nt * sizeof *waits);
    s->nw += m->nt;
    return 0;
}

void eo__mm_stage_free(eo__mm_stage *s)
{
    free(s->m);
    free(s->w);
    memset(s, 0, sizeof *s);
}

/* Room for @p more waits behind the ones kept (the ring is unrolled into a larger one). */
static int wait_room(eo__mm_window *w, size_t more)
{
    if (w->nw + more <= w->capw)
        return 0;
    size_t cap = w->capw ? w->capw : 256;
    while (cap < w->nw + more)
        cap *= 2;
    double *v = malloc(cap * sizeof *v);
    if (v == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < w->nw; i++)
        v[i] = w->w[(w->hw + i) % w->capw];
    free(w->w);
    w->w = v;
    w->capw = cap;
    w->hw = 0;
    return 0;
}

int eo__mm_window_add(eo__mm_window *w, const eo__mm_wmatch *m, const double *waits)
{
    if (w->m == NULL && (w->m = calloc(EO__MM_WINDOW, sizeof *w->m)) == NULL)
        return EO_ENOMEM;
    if (w->nm == EO__MM_WINDOW) { /* the oldest match leaves, and its waits (the oldest) too */
        const eo__mm_wmatch *old = &w->m[w->hm];
        w->hw = w->capw ? (w->hw + old->nt) % w->capw : 0;
        w->nw -= old->nt;
        w->hm = (w->hm + 1) % EO__MM_WINDOW;
        w->nm--;
    }
    if (wait_room(w, m->nt) != 0)
        return EO_ENOMEM;
    w->m[(w->hm + w->nm++) % EO__MM_WINDOW] = *m;
    for (size_t i = 0; i < m->nt; i++)
        w->w[(w->hw + w->nw++) % w->capw] = waits[i];
    return 0;
}

void eo__mm_window_free(eo__mm_window *w)
{
    free(w->m);
    free(w->w);
    memset(w, 0, sizeof *w);
}

size_t eo__mm_window_waits(const eo__mm_window *w, double *out)
{
    for (size_t i = 0; i < w->nw; i++)
        out[i] = w->w[(w->hw + i) % w->capw];
    return w->nw;
}

double eo__quantile(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return NAN;
    double r = ceil(p * (double)n);
    size_t k = r < 1.0 ? 0 : (size_t)r - 1;
    return sorted[k < n ? k : n - 1];
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void eo__mm_window_matches(const eo__mm_window *w, eo__mm_summary *s)
{
    memset(s, 0, sizeof *s);
    double q = 0.0, dev = 0.0;
    size_t judged = 0, below = 0;
    for (size_t i = 0; i < w->nm; i++) {
        const eo__mm_wmatch *m = &w->m[(w->hm + i) % EO__MM_WINDOW];
        if (i == 0)
            s->since_ms = m->formed_ms;
        q += m->quality;
        dev += fabs(m->p_a - 0.5);
        judged += m->below >= 0;
        below += m->below > 0;
    }
    s->matches = w->nm;
    s->quality_mean = w->nm ? q / (double)w->nm : NAN;
    s->p_dev_mean = w->nm ? dev / (double)w->nm : NAN;
    s->quality_below = judged ? (double)below / (double)judged : NAN;
}

void eo__mm_summary_waits(double *waits, size_t n, eo__mm_summary *s)
{
    qsort(waits, n, sizeof *waits, by_value);
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += waits[i];
    s->tickets = n;
    s->wait_mean = n ? sum / (double)n : NAN;
    s->wait_p50 = eo__quantile(waits, n, 0.50);
    s->wait_p95 = eo__quantile(waits, n, 0.95);
    s->wait_max = n ? waits[n - 1] : NAN;
}
