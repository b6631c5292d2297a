/* Background tunes of a pool (POST/GET /v1/pools/{pool}/tune) and their apply (POST
 * /v1/pools/{pool}/tune/apply); docs/SERVICE.md "Tuning a pool". A job runs on its own thread
 * below the HTTP threads' priority: it reads the last rounds of the pool's log through its own
 * read-only store handle inside one read transaction, and searches the parameters with the
 * core's eo_tune, one fold at a time (a stop is heard between folds). One job runs at a time
 * in the whole service. Nothing changes until an admin asks for the apply: then the writer
 * replaces the pool's stored parameters and folds its log again under them, in one
 * transaction (eo_engine_pool_configure()). The schedule (serve --tune-every) starts jobs,
 * never applies. */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "core/buf.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_tune.h"
#include "service/service.h"

#define TUNE_NICE 10

typedef struct tune_job {
    eo__job_head h; /* first: the table's (jobs.c) */
    struct eo_service *svc;
    eo__jobs *ts;
    int64_t pool_id;
    eo_pool_config start;
    eo_tune_request req; /* the job's knob names live here (the result points at them) */
    bool scheduled;
    /* under ts->mu */
    const char *phase;
    eo_tune_progress prog;
    size_t rounds;
    int64_t upto;
    double seconds;
    char error[320];
    eo_tune_result res;
} tune_job;

/* The search's configuration from a request; knob names point into @p req. */
static void tune_config(const eo_tune_request *req, eo_tune_config *tc)
{
    eo_tune_config_default(tc);
    tc->budget = req->budget;
    tc->brier = req->brier;
    tc->gate = req->gate;
    tc->nknobs = req->nknobs;
    for (size_t i = 0; i < req->nknobs; i++)
        tc->knobs[i] = req->knobs[i];
}

static void fail(tune_job *j, const char *what, const char *detail)
{
    pthread_mutex_lock(&j->ts->mu);
    j->h.state = EO__JOB_FAILED;
    snprintf(j->error, sizeof j->error, "%s%s%s", what, detail ? ": " : "", detail ? detail : "");
    j->seconds = eo__mono_s() - j->h.t0;
    pthread_mutex_unlock(&j->ts->mu);
}

/* ---- reading the log ---- */

typedef struct read_ctx {
    tune_job *j;
    int64_t total, seen; /* the log's rounds, and those read so far */
    eo_round *r;
    size_t n, cap;
    int64_t upto;
    char error[200];
} read_ctx;

static void free_rounds(read_ctx *c)
{
    for (size_t i = 0; i < c->n; i++)
        eo_round_free(&c->r[i]);
    free(c->r);
    c->r = NULL;
    c->n = c->cap = 0;
}

/* Rounds only: the tune scores predictions of rounds; admin edits, seasons and refit records
 * are the apply's fold's business. */
static int read_one(void *ctx, const eo_log_entry *le)
{
    read_ctx *c = ctx;
    if (atomic_load(&c->j->ts->stop))
        return EO_EBUSY;
    c->upto = le->seq;
    if (le->kind != EO_LOG_ROUND)
        return 0;
    if (c->seen++ < c->total - (int64_t)c->j->req.max_rounds)
        return 0; /* before the last max_rounds */
    eo_round *nr = eo__grow(c->r, &c->cap, c->n + 1, sizeof *nr);
    if (nr == NULL)
        return EO_ENOMEM;
    c->r = nr;
    eo_round_error err;
    int rc = eo_round_from_text(le->body, strlen(le->body), &c->r[c->n], &err);
    if (rc != 0) {
        snprintf(c->error, sizeof c->error, "log entry %lld: %s", (long long)le->seq,
                 eo_strerror(rc));
        return rc;
    }
    c->n++;
    return 0;
}

/* ---- the job ---- */

/* The search, fold by fold, its progress published. 0 with j->res, or a code after fail(). */
static int run_search(tune_job *j, const read_ctx *c)
{
    eo_tune_config tc;
    tune_config(&j->req, &tc);
    size_t train = (size_t)floor(j->req.burn_in * (double)c->n);
    size_t held = (size_t)floor(j->req.eval_from * (double)c->n);
    eo_tune *t = NULL;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_tune_create(&j->start, &tc, c->r, c->n, train, held, &t, &err);
    if (rc != 0) {
        fail(j, "the search could not start", rc == EO_EINVAL ? err.message : eo_strerror(rc));
        return rc;
    }
    eo_tune_progress p;
    memset(&p, 0, sizeof p);
    while (rc == 0 && !p.done) {
        if (atomic_load(&j->ts->stop)) {
            rc = EO_EBUSY;
            break;
        }
        rc = eo_tune_step(t, &p);
        pthread_mutex_lock(&j->ts->mu);
        j->prog = p;
        pthread_mutex_unlock(&j->ts->mu);
    }
    eo_tune_result res;
    if (rc == 0)
        rc = eo_tune_get(t, &res);
    eo_tune_destroy(t);
    if (rc != 0) {
        fail(j, "the search failed", rc == EO_EBUSY ? "the service is stopping" : eo_strerror(rc));
        return rc;
    }
    pthread_mutex_lock(&j->ts->mu);
    j->res = res;
    j->h.state = EO__JOB_DONE;
    j->seconds = eo__mono_s() - j->h.t0;
    pthread_mutex_unlock(&j->ts->mu);
    return 0;
}

static void *job_main(void *arg)
{
    tune_job *j = arg;
    /* Below the HTTP threads and the writer, as the compute pool (docs/SERVICE.md "Heavy
     * requests"); per thread on Linux. */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), TUNE_NICE);
    read_ctx c;
    memset(&c, 0, sizeof c);
    c.j = j;
    if (eo__jobs_read_log(j->svc->db, j->pool_id, &c.total, read_one, &c, c.error,
                          sizeof c.error) != 0) {
        fail(j, "reading the log", c.error);
        free_rounds(&c);
        return NULL;
    }
    pthread_mutex_lock(&j->ts->mu);
    j->phase = "tuning";
    j->rounds = c.n;
    j->upto = c.upto;
    pthread_mutex_unlock(&j->ts->mu);
    int rc = run_search(j, &c);
    free_rounds(&c);
    if (rc != 0)
        return NULL;
    eo__logline l;
    eo__log_begin(&l, EO_LOG_INFO, "tune done");
    eo__log_str(&l, "pool", j->h.pool);
    eo__log_int(&l, "job", (long long)j->h.id);
    eo__log_int(&l, "rounds", (long long)c.n);
    eo__log_int(&l, "folds", (long long)j->res.folds);
    eo__log_str(&l, "chosen", j->res.chose_best ? "best" : "start");
    eo__log_end(&j->svc->log, EO_LOG_INFO, &l);
    return NULL;
}

/* Starts a job of pool @p pi with @p req: eo__tune_start()'s answers. */
static int start_job(struct eo_service *svc, const eo__pool_facts *pi, const eo_tune_request *req,
                     bool scheduled, int64_t *id)
{
    tune_job *j = calloc(1, sizeof *j);
    if (j == NULL)
        return EO_ENOMEM;
    j->svc = svc;
    j->ts = &svc->tunes.jobs;
    snprintf(j->h.pool, sizeof j->h.pool, "%s", pi->name);
    j->pool_id = pi->id;
    j->start = pi->cfg;
    j->req = *req;
    j->scheduled = scheduled;
    j->phase = "reading";
    int rc = eo__jobs_start(j->ts, &j->h, 1, job_main);
    if (rc != 0) {
        free(j);
        return rc;
    }
    *id = j->h.id;
    return 0;
}

/* ---- the schedule ---- */

/* Whether @p pool is due for a scheduled tune at @p now: none of its jobs started in the last
 * period (the service's start, at @p t0, counts as one). Under ts->mu. */
static bool due(eo__jobs *ts, const char *pool, double now, double every, double t0)
{
    const eo__job_head *j = eo__jobs_find(ts, pool);
    return now - (j != NULL ? j->t0 : t0) >= every;
}

static void *sched_main(void *arg)
{
    struct eo_service *svc = arg;
    eo__jobs *ts = &svc->tunes.jobs;
    double every = (double)svc->cfg.tune_every, t0 = eo__mono_s();
    eo_tune_request req;
    (void)eo_tune_request_from_json(NULL, &req, NULL); /* the defaults */
    pthread_mutex_lock(&ts->mu);
    while (!atomic_load(&ts->stop)) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        if (pthread_cond_timedwait(&ts->cv, &ts->mu, &until) != ETIMEDOUT)
            continue;
        eo__pool_facts *pools = NULL;
        size_t n = 0;
        pthread_mutex_unlock(&ts->mu);
        (void)eo__pools_list(&svc->pools, &pools, &n);
        pthread_mutex_lock(&ts->mu);
        double now = eo__mono_s();
        for (size_t i = 0; i < n; i++) {
            if (!due(ts, pools[i].name, now, every, t0))
                continue;
            int64_t id;
            pthread_mutex_unlock(&ts->mu);
            int rc = start_job(svc, &pools[i], &req, true, &id); /* busy: the next second */
            pthread_mutex_lock(&ts->mu);
            if (rc == 0 || rc == EO_ELIMIT)
                break;
        }
        free(pools);
    }
    pthread_mutex_unlock(&ts->mu);
    return NULL;
}

/* ---- the table ---- */

int eo__tunes_init(eo__tunes *t)
{
    t->sched_started = false;
    return eo__jobs_init(&t->jobs);
}

int eo__tunes_schedule(struct eo_service *svc)
{
    eo__tunes *t = &svc->tunes;
    if (svc->cfg.tune_every == 0)
        return 0;
    if (pthread_create(&t->sched, NULL, sched_main, svc) != 0)
        return EO_ENOMEM;
    t->sched_started = true;
    return 0;
}

void eo__tunes_stop(eo__tunes *t)
{
    /* The stop reaches the schedule too (its sleep is on the table's cv); a job it starts
     * meanwhile is refused (EO_EBUSY). */
    eo__jobs_stop(&t->jobs);
    if (t->sched_started)
        pthread_join(t->sched, NULL);
    t->sched_started = false;
}

void eo__tunes_destroy(eo__tunes *t)
{
    eo__tunes_stop(t);
    eo__jobs_destroy(&t->jobs);
}

/* ---- what the handlers ask (tune_routes.c) ---- */

int eo__tune_start(struct eo_service *svc, const eo__pool_facts *pi, const eo_tune_request *req,
                   int64_t *id)
{
    return start_job(svc, pi, req, false, id);
}

bool eo__pool_config_same(const eo_pool_config *a, const eo_pool_config *b)
{
    json_t *x = eo_pool_config_to_json(a), *y = eo_pool_config_to_json(b);
    bool same = x != NULL && y != NULL && a->model.model == b->model.model && json_equal(x, y);
    json_decref(x);
    json_decref(y);
    return same;
}

/* The job of @p pool, under the table's mu; NULL when it never had one. */
static const tune_job *job_of(eo__tunes *t, const char *pool)
{
    return (const tune_job *)eo__jobs_find(&t->jobs, pool);
}

json_t *eo__tune_status(eo__tunes *t, const eo__pool_facts *pi)
{
    json_t *o = NULL;
    pthread_mutex_lock(&t->jobs.mu);
    const tune_job *j = job_of(t, pi->name);
    if (j != NULL) {
        bool done = j->h.state == EO__JOB_DONE;
        const eo_pool_config *chosen = done ? eo_tune_chosen(&j->res) : NULL;
        eo_tune_job_view v = {
            .id = j->h.id,
            .pool = j->h.pool,
            .state = done                            ? EO_TUNE_DONE
                     : j->h.state == EO__JOB_RUNNING ? EO_TUNE_RUNNING
                                                     : EO_TUNE_FAILED,
            .scheduled = j->scheduled,
            .phase = j->phase,
            .folds = done ? j->res.folds : j->prog.folds,
            .budget = j->req.budget,
            .best = j->prog.best,
            .rounds = j->rounds,
            .upto = j->upto,
            .seconds = j->h.state == EO__JOB_RUNNING ? eo__mono_s() - j->h.t0 : j->seconds,
            .error = j->error,
            .result = done ? &j->res : NULL,
            .brier = j->req.brier,
            .applied = done && eo__pool_config_same(&pi->cfg, chosen),
            .stale = done && !eo__pool_config_same(&pi->cfg, chosen) &&
                     !eo__pool_config_same(&pi->cfg, &j->start),
        };
        o = eo_tune_job_to_json(&v);
    }
    pthread_mutex_unlock(&t->jobs.mu);
    return o;
}

int eo__tune_answer(eo__tunes *t, const char *pool, int64_t job, eo__tune_outcome *out)
{
    int rc = 0;
    pthread_mutex_lock(&t->jobs.mu);
    const tune_job *j = job_of(t, pool);
    if (j == NULL)
        rc = EO_ENOTFOUND;
    else if (job > 0 && job != j->h.id)
        rc = EO_ECONFLICT;
    else if (j->h.state == EO__JOB_RUNNING)
        rc = EO_EBUSY;
    else if (j->h.state == EO__JOB_FAILED)
        rc = EO_EINVAL;
    if (j != NULL) {
        out->id = j->h.id;
        out->chose_best = j->h.state == EO__JOB_DONE && j->res.chose_best;
        out->start = j->start;
        if (j->h.state == EO__JOB_DONE)
            out->chosen = *eo_tune_chosen(&j->res);
    }
    pthread_mutex_unlock(&t->jobs.mu);
    return rc;
}
