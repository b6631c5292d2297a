/* One round through the engine: idempotency on the round id, the model, the answer, the log. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "engine/engine_internal.h"
#include "evenodds/eo_codec.h"

/* Answers are built in a bounded buffer (core/buf.h): a failure is sticky and reported once at
 * the end. An answer lists at most EO_PLAYERS_MAX members, each well under 1 KiB. */
#define ANSWER_MAX ((size_t)EO_PLAYERS_MAX * 1024)

static void sb_put(eo__buf *b, const char *s, size_t n)
{
    (void)eo__buf_add(b, s, n);
}

static void sb_lit(eo__buf *b, const char *s)
{
    sb_put(b, s, strlen(s));
}

/* A JSON string: ids are valid UTF-8 without control characters (eo_id_check), so only the
 * quote and the backslash need escaping; control bytes are escaped anyway, defensively. */
static void sb_str(eo__buf *b, const char *s)
{
    sb_put(b, "\"", 1);
    const char *run = s;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c != '"' && c != '\\' && c >= 0x20)
            continue;
        sb_put(b, run, (size_t)(s - run));
        char esc[8];
        if (c == '"' || c == '\\')
            snprintf(esc, sizeof esc, "\\%c", c);
        else
            snprintf(esc, sizeof esc, "\\u%04x", c);
        sb_lit(b, esc);
        run = s + 1;
    }
    sb_put(b, run, (size_t)(s - run));
    sb_put(b, "\"", 1);
}

static void sb_int(eo__buf *b, long long v)
{
    char t[24];
    int n = snprintf(t, sizeof t, "%lld", v);
    sb_put(b, t, (size_t)n);
}

/* A real with at most 9 decimals, by integer arithmetic: printf's exact binary-to-decimal
 * conversion of two reals per player was the largest single cost of an update. P and K are
 * informative in the answer (the state itself stays exact in memory and in the log), and
 * 1e-9 is finer than anything a plugin shows. Trailing zeros go: K = 72 prints as 72.
 * From 1e9 on (where |v|·1e9 nears the range of a long long) a mean far from the start, which
 * a model's range allows, is written with %.17g: the same double back, never an error. A
 * non-finite value cannot be JSON; eo_pool_apply_checked() refuses a round that makes one. */
static void sb_real(eo__buf *b, double v)
{
    if (!isfinite(v)) {
        b->err = EO_EINVAL;
        return;
    }
    if (fabs(v) >= 1e9) {
        char t[40];
        int n = snprintf(t, sizeof t, "%.17g", v);
        sb_put(b, t, (size_t)n);
        return;
    }
    long long scaled = llround(fabs(v) * 1e9);
    long long ip = scaled / 1000000000, fp = scaled % 1000000000;
    char t[40];
    int n = snprintf(t, sizeof t, "%s%lld", (v < 0 && scaled != 0) ? "-" : "", ip);
    if (fp != 0) {
        char d[10];
        for (int i = 8; i >= 0; i--, fp /= 10)
            d[i] = (char)('0' + fp % 10);
        int len = 9;
        while (d[len - 1] == '0')
            len--;
        t[n++] = '.';
        memcpy(t + n, d, (size_t)len);
        n += len;
    }
    sb_put(b, t, (size_t)n);
}

/* A display value: an integer for integer-rated models, else a real. */
static void sb_display(eo__buf *b, double v, bool integer)
{
    if (integer)
        sb_int(b, (long long)v);
    else
        sb_real(b, v);
}

/* {"round":id,"players":[{"id","rating","delta","expected",["k",]["mu","sigma",]"rounds",
 * "visible"},…]}; "k" (the K factor) for the Elo models, "mu" and "sigma" for the models with a
 * deviation. */
static int build_response(const eo_model_ctx *model, const eo_round *r,
                          const eo_member_result *m, size_t n, char **out)
{
    bool integer = eo_model_integer_display(model);
    bool deviation = eo_model_has_deviation(model);
    eo__buf b;
    eo__buf_init(&b, ANSWER_MAX);
    sb_lit(&b, "{\"round\":");
    sb_str(&b, r->id);
    sb_lit(&b, ",\"players\":[");
    for (size_t i = 0; i < n; i++) {
        sb_lit(&b, i ? ",{\"id\":" : "{\"id\":");
        sb_str(&b, m[i].id);
        sb_lit(&b, ",\"rating\":");
        sb_display(&b, m[i].rating, integer);
        sb_lit(&b, ",\"delta\":");
        sb_display(&b, m[i].delta, integer);
        sb_lit(&b, ",\"expected\":");
        sb_real(&b, m[i].expected);
        if (!deviation) {
            sb_lit(&b, ",\"k\":");
            sb_real(&b, m[i].k);
        } else {
            sb_lit(&b, ",\"mu\":");
            sb_real(&b, m[i].mu);
            sb_lit(&b, ",\"sigma\":");
            sb_real(&b, m[i].sigma);
        }
        sb_lit(&b, ",\"rounds\":");
        sb_int(&b, (long long)m[i].rounds);
        sb_lit(&b, m[i].visible ? ",\"visible\":true}" : ",\"visible\":false}");
    }
    sb_lit(&b, "]}");
    int rc = b.err;
    *out = eo__buf_take(&b, NULL);
    return rc != 0 ? EO_ENOMEM : 0;
}

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
    rc = build_response(eo_pool_model(p->pool), r, e->members, res.n, &resp);
    if (rc)
        return eo_engine_fail(err, EO_OP_ROUND, EO_ENOMEM, "", "out of memory");
    rc = eo_store_log_append(e->store, p->id, EO_LOG_ROUND, r->id, canon, resp, now, NULL);
    for (size_t i = 0; i < res.n && rc == 0; i++)
        rc = eo__engine_put_player(e, p, e->members[i].id, now);
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
