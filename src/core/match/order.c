/* The pass's two orders of tickets, by age and by rating (docs/MATCHMAKING.md, "The matcher").
 * Each is sorted first by a coarse key of 22 to 32 bits that never decreases as the exact order
 * grows, then each run of equal coarse keys by the exact key (runs are short but where tickets
 * are equal). An item is one 64-bit word, the coarse key above the caller's index, so that a
 * sort moves 8 bytes a ticket (the sorts are memory-bound). The radix sort (stable, least
 * significant digit first) reads its items in order and writes them to 2,048 places per digit,
 * after counting every digit in one read; a digit that is the same for all keys is skipped. */
#include <math.h>
#include <string.h>

#include "match_internal.h"

#define DIGIT EO__MSORT_DIGIT
#define BUCKETS (1u << DIGIT)
_Static_assert(EO__MSORT_DIGITS *DIGIT >= 32, "the digits cover a key");

/* Bits of the coarse rating keys: two digits. */
#define COARSE (2 * DIGIT)

/* An item: @p key (32 bits at most) above the caller's index @p i. */
static uint64_t item(uint64_t key, uint32_t i)
{
    return key << 32 | i;
}
static uint32_t index_of(uint64_t x)
{
    return (uint32_t)x;
}

/* Sorts a[0..n) stably by their keys, whose bits from @p bits on are 0, with tmp (n items)
 * and count (EO__MSORT_COUNTS) as scratch; returns the sorted array (a or tmp). */
static uint64_t *radix(uint64_t *a, uint64_t *tmp, size_t n, int bits, uint32_t *count)
{
    static const uint64_t mask = BUCKETS - 1;
    int nd = (bits + DIGIT - 1) / DIGIT;
    memset(count, 0, (size_t)nd * BUCKETS * sizeof *count);
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < nd; d++)
            count[d * BUCKETS + (a[i] >> (32 + d * DIGIT) & mask)]++;
    for (int d = 0; d < nd && n > 0; d++) {
        uint32_t *c = count + d * BUCKETS;
        int shift = 32 + d * DIGIT;
        if (c[a[0] >> shift & mask] == n)
            continue; /* one value of this digit: the order stands */
        uint32_t sum = 0;
        for (size_t b = 0; b < BUCKETS; b++) {
            uint32_t v = c[b];
            c[b] = sum;
            sum += v;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[a[i] >> shift & mask]++] = a[i];
        uint64_t *t = a;
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

/* What an exact order compares: the key (the age order's runs share created_at), the rating,
 * or created_at (offset from the least, so that unsigned order is its order). */
typedef enum value { KEY, RATING, AGE } value;

static uint64_t value_of(const eo__mread *rd, uint32_t i, value v)
{
    return v == KEY      ? rd->key[i]
           : v == RATING ? double_key(rd->rat[i].r)
                         : (uint64_t)rd->at[i] - (uint64_t)rd->at_lo;
}

/* Sorts a[0..n) stably by each ticket's 64-bit value @p v: two radix sorts of 32 bits, the
 * low half first. Returns the sorted array (a or tmp); the items' keys are the value's high
 * half then. */
static uint64_t *by_value(const eo__mread *rd, uint64_t *a, uint64_t *tmp, size_t n, value v)
{
    for (int half = 0; half < 64; half += 32) {
        for (size_t j = 0; j < n; j++)
            a[j] = item(value_of(rd, index_of(a[j]), v) >> half & UINT32_MAX, index_of(a[j]));
        uint64_t *s = radix(a, tmp, n, 32, rd->count);
        tmp = s == a ? tmp : a;
        a = s;
    }
    return a;
}

/* Sorts the run a[0..n) of equal coarse keys by the exact value @p v, stably, with tmp as
 * scratch: by insertion when short, else by radix. Only the items' indices count after. */
static void exact_run(const eo__mread *rd, uint64_t *a, size_t n, uint64_t *tmp, value v)
{
    if (n > 32) {
        uint64_t *s = by_value(rd, a, tmp, n, v);
        if (s != a)
            memcpy(a, s, n * sizeof *a);
        return;
    }
    uint64_t k[32];
    for (size_t j = 0; j < n; j++)
        k[j] = value_of(rd, index_of(a[j]), v);
    for (size_t j = 1; j < n; j++) {
        uint64_t x = a[j], kx = k[j];
        size_t i = j;
        for (; i > 0 && k[i - 1] > kx; i--)
            a[i] = a[i - 1], k[i] = k[i - 1];
        a[i] = x, k[i] = kx;
    }
}

/* Sorts s[0..n), whose keys are coarse keys of @p bits bits, stably by the exact values @p v;
 * returns the sorted array (rd->item or rd->tmp). */
static uint64_t *coarse_then_exact(const eo__mread *rd, uint64_t *s, size_t n, int bits, value v)
{
    s = radix(s, s == rd->item ? rd->tmp : rd->item, n, bits, rd->count);
    uint64_t *t = s == rd->item ? rd->tmp : rd->item;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && s[b] >> 32 == s[a] >> 32;)
            b++;
        if (b - a > 1)
            exact_run(rd, s + a, b - a, t, v);
    }
    return s;
}

static int bits_of(uint64_t x)
{
    return x ? 64 - __builtin_clzll(x) : 0;
}

/* The age order (created_at, key, index) in rd->item or rd->tmp, returned. Coarse keys:
 * created_at above the highest bits in which keys differ, COARSE bits at least (more when
 * created_at needs more, to the next digit, 32 at most). Ages that span more than 32 bits
 * (not Unix seconds of this century) are sorted by their exact values alone. */
static uint64_t *age_order(const eo__mread *rd, size_t n)
{
    int a = bits_of((uint64_t)rd->at_hi - (uint64_t)rd->at_lo), kv = bits_of(rd->key_vary);
    for (uint32_t i = 0; i < (uint32_t)n; i++)
        rd->item[i] = item(0, i);
    if (a > 32) {
        uint64_t *s = by_value(rd, rd->item, rd->tmp, n, KEY);
        return by_value(rd, s, s == rd->item ? rd->tmp : rd->item, n, AGE);
    }
    int kb = a < COARSE ? COARSE - a : (a + DIGIT - 1) / DIGIT * DIGIT - a;
    kb = kb > kv ? kv : kb;
    kb = kb > 32 - a ? 32 - a : kb;
    /* The keys' bits kv - kb .. kv - 1: those above are the same for every key. */
    uint64_t kmask = kb ? (UINT64_C(1) << kb) - 1 : 0;
    for (uint32_t i = 0; i < (uint32_t)n; i++) {
        uint64_t at = (uint64_t)rd->at[i] - (uint64_t)rd->at_lo;
        uint64_t k = kb ? rd->key[i] >> (kv - kb) & kmask : 0;
        rd->item[i] = item(kb ? at << kb | k : at, i);
    }
    return coarse_then_exact(rd, rd->item, n, a + kb, KEY);
}

/* Coarse keys of the rating order, by the caller's index in rd->coarse: floor((r - lo) *
 * scale) over COARSE bits, which never decreases as r grows (rounding keeps order). Read in
 * the caller's order, so that the age order then reads 4 bytes a ticket out of place. */
static void rating_keys(const eo__mread *rd, size_t n)
{
    double lo = rd->r_lo, span = rd->r_hi - rd->r_lo;
    double scale = n > 0 ? (double)((UINT64_C(1) << COARSE) - 1) / span : 0.0;
    if (!isfinite(scale) || !isfinite(span))
        scale = 0.0; /* one rating, or a span too wide or too narrow: every key 0 */
    for (size_t i = 0; i < n; i++)
        rd->coarse[i] = scale > 0.0 ? (uint32_t)((rd->rat[i].r - lo) * scale) : 0;
}

void eo__match_orders(eo__mpass *p, eo__mread *rd)
{
    size_t n = p->n;
    uint64_t *s = age_order(rd, n);
    rating_keys(rd, n);
    for (size_t j = 0; j < n; j++) {
        uint32_t i = index_of(s[j]);
        rd->by_age[j] = i;
        p->at[j] = rd->at[i];
        /* Rating over the age order: ties stay oldest first. */
        s[j] = item(rd->coarse[i], i);
    }
    s = coarse_then_exact(rd, s, n, COARSE, RATING);
    for (size_t j = 0; j < n; j++)
        rd->by_r[j] = index_of(s[j]);
}
