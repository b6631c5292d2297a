/* Raw TCP helpers for end-to-end tests (e2e_raw.h). */
#include "e2e_raw.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

int e2e_raw_connect(const e2e_server *s, const char *src)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    if (src != NULL) {
        if (inet_pton(AF_INET, src, &sa.sin_addr) != 1 ||
            bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            close(fd);
            return -1;
        }
    }
    sa.sin_port = htons((uint16_t)s->port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

int e2e_raw_send(int fd, const char *text)
{
    size_t n = strlen(text), off = 0;
    while (off < n) {
        ssize_t w = send(fd, text + off, n - off, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        off += (size_t)w;
    }
    return 0;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t e2e_raw_read(int fd, char *buf, size_t cap, int timeout_ms, bool *closed)
{
    size_t len = 0;
    long long deadline = now_ms() + timeout_ms;
    *closed = false;
    while (len + 1 < cap) {
        long long left = deadline - now_ms();
        if (left <= 0)
            break;
        struct pollfd p = {fd, POLLIN, 0};
        int pr = poll(&p, 1, (int)left);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            break;
        ssize_t r = recv(fd, buf + len, cap - 1 - len, 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            *closed = true;
            break;
        }
        len += (size_t)r;
    }
    buf[len] = '\0';
    return len;
}

char *e2e_raw_exchange(const e2e_server *s, const char *src, const char *request,
                       int timeout_ms)
{
    int fd = e2e_raw_connect(s, src);
    if (fd < 0)
        return NULL;
    char *buf = malloc(65536);
    bool closed;
    if (buf != NULL && e2e_raw_send(fd, request) != 0)
        buf[0] = '\0';
    else if (buf != NULL)
        e2e_raw_read(fd, buf, 65536, timeout_ms, &closed);
    close(fd);
    return buf;
}

double e2e_metric(const e2e_server *s, const char *prefix)
{
    e2e_resp r;
    if (e2e_call(s, "GET", "/metrics", NULL, NULL, &r) != 0)
        return -1;
    double v = -1;
    size_t n = strlen(prefix);
    for (const char *line = r.body; line != NULL && *line;) {
        if (strncmp(line, prefix, n) == 0 && line[n] == ' ') {
            v = strtod(line + n + 1, NULL);
            break;
        }
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    e2e_resp_free(&r);
    return v;
}
