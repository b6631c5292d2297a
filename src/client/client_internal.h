/* Internals of libevenodds-client shared by its files: the persisted state (state.c), the
 * decoders of the service's answers (answers.c), the worker thread (worker.c) and the game-thread
 * API (client.c). Names eo__client_*. */
#ifndef EO_CLIENT_INTERNAL_H
#define EO_CLIENT_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/strmap.h"
#include "evenodds/eo_client.h"

/* ---- the state file (state.c) ----------------------------------------------------------- */

/* One queued report: its round id and its JSON text, both owned. */
typedef struct eo__report {
    char *id;
    char *text;
} eo__report;

/* What survives a restart: the id epoch, the next sequence number, the drop count and the
 * queued reports, oldest first, in a ring of cap slots. */
typedef struct eo__client_state {
    int64_t epoch;
    uint64_t next_seq;
    uint64_t dropped;
    eo__report *ring; /* cap slots */
    size_t cap, head, count;
    size_t overflow;  /* set by eo__client_state_parse(): reports of the file beyond cap */
} eo__client_state;

/* Longest state file read (1024 slots of 1 MiB reports would not fit; real reports are a few
 * KiB). */
#define EO__STATE_MAX ((size_t)64 << 20)

/* Sets up an empty state of @p cap slots (1..1024). 0 or EO_ENOMEM / EO_EINVAL. */
int eo__client_state_init(eo__client_state *st, size_t cap, int64_t epoch);
void eo__client_state_free(eo__client_state *st);

/* The i-th queued report (0 = oldest). */
eo__report *eo__client_state_at(eo__client_state *st, size_t i);

/* Appends a report (takes ownership of id and text on success). When the ring is full the
 * oldest is dropped first (freed; st->dropped counts it) and *dropped_id gets a malloc'd copy
 * of its id (else NULL). 0 or EO_ENOMEM (nothing changed, ownership stays with the caller). */
int eo__client_state_push(eo__client_state *st, char *id, char *text, char **dropped_id);

/* Removes the oldest report. */
void eo__client_state_pop(eo__client_state *st);

/* The file text of @p st (malloc'd into *out, *len bytes). 0 or EO_ENOMEM. Format:
 *   evenodds-client-state 1
 *   epoch E
 *   next N
 *   dropped D
 *   report ID TEXT        (one line per queued report, oldest first; TEXT is compact JSON)
 */
int eo__client_state_format(const eo__client_state *st, char **out, size_t *len);

/* Parses a state file's text into @p st (initialised here with @p cap slots; when the file
 * holds more reports than that, the oldest beyond it count as dropped). Every line is checked:
 * the header, the numbers, each report's id (an id) and text (a JSON object whose "id" is that
 * id). On failure returns EO_EPARSE with "line L: what" in @p err and leaves st freed. */
int eo__client_state_parse(const char *text, size_t len, size_t cap, eo__client_state *st,
                           char *err, size_t errlen);

/* Writes @p len bytes to @p path atomically (PATH.tmp, fsync, rename, fsync of the folder).
 * 0 or EO_EIO (errno-based text in @p err). */
int eo__client_file_write(const char *path, const char *text, size_t len, char *err,
                          size_t errlen);

/* Reads a whole file (at most @p max bytes) into *out (malloc'd, NUL-terminated). 0,
 * EO_ENOTFOUND (no such file), EO_ELIMIT (larger), EO_EIO. */
int eo__client_file_read(const char *path, size_t max, char **out, size_t *len, char *err,
                         size_t errlen);

/* ---- the service's answers (answers.c) --------------------------------------------------- */

/* One split of the cache: team size k, the 2k ids (A's k then B's k, owned). */
typedef struct eo__split {
    int k;
    char **ids;
} eo__split;

/* The splits of one answer, in the order given (k ascending). */
typedef struct eo__splits {
    size_t count;
    eo__split *s;
} eo__splits;

void eo__splits_free(eo__splits *s);

/* A player object of a lookup or round answer: mean from "mu" when present else "rating";
 * display from "display" when present else "rating"; "rounds" and "visible" required; "stale"
 * optional. @p id_out (capacity EO_ID_MAX + 1) gets "id". 0 or EO_EPARSE. */
int eo__client_rating_from_json(const json_t *o, char *id_out, eo_client_rating *out);

/* A lookup answer (the body of GET …/players/{id}). 0 or EO_EPARSE. */
int eo__client_parse_lookup(const char *text, size_t len, char *id_out, eo_client_rating *out);

/* A round answer ({"round","players":[…]}): calls @p each for every player. 0 or EO_EPARSE
 * (then @p each may have been called for the players before the bad one). */
int eo__client_parse_round_answer(const char *text, size_t len,
                                  void (*each)(void *ctx, const char *id,
                                               const eo_client_rating *r),
                                  void *ctx);

/* A splits answer ({"splits":[{"k","A","B",…}, …]}) into @p out (caller frees). Each split
 * must have k >= 2, k ids in A and in B, no id twice in it. 0, EO_EPARSE, EO_ENOMEM. */
int eo__client_parse_splits(const char *text, size_t len, eo__splits *out);

/* ---- the client object, shared by client.c and worker.c --------------------------------- */

typedef enum { EO__RES_RATING, EO__RES_REPORT, EO__RES_SPLITS, EO__RES_LOG } eo__res_type;

/* A worker result, handed to the game thread through the results list. */
typedef struct eo__result {
    struct eo__result *next;
    eo__res_type type;
    char id[EO_ID_MAX + 1];   /* RATING: player; REPORT: round */
    eo_client_rating rating;  /* RATING */
    int status;               /* REPORT */
    unsigned tag;             /* SPLITS: the job's tag */
    bool ok;                  /* SPLITS: answered */
    eo__splits splits;        /* SPLITS: owned */
    eo_client_log_level level; /* LOG */
    char msg[384];            /* LOG */
} eo__result;

/* A split request for the worker: its tag (0: cache refresh) and the JSON body. */
typedef struct eo__job {
    struct eo__job *next;
    unsigned tag;
    char *body;
} eo__job;

/* What the game thread remembers of a player it has seen (indexed like c->known). */
typedef struct eo__known {
    eo_client_rating r;
    int64_t last_moved; /* EO_AB_NEVER or Unix s */
} eo__known;

struct eo_client {
    eo_client_config cfg; /* strings point to the copies below */
    char *url, *pool, *server_id, *key, *state_file, *map, *mode;
    char *pool_esc;       /* the pool, percent-encoded for paths */

    /* game thread only */
    eo_tracker *tr;
    eo__strmap *known_ids;
    eo__known *known;
    size_t known_cap;
    eo_trigger_state trig;
    int64_t unbalanced_since;
    double next_ab_check;
    double round_ends_at; /* < 0: no clock */
    bool scramble_pending;
    const char *scramble_rule;
    unsigned scramble_tag, next_tag;
    eo__splits cache;
    eo_client_event *ev;
    size_t ev_head, ev_count, ev_cap;

    /* shared: everything below is guarded by mu */
    pthread_mutex_t mu;
    pthread_cond_t wake;   /* the worker waits on it */
    pthread_cond_t idle;   /* eo_client_flush() waits on it */
    pthread_t thread;
    bool thread_started;
    bool stop;             /* also read without the lock by the transfer callback */
    bool busy;             /* the worker is in a request or writing the file */
    bool dirty;            /* the state changed since the file was written */
    int64_t save_at_ms;    /* monotonic ms: after a failed write, when to try again */
    long save_backoff_ms;
    eo__client_state st;
    size_t unsaved;        /* reports at the ring's tail not yet in the state file: not sent */
    const char *sending;   /* id of the report being sent (the worker's copy), or NULL */
    int sock;              /* socket of the worker's connection, -1 none: destroy shuts it */
    size_t njobs;          /* split requests queued or being sent */
    char **lookups;        /* ids to look up, owned */
    size_t nlookups, lookups_cap;
    eo__job *jobs, *jobs_tail;
    eo__result *res, *res_tail;
    int64_t next_try_ms;   /* monotonic ms; reports wait for it after a failure */
    int64_t lookup_try_ms; /* lookups wait for it after a network failure or a 5xx lookup */
    long backoff_ms;
    eo_client_stats stats;
};

/* Monotonic milliseconds. */
int64_t eo__client_mono_ms(void);
/* libcurl's global set-up, once per process (the report worker's and the instance's). */
void eo__client_curl_once(void);

/* An answer's body as libcurl hands it over (worker.c): at most EO__ANSWER_MAX bytes (a splits
 * answer for 256 players is ~50 KiB; an instance's document with its sessions more), kept
 * NUL-terminated; too_big when it was cut. */
#define EO__ANSWER_MAX ((size_t)4 << 20)
typedef struct eo__answer_buf {
    char *p;
    size_t len, cap;
    bool too_big;
} eo__answer_buf;
/* libcurl's write callback into an eo__answer_buf (@p arg). */
size_t eo__client_on_data(char *data, size_t size, size_t nmemb, void *arg);

/* Queues a log line for the game thread (mu must be held). printf-style, truncated. */
void eo__client_log_locked(eo_client *c, eo_client_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Appends a result (mu must be held). */
void eo__client_push_result(eo_client *c, eo__result *r);

/* Nothing to send or write, and the worker is not in a request (mu must be held). */
bool eo__client_idle(const eo_client *c);

/* The worker thread's body (worker.c). */
void *eo__client_worker(void *arg);

#endif
