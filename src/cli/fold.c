#include "cli/fold.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "evenodds/eo_sim.h" /* eo_truth_p */

/* ---- the option head ---- */

/* One shared option at argv[*i]: 1 taken, 0 not one of them, -1 after a message, 2 --help. */
static int head_arg(eo_cli_head *h, int argc, char **argv, int *i)
{
    if (strcmp(argv[*i], "--help") == 0 || strcmp(argv[*i], "-h") == 0)
        return 2;
    if (strcmp(argv[*i], "--skip-duplicates") == 0) {
        h->skip_duplicates = true;
        return 1;
    }
    if (strcmp(argv[*i], "--skip-invalid") == 0) {
        h->skip_invalid = true;
        return 1;
    }
    if (strcmp(argv[*i], "--no-weights") == 0) {
        h->no_weights = true;
        return 1;
    }
    int r = eo_opt_model_arg(h->cmd, argc, argv, i, &h->model);
    if (r == 0 && h->format)
        r = eo_opt_format(h->cmd, argc, argv, i, &h->json);
    return r;
}

int eo_cli_head_parse(eo_cli_head *h, int argc, char **argv, eo_cli_arg_fn arg,
                      eo_cli_check_fn check, void *ctx)
{
    eo_pool_config_default(&h->cfg);
    h->json = -1;
    for (int i = 1; i < argc; i++) {
        int r = head_arg(h, argc, argv, &i);
        if (r == 2) {
            fputs(h->usage, stdout);
            return 1;
        }
        if (r == 0 && arg != NULL)
            r = arg(ctx, argc, argv, &i);
        if (r < 0 || (r == 0 && eo_opt_input(h->cmd, argv[i], h->usage, &h->input) != 0))
            return -1;
    }
    if (!h->input) {
        fprintf(stderr, "evenodds %s: missing ROUNDS.jsonl\n%s", h->cmd, h->usage);
        return -1;
    }
    if (check != NULL && check(ctx) != 0)
        return -1;
    if (h->format && h->json < 0)
        h->json = isatty(STDOUT_FILENO) != 1;
    return eo_opt_pool_finish(h->cmd, &h->model, &h->cfg);
}

/* ---- the fold ---- */

int eo_cli_fold_open(eo_cli_fold *f)
{
    f->in = fopen(f->head->input, "r");
    if (f->in == NULL) {
        fprintf(stderr, "evenodds %s: cannot open '%s'\n", f->head->cmd, f->head->input);
        return -1;
    }
    return 0;
}

int eo_cli_fold_count(eo_cli_fold *f)
{
    if (eo_opt_count_lines(f->in, &f->total) != 0) {
        fprintf(stderr, "evenodds %s: cannot read '%s'\n", f->head->cmd, f->head->input);
        return -1;
    }
    return 0;
}

void eo_cli_fold_close(eo_cli_fold *f)
{
    if (f->in != NULL)
        fclose(f->in);
    f->in = NULL;
    eo_pool_destroy(f->pool);
    f->pool = NULL;
}

/* The oracle's P_true of round @p r at @p pos into f->oracle; 0, or a code with @p msg set. */
static int oracle(const eo_cli_fold *f, size_t pos, const eo_round *r, char *msg, size_t len)
{
    if (f->truth == NULL || pos < f->truth_from)
        return 0;
    double p_true;
    eo_round_error err;
    memset(&err, 0, sizeof err);
    int rc = eo_truth_p(f->truth, r, &p_true, &err);
    if (rc != 0) {
        snprintf(msg, len, "--truth: %s: %s", err.field, err.message);
        return rc;
    }
    if (r->winner != EO_DRAW)
        eo_metrics_add(f->oracle, p_true, r->winner == EO_WIN_A);
    return 0;
}

/* One round read: the oracle, --no-weights, the pool, the hook. 0, or a code (with @p msg set
 * when the code's text is not the message). */
static int fold_round(eo_cli_fold *f, size_t pos, eo_round *r, char *msg, size_t len)
{
    int rc = oracle(f, pos, r, msg, len);
    if (rc != 0)
        return rc;
    if (f->head->no_weights)
        eo_round_drop_times(r);
    eo_round_result res;
    if (f->rate && (rc = eo_pool_apply(f->pool, r, &res, NULL)) != 0)
        return rc;
    return f->round != NULL ? f->round(f->ctx, pos, r, f->rate ? &res : NULL) : 0;
}

/* A refit line of an export: the states the service set, applied the way it did. */
static int fold_refit(eo_cli_fold *f, eo_refit_record *rf, char *msg, size_t len)
{
    size_t bad = 0;
    int rc = eo_refit_apply(f->pool, rf->v, rf->n, &bad);
    if (rc != 0)
        snprintf(msg, len, "\"refit.players[%zu]\": %s", bad, eo_strerror(rc));
    eo_refit_free(rf);
    return rc;
}

/* A line's failure that --skip-invalid skips: the line, not the reading, is at fault. */
static bool line_fault(int rc)
{
    return rc == EO_EPARSE || rc == EO_EINVAL || rc == EO_ELIMIT;
}

/* With --skip-invalid, counts a skipped line and shows the first reasons. @p msg is the
 * reader's (place included) when @p placed, else the place is added. */
static void skip_line(eo_cli_fold *f, const eo_jsonl_reader *rd, const char *msg, bool placed)
{
    const eo_cli_head *h = f->head;
    if (f->invalid++ >= EO_CLI_SKIP_SHOWN || f->quiet)
        return;
    if (placed)
        fprintf(stderr, "evenodds %s: skipped %s\n", h->cmd, msg);
    else
        fprintf(stderr, "evenodds %s: skipped %s:%zu: %s\n", h->cmd, h->input, eo_jsonl_line(rd),
                msg);
}

/* The reader's next entry, folded. 1 folded or skipped, 0 at the end, -1 after a message. */
static int fold_next(eo_cli_fold *f, eo_jsonl_reader *rd, bool tty)
{
    const eo_cli_head *h = f->head;
    eo_round round;
    eo_refit_record rf;
    char msg[512];
    int rc = eo_jsonl_next_entry(rd, &round, NULL, f->refits ? &rf : NULL, msg, sizeof msg);
    if (rc == 0)
        return 0;
    if (rc < 0 && h->skip_invalid && line_fault(rc)) {
        skip_line(f, rd, msg, true);
        return 1;
    }
    if (rc < 0) {
        if (tty && f->progress_eol && f->rounds >= 0x10000)
            fputc('\n', stderr);
        fprintf(stderr, "evenodds %s: %s\n", h->cmd, msg);
        return -1;
    }
    msg[0] = '\0';
    if (rc == EO_JSONL_REFIT) {
        rc = fold_refit(f, &rf, msg, sizeof msg);
    } else {
        /* Position among non-blank lines, so skipped lines keep later rounds in place. */
        size_t pos = f->rounds + eo_jsonl_skipped(rd) + f->invalid;
        rc = fold_round(f, pos, &round, msg, sizeof msg);
        eo_round_free(&round);
        if (rc == 0)
            f->rounds++;
    }
    if (rc != 0 && h->skip_invalid && line_fault(rc)) {
        skip_line(f, rd, msg[0] != '\0' ? msg : eo_strerror(rc), false);
        return 1;
    }
    if (rc != 0) {
        fprintf(stderr, "evenodds %s: %s:%zu: %s\n", h->cmd, h->input, eo_jsonl_line(rd),
                msg[0] != '\0' ? msg : eo_strerror(rc));
        return -1;
    }
    return 1;
}

int eo_cli_fold_run(eo_cli_fold *f)
{
    const eo_cli_head *h = f->head;
    eo_jsonl_reader *rd = NULL;
    int rc = f->rate && f->pool == NULL ? eo_pool_create(&h->cfg, &f->pool) : 0;
    if (rc == 0)
        rc = eo_jsonl_open(f->in, h->input, h->skip_duplicates || h->skip_invalid, &rd);
    if (rc != 0) {
        fprintf(stderr, "evenodds %s: %s\n", h->cmd, eo_strerror(rc));
        return -1;
    }
    bool tty = f->progress && eo_opt_tty();
    f->rounds = f->invalid = 0;
    for (;;) {
        size_t before = f->rounds;
        rc = fold_next(f, rd, tty);
        if (rc <= 0)
            break;
        if (tty && f->rounds != before && (f->rounds & 0xFFFF) == 0)
            fprintf(stderr, "\r%s: %zu / %zu rounds", h->cmd, f->rounds, f->total);
    }
    f->duplicates = eo_jsonl_skipped(rd);
    eo_jsonl_close(rd);
    if (rc == 0 && tty && f->rounds >= 0x10000)
        fputc('\n', stderr);
    if (rc == 0 && h->skip_invalid && !f->quiet && f->invalid + f->duplicates > 0)
        fprintf(stderr,
                "evenodds %s: %s: skipped %zu invalid line(s) and %zu repeated round id(s)\n",
                h->cmd, h->input, f->invalid, f->duplicates);
    return rc;
}

/* ---- rounds kept ---- */

int eo_cli_rounds_push(eo_cli_rounds *rs, eo_round *r)
{
    if (rs->n == rs->cap) {
        size_t cap = rs->cap ? 2 * rs->cap : 1024;
        eo_round *q = realloc(rs->r, cap * sizeof *q);
        if (q == NULL)
            return EO_ENOMEM;
        rs->r = q;
        rs->cap = cap;
    }
    rs->r[rs->n++] = *r;
    memset(r, 0, sizeof *r);
    return 0;
}

void eo_cli_rounds_free(eo_cli_rounds *rs)
{
    for (size_t i = 0; i < rs->n; i++)
        eo_round_free(&rs->r[i]);
    free(rs->r);
    memset(rs, 0, sizeof *rs);
}

/* ---- pieces of the reports ---- */

json_t *eo_cli_json_real(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

json_t *eo_cli_metrics_json(const eo_metrics_result *m)
{
    return json_pack("{s:I,s:o,s:o,s:o}", "rounds", (json_int_t)m->count, "logloss",
                     eo_cli_json_real(m->logloss), "brier", eo_cli_json_real(m->brier),
                     "accuracy", eo_cli_json_real(m->accuracy));
}

void eo_cli_skipped_json(const eo_cli_fold *f, json_t *out)
{
    if (f->head->skip_invalid)
        json_object_set_new(out, "skipped",
                            json_pack("{s:I,s:I}", "invalid", (json_int_t)f->invalid, "duplicates",
                                      (json_int_t)f->duplicates));
}
