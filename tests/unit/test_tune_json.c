/* Tuning's documents (src/codec/tune_json.c): a pool's configuration file, prediction lines,
 * the tune request and the answers; malformed input is refused naming the field, and what is
 * written reads back to the same values. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"

static void pool_file(void **state)
{
    (void)state;
    eo_pool_config c;
    char name[EO_ID_MAX + 1];
    eo_round_error err;
    const char *ok = "{\"name\":\"tuned\",\"model\":\"elo\",\"params\":{\"k\":32,\"team\":\"sum\","
                     "\"bias\":\"map\",\"bias_prior\":5}}";
    assert_int_equal(eo_pool_file_from_text(ok, strlen(ok), &c, name, &err), 0);
    assert_string_equal(name, "tuned");
    assert_int_equal(c.model.model, EO_MODEL_ELO);
    double k = 0;
    assert_int_equal(eo_tune_knob_get(&c, "k", &k), 0);
    assert_true(k == 32.0);
    assert_true(c.bias.by != EO_BIAS_OFF && c.bias.prior == 5.0);
    /* What a pool's configuration writes reads back to the same configuration. */
    json_t *o = json_pack("{s:s,s:o}", "model", "elo", "params", eo_pool_config_to_json(&c));
    char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(17));
    eo_pool_config back;
    assert_int_equal(eo_pool_file_from_text(text, strlen(text), &back, NULL, &err), 0);
    json_t *x = eo_pool_config_to_json(&c), *y = eo_pool_config_to_json(&back);
    assert_true(json_equal(x, y));
    json_decref(x);
    json_decref(y);
    json_decref(o);
    free(text);
    const char *none = "{}";
    assert_int_equal(eo_pool_file_from_text(none, 2, &c, name, &err), 0);
    assert_int_equal(c.model.model, EO_MODEL_SYNELO);
    assert_string_equal(name, "");

    static const struct {
        const char *text, *field;
        int rc;
    } bad[] = {
        {"{\"model\":\"elo\",\"extra\":1}", "extra", EO_EINVAL},
        {"{\"model\":7}", "model", EO_EINVAL},
        {"{\"model\":\"nope\"}", "model", EO_EINVAL},
        {"{\"name\":\"a b\"}", "name", EO_EINVAL},
        {"{\"name\":\"\"}", "name", EO_EINVAL},
        {"{\"model\":\"elo\",\"params\":{\"k\":-1}}", "params.k", EO_EINVAL},
        {"{\"model\":\"elo\",\"params\":{\"kk\":1}}", "params.kk", EO_EINVAL},
        {"{\"model\":\"elo\",\"params\":3}", "params", EO_EINVAL},
        {"[]", "", EO_EINVAL},
        {"{\"model\":\"elo\",\"model\":\"elo\"}", "", EO_EPARSE},
        {"{\"model\"", "", EO_EPARSE},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        int rc = eo_pool_file_from_text(bad[i].text, strlen(bad[i].text), &c, name, &err);
        if (rc != bad[i].rc || strcmp(err.field, bad[i].field) != 0 || err.message[0] == '\0')
            fail_msg("%s: rc %d, field '%s': %s", bad[i].text, rc, err.field, err.message);
    }
    assert_int_equal(eo_pool_file_from_text("{\"m\0\":1}", 8, &c, name, &err), EO_EPARSE);
}

static void predictions(void **state)
{
    (void)state;
    json_t *o = eo_prediction_to_json("srv:1", 0.1 + 0.2, EO_DRAW);
    char *text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(17));
    json_decref(o);
    assert_string_equal(text,
                        "{\"id\":\"srv:1\",\"p_a\":0.30000000000000004,\"outcome\":\"draw\"}");
    eo_prediction p;
    eo_round_error err;
    assert_int_equal(eo_prediction_from_text(text, strlen(text), &p, &err), 0);
    free(text);
    assert_string_equal(p.id, "srv:1");
    assert_true(p.p_a == 0.1 + 0.2);
    assert_int_equal(p.outcome, EO_DRAW);
    assert_null(eo_prediction_to_json(NULL, 0.5, EO_WIN_A));

    static const struct {
        const char *text, *field;
    } bad[] = {
        {"{\"id\":\"a\",\"p_a\":1.01,\"outcome\":\"A\"}", "p_a"},
        {"{\"id\":\"a\",\"p_a\":-0.1,\"outcome\":\"A\"}", "p_a"},
        {"{\"id\":\"a\",\"p_a\":\"0.5\",\"outcome\":\"A\"}", "p_a"},
        {"{\"id\":\"a\",\"outcome\":\"A\"}", "p_a"},
        {"{\"id\":\"a\",\"p_a\":0.5,\"outcome\":\"C\"}", "outcome"},
        {"{\"id\":\"a\",\"p_a\":0.5}", "outcome"},
        {"{\"p_a\":0.5,\"outcome\":\"A\"}", "id"},
        {"{\"id\":\"\",\"p_a\":0.5,\"outcome\":\"A\"}", "id"},
        {"{\"id\":\"a\",\"p_a\":0.5,\"outcome\":\"A\",\"x\":1}", "x"},
        {"[1]", ""},
        {"{\"id\":", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&err, 0, sizeof err);
        int rc = eo_prediction_from_text(bad[i].text, strlen(bad[i].text), &p, &err);
        if (rc == 0 || strcmp(err.field, bad[i].field) != 0 || p.id[0] != '\0')
            fail_msg("%s: rc %d, field '%s': %s", bad[i].text, rc, err.field, err.message);
    }
}

static void tune_request(void **state)
{
    (void)state;
    eo_tune_request q;
    eo_request_error err;
    assert_int_equal(eo_tune_request_from_json(NULL, &q, &err), 0);
    assert_true(q.budget == 60 && q.gate == 1.0 && q.eval_from == 0.5 && q.burn_in == 0.1);
    assert_true(q.max_rounds == 1000000 && q.nknobs == 0 && !q.brier);
    json_t *o =
        json_pack("{s:i,s:s,s:f,s:f,s:f,s:i,s:[s,s]}", "budget", 7, "metric", "brier", "gate", 2.5,
                  "eval_from", 0.7, "burn_in", 0.2, "max_rounds", 5000, "knobs", "beta", "tau");
    assert_int_equal(eo_tune_request_from_json(o, &q, &err), 0);
    json_decref(o);
    assert_true(q.budget == 7 && q.brier && q.gate == 2.5 && q.eval_from == 0.7);
    assert_true(q.burn_in == 0.2 && q.max_rounds == 5000 && q.nknobs == 2);
    assert_string_equal(q.knobs[1], "tau");

    static const struct {
        const char *text, *field;
    } bad[] = {
        {"{\"budget\":0}", "budget"},
        {"{\"budget\":1.5}", "budget"},
        {"{\"budget\":1001}", "budget"},
        {"{\"max_rounds\":9}", "max_rounds"},
        {"{\"gate\":-1}", "gate"},
        {"{\"eval_from\":1}", "eval_from"},
        {"{\"burn_in\":0.5}", "burn_in"},
        {"{\"metric\":\"auc\"}", "metric"},
        {"{\"metric\":1}", "metric"},
        {"{\"knobs\":\"beta\"}", "knobs"},
        {"{\"knobs\":[1]}", "knobs[0]"},
        {"{\"knobs\":[\"\"]}", "knobs[0]"},
        {"{\"knobs\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\"]}", "knobs"},
        {"{\"knobs\":[\"a_name_that_is_far_too_long_to_be_a_knob\"]}", "knobs[0]"},
        {"{\"budjet\":3}", "budjet"},
        {"[]", ""},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_error_t je;
        json_t *j = json_loads(bad[i].text, JSON_DECODE_ANY, &je);
        assert_non_null(j);
        memset(&err, 0, sizeof err);
        int rc = eo_tune_request_from_json(j, &q, &err);
        json_decref(j);
        if (rc != EO_EINVAL || strcmp(err.field, bad[i].field) != 0 || err.status != 400 ||
            strcmp(err.code, "invalid_request") != 0)
            fail_msg("%s: rc %d, field '%s': %s", bad[i].text, rc, err.field, err.message);
    }
}

/* The answers: every figure of a result, null where a figure has no value; a job by state. */
static void answers(void **state)
{
    (void)state;
    eo_tune_result r;
    memset(&r, 0, sizeof r);
    eo_pool_config_default(&r.start.cfg);
    r.best.cfg = r.start.cfg;
    r.nknobs = 1;
    r.knobs[0] = "theta";
    r.folds = 5;
    r.start.held.logloss = 0.6;
    r.start.held_logloss_se = NAN;
    r.best.held.logloss = 0.5;
    r.gain = 0.1;
    r.threshold = 0.02;
    r.chose_best = true;
    r.held.logloss_diff = -0.1;
    r.held.logloss_se = NAN;
    json_t *o = eo_tune_result_to_json(&r, false);
    assert_non_null(o);
    json_t *knobs = json_object_get(o, "knobs");
    assert_string_equal(json_string_value(json_array_get(knobs, 0)), "theta");
    assert_string_equal(json_string_value(json_object_get(o, "chosen")), "best");
    assert_string_equal(json_string_value(json_object_get(o, "metric")), "logloss");
    json_t *start = json_object_get(o, "start");
    assert_true(json_real_value(json_object_get(json_object_get(start, "params"), "theta")) ==
                2400.0);
    assert_true(json_is_null(json_object_get(json_object_get(start, "held_out"), "logloss_se")));
    assert_true(json_is_null(json_object_get(json_object_get(o, "held_out_diff"), "logloss_se")));
    json_decref(o);

    eo_tune_job_view v;
    memset(&v, 0, sizeof v);
    v.id = 3;
    v.pool = "p";
    v.state = EO_TUNE_RUNNING;
    v.phase = "tuning";
    v.budget = 60;
    o = eo_tune_job_to_json(&v);
    assert_true(json_is_null(json_object_get(o, "best")));
    assert_string_equal(json_string_value(json_object_get(o, "phase")), "tuning");
    json_decref(o);
    v.state = EO_TUNE_DONE;
    v.result = &r;
    v.applied = true;
    o = eo_tune_job_to_json(&v);
    assert_true(json_is_true(json_object_get(o, "applied")));
    assert_string_equal(json_string_value(json_object_get(o, "model")), "synelo");
    assert_non_null(json_object_get(json_object_get(o, "params"), "theta"));
    assert_non_null(json_object_get(o, "tune"));
    json_decref(o);
    v.state = EO_TUNE_FAILED;
    v.error = "reading the log: gone";
    o = eo_tune_job_to_json(&v);
    assert_string_equal(json_string_value(json_object_get(o, "error")), "reading the log: gone");
    assert_null(json_object_get(o, "tune"));
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pool_file),
        cmocka_unit_test(predictions),
        cmocka_unit_test(tune_request),
        cmocka_unit_test(answers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
