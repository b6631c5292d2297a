/* The coordinator's figures in /metrics (docs/SERVICE.md "Metrics"): per queue, the tickets
 * waiting, created and ended, the matches formed, assigned and dissolved, how long its passes
 * take and the instances that serve it; the sessions open. The writer counts events as they
 * happen and publishes them after the commit that stored them (eo__mm_publish()), so a scrape
 * never counts what a failed commit undid; the HTTP threads read the published atomics under
 * the state's lock. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "service/mm.h"
#include "service/service.h"

static const char *const end_names[MM_END_COUNT] = {"assigned", "cancelled", "expired"};
static const char *const match_names[MM_MATCH_COUNT] = {"formed", "assigned", "dissolved"};

static eo__mm_qstats *find(const eo__mm *mm, const char *name)
{
    for (size_t i = 0; i < mm->nstats; i++)
        if (strcmp(mm->stats[i]->queue, name) == 0)
            return mm->stats[i];
    return NULL;
}

eo__mm_qstats *eo__mm_stats(eo__mm *mm, const char *name)
{
    eo__mm_qstats *st = find(mm, name);
    if (st != NULL)
        return st;
    st = calloc(1, sizeof *st);
    if (st == NULL)
        return NULL;
    snprintf(st->queue, sizeof st->queue, "%s", name);
    char *l = st->label; /* an id has no control characters: only these two need escaping */
    for (const char *c = name; *c != '\0' && l < st->label + sizeof st->label - 2; c++) {
        if (*c == '"' || *c == '\\')
            *l++ = '\\';
        *l++ = *c;
    }
    *l = '\0';
    pthread_rwlock_wrlock(&mm->lock);
    eo__mm_qstats **v = eo__grow(mm->stats, &mm->capstats, mm->nstats + 1, sizeof *v);
    if (v != NULL) {
        mm->stats = v;
        mm->stats[mm->nstats++] = st;
    }
    pthread_rwlock_unlock(&mm->lock);
    if (v == NULL) {
        free(st);
        return NULL;
    }
    return st;
}

/* Adds the counts since the last commit to the published counters. */
static void publish_counts(eo__mm_qstats *st)
{
    atomic_fetch_add_explicit(&st->created, st->n.created, memory_order_relaxed);
    for (int i = 0; i < MM_END_COUNT; i++)
        atomic_fetch_add_explicit(&st->ended[i], st->n.ended[i], memory_order_relaxed);
    for (int i = 0; i < MM_MATCH_COUNT; i++)
        atomic_fetch_add_explicit(&st->matches[i], st->n.matches[i], memory_order_relaxed);
}

/* Counts the live and draining instances of every queue (after a change of instances). */
static int count_instances(void *ctx, const char *key, void *val)
{
    (void)key;
    eo__mm *mm = ctx;
    const mm_instance *in = val;
    for (size_t i = 0; in->state != MM_I_LOST && i < in->reg.nqueues; i++) {
        eo__mm_qstats *st = find(mm, in->reg.queues[i]);
        if (st != NULL && in->state == MM_I_LIVE)
            st->w_live++;
        else if (st != NULL)
            st->w_draining++;
    }
    return 0;
}

void eo__mm_stats_publish(eo__mm *mm)
{
    if (mm == NULL)
        return;
    bool recount = mm->instances_changed;
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        publish_counts(st);
        st->w_shown = false;
        if (recount)
            st->w_live = st->w_draining = 0;
    }
    eo__mm_stats_drop(mm);
    if (recount)
        eo__smap_each(mm->instances, count_instances, mm);
    mm->instances_changed = false;
    for (size_t i = 0; i < mm->nqueues; i++) {
        const mm_queue *q = mm->queues[i];
        if (q->deleted)
            continue;
        q->st->w_shown = true;
        atomic_store_explicit(&q->st->waiting[0], q->nqueued, memory_order_relaxed);
        atomic_store_explicit(&q->st->waiting[1], q->nmatched, memory_order_relaxed);
    }
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        atomic_store_explicit(&st->instances[0], st->w_live, memory_order_relaxed);
        atomic_store_explicit(&st->instances[1], st->w_draining, memory_order_relaxed);
        atomic_store_explicit(&st->shown, st->w_shown, memory_order_relaxed);
    }
    atomic_store_explicit(&mm->sessions_open, eo__smap_size(mm->sessions), memory_order_relaxed);
}

void eo__mm_stats_drop(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++) {
        memset(&mm->stats[i]->n, 0, sizeof mm->stats[i]->n);
        memset(&mm->stats[i]->m, 0, sizeof mm->stats[i]->m);
    }
}

void eo__mm_stats_mark(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++)
        mm->stats[i]->m = mm->stats[i]->n;
}

void eo__mm_stats_undo(eo__mm *mm)
{
    for (size_t i = 0; i < mm->nstats; i++)
        mm->stats[i]->n = mm->stats[i]->m;
}

static unsigned long long ld(const atomic_uint_fast64_t *a)
{
    return (unsigned long long)atomic_load_explicit(a, memory_order_relaxed);
}

/* One family of counters or gauges by queue and one label @p key over @p names (NULL: only
 * the queue), values at @p off (bytes into eo__mm_qstats) for each name in turn. */
static void family(eo__buf *t, eo__mm *mm, const char *name, const char *type, const char *help,
                   const char *key, const char *const *names, size_t n, size_t off)
{
    eo__buf_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        if (!atomic_load_explicit(&st->shown, memory_order_relaxed))
            continue;
        const atomic_uint_fast64_t *v = (const atomic_uint_fast64_t *)((char *)st + off);
        for (size_t k = 0; k < n; k++) {
            if (key != NULL)
                eo__buf_printf(t, "%s{queue=\"%s\",%s=\"%s\"} %llu\n", name, st->label, key,
                               names[k], ld(&v[k]));
            else
                eo__buf_printf(t, "%s{queue=\"%s\"} %llu\n", name, st->label, ld(&v[k]));
        }
    }
}

void eo__mm_metrics(void *ctx, eo__buf *t)
{
    static const char *const waiting[2] = {"queued", "matched"};
    static const char *const inst[2] = {"live", "draining"};
    eo__mm *mm = ctx;
    if (mm == NULL)
        return;
    pthread_rwlock_rdlock(&mm->lock);
    family(t, mm, "evenodds_matchmaking_tickets_waiting", "gauge",
           "Tickets waiting in a queue: for a pass (queued), or in a formed match for its ready "
           "check or an instance (matched).",
           "state", waiting, 2, offsetof(eo__mm_qstats, waiting));
    family(t, mm, "evenodds_matchmaking_tickets_created_total", "counter",
           "Tickets filed (idempotent repeats not counted).", NULL, NULL, 1,
           offsetof(eo__mm_qstats, created));
    family(t, mm, "evenodds_matchmaking_tickets_finished_total", "counter",
           "Tickets that ended, by how.", "status", end_names, MM_END_COUNT,
           offsetof(eo__mm_qstats, ended));
    family(t, mm, "evenodds_matchmaking_matches_total", "counter",
           "Matches formed by the passes, assigned to an instance, dissolved (a cancel, a "
           "decline or a ready check's timeout).",
           "event", match_names, MM_MATCH_COUNT, offsetof(eo__mm_qstats, matches));
    family(t, mm, "evenodds_matchmaking_instances", "gauge",
           "Registered instances that serve the queue, by state (lost ones not counted).", "status",
           inst, 2, offsetof(eo__mm_qstats, instances));
    eo__buf_printf(t, "# HELP evenodds_matchmaking_pass_duration_seconds Time of one queue's "
                      "periodic pass on the writer.\n"
                      "# TYPE evenodds_matchmaking_pass_duration_seconds histogram\n");
    for (size_t i = 0; i < mm->nstats; i++) {
        eo__mm_qstats *st = mm->stats[i];
        if (!atomic_load_explicit(&st->shown, memory_order_relaxed))
            continue;
        char labels[sizeof st->label + 16];
        snprintf(labels, sizeof labels, "queue=\"%s\"", st->label);
        eo__hist_render(t, "evenodds_matchmaking_pass_duration_seconds", labels, &st->pass);
    }
    pthread_rwlock_unlock(&mm->lock);
    eo__buf_printf(t,
                   "# HELP evenodds_matchmaking_sessions_open Sessions open on instances.\n"
                   "# TYPE evenodds_matchmaking_sessions_open gauge\n"
                   "evenodds_matchmaking_sessions_open %llu\n",
                   ld(&mm->sessions_open));
}
