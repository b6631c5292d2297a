/* A split answer as JSON (eo_codec.h): a plain request's splits, or a balancer request's answers
 * per k with their moves, terms and per-k errors. eo_app_split() (src/app/split.c) makes them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec_util.h"
#include "evenodds/eo_codec.h"

void eo_split_answer_free(eo_split_answer *a)
{
    if (a == NULL)
        return;
    if (!a->splits_borrowed)
        eo_splits_free(a->splits);
    for (size_t i = 0; a->res != NULL && i < a->nres; i++)
        eo_balance_free(a->res[i]);
    free(a->res);
    free(a->split);
    free(a->epsilon);
    memset(a, 0, sizeof *a);
}

static const char *side_name(uint8_t s)
{
    return s == EO_BALANCE_A ? "A" : s == EO_BALANCE_B ? "B" : "bench";
}

static json_t *error_of(const eo_balance_split *s, const eo_split_request *req)
{
    json_t *e = json_object();
    if (e == NULL)
        return NULL;
    char msg[192];
    int bad = 0;
    if (s->err == EO_EINVAL && s->bad_party > 0 && s->bad_party <= req->nparty) {
        const char *name = req->party_ids[s->bad_party - 1];
        size_t first = 0, size = 0;
        for (size_t i = req->n; i-- > 0;)
            if (req->players[i].party == s->bad_party) {
                first = i;
                size++;
            }
        char f[48];
        snprintf(f, sizeof f, "players[%zu].party", first);
        snprintf(msg, sizeof msg, "party \"%.100s\" has %zu players, more than k = %d", name,
                 size, s->k);
        bad |= json_object_set_new(e, "code", json_string("party_too_large"));
        bad |= json_object_set_new(e, "field", json_string(f));
        bad |= json_object_set_new(e, "party", json_string(name));
    } else {
        snprintf(msg, sizeof msg, "no split of this size: the locks, protected players and "
                                  "parties leave none");
        bad |= json_object_set_new(e, "code", json_string("no_split"));
    }
    bad |= json_object_set_new(e, "message", json_string(msg));
    if (bad) {
        json_decref(e);
        return NULL;
    }
    return e;
}

/* {"broken","moves","top2","spread","spread_sd","denied","bench_again","dev"}: an answer's
 * terms or the bound the search proved, on the model's scale. NULL when out of memory. */
static json_t *terms_json(const eo_balance_terms *tm, int64_t unit)
{
    json_t *t = json_object();
    if (t == NULL)
        return NULL;
    double u = (double)unit;
    int bad = json_object_set_new(t, "broken", json_integer(tm->broken));
    bad |= json_object_set_new(t, "moves", json_integer(tm->moves));
    bad |= json_object_set_new(t, "top2", json_integer(tm->top2));
    bad |= json_object_set_new(t, "spread", json_real(tm->spread / (u * u)));
    bad |= json_object_set_new(t, "spread_sd", json_real(tm->spread_sd / u));
    bad |= json_object_set_new(t, "denied", json_integer(tm->denied));
    bad |= json_object_set_new(t, "bench_again", json_integer(tm->bench_again));
    bad |= json_object_set_new(t, "dev", eo__json_scaled(tm->dev, unit));
    if (bad) {
        json_decref(t);
        return NULL;
    }
    return t;
}

static json_t *split_json(const eo_balance_split *s, int64_t eps, int64_t spread_eps,
                          const eo_split_request *req, int64_t unit)
{
    json_t *o = json_object();
    if (o == NULL)
        return NULL;
    int bad = json_object_set_new(o, "k", json_integer(s->k));
    if (s->err != 0) {
        bad |= json_object_set_new(o, "error", error_of(s, req));
        if (bad) {
            json_decref(o);
            return NULL;
        }
        return o;
    }
    const char *const *ids = (const char *const *)req->ids;
    bad |= json_object_set_new(o, "A", eo__json_id_array(s->a, (size_t)s->k, ids));
    bad |= json_object_set_new(o, "B", eo__json_id_array(s->b, (size_t)s->k, ids));
    bad |= json_object_set_new(o, "bench", eo__json_id_array(s->bench, s->nbench, ids));
    bad |= json_object_set_new(o, "gap", eo__json_scaled(s->gap, unit));
    bad |= json_object_set_new(o, "p_a", isnan(s->p_a) ? json_null() : json_real(s->p_a));
    bad |= json_object_set_new(o, "dev", eo__json_scaled(s->dev, unit));
    bad |= json_object_set_new(o, "epsilon", eo__json_scaled(eps, unit));
    bad |= json_object_set_new(o, "spread_epsilon", eo__json_scaled(spread_eps, unit));
    bad |= json_object_set_new(o, "exact", json_boolean(s->exact));
    bad |= json_object_set_new(o, "parties_broken", json_integer(s->terms.broken));
    json_t *moves = json_array();
    for (size_t i = 0; moves != NULL && i < s->nmoves; i++) {
        const eo_balance_move *m = &s->moves[i];
        json_t *mo = json_object();
        int b2 = mo == NULL;
        if (mo != NULL) {
            b2 |= json_object_set_new(mo, "id", json_string(ids[m->player]));
            b2 |= json_object_set_new(mo, "from", json_string(side_name(m->from)));
            b2 |= json_object_set_new(mo, "to", json_string(side_name(m->to)));
        }
        if (b2 || json_array_append_new(moves, mo) != 0) {
            if (b2)
                json_decref(mo);
            json_decref(moves);
            moves = NULL;
        }
    }
    bad |= json_object_set_new(o, "moves", moves);
    bad |= json_object_set_new(o, "terms", terms_json(&s->terms, unit));
    bad |= json_object_set_new(o, "bound", terms_json(&s->bound, unit));
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *eo_split_answer_to_json(const eo_split_answer *a, const eo_split_request *req)
{
    if (a == NULL || req == NULL || a->unit < 1 || (a->count > 0 && a->split == NULL))
        return NULL;
    if (a->splits != NULL)
        return eo_splits_to_json(a->splits, (const char *const *)req->ids, a->unit);
    json_t *arr = NULL;
    json_t *root = eo__json_splits_root(&arr);
    if (root == NULL)
        return NULL;
    for (size_t i = 0; i < a->count; i++) {
        if (json_array_append_new(arr, split_json(a->split[i], a->epsilon[i], a->spread_epsilon,
                                                  req, a->unit)) != 0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
