/* One simulated game server: a roster of players, a virtual clock, and a state machine that
 * plays rounds through the client library as a game-server plugin would. Each step does one
 * batch of game events and returns, so that several servers share one thread round-robin and
 * none of them ever waits: what needs real time (the split answer a scramble needs, a free
 * slot in the report queue, --pace-ms) is checked again at the server's next step. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_sim.h"
#include "gamesim/gamesim.h"

/* Virtual seconds between rounds (TF2's bonus time) and of the Waiting For Players period. */
#define INTERMISSION_S 10.0
#define PREGAME_S 30.0
/* Behaviour of simulated players: per batch, the chance that one on a team deals or takes
 * damage (so most take part in a round, some leave before they do), is dead, is protected
 * (an über-charged medic); per round, the chance that one switches team by himself. */
#define P_EVENT 0.5
#define P_DEAD 0.25
#define P_PROTECTED 0.03
#define P_SWITCH 0.03

/* Map rules per mode (TF2-like): the map ends at win_limit wins (0: none) or max_rounds. */
static const struct {
    uint32_t win_limit, max_rounds;
} map_rules[EO_TRIGGER_MODE_COUNT] = {
    [EO_TRIGGER_MODE_ARENA] = {5, 10},         [EO_TRIGGER_MODE_ATTACK_DEFEND] = {0, 4},
    [EO_TRIGGER_MODE_PAYLOAD] = {0, 4},        [EO_TRIGGER_MODE_KOTH] = {3, 5},
    [EO_TRIGGER_MODE_CP5] = {5, 9},            [EO_TRIGGER_MODE_CTF] = {3, 5},
    [EO_TRIGGER_MODE_OTHER] = {3, 6},
};

static void on_log(void *ctx, eo_client_log_level lvl, const char *msg)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    const gs_server *s = ctx;
    if ((lvl == EO_CLIENT_LOG_DEBUG && !gs_o(s)->verbose) ||
        (lvl == EO_CLIENT_LOG_INFO && gs_o(s)->quiet))
        return;
    fprintf(stderr, "gamesim [%s] %s: %s\n", s->sid,
            (unsigned)lvl <= EO_CLIENT_LOG_ERROR ? names[lvl] : "?", msg);
}

/* eo_client_get_stats() is void, so GS_CALL cannot wrap it: timed here. */
static void stats_of(gs_server *s, eo_client_stats *st)
{
    gs_t.t0 = gs_mono_ns();
    eo_client_get_stats(s->c, st);
    gs_timed("eo_client_get_stats");
}

/* ---- rounds ------------------------------------------------------------------------------- */

/* Waits (in later steps) for the answer of the split request that a round end or the Waiting
 * For Players period made, so that a scramble applies before the next round, as it would in
 * a real intermission. */
static void enter_intermission(gs_server *s, bool expect)
{
    s->phase = GS_INTERMISSION;
    s->expect_splits = expect && gs_eligible(s) >= 4;
    s->inter_since_ms = gs_mono_ms();
    s->not_before_ms = s->inter_since_ms + gs_o(s)->pace_ms;
}

static void pregame(gs_server *s)
{
    /* Players trickle in during the Waiting For Players period. */
    double start = s->now;
    gs_join_fill(s);
    gs_server_drain(s);
    if (s->now < start + PREGAME_S)
        s->now = start + PREGAME_S;
    int rc = GS_CALL(eo_client_wfp_expired, s->c, s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_wfp_expired", NULL, rc);
    gs_server_drain(s);
    enter_intermission(s, gs_o(s)->scramble && gs_o(s)->mode != EO_TRIGGER_MODE_ARENA);
}

static void round_start(gs_server *s)
{
    const gs_opts *o = gs_o(s);
    gs_arrivals_due(s, s->now);
    gs_cap_teams(s);
    gs_fill_slots(s);
    for (size_t i = 0; i < s->nm; i++) {
        gs_member *m = &s->m[i];
        int rc = 0;
        if (m->dead && (rc = GS_CALL(eo_client_player_dead, s->c, m->id, false)) != 0)
            gs_call_failed(s, "eo_client_player_dead", m->id, rc);
        if (m->prot && (rc = GS_CALL(eo_client_player_protected, s->c, m->id, false)) != 0)
            gs_call_failed(s, "eo_client_player_protected", m->id, rc);
        if (m->score != 0 && (rc = GS_CALL(eo_client_player_score, s->c, m->id, 0)) != 0)
            gs_call_failed(s, "eo_client_player_score", m->id, rc);
        m->dead = m->prot = false;
        m->score = 0;
        m->since = s->now;
        m->leave_at = gs_rng_chance(&s->rng, o->churn)
                          ? s->now + gs_rng_unit(&s->rng) * (double)o->round_seconds
                          : -1;
    }
    int rc = GS_CALL(eo_client_round_start, s->c, s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_round_start", NULL, rc);
    rc = GS_CALL(eo_client_round_time_left, s->c, (double)o->round_seconds, s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_round_time_left", NULL, rc);
    s->running = true;
    s->round_start = s->now;
    s->diff_time = 0;
    s->tick = 0;
    s->phase = GS_RUNNING;
}

/* One slice of the round: participation, deaths, switches, then leaves and joins, with a
 * poll after each batch (moves applied at once). */
static void tick(gs_server *s)
{
    const gs_opts *o = gs_o(s);
    double dt = (double)o->round_seconds / GS_TICKS;
    double t0 = s->round_start + s->tick * dt, t1 = t0 + dt;
    if (s->now < t0)
        s->now = t0;
    for (size_t i = 0; i < s->nm; i++) {
        gs_member *m = &s->m[i];
        if (m->team != EO_TRACK_A && m->team != EO_TRACK_B)
            continue;
        int rc;
        if (!m->afk && gs_rng_chance(&s->rng, P_EVENT)) {
            eo_track_event ev = (eo_track_event)gs_rng_below(&s->rng, 3);
            gs_advance(s);
            if ((rc = GS_CALL(eo_client_player_event, s->c, m->id, ev, s->now)) != 0)
                gs_call_failed(s, "eo_client_player_event", m->id, rc);
            s->n.part_events++;
            m->score += 1 + (int64_t)gs_rng_below(&s->rng, 3);
            if ((rc = GS_CALL(eo_client_player_score, s->c, m->id, m->score)) != 0)
                gs_call_failed(s, "eo_client_player_score", m->id, rc);
        }
        bool dead = gs_rng_chance(&s->rng, P_DEAD);
        if (dead != m->dead) {
            m->dead = dead;
            if ((rc = GS_CALL(eo_client_player_dead, s->c, m->id, dead)) != 0)
                gs_call_failed(s, "eo_client_player_dead", m->id, rc);
        }
        bool prot = !dead && gs_rng_chance(&s->rng, P_PROTECTED);
        if (prot != m->prot) {
            m->prot = prot;
            if ((rc = GS_CALL(eo_client_player_protected, s->c, m->id, prot)) != 0)
                gs_call_failed(s, "eo_client_player_protected", m->id, rc);
        }
        if (gs_rng_chance(&s->rng, P_SWITCH / GS_TICKS))
            gs_try_switch(s, i);
    }
    gs_server_drain(s);
    /* Downwards: gs_leave() moves the last member into the freed place, one already seen. */
    bool left = false;
    for (size_t i = s->nm; i-- > 0;) {
        if (s->m[i].leave_at >= 0 && s->m[i].leave_at < t1) {
            gs_leave(s, i);
            left = true;
        }
    }
    if (left && o->mode != EO_TRIGGER_MODE_ARENA)
        gs_fill_slots(s);
    gs_arrivals_due(s, t1);
    gs_server_drain(s);
    if (++s->tick == GS_TICKS)
        s->phase = GS_ENDING;
}

/* What the game knows at round end for the scramble rules, drawn to fit the outcome: the
 * winner captured; the loser captured something more often the closer the round was. */
static void round_info(gs_server *s, eo_winner win, double p_a, eo_client_round_info *info)
{
    eo_client_round_info_init(info);
    eo_trigger_mode mode = gs_o(s)->mode;
    info->win_limit = map_rules[mode].win_limit;
    info->max_rounds = map_rules[mode].max_rounds;
    double p_loser = win == EO_WIN_A ? 1 - p_a : win == EO_WIN_B ? p_a : 0.5;
    bool loser_capped = gs_rng_chance(&s->rng, fmin(1.0, 0.25 + 1.5 * p_loser));
    switch (mode) {
    case EO_TRIGGER_MODE_KOTH:
    case EO_TRIGGER_MODE_CP5:
    case EO_TRIGGER_MODE_CTF:
        if (win == EO_DRAW) {
            info->captured[0] = gs_rng_chance(&s->rng, 0.5);
            info->captured[1] = gs_rng_chance(&s->rng, 0.5);
        } else {
            info->captured[win] = true;
            info->captured[1 - win] = loser_capped;
        }
        break;
    case EO_TRIGGER_MODE_ATTACK_DEFEND:
    case EO_TRIGGER_MODE_PAYLOAD: {
        /* Sides swap every round; a full round of the map is both halves. */
        int att = s->map_round % 2 == 0 ? 0 : 1;
        bool att_won = win == (eo_winner)att;
        info->captured[att] = att_won || loser_capped;
        info->attackers_timed_out = !att_won;
        info->full_round = s->map_round % 2 == 1;
        break;
    }
    default:
        break;
    }
}

static void new_map(gs_server *s)
{
    size_t nmaps = s->run->world.nmaps;
    size_t next = (size_t)gs_rng_below(&s->rng, nmaps);
    if (nmaps > 1 && next == s->map)
        next = (next + 1) % nmaps;
    s->map = next;
    s->map_round = 0;
    s->map_wins[0] = s->map_wins[1] = 0;
    s->n.maps++;
    int rc = GS_CALL(eo_client_map_start, s->c, s->run->world.map[next], s->now);
    if (rc != 0)
        gs_call_failed(s, "eo_client_map_start", NULL, rc);
}

/* Returns false while it holds the round end for a full report queue. */
static bool round_end(gs_server *s)
{
    const gs_opts *o = gs_o(s);
    eo_client_stats before;
    stats_of(s, &before);
    if (o->hold && before.queued >= (size_t)o->queue_slots) {
        /* Virtual time runs faster than the service: a report made now would push the oldest
         * out of the ring. A real round lasts minutes, so the game would not be here yet. */
        int64_t now_ms = gs_mono_ms();
        if (!s->holding) {
            s->holding = true;
            s->hold_since_ms = s->hold_said_ms = now_ms;
            s->n.holds++;
        } else if (now_ms - s->hold_said_ms >= 10000) {
            s->hold_said_ms = now_ms;
            fprintf(stderr,
                    "gamesim [%s] warn: report queue full (%zu) for %.0f s: holding the round "
                    "end until the service takes reports (--no-hold drops instead)\n",
                    s->sid, before.queued, (double)(now_ms - s->hold_since_ms) / 1000.0);
        }
        gs_server_drain(s);
        return false;
    }
    s->holding = false;
    double end = s->round_start + (double)o->round_seconds;
    if (s->now < end)
        s->now = end;
    for (size_t i = 0; i < s->nm; i++)
        gs_close_segment(s, &s->m[i]);
    const gs_world *w = &s->run->world;
    double p = eo_sim_p_true(s->diff_time / (double)o->round_seconds, w->scale, w->bias[s->map]);
    eo_winner win = gs_rng_chance(&s->rng, w->draw_rate * 4 * p * (1 - p)) ? EO_DRAW
                  : gs_rng_chance(&s->rng, p)                            ? EO_WIN_A
                                                                          : EO_WIN_B;
    eo_client_round_info info;
    round_info(s, win, p, &info);
    char id[EO_ID_MAX + 1] = "";
    int rc = GS_CALL(eo_client_round_end, s->c, win, &info, s->now, id, sizeof id);
    s->running = false;
    s->n.rounds_ended++;
    s->n.wins[win]++;
    if (rc == 0) {
        if (s->first_id[0] == '\0')
            snprintf(s->first_id, sizeof s->first_id, "%s", id);
        snprintf(s->last_id, sizeof s->last_id, "%s", id);
    } else if (rc == EO_EINVAL) {
        s->n.rounds_unreported++; /* nobody rated on a side: the library said why */
    } else {
        gs_call_failed(s, "eo_client_round_end", NULL, rc);
    }
    gs_server_drain(s);
    s->map_round++;
    if (win != EO_DRAW)
        s->map_wins[win]++;
    s->rounds_done++;
    s->run->rounds_done++;
    gs_progress(s->run);
    if (s->rounds_done >= o->rounds) {
        s->phase = GS_DONE;
        return true;
    }
    s->now += INTERMISSION_S;
    uint32_t wl = map_rules[o->mode].win_limit;
    if (s->map_round >= map_rules[o->mode].max_rounds ||
        (wl > 0 && (s->map_wins[0] >= wl || s->map_wins[1] >= wl)))
        new_map(s);
    enter_intermission(s, true);
    return true;
}

static bool intermission(gs_server *s)
{
    /* Counters first, then the poll: an answer counted here has been handed over by the time
     * the poll runs, so its scramble is applied before the round starts. */
    eo_client_stats st;
    stats_of(s, &st);
    gs_server_drain(s);
    int64_t now_ms = gs_mono_ms();
    /* Every split request of the round end answered (or failed): its scramble, if any, is
     * applied or put off by the time the poll above ran. */
    bool answered = !s->expect_splits || st.splits_queued == 0;
    bool waited = now_ms - s->inter_since_ms >= gs_o(s)->intermission_ms;
    if (now_ms < s->not_before_ms || !(answered || waited))
        return false;
    round_start(s);
    return true;
}

bool gs_server_step(gs_server *s)
{
    switch (s->phase) {
    case GS_PREGAME:
        pregame(s);
        return true;
    case GS_INTERMISSION:
        return intermission(s);
    case GS_RUNNING:
        tick(s);
        return true;
    case GS_ENDING:
        return round_end(s);
    case GS_DONE:
        gs_server_drain(s);
        return false;
    }
    return false;
}

/* ---- set-up ------------------------------------------------------------------------------- */

int gs_server_init(gs_server *s, gs_run *run, int index)
{
    const gs_opts *o = run->o;
    memset(s, 0, sizeof *s);
    s->run = run;
    s->index = index;
    snprintf(s->sid, sizeof s->sid, "%s-%d", o->prefix, index + 1);
    snprintf(s->state_file, sizeof s->state_file, "%s/gamesim-%s.state", o->state_dir, s->sid);
    gs_rng_seed(&s->rng, o->seed, (uint64_t)index + 1);
    s->cap = EO_TRACK_PLAYERS_MAX;
    s->m = calloc(s->cap, sizeof *s->m);
    s->arrivals = calloc(s->cap, sizeof *s->arrivals);
    if (s->m == NULL || s->arrivals == NULL) {
        fprintf(stderr, "evenodds-gamesim: out of memory\n");
        return EO_ENOMEM;
    }
    s->map = (size_t)gs_rng_below(&s->rng, run->world.nmaps);
    eo_client_config cfg;
    eo_client_config_init(&cfg);
    cfg.url = o->url;
    cfg.pool = o->pool;
    cfg.server_id = s->sid;
    cfg.key = o->key;
    cfg.state_file = s->state_file;
    cfg.request_timeout_ms = (long)o->timeout_ms;
    cfg.connect_timeout_ms = o->timeout_ms < 2000 ? (long)o->timeout_ms : 2000;
    cfg.queue_slots = (size_t)o->queue_slots;
    cfg.map = run->world.map[s->map];
    cfg.mode = eo_trigger_mode_name(o->mode);
    cfg.trigger_mode = o->mode;
    cfg.scramble_on = o->scramble;
    cfg.bench_waits = o->mode == EO_TRIGGER_MODE_ARENA;
    cfg.team_size_max = o->team_size;
    cfg.autobalance.enabled = o->autobalance;
    if (o->ab_strength > 0)
        cfg.autobalance.strength_threshold = o->ab_strength;
    cfg.log = on_log;
    cfg.log_ctx = s;
    char err[512] = "";
    int rc = eo_client_create(&cfg, &s->c, err, sizeof err);
    if (rc != 0) {
        fprintf(stderr, "evenodds-gamesim: server %s: %s\n", s->sid, err[0] ? err : eo_strerror(rc));
        return rc;
    }
    eo_client_get_stats(s->c, &s->at_start);
    s->now = run->t0;
    s->phase = GS_PREGAME;
    return 0;
}

void gs_server_free(gs_server *s)
{
    eo_client_destroy(s->c);
    s->c = NULL;
    free(s->m);
    free(s->arrivals);
    s->m = NULL;
    s->arrivals = NULL;
}
