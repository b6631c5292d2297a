/* The NS2 hive skill model (docs/MODELS.md, "NS2 hive"): a logistic on the time-weighted mean
 * skill over both teams, exponential time weights from joined/left, a separate commander skill,
 * Hiveskill 3.0's per-side offsets, and a field term on A's logit. */
#include "evenodds/eo_hive.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/numeric.h"
#include "core/models/model_internal.h"

/* 2·ln 2 to the nearest double: a^(−x) = 2^(−2x/r) = e^(−(x/r)·2 ln 2). */
#define HIVE_2LN2 1.386294361119890618

/* A new pool's defaults (eo_model_config_new()): α for a 12v12 round (24 players), normalised
 * for the round's size (docs/MODELS.md, "NS2 hive", says how they were chosen). */
#define HIVE_NEW_ALPHA 12.0
#define HIVE_NEW_ALPHA_SIZE 24.0

void eo_hive_params_default(eo_hive_params *p)
{
    p->alpha = 8.0;
    p->alpha_commander = 8.0;
    p->side_share = 0.0;
    p->side_rounds = 0;
    p->round_length = -1.0;
    p->playtime_c = 0.0;
    p->visible_rounds = 0;
    p->t_stale_days = 30;
    p->alpha_size = 0.0;
}

int eo_hive_params_check(const eo_hive_params *p)
{
    if (p == NULL)
        return EO_EINVAL;
    if (!eo__in(p->alpha, 0, 1e6) || !eo__in(p->alpha_commander, 0, 1e6) ||
        !eo__in(p->side_share, 0, 1) || !eo__in(p->playtime_c, 0, 1e3) ||
        !(p->alpha_size == 0.0 || eo__in(p->alpha_size, 1, EO_PLAYERS_MAX)))
        return EO_EINVAL;
    if (!(p->round_length == -1.0 || p->round_length == 0.0 ||
          eo__in(p->round_length, 1.0, EO_HIVE_ROUND_LENGTH_MAX)))
        return EO_EINVAL;
    if (p->side_rounds < 0 || p->side_rounds > 1000000 || p->visible_rounds < 0 ||
        p->visible_rounds > 1000000 || p->t_stale_days < 0 || p->t_stale_days > 36500)
        return EO_EINVAL;
    return 0;
}

void eo_hive_player_init(eo_hive_player *pl)
{
    memset(pl, 0, sizeof *pl);
}

/* a^(−x) for a = 2^(2/r); x = +inf gives 0. */
static inline double decay(double r, double x)
{
    return eo__exp(-(x / r) * HIVE_2LN2);
}

double eo_hive_time_weight(double r, double joined, double left)
{
    return decay(r, joined) - decay(r, left);
}

double eo_hive_member_weight(const eo_hive_params *p, const eo_round *r, const eo_member *m,
                             double pool_length)
{
    bool known = r->started_at > 0 && r->ended_at > r->started_at;
    double len = known ? (double)(r->ended_at - r->started_at) : 0.0;
    double scale = p->round_length > 0.0                        ? p->round_length
                   : p->round_length < 0.0 && pool_length > 0.0 ? pool_length
                                                                : len;
    if ((m->has & (EO_MEMBER_JOINED | EO_MEMBER_LEFT)) && scale > 0.0) {
        double joined = (m->has & EO_MEMBER_JOINED) ? m->joined : 0.0;
        double left = (m->has & EO_MEMBER_LEFT) ? m->left : INFINITY;
        if (known) {
            left = left < len ? left : len;
            double full = eo_hive_time_weight(scale, 0.0, len);
            return full > 0.0 ? eo__clamp01(eo_hive_time_weight(scale, joined, left) / full)
                              : 0.0;
        }
        return eo__clamp01(eo_hive_time_weight(scale, joined, left));
    }
    if (m->has & EO_MEMBER_TIME)
        return eo__clamp01(m->time);
    return eo_round_member_weight(r, m);
}

static inline double clamp_skill(double s)
{
    s = s >= -EO_HIVE_SKILL_MAX ? s : -EO_HIVE_SKILL_MAX;
    return s <= EO_HIVE_SKILL_MAX ? s : EO_HIVE_SKILL_MAX;
}

double eo_hive_initial_skill(const eo_hive_params *p, double playtime)
{
    if (!(playtime > 0.0) || p->playtime_c == 0.0)
        return 0.0;
    return clamp_skill(p->playtime_c * eo__log(1.0 + playtime));
}

double eo_hive_expected(double x)
{
    double e = eo__exp(-fabs(x));
    return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

/* The offset share λ for a player with @p rounds rated rounds. */
static inline double share_of(const eo_hive_params *p, uint32_t rounds)
{
    if (p->side_share == 0.0 || p->side_rounds <= 0 || rounds >= (uint32_t)p->side_rounds)
        return p->side_share;
    return p->side_share * (double)rounds / (double)p->side_rounds;
}

/* The round-start field skill of a participant: its skill, or the seed from its playtime when
 * it plays its first rated round (weight > 0) with a playtime given. */
static inline double start_skill(const eo_hive_params *p, const eo_hive_player *pl, double w,
                                 const eo_participant_info *in)
{
    if (w > 0.0 && !(pl->flags & EO_HIVE_SEEDED) && in != NULL && in->playtime >= 0.0)
        return eo_hive_initial_skill(p, in->playtime);
    return pl->skill;
}

/* The field step of a round whose field members' time weights add up to @p tot: α, or with
 * alpha_size N0 > 0, α·(tot/N0)². A skill is a logit share of the mean over both teams, so a
 * player's worth, and the step that learns it, grow with the round's size: normalised so, one
 * α fits every team size (docs/MODELS.md, "NS2 hive"). */
static inline double field_alpha(const eo_hive_params *p, double tot)
{
    if (!(p->alpha_size > 0.0))
        return p->alpha;
    double r = tot / p->alpha_size;
    return p->alpha * (r * r);
}

/* The hot path. Two passes: the per-team sums of each role (reads only; team by team in member
 * order, so the mirrored round adds the same numbers in the same order), then each member's new
 * state from its own round-start state and its team's expected score. Players are distinct,
 * so no write reaches a state another participant's update still reads. */
static int rate_impl(const eo_hive_params *p, const eo_participant *a, size_t na,
                     const eo_participant *b, size_t nb, const eo_participant_info *info,
                     eo_winner winner, double field, int64_t at, double *p_a,
                     eo_model_update *out)
{
    double t_sum[2][2] = {{0, 0}, {0, 0}};  /* [role: 0 field, 1 commander][team] */
    double ts_sum[2][2] = {{0, 0}, {0, 0}}; /* Σ t·(side skill) */
    for (size_t k = 0; k < 2; k++) {
        const eo_participant *m = k == 0 ? a : b;
        size_t n = k == 0 ? na : nb;
        const eo_participant_info *inf = info == NULL ? NULL : info + (k == 0 ? 0 : na);
        for (size_t i = 0; i < n; i++) {
            const eo_hive_player *pl = m[i].st;
            double t = m[i].w;
            bool com = inf != NULL && inf[i].commander;
            double s = com ? pl->com_skill : start_skill(p, pl, t, inf ? &inf[i] : NULL);
            double o = com ? pl->com_offset : pl->offset;
            t_sum[com][k] += t;
            ts_sum[com][k] += t * (k == 0 ? s + o : s - o);
        }
    }
    double tot[2] = {t_sum[0][0] + t_sum[0][1], t_sum[1][0] + t_sum[1][1]};
    double x = 0.0;
    for (int r = 0; r < 2; r++)
        if (tot[r] > 0.0)
            x += (ts_sum[r][0] - ts_sum[r][1]) / tot[r];
    x += field;
    double e[2] = {eo_hive_expected(x), eo_hive_expected(-x)};
    double sc[2];
    sc[0] = winner == EO_WIN_A ? 1.0 : winner == EO_WIN_B ? 0.0 : 0.5;
    sc[1] = 1.0 - sc[0]; /* exact for 0, 1/2, 1 */
    double alpha[2] = {field_alpha(p, tot[0]), p->alpha_commander};
    for (size_t k = 0; k < 2; k++) {
        const eo_participant *m = k == 0 ? a : b;
        size_t n = k == 0 ? na : nb;
        const eo_participant_info *inf = info == NULL ? NULL : info + (k == 0 ? 0 : na);
        eo_model_update *o = out != NULL ? out + (k == 0 ? 0 : na) : NULL;
        for (size_t i = 0; i < n; i++) {
            eo_hive_player *pl = m[i].st;
            double t = m[i].w;
            int com = inf != NULL && inf[i].commander;
            /* the seed applies to the field skill whatever the role of the first round */
            pl->skill = start_skill(p, pl, t, inf ? &inf[i] : NULL);
            double before = pl->skill;
            if (t > 0.0) {
                double g = alpha[com] * (sc[k] - e[k]) * t / tot[com];
                double lam = share_of(p, pl->rounds);
                double *skill = com ? &pl->com_skill : &pl->skill;
                double *offset = com ? &pl->com_offset : &pl->offset;
                *skill = clamp_skill(*skill + (1.0 - lam) * g);
                if (lam > 0.0)
                    *offset = clamp_skill(*offset + (k == 0 ? lam * g : -(lam * g)));
                pl->flags |= EO_HIVE_SEEDED;
                pl->rounds += 1;
                pl->com_rounds += (uint32_t)com;
                if (at != 0)
                    pl->last_ended_at = at;
            }
            if (o != NULL) {
                o[i].before = before;
                o[i].after = pl->skill;
                o[i].expected = e[k];
                o[i].k = alpha[com];
                o[i].mu = pl->skill;
                o[i].sigma = 0.0;
            }
        }
    }
    if (p_a != NULL)
        *p_a = e[0];
    return 0;
}

int eo_hive_rate(const eo_hive_params *p, const eo_participant *a, size_t na,
                 const eo_participant *b, size_t nb, const eo_participant_info *info,
                 eo_winner winner, double field, int64_t at, double *p_a, eo_model_update *out)
{
    if (p == NULL || !eo__rate_args_ok(a, na, b, nb, winner, field) ||
        !eo__playtimes_ok(info, na + nb))
        return EO_EINVAL;
    return rate_impl(p, a, na, b, nb, info, winner, field, at, p_a, out);
}

bool eo_hive_visible(const eo_hive_params *p, const eo_hive_player *pl)
{
    return pl->rounds >= (uint32_t)p->visible_rounds;
}

/* ---- the hive model behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of hive_params[]. */
enum {
    HP_ALPHA, HP_ALPHA_COMMANDER, HP_SIDE_SHARE, HP_SIDE_ROUNDS, HP_ROUND_LENGTH, HP_PLAYTIME_C,
    HP_VISIBLE_ROUNDS, HP_T_STALE_DAYS, HP_ALPHA_SIZE, HP_COUNT
};

static const eo_param_spec hive_params[HP_COUNT] = {
    [HP_ALPHA] = {"alpha", "step size of field skills (logit units per unit of outcome surprise)",
                  8, 0, 1e6, false, NULL},
    [HP_ALPHA_COMMANDER] = {"alpha_commander", "step size of commander skills", 8, 0, 1e6, false,
                            NULL},
    [HP_SIDE_SHARE] = {"side_share",
                       "share of each step that goes to the player's side offset (0: none)", 0,
                       0, 1, false, NULL},
    [HP_SIDE_ROUNDS] = {"side_rounds", "rounds over which side_share ramps up from 0 (0: none)",
                        0, 0, 1e6, true, NULL},
    [HP_ROUND_LENGTH] = {"round_length",
                         "median round length r in seconds for the time weights (-1: the "
                         "pool's median from its log; 0: each round's own length)",
                         -1, -1, EO_HIVE_ROUND_LENGTH_MAX, false, NULL},
    [HP_PLAYTIME_C] = {"playtime_c", "initial skill c*ln(1 + playtime seconds) (0: skill 0)", 0, 0,
                       1e3, false, NULL},
    [HP_VISIBLE_ROUNDS] = {"visible_rounds", "rounds before the skill is visible", 0, 0, 1e6, true,
                           NULL},
    [HP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30, 0,
                         36500, true, NULL},
    [HP_ALPHA_SIZE] = {"alpha_size",
                       "round size (sum of time weights) that alpha is the step of: a round of "
                       "size N steps by alpha*(N/alpha_size)^2 (0: alpha whatever the size)",
                       0, 0, EO_PLAYERS_MAX, false, NULL},
};

static void params_of(const eo_model_config *c, eo_hive_params *p)
{
    p->alpha = c->v[HP_ALPHA];
    p->alpha_commander = c->v[HP_ALPHA_COMMANDER];
    p->side_share = c->v[HP_SIDE_SHARE];
    p->side_rounds = eo__param_int(c, HP_SIDE_ROUNDS);
    p->round_length = c->v[HP_ROUND_LENGTH];
    p->playtime_c = c->v[HP_PLAYTIME_C];
    p->visible_rounds = eo__param_int(c, HP_VISIBLE_ROUNDS);
    p->t_stale_days = eo__param_int(c, HP_T_STALE_DAYS);
    p->alpha_size = c->v[HP_ALPHA_SIZE];
}

static int hive_check(eo_model_config *c, eo_round_error *err)
{
    double r = c->v[HP_ROUND_LENGTH], n = c->v[HP_ALPHA_SIZE];
    bool r_ok = r == -1.0 || r == 0.0 || r >= 1.0;
    if (r_ok && (n == 0.0 || n >= 1.0))
        return 0;
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", r_ok ? "alpha_size" : "round_length");
        snprintf(err->message, sizeof err->message, "%s",
                 r_ok ? "expected 0 (not normalised) or a round size of at least 1"
                      : "expected -1 (the pool's median), 0 (each round's own length) or at "
                        "least 1 second");
    }
    return EO_EINVAL;
}

/* New pools: the step normalised for the round's size (docs/MODELS.md, "NS2 hive"). */
static void hive_fresh(eo_model_config *c)
{
    c->v[HP_ALPHA] = HIVE_NEW_ALPHA;
    c->v[HP_ALPHA_SIZE] = HIVE_NEW_ALPHA_SIZE;
}

static int hive_prepare(const eo_model_config *c, void *impl)
{
    params_of(c, impl);
    return 0;
}

static void hive_player_init(const void *impl, void *st)
{
    (void)impl;
    eo_hive_player_init(st);
}

static void hive_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    out->mu = ((const eo_hive_player *)st)->skill;
    out->var = 0.0;
}

/* Proposed teams: every member a field player with its side-neutral skill (the aggregates
 * carry no commanders or sides); the same x as rate_impl() gives then. */
static double hive_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                           double field)
{
    (void)impl;
    double tot = a->w + b->w;
    double x = tot > 0.0 ? (a->mu - b->mu) / tot : 0.0;
    return eo_hive_expected(x + field);
}

static int hive_rate_info(const void *impl, const eo_participant *a, size_t na,
                          const eo_participant *b, size_t nb, const eo_participant_info *info,
                          eo_winner winner, double field, int64_t at, double *p_a,
                          eo_model_update *out)
{
    return rate_impl(impl, a, na, b, nb, info, winner, field, at, p_a, out);
}

static int hive_rate(const void *impl, const eo_participant *a, size_t na,
                     const eo_participant *b, size_t nb, eo_winner winner, double field,
                     int64_t at, double *p_a, eo_model_update *out)
{
    return rate_impl(impl, a, na, b, nb, NULL, winner, field, at, p_a, out);
}

static double hive_member_weight(const void *impl, const eo_round *r, const eo_member *m,
                                 double pool_length)
{
    return eo_hive_member_weight(impl, r, m, pool_length);
}

static bool hive_wants_pool_length(const void *impl)
{
    return ((const eo_hive_params *)impl)->round_length < 0.0;
}

static void hive_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const eo_hive_params *p = impl;
    const eo_hive_player *pl = st;
    memset(out, 0, sizeof *out);
    out->display = pl->skill;
    out->mu = pl->skill;
    out->rounds = pl->rounds;
    out->visible = eo_hive_visible(p, pl);
    out->stale = eo__stale(pl->last_ended_at, now, p->t_stale_days);
    out->last_ended_at = pl->last_ended_at;
    out->extra[0] = pl->offset;
    out->extra[1] = pl->com_skill;
    out->extra[2] = pl->com_offset;
    out->extra[3] = (double)pl->com_rounds;
}

/* Admin set: the field skill, in [−EO_HIVE_SKILL_MAX, EO_HIVE_SKILL_MAX]; offsets, commander
 * skill and rounds are kept; the player counts as seeded (a later playtime does not override
 * the set value). */
static int hive_set(const void *impl, void *st, double mu, double sigma)
{
    (void)impl;
    (void)sigma;
    if (!(mu >= -EO_HIVE_SKILL_MAX && mu <= EO_HIVE_SKILL_MAX))
        return EO_ERANGE;
    eo_hive_player *pl = st;
    pl->skill = mu;
    pl->flags |= EO_HIVE_SEEDED;
    return 0;
}

/* The field skill in [−EO_HIVE_SKILL_MAX, EO_HIVE_SKILL_MAX] (start 0, so the window is wider),
 * where updates clamp it. */
static void hive_range(const void *impl, eo_model_range *out)
{
    (void)impl;
    eo__range_window(0.0, -EO_HIVE_SKILL_MAX, EO_HIVE_SKILL_MAX, out);
}

const eo__model_ops eo__hive_ops = {
    .id = EO_MODEL_HIVE,
    .name = "hive",
    .params = hive_params,
    .n_params = HP_COUNT,
    .state_size = (sizeof(eo_hive_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(eo_hive_params),
    .integer_display = false,
    .split_unit = 10,
    .has_deviation = false,
    .check = hive_check,
    .fresh = hive_fresh,
    .prepare = hive_prepare,
    .player_init = hive_player_init,
    .strength = hive_strength,
    .predict = hive_predict,
    .rate = hive_rate,
    .rate_info = hive_rate_info,
    .member_weight = hive_member_weight,
    .wants_pool_length = hive_wants_pool_length,
    .view = hive_view,
    .range = hive_range,
    .set = hive_set,
};
