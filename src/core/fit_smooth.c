/* The smoother of the whole-history refit for the Gaussian models (eo_fit.h, EO_FIT_SMOOTH;
 * docs/MODELS.md, "Whole-history refit", "Smoothing the Gaussian models"). Written from the
 * idea of TrueSkill Through Time (Dangauthier, Herbrich, Minka, Graepel, NIPS 2007).
 *
 * Each player's skill is a chain over his appearances (rounds where his weight is above 0): the
 * prior, then N(0, τ²) added before every appearance, as the online model adds τ² before every
 * update. A round is one factor over its members' skills, and its message to each member is
 * found from the model's own update: the member's cavity (the chain's forward message times its
 * backward message at this appearance) is set as his state, the round is rated by the model with
 * τ = 0, and the message is the posterior divided by the cavity (natural parameters). A sweep
 * runs forward through the log, carrying each player's forward message in a running state, then
 * backward carrying the backward one; the messages met at every appearance are kept for the
 * other direction. On the first sweep the backward messages are flat, so the forward pass is
 * exactly online rating. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fit_internal.h"
#include "core/numeric.h"

int eo__fit_smooth_init(eo_fit *f)
{
    eo_model_config mc = *eo_model_ctx_config(f->model);
    int ti = eo_model_param_index(mc.model, "tau");
    if (ti < 0)
        return EO_EINVAL;
    f->drift2 = mc.v[ti] * mc.v[ti];
    mc.v[ti] = 0.0;
    int rc = eo_model_prepare(&mc, &f->rate, NULL);
    if (rc != 0)
        return rc;
    f->states = malloc(EO_PLAYERS_MAX * eo_model_state_size(f->rate));
    return f->states != NULL ? 0 : EO_ENOMEM;
}

void eo__fit_smooth_free(eo_fit *f)
{
    free(f->states);
    free(f->app);
    free(f->cp);
    free(f->ct);
    free(f->sd);
    free(f->seen);
    eo_model_release(f->rate);
}

/* Room for every appearance and player added so far; new appearances have a flat backward
 * message and the prior's mean, new players the prior's deviation. */
static int reserve(eo_fit *f)
{
    if (f->appcap < f->nm) {
        fit_app *q = realloc(f->app, f->nm * sizeof *q);
        if (q == NULL)
            return EO_ENOMEM;
        f->app = q;
        f->appcap = f->nm;
    }
    for (; f->napp < f->nm; f->napp++) {
        fit_app *a = &f->app[f->napp];
        a->fp = a->ft = a->bp = a->bt = 0.0;
        a->mean = f->cfg.prior_mean;
    }
    if (f->spcap < f->np) {
        double **arr[] = {&f->cp, &f->ct, &f->sd};
        for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
            double *q = realloc(*arr[i], f->np * sizeof(double));
            if (q == NULL)
                return EO_ENOMEM;
            *arr[i] = q;
        }
        uint8_t *q = realloc(f->seen, f->np);
        if (q == NULL)
            return EO_ENOMEM;
        f->seen = q;
        f->spcap = f->np;
    }
    for (; f->snp < f->np; f->snp++)
        f->sd[f->snp] = f->cfg.prior_sd;
    return 0;
}

/* Natural parameters of a Gaussian (precision p, precision × mean t) after adding the drift's
 * variance; a flat message (p = 0) stays flat. */
static void drift(const eo_fit *f, double *p, double *t)
{
    if (!(*p > 0.0)) {
        *p = *t = 0.0;
        return;
    }
    double var = 1.0 / *p + f->drift2;
    double mean = *t / *p;
    *p = 1.0 / var;
    *t = mean * *p;
}

/* What one visit of a round needs per member: its cavity in natural parameters. */
typedef struct cavity {
    double p[EO_PLAYERS_MAX], t[EO_PLAYERS_MAX];
} cavity;

/* Rates round @p fr with every member of weight > 0 at its cavity (the others at the model's
 * start: with weight 0 they carry no skill into the round) and writes each member's message,
 * posterior ÷ cavity, into @p lp, @p lt. A message without positive precision (the update did
 * not narrow the member, which the model's update with τ = 0 does only at the rounding level
 * or for vanishing weights) is flat. @p p_a receives the model's P(A wins) at the cavities.
 * The states are scratch (TrueSkill and Weng-Lin states own nothing, so init needs no free).
 * Returns 0, EO_ERANGE (a cavity the model refuses) or what eo_model_rate() returns. */
static int visit(eo_fit *f, const fit_round *fr, const cavity *cv, double *lp, double *lt,
                 double *p_a)
{
    size_t na = fr->na, n = na + fr->nb, size = eo_model_state_size(f->rate);
    const double *w = fr->woff == NO_WEIGHTS ? NULL : f->weight + fr->woff;
    eo_participant part[EO_PLAYERS_MAX];
    eo_model_update up[EO_PLAYERS_MAX];
    for (size_t i = 0; i < n; i++) {
        part[i].st = (char *)f->states + i * size;
        part[i].w = w != NULL ? w[i] : 1.0;
        eo_model_player_init(f->rate, part[i].st);
        if (part[i].w > 0.0 &&
            eo_model_set(f->rate, part[i].st, cv->t[i] / cv->p[i], sqrt(1.0 / cv->p[i])) != 0)
            return EO_ERANGE;
    }
    eo_winner win = fr->y2 == 2 ? EO_WIN_A : fr->y2 == 0 ? EO_WIN_B : EO_DRAW;
    int rc = eo_model_rate(f->rate, part, na, part + na, n - na, win, eo__fit_field(f, fr), 0,
                           p_a, up);
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < n; i++) {
        lp[i] = lt[i] = 0.0;
        if (!(part[i].w > 0.0))
            continue;
        double post = 1.0 / (up[i].sigma * up[i].sigma);
        double p = post - cv->p[i], t = up[i].mu * post - cv->t[i];
        if (p > 0.0 && isfinite(p) && isfinite(t)) { /* else a flat message */
            lp[i] = p;
            lt[i] = t;
        }
    }
    return 0;
}

/* ln P(outcome) of a round from the model's P(A wins), draws as half a win and half a loss,
 * the probability kept in [1e-15, 1 − 1e-15] as the metrics keep it. */
static double log_p(double p_a, uint8_t y2)
{
    double p = p_a < 1e-15 ? 1e-15 : p_a > 1.0 - 1e-15 ? 1.0 - 1e-15 : p_a;
    double y = 0.5 * y2;
    return (y > 0.0 ? y * eo__log(p) : 0.0) + (y < 1.0 ? (1.0 - y) * eo__log(1.0 - p) : 0.0);
}

/* Records the marginal at appearance @p a (cavity ⊗ message) and returns how far its mean
 * moved since the last visit. */
static double mark(fit_app *a, double cp, double ct, double lp, double lt, double *prec)
{
    *prec = cp + lp;
    double mean = (ct + lt) / *prec;
    double change = fabs(mean - a->mean);
    a->mean = mean;
    return change;
}

/* The forward pass: each player's running state starts at the prior with one drift; at each
 * appearance it is the forward message, stored for the backward pass, then times the round's
 * message, plus the drift. */
/* The larger change, a NaN counting as the largest (so it never reads as converged). */
static double worse(double big, double c)
{
    return c <= big ? big : isnan(c) ? INFINITY : c;
}

static int forward(eo_fit *f, double *big, double *ll)
{
    double p0 = 1.0 / (f->cfg.prior_sd * f->cfg.prior_sd), t0 = f->cfg.prior_mean * p0;
    drift(f, &p0, &t0);
    for (size_t i = 0; i < f->np; i++) {
        f->cp[i] = p0;
        f->ct[i] = t0;
    }
    cavity cv;
    double lp[EO_PLAYERS_MAX], lt[EO_PLAYERS_MAX];
    *ll = 0.0;
    for (size_t ri = 0; ri < f->nr; ri++) {
        const fit_round *fr = &f->r[ri];
        const uint32_t *m = f->member + fr->off;
        const double *w = fr->woff == NO_WEIGHTS ? NULL : f->weight + fr->woff;
        fit_app *a = f->app + fr->off;
        size_t n = (size_t)fr->na + fr->nb;
        for (size_t i = 0; i < n; i++) {
            a[i].fp = f->cp[m[i]];
            a[i].ft = f->ct[m[i]];
            cv.p[i] = a[i].fp + a[i].bp;
            cv.t[i] = a[i].ft + a[i].bt;
        }
        double p_a;
        int rc = visit(f, fr, &cv, lp, lt, &p_a);
        if (rc != 0)
            return rc;
        *ll += log_p(p_a, fr->y2);
        for (size_t i = 0; i < n; i++) {
            if (w != NULL && !(w[i] > 0.0))
                continue; /* weight 0: not on the chain */
            double prec;
            *big = worse(*big, mark(&a[i], cv.p[i], cv.t[i], lp[i], lt[i], &prec));
            double p = f->cp[m[i]] + lp[i], t = f->ct[m[i]] + lt[i];
            drift(f, &p, &t);
            f->cp[m[i]] = p;
            f->ct[m[i]] = t;
        }
    }
    return 0;
}

/* The backward pass: each player's running state starts flat after his last appearance; at each
 * appearance, going back, it is the backward message, stored for the next forward pass, then
 * times the round's message, plus the drift. The first appearance met (his last) gives his
 * result: the marginal there. */
static int backward(eo_fit *f, double *big)
{
    memset(f->cp, 0, f->np * sizeof *f->cp);
    memset(f->ct, 0, f->np * sizeof *f->ct);
    memset(f->seen, 0, f->np);
    cavity cv;
    double lp[EO_PLAYERS_MAX], lt[EO_PLAYERS_MAX];
    for (size_t ri = f->nr; ri-- > 0;) {
        const fit_round *fr = &f->r[ri];
        const uint32_t *m = f->member + fr->off;
        const double *w = fr->woff == NO_WEIGHTS ? NULL : f->weight + fr->woff;
        fit_app *a = f->app + fr->off;
        size_t n = (size_t)fr->na + fr->nb;
        for (size_t i = 0; i < n; i++) {
            a[i].bp = f->cp[m[i]];
            a[i].bt = f->ct[m[i]];
            cv.p[i] = a[i].fp + a[i].bp;
            cv.t[i] = a[i].ft + a[i].bt;
        }
        double p_a;
        int rc = visit(f, fr, &cv, lp, lt, &p_a);
        if (rc != 0)
            return rc;
        for (size_t i = 0; i < n; i++) {
            if (w != NULL && !(w[i] > 0.0))
                continue; /* weight 0: not on the chain */
            double prec;
            *big = worse(*big, mark(&a[i], cv.p[i], cv.t[i], lp[i], lt[i], &prec));
            uint32_t j = m[i];
            if (!f->seen[j]) {
                f->seen[j] = 1;
                f->s[j] = a[i].mean;
                f->sd[j] = sqrt(1.0 / prec);
            }
            double p = f->cp[j] + lp[i], t = f->ct[j] + lt[i];
            drift(f, &p, &t);
            f->cp[j] = p;
            f->ct[j] = t;
        }
    }
    return 0;
}

int eo__fit_smooth_sweep(eo_fit *f, eo_fit_sweep_stats *st)
{
    int rc = reserve(f);
    if (rc != 0)
        return rc;
    if (f->nk > 0 && !f->bias_fitted) {
        /* The map biases and π: the MAP fit's, to convergence, then held. */
        eo_fit_sweep_stats ms;
        memset(&ms, 0, sizeof ms);
        for (uint32_t k = 0; k < f->cfg.max_sweeps && !ms.converged; k++)
            eo__fit_map_sweep(f, &ms);
        st->passes += ms.passes;
        f->bias_fitted = true;
    }
    double big = 0.0, ll = 0.0;
    rc = forward(f, &big, &ll);
    if (rc == 0)
        rc = backward(f, &big);
    f->ready = false; /* f->s now holds the smoothed means, not the MAP's values */
    if (rc != 0)
        return rc;
    st->passes += 2;
    st->step = 1.0;
    st->max_change = big;
    st->objective = ll;
    st->logloss = -ll / (double)f->nr;
    st->converged = big < f->cfg.tol;
    return 0;
}
