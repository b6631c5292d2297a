/* The matcher (eo_match.h; rules in docs/MATCHMAKING.md, "The matcher").
 *
 * Hand-made queues state why the answer is the one expected next to them; random queues are
 * checked for the invariants every pass must keep, recomputed here from the inputs: every
 * ticket placed at most once, parties whole on one team, teams of equal size within the
 * seed's step, each match within |P(A) - 0.5| of the model's own prediction recomputed from
 * the teams, and the same inputs giving the same bits. */
#include <math.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_match.h"
#include "models.h"
/* the teams' search, checked against brute force */
#include "core/match/match_internal.h"

#define T0 INT64_C(1763800000)

/* ---- helpers ---------------------------------------------------------------------------- */

/* A queue under test: tickets whose players live in a fixed pool. */
typedef struct queue {
    eo_match_ticket t[4096];
    eo_match_player pl[8192];
    double lat[8192][4];
    size_t n, np;
} queue;

static queue *queue_new(void)
{
    queue *q = calloc(1, sizeof *q);
    assert_non_null(q);
    return q;
}

/* Adds a ticket of @p size players all rated @p mu (sigma 0, 100 rounds: settled). */
static eo_match_player *add(queue *q, uint64_t key, int64_t created, size_t size, double mu)
{
    assert_true(q->n < 4096 && q->np + size <= 8192);
    eo_match_player *p = &q->pl[q->np];
    for (size_t i = 0; i < size; i++)
        p[i] = (eo_match_player){.mu = mu, .sigma = 0.0, .rounds = 100, .latency = NULL};
    q->t[q->n++] =
        (eo_match_ticket){.key = key, .created_at = created, .players = p, .nplayers = size};
    q->np += size;
    return p;
}

/* One step: window, |P - 0.5| bound, everything else open. */
static void one_step(eo_match_config *c, int team_size, double window, double p_max)
{
    assert_int_equal(eo_match_config_default(team_size, c), 0);
    c->nsteps = 1;
    c->steps[0] = (eo_match_step){.after = 0, .window = window, .p_max = p_max};
    c->calib_rounds = 0;
    c->calib_window = 0.0;
    assert_int_equal(eo_match_config_check(c, NULL), 0);
}

static eo_match_result *pass(const eo_match_config *c, const eo_model_ctx *m, const queue *q,
                             const eo_match_backfill *bf, size_t nbf, int64_t now)
{
    eo_match_result *r = NULL;
    eo_round_error err;
    int rc = eo_match_pass(c, m, q->t, q->n, bf, nbf, now, &r, &err);
    if (rc != 0)
        fail_msg("eo_match_pass: %d %s: %s", rc, err.field, err.message);
    assert_non_null(r);
    return r;
}

/* The invariants of any pass (file comment), recomputed from the inputs. */
static void check_invariants(const eo_match_config *c, const eo_model_ctx *m, const queue *q,
                             const eo_match_result *r, int64_t now)
{
    char *seen = calloc(q->n ? q->n : 1, 1);
    assert_non_null(seen);
    size_t placed = 0;
    for (size_t i = 0; i < r->nentries; i++) {
        assert_true(r->entries[i].ticket < q->n);
        assert_int_equal(seen[r->entries[i].ticket], 0); /* one match or fill at most */
        seen[r->entries[i].ticket] = 1;
        assert_true(r->entries[i].team == EO_BALANCE_A || r->entries[i].team == EO_BALANCE_B);
        placed++;
    }
    assert_int_equal(r->waiting, q->n - placed);
    for (size_t i = 0; i < r->nmatches; i++) {
        const eo_match *x = &r->matches[i];
        eo_team_agg a = {0}, b = {0};
        int na = 0, nb = 0;
        int64_t oldest = INT64_MAX;
        for (size_t e = x->first; e < x->first + x->count; e++) {
            const eo_match_ticket *t = &q->t[r->entries[e].ticket];
            for (size_t j = 0; j < t->nplayers; j++) { /* a party is one entry: whole */
                eo_strength s = {t->players[j].mu, t->players[j].sigma * t->players[j].sigma};
                eo_team_agg_add(r->entries[e].team == EO_BALANCE_A ? &a : &b, &s, 1.0);
            }
            *(r->entries[e].team == EO_BALANCE_A ? &na : &nb) += (int)t->nplayers;
            oldest = t->created_at < oldest ? t->created_at : oldest;
        }
        assert_int_equal(na, x->team_size);
        assert_int_equal(nb, x->team_size);
        assert_int_equal(x->oldest, oldest);
        eo_match_step st;
        eo_match_step_at(c, now - oldest, &st); /* the group's longest wait judges it */
        assert_true(x->team_size >= 1 && x->team_size <= c->team_size);
        double field = x->map >= 0 ? c->map_field[x->map] : 0.0;
        double p = eo_model_predict(m, &a, &b, field);
        assert_true(fabs(p - x->p_a) < 1e-12);
        assert_true(fabs(p - 0.5) <= st.p_max + 1e-12);
        assert_true(x->map >= -1 && x->map < c->nmaps);
        assert_true(x->region >= -1 && x->region < c->nregions);
    }
    free(seen);
}

/* Field by field (structs have padding): the same inputs give the same bits. */
static void same_result(const eo_match_result *x, const eo_match_result *y)
{
    assert_int_equal(x->nmatches, y->nmatches);
    assert_int_equal(x->nentries, y->nentries);
    assert_int_equal(x->nfills, y->nfills);
    assert_int_equal(x->waiting, y->waiting);
    assert_int_equal(x->rejected, y->rejected);
    for (size_t i = 0; i < x->nmatches; i++) {
        const eo_match *a = &x->matches[i], *b = &y->matches[i];
        assert_true(a->first == b->first && a->count == b->count && a->team_size == b->team_size &&
                    a->region == b->region && a->map == b->map && a->oldest == b->oldest &&
                    a->exact == b->exact);
        assert_memory_equal(&a->p_a, &b->p_a, sizeof a->p_a);
        assert_memory_equal(&a->quality, &b->quality, sizeof a->quality);
        assert_memory_equal(&a->spread, &b->spread, sizeof a->spread);
    }
    for (size_t i = 0; i < x->nentries; i++)
        assert_true(x->entries[i].ticket == y->entries[i].ticket &&
                    x->entries[i].team == y->entries[i].team);
}

static uint64_t rng(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return (double)(rng(s) >> 11) * 0x1.0p-53;
}

/* ---- configuration ----------------------------------------------------------------------- */

static void test_config_checks(void **state)
{
    (void)state;
    eo_match_config c, d;
    eo_round_error err;
    assert_int_equal(eo_match_config_default(6, &c), 0);
    assert_int_equal(eo_match_config_check(&c, &err), 0);
    assert_int_equal(eo_match_config_default(0, &c), EO_EINVAL);
    assert_int_equal(eo_match_config_default(EO_MATCH_TEAM_MAX + 1, &c), EO_EINVAL);
    assert_int_equal(eo_match_config_default(6, &c), 0);
    d = c, d.team_size = 0;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "team_size");
    d = c, d.steps[0].after = 5;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[0].after");
    d = c, d.steps[2].after = d.steps[1].after;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[2].after");
    d = c, d.steps[1].p_max = 0.6;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[1].p_max");
    d = c, d.steps[3].window = NAN;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[3].window");
    d = c, d.steps[0].team_min = 7;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[0].team_min");
    d = c, d.steps[4].quality_min = -0.1;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[4].quality_min");
    d = c, d.steps[0].latency_ms = -1;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[0].latency_ms");
    d = c, d.nsteps = 0;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps");
    d = c, d.nmaps = 2, d.map_field[1] = INFINITY;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "map_field[1]");
    d = c, d.nregions = EO_MATCH_REGIONS_MAX + 1;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "nregions");
    d = c, d.sigma_z = -1;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "sigma_z");
    d = c, d.calib_window = NAN;
    assert_int_equal(eo_match_config_check(&d, &err), EO_EINVAL);
    assert_string_equal(err.field, "calib_window");

    /* Scaling: windows, calib_window and calib_sigma, nothing else. */
    d = c, d.calib_sigma = 300;
    assert_int_equal(eo_match_config_scale(&d, 0.5), 0);
    assert_true(d.steps[4].window == c.steps[4].window * 0.5);
    assert_true(d.calib_window == c.calib_window * 0.5 && d.calib_sigma == 150);
    assert_true(d.steps[4].p_max == c.steps[4].p_max && d.sigma_z == c.sigma_z);
    assert_int_equal(eo_match_config_scale(&d, 0.0), EO_EINVAL);
    assert_int_equal(eo_match_config_scale(&d, NAN), EO_EINVAL);
}

static void test_step_at(void **state)
{
    (void)state;
    eo_match_config c;
    assert_int_equal(eo_match_config_default(4, &c), 0);
    c.nsteps = 2;
    c.steps[0] = (eo_match_step){.after = 0,
                                 .window = 100,
                                 .latency_ms = 50,
                                 .p_max = 0.1,
                                 .quality_min = 0.6,
                                 .team_min = 0};
    c.steps[1] = (eo_match_step){.after = 100,
                                 .window = 300,
                                 .latency_ms = 150,
                                 .p_max = 0.3,
                                 .quality_min = 0.2,
                                 .team_min = 2};
    assert_int_equal(eo_match_config_check(&c, NULL), 0);
    eo_match_step s;
    eo_match_step_at(&c, -5, &s); /* negative waits count as 0 */
    assert_true(s.window == 100 && s.team_min == 4);
    eo_match_step_at(&c, 50, &s); /* held */
    assert_true(s.window == 100 && s.latency_ms == 50 && s.p_max == 0.1 && s.team_min == 4);
    eo_match_step_at(&c, 100, &s);
    assert_true(s.window == 300 && s.team_min == 2);
    eo_match_step_at(&c, 10000, &s);
    assert_true(s.window == 300 && s.quality_min == 0.2);
    c.linear = true; /* halfway: halfway values, the held step's team_min */
    eo_match_step_at(&c, 50, &s);
    assert_true(fabs(s.window - 200) < 1e-9 && fabs(s.latency_ms - 100) < 1e-9);
    assert_true(fabs(s.p_max - 0.2) < 1e-12 && fabs(s.quality_min - 0.4) < 1e-12);
    assert_int_equal(s.team_min, 4);
    c.steps[1].latency_ms = 0; /* no limit later: no invented limit in between */
    eo_match_step_at(&c, 50, &s);
    assert_true(s.latency_ms == 50);
}

/* ---- formation --------------------------------------------------------------------------- */

/* Four solos close together make one 2v2; the best split pairs 1000 with 1030 against the two
 * in between (sums 2030 and 2030: P = 0.5 exactly under Elo's team sum). */
static void test_one_match(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.1);
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0, 1, 1010);
    add(q, 3, T0, 1, 1020);
    add(q, 4, T0, 1, 1030);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 5);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->waiting, 0);
    assert_int_equal(r->rejected, 0);
    const eo_match *x = &r->matches[0];
    assert_int_equal(x->count, 4);
    assert_true(fabs(x->p_a - 0.5) < 1e-12);
    assert_true(x->spread == 30.0 && x->region == -1 && x->map == -1 && x->exact == 1);
    uint8_t team[4];
    for (size_t e = 0; e < 4; e++)
        team[r->entries[e].ticket] = r->entries[e].team;
    assert_int_equal(team[0], team[3]);
    assert_int_equal(team[1], team[2]);
    assert_int_not_equal(team[0], team[1]);
    check_invariants(&c, m, q, r, T0 + 5);
    eo_match_result_free(r);
    /* An empty queue is a pass with nothing in it. */
    q->n = 0;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches + r->nfills + r->nentries + r->waiting, 0);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Oldest first: five solos of one rating for a 2v2; the youngest waits. Among two of the same
 * age, the smaller key goes first. */
static void test_order(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.1);
    queue *q = queue_new();
    add(q, 50, T0 + 4, 1, 1000); /* youngest */
    add(q, 10, T0 + 1, 1, 1000);
    add(q, 11, T0 + 0, 1, 1000);
    add(q, 13, T0 + 2, 1, 1000);
    add(q, 12, T0 + 2, 1, 1000); /* same age as key 13, smaller key */
    add(q, 14, T0 + 2, 1, 1000); /* same age, largest key: waits */
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->waiting, 2);
    char in[6] = {0};
    for (size_t e = 0; e < r->nentries; e++)
        in[r->entries[e].ticket] = 1;
    assert_int_equal(in[0], 0);
    assert_int_equal(in[5], 0);
    assert_true(in[1] && in[2] && in[3] && in[4]);
    assert_int_equal(r->matches[0].oldest, T0);
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Two clusters 300 apart, two tickets in each: no 2v2 within a window of 50, one when the
 * seed has waited into the step whose window is 400. */
static void test_widening(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 50, 0.5);
    c.nsteps = 2;
    c.steps[1] = (eo_match_step){.after = 60, .window = 400, .p_max = 0.5};
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0 + 30, 1, 1000);
    add(q, 3, T0 + 30, 1, 1300);
    add(q, 4, T0 + 30, 1, 1300);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 59);
    assert_int_equal(r->nmatches, 0);
    assert_int_equal(r->waiting, 4);
    eo_match_result_free(r);
    r = pass(&c, m, q, NULL, 0, T0 + 60); /* ticket 1 has waited 60 s: window 400 */
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->matches[0].oldest, T0);
    /* Each team has one of each cluster (the balancer's best split). */
    assert_true(fabs(r->matches[0].p_a - 0.5) < 1e-12);
    check_invariants(&c, m, q, r, T0 + 60);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* A party of two at 1400 with two solos at 1000: every split has the party on one side, so
 * P(A) is Elo's (team strength: the mean, by default) for a difference of 400 or -400: refused
 * at p_max 0.1, counted as rejected; accepted when the bound allows it. */
static void test_quality_threshold(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 1000, 0.1);
    queue *q = queue_new();
    add(q, 1, T0, 2, 1400);
    add(q, 2, T0, 1, 1000);
    add(q, 3, T0, 1, 1000);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 0);
    assert_int_equal(r->rejected, 3); /* the same group, refused for each of its 3 seeds */
    assert_int_equal(r->waiting, 3);
    eo_match_result_free(r);
    double p = 1.0 / (1.0 + pow(10.0, -400.0 / 400.0)); /* 0.909 */
    c.steps[0].p_max = 0.41;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    assert_true(fabs(fabs(r->matches[0].p_a - 0.5) - (p - 0.5)) < 1e-12);
    check_invariants(&c, m, q, r, T0);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Parties are whole: sizes 3, 3, 2, 2, 1, 1 fill a 6v6 only as {3,2,1} and {3,2,1} (3+3 on one
 * side would leave 2+2+1+1 = 6 on the other, also whole: the balancer picks the better). A
 * party of 3 with parties of 2, 2 and 2 and solos 1, 1, 1 is another mix. */
static void test_parties_whole(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 6, 200, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 3, 1000);
    add(q, 2, T0, 3, 1100);
    add(q, 3, T0, 2, 1050);
    add(q, 4, T0, 2, 1060);
    add(q, 5, T0, 1, 1040);
    add(q, 6, T0, 1, 1070);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->matches[0].count, 6);
    check_invariants(&c, m, q, r, T0);
    eo_match_result_free(r);

    /* Parties 5 and 5 and solos 1 and 1 can make 6 and 6; parties 5, 4 and 3 (12 players)
     * cannot be cut into two sixes: the gather skips what would make it impossible. */
    q->n = q->np = 0;
    add(q, 1, T0, 5, 1000);
    add(q, 2, T0, 4, 1000);
    add(q, 3, T0, 3, 1000);
    add(q, 4, T0 + 1, 5, 1000);
    add(q, 5, T0 + 1, 1, 1000);
    add(q, 6, T0 + 1, 1, 1000);
    r = pass(&c, m, q, NULL, 0, T0 + 2);
    assert_int_equal(r->nmatches, 1);
    check_invariants(&c, m, q, r, T0 + 2);
    char in[6] = {0};
    for (size_t e = 0; e < r->nentries; e++)
        in[r->entries[e].ticket] = 1;
    /* Seed: the 5 (oldest, key 1). The greedy walk takes the 4 next (9 players, still
     * splittable as 5+1 | 4+2), then neither the 3 nor the other 5 fits and the solos make 11;
     * the search finds the first combination in order that fits: 5, 5, 1, 1 (5+1 | 5+1). */
    assert_true(in[0] && in[3] && in[4] && in[5] && !in[1] && !in[2]);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Fills @p q with @p n random tickets for teams of @p ts: parties of 1-3 (at most ts), ratings
 * N(1500, 300) times @p scale, arrivals over 3 minutes before T0 + 180, latencies to three
 * regions (one in twenty cannot play in one), deviations when @p sigma, 0-39 rounds. */
static void random_queue(queue *q, int n, int ts, uint64_t s, double scale, bool sigma)
{
    for (int i = 0; i < n; i++) {
        double u = unif(&s);
        size_t size = u < 0.8 ? 1 : u < 0.9 ? 2 : 3;
        if ((int)size > ts)
            size = 1;
        double mu = (1500 + 300 * (unif(&s) + unif(&s) + unif(&s) - 1.5) * 2) * scale;
        eo_match_player *p = add(q, rng(&s), T0 + (int64_t)(rng(&s) % 180), size, mu);
        for (size_t j = 0; j < size; j++) {
            size_t x = (size_t)(p - q->pl) + j;
            for (int rg = 0; rg < 3; rg++)
                q->lat[x][rg] = unif(&s) < 0.05 ? -1 : 10 + 150 * unif(&s);
            p[j].latency = q->lat[x];
            p[j].sigma = sigma ? 50 * scale * unif(&s) : 0;
            p[j].rounds = (uint32_t)(rng(&s) % 40);
        }
    }
}

/* Random queues: 6v6 and 2v2, parties of 1-3, ratings N(1500, 300), arrival over 3 minutes,
 * three regions; the invariants hold and two passes over the same inputs agree bit for bit. */
static void test_random_invariants(void **state)
{
    (void)state;
    const char *models[] = {"elo", "trueskill", "glicko2", "synelo"};
    for (size_t mi = 0; mi < 4; mi++) {
        eo_model_ctx *m = test_model_named(models[mi]);
        double scale = mi == 1 ? 25.0 / 1500.0 : 1.0;
        for (int ts = 2; ts <= 6; ts += 4) {
            eo_match_config c;
            assert_int_equal(eo_match_config_default(ts, &c), 0);
            assert_int_equal(eo_match_config_scale(&c, scale), 0);
            c.nregions = 3;
            c.nmaps = 4;
            for (int i = 0; i < 4; i++)
                c.map_field[i] = 0.05 * (i - 1.5);
            c.steps[2].latency_ms = 80;
            c.steps[2].team_min = ts - 1;
            queue *q = queue_new();
            random_queue(q, 1500, ts, 7 + mi * 10 + (uint64_t)ts, scale, mi == 1 || mi == 2);
            eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 200);
            assert_true(r->nmatches > 10);
            check_invariants(&c, m, q, r, T0 + 200);
            eo_match_result *r2 = pass(&c, m, q, NULL, 0, T0 + 200);
            assert_int_equal(r->nmatches, r2->nmatches);
            assert_int_equal(r->nentries, r2->nentries);
            same_result(r, r2);
            eo_match_result_free(r2);
            eo_match_result_free(r);
            free(q);
        }
        eo_model_release(m);
    }
}

/* ---- calibration, regions, sizes, backfill ----------------------------------------------- */

/* A newcomer 250 below three settled players at 1000 is outside a window of 100, inside it
 * with calib_window 200 (window 100 + 200 >= 250); once settled (rounds >= calib_rounds) he is
 * out again. */
static void test_calibration_window(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0, 1, 1000);
    add(q, 3, T0, 1, 1000);
    eo_match_player *newb = add(q, 4, T0, 1, 750);
    newb->rounds = 3;
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 0);
    eo_match_result_free(r);
    c.calib_rounds = 10;
    c.calib_window = 200;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    check_invariants(&c, m, q, r, T0);
    eo_match_result_free(r);
    newb->rounds = 10;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 0);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* TrueSkill: three settled players (sigma 1) and a newcomer (sigma 8.33, 0 rounds) of equal
 * means. His variance alone pulls quality below 0.8; capped at calib_sigma 2 it does not, and
 * the match's reported quality is the capped one. */
static void test_calibration_quality(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("trueskill");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    c.steps[0].quality_min = 0.8;
    queue *q = queue_new();
    for (uint64_t k = 1; k <= 3; k++)
        add(q, k, T0, 1, 25.0)->sigma = 1.0;
    eo_match_player *newb = add(q, 4, T0, 1, 25.0);
    newb->sigma = 25.0 / 3.0;
    newb->rounds = 0;
    eo_team_agg a = {0}, b = {0};
    eo_strength settled = {25.0, 1.0}, fresh = {25.0, newb->sigma * newb->sigma};
    eo_strength capped = {25.0, 4.0};
    eo_team_agg_add(&a, &settled, 1), eo_team_agg_add(&a, &settled, 1);
    eo_team_agg_add(&b, &settled, 1), eo_team_agg_add(&b, &fresh, 1);
    assert_true(eo_model_quality(m, &a, &b, 0) < 0.8); /* the premise */
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 0);
    assert_int_equal(r->rejected, 4); /* one group, refused for each of its 4 seeds */
    eo_match_result_free(r);
    c.calib_rounds = 10;
    c.calib_sigma = 2.0;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    b = (eo_team_agg){0};
    eo_team_agg_add(&b, &settled, 1), eo_team_agg_add(&b, &capped, 1);
    double qa = eo_model_quality(m, &a, &b, 0), qb = eo_model_quality(m, &b, &a, 0);
    assert_true(fabs(r->matches[0].quality - qa) < 1e-12 ||
                fabs(r->matches[0].quality - qb) < 1e-12);
    assert_true(r->matches[0].quality >= 0.8);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Regions: two regions; tickets 1-4 reach both, region 1 faster for all but the party, whose
 * one member cannot play in region 1 (its latency is -1). A party plays where all of it can,
 * so the match is in region 0; a latency limit of 50 ms that ticket 4 exceeds in region 0
 * keeps it out, and no match forms. */
static void test_regions(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    c.nregions = 2;
    queue *q = queue_new();
    static double fast1[2] = {40, 10}, only0[2] = {30, -1}, slow0[2] = {60, 5};
    eo_match_player *p = add(q, 1, T0, 2, 1000);
    p[0].latency = fast1;
    p[1].latency = only0;
    add(q, 2, T0, 1, 1000)->latency = fast1;
    add(q, 3, T0, 1, 1000)->latency = slow0;
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->matches[0].region, 0);
    eo_match_result_free(r);
    /* Without the party's second member's constraint, region 1 has the least worst latency
     * (10 and 5 against 40 and 60). */
    p[1].latency = fast1;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->matches[0].region, 1);
    eo_match_result_free(r);
    p[1].latency = only0;
    c.steps[0].latency_ms = 50;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 0);
    eo_match_result_free(r);
    /* A player without measurements plays anywhere. */
    q->t[2].players = &q->pl[q->np];
    add(q, 9, T0, 1, 1000);
    q->n--;
    r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->matches[0].region, 0);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* The tickets of @p q in no match or fill of @p r, as a mask by index. */
static unsigned waiting_mask(const queue *q, const eo_match_result *r)
{
    unsigned placed = 0;
    for (size_t e = 0; e < r->nentries; e++)
        placed |= 1u << r->entries[e].ticket;
    return ((1u << q->n) - 1) & ~placed;
}

/* Older first among equals (docs/MATCHMAKING.md, "The matcher"): the walk from a seed meets
 * tickets by distance from its rating and, as near, oldest first, on either side of it.
 * 1v1, S at 1000 the oldest, two at 990: the older plays, though the younger is next to S in
 * rating order (tickets of one rating are kept oldest first, and a walk downwards met the
 * youngest of them first). 3v3, S at 1000, three at 990 and three at 1010 with ages
 * interleaved: the five oldest play, the youngest waits. */
static void test_order_among_equals(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 1, 100, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0 + 1, 1, 990);
    add(q, 3, T0 + 2, 1, 990);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(waiting_mask(q, r), 1u << 2);
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    one_step(&c, 3, 100, 0.5);
    q->n = q->np = 0;
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0 + 1, 1, 990);
    add(q, 3, T0 + 3, 1, 990);
    add(q, 4, T0 + 6, 1, 990); /* the youngest */
    add(q, 5, T0 + 2, 1, 1010);
    add(q, 6, T0 + 4, 1, 1010);
    add(q, 7, T0 + 5, 1, 1010);
    r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(waiting_mask(q, r), 1u << 3);
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Backfill meets the waiting tickets in the same order: 2 slots near 1000, three solos at 990;
 * the two older fill them. */
static void test_backfill_order(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 3, 100, 0.5);
    queue *q = queue_new();
    add(q, 1, T0 + 1, 1, 990);
    add(q, 2, T0 + 3, 1, 990); /* the youngest */
    add(q, 3, T0 + 2, 1, 990);
    eo_match_backfill bf = {
        .key = 1, .team = EO_BALANCE_A, .slots = 2, .rating = 1000, .region = -1, .created_at = T0};
    eo_match_result *r = pass(&c, m, q, &bf, 1, T0 + 10);
    assert_int_equal(r->nfills, 1);
    assert_int_equal(r->fills[0].players, 2);
    assert_int_equal(waiting_mask(q, r), 1u << 1);
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* "As near" is exact: below the seed at 1, a rating of -2^-60 is 1 + 2^-60 away, which rounds
 * to the 1 of the rating 2 above; the one above is nearer and plays, though younger. */
static void test_order_exact_distance(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 1, 100, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 1, 1.0);
    add(q, 2, T0 + 1, 1, -0x1p-60);
    add(q, 3, T0 + 2, 1, 2.0);
    assert_true(1.0 - -0x1p-60 == 2.0 - 1.0); /* as rounded */
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(waiting_mask(q, r), 1u << 1);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* The age order within one second: 42 solos of one rating and one age, keys a permutation of
 * 100..140 and one of 2^50 (so that the sorts' coarse keys, the keys' highest bits, tell the
 * 41 apart by none of theirs: one run, sorted exactly). 1v1 seeds go oldest first, smaller key
 * first among one age, and each meets the next in that order: matches pair keys 100 and 101,
 * 102 and 103, ..., 140 and 2^50. */
static void test_order_long_run(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 1, 100, 0.5);
    queue *q = queue_new();
    for (uint64_t i = 0; i < 41; i++)
        add(q, 100 + i * 17 % 41, T0, 1, 1000);
    add(q, UINT64_C(1) << 50, T0, 1, 1000);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 21);
    assert_int_equal(r->waiting, 0);
    for (size_t x = 0; x < r->nmatches; x++) {
        const eo_match *mt = &r->matches[x];
        uint64_t k0 = q->t[r->entries[mt->first].ticket].key;
        uint64_t k1 = q->t[r->entries[mt->first + 1].ticket].key;
        uint64_t lo = k0 < k1 ? k0 : k1, hi = k0 < k1 ? k1 : k0;
        assert_int_equal(lo, 100 + 2 * x);
        assert_int_equal(hi, x < 20 ? lo + 1 : UINT64_C(1) << 50);
    }
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Ages that span more than 32 bits of seconds still go oldest first, then by key: 1v1, one
 * rating; T0 − 2^40 (key 9), T0 − 2^35 − 1 (key 5: its age's low 32 bits are all ones, the
 * others' all zeros), then three at T0 with keys 8, 7, 3: the pairs are the two oldest, then
 * keys 3 and 7; key 8 waits. */
static void test_order_wide_ages(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 1, 100, 0.5);
    queue *q = queue_new();
    add(q, 8, T0, 1, 1000);
    add(q, 9, T0 - (INT64_C(1) << 40), 1, 1000);
    add(q, 7, T0, 1, 1000);
    add(q, 5, T0 - (INT64_C(1) << 35) - 1, 1, 1000);
    add(q, 3, T0, 1, 1000);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
    assert_int_equal(r->nmatches, 2);
    assert_int_equal(waiting_mask(q, r), 1u << 0);
    assert_int_equal(r->matches[0].oldest, T0 - (INT64_C(1) << 40));
    unsigned first = 1u << r->entries[0].ticket | 1u << r->entries[1].ticket;
    assert_int_equal(first, 1u << 1 | 1u << 3);
    check_invariants(&c, m, q, r, T0 + 10);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* A walk for a region meets its tickets in the order of the walk over every waiting ticket
 * (docs/MATCHMAKING.md, "The matcher"), whatever the tickets of other regions. 1v1: S at 1000
 * (oldest, region 0); at 990 one in region 0 (T0 + 2) and an older one only in region 1
 * (T0 + 1); at 1010 one in region 0, older (T0 + 1, larger key) or younger (T0 + 3) than the
 * one at 990 in region 0: the older of those two plays. */
static void test_region_ties(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 1, 100, 0.5);
    c.nregions = 2;
    queue *q = queue_new();
    static double in0[2] = {10, -1}, in1[2] = {-1, 10};
    add(q, 1, T0, 1, 1000)->latency = in0;
    add(q, 2, T0 + 2, 1, 990)->latency = in0;
    add(q, 3, T0 + 1, 1, 990)->latency = in1;
    add(q, 4, T0 + 3, 1, 1010)->latency = in0;
    for (int above_older = 1; above_older >= 0; above_older--) {
        q->t[3].created_at = above_older ? T0 + 1 : T0 + 3;
        eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 10);
        assert_int_equal(r->nmatches, 1);
        assert_int_equal(r->matches[0].region, 0);
        assert_int_equal(waiting_mask(q, r), 1u << 2 | (above_older ? 1u << 1 : 1u << 3));
        check_invariants(&c, m, q, r, T0 + 10);
        eo_match_result_free(r);
    }
    free(q);
    eo_model_release(m);
}

/* Smaller teams: three solos cannot make a 2v2; from 30 s of waiting on, team_min 1 lets the
 * two oldest play 1v1 (the youngest waits). */
static void test_team_min(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    c.nsteps = 2;
    c.steps[1] = (eo_match_step){.after = 30, .window = 100, .p_max = 0.5, .team_min = 1};
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0 + 1, 1, 1010);
    add(q, 3, T0 + 2, 1, 1020);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0 + 29);
    assert_int_equal(r->nmatches, 0);
    eo_match_result_free(r);
    r = pass(&c, m, q, NULL, 0, T0 + 30);
    assert_int_equal(r->nmatches, 1);
    assert_int_equal(r->matches[0].team_size, 1);
    assert_int_equal(r->waiting, 1);
    check_invariants(&c, m, q, r, T0 + 30);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Backfill counts players: 3 slots near 1200 take the party of two at 1190 and the solo at
 * 1210 (both 10 away; the party first, its key is smaller), not the party at 1230 nor the solo
 * at 1100 (farther). The second request takes the solo at 1500, outside the first's window. */
static void test_backfill(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 6, 150, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 2, 1190);
    add(q, 2, T0, 1, 1210);
    add(q, 3, T0, 1, 1100);
    add(q, 4, T0, 2, 1230);
    add(q, 5, T0, 1, 1500); /* out of the window */
    eo_match_backfill bf[2] = {
        {.key = 77,
         .team = EO_BALANCE_B,
         .slots = 3,
         .rating = 1200,
         .region = -1,
         .created_at = T0},
        {.key = 78,
         .team = EO_BALANCE_A,
         .slots = 1,
         .rating = 1500,
         .region = -1,
         .created_at = T0 + 1},
    };
    eo_match_result *r = pass(&c, m, q, bf, 2, T0);
    assert_int_equal(r->nfills, 2);
    const eo_match_fill *f = &r->fills[0];
    assert_int_equal(f->backfill, 0);
    assert_int_equal(f->players, 3);
    assert_int_equal(f->count, 2);
    char in[5] = {0};
    for (size_t e = f->first; e < f->first + f->count; e++) {
        in[r->entries[e].ticket] = 1;
        assert_int_equal(r->entries[e].team, EO_BALANCE_B);
    }
    assert_true(in[0] && in[1] && !in[2] && !in[3]); /* 1190 (d 10) and 1210 (d 10): 3 players */
    assert_int_equal(r->fills[1].backfill, 1);
    assert_int_equal(r->entries[r->fills[1].first].ticket, 4);
    assert_int_equal(r->waiting, 2);
    check_invariants(&c, m, q, r, T0);
    eo_match_result_free(r);
    /* Backfill in a region nobody reaches: no fill. */
    c.nregions = 1;
    static double none[1] = {-1};
    for (size_t i = 0; i < q->np; i++)
        q->pl[i].latency = none;
    bf[0].region = 0;
    r = pass(&c, m, q, bf, 1, T0);
    assert_int_equal(r->nfills, 0);
    eo_match_result_free(r);
    free(q);
    eo_model_release(m);
}

/* Maps: the draw stays in range and is a fixed function of the seed ticket and the config's
 * seed; the map's field enters P(A). */
static void test_maps(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    c.nmaps = 3;
    c.map_field[0] = c.map_field[1] = c.map_field[2] = 0.4;
    queue *q = queue_new();
    for (uint64_t k = 1; k <= 4; k++)
        add(q, k, T0, 1, 1000);
    eo_match_result *r = pass(&c, m, q, NULL, 0, T0);
    assert_int_equal(r->nmatches, 1);
    int map = r->matches[0].map;
    assert_true(map >= 0 && map < 3);
    assert_true(r->matches[0].p_a > 0.55); /* equal teams, a field for A */
    check_invariants(&c, m, q, r, T0);
    eo_match_result_free(r);
    int seen[3] = {0};
    for (uint64_t s = 0; s < 60; s++) {
        c.seed = s;
        r = pass(&c, m, q, NULL, 0, T0);
        seen[r->matches[0].map]++;
        eo_match_result_free(r);
    }
    assert_true(seen[0] > 5 && seen[1] > 5 && seen[2] > 5);
    free(q);
    eo_model_release(m);
}

/* ---- teams ------------------------------------------------------------------------------- */

/* The least |D| over every assignment of the tickets to two teams of k, by brute force. */
static int64_t brute_dev(const int64_t *v, const int *size, int m, int k, int64_t field)
{
    int64_t best = INT64_MAX;
    for (uint32_t mask = 0; mask < (1u << m); mask++) {
        int na = 0;
        int64_t d = field;
        for (int i = 0; i < m; i++) {
            bool a = mask >> i & 1;
            na += a ? size[i] : 0;
            d += a ? v[i] : -v[i];
        }
        if (na == k && (d < 0 ? -d : d) < best)
            best = d < 0 ? -d : d;
    }
    return best;
}

/* The matcher's team search (sides.c) on random groups of tickets (parties of 1-3, values
 * spread narrow to wide, a field or none): every answer has k a side, the |D| it claims, and
 * when it says "proven" the brute-force optimum; with a budget of 2 nodes what it answers is
 * still a valid split. */
static void test_sides_exact(void **state)
{
    (void)state;
    uint64_t s = 99;
    int proven = 0;
    for (int rep = 0; rep < 3000; rep++) {
        int k = 1 + (int)(rng(&s) % 6), m = 0, players = 0;
        int64_t v[12];
        int size[12];
        int64_t spread = (int64_t[]){3, 50, 1000}[rep % 3];
        while (players < 2 * k) {
            int sz = unif(&s) < 0.7 ? 1 : 2 + (int)(rng(&s) % 2);
            sz = sz > k || players + sz > 2 * k ? 1 : sz;
            v[m] = 0;
            for (int j = 0; j < sz; j++)
                v[m] += (int64_t)(rng(&s) % (uint64_t)spread);
            size[m++] = sz;
            players += sz;
        }
        int64_t field = rep % 2 ? (int64_t)(rng(&s) % 41) - 20 : 0;
        int64_t best = brute_dev(v, size, m, k, field);
        if (best == INT64_MAX)
            continue; /* parties that fit no split: the gather never sends these */
        for (int budget = 0; budget < 2; budget++) {
            uint8_t side[12];
            int rc = eo__match_sides(v, size, m, k, field, budget ? 2 : 20000, side);
            assert_true(rc == 0 || rc == 1 || (budget && rc == -1));
            if (rc < 0)
                continue; /* nothing found in 2 nodes: the caller asks the balancer */
            int na = 0, nb = 0;
            int64_t d = field;
            for (int i = 0; i < m; i++) {
                assert_true(side[i] == EO_BALANCE_A || side[i] == EO_BALANCE_B);
                *(side[i] == EO_BALANCE_A ? &na : &nb) += size[i];
                d += side[i] == EO_BALANCE_A ? v[i] : -v[i];
            }
            assert_int_equal(na, k);
            assert_int_equal(nb, k);
            if (rc == 1) {
                assert_int_equal(d < 0 ? -d : d, best);
                proven += budget == 0;
            }
        }
    }
    assert_true(proven > 2500); /* within its budget the search proves nearly everything */
}

/* eo_match_model_scale(): Elo with team means is the Elo scale itself; SynElo's Θ = 2400 on
 * team sums gives 2400 / k per player of mean difference; TrueSkill's is far smaller. */
static void test_model_scale(void **state)
{
    (void)state;
    eo_model_ctx *elo = test_model_named("elo"), *syn = test_model_named("synelo");
    eo_model_ctx *ts = test_model_named("trueskill");
    assert_true(fabs(eo_match_model_scale(elo, 6) - 1.0) < 1e-9);
    assert_true(fabs(eo_match_model_scale(syn, 6) - 2400.0 / 6 / (400 / log(10))) < 1e-9);
    assert_true(fabs(eo_match_model_scale(syn, 12) - 2400.0 / 12 / (400 / log(10))) < 1e-9);
    double t = eo_match_model_scale(ts, 6);
    assert_true(t > 0.001 && t < 0.1);
    assert_true(eo_match_model_scale(NULL, 6) == 0.0);
    assert_true(eo_match_model_scale(elo, 0) == 0.0);
    eo_model_release(elo);
    eo_model_release(syn);
    eo_model_release(ts);
}

/* ---- bad input ---------------------------------------------------------------------------- */

/* One work space for passes of every size and shape (regions or none, backfill or none, an
 * empty queue, a bad ticket in between): each gives what eo_match_pass() gives, bit for bit. */
static void test_work_space(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("trueskill");
    eo_match_ws *ws = eo_match_ws_new();
    assert_non_null(ws);
    static const int sizes[] = {1500, 12, 0, 700, 1500, 40};
    for (int round = 0; round < 6; round++) {
        int ts = round % 2 ? 2 : 6;
        eo_match_config c;
        assert_int_equal(eo_match_config_default(ts, &c), 0);
        assert_int_equal(eo_match_config_scale(&c, 25.0 / 1500.0), 0);
        c.nregions = round % 3;
        c.steps[2].latency_ms = 80;
        queue *q = queue_new();
        random_queue(q, sizes[round], ts, 100 + (uint64_t)round, 25.0 / 1500.0, true);
        eo_match_backfill bf[2] = {
            {.key = 1, .team = EO_BALANCE_A, .slots = 1, .rating = 25, .region = -1},
            {.key = 2, .team = EO_BALANCE_B, .slots = ts, .rating = 26, .region = c.nregions - 1}};
        size_t nbf = round == 3 ? 2 : 0;
        eo_match_result *want = pass(&c, m, q, bf, nbf, T0 + 200);
        const eo_match_result *got = NULL;
        eo_round_error err;
        assert_int_equal(eo_match_pass_ws(ws, &c, m, q->t, q->n, bf, nbf, T0 + 200, &got, &err), 0);
        same_result(want, got);
        check_invariants(&c, m, q, got, T0 + 200);
        eo_match_result_free(want);
        if (q->n > 3) { /* a bad ticket: an error, nothing given; the next pass is whole again */
            q->t[3].nplayers = 0;
            assert_int_equal(eo_match_pass_ws(ws, &c, m, q->t, q->n, NULL, 0, T0, &got, &err),
                             EO_EINVAL);
            assert_null(got);
            assert_string_equal(err.field, "tickets[3].players");
        }
        free(q);
    }
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    const eo_match_result *got = (const eo_match_result *)(uintptr_t)1;
    assert_int_equal(eo_match_pass_ws(NULL, &c, m, NULL, 0, NULL, 0, T0, &got, NULL), EO_EINVAL);
    assert_null(got);
    assert_int_equal(eo_match_pass_ws(ws, &c, m, NULL, 0, NULL, 0, T0, NULL, NULL), EO_EINVAL);
    eo_match_ws_free(ws);
    eo_match_ws_free(NULL);
    eo_model_release(m);
}

static void test_bad_input(void **state)
{
    (void)state;
    eo_model_ctx *m = test_model_named("elo");
    eo_match_config c;
    one_step(&c, 2, 100, 0.5);
    queue *q = queue_new();
    add(q, 1, T0, 1, 1000);
    add(q, 2, T0, 3, 1000); /* larger than a team */
    eo_match_result *r = (eo_match_result *)(uintptr_t)1;
    eo_round_error err;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_null(r);
    assert_string_equal(err.field, "tickets[1].players");
    q->t[1].nplayers = 0;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "tickets[1].players");
    q->t[1].nplayers = 2;
    q->pl[2].mu = NAN;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "tickets[1].players[1].mu");
    q->pl[2].mu = 1000;
    q->pl[1].sigma = -1;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "tickets[1].players[0].sigma");
    q->pl[1].sigma = 0;
    eo_match_backfill bf = {.team = EO_BALANCE_A, .slots = 3, .rating = 1000, .region = -1};
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, &bf, 1, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "backfill[0].slots");
    bf.slots = 1, bf.team = 0;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, &bf, 1, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "backfill[0].team");
    bf.team = EO_BALANCE_B, bf.region = 0; /* the queue has no regions */
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, &bf, 1, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "backfill[0].region");
    bf.region = -1, bf.rating = INFINITY;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, &bf, 1, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "backfill[0].rating");
    c.steps[0].p_max = 2;
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "steps[0].p_max");
    c.steps[0].p_max = 0.5;
    assert_int_equal(eo_match_pass(&c, NULL, q->t, q->n, NULL, 0, T0, &r, &err), EO_EINVAL);
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, NULL, &err), EO_EINVAL);
    /* And the good input after all that passes. */
    assert_int_equal(eo_match_pass(&c, m, q->t, q->n, NULL, 0, T0, &r, &err), 0);
    eo_match_result_free(r);
    eo_match_result_free(NULL);
    free(q);
    eo_model_release(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config_checks),
        cmocka_unit_test(test_step_at),
        cmocka_unit_test(test_one_match),
        cmocka_unit_test(test_order),
        cmocka_unit_test(test_order_long_run),
        cmocka_unit_test(test_order_wide_ages),
        cmocka_unit_test(test_widening),
        cmocka_unit_test(test_quality_threshold),
        cmocka_unit_test(test_parties_whole),
        cmocka_unit_test(test_random_invariants),
        cmocka_unit_test(test_calibration_window),
        cmocka_unit_test(test_calibration_quality),
        cmocka_unit_test(test_regions),
        cmocka_unit_test(test_order_among_equals),
        cmocka_unit_test(test_backfill_order),
        cmocka_unit_test(test_order_exact_distance),
        cmocka_unit_test(test_region_ties),
        cmocka_unit_test(test_team_min),
        cmocka_unit_test(test_backfill),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_sides_exact),
        cmocka_unit_test(test_model_scale),
        cmocka_unit_test(test_work_space),
        cmocka_unit_test(test_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
