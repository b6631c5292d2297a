/* The table of background jobs a pool can have (refits, refit.c; tunes, tune.c): one job per
 * pool at a time, a bound on the jobs running at once, each on a thread of its own; the last
 * job of each pool is kept for GET until the pool's next one starts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/buf.h"
#include "service/service.h"

double eo__mono_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int eo__jobs_init(eo__jobs *t)
{
    memset(t, 0, sizeof *t);
    atomic_init(&t->stop, false);
    if (pthread_mutex_init(&t->mu, NULL) != 0)
        return EO_ENOMEM;
    if (pthread_cond_init(&t->cv, NULL) != 0) {
        pthread_mutex_destroy(&t->mu);
        return EO_ENOMEM;
    }
    t->ok = true;
    return 0;
}

/* The slot of @p pool's job in the table (t->n when it has none) and the jobs running, under
 * t->mu. */
static size_t slot_of(const eo__jobs *t, const char *pool, size_t *running)
{
    size_t at = t->n;
    *running = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (strcmp(t->jobs[i]->pool, pool) == 0)
            at = i;
        *running += t->jobs[i]->state == EO__JOB_RUNNING;
    }
    return at;
}

int eo__jobs_start(eo__jobs *t, eo__job_head *j, size_t max, void *(*main)(void *))
{
    j->state = EO__JOB_RUNNING;
    j->t0 = eo__mono_s();
    pthread_mutex_lock(&t->mu);
    size_t running = 0, at = slot_of(t, j->pool, &running);
    int rc = 0;
    if (atomic_load(&t->stop))
        rc = EO_EBUSY;
    else if (at < t->n && t->jobs[at]->state == EO__JOB_RUNNING)
        rc = EO_EEXIST;
    else if (running >= max)
        rc = EO_ELIMIT;
    else if (at == t->n) {
        eo__job_head **nj = eo__grow(t->jobs, &t->cap, t->n + 1, sizeof *nj);
        if (nj == NULL)
            rc = EO_ENOMEM;
        else
            t->jobs = nj;
    }
    eo__job_head *old = NULL;
    if (rc == 0) {
        j->id = ++t->next_id;
        if (pthread_create(&j->th, NULL, main, j) != 0) {
            rc = EO_ENOMEM;
        } else {
            j->started = true;
            old = at < t->n ? t->jobs[at] : NULL;
            t->jobs[at] = j;
            if (at == t->n)
                t->n++;
        }
    }
    pthread_mutex_unlock(&t->mu);
    if (old != NULL) { /* finished: its thread has ended or is returning */
        pthread_join(old->th, NULL);
        free(old);
    }
    return rc;
}

eo__job_head *eo__jobs_find(eo__jobs *t, const char *pool)
{
    size_t running = 0, at = slot_of(t, pool, &running);
    return at < t->n ? t->jobs[at] : NULL;
}

int eo__jobs_read_log(const char *db, int64_t pool_id, int64_t *rounds,
                      int (*fn)(void *ctx, const eo_log_entry *e), void *ctx, char *error,
                      size_t cap)
{
    eo_store *s = NULL;
    char msg[256];
    int rc = eo_store_open(db, EO_STORE_READONLY, &s, msg, sizeof msg);
    if (rc != 0) {
        snprintf(error, cap, "%s", msg);
        return rc;
    }
    /* One read transaction: the count and the entries come from one consistent snapshot,
     * whatever the writer commits meanwhile. */
    rc = eo_store_begin(s);
    if (rc == 0 && rounds != NULL)
        rc = eo_store_round_count(s, pool_id, rounds);
    if (rc == 0)
        rc = eo_store_log_each(s, pool_id, 0, fn, ctx);
    if (rc != 0 && error[0] == '\0')
        snprintf(error, cap, "%s", rc == EO_EBUSY ? "the service is stopping" : eo_store_errmsg(s));
    eo_store_rollback(s);
    eo_store_close(s);
    return rc;
}

void eo__jobs_stop(eo__jobs *t)
{
    if (!t->ok)
        return;
    pthread_mutex_lock(&t->mu);
    atomic_store(&t->stop, true);
    pthread_cond_broadcast(&t->cv);
    size_t n = t->n;
    pthread_mutex_unlock(&t->mu);
    /* No job starts from now on; the running ones hear the stop between their steps. */
    for (size_t i = 0; i < n; i++) {
        if (t->jobs[i]->started)
            pthread_join(t->jobs[i]->th, NULL);
        t->jobs[i]->started = false;
    }
}

void eo__jobs_destroy(eo__jobs *t)
{
    if (!t->ok)
        return;
    eo__jobs_stop(t);
    for (size_t i = 0; i < t->n; i++)
        free(t->jobs[i]);
    free(t->jobs);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    t->ok = false;
}
