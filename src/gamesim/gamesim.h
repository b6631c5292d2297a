/* evenodds-gamesim: simulated game servers with simulated players, talking to a running
 * evenodds service only through the client library (eo_client.h). Shared by its files:
 * gamesim.c (the scheduler, the summary), opts.c (the command line), world.c (the population
 * and its random numbers), server.c (one simulated game server's rounds) and roster.c (its
 * players). Names gs_*. */
#ifndef EO_GAMESIM_H
#define EO_GAMESIM_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_client.h"

/* ---- options ------------------------------------------------------------------------------ */

typedef struct gs_opts {
    const char *url, *pool, *key, *keys_file, *state_dir, *prefix;
    const char *queue;      /* queue-fed servers (queued.c): the queue, or NULL */
    int64_t session_rounds; /* rounds per session of a queue-fed server */
    double party_rate;      /* share of the lobby's tickets that are parties of two */
    int64_t servers, rounds, players, team_size, population;
    int64_t round_seconds, pace_ms, wait_ms, intermission_ms, timeout_ms, queue_slots;
    int64_t ab_strength;
    uint64_t seed;
    double churn;
    eo_trigger_mode mode;
    bool autobalance, scramble, hold, quiet, verbose;
} gs_opts;

/* Fills @p o from the command line (strings point into argv or static buffers), reads the
 * server key, makes the state directory. 0 (go on), 1 (--help printed) or -1 (bad usage,
 * after a message naming the option). */
int gs_opts_load(int argc, char **argv, gs_opts *o);

/* ---- random numbers (world.c) ------------------------------------------------------------- */

/* splitmix64: tiny, fast, and the same numbers on every machine, so a seed means the same
 * world everywhere. */
typedef struct gs_rng {
    uint64_t s;
} gs_rng;

void gs_rng_seed(gs_rng *r, uint64_t seed, uint64_t stream);
uint64_t gs_rng_next(gs_rng *r);
double gs_rng_unit(gs_rng *r);              /* uniform in [0, 1) */
uint64_t gs_rng_below(gs_rng *r, uint64_t n); /* uniform in [0, n), n >= 1 */
bool gs_rng_chance(gs_rng *r, double p);

/* ---- the world (world.c) ------------------------------------------------------------------ */

#define GS_MAP_NAME_MAX 48

/* Everyone who may play, with hidden true skills, and the maps with their true biases. Who is
 * online where: server[i] is the server index or -1 (offline, may join anywhere). */
typedef struct gs_world {
    size_t n;
    double *skill;
    int *server;
    bool *seen;           /* ever connected in this run */
    uint32_t *offline;    /* indices of offline players (unordered) */
    size_t *pos;          /* position of each player in offline[] (valid while offline) */
    size_t noffline;
    size_t nmaps;
    char (*map)[GS_MAP_NAME_MAX];
    double *bias;         /* logit offset in side A's favour, per map */
    double scale;         /* skill points per logit */
    double draw_rate;     /* draw chance of a 50/50 round */
    uint64_t seed;
} gs_world;

/* Builds the world for @p seed: @p population players and 8 maps named "MODE_mapNN".
 * 0, or EO_EINVAL / EO_ENOMEM with a message in @p err. */
int gs_world_create(gs_world *w, uint64_t seed, size_t population, const char *mode, char *err,
                    size_t errlen);
void gs_world_free(gs_world *w);

/* Player @p i's id: "gs<seed>-p<i+1>", the same for a seed in every run, so that a second run
 * against the same pool meets the same (returning) players. */
void gs_world_player_id(const gs_world *w, size_t i, char *out, size_t cap);

/* Takes a random offline player onto server @p server: his index, or -1 when nobody is
 * offline. */
long gs_world_take(gs_world *w, gs_rng *r, int server);

/* Player @p i goes offline. */
void gs_world_release(gs_world *w, size_t i);

/* ---- timing of client calls --------------------------------------------------------------- */

/* Every eo_client_* call the frame loop makes goes through GS_CALL, which measures it with
 * CLOCK_MONOTONIC: the longest one shows whether any call waited on the network. */
typedef struct gs_timing {
    int64_t t0;
    int rc;
    int64_t max_ns;
    const char *max_fn;
    uint64_t calls;
    uint64_t over_1ms;  /* calls that took more than a millisecond (a busy CPU, or a wait) */
} gs_timing;

extern gs_timing gs_t;

int64_t gs_mono_ns(void);
void gs_timed(const char *fn);

#define GS_CALL(fn, ...) (gs_t.t0 = gs_mono_ns(), gs_t.rc = fn(__VA_ARGS__), gs_timed(#fn), gs_t.rc)

/* ---- one simulated game server (server.c) ------------------------------------------------- */

/* Batches per round: each is a slice of the round's virtual time, with events, then a poll. */
#define GS_TICKS 20

/* One connected player, as the game sees him. */
typedef struct gs_member {
    size_t who;            /* index in the world */
    char id[EO_ID_MAX + 1];
    eo_track_team team;    /* where the game has him */
    double since;          /* start of his open segment on A or B (while a round runs) */
    double leave_at;       /* when he leaves during this round; < 0: he stays */
    int64_t score;
    bool dead, prot, afk;
} gs_member;

typedef enum { GS_PREGAME, GS_INTERMISSION, GS_RUNNING, GS_ENDING, GS_DONE } gs_phase;

/* What one server counted (the library's own counters come from eo_client_get_stats()). */
typedef struct gs_counts {
    uint64_t rounds_ended, rounds_unreported, round_errors;
    uint64_t joins, leaves, switches, part_events;
    uint64_t wins[3];                 /* A, B, draw */
    uint64_t ev_rating, ev_reported_ok, ev_reported_refused;
    uint64_t ev_scramble_fresh, ev_scramble_cache;
    uint64_t moves_scramble, moves_autobalance, moves_gone, moves_capped;
    uint64_t maps, holds, call_errors;
} gs_counts;

typedef struct gs_run gs_run;

typedef struct gs_server {
    gs_run *run;
    int index;                         /* 0-based */
    char sid[EO_ID_MAX + 1];           /* "gs-1" */
    char state_file[1100];
    eo_client *c;
    gs_rng rng;
    gs_member *m;                      /* the players connected here */
    size_t nm, cap;
    double *arrivals;                  /* virtual times when replacements connect (cap) */
    size_t narrivals;
    uint64_t parties;                  /* party ids made, "SID-partyN" */
    gs_phase phase;
    double now;                        /* the virtual clock, Unix seconds */
    bool running;                      /* a round runs */
    int tick;
    int64_t rounds_done;
    double round_start;
    double diff_time;                  /* Σ ±skill·seconds of closed segments this round */
    size_t map;
    uint32_t map_round, map_wins[2];
    int64_t inter_since_ms, not_before_ms;
    bool expect_splits;
    bool holding;
    int64_t hold_since_ms, hold_said_ms;
    char first_id[EO_ID_MAX + 1], last_id[EO_ID_MAX + 1];
    eo_client_stats at_start;
    gs_counts n;
} gs_server;

/* Everything one run shares. */
struct gs_run {
    const gs_opts *o;
    gs_world world;
    gs_server *sv;
    size_t nsv;
    double t0;                         /* Unix time at the start */
    int64_t start_ms;
    int64_t rounds_total, rounds_done;
    int next_progress;                 /* next tenth to print */
    volatile sig_atomic_t *stop;
};

/* Sets up server @p index: its client (state file in the state directory) and its first
 * players. 0, or a negative EO_E* code after a message on stderr. */
int gs_server_init(gs_server *s, gs_run *run, int index);

/* Advances the server by one step (a batch of events, a round start or end). Returns true when
 * it did something, false when it waits on real time (intermission, a full report queue) or
 * is done. Never blocks. */
bool gs_server_step(gs_server *s);

/* Takes whatever the client has (events, log lines), e.g. while waiting for the final flush. */
void gs_server_drain(gs_server *s);

/* Destroys the client and frees the server. */
void gs_server_free(gs_server *s);

/* ---- queue-fed servers (queued.c) ---------------------------------------------------------- */

/* Runs --queue: each server registers as an instance of the queue (eo_instance.h) and plays
 * the sessions the coordinator gives it; a lobby (the game's frontend, plain HTTP) files
 * tickets for offline players and sends each assigned player to his server with his join
 * secret. Prints the summary; returns the exit status. */
int gs_queued_run(gs_run *run);

/* ---- the roster (roster.c), for server.c -------------------------------------------------- */

static inline const gs_opts *gs_o(const gs_server *s)
{
    return s->run->o;
}

/* A client call failed: counted (the run then ends with status 1) and printed. */
void gs_call_failed(gs_server *s, const char *what, const char *id, int rc);
/* The next event of a batch happens a small step later on the virtual clock. */
void gs_advance(gs_server *s);
size_t gs_count_team(const gs_server *s, eo_track_team t);
/* Players on A, B or waiting: the ones a split would take. */
size_t gs_eligible(const gs_server *s);
/* Closes @p m's segment on A or B at now: his skill counts for his team for that long. */
void gs_close_segment(gs_server *s, gs_member *m);
/* Waiting players take the free places. */
void gs_fill_slots(gs_server *s);
/* No side above --team-size: the last ones moved wait. */
void gs_cap_teams(gs_server *s);
/* Players connect until the server has --players. */
void gs_join_fill(gs_server *s);
/* Replacements due before @p until connect. */
void gs_arrivals_due(gs_server *s, double until);
/* Member @p i disconnects; a replacement is scheduled. */
void gs_leave(gs_server *s, size_t i);
/* Member @p i switches team by himself, if the game lets him. */
void gs_try_switch(gs_server *s, size_t i);

/* Monotonic milliseconds. */
int64_t gs_mono_ms(void);

/* A round ended somewhere: prints a progress line at each tenth of the run (gamesim.c). */
void gs_progress(gs_run *run);

#endif
