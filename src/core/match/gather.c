/* Groups around a seed and backfill fills: the tickets nearest a rating, walked outwards in
 * rating order among those still waiting (docs/MATCHMAKING.md, "The matcher"). */
#include <math.h>

#include "core/buf.h"
#include "match_internal.h"

/* Whether a ticket of @p size players may join @p g and still leave two teams of k possible:
 * with P players in parties, some parties must sum to x with P - k <= x <= k (solos fill the
 * rest of both teams). Sums above k never help, so the bit set keeps bits 0..k (k <= 32). */
static bool party_fits(const eo__mgroup *g, uint32_t size, uint64_t *sums)
{
    int k = g->k;
    if (size < 2) {
        *sums = g->sums;
        return true;
    }
    uint64_t mask = (UINT64_C(1) << (k + 1)) - 1;
    uint64_t s = (g->sums | (g->sums << size)) & mask;
    int lo = g->parties + (int)size - k;
    if (lo < 0)
        lo = 0;
    if (lo > k || (s >> lo) == 0)
        return false;
    *sums = s;
    return true;
}

static bool add(const eo__mpass *p, eo__mgroup *g, uint32_t t)
{
    uint32_t size = p->tk[t].size;
    uint64_t sums;
    if (g->players + (int)size > 2 * g->k || !party_fits(g, size, &sums))
        return false;
    g->t[g->count++] = t;
    g->players += (int)size;
    if (size >= 2)
        g->parties += (int)size;
    g->sums = sums;
    return true;
}

/* The nearer of two candidates to rating @p r (EO__MNONE when neither), older on a tie. */
static uint32_t nearer(const eo__mpass *p, double r, uint32_t l, uint32_t h)
{
    if (l == EO__MNONE || h == EO__MNONE)
        return l == EO__MNONE ? h : l;
    double dl = r - p->r[l], dh = p->r[h] - r;
    if (dl != dh)
        return dl < dh ? l : h;
    return eo__match_older(p, h, l) ? h : l;
}

/* Tickets a group may try after the greedy walk failed (parties that did not fit), and the
 * steps of the search among them. */
#define CAND_MAX (4 * EO_MATCH_TEAM_MAX + 16)
#define SEARCH_STEPS 512

typedef struct search {
    const uint32_t *c;
    const int *rest; /* rest[i]: players in c[i..] */
    int n, steps;
} search;

/* The first group, in the candidates' order, that fills two teams: c[i] in before c[i] out. */
static bool complete(const eo__mpass *p, search *x, int i, eo__mgroup *g)
{
    if (g->players == 2 * g->k)
        return true;
    if (i == x->n || g->players + x->rest[i] < 2 * g->k || --x->steps < 0)
        return false;
    int count = g->count, players = g->players, parties = g->parties;
    uint64_t sums = g->sums;
    if (add(p, g, x->c[i]) && complete(p, x, i + 1, g))
        return true;
    g->count = count, g->players = players, g->parties = parties, g->sums = sums;
    return complete(p, x, i + 1, g);
}

/* A group of the seed alone. */
static bool start(const eo__mpass *p, eo__mgroup *g, uint32_t s, int k)
{
    g->count = g->players = g->parties = 0;
    g->sums = 1;
    g->k = k;
    return add(p, g, s);
}

bool eo__match_gather(const eo__mpass *p, uint32_t s, int k, double window, int region,
                      eo__mgroup *g)
{
    if (!start(p, g, s, k))
        return false;
    double r0 = p->r[s], reach = window + p->tk[s].allow;
    uint32_t lo = p->link[s].prev, hi = p->link[s].next;
    uint32_t cand[CAND_MAX];
    int ncand = 0;
    bool missed = false;
    while (g->players < 2 * k) {
        uint32_t c = nearer(p, r0, lo, hi);
        if (c == EO__MNONE)
            break;
        double d = fabs(p->r[c] - r0);
        /* c is the nearest on both sides: nobody farther can be within reach. */
        if (d > reach + p->allow_max)
            break;
        if (c == lo)
            lo = p->link[c].prev;
        else
            hi = p->link[c].next;
        if (d > reach + p->tk[c].allow || !eo__match_reaches(p, c, region))
            continue;
        if (ncand < CAND_MAX)
            cand[ncand++] = c;
        missed |= !add(p, g, c);
    }
    if (g->players == 2 * k || !missed)
        return g->players == 2 * k;
    /* The greedy walk kept a party that left no way to two teams of k: search the same
     * candidates, nearest first, for the first combination that fits (bounded). */
    int rest[CAND_MAX + 1];
    rest[ncand] = 0;
    for (int i = ncand - 1; i >= 0; i--)
        rest[i] = rest[i + 1] + (int)p->tk[cand[i]].size;
    (void)start(p, g, s, k);
    search x = {.c = cand, .rest = rest, .n = ncand, .steps = SEARCH_STEPS};
    return complete(p, &x, 0, g);
}

/* The waiting tickets nearest @p r on either side: positions in rating order skipping those
 * already placed (only backfill has placed any when this runs, so the skips are few). */
static void around(const eo__mpass *p, double r, uint32_t *lo, uint32_t *hi)
{
    size_t a = 0, b = p->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (p->r[m] < r)
            a = m + 1;
        else
            b = m;
    }
    *lo = *hi = EO__MNONE;
    for (size_t i = a; i < p->n && *hi == EO__MNONE; i++)
        if (!p->taken[i])
            *hi = (uint32_t)i;
    for (size_t i = a; i > 0 && *lo == EO__MNONE; i--)
        if (!p->taken[i - 1])
            *lo = (uint32_t)(i - 1);
}

static int push_entry(eo__mpass *p, uint32_t t, uint8_t team)
{
    eo_match_entry *e = eo__grow(p->ent, &p->cap_ent, p->nent + 1, sizeof *e);
    if (e == NULL)
        return EO_ENOMEM;
    p->ent = e;
    p->ent[p->nent++] = (eo_match_entry){.ticket = p->tk[t].idx, .team = team};
    return 0;
}

int eo__match_backfill(eo__mpass *p, const eo_match_backfill *b, size_t i)
{
    eo_match_step st;
    eo_match_step_at(p->c, p->now - b->created_at, &st);
    size_t first = p->nent;
    int left = b->slots;
    uint32_t lo, hi;
    around(p, b->rating, &lo, &hi);
    while (left > 0) {
        uint32_t c = nearer(p, b->rating, lo, hi);
        if (c == EO__MNONE)
            break;
        double d = fabs(p->r[c] - b->rating);
        if (d > st.window + p->allow_max)
            break;
        if (c == lo)
            lo = p->link[c].prev;
        else
            hi = p->link[c].next;
        if (d > st.window + p->tk[c].allow || (int)p->tk[c].size > left ||
            !eo__match_reaches(p, c, b->region))
            continue;
        if (push_entry(p, c, b->team) != 0)
            return EO_ENOMEM;
        left -= (int)p->tk[c].size;
        eo__match_take(p, c);
    }
    if (p->nent == first)
        return 0;
    eo_match_fill *f = eo__grow(p->fl, &p->cap_fl, p->nfl + 1, sizeof *f);
    if (f == NULL)
        return EO_ENOMEM;
    p->fl = f;
    p->fl[p->nfl++] = (eo_match_fill){
        .backfill = i, .first = first, .count = p->nent - first, .players = b->slots - left};
    return 0;
}
