/* The matchmaking simulation's world and timeline (eo_mmsim.h; docs/MATCHMAKING.md, "The
 * matcher in a simulated day"): each simulated second, matches end (rated, their groups queue
 * again or leave), groups arrive, impatient groups leave, the policy's pass runs every
 * interval, and pending matches start on free instances. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/numeric.h"
#include "core/round_internal.h"
#include "evenodds/eo_sim.h"
#include "mmsim_internal.h"

/* The world's random streams (eo__mmsim_unif()). */
enum {
    S_SKILL = 1,
    S_ARRIVE,
    S_WHO,
    S_PATIENCE,
    S_CONTINUE,
    S_LENGTH,
    S_OUTCOME,
    S_LATENCY,
    S_HISTORY
};

#define DAY 86400
#define PEAK 72000 /* 20:00 UTC: the arrivals' peak */

double eo__mmsim_unif(uint64_t seed, uint64_t stream, uint64_t a, uint64_t b)
{
    uint64_t h = eo__mix64(eo__mix64(eo__mix64(seed ^ eo__mix64(stream)) ^ a) ^ b);
    return (double)(h >> 11) * 0x1.0p-53;
}

double eo__mmsim_latency(const eo__msim *s, const eo__mgrp *g, int r)
{
    double worst = 0.0;
    for (int j = 0; j < g->size; j++)
        worst = s->pl[g->member[j]].lat[r] > worst ? s->pl[g->member[j]].lat[r] : worst;
    return worst;
}

/* ---- configuration ------------------------------------------------------------------------ */

const char *eo_mmsim_policy_name(eo_mmsim_policy p)
{
    static const char *const names[] = {"ours", "fcfs", "fixed"};
    return p >= 0 && p < EO_MMSIM_POLICIES ? names[p] : NULL;
}

void eo_mmsim_config_default(eo_mmsim_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->team_size = 6;
    c->online = 300;
    c->party_share = 0.2;
    c->party_max = 3;
    c->day_swing = 0.5;
    c->population = 3000;
    c->newcomers = 0.1;
    c->history = 200;
    c->skill_sd = 60;
    c->scale = 400.0 / 2.302585092994046;
    c->regions = 3;
    c->instances = 16;
    c->patience = 300;
    c->continue_p = 0.7;
    c->match_min = 300;
    c->match_max = 900;
    c->interval = 1;
    c->warmup = DAY;
    c->duration = DAY;
    c->start = 1763856000; /* a midnight, UTC */
    (void)eo_match_config_default(6, &c->match);
    for (int i = 0; i < c->match.nsteps; i++)
        c->match.steps[i].latency_ms = c->match.steps[i].after >= 30   ? 250
                                       : c->match.steps[i].after >= 10 ? 150
                                                                       : 80;
    static const double win[] = {100, 200, 400};
    static const int64_t after[] = {0, 10, 30};
    c->fixed_steps = 3;
    for (int i = 0; i < 3; i++)
        c->fixed_window[i] = win[i], c->fixed_after[i] = after[i];
    c->fixed_latency = 150;
    c->elo_windows = true;
}

static int check_fixed(const eo_mmsim_config *c, eo_round_error *err)
{
    if (c->fixed_steps < 1 || c->fixed_steps > EO_MATCH_STEPS_MAX)
        return eo__fail(err, "fixed_steps", "1 to %d steps", EO_MATCH_STEPS_MAX);
    for (int i = 0; i < c->fixed_steps; i++) {
        char f[64];
        if (i == 0 ? c->fixed_after[0] != 0 : c->fixed_after[i] <= c->fixed_after[i - 1]) {
            snprintf(f, sizeof f, "fixed_after[%d]", i);
            return eo__fail(err, f, "0 first, then increasing");
        }
        if (!isfinite(c->fixed_window[i]) || c->fixed_window[i] < 0) {
            snprintf(f, sizeof f, "fixed_window[%d]", i);
            return eo__fail(err, f, "must be a finite number >= 0");
        }
    }
    if (!isfinite(c->fixed_latency) || c->fixed_latency < 0)
        return eo__fail(err, "fixed_latency", "must be a finite number of ms >= 0 (0: none)");
    return 0;
}

int eo_mmsim_config_check(const eo_mmsim_config *c, eo_round_error *err)
{
    struct {
        bool bad;
        const char *field, *rule;
    } r[] = {
        {c->team_size < 1 || c->team_size > EO_MATCH_TEAM_MAX, "team_size", "1 to 32"},
        {!(c->online > 0 && c->online <= 1e6), "online", "a number in (0, 1e6]"},
        {!(c->party_share >= 0 && c->party_share <= 1), "party_share", "a number in [0, 1]"},
        {c->party_max < 2 || c->party_max > EO__GROUP_MAX || c->party_max > c->team_size,
         "party_max", "2 to 3, at most team_size"},
        {!(c->day_swing >= 0 && c->day_swing < 1), "day_swing", "a number in [0, 1)"},
        {c->population < 4 * c->online || c->population > 10000000u, "population",
         "at least 4 x online, at most 10,000,000"},
        {!(c->newcomers >= 0 && c->newcomers < 1), "newcomers", "a number in [0, 1)"},
        {c->history > 100000, "history", "at most 100,000 matches per player"},
        {!(c->skill_sd > 0 && c->skill_sd < 1e6), "skill_sd", "a number in (0, 1e6)"},
        {!(c->scale > 0 && c->scale < 1e9), "scale", "a number in (0, 1e9)"},
        {c->regions < 1 || c->regions > EO_MMSIM_REGIONS_MAX, "regions", "1 to 8"},
        {c->instances < 1 || c->instances > 100000, "instances", "1 to 100,000 per region"},
        {!(c->patience > 0 && c->patience < 1e7), "patience", "seconds in (0, 1e7)"},
        {!(c->continue_p >= 0 && c->continue_p < 1), "continue_p", "a number in [0, 1)"},
        {c->match_min < 1 || c->match_max < c->match_min || c->match_max > DAY, "match_min",
         "1 <= match_min <= match_max <= 86400"},
        {c->interval < 1 || c->interval > 3600, "interval", "1 to 3600 seconds"},
        {c->warmup < 0 || c->warmup > 100 * DAY, "warmup", "0 to 100 days in seconds"},
        {c->duration < 1 || c->duration > 100 * DAY, "duration", "1 s to 100 days"},
        {c->start < 0 || c->start > INT64_C(100000000000), "start", "Unix seconds"},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].bad)
            return eo__fail(err, r[i].field, "must be %s", r[i].rule);
    eo_match_config m = c->match;
    m.team_size = c->team_size;
    m.nregions = c->regions;
    eo_round_error e;
    if (eo_match_config_check(&m, &e) != 0) {
        char f[sizeof e.field];
        snprintf(f, sizeof f, "match.%.56s", e.field);
        return eo__fail(err, f, "%s", e.message);
    }
    return check_fixed(c, err);
}

/* ---- the world ---------------------------------------------------------------------------- */

/* A normal(0, 1) draw by Marsaglia's polar method (log and sqrt only: the same bits everywhere),
 * from stream @p stream and counter @p a. */
static double normal(uint64_t seed, uint64_t stream, uint64_t a)
{
    for (uint64_t t = 0;; t++) {
        double u = 2.0 * eo__mmsim_unif(seed, stream, a, 2 * t) - 1.0;
        double v = 2.0 * eo__mmsim_unif(seed, stream, a, 2 * t + 1) - 1.0;
        double q = u * u + v * v;
        if (q > 0.0 && q < 1.0)
            return u * sqrt(-2.0 * eo__log(q) / q);
    }
}

static int make_players(eo__msim *s)
{
    const eo_mmsim_config *c = s->c;
    s->pl = calloc(c->population, sizeof *s->pl);
    if (s->pl == NULL)
        return EO_ENOMEM;
    eo_rating_view v;
    eo_pool_new_player_view(s->pool, c->start, &v);
    for (uint32_t i = 0; i < c->population; i++) {
        eo__mplayer *p = &s->pl[i];
        p->skill = c->skill_sd * normal(c->seed, S_SKILL, i);
        p->mu = v.mu, p->sigma = v.sigma, p->rounds = v.rounds;
        for (int r = 0; r < c->regions; r++) {
            double u = eo__mmsim_unif(c->seed, S_LATENCY, i, (uint64_t)r);
            p->lat[r] = (int)(i % (uint32_t)c->regions) == r ? 20 + 40 * u : 90 + 130 * u;
        }
    }
    return 0;
}

/* Arrivals per second at @p t: the mean that keeps c->online players online, on a triangle
 * over the day. A group's time online is its matches' (queue, then play) until it leaves;
 * 30 s of queueing is assumed here, and the report measures what happened. */
static double arrival_rate(const eo_mmsim_config *c, int64_t t)
{
    double size = 1.0 + c->party_share * c->party_max / 2.0; /* parties: 2..max, uniform */
    double stay = (30.0 + (double)(c->match_min + c->match_max) / 2.0) / (1.0 - c->continue_p);
    double mean = c->online / (size * stay);
    int64_t d = ((t % DAY) - PEAK + DAY) % DAY;
    double dist = (double)(d > DAY / 2 ? DAY - d : d); /* seconds from the peak, <= 12 h */
    return mean * (1.0 + c->day_swing * (1.0 - dist / (DAY / 4.0)));
}

/* The first offline player from @p i on (wrapping), or UINT32_MAX. */
static uint32_t offline_from(const eo__msim *s, uint32_t i)
{
    for (uint32_t k = 0; k < s->c->population; k++) {
        uint32_t j = (i + k) % s->c->population;
        if (!s->pl[j].online)
            return j;
    }
    return UINT32_MAX;
}

/* Queues group @p g (its players online) as a new ticket. */
static int enqueue(eo__msim *s, eo__mgrp g)
{
    const eo_mmsim_config *c = s->c;
    eo__mplayer *lead = &s->pl[g.member[0]];
    /* Patience: gamma of shape 2 (two exponentials of half the mean), so few leave at once. */
    double u = eo__mmsim_unif(c->seed, S_PATIENCE, g.member[0], 2 * (uint64_t)lead->tickets);
    double v = eo__mmsim_unif(c->seed, S_PATIENCE, g.member[0], 2 * (uint64_t)lead->tickets + 1);
    lead->tickets++;
    g.key = ++s->serial;
    g.created = s->now;
    g.deadline = s->now + 1 + (int64_t)(-c->patience / 2 * (eo__log(1.0 - u) + eo__log(1.0 - v)));
    eo__mgrp *q = eo__grow(s->queue, &s->cap_q, s->nq + 1, sizeof *q);
    if (q == NULL)
        return EO_ENOMEM;
    s->queue = q;
    s->queue[s->nq++] = g;
    for (int j = 0; j < g.size; j++)
        s->pl[g.member[j]].online = true;
    if (s->now >= s->measure_from) {
        s->rep.tickets++;
        s->party_tickets += g.size > 1;
    }
    return 0;
}

/* This second's arrivals: a Poisson count, each a solo or a party of offline players. */
static int arrive(eo__msim *s)
{
    const eo_mmsim_config *c = s->c;
    uint64_t t = (uint64_t)s->now;
    double lambda = arrival_rate(c, s->now), u = eo__mmsim_unif(c->seed, S_ARRIVE, t, 0);
    double p = eo__exp(-lambda), cdf = p;
    int n = 0;
    while (u > cdf && n < 1000)
        n++, p *= lambda / n, cdf += p;
    for (int a = 0; a < n; a++) {
        eo__mgrp g = {0};
        double v = eo__mmsim_unif(c->seed, S_ARRIVE, t, 1 + (uint64_t)a);
        int size = 1;
        if (v < c->party_share)
            size = 2 + (int)(v / c->party_share * (c->party_max - 1));
        for (int m = 0; m < size; m++) {
            double w = eo__mmsim_unif(c->seed, S_WHO, t, (uint64_t)a * 4 + (uint64_t)m);
            uint32_t who = offline_from(s, (uint32_t)(w * c->population));
            if (who == UINT32_MAX)
                break;
            s->pl[who].online = true; /* chosen: the next member is someone else */
            g.member[g.size++] = who;
        }
        int rc = g.size > 0 ? enqueue(s, g) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static void leave(eo__msim *s, const eo__mgrp *g)
{
    for (int j = 0; j < g->size; j++)
        s->pl[g->member[j]].online = false;
}

/* Groups past their patience leave the queue. */
static void give_up(eo__msim *s)
{
    size_t w = 0;
    for (size_t i = 0; i < s->nq; i++) {
        const eo__mgrp *g = &s->queue[i];
        if (g->deadline > s->now) {
            s->queue[w++] = *g;
            continue;
        }
        leave(s, g);
        if (s->now >= s->measure_from)
            s->rep.abandoned += (uint64_t)g->size;
    }
    s->nq = w;
}

int eo__mmsim_form(eo__msim *s, const size_t *qi, const uint8_t *team, int n, int region)
{
    eo__mrun *r = eo__grow(s->runs, &s->cap_run, s->nrun + 1, sizeof *r);
    if (r == NULL)
        return EO_ENOMEM;
    s->runs = r;
    r = &s->runs[s->nrun++];
    memset(r, 0, sizeof *r);
    r->region = region;
    r->ngroups = n;
    for (int i = 0; i < n; i++) {
        r->g[i] = s->queue[qi[i]];
        r->team[i] = team[i];
    }
    return 0;
}

/* ---- matches ------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The figures of a match that starts now: waits, true and predicted P(A), spreads, parties. */
static int count_start(eo__msim *s, const eo__mrun *r, double p_true)
{
    eo_team_agg a = {0}, b = {0};
    double lo = INFINITY, hi = -INFINITY, tlo = INFINITY, thi = -INFINITY;
    for (int i = 0; i < r->ngroups; i++) {
        const eo__mgrp *g = &r->g[i];
        int side = -1;
        for (int j = 0; j < g->size; j++) {
            const eo__mplayer *p = &s->pl[g->member[j]];
            eo_strength st = {p->mu, p->sigma * p->sigma};
            eo_team_agg_add(r->team[i] == EO_BALANCE_A ? &a : &b, &st, 1.0);
            lo = p->mu < lo ? p->mu : lo, hi = p->mu > hi ? p->mu : hi;
            tlo = p->skill < tlo ? p->skill : tlo, thi = p->skill > thi ? p->skill : thi;
            double *w = eo__grow(s->waits, &s->cap_waits, s->nwaits + 1, sizeof *w);
            if (w == NULL)
                return EO_ENOMEM;
            s->waits = w;
            s->waits[s->nwaits++] = (double)(s->now - g->created);
            /* Every member's team is its group's entry: a party split would show here. */
            if (side >= 0 && side != r->team[i])
                s->rep.parties_split++;
            side = r->team[i];
        }
    }
    double p_model = eo_model_predict(eo_pool_model(s->pool), &a, &b, 0.0);
    double fav = p_true > 0.5 ? p_true : 1.0 - p_true, y = r->a_wins ? 1.0 : 0.0;
    s->rep.matches++;
    s->rep.stomps += fav > 0.8;
    s->sum_dev += fabs(p_true - 0.5);
    s->sum_spread += hi - lo;
    s->sum_true_spread += thi - tlo;
    s->sum_brier += (p_model - y) * (p_model - y);
    return 0;
}

/* Pending matches start, in the order formed, on free instances of their regions. */
static int start_pending(eo__msim *s)
{
    const eo_mmsim_config *c = s->c;
    for (size_t i = 0; i < s->nrun; i++) {
        eo__mrun *r = &s->runs[i];
        if (r->running || s->busy[r->region] >= c->instances)
            continue;
        double diff = 0.0;
        for (int g = 0; g < r->ngroups; g++)
            for (int j = 0; j < r->g[g].size; j++)
                diff += (r->team[g] == EO_BALANCE_A ? 1 : -1) * s->pl[r->g[g].member[j]].skill;
        double p_true = eo_sim_p_true(diff, c->scale, 0.0);
        uint64_t m = ++s->mserial;
        r->a_wins = eo__mmsim_unif(c->seed, S_OUTCOME, m, 0) < p_true;
        r->end = s->now + c->match_min +
                 (int64_t)(eo__mmsim_unif(c->seed, S_LENGTH, m, 0) *
                           (double)(c->match_max - c->match_min + 1));
        r->running = true;
        s->busy[r->region]++;
        int rc = s->now >= s->measure_from ? count_start(s, r, p_true) : 0;
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int handle_of(eo__msim *s, uint32_t i, eo_player_handle *h)
{
    eo__mplayer *p = &s->pl[i];
    if (!p->known) {
        char id[16];
        snprintf(id, sizeof id, "p%07u", (unsigned)i);
        int rc = eo_pool_handle(s->pool, id, &p->h);
        if (rc != 0)
            return rc;
        p->known = true;
    }
    *h = p->h;
    return 0;
}

/* Rates players who[0..na) (A) against who[na..na+nb) (B), the round ending at @p at, and
 * takes their new ratings. */
static int rate_teams(eo__msim *s, const uint32_t *who, size_t na, size_t nb, bool a_wins,
                      int64_t at)
{
    eo_player_handle h[2 * EO_MATCH_TEAM_MAX] = {0};
    for (size_t i = 0; i < na + nb; i++) {
        int rc = handle_of(s, who[i], &h[i]);
        if (rc != 0)
            return rc;
    }
    eo_model_update up[2 * EO_MATCH_TEAM_MAX];
    eo_round_result res;
    int rc = eo_pool_apply_handles(s->pool, h, na, h + na, nb, a_wins ? EO_WIN_A : EO_WIN_B, at,
                                   &res, up);
    for (size_t i = 0; rc == 0 && i < na + nb; i++) {
        eo__mplayer *p = &s->pl[who[i]];
        p->mu = up[i].mu, p->sigma = up[i].sigma, p->rounds++;
    }
    return rc;
}

/* Rates a match that ended. */
static int rate(eo__msim *s, const eo__mrun *r)
{
    uint32_t who[2 * EO_MATCH_TEAM_MAX];
    size_t n[2] = {0, 0}, x = 0;
    for (uint8_t side = EO_BALANCE_A; side <= EO_BALANCE_B; side++)
        for (int g = 0; g < r->ngroups; g++)
            for (int j = 0; j < r->g[g].size && r->team[g] == side; j++) {
                who[x++] = r->g[g].member[j];
                n[side - EO_BALANCE_A]++;
            }
    return rate_teams(s, who, n[0], n[1], r->a_wins, r->end);
}

/* The pool's past: c->history rated matches per established player (the first
 * population × (1 − newcomers)), random teams among them, one a second before the start. */
static int play_history(eo__msim *s)
{
    const eo_mmsim_config *c = s->c;
    uint32_t est = c->population - (uint32_t)(c->newcomers * c->population);
    int k = c->team_size;
    if (c->history == 0 || est < (uint32_t)(2 * k))
        return 0;
    uint64_t rounds = (uint64_t)c->history * est / (uint64_t)(2 * k);
    for (uint64_t i = 0; i < rounds; i++) {
        uint32_t who[2 * EO_MATCH_TEAM_MAX];
        double diff = 0.0;
        for (int j = 0, tries = 0; j < 2 * k; tries++) {
            uint32_t w = (uint32_t)(eo__mmsim_unif(c->seed, S_HISTORY, i, (uint64_t)tries) * est);
            int dup = 0;
            for (int x = 0; x < j; x++)
                dup |= who[x] == w;
            if (dup)
                continue;
            who[j] = w;
            diff += (j < k ? 1 : -1) * s->pl[w].skill;
            j++;
        }
        bool a_wins =
            eo__mmsim_unif(c->seed, S_HISTORY, i, UINT64_MAX) < eo_sim_p_true(diff, c->scale, 0.0);
        int rc = rate_teams(s, who, (size_t)k, (size_t)k, a_wins, c->start - (int64_t)(rounds - i));
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Windows on the Elo scale moved to the pool's model (eo_mmsim_config.elo_windows). */
static int convert_windows(eo__msim *s, eo_mmsim_config *cc, eo_round_error *err)
{
    if (!cc->elo_windows)
        return 0;
    double f = eo_match_model_scale(eo_pool_model(s->pool), cc->team_size);
    if (f <= 0.0 || eo_match_config_scale(&cc->match, f) != 0)
        return eo__fail(err, "elo_windows", "the model has no Elo-scale equivalent");
    for (int i = 0; i < cc->fixed_steps; i++)
        cc->fixed_window[i] *= f;
    return 0;
}

/* Matches that end now: rated; each group queues again or leaves. */
static int finish(eo__msim *s)
{
    size_t w = 0;
    int rc = 0;
    for (size_t i = 0; i < s->nrun; i++) {
        eo__mrun *r = &s->runs[i];
        if (!r->running || r->end > s->now || rc != 0) {
            if (w != i)
                s->runs[w] = *r;
            w++;
            continue;
        }
        s->busy[r->region]--;
        rc = rate(s, r);
        for (int g = 0; g < r->ngroups && rc == 0; g++) {
            eo__mplayer *lead = &s->pl[r->g[g].member[0]];
            if (eo__mmsim_unif(s->c->seed, S_CONTINUE, r->g[g].member[0], lead->matches++) <
                s->c->continue_p)
                rc = enqueue(s, r->g[g]);
            else
                leave(s, &r->g[g]);
        }
    }
    s->nrun = w;
    return rc;
}

/* ---- the timeline ------------------------------------------------------------------------- */

static void tally_second(eo__msim *s)
{
    double online = 0.0;
    for (size_t i = 0; i < s->nq; i++)
        online += s->queue[i].size;
    for (size_t i = 0; i < s->nrun; i++)
        for (int g = 0; g < s->runs[i].ngroups; g++)
            online += s->runs[i].g[g].size;
    s->online_seconds += online;
    for (int r = 0; r < s->c->regions; r++)
        s->busy_seconds += s->busy[r];
}

static void report(eo__msim *s, eo_mmsim_report *out)
{
    const eo_mmsim_config *c = s->c;
    eo_mmsim_report *r = &s->rep;
    r->policy = s->policy;
    qsort(s->waits, s->nwaits, sizeof *s->waits, cmp_double);
    double *pct[] = {&r->wait_p50, &r->wait_p95, &r->wait_p99};
    const double q[] = {0.50, 0.95, 0.99};
    for (int i = 0; i < 3; i++) /* nearest rank */
        *pct[i] = s->nwaits ? s->waits[(size_t)ceil(q[i] * (double)s->nwaits) - 1] : 0.0;
    double m = r->matches ? (double)r->matches : 1.0;
    r->stomps /= m;
    r->mean_dev = s->sum_dev / m;
    r->mean_spread = s->sum_spread / m;
    r->mean_true_spread = s->sum_true_spread / m;
    r->brier = s->sum_brier / m;
    r->party_tickets = r->tickets ? (double)s->party_tickets / (double)r->tickets : 0.0;
    r->utilisation = s->busy_seconds / ((double)c->instances * c->regions * (double)c->duration);
    r->online_mean = s->online_seconds / (double)c->duration;
    *out = *r;
}

static int loop(eo__msim *s, eo_mmsim_progress_fn progress, void *arg)
{
    const eo_mmsim_config *c = s->c;
    int64_t total = c->warmup + c->duration;
    s->measure_from = c->start + c->warmup;
    int rc = 0;
    for (int64_t t = 0; t < total && rc == 0; t++) {
        s->now = c->start + t;
        if ((rc = finish(s)) != 0 || (rc = arrive(s)) != 0)
            break;
        give_up(s);
        if (t % c->interval == 0 && (rc = eo__mmsim_pass(s)) != 0)
            break;
        rc = start_pending(s);
        if (s->now >= s->measure_from)
            tally_second(s);
        if (progress != NULL && t % 3600 == 0)
            progress(arg, (double)t / (double)total);
    }
    return rc;
}

int eo_mmsim_run(const eo_mmsim_config *c, const eo_pool_config *pool, eo_mmsim_policy policy,
                 eo_mmsim_progress_fn progress, void *arg, eo_mmsim_report *out,
                 eo_round_error *err)
{
    if (c == NULL || pool == NULL || out == NULL)
        return eo__fail(err, c == NULL ? "config" : pool == NULL ? "pool" : "out", "missing");
    if (policy < 0 || policy >= EO_MMSIM_POLICIES)
        return eo__fail(err, "policy", "must be ours, fcfs or fixed");
    int rc = eo_mmsim_config_check(c, err);
    if (rc != 0)
        return rc;
    eo_mmsim_config cc = *c; /* the queue's team size and regions are the world's */
    cc.match.team_size = c->team_size;
    cc.match.nregions = c->regions;
    eo__msim s;
    memset(&s, 0, sizeof s);
    s.c = &cc;
    s.policy = policy;
    if ((s.ws = eo_match_ws_new()) == NULL)
        return EO_ENOMEM;
    rc = eo_pool_create(pool, &s.pool);
    if (rc == 0 && (rc = convert_windows(&s, &cc, err)) != 0) {
        eo_pool_destroy(s.pool);
        eo_match_ws_free(s.ws);
        return rc;
    }
    if (rc == 0 && (rc = make_players(&s)) == 0 && (rc = play_history(&s)) == 0 &&
        (rc = loop(&s, progress, arg)) == 0) {
        report(&s, out);
        if (progress != NULL)
            progress(arg, 1.0);
    }
    if (rc != 0 && rc != EO_ENOMEM)
        eo__fail(err, "mmsim", "the simulation failed: %s", eo_strerror(rc));
    eo_pool_destroy(s.pool);
    eo_match_ws_free(s.ws);
    free(s.pl);
    free(s.queue);
    free(s.runs);
    free(s.waits);
    return rc;
}
