/*
 * The matchmaking coordinator through the real service (docs/MATCHMAKING.md): queues,
 * tickets polled with their own token, instances that register, heartbeat and poll their
 * sessions, ready checks, backfill, cancels racing the passes, an instance that stops
 * heartbeating, a kill -9 in the middle (nothing acknowledged lost or doubled), and every case
 * of bad input the API names, each refused with the field and nothing changed.
 */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"
#include "evenodds/eo_instance.h"

/* ---- helpers ------------------------------------------------------------------------------- */

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static void start(e2e_server *s, const char *const *extra)
{
    assert_int_equal(e2e_init(s), 0);
    const char *base[16] = {"--default-pool", "default"};
    size_t n = 2;
    for (size_t i = 0; extra && extra[i] && n < 15; i++)
        base[n++] = extra[i];
    base[n] = NULL;
    assert_int_equal(e2e_start(s, base), 0);
}

/* One call that must answer @p status; its body parsed (NULL when it has none). */
static json_t *call(const e2e_server *s, const char *method, const char *path, const char *key,
                    const char *body, long status)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, method, path, key, body, &r), 0);
    if (r.status != status)
        fail_msg("%s %s: %ld (expected %ld): %s", method, path, r.status, status,
                 r.body ? r.body : "");
    json_t *o = e2e_json(&r);
    e2e_resp_free(&r);
    return o;
}

/* A refusal: @p status with error @p code naming @p field. */
static void refused(const e2e_server *s, const char *method, const char *path, const char *key,
                    const char *body, long status, const char *code, const char *field)
{
    json_t *o = call(s, method, path, key, body, status);
    json_t *e = json_object_get(o, "error");
    assert_non_null(e);
    assert_string_equal(json_string_value(json_object_get(e, "code")), code);
    if (field != NULL)
        assert_string_equal(json_string_value(json_object_get(e, "field")), field);
    json_decref(o);
}

/* N of a test ticket id "<letter>N". */
static int num_of(const char *ticket)
{
    char *end;
    long n = strtol(ticket + 1, &end, 10);
    assert_true(*end == '\0' && n >= 0 && n < 100000);
    return (int)n;
}

static const char *str(const json_t *o, const char *key)
{
    const char *v = json_string_value(json_object_get(o, key));
    return v ? v : "";
}

static void make_queue(const e2e_server *s, const char *body)
{
    json_decref(call(s, "POST", "/v1/queues", s->admin_key, body, 201));
}

/* Registers an instance; its token in @p token (33 bytes). */
static void add_instance(const e2e_server *s, const char *body, char *token)
{
    json_t *o = call(s, "POST", "/v1/instances", s->server_key, body, 201);
    snprintf(token, 33, "%s", str(o, "token"));
    assert_int_equal(strlen(token), 32);
    json_decref(o);
}

/* Files ticket @p id for one player @p player (or the players' JSON array @p players when not
 * NULL); its token in @p token. */
static void add_ticket(const e2e_server *s, const char *queue, const char *id, const char *players,
                       char *token)
{
    char path[160], body[1024];
    snprintf(path, sizeof path, "/v1/queues/%s/tickets", queue);
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"players\":%s}", id, players);
    json_t *o = call(s, "POST", path, s->server_key, body, 201);
    assert_string_equal(str(o, "status"), "queued");
    if (token != NULL)
        snprintf(token, 33, "%s", str(o, "token"));
    json_decref(o);
}

static void one_player(char *out, size_t cap, const char *player)
{
    snprintf(out, cap, "[{\"id\":\"%s\"}]", player);
}

static json_t *ticket(const e2e_server *s, const char *id, const char *key)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/tickets/%s", id);
    return call(s, "GET", path, key, NULL, 200);
}

/* Polls ticket @p id until its status is @p want (at most 10 s); its document. */
static json_t *wait_status(const e2e_server *s, const char *id, const char *want)
{
    for (int i = 0; i < 1000; i++) {
        json_t *o = ticket(s, id, s->server_key);
        if (strcmp(str(o, "status"), want) == 0)
            return o;
        json_decref(o);
        sleep_ms(10);
    }
    fail_msg("ticket %s never became %s", id, want);
    return NULL;
}

static json_t *instance_doc(const e2e_server *s, const char *id, const char *token, bool heartbeat)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/instances/%s%s", id, heartbeat ? "/heartbeat" : "");
    return call(s, heartbeat ? "POST" : "GET", path, token, NULL, 200);
}

static const json_t *figures(json_t *queue)
{
    return json_object_get(queue, "figures");
}

static json_int_t figure(const e2e_server *s, const char *queue, const char *name)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/queues/%s", queue);
    json_t *o = call(s, "GET", path, s->admin_key, NULL, 200);
    json_int_t v = json_integer_value(json_object_get(figures(o), name));
    json_decref(o);
    return v;
}

/* The value of the sample @p series (name and labels, as /metrics writes them) in one scrape;
 * -1 when it is not there. */
static long long sample(const e2e_server *s, const char *series)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, "GET", "/metrics", NULL, NULL, &r), 0);
    assert_int_equal(r.status, 200);
    long long v = -1;
    size_t n = strlen(series);
    for (const char *l = r.body; l != NULL; l = strchr(l, '\n')) {
        l += *l == '\n'; /* each line's start */
        if (strncmp(l, series, n) == 0 && l[n] == ' ')
            v = strtoll(l + n + 1, NULL, 10);
    }
    e2e_resp_free(&r);
    return v;
}

#define MM_M "evenodds_matchmaking_"

/* Closes the session assigned ticket @p id, with its instance's token @p it. */
static void close_session_of(const e2e_server *s, const char *id, const char *it)
{
    json_t *o = ticket(s, id, s->server_key);
    char path[160];
    snprintf(path, sizeof path, "/v1/sessions/%s/close",
             str(json_object_get(o, "assignment"), "session"));
    json_decref(o);
    json_decref(call(s, "POST", path, it, NULL, 200));
}

/* Polls until sample @p series is @p want (at most 5 s). */
static void sample_is(const e2e_server *s, const char *series, long long want)
{
    long long v = -1;
    for (int i = 0; i < 250 && (v = sample(s, series)) != want; i++)
        sleep_ms(20);
    if (v != want)
        fail_msg("%s is %lld, expected %lld", series, v, want);
}

/* ---- the whole path ---------------------------------------------------------------------- */

static void test_flow(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"duel\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20,"
                   "\"regions\":[\"eu\",\"us\"],\"maps\":[\"dust\"]}");
    char it[33], tk[4][33], players[128];
    add_instance(&s,
                 "{\"id\":\"i1\",\"queues\":[\"duel\"],\"address\":\"10.0.0.1:27015\","
                 "\"region\":\"eu\",\"capacity\":1}",
                 it);
    const char *ids[4] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        char id[16];
        snprintf(players, sizeof players, "[{\"id\":\"%s\",\"latency\":{\"eu\":%d}}]", ids[i],
                 20 + i);
        snprintf(id, sizeof id, "t%s", ids[i]);
        add_ticket(&s, "duel", id, players, tk[i]);
    }
    json_decref(wait_status(&s, "td", "assigned"));
    /* the game client polls its own ticket with its token, no key */
    json_t *o = ticket(&s, "ta", tk[0]);
    assert_string_equal(str(o, "status"), "assigned");
    const json_t *m = json_object_get(o, "match");
    assert_int_equal(json_array_size(json_object_get(m, "A")), 2);
    assert_int_equal(json_array_size(json_object_get(m, "B")), 2);
    assert_string_equal(str(m, "map"), "dust");
    assert_string_equal(str(m, "region"), "eu");
    const json_t *as = json_object_get(o, "assignment");
    assert_string_equal(str(as, "address"), "10.0.0.1:27015");
    char session[64], secret[64];
    snprintf(session, sizeof session, "%s", str(as, "session"));
    const json_t *me = json_array_get(json_object_get(as, "players"), 0);
    assert_string_equal(str(me, "id"), "a");
    snprintf(secret, sizeof secret, "%s", str(me, "secret"));
    assert_int_equal(strlen(secret), 32);
    json_decref(o);
    /* another ticket's token, a made-up one, or none: refused; an unknown ticket with a key */
    refused(&s, "GET", "/v1/tickets/ta", tk[1], NULL, 401, "unauthorized", NULL);
    refused(&s, "GET", "/v1/tickets/ta", "00000000000000000000000000000000", NULL, 401,
            "unauthorized", NULL);
    refused(&s, "GET", "/v1/tickets/ta", NULL, NULL, 401, "unauthorized", NULL);
    refused(&s, "GET", "/v1/tickets/nope", s.server_key, NULL, 404, "unknown_ticket", "ticket");
    /* the instance learns the session by polling: the same secret for player a */
    o = instance_doc(&s, "i1", it, true);
    const json_t *sess = json_array_get(json_object_get(o, "sessions"), 0);
    assert_string_equal(str(sess, "session"), session);
    assert_int_equal(json_array_size(json_object_get(sess, "players")), 4);
    bool found = false;
    size_t i;
    const json_t *p;
    json_array_foreach(json_object_get(sess, "players"), i, p) found |=
        strcmp(str(p, "id"), "a") == 0 && strcmp(str(p, "secret"), secret) == 0;
    assert_true(found);
    assert_int_equal(json_integer_value(json_object_get(o, "open")), 1);
    json_decref(o);
    /* capacity 1: the next match waits (matched) until the session closes */
    for (int k = 0; k < 4; k++) {
        char id[16];
        snprintf(id, sizeof id, "u%d", k);
        one_player(players, sizeof players, id + 1);
        snprintf(players, sizeof players, "[{\"id\":\"p%d\",\"latency\":{\"eu\":40}}]", k);
        add_ticket(&s, "duel", id, players, NULL);
    }
    json_decref(wait_status(&s, "u3", "matched"));
    assert_int_equal(figure(&s, "duel", "matched"), 4);
    char path[160];
    snprintf(path, sizeof path, "/v1/sessions/%s/close", session);
    o = call(&s, "POST", path, it, NULL, 200);
    assert_string_equal(str(o, "status"), "closed");
    json_decref(o);
    o = wait_status(&s, "u3", "assigned");
    char second[64];
    snprintf(second, sizeof second, "%s", str(json_object_get(o, "assignment"), "session"));
    json_decref(o);
    o = call(&s, "POST", path, it, NULL, 200); /* a repeat answers the same */
    assert_string_equal(str(o, "status"), "closed");
    json_decref(o);
    assert_int_equal(figure(&s, "duel", "matches"), 2);
    /* two free instances: a match goes to the one in its players' best region */
    char it2[33];
    add_instance(&s,
                 "{\"id\":\"i2\",\"queues\":[\"duel\"],\"address\":\"10.0.0.2:27015\","
                 "\"region\":\"us\",\"capacity\":1}",
                 it2);
    snprintf(path, sizeof path, "/v1/sessions/%s/close", second);
    json_decref(call(&s, "POST", path, it, NULL, 200));
    for (int k = 0; k < 4; k++) {
        char id[16];
        snprintf(id, sizeof id, "w%d", k);
        snprintf(players, sizeof players,
                 "[{\"id\":\"q%d\",\"latency\":{\"eu\":120,\"us\":%d}}]", k, 25 + k);
        add_ticket(&s, "duel", id, players, NULL);
    }
    o = wait_status(&s, "w3", "assigned");
    assert_string_equal(str(json_object_get(o, "assignment"), "instance"), "i2");
    assert_string_equal(str(json_object_get(o, "match"), "region"), "us");
    json_decref(o);
    e2e_cleanup(&s);
}

/* ---- bad input: each refused naming the field, nothing changed ------------------------------ */

static void test_bad_input(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20,"
                   "\"regions\":[\"eu\"]}");
    char it1[33], it2[33], tk[33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\",\"region\":\"eu\"}",
                 it1);
    add_instance(&s, "{\"id\":\"i2\",\"queues\":[\"q\"],\"address\":\"h:2\",\"region\":\"eu\"}",
                 it2);
    add_ticket(&s, "q", "t1", "[{\"id\":\"alice\"}]", tk);
    json_int_t before = figure(&s, "q", "tickets");
    /* a ticket for an unknown queue */
    refused(&s, "POST", "/v1/queues/nope/tickets", s.server_key, "{\"players\":[{\"id\":\"x\"}]}",
            404, "unknown_queue", "queue");
    /* a party larger than a team */
    refused(&s, "POST", "/v1/queues/q/tickets", s.server_key,
            "{\"players\":[{\"id\":\"x\"},{\"id\":\"y\"},{\"id\":\"z\"}]}", 400, "party_too_large",
            "players");
    /* a player already queued */
    refused(&s, "POST", "/v1/queues/q/tickets", s.server_key,
            "{\"players\":[{\"id\":\"bob\"},{\"id\":\"alice\"}]}", 409, "player_queued",
            "players[1].id");
    /* a ticket id reused with other content; the same content is the same ticket */
    refused(&s, "POST", "/v1/queues/q/tickets", s.server_key,
            "{\"id\":\"t1\",\"players\":[{\"id\":\"carol\"}]}", 409, "ticket_conflict", "id");
    json_t *o = call(&s, "POST", "/v1/queues/q/tickets", s.server_key,
                     "{\"id\":\"t1\",\"players\":[{\"id\":\"alice\"}]}", 200);
    assert_string_equal(str(o, "token"), tk);
    json_decref(o);
    /* a latency for a region the queue does not have */
    refused(&s, "POST", "/v1/queues/q/tickets", s.server_key,
            "{\"players\":[{\"id\":\"dan\",\"latency\":{\"mars\":5}}]}", 400, "unknown_region",
            "players[0].latency.mars");
    refused(&s, "POST", "/v1/queues/q/tickets", s.server_key,
            "{\"players\":[{\"id\":\"dan\",\"latency\":{\"eu\":-5}}]}", 400, "invalid_request",
            "players[0].latency.eu");
    assert_int_equal(figure(&s, "q", "tickets"), before);
    assert_int_equal(figure(&s, "q", "waiting"), 1);
    /* an instance heartbeating for another's id */
    refused(&s, "POST", "/v1/instances/i2/heartbeat", it1, NULL, 403, "forbidden", "instance");
    refused(&s, "POST", "/v1/instances/i2/heartbeat", s.server_key, NULL, 403, "forbidden", NULL);
    /* an instance for a queue that does not exist, or outside its regions */
    refused(&s, "POST", "/v1/instances", s.server_key,
            "{\"id\":\"i3\",\"queues\":[\"q\",\"zz\"],\"address\":\"h:3\",\"region\":\"eu\"}", 400,
            "unknown_queue", "queues[1]");
    refused(&s, "POST", "/v1/instances", s.server_key,
            "{\"id\":\"i3\",\"queues\":[\"q\"],\"address\":\"h:3\",\"region\":\"asia\"}", 400,
            "unknown_region", "region");
    refused(&s, "GET", "/v1/instances/i3", s.admin_key, NULL, 404, "unknown_instance", "instance");
    /* a session report or backfill for a session that is not the caller's */
    add_ticket(&s, "q", "t2", "[{\"id\":\"bob\"}]", NULL);
    add_ticket(&s, "q", "t3", "[{\"id\":\"carol\"}]", NULL);
    add_ticket(&s, "q", "t4", "[{\"id\":\"dave\"}]", NULL);
    o = wait_status(&s, "t4", "assigned");
    const json_t *as = json_object_get(o, "assignment");
    char session[64], path[160], owner[8];
    snprintf(session, sizeof session, "%s", str(as, "session"));
    snprintf(owner, sizeof owner, "%s", str(as, "instance"));
    json_decref(o);
    const char *other = strcmp(owner, "i1") == 0 ? it2 : it1;
    snprintf(path, sizeof path, "/v1/sessions/%s/backfill", session);
    refused(&s, "POST", path, other, "{\"team\":\"A\",\"slots\":1}", 403, "forbidden", "session");
    refused(&s, "POST", path, strcmp(owner, "i1") == 0 ? it1 : it2, "{\"team\":\"C\",\"slots\":1}",
            400, "invalid_request", "team");
    refused(&s, "POST", path, strcmp(owner, "i1") == 0 ? it1 : it2, "{\"team\":\"A\",\"slots\":3}",
            400, "invalid_request", "slots");
    snprintf(path, sizeof path, "/v1/sessions/%s/close", session);
    refused(&s, "POST", path, other, NULL, 403, "forbidden", "session");
    snprintf(path, sizeof path, "/v1/sessions/%s", session);
    o = call(&s, "GET", path, s.admin_key, NULL, 200);
    assert_string_equal(str(o, "status"), "open"); /* nothing changed */
    assert_true(json_is_null(json_object_get(o, "backfill")));
    json_decref(o);
    /* queues: an unknown pool, a bad step, a change of what tickets were read against */
    refused(&s, "POST", "/v1/queues", s.admin_key,
            "{\"name\":\"q2\",\"pool\":\"nope\",\"team_size\":2}", 400, "unknown_pool", "pool");
    refused(&s, "POST", "/v1/queues", s.admin_key,
            "{\"name\":\"q2\",\"pool\":\"default\",\"team_size\":2,\"steps\":[{\"after\":5}]}", 400,
            "invalid_request", "steps[0].after");
    refused(&s, "POST", "/v1/queues", s.admin_key,
            "{\"name\":\"q2\",\"pool\":\"default\",\"team_size\":40}", 400, "invalid_request",
            "team_size");
    refused(&s, "POST", "/v1/queues", s.admin_key,
            "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2}", 409, "queue_exists", "name");
    refused(&s, "PATCH", "/v1/queues/q", s.admin_key, "{\"regions\":[\"us\"]}", 400,
            "invalid_request", "regions");
    refused(&s, "POST", "/v1/queues", s.server_key,
            "{\"name\":\"q3\",\"pool\":\"default\",\"team_size\":2}", 403, "forbidden", NULL);
    o = call(&s, "GET", "/v1/queues", s.admin_key, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(o, "queues")), 1);
    json_decref(o);
    e2e_cleanup(&s);
}

/* ---- cancels racing the passes -------------------------------------------------------------- */

#define RACE_TICKETS 240

typedef struct race {
    const e2e_server *s;
    long cancel_status[RACE_TICKETS]; /* 0: not cancelled */
} race;

static void *canceller(void *arg)
{
    race *r = arg;
    for (int i = 0; i < RACE_TICKETS; i += 2) {
        char id[32], path[64];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(path, sizeof path, "/v1/tickets/%s", id);
        /* wait until it exists: created by the other thread */
        for (int k = 0; k < 2000; k++) {
            e2e_resp resp;
            if (e2e_call(r->s, "DELETE", path, r->s->server_key, NULL, &resp) != 0)
                return NULL;
            long st = resp.status;
            e2e_resp_free(&resp);
            if (st != 404) {
                r->cancel_status[i] = st;
                break;
            }
            sleep_ms(1);
        }
    }
    return NULL;
}

/* Counts, over every session of @p instance, the seats of each ticket "rN" in @p seats. */
static void count_seats(const e2e_server *s, const char *id, const char *token, int *seats)
{
    json_t *o = instance_doc(s, id, token, false);
    size_t i, j;
    const json_t *sess, *p;
    json_array_foreach(json_object_get(o, "sessions"), i, sess)
        json_array_foreach(json_object_get(sess, "players"), j, p)
    {
        int n = num_of(str(p, "ticket"));
        assert_true(n < RACE_TICKETS);
        seats[n]++;
    }
    json_decref(o);
}

/* A cancel that lands on a matched ticket (its match waits for an instance) dissolves the
 * match: the others go back to the queue and match again with a newcomer. */
static void test_cancel_matched(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20}");
    const char *ids[5] = {"ma", "mb", "mc", "md", "me"};
    char tk[5][33];
    for (int i = 0; i < 4; i++) {
        char players[64];
        one_player(players, sizeof players, ids[i]);
        add_ticket(&s, "q", ids[i], players, tk[i]);
    }
    for (int i = 0; i < 4; i++)
        json_decref(wait_status(&s, ids[i], "matched"));
    json_t *o = call(&s, "DELETE", "/v1/tickets/mb", tk[1], NULL, 200);
    assert_string_equal(str(o, "status"), "cancelled");
    json_decref(o);
    for (int i = 0; i < 4; i++) {
        o = ticket(&s, ids[i], s.server_key);
        assert_string_equal(str(o, "status"), i == 1 ? "cancelled" : "queued");
        assert_null(json_object_get(o, "match"));
        json_decref(o);
    }
    add_ticket(&s, "q", "me", "[{\"id\":\"me\"}]", tk[4]);
    json_decref(wait_status(&s, "me", "matched"));
    char it[33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\"}", it);
    for (int i = 0; i < 5; i++)
        if (i != 1)
            json_decref(wait_status(&s, ids[i], "assigned"));
    o = ticket(&s, "mb", tk[1]);
    assert_string_equal(str(o, "status"), "cancelled");
    json_decref(o);
    e2e_cleanup(&s);
}

static void test_cancel_during_matching(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":10,"
                   "\"steps\":[{\"after\":0,\"window\":100000,\"p_max\":0.5,\"quality_min\":0}]}");
    char it[33];
    /* room for every match, but only from the middle of the run: the first matches wait,
     * matched, and cancels dissolve them */
    race r = {.s = &s};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, canceller, &r), 0);
    for (int i = 0; i < RACE_TICKETS; i++) {
        char id[32], players[64];
        snprintf(id, sizeof id, "r%d", i);
        snprintf(players, sizeof players, "[{\"id\":\"p%d\"}]", i);
        add_ticket(&s, "q", id, players, NULL);
        if (i == RACE_TICKETS / 2)
            add_instance(&s,
                         "{\"id\":\"big\",\"queues\":[\"q\"],\"address\":\"h:1\","
                         "\"capacity\":1000}",
                         it);
    }
    pthread_join(th, NULL);
    sleep_ms(300); /* a few passes more */
    int seats[RACE_TICKETS] = {0};
    count_seats(&s, "big", it, seats);
    size_t cancelled = 0, assigned = 0, leftover = 0;
    for (int i = 0; i < RACE_TICKETS; i++) {
        char id[32];
        snprintf(id, sizeof id, "r%d", i);
        json_t *o = ticket(&s, id, s.server_key);
        const char *st = str(o, "status");
        if (strcmp(st, "cancelled") == 0) {
            cancelled++;
            assert_int_equal(seats[i], 0); /* never also in a session */
            assert_int_equal(r.cancel_status[i], 200);
        } else if (strcmp(st, "queued") == 0) { /* fewer than a match left over */
            leftover++;
            assert_int_equal(seats[i], 0);
            assert_int_equal(r.cancel_status[i], 0);
        } else {
            assert_string_equal(st, "assigned"); /* an odd one, or one the cancel came late for */
            assigned++;
            assert_int_equal(seats[i], 1); /* in exactly one session */
            assert_true(r.cancel_status[i] == 0 || r.cancel_status[i] == 409);
        }
        json_decref(o);
    }
    assert_int_equal(cancelled + assigned + leftover, RACE_TICKETS);
    assert_true(cancelled > 0);
    assert_true(leftover < 4); /* fewer than one match of 2v2 */
    e2e_cleanup(&s);
}

/* ---- an instance that stops heartbeating -------------------------------------------------------
 */

/* Polls instance @p id (admin key) until its status is @p want (at most 10 s), heartbeating
 * instance @p keep (token @p keep_token; NULL: none) meanwhile; its document. */
static json_t *wait_instance(const e2e_server *s, const char *id, const char *want,
                             const char *keep, const char *keep_token)
{
    for (int i = 0; i < 500; i++) {
        if (keep != NULL)
            json_decref(instance_doc(s, keep, keep_token, true));
        json_t *o = instance_doc(s, id, s->admin_key, false);
        if (strcmp(str(o, "status"), want) == 0)
            return o;
        json_decref(o);
        sleep_ms(20);
    }
    fail_msg("instance %s never became %s", id, want);
    return NULL;
}

static void session_is(const e2e_server *s, const char *session, const char *want)
{
    char path[160];
    snprintf(path, sizeof path, "/v1/sessions/%s", session);
    json_t *o = call(s, "GET", path, s->admin_key, NULL, 200);
    assert_string_equal(str(o, "status"), want);
    json_decref(o);
}

/* The session of assigned ticket @p id in @p session (64 bytes). */
static void session_of(const e2e_server *s, const char *id, char *session)
{
    json_t *o = wait_status(s, id, "assigned");
    snprintf(session, 64, "%s", str(json_object_get(o, "assignment"), "session"));
    json_decref(o);
}

/* A service with options @p extra, a 1v1 queue "q", instance i1 (registration @p instance, its
 * token in @p token) and the session of tickets a and b on it in @p session (64 bytes). */
static void one_session(e2e_server *s, const char *const *extra, const char *instance, char *token,
                        char *session)
{
    start(s, extra);
    make_queue(s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":1,\"interval_ms\":20}");
    add_instance(s, instance, token);
    add_ticket(s, "q", "a", "[{\"id\":\"pa\"}]", NULL);
    add_ticket(s, "q", "b", "[{\"id\":\"pb\"}]", NULL);
    session_of(s, "b", session);
}

/* An instance silent past the heartbeat timeout drains: its session stays open, the new match
 * waits and the backfill it asked for is not served, also across a restart; its heartbeat
 * within the grace makes it live again with its session, and then both are served. */
static void test_instance_resumes(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--mm-heartbeat-timeout", "600", "--mm-heartbeat-grace", "8000", NULL};
    char it[33], session[64], path[160];
    one_session(&s, extra, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\",\"capacity\":2}",
                it, session);
    /* i1 goes silent: draining, its session open */
    json_t *o = wait_instance(&s, "i1", "draining", NULL, NULL);
    assert_true(json_is_true(json_object_get(o, "silent")));
    assert_true(json_is_false(json_object_get(o, "drained")));
    assert_int_equal(json_array_size(json_object_get(o, "sessions")), 1);
    json_decref(o);
    session_is(&s, session, "open");
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"draining\"}"), 1);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"live\"}"), 0);
    /* nothing new for it: a match waits (it has room for one more session), a backfill
     * request of its session is not served though a ticket waits */
    add_ticket(&s, "q", "c", "[{\"id\":\"pc\"}]", NULL);
    add_ticket(&s, "q", "d", "[{\"id\":\"pd\"}]", NULL);
    json_decref(wait_status(&s, "d", "matched"));
    snprintf(path, sizeof path, "/v1/sessions/%s/backfill", session);
    json_decref(call(&s, "POST", path, it, "{\"team\":\"A\",\"slots\":1}", 200));
    add_ticket(&s, "q", "e", "[{\"id\":\"pe\"}]", NULL);
    sleep_ms(300);
    o = ticket(&s, "e", s.server_key);
    assert_string_equal(str(o, "status"), "queued");
    json_decref(o);
    o = ticket(&s, "c", s.server_key);
    assert_string_equal(str(o, "status"), "matched");
    json_decref(o);
    /* a restart keeps it draining, silent, with its session */
    int status = 0;
    assert_int_equal(e2e_stop(&s, 9, 5000, &status), 0);
    const char *again[] = {"--default-pool", "default", "--mm-heartbeat-timeout", "600",
                           "--mm-heartbeat-grace", "8000", NULL};
    assert_int_equal(e2e_start(&s, again), 0);
    o = instance_doc(&s, "i1", s.admin_key, false);
    assert_string_equal(str(o, "status"), "draining");
    assert_true(json_is_true(json_object_get(o, "silent")));
    json_decref(o);
    session_is(&s, session, "open");
    sleep_ms(300);
    o = ticket(&s, "e", s.server_key);
    assert_string_equal(str(o, "status"), "queued");
    json_decref(o);
    /* its heartbeat: live again, the same session; the match and the backfill are served */
    o = instance_doc(&s, "i1", it, true);
    assert_string_equal(str(o, "status"), "live");
    assert_true(json_is_false(json_object_get(o, "silent")));
    const json_t *sess = json_array_get(json_object_get(o, "sessions"), 0);
    assert_string_equal(str(sess, "session"), session);
    assert_int_equal(json_array_size(json_object_get(sess, "players")), 2);
    json_decref(o);
    char later[64];
    session_of(&s, "e", later);
    assert_string_equal(later, session);
    session_of(&s, "d", later);
    assert_string_not_equal(later, session);
    session_is(&s, session, "open");
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"live\"}"), 1);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"draining\"}"), 0);
    e2e_cleanup(&s);
}

/* An instance that never comes back: draining after the heartbeat timeout, lost after the
 * grace, its session with it; registering again makes it live, and so it stays across a
 * restart. */
static void test_instance_lost(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--mm-heartbeat-timeout", "600", "--mm-heartbeat-grace", "1000", NULL};
    char it1[33], it2[33], session[64];
    one_session(&s, extra, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\"}", it1, session);
    /* i1 goes silent; i2 keeps heartbeating */
    add_instance(&s, "{\"id\":\"i2\",\"queues\":[\"q\"],\"address\":\"h:2\"}", it2);
    json_decref(wait_instance(&s, "i1", "draining", "i2", it2));
    session_is(&s, session, "open");
    json_t *o = wait_instance(&s, "i1", "lost", "i2", it2);
    assert_int_equal(json_array_size(json_object_get(o, "sessions")), 0);
    json_decref(o);
    session_is(&s, session, "lost");
    o = ticket(&s, "b", s.server_key); /* the players were sent there: it stays assigned */
    assert_string_equal(str(o, "status"), "assigned");
    json_decref(o);
    refused(&s, "POST", "/v1/instances/i1/heartbeat", it1, NULL, 410, "instance_lost", "instance");
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"draining\"}"), 0);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"q\",status=\"live\"}"), 1);
    /* new matches go to the live one */
    add_ticket(&s, "q", "c", "[{\"id\":\"pc\"}]", NULL);
    add_ticket(&s, "q", "d", "[{\"id\":\"pd\"}]", NULL);
    o = wait_status(&s, "d", "assigned");
    assert_string_equal(str(json_object_get(o, "assignment"), "instance"), "i2");
    json_decref(o);
    /* registering again brings it back, with the same token, also after a restart */
    o = call(&s, "POST", "/v1/instances", s.server_key,
             "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\"}", 200);
    assert_string_equal(str(o, "status"), "live");
    assert_string_equal(str(o, "token"), it1);
    json_decref(o);
    int status = 0;
    assert_int_equal(e2e_stop(&s, 9, 5000, &status), 0);
    assert_int_equal(e2e_start(&s, (const char *const[]){"--default-pool", "default", NULL}), 0);
    o = instance_doc(&s, "i1", it1, true);
    assert_string_equal(str(o, "status"), "live");
    json_decref(o);
    e2e_cleanup(&s);
}

/* ---- a restart in the middle ---------------------------------------------------------------- */

static void test_restart(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20,"
                   "\"steps\":[{\"after\":0,\"window\":100000,\"p_max\":0.5,\"quality_min\":0}]}");
    char it[33], tokens[40][33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\",\"capacity\":2}", it);
    for (int i = 0; i < 40; i++) { /* 2 sessions; 8 tickets matched waiting; the rest queued */
        char id[16], players[64];
        snprintf(id, sizeof id, "k%d", i);
        snprintf(players, sizeof players, "[{\"id\":\"p%d\"}]", i);
        add_ticket(&s, "q", id, players, tokens[i]);
        if (i == 15)
            sleep_ms(200);
    }
    sleep_ms(200);
    int status = 0;
    assert_int_equal(e2e_stop(&s, 9, 5000, &status), 0); /* kill -9 */
    assert_int_equal(e2e_start(&s, (const char *const[]){"--default-pool", "default", NULL}), 0);
    /* every acknowledged ticket is there, once; its token still works */
    int seats[40] = {0}, assigned = 0;
    json_t *o = instance_doc(&s, "i1", it, true);
    assert_int_equal(json_array_size(json_object_get(o, "sessions")), 2);
    size_t i, j;
    const json_t *sess, *p;
    json_array_foreach(json_object_get(o, "sessions"), i, sess)
        json_array_foreach(json_object_get(sess, "players"), j, p)
            seats[num_of(str(p, "ticket"))]++;
    json_decref(o);
    for (int k = 0; k < 40; k++) {
        char id[16];
        snprintf(id, sizeof id, "k%d", k);
        o = ticket(&s, id, tokens[k]);
        bool a = strcmp(str(o, "status"), "assigned") == 0;
        assert_true(a || strcmp(str(o, "status"), "queued") == 0 ||
                    strcmp(str(o, "status"), "matched") == 0);
        assert_int_equal(seats[k], a ? 1 : 0);
        assigned += a;
        json_decref(o);
    }
    assert_int_equal(assigned, 8);
    /* more room: everyone left is matched and assigned exactly once */
    char it2[33];
    add_instance(&s, "{\"id\":\"i2\",\"queues\":[\"q\"],\"address\":\"h:2\",\"capacity\":100}",
                 it2);
    for (int k = 0; k < 40; k++) {
        char id[16];
        snprintf(id, sizeof id, "k%d", k);
        json_decref(wait_status(&s, id, "assigned"));
    }
    memset(seats, 0, sizeof seats);
    const char *ids[2] = {"i1", "i2"}, *toks[2] = {it, it2};
    for (int n = 0; n < 2; n++) {
        o = instance_doc(&s, ids[n], toks[n], false);
        json_array_foreach(json_object_get(o, "sessions"), i, sess)
            json_array_foreach(json_object_get(sess, "players"), j, p)
                seats[num_of(str(p, "ticket"))]++;
        json_decref(o);
    }
    for (int k = 0; k < 40; k++)
        assert_int_equal(seats[k], 1);
    e2e_cleanup(&s);
}

/* ---- a ready check with a decliner ------------------------------------------------------------
 */

static void test_ready_check(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20,"
                   "\"ready_check_s\":30}");
    char it[33], tk[5][33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\"}", it);
    /* a party of two and two solos */
    add_ticket(&s, "q", "party", "[{\"id\":\"a\"},{\"id\":\"b\"}]", tk[0]);
    add_ticket(&s, "q", "c", "[{\"id\":\"c\"}]", tk[1]);
    add_ticket(&s, "q", "d", "[{\"id\":\"d\"}]", tk[2]);
    json_t *o = wait_status(&s, "d", "matched");
    const json_t *rc = json_object_get(o, "ready_check");
    assert_non_null(rc);
    assert_int_equal(json_array_size(json_object_get(rc, "players")), 1);
    json_decref(o);
    /* the party accepts player by player, c accepts, d declines */
    json_decref(call(&s, "POST", "/v1/tickets/party/ready", tk[0],
                     "{\"player\":\"a\",\"accept\":true}", 200));
    refused(&s, "POST", "/v1/tickets/party/ready", tk[0], "{\"player\":\"zz\",\"accept\":true}",
            400, "invalid_request", "player");
    refused(&s, "POST", "/v1/tickets/party/ready", tk[1], "{\"accept\":true}", 401, "unauthorized",
            NULL);
    json_decref(call(&s, "POST", "/v1/tickets/party/ready", tk[0],
                     "{\"player\":\"b\",\"accept\":true}", 200));
    json_decref(call(&s, "POST", "/v1/tickets/c/ready", tk[1], "{\"accept\":true}", 200));
    o = call(&s, "POST", "/v1/tickets/d/ready", tk[2], "{\"accept\":false}", 200);
    assert_string_equal(str(o, "status"), "cancelled");
    json_decref(o);
    o = ticket(&s, "d", tk[2]);
    assert_string_equal(str(o, "status"), "cancelled");
    assert_string_equal(str(o, "reason"), "declined the ready check");
    json_decref(o);
    /* the others are back in the queue, in front: with a newcomer they match again */
    o = ticket(&s, "party", tk[0]);
    assert_true(strcmp(str(o, "status"), "queued") == 0);
    json_decref(o);
    add_ticket(&s, "q", "e", "[{\"id\":\"e\"}]", tk[3]);
    json_decref(wait_status(&s, "e", "matched"));
    const char *names[3] = {"party", "c", "e"};
    const char *toks[3] = {tk[0], tk[1], tk[3]};
    for (int k = 0; k < 3; k++) {
        char path[64];
        snprintf(path, sizeof path, "/v1/tickets/%s/ready", names[k]);
        json_decref(call(&s, "POST", path, toks[k], "{\"accept\":true}", 200));
    }
    o = ticket(&s, "e", tk[3]);
    assert_string_equal(str(o, "status"), "assigned");
    json_decref(o);
    refused(&s, "POST", "/v1/tickets/e/ready", tk[3], "{\"accept\":true}", 409, "no_ready_check",
            "ticket");
    refused(&s, "DELETE", "/v1/tickets/e", tk[3], NULL, 409, "ticket_assigned", "ticket");
    e2e_cleanup(&s);
}

/* ---- the rounds of a session ------------------------------------------------------------- */

/* POST /v1/pools/@p pool/rounds of round @p id between players pa and pb, naming @p session
 * (NULL: none) with key or token @p key: the answer's status, its body in @p body (NULL: not
 * kept; else malloc'd). */
static long post_round(const e2e_server *s, const char *pool, const char *key, const char *id,
                       const char *session, char **body)
{
    char path[96], round[256];
    snprintf(path, sizeof path, "/v1/pools/%s/rounds", pool);
    if (session != NULL)
        snprintf(
            round, sizeof round,
            "{\"id\":\"%s\",\"session\":\"%s\",\"winner\":\"A\",\"A\":[\"pa\"],\"B\":[\"pb\"]}", id,
            session);
    else
        snprintf(round, sizeof round,
                 "{\"id\":\"%s\",\"winner\":\"A\",\"A\":[\"pa\"],\"B\":[\"pb\"]}", id);
    e2e_resp r;
    assert_int_equal(e2e_call(s, "POST", path, key, round, &r), 0);
    long status = r.status;
    if (body != NULL) {
        *body = r.body;
        r.body = NULL;
    }
    e2e_resp_free(&r);
    return status;
}

/* A refused round: @p status, @p code and @p field. */
static void round_refused(const e2e_server *s, const char *pool, const char *key, const char *id,
                          const char *session, long status, const char *code, const char *field)
{
    char *body = NULL;
    assert_int_equal(post_round(s, pool, key, id, session, &body), status);
    json_t *o = json_loads(body, 0, NULL);
    const json_t *e = json_object_get(o, "error");
    assert_string_equal(str(e, "code"), code);
    if (field != NULL)
        assert_string_equal(str(e, "field"), field);
    json_decref(o);
    free(body);
}

/* Rated rounds of player @p id in pool @p pool (0 when the pool has never seen him). */
static json_int_t rounds_of(const e2e_server *s, const char *pool, const char *id)
{
    char path[128];
    snprintf(path, sizeof path, "/v1/pools/%s/players/%s", pool, id);
    json_t *o = call(s, "GET", path, s->server_key, NULL, 200);
    json_int_t n = json_integer_value(json_object_get(o, "rounds"));
    json_decref(o);
    return n;
}

static void test_session_rounds(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    e2e_create_pool(&s, "{\"name\":\"other\",\"model\":\"synelo\"}");
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":1,\"interval_ms\":20}");
    char it[2][33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\"}", it[0]);
    add_instance(&s, "{\"id\":\"i2\",\"queues\":[\"q\"],\"address\":\"h:2\"}", it[1]);
    add_ticket(&s, "q", "a", "[{\"id\":\"pa\"}]", NULL);
    add_ticket(&s, "q", "b", "[{\"id\":\"pb\"}]", NULL);
    json_t *o = wait_status(&s, "b", "assigned");
    const json_t *as = json_object_get(o, "assignment");
    char session[64], path[160];
    snprintf(session, sizeof session, "%s", str(as, "session"));
    const char *own = strcmp(str(as, "instance"), "i1") == 0 ? it[0] : it[1];
    const char *other = own == it[0] ? it[1] : it[0];
    json_decref(o);
    /* its instance reports with its own token; a repeat answers the same bytes */
    char *first = NULL, *again = NULL;
    assert_int_equal(post_round(&s, "default", own, "r1", session, &first), 200);
    assert_int_equal(post_round(&s, "default", own, "r1", session, &again), 200);
    assert_string_equal(again, first);
    free(again);
    assert_int_equal(rounds_of(&s, "default", "pa"), 1);
    /* refused, each naming the field, and nothing rated: another instance's token; a session
     * of another pool, an unknown one, one that is not a string; a token without a session or
     * of no instance */
    round_refused(&s, "default", other, "r2", session, 403, "forbidden", "session");
    round_refused(&s, "default", other, "r1", session, 403, "forbidden", "session");
    round_refused(&s, "other", s.server_key, "r2", session, 400, "invalid_round", "session");
    round_refused(&s, "default", s.server_key, "r2", "snope", 400, "invalid_round", "session");
    round_refused(&s, "default", own, "r2", "snope", 400, "invalid_round", "session");
    json_decref(call(&s, "POST", "/v1/pools/default/rounds", s.server_key,
                     "{\"id\":\"r2\",\"session\":7,\"winner\":\"A\",\"A\":[\"pa\"],\"B\":[\"pb\"]}",
                     400));
    round_refused(&s, "default", own, "r2", NULL, 401, "unauthorized", NULL);
    round_refused(&s, "default", "0123456789abcdef0123456789abcdef", "r2", session, 401,
                  "unauthorized", NULL);
    assert_int_equal(rounds_of(&s, "default", "pa"), 1);
    assert_int_equal(rounds_of(&s, "other", "pa"), 0);
    /* the server key is trusted; r2 is new (nothing of it was kept) */
    char *r2 = NULL;
    assert_int_equal(post_round(&s, "default", s.server_key, "r2", session, &r2), 200);
    assert_int_equal(rounds_of(&s, "default", "pa"), 2);
    /* closed: a late round is still its instance's to report, and rated; repeats as before */
    snprintf(path, sizeof path, "/v1/sessions/%s/close", session);
    json_decref(call(&s, "POST", path, own, NULL, 200));
    assert_int_equal(post_round(&s, "default", own, "r3", session, NULL), 200);
    round_refused(&s, "default", other, "r4", session, 403, "forbidden", "session");
    assert_int_equal(rounds_of(&s, "default", "pa"), 3);
    assert_int_equal(post_round(&s, "default", own, "r1", session, &again), 200);
    assert_string_equal(again, first);
    free(again);
    /* forgotten (closed over a second ago, --mm-keep 1 prunes it at the next start): a new
     * round naming it is refused, the rounds it had answer as they did */
    int status = 0;
    assert_int_equal(e2e_stop(&s, 15, 5000, &status), 0);
    sleep_ms(1100);
    assert_int_equal(
        e2e_start(&s, (const char *const[]){"--default-pool", "default", "--mm-keep", "1", NULL}),
        0);
    snprintf(path, sizeof path, "/v1/sessions/%s", session);
    for (int i = 0; i < 100; i++) {
        e2e_resp r;
        assert_int_equal(e2e_call(&s, "GET", path, s.admin_key, NULL, &r), 0);
        long st = r.status;
        e2e_resp_free(&r);
        if (st == 404)
            break;
        assert_true(i < 99);
        sleep_ms(20);
    }
    round_refused(&s, "default", s.server_key, "r5", session, 400, "invalid_round", "session");
    assert_int_equal(post_round(&s, "default", own, "r1", session, &again), 200);
    assert_string_equal(again, first);
    free(again);
    assert_int_equal(post_round(&s, "default", s.server_key, "r2", session, &again), 200);
    assert_string_equal(again, r2);
    free(again);
    assert_int_equal(rounds_of(&s, "default", "pa"), 3);
    free(first);
    free(r2);
    e2e_cleanup(&s);
}

/* ---- the figures: /metrics and the queue's document ----------------------------------------- */

static void test_metrics(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"m\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20}");
    make_queue(&s, "{\"name\":\"lonely\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20,"
                   "\"ticket_ttl_s\":1}");
    json_t *o = call(&s, "GET", "/v1/queues/m", s.admin_key, NULL, 200);
    json_int_t created_at = json_integer_value(json_object_get(o, "created_at"));
    assert_true(created_at > 0);
    json_decref(o);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"queued\"}"), 0);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"m\",status=\"live\"}"), 0);
    assert_int_equal(sample(&s, MM_M "sessions_open"), 0);
    char it[33], tk[33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"m\"],\"address\":\"h:1\",\"capacity\":1}", it);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"m\",status=\"live\"}"), 1);
    const char *ids[8] = {"a", "b", "c", "d", "e", "f", "g", "h"};
    for (int i = 0; i < 3; i++) {
        char players[64];
        one_player(players, sizeof players, ids[i]);
        add_ticket(&s, "m", ids[i], players, NULL);
    }
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"queued\"}"), 3);
    assert_int_equal(sample(&s, MM_M "tickets_created_total{queue=\"m\"}"), 3);
    add_ticket(&s, "m", "d", "[{\"id\":\"d\"}]", NULL);
    json_decref(wait_status(&s, "d", "assigned"));
    sample_is(&s, MM_M "tickets_finished_total{queue=\"m\",status=\"assigned\"}", 4);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"queued\"}"), 0);
    assert_int_equal(sample(&s, MM_M "matches_total{queue=\"m\",event=\"formed\"}"), 1);
    assert_int_equal(sample(&s, MM_M "matches_total{queue=\"m\",event=\"assigned\"}"), 1);
    assert_int_equal(sample(&s, MM_M "sessions_open"), 1);
    assert_true(sample(&s, MM_M "pass_duration_seconds_count{queue=\"m\"}") > 0);
    /* the instance is full: the next match waits, matched; a cancel dissolves it */
    for (int i = 4; i < 8; i++) {
        char players[64];
        one_player(players, sizeof players, ids[i]);
        add_ticket(&s, "m", ids[i], players, i == 4 ? tk : NULL);
    }
    json_decref(wait_status(&s, "h", "matched"));
    sample_is(&s, MM_M "tickets_waiting{queue=\"m\",state=\"matched\"}", 4);
    json_decref(call(&s, "DELETE", "/v1/tickets/e", tk, NULL, 200));
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"matched\"}"), 0);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"queued\"}"), 3);
    assert_int_equal(sample(&s, MM_M "matches_total{queue=\"m\",event=\"dissolved\"}"), 1);
    assert_int_equal(sample(&s, MM_M "tickets_finished_total{queue=\"m\",status=\"cancelled\"}"),
                     1);
    /* a lone ticket expires after the queue's ticket_ttl_s */
    add_ticket(&s, "lonely", "z", "[{\"id\":\"z\"}]", NULL);
    json_decref(wait_status(&s, "z", "expired"));
    sample_is(&s, MM_M "tickets_finished_total{queue=\"lonely\",status=\"expired\"}", 1);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"lonely\",state=\"queued\"}"), 0);
    /* draining, then the session closed */
    json_decref(call(&s, "DELETE", "/v1/instances/i1", it, NULL, 200));
    assert_int_equal(sample(&s, MM_M "instances{queue=\"m\",status=\"draining\"}"), 1);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"m\",status=\"live\"}"), 0);
    close_session_of(&s, "a", it);
    assert_int_equal(sample(&s, MM_M "sessions_open"), 0);
    /* a change keeps the queue's creation time, also as stored (read back after a restart);
     * the gauges are published at start */
    sleep_ms(20);
    json_decref(call(&s, "PATCH", "/v1/queues/m", s.admin_key, "{\"interval_ms\":30}", 200));
    o = call(&s, "GET", "/v1/queues/m", s.admin_key, NULL, 200);
    assert_int_equal(json_integer_value(json_object_get(o, "created_at")), created_at);
    json_decref(o);
    int status = 0;
    assert_int_equal(e2e_stop(&s, 15, 5000, &status), 0);
    assert_int_equal(e2e_start(&s, (const char *const[]){"--default-pool", "default", NULL}), 0);
    o = call(&s, "GET", "/v1/queues/m", s.admin_key, NULL, 200);
    assert_int_equal(json_integer_value(json_object_get(o, "created_at")), created_at);
    assert_int_equal(json_integer_value(json_object_get(o, "interval_ms")), 30);
    json_decref(o);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"m\",state=\"queued\"}"), 3);
    assert_int_equal(sample(&s, MM_M "instances{queue=\"m\",status=\"draining\"}"), 1);
    assert_int_equal(sample(&s, MM_M "tickets_waiting{queue=\"lonely\",state=\"queued\"}"), 0);
    e2e_cleanup(&s);
}

/* ---- the queue's figures ---------------------------------------------------------------- */

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double real(const json_t *o, const char *key)
{
    const json_t *v = json_object_get(o, key);
    assert_true(json_is_number(v));
    return json_number_value(v);
}

/* Files @p n one-player tickets "<prefix>0…", @p gap_ms apart. */
static void spaced_tickets(const e2e_server *s, const char *prefix, int n, long gap_ms,
                           char (*tokens)[33])
{
    for (int i = 0; i < n; i++) {
        char id[16], players[64];
        snprintf(id, sizeof id, "%s%d", prefix, i);
        one_player(players, sizeof players, id);
        add_ticket(s, "fig", id, players, tokens ? tokens[i] : NULL);
        if (i + 1 < n)
            sleep_ms(gap_ms);
    }
}

/* What the figures must say of the assigned tickets @p ids: each one's wait from its
 * created_at to its match's formed_at, the matches' quality and P(A), as their documents say. */
typedef struct expect {
    double waits[32], quality_sum, dev_sum;
    size_t n, matches, below;
    char match_ids[8][64];
    json_int_t since;
} expect;

static void expect_ticket(const e2e_server *s, const char *id, double quality_min, expect *x)
{
    json_t *o = wait_status(s, id, "assigned");
    const json_t *m = json_object_get(o, "match");
    json_int_t formed = json_integer_value(json_object_get(m, "formed_at"));
    x->waits[x->n++] =
        (double)(formed - json_integer_value(json_object_get(o, "created_at"))) / 1000.0;
    bool seen = false;
    for (size_t i = 0; i < x->matches; i++)
        seen |= strcmp(x->match_ids[i], str(m, "id")) == 0;
    if (!seen) { /* the match's own figures, once */
        snprintf(x->match_ids[x->matches++], sizeof x->match_ids[0], "%s", str(m, "id"));
        x->quality_sum += real(m, "quality");
        x->dev_sum += fabs(real(m, "p_a") - 0.5);
        x->below += real(m, "quality") < quality_min;
        if (x->since == 0 || formed < x->since)
            x->since = formed;
    }
    json_decref(o);
}

/* The nearest-rank quantile of the sorted @p v (docs/MATCHMAKING.md "Queue figures"). */
static double rank_quantile(const double *v, size_t n, double p)
{
    size_t k = (size_t)ceil(p * (double)n);
    return v[k > 0 ? k - 1 : 0];
}

/* The queue's figures agree with @p x (matches' figures to the 9 digits their documents have). */
static void figures_are(const json_t *f, expect *x, bool gaussian)
{
    qsort(x->waits, x->n, sizeof x->waits[0], by_double);
    double sum = 0.0;
    for (size_t i = 0; i < x->n; i++)
        sum += x->waits[i];
    const json_t *r = json_object_get(f, "recent");
    assert_int_equal(json_integer_value(json_object_get(r, "matches")), x->matches);
    assert_int_equal(json_integer_value(json_object_get(r, "tickets")), x->n);
    assert_int_equal(json_integer_value(json_object_get(r, "since")), x->since);
    const json_t *w = json_object_get(r, "wait_s");
    assert_true(real(w, "p50") == rank_quantile(x->waits, x->n, 0.5));
    assert_true(real(w, "p95") == rank_quantile(x->waits, x->n, 0.95));
    assert_true(real(w, "max") == x->waits[x->n - 1]);
    assert_true(fabs(real(w, "mean") - sum / (double)x->n) < 1e-9);
    assert_true(fabs(real(r, "quality_mean") - x->quality_sum / (double)x->matches) < 1e-8);
    assert_true(fabs(real(r, "p_dev_mean") - x->dev_sum / (double)x->matches) < 1e-8);
    if (gaussian)
        assert_true(real(r, "quality_below") == (double)x->below / (double)x->matches);
    else
        assert_true(json_is_null(json_object_get(r, "quality_below")));
}

static void test_figures(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    json_decref(call(&s, "POST", "/v1/pools", s.admin_key,
                     "{\"name\":\"ts\",\"model\":\"trueskill\"}", 201));
    make_queue(&s, "{\"name\":\"fig\",\"pool\":\"ts\",\"team_size\":2,\"interval_ms\":20}");
    json_t *o = call(&s, "GET", "/v1/queues/fig", s.admin_key, NULL, 200);
    double qmin = real(json_array_get(json_object_get(o, "steps"), 0), "quality_min");
    const json_t *r = json_object_get(figures(o), "recent");
    assert_int_equal(json_integer_value(json_object_get(r, "matches")), 0);
    assert_true(json_is_null(json_object_get(json_object_get(r, "wait_s"), "p50")));
    assert_true(json_is_null(json_object_get(figures(o), "oldest_wait_s")));
    json_decref(o);
    char it[33], tk[4][33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"fig\"],\"address\":\"h:1\",\"capacity\":1}", it);
    /* a match of tickets filed 150 ms apart starts at once on the instance */
    spaced_tickets(&s, "a", 4, 150, NULL);
    expect x = {0};
    const char *first[4] = {"a0", "a1", "a2", "a3"};
    for (int i = 0; i < 4; i++)
        expect_ticket(&s, first[i], qmin, &x);
    /* the instance is full: the next match waits and is dissolved by a cancel: not counted */
    spaced_tickets(&s, "b", 4, 100, tk);
    json_decref(wait_status(&s, "b3", "matched"));
    json_decref(call(&s, "DELETE", "/v1/tickets/b0", tk[0], NULL, 200));
    /* the three back in the queue and a newcomer form a match, which starts when the first
     * session closes: their waits run to that match's formation */
    sleep_ms(200);
    add_ticket(&s, "fig", "c0", "[{\"id\":\"c0\"}]", NULL);
    json_decref(wait_status(&s, "c0", "matched"));
    close_session_of(&s, "a0", it);
    const char *second[4] = {"b1", "b2", "b3", "c0"};
    for (int i = 0; i < 4; i++)
        expect_ticket(&s, second[i], qmin, &x);
    assert_int_equal(x.matches, 2);
    /* a lone ticket waits */
    add_ticket(&s, "fig", "d0", "[{\"id\":\"d0\"}]", NULL);
    o = ticket(&s, "d0", s.server_key);
    json_int_t d0_created = json_integer_value(json_object_get(o, "created_at"));
    json_decref(o);
    sleep_ms(100);
    o = call(&s, "GET", "/v1/queues/fig", s.admin_key, NULL, 200);
    const json_t *f = figures(o);
    figures_are(f, &x, true);
    assert_int_equal(json_integer_value(json_object_get(f, "formed")), 3);
    assert_int_equal(json_integer_value(json_object_get(f, "dissolved")), 1);
    assert_int_equal(json_integer_value(json_object_get(f, "waiting")), 1);
    double oldest = real(f, "oldest_wait_s");
    double since_d0 = (double)(time(NULL) * 1000 - d0_created) / 1000.0;
    assert_true(oldest >= 0.1 && oldest <= since_d0 + 1.0);
    json_decref(o);
    /* the same figures in the pool's read, without a key on a public dashboard */
    o = call(&s, "GET", "/v1/pools/ts/queues", NULL, NULL, 200);
    const json_t *q = json_array_get(json_object_get(o, "queues"), 0);
    assert_int_equal(json_array_size(json_object_get(o, "queues")), 1);
    assert_string_equal(str(q, "name"), "fig");
    assert_int_equal(json_integer_value(json_object_get(q, "team_size")), 2);
    assert_null(json_object_get(q, "steps")); /* the settings stay the admin's */
    figures_are(figures((json_t *)q), &x, true);
    assert_int_equal(json_integer_value(json_object_get(figures((json_t *)q), "waiting")), 1);
    json_decref(o);
    refused(&s, "GET", "/v1/pools/nope/queues", NULL, NULL, 404, "unknown_pool", "pool");
    o = call(&s, "GET", "/v1/pools/default/queues", NULL, NULL, 200);
    assert_int_equal(json_array_size(json_object_get(o, "queues")), 0);
    json_decref(o);
    /* /metrics: the waits' histogram counts the eight tickets and their sum */
    assert_int_equal(sample(&s, MM_M "wait_seconds_count{queue=\"fig\"}"), 8);
    assert_int_equal(sample(&s, MM_M "wait_seconds_bucket{queue=\"fig\",le=\"+Inf\"}"), 8);
    /* figures start empty after a restart (the counters too) */
    int status = 0;
    assert_int_equal(e2e_stop(&s, 15, 5000, &status), 0);
    assert_int_equal(e2e_start(&s, (const char *const[]){"--default-pool", "default", NULL}), 0);
    o = call(&s, "GET", "/v1/queues/fig", s.admin_key, NULL, 200);
    r = json_object_get(figures(o), "recent");
    assert_int_equal(json_integer_value(json_object_get(r, "matches")), 0);
    assert_true(real(figures(o), "oldest_wait_s") > 0.0); /* d0 still waits */
    json_decref(o);
    e2e_cleanup(&s);
}

/* ---- backfill ----------------------------------------------------------------------------- */

static void test_backfill(void **state)
{
    (void)state;
    e2e_server s;
    start(&s, NULL);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20}");
    char it[33];
    add_instance(&s, "{\"id\":\"i1\",\"queues\":[\"q\"],\"address\":\"h:1\",\"capacity\":1}", it);
    const char *ids[4] = {"w", "x", "y", "z"};
    for (int i = 0; i < 4; i++) {
        char players[64];
        one_player(players, sizeof players, ids[i]);
        add_ticket(&s, "q", ids[i], players, NULL);
    }
    json_t *o = wait_status(&s, "z", "assigned");
    char session[64], path[160];
    snprintf(session, sizeof session, "%s", str(json_object_get(o, "assignment"), "session"));
    json_decref(o);
    /* a player of team B left: the session asks for one; the next ticket fills it, not a match */
    snprintf(path, sizeof path, "/v1/sessions/%s/backfill", session);
    o = call(&s, "POST", path, it, "{\"team\":\"B\",\"slots\":1}", 200);
    assert_string_equal(str(json_object_get(o, "backfill"), "team"), "B");
    json_decref(o);
    add_ticket(&s, "q", "late", "[{\"id\":\"late\"}]", NULL);
    o = wait_status(&s, "late", "assigned");
    assert_string_equal(str(json_object_get(o, "assignment"), "session"), session);
    const json_t *me =
        json_array_get(json_object_get(json_object_get(o, "assignment"), "players"), 0);
    assert_string_equal(str(me, "team"), "B");
    json_decref(o);
    o = instance_doc(&s, "i1", it, true);
    const json_t *sess = json_array_get(json_object_get(o, "sessions"), 0);
    assert_int_equal(json_array_size(json_object_get(sess, "players")), 5);
    assert_true(json_is_null(json_object_get(sess, "backfill"))); /* filled */
    json_decref(o);
    e2e_cleanup(&s);
}

/* ---- the library's instance side ------------------------------------------------------------ */

/* Waits (at most 10 s) for an event of @p type from @p in; its copy in *ev. */
static void wait_event(eo_instance *in, eo_instance_event_type type, eo_instance_event *ev)
{
    for (int i = 0; i < 2000; i++) {
        while (eo_instance_poll(in, ev) == 1)
            if (ev->type == type)
                return;
        sleep_ms(5);
    }
    fail_msg("no instance event %d", (int)type);
}

static eo_instance *library_instance(const e2e_server *s, long heartbeat_ms)
{
    eo_instance_config cfg;
    eo_instance_config_init(&cfg);
    cfg.url = s->url;
    cfg.key = s->server_key;
    cfg.id = "lib-1";
    cfg.queues[0] = "q";
    cfg.nqueues = 1;
    cfg.address = "10.1.1.1:27015";
    cfg.heartbeat_ms = heartbeat_ms;
    cfg.retry_min_ms = 50;
    cfg.retry_max_ms = 200;
    eo_instance *in = NULL;
    char err[128];
    assert_int_equal(eo_instance_create(&cfg, &in, err, sizeof err), 0);
    return in;
}

/* Register, sessions by heartbeat, secrets checked locally, backfill, close; the service lost
 * the instance (a heartbeat timeout and grace shorter than its heartbeats) and it registers
 * again. */
static void test_library_instance(void **state)
{
    (void)state;
    e2e_server s;
    const char *extra[] = {"--mm-heartbeat-timeout", "1500", "--mm-heartbeat-grace", "500", NULL};
    start(&s, extra);
    make_queue(&s, "{\"name\":\"q\",\"pool\":\"default\",\"team_size\":2,\"interval_ms\":20}");
    eo_instance *in = library_instance(&s, 100);
    eo_instance_event ev;
    wait_event(in, EO_INSTANCE_EV_REGISTERED, &ev);
    assert_int_equal(eo_instance_flush(in, 5000), 0);
    const char *ids[4] = {"la", "lb", "lc", "ld"};
    for (int i = 0; i < 4; i++) {
        char players[64];
        one_player(players, sizeof players, ids[i]);
        add_ticket(&s, "q", ids[i], players, NULL);
    }
    json_t *o = wait_status(&s, "la", "assigned");
    const json_t *as = json_object_get(o, "assignment");
    char secret[64], session[64];
    snprintf(secret, sizeof secret, "%s",
             str(json_array_get(json_object_get(as, "players"), 0), "secret"));
    snprintf(session, sizeof session, "%s", str(as, "session"));
    json_decref(o);
    wait_event(in, EO_INSTANCE_EV_SESSION, &ev);
    assert_string_equal(ev.session, session);
    eo_instance_session info;
    assert_int_equal(eo_instance_session_get(in, session, &info), 0);
    assert_int_equal(info.nseats, 4);
    assert_string_equal(info.pool, "default");
    eo_track_team team;
    char got[EO_INSTANCE_SESSION_MAX + 1];
    assert_int_equal(eo_instance_check_secret(in, "la", secret, &team, got), 0);
    assert_string_equal(got, session);
    assert_true(team == EO_TRACK_A || team == EO_TRACK_B);
    assert_int_equal(eo_instance_check_secret(in, "lb", secret, &team, NULL), EO_EINVAL);
    assert_int_equal(eo_instance_check_secret(in, "nobody", secret, &team, NULL), EO_ENOTFOUND);
    /* backfill: one more for team A, filled by the next ticket */
    assert_int_equal(eo_instance_backfill(in, session, EO_TRACK_A, 1), 0);
    assert_int_equal(eo_instance_flush(in, 5000), 0);
    add_ticket(&s, "q", "le", "[{\"id\":\"le\"}]", NULL);
    wait_event(in, EO_INSTANCE_EV_SEATS, &ev);
    assert_int_equal(ev.first, 4);
    assert_int_equal(ev.n, 1);
    assert_int_equal(eo_instance_session_get(in, session, &info), 0);
    assert_string_equal(info.seats[4].player, "le");
    assert_int_equal(info.seats[4].team, EO_TRACK_A);
    /* close: acknowledged; its secrets are no longer taken */
    assert_int_equal(eo_instance_close_session(in, session), 0);
    wait_event(in, EO_INSTANCE_EV_CLOSED, &ev);
    assert_int_equal(eo_instance_check_secret(in, "la", secret, &team, NULL), EO_ENOTFOUND);
    assert_int_equal(eo_instance_close_session(in, session), EO_ENOTFOUND);
    eo_instance_destroy(in);
    /* heartbeats slower than the service's timeout and grace: lost, then registered again */
    in = library_instance(&s, 2500);
    wait_event(in, EO_INSTANCE_EV_REGISTERED, &ev);
    wait_event(in, EO_INSTANCE_EV_REGISTERED, &ev);
    o = instance_doc(&s, "lib-1", s.admin_key, false);
    assert_string_equal(str(o, "status"), "live");
    json_decref(o);
    eo_instance_destroy(in);
    e2e_cleanup(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flow),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_cancel_matched),
        cmocka_unit_test(test_cancel_during_matching),
        cmocka_unit_test(test_instance_resumes),
        cmocka_unit_test(test_instance_lost),
        cmocka_unit_test(test_restart),
        cmocka_unit_test(test_ready_check),
        cmocka_unit_test(test_session_rounds),
        cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_figures),
        cmocka_unit_test(test_backfill),
        cmocka_unit_test(test_library_instance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
