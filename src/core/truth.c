/* The truth of a simulated world and the oracle's P_true of a round from it (eo_sim.h). The
 * codec reads the truth file into it (src/codec/truth_json.c); the sum below is the
 * simulator's, so a simulated round gets its P_true to the bit (docs/SIM.md "Files"). */
#include "evenodds/eo_sim.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/round_internal.h" /* eo__fail */
#include "core/strmap.h"

/* Ids interned to dense indices, one value each, room for @c cap. */
typedef struct named {
    eo__strmap *ids;
    double *val;
    size_t cap;
} named;

struct eo_truth {
    double scale;
    double presence;    /* π, logits per unit of presence */
    bool times_ignored; /* every member weighs 1 */
    named players, maps;
};

static int named_init(named *m, size_t cap)
{
    m->ids = eo__strmap_create();
    m->val = malloc((cap > 0 ? cap : 1) * sizeof *m->val); /* malloc(0) may return NULL */
    m->cap = cap;
    return m->ids != NULL && m->val != NULL ? 0 : EO_ENOMEM;
}

int eo_truth_create(double scale, size_t players, size_t maps, eo_truth **out)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    if (!(isfinite(scale) && scale > 0.0))
        return EO_EINVAL;
    eo_truth *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    t->scale = scale;
    int rc = named_init(&t->players, players);
    if (rc == 0)
        rc = named_init(&t->maps, maps);
    if (rc != 0) {
        eo_truth_destroy(t);
        return rc;
    }
    *out = t;
    return 0;
}

void eo_truth_destroy(eo_truth *t)
{
    if (t == NULL)
        return;
    eo__strmap_destroy(t->players.ids);
    eo__strmap_destroy(t->maps.ids);
    free(t->players.val);
    free(t->maps.val);
    free(t);
}

/* The index of @p id, or -1. */
static int64_t find(const named *m, const char *id, size_t len)
{
    return eo__strmap_find(m->ids, id, len, eo__strmap_hash(id, len));
}

static int add(named *m, const char *id, size_t len, double v)
{
    if (id == NULL || !isfinite(v))
        return EO_EINVAL;
    uint64_t h = eo__strmap_hash(id, len);
    if (eo__strmap_find(m->ids, id, len, h) >= 0)
        return EO_EEXIST;
    size_t n = eo__strmap_size(m->ids);
    if (n == m->cap)
        return EO_ELIMIT;
    if (eo__strmap_insert(m->ids, id, len, h) < 0)
        return EO_ENOMEM;
    m->val[n] = v;
    return 0;
}

int eo_truth_add_player(eo_truth *t, const char *id, size_t len, double skill)
{
    return t == NULL ? EO_EINVAL : add(&t->players, id, len, skill);
}

int eo_truth_add_map(eo_truth *t, const char *id, size_t len, double bias)
{
    return t == NULL ? EO_EINVAL : add(&t->maps, id, len, bias);
}

int eo_truth_set_terms(eo_truth *t, double presence, bool times_ignored)
{
    if (t == NULL || !(fabs(presence) <= 100.0))
        return EO_EINVAL;
    t->presence = presence;
    t->times_ignored = times_ignored;
    return 0;
}

bool eo_truth_has_player(const eo_truth *t, const char *id, size_t len)
{
    return find(&t->players, id, len) >= 0;
}

bool eo_truth_has_map(const eo_truth *t, const char *id, size_t len)
{
    return find(&t->maps, id, len) >= 0;
}

size_t eo_truth_player_count(const eo_truth *t)
{
    return eo__strmap_size(t->players.ids);
}

size_t eo_truth_map_count(const eo_truth *t)
{
    return eo__strmap_size(t->maps.ids);
}

int eo_truth_p(const eo_truth *t, const eo_round *r, double *p_a, eo_round_error *err)
{
    double bias = 0.0;
    if (r->map != NULL) {
        int64_t k = find(&t->maps, r->map, strlen(r->map));
        if (k < 0) {
            eo__fail(err, "map", "map '%s' is not in the truth file", r->map);
            return EO_ENOTFOUND;
        }
        bias = t->maps.val[k];
    }
    /* The simulator's order: each team's sum over its members in order, then the difference,
     * so the oracle of a simulated round is its P_true to the bit. */
    double sum[2] = {0.0, 0.0}, pres[2] = {0.0, 0.0};
    for (int s = 0; s < 2; s++) {
        for (size_t i = 0; i < r->n[s]; i++) {
            const eo_member *m = &r->team[s][i];
            int64_t k = find(&t->players, m->id, strlen(m->id));
            if (k < 0) {
                char f[32];
                snprintf(f, sizeof f, "%c[%zu]", s == 0 ? 'A' : 'B', i);
                eo__fail(err, f, "player '%s' is not in the truth file", m->id);
                return EO_ENOTFOUND;
            }
            double w = t->times_ignored ? 1.0 : eo_round_member_weight(r, m);
            sum[s] += w * t->players.val[k];
            pres[s] += w;
        }
    }
    *p_a = eo_sim_p_true(sum[0] - sum[1], t->scale,
                         eo_sim_true_field(bias, t->presence, pres[0] - pres[1]));
    return 0;
}
