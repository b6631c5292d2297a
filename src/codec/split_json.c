/* Split requests and answers (eo_codec.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

void eo_split_request_free(eo_split_request *req)
{
    if (req == NULL)
        return;
    for (size_t i = 0; req->ids != NULL && i < req->n; i++)
        free(req->ids[i]);
    free(req->ids);
    free(req->rating);
    free(req->has_rating);
    memset(req, 0, sizeof *req);
}

static int player_from_json(const json_t *v, size_t i, eo_split_request *out,
                            eo_round_error *err)
{
    char path[48];
    char field[64];
    snprintf(path, sizeof path, "players[%zu]", i);
    snprintf(field, sizeof field, "%s.id", path);
    if (json_is_string(v))
        return eo__dup_id(v, field, &out->ids[i], err);
    if (!json_is_object(v))
        return eo__fail(err, path, "expected a player id or an object");
    const json_t *id = json_object_get(v, "id");
    if (id == NULL)
        return eo__fail(err, field, "required field missing");
    int rc = eo__dup_id(id, field, &out->ids[i], err);
    if (rc != 0)
        return rc;
    const json_t *rating = json_object_get(v, "rating");
    if (rating == NULL)
        return 0;
    snprintf(field, sizeof field, "%s.rating", path);
    if (!json_is_integer(rating))
        return eo__fail(err, field, "expected an integer");
    json_int_t r = json_integer_value(rating);
    if (r < -EO_SPLIT_RATING_MAX || r > EO_SPLIT_RATING_MAX)
        return eo__fail(err, field, "out of range: expected an integer in [%d, %d]",
                        -EO_SPLIT_RATING_MAX, EO_SPLIT_RATING_MAX);
    out->rating[i] = (int64_t)r;
    out->has_rating[i] = true;
    return 0;
}

static int decode(const json_t *obj, eo_split_request *out, eo_round_error *err)
{
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    const json_t *bench = json_object_get(obj, "bench");
    if (bench != NULL) {
        const char *b = json_string_value(bench);
        if (b != NULL && strcmp(b, "solver") == 0 && json_string_length(bench) == 6)
            out->bench = EO_BENCH_SOLVER;
        else if (b != NULL && strcmp(b, "queue") == 0 && json_string_length(bench) == 5)
            out->bench = EO_BENCH_QUEUE;
        else
            return eo__fail(err, "bench", "expected \"solver\" or \"queue\"");
    }
    const json_t *players = json_object_get(obj, "players");
    if (players == NULL)
        return eo__fail(err, "players", "required field missing");
    if (!json_is_array(players))
        return eo__fail(err, "players", "expected an array of players");
    size_t n = json_array_size(players);
    if (n < 2)
        return eo__fail(err, "players", "expected at least 2 players, got %zu", n);
    if (n > EO_SPLIT_EXACT_MAX)
        return eo__fail(err, "players", "too many players: %zu (at most %d)", n,
                        EO_SPLIT_EXACT_MAX);
    out->ids = calloc(n, sizeof *out->ids);
    out->rating = calloc(n, sizeof *out->rating);
    out->has_rating = calloc(n, sizeof *out->has_rating);
    out->n = n;
    if (out->ids == NULL || out->rating == NULL || out->has_rating == NULL) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = player_from_json(json_array_get(players, i), i, out, err);
        if (rc != 0)
            return rc;
        /* n <= 64: a quadratic scan is cheaper than anything cleverer. */
        for (size_t j = 0; j < i; j++) {
            if (strcmp(out->ids[j], out->ids[i]) == 0) {
                char field[64];
                snprintf(field, sizeof field, "players[%zu].id", i);
                return eo__fail(err, field, "player \"%s\" is already at players[%zu]",
                                out->ids[i], j);
            }
        }
    }
    return 0;
}

int eo_split_request_from_json(const json_t *obj, eo_split_request *out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    int rc = decode(obj, out, err);
    if (rc != 0)
        eo_split_request_free(out);
    return rc;
}

static json_t *id_array(const uint16_t *idx, size_t n, const char *const *ids)
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

static json_t *split_to_json(const eo_split *s, const char *const *ids, int64_t unit)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_t *p = isnan(s->p_a) ? json_null() : json_real(s->p_a);
    json_t *a = id_array(s->a, (size_t)s->k, ids);
    json_t *b = id_array(s->b, (size_t)s->k, ids);
    json_t *bench = id_array(s->bench, s->nbench, ids);
    /* set_new steals each value even when it fails, so every value is handed over once. */
    int bad = json_object_set_new(o, "k", json_integer(s->k));
    bad |= json_object_set_new(o, "A", a);
    bad |= json_object_set_new(o, "B", b);
    bad |= json_object_set_new(o, "bench", bench);
    bad |= json_object_set_new(o, "gap", unit == 1 || s->gap % unit == 0
                                             ? json_integer(s->gap / unit)
                                             : json_real((double)s->gap / (double)unit));
    bad |= json_object_set_new(o, "p_a", p);
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_splits_to_json(const eo_splits *s, const char *const *ids, int64_t unit)
{
    if (s == NULL || ids == NULL || unit < 1 || (s->count > 0 && s->split == NULL))
        return NULL;
    json_t *arr = json_array();
    json_t *root = json_object();
    if (arr == NULL || root == NULL || json_object_set(root, "splits", arr) != 0) {
        json_decref(arr);
        json_decref(root);
        return NULL;
    }
    json_decref(arr); /* root holds it now */
    for (size_t i = 0; i < s->count; i++) {
        if (json_array_append_new(arr, split_to_json(&s->split[i], ids, unit)) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
