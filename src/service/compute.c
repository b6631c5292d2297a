/* The compute pool (docs/SERVICE.md "Heavy requests"): work whose cost grows with the request
 * (balancer splits, splits past their inline budget, autobalance) runs here instead of on the
 * HTTP threads, so that lookups, rounds, /healthz and /metrics never wait behind it. A bounded
 * queue: a full one refuses at once (the caller answers 503 with Retry-After). The threads run
 * at a lower priority (nice +10) than the HTTP threads and the writer, so on a busy machine the
 * scheduler gives the cheap requests the cores first. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "service/service.h"

#define COMPUTE_NICE 10

struct eo__compute {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    eo__job *head, *tail;
    size_t n, queue_max;
    bool stopping;
    eo__metrics *m;
    pthread_t *th;
    unsigned nth;
};

static void *compute_main(void *arg)
{
    eo__compute *c = arg;
    /* Per thread on Linux: only this thread's priority changes. Lowering it needs no right;
     * failing to is harmless (the work still runs). */
    (void)setpriority(PRIO_PROCESS, (id_t)gettid(), COMPUTE_NICE);
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (c->head == NULL && !c->stopping)
            pthread_cond_wait(&c->cv, &c->mu);
        eo__job *j = c->head;
        if (j == NULL) { /* stopping, and nothing left */
            pthread_mutex_unlock(&c->mu);
            return NULL;
        }
        c->head = j->next;
        if (c->head == NULL)
            c->tail = NULL;
        c->n--;
        atomic_store_explicit(&c->m->compute_depth, c->n, memory_order_relaxed);
        pthread_mutex_unlock(&c->mu);
        j->run(j);
        j->done(j); /* may resume the request: j is not touched after this */
    }
}

int eo__compute_start(unsigned threads, size_t queue_max, eo__metrics *m, eo__compute **out)
{
    *out = NULL;
    if (threads == 0 || queue_max == 0)
        return EO_EINVAL;
    eo__compute *c = calloc(1, sizeof *c);
    if (c == NULL || (c->th = calloc(threads, sizeof *c->th)) == NULL) {
        free(c);
        return EO_ENOMEM;
    }
    c->queue_max = queue_max;
    c->m = m;
    pthread_mutex_init(&c->mu, NULL);
    pthread_cond_init(&c->cv, NULL);
    for (; c->nth < threads; c->nth++)
        if (pthread_create(&c->th[c->nth], NULL, compute_main, c) != 0)
            break;
    if (c->nth == 0) {
        eo__compute_stop(c);
        return EO_ENOMEM;
    }
    *out = c;
    return 0;
}

int eo__compute_submit(eo__compute *c, eo__job *j)
{
    int rc = 0;
    j->next = NULL;
    pthread_mutex_lock(&c->mu);
    if (c->stopping || c->n >= c->queue_max) {
        rc = EO_EBUSY;
    } else {
        if (c->tail != NULL)
            c->tail->next = j;
        else
            c->head = j;
        c->tail = j;
        c->n++;
        atomic_store_explicit(&c->m->compute_depth, c->n, memory_order_relaxed);
        pthread_cond_signal(&c->cv);
    }
    pthread_mutex_unlock(&c->mu);
    if (rc != 0)
        atomic_fetch_add_explicit(&c->m->refused[EO__BUSY_COMPUTE], 1, memory_order_relaxed);
    return rc;
}

void eo__compute_stop(eo__compute *c)
{
    if (c == NULL)
        return;
    pthread_mutex_lock(&c->mu);
    c->stopping = true;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    for (unsigned i = 0; i < c->nth; i++)
        pthread_join(c->th[i], NULL);
    pthread_cond_destroy(&c->cv);
    pthread_mutex_destroy(&c->mu);
    free(c->th);
    free(c);
}
