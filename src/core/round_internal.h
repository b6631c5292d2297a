/* Internal helpers of the round record shared with the codec (not part of the public API). */
#ifndef EO_ROUND_INTERNAL_H
#define EO_ROUND_INTERNAL_H

/*
 * Makes the NUL-terminated message s valid UTF-8 in place: an incomplete sequence at the end
 * (left by snprintf truncation) is cut, any other invalid byte becomes '?'. Error messages end
 * up in JSON bodies, and jansson refuses to build a string that is not valid UTF-8.
 */
void eo__utf8_fix(char *s);

#include "evenodds/eo_round.h"

/* Fills @p err (when not NULL) with @p field and the formatted message, made valid UTF-8, and
 * returns EO_EINVAL: the one way core and codec report a bad field. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int eo__fail(eo_round_error *err, const char *field, const char *fmt, ...);

#endif
