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

uint64_t eo__split_dp_cost(const eo__split_prob *p)
{
    dp_shape sh;
    if (!dp_shape_of(p, &sh))
        return 0;
    /* a step works on the live cells: na + nb within f - ka - kb + 1 consecutive values */
    uint64_t cells = (uint64_t)(sh.ka + 1) * (uint64_t)(sh.kb + 1);
    uint64_t band = (uint64_t)(sh.f - sh.ka - sh.kb + 1) *
                    (uint64_t)((sh.ka < sh.kb ? sh.ka : sh.kb) + 1);
    if (sh.f >= sh.ka + sh.kb && band < cells)
        cells = band;
    return (uint64_t)sh.f * cells * sh.nw * 2 + 1;
}

/* dst |= src shifted by s bits toward higher (up) or lower indices; bits leaving drop. */
static void or_shift_up(uint64_t *dst, const uint64_t *src, size_t nw, int64_t s)
{
    size_t ws = (size_t)(s / 64);
    unsigned bs = (unsigned)(s % 64);
    if (ws >= nw)
        return;
    for (size_t i = nw; i-- > ws;) {
        uint64_t v = src[i - ws] << bs;
        if (bs && i > ws)
            v |= src[i - ws - 1] >> (64 - bs);
        dst[i] |= v;
    }
}

static void or_shift_down(uint64_t *dst, const uint64_t *src, size_t nw, int64_t s)
{
    size_t ws = (size_t)(s / 64);
    unsigned bs = (unsigned)(s % 64);
    if (ws >= nw)
        return;
    for (size_t i = 0; i + ws < nw; i++) {
        uint64_t v = src[i + ws] >> bs;
        if (bs && i + ws + 1 < nw)
            v |= src[i + ws + 1] << (64 - bs);
        dst[i] |= v;
    }
}

/* Least na + nb of a cell that can still reach (ka, kb) once undecided player v (0-based) is
 * added: the f - v - 1 players after him add at most one each. */
static int band_lo(int ka, int kb, int f, int v)
{
    return ka + kb - (f - v - 1);
}

/* The update of one table for undecided player u (rating q), in place: cells are visited by
 * (na, nb) descending, so each reads cells not yet updated for u. Only live cells hold
 * meaningful words (a cell that is not live may hold anything: it is cleared when it becomes
 * live), so copies and steps cost what the live cells cost. Cells with na + nb < lo cannot
 * reach the full cell any more and are marked dead: no cell at or above lo, now or later, reads
 * them (a cell reads itself and its two neighbours with one player less, all at or above the
 * previous step's bound, lo - 1), and neither does the read-back, which only visits states on
 * a path to the full cell. */
static void dp_step(uint64_t *t, uint8_t *live, int ka, int kb, size_t nw, int play, int64_t q,
                    int lo)
{
    int w = kb + 1;
    for (int a = ka; a >= 0; a--)
        for (int b = kb; b >= 0; b--) {
            size_t c = (size_t)a * (size_t)w + (size_t)b;
            if (a + b < lo) {
                live[c] = 0;
                continue;
            }
            uint64_t *dst = t + c * nw;
            int from_a = a > 0 && live[c - (size_t)w];
            int from_b = b > 0 && live[c - 1];
            int keep = !play && live[c]; /* u sits out: the cell's states stay */
            if (!keep && (from_a || from_b))
                memset(dst, 0, nw * sizeof *dst);
            if (from_a)
                or_shift_up(dst, t + (c - (size_t)w) * nw, nw, q);
            if (from_b)
                or_shift_down(dst, t + (c - 1) * nw, nw, q);
            live[c] = (uint8_t)(keep || from_a || from_b);
        }
}

static int bit_at(const uint64_t *t, int64_t x)
{
    return (int)(t[x / 64] >> (x % 64) & 1);
}

/* Copies a table (the live cells' words and every live flag) from to to. */
static void copy_tab(uint64_t *tw, uint8_t *tl, const uint64_t *fw, const uint8_t *fl, size_t one,
                     size_t cells)
{
    size_t nw = one / cells;
    for (size_t c = 0; c < cells; c++)
        if (fl[c])
            memcpy(tw + c * nw, fw + c * nw, nw * sizeof *tw);
    memcpy(tl, fl, cells);
}

/* The read-back: a state (na, nb, difference bit x) walked back player by player. */
typedef struct back {
    const eo__split_prob *p;
    const uint8_t *who;
    int ka, kb, f;
    size_t nw, cells, one;
    uint64_t *tw; /* recursive read-back: one table per level */
    uint8_t *tl;
    int na, nb;
    int64_t x;
    uint64_t a, b;
} back;

/* One step back over player u, given the table before u: a move whose earlier state was
 * reachable (one exists, since the current state is reachable). */
static void step_back(back *k, int u, const uint64_t *prev, const uint8_t *plv)
{
    int64_t q = k->p->q[u];
    size_t w = (size_t)(k->kb + 1), nw = k->nw;
    size_t c = (size_t)k->na * w + (size_t)k->nb;
    if (k->p->status[u] == EO__SP_FREE && plv[c] && bit_at(prev + c * nw, k->x))
        return;
    if (k->na > 0 && k->x >= q && plv[c - w] && bit_at(prev + (c - w) * nw, k->x - q)) {
        k->a |= UINT64_C(1) << u;
        k->na--;
        k->x -= q;
    } else {
        k->b |= UINT64_C(1) << u;
        k->nb--;
        k->x += q;
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
    copy_tab(nxt, nl, cur, cl, k->one, k->cells);
    for (int v = lo; v < mid; v++)
        dp_step(nxt, nl, k->ka, k->kb, k->nw, k->p->status[k->who[v]] == EO__SP_PLAY,
                k->p->q[k->who[v]], band_lo(k->ka, k->kb, k->f, v));
    walk(k, lvl + 1, mid, hi);
    walk(k, lvl, lo, mid);
}

int eo__split_dp(const eo__split_prob *p, int64_t max_gap, eo__split_sol *sol)
{
    dp_shape sh;
    if (!dp_shape_of(p, &sh))
        return -1;
    int ka = sh.ka, kb = sh.kb, f = sh.f;
    size_t nw = sh.nw, cells = (size_t)(ka + 1) * (size_t)(kb + 1), one = cells * nw;
    uint8_t who[EO__SPLIT_N];
    int j = 0;
    for (int u = 0; u < p->n; u++)
        if (p->status[u] == EO__SP_FREE || p->status[u] == EO__SP_PLAY)
            who[j++] = (uint8_t)u;
    /* To read a split back the tables after every c-th player are kept (checkpoints), and one
     * segment of c players is recomputed at a time on the way back: the least c that fits the
     * cap (c = 1 keeps every table). When none fits, the recursive read-back (walk()) with one
     * table per halving of the players; when that does not fit either, only the running table,
     * which answers "no". */
    int c = 0, nseg = 0, rec = 0;
    size_t tabs = 1;
    for (int cc = 1; cc <= (f > 0 ? f : 1); cc++) {
        int ns = (f + cc - 1) / cc;
        size_t tb = (size_t)ns + 1 + (size_t)cc + 1;
        if (tb * one <= cap_of(p)) {
            c = cc;
            nseg = ns;
            tabs = tb;
            break;
        }
    }
    if (!c) {
        size_t lv = 2; /* levels 0 .. ceil(log2 f) */
        while (((size_t)1 << (lv - 2)) < (size_t)f)
            lv++;
        if (lv * one <= cap_of(p)) {
            rec = 1;
            tabs = lv;
        }
    }
    /* the work space's buffer, or one of our own for callers without one (tests) */
    eo__split_buf own = {NULL, 0}, *buf = p->dp_buf ? p->dp_buf : &own;
    uint64_t *t = eo__split_buf_get(buf, tabs * one * sizeof *t + tabs * cells);
    if (!t)
        return -1; /* the search answers instead: nothing is lost */
    uint8_t *live = (uint8_t *)(t + tabs * one);
    /* Only the first table's one live cell needs clearing (see dp_step). */
    memset(t, 0, nw * sizeof *t);
    memset(live, 0, cells);
    /* layout: checkpoints 0..nseg, then the segment's c + 1 tables; or the levels of the
     * recursive read-back (level 1 runs forward); or one table */
    uint64_t *seg = c ? t + (size_t)(nseg + 1) * one : rec ? t + one : t;
    uint8_t *segl = c ? live + (size_t)(nseg + 1) * cells : rec ? live + cells : live;
    int64_t z = sh.d0 - sh.dmin; /* bit of the decided players' difference */
    t[(size_t)(z / 64)] = UINT64_C(1) << (z % 64);
    live[0] = 1;
    if (c || rec)
        copy_tab(seg, segl, t, live, one, cells);
    for (j = 0; j < f; j++) {
        dp_step(seg, segl, ka, kb, nw, p->status[who[j]] == EO__SP_PLAY, p->q[who[j]],
                band_lo(ka, kb, f, j));
        if (c && ((j + 1) % c == 0 || j + 1 == f)) {
            size_t sx = (size_t)((j + c) / c);
            copy_tab(t + sx * one, live + sx * cells, seg, segl, one, cells);
        }
    }
    /* The set bit nearest to difference 0 in the full cell of the last table. */
    size_t cf = cells - 1;
    int64_t best = EO__SPLIT_INF, bx = -1;
    if (segl[cf]) {
        const uint64_t *fin = seg + cf * nw;
        int64_t zero = -sh.dmin, nbits = (int64_t)nw * 64;
        for (int64_t x = 0; x < nbits; x++)
            if (bit_at(fin, x)) {
                int64_t g = x > zero ? x - zero : zero - x;
                if (g < best) {
                    best = g;
                    bx = x;
                }
            }
    }
    int rc;
    if (best > max_gap) {
        rc = 0;
    } else if (!c && !rec) {
        rc = -1;
    } else {
        /* Back from the last player: each step takes a move whose earlier state was
         * reachable, so the walk ends at the decided players' state. */
        back k = {p, who, ka, kb, f, nw, cells, one, t, live, ka, kb, bx, 0, 0};
        if (rec && f > 0)
            walk(&k, 0, 0, f);
        for (int sg = nseg - 1; c && sg >= 0; sg--) {
            int start = sg * c, end = start + c < f ? start + c : f;
            copy_tab(seg, segl, t + (size_t)sg * one, live + (size_t)sg * cells, one, cells);
            for (int v = start; v < end; v++) {
                size_t o = (size_t)(v - start);
                copy_tab(seg + (o + 1) * one, segl + (o + 1) * cells, seg + o * one,
                         segl + o * cells, one, cells);
                dp_step(seg + (o + 1) * one, segl + (o + 1) * cells, ka, kb, nw,
                        p->status[who[v]] == EO__SP_PLAY, p->q[who[v]], band_lo(ka, kb, f, v));
            }
            for (int v = end; v > start; v--)
                step_back(&k, who[v - 1], seg + (size_t)(v - 1 - start) * one,
                          segl + (size_t)(v - 1 - start) * cells);
        }
        for (int i = 0; i < p->n; i++) {
            if (p->status[i] == EO__SP_A)
                k.a |= UINT64_C(1) << i;
            else if (p->status[i] == EO__SP_B)
                k.b |= UINT64_C(1) << i;
        }
        sol->a = k.a;
        sol->b = k.b;
        sol->gap = best;
        rc = 1;
    }
    free(own.p);
    return rc;
}
