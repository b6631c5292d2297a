/* The truth file of a simulated world (`evenodds sim --truth-out`) read into the core's truth
 * (eo_truth, eo_sim.h; the oracle's P_true is the core's eo_truth_p()). The file is untrusted
 * input: every field is typed and bounded, and a field the format does not have is an error, so
 * a typo cannot silently drop a map's bias. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_sim.h"

static int nomem(eo_round_error *err)
{
    eo__fail(err, "", "out of memory");
    return EO_ENOMEM;
}

/* A required number of @p obj in [lo, hi]. */
static int need_num(const json_t *obj, const char *path, const char *name, double lo, double hi,
                    double *out, eo_round_error *err)
{
    if (json_object_get(obj, name) == NULL) {
        char f[64];
        eo__json_path(f, sizeof f, path, name);
        return eo__fail(err, f, "required field missing");
    }
    return eo__get_num(obj, path, name, lo, hi, out, err);
}

/* The array @p name of @p obj, required, with at most @p max elements. */
static int need_array(const json_t *obj, const char *name, size_t max, const json_t **out,
                      eo_round_error *err)
{
    const json_t *a = json_object_get(obj, name);
    if (a == NULL)
        return eo__fail(err, name, "required field missing");
    if (!json_is_array(a))
        return eo__fail(err, name, "expected an array");
    if (json_array_size(a) > max)
        return eo__fail(err, name, "too many entries: %zu (at most %zu)", json_array_size(a),
                        max);
    *out = a;
    return 0;
}

/* Entries of "maps" (@p players false) or "players": each an object with an id (unique) and
 * one required number (@p num in [-@p lim, @p lim]) added to @p t; @p known lists the allowed
 * fields. */
static int load_entries(const json_t *a, bool players, const char *num, double lim,
                        const char *const *known, eo_truth *t, eo_round_error *err)
{
    const char *name = players ? "players" : "maps";
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        char path[48], f[64];
        snprintf(path, sizeof path, "%s[%zu]", name, i);
        if (!json_is_object(e))
            return eo__fail(err, path, "expected an object");
        int rc = eo__only_known(e, path, known, err);
        if (rc != 0)
            return rc;
        eo__json_path(f, sizeof f, path, "id");
        const json_t *id = json_object_get(e, "id");
        const char *s = NULL;
        size_t len = 0;
        double v = 0.0;
        if (id == NULL)
            return eo__fail(err, f, "required field missing");
        if ((rc = eo__check_id(id, f, &s, &len, err)) != 0)
            return rc;
        if (players ? eo_truth_has_player(t, s, len) : eo_truth_has_map(t, s, len))
            return eo__fail(err, f, "repeats an earlier id ('%s')", s);
        if ((rc = need_num(e, path, num, -lim, lim, &v, err)) != 0)
            return rc;
        rc = players ? eo_truth_add_player(t, s, len, v) : eo_truth_add_map(t, s, len, v);
        if (rc != 0)
            return rc == EO_ENOMEM ? nomem(err) : eo__fail(err, f, "%s", eo_strerror(rc));
    }
    return 0;
}

/* The world's optional terms: "presence" (π, a number in [-100, 100], default 0) and
 * "partial_effect" ("time", the default, or "none"). */
static int load_terms(const json_t *obj, double *presence, bool *times_ignored,
                      eo_round_error *err)
{
    *presence = 0.0;
    *times_ignored = false;
    int rc = eo__get_num(obj, "", "presence", -100.0, 100.0, presence, err);
    const json_t *pe = json_object_get(obj, "partial_effect");
    if (rc == 0 && pe != NULL) {
        const char *v = json_is_string(pe) ? json_string_value(pe) : "";
        if (strcmp(v, "time") != 0 && strcmp(v, "none") != 0)
            return eo__fail(err, "partial_effect", "expected \"time\" or \"none\"");
        *times_ignored = strcmp(v, "none") == 0;
    }
    return rc;
}

/* The top level: its fields checked, the scale, and the two arrays. */
static int load_top(const json_t *obj, double *scale, const json_t **maps,
                    const json_t **players, eo_round_error *err)
{
    static const char *const top[] = {"seed",   "skill",   "skill_mean", "skill_sd",
                                      "scale",  "presence", "partial_effect", "maps",
                                      "players", NULL};
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    int rc = eo__only_known(obj, "", top, err);
    int64_t seed = 0;
    double x = 0.0;
    if (rc == 0)
        rc = eo__get_int(obj, "", "seed", 0, INT64_MAX, &seed, NULL, err);
    const json_t *dist = json_object_get(obj, "skill");
    if (rc == 0 && dist != NULL && !json_is_string(dist))
        rc = eo__fail(err, "skill", "expected a string");
    if (rc == 0)
        rc = eo__get_num(obj, "", "skill_mean", -EO_TRUTH_SKILL_MAX, EO_TRUTH_SKILL_MAX, &x, err);
    if (rc == 0)
        rc = eo__get_num(obj, "", "skill_sd", 0.0, EO_TRUTH_SKILL_MAX, &x, err);
    if (rc == 0)
        rc = need_num(obj, "", "scale", EO_TRUTH_SCALE_MIN, EO_TRUTH_SKILL_MAX, scale, err);
    if (rc == 0)
        rc = need_array(obj, "maps", EO_TRUTH_MAPS_MAX, maps, err);
    if (rc == 0)
        rc = need_array(obj, "players", EO_TRUTH_PLAYERS_MAX, players, err);
    return rc;
}

static int load(const json_t *obj, eo_truth **out, eo_round_error *err)
{
    static const char *const map_fields[] = {"id", "bias", NULL};
    static const char *const player_fields[] = {"id", "skill", "present", "rounds", NULL};
    double scale = 0.0;
    const json_t *maps = NULL, *players = NULL;
    int rc = load_top(obj, &scale, &maps, &players, err);
    if (rc != 0)
        return rc;
    double presence;
    bool times_ignored;
    rc = load_terms(obj, &presence, &times_ignored, err);
    if (rc != 0)
        return rc;
    rc = eo_truth_create(scale, json_array_size(players), json_array_size(maps), out);
    if (rc != 0)
        return rc == EO_ENOMEM ? nomem(err) : eo__fail(err, "scale", "%s", eo_strerror(rc));
    (void)eo_truth_set_terms(*out, presence, times_ignored); /* in range: load_terms() */
    rc = load_entries(maps, false, "bias", EO_TRUTH_BIAS_MAX, map_fields, *out, err);
    if (rc != 0)
        return rc;
    rc = load_entries(players, true, "skill", EO_TRUTH_SKILL_MAX, player_fields, *out, err);
    /* The players' optional fields, typed (the values are not needed). */
    for (size_t i = 0; rc == 0 && i < json_array_size(players); i++) {
        char path[48];
        bool b;
        int64_t n;
        snprintf(path, sizeof path, "players[%zu]", i);
        const json_t *e = json_array_get(players, i);
        rc = eo__get_bool(e, path, "present", &b, err);
        if (rc == 0)
            rc = eo__get_int(e, path, "rounds", 0, INT64_MAX, &n, NULL, err);
    }
    return rc;
}

int eo_truth_from_json(const json_t *obj, eo_truth **out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    *out = NULL;
    eo_truth *t = NULL;
    int rc = load(obj, &t, err);
    if (rc != 0) {
        eo_truth_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

int eo_truth_from_text(const char *text, size_t len, eo_truth **out, eo_round_error *err)
{
    if (out != NULL)
        *out = NULL;
    if (text == NULL || out == NULL)
        return eo__fail(err, "", "no input");
    json_t *obj = NULL;
    int rc = eo__json_from_text(text, len, &obj, err);
    if (rc != 0)
        return rc;
    rc = eo_truth_from_json(obj, out, err);
    json_decref(obj);
    return rc;
}
