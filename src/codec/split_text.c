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

#include "codec/json_text.h"
#include "evenodds/eo_codec.h"

/* The longest split answer: EO_SPLIT_EXACT_MAX team sizes, each listing every id (at most
 * EO_ID_MAX bytes, escaped to twice that) once, with room to spare. */
#define SPLITS_TEXT_MAX ((size_t)EO_SPLIT_EXACT_MAX * EO_SPLIT_EXACT_MAX * (2 * EO_ID_MAX + 8) + 4096)

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

static void put_ids(eo__buf *b, const uint16_t *idx, size_t n, const char *const *ids)
{
    (void)eo__buf_add(b, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            (void)eo__buf_add(b, ",", 1);
        eo__jt_str(b, ids[idx[i]]);
    }
    (void)eo__buf_add(b, "]", 1);
}

/* The answer's text into @p b: 0, or EO_EINVAL (an infinite p_a: jansson has no real for it
 * either) or the buffer's error. */
static int put_splits(eo__buf *b, const eo_splits *s, const char *const *ids, int64_t unit)
{
    (void)eo__buf_str(b, "{\"splits\":[");
    for (size_t i = 0; i < s->count; i++) {
        const eo_split *sp = &s->split[i];
        if (isinf(sp->p_a))
            return EO_EINVAL;
        (void)eo__buf_str(b, i > 0 ? ",{\"k\":" : "{\"k\":");
        eo__jt_int(b, sp->k);
        (void)eo__buf_str(b, ",\"A\":");
        put_ids(b, sp->a, (size_t)sp->k, ids);
        (void)eo__buf_str(b, ",\"B\":");
        put_ids(b, sp->b, (size_t)sp->k, ids);
        (void)eo__buf_str(b, ",\"bench\":");
        put_ids(b, sp->bench, sp->nbench, ids);
        (void)eo__buf_str(b, ",\"gap\":");
        if (sp->gap % unit == 0)
            eo__jt_int(b, (long long)(sp->gap / unit));
        else
            eo__jt_real(b, (double)sp->gap / (double)unit);
        (void)eo__buf_str(b, ",\"p_a\":");
        if (isnan(sp->p_a))
            (void)eo__buf_str(b, "null");
        else
            eo__jt_real(b, sp->p_a);
        (void)eo__buf_add(b, "}", 1);
    }
    return eo__buf_str(b, "]}");
}

static bool encode_args_ok(const eo_splits *s, const char *const *ids, int64_t unit)
{
    return s != NULL && ids != NULL && unit >= 1 && (s->count == 0 || s->split != NULL);
}

int eo_splits_text(const eo_splits *s, const char *const *ids, int64_t unit, char **out,
                   size_t *len)
{
    if (out == NULL || len == NULL || !encode_args_ok(s, ids, unit))
        return EO_EINVAL;
    eo__buf b;
    eo__buf_init(&b, SPLITS_TEXT_MAX);
    /* One allocation for nearly every answer: the ids with their quotes and commas, and under
     * 128 bytes for the rest of a split (an id with escapes may still grow it). */
    size_t guess = 16;
    for (size_t i = 0; i < s->count; i++) {
        const eo_split *sp = &s->split[i];
        guess += 128;
        for (int j = 0; j < sp->k; j++)
            guess += strlen(ids[sp->a[j]]) + strlen(ids[sp->b[j]]) + 6;
        for (size_t j = 0; j < sp->nbench; j++)
            guess += strlen(ids[sp->bench[j]]) + 3;
    }
    (void)eo__buf_reserve(&b, guess < SPLITS_TEXT_MAX ? guess : SPLITS_TEXT_MAX);
    int rc = put_splits(&b, s, ids, unit);
    if (rc != 0) {
        eo__buf_free(&b);
        *out = NULL;
        return rc == EO_EINVAL ? EO_EINVAL : EO_ENOMEM;
    }
    *out = eo__buf_take(&b, len);
    return 0;
}

int eo_splits_encode(const eo_splits *s, const char *const *ids, int64_t unit, char *buf,
                     size_t cap, size_t *len)
{
    if (len == NULL || (buf == NULL && cap > 0) || !encode_args_ok(s, ids, unit))
        return EO_EINVAL;
    char *text = NULL;
    int rc = eo_splits_text(s, ids, unit, &text, len);
    if (rc != 0)
        return rc;
    if (*len >= cap) { /* the size is in *len: a buffer of *len + 1 bytes holds it */
        if (cap > 0) {
            memcpy(buf, text, cap - 1);
            buf[cap - 1] = '\0';
        }
        free(text);
        return EO_ELIMIT;
    }
    memcpy(buf, text, *len + 1);
    free(text);
    return 0;
}
