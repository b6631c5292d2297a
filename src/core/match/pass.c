/* One pass of the matcher (docs/MATCHMAKING.md, "The matcher"). */
#include <stdlib.h>

#include "core/round_internal.h"
#include "evenodds/eo_match.h"

int eo_match_pass(const eo_match_config *c, const eo_model_ctx *model,
                  const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                  size_t nbackfill, int64_t now, eo_match_result **out, eo_round_error *err)
{
    (void)c, (void)model, (void)tickets, (void)n, (void)backfill, (void)nbackfill, (void)now;
    if (out != NULL)
        *out = NULL;
    eo__fail(err, "pass", "not implemented yet");
    return EO_EINTERNAL;
}

void eo_match_result_free(eo_match_result *r)
{
    free(r);
}
