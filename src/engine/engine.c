/* The engine's pool table: loading pools by folding their logs, batches, and putting memory
 * back in step with the store after a batch that did not commit. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "engine/engine_internal.h"
#include "evenodds/eo_codec.h"

/* Rounds the indexes lack, folded before they are written (eo__ix_backlog_flush()). */
#define BACKLOG_MAX 2000
/* fold_one()'s answer when the backlog is full: the fold stops for a flush, then goes on. */
#define FOLD_PAUSE 1

typedef struct fold_ctx {
    eo_pool *pool;
    const char *name;
    eo_engine_error *err;
    /* at open only: the rounds after log entry `indexed` are also indexed (engine_index.c) */
    bool index;
    int64_t indexed;
    eo_member_result *members; /* the engine's scratch results */
    eo__ix_backlog *backlog;
    int64_t last_seq;          /* the last entry folded */
} fold_ctx;

static int fold_edit(fold_ctx *c, const eo_log_entry *le)
{
    json_error_t jerr;
    json_t *o = json_loads(le->body, EO_JSON_DECODE_FLAGS, &jerr);
    const char *player = o ? json_string_value(json_object_get(o, "player")) : NULL;
    json_t *rating = o ? json_object_get(o, "rating") : NULL;
    json_t *sigma = o ? json_object_get(o, "sigma") : NULL;
    int rc = 0;
    if (player == NULL || (le->kind == EO_LOG_SET && !json_is_number(rating)) ||
        (sigma != NULL && !json_is_number(sigma))) {
        rc = EO_EINVAL;
    } else if (le->kind == EO_LOG_SET) {
        rc = eo_pool_set_rating(c->pool, player, json_number_value(rating),
                                sigma != NULL ? json_number_value(sigma) : -1.0);
    } else {
        rc = eo_pool_reset_player(c->pool, player);
        if (rc == EO_ENOTFOUND)
            rc = 0; /* logged for the record; resetting an unknown player changes nothing */
    }
    json_decref(o);
    if (rc)
        return eo_engine_fail(c->err, EO_OP_ANY, EO_EIO, "",
                              "pool '%s': log entry %lld: bad admin edit: %s", c->name,
                              (long long)le->seq, eo_strerror(rc));
    return 0;
}

/* A season's soft reset, as eo_engine_season() applied it. */
static int fold_season(fold_ctx *c, const eo_log_entry *le)
{
    json_error_t jerr;
    json_t *o = json_loads(le->body, EO_JSON_DECODE_FLAGS, &jerr);
    json_t *f = o ? json_object_get(o, "f") : NULL;
    json_t *sd = o ? json_object_get(o, "s") : NULL;
    int rc = json_is_number(f) && json_is_number(sd)
                 ? eo_pool_season_reset(c->pool, json_number_value(f), json_number_value(sd),
                                        le->at)
                 : EO_EINVAL;
    json_decref(o);
    if (rc)
        return eo_engine_fail(c->err, EO_OP_ANY, EO_EIO, "",
                              "pool '%s': log entry %lld: bad season entry", c->name,
                              (long long)le->seq);
    return 0;
}

/* A refit record, as eo_engine_refit() applied it. */
static int fold_refit(fold_ctx *c, const eo_log_entry *le)
{
    eo_refit_record r;
    eo_round_error rerr;
    int rc = eo_refit_from_text(le->body, strlen(le->body), &r, &rerr);
    size_t bad = 0;
    if (rc == 0)
        rc = eo_refit_apply(c->pool, r.v, r.n, &bad);
    eo_refit_free(&r);
    if (rc == EO_ENOMEM)
        return eo_engine_fail(c->err, EO_OP_ANY, EO_ENOMEM, "", "out of memory");
    if (rc)
        return eo_engine_fail(c->err, EO_OP_ANY, EO_EIO, "",
                              "pool '%s': log entry %lld: bad refit record: %s%s%s", c->name,
                              (long long)le->seq, rerr.field, rerr.field[0] ? ": " : "",
                              rerr.field[0] ? rerr.message : eo_strerror(rc));
    return 0;
}

static int fold_one(void *ctx, const eo_log_entry *le)
{
    fold_ctx *c = ctx;
    if (le->kind == EO_LOG_SEASON)
        return fold_season(c, le);
    if (le->kind == EO_LOG_REFIT)
        return fold_refit(c, le);
    if (le->kind != EO_LOG_ROUND)
        return fold_edit(c, le);
    eo_round r;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    int rc = eo_round_from_text(le->body, strlen(le->body), &r, &rerr);
    if (rc)
        return eo_engine_fail(c->err, EO_OP_ANY, EO_EIO, "",
                              "pool '%s': log entry %lld: \"%s\": %s", c->name,
                              (long long)le->seq, rerr.field, rerr.message);
    eo_round_result res;
    bool index = c->index && le->seq > c->indexed;
    rc = eo_pool_apply(c->pool, &r, &res, index ? c->members : NULL);
    if (rc == 0 && index)
        rc = eo__ix_backlog_round(&c->backlog, &r, res.p_a, c->members, le->seq, le->at);
    eo_round_free(&r);
    if (rc)
        return eo_engine_fail(c->err, EO_OP_ANY, rc == EO_ENOMEM ? EO_ENOMEM : EO_EIO, "",
                              "pool '%s': log entry %lld: %s", c->name, (long long)le->seq,
                              eo_strerror(rc));
    c->last_seq = le->seq;
    return eo__ix_backlog_size(c->backlog) >= BACKLOG_MAX ? FOLD_PAUSE : 0;
}

/* Folds the whole log into c->pool; at open, indexes the rounds the indexes lack as it goes
 * (docs/STORE.md "Read indexes"). 0 or an EO_E code, with c->err filled by the callback's. */
static int fold_log(eo_engine *e, int64_t pool_id, fold_ctx *c)
{
    int rc = 0;
    if (c->index) {
        eo_round_ix last;
        rc = eo_store_round_ix_last(e->store, pool_id, &last);
        c->indexed = rc == 0 ? last.seq : 0;
        rc = rc == EO_ENOTFOUND ? 0 : rc;
    }
    int64_t after = 0;
    while (rc == 0) {
        c->last_seq = after;
        rc = eo_store_log_each(e->store, pool_id, after, fold_one, c);
        if ((rc == 0 || rc == FOLD_PAUSE) && eo__ix_backlog_flush(e, pool_id, c->backlog) != 0)
            rc = eo_engine_fail(c->err, EO_OP_ANY, EO_EIO, "", "pool '%s': indexing rounds: %s",
                                c->name, eo_store_errmsg(e->store));
        if (rc != FOLD_PAUSE)
            break;
        after = c->last_seq;
        rc = 0;
    }
    eo__ix_backlog_free(c->backlog);
    c->backlog = NULL;
    return rc;
}

/* Builds a pool from its row: the stored parameters, then the whole log in order; with
 * @p index, the rounds the read indexes lack are indexed on the way. */
static int load_pool(eo_engine *e, const eo_pool_row *row, bool index, eo_pool **out,
                     eo_engine_error *err)
{
    json_error_t jerr;
    json_t *params = json_loads(row->params_json, EO_JSON_DECODE_FLAGS, &jerr);
    eo_pool_config cfg;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    if (params == NULL || eo_pool_config_from_json(row->model, params, &cfg, &rerr) != 0) {
        json_decref(params);
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "",
                              "pool '%s': stored parameters are invalid: \"%s\": %s", row->name,
                              params ? rerr.field : "params",
                              params ? rerr.message : jerr.text);
    }
    json_decref(params);
    cfg.id_seed = eo__seed_fresh(&cfg);
    return eo__engine_fold(e, row->id, row->name, &cfg, index, out, err);
}

int eo__engine_fold(eo_engine *e, int64_t id, const char *name, const eo_pool_config *cfg,
                    bool index, eo_pool **out, eo_engine_error *err)
{
    eo_pool *pool = NULL;
    int rc = eo_pool_create(cfg, &pool);
    if (rc)
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "pool '%s': %s", name, eo_strerror(rc));
    fold_ctx c = {.pool = pool, .name = name, .err = err, .index = index, .members = e->members};
    rc = fold_log(e, id, &c);
    if (rc) {
        eo_pool_destroy(pool);
        /* log_each's own failures leave err unset; the callback's have filled it */
        if (err != NULL && err->status == 0)
            eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "pool '%s': %s", name,
                           eo_store_errmsg(e->store));
        return rc == EO_ENOMEM ? EO_ENOMEM : EO_EIO;
    }
    *out = pool;
    return 0;
}

/* Folds the pool again from what the store holds now. */
static int reload(eo_engine *e, eo__stored_pool *p, eo_engine_error *err)
{
    eo_pool_row row;
    int rc = eo_store_pool_get(e->store, p->name, &row);
    if (rc)
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "pool '%s': %s", p->name,
                              eo_store_errmsg(e->store));
    eo_pool *pool = NULL;
    rc = load_pool(e, &row, false, &pool, err);
    eo_pool_row_free(&row);
    if (rc)
        return rc;
    eo_pool_destroy(p->pool);
    p->pool = pool;
    return 0;
}

int eo__engine_add(eo_engine *e, int64_t id, const char *name, eo_pool *pool)
{
    eo__stored_pool *np = eo__grow(e->pools, &e->cap, e->npools + 1, sizeof *np);
    if (np == NULL)
        return EO_ENOMEM;
    e->pools = np;
    size_t n = strlen(name);
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return EO_ENOMEM;
    memcpy(copy, name, n + 1);
    eo__stored_pool *p = &e->pools[e->npools++];
    memset(p, 0, sizeof *p);
    p->id = id;
    p->name = copy;
    p->pool = pool;
    return 0;
}

static void drop_at(eo_engine *e, size_t i)
{
    eo_pool_destroy(e->pools[i].pool);
    free(e->pools[i].name);
    e->pools[i] = e->pools[--e->npools];
}

int eo_engine_open(eo_store *store, eo_engine **out, eo_engine_error *err)
{
    if (out == NULL || store == NULL) {
        eo_store_close(store);
        return eo_engine_fail(err, EO_OP_ANY, EO_EINTERNAL, "", "no store");
    }
    *out = NULL;
    eo_engine *e = calloc(1, sizeof *e);
    if (e == NULL) {
        eo_store_close(store);
        return eo_engine_fail(err, EO_OP_ANY, EO_ENOMEM, "", "out of memory");
    }
    e->store = store;
    eo_pool_row *rows = NULL;
    size_t n = 0;
    int rc = eo_store_pool_list(store, &rows, &n);
    if (rc) {
        eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "%s", eo_store_errmsg(store));
        rc = EO_EIO;
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        eo_pool *pool = NULL;
        rc = load_pool(e, &rows[i], !eo_store_readonly(store), &pool, err);
        if (rc == 0) {
            rc = eo__engine_add(e, rows[i].id, rows[i].name, pool);
            if (rc) {
                eo_pool_destroy(pool);
                eo_engine_fail(err, EO_OP_ANY, rc, "", "out of memory");
            }
        }
    }
    for (size_t i = 0; i < n; i++)
        eo_pool_row_free(&rows[i]);
    free(rows);
    if (rc) {
        eo_engine_close(e);
        return rc;
    }
    *out = e;
    return 0;
}

void eo_engine_close(eo_engine *e)
{
    if (e == NULL)
        return;
    while (e->npools > 0)
        drop_at(e, e->npools - 1);
    free(e->pools);
    free(e->written);
    free(e->written_ids);
    eo_store_close(e->store); /* an open batch is rolled back by the store */
    free(e);
}

eo_store *eo_engine_store(eo_engine *e)
{
    return e != NULL ? e->store : NULL;
}

static eo__stored_pool *find_entry(const eo_engine *e, const char *name)
{
    for (size_t i = 0; i < e->npools; i++)
        if (strcmp(e->pools[i].name, name) == 0)
            return &e->pools[i];
    return NULL;
}

eo__stored_pool *eo__engine_find(eo_engine *e, const char *name)
{
    eo__stored_pool *p = find_entry(e, name);
    /* Inside a batch a reload sees the batch's uncommitted writes. With isolation that is what
     * memory must hold (every call either kept or undone in the store); without it a later
     * failure could undo them, so the reload waits for the batch's end. A pool reloaded inside
     * a batch is touched: a failed commit folds it again. */
    if (p != NULL && p->pool == NULL &&
        (!e->in_batch || (e->isolate && !e->batch_failed)) && reload(e, p, NULL) == 0 &&
        e->in_batch)
        p->touched = true;
    return p;
}

int eo__engine_target(eo_engine *e, const char *name, eo__stored_pool **out, eo_engine_error *err)
{
    eo__stored_pool *p = eo__engine_find(e, name);
    if (p == NULL)
        return eo_engine_fail(err, EO_OP_ANY, EO_ENOTFOUND, "", "no pool \"%.60s\"", name);
    if (p->pool == NULL)
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "",
                              "pool \"%.60s\" could not be reloaded from the store", name);
    *out = p;
    return 0;
}

const eo_pool *eo_engine_pool(const eo_engine *e, const char *name)
{
    if (e == NULL || name == NULL)
        return NULL;
    const eo__stored_pool *p = find_entry(e, name);
    return p != NULL ? p->pool : NULL;
}

int eo_engine_begin(eo_engine *e)
{
    if (e == NULL || e->in_batch)
        return EO_EINVAL;
    int rc = eo_store_begin(e->store);
    if (rc)
        return rc == EO_ENOMEM ? EO_ENOMEM : EO_EIO;
    e->in_batch = true;
    e->batch_failed = false;
    e->nwritten = e->ids_len = 0;
    e->written_lost = e->written_ok = false;
    return 0;
}

/* After a rollback: pools created by the batch go away, pools it changed are folded again. */
static void restore(eo_engine *e)
{
    for (size_t i = e->npools; i-- > 0;) {
        eo__stored_pool *p = &e->pools[i];
        if (p->created) {
            drop_at(e, i);
            continue;
        }
        if (p->touched && reload(e, p, NULL) != 0) {
            /* Leave it unusable rather than wrong; eo__engine_find() retries the reload. */
            eo_pool_destroy(p->pool);
            p->pool = NULL;
        }
        p->touched = false;
    }
}

static void end_batch(eo_engine *e)
{
    for (size_t i = 0; i < e->npools; i++)
        e->pools[i].touched = e->pools[i].created = false;
    e->in_batch = false;
    e->batch_failed = false;
}

int eo_engine_rollback(eo_engine *e)
{
    if (e == NULL || !e->in_batch)
        return EO_EINVAL;
    eo_store_rollback(e->store);
    e->in_batch = false;
    restore(e);
    end_batch(e);
    return 0;
}

int eo_engine_commit(eo_engine *e)
{
    if (e == NULL || !e->in_batch)
        return EO_EINVAL;
    if (e->batch_failed) {
        eo_engine_rollback(e);
        return EO_EIO;
    }
    int rc = eo_store_commit(e->store); /* a failed commit is rolled back by the store */
    if (rc) {
        e->in_batch = false;
        restore(e);
        end_batch(e);
        return EO_EIO;
    }
    end_batch(e);
    e->written_ok = true;
    return 0;
}

/* Notes that the open batch wrote @p id's row in pool @p p (@p row NULL: deleted it); a note
 * that cannot be kept marks the record lost (eo_engine_written_each() then says so). */
static void note_written(eo_engine *e, const eo__stored_pool *p, const char *id,
                         const eo_player_row *row)
{
    size_t len = strlen(id) + 1;
    if (!e->written_track || e->written_lost)
        return;
    eo__written *nw = eo__grow(e->written, &e->capwritten, e->nwritten + 1, sizeof *nw);
    char *ni = nw ? eo__grow(e->written_ids, &e->ids_cap, e->ids_len + len, 1) : NULL;
    if (nw != NULL)
        e->written = nw;
    if (ni == NULL) {
        e->written_lost = true;
        return;
    }
    e->written_ids = ni;
    memcpy(e->written_ids + e->ids_len, id, len);
    eo__written *w = &e->written[e->nwritten++];
    memset(w, 0, sizeof *w);
    w->pool = (size_t)(p - e->pools);
    w->id = e->ids_len;
    w->deleted = row == NULL;
    if (row != NULL)
        w->row = *row;
    e->ids_len += len;
}

void eo_engine_isolate(eo_engine *e, bool on)
{
    if (e != NULL && !e->in_batch)
        e->isolate = on;
}

void eo_engine_track_written(eo_engine *e, bool on)
{
    if (e != NULL)
        e->written_track = on;
}

int eo_engine_written_each(eo_engine *e,
                           int (*fn)(void *ctx, const char *pool, const char *id,
                                     const eo_player_row *row),
                           void *ctx)
{
    if (e == NULL || fn == NULL || !e->written_track || e->in_batch || !e->written_ok)
        return EO_EINVAL;
    if (e->written_lost)
        return EO_ENOMEM;
    for (size_t i = 0; i < e->nwritten; i++) {
        const eo__written *w = &e->written[i];
        int rc = fn(ctx, e->pools[w->pool].name, e->written_ids + w->id,
                    w->deleted ? NULL : &w->row);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int eo__engine_op_begin(eo_engine *e, bool *own, eo_engine_error *err)
{
    *own = false;
    if (e->in_batch) {
        if (e->batch_failed)
            return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "",
                                  "an earlier update of this batch failed: %s",
                                  eo_store_errmsg(e->store));
        if (!e->isolate)
            return 0;
        int rc = eo_store_savepoint(e->store);
        if (rc) {
            e->batch_failed = true; /* the transaction itself may be gone */
            return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "%s",
                                  eo_store_errmsg(e->store));
        }
        e->mark_nwritten = e->nwritten;
        e->mark_ids_len = e->ids_len;
        e->mark_lost = e->written_lost;
        return 0;
    }
    int rc = eo_engine_begin(e);
    if (rc)
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "%s", eo_store_errmsg(e->store));
    *own = true;
    return 0;
}

/* Undoes one failed call of an isolated batch: the store back to its savepoint, the rows it
 * noted forgotten, @p changed folded again from the store. 0, or EO_EIO when the store could
 * not go back (the batch then cannot commit). A pool that cannot be folded again is left
 * unusable (NULL), as after a failed commit, and eo__engine_find() retries. */
static int undo_call(eo_engine *e, eo__stored_pool *changed)
{
    if (eo_store_rollback_to(e->store) != 0)
        return EO_EIO;
    e->nwritten = e->mark_nwritten;
    e->ids_len = e->mark_ids_len;
    e->written_lost = e->mark_lost;
    if (changed != NULL && reload(e, changed, NULL) != 0) {
        eo_pool_destroy(changed->pool);
        changed->pool = NULL;
    }
    return 0;
}

int eo__engine_op_end(eo_engine *e, bool own, int rc, bool mutated, eo__stored_pool *changed,
                      eo_engine_error *err)
{
    bool isolated = !own && e->in_batch && e->isolate && !e->batch_failed;
    if (rc != 0) {
        if (isolated && undo_call(e, mutated ? changed : NULL) != 0)
            e->batch_failed = true;
        else if (mutated && !isolated)
            e->batch_failed = true;
        if (own)
            eo_engine_rollback(e);
        return rc;
    }
    if (isolated && eo_store_release(e->store) != 0) {
        /* The call answers an error, yet what it wrote is still in the transaction: the batch
         * must not commit. */
        e->batch_failed = true;
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "%s", eo_store_errmsg(e->store));
    }
    if (own && eo_engine_commit(e) != 0)
        return eo_engine_fail(err, EO_OP_ANY, EO_EIO, "", "commit failed: %s",
                              eo_store_errmsg(e->store));
    return 0;
}

/* The player's row as the pool now shows it (false: the pool does not know him), noted in
 * the record of rows written. */
static bool row_now(eo_engine *e, const eo__stored_pool *p, const char *id, int64_t now,
                    eo_player_row *row)
{
    eo_rating_view v;
    if (eo_pool_lookup(p->pool, id, now, &v) == EO_ENOTFOUND) {
        note_written(e, p, id, NULL);
        return false;
    }
    eo_player_row_of_view(&v, row);
    note_written(e, p, id, row);
    return true;
}

int eo__engine_put_player(eo_engine *e, const eo__stored_pool *p, const char *id, int64_t now)
{
    eo_player_row row;
    if (!row_now(e, p, id, now, &row))
        return eo_store_player_delete(e->store, p->id, id);
    return eo_store_player_put(e->store, p->id, id, &row);
}

int eo__engine_put_played(eo_engine *e, const eo__stored_pool *p, const char *id, int64_t now,
                          const char *name, int64_t n, int64_t *prev)
{
    eo_player_row row;
    if (!row_now(e, p, id, now, &row)) /* a member is known once his round is rated */
        return EO_EINTERNAL;
    return eo_store_player_put_played(e->store, p->id, id, &row, name, n, prev);
}
