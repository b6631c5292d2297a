/* Secret seeds for tables keyed by what clients send (ids, addresses): the shells draw them, the
 * core takes them as parameters (the pool's id table, eo_pool_config.id_seed). */
#ifndef EO_ENGINE_SEED_H
#define EO_ENGINE_SEED_H

#include <stdint.h>

/* A secret seed: 8 bytes of the kernel's random source (the clock and @p addr if it has none). */
uint64_t eo__seed_fresh(const void *addr);

#endif
