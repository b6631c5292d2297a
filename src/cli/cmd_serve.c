/* evenodds serve: the rating service. Signals are taken synchronously (sigwait) by the main
 * thread, so the service threads never run signal handlers. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/opts.h"
#include "evenodds/eo_service.h"
#include "evenodds/eo_store.h"

static const char serve_usage[] =
    "usage: evenodds serve --db FILE --listen HOST:PORT [--config FILE] [--default-pool NAME]\n"
    "                      [--threads N] [--max-body BYTES] [--queue-max N] [--batch-max N]\n"
    "                      [--log-level LEVEL] [--sync-full]\n"
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
    "  --threads N          HTTP threads (default: number of cores)\n"
    "  --max-body BYTES     largest request body (default 1048576); larger gets 413\n"
    "  --queue-max N        updates waiting for the writer before 503 (default 4096)\n"
    "  --batch-max N        most updates per group commit (default 512)\n"
    "  --log-level LEVEL    debug, info (default), warn or error\n"
    "  --sync-full          fsync every commit (survives power loss, not only a killed process)\n";

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

int eo_cmd_serve(int argc, char **argv)
{
    eo_service_config cfg;
    eo_service_config_default(&cfg);
    cfg.log = stderr;
    const char *config = NULL, *val = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        int64_t n;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(serve_usage, stdout);
            return 0;
        } else if (strcmp(argv[i], "--sync-full") == 0) {
            cfg.store_flags |= EO_STORE_SYNC_FULL;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--db", &val)) != 0) {
            if (r < 0)
                return 2;
            cfg.db = val;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--listen", &val)) != 0) {
            if (r < 0)
                return 2;
            cfg.listen = val;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--config", &val)) != 0) {
            if (r < 0)
                return 2;
            config = val;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--default-pool", &val)) != 0) {
            if (r < 0)
                return 2;
            cfg.default_pool = val;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--threads", &val)) != 0) {
            if (r < 0 || eo_opt_int("serve", "--threads", val, 1, 256, &n) != 0)
                return 2;
            cfg.threads = (unsigned)n;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--max-body", &val)) != 0) {
            if (r < 0 || eo_opt_int("serve", "--max-body", val, 1024, (int64_t)1 << 30, &n) != 0)
                return 2;
            cfg.body_max = (size_t)n;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--queue-max", &val)) != 0) {
            if (r < 0 || eo_opt_int("serve", "--queue-max", val, 1, 1000000, &n) != 0)
                return 2;
            cfg.queue_max = (size_t)n;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--batch-max", &val)) != 0) {
            if (r < 0 || eo_opt_int("serve", "--batch-max", val, 1, 100000, &n) != 0)
                return 2;
            cfg.batch_max = (size_t)n;
        } else if ((r = eo_opt_value("serve", argc, argv, &i, "--log-level", &val)) != 0) {
            if (r < 0)
                return 2;
            if (parse_level(val, &cfg.log_level) != 0) {
                fprintf(stderr, "evenodds serve: --log-level: expected debug, info, warn or "
                                "error, got '%s'\n", val);
                return 2;
            }
        } else {
            fprintf(stderr, "evenodds serve: unknown option '%s' (see --help)\n", argv[i]);
            return 2;
        }
    }
    if (!cfg.db || !cfg.listen) {
        fputs("evenodds serve: --db FILE and --listen HOST:PORT are required (see --help)\n",
              stderr);
        return 2;
    }

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
