/**
 * @file eo_service.h
 * The rating service (`evenodds serve`): an HTTP/JSON front (libmicrohttpd thread pool) over
 * the engine. One writer thread applies every update in order with group commit; lookups and
 * splits read through read-only store handles, one per HTTP thread, and never wait for it.
 * docs/SERVICE.md describes the behaviour, docs/openapi.yaml the HTTP contract.
 *
 * The service writes logfmt lines to the FILE given in its configuration (stderr in the CLI);
 * it never writes keys or Authorization headers there. Signals are the caller's business:
 * call eo_service_stop() when the process should end.
 *
 * Ownership: the configuration's strings are copied by eo_service_start().
 */
#ifndef EO_SERVICE_H
#define EO_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Shortest accepted key, in bytes. */
#define EO_SERVICE_KEY_MIN 16
/** Longest accepted key, in bytes. */
#define EO_SERVICE_KEY_MAX 255

/** Log levels (a line is written when its level >= the configured one). */
enum { EO_LOG_DEBUG = 0, EO_LOG_INFO = 1, EO_LOG_WARN = 2, EO_LOG_ERROR = 3 };

/** The two secrets. Keys are opaque byte strings without NUL. */
typedef struct eo_service_keys {
    char server[EO_SERVICE_KEY_MAX + 1]; /**< server key: lookups, rounds, splits */
    char admin[EO_SERVICE_KEY_MAX + 1];  /**< admin key: everything */
} eo_service_keys;

/**
 * Loads the keys: first from @p config_path (may be NULL; `KEY=VALUE` lines, `#` comments and
 * blank lines allowed; EVENODDS_SERVER_KEY and EVENODDS_ADMIN_KEY are the known keys, others
 * are an error), then the environment variables of the same names override. The file must not
 * be readable or writable by group or others. Both keys must be present, differ, and have
 * EO_SERVICE_KEY_MIN..EO_SERVICE_KEY_MAX bytes without spaces or control characters.
 * Returns 0, EO_EIO (file unreadable) or EO_EINVAL with a message in @p err (never a key).
 */
int eo_service_keys_load(const char *config_path, eo_service_keys *keys, char *err, size_t errlen);

/** What `evenodds serve` does with its dashboard (docs/SERVICE.md "Dashboard and reads"). */
typedef enum {
    EO_DASHBOARD_PUBLIC = 0, /**< pages served; reads need no key (without one they show players'
                                  values only once they are visible) */
    EO_DASHBOARD_KEY,        /**< pages served; reads need the server key, as the pages ask */
    EO_DASHBOARD_OFF         /**< no pages; reads need the server key */
} eo_dashboard;

/** Settings of a service. Fill with eo_service_config_default(), then set db and listen. */
typedef struct eo_service_config {
    const char *db;             /**< SQLite file (created if absent) */
    const char *listen;         /**< "HOST:PORT" or "[V6]:PORT"; port 0 picks a free port */
    const char *default_pool;   /**< created with SynElo defaults if absent; NULL for none */
    unsigned threads;           /**< HTTP threads; 0 = number of cores */
    /** Open connections at most; a connection beyond it is closed at once, never queued.
     *  0 (the default) = sized from the process's open-file limit: min(4096, limit / 2). */
    unsigned max_connections;
    /** Open connections per client address (IPv6: per /64) at most (64); 0 = no cap. */
    unsigned max_per_address;
    /** A request's headers must be complete within this many seconds of the connection's
     *  start or of the previous answer on it (10); slower senders are dropped. */
    unsigned header_timeout_s;
    /** A connection that sends nothing for this many seconds is closed (5): the keep-alive
     *  idle timeout. */
    unsigned conn_timeout_s;
    /** Least average rate of a body, bytes per second, counted after its first 2 seconds
     *  (1024); slower uploads are dropped. */
    unsigned body_min_rate;
    size_t body_max;            /**< largest request body, bytes (1 MiB); larger gets 413 */
    /** Request bodies held in memory at once, all requests together (64 MiB); a request
     *  beyond it gets 503 with Retry-After. */
    size_t body_budget;
    /** Compute pool threads (splits past their inline budget, balancer requests,
     *  autobalance); 0 = number of cores. They run at a lower priority than the HTTP
     *  threads and the writer. */
    unsigned compute_threads;
    /** Compute jobs waiting at most (64); beyond it a request gets 503 with Retry-After. */
    unsigned compute_queue;
    /** Largest "budget_ms" a balancer request gets (250); larger asks are cut to it. */
    unsigned budget_max_ms;
    /** Refits running at once (1); another refit request gets 503 with Retry-After. */
    unsigned refit_max;
    /** Seconds between scheduled tunes of each pool (0: none, the default): every pool is
     *  tuned in the background once per period, one job at a time; nothing is applied. */
    unsigned tune_every;
    /** /readyz answers 503 while the database's file system has less free space (64 MiB). */
    uint64_t min_free_bytes;
    size_t queue_max;           /**< writer queue capacity (4096); full gets 503 */
    size_t batch_max;           /**< most updates per commit (512) */
    unsigned drain_timeout_ms;  /**< how long stop waits for in-flight requests (10000) */
    unsigned store_flags;       /**< eo_store_open() flags for the writer (e.g. SYNC_FULL) */
    eo_dashboard dashboard;     /**< EO_DASHBOARD_PUBLIC by default */
    /** A game-server instance that has not heartbeaten for this many ms is drained: no new
     *  session or backfill, its open sessions kept (10000; docs/MATCHMAKING.md "Instances"). */
    unsigned mm_heartbeat_ms;
    /** A drained silent instance is lost, with its open sessions, when still silent this many
     *  ms later; a heartbeat before makes it live again (60000; 0: lost at the timeout). */
    unsigned mm_heartbeat_grace_ms;
    /** Finished tickets, sessions and instances stay readable this many seconds (86400). */
    unsigned mm_keep_s;
    int log_level;              /**< EO_LOG_* (EO_LOG_INFO) */
    FILE *log;                  /**< logfmt sink (NULL: no logs) */
} eo_service_config;

/** Fills @p cfg with the defaults above (db and listen NULL, log NULL). */
void eo_service_config_default(eo_service_config *cfg);

typedef struct eo_service eo_service;

/**
 * Opens the store, folds its pools, creates the default pool if asked, starts the writer and
 * the HTTP daemon. Returns 0 with *out running, or EO_EINVAL (bad listen address or config),
 * EO_EIO (store or socket), EO_ENOMEM, with a message in @p err.
 */
int eo_service_start(const eo_service_config *cfg, const eo_service_keys *keys,
                     eo_service **out, char *err, size_t errlen);

/** The TCP port the service listens on (the real one when 0 was asked). */
uint16_t eo_service_port(const eo_service *svc);

/**
 * Graceful stop: stops accepting connections, marks the service not ready, waits (up to the
 * drain timeout) for requests in flight, stops the HTTP threads, lets the writer commit and
 * answer everything queued, closes the store and frees @p svc. Returns 0, or EO_EIO when a
 * commit of that final drain failed (what was queued at the stop is not stored); a failed
 * commit before the stop was answered 500 and does not count. NULL is a no-op returning 0.
 */
int eo_service_stop(eo_service *svc);

#ifdef __cplusplus
}
#endif
#endif
