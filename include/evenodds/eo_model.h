/**
 * @file eo_model.h
 * One interface for every rating model (SynElo, TrueSkill, Glicko-2, Elo, Weng-Lin, the NS2
 * hive model). A pool picks its model and parameters when it is created; everything
 * above the core (pool, engine, service, CLI, balancer) talks to models only through this
 * header, so a model is one source file under src/core/models/ plus its entry in the registry.
 *
 * What a model does:
 *  - parameters: a table of named numbers (eo_param_spec) with defaults and bounds, so the
 *    codec, `--param name=value` and the docs handle every model alike; eo_model_prepare()
 *    checks them and derives what the hot path needs (tables, draw margins, ...);
 *  - predict: P(A wins) for two proposed teams from per-player strengths (eo_strength) summed
 *    into team aggregates (eo_team_agg), plus a field term (map/side bias in A's favour);
 *  - update: new state for every participant of a round from round-start state, each member
 *    with a partial-play weight in [0, 1];
 *  - display: the number players see, visibility, rounds, the model's own state (eo_rating_view).
 *
 * Pure: no I/O, no clock (times are parameters), no globals but constant tables.
 * Thread safety: a prepared model (eo_model_ctx) is immutable after eo_model_prepare() and may
 * be shared by threads; player states belong to one thread at a time.
 */
#ifndef EO_MODEL_H
#define EO_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The models. Values are stable (they are not stored: pools store the model's name). */
typedef enum {
    EO_MODEL_SYNELO = 0,
    EO_MODEL_TRUESKILL = 1,
    EO_MODEL_GLICKO2 = 2,
    EO_MODEL_ELO = 3,
    EO_MODEL_WENGLIN = 4,
    EO_MODEL_HIVE = 5,
    EO_MODEL_COUNT
} eo_model;

/** Name of a model ("synelo", "trueskill", "glicko2", "elo", "wenglin", "hive"); NULL if
 * unknown. */
const char *eo_model_name(eo_model m);

/** Parses a model name. Returns 0 or EO_EINVAL. */
int eo_model_parse(const char *name, eo_model *out);

/** A buffer that holds eo_model_names()'s whole list. */
#define EO_MODEL_NAMES_MAX 128

/**
 * Writes the name of every model of the registry, in eo_model order, separated by ", "
 * ("synelo, trueskill, glicko2, elo, wenglin, hive"), NUL-terminated, into @p buf of @p cap
 * bytes (cut at a name, never inside one, when it does not fit; nothing when @p cap is 0), for
 * messages that list what is known. Returns the length of the whole list, as snprintf(), so
 * that a return >= @p cap means it was cut.
 */
size_t eo_model_names(char *buf, size_t cap);

/** Most parameters any model has. */
#define EO_PARAMS_MAX 24

/**
 * One parameter of a model. Every parameter is a number; a choice (e.g. Elo's team strength
 * "sum" | "mean") is the index of its name in @c choices, written as the name in JSON and on
 * the command line.
 */
typedef struct eo_param_spec {
    const char *name;           /**< e.g. "beta" */
    const char *help;           /**< one line for --help and the docs */
    double def;                 /**< default value */
    double min, max;            /**< inclusive bounds */
    bool integer;               /**< the value must be an integer */
    const char *const *choices; /**< NULL, or the names of values 0, 1, ... (NULL-terminated) */
} eo_param_spec;

/** The parameter table of a model: @p n receives its length. NULL for an unknown model. */
const eo_param_spec *eo_model_params(eo_model m, size_t *n);

/**
 * A model and its parameter values, indexed like its table. @c given marks the parameters a
 * user set explicitly (bit i for parameter i); models use it for rules between parameters
 * (SynElo: "kmax_team" and "theta" are exclusive).
 */
typedef struct eo_model_config {
    eo_model model;
    double v[EO_PARAMS_MAX];
    uint32_t given;
} eo_model_config;

/**
 * Fills @p c with model @p m and the defaults of its parameter table (nothing given): what a
 * parameter that a stored pool does not mention means, so that pools created before a
 * parameter existed keep their behaviour. Returns 0 or EO_EINVAL.
 */
int eo_model_config_default(eo_model m, eo_model_config *c);

/**
 * Fills @p c with a new pool's defaults for model @p m (nothing given): the table's defaults with
 * the values that predict better out of the box wherever they differ (docs/MODELS.md,
 * "Defaults of new pools"): SynElo's Θ from each round's team size, the hive step normalised
 * for the round's size, ... The CLI and `POST /v1/pools` start from it.
 * Returns 0 or EO_EINVAL.
 */
int eo_model_config_new(eo_model m, eo_model_config *c);

/**
 * Sets parameter @p name from @p text: a number, or for a choice the choice's name. Checks the
 * name, integrality and bounds, and marks the parameter given. On error returns EO_EINVAL and
 * fills @p err (may be NULL: field = the name, message = what is allowed); @p c is unchanged.
 */
int eo_model_config_set(eo_model_config *c, const char *name, const char *text,
                        eo_round_error *err);

/** The same with a number (a choice by its index). */
int eo_model_config_set_number(eo_model_config *c, const char *name, double value,
                               eo_round_error *err);

/** Index of parameter @p name in the model's table, or -1. */
int eo_model_param_index(eo_model m, const char *name);

/**
 * Checks @p c as a whole (each value's bounds and the rules between parameters) and resolves
 * derived parameters in place (SynElo: "theta" from "kmax_team", which then reads 0), so that
 * @p c can be stored and read back unchanged. On error returns EO_EINVAL and fills @p err
 * (may be NULL): field = the parameter's name, message = what is wrong and what is allowed.
 */
int eo_model_config_check(eo_model_config *c, eo_round_error *err);

/** A prepared model: the parameters checked and what the hot path derives from them. */
typedef struct eo_model_ctx eo_model_ctx;

/**
 * Prepares the model of @p c (checked by eo_model_config_check() on a copy first; the context
 * keeps the resolved copy). Returns 0, EO_EINVAL (with @p err filled as there) or EO_ENOMEM;
 * *out is owned by the caller (eo_model_release()).
 */
int eo_model_prepare(const eo_model_config *c, eo_model_ctx **out, eo_round_error *err);

/** Releases a prepared model. NULL is a no-op. */
void eo_model_release(eo_model_ctx *ctx);

/** The configuration a context was prepared from. */
const eo_model_config *eo_model_ctx_config(const eo_model_ctx *ctx);

/** Bytes of one player's state (opaque, aligned to 8) for this model. */
size_t eo_model_state_size(const eo_model_ctx *ctx);

/** Sets a new player's state in @p st (eo_model_state_size() bytes; need not be zeroed). */
void eo_model_player_init(const eo_model_ctx *ctx, void *st);

/** Releases what a player's state owns (e.g. SynElo's window) and leaves it invalid. */
void eo_model_player_free(const eo_model_ctx *ctx, void *st);

/**
 * A player's strength as predictions use it: a mean and a variance on the model's own
 * performance scale (SynElo and Elo: the rating, variance 0; TrueSkill and Weng-Lin: μ and σ²;
 * Glicko-2: rating and RD²).
 */
typedef struct eo_strength {
    double mu;
    double var;
} eo_strength;

/** A player's strength at time @p now (Unix seconds; Glicko-2 grows RD over idle periods). */
void eo_model_strength(const eo_model_ctx *ctx, const void *st, int64_t now, eo_strength *out);

/**
 * A team as predictions use it: sums over its members of count, weight w (partial play, 1 for
 * a full round), w², w·μ and w²·σ². Build it with eo_team_agg_add() from zero.
 */
typedef struct eo_team_agg {
    double n, w, w2, mu, var;
} eo_team_agg;

/** Adds one member of weight @p w with strength @p s to @p t. */
static inline void eo_team_agg_add(eo_team_agg *t, const eo_strength *s, double w)
{
    t->n += 1.0;
    t->w += w;
    t->w2 += w * w;
    t->mu += w * s->mu;
    t->var += w * w * s->var;
}

/**
 * False for a model that rates every member in full whatever his partial-play weight (SynElo,
 * seed 000): its team aggregates then take every member at weight 1, as its rate does, so
 * that eo_model_predict() of the aggregates is the P(A) the round is rated with. True for the
 * others. Pure.
 */
bool eo_model_uses_weights(const eo_model_ctx *ctx);

/**
 * P(A wins) for teams @p a and @p b (each with n >= 1). @p field is the field term in A's
 * favour (logit offset for the logistic models, performance offset for the Gaussian ones; 0 for
 * none). A draw counts as half a win where the model has draws.
 */
double eo_model_predict(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                        double field);

/**
 * The field term (model units, in A's favour) that measures both teams' strengths relative to
 * the model's start level, for pools with presence on (eo_presence.h, docs/MODELS.md
 * "Presence"): added to the field, a member then adds to his team only his rating's distance
 * from the start level (times his weight), so absence, or a share of a round, is worth nothing
 * by the level alone. TrueSkill and Weng-Lin: −μ0·(w_A − w_B); Elo with team "sum":
 * −r0·(w_A − w_B)·ln 10/scale; SynElo (which rates every member in full): −r0·(n_A − n_B)/Θ;
 * 0 for the models whose team strength is a mean (Elo "mean", Glicko-2's composite) or whose
 * start is 0 (hive). Reads only the counts n and the weights w of @p a and @p b. Pure.
 */
double eo_model_level_field(const eo_model_ctx *ctx, const eo_team_agg *a,
                            const eo_team_agg *b);

/**
 * P(A) of teams @p a and @p b at field @p base into *p0 and dP/dfield there into *g (a
 * symmetric difference of ±10⁻³ field units): what one round teaches an estimate of a field
 * term beside the rest of the field (the map bias's, presence's; docs/MODELS.md). Pure.
 */
void eo_model_field_slope(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                          double base, double *p0, double *g);

/**
 * The field that, added to @p base, moves A's logit by @p logit to first order:
 * logit·P0(1 − P0)/g with P0 and g of eo_model_field_slope() (exactly @p logit for the
 * logistic models, whose slope is P0(1 − P0); for TrueSkill and Weng-Lin a performance offset
 * that grows with the round's spread), 0 where P does not move with the field. @p p0 and @p g
 * (may be NULL) receive the slope's values. Presence's term (eo_presence.h). Pure.
 */
double eo_model_logit_field(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                            double base, double logit, double *p0, double *g);

/**
 * Match quality of teams @p a and @p b in [0, 1] (1: the fairest match). Gaussian models
 * (TrueSkill, Weng-Lin) give TrueSkill's two-team quality (the draw probability relative to
 * equal teams); the others 1 − |2·P(A) − 1| from eo_model_predict().
 */
double eo_model_quality(const eo_model_ctx *ctx, const eo_team_agg *a, const eo_team_agg *b,
                        double field);

/**
 * P(A wins) for teams given as indices into @p s (players' strengths): A is s[a[0..na)], B is
 * s[b[0..nb)], every member at weight 1 (the balancer's proposed teams).
 */
double eo_model_predict_idx(const eo_model_ctx *ctx, const eo_strength *s, const uint16_t *a,
                            size_t na, const uint16_t *b, size_t nb, double field);

/**
 * The balancer splits integer ratings: a player's mean in units of 1/eo_model_split_unit().
 * The unit keeps one split unit near a few thousandths of a logit in a 12v12 (SynElo, Elo,
 * Glicko-2: 1, whole rating points; TrueSkill, Weng-Lin and hive: 10, tenths of μ or skill):
 * finer units only widen the integers the exact solver must balance, which makes it slower
 * without a balance anyone could notice (docs/BALANCER.md "Split units").
 * eo_model_split_rating() gives round(μ · unit), ties to even, clamped to the solver's ±2^40.
 */
int64_t eo_model_split_unit(const eo_model_ctx *ctx);
int64_t eo_model_split_rating(const eo_model_ctx *ctx, double mu);

/**
 * The largest tolerance in split units (eo_model_split_unit()) on |ΣA − ΣB| that keeps
 * |P(A) − 0.5| <= @p p_tol for every pair of teams of @p k players (1 <= k <=
 * EO_PLAYERS_MAX / 2) under @p model, with no field: the largest integer E >= 0 such that
 * P(A) of teams whose mean sums differ by (E + @p slack) / unit, with total variance
 * @p var_sum, is within @p p_tol of 0.5. Every model's P(A) rises with the mean difference
 * and falls towards 0.5 as the variance grows, so @p var_sum should be a lower bound of the
 * playing players' total variance (the 2k smallest) and @p slack (>= 0, split units) an upper
 * bound of how far the integer split ratings' difference can be from the means' (the 2k
 * largest rounding errors): then E is conservative for every split of those players. Returns 0
 * for @p p_tol <= 0 and at most 2^50 (every split) when the model never leaves the tolerance.
 */
int64_t eo_model_split_tolerance(const eo_model_ctx *model, double p_tol, int k, double var_sum,
                                 int64_t unit, double slack);

/**
 * The field term @p field (model units: a logit, or μ for the Gaussian models) as a rating
 * difference in split units, consistently with eo_model_split_tolerance(): the F such that two teams
 * of @p k whose mean sums differ by F / unit, with total variance @p var_sum, have the P(A) at
 * field 0 that equal teams have at @p field; rounded to the nearest integer, its sign that of
 * @p field, odd in @p field, |F| at most 2^46 (eo_balance_request.field). 0 for field 0.
 */
int64_t eo_model_field_units(const eo_model_ctx *model, double field, int k, double var_sum,
                             int64_t unit);

/** A participant of eo_model_rate(): its state and its partial-play weight in [0, 1]. */
typedef struct eo_participant {
    void *st;
    double w;
} eo_participant;

/** What one round did to one participant. */
typedef struct eo_model_update {
    double before;    /**< display value at round start */
    double after;     /**< display value after the round */
    double expected;  /**< P(this member's team wins) at round start */
    double k;         /**< the step size used (SynElo and Elo K; hive α, or the commander α
                           for a commander; 0 for other models) */
    double mu;        /**< state after: mean (rating for SynElo, Elo, Glicko-2) */
    double sigma;     /**< state after: deviation (RD for Glicko-2; 0 for SynElo and Elo) */
} eo_model_update;

/**
 * Rates one round: team A @p a[0..na), team B @p b[0..nb) (distinct players, na, nb >= 1,
 * na + nb <= EO_PLAYERS_MAX), @p winner, @p field as in eo_model_predict(), @p at the round's
 * end in Unix seconds (0: unknown; then last_ended_at is kept and Glicko-2 counts no time).
 * Every participant is updated from round-start state: its rounds count grows by one and its
 * last round end becomes @p at. A participant of weight 0 is left entirely unchanged (it still
 * counts where the model counts players, e.g. TrueSkill's draw margin). SynElo does not use
 * weights: it rates every participant in full, as seed 000 does. @p out is NULL or receives
 * na + nb updates, A's then B's. @p p_a receives P(A wins) at round start (may be NULL).
 * Returns 0, EO_EINVAL (bad arguments) or EO_ENOMEM; on error no player is changed.
 */
int eo_model_rate(const eo_model_ctx *ctx, const eo_participant *a, size_t na,
                  const eo_participant *b, size_t nb, eo_winner winner, double field,
                  int64_t at, double *p_a, eo_model_update *out);

/**
 * What a round record says of a participant beyond its weight, for the models that use it
 * (the NS2 hive model: commander skill, initial skill from playtime); other models ignore it.
 * Plain data.
 */
typedef struct eo_participant_info {
    bool commander;   /**< the member's time in the round was spent commanding */
    double playtime;  /**< seconds played before this pool knew the player (the hive model's
                           initial skill, read on the player's first rated round); < 0: none */
} eo_participant_info;

/**
 * eo_model_rate() with @p info: NULL (as eo_model_rate()), or na + nb entries, A's then B's,
 * beside the participants. Same contract and errors as eo_model_rate(); additionally EO_EINVAL
 * when a playtime is NaN or infinite.
 */
int eo_model_rate_info(const eo_model_ctx *ctx, const eo_participant *a, size_t na,
                       const eo_participant *b, size_t nb, const eo_participant_info *info,
                       eo_winner winner, double field, int64_t at, double *p_a,
                       eo_model_update *out);

/**
 * A member's partial-play weight in [0, 1] as model @p ctx counts it: eo_round_member_weight()
 * for every model but the hive one, which weights time exponentially from `joined`/`left`
 * (the first half of a round counts more than the second; eo_hive_member_weight()).
 * @p pool_length is the pool's median round length in seconds over the rounds before @p r
 * (0: none known), read only by models for which eo_model_wants_pool_length() is true. Pure.
 */
double eo_model_member_weight(const eo_model_ctx *ctx, const eo_round *r, const eo_member *m,
                              double pool_length);

/**
 * True when eo_model_member_weight() reads its pool_length argument (the hive model without a
 * fixed `round_length`): the caller then keeps the median length of the rounds it has applied
 * (the pool and the whole-history fit do). Pure.
 */
bool eo_model_wants_pool_length(const eo_model_ctx *ctx);

/** Model-specific values of a view (eo_rating_view.extra). */
#define EO_VIEW_EXTRA 4

/** What a lookup shows of a player. */
typedef struct eo_rating_view {
    double display;         /**< the number players see (SynElo and Elo: rating; TrueSkill and
                                 Weng-Lin: μ − kσ; Glicko-2: rating) */
    double mu;              /**< mean (rating for SynElo, Elo and Glicko-2) */
    double sigma;           /**< deviation (Glicko-2: RD); 0 for SynElo and Elo */
    double volatility;      /**< Glicko-2's σ; 0 for the others */
    uint32_t rounds;        /**< rated rounds */
    bool visible;           /**< shown to the player (SynElo: past the shadow period) */
    bool stale;             /**< no round in the pool's stale period before @c now */
    int64_t last_ended_at;  /**< end of the last rated round, 0 if none */
    double extra[EO_VIEW_EXTRA];  /**< model-specific values, 0 where a model has none; the
                                       hive model: field side offset, commander skill,
                                       commander side offset, commander rounds */
} eo_rating_view;

/** Fills @p out for a player's state at time @p now (Unix seconds). */
void eo_model_view(const eo_model_ctx *ctx, const void *st, int64_t now, eo_rating_view *out);

/** True when the model's display values are integers (SynElo), to print them as such. */
bool eo_model_integer_display(const eo_model_ctx *ctx);

/** True when the model's players have a deviation (TrueSkill, Weng-Lin, Glicko-2; not SynElo,
 * Elo or hive). */
bool eo_model_has_deviation(const eo_model_ctx *ctx);

/**
 * Admin: sets a player's rating. @p mu is the new mean (rating); @p sigma the new deviation, or
 * negative to keep it (ignored by models without one); rounds and history are kept. Returns 0,
 * EO_EINVAL (non-finite value) or EO_ERANGE (outside the model's range, documented per model:
 * SynElo needs an integer in [r_min, EO_SYNELO_RATING_MAX]); on error nothing changes.
 */
int eo_model_set(const eo_model_ctx *ctx, void *st, double mu, double sigma);

/**
 * How far from the pool's start value a mean may be in a model's range (eo_model_range): any
 * rating a pool with sane parameters produces is orders of magnitude closer, while a mean a
 * billion away, a typo or an attack, is refused (docs/MODELS.md, "The range of a model").
 */
#define EO_MODEL_RANGE_WINDOW 1e8

/**
 * A model's range: the states the engine admits (docs/MODELS.md, each model's "Range"). Admin
 * edits and refits may set a mean in [set_lo, set_hi] (an integer when @c integer) and a
 * deviation in [0, sigma_max]; a round the engine rates (eo_pool_apply_checked()) may leave no
 * participant's mean outside [lo, hi] nor any value non-finite. The range lies within the
 * model's state limits (what eo_model_set() accepts, what updates are clamped to, what a log's
 * fold applies) and within EO_MODEL_RANGE_WINDOW of the start value, so that any state in it
 * gives finite values through any round, and every value an answer shows is encodable.
 */
typedef struct eo_model_range {
    double lo, hi;         /**< the mean after a round (the rating for SynElo, Elo, Glicko-2,
                                the field skill for hive) */
    double set_lo, set_hi; /**< the mean an admin edit or a refit may set, within [lo, hi] */
    double sigma_max;      /**< the deviation an edit may set (Glicko-2: RD); 0: none */
    bool integer;          /**< means are integers (SynElo) */
    bool kept;             /**< the model's own rules keep every update in range and finite
                                (SynElo: integers between its floor and its maximum), so rounds
                                are not checked */
} eo_model_range;

/** The range of a prepared model (depends on its start values). */
void eo_model_range_of(const eo_model_ctx *ctx, eo_model_range *out);

/**
 * Checks an admin edit's values against the model's range: @p mu the mean, @p sigma the
 * deviation or negative to keep it (ignored by models without one). 0 when eo_model_set() would
 * take them and they are in range; otherwise EO_EINVAL (NaN or infinite mean, NaN deviation)
 * or EO_ERANGE, with @p err (may be NULL) naming the field, "rating" or "sigma", and stating
 * the allowed range. Pure.
 */
int eo_model_check_set(const eo_model_ctx *ctx, double mu, double sigma, eo_round_error *err);

#ifdef __cplusplus
}
#endif
#endif
