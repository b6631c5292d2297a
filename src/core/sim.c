/* The simulated world in closed loop (eo_sim.h, docs/SIM.md).
 *
 * Two splitmix64 streams: the world's (skills, drift, arrivals, departures, who shows up, maps,
 * partial play, the outcome's uniforms) and the random balancer's. The world's stream spends
 * the same number of draws every round whatever the teams, so simulations that differ only in
 * balancer or model face the same world. Only + - * /, sqrt (correctly rounded by IEEE 754) and
 * the core's eo__exp/eo__log feed the world, so its bits do not depend on the C library. */
#include "evenodds/eo_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numeric.h"
#include "evenodds/eo_balance.h"
#include "evenodds/eo_split.h"

#define ID_CAP 12        /* "p" + 6 digits + NUL, with room the compiler can prove */
#define MAP_CAP 14       /* "map" + 2 digits + NUL, likewise */
#define ROUND_ID_CAP 48
#define PRESENT_MAX EO_SPLIT_EXACT_MAX

static const char *const skill_names[EO_SIM_SKILL_COUNT] = {"normal", "uniform", "bimodal",
                                                            "skewed"};
static const char *const balancer_names[EO_SIM_BAL_COUNT] = {"random", "alternation", "snake",
                                                             "ours"};

typedef struct acc {
    uint64_t from, rounds, decided, stomps, draws, inexact;
    double brier, brier_true, imbalance;
} acc;

/* What the simulator knows of one player. */
typedef struct player {
    char id[ID_CAP];
    double skill;
    uint64_t stamp;  /* serial of the round the player last showed up in */
    uint32_t rounds; /* rounds played */
    bool present;
} player;

struct eo_sim {
    eo_sim_config c;
    uint64_t world, bal; /* PRNG states */
    eo_pool *pool;
    eo_split_ws *ws;
    uint64_t serial;     /* rounds played */
    int64_t last_end;
    /* players, by creation index; active[0 .. nactive) indexes the present ones */
    size_t nplayers, cap;
    player *pl;
    uint32_t *active;
    size_t nactive;
    /* maps */
    char map_names[EO_SIM_MAPS_MAX][MAP_CAP];
    double map_bias[EO_SIM_MAPS_MAX];
    /* the current round */
    uint32_t queue[PRESENT_MAX];
    uint32_t side[2][EO_SIM_TEAM_MAX];
    eo_member team[2][EO_SIM_TEAM_MAX];
    char round_id[ROUND_ID_CAP];
    eo_round round;
    bool inexact; /* the current round's split is not proven optimal */
    acc window, total;
};

/* splitmix64 (Steele, Lea, Flood 2014). */
static uint64_t next64(uint64_t *st)
{
    uint64_t z = (*st += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static uint32_t below(uint64_t *st, uint32_t n)
{
    return (uint32_t)(((next64(st) >> 32) * (uint64_t)n) >> 32);
}

/* Uniform in [0, 1), 53 bits. */
static double unit(uint64_t *st)
{
    return (double)(next64(st) >> 11) * 0x1p-53;
}

/* Standard normal: Marsaglia's polar method, one value per accepted pair. */
static double normal(uint64_t *st)
{
    for (;;) {
        double u = 2.0 * unit(st) - 1.0, v = 2.0 * unit(st) - 1.0;
        double q = u * u + v * v;
        if (q > 0.0 && q < 1.0)
            return u * sqrt(-2.0 * eo__log(q) / q);
    }
}

/* A draw of the skill distribution with mean 0 and sd 1. */
static double draw_unit_skill(eo_sim *s)
{
    switch (s->c.skill) {
    case EO_SIM_SKILL_UNIFORM:
        return (2.0 * unit(&s->world) - 1.0) * 1.7320508075688772; /* √3 */
    case EO_SIM_SKILL_BIMODAL: {
        double centre = (next64(&s->world) >> 63) ? 0.8 : -0.8;
        return centre + 0.6 * normal(&s->world);
    }
    case EO_SIM_SKILL_SKEWED:
        return -eo__log(1.0 - unit(&s->world)) - 1.0;
    default:
        return normal(&s->world);
    }
}

static double draw_skill(eo_sim *s)
{
    return s->c.skill_mean + s->c.skill_sd * draw_unit_skill(s);
}

/* The index of @p name in names[0 .. n), or n when it is not there (or NULL). */
static unsigned name_index(const char *const *names, unsigned n, const char *name)
{
    unsigned i = 0;
    while (name != NULL && i < n && strcmp(name, names[i]) != 0)
        i++;
    return name != NULL ? i : n;
}

const char *eo_sim_skill_name(eo_sim_skill d)
{
    return (unsigned)d < EO_SIM_SKILL_COUNT ? skill_names[d] : NULL;
}

int eo_sim_skill_parse(const char *name, eo_sim_skill *out)
{
    unsigned i = name_index(skill_names, EO_SIM_SKILL_COUNT, name);
    if (i == EO_SIM_SKILL_COUNT)
        return EO_EINVAL;
    *out = (eo_sim_skill)i;
    return 0;
}

const char *eo_sim_balancer_name(eo_sim_balancer b)
{
    return (unsigned)b < EO_SIM_BAL_COUNT ? balancer_names[b] : NULL;
}

int eo_sim_balancer_parse(const char *name, eo_sim_balancer *out)
{
    unsigned i = name_index(balancer_names, EO_SIM_BAL_COUNT, name);
    if (i == EO_SIM_BAL_COUNT)
        return EO_EINVAL;
    *out = (eo_sim_balancer)i;
    return 0;
}

void eo_sim_config_default(eo_sim_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->players = 1000;
    c->team_min = 12;
    c->team_max = 12;
    c->skill = EO_SIM_SKILL_NORMAL;
    c->skill_sd = 100.0;
    c->scale = 400.0 / 2.302585092994046; /* 400 / ln 10: the Elo curve */
    c->maps = 8;
    c->bias = 0.3;
    c->partial_permille = 100;
    c->draw_permille = 20;
    c->round_seconds = 600;
    c->start = 1763800000;
    c->balancer = EO_SIM_BAL_OURS;
    c->work_limit = EO_SIM_WORK_LIMIT;
}

double eo_sim_p_true(double diff, double scale, double bias)
{
    return 1.0 / (1.0 + eo__exp(-(diff / scale + bias)));
}

double eo_sim_true_field(double bias, double presence, double delta)
{
    return presence != 0.0 ? bias + presence * delta : bias;
}

/* ---- Spearman ---------------------------------------------------------------------------- */

typedef struct keyed {
    double v;
    size_t i;
} keyed;

static int keyed_cmp(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v < b->v ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

/* Ranks 1..n of v into r, ties sharing their mean rank. k is work space of n entries. */
static void ranks(const double *v, size_t n, keyed *k, double *r)
{
    for (size_t i = 0; i < n; i++) {
        k[i].v = v[i];
        k[i].i = i;
    }
    qsort(k, n, sizeof *k, keyed_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && k[j].v == k[i].v)
            j++;
        double mean = (double)(i + 1 + j) / 2.0; /* mean of ranks i+1 .. j */
        for (size_t t = i; t < j; t++)
            r[k[t].i] = mean;
        i = j;
    }
}

int eo_sim_spearman(const double *x, const double *y, size_t n, double *out)
{
    if (out == NULL || (n > 0 && (x == NULL || y == NULL)))
        return EO_EINVAL;
    *out = NAN;
    if (n < 2)
        return 0;
    keyed *k = malloc(n * sizeof *k);
    double *rx = malloc(n * sizeof *rx), *ry = malloc(n * sizeof *ry);
    if (k == NULL || rx == NULL || ry == NULL) {
        free(k);
        free(rx);
        free(ry);
        return EO_ENOMEM;
    }
    ranks(x, n, k, rx);
    ranks(y, n, k, ry);
    double mean = (double)(n + 1) / 2.0; /* mean rank, with or without ties */
    double sxy = 0.0, sxx = 0.0, syy = 0.0;
    for (size_t i = 0; i < n; i++) {
        double a = rx[i] - mean, b = ry[i] - mean;
        sxy += a * b;
        sxx += a * a;
        syy += b * b;
    }
    if (sxx > 0.0 && syy > 0.0)
        *out = sxy / sqrt(sxx * syy);
    free(k);
    free(rx);
    free(ry);
    return 0;
}

/* ---- the world --------------------------------------------------------------------------- */

/* Largest number of players present in a round. */
static uint32_t present_max(const eo_sim_config *c)
{
    uint32_t n = 2 * c->team_max + 1;
    return n < PRESENT_MAX ? n : PRESENT_MAX;
}

static int check_config(const eo_sim_config *c)
{
    if (c->team_min < 2 || c->team_min > c->team_max || c->team_max > EO_SIM_TEAM_MAX)
        return EO_EINVAL;
    if (c->players < present_max(c) || c->players > EO_SIM_PLAYERS_MAX)
        return EO_EINVAL;
    if ((unsigned)c->skill >= EO_SIM_SKILL_COUNT || (unsigned)c->balancer >= EO_SIM_BAL_COUNT)
        return EO_EINVAL;
    if (!(c->skill_sd >= 0.0 && c->skill_sd <= 1e6) || !(fabs(c->skill_mean) <= 1e6) ||
        !(c->scale > 0.0 && c->scale <= 1e9) ||
        !(c->drift >= 0.0 && c->drift <= 1e6) || !(c->bias >= 0.0 && c->bias <= 10.0))
        return EO_EINVAL;
    if (c->arrive_permille > 1000 || c->depart_permille > 1000 || c->partial_permille > 1000 ||
        c->draw_permille > 1000 || c->short_permille > 1000 || !(fabs(c->presence) <= 100.0))
        return EO_EINVAL;
    if (c->maps < 1 || c->maps > EO_SIM_MAPS_MAX || c->round_seconds < 8 ||
        c->round_seconds > 86400 || c->start < 0 || c->start > 100000000000)
        return EO_EINVAL;
    return 0;
}

/* Adds a new present player with a fresh skill. */
static int add_player(eo_sim *s)
{
    if (s->nplayers == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        player *pl = realloc(s->pl, cap * sizeof *pl);
        if (pl == NULL)
            return EO_ENOMEM;
        s->pl = pl;
        uint32_t *active = realloc(s->active, cap * sizeof *active);
        if (active == NULL)
            return EO_ENOMEM;
        s->active = active;
        s->cap = cap;
    }
    size_t i = s->nplayers++;
    player *p = &s->pl[i];
    snprintf(p->id, ID_CAP, "p%06u", (unsigned)(i + 1));
    p->skill = draw_skill(s);
    p->stamp = 0;
    p->rounds = 0;
    p->present = true;
    s->active[s->nactive++] = (uint32_t)i;
    return 0;
}

int eo_sim_create(const eo_sim_config *c, const eo_pool_config *pool_cfg, eo_sim **out)
{
    if (c == NULL || out == NULL || check_config(c) != 0)
        return EO_EINVAL;
    *out = NULL;
    eo_sim *s = calloc(1, sizeof *s);
    if (s == NULL)
        return EO_ENOMEM;
    s->c = *c;
    if (s->c.work_limit == 0)
        s->c.work_limit = EO_SIM_WORK_LIMIT;
    s->world = c->seed;
    s->bal = c->seed ^ 0xD1B54A32D192ED03u;
    eo_pool_config def;
    if (pool_cfg == NULL) {
        eo_pool_config_default(&def);
        pool_cfg = &def;
    }
    int rc = eo_pool_create(pool_cfg, &s->pool);
    if (rc == 0 && c->balancer == EO_SIM_BAL_OURS && (s->ws = eo_split_ws_new()) == NULL)
        rc = EO_ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < c->players; i++)
        rc = add_player(s);
    if (rc != 0) {
        eo_sim_destroy(s);
        return rc;
    }
    for (uint32_t m = 0; m < c->maps; m++) {
        snprintf(s->map_names[m], MAP_CAP, "map%02u", m + 1);
        s->map_bias[m] = (2.0 * unit(&s->world) - 1.0) * c->bias;
    }
    s->window.from = s->total.from = 1;
    *out = s;
    return 0;
}

void eo_sim_destroy(eo_sim *s)
{
    if (s == NULL)
        return;
    eo_pool_destroy(s->pool);
    eo_split_ws_free(s->ws);
    free(s->pl);
    free(s->active);
    free(s);
}

/* ---- teams ------------------------------------------------------------------------------- */

static double mean_rating(const eo_sim *s, uint32_t p)
{
    eo_rating_view v;
    (void)eo_pool_lookup(s->pool, s->pl[p].id, s->last_end, &v); /* unknown: start values */
    return v.mu;
}

/* Sorts q[0..n) by the model's mean, highest first; equal means keep queue order. */
static void sort_by_rating(const eo_sim *s, uint32_t *q, size_t n)
{
    double mu[PRESENT_MAX];
    for (size_t i = 0; i < n; i++)
        mu[i] = mean_rating(s, q[i]);
    for (size_t i = 1; i < n; i++) { /* insertion sort: stable, n <= 64 */
        uint32_t qp = q[i];
        double m = mu[i];
        size_t j = i;
        for (; j > 0 && mu[j - 1] < m; j--) {
            q[j] = q[j - 1];
            mu[j] = mu[j - 1];
        }
        q[j] = qp;
        mu[j] = m;
    }
}

/* Picks for position i of the sorted list: alternation A B A B, snake A B B A A B B A. */
static int draft_side(eo_sim_balancer b, size_t i)
{
    if (b == EO_SIM_BAL_ALTERNATION)
        return (int)(i & 1);
    size_t r = i & 3;
    return r == 1 || r == 2;
}

/* Teams of k from a solver's answer: a[i] and b[i] index the queue copy q. */
static void take_teams(eo_sim *s, const uint32_t *q, const uint16_t *a, const uint16_t *b,
                       size_t k)
{
    for (size_t i = 0; i < k; i++) {
        s->side[0][i] = q[a[i]];
        s->side[1][i] = q[b[i]];
    }
}

/* The balancer `ours` through eo_balance_solve() for size k alone: with the map's field
 * @p field (split units) in the objective |ΣA − ΣB + field| when the pool's bias knows the map,
 * within the world's work limit; or, when the exact splitter gave up (EO_ELIMIT past the work
 * limit), with a work limit of one node, so that its exact search stops at once and its swap
 * local search answers. The local search is seeded from the world's seed and the round number:
 * deterministic, and it draws nothing from either random stream. */
static int form_teams_balance(eo_sim *s, const eo_split_player *sp, size_t n, size_t k,
                              const uint32_t *q, int64_t field, uint64_t work_limit)
{
    eo_balance_player bp[PRESENT_MAX];
    memset(bp, 0, sizeof bp);
    for (size_t i = 0; i < n; i++)
        bp[i].rating = sp[i].rating;
    eo_balance_request req;
    memset(&req, 0, sizeof req);
    req.k_min = req.k_max = (int)k;
    req.field = field;
    req.work_limit = work_limit;
    req.seed = s->c.seed ^ s->serial;
    eo_balance_result *res = NULL;
    int rc = eo_balance_solve(bp, n, &req, &res, NULL);
    if (rc != 0)
        return rc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL;
    const eo_balance_split *x = &res->split[0];
    if (res->count != 1 || x->err != 0 || x->k != (int)k) {
        eo_balance_free(res);
        return EO_EINTERNAL;
    }
    take_teams(s, q, x->a, x->b, k);
    s->inexact = x->exact == 0;
    eo_balance_free(res);
    return 0;
}

/* Forms the teams of k from the n present players in s->queue into s->side for a round on
 * @p map; s->inexact says whether the split is not proven optimal (balancer ours past the
 * work limit). */
static int form_teams(eo_sim *s, size_t n, size_t k, const char *map)
{
    s->inexact = false;
    uint32_t q[PRESENT_MAX];
    memcpy(q, s->queue, n * sizeof *q);
    eo_sim_balancer b = s->c.balancer;
    if (b == EO_SIM_BAL_OURS) {
        const eo_model_ctx *ctx = eo_pool_model(s->pool);
        eo_split_player sp[PRESENT_MAX];
        for (size_t i = 0; i < n; i++)
            sp[i].rating = eo_model_split_rating(ctx, mean_rating(s, q[i]));
        eo_split_options opt;
        memset(&opt, 0, sizeof opt);
        opt.bench = EO_BENCH_SOLVER;
        opt.work_limit = s->c.work_limit;
        /* A pool with a map bias: the balancer evens the teams with the map's field (the
         * pool's current estimate), as the service does for a request that names the map. */
        double fl = 0.0;
        (void)eo_pool_bias_field(s->pool, map, k, k, NULL, &fl);
        int64_t field = eo_model_field_units(ctx, fl, (int)k, 0.0, eo_model_split_unit(ctx));
        if (field != 0)
            return form_teams_balance(s, sp, n, k, q, field, s->c.work_limit);
        eo_splits *res = NULL;
        int rc = eo_split_solve_ws(s->ws, sp, n, &opt, &res);
        if (rc == EO_ELIMIT)
            return form_teams_balance(s, sp, n, k, q, 0, 1);
        if (rc != 0)
            return rc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL;
        const eo_split *x = &res->split[k - 2];
        take_teams(s, q, x->a, x->b, k);
        return 0;
    }
    /* The others: the first 2k of the queue play. */
    if (b == EO_SIM_BAL_RANDOM) {
        for (size_t i = 2 * k - 1; i > 0; i--) { /* Fisher-Yates */
            size_t j = below(&s->bal, (uint32_t)(i + 1));
            uint32_t t = q[i];
            q[i] = q[j];
            q[j] = t;
        }
        for (size_t i = 0; i < k; i++) {
            s->side[0][i] = q[i];
            s->side[1][i] = q[k + i];
        }
        return 0;
    }
    sort_by_rating(s, q, 2 * k);
    size_t na = 0, nb = 0;
    for (size_t i = 0; i < 2 * k; i++) {
        if (draft_side(b, i) == 0)
            s->side[0][na++] = q[i];
        else
            s->side[1][nb++] = q[i];
    }
    return na == k && nb == k ? 0 : EO_EINTERNAL;
}

/* ---- one round --------------------------------------------------------------------------- */

static void remove_active(eo_sim *s, size_t pos)
{
    s->pl[s->active[pos]].present = false;
    s->active[pos] = s->active[--s->nactive];
}

/* Partial play of one seat from the world's stream: always four draws, used or not. */
static void partial(eo_sim *s, eo_member *m)
{
    uint32_t roll = below(&s->world, 1000);
    uint32_t eighths = 1 + below(&s->world, 7);
    uint32_t kind = below(&s->world, 3);
    uint32_t len = s->c.round_seconds;
    uint32_t stay = len * eighths / 8; /* >= 1 as len >= 8 */
    uint32_t offset = below(&s->world, len - stay + 1);
    if (roll >= s->c.partial_permille)
        return;
    if (kind == 0) { /* joined late, stayed to the end */
        m->has = EO_MEMBER_JOINED;
        m->joined = (double)(len - stay);
    } else if (kind == 1) { /* there from the start, left early */
        m->has = EO_MEMBER_LEFT;
        m->left = (double)stay;
    } else { /* joined late and left early */
        m->has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
        m->joined = (double)offset;
        m->left = (double)(offset + stay);
    }
}

/* A side one player short, from the world's stream: three draws whenever short rounds are
 * on (used or not), none otherwise, so worlds without them draw what they always drew. The
 * member at the drawn seat sits out; the side's last member takes his seat. */
static void short_side(eo_sim *s, size_t k)
{
    uint32_t roll = below(&s->world, 1000);
    uint32_t side = below(&s->world, 2);
    uint32_t seat = below(&s->world, (uint32_t)k);
    if (roll >= s->c.short_permille)
        return;
    s->team[side][seat] = s->team[side][k - 1];
    s->side[side][seat] = s->side[side][k - 1];
    s->round.n[side] = k - 1;
}

/* P_true of the round in s->round (members in s->side): the world's truth (eo_sim.h). */
static double true_p(const eo_sim *s, double bias)
{
    const eo_round *r = &s->round;
    double sum[2] = {0.0, 0.0}, pres[2] = {0.0, 0.0};
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < r->n[t]; i++) {
            double w = s->c.times_ignored ? 1.0 : eo_round_member_weight(r, &s->team[t][i]);
            sum[t] += w * s->pl[s->side[t][i]].skill;
            pres[t] += w;
        }
    return eo_sim_p_true(sum[0] - sum[1], s->c.scale,
                         eo_sim_true_field(bias, s->c.presence, pres[0] - pres[1]));
}

static void acc_add(acc *a, const eo_sim_round *r)
{
    double d = r->p_true - 0.5;
    a->rounds++;
    a->inexact += r->inexact;
    a->imbalance += d < 0 ? -d : d;
    a->stomps += r->p_true > 0.8 || r->p_true < 0.2;
    if (r->round->winner == EO_DRAW) {
        a->draws++;
        return;
    }
    double o = r->round->winner == EO_WIN_A ? 1.0 : 0.0;
    a->decided++;
    a->brier += (r->p_model - o) * (r->p_model - o);
    a->brier_true += (r->p_true - o) * (r->p_true - o);
}

int eo_sim_step(eo_sim *s, eo_sim_round *out)
{
    if (s == NULL)
        return EO_EINVAL;
    const eo_sim_config *c = &s->c;
    s->serial++;
    int rc;

    if (c->drift > 0.0)
        for (size_t i = 0; i < s->nactive; i++)
            s->pl[s->active[i]].skill += c->drift * normal(&s->world);
    if (c->arrive_permille > 0 && below(&s->world, 1000) < c->arrive_permille &&
        s->nplayers < EO_SIM_PLAYERS_MAX && (rc = add_player(s)) != 0)
        return rc;
    if (c->depart_permille > 0 && below(&s->world, 1000) < c->depart_permille) {
        size_t pos = below(&s->world, (uint32_t)s->nactive);
        if (s->nactive > present_max(c))
            remove_active(s, pos);
    }

    uint32_t nmin = 2 * c->team_min, nmax = present_max(c);
    size_t n = nmin + below(&s->world, nmax - nmin + 1);
    size_t k = n / 2 < c->team_max ? n / 2 : c->team_max;
    for (size_t i = 0; i < n;) {
        uint32_t p = s->active[below(&s->world, (uint32_t)s->nactive)];
        if (s->pl[p].stamp != s->serial) {
            s->pl[p].stamp = s->serial;
            s->queue[i++] = p;
        }
    }
    uint32_t map = below(&s->world, c->maps);

    if ((rc = form_teams(s, n, k, s->map_names[map])) != 0)
        return rc;

    eo_round *r = &s->round;
    memset(r, 0, sizeof *r);
    snprintf(s->round_id, sizeof s->round_id, "sim%llu:%llu", (unsigned long long)c->seed,
             (unsigned long long)s->serial);
    r->id = s->round_id;
    r->server = NULL;
    r->map = s->map_names[map];
    r->started_at = c->start + (int64_t)(s->serial - 1) * (int64_t)c->round_seconds;
    r->ended_at = r->started_at + (int64_t)c->round_seconds;
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < k; i++) {
            eo_member *m = &s->team[t][i];
            memset(m, 0, sizeof *m);
            m->id = s->pl[s->side[t][i]].id;
            partial(s, m);
        }
        r->team[t] = s->team[t];
        r->n[t] = k;
    }
    if (c->short_permille > 0)
        short_side(s, k);

    eo_sim_round res;
    res.round = r;
    res.bias = s->map_bias[map];
    res.bench = n - r->n[0] - r->n[1];
    res.inexact = s->inexact;
    res.p_true = true_p(s, res.bias);
    double u_draw = unit(&s->world), u_win = unit(&s->world);
    double p_draw = (double)c->draw_permille / 1000.0 * 4.0 * res.p_true * (1.0 - res.p_true);
    r->winner = u_draw < p_draw ? EO_DRAW : u_win < res.p_true ? EO_WIN_A : EO_WIN_B;

    eo_round_result rr;
    if ((rc = eo_pool_apply(s->pool, r, &rr, NULL)) != 0)
        return rc == EO_ENOMEM ? EO_ENOMEM : EO_EINTERNAL;
    res.p_model = rr.p_a;
    s->last_end = r->ended_at;
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < r->n[t]; i++)
            s->pl[s->side[t][i]].rounds++;
    acc_add(&s->window, &res);
    acc_add(&s->total, &res);
    if (out != NULL)
        *out = res;
    return 0;
}

/* ---- reports ----------------------------------------------------------------------------- */

static int report(eo_sim *s, const acc *a, eo_sim_report *out)
{
    memset(out, 0, sizeof *out);
    out->from = a->from;
    out->to = s->serial;
    out->rounds = a->rounds;
    out->decided = a->decided;
    double nr = (double)a->rounds, nd = (double)a->decided;
    out->brier = a->decided ? a->brier / nd : NAN;
    out->brier_true = a->decided ? a->brier_true / nd : NAN;
    out->imbalance = a->rounds ? a->imbalance / nr : NAN;
    out->stomps = a->rounds ? (double)a->stomps / nr : NAN;
    out->draws = a->rounds ? (double)a->draws / nr : NAN;
    out->inexact = a->inexact;
    out->present = s->nactive;
    double *x = malloc((s->nactive ? s->nactive : 1) * sizeof *x);
    double *y = malloc((s->nactive ? s->nactive : 1) * sizeof *y);
    if (x == NULL || y == NULL) {
        free(x);
        free(y);
        return EO_ENOMEM;
    }
    /* In creation order, so the figure does not depend on the order of the active list. */
    size_t m = 0;
    for (size_t p = 0; p < s->nplayers; p++) {
        if (!s->pl[p].present || s->pl[p].rounds == 0)
            continue;
        x[m] = mean_rating(s, (uint32_t)p);
        y[m] = s->pl[p].skill;
        m++;
    }
    out->seen = m;
    int rc = eo_sim_spearman(x, y, m, &out->spearman);
    free(x);
    free(y);
    return rc;
}

int eo_sim_report_window(eo_sim *s, eo_sim_report *out)
{
    if (s == NULL || out == NULL)
        return EO_EINVAL;
    int rc = report(s, &s->window, out);
    memset(&s->window, 0, sizeof s->window);
    s->window.from = s->serial + 1;
    return rc;
}

int eo_sim_report_total(eo_sim *s, eo_sim_report *out)
{
    if (s == NULL || out == NULL)
        return EO_EINVAL;
    return report(s, &s->total, out);
}

const eo_pool *eo_sim_pool(const eo_sim *s)
{
    return s->pool;
}

size_t eo_sim_player_count(const eo_sim *s)
{
    return s->nplayers;
}

int eo_sim_player_get(const eo_sim *s, size_t i, eo_sim_player *out)
{
    if (s == NULL || out == NULL || i >= s->nplayers)
        return EO_EINVAL;
    out->id = s->pl[i].id;
    out->skill = s->pl[i].skill;
    out->present = s->pl[i].present;
    out->rounds = s->pl[i].rounds;
    return 0;
}

int eo_sim_map_get(const eo_sim *s, size_t i, const char **name, double *bias)
{
    if (s == NULL || i >= s->c.maps)
        return EO_EINVAL;
    if (name != NULL)
        *name = s->map_names[i];
    if (bias != NULL)
        *bias = s->map_bias[i];
    return 0;
}
