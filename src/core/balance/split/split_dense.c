/* Fast exact "who plays" for dense ratings (see split_internal.h).
 *
 * With a bench (solver mode, 2k < n) the lower bound of the gap is 0, and with realistic
 * ratings the lexicographically first playing set with gap 0 is nearly always the first
 * 2k - 1 players plus one later player, the first 2k - 2 plus two, or the first 2k - 3 plus
 * three (this last family is what keeps k = 2, 3 off the general path). Each such candidate is
 * one equation over the subsets of the fixed prefix: e.g. prefix F, late player x on A,
 * S = A \ {x} has k - 1 players and 2ΣS = ΣF - q_x. So a table of every (count, sum) reachable
 * by subsets of the prefix answers each candidate with one bit lookup, and candidates taken in
 * lexicographic order give the first feasible set exactly. The table is a bitset per count,
 * extended player by player as k grows (the prefix of k + 1 contains that of k), so it is built
 * once per call. It applies only when the normalised ratings are small (width limit), which is
 * what makes it cheap; otherwise, and when no candidate with at most three late players has
 * gap 0, split.c takes the general path. */
#include "split_internal.h"

#include <string.h>

#include "core/balance/common.h"

#define DENSE_MAX_WORDS 32768 /* 256 KiB of bitsets: beyond, the table costs more than it saves */

/* A copy of some counts of the table at one prefix, kept for a family of candidates. */
typedef struct snap {
    int c0, nc;          /* counts c0 .. c0 + nc - 1 */
    int64_t sum;         /* Σq of the prefix */
    uint64_t *b[3];      /* their bitsets, laid out as in the table */
} snap;

/* Count c keeps only the band of sums that c players of the first `last` players can reach
 * (between the sums of the c smallest and of the c largest), in absolute words base[c] ..
 * base[c] + off[c + 1] - off[c] - 1 (word w holds sums 64w .. 64w + 63); of those, words
 * lo[c] .. hi[c] may be non-zero at the current prefix. With realistic ratings the band is a
 * few times narrower than 0 .. c max q, and so is the work of adding a player. */
struct eo__split_dense {
    int n, m, cmax, last; /* players 0..m-1 are in the table (m <= last); counts 0..cmax */
    const int64_t *q;
    int64_t offset;                  /* a split's gap is |Σq(A) - Σq(B) + offset| */
    int64_t sum;                     /* Σq of the prefix */
    int off[EO__SPLIT_N / 2 + 2];    /* stored words of count c: off[c] .. off[c + 1] - 1 */
    int64_t base[EO__SPLIT_N / 2 + 1];
    int64_t lo[EO__SPLIT_N / 2 + 1], hi[EO__SPLIT_N / 2 + 1];
    snap two, three;                 /* prefixes 2k - 2 and 2k - 3 of the current k */
    uint64_t *bits;
};

static int words_of(int64_t bits) { return (int)(bits / 64 + 1); }

eo__split_dense *eo__split_dense_new(const int64_t *q, int n, int64_t offset, eo__split_buf *buf)
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
    /* the gate of the unbanded table (counts 0..cmax, two copies), kept as measured when the
     * table was introduced: it picks the ratings where the table pays off */
    int64_t total = 0;
    for (int c = 0; c <= cmax; c++)
        total += words_of(c * qmax);
    if (total + 2 * words_of(cmax * qmax) > DENSE_MAX_WORDS)
        return NULL;
    int last = 2 * cmax + 1 < n ? 2 * cmax + 1 : n; /* the longest prefix ever asked for */
    int64_t srt[EO__SPLIT_N];
    for (int i = 0; i < last; i++)
        eo__insert_asc(srt, i, q[i]);
    int64_t base[EO__SPLIT_N / 2 + 1], top[EO__SPLIT_N / 2 + 1], small = 0, large = 0;
    int64_t banded = 0, snapw = 0;
    for (int c = 0; c <= cmax; c++) {
        if (c > 0) {
            small += srt[c - 1];
            large += srt[last - c];
        }
        base[c] = small / 64;
        top[c] = large / 64;
        banded += top[c] - base[c] + 1;
        snapw = top[c] - base[c] + 1 > snapw ? top[c] - base[c] + 1 : snapw;
    }
    eo__split_dense *d = eo__split_buf_get(buf, sizeof *d + (size_t)(banded + 5 * snapw) *
                                                            sizeof(uint64_t));
    if (!d)
        return NULL;
    d->n = n;
    d->m = 0;
    d->cmax = cmax;
    d->last = last;
    d->q = q;
    d->offset = offset;
    d->sum = 0;
    d->bits = (uint64_t *)(d + 1);
    d->off[0] = 0;
    for (int c = 0; c <= cmax; c++) {
        d->off[c + 1] = d->off[c] + (int)(top[c] - base[c] + 1);
        d->base[c] = base[c];
        d->lo[c] = 1; /* empty */
        d->hi[c] = 0;
    }
    d->lo[0] = d->hi[0] = 0;
    for (int t = 0; t < 3; t++)
        d->three.b[t] = d->bits + banded + t * snapw;
    for (int t = 0; t < 2; t++)
        d->two.b[t] = d->bits + banded + (3 + t) * snapw;
    d->two.nc = d->three.nc = 0;
    memset(d->bits, 0, (size_t)banded * sizeof(uint64_t));
    d->bits[0] = 1; /* the empty subset: count 0, sum 0 */
    return d;
}

/* to[t] |= the bits of from[t] (and from[t - 1], from[-1] included) moved up by bs, for t < n.
 * The two ranges are different counts' bands of the table, so they never overlap. */
static void or_shifted(uint64_t *restrict to, const uint64_t *restrict from, int64_t n, int bs)
{
    if (bs == 0) {
        for (int64_t t = 0; t < n; t++)
            to[t] |= from[t];
        return;
    }
    for (int64_t t = 0; t < n; t++)
        to[t] |= from[t] << bs | from[t - 1] >> (64 - bs);
}

/* Count c |= count c - 1 shifted by s, over the words the shift can reach. */
static void shift_or(eo__split_dense *d, int c, int64_t s)
{
    int src = c - 1;
    if (d->lo[src] > d->hi[src])
        return;
    int64_t ws = s / 64;
    int bs = (int)(s % 64);
    const uint64_t *from = d->bits + d->off[src] - d->base[src];
    uint64_t *to = d->bits + d->off[c] - d->base[c];
    int64_t a = d->lo[src], b = d->hi[src];
    int64_t first = a + ws, end = b + ws + (bs ? 1 : 0);
    /* the band holds every reachable sum, so this is a no-op guard */
    if (first < d->base[c])
        first = d->base[c];
    if (end > d->base[c] + d->off[c + 1] - d->off[c] - 1)
        end = d->base[c] + d->off[c + 1] - d->off[c] - 1;
    /* Target word w takes source word u = w - ws shifted up and the top of u - 1. In the middle
     * run (a < u <= b) both exist, so that loop is branch free (and vectorises); only the edge
     * words check the band. */
    int64_t m0 = a + 1 + ws < first ? first : a + 1 + ws;
    int64_t m1 = b + ws > end ? end : b + ws;
    if (m0 > m1) /* no middle run: every word is an edge word */
        m0 = end + 1;
    for (int64_t w = first; w <= end; w++) {
        if (w == m0) {
            or_shifted(to + w, from + (w - ws), m1 - w + 1, bs);
            w = m1 + 1;
            if (w > end)
                break;
        }
        int64_t u = w - ws; /* source word landing here, and its lower neighbour */
        uint64_t v = u <= b ? from[u] << bs : 0;
        if (bs && u - 1 >= a)
            v |= from[u - 1] >> (64 - bs);
        to[w] |= v;
    }
    if (first <= end) {
        d->lo[c] = d->lo[c] > d->hi[c] || first < d->lo[c] ? first : d->lo[c];
        d->hi[c] = end > d->hi[c] ? end : d->hi[c];
    }
}

/* Player m joins the prefix: count c gets count c - 1 shifted by his q (counts descending, so
 * c - 1 is still the old one). */
static void add_player(eo__split_dense *d)
{
    int64_t v = d->q[d->m];
    int top = d->m + 1 < d->cmax ? d->m + 1 : d->cmax;
    for (int c = top; c >= 1; c--)
        shift_or(d, c, v);
    d->sum += v;
    d->m++;
}

static void advance(eo__split_dense *d, int m)
{
    while (d->m < m)
        add_player(d);
}

/* Saves counts c0 .. c0 + nc - 1 (those below 0 are empty) of the current prefix into *sn. */
static void save(const eo__split_dense *d, snap *sn, int c0, int nc)
{
    sn->c0 = c0;
    sn->nc = nc;
    sn->sum = d->sum;
    for (int t = 0; t < nc; t++) {
        int c = c0 + t;
        if (c >= 0)
            memcpy(sn->b[t], d->bits + d->off[c],
                   (size_t)(d->off[c + 1] - d->off[c]) * sizeof(uint64_t));
    }
}

/* 1 when some subset of c players of the table (sn NULL) or of a saved prefix sums to s. */
static int has(const eo__split_dense *d, const snap *sn, int c, int64_t s)
{
    if (c < 0 || c > d->cmax || s < 0)
        return 0;
    int64_t w = s / 64 - d->base[c];
    if (w < 0 || w >= d->off[c + 1] - d->off[c])
        return 0; /* outside the band: no c players reach s */
    const uint64_t *b;
    if (sn) {
        if (c < sn->c0 || c >= sn->c0 + sn->nc)
            return 0;
        b = sn->b[c - sn->c0];
    } else {
        b = d->bits + d->off[c];
    }
    return (int)(b[w] >> (s % 64) & 1);
}

/* 1 when 2s = v has a solution s reachable with c players. */
static int has_half(const eo__split_dense *d, const snap *sn, int c, int64_t v)
{
    return v >= 0 && v % 2 == 0 && has(d, sn, c, v / 2);
}

/* One equation of the candidates below, 2ΣS = v, written for a split with difference 0 and the
 * first late player on A (the mirror, with him on B, has difference 0 too). With an offset f
 * the split must have difference -f instead, 2ΣS = v - f; its mirror, which puts him on A, has
 * +f, 2ΣS = v + f: so both are asked. */
static int has_eq(const eo__split_dense *d, const snap *sn, int c, int64_t v)
{
    int64_t f = d->offset;
    return has_half(d, sn, c, v - f) || (f != 0 && has_half(d, sn, c, v + f));
}

/* Three late players x < y < z after the first 2k - 3 (player 2k - 3 out), in lexicographic
 * order. x on A (x on B is the mirror; has_eq() asks both with an offset): S = A minus the
 * late players has k - a players for a late players on A, and 2ΣS = ΣF + (late on B) - (late
 * on A). All four equations share the parity of ΣF + q_x + q_y + q_z (+ the offset), so an odd
 * one is skipped at once. */
static int three_late(const eo__split_dense *d, int k, uint64_t *set)
{
    const snap *sn = &d->three;
    const int64_t *q = d->q;
    int n = d->n;
    int64_t sf = sn->sum;
    for (int x = 2 * k - 2; x < n; x++) {
        for (int y = x + 1; y < n; y++) {
            int64_t bx = sf - q[x];
            for (int z = y + 1; z < n; z++) {
                if ((bx + q[y] + q[z] + d->offset) & 1)
                    continue;
                if (has_eq(d, sn, k - 3, bx - q[y] - q[z]) ||
                    has_eq(d, sn, k - 2, bx - q[y] + q[z]) ||
                    has_eq(d, sn, k - 2, bx + q[y] - q[z]) ||
                    has_eq(d, sn, k - 1, bx + q[y] + q[z])) {
                    *set = ((UINT64_C(1) << (2 * k - 3)) - 1) | UINT64_C(1) << x |
                           UINT64_C(1) << y | UINT64_C(1) << z;
                    return 1;
                }
            }
        }
    }
    return 0;
}

int eo__split_dense_plays(eo__split_dense *d, int k, uint64_t *set)
{
    int n = d->n;
    if (k < 2 || 2 * k >= n || k - 1 > d->cmax || 2 * k - 3 < d->m)
        return 0; /* k must grow across calls: the table only extends */
    /* prefix of 2k - 3 players: counts k - 3 .. k - 1 for the three-late-player family */
    advance(d, 2 * k - 3);
    save(d, &d->three, k - 3, 3);
    /* prefix of 2k - 2 players: counts k - 2 and k - 1 for the two-late-player family */
    advance(d, 2 * k - 2);
    save(d, &d->two, k - 2, 2);
    uint64_t prefix = (UINT64_C(1) << (2 * k - 2)) - 1;
    /* one late player x after the first 2k - 1 (x = 2k - 1 is the first 2k players): x on A,
     * S = A \ {x}, |S| = k - 1, 2ΣS = ΣF - q_x; x on B is the mirror */
    advance(d, 2 * k - 1);
    for (int x = 2 * k - 1; x < n; x++) {
        if (has_eq(d, NULL, k - 1, d->sum - d->q[x])) {
            *set = prefix | UINT64_C(1) << (2 * k - 2) | UINT64_C(1) << x;
            return 1;
        }
    }
    /* two late players x < y after the first 2k - 2 (player 2k - 2 out: every set with him
     * was just ruled out). With x on A and y on B, S = A \ {x} has k - 1 players and
     * 2ΣS = ΣF + q_y - q_x; x on B, y on A the same with x, y swapped; both on A: |S| = k - 2,
     * 2ΣS = ΣF - q_x - q_y; both on B is the mirror of both on A. */
    const snap *sn = &d->two;
    int64_t sf = sn->sum;
    for (int x = 2 * k - 1; x < n; x++) {
        for (int y = x + 1; y < n; y++) {
            int64_t qx = d->q[x], qy = d->q[y];
            if (has_eq(d, sn, k - 1, sf + qy - qx) || has_eq(d, sn, k - 1, sf + qx - qy) ||
                has_eq(d, sn, k - 2, sf - qx - qy)) {
                *set = prefix | UINT64_C(1) << x | UINT64_C(1) << y;
                return 1;
            }
        }
    }
    /* every set with players 0 .. 2k - 3 was ruled out: the next ones in lexicographic order
     * leave out player 2k - 3 */
    return three_late(d, k, set);
}
