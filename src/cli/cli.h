/* The evenodds binary's subcommands. Each returns the process exit status:
 * 0 success, 1 failure of the work, 2 bad usage. */
#ifndef EO_CLI_H
#define EO_CLI_H

#include <stdio.h>

typedef struct eo_cmd {
    const char *name;
    const char *summary;
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
} eo_cmd;

/* The command table, terminated by a {NULL} entry (main.c). */
extern const eo_cmd eo_cli_commands[];

int eo_cmd_serve(int argc, char **argv);
int eo_cmd_replay(int argc, char **argv);
int eo_cmd_eval(int argc, char **argv);
int eo_cmd_compare(int argc, char **argv);
int eo_cmd_tune(int argc, char **argv);
int eo_cmd_fit(int argc, char **argv);
int eo_cmd_split(int argc, char **argv);
int eo_cmd_autobalance(int argc, char **argv); /* cmd_autobalance.c */
int eo_cmd_triggers(int argc, char **argv);    /* cmd_autobalance.c */
int eo_cmd_import(int argc, char **argv);
int eo_cmd_export(int argc, char **argv);
int eo_cmd_season(int argc, char **argv);
int eo_cmd_sim(int argc, char **argv);
int eo_cmd_mmsim(int argc, char **argv);

#endif
