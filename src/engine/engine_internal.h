/* Shared inside the engine: the pool table, batch state and error helpers. */
#ifndef EO_ENGINE_INTERNAL_H
#define EO_ENGINE_INTERNAL_H

#include <stdbool.h>

#include "engine/seed.h"
#include "evenodds/eo_engine.h"

/* A pool as the engine keeps it: the store's row (id, name) beside the core's eo_pool folded
 * from the pool's log. (The service's published view of a pool is eo__pool_facts.) */
typedef struct eo__stored_pool {
    int64_t id;          /* the store's pool id */
    char *name;          /* owned */
    eo_pool *pool;       /* owned; NULL while a reload after a failed batch has not succeeded */
    bool touched;        /* changed by the open batch */
    bool created;        /* created by the open batch */
} eo__stored_pool;

/* A player row written by the open or last committed batch: the pool's index, the offset of
 * the id in eo_engine.written_ids, and the row (deleted: the row was deleted). */
typedef struct eo__written {
    size_t pool;
    size_t id;
    bool deleted;
    eo_player_row row;
} eo__written;

struct eo_engine {
    eo_store *store;
    eo__stored_pool *pools;
    size_t npools, cap;
    bool in_batch;       /* a store transaction is open */
    bool batch_failed;   /* memory and store may disagree: the batch can only roll back */
    eo_member_result members[EO_PLAYERS_MAX];
    /* a round's entries in the read indexes, as engine_index.c builds them */
    eo_member_ix ix_members[EO_PLAYERS_MAX];
    const char *ix_ids[EO_PLAYERS_MAX];
    /* The rows written since eo_engine_begin() (eo_engine_written_each()); emptied by begin
     * and by a batch that does not commit. written_lost: one could not be recorded. */
    eo__written *written;
    size_t nwritten, capwritten;
    char *written_ids; /* the ids, NUL-terminated one after another */
    size_t ids_len, ids_cap;
    bool written_track;  /* eo_engine_track_written(): off by default */
    bool written_lost;
    bool written_ok;     /* the last batch committed: written is what it wrote */
    /* eo_engine_isolate(): each call inside a batch runs in a store savepoint. The marks are
     * the written record as the call found it, to forget the rows of a call undone. */
    bool isolate;
    size_t mark_nwritten, mark_ids_len;
    bool mark_lost;
};


/* The pool entry by name, or NULL. A broken entry (pool NULL) is reloaded first; if that fails
 * it is returned as is and the caller answers 500. */
eo__stored_pool *eo__engine_find(eo_engine *e, const char *name);

/* The usable pool named @p name for an operation: 0 and *out, or 404 unknown_pool, or 500
 * storage when it could not be reloaded (err filled). */
int eo__engine_target(eo_engine *e, const char *name, eo__stored_pool **out, eo_engine_error *err);

/* Starts the transaction of one operation: joins the open batch (*own = false; in a batch
 * with isolation on, behind a savepoint) or opens a transaction of its own (*own = true).
 * EO_EIO if the open batch has failed already or the savepoint cannot be set. */
int eo__engine_op_begin(eo_engine *e, bool *own, eo_engine_error *err);

/* Ends an operation. On success commits an own transaction (EO_EIO if that fails) or keeps the
 * operation in the batch. On failure with @p mutated (the store or memory may have changed):
 * an own transaction is rolled back at once (touched pools refolded); in a batch with
 * isolation on, the store goes back to the operation's savepoint and @p changed (the pool
 * whose memory may have changed, or NULL) is folded again from what the store now holds, so
 * the rest of the batch goes on; otherwise, or when that fails, the batch is marked failed.
 * Returns the final code. */
int eo__engine_op_end(eo_engine *e, bool own, int rc, bool mutated, eo__stored_pool *changed,
                      eo_engine_error *err);

/* A new pool of configuration @p cfg folded from the whole log of store pool @p id (named
 * @p name in messages): what loading a pool does; with @p index, the rounds the read indexes
 * lack are indexed on the way. 0, EO_EIO or EO_ENOMEM with @p err. */
int eo__engine_fold(eo_engine *e, int64_t id, const char *name, const eo_pool_config *cfg,
                    bool index, eo_pool **out, eo_engine_error *err);

/* Adds a pool to the table (takes @p pool). */
int eo__engine_add(eo_engine *e, int64_t id, const char *name, eo_pool *pool);

/* Writes the player's row as the pool now shows it (deleted if the pool does not know him). */
int eo__engine_put_player(eo_engine *e, const eo__stored_pool *p, const char *id, int64_t now);

/* The row of player @p id, who just played round @p n (his name in it: @p name, NULL for none),
 * as eo__engine_put_player() writes it, with the chain of his rounds (*prev: his round before,
 * eo_store_player_put_played()). */
int eo__engine_put_played(eo_engine *e, const eo__stored_pool *p, const char *id, int64_t now,
                          const char *name, int64_t n, int64_t *prev);

/* ---- engine_index.c: the read indexes (docs/STORE.md "Read indexes") ---------------------- */

/* Writes the rows of round @p r's members (eo__engine_put_played()) and indexes the round,
 * logged at @p seq, time @p now, rated with P(A) @p p_a and results @p m (A's members then
 * B's). 0 or the store's code. */
int eo__engine_index_round(eo_engine *e, const eo__stored_pool *p, const eo_round *r,
                           double p_a, const eo_member_result *m, int64_t seq, int64_t now);

/* Rounds folded at open that the indexes lack, written a few thousand at a time (the fold
 * reads the log through the store handle, which its callback may not use). */
typedef struct eo__ix_backlog eo__ix_backlog;
/* Takes @p r (zeroed) and a copy of its results into *b (created on first use). 0, EO_ENOMEM. */
int eo__ix_backlog_round(eo__ix_backlog **b, eo_round *r, double p_a, const eo_member_result *m,
                         int64_t seq, int64_t logged);
size_t eo__ix_backlog_size(const eo__ix_backlog *b);
/* Indexes what @p b holds in one transaction (rounds, and the players' chains and names) and
 * empties it. 0 or the store's code. */
int eo__ix_backlog_flush(eo_engine *e, int64_t pool_id, eo__ix_backlog *b);
void eo__ix_backlog_free(eo__ix_backlog *b);

#endif
