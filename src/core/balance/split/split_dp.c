/* The least gap of one split problem by dynamic programming (see split_internal.h).
 *
 * The branch and bound proves "no completion reaches the gap" by visiting every subtree its
 * interval bound cannot cut, which for ratings crowded in a narrow band (a young pool) is a
 * huge number of nodes whose partial differences repeat. Here each reachable difference is
 * kept once per (players added to A, players added to B), as a bitset, so the cost depends on
 * the range of the differences instead of the number of ways to reach them. */
#include "split_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/balance/common.h"

/* Memory cap of the tables; wider problems stay with the branch and bound. */
#define DP_MAX_WORDS ((size_t)4 << 20) /* 32 MiB */

static size_t cap_of(const eo__split_prob *p)
{
    return p->dp_words ? (size_t)p->dp_words : DP_MAX_WORDS;
}

typedef struct dp_shape {
    int ka, kb, f;   /* players still to add to A and B, undecided players */
    int64_t d0;      /* difference of the decided players, plus the offset */
    int64_t dmin;    /* least difference any completion reaches (bit 0) */
    size_t nw;       /* words per bitset */
} dp_shape;

/* 0 when the problem has no completion by counts or is too wide, else 1 with *sh set. */
static int dp_shape_of(const eo__split_prob *p, dp_shape *sh)
{
    int na = 0, nb = 0, f = 0, ta = 0, tb = 0;
    int64_t d = p->offset, up = 0, down = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->status[i] == EO__SP_A) {
            d += p->q[i];
            na++;
        } else if (p->status[i] == EO__SP_B) {
            d -= p->q[i];
            nb++;
        } else if (p->status[i] == EO__SP_FREE || p->status[i] == EO__SP_PLAY) {
            f++;
        }
    }
    if (na > p->k || nb > p->k)
        return 0;
    sh->ka = p->k - na;
    sh->kb = p->k - nb;
    /* A gains at most its ka highest undecided ratings, B at most its kb highest. */
    for (int t = 0; t < p->n; t++) {
        int i = p->order[t];
        if (p->status[i] != EO__SP_FREE && p->status[i] != EO__SP_PLAY)
            continue;
        if (ta < sh->ka) {
            up += p->q[i];
            ta++;
        }
        if (tb < sh->kb) {
            down += p->q[i];
            tb++;
        }
    }
    sh->f = f;
    sh->d0 = d;
    sh->dmin = d - down;
    uint64_t bits = (uint64_t)(up + down) + 1;
    size_t cells = (size_t)(sh->ka + 1) * (size_t)(sh->kb + 1);
    if (bits > (uint64_t)cap_of(p) * 64)
        return 0;
    sh->nw = (size_t)((bits + 63) / 64);
    if (sh->nw * cells > cap_of(p))
        return 0;
    return 1;
}

/* eo__split_dp_words() looks at the tables after every WORDS_STRIDE-th player, at most this
 * many of them, and scales up: a budget needs no more precision, and the count stays cheap. */
#define WORDS_SAMPLES 16

/* Weight of a word of table memory against a stepped word in eo__split_dp_words(): with
 * normal ratings a window is stepped about once, and the copies, the read-back's recomputation
 * and fresh pages make a word cost ~5 ns instead of ~1-2 (measured); 4, 8 and 16 tried, 8 kept
 * every normal row of bench_split as before and the young tails short. */
#define DP_MEM_WEIGHT 8

static int words_stride(int f)
{
    return f > WORDS_SAMPLES ? (f + WORDS_SAMPLES - 1) / WORDS_SAMPLES : 1;
}

uint64_t eo__split_dp_cost(const eo__split_prob *p, uint64_t *count)
{
    dp_shape sh;
    *count = 0;
    if (!dp_shape_of(p, &sh))
        return 0;
    *count = (uint64_t)((sh.f + words_stride(sh.f) - 1) / words_stride(sh.f)) *
             (uint64_t)(sh.ka + 1) * (uint64_t)(sh.kb + 1);
    /* a step works on the live cells: na + nb within f - ka - kb + 1 consecutive values */
    uint64_t cells = (uint64_t)(sh.ka + 1) * (uint64_t)(sh.kb + 1);
    uint64_t band = (uint64_t)(sh.f - sh.ka - sh.kb + 1) *
                    (uint64_t)((sh.ka < sh.kb ? sh.ka : sh.kb) + 1);
    if (sh.f >= sh.ka + sh.kb && band < cells)
        cells = band;
    return (uint64_t)sh.f * cells * sh.nw * 2 + 1;
}

/* Which differences of a cell can still end within max_gap: the players not yet added can move
 * the difference by at most the sum of the ra highest of them minus the sum of the rb lowest
 * (disjoint when ra + rb players remain), and by at least the mirror. A state outside that
 * window never reaches the full cell within max_gap, so only the words of the window are
 * stepped, cleared and copied; the bits outside it in those words mean nothing. The window
 * shrinks along every move (a state in the window after a move came from one in the window
 * before it: the move is one of the completions the earlier bound allows), so a step needs
 * its sources' windows only, and the read-back only tests bits inside windows. With
 * max_gap = EO__SPLIT_INF the windows are the whole table, as before. */
typedef struct dp_ctx {
    int ka, kb, f;
    size_t nw;
    int64_t dmin, t;     /* bit 0's difference; max_gap (clipped) */
    const int64_t *top;  /* top[v * (f + 1) + r]: sum of the r highest q of who[v..f-1] */
    const int64_t *rest; /* rest[v]: sum of q over who[v..f-1] */
    const ptrdiff_t *base; /* word i of cell c is word base[c] + i of its table */
} dp_ctx;

/* Word range [*lo, *hi] of cell (a, b) in the table after v players; 0 when it is empty. */
static int win(const dp_ctx *x, int v, int a, int b, ptrdiff_t *lo, ptrdiff_t *hi)
{
    int ra = x->ka - a, rb = x->kb - b, m = x->f - v;
    if (ra < 0 || rb < 0 || ra + rb > m)
        return 0;
    const int64_t *tp = x->top + (size_t)v * (size_t)(x->f + 1);
    int64_t all = x->rest[v];
    int64_t bot_ra = all - tp[m - ra], bot_rb = all - tp[m - rb];
    int64_t up = tp[ra] - bot_rb, down = bot_ra - tp[rb]; /* largest, least move */
    int64_t xl = -x->t - up - x->dmin, xh = x->t - down - x->dmin;
    int64_t nbits = (int64_t)x->nw * 64;
    if (xl < 0)
        xl = 0;
    if (xh > nbits - 1)
        xh = nbits - 1;
    if (xl > xh)
        return 0;
    *lo = (ptrdiff_t)(xl / 64);
    *hi = (ptrdiff_t)(xh / 64);
    return 1;
}

/* Word j of a source cell (at sb in its table) whose meaningful words are [sl, sh] (0
 * outside). */
static uint64_t word(const uint64_t *src, ptrdiff_t sb, ptrdiff_t j, ptrdiff_t sl, ptrdiff_t sh)
{
    return j >= sl && j <= sh ? src[sb + j] : 0;
}

/* Clips the middle run [*m0, *m1] of a shift (the words whose two source words are both
 * meaningful, so no edge test is needed) to [lo, hi]; an empty run becomes [hi + 1, hi], which
 * leaves every word to the edge loops. */
static void clip_run(ptrdiff_t lo, ptrdiff_t hi, ptrdiff_t *m0, ptrdiff_t *m1)
{
    if (*m0 < lo)
        *m0 = lo;
    if (*m1 > hi)
        *m1 = hi;
    if (*m0 > *m1) {
        *m0 = hi + 1;
        *m1 = hi;
    }
}

/* Words lo..hi of the cell at db in table t |= those of the cell at sb (same table) shifted by s
 * bits toward higher (up) or lower indices, the source's meaningful words being [sl, sh]: the
 * words that need no edge test run in a plain loop. */
static void or_shift_up(uint64_t *t, ptrdiff_t db, ptrdiff_t sb, ptrdiff_t lo, ptrdiff_t hi,
                        ptrdiff_t sl, ptrdiff_t sh, int64_t s)
{
    ptrdiff_t ws = (ptrdiff_t)(s / 64);
    unsigned bs = (unsigned)(s % 64);
    ptrdiff_t m0 = sl + ws + 1, m1 = sh + ws; /* src[i - ws] and src[i - ws - 1] both inside */
    clip_run(lo, hi, &m0, &m1);
    for (ptrdiff_t i = lo; i < m0; i++)
        t[db + i] |= word(t, sb, i - ws, sl, sh) << bs |
                  (bs ? word(t, sb, i - ws - 1, sl, sh) >> (64 - bs) : 0);
    if (bs)
        for (ptrdiff_t i = m0; i <= m1; i++)
            t[db + i] |= t[sb + i - ws] << bs | t[sb + i - ws - 1] >> (64 - bs);
    else
        for (ptrdiff_t i = m0; i <= m1; i++)
            t[db + i] |= t[sb + i - ws];
    for (ptrdiff_t i = m1 + 1; i <= hi; i++)
        t[db + i] |= word(t, sb, i - ws, sl, sh) << bs |
                  (bs ? word(t, sb, i - ws - 1, sl, sh) >> (64 - bs) : 0);
}

static void or_shift_down(uint64_t *t, ptrdiff_t db, ptrdiff_t sb, ptrdiff_t lo,
                          ptrdiff_t hi, ptrdiff_t sl, ptrdiff_t sh, int64_t s)
{
    ptrdiff_t ws = (ptrdiff_t)(s / 64);
    unsigned bs = (unsigned)(s % 64);
    ptrdiff_t m0 = sl - ws, m1 = sh - ws - 1; /* src[i + ws] and src[i + ws + 1] both inside */
    clip_run(lo, hi, &m0, &m1);
    for (ptrdiff_t i = lo; i < m0; i++)
        t[db + i] |= word(t, sb, i + ws, sl, sh) >> bs |
                  (bs ? word(t, sb, i + ws + 1, sl, sh) << (64 - bs) : 0);
    if (bs)
        for (ptrdiff_t i = m0; i <= m1; i++)
            t[db + i] |= t[sb + i + ws] >> bs | t[sb + i + ws + 1] << (64 - bs);
    else
        for (ptrdiff_t i = m0; i <= m1; i++)
            t[db + i] |= t[sb + i + ws];
    for (ptrdiff_t i = m1 + 1; i <= hi; i++)
        t[db + i] |= word(t, sb, i + ws, sl, sh) >> bs |
                  (bs ? word(t, sb, i + ws + 1, sl, sh) << (64 - bs) : 0);
}

/* The update of one table for the v-th undecided player (rating q; the table holds the first
 * v players and will hold v + 1), in place: cells are visited by (na, nb) descending, so each
 * reads cells not yet updated for him. Only live cells hold meaningful words, and of those
 * only the words of their window (a cell that is not live may hold anything: its window is
 * cleared when it becomes live), so copies and steps cost what the live windows cost. A cell
 * whose window is empty (it cannot reach the full cell within max_gap any more: among them
 * every cell with na + nb below the band, which cannot reach (ka, kb) at all) is marked dead:
 * no cell, now or later, needs its states (its successors' windows are empty or come from
 * states inside its window), and neither does the read-back, which only visits states on a
 * path to the full cell. */
static void dp_step(const dp_ctx *x, uint64_t *t, uint8_t *live, int v, int play, int64_t q)
{
    int ka = x->ka, kb = x->kb, w = kb + 1;
    /* Live cells after v + 1 players have na + nb <= v + 1 (the others stay dead) and, the
     * band, na + nb >= ka + kb - (f - v - 1); the diagonal just below the band is visited to
     * mark it dead, those below it are dead already. */
    int smin = ka + kb - (x->f - v - 1) - 1, smax = v + 1;
    for (int a = ka < smax ? ka : smax; a >= 0; a--) {
        int bl = smin - a > 0 ? smin - a : 0, bh = smax - a < kb ? smax - a : kb;
        for (int b = bh; b >= bl; b--) {
            size_t c = (size_t)a * (size_t)w + (size_t)b;
            ptrdiff_t lo, hi, sl, sh;
            if (!win(x, v + 1, a, b, &lo, &hi)) {
                live[c] = 0;
                continue;
            }
            ptrdiff_t db = x->base[c];
            int from_a = a > 0 && live[c - (size_t)w];
            int from_b = b > 0 && live[c - 1];
            int keep = !play && live[c]; /* u sits out: the cell's states stay */
            if (!keep && (from_a || from_b))
                memset(t + db + lo, 0, (size_t)(hi - lo + 1) * sizeof *t);
            /* a live source's window at v is not empty */
            if (from_a && win(x, v, a - 1, b, &sl, &sh))
                or_shift_up(t, db, x->base[c - (size_t)w], lo, hi, sl, sh, q);
            if (from_b && win(x, v, a, b - 1, &sl, &sh))
                or_shift_down(t, db, x->base[c - 1], lo, hi, sl, sh, q);
            live[c] = (uint8_t)(keep || from_a || from_b);
        }
    }
}

/* Bit x of the cell at cb in table t. */
static int bit_at(const uint64_t *t, ptrdiff_t cb, int64_t x)
{
    return (int)(t[cb + (ptrdiff_t)(x / 64)] >> (x % 64) & 1);
}

/* Copies the table after v players (the live cells' window words and every live flag). */
static void copy_tab(const dp_ctx *x, int v, uint64_t *tw, uint8_t *tl, const uint64_t *fw,
                     const uint8_t *fl)
{
    int w = x->kb + 1;
    size_t cells = (size_t)(x->ka + 1) * (size_t)w;
    /* live cells lie in the band (see dp_step) */
    int smin = x->ka + x->kb - (x->f - v), smax = v;
    for (int a = x->ka < smax ? x->ka : smax; a >= 0; a--) {
        int bl = smin - a > 0 ? smin - a : 0, bh = smax - a < x->kb ? smax - a : x->kb;
        for (int b = bl; b <= bh; b++) {
            size_t c = (size_t)a * (size_t)w + (size_t)b;
            ptrdiff_t lo, hi;
            if (fl[c] && win(x, v, a, b, &lo, &hi))
                memcpy(tw + x->base[c] + lo, fw + x->base[c] + lo,
                       (size_t)(hi - lo + 1) * sizeof *tw);
        }
    }
    memcpy(tl, fl, cells);
}

/* The read-back: a state (na, nb, difference bit x) walked back player by player. */
typedef struct back {
    const eo__split_prob *p;
    const dp_ctx *x;
    const uint8_t *who;
    size_t cells, one;
    uint64_t *tw; /* recursive read-back: one table per level */
    uint8_t *tl;
    int na, nb;
    int64_t x0;
    uint64_t a, b;
} back;

/* One step back over player u, given the table before him: a move whose earlier state was
 * reachable (one exists, since the current state is reachable). Every bit tested lies in its
 * cell's window (the window shrinks along every move), so it is meaningful. */
static void step_back(back *k, int u, const uint64_t *prev, const uint8_t *plv)
{
    int64_t q = k->p->q[u];
    size_t w = (size_t)(k->x->kb + 1);
    size_t c = (size_t)k->na * w + (size_t)k->nb;
    const ptrdiff_t *base = k->x->base;
    if (k->p->status[u] == EO__SP_FREE && plv[c] && bit_at(prev, base[c], k->x0))
        return;
    if (k->na > 0 && k->x0 >= q && plv[c - w] && bit_at(prev, base[c - w], k->x0 - q)) {
        k->a |= UINT64_C(1) << u;
        k->na--;
        k->x0 -= q;
    } else {
        k->b |= UINT64_C(1) << u;
        k->nb--;
        k->x0 += q;
    }
}

/* Walks the state back over who[lo..hi-1]; level lvl holds the table after lo players, the
 * levels above are free. The table at the middle is recomputed into the next level, the later
 * half walked from it, then the earlier half from lvl: one table per halving. */
static void walk(back *k, int lvl, int lo, int hi)
{
    uint64_t *cur = k->tw + (size_t)lvl * k->one;
    uint8_t *cl = k->tl + (size_t)lvl * k->cells;
    if (hi - lo == 1) {
        step_back(k, k->who[lo], cur, cl);
        return;
    }
    int mid = lo + (hi - lo) / 2;
    uint64_t *nxt = cur + k->one;
    uint8_t *nl = cl + k->cells;
    copy_tab(k->x, lo, nxt, nl, cur, cl);
    for (int v = lo; v < mid; v++)
        dp_step(k->x, nxt, nl, v, k->p->status[k->who[v]] == EO__SP_PLAY, k->p->q[k->who[v]]);
    walk(k, lvl + 1, mid, hi);
    walk(k, lvl, lo, mid);
}

/* The windows' sums: for each v, the q of who[v..f-1] sorted descending, prefix sums. */
static void window_sums(const eo__split_prob *p, const uint8_t *who, int f, int64_t *top,
                        int64_t *rest)
{
    int64_t srt[EO__SPLIT_N] = {0};
    for (int v = f; v >= 0; v--) {
        int m = f - v;
        if (v < f) /* q of who[v] joins srt[0..m-2], descending */
            eo__insert_desc(srt, m - 1, p->q[who[v]]);
        int64_t *tp = top + (size_t)v * (size_t)(f + 1);
        tp[0] = 0;
        for (int r = 0; r < m; r++)
            tp[r + 1] = tp[r] + srt[r];
        rest[v] = tp[m];
    }
}

/* The undecided players (FREE or PLAY) into who[], in index order; returns their number. */
static int undecided(const eo__split_prob *p, uint8_t *who)
{
    int f = 0;
    for (int u = 0; u < p->n; u++)
        if (p->status[u] == EO__SP_FREE || p->status[u] == EO__SP_PLAY)
            who[f++] = (uint8_t)u;
    return f;
}

uint64_t eo__split_dp_words(const eo__split_prob *p, int64_t max_gap)
{
    dp_shape sh;
    if (!dp_shape_of(p, &sh))
        return 0;
    uint8_t who[EO__SPLIT_N] = {0};
    int f = undecided(p, who);
    int64_t top[(EO__SPLIT_N + 1) * (EO__SPLIT_N + 1)], rest[EO__SPLIT_N + 1];
    window_sums(p, who, f, top, rest);
    dp_ctx x = {sh.ka, sh.kb, f, sh.nw, sh.dmin,
                max_gap < EO__SPLIT_INF ? max_gap : EO__SPLIT_INF, top, rest, NULL};
    uint64_t words = 0;
    int st = words_stride(f);
    for (int v = st; v <= f; v += st)
        for (int a = 0; a <= sh.ka; a++) {
            /* cells with a + b below the band cannot reach (ka, kb): skip them */
            int b0 = sh.ka + sh.kb - (f - v) - a, b1 = v - a < sh.kb ? v - a : sh.kb;
            for (int b = b0 > 0 ? b0 : 0; b <= b1; b++) {
                ptrdiff_t lo, hi;
                if (win(&x, v, a, b, &lo, &hi))
                    words += (uint64_t)(hi - lo + 1);
            }
        }
    /* plus the tables' memory: checkpoint copies and the read-back's recomputation touch
     * the packed tables (a cell's slot is its window when it can first be live) */
    uint64_t one = 0;
    for (int a = 0; a <= sh.ka; a++)
        for (int b = 0; b <= sh.kb; b++) {
            ptrdiff_t lo, hi;
            if (a + b <= f && win(&x, a + b, a, b, &lo, &hi))
                one += (uint64_t)(hi - lo + 1);
        }
    return words * (uint64_t)st + DP_MEM_WEIGHT * one + 1;
}

/* Each cell's slot in a table, into base[] (word i of cell c is word base[c] + i): only the
 * words of its window in the first table where it can be live (after na + nb players; later
 * windows lie inside it), so tables are small and dense when the windows are narrow. Slots go
 * by na + nb: a table's live cells (a band of consecutive diagonals) then lie together in
 * memory, so a table touches few pages even when it is mostly dead. Returns the words of one
 * table (at least 1). */
static size_t pack_cells(const dp_ctx *x, ptrdiff_t *base)
{
    int ka = x->ka, kb = x->kb;
    size_t one = 0;
    for (int sd = 0; sd <= ka + kb; sd++)
        for (int a = sd - kb > 0 ? sd - kb : 0; a <= ka && a <= sd; a++) {
            int b = sd - a;
            ptrdiff_t lo, hi;
            size_t c = (size_t)a * (size_t)(kb + 1) + (size_t)b;
            base[c] = 0;
            if (sd <= x->f && win(x, sd, a, b, &lo, &hi)) {
                base[c] = (ptrdiff_t)one - lo;
                one += (size_t)(hi - lo + 1);
            }
        }
    return one ? one : 1;
}

/* Which tables eo__split_dp() keeps to read a split back. */
typedef struct dp_plan {
    int c, nseg;  /* a checkpoint after every c-th player, nseg segments (c = 0: none) */
    int rec;      /* 1: the recursive read-back, one table per halving (walk()) */
    size_t tabs;  /* tables to allocate */
} dp_plan;

/* To read a split back the tables after every c-th of the f players are kept (checkpoints),
 * and one segment of c players is recomputed at a time on the way back: the c that needs the
 * fewest tables (near the square root of f; fresh table memory costs more in page faults than
 * recomputing the segments costs in steps, and a small buffer stays with the work space for
 * the next calls, EO_SPLIT_WS_KEEP) within cap words, tables of `one` words. When none fits,
 * the recursive read-back; when that does not fit either, only the running table, which
 * answers "no". */
static dp_plan plan_tables(int f, size_t one, size_t cap)
{
    dp_plan pl = {0, 0, 0, 1};
    for (int cc = 1; cc <= (f > 0 ? f : 1); cc++) {
        int ns = (f + cc - 1) / cc;
        size_t tb = (size_t)ns + 1 + (size_t)cc + 1;
        if (tb * one <= cap && (!pl.c || tb < pl.tabs)) {
            pl.c = cc;
            pl.nseg = ns;
            pl.tabs = tb;
        }
    }
    if (!pl.c) {
        size_t lv = 2; /* levels 0 .. ceil(log2 f) */
        while (((size_t)1 << (lv - 2)) < (size_t)f)
            lv++;
        if (lv * one <= cap) {
            pl.rec = 1;
            pl.tabs = lv;
        }
    }
    return pl;
}

/* The tables' memory, `one` words and `cells` live flags a table: t and live hold the
 * checkpoints 0..nseg or the recursive read-back's levels, seg and segl the running table
 * (and, after it, a segment's recomputed tables); with neither, one table. */
typedef struct dp_mem {
    uint64_t *t, *seg;
    uint8_t *live, *segl;
    size_t one, cells;
} dp_mem;

/* The forward pass: the first table holds the decided players' difference (bit z) when it is
 * within its window (only its one live cell needs clearing, see dp_step; outside the window
 * nothing reaches max_gap), then each undecided player who[j] is stepped in, with the
 * checkpoints of the plan. */
static void forward(const eo__split_prob *p, const dp_ctx *x, const uint8_t *who,
                    const dp_plan *pl, const dp_mem *m, int64_t z)
{
    ptrdiff_t lo0, hi0;
    if (win(x, 0, 0, 0, &lo0, &hi0) && z / 64 >= lo0 && z / 64 <= hi0) {
        memset(m->t + x->base[0] + lo0, 0, (size_t)(hi0 - lo0 + 1) * sizeof *m->t);
        m->t[x->base[0] + (ptrdiff_t)(z / 64)] = UINT64_C(1) << (z % 64);
        m->live[0] = 1;
    }
    if (pl->c || pl->rec)
        copy_tab(x, 0, m->seg, m->segl, m->t, m->live);
    for (int j = 0; j < x->f; j++) {
        dp_step(x, m->seg, m->segl, j, p->status[who[j]] == EO__SP_PLAY, p->q[who[j]]);
        if (pl->c && ((j + 1) % pl->c == 0 || j + 1 == x->f)) {
            size_t sx = (size_t)((j + pl->c) / pl->c);
            copy_tab(x, j + 1, m->t + sx * m->one, m->live + sx * m->cells, m->seg, m->segl);
        }
    }
}

/* The set bit nearest to difference 0 in the full cell of the last table (fin, finl), within
 * its window (the other bits of its words mean nothing): returns its distance from 0, the
 * least gap, with the bit in *bx; EO__SPLIT_INF (and *bx = -1) when the cell holds none. */
static int64_t nearest_bit(const dp_ctx *x, const uint64_t *fin, const uint8_t *finl,
                           int64_t *bx)
{
    size_t cf = (size_t)(x->ka + 1) * (size_t)(x->kb + 1) - 1;
    int64_t best = EO__SPLIT_INF;
    ptrdiff_t flo, fhi;
    *bx = -1;
    if (!finl[cf] || !win(x, x->f, x->ka, x->kb, &flo, &fhi))
        return best;
    int64_t zero = -x->dmin, xl = -x->t - x->dmin, xh = x->t - x->dmin;
    if (xl < (int64_t)flo * 64)
        xl = (int64_t)flo * 64;
    if (xh > (int64_t)fhi * 64 + 63)
        xh = (int64_t)fhi * 64 + 63;
    for (int64_t y = xl; y <= xh; y++)
        if (bit_at(fin, x->base[cf], y)) {
            int64_t g = eo__abs64(y - zero);
            if (g < best) {
                best = g;
                *bx = y;
            }
        }
    return best;
}

/* The split reaching bit bx of the full cell, into *a and *b: walked back from the last player
 * (each step takes a move whose earlier state was reachable, so the walk ends at the decided
 * players' state), then the decided players added. Recursively, or segment by segment from the
 * last: the step back over player v needs the table before him, the checkpoint for the
 * segment's first player, recomputed from it for the others (into seg + 1 ..; with c = 1
 * every table is a checkpoint). */
static void read_back(const eo__split_prob *p, const dp_ctx *x, const uint8_t *who,
                      const dp_plan *pl, const dp_mem *m, int64_t bx, uint64_t *a, uint64_t *b)
{
    size_t one = m->one, cells = m->cells;
    int c = pl->c, f = x->f;
    back k = {p, x, who, cells, one, m->t, m->live, x->ka, x->kb, bx, 0, 0};
    if (pl->rec && f > 0)
        walk(&k, 0, 0, f);
    for (int sg = pl->nseg - 1; c && sg >= 0; sg--) {
        int start = sg * c, end = start + c < f ? start + c : f;
        uint64_t *ck = m->t + (size_t)sg * one, *seg = m->seg;
        uint8_t *ckl = m->live + (size_t)sg * cells, *segl = m->segl;
        for (int v = start; v + 1 < end; v++) {
            size_t o = (size_t)(v - start);
            const uint64_t *from = o ? seg + o * one : ck;
            const uint8_t *froml = o ? segl + o * cells : ckl;
            copy_tab(x, v, seg + (o + 1) * one, segl + (o + 1) * cells, from, froml);
            dp_step(x, seg + (o + 1) * one, segl + (o + 1) * cells, v,
                    p->status[who[v]] == EO__SP_PLAY, p->q[who[v]]);
        }
        for (int v = end; v > start; v--) {
            size_t o = (size_t)(v - 1 - start);
            step_back(&k, who[v - 1], o ? seg + o * one : ck, o ? segl + o * cells : ckl);
        }
    }
    for (int i = 0; i < p->n; i++) {
        if (p->status[i] == EO__SP_A)
            k.a |= UINT64_C(1) << i;
        else if (p->status[i] == EO__SP_B)
            k.b |= UINT64_C(1) << i;
    }
    *a = k.a;
    *b = k.b;
}

int eo__split_dp(const eo__split_prob *p, int64_t max_gap, eo__split_sol *sol)
{
    dp_shape sh;
    if (!dp_shape_of(p, &sh))
        return -1;
    uint8_t who[EO__SPLIT_N] = {0};
    int f = undecided(p, who);
    int64_t top[(EO__SPLIT_N + 1) * (EO__SPLIT_N + 1)], rest[EO__SPLIT_N + 1];
    window_sums(p, who, f, top, rest);
    ptrdiff_t base[(EO__SPLIT_N / 2 + 1) * (EO__SPLIT_N / 2 + 1)];
    dp_ctx x = {sh.ka, sh.kb, f, sh.nw, sh.dmin,
                max_gap < EO__SPLIT_INF ? max_gap : EO__SPLIT_INF, top, rest, base};
    dp_mem m;
    m.cells = (size_t)(sh.ka + 1) * (size_t)(sh.kb + 1);
    m.one = pack_cells(&x, base);
    dp_plan pl = plan_tables(f, m.one, cap_of(p));
    /* the work space's buffer, or one of our own for callers without one (tests) */
    eo__split_buf own = {NULL, 0}, *buf = p->dp_buf ? p->dp_buf : &own;
    m.t = eo__split_buf_get(buf, pl.tabs * m.one * sizeof *m.t + pl.tabs * m.cells);
    if (!m.t)
        return -1; /* the search answers instead: nothing is lost */
    m.live = (uint8_t *)(m.t + pl.tabs * m.one);
    memset(m.live, 0, m.cells);
    /* layout: checkpoints 0..nseg, then the segment's c + 1 tables; or the levels of the
     * recursive read-back (level 1 runs forward); or one table */
    m.seg = pl.c ? m.t + (size_t)(pl.nseg + 1) * m.one : pl.rec ? m.t + m.one : m.t;
    m.segl = pl.c ? m.live + (size_t)(pl.nseg + 1) * m.cells : pl.rec ? m.live + m.cells : m.live;
    forward(p, &x, who, &pl, &m, sh.d0 - sh.dmin);
    int64_t bx, best = nearest_bit(&x, m.seg, m.segl, &bx);
    int rc;
    if (best > max_gap) {
        rc = 0;
    } else if (!pl.c && !pl.rec) {
        rc = -1;
    } else {
        read_back(p, &x, who, &pl, &m, bx, &sol->a, &sol->b);
        sol->gap = best;
        rc = 1;
    }
    free(own.p);
    return rc;
}
