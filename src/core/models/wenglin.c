/* Weng-Lin for two teams with partial play (eo_wenglin.h; choices in docs/MODELS.md).
 *
 * Weng & Lin (JMLR 2011) update a team as a whole from a likelihood of the observed ranking
 * (Bradley-Terry over each pair of teams, or Plackett-Luce over the ranking), then split the
 * team's change among its members in proportion to their variances. Two teams make every sum
 * of both algorithms a single term; the code still walks the ranks as the algorithms do, so
 * the variants stay recognisable. A member's weight w scales its share of the team's strength
 * (mean change × w, variance change × w²). The Gaussian Φ for predictions is in gauss.c. */
#include "evenodds/eo_wenglin.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/models/gaussian.h"
#include "core/models/model_internal.h"
#include "core/numeric.h"

void eo_wenglin_params_default(eo_wenglin_params *p)
{
    p->mu = 25.0;
    p->sigma = 25.0 / 3.0;
    p->beta = 25.0 / 6.0;
    p->tau = 25.0 / 300.0;
    p->kappa = 0.0001;
    p->variant = EO_WENGLIN_PL;
    p->limit_sigma = false;
    p->display_k = 3.0;
    p->visible_rounds = 0;
    p->visible_sigma = 0.0;
    p->t_stale_days = 30;
}

int eo_wenglin_params_check(const eo_wenglin_params *p)
{
    if (p == NULL)
        return EO_EINVAL;
    if (!eo__in(p->mu, -EO_WENGLIN_MU_MAX, EO_WENGLIN_MU_MAX) ||
        !eo__in(p->sigma, 1e-9, EO_WENGLIN_SIGMA_MAX) || !eo__in(p->beta, 1e-9, 1e6) ||
        !eo__in(p->tau, 0.0, 1e6) || !eo__in(p->kappa, 1e-12, 1.0) ||
        (p->variant != EO_WENGLIN_BT_FULL && p->variant != EO_WENGLIN_PL) ||
        !eo__in(p->display_k, 0.0, 1000.0) || p->visible_rounds < 0 ||
        p->visible_rounds > 1000000000 || !eo__in(p->visible_sigma, 0.0, EO_WENGLIN_SIGMA_MAX) ||
        p->t_stale_days < 0 || p->t_stale_days > 36500)
        return EO_EINVAL;
    return 0;
}

void eo_wenglin_player_init(eo_wenglin_player *pl, const eo_wenglin_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->mu = p->mu;
    pl->sigma = p->sigma;
}

/* Prepared Weng-Lin: typed parameters and the squares every round needs. */
typedef struct wl_impl {
    eo_wenglin_params p;
    double beta2; /* β² */
    double tau2;  /* τ² */
} wl_impl;

static void impl_of(const eo_wenglin_params *p, wl_impl *s)
{
    s->p = *p;
    s->beta2 = p->beta * p->beta;
    s->tau2 = p->tau * p->tau;
}

/* P(A wins) and quality from team aggregates: the one formula behind predict(), rate()'s p_a
 * and the direct API, so all of them give the same bits (gauss.c). */
static double p_agg(const wl_impl *s, double mu_a, double var_a, double w2_a, double mu_b,
                    double var_b, double w2_b, double field)
{
    return eo__gaussian_team_p(s->beta2, mu_a, var_a, w2_a, mu_b, var_b, w2_b, field);
}

static double quality_agg(const wl_impl *s, double mu_a, double var_a, double w2_a, double mu_b,
                          double var_b, double w2_b, double field)
{
    return eo__gaussian_team_quality(s->beta2, mu_a, var_a, w2_a, mu_b, var_b, w2_b, field);
}

double eo_wenglin_predict(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field)
{
    wl_impl s;
    impl_of(p, &s);
    return p_agg(&s, a->mu, a->var, a->w2, b->mu, b->var, b->w2, isfinite(field) ? field : 0.0);
}

double eo_wenglin_quality(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field)
{
    wl_impl s;
    impl_of(p, &s);
    return quality_agg(&s, a->mu, a->var, a->w2, b->mu, b->var, b->w2,
                       isfinite(field) ? field : 0.0);
}

/* Logistic of x and of −x from one e^(−|x|) (in [0, 1], never overflows), so the two sides
 * of a pair get exactly mirrored values: *p = 1/(1 + e^(−x)), *q = 1/(1 + e^(x)). */
static void logistic_pair(double x, double *p, double *q)
{
    double e = eo__exp(-fabs(x));
    double big = 1.0 / (1.0 + e), small = e / (1.0 + e);
    *p = x >= 0.0 ? big : small;
    *q = x >= 0.0 ? small : big;
}

/* Ranks of the two teams from the outcome (1 best; a draw ties them). */
static void ranks_of(eo_winner winner, int rank[2])
{
    rank[0] = winner == EO_WIN_B ? 2 : 1;
    rank[1] = winner == EO_WIN_A ? 2 : 1;
}

/* x[i][q] = (μ_i − μ_q)/c for the two teams from d = (μ_A − μ_B) + field: team B's value is
 * the exact negation of A's, so a round and its mirror (teams swapped, field negated) compute
 * the same numbers bit for bit. */
static double lead(double d, double c, int i, int q)
{
    return i == q ? 0.0 : i == 0 ? d / c : -(d / c);
}

/* Bradley-Terry full pairing (Algorithm 1): each team against every other team q, with
 * c_iq = √(σ_i² + σ_q² + 2β²) (here one c), p_iq = P(i beats q) = 1/(1 + e^((μ_q − μ_i)/c)),
 * s = 1, ½, 0 as i ranked above, level with, below q. Per unit of the team's variance:
 * om_i = Σ_q (s − p_iq)/c, de_i = γ_i·Σ_q p_iq·p_qi/c², γ_i = σ_i/c (openskill's default γ). */
static void bt_full(double d, const double var[2], double c, const int rank[2], double om[2],
                    double de[2])
{
    for (int i = 0; i < 2; i++) {
        double o = 0.0, dd = 0.0;
        for (int q = 0; q < 2; q++) {
            if (q == i)
                continue;
            double p_iq, p_qi;
            logistic_pair(lead(d, c, i, q), &p_iq, &p_qi);
            double sc = rank[q] > rank[i] ? 1.0 : rank[q] == rank[i] ? 0.5 : 0.0;
            o += (sc - p_iq) / c;
            dd += (p_iq * p_qi) / (c * c);
        }
        om[i] = o;
        de[i] = (sqrt(var[i]) / c) * dd;
    }
}

/* Plackett-Luce (Algorithm 4): C_q = the teams ranked at or below q, A_q = the number of teams
 * ranked level with q, r_iq = e^(μ_i/c) / Σ_{t∈C_q} e^(μ_t/c). For each team i and each q
 * ranked at or above i: de_i += r_iq(1 − r_iq)/A_q, om_i += (1 − r_iq)/A_q when q = i, else
 * −r_iq/A_q; then om_i /= c, de_i *= γ_i/c². r_iq is computed as
 * 1 / (1 + Σ_{t∈C_q, t≠i} e^((μ_t − μ_i)/c)) (i is in C_q, since i ranks at or below q): the
 * same value, with no 0/0 when the exponentials underflow and 0 when one overflows. */
static void pl(double d, const double var[2], double c, const int rank[2], double om[2],
               double de[2])
{
    double a[2];
    for (int q = 0; q < 2; q++)
        a[q] = (double)((rank[0] == rank[q]) + (rank[1] == rank[q]));
    for (int i = 0; i < 2; i++) {
        double o = 0.0, dd = 0.0;
        for (int q = 0; q < 2; q++) {
            if (rank[q] > rank[i])
                continue;
            double den = 1.0;
            for (int t = 0; t < 2; t++)
                if (t != i && rank[t] >= rank[q])
                    den += eo__exp(lead(d, c, t, i));
            double r = 1.0 / den;
            dd += r * (1.0 - r) / a[q];
            o += (q == i ? 1.0 - r : -r) / a[q];
        }
        om[i] = o / c;
        de[i] = (sqrt(var[i]) / c) * (dd / (c * c));
    }
}

/* Team terms with the prepared β²; d = (μ_A − μ_B) + field. */
static void terms(const wl_impl *s, double d, double var_a, double var_b, eo_winner winner,
                  double om[2], double de[2])
{
    double var[2] = {var_a, var_b};
    double c = sqrt((var_a + var_b) + 2.0 * s->beta2);
    int rank[2];
    ranks_of(winner, rank);
    if (s->p.variant == EO_WENGLIN_BT_FULL)
        bt_full(d, var, c, rank, om, de);
    else
        pl(d, var, c, rank, om, de);
}

void eo_wenglin_team_terms(const eo_wenglin_params *p, double mu_a, double var_a, double mu_b,
                           double var_b, eo_winner winner, double field, double om[2],
                           double de[2])
{
    wl_impl s;
    impl_of(p, &s);
    terms(&s, (mu_a - mu_b) + field, var_a, var_b, winner, om, de);
}

static double display_of(const wl_impl *s, double mu, double sigma)
{
    return mu - s->p.display_k * sigma;
}

static double clamp_mu(double mu)
{
    return mu > EO_WENGLIN_MU_MAX    ? EO_WENGLIN_MU_MAX
           : mu < -EO_WENGLIN_MU_MAX ? -EO_WENGLIN_MU_MAX
                                     : mu;
}

/* Sums of one team for rate(): Σ w·μ, Σ w²σ², Σ w² (as eo_team_agg_add() forms them, in
 * member order, so p_a equals eo_model_predict()) and Σ w²·(σ² + τ²). */
typedef struct team_sums {
    double mu, var, w2, vt;
} team_sums;

static team_sums sums_of(const wl_impl *s, const eo_participant *m, size_t n)
{
    team_sums t = {0.0, 0.0, 0.0, 0.0};
    for (size_t i = 0; i < n; i++) {
        const eo_wenglin_player *pl = m[i].st;
        double w = m[i].w, ww = w * w, s2 = pl->sigma * pl->sigma;
        t.mu += w * pl->mu;
        t.var += ww * s2;
        t.w2 += ww;
        t.vt += ww * (s2 + s->tau2);
    }
    return t;
}

/* Updates one team from its terms (om, de per unit of member variance). */
static void update_team(const wl_impl *s, const eo_participant *m, size_t n, double om,
                        double de, int64_t at, double expected, eo_model_update *out)
{
    for (size_t i = 0; i < n; i++) {
        eo_wenglin_player *pl = m[i].st;
        double w = m[i].w;
        if (out != NULL) {
            out[i].before = display_of(s, pl->mu, pl->sigma);
            out[i].expected = expected;
            out[i].k = 0.0;
        }
        if (w > 0.0) {
            double s2t = pl->sigma * pl->sigma + s->tau2;
            double f = 1.0 - (w * w) * s2t * de;
            double sig = sqrt(s2t * (f > s->p.kappa ? f : s->p.kappa));
            if (s->p.limit_sigma && sig > pl->sigma)
                sig = pl->sigma;
            pl->mu = clamp_mu(pl->mu + w * s2t * om);
            pl->sigma = sig < EO_WENGLIN_SIGMA_MAX ? sig : EO_WENGLIN_SIGMA_MAX;
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

/* The whole round; arguments checked by the caller. Every term is computed from round-start
 * state before any player is written (players are distinct). */
static void rate_core(const wl_impl *s, const eo_participant *a, size_t na,
                      const eo_participant *b, size_t nb, eo_winner winner, double field,
                      int64_t at, double *p_a, eo_model_update *out)
{
    team_sums ta = sums_of(s, a, na), tb = sums_of(s, b, nb);
    double pa = p_agg(s, ta.mu, ta.var, ta.w2, tb.mu, tb.var, tb.w2, field);
    double pb = p_agg(s, tb.mu, tb.var, tb.w2, ta.mu, ta.var, ta.w2, -field);
    double om[2], de[2];
    terms(s, (ta.mu - tb.mu) + field, ta.vt, tb.vt, winner, om, de);
    if (p_a != NULL)
        *p_a = pa;
    update_team(s, a, na, om[0], de[0], at, pa, out);
    update_team(s, b, nb, om[1], de[1], at, pb, out != NULL ? out + na : NULL);
}

int eo_wenglin_rate(const eo_wenglin_params *p, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out)
{
    if (p == NULL || !eo__rate_args_ok(a, na, b, nb, winner, field))
        return EO_EINVAL;
    wl_impl s;
    impl_of(p, &s);
    rate_core(&s, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

double eo_wenglin_display(const eo_wenglin_params *p, const eo_wenglin_player *pl)
{
    return pl->mu - p->display_k * pl->sigma;
}

bool eo_wenglin_visible(const eo_wenglin_params *p, const eo_wenglin_player *pl)
{
    return pl->rounds >= (uint32_t)p->visible_rounds &&
           (p->visible_sigma == 0.0 || pl->sigma <= p->visible_sigma);
}

int eo_wenglin_set(eo_wenglin_player *pl, double mu, double sigma)
{
    if (pl == NULL || !isfinite(mu) || isnan(sigma))
        return EO_EINVAL;
    if (!(mu >= -EO_WENGLIN_MU_MAX && mu <= EO_WENGLIN_MU_MAX) || sigma > EO_WENGLIN_SIGMA_MAX)
        return EO_ERANGE;
    pl->mu = mu;
    if (sigma >= 0.0)
        pl->sigma = sigma;
    return 0;
}

/* ---- Weng-Lin behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of wenglin_params[]. */
enum {
    WP_MU, WP_SIGMA, WP_BETA, WP_TAU, WP_KAPPA, WP_VARIANT, WP_LIMIT_SIGMA, WP_DISPLAY_K,
    WP_VISIBLE_ROUNDS, WP_VISIBLE_SIGMA, WP_T_STALE_DAYS, WP_COUNT
};

/* Indexed by eo_wenglin_variant. */
static const char *const variant_choices[] = {"bt_full", "pl", NULL};

static const eo_param_spec wenglin_params[WP_COUNT] = {
    [WP_MU] = {"mu", "starting mean", 25.0, -EO_WENGLIN_MU_MAX, EO_WENGLIN_MU_MAX, false, NULL},
    [WP_SIGMA] = {"sigma", "starting deviation", 25.0 / 3.0, 1e-9, EO_WENGLIN_SIGMA_MAX, false,
                  NULL},
    [WP_BETA] = {"beta", "performance deviation of a team", 25.0 / 6.0, 1e-9, 1e6, false, NULL},
    [WP_TAU] = {"tau", "dynamics: sigma^2 grows by tau^2 before each update", 25.0 / 300.0, 0.0,
                1e6, false, NULL},
    [WP_KAPPA] = {"kappa", "floor of the variance shrink factor of one update", 0.0001, 1e-12,
                  1.0, false, NULL},
    [WP_VARIANT] = {"variant",
                    "update: \"bt_full\" (Bradley-Terry full pairing) or \"pl\" "
                    "(Plackett-Luce); the same for two teams up to rounding",
                    EO_WENGLIN_PL, 0, 1, true, variant_choices},
    [WP_LIMIT_SIGMA] = {"limit_sigma",
                        "1: an update never leaves sigma above its round-start value", 0, 0, 1,
                        true, NULL},
    [WP_DISPLAY_K] = {"display_k", "display rating = mu - display_k * sigma", 3.0, 0.0, 1000.0,
                      false, NULL},
    [WP_VISIBLE_ROUNDS] = {"visible_rounds", "rounds before the rating is visible", 0, 0, 1e9,
                           true, NULL},
    [WP_VISIBLE_SIGMA] = {"visible_sigma",
                          "visible only once sigma <= visible_sigma (0: not used)", 0.0, 0.0,
                          EO_WENGLIN_SIGMA_MAX, false, NULL},
    [WP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30,
                         0, 36500, true, NULL},
};

static void params_of(const eo_model_config *c, eo_wenglin_params *p)
{
    p->mu = c->v[WP_MU];
    p->sigma = c->v[WP_SIGMA];
    p->beta = c->v[WP_BETA];
    p->tau = c->v[WP_TAU];
    p->kappa = c->v[WP_KAPPA];
    p->variant = c->v[WP_VARIANT] == 0 ? EO_WENGLIN_BT_FULL : EO_WENGLIN_PL;
    p->limit_sigma = c->v[WP_LIMIT_SIGMA] != 0;
    p->display_k = c->v[WP_DISPLAY_K];
    p->visible_rounds = eo__param_int(c, WP_VISIBLE_ROUNDS);
    p->visible_sigma = c->v[WP_VISIBLE_SIGMA];
    p->t_stale_days = eo__param_int(c, WP_T_STALE_DAYS);
}

static int wl_prepare(const eo_model_config *c, void *impl)
{
    eo_wenglin_params p;
    params_of(c, &p);
    impl_of(&p, impl);
    return 0;
}

static void wl_player_init(const void *impl, void *st)
{
    eo_wenglin_player_init(st, &((const wl_impl *)impl)->p);
}

static void wl_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    const eo_wenglin_player *pl = st;
    out->mu = pl->mu;
    out->var = pl->sigma * pl->sigma;
}

static double wl_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                         double field)
{
    return p_agg(impl, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

static double wl_quality(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                         double field)
{
    return quality_agg(impl, a->mu, a->var, a->w2, b->mu, b->var, b->w2, field);
}

static int wl_rate(const void *impl, const eo_participant *a, size_t na, const eo_participant *b,
                   size_t nb, eo_winner winner, double field, int64_t at, double *p_a,
                   eo_model_update *out)
{
    rate_core(impl, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

static void wl_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const wl_impl *s = impl;
    const eo_wenglin_player *pl = st;
    memset(out, 0, sizeof *out);
    out->display = display_of(s, pl->mu, pl->sigma);
    out->mu = pl->mu;
    out->sigma = pl->sigma;
    out->rounds = pl->rounds;
    out->visible = eo_wenglin_visible(&s->p, pl);
    out->stale = eo__stale(pl->last_ended_at, now, s->p.t_stale_days);
    out->last_ended_at = pl->last_ended_at;
}

static int wl_set(const void *impl, void *st, double mu, double sigma)
{
    (void)impl;
    return eo_wenglin_set(st, mu, sigma);
}

/* μ within EO_MODEL_RANGE_WINDOW of μ0 (and EO_WENGLIN_MU_MAX), σ up to
 * EO_WENGLIN_SIGMA_MAX. */
static void wl_range(const void *impl, eo_model_range *out)
{
    const wl_impl *s = impl;
    eo__range_window(s->p.mu, -EO_WENGLIN_MU_MAX, EO_WENGLIN_MU_MAX, out);
    out->sigma_max = EO_WENGLIN_SIGMA_MAX;
}

const eo__model_ops eo__wenglin_ops = {
    .id = EO_MODEL_WENGLIN,
    .name = "wenglin",
    .params = wenglin_params,
    .n_params = WP_COUNT,
    .state_size = (sizeof(eo_wenglin_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(wl_impl),
    .integer_display = false,
    .split_unit = 10,
    .has_deviation = true,
    .check = NULL,
    .prepare = wl_prepare,
    .player_init = wl_player_init,
    .strength = wl_strength,
    .predict = wl_predict,
    .quality = wl_quality,
    .rate = wl_rate,
    .view = wl_view,
    .range = wl_range,
    .set = wl_set,
};
