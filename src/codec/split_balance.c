/* Balancer split requests (eo_codec.h): the shell between a decoded request and
 * eo_balance_solve() that the service and the CLI share: integer ratings from the model, the
 * tolerance on P(A) turned into rating units, the time budget into search nodes, and the
 * answer as JSON. */
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
    for (size_t i = 0; a->res != NULL && i < a->nres; i++)
        eo_balance_free(a->res[i]);
    free(a->res);
    free(a->split);
    free(a->epsilon);
    memset(a, 0, sizeof *a);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static int oom(eo_split_answer *out, eo_round_error *err)
{
    eo_split_answer_free(out);
    eo__fail(err, "", "out of memory");
    return EO_ENOMEM;
}

int eo_split_request_balance(eo_split_request *req, const eo_model_ctx *model,
                             const eo_strength *strength, eo_split_answer *out,
                             eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    if (req == NULL || !req->balance || model == NULL || strength == NULL || req->n < 2 ||
        req->n > EO_SPLIT_EXACT_MAX)
        return eo__fail(err, "", "not a balancer request");
    size_t n = req->n;
    int64_t unit = eo_model_split_unit(model);
    out->unit = unit;
    double var[EO_SPLIT_EXACT_MAX], rerr[EO_SPLIT_EXACT_MAX];
    for (size_t i = 0; i < n; i++) {
        req->players[i].rating = eo_model_split_rating(model, strength[i].mu);
        var[i] = strength[i].var > 0.0 ? strength[i].var : 0.0;
        /* negated: sorted ascending, the largest errors come first */
        rerr[i] = -fabs(strength[i].mu * (double)unit - (double)req->players[i].rating);
    }
    qsort(var, n, sizeof var[0], cmp_double);
    qsort(rerr, n, sizeof rerr[0], cmp_double);
    size_t count = req->k_min >= 2 && req->k_max >= req->k_min
                       ? (size_t)(req->k_max - req->k_min + 1)
                       : 0;
    out->count = count;
    if (count == 0)
        return 0;
    out->split = calloc(count, sizeof *out->split);
    out->epsilon = calloc(count, sizeof *out->epsilon);
    out->res = calloc(count, sizeof *out->res);
    if (!out->split || !out->epsilon || !out->res)
        return oom(out, err);
    int64_t *field = calloc(count, sizeof *field);
    if (!field)
        return oom(out, err);
    /* The tolerance and the field per k (the 2k smallest variances, the 2k largest rounding
     * errors): the same variance for both, so the field is worth in ratings what it is
     * worth in P(A) for those players. */
    size_t groups = 0;
    for (size_t c = 0; c < count; c++) {
        int k = req->k_min + (int)c;
        double vs = 0.0, slack = 0.0;
        for (int i = 0; i < 2 * k; i++) {
            vs += var[i];
            slack -= rerr[i];
        }
        out->epsilon[c] = eo_model_split_tolerance(model, req->epsilon, k, vs, unit, slack);
        field[c] = eo_model_field_units(model, req->field, k, vs, unit);
        groups += c == 0 || out->epsilon[c] != out->epsilon[c - 1] || field[c] != field[c - 1];
    }
    uint64_t work = (uint64_t)req->budget_ms * EO_SPLIT_NODES_PER_MS / groups;
    for (size_t c = 0; c < count;) {
        size_t e = c + 1;
        while (e < count && out->epsilon[e] == out->epsilon[c] && field[e] == field[c])
            e++;
        eo_balance_request br;
        memset(&br, 0, sizeof br);
        br.mode = req->mode;
        br.k_min = req->k_min + (int)c;
        br.k_max = req->k_min + (int)e - 1;
        br.epsilon = out->epsilon[c];
        br.field = field[c];
        br.allow_party_split = req->allow_party_split;
        br.allow_protected = req->allow_protected;
        br.work_limit = work > 0 ? work : 1;
        uint32_t bad = 0;
        eo_balance_result *r = NULL;
        int rc = eo_balance_solve(req->players, n, &br, &r, &bad);
        if (rc == EO_ENOMEM) {
            free(field);
            return oom(out, err);
        }
        if (rc != 0 || r->count != e - c) {
            free(field);
            eo_balance_free(r);
            eo_split_answer_free(out);
            /* The decoder checks what the core refuses; this is a safety net. */
            for (size_t i = 0; bad && i < n; i++)
                if (req->players[i].party == bad) {
                    char f[48];
                    snprintf(f, sizeof f, "players[%zu].party", i);
                    return eo__fail(err, f, "party \"%s\": %s", req->party_ids[bad - 1],
                                    eo_strerror(rc));
                }
            return eo__fail(err, "players", "%s", eo_strerror(rc ? rc : EO_EINVAL));
        }
        out->res[out->nres++] = r;
        for (size_t x = c; x < e; x++) {
            eo_balance_split *s = &r->split[x - c];
            if (s->err == 0)
                s->p_a = eo_model_predict_idx(model, strength, s->a, (size_t)s->k, s->b,
                                              (size_t)s->k, req->field);
            out->split[x] = s;
        }
        c = e;
    }
    free(field);
    return 0;
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

static json_t *split_json(const eo_balance_split *s, int64_t eps, const eo_split_request *req,
                          int64_t unit)
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
    json_t *t = json_object();
    if (t != NULL) {
        int b3 = json_object_set_new(t, "broken", json_integer(s->terms.broken));
        b3 |= json_object_set_new(t, "moves", json_integer(s->terms.moves));
        b3 |= json_object_set_new(t, "top2", json_integer(s->terms.top2));
        b3 |= json_object_set_new(t, "spread",
                                  json_real(s->terms.spread / ((double)unit * (double)unit)));
        b3 |= json_object_set_new(t, "denied", json_integer(s->terms.denied));
        b3 |= json_object_set_new(t, "bench_again", json_integer(s->terms.bench_again));
        b3 |= json_object_set_new(t, "dev", eo__json_scaled(s->dev, unit));
        if (b3) {
            json_decref(t);
            t = NULL;
        }
    }
    bad |= json_object_set_new(o, "terms", t);
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
    json_t *arr = NULL;
    json_t *root = eo__json_splits_root(&arr);
    if (root == NULL)
        return NULL;
    for (size_t i = 0; i < a->count; i++) {
        if (json_array_append_new(arr, split_json(a->split[i], a->epsilon[i], req, a->unit)) !=
            0) {
            json_decref(root);
            return NULL;
        }
    }
    return root;
}
