/* Admin requests through the engine: new pools, and set / reset of a player, each logged so
 * that a fold of the log gives the same state. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "evenodds/eo_codec.h"

/* Logs pool @p name (its full parameters @p text, freed here) and adds @p pool (taken). */
static int store_pool(eo_engine *e, const char *name, const eo_pool_config *cfg, eo_pool *pool,
                      char *text, int64_t now, eo_engine_error *err)
{
    bool own = false;
    int rc = eo__engine_op_begin(e, &own, err);
    if (rc) {
        eo_pool_destroy(pool);
        free(text);
        return rc;
    }
    int64_t id = 0;
    const char *mname = eo_model_name(cfg->model.model);
    rc = mname ? eo_store_pool_create(e->store, name, mname, text, now, &id) : EO_EINTERNAL;
    free(text);
    if (rc == EO_EEXIST) {
        eo_pool_destroy(pool);
        /* another process created it since this engine loaded the store */
        rc = eo_engine_fail(err, EO_OP_POOL, EO_EEXIST, "name", "pool \"%.60s\" exists already",
                            name);
        return eo__engine_op_end(e, own, rc, false, NULL, err);
    }
    if (rc) {
        eo_pool_destroy(pool);
        rc = eo_engine_fail(err, EO_OP_POOL, rc == EO_EINTERNAL ? rc : EO_EIO, "", "%s",
                            eo_store_errmsg(e->store));
        return eo__engine_op_end(e, own, rc, true, NULL, err);
    }
    rc = eo__engine_add(e, id, name, pool);
    if (rc) {
        eo_pool_destroy(pool);
        rc = eo_engine_fail(err, EO_OP_POOL, rc, "", "out of memory");
        return eo__engine_op_end(e, own, rc, true, NULL, err);
    }
    e->pools[e->npools - 1].created = true;
    return eo__engine_op_end(e, own, 0, false, NULL, err);
}

int eo_engine_pool_create(eo_engine *e, const char *name, const char *model, const json_t *params,
                          int64_t now, eo_engine_error *err)
{
    eo_pool_config cfg;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    if (e == NULL)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINTERNAL, "", "missing argument");
    /* The name first: a bad name is told before bad parameters. */
    const char *rule = NULL;
    if (eo_pool_name_check(name, name != NULL ? strlen(name) : 0, &rule) != 0)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINVAL, "name", "%s", rule);
    if (eo_pool_config_from_json(model != NULL ? model : "synelo", params, &cfg, &rerr) != 0)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINVAL, rerr.field, "%s", rerr.message);
    return eo_engine_pool_create_config(e, name, &cfg, now, err);
}

int eo_engine_pool_create_config(eo_engine *e, const char *name, const eo_pool_config *cfg,
                                 int64_t now, eo_engine_error *err)
{
    if (e == NULL || cfg == NULL)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINTERNAL, "", "missing argument");
    /* Every creation passes here (the service's writer, import --create, serve
     * --default-pool), so the rule holds whatever a shell checked before. */
    const char *rule = NULL;
    if (eo_pool_name_check(name, name != NULL ? strlen(name) : 0, &rule) != 0)
        return eo_engine_fail(err, EO_OP_POOL, EO_EINVAL, "name", "%s", rule);
    if (eo__engine_find(e, name) != NULL)
        return eo_engine_fail(err, EO_OP_POOL, EO_EEXIST, "name",
                              "pool \"%.60s\" exists already", name);
    /* Every parameter is stored, defaults included: a later change of a default must not
     * change an existing pool, whose log was rated with the old value. */
    json_t *full = eo_pool_config_to_json(cfg);
    char *text = full ? json_dumps(full, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(full);
    eo_pool_config seeded = *cfg;
    seeded.id_seed = eo__seed_fresh(&seeded);
    eo_pool *pool = NULL;
    int rc = text ? eo_pool_create(&seeded, &pool) : EO_ENOMEM;
    if (rc) {
        free(text);
        return eo_engine_fail(err, EO_OP_POOL, rc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL, "",
                              "%s", eo_strerror(rc));
    }
    return store_pool(e, name, cfg, pool, text, now, err);
}

/* The pool of an admin edit and the player's id, checked. */
static int edit_target(eo_engine *e, const char *pool, const char *player, eo__stored_pool **out,
                       eo_engine_error *err)
{
    if (e == NULL || pool == NULL)
        return eo_engine_fail(err, EO_OP_EDIT, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    if (player == NULL || eo_id_check(player, strlen(player)) != 0)
        return eo_engine_fail(err, EO_OP_EDIT, EO_EINVAL, "player",
                              "a player id is 1 to %d bytes of UTF-8 without control "
                              "characters",
                              EO_ID_MAX);
    *out = p;
    return 0;
}

/* Logs the edit, applies it (set when @p set: mean @p rating, deviation @p sigma or < 0 to keep
 * it) and writes the player's row. */
static int edit(eo_engine *e, eo__stored_pool *p, const char *player, bool set, double rating,
                double sigma, int64_t now, eo_engine_error *err)
{
    json_t *body = json_pack("{s:s}", "player", player);
    if (body != NULL && set) {
        /* Integral values as JSON integers: logs of integer-rated models read as before. */
        json_t *r = rating == floor(rating) && fabs(rating) < 9e15
                        ? json_integer((json_int_t)rating)
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
        return eo_engine_fail(err, EO_OP_EDIT, EO_ENOMEM, "", "out of memory");
    bool own = false;
    int rc = eo__engine_op_begin(e, &own, err);
    if (rc) {
        free(text);
        return rc;
    }
    bool mutated = true; /* from the log append on, memory and store must move together */
    eo__stored_pool *changed = NULL;
    p->touched = true;
    rc = eo_store_log_append(e->store, p->id, set ? EO_LOG_SET : EO_LOG_RESET, NULL, text, NULL,
                             now, NULL);
    free(text);
    if (rc == 0) {
        changed = p;
        int prc = set ? eo_pool_set_rating(p->pool, player, rating, sigma)
                      : eo_pool_reset_player(p->pool, player);
        if (prc != 0 && !(prc == EO_ENOTFOUND && !set))
            rc = eo_engine_fail(err, EO_OP_EDIT, prc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL, "",
                                "%s", eo_strerror(prc));
        else
            rc = eo__engine_put_player(e, p, player, now);
    }
    if (rc && (err == NULL || err->status == 0))
        rc = eo_engine_fail(err, EO_OP_EDIT, EO_EIO, "", "%s",
                            eo_store_errmsg(e->store));
    return eo__engine_op_end(e, own, rc, mutated, changed, err);
}

int eo_engine_set_rating(eo_engine *e, const char *pool, const char *player, double rating,
                         double sigma, int64_t now, eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    eo__stored_pool *p = NULL;
    int rc = edit_target(e, pool, player, &p, err);
    if (rc)
        return rc;
    /* Checked against the model's range first: an admin asking for a value outside it is told
     * which field and what is allowed, and nothing is logged. */
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    rc = eo_model_check_set(eo_pool_model(p->pool), rating, sigma, &rerr);
    if (rc)
        return eo_engine_fail(err, EO_OP_EDIT, rc == EO_EINVAL ? EO_EINVAL : EO_ERANGE, rerr.field,
                              "%s", rerr.message);
    return edit(e, p, player, true, rating, sigma, now, err);
}

int eo_engine_reset_player(eo_engine *e, const char *pool, const char *player, int64_t now,
                           eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    eo__stored_pool *p = NULL;
    int rc = edit_target(e, pool, player, &p, err);
    if (rc)
        return rc;
    return edit(e, p, player, false, 0, -1, now, err);
}

typedef struct archive_ctx {
    eo_engine *e;
    const eo__stored_pool *p;
    const char *season;
    int64_t count;
} archive_ctx;

static int archive_one(void *ctx, const char *id, const eo_rating_view *v)
{
    archive_ctx *a = ctx;
    eo_player_row row;
    eo_player_row_of_view(v, &row);
    a->count++;
    return eo_store_standing_put(a->e->store, a->p->id, a->season, id, &row);
}

typedef struct rewrite_ctx {
    eo_engine *e;
    const eo__stored_pool *p;
    int64_t now;
} rewrite_ctx;

static int rewrite_one(void *ctx, const char *id, const eo_rating_view *v)
{
    rewrite_ctx *r = ctx;
    (void)v;
    return eo__engine_put_player(r->e, r->p, id, r->now);
}

int eo_engine_season(eo_engine *e, const char *pool, const char *season, double f, double s,
                     int64_t now, int64_t *players, eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    if (e == NULL || pool == NULL)
        return eo_engine_fail(err, EO_OP_SEASON, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    if (season == NULL || eo_id_check(season, strlen(season)) != 0)
        return eo_engine_fail(err, EO_OP_SEASON, EO_EINVAL, "name",
                              "a season name is 1 to %d bytes of UTF-8 without control "
                              "characters",
                              EO_ID_MAX);
    if (!(f >= 0.0 && f <= 1.0))
        return eo_engine_fail(err, EO_OP_SEASON, EO_EINVAL, "f",
                              "the pull toward the start value must be in [0, 1]");
    if (s < 0.0 && isfinite(s)) {
        eo_rating_view start;
        eo_pool_new_player_view(p->pool, now, &start);
        s = start.sigma / 3.0; /* the default: a third of a new player's deviation */
    }
    if (!(s >= 0.0 && isfinite(s)))
        return eo_engine_fail(err, EO_OP_SEASON, EO_EINVAL, "s",
                              "the deviation added must be a finite number >= 0");
    bool own = false;
    rc = eo__engine_op_begin(e, &own, err);
    if (rc)
        return rc;
    rc = eo_store_season_get(e->store, p->id, season, NULL, NULL);
    if (rc != EO_ENOTFOUND) {
        rc = rc == 0 ? eo_engine_fail(err, EO_OP_SEASON, EO_EEXIST, "name",
                                      "pool \"%.60s\" has a season \"%.60s\" already", pool,
                                      season)
                     : eo_engine_fail(err, EO_OP_SEASON, EO_EIO, "", "%s",
                                      eo_store_errmsg(e->store));
        return eo__engine_op_end(e, own, rc, false, NULL, err);
    }
    json_t *body = json_pack("{s:s,s:f,s:f}", "season", season, "f", f, "s", s);
    char *text = body ? json_dumps(body, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17))
                      : NULL;
    json_decref(body);
    if (text == NULL)
        return eo__engine_op_end(e, own, eo_engine_fail(err, EO_OP_SEASON, EO_ENOMEM, "",
                                                        "out of memory"),
                                 false, NULL, err);
    /* From the log append on, memory and store must move together. */
    p->touched = true;
    int64_t seq = 0;
    rc = eo_store_log_append(e->store, p->id, EO_LOG_SEASON, NULL, text, NULL, now, &seq);
    free(text);
    if (rc == 0)
        rc = eo_store_season_create(e->store, p->id, season, seq, now);
    archive_ctx a = {e, p, season, 0};
    if (rc == 0)
        rc = eo_pool_each_player(p->pool, now, archive_one, &a);
    if (rc == 0)
        rc = eo_pool_season_reset(p->pool, f, s, now);
    rewrite_ctx w = {e, p, now};
    if (rc == 0)
        rc = eo_pool_each_player(p->pool, now, rewrite_one, &w);
    if (rc)
        rc = eo_engine_fail(err, EO_OP_SEASON, EO_EIO, "", "%s",
                            eo_store_errmsg(e->store));
    else if (players != NULL)
        *players = a.count;
    return eo__engine_op_end(e, own, rc, true, p, err);
}

int eo_engine_refit(eo_engine *e, const char *pool, int64_t upto, const eo_refit_value *v,
                    size_t n, int64_t now, size_t *records, eo_engine_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    if (records != NULL)
        *records = 0;
    if (e == NULL || pool == NULL || (v == NULL && n > 0))
        return eo_engine_fail(err, EO_OP_REFIT, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    if (n == 0 || upto < 0)
        return eo_engine_fail(err, EO_OP_REFIT, EO_EINVAL, n == 0 ? "players" : "upto",
                              n == 0 ? "a refit sets at least one player"
                                     : "the log position must be >= 0");
    /* Every value is checked before anything is logged (eo_refit_apply() checks again on a
     * scratch player, and so changes nothing when one is refused). */
    const eo_model_ctx *m = eo_pool_model(p->pool);
    for (size_t i = 0; i < n && rc == 0; i++) {
        char field[64];
        snprintf(field, sizeof field, "players[%zu]", i);
        if (eo_id_check(v[i].id, strnlen(v[i].id, sizeof v[i].id)) != 0 ||
            strnlen(v[i].id, sizeof v[i].id) == sizeof v[i].id) {
            rc = eo_engine_fail(err, EO_OP_REFIT, EO_EINVAL, field,
                                "a player id is 1 to %d bytes of UTF-8 without control "
                                "characters", EO_ID_MAX);
            break;
        }
        eo_round_error rerr;
        memset(&rerr, 0, sizeof rerr);
        if (isinf(v[i].sigma) ||
            eo_model_check_set(m, v[i].mean, v[i].sigma, &rerr) != 0)
            rc = eo_engine_fail(err, EO_OP_REFIT, EO_ERANGE, field,
                                "player \"%.40s\": %s: %s", v[i].id,
                                rerr.field[0] ? rerr.field : "sigma",
                                rerr.message[0] ? rerr.message : "expected a finite number");
    }
    if (rc)
        return rc;
    bool own = false;
    rc = eo__engine_op_begin(e, &own, err);
    if (rc)
        return rc;
    /* From the first append on, memory and store must move together: a failure marks the
     * batch failed and its rollback refolds the pool. */
    p->touched = true;
    size_t nrec = 0;
    for (size_t off = 0; off < n && rc == 0; off += EO_REFIT_PLAYERS_MAX) {
        size_t k = n - off < EO_REFIT_PLAYERS_MAX ? n - off : EO_REFIT_PLAYERS_MAX;
        char *text = NULL;
        rc = eo_refit_to_text(upto, v + off, k, &text);
        if (rc == 0)
            rc = eo_store_log_append(e->store, p->id, EO_LOG_REFIT, NULL, text, NULL, now, NULL);
        free(text);
        if (rc == 0)
            rc = eo_refit_apply(p->pool, v + off, k, NULL);
        for (size_t i = off; i < off + k && rc == 0; i++)
            rc = eo__engine_put_player(e, p, v[i].id, now);
        nrec++;
    }
    if (rc)
        rc = eo_engine_fail(err, EO_OP_REFIT, EO_EIO, "", "%s",
                            eo_store_errmsg(e->store));
    else if (records != NULL)
        *records = nrec;
    return eo__engine_op_end(e, own, rc, true, p, err);
}
