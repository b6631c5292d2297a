/**
 * @file eo_tracker.h
 * The round tracker of the game-server client library (docs/CLIENT.md "What is reported and
 * who is rated"): follows who is connected, on which team, since when, and who took part in the
 * current round, and at round end builds
 * the canonical round record. Pure: no I/O, no clock (the caller passes every time), no
 * threads; one tracker is used by one thread at a time (the game's).
 *
 * Rules (docs/CLIENT.md, "What the library reports", states them for mod authors):
 * - Teams: EO_TRACK_A and EO_TRACK_B play; EO_TRACK_WAITING is eligible for the next split but
 *   not playing (arena's queue, "Waiting to Play"); EO_TRACK_NONE is spectator or unassigned.
 * - While a round runs, each player's time on A and on B is summed over segments: a segment
 *   opens when he is on the team at round start or moves onto it later, and closes when he
 *   leaves the team, disconnects, or the round ends. Time before a disconnect still counts
 *   after a reconnect (seed 004): a reconnect is eo_tracker_connect() of a known id.
 * - Participation (seed 000, "Session Flow"): a player is rated when he was on A or B at some
 *   time in the round and either is still connected on A or B at round end or dealt damage,
 *   took damage or healed (eo_tracker_participate()) during the round, before leaving. A player
 *   who disconnected (or went to spectator) without taking part is not rated.
 * - A rated player is a member of the team on which he spent the most time (ties: the team he
 *   was on last). His member carries time = that time / round length (in [0, 1]), joined =
 *   the start of his first segment on that team and left = the end of his last, in seconds
 *   from round start. Players with no time on either team (zero-length round segments) are
 *   not rated.
 * - Between rounds (after eo_tracker_round_end(), before the next eo_tracker_round_start())
 *   team changes and participation only change the roster.
 *
 * Times are seconds on the caller's clock (Unix seconds recommended: started_at and ended_at of
 * the record are their floor, 0 when negative or past year 9999), as doubles; they must not go
 * backwards (a smaller time is taken as the last one seen); a time that is not finite is
 * EO_EINVAL.
 *
 * Ownership: ids passed in are copied; strings returned point into the tracker and stay valid
 * until the next call that changes it. eo_tracker_destroy(NULL) is a no-op.
 */
#ifndef EO_TRACKER_H
#define EO_TRACKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Where a player is. */
typedef enum eo_track_team {
    EO_TRACK_NONE = 0,    /**< spectator or unassigned: not eligible */
    EO_TRACK_A = 1,       /**< team A (plays) */
    EO_TRACK_B = 2,       /**< team B (plays) */
    EO_TRACK_WAITING = 3  /**< eligible for the next split, not playing */
} eo_track_team;

/** Largest number of connected players (and of players remembered during a round): when a new
 *  player needs a slot held by one who left during the round, the one who left with the least
 *  claim loses it (first those who never took part, then the least time played). */
#define EO_TRACK_PLAYERS_MAX EO_PLAYERS_MAX

/** What the game knows of one connected player (for autobalance and splits). */
typedef struct eo_track_player {
    const char *id;       /**< the player id (points into the tracker) */
    eo_track_team team;   /**< where he is now */
    double team_since;    /**< when he moved to his current team (or connected) */
    const char *party;    /**< party id or NULL (points into the tracker) */
    bool is_protected;    /**< the game says: do not move him now */
    bool dead;            /**< dead now */
    bool has_score;       /**< score is set */
    int64_t score;        /**< in-round score */
} eo_track_player;

typedef struct eo_tracker eo_tracker;

/** Creates an empty tracker (no round running). Returns 0 or EO_ENOMEM. */
int eo_tracker_create(eo_tracker **out);

/** Releases @p t. NULL is a no-op. */
void eo_tracker_destroy(eo_tracker *t);

/**
 * A player connected (team NONE), or reconnected: a known id keeps what the round counted
 * for him. Returns 0, EO_EINVAL (id fails eo_id_check(), NULL argument) or EO_ELIMIT (already
 * EO_TRACK_PLAYERS_MAX connected). Connecting a connected player changes nothing.
 */
int eo_tracker_connect(eo_tracker *t, const char *id, double now);

/**
 * A player disconnected: his open segment closes; during a round he stays remembered for the
 * record (when he was on A or B in it), else he is forgotten. A reconnect comes back on
 * EO_TRACK_NONE with dead, protected and score cleared and his party kept. Returns 0,
 * EO_EINVAL or EO_ENOTFOUND (not connected).
 */
int eo_tracker_disconnect(eo_tracker *t, const char *id, double now);

/**
 * A player's team changed (by himself, the game or an applied move). An id not connected is
 * connected first. Resets dead, protected and score to false/0 when the team changes.
 * Returns 0, EO_EINVAL (bad id or team) or EO_ELIMIT.
 */
int eo_tracker_set_team(eo_tracker *t, const char *id, eo_track_team team, double now);

/** Kinds of participation; each counts the same (seed 000). */
typedef enum eo_track_event {
    EO_TRACK_DAMAGE_DEALT = 0,
    EO_TRACK_DAMAGE_TAKEN = 1,
    EO_TRACK_HEALED = 2
} eo_track_event;

/**
 * A connected player dealt damage, took damage or healed. Counts only while a round runs and
 * he is on A or B. Returns 0, EO_EINVAL or EO_ENOTFOUND.
 */
int eo_tracker_participate(eo_tracker *t, const char *id, eo_track_event ev, double now);

/**
 * A connected player is commanding now (NS2's commander chair): his member of this round's
 * record carries "commander": true (the hive model rates commanders separately). Counts only
 * while a round runs and he is on A or B. Returns 0, EO_EINVAL or EO_ENOTFOUND.
 */
int eo_tracker_set_commander(eo_tracker *t, const char *id);

/** Per-player facts for autobalance (dead, protected, score) and the party; EO_ENOTFOUND
 *  when @p id is not connected, EO_EINVAL for a bad id or party (NULL party clears it). */
int eo_tracker_set_dead(eo_tracker *t, const char *id, bool dead);
int eo_tracker_set_protected(eo_tracker *t, const char *id, bool is_protected);
int eo_tracker_set_score(eo_tracker *t, const char *id, int64_t score);
int eo_tracker_set_party(eo_tracker *t, const char *id, const char *party);

/**
 * A round starts now (spawn doors up): every player on A or B opens a segment at 0 and the
 * round's counts are cleared. Returns 0, EO_EINVAL (NULL) or EO_EBUSY (a round is running:
 * end it first).
 */
int eo_tracker_round_start(eo_tracker *t, double now);

/** True while a round runs. */
bool eo_tracker_round_running(const eo_tracker *t);

/**
 * The round ends now with @p winner: closes every segment and builds the canonical record into
 * @p out (owned by the caller, eo_round_free()): id @p round_id, optional @p server, @p map,
 * @p mode (NULL: absent), started_at and ended_at the floors of the start and end times, the
 * rated members of each team in the order they first joined that team in the round (members
 * with time, joined and left set, and party when set). Once the arguments are accepted the
 * round is over either way; disconnected players are then forgotten and the counts cleared.
 * Returns 0; EO_EINVAL when no round runs or an argument is bad (NULL @p t or @p out, invalid
 * winner, ids failing eo_id_check(), @p now not finite: nothing changes, the round still runs),
 * or when the round has zero length or a team has no rated member (the round ends); EO_ENOMEM;
 * EO_EINTERNAL if the record fails eo_round_validate() (a bug). @p err, when not NULL, says
 * which field on every error. On failure @p out is left zeroed.
 */
int eo_tracker_round_end(eo_tracker *t, double now, eo_winner winner, const char *round_id,
                         const char *server, const char *map, const char *mode, eo_round *out,
                         eo_round_error *err);

/** Ends the running round without a record (restarted, cut short by a map change): as
 *  eo_tracker_round_end() but nothing is built. No round running: nothing to do. Returns 0 or
 *  EO_EINVAL (NULL, @p now not finite). */
int eo_tracker_round_abandon(eo_tracker *t, double now);

/** Number of connected players. */
size_t eo_tracker_count(const eo_tracker *t);

/** Number of connected players on @p team. */
size_t eo_tracker_count_team(const eo_tracker *t, eo_track_team team);

/**
 * The @p i-th connected player (0 <= i < eo_tracker_count(), in connection order; a reconnect
 * is a new connection) into @p out. Returns 0, EO_EINVAL (NULL) or EO_ERANGE.
 */
int eo_tracker_player_at(const eo_tracker *t, size_t i, eo_track_player *out);

/** The connected player @p id into @p out (may be NULL to test presence). 0, EO_EINVAL (bad
 *  id) or EO_ENOTFOUND. */
int eo_tracker_player(const eo_tracker *t, const char *id, eo_track_player *out);

#ifdef __cplusplus
}
#endif
#endif
