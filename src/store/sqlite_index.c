/* The read indexes of the SQLite backend (docs/STORE.md "Read indexes"): the board (visible
 * players by display rating, names and search), rounds by number with their members' results,
 * each player's rounds as a chain through them, and the health sums per day and P(A) bin.
 * Written by the engine beside the log, read by the service's read-only handles. */
#include <stdio.h>

#include "core/buf.h"
#include "store/sqlite_internal.h"

enum {
    X_PLAYED,
    X_LAST,
    X_LINK,
    X_RENAME,
    X_ROUND_PUT,
    X_ROUND_LAST,
    X_HEALTH_ADD,
    X_NAME_GET,
    X_BOARD_COUNT,
    X_BOARD_PAGE,
    X_BOARD_WALK,
    X_FEW,
    X_BOARD_ROW,
    X_RANK,
    X_BETWEEN,
    X_ROUNDS,
    X_ROUND_BY_N,
    X_ROUND_BY_ID,
    X_HEALTH_EACH,
    X_COUNT
};

_Static_assert(X_COUNT <= EO__SQ_IX_MAX, "EO__SQ_IX_MAX must hold every statement");

/* A player row's columns (row_columns()) and the name after them. */
#define ROW_COLS                                                                                   \
    "rating, mu, sigma, volatility, rounds, visible, last_ended_at, x1, x2, x3, x4, name"
/* A round (round_columns()), then its members' results. */
#define ROUND_COLS                                                                                 \
    "r.n, r.seq, r.p_a, r.winner, r.at, r.started_at, r.ended_at, r.round_id, "                    \
    "r.map, r.mode, r.server, r.members"
#define MEMBERS_COL 11
/* The round numbers a pool's rowids span: 2^40 - 1. */
#define POOL_SPAN "1099511627775"

static const char *const ix_sql[X_COUNT] = {
    /* The row write of eo_store_player_put() (sqlite.c) with the chain of the player's rounds
     * (X_LAST read his last_n before: RETURNING would buffer its row in a temporary table); his
     * name on the insert only (X_RENAME changes it). */
    [X_PLAYED] = "INSERT INTO players (pool_id, player_id, rating, mu, sigma, volatility, rounds, "
                 "visible, last_ended_at, x1, x2, x3, x4, name, name_key, last_n, prev_n) VALUES "
                 "(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17) "
                 "ON CONFLICT (pool_id, player_id) DO UPDATE SET rating = excluded.rating, "
                 "mu = excluded.mu, sigma = excluded.sigma, volatility = excluded.volatility, "
                 "rounds = excluded.rounds, visible = excluded.visible, "
                 "last_ended_at = excluded.last_ended_at, x1 = excluded.x1, x2 = excluded.x2, "
                 "x3 = excluded.x3, x4 = excluded.x4, last_n = excluded.last_n, "
                 "prev_n = excluded.prev_n",
    [X_LAST] = "SELECT last_n, name FROM players WHERE pool_id = ?1 AND player_id = ?2",
    [X_LINK] = "UPDATE players SET last_n = ?3, prev_n = ?4, name = coalesce(?5, name), "
               "name_key = coalesce(?6, name_key) WHERE pool_id = ?1 AND player_id = ?2",
    /* apart from X_PLAYED, so that the index of names is written when a name changes only */
    [X_RENAME] = "UPDATE players SET name = ?3, name_key = ?4 WHERE pool_id = ?1 AND "
                 "player_id = ?2",
    /* A round's rowid is (pool_id << 40) + n: one seek finds it, a range holds a pool's. */
    [X_ROUND_PUT] = "INSERT INTO round_ix (id, pool_id, n, seq, p_a, winner, at, started_at, "
                    "ended_at, round_id, map, mode, server, members) VALUES ((?1 << 40) + ?2, "
                    "?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    [X_ROUND_LAST] = "SELECT n, seq, p_a, winner, at FROM round_ix WHERE id BETWEEN (?1 << 40) "
                     "AND (?1 << 40) + " POOL_SPAN " ORDER BY id DESC LIMIT 1",
    [X_HEALTH_ADD] = "INSERT INTO health VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                     "?12, ?13, ?14, ?15, ?16, ?17) ON CONFLICT (pool_id, day, bin) DO UPDATE "
                     "SET rounds = rounds + excluded.rounds, draws = draws + excluded.draws, "
                     "stomps = stomps + excluded.stomps, margin = margin + excluded.margin, "
                     "decided = decided + excluded.decided, "
                     "logloss = logloss + excluded.logloss, brier = brier + excluded.brier, "
                     "correct = correct + excluded.correct, p = p + excluded.p, "
                     "a_wins = a_wins + excluded.a_wins, members = members + excluded.members, "
                     "rating = rating + excluded.rating, rating2 = rating2 + excluded.rating2, "
                     "delta = delta + excluded.delta",
    [X_NAME_GET] = "SELECT name FROM players WHERE pool_id = ?1 AND player_id = ?2",
    /* kept by triggers on players (sqlite_schema.c, step 8) */
    [X_BOARD_COUNT] = "SELECT coalesce((SELECT visible FROM board_size WHERE pool_id = ?1), 0)",
    /* The page's ids from the board's index alone (OFFSET steps its entries), then their rows. */
    [X_BOARD_PAGE] = "SELECT p.player_id, " ROW_COLS " FROM (SELECT player_id FROM players "
                     "WHERE pool_id = ?1 AND visible = 1 ORDER BY rating DESC, player_id "
                     "LIMIT ?3 OFFSET ?2) AS k JOIN players AS p ON p.pool_id = ?1 AND "
                     "p.player_id = k.player_id ORDER BY p.rating DESC, p.player_id",
    [X_BOARD_WALK] = "SELECT player_id, name_key FROM players WHERE pool_id = ?1 AND "
                     "visible = 1 ORDER BY rating DESC, player_id",
    /* A search's matches, ids then names (players_name), when few: a player whose id and name
     * both match comes twice. ?3 and ?5 end the ranges of the prefixes ?2 and ?4. */
    [X_FEW] = "SELECT player_id, rating FROM players WHERE pool_id = ?1 AND player_id >= ?2 AND "
              "player_id < ?3 AND visible = 1 UNION ALL SELECT player_id, rating FROM players "
              "WHERE pool_id = ?1 AND name_key >= ?4 AND name_key < ?5 AND visible = 1 LIMIT ?6",
    [X_BOARD_ROW] = "SELECT " ROW_COLS " FROM players WHERE pool_id = ?1 AND player_id = ?2",
    /* Those ahead of (rating ?2, id ?3) on the board: a range of the board's index. */
    [X_RANK] = "SELECT count(*) FROM players WHERE pool_id = ?1 AND visible = 1 AND "
               "rating >= ?2 AND NOT (rating = ?2 AND player_id >= ?3)",
    /* Those after (rating ?2, id ?3) and before (?4, ?5) on the board. */
    [X_BETWEEN] = "SELECT count(*) FROM players WHERE pool_id = ?1 AND visible = 1 AND "
                  "rating <= ?2 AND rating >= ?4 AND NOT (rating = ?2 AND player_id <= ?3) AND "
                  "NOT (rating = ?4 AND player_id >= ?5)",
    [X_ROUNDS] = "SELECT " ROUND_COLS " FROM round_ix AS r WHERE r.id BETWEEN (?1 << 40) AND "
                 "(SELECT coalesce(max(id), 0) FROM round_ix WHERE id BETWEEN (?1 << 40) AND "
                 "(?1 << 40) + " POOL_SPAN ") - ?2 ORDER BY r.id DESC LIMIT ?3",
    [X_ROUND_BY_N] = "SELECT " ROUND_COLS " FROM round_ix AS r WHERE r.id = (?1 << 40) + ?2",
    /* the log's (pool_id, round_id) index finds the round's entry, round_ix_seq its row */
    [X_ROUND_BY_ID] = "SELECT " ROUND_COLS " FROM log AS l JOIN round_ix AS r ON "
                      "r.pool_id = l.pool_id AND r.seq = l.seq WHERE l.pool_id = ?1 AND "
                      "l.round_id = ?2",
    [X_HEALTH_EACH] = "SELECT day, bin, rounds, draws, stomps, margin, decided, logloss, brier, "
                      "correct, p, a_wins, members, rating, rating2, delta FROM health WHERE "
                      "pool_id = ?1 AND day >= ?2 ORDER BY day, bin",
};

static int ix_prep(sq_store *q, int which, sqlite3_stmt **out)
{
    return prepare_once(q, &q->ix[which], ix_sql[which], out);
}

/* Steps a statement that returns no row, then done(). */
static int step_done(sq_store *q, sqlite3_stmt *st, const char *what)
{
    int src = sqlite3_step(st);
    int rc = src == SQLITE_DONE ? 0 : fail(q, src, what);
    if ((src & 0xff) == SQLITE_CONSTRAINT) {
        eo__store_seterr(&q->base, "%s: %s: the entry exists already", q->path, what);
        rc = EO_EEXIST;
    }
    done(st);
    return rc;
}

/* What search compares: ASCII letters in lower case, every other byte as it is (so UTF-8 stays
 * UTF-8). @p out holds EO_ID_MAX + 1 bytes; longer input is cut. */
static void fold(const char *in, char *out)
{
    size_t i = 0;
    for (; in[i] != '\0' && i < EO_ID_MAX; i++)
        out[i] = in[i] >= 'A' && in[i] <= 'Z' ? (char)(in[i] - 'A' + 'a') : in[i];
    out[i] = '\0';
}

/* ---- writes ------------------------------------------------------------------------------ */

/* The integer of statement @p which's row for (pool, id) (no id bound when NULL): 0,
 * EO_ENOTFOUND (no row) or EO_EIO. */
static int int_of(sq_store *q, int which, int64_t pool_id, const char *id, int64_t *out,
                  const char *what)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, which, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    if (id != NULL)
        bind_text(st, 2, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    else
        rc = src == SQLITE_DONE ? EO_ENOTFOUND : fail(q, src, what);
    done(st);
    return rc;
}

/* Player @p id's last round (0 when he has no row) and whether @p name is new for him (not
 * when it is NULL, nor when he has no row: the insert sets it). */
static int last_of(sq_store *q, int64_t pool_id, const char *id, const char *name, int64_t *last,
                   bool *renamed)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_LAST, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    *last = 0;
    *renamed = false;
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        const char *was = (const char *)sqlite3_column_text(st, 1);
        *last = sqlite3_column_int64(st, 0);
        *renamed = name != NULL && (was == NULL || strcmp(was, name) != 0);
    } else if (src != SQLITE_DONE) {
        rc = fail(q, src, "reading a player's last round");
    }
    done(st);
    return rc;
}

/* Binds @p name at @p i and its folded form at @p i + 1 (NULL both when it is NULL). */
static void bind_name(sqlite3_stmt *st, int i, const char *name)
{
    char key[EO_ID_MAX + 1];
    bind_text(st, i, name);
    if (name != NULL) {
        fold(name, key);
        sqlite3_bind_text64(st, i + 1, key, strlen(key), SQLITE_TRANSIENT, SQLITE_UTF8);
    }
}

int eo__sq_player_put_played(eo_store *s, int64_t pool_id, const char *id, const eo_player_row *row,
                             const char *name, int64_t n, int64_t *prev)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    bool renamed;
    int rc = last_of(q, pool_id, id, name, prev, &renamed);
    if (rc == 0)
        rc = ix_prep(q, X_PLAYED, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    bind_row(st, 3, row);
    bind_name(st, 14, name);
    sqlite3_bind_int64(st, 16, n);
    sqlite3_bind_int64(st, 17, *prev);
    int src = sqlite3_step(st);
    if (src == SQLITE_CONSTRAINT_FOREIGNKEY) {
        eo__store_seterr(s, "%s: no pool with id %lld", q->path, (long long)pool_id);
        rc = EO_ENOTFOUND;
    } else if (src != SQLITE_DONE) {
        rc = fail(q, src, "writing a player");
    }
    done(st);
    if (rc == 0 && renamed && (rc = ix_prep(q, X_RENAME, &st)) == 0) {
        sqlite3_bind_int64(st, 1, pool_id);
        bind_text(st, 2, id);
        bind_name(st, 3, name);
        rc = step_done(q, st, "renaming a player");
    }
    return rc;
}

int eo__sq_player_last(eo_store *s, int64_t pool_id, const char *id, int64_t *last)
{
    return int_of(sq(s), X_LAST, pool_id, id, last, "reading a player's last round");
}

int eo__sq_player_link(eo_store *s, int64_t pool_id, const char *id, const char *name, int64_t last,
                       int64_t prev)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_LINK, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    sqlite3_bind_int64(st, 3, last);
    sqlite3_bind_int64(st, 4, prev);
    bind_name(st, 5, name);
    return step_done(q, st, "linking a player's rounds");
}

/* ---- the members of a round, one blob per round ------------------------------------------
 * Per member, A's then B's: team (1 byte), visible (1), id length (1, 1 to EO_ID_MAX), the id,
 * prev (8), rating, delta, mu, sigma, weight (8 each, IEEE doubles), rounds (4); integers and
 * doubles little-endian, so that a store file reads the same on every machine. */

#define MEMBER_FIXED (3 + 8 + 5 * 8 + 4)

static unsigned char *put_u(unsigned char *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        *p++ = (unsigned char)(v >> (8 * i));
    return p;
}

static uint64_t get_u(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static unsigned char *put_f(unsigned char *p, double x)
{
    uint64_t v;
    memcpy(&v, &x, sizeof v);
    return put_u(p, v, 8);
}

static double get_f(const unsigned char *p)
{
    uint64_t v = get_u(p, 8);
    double x;
    memcpy(&x, &v, sizeof x);
    return x;
}

/* The blob of @p count members, malloc'd, *len bytes; NULL when out of memory or an id's
 * length is outside 1..EO_ID_MAX. */
static unsigned char *members_encode(const char *const *ids, const eo_member_ix *m, size_t count,
                                     size_t *len)
{
    size_t total = 0;
    for (size_t i = 0; i < count; i++) {
        size_t n = strlen(ids[i]);
        if (n == 0 || n > EO_ID_MAX)
            return NULL;
        total += MEMBER_FIXED + n;
    }
    unsigned char *b = malloc(total > 0 ? total : 1), *p = b;
    for (size_t i = 0; b != NULL && i < count; i++) {
        size_t n = strlen(ids[i]);
        *p++ = (unsigned char)m[i].team;
        *p++ = (unsigned char)m[i].visible;
        *p++ = (unsigned char)n;
        memcpy(p, ids[i], n);
        p = put_u(p + n, (uint64_t)m[i].prev, 8);
        p = put_f(p, m[i].rating);
        p = put_f(p, m[i].delta);
        p = put_f(p, m[i].mu);
        p = put_f(p, m[i].sigma);
        p = put_f(p, m[i].weight);
        p = put_u(p, m[i].rounds, 4);
    }
    *len = total;
    return b;
}

int eo__sq_round_ix_put(eo_store *s, int64_t pool_id, const eo_round_ix *r, const char *const *ids,
                        const eo_member_ix *m, size_t count)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    size_t len = 0;
    unsigned char *blob = members_encode(ids, m, count, &len);
    if (blob == NULL) {
        eo__store_seterr(s, "%s: round %lld: a member id too long or out of memory", q->path,
                         (long long)r->n);
        return EO_ENOMEM;
    }
    int rc = ix_prep(q, X_ROUND_PUT, &st);
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, pool_id);
        sqlite3_bind_int64(st, 2, r->n);
        sqlite3_bind_int64(st, 3, r->seq);
        sqlite3_bind_double(st, 4, r->p_a);
        sqlite3_bind_int(st, 5, (int)r->winner);
        sqlite3_bind_int64(st, 6, r->at);
        sqlite3_bind_int64(st, 7, r->started_at);
        sqlite3_bind_int64(st, 8, r->ended_at);
        bind_text(st, 9, r->round_id);
        bind_text(st, 10, r->map);
        bind_text(st, 11, r->mode);
        bind_text(st, 12, r->server);
        sqlite3_bind_blob64(st, 13, blob, len, SQLITE_STATIC);
        rc = step_done(q, st, "indexing a round");
    }
    free(blob);
    return rc;
}

/* A round's members decoded: ids NUL-terminated in place of the blob's. */
typedef struct members {
    size_t n;
    char id[EO_PLAYERS_MAX][EO_ID_MAX + 1];
    const char *ids[EO_PLAYERS_MAX];
    eo_member_ix m[EO_PLAYERS_MAX];
} members;

/* The next member of a blob at *p (before @p end) into @p m (its id at *id, *idlen bytes, not
 * NUL-terminated), *p moved past it; @p pos counts each team's members. false when the blob is
 * damaged there. */
static bool member_next(const unsigned char **p, const unsigned char *end, int pos[2],
                        eo_member_ix *m, const char **id, size_t *idlen)
{
    const unsigned char *b = *p;
    size_t n = end - b >= 3 ? b[2] : 0;
    if (n == 0 || b[0] > 1 || (size_t)(end - b) < MEMBER_FIXED + n)
        return false;
    m->team = b[0];
    m->pos = pos[m->team]++;
    m->visible = b[1] != 0;
    *id = (const char *)b + 3;
    *idlen = n;
    b += 3 + n;
    m->prev = (int64_t)get_u(b, 8);
    m->rating = get_f(b + 8);
    m->delta = get_f(b + 16);
    m->mu = get_f(b + 24);
    m->sigma = get_f(b + 32);
    m->weight = get_f(b + 40);
    m->rounds = (uint32_t)get_u(b + 48, 4);
    *p = b + MEMBER_FIXED - 3;
    return true;
}

static int damaged(sq_store *q, int64_t pool_id, int64_t n)
{
    eo__store_seterr(&q->base, "%s: pool %lld: the index of round %lld is damaged", q->path,
                     (long long)pool_id, (long long)n);
    return EO_EIO;
}

/* Decodes the blob of round @p r into @p out. EO_EIO (message set) when it is damaged. */
static int members_decode(sq_store *q, int64_t pool_id, const eo_round_ix *r,
                          const unsigned char *b, size_t len, members *out)
{
    const unsigned char *p = b, *end = b + len;
    int pos[2] = {0, 0};
    for (out->n = 0; p < end; out->n++) {
        eo_member_ix *m = &out->m[out->n];
        const char *id;
        size_t idlen;
        if (out->n == EO_PLAYERS_MAX || !member_next(&p, end, pos, m, &id, &idlen))
            return damaged(q, pool_id, r->n);
        m->n = r->n;
        m->at = r->at;
        memcpy(out->id[out->n], id, idlen);
        out->id[out->n][idlen] = '\0';
        out->ids[out->n] = out->id[out->n];
    }
    return 0;
}

/* Player @p id's result in the blob of round @p n played at @p at, into @p m. EO_ENOTFOUND when
 * he is not in it, EO_EIO when it is damaged. */
static int member_find(sq_store *q, int64_t pool_id, int64_t n, int64_t at, const unsigned char *b,
                       size_t len, const char *id, eo_member_ix *m)
{
    const unsigned char *p = b, *end = b + len;
    int pos[2] = {0, 0};
    size_t want = strlen(id);
    while (p < end) {
        const char *mid;
        size_t idlen;
        if (!member_next(&p, end, pos, m, &mid, &idlen))
            return damaged(q, pool_id, n);
        if (idlen == want && memcmp(mid, id, want) == 0) {
            m->n = n;
            m->at = at;
            return 0;
        }
    }
    return EO_ENOTFOUND;
}

/* A round's index entry (ROUND_COLS, or its first five for the numbers only). */
static void round_columns(sqlite3_stmt *st, bool all, eo_round_ix *r)
{
    memset(r, 0, sizeof *r);
    r->n = sqlite3_column_int64(st, 0);
    r->seq = sqlite3_column_int64(st, 1);
    r->p_a = sqlite3_column_double(st, 2);
    r->winner = (eo_winner)sqlite3_column_int(st, 3);
    r->at = sqlite3_column_int64(st, 4);
    if (!all)
        return;
    r->started_at = sqlite3_column_int64(st, 5);
    r->ended_at = sqlite3_column_int64(st, 6);
    r->round_id = (const char *)sqlite3_column_text(st, 7);
    r->map = (const char *)sqlite3_column_text(st, 8);
    r->mode = (const char *)sqlite3_column_text(st, 9);
    r->server = (const char *)sqlite3_column_text(st, 10);
}

int eo__sq_round_ix_last(eo_store *s, int64_t pool_id, eo_round_ix *out)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_ROUND_LAST, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        round_columns(st, false, out);
    else
        rc = src == SQLITE_DONE ? EO_ENOTFOUND : fail(q, src, "reading the round index");
    done(st);
    return rc;
}

int eo__sq_health_add(eo_store *s, int64_t pool_id, int64_t day, int bin, const eo_eval_sums *d)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_HEALTH_ADD, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_int64(st, 2, day);
    sqlite3_bind_int(st, 3, bin);
    sqlite3_bind_int64(st, 4, (int64_t)d->rounds);
    sqlite3_bind_int64(st, 5, (int64_t)d->draws);
    sqlite3_bind_int64(st, 6, (int64_t)d->stomps);
    sqlite3_bind_double(st, 7, d->margin);
    sqlite3_bind_int64(st, 8, (int64_t)d->m.count);
    sqlite3_bind_double(st, 9, d->m.logloss_sum);
    sqlite3_bind_double(st, 10, d->m.brier_sum);
    sqlite3_bind_double(st, 11, d->m.correct);
    sqlite3_bind_double(st, 12, d->p);
    sqlite3_bind_double(st, 13, d->a_wins);
    sqlite3_bind_int64(st, 14, (int64_t)d->members);
    sqlite3_bind_double(st, 15, d->rating);
    sqlite3_bind_double(st, 16, d->rating2);
    sqlite3_bind_double(st, 17, d->delta);
    return step_done(q, st, "adding to the health sums");
}

/* ---- the board --------------------------------------------------------------------------- */

int eo__sq_player_name_get(eo_store *s, int64_t pool_id, const char *id, char **name)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_NAME_GET, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        rc = (*name = col_dup(st, 0)) != NULL ? 0 : EO_ENOMEM;
    else if (src != SQLITE_ROW)
        rc = src == SQLITE_DONE ? EO_ENOTFOUND : fail(q, src, "reading a player's name");
    done(st);
    return rc;
}

int eo__sq_board_count(eo_store *s, int64_t pool_id, int64_t *n)
{
    return int_of(sq(s), X_BOARD_COUNT, pool_id, NULL, n, "counting the board");
}

/* Player @p id's row and name (through @p fn when found). 0, EO_ENOTFOUND or EO_EIO. */
static int board_row(sq_store *q, int64_t pool_id, const char *id,
                     int (*fn)(void *ctx, const char *name, const eo_player_row *row), void *ctx)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_BOARD_ROW, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    bind_text(st, 2, id);
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW) {
        eo_player_row row;
        row_columns(st, 0, &row);
        rc = fn(ctx, (const char *)sqlite3_column_text(st, 11), &row);
    } else {
        rc = src == SQLITE_DONE ? EO_ENOTFOUND : fail(q, src, "reading a player");
    }
    done(st);
    return rc;
}

static int keep_row(void *ctx, const char *name, const eo_player_row *row)
{
    (void)name;
    *(eo_player_row *)ctx = *row;
    return 0;
}

/* A player's place on the board: his rating and id (a copy), and his rank once known. */
typedef struct match {
    double rating;
    int64_t rank;
    char id[EO_ID_MAX + 1];
} match;

/* How many of the board are between @p a and @p b (both left out), or ahead of @p a when @p b
 * is NULL: a range of the board's index, counted by SQLite. */
static int count_between(sq_store *q, int64_t pool_id, const match *a, const match *b, int64_t *n)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, b != NULL ? X_BETWEEN : X_RANK, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_double(st, 2, a->rating);
    bind_text(st, 3, a->id);
    if (b != NULL) {
        sqlite3_bind_double(st, 4, b->rating);
        bind_text(st, 5, b->id);
    }
    int src = sqlite3_step(st);
    if (src == SQLITE_ROW)
        *n = sqlite3_column_int64(st, 0);
    else
        rc = fail(q, src, "ranking players");
    done(st);
    return rc;
}

int eo__sq_board_rank(eo_store *s, int64_t pool_id, const char *id, int64_t *rank)
{
    sq_store *q = sq(s);
    eo_player_row row;
    match m;
    int rc = board_row(q, pool_id, id, keep_row, &row);
    if (rc == 0 && !row.visible)
        rc = EO_ENOTFOUND;
    if (rc)
        return rc;
    m.rating = row.rating;
    snprintf(m.id, sizeof m.id, "%s", id);
    rc = count_between(q, pool_id, &m, NULL, rank);
    if (rc == 0)
        *rank += 1;
    return rc;
}

typedef int (*board_fn)(void *ctx, int64_t rank, const char *id, const char *name,
                        const eo_player_row *row);

/* The board's page from @p offset without a search: ids from the board's index, then rows. */
static int board_page(sq_store *q, int64_t pool_id, int64_t offset, int64_t limit, board_fn fn,
                      void *ctx)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_BOARD_PAGE, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_int64(st, 2, offset);
    sqlite3_bind_int64(st, 3, limit);
    int src = SQLITE_DONE;
    int64_t rank = offset + 1;
    while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_player_row row;
        row_columns(st, 1, &row);
        rc = fn(ctx, rank++, (const char *)sqlite3_column_text(st, 0),
                (const char *)sqlite3_column_text(st, 12), &row);
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail(q, src, "reading the board");
    done(st);
    return rc;
}

/* A search with more matches than this walks the board (docs/STORE.md "Read indexes"). */
#define FEW_MAX 2000

/* Board order: rating down, then id up (bytes, as SQLite's BINARY). */
static int board_order(const void *x, const void *y)
{
    const match *a = x, *b = y;
    if (a->rating != b->rating)
        return a->rating > b->rating ? -1 : 1;
    return strcmp(a->id, b->id);
}

/* Binds @p prefix at @p i and at @p i + 1 the end of its range: @p prefix followed by a byte
 * that no UTF-8 text holds. */
static void bind_prefix(sqlite3_stmt *st, int i, const char *prefix)
{
    char end[EO_ID_MAX + 2];
    size_t n = strlen(prefix);
    memcpy(end, prefix, n);
    end[n] = (char)0xff;
    sqlite3_bind_text64(st, i, prefix, n, SQLITE_TRANSIENT, SQLITE_UTF8);
    sqlite3_bind_text64(st, i + 1, end, n + 1, SQLITE_TRANSIENT, SQLITE_UTF8);
}

/* The matches of @p query (EO_ID_MAX bytes at most) in board order, found by the indexes of ids
 * and names when there are at most FEW_MAX: *out (the caller frees it) and *n; *out is NULL when
 * there are more. */
static int few_matches(sq_store *q, int64_t pool_id, const char *query, match **out, int64_t *n)
{
    sqlite3_stmt *st;
    char key[EO_ID_MAX + 1];
    *out = NULL;
    *n = 0;
    int rc = ix_prep(q, X_FEW, &st);
    if (rc)
        return rc;
    match *m = malloc((FEW_MAX + 1) * sizeof *m);
    if (m == NULL)
        return EO_ENOMEM;
    fold(query, key);
    sqlite3_bind_int64(st, 1, pool_id);
    bind_prefix(st, 2, query);
    bind_prefix(st, 4, key);
    sqlite3_bind_int64(st, 6, FEW_MAX + 1);
    int src;
    int64_t k = 0;
    while ((src = sqlite3_step(st)) == SQLITE_ROW) {
        snprintf(m[k].id, sizeof m[k].id, "%s", (const char *)sqlite3_column_text(st, 0));
        m[k++].rating = sqlite3_column_double(st, 1);
    }
    if (src != SQLITE_DONE)
        rc = fail(q, src, "searching the board");
    done(st);
    if (rc || k > FEW_MAX) {
        free(m);
        return rc;
    }
    qsort(m, (size_t)k, sizeof *m, board_order);
    for (int64_t i = 0; i < k; i++) /* a player whose id and name match came twice */
        if (*n == 0 || strcmp(m[*n - 1].id, m[i].id) != 0)
            m[(*n)++] = m[i];
    *out = m;
    return 0;
}

/* Ranks @p n matches in board order: the first by those ahead of it, each next by those between
 * it and the one before (so that the board is counted once, to the last). */
static int rank_matches(sq_store *q, int64_t pool_id, match *m, int64_t n)
{
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        int64_t c = 0;
        rc = count_between(q, pool_id, i == 0 ? &m[0] : &m[i - 1], i == 0 ? NULL : &m[i], &c);
        m[i].rank = (i == 0 ? 0 : m[i - 1].rank) + c + 1;
    }
    return rc;
}

static bool has_prefix(const char *s, const char *p, size_t plen)
{
    return s != NULL && strncmp(s, p, plen) == 0;
}

/* Walks the board in order (its index alone: id and folded name), counting ranks, and keeps
 * the matches of @p query numbered [offset, offset + limit) in @p out; *n gets how many. */
static int board_walk(sq_store *q, int64_t pool_id, const char *query, int64_t offset,
                      int64_t limit, match *out, int64_t *n)
{
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_BOARD_WALK, &st);
    if (rc)
        return rc;
    char key[EO_ID_MAX + 1];
    fold(query, key);
    size_t qlen = strlen(query), klen = strlen(key);
    sqlite3_bind_int64(st, 1, pool_id);
    int64_t rank = 0, found = 0;
    int src = SQLITE_DONE;
    *n = 0;
    while (*n < limit && (src = sqlite3_step(st)) == SQLITE_ROW) {
        const char *id = (const char *)sqlite3_column_text(st, 0);
        rank++;
        if ((!has_prefix(id, query, qlen) &&
             !has_prefix((const char *)sqlite3_column_text(st, 1), key, klen)) ||
            found++ < offset)
            continue;
        out[*n].rank = rank;
        snprintf(out[*n].id, sizeof out[*n].id, "%s", id);
        ++*n;
    }
    if (*n < limit && src != SQLITE_DONE)
        rc = fail(q, src, "searching the board");
    done(st);
    return rc;
}

/* The matches of @p query numbered [offset, offset + limit) with their ranks: *out (the caller
 * frees it) and *n. Few matches are found by the indexes of ids and names and ranked by counts
 * of the board; more by a walk of the board, which stops at the last asked. */
static int search(sq_store *q, int64_t pool_id, const char *query, int64_t offset, int64_t limit,
                  match **out, int64_t *n)
{
    int rc = few_matches(q, pool_id, query, out, n);
    if (rc == 0 && *out != NULL) {
        int64_t from = offset < *n ? offset : *n;
        *n = *n - from < limit ? *n - from : limit;
        memmove(*out, *out + from, (size_t)*n * sizeof **out);
        return rank_matches(q, pool_id, *out, *n);
    }
    if (rc == 0 && (*out = malloc((size_t)limit * sizeof **out)) == NULL)
        rc = EO_ENOMEM;
    return rc ? rc : board_walk(q, pool_id, query, offset, limit, *out, n);
}

typedef struct match_call {
    board_fn fn;
    void *ctx;
    const match *m;
} match_call;

static int match_one(void *ctx, const char *name, const eo_player_row *row)
{
    match_call *c = ctx;
    return c->fn(c->ctx, c->m->rank, c->m->id, name, row);
}

int eo__sq_board_each(eo_store *s, int64_t pool_id, const char *query, int64_t offset,
                      int64_t limit, board_fn fn, void *ctx)
{
    sq_store *q = sq(s);
    if (query == NULL)
        return board_page(q, pool_id, offset, limit, fn, ctx);
    match *m = NULL;
    int64_t n = 0;
    int rc = search(q, pool_id, query, offset, limit, &m, &n);
    for (int64_t i = 0; rc == 0 && i < n; i++) {
        match_call c = {fn, ctx, &m[i]};
        rc = board_row(q, pool_id, m[i].id, match_one, &c);
        if (rc == EO_ENOTFOUND) /* gone since it was found (outside a transaction) */
            rc = 0;
    }
    free(m);
    return rc;
}

/* ---- rounds ------------------------------------------------------------------------------ */

/* Calls @p fn with the rounds statement @p st gives (ROUND_COLS), each decoded into @p mb,
 * then finishes it. *any tells whether there was one. */
static int round_items(sq_store *q, int64_t pool_id, sqlite3_stmt *st, members *mb,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx, bool *any)
{
    int rc = 0, src = SQLITE_DONE;
    *any = false;
    while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_round_ix r;
        round_columns(st, true, &r);
        rc = members_decode(q, pool_id, &r, sqlite3_column_blob(st, MEMBERS_COL),
                            (size_t)sqlite3_column_bytes(st, MEMBERS_COL), mb);
        eo_round_item item = {&r, mb->n, mb->ids, mb->m};
        *any = true;
        if (rc == 0)
            rc = fn(ctx, &item);
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail(q, src, "reading rounds");
    done(st);
    return rc;
}

/* The rounds of statement @p which, bound to the pool and then @p a and @p b (unless < 0). */
static int rounds_of(sq_store *q, int which, int64_t pool_id, int64_t a, int64_t b,
                     const char *text, int (*fn)(void *ctx, const eo_round_item *r), void *ctx,
                     bool *any)
{
    sqlite3_stmt *st;
    members *mb = malloc(sizeof *mb);
    int rc = mb != NULL ? ix_prep(q, which, &st) : EO_ENOMEM;
    if (rc == 0) {
        sqlite3_bind_int64(st, 1, pool_id);
        if (text != NULL)
            bind_text(st, 2, text);
        else
            sqlite3_bind_int64(st, 2, a);
        if (b >= 0)
            sqlite3_bind_int64(st, 3, b);
        rc = round_items(q, pool_id, st, mb, fn, ctx, any);
    }
    free(mb);
    return rc;
}

int eo__sq_rounds_each(eo_store *s, int64_t pool_id, int64_t offset, int64_t limit,
                       int (*fn)(void *ctx, const eo_round_item *r), void *ctx)
{
    bool any;
    return rounds_of(sq(s), X_ROUNDS, pool_id, offset, limit, NULL, fn, ctx, &any);
}

int eo__sq_round_get(eo_store *s, int64_t pool_id, const char *round_id,
                     int (*fn)(void *ctx, const eo_round_item *r), void *ctx)
{
    bool any;
    int rc = rounds_of(sq(s), X_ROUND_BY_ID, pool_id, 0, -1, round_id, fn, ctx, &any);
    return rc == 0 && !any ? EO_ENOTFOUND : rc;
}

/* A walk along player @p id's chain of rounds, newest first. */
typedef struct walk {
    const char *id;
    int64_t since;   /* stop at the first round played before */
    int64_t skip;    /* results passed over first */
    int64_t limit;   /* results kept at most */
    eo_member_ix *v; /* the results kept, newest first */
    size_t n, cap;
    /* each kept round with its members (for a player's rounds), or NULL: results only */
    int (*fn)(void *ctx, const eo_round_item *r, const eo_member_ix *m);
    void *ctx;
} walk;

/* One step: the player's result in round @p st (X_ROUND_BY_N, stepped to its row) into @p m,
 * and, with w->fn, the round through it. */
static int walk_step(sq_store *q, int64_t pool_id, walk *w, sqlite3_stmt *st, members *mb,
                     bool keep, eo_member_ix *m)
{
    eo_round_ix r;
    round_columns(st, true, &r);
    const unsigned char *b = sqlite3_column_blob(st, MEMBERS_COL);
    size_t len = (size_t)sqlite3_column_bytes(st, MEMBERS_COL);
    if (!keep || w->fn == NULL)
        return member_find(q, pool_id, r.n, r.at, b, len, w->id, m);
    int rc = members_decode(q, pool_id, &r, b, len, mb);
    size_t i = 0;
    while (rc == 0 && i < mb->n && strcmp(mb->ids[i], w->id) != 0)
        i++;
    if (rc == 0 && i == mb->n)
        return EO_ENOTFOUND;
    eo_round_item item = {&r, mb->n, mb->ids, mb->m};
    *m = mb->m[i];
    return rc == 0 && m->at >= w->since ? w->fn(w->ctx, &item, m) : rc;
}

/* Walks player w->id's chain from his last round until it ends, passes w->since or keeps
 * w->limit results: one round read by number per step. */
static int walk_chain(sq_store *q, int64_t pool_id, walk *w)
{
    int64_t next = 0, kept = 0;
    members *mb = w->fn != NULL ? malloc(sizeof *mb) : NULL;
    int rc = w->fn != NULL && mb == NULL
                 ? EO_ENOMEM
                 : int_of(q, X_LAST, pool_id, w->id, &next, "reading a player's last round");
    if (rc == EO_ENOTFOUND) { /* no row: no rounds */
        rc = 0;
        next = 0;
    }
    sqlite3_stmt *st;
    while (rc == 0 && next > 0 && kept < w->limit && (rc = ix_prep(q, X_ROUND_BY_N, &st)) == 0) {
        int64_t n = next;
        eo_member_ix m;
        sqlite3_bind_int64(st, 1, pool_id);
        sqlite3_bind_int64(st, 2, n);
        int src = sqlite3_step(st);
        rc = src == SQLITE_ROW    ? walk_step(q, pool_id, w, st, mb, w->skip == 0, &m)
             : src == SQLITE_DONE ? EO_ENOTFOUND
                                  : fail(q, src, "reading a player's rounds");
        done(st);
        if (rc == EO_ENOTFOUND)
            eo__store_seterr(&q->base, "%s: pool %lld: the rounds of '%s' are damaged at %lld",
                             q->path, (long long)pool_id, w->id, (long long)n);
        if (rc != 0 || m.at < w->since)
            break;
        next = m.prev;
        if (w->skip > 0) {
            w->skip--;
            continue;
        }
        kept++;
        eo_member_ix *v = w->fn == NULL ? eo__grow(w->v, &w->cap, w->n + 1, sizeof *v) : NULL;
        if (w->fn == NULL && v == NULL)
            rc = EO_ENOMEM;
        else if (v != NULL)
            (w->v = v)[w->n++] = m;
    }
    free(mb);
    return rc == EO_ENOTFOUND ? EO_EIO : rc;
}

int eo__sq_history_each(eo_store *s, int64_t pool_id, const char *id, int64_t since, int64_t limit,
                        int (*fn)(void *ctx, const eo_member_ix *m), void *ctx)
{
    walk w = {.id = id, .since = since, .limit = limit};
    int rc = walk_chain(sq(s), pool_id, &w);
    while (rc == 0 && w.n > 0)
        rc = fn(ctx, &w.v[--w.n]);
    free(w.v);
    return rc;
}

int eo__sq_player_rounds_each(eo_store *s, int64_t pool_id, const char *id, int64_t offset,
                              int64_t limit,
                              int (*fn)(void *ctx, const eo_round_item *r, const eo_member_ix *m),
                              void *ctx)
{
    walk w = {.id = id, .since = INT64_MIN, .skip = offset, .limit = limit, .fn = fn, .ctx = ctx};
    return walk_chain(sq(s), pool_id, &w);
}

int eo__sq_health_each(eo_store *s, int64_t pool_id, int64_t from_day,
                       int (*fn)(void *ctx, int64_t day, int bin, const eo_eval_sums *d), void *ctx)
{
    sq_store *q = sq(s);
    sqlite3_stmt *st;
    int rc = ix_prep(q, X_HEALTH_EACH, &st);
    if (rc)
        return rc;
    sqlite3_bind_int64(st, 1, pool_id);
    sqlite3_bind_int64(st, 2, from_day);
    int src = SQLITE_DONE;
    while (rc == 0 && (src = sqlite3_step(st)) == SQLITE_ROW) {
        eo_eval_sums d = {
            .rounds = (uint64_t)sqlite3_column_int64(st, 2),
            .draws = (uint64_t)sqlite3_column_int64(st, 3),
            .stomps = (uint64_t)sqlite3_column_int64(st, 4),
            .margin = sqlite3_column_double(st, 5),
            .m = {.count = (uint64_t)sqlite3_column_int64(st, 6),
                  .logloss_sum = sqlite3_column_double(st, 7),
                  .brier_sum = sqlite3_column_double(st, 8),
                  .correct = sqlite3_column_double(st, 9)},
            .p = sqlite3_column_double(st, 10),
            .a_wins = sqlite3_column_double(st, 11),
            .members = (uint64_t)sqlite3_column_int64(st, 12),
            .rating = sqlite3_column_double(st, 13),
            .rating2 = sqlite3_column_double(st, 14),
            .delta = sqlite3_column_double(st, 15),
        };
        int bin = sqlite3_column_int(st, 1);
        if (bin < 0 || bin >= EO_EVAL_CALIB_BINS) {
            eo__store_seterr(s, "%s: health sums of pool %lld are damaged (bin %d)", q->path,
                             (long long)pool_id, bin);
            rc = EO_EIO;
        } else {
            rc = fn(ctx, sqlite3_column_int64(st, 0), bin, &d);
        }
    }
    if (rc == 0 && src != SQLITE_DONE)
        rc = fail(q, src, "reading health sums");
    done(st);
    return rc;
}
