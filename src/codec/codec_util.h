/* Helpers shared by the JSON decoders of src/codec/ (internal). */
#ifndef EO_CODEC_UTIL_H
#define EO_CODEC_UTIL_H

#include <stdarg.h>
#include <stddef.h>

#include <jansson.h>

#include "evenodds/eo_round.h"

#include "core/round_internal.h" /* eo__fail */

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
