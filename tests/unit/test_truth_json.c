/*
 * The truth file of a simulated world (src/codec/truth_json.c): a valid file decodes, the
 * oracle's P of a round is σ((Σ_A w·s − Σ_B w·s) / scale + bias) computed by hand, unknown
 * players and maps are named, and each malformed case is refused with the field it is about.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_sim.h"

static const char valid[] =
    "{\"seed\":3,\"skill\":\"normal\",\"skill_mean\":0.0,\"skill_sd\":100.0,\"scale\":200.0,"
    "\"maps\":[{\"id\":\"map01\",\"bias\":0.25},{\"id\":\"map02\",\"bias\":-0.5}],"
    "\"players\":[{\"id\":\"a\",\"skill\":100.0,\"present\":true,\"rounds\":4},"
    "{\"id\":\"b\",\"skill\":-50.0},{\"id\":\"c\",\"skill\":30.0,\"present\":false,"
    "\"rounds\":0},{\"id\":\"d\",\"skill\":0.0}]}";

static eo_truth *load_ok(const char *text)
{
    eo_truth *t = NULL;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_truth_from_text(text, strlen(text), &t, &err);
    if (rc != 0)
        fail_msg("refused (%d): %s: %s", rc, err.field, err.message);
    assert_non_null(t);
    return t;
}

static char *dup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *p = malloc(n);
    assert_non_null(p);
    memcpy(p, s, n);
    return p;
}

/* A = {a, b}, B = {c, d} on @p map (NULL: none), 600 s long. */
static void make(eo_round *r, const char *map)
{
    memset(r, 0, sizeof *r);
    r->id = dup("r1");
    r->map = map ? dup(map) : NULL;
    r->started_at = 1000;
    r->ended_at = 1600;
    static const char *ids[2][2] = {{"a", "b"}, {"c", "d"}};
    for (int t = 0; t < 2; t++) {
        r->n[t] = 2;
        r->team[t] = calloc(2, sizeof(eo_member));
        assert_non_null(r->team[t]);
        for (int i = 0; i < 2; i++)
            r->team[t][i].id = dup(ids[t][i]);
    }
}

static double sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

static void test_valid(void **state)
{
    (void)state;
    eo_truth *t = load_ok(valid);
    assert_int_equal(eo_truth_player_count(t), 4);
    assert_int_equal(eo_truth_map_count(t), 2);
    eo_round r;
    make(&r, "map01");
    double p = 0.0;
    eo_round_error err;
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    /* (100 - 50) - (30 + 0) = 20 points, / 200 = 0.1 logit, + 0.25 */
    assert_true(fabs(p - sigmoid(0.35)) < 1e-12);
    assert_true(p == eo_sim_p_true(50.0 - 30.0, 200.0, 0.25));
    /* a played the first half only: 50 - 50 - 30 = -30 points; map02 */
    r.team[0][0].has = EO_MEMBER_LEFT;
    r.team[0][0].left = 300;
    free(r.map);
    r.map = dup("map02");
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    assert_true(fabs(p - sigmoid(-30.0 / 200.0 - 0.5)) < 1e-12);
    /* no map: no bias */
    free(r.map);
    r.map = NULL;
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    assert_true(fabs(p - sigmoid(-30.0 / 200.0)) < 1e-12);
    eo_round_free(&r);
    eo_truth_destroy(t);
    eo_truth_destroy(NULL);
}

static void test_unknown(void **state)
{
    (void)state;
    eo_truth *t = load_ok(valid);
    eo_round r;
    make(&r, "map09");
    double p = -1.0;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    assert_int_equal(eo_truth_p(t, &r, &p, &err), EO_ENOTFOUND);
    assert_string_equal(err.field, "map");
    assert_non_null(strstr(err.message, "map09"));
    free(r.map);
    r.map = dup("map02");
    free(r.team[1][1].id);
    r.team[1][1].id = dup("zed");
    assert_int_equal(eo_truth_p(t, &r, &p, &err), EO_ENOTFOUND);
    assert_string_equal(err.field, "B[1]");
    assert_non_null(strstr(err.message, "'zed' is not in the truth file"));
    assert_true(p == -1.0); /* untouched on failure */
    eo_round_free(&r);
    eo_truth_destroy(t);
}

/* Each malformed file is refused with EO_EINVAL (EO_EPARSE for bad JSON) naming its field. */
static void test_malformed(void **state)
{
    (void)state;
    static const struct {
        const char *text, *field, *says;
    } bad[] = {
        {"[]", "", "expected a JSON object"},
        {"{\"maps\":[],\"players\":[]}", "scale", "required field missing"},
        {"{\"scale\":0,\"maps\":[],\"players\":[]}", "scale", "out of range"},
        {"{\"scale\":\"1\",\"maps\":[],\"players\":[]}", "scale", "expected a number"},
        {"{\"scale\":1e300,\"maps\":[],\"players\":[]}", "scale", "out of range"},
        {"{\"scale\":1,\"players\":[]}", "maps", "required field missing"},
        {"{\"scale\":1,\"maps\":{},\"players\":[]}", "maps", "expected an array"},
        {"{\"scale\":1,\"maps\":[]}", "players", "required field missing"},
        {"{\"scale\":1,\"maps\":[],\"players\":[],\"extra\":1}", "extra", "unknown field"},
        {"{\"scale\":1,\"seed\":-1,\"maps\":[],\"players\":[]}", "seed", "out of range"},
        {"{\"scale\":1,\"skill\":3,\"maps\":[],\"players\":[]}", "skill", "expected a string"},
        {"{\"scale\":1,\"skill_sd\":-1,\"maps\":[],\"players\":[]}", "skill_sd", "out of range"},
        {"{\"scale\":1,\"maps\":[1],\"players\":[]}", "maps[0]", "expected an object"},
        {"{\"scale\":1,\"maps\":[{\"bias\":0}],\"players\":[]}", "maps[0].id",
         "required field missing"},
        {"{\"scale\":1,\"maps\":[{\"id\":\"m\"}],\"players\":[]}", "maps[0].bias",
         "required field missing"},
        {"{\"scale\":1,\"maps\":[{\"id\":\"m\",\"bias\":101}],\"players\":[]}", "maps[0].bias",
         "out of range"},
        {"{\"scale\":1,\"maps\":[{\"id\":\"m\",\"bias\":0},{\"id\":\"m\",\"bias\":1}],"
         "\"players\":[]}",
         "maps[1].id", "repeats an earlier id"},
        {"{\"scale\":1,\"maps\":[{\"id\":\"m\",\"bias\":0,\"x\":1}],\"players\":[]}",
         "maps[0].x", "unknown field"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"\",\"skill\":1}]}", "players[0].id",
         "must not be empty"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":7,\"skill\":1}]}", "players[0].id",
         "expected a string"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":1},"
         "{\"id\":\"b\",\"skill\":\"x\"}]}",
         "players[1].skill", "expected a number"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":2e9}]}",
         "players[0].skill", "out of range"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":1},"
         "{\"id\":\"a\",\"skill\":2}]}",
         "players[1].id", "repeats an earlier id"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":1,\"present\":1}]}",
         "players[0].present", "expected true or false"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":1,\"rounds\":-2}]}",
         "players[0].rounds", "out of range"},
        {"{\"scale\":1,\"maps\":[],\"players\":[{\"id\":\"a\",\"skill\":1,\"mu\":2}]}",
         "players[0].mu", "unknown field"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eo_truth *t = (eo_truth *)&i; /* must be reset to NULL */
        eo_round_error err;
        memset(&err, 0, sizeof err);
        int rc = eo_truth_from_text(bad[i].text, strlen(bad[i].text), &t, &err);
        if (rc != EO_EINVAL || t != NULL || strcmp(err.field, bad[i].field) != 0 ||
            strstr(err.message, bad[i].says) == NULL)
            fail_msg("case %zu (%s): rc %d, field '%s', message '%s'", i, bad[i].text, rc,
                     err.field, err.message);
    }
    /* Not JSON, a NUL byte, a repeated key: EO_EPARSE. */
    static const char *const unparsable[] = {"{", "{\"scale\":1,\"scale\":2}", ""};
    for (size_t i = 0; i < sizeof unparsable / sizeof unparsable[0]; i++) {
        eo_truth *t = NULL;
        eo_round_error err;
        memset(&err, 0, sizeof err);
        assert_int_equal(eo_truth_from_text(unparsable[i], strlen(unparsable[i]), &t, &err),
                         EO_EPARSE);
        assert_null(t);
        assert_non_null(strstr(err.message, "invalid JSON"));
    }
    const char nul[] = "{\"scale\":1\0}";
    eo_truth *t = NULL;
    eo_round_error err;
    assert_int_equal(eo_truth_from_text(nul, sizeof nul - 1, &t, &err), EO_EPARSE);
    assert_non_null(strstr(err.message, "NUL byte"));
    assert_int_equal(eo_truth_from_text(NULL, 0, &t, &err), EO_EINVAL);
}

/* The world's terms (sim's --presence and --partial-effect): "presence" π adds
 * π·(Σ_A w − Σ_B w) to the logit, "partial_effect" "none" counts every member in full. */
static void test_terms(void **state)
{
    (void)state;
    static const char with[] =
        "{\"scale\":200.0,\"presence\":0.4,\"partial_effect\":\"none\","
        "\"maps\":[{\"id\":\"map01\",\"bias\":0.25}],"
        "\"players\":[{\"id\":\"a\",\"skill\":100.0},{\"id\":\"b\",\"skill\":-50.0},"
        "{\"id\":\"c\",\"skill\":30.0},{\"id\":\"d\",\"skill\":0.0}]}";
    eo_truth *t = load_ok(with);
    eo_round r;
    make(&r, "map01");
    r.team[0][0].has = EO_MEMBER_LEFT; /* a left halfway: counted in full all the same */
    r.team[0][0].left = 300;
    double p = 0.0;
    eo_round_error err;
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    /* 20 points / 200 = 0.1, + 0.25, + 0.4·(2 − 2) */
    assert_true(fabs(p - sigmoid(0.35)) < 1e-12);
    r.n[1] = 1; /* B one short: 50 − 30 = 20 points, + 0.25 + 0.4·(2 − 1) */
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    assert_true(fabs(p - sigmoid(0.1 + 0.25 + 0.4)) < 1e-12);
    eo_truth_destroy(t);
    /* The default effect weighs a by his half: 0.5·100 − 50 − 30 = −30 points, presence
     * 1.5 − 1 */
    t = load_ok("{\"scale\":200,\"presence\":0.4,\"maps\":[{\"id\":\"map01\",\"bias\":0}],"
                "\"players\":[{\"id\":\"a\",\"skill\":100},{\"id\":\"b\",\"skill\":-50},"
                "{\"id\":\"c\",\"skill\":30},{\"id\":\"d\",\"skill\":0}]}");
    assert_int_equal(eo_truth_p(t, &r, &p, &err), 0);
    assert_true(fabs(p - sigmoid(-30.0 / 200.0 + 0.4 * 0.5)) < 1e-12);
    eo_truth_destroy(t);
    r.n[1] = 2; /* d back, to be freed */
    eo_round_free(&r);
    static const struct {
        const char *text, *field, *says;
    } bad[] = {
        {"{\"scale\":1,\"presence\":101,\"maps\":[],\"players\":[]}", "presence",
         "out of range"},
        {"{\"scale\":1,\"presence\":\"x\",\"maps\":[],\"players\":[]}", "presence",
         "expected a number"},
        {"{\"scale\":1,\"partial_effect\":\"half\",\"maps\":[],\"players\":[]}",
         "partial_effect", "expected \"time\" or \"none\""},
        {"{\"scale\":1,\"partial_effect\":0,\"maps\":[],\"players\":[]}", "partial_effect",
         "expected \"time\" or \"none\""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        eo_truth *b = NULL;
        memset(&err, 0, sizeof err);
        int rc = eo_truth_from_text(bad[i].text, strlen(bad[i].text), &b, &err);
        if (rc != EO_EINVAL || b != NULL || strcmp(err.field, bad[i].field) != 0 ||
            strstr(err.message, bad[i].says) == NULL)
            fail_msg("case %zu (%s): rc %d, field '%s', message '%s'", i, bad[i].text, rc,
                     err.field, err.message);
    }
}

/* Empty lists are valid: a world without maps, a truth nobody can be looked up in. */
static void test_empty(void **state)
{
    (void)state;
    eo_truth *t = load_ok("{\"scale\":1,\"maps\":[],\"players\":[]}");
    assert_int_equal(eo_truth_player_count(t), 0);
    assert_int_equal(eo_truth_map_count(t), 0);
    eo_truth_destroy(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_terms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
