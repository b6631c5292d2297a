/* The round tracker (eo_tracker.h): a fixed table of player slots, the round's time per team
 * summed over segments, and the canonical record built at round end. Pure: no I/O, no clock. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evenodds/eo_tracker.h"

/* One slot per connected player, plus those who left during the round and still count for it.
 * The header bounds both together by EO_TRACK_PLAYERS_MAX, which also keeps a record within
 * EO_PLAYERS_MAX members without trimming. */
#define SLOTS EO_TRACK_PLAYERS_MAX

/* A player's time on one playing team (A or B) in the running round. */
typedef struct stint {
    bool seen;      /* he had a segment on this team (maybe of zero length) */
    double total;   /* seconds of closed segments */
    double first;   /* start of his first segment (absolute time) */
    double end;     /* end of his last closed segment (absolute time) */
    uint64_t order; /* when he first joined the team, for the record's member order */
} stint;

typedef struct player {
    char id[EO_ID_MAX + 1];
    char party[EO_ID_MAX + 1];
    bool has_party;
    bool connected;
    eo_track_team team; /* NONE once disconnected */
    double team_since;
    bool is_protected;
    bool dead;
    bool has_score;
    int64_t score;
    /* The running round's counts. A segment is open exactly when a round runs and he is
     * connected on A or B, so no flag is kept for it: seg_at is its start. */
    bool in_round;  /* he was on A or B at some time in the round */
    bool took_part; /* damage dealt or taken, or healing, while on A or B */
    bool commanded; /* commanded at some time in the round (NS2) */
    int last;       /* 0 or 1: the playing team he was on last in the round; -1 none */
    double seg_at;
    stint on[2];
} player;

struct eo_tracker {
    bool running;
    double start; /* round start (absolute time) */
    double last;  /* latest time seen: a smaller one is taken as this */
    uint64_t seq; /* join counter behind stint.order */
    size_t n;     /* slots in use */
    size_t nconn; /* of which connected */
    /* Used slots in connection order. Lookups scan hash[] (dense, 1 KiB) before touching the
     * larger player records, which keeps participate() cheap at 256 players. */
    uint16_t ord[SLOTS];
    uint32_t hash[SLOTS];
    uint8_t len[SLOTS];
    bool used[SLOTS];
    player p[SLOTS];
};

/* An id as looked up: its length is bounded so that an unterminated or huge string is never
 * scanned past EO_ID_MAX + 1 bytes. */
typedef struct key {
    const char *s;
    size_t len;
    uint32_t hash;
} key;

static bool key_make(const char *id, key *k)
{
    if (id == NULL)
        return false;
    uint32_t h = 2166136261u; /* FNV-1a */
    size_t i = 0;
    for (; i <= EO_ID_MAX && id[i] != '\0'; i++)
        h = (h ^ (unsigned char)id[i]) * 16777619u;
    k->s = id;
    k->len = i;
    k->hash = h;
    return i <= EO_ID_MAX;
}

static int lookup(const eo_tracker *t, const key *k)
{
    for (size_t i = 0; i < t->n; i++) {
        unsigned s = t->ord[i];
        if (t->hash[s] == k->hash && t->len[s] == k->len && memcmp(t->p[s].id, k->s, k->len) == 0)
            return (int)s;
    }
    return -1;
}

/* The header promises EO_EINVAL for every bad id, where eo_id_check() says EO_ELIMIT for a long
 * one. */
static bool id_ok(const char *s)
{
    if (s == NULL)
        return false;
    size_t n = strnlen(s, EO_ID_MAX + 1);
    return n <= EO_ID_MAX && eo_id_check(s, n) == 0;
}

/* The slot of the connected player @p id. Stored ids are valid, so the id check runs only on a
 * miss: the hot path (participate) pays for a hash and a scan, not for UTF-8 validation. */
static int find_connected(const eo_tracker *t, const char *id, int *slot)
{
    if (t == NULL)
        return EO_EINVAL;
    key k;
    if (!key_make(id, &k))
        return EO_EINVAL;
    int s = lookup(t, &k);
    if (s >= 0 && t->p[s].connected) {
        *slot = s;
        return 0;
    }
    return eo_id_check(id, k.len) == 0 ? EO_ENOTFOUND : EO_EINVAL;
}

/* find_connected() for the calls that change him. */
static int find_mut(eo_tracker *t, const char *id, player **out)
{
    int s;
    int rc = find_connected(t, id, &s);
    if (rc == 0)
        *out = &t->p[s];
    return rc;
}

/* Times never go backwards; a time that is not finite is a caller's bug, refused before any
 * change. */
static double clock_at(const eo_tracker *t, double now)
{
    return now < t->last ? t->last : now;
}

static int side(eo_track_team team)
{
    return team == EO_TRACK_A ? 0 : team == EO_TRACK_B ? 1 : -1;
}

static bool team_ok(eo_track_team team)
{
    return team == EO_TRACK_NONE || team == EO_TRACK_A || team == EO_TRACK_B ||
           team == EO_TRACK_WAITING;
}

static void clear_counts(player *p)
{
    p->in_round = false;
    p->took_part = false;
    p->commanded = false;
    p->last = -1;
    p->seg_at = 0.0;
    memset(p->on, 0, sizeof p->on);
}

static bool seg_open(const eo_tracker *t, const player *p)
{
    return t->running && p->connected && side(p->team) >= 0;
}

static void seg_begin(eo_tracker *t, player *p, double now)
{
    int s = side(p->team);
    stint *st = &p->on[s];
    if (!st->seen) {
        st->seen = true;
        st->first = now;
        st->order = t->seq++;
    }
    p->in_round = true;
    p->last = s;
    p->seg_at = now;
}

static void seg_end(player *p, double now)
{
    stint *st = &p->on[side(p->team)];
    st->total += now - p->seg_at;
    st->end = now;
}

/* Every change of team goes through here, so that segments follow the team. */
static void move_to(eo_tracker *t, player *p, eo_track_team team, double now)
{
    if (p->team == team)
        return;
    if (seg_open(t, p))
        seg_end(p, now);
    p->team = team;
    p->team_since = now;
    p->dead = false;
    p->is_protected = false;
    p->has_score = false;
    p->score = 0;
    if (seg_open(t, p))
        seg_begin(t, p, now);
}

static size_t ord_index(const eo_tracker *t, unsigned s)
{
    size_t i = 0;
    while (i < t->n && t->ord[i] != s)
        i++;
    return i;
}

static void ord_remove(eo_tracker *t, size_t i)
{
    memmove(&t->ord[i], &t->ord[i + 1], (t->n - i - 1) * sizeof t->ord[0]);
    t->n--;
}

static void forget(eo_tracker *t, unsigned s)
{
    ord_remove(t, ord_index(t, s));
    t->used[s] = false;
}

/* Room for a new player when every slot is taken (then some are players who left during the
 * round): the one with the least claim on the record goes, first those who never took part
 * (they would not be rated unless they came back), then the least time played. */
static void evict_one(eo_tracker *t)
{
    int best = -1;
    bool best_part = true;
    double best_time = INFINITY;
    for (size_t i = 0; i < t->n; i++) {
        unsigned s = t->ord[i];
        const player *p = &t->p[s];
        if (p->connected)
            continue;
        double time = p->on[0].total + p->on[1].total;
        if (best < 0 || (!p->took_part && best_part) ||
            (p->took_part == best_part && time < best_time)) {
            best = (int)s;
            best_part = p->took_part;
            best_time = time;
        }
    }
    if (best >= 0)
        forget(t, (unsigned)best);
}

/* Connects @p id (new or known) at @p now, which the caller has checked. */
static int attach(eo_tracker *t, const char *id, double now, player **out)
{
    key k;
    if (!key_make(id, &k) || eo_id_check(id, k.len) != 0)
        return EO_EINVAL;
    int s = lookup(t, &k);
    if (s >= 0 && t->p[s].connected) {
        *out = &t->p[s];
        return 0;
    }
    if (t->nconn >= EO_TRACK_PLAYERS_MAX)
        return EO_ELIMIT;
    if (s >= 0) {
        /* A reconnect: a new connection, so he moves to the end of the connection order, and
         * keeps the round's counts (and his party). */
        ord_remove(t, ord_index(t, (unsigned)s));
    } else {
        if (t->n >= SLOTS)
            evict_one(t);
        s = 0;
        while (t->used[s])
            s++;
        player *p = &t->p[s];
        memset(p, 0, sizeof *p);
        memcpy(p->id, id, k.len);
        p->id[k.len] = '\0';
        p->last = -1;
        t->used[s] = true;
        t->hash[s] = k.hash;
        t->len[s] = (uint8_t)k.len;
    }
    player *p = &t->p[s];
    p->connected = true;
    p->team = EO_TRACK_NONE;
    p->team_since = now;
    p->dead = false;
    p->is_protected = false;
    p->has_score = false;
    p->score = 0;
    t->ord[t->n++] = (uint16_t)s;
    t->nconn++;
    *out = p;
    return 0;
}

int eo_tracker_create(eo_tracker **out)
{
    if (out == NULL)
        return EO_EINVAL;
    eo_tracker *t = calloc(1, sizeof *t);
    if (t == NULL)
        return EO_ENOMEM;
    t->last = -INFINITY;
    *out = t;
    return 0;
}

void eo_tracker_destroy(eo_tracker *t)
{
    free(t);
}

int eo_tracker_connect(eo_tracker *t, const char *id, double now)
{
    if (t == NULL || !isfinite(now))
        return EO_EINVAL;
    double at = clock_at(t, now);
    player *p;
    int rc = attach(t, id, at, &p);
    if (rc == 0)
        t->last = at;
    return rc;
}

int eo_tracker_disconnect(eo_tracker *t, const char *id, double now)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc != 0)
        return rc;
    if (!isfinite(now))
        return EO_EINVAL;
    double at = t->last = clock_at(t, now);
    move_to(t, p, EO_TRACK_NONE, at);
    p->connected = false;
    t->nconn--;
    /* Only a player the round counted is worth a slot after he leaves. */
    if (!t->running || !p->in_round)
        forget(t, (unsigned)(p - t->p));
    return 0;
}

int eo_tracker_set_team(eo_tracker *t, const char *id, eo_track_team team, double now)
{
    if (t == NULL || !isfinite(now) || !team_ok(team))
        return EO_EINVAL;
    double at = clock_at(t, now);
    player *p;
    int rc = attach(t, id, at, &p);
    if (rc != 0)
        return rc;
    t->last = at;
    move_to(t, p, team, at);
    return 0;
}

int eo_tracker_participate(eo_tracker *t, const char *id, eo_track_event ev, double now)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc != 0)
        return rc;
    if (!isfinite(now) ||
        (ev != EO_TRACK_DAMAGE_DEALT && ev != EO_TRACK_DAMAGE_TAKEN && ev != EO_TRACK_HEALED))
        return EO_EINVAL;
    t->last = clock_at(t, now);
    if (seg_open(t, p))
        p->took_part = true;
    return 0;
}

int eo_tracker_set_dead(eo_tracker *t, const char *id, bool dead)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc == 0)
        p->dead = dead;
    return rc;
}

int eo_tracker_set_protected(eo_tracker *t, const char *id, bool is_protected)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc == 0)
        p->is_protected = is_protected;
    return rc;
}

int eo_tracker_set_score(eo_tracker *t, const char *id, int64_t score)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc == 0) {
        p->score = score;
        p->has_score = true;
    }
    return rc;
}

int eo_tracker_set_commander(eo_tracker *t, const char *id)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc == 0 && seg_open(t, p))
        p->commanded = true;
    return rc;
}

int eo_tracker_set_party(eo_tracker *t, const char *id, const char *party)
{
    player *p;
    int rc = find_mut(t, id, &p);
    if (rc != 0)
        return rc;
    if (party == NULL) {
        p->has_party = false;
        p->party[0] = '\0';
        return 0;
    }
    if (!id_ok(party))
        return EO_EINVAL;
    size_t n = strlen(party);
    memcpy(p->party, party, n + 1);
    p->has_party = true;
    return 0;
}

int eo_tracker_round_start(eo_tracker *t, double now)
{
    if (t == NULL || !isfinite(now))
        return EO_EINVAL;
    if (t->running)
        return EO_EBUSY;
    double at = t->last = clock_at(t, now);
    t->running = true;
    t->start = at;
    t->seq = 0;
    /* In connection order, so that the record lists those present at the start that way. */
    for (size_t i = 0; i < t->n; i++) {
        player *p = &t->p[t->ord[i]];
        clear_counts(p);
        if (seg_open(t, p))
            seg_begin(t, p, at);
    }
    return 0;
}

bool eo_tracker_round_running(const eo_tracker *t)
{
    return t != NULL && t->running;
}

static int fail(eo_round_error *err, int rc, const char *field, const char *message)
{
    if (err != NULL) {
        snprintf(err->field, sizeof err->field, "%s", field);
        snprintf(err->message, sizeof err->message, "%s", message);
    }
    return rc;
}

static char *dup_str(const char *s)
{
    if (s == NULL)
        return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d != NULL)
        memcpy(d, s, n);
    return d;
}

/* Unix seconds of the record: the floor of a caller's time, or 0 ("absent") when it cannot be
 * one: negative, or past 9999-12-31, the codec's EO_ROUND_TIME_MAX (the tracker stays free of
 * the codec's header and jansson). */
static int64_t unix_floor(double x)
{
    return x >= 0.0 && x < 253402300800.0 ? (int64_t)floor(x) : 0;
}

/* A rated player on his team, before the record is written. */
typedef struct cand {
    const player *p;
    uint64_t order;
    double time, joined, left; /* seconds */
} cand;

static int cand_cmp(const void *pa, const void *pb)
{
    const cand *a = pa;
    const cand *b = pb;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* Decides whether @p p is rated at @p end and on which team; fills @p c. -1: not rated. */
static int rate_one(const eo_tracker *t, const player *p, double end, double len, cand *c)
{
    if (!p->in_round)
        return -1;
    bool open = seg_open(t, p);
    if (!open && !p->took_part)
        return -1;
    double total[2], last_end[2];
    for (int s = 0; s < 2; s++) {
        total[s] = p->on[s].total;
        last_end[s] = p->on[s].end;
    }
    if (open) {
        int s = side(p->team);
        total[s] += end - p->seg_at;
        last_end[s] = end;
    }
    if (!(total[0] > 0.0) && !(total[1] > 0.0))
        return -1;
    int s = total[0] > total[1] ? 0 : total[1] > total[0] ? 1 : p->last;
    c->p = p;
    c->order = p->on[s].order;
    c->time = total[s] / len;
    c->time = c->time < 0.0 ? 0.0 : c->time > 1.0 ? 1.0 : c->time;
    c->joined = fmax(0.0, p->on[s].first - t->start);
    c->left = fmin(len, fmax(c->joined, last_end[s] - t->start));
    return s;
}

static int write_member(eo_member *m, const cand *c)
{
    m->id = dup_str(c->p->id);
    if (m->id == NULL)
        return EO_ENOMEM;
    if (c->p->has_party && (m->party = dup_str(c->p->party)) == NULL)
        return EO_ENOMEM;
    m->commander = c->p->commanded;
    m->has = EO_MEMBER_TIME | EO_MEMBER_JOINED | EO_MEMBER_LEFT;
    m->time = c->time;
    m->joined = c->joined;
    m->left = c->left;
    return 0;
}

static int build(const eo_tracker *t, double end, eo_winner winner, const char *round_id,
                 const char *server, const char *map, const char *mode, eo_round *out,
                 eo_round_error *err)
{
    static const char *const team_name[2] = {"A", "B"};
    double len = end - t->start;
    if (!(len > 0.0))
        return fail(err, EO_EINVAL, "", "round has zero length");
    cand c[2][SLOTS];
    size_t nc[2] = {0, 0};
    for (size_t i = 0; i < t->n; i++) {
        cand x;
        int s = rate_one(t, &t->p[t->ord[i]], end, len, &x);
        if (s >= 0)
            c[s][nc[s]++] = x;
    }
    for (int s = 0; s < 2; s++)
        if (nc[s] == 0)
            return fail(err, EO_EINVAL, team_name[s], "team is empty: no player was rated on it");

    out->winner = winner;
    out->started_at = unix_floor(t->start);
    out->ended_at = unix_floor(end);
    if ((out->id = dup_str(round_id)) == NULL ||
        (server != NULL && (out->server = dup_str(server)) == NULL) ||
        (map != NULL && (out->map = dup_str(map)) == NULL) ||
        (mode != NULL && (out->mode = dup_str(mode)) == NULL))
        return fail(err, EO_ENOMEM, "", "out of memory");
    for (int s = 0; s < 2; s++) {
        qsort(c[s], nc[s], sizeof c[s][0], cand_cmp);
        out->team[s] = calloc(nc[s], sizeof(eo_member));
        if (out->team[s] == NULL)
            return fail(err, EO_ENOMEM, "", "out of memory");
        for (size_t i = 0; i < nc[s]; i++) {
            out->n[s] = i + 1; /* so that eo_round_free() releases a partly written member */
            if (write_member(&out->team[s][i], &c[s][i]) != 0)
                return fail(err, EO_ENOMEM, "", "out of memory");
        }
    }
    /* The rules above imply a valid record; a failure here is a bug in this file. */
    if (eo_round_validate(out, err) != 0)
        return EO_EINTERNAL;
    return 0;
}

/* The round is over: those who left are forgotten and every count is cleared. */
static void finish(eo_tracker *t)
{
    size_t i = 0;
    while (i < t->n) {
        unsigned s = t->ord[i];
        if (!t->p[s].connected) {
            ord_remove(t, i);
            t->used[s] = false;
            continue;
        }
        clear_counts(&t->p[s]);
        i++;
    }
    t->running = false;
}

int eo_tracker_round_end(eo_tracker *t, double now, eo_winner winner, const char *round_id,
                         const char *server, const char *map, const char *mode, eo_round *out,
                         eo_round_error *err)
{
    if (out != NULL)
        memset(out, 0, sizeof *out);
    /* Bad arguments change nothing: the round keeps running so that the caller can retry. */
    if (t == NULL || out == NULL)
        return fail(err, EO_EINVAL, "", "no tracker or no output record");
    if (!t->running)
        return fail(err, EO_EINVAL, "", "no round is running");
    if (!isfinite(now))
        return fail(err, EO_EINVAL, "ended_at", "time is not finite");
    if (winner != EO_WIN_A && winner != EO_WIN_B && winner != EO_DRAW)
        return fail(err, EO_EINVAL, "winner", "expected A, B or draw");
    if (!id_ok(round_id))
        return fail(err, EO_EINVAL, "id", "not a valid id");
    if (server != NULL && !id_ok(server))
        return fail(err, EO_EINVAL, "server", "not a valid id");
    if (map != NULL && !id_ok(map))
        return fail(err, EO_EINVAL, "map", "not a valid id");
    if (mode != NULL && !id_ok(mode))
        return fail(err, EO_EINVAL, "mode", "not a valid id");
    double end = t->last = clock_at(t, now);
    int rc = build(t, end, winner, round_id, server, map, mode, out, err);
    if (rc != 0)
        eo_round_free(out);
    finish(t);
    return rc;
}

int eo_tracker_round_abandon(eo_tracker *t, double now)
{
    if (t == NULL || !isfinite(now))
        return EO_EINVAL;
    if (!t->running)
        return 0;
    t->last = clock_at(t, now);
    finish(t);
    return 0;
}

size_t eo_tracker_count(const eo_tracker *t)
{
    return t == NULL ? 0 : t->nconn;
}

size_t eo_tracker_count_team(const eo_tracker *t, eo_track_team team)
{
    size_t n = 0;
    for (size_t i = 0; t != NULL && i < t->n; i++) {
        const player *p = &t->p[t->ord[i]];
        n += p->connected && p->team == team;
    }
    return n;
}

static void describe(const player *p, eo_track_player *out)
{
    out->id = p->id;
    out->team = p->team;
    out->team_since = p->team_since;
    out->party = p->has_party ? p->party : NULL;
    out->is_protected = p->is_protected;
    out->dead = p->dead;
    out->has_score = p->has_score;
    out->score = p->score;
}

int eo_tracker_player_at(const eo_tracker *t, size_t i, eo_track_player *out)
{
    if (t == NULL || out == NULL)
        return EO_EINVAL;
    for (size_t j = 0; j < t->n; j++) {
        const player *p = &t->p[t->ord[j]];
        if (p->connected && i-- == 0) {
            describe(p, out);
            return 0;
        }
    }
    return EO_ERANGE;
}

int eo_tracker_player(const eo_tracker *t, const char *id, eo_track_player *out)
{
    int s;
    int rc = find_connected(t, id, &s);
    if (rc == 0 && out != NULL)
        describe(&t->p[s], out);
    return rc;
}
