/* Decoders of the service's answers. The client trusts nothing it reads off the network: every
 * field is type-checked, ids are checked like ids, and a malformed answer is refused whole. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "client/client_internal.h"

static json_t *load(const char *text, size_t len)
{
    json_error_t jerr;
    return json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
}

/* A valid id string copied into @p out (capacity EO_ID_MAX + 1). */
static bool get_id(const json_t *v, char *out)
{
    if (!json_is_string(v))
        return false;
    size_t n = json_string_length(v);
    const char *s = json_string_value(v);
    if (eo_id_check(s, n) != 0)
        return false;
    memcpy(out, s, n);
    out[n] = '\0';
    return true;
}

static bool get_num(const json_t *o, const char *name, double *out)
{
    const json_t *v = json_object_get(o, name);
    if (!json_is_number(v))
        return false;
    double x = json_number_value(v);
    if (!isfinite(x))
        return false;
    *out = x;
    return true;
}

int eo__client_rating_from_json(const json_t *o, char *id_out, eo_client_rating *out)
{
    if (!json_is_object(o) || !get_id(json_object_get(o, "id"), id_out))
        return EO_EPARSE;
    eo_client_rating r = {0};
    double rating = 0;
    bool has_rating = get_num(o, "rating", &rating);
    if (!get_num(o, "mu", &r.mean)) {
        if (!has_rating)
            return EO_EPARSE;
        r.mean = rating;
    }
    if (!get_num(o, "display", &r.display)) {
        if (!has_rating)
            return EO_EPARSE;
        r.display = rating;
    }
    const json_t *rounds = json_object_get(o, "rounds");
    const json_t *visible = json_object_get(o, "visible");
    const json_t *stale = json_object_get(o, "stale");
    if (!json_is_integer(rounds) || json_integer_value(rounds) < 0 || !json_is_boolean(visible) ||
        (stale != NULL && !json_is_boolean(stale)))
        return EO_EPARSE;
    r.rounds = (int64_t)json_integer_value(rounds);
    r.visible = json_is_true(visible);
    r.stale = json_is_true(stale);
    *out = r;
    return 0;
}

int eo__client_parse_lookup(const char *text, size_t len, char *id_out, eo_client_rating *out)
{
    json_t *o = load(text, len);
    int rc = eo__client_rating_from_json(o, id_out, out);
    json_decref(o);
    return rc;
}

int eo__client_parse_round_answer(const char *text, size_t len,
                                  void (*each)(void *ctx, const char *id,
                                               const eo_client_rating *r),
                                  void *ctx)
{
    json_t *o = load(text, len);
    const json_t *players = json_is_object(o) ? json_object_get(o, "players") : NULL;
    int rc = json_is_array(players) ? 0 : EO_EPARSE;
    for (size_t i = 0; rc == 0 && i < json_array_size(players); i++) {
        char id[EO_ID_MAX + 1];
        eo_client_rating r;
        rc = eo__client_rating_from_json(json_array_get(players, i), id, &r);
        if (rc == 0)
            each(ctx, id, &r);
    }
    json_decref(o);
    return rc;
}

void eo__splits_free(eo__splits *s)
{
    if (s == NULL)
        return;
    for (size_t i = 0; i < s->count; i++) {
        for (int j = 0; s->s[i].ids != NULL && j < 2 * s->s[i].k; j++)
            free(s->s[i].ids[j]);
        free(s->s[i].ids);
    }
    free(s->s);
    s->s = NULL;
    s->count = 0;
}

/* Copies team @p arr (k valid ids) into ids[off .. off + k). */
static int copy_team(const json_t *arr, size_t k, char **ids, size_t off)
{
    if (!json_is_array(arr) || json_array_size(arr) != k)
        return EO_EPARSE;
    for (size_t j = 0; j < k; j++) {
        char id[EO_ID_MAX + 1];
        if (!get_id(json_array_get(arr, j), id))
            return EO_EPARSE;
        for (size_t m = 0; m < off + j; m++)
            if (strcmp(ids[m], id) == 0)
                return EO_EPARSE;
        if ((ids[off + j] = strdup(id)) == NULL)
            return EO_ENOMEM;
    }
    return 0;
}

int eo__client_parse_splits(const char *text, size_t len, eo__splits *out)
{
    memset(out, 0, sizeof *out);
    json_t *o = load(text, len);
    const json_t *arr = json_is_object(o) ? json_object_get(o, "splits") : NULL;
    int rc = json_is_array(arr) ? 0 : EO_EPARSE;
    size_t n = rc == 0 ? json_array_size(arr) : 0;
    if (n > 0 && (out->s = calloc(n, sizeof *out->s)) == NULL)
        rc = EO_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const json_t *e = json_array_get(arr, i);
        const json_t *k = json_is_object(e) ? json_object_get(e, "k") : NULL;
        if (!json_is_integer(k) || json_integer_value(k) < 2 ||
            json_integer_value(k) > EO_PLAYERS_MAX / 2) {
            rc = EO_EPARSE;
            break;
        }
        eo__split *s = &out->s[out->count++];
        s->k = (int)json_integer_value(k);
        if ((s->ids = calloc(2 * (size_t)s->k, sizeof *s->ids)) == NULL) {
            rc = EO_ENOMEM;
            break;
        }
        rc = copy_team(json_object_get(e, "A"), (size_t)s->k, s->ids, 0);
        if (rc == 0)
            rc = copy_team(json_object_get(e, "B"), (size_t)s->k, s->ids, (size_t)s->k);
    }
    json_decref(o);
    if (rc != 0)
        eo__splits_free(out);
    return rc;
}
