/* Tuning's documents (eo_codec.h): a pool's configuration as a file (what `evenodds tune`
 * prints, read by `--params FILE`), one prediction line of `eval --predictions-out` (read by
 * `evenodds compare`), the tune request of the service and the figures of a search. Files and
 * bodies are untrusted: every field is typed and bounded, and a field the format does not
 * have is an error. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

/* @p text parsed as one JSON object into *out. 0, or EO_EPARSE / EO_EINVAL with @p err. */
static int parse_object(const char *text, size_t len, json_t **out, eo_round_error *err)
{
    *out = NULL;
    if (text == NULL)
        return eo__fail(err, "", "no input");
    json_t *obj = NULL;
    int rc = eo__json_from_text(text, len, &obj, err);
    if (rc != 0)
        return rc;
    if (!json_is_object(obj)) {
        json_decref(obj);
        return eo__fail(err, "", "expected a JSON object");
    }
    *out = obj;
    return 0;
}

/* ---- a pool's configuration ---- */

int eo_pool_file_from_json(const json_t *obj, eo_pool_config *out, char *name, eo_round_error *err)
{
    static const char *const known[] = {"name", "model", "params", NULL};
    if (name != NULL)
        name[0] = '\0';
    if (out == NULL)
        return eo__fail(err, "", "no output");
    if (!json_is_object(obj))
        return eo__fail(err, "", "expected a JSON object {\"model\",\"params\"}");
    int rc = eo__only_known(obj, "", known, err);
    if (rc != 0)
        return rc;
    const json_t *nm = json_object_get(obj, "name");
    if (nm != NULL) {
        const char *s = NULL, *rule = NULL;
        size_t len = 0;
        if ((rc = eo__check_id(nm, "name", &s, &len, err)) != 0)
            return rc;
        if (eo_pool_name_check(s, len, &rule) != 0)
            return eo__fail(err, "name", "%s", rule);
        if (name != NULL)
            memcpy(name, s, len + 1);
    }
    const json_t *model = json_object_get(obj, "model");
    if (model != NULL && !json_is_string(model))
        return eo__fail(err, "model", "expected a string");
    const json_t *params = json_object_get(obj, "params");
    return eo_pool_config_new_from_json(model ? json_string_value(model) : "synelo", params, out, err);
}

int eo_pool_file_from_text(const char *text, size_t len, eo_pool_config *out, char *name,
                           eo_round_error *err)
{
    json_t *obj = NULL;
    int rc = parse_object(text, len, &obj, err);
    if (rc == 0)
        rc = eo_pool_file_from_json(obj, out, name, err);
    json_decref(obj);
    return rc;
}

/* ---- predictions ---- */

static const char *const outcome_name[] = {"A", "B", "draw"};

json_t *eo_prediction_to_json(const char *id, double p_a, eo_winner outcome)
{
    if (id == NULL || (unsigned)outcome > EO_DRAW)
        return NULL;
    return json_pack("{s:s,s:f,s:s}", "id", id, "p_a", p_a, "outcome", outcome_name[outcome]);
}

int eo_prediction_from_text(const char *text, size_t len, eo_prediction *out, eo_round_error *err)
{
    static const char *const known[] = {"id", "p_a", "outcome", NULL};
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    json_t *obj = NULL;
    int rc = parse_object(text, len, &obj, err);
    if (rc == 0)
        rc = eo__only_known(obj, "", known, err);
    const char *id = NULL;
    size_t idlen = 0;
    if (rc == 0)
        rc = eo__check_id(json_object_get(obj, "id"), "id", &id, &idlen, err);
    if (rc == 0)
        memcpy(out->id, id, idlen + 1);
    const json_t *p = json_object_get(obj, "p_a");
    if (rc == 0 &&
        !(json_is_number(p) && json_number_value(p) >= 0.0 && json_number_value(p) <= 1.0))
        rc = eo__fail(err, "p_a", "expected a number in [0, 1]");
    if (rc == 0)
        out->p_a = json_number_value(p);
    const char *o = json_string_value(json_object_get(obj, "outcome"));
    int w = -1;
    for (int k = 0; o != NULL && k <= EO_DRAW; k++)
        if (strcmp(o, outcome_name[k]) == 0)
            w = k;
    if (rc == 0 && w < 0)
        rc = eo__fail(err, "outcome", "expected \"A\", \"B\" or \"draw\"");
    if (rc == 0)
        out->outcome = (eo_winner)w;
    json_decref(obj);
    if (rc != 0)
        memset(out, 0, sizeof *out);
    return rc;
}

/* ---- the tune request ---- */

/* The request's fields with the round decoders' typed readers; err names the field. */
static int tune_fields(const json_t *obj, eo_tune_request *out, eo_round_error *err)
{
    static const char *const known[] = {"budget",  "metric",     "gate",  "eval_from",
                                        "burn_in", "max_rounds", "knobs", NULL};
    int rc = eo__only_known(obj, "", known, err);
    int64_t budget = out->budget, rounds = (int64_t)out->max_rounds;
    if (rc == 0)
        rc = eo__get_int(obj, "", "budget", 1, EO_TUNE_BUDGET_MAX, &budget, NULL, err);
    if (rc == 0)
        rc = eo__get_int(obj, "", "max_rounds", 10, EO_TUNE_ROUNDS_MAX, &rounds, NULL, err);
    if (rc == 0)
        rc = eo__get_num(obj, "", "gate", 0, 100, &out->gate, err);
    if (rc == 0)
        rc = eo__get_num(obj, "", "eval_from", 0.01, 0.99, &out->eval_from, err);
    if (rc == 0)
        rc = eo__get_num(obj, "", "burn_in", 0, 0.98, &out->burn_in, err);
    if (rc == 0 && !(out->burn_in < out->eval_from))
        rc = eo__fail(err, "burn_in", "must be below eval_from (%g)", out->eval_from);
    out->budget = (uint32_t)budget;
    out->max_rounds = (uint64_t)rounds;
    const json_t *m = json_object_get(obj, "metric");
    if (rc == 0 && m != NULL) {
        const char *s = json_string_value(m);
        if (s == NULL || (strcmp(s, "logloss") != 0 && strcmp(s, "brier") != 0))
            rc = eo__fail(err, "metric", "expected \"logloss\" or \"brier\"");
        else
            out->brier = s[0] == 'b';
    }
    const json_t *k = json_object_get(obj, "knobs");
    if (rc == 0 && k != NULL && (!json_is_array(k) || json_array_size(k) > EO_TUNE_KNOBS_MAX))
        rc = eo__fail(err, "knobs", "expected an array of at most %d parameter names",
                      EO_TUNE_KNOBS_MAX);
    for (size_t i = 0; rc == 0 && k != NULL && i < json_array_size(k); i++) {
        const json_t *v = json_array_get(k, i);
        size_t len = json_is_string(v) ? json_string_length(v) : 0;
        char f[32];
        snprintf(f, sizeof f, "knobs[%zu]", i);
        if (len == 0 || len >= sizeof out->knobs[0] || strlen(json_string_value(v)) != len)
            rc = eo__fail(err, f, "expected a parameter name of 1 to %zu bytes",
                          sizeof out->knobs[0] - 1);
        else
            memcpy(out->knobs[out->nknobs++], json_string_value(v), len + 1);
    }
    return rc;
}

int eo_tune_request_from_json(const json_t *obj, eo_tune_request *out, eo_request_error *err)
{
    if (out == NULL)
        return EO_EINVAL;
    memset(out, 0, sizeof *out);
    out->budget = 60;
    out->gate = 1.0;
    out->eval_from = 0.5;
    out->burn_in = 0.1;
    out->max_rounds = 1000000;
    if (obj == NULL)
        return 0;
    eo_round_error re;
    memset(&re, 0, sizeof re);
    int rc = json_is_object(obj) ? tune_fields(obj, out, &re)
                                 : eo__fail(&re, "", "expected a JSON object");
    if (rc == 0)
        return 0;
    if (err != NULL) {
        err->status = 400;
        snprintf(err->code, sizeof err->code, "invalid_request");
        snprintf(err->field, sizeof err->field, "%s", re.field);
        snprintf(err->message, sizeof err->message, "%s", re.message);
    }
    return EO_EINVAL;
}

/* ---- the figures of a search ---- */

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *metrics(const eo_metrics_result *m)
{
    return json_pack("{s:I,s:o,s:o,s:o}", "rounds", (json_int_t)m->count, "logloss",
                     real_or_null(m->logloss), "brier", real_or_null(m->brier), "accuracy",
                     real_or_null(m->accuracy));
}

static json_t *point(const eo_tune_result *r, const eo_tune_point *p)
{
    json_t *params = json_object();
    for (size_t i = 0; params != NULL && i < r->nknobs; i++) {
        double x = NAN;
        (void)eo_tune_knob_get(&p->cfg, r->knobs[i], &x);
        json_object_set_new(params, r->knobs[i], real_or_null(x));
    }
    json_t *held = metrics(&p->held);
    if (held != NULL) {
        json_object_set_new(held, "logloss_se", real_or_null(p->held_logloss_se));
        json_object_set_new(held, "brier_se", real_or_null(p->held_brier_se));
    }
    return json_pack("{s:o,s:o,s:o}", "params", params, "train", metrics(&p->train), "held_out",
                     held);
}

json_t *eo_tune_result_to_json(const eo_tune_result *r, bool brier)
{
    if (r == NULL)
        return NULL;
    json_t *knobs = json_array();
    for (size_t i = 0; knobs != NULL && i < r->nknobs; i++)
        json_array_append_new(knobs, json_string(r->knobs[i]));
    const eo_paired_result *h = &r->held;
    json_t *diff =
        json_pack("{s:I,s:o,s:o,s:o,s:o}", "rounds", (json_int_t)h->a.count, "logloss",
                  real_or_null(h->logloss_diff), "logloss_se", real_or_null(h->logloss_se), "brier",
                  real_or_null(h->brier_diff), "brier_se", real_or_null(h->brier_se));
    return json_pack("{s:o,s:I,s:s,s:o,s:o,s:o,s:o,s:s,s:o}", "knobs", knobs, "folds",
                     (json_int_t)r->folds, "metric", brier ? "brier" : "logloss", "start",
                     point(r, &r->start), "best", point(r, &r->best), "gain", real_or_null(r->gain),
                     "threshold", real_or_null(r->threshold), "chosen",
                     r->chose_best ? "best" : "start", "held_out_diff", diff);
}

json_t *eo_tune_job_to_json(const eo_tune_job_view *v)
{
    static const char *const states[] = {"running", "done", "failed"};
    if (v == NULL || (unsigned)v->state > EO_TUNE_FAILED)
        return NULL;
    json_t *o = json_pack("{s:I,s:s,s:s,s:b}", "job", (json_int_t)v->id, "pool", v->pool, "state",
                          states[v->state], "scheduled", v->scheduled);
    if (o == NULL)
        return NULL;
    if (v->state == EO_TUNE_RUNNING) {
        json_object_set_new(o, "phase", json_string(v->phase));
        json_object_set_new(o, "folds", json_integer(v->folds));
        json_object_set_new(o, "budget", json_integer(v->budget));
        json_object_set_new(o, "best", v->folds > 0 ? real_or_null(v->best) : json_null());
    } else if (v->state == EO_TUNE_DONE && v->result != NULL) {
        const eo_pool_config *c = eo_tune_chosen(v->result);
        json_object_set_new(o, "rounds", json_integer((json_int_t)v->rounds));
        json_object_set_new(o, "upto", json_integer(v->upto));
        json_object_set_new(o, "model", json_string(eo_model_name(c->model.model)));
        json_object_set_new(o, "params", eo_pool_config_to_json(c));
        json_object_set_new(o, "tune", eo_tune_result_to_json(v->result, v->brier));
        json_object_set_new(o, "applied", json_boolean(v->applied));
        json_object_set_new(o, "stale", json_boolean(v->stale));
    } else {
        json_object_set_new(o, "error", json_string(v->error ? v->error : ""));
    }
    json_object_set_new(o, "seconds", json_real(v->seconds));
    return o;
}
