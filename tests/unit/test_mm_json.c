/* The matchmaking decoders and documents of src/codec/mm_json.c: defaults, every member read,
 * each refusal naming its field (and leaving the value unchanged), canonical texts, and the
 * documents' shape. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "evenodds/eo_codec.h"

static json_t *parse(const char *text)
{
    json_t *o = json_loads(text, EO_JSON_DECODE_FLAGS, NULL);
    assert_non_null(o);
    return o;
}

static void queue_of(const char *text, eo_queue_config *cfg)
{
    json_t *o = parse(text);
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team = 0;
    eo_request_error err;
    assert_int_equal(eo_queue_head_from_json(o, name, pool, &team, &err), 0);
    assert_int_equal(eo_queue_config_init(name, pool, team, cfg), 0);
    assert_int_equal(eo_queue_request_apply(o, false, cfg, &err), 0);
    json_decref(o);
}

/* Applying @p text to @p cfg fails naming @p field with @p code; @p cfg is unchanged. */
static void queue_refused(const char *text, bool patch, eo_queue_config *cfg, const char *field,
                          const char *code)
{
    eo_queue_config before = *cfg;
    json_t *o = parse(text);
    eo_request_error err;
    assert_int_equal(eo_queue_request_apply(o, patch, cfg, &err), EO_EINVAL);
    assert_string_equal(err.field, field);
    assert_string_equal(err.code, code);
    assert_int_equal(err.status, 400);
    assert_memory_equal(&before, cfg, sizeof before);
    json_decref(o);
}

static void test_queue_defaults_and_members(void **state)
{
    (void)state;
    eo_queue_config c;
    queue_of("{\"name\":\"q6\",\"pool\":\"default\",\"team_size\":6}", &c);
    assert_string_equal(c.name, "q6");
    assert_string_equal(c.pool, "default");
    assert_int_equal(c.match.team_size, 6);
    assert_int_equal(c.interval_ms, 1000);
    assert_int_equal(c.ticket_ttl_s, 600);
    assert_int_equal(c.ready_check_s, 0);
    eo_match_config d;
    assert_int_equal(eo_match_config_default(6, &d), 0);
    assert_int_equal(c.match.nsteps, d.nsteps);
    assert_true(c.match.steps[1].window == d.steps[1].window);

    queue_of("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"regions\":[\"eu\",\"us\"],"
             "\"maps\":[\"m1\"],\"steps\":[{\"after\":0,\"window\":10,\"p_max\":0.05},"
             "{\"after\":30,\"latency_ms\":80,\"team_min\":1}],\"linear\":true,\"sigma_z\":2,"
             "\"calib_rounds\":5,\"calib_sigma\":100,\"calib_window\":300,\"interval_ms\":50,"
             "\"ticket_ttl_s\":90,\"ready_check_s\":20}",
             &c);
    assert_int_equal(c.match.nregions, 2);
    assert_string_equal(c.regions[1], "us");
    assert_int_equal(c.match.nmaps, 1);
    assert_int_equal(c.match.nsteps, 2);
    /* a step takes what it leaves out from the one before */
    assert_true(c.match.steps[1].window == 10.0);
    assert_true(c.match.steps[1].p_max == 0.05);
    assert_true(c.match.steps[1].latency_ms == 80.0);
    assert_int_equal(c.match.steps[1].team_min, 1);
    assert_true(c.match.linear);
    assert_true(c.match.sigma_z == 2.0);
    assert_int_equal(c.match.calib_rounds, 5);
    assert_int_equal(c.interval_ms, 50);
    assert_int_equal(c.ticket_ttl_s, 90);
    assert_int_equal(c.ready_check_s, 20);

    /* the document reads back to the same queue */
    json_t *doc = eo_queue_config_to_json(&c);
    eo_queue_config back;
    eo_request_error err;
    assert_int_equal(eo_queue_config_init("x", "y", 1, &back), 0);
    assert_int_equal(eo_queue_request_apply(doc, false, &back, &err), 0);
    assert_memory_equal(&c.match, &back.match, sizeof c.match);
    assert_string_equal(back.name, "q");
    json_decref(doc);
}

static void test_queue_refusals(void **state)
{
    (void)state;
    eo_queue_config c;
    queue_of("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"regions\":[\"eu\"]}", &c);
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"steps\":[{\"after\":5}]}",
                  false, &c, "steps[0].after", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"steps\":[{\"after\":0},"
                  "{\"after\":0}]}",
                  false, &c, "steps[1].after", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"steps\":[{\"after\":0,"
                  "\"p_max\":0.7}]}",
                  false, &c, "steps[0].p_max", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"steps\":[{\"after\":0,"
                  "\"team_min\":3}]}",
                  false, &c, "steps[0].team_min", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"maps\":[\"a\",\"a\"]}", false,
                  &c, "maps[1]", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"interval_ms\":5}", false, &c,
                  "interval_ms", "invalid_request");
    queue_refused("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":2,\"colour\":1}", false, &c,
                  "colour", "invalid_request");
    queue_refused("{\"regions\":[\"us\"]}", true, &c, "regions", "invalid_request");
    queue_refused("{\"team_size\":3}", true, &c, "team_size", "invalid_request");
    queue_refused("{\"steps\":[]}", true, &c, "steps", "invalid_request");

    json_t *o = parse("{\"name\":\"a/b\",\"pool\":\"p\",\"team_size\":2}");
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team;
    eo_request_error err;
    assert_int_equal(eo_queue_head_from_json(o, name, pool, &team, &err), EO_EINVAL);
    assert_string_equal(err.field, "name");
    json_decref(o);
    o = parse("{\"name\":\"a\",\"pool\":\"p\"}");
    assert_int_equal(eo_queue_head_from_json(o, name, pool, &team, &err), EO_EINVAL);
    assert_string_equal(err.field, "team_size");
    json_decref(o);
}

static void ticket_queue(eo_queue_config *q)
{
    queue_of("{\"name\":\"q\",\"pool\":\"p\",\"team_size\":3,\"regions\":[\"eu\",\"us\"]}", q);
}

static void ticket_refused(const char *text, const char *field, const char *code)
{
    eo_queue_config q;
    ticket_queue(&q);
    json_t *o = parse(text);
    eo_ticket_request *r = malloc(sizeof *r);
    eo_request_error err;
    assert_int_equal(eo_ticket_request_from_json(o, &q, r, &err), EO_EINVAL);
    assert_string_equal(err.field, field);
    assert_string_equal(err.code, code);
    json_decref(o);
    free(r);
}

static void test_ticket(void **state)
{
    (void)state;
    eo_queue_config q;
    ticket_queue(&q);
    eo_ticket_request *r = malloc(sizeof *r);
    json_t *o = parse("{\"id\":\"t1\",\"players\":[{\"id\":\"a\",\"latency\":{\"us\":120,\"eu\":"
                      "30}},{\"id\":\"b\"}]}");
    eo_request_error err;
    assert_int_equal(eo_ticket_request_from_json(o, &q, r, &err), 0);
    assert_string_equal(r->id, "t1");
    assert_int_equal(r->nplayers, 2);
    assert_true(r->has_latency[0]);
    assert_true(r->latency[0][0] == 30.0 && r->latency[0][1] == 120.0);
    assert_false(r->has_latency[1]);
    char *text = NULL;
    assert_int_equal(eo_ticket_request_text(r, &q, &text), 0);
    /* canonical: no id, sorted keys, latencies by name */
    assert_string_equal(text, "{\"players\":[{\"id\":\"a\",\"latency\":{\"eu\":30.0,\"us\":120.0}},"
                              "{\"id\":\"b\"}]}");
    free(text);
    json_decref(o);
    /* a region left out is one the player cannot play in */
    o = parse("{\"players\":[{\"id\":\"a\",\"latency\":{\"eu\":30}}]}");
    assert_int_equal(eo_ticket_request_from_json(o, &q, r, &err), 0);
    assert_string_equal(r->id, "");
    assert_true(r->latency[0][1] < 0.0);
    json_decref(o);
    free(r);

    ticket_refused("{\"players\":[{\"id\":\"a\"},{\"id\":\"b\"},{\"id\":\"c\"},{\"id\":\"d\"}]}",
                   "players", "party_too_large");
    ticket_refused("{\"players\":[{\"id\":\"a\",\"latency\":{\"mars\":1}}]}",
                   "players[0].latency.mars", "unknown_region");
    ticket_refused("{\"players\":[{\"id\":\"a\"},{\"id\":\"a\"}]}", "players[1].id",
                   "invalid_request");
    ticket_refused("{\"players\":[{\"id\":\"a\",\"latency\":{\"eu\":1e9}}]}",
                   "players[0].latency.eu", "invalid_request");
    ticket_refused("{\"players\":[]}", "players", "invalid_request");
    ticket_refused("{\"players\":[{\"name\":\"a\"}]}", "players[0].name", "invalid_request");
    ticket_refused("{\"id\":7,\"players\":[{\"id\":\"a\"}]}", "id", "invalid_request");
}

static void test_instance_backfill_ready(void **state)
{
    (void)state;
    eo_instance_request r;
    eo_request_error err;
    json_t *o = parse("{\"id\":\"fra-3\",\"queues\":[\"a\",\"b\"],\"address\":\"203.0.113.7:"
                      "27015\",\"region\":\"eu\",\"capacity\":4}");
    assert_int_equal(eo_instance_request_from_json(o, &r, &err), 0);
    assert_int_equal(r.nqueues, 2);
    assert_string_equal(r.queues[1], "b");
    assert_int_equal(r.capacity, 4);
    json_t *doc = eo_instance_request_to_json(&r);
    eo_instance_request back;
    assert_int_equal(eo_instance_request_from_json(doc, &back, &err), 0);
    assert_memory_equal(&r, &back, sizeof r);
    json_decref(doc);
    json_decref(o);
    o = parse("{\"id\":\"x\",\"queues\":[\"a\"],\"address\":\"has space\"}");
    assert_int_equal(eo_instance_request_from_json(o, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "address");
    json_decref(o);
    o = parse("{\"id\":\"x\",\"queues\":[\"a\",\"a\"],\"address\":\"h:1\"}");
    assert_int_equal(eo_instance_request_from_json(o, &r, &err), EO_EINVAL);
    assert_string_equal(err.field, "queues[1]");
    json_decref(o);

    eo_backfill_request b;
    o = parse("{\"team\":\"B\",\"slots\":2}");
    assert_int_equal(eo_backfill_request_from_json(o, &b, &err), 0);
    assert_int_equal(b.team, EO_BALANCE_B);
    assert_int_equal(b.slots, 2);
    assert_false(b.has_rating);
    json_decref(o);
    o = parse("{\"team\":\"A\",\"slots\":0}");
    assert_int_equal(eo_backfill_request_from_json(o, &b, &err), EO_EINVAL);
    assert_string_equal(err.field, "slots");
    json_decref(o);

    eo_ready_request rr;
    o = parse("{\"player\":\"p\",\"accept\":false}");
    assert_int_equal(eo_ready_request_from_json(o, &rr, &err), 0);
    assert_string_equal(rr.player, "p");
    assert_false(rr.accept);
    json_decref(o);
    o = parse("{\"accept\":1}");
    assert_int_equal(eo_ready_request_from_json(o, &rr, &err), EO_EINVAL);
    assert_string_equal(err.field, "accept");
    json_decref(o);
}

static void test_documents(void **state)
{
    (void)state;
    eo_mm_seat seats[4] = {{"a", "t1", EO_BALANCE_A, "s1"},
                           {"b", "t1", EO_BALANCE_A, "s2"},
                           {"c", "t2", EO_BALANCE_B, "s3"},
                           {"d", "t3", EO_BALANCE_B, "s4"}};
    eo_mm_match_view m = {"m1", "q", "dust", NULL, 0.52, 0.9, 2, seats, 4, 1000};
    const char *players[2] = {"a", "b"};
    eo_ticket_view v = {.id = "t1",
                        .queue = "q",
                        .status = "assigned",
                        .players = players,
                        .nplayers = 2,
                        .created_at = 900,
                        .updated_at = 1100,
                        .match = &m,
                        .session = "s",
                        .instance = "i",
                        .address = "h:1"};
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(eo_ticket_view_text(&v, &text, &len), 0);
    assert_int_equal(len, strlen(text));
    json_t *o = parse(text); /* valid JSON, no duplicate key */
    free(text);
    const json_t *mo = json_object_get(o, "match");
    assert_int_equal(json_array_size(json_object_get(mo, "A")), 2);
    assert_true(json_is_null(json_object_get(mo, "region")));
    const json_t *as = json_object_get(o, "assignment");
    /* only the ticket's own players' secrets */
    assert_int_equal(json_array_size(json_object_get(as, "players")), 2);
    assert_string_equal(json_string_value(json_object_get(
                            json_array_get(json_object_get(as, "players"), 1), "secret")),
                        "s2");
    /* an id that needs escaping stays one string; a P(A) that is not finite is refused */
    json_decref(o);
    v.id = "t\"1\n";
    v.match = NULL;
    v.session = NULL;
    assert_int_equal(eo_ticket_view_text(&v, &text, NULL), 0);
    o = parse(text);
    assert_string_equal(json_string_value(json_object_get(o, "ticket")), "t\"1\n");
    free(text);
    json_decref(o);
    m.p_a = NAN;
    v.match = &m;
    assert_int_equal(eo_ticket_view_text(&v, &text, NULL), EO_EINVAL);
    m.p_a = 0.52;
    eo_session_view sv = {"s",  "i",  "h:1",        "pool", "open", &m,
                          1000, 1000, EO_BALANCE_B, 1,      1500.0, 1200};
    assert_int_equal(eo_session_view_text(&sv, &text, NULL), 0);
    o = parse(text);
    free(text);
    assert_int_equal(json_array_size(json_object_get(o, "players")), 4);
    assert_string_equal(json_string_value(json_object_get(json_object_get(o, "backfill"), "team")),
                        "B");
    json_decref(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_queue_defaults_and_members),
        cmocka_unit_test(test_queue_refusals),
        cmocka_unit_test(test_ticket),
        cmocka_unit_test(test_instance_backfill_ready),
        cmocka_unit_test(test_documents),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
