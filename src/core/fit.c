/* Whole-history refit (eo_fit.h; docs/MODELS.md, "Whole-history refit"): rounds, players and
 * bias keys, the MAP solver, and the results of both methods (the smoother is fit_smooth.c).
 *
 * Every round is reduced once, when added, to what the sweeps need: its members' indices, their
 * weights (only when one differs from 1), and the linear form of the model's logit,
 *     d = ca·Σ_A w·s − cb·Σ_B w·s + cf·b + d0,
 * with ca, cb, cf, d0 fixed by the model and the weights (team sums or means, the model's scale,
 * the field term b of the round's bias key). The sweeps then never look at a model again: a
 * pass is a gather of skills, one link evaluation and a scatter of gradient and curvature. */
#include "evenodds/eo_fit.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fit_internal.h"
#include "core/models/gauss.h"
#include "core/numeric.h"
#include "evenodds/eo_glicko2.h"
#include "evenodds/eo_synelo.h"

#define LN10 2.302585092994046

/* One link evaluation: log likelihood of the round, its derivative and minus its second
 * derivative with respect to d. */
typedef struct link_val {
    double l, d1, d2;
} link_val;

/* ---- configuration ---- */

static const char *const method_names[] = {"map", "smooth"};

const char *eo_fit_method_name(eo_fit_method m)
{
    return (unsigned)m < 2 ? method_names[m] : NULL;
}

int eo_fit_method_parse(const char *name, eo_fit_method *out)
{
    if (name == NULL || out == NULL)
        return EO_EINVAL;
    for (unsigned m = 0; m < 2; m++)
        if (strcmp(name, method_names[m]) == 0) {
            *out = (eo_fit_method)m;
            return 0;
        }
    return EO_EINVAL;
}

static bool gaussian_model(eo_model m)
{
    return m == EO_MODEL_TRUESKILL || m == EO_MODEL_WENGLIN;
}

int eo_fit_config_default(const eo_pool_config *pool, eo_fit_config *out)
{
    if (pool == NULL || out == NULL)
        return EO_EINVAL;
    eo_pool *p = NULL;
    int rc = eo_pool_create(pool, &p);
    if (rc != 0)
        return rc;
    eo_rating_view v;
    eo_pool_new_player_view(p, 0, &v);
    bool dev = eo_model_has_deviation(eo_pool_model(p));
    eo_pool_destroy(p);
    memset(out, 0, sizeof *out);
    if (pool->model.model == EO_MODEL_HIVE) {
        out->prior_mean = EO_FIT_HIVE_MEAN;
        out->prior_sd = EO_FIT_HIVE_SD;
    } else {
        out->prior_mean = v.mu;
        out->prior_sd = dev && v.sigma > 0.0 ? v.sigma : EO_FIT_ELO_SD;
    }
    out->method = gaussian_model(pool->model.model) ? EO_FIT_SMOOTH : EO_FIT_MAP;
    out->max_sweeps = 100;
    out->tol = out->prior_sd * 1e-4;
    return 0;
}

static bool config_ok(eo_model m, const eo_fit_config *c)
{
    if (!isfinite(c->prior_mean) || !(c->prior_sd > 0.0 && isfinite(c->prior_sd)) ||
        c->max_sweeps == 0 || !(c->tol > 0.0 && isfinite(c->tol)) ||
        (c->method != EO_FIT_MAP && c->method != EO_FIT_SMOOTH) ||
        (c->method == EO_FIT_SMOOTH && !gaussian_model(m)))
        return false;
    return m != EO_MODEL_HIVE || c->prior_mean > c->prior_sd;
}

/* The model's link and scale (the factor from a team strength difference to its logit). */
static void link_of(eo_fit *f)
{
    const eo_model_config *mc = eo_model_ctx_config(f->model);
    eo_model m = mc->model;
    f->probit = gaussian_model(m);
    f->unweighted = m == EO_MODEL_SYNELO;
    f->gamma = m == EO_MODEL_HIVE;
    if (m == EO_MODEL_SYNELO) /* Θ 0: each round's own (coefs()) */
        f->scale = mc->v[eo_model_param_index(m, "theta")] > 0.0
                       ? 1.0 / mc->v[eo_model_param_index(m, "theta")]
                       : 0.0;
    else if (m == EO_MODEL_ELO)
        f->scale = LN10 / mc->v[eo_model_param_index(m, "scale")];
    else if (m == EO_MODEL_GLICKO2)
        f->scale = 1.0 / EO_GLICKO2_SCALE;
    else if (f->probit)
        f->scale = mc->v[eo_model_param_index(m, "beta")]; /* β: d divides by β·√Σw² */
    else
        f->scale = 1.0; /* hive: the normalised sum is the logit */
    if (f->gamma) {
        double ratio = f->cfg.prior_mean / f->cfg.prior_sd;
        f->gk = ratio * ratio;
        f->gtheta = f->cfg.prior_sd * f->cfg.prior_sd / f->cfg.prior_mean;
        f->mode = (f->gk - 1.0) * f->gtheta;
    } else {
        f->mode = f->cfg.prior_mean;
    }
}

static int reserve_keys(eo_fit *f);

/* The text of the presence key: a control character, which no map key's text starts with. */
static const char presence_text[] = "\x02";

/* π's key, the first (PRESENCE_KEY), at 0. 0 or EO_ENOMEM. */
static int presence_key(eo_fit *f)
{
    if (reserve_keys(f) != 0 || eo__strmap_reserve(f->keys, 1, sizeof presence_text) != 0)
        return EO_ENOMEM;
    uint64_t h = eo__strmap_hash(f->keys, presence_text, sizeof presence_text - 1);
    int64_t k = eo__strmap_insert(f->keys, presence_text, sizeof presence_text - 1, h);
    memset(&f->kp[k], 0, sizeof f->kp[k]);
    f->b[k] = 0.0;
    f->nk++;
    return 0;
}

int eo_fit_create(const eo_pool_config *pool, const eo_fit_config *cfg, eo_fit **out)
{
    if (pool == NULL || cfg == NULL || out == NULL || !config_ok(pool->model.model, cfg) ||
        eo_bias_config_check(&pool->bias, NULL) != 0 ||
        eo_presence_config_check(&pool->presence, NULL) != 0)
        return EO_EINVAL;
    eo_fit *f = calloc(1, sizeof *f);
    if (f == NULL)
        return EO_ENOMEM;
    int rc = eo_model_prepare(&pool->model, &f->model, NULL);
    if (rc != 0) {
        free(f);
        return rc;
    }
    f->pool = *pool;
    f->pool.model = *eo_model_ctx_config(f->model);
    f->cfg = *cfg;
    f->eta = 1.0;
    link_of(f);
    f->ids = eo__strmap_create(0);
    f->keys = eo__strmap_create(0);
    if (f->ids == NULL || f->keys == NULL ||
        (cfg->method == EO_FIT_SMOOTH && eo__fit_smooth_init(f) != 0) ||
        (eo_model_wants_pool_length(f->model) && eo__roundlen_init(&f->lengths) != 0) ||
        (pool->presence.on && presence_key(f) != 0)) {
        eo_fit_destroy(f);
        return EO_ENOMEM;
    }
    *out = f;
    return 0;
}

void eo_fit_destroy(eo_fit *f)
{
    if (f == NULL)
        return;
    for (size_t k = 0; k < f->nk; k++) {
        free(f->kp[k].map);
        free(f->kp[k].mode);
    }
    free(f->kp);
    double *arrays[] = {f->s, f->g, f->h, f->g2, f->h2, f->trial, f->step,
                        f->b, f->kg, f->kh, f->kg2, f->kh2, f->ktrial, f->kstep, f->weight};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++)
        free(arrays[i]);
    free(f->rounds);
    free(f->r);
    free(f->member);
    eo__strmap_destroy(f->ids);
    eo__strmap_destroy(f->keys);
    eo__fit_smooth_free(f);
    eo__roundlen_free(&f->lengths);
    eo_model_release(f->model);
    free(f);
}

/* ---- growth ---- */

/* Grows @p *p (elements of @p size) to hold @p need, doubling; 0 or -1. */
static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, c * size);
    if (q == NULL)
        return -1;
    *p = q;
    *cap = c;
    return 0;
}

/* Room for @p extra more players in every per-player array. */
static int reserve_players(eo_fit *f, size_t extra)
{
    size_t need = f->np + extra;
    if (need <= f->pcap)
        return 0;
    size_t c = f->pcap ? f->pcap : 64;
    while (c < need)
        c *= 2;
    double **arr[] = {&f->s, &f->g, &f->h, &f->g2, &f->h2, &f->trial, &f->step};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        double *q = realloc(*arr[i], c * sizeof(double));
        if (q == NULL)
            return -1;
        *arr[i] = q;
    }
    uint32_t *q = realloc(f->rounds, c * sizeof *q);
    if (q == NULL)
        return -1;
    f->rounds = q;
    f->pcap = c;
    return 0;
}

static int reserve_keys(eo_fit *f)
{
    if (f->nk < f->kcap)
        return 0;
    size_t c = f->kcap ? 2 * f->kcap : 8;
    double **arr[] = {&f->b, &f->kg, &f->kh, &f->kg2, &f->kh2, &f->ktrial, &f->kstep};
    for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
        double *q = realloc(*arr[i], c * sizeof(double));
        if (q == NULL)
            return -1;
        *arr[i] = q;
    }
    bias_part *q = realloc(f->kp, c * sizeof *q);
    if (q == NULL)
        return -1;
    f->kp = q;
    f->kcap = c;
    return 0;
}

/* ---- rounds ---- */

/* The map key's text: its parts joined by U+001F, an absent part as U+0001 (ids hold no
 * control characters, so two keys never share a text). */
static int key_text(const eo_bias_key *k, char *buf, size_t cap, size_t *len)
{
    const char *parts[3] = {k->map, k->size, k->mode};
    size_t n = 0;
    for (int i = 0; i < 3; i++) {
        const char *p = parts[i] != NULL ? parts[i] : "\x01";
        size_t l = strlen(p);
        if (n + l + 2 > cap)
            return -1;
        memcpy(buf + n, p, l);
        n += l;
        buf[n++] = '\x1f';
    }
    buf[n] = '\0';
    *len = n;
    return 0;
}

static bool winner_ok(eo_winner w)
{
    return w == EO_WIN_A || w == EO_WIN_B || w == EO_DRAW;
}

/* The round's linear form from its weights @p w (A's then B's). */
static void coefs(const eo_fit *f, const double *w, size_t na, size_t nb, fit_round *fr)
{
    double wa = 0.0, wb = 0.0, q = 0.0;
    for (size_t i = 0; i < na + nb; i++) {
        if (i < na)
            wa += w[i];
        else
            wb += w[i];
        q += w[i] * w[i];
    }
    const eo_model_config *mc = eo_model_ctx_config(f->model);
    fr->cf = 1.0;
    fr->d0 = 0.0;
    switch (mc->model) {
    case EO_MODEL_ELO: {
        bool mean = mc->v[eo_model_param_index(EO_MODEL_ELO, "team")] != 0.0;
        bool empty = wa == 0.0 || wb == 0.0; /* a mean of nobody: no difference (elo.c) */
        fr->ca = !mean ? f->scale : empty ? 0.0 : f->scale / wa;
        fr->cb = !mean ? f->scale : empty ? 0.0 : f->scale / wb;
        break;
    }
    case EO_MODEL_GLICKO2: {
        /* The composite is the weighted mean, or the start rating for a team of weight 0. */
        double r0 = mc->v[eo_model_param_index(EO_MODEL_GLICKO2, "r0")];
        fr->ca = wa > 0.0 ? f->scale / wa : 0.0;
        fr->cb = wb > 0.0 ? f->scale / wb : 0.0;
        fr->d0 = (wa > 0.0 ? 0.0 : f->scale * r0) - (wb > 0.0 ? 0.0 : f->scale * r0);
        break;
    }
    case EO_MODEL_HIVE:
        fr->ca = fr->cb = wa + wb > 0.0 ? 1.0 / (wa + wb) : 0.0;
        break;
    case EO_MODEL_TRUESKILL:
    case EO_MODEL_WENGLIN: {
        double c = f->scale * sqrt(q);
        fr->ca = fr->cb = fr->cf = c > 0.0 ? 1.0 / c : 0.0;
        break;
    }
    default: { /* SynElo: team sums, every member in full, Θ given or the round's own */
        const eo_synelo_params sp = {.theta = 0.0};
        fr->ca = fr->cb = f->scale > 0.0 ? f->scale : 1.0 / eo_synelo_theta_of(&sp, na, nb);
        break;
    }
    }
}

/* Information of one play at P = ½ per unit of field squared: the bias prior's unit. */
static double play_info(const eo_fit *f, double cf)
{
    return f->probit ? (2.0 / 3.141592653589793) * cf * cf : 0.25 * cf * cf;
}

/* d per logit at P = ½ for the Φ link: 0.25/φ(0) = √(2π)/4, so that π is in logits for every
 * model, as the pool's (docs/MODELS.md "Presence"). */
#define PROBIT_PER_LOGIT 0.6266570686577501

/* With presence on, round @p r's level field and π's coefficient into @p fr (after coefs()):
 * the counts and the members' partial-play weights (whatever the model rates) as the pool
 * takes them. */
static void presence_of(const eo_fit *f, const eo_round *r, double median, fit_round *fr)
{
    fr->lf = fr->cp = 0.0;
    if (!f->pool.presence.on)
        return;
    eo_team_agg cw[2] = {{(double)r->n[0], 0.0, 0.0, 0.0, 0.0},
                         {(double)r->n[1], 0.0, 0.0, 0.0, 0.0}};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < r->n[t]; i++)
            cw[t].w += eo_model_member_weight(f->model, r, &r->team[t][i], median);
    fr->lf = eo_model_level_field(f->model, &cw[0], &cw[1]);
    fr->cp = (cw[0].w - cw[1].w) * (f->probit ? PROBIT_PER_LOGIT : 1.0);
}

double eo__fit_field(const eo_fit *f, const fit_round *fr)
{
    double field = fr->key >= 0 ? f->b[fr->key] : 0.0;
    if (f->pool.presence.on)
        field += fr->lf + (fr->cp != 0.0 && fr->cf > 0.0 ? fr->cp * f->b[PRESENCE_KEY] / fr->cf
                                                         : 0.0);
    return field;
}

/* A round as eo_fit_add_round() checks it before anything changes: its members (their ids'
 * lengths, hashes and indices, -1 for a new player; their partial-play weights) and its map
 * key (kidx -1: a new key). */
typedef struct round_in {
    size_t na, nb, n;
    int64_t idx[EO_PLAYERS_MAX];
    size_t len[EO_PLAYERS_MAX];
    uint64_t hash[EO_PLAYERS_MAX];
    double w[EO_PLAYERS_MAX];
    bool ones; /* every weight 1 */
    bool keyed;
    eo_bias_key key;
    char ktext[3 * (EO_ID_MAX + 2) + 1];
    size_t klen;
    uint64_t khash;
    int64_t kidx;
} round_in;

static const eo_member *member_at(const eo_round *r, size_t na, size_t i)
{
    return i < na ? &r->team[0][i] : &r->team[1][i - na];
}

/* The members' ids (valid, none twice) and weights. 0 or EO_EINVAL. */
static int check_members(const eo_fit *f, const eo_round *r, double median, round_in *in)
{
    in->ones = true;
    for (size_t i = 0; i < in->n; i++) {
        const eo_member *m = member_at(r, in->na, i);
        if (m->id == NULL)
            return EO_EINVAL;
        in->len[i] = strnlen(m->id, EO_ID_MAX + 1);
        if (eo_id_check(m->id, in->len[i]) != 0)
            return EO_EINVAL;
        for (size_t j = 0; j < i; j++)
            if (in->len[j] == in->len[i] &&
                memcmp(member_at(r, in->na, j)->id, m->id, in->len[i]) == 0)
                return EO_EINVAL;
        in->hash[i] = eo__strmap_hash(f->ids, m->id, in->len[i]);
        in->idx[i] = eo__strmap_find(f->ids, m->id, in->len[i], in->hash[i]);
        in->w[i] = f->unweighted ? 1.0 : eo_model_member_weight(f->model, r, m, median);
        in->ones = in->ones && in->w[i] == 1.0;
    }
    return 0;
}

/* The round's map key, when the bias has one for it. 0 or EO_EINVAL. */
static int check_key(const eo_fit *f, const eo_round *r, round_in *in)
{
    in->klen = 0;
    in->khash = 0;
    in->kidx = -1;
    in->keyed = eo_bias_key_of(&f->pool.bias, r->map, in->na, in->nb, r->mode, &in->key) == 0;
    if (!in->keyed)
        return 0;
    const eo_bias_key *k = &in->key;
    if (eo_id_check(k->map, strnlen(k->map, EO_ID_MAX + 1)) != 0 ||
        (k->mode != NULL && eo_id_check(k->mode, strnlen(k->mode, EO_ID_MAX + 1)) != 0) ||
        key_text(k, in->ktext, sizeof in->ktext, &in->klen) != 0)
        return EO_EINVAL;
    in->khash = eo__strmap_hash(f->keys, in->ktext, in->klen);
    in->kidx = eo__strmap_find(f->keys, in->ktext, in->klen, in->khash);
    return 0;
}

/* A new map key, inserted with its bias at 0. 0 or EO_ENOMEM (nothing changed). */
static int add_key(eo_fit *f, round_in *in)
{
    const eo_bias_key *k = &in->key;
    bias_part bp = {0};
    bp.map = malloc(strlen(k->map) + 1);
    bp.mode = k->mode != NULL ? malloc(strlen(k->mode) + 1) : NULL;
    if (bp.map == NULL || (k->mode != NULL && bp.mode == NULL) || reserve_keys(f) != 0 ||
        eo__strmap_reserve(f->keys, 1, in->klen + 1) != 0) {
        free(bp.map);
        free(bp.mode);
        return EO_ENOMEM;
    }
    memcpy(bp.map, k->map, strlen(k->map) + 1);
    if (bp.mode != NULL)
        memcpy(bp.mode, k->mode, strlen(k->mode) + 1);
    bp.size = k->size;
    in->kidx = eo__strmap_insert(f->keys, in->ktext, in->klen, in->khash);
    f->kp[in->kidx] = bp;
    f->b[in->kidx] = 0.0;
    f->nk++;
    return 0;
}

/* Room for the round, its members and new players, and its key. 0 or EO_ENOMEM. */
static int reserve_round(eo_fit *f, round_in *in)
{
    size_t nnew = 0, bytes = 0;
    for (size_t i = 0; i < in->n; i++)
        if (in->idx[i] < 0) {
            nnew++;
            bytes += in->len[i] + 1;
        }
    if (grow((void **)&f->r, &f->rcap, f->nr + 1, sizeof *f->r) != 0 ||
        grow((void **)&f->member, &f->mcap, f->nm + in->n, sizeof *f->member) != 0 ||
        (!in->ones && grow((void **)&f->weight, &f->wcap, f->nw + in->n, sizeof *f->weight) != 0) ||
        reserve_players(f, nnew) != 0 || eo__strmap_reserve(f->ids, nnew, bytes) != 0)
        return EO_ENOMEM;
    return in->keyed && in->kidx < 0 ? add_key(f, in) : 0;
}

/* The round and its members appended (nothing can fail: reserve_round() made the room; players
 * unknown twice in one round were refused by check_members()). */
static void append_round(eo_fit *f, const eo_round *r, double median, round_in *in)
{
    fit_round *fr = &f->r[f->nr++];
    fr->off = f->nm;
    fr->na = (uint8_t)in->na;
    fr->nb = (uint8_t)in->nb;
    fr->y2 = r->winner == EO_WIN_A ? 2 : r->winner == EO_WIN_B ? 0 : 1;
    fr->key = (int32_t)in->kidx;
    coefs(f, in->w, in->na, in->nb, fr);
    presence_of(f, r, median, fr);
    fr->woff = in->ones ? NO_WEIGHTS : f->nw;
    for (size_t i = 0; i < in->n; i++) {
        int64_t *idx = &in->idx[i];
        if (*idx < 0) {
            *idx = eo__strmap_insert(f->ids, member_at(r, in->na, i)->id, in->len[i], in->hash[i]);
            f->s[*idx] = f->mode;
            f->rounds[*idx] = 0;
            f->np++;
        }
        f->member[f->nm++] = (uint32_t)*idx;
        f->rounds[*idx] += in->w[i] > 0.0;
        if (!in->ones)
            f->weight[f->nw++] = in->w[i];
    }
    if (in->kidx >= 0) {
        f->kp[in->kidx].info_sum += play_info(f, fr->cf);
        f->kp[in->kidx].plays++;
    }
    if (fr->cp != 0.0) { /* in logits: Δ²/4 for either link */
        f->kp[PRESENCE_KEY].info_sum += play_info(f, fr->cp);
        f->kp[PRESENCE_KEY].plays++;
    }
}

int eo_fit_add_round(eo_fit *f, const eo_round *r)
{
    if (f == NULL || r == NULL || r->n[0] == 0 || r->n[1] == 0 || r->team[0] == NULL ||
        r->team[1] == NULL || r->n[0] + r->n[1] > EO_PLAYERS_MAX || !winner_ok(r->winner))
        return EO_EINVAL;
    round_in in;
    in.na = r->n[0];
    in.nb = r->n[1];
    in.n = in.na + in.nb;
    double median = eo__roundlen_median(&f->lengths);
    int rc = check_members(f, r, median, &in);
    if (rc == 0)
        rc = check_key(f, r, &in);
    if (rc == 0)
        rc = reserve_round(f, &in);
    if (rc != 0)
        return rc;
    append_round(f, r, median, &in);
    eo__roundlen_add(&f->lengths, r);
    f->ready = false;
    f->bias_fitted = false;
    return 0;
}

/* ---- the link ---- */

/* ln(1 + e^x), without overflow. */
static double softplus(double x)
{
    double e = eo__exp(-fabs(x));
    return (x > 0.0 ? x : 0.0) + eo__log(1.0 + e);
}

/* ln Φ(x): for x far below 0 from erfcx, Φ(x) = erfcx(−x/√2)·e^(−x²/2)/2, which does not
 * underflow. */
static double log_cdf(double x)
{
    if (x > -5.0)
        return eo__log(eo__gauss_cdf(x));
    return eo__log(0.5 * eo__erfcx(-x * 0.7071067811865476)) - 0.5 * x * x;
}

/* The round's log likelihood at d, draws as half a win and half a loss. */
static void link_eval(bool probit, double d, uint8_t y2, link_val *out)
{
    double y = 0.5 * y2;
    if (!probit) {
        double e = eo__exp(-fabs(d));
        double p = d >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
        out->l = -(y * softplus(-d) + (1.0 - y) * softplus(d));
        out->d1 = y - p;
        out->d2 = p * (1.0 - p);
        return;
    }
    /* Φ link: a win is d ≥ 0 of a standard normal around d, a loss its mirror; v and w are
     * TrueSkill's corrections with no draw margin. */
    out->l = out->d1 = out->d2 = 0.0;
    if (y2 > 0) {
        double v, w;
        eo__gauss_vw_win(d, 0.0, &v, &w);
        out->l += y * log_cdf(d);
        out->d1 += y * v;
        out->d2 += y * w;
    }
    if (y2 < 2) {
        double v, w;
        eo__gauss_vw_win(-d, 0.0, &v, &w);
        out->l += (1.0 - y) * log_cdf(-d);
        out->d1 -= (1.0 - y) * v;
        out->d2 += (1.0 - y) * w;
    }
}

/* ---- passes ---- */

static double prior_l(const eo_fit *f, double s, double *d1, double *d2)
{
    if (f->gamma) {
        *d1 = (f->gk - 1.0) / s - 1.0 / f->gtheta;
        *d2 = (f->gk - 1.0) / (s * s);
        return (f->gk - 1.0) * eo__log(s) - s / f->gtheta;
    }
    double prec = 1.0 / (f->cfg.prior_sd * f->cfg.prior_sd);
    double z = s - f->cfg.prior_mean;
    *d1 = -z * prec;
    *d2 = prec;
    return -0.5 * z * z * prec;
}

/* The bias prior's precision for key @p k: `bias_prior` plays of the key's average information
 * (π's: `presence_prior` rounds of unequal presence), with a floor of 10⁻³ plays so that a
 * one-sided key stays finite when the prior is 0. */
static double key_prec(const eo_fit *f, size_t k)
{
    const bias_part *bp = &f->kp[k];
    double mean = bp->plays > 0 ? bp->info_sum / (double)bp->plays : 0.25;
    double given = f->pool.presence.on && k == PRESENCE_KEY ? f->pool.presence.prior
                                                            : f->pool.bias.prior;
    double prior = given > 1e-3 ? given : 1e-3;
    return prior * mean;
}

/* The log posterior at skills @p s and biases @p b, with gradient and curvature into @p g, @p h
 * and @p kg, @p kh. Fixed order: rounds in order, members A's then B's. @p ll receives the
 * likelihood part. */
static double pass(const eo_fit *f, const double *s, const double *b, double *g, double *h,
                   double *kg, double *kh, double *ll)
{
    memset(g, 0, f->np * sizeof *g);
    memset(h, 0, f->np * sizeof *h);
    if (f->nk > 0) {
        memset(kg, 0, f->nk * sizeof *kg);
        memset(kh, 0, f->nk * sizeof *kh);
    }
    double like = 0.0;
    for (size_t ri = 0; ri < f->nr; ri++) {
        const fit_round *fr = &f->r[ri];
        const uint32_t *m = f->member + fr->off;
        const double *w = fr->woff == NO_WEIGHTS ? NULL : f->weight + fr->woff;
        size_t na = fr->na, n = na + fr->nb;
        double sa = 0.0, sb = 0.0;
        for (size_t i = 0; i < na; i++)
            sa += (w ? w[i] : 1.0) * s[m[i]];
        for (size_t i = na; i < n; i++)
            sb += (w ? w[i] : 1.0) * s[m[i]];
        double d = fr->ca * sa - fr->cb * sb + fr->d0;
        if (fr->key >= 0)
            d += fr->cf * b[fr->key];
        if (f->pool.presence.on)
            d += fr->cf * fr->lf + fr->cp * b[PRESENCE_KEY];
        link_val lv;
        link_eval(f->probit, d, fr->y2, &lv);
        like += lv.l;
        for (size_t i = 0; i < n; i++) {
            double x = (i < na ? fr->ca : -fr->cb) * (w ? w[i] : 1.0);
            g[m[i]] += lv.d1 * x;
            h[m[i]] += lv.d2 * x * x;
        }
        if (fr->key >= 0) {
            kg[fr->key] += lv.d1 * fr->cf;
            kh[fr->key] += lv.d2 * fr->cf * fr->cf;
        }
        if (fr->cp != 0.0) {
            kg[PRESENCE_KEY] += lv.d1 * fr->cp;
            kh[PRESENCE_KEY] += lv.d2 * fr->cp * fr->cp;
        }
    }
    double post = like;
    for (size_t i = 0; i < f->np; i++) {
        double d1, d2;
        post += prior_l(f, s[i], &d1, &d2);
        g[i] += d1;
        h[i] += d2;
    }
    for (size_t k = 0; k < f->nk; k++) {
        double prec = key_prec(f, k);
        post -= 0.5 * b[k] * b[k] * prec;
        kg[k] -= b[k] * prec;
        kh[k] += prec;
    }
    *ll = like;
    return post;
}

/* The full Newton step of every value. A Gamma prior's
 * skill may fall at most 90 % of the way to 0, so every trial stays positive. */
static double newton_steps(eo_fit *f)
{
    double big = 0.0;
    for (size_t i = 0; i < f->np; i++) {
        double st = f->g[i] / f->h[i];
        if (f->gamma && st < -0.9 * f->s[i])
            st = -0.9 * f->s[i];
        f->step[i] = st;
        big = fmax(big, fabs(st));
    }
    for (size_t k = 0; k < f->nk; k++) {
        f->kstep[k] = f->kg[k] / f->kh[k];
        big = fmax(big, fabs(f->kstep[k]));
    }
    return big;
}

static void swap(double **x, double **y)
{
    double *t = *x;
    *x = *y;
    *y = t;
}

/* Σ grad·step over every value: the slope of the objective along the steps. */
static double slope(const eo_fit *f, const double *g, const double *kg)
{
    double d = 0.0;
    for (size_t i = 0; i < f->np; i++)
        d += g[i] * f->step[i];
    for (size_t k = 0; k < f->nk; k++)
        d += kg[k] * f->kstep[k];
    return d;
}

/* Evaluates the values + eta·steps: the objective into @p obj and the slope there into
 * @p dphi; the trial values, gradient and curvature wait in the trial arrays for accept(). */
static void try_step(eo_fit *f, double eta, double *obj, double *ll, double *dphi)
{
    for (size_t i = 0; i < f->np; i++)
        f->trial[i] = f->s[i] + eta * f->step[i];
    for (size_t k = 0; k < f->nk; k++)
        f->ktrial[k] = f->b[k] + eta * f->kstep[k];
    *obj = pass(f, f->trial, f->ktrial, f->g2, f->h2, f->kg2, f->kh2, ll);
    *dphi = slope(f, f->g2, f->kg2);
}

static void accept(eo_fit *f, double obj, double ll)
{
    swap(&f->s, &f->trial);
    swap(&f->b, &f->ktrial);
    swap(&f->g, &f->g2);
    swap(&f->h, &f->h2);
    swap(&f->kg, &f->kg2);
    swap(&f->kh, &f->kh2);
    f->objective = obj;
    f->logloss = -ll / (double)f->nr;
}

/* Largest and smallest factor of the Newton steps: per-player steps can be too short as well
 * as too long (players who always meet move together), but never need to be more than doubled
 * in practice, and below 2⁻⁴⁰ a step moves nothing. */
#define ETA_MAX 2.0
#define ETA_MIN 9.094947017729282e-13

/* One sweep's line search along the Newton steps. The objective along them, φ(η), is concave;
 * its slope is known at 0 (Σ g²/h) and, after a trial, at η, so the secant of the slopes
 * estimates the best η: exact when φ is quadratic. A trial is kept when its objective is not
 * below the current one and the secant agrees with it within 25 %; otherwise the secant's η
 * is tried, and failing both, η is halved until the objective does not fall. Returns the η
 * taken (0: none). */
static double line_search(eo_fit *f, double dphi0, eo_fit_sweep_stats *st)
{
    double eta = f->eta, obj, ll, dphi;
    try_step(f, eta, &obj, &ll, &dphi);
    st->passes++;
    double best = dphi < dphi0 ? eta * dphi0 / (dphi0 - dphi) : ETA_MAX;
    best = fmin(fmax(best, ETA_MIN), ETA_MAX);
    if (obj >= f->objective && fabs(best - eta) <= 0.25 * eta) {
        accept(f, obj, ll);
        f->eta = best;
        return eta;
    }
    double obj1 = obj, ll1 = ll;
    try_step(f, best, &obj, &ll, &dphi);
    st->passes++;
    if (obj >= f->objective && obj >= obj1) {
        accept(f, obj, ll);
        f->eta = best;
        return best;
    }
    if (obj1 >= f->objective) { /* the first trial was better: evaluate it again */
        try_step(f, eta, &obj, &ll, &dphi);
        st->passes++;
        accept(f, obj1, ll1);
        f->eta = eta;
        return eta;
    }
    for (eta = fmin(eta, best) * 0.5; eta >= ETA_MIN; eta *= 0.5) {
        try_step(f, eta, &obj, &ll, &dphi);
        st->passes++;
        if (obj >= f->objective) {
            accept(f, obj, ll);
            f->eta = eta;
            return eta;
        }
    }
    return 0.0;
}

void eo__fit_map_sweep(eo_fit *f, eo_fit_sweep_stats *st)
{
    double ll;
    if (!f->ready) {
        f->objective = pass(f, f->s, f->b, f->g, f->h, f->kg, f->kh, &ll);
        f->logloss = -ll / (double)f->nr;
        f->ready = true;
        st->passes++;
    }
    double big = newton_steps(f);
    if (big < f->cfg.tol) {
        st->max_change = big;
        st->converged = true;
    } else {
        double before = f->objective;
        st->step = line_search(f, slope(f, f->g, f->kg), st);
        st->max_change = st->step * big;
        /* No step raises the objective: the steps are at the rounding level of the optimum. */
        st->converged = !(f->objective > before);
    }
    st->objective = f->objective;
    st->logloss = f->logloss;
}

int eo_fit_sweep(eo_fit *f, eo_fit_sweep_stats *st)
{
    if (f == NULL || st == NULL)
        return EO_EINVAL;
    memset(st, 0, sizeof *st);
    if (f->nr == 0)
        return EO_ENOTFOUND;
    int rc = 0;
    if (f->cfg.method == EO_FIT_SMOOTH)
        rc = eo__fit_smooth_sweep(f, st);
    else
        eo__fit_map_sweep(f, st);
    if (rc == 0)
        st->sweep = ++f->sweeps;
    return rc;
}

int eo_fit_run(eo_fit *f, eo_fit_sweep_stats *last)
{
    if (f == NULL)
        return EO_EINVAL;
    eo_fit_sweep_stats st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    while (f->sweeps < f->cfg.max_sweeps) {
        rc = eo_fit_sweep(f, &st);
        if (rc != 0 || st.converged)
            break;
    }
    if (last != NULL)
        *last = st;
    return rc;
}

/* ---- results ---- */

size_t eo_fit_player_count(const eo_fit *f)
{
    return f != NULL ? f->np : 0;
}

/* MAP: the Laplace deviation of player @p i, from the curvature of the last pass at the current
 * values (before any pass, the prior's alone). Smoother: the deviation of his last marginal
 * (before any sweep, the prior's). */
static double sigma_of(const eo_fit *f, size_t i)
{
    if (f->cfg.method == EO_FIT_SMOOTH)
        return i < f->snp ? f->sd[i] : f->cfg.prior_sd;
    double d1, d2;
    double h = f->ready ? f->h[i] : (prior_l(f, f->s[i], &d1, &d2), d2);
    return 1.0 / sqrt(h);
}

int eo_fit_player_get(const eo_fit *f, size_t i, eo_fit_player *out)
{
    if (f == NULL || out == NULL || i >= f->np)
        return EO_EINVAL;
    out->id = eo__strmap_key(f->ids, (uint32_t)i);
    out->skill = f->s[i];
    out->sigma = sigma_of(f, i);
    out->rounds = f->rounds[i];
    return 0;
}

int eo_fit_lookup(const eo_fit *f, const char *id, eo_fit_player *out)
{
    if (f == NULL || id == NULL || out == NULL)
        return EO_EINVAL;
    size_t len = strnlen(id, EO_ID_MAX + 1);
    int64_t i =
        len <= EO_ID_MAX ? eo__strmap_find(f->ids, id, len, eo__strmap_hash(f->ids, id, len)) : -1;
    if (i >= 0)
        return eo_fit_player_get(f, (size_t)i, out);
    double d1, d2;
    (void)prior_l(f, f->mode, &d1, &d2);
    out->id = NULL;
    out->skill = f->mode;
    out->sigma = 1.0 / sqrt(d2);
    out->rounds = 0;
    return EO_ENOTFOUND;
}

size_t eo_fit_bias_count(const eo_fit *f)
{
    return f != NULL ? f->nk - (f->pool.presence.on ? 1 : 0) : 0;
}

int eo_fit_bias_get(const eo_fit *f, size_t i, eo_bias_key *key, double *value)
{
    if (f == NULL || i >= eo_fit_bias_count(f))
        return EO_EINVAL;
    i += f->pool.presence.on ? 1 : 0; /* past π's key */
    if (key != NULL) {
        key->map = f->kp[i].map;
        key->size = f->kp[i].size;
        key->mode = f->kp[i].mode;
    }
    if (value != NULL)
        *value = f->b[i];
    return 0;
}

double eo_fit_presence(const eo_fit *f)
{
    return f != NULL && f->pool.presence.on ? f->b[PRESENCE_KEY] : 0.0;
}

/* The key of round @p r's map (-1 for none, or a key the fit does not know). */
static int32_t key_of(const eo_fit *f, const eo_round *r)
{
    eo_bias_key key;
    char ktext[3 * (EO_ID_MAX + 2) + 1];
    size_t klen;
    if (eo_bias_key_of(&f->pool.bias, r->map, r->n[0], r->n[1], r->mode, &key) != 0 ||
        key_text(&key, ktext, sizeof ktext, &klen) != 0)
        return -1;
    return (int32_t)eo__strmap_find(f->keys, ktext, klen, eo__strmap_hash(f->keys, ktext, klen));
}

int eo_fit_predict(const eo_fit *f, const eo_round *r, double *p_a)
{
    if (f == NULL || r == NULL || p_a == NULL || r->n[0] == 0 || r->n[1] == 0 ||
        r->team[0] == NULL || r->team[1] == NULL || r->n[0] + r->n[1] > EO_PLAYERS_MAX)
        return EO_EINVAL;
    size_t na = r->n[0], n = na + r->n[1];
    double w[EO_PLAYERS_MAX] = {0}, s[EO_PLAYERS_MAX]; /* zeroed: GCC -O2 cannot see the loop fill it */
    eo_team_agg ta = {0}, tb = {0};
    double median = eo__roundlen_median(&f->lengths);
    for (size_t i = 0; i < n; i++) {
        const eo_member *m = i < na ? &r->team[0][i] : &r->team[1][i - na];
        if (m->id == NULL)
            return EO_EINVAL;
        eo_fit_player p;
        (void)eo_fit_lookup(f, m->id, &p);
        s[i] = p.skill;
        w[i] = f->unweighted ? 1.0 : eo_model_member_weight(f->model, r, m, median);
        eo_strength st = {p.skill, p.sigma * p.sigma};
        eo_team_agg_add(i < na ? &ta : &tb, &st, w[i]);
    }
    fit_round fr;
    coefs(f, w, na, r->n[1], &fr);
    fr.key = key_of(f, r);
    presence_of(f, r, median, &fr);
    double field = eo__fit_field(f, &fr);
    if (f->cfg.method == EO_FIT_SMOOTH) {
        *p_a = eo_model_predict(f->model, &ta, &tb, field);
        return 0;
    }
    double sa = 0.0, sb = 0.0;
    for (size_t i = 0; i < n; i++) {
        if (i < na)
            sa += w[i] * s[i];
        else
            sb += w[i] * s[i];
    }
    double d = fr.ca * sa - fr.cb * sb + fr.d0 + fr.cf * field;
    if (f->probit) {
        *p_a = eo__gauss_cdf(d);
    } else {
        double e = eo__exp(-fabs(d));
        *p_a = d >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    }
    return 0;
}
