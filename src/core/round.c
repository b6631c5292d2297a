/* Semantic validation of the canonical round record (eo_round.h). Pure. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numeric.h"
#include "core/round_internal.h"
#include "evenodds/eo_round.h"

static const char *const team_name[2] = {"A", "B"};

void eo_round_free(eo_round *r)
{
    if (r == NULL)
        return;
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; r->team[t] != NULL && i < r->n[t]; i++) {
            free(r->team[t][i].id);
            free(r->team[t][i].party);
            free(r->team[t][i].name);
        }
        free(r->team[t]);
    }
    free(r->id);
    free(r->server);
    free(r->map);
    free(r->mode);
    memset(r, 0, sizeof *r);
}

/* Length of the valid UTF-8 sequence at s, or 0 (overlong forms, surrogates and values above
 * U+10FFFF are invalid; a NUL ends the string, so it never counts as a continuation). */
static size_t seq_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF) {
        len = 2; cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
        len = 3; cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        len = 4; cp = c & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
        return 0;
    return len;
}

void eo__utf8_fix(char *s)
{
    unsigned char *p = (unsigned char *)s;
    while (*p != '\0') {
        size_t l = seq_len(p);
        if (l > 0) {
            p += l;
            continue;
        }
        /* A lead byte whose sequence runs into the end was cut by truncation: drop it. */
        size_t rest = strlen((char *)p);
        if (*p >= 0xC2 && *p <= 0xF4 && rest < 4) {
            bool cut = true;
            for (size_t i = 1; i < rest; i++)
                cut = cut && (p[i] & 0xC0) == 0x80;
            if (cut) {
                *p = '\0';
                return;
            }
        }
        *p++ = '?';
    }
}

int eo__fail(eo_round_error *err, const char *field, const char *fmt, ...)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        eo__utf8_fix(err->message);
    }
    return EO_EINVAL;
}

/* The same message for every id check, so callers (codec, engine) word errors alike. */
static int check_id(const char *s, eo_round_error *err, const char *field)
{
    if (s == NULL)
        return eo__fail(err, field, "required field missing");
    if (s[0] == '\0')
        return eo__fail(err, field, "must not be empty");
    int rc = eo_id_check(s, strlen(s));
    if (rc == EO_ELIMIT)
        return eo__fail(err, field, "longer than %d bytes", EO_ID_MAX);
    if (rc != 0)
        return eo__fail(err, field, "contains a control character or invalid UTF-8");
    return 0;
}

static int check_opt_string(const char *s, eo_round_error *err, const char *field)
{
    return s == NULL ? 0 : check_id(s, err, field);
}

static int check_member(const eo_member *m, int t, size_t i, eo_round_error *err)
{
    char field[64];
    snprintf(field, sizeof field, "%s[%zu].id", team_name[t], i);
    int rc = check_id(m->id, err, field);
    if (rc != 0)
        return rc;
    if (m->has & EO_MEMBER_TIME) {
        snprintf(field, sizeof field, "%s[%zu].time", team_name[t], i);
        /* Written as !(x >= 0 && x <= 1) so that NaN is rejected as well. */
        if (!(m->time >= 0.0 && m->time <= 1.0))
            return eo__fail(err, field, "expected a fraction in [0, 1]");
    }
    if (m->has & EO_MEMBER_JOINED) {
        snprintf(field, sizeof field, "%s[%zu].joined", team_name[t], i);
        if (!isfinite(m->joined) || !(m->joined >= 0.0))
            return eo__fail(err, field, "expected a number of seconds >= 0");
    }
    if (m->has & EO_MEMBER_LEFT) {
        snprintf(field, sizeof field, "%s[%zu].left", team_name[t], i);
        if (!isfinite(m->left) || !(m->left >= 0.0))
            return eo__fail(err, field, "expected a number of seconds >= 0");
        if ((m->has & EO_MEMBER_JOINED) && m->left < m->joined)
            return eo__fail(err, field, "left (%.17g) is before joined (%.17g)", m->left, m->joined);
    }
    if (m->has & EO_MEMBER_PLAYTIME) {
        snprintf(field, sizeof field, "%s[%zu].playtime", team_name[t], i);
        if (!isfinite(m->playtime) || !(m->playtime >= 0.0))
            return eo__fail(err, field, "expected a number of seconds >= 0");
    }
    if (m->party != NULL) {
        snprintf(field, sizeof field, "%s[%zu].party", team_name[t], i);
        rc = check_id(m->party, err, field);
        if (rc != 0)
            return rc;
    }
    if (m->name != NULL) {
        snprintf(field, sizeof field, "%s[%zu].name", team_name[t], i);
        rc = check_id(m->name, err, field);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* A player's place in the round, sorted by id to find repeats in O(n log n). */
typedef struct slot {
    const char *id;
    unsigned team;
    unsigned index;
} slot;

static int slot_cmp(const void *pa, const void *pb)
{
    const slot *a = pa;
    const slot *b = pb;
    int c = strcmp(a->id, b->id);
    if (c != 0)
        return c;
    /* Ties by position, so the later occurrence is the one reported. */
    if (a->team != b->team)
        return a->team < b->team ? -1 : 1;
    return a->index < b->index ? -1 : (a->index > b->index);
}

static int check_repeats(const eo_round *r, eo_round_error *err)
{
    slot s[EO_PLAYERS_MAX];
    size_t n = 0;
    for (unsigned t = 0; t < 2; t++)
        for (size_t i = 0; i < r->n[t]; i++)
            s[n++] = (slot){r->team[t][i].id, t, (unsigned)i};
    qsort(s, n, sizeof s[0], slot_cmp);
    /* Several repeats: report the earliest repeat in record order, as a reader would meet it.
     * Within a group of equal ids positions ascend, so each group's start is the original. */
    const slot *worst = NULL;
    const slot *first = NULL;
    size_t group = 0;
    for (size_t i = 1; i < n; i++) {
        if (strcmp(s[group].id, s[i].id) != 0) {
            group = i;
            continue;
        }
        if (worst == NULL || s[i].team < worst->team ||
            (s[i].team == worst->team && s[i].index < worst->index)) {
            worst = &s[i];
            first = &s[group];
        }
    }
    if (worst == NULL)
        return 0;
    char field[64];
    snprintf(field, sizeof field, "%s[%u].id", team_name[worst->team], worst->index);
    if (worst->team == first->team)
        return eo__fail(err, field, "player \"%s\" is already on team %s at %s[%u]", worst->id,
                    team_name[first->team], team_name[first->team], first->index);
    return eo__fail(err, field, "player \"%s\" is on both teams (also at %s[%u])", worst->id,
                team_name[first->team], first->index);
}

int eo_round_validate(const eo_round *r, eo_round_error *err)
{
    if (r == NULL)
        return eo__fail(err, "", "no round");
    int rc = check_id(r->id, err, "id");
    if (rc == 0)
        rc = check_opt_string(r->server, err, "server");
    if (rc == 0)
        rc = check_opt_string(r->map, err, "map");
    if (rc == 0)
        rc = check_opt_string(r->mode, err, "mode");
    if (rc != 0)
        return rc;
    if (r->winner != EO_WIN_A && r->winner != EO_WIN_B && r->winner != EO_DRAW)
        return eo__fail(err, "winner", "expected \"A\", \"B\" or \"draw\"");
    if (r->started_at < 0)
        return eo__fail(err, "started_at", "expected Unix seconds >= 0");
    if (r->ended_at < 0)
        return eo__fail(err, "ended_at", "expected Unix seconds >= 0");
    if (r->started_at != 0 && r->ended_at != 0 && r->ended_at < r->started_at)
        return eo__fail(err, "ended_at", "before started_at");
    for (int t = 0; t < 2; t++) {
        if (r->n[t] == 0 || r->team[t] == NULL)
            return eo__fail(err, team_name[t], "team is empty");
        if (r->n[t] > EO_PLAYERS_MAX)
            return eo__fail(err, team_name[t], "too many players: %zu (at most %d in a round)",
                        r->n[t], EO_PLAYERS_MAX);
    }
    if (r->n[0] + r->n[1] > EO_PLAYERS_MAX)
        return eo__fail(err, "B", "too many players: %zu in the round (at most %d)",
                    r->n[0] + r->n[1], EO_PLAYERS_MAX);
    for (int t = 0; t < 2; t++)
        for (size_t i = 0; i < r->n[t]; i++)
            if ((rc = check_member(&r->team[t][i], t, i, err)) != 0)
                return rc;
    return check_repeats(r, err);
}

double eo_round_member_weight(const eo_round *r, const eo_member *m)
{
    if (m->has & EO_MEMBER_TIME)
        return eo__clamp01(m->time);
    if (!(m->has & (EO_MEMBER_JOINED | EO_MEMBER_LEFT)) || r->ended_at <= r->started_at ||
        r->started_at <= 0)
        return 1.0;
    double len = (double)(r->ended_at - r->started_at);
    double joined = (m->has & EO_MEMBER_JOINED) ? m->joined : 0.0;
    double left = (m->has & EO_MEMBER_LEFT) && m->left < len ? m->left : len;
    return eo__clamp01((left - joined) / len);
}

void eo_round_drop_times(eo_round *r)
{
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < r->n[t]; i++) {
            eo_member *m = &r->team[t][i];
            m->has &= ~(unsigned)(EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT);
            m->time = m->joined = m->left = 0.0;
        }
    }
}
