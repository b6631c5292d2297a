/* evenodds sim: a simulated world in closed loop (eo_sim.h, docs/SIM.md). Writes the rounds as
 * canonical JSONL and the truth as JSON, and reports over time on stdout. Every byte it writes
 * (apart from progress on a terminal) depends only on its arguments. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_sim.h"

static const char sim_usage[] =
    "usage: evenodds sim [--seed S] [--rounds N] [--players P] [--team K | --team-min K\n"
    "                    --team-max K] [--model M] [--param NAME=VALUE]...\n"
    "                    [--balancer random|alternation|snake|ours] [--maps M] [--bias X]\n"
    "                    [--partial PERMILLE] [--draws PERMILLE] [--drift D]\n"
    "                    [--report-every R] [--rounds-out FILE.jsonl] [--truth-out FILE.json]\n"
    "                    [--format table|json] [more world options below]\n"
    "\n"
    "Simulates a server in closed loop: players with hidden true skills show up, the balancer\n"
    "forms teams from the model's ratings, the outcome is drawn from the true skills\n"
    "(P_true(A) = sigma((sum_A w*s - sum_B w*s) / scale + map bias + presence*(sum_A w -\n"
    "sum_B w)), w the time played), and\n"
    "the model rates the round. Reports every R rounds and once over all rounds: the model's\n"
    "Brier and the oracle's (P_true), mean |P_true - 0.5|, stomps (P_true > 0.8 or < 0.2),\n"
    "draws, and Spearman's correlation of ratings with true skills. docs/SIM.md defines them.\n"
    "The same arguments give the same bytes.\n"
    "\n"
    "  --seed S            world seed (default 1)\n"
    "  --rounds N          rounds to play (default 5000)\n"
    "  --players P         players at the start (default 1000; at least 2*team-max + 1)\n"
    "  --team K            K players a side (default 12; 2..32)\n"
    "  --team-min K, --team-max K\n"
    "                      a range: N present uniform in [2*min, 2*max + 1] (at most 64),\n"
    "                      k = min(max, N/2), the rest sit out\n"
EO_OPT_MODEL_HELP
    "  --balancer B        random, alternation, snake or ours (default: ours, the exact splitter)\n"
    "  --work-limit N      ours: search nodes per round before local search forms the teams\n"
    "                      (default 10000000; such rounds are counted as inexact)\n"
    "  --maps M            maps (default 8; 1..99)\n"
    "  --bias X            map biases uniform in [-X, X] logits for side A (default 0.3)\n"
    "  --partial PERMILLE  chance a member joined late or left early (default 100)\n"
    "  --partial-effect E  time (default): the truth weighs each member by his time; none:\n"
    "                      every member counts in full, the records' times carry nothing\n"
    "  --short PERMILLE    chance a round is played one player short on a side (default 0)\n"
    "  --presence X        logits one player's presence is worth to his team beyond his\n"
    "                      skill (default 0; times the difference of the teams' sum of w)\n"
    "  --draws PERMILLE    draw rate of a 50/50 round (default 20)\n"
    "  --drift D           sd of each player's skill step per round, skill points (default 0)\n"
    "  --report-every R    rounds per report (default 500; 0: only the final one)\n"
    "  --rounds-out FILE   write the rounds as canonical JSONL (`evenodds replay` reads it)\n"
    "  --truth-out FILE    write the true skills (per player id) and map biases as JSON\n"
    "  --format F          table (default) or json (one object per line)\n";

/* The rest of the usage (one string literal may not exceed 4095 bytes). */
static const char sim_usage_world[] =
    "  --skill DIST        normal (default), uniform, bimodal or skewed\n"
    "  --skill-sd SD       spread of true skills, skill points (default 100)\n"
    "  --skill-mean M      mean true skill: what an average player adds per unit of time\n"
    "                      (default 0: time missing from a team costs nothing on average)\n"
    "  --scale S           skill points per logit (default 173.72 = 400/ln 10, the Elo curve)\n"
    "  --arrivals PERMILLE chance per round that a new player arrives (default 0)\n"
    "  --departures PERMILLE\n"
    "                      chance per round that a random player leaves for good (default 0)\n"
    "  --round-seconds S   length of a round (default 600)\n"
    "  --start T           started_at of the first round, Unix seconds (default 1763800000)\n";

typedef struct sim_opts {
    eo_sim_config c;
    eo_opt_model model;
    eo_pool_config pool;
    int64_t rounds, every;
    const char *rounds_out, *truth_out;
    bool json;
    bool team_given, range_given;
} sim_opts;

/* An integer option: name, bounds, where it goes. */
typedef struct int_opt {
    const char *name;
    int64_t lo, hi;
    int kind; /* 0: int64_t, 1: uint32_t, 2: uint64_t */
    size_t off;
} int_opt;

#define OFF(f) offsetof(sim_opts, f)
static const int_opt int_opts[] = {
    {"--seed", 0, INT64_MAX, 2, OFF(c.seed)},
    {"--rounds", 0, 100000000, 0, OFF(rounds)},
    {"--players", 2, EO_SIM_PLAYERS_MAX, 1, OFF(c.players)},
    {"--team-min", 2, EO_SIM_TEAM_MAX, 1, OFF(c.team_min)},
    {"--team-max", 2, EO_SIM_TEAM_MAX, 1, OFF(c.team_max)},
    {"--maps", 1, EO_SIM_MAPS_MAX, 1, OFF(c.maps)},
    {"--partial", 0, 1000, 1, OFF(c.partial_permille)},
    {"--draws", 0, 1000, 1, OFF(c.draw_permille)},
    {"--report-every", 0, 100000000, 0, OFF(every)},
    {"--arrivals", 0, 1000, 1, OFF(c.arrive_permille)},
    {"--departures", 0, 1000, 1, OFF(c.depart_permille)},
    {"--round-seconds", 8, 86400, 1, OFF(c.round_seconds)},
    {"--start", 0, 100000000000, 0, OFF(c.start)},
    {"--work-limit", 1, INT64_MAX, 2, OFF(c.work_limit)},
    {"--short", 0, 1000, 1, OFF(c.short_permille)},
};

typedef struct real_opt {
    const char *name;
    double lo, hi;
    size_t off;
} real_opt;

static const real_opt real_opts[] = {
    {"--bias", 0.0, 10.0, OFF(c.bias)},
    {"--drift", 0.0, 1e6, OFF(c.drift)},
    {"--skill-sd", 0.0, 1e6, OFF(c.skill_sd)},
    {"--skill-mean", -1e6, 1e6, OFF(c.skill_mean)},
    {"--scale", 1e-6, 1e9, OFF(c.scale)},
    {"--presence", -100.0, 100.0, OFF(c.presence)},
};

static void set_int(sim_opts *o, const int_opt *io, int64_t v)
{
    char *p = (char *)o + io->off;
    if (io->kind == 0) {
        memcpy(p, &v, sizeof v);
    } else if (io->kind == 1) {
        uint32_t u = (uint32_t)v;
        memcpy(p, &u, sizeof u);
    } else {
        uint64_t u = (uint64_t)v;
        memcpy(p, &u, sizeof u);
    }
}

/* 1: argv[*i] was one of the tables' options (used); 0: not; -1: error (message printed). */
static int table_arg(int argc, char **argv, int *i, sim_opts *o)
{
    const char *val = NULL;
    int r;
    for (size_t t = 0; t < sizeof int_opts / sizeof int_opts[0]; t++) {
        if ((r = eo_opt_value("sim", argc, argv, i, int_opts[t].name, &val)) == 0)
            continue;
        int64_t v;
        if (r < 0 || eo_opt_int("sim", int_opts[t].name, val, int_opts[t].lo, int_opts[t].hi,
                                &v) != 0)
            return -1;
        set_int(o, &int_opts[t], v);
        if (strcmp(int_opts[t].name, "--team-min") == 0 ||
            strcmp(int_opts[t].name, "--team-max") == 0)
            o->range_given = true;
        return 1;
    }
    for (size_t t = 0; t < sizeof real_opts / sizeof real_opts[0]; t++) {
        if ((r = eo_opt_value("sim", argc, argv, i, real_opts[t].name, &val)) == 0)
            continue;
        double v;
        if (r < 0 || eo_opt_real("sim", real_opts[t].name, val, real_opts[t].lo,
                                 real_opts[t].hi, &v) != 0)
            return -1;
        memcpy((char *)o + real_opts[t].off, &v, sizeof v);
        return 1;
    }
    return 0;
}

static int parse_args(int argc, char **argv, sim_opts *o)
{
    const char *val = NULL;
    int json = 0;
    eo_sim_config_default(&o->c);
    eo_pool_config_default(&o->pool);
    o->rounds = 5000;
    o->every = 500;
    for (int i = 1; i < argc; i++) {
        int r = 0;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(sim_usage, stdout);
            fputs(sim_usage_world, stdout);
            return 1;
        } else if ((r = table_arg(argc, argv, &i, o)) != 0) {
            if (r < 0)
                return -1;
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--team", &val)) != 0) {
            int64_t v;
            if (r < 0 || eo_opt_int("sim", "--team", val, 2, EO_SIM_TEAM_MAX, &v) != 0)
                return -1;
            o->c.team_min = o->c.team_max = (uint32_t)v;
            o->team_given = true;
        } else if ((r = eo_opt_model_arg("sim", argc, argv, &i, &o->model)) != 0) {
            if (r < 0)
                return -1;
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--balancer", &val)) != 0) {
            if (r < 0 || eo_sim_balancer_parse(val, &o->c.balancer) != 0) {
                if (r >= 0)
                    fprintf(stderr, "evenodds sim: --balancer: expected random, alternation, "
                                    "snake or ours, got '%s'\n", val);
                return -1;
            }
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--partial-effect", &val)) != 0) {
            if (r < 0 || (strcmp(val, "time") != 0 && strcmp(val, "none") != 0)) {
                if (r >= 0)
                    fprintf(stderr, "evenodds sim: --partial-effect: expected time or none, "
                                    "got '%s'\n", val);
                return -1;
            }
            o->c.times_ignored = strcmp(val, "none") == 0;
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--skill", &val)) != 0) {
            if (r < 0 || eo_sim_skill_parse(val, &o->c.skill) != 0) {
                if (r >= 0)
                    fprintf(stderr, "evenodds sim: --skill: expected normal, uniform, bimodal "
                                    "or skewed, got '%s'\n", val);
                return -1;
            }
        } else if ((r = eo_opt_format("sim", argc, argv, &i, &json)) != 0) {
            if (r < 0)
                return -1;
            o->json = json;
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--rounds-out", &val)) != 0) {
            if (r < 0)
                return -1;
            o->rounds_out = val;
        } else if ((r = eo_opt_value("sim", argc, argv, &i, "--truth-out", &val)) != 0) {
            if (r < 0)
                return -1;
            o->truth_out = val;
        } else {
            fprintf(stderr, "evenodds sim: unknown argument '%s'\n%s%s", argv[i], sim_usage,
                    sim_usage_world);
            return -1;
        }
    }
    if (o->team_given && o->range_given) {
        fprintf(stderr, "evenodds sim: --team and --team-min/--team-max exclude each other\n");
        return -1;
    }
    if (o->c.team_min > o->c.team_max) {
        fprintf(stderr, "evenodds sim: --team-min (%u) is above --team-max (%u)\n",
                (unsigned)o->c.team_min, (unsigned)o->c.team_max);
        return -1;
    }
    uint32_t need = 2 * o->c.team_max + 1 < 64 ? 2 * o->c.team_max + 1 : 64;
    if (o->c.players < need) {
        fprintf(stderr, "evenodds sim: --players: at least %u for teams of %u\n", (unsigned)need,
                (unsigned)o->c.team_max);
        return -1;
    }
    return eo_opt_pool_finish("sim", &o->model, &o->pool);
}

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static int print_report(const sim_opts *o, const eo_sim_report *r, bool all)
{
    if (o->json) {
        json_t *j = json_object();
        json_object_set_new(j, "span", json_string(all ? "all" : "window"));
        json_object_set_new(j, "from", json_integer((json_int_t)r->from));
        json_object_set_new(j, "to", json_integer((json_int_t)r->to));
        json_object_set_new(j, "rounds", json_integer((json_int_t)r->rounds));
        json_object_set_new(j, "brier", real_or_null(r->brier));
        json_object_set_new(j, "brier_true", real_or_null(r->brier_true));
        json_object_set_new(j, "imbalance", real_or_null(r->imbalance));
        json_object_set_new(j, "stomps", real_or_null(r->stomps));
        json_object_set_new(j, "draws", real_or_null(r->draws));
        json_object_set_new(j, "spearman", real_or_null(r->spearman));
        json_object_set_new(j, "present", json_integer((json_int_t)r->present));
        json_object_set_new(j, "seen", json_integer((json_int_t)r->seen));
        json_object_set_new(j, "inexact", json_integer((json_int_t)r->inexact));
        int rc = json_dumpf(j, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER |
                                           JSON_REAL_PRECISION(10));
        json_decref(j);
        return rc == 0 && putchar('\n') != EOF ? 0 : -1;
    }
    char span[48];
    if (all)
        snprintf(span, sizeof span, "all %llu", (unsigned long long)r->rounds);
    else
        snprintf(span, sizeof span, "%llu-%llu", (unsigned long long)r->from,
                 (unsigned long long)r->to);
    return printf("%-17s %7.4f %7.4f %8.4f %7.2f%% %6.2f%% %9.4f %8zu %8zu %8llu\n", span,
                  r->brier, r->brier_true, r->imbalance, 100.0 * r->stomps, 100.0 * r->draws,
                  r->spearman, r->present, r->seen, (unsigned long long)r->inexact) < 0
               ? -1
               : 0;
}

static int write_round(FILE *f, const eo_round *r)
{
    json_t *j = eo_round_to_json(r);
    char *text = NULL;
    int rc = j != NULL && eo_round_canonical(j, &text) == 0 && fputs(text, f) != EOF &&
                     fputc('\n', f) != EOF
                 ? 0
                 : -1;
    free(text);
    json_decref(j);
    return rc;
}

static int write_truth(const sim_opts *o, eo_sim *s)
{
    json_t *j = json_object();
    json_object_set_new(j, "seed", json_integer((json_int_t)o->c.seed));
    json_object_set_new(j, "skill", json_string(eo_sim_skill_name(o->c.skill)));
    json_object_set_new(j, "skill_mean", json_real(o->c.skill_mean));
    json_object_set_new(j, "skill_sd", json_real(o->c.skill_sd));
    json_object_set_new(j, "scale", json_real(o->c.scale));
    /* The terms only when a world has them: other truth files read as they always did. */
    if (o->c.presence != 0.0)
        json_object_set_new(j, "presence", json_real(o->c.presence));
    if (o->c.times_ignored)
        json_object_set_new(j, "partial_effect", json_string("none"));
    json_t *maps = json_array();
    for (size_t i = 0; i < o->c.maps; i++) {
        const char *name;
        double bias;
        (void)eo_sim_map_get(s, i, &name, &bias);
        json_t *m = json_object();
        json_object_set_new(m, "id", json_string(name));
        json_object_set_new(m, "bias", json_real(bias));
        json_array_append_new(maps, m);
    }
    json_object_set_new(j, "maps", maps);
    json_t *players = json_array();
    for (size_t i = 0; i < eo_sim_player_count(s); i++) {
        eo_sim_player p;
        (void)eo_sim_player_get(s, i, &p);
        json_t *m = json_object();
        json_object_set_new(m, "id", json_string(p.id));
        json_object_set_new(m, "skill", json_real(p.skill));
        json_object_set_new(m, "present", json_boolean(p.present));
        json_object_set_new(m, "rounds", json_integer(p.rounds));
        json_array_append_new(players, m);
    }
    json_object_set_new(j, "players", players);
    FILE *f = fopen(o->truth_out, "w");
    int rc = -1;
    if (f != NULL) {
        rc = json_dumpf(j, f, JSON_COMPACT | JSON_PRESERVE_ORDER) == 0 && fputc('\n', f) != EOF
                 ? 0
                 : -1;
        if (fclose(f) != 0)
            rc = -1;
    }
    json_decref(j);
    if (rc != 0)
        fprintf(stderr, "evenodds sim: --truth-out: cannot write '%s'\n", o->truth_out);
    return rc;
}

int eo_cmd_sim(int argc, char **argv)
{
    sim_opts o;
    memset(&o, 0, sizeof o);
    int pr = parse_args(argc, argv, &o);
    if (pr != 0)
        return pr > 0 ? 0 : 2;

    eo_sim *s = NULL;
    int rc = eo_sim_create(&o.c, &o.pool, &s);
    if (rc != 0) {
        fprintf(stderr, "evenodds sim: %s\n", eo_strerror(rc));
        return rc == EO_EINVAL ? 2 : 1;
    }
    int status = 1;
    FILE *out = NULL;
    if (o.rounds_out != NULL && (out = fopen(o.rounds_out, "w")) == NULL) {
        fprintf(stderr, "evenodds sim: --rounds-out: cannot create '%s'\n", o.rounds_out);
        goto done;
    }
    if (!o.json && printf("%-17s %7s %7s %8s %8s %7s %9s %8s %8s %8s\n", "rounds", "brier",
                          "oracle", "|P-0.5|", "stomps", "draws", "spearman", "present", "seen",
                          "inexact") < 0)
        goto done;
    bool tty = eo_opt_tty();
    eo_sim_report rep;
    for (int64_t n = 1; n <= o.rounds; n++) {
        eo_sim_round sr;
        if ((rc = eo_sim_step(s, &sr)) != 0) {
            fprintf(stderr, "evenodds sim: round %lld: %s\n", (long long)n, eo_strerror(rc));
            goto done;
        }
        if (out != NULL && write_round(out, sr.round) != 0) {
            fprintf(stderr, "evenodds sim: --rounds-out: cannot write '%s'\n", o.rounds_out);
            goto done;
        }
        if (o.every > 0 && (n % o.every == 0 || n == o.rounds)) {
            if (eo_sim_report_window(s, &rep) != 0 || print_report(&o, &rep, false) != 0)
                goto done;
            fflush(stdout);
        }
        if (tty && (n & 0xFF) == 0)
            fprintf(stderr, "\rsim: %lld / %lld rounds", (long long)n, (long long)o.rounds);
    }
    if (tty && o.rounds >= 0x100)
        fputc('\n', stderr);
    if (eo_sim_report_total(s, &rep) != 0 || print_report(&o, &rep, true) != 0)
        goto done;
    if (out != NULL) {
        int bad = fclose(out) != 0;
        out = NULL;
        if (bad) {
            fprintf(stderr, "evenodds sim: --rounds-out: cannot write '%s'\n", o.rounds_out);
            goto done;
        }
    }
    if (o.truth_out != NULL && write_truth(&o, s) != 0)
        goto done;
    status = fflush(stdout) == 0 ? 0 : 1;
done:
    if (out != NULL)
        fclose(out);
    eo_sim_destroy(s);
    return status;
}
