/* The scramble trigger request decoder on arbitrary bytes; a decoded request is evaluated and,
 * when the record is consistent, its answer encoded. */
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
    eo_trigger_state st;
    eo_trigger_config cfg;
    eo_round_error err;
    if (eo_trigger_request_from_json(obj, &st, &cfg, &err) == 0) {
        eo_trigger_result r;
        int rc = eo_trigger_eval(&st, &cfg, &r);
        if (rc == 0) {
            json_t *out = eo_trigger_result_to_json(&r);
            if (out == NULL)
                abort();
            json_decref(out);
        } else if (rc != EO_EINVAL || r.field == NULL) {
            abort(); /* an inconsistent record names its field */
        }
    }
    json_decref(obj);
    return 0;
}
