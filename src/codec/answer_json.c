/* The service's answer documents as jansson trees (eo_codec.h "Service answers"): quality,
 * maps, a season's end, a refit's result, errors. The service dumps each compactly; the round
 * and split answers, the hot paths, are written as text by answer_text.c and split_text.c. */
#include <math.h>

#include "evenodds/eo_codec.h"

/* A real, or null when it has no value yet (NaN before the first round). */
static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

json_t *eo_quality_to_json(const char *pool, const eo_pool_quality *q)
{
    return json_pack("{s:s,s:I,s:I,s:I,s:o,s:o,s:o}", "pool", pool, "rounds",
                     (json_int_t)q->rounds, "players", (json_int_t)q->players,
                     "visible_players", (json_int_t)q->visible_players, "brier_all",
                     real_or_null(q->brier_all), "brier_recent", real_or_null(q->brier_recent),
                     "balance_recent", real_or_null(q->balance_recent));
}

/* Presence's estimates (docs/MODELS.md "Presence"): {"rounds","pi","applied","uncertainty",
 * "partial_share"}, π in logits for every model, θ null when the pool does not learn it; JSON
 * null when the pool's presence is off. */
static json_t *presence_json(const eo_pool_config *cfg, const eo_presence *e,
                             const eo_presence *th)
{
    if (e == NULL)
        return json_null();
    const eo_presence_config *c = &cfg->presence;
    double sd, pi = eo_presence_value(c, e, &sd);
    return json_pack("{s:I,s:f,s:f,s:o,s:o}", "rounds", (json_int_t)e->rounds, "pi", pi, "applied",
                     c->strength * pi, "uncertainty", real_or_null(sd), "partial_share",
                     th != NULL ? json_real(eo_presence_partial_share(c, th)) : json_null());
}

json_t *eo_maps_to_json(const char *name, const eo_pool_config *cfg, const eo_bias_stats *st,
                        size_t n, const eo_presence *presence, const eo_presence *partial)
{
    eo_model m = cfg->model.model;
    bool gaussian = m == EO_MODEL_TRUESKILL || m == EO_MODEL_WENGLIN;
    bool with_mode = cfg->bias.by == EO_BIAS_MAP_MODE;
    json_t *arr = json_array();
    for (size_t i = 0; arr != NULL && i < n; i++) {
        json_t *o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:o,s:f,s:f,s:o}", "map", st[i].map, "plays",
                              (json_int_t)st[i].plays, "a_wins", (json_int_t)st[i].a_wins,
                              "b_wins", (json_int_t)st[i].b_wins, "draws",
                              (json_int_t)st[i].draws, "a_win_rate",
                              real_or_null(st[i].a_win_rate), "bias", st[i].bias, "applied",
                              st[i].applied, "uncertainty", real_or_null(st[i].uncertainty));
        int bad = o == NULL;
        if (!bad && st[i].size != NULL)
            bad = json_object_set_new(o, "size", json_string(st[i].size)) != 0;
        if (!bad && with_mode)
            bad = json_object_set_new(o, "mode",
                                      st[i].mode ? json_string(st[i].mode) : json_null()) != 0;
        if (bad || json_array_append_new(arr, o) != 0) {
            json_decref(o);
            json_decref(arr);
            return NULL;
        }
    }
    if (arr == NULL)
        return NULL;
    return json_pack("{s:s,s:s,s:s,s:o,s:o}", "pool", name, "by", eo_bias_by_name(cfg->bias.by),
                     "units", gaussian ? "mu" : "logit", "maps", arr, "presence",
                     presence_json(cfg, presence, partial));
}

json_t *eo_season_answer_to_json(const char *season, int64_t players, int64_t at)
{
    return json_pack("{s:s,s:I,s:I}", "season", season, "players", (json_int_t)players, "at",
                     (json_int_t)at);
}

json_t *eo_refit_answer_to_json(size_t players, size_t records, int64_t upto)
{
    return json_pack("{s:I,s:I,s:I}", "players", (json_int_t)players, "records",
                     (json_int_t)records, "upto", (json_int_t)upto);
}

json_t *eo_error_to_json(const char *code, const char *message, const char *field)
{
    json_t *e = json_pack("{s:s,s:s}", "code", code, "message", message ? message : "");
    if (e != NULL && field != NULL && field[0] != '\0' &&
        json_object_set_new(e, "field", json_string(field)) != 0) {
        json_decref(e);
        return NULL;
    }
    return e != NULL ? json_pack("{s:o}", "error", e) : NULL;
}

json_t *eo_status_to_json(const char *status)
{
    return json_pack("{s:s}", "status", status);
}

json_t *eo_list_to_json(const char *key, json_t *items)
{
    return items != NULL ? json_pack("{s:o}", key, items) : NULL;
}

json_t *eo_pool_to_json(const char *name, const eo_pool_config *cfg)
{
    const char *model = eo_model_name(cfg->model.model);
    json_t *params = eo_pool_config_to_json(cfg);
    if (params == NULL)
        return NULL;
    return json_pack("{s:s,s:s,s:o}", "name", name, "model", model ? model : "unknown", "params",
                     params);
}

json_t *eo_season_to_json(const char *name, int64_t at, int64_t players)
{
    return json_pack("{s:s,s:I,s:I}", "name", name, "at", (json_int_t)at, "players",
                     (json_int_t)players);
}

json_t *eo_standings_to_json(const char *season, int64_t at, int64_t offset, json_t *rows)
{
    return rows != NULL ? json_pack("{s:s,s:I,s:I,s:o}", "season", season, "at", (json_int_t)at,
                                    "offset", (json_int_t)offset, "standings", rows)
                        : NULL;
}

json_t *eo_refit_started_to_json(int64_t job, const char *pool)
{
    return json_pack("{s:I,s:s,s:s}", "job", (json_int_t)job, "pool", pool, "state", "running");
}

/* Sets the members of a refit job's state on @p o; false when out of memory. */
static bool refit_job_fields(json_t *o, const eo_refit_job_view *v)
{
    int bad = 0;
    if (v->state == EO_REFIT_RUNNING) {
        bad |= json_object_set_new(o, "phase", json_string(v->phase));
        bad |= json_object_set_new(o, "sweep", json_integer(v->st.sweep));
        bad |= json_object_set_new(o, "max_sweeps", json_integer(v->max_sweeps));
        bad |= json_object_set_new(o, "change",
                                   v->st.sweep ? json_real(v->st.max_change) : json_null());
    } else if (v->state == EO_REFIT_DONE) {
        bad |= json_object_set_new(o, "sweeps", json_integer(v->st.sweep));
        bad |= json_object_set_new(o, "converged", json_boolean(v->st.converged));
        bad |= json_object_set_new(o, "change", json_real(v->st.max_change));
        bad |= json_object_set_new(o, "objective", json_real(v->st.objective));
        bad |= json_object_set_new(o, "players", json_integer((json_int_t)v->players));
        bad |= json_object_set_new(o, "rounds", json_integer((json_int_t)v->rounds));
        bad |= json_object_set_new(o, "upto", json_integer(v->upto));
        bad |= json_object_set_new(o, "records", json_integer((json_int_t)v->records));
    } else {
        bad |= json_object_set_new(o, "error", json_string(v->error));
    }
    bad |= json_object_set_new(o, "seconds", json_real(v->seconds));
    return bad == 0;
}

json_t *eo_refit_job_to_json(const eo_refit_job_view *v)
{
    static const char *const states[] = {"running", "done", "failed"};
    json_t *o = json_pack("{s:I,s:s,s:s}", "job", (json_int_t)v->id, "pool", v->pool, "state",
                          states[v->state]);
    if (o != NULL && !refit_job_fields(o, v)) {
        json_decref(o);
        return NULL;
    }
    return o;
}
