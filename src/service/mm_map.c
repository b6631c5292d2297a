/* A table from strings to pointers with removal, for the matchmaking state (mm.h): separate
 * chaining over a power-of-two array that doubles when it holds as many entries as buckets.
 * Keys come from clients, so the hash is seeded with a secret (hash.c). */
#include <stdlib.h>
#include <string.h>

#include "service/mm.h"
#include "service/service.h"

typedef struct node {
    struct node *next;
    uint64_t h;
    void *val;
    char key[]; /* NUL-terminated copy */
} node;

struct eo__smap {
    node **b;
    size_t nb, n;
    uint64_t seed;
};

eo__smap *eo__smap_new(uint64_t seed)
{
    eo__smap *m = calloc(1, sizeof *m);
    if (m == NULL || (m->b = calloc(16, sizeof *m->b)) == NULL) {
        free(m);
        return NULL;
    }
    m->nb = 16;
    m->seed = seed;
    return m;
}

void eo__smap_free(eo__smap *m)
{
    if (m == NULL)
        return;
    for (size_t i = 0; i < m->nb; i++)
        for (node *x = m->b[i], *next; x != NULL; x = next) {
            next = x->next;
            free(x);
        }
    free(m->b);
    free(m);
}

static node **slot(const eo__smap *m, const char *key, uint64_t h)
{
    node **p = &m->b[h & (m->nb - 1)];
    while (*p != NULL && ((*p)->h != h || strcmp((*p)->key, key) != 0))
        p = &(*p)->next;
    return p;
}

void *eo__smap_get(const eo__smap *m, const char *key)
{
    node *x = *slot(m, key, eo__hash_str(m->seed, key));
    return x ? x->val : NULL;
}

/* Doubles the buckets; on failure the table stays as it is (only slower). */
static void grow(eo__smap *m)
{
    size_t nb = m->nb * 2;
    node **b = calloc(nb, sizeof *b);
    if (b == NULL)
        return;
    for (size_t i = 0; i < m->nb; i++)
        for (node *x = m->b[i], *next; x != NULL; x = next) {
            next = x->next;
            x->next = b[x->h & (nb - 1)];
            b[x->h & (nb - 1)] = x;
        }
    free(m->b);
    m->b = b;
    m->nb = nb;
}

int eo__smap_put(eo__smap *m, const char *key, void *val)
{
    uint64_t h = eo__hash_str(m->seed, key);
    node **p = slot(m, key, h);
    if (*p != NULL) {
        (*p)->val = val;
        return 0;
    }
    size_t len = strlen(key);
    node *x = malloc(sizeof *x + len + 1);
    if (x == NULL)
        return EO_ENOMEM;
    x->next = NULL;
    x->h = h;
    x->val = val;
    memcpy(x->key, key, len + 1);
    *p = x;
    if (++m->n > m->nb)
        grow(m);
    return 0;
}

void eo__smap_del(eo__smap *m, const char *key)
{
    node **p = slot(m, key, eo__hash_str(m->seed, key));
    node *x = *p;
    if (x == NULL)
        return;
    *p = x->next;
    free(x);
    m->n--;
}

size_t eo__smap_size(const eo__smap *m)
{
    return m->n;
}

int eo__smap_each(const eo__smap *m, int (*fn)(void *ctx, const char *key, void *val), void *ctx)
{
    for (size_t i = 0; i < m->nb; i++)
        for (node *x = m->b[i]; x != NULL; x = x->next) {
            int rc = fn(ctx, x->key, x->val);
            if (rc != 0)
                return rc;
        }
    return 0;
}
