/**
 * @file eo_match.h
 * The matcher (seed 002's game coordinator, step 2): one pass over a queue's waiting tickets
 * forms matches of two teams of players close in the pool's rating, teams by the balancer
 * (eo_balance.h: parties whole, exact where it can), each match scored by the pool's model
 * (eo_model.h) against the queue's minimum for the group's longest wait; backfill requests of
 * running sessions are served first. docs/MATCHMAKING.md ("The matcher", "Choosing windows and
 * quality") states every rule; in short:
 *
 *  - a ticket is a party: its players are never split, and a ticket is in one match (or one
 *    backfill fill) at most per pass;
 *  - requests are served in order of age: backfill requests first (oldest first), then each
 *    waiting ticket as the seed of a match, oldest first (ties: smaller key first); a seed that
 *    cannot form a match this pass stays waiting, and the next seed tries;
 *  - the widening schedule (eo_match_step) gives, for a wait, the skill window, the latency
 *    limit, the largest |P(A) − 0.5|, the least match quality (Gaussian models) and the least
 *    team size; a group is gathered with the seed's window and team size, judged with the
 *    |P(A) − 0.5| and quality of the step of its longest wait (its oldest ticket, which may be
 *    older than the seed when that one found no match as a seed), and every ticket's latency
 *    with its own step's limit;
 *  - a ticket's rating is the mean of its players' means; a ticket is in a seed's window when
 *    |rating − seed's rating| <= window + both tickets' allowances, a ticket's allowance being
 *    sigma_z times its players' root mean variance, plus calib_window when one of its players is
 *    calibrating (fewer than calib_rounds rated rounds, or a deviation of at least calib_sigma):
 *    uncertain players reach further (seed 002, "Calibration");
 *  - teams: the least |ΣA − ΣB + field| on the model's split ratings (the balancer's primary
 *    objective, parties whole), proven by an exact search within work_limit, else the best
 *    that search or the balancer found;
 *  - the group is the tickets nearest the seed's rating that fill two teams (when parties make
 *    the nearest unfit, the first combination that fits in order of distance, then age, within
 *    a bounded search); the region is the one every ticket reaches within its limit with the
 *    least worst latency; the map is drawn from the queue's maps by a hash of the seed
 *    ticket's key and the config's seed;
 *  - P(A) and quality are the model's (eo_model_predict(), eo_model_quality()) with the map's
 *    field, every calibrating player's variance capped at calib_sigma², so that a newcomer's
 *    uncertainty is never the reason a match fails to form.
 *
 * Pure and deterministic: no I/O, clock or globals (@p now is a parameter); the same inputs give
 * the same result, bit for bit. Ownership: every input is the caller's and only read during the
 * call; eo_match_pass() allocates one result block, released with eo_match_result_free().
 * A service's periodic pass uses a work space instead (eo_match_ws_new(), eo_match_pass_ws()):
 * the same result, without allocating.
 * Thread safety: calls may run at once (the model context is only read).
 */
#ifndef EO_MATCH_H
#define EO_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_balance.h"
#include "eo_common.h"
#include "eo_model.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Largest team of a queue (the balancer is exact up to 64 players). */
#define EO_MATCH_TEAM_MAX 32
/** Most regions of a queue. */
#define EO_MATCH_REGIONS_MAX 32
/** Most maps of a queue. */
#define EO_MATCH_MAPS_MAX 64
/** Most steps of a widening schedule. */
#define EO_MATCH_STEPS_MAX 16

/**
 * One step of the widening schedule: from @c after seconds of waiting on, these limits apply
 * (until the next step's @c after; with eo_match_config.linear, each value is interpolated
 * linearly in the wait between consecutive steps, team_min excepted).
 */
typedef struct eo_match_step {
    int64_t after;      /**< seconds of waiting, >= 0; the first step's is 0; strictly increasing */
    double window;      /**< skill window: how far a ticket's rating may be from the seed's, in
                             the model's mean units (eo_rating_view.mu), >= 0 */
    double latency_ms;  /**< largest latency to the match's region, ms; 0: no limit */
    double p_max;       /**< largest |P(A) − 0.5| of the match, in [0, 0.5] */
    double quality_min; /**< least eo_model_quality() in [0, 1], read for the Gaussian models
                             only (TrueSkill, Weng-Lin: eo_model_has_deviation() and a quality
                             of their own); 0: none */
    int team_min;       /**< least players per team a match may start with, in
                             [1, team_size]; 0 means team_size */
} eo_match_step;

/**
 * A queue as the matcher sees it. A plain value (no pointers): the service keeps it with the
 * queue; regions and maps are indices into the queue's own lists. Field names in errors
 * (eo_match_config_check()) are these members' names, "steps[1].window" and the like.
 */
typedef struct eo_match_config {
    int team_size; /**< players per team, 1..EO_MATCH_TEAM_MAX */
    int nregions;  /**< 0..EO_MATCH_REGIONS_MAX; 0: no regions, no latency rule */
    int nmaps;     /**< 0..EO_MATCH_MAPS_MAX; 0: no map (field 0) */
    double map_field[EO_MATCH_MAPS_MAX]; /**< each map's field term in A's favour (model units,
                                              as eo_model_predict()); finite */
    eo_match_step steps[EO_MATCH_STEPS_MAX];
    int nsteps;            /**< 1..EO_MATCH_STEPS_MAX */
    bool linear;           /**< interpolate between steps (else steps are held) */
    double sigma_z;        /**< >= 0: a ticket's allowance per unit of its players' root mean
                                variance (eo_rating_view.sigma; 0 for models without one) */
    uint32_t calib_rounds; /**< players with fewer rated rounds are calibrating; 0: none */
    double calib_sigma;    /**< players with at least this deviation are calibrating (> 0; 0:
                                no deviation rule); also the cap of a calibrating player's
                                deviation in P(A) and quality */
    double calib_window;   /**< >= 0: extra allowance of a ticket with a calibrating player */
    uint64_t seed;         /**< the map draw's seed (the service may vary it per pass) */
    /** Search nodes per match of the teams' exact search: first the matcher's own (tickets as
     *  items, docs/MATCHMAKING.md "Teams"), then, when that did not prove its answer best, the
     *  balancer's (eo_balance_request.work_limit, past which its local search answers); the
     *  better of the two is kept, and the match's @c exact says whether it is proven.
     *  0 = EO_MATCH_WORK_LIMIT. */
    uint64_t work_limit;
} eo_match_config;

/** Default search nodes per match: under a millisecond at worst, microseconds typically. */
#define EO_MATCH_WORK_LIMIT ((uint64_t)20000)

/**
 * Fills @p c with a queue of @p team_size players per team and the defaults of
 * docs/MATCHMAKING.md ("Choosing windows and quality"), windows on the Elo scale: no regions, no
 * maps, the schedule 0 s: window 50, |P − 0.5| <= 0.10; 20 s: 100, 0.15; 40 s: 200, 0.20; 60 s:
 * 400, 0.25; 120 s: 800, 0.30 (held steps, latency unlimited, quality 0.5 then down to 0.3 for
 * the Gaussian models, full teams); sigma_z 1, calib_rounds 10, calib_sigma 0, calib_window 200.
 * The windows are on the Elo scale: a pool on another scale scales them with
 * eo_match_config_scale(c, eo_match_model_scale(model, team_size)).
 * Returns 0 or EO_EINVAL (@p team_size out of range).
 */
int eo_match_config_default(int team_size, eo_match_config *c);

/**
 * The factor that moves windows written on the Elo scale (a difference of 400 / ln 10 ≈ 173.7
 * between the two teams' mean ratings is one logit of P(A)) to @p model's mean units for teams
 * of @p team_size: the difference between team means that gives @p model's P(A) = σ(1) with
 * no variance, no field, divided by 400 / ln 10. For eo_match_config_scale(): SynElo's default
 * Θ = 2400 on team sums gives 2400 / (6 · 173.7) ≈ 2.3 at 6v6; TrueSkill's μ scale about 0.01.
 * Returns a finite factor > 0, or 0 when @p model has no such difference below 10^12 (or the
 * arguments are bad). Pure.
 */
double eo_match_model_scale(const eo_model_ctx *model, int team_size);

/**
 * Multiplies what is in the model's mean units, every step's window, calib_window and
 * calib_sigma, by @p factor (> 0, finite), e.g. 25.0 / 1500.0 to move the default schedule to
 * TrueSkill's scale. Returns 0 or EO_EINVAL (@p factor, or a result that is not finite).
 */
int eo_match_config_scale(eo_match_config *c, double factor);

/**
 * Checks @p c: every member in its range (above), at least one step, the first step's @c after
 * 0 and strictly increasing after that, team_min <= team_size, finite numbers. Returns 0, or
 * EO_EINVAL with @p err (may be NULL) naming the member ("steps[2].p_max") and what is allowed.
 * Pure.
 */
int eo_match_config_check(const eo_match_config *c, eo_round_error *err);

/**
 * The limits of @p c's schedule after @p wait seconds of waiting (negative waits count as 0):
 * the last step whose @c after <= @p wait, or with @c linear the interpolation between it and
 * the next (team_min is the held step's; a team_min of 0 is given as team_size). @p c must be
 * checked. Pure.
 */
void eo_match_step_at(const eo_match_config *c, int64_t wait, eo_match_step *out);

/** A player of a ticket, as the pool's model rates it now (eo_model_view()). */
typedef struct eo_match_player {
    double mu;       /**< mean (eo_rating_view.mu), finite */
    double sigma;    /**< deviation (eo_rating_view.sigma), finite, >= 0 */
    uint32_t rounds; /**< rated rounds (eo_rating_view.rounds) */
    /** nregions latencies in ms, by region index: finite and >= 0, or negative (or NaN) for a
     *  region this player cannot play in. NULL: no measurement, every region at 0 ms. */
    const double *latency;
} eo_match_player;

/** A waiting ticket: a party of 1..team_size players, never split. */
typedef struct eo_match_ticket {
    uint64_t key;       /**< the service's; orders tickets of the same age; results name
                             tickets by index, so keys need not be distinct */
    int64_t created_at; /**< Unix seconds: its wait is now − created_at */
    const eo_match_player *players;
    size_t nplayers; /**< 1..team_size */
} eo_match_ticket;

/**
 * A running session's request for players on one team (backfill): filled from waiting tickets
 * before any new match forms, counting players, not tickets; it may be filled in part.
 */
typedef struct eo_match_backfill {
    uint64_t key;       /**< the service's (the session) */
    uint8_t team;       /**< EO_BALANCE_A or EO_BALANCE_B: the team to join */
    int slots;          /**< players wanted, 1..team_size */
    double rating;      /**< the mean a joiner should have (model mean units), finite */
    int region;         /**< the session's region index, or -1: any */
    int64_t created_at; /**< when asked: its wait widens the window as a ticket's does */
} eo_match_backfill;

/** A ticket placed by a pass: its index in the input and its team (parties are whole). */
typedef struct eo_match_entry {
    size_t ticket; /**< index into the tickets passed to eo_match_pass() */
    uint8_t team;  /**< EO_BALANCE_A or EO_BALANCE_B */
} eo_match_entry;

/** A formed match: its tickets are entries[first .. first + count) of the result. */
typedef struct eo_match {
    size_t first, count;
    int team_size;  /**< players on each team, in [team_min, team_size] */
    int region;     /**< region index, or -1 (the queue has none) */
    int map;        /**< map index, or -1 (the queue has none) */
    double p_a;     /**< the model's P(A wins) with the map's field (calibrating players'
                         deviation capped, as in the acceptance) */
    double quality; /**< eo_model_quality() of the teams, the same way */
    double spread;  /**< largest minus smallest player mean in the match */
    int64_t oldest; /**< created_at of its oldest ticket (the seed) */
    int exact;      /**< 1: teams proven best by the balancer; 0: local search */
} eo_match;

/** What a pass gave a backfill request: entries[first .. first + count) join its team. */
typedef struct eo_match_fill {
    size_t backfill; /**< index into the backfill requests passed */
    size_t first, count;
    int players; /**< players placed, <= the request's slots */
} eo_match_fill;

/** The result of one pass. One allocation. */
typedef struct eo_match_result {
    eo_match_fill *fills; /**< backfill requests that got at least one ticket, in order */
    size_t nfills;
    eo_match *matches; /**< in order of formation (their seeds oldest first) */
    size_t nmatches;
    eo_match_entry *entries;
    size_t nentries;
    size_t waiting;  /**< tickets left waiting */
    size_t rejected; /**< groups formed but refused by |P(A) − 0.5| or quality */
} eo_match_result;

/**
 * One pass over a queue: backfill requests @p backfill[0..nbackfill) first, then matches from
 * tickets @p tickets[0..n) (either may be empty, with a NULL array), at time @p now (Unix
 * seconds), with the pool's prepared @p model. @p c must pass eo_match_config_check().
 * Returns 0 with *out the caller's (eo_match_result_free()); EO_EINVAL when an input breaks its
 * contract above (a ticket with no players or more than team_size, a non-finite mean, a negative
 * deviation, a backfill's team, slots or region out of range, a config that fails its check),
 * with @p err (may be NULL) naming it ("tickets[3].players[1].mu", "backfill[0].slots"), and
 * *out NULL; EO_ELIMIT when n or nbackfill is 2^32 − 1 or more; EO_ENOMEM.
 */
int eo_match_pass(const eo_match_config *c, const eo_model_ctx *model,
                  const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                  size_t nbackfill, int64_t now, eo_match_result **out, eo_round_error *err);

/** Releases a result of eo_match_pass(). NULL is a no-op. */
void eo_match_result_free(eo_match_result *r);

/**
 * A work space for repeated passes (a service's periodic pass): the memory of a pass, kept for
 * the next, so that a pass allocates nothing once the work space has served one as large, and
 * touches no fresh memory (on a pass over 100,000 tickets, the kernel's page faults on fresh
 * memory were a tenth of the time). Opaque. It keeps the arrays of the largest pass it served,
 * about 130 + 12 * nregions bytes per ticket, plus the result; eo_match_ws_free() releases
 * them.
 *
 * Threads: a work space serves one pass at a time. Give each thread that runs passes its own
 * (one for all of a thread's queues is enough: nothing of a pass is read by the next); it may
 * pass from one thread to another between calls.
 */
typedef struct eo_match_ws eo_match_ws;

/** Creates an empty work space (it grows with the first pass). NULL when out of memory. */
eo_match_ws *eo_match_ws_new(void);

/** Releases a work space and the result it holds. NULL is a no-op. */
void eo_match_ws_free(eo_match_ws *ws);

/**
 * eo_match_pass() in the work space @p ws: the same arguments, errors and result, bit for bit,
 * but the result lives in @p ws: *out may be read until the next eo_match_pass_ws() with the
 * same @p ws or eo_match_ws_free(ws), and is not freed by the caller. On error *out is NULL
 * (EO_EINVAL also when @p ws is NULL). Pure and deterministic as eo_match_pass().
 */
int eo_match_pass_ws(eo_match_ws *ws, const eo_match_config *c, const eo_model_ctx *model,
                     const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                     size_t nbackfill, int64_t now, const eo_match_result **out,
                     eo_round_error *err);

#ifdef __cplusplus
}
#endif
#endif
