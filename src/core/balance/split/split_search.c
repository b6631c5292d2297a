/* Branch and bound over the undecided players of one split problem (see split_internal.h).
 *
 * Players are visited by rating, highest first: the big ratings fix the shape of the split and
 * the small ones fine-tune it, so the bound below tightens fast and the first leaves are already
 * close (the order of the complete greedy algorithm for number partitioning). Correctness needs
 * only that every pruned subtree provably holds no completion with gap <= the current target. */
#include "split_internal.h"

#include "core/balance/common.h"
#include "evenodds/eo_common.h"

typedef struct search {
    eo__split_prob *p;
    int m;                          /* undecided players */
    uint8_t who[EO__SPLIT_N];       /* undecided players, by q descending */
    uint8_t may_bench[EO__SPLIT_N]; /* who[j] is FREE */
    int64_t pre[EO__SPLIT_N + 1];   /* pre[j] = q of who[0..j-1] */
    uint8_t must[EO__SPLIT_N + 1];  /* PLAY players among who[j..] */
    uint8_t must_par[EO__SPLIT_N + 1]; /* parity of their q sum */
    uint8_t free_odd[EO__SPLIT_N + 1];  /* FREE players among who[j..] with odd q */
    uint8_t free_even[EO__SPLIT_N + 1];
    uint8_t must_before[EO__SPLIT_N + 1]; /* PLAY players among who[0..j-1] */
    int nmust;
    int64_t must_pre[EO__SPLIT_N + 1];    /* prefix sums of q over the PLAY players only */
    int64_t target;                 /* prune what cannot reach gap <= target */
    int64_t stop;
    int found, done, err;
    uint64_t try_end;               /* p->work value where a heuristic try gives up; 0 = none */
    uint64_t budget_end;            /* p->work value where the table is asked instead; 0 = none */
    int budget_final;               /* 0: at budget_end, weigh the table's cost and extend */
    int64_t max_gap;
    uint64_t cur_a, cur_b;
    eo__split_sol best;
} search;

/* Nodes the search may spend on one question before the table of split_dp.c answers it. Most
 * questions settle within DP_BUDGET nodes (or, for big tables, COUNT_PER_NODE times fewer than
 * the cells the count below looks at). The ones that do not are proofs that no completion
 * reaches the gap, or hunts for one of the rare completions that do, over ratings crowded in a
 * narrow band (a young pool), where the search's interval bound cuts little; the table's time
 * depends on the width of its windows, not on the number of subtrees. Past that first budget
 * the search weighs the table's cost (eo__split_dp_words(): its windowed words and its memory)
 * and goes on for cost / DP_WORDS_PER_NODE more nodes, about what the table would take (a node
 * ~7 ns, a word of table ~1-2 ns with young pools), so a question costs at most a few times
 * what the cheaper of the two would. Tuned on bench_split's rows: a first budget of 2,000 sent
 * questions of normal ratings that settle by ~4,000 nodes to the table (slower normal rows),
 * 8,000 lengthened the young N = 24 tail; 2 or 4 words a node lengthened the young N = 64
 * tail, 16 and 32 did not shorten it further. */
#define DP_BUDGET 4000
#define DP_WORDS_PER_NODE 8
#define COUNT_PER_NODE 2
/* Questions without a max_gap (the least gap) keep the earlier rule: the table's bound on its
 * word operations over 8, at least 20,000 nodes (with whole tables a word costs ~10 ns
 * measured, page faults included, so a smaller budget sent questions of normal ratings that
 * settle soon after it to a dearer table). */
#define INF_BUDGET 20000
#define INF_WORDS_PER_NODE 8

/* Internal status of run(): the node budget before the table is asked ran out. */
#define OVER_BUDGET 3

/* 1 when the parity of the final difference is forced to be odd. The difference has the parity
 * of the playing players' rating sum, whichever team each is on; it is forced when the players
 * still to pick from the FREE ones cannot change it. */
static int parity_forced_odd(const search *s, int j, int64_t d, int need)
{
    int need_free = need - s->must[j];
    int fo = s->free_odd[j], fe = s->free_even[j];
    int extra;
    if (need_free == 0)
        extra = 0;
    else if (need_free == fo + fe)
        extra = fo & 1;
    else if (fo == 0)
        extra = 0;
    else if (fe == 0)
        extra = need_free & 1;
    else
        return 0;
    return (int)(((uint64_t)d + s->must_par[j] + (unsigned)extra) & 1u);
}

static void dfs(search *s, int j, int64_t d, int na, int nb)
{
    eo__split_prob *p = s->p;
    if (s->done)
        return;
    if (p->work_limit && p->work >= p->work_limit) {
        s->err = EO_ELIMIT;
        s->done = 1;
        return;
    }
    if (s->try_end && p->work >= s->try_end) {
        s->err = EO__SPLIT_GAVE_UP;
        s->done = 1;
        return;
    }
    if (s->budget_end && p->work >= s->budget_end) {
        if (!s->budget_final) {
            /* The question did not settle quickly: now weigh the table's cost (its windowed
             * words, which take a while to count) and go on for about as long as the table
             * would take (see DP_WORDS_PER_NODE). */
            s->budget_final = 1;
            s->budget_end = p->work + eo__split_dp_words(p, s->max_gap) / DP_WORDS_PER_NODE;
        }
        if (p->work >= s->budget_end) {
            s->err = OVER_BUDGET;
            s->done = 1;
            return;
        }
    }
    p->work++;

    int ka = p->k - na, kb = p->k - nb;
    int left = s->m - j;
    int need = ka + kb;
    if (need < s->must[j] || need > left)
        return;
    /* The extreme differences any completion can reach: A takes the ka highest remaining and B
     * the kb lowest, or the reverse. Since ka + kb <= left the two groups are disjoint. The
     * PLAY constraint is relaxed here, which only widens the interval. */
    const int64_t *pre = s->pre;
    int64_t hi, lo;
    if (need == s->must[j]) {
        /* No FREE player may play any more: the same bound over the PLAY players alone. */
        const int64_t *mp = s->must_pre;
        int b0 = s->must_before[j], e = s->nmust;
        hi = d + (mp[b0 + ka] - mp[b0]) - (mp[e] - mp[e - kb]);
        lo = d + (mp[e] - mp[e - ka]) - (mp[b0 + kb] - mp[b0]);
    } else {
        hi = d + (pre[j + ka] - pre[j]) - (pre[s->m] - pre[s->m - kb]);
        lo = d + (pre[s->m] - pre[s->m - ka]) - (pre[j + kb] - pre[j]);
    }
    if (hi < -s->target || lo > s->target)
        return;
    if (s->target == 0 && parity_forced_odd(s, j, d, need))
        return;
    if (need == 0) {
        /* Every remaining player sits out (need >= must[j] made sure none has to play), and
         * hi == lo == d is within the target. */
        s->found = 1;
        s->best.a = s->cur_a;
        s->best.b = s->cur_b;
        s->best.gap = eo__abs64(d);
        if (s->best.gap <= s->stop)
            s->done = 1;
        else
            s->target = s->best.gap - 1;
        return;
    }

    int who = s->who[j];
    int64_t q = p->q[who];
    uint64_t bit = UINT64_C(1) << who;
    /* Try first the move that leaves d closest to where the rest should take it: with ka' and
     * kb' players still to place on A and B from m' remaining of total R', a random completion
     * adds (ka' - kb') R' / m' on average, so aim d' at minus that (scaled by m' to stay in
     * integers; |d| < 2^49 and m' <= 64 keep it in range). Order only affects speed. */
    int m1 = left - 1;
    int64_t rest = pre[s->m] - pre[j + 1];
    int64_t scale = m1 > 0 ? m1 : 1;
    int64_t score[3];
    int opt[3], nopt = 0;
    if (ka > 0) {
        score[nopt] = eo__abs64((d + q) * scale + (int64_t)(ka - 1 - kb) * rest);
        opt[nopt++] = 1;
    }
    if (kb > 0) {
        score[nopt] = eo__abs64((d - q) * scale + (int64_t)(ka - kb + 1) * rest);
        opt[nopt++] = 2;
    }
    if (s->may_bench[j] && need < left) {
        score[nopt] = eo__abs64(d * scale + (int64_t)(ka - kb) * rest);
        opt[nopt++] = 0;
    }
    for (int x = 1; x < nopt; x++) /* stable insertion sort of at most three */
        for (int y = x; y > 0 && score[y] < score[y - 1]; y--) {
            int64_t ts = score[y];
            int to = opt[y];
            score[y] = score[y - 1];
            opt[y] = opt[y - 1];
            score[y - 1] = ts;
            opt[y - 1] = to;
        }
    for (int x = 0; x < nopt && !s->done; x++) {
        if (opt[x] == 1) {
            s->cur_a |= bit;
            dfs(s, j + 1, d + q, na + 1, nb);
            s->cur_a &= ~bit;
        } else if (opt[x] == 2) {
            s->cur_b |= bit;
            dfs(s, j + 1, d - q, na, nb + 1);
            s->cur_b &= ~bit;
        } else {
            dfs(s, j + 1, d, na, nb);
        }
    }
}

static int run(eo__split_prob *p, int64_t max_gap, int64_t stop_gap, eo__split_sol *sol,
               uint64_t budget, int final)
{
    search s;
    int64_t d = p->offset; /* the gap is |d| with the offset in (split_internal.h) */
    int na = 0, nb = 0;
    s.p = p;
    s.m = 0;
    s.cur_a = 0;
    s.cur_b = 0;
    for (int t = 0; t < p->n; t++) {
        int i = p->order[t];
        switch (p->status[i]) {
        case EO__SP_A:
            d += p->q[i];
            na++;
            s.cur_a |= UINT64_C(1) << i;
            break;
        case EO__SP_B:
            d -= p->q[i];
            nb++;
            s.cur_b |= UINT64_C(1) << i;
            break;
        case EO__SP_FREE:
        case EO__SP_PLAY:
            s.may_bench[s.m] = p->status[i] == EO__SP_FREE;
            s.who[s.m++] = (uint8_t)i;
            break;
        default:
            break;
        }
    }
    if (na > p->k || nb > p->k)
        return 0;
    s.pre[0] = 0;
    for (int j = 0; j < s.m; j++)
        s.pre[j + 1] = s.pre[j] + p->q[s.who[j]];
    s.nmust = 0;
    s.must_pre[0] = 0;
    for (int j = 0; j < s.m; j++) {
        s.must_before[j] = (uint8_t)s.nmust;
        if (!s.may_bench[j]) {
            s.must_pre[s.nmust + 1] = s.must_pre[s.nmust] + p->q[s.who[j]];
            s.nmust++;
        }
    }
    s.must_before[s.m] = (uint8_t)s.nmust;
    s.must[s.m] = 0;
    s.must_par[s.m] = 0;
    s.free_odd[s.m] = 0;
    s.free_even[s.m] = 0;
    for (int j = s.m - 1; j >= 0; j--) {
        int odd = (int)(p->q[s.who[j]] & 1);
        s.must[j] = (uint8_t)(s.must[j + 1] + !s.may_bench[j]);
        s.must_par[j] = (uint8_t)(s.must_par[j + 1] ^ (!s.may_bench[j] && odd));
        s.free_odd[j] = (uint8_t)(s.free_odd[j + 1] + (s.may_bench[j] && odd));
        s.free_even[j] = (uint8_t)(s.free_even[j + 1] + (s.may_bench[j] && !odd));
    }
    s.target = max_gap;
    s.stop = stop_gap;
    s.found = 0;
    s.done = 0;
    s.err = 0;
    s.try_end = p->try_limit ? p->work + p->try_limit : 0;
    s.budget_end = budget ? p->work + budget : 0;
    s.budget_final = final;
    s.max_gap = max_gap;
    s.best.a = s.best.b = 0;
    s.best.gap = 0;
    dfs(&s, 0, d, na, nb);
    if (s.err)
        return s.err;
    if (s.found)
        *sol = s.best;
    return s.found;
}


int eo__split_search(eo__split_prob *p, int64_t max_gap, int64_t stop_gap, eo__split_sol *sol)
{
    uint64_t count = 0, cost = p->try_limit ? 0 : eo__split_dp_cost(p, &count);
    if (cost == 0)
        return run(p, max_gap, stop_gap, sol, 0, 1);
    int rc;
    if (p->dp_budget) {
        rc = run(p, max_gap, stop_gap, sol, p->dp_budget, 1);
    } else if (max_gap >= EO__SPLIT_INF) {
        /* The least gap (step 1): no window cuts the table, which then costs about what
         * eo__split_dp_cost() says; these questions rarely get here. */
        uint64_t budget = cost / INF_WORDS_PER_NODE;
        rc = run(p, max_gap, stop_gap, sol, budget > INF_BUDGET ? budget : INF_BUDGET, 1);
    } else {
        /* the table's words are counted only once the search spent several times what
         * counting costs (a node ~ COUNT_PER_NODE cells) */
        uint64_t first = count / COUNT_PER_NODE > DP_BUDGET ? count / COUNT_PER_NODE : DP_BUDGET;
        rc = run(p, max_gap, stop_gap, sol, p->dp_first ? p->dp_first : first, 0);
    }
    if (rc != OVER_BUDGET)
        return rc;
    rc = eo__split_dp(p, max_gap, sol);
    if (rc == 1 && !eo__split_check(p, max_gap, sol))
        return EO_EINTERNAL; /* the read-back split must keep every status */
    if (rc >= 0)
        return rc; /* a completion of least gap: within the contract whatever stop_gap is */
    return run(p, max_gap, stop_gap, sol, 0, 1);
}
