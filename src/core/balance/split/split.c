/* Exact team splits (seed 000 F7): validation, normalisation, the tie rules and the result
 * block. docs/BALANCER.md states the rules and the proof.
 *
 * For each k the answer is built from exact questions, so it is optimal and follows the tie
 * rules by construction:
 *   1. g = the least gap over all splits allowed by the bench mode;
 *   2. the playing set, player by player in request order: play if some split with gap g
 *      still exists with this player playing and the earlier decisions kept, else sit out;
 *   3. team A over the playing set: the lexicographically first A among its splits with gap g.
 * A witness split kept from the last "yes" answers most questions without any work; cheap
 * witnesses (split_repair.c, windows) answer most other "yes" questions; the "no" answers are
 * proofs by the oracle that fits the question: the table of split_small.c (k <= 6), meet in the
 * middle (split_mitm.c: at most one undecided player still to play, k <= 10; step 3 for
 * 2k <= 24), else the branch and bound of split_search.c. */
#include "evenodds/eo_split.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "split_internal.h"
#include "core/balance/common.h"

#define RATING_MAX (INT64_C(1) << 40)

/* The players after i undecided again, as the witness tries below found them. */
static void free_after(eo__split_prob *p, int i)
{
    for (int j = i + 1; j < p->n; j++)
        p->status[j] = EO__SP_FREE;
}

/* Cheap witnesses for "player i plays" (the players after i are undecided and `still` more of
 * them are needed): fixed playing sets made of the decided players, i, and the lowest-indexed
 * undecided ones, or that set with its last member swapped for one of the next few. Usually
 * the first has a split with gap g (ratings are dense), and when a parity clash rules it out
 * a swap fixes it. Each try is a search capped at TRY_NODES, so a miss proves nothing and
 * costs little; the exact search follows. Returns 1 with *w set, 0 on a miss, < 0 on error. */
#define TRY_SWAPS 6
#define TRY_NODES 2000
static int try_playing_sets(eo__split_prob *p, int64_t g, int i, int still, eo__split_sol *w)
{
    int n = p->n, rc = 0;
    int tries = still > 0 ? 1 + TRY_SWAPS : 1;
    p->try_limit = TRY_NODES;
    for (int t = 0; t < tries && rc == 0; t++) {
        int extra = still - 1 + t; /* position of the last member among the undecided */
        if (i + 1 + extra >= n)
            break;
        for (int j = i + 1; j < n; j++) {
            int u = j - i - 1;
            p->status[j] = (u < still - 1 || u == extra) ? EO__SP_PLAY : EO__SP_BENCH;
        }
        eo__split_sol alt;
        rc = eo__split_search(p, g, g, &alt);
        if (rc == 1)
            *w = alt;
        else if (rc == EO__SPLIT_GAVE_UP)
            rc = 0;
    }
    p->try_limit = 0;
    free_after(p, i);
    return rc;
}

/* Above, the search answers the one-late-player questions faster on average than listing the
 * halves (2^k entries each) does. */
#define MITM_MAX_K 10

/* Cheap witnesses for "player i plays" when r >= 2 more are needed, for k <= MITM_MAX_K: the
 * first r - 1 undecided players of a window play, and the last one is chosen exactly by
 * eo__split_mitm() among the other undecided players. Windows start at the first few
 * undecided players. Returns 1 with *w set, 0 on a miss (which proves nothing), < 0 on error. */
#define WINDOW_TRIES 3
static int try_windows(eo__split_prob *p, int64_t g, int i, int r, eo__split_sol *w)
{
    int n = p->n, rc = 0;
    for (int v = 0; v < WINDOW_TRIES && rc == 0; v++) {
        if (i + 1 + v + r > n) /* the window and one more must fit */
            break;
        for (int j = i + 1; j < n; j++) {
            int u = j - i - 1;
            p->status[j] = u >= v && u < v + r - 1 ? EO__SP_PLAY : EO__SP_FREE;
        }
        eo__split_sol alt;
        rc = eo__split_mitm(p, p->scratch, g, &alt);
        if (rc == 1)
            *w = alt;
        else if (rc < 0)
            rc = 0;
    }
    free_after(p, i);
    return rc;
}

/* The "who plays" question for player i (now PLAY; r more of the undecided players after him
 * must play), given the witness w that benches him: 1 with *alt a split with gap <= g that
 * keeps every status, 0 when none exists, < 0 on error. Cheap witnesses first (each miss
 * proves nothing), then an exact answer: the table or meet in the middle where they apply,
 * else the search. */
static int ask_plays(eo__split_prob *p, eo__split_table *tab, eo__split_table *tmp, int i,
                     int r, int64_t g, const eo__split_sol *w, eo__split_sol *alt)
{
    int use_tab = tab != NULL;
    *alt = *w;
    int rc;
    if (use_tab && r <= EO__SPLIT_TABLE_MAXR) {
        /* exact and cheap: no repair first (its witness would not be needed) */
        rc = eo__split_table_ask(tab, p, i, r, g, alt);
        return rc < 0 ? EO_EINTERNAL : rc;
    }
    if (!use_tab && p->k <= MITM_MAX_K && r <= 1) {
        rc = eo__split_mitm(p, p->scratch, g, alt);
        if (rc >= 0)
            return rc;
    }
    rc = eo__split_repair(p, i, g, alt);
    if (rc != 0)
        return rc;
    if (use_tab)
        rc = eo__split_table_try(tab, tmp, p, i, r, g, alt);
    else if (p->k <= MITM_MAX_K && r >= 2)
        rc = try_windows(p, g, i, r, alt);
    if (rc == 0 && !use_tab && p->k > MITM_MAX_K)
        rc = try_playing_sets(p, g, i, r, alt);
    if (rc == 0)
        rc = eo__split_search(p, g, g, alt);
    return rc;
}

/* Step 2 of the file comment. On entry every status is FREE and w a split with gap g. */
static int choose_players(eo__split_prob *p, int64_t g, eo__split_sol *w)
{
    int n = p->n, need = 2 * p->k, in = 0;
    /* Small k: the PLAY players' side assignments, kept between questions (split_small.c). */
    eo__split_table *tab = eo__split_scratch_tables(p->scratch), *tmp = tab + 1;
    int use_tab = p->k <= EO__SPLIT_TABLE_K;
    if (use_tab)
        eo__split_table_init(tab, p->k);
    for (int i = 0; i < n; i++) {
        uint64_t bit = UINT64_C(1) << i;
        if (in == need) {
            p->status[i] = EO__SP_BENCH;
            continue;
        }
        p->status[i] = EO__SP_PLAY;
        /* w agrees with every decision so far, so it plays exactly the remaining players when
         * they are all needed; otherwise ask. */
        if (n - i > need - in && !((w->a | w->b) & bit)) {
            eo__split_sol alt;
            int rc = ask_plays(p, use_tab ? tab : NULL, tmp, i, need - in - 1, g, w, &alt);
            if (rc < 0)
                return rc;
            if (rc == 0) {
                p->status[i] = EO__SP_BENCH;
                continue;
            }
            if (!eo__split_check(p, g, &alt))
                return EO_EINTERNAL; /* a "yes" always comes with a valid witness */
            *w = alt;
        }
        if (use_tab && in < need - 1)
            eo__split_table_add(tab, i, p->q[i]);
        in++;
    }
    return 0;
}

/* Step 3. On entry the statuses are PLAY or BENCH and w a split of the PLAY players with gap
 * g. Up to 24 players, meet in the middle gives team A at once; above, player by player: the
 * lowest player who plays goes to A (the mirror of a split has the same gap; with an offset it
 * has not, and he is asked about like the others), each next one to A if a split with gap g
 * still exists so. */
static int choose_teams(eo__split_prob *p, int64_t g, eo__split_sol *w)
{
    int whole = eo__split_teams(p, p->scratch, g);
    if (whole == 1)
        return 0;
    if (whole == 0)
        return EO_EINTERNAL; /* w is a split with gap g */
    int na = 0, nb = 0, k = p->k;
    for (int i = 0; i < p->n; i++) {
        uint64_t bit = UINT64_C(1) << i;
        if (p->status[i] != EO__SP_PLAY)
            continue;
        if (na == 0 && nb == 0 && p->offset == 0 && (w->b & bit)) {
            uint64_t t = w->a;
            w->a = w->b;
            w->b = t;
        }
        int on_a;
        if (na == k) {
            on_a = 0;
        } else if (nb == k || (w->a & bit)) {
            on_a = 1; /* w agrees with the decisions, so when B is full w has i on A */
        } else {
            p->status[i] = EO__SP_A;
            eo__split_sol alt = *w;
            int rc = eo__split_repair(p, i, g, &alt);
            if (rc == 0)
                rc = eo__split_search(p, g, g, &alt);
            if (rc < 0)
                return rc;
            on_a = rc == 1;
            if (on_a)
                *w = alt;
        }
        p->status[i] = on_a ? EO__SP_A : EO__SP_B;
        if (on_a)
            na++;
        else
            nb++;
    }
    return 0;
}

/* Solves one k into p->status (A, B or BENCH for everyone); *gap_q is the normalised gap. */
static int solve_k(eo__split_prob *p, eo_bench_mode mode, eo__split_dense *dense,
                   const eo__split_sol *prev, eo__split_sol *fin, int64_t *gap_q)
{
    int n = p->n, k = p->k;
    int64_t lower = 0;
    /* With 2k == n everyone plays: the same as a fixed playing set. */
    int fixed = mode == EO_BENCH_QUEUE || 2 * k == n;
    int64_t par = p->offset & 1;
    for (int i = 0; i < n; i++) {
        int plays = !fixed || i < 2 * k;
        p->status[i] = !fixed ? EO__SP_FREE : plays ? EO__SP_PLAY : EO__SP_BENCH;
        if (plays)
            par ^= p->q[i] & 1;
    }
    /* ΣA - ΣB has the parity of ΣA + ΣB: the gap |ΣA - ΣB + offset| is odd whenever the playing
     * set is fixed with a sum of the other parity than the offset. */
    if (par && fixed)
        lower = 1;
    /* A fixed playing set usually splits to the lower bound, which is then the gap: team A for
     * it at once, no search for the gap needed. */
    int rc = fixed ? eo__split_teams(p, p->scratch, lower) : -1;
    int64_t g = lower;
    uint64_t set;
    /* With a bench the lower bound is 0; a playing set with gap 0 among the lexicographically
     * first candidates settles the gap and who plays at once (split_dense.c). */
    if (!fixed && dense && k <= EO__SPLIT_MITM_HALF && eo__split_dense_plays(dense, k, &set)) {
        for (int i = 0; i < n; i++)
            p->status[i] = set >> i & 1 ? EO__SP_PLAY : EO__SP_BENCH;
        rc = eo__split_teams(p, p->scratch, 0);
        if (rc != 1)
            return EO_EINTERNAL; /* the set was proven to split with gap 0 */
    }
    if (rc != 1) {
        eo__split_sol w;
        /* The answer for k - 1 with one more player a side usually reaches the lower bound,
         * which proves the gap without a search. */
        rc = prev ? eo__split_extend(p, prev, lower, &w) : 0;
        if (rc == 0 && !fixed && k <= EO__SPLIT_TABLE_K) {
            /* or: player 0, a window of the next players and two more chosen exactly */
            eo__split_table *tab = eo__split_scratch_tables(p->scratch);
            eo__split_table_init(tab, k);
            p->status[0] = EO__SP_PLAY;
            rc = eo__split_table_try(tab, tab + 1, p, 0, 2 * k - 1, lower, &w);
            p->status[0] = EO__SP_FREE;
        }
        if (rc == 0)
            rc = eo__split_search(p, EO__SPLIT_INF, lower, &w);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return EO_EINTERNAL; /* 2k <= n players always admit some split */
        g = w.gap;
        if (!fixed) {
            rc = choose_players(p, g, &w);
            if (rc < 0)
                return rc;
        }
        rc = choose_teams(p, g, &w);
        if (rc < 0)
            return rc;
    }
    fin->a = fin->b = 0;
    for (int i = 0; i < n; i++) {
        if (p->status[i] == EO__SP_A)
            fin->a |= UINT64_C(1) << i;
        else if (p->status[i] == EO__SP_B)
            fin->b |= UINT64_C(1) << i;
    }
    fin->gap = g;
    *gap_q = g;
    return 0;
}

static void fill(eo_split *s, const eo__split_prob *p, const eo_split_player *players,
                 uint16_t *idx)
{
    int n = p->n;
    size_t na = 0, nb = 0, nz = 0;
    uint16_t *a = idx, *b = idx + p->k, *z = idx + 2 * p->k;
    s->sum_a = 0;
    s->sum_b = 0;
    for (int i = 0; i < n; i++) {
        if (p->status[i] == EO__SP_A) {
            a[na++] = (uint16_t)i;
            s->sum_a += players[i].rating;
        } else if (p->status[i] == EO__SP_B) {
            b[nb++] = (uint16_t)i;
            s->sum_b += players[i].rating;
        } else {
            z[nz++] = (uint16_t)i;
        }
    }
    s->k = p->k;
    s->a = a;
    s->b = b;
    s->bench = z;
    s->nbench = nz;
    s->gap = eo__abs64(s->sum_a - s->sum_b);
    s->p_a = NAN; /* the model's P(A) is the caller's (eo_split.h) */
}

/* Largest result: count = EO_SPLIT_EXACT_MAX / 2 - 1 splits of EO_SPLIT_EXACT_MAX indices. */
#define RES_MAX (EO_SPLIT_EXACT_MAX / 2 - 1)

struct eo_split_ws {
    eo__split_scratch *scratch; /* fixed tables (split_mitm.c, split_small.c) */
    eo__split_buf dense;        /* split_dense.c's table, sized by the ratings */
    eo__split_buf dp;           /* split_dp.c's tables, for hard questions only */
    eo_splits res;              /* the last result */
    eo_split split[RES_MAX];
    uint16_t idx[RES_MAX * EO_SPLIT_EXACT_MAX];
};

void *eo__split_buf_get(eo__split_buf *b, size_t bytes)
{
    if (bytes <= b->cap)
        return b->p;
    /* grow by half again at least, so a run of slightly larger requests reallocates rarely */
    size_t want = b->cap + b->cap / 2 > bytes ? b->cap + b->cap / 2 : bytes;
    void *np = malloc(want);
    if (!np && want > bytes)
        np = malloc(want = bytes);
    if (!np)
        return NULL;
    free(b->p);
    b->p = np;
    b->cap = want;
    return np;
}

static void buf_trim(eo__split_buf *b, size_t keep)
{
    if (b->cap > keep) {
        free(b->p);
        b->p = NULL;
        b->cap = 0;
    }
}

eo_split_ws *eo_split_ws_new(void)
{
    eo_split_ws *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    ws->scratch = eo__split_scratch_new();
    if (!ws->scratch) {
        free(ws);
        return NULL;
    }
    return ws;
}

void eo_split_ws_free(eo_split_ws *ws)
{
    if (!ws)
        return;
    eo__split_scratch_free(ws->scratch);
    free(ws->dense.p);
    free(ws->dp.p);
    free(ws);
}

/* What one call solves: eo_split_options' bench mode and work limit, the team sizes and the
 * field (side A's advantage in rating units, 0 for eo_split_solve()). */
typedef struct job {
    eo_bench_mode mode;
    uint64_t work_limit;
    int64_t field;
    int kmin, kmax;
} job;

/* The solver's normalised ratings into q (shifted by the minimum, divided by the gcd of the
 * differences and of the field), and the players by q descending into order; returns that gcd.
 * Both teams have k players, so the shift leaves each difference unchanged, and every
 * difference (and the field) is a multiple of the gcd: solving the quotients is the same
 * problem with smaller numbers (and lets the parity bound see through a common factor). */
static int64_t normalise(const eo_split_player *players, size_t n, int64_t field, int64_t lo,
                         int64_t *q, uint8_t *order)
{
    int64_t g = eo__gcd64(eo__abs64(field), 0);
    for (size_t i = 0; i < n; i++) {
        q[i] = players[i].rating - lo;
        g = eo__gcd64(q[i], g);
    }
    if (g == 0)
        g = 1;
    for (size_t i = 0; i < n; i++)
        q[i] /= g;
    for (size_t i = 0; i < n; i++) {
        size_t j = i;
        while (j > 0 && q[order[j - 1]] < q[i]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint8_t)i;
    }
    return g;
}

/* The team sizes of jb into res (split c is k = kmin + c), whose split and index arrays have
 * room for them and n players. */
static int solve_into(eo_split_ws *ws, const eo_split_player *players, size_t n, const job *jb,
                      eo_splits *res, uint16_t *idx)
{
    if (jb->mode != EO_BENCH_SOLVER && jb->mode != EO_BENCH_QUEUE)
        return EO_EINVAL;
    int64_t lo = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t r = players[i].rating;
        if (r > RATING_MAX || r < -RATING_MAX)
            return EO_EINVAL;
        if (i == 0 || r < lo)
            lo = r;
    }
    int64_t q[EO__SPLIT_N];
    uint8_t order[EO__SPLIT_N];
    int64_t g = normalise(players, n, jb->field, lo, q, order);
    size_t count = jb->kmax >= jb->kmin ? (size_t)(jb->kmax - jb->kmin + 1) : 0;
    res->count = count;

    eo__split_prob p;
    memset(&p, 0, sizeof p);
    p.n = (int)n;
    p.q = q;
    p.order = order;
    p.work_limit = jb->work_limit;
    p.scratch = ws->scratch;
    p.dp_buf = &ws->dp;
    p.offset = jb->field / g;
    /* NULL (too wide, or no memory for it) only means the general path answers every k */
    eo__split_dense *dense =
        jb->mode == EO_BENCH_SOLVER ? eo__split_dense_new(q, (int)n, p.offset, &ws->dense) : NULL;
    eo__split_sol last;
    int rc = 0;
    for (size_t c = 0; c < count && rc == 0; c++) {
        int64_t gap_q;
        p.k = jb->kmin + (int)c;
        rc = solve_k(&p, jb->mode, dense, c ? &last : NULL, &last, &gap_q);
        if (rc == 0) {
            eo_split *sp = &res->split[c];
            fill(sp, &p, players, idx + c * n);
            if (eo__abs64(sp->sum_a - sp->sum_b + jb->field) != gap_q * g)
                rc = EO_EINTERNAL;
        }
    }
    /* a hard instance may have grown the tables: keep a bounded amount for the next calls */
    buf_trim(&ws->dp, EO_SPLIT_WS_KEEP);
    return rc;
}

/* Every team size of a plain request, as eo_split.h defines them. */
static job plain_job(size_t n, const eo_split_options *opt)
{
    job jb = {opt ? opt->bench : EO_BENCH_SOLVER, opt ? opt->work_limit : 0, 0, 2, (int)n / 2};
    return jb;
}

int eo_split_solve_ws(eo_split_ws *ws, const eo_split_player *players, size_t n,
                      const eo_split_options *opt, eo_splits **out)
{
    if (!out)
        return EO_EINVAL;
    *out = NULL;
    if (!ws)
        return EO_EINVAL;
    if (n > EO_SPLIT_EXACT_MAX)
        return EO_ELIMIT;
    if (n < 2 || !players)
        return EO_EINVAL;
    ws->res.split = n >= 4 ? ws->split : NULL;
    job jb = plain_job(n, opt);
    int rc = solve_into(ws, players, n, &jb, &ws->res, ws->idx);
    if (rc == 0)
        *out = &ws->res;
    return rc;
}

/* eo_split_solve() and eo__split_solve_field(): checks the arguments, then jb in a work space
 * of its own, into one new result block. */
static int solve_block(const eo_split_player *players, size_t n, const job *jb, eo_splits **out)
{
    if (!out)
        return EO_EINVAL;
    *out = NULL;
    if (n > EO_SPLIT_EXACT_MAX)
        return EO_ELIMIT;
    if (n < 2 || !players || jb->kmin < 2 || jb->kmax > (int)n / 2 ||
        jb->field > EO__SPLIT_FIELD_MAX || jb->field < -EO__SPLIT_FIELD_MAX)
        return EO_EINVAL;
    /* one block for the result, as before: the caller frees it with eo_splits_free() */
    size_t count = jb->kmax >= jb->kmin ? (size_t)(jb->kmax - jb->kmin + 1) : 0;
    size_t bytes = sizeof(eo_splits) + count * sizeof(eo_split) + count * n * sizeof(uint16_t);
    eo_splits *res = malloc(bytes);
    if (!res)
        return EO_ENOMEM;
    res->split = count ? (eo_split *)(res + 1) : NULL;
    uint16_t *idx = (uint16_t *)((eo_split *)(res + 1) + count);
    eo_split_ws *ws = eo_split_ws_new();
    if (!ws) {
        free(res);
        return EO_ENOMEM;
    }
    int rc = solve_into(ws, players, n, jb, res, idx);
    eo_split_ws_free(ws);
    if (rc != 0) {
        free(res);
        return rc;
    }
    *out = res;
    return 0;
}

int eo_split_solve(const eo_split_player *players, size_t n, const eo_split_options *opt,
                   eo_splits **out)
{
    job jb = plain_job(n, opt);
    return solve_block(players, n, &jb, out);
}

int eo__split_solve_field(const eo_split_player *players, size_t n, const eo_split_options *opt,
                          int64_t field, int kmin, int kmax, eo_splits **out)
{
    job jb = plain_job(n, opt);
    jb.field = field;
    jb.kmin = kmin;
    jb.kmax = kmax;
    return solve_block(players, n, &jb, out);
}

void eo_splits_free(eo_splits *s)
{
    free(s);
}
