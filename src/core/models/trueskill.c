/* TrueSkill for two teams with partial play (eo_trueskill.h; choices in docs/MODELS.md).
 *
 * Two teams make TrueSkill's factor graph a tree, so one pass of message passing is exact and
 * reduces to a closed form: team performances are weighted sums, their difference d is
 * N(Σ_A w·μ − Σ_B w·μ + field, c²), the outcome truncates d (d > ε, d < −ε or |d| <= ε), and
 * every member moves by its share w·σ̃²/c of the truncated mean (v) and shrinks by its share
 * w²·σ̃²/c² of the truncated variance (w). The Gaussian work (v, w, Φ, Φ⁻¹) is in gauss.c. */
#include "evenodds/eo_trueskill.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/models/gauss.h"
#include "core/models/model_internal.h"
#include "core/numeric.h"

void eo_trueskill_params_default(eo_trueskill_params *p)
{
    p->mu = 25.0;
    p->sigma = 25.0 / 3.0;
    p->beta = 25.0 / 6.0;
    p->tau = 25.0 / 300.0;
    p->draw_probability = 0.10;
    p->display_k = 3.0;
    p->visible_rounds = 0;
    p->visible_sigma = 0.0;
    p->t_stale_days = 30;
}

int eo_trueskill_params_check(const eo_trueskill_params *p)
{
    if (p == NULL)
        return EO_EINVAL;
    if (!eo__in(p->mu, -EO_TRUESKILL_MU_MAX, EO_TRUESKILL_MU_MAX) ||
        !eo__in(p->sigma, 1e-9, EO_TRUESKILL_SIGMA_MAX) || !eo__in(p->beta, 1e-9, 1e6) ||
        !eo__in(p->tau, 0.0, 1e6) || !(p->draw_probability >= 0.0 && p->draw_probability < 1.0) ||
        !eo__in(p->display_k, 0.0, 1000.0) || p->visible_rounds < 0 ||
        !eo__in(p->visible_sigma, 0.0, EO_TRUESKILL_SIGMA_MAX) || p->t_stale_days < 0 ||
        p->t_stale_days > 36500)
        return EO_EINVAL;
    return 0;
}

void eo_trueskill_player_init(eo_trueskill_player *pl, const eo_trueskill_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->mu = p->mu;
    pl->sigma = p->sigma;
}

/* Φ⁻¹((1 + p)/2) >= 0, as −Φ⁻¹((1 − p)/2) (precise for p near 1). */
static double draw_quantile(double p_draw)
{
    return p_draw > 0.0 ? -eo__gauss_ppf(0.5 * (1.0 - p_draw)) : 0.0;
}

/* Prepared TrueSkill: typed parameters and what every round needs. */
typedef struct ts_impl {
    eo_trueskill_params p;
    double beta2;    /* β² */
    double tau2;     /* τ² */
    double eps_unit; /* Φ⁻¹((1 + p_draw)/2)·β: the draw margin is eps_unit·√n */
} ts_impl;

/* With @p margin false, eps_unit is left 0: P(A wins) and quality do not need it, and Φ⁻¹ is
 * set-up work. */
static void impl_of(const eo_trueskill_params *p, bool margin, ts_impl *s)
{
    s->p = *p;
    s->beta2 = p->beta * p->beta;
    s->tau2 = p->tau * p->tau;
    s->eps_unit = margin ? draw_quantile(p->draw_probability) * p->beta : 0.0;
}

double eo_trueskill_draw_margin(const eo_trueskill_params *p, size_t n)
{
    return draw_quantile(p->draw_probability) * p->beta * sqrt((double)n);
}

/* P(A wins) and quality from team aggregates: the one formula behind predict(), rate()'s p_a
 * and the direct API, so all of them give the same bits (gauss.c). */
static double p_agg(const ts_impl *s, double mu_a, double var_a, double w2_a, double mu_b,
                    double var_b, double w2_b, double field)
{
    return eo__gauss_team_p(s->beta2, mu_a, var_a, w2_a, mu_b, var_b, w2_b, field);
}

static double quality_agg(const ts_impl *s, double mu_a, double var_a, double w2_a, double mu_b,
                          double var_b, double w2_b, double field)
{
    return eo__gauss_team_quality(s->beta2, mu_a, var_a, w2_a, mu_b, var_b, w2_b, field);
}

static double display_of(const ts_impl *s, double mu, double sigma)
{
    return mu - s->p.display_k * sigma;
}

static double clamp_mu(double mu)
{
    return mu > EO_TRUESKILL_MU_MAX    ? EO_TRUESKILL_MU_MAX
           : mu < -EO_TRUESKILL_MU_MAX ? -EO_TRUESKILL_MU_MAX
                                       : mu;
}

/* Sums of one team for rate(): Σ w·μ, Σ w²σ², Σ w², Σ w²(σ² + τ² + β²), in member order (the
 * same order and operations as eo_team_agg_add(), so p_a equals eo_model_predict()). */
typedef struct team_sums {
    double mu, var, w2, c2;
} team_sums;

static team_sums sums_of(const ts_impl *s, const eo_participant *m, size_t n)
{
    team_sums t = {0.0, 0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        const eo_trueskill_player *pl = m[i].st;
        double w = m[i].w, ww = w * w, s2 = pl->sigma * pl->sigma;
        t.mu += w * pl->mu;
        t.var += ww * s2;
        t.w2 += ww;
        t.c2 += ww * ((s2 + s->tau2) + s->beta2);
    }
    return t;
}

/* Below this c² carries no information a double can resolve (every weight is ~1e-100 or less):
 * the round then only inflates σ by τ for the members with weight > 0. */
#define C2_MIN 1e-200
/* |t| and ε/c are capped here so that v/c stays finite for every finite input; v at 1e100 is
 * already far beyond any change the μ range allows. */
#define T_CAP 1e100

/* Updates one team: sign +1 moves means up by w·σ̃²·vc, −1 down. */
static void update_team(const ts_impl *s, const eo_participant *m, size_t n, double sign,
                        double vc, double wc, int64_t at, double expected, eo_model_update *out)
{
    for (size_t i = 0; i < n; i++) {
        eo_trueskill_player *pl = m[i].st;
        double w = m[i].w;
        if (out != NULL) {
            out[i].before = display_of(s, pl->mu, pl->sigma);
            out[i].expected = expected;
            out[i].k = 0.0;
        }
        if (w > 0.0) {
            double s2t = pl->sigma * pl->sigma + s->tau2;
            double delta = w * s2t * vc;
            double f = 1.0 - (w * w) * s2t * wc;
            double sig = sqrt(s2t * (f > 0.0 ? f : 0.0));
            pl->mu = clamp_mu(sign > 0.0 ? pl->mu + delta : pl->mu - delta);
            pl->sigma = sig < EO_TRUESKILL_SIGMA_MAX ? sig : EO_TRUESKILL_SIGMA_MAX;
            pl->rounds += 1;
            if (at != 0)
                pl->last_ended_at = at;
        }
        if (out != NULL) {
            out[i].after = display_of(s, pl->mu, pl->sigma);
            out[i].mu = pl->mu;
            out[i].sigma = pl->sigma;
        }
    }
}

/* The whole round; arguments checked by the caller. */
static void rate_core(const ts_impl *s, const eo_participant *a, size_t na,
                      const eo_participant *b, size_t nb, eo_winner winner, double field,
                      int64_t at, double *p_a, eo_model_update *out)
{
    team_sums ta = sums_of(s, a, na), tb = sums_of(s, b, nb);
    double pa = p_agg(s, ta.mu, ta.var, ta.w2, tb.mu, tb.var, tb.w2, field);
    double pb = p_agg(s, tb.mu, tb.var, tb.w2, ta.mu, ta.var, ta.w2, -field);
    double c2 = ta.c2 + tb.c2, vc = 0.0, wc = 0.0, sign_a = 1.0;
    if (c2 > C2_MIN) {
        double c = sqrt(c2);
        double t = ((ta.mu - tb.mu) + field) / c;
        double e = s->eps_unit * sqrt((double)(na + nb)) / c;
        double v, w;
        t = t > T_CAP ? T_CAP : t < -T_CAP ? -T_CAP : t;
        e = e > T_CAP ? T_CAP : e;
        if (winner == EO_DRAW) {
            eo__gauss_vw_draw(t, e, &v, &w);
        } else {
            /* the winner's side: v_win(t_w − ε/c) with t_w its own lead */
            sign_a = winner == EO_WIN_A ? 1.0 : -1.0;
            eo__gauss_vw_win(winner == EO_WIN_A ? t : -t, e, &v, &w);
        }
        vc = v / c;
        wc = w / c2;
    }
    if (p_a != NULL)
        *p_a = pa;
    update_team(s, a, na, sign_a, vc, wc, at, pa, out);
    update_team(s, b, nb, -sign_a, vc, wc, at, pb, out != NULL ? out + na : NULL);
}

static bool members_ok(const eo_trueskill_member *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (m[i].pl == NULL || !(m[i].w >= 0.0 && m[i].w <= 1.0))
            return false;
    return true;
}

/* Copies members into the interface's participant form. */
static void to_participants(const eo_trueskill_member *m, size_t n, eo_participant *out)
{
    for (size_t i = 0; i < n; i++) {
        out[i].st = m[i].pl;
        out[i].w = m[i].w;
    }
}

static bool teams_ok(const eo_trueskill_params *p, const eo_trueskill_member *a, size_t na,
                     const eo_trueskill_member *b, size_t nb)
{
    return p != NULL && a != NULL && b != NULL && na >= 1 && nb >= 1 &&
           na + nb <= EO_PLAYERS_MAX && members_ok(a, na) && members_ok(b, nb);
}

/* For P(A wins) and quality of the direct API: @p p prepared without the draw margin into @p s,
 * and both teams' sums. */
static void direct_sums(const eo_trueskill_params *p, const eo_trueskill_member *a, size_t na,
                        const eo_trueskill_member *b, size_t nb, ts_impl *s, team_sums *ta,
                        team_sums *tb)
{
    eo_participant pa[EO_PLAYERS_MAX], pb[EO_PLAYERS_MAX];
    impl_of(p, false, s);
    to_participants(a, na, pa);
    to_participants(b, nb, pb);
    *ta = sums_of(s, pa, na);
    *tb = sums_of(s, pb, nb);
}

double eo_trueskill_win_probability(const eo_trueskill_params *p, const eo_trueskill_member *a,
                                    size_t na, const eo_trueskill_member *b, size_t nb,
                                    double field)
{
    if (!teams_ok(p, a, na, b, nb))
        return 0.5;
    ts_impl s;
    team_sums ta, tb;
    direct_sums(p, a, na, b, nb, &s, &ta, &tb);
    return p_agg(&s, ta.mu, ta.var, ta.w2, tb.mu, tb.var, tb.w2, isfinite(field) ? field : 0.0);
}

double eo_trueskill_quality(const eo_trueskill_params *p, const eo_trueskill_member *a,
                            size_t na, const eo_trueskill_member *b, size_t nb, double field)
{
    if (!teams_ok(p, a, na, b, nb))
        return 1.0;
    ts_impl s;
    team_sums ta, tb;
    direct_sums(p, a, na, b, nb, &s, &ta, &tb);
    return quality_agg(&s, ta.mu, ta.var, ta.w2, tb.mu, tb.var, tb.w2,
                       isfinite(field) ? field : 0.0);
}

int eo_trueskill_rate(const eo_trueskill_params *p, const eo_trueskill_member *a, size_t na,
                      const eo_trueskill_member *b, size_t nb, eo_winner winner, double field,
                      int64_t ended_at, double *p_a, eo_trueskill_update *out)
{
    if (!teams_ok(p, a, na, b, nb) || !isfinite(field) ||
        (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW))
        return EO_EINVAL;
    ts_impl s;
    eo_participant pa[EO_PLAYERS_MAX], pb[EO_PLAYERS_MAX];
    eo_model_update u[EO_PLAYERS_MAX];
    impl_of(p, true, &s);
    to_participants(a, na, pa);
    to_participants(b, nb, pb);
    for (size_t i = 0; out != NULL && i < na + nb; i++) {
        const eo_trueskill_player *pl = i < na ? a[i].pl : b[i - na].pl;
        out[i].mu_before = pl->mu;
        out[i].sigma_before = pl->sigma;
    }
    /* rate_core writes A's updates, then B's from u + na */
    rate_core(&s, pa, na, pb, nb, winner, field, ended_at, p_a, u);
    for (size_t i = 0; out != NULL && i < na + nb; i++) {
        out[i].mu = u[i].mu;
        out[i].sigma = u[i].sigma;
        out[i].expected = u[i].expected;
    }
    return 0;
}

double eo_trueskill_display(const eo_trueskill_params *p, const eo_trueskill_player *pl)
{
    return pl->mu - p->display_k * pl->sigma;
}

bool eo_trueskill_visible(const eo_trueskill_params *p, const eo_trueskill_player *pl)
{
    return pl->rounds >= (uint32_t)p->visible_rounds &&
           (p->visible_sigma == 0.0 || pl->sigma <= p->visible_sigma);
}

int eo_trueskill_set(eo_trueskill_player *pl, double mu, double sigma)
{
    if (pl == NULL || !isfinite(mu) || isnan(sigma))
        return EO_EINVAL;
    if (!(fabs(mu) <= EO_TRUESKILL_MU_MAX) || sigma > EO_TRUESKILL_SIGMA_MAX)
        return EO_ERANGE; /* +inf σ too; never clamped: the caller learns the range */
    pl->mu = mu;
    if (sigma >= 0.0)
        pl->sigma = sigma;
    return 0;
}

/* ---- TrueSkill behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of trueskill_params[]. */
enum {
    TP_MU, TP_SIGMA, TP_BETA, TP_TAU, TP_DRAW_PROBABILITY, TP_DISPLAY_K, TP_VISIBLE_ROUNDS,
    TP_VISIBLE_SIGMA, TP_T_STALE_DAYS, TP_COUNT
};

static const eo_param_spec trueskill_params[TP_COUNT] = {
    [TP_MU] = {"mu", "starting mean", 25.0, -EO_TRUESKILL_MU_MAX, EO_TRUESKILL_MU_MAX, false,
               NULL},
    [TP_SIGMA] = {"sigma", "starting deviation", 25.0 / 3.0, 1e-9, EO_TRUESKILL_SIGMA_MAX,
                  false, NULL},
    [TP_BETA] = {"beta", "performance deviation: a skill gap of beta wins ~76% of 1v1s",
                 25.0 / 6.0, 1e-9, 1e6, false, NULL},
    [TP_TAU] = {"tau", "dynamics: sigma^2 grows by tau^2 before each update", 25.0 / 300.0, 0.0,
                1e6, false, NULL},
    [TP_DRAW_PROBABILITY] = {"draw_probability",
                             "probability of a draw between equal teams (sets the draw margin)",
                             0.10, 0.0, 0.999999, false, NULL},
    [TP_DISPLAY_K] = {"display_k", "display rating = mu - display_k * sigma", 3.0, 0.0, 1000.0,
                      false, NULL},
    [TP_VISIBLE_ROUNDS] = {"visible_rounds", "rounds before the rating is visible", 0, 0, 1e9,
                           true, NULL},
    [TP_VISIBLE_SIGMA] = {"visible_sigma",
                          "visible only once sigma <= visible_sigma (0: not used)", 0.0, 0.0,
                          EO_TRUESKILL_SIGMA_MAX, false, NULL},
    [TP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30,
                         0, 36500, true, NULL},
};

static void params_of(const eo_model_config *c, eo_trueskill_params *p)
{
    p->mu = c->v[TP_MU];
    p->sigma = c->v[TP_SIGMA];
    p->beta = c->v[TP_BETA];
    p->tau = c->v[TP_TAU];
    p->draw_probability = c->v[TP_DRAW_PROBABILITY];
    p->display_k = c->v[TP_DISPLAY_K];
    p->visible_rounds = eo__param_int(c, TP_VISIBLE_ROUNDS);
    p->visible_sigma = c->v[TP_VISIBLE_SIGMA];
    p->t_stale_days = eo__param_int(c, TP_T_STALE_DAYS);
}

static int ts_prepare(const eo_model_config *c, void *impl)
{
    eo_trueskill_params p;
    params_of(c, &p);
    impl_of(&p, true, impl);
    return 0;
}

static void ts_player_init(const void *impl, void *st)
{
    eo_trueskill_player_init(st, &((const ts_impl *)impl)->p);
}

static void ts_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    const eo_trueskill_player *pl = st;
    out->mu = pl->mu;
    out->var = pl->sigma * pl->sigma;
}

static double ts_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                         double field)
{
    return p_agg(impl, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

static double ts_quality(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                         double field)
{
    return quality_agg(impl, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

static int ts_rate(const void *impl, const eo_participant *a, size_t na, const eo_participant *b,
                   size_t nb, eo_winner winner, double field, int64_t at, double *p_a,
                   eo_model_update *out)
{
    rate_core(impl, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

static void ts_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const ts_impl *s = impl;
    const eo_trueskill_player *pl = st;
    memset(out, 0, sizeof *out);
    out->display = display_of(s, pl->mu, pl->sigma);
    out->mu = pl->mu;
    out->sigma = pl->sigma;
    out->rounds = pl->rounds;
    out->visible = eo_trueskill_visible(&s->p, pl);
    out->stale = eo__stale(pl->last_ended_at, now, s->p.t_stale_days);
    out->last_ended_at = pl->last_ended_at;
}

static int ts_set(const void *impl, void *st, double mu, double sigma)
{
    (void)impl;
    return eo_trueskill_set(st, mu, sigma);
}

/* μ within EO_MODEL_RANGE_WINDOW of μ0 (and EO_TRUESKILL_MU_MAX), σ up to
 * EO_TRUESKILL_SIGMA_MAX. */
static void ts_range(const void *impl, eo_model_range *out)
{
    const ts_impl *s = impl;
    eo__range_window(s->p.mu, -EO_TRUESKILL_MU_MAX, EO_TRUESKILL_MU_MAX, out);
    out->sigma_max = EO_TRUESKILL_SIGMA_MAX;
}

const eo__model_ops eo__trueskill_ops = {
    .id = EO_MODEL_TRUESKILL,
    .name = "trueskill",
    .params = trueskill_params,
    .n_params = TP_COUNT,
    .state_size = (sizeof(eo_trueskill_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(ts_impl),
    .integer_display = false,
    .split_unit = 10,
    .has_deviation = true,
    .check = NULL,
    .prepare = ts_prepare,
    .player_init = ts_player_init,
    .strength = ts_strength,
    .predict = ts_predict,
    .quality = ts_quality,
    .rate = ts_rate,
    .view = ts_view,
    .range = ts_range,
    .set = ts_set,
};
