/* The dashboard's read APIs (docs/SERVICE.md "Dashboard and reads"): the board, a player's
 * history and rounds, the pool's rounds, one round, the pool's health over time, and what the
 * pages need first. Answered on the HTTP thread from its read-only store handle, in one read
 * transaction each (one snapshot), from the read indexes (docs/STORE.md "Read indexes"). A
 * caller without a key (a public dashboard) sees a player's values only once he is visible. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "evenodds/eo_codec.h"
#include "service/service.h"

/* Rows of a list at most; the defaults are what a page shows. */
#define BOARD_LIMIT_MAX 500
#define ROUNDS_LIMIT_MAX 100
#define HISTORY_LIMIT_MAX 10000
#define SECONDS_PER_DAY 86400

int eo__arg_int_parse(const char *raw, int64_t def, int64_t lo, int64_t hi, int64_t *out, char *msg,
                      size_t cap)
{
    if (raw == NULL) {
        *out = def;
        return 0;
    }
    char *end;
    long long v = strtoll(raw, &end, 10);
    if (end == raw || *end != '\0' || v < lo || v > hi) {
        snprintf(msg, cap, "expected an integer from %lld to %lld", (long long)lo, (long long)hi);
        return EO_EINVAL;
    }
    *out = v;
    return 0;
}

int eo__arg_text_parse(const char *raw, char *out, bool *has, char *msg, size_t cap)
{
    char plain[3 * EO_ID_MAX + 1], buf[3 * EO_ID_MAX + 1];
    size_t n = raw != NULL ? strlen(raw) : 0, len = 0;
    *has = raw != NULL;
    if (raw == NULL)
        return 0;
    int rc = n < sizeof plain ? 0 : EO_ELIMIT;
    /* Forms send a space as '+' (a '+' itself as %2B): spaces first, then the escapes. */
    for (size_t i = 0; rc == 0 && i <= n; i++)
        plain[i] = raw[i] == '+' ? ' ' : raw[i];
    if (rc == 0)
        rc = eo__pct_decode(plain, n, buf, sizeof buf, &len);
    if (rc == 0)
        rc = strlen(buf) == len ? eo_id_check(buf, len) : EO_EINVAL;
    if (rc != 0) {
        snprintf(msg, cap,
                 rc == EO_ELIMIT ? "longer than %d bytes"
                                 : "empty, bad percent-encoding, a control character "
                                   "or invalid UTF-8 (at most %d bytes)",
                 EO_ID_MAX);
        return EO_EINVAL;
    }
    memcpy(out, buf, len + 1);
    return 0;
}

int eo__arg_int(const eo__call *c, const char *name, int64_t def, int64_t lo, int64_t hi,
                int64_t *out, eo__answer *a)
{
    char msg[96];
    if (eo__arg_int_parse(eo__call_arg(c, name), def, lo, hi, out, msg, sizeof msg) == 0)
        return 0;
    eo__answer_error(a, 400, "invalid_request", msg, name);
    return -1;
}

int eo__arg_text(const eo__call *c, const char *name, char *out, bool *has, eo__answer *a)
{
    char msg[128];
    if (eo__arg_text_parse(eo__call_arg(c, name), out, has, msg, sizeof msg) == 0)
        return 0;
    eo__answer_error(a, 400, "invalid_request", msg, name);
    return -1;
}

/* The caller reads without a key: players' values only once visible. */
static bool keyless(const eo__call *c)
{
    return c->role == EO__ROLE_NONE;
}

/* This thread's read handle in a read transaction (one snapshot for the whole answer), or NULL
 * with the answer (500) in @p a. End it with end_read(). */
static eo_store *begin_read(eo__call *c, eo__answer *a)
{
    eo_store *rs = eo__reader(c->svc);
    if (rs == NULL || eo_store_begin(rs) != 0) {
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return NULL;
    }
    return rs;
}

/* Ends the read transaction; answers @p doc (200) when @p rc is 0 and it was built, else 500. */
static void end_read(eo_store *rs, int rc, json_t *doc, eo__answer *a)
{
    eo_store_rollback(rs); /* nothing to keep: ends the snapshot */
    if (rc == 0 && doc != NULL) {
        eo__answer_json(a, 200, doc);
        return;
    }
    json_decref(doc);
    if (rc == EO_ENOMEM || rc == 0)
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
    else
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
}

/* ---- GET /v1/pools/{pool}/standings ------------------------------------------------------- */

typedef struct board_ctx {
    const eo__pool_facts *pi;
    json_t *rows;
    int64_t limit, n;
    bool more;
} board_ctx;

static int board_one(void *ctx, int64_t rank, const char *id, const char *name,
                     const eo_player_row *row)
{
    board_ctx *b = ctx;
    if (b->n++ == b->limit) { /* the one past the page: there is more */
        b->more = true;
        return 0;
    }
    eo_rating_view v;
    eo__view_of_row(b->pi, row, 0, &v);
    json_t *o = eo_board_row_to_json(b->pi->model, rank, id, name, &v,
                                     eo_pool_division(&b->pi->cfg, v.display));
    return o == NULL || json_array_append_new(b->rows, o) != 0 ? EO_ENOMEM : 0;
}

eo__run eo__h_standings(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    int64_t offset, limit, total = -1;
    char q[EO_ID_MAX + 1];
    bool has_q;
    if (eo__need_pool(c, &pi, a) || eo__arg_int(c, "offset", 0, 0, INT32_MAX, &offset, a) ||
        eo__arg_int(c, "limit", 50, 1, BOARD_LIMIT_MAX, &limit, a) ||
        eo__arg_text(c, "q", q, &has_q, a))
        return EO__RUN_DONE;
    eo_store *rs = begin_read(c, a);
    if (rs == NULL)
        return EO__RUN_DONE;
    board_ctx b = {&pi, json_array(), limit, 0, false};
    int rc = b.rows != NULL ? eo_store_board_each(rs, pi.id, has_q ? q : NULL, offset, limit + 1,
                                                  board_one, &b)
                            : EO_ENOMEM;
    if (rc == 0 && !has_q) /* a search would have to walk the whole board to count */
        rc = eo_store_board_count(rs, pi.id, &total);
    end_read(rs, rc,
             eo_read_page_to_json(pi.name, "standings", b.rows, offset, limit, total, b.more), a);
    return EO__RUN_DONE;
}

/* ---- GET /v1/pools/{pool}/players/{id}/history -------------------------------------------- */

/* A member's result as a read shows it. */
static void read_member(const eo__call *c, const eo_member_ix *m, eo_read_member *out)
{
    memset(out, 0, sizeof *out);
    out->v.display = m->rating;
    out->v.mu = m->mu;
    out->v.sigma = m->sigma;
    out->v.rounds = m->rounds;
    out->v.visible = m->visible;
    out->delta = m->delta;
    out->weight = m->weight;
    out->hidden = keyless(c) && !m->visible;
}

typedef struct history_ctx {
    const eo__call *c;
    const eo__pool_facts *pi;
    json_t *points;
} history_ctx;

static int history_one(void *ctx, const eo_member_ix *m)
{
    history_ctx *h = ctx;
    eo_read_member p;
    read_member(h->c, m, &p);
    if (p.hidden) /* a player's history without a key starts when he became visible */
        return 0;
    json_t *o = eo_history_point_to_json(h->pi->model, m->n, m->at, &p);
    return o == NULL || json_array_append_new(h->points, o) != 0 ? EO_ENOMEM : 0;
}

/* The player as he stands now: the lookup document with his name and rank. 0, EO_ENOTFOUND
 * (no row: unknown or reset), or the store's code. */
static int player_now(eo__call *c, eo_store *rs, const eo__pool_facts *pi, const char *id,
                      json_t **out)
{
    eo_player_row row;
    int rc = eo_store_player_get(rs, pi->id, id, &row);
    if (rc != 0)
        return rc;
    char *name = NULL;
    int64_t rank = 0;
    rc = eo_store_player_name_get(rs, pi->id, id, &name);
    if (rc == 0 && row.visible)
        rc = eo_store_board_rank(rs, pi->id, id, &rank);
    if (rc == 0) {
        eo_read_member now;
        eo__view_of_row(pi, &row, (int64_t)time(NULL), &now.v);
        now.hidden = keyless(c) && !row.visible;
        *out = eo_player_read_to_json(pi->model, id, name, rank, &now.v,
                                      eo_pool_division(&pi->cfg, now.v.display), now.hidden);
        rc = *out != NULL ? 0 : EO_ENOMEM;
    }
    free(name);
    return rc;
}

eo__run eo__h_history(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    int64_t since, limit;
    if (eo__need_pool(c, &pi, a) || eo__arg_int(c, "since", 0, 0, INT64_MAX, &since, a) ||
        eo__arg_int(c, "limit", 1000, 1, HISTORY_LIMIT_MAX, &limit, a))
        return EO__RUN_DONE;
    const char *id = eo__path_param(c->m, "id");
    eo_store *rs = begin_read(c, a);
    if (rs == NULL)
        return EO__RUN_DONE;
    json_t *player = NULL;
    history_ctx h = {c, &pi, json_array()};
    int rc = h.points != NULL ? player_now(c, rs, &pi, id, &player) : EO_ENOMEM;
    if (rc == EO_ENOTFOUND) {
        eo_store_rollback(rs);
        json_decref(h.points);
        eo__answer_error(a, 404, "unknown_player", "the pool has no player of that id", "id");
        return EO__RUN_DONE;
    }
    if (rc == 0)
        rc = eo_store_history_each(rs, pi.id, id, since, limit, history_one, &h);
    end_read(rs, rc, eo_history_to_json(pi.name, player, h.points), a);
    return EO__RUN_DONE;
}

/* ---- rounds: GET …/rounds, …/players/{id}/rounds, …/rounds/{round} -------------------------- */

typedef struct rounds_ctx {
    eo__call *c;
    eo_store *rs;
    const eo__pool_facts *pi;
    json_t *rounds; /* the list, or NULL for one round */
    json_t *one;    /* the one round */
    int64_t limit, n;
    bool more;
    eo_read_member mem[EO_PLAYERS_MAX];
    char *names[EO_PLAYERS_MAX];
} rounds_ctx;

/* Round @p it as a read shows it: each member's result with his last name seen. NULL with *rc
 * when it cannot be read. */
static json_t *round_doc(rounds_ctx *x, const eo_round_item *it, int *rc)
{
    const eo_round_ix *ix = it->ix;
    eo_round_read r = {ix->round_id,   ix->map,      ix->mode,   ix->server, ix->n, ix->at,
                       ix->started_at, ix->ended_at, ix->winner, ix->p_a,    {0, 0}};
    *rc = 0;
    for (size_t k = 0; *rc == 0 && k < it->count; k++) {
        eo_read_member *p = &x->mem[k];
        read_member(x->c, &it->members[k], p);
        p->id = it->ids[k];
        r.n[it->members[k].team]++;
        *rc = eo_store_player_name_get(x->rs, x->pi->id, p->id, &x->names[k]);
        if (*rc == EO_ENOTFOUND) /* no row: no name */
            *rc = 0;
        p->name = x->names[k];
    }
    json_t *o = NULL;
    if (*rc == 0 && r.id != NULL && (o = eo_round_read_to_json(x->pi->model, &r, x->mem)) == NULL)
        *rc = EO_ENOMEM;
    for (size_t k = 0; k < it->count; k++) {
        free(x->names[k]);
        x->names[k] = NULL;
    }
    return o;
}

static int round_one(void *ctx, const eo_round_item *it)
{
    rounds_ctx *x = ctx;
    int rc;
    if (x->rounds == NULL) {
        x->one = round_doc(x, it, &rc);
        return rc;
    }
    if (x->n++ == x->limit) {
        x->more = true;
        return 0;
    }
    json_t *o = round_doc(x, it, &rc);
    return rc == 0 && json_array_append_new(x->rounds, o) != 0 ? EO_ENOMEM : rc;
}

static int player_round_one(void *ctx, const eo_round_item *it, const eo_member_ix *m)
{
    rounds_ctx *x = ctx;
    size_t before = json_array_size(x->rounds);
    int rc = round_one(ctx, it);
    json_t *o = json_array_get(x->rounds, before);
    if (rc == 0 && o != NULL && json_object_set_new(o, "side", json_string(m->team ? "B" : "A")))
        rc = EO_ENOMEM;
    return rc;
}

/* A context for reading rounds of pool @p pi in a read transaction, or NULL with the answer
 * (500) in @p a. */
static rounds_ctx *rounds_begin(eo__call *c, const eo__pool_facts *pi, eo__answer *a)
{
    rounds_ctx *x = calloc(1, sizeof *x);
    eo_store *rs = x != NULL ? begin_read(c, a) : NULL;
    if (rs == NULL) {
        if (x == NULL)
            eo__answer_error(a, 500, "internal", "out of memory", NULL);
        free(x);
        return NULL;
    }
    *x = (rounds_ctx){.c = c, .rs = rs, .pi = pi};
    return x;
}

/* A list of rounds: the pool's (@p player NULL) or a player's, newest first. */
static eo__run rounds_list(eo__call *c, eo__answer *a, const char *player)
{
    eo__pool_facts pi;
    int64_t offset, limit, total = -1;
    if (eo__need_pool(c, &pi, a) || eo__arg_int(c, "offset", 0, 0, INT32_MAX, &offset, a) ||
        eo__arg_int(c, "limit", 20, 1, ROUNDS_LIMIT_MAX, &limit, a))
        return EO__RUN_DONE;
    rounds_ctx *x = rounds_begin(c, &pi, a);
    if (x == NULL)
        return EO__RUN_DONE;
    eo_store *rs = x->rs;
    x->rounds = json_array();
    x->limit = limit;
    int rc = x->rounds == NULL ? EO_ENOMEM
             : player != NULL  ? eo_store_player_rounds_each(rs, pi.id, player, offset, limit + 1,
                                                             player_round_one, x)
                               : eo_store_rounds_each(rs, pi.id, offset, limit + 1, round_one, x);
    eo_round_ix last;
    if (rc == 0 && player == NULL) {
        rc = eo_store_round_ix_last(rs, pi.id, &last);
        total = rc == 0 ? last.n : 0;
        rc = rc == EO_ENOTFOUND ? 0 : rc;
    }
    end_read(rs, rc,
             eo_read_page_to_json(pi.name, "rounds", x->rounds, offset, limit, total, x->more), a);
    free(x);
    return EO__RUN_DONE;
}

eo__run eo__h_rounds_list(eo__call *c, eo__answer *a)
{
    return rounds_list(c, a, NULL);
}

eo__run eo__h_player_rounds(eo__call *c, eo__answer *a)
{
    return rounds_list(c, a, eo__path_param(c->m, "id"));
}

eo__run eo__h_round_get(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    rounds_ctx *x = eo__need_pool(c, &pi, a) ? NULL : rounds_begin(c, &pi, a);
    if (x == NULL)
        return EO__RUN_DONE;
    eo_store *rs = x->rs;
    int rc = eo_store_round_get(rs, pi.id, eo__path_param(c->m, "round"), round_one, x);
    if (rc == EO_ENOTFOUND) {
        eo_store_rollback(rs);
        eo__answer_error(a, 404, "unknown_round", "the pool has no round of that id", "round");
    } else {
        end_read(rs, rc, rc == 0 ? eo_read_doc_to_json(pi.name, x->one) : NULL, a);
    }
    free(x);
    return EO__RUN_DONE;
}

/* ---- GET /v1/pools/{pool}/health ---------------------------------------------------------- */

/* One bucket of the health over time: its first day and its sums. */
typedef struct health_bucket {
    int64_t day;
    eo_eval_sums s;
} health_bucket;

typedef struct health_ctx {
    int64_t days;     /* of a bucket: 1 or 7 */
    health_bucket *v; /* in order */
    size_t n, cap;
    eo_eval_sums total;
    eo_eval_sums bins[EO_EVAL_CALIB_BINS];
} health_ctx;

/* The first day of @p day's bucket: itself, or the Monday of its week (day 0, 1 January 1970,
 * was a Thursday). */
static int64_t bucket_of(int64_t day, int64_t days)
{
    return days == 7 ? day - ((day + 3) % 7 + 7) % 7 : day;
}

static int health_one(void *ctx, int64_t day, int bin, const eo_eval_sums *d)
{
    health_ctx *h = ctx;
    int64_t start = bucket_of(day, h->days);
    if (h->n == 0 || h->v[h->n - 1].day != start) {
        health_bucket *v = eo__grow(h->v, &h->cap, h->n + 1, sizeof *v);
        if (v == NULL)
            return EO_ENOMEM;
        h->v = v;
        memset(&v[h->n], 0, sizeof v[h->n]);
        v[h->n++].day = start;
    }
    eo_eval_sums_add(&h->v[h->n - 1].s, d);
    eo_eval_sums_add(&h->total, d);
    eo_eval_sums_add(&h->bins[bin], d);
    return 0;
}

/* The health document of what @p h summed. NULL when out of memory. */
static json_t *health_doc(const char *pool, const char *bucket, int64_t since, const health_ctx *h)
{
    json_t *buckets = json_array();
    for (size_t i = 0; buckets != NULL && i < h->n; i++) {
        json_t *o = eo_health_span_to_json(&h->v[i].s, true, h->v[i].day * SECONDS_PER_DAY);
        if (o == NULL || json_array_append_new(buckets, o) != 0) {
            json_decref(buckets);
            buckets = NULL;
        }
    }
    return eo_health_to_json(pool, bucket, since, buckets,
                             eo_health_span_to_json(&h->total, false, 0),
                             eo_calibration_to_json(h->bins));
}

eo__run eo__h_health(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    int64_t since;
    const char *bucket = eo__call_arg(c, "bucket");
    if (eo__need_pool(c, &pi, a) || eo__arg_int(c, "since", 0, 0, INT64_MAX, &since, a))
        return EO__RUN_DONE;
    if (bucket != NULL && strcmp(bucket, "day") != 0 && strcmp(bucket, "week") != 0) {
        eo__answer_error(a, 400, "invalid_request", "expected day or week", "bucket");
        return EO__RUN_DONE;
    }
    bool week = bucket != NULL && strcmp(bucket, "week") == 0;
    eo_store *rs = begin_read(c, a);
    if (rs == NULL)
        return EO__RUN_DONE;
    health_ctx h;
    memset(&h, 0, sizeof h);
    h.days = week ? 7 : 1;
    int rc = eo_store_health_each(rs, pi.id, since / SECONDS_PER_DAY, health_one, &h);
    end_read(rs, rc, rc == 0 ? health_doc(pi.name, week ? "week" : "day", since, &h) : NULL, a);
    free(h.v);
    return EO__RUN_DONE;
}

/* ---- GET /v1/dashboard --------------------------------------------------------------------- */

eo__run eo__h_dashboard(eo__call *c, eo__answer *a)
{
    static const char *const modes[] = {"public", "key", "off"};
    eo__pool_facts *v = NULL;
    size_t n = 0;
    if (eo__pools_list(&c->svc->pools, &v, &n) != 0) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    eo_store *rs = begin_read(c, a);
    if (rs == NULL) {
        free(v);
        return EO__RUN_DONE;
    }
    json_t *pools = json_array();
    int rc = pools != NULL ? 0 : EO_ENOMEM;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        int64_t players = 0;
        eo_round_ix last = {0};
        rc = eo_store_board_count(rs, v[i].id, &players);
        if (rc == 0 && (rc = eo_store_round_ix_last(rs, v[i].id, &last)) == EO_ENOTFOUND)
            rc = 0;
        json_t *o = rc == 0
                        ? eo_dashboard_pool_to_json(v[i].name, &v[i].cfg, players, last.n, last.at)
                        : NULL;
        if (rc == 0 && (o == NULL || json_array_append_new(pools, o) != 0))
            rc = EO_ENOMEM;
    }
    free(v);
    end_read(rs, rc, eo_dashboard_to_json(modes[c->svc->cfg.dashboard], pools), a);
    return EO__RUN_DONE;
}
