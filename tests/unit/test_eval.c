/* One-step-ahead evaluation accumulators (eo_eval.h); every expected value worked out by hand
 * from the definitions in docs/EVAL.md, the arithmetic in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_eval.h"

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void empty_is_nan(void **state)
{
    (void)state;
    eo_eval *ev = NULL;
    eo_eval_result r;
    assert_int_equal(eo_eval_create(&ev), 0);
    assert_int_equal(eo_eval_get(ev, &r), 0);
    assert_int_equal(r.scored, 0);
    assert_int_equal(r.all.count, 0);
    assert_int_equal(r.tight.count, 0);
    assert_true(isnan(r.all.logloss) && isnan(r.brier_draws_half) && isnan(r.ece));
    assert_true(isnan(r.tight_margin) && isnan(r.tight.accuracy));
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        assert_int_equal(r.calib[b].count, 0);
        assert_true(isnan(r.calib[b].mean_p) && isnan(r.calib[b].win_rate));
    }
    eo_eval_destroy(ev);
    eo_eval_destroy(NULL);
}

/* Ten scored rounds (P(A), outcome, mean experience); margin = |P − 0.5|:
 *   #1  0.875   A     0   margin .375   bin 8   LL -ln .875  = 0.13353139262452263  B .015625   right
 *   #2  0.75    B     0   margin .25    bin 7   LL -ln .25   = 1.3862943611198906   B .5625     wrong
 *   #3  0.5     A    12   margin 0      bin 5   LL -ln .5    = 0.6931471805599453   B .25       half
 *   #4  0.25    B    12   margin .25    bin 2   LL -ln .75   = 0.2876820724517809   B .0625     right
 *   #5  0.625   draw 60   (left out; enters brier_draws_half as (.625 − .5)² = .015625)
 *   #6  0.625   B    60   margin .125   bin 6   LL -ln .375  = 0.9808292530117262   B .390625   wrong
 *   #7  0.375   A    60   margin .125   bin 3   LL -ln .375  = 0.9808292530117262   B .390625   wrong
 *   #8  1.0     A   100   margin .5     bin 9   LL -ln(1 − 1e-15) ≈ 1e-15           B 0         right
 *   #9  0.0625  B     5   margin .4375  bin 0   LL -ln .9375 = 0.06453852113757118  B .00390625 right
 *   #10 0.625   A     5   margin .125   bin 6   LL -ln .625  = 0.4700036292457356   B .140625   right
 * Counted 9: LL sum 4.996855663162899 → 0.5552061847958777; Brier sum 1.81640625 → /9 =
 * 0.20182291666666666; right 5.5 → 5.5/9. With the draw: (1.81640625 + .015625)/10 = 0.183203125.
 * Tightest ceil(9/5) = 2: #3 (margin 0), then the tie at .125 (#6, #7, #10) goes to the earliest,
 * #6: accuracy (.5 + 0)/2 = .25, LL (ln 2 − ln .375)/2 = 0.8369882167858358, Brier
 * (.25 + .390625)/2 = .3203125, largest margin .125.
 * Bins: 0 {1, .0625, 0}, 2 {1, .25, 0}, 3 {1, .375, 1}, 5 {1, .5, 1}, 6 {2, .625, .5},
 * 7 {1, .75, 0}, 8 {1, .875, 1}, 9 {1, 1, 1}; the rest empty. ECE = (.0625 + .25 + .625 + .5 +
 * 2·.125 + .75 + .125 + 0)/9 = 2.5625/9 = 0.2847222222222222.
 * Experience: [0, 10): #1 #2 #9 #10: right 3/4, Brier .72265625/4 = .1806640625;
 * [10, 50): #3 #4: right 1.5/2, Brier .3125/2 = .15625;
 * [50, ∞): #6 #7 #8 and the draw: right 1/3, Brier .78125/3, 1 draw. */
static void ten_rounds(void **state)
{
    (void)state;
    static const struct {
        double p;
        eo_winner w;
        double e;
    } in[] = {{0.875, EO_WIN_A, 0},  {0.75, EO_WIN_B, 0},   {0.5, EO_WIN_A, 12},
              {0.25, EO_WIN_B, 12},  {0.625, EO_DRAW, 60},  {0.625, EO_WIN_B, 60},
              {0.375, EO_WIN_A, 60}, {1.0, EO_WIN_A, 100},  {0.0625, EO_WIN_B, 5},
              {0.625, EO_WIN_A, 5}};
    eo_eval *ev = NULL;
    assert_int_equal(eo_eval_create(&ev), 0);
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++)
        assert_int_equal(eo_eval_add(ev, in[i].p, in[i].w, in[i].e), 0);
    eo_eval_result r;
    assert_int_equal(eo_eval_get(ev, &r), 0);

    assert_int_equal(r.scored, 10);
    assert_int_equal(r.draws, 1);
    assert_int_equal(r.all.count, 9);
    near(r.all.logloss, 0.5552061847958777, 1e-15);
    near(r.all.brier, 0.20182291666666666, 1e-16);
    near(r.all.accuracy, 5.5 / 9, 1e-16);
    assert_true(r.brier_draws_half == 0.183203125);

    assert_int_equal(r.tight.count, 2);
    assert_true(r.tight.accuracy == 0.25);
    near(r.tight.logloss, 0.8369882167858358, 1e-15);
    assert_true(r.tight.brier == 0.3203125);
    assert_true(r.tight_margin == 0.125);

    static const struct {
        uint64_t n;
        double p, w;
    } bins[EO_EVAL_CALIB_BINS] = {{1, .0625, 0}, {0, 0, 0},    {1, .25, 0},  {1, .375, 1},
                                  {0, 0, 0},     {1, .5, 1},   {2, .625, .5}, {1, .75, 0},
                                  {1, .875, 1},  {1, 1.0, 1}};
    uint64_t total = 0;
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        assert_true(r.calib[b].from == b / 10.0 && r.calib[b].to == (b + 1) / 10.0);
        assert_int_equal(r.calib[b].count, bins[b].n);
        total += r.calib[b].count;
        if (bins[b].n == 0) {
            assert_true(isnan(r.calib[b].mean_p) && isnan(r.calib[b].win_rate));
            continue;
        }
        assert_true(r.calib[b].mean_p == bins[b].p);
        assert_true(r.calib[b].win_rate == bins[b].w);
    }
    assert_int_equal(total, r.all.count);
    near(r.ece, 0.2847222222222222, 1e-16);

    assert_true(r.exp[0].from == 0.0 && r.exp[0].to == 10.0);
    assert_true(r.exp[1].from == 10.0 && r.exp[1].to == 50.0);
    assert_true(r.exp[2].from == 50.0 && isinf(r.exp[2].to));
    assert_int_equal(r.exp[0].m.count, 4);
    assert_int_equal(r.exp[0].draws, 0);
    assert_true(r.exp[0].m.accuracy == 0.75);
    assert_true(r.exp[0].m.brier == 0.1806640625);
    assert_int_equal(r.exp[1].m.count, 2);
    assert_true(r.exp[1].m.accuracy == 0.75);
    assert_true(r.exp[1].m.brier == 0.15625);
    assert_int_equal(r.exp[2].m.count, 3);
    assert_int_equal(r.exp[2].draws, 1);
    near(r.exp[2].m.accuracy, 1.0 / 3, 1e-16);
    near(r.exp[2].m.brier, 0.78125 / 3, 1e-16);
    eo_eval_destroy(ev);
}

/* The tight share rounds up: 1 counted round gives 1 tight round, 5 give 1, 6 give 2. */
static void tight_rounds_up(void **state)
{
    (void)state;
    eo_eval *ev = NULL;
    eo_eval_result r;
    assert_int_equal(eo_eval_create(&ev), 0);
    assert_int_equal(eo_eval_add(ev, 0.75, EO_WIN_A, 0), 0);
    assert_int_equal(eo_eval_get(ev, &r), 0);
    assert_int_equal(r.tight.count, 1);
    assert_true(r.tight_margin == 0.25 && r.tight.accuracy == 1.0);
    /* P 0.9, 0.2, 0.5625 (B won: the tightest, wrong), 0.1: five rounds, still one tight round. */
    assert_int_equal(eo_eval_add(ev, 0.9, EO_WIN_A, 0), 0);
    assert_int_equal(eo_eval_add(ev, 0.2, EO_WIN_B, 0), 0);
    assert_int_equal(eo_eval_add(ev, 0.5625, EO_WIN_B, 0), 0);
    assert_int_equal(eo_eval_add(ev, 0.1, EO_WIN_B, 0), 0);
    assert_int_equal(eo_eval_get(ev, &r), 0);
    assert_int_equal(r.tight.count, 1);
    assert_true(r.tight_margin == 0.0625 && r.tight.accuracy == 0.0);
    /* A sixth (a draw does not count) then a seventh: ceil(6/5) = 2, the next tightest the
     * first, 0.75 (margin .25, right). */
    assert_int_equal(eo_eval_add(ev, 0.5, EO_DRAW, 0), 0);
    assert_int_equal(eo_eval_add(ev, 0.125, EO_WIN_B, 0), 0);
    assert_int_equal(eo_eval_get(ev, &r), 0);
    assert_int_equal(r.all.count, 6);
    assert_int_equal(r.tight.count, 2);
    assert_true(r.tight_margin == 0.25 && r.tight.accuracy == 0.5);
    eo_eval_destroy(ev);
}

static void bad_input(void **state)
{
    (void)state;
    eo_eval *ev = NULL;
    assert_int_equal(eo_eval_create(NULL), EO_EINVAL);
    assert_int_equal(eo_eval_create(&ev), 0);
    assert_int_equal(eo_eval_add(ev, -0.01, EO_WIN_A, 0), EO_EINVAL);
    assert_int_equal(eo_eval_add(ev, 1.01, EO_WIN_A, 0), EO_EINVAL);
    assert_int_equal(eo_eval_add(ev, NAN, EO_WIN_A, 0), EO_EINVAL);
    assert_int_equal(eo_eval_add(ev, 0.5, (eo_winner)3, 0), EO_EINVAL);
    assert_int_equal(eo_eval_add(ev, 0.5, EO_WIN_A, -1), EO_EINVAL);
    assert_int_equal(eo_eval_add(ev, 0.5, EO_WIN_A, NAN), EO_EINVAL);
    eo_eval_result r;
    assert_int_equal(eo_eval_get(ev, &r), 0);
    assert_int_equal(r.scored, 0); /* nothing was added */
    assert_int_equal(eo_eval_get(NULL, &r), EO_EINVAL);
    double e = -1;
    eo_round empty;
    memset(&empty, 0, sizeof empty);
    assert_int_equal(eo_eval_players(ev, &empty, &e), EO_EINVAL);
    assert_true(e == -1);
    eo_eval_destroy(ev);
}

/* Builds a round of the given ids (A's then B's); the members point at the strings. */
static void make_round(eo_round *r, eo_member *mem, const char *const *a, size_t na,
                       const char *const *b, size_t nb)
{
    memset(r, 0, sizeof *r);
    memset(mem, 0, (na + nb) * sizeof *mem);
    for (size_t i = 0; i < na + nb; i++)
        mem[i].id = (char *)(i < na ? a[i] : b[i - na]);
    r->team[0] = mem;
    r->team[1] = mem + na;
    r->n[0] = na;
    r->n[1] = nb;
}

/* Experience counts earlier appearances, either team:
 *   r1 {a, b} v {c, d}: all new, mean 0; then a b c d have 1.
 *   r2 {a, e} v {c}:    a 1, e 0, c 1: mean 2/3; then a 2, c 2, e 1.
 *   r3 {e} v {a}:       e 1, a 2: mean 1.5.
 * Then ten rounds x v y; an eleventh x v y has mean (10 + 10)/2 = 10, the boundary, which
 * belongs to [10, 50); x v z (new) then has (11 + 0)/2 = 5.5. */
static void experience(void **state)
{
    (void)state;
    eo_eval *ev = NULL;
    assert_int_equal(eo_eval_create(&ev), 0);
    eo_round r;
    eo_member mem[4];
    double e = -1;
    const char *const r1a[] = {"a", "b"}, *const r1b[] = {"c", "d"};
    make_round(&r, mem, r1a, 2, r1b, 2);
    assert_int_equal(eo_eval_players(ev, &r, &e), 0);
    assert_true(e == 0.0);
    const char *const r2a[] = {"a", "e"}, *const r2b[] = {"c"};
    make_round(&r, mem, r2a, 2, r2b, 1);
    assert_int_equal(eo_eval_players(ev, &r, &e), 0);
    assert_true(e == 2.0 / 3.0);
    const char *const r3a[] = {"e"}, *const r3b[] = {"a"};
    make_round(&r, mem, r3a, 1, r3b, 1);
    assert_int_equal(eo_eval_players(ev, &r, &e), 0);
    assert_true(e == 1.5);

    const char *const x[] = {"x"}, *const y[] = {"y"}, *const z[] = {"z"};
    for (int i = 0; i < 10; i++) {
        make_round(&r, mem, x, 1, y, 1);
        assert_int_equal(eo_eval_players(ev, &r, &e), 0);
        assert_true(e == (double)i);
    }
    make_round(&r, mem, x, 1, y, 1);
    assert_int_equal(eo_eval_players(ev, &r, &e), 0);
    assert_true(e == 10.0);
    assert_int_equal(eo_eval_add(ev, 0.5, EO_WIN_A, e), 0);
    make_round(&r, mem, x, 1, z, 1);
    assert_int_equal(eo_eval_players(ev, &r, &e), 0);
    assert_true(e == 5.5);
    assert_int_equal(eo_eval_add(ev, 0.5, EO_WIN_A, e), 0);
    eo_eval_result res;
    assert_int_equal(eo_eval_get(ev, &res), 0);
    assert_int_equal(res.exp[0].m.count, 1);
    assert_int_equal(res.exp[1].m.count, 1);
    assert_int_equal(res.exp[2].m.count, 0);
    eo_eval_destroy(ev);
}


/* Sums kept per span add up to eo_eval's figures over the same rounds: split the rounds into
 * three spans at random, add their sums, and compare (bins too). */
static void sums_equal_eval(void **state)
{
    (void)state;
    eo_eval *ev = NULL;
    assert_int_equal(eo_eval_create(&ev), 0);
    eo_eval_sums span[3], total, bins[EO_EVAL_CALIB_BINS];
    memset(span, 0, sizeof span);
    memset(&total, 0, sizeof total);
    memset(bins, 0, sizeof bins);
    uint64_t x = 42;
    for (int i = 0; i < 500; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double p = (double)(x >> 11) * 0x1.0p-53;
        eo_winner w = (x >> 3) % 17 == 0 ? EO_DRAW : (x >> 7) % 100 < 100 * p ? EO_WIN_A : EO_WIN_B;
        if (i == 7)
            p = 1.0; /* the last bin holds 1 */
        assert_int_equal(eo_eval_add(ev, p, w, 0.0), 0);
        eo_eval_sums one;
        memset(&one, 0, sizeof one);
        assert_int_equal(eo_eval_sums_round(&one, p, w), 0);
        eo_eval_sums_add(&span[i % 3], &one);
        eo_eval_sums_add(&bins[eo_eval_bin_index(p)], &one);
    }
    for (int k = 0; k < 3; k++)
        eo_eval_sums_add(&total, &span[k]);
    eo_eval_result r;
    assert_int_equal(eo_eval_get(ev, &r), 0);
    eo_eval_span f;
    eo_eval_span_of(&total, &f);
    assert_int_equal(f.rounds, r.scored);
    assert_int_equal(f.draws, r.draws);
    assert_int_equal(f.all.count, r.all.count);
    assert_true(fabs(f.all.brier - r.all.brier) < 1e-12);
    assert_true(fabs(f.all.logloss - r.all.logloss) < 1e-12);
    assert_true(fabs(f.all.accuracy - r.all.accuracy) < 1e-12);
    for (int b = 0; b < EO_EVAL_CALIB_BINS; b++) {
        eo_eval_bin got;
        eo_eval_bin_of_sums(b, &bins[b], &got);
        assert_int_equal(got.count, r.calib[b].count);
        assert_true(got.from == r.calib[b].from && got.to == r.calib[b].to);
        if (got.count > 0) {
            assert_true(fabs(got.mean_p - r.calib[b].mean_p) < 1e-12);
            assert_true(fabs(got.win_rate - r.calib[b].win_rate) < 1e-12);
        } else {
            assert_true(isnan(got.mean_p));
        }
    }
    assert_int_equal(r.calib[EO_EVAL_CALIB_BINS - 1].count > 0, 1);
    eo_eval_destroy(ev);
}

/* The balance and drift figures of a span, by hand. */
static void span_figures(void **state)
{
    (void)state;
    eo_eval_sums s;
    memset(&s, 0, sizeof s);
    eo_eval_span f;
    eo_eval_span_of(&s, &f);
    assert_true(isnan(f.margin) && isnan(f.stomp_share) && isnan(f.rating_mean));
    assert_int_equal(eo_eval_sums_round(&s, 0.5, EO_WIN_A), 0);
    assert_int_equal(eo_eval_sums_round(&s, 0.85, EO_DRAW), 0); /* a stomp; margin 0.35 */
    assert_int_equal(eo_eval_sums_round(&s, 0.2, EO_WIN_B), 0); /* 0.3 is not more than 0.3 */
    assert_int_equal(eo_eval_sums_round(&s, 1.5, EO_WIN_B), EO_EINVAL);
    assert_int_equal(eo_eval_sums_round(&s, NAN, EO_WIN_B), EO_EINVAL);
    assert_int_equal(eo_eval_sums_round(&s, 0.5, (eo_winner)7), EO_EINVAL);
    eo_eval_sums_member(&s, 1000, 10);
    eo_eval_sums_member(&s, 1200, -4);
    eo_eval_span_of(&s, &f);
    assert_int_equal(f.rounds, 3);
    assert_int_equal(f.draws, 1);
    assert_true(fabs(f.margin - (0.0 + 0.35 + 0.3) / 3) < 1e-15);
    assert_true(fabs(f.stomp_share - 1.0 / 3) < 1e-15);
    assert_true(f.rating_mean == 1100 && f.rating_sd == 100 && f.delta_mean == 3);
    assert_int_equal(f.all.count, 2); /* the draw is left out */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(empty_is_nan),    cmocka_unit_test(ten_rounds),
        cmocka_unit_test(tight_rounds_up), cmocka_unit_test(bad_input),
        cmocka_unit_test(experience),      cmocka_unit_test(sums_equal_eval),
        cmocka_unit_test(span_figures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
