/* Glicko-2's step 5 for tests (internal). glicko2.c solves the players of a round two at a
 * time with a branch-free copy of the first Newton steps (vol_fast1/vol_fast2) and hands any
 * player that copy does not settle to the general iteration (vol_init/vol_step); these entry
 * points let tests/unit/test_glicko2.c check that both give the same bits. */
#ifndef EO_GLICKO2_INTERNAL_H
#define EO_GLICKO2_INTERNAL_H

#include <stddef.h>

#include "evenodds/eo_glicko2.h"

/* Step 5 exactly as eo_glicko2_rate() runs it for @p n players (1 <= n <= EO_PLAYERS_MAX;
 * the paired fast path, then the general iteration for the rest): σ'² into ex_out[i] and
 * ln σ'² into ln_out[i]. Reads only phi, vol, ln_vol2, s1 and s2 of each *in[i]. Returns how
 * many of the n players the fast path settled (the others went to the general iteration). */
size_t eo__glicko2_vol_solve(double tau, double eps, size_t n, eo_glicko2_player *const *in,
                             double *ex_out, double *ln_out);

/* The same for one player by the general iteration alone (vol_init, then vol_step until it
 * stops; σ kept when s1 is below the information threshold): the scalar reference. */
void eo__glicko2_vol_scalar(double tau, double eps, const eo_glicko2_player *y, double *ex_out,
                            double *ln_out);

#endif
