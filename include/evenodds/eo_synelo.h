/**
 * @file eo_synelo.h
 * SynElo (seed 000_ac68b704568dcab2.txt, formulas F1-F6): team-sum logistic Elo with a dynamic
 * K from a convergence score over a rolling window, Gaussian K compression, integer ratings with
 * banker's rounding, a shadow period and a rating cap at graduation.
 *
 * Where the seed is silent the project's foundation issue settles it; docs/MODELS.md states every
 * rule. Pure and deterministic: all floating point goes through fixed operations (own exp,
 * IEEE sqrt, no FMA contraction), so a replay gives the same bits on every machine.
 *
 * Window precision: the expected P of each window entry is kept as a Q31 fixed-point integer
 * (round(P * 2^31)), so the window sums are exact integers maintained in O(1) per round.
 */
#ifndef EO_SYNELO_H
#define EO_SYNELO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Highest rating a player can hold (admin-set values and updates are clamped to it). */
#define EO_SYNELO_RATING_MAX 1000000

/** Largest window size W. */
#define EO_SYNELO_WINDOW_MAX 4096

/** Parameters of a SynElo pool (the seed's table; defaults from eo_synelo_params_default()). */
typedef struct eo_synelo_params {
    int32_t r0;          /**< starting rating R0 (1000) */
    int32_t r_min;       /**< rating floor R_min (100) */
    int32_t r_grad_cap;  /**< cap on the rating at shadow graduation (2200) */
    int32_t t_shadow;    /**< rounds before the rating is visible (50) */
    int32_t t_stale_days;/**< days without a round before a lookup says stale (30) */
    double k_min;        /**< minimum K (2) */
    double k_max;        /**< maximum K (72) */
    double theta;        /**< logistic scale Θ (2400, or from kmax_team); 0: each round's
                              own, from its larger team by F1's rule (eo_synelo_theta_of()) */
    int32_t window;      /**< window size W (500) */
    double w_vel;        /**< velocity weight (0.25) */
    double w_wre;        /**< win-rate-excess weight (0.25) */
    double w_vol;        /**< volatility weight (0.50) */
    double sigma;        /**< Gaussian compression width σ (400) */
} eo_synelo_params;

/** Fills @p p with the seed's parameter table (Θ = 2400). */
void eo_synelo_params_default(eo_synelo_params *p);

/**
 * Θ from the largest team size by F1's rule: 400 * floor(median{1..kmax_team}).
 * Returns 0, or EO_ERANGE when kmax_team is outside [1, 128].
 */
int eo_synelo_theta_from_kmax(int kmax_team, double *theta);

/**
 * Θ of a round of @p na against @p nb members: @c theta when it is > 0, else F1's rule on the
 * round's larger team (400 * floor(median{1..max(na, nb)})), so that a pool that does not set
 * Θ gets the one of the team sizes it sees.
 */
double eo_synelo_theta_of(const eo_synelo_params *p, size_t na, size_t nb);

/**
 * Checks every parameter (finite, positive where required (Θ may be 0: eo_synelo_theta_of()), r_min <= r0 <= r_grad_cap,
 * k_min <= k_max, 2 <= window <= EO_SYNELO_WINDOW_MAX). Returns 0 or EO_EINVAL.
 */
int eo_synelo_params_check(const eo_synelo_params *p);

/** One window entry (8 bytes: the window is the bulk of a pool's memory): the rating after a
 *  round, its expected P as Q31, and its outcome in halves. */
typedef struct eo_synelo_entry {
    uint32_t e_q31;      /**< round(P * 2^31), in [0, 2^31] */
    unsigned rating : 30; /**< rating after the round, in [1, EO_SYNELO_RATING_MAX] */
    unsigned o_half : 2;  /**< outcome * 2: 0 loss, 1 stalemate, 2 win */
} eo_synelo_entry;

/**
 * The rolling window (a ring) with its exact running sums. Storage grows on demand up to the
 * pool's W, so a player with few rounds holds little memory. Owned by its player.
 */
typedef struct eo_synelo_window {
    eo_synelo_entry *ring; /**< capacity entries, owned */
    uint32_t capacity;     /**< allocated entries */
    uint32_t len;          /**< entries held, <= W */
    uint32_t head;         /**< index of the oldest entry */
    int64_t sum_r;         /**< Σ rating */
    int64_t sum_r2;        /**< Σ rating² */
    int64_t sum_old;       /**< Σ rating over the first floor(len/2) entries */
    int64_t sum_new;       /**< Σ rating over the last floor(len/2) entries */
    int64_t sum_e;         /**< Σ e_q31 */
    int64_t sum_o;         /**< Σ o_half */
} eo_synelo_window;

/** A player's SynElo state. Zero-initialise, then eo_synelo_player_init(). */
typedef struct eo_synelo_player {
    int32_t rating;         /**< current rating */
    uint32_t rounds;        /**< rated rounds played */
    int64_t last_ended_at;  /**< Unix seconds of the last rated round's end, 0 if none */
    eo_synelo_window win;
} eo_synelo_player;

/** Sets a new player: R0, 0 rounds, empty window. Frees nothing: call on zeroed memory. */
void eo_synelo_player_init(eo_synelo_player *pl, const eo_synelo_params *p);

/** Releases the window storage and zeroes @p pl. NULL is a no-op. */
void eo_synelo_player_free(eo_synelo_player *pl);

/** F1: P(A wins) for round-start team sums (Θ = @c theta, which must be > 0 here). */
double eo_synelo_p_a(const eo_synelo_params *p, int64_t sum_a, int64_t sum_b);

/** F3: convergence score C in [0, 1] of the window as it stands (1 with fewer than 2 entries). */
double eo_synelo_convergence(const eo_synelo_params *p, const eo_synelo_window *w);

/** F4-F5: K for the player's next round, from the window before that round and the rating now. */
double eo_synelo_k(const eo_synelo_params *p, const eo_synelo_player *pl);

/** What one round did to one participant. */
typedef struct eo_synelo_update {
    int32_t before;   /**< rating at round start */
    int32_t after;    /**< rating after the round */
    double expected;  /**< P_i */
    double k;         /**< K_i used */
} eo_synelo_update;

/**
 * F2: rates one round. @p a and @p b are the participants (distinct players, na, nb >= 1,
 * na + nb <= EO_PLAYERS_MAX).
 * P comes from the round-start sums; every participant is updated from round-start state, its
 * window gains (after, P_i, S_i), its rounds count grows by one, and last_ended_at becomes
 * @p ended_at (kept as it was when @p ended_at is 0). @p out is NULL or receives na + nb
 * updates, A's then B's in the given order. A player must not appear twice (not checked here;
 * eo_pool_apply() checks it). Returns 0 or EO_EINVAL / EO_ENOMEM (then no player is changed).
 */
int eo_synelo_rate(const eo_synelo_params *p, eo_synelo_player *const *a, size_t na,
                   eo_synelo_player *const *b, size_t nb, eo_winner winner, int64_t ended_at,
                   eo_synelo_update *out);

/** True when the rating is shown to the player (rounds >= t_shadow). */
bool eo_synelo_visible(const eo_synelo_params *p, const eo_synelo_player *pl);

/** True when the last round ended more than t_stale_days before @p now (Unix seconds); false
 *  for a player with no rounds or no known round end. */
bool eo_synelo_stale(const eo_synelo_params *p, const eo_synelo_player *pl, int64_t now);

#ifdef __cplusplus
}
#endif
#endif
