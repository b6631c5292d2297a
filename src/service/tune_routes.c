/* The handlers of a pool's re-tune (docs/SERVICE.md "Tuning a pool"): POST
 * /v1/pools/{pool}/tune starts a background search (tune.c) and answers 202; GET shows its
 * progress or, once done, the held-out comparison of the start and the answer; POST
 * /v1/pools/{pool}/tune/apply hands the answer to the writer, which folds the pool's log again
 * under it (eo_engine_pool_configure()). Their rows are in the route table (routes.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_tune.h"
#include "service/service.h"

/* 503 with Retry-After. */
static void busy(eo__answer *a, const char *code, const char *message, const char *retry)
{
    a->retry_after = retry;
    eo__answer_error(a, 503, code, message, NULL);
}

eo__run eo__tune_post(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a) || eo__route_optional_body(c, a))
        return EO__RUN_DONE;
    eo_tune_request req;
    eo_request_error rerr;
    if (eo_tune_request_from_json(c->json, &req, &rerr) != 0) {
        eo__answer_error(a, 400, rerr.code, rerr.message, rerr.field);
        return EO__RUN_DONE;
    }
    /* The knobs are checked here, so that a typo is a 400 and not a failed job. */
    eo_tune_config tc;
    eo_tune_config_default(&tc);
    tc.nknobs = req.nknobs;
    for (size_t i = 0; i < req.nknobs; i++)
        tc.knobs[i] = req.knobs[i];
    eo_round_error kerr;
    memset(&kerr, 0, sizeof kerr);
    if (eo_tune_check(&pi.cfg, &tc, &kerr) != 0) {
        eo__answer_error(a, 400, "invalid_request", kerr.message, "knobs");
        return EO__RUN_DONE;
    }
    if (atomic_load(&c->svc->draining)) {
        busy(a, "draining", "the service is shutting down", "1");
        return EO__RUN_DONE;
    }
    int64_t id = 0;
    int rc = eo__tune_start(c->svc, &pi, &req, &id);
    if (rc == EO_EEXIST)
        eo__answer_error(a, 409, "tune_running",
                         "a tune of this pool is running; GET this path for its progress", NULL);
    else if (rc == EO_ELIMIT)
        busy(a, "overloaded", "a tune of another pool is running (one at a time); retry later",
             "30");
    else if (rc == EO_EBUSY)
        busy(a, "draining", "the service is shutting down", "1");
    else if (rc != 0)
        eo__answer_error(a, 500, "internal", eo_strerror(rc), NULL);
    else
        eo__answer_json(
            a, 202,
            json_pack("{s:I,s:s,s:s}", "job", (json_int_t)id, "pool", pi.name, "state", "running"));
    return EO__RUN_DONE;
}

eo__run eo__tune_get(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    json_t *o = eo__tune_status(&c->svc->tunes, &pi);
    if (o == NULL)
        eo__answer_error(a, 404, "no_tune", "this pool has had no tune since the service started",
                         NULL);
    else
        eo__answer_json(a, 200, o);
    return EO__RUN_DONE;
}

/* The apply's body: none, or {"job": N}, the job the caller looked at. 0, or -1 with 400. */
static int apply_job(const json_t *o, int64_t *job, eo__answer *a)
{
    const char *key;
    json_t *v;
    *job = 0;
    if (o == NULL)
        return 0;
    json_object_foreach((json_t *)o, key, v)
    {
        if (strcmp(key, "job") != 0) {
            eo__answer_error(a, 400, "invalid_request", "unknown field (job)", key);
            return -1;
        }
        if (!json_is_integer(v) || json_integer_value(v) < 1) {
            eo__answer_error(a, 400, "invalid_request", "expected a job id (an integer >= 1)",
                             "job");
            return -1;
        }
        *job = (int64_t)json_integer_value(v);
    }
    return 0;
}

/* Why the last job of pool @p pi cannot be applied (the answer in @p a), or 0 with *out. */
static int applicable(eo__call *c, const eo__pool_facts *pi, int64_t job, eo__tune_outcome *out,
                      eo__answer *a)
{
    int rc = eo__tune_answer(&c->svc->tunes, pi->name, job, out);
    if (rc == EO_ENOTFOUND)
        eo__answer_error(a, 404, "no_tune", "this pool has had no tune since the service started",
                         NULL);
    else if (rc == EO_ECONFLICT)
        eo__answer_error(a, 409, "tune_replaced", "that job is not the pool's last tune", "job");
    else if (rc == EO_EBUSY)
        eo__answer_error(a, 409, "tune_running", "the tune is still running", NULL);
    else if (rc != 0)
        eo__answer_error(a, 409, "tune_failed", "the tune failed; GET this pool's tune for why",
                         NULL);
    else if (!out->chose_best)
        eo__answer_error(a, 409, "nothing_to_apply",
                         "the tune kept the pool's parameters: its answer did not beat the gate",
                         NULL);
    else if (eo__pool_config_same(&pi->cfg, &out->chosen))
        eo__answer_error(a, 409, "already_applied", "the pool has these parameters", NULL);
    else if (!eo__pool_config_same(&pi->cfg, &out->start))
        eo__answer_error(a, 409, "stale_tune",
                         "the pool's parameters changed since the tune started; tune again", NULL);
    else
        return 0;
    return -1;
}

eo__run eo__tune_apply(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    int64_t job = 0;
    if (eo__need_pool(c, &pi, a) || eo__route_optional_body(c, a) ||
        apply_job(c->json, &job, a) != 0)
        return EO__RUN_DONE;
    eo__tune_outcome out;
    if (applicable(c, &pi, job, &out, a) != 0)
        return EO__RUN_DONE;
    eo_pool_config *cfg = malloc(sizeof *cfg);
    if (cfg == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    *cfg = out.chosen;
    c->work = cfg;
    c->work_free = free;
    c->w.kind = EO__W_CONFIGURE;
    snprintf(c->w.pool, sizeof c->w.pool, "%s", pi.name);
    c->w.u.configure = cfg;
    return EO__RUN_WRITER;
}
