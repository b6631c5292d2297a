/* Fast exact "who plays" for dense ratings (see split_internal.h).
 *
 * With a bench (solver mode, 2k < n) the lower bound of the gap is 0, and with realistic
 * ratings the lexicographically first playing set with gap 0 is nearly always the first
 * 2k - 1 players plus one later player, or the first 2k - 2 plus two. Each such candidate is
 * one equation over the subsets of the fixed prefix: e.g. prefix F, late player x on A,
 * S = A \ {x} has k - 1 players and 2ΣS = ΣF - q_x. So a table of every (count, sum) reachable
 * by subsets of the prefix answers each candidate with one bit lookup, and candidates taken in
 * lexicographic order give the first feasible set exactly. The table is a bitset per count,
 * extended player by player as k grows (the prefix of k + 1 contains that of k), so it is built
 * once per call. It applies only when the normalised ratings are small (width limit), which is
 * what makes it cheap; otherwise, and when no candidate with at most two late players has gap
 * 0, split.c takes the general path. */
#include "split_internal.h"

#include <stdlib.h>
#include <string.h>

#define DENSE_MAX_WORDS 32768 /* 256 KiB of bitsets: beyond, the table costs more than it saves */

struct eo__split_dense {
    int n, m, cmax; /* players 0..m-1 are in the table; counts 0..cmax kept */
    const int64_t *q;
    int64_t qmax, sum;               /* largest q; Σq of the prefix */
    int off[EO__SPLIT_N / 2 + 2];    /* words of count c: off[c] .. off[c + 1] - 1 */
    int snap_c;                      /* counts snap_c, snap_c + 1 saved at prefix snap_m */
    int snap_m;
    int64_t snap_sum;
    uint64_t *snap[2];
    uint64_t *bits;
};

static int words_of(int64_t bits) { return (int)(bits / 64 + 1); }

eo__split_dense *eo__split_dense_new(const int64_t *q, int n)
{
    /* split.c asks for k <= EO__SPLIT_MITM_HALF (team A then comes from split_mitm.c), so
     * counts up to k - 1 of prefixes up to 2k - 1 players: no work for larger k */
    int cmax = n / 2 - 1 < EO__SPLIT_MITM_HALF - 1 ? n / 2 - 1 : EO__SPLIT_MITM_HALF - 1;
    if (cmax < 1)
        return NULL;
    int64_t qmax = 0;
    for (int i = 0; i < n; i++)
        qmax = q[i] > qmax ? q[i] : qmax;
    if (qmax > DENSE_MAX_WORDS * 64) /* keeps the products below small */
        return NULL;
    int64_t total = 0;
    for (int c = 0; c <= cmax; c++)
        total += words_of(c * qmax);
    int64_t snapw = words_of(cmax * qmax);
    if (total + 2 * snapw > DENSE_MAX_WORDS)
        return NULL;
    eo__split_dense *d = malloc(sizeof *d + (size_t)(total + 2 * snapw) * sizeof(uint64_t));
    if (!d)
        return NULL;
    d->n = n;
    d->m = 0;
    d->cmax = cmax;
    d->q = q;
    d->qmax = qmax;
    d->sum = 0;
    d->bits = (uint64_t *)(d + 1);
    d->off[0] = 0;
    for (int c = 0; c <= cmax; c++)
        d->off[c + 1] = d->off[c] + words_of(c * qmax);
    d->snap[0] = d->bits + total;
    d->snap[1] = d->snap[0] + snapw;
    d->snap_m = -1;
    memset(d->bits, 0, (size_t)total * sizeof(uint64_t));
    d->bits[0] = 1; /* the empty subset: count 0, sum 0 */
    return d;
}

void eo__split_dense_free(eo__split_dense *d)
{
    free(d);
}

/* dst |= src << s, over dst's nd words (src has ns words; bits past either end are 0). */
static void shift_or(uint64_t *dst, int nd, const uint64_t *src, int ns, int64_t s)
{
    int ws = (int)(s / 64), bs = (int)(s % 64);
    for (int w = nd - 1; w >= ws; w--) {
        int u = w - ws; /* source word landing here, and its lower neighbour */
        uint64_t v = u < ns ? src[u] << bs : 0;
        if (bs && u >= 1 && u - 1 < ns)
            v |= src[u - 1] >> (64 - bs);
        dst[w] |= v;
    }
}

/* Player m joins the prefix: count c gets count c - 1 shifted by his q (counts descending, so
 * c - 1 is still the old one). */
static void add_player(eo__split_dense *d)
{
    int64_t v = d->q[d->m];
    int top = d->m + 1 < d->cmax ? d->m + 1 : d->cmax;
    for (int c = top; c >= 1; c--)
        shift_or(d->bits + d->off[c], d->off[c + 1] - d->off[c], d->bits + d->off[c - 1],
                 d->off[c] - d->off[c - 1], v);
    d->sum += v;
    d->m++;
}

static void advance(eo__split_dense *d, int m)
{
    while (d->m < m)
        add_player(d);
}

/* 1 when some subset of c players of the table (or of the saved copy, snap >= 0) sums to s. */
static int has(const eo__split_dense *d, int snap, int c, int64_t s)
{
    if (c < 0 || s < 0)
        return 0;
    const uint64_t *b;
    if (snap >= 0) {
        if (c < d->snap_c || c > d->snap_c + 1)
            return 0;
        b = d->snap[c - d->snap_c];
    } else {
        if (c > d->cmax)
            return 0;
        b = d->bits + d->off[c];
    }
    if (s > c * d->qmax)
        return 0;
    return (int)(b[s / 64] >> (s % 64) & 1);
}

/* 1 when 2s = v has a solution s reachable with c players. */
static int has_half(const eo__split_dense *d, int snap, int c, int64_t v)
{
    return v >= 0 && v % 2 == 0 && has(d, snap, c, v / 2);
}

int eo__split_dense_plays(eo__split_dense *d, int k, uint64_t *set)
{
    int n = d->n;
    if (k < 2 || 2 * k >= n || k - 1 > d->cmax || 2 * k - 2 < d->m)
        return 0; /* k must grow across calls: the table only extends */
    /* prefix of 2k - 2 players: keep counts k - 2 and k - 1 for the two-late-player family */
    advance(d, 2 * k - 2);
    d->snap_c = k - 2;
    d->snap_m = d->m;
    d->snap_sum = d->sum;
    for (int t = 0; t < 2; t++) {
        int c = k - 2 + t;
        int nw = d->off[c + 1] - d->off[c];
        memcpy(d->snap[t], d->bits + d->off[c], (size_t)nw * sizeof(uint64_t));
    }
    uint64_t prefix = (UINT64_C(1) << (2 * k - 2)) - 1;
    /* one late player x after the first 2k - 1 (x = 2k - 1 is the first 2k players): x on A,
     * S = A \ {x}, |S| = k - 1, 2ΣS = ΣF - q_x; x on B is the mirror */
    advance(d, 2 * k - 1);
    for (int x = 2 * k - 1; x < n; x++) {
        if (has_half(d, -1, k - 1, d->sum - d->q[x])) {
            *set = prefix | UINT64_C(1) << (2 * k - 2) | UINT64_C(1) << x;
            return 1;
        }
    }
    /* two late players x < y after the first 2k - 2 (player 2k - 2 out: every set with him
     * was just ruled out). With x on A and y on B, S = A \ {x} has k - 1 players and
     * 2ΣS = ΣF + q_y - q_x; x on B, y on A the same with x, y swapped; both on A: |S| = k - 2,
     * 2ΣS = ΣF - q_x - q_y; both on B is the mirror of both on A. */
    int64_t sf = d->snap_sum;
    for (int x = 2 * k - 1; x < n; x++) {
        for (int y = x + 1; y < n; y++) {
            int64_t qx = d->q[x], qy = d->q[y];
            if (has_half(d, 0, k - 1, sf + qy - qx) || has_half(d, 0, k - 1, sf + qx - qy) ||
                has_half(d, 0, k - 2, sf - qx - qy)) {
                *set = prefix | UINT64_C(1) << x | UINT64_C(1) << y;
                return 1;
            }
        }
    }
    return 0;
}
