/* The JSONL reader on arbitrary bytes through fmemopen(); the first byte picks skip_duplicates
 * (bit 0) and whether refit lines are read as entries (bit 1) or passed over. Errors are not
 * fatal to the reader, so it goes on to the end as a tolerant caller might. A refit record that
 * decodes must encode and decode again to the same values. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2)
        return 0;
    bool skip = data[0] & 1;
    bool refits = data[0] & 2;
    FILE *f = fmemopen((void *)(data + 1), size - 1, "r");
    if (f == NULL)
        return 0;
    eo_jsonl_reader *rd;
    if (eo_jsonl_open(f, "fuzz.jsonl", skip, &rd) == 0) {
        char msg[256];
        for (;;) {
            eo_round r;
            json_t *obj;
            eo_refit_record rf;
            int rc = eo_jsonl_next_entry(rd, &r, &obj, refits ? &rf : NULL, msg, sizeof msg);
            if (rc == 0 || rc == EO_EIO || rc == EO_ENOMEM)
                break;
            if (rc == EO_JSONL_REFIT) {
                char *text = NULL;
                eo_refit_record back;
                if (eo_refit_to_text(rf.upto, rf.v, rf.n, &text) != 0 ||
                    eo_refit_from_text(text, strlen(text), &back, NULL) != 0 ||
                    back.n != rf.n || back.upto != rf.upto)
                    abort();
                for (size_t i = 0; i < rf.n; i++)
                    if (strcmp(back.v[i].id, rf.v[i].id) != 0 ||
                        memcmp(&back.v[i].mean, &rf.v[i].mean, sizeof(double)) != 0 ||
                        memcmp(&back.v[i].sigma, &rf.v[i].sigma, sizeof(double)) != 0)
                        abort();
                free(text);
                eo_refit_free(&back);
                eo_refit_free(&rf);
                continue;
            }
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
