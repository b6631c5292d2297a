/**
 * @file eo_triggers.h
 * Scramble triggers: should the teams be scrambled before the next round, and why.
 * A pure function of a small game-state record and a configuration; the answer names the rule
 * that fired, or the guard that blocked it, with stable strings so the game can log why.
 *
 * Rules (docs/BALANCER.md, "Scramble triggers", gives the table with sources):
 * - arena (seed 000, "Session Flow"): round 1 is a duel; round 2 is always scrambled (decided at
 *   round 1's end: "arena_round2"); from then on a win streak of cfg.arena_streak (3) rounds
 *   ("arena_streak");
 * - attack/defend and payload (seed 000, "Scramble Triggers By Gamemode"): the attackers ran out
 *   of time without capturing any objective ("ad_no_capture"), or cfg.ad_full_rounds (2) full
 *   rounds completed ("ad_two_rounds");
 * - KOTH, 5CP: the losing team never captured a control point ("koth_shutout", "cp5_shutout");
 * - CTF: the losing team never captured the flag ("ctf_shutout");
 * - every mode but arena: the Waiting For Players period expired ("wfp_expired", unconditional);
 * - Valve's auto-scramble (ANCHORS §2, Source SDK 2013 teamplay_roundbased_gamerules.cpp): one
 *   team leads by >= cfg.win_difference (2) round wins ("win_difference"), never in arena.
 * Guards, checked per matching rule in this order: "mode_excluded" (tournament: no rule at all;
 * arena: no win difference, no WFP scramble), "min_players", "consecutive" (the teams were
 * scrambled before the round that just ended), "map_end" (the map may end at the next round
 * end). The unconditional rules (arena_round2, wfp_expired) pass "consecutive" and "map_end".
 *
 * Rounds and counters: a scramble decided at the end of round r applies from round r + 1.
 * st.round counts the rounds ended on this map including this one; wins, streak and
 * full_rounds count since the last scramble on this map (or the map's start): the caller
 * resets them when it scrambles, as TF2 resets team scores when it scrambles.
 *
 * Pure, no allocation, no globals but constant tables: safe from any thread.
 */
#ifndef EO_TRIGGERS_H
#define EO_TRIGGERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Game mode. Names: "arena", "attack_defend", "payload", "koth", "cp5", "ctf", "other". */
typedef enum eo_trigger_mode {
    EO_TRIGGER_MODE_ARENA = 0,
    EO_TRIGGER_MODE_ATTACK_DEFEND = 1,
    EO_TRIGGER_MODE_PAYLOAD = 2,
    EO_TRIGGER_MODE_KOTH = 3,
    EO_TRIGGER_MODE_CP5 = 4, /**< 5CP: symmetric five control points */
    EO_TRIGGER_MODE_CTF = 5,
    EO_TRIGGER_MODE_OTHER = 6, /**< any other mode: only wfp_expired and win_difference apply */
    EO_TRIGGER_MODE_COUNT = 7
} eo_trigger_mode;

/** What happened. Names: "round_end", "wfp_expired". */
typedef enum eo_trigger_event {
    EO_TRIGGER_EVENT_ROUND_END = 0,   /**< a round ended (st.round is its number) */
    EO_TRIGGER_EVENT_WFP_EXPIRED = 1, /**< the Waiting For Players period expired */
    EO_TRIGGER_EVENT_COUNT = 2
} eo_trigger_event;

/**
 * Rules, guards and "none" in one enum, so one name table serves the log and the codec. The
 * values and their names are stable (they may be stored and logged); names are unique.
 */
typedef enum eo_trigger_rule {
    EO_TRIGGER_NONE = 0, /**< "none": no rule matched */
    /* rules, in precedence order: the first matching rule that no guard blocks fires */
    EO_TRIGGER_WFP_EXPIRED = 1,    /**< "wfp_expired" (unconditional) */
    EO_TRIGGER_ARENA_ROUND2 = 2,   /**< "arena_round2" (unconditional) */
    EO_TRIGGER_ARENA_STREAK = 3,   /**< "arena_streak" */
    EO_TRIGGER_AD_NO_CAPTURE = 4,  /**< "ad_no_capture" */
    EO_TRIGGER_AD_TWO_ROUNDS = 5,  /**< "ad_two_rounds" */
    EO_TRIGGER_KOTH_SHUTOUT = 6,   /**< "koth_shutout" */
    EO_TRIGGER_CP5_SHUTOUT = 7,    /**< "cp5_shutout" */
    EO_TRIGGER_CTF_SHUTOUT = 8,    /**< "ctf_shutout" */
    EO_TRIGGER_WIN_DIFFERENCE = 9, /**< "win_difference" */
    /* guards, in the order they are checked */
    EO_TRIGGER_GUARD_MODE_EXCLUDED = 10, /**< "mode_excluded" */
    EO_TRIGGER_GUARD_MIN_PLAYERS = 11,   /**< "min_players" */
    EO_TRIGGER_GUARD_CONSECUTIVE = 12,   /**< "consecutive" */
    EO_TRIGGER_GUARD_MAP_END = 13,       /**< "map_end" */
    EO_TRIGGER_RULE_COUNT = 14
} eo_trigger_rule;

/** First and last rule value (the rest are guards or none). */
#define EO_TRIGGER_RULE_FIRST EO_TRIGGER_WFP_EXPIRED
#define EO_TRIGGER_RULE_LAST EO_TRIGGER_WIN_DIFFERENCE

/**
 * The game state at the event. eo_trigger_state_init() gives the neutral record (no winner, no
 * limits, no earlier scramble); set what the game knows. Fields a mode does not use are
 * ignored (but still validated).
 */
typedef struct eo_trigger_state {
    eo_trigger_mode mode;
    eo_trigger_event event;
    bool tournament; /**< tournament mode (TF2 mp_tournament): teams are fixed, never scrambled */
    /** Rounds ended on this map, this one included: >= 1 at a round end; at WFP expiry the
     *  rounds ended so far (usually 0). Stages of a multi-stage map count as rounds if the
     *  game counts them so; never reset by a scramble. */
    uint32_t round;
    eo_winner winner;  /**< the round's winner, EO_DRAW for a stalemate (round end only) */
    uint32_t wins[2];  /**< round wins of A and B since the last scramble (TF2's team scores);
                            wins[0] + wins[1] <= round */
    eo_winner streak_team; /**< the team on a win streak (EO_WIN_A or EO_WIN_B) when streak > 0 */
    uint32_t streak;   /**< consecutive round wins of streak_team, this round included, since
                            the last scramble: <= rounds since the last scramble */
    bool captured[2];  /**< A, B captured at least once this round (a control point in KOTH
                            and 5CP, the flag in CTF) */
    bool attackers_timed_out; /**< attack/defend, payload: the round ended because the
                                   attackers ran out of time without capturing any objective */
    uint32_t full_rounds; /**< attack/defend, payload: full rounds of the map (all its stages)
                               completed since the last scramble: <= rounds since it */
    int32_t time_left; /**< seconds left on the map before it changes; < 0: no time limit */
    uint32_t win_limit;  /**< the map ends when a team has this many wins (mp_winlimit); 0: none */
    uint32_t max_rounds; /**< the map ends after this many rounds (mp_maxrounds); 0: none */
    uint32_t players;    /**< eligible players: on a team or queued, not spectating */
    /** st.round at the last scramble on this map (a scramble at WFP expiry before round 1 is 0);
     *  -1: none. Must be <= round. */
    int32_t last_scramble_round;
} eo_trigger_state;

/** Policy. eo_trigger_config_init() gives the defaults below. */
typedef struct eo_trigger_config {
    bool win_difference_on;   /**< Valve's rule on (default true, as mp_scrambleteams_auto 1) */
    uint32_t win_difference;  /**< lead in round wins that fires it, >= 1 (default 2) */
    uint32_t min_players;     /**< fewer eligible players block every rule (default 4: the
                                   smallest split is 2v2) */
    uint32_t map_end_window;  /**< seconds: time_left <= this blocks (default 300, Valve's) */
    uint32_t arena_streak;    /**< arena win streak that fires, >= 1 (default 3, seed 000) */
    uint32_t ad_full_rounds;  /**< attack/defend and payload full rounds that fire, >= 1
                                   (default 2, seed 000) */
} eo_trigger_config;

/** The answer. */
typedef struct eo_trigger_result {
    bool scramble;         /**< scramble the teams before the next round */
    /** The rule that fired; when scramble is false, the first matching rule (all were
     *  blocked) or EO_TRIGGER_NONE when none matched. */
    eo_trigger_rule rule;
    /** When a matching rule was blocked: the guard that blocked it; else EO_TRIGGER_NONE. */
    eo_trigger_rule guard;
    /** What to log: rule when scramble, else guard when set, else EO_TRIGGER_NONE. */
    eo_trigger_rule reason;
    /** On EO_EINVAL: the field at fault ("round", "streak", "win_difference", …), a static
     *  string named as the struct member; else NULL. */
    const char *field;
} eo_trigger_result;

/** Sets @p st to the neutral record: round-end event, mode other, round 1, winner EO_DRAW,
 *  no limits (time_left -1), no earlier scramble (-1), everything else 0 or false. */
void eo_trigger_state_init(eo_trigger_state *st);

/** Sets @p cfg to the defaults documented in eo_trigger_config. */
void eo_trigger_config_init(eo_trigger_config *cfg);

/**
 * Evaluates the scramble rules for @p st under @p cfg (NULL: the defaults) into @p out.
 * Returns 0, or EO_EINVAL when an argument is NULL or a field is out of range or inconsistent
 * (out->field names it when @p out is not NULL): an enum out of range, round 0 at a round end,
 * wins[0] + wins[1] > round, streak > 0 with streak_team not A or B (or, at a round end with
 * a winner, not the winner), last_scramble_round outside [-1, round], streak or full_rounds
 * above the rounds since the last scramble (round - max(last_scramble_round, 0)), or a config
 * threshold of 0. Pure; O(1).
 */
int eo_trigger_eval(const eo_trigger_state *st, const eo_trigger_config *cfg,
                    eo_trigger_result *out);

/** Name of a mode, or NULL when @p m is out of range. Static string. */
const char *eo_trigger_mode_name(eo_trigger_mode m);

/** Mode from its name (@p len bytes, no NUL needed; exact, case-sensitive). Returns 0 with
 *  *out set, or EO_EINVAL (unknown name or a NULL argument). */
int eo_trigger_mode_from_name(const char *name, size_t len, eo_trigger_mode *out);

/** Name of an event, or NULL when @p e is out of range. Static string. */
const char *eo_trigger_event_name(eo_trigger_event e);

/** Event from its name, as eo_trigger_mode_from_name(). */
int eo_trigger_event_from_name(const char *name, size_t len, eo_trigger_event *out);

/** Name of a rule or guard ("none" for EO_TRIGGER_NONE), or NULL when out of range. */
const char *eo_trigger_rule_name(eo_trigger_rule r);

/** Rule or guard from its name, as eo_trigger_mode_from_name(). */
int eo_trigger_rule_from_name(const char *name, size_t len, eo_trigger_rule *out);

#ifdef __cplusplus
}
#endif
#endif
