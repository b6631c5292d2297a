/* Groups around a seed and backfill fills: the tickets nearest a rating, walked outwards in
 * rating order among those still waiting (docs/MATCHMAKING.md, "The matcher"). */
#include <math.h>
#include <stdbool.h>

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
    uint32_t size = p->size[t];
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

/* A walk outwards from rating r0 through the waiting tickets of one list: the order is the
 * one of the walk over every waiting ticket (list 0), which takes the nearer of the nearest
 * ticket below r0's place and the nearest above, the older of the two when they are as near;
 * a walk for a region skips the tickets that cannot play there, so it only reads those of its
 * region's list, and where a ticket of its list below and one above are as near it replays
 * the walk over list 0 for that distance (whose order depends on the tickets skipped).
 * Tickets placed by the pass stay in the lists until a walk meets them: it unlinks them then
 * (a placed ticket's neighbours in lists other than the one walked were a cache miss each). */
typedef struct walk {
    eo__mpass *p;
    eo__mlink *lk;             /* the list walked */
    int region;                /* its region; -1: list 0 */
    double r0, dmax;           /* no ticket farther than dmax is visited */
    uint32_t lo, hi;           /* the nearest not yet visited below and above */
    uint32_t lo_end, hi_begin; /* below: positions < lo_end; above: >= hi_begin */
    bool tie;                  /* replaying list 0 at distance dt: glo and ghi its tickets there */
    double dt;
    uint32_t glo, ghi, lo_after, hi_after;
} walk;

static void walk_init(walk *w, eo__mpass *p, int region, double r0, double dmax, uint32_t lo_end,
                      uint32_t hi_begin)
{
    *w = (walk){.p = p,
                .region = p->c->nregions > 0 ? region : -1,
                .r0 = r0,
                .dmax = dmax,
                .lo_end = lo_end,
                .hi_begin = hi_begin};
    w->lk = p->link + (size_t)(w->region + 1) * p->n;
}

/* The first ticket still waiting from @p t on, going down (or up), placed ones unlinked. */
static uint32_t waiting(walk *w, uint32_t t, bool down)
{
    eo__mlink *l = w->lk;
    while (t != EO__MNONE && w->p->taken[t]) {
        uint32_t below = l[t].prev, above = l[t].next;
        if (below != EO__MNONE)
            l[below].next = above;
        if (above != EO__MNONE)
            l[above].prev = below;
        t = down ? below : above;
    }
    return t;
}

/* The next ticket of list 0 at distance dt below (@p down) or above r0 after @p t, or none
 * (placed ones included: tie_next skips them). */
static uint32_t tie_step(const walk *w, uint32_t t, bool down)
{
    const eo__mpass *p = w->p;
    uint32_t y = down ? p->link[t].prev : p->link[t].next;
    if (y == EO__MNONE || (down ? w->r0 - p->rat[y].r : p->rat[y].r - w->r0) != w->dt)
        return EO__MNONE;
    return y;
}

/* Starts the replay of list 0 at distance @p dt, where w->lo and w->hi (waiting) both are. */
static void tie_begin(walk *w, double dt)
{
    const eo__mpass *p = w->p;
    const eo__mlink *all = p->link;
    w->tie = true;
    w->dt = dt;
    uint32_t x = w->lo, y;
    while ((y = all[x].next) != EO__MNONE && y < w->lo_end && w->r0 - p->rat[y].r == dt)
        x = y;
    w->glo = x;
    for (x = w->hi;
         (y = all[x].prev) != EO__MNONE && y >= w->hi_begin && p->rat[y].r - w->r0 == dt;)
        x = y;
    w->ghi = x;
    for (x = w->lo; x != EO__MNONE && w->r0 - p->rat[x].r == dt;)
        x = w->lk[x].prev;
    w->lo_after = x;
    for (x = w->hi; x != EO__MNONE && p->rat[x].r - w->r0 == dt;)
        x = w->lk[x].next;
    w->hi_after = x;
}

/* From @p t on at distance dt, going down (or up) list 0, the first ticket still waiting. */
static uint32_t tie_waiting(const walk *w, uint32_t t, bool down)
{
    while (t != EO__MNONE && w->p->taken[t])
        t = tie_step(w, t, down);
    return t;
}

/* The replay's next waiting ticket of the walk's region, or none when the distance is done. */
static uint32_t tie_next(walk *w)
{
    const eo__mpass *p = w->p;
    for (;;) {
        uint32_t lo = w->glo = tie_waiting(w, w->glo, true);
        uint32_t hi = w->ghi = tie_waiting(w, w->ghi, false);
        if (lo == EO__MNONE && hi == EO__MNONE)
            break;
        bool down = hi == EO__MNONE || (lo != EO__MNONE && !eo__match_older(p, hi, lo));
        uint32_t c = down ? lo : hi;
        *(down ? &w->glo : &w->ghi) = tie_step(w, c, down);
        if (eo__match_reaches(p, c, w->region))
            return c;
    }
    w->tie = false;
    w->lo = w->lo_after;
    w->hi = w->hi_after;
    return EO__MNONE;
}

/* The walk's next ticket and its distance from r0 in *d, or EO__MNONE when none is left
 * within dmax. The walk has moved past the ticket: the caller may take it. */
static uint32_t walk_next(walk *w, double *d)
{
    const eo__mpass *p = w->p;
    if (w->tie) {
        uint32_t c = tie_next(w);
        if (c != EO__MNONE) {
            *d = w->dt;
            return c;
        }
    }
    uint32_t lo = w->lo = waiting(w, w->lo, true), hi = w->hi = waiting(w, w->hi, false);
    if (lo == EO__MNONE && hi == EO__MNONE)
        return EO__MNONE;
    double dl = lo != EO__MNONE ? w->r0 - p->rat[lo].r : 0.0;
    double dh = hi != EO__MNONE ? p->rat[hi].r - w->r0 : 0.0;
    bool down = hi == EO__MNONE || (lo != EO__MNONE && dl < dh);
    if (lo != EO__MNONE && hi != EO__MNONE && dl == dh) {
        if (dl > w->dmax) {
            w->lo = w->hi = EO__MNONE;
            return EO__MNONE;
        }
        if (w->region >= 0) {
            tie_begin(w, dl);
            return walk_next(w, d);
        }
        down = !eo__match_older(p, hi, lo);
    }
    *d = down ? dl : dh;
    if (*d > w->dmax) {
        w->lo = w->hi = EO__MNONE;
        return EO__MNONE;
    }
    if (down)
        w->lo = w->lk[lo].prev;
    else
        w->hi = w->lk[hi].next;
    return down ? lo : hi;
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

bool eo__match_gather(eo__mpass *p, uint32_t s, int k, double window, int region, eo__mgroup *g)
{
    if (!start(p, g, s, k))
        return false;
    double reach = window + p->rat[s].allow, d;
    walk w;
    walk_init(&w, p, region, p->rat[s].r, reach + p->allow_max, s, s + 1);
    w.lo = w.lk[s].prev;
    w.hi = w.lk[s].next;
    uint32_t cand[CAND_MAX], c;
    int ncand = 0;
    bool missed = false;
    while (g->players < 2 * k && (c = walk_next(&w, &d)) != EO__MNONE) {
        if (d > reach + p->rat[c].allow)
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
        rest[i] = rest[i + 1] + (int)p->size[cand[i]];
    (void)start(p, g, s, k);
    search x = {.c = cand, .rest = rest, .n = ncand, .steps = SEARCH_STEPS};
    return complete(p, &x, 0, g);
}

/* A walk of @p region's list (-1: every waiting ticket) from rating @p r: its first tickets
 * below and above, found from r's place in rating order, skipping those already placed (only
 * backfill has placed any when this runs, so the skips are few). */
static void walk_from(walk *w, eo__mpass *p, int region, double r, double dmax)
{
    size_t a = 0, b = p->n;
    while (a < b) {
        size_t m = a + (b - a) / 2;
        if (p->rat[m].r < r)
            a = m + 1;
        else
            b = m;
    }
    walk_init(w, p, region, r, dmax, (uint32_t)a, (uint32_t)a);
    w->lo = w->hi = EO__MNONE;
    for (size_t i = a; i < p->n && w->hi == EO__MNONE; i++)
        if (!p->taken[i] && eo__match_reaches(p, (uint32_t)i, w->region))
            w->hi = (uint32_t)i;
    for (size_t i = a; i > 0 && w->lo == EO__MNONE; i--)
        if (!p->taken[i - 1] && eo__match_reaches(p, (uint32_t)(i - 1), w->region))
            w->lo = (uint32_t)(i - 1);
}

static int push_entry(eo__mpass *p, uint32_t t, uint8_t team)
{
    eo_match_entry *e = eo__grow(p->ent, &p->cap_ent, p->nent + 1, sizeof *e);
    if (e == NULL)
        return EO_ENOMEM;
    p->ent = e;
    p->ent[p->nent++] = (eo_match_entry){.ticket = p->idx[t], .team = team};
    return 0;
}

int eo__match_backfill(eo__mpass *p, const eo_match_backfill *b, size_t i)
{
    eo_match_step st;
    eo__match_step(p, p->now - b->created_at, &st);
    size_t first = p->nent;
    int left = b->slots;
    walk w;
    walk_from(&w, p, b->region, b->rating, st.window + p->allow_max);
    uint32_t c;
    double d;
    while (left > 0 && (c = walk_next(&w, &d)) != EO__MNONE) {
        if (d > st.window + p->rat[c].allow || (int)p->size[c] > left)
            continue;
        if (push_entry(p, c, b->team) != 0)
            return EO_ENOMEM;
        left -= (int)p->size[c];
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
