/* The service's request body parser and the admin request decoders on arbitrary bytes; a pool
 * request's params go on through the pool configuration decoder (model parameters,
 * divisions, map bias) and back to JSON, as the engine does on creation. */
#include <stdint.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj;
    eo_request_error err;
    if (eo_request_parse((const char *)data, size, EO_REQUEST_BODY_MAX, EO_REQUEST_DEPTH_MAX,
                         &obj, &err) != 0)
        return 0;
    eo_pool_request pool;
    if (eo_pool_request_from_json(obj, &pool, &err) == 0) {
        eo_pool_config cfg;
        eo_round_error rerr;
        if (eo_pool_config_from_json(pool.model, pool.params, &cfg, &rerr) == 0)
            json_decref(eo_pool_config_to_json(&cfg));
    }
    double rating, sigma;
    (void)eo_rating_request_from_json(obj, &rating, &sigma, &err);
    eo_season_request season;
    (void)eo_season_request_from_json(obj, &season, &err);
    json_decref(obj);
    return 0;
}
