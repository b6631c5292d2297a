/* The round answer as text, without a jansson tree (eo_codec.h "Service answers"): the
 * service's hot path. Its bytes are logged with the round and sent again, byte for byte, to a
 * client that reports the same round twice (docs/SERVICE.md "Concurrency and durability"), so
 * the format never changes for a logged round. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "evenodds/eo_codec.h"

/* An answer lists at most EO_PLAYERS_MAX members, each well under 1 KiB. */
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
int eo_round_answer_text(const char *round_id, const eo_member_result *m, size_t n, bool integer,
                         bool deviation, char **out)
{
    eo__buf b;
    eo__buf_init(&b, ANSWER_MAX);
    sb_lit(&b, "{\"round\":");
    sb_str(&b, round_id);
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
    return rc == EO_EINVAL ? EO_EINVAL : rc != 0 ? EO_ENOMEM : 0;
}

