/* The JSONL reader on arbitrary bytes through fmemopen(); the first byte picks skip_duplicates.
 * Errors are not fatal to the reader, so it goes on to the end as a tolerant caller might. */
#include <stdint.h>
#include <stdio.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    bool skip = data[0] & 1;
    FILE *f = fmemopen((void *)(data + 1), size - 1, "r");
    if (f == NULL)
        return 0;
    eo_jsonl_reader *rd;
    if (eo_jsonl_open(f, "fuzz.jsonl", skip, &rd) == 0) {
        char msg[256];
        for (;;) {
            eo_round r;
            json_t *obj;
            int rc = eo_jsonl_next(rd, &r, &obj, msg, sizeof msg);
            if (rc == 0 || rc == EO_EIO || rc == EO_ENOMEM)
                break;
            if (rc == 1) {
                json_decref(obj);
                eo_round_free(&r);
            }
        }
        eo_jsonl_close(rd);
    }
    fclose(f);
    return 0;
}
