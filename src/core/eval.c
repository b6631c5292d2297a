/* One-step-ahead evaluation accumulators: see eo_eval.h. These figures only report on ratings
 * and never feed them, so libm is fine here (as in metrics.c). */
#include "evenodds/eo_eval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/strmap.h"

/* A counted (non-draw) prediction; seq_won = (order among counted rounds << 1) | A won. */
typedef struct eval_rec {
    double p;
    uint64_t seq_won;
} eval_rec;

struct eo_eval {
    /* experience: rounds seen per player id (index from the map) */
    eo__strmap *ids;
    uint32_t *seen;
    size_t seen_cap;
    /* scored rounds */
    uint64_t scored, draws;
    double brier_half_sum;
    eo_metrics all;
    uint64_t bin_count[EO_EVAL_CALIB_BINS];
    double bin_p[EO_EVAL_CALIB_BINS];
    double bin_won[EO_EVAL_CALIB_BINS];
    eo_metrics exp[EO_EVAL_EXP_GROUPS];
    uint64_t exp_draws[EO_EVAL_EXP_GROUPS];
    eval_rec *rec;
    size_t nrec, rec_cap;
};

int eo_eval_create(eo_eval **out)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    eo_eval *ev = calloc(1, sizeof *ev);
    if (ev == NULL)
        return EO_ENOMEM;
    ev->ids = eo__strmap_create(0);
    if (ev->ids == NULL) {
        free(ev);
        return EO_ENOMEM;
    }
    *out = ev;
    return 0;
}

void eo_eval_destroy(eo_eval *ev)
{
    if (ev == NULL)
        return;
    eo__strmap_destroy(ev->ids);
    free(ev->seen);
    free(ev->rec);
    free(ev);
}

/* Room for @p n counters in ev->seen. 0 or EO_ENOMEM. */
static int seen_reserve(eo_eval *ev, size_t n)
{
    uint32_t *p = eo__grow(ev->seen, &ev->seen_cap, n, sizeof *p);
    if (p == NULL)
        return EO_ENOMEM;
    ev->seen = p;
    return 0;
}

int eo_eval_players(eo_eval *ev, const eo_round *r, double *mean)
{
    if (ev == NULL || r == NULL || mean == NULL || r->n[0] == 0 || r->n[1] == 0 ||
        r->team[0] == NULL || r->team[1] == NULL)
        return EO_EINVAL;
    size_t n = r->n[0] + r->n[1], bytes = 0;
    for (size_t i = 0; i < n; i++) {
        const eo_member *m = i < r->n[0] ? &r->team[0][i] : &r->team[1][i - r->n[0]];
        if (m->id == NULL)
            return EO_EINVAL;
        bytes += strlen(m->id) + 1;
    }
    /* Reserve first, so that nothing is counted when memory runs out. */
    size_t known = eo__strmap_size(ev->ids);
    if (eo__strmap_reserve(ev->ids, n, bytes) != 0 || seen_reserve(ev, known + n) != 0)
        return EO_ENOMEM;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        const eo_member *m = i < r->n[0] ? &r->team[0][i] : &r->team[1][i - r->n[0]];
        size_t len = strlen(m->id);
        uint64_t h = eo__strmap_hash(ev->ids, m->id, len);
        int64_t k = eo__strmap_find(ev->ids, m->id, len, h);
        if (k < 0) {
            k = eo__strmap_insert(ev->ids, m->id, len, h); /* reserved: cannot fail */
            ev->seen[k] = 0;
        }
        sum += ev->seen[k];
        if (ev->seen[k] < UINT32_MAX)
            ev->seen[k]++;
    }
    *mean = (double)sum / (double)n;
    return 0;
}

static int exp_group(double e)
{
    return e < EO_EVAL_EXP_MID ? 0 : e < EO_EVAL_EXP_HIGH ? 1 : 2;
}

int eo_eval_add(eo_eval *ev, double p_a, eo_winner winner, double experience)
{
    if (ev == NULL || !(p_a >= 0.0 && p_a <= 1.0) || !(experience >= 0.0) ||
        (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW))
        return EO_EINVAL;
    int g = exp_group(experience);
    if (winner == EO_DRAW) {
        double d = p_a - 0.5;
        ev->scored++;
        ev->draws++;
        ev->exp_draws[g]++;
        ev->brier_half_sum += d * d;
        return 0;
    }
    eval_rec *rec = eo__grow(ev->rec, &ev->rec_cap, ev->nrec + 1, sizeof *rec);
    if (rec == NULL)
        return EO_ENOMEM;
    ev->rec = rec;
    int a_won = winner == EO_WIN_A;
    ev->rec[ev->nrec].p = p_a;
    ev->rec[ev->nrec].seq_won = ((uint64_t)ev->nrec << 1) | (uint64_t)a_won;
    ev->nrec++;
    double d = p_a - (double)a_won;
    ev->scored++;
    ev->brier_half_sum += d * d;
    eo_metrics_add(&ev->all, p_a, a_won); /* cannot fail: checked above */
    eo_metrics_add(&ev->exp[g], p_a, a_won);
    int b = eo_eval_bin_index(p_a);
    ev->bin_count[b]++;
    ev->bin_p[b] += p_a;
    ev->bin_won[b] += (double)a_won;
    return 0;
}

/* Tightest first: |P − 0.5| ascending, then file order. */
static int cmp_tight(const void *x, const void *y)
{
    const eval_rec *a = x, *b = y;
    double ma = fabs(a->p - 0.5), mb = fabs(b->p - 0.5);
    if (ma != mb)
        return ma < mb ? -1 : 1;
    uint64_t sa = a->seq_won >> 1, sb = b->seq_won >> 1;
    return (sa > sb) - (sa < sb);
}

int eo_eval_get(const eo_eval *ev, eo_eval_result *out)
{
    if (ev == NULL || out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    size_t k = (ev->nrec + EO_EVAL_TIGHT_DIV - 1) / EO_EVAL_TIGHT_DIV;
    eo_metrics tight;
    eo_metrics_init(&tight);
    out->tight_margin = NAN;
    if (k > 0) {
        eval_rec *s = malloc(ev->nrec * sizeof *s);
        if (s == NULL)
            return EO_ENOMEM;
        memcpy(s, ev->rec, ev->nrec * sizeof *s);
        qsort(s, ev->nrec, sizeof *s, cmp_tight);
        for (size_t i = 0; i < k; i++)
            eo_metrics_add(&tight, s[i].p, (int)(s[i].seq_won & 1u));
        out->tight_margin = fabs(s[k - 1].p - 0.5);
        free(s);
    }
    eo_metrics_get(&tight, &out->tight);

    out->scored = ev->scored;
    out->draws = ev->draws;
    eo_metrics_get(&ev->all, &out->all);
    out->brier_draws_half = ev->scored ? ev->brier_half_sum / (double)ev->scored : NAN;
    double ece = 0.0;
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        eo_eval_bin *o = &out->calib[b];
        eo_eval_sums bin = {.m.count = ev->bin_count[b], .p = ev->bin_p[b],
                            .a_wins = ev->bin_won[b]};
        eo_eval_bin_of_sums(b, &bin, o);
        if (o->count > 0)
            ece += (double)o->count * fabs(o->mean_p - o->win_rate);
    }
    out->ece = ev->nrec ? ece / (double)ev->nrec : NAN;
    static const double bounds[EO_EVAL_EXP_GROUPS + 1] = {0.0, EO_EVAL_EXP_MID, EO_EVAL_EXP_HIGH,
                                                          INFINITY};
    for (int g = 0; g < EO_EVAL_EXP_GROUPS; g++) {
        out->exp[g].from = bounds[g];
        out->exp[g].to = bounds[g + 1];
        out->exp[g].draws = ev->exp_draws[g];
        eo_metrics_get(&ev->exp[g], &out->exp[g].m);
    }
    return 0;
}

int eo_eval_bin_index(double p_a)
{
    int b = (int)floor(p_a * EO_EVAL_CALIB_BINS);
    if (b >= EO_EVAL_CALIB_BINS)
        b = EO_EVAL_CALIB_BINS - 1;
    return b < 0 ? 0 : b;
}

int eo_eval_sums_round(eo_eval_sums *s, double p_a, eo_winner winner)
{
    if (!(p_a >= 0.0 && p_a <= 1.0) || (unsigned)winner > EO_DRAW)
        return EO_EINVAL;
    double margin = fabs(p_a - 0.5);
    s->rounds++;
    s->margin += margin;
    s->stomps += margin > EO_EVAL_STOMP_MARGIN;
    if (winner == EO_DRAW) {
        s->draws++;
        return 0;
    }
    eo_metrics_add(&s->m, p_a, winner == EO_WIN_A); /* cannot fail: checked above */
    s->p += p_a;
    s->a_wins += winner == EO_WIN_A;
    return 0;
}

void eo_eval_sums_member(eo_eval_sums *s, double rating, double delta)
{
    s->members++;
    s->rating += rating;
    s->rating2 += rating * rating;
    s->delta += delta;
}

void eo_eval_sums_add(eo_eval_sums *to, const eo_eval_sums *from)
{
    to->rounds += from->rounds;
    to->draws += from->draws;
    to->stomps += from->stomps;
    to->margin += from->margin;
    to->m.count += from->m.count;
    to->m.logloss_sum += from->m.logloss_sum;
    to->m.brier_sum += from->m.brier_sum;
    to->m.correct += from->m.correct;
    to->p += from->p;
    to->a_wins += from->a_wins;
    to->members += from->members;
    to->rating += from->rating;
    to->rating2 += from->rating2;
    to->delta += from->delta;
}

void eo_eval_span_of(const eo_eval_sums *s, eo_eval_span *out)
{
    out->rounds = s->rounds;
    out->draws = s->draws;
    eo_metrics_get(&s->m, &out->all);
    double n = (double)s->rounds;
    out->margin = s->rounds ? s->margin / n : NAN;
    out->stomp_share = s->rounds ? (double)s->stomps / n : NAN;
    double k = (double)s->members;
    out->rating_mean = s->members ? s->rating / k : NAN;
    /* E[x²] − E[x]² can dip below 0 by rounding when every value is equal. */
    double var = s->members ? s->rating2 / k - out->rating_mean * out->rating_mean : NAN;
    out->rating_sd = s->members ? sqrt(var > 0.0 ? var : 0.0) : NAN;
    out->delta_mean = s->members ? s->delta / k : NAN;
}

void eo_eval_bin_of_sums(int b, const eo_eval_sums *s, eo_eval_bin *out)
{
    out->from = (double)b / EO_EVAL_CALIB_BINS;
    out->to = (double)(b + 1) / EO_EVAL_CALIB_BINS;
    out->count = s->m.count;
    double c = (double)s->m.count;
    out->mean_p = s->m.count ? s->p / c : NAN;
    out->win_rate = s->m.count ? s->a_wins / c : NAN;
}
