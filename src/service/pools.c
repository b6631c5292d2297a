/* The pool table the HTTP threads read: name, store id and model parameters. The writer
 * publishes a pool into it once its creation is committed, so lookups and splits never touch
 * the engine and never wait for a batch. */
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "evenodds/eo_codec.h"
#include "service/service.h"

/* A pool's published bias: every key's figures (their strings the snapshot's own copies), in
 * the order of eo_bias_each(), what GET …/maps lists. */
struct eo__bias_snap {
    eo_pool_config cfg;
    size_t n, cap;
    eo_bias_stats *v;
    double presence; /* strength·π in logits (0 when presence is off) */
    /* Presence's and θ's estimates for the maps read; has_*: the pool keeps them. */
    eo_presence pres, partial;
    bool has_pres, has_partial;
};

static void snap_free(struct eo__bias_snap *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++) {
        free((char *)s->v[i].map);
        free((char *)s->v[i].mode);
    }
    free(s->v);
    free(s);
}

int eo__pools_init(eo__pools *p)
{
    memset(p, 0, sizeof *p);
    return pthread_rwlock_init(&p->lock, NULL) == 0 ? 0 : EO_ENOMEM;
}

void eo__pools_destroy(eo__pools *p)
{
    if (!p)
        return;
    pthread_rwlock_destroy(&p->lock);
    for (size_t i = 0; i < p->n; i++) {
        eo_model_release((eo_model_ctx *)p->v[i].model);
        snap_free(p->v[i].bias);
        eo__ratings_free(p->v[i].ratings);
    }
    for (size_t i = 0; i < p->nretired; i++)
        eo_model_release(p->retired[i]);
    free(p->retired);
    free(p->v);
    p->v = NULL;
    p->n = p->cap = 0;
}

/* Index of @p name, or where it would go (as -(pos) - 1). */
static long find(const eo__pools *p, const char *name)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(p->v[mid].name, name);
        if (c == 0)
            return (long)mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -(long)lo - 1;
}

int eo__pools_get(eo__pools *p, const char *name, eo__pool_facts *out)
{
    int rc = EO_ENOTFOUND;
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, name);
    if (i >= 0) {
        *out = p->v[i];
        out->bias = NULL;
        rc = 0;
    }
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

int eo__pools_put(eo__pools *p, const eo__pool_facts *in)
{
    eo_model_ctx *model = NULL;
    eo__ratings *ratings = NULL;
    int rc = eo_model_prepare(&in->cfg.model, &model, NULL);
    if (rc == 0 && (rc = eo__ratings_new(&ratings)) != 0)
        eo_model_release(model);
    if (rc)
        return rc;
    pthread_rwlock_wrlock(&p->lock);
    long i = find(p, in->name);
    if (i >= 0)
        goto out; /* published already; model released below */
    eo__pool_facts *nv = eo__grow(p->v, &p->cap, p->n + 1, sizeof *nv);
    if (!nv) {
        rc = EO_ENOMEM;
        goto out;
    }
    p->v = nv;
    size_t pos = (size_t)(-i - 1);
    memmove(p->v + pos + 1, p->v + pos, (p->n - pos) * sizeof *p->v);
    p->v[pos] = *in;
    p->v[pos].model = model;
    p->v[pos].bias = NULL;
    p->v[pos].ratings = ratings;
    model = NULL;
    ratings = NULL;
    p->n++;
out:
    pthread_rwlock_unlock(&p->lock);
    eo_model_release(model);
    eo__ratings_free(ratings);
    return rc;
}

int eo__pools_set_config(eo__pools *p, const char *name, const eo_pool_config *cfg)
{
    eo_model_ctx *model = NULL;
    int rc = eo_model_prepare(&cfg->model, &model, NULL);
    if (rc)
        return rc;
    pthread_rwlock_wrlock(&p->lock);
    long i = find(p, name);
    eo_model_ctx **r =
        i >= 0 ? eo__grow(p->retired, &p->capretired, p->nretired + 1, sizeof *r) : NULL;
    if (r != NULL) {
        p->retired = r;
        p->retired[p->nretired++] = (eo_model_ctx *)p->v[i].model;
        p->v[i].cfg = *cfg;
        p->v[i].model = model;
        model = NULL;
    }
    pthread_rwlock_unlock(&p->lock);
    eo_model_release(model); /* the new one, when nothing was replaced */
    return i < 0 ? EO_ENOTFOUND : r == NULL ? EO_ENOMEM : 0;
}

/* The ratings table of pool @p name (stable: entries are never removed), or NULL. */
static eo__ratings *ratings_of(eo__pools *p, const char *name)
{
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, name);
    eo__ratings *t = i >= 0 ? p->v[i].ratings : NULL;
    pthread_rwlock_unlock(&p->lock);
    return t;
}

int eo__pools_ratings_set(eo__pools *p, const char *name, const eo__rating_set *u, size_t n)
{
    eo__ratings *t = ratings_of(p, name);
    return t ? eo__ratings_set(t, u, n) : EO_ENOTFOUND;
}

/* One row at a time: with no reader yet, each call's switch of copies costs nothing. */
static int load_one(void *ctx, const char *id, const eo_player_row *row)
{
    eo__rating_set u = {id, true, row->mu, row->sigma * row->sigma};
    return eo__ratings_set(ctx, &u, 1);
}

int eo__pools_ratings_load(eo__pools *p, const char *name, eo_store *st, int64_t pool_id)
{
    eo__ratings *t = ratings_of(p, name);
    if (t == NULL)
        return EO_ENOTFOUND;
    int rc = eo_store_players_each(st, pool_id, load_one, t);
    if (rc != 0)
        eo__ratings_off(t);
    return rc;
}

void eo__pools_ratings_off(eo__pools *p)
{
    pthread_rwlock_rdlock(&p->lock);
    for (size_t i = 0; i < p->n; i++)
        eo__ratings_off(p->v[i].ratings);
    pthread_rwlock_unlock(&p->lock);
}

int eo__pools_list(eo__pools *p, eo__pool_facts **out, size_t *n)
{
    int rc = 0;
    pthread_rwlock_rdlock(&p->lock);
    *out = NULL;
    *n = p->n;
    if (p->n) {
        *out = malloc(p->n * sizeof **out);
        if (*out) {
            memcpy(*out, p->v, p->n * sizeof **out);
            for (size_t i = 0; i < p->n; i++)
                (*out)[i].bias = NULL;
        } else
            rc = EO_ENOMEM;
    }
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

/* Copies one key's figures into the snapshot @p ctx. */
static int snap_one(void *ctx, const eo_bias_stats *st)
{
    struct eo__bias_snap *s = ctx;
    eo_bias_stats *v = eo__grow(s->v, &s->cap, s->n + 1, sizeof *v);
    if (!v)
        return EO_ENOMEM;
    s->v = v;
    v[s->n] = *st; /* the size is a static bucket name */
    v[s->n].map = strdup(st->map);
    v[s->n].mode = st->mode ? strdup(st->mode) : NULL;
    s->n++;
    return !v[s->n - 1].map || (st->mode && !v[s->n - 1].mode) ? EO_ENOMEM : 0;
}

static struct eo__bias_snap *snap_of(const eo_pool *pool)
{
    struct eo__bias_snap *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->cfg = *eo_pool_get_config(pool);
    if (eo_bias_each(eo_pool_bias(pool), snap_one, s) != 0) {
        snap_free(s);
        return NULL;
    }
    const eo_presence *e = eo_pool_presence(pool), *th = eo_pool_partial(pool);
    s->presence = eo_presence_field(&s->cfg.presence, e, 1.0);
    s->has_pres = e != NULL;
    s->has_partial = th != NULL;
    if (e != NULL)
        s->pres = *e;
    if (th != NULL)
        s->partial = *th;
    return s;
}

int eo__pools_publish_bias(eo__pools *p, const char *name, const eo_pool *pool)
{
    if (!pool || (!eo_pool_bias(pool) && !eo_pool_presence(pool)))
        return 0;
    struct eo__bias_snap *s = snap_of(pool);
    if (!s)
        return EO_ENOMEM;
    pthread_rwlock_wrlock(&p->lock);
    long i = find(p, name);
    if (i >= 0) {
        struct eo__bias_snap *old = p->v[i].bias;
        p->v[i].bias = s;
        s = old;
    }
    pthread_rwlock_unlock(&p->lock);
    snap_free(s); /* the old one, or the new one of an unknown pool */
    return i >= 0 ? 0 : EO_ENOTFOUND;
}

static bool same(const char *x, const char *y)
{
    return x == NULL ? y == NULL : y != NULL && strcmp(x, y) == 0;
}

double eo__pools_field(eo__pools *p, const char *name, const char *map, size_t na, size_t nb,
                       const char *mode)
{
    double f = 0.0;
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, name);
    const struct eo__bias_snap *s = i >= 0 ? p->v[i].bias : NULL;
    eo_bias_key k;
    /* Linear: a pool has tens of maps, and a split costs far more. */
    if (s && eo_bias_key_of(&s->cfg.bias, map, na, nb, mode, &k) == 0) {
        for (size_t j = 0; j < s->n; j++) {
            const eo_bias_stats *e = &s->v[j];
            if (strcmp(e->map, k.map) == 0 && same(e->size, k.size) && same(e->mode, k.mode)) {
                f = e->applied;
                break;
            }
        }
    }
    pthread_rwlock_unlock(&p->lock);
    return f;
}

json_t *eo__pools_maps(eo__pools *p, const eo__pool_facts *pi)
{
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, pi->name);
    const struct eo__bias_snap *s = i >= 0 ? p->v[i].bias : NULL;
    json_t *doc = s ? eo_maps_to_json(pi->name, &s->cfg, s->v, s->n,
                                      s->has_pres ? &s->pres : NULL,
                                      s->has_partial ? &s->partial : NULL)
                    : eo_maps_to_json(pi->name, &pi->cfg, NULL, 0, NULL, NULL);
    pthread_rwlock_unlock(&p->lock);
    return doc;
}

double eo__pools_presence(eo__pools *p, const char *name)
{
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, name);
    double pi = i >= 0 && p->v[i].bias ? p->v[i].bias->presence : 0.0;
    pthread_rwlock_unlock(&p->lock);
    return pi;
}

int eo__pool_facts_from_engine(eo_engine *e, const char *name, eo__pool_facts *out)
{
    const eo_pool *pool = eo_engine_pool(e, name);
    eo_pool_row row;
    if (!pool)
        return EO_ENOTFOUND;
    memset(out, 0, sizeof *out);
    size_t n = strlen(name);
    if (n > EO_ID_MAX)
        return EO_EINVAL;
    memcpy(out->name, name, n + 1);
    out->cfg = *eo_pool_get_config(pool);
    memset(&row, 0, sizeof row);
    int rc = eo_store_pool_get(eo_engine_store(e), name, &row);
    if (rc != 0)
        return rc;
    out->id = row.id;
    eo_pool_row_free(&row);
    return 0;
}
