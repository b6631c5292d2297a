/* End-to-end assertion helpers shared by tests/e2e/: they fail the running cmocka test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>
#include <jansson.h>

#include "e2e.h"

void e2e_path(const e2e_server *s, const char *name, char *out, size_t cap)
{
    assert_true(snprintf(out, cap, "%s/%s", s->dir, name) < (int)cap);
}

void e2e_create_pool(const e2e_server *s, const char *body)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, "POST", "/v1/pools", s->admin_key, body, &r), 0);
    if (r.status != 201)
        fail_msg("POST /v1/pools %s: %ld %s", body, r.status, r.body);
    e2e_resp_free(&r);
}

int e2e_run_stdout(const char *args, const char *out)
{
    const char *bin = getenv("EO_BIN");
    assert_non_null(bin);
    char cmd[4096];
    assert_true(snprintf(cmd, sizeof cmd, "'%s' %s > '%s'", bin, args, out) < (int)sizeof cmd);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    return WEXITSTATUS(st);
}

void e2e_expect_usage(const char *cmd, const char *args, const char *input, const char *errfile,
                      const char *says)
{
    char line[4096];
    assert_true(snprintf(line, sizeof line, "'%s' %s %s '%s' 2> '%s' > /dev/null", getenv("EO_BIN"),
                         cmd, args, input, errfile) < (int)sizeof line);
    int rc = system(line);
    assert_true(rc != -1 && WIFEXITED(rc));
    char *msg = e2e_slurp(errfile, NULL);
    if (WEXITSTATUS(rc) != 2 || strstr(msg, says) == NULL)
        fail_msg("%s %s: exit %d, %s", cmd, args, WEXITSTATUS(rc), msg);
    free(msg);
}

void e2e_post_lines(const e2e_server *s, const char *pool, const char *path, size_t from,
                    size_t to)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char url[200];
    static char line[65536];
    snprintf(url, sizeof url, "/v1/pools/%s/rounds", pool);
    size_t n = 0;
    e2e_resp r;
    while (n < to && fgets(line, sizeof line, f)) {
        if (n++ < from)
            continue;
        assert_int_equal(e2e_call(s, "POST", url, s->server_key, line, &r), 0);
        if (r.status != 200)
            fail_msg("%s: %ld %s", url, r.status, r.body);
        e2e_resp_free(&r);
    }
    fclose(f);
    assert_int_equal(n, to);
}

void e2e_expect_error(const e2e_server *s, const char *method, const char *path,
                      const char *key, const char *body, long status, const char *code,
                      const char *field)
{
    e2e_resp r;
    assert_int_equal(e2e_call(s, method, path, key, body, &r), 0);
    if (r.status != status || !e2e_is_error(&r, code))
        fail_msg("%s %s %s: %ld %s", method, path, body ? body : "", r.status, r.body);
    if (field != NULL) {
        json_t *o = e2e_json(&r);
        const char *f = json_string_value(json_object_get(json_object_get(o, "error"), "field"));
        if (f == NULL || strcmp(f, field) != 0)
            fail_msg("%s: field %s, expected %s", r.body, f ? f : "(none)", field);
        json_decref(o);
    }
    e2e_resp_free(&r);
}

char *e2e_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n >= 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len != NULL)
        *len = (size_t)n;
    return buf;
}

size_t e2e_expect_lookups(const e2e_server *s, const char *pool, const char *ratings,
                          const char *const *keys)
{
    FILE *f = fopen(ratings, "r");
    assert_non_null(f);
    char line[4096];
    size_t players = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t je;
        json_t *want = json_loads(line, 0, &je);
        assert_non_null(want);
        const char *id = json_string_value(json_object_get(want, "id"));
        assert_non_null(id);
        char path[512];
        assert_true(snprintf(path, sizeof path, "/v1/pools/%s/players/%s", pool, id) <
                    (int)sizeof path);
        e2e_resp r;
        assert_int_equal(e2e_call(s, "GET", path, s->server_key, NULL, &r), 0);
        assert_int_equal(r.status, 200);
        json_t *got = e2e_json(&r);
        assert_non_null(got);
        const char *key;
        json_t *v;
        json_object_foreach(want, key, v) {
            bool listed = keys == NULL;
            for (size_t i = 0; keys != NULL && keys[i] != NULL && !listed; i++)
                listed = strcmp(keys[i], key) == 0;
            if (listed && !json_equal(v, json_object_get(got, key)))
                fail_msg("pool %s, player %s, \"%s\": service %s, expected %s", pool, id, key,
                         r.body, line);
        }
        json_decref(got);
        json_decref(want);
        e2e_resp_free(&r);
        players++;
    }
    fclose(f);
    return players;
}
