/* JSON text written straight into a bounded buffer (core/buf.h), without jansson trees: the
 * writers of the hot answers (answer_text.c, split_text.c) share these. Internal to the codec. */
#ifndef EO_JSON_TEXT_H
#define EO_JSON_TEXT_H

#include "core/buf.h"

/* A JSON string: '"' and '\\' escaped, control characters as jansson 2.14 escapes them. */
void eo__jt_str(eo__buf *b, const char *s);
/* An integer. */
void eo__jt_int(eo__buf *b, long long v);
/* A finite real as jansson 2.14 writes it at its default precision ("%.17g", ".0" when that
 * would read as an integer, the exponent without '+' or leading zeros). */
void eo__jt_real(eo__buf *b, double v);
/* A finite real with at most 9 decimals, trailing zeros dropped (72 prints as 72), by integer
 * arithmetic; "%.17g" from 1e9 on. A non-finite value fails the buffer (EO_EINVAL). */
void eo__jt_real9(eo__buf *b, double v);

#endif
