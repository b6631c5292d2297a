/* Internal interfaces of the rating service (src/service/). Each .c file owns one part:
 * log.c (logfmt), auth.c (bearer keys), metrics.c (Prometheus), pools.c (the published pool
 * table), writer.c (the single writer with group commit), routes.c (matching and handlers),
 * http.c (libmicrohttpd glue), service.c (start and graceful stop), config.c (keys, defaults). */
#ifndef EO_SERVICE_INTERNAL_H
#define EO_SERVICE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>

#include <jansson.h>

#include "evenodds/eo_engine.h"
#include "evenodds/eo_fit.h"
#include "evenodds/eo_pool.h"
#include "evenodds/eo_service.h"
#include "evenodds/eo_store.h"
#include "engine/seed.h"

/* ---- log.c: one logfmt line per event ---------------------------------------------------- */

typedef struct eo__logger {
    FILE *f;   /* NULL: logging off */
    int level; /* EO_LOG_* */
} eo__logger;

/* A logfmt line under construction; bounded, silently truncated at the end. */
typedef struct eo__logline {
    char buf[1024];
    size_t len;
} eo__logline;

void eo__log_begin(eo__logline *l, int level, const char *msg);
void eo__log_str(eo__logline *l, const char *key, const char *val);
void eo__log_int(eo__logline *l, const char *key, long long val);
void eo__log_ms(eo__logline *l, const char *key, double ms);
/* Writes the line (one write) if the level passes. */
void eo__log_end(const eo__logger *lg, int level, eo__logline *l);
/* Shorthand for a message with no fields. */
void eo__log_msg(const eo__logger *lg, int level, const char *msg);

/* ---- auth.c ----------------------------------------------------------------------------- */

/* Who a caller is by his key, and what a route needs. EO__ROLE_TOKEN marks the routes a client
 * may also call with its own token instead of a key (a ticket's, an instance's:
 * docs/MATCHMAKING.md); the handler checks the token. EO__ROLE_READ, a route's only, is any key,
 * or no key at all when the dashboard is public (docs/SERVICE.md "Dashboard and reads"). A key's
 * role passes a route whose role is not above it. */
typedef enum {
    EO__ROLE_NONE = 0,
    EO__ROLE_TOKEN = 1,
    EO__ROLE_READ = 2,
    EO__ROLE_SERVER = 3,
    EO__ROLE_ADMIN = 4
} eo__role;

typedef struct eo__auth {
    unsigned char server[EO_SERVICE_KEY_MAX + 1]; /* zero-padded */
    unsigned char admin[EO_SERVICE_KEY_MAX + 1];
    size_t server_len, admin_len;
} eo__auth;

void eo__auth_init(eo__auth *a, const eo_service_keys *keys);
/* Role of an Authorization header value (NULL = absent). *missing tells absent/not Bearer. */
eo__role eo__auth_check(const eo__auth *a, const char *header, bool *missing);
/* Wipes the keys. */
void eo__auth_clear(eo__auth *a);
/* The bearer value of an Authorization header into @p out (capacity @p cap): 0, or -1 when
 * there is none or it does not fit. */
int eo__auth_bearer(const char *header, char *out, size_t cap);
/* Whether @p n bytes of @p a and @p b are equal, in a time that does not depend on where they
 * differ. */
bool eo__ct_equal(const char *a, const char *b, size_t n);

/* Hex characters of a ticket's or instance's token (16 random bytes: docs/MATCHMAKING.md). */
#define EO__TOKEN_LEN 32
/* Whether the bearer of an Authorization header has a token's shape (EO__TOKEN_LEN lowercase
 * hex characters): only such a bearer that is no key goes on to a handler that takes tokens,
 * any other is refused before its body is read. */
bool eo__auth_token_shaped(const char *header);

/* ---- routes: the table's size, shared by routes.c, http.c and metrics.c ------------------ */

/* Routes at most (the metrics' rows); routes.c checks its table against it. */
#define EO__ROUTES_MAX 64

/* ---- metrics.c -------------------------------------------------------------------------- */

#define EO__LAT_BUCKETS 14
#define EO__BATCH_BUCKETS 10
#define EO__STATUS_SLOTS 16

typedef struct eo__hist {
    atomic_uint_fast64_t bucket[EO__LAT_BUCKETS]; /* non-cumulative counts */
    atomic_uint_fast64_t count;
    atomic_uint_fast64_t sum_us;
} eo__hist;

/* Why a connection was refused at accept, or dropped later (guard.c); metric labels. */
enum { EO__REFUSE_TOTAL, EO__REFUSE_ADDRESS, EO__REFUSE_COUNT };
enum { EO__DROP_HEADERS, EO__DROP_BODY, EO__DROP_COUNT };
/* What was full when a request got 503 "overloaded"; metric labels. */
enum { EO__BUSY_WRITER, EO__BUSY_COMPUTE, EO__BUSY_BODIES, EO__BUSY_REFITS, EO__BUSY_COUNT };

typedef struct eo__metrics {
    /* per route (eo__routes[] index), the last row for requests that matched none */
    atomic_uint_fast64_t requests[EO__ROUTES_MAX + 1][EO__STATUS_SLOTS];
    eo__hist latency[EO__ROUTES_MAX + 1];
    eo__hist commit;
    atomic_uint_fast64_t batch_bucket[EO__BATCH_BUCKETS];
    atomic_uint_fast64_t batch_count, batch_sum;
    atomic_uint_fast64_t rounds_rated;
    atomic_uint_fast64_t commit_failures;
    atomic_size_t queue_depth;
    const atomic_long *inflight; /* requests being served (the service's counter), or NULL */
    /* connections (guard.c) */
    atomic_uint_fast64_t conn_open;
    atomic_uint_fast64_t conn_accepted;
    atomic_uint_fast64_t conn_refused[EO__REFUSE_COUNT];
    atomic_uint_fast64_t conn_dropped[EO__DROP_COUNT];
    /* the compute pool (compute.c) and the requests refused for a full queue or budget */
    atomic_size_t compute_depth;
    atomic_uint_fast64_t refused[EO__BUSY_COUNT];
    const atomic_size_t *body_held; /* the service's bodies in memory, or NULL */
} eo__metrics;

struct eo__buf; /* core/buf.h */

void eo__metrics_init(eo__metrics *m);
/* Counts a request of route @p route (an eo__routes[] index; -1: none matched). */
void eo__metrics_request(eo__metrics *m, int route, int status, double seconds);
void eo__metrics_commit(eo__metrics *m, double seconds, size_t batch, size_t rounds_rated, bool ok);
/* Prometheus text exposition, malloc'd: @p m's figures, then what @p more (NULL: nothing) adds
 * with @p ctx (the matchmaking figures). Returns 0 or EO_ENOMEM. */
int eo__metrics_render(eo__metrics *m, void (*more)(void *ctx, struct eo__buf *t), void *ctx,
                       char **out, size_t *len);
/* Adds one observation of @p seconds to a histogram with the latency buckets (0.1 ms to 1 s). */
void eo__hist_add(eo__hist *h, double seconds);
/* Writes histogram @p h as metric @p name with @p labels ("" none: `k="v",…`). */
void eo__hist_render(struct eo__buf *t, const char *name, const char *labels, eo__hist *h);

/* ---- hash.c: seeded hashing for tables keyed by what clients send ----------------------- */

/* FNV-1a from @p seed's basis with splitmix64's finaliser: a NUL-terminated string, or n bytes. */
uint64_t eo__hash_str(uint64_t seed, const char *s);
uint64_t eo__hash_bytes(uint64_t seed, const void *p, size_t n);
/* eo__seed_fresh(): engine/seed.h */

/* ---- guard.c: connection caps and deadlines (docs/SERVICE.md "Connections and limits") -- */

typedef struct eo__guard eo__guard;
/* One open connection as the guard sees it (http.c keeps it as libmicrohttpd's socket
 * context). */
typedef struct eo__gconn eo__gconn;

typedef struct eo__guard_config {
    unsigned max_total;        /* open connections at most (> 0) */
    unsigned max_per_address;  /* per IPv4 address or IPv6 /64; 0: no cap */
    int64_t header_timeout_ms; /* a request's headers, from the start of its phase */
    int64_t body_grace_ms;     /* a body's first milliseconds, not rated */
    unsigned body_min_rate;    /* bytes per second a body keeps on average after the grace; 0:
                                  none */
} eo__guard_config;

/* What a connection waits for: its next request's headers (the deadline runs), its body (the
 * rate is watched), or the service (an answer being computed or sent: no deadline of ours;
 * libmicrohttpd's idle timeout still closes a client that stops reading). */
enum { EO__PH_HEADERS, EO__PH_BODY, EO__PH_SERVICE };

/* Starts the watch thread. 0, EO_EINVAL (max_total 0) or EO_ENOMEM. */
int eo__guard_start(const eo__guard_config *cfg, eo__metrics *m, const eo__logger *lg,
                    eo__guard **out);
/* Stops the watch and frees; after the HTTP daemon stopped. NULL is a no-op. */
void eo__guard_stop(eo__guard *g);
/* Whether a connection from @p addr may open now: false (counted in /metrics) when the total
 * or its address's cap is reached. Any thread. Callers racing each other may pass a cap by
 * as many connections as there are accepting threads, at most. */
bool eo__guard_admit(eo__guard *g, const struct sockaddr *addr, socklen_t len);
/* Registers an accepted connection on socket @p fd, in its headers phase. NULL when out of
 * memory (the connection then has no deadline of ours, only libmicrohttpd's). */
eo__gconn *eo__guard_open(eo__guard *g, int fd, const struct sockaddr *addr, socklen_t len);
/* Forgets @p c (NULL: no-op) before its socket is closed, and frees it. */
void eo__guard_close(eo__guard *g, eo__gconn *c);
/* Enters phase EO__PH_* now (NULL: no-op); a body phase starts counting from 0 bytes. */
void eo__gconn_phase(eo__gconn *c, int phase);
/* Adds @p n bytes of body received (NULL: no-op). */
void eo__gconn_body(eo__gconn *c, size_t n);
/* Whether one of libmicrohttpd's own log lines may be written now: a few per interval, the
 * rest are counted into the periodic summary. NULL: always. */
bool eo__guard_log_allow(eo__guard *g);

/* ---- ratings.c: the ratings splits read, published by the writer ----------------------- */

/* Every player's mean and variance of one pool as of the last commit (see ratings.c for the
 * scheme). One writer thread calls eo__ratings_set(); any number of threads call
 * eo__ratings_read() at the same time, without waiting for it. */
typedef struct eo__ratings eo__ratings;

/* One player's new row values (known false: the row was deleted, the player reads as not
 * found); @c id is the caller's (copied when the player is new). */
typedef struct eo__rating_set {
    const char *id;
    bool known;
    double mu, var;
} eo__rating_set;

/* An empty table. 0 or EO_ENOMEM. */
int eo__ratings_new(eo__ratings **out);
/* Frees the table; no reader may be inside. NULL is a no-op. */
void eo__ratings_free(eo__ratings *t);
/* Sets @p u[0..n) (the writer only, after the commit that wrote them, before its answers):
 * readers that begin after the return see every value; readers see all of a call's values or
 * none. Waits until the readers of the older copy have left. 0; EO_ENOMEM (the table is then
 * switched off for good: readers get EO_EBUSY); EO_EBUSY when it was switched off. */
int eo__ratings_set(eo__ratings *t, const eo__rating_set *u, size_t n);
/* Switches the table off for good (readers get EO_EBUSY). */
void eo__ratings_off(eo__ratings *t);
/* Reads the players @p ids[0..n) from one copy (one commit): found[i] and, when found,
 * out[i].mu and out[i].var. 0, or EO_EBUSY when the table is switched off or NULL (read the
 * store). */
int eo__ratings_read(eo__ratings *t, const char *const *ids, size_t n, eo_strength *out,
                     bool *found);

/* ---- pools.c: pool facts published by the writer for the HTTP threads -------------------- */

/* What the HTTP threads know of a pool: its name, id, configuration, prepared model, published
 * map bias and ratings. (The core's pool is eo_pool; the engine keeps eo__stored_pool.) */
typedef struct eo__pool_facts {
    char name[EO_ID_MAX + 1];
    int64_t id;
    eo_pool_config cfg;
    /* The prepared model, owned by the table until eo__pools_destroy() (a re-tune's apply,
     * eo__pools_set_config(), retires it but keeps it alive: copies may hold it); NULL in an
     * info not read from the table. */
    const eo_model_ctx *model;
    /* The map bias fields as last committed (eo__pools_publish_bias()), owned by the table and
     * read only under its lock (eo__pools_field()): NULL in every copy handed out. */
    struct eo__bias_snap *bias;
    /* The pool's ratings for splits, owned by the table (created with the entry, freed by
     * eo__pools_destroy(): the pointer stays valid in copies); NULL in an info not read from
     * the table. */
    eo__ratings *ratings;
} eo__pool_facts;

typedef struct eo__pools {
    pthread_rwlock_t lock;
    eo__pool_facts *v; /* sorted by name */
    size_t n, cap;
    eo_model_ctx **retired; /* models replaced by eo__pools_set_config(), freed at the end */
    size_t nretired, capretired;
} eo__pools;

int eo__pools_init(eo__pools *p);
void eo__pools_destroy(eo__pools *p);
/* Copies the pool named @p name into @p out. 0 or EO_ENOTFOUND. */
int eo__pools_get(eo__pools *p, const char *name, eo__pool_facts *out);
/* Inserts a pool (preparing its model) unless its name is there already (then nothing
 * changes: a pool's configuration is fixed at creation). 0, EO_EINVAL or EO_ENOMEM. */
int eo__pools_put(eo__pools *p, const eo__pool_facts *in);
/* Replaces the configuration of pool @p name (a re-tune's apply, after its commit) and its
 * prepared model; the old model is retired, not freed (copies handed out may still use it).
 * 0, EO_ENOTFOUND, EO_EINVAL or EO_ENOMEM (the old configuration stays). */
int eo__pools_set_config(eo__pools *p, const char *name, const eo_pool_config *cfg);
/* Publishes the field terms of @p pool's map bias and its presence π (the writer's in-memory
 * pool, after a commit) for pool @p name, replacing the previous ones; a pool with bias and
 * presence off publishes nothing. 0, EO_ENOTFOUND (not in the table) or EO_ENOMEM (the
 * previous ones stay). */
int eo__pools_publish_bias(eo__pools *p, const char *name, const eo_pool *pool);
/* The presence term of pool @p name as last published: strength·π, logits per unit of
 * presence (docs/MODELS.md "Presence"); 0 when off, unpublished or unknown. */
double eo__pools_presence(eo__pools *p, const char *name);
/* The field term a round on @p map (NULL: none) with teams of @p na and @p nb in @p mode
 * would get in pool @p name, as last published (eo_pool_bias_field()'s answer then); 0 when
 * the pool has no bias, no published entry for the key, or is unknown. */
double eo__pools_field(eo__pools *p, const char *name, const char *map, size_t na, size_t nb,
                       const char *mode);
/* Loads every player row of pool @p name (store id @p pool_id) from @p st into its ratings, at
 * start (no reader yet). 0, EO_ENOTFOUND, EO_EIO or EO_ENOMEM (the pool's ratings are then
 * off: splits read the store). */
int eo__pools_ratings_load(eo__pools *p, const char *name, eo_store *st, int64_t pool_id);
/* eo__ratings_set() on the ratings of pool @p name. 0, EO_ENOTFOUND, EO_ENOMEM or EO_EBUSY. */
int eo__pools_ratings_set(eo__pools *p, const char *name, const eo__rating_set *u, size_t n);
/* Switches off the ratings of every pool (the writer lost track of what a batch changed). */
void eo__pools_ratings_off(eo__pools *p);
/* The document of GET …/maps for pool @p pi from its published bias (a pool without one: no
 * maps). NULL when out of memory. */
json_t *eo__pools_maps(eo__pools *p, const eo__pool_facts *pi);
/* A copy of all pools by name (*out malloc'd, may be NULL when *n is 0). */
int eo__pools_list(eo__pools *p, eo__pool_facts **out, size_t *n);
/* Reads an engine pool into @p out (id from the engine's store). 0, EO_ENOTFOUND or EO_EIO. */
int eo__pool_facts_from_engine(eo_engine *e, const char *name, eo__pool_facts *out);

/* ---- writer.c: the single writer --------------------------------------------------------- */

/* EO__W_QUALITY reads the writer's in-memory pool: quality is O(players) to compute, so it is
 * computed on request (admin only) rather than after every batch. */
typedef enum {
    EO__W_ROUND,
    EO__W_SET,
    EO__W_RESET,
    EO__W_POOL_CREATE,
    EO__W_QUALITY,
    EO__W_SEASON,
    EO__W_REFIT,     /* a refit job's result (refit.c): eo_engine_refit() */
    EO__W_CONFIGURE, /* a re-tune's apply (tune.c): eo_engine_pool_configure() */
    EO__W_MM         /* a matchmaking request or the ticker's pass (mm.h) */
} eo__wkind;

struct eo__mm;
struct eo__mm_req;
struct eo__mm_ticker;

typedef struct eo__wreq eo__wreq;
struct eo__wreq {
    /* request: decoded and checked by the submitter, which owns it (the writer only reads it) */
    eo__wkind kind;
    char pool[EO_ID_MAX + 1];
    int64_t now;
    /* EO__W_ROUND posted with a bearer that is no key: that bearer, which must be the token of
     * the instance whose session the round names (mm_ops_instance.c); "" with a key */
    char bearer[EO__TOKEN_LEN + 1];
    union {
        const eo_round_request *round; /* EO__W_ROUND */
        struct {                       /* EO__W_SET, EO__W_RESET */
            char player[EO_ID_MAX + 1];
            double rating, sigma;      /* set: the mean, the deviation (< 0: kept) */
        } edit;
        const eo_pool_config *create;  /* EO__W_POOL_CREATE (the pool's name in pool) */
        struct {                       /* EO__W_SEASON */
            char name[EO_ID_MAX + 1];  /* the season that ends */
            double f, s;               /* the pull toward the start value; the deviation added
                                          (< 0: the default) */
        } season;
        const eo_pool_config *configure; /* EO__W_CONFIGURE: the new configuration */
        struct {                       /* EO__W_REFIT (refit.c) */
            const eo_refit_value *v;   /* the fitted states (the job's), n of them */
            size_t n;
            int64_t upto;              /* the last log seq the fit read */
        } refit;
        const struct eo__mm_req *mm; /* EO__W_MM */
    } u;
    /* answer, final when done() runs */
    int status;      /* HTTP status */
    char *resp;      /* malloc'd JSON body, the submitter frees it */
    eo_engine_error err; /* when status >= 400 */
    int replayed;
    /* called by the writer thread once the answer is final; the request may be freed by the
     * submitter as soon as this returns or from another thread after it starts */
    void (*done)(eo__wreq *w, void *ctx);
    void *done_ctx;
    eo__wreq *next; /* queue link, the writer's */
};

typedef struct eo__writer eo__writer;

/* Takes over @p e (closed by eo__writer_stop, also on failure); applies matchmaking requests
 * to @p mm (over the same engine; the caller frees it after eo__writer_stop()). */
int eo__writer_start(eo_engine *e, struct eo__mm *mm, eo__pools *pools, eo__metrics *m,
                     const eo__logger *lg, size_t queue_max, size_t batch_max, eo__writer **out);
/* Queues @p w. 0, or EO_EBUSY when the queue is full or the writer stops (nothing queued). */
int eo__writer_submit(eo__writer *wr, eo__wreq *w);
/* True while the writer thread runs and accepts work. */
bool eo__writer_running(eo__writer *wr);
/* Whether the store takes writes as the writer last saw it: false, with the reason in @p why
 * (capacity @p cap), after a failed commit or when the file opened read-only, until a commit
 * or the writer's own probe (one a second while idle) succeeds. */
bool eo__writer_healthy(eo__writer *wr, char *why, size_t cap);
/* Answers everything queued, commits, joins the thread and closes the engine. Returns 0, or
 * the code of a failed commit of the final drain (the batches taken after the stop began; an
 * earlier failed commit was answered and recovered from). NULL: 0. */
int eo__writer_stop(eo__writer *wr);

/* ---- compute.c: the bounded pool for heavy requests (docs/SERVICE.md "Heavy requests") -- */

typedef struct eo__job eo__job;
struct eo__job {
    void (*run)(eo__job *j);  /* the work, on a compute thread */
    void (*done)(eo__job *j); /* then, on the same thread; the job may be freed once it starts */
    eo__job *next;            /* the queue's */
};

typedef struct eo__compute eo__compute;

/* Starts @p threads threads (at a lower priority) with room for @p queue_max waiting jobs.
 * 0, EO_EINVAL (a zero) or EO_ENOMEM. */
int eo__compute_start(unsigned threads, size_t queue_max, eo__metrics *m, eo__compute **out);
/* Queues @p j. 0, or EO_EBUSY (nothing queued; counted) when the queue is full or stopping. */
int eo__compute_submit(eo__compute *c, eo__job *j);
/* Runs every job queued, then joins the threads and frees. NULL is a no-op. */
void eo__compute_stop(eo__compute *c);

/* ---- jobs.c: background jobs of a pool (refits, tunes), one per pool at a time ---------- */

enum { EO__JOB_RUNNING, EO__JOB_DONE, EO__JOB_FAILED };

/* The first member of every job: what the table reads. */
typedef struct eo__job_head {
    char pool[EO_ID_MAX + 1];
    int64_t id;
    pthread_t th;
    bool started;
    int state;  /* EO__JOB_*, under the table's mu */
    double t0;  /* when it started (eo__mono_s()) */
} eo__job_head;

typedef struct eo__jobs {
    bool ok;               /* initialised */
    pthread_mutex_t mu;    /* guards everything below and every job's state */
    pthread_cond_t cv;     /* the jobs' own waits (a refit's writer answer, the tune schedule's
                            * sleep); broadcast by eo__jobs_stop() */
    eo__job_head **jobs;   /* the last job of each pool that had one */
    size_t n, cap;
    int64_t next_id;
    atomic_bool stop;      /* the service stops: no new job, running ones end early */
} eo__jobs;

/* Seconds on the monotonic clock. */
double eo__mono_s(void);
int eo__jobs_init(eo__jobs *t);
/* Starts job @p j (its pool set; state and t0 set here) on its own thread running @p main(j):
 * at most @p max running at once (else EO_ELIMIT), one per pool (EO_EEXIST), none once stopping
 * (EO_EBUSY); the pool's previous job is joined and freed (free()). 0 with j->id set, or
 * EO_ENOMEM; on failure @p j is still the caller's. */
int eo__jobs_start(eo__jobs *t, eo__job_head *j, size_t max, void *(*main)(void *));
/* The last job of @p pool, or NULL; call under t->mu. */
eo__job_head *eo__jobs_find(eo__jobs *t, const char *pool);
/* Reads pool @p pool_id's log in the store @p db through a read-only handle of the caller's
 * thread, inside one read transaction: the number of its rounds into *rounds (NULL: not
 * counted), then @p fn on every entry in order. 0, or fn's code or the store's, with @p error
 * (capacity @p cap, "" on entry) set unless fn set it ("the service is stopping" for
 * EO_EBUSY). */
int eo__jobs_read_log(const char *db, int64_t pool_id, int64_t *rounds,
                      int (*fn)(void *ctx, const eo_log_entry *e), void *ctx, char *error,
                      size_t cap);
/* Tells the running jobs to stop (t->stop, t->cv) and joins them. */
void eo__jobs_stop(eo__jobs *t);
/* Stops (if not yet) and frees every job. A zeroed, never initialised table is a no-op. */
void eo__jobs_destroy(eo__jobs *t);

/* ---- refit.c: background refits ---------------------------------------------------------- */

/* Starts a refit of pool @p pi with @p fc on its own thread. 0 with *id, EO_EEXIST (a job of
 * the pool runs: 409), EO_ELIMIT (refit_max jobs run: 503), EO_EBUSY (the service stops) or
 * EO_ENOMEM. Stop the table (eo__jobs_stop()) while the writer still runs. */
int eo__refit_start(struct eo_service *svc, const eo__pool_facts *pi, const eo_fit_config *fc,
                    int64_t *id);
/* The last refit of pool @p pool as JSON (a new reference), or NULL when it never had one. */
json_t *eo__refit_status(eo__jobs *r, const char *pool);

/* ---- tune.c: background tunes of a pool, and their apply (docs/SERVICE.md "Tuning a pool") */

typedef struct eo__tunes {
    eo__jobs jobs;      /* one tune running at a time in the service */
    pthread_t sched;    /* the schedule's thread (serve --tune-every) */
    bool sched_started;
} eo__tunes;

int eo__tunes_init(eo__tunes *t);
/* Starts the schedule's thread when svc->cfg.tune_every > 0: every pool is tuned in the
 * background once per period (one job at a time in the service); nothing is applied. 0 or
 * EO_ENOMEM. */
int eo__tunes_schedule(struct eo_service *svc);
/* Tells the jobs and the schedule to stop and joins them. */
void eo__tunes_stop(eo__tunes *t);
/* Starts a tune of pool @p pi with @p req on its own thread. 0 with *id, EO_EEXIST (a job of
 * this pool runs: 409), EO_ELIMIT (another pool's job runs; one at a time: 503), EO_EBUSY
 * (the service stops) or EO_ENOMEM. */
int eo__tune_start(struct eo_service *svc, const eo__pool_facts *pi, const eo_tune_request *req,
                   int64_t *id);
/* The last job of pool @p pi as JSON (eo_tune_job_to_json(), "applied" and "stale" against
 * pi->cfg), a new reference; NULL when it never had one. */
json_t *eo__tune_status(eo__tunes *t, const eo__pool_facts *pi);
/* What a finished job of a pool found, for its apply. */
typedef struct eo__tune_outcome {
    int64_t id;
    bool chose_best;       /* the search's answer beat the gate */
    eo_pool_config start;  /* the pool's configuration when the job started */
    eo_pool_config chosen; /* the answer (done jobs) */
} eo__tune_outcome;
/* The last job of @p pool into @p out. 0 (done), EO_ENOTFOUND (none), EO_ECONFLICT (@p job > 0
 * is not its id), EO_EBUSY (running) or EO_EINVAL (failed). */
int eo__tune_answer(eo__tunes *t, const char *pool, int64_t job, eo__tune_outcome *out);
/* Whether two configurations have the same model and every parameter equal. */
bool eo__pool_config_same(const eo_pool_config *a, const eo_pool_config *b);
/* Stops (if not yet) and frees. A zeroed, never initialised table is a no-op. */
void eo__tunes_destroy(eo__tunes *t);
/* ---- service state (service.c) shared by http.c and routes.c ------------------------------ */

struct eo_service {
    char *db;
    char *listen;
    eo_service_config cfg;
    eo__logger log;
    eo__auth auth;
    eo__metrics metrics;
    eo__pools pools;
    eo__writer *writer;
    eo__compute *compute;
    eo__guard *guard;
    eo__jobs refits;
    eo__tunes tunes;
    struct eo__mm *mm;            /* matchmaking (mm.h), the writer's */
    struct eo__mm_ticker *ticker; /* queues the periodic passes */
    struct MHD_Daemon *mhd;
    uint16_t port;
    atomic_bool draining; /* set first by eo__http_stop: requests that begin later get no update */
    atomic_long inflight; /* requests between their first callback and their completion */
    atomic_bool closing;  /* set by eo__http_stop once the drain ended: nothing parks any more */
    atomic_long parked;   /* connections suspended for the writer or the compute pool whose
                           * resume is not yet asked for; MHD_stop_daemon aborts the process if
                           * one is left */
    atomic_size_t body_held; /* request body bytes held in memory, all requests (body_budget) */
    pthread_key_t reader_key; /* per HTTP thread read-only eo_store* */
    bool reader_key_ok;
    pthread_key_t req_key;    /* per HTTP thread cache of request blocks (http.c) */
    bool req_key_ok;
    pthread_key_t split_key;  /* per HTTP thread eo_split_ws*, created on its first split
                               * (routes.c), freed when the thread ends */
    bool split_key_ok;
};

/* The calling thread's read-only store handle (opened on first use). NULL on failure. */
eo_store *eo__reader(struct eo_service *svc);
/* Destructor of req_key values (http.c). */
void eo__req_cache_free(void *cache);

/* ---- http.c / routes.c ------------------------------------------------------------------ */

/* What a handler answers. body is malloc'd (NULL for none); ctype NULL means JSON. */
typedef struct eo__answer {
    int status;
    char *body;
    size_t len;
    const char *ctype;
    const char *allow;       /* Allow header for 405 */
    const char *retry_after; /* Retry-After header for 503 */
    const char *www_auth;    /* WWW-Authenticate header for 401 */
    const char *cache;       /* Cache-Control header, or NULL */
    const char *etag;        /* ETag header, or NULL */
    bool page;               /* a page or its file: the pages' security headers (pages.c) */
} eo__answer;

/* Fills @p a with the JSON error body. field may be NULL or "". */
void eo__answer_error(eo__answer *a, int status, const char *code, const char *message,
                      const char *field);
/* Takes a JSON value (reference stolen) and dumps it as the body. */
void eo__answer_json(eo__answer *a, int status, json_t *v);

/* A path parameter: the name in its route's template ({pool}: "pool") and its decoded value. */
typedef struct eo__param {
    char name[16];
    char value[EO_ID_MAX + 1];
} eo__param;

#define EO__PARAMS_MAX 3

/* Per-request routing result. */
typedef struct eo__match {
    int route;       /* index in eo__routes[], or -1 */
    bool path_known; /* the path matched a route (405 when the method did not) */
    char allow[64];  /* the methods of the path, for Allow (all of them when route is -1) */
    eo__param param[EO__PARAMS_MAX];
    size_t nparam;
    int seg_error; /* a path parameter failed to decode or eo_id_check: 0 or an EO_E* code */
    const char *seg_field; /* its name (in param[]) */
} eo__match;

/* Matches the raw (still percent-encoded) path and method against the route table. */
void eo__route_match(const char *method, const char *raw_path, eo__match *m);

/* The decoded value of path parameter @p name of a matched route, or "" when it has none. */
const char *eo__path_param(const eo__match *m, const char *name);

/* Percent-decodes @p in (n bytes) into @p out (capacity cap, NUL-terminated). 0, EO_EPARSE or
 * EO_ELIMIT. '+' is kept as is (paths, not forms). */
int eo__pct_decode(const char *in, size_t n, char *out, size_t cap, size_t *outlen);

/* The state of one request that routes.c needs (http.c owns the rest). */
typedef struct eo__call eo__call;
struct eo__call {
    struct eo_service *svc;
    const eo__match *m;
    const char *method;
    const char *authz; /* Authorization header or NULL */
    eo__role role;     /* the key's role (EO__ROLE_NONE: none, on a route that needs none or
                          on a public dashboard's read; a bearer that is no key, on a route
                          that takes a client's token) */
    const char *ctype; /* Content-Type header or NULL */
    void *conn;        /* libmicrohttpd's connection, for eo__call_arg() and eo__call_header() */
    const char *body;
    size_t body_len;
    json_t *json;     /* parsed body kept alive while the writer works */
    eo__wreq w;       /* the writer request, when one was submitted */
    /* A compute job (EO__RUN_COMPUTE): compute(c) runs on a compute thread and leaves the
     * answer in out; work is its state, freed with work_free (when not NULL) once the request
     * completes. */
    void (*compute)(eo__call *c);
    void *work;
    void (*work_free)(void *work);
    eo__answer out;
};

/* What a route's body is. */
typedef enum {
    EO__BODY_NONE,     /* none is read */
    EO__BODY_JSON,     /* a JSON document (Content-Type: application/json, else 415) */
    EO__BODY_OPTIONAL  /* none, or a JSON document (the handler checks its type) */
} eo__body;

/* What eo__route_run() made of a request. */
typedef enum {
    EO__RUN_DONE,    /* the answer is in @p a */
    EO__RUN_WRITER,  /* c->w is ready for eo__writer_submit(): the answer comes through
                        eo__route_finish(), or eo__route_busy() when the writer refuses it */
    EO__RUN_COMPUTE  /* c->compute is ready for the compute pool: the answer comes in c->out,
                        or eo__route_busy() when the pool refuses it */
} eo__run;

/* A route's handler: the answer in @p a, or a writer request or compute job prepared. */
typedef eo__run (*eo__handler)(eo__call *c, eo__answer *a);

/* One row of the route table: adding a route is one row and one handler (routes.c). */
typedef struct eo__route {
    const char *method; /* GET, POST, PUT, DELETE (HEAD is answered wherever GET is) */
    const char *path;   /* template: literal segments and {name} parameters, each an id */
    eo__role role;      /* the key it needs */
    eo__body body;
    eo__handler handler;
} eo__route;

extern const eo__route eo__routes[];
extern const size_t eo__route_count;

/* What can be decided from the request line and headers alone, before any body is read: 404,
 * 405, 401, 403, a bad path segment, 415. 1 with the answer in @p a, else 0. */
int eo__route_check(eo__call *c, eo__answer *a);
/* Runs a request whose body arrived (eo__route_check() passed): a synchronous handler, or the
 * preparation of a writer request or a compute job. */
eo__run eo__route_run(eo__call *c, eo__answer *a);
/* The 503 answer when the writer queue or the compute queue is full, or the service stops. */
void eo__route_busy(eo__call *c, eo__answer *a);
/* Turns a finished writer request into the answer. */
void eo__route_finish(eo__call *c, eo__answer *a);

/* A query argument (still percent-encoded) or a request header of @p c, NULL when absent. */
const char *eo__call_arg(const eo__call *c, const char *name);
const char *eo__call_header(const eo__call *c, const char *name);

/* The pool of the path's {pool} into @p pi: 0, or -1 with the answer (404) in @p a. */
int eo__need_pool(eo__call *c, eo__pool_facts *pi, eo__answer *a);
/* The view a player row holds, with the stale flag for @p now (0: not asked). */
void eo__view_of_row(const eo__pool_facts *pi, const eo_player_row *row, int64_t now,
                     eo_rating_view *v);

/* ---- reads.c: the dashboard's read APIs (docs/SERVICE.md "Dashboard and reads") ---------- */

/* Query argument @p name of @p c as an integer in [lo, hi], or @p def when absent. 0, or -1
 * with the answer (400 naming the argument) in @p a. */
int eo__arg_int(const eo__call *c, const char *name, int64_t def, int64_t lo, int64_t hi,
                int64_t *out, eo__answer *a);
/* Query argument @p name as text: percent-decoded ('+' is a space), then an id's rule
 * (eo_id_check()) into @p out (EO_ID_MAX + 1 bytes); *has false when absent. 0, or -1 with the
 * answer (400) in @p a. */
int eo__arg_text(const eo__call *c, const char *name, char *out, bool *has, eo__answer *a);
/* The value checks of eo__arg_int() and eo__arg_text() on a raw value (NULL: absent): 0, or
 * EO_EINVAL with what is wrong in @p msg. The fuzz target's way in. */
int eo__arg_int_parse(const char *raw, int64_t def, int64_t lo, int64_t hi, int64_t *out,
                      char *msg, size_t cap);
int eo__arg_text_parse(const char *raw, char *out, bool *has, char *msg, size_t cap);

eo__run eo__h_dashboard(eo__call *c, eo__answer *a);
eo__run eo__h_standings(eo__call *c, eo__answer *a);
eo__run eo__h_history(eo__call *c, eo__answer *a);
eo__run eo__h_rounds_list(eo__call *c, eo__answer *a);
eo__run eo__h_player_rounds(eo__call *c, eo__answer *a);
eo__run eo__h_round_get(eo__call *c, eo__answer *a);
eo__run eo__h_health(eo__call *c, eo__answer *a);

/* ---- pages.c: the dashboard's pages and their files, built into the program ------------ */

/* A file of web/, built into the program (cmake/embed_web.cmake writes the table). */
typedef struct eo__web_file {
    const char *name;          /* "app.js" */
    const char *ctype;
    const unsigned char *data;
    size_t len;
    const char *etag;          /* quoted */
} eo__web_file;

extern const eo__web_file eo__web_files[];
extern const size_t eo__web_file_count;

/* Every page path answers web/index.html, whose script reads the path; /static/{file} the
 * other files. Both 404 with --dashboard off. */
eo__run eo__h_page(eo__call *c, eo__answer *a);
eo__run eo__h_static(eo__call *c, eo__answer *a);

/* http.c */
int eo__http_start(struct eo_service *svc, char *err, size_t errlen);
/* Stops accepting, waits for in-flight requests (bounded), stops the daemon. */
void eo__http_stop(struct eo_service *svc);

/* ---- handlers in their own files, and the helpers routes.c lends them ------------------- */

/* tune.c: POST and GET /v1/pools/{pool}/tune, POST /v1/pools/{pool}/tune/apply. */
eo__run eo__tune_post(eo__call *c, eo__answer *a);
eo__run eo__tune_get(eo__call *c, eo__answer *a);
eo__run eo__tune_apply(eo__call *c, eo__answer *a);

/* An optional JSON body into c->json (NULL when there is none): 0, or -1 with 415 or 400 in
 * @p a. */
int eo__route_optional_body(eo__call *c, eo__answer *a);

#endif
