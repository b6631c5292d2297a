/* JSONL round logs: one canonical record per line (eo_codec.h). */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/round_internal.h"
#include "evenodds/eo_codec.h"

/* Read-ahead block; lines are assembled from it so that a line's length is bounded before it
 * is stored (getline() would buffer a 1 GB line in full). */
#define BLOCK (64 * 1024)

/* A round id seen in this file and the line it was first on. */
typedef struct seen_id {
    char *id;
    size_t line;
    uint64_t hash;
} seen_id;

struct eo_jsonl_reader {
    FILE *f;
    char *name;
    bool skip_duplicates;
    size_t line;
    size_t skipped;
    size_t refits; /* refit records eo_jsonl_next() passed over */
    char *block;
    size_t block_pos, block_len;
    bool eof;
    char *buf; /* current line, NUL-terminated */
    size_t len, cap;
    seen_id *seen; /* open addressing, cap_seen a power of two, at most half full */
    size_t n_seen, cap_seen;
};

int eo_jsonl_open(FILE *f, const char *name, bool skip_duplicates, eo_jsonl_reader **out)
{
    if (out == NULL)
        return EO_EINVAL;
    *out = NULL;
    if (f == NULL)
        return EO_EINVAL;
    eo_jsonl_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return EO_ENOMEM;
    const char *nm = name != NULL ? name : "-";
    size_t nlen = strlen(nm);
    r->name = malloc(nlen + 1);
    r->block = malloc(BLOCK);
    r->cap = 4096;
    r->buf = malloc(r->cap);
    if (r->name == NULL || r->block == NULL || r->buf == NULL) {
        eo_jsonl_close(r);
        return EO_ENOMEM;
    }
    memcpy(r->name, nm, nlen + 1);
    r->f = f;
    r->skip_duplicates = skip_duplicates;
    *out = r;
    return 0;
}

void eo_jsonl_close(eo_jsonl_reader *r)
{
    if (r == NULL)
        return;
    for (size_t i = 0; i < r->cap_seen; i++)
        free(r->seen[i].id);
    free(r->seen);
    free(r->buf);
    free(r->block);
    free(r->name);
    free(r);
}

size_t eo_jsonl_line(const eo_jsonl_reader *r)
{
    return r != NULL ? r->line : 0;
}

size_t eo_jsonl_skipped(const eo_jsonl_reader *r)
{
    return r != NULL ? r->skipped : 0;
}

/* Appends up to the cap; past it the rest of the line is consumed but dropped. */
static int append(eo_jsonl_reader *r, const char *p, size_t n, bool *too_long)
{
    if (*too_long)
        return 0;
    if (n > EO_JSONL_LINE_MAX - r->len) {
        *too_long = true;
        return 0;
    }
    if (r->len + n + 1 > r->cap) {
        size_t cap = r->cap;
        while (cap < r->len + n + 1)
            cap *= 2;
        if (cap > EO_JSONL_LINE_MAX + 1)
            cap = EO_JSONL_LINE_MAX + 1;
        char *b = realloc(r->buf, cap);
        if (b == NULL)
            return EO_ENOMEM;
        r->buf = b;
        r->cap = cap;
    }
    memcpy(r->buf + r->len, p, n);
    r->len += n;
    r->buf[r->len] = '\0';
    return 0;
}

/* One line into r->buf. Returns 1 (a line, maybe the last without newline), 0 (end of file),
 * EO_EIO or EO_ENOMEM. */
static int read_line(eo_jsonl_reader *r, bool *too_long)
{
    bool any = false;
    r->len = 0;
    r->buf[0] = '\0';
    *too_long = false;
    for (;;) {
        if (r->block_pos == r->block_len) {
            if (r->eof)
                return any ? 1 : 0;
            size_t got = fread(r->block, 1, BLOCK, r->f);
            if (got == 0) {
                if (ferror(r->f))
                    return EO_EIO;
                r->eof = true;
                return any ? 1 : 0;
            }
            r->block_pos = 0;
            r->block_len = got;
        }
        any = true;
        const char *p = r->block + r->block_pos;
        size_t avail = r->block_len - r->block_pos;
        const char *nl = memchr(p, '\n', avail);
        size_t take = nl != NULL ? (size_t)(nl - p) : avail;
        int rc = append(r, p, take, too_long);
        if (rc != 0)
            return rc;
        r->block_pos += take;
        if (nl != NULL) {
            r->block_pos++;
            return 1;
        }
    }
}

/* FNV-1a, 64 bit: ids are short and this table only guards against repeats in one file. */
static uint64_t hash_id(const char *s)
{
    uint64_t h = UINT64_C(14695981039346656037);
    for (; *s != '\0'; s++) {
        h ^= (unsigned char)*s;
        h *= UINT64_C(1099511628211);
    }
    return h;
}

static seen_id *find_slot(seen_id *tab, size_t cap, const char *id, uint64_t h)
{
    size_t i = (size_t)h & (cap - 1);
    while (tab[i].id != NULL && (tab[i].hash != h || strcmp(tab[i].id, id) != 0))
        i = (i + 1) & (cap - 1);
    return &tab[i];
}

static int grow_seen(eo_jsonl_reader *r)
{
    size_t cap = r->cap_seen ? r->cap_seen * 2 : 1024;
    seen_id *tab = calloc(cap, sizeof *tab);
    if (tab == NULL)
        return EO_ENOMEM;
    for (size_t i = 0; i < r->cap_seen; i++)
        if (r->seen[i].id != NULL)
            *find_slot(tab, cap, r->seen[i].id, r->seen[i].hash) = r->seen[i];
    free(r->seen);
    r->seen = tab;
    r->cap_seen = cap;
    return 0;
}

#if defined(__GNUC__)
__attribute__((format(printf, 5, 6)))
#endif
static int report(const eo_jsonl_reader *r, int rc, char *msg, size_t msglen, const char *fmt,
                  ...)
{
    if (msg == NULL || msglen == 0)
        return rc;
    int n = snprintf(msg, msglen, "%s:%zu: ", r->name, r->line);
    if (n >= 0 && (size_t)n < msglen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg + n, msglen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    eo__utf8_fix(msg); /* the name, too, may be cut anywhere */
    return rc;
}

static bool blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return false;
    return true;
}

/* A refit line: {"refit":{…record…}} (an object with "refit" and no "id": every round has an
 * id, so no round is ever read as one). Returns 3 or an error. */
static int parse_refit(eo_jsonl_reader *r, json_t *o, eo_refit_record *refit, char *msg,
                       size_t msglen)
{
    if (json_object_size(o) != 1) {
        json_decref(o);
        return report(r, EO_EINVAL, msg, msglen, "a refit line has the one field \"refit\"");
    }
    eo_round_error err;
    eo_refit_record tmp;
    int rc = eo_refit_from_json(json_object_get(o, "refit"), refit ? refit : &tmp, &err);
    json_decref(o);
    if (rc == EO_ENOMEM)
        return report(r, rc, msg, msglen, "out of memory");
    if (rc != 0)
        return report(r, rc, msg, msglen, "\"refit%s%s\": %s", err.field[0] ? "." : "",
                      err.field, err.message);
    if (refit == NULL)
        eo_refit_free(&tmp);
    return 3;
}

/* Parses the current line. Returns 1 (a round), 2 (a skipped duplicate), 3 (a refit record,
 * into *refit) or an error. */
static int parse_line(eo_jsonl_reader *r, eo_round *round, json_t **obj, eo_refit_record *refit,
                      char *msg, size_t msglen)
{
    const char *text = r->buf;
    size_t len = r->len;
    /* A byte order mark is noise some Windows editors add; it carries nothing. */
    if (r->line == 1 && len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (blank(text, len))
        return 2;
    const char *nul = memchr(text, '\0', len);
    if (nul != NULL)
        return report(r, EO_EPARSE, msg, msglen, "invalid JSON at column %zu: NUL byte",
                      (size_t)(nul - text) + 1);
    json_error_t jerr;
    json_t *o = json_loadb(text, len, EO_JSON_DECODE_FLAGS, &jerr);
    if (o == NULL)
        return report(r, EO_EPARSE, msg, msglen, "invalid JSON at column %d: %s", jerr.column,
                      jerr.text);
    if (json_is_object(o) && json_object_get(o, "refit") != NULL &&
        json_object_get(o, "id") == NULL)
        return parse_refit(r, o, refit, msg, msglen);
    eo_round_error err;
    int rc = eo_round_from_json(o, round, &err);
    if (rc != 0) {
        json_decref(o);
        if (err.field[0] == '\0')
            return report(r, rc, msg, msglen, "%s", err.message);
        return report(r, rc, msg, msglen, "\"%s\": %s", err.field, err.message);
    }
    if (r->n_seen + 1 > r->cap_seen / 2 && (rc = grow_seen(r)) != 0) {
        json_decref(o);
        eo_round_free(round);
        return report(r, rc, msg, msglen, "out of memory");
    }
    uint64_t h = hash_id(round->id);
    seen_id *s = find_slot(r->seen, r->cap_seen, round->id, h);
    if (s->id != NULL) {
        json_decref(o);
        if (r->skip_duplicates) {
            eo_round_free(round);
            r->skipped++;
            return 2;
        }
        rc = report(r, EO_EINVAL, msg, msglen, "\"id\": duplicate round id \"%s\" (first on line %zu)",
                    round->id, s->line);
        eo_round_free(round);
        return rc;
    }
    size_t idlen = strlen(round->id);
    s->id = malloc(idlen + 1);
    if (s->id == NULL) {
        json_decref(o);
        eo_round_free(round);
        return report(r, EO_ENOMEM, msg, msglen, "out of memory");
    }
    memcpy(s->id, round->id, idlen + 1);
    s->hash = h;
    s->line = r->line;
    r->n_seen++;
    if (obj != NULL)
        *obj = o;
    else
        json_decref(o);
    return 1;
}

int eo_jsonl_next_entry(eo_jsonl_reader *r, eo_round *round, json_t **obj,
                        eo_refit_record *refit, char *msg, size_t msglen)
{
    if (obj != NULL)
        *obj = NULL;
    if (round != NULL)
        memset(round, 0, sizeof *round);
    if (refit != NULL)
        memset(refit, 0, sizeof *refit);
    if (msg != NULL && msglen > 0)
        msg[0] = '\0';
    if (r == NULL || round == NULL)
        return EO_EINVAL;
    for (;;) {
        bool too_long;
        int rc = read_line(r, &too_long);
        if (rc == 0)
            return 0;
        /* The line count advances on errors too, so the message names the line at fault. */
        r->line++;
        if (rc < 0)
            return report(r, rc, msg, msglen, rc == EO_EIO ? "read error" : "out of memory");
        if (too_long)
            return report(r, EO_ELIMIT, msg, msglen, "line longer than %zu bytes",
                          EO_JSONL_LINE_MAX);
        rc = parse_line(r, round, obj, refit, msg, msglen);
        if (rc == 3 && refit == NULL) {
            r->refits++; /* a reader of rounds only passes over admin records */
            continue;
        }
        if (rc == 3)
            return EO_JSONL_REFIT;
        if (rc != 2)
            return rc;
    }
}

int eo_jsonl_next(eo_jsonl_reader *r, eo_round *round, json_t **obj, char *msg, size_t msglen)
{
    return eo_jsonl_next_entry(r, round, obj, NULL, msg, msglen);
}

size_t eo_jsonl_refits(const eo_jsonl_reader *r)
{
    return r != NULL ? r->refits : 0;
}
