/**
 * @file eo_round.h
 * The canonical round record (see docs/ARCHITECTURE.md, "The canonical round record") as plain
 * C values, and its semantic validation. Pure: no I/O, no JSON (the codec in eo_codec.h maps
 * JSON to and from these values).
 *
 * Ownership: an eo_round owns every string and array it points to; eo_round_free() releases
 * them all. Strings are NUL-terminated UTF-8.
 */
#ifndef EO_ROUND_H
#define EO_ROUND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Outcome of a round from team A's side. */
typedef enum { EO_WIN_A = 0, EO_WIN_B = 1, EO_DRAW = 2 } eo_winner;

/** Which optional fields of an eo_member were given. */
enum {
    EO_MEMBER_TIME = 1u << 0,   /**< time is set */
    EO_MEMBER_JOINED = 1u << 1, /**< joined is set */
    EO_MEMBER_LEFT = 1u << 2,   /**< left is set */
    EO_MEMBER_PLAYTIME = 1u << 3 /**< playtime is set */
};

/** One participant of a round. */
typedef struct eo_member {
    char *id;        /**< player id, owned; valid per eo_id_check() */
    unsigned has;    /**< EO_MEMBER_* bits for the optional numbers below */
    double time;     /**< fraction of the round on this team, in [0, 1] */
    double joined;   /**< seconds from round start, >= 0 */
    double left;     /**< seconds from round start, >= joined */
    bool commander;  /**< spent time commanding (NS2) */
    char *party;     /**< party id, owned, or NULL */
    double playtime; /**< seconds played before (NS2 hive initial skill), >= 0 */
    char *name;      /**< the player's name in this round (display only, ids stay the key), owned,
                          or NULL; valid per eo_id_check() when set */
} eo_member;

/** One round. Optional strings are NULL when absent; optional times are 0 when absent. */
typedef struct eo_round {
    char *id;            /**< round id, unique within a pool; the idempotency key. Owned. */
    char *server;        /**< server id or NULL. Owned. */
    char *map;           /**< map name or NULL. Owned. */
    char *mode;          /**< game mode or NULL. Owned. */
    int64_t started_at;  /**< Unix seconds (UTC), 0 when absent */
    int64_t ended_at;    /**< Unix seconds (UTC), 0 when absent */
    eo_winner winner;
    eo_member *team[2];  /**< team[0] is A, team[1] is B. Owned arrays. */
    size_t n[2];         /**< number of members of each team, each >= 1 */
} eo_round;

/**
 * Releases everything @p r owns and zeroes it. @p r itself is not freed. NULL is a no-op.
 */
void eo_round_free(eo_round *r);

/** Where validation failed: a field path such as "A[3].time" or "winner". */
typedef struct eo_round_error {
    char field[64];    /**< JSON-style path of the offending field */
    char message[160]; /**< what is wrong, in English, without the field name */
} eo_round_error;

/**
 * Checks the rules of the canonical record that span fields: ids (and names, when set) valid,
 * both teams non-empty,
 * no player on both teams or twice on one team, times in [0, 1], 0 <= joined <= left, playtime
 * finite and >= 0, at most
 * EO_PLAYERS_MAX players in all. On failure returns EO_EINVAL and, when @p err is not NULL,
 * fills it. Pure.
 */
int eo_round_validate(const eo_round *r, eo_round_error *err);

/**
 * A member's partial-play weight: its share of the round in [0, 1]. `time` when given; else,
 * when the member has `joined` or `left` and the round has both started_at and ended_at with
 * ended_at > started_at, (min(left, length) − joined) / length with left defaulting to the
 * round's length and joined to 0; otherwise 1 (the whole round). Pure.
 */
double eo_round_member_weight(const eo_round *r, const eo_member *m);

/**
 * Forgets every member's partial play: clears `time`, `joined` and `left` (and their bits), so
 * that eo_round_member_weight() and every model's eo_model_member_weight() give 1 for each
 * member. `playtime` and `commander` are kept (they are not weights). The CLI's --no-weights
 * rates a log this way to compare a model with and without time weights. Pure.
 */
void eo_round_drop_times(eo_round *r);

#ifdef __cplusplus
}
#endif
#endif
