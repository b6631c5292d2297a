/* Split requests and answers as text, without jansson trees (eo_codec.h): the service's hot
 * path. The plain request reader accepts one shape only and leaves everything else, errors
 * included, to the general decoder, so no message depends on which of the two read a body.
 * The answer writer gives the bytes json_dumps(…, JSON_COMPACT) gives for eo_splits_to_json();
 * tests/unit/test_codec.c compares the two on random answers. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

/* ---- the plain request ------------------------------------------------------------------ */

static size_t skip_ws(const char *t, size_t len, size_t i)
{
    while (i < len && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
        i++;
    return i;
}

/* Whether t[*i] (after whitespace) is @p c; steps past it. */
static bool eat(const char *t, size_t len, size_t *i, char c)
{
    *i = skip_ws(t, len, *i);
    if (*i >= len || t[*i] != c)
        return false;
    (*i)++;
    return true;
}

/* Reads the ids of {"players":["id",…]} into start/slen; false for anything else. An id with
 * an escape, one eo_id_check() refuses, a repeated id, fewer than 2 or more than
 * EO_SPLIT_EXACT_MAX of them: false too (the general decoder then says why). */
static bool plain_ids(const char *t, size_t len, const char **start, size_t *slen, size_t *n)
{
    static const char key[] = "\"players\"";
    size_t i = 0;
    *n = 0;
    if (!eat(t, len, &i, '{'))
        return false;
    i = skip_ws(t, len, i);
    if (len - i < sizeof key - 1 || memcmp(t + i, key, sizeof key - 1) != 0)
        return false;
    i += sizeof key - 1;
    if (!eat(t, len, &i, ':') || !eat(t, len, &i, '['))
        return false;
    do {
        if (*n == EO_SPLIT_EXACT_MAX || !eat(t, len, &i, '"'))
            return false;
        size_t s = i;
        while (i < len && t[i] != '"' && t[i] != '\\')
            i++;
        if (i >= len || t[i] != '"' || eo_id_check(t + s, i - s) != 0)
            return false;
        for (size_t j = 0; j < *n; j++)
            if (slen[j] == i - s && memcmp(start[j], t + s, i - s) == 0)
                return false;
        start[*n] = t + s;
        slen[(*n)++] = i - s;
        i++;
    } while (eat(t, len, &i, ','));
    return eat(t, len, &i, ']') && eat(t, len, &i, '}') && skip_ws(t, len, i) == len && *n >= 2;
}

int eo_split_request_plain(const char *text, size_t len, eo_split_request *out)
{
    const char *start[EO_SPLIT_EXACT_MAX];
    size_t slen[EO_SPLIT_EXACT_MAX], n;
    if (out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    if (text == NULL || !plain_ids(text, len, start, slen, &n))
        return EO_EPARSE;
    out->n = n;
    out->ids = calloc(n, sizeof *out->ids);
    out->rating = calloc(n, sizeof *out->rating);
    out->has_rating = calloc(n, sizeof *out->has_rating);
    if (out->ids == NULL || out->rating == NULL || out->has_rating == NULL)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        if ((out->ids[i] = malloc(slen[i] + 1)) == NULL)
            goto nomem;
        memcpy(out->ids[i], start[i], slen[i]);
        out->ids[i][slen[i]] = '\0';
    }
    return 0;
nomem:
    eo_split_request_free(out);
    return EO_ENOMEM;
}

/* ---- the answer ------------------------------------------------------------------------- */

/* A bounded text under construction: bytes past @c cap are counted, not written. */
typedef struct tbuf {
    char *p;
    size_t cap, len;
} tbuf;

static void put(tbuf *b, const char *s, size_t n)
{
    if (b->len < b->cap) {
        size_t room = b->cap - b->len;
        memcpy(b->p + b->len, s, n < room ? n : room);
    }
    b->len += n;
}

static void put_str(tbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void put_int(tbuf *b, long long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", v);
    put(b, t, (size_t)n);
}

/* A finite real as jansson 2.14 (Debian 12's) writes it at its default precision: "%.17g";
 * ".0" appended when that would read back as an integer; the exponent without '+' and leading
 * zeros. A jansson that prints the shortest round-trip digits instead (upstream after 2.14)
 * would differ in digits, not in value: test_codec's comparison with json_dumps says so at
 * once. */
static void put_real(tbuf *b, double v)
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
    put(b, t, n);
}

/* A JSON string: '"' and '\\' escaped, control characters as jansson escapes them. */
static void put_json_str(tbuf *b, const char *s)
{
    static const char hex[] = "0123456789ABCDEF";
    put(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        put(b, run, (size_t)(s - run));
        run = s + 1;
        char esc[6] = {'\\', (char)c, 0, 0, 0, 0};
        size_t n = 2;
        switch (c) {
        case '"': case '\\': break;
        case '\b': esc[1] = 'b'; break;
        case '\f': esc[1] = 'f'; break;
        case '\n': esc[1] = 'n'; break;
        case '\r': esc[1] = 'r'; break;
        case '\t': esc[1] = 't'; break;
        default:
            memcpy(esc + 1, "u00", 3);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            n = 6;
        }
        put(b, esc, n);
    }
    put(b, run, (size_t)(s - run));
    put(b, "\"", 1);
}

static void put_ids(tbuf *b, const uint16_t *idx, size_t n, const char *const *ids)
{
    put(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            put(b, ",", 1);
        put_json_str(b, ids[idx[i]]);
    }
    put(b, "]", 1);
}

int eo_splits_encode(const eo_splits *s, const char *const *ids, int64_t unit, char *buf,
                     size_t cap, size_t *len)
{
    if (s == NULL || ids == NULL || len == NULL || unit < 1 || (buf == NULL && cap > 0) ||
        (s->count > 0 && s->split == NULL))
        return EO_EINVAL;
    tbuf b = {buf, cap, 0};
    put_str(&b, "{\"splits\":[");
    for (size_t i = 0; i < s->count; i++) {
        const eo_split *sp = &s->split[i];
        if (isinf(sp->p_a))
            return EO_EINVAL; /* jansson has no real for it either */
        put_str(&b, i > 0 ? ",{\"k\":" : "{\"k\":");
        put_int(&b, sp->k);
        put_str(&b, ",\"A\":");
        put_ids(&b, sp->a, (size_t)sp->k, ids);
        put_str(&b, ",\"B\":");
        put_ids(&b, sp->b, (size_t)sp->k, ids);
        put_str(&b, ",\"bench\":");
        put_ids(&b, sp->bench, sp->nbench, ids);
        put_str(&b, ",\"gap\":");
        if (sp->gap % unit == 0)
            put_int(&b, (long long)(sp->gap / unit));
        else
            put_real(&b, (double)sp->gap / (double)unit);
        put_str(&b, ",\"p_a\":");
        if (isnan(sp->p_a))
            put_str(&b, "null");
        else
            put_real(&b, sp->p_a);
        put(&b, "}", 1);
    }
    put_str(&b, "]}");
    *len = b.len;
    if (b.len >= cap)
        return EO_ELIMIT;
    buf[b.len] = '\0';
    return 0;
}
