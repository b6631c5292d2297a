/* evenodds split: the exact splits of a list of rated players for every team size, or the
 * balancer's answers when the request has balancer inputs (the service's splits, offline). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_app.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_split.h"

static const char split_usage[] =
    "usage: evenodds split [--file FILE] [--out FILE] [--bench solver|queue] [--model M]\n"
    "                      [--param NAME=VALUE]...\n"
    "\n"
    "Reads the request of POST /v1/pools/{pool}/splits (docs/SERVICE.md) from FILE or standard\n"
    "input and prints the same answer. A plain request {\"players\":[{\"id\":\"…\",\"rating\":1234},\n"
    "…]} gives {\"splits\":[{\"k\":2,\"A\":[ids],\"B\":[ids],\"bench\":[ids],\"gap\":…,\"p_a\":…}, …]}:\n"
    "for every team size k from 2 to N/2, the two teams of k players with the least rating-sum\n"
    "gap (exact), the players who sit out, and P(A wins) under the model (default SynElo,\n"
    "Θ 2400), each player's rating taken as the model's mean with no deviation.\n"
    "\n"
    "Balancer inputs (docs/BALANCER.md, \"The balancer\") make it a balancer request: per player\n"
    "\"team\" (\"A\"|\"B\"|null), \"party\", \"lock\", \"priority\", \"prefer\", \"denied\",\n"
    "\"protected\", \"sat_out\"; per request \"mode\" (\"rebalance\"|\"scramble\"), \"epsilon\"\n"
    "(tolerance on |P(A) − 0.5|, default 0.01), \"spread_epsilon\" (scramble: team standard\n"
    "deviations this close count as equal, rating units, default one split unit: 1 point for\n"
    "SynElo, Elo and Glicko-2), \"budget_ms\" (default 100), \"map\", \"allow_party_split\",\n"
    "\"allow_protected\", \"k_min\", \"k_max\". Each answer then also has \"dev\", \"epsilon\",\n"
    "\"spread_epsilon\", \"exact\", \"parties_broken\", \"moves\":[{\"id\",\"from\",\"to\"}], \"terms\"\n"
    "and \"bound\" (what the search proved: equal to \"terms\" when \"exact\" is true, else what a\n"
    "better answer could reach at best); a team size without an answer has an \"error\" naming\n"
    "the party or the cause.\n"
    "\n"
    "  --file FILE          read the request from FILE instead of standard input\n"
    "  --out FILE           write the answer to FILE instead of standard output\n"
    "  --bench solver|queue who sits out: the solver chooses, benching later-listed players on\n"
    "                       ties (default), or the first 2k listed players play (arena queue);\n"
    "                       overrides the request's \"bench\" (plain requests only)\n"
EO_OPT_MODEL_HELP;

/* The answer to the request @p req (the name @p name in messages) as JSON in *out, through the
 * service's path (eo_app_split()) on @p model's scale. Returns the exit status: 0, 1 (a bad
 * request, with the message printed) or 2 (--bench queue with balancer inputs). */
static int answer(const char *name, const json_t *req, const char *bench,
                  const eo_model_ctx *model, json_t **out)
{
    int status = 1;
    eo_split_request sr;
    eo_round_error err;
    eo_strength *strength = NULL;
    eo_split_answer ans;
    memset(&ans, 0, sizeof ans);
    memset(&sr, 0, sizeof sr);
    if (eo_split_request_from_json(req, &sr, &err) != 0) {
        fprintf(stderr, "evenodds split: %s: \"%s\": %s\n", name, err.field, err.message);
        goto done;
    }
    if (bench && sr.balance && strcmp(bench, "queue") == 0) {
        fprintf(stderr, "evenodds split: --bench queue: not with balancer inputs (give "
                        "priorities instead)\n");
        status = 2;
        goto done;
    }
    if (bench)
        sr.bench = strcmp(bench, "queue") == 0 ? EO_BENCH_QUEUE : EO_BENCH_SOLVER;
    strength = calloc(sr.n, sizeof *strength);
    if (!strength) {
        fputs("evenodds split: out of memory\n", stderr);
        goto done;
    }
    for (size_t i = 0; i < sr.n; i++) {
        if (!sr.has_rating[i]) {
            fprintf(stderr, "evenodds split: %s: \"players[%zu].rating\": required (no store here)\n",
                    name, i);
            goto done;
        }
        strength[i].mu = (double)sr.rating[i]; /* given ratings have no deviation, as in the
                                                  service */
    }
    /* Plain requests split the given ratings as they are, in whole points (eo_app.h). */
    eo_app_split_options opt = {.whole_points = true};
    if (eo_app_split(&sr, model, strength, &opt, &ans, &err) != 0) {
        if (sr.balance)
            fprintf(stderr, "evenodds split: %s: \"%s\": %s\n", name, err.field, err.message);
        else
            fprintf(stderr, "evenodds split: %s: %s\n", name, err.message);
        goto done;
    }
    *out = eo_split_answer_to_json(&ans, &sr);
    status = 0;
done:
    eo_split_answer_free(&ans);
    free(strength);
    eo_split_request_free(&sr);
    return status;
}

int eo_cmd_split(int argc, char **argv)
{
    const char *file = NULL, *out_path = NULL, *bench = NULL, *val = NULL;
    eo_opt_model mopt;
    memset(&mopt, 0, sizeof mopt);

    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(split_usage, stdout);
            return 0;
        } else if ((r = eo_opt_value("split", argc, argv, &i, "--file", &val)) != 0) {
            if (r < 0)
                return 2;
            file = val;
        } else if ((r = eo_opt_value("split", argc, argv, &i, "--out", &val)) != 0) {
            if (r < 0)
                return 2;
            out_path = val;
        } else if ((r = eo_opt_value("split", argc, argv, &i, "--bench", &val)) != 0) {
            if (r < 0)
                return 2;
            if (strcmp(val, "solver") != 0 && strcmp(val, "queue") != 0) {
                fprintf(stderr, "evenodds split: --bench: expected solver or queue, got '%s'\n", val);
                return 2;
            }
            bench = val;
        } else if ((r = eo_opt_model_arg("split", argc, argv, &i, &mopt)) != 0) {
            if (r < 0)
                return 2;
        } else {
            fprintf(stderr, "evenodds split: unknown argument '%s'\n%s", argv[i], split_usage);
            return 2;
        }
    }

    eo_model_config mcfg;
    eo_model_ctx *model = NULL;
    if (eo_opt_model_finish("split", &mopt, &mcfg) != 0)
        return 2;
    if (eo_model_prepare(&mcfg, &model, NULL) != 0) {
        fputs("evenodds split: out of memory\n", stderr);
        return 1;
    }
    const char *name = file ? file : "<stdin>";
    json_error_t jerr;
    json_t *req = file ? json_load_file(file, EO_JSON_DECODE_FLAGS, &jerr)
                       : json_loadf(stdin, EO_JSON_DECODE_FLAGS, &jerr);
    if (!req) {
        fprintf(stderr, "evenodds split: %s:%d:%d: invalid JSON: %s\n", name, jerr.line,
                jerr.column, jerr.text);
        eo_model_release(model);
        return 1;
    }

    json_t *out = NULL;
    int status = answer(name, req, bench, model, &out);
    if (status != 0)
        goto done;
    status = 1;
    FILE *f = out_path ? fopen(out_path, "w") : stdout;
    if (!f) {
        fprintf(stderr, "evenodds split: %s: cannot open for writing\n", out_path);
        goto done;
    }
    if (!out || json_dumpf(out, f, JSON_COMPACT | JSON_REAL_PRECISION(17)) != 0 ||
        fputc('\n', f) == EOF) {
        fputs("evenodds split: cannot write the answer\n", stderr);
        if (f != stdout)
            fclose(f);
        goto done;
    }
    status = (f == stdout ? fflush(f) : fclose(f)) == 0 ? 0 : 1;
done:
    json_decref(out);
    eo_model_release(model);
    json_decref(req);
    return status;
}
