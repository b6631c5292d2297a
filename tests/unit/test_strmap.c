/* The interning map (src/core/strmap.c): its seed. Keys crafted to collide under one seed (found
 * here by search, as an attacker would offline) spread out under another; the indices and keys,
 * and so a pool's results, do not depend on the seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "core/strmap.h"
#include "evenodds/eo_pool.h"
#include "evenodds/eo_round.h"

#define CRAFTED 40
#define SLOTS 128 /* a map of 64 keys has 128 slots (load factor 1/2) */

/* CRAFTED keys "id<n>" whose hashes under seed 0 share the low 7 bits (one slot of 128). */
static void craft(char keys[CRAFTED][16])
{
    eo__strmap *m = eo__strmap_create(0);
    assert_non_null(m);
    uint64_t want = eo__strmap_hash(m, "id0", 3) & (SLOTS - 1);
    int found = 0;
    for (int n = 0; found < CRAFTED; n++) {
        char k[16];
        int len = snprintf(k, sizeof k, "id%d", n);
        if ((eo__strmap_hash(m, k, (size_t)len) & (SLOTS - 1)) == want)
            memcpy(keys[found++], k, (size_t)len + 1);
    }
    eo__strmap_destroy(m);
}

static void test_seed_spreads_crafted_keys(void **state)
{
    (void)state;
    char keys[CRAFTED][16];
    craft(keys);
    for (uint64_t seed = 1; seed <= 8; seed++) {
        eo__strmap *m = eo__strmap_create(seed * UINT64_C(0x9E3779B97F4A7C15));
        assert_non_null(m);
        int per_slot[SLOTS] = {0}, most = 0;
        for (int i = 0; i < CRAFTED; i++) {
            uint64_t h = eo__strmap_hash(m, keys[i], strlen(keys[i]));
            int c = ++per_slot[h & (SLOTS - 1)];
            most = c > most ? c : most;
        }
        /* 40 keys in 128 slots at random: 5 in one slot has probability below 1e-3 */
        assert_true(most < 5);
        eo__strmap_destroy(m);
    }
}

/* The same keys in the same order get the same indices under any seed, and lookups agree. */
static void test_indices_independent_of_seed(void **state)
{
    (void)state;
    char keys[CRAFTED][16];
    craft(keys);
    eo__strmap *a = eo__strmap_create(0), *b = eo__strmap_create(UINT64_C(0xdeadbeefcafef00d));
    assert_true(a != NULL && b != NULL);
    for (int i = 0; i < CRAFTED; i++) {
        size_t len = strlen(keys[i]);
        assert_int_equal(eo__strmap_insert(a, keys[i], len, eo__strmap_hash(a, keys[i], len)), i);
        assert_int_equal(eo__strmap_insert(b, keys[i], len, eo__strmap_hash(b, keys[i], len)), i);
    }
    for (int i = 0; i < CRAFTED; i++) {
        size_t len = strlen(keys[i]);
        assert_int_equal(eo__strmap_find(a, keys[i], len, eo__strmap_hash(a, keys[i], len)), i);
        assert_int_equal(eo__strmap_find(b, keys[i], len, eo__strmap_hash(b, keys[i], len)), i);
        assert_string_equal(eo__strmap_key(b, (uint32_t)i), keys[i]);
    }
    assert_int_equal(eo__strmap_find(b, "absent", 6, eo__strmap_hash(b, "absent", 6)), -1);
    eo__strmap_destroy(a);
    eo__strmap_destroy(b);
}

/* A pool rates the same rounds to the same ratings whatever its id seed. */
static void test_pool_results_independent_of_seed(void **state)
{
    (void)state;
    eo_pool *p[2];
    for (int s = 0; s < 2; s++) {
        eo_pool_config cfg;
        eo_pool_config_default(&cfg);
        cfg.id_seed = s ? UINT64_C(0x0123456789abcdef) : 0;
        assert_int_equal(eo_pool_create(&cfg, &p[s]), 0);
    }
    char keys[CRAFTED][16];
    craft(keys);
    for (int r = 0; r < 30; r++) {
        eo_member m[2][4];
        eo_round round;
        memset(m, 0, sizeof m);
        memset(&round, 0, sizeof round);
        for (int i = 0; i < 8; i++)
            m[i / 4][i % 4].id = keys[(r * 3 + i * 5) % CRAFTED];
        round.id = (char *)"r";
        round.team[0] = m[0];
        round.team[1] = m[1];
        round.n[0] = round.n[1] = 4;
        round.winner = r % 3 == 0 ? EO_WIN_B : EO_WIN_A;
        round.ended_at = 1000 + r * 60;
        for (int s = 0; s < 2; s++)
            assert_int_equal(eo_pool_apply(p[s], &round, NULL, NULL), 0);
    }
    for (int i = 0; i < CRAFTED; i++) {
        eo_rating_view va, vb;
        int fa = eo_pool_lookup(p[0], keys[i], 0, &va), fb = eo_pool_lookup(p[1], keys[i], 0, &vb);
        assert_int_equal(fa, fb);
        if (fa == 0)
            assert_memory_equal(&va, &vb, sizeof va);
    }
    eo_pool_destroy(p[0]);
    eo_pool_destroy(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_spreads_crafted_keys),
        cmocka_unit_test(test_indices_independent_of_seed),
        cmocka_unit_test(test_pool_results_independent_of_seed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
