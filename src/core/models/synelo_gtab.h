/* SynElo's Gaussian factor G(R) = exp(-(R - R0)^2 / (2 sigma^2)) tabulated for the integer
 * ratings near R0 (internal). Each entry is the very eo__exp() result the direct computation
 * gives, so rating through the table gives the same bits; it saves one exp per player update
 * (about a tenth of a replay's time). Ratings outside the table are computed directly. */
#ifndef EO_SYNELO_GTAB_H
#define EO_SYNELO_GTAB_H

#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_synelo.h"

/* Half-width of the table in rating points: 4097 entries (32 KiB) cover R0 +- 2048, where
 * nearly all players stay (G < 2e-6 beyond that with the default sigma = 400). */
#define EO__GTAB_HALF 2048
#define EO__GTAB_N (2 * EO__GTAB_HALF + 1)

typedef struct eo__gtab {
    int64_t lo;             /* rating of g[0]: R0 - EO__GTAB_HALF */
    double g[EO__GTAB_N];   /* g[i] = G(lo + i) */
} eo__gtab;

/* Fills @p t for @p p (checked parameters). */
void eo__gtab_init(eo__gtab *t, const eo_synelo_params *p);

/* eo_synelo_rate() with G taken from @p t (built for the same @p p; NULL computes every G
 * directly) and a field term @p field added to F1's logit in A's favour. With field 0 the same
 * contract and the same bits as eo_synelo_rate(). */
int eo__synelo_rate_tab(const eo_synelo_params *p, const eo__gtab *t, eo_synelo_player *const *a,
                        size_t na, eo_synelo_player *const *b, size_t nb, eo_winner winner,
                        double field, int64_t ended_at, eo_synelo_update *out);

#endif
