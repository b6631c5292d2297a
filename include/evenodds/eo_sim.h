/**
 * @file eo_sim.h
 * A simulated world in closed loop (docs/SIM.md): players with hidden true skills
 * show up on a server, a balancer forms two teams from the ratings a model holds so far, the
 * round's outcome is drawn from the true skills, and the model rates the round. Every round is
 * a canonical round record (eo_round.h), so what the simulator produced can be written as JSONL
 * and replayed, and reports over time say how good the ratings and the teams are.
 *
 * The true outcome model: with s_i a player's true skill, w_i his partial-play weight
 * (eo_round_member_weight() of his member, as the models see it; 1 for everyone in a world
 * whose times carry no information), b the map's true bias in side A's favour (a logit
 * offset) and π the world's presence effect (a logit per player, 0 by default),
 *     P_true(A) = σ((Σ_A w_i·s_i − Σ_B w_i·s_i) / scale + b + π·(Σ_A w_i − Σ_B w_i)),
 *     σ(x) = 1 / (1 + e^−x);
 * a round is a draw with probability d·4·P_true·(1 − P_true) (d the draw rate, reached by
 * 50/50 rounds), and otherwise A wins with probability P_true.
 *
 * Pure and deterministic: the same configuration (seed included) gives the same rounds, bit
 * for bit, on every machine (its own PRNG, and the core's eo__exp/eo__log for the world). The
 * world (who shows up, skills, drift, maps, partial play and the uniform numbers behind the
 * outcomes) comes from one random stream and the random balancer from another, so two
 * simulations with the same seed and different balancers or models face the same world.
 *
 * Ownership: eo_sim_create() allocates; eo_sim_destroy() frees (NULL is a no-op). The pool
 * (eo_sim_pool()) and every string returned belong to the simulator. Thread safety: none; one
 * thread at a time per simulator.
 */
#ifndef EO_SIM_H
#define EO_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "eo_common.h"
#include "eo_pool.h"
#include "eo_round.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Distribution of true skills, each with mean skill_mean and standard deviation skill_sd. */
typedef enum {
    EO_SIM_SKILL_NORMAL = 0,  /**< normal */
    EO_SIM_SKILL_UNIFORM = 1, /**< uniform on mean ± √3·sd */
    EO_SIM_SKILL_BIMODAL = 2, /**< half N(mean − 0.8·sd, 0.6·sd), half N(mean + 0.8·sd, 0.6·sd) */
    EO_SIM_SKILL_SKEWED = 3,  /**< mean + sd·(E − 1), E exponential of mean 1: a few very strong */
    EO_SIM_SKILL_COUNT
} eo_sim_skill;

/** How teams are formed. */
typedef enum {
    EO_SIM_BAL_RANDOM = 0,      /**< the first 2k present, shuffled into A and B */
    EO_SIM_BAL_ALTERNATION = 1, /**< the first 2k present by rating, A B A B … */
    EO_SIM_BAL_SNAKE = 2,       /**< the first 2k present by rating, A B B A A B B A … */
    EO_SIM_BAL_OURS = 3,        /**< eo_split_solve() on all present, bench by the solver;
                                     past the work limit eo_balance_solve()'s local search */
    EO_SIM_BAL_COUNT
} eo_sim_balancer;

/** Names "normal", "uniform", "bimodal", "skewed"; NULL if out of range. */
const char *eo_sim_skill_name(eo_sim_skill d);
/** Parses a skill distribution name. Returns 0 or EO_EINVAL. */
int eo_sim_skill_parse(const char *name, eo_sim_skill *out);
/** Names "random", "alternation", "snake", "ours"; NULL if out of range. */
const char *eo_sim_balancer_name(eo_sim_balancer b);
/** Parses a balancer name. Returns 0 or EO_EINVAL. */
int eo_sim_balancer_parse(const char *name, eo_sim_balancer *out);

/** Largest team the simulator forms (present players are at most EO_SPLIT_EXACT_MAX = 64). */
#define EO_SIM_TEAM_MAX 32
/** Most players a simulation creates (ids are "p" and six digits). */
#define EO_SIM_PLAYERS_MAX 999999u
/** Most maps. */
#define EO_SIM_MAPS_MAX 99u
/** Default search nodes the exact splitter may spend on one round's teams (~0.1-0.3 s). */
#define EO_SIM_WORK_LIMIT ((uint64_t)10000000)

/** A world and its loop. Limits are checked by eo_sim_create(). */
typedef struct eo_sim_config {
    uint64_t seed;
    uint32_t players;            /**< players present at the start, >= 2·team_max + 1 */
    uint32_t team_min, team_max; /**< 2 <= team_min <= team_max <= EO_SIM_TEAM_MAX */
    eo_sim_skill skill;          /**< distribution of true skills */
    double skill_mean;           /**< its mean (skill points): what an average player adds to
                                      his team per unit of time; 0: time missing from a team
                                      costs it nothing on average */
    double skill_sd;             /**< its standard deviation, >= 0 (skill points) */
    double scale;                /**< skill points per logit of P_true, > 0 */
    double drift;                /**< sd of each present player's skill step per round, >= 0 */
    uint32_t arrive_permille;    /**< chance per round that a new player arrives */
    uint32_t depart_permille;    /**< chance per round that a random player leaves for good */
    uint32_t maps;               /**< 1..EO_SIM_MAPS_MAX */
    double bias;                 /**< map biases uniform in [−bias, bias] logits, >= 0 */
    uint32_t partial_permille;   /**< chance that a member joined late or left early */
    uint32_t draw_permille;      /**< draw rate of a 50/50 round */
    uint32_t round_seconds;      /**< length of every round, >= 8 */
    int64_t start;               /**< started_at of round 1, Unix seconds */
    eo_sim_balancer balancer;
    uint32_t short_permille;     /**< chance that a round is played one player short on a
                                      side (side and seat drawn at random; he sits out) */
    double presence;             /**< π: logits one unit of presence (Σ w) is worth to a
                                      team beyond its skills, |π| <= 100; 0 by default */
    bool times_ignored;          /**< the truth weighs every member 1 (w_i above), whatever
                                      his partial play: the records' times carry no
                                      information (`--partial-effect none`) */
    /** Balancer ours: search nodes eo_split_solve() may spend on one round
     *  (eo_split_options.work_limit); past them the round's teams come from
     *  eo_balance_solve()'s local search instead (not proven optimal; counted in
     *  eo_sim_report.inexact). 0 means EO_SIM_WORK_LIMIT. */
    uint64_t work_limit;
} eo_sim_config;

/** Defaults: seed 1, 1000 players, 12v12, normal skills of mean 0 and sd 100, scale 400/ln 10 (so P_true
 *  is the Elo curve of the summed skill difference), no drift, no arrivals or departures, 8
 *  maps with biases in ±0.3, 10 % partial play that the truth weighs, no short rounds, no
 *  presence effect, 2 % draws at 50/50, 600 s rounds from 1763800000, balancer ours with work
 *  limit EO_SIM_WORK_LIMIT. */
void eo_sim_config_default(eo_sim_config *c);

/** P_true(A) = σ(diff / scale + bias), computed with eo__exp. σ(x) + σ(−x) = 1 to 1 ulp. */
double eo_sim_p_true(double diff, double scale, double bias);

/** The logit offset of P_true beside the skills: the map's @p bias plus @p presence times the
 *  presence difference @p delta (Σ_A w − Σ_B w); exactly @p bias when @p presence is 0. */
double eo_sim_true_field(double bias, double presence, double delta);

/**
 * The truth of a simulated world (docs/SIM.md, "Files"): the scale, every map's true bias for
 * side A and every player's true skill, so that the oracle's P_true of a round can be scored
 * beside a model's (`evenodds eval --truth`, `evenodds fit --truth`). The codec reads it from
 * the file `evenodds sim --truth-out` writes (eo_truth_from_json(), eo_codec.h) through the
 * calls below. Opaque; it copies every id it keeps. One thread at a time (src/core/truth.c).
 */
typedef struct eo_truth eo_truth;

/** Creates an empty truth of scale @p scale (finite, > 0) with room for @p players players and
 *  @p maps maps. Returns 0 with *out the caller's (eo_truth_destroy()), EO_EINVAL (bad scale
 *  or NULL @p out) or EO_ENOMEM. */
int eo_truth_create(double scale, size_t players, size_t maps, eo_truth **out);

/** Frees @p t. NULL is a no-op. */
void eo_truth_destroy(eo_truth *t);

/**
 * The world's terms beside skills and maps (eo_sim_config): @p presence (π, logits per unit
 * of presence, |π| <= 100) and @p times_ignored (every member weighs 1 in the truth). A new
 * truth has 0 and false. Returns 0 or EO_EINVAL (NULL @p t, π out of range; nothing changed).
 */
int eo_truth_set_terms(eo_truth *t, double presence, bool times_ignored);

/**
 * Adds player @p id (@p len bytes, need not be NUL-terminated) with true skill @p skill, or map
 * @p id with true bias @p bias (a logit offset for side A). The id is copied; its form is the
 * caller's to check (eo_id_check()). Returns 0, EO_EEXIST (the id is known), EO_ELIMIT (no
 * room left: eo_truth_create()), EO_EINVAL (NULL argument, non-finite value) or EO_ENOMEM;
 * on failure nothing changed.
 */
int eo_truth_add_player(eo_truth *t, const char *id, size_t len, double skill);
int eo_truth_add_map(eo_truth *t, const char *id, size_t len, double bias);

/** Whether player / map @p id (@p len bytes) is known. */
bool eo_truth_has_player(const eo_truth *t, const char *id, size_t len);
bool eo_truth_has_map(const eo_truth *t, const char *id, size_t len);

/** Players and maps the truth knows. */
size_t eo_truth_player_count(const eo_truth *t);
size_t eo_truth_map_count(const eo_truth *t);

/**
 * The oracle's P(A wins) of round @p r: eo_sim_p_true(Σ_A w·s − Σ_B w·s, scale,
 * eo_sim_true_field(bias, π, Σ_A w − Σ_B w)) with s each member's true skill, w his
 * eo_round_member_weight() (1 when the truth ignores times), bias the true bias of the round's
 * map (0 when the round has no map) and π the truth's presence effect, summed in the members'
 * order exactly as the simulator does, so a simulated round gets its P_true bit for bit. The skills are those the
 * truth holds (in a truth file, each player's skill at the end of the run): with `--drift 0`
 * they are the skills of every round. Returns 0; EO_ENOTFOUND with @p err (may be NULL) naming
 * "A[i]" / "B[i]" (a player the truth does not know) or "map" (a map it does not know).
 */
int eo_truth_p(const eo_truth *t, const eo_round *r, double *p_a, eo_round_error *err);

/**
 * Spearman's rank correlation of @p x and @p y (n pairs): Pearson's correlation of their
 * ranks, tied values sharing their mean rank. NaN when n < 2 or either has all values equal.
 * Returns 0, EO_EINVAL (NULL with n > 0) or EO_ENOMEM.
 */
int eo_sim_spearman(const double *x, const double *y, size_t n, double *out);

typedef struct eo_sim eo_sim;

/**
 * Creates the world (players, skills, maps) and an empty pool with @p pool_cfg (copied; NULL:
 * eo_pool_config_default()). Returns 0, EO_EINVAL (a configuration out of its limits, or a
 * bad model configuration) or EO_ENOMEM.
 */
int eo_sim_create(const eo_sim_config *c, const eo_pool_config *pool_cfg, eo_sim **out);

/** Frees the simulator, its pool and its rounds. NULL is a no-op. */
void eo_sim_destroy(eo_sim *s);

/** One simulated round: the record rated and what the truth and the model made of it. */
typedef struct eo_sim_round {
    const eo_round *round; /**< owned by the simulator; valid until the next eo_sim_step() */
    double p_true;         /**< P_true(A) */
    double p_model;        /**< the model's P(A wins) at round start (eo_pool_apply()) */
    double bias;           /**< the map's true bias */
    size_t bench;          /**< players present but sitting out */
    bool inexact;          /**< balancer ours: the exact splitter reached the work limit and
                                local search formed the teams */
} eo_sim_round;

/**
 * Plays one round: drift, arrivals and departures; players show up (N uniform in
 * [2·team_min, 2·team_max + 1], at most 64, in random queue order), k = min(team_max, N/2); the
 * balancer forms the teams; partial play, a short side (short_permille), the map, the
 * outcome; the pool rates the round.
 * @p out may be NULL. Returns 0, EO_ENOMEM or EO_EINTERNAL; after an error the simulator must
 * only be destroyed.
 */
int eo_sim_step(eo_sim *s, eo_sim_round *out);

/** Figures over a span of rounds. Brier figures leave draws out, as `evenodds replay` does. */
typedef struct eo_sim_report {
    uint64_t from, to;    /**< rounds from..to (1-based, inclusive); from > to when empty */
    uint64_t rounds;      /**< rounds in the span */
    uint64_t decided;     /**< of which not draws */
    double brier;         /**< mean (p_model − outcome)² over decided rounds (NaN if none) */
    double brier_true;    /**< the same with p_true: the oracle's Brier (NaN if none) */
    double imbalance;     /**< mean |p_true − 0.5| (NaN if no rounds) */
    double stomps;        /**< share of rounds with p_true > 0.8 or < 0.2 (NaN if no rounds) */
    double draws;         /**< share of draws (NaN if no rounds) */
    double spearman;      /**< ratings' mean vs true skill at the span's end, over the present
                               players who played at least one round (eo_sim_spearman()) */
    size_t present;       /**< players in the world at the span's end */
    size_t seen;          /**< of which played at least one round */
    uint64_t inexact;     /**< rounds whose teams local search formed (eo_sim_round.inexact) */
} eo_sim_report;

/**
 * The figures of the rounds since the previous eo_sim_report_window() call (or the start),
 * and starts a new span. Returns 0, EO_EINVAL (NULL argument) or EO_ENOMEM (Spearman's work
 * space).
 */
int eo_sim_report_window(eo_sim *s, eo_sim_report *out);

/** The figures of every round since the start (does not start a new span). 0, EO_EINVAL
 *  (NULL argument) or EO_ENOMEM. */
int eo_sim_report_total(eo_sim *s, eo_sim_report *out);

/** The simulator's pool: the model's ratings so far. */
const eo_pool *eo_sim_pool(const eo_sim *s);

/** What the simulator knows of one player. */
typedef struct eo_sim_player {
    const char *id;  /**< "p000001", …; owned by the simulator */
    double skill;    /**< true skill now (for one who left: when he left) */
    bool present;    /**< still in the world */
    uint32_t rounds; /**< rounds played */
} eo_sim_player;

/** Players created so far (ids p000001 … in creation order, which is byte order). */
size_t eo_sim_player_count(const eo_sim *s);

/** Player @p i (0-based). Returns 0 or EO_EINVAL (out of range). */
int eo_sim_player_get(const eo_sim *s, size_t i, eo_sim_player *out);

/** Map @p i's name ("map01", …) and true bias in side A's favour. 0 or EO_EINVAL. */
int eo_sim_map_get(const eo_sim *s, size_t i, const char **name, double *bias);

#ifdef __cplusplus
}
#endif
#endif
