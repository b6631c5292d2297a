/* The round answer as text, without a jansson tree (eo_codec.h "Service answers"): the
 * service's hot path. Its bytes are logged with the round and sent again, byte for byte, to a
 * client that reports the same round twice (docs/SERVICE.md "Concurrency and durability"), so
 * the format never changes for a logged round. */
#include <stdlib.h>

#include "codec/json_text.h"
#include "evenodds/eo_codec.h"

/* An answer lists at most EO_PLAYERS_MAX members, each well under 1 KiB. */
#define ANSWER_MAX ((size_t)EO_PLAYERS_MAX * 1024)

/* A display value: an integer for integer-rated models, else a real. */
static void put_display(eo__buf *b, double v, bool integer)
{
    if (integer)
        eo__jt_int(b, (long long)v);
    else
        eo__jt_real9(b, v);
}

/* {"round":id,"players":[{"id","rating","delta","expected",["k",]["mu","sigma",]"rounds",
 * "visible"},…]}; "k" (the K factor) for the Elo models, "mu" and "sigma" for the models with a
 * deviation. */
int eo_round_answer_text(const char *round_id, const eo_member_result *m, size_t n, bool integer,
                         bool deviation, char **out)
{
    eo__buf b;
    eo__buf_init(&b, ANSWER_MAX);
    eo__buf_str(&b, "{\"round\":");
    eo__jt_str(&b, round_id);
    eo__buf_str(&b, ",\"players\":[");
    for (size_t i = 0; i < n; i++) {
        eo__buf_str(&b, i ? ",{\"id\":" : "{\"id\":");
        eo__jt_str(&b, m[i].id);
        eo__buf_str(&b, ",\"rating\":");
        put_display(&b, m[i].rating, integer);
        eo__buf_str(&b, ",\"delta\":");
        put_display(&b, m[i].delta, integer);
        eo__buf_str(&b, ",\"expected\":");
        eo__jt_real9(&b, m[i].expected);
        if (!deviation) {
            eo__buf_str(&b, ",\"k\":");
            eo__jt_real9(&b, m[i].k);
        } else {
            eo__buf_str(&b, ",\"mu\":");
            eo__jt_real9(&b, m[i].mu);
            eo__buf_str(&b, ",\"sigma\":");
            eo__jt_real9(&b, m[i].sigma);
        }
        eo__buf_str(&b, ",\"rounds\":");
        eo__jt_int(&b, (long long)m[i].rounds);
        eo__buf_str(&b, m[i].visible ? ",\"visible\":true}" : ",\"visible\":false}");
    }
    eo__buf_str(&b, "]}");
    int rc = b.err;
    *out = eo__buf_take(&b, NULL);
    return rc == EO_EINVAL ? EO_EINVAL : rc != 0 ? EO_ENOMEM : 0;
}

