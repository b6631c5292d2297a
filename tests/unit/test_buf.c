/* Unit tests of the bounded growable buffer (src/core/buf.c): appends keep the text whole and
 * NUL-terminated, the maximum is exact, a failure is sticky and reported by take, and arrays
 * grow by eo__grow() without losing their elements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/buf.h"
#include "evenodds/eo_common.h"

static void test_appends(void **state)
{
    (void)state;
    eo__buf b;
    eo__buf_init(&b, 1 << 20);
    assert_null(b.p);
    assert_int_equal(eo__buf_str(&b, "ab"), 0);
    assert_int_equal(eo__buf_add(&b, "c\0d", 3), 0); /* bytes, NUL included */
    assert_int_equal(eo__buf_printf(&b, "%d-%s", 42, "x"), 0);
    assert_int_equal(b.len, 9);
    assert_memory_equal(b.p, "abc\0d42-x", 10); /* and the terminating NUL */
    for (int i = 0; i < 10000; i++) /* past many doublings */
        assert_int_equal(eo__buf_printf(&b, "%05d", i), 0);
    assert_int_equal(b.len, 9 + 50000);
    assert_memory_equal(b.p + 9 + 5 * 9999, "09999", 6);
    size_t len = 0;
    char *t = eo__buf_take(&b, &len);
    assert_non_null(t);
    assert_int_equal(len, 50009);
    assert_null(b.p); /* handed over: the buffer is empty again */
    assert_int_equal(b.len, 0);
    free(t);
}

static void test_maximum_is_sticky(void **state)
{
    (void)state;
    eo__buf b;
    eo__buf_init(&b, 8);
    assert_int_equal(eo__buf_str(&b, "12345678"), 0); /* exactly the maximum */
    assert_int_equal(b.len, 8);
    assert_int_equal(eo__buf_str(&b, "9"), EO_ELIMIT);
    assert_int_equal(eo__buf_str(&b, ""), EO_ELIMIT); /* sticky, even for nothing */
    assert_int_equal(eo__buf_printf(&b, "%d", 1), EO_ELIMIT);
    assert_string_equal(b.p, "12345678"); /* what fitted is intact */
    size_t len = 7;
    assert_null(eo__buf_take(&b, &len)); /* a failed text is not handed over */
    assert_int_equal(len, 0);
    eo__buf_init(&b, 4);
    assert_int_equal(eo__buf_printf(&b, "%s", "12345"), EO_ELIMIT);
    eo__buf_reset(&b); /* clears the error, keeps the memory */
    assert_int_equal(eo__buf_str(&b, "ok"), 0);
    assert_string_equal(b.p, "ok");
    eo__buf_free(&b);
    assert_null(b.p);
}

static void test_grow(void **state)
{
    (void)state;
    int64_t *v = NULL;
    size_t cap = 0;
    for (int64_t i = 0; i < 5000; i++) {
        int64_t *nv = eo__grow(v, &cap, (size_t)i + 1, sizeof *v);
        assert_non_null(nv);
        v = nv;
        assert_true(cap >= (size_t)i + 1);
        v[i] = i * i;
    }
    for (int64_t i = 0; i < 5000; i++)
        assert_int_equal(v[i], i * i);
    size_t before = cap;
    assert_ptr_equal(eo__grow(v, &cap, 10, sizeof *v), v); /* room already: unchanged */
    assert_int_equal(cap, before);
    assert_null(eo__grow(v, &cap, SIZE_MAX / 2, sizeof *v)); /* cannot be had */
    assert_int_equal(cap, before);                           /* and nothing changed */
    assert_int_equal(v[4999], 4999 * 4999);
    free(v);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_appends),
        cmocka_unit_test(test_maximum_is_sticky),
        cmocka_unit_test(test_grow),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
