/* Error formatting and id checks shared by the decoders. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "core/round_internal.h"

int eo__check_id(const json_t *v, const char *field, const char **s, size_t *len,
                 eo_round_error *err)
{
    if (!json_is_string(v))
        return eo__fail(err, field, "expected a string");
    *s = json_string_value(v);
    *len = json_string_length(v);
    /* Same wording as eo_round_validate(), so a message does not depend on which layer saw it. */
    if (*len == 0)
        return eo__fail(err, field, "must not be empty");
    int rc = eo_id_check(*s, *len);
    if (rc == EO_ELIMIT)
        return eo__fail(err, field, "longer than %d bytes", EO_ID_MAX);
    if (rc != 0)
        return eo__fail(err, field, "contains a control character or invalid UTF-8");
    return 0;
}

int eo__dup_id(const json_t *v, const char *field, char **out, eo_round_error *err)
{
    const char *s = NULL; /* set on success; initialised for gcc -O3's flow analysis */
    size_t len = 0;
    int rc = eo__check_id(v, field, &s, &len, err);
    if (rc != 0)
        return rc;
    char *copy = malloc(len + 1);
    if (copy == NULL) {
        eo__fail(err, "", "out of memory");
        return EO_ENOMEM;
    }
    memcpy(copy, s, len + 1);
    *out = copy;
    return 0;
}
