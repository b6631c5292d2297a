/* One pass of the matcher (docs/MATCHMAKING.md, "The matcher"): the inputs checked, each
 * ticket read once (rating, allowance, latencies), the orders by rating and by age, backfill
 * requests, then every waiting ticket as a seed, oldest first; the result in one block. */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/round_internal.h"
#include "match_internal.h"

bool eo__match_older(const eo__mpass *p, uint32_t a, uint32_t b)
{
    const eo__mtk *x = &p->tk[a], *y = &p->tk[b];
    if (x->created_at != y->created_at)
        return x->created_at < y->created_at;
    if (x->key != y->key)
        return x->key < y->key;
    return x->idx < y->idx;
}

bool eo__match_reaches(const eo__mpass *p, uint32_t t, int region)
{
    if (region < 0 || p->lat == NULL)
        return true;
    float l = p->lat[(size_t)t * (size_t)p->c->nregions + (size_t)region];
    return l >= 0.0f && (p->tk[t].lat_max <= 0.0 || l <= p->tk[t].lat_max);
}

void eo__match_take(eo__mpass *p, uint32_t t)
{
    eo__mlink *k = &p->link[t];
    if (k->prev != EO__MNONE)
        p->link[k->prev].next = k->next;
    if (k->next != EO__MNONE)
        p->link[k->next].prev = k->prev;
    k->prev = k->next = EO__MNONE;
    p->taken[t] = 1;
}

static int check_ticket(const eo_match_config *c, const eo_match_ticket *t, size_t i,
                        eo_round_error *err)
{
    char f[64];
    if (t->nplayers < 1 || t->nplayers > (size_t)c->team_size || t->players == NULL) {
        snprintf(f, sizeof f, "tickets[%zu].players", i);
        return eo__fail(err, f, "a ticket holds 1 to team_size (%d) players", c->team_size);
    }
    for (size_t j = 0; j < t->nplayers; j++) {
        const eo_match_player *pl = &t->players[j];
        const char *name = !isfinite(pl->mu)                         ? "mu"
                           : !isfinite(pl->sigma) || pl->sigma < 0.0 ? "sigma"
                                                                     : NULL;
        if (name != NULL) {
            snprintf(f, sizeof f, "tickets[%zu].players[%zu].%s", i, j, name);
            return eo__fail(err, f, "must be a finite number%s", name[0] == 's' ? " >= 0" : "");
        }
    }
    return 0;
}

static int check_backfill(const eo_match_config *c, const eo_match_backfill *b, size_t i,
                          eo_round_error *err)
{
    const char *name = NULL, *rule = NULL;
    if (b->team != EO_BALANCE_A && b->team != EO_BALANCE_B)
        name = "team", rule = "A or B";
    else if (b->slots < 1 || b->slots > c->team_size)
        name = "slots", rule = "1 to team_size players";
    else if (!isfinite(b->rating))
        name = "rating", rule = "a finite number";
    else if (b->region < -1 || b->region >= c->nregions)
        name = "region", rule = "one of the queue's regions, or none";
    if (name == NULL)
        return 0;
    char f[64];
    snprintf(f, sizeof f, "backfill[%zu].%s", i, name);
    return eo__fail(err, f, "must be %s", rule);
}

static int check_inputs(const eo_match_config *c, const eo_model_ctx *model,
                        const eo_match_ticket *t, size_t n, const eo_match_backfill *bf, size_t nbf,
                        eo_round_error *err)
{
    int rc = eo_match_config_check(c, err);
    if (rc != 0)
        return rc;
    if (model == NULL || (n > 0 && t == NULL) || (nbf > 0 && bf == NULL))
        return eo__fail(err,
                        model == NULL        ? "model"
                        : n > 0 && t == NULL ? "tickets"
                                             : "backfill",
                        "missing");
    if (n >= EO__MNONE || nbf >= EO__MNONE) {
        eo__fail(err, n >= EO__MNONE ? "tickets" : "backfill", "too many for one pass");
        return EO_ELIMIT;
    }
    for (size_t i = 0; i < n; i++)
        if ((rc = check_ticket(c, &t[i], i, err)) != 0)
            return rc;
    for (size_t i = 0; i < nbf; i++)
        if ((rc = check_backfill(c, &bf[i], i, err)) != 0)
            return rc;
    return 0;
}

/* A ticket's worst latency to each region over its players (a party plays where all can). */
static void read_latency(const eo__mpass *p, const eo_match_ticket *t, float *out)
{
    int nr = p->c->nregions;
    for (int r = 0; r < nr; r++) {
        double worst = 0.0;
        for (size_t j = 0; j < t->nplayers && worst >= 0.0; j++) {
            const double *l = t->players[j].latency;
            if (l == NULL)
                continue;
            worst = !isfinite(l[r]) || l[r] < 0.0 ? -1.0 : l[r] > worst ? l[r] : worst;
        }
        out[r] = (float)worst;
    }
}

/* A ticket's rating: the mean of its players' means. */
static double rating(const eo_match_ticket *t)
{
    double mu = 0.0;
    for (size_t j = 0; j < t->nplayers; j++)
        mu += t->players[j].mu;
    return mu / (double)t->nplayers;
}

/* Reads the caller's ticket @p i into @p k and its latencies into @p lat. */
static void read_ticket(const eo__mpass *p, uint32_t i, eo__mtk *k, float *lat)
{
    const eo_match_config *c = p->c;
    const eo_match_ticket *t = &p->in[i];
    double var = 0.0;
    bool calib = false;
    for (size_t j = 0; j < t->nplayers; j++) {
        const eo_match_player *pl = &t->players[j];
        var += pl->sigma * pl->sigma;
        calib |= eo__match_calibrating(c, pl);
    }
    k->allow = c->sigma_z * sqrt(var / (double)t->nplayers) + (calib ? c->calib_window : 0.0);
    k->created_at = t->created_at;
    k->key = t->key;
    k->idx = i;
    k->wait = p->now - t->created_at;
    eo_match_step st;
    eo_match_step_at(c, k->wait, &st);
    k->lat_max = st.latency_ms;
    k->size = (uint32_t)t->nplayers;
    if (lat != NULL)
        read_latency(p, t, lat);
}

/* The tickets, read in the caller's order (its memory is laid out so), then placed in rating
 * order (p->tk, p->lat); @p by_age gets their positions oldest first. */
static int read_tickets(eo__mpass *p, uint32_t *by_age)
{
    size_t n = p->n ? p->n : 1, nr = (size_t)p->c->nregions;
    double *r = malloc(n * sizeof *r);
    uint32_t *by_r = malloc(n * sizeof *by_r);
    eo__mtk *in = malloc(n * sizeof *in);
    float *lat = nr ? malloc(n * nr * sizeof *lat) : NULL;
    int rc = EO_ENOMEM;
    if (r != NULL && by_r != NULL && in != NULL && (nr == 0 || lat != NULL)) {
        for (uint32_t i = 0; i < (uint32_t)p->n; i++) {
            r[i] = rating(&p->in[i]);
            read_ticket(p, i, &in[i], lat ? lat + i * nr : NULL);
        }
        rc = eo__match_orders(p, r, by_r, by_age);
    }
    if (rc == 0) {
        for (uint32_t pos = 0; pos < (uint32_t)p->n; pos++) {
            eo__mtk *k = &p->tk[pos];
            *k = in[by_r[pos]];
            p->r[pos] = r[by_r[pos]];
            p->link[pos].prev = pos > 0 ? pos - 1 : EO__MNONE;
            p->link[pos].next = pos + 1 < p->n ? pos + 1 : EO__MNONE;
            if (nr)
                memcpy(p->lat + pos * nr, lat + by_r[pos] * nr, nr * sizeof *lat);
            p->allow_max = k->allow > p->allow_max ? k->allow : p->allow_max;
        }
        uint32_t *rank = (uint32_t *)(void *)r; /* r is done with: rank[i] = position of i */
        for (uint32_t pos = 0; pos < (uint32_t)p->n; pos++)
            rank[by_r[pos]] = pos;
        for (size_t i = 0; i < p->n; i++)
            by_age[i] = rank[by_age[i]];
    }
    free(r);
    free(by_r);
    free(in);
    free(lat);
    return rc;
}

/* Sort keys of backfill requests: age, key and index. */
typedef struct sortkey {
    int64_t at;
    uint64_t key;
    uint32_t i;
} sortkey;

static int cmp_key(const void *x, const void *y)
{
    const sortkey *a = x, *b = y;
    if (a->at != b->at)
        return a->at < b->at ? -1 : 1;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Backfill requests oldest first (created_at, key, index). */
static int serve_backfill(eo__mpass *p, const eo_match_backfill *bf, size_t nbf)
{
    if (nbf == 0)
        return 0;
    sortkey *s = malloc(nbf * sizeof *s);
    if (s == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < nbf; i++)
        s[i] = (sortkey){bf[i].created_at, bf[i].key, (uint32_t)i};
    qsort(s, nbf, sizeof *s, cmp_key);
    int rc = 0;
    for (size_t i = 0; i < nbf && rc == 0; i++)
        rc = eo__match_backfill(p, &bf[s[i].i], s[i].i);
    free(s);
    return rc;
}

/* The regions a seed may play in within its own limit, least latency first (-1 alone when
 * the queue has none). */
static int seed_regions(const eo__mpass *p, uint32_t s, int *out)
{
    if (p->c->nregions == 0 || p->lat == NULL) {
        out[0] = -1;
        return 1;
    }
    const float *l = p->lat + (size_t)s * (size_t)p->c->nregions;
    int n = 0;
    for (int r = 0; r < p->c->nregions; r++) {
        if (!eo__match_reaches(p, s, r))
            continue;
        int j = n++;
        for (; j > 0 && l[out[j - 1]] > l[r]; j--)
            out[j] = out[j - 1];
        out[j] = r;
    }
    return n;
}

/* Seed @p s: in each region it reaches, the largest group its step allows; the first that
 * the model accepts is a match. 0, or EO_ENOMEM / EO_EINTERNAL. */
static int try_seed(eo__mpass *p, uint32_t s)
{
    eo_match_step st;
    eo_match_step_at(p->c, p->tk[s].wait, &st);
    int regions[EO_MATCH_REGIONS_MAX];
    int nr = seed_regions(p, s, regions);
    for (int i = 0; i < nr; i++) {
        int k = p->c->team_size;
        while (k >= st.team_min && k >= (int)p->tk[s].size) {
            eo__mgroup g;
            if (eo__match_gather(p, s, k, st.window, regions[i], &g)) {
                int rc = eo__match_form(p, &g);
                if (rc != 0)
                    return rc < 0 ? rc : 0;
                break;
            }
            /* Fewer players came: the next size that they could fill. */
            k = g.players / 2 < k ? g.players / 2 : k - 1;
        }
    }
    return 0;
}

static size_t align_up(size_t x)
{
    size_t a = alignof(max_align_t);
    return (x + a - 1) / a * a;
}

/* The result in one block: header, fills, matches, entries. */
static int pack(const eo__mpass *p, eo_match_result **out)
{
    size_t o_fl = align_up(sizeof(eo_match_result));
    size_t o_mt = align_up(o_fl + p->nfl * sizeof(eo_match_fill));
    size_t o_en = align_up(o_mt + p->nmt * sizeof(eo_match));
    size_t total = o_en + p->nent * sizeof(eo_match_entry);
    char *blk = malloc(total);
    if (blk == NULL)
        return EO_ENOMEM;
    eo_match_result *r = (eo_match_result *)(void *)blk;
    memset(r, 0, sizeof *r);
    r->fills = (eo_match_fill *)(void *)(blk + o_fl);
    r->matches = (eo_match *)(void *)(blk + o_mt);
    r->entries = (eo_match_entry *)(void *)(blk + o_en);
    r->nfills = p->nfl;
    r->nmatches = p->nmt;
    r->nentries = p->nent;
    if (p->nfl)
        memcpy(r->fills, p->fl, p->nfl * sizeof *p->fl);
    if (p->nmt)
        memcpy(r->matches, p->mt, p->nmt * sizeof *p->mt);
    if (p->nent)
        memcpy(r->entries, p->ent, p->nent * sizeof *p->ent);
    size_t placed = 0;
    for (size_t i = 0; i < p->n; i++)
        placed += p->taken[i];
    r->waiting = p->n - placed;
    r->rejected = p->rejected;
    *out = r;
    return 0;
}

static int run(eo__mpass *p, const eo_match_backfill *bf, size_t nbf, eo_match_result **out)
{
    size_t n = p->n ? p->n : 1;
    p->tk = malloc(n * sizeof *p->tk);
    p->r = malloc(n * sizeof *p->r);
    p->link = malloc(n * sizeof *p->link);
    p->taken = calloc(n, 1);
    uint32_t *by_age = malloc(n * sizeof *by_age);
    if (p->c->nregions > 0)
        p->lat = malloc(n * (size_t)p->c->nregions * sizeof *p->lat);
    size_t nfu = (size_t)p->c->nmaps * (size_t)(p->c->team_size + 1);
    p->fu = malloc((nfu ? nfu : 1) * sizeof *p->fu);
    for (size_t i = 0; p->fu != NULL && i < nfu; i++)
        p->fu[i] = INT64_MIN;
    int rc = EO_ENOMEM;
    if (p->tk == NULL || p->r == NULL || p->link == NULL || p->taken == NULL || by_age == NULL ||
        p->fu == NULL || (p->c->nregions > 0 && p->lat == NULL))
        goto done;
    if ((rc = read_tickets(p, by_age)) != 0 || (rc = serve_backfill(p, bf, nbf)) != 0)
        goto done;
    for (size_t i = 0; i < p->n && rc == 0; i++)
        if (!p->taken[by_age[i]])
            rc = try_seed(p, by_age[i]);
    if (rc == 0)
        rc = pack(p, out);
done:
    free(by_age);
    return rc;
}

int eo_match_pass(const eo_match_config *c, const eo_model_ctx *model,
                  const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                  size_t nbackfill, int64_t now, eo_match_result **out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "out", "missing");
    *out = NULL;
    int rc = check_inputs(c, model, tickets, n, backfill, nbackfill, err);
    if (rc != 0)
        return rc;
    eo__mpass p;
    memset(&p, 0, sizeof p);
    p.c = c;
    p.model = model;
    p.in = tickets;
    p.n = n;
    p.now = now;
    eo_model m = eo_model_ctx_config(model)->model;
    p.gaussian = m == EO_MODEL_TRUESKILL || m == EO_MODEL_WENGLIN;
    rc = run(&p, backfill, nbackfill, out);
    free(p.tk);
    free(p.r);
    free(p.link);
    free(p.taken);
    free(p.lat);
    free(p.fu);
    free(p.ent);
    free(p.mt);
    free(p.fl);
    if (rc == EO_EINTERNAL)
        eo__fail(err, "tickets", "the balancer failed on a group (a bug)");
    return rc;
}

void eo_match_result_free(eo_match_result *r)
{
    free(r);
}
