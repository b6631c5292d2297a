/* The policies' passes of the matchmaking simulation (eo_mmsim.h): the matcher itself, and the
 * two baselines written as their users configure them (docs/MATCHMAKING.md, "The matcher in a
 * simulated day"). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mmsim_internal.h"

/* Drops the tickets marked in @p gone from the queue, keeping the order. */
static void compact(eo__msim *s, const bool *gone)
{
    size_t w = 0;
    for (size_t i = 0; i < s->nq; i++)
        if (!gone[i])
            s->queue[w++] = s->queue[i];
    s->nq = w;
}

/* The matcher: every waiting ticket with its players' current ratings and latencies. */
static int pass_ours(eo__msim *s, bool *gone)
{
    eo_match_ticket *t = malloc((s->nq ? s->nq : 1) * sizeof *t);
    eo_match_player *mp = malloc((s->nq ? s->nq : 1) * EO__GROUP_MAX * sizeof *mp);
    int rc = EO_ENOMEM;
    const eo_match_result *r = NULL;
    if (t != NULL && mp != NULL) {
        for (size_t i = 0; i < s->nq; i++) {
            const eo__mgrp *g = &s->queue[i];
            for (int j = 0; j < g->size; j++) {
                const eo__mplayer *p = &s->pl[g->member[j]];
                mp[i * EO__GROUP_MAX + (size_t)j] = (eo_match_player){
                    .mu = p->mu, .sigma = p->sigma, .rounds = p->rounds, .latency = p->lat};
            }
            t[i] = (eo_match_ticket){.key = g->key,
                                     .created_at = g->created,
                                     .players = &mp[i * EO__GROUP_MAX],
                                     .nplayers = (size_t)g->size};
        }
        rc = eo_match_pass_ws(s->ws, &s->c->match, eo_pool_model(s->pool), t, s->nq, NULL, 0,
                              s->now, &r, NULL);
    }
    for (size_t m = 0; rc == 0 && m < r->nmatches; m++) {
        const eo_match *x = &r->matches[m];
        size_t qi[2 * EO_MATCH_TEAM_MAX];
        uint8_t team[2 * EO_MATCH_TEAM_MAX];
        for (size_t e = 0; e < x->count; e++) {
            qi[e] = r->entries[x->first + e].ticket;
            team[e] = r->entries[x->first + e].team;
            gone[qi[e]] = true;
        }
        rc = eo__mmsim_form(s, qi, team, (int)x->count, x->region < 0 ? 0 : x->region);
    }
    free(t);
    free(mp);
    return rc;
}

/* The fixed rule set's window after @p wait seconds. */
static double fixed_window(const eo_mmsim_config *c, int64_t wait)
{
    int i = 0;
    while (i + 1 < c->fixed_steps && c->fixed_after[i + 1] <= wait)
        i++;
    return c->fixed_window[i];
}

static double rating(const eo__msim *s, const eo__mgrp *g)
{
    double mu = 0.0;
    for (int j = 0; j < g->size; j++)
        mu += s->pl[g->member[j]].mu;
    return mu / g->size;
}

/* From seed @p i, tickets in arrival order into two teams, each to the team with more free
 * seats that it fits (A on a tie). @p region < 0: no rule on skill or latency (FCFS). True when
 * both teams filled; qi and team then hold *n tickets. */
static bool fill(const eo__msim *s, const bool *gone, size_t i, int region, size_t *qi,
                 uint8_t *team, int *n)
{
    const eo_mmsim_config *c = s->c;
    int free_a = c->team_size, free_b = c->team_size;
    double r0 = rating(s, &s->queue[i]), w = fixed_window(c, s->now - s->queue[i].created);
    *n = 0;
    for (size_t j = i; j < s->nq && free_a + free_b > 0; j++) {
        const eo__mgrp *g = &s->queue[j];
        if (gone[j] ||
            (j > i && region >= 0 &&
             (fabs(rating(s, g) - r0) > w ||
              (c->fixed_latency > 0 && eo__mmsim_latency(s, g, region) > c->fixed_latency))))
            continue;
        bool a = free_a >= free_b ? free_a >= g->size : free_b < g->size;
        if ((a ? free_a : free_b) < g->size)
            continue;
        *(a ? &free_a : &free_b) -= g->size;
        qi[*n] = j;
        team[(*n)++] = a ? EO_BALANCE_A : EO_BALANCE_B;
    }
    return free_a + free_b == 0;
}

/* The region with the least worst latency for the tickets qi[0..n). */
static int best_region(const eo__msim *s, const size_t *qi, int n)
{
    int best = 0;
    double best_worst = INFINITY;
    for (int r = 0; r < s->c->regions; r++) {
        double worst = 0.0;
        for (int e = 0; e < n; e++) {
            double l = eo__mmsim_latency(s, &s->queue[qi[e]], r);
            worst = l > worst ? l : worst;
        }
        if (worst < best_worst)
            best = r, best_worst = worst;
    }
    return best;
}

/* FCFS (fixed false) and the fixed widening window (fixed true): oldest ticket first as the
 * seed; the fixed rule set tries the seed's regions within its latency limit, best first. */
static int pass_baseline(eo__msim *s, bool *gone, bool fixed)
{
    const eo_mmsim_config *c = s->c;
    for (size_t i = 0; i < s->nq; i++) {
        if (gone[i])
            continue;
        size_t qi[2 * EO_MATCH_TEAM_MAX];
        uint8_t team[2 * EO_MATCH_TEAM_MAX];
        int n = 0, region = -1;
        if (!fixed) {
            if (fill(s, gone, i, -1, qi, team, &n))
                region = best_region(s, qi, n);
        } else {
            int order[EO_MMSIM_REGIONS_MAX], nr = 0;
            for (int r = 0; r < c->regions; r++) {
                double l = eo__mmsim_latency(s, &s->queue[i], r);
                if (c->fixed_latency > 0 && l > c->fixed_latency)
                    continue;
                int j = nr++;
                for (; j > 0 && eo__mmsim_latency(s, &s->queue[i], order[j - 1]) > l; j--)
                    order[j] = order[j - 1];
                order[j] = r;
            }
            for (int k = 0; k < nr && region < 0; k++)
                if (fill(s, gone, i, order[k], qi, team, &n))
                    region = order[k];
        }
        if (region < 0)
            continue;
        for (int e = 0; e < n; e++)
            gone[qi[e]] = true;
        int rc = eo__mmsim_form(s, qi, team, n, region);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int eo__mmsim_pass(eo__msim *s)
{
    if (s->nq == 0)
        return 0;
    bool *gone = calloc(s->nq, sizeof *gone);
    if (gone == NULL)
        return EO_ENOMEM;
    int rc = s->policy == EO_MMSIM_OURS ? pass_ours(s, gone)
                                        : pass_baseline(s, gone, s->policy == EO_MMSIM_FIXED);
    compact(s, gone);
    free(gone);
    return rc;
}
