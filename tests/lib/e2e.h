/* End-to-end test helpers: start the real evenodds binary (env EO_BIN) on 127.0.0.1 port 0
 * with a temporary database and keys file, and talk HTTP to it with libcurl. */
#ifndef EO_TEST_E2E_H
#define EO_TEST_E2E_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

typedef struct e2e_server {
    pid_t pid;          /* 0 when not running */
    int out_fd;         /* read end of the child's stdout */
    char dir[256];      /* temporary directory (removed by e2e_cleanup) */
    char db[320];
    char config[320];
    char log[320];      /* the child's stderr */
    char url[128];      /* "http://127.0.0.1:PORT" */
    unsigned port;
    char server_key[65];
    char admin_key[65];
    unsigned run_uid;   /* > 0: the child runs as this user id and group (root tests only) */
    unsigned start_s;   /* how long e2e_start() waits for the listening line (0: 30 s); a
                           store of a million rounds takes minutes to fold */
} e2e_server;

/* Makes a temporary directory with a keys file (mode 0600, fresh random keys). 0 or -1. */
int e2e_init(e2e_server *s);

/* Starts `EO_BIN serve --db DB --listen 127.0.0.1:0 --config KEYS` plus @p extra (NULL-ended,
 * may be NULL) and waits for the "listening on" line. 0, or -1 (child reaped). */
int e2e_start(e2e_server *s, const char *const *extra);

/* Sends @p sig and waits for the child (at most @p timeout_ms). *status gets the exit code
 * (or 128 + signal). 0, or -1 on timeout (the child is then killed). */
int e2e_stop(e2e_server *s, int sig, int timeout_ms, int *status);

/* Kills the child if it still runs and removes the temporary directory. */
void e2e_cleanup(e2e_server *s);

/* Runs the binary with @p argv (argv[0] ignored; NULL-ended), env var @p env_kv ("K=V" or
 * NULL) added; returns its exit code and, if @p err is not NULL, its stderr (capacity errlen). */
int e2e_run(const char *const *argv, const char *env_kv, char *err, size_t errlen);

/* One HTTP answer. */
typedef struct e2e_resp {
    long status;
    char *body;
    size_t len;
    char ctype[128];
    char allow[64];
    char retry_after[16];
    char etag[64];
    char cache[64];    /* Cache-Control */
    char csp[256];     /* Content-Security-Policy */
} e2e_resp;

/* Sends one request. @p key: bearer key or NULL (no Authorization). @p ctype NULL means
 * "application/json" when a body is given. @p hdrs: extra "Name: value" headers, NULL-ended,
 * may be NULL. 0, or -1 when the transfer failed. */
int e2e_request(const e2e_server *s, const char *method, const char *path, const char *key,
                const char *ctype, const char *body, size_t len, const char *const *hdrs,
                e2e_resp *out);

/* The same to any HTTP server at @p base ("http://host:port"), waiting at most @p timeout_s
 * seconds (e2e_request(): the service under test, 30 s). */
int e2e_request_at(const char *base, long timeout_s, const char *method, const char *path,
                   const char *key, const char *ctype, const char *body, size_t len,
                   const char *const *hdrs, e2e_resp *out);

/* Shorthand: JSON body given as text (NULL for none), default content type. */
int e2e_call(const e2e_server *s, const char *method, const char *path, const char *key,
             const char *body, e2e_resp *out);

void e2e_resp_free(e2e_resp *r);

/* The body parsed as JSON (new reference), or NULL. */
json_t *e2e_json(const e2e_resp *r);

/* True when the body is {"error":{"code":CODE,"message":string,…}} (CODE NULL: any). */
bool e2e_is_error(const e2e_resp *r, const char *code);

/* Contents of the child's stderr log (malloc'd, NUL-terminated) or NULL. */
char *e2e_read_log(const e2e_server *s);

/* ---- assertions (tests/lib/e2e_check.c): these fail the running cmocka test ---- */

/* @p out (capacity @p cap) gets the path of @p name in the server's temporary directory. */
void e2e_path(const e2e_server *s, const char *name, char *out, size_t cap);

/* Creates a pool through the service: POST /v1/pools with @p body must answer 201. */
void e2e_create_pool(const e2e_server *s, const char *body);

/* Runs EO_BIN with the arguments in @p args (a shell fragment of plain words: temporary paths
 * and options, nothing to quote), standard output into @p out; returns the exit code. */
int e2e_run_stdout(const char *args, const char *out);

/* `EO_BIN CMD ARGS 'INPUT'` exits 2 and its stderr (kept in @p errfile) says @p says. */
void e2e_expect_usage(const char *cmd, const char *args, const char *input, const char *errfile,
                      const char *says);

/* Posts lines [from, to) of the JSONL file @p path to pool @p pool's rounds: each answers 200. */
void e2e_post_lines(const e2e_server *s, const char *pool, const char *path, size_t from,
                    size_t to);

/* @p method @p path with @p key and @p body (NULL: none) answers @p status with error @p code
 * and, when @p field is not NULL, that field. */
void e2e_expect_error(const e2e_server *s, const char *method, const char *path,
                      const char *key, const char *body, long status, const char *code,
                      const char *field);

/* The whole file at @p path, NUL-terminated (malloc'd); *len (may be NULL) its length. */
char *e2e_slurp(const char *path, size_t *len);

/* Every line of the JSONL file @p ratings ({"id", fields…}, as --ratings-out writes it) equals
 * the service's lookup of that player in pool @p pool, in each field listed in @p keys
 * (NULL-ended; NULL: every field of the line). Returns the players compared. */
size_t e2e_expect_lookups(const e2e_server *s, const char *pool, const char *ratings,
                          const char *const *keys);

#endif
