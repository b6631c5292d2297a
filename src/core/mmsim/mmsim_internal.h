/* Inside the matchmaking simulation (src/core/mmsim/): the world's state that world.c (the
 * timeline, arrivals, instances, outcomes, figures) and policy.c (the three policies' passes)
 * share. docs/MATCHMAKING.md, "The matcher in a simulated day". */
#ifndef EO_MMSIM_INTERNAL_H
#define EO_MMSIM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_mmsim.h"

#define EO__GROUP_MAX 3

typedef struct eo__mplayer {
    double skill;
    double mu, sigma; /* the model's view, kept from each rated match */
    uint32_t rounds;
    double lat[EO_MMSIM_REGIONS_MAX]; /* ms to each region (the first `regions`) */
    eo_player_handle h;
    bool known; /* h is set */
    bool online;
    uint32_t tickets, matches; /* counters that key this player's own random draws */
} eo__mplayer;

/* A group of players online together: a ticket while it waits. */
typedef struct eo__mgroup_s {
    uint64_t key; /* its ticket's serial */
    int size;
    uint32_t member[EO__GROUP_MAX];
    int64_t created;  /* its ticket's creation */
    int64_t deadline; /* it leaves the queue then */
} eo__mgrp;

/* A formed match: pending until an instance of its region is free, then running. */
typedef struct eo__mrun {
    int region;
    int ngroups;
    eo__mgrp g[2 * EO_MATCH_TEAM_MAX];
    uint8_t team[2 * EO_MATCH_TEAM_MAX]; /* EO_BALANCE_A or EO_BALANCE_B per group */
    bool running;
    int64_t end;
    bool a_wins;
} eo__mrun;

typedef struct eo__msim {
    const eo_mmsim_config *c;
    eo_mmsim_policy policy;
    eo_pool *pool;
    eo__mplayer *pl;
    eo__mgrp *queue; /* waiting tickets, oldest first */
    eo_match_ws *ws; /* the matcher's memory, kept from pass to pass */
    size_t nq, cap_q;
    eo__mrun *runs; /* pending (in order formed) and running */
    size_t nrun, cap_run;
    int busy[EO_MMSIM_REGIONS_MAX];
    uint64_t serial;  /* tickets created */
    uint64_t mserial; /* matches started */
    int64_t now, measure_from;
    /* figures */
    double *waits;
    size_t nwaits, cap_waits;
    eo_mmsim_report rep;
    double sum_dev, sum_spread, sum_true_spread, sum_brier, busy_seconds, online_seconds;
    uint64_t party_tickets;
} eo__msim;

/* A uniform in [0, 1) from the seed, a stream and two counters: every draw of the world is one
 * such value, so the draws do not depend on the order things happen in. */
double eo__mmsim_unif(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b);

/* The worst latency of group @p g to region @p r (ms). */
double eo__mmsim_latency(const eo__msim *s, const eo__mgrp *g, int r);

/* Records a formed match of @p n groups (queue indices @p qi, teams @p team) in @p region;
 * the caller removes them from the queue afterwards. 0 or EO_ENOMEM. */
int eo__mmsim_form(eo__msim *s, const size_t *qi, const uint8_t *team, int n, int region);

/* One pass of the simulation's policy over the queue: forms matches (eo__mmsim_form()) and
 * drops their tickets from the queue. 0, EO_ENOMEM, or the matcher's error. */
int eo__mmsim_pass(eo__msim *s);

#endif
