/* A bounded growable buffer (internal; curl's dynbuf is the model): bytes appended to a heap
 * block that doubles as it fills, never past a maximum stated when it is made. A failure is
 * sticky: after an allocation fails or the maximum would be passed, every later append does
 * nothing and the buffer reports the first error, so a writer appends a whole text and checks
 * once at the end. The bytes are kept NUL-terminated, so a text can be read as a C string.
 *
 * eo__grow() is the same growth for arrays of any element type. */
#ifndef EO_BUF_H
#define EO_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct eo__buf {
    char *p;    /* the bytes, NUL-terminated; NULL before the first append */
    size_t len; /* bytes held, without the NUL */
    size_t cap; /* bytes allocated */
    size_t max; /* the most bytes it may hold (without the NUL) */
    int err;    /* 0, or the first failure: EO_ENOMEM or EO_ELIMIT */
} eo__buf;

/* An empty buffer that may grow to @p max bytes. Allocates nothing. */
void eo__buf_init(eo__buf *b, size_t max);
/* eo__buf_add() when the bytes do not fit the allocation yet (or the buffer failed). */
int eo__buf_add_grow(eo__buf *b, const void *p, size_t n);
/* Appends @p n bytes (a NUL after them). 0, or the buffer's sticky error. Inline: answers are
 * written in pieces of a few bytes, and a call per piece was most of their cost. */
static inline int eo__buf_add(eo__buf *b, const void *p, size_t n)
{
    if (b->err != 0 || n >= b->cap - b->len)
        return eo__buf_add_grow(b, p, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return 0;
}
/* Appends a C string. */
static inline int eo__buf_str(eo__buf *b, const char *s)
{
    return eo__buf_add(b, s, strlen(s));
}
/* Appends printf-formatted text. */
int eo__buf_printf(eo__buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Makes room for @p n more bytes now (one allocation for a text whose size is known roughly in
 * advance). 0, or the buffer's sticky error. */
int eo__buf_reserve(eo__buf *b, size_t n);
/* Empties the buffer, keeping its memory and clearing its error. */
void eo__buf_reset(eo__buf *b);
/* Hands the text over (malloc'd, the caller frees it) and leaves the buffer empty; NULL when
 * it failed (its memory is freed then) or holds nothing. *len (may be NULL) gets the length. */
char *eo__buf_take(eo__buf *b, size_t *len);
/* Frees the bytes; the buffer is empty again. */
void eo__buf_free(eo__buf *b);

/* The array @p arr of *@p cap elements of @p size bytes, grown (realloc'd, doubling from 8, so
 * that appends cost amortised O(1)) to hold at least @p need: the array to use from now on,
 * with *@p cap updated; NULL when out of memory, @p arr and *@p cap then as they were. */
void *eo__grow(void *arr, size_t *cap, size_t need, size_t size);

#endif
