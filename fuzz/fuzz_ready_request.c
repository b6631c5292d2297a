/* The ready-check answer decoder (POST /v1/tickets/{ticket}/ready) on arbitrary bytes. */
#include <string.h>

#include "mm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = mm_fuzz_parse(data, size);
    if (obj == NULL)
        return 0;
    eo_ready_request r;
    eo_request_error err;
    if (eo_ready_request_from_json(obj, &r, &err) != 0)
        mm_fuzz_refusal(&err);
    else if (r.player[0] != '\0' && eo_id_check(r.player, strlen(r.player)) != 0)
        abort();
    json_decref(obj);
    return 0;
}
