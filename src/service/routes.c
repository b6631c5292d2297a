/* Routing and the request handlers. Reads (lookups, splits, quality, pool list) are answered
 * here from the published pool table and this thread's read-only store handle; updates are
 * parsed and checked here, then handed to the writer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/statvfs.h>
#include <time.h>

#include "evenodds/eo_app.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_split.h"
#include "service/mm.h"
#include "service/service.h"

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int eo__pct_decode(const char *in, size_t n, char *out, size_t cap, size_t *outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = in[i];
        if (c == '%') {
            int hi, lo;
            if (i + 2 >= n || (hi = hexval(in[i + 1])) < 0 || (lo = hexval(in[i + 2])) < 0)
                return EO_EPARSE;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (o + 1 >= cap)
            return EO_ELIMIT;
        out[o++] = c;
    }
    out[o] = '\0';
    *outlen = o;
    return 0;
}

/* Decodes one path segment into an id and checks it. */
static int segment_id(const char *s, size_t n, char *out, size_t cap)
{
    size_t len;
    int rc = eo__pct_decode(s, n, out, cap, &len);
    if (rc == EO_ELIMIT)
        return EO_ELIMIT;
    if (rc != 0)
        return EO_EINVAL;
    if (strlen(out) != len) /* an encoded NUL */
        return EO_EINVAL;
    return eo_id_check(out, len);
}

/* A path's segments, still percent-encoded. */
#define MAX_SEGS 8
typedef struct segs {
    const char *s[MAX_SEGS];
    size_t len[MAX_SEGS];
    size_t n;
} segs;

/* Splits @p raw ("/a/b/c") at '/' ("/" has no segment). false for a path with an empty segment
 * or too many. */
static bool split_path(const char *raw, segs *out)
{
    out->n = 0;
    if (!raw || raw[0] != '/')
        return false;
    if (raw[1] == '\0')
        return true;
    for (const char *p = raw + 1;;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        if (n == 0 || out->n == MAX_SEGS)
            return false;
        out->s[out->n] = p;
        out->len[out->n++] = n;
        if (!slash)
            return true;
        p = slash + 1;
    }
}

/* Whether template @p tmpl ("/v1/pools/{pool}") has @p g's shape: as many segments, the
 * literal ones equal ({name} takes any segment). */
static bool template_fits(const char *tmpl, const segs *g)
{
    if (g->n == 0)
        return strcmp(tmpl, "/") == 0;
    const char *t = tmpl + 1;
    for (size_t i = 0; i < g->n; i++) {
        const char *slash = strchr(t, '/');
        size_t n = slash ? (size_t)(slash - t) : strlen(t);
        if (n == 0 || (!slash) != (i + 1 == g->n))
            return false;
        if (t[0] != '{' && (n != g->len[i] || memcmp(t, g->s[i], n) != 0))
            return false;
        t += n + 1;
    }
    return true;
}

/* Decodes the {name} segments of route @p tmpl from @p g into m->param, checking each as an
 * id; the first that fails sets seg_error and seg_field (its name). */
static void take_params(const char *tmpl, const segs *g, eo__match *m)
{
    const char *t = tmpl + 1;
    for (size_t i = 0; i < g->n; i++) {
        const char *slash = strchr(t, '/');
        size_t n = slash ? (size_t)(slash - t) : strlen(t);
        if (t[0] == '{' && m->nparam < EO__PARAMS_MAX) {
            eo__param *p = &m->param[m->nparam++];
            snprintf(p->name, sizeof p->name, "%.*s", (int)(n - 2), t + 1);
            int rc = segment_id(g->s[i], g->len[i], p->value, sizeof p->value);
            if (rc != 0 && m->seg_error == 0) {
                m->seg_error = rc;
                m->seg_field = p->name;
            }
        }
        t += n + 1;
    }
}

/* Adds @p method to the Allow list (and HEAD after GET: it is answered wherever GET is). */
static void allow_add(eo__match *m, const char *method)
{
    size_t len = strlen(m->allow);
    snprintf(m->allow + len, sizeof m->allow - len, "%s%s%s", len ? ", " : "", method,
             strcmp(method, "GET") == 0 ? ", HEAD" : "");
}

void eo__route_match(const char *method, const char *raw_path, eo__match *m)
{
    memset(m, 0, sizeof *m);
    m->route = -1;
    segs g;
    if (!split_path(raw_path, &g))
        return;
    /* The first row of the path and method is the route: the rows after it are not looked at
     * (the Allow list is only needed when no row has the method). */
    for (size_t i = 0; i < eo__route_count && m->route < 0; i++) {
        if (!template_fits(eo__routes[i].path, &g))
            continue;
        m->path_known = true;
        allow_add(m, eo__routes[i].method);
        if (strcmp(method, eo__routes[i].method) == 0)
            m->route = (int)i;
    }
    if (m->route >= 0)
        take_params(eo__routes[m->route].path, &g, m);
}

const char *eo__path_param(const eo__match *m, const char *name)
{
    for (size_t i = 0; i < m->nparam; i++)
        if (strcmp(m->param[i].name, name) == 0)
            return m->param[i].value;
    return "";
}

/* ---- answers ---------------------------------------------------------------------------- */

void eo__answer_json(eo__answer *a, int status, json_t *v)
{
    a->status = status;
    a->ctype = NULL;
    a->body = v ? json_dumps(v, JSON_COMPACT) : NULL;
    json_decref(v);
    if (!a->body) {
        static const char oom[] =
            "{\"error\":{\"code\":\"internal\",\"message\":\"out of memory\"}}";
        a->status = 500;
        a->body = malloc(sizeof oom);
        if (a->body)
            memcpy(a->body, oom, sizeof oom);
    }
    a->len = a->body ? strlen(a->body) : 0;
}

void eo__answer_error(eo__answer *a, int status, const char *code, const char *message,
                      const char *field)
{
    eo__answer_json(a, status, eo_error_to_json(code, message, field));
}

static int64_t wall_now(void)
{
    return (int64_t)time(NULL);
}

/* ---- handlers --------------------------------------------------------------------------- */

/* The body as a JSON object, through the codec's request parser (docs/SERVICE.md "Errors":
 * size, nesting depth, duplicate keys, an object). -1 when the answer is in @p a. */
static int parse_body(eo__call *c, eo__answer *a)
{
    eo_request_error rerr;
    if (eo_request_parse(c->body, c->body_len, c->svc->cfg.body_max, EO_REQUEST_DEPTH_MAX,
                         &c->json, &rerr) != 0) {
        eo__answer_error(a, rerr.status, rerr.code, rerr.message, rerr.field);
        return -1;
    }
    return 0;
}

int eo__need_pool(eo__call *c, eo__pool_facts *pi, eo__answer *a)
{
    if (eo__pools_get(&c->svc->pools, eo__path_param(c->m, "pool"), pi) != 0) {
        eo__answer_error(a, 404, "unknown_pool", "no pool of that name", "pool");
        return -1;
    }
    return 0;
}

/* Makes c->w a writer request of @p kind for the path's pool and, when @p key names a path
 * parameter, that parameter (a player id) as its player. */
static void writer_req(eo__call *c, eo__wkind kind, const char *key)
{
    c->w.kind = kind;
    snprintf(c->w.pool, sizeof c->w.pool, "%s", eo__path_param(c->m, "pool"));
    if (key != NULL)
        snprintf(c->w.u.edit.player, sizeof c->w.u.edit.player, "%s",
                 eo__path_param(c->m, key));
}

/* The answer for a failure @p rc of a request doing @p op, through the one mapping of codes
 * to statuses (eo_engine_status()). */
static void answer_failure(eo__answer *a, eo_engine_op op, int rc, const char *field,
                           const char *message)
{
    int status;
    const char *code;
    eo_engine_status(rc, op, &status, &code);
    eo__answer_error(a, status, code, message, field);
}

/* A new player's view from the pool's model (what an unknown id gets; nothing is written). */
static void new_player_view(const eo_model_ctx *m, int64_t now, eo_rating_view *v)
{
    uint64_t fresh[64];
    memset(v, 0, sizeof *v);
    if (eo_model_state_size(m) > sizeof fresh)
        return;
    eo_model_player_init(m, fresh);
    eo_model_view(m, fresh, now, v);
    eo_model_player_free(m, fresh);
}

/* The stale flag comes from the pool's t_stale_days. */
void eo__view_of_row(const eo__pool_facts *pi, const eo_player_row *row, int64_t now,
                     eo_rating_view *v)
{
    memset(v, 0, sizeof *v);
    v->display = row->rating;
    v->mu = row->mu;
    v->sigma = row->sigma;
    v->volatility = row->volatility;
    v->rounds = row->rounds;
    v->visible = row->visible;
    v->last_ended_at = row->last_ended_at;
    memcpy(v->extra, row->extra, sizeof v->extra);
    int i = eo_model_param_index(pi->cfg.model.model, "t_stale_days");
    int64_t days = i >= 0 ? (int64_t)pi->cfg.model.v[i] : 30;
    /* A player without a rated round has no age to be stale by. */
    v->stale = row->last_ended_at != 0 && now - row->last_ended_at > days * 86400;
}

static eo__run h_player_get(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    eo_player_row row;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    eo_store *rs = eo__reader(c->svc);
    if (!rs) {
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return EO__RUN_DONE;
    }
    int64_t now = wall_now();
    eo_rating_view v;
    int rc = eo_store_player_get(rs, pi.id, eo__path_param(c->m, "id"), &row);
    if (rc == EO_ENOTFOUND) {
        new_player_view(pi.model, now, &v);
    } else if (rc != 0) {
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return EO__RUN_DONE;
    } else {
        eo__view_of_row(&pi, &row, now, &v);
    }
    const char *division = v.visible ? eo_pool_division(&pi.cfg, v.display) : NULL;
    eo__answer_json(
        a, 200, eo_rating_view_to_json(pi.model, eo__path_param(c->m, "id"), &v, division, true));
    return EO__RUN_DONE;
}


/* Search nodes a plain split may take: a bound keeps one pathological request from holding a
 * compute thread for long. The first SPLIT_INLINE_WORK of them (~1.3 ms) are spent on the HTTP
 * thread, which answers nearly every request without the hand-over's cost. */
#define SPLIT_WORK_LIMIT 20000000u
#define SPLIT_INLINE_WORK 100000u

/* The calling HTTP thread's solver work space, created on its first split and kept for the
 * thread's later ones (freed by the key's destructor when the thread ends). NULL when out of
 * memory: the caller then solves with eo_split_solve(). */
static eo_split_ws *split_ws(struct eo_service *svc)
{
    eo_split_ws *ws = pthread_getspecific(svc->split_key);
    if (!ws && (ws = eo_split_ws_new()) != NULL && pthread_setspecific(svc->split_key, ws) != 0) {
        eo_split_ws_free(ws);
        ws = NULL;
    }
    return ws;
}

/* 200 with the splits' text (eo_splits_text(): no JSON tree on the hot path). */
static void answer_splits(eo__answer *a, const eo_splits *s, const char *const *ids, int64_t unit)
{
    char *text = NULL;
    size_t len = 0;
    int rc = eo_splits_text(s, ids, unit, &text, &len);
    if (rc != 0) {
        eo__answer_error(a, 500, "internal", rc == EO_ENOMEM ? "out of memory"
                         : "the splits cannot be encoded", NULL);
        return;
    }
    a->status = 200;
    a->ctype = NULL;
    a->body = text;
    a->len = len;
}

/* The rows of players @p ids[0..n) of pool @p pool_id (NULL entries skipped) in one read
 * transaction: one snapshot, every row from the same commit, and one round of WAL locking
 * instead of one per player. found[i], and out[i] (mean and variance) when found. 0 or EO_EIO. */
static int read_rows(eo__call *c, int64_t pool_id, const char *const *ids, size_t n,
                     bool *found, eo_strength *out)
{
    eo_store *rs = NULL;
    bool in_txn = false;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        eo_player_row row;
        found[i] = false;
        if (ids[i] == NULL)
            continue;
        if (!rs) {
            if (!(rs = eo__reader(c->svc)))
                return EO_EIO;
            in_txn = eo_store_begin(rs) == 0;
        }
        rc = eo_store_player_get(rs, pool_id, ids[i], &row);
        if (rc == 0) {
            found[i] = true;
            out[i].mu = row.mu;
            out[i].var = row.sigma * row.sigma;
        } else if (rc == EO_ENOTFOUND) {
            rc = 0;
        }
    }
    if (in_txn)
        eo_store_rollback(rs); /* nothing to keep; ends the snapshot */
    return rc == 0 ? 0 : EO_EIO;
}

/* The players' strengths: a given rating, else the pool's mean and variance as of one commit
 * (the published ratings, or the store when they are off), else a new player's. -1 when the
 * answer (500) is in @p a. */
static int split_strengths(eo__call *c, const eo__pool_facts *pi, const eo_split_request *req,
                           eo_strength *strength, eo__answer *a)
{
    bool found[EO_SPLIT_EXACT_MAX];
    eo_rating_view fresh;
    new_player_view(pi->model, wall_now(), &fresh);
    if (eo__ratings_read(pi->ratings, (const char *const *)req->ids, req->n, strength,
                         found) != 0) {
        const char *ids[EO_SPLIT_EXACT_MAX];
        for (size_t i = 0; i < req->n; i++)
            ids[i] = req->has_rating[i] ? NULL : req->ids[i];
        if (read_rows(c, pi->id, ids, req->n, found, strength) != 0) {
            eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
            return -1;
        }
    }
    for (size_t i = 0; i < req->n; i++) {
        if (req->has_rating[i]) {
            strength[i].mu = (double)req->rating[i];
            strength[i].var = 0.0;
        } else if (!found[i]) {
            strength[i].mu = fresh.mu;
            strength[i].var = fresh.sigma * fresh.sigma;
        }
    }
    return 0;
}

/* Hands a decoded request (@p work, freed by @p work_free when the request completes) to the
 * compute pool, which runs @p compute. The body's tree goes now: the decoded request owns its
 * strings, and no tree waits in the queue. */
static eo__run to_compute(eo__call *c, void *work, void (*work_free)(void *),
                          void (*compute)(eo__call *c))
{
    c->work = work;
    c->work_free = work_free;
    c->compute = compute;
    json_decref(c->json);
    c->json = NULL;
    return EO__RUN_COMPUTE;
}

/* A split request between its reading on the HTTP thread and its solving, there or on the
 * compute pool (docs/SERVICE.md "Heavy requests"). */
typedef struct split_work {
    const eo_model_ctx *model; /* the pool table's, alive as long as the service */
    eo_split_request req;
    eo_strength strength[EO_SPLIT_EXACT_MAX];
} split_work;

static void split_work_free(void *p)
{
    split_work *sw = p;
    if (sw == NULL)
        return;
    eo_split_request_free(&sw->req);
    free(sw);
}

/* Reads a split request: the pool, the body (the plain shape without a JSON tree; anything
 * else, errors included, the general way with the general messages), the players' strengths.
 * -1 when the answer is in @p a. */
static int split_read(eo__call *c, split_work *sw, eo__answer *a)
{
    eo__pool_facts pi;
    eo_round_error rerr;
    if (eo__need_pool(c, &pi, a))
        return -1;
    sw->model = pi.model;
    int prc = eo_split_request_plain(c->body, c->body_len, &sw->req);
    if (prc == EO_ENOMEM) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return -1;
    }
    if (prc != 0) {
        if (parse_body(c, a))
            return -1;
        memset(&rerr, 0, sizeof rerr);
        if (eo_split_request_from_json(c->json, &sw->req, &rerr) != 0) {
            eo__answer_error(a, 400, "invalid_request", rerr.message[0] ? rerr.message
                             : "invalid split request", rerr.field);
            return -1;
        }
    }
    if (sw->req.n > EO_SPLIT_EXACT_MAX) {
        eo__answer_error(a, 400, "invalid_request", "too many players", "players");
        return -1;
    }
    if (split_strengths(c, &pi, &sw->req, sw->strength, a) != 0)
        return -1;
    if (sw->req.balance) {
        /* The map's field is that of the largest team size asked (its size bucket, under
         * map_size); the time budget is the service's to cap. */
        eo_split_request *req = &sw->req;
        int kb = req->k_max > 0 ? req->k_max : (int)(req->n / 2);
        req->field = eo__pools_field(&c->svc->pools, pi.name, req->map, (size_t)kb, (size_t)kb,
                                     NULL);
        if (req->budget_ms > (int64_t)c->svc->cfg.budget_max_ms)
            req->budget_ms = (int64_t)c->svc->cfg.budget_max_ms;
    }
    return 0;
}

/* Solves the request (eo_app_split()) and answers it: a plain request with this thread's work
 * space and at most @p work search nodes, a balancer request within its time budget. EO_ELIMIT
 * (nothing answered) when @p inline_try and a plain request's work ran out; else 0, the answer
 * in @p a. */
static int split_solve(eo__call *c, split_work *sw, uint64_t work, bool inline_try,
                       eo__answer *a)
{
    eo_split_answer ans;
    eo_round_error rerr;
    rerr.field[0] = rerr.message[0] = '\0';
    /* when set, a plain answer's splits live in the work space (not freed with the answer) */
    eo_app_split_options opt = {.work_limit = work,
                                .ws = sw->req.balance ? NULL : split_ws(c->svc)};
    int rc = eo_app_split(&sw->req, sw->model, sw->strength, &opt, &ans, &rerr);
    if (rc == EO_ELIMIT && inline_try)
        return EO_ELIMIT;
    if (rc == EO_ENOMEM)
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
    else if (rc == EO_ELIMIT)
        eo__answer_error(a, 422, "split_too_hard",
                         "the exact search exceeded its work limit for these ratings", "players");
    else if (rc != 0)
        eo__answer_error(a, 400, "invalid_request", rerr.message, rerr.field);
    else if (ans.splits != NULL)
        answer_splits(a, ans.splits, (const char *const *)sw->req.ids, ans.unit);
    else
        eo__answer_json(a, 200, eo_split_answer_to_json(&ans, &sw->req));
    eo_split_answer_free(&ans);
    return 0;
}

static void split_compute(eo__call *c)
{
    (void)split_solve(c, c->work, SPLIT_WORK_LIMIT, false, &c->out);
}

/* POST /v1/pools/{pool}/splits. A plain request is solved here within a small search budget
 * (nearly all are); past it, and for every balancer request, the compute pool solves it. */
static eo__run h_splits(eo__call *c, eo__answer *a)
{
    split_work *sw = calloc(1, sizeof *sw);
    if (sw == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    if (split_read(c, sw, a) != 0 ||
        (!sw->req.balance && split_solve(c, sw, SPLIT_INLINE_WORK, true, a) == 0)) {
        split_work_free(sw);
        return EO__RUN_DONE;
    }
    return to_compute(c, sw, split_work_free, split_compute);
}

/* An autobalance request between its reading here and its solving on the compute pool. */
typedef struct ab_work {
    const eo_model_ctx *model; /* the pool table's */
    eo_autobalance_request req;
    int64_t now;               /* the clock when it was read: "now" unless the request gives it */
} ab_work;

static void ab_work_free(void *p)
{
    ab_work *w = p;
    if (w == NULL)
        return;
    eo_autobalance_request_free(&w->req);
    free(w);
}

/* Fills the ratings the request did not give from the pool (its model's mean, or a new
 * player's), read in one snapshot. -1 when the answer (500) is in @p a. */
static int ab_ratings(eo__call *c, const eo__pool_facts *pi, eo_autobalance_request *req,
                      int64_t now, eo__answer *a)
{
    eo_rating_view fresh;
    new_player_view(pi->model, now, &fresh);
    size_t n = req->n + 1; /* the players, then the joiner */
    const char **ids = calloc(n, sizeof *ids);
    bool *found = calloc(n, sizeof *found);
    eo_strength *st = calloc(n, sizeof *st);
    int rc = ids && found && st ? 0 : EO_ENOMEM;
    for (size_t i = 0; rc == 0 && i < req->n; i++)
        ids[i] = req->has_rating[i] ? NULL : req->ids[i];
    if (rc == 0 && req->has_joiner && !req->joiner_has_rating)
        ids[req->n] = req->joiner_id;
    if (rc == 0)
        rc = read_rows(c, pi->id, ids, n, found, st);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (ids[i] == NULL)
            continue;
        double mu = found[i] ? st[i].mu : fresh.mu;
        if (i == req->n) {
            req->joiner_rating = mu;
            req->joiner_has_rating = true;
        } else {
            req->rating[i] = mu;
            req->has_rating[i] = true;
        }
    }
    free(ids);
    free(found);
    free(st);
    if (rc != 0) {
        eo__answer_error(a, 500, rc == EO_ENOMEM ? "internal" : "storage",
                         rc == EO_ENOMEM ? "out of memory" : "the store cannot be read", NULL);
        return -1;
    }
    return 0;
}

static void ab_compute(eo__call *c)
{
    ab_work *w = c->work;
    eo_app_autobalance_answer ans;
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    if (eo_app_autobalance(&w->req, w->model, w->now, &ans, &rerr) != 0)
        eo__answer_error(&c->out, 400, "invalid_request", rerr.message, rerr.field);
    else
        eo__answer_json(&c->out, 200,
                        eo_autobalance_to_json(&w->req, &ans.res,
                                               w->req.has_joiner ? &ans.join : NULL));
}

/* POST /v1/pools/{pool}/autobalance: the current teams -> ordered moves with their reasons.
 * Read here, with the ratings the request does not give from the pool; resolved to the core's
 * eo_model_split_rating() integers and answered (eo_app_autobalance()), a search that grows
 * with the server, on the compute pool. */
static eo__run h_autobalance(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    eo_round_error rerr;
    if (eo__need_pool(c, &pi, a) || parse_body(c, a))
        return EO__RUN_DONE;
    ab_work *w = calloc(1, sizeof *w);
    if (w == NULL) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    w->model = pi.model;
    memset(&rerr, 0, sizeof rerr);
    if (eo_autobalance_request_from_json(c->json, &w->req, &rerr) != 0) {
        eo__answer_error(a, 400, "invalid_request", rerr.message[0] ? rerr.message
                         : "invalid autobalance request", rerr.field);
        ab_work_free(w);
        return EO__RUN_DONE;
    }
    w->req.relative = pi.cfg.presence.on;
    w->req.presence = eo__pools_presence(&c->svc->pools, pi.name);
    w->now = wall_now();
    if (ab_ratings(c, &pi, &w->req, w->now, a) != 0) {
        ab_work_free(w);
        return EO__RUN_DONE;
    }
    return to_compute(c, w, ab_work_free, ab_compute);
}

/* POST /v1/pools/{pool}/triggers (docs/BALANCER.md "Scramble triggers"): a game state -> the
 * scramble rule that fired, or none, with the guard that blocked it. Pure: the pool only scopes the
 * route. */
static eo__run h_triggers(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    eo_trigger_state st;
    eo_trigger_config cfg;
    eo_trigger_result r;
    eo_round_error rerr;
    if (eo__need_pool(c, &pi, a) || parse_body(c, a))
        return EO__RUN_DONE;
    memset(&rerr, 0, sizeof rerr);
    if (eo_trigger_request_from_json(c->json, &st, &cfg, &rerr) != 0) {
        eo__answer_error(a, 400, "invalid_request", rerr.message[0] ? rerr.message
                         : "invalid trigger request", rerr.field);
        return EO__RUN_DONE;
    }
    if (eo_trigger_eval(&st, &cfg, &r) != 0) {
        eo__answer_error(a, 400, "invalid_request",
                         "out of range or inconsistent with the other fields", r.field);
        return EO__RUN_DONE;
    }
    eo__answer_json(a, 200, eo_trigger_result_to_json(&r));
    return EO__RUN_DONE;
}


static eo__run h_pools_list(eo__call *c, eo__answer *a)
{
    eo__pool_facts *v;
    size_t n;
    if (eo__pools_list(&c->svc->pools, &v, &n) != 0) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    json_t *arr = json_array();
    for (size_t i = 0; arr && i < n; i++)
        if (json_array_append_new(arr, eo_pool_to_json(v[i].name, &v[i].cfg)) != 0) {
            json_decref(arr);
            arr = NULL;
        }
    free(v);
    eo__answer_json(a, 200, eo_list_to_json("pools", arr));
    return EO__RUN_DONE;
}


static int season_one(void *ctx, const char *name, int64_t seq, int64_t at, int64_t players)
{
    (void)seq;
    return json_array_append_new(ctx, eo_season_to_json(name, at, players)) ? EO_ENOMEM : 0;
}

/* GET /v1/pools/{pool}/seasons: the pool's ended seasons, oldest first. */
static eo__run h_seasons_list(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    eo_store *rs = eo__reader(c->svc);
    json_t *arr = json_array();
    int rc = rs && arr ? eo_store_seasons_each(rs, pi.id, season_one, arr) : EO_EIO;
    if (rc != 0) {
        json_decref(arr);
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return EO__RUN_DONE;
    }
    eo__answer_json(a, 200, eo_list_to_json("seasons", arr));
    return EO__RUN_DONE;
}


typedef struct standings_ctx {
    const eo__pool_facts *pi;
    json_t *arr;
    int64_t rank;
} standings_ctx;

static int standing_one(void *ctx, const char *player, const eo_player_row *row)
{
    standings_ctx *sc = ctx;
    eo_rating_view v;
    eo__view_of_row(sc->pi, row, 0, &v);
    const char *division = v.visible ? eo_pool_division(&sc->pi->cfg, v.display) : NULL;
    json_t *o = eo_rating_view_to_json(sc->pi->model, player, &v, division, false);
    if (o == NULL || json_object_set_new(o, "rank", json_integer((json_int_t)++sc->rank)) != 0 ||
        json_array_append_new(sc->arr, o) != 0)
        return EO_ENOMEM;
    return 0;
}

/* GET /v1/pools/{pool}/seasons/{season}?offset=&limit=: final standings, best first. */
static eo__run h_season_get(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    int64_t offset, limit;
    if (eo__arg_int(c, "offset", 0, 0, INT32_MAX, &offset, a) ||
        eo__arg_int(c, "limit", 100, 0, 10000, &limit, a))
        return EO__RUN_DONE;
    eo_store *rs = eo__reader(c->svc);
    int64_t at = 0;
    int rc =
        rs ? eo_store_season_get(rs, pi.id, eo__path_param(c->m, "season"), NULL, &at) : EO_EIO;
    if (rc == EO_ENOTFOUND) {
        eo__answer_error(a, 404, "unknown_season", "the pool has no season of that name",
                         "season");
        return EO__RUN_DONE;
    }
    standings_ctx sc = {&pi, json_array(), offset};
    if (rc == 0)
        rc = sc.arr ? eo_store_standings_each(rs, pi.id, eo__path_param(c->m, "season"), offset,
                                              limit, standing_one, &sc)
                    : EO_ENOMEM;
    if (rc != 0) {
        json_decref(sc.arr);
        eo__answer_error(a, 500, "storage", "the store cannot be read", NULL);
        return EO__RUN_DONE;
    }
    eo__answer_json(a, 200,
                    eo_standings_to_json(eo__path_param(c->m, "season"), at, offset, sc.arr));
    return EO__RUN_DONE;
}

/* POST /v1/pools/{pool}/seasons: ends the season (the writer). */
static eo__run h_season_create(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a) || parse_body(c, a))
        return EO__RUN_DONE;
    eo_season_request req;
    eo_request_error rerr;
    if (eo_season_request_from_json(c->json, &req, &rerr) != 0) {
        eo__answer_error(a, 400, rerr.code, rerr.message, rerr.field);
        return EO__RUN_DONE;
    }
    writer_req(c, EO__W_SEASON, NULL);
    memcpy(c->w.u.season.name, req.name, sizeof c->w.u.season.name);
    c->w.u.season.f = req.f;
    c->w.u.season.s = req.s;
    return EO__RUN_WRITER;
}

/* A number member of the refit options: absent leaves *out; otherwise it must be a number
 * (an integer when @p integer) within [lo, hi]. */
static int refit_opt(const json_t *o, const char *name, bool integer, double lo, double hi,
                     double *out, bool *has, eo__answer *a)
{
    const json_t *v = json_object_get(o, name);
    if (v == NULL)
        return 0;
    double x = json_is_number(v) ? json_number_value(v) : NAN;
    if ((integer && !json_is_integer(v)) || !(x >= lo && x <= hi)) {
        char msg[120];
        snprintf(msg, sizeof msg, "expected %s in [%g, %g]", integer ? "an integer" : "a number",
                 lo, hi);
        eo__answer_error(a, 400, "invalid_request", msg, name);
        return -1;
    }
    *out = x;
    *has = true;
    return 0;
}

/* POST /v1/pools/{pool}/refit: starts a background refit (refit.c) → 202. The body is
 * optional: {"method","sweeps","tol","prior","prior_mean"}, the options of `evenodds fit`. */
/* The refit options of the body (none: the pool's defaults), {"method","sweeps","tol","prior",
 * "prior_mean"} with the rules of `evenodds fit`, into @p fc. -1 when the answer (400) is in
 * @p a. */
static int refit_options(const json_t *o, const eo__pool_facts *pi, eo_fit_config *fc,
                         eo__answer *a)
{
    static const char *const keys[] = {"method", "sweeps", "tol", "prior", "prior_mean"};
    const char *key;
    json_t *val;
    json_object_foreach ((json_t *)o, key, val) {
        size_t i = 0;
        while (i < sizeof keys / sizeof keys[0] && strcmp(key, keys[i]) != 0)
            i++;
        if (i == sizeof keys / sizeof keys[0]) {
            eo__answer_error(a, 400, "invalid_request",
                             "unknown field (method, sweeps, tol, prior, prior_mean)", key);
            return -1;
        }
    }
    const json_t *m = json_object_get(o, "method");
    eo_model model = pi->cfg.model.model;
    if (m != NULL && (json_string_value(m) == NULL ||
                      eo_fit_method_parse(json_string_value(m), &fc->method) != 0)) {
        eo__answer_error(a, 400, "invalid_request", "expected \"map\" or \"smooth\"", "method");
        return -1;
    }
    if (fc->method == EO_FIT_SMOOTH && model != EO_MODEL_TRUESKILL && model != EO_MODEL_WENGLIN) {
        eo__answer_error(a, 400, "invalid_request",
                         "\"smooth\" is for the trueskill and wenglin models", "method");
        return -1;
    }
    double sweeps = 0, tol = 0, prior = 0, mean = 0;
    bool has_sweeps = false, has_tol = false, has_prior = false, has_mean = false;
    if (refit_opt(o, "sweeps", true, 1, 1e6, &sweeps, &has_sweeps, a) ||
        refit_opt(o, "tol", false, 1e-300, 1e300, &tol, &has_tol, a) ||
        refit_opt(o, "prior", false, 1e-300, 1e300, &prior, &has_prior, a) ||
        refit_opt(o, "prior_mean", false, -1e300, 1e300, &mean, &has_mean, a))
        return -1;
    /* The same rules as `evenodds fit`: a prior's deviation sets the default tolerance. */
    if (has_prior) {
        fc->prior_sd = prior;
        if (!has_tol)
            fc->tol = prior * 1e-4;
    }
    if (has_mean)
        fc->prior_mean = mean;
    if (has_tol)
        fc->tol = tol;
    if (has_sweeps)
        fc->max_sweeps = (uint32_t)sweeps;
    if (model == EO_MODEL_HIVE && !(fc->prior_mean > fc->prior_sd)) {
        eo__answer_error(a, 400, "invalid_request",
                         "the hive model's Gamma prior needs a deviation below its mean",
                         has_prior ? "prior" : "prior_mean");
        return -1;
    }
    return 0;
}

/* The answer to a refit's start: 202 with the job, or why it did not start. */
static void refit_started(eo__call *c, const eo__pool_facts *pi, int rc, int64_t id, eo__answer *a)
{
    if (rc == EO_EEXIST) {
        eo__answer_error(a, 409, "refit_running",
                         "a refit of this pool is running; GET this path for its progress", NULL);
    } else if (rc == EO_EBUSY) {
        a->retry_after = "1";
        eo__answer_error(a, 503, "draining", "the service is shutting down", NULL);
    } else if (rc == EO_ELIMIT) {
        atomic_fetch_add_explicit(&c->svc->metrics.refused[EO__BUSY_REFITS], 1,
                                  memory_order_relaxed);
        a->retry_after = "30";
        eo__answer_error(a, 503, "overloaded", "as many refits as the service allows are "
                         "running (serve --refit-max); retry later", NULL);
    } else if (rc != 0) {
        eo__answer_error(a, 500, "internal", eo_strerror(rc), NULL);
    } else {
        eo__answer_json(a, 202, eo_refit_started_to_json(id, pi->name));
    }
}

static eo__run h_refit_post(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    eo_fit_config fc;
    if (eo__need_pool(c, &pi, a) || eo__route_optional_body(c, a))
        return EO__RUN_DONE;
    if (eo_fit_config_default(&pi.cfg, &fc) != 0) {
        eo__answer_error(a, 500, "internal", "the pool's model has no fit defaults", NULL);
        return EO__RUN_DONE;
    }
    if (c->json != NULL && refit_options(c->json, &pi, &fc, a) != 0)
        return EO__RUN_DONE;
    if (atomic_load(&c->svc->draining)) {
        a->retry_after = "1";
        eo__answer_error(a, 503, "draining", "the service is shutting down", NULL);
        return EO__RUN_DONE;
    }
    int64_t id = 0;
    int rc = eo__refit_start(c->svc, &pi, &fc, &id);
    refit_started(c, &pi, rc, id, a);
    return EO__RUN_DONE;
}


/* GET /v1/pools/{pool}/refit: the pool's last refit job. */
static eo__run h_refit_get(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    json_t *o = eo__refit_status(&c->svc->refits, pi.name);
    if (o == NULL)
        eo__answer_error(a, 404, "no_refit", "this pool has had no refit since the service "
                         "started", NULL);
    else
        eo__answer_json(a, 200, o);
    return EO__RUN_DONE;
}


static eo__run h_metrics(eo__call *c, eo__answer *a)
{
    if (eo__metrics_render(&c->svc->metrics, eo__mm_metrics, c->svc->mm, &a->body, &a->len) != 0) {
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
        return EO__RUN_DONE;
    }
    a->status = 200;
    a->ctype = "text/plain; version=0.0.4; charset=utf-8";
    return EO__RUN_DONE;
}


/* Why the database's file system cannot take writes (read-only, or less free space than
 * serve --min-free), in @p why; false when it can or cannot be asked. */
static bool disk_short(const struct eo_service *svc, char *why, size_t cap)
{
    char dir[4096];
    const char *slash = strrchr(svc->db, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == svc->db ? 1 : (int)(slash - svc->db),
                 svc->db);
    struct statvfs fs;
    if (statvfs(dir, &fs) != 0)
        return false;
    uint64_t free_bytes = (uint64_t)fs.f_bavail * fs.f_frsize;
    if (fs.f_flag & ST_RDONLY)
        snprintf(why, cap, "the database's file system is mounted read-only");
    else if (free_bytes < svc->cfg.min_free_bytes)
        snprintf(why, cap, "%llu bytes free on the database's file system, below the %llu of "
                 "serve --min-free", (unsigned long long)free_bytes,
                 (unsigned long long)svc->cfg.min_free_bytes);
    else
        return false;
    return true;
}

/* GET /readyz: 200 while the service can take updates; 503 with the reason otherwise
 * (docs/SERVICE.md "Health"). */
static eo__run h_readyz(eo__call *c, eo__answer *a)
{
    char why[300];
    if (atomic_load(&c->svc->draining) || !c->svc->writer || !eo__writer_running(c->svc->writer))
        eo__answer_error(a, 503, "not_ready", "the service is shutting down", NULL);
    else if (!eo__reader(c->svc))
        eo__answer_error(a, 503, "not_ready", "the store cannot be read", NULL);
    else if (!eo__writer_healthy(c->svc->writer, why, sizeof why) ||
             disk_short(c->svc, why, sizeof why))
        eo__answer_error(a, 503, "not_ready", why, NULL);
    else
        eo__answer_json(a, 200, eo_status_to_json("ready"));
    return EO__RUN_DONE;
}


void eo__route_busy(eo__call *c, eo__answer *a)
{
    memset(a, 0, sizeof *a);
    a->retry_after = "1";
    if (atomic_load(&c->svc->draining))
        eo__answer_error(a, 503, "draining", "the service is shutting down", NULL);
    else if (c->compute)
        eo__answer_error(a, 503, "overloaded", "the compute queue is full; retry later", NULL);
    else
        eo__answer_error(a, 503, "overloaded", "the update queue is full; retry later", NULL);
}

static void round_request_free(void *q)
{
    eo_round_request_free(q);
    free(q);
}

/* 401 for a bearer that is neither a key nor a token the route takes. */
static void invalid_bearer(eo__answer *a, const char *message)
{
    a->www_auth = "Bearer realm=\"evenodds\", error=\"invalid_token\"";
    eo__answer_error(a, 401, "unauthorized", message, NULL);
}

/* POST /v1/pools/{pool}/rounds: decoded and checked here, so that a bad round never waits
 * for a commit; rated and stored by the writer. Without a key, the bearer must be the token of
 * the instance whose session the round names: the writer checks that, and that the session is
 * of this pool (docs/MATCHMAKING.md "Sessions and rounds"). */
static eo__run h_rounds(eo__call *c, eo__answer *a)
{
    static const char no_key[] = "invalid key (an instance's token reports only the rounds of its "
                                 "own sessions, with \"session\" in the round)";
    bool by_token = c->role == EO__ROLE_NONE; /* a token's shape (eo__route_check()) */
    if (by_token)
        (void)eo__auth_bearer(c->authz, c->w.bearer, sizeof c->w.bearer);
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a) || parse_body(c, a))
        return EO__RUN_DONE;
    eo_round_request *q = malloc(sizeof *q);
    eo_round_error rerr;
    memset(&rerr, 0, sizeof rerr);
    int rc = q ? eo_round_request_from_json(c->json, q, &rerr) : EO_ENOMEM;
    if (rc != 0) {
        free(q);
        answer_failure(a, EO_OP_ROUND, rc, rerr.field,
                       rc == EO_ENOMEM ? "out of memory" : rerr.message);
        return EO__RUN_DONE;
    }
    if (by_token && q->session == NULL) {
        round_request_free(q);
        invalid_bearer(a, no_key);
        return EO__RUN_DONE;
    }
    c->work = q;
    c->work_free = round_request_free;
    json_decref(c->json); /* the decoded round is all the writer needs: the tree goes now */
    c->json = NULL;
    writer_req(c, EO__W_ROUND, NULL);
    c->w.u.round = q;
    return EO__RUN_WRITER;
}

static eo__run h_player_put(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a) || parse_body(c, a))
        return EO__RUN_DONE;
    eo_request_error rerr;
    if (eo_rating_request_from_json(c->json, &c->w.u.edit.rating, &c->w.u.edit.sigma, &rerr) !=
        0) {
        eo__answer_error(a, 400, rerr.code, rerr.message, rerr.field);
        return EO__RUN_DONE;
    }
    writer_req(c, EO__W_SET, "id");
    return EO__RUN_WRITER;
}

/* Quality: figures of the writer's in-memory pool, asked through its queue. */
static eo__run h_quality(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    writer_req(c, EO__W_QUALITY, NULL);
    return EO__RUN_WRITER;
}

/* Maps: the bias the writer publishes after each commit (and after the fold at start), before
 * it answers, so every acknowledged round is in it; a read that never waits for the writer. */
static eo__run h_maps(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    json_t *doc = eo__pools_maps(&c->svc->pools, &pi);
    if (doc == NULL)
        eo__answer_error(a, 500, "internal", "out of memory", NULL);
    else
        eo__answer_json(a, 200, doc);
    return EO__RUN_DONE;
}

static eo__run h_player_delete(eo__call *c, eo__answer *a)
{
    eo__pool_facts pi;
    if (eo__need_pool(c, &pi, a))
        return EO__RUN_DONE;
    writer_req(c, EO__W_RESET, "id");
    return EO__RUN_WRITER;
}

/* POST /v1/pools: decoded and checked here (name rule, model, parameters); created by the
 * writer. */
static eo__run h_pools_create(eo__call *c, eo__answer *a)
{
    eo_pool_request req;
    eo_request_error rerr;
    if (parse_body(c, a))
        return EO__RUN_DONE;
    if (eo_pool_request_from_json(c->json, &req, &rerr) != 0) {
        eo__answer_error(a, 400, rerr.code, rerr.message, rerr.field);
        return EO__RUN_DONE;
    }
    eo_pool_config *cfg = malloc(sizeof *cfg);
    eo_round_error cerr;
    memset(&cerr, 0, sizeof cerr);
    int rc = cfg ? eo_pool_config_new_from_json(req.model, req.params, cfg, &cerr) : EO_ENOMEM;
    if (rc != 0) {
        free(cfg);
        answer_failure(a, EO_OP_POOL, rc == EO_ENOMEM ? EO_ENOMEM : EO_EINVAL, cerr.field,
                       rc == EO_ENOMEM ? "out of memory" : cerr.message);
        return EO__RUN_DONE;
    }
    c->work = cfg;
    c->work_free = free;
    json_decref(c->json); /* req.params pointed into it; the configuration is decoded */
    c->json = NULL;
    c->w.kind = EO__W_POOL_CREATE;
    snprintf(c->w.pool, sizeof c->w.pool, "%s", req.name);
    c->w.u.create = cfg;
    return EO__RUN_WRITER;
}

static bool is_json_ctype(const char *ct)
{
    if (!ct)
        return false;
    while (*ct == ' ')
        ct++;
    size_t n = strlen("application/json");
    if (strncasecmp(ct, "application/json", n) != 0)
        return false;
    return ct[n] == '\0' || ct[n] == ';' || ct[n] == ' ';
}

int eo__route_optional_body(eo__call *c, eo__answer *a)
{
    if (c->body_len == 0)
        return 0;
    if (!is_json_ctype(c->ctype)) {
        eo__answer_error(a, 415, "unsupported_media_type",
                         "expected Content-Type: application/json", NULL);
        return -1;
    }
    return parse_body(c, a);
}

static eo__run h_healthz(eo__call *c, eo__answer *a)
{
    (void)c;
    eo__answer_json(a, 200, eo_status_to_json("ok"));
    return EO__RUN_DONE;
}

/* The routes: adding one is a row here and its handler above. Paths with several methods list
 * GET first (the Allow header's order); docs/openapi.yaml names the same paths and methods
 * (tests/unit/test_service.c checks it). */
const eo__route eo__routes[] = {
    {"GET", "/healthz", EO__ROLE_NONE, EO__BODY_NONE, h_healthz},
    {"GET", "/readyz", EO__ROLE_NONE, EO__BODY_NONE, h_readyz},
    {"GET", "/metrics", EO__ROLE_NONE, EO__BODY_NONE, h_metrics},
    {"GET", "/v1/pools", EO__ROLE_ADMIN, EO__BODY_NONE, h_pools_list},
    {"POST", "/v1/pools", EO__ROLE_ADMIN, EO__BODY_JSON, h_pools_create},
    {"GET", "/v1/pools/{pool}/players/{id}", EO__ROLE_SERVER, EO__BODY_NONE, h_player_get},
    {"PUT", "/v1/pools/{pool}/players/{id}", EO__ROLE_ADMIN, EO__BODY_JSON, h_player_put},
    {"DELETE", "/v1/pools/{pool}/players/{id}", EO__ROLE_ADMIN, EO__BODY_NONE, h_player_delete},
    {"GET", "/v1/pools/{pool}/rounds", EO__ROLE_READ, EO__BODY_NONE, eo__h_rounds_list},
    {"POST", "/v1/pools/{pool}/rounds", EO__ROLE_TOKEN, EO__BODY_JSON, h_rounds},
    {"POST", "/v1/pools/{pool}/splits", EO__ROLE_SERVER, EO__BODY_JSON, h_splits},
    {"GET", "/v1/pools/{pool}/quality", EO__ROLE_ADMIN, EO__BODY_NONE, h_quality},
    {"GET", "/v1/pools/{pool}/seasons", EO__ROLE_READ, EO__BODY_NONE, h_seasons_list},
    {"POST", "/v1/pools/{pool}/seasons", EO__ROLE_ADMIN, EO__BODY_JSON, h_season_create},
    {"GET", "/v1/pools/{pool}/seasons/{season}", EO__ROLE_READ, EO__BODY_NONE, h_season_get},
    {"POST", "/v1/pools/{pool}/autobalance", EO__ROLE_SERVER, EO__BODY_JSON, h_autobalance},
    {"POST", "/v1/pools/{pool}/triggers", EO__ROLE_SERVER, EO__BODY_JSON, h_triggers},
    {"GET", "/v1/pools/{pool}/maps", EO__ROLE_READ, EO__BODY_NONE, h_maps},
    {"GET", "/v1/pools/{pool}/refit", EO__ROLE_ADMIN, EO__BODY_NONE, h_refit_get},
    {"POST", "/v1/pools/{pool}/refit", EO__ROLE_ADMIN, EO__BODY_OPTIONAL, h_refit_post},
    {"GET", "/v1/pools/{pool}/tune", EO__ROLE_ADMIN, EO__BODY_NONE, eo__tune_get},
    {"POST", "/v1/pools/{pool}/tune", EO__ROLE_ADMIN, EO__BODY_OPTIONAL, eo__tune_post},
    {"POST", "/v1/pools/{pool}/tune/apply", EO__ROLE_ADMIN, EO__BODY_OPTIONAL, eo__tune_apply},
    /* The dashboard's reads (reads.c) and pages (pages.c): docs/SERVICE.md "Dashboard and
     * reads". */
    {"GET", "/v1/dashboard", EO__ROLE_READ, EO__BODY_NONE, eo__h_dashboard},
    {"GET", "/v1/pools/{pool}/standings", EO__ROLE_READ, EO__BODY_NONE, eo__h_standings},
    {"GET", "/v1/pools/{pool}/players/{id}/history", EO__ROLE_READ, EO__BODY_NONE,
     eo__h_history},
    {"GET", "/v1/pools/{pool}/players/{id}/rounds", EO__ROLE_READ, EO__BODY_NONE,
     eo__h_player_rounds},
    {"GET", "/v1/pools/{pool}/rounds/{round}", EO__ROLE_READ, EO__BODY_NONE, eo__h_round_get},
    {"GET", "/v1/pools/{pool}/health", EO__ROLE_READ, EO__BODY_NONE, eo__h_health},
    {"GET", "/v1/pools/{pool}/queues", EO__ROLE_READ, EO__BODY_NONE, eo__h_pool_queues},
    {"GET", "/", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/players/{id}", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/rounds", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/rounds/{round}", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/maps", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/health", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/pools/{pool}/queues", EO__ROLE_NONE, EO__BODY_NONE, eo__h_page},
    {"GET", "/static/{file}", EO__ROLE_NONE, EO__BODY_NONE, eo__h_static},
    /* matchmaking (mm_routes.c; docs/MATCHMAKING.md) */
    {"GET", "/v1/queues", EO__ROLE_ADMIN, EO__BODY_NONE, eo__h_queue_list},
    {"POST", "/v1/queues", EO__ROLE_ADMIN, EO__BODY_JSON, eo__h_queue_create},
    {"GET", "/v1/queues/{queue}", EO__ROLE_SERVER, EO__BODY_NONE, eo__h_queue_get},
    {"PATCH", "/v1/queues/{queue}", EO__ROLE_ADMIN, EO__BODY_JSON, eo__h_queue_patch},
    {"DELETE", "/v1/queues/{queue}", EO__ROLE_ADMIN, EO__BODY_NONE, eo__h_queue_delete},
    {"POST", "/v1/queues/{queue}/tickets", EO__ROLE_SERVER, EO__BODY_JSON, eo__h_ticket_create},
    {"GET", "/v1/tickets/{ticket}", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_ticket_get},
    {"DELETE", "/v1/tickets/{ticket}", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_ticket_delete},
    {"POST", "/v1/tickets/{ticket}/ready", EO__ROLE_TOKEN, EO__BODY_JSON, eo__h_ticket_ready},
    {"POST", "/v1/instances", EO__ROLE_SERVER, EO__BODY_JSON, eo__h_instance_register},
    {"GET", "/v1/instances/{instance}", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_instance_get},
    {"DELETE", "/v1/instances/{instance}", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_instance_delete},
    {"POST", "/v1/instances/{instance}/heartbeat", EO__ROLE_TOKEN, EO__BODY_NONE,
     eo__h_instance_heartbeat},
    {"GET", "/v1/sessions/{session}", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_session_get},
    {"POST", "/v1/sessions/{session}/backfill", EO__ROLE_TOKEN, EO__BODY_JSON,
     eo__h_session_backfill},
    {"POST", "/v1/sessions/{session}/close", EO__ROLE_TOKEN, EO__BODY_NONE, eo__h_session_close},
};

const size_t eo__route_count = sizeof eo__routes / sizeof eo__routes[0];

_Static_assert(sizeof eo__routes / sizeof eo__routes[0] <= EO__ROUTES_MAX,
               "EO__ROUTES_MAX (the metrics' rows) must hold every route");

int eo__route_check(eo__call *c, eo__answer *a)
{
    const eo__match *m = c->m;
    memset(a, 0, sizeof *a);
    if (m->route < 0) {
        if (m->path_known) {
            a->allow = m->allow;
            eo__answer_error(a, 405, "method_not_allowed", "method not allowed on this path",
                             NULL);
        } else {
            eo__answer_error(a, 404, "not_found", "no such route", NULL);
        }
        return 1;
    }
    const eo__route *r = &eo__routes[m->route];
    c->role = EO__ROLE_NONE;
    /* A read of a public dashboard needs no key; one given is checked all the same. */
    bool keyless = r->role == EO__ROLE_READ && c->authz == NULL &&
                   c->svc->cfg.dashboard == EO_DASHBOARD_PUBLIC;
    if (r->role != EO__ROLE_NONE && !keyless) {
        bool missing;
        eo__role role = eo__auth_check(&c->svc->auth, c->authz, &missing);
        c->role = role;
        /* On a route that takes a client's own token, a bearer that is no key but has a
         * token's shape goes on to the handler, which compares it with the ticket's or
         * instance's. */
        bool token = role == EO__ROLE_NONE && r->role == EO__ROLE_TOKEN && !missing &&
                     eo__auth_token_shaped(c->authz);
        if (role == EO__ROLE_NONE && !token) {
            /* RFC 6750 §3: the scheme, and the error when a key was given but is not ours. */
            a->www_auth = missing ? "Bearer realm=\"evenodds\""
                                  : "Bearer realm=\"evenodds\", error=\"invalid_token\"";
            eo__answer_error(a, 401, "unauthorized",
                             missing ? "missing Authorization: Bearer key" : "invalid key", NULL);
            return 1;
        }
        if (!token && role < r->role) {
            eo__answer_error(a, 403, "forbidden", "this route needs the admin key", NULL);
            return 1;
        }
    }
    if (m->seg_error) {
        eo__answer_error(a, 400, "invalid_path",
                         m->seg_error == EO_ELIMIT ? "id longer than 128 bytes"
                                                   : "invalid id: bad percent-encoding, UTF-8 "
                                                     "or control character",
                         m->seg_field);
        return 1;
    }
    if (r->body == EO__BODY_JSON && !is_json_ctype(c->ctype)) {
        eo__answer_error(a, 415, "unsupported_media_type",
                         "expected Content-Type: application/json", NULL);
        return 1;
    }
    return 0;
}

eo__run eo__route_run(eo__call *c, eo__answer *a)
{
    memset(a, 0, sizeof *a);
    memset(&c->w, 0, sizeof c->w);
    c->w.now = wall_now();
    return eo__routes[c->m->route].handler(c, a);
}

void eo__route_finish(eo__call *c, eo__answer *a)
{
    memset(a, 0, sizeof *a);
    if (c->w.status >= 400 || !c->w.resp) {
        const eo_engine_error *e = &c->w.err;
        eo__answer_error(a, e->status >= 400 ? e->status : 500, e->code[0] ? e->code : "internal",
                         e->message, e->field);
        free(c->w.resp);
    } else {
        a->status = c->w.status;
        a->body = c->w.resp;
        a->len = strlen(a->body);
    }
    c->w.resp = NULL;
}
