/* The truth file of a simulated world (`evenodds sim --truth-out`) and the oracle's P_true of a
 * round from it (eo_codec.h). The file is untrusted input: every field is typed and bounded, and
 * a field the format does not have is an error, so a typo cannot silently drop a map's bias. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "core/strmap.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_sim.h"

struct eo_truth {
    double scale;
    eo__strmap *players, *maps; /* id -> index into skill / bias */
    double *skill, *bias;
};

void eo_truth_destroy(eo_truth *t)
{
    if (t == NULL)
        return;
    eo__strmap_destroy(t->players);
    eo__strmap_destroy(t->maps);
    free(t->skill);
    free(t->bias);
    free(t);
}

size_t eo_truth_player_count(const eo_truth *t)
{
    return eo__strmap_size(t->players);
}

size_t eo_truth_map_count(const eo_truth *t)
{
    return eo__strmap_size(t->maps);
}

static int nomem(eo_round_error *err)
{
    eo__fail(err, "", "out of memory");
    return EO_ENOMEM;
}

/* Rejects a member of @p obj (at @p path) whose name is not in the NULL-terminated @p known. */
static int only_known(const json_t *obj, const char *path, const char *const *known,
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

/* Entries of "maps" or "players": each an object with an id (unique) and one required number
 * (@p num in [-@p lim, @p lim]) stored at vals[index]; @p known lists the allowed fields. */
static int load_entries(const json_t *a, const char *name, const char *num, double lim,
                        const char *const *known, eo__strmap *ids, double *vals,
                        eo_round_error *err)
{
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *e = json_array_get(a, i);
        char path[48], f[64];
        snprintf(path, sizeof path, "%s[%zu]", name, i);
        if (!json_is_object(e))
            return eo__fail(err, path, "expected an object");
        int rc = only_known(e, path, known, err);
        if (rc != 0)
            return rc;
        eo__json_path(f, sizeof f, path, "id");
        const json_t *id = json_object_get(e, "id");
        const char *s = NULL;
        size_t len = 0;
        if (id == NULL)
            return eo__fail(err, f, "required field missing");
        if ((rc = eo__check_id(id, f, &s, &len, err)) != 0)
            return rc;
        uint64_t h = eo__strmap_hash(s, len);
        if (eo__strmap_find(ids, s, len, h) >= 0)
            return eo__fail(err, f, "repeats an earlier id ('%s')", s);
        if ((rc = need_num(e, path, num, -lim, lim, &vals[i], err)) != 0)
            return rc;
        if (eo__strmap_insert(ids, s, len, h) < 0)
            return nomem(err);
    }
    return 0;
}

static int load(const json_t *obj, eo_truth *t, eo_round_error *err)
{
    static const char *const top[] = {"seed", "skill", "skill_mean", "skill_sd", "scale",
                                      "maps", "players", NULL};
    static const char *const map_fields[] = {"id", "bias", NULL};
    static const char *const player_fields[] = {"id", "skill", "present", "rounds", NULL};
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    int rc = only_known(obj, "", top, err);
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
        rc = need_num(obj, "", "scale", EO_TRUTH_SCALE_MIN, EO_TRUTH_SKILL_MAX, &t->scale, err);
    const json_t *maps = NULL, *players = NULL;
    if (rc == 0)
        rc = need_array(obj, "maps", EO_TRUTH_MAPS_MAX, &maps, err);
    if (rc == 0)
        rc = need_array(obj, "players", EO_TRUTH_PLAYERS_MAX, &players, err);
    if (rc != 0)
        return rc;
    /* One extra slot: calloc(0) may return NULL. */
    t->bias = calloc(json_array_size(maps) + 1, sizeof *t->bias);
    t->skill = calloc(json_array_size(players) + 1, sizeof *t->skill);
    if (t->bias == NULL || t->skill == NULL)
        return nomem(err);
    rc = load_entries(maps, "maps", "bias", EO_TRUTH_BIAS_MAX, map_fields, t->maps, t->bias,
                      err);
    if (rc != 0)
        return rc;
    rc = load_entries(players, "players", "skill", EO_TRUTH_SKILL_MAX, player_fields, t->players,
                      t->skill, err);
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
    eo_truth *t = calloc(1, sizeof *t);
    if (t == NULL)
        return nomem(err);
    t->players = eo__strmap_create();
    t->maps = eo__strmap_create();
    int rc = t->players != NULL && t->maps != NULL ? load(obj, t, err) : nomem(err);
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
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL) {
        eo__fail(err, "", "invalid JSON at offset %zu: NUL byte", (size_t)(nul - text));
        return EO_EPARSE;
    }
    json_error_t jerr;
    json_t *obj = json_loadb(text, len, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL) {
        eo__fail(err, "", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                 jerr.text);
        return EO_EPARSE;
    }
    int rc = eo_truth_from_json(obj, out, err);
    json_decref(obj);
    return rc;
}

int eo_truth_p(const eo_truth *t, const eo_round *r, double *p_a, eo_round_error *err)
{
    double bias = 0.0;
    if (r->map != NULL) {
        size_t len = strlen(r->map);
        int64_t k = eo__strmap_find(t->maps, r->map, len, eo__strmap_hash(r->map, len));
        if (k < 0) {
            eo__fail(err, "map", "map '%s' is not in the truth file", r->map);
            return EO_ENOTFOUND;
        }
        bias = t->bias[k];
    }
    /* The simulator's order: each team's sum over its members in order, then the difference,
     * so the oracle of a simulated round is its P_true to the bit. */
    double sum[2] = {0.0, 0.0};
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < r->n[s]; i++) {
            const eo_member *m = &r->team[s][i];
            size_t len = strlen(m->id);
            int64_t k = eo__strmap_find(t->players, m->id, len, eo__strmap_hash(m->id, len));
            if (k < 0) {
                char f[32];
                snprintf(f, sizeof f, "%c[%zu]", s == 0 ? 'A' : 'B', i);
                eo__fail(err, f, "player '%s' is not in the truth file", m->id);
                return EO_ENOTFOUND;
            }
            sum[s] += eo_round_member_weight(r, m) * t->skill[k];
        }
    }
    *p_a = eo_sim_p_true(sum[0] - sum[1], t->scale, bias);
    return 0;
}
