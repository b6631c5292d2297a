/* Test helpers for tests that run the engine on a real SQLite file (eo_testlib). */
#ifndef EO_TEST_STORE_UTIL_H
#define EO_TEST_STORE_UTIL_H

#include "evenodds/eo_engine.h"

/* Removes the SQLite file at @p path and its -wal and -shm files. */
void test_store_remove(const char *path);

/* Opens the store at @p path (created if needed; eo_store_open() @p flags) and an engine over
 * it, folding every pool; NULL on failure, with the reason on stderr (so that cmocka setups
 * and benchmarks can use it too). */
eo_engine *test_engine_open(const char *path, unsigned flags);

#endif
