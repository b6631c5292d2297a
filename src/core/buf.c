/* The bounded growable buffer (buf.h). */
#include "core/buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_common.h"

void eo__buf_init(eo__buf *b, size_t max)
{
    memset(b, 0, sizeof *b);
    b->max = max;
}

/* Room for @p n more bytes and the NUL, within the maximum. */
static int room(eo__buf *b, size_t n)
{
    if (b->err != 0)
        return b->err;
    if (n > b->max - b->len) {
        b->err = EO_ELIMIT;
        return b->err;
    }
    size_t need = b->len + n + 1;
    if (need <= b->cap)
        return 0;
    size_t ncap = b->cap ? b->cap : 64;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (ncap > b->max + 1)
        ncap = b->max + 1;
    char *np = realloc(b->p, ncap);
    if (np == NULL) {
        b->err = EO_ENOMEM;
        return b->err;
    }
    b->p = np;
    b->cap = ncap;
    return 0;
}

int eo__buf_add_grow(eo__buf *b, const void *p, size_t n)
{
    int rc = room(b, n);
    if (rc != 0)
        return rc;
    if (n > 0)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}

int eo__buf_reserve(eo__buf *b, size_t n)
{
    return room(b, n);
}

int eo__buf_printf(eo__buf *b, const char *fmt, ...)
{
    if (b->err != 0)
        return b->err;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->err = EO_EINVAL;
        return b->err;
    }
    int rc = room(b, (size_t)n);
    if (rc != 0)
        return rc;
    va_start(ap, fmt);
    vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void eo__buf_reset(eo__buf *b)
{
    b->len = 0;
    b->err = 0;
    if (b->p != NULL)
        b->p[0] = '\0';
}

char *eo__buf_take(eo__buf *b, size_t *len)
{
    char *p = b->err == 0 ? b->p : NULL;
    if (p == NULL)
        free(b->p);
    if (len != NULL)
        *len = p != NULL ? b->len : 0;
    size_t max = b->max;
    eo__buf_init(b, max);
    return p;
}

void eo__buf_free(eo__buf *b)
{
    free(b->p);
    eo__buf_init(b, b->max);
}

void *eo__grow(void *arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap && arr != NULL)
        return arr;
    size_t ncap = *cap ? *cap : 8;
    while (ncap < need)
        ncap = ncap > SIZE_MAX / 2 ? need : ncap * 2;
    if (size != 0 && ncap > SIZE_MAX / size)
        return NULL;
    void *np = realloc(arr, ncap * size);
    if (np != NULL)
        *cap = ncap;
    return np;
}
