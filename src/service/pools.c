/* The pool table the HTTP threads read: name, store id and model parameters. The writer
 * publishes a pool into it once its creation is committed, so lookups and splits never touch
 * the engine and never wait for a batch. */
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"
#include "service/service.h"

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
    for (size_t i = 0; i < p->n; i++)
        eo_model_release((eo_model_ctx *)p->v[i].model);
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

int eo__pools_get(eo__pools *p, const char *name, eo__pool_info *out)
{
    int rc = EO_ENOTFOUND;
    pthread_rwlock_rdlock(&p->lock);
    long i = find(p, name);
    if (i >= 0) {
        *out = p->v[i];
        rc = 0;
    }
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

int eo__pools_put(eo__pools *p, const eo__pool_info *in)
{
    eo_model_ctx *model = NULL;
    int rc = eo_model_prepare(&in->cfg.model, &model, NULL);
    if (rc)
        return rc;
    pthread_rwlock_wrlock(&p->lock);
    long i = find(p, in->name);
    if (i >= 0)
        goto out; /* published already; model released below */
    if (p->n == p->cap) {
        size_t ncap = p->cap ? p->cap * 2 : 8;
        eo__pool_info *nv = realloc(p->v, ncap * sizeof *nv);
        if (!nv) {
            rc = EO_ENOMEM;
            goto out;
        }
        p->v = nv;
        p->cap = ncap;
    }
    size_t pos = (size_t)(-i - 1);
    memmove(p->v + pos + 1, p->v + pos, (p->n - pos) * sizeof *p->v);
    p->v[pos] = *in;
    p->v[pos].model = model;
    model = NULL;
    p->n++;
out:
    pthread_rwlock_unlock(&p->lock);
    eo_model_release(model);
    return rc;
}

int eo__pools_list(eo__pools *p, eo__pool_info **out, size_t *n)
{
    int rc = 0;
    pthread_rwlock_rdlock(&p->lock);
    *out = NULL;
    *n = p->n;
    if (p->n) {
        *out = malloc(p->n * sizeof **out);
        if (*out)
            memcpy(*out, p->v, p->n * sizeof **out);
        else
            rc = EO_ENOMEM;
    }
    pthread_rwlock_unlock(&p->lock);
    return rc;
}

json_t *eo__pool_json(const eo__pool_info *pi)
{
    const char *model = eo_model_name(pi->cfg.model.model);
    json_t *params = eo_pool_config_to_json(&pi->cfg);
    if (!params)
        return NULL;
    return json_pack("{s:s,s:s,s:o}", "name", pi->name, "model", model ? model : "unknown",
                     "params", params);
}

int eo__pool_info_from_engine(eo_engine *e, const char *name, eo__pool_info *out)
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
