/* The pass's two orders of tickets, by age and by rating (docs/MATCHMAKING.md, "The matcher").
 * Each is sorted first by a coarse key of 22 bits or so that never decreases as the exact
 * order grows (two passes of a stable least-significant-digit radix sort of (key, index)
 * pairs, where the exact keys' 64 bits would take six), then each run of equal coarse keys by
 * the exact key (runs are short but where tickets are equal). The radix sort reads its items
 * in order and writes them to 2,048 places per digit, after counting every digit in one read;
 * a digit that is the same for all keys is skipped. */
#include <math.h>
#include <string.h>

#include "match_internal.h"

#define DIGIT EO__MSORT_DIGIT
#define DIGITS EO__MSORT_DIGITS
#define BUCKETS (1u << DIGIT)
_Static_assert(DIGITS *DIGIT >= 64, "the digits cover a key");

/* Bits of the coarse keys: two digits. */
#define COARSE (2 * DIGIT)

/* Sorts a[0..n) stably by k, whose bits from @p bits on are 0, with tmp (n items) and count
 * (EO__MSORT_COUNTS) as scratch; returns the sorted array (a or tmp). */
static eo__mpair *radix(eo__mpair *a, eo__mpair *tmp, size_t n, int bits, uint32_t *count)
{
    static const uint64_t mask = BUCKETS - 1;
    int nd = (bits + DIGIT - 1) / DIGIT;
    memset(count, 0, (size_t)nd * BUCKETS * sizeof *count);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < nd; d++)
            count[d * BUCKETS + (a[i].k >> (d * DIGIT) & mask)]++;
    for (int d = 0; d < nd && n > 0; d++) {
        uint32_t *c = count + d * BUCKETS;
        int shift = d * DIGIT;
        if (c[a[0].k >> shift & mask] == n)
            continue; /* one value of this digit: the order stands */
        uint32_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            uint32_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[a[i].k >> shift & mask]++] = a[i];
        eo__mpair *t = a;
        a = tmp;
        tmp = t;
    }
    return a;
}

/* A double's bits as an unsigned integer of the same order (-0 before +0; no NaN here). */
static uint64_t double_key(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u >> 63 ? ~u : u | UINT64_C(1) << 63;
}

/* The exact key of the caller's ticket @p i: its key (the age order's runs share created_at),
 * or its rating. */
static uint64_t exact_key(const eo__mread *rd, uint32_t i, bool rating)
{
    return rating ? double_key(rd->rat[i].r) : rd->key[i];
}

/* Sorts the run a[0..n) of equal coarse keys by the exact key (its k set to it), stably, with
 * tmp as scratch: by insertion when short, else by radix. */
static void exact_run(const eo__mread *rd, eo__mpair *a, size_t n, eo__mpair *tmp, bool rating)
{
    for (size_t j = 0; j < n; j++)
        a[j].k = exact_key(rd, a[j].i, rating);
    if (n > 32) {
        eo__mpair *s = radix(a, tmp, n, 64, rd->count);
        if (s != a)
            memcpy(a, s, n * sizeof *a);
        return;
    }
    for (size_t j = 1; j < n; j++) {
        eo__mpair x = a[j];
        size_t i = j;
        for (; i > 0 && a[i - 1].k > x.k; i--)
            a[i] = a[i - 1];
        a[i] = x;
    }
}

/* Sorts s[0..n), whose k are coarse keys of @p bits bits, stably by the exact keys; returns
 * the sorted array (rd->pair or rd->tmp). */
static eo__mpair *coarse_then_exact(const eo__mread *rd, eo__mpair *s, size_t n, int bits,
                                    bool rating)
{
    s = radix(s, s == rd->pair ? rd->tmp : rd->pair, n, bits, rd->count);
    eo__mpair *t = s == rd->pair ? rd->tmp : rd->pair;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && s[b].k == s[a].k;)
            b++;
        if (b - a > 1)
            exact_run(rd, s + a, b - a, t, rating);
    }
    return s;
}

static int bits_of(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

/* Coarse keys of the age order in rd->pair, by the caller's index: created_at above the
 * highest bits in which keys differ, COARSE bits at least (more when created_at needs more,
 * to the next digit). Returns their bits. */
static int age_keys(const eo__mread *rd, size_t n)
{
    int a = bits_of((uint64_t)rd->at_hi - (uint64_t)rd->at_lo), kv = bits_of(rd->key_vary);
    int kb = a < COARSE ? COARSE - a : (a + DIGIT - 1) / DIGIT * DIGIT - a;
    kb = kb > kv ? kv : kb;
    kb = kb > 64 - a ? 64 - a : kb;
    /* The keys' bits kv - kb .. kv - 1: those above are the same for every key. */
    uint64_t kmask = kb ? (UINT64_C(1) << kb) - 1 : 0;
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        uint64_t at = (uint64_t)rd->at[i] - (uint64_t)rd->at_lo;
        uint64_t k = kb ? rd->key[i] >> (kv - kb) & kmask : 0;
        rd->pair[i] = (eo__mpair){kb ? at << kb | k : at, i};
    }
    return a + kb;
}

/* Coarse keys of the rating order in s[0..n) (the age order): floor((r - lo) * scale) over
 * COARSE bits, which never decreases as r grows (rounding keeps order). */
static void rating_keys(const eo__mread *rd, eo__mpair *s, size_t n)
{
    double lo = rd->r_lo, span = rd->r_hi - rd->r_lo;
    double scale = n > 0 ? (double)((UINT64_C(1) << COARSE) - 1) / span : 0.0;
    if (!isfinite(scale) || !isfinite(span))
        scale = 0.0; /* one rating, or a span too wide or too narrow: every key 0 */
    for (size_t j = 0; j < n; j++)
        s[j].k = scale > 0.0 ? (uint64_t)((rd->rat[s[j].i].r - lo) * scale) : 0;
}

void eo__match_orders(eo__mpass *p, eo__mread *rd)
{
    size_t n = p->n;
    int bits = age_keys(rd, n);
    eo__mpair *s = coarse_then_exact(rd, rd->pair, n, bits, false);
    for (size_t j = 0; j < n; j++) {
        rd->by_age[j] = s[j].i;
        p->at[j] = rd->at[s[j].i];
    }
    /* Rating over the age order: ties stay oldest first. */
    rating_keys(rd, s, n);
    s = coarse_then_exact(rd, s, n, COARSE, true);
    for (size_t j = 0; j < n; j++)
        rd->by_r[j] = s[j].i;
}
