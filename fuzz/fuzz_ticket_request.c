/* The ticket decoder (POST /v1/queues/{queue}/tickets) on arbitrary bytes, against a queue of
 * three regions and teams of 4: an accepted party fits a team, its players are distinct, its
 * latencies are in range or -1, and its canonical text decodes to the same text again. */
#include <stdio.h>
#include <string.h>

#include "mm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void queue(eo_queue_config *q)
{
    if (eo_queue_config_init("q", "default", 4, q) != 0)
        abort();
    static const char *const regions[] = {"eu", "us", "asia"};
    for (int i = 0; i < 3; i++)
        snprintf(q->regions[i], sizeof q->regions[i], "%s", regions[i]);
    q->match.nregions = 3;
}

static void check(const eo_ticket_request *r)
{
    if (r->nplayers < 1 || r->nplayers > 4)
        abort();
    for (size_t i = 0; i < r->nplayers; i++) {
        for (size_t j = 0; j < i; j++)
            if (strcmp(r->players[i], r->players[j]) == 0)
                abort();
        for (int x = 0; r->has_latency[i] && x < 3; x++)
            if (!(r->latency[i][x] == -1.0 ||
                  (r->latency[i][x] >= 0.0 && r->latency[i][x] <= EO_TICKET_LATENCY_MAX_MS)))
                abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = mm_fuzz_parse(data, size);
    if (obj == NULL)
        return 0;
    static eo_queue_config q;
    static eo_ticket_request r, again;
    queue(&q);
    eo_request_error err;
    if (eo_ticket_request_from_json(obj, &q, &r, &err) != 0) {
        mm_fuzz_refusal(&err);
        json_decref(obj);
        return 0;
    }
    check(&r);
    char *text = NULL, *text2 = NULL;
    if (eo_ticket_request_text(&r, &q, &text) != 0)
        abort();
    json_t *back = json_loads(text, EO_JSON_DECODE_FLAGS, NULL);
    if (back == NULL || eo_ticket_request_from_json(back, &q, &again, &err) != 0 ||
        eo_ticket_request_text(&again, &q, &text2) != 0 || strcmp(text, text2) != 0)
        abort();
    free(text);
    free(text2);
    json_decref(back);
    json_decref(obj);
    return 0;
}
