/* Store conformance suite: every case runs against a backend through an "opener" (a fresh
 * location, open, destroy), so the PostgreSQL backend can later run the same table of cases.
 * Backend-specific cases (file formats) follow in their own table.
 * Expected values are the values written by each case itself (round trips), the ordering rules
 * of eo_store.h (seq from 1 per pool, pools by name) and the error codes it documents. */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "evenodds/eo_store.h"
#include "store/store_internal.h"
#include "store_util.h"

/* ---- openers ---------------------------------------------------------------------------- */

typedef struct store_opener {
    const char *name;
    /* Makes a fresh, empty location; returns its text (malloc'd) or NULL. */
    char *(*fresh)(void);
    /* Removes everything at the location. */
    void (*destroy)(const char *location);
} store_opener;

static char *sqlite_fresh(void)
{
    char tmpl[] = "/tmp/eo_test_store_XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return NULL;
    close(fd);
    char *p = malloc(sizeof tmpl);
    if (p != NULL)
        memcpy(p, tmpl, sizeof tmpl);
    return p;
}

static void sqlite_destroy(const char *location)
{
    test_store_remove(location);
}

static const store_opener sqlite_opener = {"sqlite", sqlite_fresh, sqlite_destroy};

typedef struct fixture {
    const store_opener *op;
    char *loc;
    eo_store *s; /* read-write handle, open during each case */
} fixture;

static int setup_with(void **state, const store_opener *op)
{
    fixture *f = calloc(1, sizeof *f);
    if (f == NULL)
        return -1;
    f->op = op;
    f->loc = op->fresh();
    if (f->loc == NULL) {
        free(f);
        return -1;
    }
    char err[256] = "";
    if (eo_store_open(f->loc, 0, &f->s, err, sizeof err) != 0) {
        fprintf(stderr, "open %s: %s\n", f->loc, err);
        op->destroy(f->loc);
        free(f->loc);
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int setup_sqlite(void **state)
{
    return setup_with(state, &sqlite_opener);
}

static int teardown(void **state)
{
    fixture *f = *state;
    eo_store_close(f->s);
    f->op->destroy(f->loc);
    free(f->loc);
    free(f);
    return 0;
}

static eo_store *open_ro(fixture *f)
{
    eo_store *r = NULL;
    char err[256] = "";
    int rc = eo_store_open(f->loc, EO_STORE_READONLY, &r, err, sizeof err);
    if (rc != 0)
        fprintf(stderr, "read-only open: %s\n", err);
    assert_int_equal(rc, 0);
    return r;
}

static void reopen(fixture *f)
{
    eo_store_close(f->s);
    f->s = NULL;
    char err[256] = "";
    assert_int_equal(eo_store_open(f->loc, 0, &f->s, err, sizeof err), 0);
}

static int64_t make_pool(eo_store *s, const char *name)
{
    int64_t id = 0;
    assert_int_equal(eo_store_pool_create(s, name, "synelo", "{\"theta\":2400}", 1763800000, &id),
                     0);
    assert_true(id > 0);
    return id;
}

/* ---- generic cases ---------------------------------------------------------------------- */

static void test_schema_version(void **state)
{
    fixture *f = *state;
    int v = -1;
    assert_int_equal(eo_store_schema_version(f->s, &v), 0);
    assert_int_equal(v, EO_STORE_SCHEMA_VERSION);
}

static void test_pool_create_get(void **state)
{
    fixture *f = *state;
    int64_t id = 0;
    assert_int_equal(
        eo_store_pool_create(f->s, "arena", "synelo", "{\"kmax_team\":12}", 1763800000, &id), 0);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "arena", &row), 0);
    assert_true(row.id == id);
    assert_string_equal(row.name, "arena");
    assert_string_equal(row.model, "synelo");
    assert_string_equal(row.params_json, "{\"kmax_team\":12}");
    assert_true(row.created_at == 1763800000);
    eo_pool_row_free(&row);
    assert_null(row.name);
    eo_pool_row_free(NULL);
    assert_int_equal(eo_store_pool_get(f->s, "Arena", &row), EO_ENOTFOUND); /* names are exact */
}

static void test_pool_duplicate(void **state)
{
    fixture *f = *state;
    int64_t id = make_pool(f->s, "arena");
    int64_t id2 = -1;
    assert_int_equal(eo_store_pool_create(f->s, "arena", "other", "{}", 5, &id2), EO_EEXIST);
    assert_true(eo_store_errmsg(f->s)[0] != '\0');
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "arena", &row), 0);
    assert_true(row.id == id);
    assert_string_equal(row.model, "synelo"); /* the first one is untouched */
    eo_pool_row_free(&row);
}

static void test_pool_list(void **state)
{
    fixture *f = *state;
    eo_pool_row *rows = NULL;
    size_t n = 99;
    assert_int_equal(eo_store_pool_list(f->s, &rows, &n), 0);
    assert_int_equal(n, 0);
    free(rows);
    make_pool(f->s, "tf2-b");
    make_pool(f->s, "ns2");
    make_pool(f->s, "tf2-a");
    assert_int_equal(eo_store_pool_list(f->s, &rows, &n), 0);
    assert_int_equal(n, 3);
    /* by name, byte order: "ns2" < "tf2-a" < "tf2-b" */
    assert_string_equal(rows[0].name, "ns2");
    assert_string_equal(rows[1].name, "tf2-a");
    assert_string_equal(rows[2].name, "tf2-b");
    for (size_t i = 0; i < n; i++)
        eo_pool_row_free(&rows[i]);
    free(rows);
}

/* A re-tune's apply replaces a pool's model and parameters; nothing else of the pool moves. */
static void test_pool_set_config(void **state)
{
    fixture *f = *state;
    int64_t id = make_pool(f->s, "arena");
    make_pool(f->s, "other");
    assert_int_equal(eo_store_pool_set_config(f->s, id, "elo", "{\"k\":32}"), 0);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "arena", &row), 0);
    assert_true(row.id == id);
    assert_string_equal(row.model, "elo");
    assert_string_equal(row.params_json, "{\"k\":32}");
    eo_pool_row_free(&row);
    assert_int_equal(eo_store_pool_get(f->s, "other", &row), 0);
    assert_string_equal(row.model, "synelo");
    eo_pool_row_free(&row);
    assert_int_equal(eo_store_pool_set_config(f->s, id + 100, "elo", "{}"), EO_ENOTFOUND);
    assert_int_equal(eo_store_pool_set_config(f->s, id, NULL, "{}"), EO_EINVAL);
    assert_int_equal(eo_store_pool_set_config(NULL, id, "elo", "{}"), EO_EINVAL);
}

static void test_log_append_find(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r1", "{\"id\":\"r1\"}",
                                         "{\"round\":\"r1\"}", 100, &seq), 0);
    assert_true(seq == 1);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_SET, NULL,
                                         "{\"player\":\"x\",\"rating\":1500}", NULL, 101, &seq), 0);
    assert_true(seq == 2); /* edits share the pool's one sequence */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r2", "{\"id\":\"r2\"}", "{}", 102,
                                         &seq), 0);
    assert_true(seq == 3);

    char *body = NULL, *resp = NULL;
    assert_int_equal(eo_store_round_find(f->s, p, "r1", &body, &resp), 0);
    assert_string_equal(body, "{\"id\":\"r1\"}");
    assert_string_equal(resp, "{\"round\":\"r1\"}");
    free(body);
    free(resp);
    assert_int_equal(eo_store_round_find(f->s, p, "r3", &body, &resp), EO_ENOTFOUND);
    assert_null(body);

    /* the id is the idempotency key: a second append fails and changes nothing */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r1", "{\"other\":1}", "{}", 103,
                                         &seq), EO_EEXIST);
    assert_int_equal(eo_store_round_find(f->s, p, "r1", &body, NULL), 0);
    assert_string_equal(body, "{\"id\":\"r1\"}");
    free(body);
    int64_t n = -1;
    assert_int_equal(eo_store_round_count(f->s, p, &n), 0);
    assert_true(n == 2);
    /* the failed append did not consume a seq */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_RESET, NULL, "{\"player\":\"x\"}", NULL,
                                         104, &seq), 0);
    assert_true(seq == 4);
}

static void test_log_same_id_two_pools(void **state)
{
    fixture *f = *state;
    int64_t a = make_pool(f->s, "a");
    int64_t b = make_pool(f->s, "b");
    int64_t sa = 0, sb = 0;
    assert_int_equal(eo_store_log_append(f->s, a, EO_LOG_ROUND, "r1", "A", "ra", 1, &sa), 0);
    assert_int_equal(eo_store_log_append(f->s, b, EO_LOG_ROUND, "r1", "B", "rb", 1, &sb), 0);
    assert_true(sa == 1 && sb == 1); /* one sequence per pool */
    char *body = NULL;
    assert_int_equal(eo_store_round_find(f->s, b, "r1", &body, NULL), 0);
    assert_string_equal(body, "B");
    free(body);
    assert_int_equal(eo_store_round_find(f->s, a, "r1", &body, NULL), 0);
    assert_string_equal(body, "A");
    free(body);
}

typedef struct collected {
    int n;
    int stop_after; /* return 7 after this many entries, 0 = never */
    int64_t seq[16];
    int kind[16];
    char id[16][16];
    char body[16][32];
} collected;

static int collect(void *ctx, const eo_log_entry *e)
{
    collected *c = ctx;
    if (c->n >= 16)
        return -100;
    c->seq[c->n] = e->seq;
    c->kind[c->n] = (int)e->kind;
    snprintf(c->id[c->n], sizeof c->id[0], "%s", e->round_id ? e->round_id : "(null)");
    snprintf(c->body[c->n], sizeof c->body[0], "%s", e->body);
    c->n++;
    return (c->stop_after && c->n == c->stop_after) ? 7 : 0;
}

static void test_log_each_order(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    int64_t q = make_pool(f->s, "other");
    assert_int_equal(eo_store_begin(f->s), 0);
    /* interleave two pools, so that physical order differs from each pool's order */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "z", "b1", "x", 1, NULL), 0);
    assert_int_equal(eo_store_log_append(f->s, q, EO_LOG_ROUND, "z", "q1", "x", 1, NULL), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_SET, NULL, "b2", NULL, 2, NULL), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "a", "b3", "x", 3, NULL), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_RESET, NULL, "b4", NULL, 4, NULL), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "m", "b5", "x", 5, NULL), 0);
    assert_int_equal(eo_store_commit(f->s), 0);

    collected c = {0};
    assert_int_equal(eo_store_log_each(f->s, p, 0, collect, &c), 0);
    assert_int_equal(c.n, 5);
    const char *bodies[] = {"b1", "b2", "b3", "b4", "b5"};
    const int kinds[] = {EO_LOG_ROUND, EO_LOG_SET, EO_LOG_ROUND, EO_LOG_RESET, EO_LOG_ROUND};
    const char *ids[] = {"z", "(null)", "a", "(null)", "m"};
    for (int i = 0; i < 5; i++) {
        assert_true(c.seq[i] == i + 1);
        assert_int_equal(c.kind[i], kinds[i]);
        assert_string_equal(c.body[i], bodies[i]);
        assert_string_equal(c.id[i], ids[i]);
    }
    collected d = {0};
    assert_int_equal(eo_store_log_each(f->s, p, 3, collect, &d), 0);
    assert_int_equal(d.n, 2);
    assert_true(d.seq[0] == 4 && d.seq[1] == 5);
    collected e = {.stop_after = 2};
    assert_int_equal(eo_store_log_each(f->s, p, 0, collect, &e), 7);
    assert_int_equal(e.n, 2);
    collected g = {0};
    assert_int_equal(eo_store_log_each(f->s, q, 0, collect, &g), 0);
    assert_int_equal(g.n, 1);
    assert_string_equal(g.body[0], "q1");
    int64_t n = 0;
    assert_int_equal(eo_store_round_count(f->s, p, &n), 0);
    assert_true(n == 3);
}

static void test_log_bad_entries(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, NULL, "b", "r", 1, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_SET, "r1", "b", NULL, 1, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_store_log_append(f->s, p, (eo_log_kind)9, NULL, "b", NULL, 1, NULL),
                     EO_EINVAL);
    assert_int_equal(eo_store_log_append(f->s, p + 1000, EO_LOG_ROUND, "r1", "b", "r", 1, NULL),
                     EO_ENOTFOUND);
    int64_t n = -1;
    assert_int_equal(eo_store_round_count(f->s, p, &n), 0);
    assert_true(n == 0);
}

static void test_players(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    int64_t q = make_pool(f->s, "other");
    eo_player_row row;
    assert_int_equal(eo_store_player_get(f->s, p, "76561198000000001", &row), EO_ENOTFOUND);
    eo_player_row in = {.rating = 1234, .rounds = 51, .last_ended_at = 1763800391};
    assert_int_equal(eo_store_player_put(f->s, p, "76561198000000001", &in), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "76561198000000001", &row), 0);
    assert_int_equal(row.rating, 1234);
    assert_int_equal(row.rounds, 51);
    assert_true(row.last_ended_at == 1763800391);
    /* rows are per pool */
    assert_int_equal(eo_store_player_get(f->s, q, "76561198000000001", &row), EO_ENOTFOUND);
    /* put replaces */
    eo_player_row in2 = {.rating = 100, .rounds = 4000000000u, .last_ended_at = 0};
    assert_int_equal(eo_store_player_put(f->s, p, "76561198000000001", &in2), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "76561198000000001", &row), 0);
    assert_int_equal(row.rating, 100);
    assert_true(row.rounds == 4000000000u); /* the full uint32 range survives */
    assert_true(row.last_ended_at == 0);
    /* model-specific values (the hive model's offset and commander values) round trip */
    eo_player_row in3 = {.rating = 2.5, .extra = {-0.125, 3.75, 1e-300, 4000000000.0}};
    assert_int_equal(eo_store_player_put(f->s, p, "76561198000000001", &in3), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "76561198000000001", &row), 0);
    assert_memory_equal(row.extra, in3.extra, sizeof row.extra);
    assert_int_equal(eo_store_player_delete(f->s, p, "76561198000000001"), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "76561198000000001", &row), EO_ENOTFOUND);
    assert_int_equal(eo_store_player_delete(f->s, p, "76561198000000001"), 0);
    /* non-ASCII ids are kept byte for byte */
    const char *uid = "pl\xc3\xa4yer \xe2\x98\x83";
    assert_int_equal(eo_store_player_put(f->s, q, uid, &in), 0);
    assert_int_equal(eo_store_player_get(f->s, q, uid, &row), 0);
    assert_int_equal(row.rating, 1234);
    assert_int_equal(eo_store_player_put(f->s, q + 1000, "x", &in), EO_ENOTFOUND);
}

/* eo_store_players_each(): every row of one pool, with its values. */
typedef struct seen_rows {
    size_t n;
    double sum_mu;
    bool has_x, has_u;
    double x_extra; /* x's extra[1] */
    int stop_at;
} seen_rows;

static int see_row(void *ctx, const char *id, const eo_player_row *row)
{
    seen_rows *s = ctx;
    s->n++;
    s->sum_mu += row->mu;
    s->has_x = s->has_x || strcmp(id, "x") == 0;
    if (strcmp(id, "x") == 0)
        s->x_extra = row->extra[1];
    s->has_u = s->has_u || strcmp(id, "pl\xc3\xa4yer") == 0;
    return s->stop_at && (int)s->n == s->stop_at ? 5 : 0;
}

static void test_players_each(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    int64_t q = make_pool(f->s, "other");
    seen_rows s = {0};
    assert_int_equal(eo_store_players_each(f->s, p, see_row, &s), 0);
    assert_int_equal(s.n, 0);
    char id[16];
    for (int i = 0; i < 100; i++) {
        eo_player_row in = {.rating = i, .mu = i, .sigma = 1};
        snprintf(id, sizeof id, "p%d", i);
        assert_int_equal(eo_store_player_put(f->s, p, id, &in), 0);
    }
    eo_player_row in = {.mu = 0.5, .extra = {0, -2.25}};
    assert_int_equal(eo_store_player_put(f->s, p, "x", &in), 0);
    assert_int_equal(eo_store_player_put(f->s, p, "pl\xc3\xa4yer", &in), 0);
    assert_int_equal(eo_store_player_put(f->s, q, "y", &in), 0); /* another pool's */
    assert_int_equal(eo_store_player_delete(f->s, p, "p99"), 0);
    assert_int_equal(eo_store_players_each(f->s, p, see_row, &s), 0);
    assert_int_equal(s.n, 101);
    assert_true(s.sum_mu == 99 * 98 / 2 + 1.0); /* p0..p98, x and the other id: 0.5 each */
    assert_true(s.has_x && s.has_u);
    assert_true(s.x_extra == -2.25); /* every column of the row, as eo_store_player_get() */
    memset(&s, 0, sizeof s);
    s.stop_at = 3;
    assert_int_equal(eo_store_players_each(f->s, p, see_row, &s), 5);
    assert_int_equal(s.n, 3);
    assert_int_equal(eo_store_players_each(NULL, p, see_row, &s), EO_EINVAL);
    assert_int_equal(eo_store_players_each(f->s, p, NULL, &s), EO_EINVAL);
}

static void test_transaction_rollback(void **state)
{
    fixture *f = *state;
    int64_t keep = make_pool(f->s, "keep");
    assert_int_equal(eo_store_begin(f->s), 0);
    assert_int_equal(eo_store_begin(f->s), EO_EINVAL); /* no nesting */
    make_pool(f->s, "gone");
    assert_int_equal(eo_store_log_append(f->s, keep, EO_LOG_ROUND, "r1", "b", "r", 1, NULL), 0);
    eo_player_row in = {.rating = 1500, .rounds = 1, .last_ended_at = 1};
    assert_int_equal(eo_store_player_put(f->s, keep, "x", &in), 0);
    /* the writer sees its own uncommitted writes */
    assert_int_equal(eo_store_round_find(f->s, keep, "r1", NULL, NULL), 0);
    assert_int_equal(eo_store_rollback(f->s), 0);

    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "gone", &row), EO_ENOTFOUND);
    assert_int_equal(eo_store_round_find(f->s, keep, "r1", NULL, NULL), EO_ENOTFOUND);
    eo_player_row pr;
    assert_int_equal(eo_store_player_get(f->s, keep, "x", &pr), EO_ENOTFOUND);
    assert_int_equal(eo_store_commit(f->s), EO_EINVAL); /* nothing open */
    assert_int_equal(eo_store_rollback(f->s), 0);       /* a no-op */
    /* after the rollback the seq starts at 1 again */
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(f->s, keep, EO_LOG_ROUND, "r1", "b", "r", 1, &seq), 0);
    assert_true(seq == 1);
}

/* Savepoints: an undone update goes, a kept one stays, marks nest, and the transaction commits
 * what was kept; no savepoint call works outside a transaction. */
static void test_savepoints(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    eo_player_row in = {.rating = 1500, .rounds = 1, .last_ended_at = 1};
    assert_int_equal(eo_store_savepoint(f->s), EO_EIO); /* no transaction */
    assert_int_equal(eo_store_release(f->s), EO_EIO);
    assert_int_equal(eo_store_rollback_to(f->s), EO_EIO);
    assert_int_equal(eo_store_begin(f->s), 0);
    assert_int_equal(eo_store_savepoint(f->s), 0); /* kept */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r1", "b1", "a1", 1, NULL), 0);
    assert_int_equal(eo_store_player_put(f->s, p, "x", &in), 0);
    assert_int_equal(eo_store_release(f->s), 0);
    assert_int_equal(eo_store_savepoint(f->s), 0); /* undone */
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r2", "b2", "a2", 2, NULL), 0);
    assert_int_equal(eo_store_player_put(f->s, p, "y", &in), 0);
    assert_int_equal(eo_store_savepoint(f->s), 0); /* nested, kept inside the undone one */
    assert_int_equal(eo_store_player_put(f->s, p, "z", &in), 0);
    assert_int_equal(eo_store_release(f->s), 0);
    assert_int_equal(eo_store_rollback_to(f->s), 0);
    /* undone from the writer's own view at once, and the transaction is still open */
    assert_int_equal(eo_store_round_find(f->s, p, "r2", NULL, NULL), EO_ENOTFOUND);
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r3", "b3", "a3", 3, &seq), 0);
    assert_true(seq == 2); /* r2's seq is free again */
    assert_int_equal(eo_store_release(f->s), EO_EIO); /* no mark left */
    assert_int_equal(eo_store_commit(f->s), 0);
    reopen(f);
    eo_player_row out;
    assert_int_equal(eo_store_round_find(f->s, p, "r1", NULL, NULL), 0);
    assert_int_equal(eo_store_round_find(f->s, p, "r2", NULL, NULL), EO_ENOTFOUND);
    assert_int_equal(eo_store_round_find(f->s, p, "r3", NULL, NULL), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "x", &out), 0);
    assert_int_equal(eo_store_player_get(f->s, p, "y", &out), EO_ENOTFOUND);
    assert_int_equal(eo_store_player_get(f->s, p, "z", &out), EO_ENOTFOUND);
    assert_int_equal(eo_store_savepoint(NULL), EO_EINVAL);
}

static void test_reader_sees_committed(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    eo_store *r = open_ro(f);
    assert_int_equal(eo_store_begin(f->s), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r1", "b", "resp", 1, NULL), 0);
    eo_player_row in = {.rating = 1500, .rounds = 1, .last_ended_at = 9};
    assert_int_equal(eo_store_player_put(f->s, p, "x", &in), 0);
    /* uncommitted: invisible to the reader, and the reader is not blocked by the writer */
    eo_player_row out;
    assert_int_equal(eo_store_player_get(r, p, "x", &out), EO_ENOTFOUND);
    assert_int_equal(eo_store_round_find(r, p, "r1", NULL, NULL), EO_ENOTFOUND);
    assert_int_equal(eo_store_commit(f->s), 0);
    assert_int_equal(eo_store_player_get(r, p, "x", &out), 0);
    assert_int_equal(out.rating, 1500);
    char *resp = NULL;
    assert_int_equal(eo_store_round_find(r, p, "r1", NULL, &resp), 0);
    assert_string_equal(resp, "resp");
    free(resp);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(r, "arena", &row), 0);
    assert_true(row.id == p);
    eo_pool_row_free(&row);
    int v = 0;
    assert_int_equal(eo_store_schema_version(r, &v), 0);
    assert_int_equal(v, EO_STORE_SCHEMA_VERSION);
    eo_store_close(r);
}

static void test_reader_cannot_write(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    eo_store *r = open_ro(f);
    assert_int_not_equal(eo_store_pool_create(r, "new", "synelo", "{}", 1, NULL), 0);
    assert_true(eo_store_errmsg(r)[0] != '\0');
    assert_int_not_equal(eo_store_log_append(r, p, EO_LOG_ROUND, "r1", "b", "r", 1, NULL), 0);
    eo_player_row in = {.rating = 1500, .rounds = 1, .last_ended_at = 9};
    assert_int_not_equal(eo_store_player_put(r, p, "x", &in), 0);
    assert_int_equal(eo_store_player_delete(r, p, "x") == 0 ? 0 : 1, 1);
    eo_store_close(r);
    /* nothing changed, as the writer sees it */
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "new", &row), EO_ENOTFOUND);
    assert_int_equal(eo_store_round_find(f->s, p, "r1", NULL, NULL), EO_ENOTFOUND);
    eo_player_row out;
    assert_int_equal(eo_store_player_get(f->s, p, "x", &out), EO_ENOTFOUND);
}

static void test_probe(void **state)
{
    fixture *f = *state;
    assert_false(eo_store_readonly(f->s));
    assert_int_equal(eo_store_probe(f->s), 0); /* a write of its own commits */
    assert_int_equal(eo_store_probe(f->s), 0);
    assert_int_equal(eo_store_begin(f->s), 0); /* and leaves no transaction behind */
    assert_int_equal(eo_store_commit(f->s), 0);
    eo_store *r = open_ro(f);
    assert_true(eo_store_readonly(r));
    assert_int_equal(eo_store_probe(r), EO_EINVAL);
    eo_store_close(r);
}

static void test_reopen_keeps_everything(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    assert_int_equal(eo_store_begin(f->s), 0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_ROUND, "r1", "body1", "resp1", 7, NULL),
                     0);
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_SET, NULL, "set1", NULL, 8, NULL), 0);
    eo_player_row in = {.rating = 987, .rounds = 3, .last_ended_at = 77};
    assert_int_equal(eo_store_player_put(f->s, p, "x", &in), 0);
    assert_int_equal(eo_store_commit(f->s), 0);
    reopen(f);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "arena", &row), 0);
    assert_true(row.id == p);
    assert_string_equal(row.params_json, "{\"theta\":2400}");
    eo_pool_row_free(&row);
    collected c = {0};
    assert_int_equal(eo_store_log_each(f->s, p, 0, collect, &c), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.body[0], "body1");
    assert_string_equal(c.body[1], "set1");
    assert_int_equal(c.kind[1], EO_LOG_SET);
    eo_player_row out;
    assert_int_equal(eo_store_player_get(f->s, p, "x", &out), 0);
    assert_int_equal(out.rating, 987);
    assert_int_equal(out.rounds, 3);
    assert_true(out.last_ended_at == 77);
    int v = 0;
    assert_int_equal(eo_store_schema_version(f->s, &v), 0);
    assert_int_equal(v, EO_STORE_SCHEMA_VERSION);
    /* and the log continues where it was */
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_RESET, NULL, "r", NULL, 9, &seq), 0);
    assert_true(seq == 3);
}

static void test_readonly_missing(void **state)
{
    fixture *f = *state;
    char path[300];
    snprintf(path, sizeof path, "%s.missing", f->loc);
    eo_store *r = (eo_store *)1;
    char err[256] = "";
    assert_int_equal(eo_store_open(path, EO_STORE_READONLY, &r, err, sizeof err), EO_EIO);
    assert_null(r);
    assert_non_null(strstr(err, path)); /* the message names the input */
    assert_true(access(path, F_OK) != 0); /* and nothing was created */
}

static void test_bad_arguments(void **state)
{
    (void)state;
    eo_store *r = NULL;
    char err[128] = "";
    assert_int_equal(eo_store_open("", 0, &r, err, sizeof err), EO_EINVAL);
    assert_true(err[0] != '\0');
    assert_int_equal(eo_store_open("/tmp/x", 1u << 7, &r, err, sizeof err), EO_EINVAL);
    eo_store_close(NULL);
    assert_int_equal(eo_store_begin(NULL), EO_EINVAL);
}

/* ---- SQLite-specific cases -------------------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static void test_sqlite_empty_file_migrates(void **state)
{
    (void)state;
    char *loc = sqlite_fresh();
    assert_non_null(loc);
    struct stat st;
    assert_int_equal(stat(loc, &st), 0);
    assert_int_equal(st.st_size, 0); /* mkstemp's file: empty, version 0 */
    eo_store *s = NULL;
    char err[256] = "";
    assert_int_equal(eo_store_open(loc, 0, &s, err, sizeof err), 0);
    int v = 0;
    assert_int_equal(eo_store_schema_version(s, &v), 0);
    assert_int_equal(v, EO_STORE_SCHEMA_VERSION);
    make_pool(s, "p");
    eo_store_close(s);
    /* the file is in WAL mode with one schema_version row per migration applied */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open_v2(loc, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*), max(version) FROM schema_version",
                                        -1, &q, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), EO_STORE_SCHEMA_VERSION);
    assert_int_equal(sqlite3_column_int(q, 1), EO_STORE_SCHEMA_VERSION);
    sqlite3_finalize(q);
    sqlite3_close(db);
    sqlite_destroy(loc);
    free(loc);
}

typedef struct standings_seen {
    int n;
    char id[8][16];
    double rating[8];
    uint32_t rounds[8];
} standings_seen;

static int see_standing(void *ctx, const char *player, const eo_player_row *row)
{
    standings_seen *c = ctx;
    if (c->n == 8)
        return -1;
    snprintf(c->id[c->n], sizeof c->id[0], "%s", player);
    c->rating[c->n] = row->rating;
    c->rounds[c->n] = row->rounds;
    c->n++;
    return 0;
}

typedef struct seasons_seen {
    int n;
    char name[4][16];
    int64_t seq[4], players[4];
} seasons_seen;

static int see_season(void *ctx, const char *name, int64_t seq, int64_t at, int64_t players)
{
    seasons_seen *c = ctx;
    (void)at;
    if (c->n == 4)
        return -1;
    snprintf(c->name[c->n], sizeof c->name[0], "%s", name);
    c->seq[c->n] = seq;
    c->players[c->n] = players;
    c->n++;
    return 0;
}

/* Seasons: unique names per pool, archived standings read highest first with offset and
 * limit, the season log kind. */
static void test_seasons(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    int64_t q = make_pool(f->s, "other");
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(f->s, p, EO_LOG_SEASON, NULL,
                                         "{\"f\":0.5,\"s\":0,\"season\":\"S1\"}", NULL, 50,
                                         &seq), 0);
    assert_int_equal(eo_store_season_create(f->s, p, "S1", seq, 50), 0);
    assert_int_equal(eo_store_season_create(f->s, p, "S1", seq, 51), EO_EEXIST);
    assert_int_equal(eo_store_season_create(f->s, q, "S1", 1, 52), 0); /* per pool */
    assert_int_equal(eo_store_season_create(f->s, 999, "S1", 1, 52), EO_ENOTFOUND);
    int64_t got_seq = 0, at = 0;
    assert_int_equal(eo_store_season_get(f->s, p, "S1", &got_seq, &at), 0);
    assert_true(got_seq == seq && at == 50);
    assert_int_equal(eo_store_season_get(f->s, p, "S2", NULL, NULL), EO_ENOTFOUND);

    static const struct {
        const char *id;
        double rating;
    } rows[] = {{"c", 1200}, {"a", 1500}, {"b", 1200}, {"d", 900.5}};
    for (size_t i = 0; i < 4; i++) {
        eo_player_row r = {.rating = rows[i].rating, .mu = rows[i].rating, .rounds = (uint32_t)i};
        assert_int_equal(eo_store_standing_put(f->s, p, "S1", rows[i].id, &r), 0);
    }
    eo_player_row r = {.rating = 1};
    assert_int_equal(eo_store_standing_put(f->s, p, "S1", "a", &r), EO_EEXIST);
    assert_int_equal(eo_store_standing_put(f->s, p, "nope", "a", &r), EO_ENOTFOUND);

    standings_seen c = {0};
    assert_int_equal(eo_store_standings_each(f->s, p, "S1", 0, 0, see_standing, &c), 0);
    assert_int_equal(c.n, 4); /* highest first, ties by id */
    assert_string_equal(c.id[0], "a");
    assert_string_equal(c.id[1], "b");
    assert_string_equal(c.id[2], "c");
    assert_string_equal(c.id[3], "d");
    assert_true(c.rating[3] == 900.5 && c.rounds[3] == 3);
    memset(&c, 0, sizeof c);
    assert_int_equal(eo_store_standings_each(f->s, p, "S1", 1, 2, see_standing, &c), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.id[0], "b");
    assert_string_equal(c.id[1], "c");
    memset(&c, 0, sizeof c);
    assert_int_equal(eo_store_standings_each(f->s, q, "S1", 0, 0, see_standing, &c), 0);
    assert_int_equal(c.n, 0);

    seasons_seen ss = {0};
    assert_int_equal(eo_store_seasons_each(f->s, p, see_season, &ss), 0);
    assert_int_equal(ss.n, 1);
    assert_string_equal(ss.name[0], "S1");
    assert_true(ss.seq[0] == seq && ss.players[0] == 4);

    collected lc = {0};
    assert_int_equal(eo_store_log_each(f->s, p, 0, collect, &lc), 0);
    assert_int_equal(lc.n, 1);
    assert_int_equal(lc.kind[0], EO_LOG_SEASON);
}

/* A version 1 store (SynElo's integer rows) opened by this build: migration 2 rebuilds the
 * player rows with mean = rating, no deviation, and visibility from the pool's own t_shadow. */
static void test_sqlite_migrates_v1_players(void **state)
{
    (void)state;
    char *loc = sqlite_fresh();
    assert_non_null(loc);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(loc, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, eo__sqlite_migrations[0], NULL, NULL, NULL), SQLITE_OK);
    const char *v1 =
        "INSERT INTO schema_version (version) VALUES (1);"
        "INSERT INTO pools VALUES (1, 'fast', 'synelo', '{\"t_shadow\":10}', 5);"
        "INSERT INTO pools VALUES (2, 'plain', 'synelo', '{}', 5);"
        "INSERT INTO players VALUES (1, 'a', 1234, 12, 77), (1, 'b', 900, 9, 78),"
        "                           (2, 'a', 1100, 49, 79), (2, 'c', 1500, 50, 80);"
        "INSERT INTO log VALUES (7, 1, 1, 0, 'r1', '{\"id\":\"r1\"}', '{}', 70),"
        "                       (9, 1, 2, 1, NULL, '{\"player\":\"a\"}', NULL, 71);";
    assert_int_equal(sqlite3_exec(db, v1, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    eo_store *s = NULL;
    char err[256] = "";
    assert_int_equal(eo_store_open(loc, 0, &s, err, sizeof err), 0);
    int v = 0;
    assert_int_equal(eo_store_schema_version(s, &v), 0);
    assert_int_equal(v, EO_STORE_SCHEMA_VERSION);
    /* Migration 3 rebuilds the log: the same entries, in the same order. */
    collected c = {0};
    assert_int_equal(eo_store_log_each(s, 1, 0, collect, &c), 0);
    assert_int_equal(c.n, 2);
    assert_string_equal(c.body[0], "{\"id\":\"r1\"}");
    assert_string_equal(c.id[0], "r1");
    assert_int_equal(c.kind[1], EO_LOG_SET);
    assert_true(c.seq[1] == 2);
    static const struct {
        int64_t pool;
        const char *id;
        double rating;
        uint32_t rounds;
        bool visible;
        int64_t ended;
    } want[] = {{1, "a", 1234, 12, true, 77},  {1, "b", 900, 9, false, 78},
                {2, "a", 1100, 49, false, 79}, {2, "c", 1500, 50, true, 80}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        eo_player_row row;
        assert_int_equal(eo_store_player_get(s, want[i].pool, want[i].id, &row), 0);
        assert_true(row.rating == want[i].rating && row.mu == want[i].rating);
        assert_true(row.sigma == 0 && row.volatility == 0);
        for (int x = 0; x < EO_VIEW_EXTRA; x++) /* migration 5: no model-specific values yet */
            assert_true(row.extra[x] == 0.0);
        assert_int_equal(row.rounds, want[i].rounds);
        assert_int_equal(row.visible, want[i].visible);
        assert_int_equal(row.last_ended_at, want[i].ended);
    }
    eo_store_close(s);
    sqlite_destroy(loc);
    free(loc);
}

static void expect_open_fails(const char *loc, unsigned flags, const char *needle)
{
    eo_store *s = (eo_store *)1;
    char err[256] = "";
    assert_int_equal(eo_store_open(loc, flags, &s, err, sizeof err), EO_EIO);
    assert_null(s);
    if (strstr(err, needle) == NULL || strstr(err, loc) == NULL)
        fail_msg("message '%s' should name '%s' and say '%s'", err, loc, needle);
}

static void test_sqlite_not_a_database(void **state)
{
    (void)state;
    char *loc = sqlite_fresh();
    assert_non_null(loc);
    char text[2048];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + i % 26);
    write_file(loc, text, sizeof text);
    expect_open_fails(loc, 0, "not a database");
    expect_open_fails(loc, EO_STORE_READONLY, "not a database");
    /* and the file is untouched */
    struct stat st;
    assert_int_equal(stat(loc, &st), 0);
    assert_int_equal(st.st_size, (off_t)sizeof text);
    sqlite_destroy(loc);
    free(loc);
}

static void test_sqlite_corrupt_header(void **state)
{
    (void)state;
    char *loc = sqlite_fresh();
    assert_non_null(loc);
    eo_store *s = NULL;
    char err[256] = "";
    assert_int_equal(eo_store_open(loc, 0, &s, err, sizeof err), 0);
    make_pool(s, "p");
    eo_store_close(s); /* the last close checkpoints the WAL into the file */
    /* Bytes 16-17 hold the page size (a power of two from 512 to 65536, or 1 for 65536):
     * 0x0303 is none of those, so SQLite must reject the header. */
    FILE *fp = fopen(loc, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 16, SEEK_SET), 0);
    assert_int_equal(fputc(3, fp), 3);
    assert_int_equal(fputc(3, fp), 3);
    assert_int_equal(fclose(fp), 0);
    expect_open_fails(loc, 0, "not a database");
    sqlite_destroy(loc);
    free(loc);
}

static void test_sqlite_foreign_database(void **state)
{
    (void)state;
    char *loc = sqlite_fresh();
    assert_non_null(loc);
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(loc, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x); INSERT INTO t VALUES (1)", NULL, NULL,
                                  NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_open_fails(loc, 0, "not an evenodds store");
    /* it was not converted to WAL nor given our tables */
    assert_int_equal(sqlite3_open(loc, &db), SQLITE_OK);
    sqlite3_stmt *q = NULL;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &q, NULL),
                     SQLITE_OK);
    assert_int_equal(sqlite3_step(q), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(q, 0), 1);
    sqlite3_finalize(q);
    sqlite3_close(db);
    sqlite_destroy(loc);
    free(loc);
}

static void test_sqlite_newer_schema(void **state)
{
    fixture *f = *state;
    eo_store_close(f->s);
    f->s = NULL;
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->loc, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "INSERT INTO schema_version (version) VALUES (999)", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    expect_open_fails(f->loc, 0, "newer");
    expect_open_fails(f->loc, EO_STORE_READONLY, "newer");
    /* the teardown closes f->s: reopening would fail, so leave it NULL (close(NULL) is a no-op) */
}

static void test_sqlite_missing_directory(void **state)
{
    (void)state;
    expect_open_fails("/nonexistent-eo-dir/x.db", 0, "cannot open");
}

static void test_sqlite_sync_full(void **state)
{
    fixture *f = *state;
    eo_store *s = NULL;
    char err[256] = "";
    /* a second writer handle on the same file, with fsync at every commit */
    assert_int_equal(eo_store_open(f->loc, EO_STORE_SYNC_FULL, &s, err, sizeof err), 0);
    make_pool(s, "full");
    eo_store_close(s);
    eo_pool_row row;
    assert_int_equal(eo_store_pool_get(f->s, "full", &row), 0);
    eo_pool_row_free(&row);
}


/* ---- read indexes (docs/STORE.md "Read indexes") ----------------------------------------- */

/* Round @p n of pool @p pool: logged, its members' rows written (each with his name when given,
 * the chain linked) and indexed, as the engine does. @p ids: A's then B's (@p na of A). */
static void play(eo_store *s, int64_t pool, int64_t n, const char *const *ids, size_t count,
                 size_t na, const char *const *names, double p_a, eo_winner w, int64_t at)
{
    char rid[16];
    snprintf(rid, sizeof rid, "r%lld", (long long)n);
    int64_t seq = 0;
    assert_int_equal(eo_store_log_append(s, pool, EO_LOG_ROUND, rid, "{}", "{}", at, &seq), 0);
    eo_member_ix m[8];
    assert_true(count <= 8);
    for (size_t i = 0; i < count; i++) {
        bool a = i < na;
        eo_player_row row = {.rating = 1000.0 + (double)n * (a ? 1 : -1), .rounds = (uint32_t)n,
                             .visible = n >= 2, .last_ended_at = at};
        m[i] = (eo_member_ix){.team = a ? 0 : 1, .pos = (int)(a ? i : i - na),
                              .rating = row.rating, .delta = a ? 1 : -1, .mu = row.rating,
                              .sigma = 0.5, .rounds = row.rounds, .visible = row.visible,
                              .weight = 0.25 * (double)(i + 1)};
        assert_int_equal(eo_store_player_put_played(s, pool, ids[i], &row,
                                                    names ? names[i] : NULL, n, &m[i].prev), 0);
    }
    eo_round_ix ix = {.n = n, .seq = seq, .round_id = rid, .at = at, .started_at = at - 300,
                      .ended_at = at, .map = "well", .p_a = p_a, .winner = w};
    assert_int_equal(eo_store_round_ix_put(s, pool, &ix, ids, m, count), 0);
}

typedef struct got_rounds {
    int64_t n[8];
    size_t count;
    double weight1; /* the second member's share in the first round seen */
    int64_t prev[8];
} got_rounds;

static int got_round(void *ctx, const eo_round_item *r)
{
    got_rounds *g = ctx;
    if (g->count == 0)
        g->weight1 = r->members[1].weight;
    assert_string_equal(r->ix->map, "well");
    g->n[g->count++] = r->ix->n;
    return 0;
}

static int got_player_round(void *ctx, const eo_round_item *r, const eo_member_ix *m)
{
    got_rounds *g = ctx;
    g->prev[g->count] = m->prev;
    return got_round(ctx, r);
}

static int got_point(void *ctx, const eo_member_ix *m)
{
    got_rounds *g = ctx;
    g->prev[g->count] = m->prev;
    g->n[g->count++] = m->n;
    return 0;
}

static void test_read_index_rounds(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    const char *ab[] = {"a", "b"}, *ac[] = {"a", "c"}, *bc[] = {"b", "c"};
    assert_int_equal(eo_store_begin(f->s), 0);
    play(f->s, p, 1, ab, 2, 1, NULL, 0.5, EO_WIN_A, 1763800000);
    play(f->s, p, 2, bc, 2, 1, NULL, 0.6, EO_WIN_B, 1763900000);
    play(f->s, p, 3, ac, 2, 1, NULL, 0.4, EO_DRAW, 1764000000);
    assert_int_equal(eo_store_commit(f->s), 0);
    eo_round_ix last;
    assert_int_equal(eo_store_round_ix_last(f->s, p, &last), 0);
    assert_int_equal(last.n, 3);
    assert_true(last.p_a == 0.4 && last.winner == EO_DRAW);
    /* newest first, from an offset */
    got_rounds g = {.count = 0};
    assert_int_equal(eo_store_rounds_each(f->s, p, 1, 5, got_round, &g), 0);
    assert_int_equal(g.count, 2);
    assert_true(g.n[0] == 2 && g.n[1] == 1 && g.weight1 == 0.5);
    /* one round by id; an unknown one */
    g.count = 0;
    assert_int_equal(eo_store_round_get(f->s, p, "r2", got_round, &g), 0);
    assert_true(g.count == 1 && g.n[0] == 2);
    assert_int_equal(eo_store_round_get(f->s, p, "r9", got_round, &g), EO_ENOTFOUND);
    /* a player's rounds: newest first, each linked to his round before */
    g.count = 0;
    assert_int_equal(eo_store_player_rounds_each(f->s, p, "a", 0, 10, got_player_round, &g), 0);
    assert_true(g.count == 2 && g.n[0] == 3 && g.n[1] == 1 && g.prev[0] == 1 && g.prev[1] == 0);
    /* his history: oldest first; since and limit keep the latest */
    g.count = 0;
    assert_int_equal(eo_store_history_each(f->s, p, "c", 0, 10, got_point, &g), 0);
    assert_true(g.count == 2 && g.n[0] == 2 && g.n[1] == 3);
    g.count = 0;
    assert_int_equal(eo_store_history_each(f->s, p, "c", 1763950000, 10, got_point, &g), 0);
    assert_true(g.count == 1 && g.n[0] == 3);
    g.count = 0;
    assert_int_equal(eo_store_history_each(f->s, p, "b", 0, 1, got_point, &g), 0);
    assert_true(g.count == 1 && g.n[0] == 2);
    g.count = 0;
    assert_int_equal(eo_store_history_each(f->s, p, "nobody", 0, 10, got_point, &g), 0);
    assert_int_equal(g.count, 0);
    /* a damaged blob is told, not read past */
    sqlite3 *db = NULL;
    assert_int_equal(sqlite3_open(f->loc, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "UPDATE round_ix SET members = x'0100ff' WHERE n = 3", NULL,
                                  NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(eo_store_history_each(f->s, p, "a", 0, 10, got_point, &g), EO_EIO);
    assert_int_equal(eo_store_rounds_each(f->s, p, 0, 1, got_round, &g), EO_EIO);
}

typedef struct got_board {
    char ids[8][8];
    int64_t ranks[8];
    char names[8][16];
    size_t n;
} got_board;

static int got_row(void *ctx, int64_t rank, const char *id, const char *name,
                   const eo_player_row *row)
{
    got_board *b = ctx;
    assert_true(row->visible);
    snprintf(b->ids[b->n], sizeof b->ids[b->n], "%s", id);
    snprintf(b->names[b->n], sizeof b->names[b->n], "%s", name ? name : "-");
    b->ranks[b->n++] = rank;
    return 0;
}

static void test_read_index_board(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    static const struct {
        const char *id, *name;
        double rating;
        bool visible;
    } pl[] = {{"p1", "Zed", 1500, true}, {"p2", "zoe", 1500, true}, {"p3", NULL, 1400, true},
              {"p4", "Zack", 1600, false}, {"q5", "Amy", 900, true}};
    for (int i = 0; i < 5; i++) {
        eo_player_row row = {.rating = pl[i].rating, .visible = pl[i].visible};
        int64_t prev;
        assert_int_equal(eo_store_player_put_played(f->s, p, pl[i].id, &row, pl[i].name, i + 1,
                                                    &prev), 0);
    }
    int64_t n = 0, rank = 0;
    assert_int_equal(eo_store_board_count(f->s, p, &n), 0);
    assert_int_equal(n, 4);
    /* by display, ties by id; invisible players are not on it */
    got_board b = {.n = 0};
    assert_int_equal(eo_store_board_each(f->s, p, NULL, 0, 10, got_row, &b), 0);
    assert_int_equal(b.n, 4);
    assert_string_equal(b.ids[0], "p1");
    assert_string_equal(b.ids[1], "p2");
    assert_string_equal(b.ids[3], "q5");
    assert_string_equal(b.names[1], "zoe");
    assert_string_equal(b.names[2], "-");
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, NULL, 2, 1, got_row, &b), 0);
    assert_true(b.n == 1 && b.ranks[0] == 3);
    /* search: a name's start in any ASCII case, or an id's start; ranks on the whole board */
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, "Z", 0, 10, got_row, &b), 0);
    assert_true(b.n == 2 && b.ranks[0] == 1 && b.ranks[1] == 2);
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, "ZO", 0, 10, got_row, &b), 0);
    assert_true(b.n == 1 && strcmp(b.ids[0], "p2") == 0);
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, "q", 0, 10, got_row, &b), 0);
    assert_true(b.n == 1 && b.ranks[0] == 4);
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, "zack", 0, 10, got_row, &b), 0);
    assert_int_equal(b.n, 0);
    b.n = 0;
    assert_int_equal(eo_store_board_each(f->s, p, "p", 1, 1, got_row, &b), 0);
    assert_true(b.n == 1 && strcmp(b.ids[0], "p2") == 0);
    assert_int_equal(eo_store_board_rank(f->s, p, "p3", &rank), 0);
    assert_int_equal(rank, 3);
    assert_int_equal(eo_store_board_rank(f->s, p, "p4", &rank), EO_ENOTFOUND);
    /* a later round without a name keeps the name; a new one replaces it; a link does too,
     * and it changes neither rating nor rank */
    eo_player_row row = {.rating = 1500, .visible = true};
    int64_t prev = 0;
    assert_int_equal(eo_store_player_put_played(f->s, p, "p1", &row, NULL, 9, &prev), 0);
    assert_int_equal(prev, 1);
    char *name = NULL;
    assert_int_equal(eo_store_player_name_get(f->s, p, "p1", &name), 0);
    assert_string_equal(name, "Zed");
    free(name);
    assert_int_equal(eo_store_player_link(f->s, p, "p1", "Zeddy", 12, 9), 0);
    assert_int_equal(eo_store_player_name_get(f->s, p, "p1", &name), 0);
    assert_string_equal(name, "Zeddy");
    free(name);
    assert_int_equal(eo_store_player_last(f->s, p, "p1", &n), 0);
    assert_int_equal(n, 12);
    assert_int_equal(eo_store_board_rank(f->s, p, "p1", &rank), 0);
    assert_int_equal(rank, 1);
    assert_int_equal(eo_store_player_name_get(f->s, p, "p3", &name), 0);
    assert_null(name);
    assert_int_equal(eo_store_player_name_get(f->s, p, "nobody", &name), EO_ENOTFOUND);
    /* the board's size follows every way a row comes, goes or changes its visibility */
    eo_player_row shown = {.rating = 1, .visible = true}, hidden = {.rating = 1};
    assert_int_equal(eo_store_player_put(f->s, p, "p4", &shown), 0);
    assert_int_equal(eo_store_player_put(f->s, p, "p9", &hidden), 0);
    assert_int_equal(eo_store_board_count(f->s, p, &n), 0);
    assert_int_equal(n, 5);
    assert_int_equal(eo_store_player_delete(f->s, p, "p1"), 0);
    assert_int_equal(eo_store_player_delete(f->s, p, "p9"), 0);
    assert_int_equal(eo_store_player_put_played(f->s, p, "p2", &hidden, NULL, 20, &prev), 0);
    assert_int_equal(eo_store_board_count(f->s, p, &n), 0);
    assert_int_equal(n, 3);
    int64_t other = make_pool(f->s, "other");
    assert_int_equal(eo_store_board_count(f->s, other, &n), 0);
    assert_int_equal(n, 0);
}

/* Player i of test_read_index_search: his id, name and rating (many ties). */
#define SEARCH_PLAYERS 2400
static void search_player(int i, char *id, char *name, double *rating)
{
    snprintf(id, 16, "p%04d", i);
    snprintf(name, 16, i % 2 ? "Odd%d" : "even%d", i);
    *rating = i % 97;
}

typedef struct got_page {
    char ids[64][16];
    int64_t ranks[64];
    size_t n;
} got_page;

static int got_match(void *ctx, int64_t rank, const char *id, const char *name,
                     const eo_player_row *row)
{
    (void)name;
    got_page *g = ctx;
    assert_true(row->visible && g->n < 64);
    snprintf(g->ids[g->n], sizeof g->ids[g->n], "%s", id);
    g->ranks[g->n++] = rank;
    return 0;
}

typedef struct board_entry {
    double rating;
    char id[16], name[16];
} board_entry;

static int entry_order(const void *x, const void *y)
{
    const board_entry *a = x, *b = y;
    return a->rating != b->rating ? (a->rating > b->rating ? -1 : 1) : strcmp(a->id, b->id);
}

/* Whether @p name starts with @p q in any ASCII case. */
static bool name_starts(const char *name, const char *q)
{
    for (; *q != '\0'; name++, q++)
        if (tolower((unsigned char)*name) != tolower((unsigned char)*q))
            return false;
    return true;
}

/* A search's page equals the board's matches counted in order, whether the matches are few
 * (found by the indexes of ids and names) or many (found by a walk of the board). */
static void test_read_index_search(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    static board_entry board[SEARCH_PLAYERS];
    size_t nb = 0;
    assert_int_equal(eo_store_begin(f->s), 0);
    for (int i = 0; i < SEARCH_PLAYERS; i++) {
        board_entry *e = &board[nb];
        eo_player_row row = {.visible = i % 10 != 0};
        int64_t prev;
        search_player(i, e->id, e->name, &row.rating);
        e->rating = row.rating;
        assert_int_equal(eo_store_player_put_played(f->s, p, e->id, &row, e->name, 1, &prev), 0);
        nb += row.visible;
    }
    /* a new name replaces the old one for search too; this one starts as his id does */
    eo_player_row row = {.rating = board[0].rating, .visible = true};
    int64_t prev;
    assert_int_equal(eo_store_player_put_played(f->s, p, board[0].id, &row, "P0001 x", 2, &prev),
                     0);
    snprintf(board[0].name, sizeof board[0].name, "P0001 x");
    assert_int_equal(eo_store_commit(f->s), 0);
    qsort(board, nb, sizeof *board, entry_order);
    static const struct {
        const char *q;
        int64_t offset, limit;
    } cases[] = {{"ODD1", 0, 60},   {"odd1", 50, 60}, {"even2", 3, 5}, {"p00", 10, 20},
                 {"p0001", 0, 5}, {"p", 2000, 60},  {"p", 0, 30},    {"o", 900, 40},
                 {"", 1500, 10},    {"Odd9999", 0, 5}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        got_page want = {.n = 0}, got = {.n = 0};
        int64_t found = 0;
        for (size_t r = 0; r < nb && want.n < (size_t)cases[c].limit; r++)
            if ((strncmp(board[r].id, cases[c].q, strlen(cases[c].q)) == 0 ||
                 name_starts(board[r].name, cases[c].q)) &&
                found++ >= cases[c].offset) {
                snprintf(want.ids[want.n], sizeof want.ids[0], "%s", board[r].id);
                want.ranks[want.n++] = (int64_t)r + 1;
            }
        assert_int_equal(eo_store_board_each(f->s, p, cases[c].q, cases[c].offset,
                                             cases[c].limit, got_match, &got),
                         0);
        assert_int_equal(got.n, want.n);
        for (size_t i = 0; i < got.n; i++) {
            assert_string_equal(got.ids[i], want.ids[i]);
            assert_int_equal(got.ranks[i], want.ranks[i]);
        }
    }
}

typedef struct got_health {
    int64_t days[4];
    int bins[4];
    uint64_t rounds[4];
    double brier[4];
    size_t n;
} got_health;

static int got_sums(void *ctx, int64_t day, int bin, const eo_eval_sums *d)
{
    got_health *h = ctx;
    h->days[h->n] = day;
    h->bins[h->n] = bin;
    h->rounds[h->n] = d->rounds;
    h->brier[h->n++] = d->m.brier_sum;
    return 0;
}

static void test_read_index_health(void **state)
{
    fixture *f = *state;
    int64_t p = make_pool(f->s, "arena");
    eo_eval_sums a = {.rounds = 1, .m = {.count = 1, .brier_sum = 0.25}};
    eo_eval_sums b = {.rounds = 2, .m = {.count = 2, .brier_sum = 0.5}};
    assert_int_equal(eo_store_health_add(f->s, p, 20400, 5, &a), 0);
    assert_int_equal(eo_store_health_add(f->s, p, 20400, 5, &b), 0); /* adds */
    assert_int_equal(eo_store_health_add(f->s, p, 20399, 9, &a), 0);
    assert_int_equal(eo_store_health_add(f->s, p, 20401, 0, &a), 0);
    assert_int_equal(eo_store_health_add(f->s, p, 20401, 10, &a), EO_EINVAL);
    got_health h = {.n = 0};
    assert_int_equal(eo_store_health_each(f->s, p, 20400, got_sums, &h), 0);
    assert_int_equal(h.n, 2); /* from day 20400 on, by day */
    assert_true(h.days[0] == 20400 && h.bins[0] == 5 && h.rounds[0] == 3 && h.brier[0] == 0.75);
    assert_true(h.days[1] == 20401 && h.bins[1] == 0);
}

/* ---- matchmaking objects ---------------------------------------------------------------- */

static eo_mm_row mm_row(const char *name, const char *owner, const char *status, bool live,
                        int64_t at)
{
    eo_mm_row r;
    memset(&r, 0, sizeof r);
    snprintf(r.name, sizeof r.name, "%s", name);
    snprintf(r.owner, sizeof r.owner, "%s", owner);
    snprintf(r.status, sizeof r.status, "%s", status);
    r.live = live;
    r.request = (char *)"{\"players\":[]}";
    r.doc = (char *)"{\"status\":\"queued\"}";
    r.created_at = r.updated_at = at;
    return r;
}

typedef struct mm_seen {
    char names[8][EO_ID_MAX + 1];
    int n;
} mm_seen;

static int mm_collect(void *ctx, const eo_mm_row *row)
{
    mm_seen *m = ctx;
    if (m->n < 8)
        snprintf(m->names[m->n], sizeof m->names[0], "%s", row->name);
    m->n++;
    return 0;
}

static void test_mm_objects(void **state)
{
    fixture *f = *state;
    eo_mm_row t1 = mm_row("t1", "q", "queued", true, 2000);
    snprintf(t1.token, sizeof t1.token, "%s", "abc123");
    eo_mm_row t0 = mm_row("t0", "q", "queued", true, 1000);
    eo_mm_row t2 = mm_row("t2", "q", "cancelled", false, 1500);
    assert_int_equal(eo_store_mm_put(f->s, EO_MM_TICKET, &t1), 0);
    assert_int_equal(eo_store_mm_put(f->s, EO_MM_TICKET, &t0), 0);
    assert_int_equal(eo_store_mm_put(f->s, EO_MM_TICKET, &t2), 0);
    /* the same name in another kind is another object */
    eo_mm_row inst = mm_row("t1", "", "live", true, 10);
    assert_int_equal(eo_store_mm_put(f->s, EO_MM_INSTANCE, &inst), 0);

    eo_mm_row got;
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "t1", &got), 0);
    assert_string_equal(got.owner, "q");
    assert_string_equal(got.token, "abc123");
    assert_string_equal(got.request, t1.request);
    assert_true(got.live);
    assert_int_equal(got.created_at, 2000);
    eo_mm_row_free(&got);
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "nope", &got), EO_ENOTFOUND);

    /* live ones oldest first; all of them with the finished one */
    mm_seen seen = {0};
    assert_int_equal(eo_store_mm_each(f->s, EO_MM_TICKET, true, mm_collect, &seen), 0);
    assert_int_equal(seen.n, 2);
    assert_string_equal(seen.names[0], "t0");
    assert_string_equal(seen.names[1], "t1");
    memset(&seen, 0, sizeof seen);
    assert_int_equal(eo_store_mm_each(f->s, EO_MM_TICKET, false, mm_collect, &seen), 0);
    assert_int_equal(seen.n, 3);
    assert_string_equal(seen.names[1], "t2");

    /* a state change; an unknown name changes nothing */
    assert_int_equal(eo_store_mm_set(f->s, EO_MM_TICKET, "t1", "assigned", false,
                                     "{\"status\":\"assigned\"}", 3000),
                     0);
    assert_int_equal(eo_store_mm_set(f->s, EO_MM_TICKET, "zz", "assigned", false, "{}", 3000),
                     EO_ENOTFOUND);
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "t1", &got), 0);
    assert_string_equal(got.status, "assigned");
    assert_string_equal(got.doc, "{\"status\":\"assigned\"}");
    assert_false(got.live);
    assert_int_equal(got.updated_at, 3000);
    eo_mm_row_free(&got);

    /* pruning takes finished objects updated before the bound, nothing live */
    int64_t n = -1;
    assert_int_equal(eo_store_mm_prune(f->s, 2000, &n), 0);
    assert_int_equal(n, 1); /* t2 (1500); t1 finished at 3000 stays */
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "t2", &got), EO_ENOTFOUND);
    assert_int_equal(eo_store_mm_prune(f->s, 4000, &n), 0);
    assert_int_equal(n, 1);
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "t0", &got), 0);
    eo_mm_row_free(&got);
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_INSTANCE, "t1", &got), 0);
    eo_mm_row_free(&got);

    /* survives a reopen */
    reopen(f);
    assert_int_equal(eo_store_mm_get(f->s, EO_MM_TICKET, "t0", &got), 0);
    assert_string_equal(got.status, "queued");
    eo_mm_row_free(&got);
    eo_mm_row bad = mm_row("", "q", "queued", true, 1);
    assert_int_equal(eo_store_mm_put(f->s, EO_MM_TICKET, &bad), EO_EINVAL);
}

int main(void)
{
#define CASE(fn) cmocka_unit_test_setup_teardown(fn, setup_sqlite, teardown)
    /* The conformance table: a PostgreSQL backend runs the same cases with its own setup. */
    const struct CMUnitTest conformance[] = {
        CASE(test_schema_version),        CASE(test_pool_create_get),
        CASE(test_pool_duplicate),        CASE(test_pool_list),
        CASE(test_pool_set_config),
        CASE(test_log_append_find),       CASE(test_log_same_id_two_pools),
        CASE(test_log_each_order),        CASE(test_log_bad_entries),
        CASE(test_players),               CASE(test_players_each),
        CASE(test_transaction_rollback), CASE(test_savepoints),
        CASE(test_reader_sees_committed), CASE(test_reader_cannot_write), CASE(test_probe),
        CASE(test_reopen_keeps_everything), CASE(test_readonly_missing),
        CASE(test_seasons),
        CASE(test_read_index_rounds),     CASE(test_read_index_board),
        CASE(test_read_index_search),
        CASE(test_read_index_health),
        CASE(test_mm_objects),
        cmocka_unit_test(test_bad_arguments),
    };
    const struct CMUnitTest sqlite_only[] = {
        cmocka_unit_test(test_sqlite_empty_file_migrates),
        cmocka_unit_test(test_sqlite_migrates_v1_players),
        cmocka_unit_test(test_sqlite_not_a_database),
        cmocka_unit_test(test_sqlite_corrupt_header),
        cmocka_unit_test(test_sqlite_foreign_database),
        CASE(test_sqlite_newer_schema),
        cmocka_unit_test(test_sqlite_missing_directory),
        CASE(test_sqlite_sync_full),
    };
#undef CASE
    int failed = cmocka_run_group_tests_name("store conformance (sqlite)", conformance, NULL, NULL);
    failed += cmocka_run_group_tests_name("store sqlite", sqlite_only, NULL, NULL);
    return failed;
}
