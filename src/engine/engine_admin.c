/* Admin requests through the engine: new pools, and set / reset of a player, each logged so
 * that a fold of the log gives the same state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "evenodds/eo_codec.h"

int eo_engine_pool_create(eo_engine *e, const char *name, const char *model, const json_t *params,
                          int64_t now, eo_engine_error *err)
{
    if (e == NULL)
        return eo__engine_err(err, EO_EINVAL, 500, "internal", "", "missing argument");
    if (name == NULL || eo_id_check(name, strlen(name)) != 0)
        return eo__engine_err(err, EO_EINVAL, 400, "invalid_request", "name",
                              "a pool name is 1 to %d bytes of UTF-8 without control "
                              "characters",
                              EO_ID_MAX);
    if (model == NULL)
        model = "synelo";
    eo_pool_config cfg;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    if (eo_pool_config_from_json(model, params, &cfg, &rerr) != 0)
        return eo__engine_err(err, EO_EINVAL, 400, "invalid_request", rerr.field, "%s",
                              rerr.message);
    if (eo__engine_find(e, name) != NULL)
        return eo__engine_err(err, EO_EEXIST, 409, "pool_exists", "name",
                              "pool \"%.60s\" exists already", name);
    /* Every parameter is stored, defaults included: a later change of a default must not
     * change an existing pool, whose log was rated with the old value. */
    json_t *full = eo_pool_config_to_json(&cfg);
    char *text = full ? json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(full);
    eo_pool *pool = NULL;
    int rc = text ? eo_pool_create(&cfg, &pool) : EO_ENOMEM;
    if (rc) {
        free(text);
        return eo__engine_err(err, rc, 500, "internal", "", "%s", eo_strerror(rc));
    }
    bool own = false;
    rc = eo__engine_op_begin(e, &own, err);
    if (rc) {
        eo_pool_destroy(pool);
        free(text);
        return rc;
    }
    int64_t id = 0;
    const char *mname = eo_model_name(cfg.model.model);
    rc = eo_store_pool_create(e->store, name, mname ? mname : model, text, now, &id);
    free(text);
    if (rc == EO_EEXIST) {
        eo_pool_destroy(pool);
        /* another process created it since this engine loaded the store */
        rc = eo__engine_err(err, EO_EEXIST, 409, "pool_exists", "name",
                            "pool \"%.60s\" exists already", name);
        return eo__engine_op_end(e, own, rc, false, err);
    }
    if (rc) {
        eo_pool_destroy(pool);
        rc = eo__engine_err(err, rc == EO_ENOMEM ? EO_ENOMEM : EO_EIO, 500, "storage", "", "%s",
                            eo_store_errmsg(e->store));
        return eo__engine_op_end(e, own, rc, true, err);
    }
    rc = eo__engine_add(e, id, name, pool);
    if (rc) {
        eo_pool_destroy(pool);
        rc = eo__engine_err(err, rc, 500, "internal", "", "out of memory");
        return eo__engine_op_end(e, own, rc, true, err);
    }
    e->pools[e->npools - 1].created = true;
    return eo__engine_op_end(e, own, 0, false, err);
}

/* The pool of an admin edit and the player's id, checked. */
static int edit_target(eo_engine *e, const char *pool, const char *player, eo__epool **out,
                       eo_engine_error *err)
{
    if (e == NULL || pool == NULL)
        return eo__engine_err(err, EO_EINVAL, 500, "internal", "", "missing argument");
    eo__epool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    if (player == NULL || eo_id_check(player, strlen(player)) != 0)
        return eo__engine_err(err, EO_EINVAL, 400, "invalid_request", "player",
                              "a player id is 1 to %d bytes of UTF-8 without control "
                              "characters",
                              EO_ID_MAX);
    *out = p;
    return 0;
}

/* Logs the edit, applies it (set when @p set: mean @p rating, deviation @p sigma or < 0 to keep
 * it) and writes the player's row. */
static int edit(eo_engine *e, eo__epool *p, const char *player, bool set, double rating,
                double sigma, int64_t now, eo_engine_error *err)
{
    json_t *body = json_pack("{s:s}", "player", player);
    if (body != NULL && set) {
        /* Integral values as JSON integers: logs of integer-rated models read as before. */
        json_t *r = rating == floor(rating) && fabs(rating) < 9e15 ? json_integer((json_int_t)rating)
                                                                  : json_real(rating);
        if (json_object_set_new(body, "rating", r) != 0 ||
            (sigma >= 0 && json_object_set_new(body, "sigma", json_real(sigma)) != 0)) {
            json_decref(body);
            body = NULL;
        }
    }
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(body);
    if (text == NULL)
        return eo__engine_err(err, EO_ENOMEM, 500, "internal", "", "out of memory");
    bool own = false;
    int rc = eo__engine_op_begin(e, &own, err);
    if (rc) {
        free(text);
        return rc;
    }
    bool mutated = true; /* from the log append on, memory and store must move together */
    p->touched = true;
    rc = eo_store_log_append(e->store, p->id, set ? EO_LOG_SET : EO_LOG_RESET, NULL, text, NULL,
                             now, NULL);
    free(text);
    if (rc == 0) {
        int prc = set ? eo_pool_set_rating(p->pool, player, rating, sigma)
                      : eo_pool_reset_player(p->pool, player);
        if (prc != 0 && !(prc == EO_ENOTFOUND && !set))
            rc = eo__engine_err(err, prc, 500, "internal", "", "%s", eo_strerror(prc));
        else
            rc = eo__engine_put_player(e, p, player, now);
    }
    if (rc && (err == NULL || err->status == 0))
        rc = eo__engine_err(err, rc == EO_ENOMEM ? EO_ENOMEM : EO_EIO, 500, "storage", "", "%s",
                            eo_store_errmsg(e->store));
    return eo__engine_op_end(e, own, rc, mutated, err);
}

int eo_engine_set_rating(eo_engine *e, const char *pool, const char *player, double rating,
                         double sigma, int64_t now, eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    eo__epool *p = NULL;
    int rc = edit_target(e, pool, player, &p, err);
    if (rc)
        return rc;
    /* Ask the model on a scratch player first: an admin asking for a value the model cannot
     * hold is told so, and nothing is logged. */
    const eo_model_ctx *m = eo_pool_model(p->pool);
    uint64_t scratch[64];
    if (eo_model_state_size(m) > sizeof scratch)
        return eo__engine_err(err, EO_EINVAL, 500, "internal", "", "model state too large");
    eo_model_player_init(m, scratch);
    rc = eo_model_set(m, scratch, rating, sigma);
    eo_model_player_free(m, scratch);
    if (rc)
        return eo__engine_err(err, EO_ERANGE, 400, "invalid_request", "rating",
                              "outside the range of model \"%s\" (docs/MODELS.md)",
                              eo_model_name(eo_model_ctx_config(m)->model));
    return edit(e, p, player, true, rating, sigma, now, err);
}

int eo_engine_reset_player(eo_engine *e, const char *pool, const char *player, int64_t now,
                           eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    eo__epool *p = NULL;
    int rc = edit_target(e, pool, player, &p, err);
    if (rc)
        return rc;
    return edit(e, p, player, false, 0, -1, now, err);
}
