/* Glicko-2 with per-player rating periods and the composite-opponent team method; the formulas
 * are Glickman's steps 1-8 ("Example of the Glicko-2 system"), the team method Williams's
 * (2013). docs/MODELS.md ("Glicko-2") states every choice; eo_glicko2.h the contracts. */
#include "evenodds/eo_glicko2.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/models/glicko2_internal.h"
#include "core/models/model_internal.h"
#include "core/numeric.h"

#define PI2 9.8696044010893586188 /* π² */

/* Below this Σ w g² E(1 − E) a period carries no information (every E is 0 or 1 to 100 digits)
 * and v = 1/s1 would overflow the volatility iteration: σ is kept. */
#define S1_MIN 1e-100

/* Bound on step 5's iterations. The safeguarded Newton iteration below takes one or two steps
 * per update in replays and at most 32 on 2,000,000 random extreme inputs (the ranges of
 * test_glicko2.c's volatility_random); a bisection of a bracket at most ~700 wide down to
 * 1e-12 takes 50. */
#define VOL_IT_MAX 200

/* Steps up to this size update e^x by a Taylor polynomial instead of an exp (see w_step). */
#define TAYLOR_MAX 1e-3

void eo_glicko2_params_default(eo_glicko2_params *p)
{
    p->r0 = 1500.0;
    p->rd0 = 350.0;
    p->vol0 = 0.06;
    p->tau = 0.5;
    p->epsilon = 1e-6;
    p->rd_max = 350.0;
    p->period = 0;
    p->visible_rounds = 0;
    p->visible_rd = 0.0;
    p->t_stale_days = 30;
    p->team_expectation = 0;
}

int eo_glicko2_params_check(const eo_glicko2_params *p)
{
    if (p == NULL || !eo__in(p->r0, EO_GLICKO2_RATING_MIN, EO_GLICKO2_RATING_MAX) ||
        !eo__in(p->rd_max, 1.0, EO_GLICKO2_RD_LIMIT) || !eo__in(p->rd0, 0.0, p->rd_max) ||
        !eo__in(p->vol0, 1e-6, 10.0) || !eo__in(p->tau, 0.01, 10.0) ||
        !eo__in(p->epsilon, 1e-12, 1.0) || p->period < 0 || p->period > ((int64_t)1 << 40) ||
        p->visible_rounds < 0 || !eo__in(p->visible_rd, 0.0, EO_GLICKO2_RD_LIMIT) ||
        p->t_stale_days < 0 || (p->team_expectation != 0 && p->team_expectation != 1))
        return EO_EINVAL;
    return 0;
}

void eo_glicko2_player_init(eo_glicko2_player *pl, const eo_glicko2_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->mu = eo_glicko2_mu(p->r0);
    pl->phi = p->rd0 / EO_GLICKO2_SCALE;
    pl->vol = p->vol0;
    pl->ln_vol2 = eo__log(p->vol0 * p->vol0);
    pl->period = EO_GLICKO2_NO_PERIOD;
}

double eo_glicko2_mu(double rating)
{
    return (rating - 1500.0) / EO_GLICKO2_SCALE;
}

double eo_glicko2_rating(double mu)
{
    return EO_GLICKO2_SCALE * mu + 1500.0;
}

double eo_glicko2_g(double phi)
{
    return 1.0 / sqrt(1.0 + 3.0 * phi * phi / PI2);
}

/* The logistic E = 1 / (1 + e^-x) and its complement 1 - E, both from t = e^-|x| in (0, 1]
 * without cancellation: for x >= 0, E = 1/(1 + t) and 1 - E = t/(1 + t); for x < 0 the two
 * swap. *e1 = E, *e0 = 1 - E. Nothing overflows (t <= 1), and the exp's argument is never
 * positive, so its branch on the sign always goes the same way (a coin flip here otherwise).
 * logistic_t() takes t = eo__exp(-fabs(x)) computed by the caller. */
static inline void logistic_t(double x, double t, double *e1, double *e0)
{
    double r = 1.0 / (1.0 + t), rt = t * r;
    bool pos = x >= 0.0;
    *e1 = pos ? r : rt;
    *e0 = pos ? rt : r;
}

static inline void logistic(double x, double *e1, double *e0)
{
    logistic_t(x, eo__exp(-fabs(x)), e1, e0);
}

double eo_glicko2_e(double mu, double mu_j, double phi_j, double field)
{
    double e1, e0;
    logistic(eo_glicko2_g(phi_j) * (mu - mu_j) + field, &e1, &e0);
    return e1;
}

/* Step 5 solves f(x) = h(x) − (x − a)/τ² = 0 with h = e^x (D − e^x) / (2 (P + e^x)²),
 * a = ln σ², P = φ² + v, D = Δ² − φ² − v. The iteration works on G = f (P + e^x)² / P², which
 * has the same sign everywhere and the same root, in w = e^x / P and D/P:
 *   G  = w (D/P − w)/2 − (x − a)(1 + w)²/τ²,
 *   G' = w (D/P − 2w)/2 − (1 + w)(1 + w + 2w (x − a))/τ²,
 * polynomials in w: no division per evaluation, and for the largest inputs (v up to 1e100,
 * Δ² up to 1e202) every term stays below 1e205. */
static inline double vol_g(double x, double w, double a, double dn, double inv_tau2, double *gd)
{
    double w1 = 1.0 + w, t = x - a;
    *gd = 0.5 * w * (dn - 2.0 * w) - w1 * (w1 + 2.0 * w * t) * inv_tau2;
    return 0.5 * w * (dn - w) - t * (w1 * w1) * inv_tau2;
}

/* e^(x + s)/P from w = e^x/P: for |s| <= TAYLOR_MAX, w times 1 + s + s²/2 + s³/6 + s⁴/24 (the
 * truncation, < s⁵/120 < 1e-17, is below the rounding of the products), else an exp times
 * 1/P. Only + − × ÷ either way: the same bits on every machine. */
static inline double w_step(double w, double xn, double s, double ip)
{
    if (fabs(s) <= TAYLOR_MAX)
        return w * (1.0 + s * (1.0 + s * (0.5 + s * (1.0 / 6.0 + s * (1.0 / 24.0)))));
    return eo__exp(xn) * ip;
}

/* One player's step-5 iteration: a safeguarded Newton iteration on G from x = a, where
 * e^a = σ² is known. Glickman's paper uses the Illinois iteration on f; this one finds the
 * root next to a, which is the one Illinois found in every case compared (docs/MODELS.md,
 * "Numerics", has why and the measurements).
 *
 * The bracket: h > −1/2 (D >= −P), so f(a − τ²) >= 1/2 > 0; for D > 0, h <= D/(8P), so
 * f(a + τ² D/(8P)) <= 0, and at x = ln D h = 0, f = −(ln D − a)/τ². The sign of f(a)
 * tells the side of a the root is on: [a − τ², a] when f(a) < 0, [a, min(a + τ² D/(8P),
 * ln D)] when f(a) > 0 (that upper end is only computed when a bisection needs it: it takes a
 * log). Each step is Newton's x − G/G' when G' < 0, the new point lies in the bracket and the
 * step is at most half the step before last (the "rtsafe" safeguard of Numerical Recipes);
 * else it bisects the bracket. Every evaluation narrows the bracket by the sign of G. The
 * iteration stops after a step of at most eps (a Newton step s leaves an error of order
 * |G''/(2G')| s², far below eps; a bisection step s leaves the root within s), when G is
 * exactly 0, or after VOL_IT_MAX steps. */
typedef struct vol_it {
    double x, w;      /* the current point, e^x / P */
    double g, gd;     /* G(x), G'(x) */
    double lo, hi;    /* the bracket */
    double dx, dxold; /* the last step and the one before */
    double a, dn, p, ip; /* ln σ², D/P, P, 1/P */
    int it;
} vol_it;

/* Sets up the iteration from x = a; false when G(a) is exactly 0 (a is the root). From
 * k = 1 + φ² s1 and c = 1/(s1 k), one division: v = 1/s1, P = k² c, 1/P = s1² c and
 * D/P = Δ²/P − 1 = s2² c − 1. */
static inline bool vol_init(vol_it *z, const eo_glicko2_player *y, double tau2,
                            double inv_tau2)
{
    double k = 1.0 + y->phi * y->phi * y->s1, c = 1.0 / (y->s1 * k);
    z->p = k * k * c;
    z->ip = y->s1 * y->s1 * c;
    z->dn = y->s2 * y->s2 * c - 1.0;
    z->a = z->x = y->ln_vol2;
    z->w = y->vol * y->vol * z->ip;
    z->g = vol_g(z->x, z->w, z->a, z->dn, inv_tau2, &z->gd);
    bool up = z->g > 0.0;
    z->lo = up ? z->a : z->a - tau2;
    z->hi = up ? INFINITY : z->a;
    z->dx = z->dxold = INFINITY;
    z->it = 0;
    return z->g != 0.0;
}

/* One step (see vol_it); false when the iteration has stopped. */
static inline bool vol_step(vol_it *z, double tau2, double inv_tau2, double eps)
{
    double s = -z->g / z->gd, xn = z->x + s;
    if (!(z->gd < 0.0 && xn >= z->lo && xn <= z->hi && fabs(s) <= 0.5 * fabs(z->dxold))) {
        if (z->hi == INFINITY) {
            double b = z->a + tau2 * (0.125 * z->dn), lnd = eo__log(z->dn * z->p);
            z->hi = b < lnd ? b : lnd;
        }
        xn = z->lo + 0.5 * (z->hi - z->lo);
        s = xn - z->x;
    }
    z->dxold = z->dx;
    z->dx = s;
    z->w = w_step(z->w, xn, s, z->ip);
    z->x = xn;
    if (fabs(s) <= eps || ++z->it >= VOL_IT_MAX)
        return false;
    z->g = vol_g(xn, z->w, z->a, z->dn, inv_tau2, &z->gd);
    if (z->g > 0.0)
        z->lo = xn;
    else if (z->g < 0.0)
        z->hi = xn;
    return z->g != 0.0;
}

/* Two lanes of doubles (GCC and Clang vector extensions; SSE2 on x86-64, plain code where the
 * target has no such unit). Each lane's + − × ÷ is the IEEE operation on that lane: the same
 * bits as the scalar code. */
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2m __attribute__((vector_size(16))); /* comparison results: all ones or 0 */

static inline v2d vsel(v2m m, v2d x, v2d y) /* m ? x : y, lane by lane */
{
    return (v2d)(((v2m)x & m) | ((v2m)y & ~m));
}

static inline v2d vabs(v2d x)
{
    return (v2d)((v2m)x & (v2m){INT64_MAX, INT64_MAX});
}

static inline v2d vtaylor(v2d w, v2d s) /* w_step()'s Taylor branch */
{
    return w * (1.0 + s * (1.0 + s * (0.5 + s * (1.0 / 6.0 + s * (1.0 / 24.0)))));
}

/* vol_init() and vol_step() for two players at once, written out for the case nearly every
 * per-round update takes: the first Newton step from a is accepted and small enough for the
 * Taylor update, and either it is at most eps (stop) or the second one is accepted, small
 * enough for the Taylor update, and at most eps (stop). The same operations in the same order
 * as vol_init(), vol_g() and vol_step(), so the same bits; no branches. In two stages, each run
 * over all the pairs before the next (vol_fast1: up to the first step; vol_fast2: the second),
 * so that the processor overlaps the pairs' chains of dependent divisions. ok[j] is false when
 * the general iteration would have gone another way for lane j (its results are then not
 * used). At x = a, vol_g's x − a is 0 and its terms in it drop out exactly (w is finite). */
typedef struct vol_pair {
    v2d x1, w1, lo, hi, a, dn, p; /* after the first step */
    v2m good, stop1;              /* the fast path holds so far; the first step stopped */
} vol_pair;

static inline void vol_fast1(vol_pair *z, const eo_glicko2_player *y0,
                             const eo_glicko2_player *y1, double tau2, double inv_tau2,
                             double eps)
{
    v2d phi = {y0->phi, y1->phi}, vol = {y0->vol, y1->vol}, a = {y0->ln_vol2, y1->ln_vol2};
    v2d s1 = {y0->s1, y1->s1}, s2 = {y0->s2, y1->s2};
    v2d k = 1.0 + phi * phi * s1, c = 1.0 / (s1 * k);
    v2d p = k * k * c, ip = s1 * s1 * c, dn = s2 * s2 * c - 1.0;
    v2d w0 = vol * vol * ip, w01 = 1.0 + w0;
    v2d gd0 = 0.5 * w0 * (dn - 2.0 * w0) - w01 * w01 * inv_tau2;
    v2d g0 = 0.5 * w0 * (dn - w0);
    v2m up = g0 > 0.0;
    v2d lo = vsel(up, a, a - tau2), hi = vsel(up, (v2d){INFINITY, INFINITY}, a);
    v2d st0 = -g0 / gd0, x1 = a + st0;
    z->good = (s1 >= S1_MIN) & (g0 != 0.0) & (gd0 < 0.0) & (x1 >= lo) & (x1 <= hi) &
              (vabs(st0) <= TAYLOR_MAX);
    z->w1 = vtaylor(w0, st0);
    z->stop1 = vabs(st0) <= eps;
    z->x1 = x1;
    z->lo = lo;
    z->hi = hi;
    z->a = a;
    z->dn = dn;
    z->p = p;
}

static inline void vol_fast2(const vol_pair *z, double inv_tau2, double eps, double *x_out,
                             double *ex_out, bool *ok)
{
    v2d x1 = z->x1, w1 = z->w1, a = z->a, dn = z->dn;
    v2d w11 = 1.0 + w1, t = x1 - a;
    v2d gd1 = 0.5 * w1 * (dn - 2.0 * w1) - w11 * (w11 + 2.0 * w1 * t) * inv_tau2;
    v2d g1 = 0.5 * w1 * (dn - w1) - t * (w11 * w11) * inv_tau2;
    v2d lo = vsel(g1 > 0.0, x1, z->lo);
    v2d hi = vsel(g1 < 0.0, x1, z->hi);
    v2d st1 = -g1 / gd1, x2 = x1 + st1;
    v2d w2 = vtaylor(w1, st1);
    v2m good2 = (g1 != 0.0) & (gd1 < 0.0) & (x2 >= lo) & (x2 <= hi) & (vabs(st1) <= eps) &
                (vabs(st1) <= TAYLOR_MAX);
    v2m good = z->good & (z->stop1 | good2);
    v2d x = vsel(z->stop1, x1, x2), ex = vsel(z->stop1, w1, w2) * z->p;
    for (int j = 0; j < 2; j++) {
        x_out[j] = x[j];
        ex_out[j] = ex[j];
        ok[j] = good[j] != 0;
    }
}

/* Step 5 for the n <= EO_PLAYERS_MAX players in[] (only read: their phi, vol, ln_vol2, s1
 * and s2): σ'² (ex_out) and ln σ'² (ln_out) of each. A period with Σ w g² E(1 − E) < S1_MIN
 * carries no information: σ is kept (σ² and ln σ² given back). First the fast path
 * (vol_fast1, vol_fast2) for all, two at a time; the players it does not settle then run the
 * general iteration as a wavefront:
 * each pass makes one step for every player still iterating. Either way each player's result
 * is that of vol_init() and vol_step() and does not depend on the others. Returns how many
 * players the fast path settled (for tests). */
static size_t vol_solve(double tau, double eps, size_t n, eo_glicko2_player *const *in,
                      double *ex_out, double *ln_out)
{
    double tau2 = tau * tau, inv_tau2 = 1.0 / tau2;
    uint16_t slow[EO_PLAYERS_MAX];
    size_t nslow = 0;
    vol_pair zp[EO_PLAYERS_MAX / 2];
    for (size_t i = 0; i < n; i += 2) /* an odd last player pairs with itself */
        vol_fast1(&zp[i / 2], in[i], in[i + 1 < n ? i + 1 : i], tau2, inv_tau2, eps);
    for (size_t i = 0; i < n; i += 2) {
        double x[2], ex[2];
        bool ok[2];
        vol_fast2(&zp[i / 2], inv_tau2, eps, x, ex, ok);
        for (size_t j = 0; j < 2 && i + j < n; j++) {
            ln_out[i + j] = x[j];
            ex_out[i + j] = ex[j];
            slow[nslow] = (uint16_t)(i + j);
            nslow += !ok[j];
        }
    }
    size_t nfast = n - nslow;
    if (nslow > 0) {
        vol_it st[EO_PLAYERS_MAX];
        uint16_t live[EO_PLAYERS_MAX];
        size_t nlive = 0, m = 0;
        for (size_t k = 0; k < nslow; k++) {
            const eo_glicko2_player *y = in[slow[k]];
            if (y->s1 >= S1_MIN) {
                slow[m++] = slow[k];
            } else {
                ex_out[slow[k]] = y->vol * y->vol;
                ln_out[slow[k]] = y->ln_vol2;
            }
        }
        nslow = m;
        for (size_t k = 0; k < nslow; k++) {
            live[nlive] = slow[k];
            nlive += vol_init(&st[slow[k]], in[slow[k]], tau2, inv_tau2);
        }
        while (nlive > 0) {
            m = 0;
            for (size_t k = 0; k < nlive; k++) {
                live[m] = live[k];
                m += vol_step(&st[live[k]], tau2, inv_tau2, eps);
            }
            nlive = m;
        }
        for (size_t k = 0; k < nslow; k++) {
            ex_out[slow[k]] = st[slow[k]].w * st[slow[k]].p;
            ln_out[slow[k]] = st[slow[k]].x;
        }
    }
    return nfast;
}

size_t eo__glicko2_vol_solve(double tau, double eps, size_t n, eo_glicko2_player *const *in,
                             double *ex_out, double *ln_out)
{
    return vol_solve(tau, eps, n, in, ex_out, ln_out);
}

void eo__glicko2_vol_scalar(double tau, double eps, const eo_glicko2_player *y, double *ex_out,
                            double *ln_out)
{
    if (!(y->s1 >= S1_MIN)) {
        *ex_out = y->vol * y->vol;
        *ln_out = y->ln_vol2;
        return;
    }
    double tau2 = tau * tau, inv_tau2 = 1.0 / tau2;
    vol_it z;
    if (vol_init(&z, y, tau2, inv_tau2))
        while (vol_step(&z, tau2, inv_tau2, eps)) {
        }
    *ex_out = z.w * z.p;
    *ln_out = z.x;
}

/* σ' from step 5's σ'² for @p pl (before its sums are cleared): σ kept without information. */
static inline double vol_of(const eo_glicko2_player *pl, double ex)
{
    return pl->s1 >= S1_MIN ? sqrt(ex) : pl->vol;
}

double eo_glicko2_volatility(double phi, double vol, double s1, double s2, double tau, double eps)
{
    eo_glicko2_player x;
    memset(&x, 0, sizeof x);
    x.phi = phi;
    x.vol = vol;
    x.ln_vol2 = eo__log(vol * vol);
    x.s1 = s1;
    x.s2 = s2;
    eo_glicko2_player *xp = &x;
    double ex, ln;
    vol_solve(tau, eps, 1, &xp, &ex, &ln);
    return vol_of(&x, ex);
}

/* One game with the opponent's g precomputed (team-wide), the logit x = g (μ − μ_j) + field
 * and t = e^-|x| given. */
static inline void add_game_t(eo_glicko2_player *pl, double x, double t, double g, double s,
                              double w)
{
    double e1, e0;
    logistic_t(x, t, &e1, &e0);
    double wg = w * g;
    pl->s1 += wg * g * (e1 * e0);
    /* s − E: for s = 1 that is 1 − E (= e0, no cancellation), for s = 0 it is −E. */
    pl->s2 += wg * (s == 1.0 ? e0 : s == 0.0 ? -e1 : s - e1);
    pl->games += 1;
}

static inline void add_game_g(eo_glicko2_player *pl, double mu_j, double g, double s, double w,
                              double field)
{
    double x = g * (pl->mu - mu_j) + field;
    add_game_t(pl, x, eo__exp(-fabs(x)), g, s, w);
}

void eo_glicko2_add_game(eo_glicko2_player *pl, double mu_j, double phi_j, double s, double w,
                         double field)
{
    add_game_g(pl, mu_j, eo_glicko2_g(phi_j), s, w, field);
}

static inline double phi_max(const eo_glicko2_params *p)
{
    return p->rd_max / EO_GLICKO2_SCALE;
}

/* Step 7 from φ'² and step 5's σ'² and ln σ'²: μ' = μ + φ'² s2, φ' = sqrt(φ'²), σ' (vol_of);
 * the pending sums cleared. */
static inline void finish_with(eo_glicko2_player *pl, double phi2, double ex, double ln_vol2)
{
    pl->mu += phi2 * pl->s2;
    pl->phi = sqrt(phi2);
    pl->vol = vol_of(pl, ex);
    pl->ln_vol2 = ln_vol2;
    pl->s1 = 0.0;
    pl->s2 = 0.0;
    pl->games = 0;
}

/* Steps 6-7 after step 5 gave σ'² = ex and ln σ'² (step 8 is the callers' conversion):
 * φ*² = φ² + σ'² capped at rd_max², φ'² = 1/(1/φ*² + s1) = φ*²/(1 + φ*² s1), then
 * finish_with(). eo_glicko2_rate() does the same two players at a time. */
static inline void finish_period(double pmax, eo_glicko2_player *pl, double ex, double ln_vol2)
{
    double ps2 = pl->phi * pl->phi + ex;
    ps2 = ps2 < pmax * pmax ? ps2 : pmax * pmax;
    finish_with(pl, ps2 / (1.0 + ps2 * pl->s1), ex, ln_vol2);
}

void eo_glicko2_close_period(const eo_glicko2_params *p, eo_glicko2_player *pl)
{
    double pmax = phi_max(p);
    if (pl->games == 0) {
        double ph = sqrt(pl->phi * pl->phi + pl->vol * pl->vol);
        pl->phi = ph < pmax ? ph : pmax;
        return;
    }
    eo_glicko2_player *xp = pl;
    double ex, ln;
    vol_solve(p->tau, p->epsilon, 1, &xp, &ex, &ln);
    finish_period(pmax, pl, ex, ln);
}

void eo_glicko2_idle(const eo_glicko2_params *p, eo_glicko2_player *pl, int64_t n)
{
    if (n <= 0)
        return;
    double pmax = phi_max(p);
    double ph = sqrt(pl->phi * pl->phi + (double)n * (pl->vol * pl->vol));
    pl->phi = ph < pmax ? ph : pmax;
}

int64_t eo_glicko2_period_of(const eo_glicko2_params *p, int64_t at)
{
    if (at == 0 || p->period <= 0)
        return EO_GLICKO2_NO_PERIOD;
    int64_t q = at / p->period; /* toward zero; floor for negative times */
    return q - (at % p->period < 0);
}

void eo_glicko2_advance(const eo_glicko2_params *p, eo_glicko2_player *pl, int64_t at)
{
    int64_t now = eo_glicko2_period_of(p, at);
    if (now == EO_GLICKO2_NO_PERIOD)
        return;
    if (pl->period == EO_GLICKO2_NO_PERIOD) {
        pl->period = now;
        return;
    }
    if (now <= pl->period)
        return;
    eo_glicko2_close_period(p, pl);
    /* now - period - 1 idle periods; unsigned arithmetic cannot overflow here. */
    uint64_t gap = (uint64_t)now - (uint64_t)pl->period - 1u;
    eo_glicko2_idle(p, pl, gap > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)gap);
    pl->period = now;
}

void eo_glicko2_at(const eo_glicko2_params *p, const eo_glicko2_player *pl, int64_t now,
                   eo_glicko2_player *out)
{
    if (out != pl)
        *out = *pl;
    eo_glicko2_advance(p, out, now);
}

double eo_glicko2_p_a(double r_a, double rd2_a, double r_b, double rd2_b, double field)
{
    double phi2 = (rd2_a + rd2_b) / (EO_GLICKO2_SCALE * EO_GLICKO2_SCALE);
    double g = 1.0 / sqrt(1.0 + 3.0 * phi2 / PI2);
    double x = g * ((r_a - r_b) / EO_GLICKO2_SCALE) + field;
    return 1.0 / (1.0 + eo__exp(-x));
}

void eo_glicko2_composite(const eo_glicko2_params *p, const eo_team_agg *t, double *rating,
                          double *rd2)
{
    *rating = t->w > 0.0 ? t->mu / t->w : p->r0;
    *rd2 = t->w2 > 0.0 ? t->var / t->w2 : p->rd0 * p->rd0;
}

bool eo_glicko2_visible(const eo_glicko2_params *p, const eo_glicko2_player *pl)
{
    return pl->rounds >= (uint32_t)p->visible_rounds &&
           (p->visible_rd == 0.0 || EO_GLICKO2_SCALE * pl->phi <= p->visible_rd);
}

int eo_glicko2_set(const eo_glicko2_params *p, eo_glicko2_player *pl, double rating, double rd)
{
    if (!(rating >= EO_GLICKO2_RATING_MIN && rating <= EO_GLICKO2_RATING_MAX) ||
        (rd >= 0.0 && !(rd <= p->rd_max)) || rd != rd)
        return EO_ERANGE;
    pl->mu = eo_glicko2_mu(rating);
    if (rd >= 0.0)
        pl->phi = rd / EO_GLICKO2_SCALE;
    pl->s1 = 0.0;
    pl->s2 = 0.0;
    pl->games = 0;
    return 0;
}

/* A player's strength on the Glicko scale: rating and RD². */
static inline void strength_of(const eo_glicko2_player *pl, eo_strength *s)
{
    double rd = EO_GLICKO2_SCALE * pl->phi;
    s->mu = eo_glicko2_rating(pl->mu);
    s->var = rd * rd;
}

int eo_glicko2_rate(const eo_glicko2_params *p, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out)
{
    /* Pass 1: every participant of weight > 0 at the round's period (this is the only write
     * before the games, and it moves each state to its own period start, which every game of
     * the round then reads); the team aggregates from those period-start values. */
    eo_team_agg agg[2] = {{0, 0, 0, 0, 0}, {0, 0, 0, 0, 0}};
    double before[EO_PLAYERS_MAX];
    bool per_round = p->period == 0;
    for (int side = 0; side < 2; side++) {
        /* One side at a time, its sums in a local: a chain of additions in registers. */
        const eo_participant *team = side ? b : a;
        size_t nt = side ? nb : na, off = side ? na : 0;
        eo_team_agg t = agg[side];
        for (size_t j = 0; j < nt; j++) {
            const eo_participant *m = &team[j];
            eo_glicko2_player *pl = m->st;
            eo_glicko2_player at_start;
            const eo_glicko2_player *cur = pl;
            if (m->w > 0.0) {
                if (!per_round)
                    eo_glicko2_advance(p, pl, at);
            } else if (!per_round) {
                eo_glicko2_at(p, pl, at, &at_start); /* weight 0: a pure view, no write */
                cur = &at_start;
            }
            eo_strength s;
            strength_of(cur, &s);
            before[off + j] = s.mu;
            eo_team_agg_add(&t, &s, m->w);
        }
        agg[side] = t;
    }
    double r_a, rd2_a, r_b, rd2_b;
    eo_glicko2_composite(p, &agg[0], &r_a, &rd2_a);
    eo_glicko2_composite(p, &agg[1], &r_b, &rd2_b);
    /* P of each side from its own exp, so that swapping the teams swaps them bit for bit. */
    double pa = eo_glicko2_p_a(r_a, rd2_a, r_b, rd2_b, field);
    double pb = eo_glicko2_p_a(r_b, rd2_b, r_a, rd2_a, -field);
    if (p_a != NULL)
        *p_a = pa;
    /* The composite opponent of each side on the Glicko-2 scale, and its g; with
     * team_expectation, each side's own composite stands in for its players' ratings. */
    double mu_opp[2] = {eo_glicko2_mu(r_b), eo_glicko2_mu(r_a)};
    double mu_own[2] = {mu_opp[1], mu_opp[0]};
    bool team_e = p->team_expectation != 0;
    double g_opp[2] = {eo_glicko2_g(sqrt(rd2_b) / EO_GLICKO2_SCALE),
                       eo_glicko2_g(sqrt(rd2_a) / EO_GLICKO2_SCALE)};
    double s_a = winner == EO_WIN_A ? 1.0 : winner == EO_WIN_B ? 0.0 : 0.5;
    double score[2] = {s_a, 1.0 - s_a};
    double fld[2] = {field, -field};

    /* Pass 2: each participant's game against the other side's composite; it reads only its
     * own state and the composites above. In stages over all participants (the logits, their
     * exps, the sums), so that the processor overlaps the players' work. In per-round mode the
     * period is then closed: step 5 for all of them in one vol_solve() call, then steps 6-7. */
    uint16_t who[EO_PLAYERS_MAX];
    double x[EO_PLAYERS_MAX], t[EO_PLAYERS_MAX];
    size_t nw = 0;
    for (size_t i = 0; i < na + nb; i++) {
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
        int side = i >= na;
        who[nw] = (uint16_t)i;
        double mu = team_e ? mu_own[side] : ((eo_glicko2_player *)m->st)->mu;
        x[nw] = g_opp[side] * (mu - mu_opp[side]) + fld[side];
        nw += m->w > 0.0;
    }
    /* The exps on their own: independent calls that the processor overlaps. */
    for (size_t k = 0; k < nw; k++)
        t[k] = eo__exp(-fabs(x[k]));
    eo_glicko2_player *vin[EO_PLAYERS_MAX];
    size_t nv = 0;
    for (size_t k = 0; k < nw; k++) {
        size_t i = who[k];
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
        int side = i >= na;
        eo_glicko2_player *pl = m->st;
        add_game_t(pl, x[k], t[k], g_opp[side], score[side], m->w);
        pl->rounds += 1;
        if (at != 0)
            pl->last_ended_at = at;
        if (per_round)
            vin[nv++] = pl;
    }
    if (nv > 0) {
        double ex[EO_PLAYERS_MAX], ln[EO_PLAYERS_MAX];
        vol_solve(p->tau, p->epsilon, nv, vin, ex, ln);
        double pmax = phi_max(p), pmax2 = pmax * pmax;
        /* finish_period() two players at a time: its division in one vector operation. */
        for (size_t k = 0; k < nv; k += 2) {
            size_t k1 = k + 1 < nv ? k + 1 : k;
            eo_glicko2_player *q[2] = {vin[k], vin[k1]};
            v2d ph = {q[0]->phi, q[1]->phi}, e = {ex[k], ex[k1]};
            v2d ps2 = ph * ph + e;
            ps2 = vsel(ps2 < pmax2, ps2, (v2d){pmax2, pmax2});
            v2d phi2 = ps2 / (1.0 + ps2 * (v2d){q[0]->s1, q[1]->s1});
            for (size_t j = 0; j < 2 && k + j < nv; j++)
                finish_with(q[j], phi2[j], ex[k + j], ln[k + j]);
        }
    }
    for (size_t i = 0; out != NULL && i < na + nb; i++) {
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
        int side = i >= na;
        eo_glicko2_player *pl = m->st;
        eo_glicko2_player after;
        const eo_glicko2_player *cur = pl;
        if (!(m->w > 0.0) && !per_round) {
            eo_glicko2_at(p, pl, at, &after);
            cur = &after;
        }
        eo_model_update *u = &out[i];
        u->before = before[i];
        u->after = eo_glicko2_rating(cur->mu);
        u->expected = side ? pb : pa;
        u->k = 0.0;
        u->mu = u->after;
        u->sigma = EO_GLICKO2_SCALE * cur->phi;
    }
    return 0;
}

/* ---- Glicko-2 behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of glicko2_params[]. */
enum {
    GP_R0, GP_RD0, GP_VOL0, GP_TAU, GP_EPSILON, GP_RD_MAX, GP_PERIOD, GP_VISIBLE_ROUNDS,
    GP_VISIBLE_RD, GP_T_STALE_DAYS, GP_TEAM_EXPECTATION, GP_COUNT
};

static const eo_param_spec glicko2_params[GP_COUNT] = {
    [GP_R0] = {"r0", "starting rating", 1500, EO_GLICKO2_RATING_MIN, EO_GLICKO2_RATING_MAX,
               false, NULL},
    [GP_RD0] = {"rd0", "starting rating deviation RD (at most rd_max)", 350, 0,
                EO_GLICKO2_RD_LIMIT, false, NULL},
    [GP_VOL0] = {"vol0", "starting volatility sigma", 0.06, 1e-6, 10, false, NULL},
    [GP_TAU] = {"tau", "constraint on the change of volatility", 0.5, 0.01, 10, false, NULL},
    [GP_EPSILON] = {"epsilon", "convergence tolerance of the volatility iteration", 1e-6, 1e-12,
                    1, false, NULL},
    [GP_RD_MAX] = {"rd_max", "cap on RD growth", 350, 1, EO_GLICKO2_RD_LIMIT, false, NULL},
    [GP_PERIOD] = {"period", "rating period in seconds (0: each round is its own period)", 0, 0,
                   1099511627776.0, true, NULL},
    [GP_VISIBLE_ROUNDS] = {"visible_rounds", "rounds before the rating is visible", 0, 0, 1e6,
                           true, NULL},
    [GP_VISIBLE_RD] = {"visible_rd", "visible only when RD is at most this (0: not used)", 0, 0,
                       EO_GLICKO2_RD_LIMIT, false, NULL},
    [GP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30,
                         0, 36500, true, NULL},
    [GP_TEAM_EXPECTATION] = {"team_expectation",
                             "1: a player's expected score is his team's composite against the "
                             "other's (0: his own rating, Williams's composite opponent)",
                             0, 0, 1, true, NULL},
};

static void params_of(const eo_model_config *c, eo_glicko2_params *p)
{
    p->r0 = c->v[GP_R0];
    p->rd0 = c->v[GP_RD0];
    p->vol0 = c->v[GP_VOL0];
    p->tau = c->v[GP_TAU];
    p->epsilon = c->v[GP_EPSILON];
    p->rd_max = c->v[GP_RD_MAX];
    p->period = (int64_t)c->v[GP_PERIOD];
    p->visible_rounds = eo__param_int(c, GP_VISIBLE_ROUNDS);
    p->visible_rd = c->v[GP_VISIBLE_RD];
    p->t_stale_days = eo__param_int(c, GP_T_STALE_DAYS);
    p->team_expectation = eo__param_int(c, GP_TEAM_EXPECTATION);
}

static int glicko2_check(eo_model_config *c, eo_round_error *err)
{
    if (c->v[GP_RD0] <= c->v[GP_RD_MAX])
        return 0;
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", "rd0");
        snprintf(err->message, sizeof err->message, "%s", "need rd0 <= rd_max");
    }
    return EO_EINVAL;
}

/* New pools: a player's expected score is his team's (docs/MODELS.md, "Glicko-2"). */
static void glicko2_fresh(eo_model_config *c)
{
    c->v[GP_TEAM_EXPECTATION] = 1;
}

static int glicko2_prepare(const eo_model_config *c, void *impl)
{
    params_of(c, impl);
    return 0;
}

static void glicko2_player_init(const void *impl, void *st)
{
    eo_glicko2_player_init(st, impl);
}

static void glicko2_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    eo_glicko2_player pl;
    eo_glicko2_at(impl, st, now, &pl);
    strength_of(&pl, out);
}

static double glicko2_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                              double field)
{
    double r_a, rd2_a, r_b, rd2_b;
    eo_glicko2_composite(impl, a, &r_a, &rd2_a);
    eo_glicko2_composite(impl, b, &r_b, &rd2_b);
    return eo_glicko2_p_a(r_a, rd2_a, r_b, rd2_b, field);
}

static int glicko2_rate(const void *impl, const eo_participant *a, size_t na,
                        const eo_participant *b, size_t nb, eo_winner winner, double field,
                        int64_t at, double *p_a, eo_model_update *out)
{
    return eo_glicko2_rate(impl, a, na, b, nb, winner, field, at, p_a, out);
}

static void glicko2_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const eo_glicko2_params *p = impl;
    eo_glicko2_player pl;
    eo_glicko2_at(p, st, now, &pl);
    memset(out, 0, sizeof *out);
    out->display = eo_glicko2_rating(pl.mu);
    out->mu = out->display;
    out->sigma = EO_GLICKO2_SCALE * pl.phi;
    out->volatility = pl.vol;
    out->rounds = pl.rounds;
    out->visible = eo_glicko2_visible(p, &pl);
    out->stale = eo__stale(pl.last_ended_at, now, p->t_stale_days);
    out->last_ended_at = pl.last_ended_at;
}

static int glicko2_set(const void *impl, void *st, double mu, double sigma)
{
    return eo_glicko2_set(impl, st, mu, sigma);
}

/* Rounds may move a rating anywhere within EO_MODEL_RANGE_WINDOW of r0 (an update is not
 * clamped); an edit sets one in [EO_GLICKO2_RATING_MIN, _MAX] and an RD up to rd_max. */
static void glicko2_range(const void *impl, eo_model_range *out)
{
    const eo_glicko2_params *p = impl;
    eo__range_window(p->r0, -INFINITY, INFINITY, out);
    out->set_lo = out->lo > EO_GLICKO2_RATING_MIN ? out->lo : EO_GLICKO2_RATING_MIN;
    out->set_hi = out->hi < EO_GLICKO2_RATING_MAX ? out->hi : EO_GLICKO2_RATING_MAX;
    out->sigma_max = p->rd_max;
}

const eo__model_ops eo__glicko2_ops = {
    .id = EO_MODEL_GLICKO2,
    .name = "glicko2",
    .params = glicko2_params,
    .n_params = GP_COUNT,
    .state_size = (sizeof(eo_glicko2_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(eo_glicko2_params),
    .integer_display = false,
    .split_unit = 1,
    .has_deviation = true,
    .check = glicko2_check,
    .fresh = glicko2_fresh,
    .prepare = glicko2_prepare,
    .player_init = glicko2_player_init,
    .strength = glicko2_strength,
    .predict = glicko2_predict,
    .rate = glicko2_rate,
    .view = glicko2_view,
    .range = glicko2_range,
    .set = glicko2_set,
};
