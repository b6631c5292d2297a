/* Shared by the SQLite backend's files: sqlite.c (the handle, the schema, the log and the
 * players) and sqlite_index.c (the read indexes of docs/STORE.md "Read indexes"). */
#ifndef EO_SQLITE_INTERNAL_H
#define EO_SQLITE_INTERNAL_H

#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_internal.h"

/* Statements prepared once per handle: sqlite.c's at most, and sqlite_index.c's. */
#define EO__SQ_MAIN_MAX 32
#define EO__SQ_IX_MAX 24

typedef struct sq_store {
    eo_store base; /* first: the generic layer casts between the two */
    sqlite3 *db;
    char *path;
    sqlite3_stmt *q[EO__SQ_MAIN_MAX];
    sqlite3_stmt *ix[EO__SQ_IX_MAX];
} sq_store;

static inline sq_store *sq(eo_store *s)
{
    return (sq_store *)s;
}

/* Maps an SQLite result to an EO_E code and records the message, naming the operation. */
static inline int fail(sq_store *q, int rc, const char *what)
{
    eo__store_seterr(&q->base, "%s: %s: %s", q->path, what, sqlite3_errmsg(q->db));
    switch (rc & 0xff) {
    case SQLITE_NOMEM: return EO_ENOMEM;
    case SQLITE_BUSY:
    case SQLITE_LOCKED: return EO_EBUSY;
    default: return EO_EIO;
    }
}

/* The statement of @p sql kept in @p slot, prepared at its first use. 0 or an EO_E code. */
static inline int prepare_once(sq_store *q, sqlite3_stmt **slot, const char *sql,
                               sqlite3_stmt **out)
{
    if (*slot == NULL) {
        int rc = sqlite3_prepare_v3(q->db, sql, -1, SQLITE_PREPARE_PERSISTENT, slot, NULL);
        if (rc != SQLITE_OK) {
            *slot = NULL;
            return fail(q, rc, "prepare");
        }
    }
    *out = *slot;
    return 0;
}

static inline void done(sqlite3_stmt *st)
{
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
}

/* Binds a string of any length (SQLITE_STATIC: the caller keeps it alive until done()). */
static inline int bind_text(sqlite3_stmt *st, int i, const char *v)
{
    if (v == NULL)
        return sqlite3_bind_null(st, i);
    return sqlite3_bind_text64(st, i, v, strlen(v), SQLITE_STATIC, SQLITE_UTF8);
}

static inline char *col_dup(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    if (t == NULL)
        return NULL;
    size_t n = (size_t)sqlite3_column_bytes(st, i);
    char *d = malloc(n + 1);
    if (d != NULL) {
        memcpy(d, t, n);
        d[n] = '\0';
    }
    return d;
}

/* A player row's columns from position @p col of a result row. */
static inline void row_columns(sqlite3_stmt *st, int col, eo_player_row *out)
{
    out->rating = sqlite3_column_double(st, col);
    out->mu = sqlite3_column_double(st, col + 1);
    out->sigma = sqlite3_column_double(st, col + 2);
    out->volatility = sqlite3_column_double(st, col + 3);
    out->rounds = (uint32_t)sqlite3_column_int64(st, col + 4);
    out->visible = sqlite3_column_int(st, col + 5) != 0;
    out->last_ended_at = sqlite3_column_int64(st, col + 6);
    for (int i = 0; i < EO_VIEW_EXTRA; i++)
        out->extra[i] = sqlite3_column_double(st, col + 7 + i);
}

/* Binds a player row's values (rating to x4, the columns of row_columns() but the name) to
 * parameters @p first, @p first + 1, …, @p first + 10. */
static inline void bind_row(sqlite3_stmt *st, int first, const eo_player_row *row)
{
    sqlite3_bind_double(st, first, row->rating);
    sqlite3_bind_double(st, first + 1, row->mu);
    sqlite3_bind_double(st, first + 2, row->sigma);
    sqlite3_bind_double(st, first + 3, row->volatility);
    sqlite3_bind_int64(st, first + 4, row->rounds);
    sqlite3_bind_int(st, first + 5, row->visible);
    sqlite3_bind_int64(st, first + 6, row->last_ended_at);
    for (int i = 0; i < EO_VIEW_EXTRA; i++)
        sqlite3_bind_double(st, first + 7 + i, row->extra[i]);
}

/* The read indexes (sqlite_index.c), entries of the backend's ops table. */
int eo__sq_player_put_played(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row,
                             const char *name, int64_t n, int64_t *prev);
int eo__sq_player_last(eo_store *s, int64_t pool_id, const char *id, int64_t *last);
int eo__sq_player_link(eo_store *s, int64_t pool_id, const char *id, const char *name, int64_t last,
                       int64_t prev);
int eo__sq_round_ix_put(eo_store *s, int64_t pool_id, const eo_round_ix *r, const char *const *ids,
                        const eo_member_ix *m, size_t count);
int eo__sq_round_ix_last(eo_store *s, int64_t pool_id, eo_round_ix *out);
int eo__sq_health_add(eo_store *s, int64_t pool_id, int64_t day, int bin, const eo_eval_sums *d);
int eo__sq_player_name_get(eo_store *s, int64_t pool_id, const char *id, char **name);
int eo__sq_board_count(eo_store *s, int64_t pool_id, int64_t *n);
int eo__sq_board_each(eo_store *s, int64_t pool_id, const char *q, int64_t offset, int64_t limit,
                      int (*fn)(void *ctx, int64_t rank, const char *id, const char *name,
                                const eo_player_row *row),
                      void *ctx);
int eo__sq_board_rank(eo_store *s, int64_t pool_id, const char *id, int64_t *rank);
int eo__sq_history_each(eo_store *s, int64_t pool_id, const char *id, int64_t since, int64_t limit,
                        int (*fn)(void *ctx, const eo_member_ix *m), void *ctx);
int eo__sq_rounds_each(eo_store *s, int64_t pool_id, int64_t offset, int64_t limit,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx);
int eo__sq_player_rounds_each(eo_store *s, int64_t pool_id, const char *id, int64_t offset,
                              int64_t limit,
                              int (*fn)(void *ctx, const eo_round_item *r, const eo_member_ix *m),
                              void *ctx);
int eo__sq_round_get(eo_store *s, int64_t pool_id, const char *round_id,
                     int (*fn)(void *ctx, const eo_round_item *r), void *ctx);
int eo__sq_health_each(eo_store *s, int64_t pool_id, int64_t from_day,
                       int (*fn)(void *ctx, int64_t day, int bin, const eo_eval_sums *d),
                       void *ctx);

#endif
