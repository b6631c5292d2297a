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
    for (size_t i = 0; req->party_ids != NULL && i < req->nparty; i++)
        free(req->party_ids[i]);
    free(req->ids);
    free(req->rating);
    free(req->has_rating);
    free(req->players);
    free(req->party_ids);
    free(req->map);
    memset(req, 0, sizeof *req);
}

/* ---- strict readers of the balancer inputs (absent members leave *out alone) ------------ */

/* "A" | "B" (| null when null_ok, giving EO_BALANCE_NONE). */
static int get_side(const json_t *obj, const char *path, const char *name, bool null_ok,
                    uint8_t *out, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    if (null_ok && json_is_null(v)) {
        *out = EO_BALANCE_NONE;
        return 0;
    }
    const char *s = json_string_value(v);
    if (s != NULL && json_string_length(v) == 1 && (s[0] == 'A' || s[0] == 'B')) {
        *out = s[0] == 'A' ? EO_BALANCE_A : EO_BALANCE_B;
        return 0;
    }
    char f[64];
    eo__json_path(f, sizeof f, path, name);
    return eo__fail(err, f, null_ok ? "expected \"A\", \"B\" or null" : "expected \"A\" or \"B\"");
}

static const char *const player_keys[] = {"team",     "party",     "lock",    "priority",
                                          "prefer",   "denied",    "protected", "sat_out",
                                          NULL};
static const char *const request_keys[] = {"mode",          "epsilon",         "spread_epsilon",
                                           "budget_ms",     "map",             "allow_party_split",
                                           "allow_protected", "k_min",         "k_max",
                                           NULL};

static bool has_any(const json_t *obj, const char *const *keys)
{
    for (size_t i = 0; keys[i] != NULL; i++)
        if (json_object_get(obj, keys[i]) != NULL)
            return true;
    return false;
}

/* The balancer's arrays, allocated when a request first needs them (plain requests never). */
static int balance_arrays(eo_split_request *out, eo_round_error *err)
{
    if (out->players == NULL)
        out->players = calloc(out->n, sizeof *out->players);
    if (out->party_ids == NULL)
        out->party_ids = calloc(out->n, sizeof *out->party_ids);
    if (out->players == NULL || out->party_ids == NULL) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    return 0;
}

/* The balancer inputs of player i (an object); @p prio gets the raw priority. */
static int player_balance(const json_t *v, const char *path, size_t i, eo_split_request *out,
                          double *prio, eo_round_error *err)
{
    int rc = balance_arrays(out, err);
    if (rc != 0)
        return rc;
    eo_balance_player *p = &out->players[i];
    bool prot = false, sat = false;
    int64_t denied = 0;
    if ((rc = get_side(v, path, "team", true, &p->team, err)) != 0 ||
        (rc = get_side(v, path, "lock", true, &p->lock, err)) != 0 ||
        (rc = get_side(v, path, "prefer", true, &p->prefer, err)) != 0 ||
        (rc = eo__get_num(v, path, "priority", -EO_SPLIT_PRIORITY_MAX, EO_SPLIT_PRIORITY_MAX,
                         prio, err)) != 0 ||
        (rc = eo__get_int(v, path, "denied", 0, EO_SPLIT_DENIED_MAX, &denied, NULL, err)) != 0 ||
        (rc = eo__get_bool(v, path, "protected", &prot, err)) != 0 ||
        (rc = eo__get_bool(v, path, "sat_out", &sat, err)) != 0)
        return rc;
    p->protect = prot;
    p->sat_out = sat;
    p->weight = UINT32_C(1) << denied;
    const json_t *party = json_object_get(v, "party");
    if (party != NULL && !json_is_null(party)) {
        char f[64];
        const char *s;
        size_t len;
        snprintf(f, sizeof f, "%s.party", path);
        if ((rc = eo__check_id(party, f, &s, &len, err)) != 0)
            return rc;
        size_t k = 0;
        while (k < out->nparty && strcmp(out->party_ids[k], s) != 0)
            k++;
        if (k == out->nparty && (rc = eo__dup_id(party, f, &out->party_ids[out->nparty++],
                                                 err)) != 0)
            return rc;
        p->party = (uint32_t)(k + 1);
    }
    return 0;
}

static int player_from_json(const json_t *v, size_t i, eo_split_request *out, double *prio,
                            bool *more, eo_round_error *err)
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
    /* Members besides id and rating: maybe balancer inputs (a plain player skips the lookups). */
    *more = json_object_size(v) > 1 + (rating != NULL);
    if (*more && (rc = player_balance(v, path, i, out, prio, err)) != 0)
        return rc;
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

/* The request-level balancer inputs, the priorities as ranks, and the pins' consistency. */
static int request_balance(const json_t *obj, eo_split_request *out, const double *prio,
                           eo_round_error *err)
{
    int rc = balance_arrays(out, err);
    if (rc != 0)
        return rc;
    out->mode = EO_BALANCE_REBALANCE;
    out->epsilon = EO_SPLIT_EPSILON_DEFAULT;
    out->spread_epsilon = NAN; /* the model's split unit (eo_app_split()) */
    out->budget_ms = EO_SPLIT_BUDGET_DEFAULT_MS;
    if (out->bench == EO_BENCH_QUEUE)
        return eo__fail(err, "bench", "\"queue\" cannot be combined with balancer inputs "
                                      "(give priorities instead)");
    const json_t *mode = json_object_get(obj, "mode");
    if (mode != NULL) {
        const char *m = json_string_value(mode);
        if (m != NULL && strcmp(m, "rebalance") == 0 && json_string_length(mode) == 9)
            out->mode = EO_BALANCE_REBALANCE;
        else if (m != NULL && strcmp(m, "scramble") == 0 && json_string_length(mode) == 8)
            out->mode = EO_BALANCE_SCRAMBLE;
        else
            return eo__fail(err, "mode", "expected \"rebalance\" or \"scramble\"");
    }
    int64_t kmin = 0, kmax = 0, half = (int64_t)(out->n / 2);
    if ((rc = eo__get_num(obj, "", "epsilon", 0.0, 0.5, &out->epsilon, err)) != 0 ||
        (rc = eo__get_num(obj, "", "spread_epsilon", 0.0, EO_SPLIT_SPREAD_EPSILON_MAX,
                          &out->spread_epsilon, err)) != 0 ||
        (rc = eo__get_int(obj, "", "budget_ms", 1, EO_SPLIT_BUDGET_MAX_MS, &out->budget_ms, NULL,
                          err)) != 0 ||
        (rc = eo__get_bool(obj, "", "allow_party_split", &out->allow_party_split, err)) != 0 ||
        (rc = eo__get_bool(obj, "", "allow_protected", &out->allow_protected, err)) != 0)
        return rc;
    for (int which = 0; which < 2; which++) {
        const char *name = which ? "k_max" : "k_min";
        if (json_object_get(obj, name) == NULL)
            continue;
        if (half < 2)
            return eo__fail(err, name, "no team size: %zu players make no two teams of 2",
                            out->n);
        if ((rc = eo__get_int(obj, "", name, 2, half, which ? &kmax : &kmin, NULL, err)) != 0)
            return rc;
    }
    if (kmin && kmax && kmin > kmax)
        return eo__fail(err, "k_max", "smaller than k_min (%lld)", (long long)kmin);
    out->k_min = (int)(kmin ? kmin : 2);
    out->k_max = (int)(kmax ? kmax : half);
    if (half < 2)
        out->k_min = out->k_max = 0; /* no team size: an empty answer */
    const json_t *map = json_object_get(obj, "map");
    if (map != NULL && !json_is_null(map) && (rc = eo__dup_id(map, "map", &out->map, err)) != 0)
        return rc;
    for (size_t i = 0; i < out->n; i++) {
        int32_t r = 0;
        for (size_t j = 0; j < out->n; j++) {
            bool seen = false; /* count each distinct smaller value once */
            for (size_t x = 0; x < j && !seen; x++)
                seen = prio[x] == prio[j];
            r += !seen && prio[j] < prio[i];
        }
        out->players[i].priority = r;
    }
    for (size_t i = 0; i < out->n; i++) {
        const eo_balance_player *p = &out->players[i];
        char f[64];
        int s = eo_balance_player_pin(p, out->allow_protected);
        if (s < 0) {
            snprintf(f, sizeof f, "players[%zu].lock", i);
            return eo__fail(err, f, "locked to %s but protected on team %s",
                            p->lock == EO_BALANCE_A ? "A" : "B",
                            p->team == EO_BALANCE_A ? "A" : "B");
        }
        if (!s || !p->party || out->allow_party_split)
            continue;
        for (size_t j = 0; j < i; j++) {
            int t = eo_balance_player_pin(&out->players[j], out->allow_protected);
            if (out->players[j].party == p->party && t > 0 && t != s) {
                snprintf(f, sizeof f, "players[%zu].party", i);
                return eo__fail(err, f,
                                "party \"%s\" is pinned to both sides: players[%zu] to %s, "
                                "players[%zu] to %s (locks, protected players)",
                                out->party_ids[p->party - 1], j, t == EO_BALANCE_A ? "A" : "B",
                                i, s == EO_BALANCE_A ? "A" : "B");
            }
        }
    }
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
    double prio[EO_SPLIT_EXACT_MAX] = {0};
    out->balance = json_object_size(obj) > 1 + (bench != NULL) && has_any(obj, request_keys);
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(players, i);
        bool more = false;
        int rc = player_from_json(v, i, out, &prio[i], &more, err);
        if (rc != 0)
            return rc;
        out->balance = out->balance || (more && has_any(v, player_keys));
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
    return out->balance ? request_balance(obj, out, prio, err) : 0;
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

static json_t *split_to_json(const eo_split *s, const char *const *ids, int64_t unit)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    json_t *p = isnan(s->p_a) ? json_null() : json_real(s->p_a);
    json_t *a = eo__json_id_array(s->a, (size_t)s->k, ids);
    json_t *b = eo__json_id_array(s->b, (size_t)s->k, ids);
    json_t *bench = eo__json_id_array(s->bench, s->nbench, ids);
    /* set_new steals each value even when it fails, so every value is handed over once. */
    int bad = json_object_set_new(o, "k", json_integer(s->k));
    bad |= json_object_set_new(o, "A", a);
    bad |= json_object_set_new(o, "B", b);
    bad |= json_object_set_new(o, "bench", bench);
    bad |= json_object_set_new(o, "gap", eo__json_scaled(s->gap, unit));
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
    json_t *arr = NULL;
    json_t *root = eo__json_splits_root(&arr);
    if (root == NULL)
        return NULL;
    for (size_t i = 0; i < s->count; i++) {
        if (json_array_append_new(arr, split_to_json(&s->split[i], ids, unit)) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
