/* What the matchmaking fuzz targets share: the service's one request parser in front of each
 * decoder, as production runs it. */
#ifndef EO_MM_FUZZ_H
#define EO_MM_FUZZ_H

#include <stdint.h>
#include <stdlib.h>

#include "evenodds/eo_codec.h"

/* The body as the service parses it, or NULL when the parser refuses it (its error must then
 * be complete: a status and a code). */
static inline json_t *mm_fuzz_parse(const uint8_t *data, size_t size)
{
    json_t *obj = NULL;
    eo_request_error err;
    if (eo_request_parse((const char *)data, size, EO_REQUEST_BODY_MAX, EO_REQUEST_DEPTH_MAX, &obj,
                         &err) != 0) {
        if (err.status < 400 || err.code[0] == '\0')
            abort();
        return NULL;
    }
    return obj;
}

/* A refusal names a field or the whole body, with a 4xx and a message. */
static inline void mm_fuzz_refusal(const eo_request_error *err)
{
    if (err->status < 400 || err->status > 499 || err->code[0] == '\0' || err->message[0] == '\0')
        abort();
}

#endif
