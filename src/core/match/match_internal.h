/* Inside the matcher (src/core/match/): the state of one pass that pass.c (inputs, seeds,
 * result), ws.c (the work space's memory), order.c (the orders by age and by rating), gather.c
 * (walks outwards from a rating: groups around a seed, backfill fills) and teams.c (the teams
 * and the model's verdict) share. docs/MATCHMAKING.md, "The matcher". */
#ifndef EO_MATCH_INTERNAL_H
#define EO_MATCH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_match.h"

#define EO__MNONE ((uint32_t)-1)

/* A ticket's neighbours in rating order among those still waiting in one list (EO__MNONE:
 * none). */
typedef struct eo__mlink {
    uint32_t prev, next;
} eo__mlink;

/* A ticket's rating (the mean of its players' means) and its allowance beyond the window
 * (sigma_z, calibration): side by side, as the walks read them. */
typedef struct eo__mrat {
    double r, allow;
} eo__mrat;

/* A group being gathered: tickets by position, and what makes two teams of k from them. */
typedef struct eo__mgroup {
    uint32_t t[2 * EO_MATCH_TEAM_MAX];
    int count; /* tickets */
    int players;
    int parties;   /* players in tickets of two or more */
    uint64_t sums; /* bit x: some parties sum to x players (x <= k) */
    int k;
} eo__mgroup;

/* A latency limit kept for a wait. */
typedef struct eo__mlimit {
    bool ok;
    int64_t wait;
    double ms;
} eo__mlimit;
#define EO__MLIMITS 256

/* One pass. The tickets are kept in rating order (then age), so that walking outwards from a
 * seed reads neighbouring memory: "ticket t" inside the matcher is a position in that order,
 * and idx[t] leads back to the caller's array. Each array is apart from the others, so that a
 * loop reads only what it needs (the walks: rat, link, size; the seeds' loop: by_age, at,
 * taken). The arrays live in the work space (ws.c). */
typedef struct eo__mpass {
    const eo_match_config *c;
    const eo_model_ctx *model;
    const eo_match_ticket *in;
    size_t n;
    int64_t now;
    int nlists; /* 1, or 1 + nregions */
    /* per position */
    eo__mrat *rat;
    uint32_t *idx;   /* index in the caller's array */
    uint32_t *age;   /* rank in the age order: a < b is older */
    uint8_t *size;   /* players */
    uint8_t *taken;  /* placed by this pass (and in the lists until a walk unlinks it) */
    uint32_t *reach; /* bit r: reaches region r within its own latency limit */
    /* nlists lists of n links: list 0 holds every waiting ticket, list 1 + r those of them
     * that reach region r (a walk for a region reads no ticket that cannot play there) */
    eo__mlink *link;
    /* per rank in the age order */
    uint32_t *by_age; /* positions, oldest first */
    int64_t *at;      /* created_at */
    /* per index in the caller's array */
    float *lat;       /* nregions worst latencies over its players; < 0: unreachable */
    double allow_max; /* the largest allowance of any ticket */
    int64_t *fu;      /* each map's field in split units per team size, for groups without
                       * variance (INT64_MIN: not yet computed) */
    bool gaussian;    /* the model has a quality of its own (TrueSkill, Weng-Lin) */
    eo__mlimit limit[EO__MLIMITS]; /* by wait modulo EO__MLIMITS */
    bool step_ok;                  /* step holds the step after step_wait seconds */
    int64_t step_wait;
    eo_match_step step;
    /* What the pass placed, in growable arrays (eo__grow) that the work space keeps. */
    eo_match_entry *ent;
    size_t nent, cap_ent;
    eo_match *mt;
    size_t nmt, cap_mt;
    eo_match_fill *fl;
    size_t nfl, cap_fl;
    size_t placed, rejected;
} eo__mpass;

/* What a pass reads once from the caller's tickets, by the caller's index, and the scratch of
 * the orders. */
typedef struct eo__mread {
    eo__mrat *rat;
    uint64_t *key;
    int64_t *at; /* created_at */
    uint8_t *size;
    uint32_t *reach;
    uint32_t *by_r;       /* the caller's indices in rating order (then age) */
    uint32_t *by_age;     /* the caller's indices oldest first */
    uint32_t *pos_of;     /* each ticket's position in rating order */
    uint64_t *item, *tmp; /* the sorts' items (order.c) */
    uint32_t *coarse;     /* each ticket's coarse rating key */
    uint32_t *count;      /* EO__MSORT_COUNTS: the radix sorts' counts of every digit */
    /* the ranges of what was read, as it was read */
    int64_t at_lo, at_hi;
    uint64_t key_vary; /* the bits in which some keys differ from the first */
    double r_lo, r_hi;
} eo__mread;

/* Digits of 11 bits: three cover a sort key's 32. */
#define EO__MSORT_DIGIT 11
#define EO__MSORT_DIGITS 3
#define EO__MSORT_COUNTS (EO__MSORT_DIGITS << EO__MSORT_DIGIT)

/* The work space: one block for the arrays of a pass, and the last pass with the output
 * arrays it grew (kept for the next). */
struct eo_match_ws {
    void *blk;
    size_t cap;
    eo__mpass p;
    eo_match_result res;
};

/* Sets the arrays of @p p (for p->n tickets and p->c) and of @p rd in @p ws's block, grown
 * when needed. 0 or EO_ENOMEM. */
int eo__match_ws_arrays(eo_match_ws *ws, eo__mpass *p, eo__mread *rd);

/* Fills rd->by_age (and p->at) and rd->by_r from rd->key, rd->at and rd->rat: the orders by
 * age (created_at, key, index) and by rating (then age). */
void eo__match_orders(eo__mpass *p, eo__mread *rd);

/* A player is calibrating (seed 002, "Calibration"): few rated rounds, or a large deviation. */
static inline bool eo__match_calibrating(const eo_match_config *c, const eo_match_player *pl)
{
    return pl->rounds < c->calib_rounds || (c->calib_sigma > 0.0 && pl->sigma >= c->calib_sigma);
}

/* The caller's ticket at position @p t. */
static inline const eo_match_ticket *eo__match_in(const eo__mpass *p, uint32_t t)
{
    return &p->in[p->idx[t]];
}
/* Older first (created_at, then key, then index): the order of seeds and of ties. */
static inline bool eo__match_older(const eo__mpass *p, uint32_t a, uint32_t b)
{
    return p->age[a] < p->age[b];
}
/* Whether ticket @p t may play in @p region (-1: any) within its own latency limit. */
static inline bool eo__match_reaches(const eo__mpass *p, uint32_t t, int region)
{
    return region < 0 || p->c->nregions == 0 || (p->reach[t] >> region & 1u);
}
/* The schedule's step after @p wait seconds in @p out (eo_match_step_at(), the last one kept:
 * consecutive seeds mostly share a wait). */
void eo__match_step(eo__mpass *p, int64_t wait, eo_match_step *out);
/* Marks ticket @p t placed (the walks unlink it from the waiting lists when they meet it). */
void eo__match_take(eo__mpass *p, uint32_t t);

/* Gathers around seed @p s the tickets nearest its rating that make two teams of @p k, within
 * @p window, all reaching @p region (-1: any). True when g holds 2k players. */
bool eo__match_gather(eo__mpass *p, uint32_t s, int k, double window, int region, eo__mgroup *g);
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
