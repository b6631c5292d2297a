/*
 * A minimal game-server plugin on libevenodds-client (docs/CLIENT.md walks through it).
 *
 * It plays a tiny KOTH server: 8 players connect and are placed by eo_client_place_joiner(),
 * then 3 rounds run on a game clock 25 times faster than real time. In round 2 two players of
 * one team leave (autobalance moves someone) and come back; round 2 is a shutout, so the teams
 * are scrambled before round 3. Every frame calls eo_client_poll() and applies MOVE events.
 *
 * Usage: minimal_plugin URL STATE_FILE   (or EVENODDS_URL, EVENODDS_STATE)
 *        the server key comes from EVENODDS_SERVER_KEY (keys stay out of argv).
 * Exit status 0 only when every report was acknowledged by the service.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "evenodds/eo_client.h"

#define PLAYERS 8
#define FRAME_S 0.25     /* game seconds per frame (a frame sleeps 10 ms) */
#define ROUND_FRAMES 160 /* 40 s rounds */
#define BREAK_FRAMES 40  /* 10 s between rounds */

static double now;                   /* the game's clock, Unix seconds */
static char ids[PLAYERS][24];        /* SteamID64-like player ids */
static bool online[PLAYERS];
static eo_track_team team[PLAYERS];  /* the game's own view of the teams */

static const char *team_name(eo_track_team t)
{
    return t == EO_TRACK_A ? "A" : t == EO_TRACK_B ? "B" : t == EO_TRACK_WAITING ? "waiting" : "none";
}

static void on_log(void *ctx, eo_client_log_level level, const char *msg)
{
    static const char *const names[] = {"debug", "info", "warn", "error"};
    (void)ctx;
    if (level >= EO_CLIENT_LOG_INFO)
        printf("  [evenodds %s] %s\n", names[level], msg);
}

static int player_index(const char *id)
{
    for (int i = 0; i < PLAYERS; i++)
        if (strcmp(ids[i], id) == 0)
            return i;
    return -1;
}

/* A player joins the server and picks the team the library suggests. */
static void join(eo_client *c, int i)
{
    eo_track_team t = EO_TRACK_NONE;
    eo_client_player_connect(c, ids[i], now);
    if (eo_client_place_joiner(c, ids[i], &t) != 0 || t == EO_TRACK_NONE)
        t = i % 2 ? EO_TRACK_B : EO_TRACK_A; /* autobalance off: the game decides */
    online[i] = true;
    team[i] = t;
    eo_client_player_team(c, ids[i], t, now);
}

static void leave(eo_client *c, int i)
{
    online[i] = false;
    eo_client_player_disconnect(c, ids[i], now);
}

/* One frame: take the library's events, apply moves, advance the clock. */
static void frame(eo_client *c)
{
    eo_client_event ev;
    while (eo_client_poll(c, now, &ev) == 1) {
        int i = player_index(ev.id);
        switch (ev.type) {
        case EO_CLIENT_EV_RATING:
            printf("  rating %s: %.0f (%lld rounds%s)\n", ev.id, ev.rating.display,
                   (long long)ev.rating.rounds, ev.rating.provisional ? ", provisional" : "");
            break;
        case EO_CLIENT_EV_REPORTED:
            printf("  round %s reported: HTTP %d\n", ev.id, ev.status);
            break;
        case EO_CLIENT_EV_SCRAMBLE:
            printf("  scramble (%s): %dv%d from %s splits\n", ev.rule, ev.k, ev.k, ev.source);
            break;
        case EO_CLIENT_EV_MOVE:
            if (i < 0 || !online[i])
                break; /* he left meanwhile: nothing to move */
            printf("  move %s: %s -> %s (%s, %s)\n", ev.id, team_name(team[i]), team_name(ev.to),
                   ev.rule, ev.reason);
            team[i] = ev.to; /* a real game switches him here (TF2: ChangeClientTeam) */
            eo_client_player_team(c, ev.id, ev.to, now);
            break;
        }
    }
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
    now += FRAME_S;
}

int main(int argc, char **argv)
{
    const char *url = argc > 1 ? argv[1] : getenv("EVENODDS_URL");
    const char *state = argc > 2 ? argv[2] : getenv("EVENODDS_STATE");
    const char *key = getenv("EVENODDS_SERVER_KEY");
    if (url == NULL || state == NULL || key == NULL) {
        fprintf(stderr, "usage: EVENODDS_SERVER_KEY=KEY %s URL STATE_FILE\n", argv[0]);
        return 2;
    }
    eo_client_config cfg;
    eo_client_config_init(&cfg);
    cfg.url = url;
    cfg.key = key;
    cfg.state_file = state;
    cfg.server_id = "example-1";
    cfg.mode = "koth";
    cfg.trigger_mode = EO_TRIGGER_MODE_KOTH;
    cfg.log = on_log;
    eo_client *c = NULL;
    char err[256];
    if (eo_client_create(&cfg, &c, err, sizeof err) != 0) {
        fprintf(stderr, "minimal_plugin: %s\n", err);
        return 1;
    }
    eo_client_stats before;
    eo_client_get_stats(c, &before);

    now = (double)time(NULL);
    eo_client_map_start(c, "koth_example", now);
    for (int i = 0; i < PLAYERS; i++) {
        snprintf(ids[i], sizeof ids[i], "765611980000%05d", i + 1);
        join(c, i);
    }
    for (int f = 0; f < BREAK_FRAMES; f++)
        frame(c); /* the lookups come back */

    for (int r = 1; r <= 3; r++) {
        eo_client_round_start(c, now); /* spawn doors up */
        printf("round %d starts\n", r);
        int gone[2] = {-1, -1};
        for (int f = 0; f < ROUND_FRAMES; f++) {
            if (f == 4) /* everyone fights: each counts as a participant */
                for (int i = 0; i < PLAYERS; i++)
                    if (online[i])
                        eo_client_player_event(c, ids[i], EO_TRACK_DAMAGE_DEALT, now);
            if (r == 2 && f == 40) /* t = 10 s: two players of team B leave (4v2) */
                for (int i = 0, n = 0; i < PLAYERS && n < 2; i++)
                    if (online[i] && team[i] == EO_TRACK_B) {
                        gone[n++] = i;
                        leave(c, i);
                    }
            if (r == 2 && f == 100) /* t = 25 s: they reconnect; their earlier time counts */
                for (int n = 0; n < 2; n++)
                    if (gone[n] >= 0)
                        join(c, gone[n]);
            frame(c);
        }
        eo_client_round_info info;
        eo_client_round_info_init(&info);
        info.captured[0] = true;
        info.captured[1] = r != 2; /* round 2: B never captured the point (koth_shutout) */
        eo_winner w = r < 3 ? EO_WIN_A : EO_WIN_B;
        char rid[EO_ID_MAX + 1] = "";
        int rc = eo_client_round_end(c, w, &info, now, rid, sizeof rid);
        printf("round %d ends, winner %s: report %s (%s)\n", r, w == EO_WIN_A ? "A" : "B",
               rid[0] ? rid : "none", eo_strerror(rc));
        for (int f = 0; f < BREAK_FRAMES; f++)
            frame(c); /* scramble moves arrive here, before the next round starts */
    }

    if (eo_client_flush(c, 10000) != 0) /* shutdown only: never in a frame */
        printf("flush: timed out\n");
    frame(c); /* the last REPORTED and RATING events */
    eo_client_stats st;
    eo_client_get_stats(c, &st);
    printf("reports: %llu made, %llu acknowledged, %llu refused, %zu queued\n",
           (unsigned long long)st.reports_made, (unsigned long long)st.reports_acked,
           (unsigned long long)st.reports_refused, st.queued);
    bool ok = st.reports_made == 3 && st.reports_acked >= st.reports_made && st.queued == 0 &&
              st.reports_refused == 0 && st.reports_dropped == before.reports_dropped;
    eo_client_destroy(c);
    return ok ? 0 : 1;
}
