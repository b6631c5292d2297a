/* Mid-round autobalance (eo_autobalance.h; docs/BALANCER.md "Autobalance" states the rules).
 *
 * The joint choice of seed 000 F11 (m movers from the larger team minimising |ΣA − ΣB| after
 * the moves) is a "closest m-subset sum" question: with D = ΣL − ΣS and S the movers' sum, the
 * resulting gap is D − 2S. It is answered in two exact searches over at most 64 eligible
 * players:
 *   1. the least |D − 2S| (branch and bound over the ratings sorted ascending: the interval of
 *      sums a subtree can still reach bounds it, and a parity bound stops the search early);
 *   2. the mover set the tie rule names: the lexicographically first set, in preference order
 *      (dead, recent joiner, lower index), among those within gap_tolerance of that least gap
 *      (depth first in preference order, include before exclude, with the reachable interval
 *      of every suffix from a table; the first leaf found is the answer).
 * Both count nodes against the policy's work limit; a cut search falls back to the best set it
 * has (exact = false), so a game server always gets an answer. */
#include "evenodds/eo_autobalance.h"

#include <math.h>
#include <string.h>

#include "core/balance/common.h"

/* Absolute times and durations (other than the cooldown) are bounded so that sums and
 * differences of two of them cannot overflow int64. */
#define TIME_MAX (INT64_C(1) << 61)
#define TOL_MAX (INT64_C(1) << 50)

#define MMAX EO_AB_MOVES_MAX

void eo_autobalance_policy_default(eo_ab_policy *p)
{
    memset(p, 0, sizeof *p);
    p->mode = EO_AB_MODE_NORMAL;
    p->enabled = true;
    p->last_minutes = EO_AB_DEFAULT_LAST_MINUTES;
    p->delay = EO_AB_DEFAULT_DELAY;
    p->cooldown = EO_AB_DEFAULT_COOLDOWN;
    p->size_rule = EO_AB_SIZE_GAP;
    p->size_gap_min = 2;
    p->strength_threshold = 0;
    p->p_threshold = EO_AB_DEFAULT_P_THRESHOLD;
    p->predict = NULL;
    p->predict_ctx = NULL;
    p->allow_party = false;
    p->dead_only = false;
    p->strength_swaps = true;
    p->gap_tolerance = 0;
    p->odd_extra = true;
    p->work_limit = 0;
}

const char *eo_ab_rule_name(eo_ab_rule r)
{
    switch (r) {
    case EO_AB_RULE_NONE: return "none";
    case EO_AB_RULE_SIZE_GAP: return "size_gap";
    case EO_AB_RULE_SIZE_2V0: return "size_2v0";
    case EO_AB_RULE_SIZE_3V1: return "size_3v1";
    case EO_AB_RULE_SIZE_4V2: return "size_4v2";
    case EO_AB_RULE_STRENGTH_GAP: return "strength_gap";
    }
    return "unknown";
}

const char *eo_ab_action_name(eo_ab_action a)
{
    switch (a) {
    case EO_AB_ACT: return "act";
    case EO_AB_OFF_DISABLED: return "disabled";
    case EO_AB_OFF_MODE: return "mode";
    case EO_AB_OFF_LAST_MINUTES: return "last_minutes";
    case EO_AB_OFF_BALANCED: return "balanced";
    case EO_AB_OFF_DELAY: return "delay";
    case EO_AB_OFF_NO_ELIGIBLE: return "no_eligible";
    case EO_AB_OFF_NO_IMPROVEMENT: return "no_improvement";
    }
    return "unknown";
}

const char *eo_ab_reason_name(eo_ab_reason r)
{
    switch (r) {
    case EO_AB_REASON_SIZE_GAP: return "size_gap";
    case EO_AB_REASON_STRENGTH_GAP: return "strength_gap";
    case EO_AB_REASON_JOIN_PLACEMENT: return "join_placement";
    }
    return "unknown";
}

/* ---- validation ------------------------------------------------------------------------ */

static bool time_ok(int64_t t) { return t >= -TIME_MAX && t <= TIME_MAX; }

static int check_policy(const eo_ab_policy *p)
{
    if ((unsigned)p->mode > EO_AB_MODE_ARENA || (unsigned)p->size_rule > EO_AB_SIZE_SECTORS_EDGE)
        return EO_EINVAL;
    if (p->size_rule == EO_AB_SIZE_GAP && (p->size_gap_min < 2 || p->size_gap_min > 2 * EO_AB_TEAM_MAX))
        return EO_EINVAL;
    if (p->last_minutes < 0 || p->last_minutes > TIME_MAX || p->delay < 0 || p->delay > TIME_MAX ||
        p->cooldown < 0)
        return EO_EINVAL;
    if (p->strength_threshold < 0 || p->gap_tolerance < 0 || p->gap_tolerance > TOL_MAX)
        return EO_EINVAL;
    if (!(p->p_threshold >= 0.0 && p->p_threshold <= 0.5)) /* also rejects NaN */
        return EO_EINVAL;
    return 0;
}

/* Checks the players and counts the teams. */
static int check_players(const eo_ab_player *pl, size_t n, int *ka, int *kb, int64_t *sa,
                         int64_t *sb)
{
    if (n > 0 && pl == NULL)
        return EO_EINVAL;
    *ka = *kb = 0;
    *sa = *sb = 0;
    for (size_t i = 0; i < n; i++) {
        const eo_ab_player *p = &pl[i];
        if (p->team != EO_AB_A && p->team != EO_AB_B)
            return EO_EINVAL;
        if (p->rating < -EO_AB_RATING_MAX || p->rating > EO_AB_RATING_MAX)
            return EO_EINVAL;
        if (!time_ok(p->joined_at) || (p->last_moved != EO_AB_NEVER && !time_ok(p->last_moved)))
            return EO_EINVAL;
        if (p->team == EO_AB_A) {
            (*ka)++;
            *sa += p->rating;
        } else {
            (*kb)++;
            *sb += p->rating;
        }
    }
    if (*ka > EO_AB_TEAM_MAX || *kb > EO_AB_TEAM_MAX)
        return EO_ELIMIT;
    return 0;
}

/* ---- rules ------------------------------------------------------------------------------ */

static eo_ab_rule size_rule(const eo_ab_policy *p, int ka, int kb)
{
    int big = ka > kb ? ka : kb, small = ka > kb ? kb : ka, d = big - small;
    if (p->size_rule == EO_AB_SIZE_GAP)
        return d >= p->size_gap_min ? EO_AB_RULE_SIZE_GAP : EO_AB_RULE_NONE;
    if (d < 2)
        return EO_AB_RULE_NONE;
    switch (small) { /* d >= 2 gives "big or more" in each of seed 003's three cases */
    case 0: return EO_AB_RULE_SIZE_2V0;
    case 1: return EO_AB_RULE_SIZE_3V1;
    case 2: return EO_AB_RULE_SIZE_4V2;
    default: return EO_AB_RULE_NONE;
    }
}

/* The predictor's P(A), checked; NaN when there is no predictor or a team is empty (a model's
 * predict needs a member on each side). */
static int predict(const eo_ab_policy *p, int64_t sa, int ka, int64_t sb, int kb, double *out)
{
    *out = NAN;
    if (p->predict == NULL || ka == 0 || kb == 0)
        return 0;
    double v = p->predict(p->predict_ctx, sa, ka, sb, kb);
    if (!(v >= 0.0 && v <= 1.0))
        return EO_ERANGE;
    *out = v;
    return 0;
}

/* How far from even, in the unit the strength rule uses: |P(A) − 0.5| with a predictor, else
 * |ΣA − ΣB| (exact in a double: |gap| <= 2^47). `lead` says which side leads. */
typedef struct {
    double score;
    int lead; /* +1: A stronger, −1: B stronger, 0: even */
} strength;

static int measure(const eo_ab_policy *p, int64_t sa, int ka, int64_t sb, int kb, strength *s)
{
    s->score = 0.0;
    s->lead = 0;
    if (ka == 0 || kb == 0) /* an empty team: the strength rule does not apply */
        return 0;
    if (p->predict != NULL) {
        double pa;
        int rc = predict(p, sa, ka, sb, kb, &pa);
        if (rc != 0)
            return rc;
        s->score = fabs(pa - 0.5);
        s->lead = pa > 0.5 ? 1 : pa < 0.5 ? -1 : 0;
    } else {
        s->score = (double)eo__abs64(sa - sb);
        s->lead = sa > sb ? 1 : sa < sb ? -1 : 0;
    }
    return 0;
}

static double strength_threshold(const eo_ab_policy *p)
{
    return p->predict != NULL ? p->p_threshold : (double)p->strength_threshold;
}

/* The strength rule fires: a threshold is set and the score reaches it (seed 003: ">= 10"). */
static bool strength_fires(const eo_ab_policy *p, const strength *s)
{
    double thr = strength_threshold(p);
    return thr > 0.0 && s->lead != 0 && s->score >= thr;
}

/* ---- eligibility and preference order --------------------------------------------------- */

/* Fills ok[i] with "player i may move" and, per team, the eligible players in preference
 * order (dead first, then the most recent joiner, then the lower index). */
static void eligibility(const eo_ab_policy *pol, const eo_ab_state *st, bool *ok,
                        uint16_t order[2][EO_AB_TEAM_MAX], int cnt[2])
{
    const eo_ab_player *pl = st->players;
    size_t n = st->n;
    bool base[EO_AB_PLAYERS_MAX];
    int nbase[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        const eo_ab_player *p = &pl[i];
        bool cool = p->last_moved == EO_AB_NEVER ||
                    (p->last_moved <= st->now && st->now - p->last_moved >= pol->cooldown);
        base[i] = (pol->allow_party || p->party == 0) && !p->is_protected && cool;
        if (base[i])
            nbase[p->team]++;
    }
    /* Bottom 2/3 by score among the team's players passing the tests above (seed 003 ranks the
     * team without party members and the already moved). A player is in when fewer than
     * floor(2c/3) of them score strictly less: ties at the cut are all in or all out. */
    for (size_t i = 0; i < n; i++) {
        ok[i] = base[i] && (!pol->dead_only || pl[i].dead);
        if (!ok[i] || !st->has_scores)
            continue;
        int cut = 2 * nbase[pl[i].team] / 3, below = 0;
        for (size_t j = 0; j < n; j++)
            if (base[j] && pl[j].team == pl[i].team && pl[j].score < pl[i].score)
                below++;
        ok[i] = below < cut;
    }
    cnt[0] = cnt[1] = 0;
    for (size_t i = 0; i < n; i++) {
        if (!ok[i])
            continue;
        int t = pl[i].team, k = cnt[t]++;
        /* insertion: the list is short (<= 64) and built once per call */
        while (k > 0) {
            const eo_ab_player *q = &pl[order[t][k - 1]];
            bool before = pl[i].dead != q->dead ? pl[i].dead : pl[i].joined_at > q->joined_at;
            if (!before)
                break;
            order[t][k] = order[t][k - 1];
            k--;
        }
        order[t][k] = (uint16_t)i;
    }
}

/* ---- the joint choice ------------------------------------------------------------------- */

typedef struct {
    int64_t D;     /* ΣL − ΣS before the moves */
    int e, m;      /* eligible players, moves */
    uint64_t limit, nodes;
    bool stop, cut;
    /* search 1: ratings ascending */
    int64_t w[EO_AB_TEAM_MAX];
    int wrank[EO_AB_TEAM_MAX]; /* preference rank of w[j] */
    int64_t pre[EO_AB_TEAM_MAX + 1];
    int path[MMAX], bestpath[MMAX];
    int64_t best, lb;
    /* search 2: preference order */
    int64_t v[EO_AB_TEAM_MAX];
    int64_t minsuf[EO_AB_TEAM_MAX + 1][MMAX + 1]; /* sum of the c least of v[q..e) */
    int64_t maxsuf[EO_AB_TEAM_MAX + 1][MMAX + 1]; /* sum of the c greatest */
    int64_t bound;
    int chosen[MMAX];
} joint;

static void least_gap(joint *J, int j0, int c, int64_t sum, int depth)
{
    if (c == 0) {
        int64_t g = eo__abs64(J->D - 2 * sum);
        if (g < J->best) {
            J->best = g;
            memcpy(J->bestpath, J->path, (size_t)depth * sizeof J->path[0]);
            if (g <= J->lb)
                J->stop = true;
        }
        return;
    }
    int e = J->e;
    int64_t top = J->pre[e] - J->pre[e - c + 1]; /* the c − 1 greatest, all after any j */
    for (int j = j0; j <= e - c; j++) {
        if (++J->nodes > J->limit && J->best != INT64_MAX) {
            J->stop = J->cut = true;
            return;
        }
        int64_t lo_s = sum + J->pre[j + c] - J->pre[j], hi_s = sum + J->w[j] + top;
        int64_t hi = J->D - 2 * lo_s, lo = J->D - 2 * hi_s; /* reachable gaps: [lo, hi] */
        /* Both ends fall as j grows (w ascending): once the whole interval is too far below
         * zero, so is every later one. */
        if (hi < 0 && -hi >= J->best)
            break;
        int64_t bnd = eo__least_abs(lo, hi);
        if (bnd >= J->best)
            continue;
        J->path[depth] = j;
        least_gap(J, j + 1, c - 1, sum + J->w[j], depth + 1);
        if (J->stop)
            return;
    }
}

/* Can c more of v[q..e) bring the gap within the bound? (interval test, exact when false) */
static bool reach(const joint *J, int q, int c, int64_t sum)
{
    if (J->e - q < c)
        return false;
    int64_t lo = J->D - 2 * (sum + J->maxsuf[q][c]), hi = J->D - 2 * (sum + J->minsuf[q][c]);
    return lo <= J->bound && hi >= -J->bound;
}

/* First set in preference order (include before exclude) within the bound: 1 found, 0 none,
 * -1 cut by the work limit. */
static int first_set(joint *J, int q, int c, int64_t sum, int depth)
{
    for (;;) {
        if (c == 0)
            return eo__abs64(J->D - 2 * sum) <= J->bound;
        if (++J->nodes > J->limit) {
            J->cut = true;
            return -1;
        }
        if (reach(J, q + 1, c - 1, sum + J->v[q])) {
            J->chosen[depth] = q;
            int r = first_set(J, q + 1, c - 1, sum + J->v[q], depth + 1);
            if (r != 0)
                return r;
        }
        if (!reach(J, q + 1, c, sum))
            return 0;
        q++; /* exclude q: a loop, not a call, so the depth stays <= m */
    }
}

/* Chooses m of the e eligible players (ratings r[] in preference order) minimising
 * |D − 2·Σ chosen|, ties (within tol) to the lexicographically first set of ranks. Writes the
 * chosen ranks ascending to pick[]. Returns true when exact. */
static bool choose_joint(joint *J, const int64_t *r, int e, int m, int64_t D, int64_t tol,
                         uint64_t limit, int *pick)
{
    J->D = D;
    J->e = e;
    J->m = m;
    J->limit = limit;
    /* search 1 over the ratings ascending (ties by rank, which only fixes the order) */
    for (int i = 0; i < e; i++) {
        int k = i;
        while (k > 0 && J->w[k - 1] > r[i]) {
            J->w[k] = J->w[k - 1];
            J->wrank[k] = J->wrank[k - 1];
            k--;
        }
        J->w[k] = r[i];
        J->wrank[k] = i;
    }
    J->pre[0] = 0;
    for (int i = 0; i < e; i++)
        J->pre[i + 1] = J->pre[i] + J->w[i];
    J->best = INT64_MAX;
    J->lb = D % 2 != 0 ? 1 : 0; /* D − 2S has the parity of D */
    J->nodes = 0;
    J->stop = J->cut = false;
    least_gap(J, 0, m, 0, 0);
    bool exact = !J->cut;

    /* search 2 over the preference order, within the least gap (+ tolerance) */
    int64_t sorted[EO_AB_TEAM_MAX];
    int ns = 0;
    for (int q = e; q >= 0; q--) {
        if (q < e) { /* insert v[q] */
            eo__insert_asc(sorted, ns, r[q]);
            ns++;
        }
        int64_t lo = 0, hi = 0;
        J->minsuf[q][0] = J->maxsuf[q][0] = 0;
        for (int c = 1; c <= m && c <= ns; c++) {
            lo += sorted[c - 1];
            hi += sorted[ns - c];
            J->minsuf[q][c] = lo;
            J->maxsuf[q][c] = hi;
        }
    }
    memcpy(J->v, r, (size_t)e * sizeof r[0]);
    J->bound = J->best + tol;
    J->nodes = 0;
    J->cut = false;
    int found = first_set(J, 0, m, 0, 0);
    if (found == 1) {
        memcpy(pick, J->chosen, (size_t)m * sizeof pick[0]);
        return exact;
    }
    /* Cut (a set within the bound exists: search 1 found one): fall back to search 1's set. */
    for (int i = 0; i < m; i++)
        pick[i] = J->wrank[J->bestpath[i]];
    for (int i = 1; i < m; i++) /* ranks ascending */
        for (int k = i; k > 0 && pick[k - 1] > pick[k]; k--) {
            int t = pick[k];
            pick[k] = pick[k - 1];
            pick[k - 1] = t;
        }
    return false;
}

/* ---- the strength rule ------------------------------------------------------------------ */

/* One move from the stronger team W, or (when none fits) a swap, that lowers the strength
 * score without leaving the sizes unbalanced or the other team ahead by the threshold (seed
 * 003: "will not be moved ... if that will cause team B's total power to be greater than team
 * A's power + 10"). The least score wins; ties: W's mover earlier in preference order, then
 * the other team's. Returns 1 with the moves written, 0 if none fits, < 0 on error. */
static int strength_moves(const eo_ab_policy *pol, const eo_ab_state *st, int ka, int kb,
                          int64_t sa, int64_t sb, const strength *now_s,
                          uint16_t order[2][EO_AB_TEAM_MAX], const int cnt[2], eo_ab_result *out)
{
    const eo_ab_player *pl = st->players;
    int wt = now_s->lead > 0 ? EO_AB_A : EO_AB_B, ot = 1 - wt;
    double thr = strength_threshold(pol), best = now_s->score;
    int bx = -1, by = -1;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1 && (bx >= 0 || !pol->strength_swaps))
            break; /* a swap moves two players: only when no single move fits */
        for (int x = 0; x < cnt[wt]; x++) {
            int64_t rx = pl[order[wt][x]].rating;
            int ny = pass == 0 ? 1 : cnt[ot];
            for (int y = 0; y < ny; y++) {
                int64_t ry = pass == 0 ? 0 : pl[order[ot][y]].rating;
                int dk = pass == 0 ? 1 : 0;
                int64_t nsa = sa, nsb = sb;
                int nka = ka, nkb = kb;
                if (wt == EO_AB_A) {
                    nsa += ry - rx;
                    nsb += rx - ry;
                    nka -= dk;
                    nkb += dk;
                } else {
                    nsb += ry - rx;
                    nsa += rx - ry;
                    nkb -= dk;
                    nka += dk;
                }
                if (nka == 0 || nkb == 0 || size_rule(pol, nka, nkb) != EO_AB_RULE_NONE)
                    continue;
                strength s;
                int rc = measure(pol, nsa, nka, nsb, nkb, &s);
                if (rc != 0)
                    return rc;
                int lead_w = wt == EO_AB_A ? s.lead : -s.lead;
                if (lead_w < 0 && s.score >= thr) /* overshoot: the other team now leads */
                    continue;
                if (s.score < best) {
                    best = s.score;
                    bx = x;
                    by = pass == 0 ? -1 : y;
                }
            }
        }
    }
    if (bx < 0)
        return 0;
    out->nmoves = 0;
    int who[2] = {order[wt][bx], by >= 0 ? order[ot][by] : -1};
    for (int k = 0; k < 2 && who[k] >= 0; k++) {
        eo_ab_move *mv = &out->moves[out->nmoves++];
        mv->index = (uint16_t)who[k];
        mv->id = pl[who[k]].id;
        mv->from = pl[who[k]].team;
        mv->to = mv->from == EO_AB_A ? EO_AB_B : EO_AB_A;
        mv->reason = EO_AB_REASON_STRENGTH_GAP;
    }
    return 1;
}

/* ---- the entry points ------------------------------------------------------------------- */

/* Why not act, in order (docs/BALANCER.md "Autobalance"); sets out->action and out->act_at. */
static void decide_action(const eo_ab_policy *pol, const eo_ab_state *st, eo_ab_result *out)
{
    if (!pol->enabled)
        out->action = EO_AB_OFF_DISABLED;
    else if (pol->mode != EO_AB_MODE_NORMAL)
        out->action = EO_AB_OFF_MODE;
    else if (st->time_left != EO_AB_TIME_UNKNOWN && st->time_left < pol->last_minutes)
        out->action = EO_AB_OFF_LAST_MINUTES;
    else if (out->rule == EO_AB_RULE_NONE)
        out->action = EO_AB_OFF_BALANCED;
    else if (pol->delay > 0 && (st->unbalanced_since == EO_AB_NEVER ||
                                st->now < st->unbalanced_since + pol->delay)) {
        out->action = EO_AB_OFF_DELAY;
        out->act_at = (st->unbalanced_since == EO_AB_NEVER ? st->now : st->unbalanced_since) +
                      pol->delay;
    } else
        out->action = EO_AB_ACT;
}

/* The size rule's moves: out->needed players from the larger team, the eligible ones whose
 * move leaves the smallest gap (all of them when there are too few). */
static void size_moves(const eo_ab_policy *pol, const eo_ab_state *st, int64_t sa, int64_t sb,
                       uint16_t order[2][EO_AB_TEAM_MAX], const int cnt[2], eo_ab_result *out)
{
    int ka = out->ka, kb = out->kb;
    int big = ka > kb ? ka : kb, small = ka > kb ? kb : ka;
    int lt = ka > kb ? EO_AB_A : EO_AB_B, e = cnt[lt], m = out->needed;
    const eo_ab_player *pl = st->players;
    out->eligible = e;
    int pick[MMAX];
    if (e <= m) { /* everyone who may move moves */
        for (int i = 0; i < e; i++)
            pick[i] = i;
        out->short_by = m - e;
        m = e;
    } else {
        int64_t r[EO_AB_TEAM_MAX];
        for (int i = 0; i < e; i++)
            r[i] = pl[order[lt][i]].rating;
        int64_t D = lt == EO_AB_A ? sa - sb : sb - sa;
        uint64_t limit = pol->work_limit ? pol->work_limit : EO_AB_DEFAULT_WORK_LIMIT;
        joint J;
        out->exact = choose_joint(&J, r, e, m, D, pol->gap_tolerance, limit, pick);
        /* Odd |Δk|: the odd player may end on either team (seed 000); one more move only
         * when it beats the fewer moves by more than the tolerance. */
        if (pol->odd_extra && (big - small) % 2 != 0 && e > m) {
            int64_t best_m = J.best;
            int pick2[MMAX];
            bool exact2 = choose_joint(&J, r, e, m + 1, D, pol->gap_tolerance, limit, pick2);
            if (J.best < best_m && best_m - J.best > pol->gap_tolerance) {
                memcpy(pick, pick2, sizeof pick2);
                m++;
            }
            out->exact = out->exact && exact2;
        }
    }
    if (m == 0)
        out->action = EO_AB_OFF_NO_ELIGIBLE;
    for (int i = 0; i < m; i++) {
        int idx = order[lt][pick[i]];
        eo_ab_move *mv = &out->moves[out->nmoves++];
        mv->index = (uint16_t)idx;
        mv->id = pl[idx].id;
        mv->from = (eo_ab_team)lt;
        mv->to = lt == EO_AB_A ? EO_AB_B : EO_AB_A;
        mv->reason = EO_AB_REASON_SIZE_GAP;
    }
}

/* The teams after out's moves: the gap and P(A) afterwards. */
static int after_moves(const eo_ab_policy *pol, const eo_ab_state *st, int64_t sa, int64_t sb,
                       eo_ab_result *out)
{
    int64_t nsa = sa, nsb = sb;
    int nka = out->ka, nkb = out->kb;
    for (size_t i = 0; i < out->nmoves; i++) {
        int64_t r = st->players[out->moves[i].index].rating;
        if (out->moves[i].from == EO_AB_A) {
            nsa -= r, nsb += r, nka--, nkb++;
        } else {
            nsb -= r, nsa += r, nkb--, nka++;
        }
    }
    out->gap_after = nsa - nsb;
    return predict(pol, nsa, nka, nsb, nkb, &out->p_after);
}

static int check_state(const eo_ab_policy *pol, const eo_ab_state *st)
{
    int rc = check_policy(pol);
    if (rc != 0)
        return rc;
    if (st->n > EO_AB_PLAYERS_MAX)
        return EO_ELIMIT;
    if (!time_ok(st->now) || (st->time_left < 0 && st->time_left != EO_AB_TIME_UNKNOWN) ||
        (st->unbalanced_since != EO_AB_NEVER && !time_ok(st->unbalanced_since)))
        return EO_EINVAL;
    return 0;
}

int eo_autobalance_check(const eo_ab_policy *pol, const eo_ab_state *st, eo_ab_result *res)
{
    if (pol == NULL || st == NULL || res == NULL)
        return EO_EINVAL;
    int rc = check_state(pol, st);
    if (rc != 0)
        return rc;
    int ka, kb;
    int64_t sa, sb;
    if ((rc = check_players(st->players, st->n, &ka, &kb, &sa, &sb)) != 0)
        return rc;

    eo_ab_result out;
    memset(&out, 0, sizeof out);
    out.ka = ka;
    out.kb = kb;
    out.sum_a = sa;
    out.sum_b = sb;
    out.gap_before = out.gap_after = sa - sb;
    out.act_at = EO_AB_NEVER;
    out.exact = true;
    if ((rc = predict(pol, sa, ka, sb, kb, &out.p_before)) != 0)
        return rc;
    out.p_after = out.p_before;

    /* Which rule (reported even when autobalance is off). */
    strength s = {0.0, 0};
    out.rule = size_rule(pol, ka, kb);
    if (out.rule == EO_AB_RULE_NONE) {
        if ((rc = measure(pol, sa, ka, sb, kb, &s)) != 0)
            return rc;
        if (strength_fires(pol, &s))
            out.rule = EO_AB_RULE_STRENGTH_GAP;
    }
    int big = ka > kb ? ka : kb, small = ka > kb ? kb : ka;
    if (out.rule != EO_AB_RULE_NONE && out.rule != EO_AB_RULE_STRENGTH_GAP)
        out.needed = (big - small) / 2;

    decide_action(pol, st, &out);
    if (out.action != EO_AB_ACT) {
        *res = out;
        return 0;
    }

    bool ok[EO_AB_PLAYERS_MAX];
    uint16_t order[2][EO_AB_TEAM_MAX];
    int cnt[2];
    eligibility(pol, st, ok, order, cnt);
    if (out.rule == EO_AB_RULE_STRENGTH_GAP) {
        int wt = s.lead > 0 ? EO_AB_A : EO_AB_B;
        out.eligible = cnt[wt];
        rc = cnt[wt] == 0 ? 0 : strength_moves(pol, st, ka, kb, sa, sb, &s, order, cnt, &out);
        if (rc < 0)
            return rc;
        if (rc == 0)
            out.action = cnt[wt] == 0 ? EO_AB_OFF_NO_ELIGIBLE : EO_AB_OFF_NO_IMPROVEMENT;
    } else
        size_moves(pol, st, sa, sb, order, cnt, &out);

    if ((rc = after_moves(pol, st, sa, sb, &out)) != 0)
        return rc;
    *res = out;
    return 0;
}

int eo_autobalance_place_joiner(const eo_ab_policy *pol, const eo_ab_player *players, size_t n,
                                int64_t rating, eo_ab_placement *out)
{
    if (pol == NULL || out == NULL)
        return EO_EINVAL;
    int rc = check_policy(pol);
    if (rc != 0)
        return rc;
    if (n > EO_AB_PLAYERS_MAX)
        return EO_ELIMIT;
    if (rating < -EO_AB_RATING_MAX || rating > EO_AB_RATING_MAX)
        return EO_EINVAL;
    int ka, kb;
    int64_t sa, sb;
    if ((rc = check_players(players, n, &ka, &kb, &sa, &sb)) != 0)
        return rc;
    eo_ab_placement p = {EO_AB_TEAM_NONE, EO_AB_ACT, false, 0};
    if (!pol->enabled || pol->mode != EO_AB_MODE_NORMAL) {
        p.action = !pol->enabled ? EO_AB_OFF_DISABLED : EO_AB_OFF_MODE;
        *out = p;
        return 0;
    }
    if (ka >= EO_AB_TEAM_MAX && kb >= EO_AB_TEAM_MAX)
        return EO_ELIMIT;
    bool ok_a = ka < EO_AB_TEAM_MAX && size_rule(pol, ka + 1, kb) == EO_AB_RULE_NONE;
    bool ok_b = kb < EO_AB_TEAM_MAX && size_rule(pol, ka, kb + 1) == EO_AB_RULE_NONE;
    int64_t ga = sa + rating - sb, gb = sa - sb - rating;
    if (ok_a && ok_b) {
        int64_t da = eo__abs64(ga), db = eo__abs64(gb);
        if (da != db)
            p.team = da < db ? EO_AB_A : EO_AB_B;
        else
            p.team = kb < ka ? EO_AB_B : EO_AB_A; /* the smaller team, then A */
    } else {
        p.by_size = true;
        if (ok_a || ok_b)
            p.team = ok_a ? EO_AB_A : EO_AB_B;
        else if (ka >= EO_AB_TEAM_MAX || kb >= EO_AB_TEAM_MAX)
            p.team = ka >= EO_AB_TEAM_MAX ? EO_AB_B : EO_AB_A;
        else /* already unbalanced: narrow the size gap */
            p.team = kb < ka ? EO_AB_B : EO_AB_A;
    }
    p.gap_after = p.team == EO_AB_A ? ga : gb;
    *out = p;
    return 0;
}
