/* The SQLite backend of eo_store: WAL mode, one connection per handle, statements prepared once
 * per handle and reused, the schema brought up to date at open by sqlite_schema.c's migrations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "core/buf.h"
#include "store/sqlite_internal.h"

/* How long a statement waits for another connection's lock before giving up (ms). */
#define BUSY_TIMEOUT_MS 5000

enum {
    Q_BEGIN_WRITE,
    Q_BEGIN_READ,
    Q_COMMIT,
    Q_ROLLBACK,
    Q_SAVEPOINT,
    Q_RELEASE,
    Q_ROLLBACK_TO,
    Q_POOL_INSERT,
    Q_POOL_GET,
    Q_POOL_LIST,
    Q_POOL_SET_CONFIG,
    Q_LOG_INSERT,
    Q_ROUND_FIND,
    Q_LOG_EACH,
    Q_ROUND_COUNT,
    Q_PLAYER_PUT,
    Q_PLAYER_GET,
    Q_PLAYER_DELETE,
    Q_PLAYERS_EACH,
    Q_SEASON_INSERT,
    Q_SEASON_GET,
    Q_SEASONS_EACH,
    Q_STANDING_PUT,
    Q_STANDINGS_EACH,
    Q_MM_PUT,
    Q_MM_SET,
    Q_MM_GET,
    Q_MM_EACH,
    Q_MM_EACH_LIVE,
    Q_MM_PRUNE,
    Q_COUNT
};

static const char *const query_sql[Q_COUNT] = {
    /* IMMEDIATE takes the write lock at once, so a batch never fails half-way on a lock upgrade. */
    [Q_BEGIN_WRITE] = "BEGIN IMMEDIATE",
    [Q_BEGIN_READ] = "BEGIN",
    [Q_COMMIT] = "COMMIT",
    [Q_ROLLBACK] = "ROLLBACK",
    /* One name for every mark: SQLite's RELEASE and ROLLBACK TO then act on the innermost. */
    [Q_SAVEPOINT] = "SAVEPOINT eo_update",
    [Q_RELEASE] = "RELEASE eo_update",
    [Q_ROLLBACK_TO] = "ROLLBACK TO eo_update",
    [Q_POOL_INSERT] = "INSERT INTO pools (name, model, params, created_at) VALUES (?1, ?2, ?3, ?4) "
                      "RETURNING id",
    [Q_POOL_GET] = "SELECT id, name, model, params, created_at FROM pools WHERE name = ?1",
    [Q_POOL_LIST] = "SELECT id, name, model, params, created_at FROM pools ORDER BY name",
    [Q_POOL_SET_CONFIG] = "UPDATE pools SET model = ?2, params = ?3 WHERE id = ?1",
    /* The next seq comes from the (pool_id, seq) index: one seek to its last entry. */
    [Q_LOG_INSERT] = "INSERT INTO log (pool_id, seq, kind, round_id, body, response, at) VALUES "
                     "(?1, (SELECT coalesce(max(seq), 0) + 1 FROM log WHERE pool_id = ?1), "
                     "?2, ?3, ?4, ?5, ?6) RETURNING seq",
    [Q_ROUND_FIND] = "SELECT body, response FROM log WHERE pool_id = ?1 AND round_id = ?2",
    [Q_LOG_EACH] = "SELECT seq, kind, round_id, body, at FROM log WHERE pool_id = ?1 AND seq > ?2 "
                   "ORDER BY seq",
    [Q_ROUND_COUNT] = "SELECT count(*) FROM log WHERE pool_id = ?1 AND round_id IS NOT NULL",
    [Q_PLAYER_PUT] = "INSERT INTO players (pool_id, player_id, rating, mu, sigma, volatility, "
                     "rounds, visible, last_ended_at, x1, x2, x3, x4) VALUES (?1, ?2, ?3, ?4, ?5, "
                     "?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
                     "ON CONFLICT (pool_id, player_id) DO UPDATE SET rating = excluded.rating, "
                     "mu = excluded.mu, sigma = excluded.sigma, volatility = excluded.volatility, "
                     "rounds = excluded.rounds, visible = excluded.visible, "
                     "last_ended_at = excluded.last_ended_at, x1 = excluded.x1, "
                     "x2 = excluded.x2, x3 = excluded.x3, x4 = excluded.x4",
    [Q_PLAYER_GET] = "SELECT rating, mu, sigma, volatility, rounds, visible, last_ended_at, "
                     "x1, x2, x3, x4 FROM players WHERE pool_id = ?1 AND player_id = ?2",
    [Q_PLAYER_DELETE] = "DELETE FROM players WHERE pool_id = ?1 AND player_id = ?2",
    [Q_PLAYERS_EACH] = "SELECT player_id, rating, mu, sigma, volatility, rounds, visible, "
                       "last_ended_at, x1, x2, x3, x4 FROM players WHERE pool_id = ?1",
    [Q_SEASON_INSERT] = "INSERT INTO seasons (pool_id, name, seq, at) VALUES (?1, ?2, ?3, ?4)",
    [Q_SEASON_GET] = "SELECT seq, at FROM seasons WHERE pool_id = ?1 AND name = ?2",
    [Q_SEASONS_EACH] = "SELECT s.name, s.seq, s.at, (SELECT count(*) FROM standings AS t "
                       "WHERE t.pool_id = s.pool_id AND t.season = s.name) FROM seasons AS s "
                       "WHERE s.pool_id = ?1 ORDER BY s.seq",
    [Q_STANDING_PUT] = "INSERT INTO standings (pool_id, season, player_id, rating, mu, sigma, "
                       "volatility, rounds, visible, last_ended_at, x1, x2, x3, x4) "
                       "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
    [Q_STANDINGS_EACH] = "SELECT player_id, rating, mu, sigma, volatility, rounds, visible, "
                         "last_ended_at, x1, x2, x3, x4 FROM standings WHERE pool_id = ?1 "
                         "AND season = ?2 "
                         "ORDER BY rating DESC, player_id LIMIT ?4 OFFSET ?3",
    [Q_MM_PUT] = "INSERT INTO mm_objects (kind, name, owner, status, live, token, request, doc, "
                 "created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                 "ON CONFLICT (kind, name) DO UPDATE SET owner = excluded.owner, "
                 "status = excluded.status, live = excluded.live, token = excluded.token, "
                 "request = excluded.request, doc = excluded.doc, "
                 "created_at = excluded.created_at, updated_at = excluded.updated_at",
    [Q_MM_SET] = "UPDATE mm_objects SET status = ?3, live = ?4, doc = ?5, updated_at = ?6 "
                 "WHERE kind = ?1 AND name = ?2",
    [Q_MM_GET] = "SELECT name, owner, status, live, token, request, doc, created_at, updated_at "
                 "FROM mm_objects WHERE kind = ?1 AND name = ?2",
    [Q_MM_EACH] = "SELECT name, owner, status, live, token, request, doc, created_at, updated_at "
                  "FROM mm_objects WHERE kind = ?1 ORDER BY created_at, id",
    /* The partial index mm_live holds exactly these rows, in this order. */
    [Q_MM_EACH_LIVE] = "SELECT name, owner, status, live, token, request, doc, created_at, "
                       "updated_at FROM mm_objects WHERE kind = ?1 AND live = 1 "
                       "ORDER BY created_at, id",
    [Q_MM_PRUNE] = "DELETE FROM mm_objects WHERE live = 0 AND updated_at < ?1",
};

_Static_assert(Q_COUNT <= EO__SQ_MAIN_MAX, "EO__SQ_MAIN_MAX must hold every statement");

static int prep(sq_store *q, int which, sqlite3_stmt **out)
{
    return prepare_once(q, &q->q[which], query_sql[which], out);
}

/* Runs a statement that returns no rows (or whose rows are ignored). */
static int run_simple(sq_store *q, int which, const char *what)
{
    sqlite3_stmt *st;
    int rc = prep(q, which, &st);
    if (rc)
        return rc;
    int src = sqlite3_step(st);
    while (src == SQLITE_ROW)
        src = sqlite3_step(st);
    if (src != SQLITE_DONE) {
        rc = fail(q, src, what);
        done(st);
        return rc;
    }
    done(st);
    return 0;
}

static int exec_sql(sq_store *q, const char *sql, const char *what)
{
    int rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
    return rc == SQLITE_OK ? 0 : fail(q, rc, what);
}

/* One integer from a one-off query. */
static int query_int(sq_store *q, const char *sql, int64_t *out, const char *what)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(q, rc, what);
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        return 0;
    }
    int err = fail(q, rc == SQLITE_DONE ? SQLITE_ERROR : rc, what);
    sqlite3_finalize(st);
    return err;
}

/* Version 0 is an empty database; a database with tables but no schema_version is not ours. */
static int read_version(sq_store *q, int *version)
{
    int64_t has = 0;
    int rc = query_int(q,
                       "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                       "name = 'schema_version'",
                       &has, "reading the schema");
    if (rc)
        return rc;
    if (has == 0) {
        int64_t any = 0;
        rc = query_int(q, "SELECT count(*) FROM sqlite_master", &any, "reading the schema");
        if (rc)
            return rc;
        if (any > 0) {
            eo__store_seterr(&q->base, "%s: not an evenodds store (no schema_version table)",
                             q->path);
            return EO_EIO;
        }
        *version = 0;
        return 0;
    }
    int64_t v = 0;
    rc = query_int(q, "SELECT coalesce(max(version), 0) FROM schema_version", &v,
                   "reading the schema version");
    if (rc)
        return rc;
    *version = (int)v;
    return 0;
}

static int check_not_newer(sq_store *q, int v)
{
    if (v > eo__sqlite_migration_count) {
        eo__store_seterr(&q->base,
                         "%s: schema version %d is newer than this program supports (%d)",
                         q->path, v, eo__sqlite_migration_count);
        return EO_EIO;
    }
    return 0;
}

/* Applies the missing migrations, each in its own transaction with its version row. The version
 * is read again under the write lock, so two processes opening one file never both migrate. */
static int migrate(sq_store *q, int from)
{
    for (int i = from; i < eo__sqlite_migration_count; i++) {
        int rc = exec_sql(q, "BEGIN IMMEDIATE", "starting a migration");
        if (rc)
            return rc;
        int v = 0;
        rc = read_version(q, &v);
        if (rc == 0)
            rc = check_not_newer(q, v);
        if (rc == 0 && v == i) {
            rc = exec_sql(q, eo__sqlite_migrations[i], "migrating the schema");
            if (rc == 0) {
                char sql[80];
                snprintf(sql, sizeof sql, "INSERT INTO schema_version (version) VALUES (%d)", i + 1);
                rc = exec_sql(q, sql, "recording the schema version");
            }
        }
        if (rc == 0)
            rc = exec_sql(q, "COMMIT", "committing a migration");
        if (rc) {
            sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
            return rc;
        }
        if (v > i)
            i = v - 1; /* another process went further already */
    }
    return 0;
}

/* Sets a pragma whose answer must be @p expect (journal_mode answers the mode it got). */
static int pragma_expect(sq_store *q, const char *sql, const char *expect)
{
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return fail(q, rc, sql);
    rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        int err = fail(q, rc, sql);
        sqlite3_finalize(st);
        return err;
    }
    const char *got = (const char *)sqlite3_column_text(st, 0);
    int ok = got != NULL && sqlite3_stricmp(got, expect) == 0;
    if (!ok)
        eo__store_seterr(&q->base, "%s: %s gave '%s'", q->path, sql, got ? got : "");
    sqlite3_finalize(st);
    return ok ? 0 : EO_EIO;
}

static int setup_writer(sq_store *q, unsigned flags)
{
    int v = 0;
    int rc = read_version(q, &v);
    if (rc == 0)
        rc = check_not_newer(q, v);
    if (rc == 0)
        rc = pragma_expect(q, "PRAGMA journal_mode = WAL", "wal");
    /* NORMAL in WAL syncs the log at checkpoints only: a committed transaction survives a killed
     * process (it is in the OS's page cache), and FULL adds an fsync per commit for power cuts. */
    if (rc == 0)
        rc = exec_sql(q,
                      (flags & EO_STORE_SYNC_FULL) ? "PRAGMA synchronous = FULL"
                                                   : "PRAGMA synchronous = NORMAL",
                      "setting synchronous");
    /* temp_store MEMORY: the statement journals of upserts and the savepoints around each
     * update of a group commit (the original of every page an update changes, ~30 pages for a
     * 12v12 round) would otherwise spill to a temporary file past 64 KiB: bench_store writes
     * 40 % more rounds/s so, 25 % more with a savepoint per round (docs/STORE.md). */
    if (rc == 0)
        rc = exec_sql(q,
                      "PRAGMA foreign_keys = ON; PRAGMA cache_size = -16384; "
                      "PRAGMA temp_store = MEMORY; PRAGMA journal_size_limit = 67108864",
                      "setting pragmas");
    if (rc == 0)
        rc = migrate(q, v);
    return rc;
}

static int setup_reader(sq_store *q)
{
    int rc = exec_sql(q, "PRAGMA query_only = ON; PRAGMA cache_size = -16384", "setting pragmas");
    int v = 0;
    if (rc == 0)
        rc = read_version(q, &v);
    if (rc == 0)
        rc = check_not_newer(q, v);
    if (rc == 0 && v < eo__sqlite_migration_count) {
        eo__store_seterr(&q->base,
                         v == 0 ? "%s: not an evenodds store (empty)"
                                : "%s: schema version %d is older than this program's (%d): "
                                  "open it read-write once to migrate it",
                         q->path, v, eo__sqlite_migration_count);
        rc = EO_EIO;
    }
    return rc;
}

static void sq_close(eo_store *s)
{
    sq_store *q = sq(s);
    for (int i = 0; i < Q_COUNT; i++)
        sqlite3_finalize(q->q[i]);
    for (int i = 0; i < EO__SQ_IX_MAX; i++)
        sqlite3_finalize(q->ix[i]);
    /* Closing with a transaction open rolls it back. */
    sqlite3_close(q->db);
    free(q->path);
    free(q);
}

static bool sq_readonly(eo_store *s)
{
    return sqlite3_db_readonly(sq(s)->db, "main") == 1;
}

/* A handle that opened read-only stays so: SQLite maps a file's WAL index once per process,
 * read-only for every connection once one opened it so, so only a restart takes up a file
 * made writable again (docs/SERVICE.md "Health"). */
static int sq_probe(eo_store *s)
{
    sq_store *q = sq(s);
    if (sq_readonly(s)) {
        eo__store_seterr(&q->base, "%s: the database file was read-only when the store opened; "
                         "make it (and its -wal and -shm files) writable and restart", q->path);
        return EO_EIO;
    }
    int rc = exec_sql(q, "BEGIN IMMEDIATE; UPDATE probe SET n = n + 1; COMMIT",
                      "probing for writes");
    if (rc != 0 && !sqlite3_get_autocommit(q->db))
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int sq_schema_version(eo_store *s, int *version)
{
    return read_version(sq(s), version);
}

static int sq_begin(eo_store *s)
{
    sq_store *q = sq(s);
    if (!sqlite3_get_autocommit(q->db)) {
        eo__store_seterr(s, "%s: a transaction is open already", q->path);
        return EO_EINVAL;
    }
    return run_simple(q, (s->flags & EO_STORE_READONLY) ? Q_BEGIN_READ : Q_BEGIN_WRITE,
                      "begin");
}

static int sq_commit(eo_store *s)
{
    sq_store *q = sq(s);
    if (sqlite3_get_autocommit(q->db)) {
        eo__store_seterr(s, "%s: commit without a transaction", q->path);
        return EO_EINVAL;
    }
    int rc = run_simple(q, Q_COMMIT, "commit");
    /* A failed COMMIT may leave the transaction open (SQLITE_BUSY): roll it back, so that the
     * caller's view (nothing of the batch stored) is the truth and the handle is usable. */
    if (rc && !sqlite3_get_autocommit(q->db))
        sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

static int sq_rollback(eo_store *s)
{
    sq_store *q = sq(s);
    if (sqlite3_get_autocommit(q->db))
        return 0;
    return run_simple(q, Q_ROLLBACK, "rollback");
}

/* A savepoint statement needs the transaction begin opened: without one SQLite would start a
 * transaction of its own (SAVEPOINT) or fail, and a transaction SQLite has rolled back by itself
 * (a full disk, an I/O error) must not go unnoticed, or later updates would commit one by one. */
static int in_transaction(sq_store *q, const char *what)
{
    if (!sqlite3_get_autocommit(q->db))
        return 0;
    eo__store_seterr(&q->base, "%s: %s: no transaction open (none begun, or rolled back)",
                     q->path, what);
    return EO_EIO;
}

static int sq_savepoint(eo_store *s)
{
    sq_store *q = sq(s);
    int rc = in_transaction(q, "savepoint");
    return rc ? rc : run_simple(q, Q_SAVEPOINT, "savepoint");
}

static int sq_release(eo_store *s)
{
    sq_store *q = sq(s);
    int rc = in_transaction(q, "release");
    return rc ? rc : run_simple(q, Q_RELEASE, "release");
}

static int sq_rollback_to(eo_store *s)
{
    sq_store *q = sq(s);
    int rc = in_transaction(q, "rollback to savepoint");
    if (rc == 0)
        rc = run_simple(q, Q_ROLLBACK_TO, "rollback to savepoint");
    /* ROLLBACK TO keeps the mark; the caller is done with it. */
    if (rc == 0)
        rc = run_simple(q, Q_RELEASE, "release");
    return rc;
}

/* Runs an INSERT … RETURNING of one integer column: SQLITE_DONE with *out set, or the
 * statement's error code (constraint codes included) for the caller to word. */
static int step_returning(sqlite3_stmt *st, int64_t *out)
{
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        *out = sqlite3_column_int64(st, 0);
        src = sqlite3_step(st);
    }
    return src;
}

static int sq_pool_create(eo_store *s, const char *name, const char *model,
                          const char *params_json, int64_t created_at, int64_t *id)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_POOL_INSERT, &st);
    if (rc)
        return rc;
    bind_text(st, 1, name);
    bind_text(st, 2, model);
    bind_text(st, 3, params_json);
    sqlite3_bind_int64(st, 4, created_at);
    int src = step_returning(st, id);
    if (src == SQLITE_DONE) {
        rc = 0;
    } else if (src == SQLITE_CONSTRAINT_UNIQUE) {
        eo__store_seterr(s, "%s: pool '%s' exists already", q->path, name);
        rc = EO_EEXIST;
    } else {
        rc = fail(q, src, "creating a pool");
    }
    done(st);
    return rc;
}

static int sq_pool_set_config(eo_store *s, int64_t pool_id, const char *model,
                              const char *params_json)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_POOL_SET_CONFIG, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, model);
    bind_text(st, 3, params_json);
    int src = sqlite3_step(st);
    if (src != SQLITE_DONE)
        rc = fail(q, src, "changing a pool's parameters");
    else if (sqlite3_changes(q->db) == 0)
        rc = EO_ENOTFOUND;
    done(st);
    return rc;
}

static int read_pool_row(sqlite3_stmt *st, eo_pool_row *out)
{
    out->id = sqlite3_column_int64(st, 0);
    out->name = col_dup(st, 1);
    out->model = col_dup(st, 2);
    out->params_json = col_dup(st, 3);
    out->created_at = sqlite3_column_int64(st, 4);
    if (out->name == NULL || out->model == NULL || out->params_json == NULL) {
        eo_pool_row_free(out);
        return EO_ENOMEM;
    }
    return 0;
}

static int sq_pool_get(eo_store *s, const char *name, eo_pool_row *out)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_POOL_GET, &st);
    if (rc)
        return rc;
    bind_text(st, 1, name);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        rc = read_pool_row(st, out);
    else if (src == SQLITE_DONE)
        rc = EO_ENOTFOUND;
    else
        rc = fail(q, src, "reading a pool");
    done(st);
    return rc;
}

static int sq_pool_list(eo_store *s, eo_pool_row **rows, size_t *n)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_POOL_LIST, &st);
    if (rc)
        return rc;
    eo_pool_row *v = NULL;
    size_t len = 0, cap = 0;
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_pool_row *nv = eo__grow(v, &cap, len + 1, sizeof *nv);
        if (nv == NULL) {
            rc = EO_ENOMEM;
            break;
        }
        v = nv;
        memset(&v[len], 0, sizeof v[len]);
        rc = read_pool_row(st, &v[len]);
        if (rc)
            break;
        len++;
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail(q, src, "listing pools");
    done(st);
    if (rc) {
        for (size_t i = 0; i < len; i++)
            eo_pool_row_free(&v[i]);
        free(v);
        return rc;
    }
    *rows = v;
    *n = len;
    return 0;
}

static int sq_log_append(eo_store *s, int64_t pool_id, eo_log_kind kind, const char *round_id,
                         const char *body, const char *response, int64_t at, int64_t *seq)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_LOG_INSERT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_int(st, 2, (int)kind);
    bind_text(st, 3, round_id);
    bind_text(st, 4, body);
    bind_text(st, 5, response);
    sqlite3_bind_int64(st, 6, at);
    int src = step_returning(st, seq);
    if (src == SQLITE_DONE) {
        rc = 0;
    } else if (src == SQLITE_CONSTRAINT_UNIQUE) {
        /* seq comes from max(seq) under the write lock, so only the round id can collide. */
        eo__store_seterr(s, "%s: round '%s' is logged already", q->path,
                         round_id ? round_id : "");
        rc = EO_EEXIST;
    } else if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
        eo__store_seterr(s, "%s: no pool with id %lld", q->path, (long long)pool_id);
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "appending to the log");
    }
    done(st);
    return rc;
}

static int sq_round_find(eo_store *s, int64_t pool_id, const char *round_id, char **body,
                         char **response)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_ROUND_FIND, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, round_id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        char *b = body ? col_dup(st, 0) : NULL;
        char *r = response ? col_dup(st, 1) : NULL;
        if ((body && b == NULL) || (response && r == NULL && sqlite3_column_type(st, 1) != SQLITE_NULL)) {
            free(b);
            free(r);
            rc = EO_ENOMEM;
        } else {
            if (body)
                *body = b;
            if (response)
                *response = r;
        }
    } else if (src == SQLITE_DONE) {
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "finding a round");
    }
    done(st);
    return rc;
}

static int sq_log_each(eo_store *s, int64_t pool_id, int64_t after,
                       int (*fn)(void *ctx, const eo_log_entry *e), void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_LOG_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_int64(st, 2, after);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_log_entry e;
        e.seq = sqlite3_column_int64(st, 0);
        int kind = sqlite3_column_int(st, 1);
        e.kind = (eo_log_kind)kind;
        e.round_id = (const char *)sqlite3_column_text(st, 2);
        e.body = (const char *)sqlite3_column_text(st, 3);
        e.at = sqlite3_column_int64(st, 4);
        if (kind < EO_LOG_ROUND || kind > EO_LOG_REFIT || e.body == NULL) {
            eo__store_seterr(s, "%s: log entry %lld of pool %lld is damaged", q->path,
                             (long long)e.seq, (long long)pool_id);
            done(st);
            return EO_EIO;
        }
        rc = fn(ctx, &e);
        if (rc) {
            done(st);
            return rc;
        }
    }
    rc = src == SQLITE_DONE ? 0 : fail(q, src, "reading the log");
    done(st);
    return rc;
}

static int sq_round_count(eo_store *s, int64_t pool_id, int64_t *n)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_ROUND_COUNT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = fail(q, src, "counting rounds");
    done(st);
    return rc;
}

static int sq_player_put(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_PLAYER_PUT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    bind_row(st, 3, row);
    int src = sqlite3_step(st);
    if (src == SQLITE_DONE) {
        rc = 0;
    } else if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
        eo__store_seterr(s, "%s: no pool with id %lld", q->path, (long long)pool_id);
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "writing a player");
    }
    done(st);
    return rc;
}

static int sq_player_get(eo_store *s, int64_t pool_id, const char *id, eo_player_row *out)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_PLAYER_GET, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        row_columns(st, 0, out);
    } else if (src == SQLITE_DONE) {
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "reading a player");
    }
    done(st);
    return rc;
}

static int sq_player_delete(eo_store *s, int64_t pool_id, const char *id)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_PLAYER_DELETE, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    int src = sqlite3_step(st);
    rc = src == SQLITE_DONE ? 0 : fail(q, src, "deleting a player");
    done(st);
    return rc;
}

static int sq_season_create(eo_store *s, int64_t pool_id, const char *name, int64_t seq,
                            int64_t at)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_SEASON_INSERT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, name);
    sqlite3_bind_int64(st, 3, seq);
    sqlite3_bind_int64(st, 4, at);
    int src = sqlite3_step(st);
    if (src == SQLITE_DONE) {
        rc = 0;
    } else if (src == SQLITE_CONSTRAINT_PRIMARYKEY) {
        eo__store_seterr(s, "%s: pool %lld has a season '%s' already", q->path,
                         (long long)pool_id, name);
        rc = EO_EEXIST;
    } else if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
        eo__store_seterr(s, "%s: no pool with id %lld", q->path, (long long)pool_id);
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "recording a season");
    }
    done(st);
    return rc;
}

static int sq_season_get(eo_store *s, int64_t pool_id, const char *name, int64_t *seq,
                         int64_t *at)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_SEASON_GET, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, name);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        if (seq)
            *seq = sqlite3_column_int64(st, 0);
        if (at)
            *at = sqlite3_column_int64(st, 1);
    } else {
        rc = src == SQLITE_DONE ? EO_ENOTFOUND : fail(q, src, "reading a season");
    }
    done(st);
    return rc;
}

static int sq_seasons_each(eo_store *s, int64_t pool_id,
                           int (*fn)(void *ctx, const char *name, int64_t seq, int64_t at,
                                     int64_t players),
                           void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_SEASONS_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        rc = fn(ctx, (const char *)sqlite3_column_text(st, 0), sqlite3_column_int64(st, 1),
                sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
        if (rc) {
            done(st);
            return rc;
        }
    }
    rc = src == SQLITE_DONE ? 0 : fail(q, src, "reading seasons");
    done(st);
    return rc;
}

static int sq_standing_put(eo_store *s, int64_t pool_id, const char *season, const char *player,
                           const eo_player_row *row)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_STANDING_PUT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, season);
    bind_text(st, 3, player);
    bind_row(st, 4, row);
    int src = sqlite3_step(st);
    if (src == SQLITE_DONE) {
        rc = 0;
    } else if (src == SQLITE_CONSTRAINT_PRIMARYKEY) {
        eo__store_seterr(s, "%s: '%s' is archived in season '%s' already", q->path, player,
                         season);
        rc = EO_EEXIST;
    } else if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
        eo__store_seterr(s, "%s: pool %lld has no season '%s'", q->path, (long long)pool_id,
                         season);
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "archiving a standing");
    }
    done(st);
    return rc;
}

/* Steps @p st (player id in column 0, the row from column 1), calling @p fn per row until it
 * returns non-zero (returned as is); finishes the statement. @p what names the read in errors. */
static int each_row(sq_store *q, sqlite3_stmt *st,
                    int (*fn)(void *ctx, const char *player, const eo_player_row *row), void *ctx,
                    const char *what)
{
    int src, rc;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_player_row row;
        row_columns(st, 1, &row);
        rc = fn(ctx, (const char *)sqlite3_column_text(st, 0), &row);
        if (rc) {
            done(st);
            return rc;
        }
    }
    rc = src == SQLITE_DONE ? 0 : fail(q, src, what);
    done(st);
    return rc;
}

static int sq_players_each(eo_store *s, int64_t pool_id,
                           int (*fn)(void *ctx, const char *id, const eo_player_row *row),
                           void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_PLAYERS_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    return each_row(q, st, fn, ctx, "reading players");
}

static int sq_standings_each(eo_store *s, int64_t pool_id, const char *season, int64_t offset,
                             int64_t limit,
                             int (*fn)(void *ctx, const char *player, const eo_player_row *row),
                             void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_STANDINGS_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, season);
    sqlite3_bind_int64(st, 3, offset);
    sqlite3_bind_int64(st, 4, limit > 0 ? limit : -1); /* SQLite: a negative LIMIT is none */
    return each_row(q, st, fn, ctx, "reading standings");
}

/* ---- matchmaking objects ---------------------------------------------------------------- */

static int sq_mm_put(eo_store *s, eo_mm_kind kind, const eo_mm_row *row)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_MM_PUT, &st);
    if (rc)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    bind_text(st, 2, row->name);
    bind_text(st, 3, row->owner);
    bind_text(st, 4, row->status);
    sqlite3_bind_int(st, 5, row->live ? 1 : 0);
    bind_text(st, 6, row->token[0] ? row->token : NULL);
    bind_text(st, 7, row->request);
    bind_text(st, 8, row->doc);
    sqlite3_bind_int64(st, 9, row->created_at);
    sqlite3_bind_int64(st, 10, row->updated_at);
    int src = sqlite3_step(st);
    rc = src == SQLITE_DONE ? 0 : fail(q, src, "writing a matchmaking object");
    done(st);
    return rc;
}

static int sq_mm_set(eo_store *s, eo_mm_kind kind, const char *name, const char *status, bool live,
                     const char *doc, int64_t updated_at)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_MM_SET, &st);
    if (rc)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    bind_text(st, 2, name);
    bind_text(st, 3, status);
    sqlite3_bind_int(st, 4, live ? 1 : 0);
    bind_text(st, 5, doc);
    sqlite3_bind_int64(st, 6, updated_at);
    int src = sqlite3_step(st);
    if (src != SQLITE_DONE) {
        rc = fail(q, src, "updating a matchmaking object");
    } else if (sqlite3_changes(q->db) == 0) {
        eo__store_seterr(s, "%s: no matchmaking object '%s'", q->path, name);
        rc = EO_ENOTFOUND;
    }
    done(st);
    return rc;
}

/* The columns of a Q_MM_GET / Q_MM_EACH row; request and doc point into the statement's row
 * (valid until its next step). */
static void mm_columns(sqlite3_stmt *st, eo_mm_row *out)
{
    const char *t;
    t = (const char *)sqlite3_column_text(st, 0);
    snprintf(out->name, sizeof out->name, "%s", t ? t : "");
    t = (const char *)sqlite3_column_text(st, 1);
    snprintf(out->owner, sizeof out->owner, "%s", t ? t : "");
    t = (const char *)sqlite3_column_text(st, 2);
    snprintf(out->status, sizeof out->status, "%s", t ? t : "");
    out->live = sqlite3_column_int(st, 3) != 0;
    t = (const char *)sqlite3_column_text(st, 4);
    snprintf(out->token, sizeof out->token, "%s", t ? t : "");
    out->request = (char *)sqlite3_column_text(st, 5);
    out->doc = (char *)sqlite3_column_text(st, 6);
    out->created_at = sqlite3_column_int64(st, 7);
    out->updated_at = sqlite3_column_int64(st, 8);
}

static int sq_mm_get(eo_store *s, eo_mm_kind kind, const char *name, eo_mm_row *out)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_MM_GET, &st);
    if (rc)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    bind_text(st, 2, name);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        mm_columns(st, out);
        out->request = col_dup(st, 5);
        out->doc = col_dup(st, 6);
        if (out->request == NULL || out->doc == NULL) {
            eo_mm_row_free(out);
            rc = EO_ENOMEM;
        }
    } else if (src == SQLITE_DONE) {
        rc = EO_ENOTFOUND;
    } else {
        rc = fail(q, src, "reading a matchmaking object");
    }
    done(st);
    return rc;
}

static int sq_mm_each(eo_store *s, eo_mm_kind kind, bool live_only,
                      int (*fn)(void *ctx, const eo_mm_row *row), void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, live_only ? Q_MM_EACH_LIVE : Q_MM_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int(st, 1, (int)kind);
    int src;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_mm_row row;
        mm_columns(st, &row);
        if ((rc = fn(ctx, &row)) != 0)
            break;
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail(q, src, "reading matchmaking objects");
    done(st);
    return rc;
}

static int sq_mm_prune(eo_store *s, int64_t before, int64_t *n)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = prep(q, Q_MM_PRUNE, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, before);
    int src = sqlite3_step(st);
    if (src == SQLITE_DONE)
        *n = sqlite3_changes64(q->db);
    else
        rc = fail(q, src, "pruning matchmaking objects");
    done(st);
    return rc;
}

static const eo__store_ops sqlite_ops = {
    .name = "sqlite",
    .close = sq_close,
    .schema_version = sq_schema_version,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .probe = sq_probe,
    .readonly = sq_readonly,
    .savepoint = sq_savepoint,
    .release = sq_release,
    .rollback_to = sq_rollback_to,
    .pool_create = sq_pool_create,
    .pool_get = sq_pool_get,
    .pool_list = sq_pool_list,
    .pool_set_config = sq_pool_set_config,
    .log_append = sq_log_append,
    .round_find = sq_round_find,
    .log_each = sq_log_each,
    .round_count = sq_round_count,
    .player_put = sq_player_put,
    .player_get = sq_player_get,
    .player_delete = sq_player_delete,
    .players_each = sq_players_each,
    .season_create = sq_season_create,
    .season_get = sq_season_get,
    .seasons_each = sq_seasons_each,
    .standing_put = sq_standing_put,
    .standings_each = sq_standings_each,
    .player_put_played = eo__sq_player_put_played,
    .player_last = eo__sq_player_last,
    .player_link = eo__sq_player_link,
    .round_ix_put = eo__sq_round_ix_put,
    .round_ix_last = eo__sq_round_ix_last,
    .health_add = eo__sq_health_add,
    .player_name_get = eo__sq_player_name_get,
    .board_count = eo__sq_board_count,
    .board_each = eo__sq_board_each,
    .board_rank = eo__sq_board_rank,
    .history_each = eo__sq_history_each,
    .rounds_each = eo__sq_rounds_each,
    .player_rounds_each = eo__sq_player_rounds_each,
    .round_get = eo__sq_round_get,
    .health_each = eo__sq_health_each,
    .mm_put = sq_mm_put,
    .mm_set = sq_mm_set,
    .mm_get = sq_mm_get,
    .mm_each = sq_mm_each,
    .mm_prune = sq_mm_prune,
};

int eo__sqlite_open(const char *path, unsigned flags, eo_store **out, char *err, size_t errlen)
{
    sq_store *q = calloc(1, sizeof *q);
    size_t plen = strlen(path);
    char *p = malloc(plen + 1);
    if (q == NULL || p == NULL) {
        free(q);
        free(p);
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "out of memory");
        return EO_ENOMEM;
    }
    memcpy(p, path, plen + 1);
    q->base.ops = &sqlite_ops;
    q->base.flags = flags;
    q->path = p;

    /* A handle is used by one thread at a time (eo_store.h), so SQLite's own mutexes are not
     * needed. A read-only handle never creates the file. */
    int oflags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE |
                 ((flags & EO_STORE_READONLY) ? SQLITE_OPEN_READONLY
                                              : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    int rc;
    int src = sqlite3_open_v2(path, &q->db, oflags, NULL);
    if (src != SQLITE_OK) {
        eo__store_seterr(&q->base, "%s: cannot open: %s", path,
                         q->db ? sqlite3_errmsg(q->db) : sqlite3_errstr(src));
        rc = src == SQLITE_NOMEM ? EO_ENOMEM : EO_EIO;
    } else {
        sqlite3_busy_timeout(q->db, BUSY_TIMEOUT_MS);
        rc = (flags & EO_STORE_READONLY) ? setup_reader(q) : setup_writer(q, flags);
    }
    if (rc) {
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s", q->base.errmsg);
        sq_close(&q->base);
        return rc;
    }
    *out = &q->base;
    return 0;
}
