/* bench_abuse: how `evenodds serve` holds up against hostile keyless clients while a
 * well-behaved game server uses it (bench/README.md, "Abuse"). One run on loopback: the real
 * binary on a temporary database (started by tests/lib/e2e.c), a pool seeded with rounds, then
 * the same well-behaved measurements twice: unloaded, and under attack (idle and slow keyless
 * connections from other loopback addresses, heavy balancer requests with the server key).
 * It prints figures with the targets beside them and asserts nothing: a bench, not a
 * test. Every request has a timeout and every phase an end, so a run ends in bounded time
 * however badly the service does. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <curl/curl.h>

#include "bench_util.h"
#include "e2e.h"

#ifndef IP_BIND_ADDRESS_NO_PORT
#define IP_BIND_ADDRESS_NO_PORT 24 /* Linux >= 4.2; older headers lack the name */
#endif

#define EXTRA_MAX 22           /* e2e_start() takes 24 extra serve arguments; we add two */
#define BODY_MAX 8192          /* a heavy split body is ~3 KB, a round ~0.6 KB */
#define CONNECT_TIMEOUT_S 5.0  /* an attack connect still unanswered is abandoned and re-opened */
#define HEAVY_TIMEOUT_MS 60000 /* heavy requests are aborted at the end anyway */
#define HEAVY_PLAYERS 64
#define TEAM 12
#define POOL "abuse"

static const char usage[] =
    "usage: bench_abuse [options] [EVENODDS] [-- SERVE_ARGS...]\n"
    "\n"
    "Starts `EVENODDS serve` (default: $EO_BIN, else build-bench/evenodds) on 127.0.0.1 with a\n"
    "temporary database and keys file, seeds pool \"" POOL "\" with rounds, and measures a\n"
    "well-behaved game server's requests from 127.0.0.1 twice: unloaded, then under attack by\n"
    "idle and slow keyless connections from 127.0.0.2 onwards while heavy balancer splits run.\n"
    "Prints latencies, the rounds rate, failures, attack connection counts and the service's\n"
    "memory beside the targets; asserts nothing. Raises its open-file limit to the hard limit\n"
    "(the service inherits it).\n"
    "\n"
    "  --duration S    seconds measured under attack (default 15)\n"
    "  --baseline S    seconds measured unloaded (default 5)\n"
    "  --warmup S      seconds from starting the attack to measuring (default 2)\n"
    "  --idle N        idle keyless connections: connect, send nothing (default 2000)\n"
    "  --slow N        slow keyless connections: one header byte per second (default 500)\n"
    "  --addrs N       their source addresses, 127.0.0.2 onwards (default 32)\n"
    "  --reopen-ms MS  wait before re-opening one the server closed or refused (default 100)\n"
    "  --heavy N       heavy splits in flight: 64 players, parties, locks, scramble (default 4)\n"
    "  --budget-ms MS  their budget_ms (default 5000; the service takes 1-10000)\n"
    "  --players N     players seeded into the pool (default 3000)\n"
    "  --threads N     well-behaved round threads, one kept-alive connection each (default 8)\n"
    "  --probe-ms MS   each latency probe sends one request per MS (default 25)\n"
    "  --timeout S     well-behaved request timeout, connect included (default 10)\n"
    "  --bin PATH      the evenodds binary (as EVENODDS)\n"
    "  -- ARGS         more `evenodds serve` arguments (at most 22), e.g. -- --threads 4\n";

typedef struct opts {
    const char *bin;
    double duration_s, baseline_s, warmup_s;
    unsigned long idle, slow, addrs, reopen_ms, heavy, budget_ms, players, threads, probe_ms,
        timeout_s;
    const char *extra[EXTRA_MAX + 1];
    size_t nextra;
} opts;

static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
    (void)sig;
    g_interrupted = 1;
}

/* ---- options ---- */

static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno != 0 || end == s || *end != '\0' || !isfinite(v) || v < 0 || v > 86400)
        return -1;
    *out = v;
    return 0;
}

static void opts_default(opts *o)
{
    *o = (opts){.duration_s = 15, .baseline_s = 5, .warmup_s = 2, .idle = 2000, .slow = 500,
                .addrs = 32, .reopen_ms = 100, .heavy = 4, .budget_ms = 5000, .players = 3000,
                .threads = 8, .probe_ms = 25, .timeout_s = 10};
}

/* One option with a value at argv[*i]. 1 taken, 0 not this kind of option, -1 bad value. */
static int parse_valued(opts *o, int argc, char **argv, int *i)
{
    const struct {
        const char *name;
        unsigned long *dst, lo, hi;
    } u[] = {
        {"--idle", &o->idle, 0, 1000000},         {"--slow", &o->slow, 0, 1000000},
        {"--addrs", &o->addrs, 1, 60000},         {"--reopen-ms", &o->reopen_ms, 0, 60000},
        {"--heavy", &o->heavy, 0, 256},           {"--budget-ms", &o->budget_ms, 1, 10000},
        {"--players", &o->players, 64, 10000000}, {"--threads", &o->threads, 1, 256},
        {"--probe-ms", &o->probe_ms, 1, 60000},   {"--timeout", &o->timeout_s, 1, 3600},
    };
    const struct {
        const char *name;
        double *dst;
    } s[] = {{"--duration", &o->duration_s}, {"--baseline", &o->baseline_s},
             {"--warmup", &o->warmup_s}};
    const char *a = argv[*i];
    bool known = strcmp(a, "--bin") == 0;
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++)
        known = known || strcmp(a, u[k].name) == 0;
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        known = known || strcmp(a, s[k].name) == 0;
    if (!known)
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "bench_abuse: %s needs a value (see --help)\n", a);
        return -1;
    }
    const char *v = argv[++*i];
    if (strcmp(a, "--bin") == 0) {
        o->bin = v;
        return 1;
    }
    for (size_t k = 0; k < sizeof s / sizeof s[0]; k++)
        if (strcmp(a, s[k].name) == 0) {
            if (parse_seconds(v, s[k].dst) == 0)
                return 1;
            fprintf(stderr, "bench_abuse: %s: expected seconds (0-86400), got '%s'\n", a, v);
            return -1;
        }
    for (size_t k = 0; k < sizeof u / sizeof u[0]; k++) {
        unsigned long long n;
        if (strcmp(a, u[k].name) != 0)
            continue;
        if (bench_parse_u(v, &n) == 0 && n >= u[k].lo && n <= u[k].hi) {
            *u[k].dst = (unsigned long)n;
            return 1;
        }
        fprintf(stderr, "bench_abuse: %s: expected a whole number in [%lu, %lu], got '%s'\n", a,
                u[k].lo, u[k].hi, v);
        return -1;
    }
    return -1;
}

/* 0 run, 1 help printed, -1 error printed. */
static int parse_opts(int argc, char **argv, opts *o)
{
    opts_default(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 1;
        } else if (strcmp(a, "--") == 0) {
            if (argc - i - 1 > EXTRA_MAX) {
                fprintf(stderr, "bench_abuse: at most %d serve arguments after --\n", EXTRA_MAX);
                return -1;
            }
            while (++i < argc)
                o->extra[o->nextra++] = argv[i];
        } else if ((r = parse_valued(o, argc, argv, &i)) != 0) {
            if (r < 0)
                return -1;
        } else if (a[0] != '-' && !o->bin) {
            o->bin = a;
        } else {
            fprintf(stderr, "bench_abuse: unknown argument '%s' (see --help)\n", a);
            return -1;
        }
    }
    if (!o->bin) {
        const char *env = getenv("EO_BIN");
        o->bin = env && *env ? env : "build-bench/evenodds";
    }
    if (access(o->bin, X_OK) != 0) {
        fprintf(stderr, "bench_abuse: %s: %s (build it with `make bench`, or give the path)\n",
                o->bin, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the machine and the service process, from /proc ---- */

static void cpu_model(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        const char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(out, cap, "%.*s", (int)strcspn(colon + 2, "\n"), colon + 2);
            break;
        }
    }
    if (f)
        fclose(f);
}

static void loadavg(char *out, size_t cap)
{
    snprintf(out, cap, "unknown");
    FILE *f = fopen("/proc/loadavg", "r");
    double a, b, c;
    if (f && fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3)
        snprintf(out, cap, "%.2f %.2f %.2f", a, b, c);
    if (f)
        fclose(f);
}

/* The line of /proc/PID/FILE that starts with @p key, after the key (trimmed), or "". */
static void proc_line(pid_t pid, const char *file, const char *key, char *out, size_t cap)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%ld/%s", (long)pid, file);
    out[0] = '\0';
    FILE *f = fopen(path, "r");
    size_t kl = strlen(key);
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) != 0)
            continue;
        const char *v = line + kl;
        while (*v == ' ' || *v == '\t')
            v++;
        snprintf(out, cap, "%.*s", (int)strcspn(v, "\n"), v);
        break;
    }
    if (f)
        fclose(f);
}

/* False once the process has exited (a zombie until e2e_stop() reaps it) or is gone. */
static bool proc_alive(pid_t pid)
{
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(line, 1, sizeof line - 1, f) : 0;
    if (f)
        fclose(f);
    line[n] = '\0';
    const char *paren = strrchr(line, ')'); /* the name may hold spaces and parentheses */
    return paren && paren[1] == ' ' && paren[2] != 'Z' && paren[2] != 'X';
}

/* VmRSS, VmHWM …: kB, or -1. */
static long proc_kb(pid_t pid, const char *key)
{
    char v[128];
    proc_line(pid, "status", key, v, sizeof v);
    char *end;
    errno = 0;
    long kb = strtol(v, &end, 10);
    return errno == 0 && end != v ? kb : -1;
}

/* Sockets the process holds (its fds that link to "socket:[…]"), or -1. */
static long proc_sockets(pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/fd", (long)pid);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    long n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char target[64];
        ssize_t len = readlinkat(dirfd(d), e->d_name, target, sizeof target - 1);
        n += len > 7 && strncmp(target, "socket:", 7) == 0;
    }
    closedir(d);
    return n;
}

/* ---- what the well-behaved client saw ---- */

/* O_CTIMEOUT: timed out before the connection was made; O_TIMEOUT: after, waiting. */
typedef enum outcome {
    O_OK,
    O_HTTP,
    O_REFUSED,
    O_RESET,
    O_CTIMEOUT,
    O_TIMEOUT,
    O_ABORTED,
    O_OTHER
} outcome;

/* Latencies (ms) of requests answered (any status) or timed out (at their elapsed time, so a
 * timeout weighs in the percentiles as at least the timeout); refusals and resets are counted
 * only: their time says nothing about the service's speed. A paced probe that waits L ms for
 * one answer holds back the requests it would have sent meanwhile; as HdrHistogram's
 * expected-interval correction does, they count too, as L - interval, L - 2 interval, … (so
 * one stall weighs by its length, not as one sample: no coordinated omission). */
typedef struct tally {
    double *ms;
    size_t n, cap;
    unsigned long count[O_OTHER + 1];
    long http_status; /* the first non-200 answer's status */
} tally;

static void tally_push(tally *t, double ms)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        double *p = realloc(t->ms, cap * sizeof *p);
        if (!p)
            return; /* a lost sample; the counts stay right */
        t->ms = p;
        t->cap = cap;
    }
    t->ms[t->n++] = ms;
}

/* @p from_ms, @p to_ms: the window, relative to the request's start; requests held back count
 * only if they would have been sent within it. */
static void tally_add(tally *t, outcome oc, double ms, long status, double interval_ms,
                      double from_ms, double to_ms)
{
    t->count[oc]++;
    if (oc == O_HTTP && !t->http_status)
        t->http_status = status;
    if (oc != O_OK && oc != O_HTTP && oc != O_TIMEOUT && oc != O_CTIMEOUT)
        return;
    tally_push(t, ms);
    for (double at = interval_ms; interval_ms > 0 && ms - at >= interval_ms && at <= to_ms;
         at += interval_ms)
        if (at >= from_ms)
            tally_push(t, ms - at);
}

static void tally_merge(tally *into, const tally *t)
{
    for (size_t i = 0; i < t->n; i++)
        tally_push(into, t->ms[i]);
    for (int k = 0; k <= O_OTHER; k++)
        into->count[k] += t->count[k];
    if (!into->http_status)
        into->http_status = t->http_status;
}

static unsigned long tally_sent(const tally *t)
{
    unsigned long n = 0;
    for (int k = 0; k <= O_OTHER; k++)
        n += k == O_ABORTED ? 0 : t->count[k];
    return n;
}

/* Nearest-rank percentile of the sorted samples (p in (0, 1]); NAN when there are none. */
static double pct(const tally *t, double p)
{
    if (t->n == 0)
        return NAN;
    size_t r = (size_t)ceil(p * (double)t->n);
    return t->ms[r ? r - 1 : 0];
}

/* ---- HTTP, one libcurl easy handle per thread ---- */

typedef struct client {
    CURL *c;
    struct curl_slist *hdrs;
    const char *base;
} client;

static size_t discard(char *data, size_t sz, size_t nm, void *ud)
{
    (void)data;
    (void)ud;
    return sz * nm;
}

/* Heavy requests still running at the end are given up rather than waited for. */
static int on_progress(void *ud, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
    (void)dt, (void)dn, (void)ut, (void)un;
    return atomic_load((atomic_bool *)ud) ? 1 : 0;
}

/* @p key NULL: no Authorization (health probes carry none). @p fresh: a new connection for
 * every request, closed after it; else libcurl keeps the connection alive as a game server's
 * does (and reconnects when the service closed it). */
static int client_init(client *cl, const char *base, const char *key, bool fresh,
                       long timeout_ms, atomic_bool *abort_flag)
{
    memset(cl, 0, sizeof *cl);
    cl->base = base;
    cl->c = curl_easy_init();
    if (!cl->c)
        return -1;
    char hb[128];
    if (key) {
        snprintf(hb, sizeof hb, "Authorization: Bearer %s", key);
        cl->hdrs = curl_slist_append(cl->hdrs, hb);
    }
    cl->hdrs = curl_slist_append(cl->hdrs, "Content-Type: application/json");
    cl->hdrs = curl_slist_append(cl->hdrs, "Expect:"); /* no 100-continue wait on large bodies */
    curl_easy_setopt(cl->c, CURLOPT_HTTPHEADER, cl->hdrs);
    curl_easy_setopt(cl->c, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(cl->c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(cl->c, CURLOPT_TIMEOUT_MS, timeout_ms);
    curl_easy_setopt(cl->c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
    if (fresh) {
        curl_easy_setopt(cl->c, CURLOPT_FRESH_CONNECT, 1L);
        curl_easy_setopt(cl->c, CURLOPT_FORBID_REUSE, 1L);
    }
    if (abort_flag) {
        curl_easy_setopt(cl->c, CURLOPT_NOPROGRESS, 0L);
        curl_easy_setopt(cl->c, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(cl->c, CURLOPT_XFERINFODATA, abort_flag);
    }
    return 0;
}

static void client_free(client *cl)
{
    curl_slist_free_all(cl->hdrs);
    if (cl->c)
        curl_easy_cleanup(cl->c);
}

static outcome classify(CURLcode rc, long status)
{
    switch (rc) {
    case CURLE_OK:
        return status == 200 ? O_OK : O_HTTP;
    case CURLE_COULDNT_CONNECT:
        return O_REFUSED;
    case CURLE_OPERATION_TIMEDOUT:
        return O_TIMEOUT; /* or O_CTIMEOUT: client_do() tells */
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_PARTIAL_FILE:
        return O_RESET;
    case CURLE_ABORTED_BY_CALLBACK:
        return O_ABORTED;
    default:
        return O_OTHER;
    }
}

/* GET (@p body NULL) or POST @p path. *ms: wall time of the whole exchange, connect included. */
static outcome client_do(client *cl, const char *path, const char *body, double *ms,
                         long *status)
{
    char url[512];
    snprintf(url, sizeof url, "%s%s", cl->base, path);
    curl_easy_setopt(cl->c, CURLOPT_URL, url);
    if (body) {
        curl_easy_setopt(cl->c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(cl->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
    } else {
        curl_easy_setopt(cl->c, CURLOPT_HTTPGET, 1L);
    }
    double t0 = bench_now_us();
    CURLcode rc = curl_easy_perform(cl->c);
    *ms = (bench_now_us() - t0) / 1000.0;
    *status = 0;
    curl_easy_getinfo(cl->c, CURLINFO_RESPONSE_CODE, status);
    /* Zero until a connection (new or reused) is ready for the request: a timeout then came
     * while connecting (the connect time is zero on a reused connection too, so not that). */
    curl_off_t ready_us = 0;
    curl_easy_getinfo(cl->c, CURLINFO_PRETRANSFER_TIME_T, &ready_us);
    outcome oc = classify(rc, *status);
    return oc == O_TIMEOUT && ready_us == 0 ? O_CTIMEOUT : oc;
}

/* ---- request bodies ---- */

/* Appends to buf (capacity cap, *len used). 0, or -1 when it does not fit. */
static int appendf(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *len, cap - *len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= cap - *len)
        return -1;
    *len += (size_t)n;
    return 0;
}

/* The first @p n entries of @p perm (a permutation of the pool's players) become n distinct
 * players drawn uniformly: a partial Fisher-Yates shuffle. */
static void draw_players(uint64_t *rng, unsigned *perm, unsigned np, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        unsigned j = i + (unsigned)(bench_rng_next(rng) % (np - i));
        unsigned t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* A 12v12 round of perm[0..23] with a unique id. */
static int round_body(char *buf, size_t cap, const char *rid, const unsigned *ids, bool a_wins)
{
    size_t len = 0;
    int rc = appendf(buf, cap, &len,
                     "{\"id\":\"%s\",\"server\":\"abuse\",\"map\":\"m\",\"started_at\":1763800000,"
                     "\"ended_at\":1763800600,\"winner\":\"%c\",\"A\":[",
                     rid, a_wins ? 'A' : 'B');
    for (unsigned i = 0; i < 2 * TEAM && rc == 0; i++)
        rc = appendf(buf, cap, &len, "%s\"p%u\"%s", i % TEAM ? "," : "", ids[i],
                     i == TEAM - 1 ? "],\"B\":[" : "");
    return rc ? rc : appendf(buf, cap, &len, "]}");
}

/* A 64-player balancer request: current teams, four parties of three, three locks, scramble
 * mode and a large budget: what costs the service the most CPU per request (~6 s at
 * budget_ms 5000 on the 2-core reference machine, every team size asked). */
static int heavy_body(char *buf, size_t cap, const unsigned *ids, unsigned long budget_ms)
{
    size_t len = 0;
    int rc = appendf(buf, cap, &len, "{\"players\":[");
    for (unsigned i = 0; i < HEAVY_PLAYERS && rc == 0; i++) {
        rc = appendf(buf, cap, &len, "%s{\"id\":\"p%u\",\"team\":\"%c\"", i ? "," : "", ids[i],
                     i % 2 ? 'A' : 'B');
        if (rc == 0 && i < 12)
            rc = appendf(buf, cap, &len, ",\"party\":\"q%u\"", i / 3);
        if (rc == 0 && (i == 20 || i == 21 || i == 30))
            rc = appendf(buf, cap, &len, ",\"lock\":\"%c\"", i == 30 ? 'B' : 'A');
        if (rc == 0)
            rc = appendf(buf, cap, &len, "}");
    }
    return rc ? rc
              : appendf(buf, cap, &len, "],\"mode\":\"scramble\",\"budget_ms\":%lu}", budget_ms);
}

/* ---- the well-behaved client and the heavy requests: one thread each ---- */

enum { PH_NONE = -1, PH_BASE = 0, PH_ATTACK = 1 };
typedef enum kind { K_HEALTHZ, K_LOOKUP, K_ROUND, K_HEAVY } kind;

typedef struct run {
    const opts *o;
    e2e_server srv;
    atomic_int phase;       /* the window running now (PH_*) */
    atomic_llong win_begin[2], win_end[2]; /* each window's bounds, µs; LLONG_MAX: not yet */
    atomic_bool stop_wb;    /* well-behaved threads: finish the request in flight, then stop */
    atomic_bool stop_heavy; /* heavy threads: give up the request in flight */
    bool died;              /* the service exited before we stopped it */
} run;

typedef struct worker {
    run *r;
    kind kind;
    bool fresh;     /* a new connection per request */
    double pace_us; /* one request per pace_us; 0: closed loop */
    unsigned id;
    tally t[2]; /* per phase; heavy requests count under PH_ATTACK */
    atomic_int inflight; /* the phase of the request in flight (PH_NONE: none, or not counted) */
    pthread_t th;
    bool running;
} worker;

/* Sleeps until @p t_us (bench_now_us) in short steps. false when @p stop was set meanwhile. */
static bool sleep_until(double t_us, atomic_bool *stop)
{
    for (;;) {
        if (atomic_load(stop) || g_interrupted)
            return false;
        double left = t_us - bench_now_us();
        if (left <= 0)
            return true;
        struct timespec ts = {0, (long)(fmin(left, 20000.0) * 1000.0)};
        nanosleep(&ts, NULL);
    }
}

/* The path (and body, *b; NULL for a GET) of request @p n of worker @p w. 0, or -1. */
static int make_request(const worker *w, uint64_t *rng, unsigned *perm, unsigned long n,
                        char *path, size_t pcap, char *body, const char **b)
{
    const opts *o = w->r->o;
    unsigned np = (unsigned)o->players;
    char rid[64];
    *b = NULL;
    switch (w->kind) {
    case K_HEALTHZ:
        snprintf(path, pcap, "/healthz");
        return 0;
    case K_LOOKUP:
        snprintf(path, pcap, "/v1/pools/" POOL "/players/p%u",
                 (unsigned)(bench_rng_next(rng) % np));
        return 0;
    case K_ROUND:
        snprintf(rid, sizeof rid, "w%u-%lu", w->id, n);
        snprintf(path, pcap, "/v1/pools/" POOL "/rounds");
        draw_players(rng, perm, np, 2 * TEAM);
        *b = body;
        return round_body(body, BODY_MAX, rid, perm, n % 2 == 0);
    case K_HEAVY:
        snprintf(path, pcap, "/v1/pools/" POOL "/splits");
        draw_players(rng, perm, np, HEAVY_PLAYERS);
        *b = body;
        return heavy_body(body, BODY_MAX, perm, o->budget_ms);
    }
    return -1;
}

/* The window a request from @p t0 to @p t1 counts in: the one it started in or was in flight
 * at the start of (a request stuck since the warm-up weighs on the attack's figures), else
 * PH_NONE. */
static int window_of(run *r, double t0, double t1)
{
    for (int p = 0; p < 2; p++)
        if ((long long)t0 < atomic_load(&r->win_end[p]) &&
            (long long)t1 >= atomic_load(&r->win_begin[p]))
            return p;
    return PH_NONE;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    run *r = w->r;
    bool heavy = w->kind == K_HEAVY;
    atomic_bool *stop = heavy ? &r->stop_heavy : &r->stop_wb;
    long timeout_ms = heavy ? HEAVY_TIMEOUT_MS : (long)r->o->timeout_s * 1000;
    unsigned np = (unsigned)r->o->players;
    unsigned *perm = malloc(np * sizeof *perm);
    char *body = malloc(BODY_MAX);
    client cl;
    if (!perm || !body ||
        client_init(&cl, r->srv.url, w->kind == K_HEALTHZ ? NULL : r->srv.server_key, w->fresh,
                    timeout_ms, heavy ? stop : NULL) != 0) {
        fprintf(stderr, "bench_abuse: a client thread could not start (out of memory)\n");
        free(perm);
        free(body);
        return NULL;
    }
    for (unsigned i = 0; i < np; i++)
        perm[i] = i;
    uint64_t rng = UINT64_C(0xab05e) + w->id;
    double next = bench_now_us();
    for (unsigned long n = 0; !atomic_load(stop) && !g_interrupted; n++) {
        if (w->pace_us > 0) {
            if (!sleep_until(next, stop))
                break;
            next = bench_now_us() + w->pace_us;
        }
        char path[128];
        const char *b;
        if (make_request(w, &rng, perm, n, path, sizeof path, body, &b) != 0)
            break; /* cannot happen with BODY_MAX; never send a cut body */
        double ms;
        long status;
        double t0 = bench_now_us();
        atomic_store(&w->inflight, atomic_load(&r->phase));
        outcome oc = client_do(&cl, path, b, &ms, &status);
        atomic_store(&w->inflight, PH_NONE);
        int ph = heavy ? PH_ATTACK : window_of(r, t0, bench_now_us());
        if (ph >= 0)
            tally_add(&w->t[ph], oc, ms, status, w->pace_us / 1000.0,
                      ((double)atomic_load(&r->win_begin[ph]) - t0) / 1000.0,
                      ((double)atomic_load(&r->win_end[ph]) - t0) / 1000.0);
    }
    client_free(&cl);
    free(perm);
    free(body);
    return NULL;
}

static void workers_start(worker *ws, size_t n)
{
    for (size_t i = 0; i < n; i++)
        ws[i].running = pthread_create(&ws[i].th, NULL, worker_main, &ws[i]) == 0;
}

static void workers_join(worker *ws, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ws[i].running)
            pthread_join(ws[i].th, NULL);
}

/* Creates pool POOL and gives every player at least two rounds (two passes over a shuffled
 * list, 24 at a time), so that lookups and splits read real rows. 0, or -1 (printed). */
static int seed_pool(run *r, unsigned long *nrounds)
{
    e2e_resp resp;
    int rc = e2e_call(&r->srv, "POST", "/v1/pools", r->srv.admin_key,
                      "{\"name\":\"" POOL "\",\"model\":\"synelo\"}", &resp);
    long st = resp.status;
    e2e_resp_free(&resp);
    if (rc != 0 || st != 201) {
        fprintf(stderr, "bench_abuse: creating pool " POOL ": %s (HTTP %ld)\n",
                rc ? "no answer" : "refused", st);
        return -1;
    }
    unsigned np = (unsigned)r->o->players;
    unsigned *perm = malloc(np * sizeof *perm);
    char *body = malloc(BODY_MAX);
    client cl;
    rc = !perm || !body || client_init(&cl, r->srv.url, r->srv.server_key, false, 30000, NULL);
    if (rc) {
        free(perm);
        free(body);
        return -1;
    }
    for (unsigned i = 0; i < np; i++)
        perm[i] = i;
    uint64_t rng = 7;
    unsigned per_pass = (np + 2 * TEAM - 1) / (2 * TEAM);
    *nrounds = 0;
    for (unsigned pass = 0; pass < 2 && rc == 0; pass++) {
        draw_players(&rng, perm, np, np);
        for (unsigned c = 0; c < per_pass && rc == 0; c++) {
            /* The last chunk overlaps the one before it when np is not a multiple of 24. */
            unsigned at = c * 2 * TEAM + 2 * TEAM <= np ? c * 2 * TEAM : np - 2 * TEAM;
            char rid[32], path[] = "/v1/pools/" POOL "/rounds";
            snprintf(rid, sizeof rid, "s%u-%u", pass, c);
            double ms;
            rc = round_body(body, BODY_MAX, rid, perm + at, c % 2 == 0);
            if (rc == 0 && client_do(&cl, path, body, &ms, &st) != O_OK) {
                fprintf(stderr, "bench_abuse: seeding round %s: HTTP %ld\n", rid, st);
                rc = -1;
            }
            *nrounds += rc == 0;
        }
    }
    client_free(&cl);
    free(perm);
    free(body);
    return rc ? -1 : 0;
}

/* ---- the attack: idle and slow keyless connections, one epoll thread ---- */

enum { A_WAIT, A_CONNECTING, A_OPEN };
enum { C_ATTEMPTS, C_CONNECTED, C_REFUSED, C_CTIMEOUT, C_CLOSED, C_RESET, C_ANSWERED, C_BYTES,
       C_LOCAL, C_N };

typedef struct aconn {
    int fd;
    unsigned char state;
    bool slow;
    bool answered;      /* the service sent bytes on this connection */
    unsigned addr;      /* source address 127.0.0.2 + addr */
    double due;         /* µs: WAIT: open; CONNECTING: give up; OPEN and slow: next byte */
    unsigned long sent; /* header bytes sent (slow) */
} aconn;

typedef struct attack {
    const opts *o;
    unsigned port;
    aconn *c;
    size_t n;
    int ep;
    atomic_long open_now, connecting_now;
    atomic_ulong cnt[C_N];
    atomic_bool stop;
    pthread_t th;
    bool running;
} attack;

static void count(attack *a, int what) { atomic_fetch_add(&a->cnt[what], 1); }

static void aconn_drop(attack *a, aconn *k, double now, double delay_us)
{
    if (k->fd >= 0)
        close(k->fd); /* also leaves the epoll set */
    if (k->state == A_OPEN)
        atomic_fetch_sub(&a->open_now, 1);
    if (k->state == A_CONNECTING)
        atomic_fetch_sub(&a->connecting_now, 1);
    k->fd = -1;
    k->state = A_WAIT;
    k->due = now + delay_us;
}

static void aconn_open(attack *a, aconn *k, double now)
{
    double retry = (double)a->o->reopen_ms * 1000.0;
    count(a, C_ATTEMPTS);
    k->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    k->answered = false;
    k->sent = 0;
    if (k->fd < 0) {
        count(a, C_LOCAL);
        aconn_drop(a, k, now, retry);
        return;
    }
    /* The source port is then chosen at connect, per destination, so re-opening thousands of
     * connections does not run out of ports as bind() with port 0 would. */
    int one = 1;
    setsockopt(k->fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof one);
    struct sockaddr_in src, dst;
    memset(&src, 0, sizeof src);
    memset(&dst, 0, sizeof dst);
    src.sin_family = dst.sin_family = AF_INET;
    src.sin_addr.s_addr = htonl(0x7f000002u + k->addr);
    dst.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    dst.sin_port = htons((uint16_t)a->port);
    struct epoll_event ev = {.events = EPOLLOUT | EPOLLIN | EPOLLRDHUP,
                             .data.u64 = (uint64_t)(k - a->c)};
    if (bind(k->fd, (struct sockaddr *)&src, sizeof src) != 0 ||
        epoll_ctl(a->ep, EPOLL_CTL_ADD, k->fd, &ev) != 0) {
        count(a, C_LOCAL);
        aconn_drop(a, k, now, retry);
        return;
    }
    if (connect(k->fd, (struct sockaddr *)&dst, sizeof dst) != 0 && errno != EINPROGRESS) {
        count(a, errno == ECONNREFUSED ? C_REFUSED : C_LOCAL);
        aconn_drop(a, k, now, retry);
        return;
    }
    /* Even a connect that completed at once reports through EPOLLOUT: one path for both. */
    k->state = A_CONNECTING;
    atomic_fetch_add(&a->connecting_now, 1);
    k->due = now + CONNECT_TIMEOUT_S * 1e6;
}

static void aconn_connected(attack *a, aconn *k, uint32_t ev, double now)
{
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(k->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || !(ev & EPOLLOUT) || (ev & (EPOLLERR | EPOLLHUP))) {
        count(a, err == ECONNREFUSED || err == ECONNRESET ? C_REFUSED : C_LOCAL);
        aconn_drop(a, k, now, (double)a->o->reopen_ms * 1000.0);
        return;
    }
    struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = (uint64_t)(k - a->c)};
    epoll_ctl(a->ep, EPOLL_CTL_MOD, k->fd, &e);
    atomic_fetch_sub(&a->connecting_now, 1);
    atomic_fetch_add(&a->open_now, 1);
    count(a, C_CONNECTED);
    k->state = A_OPEN;
    /* Slow ones start their drip within a second, spread so the bytes do not come in bursts. */
    k->due = k->slow ? now + (double)((k - a->c) % 1000) * 1000.0 : INFINITY;
}

/* The service sent something (an error page, say) or closed the connection. */
static void aconn_readable(attack *a, aconn *k, double now)
{
    char buf[1024];
    ssize_t got;
    while ((got = recv(k->fd, buf, sizeof buf, 0)) > 0)
        if (!k->answered) {
            k->answered = true;
            count(a, C_ANSWERED);
        }
    if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
        count(a, got < 0 && errno == ECONNRESET ? C_RESET : C_CLOSED);
        aconn_drop(a, k, now, (double)a->o->reopen_ms * 1000.0);
    }
}

/* One more byte of a request header that never ends. */
static void aconn_drip(attack *a, aconn *k, double now)
{
    static const char head[] =
        "GET /v1/pools/" POOL "/players/p1 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Drip: ";
    char b = k->sent < sizeof head - 1 ? head[k->sent] : 'a';
    ssize_t w = send(k->fd, &b, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
        count(a, errno == ECONNRESET ? C_RESET : C_CLOSED);
        aconn_drop(a, k, now, (double)a->o->reopen_ms * 1000.0);
        return;
    }
    if (w == 1) {
        k->sent++;
        count(a, C_BYTES);
    }
    k->due = k->due + 2e6 < now ? now + 1e6 : k->due + 1e6;
}

static void attack_tick(attack *a, double now)
{
    for (size_t i = 0; i < a->n; i++) {
        aconn *k = &a->c[i];
        if (k->due > now)
            continue;
        if (k->state == A_WAIT) {
            aconn_open(a, k, now);
        } else if (k->state == A_CONNECTING) {
            count(a, C_CTIMEOUT);
            aconn_drop(a, k, now, 0);
        } else if (k->slow) {
            aconn_drip(a, k, now);
        }
    }
}

static void *attack_main(void *arg)
{
    attack *a = arg;
    struct epoll_event ev[256];
    double last_tick = 0;
    while (!atomic_load(&a->stop)) {
        int n = epoll_wait(a->ep, ev, 256, 5);
        double now = bench_now_us();
        for (int i = 0; i < n; i++) {
            aconn *k = &a->c[ev[i].data.u64];
            if (k->state == A_CONNECTING)
                aconn_connected(a, k, ev[i].events, now);
            else if (k->state == A_OPEN)
                aconn_readable(a, k, now);
        }
        if (now - last_tick >= 5000) { /* a scan of every connection, at most every 5 ms */
            attack_tick(a, now);
            last_tick = now;
        }
    }
    /* Reset rather than close: no thousands of FIN_WAIT and TIME_WAIT sockets left behind. */
    struct linger lg = {1, 0};
    for (size_t i = 0; i < a->n; i++)
        if (a->c[i].fd >= 0) {
            setsockopt(a->c[i].fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
            close(a->c[i].fd);
            a->c[i].fd = -1;
        }
    return NULL;
}

static int attack_start(attack *a, const opts *o, unsigned port)
{
    memset(a, 0, sizeof *a);
    a->o = o;
    a->port = port;
    a->n = o->idle + o->slow;
    a->c = calloc(a->n ? a->n : 1, sizeof *a->c);
    a->ep = epoll_create1(EPOLL_CLOEXEC);
    if (!a->c || a->ep < 0) {
        fprintf(stderr, "bench_abuse: attack: %s\n", a->c ? strerror(errno) : "out of memory");
        return -1;
    }
    double now = bench_now_us();
    for (size_t i = 0; i < a->n; i++) {
        aconn *k = &a->c[i];
        k->fd = -1;
        /* Slow ones spread evenly among the idle ones, so that both kinds are among the first
         * the service accepts (connections open in array order). */
        k->slow = (i + 1) * o->slow / a->n > i * o->slow / a->n;
        k->addr = (unsigned)(i % o->addrs);
        k->due = now;
    }
    a->running = pthread_create(&a->th, NULL, attack_main, a) == 0;
    return a->running ? 0 : -1;
}

static void attack_stop(attack *a)
{
    atomic_store(&a->stop, true);
    if (a->running)
        pthread_join(a->th, NULL);
    a->running = false;
    if (a->ep >= 0)
        close(a->ep);
    free(a->c);
    a->c = NULL;
}

static void attack_counts(attack *a, unsigned long out[C_N])
{
    for (int i = 0; i < C_N; i++)
        out[i] = a ? atomic_load(&a->cnt[i]) : 0;
}

/* ---- phases: a measured window samples the service and the attack every 100 ms ---- */

typedef struct gauge {
    double sum, min, max;
    unsigned long n;
} gauge;

static void gauge_add(gauge *g, double v)
{
    if (v < 0)
        return; /* not readable */
    g->min = g->n && g->min < v ? g->min : v;
    g->max = g->n && g->max > v ? g->max : v;
    g->sum += v;
    g->n++;
}

static double gauge_mean(const gauge *g) { return g->n ? g->sum / (double)g->n : NAN; }

typedef struct window {
    double secs;
    gauge rss_kb, sockets, open, connecting;
    unsigned long c0[C_N], c1[C_N]; /* attack counters at the start and the end */
} window;

/* Runs phase @p ph for @p secs (or until interrupted); @p w NULL: not measured (a warm-up). */
static void run_window(run *r, attack *a, int ph, double secs, window *w)
{
    double t0 = bench_now_us(), end = t0 + secs * 1e6;
    if (w) {
        memset(w, 0, sizeof *w);
        attack_counts(a, w->c0);
    }
    if (w)
        atomic_store(&r->win_begin[ph], (long long)t0);
    atomic_store(&r->phase, w ? ph : PH_NONE);
    for (unsigned tick = 0; bench_now_us() < end && !g_interrupted; tick++) {
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        if (!proc_alive(r->srv.pid)) {
            r->died = true;
            fprintf(stderr, "bench_abuse: the service exited during the run (see its status "
                    "below)\n");
            g_interrupted = 1; /* nothing left to measure: end the phases, report, clean up */
        }
        if (!w)
            continue;
        gauge_add(&w->rss_kb, (double)proc_kb(r->srv.pid, "VmRSS:"));
        if (tick % 5 == 0) /* ~2,500 readlink calls: not every tick */
            gauge_add(&w->sockets, (double)proc_sockets(r->srv.pid));
        if (a) {
            gauge_add(&w->open, (double)atomic_load(&a->open_now));
            gauge_add(&w->connecting, (double)atomic_load(&a->connecting_now));
        }
    }
    atomic_store(&r->phase, PH_NONE);
    if (w) {
        atomic_store(&r->win_end[ph], (long long)bench_now_us());
        w->secs = (bench_now_us() - t0) / 1e6;
        attack_counts(a, w->c1);
    }
}

/* ---- the report ---- */

static void fmt_ms(char *out, size_t cap, double v)
{
    if (isnan(v))
        snprintf(out, cap, "-");
    else
        snprintf(out, cap, v < 10 ? "%.2f" : v < 1000 ? "%.1f" : "%.0f", v);
}

static double mb(double kb) { return kb * 1024.0 / 1e6; }

/* Every thread's tally of one kind of request in phase @p ph, its latencies sorted. */
static void merged(const worker *ws, size_t n, kind k, bool fresh, int ph, tally *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < n; i++)
        if (ws[i].kind == k && ws[i].fresh == fresh)
            tally_merge(out, &ws[i].t[ph]);
    if (out->n)
        qsort(out->ms, out->n, sizeof *out->ms, bench_cmp_double);
}

static void print_cells(const tally *t)
{
    char p50[16], p99[16], mx[16];
    fmt_ms(p50, sizeof p50, pct(t, 0.50));
    fmt_ms(p99, sizeof p99, pct(t, 0.99));
    fmt_ms(mx, sizeof mx, pct(t, 1.0));
    printf(" %6lu %7s %7s %7s %6lu |", tally_sent(t), p50, p99, mx,
           tally_sent(t) - t->count[O_OK]);
}

static const struct row {
    kind k;
    bool fresh;
    const char *label, *target;
} rows[] = {
    {K_HEALTHZ, false, "healthz, kept-alive", "p99 <= 50 ms"},
    {K_HEALTHZ, true, "healthz, new connection each", "p99 <= 50 ms"},
    {K_LOOKUP, false, "lookup, kept-alive", "p99 <= 50 ms"},
    {K_LOOKUP, true, "lookup, new connection each", "p99 <= 50 ms"},
    {K_ROUND, false, "round 12v12, kept-alive", "rate below"},
    {K_ROUND, true, "round 12v12, new connection each", ""},
};
#define NROWS (sizeof rows / sizeof rows[0])

static void print_failures(const char *label, const char *phase, const tally *t, unsigned long to)
{
    if (tally_sent(t) == t->count[O_OK])
        return;
    printf("  %s, %s: %lu refused, %lu closed or reset, timed out (%lu s) %lu connecting and %lu "
           "waiting for the answer, %lu HTTP non-200", label, phase, t->count[O_REFUSED],
           t->count[O_RESET], to, t->count[O_CTIMEOUT], t->count[O_TIMEOUT], t->count[O_HTTP]);
    if (t->http_status)
        printf(" (first: %ld)", t->http_status);
    printf(", %lu other\n", t->count[O_OTHER]);
}

static bool any_failed(tally (*t)[2], size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (int ph = 0; ph < 2; ph++)
            if (tally_sent(&t[i][ph]) != t[i][ph].count[O_OK])
                return true;
    return false;
}

static void print_latency(const opts *o, const worker *ws, size_t nw, const window w[2])
{
    tally t[NROWS][2];
    for (size_t i = 0; i < NROWS; i++)
        for (int ph = 0; ph < 2; ph++)
            merged(ws, nw, rows[i].k, rows[i].fresh, ph, &t[i][ph]);
    printf("\nWell-behaved requests from 127.0.0.1, ms. n: requests started in the window or in "
           "flight when it began; failed: not 200;\npercentiles over the answered ones and the timeouts (at their "
           "elapsed time, so a timeout counts as >= %lu s);\nfor the paced probes, a wait of L "
           "ms also counts the requests it held back, as L - %lu, L - %lu, ... ms.\n",
           o->timeout_s, o->probe_ms, 2 * o->probe_ms);
    printf("%-34s |   unloaded (%4.1f s)                     |   under attack (%4.1f s)"
           "                 | target under attack\n", "request", w[0].secs, w[1].secs);
    printf("%-34s | %6s %7s %7s %7s %6s | %6s %7s %7s %7s %6s |\n", "", "n", "p50", "p99",
           "max", "failed", "n", "p50", "p99", "max", "failed");
    for (size_t i = 0; i < NROWS; i++) {
        printf("%-34s |", rows[i].label);
        print_cells(&t[i][0]);
        print_cells(&t[i][1]);
        printf(" %s\n", rows[i].target);
    }
    printf("Failures:%s\n", any_failed(t, NROWS) ? "" : " none");
    for (size_t i = 0; i < NROWS; i++) {
        print_failures(rows[i].label, "unloaded", &t[i][0], o->timeout_s);
        print_failures(rows[i].label, "under attack", &t[i][1], o->timeout_s);
    }
    size_t kept = 0; /* the row of the rounds threads */
    while (rows[kept].k != K_ROUND || rows[kept].fresh)
        kept++;
    double rate[2];
    for (int ph = 0; ph < 2; ph++)
        rate[ph] = w[ph].secs > 0 ? (double)t[kept][ph].count[O_OK] / w[ph].secs : 0;
    printf("\nRounds/s (200 answers; %lu threads, one kept-alive connection each, closed loop): "
           "unloaded %.0f, under attack %.0f = %.1f %% of unloaded (target >= 50 %%)\n",
           o->threads, rate[0], rate[1], rate[0] > 0 ? 100.0 * rate[1] / rate[0] : 0.0);
    for (size_t i = 0; i < NROWS; i++)
        for (int ph = 0; ph < 2; ph++)
            free(t[i][ph].ms);
}

static void print_attack(const opts *o, const window *w)
{
    const unsigned long *a = w->c0, *b = w->c1;
    unsigned long d[C_N];
    for (int i = 0; i < C_N; i++)
        d[i] = b[i] - a[i];
    double s = w->secs > 0 ? w->secs : 1;
    printf("\nAttack connections (keyless; %lu idle + %lu slow from %lu addresses, "
           "127.0.0.2 onwards), over the %.1f s measured:\n", o->idle, o->slow, o->addrs, w->secs);
    printf("  open (connected, as the client sees it; the kernel may hold some in the service's\n"
           "  listen backlog): mean %.0f, min %.0f, max %.0f of %lu; handshake pending: mean "
           "%.0f\n", gauge_mean(&w->open), w->open.min, w->open.max, o->idle + o->slow,
           gauge_mean(&w->connecting));
    printf("  new connections: %lu attempts (%.0f/s), %lu connected; refused %lu, handshake "
           "timed out (%.0f s) %lu, local errors %lu\n", d[C_ATTEMPTS], (double)d[C_ATTEMPTS] / s,
           d[C_CONNECTED], d[C_REFUSED], CONNECT_TIMEOUT_S, d[C_CTIMEOUT], d[C_LOCAL]);
    printf("  closed by the service: %lu (FIN) + %lu (reset); it sent bytes on %lu; slow header "
           "bytes sent %lu\n", d[C_CLOSED], d[C_RESET], d[C_ANSWERED], d[C_BYTES]);
    printf("  since the attack began: %lu attempts, %lu refused, %lu closed by the service, "
           "%lu handshake timeouts\n", b[C_ATTEMPTS], b[C_REFUSED], b[C_CLOSED] + b[C_RESET],
           b[C_CTIMEOUT]);
}

static void print_heavy(const opts *o, const worker *hw)
{
    tally t;
    merged(hw, o->heavy, K_HEAVY, false, PH_ATTACK, &t);
    char p50[16], mx[16];
    fmt_ms(p50, sizeof p50, pct(&t, 0.5));
    fmt_ms(mx, sizeof mx, pct(&t, 1.0));
    char first[48] = "";
    if (t.http_status)
        snprintf(first, sizeof first, " (first status %ld)", t.http_status);
    printf("\nHeavy splits (%lu in flight from the attack's start, 64 players, scramble, "
           "budget_ms %lu, server key): %lu answered 200, %lu other answers%s, "
           "%lu failed, %lu given up at the end; time p50 %s ms, max %s ms\n", o->heavy,
           o->budget_ms, t.count[O_OK], t.count[O_HTTP], first,
           t.count[O_REFUSED] + t.count[O_RESET] + t.count[O_CTIMEOUT] + t.count[O_TIMEOUT] +
               t.count[O_OTHER],
           t.count[O_ABORTED], p50, mx);
    free(t.ms);
}

static void print_service(const window w[2], long hwm_kb, pid_t pid)
{
    char lim[128];
    unsigned long long soft = 0, hard = 0;
    proc_line(pid, "limits", "Max open files", lim, sizeof lim);
    if (sscanf(lim, "%llu %llu", &soft, &hard) == 2)
        snprintf(lim, sizeof lim, "%llu (hard %llu)", soft, hard);
    char hwm[32] = "unknown";
    if (hwm_kb >= 0)
        snprintf(hwm, sizeof hwm, "%.1f MB", mb((double)hwm_kb));
    printf("\nService memory: VmRSS unloaded max %.1f MB; under attack mean %.1f MB, max %.1f MB "
           "(every 100 ms); VmHWM at the end %s (target: peak <= 200 MB)\n",
           mb(w[0].rss_kb.max), mb(gauge_mean(&w[1].rss_kb)), mb(w[1].rss_kb.max), hwm);
    printf("Service sockets (/proc/PID/fd, every 0.5 s): unloaded mean %.0f; under attack mean "
           "%.0f, max %.0f. Its open-file limit: %s\n", gauge_mean(&w[0].sockets),
           gauge_mean(&w[1].sockets), w[1].sockets.max, lim[0] ? lim : "unknown");
}

/* Length of the logfmt pair at @p kv ("key=value" or key="quoted \"value\""). */
static int logfmt_len(const char *kv)
{
    const char *v = strchr(kv, '=');
    if (!v || v[1] != '"')
        return (int)strcspn(kv, " \n");
    const char *p = v + 2;
    while (*p && *p != '"' && *p != '\n')
        p += p[0] == '\\' && p[1] ? 2 : 1;
    return (int)(p - kv) + (*p == '"');
}

/* The service's log (level warn): lines per "msg=" value, libmicrohttpd's by their detail. */
static void print_log(const run *r)
{
    char *log = e2e_read_log(&r->srv);
    if (!log)
        return;
    struct {
        char key[96];
        unsigned long n;
    } seen[8];
    size_t nseen = 0;
    unsigned long lines = 0, other = 0;
    for (char *line = log; *line; lines++) {
        char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        const char *m = strstr(line, "msg=");
        const char *det = strstr(line, "detail=");
        char key[96];
        int kl = m && (size_t)(m - line) < len ? logfmt_len(m) : 0;
        int dl = det && (size_t)(det - line) < len ? logfmt_len(det) : 0;
        snprintf(key, sizeof key, "%.*s%s%.*s", kl, m ? m : "", dl ? " " : "", dl, det ? det : "");
        size_t i = 0;
        while (i < nseen && strcmp(seen[i].key, key) != 0)
            i++;
        if (i == nseen && nseen < sizeof seen / sizeof seen[0]) {
            snprintf(seen[nseen].key, sizeof seen[nseen].key, "%s", key);
            seen[nseen++].n = 0;
        }
        if (i < nseen)
            seen[i].n++;
        else
            other++;
        line += len + (nl != NULL);
    }
    printf("Service log (--log-level warn): %lu lines\n", lines);
    for (size_t i = 0; i < nseen; i++)
        printf("  %7lu  %s\n", seen[i].n, seen[i].key);
    if (other)
        printf("  %7lu  other\n", other);
    free(log);
}

/* ---- the run ---- */

static int raise_nofile(const opts *o)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0) {
        fprintf(stderr, "bench_abuse: getrlimit: %s\n", strerror(errno));
        return -1;
    }
    rlim_t before = rl.rlim_cur;
    struct rlimit want = {rl.rlim_max, rl.rlim_max};
    if (rl.rlim_cur < rl.rlim_max && setrlimit(RLIMIT_NOFILE, &want) == 0)
        rl.rlim_cur = rl.rlim_max; /* an infinite hard limit fails here: then keep the soft one */
    rlim_t need = o->idle + o->slow + o->threads + o->heavy + 64;
    printf("Open files: RLIMIT_NOFILE raised from %llu to %llu (the hard limit); the service "
           "inherits it\n", (unsigned long long)before, (unsigned long long)rl.rlim_cur);
    if (rl.rlim_cur < need) {
        fprintf(stderr, "bench_abuse: the open-file limit %llu is below the ~%llu the attack "
                "needs: lower --idle/--slow or raise the hard limit (ulimit -Hn)\n",
                (unsigned long long)rl.rlim_cur, (unsigned long long)need);
        return -1;
    }
    return 0;
}

static void print_setup(const opts *o)
{
    char model[256], load[64];
    cpu_model(model, sizeof model);
    loadavg(load, sizeof load);
    printf("bench_abuse: %s serve --log-level warn (+ the temporary db, 127.0.0.1:0, keys)", o->bin);
    for (size_t i = 0; i < o->nextra; i++)
        printf(" %s", o->extra[i]);
    printf("\nMachine: %ld cores, %s; load average at start %s\n",
           sysconf(_SC_NPROCESSORS_ONLN), model, load);
}

static int start_service(run *r)
{
    const opts *o = r->o;
    const char *extra[EXTRA_MAX + 3] = {"--log-level", "warn"}; /* later arguments override */
    for (size_t i = 0; i < o->nextra; i++)
        extra[2 + i] = o->extra[i];
    extra[2 + o->nextra] = NULL;
    if (e2e_init(&r->srv) != 0 || setenv("EO_BIN", o->bin, 1) != 0) {
        fprintf(stderr, "bench_abuse: cannot make a temporary directory: %s\n", strerror(errno));
        return -1;
    }
    if (e2e_start(&r->srv, extra) != 0) {
        char *log = e2e_read_log(&r->srv);
        fprintf(stderr, "bench_abuse: %s serve did not print its listening line; its stderr:\n%s",
                o->bin, log ? log : "(none)\n");
        free(log);
        return -1;
    }
    printf("Service: pid %ld, %s, temporary database in %s\n", (long)r->srv.pid, r->srv.url,
           r->srv.dir);
    return 0;
}

static void print_plan(const opts *o, unsigned long seeded, double seed_s)
{
    printf("Pool \"" POOL "\" (SynElo): %lu players seeded by %lu rounds of 12v12 in %.1f s\n",
           o->players, seeded, seed_s);
    printf("Well-behaved client (127.0.0.1, server key; healthz without a key), every request "
           "timed out at %lu s:\n  %lu threads posting rounds in a closed loop, one kept-alive "
           "connection each (the rounds rate);\n  5 probe threads, one request each per %lu ms: "
           "healthz and lookups on a kept-alive connection\n  and on a new connection each, "
           "rounds on a new connection each\n", o->timeout_s, o->threads, o->probe_ms);
    printf("Phases: unloaded %.1f s (after 1 s of warm-up); then the attack starts, %.1f s to "
           "build up, %.1f s measured\n", o->baseline_s, o->warmup_s, o->duration_s);
    printf("Attack: %lu idle keyless connections (connect, send nothing) and %lu slow ones (one "
           "header byte per second),\n  from %lu source addresses (127.0.0.2 onwards), each "
           "re-opened %lu ms after the service closes or refuses it;\n  %lu heavy splits in "
           "flight (64 players, parties, locks, scramble, budget_ms %lu), re-sent as each "
           "ends\n", o->idle, o->slow, o->addrs, o->reopen_ms, o->heavy, o->budget_ms);
    fflush(stdout);
}

/* The well-behaved threads (rounds first, then the probes) and the heavy ones. */
typedef struct crew {
    worker *wb, *hv;
    size_t nwb, nhv;
} crew;

static int crew_make(run *r, crew *c)
{
    static const struct {
        kind k;
        bool fresh;
    } probes[] = {{K_HEALTHZ, false}, {K_HEALTHZ, true}, {K_LOOKUP, false},
                  {K_LOOKUP, true},   {K_ROUND, true}};
    const opts *o = r->o;
    size_t np = sizeof probes / sizeof probes[0];
    c->nwb = o->threads + np;
    c->nhv = o->heavy;
    c->wb = calloc(c->nwb, sizeof *c->wb);
    c->hv = calloc(c->nhv ? c->nhv : 1, sizeof *c->hv);
    if (!c->wb || !c->hv) {
        fprintf(stderr, "bench_abuse: out of memory\n");
        return -1;
    }
    for (size_t i = 0; i < c->nwb + c->nhv; i++) {
        worker *w = i < c->nwb ? &c->wb[i] : &c->hv[i - c->nwb];
        atomic_init(&w->inflight, PH_NONE);
        w->r = r;
        w->id = (unsigned)i; /* distinct: round ids and random draws per thread */
        w->kind = i < o->threads ? K_ROUND : i < c->nwb ? probes[i - o->threads].k : K_HEAVY;
        if (i >= o->threads && i < c->nwb) {
            w->fresh = probes[i - o->threads].fresh;
            w->pace_us = (double)o->probe_ms * 1000.0;
        }
    }
    return 0;
}

static void crew_free(crew *c)
{
    for (size_t i = 0; c->wb && i < c->nwb; i++)
        free(c->wb[i].t[0].ms), free(c->wb[i].t[1].ms);
    for (size_t i = 0; c->hv && i < c->nhv; i++)
        free(c->hv[i].t[0].ms), free(c->hv[i].t[1].ms);
    free(c->wb);
    free(c->hv);
}

/* Waits (at most the request timeout) until no request of phase @p ph is in flight, so that
 * the unloaded figures are not charged with requests the attack caught in flight. */
static void wait_phase_done(const crew *c, int ph, double timeout_s)
{
    double end = bench_now_us() + timeout_s * 1e6;
    for (size_t i = 0; i < c->nwb && bench_now_us() < end && !g_interrupted;) {
        if (atomic_load(&c->wb[i].inflight) != ph) {
            i++;
            continue;
        }
        struct timespec ts = {0, 1000 * 1000};
        nanosleep(&ts, NULL);
    }
}

/* Both phases. The attack stays on until the well-behaved requests in flight at the end of
 * its window have ended (each within the timeout), so they all ran under the same pressure. */
static int measure(run *r, crew *c, window w[2], long *hwm_kb)
{
    const opts *o = r->o;
    workers_start(c->wb, c->nwb);
    run_window(r, NULL, PH_NONE, 1.0, NULL);
    run_window(r, NULL, PH_BASE, o->baseline_s, &w[0]);
    wait_phase_done(c, PH_BASE, (double)o->timeout_s);
    fprintf(stderr, "bench_abuse: unloaded phase done; starting the attack\n");
    attack a;
    int rc = attack_start(&a, o, r->srv.port);
    if (rc == 0) {
        workers_start(c->hv, c->nhv);
        run_window(r, &a, PH_NONE, o->warmup_s, NULL);
        run_window(r, &a, PH_ATTACK, o->duration_s, &w[1]);
    }
    double t = bench_now_us();
    atomic_store(&r->stop_wb, true);
    workers_join(c->wb, c->nwb);
    *hwm_kb = proc_kb(r->srv.pid, "VmHWM:");
    atomic_store(&r->stop_heavy, true);
    workers_join(c->hv, c->nhv);
    attack_stop(&a);
    fprintf(stderr, "bench_abuse: attack over; the last well-behaved requests took %.1f s to "
            "end\n", (bench_now_us() - t) / 1e6);
    return rc;
}

static void stop_service(run *r)
{
    double t = bench_now_us();
    int status = -1;
    int rc = r->srv.pid ? e2e_stop(&r->srv, SIGTERM, 10000, &status) : -1;
    printf("Service %s: exit status %d after %.1f s\n",
           r->died  ? "had exited during the run"
           : rc == 0 ? "stopped by SIGTERM"
                     : "stopped by SIGKILL (no exit within 10 s of SIGTERM)",
           status,
           (bench_now_us() - t) / 1e6);
}

int main(int argc, char **argv)
{
    static opts o;
    int pr = parse_opts(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal; /* end the phases early, then stop the service and clean up */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    double t0 = bench_now_us();
    print_setup(&o);
    if (raise_nofile(&o) != 0)
        return 2;
    static run r;
    r.o = &o;
    atomic_init(&r.phase, PH_NONE);
    for (int p = 0; p < 2; p++) {
        atomic_init(&r.win_begin[p], LLONG_MAX);
        atomic_init(&r.win_end[p], LLONG_MAX);
    }
    atomic_init(&r.stop_wb, false);
    atomic_init(&r.stop_heavy, false);
    crew c = {0};
    window w[2];
    long hwm_kb = -1;
    unsigned long seeded = 0;
    int rc = start_service(&r);
    double ts = bench_now_us();
    if (rc == 0 && (rc = seed_pool(&r, &seeded)) == 0)
        print_plan(&o, seeded, (bench_now_us() - ts) / 1e6);
    if (rc == 0 && (rc = crew_make(&r, &c)) == 0)
        rc = measure(&r, &c, w, &hwm_kb);
    if (rc == 0) {
        print_latency(&o, c.wb, c.nwb, w);
        print_attack(&o, &w[1]);
        print_heavy(&o, c.hv);
        print_service(w, hwm_kb, r.srv.pid);
    }
    if (r.srv.pid) {
        stop_service(&r);
        print_log(&r);
    }
    e2e_cleanup(&r.srv);
    crew_free(&c);
    char load[64];
    loadavg(load, sizeof load);
    printf("Load average at the end %s; the run took %.1f s%s\n", load, (bench_now_us() - t0) / 1e6,
           g_interrupted ? " (cut short: interrupted, or the service exited)" : "");
    return rc == 0 ? 0 : 1;
}
