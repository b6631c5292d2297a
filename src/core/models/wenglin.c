/* Weng-Lin for two teams with partial play (eo_wenglin.h; choices in docs/MODELS.md).
 *
 * Weng & Lin (JMLR 2011) update a team as a whole from a likelihood of the observed ranking
 * (Bradley-Terry over each pair of teams, or Plackett-Luce over the ranking), then split the
 * team's change among its members in proportion to their variances. Two teams make every sum
 * of both algorithms a single term; the code still walks the ranks as the algorithms do, so
 * the variants stay recognisable. A member's weight w scales its share of the team's strength
 * (mean change × w, variance change × w²). The Gaussian Φ for predictions is in gauss.c; what
 * Weng-Lin shares with TrueSkill (parameters, the member update, the ops) in gaussian.c. */
#include "evenodds/eo_wenglin.h"

#include <math.h>
#include <string.h>

#include "core/models/gaussian.h"
#include "core/models/model_internal.h"
#include "core/numeric.h"

EO__GAUSSIAN_RECORD_CHECK(eo_wenglin_player);

static const eo__gaussian_shape wl_shape =
    EO__GAUSSIAN_SHAPE_OF(eo_wenglin_player, EO_WENGLIN_MU_MAX, EO_WENGLIN_SIGMA_MAX);

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
    eo__gaussian_params g = EO__GAUSSIAN_PARAMS_OF(p);
    if (!eo__gaussian_params_ok(&g, EO_WENGLIN_MU_MAX, EO_WENGLIN_SIGMA_MAX) ||
        !eo__in(p->kappa, 1e-12, 1.0) ||
        (p->variant != EO_WENGLIN_BT_FULL && p->variant != EO_WENGLIN_PL) ||
        p->visible_rounds > 1000000000)
        return EO_EINVAL;
    return 0;
}

void eo_wenglin_player_init(eo_wenglin_player *pl, const eo_wenglin_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->mu = p->mu;
    pl->sigma = p->sigma;
}

/* Prepared Weng-Lin: the shared head and the rule's own parameters. */
typedef struct wl_impl {
    eo__gaussian_impl g; /* first: the shared ops read it */
    double kappa;
    eo_wenglin_variant variant;
    bool limit_sigma;
} wl_impl;

static void impl_of(const eo__gaussian_params *g, double kappa, eo_wenglin_variant variant,
                    bool limit_sigma, wl_impl *s)
{
    eo__gaussian_impl_init(&s->g, g, &wl_shape);
    s->kappa = kappa;
    s->variant = variant;
    s->limit_sigma = limit_sigma;
}

/* @p p prepared into @p s, for the direct API. */
static void impl_of_params(const eo_wenglin_params *p, wl_impl *s)
{
    eo__gaussian_params g = EO__GAUSSIAN_PARAMS_OF(p);
    impl_of(&g, p->kappa, p->variant, p->limit_sigma, s);
}

double eo_wenglin_predict(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field)
{
    wl_impl s;
    impl_of_params(p, &s);
    return eo__gaussian_predict(&s, a, b, isfinite(field) ? field : 0.0);
}

double eo_wenglin_quality(const eo_wenglin_params *p, const eo_team_agg *a,
                          const eo_team_agg *b, double field)
{
    wl_impl s;
    impl_of_params(p, &s);
    return eo__gaussian_quality(&s, a, b, isfinite(field) ? field : 0.0);
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
    double c = sqrt((var_a + var_b) + 2.0 * s->g.beta2);
    int rank[2];
    ranks_of(winner, rank);
    if (s->variant == EO_WENGLIN_BT_FULL)
        bt_full(d, var, c, rank, om, de);
    else
        pl(d, var, c, rank, om, de);
}

void eo_wenglin_team_terms(const eo_wenglin_params *p, double mu_a, double var_a, double mu_b,
                           double var_b, eo_winner winner, double field, double om[2],
                           double de[2])
{
    wl_impl s;
    impl_of_params(p, &s);
    terms(&s, (mu_a - mu_b) + field, var_a, var_b, winner, om, de);
}

/* The whole round; arguments checked by the caller. Every term is computed from round-start
 * state before any player is written (players are distinct): the teams' sums without β
 * (v_t = Σ w²·σ̃²), the terms, then the shared member update with floor κ (gaussian.h). */
static void rate_core(const wl_impl *s, const eo_participant *a, size_t na,
                      const eo_participant *b, size_t nb, eo_winner winner, double field,
                      int64_t at, double *p_a, eo_model_update *out)
{
    eo__gaussian_round r;
    eo__gaussian_round_start(&s->g, false, a, na, b, nb, field, &r);
    terms(s, (r.a.mu - r.b.mu) + field, r.a.vt, r.b.vt, winner, r.om, r.de);
    r.floor = s->kappa;
    r.limit_sigma = s->limit_sigma;
    eo__gaussian_round_end(&s->g, &wl_shape, &r, a, na, b, nb, at, p_a, out);
}

int eo_wenglin_rate(const eo_wenglin_params *p, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out)
{
    if (p == NULL || !eo__rate_args_ok(a, na, b, nb, winner, field))
        return EO_EINVAL;
    wl_impl s;
    impl_of_params(p, &s);
    rate_core(&s, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

double eo_wenglin_display(const eo_wenglin_params *p, const eo_wenglin_player *pl)
{
    return eo__gaussian_display(p->display_k, pl->mu, pl->sigma);
}

bool eo_wenglin_visible(const eo_wenglin_params *p, const eo_wenglin_player *pl)
{
    return eo__gaussian_visible(p->visible_rounds, p->visible_sigma, pl->rounds, pl->sigma);
}

int eo_wenglin_set(eo_wenglin_player *pl, double mu, double sigma)
{
    if (pl == NULL)
        return EO_EINVAL;
    return eo__gaussian_set(&pl->mu, &pl->sigma, mu, sigma, EO_WENGLIN_MU_MAX,
                            EO_WENGLIN_SIGMA_MAX);
}

/* ---- Weng-Lin behind the model interface (eo_model.h; the shared ops in gaussian.c) ---- */

/* Parameter indices: the order of wenglin_params[] (gaussian.h's head and tail around
 * Weng-Lin's own). */
enum {
    WP_KAPPA = EO__GAUSSIAN_P_OWN, WP_VARIANT, WP_LIMIT_SIGMA, WP_TAIL,
    WP_COUNT = WP_TAIL + EO__GAUSSIAN_TAIL_COUNT
};

/* Indexed by eo_wenglin_variant. */
static const char *const variant_choices[] = {"bt_full", "pl", NULL};

static const eo_param_spec wenglin_params[WP_COUNT] = {
    EO__GAUSSIAN_SPECS_HEAD(EO_WENGLIN_MU_MAX, EO_WENGLIN_SIGMA_MAX,
                            "performance deviation of a team"),
    [WP_KAPPA] = {"kappa", "floor of the variance shrink factor of one update", 0.0001, 1e-12,
                  1.0, false, NULL},
    [WP_VARIANT] = {"variant",
                    "update: \"bt_full\" (Bradley-Terry full pairing) or \"pl\" "
                    "(Plackett-Luce); the same for two teams up to rounding",
                    EO_WENGLIN_PL, 0, 1, true, variant_choices},
    [WP_LIMIT_SIGMA] = {"limit_sigma",
                        "1: an update never leaves sigma above its round-start value", 0, 0, 1,
                        true, NULL},
    EO__GAUSSIAN_SPECS_TAIL(WP_TAIL, EO_WENGLIN_SIGMA_MAX),
};

static int wl_prepare(const eo_model_config *c, void *impl)
{
    eo__gaussian_params g;
    eo__gaussian_params_read(c, WP_TAIL, &g);
    impl_of(&g, c->v[WP_KAPPA], c->v[WP_VARIANT] == 0 ? EO_WENGLIN_BT_FULL : EO_WENGLIN_PL,
            c->v[WP_LIMIT_SIGMA] != 0, impl);
    return 0;
}

static int wl_rate(const void *impl, const eo_participant *a, size_t na, const eo_participant *b,
                   size_t nb, eo_winner winner, double field, int64_t at, double *p_a,
                   eo_model_update *out)
{
    rate_core(impl, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

const eo__model_ops eo__wenglin_ops = {
    .id = EO_MODEL_WENGLIN,
    .name = "wenglin",
    .params = wenglin_params,
    .n_params = WP_COUNT,
    .state_size = (sizeof(eo_wenglin_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(wl_impl),
    .split_unit = 10,
    .prepare = wl_prepare,
    .rate = wl_rate,
    EO__GAUSSIAN_OPS,
};
