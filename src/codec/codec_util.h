/* Helpers shared by the JSON decoders of src/codec/ (internal). */
#ifndef EO_CODEC_UTIL_H
#define EO_CODEC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

/* @p text (@p len bytes) parsed as one JSON value into *out (EO_JSON_DECODE_FLAGS: duplicate
 * keys refused): 0, or EO_EPARSE with the position in err->message ("invalid JSON at line L,
 * column C: …", or the offset of a NUL byte) and *out NULL. */
int eo__json_from_text(const char *text, size_t len, json_t **out, eo_round_error *err);

/* Rejects a member of @p obj (the object at @p path, "" for the top level) whose name is not
 * in the NULL-terminated @p known: EO_EINVAL with its path in @p err and "unknown field". */
int eo__only_known(const json_t *obj, const char *path, const char *const *known,
                   eo_round_error *err);

/* The field path of member @p name of the object at @p path ("" for the top level):
 * "name" or "path.name", truncated to @p cap. */
void eo__json_path(char *buf, size_t cap, const char *path, const char *name);

/*
 * Typed optional members of @p obj (the object at @p path): absent leaves *out unchanged and
 * returns 0; a wrong type or a value outside [lo, hi] returns EO_EINVAL with the field's path
 * in @p err. eo__get_int: an integer; null too when @p is_null is not NULL (then *is_null says
 * so). eo__get_num: any number. eo__get_bool: true or false.
 */
int eo__get_bool(const json_t *obj, const char *path, const char *name, bool *out,
                 eo_round_error *err);
int eo__get_int(const json_t *obj, const char *path, const char *name, int64_t lo, int64_t hi,
                int64_t *out, bool *is_null, eo_round_error *err);
int eo__get_num(const json_t *obj, const char *path, const char *name, double lo, double hi,
                double *out, eo_round_error *err);

struct eo_request_error;
/* Fills a request error (eo_codec.h) when @p err is not NULL: the status from @p rc (413 for
 * EO_ELIMIT, 500 for EO_ENOMEM, else 400), @p code, @p field and the message; returns @p rc. */
int eo__request_fail(struct eo_request_error *err, int rc, const char *code, const char *field,
                     const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Refuses a key of @p obj (the object at @p path, "" for the top) other than @p keys[0..n):
 * a typo in a request must not pass silently. 0 or EO_EINVAL ("invalid_request", the field a
 * bounded, printable prefix of the key). */
int eo__only_keys(const json_t *obj, const char *path, const char *const *keys, size_t n,
                  struct eo_request_error *err);

/* The JSON array of the strings ids[idx[0]], …, ids[idx[n-1]]; NULL when out of memory. */
json_t *eo__json_id_array(const uint16_t *idx, size_t n, const char *const *ids);

/* A new object {"splits":[]} (NULL when out of memory); *arr is its array, which the object
 * holds: append the splits to it. */
json_t *eo__json_splits_root(json_t **arr);

/* @p v split units on the model's scale (eo_model_split_unit() @p unit >= 1): an integer when
 * @p unit divides it, else a real. NULL when out of memory. */
json_t *eo__json_scaled(int64_t v, int64_t unit);

/* @p x as a JSON integer when @p integer and it is one (below 9e15), else a real. NULL when
 * out of memory. */
json_t *eo__json_number(double x, bool integer);

#endif
