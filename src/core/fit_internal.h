/* The whole-history refit's state, shared by its two solvers (internal to the core): fit.c
 * (rounds, players, bias keys, the MAP sweeps, results) and fit_smooth.c (the smoothing sweeps
 * of the Gaussian models). eo_fit.h is the contract; docs/MODELS.md, "Whole-history refit",
 * the formulas. */
#ifndef EO_FIT_INTERNAL_H
#define EO_FIT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/roundlen.h"
#include "core/strmap.h"
#include "evenodds/eo_fit.h"

#define NO_WEIGHTS UINT64_MAX

/* The key of π when the pool's presence is on (created first, so it is always 0). */
#define PRESENCE_KEY 0


typedef struct fit_round {
    uint64_t off;   /* first member in f->member */
    uint64_t woff;  /* first weight in f->weight, or NO_WEIGHTS (every weight 1) */
    double ca, cb, cf, d0;
    double lf;      /* presence on: the level field (eo_model_level_field(), model units) */
    double cp;      /* presence on: π's coefficient in d (0: equal presence, or off) */
    int32_t key;    /* bias key, or -1 */
    uint8_t na, nb;
    uint8_t y2;     /* 2·(A's score): 2 A won, 0 B won, 1 draw */
} fit_round;

typedef struct bias_part {
    char *map;         /* owned */
    char *mode;        /* owned, or NULL */
    const char *size;  /* static (eo_bias_size_bucket()), or NULL */
    double info_sum;   /* Σ over the key's rounds of one play's information at P = ½ */
    uint64_t plays;
} bias_part;

/* One appearance of a player in a round (with weight > 0), for the smoother: the messages of
 * the player's chain that meet there, in natural parameters (precision p, precision × mean t):
 * forward (the prior and every earlier round, with the drift) and backward (every later
 * round, with the drift; p = 0 when there is none), and the mean of the marginal there at the
 * last visit. The round's own message is not kept: it is a function of the cavities of the
 * round's members (f ⊗ b of each), recomputed from them at every visit. */
typedef struct fit_app {
    double fp, ft, bp, bt, mean;
} fit_app;

struct eo_fit {
    eo_pool_config pool;
    eo_fit_config cfg;
    eo_model_ctx *model;
    bool probit;       /* Φ link (TrueSkill, Weng-Lin), else logistic */
    bool unweighted;   /* SynElo rates every member in full */
    bool gamma;        /* the hive model's Gamma prior */
    double scale;      /* the model's logit per unit of team strength */
    double gk, gtheta; /* Gamma shape and scale */
    double mode;       /* the prior's mode: where a player without data sits */
    eo__roundlen lengths; /* the median round length, as the pool keeps it (hive weights) */

    eo__strmap *ids;
    size_t np, pcap;
    double *s, *g, *h, *g2, *h2, *trial, *step;
    uint32_t *rounds;

    /* Keys: with presence on, key PRESENCE_KEY is π (logits, docs/MODELS.md "Presence"), the
     * map keys follow it; else only the map keys. */
    eo__strmap *keys;
    size_t nk, kcap;
    bias_part *kp;
    double *b, *kg, *kh, *kg2, *kh2, *ktrial, *kstep;

    fit_round *r;
    size_t nr, rcap;
    uint32_t *member;
    size_t nm, mcap;
    double *weight;
    size_t nw, wcap;

    bool ready;        /* g, h and objective are those of the current values (MAP) */
    double objective, logloss;
    double eta;        /* the step factor to try first */
    uint32_t sweeps;

    /* The smoother (EO_FIT_SMOOTH; fit_smooth.c owns these). */
    eo_model_ctx *rate; /* the pool's model with τ = 0: one round's factor */
    double drift2;      /* τ² of the pool's model: the chain's variance per round played */
    void *states;       /* EO_PLAYERS_MAX player states of rate, one round's cavities */
    fit_app *app;       /* per entry of f->member (weight-0 entries unused) */
    size_t napp, appcap;
    double *cp, *ct;    /* per player: the chain's running message (natural parameters) */
    double *sd;         /* per player: deviation of the marginal at the last appearance */
    uint8_t *seen;      /* per player: met in the current backward pass */
    size_t snp, spcap;
    bool bias_fitted;   /* the map biases are the MAP fit's for the current rounds */
};

/* One MAP sweep (fit.c): the gradient pass when needed, the Newton steps and the line search.
 * Fills @p st (passes added to what it holds; sweep left as it is). */
void eo__fit_map_sweep(eo_fit *f, eo_fit_sweep_stats *st);

/* The smoother (fit_smooth.c). init: the factor's model and the state buffer (0 or
 * EO_ENOMEM); free: what init and the sweeps allocated; sweep: one forward and one backward
 * pass (first, when map keys exist and their biases are not fitted yet, the MAP fit that gives
 * them); 0, EO_ENOMEM or EO_ERANGE (a cavity outside the model's range). */
int eo__fit_smooth_init(eo_fit *f);
void eo__fit_smooth_free(eo_fit *f);
int eo__fit_smooth_sweep(eo_fit *f, eo_fit_sweep_stats *st);

/* The field term of round @p fr in model units beside the skills: its map key's bias, and with
 * presence on its level field and presence term (π's shift of d, cp·π, over cf: the field
 * that shifts d so). */
double eo__fit_field(const eo_fit *f, const fit_round *fr);

#endif
