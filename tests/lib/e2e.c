/* End-to-end helpers: spawning the service and a small libcurl client. */
#include "e2e.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>

/* In a forked child before execv: the child gets SIGKILL when the test that started it dies, so
 * a failed assertion (cmocka jumps past the test's clean-up) or a killed test run leaves no
 * service behind. After any setuid, which clears the setting. */
static void die_with_parent(pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(125);
}

static const char *bin(void)
{
    const char *b = getenv("EO_BIN");
    return b && *b ? b : "./evenodds";
}

static void hexkey(char *out)
{
    unsigned char raw[32];
    FILE *f = fopen("/dev/urandom", "rb");
    size_t got = f ? fread(raw, 1, sizeof raw, f) : 0;
    if (f)
        fclose(f);
    for (size_t i = got; i < sizeof raw; i++)
        raw[i] = (unsigned char)rand();
    for (size_t i = 0; i < sizeof raw; i++)
        snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

int e2e_init(e2e_server *s)
{
    static int curl_ready;
    if (!curl_ready) {
        curl_global_init(CURL_GLOBAL_DEFAULT);
        curl_ready = 1;
    }
    memset(s, 0, sizeof *s);
    s->out_fd = -1;
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/eo-e2e-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(s->dir))
        return -1;
    snprintf(s->db, sizeof s->db, "%s/test.db", s->dir);
    snprintf(s->config, sizeof s->config, "%s/keys.env", s->dir);
    snprintf(s->log, sizeof s->log, "%s/stderr.log", s->dir);
    hexkey(s->server_key);
    hexkey(s->admin_key);
    int fd = open(s->config, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd < 0)
        return -1;
    char buf[256];
    int n = snprintf(buf, sizeof buf, "EVENODDS_SERVER_KEY=%s\nEVENODDS_ADMIN_KEY=%s\n",
                     s->server_key, s->admin_key);
    ssize_t w = write(fd, buf, (size_t)n);
    close(fd);
    return w == n ? 0 : -1;
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int e2e_start(e2e_server *s, const char *const *extra)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = bin();
    argv[n++] = "serve";
    argv[n++] = "--db";
    argv[n++] = s->db;
    argv[n++] = "--listen";
    argv[n++] = "127.0.0.1:0";
    argv[n++] = "--config";
    argv[n++] = s->config;
    for (size_t i = 0; extra && extra[i] && n < 31; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;

    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int lfd = open(s->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
        dup2(pfd[1], 1);
        if (lfd >= 0)
            dup2(lfd, 2);
        close(pfd[0]);
        close(pfd[1]);
        unsetenv("EVENODDS_SERVER_KEY");
        unsetenv("EVENODDS_ADMIN_KEY");
        if (s->run_uid > 0 && (setgid(s->run_uid) != 0 || setuid(s->run_uid) != 0))
            _exit(126);
        die_with_parent(parent);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    s->pid = pid;
    s->out_fd = pfd[0];

    /* Read stdout until the listening line (ASan builds start slowly: allow 30 s). */
    char line[512];
    size_t len = 0;
    long long deadline = now_ms() + 1000LL * (s->start_s ? s->start_s : 30);
    while (now_ms() < deadline) {
        struct pollfd p = {s->out_fd, POLLIN, 0};
        int pr = poll(&p, 1, 100);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        ssize_t r = read(s->out_fd, line + len, sizeof line - 1 - len);
        if (r <= 0)
            break; /* the child exited */
        len += (size_t)r;
        line[len] = '\0';
        const char *at = strstr(line, "listening on http://");
        if (at && strchr(at, '\n')) {
            at += strlen("listening on ");
            const char *nl = strchr(at, '\n');
            snprintf(s->url, sizeof s->url, "%.*s", (int)(nl - at), at);
            const char *colon = strrchr(s->url, ':');
            s->port = colon ? (unsigned)strtoul(colon + 1, NULL, 10) : 0;
            return s->port ? 0 : -1;
        }
        if (len >= sizeof line - 1)
            break;
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    s->pid = 0;
    close(s->out_fd);
    s->out_fd = -1;
    return -1;
}

int e2e_stop(e2e_server *s, int sig, int timeout_ms, int *status)
{
    if (!s->pid)
        return -1;
    kill(s->pid, sig);
    long long deadline = now_ms() + timeout_ms;
    int st = 0, rc = -1;
    for (;;) {
        pid_t w = waitpid(s->pid, &st, WNOHANG);
        if (w == s->pid) {
            rc = 0;
            break;
        }
        if (now_ms() > deadline) {
            kill(s->pid, SIGKILL);
            waitpid(s->pid, &st, 0);
            break;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    if (status)
        *status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    s->pid = 0;
    if (s->out_fd >= 0)
        close(s->out_fd);
    s->out_fd = -1;
    return rc;
}

void e2e_cleanup(e2e_server *s)
{
    if (s->pid)
        e2e_stop(s, SIGKILL, 5000, NULL);
    if (!s->dir[0])
        return;
    const char *names[] = {"test.db", "test.db-wal", "test.db-shm", "keys.env", "stderr.log"};
    char p[400];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(p, sizeof p, "%s/%s", s->dir, names[i]);
        unlink(p);
    }
    rmdir(s->dir);
    s->dir[0] = '\0';
}

int e2e_run(const char *const *argv_in, const char *env_kv, char *err, size_t errlen)
{
    const char *argv[32];
    size_t n = 0;
    argv[n++] = bin();
    for (size_t i = 1; argv_in[i] && n < 31; i++)
        argv[n++] = argv_in[i];
    argv[n] = NULL;
    int pfd[2];
    if (pipe(pfd) != 0)
        return -1;
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(pfd[1], 2);
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0)
            dup2(nul, 1);
        close(pfd[0]);
        close(pfd[1]);
        unsetenv("EVENODDS_SERVER_KEY");
        unsetenv("EVENODDS_ADMIN_KEY");
        if (env_kv)
            putenv((char *)env_kv);
        die_with_parent(parent);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t len = 0;
    char sink[256];
    for (;;) {
        char *dst = err && len + 1 < errlen ? err + len : sink;
        size_t room = err && len + 1 < errlen ? errlen - 1 - len : sizeof sink;
        ssize_t r = read(pfd[0], dst, room);
        if (r <= 0)
            break;
        if (dst != sink)
            len += (size_t)r;
    }
    if (err && errlen)
        err[len] = '\0';
    close(pfd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

typedef struct sink {
    char *p;
    size_t len;
} sink;

static size_t on_body(char *data, size_t sz, size_t nm, void *ud)
{
    sink *b = ud;
    size_t n = sz * nm;
    char *np = realloc(b->p, b->len + n + 1);
    if (!np)
        return 0;
    memcpy(np + b->len, data, n);
    b->len += n;
    np[b->len] = '\0';
    b->p = np;
    return n;
}

static void header_value(const char *line, size_t n, const char *name, char *out, size_t cap)
{
    size_t nl = strlen(name);
    if (n <= nl || strncasecmp(line, name, nl) != 0 || line[nl] != ':')
        return;
    const char *v = line + nl + 1;
    size_t vn = n - nl - 1;
    while (vn && (*v == ' '))
        v++, vn--;
    while (vn && (v[vn - 1] == '\r' || v[vn - 1] == '\n' || v[vn - 1] == ' '))
        vn--;
    snprintf(out, cap, "%.*s", (int)vn, v);
}

static size_t on_header(char *data, size_t sz, size_t nm, void *ud)
{
    e2e_resp *r = ud;
    size_t n = sz * nm;
    header_value(data, n, "Content-Type", r->ctype, sizeof r->ctype);
    header_value(data, n, "Allow", r->allow, sizeof r->allow);
    header_value(data, n, "Retry-After", r->retry_after, sizeof r->retry_after);
    header_value(data, n, "ETag", r->etag, sizeof r->etag);
    header_value(data, n, "Cache-Control", r->cache, sizeof r->cache);
    header_value(data, n, "Content-Security-Policy", r->csp, sizeof r->csp);
    return n;
}

int e2e_request(const e2e_server *s, const char *method, const char *path, const char *key,
                const char *ctype, const char *body, size_t len, const char *const *hdrs,
                e2e_resp *out)
{
    return e2e_request_at(s->url, 30, method, path, key, ctype, body, len, hdrs, out);
}

int e2e_request_at(const char *base, long timeout_s, const char *method, const char *path,
                   const char *key, const char *ctype, const char *body, size_t len,
                   const char *const *hdrs, e2e_resp *out)
{
    memset(out, 0, sizeof *out);
    CURL *c = curl_easy_init();
    if (!c)
        return -1;
    char url[2048], hb[400];
    snprintf(url, sizeof url, "%s%s", base, path);
    struct curl_slist *h = NULL;
    if (key) {
        snprintf(hb, sizeof hb, "Authorization: Bearer %s", key);
        h = curl_slist_append(h, hb);
    }
    if (body) {
        snprintf(hb, sizeof hb, "Content-Type: %s", ctype ? ctype : "application/json");
        h = curl_slist_append(h, hb);
    }
    h = curl_slist_append(h, "Expect:"); /* no 100-continue round trip */
    for (size_t i = 0; hdrs && hdrs[i]; i++)
        h = curl_slist_append(h, hdrs[i]);
    sink b = {NULL, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(c, CURLOPT_HEADERDATA, out);
    curl_easy_setopt(c, CURLOPT_TIMEOUT, timeout_s);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L);
    if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
    }
    CURLcode rc = curl_easy_perform(c);
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
    curl_slist_free_all(h);
    curl_easy_cleanup(c);
    out->body = b.p ? b.p : calloc(1, 1);
    out->len = b.len;
    if (rc != CURLE_OK && getenv("EO_E2E_DEBUG"))
        fprintf(stderr, "e2e: %s %s: %s\n", method, path, curl_easy_strerror(rc));
    return rc == CURLE_OK ? 0 : -1;
}

int e2e_call(const e2e_server *s, const char *method, const char *path, const char *key,
             const char *body, e2e_resp *out)
{
    return e2e_request(s, method, path, key, NULL, body, body ? strlen(body) : 0, NULL, out);
}

void e2e_resp_free(e2e_resp *r)
{
    free(r->body);
    r->body = NULL;
}

json_t *e2e_json(const e2e_resp *r)
{
    if (!r->body)
        return NULL;
    return json_loadb(r->body, r->len, 0, NULL);
}

bool e2e_is_error(const e2e_resp *r, const char *code)
{
    json_t *j = e2e_json(r);
    json_t *e = json_object_get(j, "error");
    const char *c = json_string_value(json_object_get(e, "code"));
    bool ok = json_is_object(e) && c && json_is_string(json_object_get(e, "message")) &&
              (!code || strcmp(code, c) == 0);
    json_decref(j);
    return ok;
}

char *e2e_read_log(const e2e_server *s)
{
    FILE *f = fopen(s->log, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *p = malloc(cap);
    size_t r;
    while (p && (r = fread(p + len, 1, cap - len - 1, f)) > 0) {
        len += r;
        if (cap - len < 2) {
            char *np = realloc(p, cap * 2);
            if (!np) {
                free(p);
                p = NULL;
                break;
            }
            p = np;
            cap *= 2;
        }
    }
    fclose(f);
    if (p)
        p[len] = '\0';
    return p;
}
