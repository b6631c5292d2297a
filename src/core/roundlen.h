/* The median length of a pool's rounds so far (internal): the hive model's r when the pool does
 * not fix `round_length` (docs/MODELS.md "NS2 hive").
 *
 * A histogram of whole seconds with a cursor on the lower median, moved one element per round;
 * a bitmap of the non-empty seconds finds the next one in at most EO__ROUNDLEN_WORDS word
 * tests. Fixed memory (~264 KiB), allocated once, so adding a round never fails. Rounds without
 * both times (or ending before they start) are not counted; rounds longer than
 * EO__ROUNDLEN_MAX seconds count as EO__ROUNDLEN_MAX. */
#ifndef EO_ROUNDLEN_H
#define EO_ROUNDLEN_H

#include <stdint.h>

#include "evenodds/eo_round.h"

#define EO__ROUNDLEN_MAX 65535 /* seconds (18 h 12 min) */
#define EO__ROUNDLEN_WORDS ((EO__ROUNDLEN_MAX + 64) / 64)

typedef struct eo__roundlen {
    uint32_t *count; /* [EO__ROUNDLEN_MAX + 1] rounds per length in seconds */
    uint64_t *nonempty; /* [EO__ROUNDLEN_WORDS] bit s set when count[s] > 0 */
    uint64_t n;      /* rounds counted */
    uint32_t med;    /* the lower median's second, when n > 0 */
    uint64_t below;  /* rounds counted shorter than med */
} eo__roundlen;

/* Allocates the histogram. Returns 0 or EO_ENOMEM (then *rl is empty and may be freed). */
int eo__roundlen_init(eo__roundlen *rl);
void eo__roundlen_free(eo__roundlen *rl);

/* Counts round @p r's length (ended_at - started_at) when both are known and ended_at >
 * started_at; otherwise does nothing. */
void eo__roundlen_add(eo__roundlen *rl, const eo_round *r);

/* The lower median of the lengths counted (element floor((n - 1) / 2) in ascending order), in
 * seconds; 0 when none is counted. */
double eo__roundlen_median(const eo__roundlen *rl);

#endif
