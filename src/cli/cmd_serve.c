/* evenodds serve: the rating service. Signals are taken synchronously (sigwait) by the main
 * thread, so the service threads never run signal handlers. */
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_service.h"
#include "evenodds/eo_store.h"

static const char serve_usage[] =
    "usage: evenodds serve --db FILE --listen HOST:PORT [--config FILE] [--default-pool NAME]\n"
    "                      [OPTION VALUE]... [--log-level LEVEL] [--sync-full]\n"
    "\n"
    "Runs the HTTP/JSON rating service (docs/SERVICE.md, contract in docs/openapi.yaml).\n"
    "Prints 'evenodds: listening on http://HOST:PORT' once ready; SIGTERM or SIGINT drain the\n"
    "requests in flight, commit and exit 0. Logs (logfmt) go to standard error.\n"
    "\n"
    "  --db FILE            SQLite database (created if absent)\n"
    "  --listen HOST:PORT   address to listen on; port 0 picks a free port\n"
    "  --config FILE        KEY=VALUE file with EVENODDS_SERVER_KEY and EVENODDS_ADMIN_KEY\n"
    "                       (mode 600); the environment variables of the same names override it\n"
    "  --default-pool NAME  create this pool (SynElo, default parameters) if it does not exist\n"
    "  --dashboard MODE     public (default: pages, and reads without a key show what lookups\n"
    "                       show), key (pages; reads need the server key) or off (no pages)\n"
    "  --log-level LEVEL    debug, info (default), warn or error\n"
    "  --sync-full          fsync every commit (survives power loss, not only a killed process)\n"
    "\n"
    "Threads and queues:\n"
    "  --threads N          HTTP threads (default: number of cores)\n"
    "  --queue-max N        updates waiting for the writer before 503 (default 4096)\n"
    "  --batch-max N        most updates per group commit (default 512)\n"
    "  --compute-threads N  threads for heavy requests: balancer splits, autobalance\n"
    "                       (default: number of cores; they run at a lower priority)\n"
    "  --compute-queue N    heavy requests waiting before 503 (default 64)\n"
    "  --budget-max-ms MS   budget_ms granted to a balancer request at most (default 250)\n"
    "  --refit-max N        refits running at once before 503 (default 1)\n"
    "  --tune-every S       tune every pool in the background every S seconds (default 0:\n"
    "                       never); GET /v1/pools/{pool}/tune shows it, apply is by request\n"
    "\n"
    "Connections and bodies (docs/SERVICE.md \"Connections and limits\"):\n"
    "  --max-conns N        open connections at most; more are closed at once\n"
    "                       (default: half the open-file limit, at most 4096)\n"
    "  --max-conns-per-address N  per client IPv4 address or IPv6 /64 (default 64; 0: none)\n"
    "  --header-timeout S   a request's headers must arrive within S seconds (default 10)\n"
    "  --idle-timeout S     a connection silent for S seconds is closed (default 5)\n"
    "  --body-min-rate B    bytes per second a body must keep after 2 s (default 1024; 0: none)\n"
    "  --max-body BYTES     largest request body (default 1048576); larger gets 413\n"
    "  --body-budget BYTES  request bodies held in memory at once (default 67108864)\n"
    "  --min-free BYTES     /readyz answers 503 below this free disk space (default 67108864)\n"
    "\n"
    "Matchmaking (docs/MATCHMAKING.md):\n"
    "  --mm-heartbeat-timeout MS  an instance silent this long is drained: no new session\n"
    "                       or backfill, its open sessions kept (default 10000)\n"
    "  --mm-heartbeat-grace MS  a drained silent instance is lost, with its open sessions,\n"
    "                       when still silent MS later; a heartbeat before makes it live\n"
    "                       again (default 60000; 0: lost at the timeout)\n"
    "  --mm-keep S          finished tickets, sessions and instances stay readable S seconds\n"
    "                       (default 86400)\n";

/* The numeric options: each sets one field of eo_service_config, of the field's type. */
enum { F_UNSIGNED, F_SIZE, F_U64 };
static const struct num_opt {
    const char *name;
    int64_t lo, hi;
    int type;
    size_t off;
} num_opts[] = {
    {"--threads", 1, 256, F_UNSIGNED, offsetof(eo_service_config, threads)},
    {"--queue-max", 1, 1000000, F_SIZE, offsetof(eo_service_config, queue_max)},
    {"--batch-max", 1, 100000, F_SIZE, offsetof(eo_service_config, batch_max)},
    {"--compute-threads", 1, 256, F_UNSIGNED, offsetof(eo_service_config, compute_threads)},
    {"--compute-queue", 1, 1000000, F_UNSIGNED, offsetof(eo_service_config, compute_queue)},
    {"--budget-max-ms", 1, 10000, F_UNSIGNED, offsetof(eo_service_config, budget_max_ms)},
    {"--refit-max", 1, 64, F_UNSIGNED, offsetof(eo_service_config, refit_max)},
    {"--tune-every", 0, 100000000, F_UNSIGNED, offsetof(eo_service_config, tune_every)},
    {"--max-conns", 16, 1000000, F_UNSIGNED, offsetof(eo_service_config, max_connections)},
    {"--max-conns-per-address", 0, 1000000, F_UNSIGNED,
     offsetof(eo_service_config, max_per_address)},
    {"--header-timeout", 1, 3600, F_UNSIGNED, offsetof(eo_service_config, header_timeout_s)},
    {"--idle-timeout", 1, 3600, F_UNSIGNED, offsetof(eo_service_config, conn_timeout_s)},
    {"--body-min-rate", 0, (int64_t)1 << 30, F_UNSIGNED,
     offsetof(eo_service_config, body_min_rate)},
    {"--max-body", 1024, (int64_t)1 << 30, F_SIZE, offsetof(eo_service_config, body_max)},
    {"--body-budget", (int64_t)1 << 20, (int64_t)1 << 40, F_SIZE,
     offsetof(eo_service_config, body_budget)},
    {"--min-free", 0, (int64_t)1 << 50, F_U64, offsetof(eo_service_config, min_free_bytes)},
    {"--mm-heartbeat-timeout", 100, 3600000, F_UNSIGNED,
     offsetof(eo_service_config, mm_heartbeat_ms)},
    {"--mm-heartbeat-grace", 0, 3600000, F_UNSIGNED,
     offsetof(eo_service_config, mm_heartbeat_grace_ms)},
    {"--mm-keep", 1, 31536000, F_UNSIGNED, offsetof(eo_service_config, mm_keep_s)},
};

/* Tries the numeric options at argv[*i]: 1 (consumed, set), 0 (not one of them), -1 (bad
 * value, reported). */
static int num_option(eo_service_config *cfg, int argc, char **argv, int *i)
{
    for (size_t k = 0; k < sizeof num_opts / sizeof num_opts[0]; k++) {
        const struct num_opt *o = &num_opts[k];
        const char *val;
        int64_t n;
        int r = eo_opt_value("serve", argc, argv, i, o->name, &val);
        if (r == 0)
            continue;
        if (r < 0 || eo_opt_int("serve", o->name, val, o->lo, o->hi, &n) != 0)
            return -1;
        char *field = (char *)cfg + o->off;
        if (o->type == F_UNSIGNED)
            *(unsigned *)(void *)field = (unsigned)n;
        else if (o->type == F_SIZE)
            *(size_t *)(void *)field = (size_t)n;
        else
            *(uint64_t *)(void *)field = (uint64_t)n;
        return 1;
    }
    return 0;
}

/* Connections are file descriptors: the soft open-file limit goes up to the hard one, so that
 * the connection cap (sized from it) is not a few hundred. */
static void raise_nofile(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &rl);
    }
}

static int parse_dashboard(const char *s, eo_dashboard *out)
{
    static const char *names[] = {"public", "key", "off"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (eo_dashboard)i;
            return 0;
        }
    return -1;
}

static int parse_level(const char *s, int *out)
{
    static const char *names[] = {"debug", "info", "warn", "error"};
    for (int i = 0; i < 4; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = i;
            return 0;
        }
    return -1;
}

/* Prints the URL clients use: the host as given, the port as bound. */
static void print_url(const char *listen, unsigned port)
{
    const char *colon = strrchr(listen, ':');
    int hostlen = colon ? (int)(colon - listen) : (int)strlen(listen);
    printf("evenodds: listening on http://%.*s:%u\n", hostlen, listen, port);
    fflush(stdout);
}

/* One string option of serve at argv[*i] into *@p out: 1 (consumed), 0 (not it), -1 (no
 * value, reported). */
static int str_option(int argc, char **argv, int *i, const char *name, const char **out)
{
    const char *val = NULL;
    int r = eo_opt_value("serve", argc, argv, i, name, &val);
    if (r > 0)
        *out = val;
    return r;
}

/* Reads the options into @p cfg and *@p config. 0; 1 after --help; 2 after a message. */
static int parse_args(int argc, char **argv, eo_service_config *cfg, const char **config)
{
    const char *level = NULL, *dashboard = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(serve_usage, stdout);
            return 1;
        } else if (strcmp(argv[i], "--sync-full") == 0) {
            cfg->store_flags |= EO_STORE_SYNC_FULL;
        } else if ((r = str_option(argc, argv, &i, "--db", &cfg->db)) != 0 ||
                   (r = str_option(argc, argv, &i, "--listen", &cfg->listen)) != 0 ||
                   (r = str_option(argc, argv, &i, "--config", config)) != 0 ||
                   (r = str_option(argc, argv, &i, "--default-pool", &cfg->default_pool)) != 0 ||
                   (r = num_option(cfg, argc, argv, &i)) != 0 ||
                   (r = str_option(argc, argv, &i, "--log-level", &level)) != 0 ||
                   (r = str_option(argc, argv, &i, "--dashboard", &dashboard)) != 0) {
            if (r < 0)
                return 2;
        } else {
            fprintf(stderr, "evenodds serve: unknown option '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (level != NULL && parse_level(level, &cfg->log_level) != 0) {
        fprintf(stderr, "evenodds serve: --log-level: expected debug, info, warn or error, got "
                        "'%s'\n", level);
        return 2;
    }
    if (dashboard != NULL && parse_dashboard(dashboard, &cfg->dashboard) != 0) {
        fprintf(stderr, "evenodds serve: --dashboard: expected public, key or off, got '%s'\n",
                dashboard);
        return 2;
    }
    if (!cfg->db || !cfg->listen) {
        fputs("evenodds serve: --db FILE and --listen HOST:PORT are required (see --help)\n",
              stderr);
        return 2;
    }
    return 0;
}

int eo_cmd_serve(int argc, char **argv)
{
    eo_service_config cfg;
    eo_service_config_default(&cfg);
    cfg.log = stderr;
    const char *config = NULL;
    int pr = parse_args(argc, argv, &cfg, &config);
    if (pr != 0)
        return pr == 1 ? 0 : 2;

    eo_service_keys keys;
    char err[512];
    if (eo_service_keys_load(config, &keys, err, sizeof err) != 0) {
        fprintf(stderr, "evenodds serve: %s\n", err);
        return 2;
    }

    /* Block the stop signals before any thread starts so that all threads inherit the mask. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    /* A file-size limit must fail the write that passes it (SQLite reports it, /readyz shows
     * it), not end the process. */
    signal(SIGXFSZ, SIG_IGN);

    raise_nofile();
    eo_service *svc = NULL;
    int rc = eo_service_start(&cfg, &keys, &svc, err, sizeof err);
    memset(&keys, 0, sizeof keys);
    if (rc != 0) {
        fprintf(stderr, "evenodds serve: %s\n", err);
        return 1;
    }
    print_url(cfg.listen, eo_service_port(svc));

    int sig = 0;
    sigwait(&stop, &sig);
    rc = eo_service_stop(svc);
    return rc == 0 ? 0 : 1;
}
