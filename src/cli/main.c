/* evenodds: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

#ifndef EO_VERSION
#define EO_VERSION "0.1.0"
#endif

const eo_cmd eo_cli_commands[] = {
    {"serve", "run the HTTP/JSON rating service", eo_cmd_serve},
    {"replay", "fold a JSONL round log through a model and score its predictions", eo_cmd_replay},
    {"eval", "score a model's predictions: calibration, tightest rounds, experience", eo_cmd_eval},
    {"compare", "two configurations' predictions of the same rounds, paired, with errors", eo_cmd_compare},
    {"tune", "search a model's parameters on training rounds, report held-out figures", eo_cmd_tune},
    {"fit", "refit every rating from the whole log (iterated to convergence, with a prior)", eo_cmd_fit},
    {"split", "best teams for every team size from rated players (exact)", eo_cmd_split},
    {"autobalance", "mid-round moves that even the current teams, with reasons", eo_cmd_autobalance},
    {"triggers", "whether a game state calls for a scramble, and by which rule", eo_cmd_triggers},
    {"import", "rate a JSONL round log into a pool of a store", eo_cmd_import},
    {"export", "write a pool's rounds from a store as JSONL", eo_cmd_export},
    {"sim", "simulate a world in closed loop: balancer, model, hidden true skills", eo_cmd_sim},
    {"mmsim", "simulate a matchmaking queue for a day: the matcher against two baselines",
     eo_cmd_mmsim},
    {"season", "end a pool's season (archive standings, soft reset) or list seasons", eo_cmd_season},
    {NULL, NULL, NULL},
};

static void usage(FILE *out)
{
    fputs("usage: evenodds COMMAND [OPTIONS] [ARGS]\n"
          "\n"
          "Skill rating and team balancing for team games on public servers.\n"
          "\n"
          "Commands:\n",
          out);
    for (const eo_cmd *c = eo_cli_commands; c->name; c++)
        fprintf(out, "  %-11s %s\n", c->name, c->summary);
    fputs("\n'evenodds COMMAND --help' describes a command.\n", out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0) {
        printf("evenodds %s\n", EO_VERSION);
        return 0;
    }
    for (const eo_cmd *c = eo_cli_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c->run(argc - 1, argv + 1);
    fprintf(stderr, "evenodds: unknown command '%s' (see 'evenodds --help')\n", name);
    return 2;
}
