/* The truth-file decoder (`evenodds eval/fit --truth`) on arbitrary bytes; a decoded truth
 * then gives the oracle's P of a fixed round, which must be a probability or a named miss. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    eo_truth *t = NULL;
    eo_round_error err;
    if (eo_truth_from_text((const char *)data, size, &t, &err) != 0) {
        if (t != NULL)
            abort(); /* a refused file leaves nothing behind */
        return 0;
    }
    /* p000001 + p000002 against p000003 (who left halfway) on map01, as sim names them. */
    char ids[3][8] = {"p000001", "p000002", "p000003"}, map[] = "map01", rid[] = "r";
    eo_member a[2], b[1];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    a[0].id = ids[0];
    a[1].id = ids[1];
    b[0].id = ids[2];
    b[0].has = EO_MEMBER_LEFT;
    b[0].left = 300.0;
    eo_round r;
    memset(&r, 0, sizeof r);
    r.id = rid;
    r.map = map;
    r.started_at = 1000;
    r.ended_at = 1600;
    r.team[0] = a;
    r.team[1] = b;
    r.n[0] = 2;
    r.n[1] = 1;
    for (int pass = 0; pass < 2; pass++) {
        double p = NAN;
        int rc = eo_truth_p(t, &r, &p, &err);
        if (rc == 0 && !(p >= 0.0 && p <= 1.0))
            abort();
        if (rc != 0 && (rc != EO_ENOTFOUND || err.field[0] == '\0'))
            abort();
        r.map = NULL; /* and without a map */
    }
    eo_truth_destroy(t);
    return 0;
}
