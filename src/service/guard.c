/* The connection guard (docs/SERVICE.md "Connections and limits"): caps on open connections,
 * in total and per client address, checked when a connection is accepted, and the deadlines
 * libmicrohttpd does not keep (its own timeout is reset by every byte, so a client dripping a
 * byte a second holds a connection for ever): a request's headers must be complete within a
 * deadline, and a body must keep a least average rate. A watch thread looks at every open
 * connection a few times a second and shuts the socket of one past its deadline; the HTTP
 * thread that owns it then sees the end of the stream and closes it.
 *
 * The socket is shut (not closed) under the table's lock, and the HTTP layer takes the same
 * lock (eo__guard_close) before libmicrohttpd closes the descriptor, so the watch never
 * touches a descriptor that was closed and reused.
 *
 * Refusals and drops are counted in /metrics and summed into one log line per interval, never
 * a line per connection: under a flood that would be the flood. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "service/service.h"

/* How often the watch looks, and how often it may log a summary. */
#define TICK_MS_MAX 250
#define LOG_INTERVAL_MS 10000
/* libmicrohttpd's own lines allowed per interval before they are only counted. */
#define LIB_LINES_PER_INTERVAL 20

struct eo__gconn {
    eo__gconn *prev, *next;
    int fd;
    bool counted;            /* by its address (an IP address) */
    unsigned char key[16];   /* addr_key() */
    atomic_int phase;        /* EO__PH_* */
    atomic_int_fast64_t since_ms;
    atomic_uint_fast64_t body_bytes;
    bool dropped;            /* shut by the watch; under the lock */
};

typedef struct addr_slot {
    unsigned char key[16];
    uint32_t count; /* 0: free */
} addr_slot;

struct eo__guard {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t th;
    bool th_ok, stop;
    eo__guard_config cfg;
    eo__metrics *m;
    const eo__logger *lg;
    eo__gconn *head;   /* every open connection */
    size_t open;
    addr_slot *slots;  /* open addressing, linear probing, power-of-2 size, at most half full */
    size_t nslots;
    uint64_t seed;
    /* the periodic summary */
    int64_t log_at_ms;
    uint64_t logged[EO__REFUSE_COUNT + EO__DROP_COUNT];
    unsigned lib_lines;
    uint64_t lib_suppressed;
};

static int64_t mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void count(atomic_uint_fast64_t *c)
{
    atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* The key an address is counted under: an IPv4 address whole (also when it arrives mapped into
 * IPv6), an IPv6 address by its /64, since one host holds a whole /64. false: not an IP. */
static bool addr_key(const struct sockaddr *sa, socklen_t len, unsigned char key[16])
{
    memset(key, 0, 16);
    if (sa == NULL)
        return false;
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)(const void *)sa;
        key[10] = key[11] = 0xff;
        memcpy(key + 12, &in->sin_addr, 4);
        return true;
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)(const void *)sa;
        if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr))
            memcpy(key, &in6->sin6_addr, 16);
        else
            memcpy(key, &in6->sin6_addr, 8);
        return true;
    }
    return false;
}

/* The slot holding @p key, or the free slot where it would go. Under the lock. */
static size_t slot_find(const eo__guard *g, const unsigned char key[16])
{
    size_t mask = g->nslots - 1;
    size_t i = (size_t)eo__hash_bytes(g->seed, key, 16) & mask;
    while (g->slots[i].count != 0 && memcmp(g->slots[i].key, key, 16) != 0)
        i = (i + 1) & mask;
    return i;
}

/* Frees slot @p i and moves later entries of its probe run back (no tombstones). */
static void slot_free(eo__guard *g, size_t i)
{
    size_t mask = g->nslots - 1;
    g->slots[i].count = 0;
    for (size_t j = (i + 1) & mask; g->slots[j].count != 0; j = (j + 1) & mask) {
        size_t home = (size_t)eo__hash_bytes(g->seed, g->slots[j].key, 16) & mask;
        /* j's entry may fill the hole at i unless its home lies cyclically in (i, j]. */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (!stays) {
            g->slots[i] = g->slots[j];
            g->slots[j].count = 0;
            i = j;
        }
    }
}

bool eo__guard_admit(eo__guard *g, const struct sockaddr *addr, socklen_t len)
{
    unsigned char key[16];
    bool ip = addr_key(addr, len, key);
    int refuse = -1;
    pthread_mutex_lock(&g->mu);
    if (g->open >= g->cfg.max_total)
        refuse = EO__REFUSE_TOTAL;
    else if (ip && g->cfg.max_per_address > 0 &&
             g->slots[slot_find(g, key)].count >= g->cfg.max_per_address)
        refuse = EO__REFUSE_ADDRESS;
    pthread_mutex_unlock(&g->mu);
    if (refuse >= 0)
        count(&g->m->conn_refused[refuse]);
    return refuse < 0;
}

eo__gconn *eo__guard_open(eo__guard *g, int fd, const struct sockaddr *addr, socklen_t len)
{
    eo__gconn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->fd = fd;
    c->counted = addr_key(addr, len, c->key);
    atomic_init(&c->phase, EO__PH_HEADERS);
    atomic_init(&c->since_ms, mono_ms());
    atomic_init(&c->body_bytes, 0);
    pthread_mutex_lock(&g->mu);
    if (c->counted) {
        size_t i = slot_find(g, c->key);
        if (g->slots[i].count == 0)
            memcpy(g->slots[i].key, c->key, 16);
        g->slots[i].count++;
    }
    c->next = g->head;
    if (g->head != NULL)
        g->head->prev = c;
    g->head = c;
    g->open++;
    pthread_mutex_unlock(&g->mu);
    count(&g->m->conn_accepted);
    atomic_fetch_add_explicit(&g->m->conn_open, 1, memory_order_relaxed);
    return c;
}

void eo__guard_close(eo__guard *g, eo__gconn *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&g->mu);
    if (c->counted) {
        size_t i = slot_find(g, c->key);
        if (g->slots[i].count > 1)
            g->slots[i].count--;
        else if (g->slots[i].count == 1)
            slot_free(g, i);
    }
    if (c->prev != NULL)
        c->prev->next = c->next;
    else
        g->head = c->next;
    if (c->next != NULL)
        c->next->prev = c->prev;
    g->open--;
    pthread_mutex_unlock(&g->mu);
    atomic_fetch_sub_explicit(&g->m->conn_open, 1, memory_order_relaxed);
    free(c);
}

void eo__gconn_phase(eo__gconn *c, int phase)
{
    if (c == NULL)
        return;
    atomic_store_explicit(&c->body_bytes, 0, memory_order_relaxed);
    atomic_store_explicit(&c->since_ms, mono_ms(), memory_order_relaxed);
    atomic_store_explicit(&c->phase, phase, memory_order_release);
}

void eo__gconn_body(eo__gconn *c, size_t n)
{
    if (c != NULL)
        atomic_fetch_add_explicit(&c->body_bytes, n, memory_order_relaxed);
}

/* Which deadline @p c has passed at @p now: EO__DROP_* or -1. */
static int overdue(const eo__guard *g, const eo__gconn *c, int64_t now)
{
    int phase = atomic_load_explicit(&c->phase, memory_order_acquire);
    int64_t for_ms = now - atomic_load_explicit(&c->since_ms, memory_order_relaxed);
    if (phase == EO__PH_HEADERS)
        return for_ms > g->cfg.header_timeout_ms ? EO__DROP_HEADERS : -1;
    if (phase != EO__PH_BODY || g->cfg.body_min_rate == 0 || for_ms <= g->cfg.body_grace_ms)
        return -1;
    uint64_t need = (uint64_t)(for_ms - g->cfg.body_grace_ms) * g->cfg.body_min_rate / 1000;
    return atomic_load_explicit(&c->body_bytes, memory_order_relaxed) < need ? EO__DROP_BODY
                                                                             : -1;
}

/* One look at every open connection: shuts those past a deadline. Under the lock. */
static void sweep(eo__guard *g, int64_t now)
{
    for (eo__gconn *c = g->head; c != NULL; c = c->next) {
        int why;
        if (c->dropped || (why = overdue(g, c, now)) < 0)
            continue;
        c->dropped = true;
        (void)shutdown(c->fd, SHUT_RDWR);
        count(&g->m->conn_dropped[why]);
    }
}

/* One logfmt line for what was refused or dropped since the last one, if anything was. */
static void summary(eo__guard *g)
{
    uint64_t now[EO__REFUSE_COUNT + EO__DROP_COUNT], delta = 0;
    for (int i = 0; i < EO__REFUSE_COUNT; i++)
        now[i] = (uint64_t)atomic_load_explicit(&g->m->conn_refused[i], memory_order_relaxed);
    for (int i = 0; i < EO__DROP_COUNT; i++)
        now[EO__REFUSE_COUNT + i] =
            (uint64_t)atomic_load_explicit(&g->m->conn_dropped[i], memory_order_relaxed);
    for (int i = 0; i < EO__REFUSE_COUNT + EO__DROP_COUNT; i++)
        delta += now[i] - g->logged[i];
    if (delta == 0 && g->lib_suppressed == 0)
        return;
    eo__logline l;
    eo__log_begin(&l, EO_LOG_WARN, "connections limited");
    eo__log_int(&l, "refused_total_cap", (long long)(now[0] - g->logged[0]));
    eo__log_int(&l, "refused_address_cap", (long long)(now[1] - g->logged[1]));
    eo__log_int(&l, "dropped_header_deadline", (long long)(now[2] - g->logged[2]));
    eo__log_int(&l, "dropped_slow_body", (long long)(now[3] - g->logged[3]));
    eo__log_int(&l, "library_lines_suppressed", (long long)g->lib_suppressed);
    eo__log_int(&l, "open", (long long)g->open);
    eo__log_int(&l, "interval_s", LOG_INTERVAL_MS / 1000);
    eo__log_end(g->lg, EO_LOG_WARN, &l);
    memcpy(g->logged, now, sizeof now);
    g->lib_suppressed = 0;
}

bool eo__guard_log_allow(eo__guard *g)
{
    if (g == NULL)
        return true;
    pthread_mutex_lock(&g->mu);
    bool ok = g->lib_lines < LIB_LINES_PER_INTERVAL;
    if (ok)
        g->lib_lines++;
    else
        g->lib_suppressed++;
    pthread_mutex_unlock(&g->mu);
    return ok;
}

static void *watch_main(void *arg)
{
    eo__guard *g = arg;
    int64_t tick = g->cfg.header_timeout_ms / 4;
    if (tick > TICK_MS_MAX)
        tick = TICK_MS_MAX;
    if (tick < 10)
        tick = 10;
    pthread_mutex_lock(&g->mu);
    while (!g->stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_nsec += (long)(tick % 1000) * 1000000L;
        until.tv_sec += (time_t)(tick / 1000) + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        int rc = 0;
        while (!g->stop && rc != ETIMEDOUT)
            rc = pthread_cond_timedwait(&g->cv, &g->mu, &until);
        if (g->stop)
            break;
        int64_t now = mono_ms();
        sweep(g, now);
        if (now - g->log_at_ms >= LOG_INTERVAL_MS) {
            summary(g);
            g->log_at_ms = now;
            g->lib_lines = 0;
        }
    }
    summary(g);
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

int eo__guard_start(const eo__guard_config *cfg, eo__metrics *m, const eo__logger *lg,
                    eo__guard **out)
{
    *out = NULL;
    if (cfg->max_total == 0)
        return EO_EINVAL;
    eo__guard *g = calloc(1, sizeof *g);
    if (g == NULL)
        return EO_ENOMEM;
    g->cfg = *cfg;
    g->m = m;
    g->lg = lg;
    g->nslots = 16;
    while (g->nslots < 2 * (size_t)cfg->max_total)
        g->nslots *= 2;
    g->slots = calloc(g->nslots, sizeof *g->slots);
    g->seed = eo__seed_fresh(g);
    g->log_at_ms = mono_ms();
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    bool cv_ok = pthread_cond_init(&g->cv, &ca) == 0;
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&g->mu, NULL);
    if (g->slots == NULL || !cv_ok || pthread_create(&g->th, NULL, watch_main, g) != 0) {
        if (cv_ok)
            pthread_cond_destroy(&g->cv);
        pthread_mutex_destroy(&g->mu);
        free(g->slots);
        free(g);
        return EO_ENOMEM;
    }
    g->th_ok = true;
    *out = g;
    return 0;
}

void eo__guard_stop(eo__guard *g)
{
    if (g == NULL)
        return;
    pthread_mutex_lock(&g->mu);
    g->stop = true;
    pthread_cond_signal(&g->cv);
    pthread_mutex_unlock(&g->mu);
    if (g->th_ok)
        pthread_join(g->th, NULL);
    /* Connections libmicrohttpd never reported closed (it is stopped by now). */
    while (g->head != NULL) {
        eo__gconn *c = g->head;
        g->head = c->next;
        free(c);
    }
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
    free(g->slots);
    free(g);
}
