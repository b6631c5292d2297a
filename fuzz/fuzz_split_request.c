/* The split request decoder on arbitrary bytes; a decoded request also goes through the answer
 * encoders with a made-up split of its players, so they meet odd ids too, and the text
 * encoder must give json_dumps()'s bytes. The plain reader (eo_split_request_plain()) reads
 * the same bytes: whatever it decodes, the general decoder must decode alike. A balancer
 * request of at most 16 players is answered (budget cut to 1 ms of nodes) and encoded: what the
 * decoder accepts the core must accept too, every answer must honour the locks, and a proven
 * one's bound must be its terms. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_app.h"
#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void balance(eo_split_request *req)
{
    eo_model m;
    eo_model_config cfg;
    eo_model_ctx *ctx = NULL;
    if (eo_model_parse("synelo", &m) != 0 || eo_model_config_default(m, &cfg) != 0 ||
        eo_model_prepare(&cfg, &ctx, NULL) != 0)
        abort();
    eo_strength st[16];
    for (size_t i = 0; i < req->n; i++) {
        st[i].mu = req->has_rating[i] ? (double)req->rating[i] : 1000.0;
        st[i].var = 0.0;
    }
    req->budget_ms = 1;
    eo_split_answer ans;
    eo_round_error err;
    if (eo_app_split(req, ctx, st, NULL, &ans, &err) != 0)
        abort(); /* the decoder refuses what the core would */
    for (size_t c = 0; c < ans.count; c++) {
        const eo_balance_split *s = ans.split[c];
        if (s->err != 0)
            continue;
        for (int x = 0; x < s->k; x++)
            if (req->players[s->a[x]].lock == EO_BALANCE_B ||
                req->players[s->b[x]].lock == EO_BALANCE_A)
                abort();
        if ((size_t)(2 * s->k) + s->nbench != req->n)
            abort();
        if (s->exact && memcmp(&s->bound, &s->terms, sizeof s->bound) != 0)
            abort(); /* a proven answer's bound is its terms */
    }
    json_t *out = eo_split_answer_to_json(&ans, req);
    if (out == NULL)
        abort();
    json_decref(out);
    eo_split_answer_free(&ans);
    eo_model_release(ctx);
}

/* The text encoder against jansson's dump of the tree encoder's answer. */
static void same_text(const eo_splits *s, const char *const *ids, int64_t unit,
                      const json_t *tree)
{
    char *want = json_dumps(tree, JSON_COMPACT);
    size_t len = 0;
    if (want == NULL || eo_splits_encode(s, ids, unit, NULL, 0, &len) != EO_ELIMIT ||
        len != strlen(want))
        abort();
    char *got = malloc(len + 1);
    if (got == NULL || eo_splits_encode(s, ids, unit, got, len + 1, &len) != 0 ||
        strcmp(got, want) != 0)
        abort();
    free(got);
    free(want);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eo_split_request plain;
    int prc = eo_split_request_plain((const char *)data, size, &plain);
    if (prc != 0 && prc != EO_EPARSE && prc != EO_ENOMEM)
        abort();
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL) {
        if (prc == 0)
            abort(); /* the plain reader took what is not JSON */
        return 0;
    }
    eo_split_request req;
    eo_round_error err;
    int rc = eo_split_request_from_json(obj, &req, &err);
    if (prc == 0) {
        if (rc != 0 || req.balance || plain.n != req.n || plain.bench != req.bench)
            abort();
        for (size_t i = 0; i < req.n; i++)
            if (strcmp(plain.ids[i], req.ids[i]) != 0 || req.has_rating[i] ||
                plain.has_rating[i])
                abort();
        eo_split_request_free(&plain);
    }
    if (rc == 0) {
        uint16_t idx[EO_SPLIT_EXACT_MAX];
        for (size_t i = 0; i < req.n; i++)
            idx[i] = (uint16_t)i;
        size_t k = req.n / 2;
        /* The numbers from the input's last bytes, so that the writer's real format (gap over
         * a unit of 1, 10 or 100; p_a from the whole range, NaN as null) is fuzzed too. */
        uint64_t x = 0;
        for (size_t i = size > 8 ? size - 8 : 0; i < size; i++)
            x = x << 8 | data[i];
        static const int64_t units[3] = {1, 10, 100};
        int64_t unit = units[x % 3];
        double p = (double)(x >> 11) / 9007199254740992.0; /* [0, 1) from 53 bits */
        eo_split sp = {.k = (int)k, .a = idx, .b = idx + k, .bench = idx + 2 * k,
                       .nbench = req.n - 2 * k, .gap = (int64_t)(x >> 40),
                       .p_a = (x & 4) ? NAN : p};
        eo_splits s = {.count = 1, .split = &sp};
        json_t *out = eo_splits_to_json(&s, (const char *const *)req.ids, unit);
        if (out == NULL)
            abort(); /* every decoded id is valid UTF-8, so encoding cannot fail */
        same_text(&s, (const char *const *)req.ids, unit, out);
        json_decref(out);
        if (req.balance && req.n <= 16)
            balance(&req);
        eo_split_request_free(&req);
    }
    json_decref(obj);
    return 0;
}
