/* Small, strict option parsing shared by the subcommands: numbers must be whole and in range,
 * every error names the option. */
#ifndef EO_CLI_OPTS_H
#define EO_CLI_OPTS_H

#include <stdbool.h>
#include <stdint.h>

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

/* If argv[*i] is --kmax-team K (Θ by seed 000 F1's rule) or --theta T, sets *theta and returns
 * 1; returns 0 for another argument, and -1 (after a message) for a bad or missing value or
 * when both options are given (*seen counts them; start it at 0). */
int eo_opt_theta(const char *cmd, int argc, char **argv, int *i, double *theta, int *seen);

/* True when stderr is a terminal (progress is shown only then). */
bool eo_opt_tty(void);

#endif
