/* evenodds autobalance and evenodds triggers: the service's autobalance and scramble trigger
 * answers offline, from a JSON request in a file or on standard input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_app.h"
#include "evenodds/eo_codec.h"

static const char autobalance_usage[] =
    "usage: evenodds autobalance [--file FILE] [--out FILE] [--model M] [--param NAME=VALUE]...\n"
    "\n"
    "Reads the current teams {\"players\":[{\"id\":\"…\",\"team\":\"A\",\"rating\":1234,…},…],\n"
    "\"policy\":{…},\"now\":…,\"time_left\":…,\"unbalanced_since\":…,\"joiner\":{…}} from FILE or\n"
    "standard input and prints {\"rule\",\"action\",\"moves\":[{\"id\",\"from\",\"to\",\"reason\"}],…}:\n"
    "whether the teams are unbalanced and by which rule, and the ordered moves that fix it or\n"
    "why autobalance does not act (docs/BALANCER.md \"Autobalance\", docs/SERVICE.md for the\n"
    "fields). Every player needs a \"rating\" (there is no store here); the model (default\n"
    "SynElo, Θ 2400) scales the ratings and predicts P(A) for the strength rule. \"now\"\n"
    "defaults to the clock.\n"
    "\n"
    "  --file FILE          read the request from FILE instead of standard input\n"
    "  --out FILE           write the answer to FILE instead of standard output\n"
EO_OPT_MODEL_HELP;

static const char triggers_usage[] =
    "usage: evenodds triggers [--file FILE] [--out FILE]\n"
    "\n"
    "Reads a game state {\"mode\":\"koth\",\"round\":4,\"winner\":\"A\",\"wins\":[3,1],…,\n"
    "\"config\":{…}} from FILE or standard input and prints {\"scramble\",\"rule\",\"guard\",\n"
    "\"reason\"}: whether to scramble the teams before the next round, the named rule that fired\n"
    "(or matched) and the guard that blocked it (docs/BALANCER.md \"Scramble triggers\").\n"
    "\n"
    "  --file FILE          read the request from FILE instead of standard input\n"
    "  --out FILE           write the answer to FILE instead of standard output\n";

/* Reads the request; prints the error and returns NULL on failure. */
static json_t *load(const char *cmd, const char *file)
{
    json_error_t jerr;
    json_t *req = file ? json_load_file(file, EO_JSON_DECODE_FLAGS, &jerr)
                       : json_loadf(stdin, EO_JSON_DECODE_FLAGS, &jerr);
    if (!req)
        fprintf(stderr, "evenodds %s: %s:%d:%d: invalid JSON: %s\n", cmd, file ? file : "<stdin>",
                jerr.line, jerr.column, jerr.text);
    return req;
}

/* Writes @p v (stolen) and a newline to @p out_path or stdout. Returns the exit status. */
static int emit(const char *cmd, json_t *v, const char *out_path)
{
    FILE *f = out_path ? fopen(out_path, "w") : stdout;
    int status = 1;
    if (!f) {
        fprintf(stderr, "evenodds %s: %s: cannot open for writing\n", cmd, out_path);
    } else if (!v || json_dumpf(v, f, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0 ||
               fputc('\n', f) == EOF) {
        fprintf(stderr, "evenodds %s: cannot write the answer\n", cmd);
    } else {
        status = 0;
    }
    if (f && f != stdout && fclose(f) != 0)
        status = 1;
    else if (f == stdout && fflush(stdout) != 0)
        status = 1;
    json_decref(v);
    return status;
}

/* --file and --out, shared; returns 1 when used, 0 for another argument, -1 on error. */
static int io_arg(const char *cmd, int argc, char **argv, int *i, const char **file,
                  const char **out)
{
    int r = eo_opt_value(cmd, argc, argv, i, "--file", file);
    if (r == 0)
        r = eo_opt_value(cmd, argc, argv, i, "--out", out);
    return r;
}

int eo_cmd_autobalance(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    eo_opt_model mopt;
    memset(&mopt, 0, sizeof mopt);
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(autobalance_usage, stdout);
            return 0;
        } else if ((r = io_arg("autobalance", argc, argv, &i, &file, &out)) != 0 ||
                   (r = eo_opt_model_arg("autobalance", argc, argv, &i, &mopt)) != 0) {
            if (r < 0)
                return 2;
        } else {
            fprintf(stderr, "evenodds autobalance: unknown argument '%s'\n%s", argv[i],
                    autobalance_usage);
            return 2;
        }
    }
    eo_model_config mcfg;
    eo_model_ctx *model = NULL;
    if (eo_opt_model_finish("autobalance", &mopt, &mcfg) != 0)
        return 2;
    if (eo_model_prepare(&mcfg, &model, NULL) != 0) {
        fputs("evenodds autobalance: out of memory\n", stderr);
        return 1;
    }
    const char *name = file ? file : "<stdin>";
    json_t *obj = load("autobalance", file);
    int status = 1;
    eo_autobalance_request req;
    eo_round_error err;
    memset(&req, 0, sizeof req);
    if (!obj)
        goto done;
    eo_app_autobalance_answer ans;
    memset(&ans, 0, sizeof ans);
    int rc = eo_autobalance_request_from_json(obj, &req, &err);
    req.relative = true; /* as a new pool (presence on) measures teams */
    if (rc == 0) /* the service's path; "now" defaults to the clock */
        rc = eo_app_autobalance(&req, model, (int64_t)time(NULL), &ans, &err);
    if (rc != 0) {
        if (ans.core_refused)
            fprintf(stderr, "evenodds autobalance: %s: %s\n", name, eo_strerror(rc));
        else
            fprintf(stderr, "evenodds autobalance: %s: \"%s\": %s\n", name, err.field,
                    err.message);
        goto done;
    }
    status = emit("autobalance",
                  eo_autobalance_to_json(&req, &ans.res, req.has_joiner ? &ans.join : NULL), out);
done:
    eo_autobalance_request_free(&req);
    json_decref(obj);
    eo_model_release(model);
    return status;
}

int eo_cmd_triggers(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(triggers_usage, stdout);
            return 0;
        } else if ((r = io_arg("triggers", argc, argv, &i, &file, &out)) != 0) {
            if (r < 0)
                return 2;
        } else {
            fprintf(stderr, "evenodds triggers: unknown argument '%s'\n%s", argv[i],
                    triggers_usage);
            return 2;
        }
    }
    const char *name = file ? file : "<stdin>";
    json_t *obj = load("triggers", file);
    if (!obj)
        return 1;
    eo_trigger_state st;
    eo_trigger_config cfg;
    eo_trigger_result r;
    eo_round_error err;
    int status = 1;
    if (eo_trigger_request_from_json(obj, &st, &cfg, &err) != 0)
        fprintf(stderr, "evenodds triggers: %s: \"%s\": %s\n", name, err.field, err.message);
    else if (eo_trigger_eval(&st, &cfg, &r) != 0)
        fprintf(stderr, "evenodds triggers: %s: \"%s\": out of range or inconsistent with the "
                        "other fields\n", name, r.field ? r.field : "");
    else
        status = emit("triggers", eo_trigger_result_to_json(&r), out);
    json_decref(obj);
    return status;
}
