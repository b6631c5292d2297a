/* Synthetic round generator for tests and benchmarks (eo_testlib).
 *
 * Deterministic from a seed on every machine: its own PRNG (splitmix64), integer arithmetic,
 * and the core's libm-free eo__exp for the outcome logistic. A population of players with a
 * hidden true skill plays rounds of random team sizes; the outcome is drawn from a logistic of
 * the true skill difference, with occasional stalemates. Player ids look like SteamID64s
 * ("76561198" followed by 9 digits). */
#ifndef EO_TEST_GEN_H
#define EO_TEST_GEN_H

#include <stddef.h>
#include <stdint.h>

#include "evenodds/eo_round.h"

typedef struct eo_gen_config {
    uint64_t seed;
    uint32_t players;          /* population size, >= 2 * team_max */
    uint32_t team_min;         /* each round's team size is uniform in [team_min, team_max] */
    uint32_t team_max;         /* <= 128 */
    uint32_t draw_permille;    /* chance of a stalemate, per mille */
    uint32_t regulars;         /* the first `regulars` players play more often: */
    uint32_t regular_permille; /* each seat goes to a regular with this chance, per mille */
    int64_t start;             /* started_at of the first round, Unix seconds */
    uint32_t spacing;          /* seconds between round starts (>= 2) */
    uint32_t partial_permille; /* chance that a member played part of the round: its `time` is
                                  then k/8 for k uniform in 1..7 (0: every member plays in full,
                                  and no random draws are spent on it) */
} eo_gen_config;

/* 12v12, 2000 players, no regulars, 2% stalemates, seed 1. */
void eo_gen_config_default(eo_gen_config *c);

typedef struct eo_gen eo_gen;

/* Returns 0, EO_EINVAL (bad config) or EO_ENOMEM. */
int eo_gen_create(const eo_gen_config *c, eo_gen **out);
void eo_gen_destroy(eo_gen *g);

/* The next round. @p r points into the generator's memory (do not eo_round_free() it); ids
 * stay valid until eo_gen_destroy(), the rest until the next call. */
void eo_gen_next(eo_gen *g, eo_round *r);

/* Player @p i's id and hidden skill. */
const char *eo_gen_player_id(const eo_gen *g, uint32_t i);
int32_t eo_gen_player_skill(const eo_gen *g, uint32_t i);

/* Writes @p r as one canonical JSONL line (keys sorted, members as plain id strings, "\n"
 * at the end, NUL-terminated; "map" when the round has one) into @p buf. Returns the length,
 * or -1 if @p cap is too small. Ids must need no JSON escaping (generated ids never do). */
int eo_gen_jsonl(const eo_round *r, char *buf, size_t cap);

/* The canonical text (eo_round_canonical()) of the JSON object @p text (duplicate keys
 * refused), malloc'd; NULL when it is not one, or out of memory. */
char *eo_gen_canonical(const char *text);

/* Player @p i of eo_gen_max_round() as its raw id (EO_ID_MAX bytes and a NUL) in @p buf:
 * "P" and five digits, then '"' and '\\' in turn (each escaped in JSON, so written twice). */
void eo_gen_max_id(char tag, unsigned i, char buf[EO_ID_MAX + 1]);

/* The text of the largest round record the rules allow, unknown fields apart (docs/ROUNDS.md
 * "How large a stored round can be"): EO_PLAYERS_MAX members, the first 128 on team A, players
 * @p first, @p first + 1, ... modulo @p pop (pop >= EO_PLAYERS_MAX); every id (round @p round,
 * players, parties shared by pairs, server, map, mode) from eo_gen_max_id(); started_at and
 * ended_at the largest allowed; every member an object with "commander" and the four numbers:
 * with @p long_numbers reals whose canonical text is longest (23 bytes: "5e-324" and the like),
 * else 3-byte reals ("0.1") whose canonical text grows most (to 19 bytes). @p extra (may be
 * NULL) is appended before the closing brace (",\"x\":..."). Compact; malloc'd. */
char *eo_gen_max_round(unsigned round, unsigned first, unsigned pop, const char *winner,
                       int long_numbers, const char *extra);

/* A whole generated log held in memory, e.g. for a benchmark that must not time generation. */
typedef struct eo_gen_log {
    eo_round *rounds;
    size_t n;
    eo_gen *gen;      /* owns the ids */
    eo_member *members;
    char *round_ids;
} eo_gen_log;

/* Generates @p n rounds. Returns 0, EO_EINVAL or EO_ENOMEM. */
int eo_gen_log_create(const eo_gen_config *c, size_t n, eo_gen_log **out);
void eo_gen_log_destroy(eo_gen_log *log);

#endif
