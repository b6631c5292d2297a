/* libmicrohttpd glue. Each request gets one state block on its first callback; the answer is
 * queued only on a later callback (after the whole body arrived), which keeps keep-alive
 * connections alive. Updates suspend the connection while the writer works, so the few HTTP
 * threads keep serving lookups and splits meanwhile; the writer resumes it when the answer is
 * committed.
 *
 * Stopping. libmicrohttpd aborts the process if MHD_stop_daemon() finds a connection suspended
 * without a pending resume, and its threads keep reading requests on connections they already
 * accepted until they see the stop, so "nothing in flight" alone does not make stopping safe:
 * a request read in their last turn could still park. Two gates, each checked after the count
 * it pairs with (all sequentially consistent atomics), close that:
 * - a request counts itself in inflight on its first callback, then reads draining; one that
 *   sees it never parks (updates get 503 "draining"), and one that does not is counted when
 *   eo__http_stop, which sets draining first, waits for inflight to reach 0;
 * - a request about to park counts itself in parked, then reads closing; eo__http_stop sets
 *   closing when the drain ends (or times out) and then waits for parked to reach 0, which the
 *   writer brings about by asking to resume each connection it answers. */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "service/service.h"

enum { ST_NEW, ST_WAITING, ST_READY };

typedef struct req {
    struct eo_service *svc;
    struct MHD_Connection *conn;
    eo__gconn *gc; /* the connection as the guard sees it (may be NULL) */
    double t0;
    eo__match m;
    eo__call call;
    eo__job job;      /* the compute job, when the request runs one */
    eo__answer early; /* answer decided from the headers, sent once the (empty) body is in */
    eo__answer busy;  /* answer prepared while suspended (writer or pool refused) */
    char *body;
    size_t len, cap;
    size_t held;      /* bytes counted in svc->body_held for this request */
    bool has_early;
    bool drop;        /* the body is read and dropped: the early answer is a 413 (check_head) */
    bool quiet;       /* answered from the headers (no key, no route, bad framing): debug log */
    bool have_busy;
    bool late; /* began after the drain started: may not park */
    atomic_int state;
    int status;
    char method[16];
    char path[256];
    struct req *next_free;
} req;

/* Request blocks are larger than glibc's small-bin range, and allocating those consolidates
 * the fast bins on every request; each HTTP thread therefore keeps a few blocks (with their
 * body buffers) for reuse. A connection is served by one thread from start to completion, so
 * the cache needs no lock. */
typedef struct req_cache {
    req *head;
    unsigned n;
} req_cache;

#define REQ_CACHE_MAX 64
#define BODY_KEEP_MAX (64 * 1024)

void eo__req_cache_free(void *p)
{
    req_cache *c = p;
    while (c && c->head) {
        req *r = c->head;
        c->head = r->next_free;
        free(r->body);
        free(r);
    }
    free(c);
}

static req *req_get(struct eo_service *svc)
{
    req_cache *c = pthread_getspecific(svc->req_key);
    req *r;
    if (c && c->head) {
        r = c->head;
        c->head = r->next_free;
        c->n--;
        char *body = r->body;
        size_t cap = r->cap;
        memset(r, 0, sizeof *r);
        r->body = body;
        r->cap = cap;
        return r;
    }
    return calloc(1, sizeof *r);
}

static void req_put(struct eo_service *svc, req *r)
{
    req_cache *c = pthread_getspecific(svc->req_key);
    if (!c && (c = calloc(1, sizeof *c)) != NULL && pthread_setspecific(svc->req_key, c) != 0) {
        free(c);
        c = NULL;
    }
    if (!c || c->n >= REQ_CACHE_MAX) {
        free(r->body);
        free(r);
        return;
    }
    if (r->cap > BODY_KEEP_MAX) {
        free(r->body);
        r->body = NULL;
        r->cap = 0;
    }
    r->next_free = c->head;
    c->head = r;
    c->n++;
}

eo_store *eo__reader(struct eo_service *svc)
{
    eo_store *s = pthread_getspecific(svc->reader_key);
    if (s)
        return s;
    char err[200];
    if (eo_store_open(svc->db, EO_STORE_READONLY, &s, err, sizeof err) != 0) {
        eo__logline l;
        eo__log_begin(&l, EO_LOG_ERROR, "cannot open a read handle");
        eo__log_str(&l, "error", err);
        eo__log_end(&svc->log, EO_LOG_ERROR, &l);
        return NULL;
    }
    pthread_setspecific(svc->reader_key, s);
    return s;
}

const char *eo__call_arg(const eo__call *c, const char *name)
{
    return MHD_lookup_connection_value(c->conn, MHD_GET_ARGUMENT_KIND, name);
}

const char *eo__call_header(const eo__call *c, const char *name)
{
    return MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, name);
}

/* The headers of a page or its files (docs/SERVICE.md "Dashboard and reads"): nothing but the
 * service's own scripts, styles and requests, no framing by other sites, no referrer sent. */
static void page_headers(struct MHD_Response *resp)
{
    MHD_add_response_header(resp, "Content-Security-Policy",
                            "default-src 'none'; script-src 'self'; style-src 'self'; "
                            "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                            "form-action 'self'; frame-ancestors 'none'");
    MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(resp, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(resp, "X-Frame-Options", "DENY");
}

static enum MHD_Result send_answer(req *r, eo__answer *a)
{
    static char empty[] = "";
    struct MHD_Response *resp;
    eo__gconn_phase(r->gc, EO__PH_SERVICE);
    if (a->body)
        resp = MHD_create_response_from_buffer(a->len, a->body, MHD_RESPMEM_MUST_FREE);
    else
        resp = MHD_create_response_from_buffer(0, empty, MHD_RESPMEM_PERSISTENT);
    if (!resp) {
        free(a->body);
        a->body = NULL;
        return MHD_NO;
    }
    a->body = NULL; /* the response owns it now */
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
                            a->ctype ? a->ctype : "application/json");
    if (a->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, a->allow);
    if (a->retry_after)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, a->retry_after);
    if (a->www_auth)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, a->www_auth);
    if (a->cache)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, a->cache);
    if (a->etag)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ETAG, a->etag);
    if (a->page)
        page_headers(resp);
    r->status = a->status;
    enum MHD_Result ret = MHD_queue_response(r->conn, (unsigned)a->status, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* The writer's or the compute pool's answer is ready: the connection may go on. */
static void resume(req *r)
{
    struct eo_service *svc = r->svc; /* r may be completed and reused once resumed */
    atomic_store(&r->state, ST_READY);
    MHD_resume_connection(r->conn);
    atomic_fetch_sub(&svc->parked, 1);
}

static void writer_done(eo__wreq *w, void *ctx)
{
    (void)w;
    resume(ctx);
}

static void job_run(eo__job *j)
{
    req *r = (req *)(void *)((char *)j - offsetof(req, job));
    r->call.compute(&r->call);
}

static void job_done(eo__job *j)
{
    resume((req *)(void *)((char *)j - offsetof(req, job)));
}

/* Whether the request may suspend its connection for the writer (see the top of the file).
 * true: it is counted in parked, and the resume must be asked for before the count drops. */
static bool may_park(struct eo_service *svc, const req *r)
{
    if (r->late)
        return false;
    atomic_fetch_add(&svc->parked, 1);
    if (atomic_load(&svc->closing)) {
        atomic_fetch_sub(&svc->parked, 1);
        return false;
    }
    return true;
}

static bool parse_size(const char *s, unsigned long long *out)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return false;
    errno = 0;
    *out = strtoull(s, &end, 10);
    return errno == 0 && *end == '\0';
}

/* The framing headers of a request, counted. */
typedef struct framing {
    unsigned content_length, transfer_encoding, host;
    const char *te;  /* the Transfer-Encoding value */
    bool bad_name;   /* a header name with a character no name may hold */
} framing;

/* RFC 9110 §5.1: a field name is a token. libmicrohttpd 0.9.75 keeps whitespace before the
 * colon, and an obs-fold continuation, in the name: such a name hides a framing header from
 * this service while a proxy in front may honour it, so the request is refused. */
static bool token(const char *s)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";
    if (*s == '\0')
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        if (!alnum && (c == '\0' || strchr(extra, c) == NULL))
            return false;
    }
    return true;
}

/* Whether @p key is one of the framing headers with more after it: libmicrohttpd 0.9.75
 * appends an obs-fold continuation line to the header's name ("Transfer-Encoding: gz\r\n ip"
 * gives the name "Transfer-Encodingip"), hiding the header from us while an intermediary that
 * unfolds sees it; RFC 9112 §5.2 lets a server refuse folding. */
static bool folded_framing(const char *key)
{
    static const char *const names[] = {MHD_HTTP_HEADER_CONTENT_LENGTH,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING, MHD_HTTP_HEADER_HOST};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(key, names[i], n) == 0 && key[n] != '\0')
            return true;
    }
    return false;
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                    const char *value)
{
    framing *f = cls;
    (void)kind;
    if (!token(key) || folded_framing(key))
        f->bad_name = true;
    else if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0)
        f->content_length++;
    else if (strcasecmp(key, MHD_HTTP_HEADER_HOST) == 0)
        f->host++;
    else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
        f->transfer_encoding++;
        f->te = value;
    }
    return MHD_YES;
}

/* Requests whose framing two parties could read differently (a proxy in front and this
 * service), refused before their body: docs/SERVICE.md "HTTP". 1 with the answer in @p a. */
static int framing_error(struct MHD_Connection *conn, const char *version, eo__answer *a)
{
    framing f = {0};
    const char *why = NULL;
    bool v10 = strcmp(version, MHD_HTTP_VERSION_1_0) == 0;
    if (!v10 && strcmp(version, MHD_HTTP_VERSION_1_1) != 0) {
        eo__answer_error(a, 505, "invalid_http", "only HTTP/1.0 and HTTP/1.1 are served", NULL);
        return 1;
    }
    MHD_get_connection_values(conn, MHD_HEADER_KIND, count_header, &f);
    if (f.bad_name)
        why = "a header name with whitespace or another character a name may not hold, or a "
              "folded framing header";
    else if (f.content_length > 1)
        why = "more than one Content-Length header";
    else if (f.content_length && f.transfer_encoding)
        why = "both Content-Length and Transfer-Encoding";
    else if (f.transfer_encoding && v10)
        why = "Transfer-Encoding in an HTTP/1.0 request";
    else if (f.transfer_encoding > 1 || (f.te && strcasecmp(f.te, "chunked") != 0))
        why = "a Transfer-Encoding other than chunked";
    else if (f.host > 1)
        why = "more than one Host header";
    else if (f.host == 0 && !v10)
        why = "an HTTP/1.1 request without a Host header";
    if (why == NULL)
        return 0;
    eo__answer_error(a, 400, "invalid_http", why, NULL);
    return 1;
}

/* Holds @p n more bytes of body against the service's budget. false: over it (nothing held). */
static bool hold(req *r, size_t n)
{
    struct eo_service *svc = r->svc;
    size_t before = atomic_fetch_add(&svc->body_held, n);
    if (before + n > svc->cfg.body_budget) {
        atomic_fetch_sub(&svc->body_held, n);
        atomic_fetch_add_explicit(&svc->metrics.refused[EO__BUSY_BODIES], 1,
                                  memory_order_relaxed);
        return false;
    }
    r->held += n;
    return true;
}

static void overloaded(eo__answer *a, const char *what)
{
    memset(a, 0, sizeof *a);
    a->retry_after = "1";
    eo__answer_error(a, 503, "overloaded", what, NULL);
}

/* Everything that can be decided before the body: framing, route, key, content type, size,
 * the body budget. 1 with the answer in @p a. */
static int check_head(req *r, const char *version, bool *has_body, eo__answer *a)
{
    struct eo_service *svc = r->svc;
    struct MHD_Connection *conn = r->conn;
    memset(a, 0, sizeof *a);
    unsigned long long cl = 0;
    const char *clh = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                  MHD_HTTP_HEADER_CONTENT_LENGTH);
    bool chunked = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                               MHD_HTTP_HEADER_TRANSFER_ENCODING) != NULL;
    bool cl_ok = !clh || parse_size(clh, &cl);
    *has_body = chunked || cl > 0 || !cl_ok;
    if (framing_error(conn, version, a)) {
        *has_body = true; /* whatever follows is not read: the connection closes after */
        return 1;
    }
    if (eo__route_check(&r->call, a))
        return 1;
    if (*has_body && eo__routes[r->m.route].body == EO__BODY_NONE) {
        /* Before anything is held: a route without a body (some need no key) must not let a
         * client hold the bodies' budget. */
        eo__answer_error(a, 413, "body_too_large", "this route takes no request body", NULL);
        return 1;
    }
    if (!cl_ok) {
        eo__answer_error(a, 400, "invalid_http", "a malformed Content-Length header", NULL);
        return 1;
    }
    if (cl > svc->cfg.body_max) {
        eo__answer_error(a, 413, "body_too_large", "the request body exceeds the limit", NULL);
        /* Answered and closed while the client still sends, the connection is reset and the
         * client may lose the answer (the unread body makes the close a TCP reset): a body up
         * to four times the limit is read and dropped first, held nowhere, and the answer
         * follows it on a connection that stays open. */
        if (cl / 4 <= svc->cfg.body_max) {
            *has_body = false;
            r->drop = true;
        }
        return 1;
    }
    if (cl > 0 && !hold(r, (size_t)cl)) {
        overloaded(a, "too many request bodies in memory; retry later");
        return 1;
    }
    return 0;
}

/* The first callback of a request: its headers are complete. */
static enum MHD_Result on_headers(struct eo_service *svc, struct MHD_Connection *conn,
                                  const char *url, const char *method, const char *version,
                                  void **con_cls)
{
    req *r = req_get(svc);
    if (!r)
        return MHD_NO;
    r->svc = svc;
    r->conn = conn;
    r->t0 = eo__mono_s();
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    r->gc = ci ? ci->socket_context : NULL;
    eo__gconn_phase(r->gc, EO__PH_BODY);
    snprintf(r->method, sizeof r->method, "%s", method);
    snprintf(r->path, sizeof r->path, "%s", url);
    /* HEAD is answered wherever GET is; libmicrohttpd leaves the body out. */
    bool head = strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
    eo__route_match(head ? MHD_HTTP_METHOD_GET : method, url, &r->m);
    atomic_init(&r->state, ST_NEW);
    *con_cls = r;
    atomic_fetch_add(&svc->inflight, 1);
    r->late = atomic_load(&svc->draining); /* after the count: see the top of the file */
    r->call.svc = svc;
    r->call.m = &r->m;
    r->call.method = head ? MHD_HTTP_METHOD_GET : r->method;
    r->call.authz = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_AUTHORIZATION);
    r->call.ctype = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
                                                MHD_HTTP_HEADER_CONTENT_TYPE);
    r->call.conn = conn;
    bool has_body = false;
    eo__answer a;
    if (!check_head(r, version, &has_body, &a))
        return MHD_YES;
    r->quiet = true;
    if (has_body) /* answered before the body: libmicrohttpd reads none and closes after */
        return send_answer(r, &a);
    r->early = a; /* nothing to read: answered on the next callback, keeping the connection */
    r->has_early = true;
    return MHD_YES;
}

/* A piece of the body arrived. */
static enum MHD_Result on_upload(req *r, const char *data, size_t n)
{
    size_t body_max = r->svc->cfg.body_max;
    eo__gconn_body(r->gc, n);
    if (r->drop)
        return MHD_YES;
    /* A body that passes the limit or the budget while it arrives (chunked) cannot be
     * answered in the middle (libmicrohttpd 0.9.75): the connection is closed. */
    if (r->len + n > body_max)
        return MHD_NO;
    if (r->len + n + 1 > r->cap) {
        size_t ncap = r->cap ? r->cap : 1024;
        while (ncap < r->len + n + 1)
            ncap *= 2;
        if (ncap > body_max + 1)
            ncap = body_max + 1;
        /* A body of announced length is held already; one sent in chunks grows its hold
         * (the terminating NUL is the service's, not counted). */
        if (ncap - 1 > r->held && !hold(r, ncap - 1 - r->held))
            return MHD_NO;
        char *nb = realloc(r->body, ncap);
        if (!nb)
            return MHD_NO;
        r->body = nb;
        r->cap = ncap;
    }
    memcpy(r->body + r->len, data, n);
    r->len += n;
    r->body[r->len] = '\0';
    return MHD_YES;
}

/* Parks the connection and hands the request to the writer or the compute pool. */
static enum MHD_Result park(req *r, eo__run run)
{
    struct eo_service *svc = r->svc;
    eo__answer a;
    if (!may_park(svc, r)) {
        eo__route_busy(&r->call, &a); /* 503 "draining" */
        return send_answer(r, &a);
    }
    /* Suspend first, then submit: the resume can never precede the suspend. */
    atomic_store(&r->state, ST_WAITING);
    MHD_suspend_connection(r->conn);
    int rc;
    if (run == EO__RUN_WRITER) {
        r->call.w.done = writer_done;
        r->call.w.done_ctx = r;
        rc = eo__writer_submit(svc->writer, &r->call.w);
        if (rc != 0 && !atomic_load(&svc->draining))
            atomic_fetch_add_explicit(&svc->metrics.refused[EO__BUSY_WRITER], 1,
                                      memory_order_relaxed);
    } else {
        r->job.run = job_run;
        r->job.done = job_done;
        rc = eo__compute_submit(svc->compute, &r->job);
    }
    if (rc != 0) {
        eo__route_busy(&r->call, &r->busy);
        r->have_busy = true;
        resume(r);
    }
    return MHD_YES;
}

/* The last callback of a request (its body is in), or one after its resume. */
static enum MHD_Result on_body_done(req *r)
{
    eo__answer a;
    memset(&a, 0, sizeof a);
    if (r->status)
        return MHD_YES; /* answered already (before the body) */
    int st = atomic_load(&r->state);
    if (st == ST_WAITING)
        return MHD_YES; /* not resumed yet (should not happen) */
    if (st == ST_READY) {
        if (r->have_busy) {
            a = r->busy;
            r->busy.body = NULL; /* the answer owns it now */
        } else if (r->call.compute) {
            a = r->call.out;
            r->call.out.body = NULL;
        } else {
            eo__route_finish(&r->call, &a);
        }
        return send_answer(r, &a);
    }
    if (r->has_early) {
        r->has_early = false;
        a = r->early;
        r->early.body = NULL;
        return send_answer(r, &a);
    }
    eo__gconn_phase(r->gc, EO__PH_SERVICE);
    r->call.body = r->body && r->len ? r->body : "";
    r->call.body_len = r->len;
    eo__run run = eo__route_run(&r->call, &a);
    if (run == EO__RUN_DONE)
        return send_answer(r, &a);
    return park(r, run);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload_data, size_t *upload_size, void **con_cls)
{
    req *r = *con_cls;
    if (!r)
        return on_headers(cls, conn, url, method, version, con_cls);
    if (*upload_size) {
        size_t n = *upload_size;
        *upload_size = 0;
        return on_upload(r, upload_data, n);
    }
    return on_body_done(r);
}

static socklen_t addr_len(const struct sockaddr *sa)
{
    return sa && sa->sa_family == AF_INET6 ? (socklen_t)sizeof(struct sockaddr_in6)
                                           : (socklen_t)sizeof(struct sockaddr_in);
}

static void client_addr(struct MHD_Connection *conn, char *buf, size_t cap)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    snprintf(buf, cap, "-");
    if (!ci || !ci->client_addr)
        return;
    const struct sockaddr *sa = ci->client_addr;
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        char ip[INET_ADDRSTRLEN];
        if (inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip))
            snprintf(buf, cap, "%s:%u", ip, (unsigned)ntohs(in->sin_port));
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        char ip[INET6_ADDRSTRLEN];
        if (inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip))
            snprintf(buf, cap, "[%s]:%u", ip, (unsigned)ntohs(in6->sin6_port));
    }
}

static void log_request(struct eo_service *svc, struct MHD_Connection *conn, const req *r,
                        double dur, enum MHD_RequestTerminationCode toe)
{
    /* A request refused from its headers alone (no key, no route, bad framing) is logged at
     * debug: a scanner's flood must not become a log flood; /metrics counts them. */
    int level = r->status >= 500                ? EO_LOG_WARN
                : r->status != 0 && !r->quiet ? EO_LOG_INFO
                                              : EO_LOG_DEBUG;
    if (!svc->log.f || level < svc->log.level)
        return;
    char remote[80];
    eo__logline l;
    client_addr(conn, remote, sizeof remote);
    eo__log_begin(&l, level, r->status ? "request" : "request aborted");
    eo__log_str(&l, "method", r->method);
    eo__log_str(&l, "path", r->path);
    eo__log_int(&l, "status", r->status);
    eo__log_ms(&l, "dur_ms", dur * 1000.0);
    eo__log_str(&l, "remote", remote);
    if (toe != MHD_REQUEST_TERMINATED_COMPLETED_OK)
        eo__log_int(&l, "termination", (long long)toe);
    eo__log_end(&svc->log, level, &l);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct eo_service *svc = cls;
    req *r = *con_cls;
    if (!r)
        return;
    double dur = eo__mono_s() - r->t0;
    if (r->status)
        eo__metrics_request(&svc->metrics, r->m.route, r->status, dur);
    log_request(svc, conn, r, dur, toe);
    json_decref(r->call.json);
    free(r->call.w.resp);
    if (r->call.work_free)
        r->call.work_free(r->call.work);
    free(r->call.out.body);
    free(r->busy.body);
    free(r->early.body);
    if (r->held)
        atomic_fetch_sub(&svc->body_held, r->held);
    eo__gconn_phase(r->gc, EO__PH_HEADERS); /* the next request's headers, if any */
    *con_cls = NULL;
    req_put(svc, r);
    atomic_fetch_sub(&svc->inflight, 1);
}

/* A connection is accepted only within the guard's caps. */
static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr, socklen_t len)
{
    struct eo_service *svc = cls;
    return eo__guard_admit(svc->guard, addr, len) ? MHD_YES : MHD_NO;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct eo_service *svc = cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        eo__guard_close(svc->guard, *socket_context);
        *socket_context = NULL;
        return;
    }
    const union MHD_ConnectionInfo *fd = MHD_get_connection_info(conn,
                                                                 MHD_CONNECTION_INFO_CONNECTION_FD);
    const union MHD_ConnectionInfo *ad = MHD_get_connection_info(conn,
                                                                 MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    const struct sockaddr *sa = ad ? ad->client_addr : NULL;
    *socket_context = fd ? eo__guard_open(svc->guard, fd->connect_fd, sa, addr_len(sa)) : NULL;
}

/* Keeps the path percent-encoded: routes.c splits on '/' first and decodes each segment, so
 * an id may hold an encoded '/'. */
static size_t keep_escaped(void *cls, struct MHD_Connection *c, char *s)
{
    (void)cls;
    (void)c;
    return strlen(s);
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct eo_service *svc = cls;
    if (!eo__guard_log_allow(svc->guard))
        return; /* counted into the guard's summary: a flood must not become a log flood */
    char msg[300];
    vsnprintf(msg, sizeof msg, fmt, ap);
    size_t n = strlen(msg);
    while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
        msg[--n] = '\0';
    eo__logline l;
    eo__log_begin(&l, EO_LOG_WARN, "libmicrohttpd");
    eo__log_str(&l, "detail", msg);
    eo__log_end(&svc->log, EO_LOG_WARN, &l);
}

/* "HOST:PORT" or "[V6]:PORT" to a socket address. */
static int parse_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *sslen,
                        bool *v6, char *err, size_t errlen)
{
    char host[256];
    const char *port;
    if (!listen || !*listen) {
        snprintf(err, errlen, "--listen: expected HOST:PORT");
        return EO_EINVAL;
    }
    if (listen[0] == '[') {
        const char *close = strchr(listen, ']');
        if (!close || close[1] != ':' || (size_t)(close - listen - 1) >= sizeof host) {
            snprintf(err, errlen, "--listen: expected [IPV6]:PORT, got '%s'", listen);
            return EO_EINVAL;
        }
        memcpy(host, listen + 1, (size_t)(close - listen - 1));
        host[close - listen - 1] = '\0';
        port = close + 2;
    } else {
        const char *colon = strrchr(listen, ':');
        if (!colon || colon == listen || (size_t)(colon - listen) >= sizeof host) {
            snprintf(err, errlen, "--listen: expected HOST:PORT, got '%s'", listen);
            return EO_EINVAL;
        }
        memcpy(host, listen, (size_t)(colon - listen));
        host[colon - listen] = '\0';
        port = colon + 1;
    }
    char *end;
    errno = 0;
    long pn = strtol(port, &end, 10);
    if (!*port || *end || errno || pn < 0 || pn > 65535) {
        snprintf(err, errlen, "--listen: bad port '%s'", port);
        return EO_EINVAL;
    }
    struct addrinfo hints, *res = NULL;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int gr = getaddrinfo(host, port, &hints, &res);
    if (gr != 0 || !res) {
        snprintf(err, errlen, "--listen: cannot resolve '%s': %s", host, gai_strerror(gr));
        return EO_EINVAL;
    }
    memcpy(ss, res->ai_addr, res->ai_addrlen);
    *sslen = res->ai_addrlen;
    *v6 = res->ai_family == AF_INET6;
    freeaddrinfo(res);
    return 0;
}

/* The connection cap when none is configured: half the open-file limit (the rest is for the
 * database, the log and the threads), at most 4096. */
static unsigned default_max_connections(void)
{
    struct rlimit rl;
    rlim_t n = getrlimit(RLIMIT_NOFILE, &rl) == 0 ? rl.rlim_cur : 1024;
    if (n == RLIM_INFINITY || n > 8192)
        n = 8192;
    return n / 2 > 16 ? (unsigned)(n / 2) : 16;
}

static int start_guard(struct eo_service *svc, char *err, size_t errlen)
{
    if (svc->cfg.max_connections == 0)
        svc->cfg.max_connections = default_max_connections();
    eo__guard_config gc = {
        .max_total = svc->cfg.max_connections,
        .max_per_address = svc->cfg.max_per_address,
        .header_timeout_ms = (int64_t)svc->cfg.header_timeout_s * 1000,
        .body_grace_ms = 2000,
        .body_min_rate = svc->cfg.body_min_rate,
    };
    int rc = eo__guard_start(&gc, &svc->metrics, &svc->log, &svc->guard);
    if (rc != 0)
        snprintf(err, errlen, "cannot start the connection guard: %s", eo_strerror(rc));
    return rc;
}

int eo__http_start(struct eo_service *svc, char *err, size_t errlen)
{
    struct sockaddr_storage ss;
    socklen_t sslen;
    bool v6;
    int rc = parse_listen(svc->listen, &ss, &sslen, &v6, err, errlen);
    if (rc != 0 || (rc = start_guard(svc, err, errlen)) != 0)
        return rc;
    unsigned threads = svc->cfg.threads;
    if (threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        threads = nc > 0 ? (unsigned)nc : 1;
    }
    unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME |
                     MHD_USE_ERROR_LOG;
    flags |= MHD_is_feature_supported(MHD_FEATURE_EPOLL) == MHD_YES ? MHD_USE_EPOLL : MHD_USE_AUTO;
    if (v6)
        flags |= MHD_USE_IPv6;
    /* The guard's caps are the real ones; libmicrohttpd's limit is split between its threads,
     * so each thread's share is set to the whole cap and never binds first. */
    unsigned mhd_limit = svc->cfg.max_connections * threads;
    svc->mhd = MHD_start_daemon(
        flags, 0, on_accept, svc, on_request, svc, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, svc,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
        MHD_OPTION_THREAD_POOL_SIZE, threads, MHD_OPTION_CONNECTION_LIMIT, mhd_limit,
        MHD_OPTION_CONNECTION_TIMEOUT, svc->cfg.conn_timeout_s,
        MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024u, MHD_OPTION_NOTIFY_COMPLETED, on_completed, svc,
        MHD_OPTION_NOTIFY_CONNECTION, on_connection, svc,
        MHD_OPTION_UNESCAPE_CALLBACK, keep_escaped, NULL, MHD_OPTION_END);
    if (!svc->mhd) {
        snprintf(err, errlen, "cannot listen on %s (address in use or not available?)",
                 svc->listen);
        eo__guard_stop(svc->guard);
        svc->guard = NULL;
        return EO_EIO;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(svc->mhd, MHD_DAEMON_INFO_BIND_PORT);
    svc->port = di ? di->port : 0;
    return 0;
}

void eo__http_stop(struct eo_service *svc)
{
    if (!svc->mhd)
        return;
    atomic_store(&svc->draining, true);
    /* The quiesced listening socket stays open until MHD_stop_daemon() returns: the daemon's
     * threads may still be using it (libmicrohttpd's contract for MHD_quiesce_daemon), and
     * closing it early can make one of them fail on it and abort the process. */
    MHD_socket ls = MHD_quiesce_daemon(svc->mhd);
    double deadline = eo__mono_s() + svc->cfg.drain_timeout_ms / 1000.0;
    struct timespec tick = {0, 5 * 1000 * 1000};
    while (atomic_load(&svc->inflight) > 0 && eo__mono_s() < deadline)
        nanosleep(&tick, NULL);
    long left = atomic_load(&svc->inflight);
    if (left > 0) {
        eo__logline l;
        eo__log_begin(&l, EO_LOG_WARN, "drain timed out");
        eo__log_int(&l, "in_flight", left);
        eo__log_end(&svc->log, EO_LOG_WARN, &l);
    }
    /* Requests still in flight after a timeout may not park any more; those parked already
     * are waited for (the writer is still running and answers everything it was given). Their
     * connections are then closed by MHD_stop_daemon, answered or not. */
    atomic_store(&svc->closing, true);
    while (atomic_load(&svc->parked) > 0)
        nanosleep(&tick, NULL);
    MHD_stop_daemon(svc->mhd);
    svc->mhd = NULL;
    if (ls != MHD_INVALID_SOCKET)
        close(ls);
    eo__guard_stop(svc->guard);
    svc->guard = NULL;
}
