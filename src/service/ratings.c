/* The ratings splits read (docs/SERVICE.md, "Ratings for splits"): per pool, every player's
 * mean and variance as of the last commit, kept by the writer and read by the HTTP threads
 * without a lock and without waiting for the writer.
 *
 * Left-right: two copies of the table. Readers use the active one; the writer changes the
 * other (which no reader uses), makes it the active one, waits until no reader is left in the
 * old one (a reader stays only for its lookups, ~1 us) and makes the same changes there. Both
 * copies therefore hold the state after some whole batch, and a reader sees one copy from
 * start to end: every rating of a request from the same commit. A reader announces itself in
 * the count of the copy it read as active, then reads the active index again; if it changed,
 * it leaves and starts over, since the writer may already have seen that count at 0. All
 * atomics are sequentially consistent, so the writer's "active = new" comes before its "count
 * of old == 0" in one total order, and a reader counted after that load must read the new
 * index; the count's decrement (a release) orders the reader's lookups before the writer's
 * later changes, and the index store (a release) orders the writer's changes before the
 * lookups of readers that load it (an acquire).
 *
 * Out of memory while changing a copy leaves the table switched off for good (readers then
 * use the store, as before): the other copy may lack the change, and it is simpler to never
 * switch back than to rebuild.
 *
 * Ids come from game servers: the slot of an id depends on a secret seed drawn when the table
 * is made, so ids that crowd one run of slots cannot be searched for offline. */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "service/service.h"

typedef struct rt_entry {
    char *id; /* owned; NULL: an empty slot */
    uint64_t hash;
    bool known; /* false: the player's row was deleted (reads as not found) */
    double mu, var;
} rt_entry;

/* One copy: open addressing with linear probing, capacity a power of 2, at most half full. */
typedef struct rt_copy {
    rt_entry *v;
    size_t cap, n;
} rt_copy;

struct eo__ratings {
    rt_copy copy[2];
    atomic_int active;     /* the copy readers use */
    atomic_long inside[2]; /* readers counted in each copy */
    atomic_bool off;       /* switched off: readers use the store */
    uint64_t seed;         /* secret, per table: the ids' slots (eo__hash_str) */
};

static const rt_entry *find(const rt_copy *c, const char *id, uint64_t h)
{
    if (c->cap == 0)
        return NULL;
    for (size_t i = h & (c->cap - 1);; i = (i + 1) & (c->cap - 1)) {
        const rt_entry *e = &c->v[i];
        if (e->id == NULL)
            return NULL;
        if (e->hash == h && strcmp(e->id, id) == 0)
            return e;
    }
}

static int grow(rt_copy *c)
{
    size_t ncap = c->cap ? c->cap * 2 : 64;
    rt_entry *nv = calloc(ncap, sizeof *nv);
    if (nv == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < c->cap; i++) {
        if (c->v[i].id == NULL)
            continue;
        size_t j = c->v[i].hash & (ncap - 1);
        while (nv[j].id != NULL)
            j = (j + 1) & (ncap - 1);
        nv[j] = c->v[i];
    }
    free(c->v);
    c->v = nv;
    c->cap = ncap;
    return 0;
}

static int set(rt_copy *c, const eo__rating_set *u, uint64_t h)
{
    rt_entry *e = (rt_entry *)find(c, u->id, h);
    if (e == NULL) {
        if ((c->n + 1) * 2 > c->cap && grow(c) != 0)
            return EO_ENOMEM;
        size_t len = strlen(u->id) + 1;
        size_t i = h & (c->cap - 1);
        while (c->v[i].id != NULL)
            i = (i + 1) & (c->cap - 1);
        e = &c->v[i];
        if ((e->id = malloc(len)) == NULL)
            return EO_ENOMEM;
        memcpy(e->id, u->id, len);
        e->hash = h;
        c->n++;
    }
    e->known = u->known;
    e->mu = u->mu;
    e->var = u->var;
    return 0;
}

static int set_all(rt_copy *c, uint64_t seed, const eo__rating_set *u, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (set(c, &u[i], eo__hash_str(seed, u[i].id)) != 0)
            return EO_ENOMEM;
    return 0;
}

int eo__ratings_new(eo__ratings **out)
{
    eo__ratings *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    atomic_init(&t->active, 0);
    atomic_init(&t->inside[0], 0);
    atomic_init(&t->inside[1], 0);
    atomic_init(&t->off, false);
    t->seed = eo__seed_fresh(t);
    *out = t;
    return 0;
}

void eo__ratings_free(eo__ratings *t)
{
    if (t == NULL)
        return;
    for (int c = 0; c < 2; c++) {
        for (size_t i = 0; i < t->copy[c].cap; i++)
            free(t->copy[c].v[i].id);
        free(t->copy[c].v);
    }
    free(t);
}

void eo__ratings_off(eo__ratings *t)
{
    atomic_store(&t->off, true);
}

int eo__ratings_set(eo__ratings *t, const eo__rating_set *u, size_t n)
{
    if (atomic_load(&t->off))
        return EO_EBUSY;
    if (n == 0)
        return 0;
    int old = atomic_load(&t->active), next = 1 - old;
    /* No reader uses the other copy: the last call (or none) waited for them to leave. */
    if (set_all(&t->copy[next], t->seed, u, n) != 0) {
        atomic_store(&t->off, true);
        return EO_ENOMEM;
    }
    atomic_store(&t->active, next);
    while (atomic_load(&t->inside[old]) != 0)
        sched_yield();
    if (set_all(&t->copy[old], t->seed, u, n) != 0) {
        atomic_store(&t->off, true);
        return EO_ENOMEM;
    }
    return 0;
}

int eo__ratings_read(eo__ratings *t, const char *const *ids, size_t n, eo_strength *out,
                     bool *found)
{
    if (t == NULL || atomic_load(&t->off))
        return EO_EBUSY;
    int c;
    for (;;) {
        c = atomic_load(&t->active);
        atomic_fetch_add(&t->inside[c], 1);
        if (atomic_load(&t->active) == c)
            break;
        atomic_fetch_sub(&t->inside[c], 1); /* the writer turned to it meanwhile */
    }
    const rt_copy *cp = &t->copy[c];
    for (size_t i = 0; i < n; i++) {
        const rt_entry *e = find(cp, ids[i], eo__hash_str(t->seed, ids[i]));
        found[i] = e != NULL && e->known;
        if (found[i]) {
            out[i].mu = e->mu;
            out[i].var = e->var;
        }
    }
    atomic_fetch_sub(&t->inside[c], 1);
    return 0;
}
