/* The documents of the dashboard's reads (eo_codec.h "The dashboard's reads"): board rows,
 * history points, rounds, health over time, calibration, and the page around a list. */
#include <math.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

/* json_object_set_new() takes v even when it fails, so a NULL v is just a failure. */
static int set(json_t *o, const char *key, json_t *v)
{
    return v == NULL ? -1 : json_object_set_new(o, key, v);
}

/* A real, or null when it has no value (NaN: no rounds). */
static json_t *real_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

static json_t *time_or_null(int64_t t)
{
    return t != 0 ? json_integer((json_int_t)t) : json_null();
}

json_t *eo_board_row_to_json(const eo_model_ctx *m, int64_t rank, const char *id, const char *name,
                             const eo_rating_view *v, const char *division)
{
    json_t *o = eo_rating_view_to_json(m, id, v, division, false);
    if (o == NULL)
        return NULL;
    int bad = set(o, "rank", json_integer((json_int_t)rank));
    bad |= set(o, "name", name != NULL ? json_string(name) : json_null());
    bad |= set(o, "last_played", time_or_null(v->last_ended_at));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* "display", "delta", the model's state as lookups name it, "rounds" and "visible" of @p p. */
static int member_state(json_t *o, const eo_model_ctx *m, const eo_read_member *p)
{
    bool integer = eo_model_integer_display(m);
    const eo_rating_view *v = &p->v;
    const char *mean = "rating", *dev = NULL;
    switch (eo_model_ctx_config(m)->model) {
    case EO_MODEL_TRUESKILL:
    case EO_MODEL_WENGLIN:
        mean = "mu";
        dev = "sigma";
        break;
    case EO_MODEL_GLICKO2: dev = "rd"; break;
    default: break;
    }
    int bad = set(o, "display", p->hidden ? json_null() : eo__json_number(v->display, integer));
    bad |= set(o, "delta", p->hidden ? json_null() : eo__json_number(p->delta, integer));
    bad |= set(o, mean, p->hidden ? json_null() : eo__json_number(v->mu, integer && !dev));
    if (dev != NULL)
        bad |= set(o, dev, p->hidden ? json_null() : json_real(v->sigma));
    bad |= set(o, "rounds", json_integer(v->rounds));
    bad |= set(o, "visible", json_boolean(v->visible));
    return bad;
}

json_t *eo_history_point_to_json(const eo_model_ctx *m, int64_t number, int64_t at,
                                 const eo_read_member *p)
{
    json_t *o = json_object();
    int bad = o == NULL || set(o, "number", json_integer((json_int_t)number)) != 0 ||
              set(o, "at", json_integer((json_int_t)at)) != 0 || member_state(o, m, p) != 0;
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A team's members as the round read shows them. */
static json_t *team_to_json(const eo_model_ctx *m, const eo_read_member *mem, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a != NULL && i < n; i++) {
        json_t *o = json_object();
        int bad = o == NULL || set(o, "id", json_string(mem[i].id)) != 0 ||
                  set(o, "name", mem[i].name ? json_string(mem[i].name) : json_null()) != 0 ||
                  set(o, "played", json_real(mem[i].weight)) != 0 ||
                  member_state(o, m, &mem[i]) != 0 || json_array_append_new(a, o) != 0;
        if (bad) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *string_or_null(const char *s)
{
    return s != NULL ? json_string(s) : json_null();
}

json_t *eo_round_read_to_json(const eo_model_ctx *m, const eo_round_read *r,
                              const eo_read_member *mem)
{
    static const char *const winner[3] = {"A", "B", "draw"};
    if (r == NULL || r->id == NULL || (unsigned)r->winner > EO_DRAW)
        return NULL;
    bool timed = r->started_at != 0 && r->ended_at >= r->started_at;
    json_t *o = json_object();
    int bad = o == NULL || set(o, "round", json_string(r->id)) != 0;
    if (!bad) {
        bad |= set(o, "number", json_integer((json_int_t)r->number));
        bad |= set(o, "at", json_integer((json_int_t)r->at));
        bad |= set(o, "started_at", time_or_null(r->started_at));
        bad |= set(o, "ended_at", time_or_null(r->ended_at));
        bad |= set(o, "duration", timed ? json_integer(r->ended_at - r->started_at) : json_null());
        bad |= set(o, "map", string_or_null(r->map));
        bad |= set(o, "mode", string_or_null(r->mode));
        bad |= set(o, "server", string_or_null(r->server));
        bad |= set(o, "winner", json_string(winner[r->winner]));
        bad |= set(o, "p_a", json_real(r->p_a));
        bad |= set(o, "A", team_to_json(m, mem, r->n[0]));
        bad |= set(o, "B", team_to_json(m, mem + r->n[0], r->n[1]));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_health_span_to_json(const eo_eval_sums *s, bool with_start, int64_t start)
{
    eo_eval_span f;
    eo_eval_span_of(s, &f);
    json_t *o = json_object();
    int bad = o == NULL;
    if (!bad && with_start)
        bad |= set(o, "start", json_integer((json_int_t)start));
    if (!bad) {
        bad |= set(o, "rounds", json_integer((json_int_t)f.rounds));
        bad |= set(o, "draws", json_integer((json_int_t)f.draws));
        bad |= set(o, "brier", real_or_null(f.all.brier));
        bad |= set(o, "logloss", real_or_null(f.all.logloss));
        bad |= set(o, "accuracy", real_or_null(f.all.accuracy));
        bad |= set(o, "margin", real_or_null(f.margin));
        bad |= set(o, "stomps", real_or_null(f.stomp_share));
        bad |= set(o, "rating_mean", real_or_null(f.rating_mean));
        bad |= set(o, "rating_sd", real_or_null(f.rating_sd));
        bad |= set(o, "delta_mean", real_or_null(f.delta_mean));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_calibration_to_json(const eo_eval_sums *bins)
{
    json_t *a = json_array();
    double ece = 0.0;
    uint64_t total = 0;
    for (int b = 0; a != NULL && b < EO_EVAL_CALIB_BINS; b++) {
        eo_eval_bin bin;
        eo_eval_bin_of_sums(b, &bins[b], &bin);
        if (bin.count > 0)
            ece += (double)bin.count * fabs(bin.mean_p - bin.win_rate);
        total += bin.count;
        json_t *o = json_pack("{s:f,s:f,s:I,s:o,s:o}", "from", bin.from, "to", bin.to, "count",
                              (json_int_t)bin.count, "mean_p", real_or_null(bin.mean_p), "win_rate",
                              real_or_null(bin.win_rate));
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a != NULL ? json_pack("{s:o,s:o}", "ece",
                                 real_or_null(total ? ece / (double)total : NAN), "bins", a)
                     : NULL;
}

json_t *eo_read_page_to_json(const char *pool, const char *key, json_t *items, int64_t offset,
                             int64_t limit, int64_t total, bool more)
{
    if (items == NULL)
        return NULL;
    return json_pack("{s:s,s:o,s:I,s:I,s:o,s:b}", "pool", pool, key, items, "offset",
                     (json_int_t)offset, "limit", (json_int_t)limit, "total",
                     total >= 0 ? json_integer((json_int_t)total) : json_null(), "more", more);
}

json_t *eo_player_read_to_json(const eo_model_ctx *m, const char *id, const char *name,
                               int64_t rank, const eo_rating_view *v, const char *division,
                               bool hidden)
{
    static const char *const values[] = {"display",    "rating", "mu",        "sigma",   "rd",
                                         "volatility", "offset", "commander", "division"};
    json_t *o = eo_board_row_to_json(m, rank, id, name, v, division);
    int bad = o == NULL;
    if (!bad && rank <= 0)
        bad |= set(o, "rank", json_null());
    for (size_t i = 0; !bad && hidden && i < sizeof values / sizeof values[0]; i++)
        if (json_object_get(o, values[i]) != NULL)
            bad |= set(o, values[i], json_null());
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_history_to_json(const char *pool, json_t *player, json_t *points)
{
    if (player == NULL || points == NULL) {
        json_decref(player);
        json_decref(points);
        return NULL;
    }
    return json_pack("{s:s,s:o,s:o}", "pool", pool, "player", player, "history", points);
}

json_t *eo_read_doc_to_json(const char *pool, json_t *doc)
{
    if (doc != NULL && set(doc, "pool", json_string(pool)) != 0) {
        json_decref(doc);
        return NULL;
    }
    return doc;
}

json_t *eo_health_to_json(const char *pool, const char *bucket, int64_t since, json_t *buckets,
                          json_t *total, json_t *calibration)
{
    if (buckets == NULL || total == NULL || calibration == NULL) {
        json_decref(buckets);
        json_decref(total);
        json_decref(calibration);
        return NULL;
    }
    return json_pack("{s:s,s:s,s:I,s:o,s:o,s:o}", "pool", pool, "bucket", bucket, "since",
                     (json_int_t)since, "buckets", buckets, "total", total, "calibration",
                     calibration);
}

json_t *eo_dashboard_pool_to_json(const char *name, const eo_pool_config *cfg, int64_t players,
                                  int64_t rounds, int64_t last_round)
{
    json_t *div = json_array();
    for (size_t i = 0; div != NULL && i < cfg->ndivisions; i++) {
        json_t *d =
            json_pack("{s:s,s:f}", "name", cfg->divisions[i].name, "from", cfg->divisions[i].from);
        if (d == NULL || json_array_append_new(div, d) != 0) {
            json_decref(div);
            div = NULL;
        }
    }
    const char *model = eo_model_name(cfg->model.model);
    if (div == NULL)
        return NULL;
    return json_pack("{s:s,s:s,s:I,s:I,s:o,s:o,s:s}", "name", name, "model",
                     model != NULL ? model : "unknown", "players", (json_int_t)players, "rounds",
                     (json_int_t)rounds, "last_round", time_or_null(last_round), "divisions", div,
                     "bias", eo_bias_by_name(cfg->bias.by));
}

json_t *eo_dashboard_to_json(const char *mode, json_t *pools)
{
    return pools != NULL ? json_pack("{s:s,s:o}", "dashboard", mode, "pools", pools) : NULL;
}
