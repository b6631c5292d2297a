/* Tuning's untrusted documents on arbitrary bytes: a pool's configuration file (`--params
 * FILE`), a prediction line (`evenodds compare`), and the tune request body (POST
 * /v1/pools/{pool}/tune) after the service's one request parser. What decodes must hold to
 * its bounds and write back; what is refused must say so and leave nothing. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void pool_file(const char *text, size_t size)
{
    eo_pool_config c;
    char name[EO_ID_MAX + 1];
    eo_round_error err;
    memset(&err, 0, sizeof err);
    if (eo_pool_file_from_text(text, size, &c, name, &err) != 0) {
        if (err.message[0] == '\0')
            abort(); /* a refusal is always said */
        return;
    }
    eo_pool *pool = NULL;
    if (eo_pool_create(&c, &pool) != 0)
        abort(); /* a decoded configuration is one a pool takes */
    eo_pool_destroy(pool);
    json_decref(eo_pool_config_to_json(&c));
}

static void prediction(const char *text, size_t size)
{
    eo_prediction p;
    eo_round_error err;
    if (eo_prediction_from_text(text, size, &p, &err) != 0) {
        if (p.id[0] != '\0')
            abort(); /* a refused line leaves nothing */
        return;
    }
    if (!(p.p_a >= 0.0 && p.p_a <= 1.0) || (unsigned)p.outcome > EO_DRAW ||
        eo_id_check(p.id, strlen(p.id)) != 0)
        abort();
}

static void tune_request(const char *text, size_t size)
{
    json_t *obj = NULL;
    eo_request_error err;
    if (eo_request_parse(text, size, EO_REQUEST_BODY_MAX, EO_REQUEST_DEPTH_MAX, &obj, &err) != 0)
        return;
    eo_tune_request q;
    if (eo_tune_request_from_json(obj, &q, &err) == 0 &&
        (q.budget < 1 || q.budget > EO_TUNE_BUDGET_MAX || !(q.burn_in < q.eval_from) ||
         q.nknobs > EO_TUNE_KNOBS_MAX || q.max_rounds > EO_TUNE_ROUNDS_MAX || !(q.gate >= 0)))
        abort();
    json_decref(obj);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    pool_file(text, size);
    prediction(text, size);
    tune_request(text, size);
    return 0;
}
