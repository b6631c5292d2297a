/* The in-memory pool: players interned by id (strmap index = player index), the model's state
 * per player, and the F6 quality counters. Both apply paths (by id and by handle) end in
 * apply_resolved(), so they give identical results. */
#include "evenodds/eo_pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/numeric.h"
#include "core/roundlen.h"
#include "core/strmap.h"

/* Player states live in one array of stride bytes (the model's state size), stamps beside. */
struct eo_pool {
    eo_pool_config cfg;
    eo_model_ctx *model;
    eo_bias *bias; /* NULL when the pool's bias is off */
    eo_presence presence; /* the running estimate of π (read only when presence is on) */
    eo_presence partial;  /* θ's sums (eo_presence_partial_share(); "partial" learn) */
    bool agg_unit;        /* team aggregates at weight 1 (agg_weight()) */
    eo__roundlen lengths; /* median round length (only when eo_model_wants_pool_length()) */
    size_t stride;
    eo__strmap *ids;
    unsigned char *states;
    uint64_t *stamps; /* apply serial that last saw each player: duplicate detection in O(1) */
    size_t cap;
    uint64_t serial;
    uint64_t rounds;
    double brier_sum;
    /* Last EO_POOL_RECENT rounds, oldest at recent_head. */
    double recent_p[EO_POOL_RECENT];
    uint8_t recent_o[EO_POOL_RECENT];
    uint32_t recent_head;
    uint32_t recent_len;
    /* Scratch for one round. */
    eo_participant part[EO_PLAYERS_MAX];
    eo_participant_info info[EO_PLAYERS_MAX]; /* commander, playtime (the hive model) */
    eo_model_update upd[EO_PLAYERS_MAX];
    uint32_t idx[EO_PLAYERS_MAX];
    /* eo_pool_apply_checked(): the model's range, and the participants' round-start states
     * (EO_PLAYERS_MAX * stride bytes, allocated on first use) to put back a refused round. */
    eo_model_range range;
    unsigned char *undo;
};

static inline void *state_of(const eo_pool *pool, size_t i)
{
    return pool->states + i * pool->stride;
}

void eo_pool_config_default(eo_pool_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    eo_model_config_default(EO_MODEL_SYNELO, &cfg->model);
    eo_bias_config_default(&cfg->bias);
    eo_presence_config_default(&cfg->presence);
}

int eo_pool_config_new(eo_model m, eo_pool_config *cfg)
{
    if (cfg == NULL)
        return EO_EINVAL;
    eo_pool_config_default(cfg);
    int rc = eo_model_config_new(m, &cfg->model);
    cfg->bias.by = EO_BIAS_MAP;
    cfg->presence.on = true;
    cfg->presence.partial = true;
    return rc;
}

const char *eo_pool_division(const eo_pool_config *cfg, double display)
{
    const char *name = NULL;
    for (size_t i = 0; i < cfg->ndivisions && cfg->divisions[i].from <= display; i++)
        name = cfg->divisions[i].name;
    return name;
}

/* Divisions: at most EO_DIVISIONS_MAX, named, finite and strictly ascending. */
static bool divisions_ok(const eo_pool_config *cfg)
{
    if (cfg->ndivisions > EO_DIVISIONS_MAX)
        return false;
    for (size_t i = 0; i < cfg->ndivisions; i++) {
        const eo_division *d = &cfg->divisions[i];
        if (d->name[0] == '\0' || memchr(d->name, '\0', sizeof d->name) == NULL ||
            !isfinite(d->from) || (i > 0 && !(d->from > cfg->divisions[i - 1].from)))
            return false;
    }
    return true;
}

int eo_pool_create(const eo_pool_config *cfg, eo_pool **out)
{
    if (cfg == NULL || out == NULL || !divisions_ok(cfg) ||
        eo_bias_config_check(&cfg->bias, NULL) != 0 ||
        eo_presence_config_check(&cfg->presence, NULL) != 0)
        return EO_EINVAL;
    eo_pool *p = calloc(1, sizeof *p);
    if (p == NULL)
        return EO_ENOMEM;
    int rc = eo_model_prepare(&cfg->model, &p->model, NULL);
    if (rc != 0) {
        free(p);
        return rc;
    }
    p->cfg = *cfg;
    p->cfg.model = *eo_model_ctx_config(p->model);
    p->stride = eo_model_state_size(p->model);
    p->agg_unit = cfg->presence.on && !eo_model_uses_weights(p->model);
    eo_model_range_of(p->model, &p->range);
    p->ids = eo__strmap_create(cfg->id_seed);
    if (p->ids == NULL ||
        (cfg->bias.by != EO_BIAS_OFF && eo_bias_create(&cfg->bias, &p->bias) != 0) ||
        (eo_model_wants_pool_length(p->model) && eo__roundlen_init(&p->lengths) != 0)) {
        eo__strmap_destroy(p->ids);
        eo_bias_destroy(p->bias);
        eo_model_release(p->model);
        free(p);
        return EO_ENOMEM;
    }
    *out = p;
    return 0;
}

void eo_pool_destroy(eo_pool *pool)
{
    if (pool == NULL)
        return;
    size_t n = eo__strmap_size(pool->ids);
    for (size_t i = 0; i < n; i++)
        eo_model_player_free(pool->model, state_of(pool, i));
    free(pool->states);
    free(pool->stamps);
    free(pool->undo);
    eo__strmap_destroy(pool->ids);
    eo_bias_destroy(pool->bias);
    eo__roundlen_free(&pool->lengths);
    eo_model_release(pool->model);
    free(pool);
}

const eo_pool_config *eo_pool_get_config(const eo_pool *pool)
{
    return &pool->cfg;
}

const eo_model_ctx *eo_pool_model(const eo_pool *pool)
{
    return pool->model;
}

static int64_t find(const eo_pool *pool, const char *id, size_t *len_out, uint64_t *hash_out)
{
    size_t len = strnlen(id, EO_ID_MAX + 1);
    uint64_t h = eo__strmap_hash(pool->ids, id, len);
    if (len_out != NULL) {
        *len_out = len;
        *hash_out = h;
    }
    if (len > EO_ID_MAX)
        return -1;
    return eo__strmap_find(pool->ids, id, len, h);
}

void eo_pool_new_player_view(const eo_pool *pool, int64_t now, eo_rating_view *out)
{
    /* A model state is at most a few hundred bytes; 8-byte aligned scratch on the stack. */
    uint64_t fresh[64];
    if (pool->stride > sizeof fresh) {
        memset(out, 0, sizeof *out);
        return;
    }
    eo_model_player_init(pool->model, fresh);
    eo_model_view(pool->model, fresh, now, out);
    eo_model_player_free(pool->model, fresh);
}

int eo_pool_lookup(const eo_pool *pool, const char *id, int64_t now, eo_rating_view *out)
{
    int64_t i = id != NULL ? find(pool, id, NULL, NULL) : -1;
    if (i < 0) {
        eo_pool_new_player_view(pool, now, out);
        return EO_ENOTFOUND;
    }
    eo_model_view(pool->model, state_of(pool, (size_t)i), now, out);
    return 0;
}

/* Room for @p extra more players, with @p bytes of id text, so that adding them cannot fail. */
static int reserve_players(eo_pool *pool, size_t extra, size_t bytes)
{
    size_t need = eo__strmap_size(pool->ids) + extra;
    if (need > pool->cap) {
        size_t cap = pool->cap ? pool->cap : 64;
        while (cap < need)
            cap *= 2;
        unsigned char *st = realloc(pool->states, cap * pool->stride);
        if (st == NULL)
            return EO_ENOMEM;
        pool->states = st;
        uint64_t *stamps = realloc(pool->stamps, cap * sizeof *stamps);
        if (stamps == NULL)
            return EO_ENOMEM;
        pool->stamps = stamps;
        pool->cap = cap;
    }
    return eo__strmap_reserve(pool->ids, extra, bytes) == 0 ? 0 : EO_ENOMEM;
}

/* Adds a player known to be absent, after reserve_players(). */
static uint32_t add_player(eo_pool *pool, const char *id, size_t len, uint64_t h)
{
    uint32_t i = (uint32_t)eo__strmap_insert(pool->ids, id, len, h);
    pool->stamps[i] = 0;
    eo_model_player_init(pool->model, state_of(pool, i));
    return i;
}

/* Forgets players added since the pool had @p n (undo of a failed apply). */
static void drop_players_from(eo_pool *pool, size_t n)
{
    for (size_t i = n; i < eo__strmap_size(pool->ids); i++)
        eo_model_player_free(pool->model, state_of(pool, i));
    eo__strmap_truncate(pool->ids, n);
}

/* A member's weight in the team aggregates: his partial-play weight @p w, or 1 for a model
 * that rates every member in full (SynElo), so that the aggregates' P(A) is the one the round
 * is rated with. Pools with presence off keep the weights they always summed (their bias
 * estimates stay as they were logged). */
static inline double agg_weight(const eo_pool *pool, double w)
{
    return pool->agg_unit ? 1.0 : w;
}

/* The round-start team aggregates of the participants in pool->part (A's then B's) at time
 * @p at. */
static void round_aggs(const eo_pool *pool, size_t na, size_t nb, int64_t at, eo_team_agg t[2])
{
    memset(t, 0, 2 * sizeof *t);
    for (size_t i = 0; i < na + nb; i++) {
        eo_strength s;
        eo_model_strength(pool->model, pool->part[i].st, at, &s);
        eo_team_agg_add(&t[i >= na], &s, agg_weight(pool, pool->part[i].w));
    }
}

/* Presence's part of a round's field (docs/MODELS.md "Presence"): with @p t the teams'
 * aggregates as the model rates them, @p lw their counts and summed weights as the aggregates
 * take them (what the level field removes), @p delta the difference of their presences and
 * @p base the rest of the field (the map bias), the level field into *level and, when the
 * presences differ, P(A) at base + level into *p0 and dP/dfield there into *g (what the round
 * teaches π). Returns level plus the presence term, the field that moves A's logit by
 * strength·π·Δ (eo_model_logit_field()); 0 when presence is off. */
static double presence_part(const eo_pool *pool, const eo_team_agg t[2], const eo_team_agg lw[2],
                            double delta, double base, double *level, double *p0, double *g)
{
    *level = 0.0;
    *p0 = 0.5;
    *g = 0.0;
    if (!pool->cfg.presence.on)
        return 0.0;
    *level = eo_model_level_field(pool->model, &lw[0], &lw[1]);
    if (delta == 0.0)
        return *level;
    double logit = eo_presence_field(&pool->cfg.presence, &pool->presence, delta);
    return *level + eo_model_logit_field(pool->model, &t[0], &t[1], base + *level, logit, p0, g);
}

/* The pool learns θ (docs/MODELS.md "Partial members"): presence on, "partial" learn, and
 * team aggregates that take the weights (not those of a model that rates every member in
 * full); a round teaches it when a member's weight is strictly between 0 and 1. */
static bool learns_partial(const eo_pool *pool)
{
    return pool->cfg.presence.on && pool->cfg.presence.partial && !pool->agg_unit;
}

/* A partial member's weight in the rating at share @p theta (eo_presence_partial_share()):
 * w + θ·(1 − w); a member of weight 0 stays out. */
static inline double mixed_weight(double w, double theta)
{
    return w > 0.0 ? w + theta * (1.0 - w) : 0.0;
}

/* What round @p raw teaches θ (docs/MODELS.md "Partial members"), from the round-start states
 * of pool->part: P(A) with every member counted by his time (θ = 0) into *p0, and the logit
 * that θ moves from 0 to 1 into *d, each with the rest of the field (@p base, the map bias)
 * and presence's term for presence difference @p delta. */
static void partial_lesson(const eo_pool *pool, size_t na, size_t nb, int64_t at, const double *raw,
                           double delta, double base, double *p0, double *d)
{
    eo_strength s[EO_PLAYERS_MAX];
    for (size_t i = 0; i < na + nb; i++)
        eo_model_strength(pool->model, pool->part[i].st, at, &s[i]);
    double p[2];
    for (int full = 0; full < 2; full++) {
        eo_team_agg t[2] = {{0}}, lw[2] = {{(double)na, 0, 0, 0, 0}, {(double)nb, 0, 0, 0, 0}};
        for (size_t i = 0; i < na + nb; i++) {
            double w = mixed_weight(raw[i], full);
            eo_team_agg_add(&t[i >= na], &s[i], w);
            lw[i >= na].w += w;
        }
        double level, q, g;
        double f = base + presence_part(pool, t, lw, delta, base, &level, &q, &g);
        p[full] = eo_model_predict(pool->model, &t[0], &t[1], f);
    }
    *p0 = p[0];
    *d = log(p[1] / (1.0 - p[1])) - log(p[0] / (1.0 - p[0]));
}

/* Presence's weights of the round in pool->part (A's @p na members, then B's @p nb): the
 * difference of the teams' presences (Σ w) into *delta; with presence on, each member's time
 * weight into @p raw, his weight mixed by θ (when the pool learns θ and some member played
 * part of the round) into pool->part[].w, and the teams' counts and summed weights as the
 * aggregates take them into @p lw (what the level field removes). Returns whether the round
 * teaches θ (partial_lesson()). */
static bool presence_weights(eo_pool *pool, size_t na, size_t nb, double *raw, eo_team_agg lw[2],
                             double *delta)
{
    size_t n = na + nb;
    double pw[2] = {0.0, 0.0};
    bool partial = false;
    memset(lw, 0, 2 * sizeof *lw);
    lw[0].n = (double)na;
    lw[1].n = (double)nb;
    for (size_t i = 0; pool->cfg.presence.on && i < n; i++) {
        pw[i >= na] += pool->part[i].w;
        partial |= pool->part[i].w > 0.0 && pool->part[i].w < 1.0;
    }
    *delta = pw[0] - pw[1];
    partial = partial && learns_partial(pool);
    double theta = partial ? eo_presence_partial_share(&pool->cfg.presence, &pool->partial) : 0.0;
    for (size_t i = 0; pool->cfg.presence.on && i < n; i++) {
        raw[i] = pool->part[i].w;
        pool->part[i].w = partial ? mixed_weight(raw[i], theta) : raw[i];
        lw[i >= na].w += pool->part[i].w;
    }
    return partial;
}

static bool finite_update(const eo_model_update *u)
{
    return isfinite(u->before) && isfinite(u->after) && isfinite(u->expected) &&
           isfinite(u->k) && isfinite(u->mu) && isfinite(u->sigma);
}

/* A view within the range @p r: finite, the mean in [lo, hi], the deviation up to sigma_max. */
static bool view_in_range(const eo_model_range *r, const eo_rating_view *v)
{
    bool ok = isfinite(v->display) && isfinite(v->mu) && isfinite(v->sigma) &&
              isfinite(v->volatility) && v->mu >= r->lo && v->mu <= r->hi &&
              (r->sigma_max == 0.0 || v->sigma <= r->sigma_max);
    for (int k = 0; k < EO_VIEW_EXTRA; k++)
        ok = ok && isfinite(v->extra[k]);
    return ok;
}

/* After a checked rate: the index of the first participant whose update left the model's
 * range or gave a non-finite value, or n when there is none. */
static size_t first_outside(const eo_pool *pool, size_t n, int64_t at, double p_a)
{
    const eo_model_range *r = &pool->range;
    for (size_t i = 0; i < n; i++) {
        if (!finite_update(&pool->upd[i]) || !isfinite(p_a))
            return i;
        if (!(pool->part[i].w > 0.0))
            continue; /* unchanged by the round (eo_model_rate()) */
        eo_rating_view v;
        eo_model_view(pool->model, pool->part[i].st, at, &v);
        if (!view_in_range(r, &v))
            return i;
    }
    return n;
}

/* Rates a round whose players are resolved to pool->idx[0 .. na+nb) and checked distinct, with
 * weights already in pool->part[].w; @p info NULL or pool->info filled for the round; @p map
 * and @p mode the round's (NULL: none) for the bias. With @p bad (pool->undo allocated, @p upd
 * pool->upd), the round is checked against the model's range and undone when it leaves it:
 * EO_ERANGE with *bad the participant. */
static int apply_resolved(eo_pool *pool, size_t na, size_t nb, const eo_participant_info *info,
                          const char *map, const char *mode, eo_winner winner, int64_t ended_at,
                          eo_round_result *res, eo_model_update *upd, size_t *bad)
{
    size_t n = na + nb;
    for (size_t i = 0; i < n; i++)
        pool->part[i].st = state_of(pool, pool->idx[i]);
    for (size_t i = 0; bad != NULL && i < n; i++)
        memcpy(pool->undo + i * pool->stride, pool->part[i].st, pool->stride);
    eo_bias_key key;
    bool biased = pool->bias != NULL &&
                  eo_bias_key_of(&pool->cfg.bias, map, na, nb, mode, &key) == 0;
    size_t slot = 0, keys_before = eo_bias_count(pool->bias);
    double field = 0.0, p0 = 0.5, g = 0.0;
    /* Presence; the aggregates (for a slope) when a field term is learnt from the round: the
     * map bias's, or presence's when the presences differ. */
    double raw[EO_PLAYERS_MAX], delta;
    eo_team_agg lw[2];
    bool partial = presence_weights(pool, na, nb, raw, lw, &delta);
    bool learn = pool->cfg.presence.on && delta != 0.0;
    eo_team_agg t[2];
    if (biased || learn)
        round_aggs(pool, na, nb, ended_at, t);
    int rc;
    if (biased) {
        rc = eo_bias_slot(pool->bias, &key, &slot);
        if (rc != 0)
            return rc;
        field = eo_bias_field(pool->bias, slot);
    }
    double level, pp0, pg, pres = presence_part(pool, t, lw, delta, field, &level, &pp0, &pg);
    double tp0 = 0.5, td = 0.0;
    if (partial)
        partial_lesson(pool, na, nb, ended_at, raw, delta, field, &tp0, &td);
    if (biased)
        eo_model_field_slope(pool->model, &t[0], &t[1], pres, &p0, &g);
    if (pool->cfg.presence.on)
        field += pres;
    double p_a;
    rc = eo_model_rate_info(pool->model, pool->part, na, pool->part + na, nb, info, winner,
                            field, ended_at, &p_a, upd);
    if (rc == 0 && bad != NULL && (*bad = first_outside(pool, n, ended_at, p_a)) < n) {
        for (size_t i = 0; i < n; i++)
            memcpy(pool->part[i].st, pool->undo + i * pool->stride, pool->stride);
        rc = EO_ERANGE;
    }
    if (rc != 0) {
        eo_bias_truncate(pool->bias, keys_before);
        return rc;
    }
    if (biased)
        (void)eo_bias_observe(pool->bias, slot, p0, g, winner); /* slot and winner are valid */
    if (learn)
        (void)eo_presence_observe(&pool->presence, delta, pp0, pg, winner);
    if (partial)
        (void)eo_presence_observe(&pool->partial, td, tp0, 1.0, winner);
    uint8_t o_half = winner == EO_WIN_A ? 2 : winner == EO_WIN_B ? 0 : 1;
    double d = p_a - 0.5 * o_half;
    pool->brier_sum += d * d;
    pool->rounds++;
    if (pool->recent_len < EO_POOL_RECENT) {
        uint32_t at = pool->recent_head + pool->recent_len++;
        pool->recent_p[at] = p_a;
        pool->recent_o[at] = o_half;
    } else {
        pool->recent_p[pool->recent_head] = p_a;
        pool->recent_o[pool->recent_head] = o_half;
        pool->recent_head = (pool->recent_head + 1) % EO_POOL_RECENT;
    }
    if (res != NULL) {
        res->p_a = p_a;
        res->n = n;
    }
    return 0;
}

static bool winner_ok(eo_winner w)
{
    return w == EO_WIN_A || w == EO_WIN_B || w == EO_DRAW;
}

/* The id of member @p i of @p r (A's then B's). */
static inline const char *member_id(const eo_round *r, size_t i)
{
    return i < r->n[0] ? r->team[0][i].id : r->team[1][i - r->n[0]].id;
}

/* Resolves the members of @p r to pool->idx[] (adding unknown players, whose count before is
 * *before) and fills pool->part[].w and pool->info[]. EO_EINVAL (a bad id, a player twice) or
 * EO_ENOMEM, the pool unchanged. Forced inline into apply_round(): as a call of its own (GCC
 * -O3 keeps it one) the replay's apply path was 3 % slower, measured side by side. */
static inline __attribute__((always_inline)) int resolve(eo_pool *pool, const eo_round *r,
                                                         size_t *before)
{
    size_t na = r->n[0];
    size_t n = na + r->n[1];
    uint64_t serial = ++pool->serial;
    /* Three passes over the members (hash, probe, check) rather than one, so that the cache
     * misses of 24 lookups overlap instead of queueing one after another. */
    size_t len[EO_PLAYERS_MAX];
    uint64_t hash[EO_PLAYERS_MAX];
    int64_t found[EO_PLAYERS_MAX];
    for (size_t i = 0; i < n; i++) {
        const char *id = member_id(r, i);
        if (id == NULL)
            return EO_EINVAL;
        len[i] = strnlen(id, EO_ID_MAX + 1);
        hash[i] = eo__strmap_hash(pool->ids, id, len[i]);
        eo__strmap_prefetch(pool->ids, hash[i]);
    }
    for (size_t i = 0; i < n; i++) {
        found[i] = len[i] <= EO_ID_MAX ? eo__strmap_find(pool->ids, member_id(r, i), len[i],
                                                         hash[i])
                                       : -1;
        if (found[i] >= 0)
            __builtin_prefetch(state_of(pool, (size_t)found[i]));
    }
    /* Unknown ids: their positions, to add them once all checks passed. */
    uint16_t newpos[EO_PLAYERS_MAX];
    size_t nnew = 0;
    size_t newbytes = 0;
    for (size_t i = 0; i < n; i++) {
        if (found[i] >= 0) {
            if (pool->stamps[found[i]] == serial)
                return EO_EINVAL; /* the same player twice in the round */
            pool->stamps[found[i]] = serial;
            pool->idx[i] = (uint32_t)found[i];
            continue;
        }
        const char *id = member_id(r, i);
        if (eo_id_check(id, len[i]) != 0)
            return EO_EINVAL;
        for (size_t j = 0; j < nnew; j++) {
            size_t o = newpos[j];
            if (len[o] == len[i] && memcmp(member_id(r, o), id, len[i]) == 0)
                return EO_EINVAL;
        }
        newpos[nnew++] = (uint16_t)i;
        newbytes += len[i] + 1;
    }
    *before = eo__strmap_size(pool->ids);
    if (nnew > 0) {
        if (reserve_players(pool, nnew, newbytes) != 0)
            return EO_ENOMEM;
        for (size_t j = 0; j < nnew; j++) {
            size_t i = newpos[j];
            pool->idx[i] = add_player(pool, member_id(r, i), len[i], hash[i]);
        }
    }
    double median = eo__roundlen_median(&pool->lengths);
    for (size_t i = 0; i < n; i++) {
        const eo_member *m = i < na ? &r->team[0][i] : &r->team[1][i - na];
        pool->part[i].w = eo_model_member_weight(pool->model, r, m, median);
        pool->info[i].commander = m->commander;
        pool->info[i].playtime = (m->has & EO_MEMBER_PLAYTIME) ? m->playtime : -1.0;
    }
    return 0;
}

/* Member @p i's entry from its update (rounds and visibility are left to the caller). */
static void member_of_update(const eo_pool *pool, const eo_round *r, size_t i,
                             eo_member_result *m)
{
    const eo_model_update *u = &pool->upd[i];
    m->id = member_id(r, i);
    m->before = u->before;
    m->rating = u->after;
    m->delta = u->after - u->before;
    m->expected = u->expected;
    m->k = u->k;
    m->mu = u->mu;
    m->sigma = u->sigma;
}

/* What the round did to each member, from pool->upd and the participants' states. */
static void fill_members(const eo_pool *pool, const eo_round *r, size_t n, int64_t at,
                         eo_member_result *members)
{
    for (size_t i = 0; i < n; i++) {
        eo_rating_view v;
        eo_model_view(pool->model, pool->part[i].st, at, &v);
        member_of_update(pool, r, i, &members[i]);
        members[i].rounds = v.rounds;
        members[i].visible = v.visible;
    }
}

/* eo_pool_apply() (@p bad NULL) and eo_pool_apply_checked(). */
static int apply_round(eo_pool *pool, const eo_round *r, eo_round_result *res,
                       eo_member_result *members, size_t *bad)
{
    if (pool == NULL || r == NULL || r->n[0] == 0 || r->n[1] == 0 ||
        r->n[0] + r->n[1] > EO_PLAYERS_MAX || !winner_ok(r->winner) ||
        r->team[0] == NULL || r->team[1] == NULL)
        return EO_EINVAL;
    size_t n = r->n[0] + r->n[1];
    size_t before = eo__strmap_size(pool->ids);
    int rc = resolve(pool, r, &before);
    if (rc != 0)
        return rc;
    int64_t ended = r->ended_at != 0 ? r->ended_at : r->started_at;
    rc = apply_resolved(pool, r->n[0], r->n[1], pool->info, r->map, r->mode, r->winner, ended,
                        res, members != NULL || bad != NULL ? pool->upd : NULL, bad);
    if (rc == EO_ERANGE && bad != NULL) {
        /* What the refused round made of the member: the state is back, the update is not. */
        memset(&members[*bad], 0, sizeof members[*bad]);
        member_of_update(pool, r, *bad, &members[*bad]);
    }
    if (rc != 0) {
        drop_players_from(pool, before);
        return rc;
    }
    eo__roundlen_add(&pool->lengths, r);
    if (members != NULL)
        fill_members(pool, r, n, ended, members);
    return 0;
}

int eo_pool_apply(eo_pool *pool, const eo_round *r, eo_round_result *res,
                  eo_member_result *members)
{
    return apply_round(pool, r, res, members, NULL);
}

int eo_pool_apply_checked(eo_pool *pool, const eo_round *r, eo_round_result *res,
                          eo_member_result *members, size_t *bad)
{
    size_t scratch;
    if (pool == NULL || members == NULL)
        return EO_EINVAL;
    if (pool->range.kept)
        return apply_round(pool, r, res, members, NULL);
    if (pool->undo == NULL && (pool->undo = malloc(EO_PLAYERS_MAX * pool->stride)) == NULL)
        return EO_ENOMEM;
    return apply_round(pool, r, res, members, bad != NULL ? bad : &scratch);
}

size_t eo_pool_outside_range(const eo_pool *pool, int64_t now, const char **first)
{
    size_t n = eo__strmap_size(pool->ids), count = 0;
    if (first != NULL)
        *first = NULL;
    for (size_t i = 0; i < n; i++) {
        eo_rating_view v;
        eo_model_view(pool->model, state_of(pool, i), now, &v);
        if (view_in_range(&pool->range, &v))
            continue;
        if (count++ == 0 && first != NULL)
            *first = eo__strmap_key(pool->ids, (uint32_t)i);
    }
    return count;
}

int eo_pool_predict(const eo_pool *pool, const eo_round *r, double *p_a)
{
    if (pool == NULL || r == NULL || p_a == NULL || r->n[0] == 0 || r->n[1] == 0 ||
        r->n[0] + r->n[1] > EO_PLAYERS_MAX || r->team[0] == NULL || r->team[1] == NULL)
        return EO_EINVAL;
    uint64_t fresh[64]; /* a new player's state, as in eo_pool_new_player_view() */
    if (pool->stride > sizeof fresh)
        return EO_EINVAL;
    eo_model_player_init(pool->model, fresh);
    int64_t at = r->ended_at != 0 ? r->ended_at : r->started_at;
    double median = eo__roundlen_median(&pool->lengths);
    /* the model's aggregates, their counts and weights (the level's), the presences */
    eo_team_agg t[2], lw[2];
    double pw[2] = {0.0, 0.0};
    memset(t, 0, sizeof t);
    memset(lw, 0, sizeof lw);
    double theta = eo_presence_partial_share(&pool->cfg.presence, eo_pool_partial(pool));
    int rc = 0;
    for (int side = 0; side < 2 && rc == 0; side++) {
        for (size_t i = 0; i < r->n[side]; i++) {
            const eo_member *m = &r->team[side][i];
            if (m->id == NULL) {
                rc = EO_EINVAL;
                break;
            }
            int64_t k = find(pool, m->id, NULL, NULL);
            eo_strength s;
            eo_model_strength(pool->model, k >= 0 ? state_of(pool, (size_t)k) : fresh, at, &s);
            double w = eo_model_member_weight(pool->model, r, m, median);
            double aw = eo_model_uses_weights(pool->model) ? mixed_weight(w, theta) : 1.0;
            eo_team_agg_add(&t[side], &s, aw);
            lw[side].n += 1.0;
            lw[side].w += pool->agg_unit ? w : aw;
            pw[side] += w;
        }
    }
    eo_model_player_free(pool->model, fresh);
    if (rc != 0)
        return rc;
    double field = 0.0, level, p0, g;
    (void)eo_pool_bias_field(pool, r->map, r->n[0], r->n[1], r->mode, &field);
    if (pool->cfg.presence.on)
        field += presence_part(pool, t, lw, pw[0] - pw[1], field, &level, &p0, &g);
    *p_a = eo_model_predict(pool->model, &t[0], &t[1], field);
    return 0;
}

int eo_pool_handle(eo_pool *pool, const char *id, eo_player_handle *out)
{
    if (pool == NULL || id == NULL || out == NULL)
        return EO_EINVAL;
    size_t len;
    uint64_t h;
    int64_t at = find(pool, id, &len, &h);
    if (at < 0) {
        int rc = eo_id_check(id, len);
        if (rc != 0)
            return rc;
        if (reserve_players(pool, 1, len + 1) != 0)
            return EO_ENOMEM;
        at = add_player(pool, id, len, h);
    }
    *out = (eo_player_handle)at;
    return 0;
}

int eo_pool_apply_handles(eo_pool *pool, const eo_player_handle *a, size_t na,
                          const eo_player_handle *b, size_t nb, eo_winner winner,
                          int64_t ended_at, eo_round_result *res, eo_model_update *updates)
{
    if (pool == NULL || a == NULL || b == NULL || na == 0 || nb == 0 ||
        na + nb > EO_PLAYERS_MAX || !winner_ok(winner))
        return EO_EINVAL;
    size_t count = eo__strmap_size(pool->ids);
    uint64_t serial = ++pool->serial;
    for (size_t i = 0; i < na + nb; i++) {
        eo_player_handle h = i < na ? a[i] : b[i - na];
        if (h < count)
            __builtin_prefetch(state_of(pool, h));
    }
    for (size_t i = 0; i < na + nb; i++) {
        eo_player_handle h = i < na ? a[i] : b[i - na];
        if (h >= count || pool->stamps[h] == serial)
            return EO_EINVAL;
        pool->stamps[h] = serial;
        pool->idx[i] = h;
        pool->part[i].w = 1.0;
    }
    int rc = apply_resolved(pool, na, nb, NULL, NULL, NULL, winner, ended_at, res, updates, NULL);
    return rc;
}

const char *eo_pool_handle_id(const eo_pool *pool, eo_player_handle h)
{
    if (pool == NULL || h >= eo__strmap_size(pool->ids))
        return NULL;
    return eo__strmap_key(pool->ids, h);
}

const eo_presence *eo_pool_presence(const eo_pool *pool)
{
    return pool != NULL && pool->cfg.presence.on ? &pool->presence : NULL;
}

int eo_pool_presence_field(const eo_pool *pool, const eo_team_agg *a, const eo_team_agg *b,
                           double base, double *field)
{
    if (pool == NULL || a == NULL || b == NULL || field == NULL)
        return EO_EINVAL;
    eo_team_agg t[2] = {*a, *b};
    eo_team_agg cw[2] = {{a->n, a->n, 0.0, 0.0, 0.0}, {b->n, b->n, 0.0, 0.0, 0.0}};
    double level, p0, g;
    *field = presence_part(pool, t, cw, a->n - b->n, isfinite(base) ? base : 0.0, &level, &p0, &g);
    return 0;
}

const eo_presence *eo_pool_partial(const eo_pool *pool)
{
    return pool != NULL && learns_partial(pool) ? &pool->partial : NULL;
}

const eo_bias *eo_pool_bias(const eo_pool *pool)
{
    return pool != NULL ? pool->bias : NULL;
}

int eo_pool_bias_field(const eo_pool *pool, const char *map, size_t na, size_t nb,
                       const char *mode, double *field)
{
    if (pool == NULL || field == NULL)
        return EO_EINVAL;
    eo_bias_key key;
    size_t slot;
    *field = 0.0;
    if (pool->bias != NULL &&
        eo_bias_key_of(&pool->cfg.bias, map, na, nb, mode, &key) == 0 &&
        eo_bias_find(pool->bias, &key, &slot) == 0)
        *field = eo_bias_field(pool->bias, slot);
    return 0;
}

int eo_pool_set_rating(eo_pool *pool, const char *id, double mu, double sigma)
{
    if (pool == NULL || !isfinite(mu) || isnan(sigma))
        return EO_EINVAL;
    size_t before = eo__strmap_size(pool->ids);
    eo_player_handle h;
    int rc = eo_pool_handle(pool, id, &h);
    if (rc != 0)
        return rc;
    rc = eo_model_set(pool->model, state_of(pool, h), mu, sigma);
    if (rc != 0)
        drop_players_from(pool, before); /* a refused value creates no player */
    return rc;
}

int eo_refit_apply(eo_pool *pool, const eo_refit_value *v, size_t n, size_t *bad)
{
    if (bad != NULL)
        *bad = 0;
    if (pool == NULL || (v == NULL && n > 0))
        return EO_EINVAL;
    /* Every value is tried on a scratch player first, so a refused one changes nothing: the
     * writer answers 400 before logging, and a fold never half-applies a record. */
    const eo_model_ctx *m = pool->model;
    void *scratch = malloc(eo_model_state_size(m));
    if (scratch == NULL)
        return EO_ENOMEM;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (eo_id_check(v[i].id, strlen(v[i].id)) != 0 || isnan(v[i].sigma)) {
            rc = EO_EINVAL;
        } else {
            eo_model_player_init(m, scratch);
            rc = eo_model_set(m, scratch, v[i].mean, v[i].sigma);
            eo_model_player_free(m, scratch);
        }
        if (rc != 0 && bad != NULL)
            *bad = i;
    }
    free(scratch);
    for (size_t i = 0; i < n && rc == 0; i++) {
        rc = eo_pool_set_rating(pool, v[i].id, v[i].mean, v[i].sigma);
        if (rc != 0 && bad != NULL)
            *bad = i;
    }
    return rc;
}

int eo_pool_reset_player(eo_pool *pool, const char *id)
{
    if (pool == NULL || id == NULL)
        return EO_EINVAL;
    int64_t at = find(pool, id, NULL, NULL);
    if (at < 0)
        return EO_ENOTFOUND;
    void *st = state_of(pool, (size_t)at);
    eo_model_player_free(pool->model, st);
    eo_model_player_init(pool->model, st);
    return 0;
}

int eo_pool_season_reset(eo_pool *pool, double f, double s, int64_t now)
{
    if (pool == NULL || !(f >= 0.0 && f <= 1.0) || !(s >= 0.0 && isfinite(s)))
        return EO_EINVAL;
    eo_rating_view start, v;
    eo_pool_new_player_view(pool, now, &start);
    bool deviation = eo_model_has_deviation(pool->model);
    bool integer = eo_model_integer_display(pool->model);
    size_t n = eo__strmap_size(pool->ids);
    for (size_t i = 0; i < n; i++) {
        void *st = state_of(pool, i);
        eo_model_view(pool->model, st, now, &v);
        double mu = v.mu, sigma = -1.0;
        if (deviation) {
            double grown = sqrt(v.sigma * v.sigma + s * s);
            sigma = grown < start.sigma ? grown : start.sigma;
        } else {
            mu = start.mu + f * (v.mu - start.mu);
            if (integer)
                mu = (double)eo__round_half_even(mu);
        }
        /* Between the start value and the player's own one: inside the model's range. */
        (void)eo_model_set(pool->model, st, mu, sigma);
    }
    return 0;
}

size_t eo_pool_player_count(const eo_pool *pool)
{
    return eo__strmap_size(pool->ids);
}

typedef struct keyed {
    const char *id;
    uint32_t idx;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    return strcmp(((const keyed *)x)->id, ((const keyed *)y)->id);
}

int eo_pool_each_player(const eo_pool *pool, int64_t now,
                        int (*fn)(void *ctx, const char *id, const eo_rating_view *v), void *ctx)
{
    size_t n = eo__strmap_size(pool->ids);
    if (n == 0)
        return 0;
    keyed *order = malloc(n * sizeof *order);
    if (order == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        order[i].id = eo__strmap_key(pool->ids, (uint32_t)i);
        order[i].idx = (uint32_t)i;
    }
    qsort(order, n, sizeof *order, cmp_keyed); /* ids are unique: the order is total */
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        eo_rating_view v;
        eo_model_view(pool->model, state_of(pool, order[i].idx), now, &v);
        rc = fn(ctx, order[i].id, &v);
    }
    free(order);
    return rc;
}

void eo_pool_get_quality(const eo_pool *pool, int64_t now, eo_pool_quality *q)
{
    memset(q, 0, sizeof *q);
    q->rounds = pool->rounds;
    q->players = eo__strmap_size(pool->ids);
    for (size_t i = 0; i < q->players; i++) {
        eo_rating_view v;
        eo_model_view(pool->model, state_of(pool, i), now, &v);
        q->visible_players += v.visible;
    }
    q->brier_all = pool->rounds ? pool->brier_sum / (double)pool->rounds : NAN;
    if (pool->recent_len == 0) {
        q->brier_recent = NAN;
        q->balance_recent = NAN;
        return;
    }
    double brier = 0.0;
    double bal = 0.0;
    for (uint32_t i = 0; i < pool->recent_len; i++) {
        uint32_t at = (pool->recent_head + i) % EO_POOL_RECENT;
        double d = pool->recent_p[at] - 0.5 * pool->recent_o[at];
        brier += d * d;
        bal += fabs(pool->recent_p[at] - 0.5);
    }
    q->brier_recent = brier / pool->recent_len;
    q->balance_recent = bal / pool->recent_len;
}
