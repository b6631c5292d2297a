/* The one mapping from an engine failure (an EO_E… code and what the call was doing) to the
 * HTTP status and machine code of the service's error body (docs/SERVICE.md "Errors"). The
 * engine, the writer and the CLI's importer all report through it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "engine/engine_internal.h"

void eo_engine_status(int rc, eo_engine_op op, int *status, const char **code)
{
    switch (rc) {
    case EO_ENOTFOUND: *status = 404, *code = "unknown_pool"; return;
    case EO_ECONFLICT: *status = 409, *code = "round_conflict"; return;
    case EO_EEXIST:
        *status = 409, *code = op == EO_OP_SEASON ? "season_exists" : "pool_exists";
        return;
    case EO_ERANGE:
        /* A round the model cannot rate is well-formed: 422. An admin value out of the
         * model's range is a bad request. */
        if (op == EO_OP_ROUND) {
            *status = 422, *code = "out_of_range";
            return;
        }
        /* fall through */
    case EO_EINVAL:
    case EO_EPARSE:
    case EO_ELIMIT:
        *status = 400, *code = op == EO_OP_ROUND ? "invalid_round" : "invalid_request";
        return;
    case EO_EIO:
    case EO_EBUSY: *status = 500, *code = "storage"; return;
    default: *status = 500, *code = "internal"; return;
    }
}

int eo_engine_fail(eo_engine_error *err, eo_engine_op op, int rc, const char *field,
                   const char *fmt, ...)
{
    if (err == NULL)
        return rc;
    const char *code;
    memset(err, 0, sizeof *err);
    eo_engine_status(rc, op, &err->status, &code);
    snprintf(err->code, sizeof err->code, "%s", code);
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return rc;
}
