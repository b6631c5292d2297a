/* The NS2 hive model (include/evenodds/eo_hive.h, src/core/models/hive.c): time weights and
 * updates computed by hand, commander skill, Hiveskill 3.0's side offsets, the initial skill
 * from playtime, symmetry, weight 0, winners never lose, and the same through the model
 * interface, a pool and the round codec (the `playtime` member field).
 *
 * Formulas: seed 001 (Moulton, "A Skill Ranking System for Natural Selection 2", 2014) as
 * restored in ../shared/reference/ANCHORS.md §1; side offsets as Unknown Worlds' "Introducing
 * Hiveskill 3.0" (marine = skill + bias, alien = skill − bias). Hand values were computed with
 * Python's math.exp / math.log and the float ** operator, not with the code under test. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_fit.h"
#include "evenodds/eo_hive.h"
#include "evenodds/eo_model.h"
#include "evenodds/eo_pool.h"

#define AT 1763800000

static eo_hive_params defaults(void)
{
    eo_hive_params p;
    eo_hive_params_default(&p);
    return p;
}

static eo_hive_player with_skill(double s)
{
    eo_hive_player pl;
    eo_hive_player_init(&pl);
    pl.skill = s;
    return pl;
}

static void near(double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("got %.17g, want %.17g (tolerance %g)", got, want, tol);
}

static void params_and_check(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    assert_true(p.alpha == 8 && p.alpha_commander == 8 && p.side_share == 0);
    assert_true(p.side_rounds == 0 && p.round_length == -1 && p.playtime_c == 0);
    assert_true(p.visible_rounds == 0 && p.t_stale_days == 30);
    assert_int_equal(eo_hive_params_check(&p), 0);
    p.round_length = 0; /* each round's own length */
    assert_int_equal(eo_hive_params_check(&p), 0);
    p.round_length = 0.5; /* neither -1, 0 nor >= 1 s */
    assert_int_equal(eo_hive_params_check(&p), EO_EINVAL);
    p.round_length = -0.5;
    assert_int_equal(eo_hive_params_check(&p), EO_EINVAL);
    p = defaults();
    p.side_share = 1.5;
    assert_int_equal(eo_hive_params_check(&p), EO_EINVAL);
    p = defaults();
    p.alpha = NAN;
    assert_int_equal(eo_hive_params_check(&p), EO_EINVAL);

    /* through the interface: the same rule names the parameter */
    eo_model m;
    assert_int_equal(eo_model_parse("hive", &m), 0);
    assert_int_equal(m, EO_MODEL_HIVE);
    assert_string_equal(eo_model_name(EO_MODEL_HIVE), "hive");
    eo_model_config c;
    eo_round_error err;
    assert_int_equal(eo_model_config_default(EO_MODEL_HIVE, &c), 0);
    assert_int_equal(eo_model_config_set(&c, "round_length", "0.5", &err), 0);
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&c, &ctx, &err), EO_EINVAL);
    assert_string_equal(err.field, "round_length");
    assert_int_equal(eo_model_config_set(&c, "round_length", "-2", &err), EO_EINVAL);
    assert_string_equal(err.field, "round_length");
    assert_int_equal(eo_model_config_set(&c, "side_share", "2", &err), EO_EINVAL);
    assert_string_equal(err.field, "side_share");
}

/* t = a^(−joined) − a^(−left), a = 2^(2/r): with r = 600, a^(−x) = 2^(−x/300). */
static void time_weights(void **state)
{
    (void)state;
    near(eo_hive_time_weight(600, 0, 600), 0.75, 1e-15);  /* 1 − 2^−2 */
    near(eo_hive_time_weight(600, 0, 300), 0.5, 1e-15);   /* 1 − 2^−1: first half */
    near(eo_hive_time_weight(600, 300, 600), 0.25, 1e-15); /* 2^−1 − 2^−2: second half */
    near(eo_hive_time_weight(600, 0, INFINITY), 1.0, 0);   /* 1 − 0 */
    /* 2^−0.5 − 2^−1.5 = 0.70710678… − 0.35355339… */
    near(eo_hive_time_weight(600, 150, 450), 0.3535533905932738, 1e-15);

    /* member weights: relative to a whole round; round of 600 s, r = its own length */
    eo_hive_params p = defaults();
    eo_round r;
    memset(&r, 0, sizeof r);
    r.started_at = 1000;
    r.ended_at = 1600;
    eo_member m;
    memset(&m, 0, sizeof m);
    near(eo_hive_member_weight(&p, &r, &m, 0), 1.0, 0); /* nothing given: the whole round */
    m.has = EO_MEMBER_JOINED;
    m.joined = 300; /* (0.5 − 0.25) / 0.75 = 1/3 (the linear share would be 1/2) */
    near(eo_hive_member_weight(&p, &r, &m, 0), 1.0 / 3.0, 1e-15);
    m.has = EO_MEMBER_LEFT;
    m.left = 300; /* (1 − 0.5) / 0.75 = 2/3 */
    near(eo_hive_member_weight(&p, &r, &m, 0), 2.0 / 3.0, 1e-15);
    m.left = 900; /* past the end: capped at the round's length, the whole round */
    near(eo_hive_member_weight(&p, &r, &m, 0), 1.0, 1e-15);
    m.has = EO_MEMBER_TIME;
    m.time = 0.4; /* only time: a fraction of a full round, as given */
    near(eo_hive_member_weight(&p, &r, &m, 0), 0.4, 0);

    /* r = 1200 s from the pool on the 600 s round: a^(−x) = 2^(−x/600); whole round
     * 1 − 2^−1 = 0.5; joined 300: (2^−0.5 − 2^−1) / 0.5 = 0.41421356… */
    p.round_length = 1200;
    m.has = EO_MEMBER_JOINED;
    m.joined = 300;
    near(eo_hive_member_weight(&p, &r, &m, 0), 0.41421356237309515, 1e-15);

    /* r from the pool, round length unknown: left defaults to ∞; r = 600 */
    p.round_length = 600;
    r.started_at = r.ended_at = 0;
    m.joined = 300; /* 2^−1 − 0 */
    near(eo_hive_member_weight(&p, &r, &m, 0), 0.5, 1e-15);
    m.has = EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    m.joined = 0;
    m.left = 600; /* 1 − 2^−2 */
    near(eo_hive_member_weight(&p, &r, &m, 0), 0.75, 1e-15);

    /* no scale at all (r = 0, length unknown): the linear rule, which gives 1 */
    p.round_length = 0;
    near(eo_hive_member_weight(&p, &r, &m, 0), 1.0, 0);
    /* r = −1: the pool's median length is the scale (joined 0, left 600 of a 1200 s median:
     * 1 − 2^−1); r = 0 ignores it, a fixed round_length wins over it */
    p.round_length = -1;
    near(eo_hive_member_weight(&p, &r, &m, 1200), 0.5, 1e-15);
    near(eo_hive_member_weight(&p, &r, &m, 0), 1.0, 0);
    p.round_length = 0;
    near(eo_hive_member_weight(&p, &r, &m, 1200), 1.0, 0);
    p.round_length = 600;
    near(eo_hive_member_weight(&p, &r, &m, 1200), 0.75, 1e-15);
    p.round_length = 0;

    /* through the interface: the hive model uses its own weights, the others the linear one */
    r.started_at = 1000;
    r.ended_at = 1600;
    m.has = EO_MEMBER_JOINED;
    m.joined = 300;
    eo_model_config c;
    eo_model_ctx *hive = NULL, *elo = NULL;
    eo_model_config_default(EO_MODEL_HIVE, &c);
    assert_int_equal(eo_model_prepare(&c, &hive, NULL), 0);
    eo_model_config_default(EO_MODEL_ELO, &c);
    assert_int_equal(eo_model_prepare(&c, &elo, NULL), 0);
    near(eo_model_member_weight(hive, &r, &m, 0), 1.0 / 3.0, 1e-15);
    near(eo_model_member_weight(hive, &r, &m, 1200), 0.41421356237309515, 1e-15);
    near(eo_model_member_weight(elo, &r, &m, 1200), 0.5, 0);
    assert_true(eo_model_wants_pool_length(hive));
    assert_false(eo_model_wants_pool_length(elo));
    eo_model_release(hive);
    eo_model_release(elo);
}

/* 2v2, weights 1, α = 8. A = {1, 0}, B = {0, −1}: Σ T·t·s = (1 + 0) − (0 − 1) = 2, Σ t = 4,
 * x = 0.5, p = σ(0.5) = 0.6224593312018546. A wins: each step 8·(1 − p)·1/4 =
 * 0.7550813375962908, + for A, − for B. */
static void hand_update(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    eo_hive_player pl[4] = {with_skill(1), with_skill(0), with_skill(0), with_skill(-1)};
    eo_participant a[2] = {{&pl[0], 1}, {&pl[1], 1}}, b[2] = {{&pl[2], 1}, {&pl[3], 1}};
    double p_a;
    eo_model_update u[4];
    assert_int_equal(eo_hive_rate(&p, a, 2, b, 2, NULL, EO_WIN_A, 0, AT, &p_a, u), 0);
    near(p_a, 0.6224593312018546, 1e-15);
    const double g = 0.7550813375962908;
    near(pl[0].skill, 1 + g, 1e-14);
    near(pl[1].skill, g, 1e-14);
    near(pl[2].skill, -g, 1e-14);
    near(pl[3].skill, -1 - g, 1e-14);
    near(u[0].expected, 0.6224593312018546, 1e-15);
    near(u[2].expected, 1 - 0.6224593312018546, 1e-15);
    assert_true(u[0].before == 1 && u[0].after == pl[0].skill && u[0].k == 8);
    assert_true(u[3].mu == pl[3].skill && u[3].sigma == 0);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(pl[i].rounds, 1);
        assert_int_equal(pl[i].com_rounds, 0);
        assert_true(pl[i].last_ended_at == AT);
        assert_true(pl[i].offset == 0); /* side_share 0: no offsets */
    }

    /* 2v1, all skill 1: x = (2 − 1)/3, p = σ(1/3) = 0.5825702064623147 — the bigger team is
     * the favourite because Σ t counts both teams (seed 001) */
    eo_hive_player q[3] = {with_skill(1), with_skill(1), with_skill(1)};
    eo_participant qa[2] = {{&q[0], 1}, {&q[1], 1}}, qb[1] = {{&q[2], 1}};
    assert_int_equal(eo_hive_rate(&p, qa, 2, qb, 1, NULL, EO_DRAW, 0, 0, &p_a, NULL), 0);
    near(p_a, 0.5825702064623147, 1e-15);
    assert_true(q[0].last_ended_at == 0); /* at 0: kept */

    /* partial play and the field term: A = {0 @ 1}, B = {0 @ 1, 0 @ 0.5}, b = ln 3:
     * x = ln 3, p = 0.75; B wins; Σ t = 2.5: A: 8·(0 − 0.75)·1/2.5 = −2.4;
     * B: 8·(1 − 0.25)·1/2.5 = 2.4 and ·0.5/2.5 = 1.2 */
    eo_hive_player r[3] = {with_skill(0), with_skill(0), with_skill(0)};
    eo_participant ra[1] = {{&r[0], 1}}, rb[2] = {{&r[1], 1}, {&r[2], 0.5}};
    assert_int_equal(eo_hive_rate(&p, ra, 1, rb, 2, NULL, EO_WIN_B, log(3.0), AT, &p_a, NULL),
                     0);
    near(p_a, 0.75, 1e-15);
    near(r[0].skill, -2.4, 1e-14);
    near(r[1].skill, 2.4, 1e-14);
    near(r[2].skill, 1.2, 1e-14);

    /* argument checks: nothing changes */
    eo_hive_player keep = pl[0];
    eo_participant bad[1] = {{&pl[0], 1.5}};
    assert_int_equal(eo_hive_rate(&p, bad, 1, b, 2, NULL, EO_WIN_A, 0, AT, NULL, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_hive_rate(&p, a, 2, b, 2, NULL, (eo_winner)9, 0, AT, NULL, NULL),
                     EO_EINVAL);
    eo_participant_info nan_pt[4] = {{false, NAN}, {false, -1}, {false, -1}, {false, -1}};
    assert_int_equal(eo_hive_rate(&p, a, 2, b, 2, nan_pt, EO_WIN_A, 0, AT, NULL, NULL),
                     EO_EINVAL);
    assert_memory_equal(&keep, &pl[0], sizeof keep);
}

/* Commanders: A = {field 0, commander with commander skill 2}, B = {field 0, commander 0}.
 * Field term (0 − 0)/2 = 0, commander term (2 − 0)/2 = 1: x = 1, p = σ(1) =
 * 0.7310585786300049. B wins: field steps ∓8·p/2 = ∓2.9242343145200196 (A −, B +); the
 * commanders take the same steps on their commander skill: 2 − 2.924… = −0.924…, 0 + 2.924…;
 * their field skills do not move. */
static void commander_skill(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    eo_hive_player pl[4];
    for (int i = 0; i < 4; i++)
        eo_hive_player_init(&pl[i]);
    pl[1].com_skill = 2;
    eo_participant a[2] = {{&pl[0], 1}, {&pl[1], 1}}, b[2] = {{&pl[2], 1}, {&pl[3], 1}};
    eo_participant_info in[4] = {{false, -1}, {true, -1}, {false, -1}, {true, -1}};
    double p_a;
    eo_model_update u[4];
    assert_int_equal(eo_hive_rate(&p, a, 2, b, 2, in, EO_WIN_B, 0, AT, &p_a, u), 0);
    near(p_a, 0.7310585786300049, 1e-15);
    const double g = 2.9242343145200196;
    near(pl[0].skill, -g, 1e-14);
    near(pl[2].skill, g, 1e-14);
    near(pl[1].com_skill, 2 - g, 1e-14);
    near(pl[3].com_skill, g, 1e-14);
    assert_true(pl[1].skill == 0 && pl[3].skill == 0); /* field skills untouched */
    assert_true(pl[0].com_skill == 0 && pl[2].com_skill == 0);
    assert_int_equal(pl[1].com_rounds, 1);
    assert_int_equal(pl[1].rounds, 1);
    assert_int_equal(pl[0].com_rounds, 0);

    /* a commander on one side only: its term is its own skill, t·k/t = k. With alpha_commander
     * 0 the commander skill is frozen and the field players still move. */
    eo_hive_player c[3];
    for (int i = 0; i < 3; i++)
        eo_hive_player_init(&c[i]);
    c[1].com_skill = 2;
    p.alpha_commander = 0;
    eo_participant ca[2] = {{&c[0], 1}, {&c[1], 0.5}}, cb[1] = {{&c[2], 1}};
    eo_participant_info cin[3] = {{false, -1}, {true, -1}, {false, -1}};
    assert_int_equal(eo_hive_rate(&p, ca, 2, cb, 1, cin, EO_WIN_A, 0, AT, &p_a, u), 0);
    near(p_a, 0.8807970779778823, 1e-15); /* σ(2) */
    assert_true(c[1].com_skill == 2);
    assert_true(u[1].k == 0);
    /* A's field player: 8·(1 − σ(2))·1/2 = 0.4768116880884709 */
    near(c[0].skill, 0.47681168808847074, 1e-14);

    /* through the interface: eo_model_rate_info() passes the commander flags */
    eo_model_config cfg;
    eo_model_config_default(EO_MODEL_HIVE, &cfg);
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&cfg, &ctx, NULL), 0);
    eo_hive_player m[4];
    for (int i = 0; i < 4; i++)
        eo_model_player_init(ctx, &m[i]);
    m[1].com_skill = 2;
    eo_participant ma[2] = {{&m[0], 1}, {&m[1], 1}}, mb[2] = {{&m[2], 1}, {&m[3], 1}};
    assert_int_equal(eo_model_rate_info(ctx, ma, 2, mb, 2, in, EO_WIN_B, 0, AT, &p_a, NULL), 0);
    near(p_a, 0.7310585786300049, 1e-15);
    near(m[1].com_skill, 2 - g, 1e-14);
    eo_model_release(ctx);
}

/* Side offsets with side_share 0.5, 1v1 from zero: x = 0, p = 0.5, A wins; g = 8·0.5·1/2 = 2.
 * A (side 1): skill += 0.5·2 = 1, offset += 0.5·2 = 1 → side 1 at 2, side 2 at 0.
 * B (side 2): step −2: skill −1, offset −(0.5·−2) = +1 → side 2 at −2, side 1 at 0.
 * Next round, same sides: x = (2 − (−2))/2 = 2; sides swapped: x = (0 − 0)/2 = 0. */
static void side_offsets(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    p.side_share = 0.5;
    eo_hive_player x, y;
    eo_hive_player_init(&x);
    eo_hive_player_init(&y);
    eo_participant px = {&x, 1}, py = {&y, 1};
    double p_a;
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, NULL, EO_WIN_A, 0, AT, &p_a, NULL), 0);
    near(p_a, 0.5, 0);
    near(x.skill, 1, 1e-15);
    near(x.offset, 1, 1e-15);
    near(y.skill, -1, 1e-15);
    near(y.offset, 1, 1e-15);
    eo_hive_player x1 = x, y1 = y;
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, NULL, EO_DRAW, 0, AT, &p_a, NULL), 0);
    near(p_a, 0.8807970779778823, 1e-15); /* σ(2) */
    x = x1;
    y = y1;
    assert_int_equal(eo_hive_rate(&p, &py, 1, &px, 1, NULL, EO_DRAW, 0, AT, &p_a, NULL), 0);
    near(p_a, 0.5, 0);

    /* the ramp: side_rounds 4 → λ = 0.5·rounds/4: 0 on the first round, 0.125 on the second */
    p.side_rounds = 4;
    eo_hive_player_init(&x);
    eo_hive_player_init(&y);
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, NULL, EO_WIN_A, 0, AT, NULL, NULL), 0);
    assert_true(x.offset == 0 && y.offset == 0);
    near(x.skill, 2, 1e-15);
    /* round 2: x = (2 − (−2))/2 = 2, A wins: g = 8·(1 − σ(2))/2 = 0.4768116880884709;
     * offset 0.125·g, skill 2 + 0.875·g */
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, NULL, EO_WIN_A, 0, AT, NULL, NULL), 0);
    near(x.offset, 0.125 * 0.4768116880884709, 1e-15);
    near(x.skill, 2 + 0.875 * 0.4768116880884709, 1e-14);
    near(y.offset, 0.125 * 0.4768116880884709, 1e-15);
}

/* Playtime seeds a new player's skill: c·ln(1 + playtime); c = 0.5, 3600 s: 0.5·ln 3601 =
 * 4.094483431824438. 1v1 against a new player without playtime: x = 4.094…/2, p =
 * 0.8856686126213876; A wins: 4.094… + 8·(1 − p)/2 = 4.551808981338887; B: −0.4573255495144495.
 * Afterwards a playtime is ignored (the player is seeded), as after an admin set. */
static void playtime_seed(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    p.playtime_c = 0.5;
    near(eo_hive_initial_skill(&p, 3600), 4.094483431824438, 1e-14);
    near(eo_hive_initial_skill(&p, 0), 0, 0);
    eo_hive_player x, y;
    eo_hive_player_init(&x);
    eo_hive_player_init(&y);
    eo_participant px = {&x, 1}, py = {&y, 1};
    eo_participant_info in[2] = {{false, 3600}, {false, -1}};
    double p_a;
    eo_model_update u[2];
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, in, EO_WIN_A, 0, AT, &p_a, u), 0);
    near(p_a, 0.8856686126213876, 1e-15);
    near(x.skill, 4.551808981338887, 1e-14);
    near(y.skill, -0.4573255495144495, 1e-14);
    near(u[0].before, 4.094483431824438, 1e-14); /* the seed is the round-start skill */
    assert_true((x.flags & EO_HIVE_SEEDED) && (y.flags & EO_HIVE_SEEDED));
    double want = eo_hive_expected((x.skill - y.skill) / 2);
    in[0].playtime = 1e6; /* ignored now */
    assert_int_equal(eo_hive_rate(&p, &px, 1, &py, 1, in, EO_DRAW, 0, AT, &p_a, NULL), 0);
    near(p_a, want, 1e-15);

    /* weight 0: not seeded, untouched */
    eo_hive_player z, w, before;
    eo_hive_player_init(&z);
    eo_hive_player_init(&w);
    before = z;
    eo_participant pz[2] = {{&w, 1}, {&z, 0}}, pw = {&y, 1};
    eo_participant_info zin[3] = {{false, -1}, {true, 3600}, {false, -1}};
    assert_int_equal(eo_hive_rate(&p, pz, 2, &pw, 1, zin, EO_WIN_A, 0, AT, NULL, NULL), 0);
    assert_memory_equal(&z, &before, sizeof z);
}

/* splitmix64, for the random rounds below */
static uint64_t next_u64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
    return (double)(next_u64(s) >> 11) * 0x1.0p-53;
}

#define POP 24

typedef struct rnd {
    size_t na, nb, who[16];
    double w[16];
    eo_participant_info in[16];
    eo_winner winner;
    double field;
} rnd;

static void random_round(uint64_t *s, rnd *r)
{
    r->na = 1 + (size_t)(unif(s) * 8);
    r->nb = 1 + (size_t)(unif(s) * 8);
    size_t idx[POP];
    for (size_t i = 0; i < POP; i++)
        idx[i] = i;
    for (size_t i = 0; i < r->na + r->nb; i++) {
        size_t j = i + (size_t)(unif(s) * (double)(POP - i));
        size_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
        r->who[i] = idx[i];
        double u = unif(s);
        r->w[i] = u < 0.5 ? 1.0 : u < 0.6 ? 0.0 : unif(s);
        r->in[i].commander = unif(s) < 0.15;
        r->in[i].playtime = unif(s) < 0.5 ? -1.0 : 36000 * unif(s);
    }
    double u = unif(s);
    r->winner = u < 0.45 ? EO_WIN_A : u < 0.9 ? EO_WIN_B : EO_DRAW;
    r->field = 2 * unif(s) - 1;
}

/* Rates @p r on @p pl, mirrored (teams swapped, field negated, winner swapped) when asked. */
static double rate_rnd(const eo_hive_params *p, eo_hive_player *pl, const rnd *r, bool mirror)
{
    eo_participant part[16];
    eo_participant_info in[16];
    size_t n = r->na + r->nb, first = mirror ? r->na : 0;
    for (size_t k = 0; k < n; k++) {
        size_t i = (first + k) % n; /* mirrored: B's members first, then A's */
        part[k] = (eo_participant){&pl[r->who[i]], r->w[i]};
        in[k] = r->in[i];
    }
    eo_winner w = r->winner;
    if (mirror)
        w = w == EO_WIN_A ? EO_WIN_B : w == EO_WIN_B ? EO_WIN_A : EO_DRAW;
    size_t na = mirror ? r->nb : r->na;
    double p_a = -1;
    assert_int_equal(eo_hive_rate(p, part, na, part + na, n - na, in, w,
                                  mirror ? -r->field : r->field, AT, &p_a, NULL),
                     0);
    return p_a;
}

/* Symmetry: the mirrored round gives every player the same skills bit for bit and P(A) ↔
 * 1 − P(A); with side offsets on, the offsets come out negated (side 1 and side 2 trade
 * places), so the mirrored world starts from negated offsets. Commanders and playtimes
 * included. */
static void symmetry(void **state)
{
    (void)state;
    for (int with_sides = 0; with_sides < 2; with_sides++) {
        eo_hive_params p = defaults();
        p.playtime_c = 0.3;
        p.side_share = with_sides ? 0.4 : 0;
        p.side_rounds = with_sides ? 3 : 0;
        eo_hive_player w1[POP], w2[POP];
        for (size_t i = 0; i < POP; i++) {
            eo_hive_player_init(&w1[i]);
            eo_hive_player_init(&w2[i]);
        }
        uint64_t s = 42 + (uint64_t)with_sides;
        for (int k = 0; k < 2000; k++) {
            rnd r;
            random_round(&s, &r);
            double pa = rate_rnd(&p, w1, &r, false);
            double pb = rate_rnd(&p, w2, &r, true);
            if (!(fabs(pa + pb - 1) <= 1e-15))
                fail_msg("round %d: P %.17g + %.17g", k, pa, pb);
            for (size_t i = 0; i < POP; i++) {
                const eo_hive_player *x = &w1[i], *y = &w2[i];
                if (memcmp(&x->skill, &y->skill, sizeof x->skill) != 0 ||
                    memcmp(&x->com_skill, &y->com_skill, sizeof x->com_skill) != 0 ||
                    x->rounds != y->rounds || x->com_rounds != y->com_rounds ||
                    x->flags != y->flags)
                    fail_msg("round %d, player %zu: %.17g vs %.17g", k, i, x->skill, y->skill);
                if (!(x->offset == -y->offset && x->com_offset == -y->com_offset))
                    fail_msg("round %d, player %zu: offsets %.17g vs %.17g", k, i, x->offset,
                             y->offset);
                if (!with_sides && (x->offset != 0 || x->com_offset != 0))
                    fail_msg("offsets moved with side_share 0");
            }
        }
    }
}

/* Weight 0 leaves a member unchanged bit for bit; winners never lose (field skill, commander
 * skill, and the skill of the side played), losers never gain; no NaN. */
static void weight_zero_and_direction(void **state)
{
    (void)state;
    eo_hive_params p = defaults();
    p.playtime_c = 0.3;
    p.side_share = 0.5;
    eo_hive_player pl[POP];
    for (size_t i = 0; i < POP; i++)
        eo_hive_player_init(&pl[i]);
    uint64_t s = 7;
    size_t zeros = 0, dirs = 0;
    for (int k = 0; k < 3000; k++) {
        rnd r;
        random_round(&s, &r);
        eo_hive_player before[16];
        for (size_t i = 0; i < r.na + r.nb; i++)
            before[i] = pl[r.who[i]];
        rate_rnd(&p, pl, &r, false);
        for (size_t i = 0; i < r.na + r.nb; i++) {
            const eo_hive_player *b = &before[i], *a = &pl[r.who[i]];
            assert_true(isfinite(a->skill) && isfinite(a->offset) && isfinite(a->com_skill));
            if (r.w[i] == 0) {
                assert_memory_equal(a, b, sizeof *a);
                zeros++;
                continue;
            }
            if (r.winner == EO_DRAW)
                continue;
            bool won = (i < r.na) == (r.winner == EO_WIN_A);
            double sign = i < r.na ? 1 : -1; /* side 1 or side 2 */
            bool com = r.in[i].commander;
            /* round-start skills include the playtime seed of a first round */
            double s0 = (b->flags & EO_HIVE_SEEDED) || r.in[i].playtime < 0
                            ? b->skill
                            : eo_hive_initial_skill(&p, r.in[i].playtime);
            double sk0 = com ? b->com_skill : s0, sk1 = com ? a->com_skill : a->skill;
            double side0 = sk0 + sign * (com ? b->com_offset : b->offset);
            double side1 = sk1 + sign * (com ? a->com_offset : a->offset);
            dirs++;
            if (won && (sk1 < sk0 || side1 < side0 - 1e-12))
                fail_msg("round %d: a winner fell %.17g -> %.17g", k, sk0, sk1);
            if (!won && (sk1 > sk0 || side1 > side0 + 1e-12))
                fail_msg("round %d: a loser rose %.17g -> %.17g", k, sk0, sk1);
        }
    }
    assert_true(zeros > 100 && dirs > 1000);
}

/* Lookups, visibility, staleness, admin set with EO_ERANGE. */
static void view_and_set(void **state)
{
    (void)state;
    eo_model_config c;
    eo_model_config_default(EO_MODEL_HIVE, &c);
    assert_int_equal(eo_model_config_set(&c, "visible_rounds", "2", NULL), 0);
    assert_int_equal(eo_model_config_set(&c, "t_stale_days", "1", NULL), 0);
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_prepare(&c, &ctx, NULL), 0);
    assert_int_equal(eo_model_state_size(ctx), sizeof(eo_hive_player));
    assert_false(eo_model_has_deviation(ctx));
    assert_false(eo_model_integer_display(ctx));
    eo_hive_player x, y;
    eo_model_player_init(ctx, &x);
    eo_model_player_init(ctx, &y);
    eo_rating_view v;
    eo_model_view(ctx, &x, AT, &v);
    assert_true(v.display == 0 && v.mu == 0 && v.sigma == 0 && v.rounds == 0);
    assert_false(v.visible);
    assert_false(v.stale);
    eo_participant px = {&x, 1}, py = {&y, 1};
    for (int i = 0; i < 2; i++)
        assert_int_equal(eo_model_rate(ctx, &px, 1, &py, 1, EO_WIN_A, 0, AT, NULL, NULL), 0);
    eo_model_view(ctx, &x, AT + 86400, &v);
    assert_true(v.visible && v.rounds == 2 && v.display == x.skill && v.display > 0);
    assert_false(v.stale);
    eo_model_view(ctx, &x, AT + 86401, &v);
    assert_true(v.stale);
    eo_strength st;
    eo_model_strength(ctx, &x, AT, &st);
    assert_true(st.mu == x.skill && st.var == 0);

    eo_hive_player keep = x;
    assert_int_equal(eo_model_set(ctx, &x, 2e6, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, &x, -1e7, -1), EO_ERANGE);
    assert_int_equal(eo_model_set(ctx, &x, NAN, -1), EO_EINVAL);
    assert_memory_equal(&x, &keep, sizeof x);
    assert_int_equal(eo_model_set(ctx, &x, -3.5, 1), 0);
    assert_true(x.skill == -3.5 && x.rounds == 2);
    eo_model_view(ctx, &x, AT, &v);
    assert_true(v.display == -3.5);

    /* predict on aggregates equals rate's P(A) for the same teams */
    eo_team_agg ta = {0}, tb = {0};
    eo_strength sx, sy;
    eo_model_strength(ctx, &x, AT, &sx);
    eo_model_strength(ctx, &y, AT, &sy);
    eo_team_agg_add(&ta, &sx, 1.0);
    eo_team_agg_add(&tb, &sy, 0.5);
    double pred = eo_model_predict(ctx, &ta, &tb, 0.25);
    py.w = 0.5;
    double p_a;
    assert_int_equal(eo_model_rate(ctx, &px, 1, &py, 1, EO_WIN_B, 0.25, AT, &p_a, NULL), 0);
    assert_true(pred == p_a);
    near(p_a, eo_hive_expected((-3.5 - 0.5 * sy.mu) / 1.5 + 0.25), 1e-15);
    eo_model_release(ctx);
}

/* The record's `playtime` and `commander` reach the hive model through a pool: the codec
 * reads them, the validator checks playtime, and the pool passes joined/left through the
 * hive weights. Round of 600 s; A = {p1 commander with playtime, p2 joined 300}, B = {p3}. */
static void pool_and_codec(void **state)
{
    (void)state;
    eo_round r;
    eo_round_error err;
    const char *bad_type = "{\"id\":\"r\",\"winner\":\"A\",\"A\":[{\"id\":\"a\",\"playtime\":\"x\"}],"
                           "\"B\":[\"b\"]}";
    assert_int_equal(eo_round_from_text(bad_type, strlen(bad_type), &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "A[0].playtime");
    assert_string_equal(err.message, "expected a number");
    const char *neg = "{\"id\":\"r\",\"winner\":\"A\",\"A\":[\"a\"],"
                      "\"B\":[{\"id\":\"b\",\"playtime\":-1}]}";
    assert_int_equal(eo_round_from_text(neg, strlen(neg), &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "B[0].playtime");
    assert_string_equal(err.message, "expected a number of seconds >= 0");
    const char *bad_com = "{\"id\":\"r\",\"winner\":\"A\",\"A\":[{\"id\":\"a\",\"commander\":0}],"
                          "\"B\":[\"b\"]}";
    assert_int_equal(eo_round_from_text(bad_com, strlen(bad_com), &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "A[0].commander");

    const char *text =
        "{\"id\":\"r1\",\"winner\":\"A\",\"started_at\":1763800000,\"ended_at\":1763800600,"
        "\"A\":[{\"id\":\"p1\",\"commander\":true,\"playtime\":3600},"
        "{\"id\":\"p2\",\"joined\":300}],\"B\":[{\"id\":\"p3\",\"playtime\":3600}]}";
    assert_int_equal(eo_round_from_text(text, strlen(text), &r, &err), 0);
    assert_true(r.team[0][0].commander && (r.team[0][0].has & EO_MEMBER_PLAYTIME));
    assert_true(r.team[0][0].playtime == 3600);
    /* written back with the field */
    json_t *j = eo_round_to_json(&r);
    assert_non_null(j);
    char *out = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
    assert_non_null(strstr(out, "\"playtime\":3600"));
    free(out);
    json_decref(j);

    eo_pool_config cfg;
    eo_pool_config_default(&cfg);
    eo_model_config_default(EO_MODEL_HIVE, &cfg.model);
    assert_int_equal(eo_model_config_set(&cfg.model, "playtime_c", "0.5", NULL), 0);
    eo_pool *pool = NULL;
    assert_int_equal(eo_pool_create(&cfg, &pool), 0);
    eo_round_result res;
    eo_member_result mr[3];
    assert_int_equal(eo_pool_apply(pool, &r, &res, mr), 0);
    /* p1 commands alone: commander term 0 (its commander skill). Field: p2 (weight 1/3,
     * skill 0) against p3 (weight 1, seeded 0.5·ln 3601 = 4.094483431824438):
     * x = (0 − 4.0944…)/(4/3) = −3.0708625738683284, p = σ(x) = 0.04432527412549578. */
    near(res.p_a, 0.04432527412549578, 1e-14);
    /* p1's field skill is seeded, its commander skill takes 8·(1 − p)·1/1 */
    near(mr[0].rating, 4.094483431824438, 1e-14);
    eo_rating_view v;
    assert_int_equal(eo_pool_lookup(pool, "p1", AT, &v), 0);
    near(v.mu, 4.094483431824438, 1e-14);
    /* p2: 8·(1 − p)·(1/3)/(4/3) = 2·(1 − p) */
    near(mr[1].rating, 1.9113494517490084, 1e-14);
    eo_pool_destroy(pool);
    eo_round_free(&r);
}

/* round_length −1 (the default): each round's time weights use the pool's median length over the rounds
 * before it (docs/MODELS.md "NS2 hive"). Rounds of 600, 1200 and 1800 s with full members (weight 1 under any
 * scale), then a 600 s round with a late joiner: its scale is the lower median 1200, so the
 * pool rates it exactly as a pool fixed at round_length 1200 does, and unlike one at 600. The
 * whole-history fit keeps the same median. */
static void pool_median_length(void **state)
{
    (void)state;
    static const char *const text[4] = {
        "{\"id\":\"r1\",\"winner\":\"A\",\"started_at\":1000,\"ended_at\":1600,"
        "\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"d\"]}",
        "{\"id\":\"r2\",\"winner\":\"B\",\"started_at\":2000,\"ended_at\":3200,"
        "\"A\":[\"a\",\"c\"],\"B\":[\"b\",\"d\"]}",
        "{\"id\":\"r3\",\"winner\":\"A\",\"started_at\":4000,\"ended_at\":5800,"
        "\"A\":[\"a\",\"d\"],\"B\":[\"b\",\"c\"]}",
        "{\"id\":\"r4\",\"winner\":\"B\",\"started_at\":6000,\"ended_at\":6600,"
        "\"A\":[\"a\",{\"id\":\"e\",\"joined\":300}],\"B\":[\"b\",\"c\"]}",
    };
    eo_round r[4];
    eo_round_error err;
    for (int i = 0; i < 4; i++)
        assert_int_equal(eo_round_from_text(text[i], strlen(text[i]), &r[i], &err), 0);
    const char *lengths[4] = {"-1", "1200", "600", "0"};
    double p4[4], rating[4][4], fitted[4][5];
    for (int v = 0; v < 4; v++) {
        eo_pool_config cfg;
        eo_pool_config_default(&cfg);
        eo_model_config_default(EO_MODEL_HIVE, &cfg.model);
        assert_int_equal(eo_model_config_set(&cfg.model, "round_length", lengths[v], NULL), 0);
        eo_pool *pool = NULL;
        assert_int_equal(eo_pool_create(&cfg, &pool), 0);
        eo_round_result res;
        eo_member_result mr[4];
        for (int i = 0; i < 3; i++)
            assert_int_equal(eo_pool_apply(pool, &r[i], &res, mr), 0);
        double pred;
        assert_int_equal(eo_pool_predict(pool, &r[3], &pred), 0);
        assert_int_equal(eo_pool_apply(pool, &r[3], &res, mr), 0);
        assert_true(pred == res.p_a); /* the prediction weights the round as the update does */
        p4[v] = res.p_a;
        for (int i = 0; i < 4; i++)
            rating[v][i] = mr[i].rating;
        eo_pool_destroy(pool);

        eo_fit_config fc;
        eo_fit *f = NULL;
        assert_int_equal(eo_fit_config_default(&cfg, &fc), 0);
        assert_int_equal(eo_fit_create(&cfg, &fc, &f), 0);
        for (int i = 0; i < 4; i++)
            assert_int_equal(eo_fit_add_round(f, &r[i]), 0);
        eo_fit_sweep_stats st;
        assert_int_equal(eo_fit_run(f, &st), 0);
        for (int i = 0; i < 5; i++) {
            eo_fit_player fp;
            char id[2] = {(char)('a' + i), 0};
            assert_int_equal(eo_fit_lookup(f, id, &fp), 0);
            fitted[v][i] = fp.skill;
        }
        eo_fit_destroy(f);
    }
    assert_true(p4[0] == p4[1]);
    assert_memory_equal(rating[0], rating[1], sizeof rating[0]);
    assert_memory_equal(fitted[0], fitted[1], sizeof fitted[0]);
    assert_true(p4[0] != p4[2]);
    assert_true(rating[0][1] != rating[2][1]); /* e, the late joiner, moves by another share */
    assert_true(fitted[0][4] != fitted[2][4]);
    /* 0: each round's own length, 600 s for the last round, as a pool fixed at 600 */
    assert_true(p4[3] == p4[2]);
    assert_memory_equal(rating[3], rating[2], sizeof rating[3]);
    for (int i = 0; i < 4; i++)
        eo_round_free(&r[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(params_and_check),
        cmocka_unit_test(time_weights),
        cmocka_unit_test(hand_update),
        cmocka_unit_test(commander_skill),
        cmocka_unit_test(side_offsets),
        cmocka_unit_test(playtime_seed),
        cmocka_unit_test(symmetry),
        cmocka_unit_test(weight_zero_and_direction),
        cmocka_unit_test(view_and_set),
        cmocka_unit_test(pool_and_codec),
        cmocka_unit_test(pool_median_length),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
