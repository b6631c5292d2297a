/* End-to-end assertion helpers shared by tests/e2e/: they fail the running cmocka test. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
