/* Keys from a KEY=VALUE file and the environment, and the service defaults. Messages name the
 * setting and the file line, never a key's value. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "service/service.h"

void eo_service_config_default(eo_service_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->threads = 0;
    cfg->max_connections = 0; /* sized from the open-file limit at start */
    cfg->max_per_address = 64;
    cfg->header_timeout_s = 10;
    cfg->conn_timeout_s = 5;
    cfg->body_min_rate = 1024;
    cfg->body_max = 1u << 20;
    cfg->body_budget = (size_t)64 << 20;
    cfg->compute_threads = 0;
    cfg->compute_queue = 64;
    cfg->budget_max_ms = 250;
    cfg->refit_max = 1;
    cfg->min_free_bytes = (uint64_t)64 << 20;
    cfg->queue_max = 4096;
    cfg->batch_max = 512;
    cfg->drain_timeout_ms = 10000;
    cfg->mm_heartbeat_ms = 10000;
    cfg->mm_keep_s = 86400;
    cfg->log_level = EO_LOG_INFO;
}

static const char K_SERVER[] = "EVENODDS_SERVER_KEY";
static const char K_ADMIN[] = "EVENODDS_ADMIN_KEY";

/* Copies a key value after checking its shape. */
static int set_key(char *dst, const char *val, size_t n, const char *name, const char *where,
                   char *err, size_t errlen)
{
    if (n < EO_SERVICE_KEY_MIN || n > EO_SERVICE_KEY_MAX) {
        snprintf(err, errlen, "%s%s: a key must have %d to %d characters", where, name,
                 EO_SERVICE_KEY_MIN, EO_SERVICE_KEY_MAX);
        return EO_EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)val[i];
        if (c <= ' ' || c == 0x7f) {
            snprintf(err, errlen, "%s%s: a key cannot hold spaces or control characters", where,
                     name);
            return EO_EINVAL;
        }
    }
    memcpy(dst, val, n);
    dst[n] = '\0';
    return 0;
}

static int load_file(const char *path, eo_service_keys *keys, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    struct stat st;
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return EO_EIO;
    }
    if (fstat(fileno(f), &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        fclose(f);
        return EO_EIO;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen,
                 "%s: holds secrets but group or others may access it (mode %03o); "
                 "run: chmod 600 %s",
                 path, (unsigned)(st.st_mode & 0777), path);
        fclose(f);
        return EO_EINVAL;
    }
    char line[1024];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        size_t n = strlen(line);
        if (n == sizeof line - 1 && line[n - 1] != '\n') {
            snprintf(err, errlen, "%s:%d: line too long", path, lineno);
            rc = EO_EINVAL;
            break;
        }
        while (n && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' ||
                     line[n - 1] == '\t'))
            line[--n] = '\0';
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0' || *p == '#')
            continue;
        if (strncmp(p, "export ", 7) == 0)
            p += 7;
        char *eq = strchr(p, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected KEY=VALUE", path, lineno);
            rc = EO_EINVAL;
            break;
        }
        *eq = '\0';
        char *val = eq + 1;
        size_t vlen = strlen(val);
        /* Optional matching quotes, as shells write them. */
        if (vlen >= 2 && (val[0] == '"' || val[0] == '\'') && val[vlen - 1] == val[0]) {
            val++;
            vlen -= 2;
        }
        char where[300];
        snprintf(where, sizeof where, "%s:%d: ", path, lineno);
        if (strcmp(p, K_SERVER) == 0)
            rc = set_key(keys->server, val, vlen, K_SERVER, where, err, errlen);
        else if (strcmp(p, K_ADMIN) == 0)
            rc = set_key(keys->admin, val, vlen, K_ADMIN, where, err, errlen);
        else {
            snprintf(err, errlen, "%s:%d: unknown setting '%.64s' (known: %s, %s)", path,
                     lineno, p, K_SERVER, K_ADMIN);
            rc = EO_EINVAL;
        }
    }
    fclose(f);
    return rc;
}

int eo_service_keys_load(const char *config_path, eo_service_keys *keys, char *err,
                         size_t errlen)
{
    memset(keys, 0, sizeof *keys);
    int rc;
    if (config_path && (rc = load_file(config_path, keys, err, errlen)) != 0)
        goto fail;
    const char *ev;
    if ((ev = getenv(K_SERVER)) && *ev &&
        (rc = set_key(keys->server, ev, strlen(ev), K_SERVER, "environment: ", err, errlen)) != 0)
        goto fail;
    if ((ev = getenv(K_ADMIN)) && *ev &&
        (rc = set_key(keys->admin, ev, strlen(ev), K_ADMIN, "environment: ", err, errlen)) != 0)
        goto fail;
    if (!keys->server[0] || !keys->admin[0]) {
        snprintf(err, errlen,
                 "no %s%s%s set: give both keys in the --config file or the environment "
                 "(16 to 255 characters each)",
                 keys->server[0] ? "" : K_SERVER, !keys->server[0] && !keys->admin[0] ? " and " : "",
                 keys->admin[0] ? "" : K_ADMIN);
        rc = EO_EINVAL;
        goto fail;
    }
    if (strcmp(keys->server, keys->admin) == 0) {
        snprintf(err, errlen, "%s and %s must differ", K_SERVER, K_ADMIN);
        rc = EO_EINVAL;
        goto fail;
    }
    return 0;
fail:
    memset(keys, 0, sizeof *keys);
    return rc;
}
