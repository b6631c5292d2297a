/* Interning string map: see strmap.h. */
#include "core/strmap.h"

#include <stdlib.h>
#include <string.h>

/* A slot: idx1 0 is empty, otherwise index+1, the key itself (so a hit costs one miss for
 * the slot and one for the key's bytes, not a third for an index-to-key table) and a tag: the
 * key's length (longer keys than 254 bytes share the value 255) in the low byte and 24 bits of
 * the hash above it, so a probe compares key bytes almost only on a real match. */
typedef struct slot {
    uint32_t tag;
    uint32_t idx1;
    const char *key;
} slot;

#define CHUNK_BYTES 65536

typedef struct chunk {
    struct chunk *next;
    size_t used;
    size_t cap;
    char data[];
} chunk;

struct eo__strmap {
    uint64_t seed;
    slot *slots;
    size_t mask;     /* slots - 1, a power of two minus one */
    size_t n;
    const char **keys; /* n keys, in index order */
    size_t keys_cap;
    chunk *chunks;
};

eo__strmap *eo__strmap_create(uint64_t seed)
{
    eo__strmap *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->seed = seed;
    m->slots = calloc(64, sizeof *m->slots);
    if (m->slots == NULL) {
        free(m);
        return NULL;
    }
    m->mask = 63;
    return m;
}

void eo__strmap_destroy(eo__strmap *m)
{
    if (m == NULL)
        return;
    for (chunk *c = m->chunks; c != NULL;) {
        chunk *next = c->next;
        free(c);
        c = next;
    }
    free(m->keys);
    free(m->slots);
    free(m);
}

/* Eight bytes at a time with a multiply-xorshift mix: ids are short, and a byte-wise hash
 * such as FNV would cost more than the rest of a lookup. The value never reaches any result
 * (the pool orders players by id, not by hash), so its byte order does not matter. The seed is
 * the starting state: each step maps (state xor word) one to one, so whether two keys meet
 * depends on the states the seed leads to. */
uint64_t eo__strmap_hash(const eo__strmap *m, const char *key, size_t len)
{
    const uint64_t mul = 0x9E3779B97F4A7C15u;
    uint64_t h = 0x243F6A8885A308D3u ^ m->seed ^ (len * mul);
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t w;
        memcpy(&w, key + i, 8);
        h = (h ^ w) * mul;
        h ^= h >> 32;
    }
    if (i < len) {
        /* The tail byte by byte: a memcpy of variable length becomes a library call. */
        uint64_t w = 0;
        for (size_t j = 0; i + j < len; j++)
            w |= (uint64_t)(unsigned char)key[i + j] << (8 * j);
        h = (h ^ w) * mul;
        h ^= h >> 32;
    }
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9u;
    h ^= h >> 32;
    return h;
}

static uint32_t tag_of(uint64_t hash, size_t len)
{
    return (uint32_t)(hash >> 40) << 8 | (uint32_t)(len < 255 ? len : 255);
}

void eo__strmap_prefetch(const eo__strmap *m, uint64_t hash)
{
    __builtin_prefetch(&m->slots[(size_t)hash & m->mask]);
}

/* Equal bytes, for keys of the same length: eight at a time, as ids are short and a call to
 * memcmp would cost more than the comparison. */
static int same_bytes(const char *a, const char *b, size_t len)
{
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            return 0;
    }
    for (; i < len; i++)
        if (a[i] != b[i])
            return 0;
    return 1;
}

int64_t eo__strmap_find(const eo__strmap *m, const char *key, size_t len, uint64_t hash)
{
    uint32_t tag = tag_of(hash, len);
    for (size_t i = (size_t)hash & m->mask;; i = (i + 1) & m->mask) {
        slot s = m->slots[i];
        if (s.idx1 == 0)
            return -1;
        if (s.tag == tag) {
            /* Equal tags with len < 255 mean equal lengths, so the bytes compare in bounds;
             * from 255 on strncmp stops at the stored key's end. */
            const char *k = s.key;
            if (len < 255 ? same_bytes(k, key, len)
                          : strncmp(k, key, len) == 0 && k[len] == '\0')
                return (int64_t)s.idx1 - 1;
        }
    }
}

static void place(slot *slots, size_t mask, uint64_t hash, uint32_t tag, uint32_t idx1,
                  const char *key)
{
    size_t i = (size_t)hash & mask;
    while (slots[i].idx1 != 0)
        i = (i + 1) & mask;
    slots[i].tag = tag;
    slots[i].idx1 = idx1;
    slots[i].key = key;
}

/* Doubles the table; the full hash is recomputed from the stored key because the slot keeps
 * only its high half. */
static int grow(eo__strmap *m)
{
    size_t cap = (m->mask + 1) * 2;
    slot *slots = calloc(cap, sizeof *slots);
    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        size_t len = strlen(m->keys[i]);
        uint64_t h = eo__strmap_hash(m, m->keys[i], len);
        place(slots, cap - 1, h, tag_of(h, len), (uint32_t)i + 1, m->keys[i]);
    }
    free(m->slots);
    m->slots = slots;
    m->mask = cap - 1;
    return 0;
}

int eo__strmap_reserve(eo__strmap *m, size_t extra, size_t bytes)
{
    if (extra > UINT32_MAX - 2 - m->n)
        return -1;
    size_t need = m->n + extra;
    /* Load factor at most 1/2 keeps probes short. */
    while (need * 2 > m->mask + 1) {
        if (grow(m) != 0)
            return -1;
    }
    if (need > m->keys_cap) {
        size_t cap = m->keys_cap ? m->keys_cap : 64;
        while (cap < need)
            cap *= 2;
        const char **keys = realloc(m->keys, cap * sizeof *keys);
        if (keys == NULL)
            return -1;
        m->keys = keys;
        m->keys_cap = cap;
    }
    chunk *c = m->chunks;
    if (bytes > 0 && (c == NULL || c->cap - c->used < bytes)) {
        size_t cap = bytes > CHUNK_BYTES ? bytes : CHUNK_BYTES;
        chunk *nc = malloc(sizeof *nc + cap);
        if (nc == NULL)
            return -1;
        nc->next = c;
        nc->used = 0;
        nc->cap = cap;
        m->chunks = nc;
    }
    return 0;
}

int64_t eo__strmap_insert(eo__strmap *m, const char *key, size_t len, uint64_t hash)
{
    if (eo__strmap_reserve(m, 1, len + 1) != 0)
        return -1;
    chunk *c = m->chunks;
    char *copy = c->data + c->used;
    memcpy(copy, key, len);
    copy[len] = '\0';
    c->used += len + 1;
    m->keys[m->n] = copy;
    place(m->slots, m->mask, hash, tag_of(hash, len), (uint32_t)m->n + 1, copy);
    return (int64_t)m->n++;
}

/* Removing the newest keys by emptying their slots is safe with linear probing and no
 * deletions: an older key's probe path never crossed a slot that was filled after it, and
 * grow() re-places keys in index order, which keeps that true. */
void eo__strmap_truncate(eo__strmap *m, size_t n)
{
    while (m->n > n) {
        uint32_t idx1 = (uint32_t)m->n;
        const char *k = m->keys[idx1 - 1];
        uint64_t h = eo__strmap_hash(m, k, strlen(k));
        for (size_t i = (size_t)h & m->mask;; i = (i + 1) & m->mask) {
            if (m->slots[i].idx1 == idx1) {
                m->slots[i].idx1 = 0;
                m->slots[i].tag = 0;
                m->slots[i].key = NULL;
                break;
            }
        }
        m->n--;
    }
}

const char *eo__strmap_key(const eo__strmap *m, uint32_t index)
{
    return m->keys[index];
}

size_t eo__strmap_size(const eo__strmap *m)
{
    return m->n;
}
