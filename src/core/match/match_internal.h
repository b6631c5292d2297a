/* Inside the matcher (src/core/match/): the state of one pass that pass.c (inputs, order,
 * result), gather.c (a group around a seed, backfill fills) and teams.c (the balancer and the
 * model's verdict) share. docs/MATCHMAKING.md, "The matcher". */
#ifndef EO_MATCH_INTERNAL_H
#define EO_MATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_match.h"

#define EO__MNONE ((uint32_t)-1)

/* A waiting ticket as the pass reads it. The pass keeps them in rating order (then age), so
 * that walking outwards from a seed reads neighbouring memory; "ticket t" inside the matcher
 * is a position in that order, and idx leads back to the caller's array. */
typedef struct eo__mtk {
    double r;       /* rating: the mean of its players' means */
    double allow;   /* its allowance beyond the window (sigma_z, calibration) */
    double lat_max; /* its latency limit at its own wait (ms); 0: none */
    int64_t wait;   /* now - created_at */
    int64_t created_at;
    uint64_t key;
    uint32_t idx;  /* index in the caller's array */
    uint32_t size; /* players */
} eo__mtk;

/* A ticket's neighbours in rating order among those still waiting (EO__MNONE: none). */
typedef struct eo__mlink {
    uint32_t prev, next;
} eo__mlink;

/* A group being gathered: tickets by index, and what makes two teams of k from them. */
typedef struct eo__mgroup {
    uint32_t t[2 * EO_MATCH_TEAM_MAX];
    int count; /* tickets */
    int players;
    int parties;   /* players in tickets of two or more */
    uint64_t sums; /* bit x: some parties sum to x players (x <= k) */
    int k;
} eo__mgroup;

/* One pass. */
typedef struct eo__mpass {
    const eo_match_config *c;
    const eo_model_ctx *model;
    const eo_match_ticket *in;
    size_t n;
    int64_t now;
    eo__mtk *tk;
    double *r;        /* per position: the rating (the mean of its players' means), and */
    eo__mlink *link;  /* the waiting list; apart from tk, so that the walks outwards from
                       * seeds taken in age order read memory that stays in cache */
    uint8_t *taken;   /* per position: placed by this pass (apart from tk: the seeds' loop
                       * reads it in age order, and 100,000 bytes stay in cache) */
    float *lat;       /* n * nregions worst latencies of each ticket; < 0: unreachable */
    uint32_t *by_r;   /* ticket indices by rating, then age */
    double allow_max; /* the largest allowance of any ticket */
    int64_t *fu;      /* each map's field in split units per team size, for groups without
                       * variance (INT64_MIN: not yet computed) */
    bool gaussian;    /* the model has a quality of its own (TrueSkill, Weng-Lin) */
    /* What the pass placed, in growable arrays (eo__grow). */
    eo_match_entry *ent;
    size_t nent, cap_ent;
    eo_match *mt;
    size_t nmt, cap_mt;
    eo_match_fill *fl;
    size_t nfl, cap_fl;
    size_t rejected;
} eo__mpass;

/* The caller's tickets (indices) oldest first (created_at, key, index) in @p by_age, and by
 * rating @p r (one per ticket), then age, in @p by_r. 0 or EO_ENOMEM. */
int eo__match_orders(const eo__mpass *p, const double *r, uint32_t *by_r, uint32_t *by_age);
/* A player is calibrating (seed 002, "Calibration"): few rated rounds, or a large deviation. */
static inline bool eo__match_calibrating(const eo_match_config *c, const eo_match_player *pl)
{
    return pl->rounds < c->calib_rounds || (c->calib_sigma > 0.0 && pl->sigma >= c->calib_sigma);
}

/* The caller's ticket at position @p t. */
static inline const eo_match_ticket *eo__match_in(const eo__mpass *p, uint32_t t)
{
    return &p->in[p->tk[t].idx];
}
/* Older first (created_at, then key, then index): the order of seeds and of ties. */
bool eo__match_older(const eo__mpass *p, uint32_t a, uint32_t b);
/* Whether ticket @p t may play in @p region (-1: any) within its own latency limit. */
bool eo__match_reaches(const eo__mpass *p, uint32_t t, int region);
/* Removes ticket @p t from the waiting list. */
void eo__match_take(eo__mpass *p, uint32_t t);

/* Gathers around seed @p s the tickets nearest its rating that make two teams of @p k, within
 * @p window, all reaching @p region (-1: any). True when g holds 2k players. */
bool eo__match_gather(const eo__mpass *p, uint32_t s, int k, double window, int region,
                      eo__mgroup *g);
/* Fills backfill request @p i: 0 or EO_ENOMEM. */
int eo__match_backfill(eo__mpass *p, const eo_match_backfill *b, size_t i);
/* Balances group @p g (its seed first) into two teams on the map drawn for its seed, judges it
 * by the step of its longest wait and, when it passes, records the match and takes its
 * tickets. 1: formed, 0: refused, or EO_ENOMEM / EO_EINTERNAL. */
int eo__match_form(eo__mpass *p, const eo__mgroup *g);

/* Teams of @p k for @p m tickets of values @p v (each >= 0: Σ of its players' split ratings
 * minus the group's least, so both teams' shifts cancel) and sizes @p size, with the least
 * |ΣA − ΣB + field| found within @p limit search nodes: @p side[i] gets ticket i's side.
 * 1: proven best, 0: the best found before the limit, -1: none found (none exists, or the
 * greedy pass dead-ended and the limit came first). */
int eo__match_sides(const int64_t *v, const int *size, int m, int k, int64_t field, uint64_t limit,
                    uint8_t *side);

#endif
