/* Test helper: a model by name with its default parameters (eo_testlib). */
#ifndef EO_TEST_MODELS_H
#define EO_TEST_MODELS_H

#include "evenodds/eo_model.h"

/* The prepared model @p name ("synelo", "trueskill", …) with default parameters; fails the
 * running cmocka test when it cannot be made. The caller releases it (eo_model_release()). */
eo_model_ctx *test_model_named(const char *name);

#endif
