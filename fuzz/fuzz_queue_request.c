/* The queue request decoder (POST and PATCH /v1/queues) on arbitrary bytes: an accepted queue
 * passes the matcher's check, and its document read back gives the same queue. */
#include <string.h>

#include "mm_fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same(const eo_queue_config *a, const eo_queue_config *b)
{
    if (strcmp(a->name, b->name) != 0 || strcmp(a->pool, b->pool) != 0 ||
        a->match.team_size != b->match.team_size || a->match.nregions != b->match.nregions ||
        a->match.nmaps != b->match.nmaps || a->match.nsteps != b->match.nsteps ||
        a->interval_ms != b->interval_ms || a->ticket_ttl_s != b->ticket_ttl_s ||
        a->ready_check_s != b->ready_check_s || a->match.linear != b->match.linear)
        abort();
    for (int i = 0; i < a->match.nregions; i++)
        if (strcmp(a->regions[i], b->regions[i]) != 0)
            abort();
    for (int i = 0; i < a->match.nsteps; i++)
        if (a->match.steps[i].after != b->match.steps[i].after ||
            a->match.steps[i].team_min != b->match.steps[i].team_min)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *obj = mm_fuzz_parse(data, size);
    if (obj == NULL)
        return 0;
    char name[EO_ID_MAX + 1], pool[EO_ID_MAX + 1];
    int team = 0;
    eo_request_error err;
    eo_queue_config cfg, back, patched;
    if (eo_queue_head_from_json(obj, name, pool, &team, &err) != 0) {
        mm_fuzz_refusal(&err);
        /* a change needs no head: the same bytes as a PATCH of a default queue */
        if (eo_queue_config_init("q", "default", 4, &patched) != 0)
            abort();
        patched.match.nregions = 0;
        if (eo_queue_request_apply(obj, true, &patched, &err) == 0) {
            if (eo_match_config_check(&patched.match, NULL) != 0)
                abort();
        } else {
            mm_fuzz_refusal(&err);
        }
        json_decref(obj);
        return 0;
    }
    if (eo_queue_config_init(name, pool, team, &cfg) != 0)
        abort();
    if (eo_queue_request_apply(obj, false, &cfg, &err) != 0) {
        mm_fuzz_refusal(&err);
    } else {
        if (eo_match_config_check(&cfg.match, NULL) != 0)
            abort();
        json_t *doc = eo_queue_config_to_json(&cfg);
        if (doc == NULL || eo_queue_config_init("x", "y", 1, &back) != 0 ||
            eo_queue_request_apply(doc, false, &back, &err) != 0)
            abort();
        same(&cfg, &back);
        json_decref(doc);
    }
    json_decref(obj);
    return 0;
}
