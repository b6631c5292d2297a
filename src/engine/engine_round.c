/* One round through the engine: idempotency on the round id, the model, the answer, the log. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_internal.h"
#include "evenodds/eo_codec.h"

/* A round id already in the log: the same content answers as before, other content conflicts. */
static int replay(eo_engine *e, const eo__stored_pool *p, const char *round_id, const char *canon,
                  char **response, int *replayed, eo_engine_error *err)
{
    char *body = NULL, *resp = NULL;
    int rc = eo_store_round_find(e->store, p->id, round_id, &body, &resp);
    if (rc == EO_ENOTFOUND)
        return EO_ENOTFOUND;
    if (rc)
        return eo_engine_fail(err, EO_OP_ROUND, EO_EIO, "",
                              "%s", eo_store_errmsg(e->store));
    if (strcmp(body, canon) != 0) {
        free(body);
        free(resp);
        return eo_engine_fail(err, EO_OP_ROUND, EO_ECONFLICT, "id",
                              "round \"%.60s\" was reported before with different content",
                              round_id);
    }
    free(body);
    if (resp == NULL)
        return eo_engine_fail(err, EO_OP_ROUND, EO_EIO, "",
                              "round \"%.60s\" is logged without its answer", round_id);
    *response = resp;
    *replayed = 1;
    return 0;
}

/* 422 out_of_range for a round eo_pool_apply_checked() refused at member @p bad. */
static int out_of_range(const eo__stored_pool *p, const eo_round *r, size_t bad,
                        const eo_member_result *m, eo_engine_error *err)
{
    const eo_model_ctx *model = eo_pool_model(p->pool);
    eo_model_range range;
    eo_model_range_of(model, &range);
    char field[32];
    bool on_a = bad < r->n[0];
    snprintf(field, sizeof field, "%s[%zu]", on_a ? "A" : "B", on_a ? bad : bad - r->n[0]);
    const char *name = eo_model_name(eo_model_ctx_config(model)->model);
    if (isfinite(m->mu) && !(m->mu >= range.lo && m->mu <= range.hi))
        return eo_engine_fail(err, EO_OP_ROUND, EO_ERANGE, field,
                              "player \"%.40s\": the round would move the mean to %.17g, "
                              "outside [%.17g, %.17g], the range of model \"%s\"",
                              m->id, m->mu, range.lo, range.hi, name);
    return eo_engine_fail(err, EO_OP_ROUND, EO_ERANGE, field,
                          "player \"%.40s\": the round would give a value that is not a finite "
                          "number (model \"%s\"); it was not rated",
                          m->id, name);
}

/* The new round: model, answer, log entry, player rows. Any failure after the model has rated
 * it leaves memory and store apart: the caller undoes the call or fails the batch. */
static int apply_new(eo_engine *e, eo__stored_pool *p, const eo_round *r, const char *canon,
                     int64_t now, char **response, bool *mutated, eo_engine_error *err)
{
    eo_round_result res;
    size_t bad = 0;
    int rc = eo_pool_apply_checked(p->pool, r, &res, e->members, &bad);
    if (rc == 0)
        *mutated = p->touched = true;
    if (rc == EO_ERANGE) /* the pool is unchanged on every error */
        return out_of_range(p, r, bad, &e->members[bad], err);
    if (rc)
        return eo_engine_fail(err, EO_OP_ROUND,
                              rc == EO_EINVAL   ? EO_EINVAL
                              : rc == EO_ENOMEM ? EO_ENOMEM
                                                : EO_EINTERNAL,
                              "", "%s", eo_strerror(rc));
    char *resp = NULL;
    const eo_model_ctx *model = eo_pool_model(p->pool);
    rc = eo_round_answer_text(r->id, e->members, res.n, eo_model_integer_display(model),
                              eo_model_has_deviation(model), &resp);
    if (rc)
        return eo_engine_fail(err, EO_OP_ROUND, EO_ENOMEM, "", "out of memory");
    int64_t seq = 0;
    rc = eo_store_log_append(e->store, p->id, EO_LOG_ROUND, r->id, canon, resp, now, &seq);
    if (rc == 0) /* the members' rows, and the round in the read indexes */
        rc = eo__engine_index_round(e, p, r, res.p_a, e->members, seq, now);
    if (rc) {
        free(resp);
        return eo_engine_fail(err, EO_OP_ROUND, EO_EIO, "",
                              "%s", eo_store_errmsg(e->store));
    }
    *response = resp;
    return 0;
}

int eo_engine_round_request(eo_engine *e, const char *pool, const eo_round_request *q,
                            int64_t now, char **response, int *replayed, eo_engine_error *err)
{
    if (response != NULL)
        *response = NULL;
    if (replayed != NULL)
        *replayed = 0;
    if (e == NULL || pool == NULL || q == NULL || q->canon == NULL || response == NULL ||
        replayed == NULL)
        return eo_engine_fail(err, EO_OP_ROUND, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL;
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    bool own = false;
    rc = eo__engine_op_begin(e, &own, err);
    if (rc)
        return rc;
    bool mutated = false;
    /* The lookup sees this batch's own uncommitted rounds, so an id repeated inside one batch
     * is answered like one repeated across batches. */
    rc = replay(e, p, q->round.id, q->canon, response, replayed, err);
    /* The length cap applies to new rounds only: a round logged before it, sent again, still
     * gets its first answer. */
    if (rc == EO_ENOTFOUND && q->text_rc != 0)
        rc = eo_engine_fail(err, EO_OP_ROUND, EO_EINVAL, q->text_err.field, "%s",
                            q->text_err.message);
    else if (rc == EO_ENOTFOUND)
        rc = apply_new(e, p, &q->round, q->canon, now, response, &mutated, err);
    rc = eo__engine_op_end(e, own, rc, mutated, mutated ? p : NULL, err);
    if (rc && *response != NULL) {
        free(*response);
        *response = NULL;
        *replayed = 0;
    }
    return rc;
}

int eo_engine_round(eo_engine *e, const char *pool, const json_t *round, int64_t now,
                    char **response, int *replayed, eo_engine_error *err)
{
    if (response != NULL)
        *response = NULL;
    if (replayed != NULL)
        *replayed = 0;
    if (e == NULL || pool == NULL || round == NULL)
        return eo_engine_fail(err, EO_OP_ROUND, EO_EINTERNAL, "", "missing argument");
    eo__stored_pool *p = NULL; /* an unknown pool is told before a bad round */
    int rc = eo__engine_target(e, pool, &p, err);
    if (rc)
        return rc;
    eo_round_request q;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    rc = eo_round_request_from_json(round, &q, &rerr);
    if (rc == EO_ENOMEM)
        return eo_engine_fail(err, EO_OP_ROUND, EO_ENOMEM, "", "out of memory");
    if (rc)
        return eo_engine_fail(err, EO_OP_ROUND, EO_EINVAL, rerr.field, "%s", rerr.message);
    rc = eo_engine_round_request(e, pool, &q, now, response, replayed, err);
    eo_round_request_free(&q);
    return rc;
}
