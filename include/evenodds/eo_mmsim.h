/**
 * @file eo_mmsim.h
 * A simulated matchmaking population in closed loop (docs/MATCHMAKING.md, "The matcher in a
 * simulated day"): groups of players (solos and parties) arrive at a rate that follows the time
 * of day, queue, are matched by a policy, wait for a free game-server instance in the match's
 * region, play, and then queue again or leave; a group that waits longer than its patience
 * leaves. Players have hidden true skills; an outcome is drawn from them and rated by the
 * pool's model, whose ratings the matcher sees. The policies:
 *  - EO_MMSIM_OURS: the matcher, eo_match_pass(), with the configured queue;
 *  - EO_MMSIM_FCFS: first come, first served: the oldest tickets fill two teams in arrival
 *    order (a ticket to the team with more free seats), skill and latency ignored, the region
 *    the one with the least worst latency;
 *  - EO_MMSIM_FIXED: a fixed widening window as FlexMatch rule sets are usually written: from
 *    the oldest ticket, the tickets in arrival order whose rating is within the window of the
 *    seed's (the window widening in fixed steps with the seed's wait) and that reach a common
 *    region within a fixed latency, teams filled in arrival order; no balancing, no quality bar.
 *
 * The arrivals (times, group sizes, which players, patience draws) come from a random stream
 * that no policy touches, so every policy faces the same arrivals; a chosen player who is still
 * online under a policy is replaced by the next offline one. True P(A) = σ((Σ_A s − Σ_B s) /
 * scale) (eo_sim_p_true()); a stomp is a match whose favourite has a true P above 0.8.
 *
 * Pure and deterministic: no I/O, no clock, its own PRNG and the core's exp/log, so the same
 * configuration gives the same report, bit for bit. One call runs one policy; @p progress (may
 * be NULL) is called with the fraction of simulated time done, for a shell to print.
 */
#ifndef EO_MMSIM_H
#define EO_MMSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_match.h"
#include "eo_pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The matching policies compared. */
typedef enum {
    EO_MMSIM_OURS = 0,
    EO_MMSIM_FCFS = 1,
    EO_MMSIM_FIXED = 2,
    EO_MMSIM_POLICIES
} eo_mmsim_policy;

/** Names "ours", "fcfs", "fixed"; NULL if out of range. */
const char *eo_mmsim_policy_name(eo_mmsim_policy p);

/** Most regions of the world (each player's latency to every one is drawn). */
#define EO_MMSIM_REGIONS_MAX 8

/** The world, its timeline and the policies' settings. */
typedef struct eo_mmsim_config {
    uint64_t seed;
    int team_size;       /**< players per team, 1..EO_MATCH_TEAM_MAX */
    double online;       /**< mean players online (queued or playing) the arrival rate is
                              sized for, > 0 (the report gives the mean measured) */
    double party_share;  /**< share of arriving groups that are parties, in [0, 1] */
    int party_max;       /**< parties have 2..party_max players (<= 3, <= team_size) */
    double day_swing;    /**< arrivals rise and fall over the day, in [0, 1): the rate runs
                              from (1 − swing) to (1 + swing) times its mean, a triangle
                              with its peak at 20:00 */
    uint32_t population; /**< players in the world, >= 4 × online */
    double newcomers;    /**< share of the population new to the pool, in [0, 1): the others
                              have a history of rated matches */
    uint32_t history;    /**< rated matches per established player before the day: random
                              teams of the established players, outcomes from the true skills
                              (how the pool's ratings came to be) */
    double skill_sd;     /**< true skills normal(0, skill_sd), > 0 */
    double scale;        /**< skill points per logit of P_true, > 0 */
    int regions;         /**< 1..EO_MMSIM_REGIONS_MAX; players split evenly by home region */
    int instances;       /**< game-server instances per region, >= 1 */
    double patience;     /**< mean seconds a group waits before it leaves (gamma of shape 2) */
    double continue_p;   /**< chance a group queues again after its match, in [0, 1) */
    int64_t match_min, match_max; /**< match length uniform in [min, max] seconds, >= 1 */
    int64_t interval;             /**< seconds between passes, >= 1 */
    int64_t warmup;               /**< seconds simulated before the figures start (ratings learn) */
    int64_t duration;             /**< seconds with figures, >= 1 */
    int64_t start;                /**< Unix seconds of the simulation's start */
    eo_match_config match;        /**< EO_MMSIM_OURS: the queue (team_size and nregions are set from
                                       the fields above) */
    bool elo_windows; /**< the windows of @c match and @c fixed_window, and calib_window,
                           are on the Elo scale: the run converts them to the pool's model
                           (eo_match_model_scale()) */
    double fixed_window[EO_MATCH_STEPS_MAX]; /**< EO_MMSIM_FIXED: the window from each
                                                  fixed_after (rating units) */
    int64_t fixed_after[EO_MATCH_STEPS_MAX];
    int fixed_steps;      /**< 1..EO_MATCH_STEPS_MAX; fixed_after[0] == 0, increasing */
    double fixed_latency; /**< EO_MMSIM_FIXED: latency limit in ms (0: none) */
} eo_mmsim_config;

/**
 * Defaults for a 6v6 community (docs/MATCHMAKING.md, "The matcher in a simulated day"):
 * seed 1, 300 online, 20 % of groups parties of 2-3, swing 0.5, population 3,000 of whom 10 %
 * new and the others with 200 rated matches of history, skills normal(0, 60) at scale
 * 400/ln 10, 3 regions with 16 instances each, patience 300 s,
 * continue 0.7, matches 600-1200 s, a pass every second, a day of warmup and a day measured
 * from 1763856000; ours: eo_match_config_default(6) with an 80 ms latency limit, 150 ms from
 * 60 s; fixed: windows 100, 200, 400 from 0, 10, 30 s and 150 ms (FlexMatch's examples);
 * windows on the Elo scale.
 */
void eo_mmsim_config_default(eo_mmsim_config *c);

/**
 * Checks @p c (ranges above, and its match configuration with eo_match_config_check()).
 * Returns 0 or EO_EINVAL with @p err (may be NULL) naming the field ("online",
 * "match.steps[1].window").
 */
int eo_mmsim_config_check(const eo_mmsim_config *c, eo_round_error *err);

/** What one policy did over the measured time. Waits are per player, from its ticket's
 *  creation to its match's start on an instance. */
typedef struct eo_mmsim_report {
    eo_mmsim_policy policy;
    uint64_t matches;                    /**< matches started */
    uint64_t tickets;                    /**< tickets created (arrivals and re-queues) */
    double wait_p50, wait_p95, wait_p99; /**< seconds, over players who played */
    uint64_t abandoned;                  /**< players who left the queue out of patience */
    double stomps;                       /**< share of matches whose favourite's true P > 0.8 */
    double mean_dev;                     /**< mean |P_true(A) − 0.5| */
    double mean_spread;      /**< mean of (largest − smallest) rating (the model's mean) in a
                                  match */
    double mean_true_spread; /**< the same of true skills */
    uint64_t parties_split;  /**< parties whose players were put on different teams */
    double party_tickets;    /**< share of tickets that were parties */
    double utilisation;      /**< busy instance time over all instance time */
    double online_mean;      /**< players online (queued, waiting for an instance, playing) */
    double brier;            /**< the model's P(A) at match start against the outcomes */
} eo_mmsim_report;

/** Called with the fraction of simulated time done, in [0, 1]. */
typedef void (*eo_mmsim_progress_fn)(void *arg, double done);

/**
 * Runs policy @p policy over the world @p c (checked first) with a fresh pool of @p pool's
 * configuration. Returns 0 with @p out filled, EO_EINVAL (with @p err naming the field),
 * EO_ENOMEM, or another code from the pool or the matcher (a bug).
 */
int eo_mmsim_run(const eo_mmsim_config *c, const eo_pool_config *pool, eo_mmsim_policy policy,
                 eo_mmsim_progress_fn progress, void *arg, eo_mmsim_report *out,
                 eo_round_error *err);

#ifdef __cplusplus
}
#endif
#endif
