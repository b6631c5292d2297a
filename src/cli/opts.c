#include "cli/opts.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The whole file at @p path into a malloc'd *text (not NUL-terminated) of *len bytes, at most
 * @p max. 0, or -1 (cannot open or read, too long, out of memory). */
static int slurp(const char *path, size_t max, char **text, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    char *buf = NULL;
    size_t n = 0, cap = 0;
    int bad = 0;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, ncap);
            if (nb == NULL) {
                bad = 1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0 || n > max)
            break;
    }
    bad |= ferror(f) || n > max;
    fclose(f);
    if (bad) {
        free(buf);
        return -1;
    }
    *text = buf;
    *len = n;
    return 0;
}

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

int eo_opt_int_arg(const char *cmd, int argc, char **argv, int *i, const char *opt, int64_t lo,
                   int64_t hi, int64_t *out)
{
    const char *val = NULL;
    int r = eo_opt_value(cmd, argc, argv, i, opt, &val);
    if (r <= 0)
        return r;
    return eo_opt_int(cmd, opt, val, lo, hi, out) == 0 ? 1 : -1;
}

int eo_opt_real_arg(const char *cmd, int argc, char **argv, int *i, const char *opt, double lo,
                    double hi, double *out)
{
    const char *val = NULL;
    int r = eo_opt_value(cmd, argc, argv, i, opt, &val);
    if (r <= 0)
        return r;
    return eo_opt_real(cmd, opt, val, lo, hi, out) == 0 ? 1 : -1;
}

int eo_opt_format(const char *cmd, int argc, char **argv, int *i, int *json)
{
    const char *val = NULL;
    int r = eo_opt_value(cmd, argc, argv, i, "--format", &val);
    if (r <= 0)
        return r;
    if (strcmp(val, "json") != 0 && strcmp(val, "table") != 0) {
        fprintf(stderr, "evenodds %s: --format: expected table or json, got '%s'\n", cmd, val);
        return -1;
    }
    *json = val[0] == 'j';
    return 1;
}

int eo_opt_input(const char *cmd, const char *arg, const char *usage, const char **input)
{
    if (arg[0] == '-' && arg[1] != '\0') {
        fprintf(stderr, "evenodds %s: unknown option '%s'\n%s", cmd, arg, usage);
        return -1;
    }
    if (*input != NULL) {
        fprintf(stderr, "evenodds %s: one input file only ('%s' and '%s')\n", cmd, *input, arg);
        return -1;
    }
    *input = arg;
    return 0;
}

int eo_opt_model_arg(const char *cmd, int argc, char **argv, int *i, eo_opt_model *m)
{
    static const struct {
        const char *opt, *name;
    } opts[] = {{"--param", NULL}, {"--kmax-team", "kmax_team"}, {"--theta", "theta"}};
    const char *val = NULL;
    int r = eo_opt_value(cmd, argc, argv, i, "--model", &val);
    if (r != 0) {
        if (r > 0)
            m->model = val;
        return r;
    }
    if ((r = eo_opt_value(cmd, argc, argv, i, "--params", &val)) != 0) {
        if (r > 0)
            m->params = val;
        return r;
    }
    for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) {
        r = eo_opt_value(cmd, argc, argv, i, opts[k].opt, &val);
        if (r == 0)
            continue;
        if (r < 0)
            return r;
        if (m->nparam == EO_OPT_PARAMS_MAX) {
            fprintf(stderr, "evenodds %s: at most %d model parameters\n", cmd, EO_OPT_PARAMS_MAX);
            return -1;
        }
        m->param[m->nparam].name = opts[k].name;
        m->param[m->nparam].text = val;
        m->nparam++;
        return 1;
    }
    return 0;
}

/* NAME and VALUE of one collected parameter; 0 or -1 (after a message). */
static int split_param(const char *cmd, const eo_opt_model *m, int k, char *name, size_t len,
                       const char **value)
{
    const char *arg = m->param[k].text;
    if (m->param[k].name != NULL) {
        snprintf(name, len, "%s", m->param[k].name);
        *value = arg;
        return 0;
    }
    const char *eq = strchr(arg, '=');
    if (eq == NULL || eq == arg || (size_t)(eq - arg) >= len) {
        fprintf(stderr, "evenodds %s: --param: expected NAME=VALUE, got '%s'\n", cmd, arg);
        return -1;
    }
    memcpy(name, arg, (size_t)(eq - arg));
    name[eq - arg] = '\0';
    *value = eq + 1;
    return 0;
}

/* The configuration of the --params file into @p out. 0, or -1 after a message. */
static int params_load(const char *cmd, const char *path, eo_pool_config *out)
{
    char *text = NULL;
    size_t len = 0;
    if (slurp(path, EO_POOL_FILE_MAX, &text, &len) != 0) {
        fprintf(stderr, "evenodds %s: --params: cannot read '%s' (at most %d bytes)\n", cmd, path,
                EO_POOL_FILE_MAX);
        return -1;
    }
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_pool_file_from_text(text, len, out, NULL, &err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "evenodds %s: --params %s: %s%s%s\n", cmd, path, err.field,
                err.field[0] ? ": " : "", err.message);
        return -1;
    }
    return 0;
}

/* The starting configuration: the --params file's, or a new pool's defaults for the --model
 * (eo_pool_config_new()). 0 or -1. */
static int start_config(const char *cmd, const eo_opt_model *m, eo_pool_config *out)
{
    eo_model model = EO_MODEL_SYNELO;
    if (m->model != NULL && eo_model_parse(m->model, &model) != 0) {
        char known[EO_MODEL_NAMES_MAX];
        eo_model_names(known, sizeof known);
        fprintf(stderr, "evenodds %s: --model: unknown model '%s' (known: %s)\n", cmd, m->model,
                known);
        return -1;
    }
    if (m->params == NULL) {
        eo_pool_config_new(model, out);
        return 0;
    }
    if (params_load(cmd, m->params, out) != 0)
        return -1;
    if (m->model != NULL && model != out->model.model) {
        fprintf(stderr, "evenodds %s: --model %s: --params %s is a \"%s\" configuration\n", cmd,
                m->model, m->params, eo_model_name(out->model.model));
        return -1;
    }
    return 0;
}

/* The configuration into @p out: the start (start_config()), then each --param in order, the
 * pool's bias and presence parameters into out->bias and out->presence when @p pool (else they
 * are unknown model parameters), then the model's check. 0 or -1 after a message. */
static int finish(const char *cmd, const eo_opt_model *m, eo_pool_config *out, bool pool)
{
    if (start_config(cmd, m, out) != 0)
        return -1;
    eo_round_error err;
    for (int k = 0; k < m->nparam; k++) {
        char name[64];
        const char *value;
        if (split_param(cmd, m, k, name, sizeof name, &value) != 0)
            return -1;
        memset(&err, 0, sizeof err);
        int rc = pool ? eo_bias_config_set(&out->bias, name, value, &err) : EO_ENOTFOUND;
        if (rc == EO_ENOTFOUND && pool)
            rc = eo_presence_config_set(&out->presence, name, value, &err);
        if (rc == EO_ENOTFOUND)
            rc = eo_model_config_set(&out->model, name, value, &err);
        if (rc != 0) {
            fprintf(stderr, "evenodds %s: --param %s: %s\n", cmd, err.field, err.message);
            return -1;
        }
    }
    memset(&err, 0, sizeof err);
    if (eo_model_config_check(&out->model, &err) != 0) {
        fprintf(stderr, "evenodds %s: --param %s: %s\n", cmd, err.field, err.message);
        return -1;
    }
    return 0;
}

int eo_opt_model_finish(const char *cmd, const eo_opt_model *m, eo_model_config *out)
{
    eo_pool_config c;
    if (finish(cmd, m, &c, false) != 0)
        return -1;
    *out = c.model;
    return 0;
}

int eo_opt_pool_finish(const char *cmd, const eo_opt_model *m, eo_pool_config *out)
{
    return finish(cmd, m, out, true);
}

bool eo_opt_tty(void)
{
    return isatty(STDERR_FILENO) == 1;
}

int eo_opt_count_lines(FILE *f, size_t *n)
{
    size_t count = 0;
    int c, blank = 1;
    while ((c = getc(f)) != EOF) {
        if (c == '\n') {
            count += !blank;
            blank = 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            blank = 0;
        }
    }
    count += !blank;
    if (ferror(f))
        return -1;
    *n = count;
    rewind(f);
    return 0;
}

int eo_opt_truth_load(const char *cmd, const char *path, eo_truth **out)
{
    /* The whole file in memory: a truth file is small (about 70 bytes a player). */
    char *buf = NULL;
    size_t len = 0;
    if (slurp(path, SIZE_MAX, &buf, &len) != 0) {
        fprintf(stderr, "evenodds %s: --truth: cannot read '%s'\n", cmd, path);
        return -1;
    }
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_truth_from_text(buf, len, out, &err);
    free(buf);
    if (rc != 0) {
        fprintf(stderr, "evenodds %s: --truth: %s: %s%s%s\n", cmd, path, err.field,
                err.field[0] ? ": " : "", err.message);
        return -1;
    }
    return 0;
}
