/* Test helper: a model by name with its default parameters (models.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "models.h"

eo_model_ctx *test_model_named(const char *name)
{
    eo_model m;
    eo_model_config cfg;
    eo_model_ctx *ctx = NULL;
    assert_int_equal(eo_model_parse(name, &m), 0);
    assert_int_equal(eo_model_config_default(m, &cfg), 0);
    assert_int_equal(eo_model_prepare(&cfg, &ctx, NULL), 0);
    return ctx;
}
