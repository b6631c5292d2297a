/* Glicko-2 with per-player rating periods and the composite-opponent team method; the formulas
 * are Glickman's steps 1-8 ("Example of the Glicko-2 system"), the team method Williams's
 * (2013). docs/MODELS.md ("Glicko-2") states every choice; eo_glicko2.h the contracts. */
#include "evenodds/eo_glicko2.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/models/model_internal.h"
#include "core/numeric.h"

#define PI2 9.8696044010893586188 /* π² */

/* Below this Σ w g² E(1 − E) a period carries no information (every E is 0 or 1 to 100 digits)
 * and v = 1/s1 would overflow the volatility iteration: σ is kept. */
#define S1_MIN 1e-100

/* Bound on the Illinois iterations (10 or fewer in practice; near-empty periods need up to a
 * few hundred halvings) and on the bracketing steps of step 5.2 (one step suffices for τ <= 2,
 * see eo_glicko2_volatility). */
#define ILLINOIS_MAX 1100
#define BRACKET_MAX 1000

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
}

static bool in(double v, double lo, double hi)
{
    return v >= lo && v <= hi; /* false for NaN */
}

int eo_glicko2_params_check(const eo_glicko2_params *p)
{
    if (p == NULL || !in(p->r0, EO_GLICKO2_RATING_MIN, EO_GLICKO2_RATING_MAX) ||
        !in(p->rd_max, 1.0, EO_GLICKO2_RD_LIMIT) || !in(p->rd0, 0.0, p->rd_max) ||
        !in(p->vol0, 1e-6, 10.0) || !in(p->tau, 0.01, 10.0) || !in(p->epsilon, 1e-12, 1.0) ||
        p->period < 0 || p->period > ((int64_t)1 << 40) || p->visible_rounds < 0 ||
        !in(p->visible_rd, 0.0, EO_GLICKO2_RD_LIMIT) || p->t_stale_days < 0)
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

/* The logistic 1 / (1 + e^-x) and its complement, each from its own exp so that neither
 * cancels: *e1 = E, *e0 = 1 - E. e^-x may overflow to +inf (E = 0, 1 - E = 1): no NaN. */
static inline void logistic(double x, double *e1, double *e0)
{
    double t = eo__exp(-x);
    double e = 1.0 / (1.0 + t);
    *e1 = e;
    /* 1 - E = t / (1 + t); for t = +inf that is 1. */
    *e0 = t <= 1e300 ? t * e : 1.0;
}

double eo_glicko2_e(double mu, double mu_j, double phi_j, double field)
{
    double e1, e0;
    logistic(eo_glicko2_g(phi_j) * (mu - mu_j) + field, &e1, &e0);
    return e1;
}

/* f(x) of step 5 with e^x given as ex (the caller knows it without an exp at the bracket ends):
 * e^x (Δ² − φ² − v − e^x) / (2 (φ² + v + e^x)²) − (x − a)/τ², the first term as a product of
 * two bounded quotients so that nothing overflows for huge v or Δ. */
static inline double vol_f(double x, double ex, double d2, double pv, double a, double inv_tau2)
{
    double r = 1.0 / (pv + ex);
    return 0.5 * (ex * r) * ((d2 - pv - ex) * r) - (x - a) * inv_tau2;
}

/* One player's input to step 5. */
typedef struct vol_in {
    double phi, vol, ln_vol2, s1, s2;
} vol_in;
/* c ? x : y without a branch (m = all ones or zero): the iteration's side test is a coin flip,
 * and a mispredicted branch would throw away the other players' work in flight. */
static inline double sel(uint64_t m, double x, double y)
{
    uint64_t bx, by;
    memcpy(&bx, &x, sizeof bx);
    memcpy(&by, &y, sizeof by);
    bx = (bx & m) | (by & ~m);
    memcpy(&x, &bx, sizeof x);
    return x;
}

/* The Illinois state of one player. */
typedef struct vol_it {
    double A, B, fA, fB, eA, eB, fAt; /* fAt: f(A) unhalved, for the fallback */
    double d2, pv, a;                 /* Δ², φ² + v, ln σ² */
    bool up;                          /* Δ² > φ² + v: B = ln(Δ² − φ² − v) */
} vol_it;

/* Step 5 for n <= EO_PLAYERS_MAX players, as a wavefront: each pass does one Illinois step for
 * every player still iterating, then drops those that stopped. Each player runs exactly the
 * scalar iteration (same operations, same stopping rule), so its result does not depend on the
 * others. Why: one player's iteration is a chain of dependent exps; a pass over independent
 * players lets the processor overlap them, where one player at a time waits on each exp. */
static void vol_solve(double tau, double eps, double e_mtau, size_t n, const vol_in *in,
                      double *vol_out, double *ln_out)
{
    double inv_tau2 = 1.0 / (tau * tau);
    vol_it st[EO_PLAYERS_MAX];
    uint16_t live[EO_PLAYERS_MAX], upset[EO_PLAYERS_MAX];
    size_t nlive = 0, nup = 0;
    /* Step 5.2: A = a; B = ln(Δ² − φ² − v) when positive (the "upset" list, logs below),
     * else a − kτ for the first k >= 1 with f >= 0. The first term of f is > −1/2, so
     * f(a − kτ) > −1/2 + k/τ: k = 1 for τ <= 2, and BRACKET_MAX only guards the loop. */
    for (size_t i = 0; i < n; i++) {
        vol_it *x = &st[i];
        const vol_in *y = &in[i];
        bool info = y->s1 >= S1_MIN; /* else no information: σ kept, and no iteration */
        double v = 1.0 / (info ? y->s1 : 1.0);
        double delta = v * (info ? y->s2 : 0.0);
        x->d2 = delta * delta;
        x->pv = y->phi * y->phi + v;
        x->a = y->ln_vol2;
        x->A = x->a;
        x->eA = y->vol * y->vol;
        x->fA = x->fAt = vol_f(x->A, x->eA, x->d2, x->pv, x->a, inv_tau2);
        x->B = x->a - tau;
        x->eB = x->eA * e_mtau;
        x->up = x->d2 > x->pv;
        upset[nup] = (uint16_t)i;
        nup += x->up;
        live[nlive] = (uint16_t)i;
        nlive += info;
    }
    for (size_t k = 0; k < nup; k++) {
        vol_it *x = &st[upset[k]];
        x->eB = x->d2 - x->pv;
        x->B = eo__log(x->eB);
    }
    for (size_t i = 0; i < n; i++) {
        vol_it *x = &st[i];
        x->fB = vol_f(x->B, x->eB, x->d2, x->pv, x->a, inv_tau2);
        for (int k = 2; !x->up && x->fB < 0.0 && k <= BRACKET_MAX; k++) {
            x->B = x->a - k * tau;
            x->eB *= e_mtau;
            x->fB = vol_f(x->B, x->eB, x->d2, x->pv, x->a, inv_tau2);
        }
    }
    /* Steps 5.3-5.4: Illinois (regula falsi halving the stale end's f) while |B − A| > ε. */
    size_t m = 0;
    for (size_t k = 0; k < nlive; k++) {
        const vol_it *x = &st[live[k]];
        live[m] = live[k];
        m += fabs(x->B - x->A) > eps && x->fB != x->fA;
    }
    nlive = m;
    for (int it = 0; it < ILLINOIS_MAX && nlive > 0; it++) {
        m = 0;
        for (size_t k = 0; k < nlive; k++) {
            vol_it *x = &st[live[k]];
            double A = x->A, B = x->B, fA = x->fA, fB = x->fB;
            double C = A + (A - B) * fA / (fB - fA);
            double eC = eo__exp(C);
            double fC = vol_f(C, eC, x->d2, x->pv, x->a, inv_tau2);
            uint64_t flip = 0u - (uint64_t)(fC * fB <= 0.0);
            A = sel(flip, B, A);
            fA = sel(flip, fB, 0.5 * fA);
            x->A = A;
            x->fA = fA;
            x->fAt = sel(flip, fB, x->fAt);
            x->eA = sel(flip, x->eB, x->eA);
            x->B = C;
            x->fB = fC;
            x->eB = eC;
            live[m] = live[k];
            m += fabs(C - A) > eps && fC != fA;
        }
        nlive = m;
    }
    /* Step 5.5: σ' = e^(A/2) = sqrt(e^A). When the iteration stopped at its bound without
     * converging (f(a) of order 1e-300 against f(B) of order 1/τ needs ~1000 halvings: a
     * period with next to no information), the end with the smaller |f| is the better root. */
    for (size_t i = 0; i < n; i++) {
        const vol_it *x = &st[i];
        if (!(in[i].s1 >= S1_MIN)) {
            vol_out[i] = in[i].vol;
            ln_out[i] = in[i].ln_vol2;
            continue;
        }
        bool other = fabs(x->B - x->A) > eps && fabs(x->fB) < fabs(x->fAt);
        vol_out[i] = sqrt(other ? x->eB : x->eA);
        ln_out[i] = other ? x->B : x->A;
    }
}

double eo_glicko2_volatility(double phi, double vol, double s1, double s2, double tau, double eps)
{
    vol_in x = {phi, vol, eo__log(vol * vol), s1, s2};
    double out, ln;
    vol_solve(tau, eps, eo__exp(-tau), 1, &x, &out, &ln);
    return out;
}

/* One game with the opponent's g precomputed (team-wide). */
static inline void add_game_g(eo_glicko2_player *pl, double mu_j, double g, double s, double w,
                              double field)
{
    double e1, e0;
    logistic(g * (pl->mu - mu_j) + field, &e1, &e0);
    double wg = w * g;
    pl->s1 += wg * g * (e1 * e0);
    /* s − E: for s = 1 that is 1 − E (= e0, no cancellation), for s = 0 it is −E. */
    pl->s2 += wg * (s == 1.0 ? e0 : s == 0.0 ? -e1 : s - e1);
    pl->games += 1;
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

/* Steps 6-7 after step 5 gave vol and ln_vol2 (step 8 is the callers' conversion): the
 * pre-period deviation φ* capped at rd_max, the new φ and μ; the pending sums cleared. */
static inline void finish_period(double pmax, eo_glicko2_player *pl, double vol, double ln_vol2)
{
    double pstar = sqrt(pl->phi * pl->phi + vol * vol);
    pstar = pstar < pmax ? pstar : pmax;
    double phi = 1.0 / sqrt(1.0 / (pstar * pstar) + pl->s1);
    pl->mu += phi * phi * pl->s2;
    pl->phi = phi;
    pl->vol = vol;
    pl->ln_vol2 = ln_vol2;
    pl->s1 = 0.0;
    pl->s2 = 0.0;
    pl->games = 0;
}

static inline vol_in vol_in_of(const eo_glicko2_player *pl)
{
    return (vol_in){pl->phi, pl->vol, pl->ln_vol2, pl->s1, pl->s2};
}

void eo_glicko2_close_period(const eo_glicko2_params *p, eo_glicko2_player *pl)
{
    double pmax = phi_max(p);
    if (pl->games == 0) {
        double ph = sqrt(pl->phi * pl->phi + pl->vol * pl->vol);
        pl->phi = ph < pmax ? ph : pmax;
        return;
    }
    vol_in x = vol_in_of(pl);
    double vol, ln;
    vol_solve(p->tau, p->epsilon, eo__exp(-p->tau), 1, &x, &vol, &ln);
    finish_period(pmax, pl, vol, ln);
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
    for (size_t i = 0; i < na + nb; i++) {
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
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
        before[i] = s.mu;
        eo_team_agg_add(&agg[i >= na], &s, m->w);
    }
    double r_a, rd2_a, r_b, rd2_b;
    eo_glicko2_composite(p, &agg[0], &r_a, &rd2_a);
    eo_glicko2_composite(p, &agg[1], &r_b, &rd2_b);
    /* P of each side from its own exp, so that swapping the teams swaps them bit for bit. */
    double pa = eo_glicko2_p_a(r_a, rd2_a, r_b, rd2_b, field);
    double pb = eo_glicko2_p_a(r_b, rd2_b, r_a, rd2_a, -field);
    if (p_a != NULL)
        *p_a = pa;
    /* The composite opponent of each side on the Glicko-2 scale, and its g. */
    double mu_opp[2] = {eo_glicko2_mu(r_b), eo_glicko2_mu(r_a)};
    double g_opp[2] = {eo_glicko2_g(sqrt(rd2_b) / EO_GLICKO2_SCALE),
                       eo_glicko2_g(sqrt(rd2_a) / EO_GLICKO2_SCALE)};
    double s_a = winner == EO_WIN_A ? 1.0 : winner == EO_WIN_B ? 0.0 : 0.5;
    double score[2] = {s_a, 1.0 - s_a};
    double fld[2] = {field, -field};

    /* Pass 2: each participant's game against the other side's composite; it reads only its
     * own state and the composites above. In per-round mode the period is then closed: step 5
     * for all of them together (vol_solve's lanes), then steps 6-7 each. */
    vol_in vin[EO_PLAYERS_MAX];
    uint16_t who[EO_PLAYERS_MAX];
    size_t nv = 0;
    for (size_t i = 0; i < na + nb; i++) {
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
        if (m->w > 0.0) {
            int side = i >= na;
            eo_glicko2_player *pl = m->st;
            add_game_g(pl, mu_opp[side], g_opp[side], score[side], m->w, fld[side]);
            if (per_round) {
                vin[nv] = vol_in_of(pl);
                who[nv++] = (uint16_t)i;
            }
        }
    }
    if (nv > 0) {
        double vol[EO_PLAYERS_MAX], ln[EO_PLAYERS_MAX];
        vol_solve(p->tau, p->epsilon, eo__exp(-p->tau), nv, vin, vol, ln);
        double pmax = phi_max(p);
        for (size_t k = 0; k < nv; k++) {
            size_t i = who[k];
            finish_period(pmax, i < na ? a[i].st : b[i - na].st, vol[k], ln[k]);
        }
    }
    for (size_t i = 0; i < na + nb; i++) {
        const eo_participant *m = i < na ? &a[i] : &b[i - na];
        int side = i >= na;
        eo_glicko2_player *pl = m->st;
        eo_glicko2_player after;
        const eo_glicko2_player *cur = pl;
        if (m->w > 0.0) {
            pl->rounds += 1;
            if (at != 0)
                pl->last_ended_at = at;
        } else if (out != NULL && !per_round) {
            eo_glicko2_at(p, pl, at, &after);
            cur = &after;
        }
        if (out != NULL) {
            eo_model_update *u = &out[i];
            u->before = before[i];
            u->after = eo_glicko2_rating(cur->mu);
            u->expected = side ? pb : pa;
            u->k = 0.0;
            u->mu = u->after;
            u->sigma = EO_GLICKO2_SCALE * cur->phi;
        }
    }
    return 0;
}

/* ---- Glicko-2 behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of glicko2_params[]. */
enum {
    GP_R0, GP_RD0, GP_VOL0, GP_TAU, GP_EPSILON, GP_RD_MAX, GP_PERIOD, GP_VISIBLE_ROUNDS,
    GP_VISIBLE_RD, GP_T_STALE_DAYS, GP_COUNT
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

const eo__model_ops eo__glicko2_ops = {
    .id = EO_MODEL_GLICKO2,
    .name = "glicko2",
    .params = glicko2_params,
    .n_params = GP_COUNT,
    .state_size = (sizeof(eo_glicko2_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(eo_glicko2_params),
    .integer_display = false,
    .check = glicko2_check,
    .prepare = glicko2_prepare,
    .player_init = glicko2_player_init,
    .strength = glicko2_strength,
    .predict = glicko2_predict,
    .rate = glicko2_rate,
    .view = glicko2_view,
    .set = glicko2_set,
};
