/* Matchmaking inside the service (docs/MATCHMAKING.md): queues, tickets, game-server instances
 * and sessions. The writer thread owns every live object in memory and changes them only
 * through eo__mm_apply(), inside its batch's transaction, writing each change to the store in
 * the same transaction: an answer leaves only after the commit that stored it, and a failed
 * commit reloads everything from the store (eo__mm_reload()). The periodic pass of each queue
 * runs on the writer too, queued by the ticker thread (eo__mm_ticker_start()), so a cancel and
 * a pass are ordered by the writer's queue: a ticket ends cancelled or assigned, never both.
 * The HTTP threads read the queues' configurations the writer publishes (eo__mm_queue_get())
 * and poll tickets from the store (their documents). Files: mm_map.c (a string-keyed table),
 * mm_state.c (objects, documents, publishing), mm_load.c (loading from the store), mm_ops.c
 * (queue and ticket requests), mm_ops_instance.c (instance and session requests), mm_pass.c
 * (the pass, allocation, ready checks, expiry, heartbeats), mm_tick.c (the ticker),
 * mm_metrics.c (the figures in /metrics and the queues' documents), mm_window.c (a queue's
 * recent matches), mm_routes.c (handlers). */
#ifndef EO_SERVICE_MM_H
#define EO_SERVICE_MM_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_engine.h"
#include "evenodds/eo_store.h"
#include "service/service.h"

/* How the coordinator's documents are written: compact, reals with 15 significant digits (a
 * request's 0.1 reads back as 0.1, not 0.10000000000000001). */
#define EO__MM_JSON (JSON_COMPACT | JSON_REAL_PRECISION(15))

/* Hex characters of a ticket or instance token, and of a join secret (16 random bytes each). */
#define EO__MM_TOKEN_LEN EO__TOKEN_LEN

/* ---- mm_map.c: a table from strings to pointers, with removal ------------------------------ */

typedef struct eo__smap eo__smap;

/* An empty table whose hashes are seeded with @p seed (keys come from clients). NULL: no memory. */
eo__smap *eo__smap_new(uint64_t seed);
/* Frees the table (not the values). NULL is a no-op. */
void eo__smap_free(eo__smap *m);
/* The value of @p key, or NULL. */
void *eo__smap_get(const eo__smap *m, const char *key);
/* Sets @p key (copied) to @p val (not NULL), replacing a previous value. 0 or EO_ENOMEM. */
int eo__smap_put(eo__smap *m, const char *key, void *val);
/* Removes @p key (absent: nothing). */
void eo__smap_del(eo__smap *m, const char *key);
size_t eo__smap_size(const eo__smap *m);
/* Calls @p fn for every entry until it returns non-zero (returned); @p fn must not change @p m. */
int eo__smap_each(const eo__smap *m, int (*fn)(void *ctx, const char *key, void *val), void *ctx);

/* ---- the matchmaking state ----------------------------------------------------------------- */

typedef struct eo__mm eo__mm;

/* What a request asks (one per route). */
typedef enum {
    EO__MM_QUEUE_CREATE,
    EO__MM_QUEUE_PATCH,
    EO__MM_QUEUE_DELETE,
    EO__MM_QUEUE_GET,
    EO__MM_QUEUE_LIST,
    EO__MM_TICKET_CREATE,
    EO__MM_TICKET_CANCEL,
    EO__MM_TICKET_READY,
    EO__MM_INSTANCE_REGISTER,
    EO__MM_INSTANCE_HEARTBEAT,
    EO__MM_INSTANCE_GET,
    EO__MM_INSTANCE_DELETE,
    EO__MM_SESSION_GET,
    EO__MM_SESSION_BACKFILL,
    EO__MM_SESSION_CLOSE,
    EO__MM_TICK /* the ticker's: the passes that are due, expiry, heartbeats */
} eo__mm_op;

/* Who asks: a key's role, or a bearer token that the writer compares with the object's. */
typedef enum { EO__MM_BY_SERVER, EO__MM_BY_ADMIN, EO__MM_BY_TOKEN } eo__mm_caller;

/* A decoded request for the writer; the submitter owns it and what it points to. */
typedef struct eo__mm_req {
    eo__mm_op op;
    eo__mm_caller by;
    char token[EO__MM_TOKEN_LEN + 1]; /* by a token: the bearer (longer ones never match) */
    char name[EO_ID_MAX + 1];         /* the path's queue, ticket, instance or session */
    const json_t *body;               /* queue change: the request object */
    union {
        const eo_queue_config *queue;        /* create: decoded against the pool's defaults */
        const eo_ticket_request *ticket;     /* ticket create (decoded against the queue) */
        const eo_instance_request *instance; /* register */
        eo_backfill_request backfill;
        eo_ready_request ready;
    } u;
    const char *ticket_text; /* ticket create: eo_ticket_request_text() of u.ticket */
} eo__mm_req;

/* Settings of the whole coordinator (serve's options). */
typedef struct eo__mm_config {
    int64_t heartbeat_ms; /* an instance silent this long is drained (its sessions kept) */
    int64_t grace_ms;     /* then lost, its sessions with it, when silent this much longer */
    int64_t keep_ms;      /* finished tickets and sessions stay readable this long */
} eo__mm_config;

/* Loads the live objects from @p st (the writer's store; a transaction of its own): matches
 * that waited for a ready check or an instance go back to their queue, instances get a whole
 * heartbeat timeout from now. 0, EO_EIO or EO_ENOMEM with a message in @p err. */
int eo__mm_open(const eo__mm_config *cfg, eo_engine *e, const eo__logger *lg, char *err,
                size_t errlen, eo__mm **out);
/* Frees everything. NULL is a no-op. */
void eo__mm_close(eo__mm *mm);
/* Drops the memory state and loads it again from the store as committed (after a failed commit,
 * or inside the transaction after a rollback to a savepoint). 0 or a code (then the state is
 * empty and eo__mm_broken() says so). Writer only. NULL: 0. */
int eo__mm_reload(eo__mm *mm);
/* Whether the last reload failed (the service then answers every matchmaking request 500). */
bool eo__mm_broken(const eo__mm *mm);

/* Runs @p q on the writer inside its open transaction (its own savepoint): *status, the answer
 * text in *resp (malloc'd) or the failure in @p err. @p now_ms the writer's clock. */
void eo__mm_apply(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status, char **resp,
                  eo_engine_error *err);
/* After a commit: publishes the queues the batch changed to the HTTP threads. Writer only.
 * NULL is a no-op. */
void eo__mm_publish(eo__mm *mm);
/* When the next pass (or heartbeat check) is due, Unix ms; any thread. */
int64_t eo__mm_next_due(eo__mm *mm);

/* A copy of queue @p name's configuration as last published (HTTP threads). 0 or
 * EO_ENOTFOUND. */
int eo__mm_queue_get(eo__mm *mm, const char *name, eo_queue_config *out);

/* The wall clock in Unix ms. */
int64_t eo__mm_now_ms(void);

/* ---- internals shared by the mm_*.c files ---------------------------------------------------- */

typedef struct mm_queue mm_queue;
typedef struct mm_ticket mm_ticket;
typedef struct mm_match mm_match;
typedef struct mm_instance mm_instance;
typedef struct mm_session mm_session;

/* Ticket states while in memory; the finished ones (cancelled, expired, assigned) are only in
 * the store. */
enum { MM_T_QUEUED, MM_T_MATCHED };
/* Instance states: live; draining (asked to, or silent: no new session or backfill); lost. */
enum { MM_I_LIVE, MM_I_DRAINING, MM_I_LOST };

struct mm_ticket {
    char id[EO_ID_MAX + 1];
    char token[EO__MM_TOKEN_LEN + 1];
    mm_queue *q;
    int state;
    int64_t created_ms;
    uint64_t key; /* arrival order, for the matcher's ties */
    size_t n;     /* players */
    char (*players)[EO_ID_MAX + 1];
    eo_match_player *mp; /* n, their latency pointing into lat */
    double *lat;         /* n * the queue's regions */
    char *request;       /* canonical text: what a repeat with the same id is compared with */
    mm_match *match;     /* MM_T_MATCHED */
    size_t pos;          /* its slot in the queue's waiting list while queued */
};

/* A formed match waiting for its ready check or an instance. */
struct mm_match {
    char id[EO__MM_TOKEN_LEN + 2];
    mm_queue *q;
    mm_ticket **tickets;
    uint8_t *team; /* per ticket */
    size_t nt;
    size_t nseats;
    bool *accepted;      /* per seat, in ticket order then player order */
    int64_t deadline_ms; /* the ready check's; 0: none pending */
    int map, region, team_size;
    double p_a, quality;
    int64_t formed_ms;
    mm_match *next; /* the queue's pending list */
};

/* Upper bounds (seconds) of the wait histogram's buckets in /metrics; the last is +Inf. */
#define EO__MM_WAIT_BOUNDS {1, 2, 5, 10, 20, 30, 45, 60, 90, 120, 180, 300, 600}
#define EO__MM_WAIT_BUCKETS 14

/* How a ticket ended, for the figures (a metric's label). */
enum { MM_END_ASSIGNED, MM_END_CANCELLED, MM_END_EXPIRED, MM_END_COUNT };
/* What became of a match, for the figures. */
enum { MM_MATCH_FORMED, MM_MATCH_ASSIGNED, MM_MATCH_DISSOLVED, MM_MATCH_COUNT };

/* ---- mm_window.c: a queue's recent matches (docs/MATCHMAKING.md "Queue figures") ---------- */

/* How many of a queue's last started matches its figures cover. */
#define EO__MM_WINDOW 1000

/* A match that started (was given an instance): what its figures need. */
typedef struct eo__mm_wmatch {
    int64_t formed_ms;
    double p_a, quality;
    int8_t below; /* quality under the queue's first quality_min: 1, 0; -1 not a Gaussian model */
    uint32_t nt;  /* its tickets, whose waits follow the previous match's */
} eo__mm_wmatch;

/* The last EO__MM_WINDOW started matches, oldest first, and their tickets' waits (seconds from
 * the ticket's creation to its match's formation) in the same order: two rings. */
typedef struct eo__mm_window {
    eo__mm_wmatch *m; /* EO__MM_WINDOW slots from the first add */
    size_t hm, nm;    /* the oldest's slot, how many */
    double *w;
    size_t hw, nw, capw;
} eo__mm_window;

/* Matches a batch adds before its commit, in order (writer only). */
typedef struct eo__mm_stage {
    eo__mm_wmatch *m;
    size_t nm, capm;
    double *w;
    size_t nw, capw;
} eo__mm_stage;

/* The window's figures (NaN where nothing was counted). */
typedef struct eo__mm_summary {
    size_t matches, tickets;
    int64_t since_ms; /* formation of the window's oldest match (0: none) */
    double wait_p50, wait_p95, wait_max, wait_mean;
    double quality_mean, quality_below, p_dev_mean;
} eo__mm_summary;

/* Appends match @p m with its @p waits (m->nt). 0 or EO_ENOMEM (nothing added). */
int eo__mm_stage_add(eo__mm_stage *s, const eo__mm_wmatch *m, const double *waits);
void eo__mm_stage_free(eo__mm_stage *s);
/* Adds match @p m with its @p waits, the oldest match and its waits leaving a full window.
 * 0 or EO_ENOMEM (then the window may have lost its oldest match, nothing else). */
int eo__mm_window_add(eo__mm_window *w, const eo__mm_wmatch *m, const double *waits);
void eo__mm_window_free(eo__mm_window *w);
/* Copies the window's waits, oldest first, to @p out (room for w->nw); returns how many. */
size_t eo__mm_window_waits(const eo__mm_window *w, double *out);
/* The nearest-rank quantile @p p in (0, 1] of @p sorted (ascending): the value at rank
 * ceil(p·n), the first for smaller p; NaN when @p n is 0. */
double eo__quantile(const double *sorted, size_t n, double p);
/* Fills the match figures of @p s from @p w (the wait figures zero). */
void eo__mm_window_matches(const eo__mm_window *w, eo__mm_summary *s);
/* Sorts @p waits and fills the wait figures of @p s (p50, p95, max, mean, tickets). */
void eo__mm_summary_waits(double *waits, size_t n, eo__mm_summary *s);

/* A queue's figures for /metrics and its document (mm_metrics.c), kept by name for the life of
 * the process (a queue made again with a deleted one's name goes on counting). Counters are
 * counted by the writer as the events happen (the n_ fields) and published after the commit
 * that stored them (the atomics, which the HTTP threads read); a failed commit drops them. */
typedef struct eo__mm_qstats {
    char queue[EO_ID_MAX + 1];
    char label[2 * EO_ID_MAX + 1]; /* the name as a label value (" and \ escaped) */
    atomic_bool shown;             /* the queue exists */
    atomic_uint_fast64_t created, ended[MM_END_COUNT], matches[MM_MATCH_COUNT];
    /* gauges at the last commit: tickets queued and matched; instances live and draining */
    atomic_uint_fast64_t waiting[2], instances[2];
    eo__hist pass; /* how long its passes take (expiry, ready checks, matcher, allocation) */
    /* its oldest queued ticket's creation at the last commit (0: none) */
    atomic_int_fast64_t oldest_ms;
    /* waits of the started matches' tickets, seconds, by EO__MM_WAIT_BOUNDS (non-cumulative) */
    atomic_uint_fast64_t wait_bucket[EO__MM_WAIT_BUCKETS], wait_count, wait_sum_ms;
    eo__mm_window win;   /* the recent started matches as committed (under the state's lock) */
    eo__mm_stage stage;  /* writer only: started since the last commit */
    size_t stage_mm, stage_mw; /* the stage's size before the request now applied */
    /* writer only: counted since the last commit (n), and as they were before the request now
     * applied (m: n goes back to it when the request is undone) */
    struct {
        uint64_t created, ended[MM_END_COUNT], matches[MM_MATCH_COUNT];
    } n, m;
    uint64_t w_live, w_draining;
    bool w_shown;
} eo__mm_qstats;

struct mm_queue {
    eo_queue_config cfg;
    eo__mm_qstats *st;
    size_t nqueued;   /* tickets in the waiting list */
    size_t nmatched;  /* tickets in pending matches */
    mm_ticket **wait; /* waiting tickets in order of arrival; NULL slots are gone ones */
    size_t nwait, capwait;
    bool unsorted;     /* a ticket came back from a dissolved match: sort before the pass */
    size_t head;       /* wait[0 .. head) are gone slots (the oldest's search starts there) */
    eo__smap *players; /* player id -> his queued or matched ticket */
    mm_match *pending; /* matches waiting, oldest first */
    mm_match *pending_last;
    int64_t next_ms; /* the next pass */
    int64_t created_ms;
    bool changed;    /* to publish */
    bool deleted;
};

struct mm_instance {
    eo_instance_request reg;
    char token[EO__MM_TOKEN_LEN + 1];
    char *request; /* canonical registration text */
    int state;
    bool drained; /* asked to drain (DELETE): a heartbeat does not make it live again */
    bool silent;  /* missed its heartbeat: draining until one comes within the grace */
    int64_t created_ms, seen_ms;
    int64_t open; /* its open sessions */
};

/* One seat of a session: a player, his ticket and team, and his join secret. */
typedef struct mm_seat {
    char player[EO_ID_MAX + 1];
    char ticket[EO_ID_MAX + 1];
    uint8_t team;
    char secret[EO__MM_TOKEN_LEN + 1];
} mm_seat;

struct mm_session {
    char id[EO__MM_TOKEN_LEN + 2];
    mm_instance *inst;
    char queue[EO_ID_MAX + 1];
    char pool[EO_ID_MAX + 1];
    char match_id[EO__MM_TOKEN_LEN + 2];
    char map[EO_ID_MAX + 1], region[EO_ID_MAX + 1]; /* "" none */
    double p_a, quality;
    int team_size;
    int64_t formed_ms, created_ms, updated_ms;
    mm_seat *seats;
    size_t nseats, capseats;
    /* a backfill request waiting: its team (-1 none), slots left, rating and time */
    int bf_team, bf_slots;
    double bf_rating;
    int64_t bf_ms;
};

struct eo__mm {
    eo__mm_config cfg;
    eo_engine *e;
    eo_store *st; /* the engine's */
    const eo__logger *lg;
    mm_queue **queues;
    size_t nqueues, capqueues;
    eo__smap *tickets;   /* id -> live ticket */
    eo__smap *instances; /* id -> instance (live, draining or lost) */
    eo__smap *sessions;  /* id -> open session */
    uint64_t next_key;
    uint64_t seed;
    size_t backfills; /* open sessions with a backfill request (none: the passes skip them) */
    eo_match_ws *ws;  /* the passes' work space (they all run on the writer) */
    unsigned char rnd[4096]; /* kernel randomness not yet used (eo__mm_random_hex()) */
    size_t rnd_left;
    int64_t next_prune_ms;
    bool broken;
    /* what the HTTP threads read */
    pthread_rwlock_t lock;
    eo_queue_config *pub; /* published configurations, by name */
    size_t npub, cappub;
    _Atomic int64_t next_due;
    /* the figures (mm_metrics.c): per queue name, under lock for the HTTP threads */
    eo__mm_qstats **stats;
    size_t nstats, capstats;
    atomic_uint_fast64_t sessions_open;
    bool instances_changed; /* count the instances per queue at the next publish */
};

/* mm_state.c */
/* What an op returns when it refused the request (the answer in its error): it changed
 * nothing. */
#define EO__MM_REFUSED 1
/* Fills @p err with @p status, @p code, @p field (NULL: none) and the message; returns
 * EO__MM_REFUSED. */
int eo__mm_refuse(eo_engine_error *err, int status, const char *code, const char *field,
                  const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Whether @p bearer is @p token (a ticket's or instance's; "" never matches), in constant
 * time. */
bool eo__mm_bearer_is(const char *bearer, const char *token);
/* eo__mm_bearer_is() of the request's bearer. */
bool eo__mm_token_is(const eo__mm_req *q, const char *token);
/* Frees every object and starts empty indexes. 0 or EO_ENOMEM. */
int eo__mm_state_clear(eo__mm *mm);
mm_queue *eo__mm_queue(eo__mm *mm, const char *name);
/* A new queue made at @p created_ms (its stored time: a change keeps it). 0 or EO_ENOMEM. */
int eo__mm_queue_add(eo__mm *mm, const eo_queue_config *cfg, int64_t created_ms, mm_queue **out);
/* A fresh random token or secret of EO__MM_TOKEN_LEN hex characters (16 bytes of the kernel's
 * random source, read 4 KiB at a time). Writer only. */
void eo__mm_random_hex(eo__mm *mm, char *out);
/* Sets or clears (@p team -1) session @p s's backfill request, keeping mm->backfills. */
void eo__mm_set_backfill(eo__mm *mm, mm_session *s, int team);
/* A live ticket of queue @p q from its decoded request (@p request its canonical text), its
 * players rated by the pool's model at @p created_ms; in no index yet, id and token unset. */
int eo__mm_ticket_make(eo__mm *mm, mm_queue *q, const eo_ticket_request *r, const char *request,
                       int64_t created_ms, mm_ticket **out);
/* Enters a made ticket into the indexes and its queue's waiting list. 0 or EO_ENOMEM. */
int eo__mm_ticket_enter(eo__mm *mm, mm_ticket *t);
/* Makes, enters and stores a new queued ticket @p id with a fresh token. */
int eo__mm_ticket_create(eo__mm *mm, mm_queue *q, const eo_ticket_request *r, const char *request,
                         const char *id, int64_t now_ms, mm_ticket **out);
void eo__mm_match_free(mm_match *m);
/* A ticket's document written to the store (status @p status, live while queued or matched). */
int eo__mm_ticket_store(eo__mm *mm, mm_ticket *t, const char *status, const char *reason,
                        int64_t now_ms);
/* The document of a finished ticket that is no longer in memory (cancelled, expired). */
int eo__mm_ticket_finish(eo__mm *mm, mm_ticket *t, const char *status, const char *reason,
                         int64_t now_ms);
/* Writes ticket @p t's document as assigned to session @p s (its seats are in @p s), then
 * frees it (the ticket has ended). */
int eo__mm_ticket_assign(eo__mm *mm, mm_ticket *t, const mm_session *s, int64_t now_ms);
/* Removes a live ticket from its queue's indexes and frees it. */
void eo__mm_ticket_free(eo__mm *mm, mm_ticket *t);
/* Puts a queued ticket at the end of its queue's waiting list (@p back: one back from a
 * dissolved match, which the next pass puts in its place by age). 0 or EO_ENOMEM. */
int eo__mm_wait_push(mm_queue *q, mm_ticket *t, bool back);
/* Drops the gone slots of the waiting list and puts it in order (age, then key). */
void eo__mm_wait_compact(mm_queue *q);
/* Takes a ticket out of its queue's waiting list. */
void eo__mm_wait_remove(mm_queue *q, mm_ticket *t);
int eo__mm_session_store(eo__mm *mm, mm_session *s, const char *status, int64_t now_ms);
void eo__mm_session_free(mm_session *s);
/* The instance's registration with its status, drained and silent (as stored; NULL when out
 * of memory). */
json_t *eo__mm_instance_json(const mm_instance *in);
int eo__mm_instance_store(eo__mm *mm, mm_instance *in, int64_t now_ms);
const char *eo__mm_instance_state(int state);
/* The session's match as a view over @p seats (eo_codec.h). */
void eo__mm_session_view(const mm_session *s, eo_mm_seat *seats, eo_mm_match_view *mv,
                         eo_session_view *v, const char *status);
/* The queue document with its figures (waiting, matched, …, eo__mm_figures_add()). NULL when
 * out of memory. */
json_t *eo__mm_queue_json(eo__mm *mm, const mm_queue *q);

/* mm_ops_instance.c: the instance and session requests; the answer's text in *text. */
int eo__mm_instance_op(eo__mm *mm, const eo__mm_req *q, int64_t now_ms, int *status,
                       char **text, eo_engine_error *err);
/* Whether the caller may report a round of session @p session to pool @p pool (writer only;
 * docs/MATCHMAKING.md "Sessions and rounds"): @p bearer is an instance's token, or "" for a key
 * (trusted). 0 when it may, with @p if_new filled (field "session") when the round is to be
 * refused if it is new: the session is unknown (never made, or finished and pruned) or of
 * another pool. EO__MM_REFUSED with @p err: 401 for a token of no instance, 403 naming
 * "session" for another instance's. Or a store code (EO_EIO, EO_ENOMEM) with @p err. */
int eo__mm_round_session(eo__mm *mm, const char *pool, const char *session, const char *bearer,
                         eo_round_error *if_new, eo_engine_error *err);

/* mm_pass.c */
/* Every queue whose pass is due at @p now_ms (and the heartbeats, the ready checks, expiry).
 * 0 or the store's code. */
int eo__mm_tick(eo__mm *mm, int64_t now_ms);
/* Dissolves @p m: its tickets i with @p cancel[i] end cancelled with @p reason (NULL: the
 * client asked), the others go back to their queue in their place by age. 0 or a code. */
int eo__mm_dissolve(eo__mm *mm, mm_match *m, const bool *cancel, const char *reason,
                    int64_t now_ms);
/* Gives @p m an instance if one is free: its session is made, its tickets assigned and @p m
 * freed (1); 0 when none is free (it waits); or a code. */
int eo__mm_allocate(eo__mm *mm, mm_match *m, int64_t now_ms);

/* mm_metrics.c */
/* The figures of queue @p name, made on first use. NULL when out of memory. Writer only. */
eo__mm_qstats *eo__mm_stats(eo__mm *mm, const char *name);
/* Publishes the counters counted since the last commit and the gauges: after a commit (the
 * writer), and at start. NULL is a no-op. */
void eo__mm_stats_publish(eo__mm *mm);
/* Forgets what was counted since the last commit (it did not happen: a failed commit). */
void eo__mm_stats_drop(eo__mm *mm);
/* Before a request: marks the counts; after it failed: back to the marks. */
void eo__mm_stats_mark(eo__mm *mm);
void eo__mm_stats_undo(eo__mm *mm);
/* Counts match @p m as started (given an instance) in its queue's recent figures, its tickets'
 * waits to @p m's formation; published with the commit. 0 or EO_ENOMEM. Writer only. */
int eo__mm_stats_started(eo__mm *mm, const mm_match *m);
/* Adds to a queue's "figures" object @p f (docs/MATCHMAKING.md "Queue figures") what was
 * published at the last commit: matches formed and dissolved, the oldest queued ticket's wait
 * at @p now_ms and the recent started matches' figures. 0 or EO_ENOMEM. Any thread that does
 * not hold the state's lock. */
int eo__mm_figures_add(eo__mm *mm, eo__mm_qstats *st, int64_t now_ms, json_t *f);
/* GET /v1/pools/{pool}/queues: the pool's queues (name, team size, regions) with their figures,
 * as last published. NULL when out of memory. HTTP threads. */
json_t *eo__mm_pool_queues_json(eo__mm *mm, const char *pool, int64_t now_ms);
/* Appends the matchmaking figures to a /metrics exposition (eo__metrics_render()'s @p more;
 * HTTP threads). @p mm NULL: nothing. */
void eo__mm_metrics(void *mm, struct eo__buf *t);

/* ---- mm_routes.c: the handlers of the route table's matchmaking rows --------------------- */

eo__run eo__h_queue_create(eo__call *c, eo__answer *a);
eo__run eo__h_queue_list(eo__call *c, eo__answer *a);
eo__run eo__h_queue_get(eo__call *c, eo__answer *a);
eo__run eo__h_queue_patch(eo__call *c, eo__answer *a);
eo__run eo__h_queue_delete(eo__call *c, eo__answer *a);
eo__run eo__h_ticket_create(eo__call *c, eo__answer *a);
eo__run eo__h_ticket_get(eo__call *c, eo__answer *a);
eo__run eo__h_ticket_delete(eo__call *c, eo__answer *a);
eo__run eo__h_ticket_ready(eo__call *c, eo__answer *a);
eo__run eo__h_instance_register(eo__call *c, eo__answer *a);
eo__run eo__h_instance_get(eo__call *c, eo__answer *a);
eo__run eo__h_instance_delete(eo__call *c, eo__answer *a);
eo__run eo__h_instance_heartbeat(eo__call *c, eo__answer *a);
eo__run eo__h_session_get(eo__call *c, eo__answer *a);
eo__run eo__h_session_backfill(eo__call *c, eo__answer *a);
eo__run eo__h_session_close(eo__call *c, eo__answer *a);
eo__run eo__h_pool_queues(eo__call *c, eo__answer *a);

/* ---- mm_tick.c: the ticker thread ------------------------------------------------------------ */

typedef struct eo__mm_ticker eo__mm_ticker;
int eo__mm_ticker_start(struct eo_service *svc, eo__mm_ticker **out);
/* Stops the thread (while the writer still runs) and frees. NULL is a no-op. */
void eo__mm_ticker_stop(eo__mm_ticker *t);

#endif
