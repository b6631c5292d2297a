/* evenodds compare: two files of per-round predictions (`evenodds eval --predictions-out`) of
 * the same rounds, compared round by round: the paired difference in log loss and Brier with
 * its standard error, and a verdict (docs/EVAL.md, "Comparing two configurations"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_codec.h"
#include "evenodds/eo_metrics.h"

static const char compare_usage[] =
    "usage: evenodds compare [--format table|json] A.jsonl B.jsonl\n"
    "\n"
    "Compares two files of predictions of the same rounds, as `evenodds eval\n"
    "--predictions-out` writes them (one {\"id\",\"p_a\",\"outcome\"} per line), round by round:\n"
    "the mean difference B - A in log loss and in Brier over the decided rounds (draws left\n"
    "out, as eval does), each with its standard error over the rounds, and a verdict: the\n"
    "file whose log loss is lower by more than two standard errors, or neither. Rounds are\n"
    "matched by id; a round in one file only, a repeated id or two outcomes for one round is\n"
    "an error naming the round.\n"
    "\n"
    "  --format table|json aligned text, or one JSON object (default: table on a terminal)\n"
    "\n"
    "Exit status: 0 done, 1 unreadable, invalid or mismatched input (file, line, field or\n"
    "round named), 2 bad usage.\n";

/* Longest line of a predictions file: an id of EO_ID_MAX bytes escaped (6 bytes a byte at
 * worst) and the other fields fit with room. */
#define LINE_MAX_BYTES 4096

/* Standard errors a difference must exceed for the verdict. */
#define VERDICT_SE 2.0

/* One prediction as read, and its partner's P once matched. */
typedef struct pred {
    char *id;
    double p, p_other;
    eo_winner outcome;
    size_t line;
} pred;

typedef struct preds {
    const char *path;
    pred *v;
    size_t n, cap;
} preds;

static void preds_free(preds *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i].id);
    free(ps->v);
}

static int preds_push(preds *ps, const eo_prediction *p, size_t line)
{
    if (ps->n == ps->cap) {
        size_t cap = ps->cap ? 2 * ps->cap : 1024;
        pred *v = realloc(ps->v, cap * sizeof *v);
        if (v == NULL)
            return -1;
        ps->v = v;
        ps->cap = cap;
    }
    size_t len = strlen(p->id) + 1;
    char *id = malloc(len);
    if (id == NULL)
        return -1;
    memcpy(id, p->id, len);
    ps->v[ps->n++] = (pred){id, p->p_a, NAN, p->outcome, line};
    return 0;
}

static bool blank_line(const char *s)
{
    for (; *s; s++)
        if (*s != ' ' && *s != '\t' && *s != '\r' && *s != '\n')
            return false;
    return true;
}

/* Reads every prediction of @p ps->path. 0, or -1 after a message naming the line. */
static int read_preds(preds *ps)
{
    FILE *f = fopen(ps->path, "r");
    if (f == NULL) {
        fprintf(stderr, "evenodds compare: cannot open '%s'\n", ps->path);
        return -1;
    }
    static char buf[LINE_MAX_BYTES + 2];
    int rc = 0;
    for (size_t line = 1; rc == 0 && fgets(buf, sizeof buf, f) != NULL; line++) {
        size_t len = strlen(buf);
        if (len > LINE_MAX_BYTES && buf[len - 1] != '\n') {
            fprintf(stderr, "evenodds compare: %s:%zu: line longer than %d bytes\n", ps->path, line,
                    LINE_MAX_BYTES);
            rc = -1;
            break;
        }
        if (blank_line(buf))
            continue;
        eo_prediction p;
        eo_round_error err;
        memset(&err, 0, sizeof err);
        if (eo_prediction_from_text(buf, len, &p, &err) != 0) {
            fprintf(stderr, "evenodds compare: %s:%zu: %s%s%s%s\n", ps->path, line,
                    err.field[0] ? "\"" : "", err.field, err.field[0] ? "\": " : "", err.message);
            rc = -1;
        } else if (preds_push(ps, &p, line) != 0) {
            fprintf(stderr, "evenodds compare: out of memory\n");
            rc = -1;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "evenodds compare: cannot read '%s'\n", ps->path);
        rc = -1;
    }
    fclose(f);
    return rc;
}

static int cmp_pred(const void *x, const void *y)
{
    const pred *const *a = x, *const *b = y;
    int c = strcmp((*a)->id, (*b)->id);
    return c != 0 ? c : ((*a)->line > (*b)->line) - ((*a)->line < (*b)->line);
}

/* Pointers to @p ps's predictions sorted by id (then line); NULL when out of memory. A
 * repeated id is an error (-1 in *rc, after a message). */
static pred **sorted(const preds *ps, int *rc)
{
    pred **s = malloc((ps->n ? ps->n : 1) * sizeof *s);
    *rc = s == NULL ? -1 : 0;
    if (s == NULL) {
        fprintf(stderr, "evenodds compare: out of memory\n");
        return NULL;
    }
    for (size_t i = 0; i < ps->n; i++)
        s[i] = &ps->v[i];
    qsort(s, ps->n, sizeof *s, cmp_pred);
    for (size_t i = 1; i < ps->n && *rc == 0; i++) {
        if (strcmp(s[i - 1]->id, s[i]->id) == 0) {
            fprintf(stderr, "evenodds compare: %s:%zu: round \"%s\" again (first on line %zu)\n",
                    ps->path, s[i]->line, s[i]->id, s[i - 1]->line);
            *rc = -1;
        }
    }
    return s;
}

/* Matches A's rounds with B's by id, setting each A's p_other. 0, or -1 after a message naming
 * the first round (by id) in one file only or with two outcomes. */
static int match(preds *a, preds *b)
{
    int rc = 0, rb = 0;
    pred **sa = sorted(a, &rc), **sb = rc == 0 ? sorted(b, &rb) : NULL;
    size_t i = 0, j = 0;
    while (rc == 0 && rb == 0 && (i < a->n || j < b->n)) {
        int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(sa[i]->id, sb[j]->id);
        if (c != 0) {
            const preds *in = c < 0 ? a : b, *out = c < 0 ? b : a;
            const pred *p = c < 0 ? sa[i] : sb[j];
            fprintf(stderr, "evenodds compare: round \"%s\" (%s:%zu) is not in %s\n", p->id,
                    in->path, p->line, out->path);
            rc = -1;
        } else if (sa[i]->outcome != sb[j]->outcome) {
            fprintf(stderr,
                    "evenodds compare: round \"%s\": another outcome in %s:%zu than in "
                    "%s:%zu\n",
                    sa[i]->id, b->path, sb[j]->line, a->path, sa[i]->line);
            rc = -1;
        } else {
            sa[i++]->p_other = sb[j++]->p;
        }
    }
    free(sa);
    free(sb);
    return rc == 0 && rb == 0 ? 0 : -1;
}

/* ---- output ---- */

static json_t *real_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* "A", "B" or NULL (neither): which is better when the difference beats VERDICT_SE errors. */
static const char *better(double diff, double se)
{
    if (!isfinite(diff) || !isfinite(se) || !(fabs(diff) > VERDICT_SE * se))
        return NULL;
    return diff < 0 ? "B" : "A";
}

static json_t *figure_json(double a, double b, double diff, double se)
{
    const char *w = better(diff, se);
    return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "a", real_or_null(a), "b", real_or_null(b),
                     "diff", real_or_null(diff), "se", real_or_null(se), "z",
                     real_or_null(se > 0 ? diff / se : NAN), "better",
                     w ? json_string(w) : json_null());
}

static int write_json(const preds *a, const preds *b, size_t draws, const eo_paired_result *r)
{
    const char *v = better(r->logloss_diff, r->logloss_se);
    json_t *out = json_pack(
        "{s:s,s:s,s:I,s:I,s:I,s:o,s:o,s:s}", "a", a->path, "b", b->path, "rounds", (json_int_t)a->n,
        "draws", (json_int_t)draws, "counted", (json_int_t)r->a.count, "logloss",
        figure_json(r->a.logloss, r->b.logloss, r->logloss_diff, r->logloss_se), "brier",
        figure_json(r->a.brier, r->b.brier, r->brier_diff, r->brier_se), "verdict",
        v ? v : "neither");
    int rc =
        out != NULL &&
                json_dumpf(out, stdout,
                           JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)) == 0 &&
                putchar('\n') != EOF
            ? 0
            : -1;
    json_decref(out);
    return rc;
}

static void write_table(const preds *a, const preds *b, size_t draws, const eo_paired_result *r)
{
    printf("A: %s\nB: %s\n%zu rounds matched by id; %zu draws left out, %llu counted\n\n", a->path,
           b->path, a->n, draws, (unsigned long long)r->a.count);
    printf("%-9s %9s %9s %10s %9s %7s\n", "", "A", "B", "B - A", "±se", "z");
    printf("%-9s %9.5f %9.5f %+10.5f %9.5f %7.2f\n", "log loss", r->a.logloss, r->b.logloss,
           r->logloss_diff, r->logloss_se, r->logloss_diff / r->logloss_se);
    printf("%-9s %9.5f %9.5f %+10.5f %9.5f %7.2f\n", "Brier", r->a.brier, r->b.brier, r->brier_diff,
           r->brier_se, r->brier_diff / r->brier_se);
    const char *v = better(r->logloss_diff, r->logloss_se);
    if (v != NULL)
        printf("\nverdict: %s predicts better (log loss lower by more than %g standard errors)\n",
               v, VERDICT_SE);
    else
        printf("\nverdict: neither (the log loss differs by at most %g standard errors)\n",
               VERDICT_SE);
}

/* ---- the run ---- */

static int compare_args(int argc, char **argv, const char **files, int *json)
{
    int nfiles = 0;
    *json = -1;
    for (int i = 1; i < argc; i++) {
        int r = eo_opt_format("compare", argc, argv, &i, json);
        if (r < 0)
            return 2;
        if (r > 0)
            continue;
        if (argv[i][0] == '-' && argv[i][1] != '\0') {
            fprintf(stderr, "evenodds compare: unknown option '%s'\n%s", argv[i], compare_usage);
            return 2;
        }
        if (nfiles == 2) {
            fprintf(stderr, "evenodds compare: two files only\n%s", compare_usage);
            return 2;
        }
        files[nfiles++] = argv[i];
    }
    if (nfiles != 2) {
        fprintf(stderr, "evenodds compare: needs A.jsonl and B.jsonl\n%s", compare_usage);
        return 2;
    }
    if (*json < 0)
        *json = isatty(STDOUT_FILENO) != 1;
    return 0;
}

int eo_cmd_compare(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(compare_usage, stdout);
            return 0;
        }
    }
    const char *files[2];
    int json;
    int rc = compare_args(argc, argv, files, &json);
    if (rc != 0)
        return rc;
    preds a = {.path = files[0]}, b = {.path = files[1]};
    int status = 1;
    if (read_preds(&a) == 0 && read_preds(&b) == 0 && match(&a, &b) == 0) {
        eo_paired c;
        memset(&c, 0, sizeof c);
        size_t draws = 0;
        for (size_t i = 0; i < a.n; i++) { /* in A's order: the same sums on every run */
            if (a.v[i].outcome == EO_DRAW)
                draws++;
            else
                (void)eo_paired_add(&c, a.v[i].p, a.v[i].p_other, a.v[i].outcome == EO_WIN_A);
        }
        eo_paired_result r;
        eo_paired_get(&c, &r);
        status = 0;
        if (json)
            status = write_json(&a, &b, draws, &r) == 0 ? 0 : 1;
        else
            write_table(&a, &b, draws, &r);
        if (status != 0 || fflush(stdout) != 0 || ferror(stdout)) {
            fprintf(stderr, "evenodds compare: cannot write the answer\n");
            status = 1;
        }
    }
    preds_free(&a);
    preds_free(&b);
    return status;
}
