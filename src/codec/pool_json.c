/* A pool's model parameters as JSON: the admin request's partial object in, the complete object
 * (every value, so later default changes never alter a stored pool) out. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "evenodds/eo_codec.h"

typedef enum { P_INT, P_REAL } ptype;

static const struct {
    const char *name;
    ptype type;
    size_t off;
} synelo_fields[] = {
    {"r0", P_INT, offsetof(eo_synelo_params, r0)},
    {"r_min", P_INT, offsetof(eo_synelo_params, r_min)},
    {"r_grad_cap", P_INT, offsetof(eo_synelo_params, r_grad_cap)},
    {"t_shadow", P_INT, offsetof(eo_synelo_params, t_shadow)},
    {"t_stale_days", P_INT, offsetof(eo_synelo_params, t_stale_days)},
    {"k_min", P_REAL, offsetof(eo_synelo_params, k_min)},
    {"k_max", P_REAL, offsetof(eo_synelo_params, k_max)},
    {"theta", P_REAL, offsetof(eo_synelo_params, theta)},
    {"window", P_INT, offsetof(eo_synelo_params, window)},
    {"w_vel", P_REAL, offsetof(eo_synelo_params, w_vel)},
    {"w_wre", P_REAL, offsetof(eo_synelo_params, w_wre)},
    {"w_vol", P_REAL, offsetof(eo_synelo_params, w_vol)},
    {"sigma", P_REAL, offsetof(eo_synelo_params, sigma)},
};
#define NFIELDS (sizeof synelo_fields / sizeof synelo_fields[0])

static int fail(eo_round_error *err, const char *field, const char *msg)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return EO_EINVAL;
}

static int fail_param(eo_round_error *err, const char *name, const char *msg)
{
    char field[64];
    snprintf(field, sizeof field, "params.%s", name);
    return fail(err, field, msg);
}

/* Stores one JSON value into the field; checks its type and that an integer fits int32_t. */
static int set_field(eo_synelo_params *p, size_t i, const json_t *v, eo_round_error *err)
{
    char *base = (char *)p + synelo_fields[i].off;
    if (synelo_fields[i].type == P_INT) {
        if (!json_is_integer(v))
            return fail_param(err, synelo_fields[i].name, "expected an integer");
        json_int_t x = json_integer_value(v);
        if (x < INT32_MIN || x > INT32_MAX)
            return fail_param(err, synelo_fields[i].name, "out of range");
        int32_t y = (int32_t)x;
        memcpy(base, &y, sizeof y);
    } else {
        if (!json_is_number(v))
            return fail_param(err, synelo_fields[i].name, "expected a number");
        double y = json_number_value(v);
        memcpy(base, &y, sizeof y);
    }
    return 0;
}

static int find_field(const char *name)
{
    for (size_t i = 0; i < NFIELDS; i++)
        if (strcmp(synelo_fields[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* Θ from "kmax_team": F1's median rule. */
static int theta_of(const json_t *v, double *theta, eo_round_error *err)
{
    if (!json_is_integer(v))
        return fail_param(err, "kmax_team", "expected an integer");
    json_int_t k = json_integer_value(v);
    if (k < 1 || k > 128 || eo_synelo_theta_from_kmax((int)k, theta) != 0)
        return fail_param(err, "kmax_team", "must be an integer from 1 to 128");
    return 0;
}

int eo_pool_config_from_json(const char *model, const json_t *params, eo_pool_config *out,
                             eo_round_error *err)
{
    if (out == NULL)
        return EO_EINVAL;
    eo_pool_config cfg;
    eo_pool_config_default(&cfg);
    if (model == NULL || eo_model_parse(model, &cfg.model) != 0)
        return fail(err, "model", "unknown model (known: \"synelo\")");
    if (params != NULL && !json_is_object(params))
        return fail(err, "params", "expected an object");
    if (params != NULL && json_object_get(params, "theta") != NULL &&
        json_object_get(params, "kmax_team") != NULL)
        return fail(err, "params.kmax_team", "give either theta or kmax_team, not both");

    const char *key;
    const json_t *v;
    if (params != NULL) {
        json_object_foreach((json_t *)params, key, v) {
            int rc;
            if (strcmp(key, "kmax_team") == 0) {
                rc = theta_of(v, &cfg.synelo.theta, err);
            } else {
                int i = find_field(key);
                rc = i < 0 ? fail_param(err, key, "unknown parameter")
                           : set_field(&cfg.synelo, (size_t)i, v, err);
            }
            if (rc)
                return rc;
        }
    }
    if (eo_synelo_params_check(&cfg.synelo) == 0) {
        *out = cfg;
        return 0;
    }
    /* Name the culprit without repeating the model's rules: a value that fails on its own,
     * among the defaults, is out of range; otherwise the values disagree with each other. */
    json_object_foreach((json_t *)params, key, v) {
        eo_synelo_params alone;
        eo_synelo_params_default(&alone);
        int i = find_field(key);
        int rc = strcmp(key, "kmax_team") == 0 ? theta_of(v, &alone.theta, NULL)
                                               : set_field(&alone, (size_t)i, v, NULL);
        if (rc == 0 && eo_synelo_params_check(&alone) != 0)
            return fail_param(err, key, "out of range");
    }
    return fail(err, "params",
                "inconsistent values (need r_min <= r0 <= r_grad_cap and k_min <= k_max)");
}

json_t *eo_pool_config_to_json(const eo_pool_config *cfg)
{
    if (cfg == NULL || cfg->model != EO_MODEL_SYNELO)
        return NULL;
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    for (size_t i = 0; i < NFIELDS; i++) {
        const char *base = (const char *)&cfg->synelo + synelo_fields[i].off;
        json_t *v;
        if (synelo_fields[i].type == P_INT) {
            int32_t x;
            memcpy(&x, base, sizeof x);
            v = json_integer(x);
        } else {
            double x;
            memcpy(&x, base, sizeof x);
            v = json_real(x);
        }
        if (v == NULL || json_object_set_new(o, synelo_fields[i].name, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}
