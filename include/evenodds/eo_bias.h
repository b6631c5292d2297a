/**
 * @file eo_bias.h
 * Map and side bias (docs/MODELS.md "Map and side bias"): per pool, per map (optionally per
 * team-size bucket or game mode), how much side A is favoured beyond the teams' strengths, in the
 * model's own field units (a logit offset for SynElo, Elo, Glicko-2 and hive; a performance offset
 * in μ units for TrueSkill and Weng-Lin). It enters every model as the field term of eo_model.h.
 *
 * The estimate is one Fisher-scoring step from 0 with a Gaussian prior. For every round of a
 * key, with P0 the model's P(A) at field 0 and g = dP/dfield at 0 (team strengths at round
 * start), and S the outcome (1, ½, 0):
 *     U += g·(S − P0) / (P0·(1 − P0)),   I += g² / (P0·(1 − P0)),   n += 1,
 *     κ = prior·I/n (the prior is worth @c prior average plays of this key),
 *     bias = U / (I + κ),   uncertainty = 1 / √(I + κ).
 * For a logistic model g = P0·(1 − P0), so U = Σ (S − P0) and I = Σ P0·(1 − P0).
 * Continuous in the outcomes (no jump at a 50 % win rate), exactly antisymmetric between sides
 * (S → 1 − S, P0 → 1 − P0 gives U → −U, I unchanged), shrunk to 0 for few plays and to the
 * data's own estimate as plays accumulate; and measured against the teams' strengths, so a
 * map where the stronger team kept landing on side A does not read as a biased map.
 * docs/MODELS.md, "Map and side bias", gives the reasons and the figures.
 *
 * Pure: no I/O, no clock, no globals. Deterministic: the same observations in the same order
 * give the same bits on every machine.
 * Ownership: a table (eo_bias) owns copies of its keys; strings it returns stay valid for the
 * table's life. Thread safety: none; one thread at a time per table.
 */
#ifndef EO_BIAS_H
#define EO_BIAS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What a pool keys its bias by. Values are stable; JSON and `--param` use the names. */
typedef enum {
    EO_BIAS_OFF = 0,      /**< "off": no bias (the field term stays 0) */
    EO_BIAS_MAP = 1,      /**< "map": per map */
    EO_BIAS_MAP_SIZE = 2, /**< "map_size": per map and team-size bucket */
    EO_BIAS_MAP_MODE = 3, /**< "map_mode": per map and game mode */
    EO_BIAS_BY_COUNT
} eo_bias_by;

/** Name of @p by ("off", "map", "map_size", "map_mode"), or NULL. */
const char *eo_bias_by_name(eo_bias_by by);

/** A pool's bias parameters. */
typedef struct eo_bias_config {
    eo_bias_by by;   /**< default EO_BIAS_OFF */
    double prior;    /**< "bias_prior": the prior's weight in average plays, in [0, 1e6];
                          default EO_BIAS_PRIOR_DEFAULT */
    double strength; /**< "bias_strength": share of the estimate applied, in [0, 1]; default 1 */
} eo_bias_config;

/** Default of "bias_prior" (docs/MODELS.md says why). */
#define EO_BIAS_PRIOR_DEFAULT 20.0

/** Fills @p c with the defaults (bias off). A zeroed config is also "off". */
void eo_bias_config_default(eo_bias_config *c);

/**
 * Sets parameter @p name ("bias", "bias_prior" or "bias_strength") from @p text (a name of
 * eo_bias_by_name() for "bias", a number for the others). Returns 0; EO_ENOTFOUND when
 * @p name is not a bias parameter (@p err untouched, so callers try the model's table next);
 * EO_EINVAL for a bad value (@p err, may be NULL: field = the name, message = what is allowed).
 * On error @p c is unchanged.
 */
int eo_bias_config_set(eo_bias_config *c, const char *name, const char *text,
                       eo_round_error *err);

/** The same with a number, for "bias_prior" and "bias_strength" ("bias" takes a name only:
 *  EO_EINVAL). */
int eo_bias_config_set_number(eo_bias_config *c, const char *name, double value,
                              eo_round_error *err);

/** Checks every value of @p c. Returns 0 or EO_EINVAL (@p err filled as above). */
int eo_bias_config_check(const eo_bias_config *c, eo_round_error *err);

/** True when @p name is one of the bias parameters. */
bool eo_bias_param_name(const char *name);

/**
 * The team-size bucket of a round with @p na and @p nb members: "1-6" when the larger team has
 * at most 6 members, "7-12" up to 12, "13+" beyond. Static strings.
 */
const char *eo_bias_size_bucket(size_t na, size_t nb);

/**
 * A key: the map, and the size bucket and the mode where the pool keys by them (NULL where it
 * does not; a round without a mode under "map_mode" has its own key with mode NULL). The
 * strings are borrowed.
 */
typedef struct eo_bias_key {
    const char *map;
    const char *size;
    const char *mode;
} eo_bias_key;

/**
 * The key of a round on @p map with @p na and @p nb members and game mode @p mode (NULL: none)
 * under @p c. Returns 0, or EO_ENOTFOUND when the bias is off or @p map is NULL (such rounds
 * take field 0 and teach nothing).
 */
int eo_bias_key_of(const eo_bias_config *c, const char *map, size_t na, size_t nb,
                   const char *mode, eo_bias_key *out);

/** A table of bias estimates. */
typedef struct eo_bias eo_bias;

/** Creates an empty table for @p c (checked). Returns 0, EO_EINVAL or EO_ENOMEM. */
int eo_bias_create(const eo_bias_config *c, eo_bias **out);

/** Destroys @p t. NULL is a no-op. */
void eo_bias_destroy(eo_bias *t);

/** The table's configuration. */
const eo_bias_config *eo_bias_get_config(const eo_bias *t);

/** Number of keys the table has seen (entries are indexed 0 .. count−1 in order of arrival). */
size_t eo_bias_count(const eo_bias *t);

/** Entry of key @p k, or EO_ENOTFOUND. Returns 0 with *index set. */
int eo_bias_find(const eo_bias *t, const eo_bias_key *k, size_t *index);

/**
 * Entry of key @p k, created (no plays) when absent. Returns 0, EO_EINVAL (a string is not a
 * valid id: eo_id_check()) or EO_ENOMEM (the table is unchanged).
 */
int eo_bias_slot(eo_bias *t, const eo_bias_key *k, size_t *index);

/** Forgets the entries with index >= @p n (undo of eo_bias_slot() when the round failed). */
void eo_bias_truncate(eo_bias *t, size_t n);

/**
 * The field term to apply for entry @p index: bias_strength · the current estimate (0 for an
 * entry without plays). An index out of range gives 0.
 */
double eo_bias_field(const eo_bias *t, size_t index);

/**
 * Adds one round to entry @p index: @p p0 = P(A wins) at field 0, @p g = dP/dfield at 0 (the
 * model's units), @p winner the outcome. A round with p0 outside (0, 1), or g not finite and
 * >= 0, counts in plays and win counts but teaches nothing on the bias (no information).
 * Returns 0, or EO_EINVAL (index out of range or bad winner; nothing changed).
 */
int eo_bias_observe(eo_bias *t, size_t index, double p0, double g, eo_winner winner);

/** One entry as the service reports it. Strings point into the table. */
typedef struct eo_bias_stats {
    const char *map;
    const char *size;      /**< NULL unless the pool keys by size */
    const char *mode;      /**< NULL unless keyed by mode and the rounds had one */
    uint64_t plays;        /**< rounds seen (draws included) */
    uint64_t a_wins, b_wins, draws;
    double a_win_rate;     /**< (a_wins + draws/2) / plays; NaN without plays */
    double bias;           /**< the estimate U / (I + κ), in the model's field units */
    double applied;        /**< what enters the field term: bias_strength · bias */
    double uncertainty;    /**< 1 / √(I + κ) (its standard deviation); +∞ without information */
} eo_bias_stats;

/** Fills @p out for entry @p index. Returns 0 or EO_EINVAL (out of range). */
int eo_bias_get(const eo_bias *t, size_t index, eo_bias_stats *out);

/**
 * Calls @p fn for every entry in ascending byte order of map, then size, then mode (a NULL
 * mode first), until it returns non-zero (that value is returned). Returns 0, that value or
 * EO_ENOMEM.
 */
int eo_bias_each(const eo_bias *t, int (*fn)(void *ctx, const eo_bias_stats *s), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
