/* An interning map from strings to dense indices 0, 1, 2, ... in insertion order (internal).
 *
 * Open addressing with linear probing over slots that cache each key's 32-bit hash tag, so a
 * probe compares a key's bytes only when the tags agree. Keys are copied into chunks that never
 * move, so eo__strmap_key() pointers stay valid for the map's life. No deletion: a pool never
 * forgets a player (a reset keeps the slot). */
#ifndef EO_STRMAP_H
#define EO_STRMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct eo__strmap eo__strmap;

/* Returns NULL when out of memory. @p seed picks the hash function: where the keys come from
 * clients (a pool's player ids), the shell draws a secret one (eo_pool_config.id_seed), so that
 * colliding keys cannot be searched offline; the map's indices and keys, and so every result,
 * do not depend on it. */
eo__strmap *eo__strmap_create(uint64_t seed);
void eo__strmap_destroy(eo__strmap *m);

/* Hash of @p len bytes of @p key under @p m's seed (for eo__strmap_find / eo__strmap_insert). */
uint64_t eo__strmap_hash(const eo__strmap *m, const char *key, size_t len);

/* Starts loading the slot where a lookup of @p hash begins (a hint; no effect on results), so
 * the lookups of a whole round can overlap their cache misses. */
void eo__strmap_prefetch(const eo__strmap *m, uint64_t hash);

/* Index of the key, or -1. */
int64_t eo__strmap_find(const eo__strmap *m, const char *key, size_t len, uint64_t hash);

/* Adds a key known to be absent; returns its new index (= the old size) or -1 when out of
 * memory (then the map is unchanged). */
int64_t eo__strmap_insert(eo__strmap *m, const char *key, size_t len, uint64_t hash);

/* Makes room so that @p extra inserts with keys of @p bytes in all (each len + 1) cannot fail.
 * Returns 0 or -1 (out of memory; the map's content is unchanged). */
int eo__strmap_reserve(eo__strmap *m, size_t extra, size_t bytes);

/* Forgets the keys with index >= @p n (the newest ones), e.g. to undo a failed operation. Their
 * bytes stay in the chunks until the map is destroyed. */
void eo__strmap_truncate(eo__strmap *m, size_t n);

/* The stored copy of key @p index (NUL-terminated). */
const char *eo__strmap_key(const eo__strmap *m, uint32_t index);

size_t eo__strmap_size(const eo__strmap *m);

#endif
