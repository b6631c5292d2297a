/* Scramble triggers (eo_triggers.h; docs/BALANCER.md, "Scramble triggers", has the table and
 * the sources). Rules are tried in enum order; each matching rule meets the guards in enum
 * order, and the first rule no guard blocks fires. When every matching rule is blocked the
 * first one is reported with its guard, so a log says what would have fired and why it did
 * not. */
#include "evenodds/eo_triggers.h"

#include <string.h>

static const char *const mode_names[EO_TRIGGER_MODE_COUNT] = {
    [EO_TRIGGER_MODE_ARENA] = "arena",
    [EO_TRIGGER_MODE_ATTACK_DEFEND] = "attack_defend",
    [EO_TRIGGER_MODE_PAYLOAD] = "payload",
    [EO_TRIGGER_MODE_KOTH] = "koth",
    [EO_TRIGGER_MODE_CP5] = "cp5",
    [EO_TRIGGER_MODE_CTF] = "ctf",
    [EO_TRIGGER_MODE_OTHER] = "other",
};

static const char *const event_names[EO_TRIGGER_EVENT_COUNT] = {
    [EO_TRIGGER_EVENT_ROUND_END] = "round_end",
    [EO_TRIGGER_EVENT_WFP_EXPIRED] = "wfp_expired",
};

static const char *const rule_names[EO_TRIGGER_RULE_COUNT] = {
    [EO_TRIGGER_NONE] = "none",
    [EO_TRIGGER_WFP_EXPIRED] = "wfp_expired",
    [EO_TRIGGER_ARENA_ROUND2] = "arena_round2",
    [EO_TRIGGER_ARENA_STREAK] = "arena_streak",
    [EO_TRIGGER_AD_NO_CAPTURE] = "ad_no_capture",
    [EO_TRIGGER_AD_TWO_ROUNDS] = "ad_two_rounds",
    [EO_TRIGGER_KOTH_SHUTOUT] = "koth_shutout",
    [EO_TRIGGER_CP5_SHUTOUT] = "cp5_shutout",
    [EO_TRIGGER_CTF_SHUTOUT] = "ctf_shutout",
    [EO_TRIGGER_WIN_DIFFERENCE] = "win_difference",
    [EO_TRIGGER_GUARD_MODE_EXCLUDED] = "mode_excluded",
    [EO_TRIGGER_GUARD_MIN_PLAYERS] = "min_players",
    [EO_TRIGGER_GUARD_CONSECUTIVE] = "consecutive",
    [EO_TRIGGER_GUARD_MAP_END] = "map_end",
};

static int lookup(const char *const *names, int n, const char *name, size_t len, int *out)
{
    if (name == NULL)
        return EO_EINVAL;
    for (int i = 0; i < n; i++) {
        if (strlen(names[i]) == len && memcmp(names[i], name, len) == 0) {
            *out = i;
            return 0;
        }
    }
    return EO_EINVAL;
}

const char *eo_trigger_mode_name(eo_trigger_mode m)
{
    return (unsigned)m < EO_TRIGGER_MODE_COUNT ? mode_names[m] : NULL;
}

const char *eo_trigger_event_name(eo_trigger_event e)
{
    return (unsigned)e < EO_TRIGGER_EVENT_COUNT ? event_names[e] : NULL;
}

const char *eo_trigger_rule_name(eo_trigger_rule r)
{
    return (unsigned)r < EO_TRIGGER_RULE_COUNT ? rule_names[r] : NULL;
}

int eo_trigger_mode_from_name(const char *name, size_t len, eo_trigger_mode *out)
{
    int v = 0;
    if (out == NULL || lookup(mode_names, EO_TRIGGER_MODE_COUNT, name, len, &v) != 0)
        return EO_EINVAL;
    *out = (eo_trigger_mode)v;
    return 0;
}

int eo_trigger_event_from_name(const char *name, size_t len, eo_trigger_event *out)
{
    int v = 0;
    if (out == NULL || lookup(event_names, EO_TRIGGER_EVENT_COUNT, name, len, &v) != 0)
        return EO_EINVAL;
    *out = (eo_trigger_event)v;
    return 0;
}

int eo_trigger_rule_from_name(const char *name, size_t len, eo_trigger_rule *out)
{
    int v = 0;
    if (out == NULL || lookup(rule_names, EO_TRIGGER_RULE_COUNT, name, len, &v) != 0)
        return EO_EINVAL;
    *out = (eo_trigger_rule)v;
    return 0;
}

void eo_trigger_state_init(eo_trigger_state *st)
{
    if (st == NULL)
        return;
    memset(st, 0, sizeof *st);
    st->mode = EO_TRIGGER_MODE_OTHER;
    st->event = EO_TRIGGER_EVENT_ROUND_END;
    st->round = 1;
    st->winner = EO_DRAW;
    st->streak_team = EO_WIN_A;
    st->time_left = -1;
    st->last_scramble_round = -1;
}

void eo_trigger_config_init(eo_trigger_config *cfg)
{
    if (cfg == NULL)
        return;
    memset(cfg, 0, sizeof *cfg);
    cfg->win_difference_on = true;
    cfg->win_difference = 2;
    cfg->min_players = 4;
    cfg->map_end_window = 300;
    cfg->arena_streak = 3;
    cfg->ad_full_rounds = 2;
}

/* Rounds the current teams have played: since the last scramble, or since the map began. */
static uint32_t rounds_since(const eo_trigger_state *st)
{
    return st->last_scramble_round < 0 ? st->round
                                       : st->round - (uint32_t)st->last_scramble_round;
}

/* Returns NULL when valid, else the name of the offending field. */
static const char *check(const eo_trigger_state *st, const eo_trigger_config *cfg)
{
    if ((unsigned)st->mode >= EO_TRIGGER_MODE_COUNT)
        return "mode";
    if ((unsigned)st->event >= EO_TRIGGER_EVENT_COUNT)
        return "event";
    if (st->event == EO_TRIGGER_EVENT_ROUND_END && st->round < 1)
        return "round";
    if ((unsigned)st->winner > EO_DRAW)
        return "winner";
    if ((uint64_t)st->wins[0] + st->wins[1] > st->round)
        return "wins";
    if (st->streak > 0 && st->streak_team != EO_WIN_A && st->streak_team != EO_WIN_B)
        return "streak_team";
    /* A streak counts this round: a decided round belongs to the winner's streak. */
    if (st->event == EO_TRIGGER_EVENT_ROUND_END && st->streak > 0 && st->winner != EO_DRAW &&
        st->streak_team != st->winner)
        return "streak_team";
    if (st->last_scramble_round < -1 ||
        (st->last_scramble_round >= 0 && (uint32_t)st->last_scramble_round > st->round))
        return "last_scramble_round";
    if (st->streak > rounds_since(st))
        return "streak";
    if (st->full_rounds > rounds_since(st))
        return "full_rounds";
    if (cfg->win_difference < 1)
        return "win_difference";
    if (cfg->arena_streak < 1)
        return "arena_streak";
    if (cfg->ad_full_rounds < 1)
        return "ad_full_rounds";
    return NULL;
}

static bool is_ad(eo_trigger_mode m)
{
    return m == EO_TRIGGER_MODE_ATTACK_DEFEND || m == EO_TRIGGER_MODE_PAYLOAD;
}

/* The losing team of a decided round captured nothing. */
static bool shutout(const eo_trigger_state *st)
{
    return st->winner != EO_DRAW && !st->captured[st->winner == EO_WIN_A ? 1 : 0];
}

static bool matches(eo_trigger_rule r, const eo_trigger_state *st, const eo_trigger_config *cfg)
{
    bool end = st->event == EO_TRIGGER_EVENT_ROUND_END;
    eo_trigger_mode m = st->mode;
    switch (r) {
    case EO_TRIGGER_WFP_EXPIRED:
        return st->event == EO_TRIGGER_EVENT_WFP_EXPIRED;
    case EO_TRIGGER_ARENA_ROUND2:
        return end && m == EO_TRIGGER_MODE_ARENA && st->round == 1;
    case EO_TRIGGER_ARENA_STREAK:
        /* check() caps the streak at the rounds since the last scramble, so the duel of round 1
         * and the teams before a scramble never count. */
        return end && m == EO_TRIGGER_MODE_ARENA && st->round >= 2 &&
               st->streak >= cfg->arena_streak;
    case EO_TRIGGER_AD_NO_CAPTURE:
        return end && is_ad(m) && st->attackers_timed_out;
    case EO_TRIGGER_AD_TWO_ROUNDS:
        return end && is_ad(m) && st->full_rounds >= cfg->ad_full_rounds;
    case EO_TRIGGER_KOTH_SHUTOUT:
        return end && m == EO_TRIGGER_MODE_KOTH && shutout(st);
    case EO_TRIGGER_CP5_SHUTOUT:
        return end && m == EO_TRIGGER_MODE_CP5 && shutout(st);
    case EO_TRIGGER_CTF_SHUTOUT:
        return end && m == EO_TRIGGER_MODE_CTF && shutout(st);
    case EO_TRIGGER_WIN_DIFFERENCE: {
        /* Valve checks only at a round with a winner (a stalemate returns early). */
        uint32_t a = st->wins[0], b = st->wins[1];
        return end && cfg->win_difference_on && st->winner != EO_DRAW &&
               (a > b ? a - b : b - a) >= cfg->win_difference;
    }
    default:
        return false;
    }
}

/* The map may end at the next round end, or has ended: scrambling now would be wasted on a
 * round or two (the next map's WFP expiry scrambles anyway). */
static bool near_map_end(const eo_trigger_state *st, const eo_trigger_config *cfg)
{
    if (st->time_left >= 0 && (uint32_t)st->time_left <= cfg->map_end_window)
        return true;
    if (st->max_rounds > 0 && (uint64_t)st->round + 1 >= st->max_rounds)
        return true;
    uint32_t lead = st->wins[0] > st->wins[1] ? st->wins[0] : st->wins[1];
    return st->win_limit > 0 && (uint64_t)lead + 1 >= st->win_limit;
}

static eo_trigger_rule blocked_by(eo_trigger_rule r, const eo_trigger_state *st,
                                  const eo_trigger_config *cfg)
{
    bool unconditional = r == EO_TRIGGER_WFP_EXPIRED || r == EO_TRIGGER_ARENA_ROUND2;
    if (st->tournament ||
        (st->mode == EO_TRIGGER_MODE_ARENA &&
         (r == EO_TRIGGER_WIN_DIFFERENCE || r == EO_TRIGGER_WFP_EXPIRED)))
        return EO_TRIGGER_GUARD_MODE_EXCLUDED;
    if (st->players < cfg->min_players)
        return EO_TRIGGER_GUARD_MIN_PLAYERS;
    if (unconditional)
        return EO_TRIGGER_NONE;
    /* Scrambled at the end of the previous round (or at this same point): the current teams
     * have played one round at most. */
    if (st->last_scramble_round >= 0 && rounds_since(st) <= 1)
        return EO_TRIGGER_GUARD_CONSECUTIVE;
    if (near_map_end(st, cfg))
        return EO_TRIGGER_GUARD_MAP_END;
    return EO_TRIGGER_NONE;
}

int eo_trigger_eval(const eo_trigger_state *st, const eo_trigger_config *cfg,
                    eo_trigger_result *out)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    if (st == NULL || out == NULL) {
        if (out != NULL)
            out->field = "state";
        return EO_EINVAL;
    }
    eo_trigger_config def;
    if (cfg == NULL) {
        eo_trigger_config_init(&def);
        cfg = &def;
    }
    const char *bad = check(st, cfg);
    if (bad != NULL) {
        out->field = bad;
        return EO_EINVAL;
    }
    for (int i = EO_TRIGGER_RULE_FIRST; i <= EO_TRIGGER_RULE_LAST; i++) {
        eo_trigger_rule r = (eo_trigger_rule)i;
        if (!matches(r, st, cfg))
            continue;
        eo_trigger_rule g = blocked_by(r, st, cfg);
        if (g == EO_TRIGGER_NONE) {
            out->scramble = true;
            out->rule = r;
            out->guard = EO_TRIGGER_NONE;
            out->reason = r;
            return 0;
        }
        if (out->rule == EO_TRIGGER_NONE) {
            out->rule = r;
            out->guard = g;
            out->reason = g;
        }
    }
    return 0;
}
