/**
 * @file eo_store.h
 * Persistent storage of pools, their event log (rounds and admin edits, in order) and the
 * current player state, behind one interface with one implementation per backend (SQLite now;
 * PostgreSQL follows with its own SQL). The log is the source of truth: player rows are a
 * materialised view of it, kept for lookups that must not wait for the writer.
 *
 * A handle is one connection: use it from one thread at a time and open one per thread.
 * With SQLite, any number of read handles run beside one writer (WAL mode).
 * Ownership: strings returned through out-parameters are malloc'd and the caller's.
 */
#ifndef EO_STORE_H
#define EO_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_eval.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eo_store eo_store;

/** Schema version this program writes; eo_store_open() migrates older stores up to it and refuses
 *  newer ones. */
#define EO_STORE_SCHEMA_VERSION 8

/** eo_store_open() flags. */
enum {
    EO_STORE_READONLY = 1u << 0, /**< open an existing store for reading only */
    EO_STORE_SYNC_FULL = 1u << 1 /**< fsync at every commit (synchronous=FULL); default NORMAL+WAL
                                      already survives a killed process, not a power cut */
};

/**
 * Opens (creating and migrating it to the current schema unless EO_STORE_READONLY) the store at
 * @p location: a file path for SQLite. On failure returns EO_EIO / EO_EINVAL and writes a
 * message to @p err (capacity @p errlen). A file that is not an SQLite database, a database
 * that is not an evenodds store, or a store newer than EO_STORE_SCHEMA_VERSION gives EO_EIO;
 * a read-only handle also refuses a missing file or a store that still needs migrating.
 *
 * Every function below returns EO_EBUSY when another connection held a lock for longer than the
 * busy timeout (5 s), and EO_EIO with eo_store_errmsg() for other storage errors.
 */
int eo_store_open(const char *location, unsigned flags, eo_store **out, char *err, size_t errlen);

/** Closes the handle. NULL is a no-op. */
void eo_store_close(eo_store *s);

/**
 * Removes the store at @p location (closed by every handle): for SQLite the file and the side
 * files SQLite keeps beside it (-wal, -shm, -journal). For those who created a store and then
 * failed (a failed first start, a failed `import --create`): they leave nothing behind.
 */
void eo_store_remove(const char *location);

/** Schema version of the open store. */
int eo_store_schema_version(eo_store *s, int *version);

/** Last error text of this handle (static until the next call on it). */
const char *eo_store_errmsg(eo_store *s);

/**
 * Whether a writing handle can take writes now: commits one small write of its own (a counter
 * in the store), outside any transaction. Returns 0, or EO_EIO / EO_EBUSY with the reason in
 * eo_store_errmsg() (a read-only file system, a full disk, a lock held past the busy timeout,
 * a file that was read-only when the handle opened: such a handle stays read-only). EO_EINVAL
 * for a handle opened with EO_STORE_READONLY.
 */
int eo_store_probe(eo_store *s);

/** True when the handle cannot write: opened with EO_STORE_READONLY, or its file was read-only. */
bool eo_store_readonly(eo_store *s);

/**
 * Transactions. Writers should run every write inside begin/commit (a write outside one commits
 * by itself, with one sync each). begin takes the write lock at once on a read-write handle (so
 * a batch never fails half-way on a lock); on a read-only handle it starts a consistent snapshot.
 * begin with a transaction open and commit without one give EO_EINVAL. A failed commit rolls the
 * transaction back: nothing of it is stored. rollback without a transaction is a no-op.
 */
int eo_store_begin(eo_store *s);
int eo_store_commit(eo_store *s);
int eo_store_rollback(eo_store *s);

/**
 * Savepoints inside the open transaction, so that one update of a group commit can be undone
 * without the others. eo_store_savepoint() marks the current state; eo_store_release() keeps
 * what was written since the mark and drops the mark; eo_store_rollback_to() undoes what was
 * written since the mark and drops the mark. The transaction stays open either way, and only
 * its commit stores anything. Marks nest: release and rollback_to act on the innermost.
 * All three need the transaction eo_store_begin() opened: without one (never begun, or ended
 * by the backend on its own since: SQLite rolls a whole transaction back on some errors, e.g. a
 * full disk) they fail with EO_EIO, and the caller has lost the whole transaction, not only
 * its last update.
 */
int eo_store_savepoint(eo_store *s);
int eo_store_release(eo_store *s);
int eo_store_rollback_to(eo_store *s);

/** A pool as stored. */
typedef struct eo_pool_row {
    int64_t id;
    char *name;        /**< owned */
    char *model;       /**< owned, e.g. "synelo" */
    char *params_json; /**< owned, the parameters as a JSON object text */
    int64_t created_at;
} eo_pool_row;

/** Releases what a row owns. */
void eo_pool_row_free(eo_pool_row *row);

/** Creates a pool. Returns 0, EO_EEXIST (name taken) or EO_EIO. */
int eo_store_pool_create(eo_store *s, const char *name, const char *model,
                         const char *params_json, int64_t created_at, int64_t *id);

/** Reads a pool by name. Returns 0, EO_ENOTFOUND or EO_EIO. */
int eo_store_pool_get(eo_store *s, const char *name, eo_pool_row *out);

/** All pools, by name. *rows is an array of *n rows; free each row, then the array. */
int eo_store_pool_list(eo_store *s, eo_pool_row **rows, size_t *n);

/** Replaces the model and parameters of pool @p pool_id (a re-tune's apply: the engine folds
 *  the pool's log again under them in the same transaction). Returns 0, EO_ENOTFOUND (no such
 *  pool) or EO_EIO. */
int eo_store_pool_set_config(eo_store *s, int64_t pool_id, const char *model,
                             const char *params_json);

/** Kinds of log entries. */
typedef enum {
    EO_LOG_ROUND = 0, /**< body: canonical round record */
    EO_LOG_SET = 1,   /**< body: {"player":…,"rating":…} */
    EO_LOG_RESET = 2, /**< body: {"player":…} */
    EO_LOG_SEASON = 3, /**< body: {"season":…,"f":…,"s":…}: a new season (soft reset) */
    EO_LOG_REFIT = 4   /**< body: {"players":[[id,mean(,sigma)],…],"upto":P}: fitted states
                            set (eo_refit_from_text()); a refit of many players is several */
} eo_log_kind;

/**
 * Appends to a pool's log. @p round_id is the round's id for EO_LOG_ROUND (unique in the pool)
 * and NULL otherwise; @p response is the body answered for it (kept for idempotent replies).
 * Seqs start at 1 and count every kind of entry of the pool. @p seq may be NULL.
 * Returns 0 with *seq the entry's position, EO_EEXIST (round id taken), EO_ENOTFOUND (no pool
 * with that id), EO_EINVAL (a round without id or an edit with one) or EO_EIO.
 */
int eo_store_log_append(eo_store *s, int64_t pool_id, eo_log_kind kind, const char *round_id,
                        const char *body, const char *response, int64_t at, int64_t *seq);

/** Finds a logged round by id: its canonical body and its response (either out-pointer may be
 *  NULL; *response is NULL if none was logged). Sees the handle's own uncommitted writes.
 *  EO_ENOTFOUND if absent. */
int eo_store_round_find(eo_store *s, int64_t pool_id, const char *round_id, char **body,
                        char **response);

/** One log entry as passed to a eo_store_log_each() callback (pointers valid during the call). */
typedef struct eo_log_entry {
    int64_t seq;
    eo_log_kind kind;
    const char *round_id; /**< NULL unless EO_LOG_ROUND */
    const char *body;
    int64_t at;
} eo_log_entry;

/**
 * Calls @p fn for each log entry of the pool with seq > @p after, in seq order, until it returns
 * non-zero (that value is returned). Returns 0 after the last entry, or EO_EIO.
 * The callback must not use the same handle.
 */
int eo_store_log_each(eo_store *s, int64_t pool_id, int64_t after,
                      int (*fn)(void *ctx, const eo_log_entry *e), void *ctx);

/** Number of rounds in a pool's log. */
int eo_store_round_count(eo_store *s, int64_t pool_id, int64_t *n);

/** Current state of one player, as lookups read it (eo_rating_view at the last update; the
 *  stale flag is computed at read time from last_ended_at). */
typedef struct eo_player_row {
    double rating;         /**< display value */
    double mu;
    double sigma;
    double volatility;
    uint32_t rounds;
    bool visible;
    int64_t last_ended_at;
    double extra[EO_VIEW_EXTRA]; /**< eo_rating_view.extra (0 for models without) */
} eo_player_row;

/** The row that holds view @p v (the stale flag is not stored). */
void eo_player_row_of_view(const eo_rating_view *v, eo_player_row *out);

/** Inserts or replaces a player's row. EO_ENOTFOUND if there is no pool with that id. */
int eo_store_player_put(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row);

/** Reads a player's row. Returns 0, EO_ENOTFOUND or EO_EIO. */
int eo_store_player_get(eo_store *s, int64_t pool_id, const char *id, eo_player_row *out);

/** Deletes a player's row (absent is not an error). */
int eo_store_player_delete(eo_store *s, int64_t pool_id, const char *id);

/**
 * Calls @p fn with every player row of pool @p pool_id (in no particular order) until it
 * returns non-zero (that value is returned). The id and row are valid during the call only.
 * Returns 0, fn's value or EO_EIO.
 */
int eo_store_players_each(eo_store *s, int64_t pool_id,
                          int (*fn)(void *ctx, const char *id, const eo_player_row *row),
                          void *ctx);

/* ---- Seasons: the final standings of a season, archived when the next one starts --------- */

/** Records season @p name of a pool as ended at log entry @p seq, time @p at. Returns 0,
 *  EO_EEXIST (the pool has a season of that name), EO_ENOTFOUND (no such pool) or EO_EIO. */
int eo_store_season_create(eo_store *s, int64_t pool_id, const char *name, int64_t seq,
                           int64_t at);

/** Finds a season: 0 with *seq and *at (either may be NULL), EO_ENOTFOUND or EO_EIO. */
int eo_store_season_get(eo_store *s, int64_t pool_id, const char *name, int64_t *seq,
                        int64_t *at);

/** Calls @p fn for each season of the pool in the order they ended, until it returns non-zero
 *  (that value is returned); @p players is the number of archived standings. 0 or EO_EIO. */
int eo_store_seasons_each(eo_store *s, int64_t pool_id,
                          int (*fn)(void *ctx, const char *name, int64_t seq, int64_t at,
                                    int64_t players),
                          void *ctx);

/** Archives one player's final state in season @p season (created first). 0, EO_EEXIST,
 *  EO_ENOTFOUND (no such season) or EO_EIO. */
int eo_store_standing_put(eo_store *s, int64_t pool_id, const char *season, const char *player,
                          const eo_player_row *row);

/** Calls @p fn for each archived player of a season, highest display rating first (ties by
 *  id), from position @p offset, at most @p limit of them (0: all), until it returns non-zero
 *  (that value is returned). 0 or EO_EIO (an unknown season simply has none). */
int eo_store_standings_each(eo_store *s, int64_t pool_id, const char *season, int64_t offset,
                            int64_t limit,
                            int (*fn)(void *ctx, const char *player, const eo_player_row *row),
                            void *ctx);

/* ---- Read indexes: what the dashboard's reads need (docs/STORE.md "Read indexes") --------
 * Derived from the log, which stays the source of truth: the engine writes them with each new
 * round, and for rounds logged before they existed when it opens the store. */

/** A round as the read index keeps it: what its record says that reads show, and how it was
 *  rated. Strings are NULL when absent (and the caller's or the store's: valid during a
 *  call). */
typedef struct eo_round_ix {
    int64_t n;          /**< the pool's round number: 1, 2, … in log order */
    int64_t seq;        /**< its log entry */
    const char *round_id;
    int64_t at;         /**< when it was played (Unix seconds): ended_at, else started_at, else
                             when it was logged */
    int64_t started_at; /**< the record's (0: absent) */
    int64_t ended_at;
    const char *map, *mode, *server;
    double p_a;         /**< P(A wins) at round start, as rated */
    eo_winner winner;
} eo_round_ix;

/** One member's result in a round as the read index keeps it. */
typedef struct eo_member_ix {
    int64_t n;        /**< the round's number (eo_round_ix.n) */
    int64_t at;       /**< the round's eo_round_ix.at */
    int team;         /**< 0: A, 1: B */
    int pos;          /**< position in his team's list, from 0 */
    double rating;    /**< display value after the round */
    double delta;     /**< its change in the round */
    double mu;        /**< the model's mean after the round */
    double sigma;     /**< its deviation (0 for models without one) */
    uint32_t rounds;  /**< rounds played after the round */
    bool visible;     /**< after the round */
    double weight;    /**< his share of the round (eo_round_member_weight()), 0 to 1 */
    int64_t prev;     /**< the number of the player's round before this one (0: none) */
} eo_member_ix;

/**
 * Writes player @p id's row after he played round @p n, as eo_store_player_put() does, and
 * keeps @p n as his last round and @p name (NULL: the one kept) as his last name seen (search
 * folds it to ASCII lower case); *prev gets his last round before (0: none since his row was
 * created). 0, EO_ENOTFOUND (no pool with that id) or EO_EIO.
 */
int eo_store_player_put_played(eo_store *s, int64_t pool_id, const char *id,
                               const eo_player_row *row, const char *name, int64_t n,
                               int64_t *prev);

/** Player @p id's last round (0: none) into *last: 0, EO_ENOTFOUND (no row) or EO_EIO. */
int eo_store_player_last(eo_store *s, int64_t pool_id, const char *id, int64_t *last);

/** Sets player @p id's last round @p last, the one before @p prev and, unless NULL, his name,
 *  without changing his rating: for rounds indexed after they were rated (a missing row is no
 *  error: nothing is written). 0 or EO_EIO. */
int eo_store_player_link(eo_store *s, int64_t pool_id, const char *id, const char *name,
                         int64_t last, int64_t prev);

/** Adds round @p r of a pool to the index with its @p count members' results @p m (A's then
 *  B's; ids @p ids; n and at are the round's). 0, EO_EEXIST (its number is taken), EO_ENOMEM or
 *  EO_EIO. */
int eo_store_round_ix_put(eo_store *s, int64_t pool_id, const eo_round_ix *r,
                          const char *const *ids, const eo_member_ix *m, size_t count);

/** The pool's last indexed round into @p out (its numbers only: strings NULL): 0,
 *  EO_ENOTFOUND (none) or EO_EIO. */
int eo_store_round_ix_last(eo_store *s, int64_t pool_id, eo_round_ix *out);

/** Adds @p d to the pool's health sums of day @p day (Unix seconds / 86400) and calibration bin
 *  @p bin (eo_eval_bin_index()). 0, EO_EINVAL (bin out of range) or EO_EIO. */
int eo_store_health_add(eo_store *s, int64_t pool_id, int64_t day, int bin,
                        const eo_eval_sums *d);

/** Player @p id's last name seen: *name malloc'd, or NULL when none was seen. 0, EO_ENOTFOUND
 *  (no row) or EO_EIO. */
int eo_store_player_name_get(eo_store *s, int64_t pool_id, const char *id, char **name);

/** Visible players of a pool (the board), without a search. */
int eo_store_board_count(eo_store *s, int64_t pool_id, int64_t *n);

/**
 * The board: visible players by display rating, highest first (ties by id), with their rank
 * (1 for the first visible player). With @p q (NULL: none) only the players whose id starts
 * with @p q, or whose name does ignoring ASCII case, each with his rank on the whole board.
 * Calls @p fn for the matches from position @p offset (0 is the first), at most @p limit of them
 * (> 0), until it returns non-zero (returned). @p name is NULL when none was seen; pointers are
 * valid during the call. 0 or EO_EIO.
 */
int eo_store_board_each(eo_store *s, int64_t pool_id, const char *q, int64_t offset,
                        int64_t limit,
                        int (*fn)(void *ctx, int64_t rank, const char *id, const char *name,
                                  const eo_player_row *row),
                        void *ctx);

/** Player @p id's rank on the board: 0, EO_ENOTFOUND (unknown or not visible) or EO_EIO. */
int eo_store_board_rank(eo_store *s, int64_t pool_id, const char *id, int64_t *rank);

/**
 * Player @p id's results after each of his rounds (an admin's reset or set between them
 * changes none), in round order: the last @p limit (> 0) of them, back to the first played
 * before @p since (Unix seconds; eo_member_ix.at), which is left out with everything older.
 * Calls @p fn per result until it returns non-zero (returned). 0, EO_ENOMEM or EO_EIO.
 */
int eo_store_history_each(eo_store *s, int64_t pool_id, const char *id, int64_t since,
                          int64_t limit, int (*fn)(void *ctx, const eo_member_ix *m), void *ctx);

/** A round of a list: its index entry and its members' results (all valid during the call). */
typedef struct eo_round_item {
    const eo_round_ix *ix;
    size_t count;                /**< members, A's then B's */
    const char *const *ids;      /**< their ids */
    const eo_member_ix *members; /**< their results */
} eo_round_item;

/**
 * The pool's rounds, newest first (log order): from position @p offset (0: the last round), at
 * most @p limit (> 0). Calls @p fn per round until it returns non-zero (returned). 0 or EO_EIO.
 */
int eo_store_rounds_each(eo_store *s, int64_t pool_id, int64_t offset, int64_t limit,
                         int (*fn)(void *ctx, const eo_round_item *r), void *ctx);

/** Player @p id's rounds (those of eo_store_history_each()), newest first, as
 *  eo_store_rounds_each(), with his result @p m. */
int eo_store_player_rounds_each(eo_store *s, int64_t pool_id, const char *id, int64_t offset,
                                int64_t limit,
                                int (*fn)(void *ctx, const eo_round_item *r,
                                          const eo_member_ix *m),
                                void *ctx);

/** The round of id @p round_id through @p fn (once): its return, EO_ENOTFOUND or EO_EIO. */
int eo_store_round_get(eo_store *s, int64_t pool_id, const char *round_id,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx);

/** The pool's health sums of days >= @p from_day, by day then bin: @p fn per (day, bin) until
 *  it returns non-zero (returned). 0 or EO_EIO. */
int eo_store_health_each(eo_store *s, int64_t pool_id, int64_t from_day,
                         int (*fn)(void *ctx, int64_t day, int bin, const eo_eval_sums *d),
                         void *ctx);
/* ---- Matchmaking: queues, tickets, instances and sessions (docs/MATCHMAKING.md) ---------- */

/** The kinds of matchmaking objects; an object's name is unique within its kind. */
typedef enum {
    EO_MM_QUEUE = 0,
    EO_MM_TICKET = 1,
    EO_MM_INSTANCE = 2,
    EO_MM_SESSION = 3
} eo_mm_kind;

#define EO_MM_STATUS_MAX 15 /**< bytes of a status word, without the NUL */
#define EO_MM_TOKEN_MAX 64  /**< bytes of a token, without the NUL */

/**
 * One matchmaking object as stored. The writer keeps the live ones in memory and rebuilds them
 * from these rows at start; pollers read @c doc without the writer.
 * From eo_store_mm_get() @c request and @c doc are malloc'd (eo_mm_row_free()); in an
 * eo_store_mm_each() callback they are the store's, valid during the call; to eo_store_mm_put()
 * they are the caller's.
 */
typedef struct eo_mm_row {
    char name[EO_ID_MAX + 1];          /**< the object's id */
    char owner[EO_ID_MAX + 1];         /**< a ticket's queue, a session's instance; else "" */
    char status[EO_MM_STATUS_MAX + 1]; /**< the object's state word ("queued", "open", …) */
    char token[EO_MM_TOKEN_MAX + 1];   /**< the bearer token of a ticket or instance; else "" */
    bool live;                         /**< held by the writer (loaded at start) */
    char *request;                     /**< the canonical text of the request that made it */
    char *doc;                         /**< its current JSON document */
    int64_t created_at, updated_at;    /**< Unix milliseconds */
} eo_mm_row;

/** Frees what eo_store_mm_get() allocated in @p row. NULL is a no-op. */
void eo_mm_row_free(eo_mm_row *row);

/** Inserts the object @p row of @p kind, or replaces every column of the one of that name.
 *  @c request and @c doc are required. 0, EO_EINVAL or EO_EIO. */
int eo_store_mm_put(eo_store *s, eo_mm_kind kind, const eo_mm_row *row);

/** Sets the state of an object: its status, liveness, document and update time. 0,
 *  EO_ENOTFOUND (no object of that kind and name), EO_EINVAL or EO_EIO. */
int eo_store_mm_set(eo_store *s, eo_mm_kind kind, const char *name, const char *status, bool live,
                    const char *doc, int64_t updated_at);

/** Reads an object (request and doc malloc'd into @p out). 0, EO_ENOTFOUND, EO_ENOMEM or
 *  EO_EIO. */
int eo_store_mm_get(eo_store *s, eo_mm_kind kind, const char *name, eo_mm_row *out);

/** Calls @p fn for each object of @p kind (only the live ones when @p live_only), oldest first
 *  (created_at, then insertion), until it returns non-zero (that value is returned). The row
 *  is valid during the call only; the callback must not use the same handle. 0 or EO_EIO. */
int eo_store_mm_each(eo_store *s, eo_mm_kind kind, bool live_only,
                     int (*fn)(void *ctx, const eo_mm_row *row), void *ctx);

/** Deletes the objects that are not live and were last updated before @p before (Unix ms);
 *  *@p n (may be NULL) gets how many. 0 or EO_EIO. */
int eo_store_mm_prune(eo_store *s, int64_t before, int64_t *n);

#ifdef __cplusplus
}
#endif
#endif
