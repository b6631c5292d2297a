/**
 * @file eo_engine.h
 * The engine joins the pure core to a store: it keeps every pool in memory as an eo_pool folded
 * from the pool's log, and turns requests (a round, an admin edit, a new pool) into log entries
 * and player rows, in transactions. The service's single writer thread and `evenodds import`
 * both write through it, so a pool's state is always the fold of its log.
 *
 * Group commit: eo_engine_begin(), any number of eo_engine_round() / edits, eo_engine_commit().
 * Answers produced inside a batch are final only once the commit succeeds; if it fails, every
 * pool touched by the batch is reloaded from the store and the whole batch must be reported as
 * failed (nothing of it was stored). With eo_engine_isolate() on, a call of the batch that
 * fails after changing something is undone alone and the others commit.
 *
 * Thread safety: one thread at a time (the writer). Ownership: returned strings are malloc'd
 * and the caller's; the engine owns its store handle once eo_engine_open() succeeds.
 */
#ifndef EO_ENGINE_H
#define EO_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "eo_codec.h"
#include "eo_common.h"
#include "eo_pool.h"
#include "eo_store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct eo_engine eo_engine;

/** Why a request failed: the HTTP status and machine code eo_engine_status() gives for the
 *  EO_E… code the call returned, a message and the field at fault. */
typedef struct eo_engine_error {
    int status;          /**< 400, 404, 409, 422, 500 */
    char code[32];       /**< e.g. "invalid_round", "unknown_pool", "round_conflict" */
    char message[200];
    char field[64];      /**< JSON path of the offending field, or "" */
} eo_engine_error;

/** What a call was doing: it decides what some EO_E… codes mean to a client. */
typedef enum eo_engine_op {
    EO_OP_ANY,    /**< loading, committing, finding a pool */
    EO_OP_ROUND,  /**< rating a round */
    EO_OP_EDIT,   /**< setting or resetting a player */
    EO_OP_POOL,   /**< creating a pool */
    EO_OP_SEASON, /**< ending a season */
    EO_OP_REFIT,  /**< applying a refit */
    EO_OP_READ    /**< reading a pool's figures (quality, maps) */
} eo_engine_op;

/**
 * The one mapping from a failure to what a client is told (docs/SERVICE.md "Errors"):
 * EO_ENOTFOUND 404 "unknown_pool"; EO_ECONFLICT 409 "round_conflict"; EO_EEXIST 409
 * "pool_exists" ("season_exists" for a season); EO_ERANGE 422 "out_of_range" for a round, else
 * like EO_EINVAL; EO_EINVAL, EO_EPARSE, EO_ELIMIT 400 "invalid_round" for a round, else
 * "invalid_request"; EO_EIO and EO_EBUSY 500 "storage"; anything else 500 "internal".
 */
void eo_engine_status(int rc, eo_engine_op op, int *status, const char **code);

/** Fills @p err (may be NULL) for @p rc through eo_engine_status(), with @p field (NULL: "")
 *  and a printf-formatted message; returns @p rc. */
int eo_engine_fail(eo_engine_error *err, eo_engine_op op, int rc, const char *field,
                   const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/**
 * Opens an engine over @p store (taken over: closed by eo_engine_close(), also on failure) and
 * folds every pool's log into memory. Returns 0, EO_EIO or EO_ENOMEM with @p err filled.
 */
int eo_engine_open(eo_store *store, eo_engine **out, eo_engine_error *err);

/** Closes the engine and its store. NULL is a no-op. */
void eo_engine_close(eo_engine *e);

/** Starts a batch (a store transaction). */
int eo_engine_begin(eo_engine *e);

/**
 * Commits the batch; on failure reloads the touched pools and returns EO_EIO. Without
 * isolation, a batch in which an update failed after it had changed something (a storage
 * error: status 500) cannot commit: every later call of the batch fails with EO_EIO, and
 * commit rolls back and returns EO_EIO. Failures before any change (400, 404, 409, 422) leave
 * the batch intact.
 */
int eo_engine_commit(eo_engine *e);

/**
 * Turns on (or off) isolation of the calls of a batch, from the next batch on (off by
 * default: `evenodds import` keeps a batch all or nothing). With it on, every call inside a
 * batch runs behind a store savepoint (eo_store_savepoint()): a call that fails after it has
 * written or changed something (a storage error on its own log entry or rows) is undone alone,
 * the store back to its savepoint and its pool folded again from what the store then holds,
 * so memory and store still agree; it answers its own error (500 "storage") and the rest of
 * the batch goes on and commits. Only when the store cannot go back to the savepoint (the
 * backend rolled the whole transaction back, e.g. a full disk) does the batch fail as a whole,
 * as without isolation. Each call then costs a savepoint and its release, and an undone call
 * the refold of its pool.
 */
void eo_engine_isolate(eo_engine *e, bool on);

/** Abandons the batch: rolls back and reloads the touched pools (created pools are dropped). */
int eo_engine_rollback(eo_engine *e);

/**
 * Creates a pool. @p params is a JSON object of model parameters (may be NULL): for SynElo any
 * of the eo_synelo_params field names, plus "kmax_team" (Θ by F1's rule; not with "theta").
 * Unknown parameters are an error naming them. Decoded as a stored pool's
 * (eo_pool_config_from_json(): a parameter not given has its table's default, the bias and
 * presence off), so a configuration written by eo_pool_config_to_json() creates the same pool;
 * a new pool's defaults (`POST /v1/pools`, `serve`'s default pool) are resolved before, with
 * eo_pool_config_new_from_json() and eo_engine_pool_create_config(). @p model NULL means
 * "synelo". @p name must pass
 * eo_pool_name_check() (else 400, field "name", the rule as message); pools created before
 * that rule keep their names and work as any other. The pool is stored with every parameter's
 * value (eo_pool_config_to_json()). Returns 0, EO_EEXIST (409 "pool_exists"), EO_EINVAL (400
 * "invalid_request", field "name", "model", "params" or "params.NAME"), EO_EIO (500). Like
 * every call below, outside a batch it commits by itself.
 */
int eo_engine_pool_create(eo_engine *e, const char *name, const char *model, const json_t *params,
                          int64_t now, eo_engine_error *err);

/** eo_engine_pool_create() of a configuration decoded and checked by the caller
 *  (eo_pool_config_from_json()). Same errors but those of the parameters. */
int eo_engine_pool_create_config(eo_engine *e, const char *name, const eo_pool_config *cfg,
                                 int64_t now, eo_engine_error *err);

/** The in-memory pool by name, or NULL. Valid until the next engine call. */
const eo_pool *eo_engine_pool(const eo_engine *e, const char *name);

/**
 * Rates one round of pool @p pool. @p round is the parsed request object. Idempotent on the
 * round id: the same id with the same canonical content gives the first answer again (and
 * *replayed = 1, nothing written); a different content gives EO_ECONFLICT (409).
 * On success *response is the JSON body {"round":…, "players":[…]} (malloc'd): per member, A's
 * then B's, {"id","rating","delta","expected","k","rounds","visible"}, and "mu" and "sigma" for the
 * models with a deviation. The same id twice inside
 * one batch is detected too (the second is a replay or a conflict). A new round whose canonical
 * text is longer than EO_ROUND_TEXT_MAX is refused (eo_round_text_check(): 400, its longest
 * field named), so that every logged round fits a line `evenodds import` reads. The model
 * rates it with eo_pool_apply_checked(): a round that would leave a participant outside the
 * model's range (eo_model_range_of()) or make any value non-finite changes nothing and is 422
 * "out_of_range", field "A[i]" or "B[j]" (the member), the message naming the player, the mean
 * and the range. Errors: 404 "unknown_pool", 400 "invalid_round" (field from the codec), 409
 * "round_conflict" (field "id"), 422 "out_of_range", 500 "storage".
 */
int eo_engine_round(eo_engine *e, const char *pool, const json_t *round, int64_t now,
                    char **response, int *replayed, eo_engine_error *err);

/**
 * eo_engine_round() of a round decoded and checked by the caller (eo_round_request_from_json(),
 * on another thread: the service's HTTP threads), so that the writer only rates and stores it.
 * Same answers and errors; @p q is the caller's and is not changed.
 */
int eo_engine_round_request(eo_engine *e, const char *pool, const eo_round_request *q,
                            int64_t now, char **response, int *replayed, eo_engine_error *err);

/** Admin: sets a player's rating (logged): @p rating the mean, @p sigma the deviation or
 *  negative to keep it (eo_model_set()). A value outside the model's range
 *  (eo_model_check_set()) is 400 "invalid_request" naming the field, "rating" or "sigma", with
 *  the allowed range in the message, and nothing is logged; the player id passes eo_id_check()
 *  (400, field "player"). Returns 0, EO_ENOTFOUND (404 pool), EO_ERANGE, EO_EINVAL, EO_EIO. */
int eo_engine_set_rating(eo_engine *e, const char *pool, const char *player, double rating,
                         double sigma, int64_t now, eo_engine_error *err);

/** Admin: resets a player to R0 and shadow (logged). Unknown players are not an error. */
int eo_engine_reset_player(eo_engine *e, const char *pool, const char *player, int64_t now,
                           eo_engine_error *err);

/**
 * Admin: ends season @p season of a pool and starts the next (logged): every player's state at
 * @p now is archived under @p season (eo_store_standing_put), then eo_pool_season_reset(@p f,
 * @p s) applies the soft reset and every player row is rewritten. @p season passes eo_id_check()
 * (400, field "name"); f in [0, 1] (400, "f"); s >= 0 finite (400, "s"), or negative for the
 * default, a third of a new player's deviation (0 for models without one); a season of that name
 * exists already: EO_EEXIST (409, "season_exists"). *players receives the number archived (may
 * be NULL). Returns 0, EO_ENOTFOUND (404 pool), EO_EINVAL, EO_EEXIST, EO_EIO.
 */
int eo_engine_season(eo_engine *e, const char *pool, const char *season, double f, double s,
                     int64_t now, int64_t *players, eo_engine_error *err);

/**
 * Admin: sets the fitted states @p v[0..n) of a whole-history refit of pool @p pool computed
 * from its log up to seq @p upto (logged; docs/STORE.md "The refit record"). Every value is
 * checked against the model first (400 "invalid_request", field "players[i]": a bad id or a
 * value outside the model's range, eo_model_check_set(); nothing is logged). Then, in one
 * transaction, the values are logged as ceil(n / EO_REFIT_PLAYERS_MAX) consecutive EO_LOG_REFIT records, applied to the
 * in-memory pool with eo_refit_apply() (each listed player's state set; rounds counts and
 * unlisted players kept; rounds logged after @p upto are not applied again: their effect on
 * the old states is replaced) and every listed player's row is rewritten. *records (may be
 * NULL) receives the number of records. Returns 0, EO_ENOTFOUND (404 pool), EO_EINVAL,
 * EO_ERANGE, EO_EIO or EO_ENOMEM (500).
 */
int eo_engine_refit(eo_engine *e, const char *pool, int64_t upto, const eo_refit_value *v,
                    size_t n, int64_t now, size_t *records, eo_engine_error *err);

/**
 * Admin: changes the configuration of pool @p pool to @p cfg (a re-tune's apply): in one
 * transaction the pool's stored model and parameters are replaced (every parameter, as at
 * creation), the whole log is folded again under them (rounds, admin edits, seasons and refit
 * records, as at load) and every player row is rewritten (rows of players the new fold does
 * not know are deleted). Not logged: the log is the same, its fold is what changes, and a
 * restart folds it under the stored parameters to the same state. *players (may be NULL)
 * receives the rows written. The fold costs a replay of the pool's log on the calling thread.
 * Returns 0, EO_ENOTFOUND (404 pool), EO_EINVAL (400, field "params": eo_pool_create()
 * refuses @p cfg), EO_EIO or EO_ENOMEM (500).
 */
int eo_engine_pool_configure(eo_engine *e, const char *pool, const eo_pool_config *cfg, int64_t now,
                             size_t *players, eo_engine_error *err);

/**
 * Turns on (or off) the record of the player rows each batch writes, for
 * eo_engine_written_each(); off by default, so that long imports keep nothing. It takes effect
 * from the next batch.
 */
void eo_engine_track_written(eo_engine *e, bool on);

/**
 * Calls @p fn for each player row the last committed batch wrote (eo_engine_begin() to a
 * successful eo_engine_commit(), or one call's own transaction), in the order written (a
 * player written twice comes twice: the last is the row's content), with the pool's name, the
 * id and the row as written (NULL: the row was deleted). Everything passed is the engine's,
 * valid until the next engine call. Stops at fn's first non-zero return and returns it; 0
 * when done; EO_ENOMEM when the batch's record of what it wrote could not be kept (then
 * nothing is reported); EO_EINVAL when the record is off, inside a batch, or after a batch
 * that did not commit.
 */
int eo_engine_written_each(eo_engine *e,
                           int (*fn)(void *ctx, const char *pool, const char *id,
                                     const eo_player_row *row),
                           void *ctx);

/** The store handle the engine writes through (for reads in the same thread). */
eo_store *eo_engine_store(eo_engine *e);

#ifdef __cplusplus
}
#endif
#endif
