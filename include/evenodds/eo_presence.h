/**
 * @file eo_presence.h
 * Presence (docs/MODELS.md "Presence"): what one more player, or a fuller partial player, is
 * worth to a team, as a term of its own beside the ratings. A pool with presence on measures
 * every team's strength relative to the model's start level (eo_model_level_field(), so that
 * a member who is absent, or present for a share of the round, adds nothing by his rating's
 * level alone) and moves A's logit by π·Δ, Δ = presence_A − presence_B, presence = Σ w (each
 * member's partial-play weight), π in logits for every model, estimated from the pool's own
 * rounds. For the logistic models (SynElo, Elo, Glicko-2, hive) that is the field term π·Δ;
 * for TrueSkill and Weng-Lin, whose field is a performance offset, the field that moves the
 * logit by π·Δ to first order, π·Δ·P0(1 − P0)/g (P0 and g below), so one player is worth the
 * same odds whatever the teams' size.
 *
 * The estimate is one Fisher-scoring step from π = 0 with a Gaussian prior, as the map bias's
 * (eo_bias.h). For every round with Δ ≠ 0, with P0 the model's P(A) without the term (the rest
 * of the field in), g = dP/dfield there and S the outcome (1, ½, 0):
 *     U += Δ·(S − P0),   I += Δ²·P0·(1 − P0),   n += 1,
 *     κ = prior·I/n (the prior is worth @c prior average rounds of unequal presence),
 *     π = U / (I + κ),   uncertainty = 1 / √(I + κ).
 * Continuous in the outcomes and in Δ (a round with Δ → 0 teaches → nothing), antisymmetric
 * between sides (swapping them negates Δ and S − P0, so each round adds the same to U), and
 * no effect at all where sizes and times are equal (Δ = 0 adds nothing and gets no term).
 *
 * Pure: no I/O, no clock, no globals. Deterministic: the same observations in the same order
 * give the same bits on every machine. Plain values, no ownership.
 */
#ifndef EO_PRESENCE_H
#define EO_PRESENCE_H

#include <stdbool.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A pool's presence parameters. A zeroed config is "off". */
typedef struct eo_presence_config {
    bool on;         /**< "presence": "on" or "off" (default off: levels absolute, no term, as
                          pools created before presence existed) */
    double prior;    /**< "presence_prior": the prior's weight in average rounds of unequal
                          presence, in [0, 1e6]; default EO_PRESENCE_PRIOR_DEFAULT */
    double strength; /**< "presence_strength": share of π applied, in [0, 1]; default 1 (0:
                          levels relative, π learnt and reported, no term applied) */
    bool partial;    /**< "partial": "learn" or "time" (default time: a partial member's
                          rating counts by his time, as pools created before it); read only
                          with presence on (eo_presence_partial_share()) */
    double partial_prior; /**< "partial_prior": the prior's weight in average rounds with
                               partial play, in [0, 1e6]; default EO_PRESENCE_PRIOR_DEFAULT */
} eo_presence_config;

/** Default of "presence_prior" (docs/MODELS.md "Presence" says why). */
#define EO_PRESENCE_PRIOR_DEFAULT 20.0

/** Fills @p c with the defaults (presence off). */
void eo_presence_config_default(eo_presence_config *c);

/** True when @p name is "presence", "presence_prior", "presence_strength", "partial" or
 *  "partial_prior". */
bool eo_presence_param_name(const char *name);

/**
 * Sets parameter @p name from @p text ("on"/"off" for "presence", "learn"/"time" for
 * "partial", a number for the others).
 * Returns 0; EO_ENOTFOUND when @p name is not a presence parameter (@p err untouched, so
 * callers try the next table); EO_EINVAL for a bad value (@p err, may be NULL: field = the
 * name, message = what is allowed). On error @p c is unchanged.
 */
int eo_presence_config_set(eo_presence_config *c, const char *name, const char *text,
                           eo_round_error *err);

/** The same with a number: "presence" 0 (off) or 1 (on), "partial" 0 (time) or 1 (learn),
 *  the others their value. */
int eo_presence_config_set_number(eo_presence_config *c, const char *name, double value,
                                  eo_round_error *err);

/** Checks every value's bounds. Returns 0 or EO_EINVAL (@p err as above). */
int eo_presence_config_check(const eo_presence_config *c, eo_round_error *err);

/** The running estimate of a pool: sums in round order. A zeroed value has seen nothing. */
typedef struct eo_presence {
    uint64_t rounds; /**< rounds with Δ ≠ 0 observed */
    double u;        /**< Σ Δ·(S − P0) */
    double info;     /**< Σ Δ²·P0·(1 − P0) */
} eo_presence;

/**
 * Adds one round: @p delta = presence_A − presence_B, @p p0 the model's P(A) without the
 * presence term, @p g = dP/dfield there, @p winner. A round with Δ = 0 (or not finite), a
 * foregone P0 (0 or 1) or a P that does not move with the field (g not finite and > 0)
 * teaches nothing and is not counted. Returns 0 or EO_EINVAL (NULL @p e or a bad winner;
 * nothing changed).
 */
int eo_presence_observe(eo_presence *e, double delta, double p0, double g, eo_winner winner);

/**
 * π, the worth of one unit of presence (one player for a whole round) in logits:
 * U / (I + κ), 0 before any informative round; @p sd (may be NULL) gets 1/√(I + κ) (+∞
 * without information). Not scaled by the strength.
 */
double eo_presence_value(const eo_presence_config *c, const eo_presence *e, double *sd);

/** The logit shift of a presence difference @p delta: strength · π · Δ (0 when off). */
double eo_presence_field(const eo_presence_config *c, const eo_presence *e, double delta);

/**
 * θ, the share of a partial member's missing time that his rating counts for (docs/MODELS.md
 * "Presence", "Partial members"): a member present for w of the round counts w + θ·(1 − w) of
 * his rating's distance from the start level; 0 (by his time) until @p e has learnt otherwise,
 * and always when presence or "partial" learning is off. @p e holds the sums of θ's own
 * Fisher step from 0 (eo_presence_observe() with Δ the logit moved by θ from 0 to 1): U / (I +
 * κ), κ = partial_prior·I/n, clamped to [0, 1].
 */
double eo_presence_partial_share(const eo_presence_config *c, const eo_presence *e);

#ifdef __cplusplus
}
#endif
#endif
