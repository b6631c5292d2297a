/* Map and side bias: a table of per-key score and information sums (eo_bias.h). Keys are
 * interned as one string "map\x1fsize\x1fmode" (ids cannot hold control characters, so the
 * separator is unambiguous and an absent part is the empty string). */
#include "evenodds/eo_bias.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

static const char *const by_names[EO_BIAS_BY_COUNT] = {"off", "map", "map_size", "map_mode"};

/* Size buckets by the larger team; their order is the buckets' order, not the names'. */
static const char *const size_names[] = {"1-6", "7-12", "13+"};

typedef struct entry {
    char *map;
    char *mode;      /* NULL: none */
    int size;        /* index into size_names, or -1 */
    uint64_t plays, a_wins, b_wins, draws;
    double u;        /* Σ g·(S − P0) / (P0·(1 − P0)): the score at 0 */
    double info;     /* Σ g² / (P0·(1 − P0)) */
} entry;

struct eo_bias {
    eo_bias_config cfg;
    eo__strmap *keys; /* key index = entry index */
    entry *e;
    size_t cap;
};

const char *eo_bias_by_name(eo_bias_by by)
{
    return (unsigned)by < EO_BIAS_BY_COUNT ? by_names[by] : NULL;
}

void eo_bias_config_default(eo_bias_config *c)
{
    c->by = EO_BIAS_OFF;
    c->prior = EO_BIAS_PRIOR_DEFAULT;
    c->strength = 1.0;
}

static int fail(eo_round_error *err, const char *field, const char *msg)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return EO_EINVAL;
}

bool eo_bias_param_name(const char *name)
{
    return name != NULL && (strcmp(name, "bias") == 0 || strcmp(name, "bias_prior") == 0 ||
                            strcmp(name, "bias_strength") == 0);
}

/* Written as !(lo <= x <= hi) so that NaN fails too. */
static int check_prior(double x, eo_round_error *err)
{
    if (!(x >= 0.0 && x <= 1e6))
        return fail(err, "bias_prior", "expected a number of plays from 0 to 1e6");
    return 0;
}

static int check_strength(double x, eo_round_error *err)
{
    if (!(x >= 0.0 && x <= 1.0))
        return fail(err, "bias_strength", "expected a number from 0 to 1");
    return 0;
}

int eo_bias_config_set_number(eo_bias_config *c, const char *name, double value,
                              eo_round_error *err)
{
    if (c == NULL || !eo_bias_param_name(name))
        return c == NULL ? EO_EINVAL : EO_ENOTFOUND;
    if (strcmp(name, "bias") == 0)
        return fail(err, "bias", "expected \"off\", \"map\", \"map_size\" or \"map_mode\"");
    bool prior = strcmp(name, "bias_prior") == 0;
    int rc = prior ? check_prior(value, err) : check_strength(value, err);
    if (rc != 0)
        return rc;
    if (prior)
        c->prior = value;
    else
        c->strength = value;
    return 0;
}

int eo_bias_config_set(eo_bias_config *c, const char *name, const char *text,
                       eo_round_error *err)
{
    if (c == NULL || text == NULL)
        return EO_EINVAL;
    if (!eo_bias_param_name(name))
        return EO_ENOTFOUND;
    if (strcmp(name, "bias") == 0) {
        for (int i = 0; i < EO_BIAS_BY_COUNT; i++) {
            if (strcmp(text, by_names[i]) == 0) {
                c->by = (eo_bias_by)i;
                return 0;
            }
        }
        return eo_bias_config_set_number(c, name, 0.0, err); /* names the choices */
    }
    char *end = NULL;
    errno = 0;
    double x = strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE)
        return fail(err, name, "expected a number");
    return eo_bias_config_set_number(c, name, x, err);
}

int eo_bias_config_check(const eo_bias_config *c, eo_round_error *err)
{
    if (c == NULL)
        return EO_EINVAL;
    if ((unsigned)c->by >= EO_BIAS_BY_COUNT)
        return fail(err, "bias", "expected \"off\", \"map\", \"map_size\" or \"map_mode\"");
    if (check_prior(c->prior, err) != 0 || check_strength(c->strength, err) != 0)
        return EO_EINVAL;
    return 0;
}

static int size_index(size_t na, size_t nb)
{
    size_t n = na > nb ? na : nb;
    return n <= 6 ? 0 : n <= 12 ? 1 : 2;
}

const char *eo_bias_size_bucket(size_t na, size_t nb)
{
    return size_names[size_index(na, nb)];
}

int eo_bias_key_of(const eo_bias_config *c, const char *map, size_t na, size_t nb,
                   const char *mode, eo_bias_key *out)
{
    if (c == NULL || out == NULL)
        return EO_EINVAL;
    if (c->by == EO_BIAS_OFF || map == NULL)
        return EO_ENOTFOUND;
    out->map = map;
    out->size = c->by == EO_BIAS_MAP_SIZE ? eo_bias_size_bucket(na, nb) : NULL;
    out->mode = c->by == EO_BIAS_MAP_MODE ? mode : NULL;
    return 0;
}

int eo_bias_create(const eo_bias_config *c, eo_bias **out)
{
    if (out == NULL || eo_bias_config_check(c, NULL) != 0)
        return EO_EINVAL;
    eo_bias *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    t->cfg = *c;
    t->keys = eo__strmap_create(0);
    if (t->keys == NULL) {
        free(t);
        return EO_ENOMEM;
    }
    *out = t;
    return 0;
}

void eo_bias_destroy(eo_bias *t)
{
    if (t == NULL)
        return;
    eo_bias_truncate(t, 0);
    free(t->e);
    eo__strmap_destroy(t->keys);
    free(t);
}

const eo_bias_config *eo_bias_get_config(const eo_bias *t)
{
    return &t->cfg;
}

size_t eo_bias_count(const eo_bias *t)
{
    return t != NULL ? eo__strmap_size(t->keys) : 0;
}

/* The interned form of @p k into @p buf; its length, or 0 when a part is not a valid id. */
static size_t compose(const eo_bias_key *k, char *buf, size_t cap)
{
    const char *part[3] = {k->map, k->size, k->mode};
    size_t at = 0;
    for (int i = 0; i < 3; i++) {
        size_t len = part[i] != NULL ? strnlen(part[i], EO_ID_MAX + 1) : 0;
        if ((i == 0 && part[i] == NULL) || (part[i] != NULL && eo_id_check(part[i], len) != 0))
            return 0;
        if (at + len + 1 > cap)
            return 0;
        if (len > 0) /* an absent part is empty (and memcpy wants no NULL) */
            memcpy(buf + at, part[i], len);
        at += len;
        if (i < 2)
            buf[at++] = '\x1f';
    }
    buf[at] = '\0';
    return at;
}

#define KEY_MAX (3 * EO_ID_MAX + 3)

int eo_bias_find(const eo_bias *t, const eo_bias_key *k, size_t *index)
{
    char buf[KEY_MAX];
    size_t len = t != NULL && k != NULL ? compose(k, buf, sizeof buf) : 0;
    if (len == 0)
        return t != NULL && k != NULL ? EO_ENOTFOUND : EO_EINVAL;
    int64_t i = eo__strmap_find(t->keys, buf, len, eo__strmap_hash(t->keys, buf, len));
    if (i < 0)
        return EO_ENOTFOUND;
    if (index != NULL)
        *index = (size_t)i;
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s != NULL ? strdup(s) : NULL;
}

int eo_bias_slot(eo_bias *t, const eo_bias_key *k, size_t *index)
{
    char buf[KEY_MAX];
    size_t len = t != NULL && k != NULL && index != NULL ? compose(k, buf, sizeof buf) : 0;
    if (len == 0)
        return EO_EINVAL;
    uint64_t h = eo__strmap_hash(t->keys, buf, len);
    int64_t i = eo__strmap_find(t->keys, buf, len, h);
    if (i >= 0) {
        *index = (size_t)i;
        return 0;
    }
    size_t n = eo__strmap_size(t->keys);
    if (n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 16;
        entry *e = realloc(t->e, cap * sizeof *e);
        if (e == NULL)
            return EO_ENOMEM;
        t->e = e;
        t->cap = cap;
    }
    int size = -1;
    for (int s = 0; k->size != NULL && s < 3; s++)
        if (strcmp(k->size, size_names[s]) == 0)
            size = s;
    if (k->size != NULL && size < 0)
        return EO_EINVAL; /* not one of our buckets */
    entry *e = &t->e[n];
    memset(e, 0, sizeof *e);
    e->size = size;
    e->map = dup_or_null(k->map);
    e->mode = dup_or_null(k->mode);
    if (e->map == NULL || (k->mode != NULL && e->mode == NULL) ||
        eo__strmap_insert(t->keys, buf, len, h) < 0) {
        free(e->map);
        free(e->mode);
        return EO_ENOMEM;
    }
    *index = n;
    return 0;
}

void eo_bias_truncate(eo_bias *t, size_t n)
{
    if (t == NULL)
        return;
    size_t count = eo__strmap_size(t->keys);
    for (size_t i = n; i < count; i++) {
        free(t->e[i].map);
        free(t->e[i].mode);
    }
    if (n < count)
        eo__strmap_truncate(t->keys, n);
}

/* The estimate and its deviation. κ = prior·I/n makes the prior worth `prior` average plays
 * of this very key, so it needs no scale per model: the field's units come in through g. */
static void estimate(const eo_bias *t, const entry *e, double *bias, double *sd)
{
    if (e->plays == 0 || !(e->info > 0.0)) {
        *bias = 0.0;
        *sd = INFINITY;
        return;
    }
    double kappa = t->cfg.prior * e->info / (double)e->plays;
    double prec = e->info + kappa;
    *bias = e->u / prec;
    *sd = 1.0 / sqrt(prec);
}

double eo_bias_field(const eo_bias *t, size_t index)
{
    if (t == NULL || index >= eo__strmap_size(t->keys))
        return 0.0;
    double b, sd;
    estimate(t, &t->e[index], &b, &sd);
    return t->cfg.strength * b;
}

int eo_bias_observe(eo_bias *t, size_t index, double p0, double g, eo_winner winner)
{
    if (t == NULL || index >= eo__strmap_size(t->keys) ||
        (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW))
        return EO_EINVAL;
    entry *e = &t->e[index];
    e->plays++;
    double s = 0.5;
    if (winner == EO_WIN_A) {
        e->a_wins++;
        s = 1.0;
    } else if (winner == EO_WIN_B) {
        e->b_wins++;
        s = 0.0;
    } else {
        e->draws++;
    }
    /* A foregone round (P0 of 0 or 1, or a flat P) says nothing about the field. */
    double v = p0 * (1.0 - p0);
    if (!(p0 > 0.0 && p0 < 1.0) || !(v > 0.0) || !(g >= 0.0) || !isfinite(g))
        return 0;
    e->u += g * (s - p0) / v;
    e->info += g * g / v;
    return 0;
}

int eo_bias_get(const eo_bias *t, size_t index, eo_bias_stats *out)
{
    if (t == NULL || out == NULL || index >= eo__strmap_size(t->keys))
        return EO_EINVAL;
    const entry *e = &t->e[index];
    out->map = e->map;
    out->size = e->size >= 0 ? size_names[e->size] : NULL;
    out->mode = e->mode;
    out->plays = e->plays;
    out->a_wins = e->a_wins;
    out->b_wins = e->b_wins;
    out->draws = e->draws;
    out->a_win_rate =
        e->plays ? ((double)e->a_wins + 0.5 * (double)e->draws) / (double)e->plays : NAN;
    estimate(t, e, &out->bias, &out->uncertainty);
    out->applied = t->cfg.strength * out->bias;
    return 0;
}

/* NULL sorts before every string. */
static int cmp_opt(const char *x, const char *y)
{
    if (x == NULL || y == NULL)
        return (x != NULL) - (y != NULL);
    return strcmp(x, y);
}

static int cmp_entry(const void *x, const void *y)
{
    const entry *a = *(const entry *const *)x;
    const entry *b = *(const entry *const *)y;
    int c = strcmp(a->map, b->map);
    if (c == 0)
        c = (a->size > b->size) - (a->size < b->size);
    if (c == 0)
        c = cmp_opt(a->mode, b->mode);
    return c; /* keys are unique: the order is total */
}

int eo_bias_each(const eo_bias *t, int (*fn)(void *ctx, const eo_bias_stats *s), void *ctx)
{
    size_t n = eo_bias_count(t);
    if (n == 0 || fn == NULL)
        return 0;
    const entry **order = malloc(n * sizeof *order);
    if (order == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = &t->e[i];
    qsort(order, n, sizeof *order, cmp_entry);
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        eo_bias_stats s;
        eo_bias_get(t, (size_t)(order[i] - t->e), &s);
        rc = fn(ctx, &s);
    }
    free(order);
    return rc;
}
