/* A fault-injection HTTP/1.1 proxy on loopback for end-to-end tests (see proxy.h). */
#define _GNU_SOURCE /* accept4: close-on-exec at once, as tests fork the service meanwhile */
#include "proxy.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

enum {
    TICK_MS = 100,               /* every wait wakes this often to look at the stop flag */
    MAX_HEAD = 64 * 1024,        /* request line or status line plus headers */
    MAX_BODY = 16 * 1024 * 1024, /* far above the service's own body caps */
    MAX_CONNS = 64,              /* client connections open at once; more are closed */
    CONNECT_MS = 5000,           /* loopback connects are instant unless the backlog is full */
    UPSTREAM_MS = 60000,         /* a service this slow has failed the test anyway */
};

typedef struct conn {
    struct proxy *p;
    int fd;    /* the client socket; -1 once closed (written under p->mu) */
    bool done; /* the thread has finished and may be joined (under p->mu) */
    pthread_t th;
    struct conn *next;
} conn;

struct proxy {
    int lfd;
    unsigned port;
    pthread_t acceptor;
    atomic_bool stop;
    atomic_ulong requests, dropped;
    pthread_mutex_t mu; /* guards what follows */
    unsigned upstream;
    proxy_mode mode;
    int left;     /* requests left in this mode before PASS again; 0: until changed */
    unsigned gen; /* bumped by each proxy_set_mode, which releases hung connections */
    conn *conns;
    int nconns;
};

typedef struct buf {
    char *p;
    size_t len, cap;
} buf;

/* What the proxy needs of a head. */
typedef struct head {
    size_t len;      /* up to and including the blank line */
    long long clen;  /* Content-Length, -1 when absent */
    bool te;         /* any Transfer-Encoding: not supported, the connection is closed */
    bool close;      /* the connection ends after this exchange */
    bool expect;     /* Expect: 100-continue */
    int status;      /* responses only */
} head;

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool stopping(proxy *p)
{
    return atomic_load(&p->stop);
}

/* Waits until @p fd is ready for @p ev, a tick at a time so that proxy_stop is seen.
 * 1 ready (or hung up: the next call says which), -1 on stop, error or @p deadline (0: none). */
static int wait_fd(proxy *p, int fd, short ev, long long deadline)
{
    for (;;) {
        if (stopping(p) || (deadline && now_ms() >= deadline))
            return -1;
        struct pollfd pf = {fd, ev, 0};
        int r = poll(&pf, 1, TICK_MS);
        if (r > 0)
            return 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Reads what is there into @p b (growing it up to @p max). Bytes read, 0 at EOF, -1 otherwise. */
static long fill(proxy *p, int fd, buf *b, size_t max, long long deadline)
{
    if (b->len >= max)
        return -1;
    if (b->cap - b->len < 4096 && b->cap < max) {
        size_t ncap = b->cap ? 2 * b->cap : 16384;
        ncap = ncap < max ? ncap : max;
        char *np = realloc(b->p, ncap);
        if (!np)
            return -1;
        b->p = np;
        b->cap = ncap;
    }
    for (;;) {
        if (wait_fd(p, fd, POLLIN, deadline) < 0)
            return -1;
        ssize_t r = recv(fd, b->p + b->len, b->cap - b->len, 0);
        if (r >= 0) {
            b->len += (size_t)r;
            return (long)r;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return -1;
    }
}

/* Drops the first @p n bytes of @p b (the message just handled; what follows is the next). */
static void consume(buf *b, size_t n)
{
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

static int send_all(proxy *p, int fd, const char *s, size_t n, long long deadline)
{
    while (n) {
        if (wait_fd(p, fd, POLLOUT, deadline) < 0)
            return -1;
        /* MSG_NOSIGNAL: a client gone away must not raise SIGPIPE in the test process. */
        ssize_t r = send(fd, s, n, MSG_NOSIGNAL);
        if (r < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
                continue;
            return -1;
        }
        s += r;
        n -= (size_t)r;
    }
    return 0;
}

/* Reads until @p b starts with a whole head; *hlen gets its length. 1, 0 when the peer closed
 * before sending a byte (the end of a keep-alive connection), -1 otherwise. */
static int read_head(proxy *p, int fd, buf *b, long long deadline, size_t *hlen)
{
    size_t from = 0;
    for (;;) {
        for (; from + 4 <= b->len && from + 4 <= MAX_HEAD; from++) {
            if (memcmp(b->p + from, "\r\n\r\n", 4) == 0) {
                *hlen = from + 4;
                return 1;
            }
        }
        if (b->len >= MAX_HEAD)
            return -1;
        long r = fill(p, fd, b, (size_t)MAX_HEAD + MAX_BODY, deadline);
        if (r == 0 && b->len == 0)
            return 0;
        if (r <= 0)
            return -1;
    }
}

/* Whether @p v (length @p n) contains @p word, ignoring case: enough for header values. */
static bool has_word(const char *v, size_t n, const char *word)
{
    size_t wn = strlen(word);
    for (size_t i = 0; i + wn <= n; i++)
        if (strncasecmp(v + i, word, wn) == 0)
            return true;
    return false;
}

static bool name_is(const char *s, size_t n, const char *name)
{
    return n == strlen(name) && strncasecmp(s, name, n) == 0;
}

/* Parses the head s[0, n) (ending with the blank line). 0, or -1 when malformed. */
static int parse_head(const char *s, size_t n, bool response, head *h)
{
    memset(h, 0, sizeof *h);
    h->len = n;
    h->clen = -1;
    const char *end = s + n;
    const char *nl = memchr(s, '\n', n);
    if (!nl)
        return -1;
    if (response) {
        /* "HTTP/1.1 200 ..." */
        if (nl - s < 12 || memcmp(s, "HTTP/1.", 7) != 0)
            return -1;
        char code[4] = {s[9], s[10], s[11], '\0'};
        char *e;
        h->status = (int)strtol(code, &e, 10);
        if (e != code + 3 || h->status < 100)
            return -1;
    } else if (nl - s >= 9 && memcmp(nl - 9, "HTTP/1.0", 8) == 0) {
        h->close = true; /* no keep-alive negotiation in this proxy: 1.0 gets one exchange */
    }
    for (const char *line = nl + 1; line < end; line = nl + 1) {
        nl = memchr(line, '\n', (size_t)(end - line));
        if (!nl)
            break;
        size_t ll = (size_t)(nl - line);
        if (ll && line[ll - 1] == '\r')
            ll--;
        const char *colon = memchr(line, ':', ll);
        if (!colon)
            continue; /* the blank line */
        size_t nn = (size_t)(colon - line);
        const char *v = colon + 1;
        size_t vn = ll - nn - 1;
        while (vn && (*v == ' ' || *v == '\t'))
            v++, vn--;
        while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
            vn--;
        if (name_is(line, nn, "Content-Length")) {
            char num[24];
            if (vn == 0 || vn >= sizeof num || v[0] < '0' || v[0] > '9')
                return -1;
            memcpy(num, v, vn);
            num[vn] = '\0';
            char *e;
            errno = 0;
            long long c = strtoll(num, &e, 10);
            if (*e || errno || (h->clen >= 0 && h->clen != c))
                return -1;
            h->clen = c;
        } else if (name_is(line, nn, "Transfer-Encoding")) {
            h->te = true;
        } else if (name_is(line, nn, "Connection")) {
            h->close = h->close || has_word(v, vn, "close");
        } else if (name_is(line, nn, "Expect")) {
            h->expect = has_word(v, vn, "100-continue");
        }
    }
    return 0;
}

/* The mode for one request, counted down (p->mu held). */
static proxy_mode use_mode(proxy *p)
{
    proxy_mode m = p->mode;
    if (p->left > 0 && --p->left == 0)
        p->mode = PROXY_PASS;
    return m;
}

/* The mode for one request, with the upstream port and the generation at that moment. */
static proxy_mode take_mode(proxy *p, unsigned *port, unsigned *gen)
{
    pthread_mutex_lock(&p->mu);
    proxy_mode m = use_mode(p);
    *port = p->upstream;
    *gen = p->gen;
    pthread_mutex_unlock(&p->mu);
    return m;
}

/* Whether a new connection is to be refused; such a connection uses up one request of DOWN. */
static bool down_at_accept(proxy *p)
{
    pthread_mutex_lock(&p->mu);
    bool down = p->mode == PROXY_DOWN && use_mode(p) == PROXY_DOWN;
    pthread_mutex_unlock(&p->mu);
    return down;
}

static unsigned current_gen(proxy *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned g = p->gen;
    pthread_mutex_unlock(&p->mu);
    return g;
}

/* A connected non-blocking socket to 127.0.0.1:@p port, or -1 (refused: the service is down). */
static int dial(proxy *p, unsigned port)
{
    int u = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (u < 0)
        return -1;
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(u, (struct sockaddr *)&a, sizeof a) == 0)
        return u;
    int err = errno;
    socklen_t len = sizeof err;
    if (err == EINPROGRESS && wait_fd(p, u, POLLOUT, now_ms() + CONNECT_MS) > 0 &&
        getsockopt(u, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0)
        return u;
    close(u);
    return -1;
}

/* Sends the request @p req (@p n bytes) on a fresh upstream connection and reads the whole
 * final response into @p out (interim 1xx responses skipped: the proxy answered Expect
 * itself). 0, or -1 (nothing usable: the client connection is to be closed). */
static int exchange(proxy *p, unsigned port, const char *req, size_t n, bool head_req, buf *out,
                    head *rs)
{
    int u = dial(p, port);
    if (u < 0)
        return -1;
    long long deadline = now_ms() + UPSTREAM_MS;
    int rc = -1;
    size_t hlen = 0;
    /* A failed send is not the end: the service may have answered early (413 to a body over
     * its cap) and closed; that answer is read below if it is there. */
    (void)send_all(p, u, req, n, deadline);
    for (;;) {
        if (read_head(p, u, out, deadline, &hlen) != 1 || parse_head(out->p, hlen, true, rs) != 0)
            goto done;
        if (rs->status >= 200)
            break;
        if (rs->status == 101)
            goto done; /* a protocol switch: not HTTP any more, and never asked for here */
        consume(out, hlen);
    }
    if (rs->te)
        goto done;
    const size_t cap = (size_t)MAX_HEAD + MAX_BODY;
    if (head_req || rs->status == 204 || rs->status == 304) {
        out->len = hlen;
    } else if (rs->clen >= 0) {
        if (rs->clen > MAX_BODY)
            goto done;
        size_t want = hlen + (size_t)rs->clen;
        while (out->len < want)
            if (fill(p, u, out, cap, deadline) <= 0)
                goto done;
        out->len = want;
    } else {
        /* No length: the body runs to the upstream's close, so the client's must close too. */
        long r;
        while ((r = fill(p, u, out, cap, deadline)) > 0)
            ;
        if (r < 0)
            goto done;
        rs->close = true;
    }
    rc = 0;
done:
    close(u);
    return rc;
}

/* HANG: holds the connection, reading and discarding, until the mode is set again, the client
 * closes (its timeout) or the proxy stops. */
static void hang(proxy *p, int fd, unsigned gen)
{
    char sink[4096];
    while (!stopping(p) && current_gen(p) == gen) {
        struct pollfd pf = {fd, POLLIN, 0};
        int r = poll(&pf, 1, TICK_MS);
        if (r < 0 && errno != EINTR)
            return;
        if (r > 0) {
            ssize_t got = recv(fd, sink, sizeof sink, 0);
            if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
                return;
        }
    }
}

/* One client connection: its requests one after the other until it closes or fails. */
static void *conn_main(void *arg)
{
    conn *c = arg;
    proxy *p = c->p;
    buf in = {0}, out = {0};
    for (;;) {
        head rq;
        size_t hlen;
        if (read_head(p, c->fd, &in, 0, &hlen) != 1 || parse_head(in.p, hlen, false, &rq) != 0 ||
            rq.te)
            break;
        atomic_fetch_add(&p->requests, 1);
        unsigned port, gen;
        proxy_mode m = take_mode(p, &port, &gen);
        if (m == PROXY_DOWN)
            break;
        if (m == PROXY_HANG) {
            hang(p, c->fd, gen);
            break;
        }
        if (rq.clen > MAX_BODY)
            break;
        size_t want = hlen + (size_t)(rq.clen > 0 ? rq.clen : 0);
        /* libcurl waits up to a second for "100 Continue" before sending a large body. */
        if (rq.expect && in.len < want &&
            send_all(p, c->fd, "HTTP/1.1 100 Continue\r\n\r\n", 25, now_ms() + UPSTREAM_MS) != 0)
            break;
        while (in.len < want)
            if (fill(p, c->fd, &in, (size_t)MAX_HEAD + MAX_BODY, 0) <= 0)
                goto done;
        bool head_req = hlen > 5 && memcmp(in.p, "HEAD ", 5) == 0;
        head rs;
        out.len = 0;
        if (exchange(p, port, in.p, want, head_req, &out, &rs) != 0)
            break;
        if (m == PROXY_DROP_REPLY) {
            atomic_fetch_add(&p->dropped, 1);
            break;
        }
        if (send_all(p, c->fd, out.p, out.len, now_ms() + UPSTREAM_MS) != 0 || rq.close || rs.close)
            break;
        consume(&in, want);
    }
done:
    free(in.p);
    free(out.p);
    pthread_mutex_lock(&p->mu);
    close(c->fd);
    c->fd = -1;
    c->done = true;
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

/* Joins and frees the finished connection threads (all of them when @p all: after stop). */
static void reap(proxy *p, bool all)
{
    conn *dead = NULL;
    pthread_mutex_lock(&p->mu);
    for (conn **at = &p->conns; *at;) {
        conn *c = *at;
        if (all || c->done) {
            *at = c->next;
            c->next = dead;
            dead = c;
            p->nconns--;
        } else {
            at = &c->next;
        }
    }
    pthread_mutex_unlock(&p->mu);
    while (dead) {
        conn *c = dead;
        dead = c->next;
        pthread_join(c->th, NULL);
        free(c);
    }
}

/* Hands @p fd to a new connection thread. 0, or -1 (the caller closes @p fd). */
static int start_conn(proxy *p, int fd)
{
    int rc = -1;
    pthread_mutex_lock(&p->mu);
    conn *c = p->nconns < MAX_CONNS ? calloc(1, sizeof *c) : NULL;
    if (c) {
        c->p = p;
        c->fd = fd;
        if (pthread_create(&c->th, NULL, conn_main, c) == 0) {
            c->next = p->conns;
            p->conns = c;
            p->nconns++;
            rc = 0;
        } else {
            free(c);
        }
    }
    pthread_mutex_unlock(&p->mu);
    return rc;
}

static void *accept_main(void *arg)
{
    proxy *p = arg;
    while (!stopping(p)) {
        reap(p, false);
        struct pollfd pf = {p->lfd, POLLIN, 0};
        if (poll(&pf, 1, TICK_MS) <= 0)
            continue;
        int fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                struct timespec ts = {0, TICK_MS * 1000000L}; /* not a busy loop */
                nanosleep(&ts, NULL);
            }
            continue;
        }
        /* DOWN: closed before a byte is read, like a service that has gone away. */
        if (down_at_accept(p) || start_conn(p, fd) != 0)
            close(fd);
    }
    return NULL;
}

int proxy_start(unsigned upstream_port, proxy **out)
{
    *out = NULL;
    proxy *p = calloc(1, sizeof *p);
    if (!p)
        return -1;
    p->upstream = upstream_port;
    p->mode = PROXY_PASS;
    atomic_init(&p->stop, false);
    atomic_init(&p->requests, 0);
    atomic_init(&p->dropped, 0);
    if (pthread_mutex_init(&p->mu, NULL) != 0) {
        free(p);
        return -1;
    }
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    p->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (p->lfd < 0 || bind(p->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        listen(p->lfd, 128) != 0 || getsockname(p->lfd, (struct sockaddr *)&a, &len) != 0 ||
        pthread_create(&p->acceptor, NULL, accept_main, p) != 0) {
        if (p->lfd >= 0)
            close(p->lfd);
        pthread_mutex_destroy(&p->mu);
        free(p);
        return -1;
    }
    p->port = ntohs(a.sin_port);
    *out = p;
    return 0;
}

unsigned proxy_port(const proxy *p)
{
    return p->port;
}

void proxy_set_upstream(proxy *p, unsigned port)
{
    pthread_mutex_lock(&p->mu);
    p->upstream = port;
    pthread_mutex_unlock(&p->mu);
}

void proxy_set_mode(proxy *p, proxy_mode m, int count)
{
    pthread_mutex_lock(&p->mu);
    p->mode = m;
    p->left = count > 0 ? count : 0;
    p->gen++;
    pthread_mutex_unlock(&p->mu);
}

unsigned long proxy_requests(const proxy *p)
{
    return atomic_load(&p->requests);
}

unsigned long proxy_dropped(const proxy *p)
{
    return atomic_load(&p->dropped);
}

void proxy_stop(proxy *p)
{
    if (!p)
        return;
    atomic_store(&p->stop, true);
    pthread_join(p->acceptor, NULL);
    close(p->lfd);
    /* Wake every connection thread now rather than at its next tick; each closes its own fd. */
    pthread_mutex_lock(&p->mu);
    for (conn *c = p->conns; c; c = c->next)
        if (c->fd >= 0)
            shutdown(c->fd, SHUT_RDWR);
    pthread_mutex_unlock(&p->mu);
    reap(p, true);
    pthread_mutex_destroy(&p->mu);
    free(p);
}
