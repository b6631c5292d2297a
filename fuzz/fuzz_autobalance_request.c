/* The autobalance request decoder on arbitrary bytes; a decoded request is answered against an
 * Elo model (missing ratings set to 1500) by eo_app_autobalance(), which resolves it and runs
 * eo_autobalance_check() and eo_autobalance_place_joiner(), and its answer encoded, so odd
 * policies and ids reach the core and the encoder too. */
#include <stdint.h>
#include <stdlib.h>

#include "evenodds/eo_app.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL)
        return 0;
    eo_autobalance_request req;
    eo_round_error err;
    if (eo_autobalance_request_from_json(obj, &req, &err) == 0) {
        eo_model m;
        eo_model_config cfg;
        eo_model_ctx *ctx = NULL;
        if (eo_model_parse("elo", &m) != 0 || eo_model_config_default(m, &cfg) != 0 ||
            eo_model_prepare(&cfg, &ctx, NULL) != 0)
            abort();
        for (size_t i = 0; i < req.n; i++)
            if (!req.has_rating[i]) {
                req.rating[i] = 1500;
                req.has_rating[i] = true;
            }
        if (req.has_joiner && !req.joiner_has_rating) {
            req.joiner_rating = 1500;
            req.joiner_has_rating = true;
        }
        /* every rating is set, and the decoder's ranges are inside the core's: a decoded
         * request never fails ("now" as decoded: 0 unless given) */
        eo_app_autobalance_answer ans;
        if (eo_app_autobalance(&req, ctx, 0, &ans, &err) != 0)
            abort();
        json_t *out = eo_autobalance_to_json(&req, &ans.res, req.has_joiner ? &ans.join : NULL);
        if (out == NULL)
            abort();
        json_decref(out);
        eo_autobalance_request_free(&req);
        eo_model_release(ctx);
    }
    json_decref(obj);
    return 0;
}
