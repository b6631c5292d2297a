/* logfmt lines: ts level msg key=value…; values quoted when they hold spaces, quotes, '=' or
 * control characters, so a line always parses back into the same fields. */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "service/service.h"

static const char *level_name(int level)
{
    switch (level) {
    case EO_LOG_DEBUG: return "debug";
    case EO_LOG_INFO: return "info";
    case EO_LOG_WARN: return "warn";
    default: return "error";
    }
}

static void put_raw(eo__logline *l, const char *s, size_t n)
{
    size_t room = sizeof l->buf - 1 - l->len; /* one byte kept for the newline */
    if (n > room)
        n = room;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
}

static void put_value(eo__logline *l, const char *v)
{
    bool quote = (*v == '\0');
    for (const char *p = v; *p && !quote; p++) {
        unsigned char ch = (unsigned char)*p;
        if (ch <= ' ' || ch == '"' || ch == '=' || ch == '\\' || ch == 0x7f)
            quote = true;
    }
    if (!quote) {
        put_raw(l, v, strlen(v));
        return;
    }
    put_raw(l, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)v; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put_raw(l, esc, 2);
        } else if (*p < 0x20 || *p == 0x7f) {
            int n = snprintf(esc, sizeof esc, "\\x%02x", *p);
            put_raw(l, esc, (size_t)n);
        } else {
            put_raw(l, (const char *)p, 1);
        }
    }
    put_raw(l, "\"", 1);
}

void eo__log_begin(eo__logline *l, int level, const char *msg)
{
    struct timespec ts;
    struct tm tm;
    char tbuf[40];
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    int n = snprintf(tbuf, sizeof tbuf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                     ts.tv_nsec / 1000000L);
    l->len = 0;
    put_raw(l, "ts=", 3);
    put_raw(l, tbuf, (size_t)n);
    eo__log_str(l, "level", level_name(level));
    eo__log_str(l, "msg", msg);
}

void eo__log_str(eo__logline *l, const char *key, const char *val)
{
    put_raw(l, " ", 1);
    put_raw(l, key, strlen(key));
    put_raw(l, "=", 1);
    put_value(l, val ? val : "");
}

void eo__log_int(eo__logline *l, const char *key, long long val)
{
    char b[32];
    snprintf(b, sizeof b, "%lld", val);
    eo__log_str(l, key, b);
}

void eo__log_ms(eo__logline *l, const char *key, double ms)
{
    char b[32];
    snprintf(b, sizeof b, "%.3f", ms);
    eo__log_str(l, key, b);
}

void eo__log_end(const eo__logger *lg, int level, eo__logline *l)
{
    if (!lg || !lg->f || level < lg->level)
        return;
    l->buf[l->len++] = '\n';
    /* One fwrite of the whole line keeps lines from different threads whole. */
    fwrite(l->buf, 1, l->len, lg->f);
    fflush(lg->f);
}

void eo__log_msg(const eo__logger *lg, int level, const char *msg)
{
    eo__logline l;
    if (!lg || !lg->f || level < lg->level)
        return;
    eo__log_begin(&l, level, msg);
    eo__log_end(lg, level, &l);
}
