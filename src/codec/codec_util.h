/* Helpers shared by the JSON decoders of src/codec/ (internal). */
#ifndef EO_CODEC_UTIL_H
#define EO_CODEC_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#include "evenodds/eo_round.h"

/* Fills err (when not NULL) with field and a printf-formatted message; returns EO_EINVAL. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int eo__fail(eo_round_error *err, const char *field, const char *fmt, ...);

/*
 * Copies the string value of v into a malloc'd *out after checking it as an id
 * (eo_id_check(); an embedded NUL counts as a control character). Errors name @p field.
 * Returns 0, EO_EINVAL or EO_ENOMEM.
 */
int eo__dup_id(const json_t *v, const char *field, char **out, eo_round_error *err);

/* The id check of eo__dup_id() without the copy; *s and *len receive the value. */
int eo__check_id(const json_t *v, const char *field, const char **s, size_t *len,
                 eo_round_error *err);

#endif
