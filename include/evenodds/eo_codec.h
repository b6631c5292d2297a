/**
 * @file eo_codec.h
 * JSON mapping of the canonical round record, of JSONL round logs and of split requests and
 * answers (jansson). This is a parser of untrusted input: every entry point is fuzzed
 * (fuzz/) and rejects malformed input with an error that names the field (and the line, for
 * JSONL), changing nothing.
 *
 * Ownership: functions that return json_t* or char* give the caller a new reference / a
 * malloc'd string; eo_round values are owned by the caller and released with eo_round_free().
 */
#ifndef EO_CODEC_H
#define EO_CODEC_H

#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include "eo_common.h"
#include "eo_eval.h"
#include "eo_match.h"
#include "eo_round.h"
#include "eo_pool.h"
#include "eo_fit.h" /* eo_refit_values(), which makes the values of a refit record */
#include "eo_split.h"
#include "eo_balance.h"
#include "eo_model.h"
#include "eo_autobalance.h"
#include "eo_triggers.h"
#include "eo_sim.h" /* eo_truth, which a truth file is read into */
#include "eo_tune.h" /* eo_tune_result, which tune answers show */

#ifdef __cplusplus
extern "C" {
#endif

/** Flags every parse of untrusted JSON uses (duplicate keys are an error). */
#define EO_JSON_DECODE_FLAGS JSON_REJECT_DUPLICATES

/** Largest started_at / ended_at accepted: 9999-12-31T23:59:59Z in Unix seconds. */
#define EO_ROUND_TIME_MAX INT64_C(253402300799)

/** Longest line of a JSONL round log in bytes (without the newline). */
#define EO_JSONL_LINE_MAX ((size_t)1 << 20)

/**
 * Maps a parsed JSON object to @p out and validates it (eo_round_validate()). Unknown fields
 * are ignored here (they are kept by eo_round_canonical()). Types are strict: ids and the
 * optional server, map, mode and party are strings checked like ids (eo_id_check()); "time",
 * "joined", "left", "playtime" numbers (integer or real); "commander" true/false; started_at
 * and ended_at integers in [0, EO_ROUND_TIME_MAX]; null is not accepted for any field. @p out
 * need not be initialised. On failure returns EO_EINVAL, fills @p err (when not NULL; field
 * path such as "A[3].time", "" for the top level, and message) and leaves @p out zeroed.
 */
int eo_round_from_json(const json_t *obj, eo_round *out, eo_round_error *err);

/**
 * Parses one round from text (duplicate keys rejected, exactly one JSON value, NUL bytes
 * rejected) and maps it. Syntax errors give EO_EPARSE with err->field "" and err->message
 * "invalid JSON at column C: <jansson's text>" ("at line L, column C" past the first line).
 * Semantic errors are those of eo_round_from_json() (EO_EINVAL).
 */
int eo_round_from_text(const char *text, size_t len, eo_round *out, eo_round_error *err);

/**
 * The JSON object of a round (members without options as plain id strings; time, joined,
 * left and playtime as reals; absent optional fields left out). For generators and tests: the
 * canonical text of a received record is made from the record as received
 * (eo_round_canonical()), not from this. Returns a new reference, or NULL when out of memory
 * or @p r is NULL.
 */
json_t *eo_round_to_json(const eo_round *r);

/**
 * The canonical text of a round record: compact JSON with keys sorted at every level, unknown
 * fields kept, reals printed with 17 significant digits (they read back to the same double),
 * strings in UTF-8 as given. Independent of key order and whitespace of the input. Two
 * requests carry "the same content" when their canonical texts are equal. *out is malloc'd
 * (release with free()). Returns 0, EO_EINVAL (@p obj is not an object) or EO_ENOMEM.
 */
int eo_round_canonical(const json_t *obj, char **out);

/**
 * Longest canonical text of a round the engine stores, in bytes: the store keeps it, `evenodds
 * export` writes it as one line and `evenodds import` reads lines of at most EO_JSONL_LINE_MAX,
 * so every stored round can be moved. The canonical text of a body is at most 5 times its
 * length (docs/ROUNDS.md "How large a stored round can be"), and the known fields of the
 * largest record take under 200 KB of it: the rest is what unknown fields may use.
 */
#define EO_ROUND_TEXT_MAX EO_JSONL_LINE_MAX

/**
 * The rules a round must pass to be logged now beyond eo_round_from_json()'s (a round logged
 * before them still folds and is answered again): its canonical text (eo_round_canonical() of
 * @p obj) is @p canon_len bytes long, at most EO_ROUND_TEXT_MAX, and every member's "name",
 * where given, is a string that passes eo_id_check() (eo_round_from_json() leaves a name that
 * does not out). Returns 0; EO_ELIMIT with @p err (may be NULL) naming the field whose
 * canonical text is the longest (a top-level field, or inside the longest member of the longer
 * team: "A[3]" or "A[3].notes") and a message with the record's length, that field's and the
 * limit; EO_EINVAL naming the first bad name ("B[2].name"), or when @p obj is not an object.
 */
int eo_round_text_check(const json_t *obj, size_t canon_len, eo_round_error *err);

/**
 * A round request decoded and checked where it arrives (the service's HTTP thread), so that the
 * writer only rates and stores it: the round, its canonical text, the matchmaking session it
 * names, and whether it may be stored if it is new (a round logged before, sent again, still
 * gets its first answer: the length cap, or the service's checks of the session, apply to new
 * rounds only). Owned: release with eo_round_request_free().
 */
typedef struct eo_round_request {
    eo_round round;          /**< decoded and validated (eo_round_from_json()) */
    char *canon;             /**< the canonical text (eo_round_canonical()), malloc'd */
    size_t canon_len;
    char *session;           /**< "session": a string checked like an id, malloc'd; NULL none */
    int text_rc;             /**< 0, or why a new round is refused (with text_err): EO_ELIMIT
                                  from eo_round_text_check(), or a refusal the caller puts here */
    eo_round_error text_err;
} eo_round_request;

/**
 * Decodes a round request object: eo_round_from_json(), eo_round_canonical(), the optional
 * "session" (a string checked like an id; it stays in the canonical text like any other field)
 * and eo_round_text_check() (kept in @p out, not returned). Returns 0; EO_EINVAL with @p err
 * (the round is invalid: the field and the message of eo_round_from_json(), or "session");
 * EO_ENOMEM. On failure @p out is zeroed.
 */
int eo_round_request_from_json(const json_t *obj, eo_round_request *out, eo_round_error *err);

/** Releases what @p q holds and zeroes it. NULL is a no-op. */
void eo_round_request_free(eo_round_request *q);

/* ---- Service answers (src/codec/answer_text.c) -------------------------------------------- */

/**
 * The answer to a rated round: {"round":id,"players":[{"id","rating","delta","expected",
 * ["k",]["mu","sigma",]"rounds","visible"},…]} for @p n members @p m (A's then B's), "k" for
 * the Elo models (@p deviation false), "mu" and "sigma" for the models with a deviation; the
 * display values as integers when @p integer. Reals with at most 9 decimals (trailing zeros
 * dropped), %.17g from 1e9 on. *out is malloc'd. Returns 0, EO_ENOMEM, or EO_EINVAL for a
 * non-finite value (no JSON can hold it).
 */
int eo_round_answer_text(const char *round_id, const eo_member_result *m, size_t n, bool integer,
                         bool deviation, char **out);

/* Answer documents (src/codec/answer_json.c): new references, NULL when out of memory. */

/** {"pool","rounds","players","visible_players","brier_all","brier_recent","balance_recent"}
 *  of eo_pool_get_quality(), null for a figure without a value yet. */
json_t *eo_quality_to_json(const char *pool, const eo_pool_quality *q);
/** {"pool","by","units","maps":[{"map","plays","a_wins","b_wins","draws","a_win_rate","bias",
 *  "applied","uncertainty"[,"size"][,"mode"]},…],"presence"} of pool @p name (configuration
 *  @p cfg) from the @p n keys @p st as eo_bias_each() gives them (sorted by map, then size
 *  bucket, then mode); "units" "mu" for the Gaussian models, else "logit" (the maps' only: π is
 *  in logits for every model). "presence" is {"rounds","pi","applied","uncertainty",
 *  "partial_share"} from the estimates @p presence and @p partial (eo_pool_presence(),
 *  eo_pool_partial(); uncertainty null before any round of unequal presence, partial_share null
 *  when @p partial is NULL), null when @p presence is NULL (the pool's presence is off). */
json_t *eo_maps_to_json(const char *name, const eo_pool_config *cfg, const eo_bias_stats *st,
                        size_t n, const eo_presence *presence, const eo_presence *partial);
/** {"season","players","at"}: a season ended. */
json_t *eo_season_answer_to_json(const char *season, int64_t players, int64_t at);
/** {"players","records","upto"}: a refit applied. */
json_t *eo_refit_answer_to_json(size_t players, size_t records, int64_t upto);
/** {"error":{"code","message"[,"field"]}}: every error body of the service; "field" only when
 *  @p field is a non-empty string. */
json_t *eo_error_to_json(const char *code, const char *message, const char *field);
/** {"status": @p status}: /healthz and /readyz. */
json_t *eo_status_to_json(const char *status);
/** {@p key: @p items} (its reference taken; NULL gives NULL): a list answer. */
json_t *eo_list_to_json(const char *key, json_t *items);
/** {"name","model","params":{…every parameter…}}: a pool. */
json_t *eo_pool_to_json(const char *name, const eo_pool_config *cfg);
/** {"name","at","players"}: an ended season in a list. */
json_t *eo_season_to_json(const char *name, int64_t at, int64_t players);
/** {"season","at","offset","standings": @p rows} (the reference taken; NULL gives NULL). */
json_t *eo_standings_to_json(const char *season, int64_t at, int64_t offset, json_t *rows);

/* ---- The dashboard's reads (src/codec/reads_json.c; docs/SERVICE.md "Dashboard and reads") -
 * A player's state there is named as lookups name it: "rating" (SynElo, Elo, hive), "mu" and
 * "sigma" (TrueSkill, Weng-Lin), "rating" and "rd" (Glicko-2), with "display" beside it. */

/** A player as a read shows him after a round (or now). */
typedef struct eo_read_member {
    const char *id;
    const char *name;  /**< last name seen, or NULL */
    eo_rating_view v;  /**< display, mu, sigma, rounds, visible (the rest unused) */
    double delta;      /**< change of the display in the round */
    double weight;     /**< share of the round he played, in [0, 1] */
    bool hidden;       /**< not visible, and the reader has no key: values shown as null */
} eo_read_member;

/** A board row: eo_rating_view_to_json()'s lookup document with "rank", "name" (null: none
 *  seen) and "last_played" (Unix seconds; null before any round). */
json_t *eo_board_row_to_json(const eo_model_ctx *m, int64_t rank, const char *id,
                             const char *name, const eo_rating_view *v, const char *division);

/** A history point: {"number","at","display","delta",state…,"rounds","visible"} of a player
 *  after round @p number played at @p at (a hidden point has null values). */
json_t *eo_history_point_to_json(const eo_model_ctx *m, int64_t number, int64_t at,
                                 const eo_read_member *p);

/** A round as reads show it. Strings NULL and times 0 when the record has none. */
typedef struct eo_round_read {
    const char *id, *map, *mode, *server;
    int64_t number;     /**< the pool's round number */
    int64_t at;         /**< when it was played */
    int64_t started_at, ended_at;
    eo_winner winner;
    double p_a;         /**< P(A wins) at its start */
    size_t n[2];        /**< members of A and of B */
} eo_round_read;

/**
 * {"round","number","at","started_at","ended_at","duration","map","mode","server","winner",
 * "p_a","A":[…],"B":[…]} (absent fields null; duration in seconds when both times are known),
 * each member {"id","name","played","display","delta",state…,"rounds","visible"} from @p mem
 * (r->n[0] + r->n[1] of them, A's first).
 */
json_t *eo_round_read_to_json(const eo_model_ctx *m, const eo_round_read *r,
                              const eo_read_member *mem);

/** A span of rounds' health (eo_eval_span_of()): {"start" (when @p with_start),"rounds",
 *  "draws","brier","logloss","accuracy","margin","stomps","rating_mean","rating_sd",
 *  "delta_mean"}, null where a figure has no rounds. */
json_t *eo_health_span_to_json(const eo_eval_sums *s, bool with_start, int64_t start);

/** The calibration of @p bins (EO_EVAL_CALIB_BINS sums, one per bin): {"ece","bins":[{"from",
 *  "to","count","mean_p","win_rate"},…]}. */
json_t *eo_calibration_to_json(const eo_eval_sums *bins);

/** A player now, for his history: the board row's document (eo_board_row_to_json(); "rank"
 *  null when @p rank is 0), with the display, the state and the division null when @p hidden. */
json_t *eo_player_read_to_json(const eo_model_ctx *m, const char *id, const char *name,
                               int64_t rank, const eo_rating_view *v, const char *division,
                               bool hidden);

/** {"pool","player": @p player,"history": @p points} (references taken; NULL gives NULL). */
json_t *eo_history_to_json(const char *pool, json_t *player, json_t *points);

/** @p doc (its reference taken; NULL gives NULL) with "pool" added. */
json_t *eo_read_doc_to_json(const char *pool, json_t *doc);

/** {"pool","bucket","since","buckets","total","calibration"} (references taken; NULL gives
 *  NULL). */
json_t *eo_health_to_json(const char *pool, const char *bucket, int64_t since, json_t *buckets,
                          json_t *total, json_t *calibration);

/** A pool as the dashboard lists it: {"name","model","players" (visible),"rounds","last_round"
 *  (Unix seconds, null before any),"divisions":[{"name","from"}],"bias"}. */
json_t *eo_dashboard_pool_to_json(const char *name, const eo_pool_config *cfg, int64_t players,
                                  int64_t rounds, int64_t last_round);

/** {"dashboard": @p mode,"pools": @p pools (reference taken; NULL gives NULL)}. */
json_t *eo_dashboard_to_json(const char *mode, json_t *pools);

/** A page of a list: {"pool",@p key: @p items (its reference taken; NULL gives NULL),
 *  "offset","limit","total" (null when < 0),"more"}. */
json_t *eo_read_page_to_json(const char *pool, const char *key, json_t *items, int64_t offset,
                             int64_t limit, int64_t total, bool more);

/** {"job","pool","state":"running"}: a refit started. */
json_t *eo_refit_started_to_json(int64_t job, const char *pool);
/** A refit job as GET …/refit shows it (the service's job table fills it). */
typedef struct eo_refit_job_view {
    int64_t id;
    const char *pool;
    enum { EO_REFIT_RUNNING, EO_REFIT_DONE, EO_REFIT_FAILED } state;
    const char *phase;          /**< running: "reading", "fitting" or "applying" */
    eo_fit_sweep_stats st;      /**< the sweeps so far (running) or in all (done) */
    uint32_t max_sweeps;
    size_t players, rounds, records;
    int64_t upto;
    double seconds;
    const char *error;          /**< failed: why */
} eo_refit_job_view;
/** {"job","pool","state", then by state: "phase","sweep","max_sweeps","change","seconds"
 *  (running; "change" null before the first sweep); "sweeps","converged","change","objective",
 *  "players","rounds","upto","records","seconds" (done); "error","seconds" (failed)}. */
json_t *eo_refit_job_to_json(const eo_refit_job_view *v);

/* ---- The refit record: a logged admin edit carrying fitted states ------------------------ */

/** Most players in one refit record. A refit of more players is logged as several records in
 *  one transaction; the cap keeps a record's JSONL line under EO_JSONL_LINE_MAX (2048 players
 *  of the longest ids, escaped, with two 17-digit numbers each, stay below 1 MiB). */
#define EO_REFIT_PLAYERS_MAX 2048

/** A refit record: the states of up to EO_REFIT_PLAYERS_MAX players, fitted from the pool's log
 *  up to log position @c upto (docs/STORE.md, "The refit record"). The values are the core's
 *  (eo_refit_value, eo_pool.h): eo_refit_values() (eo_fit.h) makes them from a fit and
 *  eo_refit_apply() (eo_pool.h) sets them in a pool; the codec only maps them. */
typedef struct eo_refit_record {
    int64_t upto;      /**< the last log seq the fit read (informational: replay ignores it) */
    size_t n;          /**< players, 1 .. EO_REFIT_PLAYERS_MAX */
    eo_refit_value *v; /**< malloc'd, owned by the record; eo_refit_free() */
} eo_refit_record;

/**
 * Maps {"players":[[id, mean] or [id, mean, sigma], …],"upto":P} to @p out (need not be
 * initialised). Strict: no other field, "upto" an integer >= 0, 1 to EO_REFIT_PLAYERS_MAX
 * players, ids per eo_id_check() and none twice, mean a finite number, sigma a finite number
 * >= 0. Whether a value is in the model's range is the applier's question (eo_model_set()).
 * Returns 0, EO_EINVAL with @p err naming the field ("players[3][1]") and @p out zeroed, or
 * EO_ENOMEM.
 */
int eo_refit_from_json(const json_t *obj, eo_refit_record *out, eo_round_error *err);

/** Parses the text of a refit record (duplicate keys rejected; EO_EPARSE for bad JSON or a NUL
 *  byte) and maps it as eo_refit_from_json(). */
int eo_refit_from_text(const char *text, size_t len, eo_refit_record *out, eo_round_error *err);

/**
 * The text of a refit record of @p n values (1 .. EO_REFIT_PLAYERS_MAX): compact, keys sorted,
 * integral numbers as integers and others with 17 significant digits, so that
 * eo_refit_from_text() gives back the same doubles. *out is malloc'd. Returns 0, EO_EINVAL (a
 * bad id, a non-finite value, @p upto < 0, @p n out of range) or EO_ENOMEM.
 */
int eo_refit_to_text(int64_t upto, const eo_refit_value *v, size_t n, char **out);

/** Releases what @p r owns and zeroes it. NULL is a no-op. */
void eo_refit_free(eo_refit_record *r);

/** Reads a JSONL round log line by line. */
typedef struct eo_jsonl_reader eo_jsonl_reader;

/**
 * Starts reading @p f (not closed by the reader; the reader reads ahead in blocks, so do not
 * read @p f elsewhere while it is open). @p name is used in messages (copied).
 * With @p skip_duplicates a round whose id was seen earlier in the file is skipped (and
 * counted); without it, it is an error. Blank lines (only spaces, tabs, CR) are skipped; a
 * final line without newline is read; a UTF-8 byte order mark at the start of the file is
 * skipped; CRLF line ends are accepted. Returns 0, EO_EINVAL or EO_ENOMEM.
 */
int eo_jsonl_open(FILE *f, const char *name, bool skip_duplicates, eo_jsonl_reader **out);

/**
 * Next round. Returns 1 with *round filled (and, if @p obj is not NULL, *obj a new reference to
 * the parsed object), 0 at end of file, or a negative code with @p msg (capacity @p msglen,
 * may be 0) set, *round zeroed and *obj NULL:
 *  - EO_EINVAL "NAME:LINE: \"FIELD\": MESSAGE" (a rule of the record, or a duplicate round id:
 *    "\"id\": duplicate round id \"x\" (first on line 4)"); "NAME:LINE: MESSAGE" when the
 *    whole line is at fault (not an object);
 *  - EO_EPARSE "NAME:LINE: invalid JSON at column C: TEXT";
 *  - EO_ELIMIT "NAME:LINE: line longer than 1048576 bytes" (EO_JSONL_LINE_MAX);
 *  - EO_EIO "NAME:LINE: read error", EO_ENOMEM.
 * After EO_EINVAL, EO_EPARSE or EO_ELIMIT the reader is positioned on the next line, so a
 * caller may report and go on.
 */
int eo_jsonl_next(eo_jsonl_reader *r, eo_round *round, json_t **obj, char *msg, size_t msglen);

/** eo_jsonl_next_entry()'s answer for a refit line. */
#define EO_JSONL_REFIT 2

/**
 * Next entry of an exported log: a round as eo_jsonl_next() reads it (returns 1), or a refit
 * record (returns EO_JSONL_REFIT with *refit filled; release it with eo_refit_free()). A refit
 * line is an object with the one field "refit" (and so no "id", which every round has) whose
 * value is a refit record (eo_refit_from_json(); errors name "refit.players[2][1]").
 * eo_jsonl_next() is this with refit lines passed over (and counted, eo_jsonl_refits()):
 * tools that read rounds only (eval, tune, fit) read exports that contain refits.
 * @p refit may be NULL (then refit lines are passed over, as eo_jsonl_next()).
 */
int eo_jsonl_next_entry(eo_jsonl_reader *r, eo_round *round, json_t **obj,
                        eo_refit_record *refit, char *msg, size_t msglen);

/** Refit lines eo_jsonl_next() passed over so far. */
size_t eo_jsonl_refits(const eo_jsonl_reader *r);

/** Line number of the last line read (1-based). */
size_t eo_jsonl_line(const eo_jsonl_reader *r);

/** Rounds skipped as duplicates so far. */
size_t eo_jsonl_skipped(const eo_jsonl_reader *r);

/** Closes the reader. NULL is a no-op. */
void eo_jsonl_close(eo_jsonl_reader *r);

/**
 * A decoded split request (docs/SERVICE.md, "POST /v1/pools/{pool}/splits"):
 * {"players":[id | {"id":…, "rating"?, "team"?, "party"?, "lock"?, "priority"?, "prefer"?,
 * "denied"?, "protected"?, "sat_out"?}, …], "bench"?, "mode"?, "epsilon"?, "spread_epsilon"?,
 * "budget_ms"?, "map"?, "allow_party_split"?, "allow_protected"?, "k_min"?, "k_max"?}.
 * A *plain* request (only ids, ratings and "bench") is the exact splitter's (eo_split.h) and
 * leaves @c balance false; any other listed field makes it a balancer request (eo_balance.h).
 * eo_app_split() (eo_app.h) answers both.
 */
typedef struct eo_split_request {
    size_t n;              /**< number of players */
    char **ids;            /**< n ids, owned */
    int64_t *rating;       /**< n ratings, owned; meaningful where has_rating[i] */
    bool *has_rating;      /**< n flags, owned */
    eo_bench_mode bench;
    /* ---- balancer inputs (docs/BALANCER.md "The balancer through the service") ---- */
    bool balance;          /**< the request uses a balancer input (fields below are set) */
    /** n players, owned: team, party (index + 1 into party_ids), lock, priority (the rank of
     *  the request's number, absent = 0, among the distinct values: order kept), prefer,
     *  weight (2^denied), protect, sat_out. Ratings are filled by eo_app_split().
     *  May be NULL on a plain request, as may party_ids. */
    eo_balance_player *players;
    char **party_ids;      /**< nparty party ids, owned */
    size_t nparty;
    eo_balance_mode mode;  /**< default rebalance */
    double epsilon;        /**< tolerance on |P(A) − 0.5|, default EO_SPLIT_EPSILON_DEFAULT */
    /** scramble's tolerance on |sd(A) − sd(B)| in the model's rating units; NaN when absent
     *  (the default: one split unit, eo_model_split_unit(); docs/BALANCER.md) */
    double spread_epsilon;
    int64_t budget_ms;     /**< time budget, default EO_SPLIT_BUDGET_DEFAULT_MS */
    char *map;             /**< owned, NULL when absent (validated; its bias is the caller's:
                                it sets @c field) */
    double field;          /**< the field term in A's favour for @c map, in the model's units
                                (eo_pool_bias_field()); the decoder sets 0, the caller may set
                                it before eo_app_split() */
    bool allow_party_split;
    bool allow_protected;
    int k_min, k_max;      /**< team sizes wanted; 0 = 2 and floor(n/2) */
} eo_split_request;

/** Largest |rating| given in a split request. */
#define EO_SPLIT_RATING_MAX 1000000
/** Tolerance on |P(A) − 0.5| of a balancer request without "epsilon" (docs/BALANCER.md). */
#define EO_SPLIT_EPSILON_DEFAULT 0.01
/** Largest "spread_epsilon" (model rating units). */
#define EO_SPLIT_SPREAD_EPSILON_MAX 1e6
/** Time budget of a balancer request without "budget_ms", and the largest one accepted. */
#define EO_SPLIT_BUDGET_DEFAULT_MS 100
#define EO_SPLIT_BUDGET_MAX_MS 10000
/** Largest "denied" (the preference weight is 2^denied). */
#define EO_SPLIT_DENIED_MAX 16
/** Largest |priority|. */
#define EO_SPLIT_PRIORITY_MAX 1e9
/**
 * Balancer search nodes granted per millisecond of "budget_ms": measured ~50,000 nodes/ms
 * (Release, gcc, 2 loaded cores, N = 32 and 64 requests that reach their limit;
 * docs/BALANCER.md "The balancer through the service"), taken lower so that a budget is
 * rarely overrun. The local search that answers past the limit is not counted.
 */
#define EO_SPLIT_NODES_PER_MS 40000

/**
 * Decodes a split request. Players are id strings or objects with "id" and an optional integer
 * "rating" (|rating| <= EO_SPLIT_RATING_MAX); ids must be distinct; 2 <= n <=
 * EO_SPLIT_EXACT_MAX; "bench" is "solver" (default) or "queue". Balancer inputs, each
 * optional: per player "team" "A" | "B" | null, "party" an id string or null, "lock" and
 * "prefer" "A" | "B" | null, "priority" a number with |priority| <= EO_SPLIT_PRIORITY_MAX,
 * "denied" an integer in [0, EO_SPLIT_DENIED_MAX] (rounds the player was denied his preferred
 * side, net of rounds it was met: Shine's history, kept by the caller), "protected" and
 * "sat_out" booleans; per request "mode" "rebalance" | "scramble", "epsilon" a number in
 * [0, 0.5], "spread_epsilon" a number in [0, EO_SPLIT_SPREAD_EPSILON_MAX], "budget_ms" an
 * integer in [1, EO_SPLIT_BUDGET_MAX_MS], "map" an id string or null,
 * "allow_party_split" and "allow_protected" booleans, "k_min" and "k_max" integers with
 * 2 <= k_min <= k_max <= n/2. A balancer request may not ask for "bench": "queue"; a player
 * locked to one side and protected on the other, or a party (unless allow_party_split) whose
 * locks and protected members pin it to both sides, is an error naming the player's "lock" or
 * "party" (protection counts only without allow_protected). Unknown fields are ignored.
 * @p out need not be initialised. On failure returns EO_EINVAL with @p err (field such as
 * "players", "players[3].rating", "players[2].team", "bench", "k_max") and @p out zeroed;
 * EO_ENOMEM.
 */
int eo_split_request_from_json(const json_t *obj, eo_split_request *out, eo_round_error *err);

/** Releases what a split request owns and zeroes it. NULL is a no-op. */
void eo_split_request_free(eo_split_request *req);

/**
 * Reads the plain split request of the service's hot path straight from its text, without a
 * JSON tree: exactly {"players":["id",…]} (JSON whitespace between tokens allowed), 2 to
 * EO_SPLIT_EXACT_MAX distinct ids without escapes, each passing eo_id_check(). Returns 0 with
 * @p out as eo_split_request_from_json() fills it from the same text (released with
 * eo_split_request_free()). Any other text, valid or not, returns EO_EPARSE with @p out zeroed:
 * the caller then decodes it the general way (json_loadb() with EO_JSON_DECODE_FLAGS and
 * eo_split_request_from_json()), which accepts it or names the error. EO_ENOMEM (@p out
 * zeroed); EO_EINVAL when @p out is NULL. @p text need not be NUL-terminated.
 */
int eo_split_request_plain(const char *text, size_t len, eo_split_request *out);

/**
 * Encodes splits as {"splits":[{"k":…,"A":[ids],"B":[ids],"bench":[ids],"gap":…,"p_a":…},…]}
 * (p_a a real or null when NaN). The solver's integer gap is divided by @p unit (the scale of
 * the integer ratings it split: 1 for integer-rated models, an integer when the gap is
 * integral, else a real). @p ids maps request indices to ids; every index in @p s must be
 * valid for it. Returns a new reference or NULL (out of memory, or a NULL argument).
 */
json_t *eo_splits_to_json(const eo_splits *s, const char *const *ids, int64_t unit);

/**
 * The text json_dumps(eo_splits_to_json(@p s, @p ids, @p unit), JSON_COMPACT) gives, byte for
 * byte, written without a JSON tree (the service's hot path): *out malloc'd (the caller frees
 * it), *len its length. @p ids must be valid UTF-8 (every decoded id is). Returns 0, EO_ENOMEM
 * or EO_EINVAL (a NULL argument, @p unit < 1, an infinite p_a: cases where eo_splits_to_json()
 * returns NULL too).
 */
int eo_splits_text(const eo_splits *s, const char *const *ids, int64_t unit, char **out,
                   size_t *len);

/**
 * eo_splits_text()'s text written into @p buf (capacity @p cap bytes; NUL-terminated when it
 * fits). *len receives the text's length without the NUL, also when it does not fit: a buffer
 * of *len + 1 bytes then holds it. @p buf may be NULL when @p cap is 0 (a size query). Returns
 * 0, EO_ELIMIT (@p cap too small; @p buf holds a truncated text), EO_ENOMEM, or EO_EINVAL as
 * eo_splits_text().
 */
int eo_splits_encode(const eo_splits *s, const char *const *ids, int64_t unit, char *buf,
                     size_t cap, size_t *len);

/**
 * The answer to a split request, what eo_app_split() (eo_app.h) gives and the encoders below
 * write: a plain request's splits, or a balancer request's answers per k. Ownership: the answer
 * owns what it points to, except plain splits that live in the solver's work space.
 */
typedef struct eo_split_answer {
    int64_t unit;                 /**< the split unit of the integer ratings solved (gaps and
                                       sums are divided by it: eo_model_split_unit()) */
    /* ---- a plain request ---- */
    eo_splits *splits;            /**< the splits, p_a set; NULL for a balancer request */
    bool splits_borrowed;         /**< @c splits live in a work space (eo_split_solve_ws()):
                                       not freed with the answer */
    /* ---- a balancer request ---- */
    size_t count;                 /**< team sizes, k ascending */
    eo_balance_split **split;     /**< count entries, owned array; point into @c res */
    int64_t *epsilon;             /**< count tolerances used (split units), owned */
    int64_t spread_epsilon;       /**< the spread tolerance used (split units) */
    eo_balance_result **res;      /**< nres results, owned (one per run of equal tolerance) */
    size_t nres;
} eo_split_answer;

/** Releases an answer and zeroes it. NULL is a no-op. */
void eo_split_answer_free(eo_split_answer *a);

/**
 * Encodes an answer: a plain request's as eo_splits_to_json(a->splits, req->ids, a->unit); a
 * balancer request's as {"splits":[…]} with, per k, the fields of eo_splits_to_json()
 * (sums divided by the unit) and "dev", "epsilon" (the tolerance used, model scale),
 * "spread_epsilon" (the same for the spread), "exact", "parties_broken",
 * "moves":[{"id","from":"A"|"B","to":"A"|"B"|"bench"}], "terms":
 * {"broken","moves","top2","spread" (rating², model scale),"spread_sd" (rating units),"denied",
 * "bench_again","dev"} and "bound" (the same members: what the search proved of the rules'
 * answer, equal to "terms" when "exact"); a k
 * without an answer has "k" and "error":{"code","message","field"?,"party"?} instead
 * ("party_too_large" naming the party and its first member's "party" field, or "no_split").
 * Returns a new reference or NULL (out of memory).
 */
json_t *eo_split_answer_to_json(const eo_split_answer *a, const eo_split_request *req);

/**
 * A player's view as JSON: {"id", the model's state, "display", "division", "rounds",
 * "visible"} and, when @p with_stale, "stale". "division" is @p division or null (callers give
 * eo_pool_division() of visible players, NULL otherwise). The state is "rating" for SynElo and Elo; "rating", "rd" and
 * "volatility" for Glicko-2; "mu" and "sigma" for TrueSkill and Weng-Lin. Values of models
 * with integer display (SynElo) print as integers. Returns a new reference or NULL.
 */
json_t *eo_rating_view_to_json(const eo_model_ctx *m, const char *id, const eo_rating_view *v,
                               const char *division, bool with_stale);

/* ---- Request bodies of the service -------------------------------------------------------- */

/** Default cap on a request body in bytes (the service's --max-body may change it), and the
 *  cap on its nesting depth (objects and arrays; the top object is level 1). */
#define EO_REQUEST_BODY_MAX ((size_t)1 << 20)
#define EO_REQUEST_DEPTH_MAX 32
/** Most objects and arrays in one request body (a round of EO_PLAYERS_MAX member objects, with
 *  room to spare), and most values (members and elements): what a body's tree may cost is
 *  bounded by these, not only by its length (docs/ROUNDS.md "Other request bodies"). */
#define EO_REQUEST_CONTAINERS_MAX 4096
#define EO_REQUEST_VALUES_MAX 262144

/**
 * A request error for the service's error body {"error":{"code","message","field"}}, with the
 * HTTP status to answer. Codes: "body_too_large" (413), "invalid_json" (400: syntax, duplicate
 * key, NUL byte, too deep), "invalid_request" (400: a field is missing, of the wrong type or
 * out of range).
 */
typedef struct eo_request_error {
    int status;        /**< 413 for "body_too_large", 500 out of memory, else 400 */
    char code[32];     /**< machine-readable code, see above */
    char field[64];    /**< JSON path of the offending field, "" for the whole body */
    char message[192]; /**< English, without the field name */
} eo_request_error;

/**
 * The one parser of the service's request bodies, with the limits docs/ROUNDS.md states ("Other
 * request bodies of the service"): at most @p max_len bytes (else EO_ELIMIT,
 * "body_too_large", 413); no NUL byte, nested at most @p max_depth levels (the top object is
 * level 1; brackets inside strings are text, not levels), at most EO_REQUEST_CONTAINERS_MAX
 * objects and arrays and EO_REQUEST_VALUES_MAX values, valid JSON with no duplicate keys
 * (else EO_EPARSE, "invalid_json", 400); a JSON object at the top (else EO_EINVAL,
 * "invalid_request", 400). The depth is counted on the text before any tree is built. On
 * success *out is a new reference; on failure *out is NULL and @p err (may be NULL) says why
 * (field ""). The service calls it with EO_REQUEST_DEPTH_MAX and its body cap.
 */
int eo_request_parse(const char *body, size_t len, size_t max_len, int max_depth, json_t **out,
                     eo_request_error *err);

/** A decoded pool creation request {"name": …, "model": …, "params": {…}}. */
typedef struct eo_pool_request {
    char name[EO_ID_MAX + 1];  /**< 1..128 bytes of [A-Za-z0-9._-] (safe in URLs and logs) */
    char model[EO_ID_MAX + 1]; /**< a known model's name (eo_model_parse()); "synelo" when
                                    the request names none */
    json_t *params;            /**< BORROWED from the request object (valid while it lives),
                                    an object, or NULL when absent; not interpreted here */
} eo_pool_request;

/**
 * Decodes a pool creation request: "name" required (eo_pool_name_check()), "model" a known
 * model's name (default "synelo"), "params" an optional object; unknown fields are rejected (a
 * typo in an admin request must not pass silently). Returns 0 or EO_EINVAL with @p err
 * ("invalid_request", the field named).
 */
int eo_pool_request_from_json(const json_t *obj, eo_pool_request *out, eo_request_error *err);

/**
 * Decodes {"rating": number, "sigma": number} (PUT /v1/pools/{pool}/players/{id}): "rating" is
 * required, "sigma" optional (>= 0; *sigma is -1 when absent); both finite with magnitude at
 * most 1e9 (the model checks its own range). Unknown fields are rejected. Returns 0 or EO_EINVAL
 * with @p err ("invalid_request").
 */
int eo_rating_request_from_json(const json_t *obj, double *rating, double *sigma,
                                eo_request_error *err);

/** A decoded season request {"name": …, "f": …, "s": …} (POST /v1/pools/{pool}/seasons). */
typedef struct eo_season_request {
    char name[EO_ID_MAX + 1]; /**< the season that ends: 1..128 bytes, eo_id_check() */
    double f;                 /**< pull toward the start value, [0, 1]; default 0.5 */
    double s;                 /**< deviation added, >= 0; -1 when absent (the engine's default) */
} eo_season_request;

/**
 * Decodes a season request: "name" required, "f" and "s" optional numbers; unknown fields are
 * rejected. Returns 0 or EO_EINVAL with @p err ("invalid_request", field named).
 */
int eo_season_request_from_json(const json_t *obj, eo_season_request *out, eo_request_error *err);

/* ---- Pool configuration (src/codec/pool_json.c) ------------------------------------------ */

/**
 * Maps a stored pool's model name and parameters object to a configuration: the defaults of a
 * parameter the object does not mention (eo_pool_config_default(): the model's table, bias and
 * presence off, what the pool meant before the parameter existed), then each given parameter:
 * a number (an integer where the table says so), or for a choice its name as a string.
 * @p params may be NULL (all defaults). The result has passed eo_model_config_check() (derived
 * values resolved: SynElo's "kmax_team" sets "theta"). Some names are the pool's, not the
 * model's: the bias's and presence's (eo_bias.h, eo_presence.h: "presence" is "on" or "off")
 * and "divisions", an array of at most EO_DIVISIONS_MAX objects {"name": 1..31 bytes without
 * control characters, "from": number}, strictly ascending in "from". On failure returns
 * EO_EINVAL with @p err (when not NULL): field "model" (unknown model), "params" (not an
 * object) or "params.NAME" (unknown name, wrong type, out of range, or inconsistent with
 * another parameter; "params.divisions[2].from" and so on).
 */
int eo_pool_config_from_json(const char *model, const json_t *params, eo_pool_config *out,
                             eo_round_error *err);

/**
 * eo_pool_config_from_json() for a new pool (`POST /v1/pools`): a parameter the request does
 * not give takes a new pool's defaults (eo_pool_config_new(): the map bias and presence on,
 * each model's new defaults). Same errors.
 */
int eo_pool_config_new_from_json(const char *model, const json_t *params, eo_pool_config *out,
                                 eo_round_error *err);

/**
 * The complete parameters object of @p cfg: every parameter with its value, so that a stored
 * pool does not change when a default changes (SynElo's "kmax_team" is written as 0: "theta"
 * holds its effect), the bias's and presence's when on (absent, eo_pool_config_from_json()
 * reads them off), and "divisions" when the pool has any. Integers print as integers, choices
 * as their names, reals with 17
 * significant digits (they read back to the same double). Returns a new reference or NULL.
 */
json_t *eo_pool_config_to_json(const eo_pool_config *cfg);

/* ---- Autobalance and scramble triggers (src/codec/autobalance_json.c) ------------------- */

/** Largest |rating|, strength_threshold and gap_tolerance in an autobalance request (the
 *  model's scale), and the largest duration in seconds. */
#define EO_AB_JSON_RATING_MAX 1000000
#define EO_AB_JSON_DURATION_MAX 1000000000
/** Largest work_limit a request may ask for. */
#define EO_AB_JSON_WORK_MAX 10000000

/**
 * A decoded autobalance request (docs/SERVICE.md, "POST /v1/pools/{pool}/autobalance"):
 * {"players":[{"id","team":"A"|"B","rating"?,"party"?,"protected"?,"dead"?,"joined_at"?,
 * "last_moved"?,"score"?},…], "now"?, "time_left"?, "unbalanced_since"?, "policy"?{…},
 * "joiner"?{"id","rating"?}}. Ratings are on the model's scale (numbers); the caller fills
 * the missing ones (from the pool, or an error offline) and then calls eo_app_autobalance()
 * (eo_app.h), which makes the integer state the core takes and answers.
 */
typedef struct eo_autobalance_request {
    size_t n;               /**< players, 0 .. EO_AB_PLAYERS_MAX */
    char **ids;             /**< n ids, owned */
    eo_ab_player *players;  /**< n players, owned; id = index; rating set by
                                 eo_app_autobalance() */
    double *rating;         /**< n ratings, owned; meaningful where has_rating[i] */
    bool *has_rating;       /**< n flags, owned */
    eo_ab_state state;      /**< players points into @c players; now is 0 unless has_now */
    bool has_now;           /**< "now" was given (else the caller supplies the clock) */
    eo_ab_policy policy;    /**< defaults with "policy" applied; thresholds set by
                                 eo_app_autobalance() */
    double strength_threshold; /**< "policy.strength_threshold" (model scale), 0 = none */
    double gap_tolerance;   /**< "policy.gap_tolerance" (model scale) */
    bool has_joiner;        /**< "joiner" was given */
    char *joiner_id;        /**< owned, when has_joiner */
    bool joiner_has_rating;
    double joiner_rating;
    const eo_model_ctx *model; /**< set by eo_app_autobalance(): the predictor's
                                    model (borrowed) */
    int64_t unit;           /**< set by eo_app_autobalance(): eo_model_split_unit() */
    bool relative;          /**< set by the caller (decoded false): the predictor measures
                                 teams relative to the model's start level
                                 (eo_model_level_field()), as a pool with presence on does, so
                                 an unequal team's extra members are not worth their start
                                 rating; docs/MODELS.md "Presence" */
    double presence;        /**< set by the caller (decoded 0), with @c relative: logits a
                                 player more is worth (the pool's strength·π), added for
                                 teams of unequal sizes (eo_model_logit_field()) */
} eo_autobalance_request;

/**
 * Decodes an autobalance request. Players: "id" (distinct, eo_id_check()), "team" "A" or "B"
 * (required), "rating" a finite number with |rating| <= EO_AB_JSON_RATING_MAX, "party" an id
 * string or null, "protected" and "dead" booleans, "joined_at" and "last_moved" integers in
 * [0, EO_ROUND_TIME_MAX] (last_moved null: never), "score" an integer given for every player or
 * for none. "now" and "unbalanced_since" (null: never) integers in [0, EO_ROUND_TIME_MAX];
 * "time_left" an integer >= 0 or null (unknown). "policy": "enabled", "allow_party",
 * "dead_only", "strength_swaps", "odd_extra" booleans; "mode" "normal", "sandbox",
 * "tournament", "ffa" or "arena"; "size_rule" "gap" or "sectors_edge"; "size_gap_min" an
 * integer in [2, 128]; "last_minutes", "delay" integers in [0, EO_AB_JSON_DURATION_MAX];
 * "cooldown" the same or null (once per round); "strength_threshold", "gap_tolerance" numbers
 * in [0, EO_AB_JSON_RATING_MAX]; "p_threshold" in [0, 0.5]; "work_limit" an integer in
 * [0, EO_AB_JSON_WORK_MAX]. Unknown fields are rejected everywhere (a typo in a policy must not
 * pass silently). @p out need not be initialised. Returns 0, EO_EINVAL with @p err (field
 * such as "players[3].team", "policy.delay", "joiner.rating") and @p out zeroed, or EO_ENOMEM.
 */
int eo_autobalance_request_from_json(const json_t *obj, eo_autobalance_request *out,
                                     eo_round_error *err);

/** Releases what the request owns and zeroes it. NULL is a no-op. */
void eo_autobalance_request_free(eo_autobalance_request *req);

/**
 * The answer as JSON: {"rule","action","act_at" (null unless delay),"size_a","size_b",
 * "sum_a","sum_b","gap_before","gap_after" (model scale: integer sums divided by the unit),
 * "p_before","p_after" (null without a predictor),"needed","short_by","eligible","exact",
 * "moves":[{"id","from","to","reason"}]} plus "joiner":{"id","team" ("A", "B" or null),
 * "action","by_size","gap_after"} when @p join is not NULL. Returns a new reference or NULL.
 */
json_t *eo_autobalance_to_json(const eo_autobalance_request *req, const eo_ab_result *res,
                               const eo_ab_placement *join);

/**
 * Decodes a scramble trigger request (docs/SERVICE.md, "POST /v1/pools/{pool}/triggers"): the
 * members of eo_trigger_state under their own names ("mode", "event", "tournament", "round",
 * "winner" "A"|"B"|"draw", "wins" [A, B], "streak_team" "A"|"B"|null, "streak", "captured"
 * [A, B], "attackers_timed_out", "full_rounds", "time_left" (null or < 0: no limit),
 * "win_limit", "max_rounds", "players", "last_scramble_round" (null: none)), absent ones from
 * eo_trigger_state_init(), and an optional "config" object with the members of
 * eo_trigger_config (absent: the defaults). Counts are integers in [0, 2^31 − 1], the config's
 * win_difference, arena_streak and ad_full_rounds in [1, 2^31 − 1]. Unknown fields are
 * rejected. Consistency is eo_trigger_eval()'s: for a decoded request its field names are
 * these top-level names. Returns
 * 0 or EO_EINVAL with @p err ("mode", "wins[1]", "config.min_players" ...).
 */
int eo_trigger_request_from_json(const json_t *obj, eo_trigger_state *st, eo_trigger_config *cfg,
                                 eo_round_error *err);

/** {"scramble":bool,"rule":name,"guard":name,"reason":name} ("none" where nothing applies).
 *  Returns a new reference or NULL. */
json_t *eo_trigger_result_to_json(const eo_trigger_result *r);

/* ---- The truth of a simulated world (src/codec/truth_json.c) ------------------------------ */

/* The file `evenodds sim --truth-out` writes (docs/SIM.md, "Files"), read into the core's
 * eo_truth (eo_sim.h), which holds it and gives the oracle's P (eo_truth_p()). */

/** Limits of a truth file's numbers: |skill| and |skill_mean| at most EO_TRUTH_SKILL_MAX,
 *  skill_sd in [0, EO_TRUTH_SKILL_MAX], scale in [EO_TRUTH_SCALE_MIN, EO_TRUTH_SKILL_MAX],
 *  |bias| at most EO_TRUTH_BIAS_MAX (logits): every P_true of a valid round is then a finite
 *  number. At most EO_TRUTH_PLAYERS_MAX players and EO_TRUTH_MAPS_MAX maps. */
#define EO_TRUTH_SKILL_MAX 1e9
#define EO_TRUTH_SCALE_MIN 1e-3
#define EO_TRUTH_BIAS_MAX 100.0
#define EO_TRUTH_PLAYERS_MAX 10000000
#define EO_TRUTH_MAPS_MAX 100000

/**
 * Decodes a truth object: "scale" (required, a number), "maps" (required, an array of
 * {"id": a map name checked like an id, "bias": a number}) and "players" (required, an array
 * of {"id": a player id, "skill": a number, optional "present" true/false and "rounds" an
 * integer >= 0}); optional "seed" (integer >= 0), "skill" (a string), "skill_mean" and
 * "skill_sd" (numbers) are checked and otherwise unused. Unknown fields, a repeated map or
 * player id, and numbers outside the limits above are rejected. Returns 0 with a new truth in
 * *out (the caller's, eo_truth_destroy()), EO_EINVAL with @p err naming the field ("players[3].skill", "maps[0].id", "scale",
 * "" for the top level), or EO_ENOMEM.
 */
int eo_truth_from_json(const json_t *obj, eo_truth **out, eo_round_error *err);

/** The same from JSON text of @p len bytes (EO_JSON_DECODE_FLAGS; a NUL byte or invalid JSON
 *  is EO_EPARSE with the position in @p err->message). */
int eo_truth_from_text(const char *text, size_t len, eo_truth **out, eo_round_error *err);

/* ---- Tuning: pool configuration files, predictions, tune requests and answers
 *      (src/codec/tune_json.c) ---------------------------------------------------------------- */

/** Largest pool configuration file `--params FILE` reads, in bytes. */
#define EO_POOL_FILE_MAX (1 << 20)

/**
 * A pool's configuration as a file: {"model", "params":{…}} and optionally "name", the body of
 * POST /v1/pools, what `evenodds tune` prints and what GET /v1/pools lists for each pool.
 * "model" absent means SynElo; "params" is decoded as POST /v1/pools decodes it, over a new
 * pool's defaults (eo_pool_config_new_from_json()); "name", when
 * present, passes eo_pool_name_check() and is copied into @p name (EO_ID_MAX + 1 bytes; may be
 * NULL; "" when absent). Any other field is an error. Returns 0, or EO_EINVAL with @p err
 * naming the field ("model", "name", "params.beta", "" for the top level).
 */
int eo_pool_file_from_json(const json_t *obj, eo_pool_config *out, char *name, eo_round_error *err);

/** The same from JSON text of @p len bytes (EO_JSON_DECODE_FLAGS; a NUL byte or invalid JSON
 *  is EO_EPARSE with the position in @p err->message). */
int eo_pool_file_from_text(const char *text, size_t len, eo_pool_config *out, char *name,
                           eo_round_error *err);

/** One scored round's prediction, a line of `evenodds eval --predictions-out`. */
typedef struct eo_prediction {
    char id[EO_ID_MAX + 1]; /**< the round's id */
    double p_a;             /**< P(A wins) at round start, in [0, 1] */
    eo_winner outcome;
} eo_prediction;

/** {"id","p_a","outcome":"A"|"B"|"draw"}; p_a with 17 significant digits when dumped with
 *  JSON_REAL_PRECISION(17), so it reads back to the same double. NULL when out of memory. */
json_t *eo_prediction_to_json(const char *id, double p_a, eo_winner outcome);

/**
 * Decodes one prediction line (the three fields above and no other; duplicate keys, a NUL byte
 * and invalid JSON refused). Returns 0, EO_EPARSE (syntax; the position in the message) or
 * EO_EINVAL with @p err naming the field ("id", "p_a", "outcome", "" for the top level).
 */
int eo_prediction_from_text(const char *text, size_t len, eo_prediction *out, eo_round_error *err);

/** Largest "budget" and "max_rounds" of a tune request. */
#define EO_TUNE_BUDGET_MAX 1000
#define EO_TUNE_ROUNDS_MAX 5000000

/** A decoded tune request (POST /v1/pools/{pool}/tune, docs/SERVICE.md). */
typedef struct eo_tune_request {
    uint32_t budget;     /**< "budget", 1 .. EO_TUNE_BUDGET_MAX (default 60) */
    bool brier;          /**< "metric": "logloss" (default) or "brier" */
    double gate;         /**< "gate", 0 .. 100 (default 1) */
    double eval_from;    /**< "eval_from", (0, 1): where the held-out rounds start (0.5) */
    double burn_in;      /**< "burn_in", [0, eval_from): where training starts (0.1) */
    uint64_t max_rounds; /**< "max_rounds", 10 .. EO_TUNE_ROUNDS_MAX: the last rounds of the
                              log tuned on (default 1,000,000) */
    size_t nknobs;       /**< "knobs": at most EO_TUNE_KNOBS_MAX names (0: the defaults) */
    char knobs[EO_TUNE_KNOBS_MAX][32];
} eo_tune_request;

/**
 * Decodes a tune request from @p obj (NULL: every default). Unknown fields, wrong types and
 * values out of range are EO_EINVAL with @p err (code "invalid_request", the field named);
 * whether a knob is a parameter of the pool's model is the tune's to check.
 */
int eo_tune_request_from_json(const json_t *obj, eo_tune_request *out, eo_request_error *err);

/**
 * The figures of a finished search: {"knobs":[…],"folds","metric","start":{…},"best":{…},
 * "gain","threshold","chosen":"best"|"start","held_out_diff":{"rounds","logloss",
 * "logloss_se","brier","brier_se"}}, each point {"params":{knob:value},"train":{"rounds",
 * "logloss","brier","accuracy"},"held_out":{…,"logloss_se","brier_se"}}; figures over no
 * rounds are null. @p brier says which metric was minimised. A new reference or NULL.
 */
json_t *eo_tune_result_to_json(const eo_tune_result *r, bool brier);

/** A tune job as GET /v1/pools/{pool}/tune shows it (the service's job table fills it). */
typedef struct eo_tune_job_view {
    int64_t id;
    const char *pool;
    enum { EO_TUNE_RUNNING, EO_TUNE_DONE, EO_TUNE_FAILED } state;
    bool scheduled;         /**< started by the schedule, not by a request */
    const char *phase;      /**< running: "reading" or "tuning" */
    uint32_t folds, budget; /**< folds so far (running) or in all (done) */
    double best;            /**< running: the best training objective so far */
    size_t rounds;          /**< rounds tuned on (the last max_rounds of the log) */
    int64_t upto;           /**< the last log position read */
    double seconds;
    const char *error;            /**< failed: why */
    const eo_tune_result *result; /**< done: the figures (eo_tune_result_to_json()) */
    bool brier;                   /**< done: the metric minimised */
    bool applied;                 /**< done: the pool has the chosen configuration now */
    bool stale;                   /**< done: the pool has neither the start nor the chosen one
                                       (its parameters changed since the job started) */
} eo_tune_job_view;

/** {"job","pool","state","scheduled", then by state: "phase","folds","budget","best",
 *  "seconds" (running; "best" null before the first fold); "rounds","upto","seconds","model",
 *  "params" (the chosen configuration: what apply sets),"tune" (the figures),"applied",
 *  "stale" (done); "error","seconds" (failed)}. A new reference or NULL. */
json_t *eo_tune_job_to_json(const eo_tune_job_view *v);

/* ---- Matchmaking requests and documents (src/codec/mm_json.c; docs/MATCHMAKING.md) -------- */

/** Limits of a queue's service settings: pass interval (ms), ticket expiry (s), ready check (s). */
#define EO_QUEUE_INTERVAL_MIN_MS 10
#define EO_QUEUE_INTERVAL_MAX_MS 60000
#define EO_QUEUE_TTL_MAX_S 86400
#define EO_QUEUE_READY_MAX_S 600
/** Largest latency a ticket may give for a region, ms. */
#define EO_TICKET_LATENCY_MAX_MS 100000
/** Most queues an instance serves; longest instance address; most sessions an instance hosts. */
#define EO_INSTANCE_QUEUES_MAX 16
#define EO_INSTANCE_ADDRESS_MAX 255
#define EO_INSTANCE_CAPACITY_MAX 1000000

/**
 * A queue (POST /v1/queues): its name, its pool (whose model rates and predicts), the
 * matcher's configuration (eo_match.h: team size, widening steps, calibration), the names of
 * its regions and maps (the matcher's indices into these lists), and the service's settings.
 * map_field stays 0 here: the service sets it from the pool's map bias at each pass.
 */
typedef struct eo_queue_config {
    char name[EO_ID_MAX + 1]; /**< eo_pool_name_check()'s rule (safe in URLs) */
    char pool[EO_ID_MAX + 1];
    eo_match_config match;
    char regions[EO_MATCH_REGIONS_MAX][EO_ID_MAX + 1]; /**< match.nregions of them, distinct */
    char maps[EO_MATCH_MAPS_MAX][EO_ID_MAX + 1];       /**< match.nmaps of them, distinct */
    int64_t interval_ms;   /**< a pass every, EO_QUEUE_INTERVAL_MIN_MS..MAX; default 1000 */
    int64_t ticket_ttl_s;  /**< a waiting ticket expires after, 1..EO_QUEUE_TTL_MAX_S; 600 */
    int64_t ready_check_s; /**< 0: no ready check; else every player accepts within it */
} eo_queue_config;

/** Fills @p out with queue @p name of pool @p pool, @p team_size players a team and the
 *  defaults (eo_match_config_default(), a pass a second, tickets expire after 600 s, no ready
 *  check). 0 or EO_EINVAL. */
int eo_queue_config_init(const char *name, const char *pool, int team_size, eo_queue_config *out);

/** Reads what a queue creation must give before its defaults can be made: "name", "pool" and
 *  "team_size" (0 or EO_EINVAL with @p err naming the field). */
int eo_queue_head_from_json(const json_t *obj, char *name, char *pool, int *team_size,
                            eo_request_error *err);

/**
 * Applies a queue request to @p cfg (a creation's defaults, or the queue as it is for a change):
 * "team_size", "regions" (array of distinct ids), "maps" (array of distinct ids), "steps"
 * (array of {"after" s, "window", "latency_ms", "p_max", "quality_min", "team_min"}, each
 * member optional but "after"; a given array replaces the whole schedule), "linear",
 * "sigma_z", "calib_rounds", "calib_sigma", "calib_window", "interval_ms", "ticket_ttl_s",
 * "ready_check_s"; a creation also carries "name" and "pool" (as
 * eo_queue_head_from_json() read them). A change (@p patch) may not give "name", "pool",
 * "team_size" or "regions" (tickets waiting were read against them). The result passes
 * eo_match_config_check() (its field names are the request's). Unknown fields are rejected.
 * 0, or EO_EINVAL with @p err ("invalid_request", the field named) and @p cfg unchanged.
 */
int eo_queue_request_apply(const json_t *obj, bool patch, eo_queue_config *cfg,
                           eo_request_error *err);

/** The queue as a document: every member, in the request's names (what GET answers and what
 *  the store keeps; eo_queue_request_apply() on it gives @p cfg back). NULL when out of memory. */
json_t *eo_queue_config_to_json(const eo_queue_config *cfg);

/** A decoded ticket request {"id"?, "players": [{"id", "latency"?: {"REGION": ms, …}}, …]}. */
typedef struct eo_ticket_request {
    char id[EO_ID_MAX + 1]; /**< the client's id, "" when none was given */
    size_t nplayers;        /**< 1..the queue's team_size: a party, never split */
    char players[EO_MATCH_TEAM_MAX][EO_ID_MAX + 1];
    bool has_latency[EO_MATCH_TEAM_MAX]; /**< false: no measurement (every region at 0 ms) */
    /** By the queue's region index: ms in [0, EO_TICKET_LATENCY_MAX_MS], or -1 for a region
     *  the player gave no latency for (he cannot play there). */
    double latency[EO_MATCH_TEAM_MAX][EO_MATCH_REGIONS_MAX];
} eo_ticket_request;

/**
 * Decodes a ticket for queue @p q: "id" optional (an id), "players" 1..team_size objects with
 * distinct ids. Errors (EO_EINVAL, @p err): a party larger than a team ("party_too_large",
 * field "players"), a latency for a region the queue does not have ("unknown_region", field
 * "players[1].latency.REGION"), a player twice ("players[2].id"), anything else malformed
 * ("invalid_request"). Unknown fields are rejected.
 */
int eo_ticket_request_from_json(const json_t *obj, const eo_queue_config *q, eo_ticket_request *out,
                                eo_request_error *err);

/** The canonical text of a ticket's content (players and latencies, without the id): what an
 *  idempotent repeat is compared with, and what the store keeps. *out malloc'd. 0 or
 *  EO_ENOMEM. */
int eo_ticket_request_text(const eo_ticket_request *r, const eo_queue_config *q, char **out);

/** A decoded instance registration {"id", "queues": […], "address", "region"?, "capacity"?}. */
typedef struct eo_instance_request {
    char id[EO_ID_MAX + 1];
    size_t nqueues; /**< 1..EO_INSTANCE_QUEUES_MAX, distinct */
    char queues[EO_INSTANCE_QUEUES_MAX][EO_ID_MAX + 1];
    char address[EO_INSTANCE_ADDRESS_MAX + 1]; /**< printable ASCII, no spaces ("host:port") */
    char region[EO_ID_MAX + 1];                /**< "" when none */
    int64_t capacity;                          /**< sessions at once, 1..; default 1 */
} eo_instance_request;

/** Decodes an instance registration. 0 or EO_EINVAL with @p err naming the field. */
int eo_instance_request_from_json(const json_t *obj, eo_instance_request *out,
                                  eo_request_error *err);

/** The registration as a document (canonical: what a repeat is compared with, what the store
 *  keeps, eo_instance_request_from_json() reads it back). NULL when out of memory. */
json_t *eo_instance_request_to_json(const eo_instance_request *r);

/** A decoded backfill request {"team": "A"|"B", "slots": n, "rating"?: mean}. */
typedef struct eo_backfill_request {
    uint8_t team;    /**< EO_BALANCE_A or EO_BALANCE_B */
    int slots;       /**< 1..EO_MATCH_TEAM_MAX (the service checks the queue's team size) */
    bool has_rating; /**< false: the service uses the session's mean */
    double rating;   /**< the mean a joiner should have, |rating| <= 1e9 */
} eo_backfill_request;

/** Decodes a backfill request. 0 or EO_EINVAL with @p err naming the field. */
int eo_backfill_request_from_json(const json_t *obj, eo_backfill_request *out,
                                  eo_request_error *err);

/** A decoded ready-check answer {"player"?: id, "accept": bool}; no player: the whole ticket. */
typedef struct eo_ready_request {
    char player[EO_ID_MAX + 1]; /**< "" for every player of the ticket */
    bool accept;
} eo_ready_request;

/** Decodes a ready-check answer. 0 or EO_EINVAL with @p err naming the field. */
int eo_ready_request_from_json(const json_t *obj, eo_ready_request *out, eo_request_error *err);

/** One seat of a match: a player, his ticket, team and (once assigned) join secret. */
typedef struct eo_mm_seat {
    const char *player;
    const char *ticket;
    uint8_t team;       /**< EO_BALANCE_A or EO_BALANCE_B */
    const char *secret; /**< NULL until the match has a session */
} eo_mm_seat;

/** A match as documents show it (a ticket's "match", a session's teams). */
typedef struct eo_mm_match_view {
    const char *id;
    const char *queue;
    const char *map;    /**< NULL: the queue has no maps */
    const char *region; /**< NULL: the queue has no regions */
    double p_a, quality;
    int team_size;
    const eo_mm_seat *seats;
    size_t nseats;
    int64_t formed_at; /**< Unix ms */
} eo_mm_match_view;

/** A ticket's document (GET /v1/tickets/{ticket}): status, and once matched the match; once
 *  assigned the session, the instance's address and the ticket's players' seats and secrets. */
typedef struct eo_ticket_view {
    const char *id;
    const char *queue;
    const char *status; /**< queued, matched, assigned, cancelled, expired */
    const char *reason; /**< why it was cancelled (NULL: asked) */
    const char *const *players;
    size_t nplayers;
    int64_t created_at, updated_at; /**< Unix ms */
    const eo_mm_match_view *match;  /**< NULL unless matched or assigned */
    const bool *accepted;           /**< a ready check's per-seat answers (NULL: none), with */
    int64_t ready_deadline;         /**< its deadline, Unix ms */
    const char *session;            /**< assigned: the session, the instance and its address */
    const char *instance;
    const char *address;
} eo_ticket_view;

/** The ticket's document as JSON text: *out malloc'd (the caller's), *len (may be NULL) its
 *  length. 0, EO_ENOMEM, or EO_EINVAL (a P(A) or quality that is not finite). */
int eo_ticket_view_text(const eo_ticket_view *v, char **out, size_t *len);

/** A session's document (what its instance polls): the match with every seat's secret. */
typedef struct eo_session_view {
    const char *id;
    const char *instance;
    const char *address;
    const char *pool;
    const char *status; /**< open, closed, lost */
    const eo_mm_match_view *match;
    int64_t created_at, updated_at; /**< Unix ms */
    int backfill_team;              /**< the team a backfill request waits for (-1: none) */
    int backfill_slots;             /**< its slots left */
    double backfill_rating;
    int64_t backfill_at; /**< when it was asked, Unix ms */
} eo_session_view;

/** The session's document as JSON text, as eo_ticket_view_text(). */
int eo_session_view_text(const eo_session_view *v, char **out, size_t *len);

#ifdef __cplusplus
}
#endif
#endif
