/* The median round length of a pool (see roundlen.h). */
#include "core/roundlen.h"

#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_common.h"

int eo__roundlen_init(eo__roundlen *rl)
{
    memset(rl, 0, sizeof *rl);
    rl->count = calloc(EO__ROUNDLEN_MAX + 1, sizeof *rl->count);
    rl->nonempty = calloc(EO__ROUNDLEN_WORDS, sizeof *rl->nonempty);
    if (rl->count == NULL || rl->nonempty == NULL) {
        eo__roundlen_free(rl);
        return EO_ENOMEM;
    }
    return 0;
}

void eo__roundlen_free(eo__roundlen *rl)
{
    free(rl->count);
    free(rl->nonempty);
    memset(rl, 0, sizeof *rl);
}

/* The next non-empty second after @p s (one exists: the caller knows a counted round lies
 * above). */
static uint32_t next_up(const eo__roundlen *rl, uint32_t s)
{
    uint32_t at = s + 1;
    uint64_t w = rl->nonempty[at / 64] & (~(uint64_t)0 << (at % 64));
    size_t i = at / 64;
    while (w == 0)
        w = rl->nonempty[++i];
    return (uint32_t)(i * 64 + (size_t)__builtin_ctzll(w));
}

/* The previous non-empty second before @p s (one exists). */
static uint32_t next_down(const eo__roundlen *rl, uint32_t s)
{
    uint32_t at = s - 1;
    uint64_t w = rl->nonempty[at / 64] & (~(uint64_t)0 >> (63 - at % 64));
    size_t i = at / 64;
    while (w == 0)
        w = rl->nonempty[--i];
    return (uint32_t)(i * 64 + 63 - (size_t)__builtin_clzll(w));
}

void eo__roundlen_add(eo__roundlen *rl, const eo_round *r)
{
    if (rl->count == NULL || r->started_at <= 0 || r->ended_at <= r->started_at)
        return;
    int64_t len = r->ended_at - r->started_at;
    uint32_t s = len > EO__ROUNDLEN_MAX ? EO__ROUNDLEN_MAX : (uint32_t)len;
    if (rl->count[s]++ == 0)
        rl->nonempty[s / 64] |= (uint64_t)1 << (s % 64);
    if (rl->n++ == 0) {
        rl->med = s;
        return;
    }
    if (s < rl->med)
        rl->below++;
    /* The lower median's position moved by at most one element: keep
     * below <= pos < below + count[med]. */
    uint64_t pos = (rl->n - 1) / 2;
    if (pos < rl->below) {
        rl->med = next_down(rl, rl->med);
        rl->below -= rl->count[rl->med];
    } else if (pos >= rl->below + rl->count[rl->med]) {
        rl->below += rl->count[rl->med];
        rl->med = next_up(rl, rl->med);
    }
}

double eo__roundlen_median(const eo__roundlen *rl)
{
    return rl->n > 0 ? (double)rl->med : 0.0;
}
