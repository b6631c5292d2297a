/* evenodds-gamesim --queue: queue-fed servers (docs/MATCHMAKING.md). Each server registers as
 * an instance of the queue through the client library (eo_instance.h) and plays the sessions
 * the coordinator puts on it: its players join with their secrets (the first joiner of each
 * session first tries a forged one, which the library must refuse), the session plays its
 * rounds through eo_client with the session's id in every record, and closes. The lobby is
 * the game's frontend, not a game server: it files tickets for offline players over plain HTTP
 * (a party of two now and then), polls them with their tokens, and sends each assigned player
 * to his server. Everything runs in one thread; the library calls are timed (GS_CALL). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>

#include "core/buf.h"
#include "evenodds/eo_instance.h"
#include "gamesim/gamesim.h"

#define PROG "evenodds-gamesim"

/* A ticket of the lobby: one player or a party of two. */
typedef struct q_ticket {
    char id[48];
    char token[40];
    size_t who[2];
    int n;
    int64_t filed_ms;
    bool done;
} q_ticket;

/* A player on his way to a server: who, and the secret he got. */
typedef struct q_join {
    size_t who;
    char secret[40];
} q_join;

typedef struct q_server {
    gs_server *s;
    eo_instance *in;
    char session[EO_INSTANCE_SESSION_MAX + 1]; /* "" none */
    eo_instance_session info;
    bool seated[EO_INSTANCE_SEATS_MAX];
    size_t who[EO_INSTANCE_SEATS_MAX];
    size_t joined;
    bool forged;     /* this session's forged secret was tried */
    q_join *pending; /* players arrived, not yet let in */
    size_t npending, cappending;
    int64_t sessions;
} q_server;

typedef struct q_run {
    gs_run *run;
    q_server *sv;
    size_t nsv;
    q_ticket *t;
    size_t nt, capt;
    size_t waiting; /* players in tickets not yet assigned */
    CURL *h;
    char auth[300];
    uint64_t tickets, parties, secrets_refused, joins, lobby_errors, lost;
    double *waits; /* seconds from filing to assignment */
    size_t nwaits, capwaits;
    gs_rng rng;
} q_run;

/* ---- the lobby's HTTP (the game's frontend: not the library) -------------------------------- */

typedef struct buf {
    char *p;
    size_t len;
} buf;

static size_t on_data(char *data, size_t size, size_t nmemb, void *arg)
{
    buf *b = arg;
    size_t n = size * nmemb;
    char *p = realloc(b->p, b->len + n + 1);
    if (p == NULL)
        return 0;
    memcpy(p + b->len, data, n);
    b->p = p;
    b->len += n;
    b->p[b->len] = '\0';
    return n;
}

/* One request; the answer parsed (NULL when none or not JSON) and its status in *status. */
static json_t *lobby_call(q_run *q, const char *method, const char *path, const char *bearer,
                          const char *body, long *status)
{
    char url[1024], auth[300];
    snprintf(url, sizeof url, "%s%s", q->run->o->url, path);
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", bearer);
    struct curl_slist *hdrs = curl_slist_append(NULL, auth);
    if (body != NULL)
        hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
    buf b = {NULL, 0};
    curl_easy_setopt(q->h, CURLOPT_URL, url);
    curl_easy_setopt(q->h, CURLOPT_HTTPHEADER, hdrs);
    curl_easy_setopt(q->h, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(q->h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(q->h, CURLOPT_HTTPGET, body == NULL ? 1L : 0L);
    curl_easy_setopt(q->h, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(q->h, CURLOPT_WRITEDATA, &b);
    *status = 0;
    if (curl_easy_perform(q->h) == CURLE_OK)
        curl_easy_getinfo(q->h, CURLINFO_RESPONSE_CODE, status);
    curl_slist_free_all(hdrs);
    json_t *o = b.p ? json_loadb(b.p, b.len, 0, NULL) : NULL;
    free(b.p);
    return o;
}

/* Files one ticket for a random offline player (two, a party, at --party-rate). */
static void lobby_file(q_run *q)
{
    gs_world *w = &q->run->world;
    q_ticket *v = eo__grow(q->t, &q->capt, q->nt + 1, sizeof *v);
    if (v == NULL)
        return;
    q->t = v;
    q_ticket *t = &q->t[q->nt];
    memset(t, 0, sizeof *t);
    int want = gs_rng_chance(&q->rng, q->run->o->party_rate) ? 2 : 1;
    for (int i = 0; i < want; i++) {
        long who = gs_world_take(w, &q->rng, (int)q->nsv); /* "in the lobby" */
        if (who >= 0)
            t->who[t->n++] = (size_t)who;
    }
    if (t->n == 0)
        return;
    char body[512], ids[2][EO_ID_MAX + 1], path[256];
    for (int i = 0; i < t->n; i++)
        gs_world_player_id(w, t->who[i], ids[i], sizeof ids[i]);
    snprintf(t->id, sizeof t->id, "%s-t%llu", q->run->o->prefix,
             (unsigned long long)q->tickets + 1);
    snprintf(body, sizeof body, "{\"id\":\"%s\",\"players\":[{\"id\":\"%s\"}%s%s%s]}", t->id,
             ids[0], t->n > 1 ? ",{\"id\":\"" : "", t->n > 1 ? ids[1] : "", t->n > 1 ? "\"}" : "");
    snprintf(path, sizeof path, "/v1/queues/%s/tickets", q->run->o->queue);
    long st;
    json_t *o = lobby_call(q, "POST", path, q->run->o->key, body, &st);
    const char *tok = json_string_value(json_object_get(o, "token"));
    if ((st == 200 || st == 201) && tok != NULL) {
        snprintf(t->token, sizeof t->token, "%s", tok);
        t->filed_ms = gs_mono_ms();
        q->nt++;
        q->tickets++;
        q->parties += t->n > 1;
        q->waiting += (size_t)t->n;
    } else {
        q->lobby_errors++;
        fprintf(stderr, "gamesim: lobby: ticket %s: status %ld\n", t->id, st);
        for (int i = 0; i < t->n; i++)
            gs_world_release(w, t->who[i]);
    }
    json_decref(o);
}

static q_server *server_of(q_run *q, const char *instance)
{
    for (size_t i = 0; i < q->nsv; i++)
        if (strcmp(q->sv[i].s->sid, instance) == 0)
            return &q->sv[i];
    return NULL;
}

static void arrive(q_server *sv, size_t who, const char *secret)
{
    q_join *v = eo__grow(sv->pending, &sv->cappending, sv->npending + 1, sizeof *v);
    if (v == NULL)
        return;
    sv->pending = v;
    sv->pending[sv->npending].who = who;
    snprintf(sv->pending[sv->npending++].secret, sizeof sv->pending[0].secret, "%s", secret);
}

/* An assigned ticket: its players go to the server with their secrets. */
static void lobby_assigned(q_run *q, q_ticket *t, const json_t *doc)
{
    const json_t *as = json_object_get(doc, "assignment");
    q_server *sv = server_of(q, json_string_value(json_object_get(as, "instance")));
    const json_t *seats = json_object_get(as, "players");
    for (int i = 0; sv != NULL && i < t->n; i++) {
        char id[EO_ID_MAX + 1];
        gs_world_player_id(&q->run->world, t->who[i], id, sizeof id);
        size_t k;
        const json_t *p;
        json_array_foreach(seats, k,
                           p) if (strcmp(json_string_value(json_object_get(p, "id")), id) == 0)
            arrive(sv, t->who[i], json_string_value(json_object_get(p, "secret")));
    }
    double *v = eo__grow(q->waits, &q->capwaits, q->nwaits + 1, sizeof *v);
    if (v != NULL) {
        q->waits = v;
        q->waits[q->nwaits++] = (double)(gs_mono_ms() - t->filed_ms) / 1000.0;
    }
}

/* Polls the tickets not yet assigned (their own tokens, no key). */
static void lobby_poll(q_run *q)
{
    for (size_t i = 0; i < q->nt; i++) {
        q_ticket *t = &q->t[i];
        if (t->done)
            continue;
        char path[128];
        snprintf(path, sizeof path, "/v1/tickets/%s", t->id);
        long st;
        json_t *o = lobby_call(q, "GET", path, t->token, NULL, &st);
        const char *status = json_string_value(json_object_get(o, "status"));
        if (st == 200 && status != NULL && strcmp(status, "assigned") == 0) {
            lobby_assigned(q, t, o);
            t->done = true;
        } else if (st == 200 && status != NULL &&
                   (strcmp(status, "cancelled") == 0 || strcmp(status, "expired") == 0)) {
            for (int k = 0; k < t->n; k++)
                gs_world_release(&q->run->world, t->who[k]);
            t->done = true;
        }
        if (t->done)
            q->waiting -= (size_t)t->n;
        json_decref(o);
    }
    size_t k = 0; /* forget the finished ones */
    for (size_t i = 0; i < q->nt; i++)
        if (!q->t[i].done)
            q->t[k++] = q->t[i];
    q->nt = k;
}

/* ---- the servers ------------------------------------------------------------------------------
 */

/* Plays the session's rounds (everyone seated), closes it and sends the players home. */
static void play(q_run *q, q_server *sv)
{
    gs_server *s = sv->s;
    gs_world *w = &q->run->world;
    double diff = 0.0;
    for (size_t i = 0; i < sv->info.nseats; i++) {
        char id[EO_ID_MAX + 1];
        gs_world_player_id(w, sv->who[i], id, sizeof id);
        (void)GS_CALL(eo_client_player_connect, s->c, id, s->now);
        (void)GS_CALL(eo_client_player_team, s->c, id, sv->info.seats[i].team, s->now);
        diff += (sv->info.seats[i].team == EO_TRACK_A ? 1.0 : -1.0) * w->skill[sv->who[i]];
    }
    double p_true = 1.0 / (1.0 + exp(-diff / w->scale));
    eo_client_round_info info;
    eo_client_round_info_init(&info);
    info.session = sv->session;
    for (int64_t r = 0; r < q->run->o->session_rounds; r++) {
        (void)GS_CALL(eo_client_round_start, s->c, s->now);
        s->now += (double)q->run->o->round_seconds;
        eo_winner win = gs_rng_unit(&s->rng) < p_true ? EO_WIN_A : EO_WIN_B;
        if (GS_CALL(eo_client_round_end, s->c, win, &info, s->now, s->last_id, sizeof s->last_id) !=
            0)
            gs_call_failed(s, "eo_client_round_end", sv->session, gs_t.rc);
        s->n.rounds_ended++;
        s->n.wins[win]++;
        s->rounds_done++;
        s->now += 10.0;
    }
    for (size_t i = 0; i < sv->info.nseats; i++) {
        char id[EO_ID_MAX + 1];
        gs_world_player_id(w, sv->who[i], id, sizeof id);
        (void)GS_CALL(eo_client_player_disconnect, s->c, id, s->now);
        gs_world_release(w, sv->who[i]);
    }
    if (GS_CALL(eo_instance_close_session, sv->in, sv->session) != 0)
        gs_call_failed(s, "eo_instance_close_session", sv->session, gs_t.rc);
    sv->session[0] = '\0';
    sv->sessions++;
    q->run->rounds_done++;
    gs_progress(q->run);
}

/* Lets the arrived players in: each checks his secret with the library. */
static void let_in(q_run *q, q_server *sv)
{
    size_t k = 0;
    for (size_t i = 0; i < sv->npending; i++) {
        q_join *j = &sv->pending[i];
        char id[EO_ID_MAX + 1], session[EO_INSTANCE_SESSION_MAX + 1];
        gs_world_player_id(&q->run->world, j->who, id, sizeof id);
        eo_track_team team;
        if (!sv->forged) { /* someone tries a made-up secret first: it must be refused */
            int rc = GS_CALL(eo_instance_check_secret, sv->in, id,
                             "0123456789abcdef0123456789abcdef", &team, session);
            q->secrets_refused += rc == EO_EINVAL;
            sv->forged = true;
        }
        int rc = GS_CALL(eo_instance_check_secret, sv->in, id, j->secret, &team, session);
        if (rc == EO_ENOTFOUND || strcmp(session, sv->session) != 0) {
            sv->pending[k++] = *j; /* the session is not polled yet: he waits at the door */
            continue;
        }
        for (size_t x = 0; rc == 0 && x < sv->info.nseats; x++)
            if (strcmp(sv->info.seats[x].player, id) == 0 && !sv->seated[x]) {
                sv->seated[x] = true;
                sv->who[x] = j->who;
                sv->joined++;
                q->joins++;
            }
        if (rc != 0)
            gs_call_failed(sv->s, "eo_instance_check_secret", id, rc);
    }
    sv->npending = k;
}

static void server_events(q_run *q, q_server *sv)
{
    eo_instance_event ev;
    while (GS_CALL(eo_instance_poll, sv->in, &ev) == 1) {
        if (ev.type == EO_INSTANCE_EV_SESSION && sv->session[0] == '\0' &&
            eo_instance_session_get(sv->in, ev.session, &sv->info) == 0) {
            snprintf(sv->session, sizeof sv->session, "%s", ev.session);
            memset(sv->seated, 0, sizeof sv->seated);
            sv->joined = 0;
            sv->forged = false;
        } else if (ev.type == EO_INSTANCE_EV_LOST) {
            q->lost++;
            fprintf(stderr, "gamesim: %s: session %s lost\n", sv->s->sid, ev.session);
        } else if (ev.type == EO_INSTANCE_EV_REFUSED) {
            gs_call_failed(sv->s, "session request refused", ev.session, ev.status);
        } else if (ev.type == EO_INSTANCE_EV_LOG &&
                   (ev.level >= EO_CLIENT_LOG_WARN || q->run->o->verbose)) {
            fprintf(stderr, "gamesim: %s: instance: %s\n", sv->s->sid, ev.msg);
        }
    }
}

static bool server_step(q_run *q, q_server *sv)
{
    server_events(q, sv);
    eo_client_event cev;
    while (GS_CALL(eo_client_poll, sv->s->c, sv->s->now, &cev) == 1) {
        if (cev.type == EO_CLIENT_EV_REPORTED)
            sv->s->n.ev_reported_ok += cev.status == 200;
    }
    if (sv->session[0] == '\0' || sv->sessions >= q->run->o->rounds)
        return false;
    let_in(q, sv);
    if (sv->joined < sv->info.nseats)
        return false;
    play(q, sv);
    return true;
}

/* ---- the run ------------------------------------------------------------------------------ */

static int start_servers(q_run *q)
{
    const gs_opts *o = q->run->o;
    for (size_t i = 0; i < q->nsv; i++) {
        q_server *sv = &q->sv[i];
        sv->s = &q->run->sv[i];
        eo_instance_config cfg;
        eo_instance_config_init(&cfg);
        char address[128];
        snprintf(address, sizeof address, "gamesim.invalid:%zu", 27015 + i);
        cfg.url = o->url;
        cfg.key = o->key;
        cfg.id = sv->s->sid;
        cfg.queues[0] = o->queue;
        cfg.nqueues = 1;
        cfg.address = address;
        cfg.heartbeat_ms = 100;
        cfg.request_timeout_ms = (long)o->timeout_ms;
        char err[256] = "";
        if (eo_instance_create(&cfg, &sv->in, err, sizeof err) != 0) {
            fprintf(stderr, PROG ": server %s: %s\n", sv->s->sid, err);
            return -1;
        }
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static json_t *queued_summary(q_run *q, bool interrupted, bool *ok)
{
    uint64_t made = 0, acked = 0, refused = 0, queued = 0, sessions = 0, errors = 0;
    for (size_t i = 0; i < q->nsv; i++) {
        eo_client_stats st;
        eo_client_get_stats(q->sv[i].s->c, &st);
        made += st.reports_made;
        acked += st.reports_acked;
        refused += st.reports_refused;
        queued += st.queued;
        sessions += (uint64_t)q->sv[i].sessions;
        errors += q->sv[i].s->n.call_errors;
    }
    qsort(q->waits, q->nwaits, sizeof *q->waits, by_value);
    double p50 = q->nwaits ? q->waits[q->nwaits / 2] : 0.0;
    double pmax = q->nwaits ? q->waits[q->nwaits - 1] : 0.0;
    uint64_t want = (uint64_t)q->nsv * (uint64_t)q->run->o->rounds;
    *ok = !interrupted && sessions == want && acked == made && refused == 0 && queued == 0 &&
          errors == 0 && q->secrets_refused == sessions && q->lost == 0;
    const char *max_fn = gs_t.max_fn ? gs_t.max_fn : "";
    return json_pack(
        "{s:b,s:s,s:s,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:f,s:I,"
        "s:s,s:I,s:I,s:f,s:b}",
        "ok", *ok, "mode", "queue", "queue", q->run->o->queue, "servers", (json_int_t)q->nsv,
        "sessions", (json_int_t)sessions, "rounds_made", (json_int_t)made, "reports_acked",
        (json_int_t)acked, "reports_refused", (json_int_t)refused, "queued_left",
        (json_int_t)queued, "tickets", (json_int_t)q->tickets, "parties", (json_int_t)q->parties,
        "joins", (json_int_t)q->joins, "secrets_refused", (json_int_t)q->secrets_refused,
        "sessions_lost", (json_int_t)q->lost, "call_errors", (json_int_t)errors, "wait_p50_s", p50,
        "wait_max_s", pmax, "max_call_us", (json_int_t)(gs_t.max_ns / 1000), "max_call", max_fn,
        "calls", (json_int_t)gs_t.calls, "calls_over_1ms", (json_int_t)gs_t.over_1ms, "seconds",
        (double)(gs_mono_ms() - q->run->start_ms) / 1000.0, "interrupted", interrupted);
}

/* Tickets the lobby keeps in the queue: two full matches per server, so a pass finds one. */
static size_t lobby_target(const q_run *q)
{
    return (size_t)(4 * q->run->o->team_size) * q->nsv;
}

static void run_loop(q_run *q)
{
    int64_t next_poll = 0;
    bool done = false;
    while (!done && !*q->run->stop) {
        while (q->waiting < lobby_target(q) && q->run->world.noffline > 0 && q->lobby_errors < 100)
            lobby_file(q);
        if (gs_mono_ms() >= next_poll) {
            lobby_poll(q);
            next_poll = gs_mono_ms() + 20;
        }
        bool moved = false;
        done = true;
        for (size_t i = 0; i < q->nsv; i++) {
            moved |= server_step(q, &q->sv[i]);
            done &= q->sv[i].sessions >= q->run->o->rounds;
        }
        if (!moved && !done) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
}

int gs_queued_run(gs_run *run)
{
    q_run q;
    memset(&q, 0, sizeof q);
    q.run = run;
    q.nsv = run->nsv;
    q.sv = calloc(q.nsv, sizeof *q.sv);
    q.h = curl_easy_init();
    gs_rng_seed(&q.rng, run->o->seed, 0x10bb);
    int status = 1;
    if (q.sv == NULL || q.h == NULL || start_servers(&q) != 0)
        goto out;
    curl_easy_setopt(q.h, CURLOPT_TIMEOUT_MS, (long)run->o->timeout_ms);
    curl_easy_setopt(q.h, CURLOPT_NOSIGNAL, 1L);
    run_loop(&q);
    bool interrupted = *run->stop != 0;
    int64_t deadline = gs_mono_ms() + run->o->wait_ms;
    for (size_t i = 0; i < q.nsv; i++) {
        int64_t left = deadline - gs_mono_ms();
        (void)eo_client_flush(q.sv[i].s->c, left > 0 ? (long)left : 0);
        (void)eo_instance_flush(q.sv[i].in, left > 0 ? (long)left : 0);
        server_events(&q, &q.sv[i]);
    }
    bool ok = false;
    json_t *sum = queued_summary(&q, interrupted, &ok);
    char *text =
        sum ? json_dumps(sum, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6)) : NULL;
    json_decref(sum);
    if (text != NULL) {
        puts(text);
        fflush(stdout);
    }
    free(text);
    status = ok ? 0 : 1;
out:
    for (size_t i = 0; q.sv != NULL && i < q.nsv; i++) {
        eo_instance_destroy(q.sv[i].in);
        free(q.sv[i].pending);
    }
    free(q.sv);
    free(q.t);
    free(q.waits);
    curl_easy_cleanup(q.h);
    return status;
}
