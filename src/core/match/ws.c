/* The matcher's work space (eo_match.h): every array of a pass carved from one block that is
 * kept for the next pass, and the result's arrays (docs/MATCHMAKING.md, "Speed"). A pass over
 * 100,000 tickets on fresh memory spent a tenth of its time in the kernel's page faults. */
#include <stdlib.h>
#include <string.h>

#include "match_internal.h"

/* Each array starts on a cache line of its own. */
#define ALIGN 64

/* Grows @p ws's block to @p need bytes (its contents are not kept: a pass fills every array). */
static int reserve(eo_match_ws *ws, size_t need)
{
    if (need <= ws->cap)
        return 0;
    void *b = NULL;
    if (posix_memalign(&b, ALIGN, need) != 0)
        return EO_ENOMEM;
    free(ws->blk);
    ws->blk = b;
    ws->cap = need;
    return 0;
}

/* The arrays of a pass and their lengths in elements, in the order they are carved. */
typedef struct slot {
    void **at;
    size_t count, size;
} slot;

/* The carving of a block into the arrays @p s (0 or EO_ENOMEM): with @p base NULL only its
 * size, in *need. */
static int carve(slot *s, int ns, unsigned char *base, size_t *need)
{
    size_t off = 0;
    for (int i = 0; i < ns; i++) {
        if (s[i].count != 0 && s[i].size > (SIZE_MAX - off - ALIGN) / s[i].count)
            return EO_ENOMEM;
        if (base != NULL)
            *s[i].at = base + off; /* never NULL, so that a pass over no tickets is no case */
        off += (s[i].count * s[i].size + ALIGN - 1) / ALIGN * ALIGN;
    }
    *need = off ? off : ALIGN;
    return 0;
}

int eo__match_ws_arrays(eo_match_ws *ws, eo__mpass *p, eo__mread *rd)
{
    size_t n = p->n, nr = (size_t)p->c->nregions, nl = (size_t)p->nlists;
    size_t nfu = (size_t)p->c->nmaps * (size_t)(p->c->team_size + 1);
    if (nr != 0 && n > SIZE_MAX / sizeof(eo__mlink) / nl)
        return EO_ENOMEM;
    slot s[] = {
        {(void **)&p->rat, n, sizeof *p->rat},
        {(void **)&p->idx, n, sizeof *p->idx},
        {(void **)&p->age, n, sizeof *p->age},
        {(void **)&p->size, n, sizeof *p->size},
        {(void **)&p->taken, n, sizeof *p->taken},
        {(void **)&p->reach, nr ? n : 0, sizeof *p->reach},
        {(void **)&p->link, n * nl, sizeof *p->link},
        {(void **)&p->by_age, n, sizeof *p->by_age},
        {(void **)&p->at, n, sizeof *p->at},
        {(void **)&p->lat, n * nr, sizeof *p->lat},
        {(void **)&p->fu, nfu, sizeof *p->fu},
        /* read and sorted once, in the caller's order */
        {(void **)&rd->rat, n, sizeof *rd->rat},
        {(void **)&rd->key, n, sizeof *rd->key},
        {(void **)&rd->at, n, sizeof *rd->at},
        {(void **)&rd->size, n, sizeof *rd->size},
        {(void **)&rd->reach, nr ? n : 0, sizeof *rd->reach},
        {(void **)&rd->by_r, n, sizeof *rd->by_r},
        {(void **)&rd->by_age, n, sizeof *rd->by_age},
        {(void **)&rd->pos_of, n, sizeof *rd->pos_of},
        {(void **)&rd->item, n, sizeof *rd->item},
        {(void **)&rd->tmp, n, sizeof *rd->tmp},
        {(void **)&rd->coarse, n, sizeof *rd->coarse},
        {(void **)&rd->count, EO__MSORT_COUNTS, sizeof *rd->count},
    };
    int ns = (int)(sizeof s / sizeof s[0]);
    size_t need = 0;
    int rc = carve(s, ns, NULL, &need);
    if (rc == 0)
        rc = reserve(ws, need);
    if (rc == 0)
        rc = carve(s, ns, ws->blk, &need);
    return rc;
}

eo_match_ws *eo_match_ws_new(void)
{
    return calloc(1, sizeof(eo_match_ws));
}

void eo_match_ws_free(eo_match_ws *ws)
{
    if (ws == NULL)
        return;
    free(ws->blk);
    free(ws->p.ent);
    free(ws->p.mt);
    free(ws->p.fl);
    free(ws);
}
