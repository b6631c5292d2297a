/* What each model implements behind eo_model.h (internal to the core).
 *
 * A model is one file src/core/models/<name>.c that defines `const eo__model_ops eo__<name>_ops`
 * and is listed in the registry (src/core/models/model.c). model.c does everything generic
 * (parameter tables, names, bounds, the context); the ops do the model's own work. Every op is
 * pure and deterministic for the same inputs on the same build. The Gaussian models (TrueSkill,
 * Weng-Lin) share every op but prepare and rate, and the member update inside rate, through
 * gaussian.h (gaussian.c).
 *
 * "impl" is the model's prepared parameters: a struct of impl_size bytes that prepare() fills
 * from the checked configuration (typed values, derived constants, tables). */
#ifndef EO_MODEL_INTERNAL_H
#define EO_MODEL_INTERNAL_H

#include <stdint.h>

#include "evenodds/eo_model.h"

typedef struct eo__model_ops {
    eo_model id;
    const char *name;
    const eo_param_spec *params; /* the parameter table */
    size_t n_params;
    size_t state_size;           /* bytes of one player's state (a multiple of 8) */
    size_t impl_size;            /* bytes of the prepared parameters */
    bool integer_display;
    bool has_deviation;          /* players have a deviation (eo_model_has_deviation()) */
    bool unweighted;             /* rates every member in full (!eo_model_uses_weights()) */
    int64_t split_unit;          /* eo_model_split_unit(): split ratings per unit of the mean */

    /* Rules between parameters beyond each value's own bounds (which model.c has checked),
     * resolving derived ones in c->v in place. NULL when there are none. On error: EO_EINVAL
     * with err->field = the parameter's name (err may be NULL). */
    int (*check)(eo_model_config *c, eo_round_error *err);
    /* Fills impl from a checked configuration. Returns 0 or EO_ENOMEM. */
    int (*prepare)(const eo_model_config *c, void *impl);
    /* The values a new pool gets where they differ from the table's defaults
     * (eo_model_config_new()), set in c->v without marking them given; NULL: none. */
    void (*fresh)(eo_model_config *c);
    /* Releases what prepare() allocated inside impl; NULL when nothing. */
    void (*release)(void *impl);

    void (*player_init)(const void *impl, void *st);
    /* Releases what the state owns; NULL when nothing. */
    void (*player_free)(void *st);

    void (*strength)(const void *impl, const void *st, int64_t now, eo_strength *out);
    double (*predict)(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                      double field);
    /* As eo_model_level_field(); NULL: 0 (a mean team strength, or a start level of 0). */
    double (*level)(const void *impl, const eo_team_agg *a, const eo_team_agg *b);
    /* As eo_model_quality(); NULL: model.c gives 1 - |2 P(A) - 1|. */
    double (*quality)(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                      double field);
    /* As eo_model_rate(); model.c has checked the arguments (non-empty teams, sizes, winner,
     * weights in [0, 1]). */
    int (*rate)(const void *impl, const eo_participant *a, size_t na, const eo_participant *b,
                size_t nb, eo_winner winner, double field, int64_t at, double *p_a,
                eo_model_update *out);
    /* As eo_model_rate_info(); NULL: model.c calls rate() and the model ignores the info.
     * model.c has checked the arguments as for rate() and that playtimes are not NaN/inf. */
    int (*rate_info)(const void *impl, const eo_participant *a, size_t na,
                     const eo_participant *b, size_t nb, const eo_participant_info *info,
                     eo_winner winner, double field, int64_t at, double *p_a,
                     eo_model_update *out);
    /* As eo_model_member_weight(); NULL: eo_round_member_weight(). Must return [0, 1]. */
    double (*member_weight)(const void *impl, const eo_round *r, const eo_member *m,
                            double pool_length);
    /* As eo_model_wants_pool_length(); NULL: false. */
    bool (*wants_pool_length)(const void *impl);
    void (*view)(const void *impl, const void *st, int64_t now, eo_rating_view *out);
    /* As eo_model_set(): EO_ERANGE, state unchanged, for a value outside the model's range
     * (documented in its section of docs/MODELS.md); model.c has checked that mu is finite. */
    int (*set)(const void *impl, void *st, double mu, double sigma);
    /* As eo_model_range_of(); model.c has zeroed @p out. */
    void (*range)(const void *impl, eo_model_range *out);
} eo__model_ops;

struct eo_model_ctx {
    const eo__model_ops *ops;
    eo_model_config cfg; /* checked and resolved */
    void *impl;          /* ops->impl_size bytes, owned */
};

/* Parameter value i of a checked configuration, as an int (for integer parameters). */
static inline int32_t eo__param_int(const eo_model_config *c, size_t i)
{
    return (int32_t)c->v[i];
}

/* The checks every rate entry point makes (eo_model_rate(), the models' direct APIs): both
 * teams non-empty, na + nb <= EO_PLAYERS_MAX, a valid winner, a finite field, every member with
 * a state and a weight in [0, 1]. */
bool eo__rate_args_ok(const eo_participant *a, size_t na, const eo_participant *b, size_t nb,
                      eo_winner winner, double field);

/* True when @p info is NULL or none of its @p n playtimes is NaN or infinite. */
bool eo__playtimes_ok(const eo_participant_info *info, size_t n);

/* True when lo <= v <= hi (false for NaN): the models' parameter checks. */
static inline bool eo__in(double v, double lo, double hi)
{
    return v >= lo && v <= hi;
}

/* True when the last round ended more than @p days before @p now (false with no known end). */
static inline bool eo__stale(int64_t last_ended_at, int64_t now, int32_t days)
{
    return last_ended_at != 0 && now - last_ended_at > (int64_t)days * 86400;
}

/* [start − EO_MODEL_RANGE_WINDOW, start + EO_MODEL_RANGE_WINDOW] within [lim_lo, lim_hi]: the
 * mean part of most models' ranges. */
static inline void eo__range_window(double start, double lim_lo, double lim_hi,
                                    eo_model_range *out)
{
    double lo = start - EO_MODEL_RANGE_WINDOW, hi = start + EO_MODEL_RANGE_WINDOW;
    out->lo = out->set_lo = lo > lim_lo ? lo : lim_lo;
    out->hi = out->set_hi = hi < lim_hi ? hi : lim_hi;
}

extern const eo__model_ops eo__synelo_ops;
extern const eo__model_ops eo__trueskill_ops;
extern const eo__model_ops eo__glicko2_ops;
extern const eo__model_ops eo__elo_ops;
extern const eo__model_ops eo__wenglin_ops;
extern const eo__model_ops eo__hive_ops;

#endif
