/* Synthetic rounds: see gen.h. */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/numeric.h"
#include "evenodds/eo_codec.h"

#define ID_LEN 24 /* 17 digits + NUL, with room the compiler can prove */
#define TEAM_CAP 128
#define ROUND_ID_LEN 40

struct eo_gen {
    eo_gen_config c;
    uint64_t state;
    uint64_t serial;
    char (*ids)[ID_LEN];
    int32_t *skill;
    uint32_t *stamp; /* serial of the round a player was last seated in */
    eo_member team[2][TEAM_CAP];
    char round_id[ROUND_ID_LEN];
};

/* splitmix64 (Steele, Lea, Flood 2014): a published generator with public test values. */
static uint64_t next64(eo_gen *g)
{
    uint64_t z = (g->state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [0, n): the high 32 bits scaled (bias below 2^-32 * n, irrelevant here). */
static uint32_t below(eo_gen *g, uint32_t n)
{
    return (uint32_t)(((next64(g) >> 32) * (uint64_t)n) >> 32);
}

void eo_gen_config_default(eo_gen_config *c)
{
    memset(c, 0, sizeof *c);
    c->seed = 1;
    c->players = 2000;
    c->team_min = 12;
    c->team_max = 12;
    c->draw_permille = 20;
    c->start = 1763800000;
    c->spacing = 600;
}

int eo_gen_create(const eo_gen_config *c, eo_gen **out)
{
    if (c == NULL || out == NULL || c->team_min < 1 || c->team_min > c->team_max ||
        c->team_max > TEAM_CAP || c->players < 2 * c->team_max || c->players > 999999999u ||
        c->regulars > c->players || c->regular_permille > 1000 || c->draw_permille > 1000 ||
        c->partial_permille > 1000 ||
        c->spacing < 2)
        return EO_EINVAL;
    eo_gen *g = calloc(1, sizeof *g);
    if (g == NULL)
        return EO_ENOMEM;
    g->c = *c;
    g->state = c->seed;
    g->ids = calloc(c->players, sizeof *g->ids);
    g->skill = calloc(c->players, sizeof *g->skill);
    g->stamp = calloc(c->players, sizeof *g->stamp);
    if (g->ids == NULL || g->skill == NULL || g->stamp == NULL) {
        eo_gen_destroy(g);
        return EO_ENOMEM;
    }
    for (uint32_t i = 0; i < c->players; i++) {
        snprintf(g->ids[i], ID_LEN, "76561198%09u", i + 1);
        /* Triangular-ish spread of +-1200 around 0, and 1 in 25 an outlier at +-2500 more, so
         * ratings reach both the floor and the fast climbers' region. */
        int32_t s = 0;
        for (int k = 0; k < 4; k++)
            s += (int32_t)below(g, 601);
        s -= 1200;
        uint32_t o = below(g, 50);
        if (o == 0)
            s += 2500;
        else if (o == 1)
            s -= 2500;
        g->skill[i] = s;
    }
    *out = g;
    return 0;
}

void eo_gen_destroy(eo_gen *g)
{
    if (g == NULL)
        return;
    free(g->ids);
    free(g->skill);
    free(g->stamp);
    free(g);
}

const char *eo_gen_player_id(const eo_gen *g, uint32_t i)
{
    return g->ids[i];
}

int32_t eo_gen_player_skill(const eo_gen *g, uint32_t i)
{
    return g->skill[i];
}

static uint32_t pick(eo_gen *g)
{
    for (;;) {
        uint32_t p;
        if (g->c.regulars > 0 && below(g, 1000) < g->c.regular_permille)
            p = below(g, g->c.regulars);
        else
            p = below(g, g->c.players);
        if (g->stamp[p] != (uint32_t)g->serial) {
            g->stamp[p] = (uint32_t)g->serial;
            return p;
        }
    }
}

void eo_gen_next(eo_gen *g, eo_round *r)
{
    g->serial++;
    uint32_t k = g->c.team_min + below(g, g->c.team_max - g->c.team_min + 1);
    int64_t sum[2] = {0, 0};
    for (int t = 0; t < 2; t++) {
        for (uint32_t i = 0; i < k; i++) {
            uint32_t p = pick(g);
            memset(&g->team[t][i], 0, sizeof g->team[t][i]);
            g->team[t][i].id = g->ids[p];
            sum[t] += g->skill[p];
        }
    }
    for (int t = 0; g->c.partial_permille > 0 && t < 2; t++) {
        for (uint32_t i = 0; i < k; i++) {
            if (below(g, 1000) < g->c.partial_permille) {
                g->team[t][i].has = EO_MEMBER_TIME;
                g->team[t][i].time = (double)(1 + below(g, 7)) / 8.0;
            }
        }
    }
    /* True P(A wins): logistic of the mean skill difference on the Elo scale. */
    double x = (double)(sum[0] - sum[1]) / (400.0 * (double)k);
    double p_a = 1.0 / (1.0 + eo__exp(-x));
    double u = (double)(next64(g) >> 11) * 0x1p-53;
    uint32_t d = below(g, 1000);
    eo_winner w = d < g->c.draw_permille ? EO_DRAW : (u < p_a ? EO_WIN_A : EO_WIN_B);
    memset(r, 0, sizeof *r);
    snprintf(g->round_id, sizeof g->round_id, "gen%llu:%llu", (unsigned long long)g->c.seed,
             (unsigned long long)g->serial);
    r->id = g->round_id;
    r->started_at = g->c.start + (int64_t)(g->serial - 1) * g->c.spacing;
    r->ended_at = r->started_at + 1 + below(g, g->c.spacing - 1);
    r->winner = w;
    r->team[0] = g->team[0];
    r->team[1] = g->team[1];
    r->n[0] = k;
    r->n[1] = k;
}

/* Appends with bounds; *len tracks the total written (may exceed cap: then it failed). */
static void put(char *buf, size_t cap, size_t *len, const char *s)
{
    size_t n = strlen(s);
    if (*len + n < cap)
        memcpy(buf + *len, s, n + 1);
    *len += n;
}

int eo_gen_jsonl(const eo_round *r, char *buf, size_t cap)
{
    size_t len = 0;
    char num[64];
    if (cap == 0)
        return -1;
    buf[0] = '\0';
    for (int t = 0; t < 2; t++) {
        put(buf, cap, &len, t == 0 ? "{\"A\":[" : "],\"B\":[");
        for (size_t i = 0; i < r->n[t]; i++) {
            const eo_member *m = &r->team[t][i];
            put(buf, cap, &len, i ? "," : "");
            put(buf, cap, &len, (m->has & EO_MEMBER_TIME) ? "{\"id\":\"" : "\"");
            put(buf, cap, &len, m->id);
            if (m->has & EO_MEMBER_TIME) {
                snprintf(num, sizeof num, "\",\"time\":%.3f}", m->time);
                put(buf, cap, &len, num);
            } else {
                put(buf, cap, &len, "\"");
            }
        }
    }
    snprintf(num, sizeof num, "],\"ended_at\":%lld,\"id\":\"", (long long)r->ended_at);
    put(buf, cap, &len, num);
    put(buf, cap, &len, r->id);
    if (r->map != NULL) {
        put(buf, cap, &len, "\",\"map\":\"");
        put(buf, cap, &len, r->map);
    }
    snprintf(num, sizeof num, "\",\"started_at\":%lld,\"winner\":", (long long)r->started_at);
    put(buf, cap, &len, num);
    put(buf, cap, &len, r->winner == EO_WIN_A ? "\"A\"}\n" : r->winner == EO_WIN_B ? "\"B\"}\n"
                                                                               : "\"draw\"}\n");
    return len < cap ? (int)len : -1;
}

int eo_gen_log_create(const eo_gen_config *c, size_t n, eo_gen_log **out)
{
    eo_gen_log *log = calloc(1, sizeof *log);
    if (log == NULL)
        return EO_ENOMEM;
    int rc = eo_gen_create(c, &log->gen);
    if (rc != 0) {
        free(log);
        return rc;
    }
    log->rounds = calloc(n ? n : 1, sizeof *log->rounds);
    log->members = calloc(n ? n * 2 * c->team_max : 1, sizeof *log->members);
    log->round_ids = calloc(n ? n : 1, ROUND_ID_LEN);
    if (log->rounds == NULL || log->members == NULL || log->round_ids == NULL) {
        eo_gen_log_destroy(log);
        return EO_ENOMEM;
    }
    eo_member *m = log->members;
    for (size_t i = 0; i < n; i++) {
        eo_round r;
        eo_gen_next(log->gen, &r);
        char *rid = log->round_ids + i * ROUND_ID_LEN;
        memcpy(rid, r.id, strlen(r.id) + 1);
        r.id = rid;
        for (int t = 0; t < 2; t++) {
            memcpy(m, r.team[t], r.n[t] * sizeof *m);
            r.team[t] = m;
            m += r.n[t];
        }
        log->rounds[i] = r;
    }
    log->n = n;
    *out = log;
    return 0;
}

void eo_gen_log_destroy(eo_gen_log *log)
{
    if (log == NULL)
        return;
    eo_gen_destroy(log->gen);
    free(log->rounds);
    free(log->members);
    free(log->round_ids);
    free(log);
}

void eo_gen_max_id(char tag, unsigned i, char buf[EO_ID_MAX + 1])
{
    /* The tag and 5 digits (6 bytes, always), then '\\' and '"' by turns; written in one loop
     * over a fixed head, which gcc's -O3 range analysis does not misread as an overflow. */
    char head[8];
    snprintf(head, sizeof head, "%c%05u", tag, i % 100000u);
    for (size_t k = 0; k < EO_ID_MAX; k++)
        buf[k] = k < 6 ? head[k] : k % 2 ? '"' : '\\';
    buf[EO_ID_MAX] = '\0';
}

/* @p raw as a JSON string (quote and backslash escaped: the only characters of these ids that
 * need it). */
static void put_json_id(char *buf, size_t cap, size_t *len, const char *raw)
{
    put(buf, cap, len, "\"");
    for (const char *c = raw; *c != '\0'; c++) {
        char esc[3] = {'\\', *c, '\0'};
        put(buf, cap, len, *c == '"' || *c == '\\' ? esc : esc + 1);
    }
    put(buf, cap, len, "\"");
}

static void put_member(char *buf, size_t cap, size_t *len, unsigned player, int long_numbers)
{
    char id[EO_ID_MAX + 1];
    /* time in [0, 1], joined <= left: 0.1 and 0.7 both grow to 19 bytes, 0.3 too. */
    const char *num = long_numbers ? "{\"time\":5e-324,\"joined\":4e-323,\"left\":9e-323,"
                                     "\"playtime\":2e-323,\"commander\":false,\"id\":"
                                   : "{\"time\":0.1,\"joined\":0.3,\"left\":0.7,"
                                     "\"playtime\":0.1,\"commander\":false,\"id\":";
    put(buf, cap, len, num);
    eo_gen_max_id('P', player, id);
    put_json_id(buf, cap, len, id);
    put(buf, cap, len, ",\"party\":");
    eo_gen_max_id('Q', player / 2, id);
    put_json_id(buf, cap, len, id);
    put(buf, cap, len, "}");
}

char *eo_gen_max_round(unsigned round, unsigned first, unsigned pop, const char *winner,
                       int long_numbers, const char *extra)
{
    size_t cap = 2048 + (size_t)EO_PLAYERS_MAX * 1024 + (extra != NULL ? strlen(extra) : 0);
    char *buf = pop >= EO_PLAYERS_MAX ? malloc(cap) : NULL;
    if (buf == NULL)
        return NULL;
    size_t len = 0;
    char id[EO_ID_MAX + 1];
    buf[0] = '\0';
    static const char *const top[] = {"id", "server", "map", "mode"};
    for (unsigned k = 0; k < 4; k++) {
        put(buf, cap, &len, k ? ",\"" : "{\"");
        put(buf, cap, &len, top[k]);
        put(buf, cap, &len, "\":");
        eo_gen_max_id((char)('R' + k), k == 0 ? round : 0, id);
        put_json_id(buf, cap, &len, id);
    }
    put(buf, cap, &len, ",\"started_at\":253402300799,\"ended_at\":253402300799,\"winner\":\"");
    put(buf, cap, &len, winner);
    for (unsigned i = 0; i < EO_PLAYERS_MAX; i++) {
        put(buf, cap, &len, i == 0 ? "\",\"A\":[" : i == EO_PLAYERS_MAX / 2 ? "],\"B\":[" : ",");
        put_member(buf, cap, &len, (first + i) % pop, long_numbers);
    }
    put(buf, cap, &len, "]");
    if (extra != NULL)
        put(buf, cap, &len, extra);
    put(buf, cap, &len, "}");
    if (len >= cap) { /* cannot happen: cap counts 1 KiB a member */
        free(buf);
        return NULL;
    }
    return buf;
}

char *eo_gen_canonical(const char *text)
{
    json_error_t jerr;
    json_t *o = json_loads(text, EO_JSON_DECODE_FLAGS, &jerr);
    char *c = NULL;
    if (o == NULL || eo_round_canonical(o, &c) != 0)
        c = NULL;
    json_decref(o);
    return c;
}
