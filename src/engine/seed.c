/* Secret seeds (seed.h). */
#include "engine/seed.h"

#include <stdint.h>
#include <sys/random.h>
#include <time.h>

uint64_t eo__seed_fresh(const void *addr)
{
    uint64_t s = 0;
    if (getrandom(&s, sizeof s, GRND_NONBLOCK) == (ssize_t)sizeof s)
        return s;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)addr;
}
