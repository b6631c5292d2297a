#include "cli/opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evenodds/eo_synelo.h"

int eo_opt_int(const char *cmd, const char *opt, const char *s, int64_t lo, int64_t hi,
               int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || v < lo || v > hi) {
        fprintf(stderr, "evenodds %s: %s: expected a whole number in [%lld, %lld], got '%s'\n",
                cmd, opt, (long long)lo, (long long)hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int eo_opt_real(const char *cmd, const char *opt, const char *s, double lo, double hi,
                double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    if (s[0] == '\0' || *end != '\0' || errno != 0 || !isfinite(v) || v < lo || v > hi) {
        fprintf(stderr, "evenodds %s: %s: expected a number in [%g, %g], got '%s'\n", cmd, opt,
                lo, hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

int eo_opt_value(const char *cmd, int argc, char **argv, int *i, const char *opt,
                 const char **val)
{
    const char *a = argv[*i];
    size_t n = strlen(opt);
    if (strncmp(a, opt, n) != 0)
        return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "evenodds %s: %s needs a value\n", cmd, opt);
        return -1;
    }
    *i += 1;
    *val = argv[*i];
    return 1;
}

int eo_opt_theta(const char *cmd, int argc, char **argv, int *i, double *theta, int *seen)
{
    const char *val = NULL;
    int r = eo_opt_value(cmd, argc, argv, i, "--kmax-team", &val);
    bool kmax = r != 0;
    if (r == 0)
        r = eo_opt_value(cmd, argc, argv, i, "--theta", &val);
    if (r <= 0)
        return r;
    if (++*seen > 1) {
        fprintf(stderr, "evenodds %s: give --kmax-team or --theta, not both\n", cmd);
        return -1;
    }
    if (!kmax)
        return eo_opt_real(cmd, "--theta", val, 1e-3, 1e9, theta) == 0 ? 1 : -1;
    int64_t k;
    if (eo_opt_int(cmd, "--kmax-team", val, 1, 128, &k) != 0)
        return -1;
    eo_synelo_theta_from_kmax((int)k, theta); /* cannot fail for k in [1, 128] */
    return 1;
}

bool eo_opt_tty(void)
{
    return isatty(STDERR_FILENO) == 1;
}
