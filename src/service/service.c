/* Start and graceful stop of the whole service, in dependency order: store and engine, pool
 * table, writer, HTTP daemon; stopped in reverse so nothing in flight is lost. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "evenodds/eo_split.h"
#include "service/mm.h"
#include "service/service.h"

static char *dupstr(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* A log written before the models' ranges existed may hold an admin edit outside them: it is
 * folded as logged (the service starts, rows and memory agree), and said once here, since
 * such a player's rounds are refused (422) until an edit moves the player back
 * (docs/SERVICE.md). */
static void warn_outside(struct eo_service *svc, const char *name, const eo_pool *pool)
{
    const char *first = NULL;
    size_t n = pool ? eo_pool_outside_range(pool, (int64_t)time(NULL), &first) : 0;
    if (n == 0)
        return;
    eo__logline l;
    eo__log_begin(&l, EO_LOG_WARN,
                  "players outside the model's range; their rounds answer 422 until an admin "
                  "edit or reset");
    eo__log_str(&l, "pool", name);
    eo__log_int(&l, "players", (long long)n);
    eo__log_str(&l, "first", first);
    eo__log_end(&svc->log, EO_LOG_WARN, &l);
}

static int publish_all(struct eo_service *svc, eo_engine *e, char *err, size_t errlen)
{
    eo_pool_row *rows = NULL;
    size_t n = 0;
    int rc = eo_store_pool_list(eo_engine_store(e), &rows, &n);
    if (rc != 0) {
        snprintf(err, errlen, "cannot list pools: %s", eo_strerror(rc));
        return rc;
    }
    for (size_t i = 0; i < n; i++) {
        eo__pool_facts pi;
        if (rc == 0 && (rc = eo__pool_facts_from_engine(e, rows[i].name, &pi)) == 0)
            rc = eo__pools_put(&svc->pools, &pi);
        if (rc == 0) { /* the ratings splits read: the player rows */
            int lrc = eo__pools_ratings_load(&svc->pools, rows[i].name, eo_engine_store(e),
                                             pi.id);
            if (lrc != 0) { /* the pool's ratings are off: its splits read the store */
                eo__logline l;
                eo__log_begin(&l, EO_LOG_WARN, "split ratings off; splits read the store");
                eo__log_str(&l, "pool", rows[i].name);
                eo__log_str(&l, "error", eo_strerror(lrc));
                eo__log_end(&svc->log, EO_LOG_WARN, &l);
            }
        }
        if (rc == 0) /* the bias the fold of the log gave */
            rc = eo__pools_publish_bias(&svc->pools, rows[i].name,
                                        eo_engine_pool(e, rows[i].name));
        if (rc == 0)
            warn_outside(svc, rows[i].name, eo_engine_pool(e, rows[i].name));
        if (rc != 0 && !err[0])
            snprintf(err, errlen, "pool '%s': %s", rows[i].name, eo_strerror(rc));
        eo_pool_row_free(&rows[i]);
    }
    free(rows);
    return rc;
}

static int open_engine(struct eo_service *svc, eo_engine **out, char *err, size_t errlen)
{
    eo_store *st = NULL;
    eo_engine_error eerr;
    char serr[200] = "";
    int rc = eo_store_open(svc->db, svc->cfg.store_flags, &st, serr, sizeof serr);
    if (rc != 0) {
        snprintf(err, errlen, "cannot open the store %s: %s", svc->db, serr);
        return rc;
    }
    memset(&eerr, 0, sizeof eerr);
    rc = eo_engine_open(st, out, &eerr);
    if (rc != 0) {
        snprintf(err, errlen, "cannot load the store %s: %s", svc->db, eerr.message);
        return rc;
    }
    err[0] = '\0';
    rc = publish_all(svc, *out, err, errlen);
    if (rc == 0 && svc->cfg.default_pool && !eo_engine_pool(*out, svc->cfg.default_pool)) {
        memset(&eerr, 0, sizeof eerr);
        eo_pool_config cfg; /* a new pool's defaults (docs/MODELS.md, "Defaults of new pools") */
        eo_pool_config_new(EO_MODEL_SYNELO, &cfg);
        rc = eo_engine_pool_create_config(*out, svc->cfg.default_pool, &cfg, (int64_t)time(NULL),
                                          &eerr);
        if (rc != 0) {
            snprintf(err, errlen, "cannot create the pool '%s': %s", svc->cfg.default_pool,
                     eerr.message);
        } else {
            eo__pool_facts pi;
            if ((rc = eo__pool_facts_from_engine(*out, svc->cfg.default_pool, &pi)) == 0)
                rc = eo__pools_put(&svc->pools, &pi);
            eo__logline l;
            eo__log_begin(&l, EO_LOG_INFO, "created the default pool");
            eo__log_str(&l, "pool", svc->cfg.default_pool);
            eo__log_end(&svc->log, EO_LOG_INFO, &l);
        }
    }
    if (rc == 0) {
        eo__mm_config mc = {(int64_t)svc->cfg.mm_heartbeat_ms,
                            (int64_t)svc->cfg.mm_heartbeat_grace_ms,
                            (int64_t)svc->cfg.mm_keep_s * 1000};
        char merr[256] = "";
        if ((rc = eo__mm_open(&mc, *out, &svc->log, merr, sizeof merr, &svc->mm)) != 0)
            snprintf(err, errlen, "cannot load the matchmaking state of %s: %s", svc->db, merr);
    }
    if (rc != 0) {
        eo_engine_close(*out);
        *out = NULL;
    }
    return rc;
}

static void destroy(struct eo_service *svc)
{
    if (svc->reader_key_ok)
        pthread_key_delete(svc->reader_key);
    if (svc->req_key_ok) {
        /* Blocks cached by this thread (if MHD completed requests on it while stopping). */
        eo__req_cache_free(pthread_getspecific(svc->req_key));
        pthread_setspecific(svc->req_key, NULL);
        pthread_key_delete(svc->req_key);
    }
    if (svc->split_key_ok) {
        /* The HTTP threads freed theirs when they ended; this thread's, if it solved any. */
        eo_split_ws_free(pthread_getspecific(svc->split_key));
        pthread_setspecific(svc->split_key, NULL);
        pthread_key_delete(svc->split_key);
    }
    eo__jobs_destroy(&svc->refits);
    eo__tunes_destroy(&svc->tunes);
    eo__mm_close(svc->mm); /* after the writer, which applied its requests */
    eo__pools_destroy(&svc->pools);
    eo__auth_clear(&svc->auth);
    free(svc->db);
    free(svc->listen);
    free(svc);
}

static void close_reader(void *p)
{
    eo_store_close(p);
}

static void free_split_ws(void *p)
{
    eo_split_ws_free(p);
}

static int start_compute(struct eo_service *svc, char *err, size_t errlen)
{
    unsigned threads = svc->cfg.compute_threads;
    if (threads == 0) {
        long nc = sysconf(_SC_NPROCESSORS_ONLN);
        threads = nc > 0 ? (unsigned)nc : 1;
    }
    int rc = eo__compute_start(threads, svc->cfg.compute_queue, &svc->metrics, &svc->compute);
    if (rc != 0)
        snprintf(err, errlen, "cannot start the compute pool: %s", eo_strerror(rc));
    return rc;
}

/* The service's state before anything runs: settings, keys, metrics, the per-thread keys.
 * NULL when out of memory. */
static struct eo_service *make_service(const eo_service_config *cfg, const eo_service_keys *keys)
{
    struct eo_service *svc = calloc(1, sizeof *svc);
    if (!svc || eo__pools_init(&svc->pools) != 0) {
        free(svc);
        return NULL;
    }
    svc->cfg = *cfg;
    if (svc->cfg.batch_max == 0)
        svc->cfg.batch_max = 1;
    svc->db = dupstr(cfg->db);
    svc->listen = dupstr(cfg->listen);
    svc->log.f = cfg->log;
    svc->log.level = cfg->log_level;
    eo__auth_init(&svc->auth, keys);
    eo__metrics_init(&svc->metrics);
    svc->metrics.inflight = &svc->inflight;
    svc->metrics.body_held = &svc->body_held;
    atomic_init(&svc->draining, false);
    atomic_init(&svc->inflight, 0);
    atomic_init(&svc->closing, false);
    atomic_init(&svc->parked, 0);
    if (!svc->db || !svc->listen ||
        !(svc->reader_key_ok = pthread_key_create(&svc->reader_key, close_reader) == 0) ||
        !(svc->req_key_ok = pthread_key_create(&svc->req_key, eo__req_cache_free) == 0) ||
        !(svc->split_key_ok = pthread_key_create(&svc->split_key, free_split_ws) == 0) ||
        eo__jobs_init(&svc->refits) != 0 || eo__tunes_init(&svc->tunes) != 0) {
        destroy(svc);
        return NULL;
    }
    return svc;
}

/* The writer over @p e (taken), the compute pool and the HTTP daemon. */
static int start_threads(struct eo_service *svc, eo_engine *e, char *err, size_t errlen)
{
    int rc = eo__writer_start(e, svc->mm, &svc->pools, &svc->metrics, &svc->log, svc->cfg.queue_max,
                              svc->cfg.batch_max, &svc->writer);
    if (rc != 0) {
        snprintf(err, errlen, "cannot start the writer: %s", eo_strerror(rc));
        return rc;
    }
    rc = start_compute(svc, err, errlen);
    if (rc == 0 && (rc = eo__tunes_schedule(svc)) != 0)
        snprintf(err, errlen, "cannot start the tune schedule: %s", eo_strerror(rc));
    if (rc == 0 && (rc = eo__mm_ticker_start(svc, &svc->ticker)) != 0) {
        snprintf(err, errlen, "cannot start the matchmaking ticker: %s", eo_strerror(rc));
        eo__tunes_stop(&svc->tunes);
    }
    if (rc == 0 && (rc = eo__http_start(svc, err, errlen)) != 0) {
        eo__mm_ticker_stop(svc->ticker);
        eo__tunes_stop(&svc->tunes);
    }
    if (rc != 0 && svc->compute != NULL)
        eo__compute_stop(svc->compute);
    if (rc != 0)
        eo__writer_stop(svc->writer);
    return rc;
}

int eo_service_start(const eo_service_config *cfg, const eo_service_keys *keys,
                     eo_service **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!cfg || !cfg->db || !cfg->listen || !keys) {
        snprintf(err, errlen, "the service needs a database and a listen address");
        return EO_EINVAL;
    }
    if (cfg->body_budget < cfg->body_max) {
        snprintf(err, errlen, "--body-budget (%zu bytes) must hold at least one body of "
                 "--max-body (%zu bytes)", cfg->body_budget, cfg->body_max);
        return EO_EINVAL;
    }
    struct eo_service *svc = make_service(cfg, keys);
    if (!svc) {
        snprintf(err, errlen, "out of memory");
        return EO_ENOMEM;
    }
    eo_engine *e = NULL;
    bool existed = access(svc->db, F_OK) == 0;
    int rc = open_engine(svc, &e, err, errlen);
    if (rc != 0 && !existed) /* a start that failed leaves no new, empty database behind */
        eo_store_remove(svc->db);
    if (rc == 0)
        rc = start_threads(svc, e, err, errlen);
    if (rc != 0) {
        destroy(svc);
        return rc;
    }
    eo__logline l;
    eo__log_begin(&l, EO_LOG_INFO, "started");
    eo__log_str(&l, "db", svc->db);
    eo__log_int(&l, "port", svc->port);
    eo__log_int(&l, "max_conns", svc->cfg.max_connections);
    eo__log_int(&l, "max_conns_per_address", svc->cfg.max_per_address);
    eo__log_end(&svc->log, EO_LOG_INFO, &l);
    *out = svc;
    return 0;
}

uint16_t eo_service_port(const eo_service *svc)
{
    return svc ? svc->port : 0;
}

int eo_service_stop(eo_service *svc)
{
    if (!svc)
        return 0;
    eo__log_msg(&svc->log, EO_LOG_INFO, "draining");
    eo__http_stop(svc); /* waits for the requests parked at the compute pool or the writer */
    eo__compute_stop(svc->compute);
    /* Refit jobs hand their result to the writer: they end before it does. Tune jobs and the
     * schedule read only; they end here too. */
    eo__jobs_stop(&svc->refits);
    eo__tunes_stop(&svc->tunes);
    eo__mm_ticker_stop(svc->ticker); /* its passes go through the writer too */
    svc->ticker = NULL;
    int rc = eo__writer_stop(svc->writer);
    svc->writer = NULL;
    eo__logline l;
    eo__log_begin(&l, rc == 0 ? EO_LOG_INFO : EO_LOG_ERROR, "stopped");
    eo__log_int(&l, "clean", rc == 0);
    eo__log_end(&svc->log, rc == 0 ? EO_LOG_INFO : EO_LOG_ERROR, &l);
    destroy(svc);
    return rc;
}
