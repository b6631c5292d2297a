/* A gathered group becomes a match: the map, the teams (sides.c, or the balancer), the model's
 * P(A) and quality judged by the step of the group's longest wait, the region
 * (docs/MATCHMAKING.md, "The matcher"). */
#include <math.h>
#include <string.h>

#include "core/buf.h"
#include "core/numeric.h"
#include "match_internal.h"

#define NMAX (2 * EO_MATCH_TEAM_MAX)

/* A group's players as the model takes them, with their split ratings (the balancer's). */
typedef struct roster {
    int n;
    eo_strength s[NMAX];
    int64_t rating[NMAX]; /* eo_model_split_rating() */
    int64_t least;        /* the least of them */
    int owner[NMAX];      /* position of the player's ticket in the group */
    uint8_t side[NMAX];   /* per ticket position: EO_BALANCE_A or EO_BALANCE_B */
    int map;              /* index drawn for the seed, -1: none */
    double field;         /* the map's, model units */
    int exact;
} roster;

static void load(const eo__mpass *p, const eo__mgroup *g, roster *ro)
{
    const eo_match_config *c = p->c;
    const eo_match_ticket *tk[NMAX];
    /* The caller's tickets, then their players, asked for all at once: a group's tickets lie
     * anywhere in the caller's memory, and one miss after the other was most of a match's
     * time. */
    for (int i = 0; i < g->count; i++)
        __builtin_prefetch(tk[i] = eo__match_in(p, g->t[i]));
    for (int i = 0; i < g->count; i++)
        __builtin_prefetch(tk[i]->players);
    ro->n = 0;
    for (int i = 0; i < g->count; i++) {
        const eo_match_ticket *t = tk[i];
        for (size_t j = 0; j < t->nplayers; j++) {
            const eo_match_player *pl = &t->players[j];
            double sd = pl->sigma;
            /* A newcomer's uncertainty never fails a match (seed 002, "Calibration"). */
            if (c->calib_sigma > 0.0 && sd > c->calib_sigma && eo__match_calibrating(c, pl))
                sd = c->calib_sigma;
            int x = ro->n++;
            ro->s[x] = (eo_strength){.mu = pl->mu, .var = sd * sd};
            ro->rating[x] = eo_model_split_rating(p->model, pl->mu);
            ro->least = x == 0 || ro->rating[x] < ro->least ? ro->rating[x] : ro->least;
            ro->owner[x] = i;
        }
    }
    ro->map = -1;
    ro->field = 0.0;
    if (c->nmaps > 0) {
        ro->map = (int)(eo__mix64(c->seed ^ eo__mix64(eo__match_in(p, g->t[0])->key)) %
                        (uint64_t)c->nmaps);
        ro->field = c->map_field[ro->map];
    }
}

/* The balancer's teams of k from the 2k players, parties whole, within the same node budget
 * (its exact search, then its local search). 1: done, 0: none found. */
static int sides_balanced(const eo__mpass *p, const eo__mgroup *g, roster *ro, int64_t field,
                          uint64_t seed)
{
    int k = g->k;
    eo_balance_player bp[NMAX];
    memset(bp, 0, sizeof bp);
    for (int i = 0; i < ro->n; i++) {
        bp[i].rating = ro->rating[i];
        bp[i].party = p->size[g->t[ro->owner[i]]] >= 2 ? (uint32_t)ro->owner[i] + 1 : 0;
    }
    eo_balance_request req;
    memset(&req, 0, sizeof req);
    req.mode = EO_BALANCE_REBALANCE; /* no current teams: |D| alone decides */
    req.k_min = req.k_max = k;
    req.field = field;
    req.work_limit = p->c->work_limit ? p->c->work_limit : EO_MATCH_WORK_LIMIT;
    req.seed = seed;
    eo_balance_result *res = NULL;
    int rc = eo_balance_solve(bp, (size_t)ro->n, &req, &res, NULL);
    if (rc != 0)
        return rc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL;
    const eo_balance_split *x = &res->split[0];
    int ok = res->count == 1 && x->err == 0 && x->k == k;
    if (ok) {
        for (int i = 0; i < k; i++) {
            ro->side[ro->owner[x->a[i]]] = EO_BALANCE_A;
            ro->side[ro->owner[x->b[i]]] = EO_BALANCE_B;
        }
        ro->exact = x->exact;
    }
    eo_balance_free(res);
    return ok;
}

/* The map's field in split units for teams of k (eo_model_field_units()), kept per map and
 * size for groups without variance (every group of SynElo, Elo and hive), whose value depends
 * on nothing else. */
static int64_t field_units(const eo__mpass *p, const roster *ro, int k, double var_sum)
{
    if (ro->map < 0)
        return 0;
    int64_t unit = eo_model_split_unit(p->model);
    if (var_sum != 0.0)
        return eo_model_field_units(p->model, ro->field, k, var_sum, unit);
    int64_t *f = &p->fu[(size_t)ro->map * (size_t)(p->c->team_size + 1) + (size_t)k];
    if (*f == INT64_MIN)
        *f = eo_model_field_units(p->model, ro->field, k, 0.0, unit);
    return *f;
}

static int64_t dev_of(const roster *ro, const uint8_t *side, int64_t field)
{
    int64_t d = field;
    for (int i = 0; i < ro->n; i++)
        d += side[ro->owner[i]] == EO_BALANCE_A ? ro->rating[i] : -ro->rating[i];
    return d < 0 ? -d : d;
}

/* Teams of k, parties whole, with the least |ΣA − ΣB + field|: the matcher's own search
 * (sides.c) when it proves its answer within the node budget, else the balancer's answer or
 * the search's, whichever is better. 1: done, 0: no split found, or an error. */
static int make_sides(const eo__mpass *p, const eo__mgroup *g, roster *ro, int64_t field)
{
    int64_t v[NMAX];
    int size[NMAX];
    for (int i = 0; i < g->count; i++) {
        size[i] = (int)p->size[g->t[i]];
        v[i] = 0;
    }
    for (int i = 0; i < ro->n; i++)
        v[ro->owner[i]] += ro->rating[i] - ro->least;
    uint8_t mine[NMAX];
    uint64_t limit = p->c->work_limit ? p->c->work_limit : EO_MATCH_WORK_LIMIT;
    int rc = eo__match_sides(v, size, g->count, g->k, field, limit, mine);
    if (rc == 1) {
        memcpy(ro->side, mine, (size_t)g->count);
        ro->exact = 1;
        return 1;
    }
    int b = sides_balanced(p, g, ro, field, p->c->seed ^ eo__match_in(p, g->t[0])->key);
    if (b < 0)
        return b;
    if (rc == 0 && (b == 0 || dev_of(ro, mine, field) < dev_of(ro, ro->side, field))) {
        memcpy(ro->side, mine, (size_t)g->count);
        ro->exact = 0;
        return 1;
    }
    return b;
}

/* The region every ticket reaches within its limit with the least worst latency (lowest
 * index on a tie); -1 without regions. */
static int best_region(const eo__mpass *p, const eo__mgroup *g)
{
    if (p->c->nregions == 0)
        return -1;
    uint32_t common = UINT32_MAX;
    for (int i = 0; i < g->count; i++)
        common &= p->reach[g->t[i]];
    int best = -1;
    double best_worst = 0.0;
    for (; common != 0; common &= common - 1) {
        size_t r = (size_t)__builtin_ctz(common);
        double worst = 0.0;
        for (int i = 0; i < g->count; i++) {
            double l = p->lat[(size_t)p->idx[g->t[i]] * (size_t)p->c->nregions + r];
            worst = l > worst ? l : worst;
        }
        if (best < 0 || worst < best_worst)
            best = (int)r, best_worst = worst;
    }
    return best;
}

static int record(eo__mpass *p, const eo__mgroup *g, const roster *ro, eo_match *m)
{
    eo_match_entry *e = eo__grow(p->ent, &p->cap_ent, p->nent + (size_t)g->count, sizeof *e);
    if (e == NULL)
        return EO_ENOMEM;
    p->ent = e;
    eo_match *mt = eo__grow(p->mt, &p->cap_mt, p->nmt + 1, sizeof *mt);
    if (mt == NULL)
        return EO_ENOMEM;
    p->mt = mt;
    m->first = p->nent;
    m->count = (size_t)g->count;
    for (uint8_t side = EO_BALANCE_A; side <= EO_BALANCE_B; side++)
        for (int i = 0; i < g->count; i++)
            if (ro->side[i] == side)
                p->ent[p->nent++] = (eo_match_entry){.ticket = p->idx[g->t[i]], .team = side};
    for (int i = 0; i < g->count; i++)
        eo__match_take(p, g->t[i]);
    p->mt[p->nmt++] = *m;
    return 1;
}

int eo__match_form(eo__mpass *p, const eo__mgroup *g)
{
    roster ro;
    load(p, g, &ro);
    int k = g->k;
    double var_sum = 0.0;
    for (int i = 0; i < ro.n; i++)
        var_sum += ro.s[i].var;
    int64_t field = field_units(p, &ro, k, var_sum);
    int rc = make_sides(p, g, &ro, field);
    if (rc <= 0) {
        p->rejected += rc == 0;
        return rc;
    }
    eo_team_agg a = {0}, b = {0};
    double lo = ro.s[0].mu, hi = ro.s[0].mu;
    for (int i = 0; i < ro.n; i++) {
        eo_team_agg_add(ro.side[ro.owner[i]] == EO_BALANCE_A ? &a : &b, &ro.s[i], 1.0);
        lo = ro.s[i].mu < lo ? ro.s[i].mu : lo;
        hi = ro.s[i].mu > hi ? ro.s[i].mu : hi;
    }
    eo_match m = {.team_size = k, .exact = ro.exact, .spread = hi - lo};
    m.p_a = eo_model_predict(p->model, &a, &b, ro.field);
    /* The other models' quality is 1 - |2 P(A) - 1| (eo_model_quality()'s contract): not
     * worth a second prediction per match. */
    m.quality =
        p->gaussian ? eo_model_quality(p->model, &a, &b, ro.field) : 1.0 - fabs(2.0 * m.p_a - 1.0);
    /* Judged by the step of the group's longest wait (docs/MATCHMAKING.md, "The matcher"). */
    uint32_t old = g->t[0];
    for (int i = 1; i < g->count; i++)
        old = eo__match_older(p, g->t[i], old) ? g->t[i] : old;
    int64_t oldest = p->at[p->age[old]];
    eo_match_step st;
    eo__match_step(p, p->now - oldest, &st);
    if (fabs(m.p_a - 0.5) > st.p_max || (p->gaussian && m.quality < st.quality_min)) {
        p->rejected++;
        return 0;
    }
    m.region = best_region(p, g);
    m.map = ro.map;
    m.oldest = oldest;
    return record(p, g, &ro, &m);
}
