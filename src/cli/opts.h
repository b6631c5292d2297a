/* Small, strict option parsing shared by the subcommands: numbers must be whole and in range,
 * every error names the option. */
#ifndef EO_CLI_OPTS_H
#define EO_CLI_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "evenodds/eo_codec.h"
#include "evenodds/eo_model.h"
#include "evenodds/eo_pool.h"

/* Parses @p s as a whole integer in [lo, hi]. On error prints "evenodds CMD: OPT: …" and
 * returns -1. */
int eo_opt_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
               int64_t *out);

/* Parses @p s as a finite real in [lo, hi]. Same error convention. */
int eo_opt_real(const char *cmd, const char *opt, const char *s, double lo, double hi,
                double *out);

/* If argv[*i] is OPT (as "--opt VALUE" or "--opt=VALUE") stores VALUE in *val, advances *i past
 * what it used and returns 1; returns 0 when argv[*i] is another option, and -1 (after a
 * message) when OPT has no value. */
int eo_opt_value(const char *cmd, int argc, char **argv, int *i, const char *opt,
                 const char **val);

/* If argv[*i] is OPT, parses its value as eo_opt_int() does into *out, advances *i past what it
 * used and returns 1; returns 0 when argv[*i] is another option, -1 after a message. */
int eo_opt_int_arg(const char *cmd, int argc, char **argv, int *i, const char *opt, int64_t lo,
                   int64_t hi, int64_t *out);

/* The same for a real value (eo_opt_real()). */
int eo_opt_real_arg(const char *cmd, int argc, char **argv, int *i, const char *opt, double lo,
                    double hi, double *out);

/* If argv[*i] is --format (table or json), sets *json to 0 or 1, advances *i past what it used
 * and returns 1; returns 0 for another argument, -1 (after a message) for a bad value. */
int eo_opt_format(const char *cmd, int argc, char **argv, int *i, int *json);

/* The argument @p arg that no option took: the command's one input file into *input, or an
 * error for an unknown option or a second file (printed with @p usage). 0 or -1. */
int eo_opt_input(const char *cmd, const char *arg, const char *usage, const char **input);

/* The model options every modelling command takes, collected while parsing: --model M,
 * --params FILE (a pool's configuration, eo_pool_file_from_text()), --param NAME=VALUE
 * (repeatable) and SynElo's shorthands --kmax-team K and --theta T. */
#define EO_OPT_PARAMS_MAX 32
typedef struct eo_opt_model {
    const char *model;                     /* NULL: synelo, or the --params file's */
    const char *params;                    /* --params FILE, or NULL */
    struct {
        const char *name;  /* a shorthand's parameter name, or NULL for --param */
        const char *text;  /* the shorthand's VALUE, or --param's "NAME=VALUE" (into argv) */
    } param[EO_OPT_PARAMS_MAX];
    int nparam;
} eo_opt_model;

/* If argv[*i] is one of the model options, records it, advances *i past what it used and
 * returns 1; returns 0 for another argument, and -1 (after a message) for a missing value or
 * too many --param. */
int eo_opt_model_arg(const char *cmd, int argc, char **argv, int *i, eo_opt_model *m);

/* Builds the configuration from what eo_opt_model_arg() collected: the --params file's
 * configuration (a --model that names another model is an error), else a new pool's model
 * defaults (eo_pool_config_new()); then each parameter in order, then eo_model_config_check().
 * Errors name the option and the parameter ("evenodds CMD: --param beta: …", "evenodds CMD:
 * --params FILE: params.beta: …"); returns 0 or -1. */
int eo_opt_model_finish(const char *cmd, const eo_opt_model *m, eo_model_config *out);

/* The same for the commands that build a pool (the file's, or a new pool's defaults: the map
 * bias and presence on, no divisions); the pool's bias parameters ("bias", "bias_prior",
 * "bias_strength", eo_bias.h) go to out->bias, its presence parameters ("presence",
 * "presence_prior", "presence_strength", "partial", "partial_prior", eo_presence.h) to
 * out->presence, the others to out->model. */
int eo_opt_pool_finish(const char *cmd, const eo_opt_model *m, eo_pool_config *out);

/* Help lines for the model options, for the commands' usage texts. */
#define EO_OPT_MODEL_HELP                                                                        \
    "  --model M           synelo (default), trueskill, glicko2, elo, wenglin or hive\n"       \
    "  --params FILE       a pool's configuration {\"model\",\"params\":{…}} (what `evenodds\n"   \
    "                      tune` prints; a POST /v1/pools body); --param values go on top\n"    \
    "  --param NAME=VALUE  a model parameter (repeatable; docs/MODELS.md lists them per model)\n"  \
    "                      or a pool's: bias=off|map|map_size|map_mode (default map),\n"      \
    "                      bias_prior=N, bias_strength=S, presence=on|off (default on),\n"     \
    "                      presence_prior=N, presence_strength=S, partial=learn|time\n"    \
    "                      (default learn), partial_prior=N (docs/MODELS.md); the defaults\n" \
    "                      are a new pool's (docs/MODELS.md, \"Defaults of new pools\")\n"    \
    "  --kmax-team K       synelo: Θ = 400·floor(median{1..K}) (seed 000 F1; 12 gives 2400)\n"    \
    "  --theta T           synelo: Θ given directly (default 0: each round's own, F1's rule\n"  \
    "                      on its larger team)\n"

/* Help lines of --skip-invalid and --skip-duplicates (replay, eval, fit, tune). */
#define EO_OPT_SKIP_HELP                                                                         \
    "  --skip-invalid      skip a line that is not a valid round (counted, the first reasons\n" \
    "                      on stderr) and a repeated round id (the first is kept)\n"          \
    "  --skip-duplicates   skip a round whose id appeared earlier in the file (default: error)\n"

/* Help line of --no-weights (replay, eval, fit, tune): eo_round_drop_times() on every round. */
#define EO_OPT_NO_WEIGHTS_HELP                                                                   \
    "  --no-weights        rate every member as present the whole round: partial play\n"      \
    "                      (time, joined, left) is dropped as each round is read\n"

/* Reads the truth file of a simulated world (`evenodds sim --truth-out`; eo_truth_from_text())
 * for --truth. On error prints "evenodds CMD: --truth: FILE: FIELD: message" and returns -1. */
int eo_opt_truth_load(const char *cmd, const char *path, eo_truth **out);

/* Counts the non-blank lines of @p f (lines with a character other than space, tab, CR): the
 * rounds' positions that --eval-from refers to. Rewinds @p f. 0, or -1 on a read error. */
int eo_opt_count_lines(FILE *f, size_t *n);

/* True when stderr is a terminal (progress is shown only then). */
bool eo_opt_tty(void);

#endif
