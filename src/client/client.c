/* libevenodds-client, the game thread's side: players and rounds through the tracker, the
 * report queue, ratings, the split cache, scrambles and autobalance. Everything here runs on
 * the game's thread and touches the worker's queues only under c->mu, for copies. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "client/client_internal.h"
#include "evenodds/eo_codec.h"

/* Most lookups waiting at once (a server has at most a few hundred players). */
#define LOOKUPS_MAX 1024
/* Most players in a split request (the service's exact splitter). */
#define SPLIT_PLAYERS_MAX 64

void eo_client_config_init(eo_client_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->pool = "default";
    cfg->connect_timeout_ms = 2000;
    cfg->request_timeout_ms = 5000;
    cfg->queue_slots = 8;
    cfg->retry_min_ms = 1000;
    cfg->retry_max_ms = 60000;
    cfg->start_rating = 1000;
    cfg->rating_scale = 1;
    cfg->trigger_mode = EO_TRIGGER_MODE_OTHER;
    eo_trigger_config_init(&cfg->triggers);
    cfg->scramble_on = true;
    eo_autobalance_policy_default(&cfg->autobalance);
    cfg->autobalance_interval = 1;
}

void eo_client_round_info_init(eo_client_round_info *info)
{
    memset(info, 0, sizeof *info);
    info->time_left = -1;
}

/* ---- small helpers ------------------------------------------------------------------------ */

static int say(char *err, size_t errlen, int rc, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int say(char *err, size_t errlen, int rc, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return rc;
}

static void glog(eo_client *c, eo_client_log_level lvl, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* A log line from the game thread: queued like the worker's, delivered by eo_client_poll(). */
static void glog(eo_client *c, eo_client_log_level lvl, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&c->mu);
    eo__client_log_locked(c, lvl, "%s", msg);
    pthread_mutex_unlock(&c->mu);
}

static bool id_ok(const char *id)
{
    return id != NULL && eo_id_check(id, strlen(id)) == 0;
}

/* Index of @p id in the known table, added (provisional) when @p add; -1 when absent or out of
 * memory. */
static int64_t known_index(eo_client *c, const char *id, bool add)
{
    size_t len = strlen(id);
    uint64_t h = eo__strmap_hash(id, len);
    int64_t i = eo__strmap_find(c->known_ids, id, len, h);
    if (i >= 0 || !add)
        return i;
    size_t n = eo__strmap_size(c->known_ids);
    if (n == c->known_cap) {
        size_t cap = c->known_cap ? 2 * c->known_cap : 64;
        eo__known *k = realloc(c->known, cap * sizeof *k);
        if (k == NULL)
            return -1;
        c->known = k;
        c->known_cap = cap;
    }
    i = eo__strmap_insert(c->known_ids, id, len, h);
    if (i < 0)
        return -1;
    eo__known *k = &c->known[i];
    memset(k, 0, sizeof *k);
    k->r.mean = k->r.display = c->cfg.start_rating;
    k->r.provisional = true;
    k->last_moved = EO_AB_NEVER;
    return i;
}

static eo_client_rating rating_or_start(const eo_client *c, const char *id)
{
    size_t len = strlen(id);
    int64_t i = eo__strmap_find(c->known_ids, id, len, eo__strmap_hash(id, len));
    if (i >= 0)
        return c->known[i].r;
    eo_client_rating r = {.mean = c->cfg.start_rating, .display = c->cfg.start_rating,
                          .provisional = true};
    return r;
}

static int64_t split_rating(const eo_client *c, const char *id)
{
    double v = rating_or_start(c, id).mean * c->cfg.rating_scale;
    double lim = (double)EO_AB_RATING_MAX;
    return (int64_t)llround(v > lim ? lim : v < -lim ? -lim : v);
}

static eo_client_event *push_event(eo_client *c)
{
    if (c->ev_count == c->ev_cap) {
        size_t cap = c->ev_cap ? 2 * c->ev_cap : 32;
        eo_client_event *e = malloc(cap * sizeof *e);
        if (e == NULL)
            return NULL;
        for (size_t i = 0; i < c->ev_count; i++)
            e[i] = c->ev[(c->ev_head + i) % c->ev_cap];
        free(c->ev);
        c->ev = e;
        c->ev_cap = cap;
        c->ev_head = 0;
    }
    eo_client_event *e = &c->ev[(c->ev_head + c->ev_count++) % c->ev_cap];
    memset(e, 0, sizeof *e);
    return e;
}

static void push_move(eo_client *c, const char *id, eo_track_team to, const char *rule,
                      const char *reason)
{
    eo_client_event *e = push_event(c);
    if (e == NULL)
        return;
    e->type = EO_CLIENT_EV_MOVE;
    snprintf(e->id, sizeof e->id, "%s", id);
    e->to = to;
    e->rule = rule;
    e->reason = reason;
}

/* ---- create / destroy --------------------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_start(void)
{
    curl_global_init(CURL_GLOBAL_DEFAULT);
}

void eo__client_curl_once(void)
{
    pthread_once(&curl_once, curl_start);
}

static char *dup_opt(const char *s, bool *oom)
{
    if (s == NULL)
        return NULL;
    char *d = strdup(s);
    *oom |= d == NULL;
    return d;
}

static int check_config(const eo_client_config *cfg, char *err, size_t errlen)
{
    if (cfg->url == NULL || (strncmp(cfg->url, "http://", 7) != 0 &&
                             strncmp(cfg->url, "https://", 8) != 0) || strlen(cfg->url) > 256)
        return say(err, errlen, EO_EINVAL, "url: expected http://HOST:PORT (at most 256 bytes)");
    if (!id_ok(cfg->pool))
        return say(err, errlen, EO_EINVAL, "pool: not a valid id");
    if (!id_ok(cfg->server_id) || strlen(cfg->server_id) > 64 ||
        strpbrk(cfg->server_id, ": ") != NULL)
        return say(err, errlen, EO_EINVAL,
                   "server_id: required, 1-64 bytes, no ':', space or control characters");
    if (cfg->key == NULL || strlen(cfg->key) < 16 || strlen(cfg->key) > 255)
        return say(err, errlen, EO_EINVAL, "key: required, 16-255 characters");
    for (const char *p = cfg->key; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f)
            return say(err, errlen, EO_EINVAL, "key: spaces or control characters");
    if (cfg->state_file == NULL || cfg->state_file[0] == '\0' || strlen(cfg->state_file) > 1000)
        return say(err, errlen, EO_EINVAL, "state_file: required (a path)");
    if (cfg->queue_slots < 1 || cfg->queue_slots > 1024)
        return say(err, errlen, EO_EINVAL, "queue_slots: expected 1..1024");
    if (cfg->connect_timeout_ms < 1 || cfg->request_timeout_ms < 1)
        return say(err, errlen, EO_EINVAL, "timeouts: expected >= 1 ms");
    if (cfg->retry_min_ms < 1 || cfg->retry_max_ms < cfg->retry_min_ms)
        return say(err, errlen, EO_EINVAL, "retry_min_ms/retry_max_ms: expected 1 <= min <= max");
    if (!isfinite(cfg->start_rating) || !(cfg->rating_scale > 0) ||
        !isfinite(cfg->rating_scale))
        return say(err, errlen, EO_EINVAL, "start_rating/rating_scale: expected finite, scale > 0");
    if (!(cfg->autobalance_interval >= 0) || !isfinite(cfg->autobalance_interval))
        return say(err, errlen, EO_EINVAL, "autobalance_interval: expected >= 0");
    if (cfg->map != NULL && !id_ok(cfg->map))
        return say(err, errlen, EO_EINVAL, "map: not a valid id");
    if (cfg->mode != NULL && !id_ok(cfg->mode))
        return say(err, errlen, EO_EINVAL, "mode: not a valid id");
    if (cfg->team_size_max < 0 || cfg->team_size_max > EO_PLAYERS_MAX / 2)
        return say(err, errlen, EO_EINVAL, "team_size_max: expected 0..%d", EO_PLAYERS_MAX / 2);
    if ((unsigned)cfg->trigger_mode >= EO_TRIGGER_MODE_COUNT)
        return say(err, errlen, EO_EINVAL, "trigger_mode: out of range");
    return 0;
}

/* Reads the state file, or starts one; a file that cannot be read back goes aside. Runs before
 * the worker starts, so the log queue needs no lock yet. */
static int load_state(eo_client *c, char *err, size_t errlen)
{
    char *text = NULL, ioerr[512] = "";
    size_t len = 0;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int64_t now = (int64_t)ts.tv_sec;
    /* The epoch in milliseconds: a server that loses its state file and restarts within the
     * same second must still not reuse a round id. */
    int64_t epoch_ms = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    int rc = eo__client_file_read(c->state_file, EO__STATE_MAX, &text, &len, ioerr, sizeof ioerr);
    if (rc == EO_EIO)
        return say(err, errlen, rc, "state_file: %s", ioerr);
    if (rc == 0 || rc == EO_ELIMIT) {
        char perr[256] = "file too large";
        if (rc == 0)
            rc = eo__client_state_parse(text, len, c->cfg.queue_slots, &c->st, perr,
                                        sizeof perr);
        free(text);
        if (rc == 0) {
            if (c->st.count > 0)
                eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "%zu queued reports from %s",
                                      c->st.count, c->state_file);
            if (c->st.overflow > 0)
                eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                                      "%s holds %zu reports more than queue_slots (%zu): the "
                                      "oldest dropped, never rated", c->state_file,
                                      c->st.overflow, c->st.cap);
            return 0;
        }
        if (rc == EO_ENOMEM)
            return say(err, errlen, rc, "out of memory");
        char aside[1100];
        snprintf(aside, sizeof aside, "%s.corrupt-%lld", c->state_file, (long long)now);
        if (rename(c->state_file, aside) != 0)
            return say(err, errlen, EO_EIO, "state_file %s: %s, and it cannot be moved aside",
                       c->state_file, perr);
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                              "state file %s: %s; moved to %s, starting a new one",
                              c->state_file, perr, aside);
    }
    if ((rc = eo__client_state_init(&c->st, c->cfg.queue_slots, epoch_ms)) != 0)
        return say(err, errlen, rc, "out of memory");
    /* Written now, so that a state file that cannot be written fails here, not later. */
    char *out = NULL;
    if ((rc = eo__client_state_format(&c->st, &out, &len)) != 0)
        return say(err, errlen, rc, "out of memory");
    rc = eo__client_file_write(c->state_file, out, len, ioerr, sizeof ioerr);
    free(out);
    return rc == 0 ? 0 : say(err, errlen, rc, "state_file: %s", ioerr);
}

static void reset_trigger_state(eo_client *c)
{
    bool tournament = c->trig.tournament; /* a mode setting, not a counter */
    eo_trigger_state_init(&c->trig);
    c->trig.mode = c->cfg.trigger_mode;
    c->trig.tournament = tournament;
    c->trig.round = 0;
}

int eo_client_create(const eo_client_config *cfg, eo_client **out, char *err, size_t errlen)
{
    if (cfg == NULL || out == NULL)
        return say(err, errlen, EO_EINVAL, "NULL argument");
    *out = NULL;
    int rc = check_config(cfg, err, errlen);
    if (rc != 0)
        return rc;
    pthread_once(&curl_once, curl_start);
    eo_client *c = calloc(1, sizeof *c);
    if (c == NULL)
        return say(err, errlen, EO_ENOMEM, "out of memory");
    c->cfg = *cfg;
    bool oom = false;
    c->url = dup_opt(cfg->url, &oom);
    c->pool = dup_opt(cfg->pool, &oom);
    c->server_id = dup_opt(cfg->server_id, &oom);
    c->key = dup_opt(cfg->key, &oom);
    c->state_file = dup_opt(cfg->state_file, &oom);
    c->map = dup_opt(cfg->map, &oom);
    c->mode = dup_opt(cfg->mode, &oom);
    /* Drop a trailing slash so paths join cleanly. */
    if (c->url != NULL && c->url[strlen(c->url) - 1] == '/')
        c->url[strlen(c->url) - 1] = '\0';
    c->cfg.url = c->url;
    c->cfg.pool = c->pool;
    c->cfg.server_id = c->server_id;
    c->cfg.key = c->key;
    c->cfg.state_file = c->state_file;
    c->cfg.map = c->map;
    c->cfg.mode = c->mode;
    if (!oom) {
        char *esc = curl_easy_escape(NULL, c->pool, 0);
        c->pool_esc = esc ? strdup(esc) : NULL;
        curl_free(esc);
        oom = c->pool_esc == NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&c->wake, &ca);
    pthread_cond_init(&c->idle, &ca);
    pthread_condattr_destroy(&ca);
    c->known_ids = oom ? NULL : eo__strmap_create();
    if (oom || c->known_ids == NULL || eo_tracker_create(&c->tr) != 0) {
        eo_client_destroy(c);
        return say(err, errlen, EO_ENOMEM, "out of memory");
    }
    reset_trigger_state(c);
    c->unbalanced_since = EO_AB_NEVER;
    c->round_ends_at = -1;
    c->sock = -1;
    c->stats.service_up = true;
    if ((rc = load_state(c, err, errlen)) != 0) {
        eo_client_destroy(c);
        return rc;
    }
    c->stats.next_seq = c->st.next_seq;
    c->stats.reports_dropped = c->st.dropped;
    if (pthread_create(&c->thread, NULL, eo__client_worker, c) != 0) {
        eo_client_destroy(c);
        return say(err, errlen, EO_ENOMEM, "cannot start the worker thread");
    }
    c->thread_started = true;
    *out = c;
    return 0;
}

void eo_client_destroy(eo_client *c)
{
    if (c == NULL)
        return;
    if (c->thread_started) {
        pthread_mutex_lock(&c->mu);
        __atomic_store_n(&c->stop, true, __ATOMIC_RELEASE);
        if (c->sock >= 0)
            shutdown(c->sock, SHUT_RDWR); /* a request in flight ends now */
        pthread_cond_broadcast(&c->wake);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->thread, NULL);
        /* What the worker had not written yet. */
        if (c->dirty) {
            char *text = NULL, err[512];
            size_t len = 0;
            if (eo__client_state_format(&c->st, &text, &len) == 0)
                eo__client_file_write(c->state_file, text, len, err, sizeof err);
            free(text);
        }
    }
    for (eo__result *r = c->res; r != NULL;) {
        eo__result *next = r->next;
        eo__splits_free(&r->splits);
        free(r);
        r = next;
    }
    for (eo__job *j = c->jobs; j != NULL;) {
        eo__job *next = j->next;
        free(j->body);
        free(j);
        j = next;
    }
    for (size_t i = 0; i < c->nlookups; i++)
        free(c->lookups[i]);
    free(c->lookups);
    eo__client_state_free(&c->st);
    eo__splits_free(&c->cache);
    eo_tracker_destroy(c->tr);
    eo__strmap_destroy(c->known_ids);
    free(c->known);
    free(c->ev);
    pthread_cond_destroy(&c->wake);
    pthread_cond_destroy(&c->idle);
    pthread_mutex_destroy(&c->mu);
    free(c->url);
    free(c->pool);
    free(c->server_id);
    free(c->key);
    free(c->state_file);
    free(c->map);
    free(c->mode);
    free(c->pool_esc);
    free(c);
}

/* ---- players ------------------------------------------------------------------------------ */

static void want_lookup(eo_client *c, const char *id)
{
    int64_t i = known_index(c, id, true);
    if (i >= 0 && !c->known[i].r.provisional)
        return;
    pthread_mutex_lock(&c->mu);
    bool queued = false;
    for (size_t j = 0; j < c->nlookups && !queued; j++)
        queued = strcmp(c->lookups[j], id) == 0;
    if (!queued && c->nlookups < LOOKUPS_MAX) {
        if (c->nlookups == c->lookups_cap) {
            size_t cap = c->lookups_cap ? 2 * c->lookups_cap : 32;
            char **l = realloc(c->lookups, cap * sizeof *l);
            if (l != NULL) {
                c->lookups = l;
                c->lookups_cap = cap;
            }
        }
        char *d = c->nlookups < c->lookups_cap ? strdup(id) : NULL;
        if (d != NULL) {
            /* Newest at the end: the worker takes from the end, the latest joiner first. */
            c->lookups[c->nlookups++] = d;
            pthread_cond_signal(&c->wake);
        }
    }
    pthread_mutex_unlock(&c->mu);
}

int eo_client_player_connect(eo_client *c, const char *id, double now)
{
    if (c == NULL)
        return EO_EINVAL;
    int rc = eo_tracker_connect(c->tr, id, now);
    if (rc == 0)
        want_lookup(c, id);
    return rc;
}

int eo_client_player_disconnect(eo_client *c, const char *id, double now)
{
    return c == NULL ? EO_EINVAL : eo_tracker_disconnect(c->tr, id, now);
}

int eo_client_player_team(eo_client *c, const char *id, eo_track_team team, double now)
{
    if (c == NULL)
        return EO_EINVAL;
    /* A move applied after the player left must not bring back a ghost. */
    int rc = eo_tracker_player(c->tr, id, NULL);
    return rc != 0 ? rc : eo_tracker_set_team(c->tr, id, team, now);
}

int eo_client_player_event(eo_client *c, const char *id, eo_track_event ev, double now)
{
    return c == NULL ? EO_EINVAL : eo_tracker_participate(c->tr, id, ev, now);
}

int eo_client_player_commander(eo_client *c, const char *id)
{
    return c == NULL ? EO_EINVAL : eo_tracker_set_commander(c->tr, id);
}

int eo_client_player_dead(eo_client *c, const char *id, bool dead)
{
    return c == NULL ? EO_EINVAL : eo_tracker_set_dead(c->tr, id, dead);
}

int eo_client_player_protected(eo_client *c, const char *id, bool is_protected)
{
    return c == NULL ? EO_EINVAL : eo_tracker_set_protected(c->tr, id, is_protected);
}

int eo_client_player_score(eo_client *c, const char *id, int64_t score)
{
    return c == NULL ? EO_EINVAL : eo_tracker_set_score(c->tr, id, score);
}

int eo_client_player_party(eo_client *c, const char *id, const char *party)
{
    return c == NULL ? EO_EINVAL : eo_tracker_set_party(c->tr, id, party);
}

int eo_client_rating_of(const eo_client *c, const char *id, eo_client_rating *out)
{
    if (c == NULL || out == NULL || !id_ok(id))
        return EO_EINVAL;
    *out = rating_or_start(c, id);
    return 0;
}

/* The players on A and B as the autobalance core sees them; party ids become small numbers.
 * Returns the count, or -1 (more than EO_AB_PLAYERS_MAX). */
static long ab_players(eo_client *c, eo_ab_player *p, const char **ids, bool *has_scores)
{
    size_t n = 0, count = eo_tracker_count(c->tr);
    const char *parties[EO_AB_PLAYERS_MAX];
    size_t nparties = 0;
    *has_scores = true;
    for (size_t i = 0; i < count; i++) {
        eo_track_player tp;
        if (eo_tracker_player_at(c->tr, i, &tp) != 0 ||
            (tp.team != EO_TRACK_A && tp.team != EO_TRACK_B))
            continue;
        if (n == EO_AB_PLAYERS_MAX)
            return -1;
        eo_ab_player *q = &p[n];
        memset(q, 0, sizeof *q);
        q->id = (uint32_t)n;
        q->team = tp.team == EO_TRACK_A ? EO_AB_A : EO_AB_B;
        q->rating = split_rating(c, tp.id);
        q->is_protected = tp.is_protected;
        q->dead = tp.dead;
        q->joined_at = (int64_t)floor(tp.team_since);
        int64_t k = known_index(c, tp.id, false);
        q->last_moved = k >= 0 ? c->known[k].last_moved : EO_AB_NEVER;
        q->score = tp.score;
        *has_scores &= tp.has_score;
        if (tp.party != NULL) {
            size_t j = 0;
            while (j < nparties && strcmp(parties[j], tp.party) != 0)
                j++;
            if (j == nparties)
                parties[nparties++] = tp.party;
            q->party = (uint32_t)j + 1;
        }
        ids[n++] = tp.id;
    }
    if (n == 0)
        *has_scores = false;
    return (long)n;
}

int eo_client_place_joiner(eo_client *c, const char *id, eo_track_team *team)
{
    if (c == NULL || team == NULL || !id_ok(id))
        return EO_EINVAL;
    eo_ab_player p[EO_AB_PLAYERS_MAX];
    const char *ids[EO_AB_PLAYERS_MAX];
    bool scores;
    long n = ab_players(c, p, ids, &scores);
    if (n < 0)
        return EO_ELIMIT;
    /* The joiner himself is not among the teams. */
    for (long i = 0; i < n; i++) {
        if (strcmp(ids[i], id) == 0) {
            p[i] = p[n - 1];
            ids[i] = ids[n - 1];
            n--;
            break;
        }
    }
    eo_ab_placement pl;
    int rc = eo_autobalance_place_joiner(&c->cfg.autobalance, p, (size_t)n,
                                         split_rating(c, id), &pl);
    if (rc != 0)
        return rc;
    *team = pl.team == EO_AB_A ? EO_TRACK_A : pl.team == EO_AB_B ? EO_TRACK_B : EO_TRACK_NONE;
    return 0;
}

/* ---- splits and scrambles ----------------------------------------------------------------- */

static bool eligible(eo_track_team t)
{
    return t == EO_TRACK_A || t == EO_TRACK_B || t == EO_TRACK_WAITING;
}

/* Queues a split request for the eligible players (the first SPLIT_PLAYERS_MAX in connection
 * order: earlier players have waited longer). False when fewer than 4 are eligible. */
static bool request_splits(eo_client *c, unsigned tag)
{
    json_t *arr = json_array();
    size_t count = eo_tracker_count(c->tr);
    for (size_t i = 0; arr != NULL && i < count && json_array_size(arr) < SPLIT_PLAYERS_MAX;
         i++) {
        eo_track_player tp;
        if (eo_tracker_player_at(c->tr, i, &tp) == 0 && eligible(tp.team))
            json_array_append_new(arr, json_string(tp.id));
    }
    if (arr == NULL || json_array_size(arr) < 4) {
        json_decref(arr);
        return false;
    }
    json_t *o = json_pack("{s:o}", "players", arr);
    char *body = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    eo__job *j = body ? calloc(1, sizeof *j) : NULL;
    if (j == NULL) {
        free(body);
        return false;
    }
    j->tag = tag;
    j->body = body;
    pthread_mutex_lock(&c->mu);
    if (c->jobs_tail != NULL)
        c->jobs_tail->next = j;
    else
        c->jobs = j;
    c->jobs_tail = j;
    c->njobs++;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
    return true;
}

/* Publishes the scramble's state in the stats (they are read from any thread). */
static void sync_scramble_stats(eo_client *c)
{
    pthread_mutex_lock(&c->mu);
    c->stats.scramble_pending = c->scramble_pending;
    c->stats.scramble_waiting = c->scramble_tag != 0;
    pthread_mutex_unlock(&c->mu);
}

/* A scramble could not be given now: it stays pending until the next round end. */
static void defer_scramble(eo_client *c, const char *why)
{
    c->scramble_tag = 0;
    sync_scramble_stats(c);
    pthread_mutex_lock(&c->mu);
    c->stats.scrambles_deferred++;
    eo__client_log_locked(c, EO_CLIENT_LOG_WARN, "scramble (%s) pending until the next round "
                          "end: %s", c->scramble_rule, why);
    pthread_mutex_unlock(&c->mu);
}

static void start_scramble(eo_client *c, const char *rule)
{
    c->scramble_pending = true;
    c->scramble_rule = rule;
    c->scramble_tag = ++c->next_tag;
    sync_scramble_stats(c);
    if (!request_splits(c, c->scramble_tag))
        defer_scramble(c, "fewer than 4 eligible players");
}

/* Forgets a pending scramble (tournament started, map changed): its answer, if one comes, only
 * refreshes the cache. */
static void cancel_scramble(eo_client *c)
{
    if (!c->scramble_pending)
        return;
    c->scramble_pending = false;
    c->scramble_tag = 0;
    sync_scramble_stats(c);
    glog(c, EO_CLIENT_LOG_INFO, "pending scramble (%s) cancelled", c->scramble_rule);
}

/* The team of a connected eligible player, or EO_TRACK_NONE. */
static eo_track_team team_of(const eo_client *c, const char *id)
{
    eo_track_player tp;
    if (eo_tracker_player(c->tr, id, &tp) != 0 || !eligible(tp.team))
        return EO_TRACK_NONE;
    return tp.team;
}

/* Applies the largest split of @p s whose players are all still eligible. False when none
 * fits. */
static bool apply_scramble(eo_client *c, const eo__splits *s, const char *source)
{
    const eo__split *best = NULL;
    int kmax = c->cfg.team_size_max > 0 ? c->cfg.team_size_max : INT32_MAX;
    for (size_t i = 0; i < s->count; i++) {
        const eo__split *sp = &s->s[i];
        bool fits = sp->k <= kmax && (best == NULL || sp->k > best->k);
        for (int j = 0; fits && j < 2 * sp->k; j++)
            fits = team_of(c, sp->ids[j]) != EO_TRACK_NONE;
        if (fits)
            best = sp;
    }
    if (best == NULL)
        return false;
    /* Sides are free in a scramble: keep the labelling that moves fewer players. */
    int moves_as_is = 0, moves_swapped = 0;
    for (int j = 0; j < 2 * best->k; j++) {
        eo_track_team now = team_of(c, best->ids[j]);
        eo_track_team as_is = j < best->k ? EO_TRACK_A : EO_TRACK_B;
        eo_track_team swapped = j < best->k ? EO_TRACK_B : EO_TRACK_A;
        moves_as_is += now != as_is;
        moves_swapped += now != swapped;
    }
    bool swap = moves_swapped < moves_as_is;
    eo_client_event *e = push_event(c);
    if (e == NULL)
        return false;
    e->type = EO_CLIENT_EV_SCRAMBLE;
    e->rule = c->scramble_rule;
    e->source = source;
    e->k = best->k;
    int64_t sum[2] = {0, 0};
    int size[2] = {best->k, best->k};
    for (int j = 0; j < 2 * best->k; j++) {
        bool in_a = (j < best->k) != swap;
        sum[in_a ? 0 : 1] += split_rating(c, best->ids[j]);
        eo_track_team to = in_a ? EO_TRACK_A : EO_TRACK_B;
        if (team_of(c, best->ids[j]) != to)
            push_move(c, best->ids[j], to, c->scramble_rule, "scramble");
    }
    /* The bench: everyone eligible the split leaves out. */
    size_t count = eo_tracker_count(c->tr);
    for (size_t i = 0; i < count; i++) {
        eo_track_player tp;
        if (eo_tracker_player_at(c->tr, i, &tp) != 0 || !eligible(tp.team))
            continue;
        bool in_split = false;
        for (int j = 0; j < 2 * best->k && !in_split; j++)
            in_split = strcmp(best->ids[j], tp.id) == 0;
        if (in_split)
            continue;
        eo_track_team to = EO_TRACK_WAITING;
        if (!c->cfg.bench_waits && (size[0] < kmax || size[1] < kmax)) {
            int t = size[0] != size[1] ? (size[0] < size[1] ? 0 : 1) : (sum[0] <= sum[1] ? 0 : 1);
            /* (the smaller team is below kmax whenever either is) */
            size[t]++;
            sum[t] += split_rating(c, tp.id);
            to = t == 0 ? EO_TRACK_A : EO_TRACK_B;
        }
        if (tp.team != to)
            push_move(c, tp.id, to, c->scramble_rule, "scramble");
    }
    c->scramble_pending = false;
    c->scramble_tag = 0;
    sync_scramble_stats(c);
    /* TF2 resets the team scores when it scrambles; the trigger counters follow. */
    c->trig.wins[0] = c->trig.wins[1] = 0;
    c->trig.streak = 0;
    c->trig.full_rounds = 0;
    c->trig.last_scramble_round = (int32_t)c->trig.round;
    pthread_mutex_lock(&c->mu);
    if (strcmp(source, "fresh") == 0)
        c->stats.scrambles_fresh++;
    else
        c->stats.scrambles_cache++;
    eo__client_log_locked(c, EO_CLIENT_LOG_INFO, "scramble (%s) from %s splits: %dv%d",
                          c->scramble_rule, source, best->k, best->k);
    pthread_mutex_unlock(&c->mu);
    return true;
}

/* A split answer (or its failure) reached the game thread. */
static void on_splits(eo_client *c, eo__result *r)
{
    bool for_scramble = r->tag != 0 && r->tag == c->scramble_tag;
    if (r->ok) {
        eo__splits_free(&c->cache);
        c->cache = r->splits;
        memset(&r->splits, 0, sizeof r->splits);
    }
    if (!for_scramble || !c->scramble_pending)
        return;
    /* A scramble applies between rounds; one that comes back late waits for the next round
     * end, which asks again. */
    if (eo_tracker_round_running(c->tr)) {
        defer_scramble(c, "the splits came after the round started");
        return;
    }
    if (r->ok && apply_scramble(c, &c->cache, "fresh"))
        return;
    if (!r->ok && apply_scramble(c, &c->cache, "cache"))
        return;
    defer_scramble(c, !r->ok && c->cache.count == 0 ? "service unreachable, no cached splits"
                      : !r->ok ? "service unreachable, no cached split fits the players"
                               : "no split fits the players");
}

static void eval_triggers(eo_client *c)
{
    size_t players = 0, count = eo_tracker_count(c->tr);
    for (size_t i = 0; i < count; i++) {
        eo_track_player tp;
        if (eo_tracker_player_at(c->tr, i, &tp) == 0 && eligible(tp.team))
            players++;
    }
    c->trig.players = (uint32_t)players;
    eo_trigger_result res;
    int rc = eo_trigger_eval(&c->trig, &c->cfg.triggers, &res);
    if (rc != 0) {
        glog(c, EO_CLIENT_LOG_ERROR, "scramble rules: inconsistent state at %s",
             res.field ? res.field : "?");
        return;
    }
    if (res.reason != EO_TRIGGER_NONE)
        glog(c, EO_CLIENT_LOG_DEBUG, "scramble rules: %s%s", eo_trigger_rule_name(res.reason),
             res.scramble ? " fires" : "");
    if (res.scramble && c->cfg.scramble_on)
        start_scramble(c, eo_trigger_rule_name(res.rule));
}

/* ---- rounds ------------------------------------------------------------------------------- */

int eo_client_round_abandon(eo_client *c, double now)
{
    if (c == NULL || !isfinite(now))
        return EO_EINVAL;
    if (!eo_tracker_round_running(c->tr))
        return 0;
    int rc = eo_tracker_round_abandon(c->tr, now);
    if (rc == 0)
        glog(c, EO_CLIENT_LOG_INFO, "round abandoned: not reported");
    return rc;
}

int eo_client_set_mode(eo_client *c, const char *mode, eo_trigger_mode trigger_mode,
                       bool tournament)
{
    if (c == NULL || (mode != NULL && !id_ok(mode)) ||
        (unsigned)trigger_mode >= EO_TRIGGER_MODE_COUNT)
        return EO_EINVAL;
    char *d = NULL;
    if (mode != NULL && (d = strdup(mode)) == NULL)
        return EO_ENOMEM;
    free(c->mode);
    c->mode = d;
    c->cfg.mode = d;
    c->cfg.trigger_mode = trigger_mode;
    c->trig.mode = trigger_mode;
    c->trig.tournament = tournament;
    if (tournament)
        cancel_scramble(c); /* teams are fixed from now on */
    return 0;
}

int eo_client_map_start(eo_client *c, const char *map, double now)
{
    if (c == NULL || (map != NULL && !id_ok(map)))
        return EO_EINVAL;
    if (!isfinite(now))
        return EO_EINVAL;
    eo_client_round_abandon(c, now); /* a map change ends a round that did not finish */
    cancel_scramble(c);
    if (map != NULL) {
        char *d = strdup(map);
        if (d == NULL)
            return EO_ENOMEM;
        free(c->map);
        c->map = d;
        c->cfg.map = d;
    }
    reset_trigger_state(c);
    return 0;
}

int eo_client_round_start(eo_client *c, double now)
{
    if (c == NULL)
        return EO_EINVAL;
    int rc = eo_tracker_round_start(c->tr, now);
    if (rc == 0) {
        c->round_ends_at = -1;
        c->unbalanced_since = EO_AB_NEVER;
        c->next_ab_check = now;
    }
    return rc;
}

int eo_client_round_time_left(eo_client *c, double seconds, double now)
{
    if (c == NULL || !isfinite(seconds) || !isfinite(now))
        return EO_EINVAL;
    c->round_ends_at = seconds < 0 ? -1 : now + seconds;
    return 0;
}

/* Queues the record's report: the oldest goes when the ring is full (logged). */
static int queue_report(eo_client *c, const eo_round *r, const char *session)
{
    json_t *o = eo_round_to_json(r);
    if (o != NULL && session != NULL &&
        json_object_set_new(o, "session", json_string(session)) != 0) {
        json_decref(o);
        o = NULL;
    }
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    char *id = text ? strdup(r->id) : NULL;
    if (id == NULL) {
        free(text);
        return EO_ENOMEM;
    }
    pthread_mutex_lock(&c->mu);
    char *gone = NULL;
    int rc = eo__client_state_push(&c->st, id, text, &gone);
    if (rc != 0) {
        pthread_mutex_unlock(&c->mu);
        free(id);
        free(text);
        return rc;
    }
    c->st.next_seq++;
    c->unsaved = c->unsaved + 1 < c->st.count ? c->unsaved + 1 : c->st.count;
    c->stats.next_seq = c->st.next_seq;
    c->stats.reports_made++;
    c->stats.reports_dropped = c->st.dropped;
    if (gone != NULL && c->sending != NULL && strcmp(gone, c->sending) == 0)
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                              "report queue full (%zu slots): round %s dropped while being sent "
                              "(it is rated if that request succeeds)", c->st.cap, gone);
    else if (gone != NULL)
        eo__client_log_locked(c, EO_CLIENT_LOG_ERROR,
                              "report queue full (%zu slots): round %s dropped, never rated",
                              c->st.cap, gone);
    free(gone);
    c->dirty = true;
    c->next_try_ms = 0; /* a round end retries at once, oldest report first */
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->mu);
    return 0;
}

int eo_client_round_end(eo_client *c, eo_winner winner, const eo_client_round_info *info,
                        double now, char *round_id, size_t idlen)
{
    if (c == NULL || (unsigned)winner > EO_DRAW || !isfinite(now))
        return EO_EINVAL;
    if (!eo_tracker_round_running(c->tr) ||
        (info != NULL && info->session != NULL &&
         eo_id_check(info->session, strlen(info->session)) != 0))
        return EO_EINVAL;
    eo_client_round_info dflt;
    if (info == NULL) {
        eo_client_round_info_init(&dflt);
        info = &dflt;
    }
    pthread_mutex_lock(&c->mu);
    char id[EO_ID_MAX + 1];
    snprintf(id, sizeof id, "%s:%lld:%llu", c->server_id, (long long)c->st.epoch,
             (unsigned long long)c->st.next_seq);
    pthread_mutex_unlock(&c->mu);
    eo_round rec;
    eo_round_error rerr;
    int rc = eo_tracker_round_end(c->tr, now, winner, id, c->server_id, c->map, c->mode, &rec,
                                  &rerr);
    if (rc == 0) {
        rc = queue_report(c, &rec, info->session);
        eo_round_free(&rec);
        if (rc == 0 && round_id != NULL && idlen > 0)
            snprintf(round_id, idlen, "%s", id);
    } else if (rc == EO_EINVAL) {
        glog(c, EO_CLIENT_LOG_WARN, "round not reported: %s: %s", rerr.field, rerr.message);
    }
    /* The scramble rules see every round, reported or not. */
    c->trig.event = EO_TRIGGER_EVENT_ROUND_END;
    c->trig.round++;
    c->trig.winner = winner;
    if (winner == EO_DRAW) {
        c->trig.streak = 0;
    } else {
        c->trig.wins[winner]++;
        if (c->trig.streak > 0 && c->trig.streak_team == winner) {
            c->trig.streak++;
        } else {
            c->trig.streak = 1;
            c->trig.streak_team = winner;
        }
    }
    c->trig.captured[0] = info->captured[0];
    c->trig.captured[1] = info->captured[1];
    c->trig.attackers_timed_out = info->attackers_timed_out;
    c->trig.full_rounds += info->full_round;
    c->trig.time_left = info->time_left < 0 ? -1 : info->time_left;
    c->trig.win_limit = info->win_limit;
    c->trig.max_rounds = info->max_rounds;
    bool was_pending = c->scramble_pending;
    eval_triggers(c);
    /* A put-off scramble asks again at the next opportunity (seed 000), unless scrambles were
     * turned off meanwhile (set_mode's tournament cancels it). */
    if (was_pending && c->scramble_tag == 0 && c->scramble_pending)
        start_scramble(c, c->scramble_rule);
    else if (!c->scramble_pending)
        request_splits(c, 0); /* keeps the cache fresh */
    return rc;
}

int eo_client_wfp_expired(eo_client *c, double now)
{
    (void)now;
    if (c == NULL)
        return EO_EINVAL;
    c->trig.event = EO_TRIGGER_EVENT_WFP_EXPIRED;
    eval_triggers(c);
    c->trig.event = EO_TRIGGER_EVENT_ROUND_END;
    return 0;
}

int eo_client_scramble(eo_client *c, double now)
{
    (void)now;
    if (c == NULL)
        return EO_EINVAL;
    start_scramble(c, "requested");
    return 0;
}

/* ---- poll --------------------------------------------------------------------------------- */

static void autobalance(eo_client *c, double now)
{
    eo_ab_player p[EO_AB_PLAYERS_MAX];
    const char *ids[EO_AB_PLAYERS_MAX];
    eo_ab_state st = {0};
    long n = ab_players(c, p, ids, &st.has_scores);
    if (n < 0)
        return;
    st.players = p;
    st.n = (size_t)n;
    st.now = (int64_t)floor(now);
    st.time_left = c->round_ends_at < 0 ? EO_AB_TIME_UNKNOWN
                                        : (int64_t)fmax(0, floor(c->round_ends_at - now));
    st.unbalanced_since = c->unbalanced_since;
    eo_ab_result res;
    if (eo_autobalance_check(&c->cfg.autobalance, &st, &res) != 0)
        return;
    if (res.rule == EO_AB_RULE_NONE) {
        c->unbalanced_since = EO_AB_NEVER;
        return;
    }
    if (res.action == EO_AB_OFF_DELAY && c->unbalanced_since == EO_AB_NEVER)
        c->unbalanced_since = st.now;
    if (res.action != EO_AB_ACT)
        return;
    for (size_t i = 0; i < res.nmoves; i++) {
        const char *id = ids[res.moves[i].id];
        push_move(c, id, res.moves[i].to == EO_AB_A ? EO_TRACK_A : EO_TRACK_B,
                  eo_ab_rule_name(res.rule), eo_ab_reason_name(res.moves[i].reason));
        int64_t k = known_index(c, id, true);
        if (k >= 0)
            c->known[k].last_moved = st.now;
    }
    c->unbalanced_since = EO_AB_NEVER;
    glog(c, EO_CLIENT_LOG_INFO, "autobalance (%s): %zu move(s)", eo_ab_rule_name(res.rule),
         res.nmoves);
}

int eo_client_poll(eo_client *c, double now, eo_client_event *ev)
{
    if (c == NULL || ev == NULL)
        return EO_EINVAL;
    pthread_mutex_lock(&c->mu);
    eo__result *r = c->res;
    c->res = c->res_tail = NULL;
    pthread_mutex_unlock(&c->mu);
    while (r != NULL) {
        eo__result *next = r->next;
        switch (r->type) {
        case EO__RES_LOG:
            if (c->cfg.log != NULL)
                c->cfg.log(c->cfg.log_ctx, r->level, r->msg);
            break;
        case EO__RES_RATING: {
            int64_t k = known_index(c, r->id, true);
            if (k >= 0)
                c->known[k].r = r->rating;
            eo_client_event *e = push_event(c);
            if (e != NULL) {
                e->type = EO_CLIENT_EV_RATING;
                memcpy(e->id, r->id, sizeof e->id);
                e->rating = r->rating;
            }
            break;
        }
        case EO__RES_REPORT: {
            eo_client_event *e = push_event(c);
            if (e != NULL) {
                e->type = EO_CLIENT_EV_REPORTED;
                memcpy(e->id, r->id, sizeof e->id);
                e->status = r->status;
            }
            break;
        }
        case EO__RES_SPLITS:
            on_splits(c, r);
            break;
        }
        eo__splits_free(&r->splits);
        free(r);
        r = next;
    }
    if (c->cfg.autobalance.enabled && eo_tracker_round_running(c->tr) && now >= c->next_ab_check) {
        c->next_ab_check = now + c->cfg.autobalance_interval;
        autobalance(c, now);
    }
    if (c->ev_count == 0)
        return 0;
    *ev = c->ev[c->ev_head];
    c->ev_head = (c->ev_head + 1) % c->ev_cap;
    c->ev_count--;
    return 1;
}

/* ---- state -------------------------------------------------------------------------------- */

void eo_client_get_stats(const eo_client *c, eo_client_stats *out)
{
    if (c == NULL || out == NULL)
        return;
    eo_client *m = (eo_client *)c; /* the mutex only */
    pthread_mutex_lock(&m->mu);
    *out = c->stats;
    out->queued = c->st.count;
    out->splits_queued = c->njobs;
    pthread_mutex_unlock(&m->mu);
}

int eo_client_flush(eo_client *c, long timeout_ms)
{
    if (c == NULL)
        return EO_EINVAL;
    int64_t until = eo__client_mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
    struct timespec ts = {.tv_sec = (time_t)(until / 1000),
                          .tv_nsec = (long)(until % 1000) * 1000000};
    pthread_mutex_lock(&c->mu);
    int rc = 0;
    while (!eo__client_idle(c)) {
        pthread_cond_signal(&c->wake);
        if (pthread_cond_timedwait(&c->idle, &c->mu, &ts) != 0 &&
            eo__client_mono_ms() >= until) {
            rc = EO_EBUSY;
            break;
        }
    }
    pthread_mutex_unlock(&c->mu);
    return rc;
}
