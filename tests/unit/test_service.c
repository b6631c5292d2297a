/* Unit tests of the service's internal parts (src/service/): path decoding and routing, bearer
 * key checks, key loading, logfmt lines, Prometheus text, the pool table and the ratings splits
 * read (alone, against concurrent readers, and switched off inside a running service). Expected
 * values are written out by hand from the rules in docs/SERVICE.md. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "service/service.h"
#include "store_util.h"

static void test_pct_decode(void **state)
{
    (void)state;
    char out[16];
    size_t n;
    assert_int_equal(eo__pct_decode("a%2Fb", 5, out, sizeof out, &n), 0);
    assert_string_equal(out, "a/b");
    assert_int_equal(n, 3);
    assert_int_equal(eo__pct_decode("abc%41%62", 9, out, sizeof out, &n), 0);
    assert_string_equal(out, "abcAb"); /* 0x41 = 'A', 0x62 = 'b' */
    assert_int_equal(eo__pct_decode("a+b", 3, out, sizeof out, &n), 0);
    assert_string_equal(out, "a+b"); /* a path, not a form: '+' stays */
    assert_int_equal(eo__pct_decode("%zz", 3, out, sizeof out, &n), EO_EPARSE);
    assert_int_equal(eo__pct_decode("%4", 2, out, sizeof out, &n), EO_EPARSE);
    assert_int_equal(eo__pct_decode("ab%", 3, out, sizeof out, &n), EO_EPARSE);
    /* 16 bytes need 17 with the NUL. */
    assert_int_equal(eo__pct_decode("0123456789abcdef", 16, out, sizeof out, &n), EO_ELIMIT);
    assert_int_equal(eo__pct_decode("0123456789abcde", 15, out, sizeof out, &n), 0);
}

/* "METHOD template" of the route @p m matched, or "none". */
static const char *route_of(const eo__match *m)
{
    static char buf[128];
    if (m->route < 0)
        return "none";
    snprintf(buf, sizeof buf, "%s %s", eo__routes[m->route].method, eo__routes[m->route].path);
    return buf;
}

static void test_route_match(void **state)
{
    (void)state;
    eo__match m;
    eo__route_match("GET", "/healthz", &m);
    assert_string_equal(route_of(&m), "GET /healthz");
    eo__route_match("POST", "/healthz", &m);
    assert_string_equal(route_of(&m), "none");
    assert_true(m.path_known);
    assert_string_equal(m.allow, "GET, HEAD");
    eo__route_match("GET", "/v1/pools", &m);
    assert_string_equal(route_of(&m), "GET /v1/pools");
    eo__route_match("POST", "/v1/pools", &m);
    assert_string_equal(route_of(&m), "POST /v1/pools");
    eo__route_match("GET", "/v1/pools/arena/players/76561198000000001", &m);
    assert_string_equal(route_of(&m), "GET /v1/pools/{pool}/players/{id}");
    assert_string_equal(eo__path_param(&m, "pool"), "arena");
    assert_string_equal(eo__path_param(&m, "id"), "76561198000000001");
    assert_int_equal(m.seg_error, 0);
    eo__route_match("PUT", "/v1/pools/arena/players/x", &m);
    assert_string_equal(route_of(&m), "PUT /v1/pools/{pool}/players/{id}");
    eo__route_match("DELETE", "/v1/pools/arena/players/x", &m);
    assert_string_equal(route_of(&m), "DELETE /v1/pools/{pool}/players/{id}");
    eo__route_match("POST", "/v1/pools/my%20pool/rounds", &m);
    assert_string_equal(route_of(&m), "POST /v1/pools/{pool}/rounds");
    assert_string_equal(eo__path_param(&m, "pool"), "my pool");
    eo__route_match("POST", "/v1/pools/a/splits", &m);
    assert_string_equal(route_of(&m), "POST /v1/pools/{pool}/splits");
    eo__route_match("GET", "/v1/pools/a/quality", &m);
    assert_string_equal(route_of(&m), "GET /v1/pools/{pool}/quality");
    eo__route_match("GET", "/v1/pools/a/maps", &m);
    assert_string_equal(route_of(&m), "GET /v1/pools/{pool}/maps");
    eo__route_match("POST", "/v1/pools/a/maps", &m);
    assert_string_equal(route_of(&m), "none");
    assert_string_equal(m.allow, "GET, HEAD");
    eo__route_match("GET", "/v1/pools/a/rounds", &m);
    assert_string_equal(route_of(&m), "none");
    assert_string_equal(m.allow, "POST");
    /* Not routes at all. */
    const char *none[] = {"", "/", "/v1", "/v1/pools/", "/v1/pools/a", "/v1/pools//rounds",
                          "/v1/pools/a/players", "/v1/pools/a/players/x/y", "/v2/pools",
                          "/healthz/", "v1/pools"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        eo__route_match("GET", none[i], &m);
        assert_string_equal(route_of(&m), "none");
        assert_false(m.path_known);
    }
    /* Bad segments: the route is known, the segment error is reported. */
    eo__route_match("GET", "/v1/pools/a/players/%zz", &m);
    assert_string_equal(route_of(&m), "GET /v1/pools/{pool}/players/{id}");
    assert_int_equal(m.seg_error, EO_EINVAL);
    assert_string_equal(m.seg_field, "id");
    eo__route_match("GET", "/v1/pools/a%00b/quality", &m);
    assert_int_equal(m.seg_error, EO_EINVAL);
    assert_string_equal(m.seg_field, "pool");
    eo__route_match("GET", "/v1/pools/a/players/%E2%82", &m); /* truncated UTF-8 */
    assert_int_equal(m.seg_error, EO_EINVAL);
    char longp[300];
    memset(longp, 0, sizeof longp);
    memcpy(longp, "/v1/pools/a/players/", 20);
    memset(longp + 20, 'x', 129); /* EO_ID_MAX + 1 bytes */
    eo__route_match("GET", longp, &m);
    assert_int_equal(m.seg_error, EO_ELIMIT);
    longp[20 + 128] = '\0'; /* exactly EO_ID_MAX */
    eo__route_match("GET", longp, &m);
    assert_int_equal(m.seg_error, 0);
    assert_int_equal(strlen(eo__path_param(&m, "id")), 128);
}

static void test_auth(void **state)
{
    (void)state;
    eo_service_keys k;
    memset(&k, 0, sizeof k);
    snprintf(k.server, sizeof k.server, "server-key-0123456789");
    snprintf(k.admin, sizeof k.admin, "admin-key-0123456789");
    eo__auth a;
    eo__auth_init(&a, &k);
    bool missing;
    assert_int_equal(eo__auth_check(&a, "Bearer admin-key-0123456789", &missing), EO__ROLE_ADMIN);
    assert_false(missing);
    assert_int_equal(eo__auth_check(&a, "Bearer server-key-0123456789", &missing), EO__ROLE_SERVER);
    assert_int_equal(eo__auth_check(&a, "bearer  server-key-0123456789 ", &missing), EO__ROLE_SERVER);
    /* A prefix, an extension and a one-letter change all fail. */
    assert_int_equal(eo__auth_check(&a, "Bearer server-key-012345678", &missing), EO__ROLE_NONE);
    assert_false(missing);
    assert_int_equal(eo__auth_check(&a, "Bearer server-key-01234567890", &missing), EO__ROLE_NONE);
    assert_int_equal(eo__auth_check(&a, "Bearer server-key-0123456788", &missing), EO__ROLE_NONE);
    assert_int_equal(eo__auth_check(&a, NULL, &missing), EO__ROLE_NONE);
    assert_true(missing);
    assert_int_equal(eo__auth_check(&a, "Basic YWRtaW46eA==", &missing), EO__ROLE_NONE);
    assert_true(missing);
    assert_int_equal(eo__auth_check(&a, "Bearer ", &missing), EO__ROLE_NONE);
    assert_true(missing);
    char huge[400];
    memcpy(huge, "Bearer ", 7);
    memset(huge + 7, 'a', 300);
    huge[307] = '\0';
    assert_int_equal(eo__auth_check(&a, huge, &missing), EO__ROLE_NONE);
    eo__auth_clear(&a);
    assert_int_equal(a.server_len, 0);
    assert_int_equal(a.admin[0], 0);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    assert_int_equal(chmod(path, mode), 0);
}

static void test_keys_load(void **state)
{
    (void)state;
    char path[] = "/tmp/eo-keys-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unsetenv("EVENODDS_SERVER_KEY");
    unsetenv("EVENODDS_ADMIN_KEY");
    eo_service_keys k;
    char err[400];

    write_file(path, "# keys\n\nEVENODDS_SERVER_KEY=s123456789abcdef\n"
                     "export EVENODDS_ADMIN_KEY=\"a123456789abcdef\"\n", 0600);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), 0);
    assert_string_equal(k.server, "s123456789abcdef");
    assert_string_equal(k.admin, "a123456789abcdef"); /* quotes and "export" dropped */

    /* The environment overrides the file. */
    setenv("EVENODDS_ADMIN_KEY", "e123456789abcdef", 1);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), 0);
    assert_string_equal(k.admin, "e123456789abcdef");
    unsetenv("EVENODDS_ADMIN_KEY");

    /* Readable by others: refused, and the message says how to fix it, not the key. */
    chmod(path, 0640);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EINVAL);
    assert_non_null(strstr(err, "chmod 600"));
    assert_null(strstr(err, "s123456789abcdef"));
    assert_int_equal(k.server[0], 0);

    write_file(path, "EVENODDS_SERVER_KEY=s123456789abcdef\nEVENODDS_ADMIM_KEY=x\n", 0600);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EINVAL);
    assert_non_null(strstr(err, ":2: unknown setting"));

    /* 15 characters: one short. */
    write_file(path, "EVENODDS_SERVER_KEY=s123456789abcde\nEVENODDS_ADMIN_KEY=a123456789abcdef\n",
               0600);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EINVAL);
    assert_non_null(strstr(err, ":1: EVENODDS_SERVER_KEY"));
    assert_null(strstr(err, "s123456789abcde"));

    write_file(path, "EVENODDS_SERVER_KEY=same456789abcdef\nEVENODDS_ADMIN_KEY=same456789abcdef\n",
               0600);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EINVAL);
    assert_non_null(strstr(err, "differ"));

    write_file(path, "EVENODDS_SERVER_KEY=s123456789abcdef\n", 0600);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EINVAL);
    assert_non_null(strstr(err, "EVENODDS_ADMIN_KEY"));
    assert_null(strstr(err, "EVENODDS_SERVER_KEY"));

    assert_int_equal(eo_service_keys_load(NULL, &k, err, sizeof err), EO_EINVAL);
    unlink(path);
    assert_int_equal(eo_service_keys_load(path, &k, err, sizeof err), EO_EIO);
}

static void test_logfmt(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    eo__logger lg = {f, EO_LOG_INFO};
    eo__logline l;
    eo__log_begin(&l, EO_LOG_INFO, "request");
    eo__log_str(&l, "path", "/v1/pools/a b/players/x");
    eo__log_str(&l, "q", "say \"hi\"\\");
    eo__log_str(&l, "ctl", "a\x01");
    eo__log_str(&l, "empty", "");
    eo__log_int(&l, "status", 200);
    eo__log_ms(&l, "dur_ms", 1.23456);
    eo__log_end(&lg, EO_LOG_INFO, &l);
    eo__log_msg(&lg, EO_LOG_DEBUG, "hidden"); /* below the level */
    rewind(f);
    char line[1200];
    assert_non_null(fgets(line, sizeof line, f));
    assert_int_equal(strncmp(line, "ts=", 3), 0);
    assert_non_null(strstr(line, " level=info msg=request path=\"/v1/pools/a b/players/x\""
                                 " q=\"say \\\"hi\\\"\\\\\" ctl=\"a\\x01\" empty=\"\" status=200"
                                 " dur_ms=1.235\n"));
    assert_null(fgets(line, sizeof line, f));
    fclose(f);
}

static void test_metrics(void **state)
{
    (void)state;
    eo__metrics m;
    eo__metrics_init(&m);
    eo__match rounds;
    eo__route_match("POST", "/v1/pools/a/rounds", &rounds);
    /* 0.3 ms lands in le=0.0005 (0.00025 < 0.0003 <= 0.0005). */
    eo__metrics_request(&m, rounds.route, 200, 0.0003);
    eo__metrics_request(&m, rounds.route, 409, 0.002);
    eo__metrics_request(&m, -1, 418, 0.0);
    eo__metrics_commit(&m, 0.001, 3, 2, true);
    eo__metrics_commit(&m, 0.001, 1, 1, false);
    char *text;
    size_t len;
    assert_int_equal(eo__metrics_render(&m, NULL, NULL, &text, &len), 0);
    assert_int_equal(strlen(text), len);
    const char *want[] = {
        "evenodds_http_requests_total{route=\"/v1/pools/{pool}/rounds\",method=\"POST\",code=\"200\"} 1\n",
        "evenodds_http_requests_total{route=\"/v1/pools/{pool}/rounds\",method=\"POST\",code=\"409\"} 1\n",
        "evenodds_http_requests_total{route=\"unmatched\",method=\"\",code=\"other\"} 1\n",
        "evenodds_http_request_duration_seconds_bucket{route=\"/v1/pools/{pool}/rounds\",method=\"POST\",le=\"0.00025\"} 0\n",
        "evenodds_http_request_duration_seconds_bucket{route=\"/v1/pools/{pool}/rounds\",method=\"POST\",le=\"0.0005\"} 1\n",
        "evenodds_http_request_duration_seconds_bucket{route=\"/v1/pools/{pool}/rounds\",method=\"POST\",le=\"0.0025\"} 2\n",
        "evenodds_http_request_duration_seconds_count{route=\"/v1/pools/{pool}/rounds\",method=\"POST\"} 2\n",
        "evenodds_rounds_rated_total 2\n", /* the failed commit's round is not counted */
        "evenodds_commit_failures_total 1\n",
        "evenodds_commit_batch_size_bucket{le=\"1\"} 1\n",
        "evenodds_commit_batch_size_bucket{le=\"2\"} 1\n",
        "evenodds_commit_batch_size_bucket{le=\"4\"} 2\n",
        "evenodds_commit_batch_size_sum 4\n",
        "evenodds_commit_duration_seconds_count 2\n",
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (!strstr(text, want[i]))
            fprintf(stderr, "missing: %s", want[i]);
        assert_non_null(strstr(text, want[i]));
    }
    /* Routes never hit are left out. */
    assert_null(strstr(text, "route=\"/healthz\""));
    free(text);
}

static void test_pools_table(void **state)
{
    (void)state;
    eo__pools p;
    assert_int_equal(eo__pools_init(&p), 0);
    const char *names[] = {"mid", "alpha", "zulu", "beta", "a", "b", "c", "d", "e", "f"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        eo__pool_facts pi;
        memset(&pi, 0, sizeof pi);
        snprintf(pi.name, sizeof pi.name, "%s", names[i]);
        pi.id = (int64_t)i + 1;
        eo_pool_config_default(&pi.cfg);
        assert_int_equal(eo__pools_put(&p, &pi), 0);
    }
    eo__pool_facts pi;
    assert_int_equal(eo__pools_get(&p, "zulu", &pi), 0);
    assert_int_equal(pi.id, 3);
    assert_int_equal(eo__pools_get(&p, "zul", &pi), EO_ENOTFOUND);
    assert_non_null(pi.model); /* prepared when published */
    const eo_model_ctx *model = pi.model;
    pi.id = 99;
    assert_int_equal(eo__pools_put(&p, &pi), 0); /* a pool is fixed at creation: kept */
    eo__pool_facts *v;
    size_t n;
    assert_int_equal(eo__pools_list(&p, &v, &n), 0);
    assert_int_equal(n, 10);
    const char *sorted[] = {"a", "alpha", "b", "beta", "c", "d", "e", "f", "mid", "zulu"};
    for (size_t i = 0; i < n; i++)
        assert_string_equal(v[i].name, sorted[i]);
    assert_int_equal(v[9].id, 3);
    assert_ptr_equal(v[9].model, model);
    free(v);
    eo__pools_destroy(&p);
}

/* ---- ratings.c: the ratings splits read ------------------------------------------------- */

static void test_ratings_table(void **state)
{
    (void)state;
    eo__ratings *t;
    assert_int_equal(eo__ratings_new(&t), 0);
    const char *ids[] = {"a", "b", "c"};
    eo_strength st[3];
    bool found[3];
    assert_int_equal(eo__ratings_read(t, ids, 3, st, found), 0);
    assert_false(found[0] || found[1] || found[2]);
    eo__rating_set u[] = {{"a", true, 1000, 4}, {"b", true, 1100, 9}};
    assert_int_equal(eo__ratings_set(t, u, 2), 0);
    assert_int_equal(eo__ratings_read(t, ids, 3, st, found), 0);
    assert_true(found[0] && found[1] && !found[2]);
    assert_true(st[0].mu == 1000 && st[0].var == 4 && st[1].mu == 1100 && st[1].var == 9);
    /* In order, the last write of a player wins; a deleted row reads as not found. */
    eo__rating_set v[] = {{"a", true, 1200, 1}, {"b", false, 0, 0}, {"a", true, 1300, 2}};
    assert_int_equal(eo__ratings_set(t, v, 3), 0);
    assert_int_equal(eo__ratings_read(t, ids, 3, st, found), 0);
    assert_true(found[0] && !found[1] && !found[2]);
    assert_true(st[0].mu == 1300 && st[0].var == 2);
    /* Both copies hold every call: read again after one more (empty) and one more call. */
    assert_int_equal(eo__ratings_set(t, NULL, 0), 0);
    eo__rating_set w[] = {{"c", true, 900, 0}};
    assert_int_equal(eo__ratings_set(t, w, 1), 0);
    assert_int_equal(eo__ratings_read(t, ids, 3, st, found), 0);
    assert_true(found[0] && !found[1] && found[2]);
    assert_true(st[0].mu == 1300 && st[2].mu == 900);
    /* Many players: the copies grow. */
    static char many[5000][8];
    static eo__rating_set mu[5000];
    for (int i = 0; i < 5000; i++) {
        snprintf(many[i], sizeof many[i], "p%d", i);
        mu[i] = (eo__rating_set){many[i], true, i, 2.0 * i};
    }
    assert_int_equal(eo__ratings_set(t, mu, 5000), 0);
    for (int i = 0; i < 5000; i++) {
        const char *one = many[i];
        assert_int_equal(eo__ratings_read(t, &one, 1, st, found), 0);
        assert_true(found[0] && st[0].mu == i && st[0].var == 2.0 * i);
    }
    /* Switched off: readers go to the store, and it stays off. */
    eo__ratings_off(t);
    assert_int_equal(eo__ratings_read(t, ids, 3, st, found), EO_EBUSY);
    assert_int_equal(eo__ratings_set(t, w, 1), EO_EBUSY);
    assert_int_equal(eo__ratings_read(NULL, ids, 3, st, found), EO_EBUSY);
    eo__ratings_free(t);
    eo__ratings_free(NULL);
}

#define RT_PLAYERS 48

typedef struct rt_shared {
    eo__ratings *t;
    const char *ids[RT_PLAYERS];
    atomic_long published; /* the last value whose eo__ratings_set() returned */
    atomic_bool done;
    atomic_long reads, bad;
} rt_shared;

/* Reads every player again and again: all values of one read must come from one call (the
 * writer gives every player the same value per call), never older than what was published
 * before the read began. */
static void *rt_reader(void *arg)
{
    rt_shared *sh = arg;
    eo_strength st[RT_PLAYERS];
    bool found[RT_PLAYERS];
    while (!atomic_load(&sh->done)) {
        long before = atomic_load(&sh->published);
        if (eo__ratings_read(sh->t, sh->ids, RT_PLAYERS, st, found) != 0) {
            atomic_fetch_add(&sh->bad, 1);
            continue;
        }
        bool ok = before == 0 || (found[0] && st[0].mu >= (double)before);
        for (size_t i = 0; i < RT_PLAYERS; i++)
            ok = ok && found[i] == found[0] && (!found[i] || (st[i].mu == st[0].mu &&
                                                              st[i].var == st[0].mu));
        if (!ok)
            atomic_fetch_add(&sh->bad, 1);
        atomic_fetch_add(&sh->reads, 1);
    }
    return NULL;
}

/* The writer publishes while two readers read: each read is one call's values, and a value
 * is seen once its call returned. New players join as it goes, so the copies also grow
 * (rehash) while readers use the other one. */
static void test_ratings_concurrent(void **state)
{
    (void)state;
    static rt_shared sh;
    static char names[RT_PLAYERS][8], extra[4000][12];
    memset(&sh, 0, sizeof sh);
    assert_int_equal(eo__ratings_new(&sh.t), 0);
    for (size_t i = 0; i < RT_PLAYERS; i++) {
        snprintf(names[i], sizeof names[i], "p%zu", i);
        sh.ids[i] = names[i];
    }
    pthread_t th[2];
    for (int i = 0; i < 2; i++)
        assert_int_equal(pthread_create(&th[i], NULL, rt_reader, &sh), 0);
    eo__rating_set u[RT_PLAYERS + 1];
    for (long v = 1; v <= 4000; v++) {
        for (size_t i = 0; i < RT_PLAYERS; i++)
            u[i] = (eo__rating_set){sh.ids[i], true, (double)v, (double)v};
        snprintf(extra[v - 1], sizeof extra[v - 1], "x%ld", v);
        u[RT_PLAYERS] = (eo__rating_set){extra[v - 1], true, -1.0, 0.0};
        assert_int_equal(eo__ratings_set(sh.t, u, RT_PLAYERS + 1), 0);
        atomic_store(&sh.published, v);
        if (v % 500 == 0) /* let the readers in under any scheduler */
            sched_yield();
    }
    atomic_store(&sh.done, true);
    for (int i = 0; i < 2; i++)
        pthread_join(th[i], NULL);
    assert_int_equal(atomic_load(&sh.bad), 0);
    assert_true(atomic_load(&sh.reads) > 0);
    eo__ratings_free(sh.t);
}

/* One HTTP/1.1 request on its own connection to the in-process service; the status, and the
 * body in @p out. */
static int http_call(uint16_t port, const char *method, const char *path, const char *key,
                     const char *body, char *out, size_t cap)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    char req[1024];
    int n = snprintf(req, sizeof req,
                     "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                     "Content-Type: application/json\r\nContent-Length: %zu\r\n"
                     "Connection: close\r\n\r\n%s",
                     method, path, key, strlen(body), body);
    assert_true(n > 0 && (size_t)n < sizeof req);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
    assert_int_equal(send(fd, req, (size_t)n, MSG_NOSIGNAL), n);
    char resp[8192];
    size_t got = 0;
    ssize_t r;
    while (got < sizeof resp - 1 && (r = recv(fd, resp + got, sizeof resp - 1 - got, 0)) > 0)
        got += (size_t)r;
    resp[got] = '\0';
    close(fd);
    const char *b = strstr(resp, "\r\n\r\n");
    snprintf(out, cap, "%s", b ? b + 4 : "");
    return strncmp(resp, "HTTP/1.1 ", 9) == 0 ? (int)strtol(resp + 9, NULL, 10) : 0;
}

/* Splits read the published ratings; switched off (as after an out-of-memory), they read the
 * player rows from the store and answer the same. After a round (a, b beat c, d: 1036, 964)
 * and a set of a to 1500, with e new (1000), the least k = 2 gap benches a: b + c = 2000
 * against d + e = 1964, 36 (new players everywhere would give 0). */
static void test_splits_ratings_off(void **state)
{
    (void)state;
    char dir[] = "/tmp/eo-rt-XXXXXX", db[64];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    eo_service_keys keys;
    memset(&keys, 0, sizeof keys);
    snprintf(keys.server, sizeof keys.server, "server-key-0123456789");
    snprintf(keys.admin, sizeof keys.admin, "admin-key-0123456789");
    eo_service_config cfg;
    eo_service_config_default(&cfg);
    cfg.db = db;
    cfg.listen = "127.0.0.1:0";
    cfg.default_pool = "default";
    cfg.threads = 2;
    eo_service *svc = NULL;
    char err[256], on[4096], off[4096];
    assert_int_equal(eo_service_start(&cfg, &keys, &svc, err, sizeof err), 0);
    uint16_t port = eo_service_port(svc);
    assert_int_equal(http_call(port, "POST", "/v1/pools/default/rounds", keys.server,
                               "{\"id\":\"r1\",\"started_at\":1763800000,\"ended_at\":1763800391,"
                               "\"winner\":\"A\",\"A\":[\"a\",\"b\"],\"B\":[\"c\",\"d\"]}",
                               on, sizeof on),
                     200);
    assert_int_equal(http_call(port, "PUT", "/v1/pools/default/players/a", keys.admin,
                               "{\"rating\":1500}", on, sizeof on),
                     200);
    const char *split = "{\"players\":[\"a\",\"b\",\"c\",\"d\",\"e\"]}";
    assert_int_equal(http_call(port, "POST", "/v1/pools/default/splits", keys.server, split, on,
                               sizeof on),
                     200);
    if (strstr(on, "\"bench\":[\"a\"],\"gap\":36,") == NULL)
        fail_msg("%s", on);
    eo__pools_ratings_off(&svc->pools);
    assert_int_equal(http_call(port, "POST", "/v1/pools/default/splits", keys.server, split, off,
                               sizeof off),
                     200);
    assert_string_equal(off, on);
    assert_int_equal(eo_service_stop(svc), 0);
    const char *files[] = {"t.db", "t.db-wal", "t.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[96];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    assert_int_equal(rmdir(dir), 0);
}

/* Stopping with a zero drain timeout while updates are parked for the writer (in process, to
 * set drain_timeout_ms). Regression: the HTTP daemon was stopped as soon as the drain ended,
 * and libmicrohttpd aborts the process ("MHD_stop_daemon() called while we have suspended
 * connections") when a connection is still suspended. Now the stop waits for the writer to
 * hand every parked connection back; requests that come too late get 503 or no answer. */
static void test_stop_while_parked(void **state)
{
    (void)state;
    enum { CONNS = 16, ROUNDS = 10 };
    char dir[] = "/tmp/eo-stop-XXXXXX", db[64];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    eo_service_keys keys;
    memset(&keys, 0, sizeof keys);
    snprintf(keys.server, sizeof keys.server, "server-key-0123456789");
    snprintf(keys.admin, sizeof keys.admin, "admin-key-0123456789");
    eo_service_config cfg;
    eo_service_config_default(&cfg);
    cfg.db = db;
    cfg.listen = "127.0.0.1:0";
    cfg.default_pool = "default";
    cfg.threads = 2;
    cfg.drain_timeout_ms = 0;
    int answered = 0;
    for (int k = 0; k < ROUNDS; k++) {
        eo_service *svc = NULL;
        char err[256];
        assert_int_equal(eo_service_start(&cfg, &keys, &svc, err, sizeof err), 0);
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons(eo_service_port(svc));
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int fd[CONNS];
        for (int i = 0; i < CONNS; i++) {
            char body[300], req[800];
            int bn = snprintf(body, sizeof body,
                              "{\"id\":\"r%d_%d\",\"started_at\":1763800000,"
                              "\"ended_at\":1763800391,\"winner\":\"A\",\"A\":[\"a%d\",\"b%d\"],"
                              "\"B\":[\"c%d\",\"d%d\"]}",
                              k, i, i, i, i, i);
            int n = snprintf(req, sizeof req,
                             "POST /v1/pools/default/rounds HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Authorization: Bearer %s\r\nContent-Type: application/json\r\n"
                             "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                             keys.server, bn, body);
            fd[i] = socket(AF_INET, SOCK_STREAM, 0);
            assert_true(fd[i] >= 0);
            assert_int_equal(connect(fd[i], (struct sockaddr *)&sa, sizeof sa), 0);
            assert_int_equal(send(fd[i], req, (size_t)n, MSG_NOSIGNAL), n);
        }
        /* Stop as soon as an update is in the service's hands. */
        for (int i = 0; i < 2000 && atomic_load(&svc->inflight) == 0; i++) {
            struct timespec ts = {0, 100 * 1000};
            nanosleep(&ts, NULL);
        }
        assert_int_equal(eo_service_stop(svc), 0);
        for (int i = 0; i < CONNS; i++) {
            char resp[2048];
            size_t got = 0;
            ssize_t n;
            while (got < sizeof resp - 1 &&
                   (n = recv(fd[i], resp + got, sizeof resp - 1 - got, 0)) > 0)
                got += (size_t)n;
            resp[got] = '\0';
            close(fd[i]);
            int status = strncmp(resp, "HTTP/1.1 ", 9) == 0 ? (int)strtol(resp + 9, NULL, 10) : 0;
            assert_true(status == 0 || status == 200 || status == 503);
            answered += status != 0;
        }
    }
    print_message("stop while parked: %d of %d requests answered\n", answered, CONNS * ROUNDS);
    const char *files[] = {"t.db", "t.db-wal", "t.db-shm"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p[96];
        snprintf(p, sizeof p, "%s/%s", dir, files[i]);
        unlink(p);
    }
    assert_int_equal(rmdir(dir), 0);
}

static struct sockaddr_in6 v6(const char *text)
{
    struct sockaddr_in6 a;
    memset(&a, 0, sizeof a);
    a.sin6_family = AF_INET6;
    assert_int_equal(inet_pton(AF_INET6, text, &a.sin6_addr), 1);
    return a;
}

static struct sockaddr_in v4(uint32_t host)
{
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(host);
    return a;
}

#define SA(x) ((const struct sockaddr *)(const void *)&(x))

/* The guard's caps: IPv6 counted by /64, IPv4 (also mapped into IPv6) by the whole address,
 * the total; and its table, through many opens and closes in random order, always agreeing
 * with a plain count (docs/SERVICE.md "Connections and limits"). */
static void test_guard_caps(void **state)
{
    (void)state;
    eo__metrics m;
    eo__metrics_init(&m);
    eo__guard *g;
    eo__guard_config cfg = {.max_total = 300, .max_per_address = 2, .header_timeout_ms = 60000};
    assert_int_equal(eo__guard_start(&cfg, &m, NULL, &g), 0);
    struct sockaddr_in6 a1 = v6("2001:db8:1:2::1"), a2 = v6("2001:db8:1:2:ffff::9");
    struct sockaddr_in6 b = v6("2001:db8:1:3::1"), mapped = v6("::ffff:10.0.0.1");
    struct sockaddr_in plain = v4(0x0a000001), other = v4(0x0a000002);
    eo__gconn *c1 = eo__guard_open(g, -1, SA(a1), sizeof a1);
    eo__gconn *c2 = eo__guard_open(g, -1, SA(a2), sizeof a2);
    assert_false(eo__guard_admit(g, SA(a1), sizeof a1)); /* the same /64, full */
    assert_true(eo__guard_admit(g, SA(b), sizeof b));
    eo__gconn *c3 = eo__guard_open(g, -1, SA(plain), sizeof plain);
    eo__gconn *c4 = eo__guard_open(g, -1, SA(mapped), sizeof mapped); /* the same IPv4 host */
    assert_false(eo__guard_admit(g, SA(plain), sizeof plain));
    assert_true(eo__guard_admit(g, SA(other), sizeof other));
    assert_int_equal(atomic_load(&m.conn_refused[EO__REFUSE_ADDRESS]), 2);
    eo__guard_close(g, c1);
    assert_true(eo__guard_admit(g, SA(a2), sizeof a2));
    eo__guard_close(g, c2);
    eo__guard_close(g, c3);
    eo__guard_close(g, c4);
    assert_int_equal(atomic_load(&m.conn_open), 0);

    /* 280 connections over 100 addresses, opened and closed at random. */
    eo__gconn *open[280] = {0};
    int addr_of[280], count[100] = {0}, total = 0;
    srand(7);
    for (int step = 0; step < 20000; step++) {
        int i = rand() % 280;
        if (open[i]) {
            eo__guard_close(g, open[i]);
            open[i] = NULL;
            count[addr_of[i]]--, total--;
            continue;
        }
        int a = rand() % 100;
        struct sockaddr_in sa = v4(0x0b000000u + (uint32_t)a * 977u);
        bool fits = count[a] < 2 && total < 300;
        assert_int_equal(eo__guard_admit(g, SA(sa), sizeof sa), fits);
        if (fits) {
            open[i] = eo__guard_open(g, -1, SA(sa), sizeof sa);
            addr_of[i] = a;
            count[a]++, total++;
        }
    }
    assert_int_equal((int)atomic_load(&m.conn_open), total);
    for (int i = 0; i < 280; i++)
        eo__guard_close(g, open[i]);
    eo__guard_stop(g);
}

/* The total cap holds for connections without an IP address too. */
static void test_guard_total(void **state)
{
    (void)state;
    eo__metrics m;
    eo__metrics_init(&m);
    eo__guard *g;
    eo__guard_config cfg = {.max_total = 3, .max_per_address = 0, .header_timeout_ms = 60000};
    assert_int_equal(eo__guard_start(&cfg, &m, NULL, &g), 0);
    eo__gconn *c[3];
    for (int i = 0; i < 3; i++) {
        assert_true(eo__guard_admit(g, NULL, 0));
        c[i] = eo__guard_open(g, -1, NULL, 0);
    }
    assert_false(eo__guard_admit(g, NULL, 0));
    assert_int_equal(atomic_load(&m.conn_refused[EO__REFUSE_TOTAL]), 1);
    for (int i = 0; i < 3; i++)
        eo__guard_close(g, c[i]);
    assert_true(eo__guard_admit(g, NULL, 0));
    eo__guard_stop(g);
}

/* The route table and docs/openapi.yaml name the same paths and methods: each operation of
 * the document is a row, and each row an operation (read from the document's layout: a path
 * at two spaces of indent, its methods at four). */
static void test_routes_match_openapi(void **state)
{
    (void)state;
    const char *data = getenv("EO_TEST_DATA");
    assert_non_null(data);
    char path[1024], line[512], cur[256] = "";
    snprintf(path, sizeof path, "%s/../../docs/openapi.yaml", data);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    bool seen[EO__ROUTES_MAX] = {false};
    size_t ops = 0;
    bool in_paths = false;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "paths:", 6) == 0 || strncmp(line, "components:", 11) == 0)
            in_paths = line[0] == 'p';
        if (!in_paths)
            continue;
        if (line[0] == ' ' && line[1] == ' ' && line[2] == '/') {
            snprintf(cur, sizeof cur, "%.*s", (int)(strcspn(line + 2, ":")), line + 2);
            continue;
        }
        static const char *const methods[] = {"get", "post", "put", "delete", "patch"};
        for (size_t k = 0; k < sizeof methods / sizeof methods[0]; k++) {
            char want[16];
            snprintf(want, sizeof want, "    %s:", methods[k]);
            if (strncmp(line, want, strlen(want)) != 0)
                continue;
            ops++;
            bool found = false;
            for (size_t i = 0; i < eo__route_count; i++)
                if (strcasecmp(eo__routes[i].method, methods[k]) == 0 &&
                    strcmp(eo__routes[i].path, cur) == 0)
                    seen[i] = found = true;
            if (!found)
                fprintf(stderr, "openapi.yaml has %s %s, the route table does not\n",
                        methods[k], cur);
            assert_true(found);
        }
    }
    fclose(f);
    for (size_t i = 0; i < eo__route_count; i++) {
        if (!seen[i])
            fprintf(stderr, "the route table has %s %s, openapi.yaml does not\n",
                    eo__routes[i].method, eo__routes[i].path);
        assert_true(seen[i]);
    }
    assert_int_equal(ops, eo__route_count);
}

/* ---- the writer's stop code: only the final drain's failed commit counts ---------------- */

static void sql_exec(sqlite3 *db, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
        fail_msg("%s: %s", sql, msg ? msg : "?");
    sqlite3_free(msg);
}

/* A store with pool "arena" whose commits fail when they hold a round "commitfail": the
 * trigger's row breaks a deferred foreign key, which SQLite checks at COMMIT only. */
static eo_engine *commitfail_engine(const char *db)
{
    eo_engine *e = test_engine_open(db, 0);
    assert_non_null(e);
    eo_engine_error err;
    if (eo_engine_pool(e, "arena") == NULL) {
        assert_int_equal(eo_engine_pool_create(e, "arena", "synelo", NULL, 1763800000, &err), 0);
        sqlite3 *raw = NULL;
        assert_int_equal(sqlite3_open(db, &raw), SQLITE_OK);
        sqlite3_busy_timeout(raw, 5000);
        sql_exec(raw, "CREATE TABLE guard (pool INTEGER REFERENCES pools(id) DEFERRABLE "
                      "INITIALLY DEFERRED); CREATE TRIGGER commitfail AFTER INSERT ON log WHEN "
                      "NEW.round_id = 'commitfail' BEGIN INSERT INTO guard VALUES (-1); END");
        sqlite3_close(raw);
    }
    return e;
}

typedef struct wcall {
    eo__wreq w;
    eo_round_request round; /* decoded as the HTTP threads do */
    atomic_int done;
} wcall;

static void wcall_done(eo__wreq *w, void *ctx)
{
    (void)w;
    atomic_store(&((wcall *)ctx)->done, 1);
}

static void wcall_submit(eo__writer *wr, wcall *c, const char *id)
{
    char text[200];
    snprintf(text, sizeof text,
             "{\"id\":\"%s\",\"winner\":\"A\",\"A\":[\"%s-a\"],\"B\":[\"%s-b\"]}", id, id, id);
    memset(c, 0, sizeof *c);
    json_t *body = json_loads(text, 0, NULL);
    assert_non_null(body);
    assert_int_equal(eo_round_request_from_json(body, &c->round, NULL), 0);
    json_decref(body);
    c->w.kind = EO__W_ROUND;
    snprintf(c->w.pool, sizeof c->w.pool, "arena");
    c->w.u.round = &c->round;
    c->w.now = 1763800000;
    c->w.done = wcall_done;
    c->w.done_ctx = c;
    assert_int_equal(eo__writer_submit(wr, &c->w), 0);
}

static void nap(void)
{
    struct timespec ts = {0, 1000 * 1000};
    nanosleep(&ts, NULL);
}

static int wcall_wait(wcall *c)
{
    for (int i = 0; i < 10000 && !atomic_load(&c->done); i++)
        nap();
    assert_true(atomic_load(&c->done));
    eo_round_request_free(&c->round);
    free(c->w.resp);
    return c->w.status;
}

typedef struct stopper {
    eo__writer *wr;
    int rc;
} stopper;

static void *stop_main(void *p)
{
    stopper *s = p;
    s->rc = eo__writer_stop(s->wr);
    return NULL;
}

/* A failed commit answers its batch 500 and the writer goes on; stopping after it gives 0,
 * with or without a later good commit. Only a commit that fails in the drain itself (a batch
 * taken after the stop began: here the writer is held on the store's write lock until then)
 * makes the stop fail. */
static void test_writer_stop_code(void **state)
{
    (void)state;
    char dir[] = "/tmp/eo-wstop-XXXXXX", db[64];
    assert_non_null(mkdtemp(dir));
    snprintf(db, sizeof db, "%s/t.db", dir);
    eo__pools pools;
    eo__metrics m;
    eo__logger lg = {NULL, 0};
    assert_int_equal(eo__pools_init(&pools), 0);
    eo__metrics_init(&m);
    eo__writer *wr = NULL;
    assert_int_equal(eo__writer_start(commitfail_engine(db), NULL, &pools, &m, &lg, 64, 16, &wr),
                     0);
    wcall a, b;
    wcall_submit(wr, &a, "commitfail");
    assert_int_equal(wcall_wait(&a), 500);
    assert_string_equal(a.w.err.code, "storage");
    wcall_submit(wr, &b, "r1");
    assert_int_equal(wcall_wait(&b), 200);
    assert_int_equal(eo__writer_stop(wr), 0);
    /* nor when the failed commit was the last one before the stop */
    assert_int_equal(eo__writer_start(commitfail_engine(db), NULL, &pools, &m, &lg, 64, 16, &wr),
                     0);
    wcall_submit(wr, &a, "commitfail");
    assert_int_equal(wcall_wait(&a), 500);
    assert_int_equal(eo__writer_stop(wr), 0);

    assert_int_equal(eo__writer_start(commitfail_engine(db), NULL, &pools, &m, &lg, 64, 16, &wr),
                     0);
    sqlite3 *lock = NULL;
    assert_int_equal(sqlite3_open(db, &lock), SQLITE_OK);
    sql_exec(lock, "BEGIN IMMEDIATE");
    wcall_submit(wr, &a, "r2"); /* taken, then held in its begin by the lock */
    for (int i = 0; i < 10000 && atomic_load(&m.queue_depth) != 0; i++)
        nap();
    wcall_submit(wr, &b, "commitfail"); /* queued behind it */
    stopper st = {wr, -1};
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, stop_main, &st), 0);
    for (int i = 0; i < 10000 && eo__writer_running(wr); i++)
        nap();
    assert_false(eo__writer_running(wr));
    sql_exec(lock, "ROLLBACK");
    sqlite3_close(lock);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_int_equal(wcall_wait(&a), 200);
    assert_int_equal(wcall_wait(&b), 500);
    assert_int_equal(st.rc, EO_EIO);
    eo__pools_destroy(&pools);
    test_store_remove(db);
    assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pct_decode), cmocka_unit_test(test_route_match),
        cmocka_unit_test(test_auth),       cmocka_unit_test(test_keys_load),
        cmocka_unit_test(test_logfmt),     cmocka_unit_test(test_metrics),
        cmocka_unit_test(test_pools_table), cmocka_unit_test(test_stop_while_parked),
        cmocka_unit_test(test_ratings_table), cmocka_unit_test(test_ratings_concurrent),
        cmocka_unit_test(test_splits_ratings_off), cmocka_unit_test(test_writer_stop_code),
        cmocka_unit_test(test_guard_caps), cmocka_unit_test(test_guard_total),
        cmocka_unit_test(test_routes_match_openapi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
