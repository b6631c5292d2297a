/* The single writer. HTTP threads queue updates and go back to serving (their connection is
 * suspended); this thread takes everything queued (up to batch_max), applies it inside one
 * transaction, commits once, publishes the touched pools and only then answers, so an
 * acknowledged update is always a committed one. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "evenodds/eo_codec.h"
#include "service/mm.h"
#include "service/service.h"

struct eo__writer {
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    eo__wreq *head, *tail;
    size_t n, queue_max, batch_max;
    bool stopping, accepting;
    /* Whether the store takes writes (/readyz): false with the reason after a failed commit or
     * when the file opened read-only, until a commit or a probe succeeds (writer_main). */
    bool healthy;
    char why[256];
    double probe_at; /* eo__mono_s() of the next probe while unhealthy */
    int drain_rc; /* the first failed commit of the batches taken once stopping was set */
    eo_engine *e;
    eo__mm *mm; /* matchmaking over the same engine (mm.h) */
    eo__pools *pools;
    eo__metrics *m;
    const eo__logger *lg;
    eo__wreq **batch; /* batch_max slots */
    /* The rows a batch wrote, for the ratings splits read (kept from batch to batch). */
    eo__rating_set *set, *one; /* one: a pool's entries, in order */
    const char **set_pool;     /* each entry's pool name (the engine's); NULL once published */
    size_t nset, capset, capone, cappool;
};

/* What a writer request does, as the one error mapping sees it (eo_engine_status()). */
static eo_engine_op op_of(eo__wkind kind)
{
    switch (kind) {
    case EO__W_ROUND: return EO_OP_ROUND;
    case EO__W_SET:
    case EO__W_RESET: return EO_OP_EDIT;
    case EO__W_POOL_CREATE:
    case EO__W_CONFIGURE: return EO_OP_POOL;
    case EO__W_SEASON: return EO_OP_SEASON;
    case EO__W_REFIT: return EO_OP_REFIT;
    default: return EO_OP_READ;
    }
}

/* The request failed with @p rc: its error as the engine filled it, or from @p rc when the
 * failure was the writer's own (out of memory building an answer). */
static void set_error(eo__wreq *w, int rc)
{
    if (w->err.status < 400 || w->err.status > 599)
        eo_engine_fail(&w->err, op_of(w->kind), rc, "", "%s", eo_strerror(rc));
    w->status = w->err.status;
}

/* The text of an answer document (its reference is taken); NULL when out of memory. */
static char *dump(json_t *o)
{
    char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return s;
}

static char *player_view(eo_engine *e, const char *pool, const char *player, int64_t now)
{
    const eo_pool *p = eo_engine_pool(e, pool);
    eo_rating_view v;
    if (!p)
        return NULL;
    eo_pool_lookup(p, player, now, &v);
    const char *division = v.visible ? eo_pool_division(eo_pool_get_config(p), v.display) : NULL;
    return dump(eo_rating_view_to_json(eo_pool_model(p), player, &v, division, true));
}

/* The answer of a re-tune's apply: the pool as it is now and the player rows rewritten. */
static json_t *configured(const char *pool, const eo_pool_config *cfg, size_t players)
{
    json_t *o = eo_pool_to_json(pool, cfg);
    if (o != NULL && json_object_set_new(o, "players", json_integer((json_int_t)players)) != 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A round that names a matchmaking session: the caller must be allowed to report its rounds
 * (401 and 403 whether the round is new or not); an unknown session, or one of another pool,
 * refuses the round only if it is new, so a replay still gets its first answer, byte for byte
 * (docs/MATCHMAKING.md "Sessions and rounds"). */
static int session_round(eo__writer *wr, eo__wreq *w)
{
    eo_round_request q = *w->u.round; /* a shallow copy: the refusal is this call's only */
    eo_round_error if_new = {{0}, {0}};
    int rc = eo__mm_round_session(wr->mm, w->pool, q.session, w->bearer, &if_new, &w->err);
    if (rc != 0)
        return rc > 0 ? EO_EINVAL : rc;
    if (if_new.field[0] != '\0' && q.text_rc == 0) {
        q.text_rc = EO_EINVAL;
        q.text_err = if_new;
    }
    return eo_engine_round_request(wr->e, w->pool, &q, w->now, &w->resp, &w->replayed, &w->err);
}

/* The update of @p w through the engine; its answer text in w->resp when the engine writes it
 * (a round's, logged with it). 0 or the failure's code (w->err filled). */
static int update(eo__writer *wr, eo__wreq *w)
{
    int64_t players = 0;
    size_t records = 0, written = 0;
    int rc = 0;
    switch (w->kind) {
    case EO__W_ROUND:
        if (w->u.round->session != NULL)
            return session_round(wr, w);
        return eo_engine_round_request(wr->e, w->pool, w->u.round, w->now, &w->resp, &w->replayed,
                                       &w->err);
    case EO__W_SET:
        return eo_engine_set_rating(wr->e, w->pool, w->u.edit.player, w->u.edit.rating,
                                    w->u.edit.sigma, w->now, &w->err);
    case EO__W_RESET:
        return eo_engine_reset_player(wr->e, w->pool, w->u.edit.player, w->now, &w->err);
    case EO__W_POOL_CREATE:
        return eo_engine_pool_create_config(wr->e, w->pool, w->u.create, w->now, &w->err);
    case EO__W_SEASON:
        rc = eo_engine_season(wr->e, w->pool, w->u.season.name, w->u.season.f, w->u.season.s,
                              w->now, &players, &w->err);
        if (rc == 0)
            w->resp = dump(eo_season_answer_to_json(w->u.season.name, players, w->now));
        return rc;
    case EO__W_REFIT:
        rc = eo_engine_refit(wr->e, w->pool, w->u.refit.upto, w->u.refit.v, w->u.refit.n, w->now,
                             &records, &w->err);
        if (rc == 0)
            w->resp = dump(eo_refit_answer_to_json(w->u.refit.n, records, w->u.refit.upto));
        return rc;
    case EO__W_CONFIGURE:
        rc = eo_engine_pool_configure(wr->e, w->pool, w->u.configure, w->now, &written, &w->err);
        if (rc == 0)
            w->resp = dump(configured(w->pool, w->u.configure, written));
        return rc;
    case EO__W_QUALITY:
    case EO__W_MM: return 0;
    }
    return EO_EINTERNAL;
}

/* The answer of a successful @p w that the engine did not write: the player or pool as it is
 * now, or the pool's figures. */
static char *answer_of(eo__writer *wr, const eo__wreq *w)
{
    eo__pool_facts pi;
    eo_pool_quality q;
    const eo_pool *p = eo_engine_pool(wr->e, w->pool);
    switch (w->kind) {
    case EO__W_SET:
    case EO__W_RESET: return player_view(wr->e, w->pool, w->u.edit.player, w->now);
    case EO__W_POOL_CREATE:
        return eo__pool_facts_from_engine(wr->e, w->pool, &pi) == 0
                   ? dump(eo_pool_to_json(pi.name, &pi.cfg))
                   : NULL;
    case EO__W_QUALITY:
        eo_pool_get_quality(p, w->now, &q);
        return dump(eo_quality_to_json(w->pool, &q));
    default: return NULL;
    }
}

static void apply(eo__writer *wr, eo__wreq *w)
{
    memset(&w->err, 0, sizeof w->err);
    w->resp = NULL;
    w->replayed = 0;
    if (w->kind == EO__W_MM) {
        eo__mm_apply(wr->mm, w->u.mm, eo__mm_now_ms(), &w->status, &w->resp, &w->err);
        return;
    }
    w->status = w->kind == EO__W_POOL_CREATE || w->kind == EO__W_SEASON ? 201 : 200;
    int rc = 0;
    if (w->kind == EO__W_QUALITY && !eo_engine_pool(wr->e, w->pool))
        rc = eo_engine_fail(&w->err, EO_OP_READ, EO_ENOTFOUND, "pool", "no pool of that name");
    else
        rc = update(wr, w);
    if (rc == 0 && w->resp == NULL)
        w->resp = answer_of(wr, w);
    if (rc == 0 && w->resp == NULL)
        rc = EO_ENOMEM;
    if (rc != 0) {
        free(w->resp);
        w->resp = NULL;
        set_error(w, rc);
    }
}

static int collect_row(void *ctx, const char *pool, const char *id, const eo_player_row *row)
{
    eo__writer *wr = ctx;
    size_t need = wr->nset + 1;
    eo__rating_set *set = eo__grow(wr->set, &wr->capset, need, sizeof *set);
    if (set != NULL)
        wr->set = set;
    eo__rating_set *one = set ? eo__grow(wr->one, &wr->capone, need, sizeof *one) : NULL;
    if (one != NULL)
        wr->one = one;
    const char **pools = one ? eo__grow(wr->set_pool, &wr->cappool, need, sizeof *pools) : NULL;
    if (pools == NULL)
        return EO_ENOMEM;
    wr->set_pool = pools;
    wr->set_pool[wr->nset] = pool;
    wr->set[wr->nset++] = row ? (eo__rating_set){id, true, row->mu, row->sigma * row->sigma}
                              : (eo__rating_set){id, false, 0.0, 0.0};
    return 0;
}

/* Publishes the player rows the committed batch wrote to the ratings of their pools, one call
 * per pool. When they cannot all be gathered, every pool's ratings are switched off (splits
 * then read the store): a table that missed a change must not be read. */
static void publish_ratings(eo__writer *wr)
{
    wr->nset = 0;
    if (eo_engine_written_each(wr->e, collect_row, wr) != 0) {
        eo__pools_ratings_off(wr->pools);
        eo__log_msg(wr->lg, EO_LOG_ERROR, "out of memory: splits read ratings from the store");
        return;
    }
    /* A pool's entries in their order (the last write of a player is his row), in one call,
     * so that readers see all of the batch or none of it. */
    for (size_t i = 0; i < wr->nset; i++) {
        const char *pool = wr->set_pool[i];
        size_t m = 0;
        for (size_t x = i; pool != NULL && x < wr->nset; x++) {
            if (wr->set_pool[x] != NULL &&
                (wr->set_pool[x] == pool || strcmp(wr->set_pool[x], pool) == 0)) {
                wr->one[m++] = wr->set[x];
                wr->set_pool[x] = NULL;
            }
        }
        if (m > 0 && eo__pools_ratings_set(wr->pools, pool, wr->one, m) == EO_ENOMEM)
            eo__log_msg(wr->lg, EO_LOG_ERROR, "out of memory: splits read ratings from the store");
    }
}

/* Publishes the pools created by this batch, the rows it wrote (the ratings splits read) and
 * the map bias of the pools it rated rounds in (after its commit, before its answers), so
 * splits see what the rounds taught. */
static void publish(eo__writer *wr, eo__wreq **batch, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (batch[i]->kind != EO__W_ROUND || batch[i]->status != 200)
            continue;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = batch[j]->kind == EO__W_ROUND && batch[j]->status == 200 &&
                   strcmp(batch[j]->pool, batch[i]->pool) == 0;
        if (!seen) /* out of memory keeps the previous fields: a little stale, never wrong */
            (void)eo__pools_publish_bias(wr->pools, batch[i]->pool,
                                         eo_engine_pool(wr->e, batch[i]->pool));
    }
    for (size_t i = 0; i < k; i++) {
        if (batch[i]->kind == EO__W_CONFIGURE && batch[i]->status == 200) {
            const eo_pool *p = eo_engine_pool(wr->e, batch[i]->pool);
            if (p == NULL ||
                eo__pools_set_config(wr->pools, batch[i]->pool, eo_pool_get_config(p)) != 0)
                eo__log_msg(wr->lg, EO_LOG_ERROR,
                            "a re-tuned pool's parameters could not be "
                            "published: splits use the old ones");
            (void)eo__pools_publish_bias(wr->pools, batch[i]->pool, p);
        }
        if (batch[i]->kind != EO__W_POOL_CREATE || batch[i]->status != 201)
            continue;
        eo__pool_facts pi;
        if (eo__pool_facts_from_engine(wr->e, batch[i]->pool, &pi) == 0 &&
            eo__pools_put(wr->pools, &pi) == 0) /* its maps read answers its presence at once */
            (void)eo__pools_publish_bias(wr->pools, batch[i]->pool,
                                         eo_engine_pool(wr->e, batch[i]->pool));
    }
    publish_ratings(wr);
    eo__mm_publish(wr->mm);
    eo__mm_stats_publish(wr->mm);
}

/* Records the store's health after a write (under mu): @p rc 0 heals it, else @p what with
 * the store's message is the reason. */
static void set_health(eo__writer *wr, int rc, const char *what)
{
    if (rc != 0 && wr->healthy) /* the first probe a second after the failure */
        wr->probe_at = eo__mono_s() + 1.0;
    wr->healthy = rc == 0;
    if (rc != 0)
        snprintf(wr->why, sizeof wr->why, "%s: %s", what, eo_store_errmsg(eo_engine_store(wr->e)));
}

/* The writer's own small write (eo_store_probe()), with mu held; its result heals the store's
 * health or keeps the reason. */
static void probe(eo__writer *wr)
{
    pthread_mutex_unlock(&wr->mu);
    int rc = eo_store_probe(eo_engine_store(wr->e)); /* the writer's handle: this thread's */
    pthread_mutex_lock(&wr->mu);
    wr->probe_at = eo__mono_s() + 1.0;
    if (rc == 0) {
        wr->healthy = true;
        eo__log_msg(wr->lg, EO_LOG_INFO, "the store takes writes again");
    } else {
        set_health(wr, rc, "the store cannot take writes");
    }
}

/* While the store is unhealthy, a small write of its own every second tells when it recovers (a
 * disk with room again, a file system writable again): when no work comes, and also between
 * batches that write nothing (the matchmaking ticker's passes keep the writer busy). Called with
 * mu held; returns with it held. */
static void wait_or_probe(eo__writer *wr)
{
    if (wr->healthy) {
        pthread_cond_wait(&wr->cv, &wr->mu);
        return;
    }
    double left = wr->probe_at - eo__mono_s();
    if (left > 0.0) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)left;
        until.tv_nsec += (long)((left - (double)(time_t)left) * 1e9);
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        if (pthread_cond_timedwait(&wr->cv, &wr->mu, &until) != ETIMEDOUT || wr->n > 0 ||
            wr->stopping)
            return;
    }
    probe(wr);
}

bool eo__writer_healthy(eo__writer *wr, char *why, size_t cap)
{
    pthread_mutex_lock(&wr->mu);
    bool ok = wr->healthy;
    if (!ok)
        snprintf(why, cap, "%s", wr->why);
    pthread_mutex_unlock(&wr->mu);
    return ok;
}

/* Whether the batch changed the store: an update that succeeded and was not a replay (of
 * matchmaking requests, those that made something: the ticker's passes and the polls often
 * write nothing). */
static bool wrote(eo__wreq **batch, size_t k)
{
    for (size_t i = 0; i < k; i++) {
        if (batch[i]->kind == EO__W_MM) {
            if (batch[i]->status == 201)
                return true;
        } else if (batch[i]->kind != EO__W_QUALITY &&
                   batch[i]->status < 400 && !batch[i]->replayed) {
            return true;
        }
    }
    return false;
}

/* Runs one batch: applies, commits, publishes, answers. Returns the commit's code. */
static int run_batch(eo__writer *wr, eo__wreq **batch, size_t k)
{
    double t0 = eo__mono_s();
    size_t rated = 0;
    int rc = eo_engine_begin(wr->e);
    if (rc == 0) {
        for (size_t i = 0; i < k; i++)
            apply(wr, batch[i]);
        rc = eo_engine_commit(wr->e);
    }
    if (rc != 0) {
        /* Nothing of the batch is stored (the engine reloaded the touched pools). */
        for (size_t i = 0; i < k; i++) {
            free(batch[i]->resp);
            batch[i]->resp = NULL;
            eo_engine_fail(&batch[i]->err, EO_OP_ANY, EO_EIO, "",
                           "the update could not be committed; nothing was stored");
            batch[i]->status = batch[i]->err.status;
        }
        eo__logline l;
        eo__log_begin(&l, EO_LOG_ERROR, "commit failed");
        eo__log_int(&l, "batch", (long long)k);
        eo__log_str(&l, "error", eo_store_errmsg(eo_engine_store(wr->e)));
        eo__log_end(wr->lg, EO_LOG_ERROR, &l);
        (void)eo__mm_reload(wr->mm); /* its memory ran ahead of the store too */
    } else {
        for (size_t i = 0; i < k; i++)
            if (batch[i]->kind == EO__W_ROUND && batch[i]->status == 200 && !batch[i]->replayed)
                rated++;
    }
    if (rc == 0)
        publish(wr, batch, k);
    eo__metrics_commit(wr->m, eo__mono_s() - t0, k, rated, rc == 0);
    /* Only a commit that wrote something shows the store takes writes again: a batch of reads
     * (quality), of replays or of updates that all failed on their own writes nothing. */
    if (rc != 0 || wrote(batch, k)) {
        pthread_mutex_lock(&wr->mu);
        set_health(wr, rc, "the last commit failed");
        pthread_mutex_unlock(&wr->mu);
    }
    for (size_t i = 0; i < k; i++)
        batch[i]->done(batch[i], batch[i]->done_ctx);
    return rc;
}

static void *writer_main(void *arg)
{
    eo__writer *wr = arg;
    for (;;) {
        pthread_mutex_lock(&wr->mu);
        while (wr->n == 0 && !wr->stopping)
            wait_or_probe(wr);
        if (!wr->healthy && !wr->stopping && eo__mono_s() >= wr->probe_at)
            probe(wr);
        if (wr->n == 0) {
            pthread_mutex_unlock(&wr->mu);
            break;
        }
        size_t k = 0;
        while (wr->head && k < wr->batch_max) {
            wr->batch[k++] = wr->head;
            wr->head = wr->head->next;
        }
        if (!wr->head)
            wr->tail = NULL;
        wr->n -= k;
        atomic_store_explicit(&wr->m->queue_depth, wr->n, memory_order_relaxed);
        bool drain = wr->stopping;
        pthread_mutex_unlock(&wr->mu);
        /* A failed commit answers its batch 500 and the next batch starts afresh; only the
         * final drain's failure is the stop's (what was queued at the stop is not stored). */
        int rc = run_batch(wr, wr->batch, k);
        if (drain && rc != 0 && wr->drain_rc == 0)
            wr->drain_rc = rc;
    }
    return NULL;
}

int eo__writer_start(eo_engine *e, eo__mm *mm, eo__pools *pools, eo__metrics *m,
                     const eo__logger *lg, size_t queue_max, size_t batch_max, eo__writer **out)
{
    eo__writer *wr = calloc(1, sizeof *wr);
    if (!wr || batch_max == 0 || !(wr->batch = calloc(batch_max, sizeof *wr->batch))) {
        if (wr)
            free(wr->batch);
        free(wr);
        eo_engine_close(e);
        return EO_ENOMEM;
    }
    wr->e = e;
    wr->mm = mm;
    eo_engine_track_written(e, true); /* publish_ratings() reads it after each commit */
    eo_engine_isolate(e, true);       /* one request's failure is its own, not its batch's */
    wr->pools = pools;
    wr->m = m;
    wr->lg = lg;
    wr->queue_max = queue_max;
    wr->batch_max = batch_max;
    wr->accepting = true;
    wr->healthy = !eo_store_readonly(eo_engine_store(e));
    if (!wr->healthy)
        snprintf(wr->why, sizeof wr->why,
                 "the database file was read-only when the store "
                 "opened; make it (and its -wal and -shm files) writable and restart");
    pthread_mutex_init(&wr->mu, NULL);
    pthread_cond_init(&wr->cv, NULL);
    if (pthread_create(&wr->th, NULL, writer_main, wr) != 0) {
        pthread_cond_destroy(&wr->cv);
        pthread_mutex_destroy(&wr->mu);
        free(wr->batch);
        free(wr);
        eo_engine_close(e);
        return EO_ENOMEM;
    }
    *out = wr;
    return 0;
}

int eo__writer_submit(eo__writer *wr, eo__wreq *w)
{
    int rc = 0;
    w->next = NULL;
    pthread_mutex_lock(&wr->mu);
    if (!wr->accepting || wr->n >= wr->queue_max) {
        rc = EO_EBUSY;
    } else {
        if (wr->tail)
            wr->tail->next = w;
        else
            wr->head = w;
        wr->tail = w;
        wr->n++;
        atomic_store_explicit(&wr->m->queue_depth, wr->n, memory_order_relaxed);
        pthread_cond_signal(&wr->cv);
    }
    pthread_mutex_unlock(&wr->mu);
    return rc;
}

bool eo__writer_running(eo__writer *wr)
{
    pthread_mutex_lock(&wr->mu);
    bool r = wr->accepting;
    pthread_mutex_unlock(&wr->mu);
    return r;
}

int eo__writer_stop(eo__writer *wr)
{
    if (!wr)
        return 0;
    pthread_mutex_lock(&wr->mu);
    wr->accepting = false;
    wr->stopping = true;
    pthread_cond_signal(&wr->cv);
    pthread_mutex_unlock(&wr->mu);
    pthread_join(wr->th, NULL);
    int rc = wr->drain_rc; /* the thread has ended: no lock needed */
    eo_engine_close(wr->e);
    pthread_cond_destroy(&wr->cv);
    pthread_mutex_destroy(&wr->mu);
    free(wr->batch);
    free(wr->set);
    free(wr->one);
    free(wr->set_pool);
    free(wr);
    return rc;
}
