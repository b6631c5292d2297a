#include "cli/opts.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


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

/* The configuration of a new pool (eo_pool_config_new()) into @p pool with the given
 * parameters; @p pool_params false: the model's part only (the pool's own parameters are then
 * unknown model parameters). */
static int finish(const char *cmd, const eo_opt_model *m, eo_pool_config *pool, bool pool_params)
{
    eo_model model = EO_MODEL_SYNELO;
    if (m->model != NULL && eo_model_parse(m->model, &model) != 0) {
        char known[EO_MODEL_NAMES_MAX];
        eo_model_names(known, sizeof known);
        fprintf(stderr, "evenodds %s: --model: unknown model '%s' (known: %s)\n", cmd, m->model,
                known);
        return -1;
    }
    eo_pool_config_new(model, pool);
    eo_round_error err;
    for (int k = 0; k < m->nparam; k++) {
        char name[64];
        const char *value;
        if (split_param(cmd, m, k, name, sizeof name, &value) != 0)
            return -1;
        memset(&err, 0, sizeof err);
        int rc = pool_params ? eo_bias_config_set(&pool->bias, name, value, &err) : EO_ENOTFOUND;
        if (rc == EO_ENOTFOUND && pool_params)
            rc = eo_presence_config_set(&pool->presence, name, value, &err);
        if (rc == EO_ENOTFOUND)
            rc = eo_model_config_set(&pool->model, name, value, &err);
        if (rc != 0) {
            fprintf(stderr, "evenodds %s: --param %s: %s\n", cmd, err.field, err.message);
            return -1;
        }
    }
    memset(&err, 0, sizeof err);
    if (eo_model_config_check(&pool->model, &err) != 0) {
        fprintf(stderr, "evenodds %s: --param %s: %s\n", cmd, err.field, err.message);
        return -1;
    }
    return 0;
}

int eo_opt_model_finish(const char *cmd, const eo_opt_model *m, eo_model_config *out)
{
    eo_pool_config pool;
    int rc = finish(cmd, m, &pool, false);
    *out = pool.model;
    return rc;
}

int eo_opt_pool_finish(const char *cmd, const eo_opt_model *m, eo_pool_config *out)
{
    size_t nd = out->ndivisions;
    eo_division div[EO_DIVISIONS_MAX];
    memcpy(div, out->divisions, sizeof div);
    int rc = finish(cmd, m, out, true);
    out->ndivisions = nd;
    memcpy(out->divisions, div, sizeof div);
    return rc;
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
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "evenodds %s: --truth: cannot open '%s'\n", cmd, path);
        return -1;
    }
    /* The whole file in memory: a truth file is small (about 70 bytes a player). */
    char *buf = NULL;
    size_t len = 0, cap = 0;
    int bad = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap ? 2 * cap : 65536;
            char *nb = realloc(buf, ncap);
            if (nb == NULL) {
                bad = 1;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    bad |= ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
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
