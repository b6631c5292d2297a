/* eo_store: argument checks and dispatch to the backend chosen by the location. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_internal.h"

void eo__store_seterr(eo_store *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->errmsg, sizeof s->errmsg, fmt, ap);
    va_end(ap);
}

static void put_err(char *err, size_t errlen, const char *msg)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s", msg);
}

static int has_prefix(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

int eo_store_open(const char *location, unsigned flags, eo_store **out, char *err, size_t errlen)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    if (location == NULL || location[0] == '\0') {
        put_err(err, errlen, "no store location given");
        return EO_EINVAL;
    }
    if ((flags & ~(unsigned)(EO_STORE_READONLY | EO_STORE_SYNC_FULL)) != 0) {
        put_err(err, errlen, "unknown store flags");
        return EO_EINVAL;
    }
    /* A URL names a server backend; everything else is an SQLite file path. */
    if (has_prefix(location, "postgres://") || has_prefix(location, "postgresql://")) {
        put_err(err, errlen, "the PostgreSQL backend is not built into this program yet");
        return EO_EINVAL;
    }
    return eo__sqlite_open(location, flags, out, err, errlen);
}

void eo_store_close(eo_store *s)
{
    if (s != NULL)
        s->ops->close(s);
}

const char *eo_store_errmsg(eo_store *s)
{
    return s != NULL ? s->errmsg : "no store handle";
}

int eo_store_schema_version(eo_store *s, int *version)
{
    if (s == NULL || version == NULL)
        return EO_EINVAL;
    return s->ops->schema_version(s, version);
}

int eo_store_begin(eo_store *s)
{
    return s != NULL ? s->ops->begin(s) : EO_EINVAL;
}

int eo_store_commit(eo_store *s)
{
    return s != NULL ? s->ops->commit(s) : EO_EINVAL;
}

int eo_store_rollback(eo_store *s)
{
    return s != NULL ? s->ops->rollback(s) : EO_EINVAL;
}

int eo_store_probe(eo_store *s)
{
    if (s == NULL || (s->flags & EO_STORE_READONLY))
        return EO_EINVAL;
    return s->ops->probe(s);
}

bool eo_store_readonly(eo_store *s)
{
    return s == NULL || (s->flags & EO_STORE_READONLY) || s->ops->readonly(s);
}

int eo_store_savepoint(eo_store *s)
{
    return s != NULL ? s->ops->savepoint(s) : EO_EINVAL;
}

int eo_store_release(eo_store *s)
{
    return s != NULL ? s->ops->release(s) : EO_EINVAL;
}

int eo_store_rollback_to(eo_store *s)
{
    return s != NULL ? s->ops->rollback_to(s) : EO_EINVAL;
}

void eo_pool_row_free(eo_pool_row *row)
{
    if (row == NULL)
        return;
    free(row->name);
    free(row->model);
    free(row->params_json);
    memset(row, 0, sizeof *row);
}

int eo_store_pool_create(eo_store *s, const char *name, const char *model, const char *params_json,
                         int64_t created_at, int64_t *id)
{
    if (s == NULL || name == NULL || model == NULL || params_json == NULL)
        return EO_EINVAL;
    int64_t dummy;
    return s->ops->pool_create(s, name, model, params_json, created_at, id ? id : &dummy);
}

int eo_store_pool_get(eo_store *s, const char *name, eo_pool_row *out)
{
    if (s == NULL || name == NULL || out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    return s->ops->pool_get(s, name, out);
}

int eo_store_pool_list(eo_store *s, eo_pool_row **rows, size_t *n)
{
    if (s == NULL || rows == NULL || n == NULL)
        return EO_EINVAL;
    *rows = NULL;
    *n = 0;
    return s->ops->pool_list(s, rows, n);
}

int eo_store_pool_set_config(eo_store *s, int64_t pool_id, const char *model,
                             const char *params_json)
{
    if (s == NULL || model == NULL || params_json == NULL)
        return EO_EINVAL;
    return s->ops->pool_set_config(s, pool_id, model, params_json);
}

int eo_store_log_append(eo_store *s, int64_t pool_id, eo_log_kind kind, const char *round_id,
                        const char *body, const char *response, int64_t at, int64_t *seq)
{
    if (s == NULL || body == NULL)
        return EO_EINVAL;
    if (kind != EO_LOG_ROUND && kind != EO_LOG_SET && kind != EO_LOG_RESET &&
        kind != EO_LOG_SEASON && kind != EO_LOG_REFIT)
        return EO_EINVAL;
    /* Only rounds carry an id: it is the idempotency key, edits have none. */
    if ((kind == EO_LOG_ROUND) != (round_id != NULL))
        return EO_EINVAL;
    int64_t dummy;
    return s->ops->log_append(s, pool_id, kind, round_id, body, response, at,
                              seq ? seq : &dummy);
}

int eo_store_round_find(eo_store *s, int64_t pool_id, const char *round_id, char **body,
                        char **response)
{
    if (s == NULL || round_id == NULL)
        return EO_EINVAL;
    if (body != NULL)
        *body = NULL;
    if (response != NULL)
        *response = NULL;
    return s->ops->round_find(s, pool_id, round_id, body, response);
}

int eo_store_log_each(eo_store *s, int64_t pool_id, int64_t after,
                      int (*fn)(void *ctx, const eo_log_entry *e), void *ctx)
{
    if (s == NULL || fn == NULL)
        return EO_EINVAL;
    return s->ops->log_each(s, pool_id, after, fn, ctx);
}

int eo_store_round_count(eo_store *s, int64_t pool_id, int64_t *n)
{
    if (s == NULL || n == NULL)
        return EO_EINVAL;
    return s->ops->round_count(s, pool_id, n);
}

void eo_player_row_of_view(const eo_rating_view *v, eo_player_row *out)
{
    memset(out, 0, sizeof *out);
    out->rating = v->display;
    out->mu = v->mu;
    out->sigma = v->sigma;
    out->volatility = v->volatility;
    out->rounds = v->rounds;
    out->visible = v->visible;
    out->last_ended_at = v->last_ended_at;
    memcpy(out->extra, v->extra, sizeof out->extra);
}

int eo_store_player_put(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row)
{
    if (s == NULL || id == NULL || row == NULL)
        return EO_EINVAL;
    return s->ops->player_put(s, pool_id, id, row);
}

int eo_store_player_get(eo_store *s, int64_t pool_id, const char *id, eo_player_row *out)
{
    if (s == NULL || id == NULL || out == NULL)
        return EO_EINVAL;
    return s->ops->player_get(s, pool_id, id, out);
}

int eo_store_player_delete(eo_store *s, int64_t pool_id, const char *id)
{
    if (s == NULL || id == NULL)
        return EO_EINVAL;
    return s->ops->player_delete(s, pool_id, id);
}

int eo_store_players_each(eo_store *s, int64_t pool_id,
                          int (*fn)(void *ctx, const char *id, const eo_player_row *row),
                          void *ctx)
{
    if (s == NULL || fn == NULL)
        return EO_EINVAL;
    return s->ops->players_each(s, pool_id, fn, ctx);
}

int eo_store_season_create(eo_store *s, int64_t pool_id, const char *name, int64_t seq,
                           int64_t at)
{
    if (s == NULL || name == NULL)
        return EO_EINVAL;
    return s->ops->season_create(s, pool_id, name, seq, at);
}

int eo_store_season_get(eo_store *s, int64_t pool_id, const char *name, int64_t *seq,
                        int64_t *at)
{
    if (s == NULL || name == NULL)
        return EO_EINVAL;
    return s->ops->season_get(s, pool_id, name, seq, at);
}

int eo_store_seasons_each(eo_store *s, int64_t pool_id,
                          int (*fn)(void *ctx, const char *name, int64_t seq, int64_t at,
                                    int64_t players),
                          void *ctx)
{
    if (s == NULL || fn == NULL)
        return EO_EINVAL;
    return s->ops->seasons_each(s, pool_id, fn, ctx);
}

int eo_store_standing_put(eo_store *s, int64_t pool_id, const char *season, const char *player,
                          const eo_player_row *row)
{
    if (s == NULL || season == NULL || player == NULL || row == NULL)
        return EO_EINVAL;
    return s->ops->standing_put(s, pool_id, season, player, row);
}

int eo_store_standings_each(eo_store *s, int64_t pool_id, const char *season, int64_t offset,
                            int64_t limit,
                            int (*fn)(void *ctx, const char *player, const eo_player_row *row),
                            void *ctx)
{
    if (s == NULL || season == NULL || fn == NULL || offset < 0 || limit < 0)
        return EO_EINVAL;
    return s->ops->standings_each(s, pool_id, season, offset, limit, fn, ctx);
}

int eo_store_player_put_played(eo_store *s, int64_t pool_id, const char *id,
                               const eo_player_row *row, const char *name, int64_t n,
                               int64_t *prev)
{
    if (s == NULL || id == NULL || row == NULL || prev == NULL || n <= 0)
        return EO_EINVAL;
    return s->ops->player_put_played(s, pool_id, id, row, name, n, prev);
}

int eo_store_player_last(eo_store *s, int64_t pool_id, const char *id, int64_t *last)
{
    if (s == NULL || id == NULL || last == NULL)
        return EO_EINVAL;
    return s->ops->player_last(s, pool_id, id, last);
}

int eo_store_player_link(eo_store *s, int64_t pool_id, const char *id, const char *name,
                         int64_t last, int64_t prev)
{
    if (s == NULL || id == NULL || last < 0 || prev < 0)
        return EO_EINVAL;
    return s->ops->player_link(s, pool_id, id, name, last, prev);
}

int eo_store_round_ix_put(eo_store *s, int64_t pool_id, const eo_round_ix *r,
                          const char *const *ids, const eo_member_ix *m, size_t count)
{
    if (s == NULL || r == NULL || (count > 0 && (ids == NULL || m == NULL)))
        return EO_EINVAL;
    return s->ops->round_ix_put(s, pool_id, r, ids, m, count);
}

int eo_store_round_ix_last(eo_store *s, int64_t pool_id, eo_round_ix *out)
{
    if (s == NULL || out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    return s->ops->round_ix_last(s, pool_id, out);
}

int eo_store_health_add(eo_store *s, int64_t pool_id, int64_t day, int bin,
                        const eo_eval_sums *d)
{
    if (s == NULL || d == NULL || bin < 0 || bin >= EO_EVAL_CALIB_BINS)
        return EO_EINVAL;
    return s->ops->health_add(s, pool_id, day, bin, d);
}

int eo_store_player_name_get(eo_store *s, int64_t pool_id, const char *id, char **name)
{
    if (s == NULL || id == NULL || name == NULL)
        return EO_EINVAL;
    *name = NULL;
    return s->ops->player_name_get(s, pool_id, id, name);
}

int eo_store_board_count(eo_store *s, int64_t pool_id, int64_t *n)
{
    if (s == NULL || n == NULL)
        return EO_EINVAL;
    return s->ops->board_count(s, pool_id, n);
}

int eo_store_board_each(eo_store *s, int64_t pool_id, const char *q, int64_t offset,
                        int64_t limit,
                        int (*fn)(void *ctx, int64_t rank, const char *id, const char *name,
                                  const eo_player_row *row),
                        void *ctx)
{
    if (s == NULL || fn == NULL || offset < 0 || limit <= 0)
        return EO_EINVAL;
    return s->ops->board_each(s, pool_id, q, offset, limit, fn, ctx);
}

int eo_store_board_rank(eo_store *s, int64_t pool_id, const char *id, int64_t *rank)
{
    if (s == NULL || id == NULL || rank == NULL)
        return EO_EINVAL;
    return s->ops->board_rank(s, pool_id, id, rank);
}

int eo_store_history_each(eo_store *s, int64_t pool_id, const char *id, int64_t since,
                          int64_t limit, int (*fn)(void *ctx, const eo_member_ix *m), void *ctx)
{
    if (s == NULL || id == NULL || fn == NULL || limit <= 0)
        return EO_EINVAL;
    return s->ops->history_each(s, pool_id, id, since, limit, fn, ctx);
}

int eo_store_rounds_each(eo_store *s, int64_t pool_id, int64_t offset, int64_t limit,
                         int (*fn)(void *ctx, const eo_round_item *r), void *ctx)
{
    if (s == NULL || fn == NULL || offset < 0 || limit <= 0)
        return EO_EINVAL;
    return s->ops->rounds_each(s, pool_id, offset, limit, fn, ctx);
}

int eo_store_player_rounds_each(eo_store *s, int64_t pool_id, const char *id, int64_t offset,
                                int64_t limit,
                                int (*fn)(void *ctx, const eo_round_item *r,
                                          const eo_member_ix *m),
                                void *ctx)
{
    if (s == NULL || id == NULL || fn == NULL || offset < 0 || limit <= 0)
        return EO_EINVAL;
    return s->ops->player_rounds_each(s, pool_id, id, offset, limit, fn, ctx);
}

int eo_store_round_get(eo_store *s, int64_t pool_id, const char *round_id,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx)
{
    if (s == NULL || round_id == NULL || fn == NULL)
        return EO_EINVAL;
    return s->ops->round_get(s, pool_id, round_id, fn, ctx);
}

int eo_store_health_each(eo_store *s, int64_t pool_id, int64_t from_day,
                         int (*fn)(void *ctx, int64_t day, int bin, const eo_eval_sums *d),
                         void *ctx)
{
    if (s == NULL || fn == NULL)
        return EO_EINVAL;
    return s->ops->health_each(s, pool_id, from_day, fn, ctx);
}

void eo_store_remove(const char *location)
{
    static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
    for (size_t i = 0; location != NULL && i < sizeof suffix / sizeof suffix[0]; i++) {
        char path[4096];
        if (snprintf(path, sizeof path, "%s%s", location, suffix[i]) < (int)sizeof path)
            (void)remove(path);
    }
}

/* ---- matchmaking objects ---------------------------------------------------------------- */

static bool mm_kind_ok(eo_mm_kind kind)
{
    return kind == EO_MM_QUEUE || kind == EO_MM_TICKET || kind == EO_MM_INSTANCE ||
           kind == EO_MM_SESSION;
}

void eo_mm_row_free(eo_mm_row *row)
{
    if (row == NULL)
        return;
    free(row->request);
    free(row->doc);
    row->request = row->doc = NULL;
}

int eo_store_mm_put(eo_store *s, eo_mm_kind kind, const eo_mm_row *row)
{
    if (s == NULL || !mm_kind_ok(kind) || row == NULL || row->name[0] == '\0' ||
        row->request == NULL || row->doc == NULL)
        return EO_EINVAL;
    return s->ops->mm_put(s, kind, row);
}

int eo_store_mm_set(eo_store *s, eo_mm_kind kind, const char *name, const char *status, bool live,
                    const char *doc, int64_t updated_at)
{
    if (s == NULL || !mm_kind_ok(kind) || name == NULL || status == NULL || doc == NULL)
        return EO_EINVAL;
    return s->ops->mm_set(s, kind, name, status, live, doc, updated_at);
}

int eo_store_mm_get(eo_store *s, eo_mm_kind kind, const char *name, eo_mm_row *out)
{
    if (s == NULL || !mm_kind_ok(kind) || name == NULL || out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    return s->ops->mm_get(s, kind, name, out);
}

int eo_store_mm_each(eo_store *s, eo_mm_kind kind, bool live_only,
                     int (*fn)(void *ctx, const eo_mm_row *row), void *ctx)
{
    if (s == NULL || !mm_kind_ok(kind) || fn == NULL)
        return EO_EINVAL;
    return s->ops->mm_each(s, kind, live_only, fn, ctx);
}

int eo_store_mm_prune(eo_store *s, int64_t before, int64_t *n)
{
    if (s == NULL)
        return EO_EINVAL;
    int64_t dummy;
    return s->ops->mm_prune(s, before, n ? n : &dummy);
}
