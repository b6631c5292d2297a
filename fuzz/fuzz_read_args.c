/* The query arguments of the dashboard's reads (src/service/reads.c) on arbitrary text, as the
 * service gets them (still percent-encoded, up to a NUL): an integer within its bounds, and a
 * search text decoded ('+' a space) and held to the id rule. What either accepts must keep
 * its promise; what it refuses comes with a message. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/service.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *raw = malloc(size + 1);
    if (raw == NULL)
        return 0;
    memcpy(raw, data, size);
    raw[size] = '\0';
    char msg[160] = "";
    int64_t v = -1;
    if (eo__arg_int_parse(raw, 7, 1, 500, &v, msg, sizeof msg) == 0) {
        if (v < 1 || v > 500)
            abort();
    } else if (msg[0] == '\0') {
        abort();
    }
    char out[EO_ID_MAX + 1];
    bool has = false;
    msg[0] = '\0';
    if (eo__arg_text_parse(raw, out, &has, msg, sizeof msg) == 0) {
        if (!has || eo_id_check(out, strlen(out)) != 0)
            abort();
    } else if (msg[0] == '\0') {
        abort();
    }
    free(raw);
    return 0;
}
