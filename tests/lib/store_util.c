/* Test helpers: an engine on a real SQLite file (store_util.h). */
#include "store_util.h"

#include <stdio.h>
#include <unistd.h>

void test_store_remove(const char *path)
{
    char p[512];
    unlink(path);
    snprintf(p, sizeof p, "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof p, "%s-shm", path);
    unlink(p);
}

eo_engine *test_engine_open(const char *path, unsigned flags)
{
    eo_store *s = NULL;
    char msg[256] = "";
    if (eo_store_open(path, flags, &s, msg, sizeof msg) != 0) {
        fprintf(stderr, "%s\n", msg);
        return NULL;
    }
    eo_engine *e = NULL;
    eo_engine_error err;
    if (eo_engine_open(s, &e, &err) != 0) {
        fprintf(stderr, "engine: %s\n", err.message);
        return NULL;
    }
    return e;
}
