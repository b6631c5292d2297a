/* Autobalance and scramble trigger requests and answers (eo_codec.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

/* ---- small strict readers ----------------------------------------------------------------- */

/* Rejects members of @p obj not in the NULL-terminated @p names; @p path prefixes the field. */
static int only_known(const json_t *obj, const char *const *names, const char *path,
                      eo_round_error *err)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)obj, key, v) {
        bool ok = false;
        for (size_t i = 0; names[i] != NULL && !ok; i++)
            ok = strcmp(key, names[i]) == 0;
        if (!ok) {
            char field[64];
            snprintf(field, sizeof field, "%s%s%.40s", path, path[0] ? "." : "", key);
            return eo__fail(err, field, "unknown field");
        }
    }
    return 0;
}

/* A string among @p names (NULL-terminated); *out its index. */
static int get_choice(const json_t *obj, const char *path, const char *name,
                      const char *const *names, const char *expect, int *out, eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    const char *s = json_string_value(v);
    for (int i = 0; s != NULL && names[i] != NULL; i++)
        if (strcmp(s, names[i]) == 0 && json_string_length(v) == strlen(names[i])) {
            *out = i;
            return 0;
        }
    char f[64];
    eo__json_path(f, sizeof f, path, name);
    return eo__fail(err, f, "expected %s", expect);
}

static const char *const team_names[] = {"A", "B", NULL};

/* ---- autobalance -------------------------------------------------------------------------- */

void eo_autobalance_request_free(eo_autobalance_request *req)
{
    if (req == NULL)
        return;
    for (size_t i = 0; req->ids != NULL && i < req->n; i++)
        free(req->ids[i]);
    free(req->ids);
    free(req->players);
    free(req->rating);
    free(req->has_rating);
    free(req->joiner_id);
    memset(req, 0, sizeof *req);
}

static int get_rating(const json_t *obj, const char *path, double *out, bool *has,
                      eo_round_error *err)
{
    const json_t *v = json_object_get(obj, "rating");
    if (v == NULL)
        return 0;
    int rc = eo__get_num(obj, path, "rating", -EO_AB_JSON_RATING_MAX, EO_AB_JSON_RATING_MAX, out,
                         err);
    if (rc == 0)
        *has = true;
    return rc;
}

static int player_from_json(const json_t *v, size_t i, eo_autobalance_request *out,
                            const char **party_ids, size_t *nparty, bool *score_seen,
                            eo_round_error *err)
{
    static const char *const known[] = {"id",       "team",      "rating",     "party", "protected",
                                        "dead",     "joined_at", "last_moved", "score", NULL};
    char path[32], f[64];
    snprintf(path, sizeof path, "players[%zu]", i);
    if (!json_is_object(v))
        return eo__fail(err, path, "expected a player object");
    int rc = only_known(v, known, path, err);
    if (rc != 0)
        return rc;
    eo_ab_player *p = &out->players[i];
    p->id = (uint32_t)i;
    p->last_moved = EO_AB_NEVER;
    eo__json_path(f, sizeof f, path, "id");
    const json_t *id = json_object_get(v, "id");
    if (id == NULL)
        return eo__fail(err, f, "required field missing");
    if ((rc = eo__dup_id(id, f, &out->ids[i], err)) != 0)
        return rc;
    for (size_t j = 0; j < i; j++)
        if (strcmp(out->ids[j], out->ids[i]) == 0)
            return eo__fail(err, f, "player \"%s\" is already at players[%zu]", out->ids[i], j);
    eo__json_path(f, sizeof f, path, "team");
    if (json_object_get(v, "team") == NULL)
        return eo__fail(err, f, "required field missing");
    int team = 0;
    if ((rc = get_choice(v, path, "team", team_names, "\"A\" or \"B\"", &team, err)) != 0)
        return rc;
    p->team = (eo_ab_team)team;
    if ((rc = get_rating(v, path, &out->rating[i], &out->has_rating[i], err)) != 0)
        return rc;
    const json_t *party = json_object_get(v, "party");
    if (party != NULL && !json_is_null(party)) {
        const char *s;
        size_t len;
        eo__json_path(f, sizeof f, path, "party");
        if ((rc = eo__check_id(party, f, &s, &len, err)) != 0)
            return rc;
        size_t k = 0;
        while (k < *nparty && strcmp(party_ids[k], s) != 0)
            k++;
        if (k == *nparty)
            party_ids[(*nparty)++] = s; /* borrowed from the request object */
        p->party = (uint32_t)(k + 1);
    }
    if ((rc = eo__get_bool(v, path, "protected", &p->is_protected, err)) != 0 ||
        (rc = eo__get_bool(v, path, "dead", &p->dead, err)) != 0)
        return rc;
    bool is_null;
    if ((rc = eo__get_int(v, path, "joined_at", 0, EO_ROUND_TIME_MAX, &p->joined_at, NULL,
                          err)) != 0 ||
        (rc = eo__get_int(v, path, "last_moved", 0, EO_ROUND_TIME_MAX, &p->last_moved,
                          &is_null, err)) != 0)
        return rc;
    if (is_null)
        p->last_moved = EO_AB_NEVER;
    bool has_score = json_object_get(v, "score") != NULL;
    if (i > 0 && has_score != *score_seen) {
        eo__json_path(f, sizeof f, path, "score");
        return eo__fail(err, f, "give a score for every player or for none");
    }
    *score_seen = has_score;
    if ((rc = eo__get_int(v, path, "score", -EO_AB_JSON_DURATION_MAX, EO_AB_JSON_DURATION_MAX,
                          &p->score, NULL, err)) != 0)
        return rc;
    return 0;
}

static int policy_from_json(const json_t *v, eo_autobalance_request *out, eo_round_error *err)
{
    static const char *const known[] = {
        "mode",          "enabled",        "last_minutes", "delay",     "cooldown",
        "size_rule",     "size_gap_min",   "strength_threshold",        "p_threshold",
        "allow_party",   "dead_only",      "strength_swaps",            "gap_tolerance",
        "odd_extra",     "work_limit",     NULL};
    static const char *const modes[] = {"normal", "sandbox", "tournament", "ffa", "arena", NULL};
    static const char *const rules[] = {"gap", "sectors_edge", NULL};
    const char *path = "policy";
    if (!json_is_object(v))
        return eo__fail(err, path, "expected an object");
    int rc = only_known(v, known, path, err);
    if (rc != 0)
        return rc;
    eo_ab_policy *p = &out->policy;
    int mode = (int)p->mode, rule = (int)p->size_rule;
    int64_t gmin = p->size_gap_min, work = (int64_t)p->work_limit;
    bool cool_null;
    if ((rc = get_choice(v, path, "mode", modes,
                         "\"normal\", \"sandbox\", \"tournament\", \"ffa\" or \"arena\"", &mode,
                         err)) != 0 ||
        (rc = get_choice(v, path, "size_rule", rules, "\"gap\" or \"sectors_edge\"", &rule,
                         err)) != 0 ||
        (rc = eo__get_bool(v, path, "enabled", &p->enabled, err)) != 0 ||
        (rc = eo__get_bool(v, path, "allow_party", &p->allow_party, err)) != 0 ||
        (rc = eo__get_bool(v, path, "dead_only", &p->dead_only, err)) != 0 ||
        (rc = eo__get_bool(v, path, "strength_swaps", &p->strength_swaps, err)) != 0 ||
        (rc = eo__get_bool(v, path, "odd_extra", &p->odd_extra, err)) != 0 ||
        (rc = eo__get_int(v, path, "last_minutes", 0, EO_AB_JSON_DURATION_MAX,
                          &p->last_minutes, NULL, err)) != 0 ||
        (rc = eo__get_int(v, path, "delay", 0, EO_AB_JSON_DURATION_MAX, &p->delay, NULL,
                          err)) != 0 ||
        (rc = eo__get_int(v, path, "cooldown", 0, EO_AB_JSON_DURATION_MAX, &p->cooldown,
                          &cool_null, err)) != 0 ||
        (rc = eo__get_int(v, path, "size_gap_min", 2, 2 * EO_AB_TEAM_MAX, &gmin, NULL,
                          err)) != 0 ||
        (rc = eo__get_num(v, path, "strength_threshold", 0, EO_AB_JSON_RATING_MAX,
                          &out->strength_threshold, err)) != 0 ||
        (rc = eo__get_num(v, path, "gap_tolerance", 0, EO_AB_JSON_RATING_MAX, &out->gap_tolerance,
                          err)) != 0 ||
        (rc = eo__get_num(v, path, "p_threshold", 0, 0.5, &p->p_threshold, err)) != 0 ||
        (rc = eo__get_int(v, path, "work_limit", 0, EO_AB_JSON_WORK_MAX, &work, NULL,
                          err)) != 0)
        return rc;
    if (cool_null)
        p->cooldown = INT64_MAX;
    p->mode = (eo_ab_mode)mode;
    p->size_rule = (eo_ab_size_rule)rule;
    p->size_gap_min = (int)gmin;
    p->work_limit = (uint64_t)work;
    return 0;
}

/* The players array into @p out (its arrays allocated for them). */
static int players_from_json(const json_t *players, eo_autobalance_request *out,
                             eo_round_error *err)
{
    if (players == NULL)
        return eo__fail(err, "players", "required field missing");
    if (!json_is_array(players))
        return eo__fail(err, "players", "expected an array of players");
    size_t n = json_array_size(players);
    if (n > EO_AB_PLAYERS_MAX)
        return eo__fail(err, "players", "too many players: %zu (at most %d)", n, EO_AB_PLAYERS_MAX);
    size_t cap = n > 0 ? n : 1;
    out->ids = calloc(cap, sizeof *out->ids);
    out->players = calloc(cap, sizeof *out->players);
    out->rating = calloc(cap, sizeof *out->rating);
    out->has_rating = calloc(cap, sizeof *out->has_rating);
    out->n = n;
    if (!out->ids || !out->players || !out->rating || !out->has_rating) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    const char *party_ids[EO_AB_PLAYERS_MAX];
    size_t nparty = 0;
    bool score_seen = false;
    int ka = 0, kb = 0;
    for (size_t i = 0; i < n; i++) {
        int rc = player_from_json(json_array_get(players, i), i, out, party_ids, &nparty,
                                  &score_seen, err);
        if (rc != 0)
            return rc;
        if (out->players[i].team == EO_AB_A)
            ka++;
        else
            kb++;
    }
    if (ka > EO_AB_TEAM_MAX || kb > EO_AB_TEAM_MAX)
        return eo__fail(err, "players", "more than %d players on team %s", EO_AB_TEAM_MAX,
                        ka > EO_AB_TEAM_MAX ? "A" : "B");
    out->state.players = out->players;
    out->state.n = n;
    out->state.has_scores = score_seen && n > 0;
    return 0;
}

/* The optional joiner {"id", "rating"}: not one of the players. */
static int joiner_from_json(const json_t *j, eo_autobalance_request *out, eo_round_error *err)
{
    static const char *const jknown[] = {"id", "rating", NULL};
    if (!json_is_object(j))
        return eo__fail(err, "joiner", "expected an object {\"id\", \"rating\"}");
    int rc = only_known(j, jknown, "joiner", err);
    if (rc != 0)
        return rc;
    const json_t *id = json_object_get(j, "id");
    if (id == NULL)
        return eo__fail(err, "joiner.id", "required field missing");
    if ((rc = eo__dup_id(id, "joiner.id", &out->joiner_id, err)) != 0)
        return rc;
    for (size_t i = 0; i < out->n; i++)
        if (strcmp(out->ids[i], out->joiner_id) == 0)
            return eo__fail(err, "joiner.id", "player \"%s\" is already at players[%zu]",
                            out->joiner_id, i);
    if ((rc = get_rating(j, "joiner", &out->joiner_rating, &out->joiner_has_rating, err)) != 0)
        return rc;
    out->has_joiner = true;
    return 0;
}

static int ab_decode(const json_t *obj, eo_autobalance_request *out, eo_round_error *err)
{
    static const char *const known[] = {"players", "now",    "time_left", "unbalanced_since",
                                        "policy",  "joiner", NULL};
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    int rc = only_known(obj, known, "", err);
    if (rc != 0)
        return rc;
    eo_autobalance_policy_default(&out->policy);
    out->state.time_left = EO_AB_TIME_UNKNOWN;
    out->state.unbalanced_since = EO_AB_NEVER;
    if ((rc = players_from_json(json_object_get(obj, "players"), out, err)) != 0)
        return rc;
    bool is_null;
    if ((rc = eo__get_int(obj, "", "now", 0, EO_ROUND_TIME_MAX, &out->state.now, NULL, err)) != 0 ||
        (rc = eo__get_int(obj, "", "time_left", 0, EO_AB_JSON_DURATION_MAX, &out->state.time_left,
                          &is_null, err)) != 0)
        return rc;
    if (is_null)
        out->state.time_left = EO_AB_TIME_UNKNOWN;
    out->has_now = json_object_get(obj, "now") != NULL;
    if ((rc = eo__get_int(obj, "", "unbalanced_since", 0, EO_ROUND_TIME_MAX,
                          &out->state.unbalanced_since, &is_null, err)) != 0)
        return rc;
    if (is_null)
        out->state.unbalanced_since = EO_AB_NEVER;
    const json_t *pol = json_object_get(obj, "policy");
    if (pol != NULL && (rc = policy_from_json(pol, out, err)) != 0)
        return rc;
    const json_t *j = json_object_get(obj, "joiner");
    return j != NULL ? joiner_from_json(j, out, err) : 0;
}

int eo_autobalance_request_from_json(const json_t *obj, eo_autobalance_request *out,
                                     eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    int rc = ab_decode(obj, out, err);
    if (rc != 0)
        eo_autobalance_request_free(out);
    return rc;
}

static json_t *prob(double p) { return isnan(p) ? json_null() : json_real(p); }

static const char *team_name(eo_ab_team t)
{
    return t == EO_AB_A ? "A" : t == EO_AB_B ? "B" : NULL;
}

json_t *eo_autobalance_to_json(const eo_autobalance_request *req, const eo_ab_result *res,
                               const eo_ab_placement *join)
{
    if (req == NULL || res == NULL || req->unit < 1)
        return NULL;
    int64_t u = req->unit;
    json_t *moves = json_array();
    for (size_t i = 0; moves != NULL && i < res->nmoves; i++) {
        const eo_ab_move *m = &res->moves[i];
        if (m->index >= req->n ||
            json_array_append_new(moves, json_pack("{s:s,s:s,s:s,s:s}", "id", req->ids[m->index],
                                                   "from", team_name(m->from), "to",
                                                   team_name(m->to), "reason",
                                                   eo_ab_reason_name(m->reason))) != 0) {
            json_decref(moves);
            return NULL;
        }
    }
    if (moves == NULL)
        return NULL;
    json_t *o = json_pack("{s:s,s:s,s:o,s:i,s:i,s:o,s:o,s:o,s:o,s:o,s:o,s:i,s:i,s:i,s:b,s:o}",
                          "rule", eo_ab_rule_name(res->rule), "action",
                          eo_ab_action_name(res->action), "act_at",
                          res->act_at == EO_AB_NEVER ? json_null() : json_integer(res->act_at),
                          "size_a", res->ka, "size_b", res->kb, "sum_a",
                          eo__json_scaled(res->sum_a, u), "sum_b", eo__json_scaled(res->sum_b, u),
                          "gap_before", eo__json_scaled(res->gap_before, u), "gap_after",
                          eo__json_scaled(res->gap_after, u), "p_before", prob(res->p_before),
                          "p_after", prob(res->p_after), "needed", res->needed, "short_by",
                          res->short_by, "eligible", res->eligible, "exact", res->exact, "moves",
                          moves);
    if (o != NULL && join != NULL) {
        const char *t = team_name(join->team);
        json_t *j = json_pack("{s:s?,s:o,s:s,s:b,s:o}", "id", req->joiner_id, "team",
                              t ? json_string(t) : json_null(), "action",
                              eo_ab_action_name(join->action), "by_size", join->by_size,
                              "gap_after", eo__json_scaled(join->gap_after, u));
        if (j == NULL || json_object_set_new(o, "joiner", j) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* ---- scramble triggers -------------------------------------------------------------------- */

/* An integer in [lo, INT32_MAX]; absent leaves *out alone. */
static int get_u32(const json_t *obj, const char *path, const char *name, int64_t lo,
                   uint32_t *out, eo_round_error *err)
{
    int64_t v = *out;
    int rc = eo__get_int(obj, path, name, lo, INT32_MAX, &v, NULL, err);
    *out = (uint32_t)v;
    return rc;
}

/* "name": [x, y] of two integers or two booleans. */
static int get_pair(const json_t *obj, const char *name, bool booleans, uint32_t *u, bool *b,
                    eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    if (!json_is_array(v) || json_array_size(v) != 2)
        return eo__fail(err, name, booleans ? "expected [A, B] of two booleans"
                                            : "expected [A, B] of two integers");
    for (size_t i = 0; i < 2; i++) {
        const json_t *x = json_array_get(v, i);
        char f[32];
        snprintf(f, sizeof f, "%s[%zu]", name, i);
        if (booleans) {
            if (!json_is_boolean(x))
                return eo__fail(err, f, "expected true or false");
            b[i] = json_is_true(x);
        } else {
            if (!json_is_integer(x) || json_integer_value(x) < 0 ||
                json_integer_value(x) > INT32_MAX)
                return eo__fail(err, f, "expected an integer in [0, %d]", INT32_MAX);
            u[i] = (uint32_t)json_integer_value(x);
        }
    }
    return 0;
}

static int get_named(const json_t *obj, const char *name,
                     int (*from)(const char *, size_t, int *), const char *expect, int *out,
                     eo_round_error *err)
{
    const json_t *v = json_object_get(obj, name);
    if (v == NULL)
        return 0;
    if (!json_is_string(v) || from(json_string_value(v), json_string_length(v), out) != 0)
        return eo__fail(err, name, "expected %s", expect);
    return 0;
}

static int mode_from(const char *s, size_t n, int *out)
{
    eo_trigger_mode m;
    int rc = eo_trigger_mode_from_name(s, n, &m);
    *out = (int)m;
    return rc;
}

static int event_from(const char *s, size_t n, int *out)
{
    eo_trigger_event e;
    int rc = eo_trigger_event_from_name(s, n, &e);
    *out = (int)e;
    return rc;
}

static int config_from_json(const json_t *v, eo_trigger_config *cfg, eo_round_error *err)
{
    static const char *const known[] = {"win_difference_on", "win_difference", "min_players",
                                        "map_end_window",    "arena_streak",   "ad_full_rounds",
                                        NULL};
    const char *path = "config";
    if (!json_is_object(v))
        return eo__fail(err, path, "expected an object");
    int rc = only_known(v, known, path, err);
    /* The thresholds are at least 1 (0 would fire always or never). */
    if (rc == 0)
        rc = eo__get_bool(v, path, "win_difference_on", &cfg->win_difference_on, err);
    if (rc == 0)
        rc = get_u32(v, path, "win_difference", 1, &cfg->win_difference, err);
    if (rc == 0)
        rc = get_u32(v, path, "min_players", 0, &cfg->min_players, err);
    if (rc == 0)
        rc = get_u32(v, path, "map_end_window", 0, &cfg->map_end_window, err);
    if (rc == 0)
        rc = get_u32(v, path, "arena_streak", 1, &cfg->arena_streak, err);
    if (rc == 0)
        rc = get_u32(v, path, "ad_full_rounds", 1, &cfg->ad_full_rounds, err);
    return rc;
}

static int trig_decode(const json_t *obj, eo_trigger_state *st, eo_trigger_config *cfg,
                       eo_round_error *err)
{
    static const char *const known[] = {
        "mode",       "event",       "tournament", "round",     "winner",
        "wins",       "streak_team", "streak",     "captured",  "attackers_timed_out",
        "full_rounds", "time_left",  "win_limit",  "max_rounds", "players",
        "last_scramble_round",       "config",     NULL};
    static const char *const winners[] = {"A", "B", "draw", NULL};
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object");
    int rc = only_known(obj, known, "", err);
    if (rc != 0)
        return rc;
    int mode = (int)st->mode, event = (int)st->event, winner = (int)st->winner;
    if ((rc = get_named(obj, "mode", mode_from,
                        "\"arena\", \"attack_defend\", \"payload\", \"koth\", \"cp5\", \"ctf\" or "
                        "\"other\"",
                        &mode, err)) != 0 ||
        (rc = get_named(obj, "event", event_from, "\"round_end\" or \"wfp_expired\"", &event,
                        err)) != 0 ||
        (rc = get_choice(obj, "", "winner", winners, "\"A\", \"B\" or \"draw\"", &winner,
                         err)) != 0)
        return rc;
    st->mode = (eo_trigger_mode)mode;
    st->event = (eo_trigger_event)event;
    st->winner = (eo_winner)winner;
    const json_t *stv = json_object_get(obj, "streak_team");
    if (stv != NULL && !json_is_null(stv)) {
        int t = 0;
        if ((rc = get_choice(obj, "", "streak_team", team_names, "\"A\", \"B\" or null", &t,
                             err)) != 0)
            return rc;
        st->streak_team = t == 0 ? EO_WIN_A : EO_WIN_B;
    }
    if ((rc = eo__get_bool(obj, "", "tournament", &st->tournament, err)) != 0 ||
        (rc = eo__get_bool(obj, "", "attackers_timed_out", &st->attackers_timed_out, err)) != 0 ||
        (rc = get_u32(obj, "", "round", 0, &st->round, err)) != 0 ||
        (rc = get_u32(obj, "", "streak", 0, &st->streak, err)) != 0 ||
        (rc = get_u32(obj, "", "full_rounds", 0, &st->full_rounds, err)) != 0 ||
        (rc = get_u32(obj, "", "win_limit", 0, &st->win_limit, err)) != 0 ||
        (rc = get_u32(obj, "", "max_rounds", 0, &st->max_rounds, err)) != 0 ||
        (rc = get_u32(obj, "", "players", 0, &st->players, err)) != 0 ||
        (rc = get_pair(obj, "wins", false, st->wins, NULL, err)) != 0 ||
        (rc = get_pair(obj, "captured", true, NULL, st->captured, err)) != 0)
        return rc;
    bool is_null;
    int64_t tl = st->time_left, last = st->last_scramble_round;
    if ((rc = eo__get_int(obj, "", "time_left", -1, INT32_MAX, &tl, &is_null, err)) != 0)
        return rc;
    st->time_left = is_null ? -1 : (int32_t)tl;
    if ((rc = eo__get_int(obj, "", "last_scramble_round", 0, INT32_MAX, &last, &is_null,
                          err)) != 0)
        return rc;
    st->last_scramble_round = is_null ? -1 : (int32_t)last;
    const json_t *c = json_object_get(obj, "config");
    if (c != NULL && (rc = config_from_json(c, cfg, err)) != 0)
        return rc;
    return 0;
}

int eo_trigger_request_from_json(const json_t *obj, eo_trigger_state *st, eo_trigger_config *cfg,
                                 eo_round_error *err)
{
    if (st == NULL || cfg == NULL)
        return eo__fail(err, "", "no output");
    eo_trigger_state_init(st);
    eo_trigger_config_init(cfg);
    int rc = trig_decode(obj, st, cfg, err);
    if (rc != 0) {
        eo_trigger_state_init(st);
        eo_trigger_config_init(cfg);
    }
    return rc;
}

json_t *eo_trigger_result_to_json(const eo_trigger_result *r)
{
    if (r == NULL)
        return NULL;
    const char *rule = eo_trigger_rule_name(r->rule), *guard = eo_trigger_rule_name(r->guard),
               *reason = eo_trigger_rule_name(r->reason);
    if (rule == NULL || guard == NULL || reason == NULL)
        return NULL;
    return json_pack("{s:b,s:s,s:s,s:s}", "scramble", r->scramble, "rule", rule, "guard", guard,
                     "reason", reason);
}
