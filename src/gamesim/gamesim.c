/* evenodds-gamesim: simulated game servers (one or several at once) with simulated players,
 * against a running evenodds service, through the client library only. The round-robin
 * scheduler that drives every server from one thread, progress, and the summary. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gamesim/gamesim.h"

#define PROG "evenodds-gamesim"

/* ---- timing ------------------------------------------------------------------------------- */

gs_timing gs_t;

int64_t gs_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t gs_mono_ms(void)
{
    return gs_mono_ns() / 1000000;
}

void gs_timed(const char *fn)
{
    int64_t d = gs_mono_ns() - gs_t.t0;
    gs_t.calls++;
    gs_t.over_1ms += d > 1000000;
    if (d > gs_t.max_ns) {
        gs_t.max_ns = d;
        gs_t.max_fn = fn;
    }
}

/* ---- progress and summary ----------------------------------------------------------------- */

typedef struct totals {
    uint64_t made, acked, refused, dropped, failures, fresh, cache, deferred, lookups, splits;
    size_t queued;
    gs_counts n;
} totals;

static void add_up(const gs_run *r, totals *t)
{
    memset(t, 0, sizeof *t);
    for (size_t i = 0; i < r->nsv; i++) {
        const gs_server *s = &r->sv[i];
        if (s->c == NULL)
            continue;
        eo_client_stats st;
        eo_client_get_stats(s->c, &st);
        t->made += st.reports_made;
        t->acked += st.reports_acked;
        t->refused += st.reports_refused;
        t->dropped += st.reports_dropped - s->at_start.reports_dropped;
        t->failures += st.send_failures;
        t->fresh += st.scrambles_fresh;
        t->cache += st.scrambles_cache;
        t->deferred += st.scrambles_deferred;
        t->lookups += st.lookups;
        t->splits += st.splits;
        t->queued += st.queued;
        const gs_counts *c = &s->n;
        t->n.rounds_ended += c->rounds_ended;
        t->n.rounds_unreported += c->rounds_unreported;
        t->n.joins += c->joins;
        t->n.leaves += c->leaves;
        t->n.switches += c->switches;
        t->n.part_events += c->part_events;
        for (int w = 0; w < 3; w++)
            t->n.wins[w] += c->wins[w];
        t->n.ev_rating += c->ev_rating;
        t->n.ev_reported_ok += c->ev_reported_ok;
        t->n.ev_reported_refused += c->ev_reported_refused;
        t->n.ev_scramble_fresh += c->ev_scramble_fresh;
        t->n.ev_scramble_cache += c->ev_scramble_cache;
        t->n.moves_scramble += c->moves_scramble;
        t->n.moves_autobalance += c->moves_autobalance;
        t->n.moves_gone += c->moves_gone;
        t->n.moves_capped += c->moves_capped;
        t->n.maps += c->maps;
        t->n.holds += c->holds;
        t->n.call_errors += c->call_errors;
    }
}

static double seconds_since(const gs_run *r)
{
    return (double)(gs_mono_ms() - r->start_ms) / 1000.0;
}

void gs_progress(gs_run *r)
{
    if (r->o->quiet || r->rounds_total == 0)
        return;
    int tenth = (int)(r->rounds_done * 10 / r->rounds_total);
    if (tenth < r->next_progress)
        return;
    r->next_progress = tenth + 1;
    totals t;
    add_up(r, &t);
    fprintf(stderr,
            "gamesim: %3d%%  %lld/%lld rounds, %llu acked, %zu queued, %llu dropped, "
            "%llu scrambles, %llu moves, %.1f s\n",
            tenth * 10, (long long)r->rounds_done, (long long)r->rounds_total,
            (unsigned long long)t.acked, t.queued, (unsigned long long)t.dropped,
            (unsigned long long)(t.fresh + t.cache),
            (unsigned long long)(t.n.moves_scramble + t.n.moves_autobalance), seconds_since(r));
}

static json_t *summary(const gs_run *r, bool interrupted, bool *ok)
{
    totals t;
    add_up(r, &t);
    size_t seen = 0;
    for (size_t i = 0; i < r->world.n; i++)
        seen += r->world.seen[i];
    *ok = !interrupted && t.queued == 0 && t.dropped == 0 && t.refused == 0 &&
          t.n.call_errors == 0;
    /* What the game saw (events) against what the library counted (stats): they must agree. */
    if (t.n.ev_scramble_fresh != t.fresh || t.n.ev_scramble_cache != t.cache)
        fprintf(stderr,
                "gamesim: warn: SCRAMBLE events (fresh %llu, cache %llu) differ from the "
                "library's counts (fresh %llu, cache %llu)\n",
                (unsigned long long)t.n.ev_scramble_fresh,
                (unsigned long long)t.n.ev_scramble_cache, (unsigned long long)t.fresh,
                (unsigned long long)t.cache);
    if (t.n.ev_reported_ok != t.acked || t.n.ev_reported_refused != t.refused)
        fprintf(stderr,
                "gamesim: warn: REPORTED events (200: %llu, refused: %llu) differ from the "
                "library's counts (acked %llu, refused %llu)\n",
                (unsigned long long)t.n.ev_reported_ok,
                (unsigned long long)t.n.ev_reported_refused, (unsigned long long)t.acked,
                (unsigned long long)t.refused);
    json_t *per = json_array();
    for (size_t i = 0; i < r->nsv; i++) {
        const gs_server *s = &r->sv[i];
        eo_client_stats st;
        eo_client_get_stats(s->c, &st);
        json_array_append_new(
            per, json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:s,s:s,s:s}", "id", s->sid,
                           "rounds", (json_int_t)s->rounds_done,
                           "rounds_made", (json_int_t)st.reports_made,
                           "reports_acked", (json_int_t)st.reports_acked,
                           "reports_dropped",
                           (json_int_t)(st.reports_dropped - s->at_start.reports_dropped),
                           "reports_refused", (json_int_t)st.reports_refused,
                           "queued_left", (json_int_t)st.queued, "first_round", s->first_id,
                           "last_round", s->last_id, "state_file", s->state_file));
    }
    const char *max_fn = gs_t.max_fn ? gs_t.max_fn : "";
    return json_pack(
        "{s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,"
        "s:{s:I,s:I,s:I},s:{s:I,s:I,s:I,s:I},"
        "s:{s:I,s:I,s:I,s:I,s:I,s:I},s:{s:I,s:I,s:I},s:I,s:I,"
        "s:I,s:s,s:I,s:I,s:f,s:b,s:s,s:s,s:s,s:s,s:I,s:o}",
        "ok", *ok, "servers", (json_int_t)r->nsv, "rounds_per_server",
        (json_int_t)r->o->rounds, "rounds_made", (json_int_t)t.made, "rounds_unreported",
        (json_int_t)t.n.rounds_unreported, "reports_acked", (json_int_t)t.acked,
        "reports_dropped", (json_int_t)t.dropped, "reports_refused", (json_int_t)t.refused,
        "queued_left", (json_int_t)t.queued, "send_failures", (json_int_t)t.failures,
        "call_errors", (json_int_t)t.n.call_errors,
        "scrambles", "fresh", (json_int_t)t.n.ev_scramble_fresh, "cache",
        (json_int_t)t.n.ev_scramble_cache, "deferred", (json_int_t)t.deferred,
        "moves", "scramble", (json_int_t)t.n.moves_scramble, "autobalance",
        (json_int_t)t.n.moves_autobalance, "player_gone", (json_int_t)t.n.moves_gone,
        "capped", (json_int_t)t.n.moves_capped,
        "players", "seen", (json_int_t)seen, "joins", (json_int_t)t.n.joins, "leaves",
        (json_int_t)t.n.leaves, "switches", (json_int_t)t.n.switches, "lookups",
        (json_int_t)t.lookups, "participation_events", (json_int_t)t.n.part_events,
        "outcomes", "A", (json_int_t)t.n.wins[0], "B", (json_int_t)t.n.wins[1], "draw",
        (json_int_t)t.n.wins[2],
        "maps", (json_int_t)t.n.maps, "holds", (json_int_t)t.n.holds,
        "max_call_us", (json_int_t)(gs_t.max_ns / 1000), "max_call", max_fn, "calls",
        (json_int_t)gs_t.calls, "calls_over_1ms", (json_int_t)gs_t.over_1ms, "seconds", seconds_since(r), "interrupted", interrupted, "url",
        r->o->url, "pool", r->o->pool, "mode", eo_trigger_mode_name(r->o->mode), "state_dir",
        r->o->state_dir, "seed", (json_int_t)r->o->seed, "per_server", per);
}

/* ---- main --------------------------------------------------------------------------------- */

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

int main(int argc, char **argv)
{
    gs_opts o;
    int prc = gs_opts_load(argc, argv, &o);
    if (prc != 0)
        return prc > 0 ? 0 : 2;

    /* The first signal stops the run at the next step and still flushes and sums up; a
     * second one ends the process the default way. */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    gs_run run;
    memset(&run, 0, sizeof run);
    run.o = &o;
    run.stop = &stop_flag;
    char err[512];
    if (gs_world_create(&run.world, o.seed, (size_t)o.population, eo_trigger_mode_name(o.mode),
                        err, sizeof err) != 0) {
        fprintf(stderr, PROG ": %s\n", err);
        return 1;
    }
    struct timespec wall;
    clock_gettime(CLOCK_REALTIME, &wall);
    run.t0 = (double)wall.tv_sec + (double)wall.tv_nsec / 1e9;
    run.start_ms = gs_mono_ms();
    run.rounds_total = o.servers * o.rounds; /* sessions, for queue-fed servers */
    run.next_progress = 1;
    run.sv = calloc((size_t)o.servers, sizeof *run.sv);
    int status = 1;
    if (run.sv == NULL) {
        fprintf(stderr, PROG ": out of memory\n");
        goto out;
    }
    for (int i = 0; i < (int)o.servers; i++) {
        int rc = gs_server_init(&run.sv[i], &run, i);
        run.nsv = (size_t)i + (rc == 0);
        if (rc != 0) {
            status = rc == EO_EINVAL ? 2 : 1;
            goto out;
        }
    }
    if (o.queue != NULL) { /* queue-fed servers: their own loop and summary (queued.c) */
        if (!o.quiet)
            fprintf(stderr,
                    "gamesim: %lld queue-fed server(s) x %lld sessions of queue %s, "
                    "population %lld, service %s\n",
                    (long long)o.servers, (long long)o.rounds, o.queue, (long long)o.population,
                    o.url);
        status = gs_queued_run(&run);
        goto out;
    }
    if (!o.quiet)
        fprintf(stderr,
                "gamesim: %lld server(s) x %lld rounds, %lld players each (population %lld, "
                "seed %llu, %s, %s), service %s pool %s; state files in %s\n",
                (long long)o.servers, (long long)o.rounds, (long long)o.players,
                (long long)o.population, (unsigned long long)o.seed,
                eo_trigger_mode_name(o.mode), o.scramble ? "scrambles" : "no scrambles",
                o.url, o.pool, o.state_dir);

    /* Round-robin: each server takes one step in turn; when none could (all wait on real
     * time), sleep a millisecond rather than spin. */
    bool all_done = false;
    while (!all_done && !stop_flag) {
        bool moved = false;
        all_done = true;
        for (size_t i = 0; i < run.nsv; i++) {
            moved |= gs_server_step(&run.sv[i]);
            all_done &= run.sv[i].phase == GS_DONE;
        }
        if (!moved && !all_done) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    bool interrupted = stop_flag != 0;
    if (interrupted)
        fprintf(stderr, "gamesim: interrupted; rounds running now are not reported\n");

    /* The end: every server's queued reports get --wait-ms in all (the workers send in
     * parallel, so one deadline serves them all). */
    int64_t deadline = gs_mono_ms() + o.wait_ms;
    for (size_t i = 0; i < run.nsv; i++) {
        int64_t left = deadline - gs_mono_ms();
        (void)eo_client_flush(run.sv[i].c, left > 0 ? (long)left : 0);
    }
    for (size_t i = 0; i < run.nsv; i++)
        gs_server_drain(&run.sv[i]);
    bool ok = false;
    json_t *sum = summary(&run, interrupted, &ok);
    char *text = sum ? json_dumps(sum, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(sum);
    if (text == NULL) {
        fprintf(stderr, PROG ": out of memory for the summary\n");
        goto out;
    }
    puts(text);
    free(text);
    fflush(stdout);
    if (!ok && !o.quiet)
        fprintf(stderr, "gamesim: not every report was acknowledged (see the summary)\n");
    status = ok ? 0 : 1;
out:
    for (size_t i = 0; i < run.nsv; i++)
        gs_server_free(&run.sv[i]);
    free(run.sv);
    gs_world_free(&run.world);
    return status;
}
