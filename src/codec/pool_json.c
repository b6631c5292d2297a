/* A pool's model parameters as JSON, driven by the model's parameter table (eo_model.h): the
 * admin request's partial object in, the complete object (every value, so later default
 * changes never alter a stored pool) out. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

static int fail(eo_round_error *err, const char *field, const char *msg)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return EO_EINVAL;
}

/* Prefixes "params." to the parameter name a model function put in err->field. */
static int param_error(eo_round_error *err)
{
    if (err != NULL) {
        /* Parameter names are short (at most 31 bytes here), so the prefix always fits. */
        char name[32];
        size_t len = strnlen(err->field, sizeof name - 1);
        memcpy(name, err->field, len);
        name[len] = '\0';
        snprintf(err->field, sizeof err->field, "params.%s", name);
    }
    return EO_EINVAL;
}

/* "divisions": [{"name","from"}, ...] into cfg; err names the element and field. */
static int divisions_from_json(const json_t *v, eo_pool_config *cfg, eo_round_error *err)
{
    char field[64];
    if (!json_is_array(v))
        return fail(err, "params.divisions", "expected an array of {\"name\",\"from\"}");
    if (json_array_size(v) > EO_DIVISIONS_MAX)
        return fail(err, "params.divisions", "too many divisions (at most 16)");
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *d = json_array_get(v, i);
        const json_t *name = json_object_get(d, "name");
        const json_t *from = json_object_get(d, "from");
        snprintf(field, sizeof field, "params.divisions[%zu]", i);
        if (!json_is_object(d) || json_object_size(d) != 2)
            return fail(err, field, "expected {\"name\":…,\"from\":…} and nothing else");
        size_t len = json_is_string(name) ? json_string_length(name) : 0;
        const char *text = json_is_string(name) ? json_string_value(name) : "";
        snprintf(field, sizeof field, "params.divisions[%zu].name", i);
        if (len == 0 || len > EO_DIVISION_NAME_MAX || strlen(text) != len ||
            eo_id_check(text, len) != 0)
            return fail(err, field, "expected 1 to 31 bytes of UTF-8 without control characters");
        snprintf(field, sizeof field, "params.divisions[%zu].from", i);
        if (!json_is_number(from) || !isfinite(json_number_value(from)))
            return fail(err, field, "expected a number");
        if (i > 0 && !(json_number_value(from) > cfg->divisions[i - 1].from))
            return fail(err, field, "divisions must be in strictly ascending \"from\"");
        memcpy(cfg->divisions[i].name, text, len + 1);
        cfg->divisions[i].from = json_number_value(from);
    }
    cfg->ndivisions = json_array_size(v);
    return 0;
}

/* One of the pool's own parameters (bias, presence) into @p cfg; EO_ENOTFOUND when @p key
 * is neither's. */
static int pool_param(eo_pool_config *cfg, const char *key, const json_t *v, eo_round_error *err)
{
    const char *text = json_is_string(v) ? json_string_value(v) : "";
    if (eo_bias_param_name(key))
        return strcmp(key, "bias") == 0 ? eo_bias_config_set(&cfg->bias, key, text, err)
               : json_is_number(v)
                   ? eo_bias_config_set_number(&cfg->bias, key, json_number_value(v), err)
                   : fail(err, key, "expected a number");
    if (eo_presence_param_name(key))
        return strcmp(key, "presence") == 0 || strcmp(key, "partial") == 0
                   ? eo_presence_config_set(&cfg->presence, key, text, err)
               : json_is_number(v)
                   ? eo_presence_config_set_number(&cfg->presence, key, json_number_value(v), err)
                   : fail(err, key, "expected a number");
    return EO_ENOTFOUND;
}

/* The configuration of @p model with @p params over the base @p fresh (new pools) or the
 * defaults (stored pools). */
static int config_from_json(const char *model, const json_t *params, bool fresh,
                            eo_pool_config *out, eo_round_error *err)
{
    if (out == NULL)
        return EO_EINVAL;
    eo_pool_config cfg;
    eo_model m;
    if (model == NULL || eo_model_parse(model, &m) != 0) {
        char known[EO_MODEL_NAMES_MAX], msg[EO_MODEL_NAMES_MAX + 32];
        eo_model_names(known, sizeof known);
        snprintf(msg, sizeof msg, "unknown model (known: %s)", known);
        return fail(err, "model", msg);
    }
    eo_pool_config_default(&cfg);
    if (fresh)
        eo_pool_config_new(m, &cfg);
    else
        eo_model_config_default(m, &cfg.model);
    if (params != NULL && !json_is_object(params))
        return fail(err, "params", "expected an object");
    const char *key;
    const json_t *v;
    if (params != NULL) {
        json_object_foreach((json_t *)params, key, v) {
            if (strcmp(key, "divisions") == 0) {
                if (divisions_from_json(v, &cfg, err) != 0)
                    return EO_EINVAL;
                continue;
            }
            int prc = pool_param(&cfg, key, v, err);
            if (prc != EO_ENOTFOUND) {
                if (prc != 0)
                    return param_error(err);
                continue;
            }
            int i = eo_model_param_index(m, key);
            size_t n;
            const eo_param_spec *spec = eo_model_params(m, &n);
            int rc;
            if (i >= 0 && spec[i].choices != NULL && json_is_string(v))
                rc = eo_model_config_set(&cfg.model, key, json_string_value(v), err);
            else if (i >= 0 && spec[i].choices != NULL)
                rc = eo_model_config_set(&cfg.model, key, "", err); /* names the choices */
            else if (i >= 0 && spec[i].integer && !json_is_integer(v))
                rc = fail(err, key, "expected an integer");
            else if (i >= 0 && !json_is_number(v))
                rc = fail(err, key, "expected a number");
            else
                rc = eo_model_config_set_number(&cfg.model, key,
                                                i >= 0 ? json_number_value(v) : 0.0, err);
            if (rc != 0)
                return param_error(err);
        }
    }
    if (eo_model_config_check(&cfg.model, err) != 0 || eo_bias_config_check(&cfg.bias, err) != 0 ||
        eo_presence_config_check(&cfg.presence, err) != 0)
        return param_error(err);
    *out = cfg;
    return 0;
}

int eo_pool_config_from_json(const char *model, const json_t *params, eo_pool_config *out,
                             eo_round_error *err)
{
    return config_from_json(model, params, false, out, err);
}

int eo_pool_config_new_from_json(const char *model, const json_t *params, eo_pool_config *out,
                                 eo_round_error *err)
{
    return config_from_json(model, params, true, out, err);
}

/* The pool's own parameters into @p o. The bias's and presence's switches always, "off" too:
 * an absent one means off for a stored pool (created before it) but on over a new pool's
 * defaults (a --params file, a POST /v1/pools body), so only a written "off" reads back the
 * same both ways. Their other values only when on, as they always were. 0 or -1. */
static int own_params_to_json(const eo_pool_config *cfg, json_t *o)
{
    const eo_presence_config *p = &cfg->presence;
    if (json_object_set_new(o, "bias", json_string(eo_bias_by_name(cfg->bias.by))) != 0 ||
        json_object_set_new(o, "presence", json_string(p->on ? "on" : "off")) != 0)
        return -1;
    if (cfg->bias.by != EO_BIAS_OFF &&
        (json_object_set_new(o, "bias_prior", json_real(cfg->bias.prior)) != 0 ||
         json_object_set_new(o, "bias_strength", json_real(cfg->bias.strength)) != 0))
        return -1;
    if (p->on &&
        (json_object_set_new(o, "presence_prior", json_real(p->prior)) != 0 ||
         json_object_set_new(o, "presence_strength", json_real(p->strength)) != 0 ||
         json_object_set_new(o, "partial", json_string(p->partial ? "learn" : "time")) != 0 ||
         json_object_set_new(o, "partial_prior", json_real(p->partial_prior)) != 0))
        return -1;
    return 0;
}

json_t *eo_pool_config_to_json(const eo_pool_config *cfg)
{
    size_t n;
    const eo_param_spec *spec = cfg != NULL ? eo_model_params(cfg->model.model, &n) : NULL;
    if (spec == NULL)
        return NULL;
    json_t *o = json_object();
    for (size_t i = 0; o != NULL && i < n; i++) {
        double x = cfg->model.v[i];
        json_t *v = spec[i].choices != NULL ? json_string(spec[i].choices[(size_t)x])
                    : spec[i].integer       ? json_integer((json_int_t)x)
                                            : json_real(x);
        if (v == NULL || json_object_set_new(o, spec[i].name, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    if (o != NULL && own_params_to_json(cfg, o) != 0) {
        json_decref(o);
        return NULL;
    }
    if (o != NULL && cfg->ndivisions > 0) {
        json_t *arr = json_array();
        for (size_t i = 0; arr != NULL && i < cfg->ndivisions; i++) {
            if (json_array_append_new(arr, json_pack("{s:s,s:f}", "name", cfg->divisions[i].name,
                                                     "from", cfg->divisions[i].from)) != 0) {
                json_decref(arr);
                arr = NULL;
            }
        }
        if (arr == NULL || json_object_set_new(o, "divisions", arr) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

/* A display or state value: an integer for integer-display models. */
json_t *eo_rating_view_to_json(const eo_model_ctx *m, const char *id, const eo_rating_view *v,
                               const char *division, bool with_stale)
{
    if (m == NULL || id == NULL || v == NULL)
        return NULL;
    bool integer = eo_model_integer_display(m);
    json_t *o = json_object();
    int bad = o == NULL || json_object_set_new(o, "id", json_string(id)) != 0;
    switch (eo_model_ctx_config(m)->model) {
    case EO_MODEL_TRUESKILL:
    case EO_MODEL_WENGLIN:
        bad |= json_object_set_new(o, "mu", json_real(v->mu));
        bad |= json_object_set_new(o, "sigma", json_real(v->sigma));
        break;
    case EO_MODEL_GLICKO2:
        bad |= json_object_set_new(o, "rating", json_real(v->mu));
        bad |= json_object_set_new(o, "rd", json_real(v->sigma));
        bad |= json_object_set_new(o, "volatility", json_real(v->volatility));
        break;
    case EO_MODEL_HIVE: {
        bad |= json_object_set_new(o, "rating", eo__json_number(v->mu, integer));
        bad |= json_object_set_new(o, "offset", json_real(v->extra[0]));
        json_t *c = json_object();
        bad |= c == NULL || json_object_set_new(o, "commander", c) != 0;
        if (c != NULL) {
            bad |= json_object_set_new(c, "skill", json_real(v->extra[1]));
            bad |= json_object_set_new(c, "offset", json_real(v->extra[2]));
            bad |= json_object_set_new(c, "rounds", json_integer((json_int_t)v->extra[3]));
        }
        break;
    }
    default:
        bad |= json_object_set_new(o, "rating", eo__json_number(v->mu, integer));
        break;
    }
    bad |= json_object_set_new(o, "display", eo__json_number(v->display, integer));
    bad |= json_object_set_new(o, "division", division ? json_string(division) : json_null());
    bad |= json_object_set_new(o, "rounds", json_integer(v->rounds));
    bad |= json_object_set_new(o, "visible", json_boolean(v->visible));
    if (with_stale)
        bad |= json_object_set_new(o, "stale", json_boolean(v->stale));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}
