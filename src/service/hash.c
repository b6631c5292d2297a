/* Seeded hashing for the service's tables keyed by what clients send (ids, addresses): a
 * slot depends on a secret drawn per table, so colliding keys cannot be searched offline. */
#include <stdint.h>

#include "service/service.h"

/* FNV-1a from a seeded basis, then splitmix64's finaliser, so that every bit of the seed and
 * of the key reaches the low bits that pick the slot. */
static uint64_t finish(uint64_t h)
{
    h ^= h >> 30;
    h *= UINT64_C(0xbf58476d1ce4e5b9);
    h ^= h >> 27;
    h *= UINT64_C(0x94d049bb133111eb);
    return h ^ (h >> 31);
}

uint64_t eo__hash_str(uint64_t seed, const char *s)
{
    uint64_t h = 1469598103934665603u ^ seed;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211u;
    return finish(h);
}

uint64_t eo__hash_bytes(uint64_t seed, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t h = 1469598103934665603u ^ seed;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211u;
    return finish(h);
}
