/*
 * The round parser on arbitrary bytes. Beyond not crashing or leaking, a record that decodes
 * must keep decoding through its canonical text (a fixed point) and through eo_round_to_json():
 * the idempotency key depends on it. Its canonical text is at most 5 times the input
 * (docs/ROUNDS.md "How large a stored round can be"), and the length cap refuses it exactly
 * when it is longer than a line import reads. The service's request decoder accepts it unless
 * its "session" is not an id, with the same canonical text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eo_round r;
    eo_round_error err;
    if (eo_round_from_text((const char *)data, size, &r, &err) != 0)
        return 0;
    json_error_t jerr;
    json_t *obj = json_loadb((const char *)data, size, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj == NULL)
        abort(); /* eo_round_from_text accepted what jansson refuses */
    char *c1 = NULL, *c2 = NULL;
    if (eo_round_canonical(obj, &c1) != 0 || strlen(c1) > 5 * size)
        abort();
    if ((eo_round_text_check(obj, strlen(c1), &err) == 0) != (strlen(c1) <= EO_ROUND_TEXT_MAX))
        abort();
    eo_round r2;
    if (eo_round_from_text(c1, strlen(c1), &r2, &err) != 0)
        abort();
    json_t *obj2 = json_loads(c1, EO_JSON_DECODE_FLAGS, &jerr);
    if (obj2 == NULL || eo_round_canonical(obj2, &c2) != 0 || strcmp(c1, c2) != 0)
        abort();
    eo_round_request q;
    const json_t *session = json_object_get(obj, "session");
    int qrc = eo_round_request_from_json(obj, &q, &err);
    if (qrc == 0 && (strcmp(q.canon, c1) != 0 || (session != NULL) != (q.session != NULL) ||
                     (q.session != NULL && strcmp(q.session, json_string_value(session)) != 0)))
        abort();
    if (qrc != 0 && (qrc != EO_EINVAL || session == NULL || strcmp(err.field, "session") != 0))
        abort(); /* only the session can refuse what eo_round_from_json() accepted */
    eo_round_request_free(&q);
    json_t *back = eo_round_to_json(&r);
    eo_round r3;
    if (back == NULL || eo_round_from_json(back, &r3, &err) != 0)
        abort();
    if (r3.n[0] != r.n[0] || r3.n[1] != r.n[1] || strcmp(r3.id, r.id) != 0)
        abort();
    json_decref(back);
    json_decref(obj2);
    json_decref(obj);
    free(c1);
    free(c2);
    eo_round_free(&r);
    eo_round_free(&r2);
    eo_round_free(&r3);
    return 0;
}
