/*
 * The client's decoders of the service's answers (src/client/answers.c) on arbitrary bytes:
 * the network is untrusted. The first byte picks the decoder (lookup, round answer, splits).
 * Beyond not crashing or leaking: a decoded split has k >= 2, 2k valid ids and no id twice; a
 * decoded rating is finite.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "client/client_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const eo_client_rating *r)
{
    if (!isfinite(r->mean) || !isfinite(r->display) || r->rounds < 0 || r->provisional)
        abort();
}

static void each(void *ctx, const char *id, const eo_client_rating *r)
{
    (void)ctx;
    if (eo_id_check(id, strlen(id)) != 0)
        abort();
    check(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    switch (data[0] % 3) {
    case 0: {
        char id[EO_ID_MAX + 1];
        eo_client_rating r;
        if (eo__client_parse_lookup(text, len, id, &r) == 0) {
            if (eo_id_check(id, strlen(id)) != 0)
                abort();
            check(&r);
        }
        break;
    }
    case 1:
        (void)eo__client_parse_round_answer(text, len, each, NULL);
        break;
    default: {
        eo__splits s;
        if (eo__client_parse_splits(text, len, &s) != 0) {
            if (s.count != 0 || s.s != NULL)
                abort();
            break;
        }
        for (size_t i = 0; i < s.count; i++) {
            int k = s.s[i].k;
            if (k < 2)
                abort();
            for (int a = 0; a < 2 * k; a++) {
                if (eo_id_check(s.s[i].ids[a], strlen(s.s[i].ids[a])) != 0)
                    abort();
                for (int b = a + 1; b < 2 * k; b++)
                    if (strcmp(s.s[i].ids[a], s.s[i].ids[b]) == 0)
                        abort();
            }
        }
        eo__splits_free(&s);
        break;
    }
    }
    return 0;
}
