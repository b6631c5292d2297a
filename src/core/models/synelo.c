/* SynElo (seed 000, F1-F5): the rules and every choice the seed left open are in
 * docs/MODELS.md; this file follows them operation by operation, because the golden replay
 * (tests/tools/synelo_ref.py) and every other machine must get the same bits. */
#include "evenodds/eo_synelo.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "core/numeric.h"
#include "core/models/model_internal.h"
#include "core/models/synelo_gtab.h"

void eo_synelo_params_default(eo_synelo_params *p)
{
    p->r0 = 1000;
    p->r_min = 100;
    p->r_grad_cap = 2200;
    p->t_shadow = 50;
    p->t_stale_days = 30;
    p->k_min = 2.0;
    p->k_max = 72.0;
    p->theta = 2400.0;
    p->window = 500;
    p->w_vel = 0.25;
    p->w_wre = 0.25;
    p->w_vol = 0.50;
    p->sigma = 400.0;
}

int eo_synelo_theta_from_kmax(int kmax_team, double *theta)
{
    if (kmax_team < 1 || kmax_team > 128)
        return EO_ERANGE;
    /* median{1..k} = (k+1)/2; its floor is integer division. */
    *theta = 400.0 * (double)((kmax_team + 1) / 2);
    return 0;
}

double eo_synelo_theta_of(const eo_synelo_params *p, size_t na, size_t nb)
{
    if (p->theta > 0.0)
        return p->theta;
    size_t k = na > nb ? na : nb;
    double theta = 2400.0; /* kmax_team 12: the seed's default, for a k outside F1's range */
    if (k <= 128)
        (void)eo_synelo_theta_from_kmax(k > 0 ? (int)k : 1, &theta);
    return theta;
}

static bool finite_pos(double v)
{
    return isfinite(v) && v > 0.0;
}

static bool finite_nonneg(double v)
{
    return isfinite(v) && v >= 0.0;
}

int eo_synelo_params_check(const eo_synelo_params *p)
{
    if (p == NULL)
        return EO_EINVAL;
    if (p->r_min < 1 || p->r_min > p->r0 || p->r0 > p->r_grad_cap ||
        p->r_grad_cap > EO_SYNELO_RATING_MAX)
        return EO_EINVAL;
    if (p->t_shadow < 0 || p->t_stale_days < 0 || p->t_stale_days > 36500)
        return EO_EINVAL;
    if (!finite_nonneg(p->k_min) || !finite_pos(p->k_max) || p->k_min > p->k_max ||
        p->k_max > 1e6)
        return EO_EINVAL;
    if (!(p->theta == 0.0 || finite_pos(p->theta)) || !finite_pos(p->sigma))
        return EO_EINVAL;
    if (p->window < 2 || p->window > EO_SYNELO_WINDOW_MAX)
        return EO_EINVAL;
    if (!finite_nonneg(p->w_vel) || !finite_nonneg(p->w_wre) || !finite_nonneg(p->w_vol))
        return EO_EINVAL;
    return 0;
}

void eo_synelo_player_init(eo_synelo_player *pl, const eo_synelo_params *p)
{
    memset(pl, 0, sizeof *pl);
    pl->rating = p->r0;
}

void eo_synelo_player_free(eo_synelo_player *pl)
{
    if (pl == NULL)
        return;
    free(pl->win.ring);
    memset(pl, 0, sizeof *pl);
}

/* F1 with Θ @p theta and a field term added to the logit (x + 0 is x: a field of 0 gives
 * eo_synelo_p_a()'s bits). */
static double p_a_field(double theta, int64_t sum_a, int64_t sum_b, double field)
{
    double x = (double)(sum_a - sum_b) / theta + field;
    return 1.0 / (1.0 + eo__exp(-x));
}

double eo_synelo_p_a(const eo_synelo_params *p, int64_t sum_a, int64_t sum_b)
{
    return p_a_field(p->theta, sum_a, sum_b, 0.0);
}

/* Address of the i-th oldest entry of a window with room (capacity > 0). */
static inline const eo_synelo_entry *win_at(const eo_synelo_window *w, uint32_t i)
{
    uint32_t at = w->head + i;
    if (at >= w->capacity)
        at -= w->capacity;
    return &w->ring[at];
}

/* Rating of the i-th oldest entry (0 = oldest). */
static inline int64_t win_r(const eo_synelo_window *w, uint32_t i)
{
    return win_at(w, i)->rating;
}

/* eo_synelo_convergence(), inlined into the per-update path. */
static inline double convergence(const eo_synelo_params *p, const eo_synelo_window *w)
{
    uint32_t n = w->len;
    if (n < 2)
        return 1.0;
    int64_t m = n / 2;
    /* Each signal is one exact integer numerator over one exact denominator, so it is a single
     * correctly rounded division (docs/MODELS.md, "Determinism"):
     *   v_vel = |Σnew - Σold| / (m K_max)           (mean difference over K_max)
     *   v_wre = 10 |Σo_half 2^30 - Σe_q31| / (n 2^31) (|mean(o) - mean(e)| / 0.10)
     *   v_vol = sqrt(n Σr² - (Σr)²) / (n K_max)     (population std over K_max)
     * The denominators are exact when K_max is an integer (72 by default); otherwise m K_max
     * is rounded once more, deterministically all the same. */
    int64_t dv = w->sum_new - w->sum_old;
    double v_vel = (double)(dv < 0 ? -dv : dv) / ((double)m * p->k_max);
    int64_t wre = w->sum_o * ((int64_t)1 << 30) - w->sum_e;
    double v_wre = (double)((wre < 0 ? -wre : wre) * 10) / (double)((int64_t)n << 31);
    int64_t var_n2 = (int64_t)n * w->sum_r2 - w->sum_r * w->sum_r;
    double v_vol = sqrt((double)var_n2) / ((double)n * p->k_max);
    return eo__clamp01(p->w_vel * v_vel + p->w_wre * v_wre + p->w_vol * v_vol);
}

double eo_synelo_convergence(const eo_synelo_params *p, const eo_synelo_window *w)
{
    return convergence(p, w);
}

static inline double gauss(const eo_synelo_params *p, int32_t rating)
{
    int64_t d = (int64_t)rating - p->r0;
    return eo__exp(-(double)(d * d) / (2.0 * p->sigma * p->sigma));
}

double eo_synelo_k(const eo_synelo_params *p, const eo_synelo_player *pl)
{
    double c = eo_synelo_convergence(p, &pl->win);
    double g = gauss(p, pl->rating);
    return p->k_min + (p->k_max - p->k_min) * c * g;
}

void eo__gtab_init(eo__gtab *t, const eo_synelo_params *p)
{
    t->lo = (int64_t)p->r0 - EO__GTAB_HALF;
    /* Entries for ratings below r_min are never read, but are the true values all the same. */
    for (int64_t i = 0; i < EO__GTAB_N; i++)
        t->g[i] = gauss(p, (int32_t)(t->lo + i));
}

/* G for one rating: from the table when it covers the rating, else computed (same bits). */
static inline double gauss_tab(const eo_synelo_params *p, const eo__gtab *t, int32_t rating)
{
    if (t != NULL) {
        uint64_t i = (uint64_t)((int64_t)rating - t->lo);
        if (i < EO__GTAB_N)
            return t->g[i];
    }
    return gauss(p, rating);
}

/* Makes room for one more entry without changing the window's content, so that a failed
 * allocation leaves every player as it was. The ring is linear (head 0) until it first holds
 * W entries, and it holds exactly W from then on, so growing never has to unwrap it. */
static int win_reserve(eo_synelo_window *w, uint32_t cap_max)
{
    if (w->len < w->capacity || w->capacity >= cap_max)
        return 0;
    uint32_t cap = w->capacity < 8 ? 8 : w->capacity * 2;
    if (cap > cap_max)
        cap = cap_max;
    eo_synelo_entry *ring = realloc(w->ring, (size_t)cap * sizeof *ring);
    if (ring == NULL)
        return EO_ENOMEM;
    if (w->head != 0) { /* only after a W change; keep the order anyway */
        uint32_t tail = w->capacity - w->head;
        memmove(ring + cap - tail, ring + w->head, (size_t)tail * sizeof *ring);
        w->head = cap - tail;
    }
    w->ring = ring;
    w->capacity = cap;
    return 0;
}

/* Drops the oldest entry, keeping the halves' sums: with n entries m = n/2 before and
 * (n-1)/2 after. */
static void win_evict(eo_synelo_window *w)
{
    uint32_t n = w->len;
    uint32_t m = n / 2;
    const eo_synelo_entry *old = &w->ring[w->head];
    int64_t r0 = old->rating;
    if (n % 2 == 1) {
        w->sum_old += win_r(w, m) - r0; /* w_old slides by one; w_new keeps its m */
    } else {
        w->sum_old -= r0;               /* both halves shrink to m-1 */
        w->sum_new -= win_r(w, n - m);
    }
    w->sum_r -= r0;
    w->sum_r2 -= r0 * r0;
    w->sum_e -= old->e_q31;
    w->sum_o -= old->o_half;
    w->head = (w->head + 1 == w->capacity) ? 0 : w->head + 1;
    w->len = n - 1;
}

/* Appends an entry (room reserved); with n entries m = n/2 before and (n+1)/2 after. */
static inline void win_push(eo_synelo_window *w, int32_t rating, uint32_t e_q31,
                            uint8_t o_half)
{
    uint32_t n = w->len;
    uint32_t m = n / 2;
    int64_t r = rating;
    if (n % 2 == 1) {
        w->sum_old += win_r(w, m); /* both halves grow to m+1 */
        w->sum_new += r;
    } else if (m > 0) {
        w->sum_new += r - win_r(w, n - m); /* w_new slides by one */
    }
    uint32_t at = w->head + n;
    if (at >= w->capacity)
        at -= w->capacity;
    w->ring[at].rating = (unsigned)rating;
    w->ring[at].e_q31 = e_q31;
    w->ring[at].o_half = o_half;
    w->sum_r += r;
    w->sum_r2 += r * r;
    w->sum_e += e_q31;
    w->sum_o += o_half;
    w->len = n + 1;
}

/* F2-F5 for one participant from its round-start state: K and the new rating. */
static inline void compute_one(const eo_synelo_params *p, const eo__gtab *t,
                               const eo_synelo_player *pl, double expected, double s,
                               eo_synelo_update *u)
{
    /* eo_synelo_k() with G possibly from the table: the same operations in the same order. */
    double c = convergence(p, &pl->win);
    double g = gauss_tab(p, t, pl->rating);
    double k = p->k_min + (p->k_max - p->k_min) * c * g;
    int64_t after = eo__round_half_even((double)pl->rating + k * (s - expected));
    if (after < p->r_min)
        after = p->r_min;
    if (pl->rounds + 1 == (uint32_t)p->t_shadow && after > p->r_grad_cap)
        after = p->r_grad_cap;
    if (after > EO_SYNELO_RATING_MAX)
        after = EO_SYNELO_RATING_MAX;
    u->before = pl->rating;
    u->after = (int32_t)after;
    u->expected = expected;
    u->k = k;
}

/* win_evict() then win_push() on a window of n >= 2 entries, in one step: the steady state of
 * every regular player. With m = floor(n/2), the two steps' changes add up to
 *   sum_old += r(m) - r(0),  sum_new += r_new - r(n - m)
 * for odd and even n alike (indices from the oldest before the eviction), and the new entry
 * takes slot head + n, the evicted slot when the ring holds exactly n. The sums are exact
 * integers, so the result is the two steps' result. */
static void win_replace(eo_synelo_window *w, int32_t rating, uint32_t e_q31, uint8_t o_half)
{
    uint32_t n = w->len;
    uint32_t m = n / 2;
    eo_synelo_entry *old = &w->ring[w->head];
    int64_t r0 = old->rating;
    int64_t r = rating;
    w->sum_old += win_r(w, m) - r0;
    w->sum_new += r - win_r(w, n - m);
    w->sum_r += r - r0;
    w->sum_r2 += r * r - r0 * r0;
    w->sum_e += (int64_t)e_q31 - (int64_t)old->e_q31;
    w->sum_o += (int64_t)o_half - (int64_t)old->o_half;
    uint32_t at = w->head + n;
    if (at >= w->capacity)
        at -= w->capacity;
    w->ring[at].rating = (unsigned)rating;
    w->ring[at].e_q31 = e_q31;
    w->ring[at].o_half = o_half;
    w->head = (w->head + 1 == w->capacity) ? 0 : w->head + 1;
}

/* Writes a computed update: window, rating, rounds, last round end. @p e_q31 is the Q31 form
 * of u->expected (the same for a whole team, so computed once per team). */
static inline void commit_one(const eo_synelo_params *p, eo_synelo_player *pl,
                              const eo_synelo_update *u, uint32_t e_q31, uint8_t o_half,
                              int64_t ended_at)
{
    eo_synelo_window *w = &pl->win;
    if (w->len == (uint32_t)p->window && w->len >= 2) {
        win_replace(w, u->after, e_q31, o_half);
    } else {
        if (w->len == (uint32_t)p->window)
            win_evict(w);
        win_push(w, u->after, e_q31, o_half);
    }
    pl->rating = u->after;
    pl->rounds += 1;
    if (ended_at > 0)
        pl->last_ended_at = ended_at;
}

int eo_synelo_rate(const eo_synelo_params *p, eo_synelo_player *const *a, size_t na,
                   eo_synelo_player *const *b, size_t nb, eo_winner winner, int64_t ended_at,
                   eo_synelo_update *out)
{
    return eo__synelo_rate_tab(p, NULL, a, na, b, nb, winner, 0.0, ended_at, out);
}

int eo__synelo_rate_tab(const eo_synelo_params *p, const eo__gtab *t, eo_synelo_player *const *a,
                        size_t na, eo_synelo_player *const *b, size_t nb, eo_winner winner,
                        double field, int64_t ended_at, eo_synelo_update *out)
{
    if (p == NULL || a == NULL || b == NULL || na == 0 || nb == 0 ||
        na + nb > EO_PLAYERS_MAX ||
        (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW))
        return EO_EINVAL;
    eo_synelo_update local[EO_PLAYERS_MAX];
    eo_synelo_update *u = out != NULL ? out : local;
    uint32_t cap_max = (uint32_t)p->window;
    int64_t sum[2] = {0, 0};
    size_t n = na + nb;
    /* Three passes: (1) room in every window, sums, and a prefetch of the window entries the
     * update will touch; (2) every K and new rating, from round-start state only; (3) the
     * writes. Keeping the window reads and writes apart from their prefetch by a whole pass
     * hides most of their cache misses. */
    for (size_t i = 0; i < n; i++) {
        eo_synelo_player *pl = i < na ? a[i] : b[i - na];
        if (win_reserve(&pl->win, cap_max) != 0)
            return EO_ENOMEM;
        /* The entries the update reads and writes: the oldest (evicted; in a full ring also
         * the slot the new entry takes), the halves' boundaries, the next free slot. Written
         * here rather than in a helper: gcc 12 deems a helper made only of prefetches pure
         * and deletes the call. */
        const eo_synelo_window *w = &pl->win;
        uint32_t len = w->len;
        __builtin_prefetch(win_at(w, 0));
        __builtin_prefetch(win_at(w, len / 2));
        __builtin_prefetch(win_at(w, len - len / 2));
        __builtin_prefetch(win_at(w, len < w->capacity ? len : 0));
        sum[i >= na] += pl->rating;
    }
    double p_a = p_a_field(eo_synelo_theta_of(p, na, nb), sum[0], sum[1], field);
    double p_b = 1.0 - p_a;
    uint8_t o_a = winner == EO_WIN_A ? 2 : winner == EO_WIN_B ? 0 : 1;
    uint8_t o_b = (uint8_t)(2 - o_a);
    double s_a = 0.5 * o_a;
    double s_b = 0.5 * o_b;
    for (size_t i = 0; i < na; i++)
        compute_one(p, t, a[i], p_a, s_a, &u[i]);
    for (size_t i = 0; i < nb; i++)
        compute_one(p, t, b[i], p_b, s_b, &u[na + i]);
    uint32_t e_a = (uint32_t)eo__round_half_even(p_a * 2147483648.0);
    uint32_t e_b = (uint32_t)eo__round_half_even(p_b * 2147483648.0);
    for (size_t i = 0; i < na; i++)
        commit_one(p, a[i], &u[i], e_a, o_a, ended_at);
    for (size_t i = 0; i < nb; i++)
        commit_one(p, b[i], &u[na + i], e_b, o_b, ended_at);
    return 0;
}

bool eo_synelo_visible(const eo_synelo_params *p, const eo_synelo_player *pl)
{
    return pl->rounds >= (uint32_t)p->t_shadow;
}

bool eo_synelo_stale(const eo_synelo_params *p, const eo_synelo_player *pl, int64_t now)
{
    if (pl->rounds == 0 || pl->last_ended_at == 0)
        return false;
    return now - pl->last_ended_at > (int64_t)p->t_stale_days * 86400;
}

/* ---- SynElo behind the model interface (eo_model.h) ---- */

/* Parameter indices: the order of synelo_params[]. */
enum {
    SP_R0, SP_R_MIN, SP_R_GRAD_CAP, SP_T_SHADOW, SP_T_STALE_DAYS, SP_K_MIN, SP_K_MAX,
    SP_THETA, SP_KMAX_TEAM, SP_WINDOW, SP_W_VEL, SP_W_WRE, SP_W_VOL, SP_SIGMA, SP_COUNT
};

static const eo_param_spec synelo_params[SP_COUNT] = {
    [SP_R0] = {"r0", "starting rating R0", 1000, 1, EO_SYNELO_RATING_MAX, true, NULL},
    [SP_R_MIN] = {"r_min", "rating floor", 100, 1, EO_SYNELO_RATING_MAX, true, NULL},
    [SP_R_GRAD_CAP] = {"r_grad_cap", "cap on the rating at shadow graduation", 2200, 1,
                       EO_SYNELO_RATING_MAX, true, NULL},
    [SP_T_SHADOW] = {"t_shadow", "rounds before the rating is visible", 50, 0, 1e6, true, NULL},
    [SP_T_STALE_DAYS] = {"t_stale_days", "days without a round before a lookup says stale", 30,
                         0, 36500, true, NULL},
    [SP_K_MIN] = {"k_min", "minimum K", 2, 0, 1e6, false, NULL},
    [SP_K_MAX] = {"k_max", "maximum K", 72, 1e-9, 1e6, false, NULL},
    [SP_THETA] = {"theta",
                  "logistic scale; default from kmax_team 12 by F1's median rule (0: each "
                  "round's own, from its larger team by the same rule)",
                  2400, 0, 1e12, false, NULL},
    [SP_KMAX_TEAM] = {"kmax_team", "largest team size: sets theta by F1's median rule (0: unset)",
                      0, 0, 128, true, NULL},
    [SP_WINDOW] = {"window", "window size W", 500, 2, EO_SYNELO_WINDOW_MAX, true, NULL},
    [SP_W_VEL] = {"w_vel", "velocity weight", 0.25, 0, 1e6, false, NULL},
    [SP_W_WRE] = {"w_wre", "win-rate-excess weight", 0.25, 0, 1e6, false, NULL},
    [SP_W_VOL] = {"w_vol", "volatility weight", 0.50, 0, 1e6, false, NULL},
    [SP_SIGMA] = {"sigma", "Gaussian K compression width", 400, 1e-9, 1e12, false, NULL},
};

static void params_of(const eo_model_config *c, eo_synelo_params *p)
{
    p->r0 = eo__param_int(c, SP_R0);
    p->r_min = eo__param_int(c, SP_R_MIN);
    p->r_grad_cap = eo__param_int(c, SP_R_GRAD_CAP);
    p->t_shadow = eo__param_int(c, SP_T_SHADOW);
    p->t_stale_days = eo__param_int(c, SP_T_STALE_DAYS);
    p->k_min = c->v[SP_K_MIN];
    p->k_max = c->v[SP_K_MAX];
    p->theta = c->v[SP_THETA];
    p->window = eo__param_int(c, SP_WINDOW);
    p->w_vel = c->v[SP_W_VEL];
    p->w_wre = c->v[SP_W_WRE];
    p->w_vol = c->v[SP_W_VOL];
    p->sigma = c->v[SP_SIGMA];
}

static int synelo_check(eo_model_config *c, eo_round_error *err)
{
    const char *field = NULL, *msg = NULL;
    if (c->v[SP_KMAX_TEAM] != 0) {
        if (c->given & (1u << SP_THETA)) {
            field = "kmax_team";
            msg = "give either theta or kmax_team, not both";
        } else {
            eo_synelo_theta_from_kmax(eo__param_int(c, SP_KMAX_TEAM), &c->v[SP_THETA]);
            c->v[SP_KMAX_TEAM] = 0;
            c->given = (c->given & ~(1u << SP_KMAX_TEAM)) | (1u << SP_THETA);
        }
    } else if (c->v[SP_R_MIN] > c->v[SP_R0] || c->v[SP_R0] > c->v[SP_R_GRAD_CAP]) {
        field = c->v[SP_R_MIN] > c->v[SP_R0] ? "r_min" : "r_grad_cap";
        msg = "need r_min <= r0 <= r_grad_cap";
    } else if (c->v[SP_K_MIN] > c->v[SP_K_MAX]) {
        field = "k_min";
        msg = "need k_min <= k_max";
    }
    if (field == NULL)
        return 0;
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return EO_EINVAL;
}

/* Prepared SynElo: the typed parameters and the G table. */
typedef struct synelo_impl {
    eo_synelo_params p;
    eo__gtab gtab;
} synelo_impl;

static int synelo_prepare(const eo_model_config *c, void *impl)
{
    synelo_impl *s = impl;
    params_of(c, &s->p);
    eo__gtab_init(&s->gtab, &s->p);
    return 0;
}

static void synelo_player_init(const void *impl, void *st)
{
    memset(st, 0, sizeof(eo_synelo_player));
    eo_synelo_player_init(st, &((const synelo_impl *)impl)->p);
}

static void synelo_player_free(void *st)
{
    eo_synelo_player_free(st);
}

static void synelo_strength(const void *impl, const void *st, int64_t now, eo_strength *out)
{
    (void)impl;
    (void)now;
    out->mu = ((const eo_synelo_player *)st)->rating;
    out->var = 0.0;
}

/* Θ of teams given as aggregates (their counts n are whole numbers). */
static double agg_theta(const eo_synelo_params *p, const eo_team_agg *a, const eo_team_agg *b)
{
    return eo_synelo_theta_of(p, (size_t)a->n, (size_t)b->n);
}

static double synelo_predict(const void *impl, const eo_team_agg *a, const eo_team_agg *b,
                             double field)
{
    /* F1 on the team sums (the weights are not used: SynElo rates whole rounds). */
    const eo_synelo_params *p = &((const synelo_impl *)impl)->p;
    double x = (a->mu - b->mu) / agg_theta(p, a, b) + field;
    return 1.0 / (1.0 + eo__exp(-x));
}

/* −r0·(n_A − n_B)/Θ: team sums relative to the start rating, every member counted in full as
 * SynElo rates them (eo_model_level_field()). */
static double synelo_level(const void *impl, const eo_team_agg *a, const eo_team_agg *b)
{
    const eo_synelo_params *p = &((const synelo_impl *)impl)->p;
    return -((double)p->r0 * (a->n - b->n) / agg_theta(p, a, b));
}

/* New pools: Θ from the team sizes the pool sees (docs/MODELS.md, "SynElo"). */
static void synelo_fresh(eo_model_config *c)
{
    c->v[SP_THETA] = 0.0;
}

static int synelo_rate(const void *impl, const eo_participant *a, size_t na,
                       const eo_participant *b, size_t nb, eo_winner winner, double field,
                       int64_t at, double *p_a, eo_model_update *out)
{
    const synelo_impl *s = impl;
    eo_synelo_player *pl[EO_PLAYERS_MAX];
    eo_synelo_update u[EO_PLAYERS_MAX];
    for (size_t i = 0; i < na + nb; i++)
        pl[i] = i < na ? a[i].st : b[i - na].st;
    int rc = eo__synelo_rate_tab(&s->p, &s->gtab, pl, na, pl + na, nb, winner, field, at, u);
    if (rc != 0)
        return rc;
    if (p_a != NULL)
        *p_a = u[0].expected;
    for (size_t i = 0; out != NULL && i < na + nb; i++) {
        out[i].before = u[i].before;
        out[i].after = u[i].after;
        out[i].expected = u[i].expected;
        out[i].k = u[i].k;
        out[i].mu = u[i].after;
        out[i].sigma = 0.0;
    }
    return 0;
}

static void synelo_view(const void *impl, const void *st, int64_t now, eo_rating_view *out)
{
    const eo_synelo_params *p = &((const synelo_impl *)impl)->p;
    const eo_synelo_player *pl = st;
    memset(out, 0, sizeof *out);
    out->display = pl->rating;
    out->mu = pl->rating;
    out->rounds = pl->rounds;
    out->visible = eo_synelo_visible(p, pl);
    out->stale = eo_synelo_stale(p, pl, now);
    out->last_ended_at = pl->last_ended_at;
}

static int synelo_set(const void *impl, void *st, double mu, double sigma)
{
    (void)sigma;
    const eo_synelo_params *p = &((const synelo_impl *)impl)->p;
    if (mu != floor(mu) || mu < p->r_min || mu > EO_SYNELO_RATING_MAX)
        return EO_ERANGE;
    ((eo_synelo_player *)st)->rating = (int32_t)mu;
    return 0;
}

/* Integers from the floor to EO_SYNELO_RATING_MAX; its own rules (floor, graduation cap,
 * maximum) keep every update there. */
static void synelo_range(const void *impl, eo_model_range *out)
{
    const eo_synelo_params *p = &((const synelo_impl *)impl)->p;
    out->lo = out->set_lo = p->r_min;
    out->hi = out->set_hi = EO_SYNELO_RATING_MAX;
    out->integer = true;
    out->kept = true;
}

const eo__model_ops eo__synelo_ops = {
    .id = EO_MODEL_SYNELO,
    .name = "synelo",
    .params = synelo_params,
    .n_params = SP_COUNT,
    .state_size = (sizeof(eo_synelo_player) + 7) & ~(size_t)7,
    .impl_size = sizeof(synelo_impl),
    .integer_display = true,
    .split_unit = 1,
    .has_deviation = false,
    .unweighted = true,
    .check = synelo_check,
    .fresh = synelo_fresh,
    .prepare = synelo_prepare,
    .player_init = synelo_player_init,
    .player_free = synelo_player_free,
    .strength = synelo_strength,
    .predict = synelo_predict,
    .level = synelo_level,
    .rate = synelo_rate,
    .view = synelo_view,
    .range = synelo_range,
    .set = synelo_set,
};
