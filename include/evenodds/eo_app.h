/**
 * @file eo_app.h
 * The application layer (src/app/, library evenodds_app): the operations that take a decoded
 * request (eo_codec.h) through the core and give the answer the codec encodes. The service
 * (src/service/routes.c) and the CLI (`evenodds split`, `evenodds autobalance`) both call these
 * entry points, so they answer alike; the core stays pure and the codec only maps JSON to
 * values and back (docs/ARCHITECTURE.md, "Modules").
 *
 * Dependencies: core and codec below, the shells above; nothing here does I/O, reads a clock,
 * keeps globals or logs. Thread safety: calls on different requests may run at once; the
 * models passed in are only read.
 */
#ifndef EO_APP_H
#define EO_APP_H

#include <stdbool.h>
#include <stdint.h>

#include "eo_autobalance.h"
#include "eo_codec.h"
#include "eo_model.h"
#include "eo_split.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Splits (src/app/split.c) ------------------------------------------------------------- */

/** How eo_app_split() solves a plain request. Zero-initialised: no work limit, no work space,
 *  the model's split unit. A balancer request ignores these (its budget is req->budget_ms). */
typedef struct eo_app_split_options {
    /** Search nodes of the exact splitter for the whole call (eo_split_options.work_limit);
     *  0 = no limit. Past it the call fails with EO_ELIMIT, and nothing is answered. */
    uint64_t work_limit;
    /** The calling thread's work space (eo_split_solve_ws()), or NULL (eo_split_solve()). With
     *  one, the answer's splits live in it: valid until its next solve or eo_split_ws_free(). */
    eo_split_ws *ws;
    /** Split the ratings in whole points, round(μ) at unit 1, instead of the model's split
     *  unit (eo_model_split_unit()). `evenodds split` answers plain requests so, as it always
     *  has; the service uses the model's unit (docs/BALANCER.md "Split units"). The two differ
     *  only for models whose unit is not 1 (TrueSkill, Weng-Lin, hive). */
    bool whole_points;
} eo_app_split_options;

/**
 * Answers a split request (docs/SERVICE.md "POST /v1/pools/{pool}/splits"), plain or with
 * balancer inputs, the same way for the service and `evenodds split`:
 *  - a plain request (req->balance false): the exact splitter on the players' integer ratings
 *    eo_model_split_rating(model, strength[i].mu) (or whole points, @p opt), within
 *    opt->work_limit, in opt->ws when given;
 *  - a balancer request: eo_app_split_balance().
 * Every answered split's p_a is then the model's P(A wins) of its teams,
 * eo_model_predict_idx() from @p strength with the field (req->field for a balancer request, 0
 * for a plain one, which names no map): P(A) of a split is computed here and nowhere else.
 *
 * @p req: a decoded request (eo_split_request_from_json() or eo_split_request_plain()); a
 * balancer request's players get their integer ratings. @p strength: req->n entries, each
 * player's mean and variance on the model's scale (the request's rating with variance 0, or the
 * pool's). @p model: borrowed, only read. @p opt may be NULL (zero options).
 * Returns 0 with @p out the caller's, released with eo_split_answer_free() and encoded with
 * eo_split_answer_to_json() (or, plain, eo_splits_encode() of out->splits). On failure @p out
 * is zeroed, @p err (may be NULL) says why, and the code is:
 *  - EO_ELIMIT: a plain request's search passed opt->work_limit, or more than
 *    EO_SPLIT_EXACT_MAX players (err "players"); a caller may try again with a larger limit;
 *  - EO_ENOMEM;
 *  - another code: the request is refused (a balancer request's as eo_app_split_balance(),
 *    with the field named; a plain one's the splitter's code, err "players" and its
 *    eo_strerror()).
 */
int eo_app_split(eo_split_request *req, const eo_model_ctx *model, const eo_strength *strength,
                 const eo_app_split_options *opt, eo_split_answer *out, eo_round_error *err);

/**
 * The balancer half of eo_app_split(): answers a balancer request (req->balance) with
 * eo_balance_solve(). Every player's integer rating is eo_model_split_rating() of
 * @p strength[i].mu; "epsilon" becomes a tolerance in split units per k with
 * eo_model_split_tolerance() (the 2k smallest variances, the 2k largest rounding errors), and
 * consecutive k with the same tolerance and field are solved in one call; "budget_ms" times
 * EO_SPLIT_NODES_PER_MS nodes are shared equally between those calls (past its share a call
 * answers by local search, exact = 0); req->field (model units) enters the objective
 * |ΣA − ΣB + field| as eo_model_field_units() per k, and each answer's p_a is the model's P(A)
 * with req->field (docs/BALANCER.md "The balancer through the service"). @p req's players get
 * their ratings. Returns 0 (per-k problems are in each split's err), EO_EINVAL (not a balancer
 * request, or a request the core refuses: @p err names the field) or EO_ENOMEM. On success
 * @p out is the caller's (eo_split_answer_free()); on failure it is zeroed.
 */
int eo_app_split_balance(eo_split_request *req, const eo_model_ctx *model,
                         const eo_strength *strength, eo_split_answer *out, eo_round_error *err);

/* ---- Autobalance (src/app/autobalance.c) ------------------------------------------------- */

/** eo_app_autobalance()'s answer, for eo_autobalance_to_json(req, &res, join or NULL). */
typedef struct eo_app_autobalance_answer {
    eo_ab_result res;     /**< rule, action and moves (eo_autobalance_check()) */
    eo_ab_placement join; /**< the joiner's team, meaningful when req->has_joiner */
    /** On failure: true when the core refused the resolved request (the code is
     *  eo_autobalance_check()'s or eo_autobalance_place_joiner()'s, err->field "players" and
     *  err->message its eo_strerror()); false when the request itself could not be resolved
     *  (eo_app_autobalance_resolve(): err names the field). */
    bool core_refused;
} eo_app_autobalance_answer;

/**
 * Makes the core's integer input once every rating is known (has_rating all true, and the
 * joiner's; else EO_EINVAL naming "players[i].rating" or "joiner.rating"): players' ratings
 * eo_model_split_rating(), the thresholds times eo_model_split_unit() (rounded), and the
 * strength rule: the sum rule when strength_threshold > 0, else P(A) from @p model on the team
 * means (variance 0) against p_threshold (the policy's predictor reads @p req: do not move
 * it). Sets req->model and req->unit. @p model is borrowed and must outlive the calls to
 * eo_autobalance_check() on @p req. Returns 0 or EO_EINVAL (with @p err, may be NULL).
 */
int eo_app_autobalance_resolve(eo_autobalance_request *req, const eo_model_ctx *model,
                               eo_round_error *err);

/**
 * Answers an autobalance request (docs/BALANCER.md "Autobalance", docs/SERVICE.md "POST
 * /v1/pools/{pool}/autobalance"), the same way for the service and `evenodds autobalance`:
 * resolves it (eo_app_autobalance_resolve()), takes @p now (Unix seconds) as the time when the
 * request gives no "now", then eo_autobalance_check() and, with a joiner,
 * eo_autobalance_place_joiner() at his eo_model_split_rating(). @p req: decoded
 * (eo_autobalance_request_from_json()) with every rating filled in by the caller (from the pool,
 * or the request's own); it is changed as resolve() says and must stay in place while @p out is
 * encoded. @p model: borrowed. Returns 0 with @p out filled, or the failure's code with @p err
 * (may be NULL) and out->core_refused saying which (see eo_app_autobalance_answer).
 */
int eo_app_autobalance(eo_autobalance_request *req, const eo_model_ctx *model, int64_t now,
                       eo_app_autobalance_answer *out, eo_round_error *err);

#ifdef __cplusplus
}
#endif
#endif
