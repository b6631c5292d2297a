/* Split quality (bench/README.md): common team-making heuristics against eo_balance_solve() over
 * random 12v12 instances with current teams and parties.
 *
 *   bench_quality [instances [seed]]
 *
 * (default 1,000 instances, seed 1.) An instance: 24 players, ratings normal(1000, 300) rounded
 * and clamped to >= 100 (bench_split's generator); 1 to 4 parties of 2 to 4 players each (sizes
 * uniform, members drawn at random; 2 to 16 players in parties, 7.5 on average); current teams
 * from a random previous assignment of 12 and 12 that kept each party together (parties first,
 * each to a random team with room, then the others at random).
 *
 * Methods (all 12v12, nobody benched):
 * - alternation: ratings sorted descending, picks A B A B ...;
 * - snake draft: sorted descending, A B B A A B B A ...;
 * - greedy draft: sorted descending, each pick to the team with the smaller sum (A on a tie)
 *   that still has room;
 * - greedy draft, parties first as units: the same over units (a party is one pick with its
 *   sum): parties first (larger first, then by sum), then the others by rating, each unit to the
 *   weaker team with room (a party always fits: parties hold at most 16 players);
 * - greedy draft, units by sum: units in descending order of rating sum, each to the weaker team
 *   with room; when a party fits on neither team, that instance takes the parties-first order
 *   (counted and printed);
 * - best-swap descent: from the current teams, the A-B exchange that most reduces the gap, until
 *   none reduces it;
 * - best-swap descent, party members stay: the same, exchanging only players not in a party;
 * - ours: eo_balance_solve() with k = 12, parties unsplittable, in scramble and in rebalance mode,
 *   with epsilon 0 (the least gap first) and epsilon 96 (the default tolerance
 *   |P(A) - 0.5| <= 0.01 under SynElo's default logistic scale theta = 2400:
 *   2400 * ln(0.51 / 0.49) = 96.0 rating units), work limit 10^7 nodes per call.
 * Only the "units", "party members stay" and "ours" rows know about parties.
 *
 * Columns: the mean gap |ΣA - ΣB| and the share of instances with gap <= 1; players moved from
 * their current team, counted with the better naming of the two new teams (a scramble can give
 * either new team either side: min(m, 24 - m)); broken parties (parties not all on one team):
 * the mean per instance and the share of instances with any; the spread difference
 * |sd(A) - sd(B)| (population standard deviations of the team ratings); the share of instances
 * whose two best players share a team. Ours' own terms are checked against these recomputed
 * figures (gap, moves in rebalance mode, broken = 0), and a mismatch fails the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "evenodds/eo_balance.h"

#define N 24
#define K 12
#define EPS_P01 96 /* 2400 * ln(0.51 / 0.49) = 96.02 */

static int rng_below(uint64_t *s, int n) /* [0, n), bias negligible here */
{
    return (int)(bench_rng_next(s) % (uint64_t)n);
}

static void shuffle(uint64_t *s, int *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rng_below(s, i + 1), t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* One instance. side: 1 = A, 2 = B (eo_balance_side). party: 0 = none, else 1..4. */
typedef struct inst {
    int64_t r[N];
    int party[N];
    int cur[N];
    int nparty;
} inst;

static void gen(uint64_t *s, inst *x)
{
    int perm[N], cnt[3] = {0, 0, 0};
    memset(x, 0, sizeof *x);
    for (int i = 0; i < N; i++) {
        x->r[i] = bench_normal_rating(s);
        perm[i] = i;
    }
    shuffle(s, perm, N);
    x->nparty = 1 + rng_below(s, 4);
    int at = 0;
    for (int p = 1; p <= x->nparty; p++) {
        int size = 2 + rng_below(s, 3);
        int side = 1 + rng_below(s, 2);
        if (cnt[side] + size > K)
            side = 3 - side; /* the other has room: at most 12 placed so far */
        for (int m = 0; m < size; m++) {
            x->party[perm[at]] = p;
            x->cur[perm[at++]] = side;
        }
        cnt[side] += size;
    }
    for (; at < N; at++) {
        int side = 1 + rng_below(s, 2);
        if (cnt[side] == K)
            side = 3 - side;
        x->cur[perm[at]] = side;
        cnt[side]++;
    }
}

static const inst *g_sort_inst; /* qsort has no context argument; set just before each sort */

static int by_rating_desc(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int64_t ri = g_sort_inst->r[i], rj = g_sort_inst->r[j];
    return ri != rj ? (ri < rj) - (ri > rj) : (i > j) - (i < j);
}

static void sorted(const inst *x, int *ord)
{
    for (int i = 0; i < N; i++)
        ord[i] = i;
    g_sort_inst = x;
    qsort(ord, N, sizeof *ord, by_rating_desc);
}

static void alternation(const inst *x, int *side)
{
    int ord[N];
    sorted(x, ord);
    for (int i = 0; i < N; i++)
        side[ord[i]] = i % 2 ? 2 : 1;
}

static void snake(const inst *x, int *side)
{
    int ord[N];
    sorted(x, ord);
    for (int i = 0; i < N; i++)
        side[ord[i]] = (i % 4 == 0 || i % 4 == 3) ? 1 : 2;
}

/* Greedy draft over units; with parties = 0 every player is a unit. */
static void greedy(const inst *x, int parties, int *side)
{
    int ord[N];
    sorted(x, ord);
    int64_t sum[3] = {0, 0, 0};
    int cnt[3] = {0, 0, 0};
    if (parties) {
        /* parties: larger first, then by sum; at most 4, so a simple selection */
        int done[5] = {0};
        for (int round = 0; round < x->nparty; round++) {
            int best = 0, bsize = 0;
            int64_t bsum = 0;
            for (int p = 1; p <= x->nparty; p++) {
                if (done[p])
                    continue;
                int size = 0;
                int64_t ps = 0;
                for (int i = 0; i < N; i++)
                    if (x->party[i] == p) {
                        size++;
                        ps += x->r[i];
                    }
                if (!best || size > bsize || (size == bsize && ps > bsum)) {
                    best = p;
                    bsize = size;
                    bsum = ps;
                }
            }
            done[best] = 1;
            int t = sum[1] <= sum[2] ? 1 : 2;
            if (cnt[t] + bsize > K)
                t = 3 - t;
            for (int i = 0; i < N; i++)
                if (x->party[i] == best)
                    side[i] = t;
            sum[t] += bsum;
            cnt[t] += bsize;
        }
    }
    for (int o = 0; o < N; o++) {
        int i = ord[o];
        if (parties && x->party[i])
            continue;
        int t = sum[1] <= sum[2] ? 1 : 2;
        if (cnt[t] == K)
            t = 3 - t;
        side[i] = t;
        sum[t] += x->r[i];
        cnt[t]++;
    }
}

/* Greedy draft over units (a party is one unit with its rating sum, a player outside parties
 * another) in descending order of sum, each to the weaker team that has room for it. Returns 0,
 * or 1 when a party fits on neither team (side[] is then incomplete). */
static int greedy_units(const inst *x, int *side)
{
    int64_t usum[N];
    int usize[N], uparty[N], uord[N], nu = 0;
    for (int p = 1; p <= x->nparty; p++) {
        usum[nu] = 0;
        usize[nu] = 0;
        uparty[nu] = p;
        for (int i = 0; i < N; i++)
            if (x->party[i] == p) {
                usum[nu] += x->r[i];
                usize[nu]++;
            }
        nu++;
    }
    for (int i = 0; i < N; i++)
        if (!x->party[i]) {
            usum[nu] = x->r[i];
            usize[nu] = 1;
            uparty[nu++] = -1 - i;
        }
    for (int u = 0; u < nu; u++) { /* insertion sort: sum descending, then as listed */
        int v = u;
        for (; v > 0 && usum[uord[v - 1]] < usum[u]; v--)
            uord[v] = uord[v - 1];
        uord[v] = u;
    }
    int64_t sum[3] = {0, 0, 0};
    int cnt[3] = {0, 0, 0};
    for (int o = 0; o < nu; o++) {
        int u = uord[o];
        int t = sum[1] <= sum[2] ? 1 : 2;
        if (cnt[t] + usize[u] > K)
            t = 3 - t;
        if (cnt[t] + usize[u] > K)
            return 1;
        if (uparty[u] < 0) {
            side[-1 - uparty[u]] = t;
        } else {
            for (int i = 0; i < N; i++)
                if (x->party[i] == uparty[u])
                    side[i] = t;
        }
        sum[t] += usum[u];
        cnt[t] += usize[u];
    }
    return 0;
}

/* Best-swap descent from the current teams; with parties = 1 party members do not move. */
static void descent(const inst *x, int parties, int *side)
{
    int64_t d = 0;
    for (int i = 0; i < N; i++) {
        side[i] = x->cur[i];
        d += side[i] == 1 ? x->r[i] : -x->r[i];
    }
    for (;;) {
        int bi = -1, bj = -1;
        int64_t best = d < 0 ? -d : d;
        for (int i = 0; i < N; i++) {
            if (side[i] != 1 || (parties && x->party[i]))
                continue;
            for (int j = 0; j < N; j++) {
                if (side[j] != 2 || (parties && x->party[j]))
                    continue;
                int64_t nd = d - 2 * (x->r[i] - x->r[j]);
                if (nd < 0)
                    nd = -nd;
                if (nd < best) {
                    best = nd;
                    bi = i;
                    bj = j;
                }
            }
        }
        if (bi < 0)
            return;
        d -= 2 * (x->r[bi] - x->r[bj]);
        side[bi] = 2;
        side[bj] = 1;
    }
}

typedef struct stats {
    const char *name;
    int count, gap_le1, any_broken, top2_same, exact, errors;
    double gap, moved, broken, spread, time_us;
} stats;

/* Figures of one answer. Returns the recomputed gap, moves (raw: this naming) and broken. */
static void measure(const inst *x, const int *side, stats *st, int64_t *gap_out, int *moved_out,
                    int *broken_out)
{
    int64_t sa = 0, sb = 0;
    double qa = 0, qb = 0;
    int na = 0, nb = 0, moved = 0, broken = 0;
    for (int i = 0; i < N; i++) {
        double v = (double)x->r[i];
        if (side[i] == 1) {
            sa += x->r[i];
            qa += v * v;
            na++;
        } else {
            sb += x->r[i];
            qb += v * v;
            nb++;
        }
        moved += side[i] != x->cur[i];
    }
    for (int p = 1; p <= x->nparty; p++) {
        int seen = 0;
        for (int i = 0; i < N; i++)
            if (x->party[i] == p)
                seen |= side[i];
        broken += seen == 3;
    }
    if (na != K || nb != K) {
        fprintf(stderr, "%s: teams of %d and %d\n", st->name, na, nb);
        st->errors++;
    }
    double ma = (double)sa / K, mb = (double)sb / K;
    double sda = sqrt(fmax(0.0, qa / K - ma * ma)), sdb = sqrt(fmax(0.0, qb / K - mb * mb));
    int ord[N];
    sorted(x, ord);
    int64_t gap = sa > sb ? sa - sb : sb - sa;
    st->count++;
    st->gap += (double)gap;
    st->gap_le1 += gap <= 1;
    st->moved += moved < N - moved ? moved : N - moved;
    st->broken += broken;
    st->any_broken += broken > 0;
    st->spread += fabs(sda - sdb);
    st->top2_same += side[ord[0]] == side[ord[1]];
    *gap_out = gap;
    *moved_out = moved;
    *broken_out = broken;
}

/* Runs ours and checks its answer: a gap above @p bound (what a feasible split reached) is an
 * error. Returns the gap, or -1 on error. */
static int64_t ours(const inst *x, eo_balance_mode mode, int64_t eps, int64_t bound, stats *st)
{
    eo_balance_player p[N];
    memset(p, 0, sizeof p);
    for (int i = 0; i < N; i++) {
        p[i].rating = x->r[i];
        p[i].party = (uint32_t)x->party[i];
        p[i].team = (uint8_t)x->cur[i];
    }
    eo_balance_request req;
    memset(&req, 0, sizeof req);
    req.mode = mode;
    req.k_min = req.k_max = K;
    req.epsilon = eps;
    req.work_limit = UINT64_C(10000000);
    eo_balance_result *res = NULL;
    double t0 = bench_now_us();
    int rc = eo_balance_solve(p, N, &req, &res, NULL);
    st->time_us += bench_now_us() - t0;
    if (rc == 0 && res->count != 1)
        rc = EO_EINTERNAL;
    if (rc == 0)
        rc = res->split[0].err;
    if (rc != 0) {
        fprintf(stderr, "%s: eo_balance_solve: %s\n", st->name, eo_strerror(rc));
        st->errors++;
        eo_balance_free(res);
        return -1;
    }
    const eo_balance_split *sp = &res->split[0];
    int side[N] = {0};
    for (int i = 0; i < K; i++) {
        side[sp->a[i]] = 1;
        side[sp->b[i]] = 2;
    }
    int64_t gap;
    int moved, broken;
    measure(x, side, st, &gap, &moved, &broken);
    st->exact += sp->exact;
    if (gap != sp->gap || broken != 0 || sp->terms.broken != 0 ||
        (mode == EO_BALANCE_REBALANCE && moved != sp->terms.moves) ||
        (sp->exact && gap > bound)) {
        fprintf(stderr,
                "%s: terms disagree (gap %lld/%lld, bound %lld, moved %d/%lld, broken %d)\n",
                st->name, (long long)gap, (long long)sp->gap, (long long)bound, moved,
                (long long)sp->terms.moves, broken);
        st->errors++;
        gap = -1;
    }
    eo_balance_free(res);
    return gap;
}

enum { ALT, SNAKE, GREEDY, GREEDY_P, GREEDY_U, DESC, DESC_P, SCR0, REB0, SCR96, REB96, NMETH };

int main(int argc, char **argv)
{
    int count = 1000;
    uint64_t seed = 1;
    char *end;
    if (argc > 1) {
        long v = strtol(argv[1], &end, 10);
        if (*end || v < 1 || v > 10000000) {
            fprintf(stderr, "usage: bench_quality [instances [seed]]\n");
            return 2;
        }
        count = (int)v;
    }
    if (argc > 2) {
        seed = strtoull(argv[2], &end, 10);
        if (*end) {
            fprintf(stderr, "usage: bench_quality [instances [seed]]\n");
            return 2;
        }
    }
    stats st[NMETH];
    memset(st, 0, sizeof st);
    static const char *names[NMETH] = {
        "alternation (ABAB)",          "snake draft (ABBA)",
        "greedy draft",                "greedy draft, parties first as units",
        "greedy draft, units by sum",
        "best-swap descent",           "best-swap descent, party members stay",
        "ours, scramble, ε = 0",       "ours, rebalance, ε = 0",
        "ours, scramble, ε = 96",      "ours, rebalance, ε = 96"};
    for (int m = 0; m < NMETH; m++)
        st[m].name = names[m];
    uint64_t s = seed;
    double party_players = 0, cur_gap = 0;
    int dead_ends = 0;
    for (int c = 0; c < count; c++) {
        inst x;
        gen(&s, &x);
        int64_t d = 0;
        for (int i = 0; i < N; i++) {
            party_players += x.party[i] != 0;
            d += x.cur[i] == 1 ? x.r[i] : -x.r[i];
        }
        cur_gap += (double)(d < 0 ? -d : d);
        int side[N], moved, broken;
        int64_t gap;
        alternation(&x, side);
        measure(&x, side, &st[ALT], &gap, &moved, &broken);
        snake(&x, side);
        measure(&x, side, &st[SNAKE], &gap, &moved, &broken);
        greedy(&x, 0, side);
        measure(&x, side, &st[GREEDY], &gap, &moved, &broken);
        greedy(&x, 1, side);
        measure(&x, side, &st[GREEDY_P], &gap, &moved, &broken);
        int64_t bound = gap; /* a split that keeps the parties */
        if (greedy_units(&x, side)) {
            greedy(&x, 1, side); /* a party fit nowhere: the parties-first order */
            dead_ends++;
        }
        measure(&x, side, &st[GREEDY_U], &gap, &moved, &broken);
        if (gap < bound)
            bound = gap;
        descent(&x, 0, side);
        measure(&x, side, &st[DESC], &gap, &moved, &broken);
        descent(&x, 1, side);
        measure(&x, side, &st[DESC_P], &gap, &moved, &broken);
        if (gap < bound)
            bound = gap;
        /* ε = 0: no more than a party-keeping heuristic; both modes the same least gap g;
         * ε = 96: no more than max(g, 96) */
        int64_t g = ours(&x, EO_BALANCE_SCRAMBLE, 0, bound, &st[SCR0]);
        int64_t g2 = ours(&x, EO_BALANCE_REBALANCE, 0, bound, &st[REB0]);
        if (g != g2) {
            fprintf(stderr, "instance %d: least gap %lld in scramble, %lld in rebalance\n", c,
                    (long long)g, (long long)g2);
            st[REB0].errors++;
        }
        if (g < 0)
            g = bound;
        ours(&x, EO_BALANCE_SCRAMBLE, EPS_P01, g > EPS_P01 ? g : EPS_P01, &st[SCR96]);
        ours(&x, EO_BALANCE_REBALANCE, EPS_P01, g > EPS_P01 ? g : EPS_P01, &st[REB96]);
    }
    printf("# %d random 12v12 instances (seed %llu): %.2f players in parties on average; the "
           "current teams' mean gap %.1f\n",
           count, (unsigned long long)seed, party_players / count, cur_gap / count);
    printf("\n| method | mean gap | gap ≤ 1 | mean players moved | broken parties (mean; "
           "instances with any) | mean \\|sd(A) − sd(B)\\| | two best on one team |\n");
    printf("|---|---:|---:|---:|---:|---:|---:|\n");
    int errors = 0;
    for (int m = 0; m < NMETH; m++) {
        const stats *x = &st[m];
        double n = x->count ? x->count : 1;
        printf("| %s | %.1f | %.1f %% | %.2f | %.3f; %.1f %% | %.1f | %.1f %% |\n", x->name,
               x->gap / n, 100.0 * x->gap_le1 / n, x->moved / n, x->broken / n,
               100.0 * x->any_broken / n, x->spread / n, 100.0 * x->top2_same / n);
        errors += x->errors;
    }
    printf("\nours: exact answers and mean time per call (k = 12 only; work limit 10^7 nodes):\n");
    for (int m = SCR0; m < NMETH; m++)
        printf("  %-24s exact %d/%d, mean %.0f µs\n", st[m].name, st[m].exact, st[m].count,
               st[m].count ? st[m].time_us / st[m].count : 0.0);
    printf("greedy draft, units by sum: a party fit on neither team in %d instances (the "
           "parties-first order answered those)\n",
           dead_ends);
    if (errors)
        printf("FAILED: %d errors (see the messages above)\n", errors);
    return errors != 0;
}
