/**
 * @file eo_client.h
 * libevenodds-client: what a game-server plugin links (docs/CLIENT.md). It follows the game's
 * players and rounds, reports each round to the rating service so that no report is lost to an
 * outage or a restart, keeps the ratings of the connected players, caches team splits, decides
 * scrambles (the core's triggers) and mid-round autobalance (the core's policy), and tells the
 * game whom to move. docs/CLIENT.md is the integration guide, with a complete example.
 *
 * Threads. Every function here is called from one thread, the game's (its frame loop), except
 * where stated. None waits on the network: HTTP runs on the library's own worker thread, and
 * results come back as events through eo_client_poll(), which the game calls each frame (or
 * each second). The log callback is also called on the game's thread, from inside
 * eo_client_poll(). Only eo_client_create(), eo_client_flush() and eo_client_destroy() may
 * block (they are for start-up, tests and shutdown).
 *
 * Round reports. eo_client_round_end() builds the canonical round record (eo_tracker.h states
 * who is rated and with which time) with the id "SERVER:EPOCH:SEQ": SEQ counts this server's
 * reports and survives restarts in the state file; EPOCH is the Unix time in milliseconds at
 * which the state file was made, so a lost state file cannot reuse an id. The report joins a ring
 * of queue_slots reports (8 by default, seed 000) persisted to the state file; the worker sends the
 * ring oldest first, one at a time, and drops a report only when the service acknowledged it (200),
 * or refused it for good (400, 409, 413, 415, 422: logged as errors). A network error, a 5xx, a
 * 401, 403 or 404 leave it queued, and the worker retries with exponential backoff; each round
 * end retries at once, queued reports first. When the ring is full the oldest report is
 * dropped and the loss is logged (level error) and counted. The service treats a round id as
 * an idempotency key, so a report whose answer was lost is sent again and counted once.
 *
 * Times (`now`) are the game's wall clock in Unix seconds, as doubles; they must not go
 * backwards.
 *
 * Ownership: strings passed in are copied; eo_client_destroy(NULL) is a no-op.
 */
#ifndef EO_CLIENT_H
#define EO_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_autobalance.h"
#include "eo_common.h"
#include "eo_round.h"
#include "eo_tracker.h"
#include "eo_triggers.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Log levels. */
typedef enum eo_client_log_level {
    EO_CLIENT_LOG_DEBUG = 0,
    EO_CLIENT_LOG_INFO = 1,
    EO_CLIENT_LOG_WARN = 2,
    EO_CLIENT_LOG_ERROR = 3
} eo_client_log_level;

/** Receives the library's log lines (one line, no newline; the string lives for the call). */
typedef void (*eo_client_log_fn)(void *ctx, eo_client_log_level level, const char *msg);

/** Configuration. Fill with eo_client_config_init(), then set at least url, server_id, key
 *  and state_file. Strings are copied by eo_client_create(). */
typedef struct eo_client_config {
    const char *url;         /**< the service, "http://HOST:PORT" (required) */
    const char *pool;        /**< pool name (default "default") */
    const char *server_id;   /**< this game server's id: an id of at most 64 bytes without ':'
                                  or spaces (required) */
    const char *key;         /**< the server key (required; never logged) */
    /** File that keeps the report sequence and the queued reports across restarts (required).
     *  Written atomically (temporary file, fsync, rename) by the worker after every change. A
     *  file that cannot be read back is moved aside to FILE.corrupt-UNIXTIME, logged, and a
     *  new one started: its reports stay there for an operator. */
    const char *state_file;
    long connect_timeout_ms; /**< default 2000 */
    long request_timeout_ms; /**< whole request; default 5000 */
    size_t queue_slots;      /**< reports kept while the service cannot take them, 1..1024
                                  (default 8, seed 000) */
    long retry_min_ms;       /**< first backoff after a failure (default 1000) */
    long retry_max_ms;       /**< backoff cap (default 60000) */
    /** Rating given to players the service has not answered for (unknown player, service
     *  unreachable): the pool's start value (default 1000, SynElo's R0), shown in shadow and
     *  flagged provisional. */
    double start_rating;
    /** Integer ratings for the balancer: round(mean * rating_scale) (default 1, right for
     *  SynElo, Elo and Glicko-2; 10 for TrueSkill, Weng-Lin and hive, as the service splits
     *  them). strength_threshold of the autobalance policy is in these units. */
    double rating_scale;
    const char *map;         /**< map name for the records until eo_client_map_start() (NULL) */
    const char *mode;        /**< mode name for the records, e.g. "koth" (NULL: absent) */
    eo_trigger_mode trigger_mode;  /**< scramble rules of the game mode (default OTHER) */
    eo_trigger_config triggers;    /**< eo_trigger_config_init()'s defaults */
    bool scramble_on;        /**< act on scramble triggers (default true) */
    /** Arena-style bench: players a scramble leaves out wait (EO_TRACK_WAITING). When false
     *  (default, every mode but arena) they go to the team that is smaller, then to the one
     *  whose rating sum is lower. */
    bool bench_waits;
    /** Most players per team a scramble may make (the game's team size, e.g. 12 for 12v12);
     *  0 (default): no limit but the players. Players beyond it wait (EO_TRACK_WAITING). */
    int team_size_max;
    eo_ab_policy autobalance;      /**< eo_autobalance_policy_default(); enabled by default */
    double autobalance_interval;   /**< seconds between autobalance checks (default 1) */
    eo_client_log_fn log;    /**< may be NULL */
    void *log_ctx;
} eo_client_config;

/** Sets the defaults documented in eo_client_config (required fields NULL). */
void eo_client_config_init(eo_client_config *cfg);

typedef struct eo_client eo_client;

/**
 * Creates a client: reads the state file (or writes a new one), starts the worker thread, which
 * sends any queued reports. Blocks only to read (or write and sync) the state file. Returns 0 with *out set; EO_EINVAL
 * (a required field missing or malformed: @p err names it), EO_EIO (the state file cannot be
 * written or its directory is missing), EO_ENOMEM. @p err (capacity @p errlen, may be NULL)
 * gets a one-line message on failure.
 */
int eo_client_create(const eo_client_config *cfg, eo_client **out, char *err, size_t errlen);

/**
 * Stops the worker (an HTTP request in flight is abandoned at once: its socket is shut down;
 * its report stays queued),
 * writes the state file, releases everything. Blocks at most for the file write. NULL is a no-op.
 */
void eo_client_destroy(eo_client *c);

/* ---- players ------------------------------------------------------------------------------ */

/** What the library knows of a player's rating. */
typedef struct eo_client_rating {
    double mean;       /**< the model's mean ("rating" or "mu"): what balancing uses */
    double display;    /**< what players see */
    int64_t rounds;
    bool visible;      /**< out of shadow */
    bool stale;
    /** The service has not answered for this player (yet, or it cannot be reached): mean and
     *  display are start_rating, shadow. */
    bool provisional;
} eo_client_rating;

/** A player connected (or reconnected; time before a disconnect still counts). Starts a
 *  lookup when his rating is not known yet. EO_EINVAL (bad id), EO_ELIMIT, EO_ENOMEM. */
int eo_client_player_connect(eo_client *c, const char *id, double now);

/** A player disconnected. EO_EINVAL, EO_ENOTFOUND. */
int eo_client_player_disconnect(eo_client *c, const char *id, double now);

/** A player's team is now @p team (he chose it, or the game applied a move). EO_ENOTFOUND
 *  when he is not connected (a move that came after he left), EO_EINVAL. */
int eo_client_player_team(eo_client *c, const char *id, eo_track_team team, double now);

/** A player dealt damage, took damage or healed: he counts as a participant (seed 000). */
int eo_client_player_event(eo_client *c, const char *id, eo_track_event ev, double now);

/** The player is commanding now (NS2): his member of this round's record says "commander". */
int eo_client_player_commander(eo_client *c, const char *id);

/** Autobalance facts: dead now, protected (charged medic, flag carrier …), in-round score,
 *  party (NULL: none). EO_EINVAL, EO_ENOTFOUND (not connected). */
int eo_client_player_dead(eo_client *c, const char *id, bool dead);
int eo_client_player_protected(eo_client *c, const char *id, bool is_protected);
int eo_client_player_score(eo_client *c, const char *id, int64_t score);
int eo_client_player_party(eo_client *c, const char *id, const char *party);

/** The rating known for @p id (connected or not) into @p out: the last answer of the service
 *  (lookup or round report), or the provisional start rating. 0 or EO_EINVAL. */
int eo_client_rating_of(const eo_client *c, const char *id, eo_client_rating *out);

/**
 * Where a player about to join should go (seed 000: the team that keeps sizes fair, then the
 * one with the smaller rating gap; eo_autobalance_place_joiner()): *team is EO_TRACK_A or
 * EO_TRACK_B, or EO_TRACK_NONE when autobalance is off (the game decides). 0, EO_EINVAL, or
 * EO_ELIMIT (more than EO_AB_TEAM_MAX players on a team).
 */
int eo_client_place_joiner(eo_client *c, const char *id, eo_track_team *team);

/* ---- rounds ------------------------------------------------------------------------------- */

/** A new map: abandons a round still running (eo_client_round_abandon()), resets the scramble
 *  counters (round number, wins, streak) and names the map of the next records (NULL keeps
 *  the current one). */
int eo_client_map_start(eo_client *c, const char *map, double now);

/** The game mode changed (a mixed rotation, or a tournament starting): @p mode names it in the
 *  records (NULL: absent), @p trigger_mode selects the scramble rules, and @p tournament
 *  turns every scramble rule off (eo_trigger_state.tournament). */
int eo_client_set_mode(eo_client *c, const char *mode, eo_trigger_mode trigger_mode,
                       bool tournament);

/** Ends the running round without reporting it (the map changed, the server is shutting
 *  down, an admin restarted the round). No round running: nothing to do. Returns 0 or
 *  EO_EINVAL. */
int eo_client_round_abandon(eo_client *c, double now);

/** The round starts (spawn doors up): whoever is on A or B now is in it. EO_EBUSY when a
 *  round runs. */
int eo_client_round_start(eo_client *c, double now);

/** Seconds left in the running round as of @p now (for autobalance's last-minutes rule);
 *  < 0: the round has no clock (the default at each round start). */
int eo_client_round_time_left(eo_client *c, double seconds, double now);

/** What the game knows at round end, for the scramble rules (eo_trigger_state's fields of the
 *  same names). eo_client_round_info_init() gives: nothing captured, no time-out, no limits. */
typedef struct eo_client_round_info {
    bool captured[2];          /**< A, B captured at least once this round */
    bool attackers_timed_out;  /**< attack/defend, payload */
    bool full_round;           /**< attack/defend, payload: this round completed a full round
                                    of the map (all its stages) */
    int32_t time_left;         /**< s left on the map; < 0 none */
    uint32_t win_limit;
    uint32_t max_rounds;
    /** The matchmaking session this round belongs to (eo_instance.h), or NULL: recorded as
     *  the round's "session" (an id). */
    const char *session;
} eo_client_round_info;

void eo_client_round_info_init(eo_client_round_info *info);

/**
 * The round ends with @p winner (EO_DRAW for a stalemate). Builds and queues the report
 * (unless a team has no rated player: then nothing is reported and EO_EINVAL is returned
 * after the round is closed), retries queued reports at once, asks the service for fresh splits
 * of the eligible players (for the cache), and evaluates the scramble rules; when one fires
 * (and scramble_on), a scramble starts (EO_CLIENT_EV_SCRAMBLE). @p info may be NULL.
 * @p round_id (capacity @p idlen, may be NULL) gets the report's id.
 * Returns 0, EO_EINVAL (no round running, bad argument or time, a team with nobody rated),
 * EO_ENOMEM, EO_EINTERNAL (the built record failed validation: a bug, logged).
 */
int eo_client_round_end(eo_client *c, eo_winner winner, const eo_client_round_info *info,
                        double now, char *round_id, size_t idlen);

/** The Waiting For Players period expired: scrambles unconditionally (seed 000), except in
 *  arena and tournament. */
int eo_client_wfp_expired(eo_client *c, double now);

/** The game (a vote, an admin) asks for a scramble before the next round: rule "requested". */
int eo_client_scramble(eo_client *c, double now);

/* ---- events ------------------------------------------------------------------------------- */

typedef enum eo_client_event_type {
    /** A player's rating arrived or changed (lookup answer or round report): id, rating. */
    EO_CLIENT_EV_RATING = 0,
    /** A report was acknowledged (status 200) or refused for good (status 4xx): id is the
     *  round id. */
    EO_CLIENT_EV_REPORTED = 1,
    /** A scramble is ready: rule says why, source is "fresh" (splits asked now) or "cache"
     *  (the service could not answer), k the team size. MOVE events follow, one per player
     *  whose team changes. Apply them before the next round starts. */
    EO_CLIENT_EV_SCRAMBLE = 2,
    /** Move player id to team `to` (A, B, or WAITING for a scramble's bench) because of rule;
     *  reason is the autobalance reason ("size_gap", "strength_gap") or "scramble". Report the
     *  applied change with eo_client_player_team(). */
    EO_CLIENT_EV_MOVE = 3
} eo_client_event_type;

/** One event. Strings rule, reason and source are static. */
typedef struct eo_client_event {
    eo_client_event_type type;
    char id[EO_ID_MAX + 1];   /**< player id (RATING, MOVE) or round id (REPORTED) */
    eo_client_rating rating;  /**< RATING */
    int status;               /**< REPORTED: the HTTP status */
    eo_track_team to;         /**< MOVE */
    const char *rule;         /**< SCRAMBLE, MOVE: the trigger rule or autobalance rule */
    const char *reason;       /**< MOVE */
    const char *source;       /**< SCRAMBLE */
    int k;                    /**< SCRAMBLE */
} eo_client_event;

/**
 * Takes the worker's results, runs the autobalance check when due, calls the log callback for
 * pending log lines, and writes the next event into @p ev. Returns 1 (an event was written),
 * 0 (none now) or EO_EINVAL. Call it until it returns 0, every frame or at least every second.
 */
int eo_client_poll(eo_client *c, double now, eo_client_event *ev);

/* ---- state -------------------------------------------------------------------------------- */

/** Counters and state. May be called from any thread. */
typedef struct eo_client_stats {
    uint64_t reports_made;     /**< reports queued by round ends (this process) */
    uint64_t reports_acked;    /**< acknowledged by the service (this process) */
    uint64_t reports_refused;  /**< refused for good (4xx) */
    uint64_t reports_dropped;  /**< dropped from a full queue (since the state file began) */
    uint64_t send_failures;    /**< failed attempts (network, 5xx, auth) */
    size_t queued;             /**< reports waiting now */
    uint64_t next_seq;         /**< the sequence number of the next report */
    uint64_t lookups;          /**< lookups answered */
    uint64_t splits;           /**< split answers received */
    uint64_t scrambles_fresh, scrambles_cache; /**< scrambles applied, by source */
    uint64_t scrambles_deferred; /**< times a scramble was put off to the next round end (no
                                      answer and no cache, too few players, late answer) */
    /** A scramble is decided and its moves are not given yet (its splits may be on the way,
     *  or it was put off to the next round end). */
    bool scramble_pending;
    /** The pending scramble's split request is on the way: a game may hold the next round's
     *  start briefly while this is true (its MOVE events come at the poll that clears it). */
    bool scramble_waiting;
    size_t splits_queued;      /**< split requests queued or being sent */
    bool service_up;           /**< the last request reached the service */
} eo_client_stats;

/** Fills @p out. Thread-safe. */
void eo_client_get_stats(const eo_client *c, eo_client_stats *out);

/**
 * Waits until the worker has nothing queued (reports, lookups, splits) or @p timeout_ms passes.
 * Blocks: for shutdown and tests, never the frame loop. Returns 0 (idle) or EO_EBUSY (timed out).
 * May be called from any thread.
 */
int eo_client_flush(eo_client *c, long timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
