/* evenodds-gamesim's options: the help text, strict parsing (every error names its option,
 * numbers must be whole and in range), the server key, the state directory. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "evenodds/eo_sim.h"
#include "gamesim/gamesim.h"

#define PROG "evenodds-gamesim"

/* In parts: C17 promises string literals of 4095 bytes only. */
static const char *const usage_text[] = {
    "usage: " PROG " [OPTIONS]\n"
    "\n"
    "Simulated game servers with simulated players, to try a deployment of the evenodds\n"
    "service and for tests. Each server plays rounds through the client library exactly as a\n"
    "game-server plugin does: players connect, take part, die, switch teams and leave, others\n"
    "join; the library reports every round, looks ratings up, scrambles and autobalances, and\n"
    "the server applies its moves. Outcomes are drawn from the players' hidden true skills\n"
    "(evenodds sim's world, docs/SIM.md). All servers run at once in one thread, round-robin;\n"
    "rounds take virtual time only, unless --pace-ms says otherwise.\n"
    "\n",
    "Progress goes to stderr, one JSON summary to stdout. Exit status: 0 when every report\n"
    "was acknowledged; 1 when some were dropped or refused, are still queued after --wait-ms,\n"
    "a client call failed, or the run was interrupted (SIGINT, SIGTERM); 2 on bad usage.\n"
    "\n",
    "Service:\n"
    "  --url URL            the service (default http://127.0.0.1:8080)\n"
    "  --pool NAME          the pool (default \"default\")\n"
    "  --key KEY            the server key; without it, EVENODDS_SERVER_KEY= from --keys FILE,\n"
    "                       else the environment variable EVENODDS_SERVER_KEY\n"
    "  --keys FILE          a keys file (e.g. var/keys.env, which `make run` writes)\n"
    "  --timeout-ms N       whole-request timeout of the client (default 5000; connecting\n"
    "                       at most 2000 of it)\n"
    "  --queue-slots N      reports each server keeps while the service cannot take them\n"
    "                       (1..1024, default 8)\n"
    "\n",
    "Servers and players:\n"
    "  --servers N          game servers at once (1..64, default 1), ids PREFIX-1 .. PREFIX-N\n"
    "  --server-prefix P    server id prefix (default gs); two gamesims at once against one\n"
    "                       pool need different prefixes, or their round ids may collide\n"
    "  --rounds R           rounds per server (default 100)\n"
    "  --players P          players connected per server (2..256, default 24); leavers are\n"
    "                       replaced, some joiners come in pairs (a party)\n"
    "  --team-size K        players a side (1..64, default 12); players beyond 2K wait\n"
    "  --population N       players in the world, online on one server or offline (default\n"
    "                       3 x servers x players); joiners are drawn from the offline ones,\n"
    "                       so players return and move between servers\n"
    "  --mode M             arena, attack_defend, payload, koth (default), cp5, ctf or other:\n"
    "                       the scramble rules and map rules; in arena the bench waits\n"
    "  --round-seconds S    virtual length of a round (20..86400, default 300); 10 virtual\n"
    "                       seconds pass between rounds. The virtual clock starts at the wall\n"
    "                       clock and runs ahead of it: records carry virtual times\n"
    "  --churn F            chance per player per round of leaving mid-round (0..1, default\n"
    "                       0.1); a new player joins in his place\n"
    "  --seed N             world seed (default 1): skills, maps and what players do; player\n"
    "                       ids are gs<seed>-p<n>. Teams also depend on the service's answers\n"
    "                       and their timing, so two runs match only where those do\n"
    "  --no-scramble        do not act on the scramble rules\n"
    "  --no-autobalance     no mid-round autobalance (the game places joiners itself)\n"
    "  --ab-strength N      autobalance also acts when the teams' rating sums differ by N or\n"
    "                       more (default: the library's, sizes only)\n"
    "\n",
    "Queue-fed servers (docs/MATCHMAKING.md):\n"
    "  --queue NAME         each server registers as an instance of queue NAME (made by an\n"
    "                       admin) and plays the sessions the coordinator puts on it, through\n"
    "                       the client library; a lobby files tickets for offline players and\n"
    "                       sends each assigned player to his server with his join secret.\n"
    "                       --rounds counts sessions per server; --players and --team-size\n"
    "                       are the queue's\n"
    "  --session-rounds N   rounds a session plays (1..100, default 1)\n"
    "  --party-rate F       share of tickets that are parties of two (0..1, default 0.2)\n"
    "\n",
    "Running:\n"
    "  --state-dir DIR      where each server keeps its state file gamesim-ID.state (made if\n"
    "                       missing; default: a new directory under $TMPDIR or /tmp, printed)\n"
    "  --pace-ms MS         real milliseconds at least between a server's rounds (default 0)\n"
    "  --intermission-ms MS longest real wait between rounds for the split answer that a\n"
    "                       scramble needs (default 3000; no wait when it came)\n"
    "  --no-hold            end rounds on time even when a server's report queue is full, so\n"
    "                       the oldest report is dropped (to try an outage); by default the\n"
    "                       server holds its round end until a slot frees, since virtual time\n"
    "                       runs faster than any service\n"
    "  --wait-ms MS         at the end, how long to wait for queued reports (default 10000)\n"
    "  --quiet              no progress and no info lines (warnings and errors still)\n"
    "  --verbose            the library's debug lines too\n"
    "  -h, --help           this text\n",
};

/* ---- options ------------------------------------------------------------------------------ */

typedef enum { K_INT, K_SEED, K_REAL, K_STR, K_MODE, K_ON, K_OFF } opt_kind;

typedef struct opt_def {
    const char *name;
    opt_kind kind;
    int64_t lo, hi; /* K_INT; K_REAL uses them as whole bounds */
    size_t off;
} opt_def;

#define OFF(f) offsetof(gs_opts, f)
static const opt_def opt_defs[] = {
    {"--url", K_STR, 0, 0, OFF(url)},
    {"--pool", K_STR, 0, 0, OFF(pool)},
    {"--key", K_STR, 0, 0, OFF(key)},
    {"--keys", K_STR, 0, 0, OFF(keys_file)},
    {"--timeout-ms", K_INT, 1, 600000, OFF(timeout_ms)},
    {"--queue-slots", K_INT, 1, 1024, OFF(queue_slots)},
    {"--servers", K_INT, 1, 64, OFF(servers)},
    {"--server-prefix", K_STR, 0, 0, OFF(prefix)},
    {"--rounds", K_INT, 1, 100000000, OFF(rounds)},
    {"--players", K_INT, 2, EO_TRACK_PLAYERS_MAX, OFF(players)},
    {"--team-size", K_INT, 1, EO_AB_TEAM_MAX, OFF(team_size)},
    {"--population", K_INT, 1, EO_SIM_PLAYERS_MAX, OFF(population)},
    {"--mode", K_MODE, 0, 0, OFF(mode)},
    {"--round-seconds", K_INT, 20, 86400, OFF(round_seconds)},
    {"--churn", K_REAL, 0, 1, OFF(churn)},
    {"--seed", K_SEED, 0, 0, OFF(seed)},
    {"--no-scramble", K_OFF, 0, 0, OFF(scramble)},
    {"--no-autobalance", K_OFF, 0, 0, OFF(autobalance)},
    {"--ab-strength", K_INT, 0, EO_AB_RATING_MAX, OFF(ab_strength)},
    {"--state-dir", K_STR, 0, 0, OFF(state_dir)},
    {"--pace-ms", K_INT, 0, 3600000, OFF(pace_ms)},
    {"--intermission-ms", K_INT, 0, 600000, OFF(intermission_ms)},
    {"--no-hold", K_OFF, 0, 0, OFF(hold)},
    {"--wait-ms", K_INT, 0, 3600000, OFF(wait_ms)},
    {"--queue", K_STR, 0, 0, OFF(queue)},
    {"--session-rounds", K_INT, 1, 100, OFF(session_rounds)},
    {"--party-rate", K_REAL, 0, 1, OFF(party_rate)},
    {"--quiet", K_ON, 0, 0, OFF(quiet)},
    {"--verbose", K_ON, 0, 0, OFF(verbose)},
};

static void opts_default(gs_opts *o)
{
    memset(o, 0, sizeof *o);
    o->url = "http://127.0.0.1:8080";
    o->pool = "default";
    o->prefix = "gs";
    o->servers = 1;
    o->rounds = 100;
    o->players = 24;
    o->team_size = 12;
    o->mode = EO_TRIGGER_MODE_KOTH;
    o->round_seconds = 300;
    o->churn = 0.1;
    o->seed = 1;
    o->pace_ms = 0;
    o->wait_ms = 10000;
    o->intermission_ms = 3000;
    o->timeout_ms = 5000;
    o->queue_slots = 8;
    o->autobalance = o->scramble = o->hold = true;
    o->session_rounds = 1;
    o->party_rate = 0.2;
}

static int bad(const char *opt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "evenodds-gamesim: OPT: what" and returns -1: every usage error names its option. */
static int bad(const char *opt, const char *fmt, ...)
{
    fprintf(stderr, PROG ": %s: ", opt);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (see --help)\n", stderr);
    return -1;
}

/* A whole number: digits with an optional sign, nothing else (strtoll alone would take
 * leading spaces and stop at trailing junk). */
static int parse_int(const char *opt, const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end = NULL;
    errno = 0;
    long long v = s[0] && !isspace((unsigned char)s[0]) ? strtoll(s, &end, 10) : 0;
    if (end == NULL || end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, PROG ": %s: expected a whole number in %lld..%lld, got '%s' (see --help)\n",
                opt, (long long)lo, (long long)hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

static int parse_seed(const char *opt, const char *s, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    unsigned long long v = isdigit((unsigned char)s[0]) ? strtoull(s, &end, 10) : 0;
    if (end == NULL || *end != '\0' || errno == ERANGE)
        return bad(opt, "expected a whole number in 0..2^64-1, got '%s'", s);
    *out = v;
    return 0;
}

static int parse_real(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = s[0] && !isspace((unsigned char)s[0]) ? strtod(s, &end) : NAN;
    if (end == NULL || end == s || *end != '\0' || errno == ERANGE || !isfinite(v) || v < lo ||
        v > hi) {
        fprintf(stderr, PROG ": %s: expected a number in %g..%g, got '%s' (see --help)\n", opt, lo,
                hi, s);
        return -1;
    }
    *out = v;
    return 0;
}

/* Returns 0 (go on), 1 (help printed) or -1 (message printed). */
static int parse_args(int argc, char **argv, gs_opts *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            for (size_t k = 0; k < sizeof usage_text / sizeof usage_text[0]; k++)
                fputs(usage_text[k], stdout);
            return 1;
        }
        if (strncmp(a, "--", 2) != 0) {
            fprintf(stderr, PROG ": unexpected argument '%s' (see --help)\n", a);
            return -1;
        }
        const char *eq = strchr(a, '=');
        size_t nlen = eq ? (size_t)(eq - a) : strlen(a);
        const opt_def *d = NULL;
        for (size_t k = 0; k < sizeof opt_defs / sizeof opt_defs[0] && d == NULL; k++)
            if (strlen(opt_defs[k].name) == nlen && strncmp(opt_defs[k].name, a, nlen) == 0)
                d = &opt_defs[k];
        if (d == NULL) {
            fprintf(stderr, PROG ": unknown option '%.*s' (see --help)\n", (int)nlen, a);
            return -1;
        }
        char *field = (char *)o + d->off;
        if (d->kind == K_ON || d->kind == K_OFF) {
            if (eq != NULL)
                return bad(d->name, "takes no value, got '%s'", eq + 1);
            *(bool *)field = d->kind == K_ON;
            continue;
        }
        const char *v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
        if (v == NULL)
            return bad(d->name, "missing value");
        int rc = 0;
        switch (d->kind) {
        case K_INT:
            rc = parse_int(d->name, v, d->lo, d->hi, (int64_t *)field);
            break;
        case K_SEED:
            rc = parse_seed(d->name, v, (uint64_t *)field);
            break;
        case K_REAL:
            rc = parse_real(d->name, v, (double)d->lo, (double)d->hi, (double *)field);
            break;
        case K_STR:
            if (v[0] == '\0')
                rc = bad(d->name, "expected a value, got ''");
            else
                *(const char **)field = v;
            break;
        case K_MODE:
            if (eo_trigger_mode_from_name(v, strlen(v), (eo_trigger_mode *)field) != 0)
                rc = bad(d->name,
                         "expected arena, attack_defend, payload, koth, cp5, ctf or other, got "
                         "'%s'",
                         v);
            break;
        default:
            break;
        }
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* EVENODDS_SERVER_KEY=… from a keys file (the format scripts/run.sh writes): into @p out.
 * 0, or -1 after a message naming --keys. */
static int key_from_file(const char *path, char *out, size_t cap)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, PROG ": --keys: cannot open %s: %s\n", path, strerror(errno));
        return -1;
    }
    static const char name[] = "EVENODDS_SERVER_KEY=";
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f) != NULL) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, name, sizeof name - 1) != 0)
            continue;
        p += sizeof name - 1;
        size_t n = strcspn(p, "\r\n");
        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
            n--;
        if (n > 0 && n < cap) {
            memcpy(out, p, n);
            out[n] = '\0';
            found = true;
        }
    }
    fclose(f);
    if (!found)
        fprintf(stderr, PROG ": --keys: no EVENODDS_SERVER_KEY=… line in %s\n", path);
    return found ? 0 : -1;
}

/* The cross-checks that single options cannot make; each message names its option. */
static int check_opts(gs_opts *o, char *key_buf, size_t key_cap)
{
    if (strncmp(o->url, "http://", 7) != 0 && strncmp(o->url, "https://", 8) != 0)
        return bad("--url", "expected http://HOST:PORT, got '%s'", o->url);
    if (eo_id_check(o->pool, strlen(o->pool)) != 0)
        return bad("--pool", "not a valid pool name: '%s'", o->pool);
    size_t plen = strlen(o->prefix);
    if (eo_id_check(o->prefix, plen) != 0 || plen > 60 || strchr(o->prefix, ':') != NULL)
        return bad("--server-prefix", "expected 1-60 bytes without ':', got '%s'", o->prefix);
    const char *src = "--key";
    if (o->key == NULL && o->keys_file != NULL) {
        if (key_from_file(o->keys_file, key_buf, key_cap) != 0)
            return -1;
        o->key = key_buf;
        src = "--keys";
    } else if (o->key == NULL) {
        o->key = getenv("EVENODDS_SERVER_KEY");
        src = "EVENODDS_SERVER_KEY";
    }
    if (o->key == NULL || o->key[0] == '\0') {
        fprintf(stderr, PROG ": --key: no server key (give --key KEY or --keys FILE, or set "
                        "EVENODDS_SERVER_KEY)\n");
        return -1;
    }
    size_t klen = strlen(o->key);
    bool blank = false;
    for (size_t i = 0; i < klen; i++)
        blank |= (unsigned char)o->key[i] <= ' ' || o->key[i] == 0x7f;
    if (klen < 16 || klen > 255 || blank) {
        /* The key itself is never printed. */
        fprintf(stderr, PROG ": %s: the server key must be 16-255 characters without spaces\n",
                src);
        return -1;
    }
    int64_t online = o->servers * o->players;
    if (o->population == 0)
        o->population = 3 * online > EO_SIM_PLAYERS_MAX ? EO_SIM_PLAYERS_MAX : 3 * online;
    if (o->population < online) {
        fprintf(stderr, PROG ": --population: %lld is fewer than servers x players (%lld)\n",
                (long long)o->population, (long long)online);
        return -1;
    }
    if (o->quiet && o->verbose)
        return bad("--verbose", "cannot go with --quiet");
    if (o->queue != NULL && eo_id_check(o->queue, strlen(o->queue)) != 0)
        return bad("--queue", "not a valid queue name: '%s'", o->queue);
    if (o->queue != NULL) /* the coordinator's teams stand: no scrambles, no autobalance */
        o->scramble = o->autobalance = false;
    return 0;
}

/* The state directory: made when missing; a fresh one when none is given. */
static int state_dir(gs_opts *o, char *buf, size_t cap)
{
    if (o->state_dir != NULL && strlen(o->state_dir) > 900) /* room for "/gamesim-ID.state" */
        return bad("--state-dir", "a path of at most 900 bytes, got %zu", strlen(o->state_dir));
    if (o->state_dir == NULL) {
        const char *tmp = getenv("TMPDIR");
        snprintf(buf, cap, "%s/evenodds-gamesim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (mkdtemp(buf) == NULL) {
            fprintf(stderr, PROG ": --state-dir: cannot make %s: %s\n", buf, strerror(errno));
            return -1;
        }
        o->state_dir = buf;
        return 0;
    }
    if (mkdir(o->state_dir, 0700) != 0 && errno != EEXIST) {
        fprintf(stderr, PROG ": --state-dir: cannot make %s: %s\n", o->state_dir,
                strerror(errno));
        return -1;
    }
    struct stat st;
    if (stat(o->state_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, PROG ": --state-dir: %s is not a directory\n", o->state_dir);
        return -1;
    }
    return 0;
}

int gs_opts_load(int argc, char **argv, gs_opts *o)
{
    static char key_buf[1024], dir_buf[1024];
    opts_default(o);
    int rc = parse_args(argc, argv, o);
    if (rc != 0)
        return rc;
    if (check_opts(o, key_buf, sizeof key_buf) != 0 || state_dir(o, dir_buf, sizeof dir_buf) != 0)
        return -1;
    return 0;
}
