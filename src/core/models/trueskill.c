/* TrueSkill for two teams with partial play (eo_trueskill.h; choices in docs/MODELS.md).
 *
 * Two teams make TrueSkill's factor graph a tree, so one pass of message passing is exact and
 * reduces to a closed form: team performances are weighted sums, their difference d is
 * N(Σ_A w·μ − Σ_B w·μ + field, c²), the outcome truncates d (d > ε, d < −ε or |d| <= ε), and
 * every member moves by its share w·σ̃²/c of the truncated mean (v) and shrinks by its share
 * w²·σ̃²/c² of the truncated variance (w). The Gaussian work (v, w, Φ, Φ⁻¹) is in gauss.c;
 * what TrueSkill shares with Weng-Lin (parameters, the member update, the ops) in gaussian.c. */
#include "evenodds/eo_trueskill.h"

#include <math.h>
#include <string.h>

#include "core/models/gauss.h"
#include "core/models/gaussian.h"
#include "core/models/model_internal.h"

EO__GAUSSIAN_RECORD_CHECK(eo_trueskill_player);

static const eo__gaussian_shape ts_shape =
    EO__GAUSSIAN_SHAPE_OF(eo_trueskill_player, EO_TRUESKILL_MU_MAX, EO_TRUESKILL_SIGMA_MAX);

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
    eo__gaussian_params g = EO__GAUSSIAN_PARAMS_OF(p);
    if (!eo__gaussian_params_ok(&g, EO_TRUESKILL_MU_MAX, EO_TRUESKILL_SIGMA_MAX) ||
        !(p->draw_probability >= 0.0 && p->draw_probability < 1.0))
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

/* Prepared TrueSkill: the shared head and the draw margin's unit. */
typedef struct ts_impl {
    eo__gaussian_impl g; /* first: the shared ops read it */
    double eps_unit;     /* Φ⁻¹((1 + p_draw)/2)·β: the draw margin is eps_unit·√n */
} ts_impl;

/* With @p margin false, eps_unit is left 0: P(A wins) and quality do not need it, and Φ⁻¹ is
 * set-up work. */
static void impl_of(const eo__gaussian_params *g, double draw_probability, bool margin,
                    ts_impl *s)
{
    eo__gaussian_impl_init(&s->g, g, &ts_shape);
    s->eps_unit = margin ? draw_quantile(draw_probability) * g->beta : 0.0;
}

double eo_trueskill_draw_margin(const eo_trueskill_params *p, size_t n)
{
    return draw_quantile(p->draw_probability) * p->beta * sqrt((double)n);
}

/* Below this c² carries no information a double can resolve (every weight is ~1e-100 or less):
 * the round then only inflates σ by τ for the members with weight > 0. */
#define C2_MIN 1e-200
/* |t| and ε/c are capped here so that v/c stays finite for every finite input; v at 1e100 is
 * already far beyond any change the μ range allows. */
#define T_CAP 1e100

/* TrueSkill's rule for a round of @p n participants whose sums r->a, r->b carry β² (c²): the
 * winner's members move up by w·σ̃²·v/c, the loser's down (a draw: A's by the draw's v, B's the
 * opposite), both shrink by w²·σ̃²·W/c² (gaussian.h: om = ±v/c, de = W/c², floor 0). */
static void ts_rule(const ts_impl *s, size_t n, eo_winner winner, double field,
                    eo__gaussian_round *r)
{
    double c2 = r->a.vt + r->b.vt, vc = 0.0, wc = 0.0, sign_a = 1.0;
    if (c2 > C2_MIN) {
        double c = sqrt(c2);
        double t = ((r->a.mu - r->b.mu) + field) / c;
        double e = s->eps_unit * sqrt((double)n) / c;
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
    /* μ − w·σ̃²·x is μ + w·σ̃²·(−x) bit for bit: negation is exact */
    r->om[0] = sign_a > 0.0 ? vc : -vc;
    r->om[1] = -r->om[0];
    r->de[0] = r->de[1] = wc;
    r->floor = 0.0;
    r->limit_sigma = false;
}

/* The whole round; arguments checked by the caller. */
static void rate_core(const ts_impl *s, const eo_participant *a, size_t na,
                      const eo_participant *b, size_t nb, eo_winner winner, double field,
                      int64_t at, double *p_a, eo_model_update *out)
{
    eo__gaussian_round r;
    eo__gaussian_round_start(&s->g, true, a, na, b, nb, field, &r);
    ts_rule(s, na + nb, winner, field, &r);
    eo__gaussian_round_end(&s->g, &ts_shape, &r, a, na, b, nb, at, p_a, out);
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

/* P(A wins) (@p quality false) or the match quality of the direct API, arguments checked: the
 * teams as eo_team_agg (the sums rate() forms, the same bits) through the shared ops, with the
 * parameters prepared without the draw margin. */
static double direct(const eo_trueskill_params *p, const eo_trueskill_member *a, size_t na,
                     const eo_trueskill_member *b, size_t nb, double field, bool quality)
{
    ts_impl s;
    eo_team_agg t[2];
    memset(t, 0, sizeof t);
    eo__gaussian_params g = EO__GAUSSIAN_PARAMS_OF(p);
    impl_of(&g, p->draw_probability, false, &s);
    for (size_t i = 0; i < na + nb; i++) {
        const eo_trueskill_member *m = i < na ? &a[i] : &b[i - na];
        eo_strength st = {m->pl->mu, m->pl->sigma * m->pl->sigma};
        eo_team_agg_add(&t[i >= na], &st, m->w);
    }
    field = isfinite(field) ? field : 0.0;
    return quality ? eo__gaussian_quality(&s, &t[0], &t[1], field)
                   : eo__gaussian_predict(&s, &t[0], &t[1], field);
}

double eo_trueskill_win_probability(const eo_trueskill_params *p, const eo_trueskill_member *a,
                                    size_t na, const eo_trueskill_member *b, size_t nb,
                                    double field)
{
    return teams_ok(p, a, na, b, nb) ? direct(p, a, na, b, nb, field, false) : 0.5;
}

double eo_trueskill_quality(const eo_trueskill_params *p, const eo_trueskill_member *a,
                            size_t na, const eo_trueskill_member *b, size_t nb, double field)
{
    return teams_ok(p, a, na, b, nb) ? direct(p, a, na, b, nb, field, true) : 1.0;
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
    eo__gaussian_params g = EO__GAUSSIAN_PARAMS_OF(p);
    impl_of(&g, p->draw_probability, true, &s);
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
    return eo__gaussian_display(p->display_k, pl->mu, pl->sigma);
}

bool eo_trueskill_visible(const eo_trueskill_params *p, const eo_trueskill_player *pl)
{
    return eo__gaussian_visible(p->visible_rounds, p->visible_sigma, pl->rounds, pl->sigma);
}

int eo_trueskill_set(eo_trueskill_player *pl, double mu, double sigma)
{
    if (pl == NULL)
        return EO_EINVAL;
    return eo__gaussian_set(&pl->mu, &pl->sigma, mu, sigma, EO_TRUESKILL_MU_MAX,
                            EO_TRUESKILL_SIGMA_MAX);
}

/* ---- TrueSkill behind the model interface (eo_model.h; the shared ops in gaussian.c) ---- */

/* Parameter indices: the order of trueskill_params[] (gaussian.h's head and tail around
 * TrueSkill's own). */
enum {
    TP_DRAW_PROBABILITY = EO__GAUSSIAN_P_OWN, TP_TAIL,
    TP_COUNT = TP_TAIL + EO__GAUSSIAN_TAIL_COUNT
};

static const eo_param_spec trueskill_params[TP_COUNT] = {
    EO__GAUSSIAN_SPECS_HEAD(EO_TRUESKILL_MU_MAX, EO_TRUESKILL_SIGMA_MAX,
                            "performance deviation: a skill gap of beta wins ~76% of 1v1s"),
    [TP_DRAW_PROBABILITY] = {"draw_probability",
                             "probability of a draw between equal teams (sets the draw margin)",
                             0.10, 0.0, 0.999999, false, NULL},
    EO__GAUSSIAN_SPECS_TAIL(TP_TAIL, EO_TRUESKILL_SIGMA_MAX),
};

static int ts_prepare(const eo_model_config *c, void *impl)
{
    eo__gaussian_params g;
    eo__gaussian_params_read(c, TP_TAIL, &g);
    impl_of(&g, c->v[TP_DRAW_PROBABILITY], true, impl);
    return 0;
}

static int ts_rate(const void *impl, const eo_participant *a, size_t na, const eo_participant *b,
                   size_t nb, eo_winner winner, double field, int64_t at, double *p_a,
                   eo_model_update *out)
{
    rate_core(impl, a, na, b, nb, winner, field, at, p_a, out);
    return 0;
}

const eo__model_ops eo__trueskill_ops = {
    .id = EO_MODEL_TRUESKILL,
    .name = "trueskill",
    .params = trueskill_params,
    .n_params = TP_COUNT,
    .state_size = (sizeof(eo_trueskill_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(ts_impl),
    .split_unit = 10,
    .prepare = ts_prepare,
    .rate = ts_rate,
    EO__GAUSSIAN_OPS,
};
