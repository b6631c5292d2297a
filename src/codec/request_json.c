/* Decoders of the service's request bodies other than rounds and splits (eo_codec.h). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "codec/codec_util.h"
#include "core/round_internal.h"
#include "evenodds/eo_codec.h"

/* What one pass over a body's text found (scan()). */
typedef enum { SCAN_OK, SCAN_NUL, SCAN_DEEP, SCAN_CONTAINERS, SCAN_VALUES } scan_result;

/* One pass over the text before jansson sees it: a NUL byte, the bracket that opens level
 * max_depth + 1, or more containers (objects and arrays) or values than a tree may cost
 * (EO_REQUEST_CONTAINERS_MAX, EO_REQUEST_VALUES_MAX: a body of `[{},{},…]` would make a
 * tree fifty times its size), all counted outside strings (a bracket in a string is text).
 * *at gets the offset where it stopped. Values are bounded by containers plus commas. On valid
 * JSON the counts are exact; on invalid JSON they may be off, but jansson refuses that text
 * anyway, so the answer is invalid_json either way. */
static scan_result scan(const char *body, size_t len, int max_depth, size_t *at)
{
    bool in_string = false;
    long depth = 0;
    size_t containers = 0, values = 0;
    for (size_t i = 0; i < len; i++) {
        char c = body[i];
        *at = i;
        if (c == '\0')
            return SCAN_NUL;
        if (in_string) {
            if (c == '\\' && i + 1 < len && body[i + 1] != '\0')
                i++; /* the escaped byte is text (an escaped NUL is still found above) */
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > max_depth)
                return SCAN_DEEP;
            if (++containers > EO_REQUEST_CONTAINERS_MAX)
                return SCAN_CONTAINERS;
            if (++values > EO_REQUEST_VALUES_MAX)
                return SCAN_VALUES;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == ',' && ++values > EO_REQUEST_VALUES_MAX) {
            return SCAN_VALUES;
        }
    }
    *at = len;
    return SCAN_OK;
}

int eo_request_parse(const char *body, size_t len, size_t max_len, int max_depth, json_t **out,
                     eo_request_error *err)
{
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    *out = NULL;
    if (len > max_len)
        return eo__request_fail(err, EO_ELIMIT, "body_too_large", "", "body larger than %zu bytes",
                                max_len);
    if (body == NULL || len == 0)
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "", "empty body");
    size_t at = 0;
    switch (scan(body, len, max_depth, &at)) {
    case SCAN_OK: break;
    case SCAN_NUL:
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "", "NUL byte at offset %zu", at);
    case SCAN_DEEP:
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "",
                                "nested deeper than %d levels (at offset %zu)", max_depth, at);
    case SCAN_CONTAINERS:
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "",
                                "more than %d objects and arrays (at offset %zu)",
                                EO_REQUEST_CONTAINERS_MAX, at);
    case SCAN_VALUES:
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "",
                                "more than %d values (at offset %zu)", EO_REQUEST_VALUES_MAX, at);
    }
    json_error_t jerr;
    /* Any JSON value parses, so that a valid non-object is told so (invalid_request). */
    json_t *v = json_loadb(body, len, EO_JSON_DECODE_FLAGS | JSON_DECODE_ANY, &jerr);
    if (v == NULL)
        return eo__request_fail(err, EO_EPARSE, "invalid_json", "",
                                "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                                jerr.text);
    if (!json_is_object(v)) {
        json_decref(v);
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    }
    *out = v;
    return 0;
}

static int copy_id(const json_t *obj, const char *key, char *dst, eo_request_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", key, "required field missing");
    eo_round_error e;
    const char *s;
    size_t len;
    if (eo__check_id(v, key, &s, &len, &e) != 0)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", key, "%s", e.message);
    memcpy(dst, s, len + 1);
    return 0;
}

/* "model": absent means SynElo (docs/openapi.yaml PoolCreate), else a known model's name. */
static int pool_model(const json_t *obj, char *out, size_t cap, eo_request_error *err)
{
    const json_t *v = json_object_get(obj, "model");
    eo_model m;
    if (v == NULL) {
        snprintf(out, cap, "synelo");
        return 0;
    }
    if (!json_is_string(v) || eo_model_parse(json_string_value(v), &m) != 0) {
        char known[EO_MODEL_NAMES_MAX];
        eo_model_names(known, sizeof known);
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "model",
                                "unknown model (known: %s)", known);
    }
    snprintf(out, cap, "%s", json_string_value(v));
    return 0;
}

int eo_pool_request_from_json(const json_t *obj, eo_pool_request *out, eo_request_error *err)
{
    static const char *const keys[] = {"name", "model", "params"};
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    int rc = eo__only_keys(obj, "", keys, sizeof keys / sizeof keys[0], err);
    if (rc == 0)
        rc = copy_id(obj, "name", out->name, err);
    const char *rule = NULL;
    if (rc == 0 && eo_pool_name_check(out->name, strlen(out->name), &rule) != 0)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "name", "%s", rule);
    if (rc == 0)
        rc = pool_model(obj, out->model, sizeof out->model, err);
    if (rc == 0) {
        json_t *params = json_object_get(obj, "params");
        if (params != NULL && !json_is_object(params))
            rc =
                eo__request_fail(err, EO_EINVAL, "invalid_request", "params", "expected an object");
        else
            out->params = params;
    }
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

/* A finite number of magnitude at most 1e9 from @p v (field @p name), into *out. */
static int number_field(const json_t *v, const char *name, double *out, eo_request_error *err)
{
    if (!json_is_number(v))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", name, "expected a number");
    double x = json_number_value(v);
    if (!(x >= -1e9 && x <= 1e9))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", name,
                                "out of range: expected a number in [-1e9, 1e9]");
    *out = x;
    return 0;
}

int eo_rating_request_from_json(const json_t *obj, double *rating, double *sigma,
                                eo_request_error *err)
{
    static const char *const keys[] = {"rating", "sigma"};
    if (rating == NULL || sigma == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    int rc = eo__only_keys(obj, "", keys, 2, err);
    if (rc != 0)
        return rc;
    const json_t *v = json_object_get(obj, "rating");
    if (v == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "rating",
                                "required field missing");
    double r = 0.0, sd = -1.0;
    rc = number_field(v, "rating", &r, err);
    const json_t *sv = json_object_get(obj, "sigma");
    if (rc == 0 && sv != NULL) {
        rc = number_field(sv, "sigma", &sd, err);
        if (rc == 0 && sd < 0)
            rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "sigma", "must be >= 0");
    }
    if (rc != 0)
        return rc;
    *rating = r;
    *sigma = sd;
    return 0;
}

int eo_season_request_from_json(const json_t *obj, eo_season_request *out, eo_request_error *err)
{
    static const char *const keys[] = {"name", "f", "s"};
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    int rc = eo__only_keys(obj, "", keys, 3, err);
    if (rc != 0)
        return rc;
    const json_t *name = json_object_get(obj, "name");
    if (name == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "name",
                                "required field missing");
    size_t len = json_is_string(name) ? json_string_length(name) : 0;
    const char *text = json_is_string(name) ? json_string_value(name) : "";
    if (len == 0 || len > EO_ID_MAX || strlen(text) != len || eo_id_check(text, len) != 0)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "name",
                                "expected 1 to %d bytes of UTF-8 without control characters",
                                EO_ID_MAX);
    double f = 0.5, sd = -1.0;
    const json_t *fv = json_object_get(obj, "f");
    const json_t *sv = json_object_get(obj, "s");
    if (fv != NULL && ((rc = number_field(fv, "f", &f, err)) != 0 || !(f >= 0.0 && f <= 1.0)))
        return rc ? rc
                  : eo__request_fail(err, EO_EINVAL, "invalid_request", "f", "must be in [0, 1]");
    if (sv != NULL && ((rc = number_field(sv, "s", &sd, err)) != 0 || sd < 0.0))
        return rc ? rc : eo__request_fail(err, EO_EINVAL, "invalid_request", "s", "must be >= 0");
    memcpy(out->name, text, len + 1);
    out->f = f;
    out->s = sd;
    return 0;
}
