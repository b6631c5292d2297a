/* Unit tests of the JSON text writer (src/codec/json_text.c): strings and reals read as jansson
 * writes them, whatever the buffer's room; a string near the buffer's maximum fails the buffer
 * only when the text itself would not fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "codec/json_text.h"
#include "evenodds/eo_common.h"
#include "prng.h"

/* jansson's text of the string @p s (malloc'd). */
static char *jansson_str(const char *s)
{
    json_t *v = json_string(s);
    assert_non_null(v);
    char *t = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
    json_decref(v);
    assert_non_null(t);
    return t;
}

/* Random strings of every byte class (plain, quotes, backslashes, control characters, UTF-8),
 * written after a prefix of random length so that each lands at another spot of the
 * allocation: the text is jansson's. */
static void test_strings_as_jansson(void **state)
{
    (void)state;
    static const char pool[] = "ab\"\\\x01\x1f\n\t\r\b\f z\xc3\xa9";
    prng r = {11};
    for (int it = 0; it < 3000; it++) {
        char s[64];
        size_t n = (size_t)below(&r, sizeof s);
        for (size_t i = 0; i < n; i++)
            s[i] = pool[below(&r, sizeof pool - 1)];
        s[n] = '\0';
        json_t *probe = json_string(s);
        if (probe == NULL) /* a split UTF-8 sequence: jansson refuses it, we do not */
            continue;
        json_decref(probe);
        eo__buf b;
        eo__buf_init(&b, 1 << 16);
        size_t pre = (size_t)below(&r, 200);
        for (size_t i = 0; i < pre; i++)
            (void)eo__buf_add(&b, "x", 1);
        eo__jt_str(&b, s);
        char *want = jansson_str(s);
        assert_int_equal(b.err, 0);
        assert_int_equal(b.len, pre + strlen(want));
        assert_string_equal(b.p + pre, want);
        free(want);
        eo__buf_free(&b);
    }
}

/* At the buffer's maximum: a string fits exactly when its text does, whatever room its worst
 * case would need, and one byte less fails the buffer with EO_ELIMIT. */
static void test_string_at_maximum(void **state)
{
    (void)state;
    const char *cases[] = {"abcdef", "a\"b", "\x01x", ""};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *want = jansson_str(cases[c]);
        size_t n = strlen(want);
        for (size_t pre = 0; pre < 4; pre++) {
            eo__buf b;
            eo__buf_init(&b, pre + n);
            for (size_t i = 0; i < pre; i++)
                (void)eo__buf_add(&b, "x", 1);
            eo__jt_str(&b, cases[c]);
            assert_int_equal(b.err, 0);
            assert_string_equal(b.p + pre, want);
            eo__buf_free(&b);
            eo__buf_init(&b, pre + n - 1);
            for (size_t i = 0; i < pre; i++)
                (void)eo__buf_add(&b, "x", 1);
            eo__jt_str(&b, cases[c]);
            assert_int_equal(b.err, EO_ELIMIT);
            eo__buf_free(&b);
        }
        free(want);
    }
}

/* Reals as jansson writes them at its default precision; integers; real9's rounding. */
static void test_numbers(void **state)
{
    (void)state;
    const double reals[] = {0.0, -0.0, 1.0, 0.1, 1e300, -2.5e-7, 123456789.125, 1e17, 3.0e-310};
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++) {
        eo__buf b;
        eo__buf_init(&b, 100);
        eo__jt_real(&b, reals[i]);
        json_t *v = json_real(reals[i]);
        char *want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
        assert_string_equal(b.p, want);
        free(want);
        json_decref(v);
        eo__buf_free(&b);
    }
    eo__buf b;
    eo__buf_init(&b, 200);
    eo__jt_int(&b, -9223372036854775807LL - 1);
    (void)eo__buf_add(&b, " ", 1);
    eo__jt_real9(&b, 72.0);
    (void)eo__buf_add(&b, " ", 1);
    eo__jt_real9(&b, -0.0000000004);
    (void)eo__buf_add(&b, " ", 1);
    eo__jt_real9(&b, 1.5e9);
    assert_string_equal(b.p, "-9223372036854775808 72 0 1500000000");
    eo__jt_real9(&b, 1.0 / 0.0);
    assert_int_equal(b.err, EO_EINVAL);
    eo__buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_strings_as_jansson),
        cmocka_unit_test(test_string_at_maximum),
        cmocka_unit_test(test_numbers),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
