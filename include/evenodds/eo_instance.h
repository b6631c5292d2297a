/**
 * @file eo_instance.h
 * The instance side of libevenodds-client: what a queue-fed game server links to take part in
 * matchmaking (docs/MATCHMAKING.md "Instances", docs/CLIENT.md "Queue-fed servers"). It
 * registers the server with the coordinator, heartbeats, learns the sessions the coordinator
 * puts on it (teams, map, every player's join secret), checks a joining player's secret, asks
 * for backfill when players leave, and closes a session at its end.
 *
 * Threads. Every function here is called from one thread, the game's (its frame loop), and none
 * waits on the network: HTTP runs on the library's own worker thread, which registers (again
 * after a restart of either side), heartbeats every heartbeat_ms (the answer carries the
 * sessions), and sends the backfill and close requests queued by the game, retrying them with
 * backoff until the service answers. What the worker learns comes back as events through
 * eo_instance_poll(), called each frame; eo_instance_check_secret() reads the sessions as last
 * polled, under a lock the worker holds only to swap in a new table. Only eo_instance_create()
 * (no network), eo_instance_flush() and eo_instance_destroy() may block.
 *
 * Ownership: strings passed in are copied; eo_instance_destroy(NULL) is a no-op.
 */
#ifndef EO_INSTANCE_H
#define EO_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_client.h"
#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most queues an instance serves. */
#define EO_INSTANCE_QUEUES 16
/** Most seats of a session the library keeps (two teams of 32, and backfills). */
#define EO_INSTANCE_SEATS_MAX 128
/** Longest session id, without the NUL. */
#define EO_INSTANCE_SESSION_MAX 64

/** Configuration. Fill with eo_instance_config_init(), then set at least url, key, id, queues
 *  and address. */
typedef struct eo_instance_config {
    const char *url; /**< the service, "http://HOST:PORT" (required) */
    const char *key; /**< the server key, to register (required; never logged) */
    const char *id;  /**< this instance's id (required; an id of at most 128 bytes) */
    const char *queues[EO_INSTANCE_QUEUES]; /**< the queues it serves (required, nqueues) */
    size_t nqueues;
    const char *address;             /**< where players join, "HOST:PORT" (required) */
    const char *region;              /**< its region (required when a queue has regions), or NULL */
    int capacity;                    /**< sessions at once (default 1) */
    long heartbeat_ms;               /**< default 1000; the service's timeout is 10 s by default */
    long connect_timeout_ms;         /**< default 2000 */
    long request_timeout_ms;         /**< default 5000 */
    long retry_min_ms, retry_max_ms; /**< backoff after a failure (500, 30000) */
    eo_client_log_fn log;            /**< log lines, called from eo_instance_poll() (may be NULL) */
    void *log_ctx;
} eo_instance_config;

void eo_instance_config_init(eo_instance_config *cfg);

typedef struct eo_instance eo_instance;

/** Checks @p cfg, copies it and starts the worker (which registers at once). 0, or EO_EINVAL /
 *  EO_ENOMEM with a message in @p err naming the setting. */
int eo_instance_create(const eo_instance_config *cfg, eo_instance **out, char *err, size_t errlen);

/** Stops the worker (an unsent close is not waited for: eo_instance_flush() first) and frees.
 *  The instance is not drained: the service loses it after its heartbeat timeout. */
void eo_instance_destroy(eo_instance *in);

/** What eo_instance_poll() reports. */
typedef enum eo_instance_event_type {
    EO_INSTANCE_EV_REGISTERED = 1, /**< (again) registered; sessions follow with the heartbeat */
    EO_INSTANCE_EV_SESSION,        /**< a new session: eo_instance_session_get() has it */
    EO_INSTANCE_EV_SEATS,          /**< a session got seats (backfill): seats[first..first+n) */
    EO_INSTANCE_EV_LOST,           /**< a session the service no longer has on this instance
                                        (it missed heartbeats, or an operator ended it) */
    EO_INSTANCE_EV_CLOSED,         /**< the service acknowledged a close */
    EO_INSTANCE_EV_REFUSED,        /**< a backfill or close the service refused for good
                                        (status, message) */
    EO_INSTANCE_EV_LOG             /**< a log line (also given to cfg.log) */
} eo_instance_event_type;

typedef struct eo_instance_event {
    eo_instance_event_type type;
    char session[EO_INSTANCE_SESSION_MAX + 1];
    size_t first, n;           /**< SEATS */
    int status;                /**< REFUSED: the HTTP status */
    eo_client_log_level level; /**< LOG */
    char msg[256];             /**< LOG, REFUSED */
} eo_instance_event;

/** Takes the next event: 1 with *ev filled, 0 when none. Never blocks. */
int eo_instance_poll(eo_instance *in, eo_instance_event *ev);

/** A seat of a session: a player, his team (EO_TEAM_A or EO_TEAM_B) and ticket. */
typedef struct eo_instance_seat {
    char player[EO_ID_MAX + 1];
    char ticket[EO_ID_MAX + 1];
    eo_track_team team;
} eo_instance_seat;

/** A session as last polled. */
typedef struct eo_instance_session {
    char id[EO_INSTANCE_SESSION_MAX + 1];
    char pool[EO_ID_MAX + 1]; /**< where its rounds go */
    char queue[EO_ID_MAX + 1];
    char map[EO_ID_MAX + 1]; /**< "" when the queue has no maps */
    char region[EO_ID_MAX + 1];
    double p_a, quality; /**< the pool model's prediction for the teams */
    int team_size;
    size_t nseats;
    eo_instance_seat seats[EO_INSTANCE_SEATS_MAX];
} eo_instance_session;

/** A copy of session @p id as last polled. 0 or EO_ENOTFOUND. */
int eo_instance_session_get(eo_instance *in, const char *id, eo_instance_session *out);

/** The open sessions' ids (at most @p cap into @p ids), as last polled: how many there are. */
size_t eo_instance_sessions(eo_instance *in, char (*ids)[EO_INSTANCE_SESSION_MAX + 1], size_t cap);

/**
 * A player joins with @p secret: 0 when he has a seat with that secret in an open session of
 * this instance (*@p team his team, @p session (capacity EO_INSTANCE_SESSION_MAX + 1, may be
 * NULL) the session); EO_ENOTFOUND when he has no seat here; EO_EINVAL when the secret is not
 * his. Compared in constant time. Never blocks on the network.
 */
int eo_instance_check_secret(eo_instance *in, const char *player, const char *secret,
                             eo_track_team *team, char *session);

/** Asks for @p slots players for @p team of @p session (queued; the worker sends it). 0,
 *  EO_ENOTFOUND (no such open session), EO_EINVAL, EO_ENOMEM. */
int eo_instance_backfill(eo_instance *in, const char *session, eo_track_team team, int slots);

/** Closes @p session at its end (queued; the worker sends it until acknowledged). From now on
 *  its secrets are not accepted here. 0, EO_ENOTFOUND, EO_ENOMEM. */
int eo_instance_close_session(eo_instance *in, const char *session);

/** Waits until the instance is registered, a heartbeat has brought its sessions, and every
 *  queued request is acknowledged (or refused), at most @p timeout_ms. 0 or EO_EBUSY (timed
 *  out). For tests and shutdown. */
int eo_instance_flush(eo_instance *in, long timeout_ms);

#ifdef __cplusplus
}
#endif
#endif
