/* The instance registration decoder (POST /v1/instances) on arbitrary bytes: an accepted
 * registration's document reads back to the same registration. */
#include <string.h>

#include "mm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = mm_fuzz_parse(data, size);
    if (obj == NULL)
        return 0;
    static eo_instance_request r, back;
    eo_request_error err;
    if (eo_instance_request_from_json(obj, &r, &err) != 0) {
        mm_fuzz_refusal(&err);
    } else {
        if (r.nqueues < 1 || r.capacity < 1 || r.address[0] == '\0')
            abort();
        json_t *doc = eo_instance_request_to_json(&r);
        if (doc == NULL || eo_instance_request_from_json(doc, &back, &err) != 0 ||
            memcmp(&r, &back, sizeof r) != 0)
            abort();
        json_decref(doc);
    }
    json_decref(obj);
    return 0;
}
