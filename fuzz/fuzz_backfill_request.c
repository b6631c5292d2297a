/* The backfill request decoder (POST /v1/sessions/{session}/backfill) on arbitrary bytes. */
#include <math.h>

#include "mm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = mm_fuzz_parse(data, size);
    if (obj == NULL)
        return 0;
    eo_backfill_request r;
    eo_request_error err;
    if (eo_backfill_request_from_json(obj, &r, &err) != 0)
        mm_fuzz_refusal(&err);
    else if ((r.team != EO_BALANCE_A && r.team != EO_BALANCE_B) || r.slots < 1 ||
             r.slots > EO_MATCH_TEAM_MAX || !isfinite(r.rating))
        abort();
    json_decref(obj);
    return 0;
}
