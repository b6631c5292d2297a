/* Error formatting, id checks and typed readers shared by the decoders; small encoders shared
 * by the answers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"
#include "core/round_internal.h"
#include "evenodds/eo_codec.h"

int eo__check_id(const json_t *v, const char *field, const char **s, size_t *len,
                 eo_round_error *err)
{
    if (!json_is_string(v))
        return eo__fail(err, field, "expected a string");
    *s = json_string_value(v);
    *len = json_string_length(v);
    /* Same wording as eo_round_validate(), so a message does not depend on which layer saw it. */
    if (*len == 0)
        return eo__fail(err, field, "must not be empty");
    int rc = eo_id_check(*s, *len);
    if (rc == EO_ELIMIT)
        return eo__fail(err, field, "longer than %d bytes", EO_ID_MAX);
    if (rc != 0)
        return eo__fail(err, field, "contains a control character or invalid UTF-8");
    return 0;
}

int eo__dup_id(const json_t *v, const char *field, char **out, eo_round_error *err)
{
    const char *s = NULL; /* set on success; initialised for gcc -O3's flow analysis */
    size_t len = 0;
    int rc = eo__check_id(v, field, &s, &len, err);
    if (rc != 0)
        return rc;
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    memcpy(copy, s, len + 1);
    *out = copy;
    return 0;
}

int eo__json_from_text(const char *text, size_t len, json_t **out, eo_round_error *err)
{
    *out = NULL;
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL) {
        eo__fail(err, "", "invalid JSON at offset %zu: NUL byte", (size_t)(nul - text));
        return EO_EPARSE;
    }
    json_error_t jerr;
    *out = json_loadb(text, len, EO_JSON_DECODE_FLAGS, &jerr);
    if (*out == NULL) {
        eo__fail(err, "", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                 jerr.text);
        return EO_EPARSE;
    }
    return 0;
}

int eo__only_known(const json_t *obj, const char *path, const char *const *known,
                   eo_round_error *err)
{
    const char *key;
    const json_t *v;
    json_object_foreach ((json_t *)obj, key, v) {
        (void)v;
        bool ok = false;
        for (size_t k = 0; known[k] != NULL && !ok; k++)
            ok = strcmp(key, known[k]) == 0;
        if (!ok) {
            char f[64];
            eo__json_path(f, sizeof f, path, key);
            return eo__fail(err, f, "unknown field");
        }
    }
    return 0;
}

void eo__json_path(char *buf, size_t cap, const char *path, const char *name)
{
    snprintf(buf, cap, "%s%s%s", path, path[0] ? "." : "", name);
}

int eo__get_bool(const json_t *obj, const char *path, const char *name, bool *out,
                 eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    if (!json_is_boolean(v)) {
        char f[64];
        eo__json_path(f, sizeof f, path, name);
        return eo__fail(err, f, "expected true or false");
    }
    *out = json_is_true(v);
    return 0;
}

int eo__get_int(const json_t *obj, const char *path, const char *name, int64_t lo, int64_t hi,
                int64_t *out, bool *is_null, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (is_null != NULL)
        *is_null = false;
    if (v == NULL)
        return 0;
    char f[64];
    eo__json_path(f, sizeof f, path, name);
    if (json_is_null(v) && is_null != NULL) {
        *is_null = true;
        return 0;
    }
    if (!json_is_integer(v))
        return eo__fail(err, f, is_null != NULL ? "expected an integer or null"
                                                : "expected an integer");
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return eo__fail(err, f, "out of range: expected an integer in [%lld, %lld]",
                        (long long)lo, (long long)hi);
    *out = (int64_t)x;
    return 0;
}

int eo__get_num(const json_t *obj, const char *path, const char *name, double lo, double hi,
                double *out, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    char f[64];
    eo__json_path(f, sizeof f, path, name);
    if (!json_is_number(v))
        return eo__fail(err, f, "expected a number");
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return eo__fail(err, f, "out of range: expected a number in [%g, %g]", lo, hi);
    *out = x;
    return 0;
}

json_t *eo__json_id_array(const uint16_t *idx, size_t n, const char *const *ids)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++) {
        if (json_array_append_new(a, json_string(ids[idx[i]])) != 0) {
            json_decref(a);
            a = NULL;
        }
    }
    return a;
}

json_t *eo__json_scaled(int64_t v, int64_t unit)
{
    return unit == 1 || v % unit == 0 ? json_integer(v / unit)
                                      : json_real((double)v / (double)unit);
}

json_t *eo__json_splits_root(json_t **arr)
{
    json_t *a = json_array();
    json_t *root = json_object();
    if (a == NULL || root == NULL || json_object_set(root, "splits", a) != 0) {
        json_decref(a);
        json_decref(root);
        return NULL;
    }
    json_decref(a); /* root holds it now */
    *arr = a;
    return root;
}

json_t *eo__json_number(double x, bool integer)
{
    return integer && x == floor(x) && fabs(x) < 9e15 ? json_integer((json_int_t)x) : json_real(x);
}

int eo__request_fail(eo_request_error *err, int rc, const char *code, const char *field,
                     const char *fmt, ...)
{
    if (err != NULL) {
        err->status = rc == EO_ELIMIT ? 413 : rc == EO_ENOMEM ? 500 : 400;
        snprintf(err->code, sizeof err->code, "%s", code);
        snprintf(err->field, sizeof err->field, "%s", field);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        eo__utf8_fix(err->message);
    }
    return rc;
}

int eo__only_keys(const json_t *obj, const char *path, const char *const *keys, size_t n,
                  eo_request_error *err)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v)
    {
        size_t i = 0;
        while (i < n && strcmp(key, keys[i]) != 0)
            i++;
        if (i < n)
            continue;
        /* The key may be long or odd; the field shows a bounded, printable prefix. */
        char name[48], field[64];
        size_t j = 0;
        for (; j < 40 && key[j] != '\0'; j++)
            name[j] = (key[j] >= 0x20 && key[j] < 0x7F) ? key[j] : '?';
        name[j] = '\0';
        eo__json_path(field, sizeof field, path, name);
        return eo__request_fail(err, EO_EINVAL, "invalid_request", field, "unknown field");
    }
    return 0;
}
