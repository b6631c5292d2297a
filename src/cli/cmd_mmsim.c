/* evenodds mmsim: a simulated matchmaking population in closed loop through the real matcher
 * and two baselines on the same arrivals (eo_mmsim.h; docs/MATCHMAKING.md, "The matcher in a
 * simulated day"). Prints one JSON line (or a table) that compares the policies; every byte of
 * it depends only on the arguments. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_mmsim.h"

static const char mmsim_usage[] =
    "usage: evenodds mmsim [--seed S] [--team K] [--online N] [--policy all|ours|fcfs|fixed]\n"
    "                      [--model M] [--param NAME=VALUE]... [--format json|table]\n"
    "                      [world and queue options below]\n"
    "\n"
    "Simulates a matchmaking queue in closed loop: groups of players (solos and parties) arrive\n"
    "over the day, queue, are matched, wait for a free game-server instance in the match's\n"
    "region, play, then queue again or leave; a group that waits past its patience leaves.\n"
    "Outcomes come from hidden true skills and are rated by the model, whose ratings the\n"
    "matcher sees. The policies face the same arrivals: ours (the matcher, eo_match_pass_ws),\n"
    "fcfs (first come first served into teams) and fixed (a fixed widening window, as\n"
    "FlexMatch rule sets are written). Prints one JSON line: per policy matches, waits\n"
    "(p50/p95/p99 s), abandoned players, stomps (share of matches whose favourite's true P >\n"
    "0.8), mean |P_true - 0.5|, rating spread within a match, parties split, instance\n"
    "utilisation (docs/MATCHMAKING.md defines them). The same arguments give the same bytes.\n"
    "\n"
    "  --seed S            world seed (default 1)\n"
    "  --team K            players a side (default 6; 1..32)\n"
    "  --online N          mean players online the arrivals are sized for (default 300)\n"
    "  --policy P          all (default), ours, fcfs or fixed\n" EO_OPT_MODEL_HELP
    "  --format F          json (default: one line) or table\n"
    "  --party-share X     share of arriving groups that are parties (default 0.2)\n"
    "  --party-max N       largest party, 2 or 3 (default 3)\n"
    "  --swing X           arrivals from (1-X) to (1+X) times the mean over the day (default 0.5)\n"
    "  --population N      players in the world (default 3000; at least 4 x online)\n"
    "  --newcomers X       share of the population new to the pool (default 0.1)\n"
    "  --history N         rated matches per other player before the day (default 200)\n"
    "  --skill-sd SD       true skills normal(0, SD) (default 60)\n"
    "  --scale S           skill points per logit of P_true (default 173.72 = 400/ln 10)\n"
    "  --regions N         regions, 1..8 (default 3)\n"
    "  --instances N       game-server instances per region (default 16)\n"
    "  --patience S        mean seconds a group waits before leaving (default 300)\n"
    "  --continue X        chance a group queues again after a match (default 0.7)\n"
    "  --match-min S, --match-max S\n"
    "                      match length uniform in [min, max] seconds (default 300, 900)\n"
    "  --interval S        seconds between passes (default 1)\n"
    "  --warmup S          seconds simulated before the figures start (default 86400)\n"
    "  --duration S        seconds with figures (default 86400)\n"
    "  --window-scale F    ours: every skill window and calib_window times F (default 1; the\n"
    "                      windows are on the Elo scale, converted to the model)\n"
    "  --fixed-latency MS  fixed: the latency limit (default 150; 0: none)\n";

typedef struct mm_opts {
    eo_mmsim_config c;
    eo_opt_model model;
    int policy; /* -1: all */
    int json;
    double window_scale;
} mm_opts;

#define OFF(f) offsetof(mm_opts, f)
typedef struct num_opt {
    const char *name;
    double lo, hi;
    int kind; /* 0: double, 1: int, 2: int64_t, 3: uint32_t, 4: uint64_t */
    size_t off;
} num_opt;

static const num_opt num_opts[] = {
    {"--seed", 0, 9007199254740992.0, 4, OFF(c.seed)},
    {"--team", 1, EO_MATCH_TEAM_MAX, 1, OFF(c.team_size)},
    {"--online", 1, 1e6, 0, OFF(c.online)},
    {"--party-share", 0, 1, 0, OFF(c.party_share)},
    {"--party-max", 2, 3, 1, OFF(c.party_max)},
    {"--swing", 0, 0.99, 0, OFF(c.day_swing)},
    {"--population", 4, 10000000, 3, OFF(c.population)},
    {"--newcomers", 0, 0.99, 0, OFF(c.newcomers)},
    {"--history", 0, 100000, 3, OFF(c.history)},
    {"--skill-sd", 1e-6, 1e6, 0, OFF(c.skill_sd)},
    {"--scale", 1e-6, 1e9, 0, OFF(c.scale)},
    {"--regions", 1, EO_MMSIM_REGIONS_MAX, 1, OFF(c.regions)},
    {"--instances", 1, 100000, 1, OFF(c.instances)},
    {"--patience", 1, 1e7, 0, OFF(c.patience)},
    {"--continue", 0, 0.99, 0, OFF(c.continue_p)},
    {"--match-min", 1, 86400, 2, OFF(c.match_min)},
    {"--match-max", 1, 86400, 2, OFF(c.match_max)},
    {"--interval", 1, 3600, 2, OFF(c.interval)},
    {"--warmup", 0, 8640000, 2, OFF(c.warmup)},
    {"--duration", 1, 8640000, 2, OFF(c.duration)},
    {"--window-scale", 1e-6, 1e6, 0, OFF(window_scale)},
    {"--fixed-latency", 0, 1e6, 0, OFF(c.fixed_latency)},
};

static void store(mm_opts *o, const num_opt *n, double v)
{
    char *p = (char *)o + n->off;
    if (n->kind == 0) {
        memcpy(p, &v, sizeof v);
    } else if (n->kind == 1) {
        int x = (int)v;
        memcpy(p, &x, sizeof x);
    } else if (n->kind == 2) {
        int64_t x = (int64_t)v;
        memcpy(p, &x, sizeof x);
    } else if (n->kind == 3) {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, sizeof x);
    } else {
        uint64_t x = (uint64_t)v;
        memcpy(p, &x, sizeof x);
    }
}

/* 1: argv[*i] was a number option (used); 0: not; -1: error (message printed). */
static int num_arg(int argc, char **argv, int *i, mm_opts *o)
{
    for (size_t t = 0; t < sizeof num_opts / sizeof num_opts[0]; t++) {
        const num_opt *n = &num_opts[t];
        int r;
        if (n->kind == 0) {
            double v;
            r = eo_opt_real_arg("mmsim", argc, argv, i, n->name, n->lo, n->hi, &v);
            if (r == 1)
                store(o, n, v);
        } else {
            int64_t v;
            r = eo_opt_int_arg("mmsim", argc, argv, i, n->name, (int64_t)n->lo, (int64_t)n->hi, &v);
            if (r == 1)
                store(o, n, (double)v);
        }
        if (r != 0)
            return r;
    }
    return 0;
}

static int policy_arg(int argc, char **argv, int *i, mm_opts *o)
{
    const char *v = NULL;
    int r = eo_opt_value("mmsim", argc, argv, i, "--policy", &v);
    if (r <= 0)
        return r;
    if (strcmp(v, "all") == 0) {
        o->policy = -1;
        return 1;
    }
    for (int p = 0; p < EO_MMSIM_POLICIES; p++)
        if (strcmp(v, eo_mmsim_policy_name((eo_mmsim_policy)p)) == 0) {
            o->policy = p;
            return 1;
        }
    fprintf(stderr, "evenodds mmsim: --policy: expected all, ours, fcfs or fixed, not \"%s\"\n", v);
    return -1;
}

/* 0, 1 (--help printed) or 2 (bad usage, message printed). */
static int parse(int argc, char **argv, mm_opts *o)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(mmsim_usage, stdout);
            return 1;
        }
        int r = num_arg(argc, argv, &i, o);
        if (r == 0)
            r = policy_arg(argc, argv, &i, o);
        if (r == 0)
            r = eo_opt_model_arg("mmsim", argc, argv, &i, &o->model);
        if (r == 0)
            r = eo_opt_format("mmsim", argc, argv, &i, &o->json);
        if (r < 0)
            return 2;
        if (r == 0) {
            fprintf(stderr, "evenodds mmsim: unknown argument '%s'\n%s", argv[i], mmsim_usage);
            return 2;
        }
    }
    return 0;
}

static void progress(void *arg, double done)
{
    fprintf(stderr, "\revenodds mmsim: %s %3.0f%%", (const char *)arg, 100.0 * done);
    if (done >= 1.0)
        fputc('\n', stderr);
}

static void print_json_policy(const eo_mmsim_report *r, int first)
{
    printf("%s{\"policy\":\"%s\",\"matches\":%" PRIu64 ",\"tickets\":%" PRIu64
           ",\"wait_p50_s\":%.0f,\"wait_p95_s\":%.0f,\"wait_p99_s\":%.0f,\"abandoned\":%" PRIu64
           ",\"stomps\":%.4f,\"p_true_dev_mean\":%.4f,\"rating_spread_mean\":%.1f"
           ",\"true_spread_mean\":%.1f,\"parties_split\":%" PRIu64
           ",\"party_tickets\":%.4f,\"instance_utilisation\":%.4f,\"online_mean\":%.1f"
           ",\"brier\":%.4f}",
           first ? "" : ",", eo_mmsim_policy_name(r->policy), r->matches, r->tickets, r->wait_p50,
           r->wait_p95, r->wait_p99, r->abandoned, r->stomps, r->mean_dev, r->mean_spread,
           r->mean_true_spread, r->parties_split, r->party_tickets, r->utilisation, r->online_mean,
           r->brier);
}

static void print_table(const eo_mmsim_report *r, int n)
{
    printf("| policy | matches | wait p50 s | p95 s | p99 s | abandoned | stomps | mean \\|P-0.5\\| "
           "| rating spread | true spread | parties split | utilisation | online |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int i = 0; i < n; i++)
        printf("| %s | %" PRIu64 " | %.0f | %.0f | %.0f | %" PRIu64
               " | %.1f %% | %.3f | %.0f | %.0f | %" PRIu64 " | %.0f %% | %.0f |\n",
               eo_mmsim_policy_name(r[i].policy), r[i].matches, r[i].wait_p50, r[i].wait_p95,
               r[i].wait_p99, r[i].abandoned, 100 * r[i].stomps, r[i].mean_dev, r[i].mean_spread,
               r[i].mean_true_spread, r[i].parties_split, 100 * r[i].utilisation, r[i].online_mean);
}

int eo_cmd_mmsim(int argc, char **argv)
{
    mm_opts o;
    memset(&o, 0, sizeof o);
    eo_mmsim_config_default(&o.c);
    o.policy = -1;
    o.json = 1;
    o.window_scale = 1.0;
    int rc = parse(argc, argv, &o);
    if (rc != 0)
        return rc == 1 ? 0 : 2;
    eo_pool_config pool;
    eo_pool_config_default(&pool);
    if (eo_opt_pool_finish("mmsim", &o.model, &pool) != 0)
        return 2;
    if (o.window_scale != 1.0 && eo_match_config_scale(&o.c.match, o.window_scale) != 0) {
        fprintf(stderr, "evenodds mmsim: --window-scale: the windows would not be finite\n");
        return 2;
    }
    eo_round_error err;
    if (eo_mmsim_config_check(&o.c, &err) != 0) {
        fprintf(stderr, "evenodds mmsim: %s: %s\n", err.field, err.message);
        return 2;
    }
    eo_mmsim_report rep[EO_MMSIM_POLICIES];
    int n = 0;
    for (int p = 0; p < EO_MMSIM_POLICIES; p++) {
        if (o.policy >= 0 && p != o.policy)
            continue;
        const char *name = eo_mmsim_policy_name((eo_mmsim_policy)p);
        rc = eo_mmsim_run(&o.c, &pool, (eo_mmsim_policy)p, eo_opt_tty() ? progress : NULL,
                          (void *)name, &rep[n], &err);
        if (rc != 0) {
            fprintf(stderr, "evenodds mmsim: %s: %s: %s\n", name, err.field, err.message);
            return 1;
        }
        n++;
    }
    if (!o.json) {
        print_table(rep, n);
        return 0;
    }
    printf("{\"seed\":%" PRIu64 ",\"team_size\":%d,\"online_target\":%.0f,\"model\":\"%s\""
           ",\"duration_s\":%" PRId64 ",\"policies\":[",
           o.c.seed, o.c.team_size, o.c.online, eo_model_name(pool.model.model), o.c.duration);
    for (int i = 0; i < n; i++)
        print_json_policy(&rep[i], i == 0);
    printf("]}\n");
    return 0;
}
