/* Background refits (POST /v1/pools/{pool}/refit). A job runs on its own thread: it reads the
 * pool's log through its own read-only store handle inside one read transaction (a consistent
 * WAL snapshot up to log position P), fits every player's skill (eo_fit), and hands the writer
 * one request to log and apply the fitted states (eo_engine_refit()). Neither the writer nor the
 * HTTP threads wait for the fit; the writer's part is one transaction like any admin edit, so
 * the pool's state stays the fold of its log. At most the service's refit_max jobs run at once,
 * below the HTTP threads' priority. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "evenodds/eo_codec.h"
#include "service/service.h"

#define REFIT_NICE 10

typedef struct refit_job {
    eo__job_head h; /* first: the table's (jobs.c) */
    struct eo_service *svc;
    eo__jobs *rs;
    int64_t pool_id;
    eo_pool_config cfg;
    eo_fit_config fc;
    /* under rs->mu */
    const char *phase; /* "reading", "fitting", "applying" */
    eo_fit_sweep_stats st;
    size_t rounds, players, records;
    int64_t upto;
    double seconds;
    char error[320]; /* room for every message below in full */
    /* the writer's answer, under rs->mu */
    bool answered;
} refit_job;

static void fail(refit_job *j, const char *fmt, const char *detail)
{
    pthread_mutex_lock(&j->rs->mu);
    j->h.state = EO__JOB_FAILED;
    snprintf(j->error, sizeof j->error, fmt, detail ? detail : "");
    j->seconds = eo__mono_s() - j->h.t0;
    pthread_mutex_unlock(&j->rs->mu);
}

typedef struct read_ctx {
    refit_job *j;
    eo_fit *f;
    int64_t upto;
    size_t rounds;
    char error[200];
} read_ctx;

/* Rounds go into the fit; every entry moves the snapshot's position. Earlier refits are not
 * data: the fit is of the rounds alone. */
static int read_one(void *ctx, const eo_log_entry *le)
{
    read_ctx *c = ctx;
    if (atomic_load(&c->j->rs->stop))
        return EO_EBUSY;
    c->upto = le->seq;
    if (le->kind != EO_LOG_ROUND)
        return 0;
    eo_round r;
    eo_round_error err;
    int rc = eo_round_from_text(le->body, strlen(le->body), &r, &err);
    if (rc == 0) {
        rc = eo_fit_add_round(c->f, &r);
        eo_round_free(&r);
    }
    if (rc != 0) {
        snprintf(c->error, sizeof c->error, "log entry %lld: %s", (long long)le->seq,
                 eo_strerror(rc));
        return rc;
    }
    c->rounds++;
    return 0;
}

static void writer_done(eo__wreq *w, void *ctx)
{
    refit_job *j = ctx;
    (void)w;
    pthread_mutex_lock(&j->rs->mu);
    j->answered = true;
    pthread_cond_broadcast(&j->rs->cv);
    pthread_mutex_unlock(&j->rs->mu);
}

/* Hands the values to the writer and waits for its commit. */
static int apply(refit_job *j, const eo_refit_value *v, size_t n, int64_t upto)
{
    eo__wreq w;
    memset(&w, 0, sizeof w);
    w.kind = EO__W_REFIT;
    snprintf(w.pool, sizeof w.pool, "%s", j->h.pool);
    w.u.refit.v = v;
    w.u.refit.n = n;
    w.u.refit.upto = upto;
    w.now = (int64_t)time(NULL);
    w.done = writer_done;
    w.done_ctx = j;
    for (;;) {
        int rc = eo__writer_submit(j->svc->writer, &w);
        if (rc == 0)
            break;
        if (!eo__writer_running(j->svc->writer)) {
            fail(j, "the service is stopping%s", NULL);
            return EO_EBUSY;
        }
        /* The queue is full: the fit's result waits its turn rather than failing. */
        struct timespec ts = {0, 20 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    pthread_mutex_lock(&j->rs->mu);
    while (!j->answered)
        pthread_cond_wait(&j->rs->cv, &j->rs->mu);
    pthread_mutex_unlock(&j->rs->mu);
    if (w.status >= 400 || w.resp == NULL) {
        char msg[260];
        snprintf(msg, sizeof msg, "%s: %s", w.err.code[0] ? w.err.code : "internal",
                 w.err.message);
        fail(j, "the writer refused the result: %s", msg);
        free(w.resp);
        return EO_EIO;
    }
    json_t *o = json_loads(w.resp, 0, NULL);
    pthread_mutex_lock(&j->rs->mu);
    j->records = (size_t)json_integer_value(json_object_get(o, "records"));
    pthread_mutex_unlock(&j->rs->mu);
    json_decref(o);
    free(w.resp);
    return 0;
}

static void *job_main(void *arg)
{
    refit_job *j = arg;
    eo_fit *f = NULL;
    /* Below the HTTP threads and the writer, as the compute pool (docs/SERVICE.md "Heavy
     * requests"); per thread on Linux. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), REFIT_NICE);
    if (eo_fit_create(&j->cfg, &j->fc, &f) != 0) {
        fail(j, "the fit could not be created%s", NULL);
        return NULL;
    }
    read_ctx c = {.j = j, .f = f};
    if (eo__jobs_read_log(j->svc->db, j->pool_id, NULL, read_one, &c, c.error,
                          sizeof c.error) != 0) {
        fail(j, "reading the log: %s", c.error);
        eo_fit_destroy(f);
        return NULL;
    }
    pthread_mutex_lock(&j->rs->mu);
    j->phase = "fitting";
    j->rounds = c.rounds;
    j->upto = c.upto;
    j->players = eo_fit_player_count(f);
    pthread_mutex_unlock(&j->rs->mu);
    if (c.rounds == 0) {
        fail(j, "the pool has no rounds to fit%s", NULL);
        eo_fit_destroy(f);
        return NULL;
    }
    /* eo_fit_run() sweep by sweep, so the progress shows and a stop is heard between sweeps. */
    eo_fit_sweep_stats st;
    memset(&st, 0, sizeof st);
    int rc = 0;
    while (st.sweep < j->fc.max_sweeps && !st.converged) {
        if (atomic_load(&j->rs->stop)) {
            rc = EO_EBUSY;
            break;
        }
        rc = eo_fit_sweep(f, &st);
        if (rc != 0)
            break;
        pthread_mutex_lock(&j->rs->mu);
        j->st = st;
        pthread_mutex_unlock(&j->rs->mu);
    }
    if (rc != 0) {
        fail(j, "%s", rc == EO_EBUSY ? "the service is stopping" : eo_strerror(rc));
        eo_fit_destroy(f);
        return NULL;
    }
    eo_refit_value *v = NULL;
    size_t n = 0;
    rc = eo_refit_values(f, &j->cfg, &v, &n);
    eo_fit_destroy(f);
    if (rc != 0) {
        fail(j, "%s", eo_strerror(rc));
        return NULL;
    }
    pthread_mutex_lock(&j->rs->mu);
    j->phase = "applying";
    pthread_mutex_unlock(&j->rs->mu);
    rc = apply(j, v, n, c.upto);
    free(v);
    if (rc != 0)
        return NULL;
    pthread_mutex_lock(&j->rs->mu);
    j->h.state = EO__JOB_DONE;
    j->seconds = eo__mono_s() - j->h.t0;
    pthread_mutex_unlock(&j->rs->mu);
    eo__logline l;
    eo__log_begin(&l, EO_LOG_INFO, "refit applied");
    eo__log_str(&l, "pool", j->h.pool);
    eo__log_int(&l, "job", (long long)j->h.id);
    eo__log_int(&l, "players", (long long)n);
    eo__log_int(&l, "upto", (long long)c.upto);
    eo__log_end(&j->svc->log, EO_LOG_INFO, &l);
    return NULL;
}

int eo__refit_start(struct eo_service *svc, const eo__pool_facts *pi, const eo_fit_config *fc,
                    int64_t *id)
{
    refit_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return EO_ENOMEM;
    j->svc = svc;
    j->rs = &svc->refits;
    snprintf(j->h.pool, sizeof j->h.pool, "%s", pi->name);
    j->pool_id = pi->id;
    j->cfg = pi->cfg;
    j->fc = *fc;
    j->phase = "reading";
    int rc = eo__jobs_start(&svc->refits, &j->h, svc->cfg.refit_max, job_main);
    if (rc != 0) {
        free(j);
        return rc;
    }
    *id = j->h.id;
    return 0;
}

json_t *eo__refit_status(eo__jobs *rs, const char *pool)
{
    json_t *o = NULL;
    pthread_mutex_lock(&rs->mu);
    const refit_job *j = (const refit_job *)eo__jobs_find(rs, pool);
    if (j != NULL) {
        eo_refit_job_view v = {
            .id = j->h.id,
            .pool = j->h.pool,
            .state = j->h.state == EO__JOB_RUNNING ? EO_REFIT_RUNNING
                     : j->h.state == EO__JOB_DONE  ? EO_REFIT_DONE
                                                   : EO_REFIT_FAILED,
            .phase = j->phase,
            .st = j->st,
            .max_sweeps = j->fc.max_sweeps,
            .players = j->players,
            .rounds = j->rounds,
            .records = j->records,
            .upto = j->upto,
            .seconds = j->h.state == EO__JOB_RUNNING ? eo__mono_s() - j->h.t0 : j->seconds,
            .error = j->error,
        };
        o = eo_refit_job_to_json(&v);
    }
    pthread_mutex_unlock(&rs->mu);
    return o;
}
