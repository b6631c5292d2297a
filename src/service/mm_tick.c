/* The ticker: a thread that sleeps until the next queue's pass is due (or a second, for the
 * instances' heartbeats) and hands the writer one EO__MM_TICK request, waiting for its answer
 * before the next (mm.h). The passes themselves run on the writer, in its batches. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "service/mm.h"
#include "service/service.h"

/* Least pause between two ticks, ms: a queue due again at once (a slow pass) still leaves the
 * writer to the requests waiting. */
#define TICK_MIN_GAP_MS 5
/* Longest sleep before the next due time is read again: a queue made or changed meanwhile may
 * be due sooner than what was read (reading is an atomic load; nothing else is done). */
#define TICK_LOOK_MS 50

struct eo__mm_ticker {
    struct eo_service *svc;
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, answered;
    eo__mm_req req;
    eo__wreq w;
};

static void tick_done(eo__wreq *w, void *ctx)
{
    (void)w;
    eo__mm_ticker *t = ctx;
    pthread_mutex_lock(&t->mu);
    t->answered = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
}

/* Waits until Unix ms @p until or a stop; with mu held. False when stopping. */
static bool sleep_until(eo__mm_ticker *t, int64_t until)
{
    struct timespec ts = {(time_t)(until / 1000), (long)(until % 1000) * 1000000L};
    while (!t->stop && eo__mm_now_ms() < until)
        if (pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT)
            break;
    return !t->stop;
}

static void *ticker_main(void *arg)
{
    eo__mm_ticker *t = arg;
    pthread_mutex_lock(&t->mu);
    int64_t soonest = eo__mm_now_ms() + TICK_MIN_GAP_MS;
    for (;;) {
        int64_t due = eo__mm_next_due(t->svc->mm);
        if (due < soonest)
            due = soonest;
        int64_t now = eo__mm_now_ms();
        if (due > now + TICK_LOOK_MS) {
            if (!sleep_until(t, now + TICK_LOOK_MS))
                break;
            continue;
        }
        if (!sleep_until(t, due))
            break;
        memset(&t->w, 0, sizeof t->w);
        t->w.kind = EO__W_MM;
        t->w.u.mm = &t->req;
        t->w.done = tick_done;
        t->w.done_ctx = t;
        t->answered = false;
        pthread_mutex_unlock(&t->mu);
        bool queued = eo__writer_submit(t->svc->writer, &t->w) == 0;
        pthread_mutex_lock(&t->mu);
        /* the writer answers every request it took, also while it stops */
        while (queued && !t->answered)
            pthread_cond_wait(&t->cv, &t->mu);
        free(t->w.resp);
        t->w.resp = NULL;
        soonest = eo__mm_now_ms() + TICK_MIN_GAP_MS;
        if (!queued && !sleep_until(t, eo__mm_now_ms() + 100)) /* its queue is full */
            break;
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

int eo__mm_ticker_start(struct eo_service *svc, eo__mm_ticker **out)
{
    eo__mm_ticker *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    t->svc = svc;
    t->req.op = EO__MM_TICK;
    t->req.by = EO__MM_BY_ADMIN;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (pthread_create(&t->th, NULL, ticker_main, t) != 0) {
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free(t);
        return EO_ENOMEM;
    }
    *out = t;
    return 0;
}

void eo__mm_ticker_stop(eo__mm_ticker *t)
{
    if (t == NULL)
        return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->th, NULL);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free(t);
}
