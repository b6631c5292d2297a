/* The service's request body parser and the admin request decoders on arbitrary bytes; a pool
 * request's params go on through the pool configuration decoder (model parameters,
 * divisions, map bias) and back to JSON, as the engine does on creation. What the parser lets
 * through must keep its limits (nesting depth, an object at the top), whatever the text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Levels of objects and arrays in @p v, counting no further than @p limit + 1. */
static int levels(const json_t *v, int limit)
{
    if (!json_is_object(v) && !json_is_array(v))
        return 0;
    int deepest = 0;
    if (limit >= 0 && json_is_object(v)) {
        const char *key;
        json_t *x;
        json_object_foreach ((json_t *)v, key, x) {
            int d = levels(x, limit - 1);
            deepest = d > deepest ? d : deepest;
        }
    } else if (limit >= 0) {
        for (size_t i = 0; i < json_array_size(v); i++) {
            int d = levels(json_array_get(v, i), limit - 1);
            deepest = d > deepest ? d : deepest;
        }
    }
    return deepest + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj;
    eo_request_error err;
    if (eo_request_parse((const char *)data, size, EO_REQUEST_BODY_MAX, EO_REQUEST_DEPTH_MAX,
                         &obj, &err) != 0) {
        if (obj != NULL || err.code[0] == '\0' || (err.status != 400 && err.status != 413))
            abort(); /* a refusal is always said, and leaves nothing */
        return 0;
    }
    if (!json_is_object(obj) || levels(obj, EO_REQUEST_DEPTH_MAX) > EO_REQUEST_DEPTH_MAX)
        abort();
    eo_pool_request pool;
    if (eo_pool_request_from_json(obj, &pool, &err) == 0) {
        if (eo_pool_name_check(pool.name, strlen(pool.name), NULL) != 0)
            abort(); /* a decoded pool name keeps the documented rule */
        eo_pool_config cfg, back;
        eo_round_error rerr;
        if (eo_pool_config_from_json(pool.model, pool.params, &cfg, &rerr) == 0)
            json_decref(eo_pool_config_to_json(&cfg));
        /* A new pool (POST /v1/pools) as stored reads back as the same pool. */
        if (eo_pool_config_new_from_json(pool.model, pool.params, &cfg, &rerr) == 0) {
            json_t *stored = eo_pool_config_to_json(&cfg);
            if (stored == NULL || eo_pool_config_from_json(pool.model, stored, &back, &rerr) != 0)
                abort();
            json_t *again = eo_pool_config_to_json(&back);
            if (again == NULL || !json_equal(stored, again))
                abort();
            json_decref(stored);
            json_decref(again);
        }
    }
    double rating, sigma;
    (void)eo_rating_request_from_json(obj, &rating, &sigma, &err);
    eo_season_request season;
    (void)eo_season_request_from_json(obj, &season, &err);
    json_decref(obj);
    return 0;
}
