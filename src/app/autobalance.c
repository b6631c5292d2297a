/* Autobalance requests through the core (eo_app.h): the decoded request's ratings turned into
 * the integer state the core takes, the policy's strength rule resolved against the pool's
 * model, then the check and the joiner's place (docs/BALANCER.md "Autobalance"). The one path
 * of the service's autobalance and `evenodds autobalance`. */
#include "evenodds/eo_app.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/round_internal.h" /* eo__fail */

/* P(A) from the model on the team means (variance 0); with relative levels when the request
 * says so: an unequal team's extra member then counts by his distance from the start level,
 * and by the pool's presence term (docs/MODELS.md "Presence"). */
static double model_predict(void *ctx, int64_t sa, int na, int64_t sb, int nb)
{
    const eo_autobalance_request *req = ctx;
    eo_team_agg a = {(double)na, (double)na, (double)na, (double)sa / (double)req->unit, 0.0};
    eo_team_agg b = {(double)nb, (double)nb, (double)nb, (double)sb / (double)req->unit, 0.0};
    double field = 0.0;
    if (req->relative) {
        field = eo_model_level_field(req->model, &a, &b);
        field += eo_model_logit_field(req->model, &a, &b, field,
                                      req->presence * (double)(na - nb), NULL, NULL);
    }
    return eo_model_predict(req->model, &a, &b, field);
}

int eo_app_autobalance_resolve(eo_autobalance_request *req, const eo_model_ctx *model,
                               eo_round_error *err)
{
    if (req == NULL || model == NULL)
        return eo__fail(err, "", "no request or model");
    for (size_t i = 0; i < req->n; i++) {
        if (!req->has_rating[i]) {
            char f[48];
            snprintf(f, sizeof f, "players[%zu].rating", i);
            return eo__fail(err, f, "required here (no rating to look up)");
        }
    }
    if (req->has_joiner && !req->joiner_has_rating)
        return eo__fail(err, "joiner.rating", "required here (no rating to look up)");
    req->model = model;
    req->unit = eo_model_split_unit(model);
    for (size_t i = 0; i < req->n; i++)
        req->players[i].rating = eo_model_split_rating(model, req->rating[i]);
    /* Thresholds are gaps: scaled by the unit (no offset), rounded to the nearest integer. */
    req->policy.strength_threshold = llround(req->strength_threshold * (double)req->unit);
    req->policy.gap_tolerance = llround(req->gap_tolerance * (double)req->unit);
    if (req->policy.strength_threshold == 0) {
        req->policy.predict = model_predict;
        req->policy.predict_ctx = req;
    } else {
        req->policy.predict = NULL;
        req->policy.predict_ctx = NULL;
    }
    req->state.players = req->players;
    return 0;
}


int eo_app_autobalance(eo_autobalance_request *req, const eo_model_ctx *model, int64_t now,
                       eo_app_autobalance_answer *out, eo_round_error *err)
{
    if (out == NULL)
        return eo__fail(err, "", "no output");
    memset(out, 0, sizeof *out);
    int rc = eo_app_autobalance_resolve(req, model, err);
    if (rc != 0)
        return rc;
    if (!req->has_now)
        req->state.now = now;
    rc = eo_autobalance_check(&req->policy, &req->state, &out->res);
    if (rc == 0 && req->has_joiner)
        rc = eo_autobalance_place_joiner(&req->policy, req->players, req->n,
                                         eo_model_split_rating(model, req->joiner_rating),
                                         &out->join);
    if (rc != 0) {
        out->core_refused = true;
        eo__fail(err, "players", "%s", eo_strerror(rc));
    }
    return rc;
}
