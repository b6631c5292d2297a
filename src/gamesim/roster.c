/* The roster of a simulated game server: who is connected, on which team, since when; players
 * who connect, take a team (where the library places joiners), switch, leave and are
 * replaced; and the library's events, whose moves the game applies at once. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gamesim/gamesim.h"

/* The share of idlers who never take part (rated only if they stay to the end of a round),
 * and the chance that a joiner comes with a friend, as a party. */
#define P_AFK 0.05
#define P_PARTY 0.15

/* ---- small helpers ------------------------------------------------------------------------ */

void gs_call_failed(gs_server *s, const char *what, const char *id, int rc)
{
    s->n.call_errors++;
    fprintf(stderr, "gamesim [%s] error: %s(%s): %s\n", s->sid, what, id ? id : "",
            eo_strerror(rc));
}

/* Events within a batch happen one after the other, each a small step later. */
static double step_time(const gs_server *s)
{
    return (double)gs_o(s)->round_seconds / GS_TICKS / (double)(8 * s->nm + 64);
}

void gs_advance(gs_server *s)
{
    s->now += step_time(s);
}

size_t gs_count_team(const gs_server *s, eo_track_team t)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nm; i++)
        n += s->m[i].team == t;
    return n;
}

size_t gs_eligible(const gs_server *s)
{
    return gs_count_team(s, EO_TRACK_A) + gs_count_team(s, EO_TRACK_B) +
           gs_count_team(s, EO_TRACK_WAITING);
}

static long find(const gs_server *s, const char *id)
{
    for (size_t i = 0; i < s->nm; i++)
        if (strcmp(s->m[i].id, id) == 0)
            return (long)i;
    return -1;
}

/* Closes @p m's segment on A or B at now: his skill counts for his team for that long. */
void gs_close_segment(gs_server *s, gs_member *m)
{
    if (!s->running || (m->team != EO_TRACK_A && m->team != EO_TRACK_B))
        return;
    double secs = s->now - m->since;
    double v = s->run->world.skill[m->who] * (secs > 0 ? secs : 0);
    s->diff_time += m->team == EO_TRACK_A ? v : -v;
    m->since = s->now;
}

/* The game puts member @p i on @p team and tells the library. */
static void set_team(gs_server *s, size_t i, eo_track_team team)
{
    gs_member *m = &s->m[i];
    if (m->team == team)
        return;
    gs_close_segment(s, m);
    gs_advance(s);
    m->team = team;
    m->since = s->now;
    /* The tracker clears these on a team change: the game's view follows. */
    m->dead = m->prot = false;
    m->score = 0;
    int rc = GS_CALL(eo_client_player_team, s->c, m->id, team, s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_player_team", m->id, rc);
}

/* Where member @p i goes when he needs a team: where the library places joiners (fair sizes,
 * then the smaller rating gap), within the team size; else he waits. In arena, whoever comes
 * during a round waits for the next one (no respawn). */
static void place(gs_server *s, size_t i)
{
    size_t k = (size_t)gs_o(s)->team_size;
    size_t a = gs_count_team(s, EO_TRACK_A), b = gs_count_team(s, EO_TRACK_B);
    eo_track_team t = EO_TRACK_WAITING;
    bool arena_wait = s->running && gs_o(s)->mode == EO_TRIGGER_MODE_ARENA;
    if (!arena_wait && (a < k || b < k)) {
        eo_track_team want = EO_TRACK_NONE;
        int rc = GS_CALL(eo_client_place_joiner, s->c, s->m[i].id, &want);
        if (rc != 0)
            gs_call_failed(s, "eo_client_place_joiner", s->m[i].id, rc);
        if (want != EO_TRACK_A && want != EO_TRACK_B) /* autobalance off: the game decides */
            want = a < b ? EO_TRACK_A
                 : b < a ? EO_TRACK_B
                 : gs_rng_chance(&s->rng, 0.5) ? EO_TRACK_A : EO_TRACK_B;
        if (want == EO_TRACK_A && a >= k)
            want = EO_TRACK_B;
        else if (want == EO_TRACK_B && b >= k)
            want = EO_TRACK_A;
        t = want;
    }
    set_team(s, i, t);
}

/* Waiting players take the free places (in roster order). */
void gs_fill_slots(gs_server *s)
{
    size_t k = (size_t)gs_o(s)->team_size;
    for (size_t i = 0; i < s->nm; i++) {
        if (gs_count_team(s, EO_TRACK_A) >= k && gs_count_team(s, EO_TRACK_B) >= k)
            return;
        if (s->m[i].team == EO_TRACK_WAITING || s->m[i].team == EO_TRACK_NONE)
            place(s, i);
    }
}

/* The game's team size wins over any move: the library is told it (team_size_max), so this
 * only counts (moves.capped) what a scramble or autobalance would put beyond it; the surplus
 * (the last in roster order) waits. */
void gs_cap_teams(gs_server *s)
{
    size_t k = (size_t)gs_o(s)->team_size;
    for (int t = EO_TRACK_A; t <= EO_TRACK_B; t++) {
        for (size_t i = s->nm; i-- > 0 && gs_count_team(s, (eo_track_team)t) > k;) {
            if (s->m[i].team == (eo_track_team)t) {
                set_team(s, i, EO_TRACK_WAITING);
                s->n.moves_capped++;
            }
        }
    }
}

/* ---- players come and go ------------------------------------------------------------------ */

/* A player of the world connects here (with @p party or none). His index, or -1. */
static long join_one(gs_server *s, const char *party)
{
    if (s->nm >= s->cap)
        return -1;
    long who = gs_world_take(&s->run->world, &s->rng, s->index);
    if (who < 0)
        return -1;
    gs_member *m = &s->m[s->nm];
    memset(m, 0, sizeof *m);
    m->who = (size_t)who;
    gs_world_player_id(&s->run->world, (size_t)who, m->id, sizeof m->id);
    m->team = EO_TRACK_NONE;
    m->leave_at = -1;
    m->afk = gs_rng_chance(&s->rng, P_AFK);
    gs_advance(s);
    int rc = GS_CALL(eo_client_player_connect, s->c, m->id, s->now);
    if (rc != 0) {
        gs_call_failed(s, "eo_client_player_connect", m->id, rc);
        gs_world_release(&s->run->world, (size_t)who);
        return -1;
    }
    size_t i = s->nm++;
    s->n.joins++;
    if (party != NULL && (rc = GS_CALL(eo_client_player_party, s->c, m->id, party)) != 0)
        gs_call_failed(s, "eo_client_player_party", m->id, rc);
    if (s->running) {
        /* A joiner may leave again in the same round, often before he takes part. */
        double end = s->round_start + (double)gs_o(s)->round_seconds;
        double rest = (end - s->now) / (double)gs_o(s)->round_seconds;
        if (gs_rng_chance(&s->rng, gs_o(s)->churn * rest))
            m->leave_at = s->now + gs_rng_unit(&s->rng) * (end - s->now);
    }
    place(s, i);
    return (long)i;
}

/* One player connects, or two as a party when @p pair. False when nobody could. */
static bool join_group(gs_server *s, bool pair)
{
    if (!pair)
        return join_one(s, NULL) >= 0;
    char party[EO_ID_MAX + 64]; /* sid is at most 64 bytes: the id fits in EO_ID_MAX */
    snprintf(party, sizeof party, "%s-party%llu", s->sid, (unsigned long long)++s->parties);
    return join_one(s, party) >= 0 && join_one(s, party) >= 0;
}

/* Players connect until the server has --players (the Waiting For Players period). */
void gs_join_fill(gs_server *s)
{
    size_t want = (size_t)gs_o(s)->players;
    while (s->nm < want)
        if (!join_group(s, want - s->nm >= 2 && gs_rng_chance(&s->rng, P_PARTY)))
            return;
}

/* A leaver's place is taken, but not at once: the newcomer connects after a delay drawn from
 * an exponential law of mean round_seconds / 4, so teams are short for a while (which is what
 * autobalance and the joiner placement are for). */
static void schedule_arrival(gs_server *s)
{
    if (s->narrivals >= s->cap)
        return;
    double mean = (double)gs_o(s)->round_seconds / 4;
    s->arrivals[s->narrivals++] = s->now - mean * log(1 - gs_rng_unit(&s->rng));
}

/* Newcomers due before @p until connect; two due ones may come together as a party. */
void gs_arrivals_due(gs_server *s, double until)
{
    for (size_t i = 0; i < s->narrivals;) {
        if (s->arrivals[i] >= until || s->nm >= s->cap) {
            i++;
            continue;
        }
        s->arrivals[i] = s->arrivals[--s->narrivals];
        size_t other = s->narrivals;
        for (size_t j = 0; j < s->narrivals && other == s->narrivals; j++)
            if (s->arrivals[j] < until)
                other = j;
        bool pair = other < s->narrivals && gs_rng_chance(&s->rng, P_PARTY);
        if (pair)
            s->arrivals[other] = s->arrivals[--s->narrivals];
        join_group(s, pair);
        i = 0; /* the list changed under the loop */
    }
}

void gs_leave(gs_server *s, size_t i)
{
    gs_member *m = &s->m[i];
    gs_close_segment(s, m);
    gs_advance(s);
    int rc = GS_CALL(eo_client_player_disconnect, s->c, m->id, s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_player_disconnect", m->id, rc);
    gs_world_release(&s->run->world, m->who);
    s->m[i] = s->m[--s->nm];
    s->n.leaves++;
    schedule_arrival(s);
}

/* A player switches by himself, as the game allows it: to a team with room that is not
 * larger than his own (TF2's mp_teams_unbalance_limit). Equal sizes become a gap of two,
 * which autobalance then repairs. */
void gs_try_switch(gs_server *s, size_t i)
{
    gs_member *m = &s->m[i];
    eo_track_team to = m->team == EO_TRACK_A ? EO_TRACK_B : EO_TRACK_A;
    size_t own = gs_count_team(s, m->team), other = gs_count_team(s, to);
    if (other >= (size_t)gs_o(s)->team_size || other > own)
        return;
    set_team(s, i, to);
    s->n.switches++;
}

/* ---- the library's events ------------------------------------------------------------------ */

static void apply_move(gs_server *s, const eo_client_event *ev)
{
    long i = find(s, ev->id);
    if (i < 0) { /* he left since the library decided */
        s->n.moves_gone++;
        return;
    }
    if (ev->reason != NULL && strcmp(ev->reason, "scramble") == 0)
        s->n.moves_scramble++;
    else
        s->n.moves_autobalance++;
    set_team(s, (size_t)i, ev->to);
}

void gs_server_drain(gs_server *s)
{
    eo_client_event ev;
    /* Bounded, so that a library that kept producing events could not hang the loop. */
    for (int n = 0; n < 100000; n++) {
        int rc = GS_CALL(eo_client_poll, s->c, s->now, &ev);
        if (rc < 0)
            gs_call_failed(s, "eo_client_poll", NULL, rc);
        if (rc <= 0)
            return;
        switch (ev.type) {
        case EO_CLIENT_EV_RATING:
            s->n.ev_rating++;
            break;
        case EO_CLIENT_EV_REPORTED:
            if (ev.status == 200)
                s->n.ev_reported_ok++;
            else
                s->n.ev_reported_refused++;
            break;
        case EO_CLIENT_EV_SCRAMBLE:
            if (ev.source != NULL && strcmp(ev.source, "fresh") == 0)
                s->n.ev_scramble_fresh++;
            else
                s->n.ev_scramble_cache++;
            /* TF2 resets the team scores when it scrambles (the library's counters too). */
            s->map_wins[0] = s->map_wins[1] = 0;
            break;
        case EO_CLIENT_EV_MOVE:
            apply_move(s, &ev);
            break;
        }
    }
    fprintf(stderr, "gamesim [%s] warn: 100000 events in one poll loop; going on\n", s->sid);
}
