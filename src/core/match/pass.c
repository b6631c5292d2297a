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

void eo__match_step(eo__mpass *p, int64_t wait, eo_match_step *out)
{
    if (!p->step_ok || p->step_wait != wait) {
        eo_match_step_at(p->c, wait, &p->step);
        p->step_wait = wait;
        p->step_ok = true;
    }
    *out = p->step;
}

void eo__match_take(eo__mpass *p, uint32_t t)
{
    p->taken[t] = 1;
    p->placed++;
}

/* The contract's error for ticket @p i (docs: eo_match_pass()): its players, or player @p j's
 * mean or deviation. */
static int bad_ticket(const eo_match_config *c, const eo_match_ticket *t, size_t i, size_t j,
                      eo_round_error *err)
{
    char f[64];
    if (j == SIZE_MAX) {
        snprintf(f, sizeof f, "tickets[%zu].players", i);
        return eo__fail(err, f, "a ticket holds 1 to team_size (%d) players", c->team_size);
    }
    const char *name = isfinite(t->players[j].mu) ? "sigma" : "mu";
    snprintf(f, sizeof f, "tickets[%zu].players[%zu].%s", i, j, name);
    return eo__fail(err, f, "must be a finite number%s", name[0] == 's' ? " >= 0" : "");
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
    return 0; /* the tickets are checked as they are read, the backfill requests after them */
}

/* The latency limit after @p wait seconds (the step's; eo__match_step() would miss its one
 * kept step for tickets read in the caller's order, whose waits come in any order). */
static double latency_limit(eo__mpass *p, int64_t wait)
{
    eo__mlimit *x = &p->limit[(uint64_t)wait % EO__MLIMITS];
    if (!x->ok || x->wait != wait) {
        eo_match_step st;
        eo_match_step_at(p->c, wait, &st);
        *x = (eo__mlimit){true, wait, st.latency_ms};
    }
    return x->ms;
}

/* A player's latency to a region as the pass keeps it: a float (floats keep the doubles'
 * order) >= 0, or -1 when the player cannot play there (negative, NaN or infinite). */
static float latency_of(double l)
{
    return !(l >= 0.0 && l < HUGE_VAL) ? -1.0f : (float)l > 0.0f ? (float)l : 0.0f;
}

/* Ticket @p i's worst latency to each region over its players (a party plays where all can;
 * -1: not all can; a player without measurements counts as 0 ms) into p->lat; returns the
 * regions it reaches within @p limit (0: none). */
static uint32_t read_latency(eo__mpass *p, uint32_t i, double limit)
{
    const eo_match_ticket *t = &p->in[i];
    int nr = p->c->nregions;
    float *worst = p->lat + (size_t)i * (size_t)nr;
    const double *l = t->players[0].latency;
    for (int r = 0; r < nr; r++)
        worst[r] = l != NULL ? latency_of(l[r]) : 0.0f;
    for (size_t j = 1; j < t->nplayers; j++)
        for (int r = 0; (l = t->players[j].latency) != NULL && r < nr; r++) {
            float x = latency_of(l[r]);
            worst[r] = worst[r] < 0.0f || x < 0.0f ? -1.0f : x > worst[r] ? x : worst[r];
        }
    uint32_t bits = 0;
    for (int r = 0; r < nr; r++)
        bits |= (uint32_t)(worst[r] >= 0.0f && (limit <= 0.0 || worst[r] <= limit)) << r;
    return bits;
}

/* Checks and reads the caller's ticket @p i: its rating (the mean of its players' means),
 * allowance, size, key, age, latencies and the regions it reaches within its limit. 0, or
 * EO_EINVAL naming the first field that breaks the contract. */
static int read_ticket(eo__mpass *p, uint32_t i, eo__mread *rd, eo_round_error *err)
{
    const eo_match_config *c = p->c;
    const eo_match_ticket *t = &p->in[i];
    if (t->nplayers < 1 || t->nplayers > (size_t)c->team_size || t->players == NULL)
        return bad_ticket(c, t, i, SIZE_MAX, err);
    double mu = 0.0, var = 0.0;
    bool calib = false;
    for (size_t j = 0; j < t->nplayers; j++) {
        const eo_match_player *pl = &t->players[j];
        if (!isfinite(pl->mu) || !isfinite(pl->sigma) || pl->sigma < 0.0)
            return bad_ticket(c, t, i, j, err);
        mu += pl->mu;
        var += pl->sigma * pl->sigma;
        calib |= eo__match_calibrating(c, pl);
    }
    double allow = c->sigma_z * sqrt(var / (double)t->nplayers) + (calib ? c->calib_window : 0.0);
    rd->rat[i] = (eo__mrat){mu / (double)t->nplayers, allow};
    rd->key[i] = t->key;
    rd->at[i] = t->created_at;
    rd->size[i] = (uint8_t)t->nplayers;
    if (c->nregions > 0)
        rd->reach[i] = read_latency(p, i, latency_limit(p, p->now - t->created_at));
    return 0;
}

/* The waiting lists: list 0 every ticket in rating order, list 1 + r those that reach r. */
static void link_lists(eo__mpass *p)
{
    uint32_t n = (uint32_t)p->n, last[EO_MATCH_REGIONS_MAX];
    for (uint32_t pos = 0; pos < n; pos++)
        p->link[pos] =
            (eo__mlink){pos > 0 ? pos - 1 : EO__MNONE, pos + 1 < n ? pos + 1 : EO__MNONE};
    if (p->nlists == 1)
        return;
    for (int r = 0; r < p->c->nregions; r++)
        last[r] = EO__MNONE;
    for (uint32_t pos = 0; pos < n; pos++)
        for (uint32_t bits = p->reach[pos]; bits != 0; bits &= bits - 1) {
            int r = __builtin_ctz(bits);
            eo__mlink *l = p->link + (size_t)(1 + r) * p->n;
            l[pos].prev = last[r];
            if (last[r] != EO__MNONE)
                l[last[r]].next = pos;
            last[r] = pos;
        }
    for (int r = 0; r < p->c->nregions; r++)
        if (last[r] != EO__MNONE)
            p->link[(size_t)(1 + r) * p->n + last[r]].next = EO__MNONE;
}

/* The tickets, checked and read in the caller's order (its memory is laid out so), then placed
 * in rating order, the age order kept as positions, and the waiting lists linked. 0 or
 * EO_EINVAL. */
static int read_tickets(eo__mpass *p, eo__mread *rd, eo_round_error *err)
{
    uint32_t n = (uint32_t)p->n;
    rd->at_lo = rd->at_hi = n ? p->in[0].created_at : 0;
    rd->key_vary = 0;
    rd->r_lo = HUGE_VAL, rd->r_hi = -HUGE_VAL;
    for (uint32_t i = 0; i < n; i++) {
        int rc = read_ticket(p, i, rd, err);
        if (rc != 0)
            return rc;
        rd->at_lo = rd->at[i] < rd->at_lo ? rd->at[i] : rd->at_lo;
        rd->at_hi = rd->at[i] > rd->at_hi ? rd->at[i] : rd->at_hi;
        rd->key_vary |= rd->key[i] ^ rd->key[0];
        rd->r_lo = rd->rat[i].r < rd->r_lo ? rd->rat[i].r : rd->r_lo;
        rd->r_hi = rd->rat[i].r > rd->r_hi ? rd->rat[i].r : rd->r_hi;
    }
    eo__match_orders(p, rd);
    uint32_t *pos_of = rd->pos_of;
    for (uint32_t pos = 0; pos < n; pos++) {
        uint32_t i = rd->by_r[pos];
        p->rat[pos] = rd->rat[i];
        p->idx[pos] = i;
        p->size[pos] = rd->size[i];
        if (p->nlists > 1)
            p->reach[pos] = rd->reach[i];
        p->allow_max = rd->rat[i].allow > p->allow_max ? rd->rat[i].allow : p->allow_max;
        pos_of[i] = pos;
    }
    for (uint32_t j = 0; j < n; j++) {
        uint32_t pos = pos_of[rd->by_age[j]];
        p->by_age[j] = pos;
        p->age[pos] = j;
    }
    memset(p->taken, 0, n);
    link_lists(p);
    return 0;
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
    if (p->c->nregions == 0) {
        out[0] = -1;
        return 1;
    }
    const float *l = p->lat + (size_t)p->idx[s] * (size_t)p->c->nregions;
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

/* Seed @p s, waiting @p wait seconds: in each region it reaches, the largest group its step
 * allows; the first that the model accepts is a match. 0, or EO_ENOMEM / EO_EINTERNAL. */
static int try_seed(eo__mpass *p, uint32_t s, int64_t wait)
{
    eo_match_step st;
    eo__match_step(p, wait, &st);
    int regions[EO_MATCH_REGIONS_MAX];
    int nr = seed_regions(p, s, regions);
    for (int i = 0; i < nr; i++) {
        int k = p->c->team_size;
        while (k >= st.team_min && k >= (int)p->size[s]) {
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

/* The pass in @p ws: its arrays, the tickets checked and read, the backfill requests checked
 * and served, then every waiting ticket as a seed, oldest first (one that reaches no region is
 * never in a match). */
static int run(eo_match_ws *ws, eo__mpass *p, const eo_match_backfill *bf, size_t nbf,
               eo_round_error *err)
{
    eo__mread rd;
    int rc = eo__match_ws_arrays(ws, p, &rd);
    if (rc != 0 || (rc = read_tickets(p, &rd, err)) != 0)
        return rc;
    for (size_t i = 0; i < nbf; i++)
        if ((rc = check_backfill(p->c, &bf[i], i, err)) != 0)
            return rc;
    for (size_t i = 0; i < (size_t)p->c->nmaps * (size_t)(p->c->team_size + 1); i++)
        p->fu[i] = INT64_MIN;
    if ((rc = serve_backfill(p, bf, nbf)) != 0)
        return rc;
    for (size_t j = 0; j < p->n && rc == 0; j++) {
        uint32_t s = p->by_age[j];
        if (!p->taken[s] && (p->nlists == 1 || p->reach[s] != 0))
            rc = try_seed(p, s, p->now - p->at[j]);
    }
    return rc;
}

int eo_match_pass_ws(eo_match_ws *ws, const eo_match_config *c, const eo_model_ctx *model,
                     const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                     size_t nbackfill, int64_t now, const eo_match_result **out,
                     eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "out", "missing");
    *out = NULL;
    if (ws == NULL)
        return eo__fail(err, "ws", "missing");
    int rc = check_inputs(c, model, tickets, n, backfill, nbackfill, err);
    if (rc != 0)
        return rc;
    eo__mpass *p = &ws->p;
    /* A new pass; the output arrays (and their capacities) stay. */
    eo__mpass keep = *p;
    memset(p, 0, sizeof *p);
    p->ent = keep.ent, p->cap_ent = keep.cap_ent;
    p->mt = keep.mt, p->cap_mt = keep.cap_mt;
    p->fl = keep.fl, p->cap_fl = keep.cap_fl;
    p->c = c;
    p->model = model;
    p->in = tickets;
    p->n = n;
    p->now = now;
    p->nlists = c->nregions > 0 ? 1 + c->nregions : 1;
    eo_model m = eo_model_ctx_config(model)->model;
    p->gaussian = m == EO_MODEL_TRUESKILL || m == EO_MODEL_WENGLIN;
    rc = run(ws, p, backfill, nbackfill, err);
    if (rc != 0) {
        if (rc == EO_EINTERNAL)
            eo__fail(err, "tickets", "the balancer failed on a group (a bug)");
        return rc;
    }
    ws->res = (eo_match_result){.fills = p->fl,
                                .nfills = p->nfl,
                                .matches = p->mt,
                                .nmatches = p->nmt,
                                .entries = p->ent,
                                .nentries = p->nent,
                                .waiting = p->n - p->placed,
                                .rejected = p->rejected};
    *out = &ws->res;
    return 0;
}

static size_t align_up(size_t x)
{
    size_t a = alignof(max_align_t);
    return (x + a - 1) / a * a;
}

/* A copy of @p x in one block: header, fills, matches, entries. */
static int copy_result(const eo_match_result *x, eo_match_result **out)
{
    size_t o_fl = align_up(sizeof(eo_match_result));
    size_t o_mt = align_up(o_fl + x->nfills * sizeof(eo_match_fill));
    size_t o_en = align_up(o_mt + x->nmatches * sizeof(eo_match));
    char *blk = malloc(o_en + x->nentries * sizeof(eo_match_entry));
    if (blk == NULL)
        return EO_ENOMEM;
    eo_match_result *r = (eo_match_result *)(void *)blk;
    *r = *x;
    r->fills = (eo_match_fill *)(void *)(blk + o_fl);
    r->matches = (eo_match *)(void *)(blk + o_mt);
    r->entries = (eo_match_entry *)(void *)(blk + o_en);
    if (x->nfills)
        memcpy(r->fills, x->fills, x->nfills * sizeof *x->fills);
    if (x->nmatches)
        memcpy(r->matches, x->matches, x->nmatches * sizeof *x->matches);
    if (x->nentries)
        memcpy(r->entries, x->entries, x->nentries * sizeof *x->entries);
    *out = r;
    return 0;
}

int eo_match_pass(const eo_match_config *c, const eo_model_ctx *model,
                  const eo_match_ticket *tickets, size_t n, const eo_match_backfill *backfill,
                  size_t nbackfill, int64_t now, eo_match_result **out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "out", "missing");
    *out = NULL;
    eo_match_ws *ws = eo_match_ws_new();
    if (ws == NULL)
        return EO_ENOMEM;
    const eo_match_result *r = NULL;
    int rc = eo_match_pass_ws(ws, c, model, tickets, n, backfill, nbackfill, now, &r, err);
    if (rc == 0)
        rc = copy_result(r, out);
    eo_match_ws_free(ws);
    return rc;
}

void eo_match_result_free(eo_match_result *r)
{
    free(r);
}
