/* What the modelling commands (replay, eval, fit, tune) share: the head of their command lines,
 * and the fold of a JSONL round log through a pool, record by record in file order, with one hook
 * for what each command does with a round (docs/ARCHITECTURE.md, "The source of truth"). Every
 * message goes to stderr and starts "evenodds CMD: "; a round's names its place,
 * "evenodds CMD: FILE:LINE: …". */
#ifndef EO_CLI_FOLD_H
#define EO_CLI_FOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_metrics.h"
#include "evenodds/eo_pool.h"

/* ---- the option head ---- */

/* The options the folding commands share: --help (-h), --skip-duplicates, --skip-invalid,
 * --no-weights, the model options (eo_opt_model_arg()), --format when the command has it, and
 * the one input file (eo_opt_input()). The command sets cmd, usage and format;
 * eo_cli_head_parse() the rest. */
typedef struct eo_cli_head {
    const char *cmd;     /* "replay": the name in every message */
    const char *usage;   /* --help prints it to stdout; usage errors after their message */
    bool format;         /* the command takes --format table|json */
    eo_opt_model model;  /* the model options as given */
    eo_pool_config cfg;  /* the pool's configuration built from them */
    const char *input;   /* ROUNDS.jsonl (points into argv) */
    int json;            /* with format: 1 json, 0 table (default: table on a terminal) */
    bool skip_duplicates;
    bool skip_invalid;   /* a line that is not a valid round is skipped and counted (and a
                          * repeated id, as with skip_duplicates) */
    bool no_weights;     /* eo_round_drop_times() on every round as it is read */
} eo_cli_head;

/* A command's own options: if argv[*i] is one, takes it (advancing *i past its value) and
 * returns 1; returns 0 for another argument, -1 after a message. @p ctx is the command's. */
typedef int (*eo_cli_arg_fn)(void *ctx, int argc, char **argv, int *i);

/* A command's checks across its options, once all are read and before the model's configuration
 * is built: 0, or -1 after a message. */
typedef int (*eo_cli_check_fn)(void *ctx);

/* Parses argv[1 .. argc-1] into @p h: the shared options, the command's own through @p arg
 * (NULL: none), any other argument as the input. Then a missing input is an error, @p check runs
 * (NULL: none), --format's default is settled and the pool's configuration built
 * (eo_opt_pool_finish()). Returns 1 when --help printed the usage (exit 0), 0, or -1 after a
 * message naming the option (bad usage, exit 2). */
int eo_cli_head_parse(eo_cli_head *h, int argc, char **argv, eo_cli_arg_fn arg,
                      eo_cli_check_fn check, void *ctx);

/* ---- the fold ---- */

/* A command's work on one round. Called for every round in file order, after --no-weights and,
 * when the fold rates, after the pool rated it (@p res its result; NULL when it does not rate).
 * @p pos is the round's position among the log's non-blank lines from 0 (a skipped duplicate
 * or invalid line keeps later rounds in place): what --eval-from and --holdout fractions
 * count. The hook may take the round: move it out and leave *r zeroed. Returns 0 or a negative
 * EO_E… code, which ends the fold with "evenodds CMD: FILE:LINE: " and the code's text; with
 * --skip-invalid, EO_EINVAL (a round the hook refuses, changing nothing) skips the line. */
typedef int (*eo_cli_round_fn)(void *ctx, size_t pos, eo_round *r, const eo_round_result *res);

/* One fold of one log. The caller zeroes it and sets the first block; the fold fills the
 * second, and eo_cli_fold_close() releases what it holds. */
typedef struct eo_cli_fold {
    const eo_cli_head *head; /* the command's name, the input, --skip-duplicates, --no-weights */
    bool rate;               /* rate every round through a pool of head->cfg (eo_pool_apply()) */
    bool refits;             /* with rate: apply the log's {"refit":…} lines to the pool as the
                              * service did (eo_refit_apply()); else they are passed over */
    bool progress;           /* on a terminal, "\rCMD: N / TOTAL rounds" to stderr every 65,536
                              * rounds and the line ended after the last (needs the count) */
    bool progress_eol;       /* with progress: also end that line before a read error */
    bool quiet;              /* no --skip-invalid messages (a second pass over the log) */
    const eo_truth *truth;   /* NULL, or the oracle: P_true of each round from position
                              * truth_from on, as read (before --no-weights: the oracle sees the
                              * real partial play), into *oracle, draws left out */
    size_t truth_from;
    eo_metrics *oracle;
    eo_cli_round_fn round;   /* NULL: none */
    void *ctx;               /* the hook's */

    FILE *in;                /* the log: eo_cli_fold_open(), or the caller's fopen() */
    size_t total;            /* its non-blank lines: eo_cli_fold_count() */
    eo_pool *pool;           /* with rate: the pool, after eo_cli_fold_run() */
    size_t rounds;           /* rounds read (skipped duplicates and refit lines not counted) */
    size_t invalid;          /* with --skip-invalid: lines skipped as invalid */
    size_t duplicates;       /* rounds skipped as repeated ids */
} eo_cli_fold;

/* Opens head->input into f->in. 0, or -1 after "cannot open 'FILE'". */
int eo_cli_fold_open(eo_cli_fold *f);

/* Counts f->in's non-blank lines into f->total (eo_opt_count_lines(); rewinds). 0, or -1 after
 * "cannot read 'FILE'". */
int eo_cli_fold_count(eo_cli_fold *f);

/* Reads f->in to its end (eo_jsonl_next_entry()) and folds each round: the oracle, --no-weights,
 * the pool, the hook. Returns 0, or -1 after a message: the reader's for a line it refuses (a
 * duplicate round id without --skip-duplicates, invalid JSON or fields), the place and the
 * code's text for a round or refit line the pool, the oracle or the hook refuses, the code's
 * text alone when the pool or the reader cannot be created. With --skip-invalid, a line the
 * reader, the pool or the hook refuses as invalid (EO_EPARSE, EO_EINVAL, EO_ELIMIT) is
 * skipped instead and counted in f->invalid, the first EO_CLI_SKIP_SHOWN reasons go to stderr
 * ("evenodds CMD: skipped FILE:LINE: …"), and a last line counts what was skipped. */
#define EO_CLI_SKIP_SHOWN 5
int eo_cli_fold_run(eo_cli_fold *f);

/* Closes f->in and destroys f->pool. Safe on a fold never opened or run. */
void eo_cli_fold_close(eo_cli_fold *f);

/* ---- rounds kept ---- */

/* Rounds kept in memory in file order (fit's held-out rounds, tune's log); zero-initialised is
 * empty. */
typedef struct eo_cli_rounds {
    eo_round *r;
    size_t n, cap;
} eo_cli_rounds;

/* Appends *r, taking everything it owns (*r is left zeroed). 0, or EO_ENOMEM (*r unchanged). */
int eo_cli_rounds_push(eo_cli_rounds *rs, eo_round *r);

/* Frees every round kept and the array. */
void eo_cli_rounds_free(eo_cli_rounds *rs);

/* ---- pieces of the reports ---- */

/* @p v as a JSON real, or null when it is not finite (a figure over no rounds is NaN). A new
 * reference, NULL only when out of memory. */
json_t *eo_cli_json_real(double v);

/* {"rounds","logloss","brier","accuracy"} of @p m (each figure as eo_cli_json_real()): fit's
 * and tune's held-out rows. A new reference, NULL when out of memory. */
json_t *eo_cli_metrics_json(const eo_metrics_result *m);

/* With --skip-invalid, {"invalid":N,"duplicates":M} set as "skipped" in the report @p out;
 * nothing without it. */
void eo_cli_skipped_json(const eo_cli_fold *f, json_t *out);

#endif
