/**
 * @file eo_pool.h
 * A rating pool in memory: its model and parameters (eo_model.h), every player's state by id,
 * and the pool's quality counters (F6). Folding a round log through eo_pool_apply() in order gives the
 * pool's ratings; `evenodds replay`, `evenodds import` and the service's writer all do exactly
 * that, so they agree bit for bit. Pure: no I/O, no clock (times are parameters).
 *
 * Ownership: the pool owns its players and copies every id it keeps. Pointers it returns into
 * its own memory stay valid until the next call that changes the pool.
 * Thread safety: none; one thread at a time per pool.
 */
#ifndef EO_POOL_H
#define EO_POOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"
#include "eo_model.h"
#include "eo_bias.h"
#include "eo_presence.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most divisions a pool defines, and the longest division name (bytes, without the NUL). */
#define EO_DIVISIONS_MAX 16
#define EO_DIVISION_NAME_MAX 31

/** A named tier of display ratings: from @c from (inclusive) up to the next tier's @c from. */
typedef struct eo_division {
    char name[EO_DIVISION_NAME_MAX + 1];
    double from;
} eo_division;

/** A pool's configuration: its model and the model's parameters, its divisions, its map
 *  and side bias (eo_bias.h; a zeroed @c bias is "off") and its presence term (eo_presence.h;
 *  a zeroed @c presence is "off"). */
typedef struct eo_pool_config {
    eo_model_config model;
    size_t ndivisions;                       /**< 0: the pool has no divisions */
    eo_division divisions[EO_DIVISIONS_MAX]; /**< strictly ascending @c from */
    eo_bias_config bias;                     /**< "bias", "bias_prior", "bias_strength" */
    eo_presence_config presence;             /**< "presence", "presence_prior", "presence_strength",
                                                  "partial", "partial_prior" */
    /** Secret seed of the pool's player-id table: the shell that serves clients draws one per
     *  pool (the engine: getrandom), so that ids colliding in it cannot be searched offline. No
     *  result depends on it (players are ordered by id, never by hash). Not a parameter: not
     *  stored, not in the JSON mapping; 0 by default. */
    uint64_t id_seed;
} eo_pool_config;

/**
 * The division of a display value: the last division whose @c from is <= @p display, or NULL
 * when the pool has none or @p display lies below the first. Lookups show it for visible
 * players only. Pure.
 */
const char *eo_pool_division(const eo_pool_config *cfg, double display);

/** Defaults: SynElo with the seed's table, no divisions, bias off (eo_bias_config_default()),
 *  presence off: what a stored pool's missing parameters mean (pools created before them). */
void eo_pool_config_default(eo_pool_config *cfg);

/**
 * A new pool's defaults for model @p m (docs/MODELS.md, "Defaults of new pools"): the model's
 * eo_model_config_new(), no divisions, the map bias on ("map", default prior and strength)
 * and presence on. The CLI and `POST /v1/pools` start from it; every value is stored with the
 * pool, so a later change of these defaults never alters an existing pool. Returns 0 or
 * EO_EINVAL (unknown model).
 */
int eo_pool_config_new(eo_model m, eo_pool_config *cfg);

typedef struct eo_pool eo_pool;

/** Creates an empty pool. @p cfg is copied, its model configuration checked and resolved
 *  (eo_model_config_check()), its bias configuration checked (eo_bias_config_check()).
 *  Returns 0, EO_EINVAL (bad parameters) or EO_ENOMEM. */
int eo_pool_create(const eo_pool_config *cfg, eo_pool **out);

/** Destroys the pool and everything it owns. NULL is a no-op. */
void eo_pool_destroy(eo_pool *pool);

/** The pool's configuration (the model's part resolved). */
const eo_pool_config *eo_pool_get_config(const eo_pool *pool);

/** The pool's prepared model (owned by the pool; valid for its life). */
const eo_model_ctx *eo_pool_model(const eo_pool *pool);

/**
 * Looks a player up at time @p now (Unix seconds). An unknown player gets a new player's view
 * (the model's start values, 0 rounds, not visible, not stale) and the pool is not changed.
 * Returns 0 (known) or EO_ENOTFOUND (unknown; @p out is still filled).
 */
int eo_pool_lookup(const eo_pool *pool, const char *id, int64_t now, eo_rating_view *out);

/** A new player's view at @p now, as eo_pool_lookup() gives it for an unknown id. */
void eo_pool_new_player_view(const eo_pool *pool, int64_t now, eo_rating_view *out);

/** What one round did to one member: same order as the round, A's members then B's. */
typedef struct eo_member_result {
    const char *id;    /**< points into the round passed to eo_pool_apply() */
    double before;     /**< display value at round start */
    double rating;     /**< display value after the round */
    double delta;      /**< rating - before */
    double expected;   /**< P(the member's team wins) */
    double k;          /**< step size (SynElo, Elo; 0 for the others) */
    double mu;         /**< mean after the round (eo_model_update) */
    double sigma;      /**< deviation after the round (0 for SynElo and Elo) */
    uint32_t rounds;   /**< after the round */
    bool visible;      /**< after the round */
} eo_member_result;

/** Result of eo_pool_apply(). */
typedef struct eo_round_result {
    double p_a;        /**< P(A wins) at round start */
    size_t n;          /**< members rated = r->n[0] + r->n[1] */
} eo_round_result;

/**
 * Rates one round (which must pass eo_round_validate()). Unknown players are created first.
 * eo_pool_apply() itself checks what the model relies on: both teams non-empty, at most
 * EO_PLAYERS_MAX players, a valid winner, valid ids, no player twice; the rest of the record
 * (times, parties, ...) is the caller's to validate. The players' last round end is
 * r->ended_at, or r->started_at when ended_at is 0 (kept as it was when both are 0). Each
 * member's partial-play weight is eo_model_member_weight() (eo_round_member_weight() for
 * every model but the hive one); its commander flag and playtime reach the model as
 * eo_participant_info.
 * When the pool's bias is on and the round has a map, the field term is the key's current
 * estimate (eo_bias_field(), from the rounds before this one: it is in res->p_a and every
 * member's expected), and the round then joins the estimate with P0 and dP/dfield taken from
 * eo_model_predict() on the round-start team aggregates; otherwise the bias adds 0. When the
 * pool's presence is on, the field also has eo_model_level_field() and the presence term
 * (eo_presence_field() of Σ_A w − Σ_B w, from the rounds before this one), and a round with
 * unequal presence then joins the presence estimate the same way (docs/MODELS.md "Presence").
 * With "partial" "learn" a partial member's weight is w + θ·(1 − w) (θ from the rounds
 * before, eo_pool_partial()), and a round with one joins θ's estimate (docs/MODELS.md
 * "Partial members").
 * @p members is NULL, or has room for r->n[0] + r->n[1] entries. On error the pool is
 * unchanged. Returns 0, EO_EINVAL or EO_ENOMEM.
 */
int eo_pool_apply(eo_pool *pool, const eo_round *r, eo_round_result *res,
                  eo_member_result *members);

/**
 * eo_pool_apply() for a round entering the pool for the first time (the engine rates new
 * rounds so; a log's fold and `evenodds replay` apply what was logged with eo_pool_apply()):
 * it also refuses the round, with EO_ERANGE and the pool unchanged, when its update would
 * leave a participant of weight > 0 with a mean outside the model's range (eo_model_range_of())
 * or give any value non-finite (a state, P(A), anything in @p members). Then *bad is the
 * member's index (A's then B's) and members[*bad] holds what the round would have made of
 * that member; the other entries are unspecified. Models whose rules keep every update in range
 * (eo_model_range.kept: SynElo) are not checked. @p members must have room for
 * r->n[0] + r->n[1] entries. Returns 0, EO_EINVAL, EO_ERANGE or EO_ENOMEM.
 */
int eo_pool_apply_checked(eo_pool *pool, const eo_round *r, eo_round_result *res,
                          eo_member_result *members, size_t *bad);

/**
 * The players whose state is outside the model's range (eo_model_range_of(): a mean outside
 * [lo, hi], a deviation above sigma_max, or a non-finite value) at @p now: possible only in a
 * pool folded from a log written before the range existed (an admin edit then accepted). Their
 * rounds are refused by eo_pool_apply_checked() until an edit or a reset moves them back.
 * Returns their count and, in *first (may be NULL), the id of one of them (NULL when none).
 * Pure; O(players).
 */
size_t eo_pool_outside_range(const eo_pool *pool, int64_t now, const char **first);

/**
 * P(A wins) of round @p r with the pool as it is, without rating it (the pool is not changed):
 * every member's strength at the round's end (ended_at, else started_at) summed with its
 * eo_model_member_weight() into team aggregates, an unknown player at a new player's strength,
 * and the field term of the round's bias key and of presence as eo_pool_apply() would take
 * them; then eo_model_predict(). It equals eo_pool_apply()'s res->p_a except for the hive model's
 * commanders and side offsets, which aggregates do not carry. Frozen ratings' predictions of
 * held-out rounds (`evenodds fit --holdout`). Returns 0 or EO_EINVAL (empty team, too many
 * players, a NULL id).
 */
int eo_pool_predict(const eo_pool *pool, const eo_round *r, double *p_a);

/**
 * A player handle: resolves an id once, so bulk replays skip the hashing of every member.
 * Handles stay valid for the pool's life (a reset keeps them).
 */
typedef uint32_t eo_player_handle;

/**
 * Handle of player @p id, creating the player (R0, 0 rounds: as eo_pool_apply() would on its
 * first round; from then on eo_pool_lookup() knows it) when unknown.
 * Returns 0, EO_EINVAL / EO_ELIMIT (invalid id, per eo_id_check()) or EO_ENOMEM.
 */
int eo_pool_handle(eo_pool *pool, const char *id, eo_player_handle *out);

/** The id of a handle (the pool's copy), or NULL for a handle the pool never gave. */
const char *eo_pool_handle_id(const eo_pool *pool, eo_player_handle h);

/**
 * Rates one round given by handles: team A @p a[0..na), team B @p b[0..nb), @p ended_at the
 * players' last round end (0: kept as it was). Gives exactly what eo_pool_apply() gives for
 * the same round with every member playing the whole round (weight 1). @p updates is NULL or
 * has room for na + nb entries (A's then B's).
 * Returns 0, EO_EINVAL (empty team, too many players, bad winner, unknown or repeated handle)
 * or EO_ENOMEM; on error the pool is unchanged.
 */
int eo_pool_apply_handles(eo_pool *pool, const eo_player_handle *a, size_t na,
                          const eo_player_handle *b, size_t nb, eo_winner winner,
                          int64_t ended_at, eo_round_result *res, eo_model_update *updates);

/** The pool's presence estimate (read only; eo_presence_value() gives π), or NULL when its
 *  presence is off. */
const eo_presence *eo_pool_presence(const eo_pool *pool);

/** The partial members' estimate θ's sums (eo_presence_partial_share() gives θ), or NULL when
 *  the pool does not learn θ (presence off, "partial" "time", or a model that rates every
 *  member in full). */
const eo_presence *eo_pool_partial(const eo_pool *pool);

/**
 * The presence part of the field of proposed teams @p a and @p b (eo_team_agg of their
 * members' strengths, every member at weight 1, so presence_A − presence_B = n_A − n_B) beside
 * the rest of the field @p base (the map's bias; 0 for none): eo_model_level_field() plus the
 * presence term as eo_pool_apply() would add it now (docs/MODELS.md "Presence"); 0 when
 * presence is off. Teams of equal sizes get exactly 0. Returns 0 or EO_EINVAL.
 */
int eo_pool_presence_field(const eo_pool *pool, const eo_team_agg *a, const eo_team_agg *b,
                           double base, double *field);

/** The pool's bias table (read only), or NULL when its bias is off. */
const eo_bias *eo_pool_bias(const eo_pool *pool);

/**
 * The field term a round on @p map (NULL: none) with teams of @p na and @p nb members in game
 * mode @p mode (NULL: none) would get now, for predictions of proposed teams (the balancer's
 * P(A)): 0 when the bias is off, the map is NULL or the key has no plays yet. Returns 0 or
 * EO_EINVAL (@p pool or @p field NULL).
 */
int eo_pool_bias_field(const eo_pool *pool, const char *map, size_t na, size_t nb,
                       const char *mode, double *field);

/** Admin: sets a player's rating (eo_model_set(): @p mu the mean, @p sigma the deviation or
 *  negative to keep it); rounds and history are kept. Creates the player if unknown. Returns
 *  0, EO_EINVAL / EO_ELIMIT (invalid id or value), EO_ERANGE (outside the model's range, as
 *  eo_model_set(); the pool is unchanged: an unknown player is not created) or EO_ENOMEM. */
int eo_pool_set_rating(eo_pool *pool, const char *id, double mu, double sigma);

/** One player's fitted state as a refit sets it (docs/STORE.md, "The refit record"): what
 *  eo_pool_set_rating() receives. The codec maps it to and from the logged record. */
typedef struct eo_refit_value {
    char id[EO_ID_MAX + 1];
    double mean;  /**< the model's mean (SynElo: an integer), finite */
    double sigma; /**< the deviation, >= 0; negative: none (the model has no deviation) */
} eo_refit_value;

/**
 * Applies refit values to @p pool exactly as the service's writer, the fold at open and
 * `evenodds replay` do: each player's state set by eo_pool_set_rating(mean, sigma) in order
 * (rounds, history and players not listed kept; unknown players created). Every value is first
 * checked against the model on a scratch player, so on EO_EINVAL (bad id) or EO_ERANGE (outside
 * the model's range, eo_model_set()) nothing changed and *bad (may be NULL) is the index at
 * fault. @p v (n values) is only read. Returns 0, EO_EINVAL, EO_ERANGE or EO_ENOMEM (then
 * players before *bad were set).
 */
int eo_refit_apply(eo_pool *pool, const eo_refit_value *v, size_t n, size_t *bad);

/** Admin: resets a player to a new player (start values, 0 rounds). Returns 0 or EO_ENOTFOUND. */
int eo_pool_reset_player(eo_pool *pool, const char *id);

/**
 * Starts a new season: a soft reset of every player toward the model's start values at time
 * @p now. Models without a deviation (SynElo, Elo): mean ← start + @p f·(mean − start), SynElo
 * rounded half to even; models with one (TrueSkill, Weng-Lin, Glicko-2): deviation ←
 * min(start deviation, √(deviation² + @p s²)), the mean kept. Rounds and histories are kept.
 * @p f in [0, 1], @p s >= 0 and finite. Returns 0 or EO_EINVAL (then nothing changed).
 */
int eo_pool_season_reset(eo_pool *pool, double f, double s, int64_t now);

/** Number of players the pool knows. */
size_t eo_pool_player_count(const eo_pool *pool);

/**
 * Calls @p fn for every player, in ascending byte order of id, until it returns non-zero (that
 * value is returned). @p now is for the stale flag.
 */
int eo_pool_each_player(const eo_pool *pool, int64_t now,
                        int (*fn)(void *ctx, const char *id, const eo_rating_view *v), void *ctx);

/** Pool quality (F6 and balance indicators). Draws count with outcome 0.5. */
typedef struct eo_pool_quality {
    uint64_t rounds;        /**< rounds rated */
    size_t players;         /**< players known */
    size_t visible_players; /**< players with a visible rating */
    double brier_all;       /**< Brier over all rounds (NaN if none) */
    double brier_recent;    /**< Brier over the last EO_POOL_RECENT rounds (NaN if none) */
    double balance_recent;  /**< mean |P_A - 0.5| over the last EO_POOL_RECENT rounds (NaN if none) */
} eo_pool_quality;

/** Window of the "recent" quality figures. */
#define EO_POOL_RECENT 500

/** Fills @p q; @p now (Unix seconds) is for the models whose visibility depends on time. */
void eo_pool_get_quality(const eo_pool *pool, int64_t now, eo_pool_quality *q);

#ifdef __cplusplus
}
#endif
#endif
