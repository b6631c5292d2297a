/* JSON text into a bounded buffer (json_text.h). */
#include "codec/json_text.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "evenodds/eo_common.h"

/* The escape of byte @p c into @p esc (2 or 6 bytes): its length. */
static size_t escape(unsigned char c, char esc[6])
{
    static const char hex[] = "0123456789ABCDEF";
    esc[0] = '\\';
    switch (c) {
    case '"':
    case '\\': esc[1] = (char)c; return 2;
    case '\b': esc[1] = 'b'; return 2;
    case '\f': esc[1] = 'f'; return 2;
    case '\n': esc[1] = 'n'; return 2;
    case '\r': esc[1] = 'r'; return 2;
    case '\t': esc[1] = 't'; return 2;
    default:
        memcpy(esc + 1, "u00", 3);
        esc[4] = hex[c >> 4];
        esc[5] = hex[c & 15];
        return 6;
    }
}

/* Writes the string straight into the allocation, which has room for its worst case (every
 * byte escaped to 6): ids are written by the hundred per answer, and a bounds check per piece
 * was most of their cost. */
static void str_in_place(eo__buf *b, const char *s)
{
    char *o = b->p + b->len;
    *o++ = '"';
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            *o++ = (char)c;
        else
            o += escape(c, o);
    }
    *o++ = '"';
    *o = '\0';
    b->len = (size_t)(o - b->p);
}

void eo__jt_str(eo__buf *b, const char *s)
{
    size_t n = strlen(s);
    size_t left = b->cap - b->len;
    bool fits = b->err == 0 && n <= left / 6 && 6 * n + 2 < left; /* and the NUL */
    if (fits || (b->max - b->len >= 2 && n < (b->max - b->len - 2) / 6 &&
                 eo__buf_reserve(b, 6 * n + 2) == 0)) {
        str_in_place(b, s);
        return;
    }
    /* Near the buffer's maximum: piece by piece, so that only what is written counts. */
    (void)eo__buf_add(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        (void)eo__buf_add(b, run, (size_t)(s - run));
        run = s + 1;
        char esc[6];
        (void)eo__buf_add(b, esc, escape(c, esc));
    }
    (void)eo__buf_add(b, run, (size_t)(s - run));
    (void)eo__buf_add(b, "\"", 1);
}

void eo__jt_int(eo__buf *b, long long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", v);
    (void)eo__buf_add(b, t, (size_t)n);
}

/* A finite real as jansson 2.14 (Debian 12's) writes it at its default precision: "%.17g";
 * ".0" appended when that would read back as an integer; the exponent without '+' and leading
 * zeros. A jansson that prints the shortest round-trip digits instead (upstream after 2.14)
 * would differ in digits, not in value: test_codec's comparison with json_dumps says so at
 * once. */
void eo__jt_real(eo__buf *b, double v)
{
    char t[40];
    size_t n = (size_t)snprintf(t, sizeof t, "%.17g", v);
    char *e = memchr(t, 'e', n);
    if (e != NULL) {
        char *to = e + 1, *from = e + 1;
        if (*from == '-')
            to++, from++;
        else if (*from == '+')
            from++;
        while (*from == '0')
            from++;
        memmove(to, from, (size_t)(t + n - from) + 1);
        n = strlen(t);
    } else if (memchr(t, '.', n) == NULL) {
        t[n++] = '.';
        t[n++] = '0';
    }
    (void)eo__buf_add(b, t, n);
}

/* A real with at most 9 decimals, by integer arithmetic: printf's exact binary-to-decimal
 * conversion of two reals per player was the largest single cost of an update. P and K are
 * informative in the answer (the state itself stays exact in memory and in the log), and
 * 1e-9 is finer than anything a plugin shows. Trailing zeros go: K = 72 prints as 72.
 * From 1e9 on (where |v|·1e9 nears the range of a long long) a mean far from the start, which
 * a model's range allows, is written with %.17g: the same double back, never an error. A
 * non-finite value cannot be JSON; eo_pool_apply_checked() refuses a round that makes one. */
void eo__jt_real9(eo__buf *b, double v)
{
    if (!isfinite(v)) {
        b->err = EO_EINVAL;
        return;
    }
    if (fabs(v) >= 1e9) {
        char t[40];
        int n = snprintf(t, sizeof t, "%.17g", v);
        (void)eo__buf_add(b, t, (size_t)n);
        return;
    }
    long long scaled = llround(fabs(v) * 1e9);
    long long ip = scaled / 1000000000, fp = scaled % 1000000000;
    char t[40];
    int n = snprintf(t, sizeof t, "%s%lld", (v < 0 && scaled != 0) ? "-" : "", ip);
    if (fp != 0) {
        char d[10];
        for (int i = 8; i >= 0; i--, fp /= 10)
            d[i] = (char)('0' + fp % 10);
        int len = 9;
        while (d[len - 1] == '0')
            len--;
        t[n++] = '.';
        memcpy(t + n, d, (size_t)len);
        n += len;
    }
    (void)eo__buf_add(b, t, (size_t)n);
}
