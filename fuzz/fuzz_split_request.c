/* The split request decoder on arbitrary bytes; a decoded request also goes through the answer
 * encoder with a made-up split of its players, so the encoder meets odd ids too. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL)
        return 0;
    eo_split_request req;
    eo_round_error err;
    if (eo_split_request_from_json(obj, &req, &err) == 0) {
        uint16_t idx[EO_SPLIT_EXACT_MAX];
        for (size_t i = 0; i < req.n; i++)
            idx[i] = (uint16_t)i;
        size_t k = req.n / 2;
        eo_split sp = {.k = (int)k, .a = idx, .b = idx + k, .bench = idx + 2 * k,
                       .nbench = req.n - 2 * k, .gap = 0,
                       .p_a = req.has_rating[0] ? 0.5 : NAN};
        eo_splits s = {.count = 1, .split = &sp};
        json_t *out = eo_splits_to_json(&s, (const char *const *)req.ids, 1);
        if (out == NULL)
            abort(); /* every decoded id is valid UTF-8, so encoding cannot fail */
        json_decref(out);
        eo_split_request_free(&req);
    }
    json_decref(obj);
    return 0;
}
