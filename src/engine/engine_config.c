/* A pool's parameters changed after its creation (a re-tune's apply, docs/SERVICE.md "Tuning
 * a pool"): the stored configuration replaced and the whole log folded again under it, in one
 * transaction, so the pool stays the fold of its log under the parameters it stores. */
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "engine/seed.h"
#include "evenodds/eo_codec.h"

typedef struct rows_ctx {
    eo_engine *e;
    const eo__stored_pool *p;
    const eo_pool *other; /* NULL: every player; else only those it does not know */
    int64_t now;
    size_t n;
} rows_ctx;

static int put_row(void *ctx, const char *id, const eo_rating_view *v)
{
    rows_ctx *r = ctx;
    eo_rating_view seen;
    (void)v;
    if (r->other != NULL && eo_pool_lookup(r->other, id, r->now, &seen) != EO_ENOTFOUND)
        return 0;
    r->n++;
    return eo__engine_put_player(r->e, r->p, id, r->now);
}

/* Writes every player row of p->pool (just folded) and deletes those only @p old knew. */
static int rewrite_rows(eo_engine *e, const eo__stored_pool *p, const eo_pool *old, int64_t now,
                        size_t *players)
{
    rows_ctx all = {e, p, NULL, now, 0};
    int rc = eo_pool_each_player(p->pool, now, put_row, &all);
    rows_ctx gone = {e, p, p->pool, now, 0};
    if (rc == 0)
        rc = eo_pool_each_player(old, now, put_row, &gone);
    *players = all.n;
    return rc;
}

int eo_engine_pool_configure(eo_engine *e, const char *pool, const eo_pool_config *cfg, int64_t now,
                             size_t *players, eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    if (players != NULL)
        *players = 0;
    if (e == NULL || pool == NULL || cfg == NULL)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    eo_pool *check = NULL;
    if (eo_pool_create(cfg, &check) != 0)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINVAL, "params",
                              "the model refuses these parameters");
    eo_pool_destroy(check);
    /* Every parameter is stored, as at creation. */
    json_t *full = eo_pool_config_to_json(cfg);
    char *text = full ? json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(full);
    if (text == NULL)
        return eo_engine_fail(err, EO_OP_POOL, EO_ENOMEM, "", "out of memory");
    bool own = false;
    rc = eo__engine_op_begin(e, &own, err);
    if (rc) {
        free(text);
        return rc;
    }
    /* From the store's change on, memory and store must move together: a failure marks the
     * batch failed (or undoes this call alone) and the pool is folded again from the store. */
    p->touched = true;
    eo_pool *folded = NULL, *old = p->pool;
    size_t n = 0;
    rc = eo_store_pool_set_config(e->store, p->id, eo_model_name(cfg->model.model), text);
    free(text);
    /* The read indexes keep what each round gave when it was rated (docs/STORE.md "Read
     * indexes"): the fold under the new parameters does not rewrite them. */
    eo_pool_config seeded = *cfg;
    seeded.id_seed = eo__seed_fresh(&seeded);
    if (rc == 0)
        rc = eo__engine_fold(e, p->id, p->name, &seeded, false, &folded, err);
    if (rc == 0) {
        p->pool = folded;
        rc = rewrite_rows(e, p, old, now, &n);
        eo_pool_destroy(old);
    }
    if (rc != 0 && (err == NULL || err->status == 0))
        rc = eo_engine_fail(err, EO_OP_POOL, EO_EIO, "", "%s", eo_store_errmsg(e->store));
    if (rc == 0 && players != NULL)
        *players = n;
    return eo__engine_op_end(e, own, rc, true, p, err);
}
