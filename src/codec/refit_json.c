/* The logged refit record (eo_codec.h): {"players":[[id, mean(, sigma)], …],"upto":P}. It is
 * read back from the store at every fold and from JSONL files a user may have edited, so the
 * decoder trusts nothing: types, ranges, ids, duplicates and sizes are all checked. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

void eo_refit_free(eo_refit_record *r)
{
    if (r == NULL)
        return;
    free(r->v);
    memset(r, 0, sizeof *r);
}

static int cmp_id(const void *a, const void *b)
{
    const eo_refit_value *const *x = a, *const *y = b;
    return strcmp((*x)->id, (*y)->id);
}

/* The first id present twice, or NULL. Sorting pointers keeps it O(n log n) on hostile input. */
static const char *duplicate_id(const eo_refit_record *r, int *rc)
{
    *rc = 0;
    if (r->n < 2)
        return NULL;
    const eo_refit_value **p = malloc(r->n * sizeof *p);
    if (p == NULL) {
        *rc = EO_ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < r->n; i++)
        p[i] = &r->v[i];
    qsort(p, r->n, sizeof *p, cmp_id);
    const char *dup = NULL;
    for (size_t i = 1; i < r->n && dup == NULL; i++)
        if (strcmp(p[i - 1]->id, p[i]->id) == 0) /* name the later one, whatever qsort did */
            dup = (p[i] > p[i - 1] ? p[i] : p[i - 1])->id;
    free(p);
    return dup;
}

static int player_from_json(const json_t *e, size_t i, eo_refit_value *out, eo_round_error *err)
{
    char path[32], field[40];
    snprintf(path, sizeof path, "players[%zu]", i);
    size_t n = json_is_array(e) ? json_array_size(e) : 0;
    if (n != 2 && n != 3)
        return eo__fail(err, path, "expected [id, mean] or [id, mean, sigma]");
    const char *id = NULL;
    size_t len = 0;
    snprintf(field, sizeof field, "%s[0]", path);
    int rc = eo__check_id(json_array_get(e, 0), field, &id, &len, err);
    if (rc != 0)
        return rc;
    memcpy(out->id, id, len);
    out->id[len] = '\0';
    const json_t *mean = json_array_get(e, 1);
    if (!json_is_number(mean) || !isfinite(json_number_value(mean))) {
        snprintf(field, sizeof field, "%s[1]", path);
        return eo__fail(err, field, "expected a finite number");
    }
    out->mean = json_number_value(mean);
    out->sigma = -1.0;
    if (n == 3) {
        const json_t *sd = json_array_get(e, 2);
        double s = json_is_number(sd) ? json_number_value(sd) : NAN;
        if (!(s >= 0.0 && isfinite(s))) {
            snprintf(field, sizeof field, "%s[2]", path);
            return eo__fail(err, field, "expected a finite number >= 0");
        }
        out->sigma = s;
    }
    return 0;
}

int eo_refit_from_json(const json_t *obj, eo_refit_record *out, eo_round_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    if (out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj))
        return eo__fail(err, "", "a refit record is a JSON object");
    const char *key;
    json_t *val;
    json_object_foreach((json_t *)obj, key, val) {
        if (strcmp(key, "upto") != 0 && strcmp(key, "players") != 0)
            return eo__fail(err, key, "unknown field");
    }
    const json_t *upto = json_object_get(obj, "upto");
    if (!json_is_integer(upto) || json_integer_value(upto) < 0)
        return eo__fail(err, "upto", "expected an integer >= 0 (the log position fitted)");
    const json_t *players = json_object_get(obj, "players");
    if (!json_is_array(players))
        return eo__fail(err, "players", "expected an array");
    size_t n = json_array_size(players);
    if (n == 0 || n > EO_REFIT_PLAYERS_MAX)
        return eo__fail(err, "players", "expected 1 to %d players", EO_REFIT_PLAYERS_MAX);
    eo_refit_record r = {.upto = (int64_t)json_integer_value(upto), .n = n};
    r.v = calloc(n, sizeof *r.v);
    if (r.v == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int rc = player_from_json(json_array_get(players, i), i, &r.v[i], err);
        if (rc != 0) {
            eo_refit_free(&r);
            return rc;
        }
    }
    int rc = 0;
    const char *dup = duplicate_id(&r, &rc);
    if (rc == 0 && dup != NULL) {
        for (size_t i = 0; i < n; i++)
            if (r.v[i].id == dup) {
                char field[64];
                snprintf(field, sizeof field, "players[%zu][0]", i);
                rc = eo__fail(err, field, "player \"%.60s\" is listed twice", dup);
                break;
            }
    }
    if (rc != 0) {
        eo_refit_free(&r);
        return rc;
    }
    *out = r;
    return 0;
}

int eo_refit_from_text(const char *text, size_t len, eo_refit_record *out, eo_round_error *err)
{
    if (err != NULL)
        memset(err, 0, sizeof *err);
    if (out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    if (text == NULL || memchr(text, '\0', len) != NULL) {
        eo__fail(err, "", "invalid JSON: NUL byte");
        return EO_EPARSE;
    }
    json_error_t jerr;
    json_t *o = json_loadb(text, len, EO_JSON_DECODE_FLAGS, &jerr);
    if (o == NULL) {
        eo__fail(err, "", "invalid JSON at column %d: %s", jerr.column, jerr.text);
        return EO_EPARSE;
    }
    int rc = eo_refit_from_json(o, out, err);
    json_decref(o);
    return rc;
}

/* A value as the log keeps it: integral values as JSON integers (SynElo's ratings read as
 * integers), others as reals, which jansson prints with 17 significant digits: they read back
 * to the same double, so the fold applies exactly what the writer applied. */
static json_t *number(double v)
{
    if (v == floor(v) && fabs(v) < 9e15 && !(v == 0.0 && signbit(v))) /* -0 stays a real */
        return json_integer((json_int_t)v);
    return json_real(v);
}

int eo_refit_to_text(int64_t upto, const eo_refit_value *v, size_t n, char **out)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    if (upto < 0 || v == NULL || n == 0 || n > EO_REFIT_PLAYERS_MAX)
        return EO_EINVAL;
    for (size_t i = 0; i < n; i++)
        if (eo_id_check(v[i].id, strlen(v[i].id)) != 0 || !isfinite(v[i].mean) ||
            isnan(v[i].sigma) || isinf(v[i].sigma))
            return EO_EINVAL;
    json_t *o = json_object();
    json_t *arr = json_array();
    int bad = o == NULL || arr == NULL ||
              json_object_set_new(o, "upto", json_integer((json_int_t)upto)) != 0 ||
              json_object_set(o, "players", arr) != 0;
    for (size_t i = 0; i < n && !bad; i++) {
        json_t *e = json_pack("[s,o]", v[i].id, number(v[i].mean));
        if (e == NULL ||
            (v[i].sigma >= 0.0 && json_array_append_new(e, number(v[i].sigma)) != 0)) {
            json_decref(e);
            bad = 1;
        } else {
            bad = json_array_append_new(arr, e) != 0;
        }
    }
    char *text = bad ? NULL : json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(arr);
    json_decref(o);
    if (text == NULL)
        return EO_ENOMEM;
    *out = text;
    return 0;
}
