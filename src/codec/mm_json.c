/* Matchmaking bodies and documents (eo_codec.h "Matchmaking requests and documents"): queues,
 * tickets, instance registrations, backfill and ready-check requests are decoded here on the
 * HTTP thread, and the ticket and session documents written here (docs/MATCHMAKING.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "codec/json_text.h"
#include "evenodds/eo_codec.h"

/* A round error from the shared helpers, as a request error. */
static int from_round_error(eo_request_error *err, const eo_round_error *e)
{
    return eo__request_fail(err, EO_EINVAL, "invalid_request", e->field, "%s", e->message);
}

/* A request object with only the members @p keys[0..n): 0, or EO_EINVAL naming what is wrong. */
static int request_object(const json_t *obj, const char *const *keys, size_t n,
                          eo_request_error *err)
{
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    return eo__only_keys(obj, "", keys, n, err);
}

/* The id at member @p key of @p obj into @p dst (EO_ID_MAX + 1 bytes). Absent: EO_ENOTFOUND
 * when @p optional (dst untouched), else an error. */
static int id_member(const json_t *obj, const char *path, const char *key, bool optional, char *dst,
                     eo_request_error *err)
{
    char field[64];
    eo__json_path(field, sizeof field, path, key);
    const json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return optional ? EO_ENOTFOUND
                        : eo__request_fail(err, EO_EINVAL, "invalid_request", field,
                                           "required field missing");
    eo_round_error e;
    const char *s;
    size_t len;
    if (eo__check_id(v, field, &s, &len, &e) != 0)
        return from_round_error(err, &e);
    memcpy(dst, s, len + 1);
    return 0;
}

/* ---- queues ------------------------------------------------------------------------------ */

int eo_queue_config_init(const char *name, const char *pool, int team_size, eo_queue_config *out)
{
    if (out == NULL || name == NULL || pool == NULL || strlen(name) > EO_ID_MAX ||
        strlen(pool) > EO_ID_MAX)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    if (eo_match_config_default(team_size, &out->match) != 0)
        return EO_EINVAL;
    snprintf(out->name, sizeof out->name, "%s", name);
    snprintf(out->pool, sizeof out->pool, "%s", pool);
    out->interval_ms = 1000;
    out->ticket_ttl_s = 600;
    out->ready_check_s = 0;
    return 0;
}

static int team_size_member(const json_t *obj, int *out, eo_request_error *err)
{
    int64_t v = 0;
    eo_round_error e;
    if (eo__get_int(obj, "", "team_size", 1, EO_MATCH_TEAM_MAX, &v, NULL, &e) != 0)
        return from_round_error(err, &e);
    *out = (int)v;
    return 0;
}

int eo_queue_head_from_json(const json_t *obj, char *name, char *pool, int *team_size,
                            eo_request_error *err)
{
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    int rc = id_member(obj, "", "name", false, name, err);
    const char *rule = NULL;
    if (rc == 0 && eo_pool_name_check(name, strlen(name), &rule) != 0)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "name",
                              "a queue's name follows the rule of pool names: %s", rule);
    if (rc == 0)
        rc = id_member(obj, "", "pool", false, pool, err);
    if (rc == 0 && json_object_get(obj, "team_size") == NULL)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "team_size",
                              "required field missing");
    if (rc == 0)
        rc = team_size_member(obj, team_size, err);
    return rc;
}

/* An array member of distinct ids (at most @p max) into @p names (rows of EO_ID_MAX + 1). */
static int id_list(const json_t *obj, const char *key, size_t max, char (*names)[EO_ID_MAX + 1],
                   int *n, eo_request_error *err)
{
    const json_t *arr = json_object_get(obj, key);
    if (arr == NULL)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) > max)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", key,
                                "expected an array of at most %zu ids", max);
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        char field[64];
        snprintf(field, sizeof field, "%s[%zu]", key, i);
        eo_round_error e;
        const char *s;
        size_t len;
        if (eo__check_id(v, field, &s, &len, &e) != 0)
            return from_round_error(err, &e);
        for (size_t j = 0; j < i; j++)
            if (strcmp(names[j], s) == 0)
                return eo__request_fail(err, EO_EINVAL, "invalid_request", field, "given twice");
        memcpy(names[i], s, len + 1);
    }
    *n = (int)json_array_size(arr);
    return 0;
}

static int step_from_json(const json_t *o, size_t i, eo_match_step *st, eo_request_error *err)
{
    static const char *const keys[] = {"after", "window",      "latency_ms",
                                       "p_max", "quality_min", "team_min"};
    char path[32];
    snprintf(path, sizeof path, "steps[%zu]", i);
    if (!json_is_object(o))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", path, "expected an object");
    int rc = eo__only_keys(o, path, keys, sizeof keys / sizeof keys[0], err);
    if (rc != 0)
        return rc;
    if (json_object_get(o, "after") == NULL) {
        char field[64];
        eo__json_path(field, sizeof field, path, "after");
        return eo__request_fail(err, EO_EINVAL, "invalid_request", field, "required field missing");
    }
    int64_t after = 0, team_min = st->team_min;
    eo_round_error e;
    if (eo__get_int(o, path, "after", 0, EO_QUEUE_TTL_MAX_S, &after, NULL, &e) != 0 ||
        eo__get_num(o, path, "window", 0, 1e9, &st->window, &e) != 0 ||
        eo__get_num(o, path, "latency_ms", 0, EO_TICKET_LATENCY_MAX_MS, &st->latency_ms, &e) != 0 ||
        eo__get_num(o, path, "p_max", 0, 0.5, &st->p_max, &e) != 0 ||
        eo__get_num(o, path, "quality_min", 0, 1, &st->quality_min, &e) != 0 ||
        eo__get_int(o, path, "team_min", 0, EO_MATCH_TEAM_MAX, &team_min, NULL, &e) != 0)
        return from_round_error(err, &e);
    st->after = after;
    st->team_min = (int)team_min;
    return 0;
}

/* "steps": a whole new schedule. Members a step leaves out are the previous step's (the first
 * step's: those of the schedule's first step before), so a step may change one value. */
static int steps_from_json(const json_t *obj, eo_match_config *m, eo_request_error *err)
{
    const json_t *arr = json_object_get(obj, "steps");
    if (arr == NULL)
        return 0;
    if (!json_is_array(arr) || json_array_size(arr) < 1 ||
        json_array_size(arr) > EO_MATCH_STEPS_MAX)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "steps",
                                "expected an array of 1 to %d steps", EO_MATCH_STEPS_MAX);
    eo_match_step prev = m->steps[0], steps[EO_MATCH_STEPS_MAX];
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        steps[i] = prev;
        int rc = step_from_json(v, i, &steps[i], err);
        if (rc != 0)
            return rc;
        prev = steps[i];
    }
    m->nsteps = (int)json_array_size(arr);
    memcpy(m->steps, steps, (size_t)m->nsteps * sizeof steps[0]);
    return 0;
}

/* The members a change may not give. */
static int patch_fixed(const json_t *obj, eo_request_error *err)
{
    static const char *const fixed[] = {"name", "pool", "team_size", "regions"};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
        if (json_object_get(obj, fixed[i]) != NULL)
            return eo__request_fail(
                err, EO_EINVAL, "invalid_request", fixed[i],
                "cannot change (tickets were read against it): make a new queue");
    return 0;
}

/* The creation's head again, so that a request applied to another queue's value cannot rename
 * it or move it to another pool. */
static int head_again(const json_t *obj, eo_queue_config *t, eo_request_error *err)
{
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team_size = 0;
    int rc = eo_queue_head_from_json(obj, name, pool, &team_size, err);
    if (rc != 0)
        return rc;
    memcpy(t->name, name, sizeof name);
    memcpy(t->pool, pool, sizeof pool);
    t->match.team_size = team_size;
    return 0;
}

static int queue_numbers(const json_t *obj, eo_queue_config *t, eo_request_error *err)
{
    eo_round_error e;
    int64_t rounds = t->match.calib_rounds;
    if (eo__get_bool(obj, "", "linear", &t->match.linear, &e) != 0 ||
        eo__get_num(obj, "", "sigma_z", 0, 1e6, &t->match.sigma_z, &e) != 0 ||
        eo__get_int(obj, "", "calib_rounds", 0, 1000000, &rounds, NULL, &e) != 0 ||
        eo__get_num(obj, "", "calib_sigma", 0, 1e9, &t->match.calib_sigma, &e) != 0 ||
        eo__get_num(obj, "", "calib_window", 0, 1e9, &t->match.calib_window, &e) != 0 ||
        eo__get_int(obj, "", "interval_ms", EO_QUEUE_INTERVAL_MIN_MS, EO_QUEUE_INTERVAL_MAX_MS,
                    &t->interval_ms, NULL, &e) != 0 ||
        eo__get_int(obj, "", "ticket_ttl_s", 1, EO_QUEUE_TTL_MAX_S, &t->ticket_ttl_s, NULL, &e) !=
            0 ||
        eo__get_int(obj, "", "ready_check_s", 0, EO_QUEUE_READY_MAX_S, &t->ready_check_s, NULL,
                    &e) != 0)
        return from_round_error(err, &e);
    t->match.calib_rounds = (uint32_t)rounds;
    return 0;
}

int eo_queue_request_apply(const json_t *obj, bool patch, eo_queue_config *cfg,
                           eo_request_error *err)
{
    static const char *const keys[] = {
        "name",         "pool",        "team_size",    "regions",      "maps",
        "steps",        "linear",      "sigma_z",      "calib_rounds", "calib_sigma",
        "calib_window", "interval_ms", "ticket_ttl_s", "ready_check_s"};
    if (cfg == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    if (!json_is_object(obj))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "expected a JSON object");
    eo_queue_config *t = malloc(sizeof *t);
    if (t == NULL)
        return eo__request_fail(err, EO_ENOMEM, "internal", "", "out of memory");
    *t = *cfg;
    int rc = eo__only_keys(obj, "", keys, sizeof keys / sizeof keys[0], err);
    if (rc == 0)
        rc = patch ? patch_fixed(obj, err) : head_again(obj, t, err);
    if (rc == 0)
        rc = id_list(obj, "regions", EO_MATCH_REGIONS_MAX, t->regions, &t->match.nregions, err);
    if (rc == 0)
        rc = id_list(obj, "maps", EO_MATCH_MAPS_MAX, t->maps, &t->match.nmaps, err);
    if (rc == 0)
        rc = steps_from_json(obj, &t->match, err);
    if (rc == 0)
        rc = queue_numbers(obj, t, err);
    eo_round_error e;
    if (rc == 0 && eo_match_config_check(&t->match, &e) != 0)
        rc = from_round_error(err, &e);
    if (rc == 0)
        *cfg = *t;
    free(t);
    return rc;
}

static json_t *names_json(const char (*names)[EO_ID_MAX + 1], int n)
{
    json_t *a = json_array();
    for (int i = 0; a != NULL && i < n; i++)
        if (json_array_append_new(a, json_string(names[i])) != 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *steps_json(const eo_match_config *m)
{
    json_t *a = json_array();
    for (int i = 0; a != NULL && i < m->nsteps; i++) {
        const eo_match_step *s = &m->steps[i];
        json_t *o = json_pack("{s:I,s:f,s:f,s:f,s:f,s:i}", "after", (json_int_t)s->after, "window",
                              s->window, "latency_ms", s->latency_ms, "p_max", s->p_max,
                              "quality_min", s->quality_min, "team_min", s->team_min);
        if (json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

json_t *eo_queue_config_to_json(const eo_queue_config *c)
{
    const eo_match_config *m = &c->match;
    return json_pack(
        "{s:s,s:s,s:i,s:o,s:o,s:o,s:b,s:f,s:I,s:f,s:f,s:I,s:I,s:I}", "name", c->name, "pool",
        c->pool, "team_size", m->team_size, "regions", names_json(c->regions, m->nregions), "maps",
        names_json(c->maps, m->nmaps), "steps", steps_json(m), "linear", m->linear, "sigma_z",
        m->sigma_z, "calib_rounds", (json_int_t)m->calib_rounds, "calib_sigma", m->calib_sigma,
        "calib_window", m->calib_window, "interval_ms", (json_int_t)c->interval_ms, "ticket_ttl_s",
        (json_int_t)c->ticket_ttl_s, "ready_check_s", (json_int_t)c->ready_check_s);
}

/* ---- tickets ----------------------------------------------------------------------------- */

static int region_index(const eo_queue_config *q, const char *name)
{
    for (int r = 0; r < q->match.nregions; r++)
        if (strcmp(q->regions[r], name) == 0)
            return r;
    return -1;
}

/* "latency": {"REGION": ms, …} of player @p i (path @p path). */
static int latency_from_json(const json_t *lat, const char *path, const eo_queue_config *q,
                             size_t i, eo_ticket_request *out, eo_request_error *err)
{
    char field[64];
    eo__json_path(field, sizeof field, path, "latency");
    if (!json_is_object(lat))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", field,
                                "expected an object of ms by region");
    for (int r = 0; r < EO_MATCH_REGIONS_MAX; r++)
        out->latency[i][r] = -1.0;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)lat, key, v)
    {
        char rf[64];
        eo__json_path(rf, sizeof rf, field, key);
        int r = region_index(q, key);
        if (r < 0)
            return eo__request_fail(err, EO_EINVAL, "unknown_region", rf,
                                    "the queue has no such region");
        double ms = json_is_number(v) ? json_number_value(v) : -1.0;
        if (!(ms >= 0.0 && ms <= EO_TICKET_LATENCY_MAX_MS))
            return eo__request_fail(err, EO_EINVAL, "invalid_request", rf, "expected ms in [0, %d]",
                                    EO_TICKET_LATENCY_MAX_MS);
        out->latency[i][r] = ms;
    }
    out->has_latency[i] = true;
    return 0;
}

static int ticket_player(const json_t *p, size_t i, const eo_queue_config *q,
                         eo_ticket_request *out, eo_request_error *err)
{
    static const char *const keys[] = {"id", "latency"};
    char path[32];
    snprintf(path, sizeof path, "players[%zu]", i);
    if (!json_is_object(p))
        return eo__request_fail(err, EO_EINVAL, "invalid_request", path, "expected an object");
    int rc = eo__only_keys(p, path, keys, 2, err);
    if (rc == 0)
        rc = id_member(p, path, "id", false, out->players[i], err);
    for (size_t j = 0; rc == 0 && j < i; j++)
        if (strcmp(out->players[j], out->players[i]) == 0) {
            char field[64];
            eo__json_path(field, sizeof field, path, "id");
            rc = eo__request_fail(err, EO_EINVAL, "invalid_request", field, "player given twice");
        }
    const json_t *lat = json_object_get(p, "latency");
    if (rc == 0 && lat != NULL)
        rc = latency_from_json(lat, path, q, i, out, err);
    return rc;
}

int eo_ticket_request_from_json(const json_t *obj, const eo_queue_config *q, eo_ticket_request *out,
                                eo_request_error *err)
{
    static const char *const keys[] = {"id", "players"};
    if (out == NULL || q == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    memset(out, 0, sizeof *out);
    int rc = request_object(obj, keys, 2, err);
    if (rc == 0 && (rc = id_member(obj, "", "id", true, out->id, err)) == EO_ENOTFOUND)
        rc = 0;
    const json_t *players = json_object_get(obj, "players");
    if (rc == 0 && players == NULL)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "players",
                              "required field missing");
    if (rc == 0 && (!json_is_array(players) || json_array_size(players) == 0))
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "players",
                              "expected a non-empty array");
    if (rc == 0 && json_array_size(players) > (size_t)q->match.team_size)
        rc = eo__request_fail(err, EO_EINVAL, "party_too_large", "players",
                              "a party of %zu players is larger than the queue's team of %d",
                              json_array_size(players), q->match.team_size);
    size_t i;
    const json_t *p;
    if (rc == 0)
        json_array_foreach(players, i, p)
        {
            if ((rc = ticket_player(p, i, q, out, err)) != 0)
                break;
        }
    if (rc != 0)
        memset(out, 0, sizeof *out);
    else
        out->nplayers = json_array_size(players);
    return rc;
}

int eo_ticket_request_text(const eo_ticket_request *r, const eo_queue_config *q, char **out)
{
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < r->nplayers; i++) {
        json_t *p = json_pack("{s:s}", "id", r->players[i]);
        json_t *lat = r->has_latency[i] ? json_object() : NULL;
        for (int x = 0; lat != NULL && x < q->match.nregions; x++)
            if (r->latency[i][x] >= 0.0 &&
                json_object_set_new(lat, q->regions[x], json_real(r->latency[i][x])) != 0) {
                json_decref(lat);
                lat = NULL;
            }
        if (p == NULL ||
            (r->has_latency[i] && (lat == NULL || json_object_set_new(p, "latency", lat) != 0)) ||
            json_array_append_new(arr, p) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    }
    json_t *o = arr ? json_pack("{s:o}", "players", arr) : NULL;
    *out = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    json_decref(o);
    return *out ? 0 : EO_ENOMEM;
}

/* ---- instances, backfill, ready checks ----------------------------------------------------- */

static int address_member(const json_t *obj, char *dst, eo_request_error *err)
{
    const json_t *v = json_object_get(obj, "address");
    if (v == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "address",
                                "required field missing");
    const char *s = json_is_string(v) ? json_string_value(v) : NULL;
    size_t len = s ? json_string_length(v) : 0;
    bool ok = s != NULL && len > 0 && len <= EO_INSTANCE_ADDRESS_MAX && strlen(s) == len;
    for (size_t i = 0; ok && i < len; i++)
        ok = s[i] > 0x20 && s[i] < 0x7F;
    if (!ok)
        return eo__request_fail(
            err, EO_EINVAL, "invalid_request", "address",
            "expected 1 to %d bytes of printable ASCII without spaces (HOST:PORT)",
            EO_INSTANCE_ADDRESS_MAX);
    memcpy(dst, s, len + 1);
    return 0;
}

int eo_instance_request_from_json(const json_t *obj, eo_instance_request *out,
                                  eo_request_error *err)
{
    static const char *const keys[] = {"id", "queues", "address", "region", "capacity"};
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    memset(out, 0, sizeof *out);
    int rc = request_object(obj, keys, sizeof keys / sizeof keys[0], err);
    if (rc == 0)
        rc = id_member(obj, "", "id", false, out->id, err);
    int nq = 0;
    if (rc == 0 && json_object_get(obj, "queues") == NULL)
        rc =
            eo__request_fail(err, EO_EINVAL, "invalid_request", "queues", "required field missing");
    if (rc == 0)
        rc = id_list(obj, "queues", EO_INSTANCE_QUEUES_MAX, out->queues, &nq, err);
    if (rc == 0 && nq == 0)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "queues",
                              "expected at least one queue");
    if (rc == 0)
        rc = address_member(obj, out->address, err);
    if (rc == 0 && (rc = id_member(obj, "", "region", true, out->region, err)) == EO_ENOTFOUND)
        rc = 0;
    out->capacity = 1;
    eo_round_error e;
    if (rc == 0 && eo__get_int(obj, "", "capacity", 1, EO_INSTANCE_CAPACITY_MAX, &out->capacity,
                               NULL, &e) != 0)
        rc = from_round_error(err, &e);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    else
        out->nqueues = (size_t)nq;
    return rc;
}

json_t *eo_instance_request_to_json(const eo_instance_request *r)
{
    json_t *o = json_pack("{s:s,s:o,s:s,s:I}", "id", r->id, "queues",
                          names_json(r->queues, (int)r->nqueues), "address", r->address, "capacity",
                          (json_int_t)r->capacity);
    if (o != NULL && r->region[0] != '\0' &&
        json_object_set_new(o, "region", json_string(r->region)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* "team": "A" or "B". */
static int team_member(const json_t *obj, uint8_t *team, eo_request_error *err)
{
    const json_t *v = json_object_get(obj, "team");
    const char *s = json_is_string(v) ? json_string_value(v) : "";
    if (strcmp(s, "A") != 0 && strcmp(s, "B") != 0)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "team",
                                v ? "expected \"A\" or \"B\"" : "required field missing");
    *team = s[0] == 'A' ? EO_BALANCE_A : EO_BALANCE_B;
    return 0;
}

int eo_backfill_request_from_json(const json_t *obj, eo_backfill_request *out,
                                  eo_request_error *err)
{
    static const char *const keys[] = {"team", "slots", "rating"};
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    memset(out, 0, sizeof *out);
    int rc = request_object(obj, keys, 3, err);
    if (rc == 0)
        rc = team_member(obj, &out->team, err);
    if (rc == 0 && json_object_get(obj, "slots") == NULL)
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "slots", "required field missing");
    int64_t slots = 0;
    eo_round_error e;
    if (rc == 0 && eo__get_int(obj, "", "slots", 1, EO_MATCH_TEAM_MAX, &slots, NULL, &e) != 0)
        rc = from_round_error(err, &e);
    out->has_rating = json_object_get(obj, "rating") != NULL;
    if (rc == 0 && eo__get_num(obj, "", "rating", -1e9, 1e9, &out->rating, &e) != 0)
        rc = from_round_error(err, &e);
    out->slots = (int)slots;
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

int eo_ready_request_from_json(const json_t *obj, eo_ready_request *out, eo_request_error *err)
{
    static const char *const keys[] = {"player", "accept"};
    if (out == NULL)
        return eo__request_fail(err, EO_EINVAL, "invalid_request", "", "no output");
    memset(out, 0, sizeof *out);
    int rc = request_object(obj, keys, 2, err);
    if (rc == 0 && (rc = id_member(obj, "", "player", true, out->player, err)) == EO_ENOTFOUND)
        rc = 0;
    if (rc == 0 && !json_is_boolean(json_object_get(obj, "accept")))
        rc = eo__request_fail(err, EO_EINVAL, "invalid_request", "accept",
                              json_object_get(obj, "accept") ? "expected true or false"
                                                             : "required field missing");
    if (rc == 0)
        out->accept = json_is_true(json_object_get(obj, "accept"));
    else
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- documents --------------------------------------------------------------------------- */

/* Written as text straight into a bounded buffer (json_text.h): a ticket's document is written
 * at every change of its state, on the writer's path, so no jansson tree is built for it. */

/* Largest document: a session of EO_MATCH_TEAM_MAX a side with backfills, ids of 128 bytes
 * (each escaped at most 6 times), is well under it. */
#define DOC_MAX ((size_t)1 << 20)

static void key(eo__buf *b, const char *k)
{
    eo__buf_str(b, ",\"");
    eo__buf_str(b, k);
    eo__buf_str(b, "\":");
}

static void str_member(eo__buf *b, const char *k, const char *v)
{
    key(b, k);
    if (v != NULL)
        eo__jt_str(b, v);
    else
        eo__buf_str(b, "null");
}

static void int_member(eo__buf *b, const char *k, long long v)
{
    key(b, k);
    eo__jt_int(b, v);
}

static const char *team_name(uint8_t team)
{
    return team == EO_BALANCE_A ? "A" : "B";
}

/* A seat {"id","team"[,"ticket"][,"secret"][,"accepted"]}; @p accepted < 0: none. */
static void seat_text(eo__buf *b, const eo_mm_seat *s, bool with_ticket, int accepted)
{
    eo__buf_str(b, "{\"id\":");
    eo__jt_str(b, s->player);
    str_member(b, "team", team_name(s->team));
    if (with_ticket)
        str_member(b, "ticket", s->ticket);
    if (s->secret != NULL)
        str_member(b, "secret", s->secret);
    if (accepted >= 0) {
        key(b, "accepted");
        eo__buf_str(b, accepted ? "true" : "false");
    }
    eo__buf_str(b, "}");
}

/* The player ids of team @p team of @p m, as an array. */
static void team_text(eo__buf *b, const eo_mm_match_view *m, uint8_t team)
{
    eo__buf_str(b, "[");
    bool first = true;
    for (size_t i = 0; i < m->nseats; i++)
        if (m->seats[i].team == team) {
            eo__buf_str(b, first ? "" : ",");
            eo__jt_str(b, m->seats[i].player);
            first = false;
        }
    eo__buf_str(b, "]");
}

/* The match: its teams (player ids by team), map, region, P(A) and quality. */
static void match_text(eo__buf *b, const eo_mm_match_view *m)
{
    eo__buf_str(b, "{\"id\":");
    eo__jt_str(b, m->id);
    str_member(b, "queue", m->queue);
    key(b, "A");
    team_text(b, m, EO_BALANCE_A);
    key(b, "B");
    team_text(b, m, EO_BALANCE_B);
    str_member(b, "map", m->map);
    str_member(b, "region", m->region);
    key(b, "p_a");
    eo__jt_real9(b, m->p_a);
    key(b, "quality");
    eo__jt_real9(b, m->quality);
    int_member(b, "team_size", m->team_size);
    int_member(b, "formed_at", m->formed_at);
    eo__buf_str(b, "}");
}

/* The seats of the ticket's own players (an assignment's; a ready check's with "accepted"). */
static void own_seats(eo__buf *b, const eo_ticket_view *v, bool with_accept)
{
    const eo_mm_match_view *m = v->match;
    eo__buf_str(b, "[");
    bool first = true;
    for (size_t i = 0; i < m->nseats; i++) {
        if (strcmp(m->seats[i].ticket, v->id) != 0)
            continue;
        eo__buf_str(b, first ? "" : ",");
        seat_text(b, &m->seats[i], false, with_accept ? v->accepted && v->accepted[i] : -1);
        first = false;
    }
    eo__buf_str(b, "]");
}

static void ticket_match_parts(eo__buf *b, const eo_ticket_view *v)
{
    if (v->match == NULL)
        return;
    key(b, "match");
    match_text(b, v->match);
    if (v->accepted != NULL && v->session == NULL) {
        key(b, "ready_check");
        eo__buf_str(b, "{\"deadline\":");
        eo__jt_int(b, v->ready_deadline);
        key(b, "players");
        own_seats(b, v, true);
        eo__buf_str(b, "}");
    }
    if (v->session != NULL) {
        key(b, "assignment");
        eo__buf_str(b, "{\"session\":");
        eo__jt_str(b, v->session);
        str_member(b, "instance", v->instance);
        str_member(b, "address", v->address);
        key(b, "players");
        own_seats(b, v, false);
        eo__buf_str(b, "}");
    }
}

static int take(eo__buf *b, char **out, size_t *len)
{
    int rc = b->err;
    *out = rc == 0 ? eo__buf_take(b, len) : NULL;
    eo__buf_free(b);
    return rc != 0 ? rc : *out != NULL ? 0 : EO_ENOMEM;
}

int eo_ticket_view_text(const eo_ticket_view *v, char **out, size_t *len)
{
    eo__buf b;
    eo__buf_init(&b, DOC_MAX);
    eo__buf_str(&b, "{\"ticket\":");
    eo__jt_str(&b, v->id);
    str_member(&b, "queue", v->queue);
    str_member(&b, "status", v->status);
    key(&b, "players");
    eo__buf_str(&b, "[");
    for (size_t i = 0; i < v->nplayers; i++) {
        eo__buf_str(&b, i ? "," : "");
        eo__jt_str(&b, v->players[i]);
    }
    eo__buf_str(&b, "]");
    int_member(&b, "created_at", v->created_at);
    int_member(&b, "updated_at", v->updated_at);
    if (v->reason != NULL)
        str_member(&b, "reason", v->reason);
    ticket_match_parts(&b, v);
    eo__buf_str(&b, "}");
    return take(&b, out, len);
}

int eo_session_view_text(const eo_session_view *v, char **out, size_t *len)
{
    eo__buf b;
    eo__buf_init(&b, DOC_MAX);
    eo__buf_str(&b, "{\"session\":");
    eo__jt_str(&b, v->id);
    str_member(&b, "instance", v->instance);
    str_member(&b, "address", v->address);
    str_member(&b, "pool", v->pool);
    str_member(&b, "status", v->status);
    key(&b, "match");
    match_text(&b, v->match);
    key(&b, "players");
    eo__buf_str(&b, "[");
    for (size_t i = 0; i < v->match->nseats; i++) {
        eo__buf_str(&b, i ? "," : "");
        seat_text(&b, &v->match->seats[i], true, -1);
    }
    eo__buf_str(&b, "]");
    int_member(&b, "created_at", v->created_at);
    int_member(&b, "updated_at", v->updated_at);
    key(&b, "backfill");
    if (v->backfill_team < 0) {
        eo__buf_str(&b, "null");
    } else {
        eo__buf_str(&b, "{\"team\":");
        eo__jt_str(&b, team_name((uint8_t)v->backfill_team));
        int_member(&b, "slots", v->backfill_slots);
        key(&b, "rating");
        eo__jt_real(&b, v->backfill_rating);
        int_member(&b, "asked_at", v->backfill_at);
        eo__buf_str(&b, "}");
    }
    eo__buf_str(&b, "}");
    return take(&b, out, len);
}
