/* Classic Elo for two teams (docs/MODELS.md, "Elo"): base-10 logistic on the team strength
 * difference, FIDE-style K tiers per player, partial play as a weight on strength and change,
 * a field term on A's logit. */
#include "evenodds/eo_elo.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/numeric.h"
#include "core/models/model_internal.h"

/* ln 10, to the nearest double. */
#define ELO_LN10 2.302585092994045684

void eo_elo_params_default(eo_elo_params *p)
{
    p->scale = 400.0;
    p->r0 = 1500.0;
    p->r_min = 0.0;
    p->team = EO_ELO_TEAM_MEAN;
    p->k_new = 40.0;
    p->games_new = 30;
    p->k = 20.0;
    p->k_high = 10.0;
    p->rating_high = 2400.0;
    p->visible_rounds = 0;
    p->t_stale_days = 30;
}

int eo_elo_params_check(const eo_elo_params *p)
{
    if (p == NULL)
        return EO_EINVAL;
    if (!eo__in(p->scale, 1.0, 1e9) || !eo__in(p->r_min, EO_ELO_RATING_MIN, EO_ELO_RATING_MAX) ||
        !eo__in(p->r0, p->r_min, EO_ELO_RATING_MAX))
        return EO_EINVAL;
    if (p->team != EO_ELO_TEAM_SUM && p->team != EO_ELO_TEAM_MEAN)
        return EO_EINVAL;
    if (!eo__in(p->k_new, 0, 1e6) || !eo__in(p->k, 0, 1e6) || !eo__in(p->k_high, 0, 1e6) ||
        !eo__in(p->rating_high, -1e12, 1e12))
        return EO_EINVAL;
    if (p->games_new < 0 || p->games_new > 1000000 || p->visible_rounds < 0 ||
        p->visible_rounds > 1000000 || p->t_stale_days < 0 || p->t_stale_days > 36500)
        return EO_EINVAL;
    return 0;
}

void eo_elo_player_init(eo_elo_player *pl, const eo_elo_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->rating = p->r0;
}

/* Logistic of x from e^(-|x|) (in (0, 1], never overflows): P(x) and P(-x) use the same exp,
 * so a side and its mirror get exactly swapped values. */
static inline double logistic(double x)
{
    double e = eo__exp(-fabs(x));
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

/* The logit of A: diff in natural-log units plus the field term. @p c is ln(10)/scale. */
static inline double logit(double c, double diff, double field)
{
    return diff * c + field;
}

double eo_elo_expected(const eo_elo_params *p, double diff, double field)
{
    return logistic(logit(ELO_LN10 / p->scale, diff, field));
}

static inline double diff_of(eo_elo_team team, double wr_a, double w_a, double wr_b, double w_b)
{
    if (team == EO_ELO_TEAM_SUM)
        return wr_a - wr_b;
    if (w_a == 0.0 || w_b == 0.0)
        return 0.0;
    return wr_a / w_a - wr_b / w_b;
}

double eo_elo_diff(const eo_elo_params *p, double wr_a, double w_a, double wr_b, double w_b)
{
    return diff_of(p->team, wr_a, w_a, wr_b, w_b);
}

static inline double k_of(const eo_elo_params *p, const eo_elo_player *pl)
{
    if (pl->rounds < (uint32_t)p->games_new)
        return p->k_new;
    return pl->rating >= p->rating_high ? p->k_high : p->k;
}

double eo_elo_k(const eo_elo_params *p, const eo_elo_player *pl)
{
    return k_of(p, pl);
}

static inline double new_rating(const eo_elo_params *p, double rating, double k, double w,
                                double s, double e)
{
    double r = rating + k * w * (s - e);
    r = r >= p->r_min ? r : p->r_min;
    return r <= EO_ELO_RATING_MAX ? r : EO_ELO_RATING_MAX;
}

double eo_elo_new_rating(const eo_elo_params *p, double rating, double k, double w, double s,
                         double e)
{
    return new_rating(p, rating, k, w, s, e);
}

/* The hot path, with ln(10)/scale computed once by the caller. Two passes: the weighted sums
 * (reads only), then each player's new rating from its own round-start state and its team's
 * expected score, written at once: players are distinct, so no write can reach a state another
 * participant's update still reads. */
static int rate_c(const eo_elo_params *p, double c, const eo_participant *a, size_t na,
                  const eo_participant *b, size_t nb, eo_winner winner, double field,
                  int64_t at, double *p_a, eo_model_update *out)
{
    double wr[2] = {0.0, 0.0}, ws[2] = {0.0, 0.0};
    for (size_t i = 0; i < na; i++) {
        const eo_elo_player *pl = a[i].st;
        wr[0] += a[i].w * pl->rating;
        ws[0] += a[i].w;
    }
    for (size_t i = 0; i < nb; i++) {
        const eo_elo_player *pl = b[i].st;
        wr[1] += b[i].w * pl->rating;
        ws[1] += b[i].w;
    }
    double x = logit(c, diff_of(p->team, wr[0], ws[0], wr[1], ws[1]), field);
    double e_a = logistic(x);
    double e_b = logistic(-x);
    double s_a = winner == EO_WIN_A ? 1.0 : winner == EO_WIN_B ? 0.0 : 0.5;
    double s_b = 1.0 - s_a; /* exact for 0, 1/2, 1 */
    for (size_t t = 0; t < 2; t++) {
        const eo_participant *m = t == 0 ? a : b;
        size_t n = t == 0 ? na : nb;
        double e = t == 0 ? e_a : e_b;
        double s = t == 0 ? s_a : s_b;
        eo_model_update *o = out != NULL ? out + (t == 0 ? 0 : na) : NULL;
        for (size_t i = 0; i < n; i++) {
            eo_elo_player *pl = m[i].st;
            double k = k_of(p, pl);
            double before = pl->rating;
            if (m[i].w > 0.0) {
                pl->rating = new_rating(p, before, k, m[i].w, s, e);
                pl->rounds += 1;
                if (at != 0)
                    pl->last_ended_at = at;
            }
            if (o != NULL) {
                o[i].before = before;
                o[i].after = pl->rating;
                o[i].expected = e;
                o[i].k = k;
                o[i].mu = pl->rating;
                o[i].sigma = 0.0;
            }
        }
    }
    if (p_a != NULL)
        *p_a = e_a;
    return 0;
}

int eo_elo_rate(const eo_elo_params *p, const eo_participant *a, size_t na,
                const eo_participant *b, size_t nb, eo_winner winner, double field, int64_t at,
                double *p_a, eo_model_update *out)
{
    if (p == NULL || !eo__rate_args_ok(a, na, b, nb, winner, field))
        return EO_EINVAL;
    return rate_c(p, ELO_LN10 / p->scale, a, na, b, nb, winner, field, at, p_a, out);
}

bool eo_elo_visible(const eo_elo_params *p, const eo_elo_player *pl)
{
    return pl->rounds >= (uint32_t)p->visible_rounds;
}

/* ---- Elo behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of elo_params[]. */
enum {
    EP_SCALE, EP_R0, EP_R_MIN, EP_TEAM, EP_K_NEW, EP_GAMES_NEW, EP_K, EP_K_HIGH,
    EP_RATING_HIGH, EP_VISIBLE_ROUNDS, EP_T_STALE_DAYS, EP_COUNT
};

static const char *const team_choices[] = {"sum", "mean", NULL};

static const eo_param_spec elo_params[EP_COUNT] = {
    [EP_SCALE] = {"scale", "rating difference for 10:1 odds (base-10 logistic)", 400, 1, 1e9,
                  false, NULL},
    [EP_R0] = {"r0", "starting rating", 1500, EO_ELO_RATING_MIN, EO_ELO_RATING_MAX, false, NULL},
    [EP_R_MIN] = {"r_min", "rating floor (<= r0)", 0, EO_ELO_RATING_MIN, EO_ELO_RATING_MAX, false,
                  NULL},
    [EP_TEAM] = {"team", "team strength: weighted \"sum\" or \"mean\" of the members' ratings",
                 EO_ELO_TEAM_MEAN, 0, 1, true, team_choices},
    [EP_K_NEW] = {"k_new", "K while a player has fewer than games_new rounds", 40, 0, 1e6, false,
                  NULL},
    [EP_GAMES_NEW] = {"games_new", "rounds a player counts as new (K = k_new)", 30, 0, 1e6, true,
                      NULL},
    [EP_K] = {"k", "K for players past games_new below rating_high", 20, 0, 1e6, false, NULL},
    [EP_K_HIGH] = {"k_high", "K for players past games_new rated >= rating_high", 10, 0, 1e6,
                   false, NULL},
    [EP_RATING_HIGH] = {"rating_high", "rating from which k_high applies", 2400, -1e12, 1e12,
                        false, NULL},
    [EP_VISIBLE_ROUNDS] = {"visible_rounds", "rounds before the rating is visible", 0, 0, 1e6,
                           true, NULL},
    [EP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30,
                         0, 36500, true, NULL},
};

static void params_of(const eo_model_config *c, eo_elo_params *p)
{
    p->scale = c->v[EP_SCALE];
    p->r0 = c->v[EP_R0];
    p->r_min = c->v[EP_R_MIN];
    p->team = c->v[EP_TEAM] == 0 ? EO_ELO_TEAM_SUM : EO_ELO_TEAM_MEAN;
    p->k_new = c->v[EP_K_NEW];
    p->games_new = eo__param_int(c, EP_GAMES_NEW);
    p->k = c->v[EP_K];
    p->k_high = c->v[EP_K_HIGH];
    p->rating_high = c->v[EP_RATING_HIGH];
    p->visible_rounds = eo__param_int(c, EP_VISIBLE_ROUNDS);
    p->t_stale_days = eo__param_int(c, EP_T_STALE_DAYS);
}

static int elo_check(eo_model_config *c, eo_round_error *err)
{
    if (c->v[EP_R_MIN] <= c->v[EP_R0])
        return 0;
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", "r_min");
        snprintf(err->message, sizeof err->message, "%s", "need r_min <= r0");
    }
    return EO_EINVAL;
}

/* New pools: team strength as the sum of the members' distances from r0 (with presence on,
 * eo_model_level_field()), so a team's size counts through presence only, and K for that sum
 * (docs/MODELS.md, "Elo"). */
static void elo_fresh(eo_model_config *c)
{
    c->v[EP_TEAM] = EO_ELO_TEAM_SUM;
    c->v[EP_K_NEW] = 32;
    c->v[EP_K] = 8;
    c->v[EP_K_HIGH] = 8;
}

/* Prepared Elo: the typed parameters and ln(10)/scale. */
typedef struct elo_impl {
    eo_elo_params p;
    double c;
} elo_impl;

static int elo_prepare(const eo_model_config *c, void *impl)
{
    elo_impl *e = impl;
    params_of(c, &e->p);
    e->c = ELO_LN10 / e->p.scale;
    return 0;
}

static void elo_player_init(const void *impl, void *st)
{
    eo_elo_player_init(st, &((const elo_impl *)impl)->p);
}

static void elo_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    out->mu = ((const eo_elo_player *)st)->rating;
    out->var = 0.0;
}

static double elo_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                          double field)
{
    const elo_impl *e = impl;
    return logistic(logit(e->c, diff_of(e->p.team, a->mu, a->w, b->mu, b->w), field));
}

/* With team "sum", −r0·(w_A − w_B) in logit units: strengths relative to the start rating
 * (eo_model_level_field()); a mean has no level to remove. */
static double elo_level(const void *impl, const eo_team_agg *a, const eo_team_agg *b)
{
    const elo_impl *e = impl;
    if (e->p.team != EO_ELO_TEAM_SUM)
        return 0.0;
    return -(e->c * (e->p.r0 * (a->w - b->w)));
}

static int elo_rate(const void *impl, const eo_participant *a, size_t na,
                    const eo_participant *b, size_t nb, eo_winner winner, double field,
                    int64_t at, double *p_a, eo_model_update *out)
{
    const elo_impl *e = impl;
    return rate_c(&e->p, e->c, a, na, b, nb, winner, field, at, p_a, out);
}

static void elo_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const eo_elo_params *p = &((const elo_impl *)impl)->p;
    const eo_elo_player *pl = st;
    memset(out, 0, sizeof *out);
    out->display = pl->rating;
    out->mu = pl->rating;
    out->rounds = pl->rounds;
    out->visible = eo_elo_visible(p, pl);
    out->stale = eo__stale(pl->last_ended_at, now, p->t_stale_days);
    out->last_ended_at = pl->last_ended_at;
}

static int elo_set(const void *impl, void *st, double mu, double sigma)
{
    (void)sigma;
    const eo_elo_params *p = &((const elo_impl *)impl)->p;
    if (!(mu >= p->r_min && mu <= EO_ELO_RATING_MAX))
        return EO_ERANGE;
    ((eo_elo_player *)st)->rating = mu;
    return 0;
}

/* The floor up to the start + EO_MODEL_RANGE_WINDOW, within EO_ELO_RATING_MAX. */
static void elo_range(const void *impl, eo_model_range *out)
{
    const eo_elo_params *p = &((const elo_impl *)impl)->p;
    eo__range_window(p->r0, p->r_min, EO_ELO_RATING_MAX, out);
}

const eo__model_ops eo__elo_ops = {
    .id = EO_MODEL_ELO,
    .name = "elo",
    .params = elo_params,
    .n_params = EP_COUNT,
    .state_size = (sizeof(eo_elo_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(elo_impl),
    .integer_display = false,
    .split_unit = 1,
    .has_deviation = false,
    .check = elo_check,
    .fresh = elo_fresh,
    .prepare = elo_prepare,
    .player_init = elo_player_init,
    .strength = elo_strength,
    .predict = elo_predict,
    .level = elo_level,
    .rate = elo_rate,
    .view = elo_view,
    .range = elo_range,
    .set = elo_set,
};
