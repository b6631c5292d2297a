/* The canonical round record to and from JSON (eo_codec.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

static const char *const team_key[2] = {"A", "B"};

static int opt_id(const json_t *obj, const char *key, char **out, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, key);
    return v == NULL ? 0 : eo__dup_id(v, key, out, err);
}

static int opt_time(const json_t *obj, const char *key, int64_t *out, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, key);
    if (v == NULL)
        return 0;
    if (!json_is_integer(v))
        return eo__fail(err, key, "expected an integer (Unix seconds)");
    json_int_t x = json_integer_value(v);
    if (x < 0 || x > EO_ROUND_TIME_MAX)
        return eo__fail(err, key, "out of range: expected Unix seconds in [0, %" PRId64 "]",
                        EO_ROUND_TIME_MAX);
    *out = (int64_t)x;
    return 0;
}

static int member_number(const json_t *m, const char *key, const char *path, double *out,
                         eo_round_error *err)
{
    const json_t *v = json_object_get(m, key);
    if (v == NULL)
        return 0;
    char field[64];
    snprintf(field, sizeof field, "%s.%s", path, key);
    if (!json_is_number(v))
        return eo__fail(err, field, "expected a number");
    *out = json_number_value(v);
    return 1;
}

static int member_from_json(const json_t *v, int t, size_t i, eo_member *m, eo_round_error *err)
{
    char path[48];
    char field[64];
    snprintf(path, sizeof path, "%s[%zu]", team_key[t], i);
    snprintf(field, sizeof field, "%s.id", path);
    if (json_is_string(v))
        return eo__dup_id(v, field, &m->id, err);
    if (!json_is_object(v))
        return eo__fail(err, path, "expected a player id or an object");
    const json_t *id = json_object_get(v, "id");
    if (id == NULL)
        return eo__fail(err, field, "required field missing");
    int rc = eo__dup_id(id, field, &m->id, err);
    if (rc != 0)
        return rc;
    const struct {
        const char *key;
        unsigned bit;
        double *dst;
    } nums[] = {{"time", EO_MEMBER_TIME, &m->time},
                {"joined", EO_MEMBER_JOINED, &m->joined},
                {"left", EO_MEMBER_LEFT, &m->left},
                {"playtime", EO_MEMBER_PLAYTIME, &m->playtime}};
    for (size_t k = 0; k < sizeof nums / sizeof nums[0]; k++) {
        rc = member_number(v, nums[k].key, path, nums[k].dst, err);
        if (rc < 0)
            return rc;
        if (rc > 0)
            m->has |= nums[k].bit;
    }
    const json_t *c = json_object_get(v, "commander");
    if (c != NULL) {
        if (!json_is_boolean(c)) {
            snprintf(field, sizeof field, "%s.commander", path);
            return eo__fail(err, field, "expected true or false");
        }
        m->commander = json_is_true(c);
    }
    const json_t *party = json_object_get(v, "party");
    if (party != NULL) {
        snprintf(field, sizeof field, "%s.party", path);
        return eo__dup_id(party, field, &m->party, err);
    }
    return 0;
}

static int team_from_json(const json_t *obj, int t, size_t others, eo_round *out,
                          eo_round_error *err)
{
    const char *key = team_key[t];
    const json_t *a = json_object_get(obj, key);
    if (a == NULL)
        return eo__fail(err, key, "required field missing");
    if (!json_is_array(a))
        return eo__fail(err, key, "expected an array of players");
    size_t n = json_array_size(a);
    if (n == 0)
        return eo__fail(err, key, "team is empty");
    /* Checked before allocating, so a huge array costs nothing beyond its parse. The count is
     * the round's: when A alone is too large, B's members (not yet decoded) count too. */
    if (n > EO_PLAYERS_MAX || others + n > EO_PLAYERS_MAX) {
        const json_t *b = t == 0 ? json_object_get(obj, team_key[1]) : NULL;
        size_t total = others + n + (json_is_array(b) ? json_array_size(b) : 0);
        return eo__fail(err, key, "too many players: %zu in the round (at most %d)", total,
                        EO_PLAYERS_MAX);
    }
    out->team[t] = calloc(n, sizeof *out->team[t]);
    if (out->team[t] == NULL) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        /* n grows with each member so that eo_round_free() releases exactly what was made. */
        out->n[t] = i + 1;
        int rc = member_from_json(json_array_get(a, i), t, i, &out->team[t][i], err);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int winner_from_json(const json_t *obj, eo_winner *w, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, "winner");
    if (v == NULL)
        return eo__fail(err, "winner", "required field missing");
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    if (s != NULL && len == 1 && s[0] == 'A')
        *w = EO_WIN_A;
    else if (s != NULL && len == 1 && s[0] == 'B')
        *w = EO_WIN_B;
    else if (s != NULL && len == 4 && memcmp(s, "draw", 4) == 0)
        *w = EO_DRAW;
    else
        return eo__fail(err, "winner", "expected \"A\", \"B\" or \"draw\"");
    return 0;
}

int eo_round_from_json(const json_t *obj, eo_round *out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    int rc;
    const json_t *id = json_object_get(obj, "id");
    if (id == NULL)
        rc = eo__fail(err, "id", "required field missing");
    else
        rc = eo__dup_id(id, "id", &out->id, err);
    if (rc == 0)
        rc = winner_from_json(obj, &out->winner, err);
    if (rc == 0)
        rc = team_from_json(obj, 0, 0, out, err);
    if (rc == 0)
        rc = team_from_json(obj, 1, out->n[0], out, err);
    if (rc == 0)
        rc = opt_id(obj, "server", &out->server, err);
    if (rc == 0)
        rc = opt_id(obj, "map", &out->map, err);
    if (rc == 0)
        rc = opt_id(obj, "mode", &out->mode, err);
    if (rc == 0)
        rc = opt_time(obj, "started_at", &out->started_at, err);
    if (rc == 0)
        rc = opt_time(obj, "ended_at", &out->ended_at, err);
    if (rc == 0)
        rc = eo_round_validate(out, err);
    if (rc != 0)
        eo_round_free(out);
    return rc;
}

int eo_round_from_text(const char *text, size_t len, eo_round *out, eo_round_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (text == NULL || out == NULL)
        return eo__fail(err, "", "no input");
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL) {
        eo__fail(err, "", "invalid JSON at column %zu: NUL byte", (size_t)(nul - text) + 1);
        return EO_EPARSE;
    }
    json_error_t jerr;
    json_t *obj = json_loadb(text, len, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL) {
        if (jerr.line > 1)
            eo__fail(err, "", "invalid JSON at line %d, column %d: %s", jerr.line, jerr.column,
                     jerr.text);
        else
            eo__fail(err, "", "invalid JSON at column %d: %s", jerr.column, jerr.text);
        return EO_EPARSE;
    }
    int rc = eo_round_from_json(obj, out, err);
    json_decref(obj);
    return rc;
}

int eo_round_canonical(const json_t *obj, char **out)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    if (!json_is_object(obj))
        return EO_EINVAL;
    /* 17 significant digits print every double so that it reads back to the same bits. */
    *out = json_dumps(obj, JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17));
    return *out == NULL ? EO_ENOMEM : 0;
}

static int count_bytes(const char *buf, size_t size, void *data)
{
    (void)buf;
    *(size_t *)data += size;
    return 0;
}

/* Length of @p v's canonical text, without building it. */
static size_t canonical_len(const json_t *v)
{
    size_t n = 0;
    json_dump_callback(v, count_bytes, &n,
                       JSON_COMPACT | JSON_SORT_KEYS | JSON_REAL_PRECISION(17) | JSON_ENCODE_ANY);
    return n;
}

/* The key of object @p o whose value's canonical text is the longest, and that length. */
static const char *longest_key(const json_t *o, size_t *len)
{
    const char *key, *best = NULL;
    const json_t *v;
    *len = 0;
    json_object_foreach ((json_t *)o, key, v) {
        size_t n = canonical_len(v);
        if (best == NULL || n > *len) {
            best = key;
            *len = n;
        }
    }
    return best;
}

/* A key as part of a field path: a bounded prefix of its printable ASCII (keys of unknown
 * fields are anything). */
static void path_key(char *out, size_t cap, const char *prefix, const char *key)
{
    size_t at = (size_t)snprintf(out, cap, "%s%s", prefix, prefix[0] ? "." : "");
    at = at < cap ? at : cap - 1;
    for (size_t j = 0; key[j] != '\0' && j < 40 && at + 1 < cap; j++)
        out[at++] = key[j] >= 0x20 && key[j] < 0x7F ? key[j] : '?';
    out[at] = '\0';
}

int eo_round_text_check(const json_t *obj, size_t canon_len, eo_round_error *err)
{
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    if (canon_len <= EO_ROUND_TEXT_MAX)
        return 0;
    size_t len;
    const char *key = longest_key(obj, &len);
    char field[64];
    path_key(field, sizeof field, "", key != NULL ? key : "");
    const json_t *team = key != NULL ? json_object_get(obj, key) : NULL;
    if (key != NULL && (strcmp(key, "A") == 0 || strcmp(key, "B") == 0) && json_is_array(team)) {
        /* A team is long only through its members' unknown fields: name the longest. */
        size_t best = 0, i;
        const json_t *m;
        len = 0;
        json_array_foreach (team, i, m) {
            size_t n = canonical_len(m);
            if (n > len) {
                best = i;
                len = n;
            }
        }
        char member[16];
        snprintf(member, sizeof member, "%s[%zu]", key, best);
        m = json_array_get(team, best);
        key = json_is_object(m) ? longest_key(m, &len) : NULL;
        if (key != NULL)
            path_key(field, sizeof field, member, key);
        else
            snprintf(field, sizeof field, "%s", member);
    }
    eo__fail(err, field,
             "the round's canonical text would be %zu bytes, more than %zu (the longest line "
             "import reads); this field takes %zu",
             canon_len, (size_t)EO_ROUND_TEXT_MAX, len);
    return EO_ELIMIT;
}

/* json_object_set_new() consumes v even on failure, so a NULL v is just a failure. */
static int set(json_t *o, const char *key, json_t *v)
{
    return v == NULL ? -1 : json_object_set_new(o, key, v);
}

static json_t *member_to_json(const eo_member *m)
{
    if (m->has == 0 && !m->commander && m->party == NULL)
        return json_string(m->id);
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = set(o, "id", json_string(m->id));
    if (m->has & EO_MEMBER_TIME)
        bad |= set(o, "time", json_real(m->time));
    if (m->has & EO_MEMBER_JOINED)
        bad |= set(o, "joined", json_real(m->joined));
    if (m->has & EO_MEMBER_LEFT)
        bad |= set(o, "left", json_real(m->left));
    if (m->has & EO_MEMBER_PLAYTIME)
        bad |= set(o, "playtime", json_real(m->playtime));
    if (m->commander)
        bad |= set(o, "commander", json_true());
    if (m->party != NULL)
        bad |= set(o, "party", json_string(m->party));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_round_to_json(const eo_round *r)
{
    static const char *const winner[3] = {"A", "B", "draw"};
    if (r == NULL || r->id == NULL || (unsigned)r->winner > EO_DRAW)
        return NULL;
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = set(o, "id", json_string(r->id));
    if (r->server != NULL)
        bad |= set(o, "server", json_string(r->server));
    if (r->map != NULL)
        bad |= set(o, "map", json_string(r->map));
    if (r->mode != NULL)
        bad |= set(o, "mode", json_string(r->mode));
    if (r->started_at != 0)
        bad |= set(o, "started_at", json_integer(r->started_at));
    if (r->ended_at != 0)
        bad |= set(o, "ended_at", json_integer(r->ended_at));
    bad |= set(o, "winner", json_string(winner[r->winner]));
    for (int t = 0; t < 2 && !bad; t++) {
        json_t *a = json_array();
        bad |= set(o, team_key[t], a);
        for (size_t i = 0; i < r->n[t] && !bad; i++) {
            json_t *m = member_to_json(&r->team[t][i]);
            bad |= m == NULL ? -1 : json_array_append_new(a, m);
        }
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int eo_round_request_from_json(const json_t *obj, eo_round_request *out, eo_round_error *err)
{
    if (out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    int rc = eo_round_from_json(obj, &out->round, err);
    if (rc != 0)
        return rc;
    rc = opt_id(obj, "session", &out->session, err);
    if (rc != 0) {
        eo_round_request_free(out);
        return rc;
    }
    rc = eo_round_canonical(obj, &out->canon);
    if (rc != 0) { /* an object (decoded above): only memory can fail */
        eo_round_request_free(out);
        return EO_ENOMEM;
    }
    out->canon_len = strlen(out->canon);
    out->text_rc = eo_round_text_check(obj, out->canon_len, &out->text_err);
    return 0;
}

void eo_round_request_free(eo_round_request *q)
{
    if (q == NULL)
        return;
    eo_round_free(&q->round);
    free(q->canon);
    free(q->session);
    memset(q, 0, sizeof *q);
}
