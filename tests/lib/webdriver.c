/* The W3C WebDriver client of webdriver.h. */
#include "webdriver.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "e2e.h"

/* One WebDriver command: @p method on base + @p path with @p body (NULL: none); its "value"
 * (new reference), or NULL with the error on stderr. */
static json_t *command(const wd *w, const char *method, const char *path, json_t *body)
{
    char *payload = body != NULL ? json_dumps(body, JSON_COMPACT) : NULL;
    e2e_resp r;
    int rc = e2e_request_at(w->base, 60, method, path, NULL, NULL, payload,
                            payload ? strlen(payload) : 0, NULL, &r);
    free(payload);
    json_t *doc = rc == 0 ? e2e_json(&r) : NULL;
    json_t *value = doc != NULL ? json_incref(json_object_get(doc, "value")) : NULL;
    if (rc != 0 || r.status != 200 || value == NULL) {
        fprintf(stderr, "webdriver %s %s: %s %ld %.400s\n", method, path,
                rc == 0 ? "HTTP" : "transfer failed", r.status, r.body ? r.body : "");
        json_decref(value);
        value = NULL;
    }
    json_decref(doc);
    e2e_resp_free(&r);
    return value;
}

/* A loopback port nobody listens on now. */
static unsigned free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    unsigned port = 0;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int start_driver(wd *w)
{
    char port[32];
    w->port = free_port();
    snprintf(port, sizeof port, "--port=%u", w->port);
    snprintf(w->base, sizeof w->base, "http://127.0.0.1:%u", w->port);
    w->driver = fork();
    if (w->driver < 0)
        return -1;
    if (w->driver == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul >= 0) {
            dup2(nul, 1);
            dup2(nul, 2);
        }
        execl("/usr/bin/chromedriver", "chromedriver", port, (char *)NULL);
        _exit(127);
    }
    for (int i = 0; i < 200; i++) { /* ready within 20 s */
        e2e_resp r;
        bool up = e2e_request_at(w->base, 2, "GET", "/status", NULL, NULL, NULL, 0, NULL, &r) == 0;
        e2e_resp_free(&r);
        if (up)
            return 0;
        sleep_ms(100);
    }
    fprintf(stderr, "webdriver: chromedriver did not start on port %u\n", w->port);
    return -1;
}

int wd_start(wd *w, int width, int height)
{
    memset(w, 0, sizeof *w);
    snprintf(w->profile, sizeof w->profile, "/tmp/eo-chromium-XXXXXX");
    if (mkdtemp(w->profile) == NULL || start_driver(w) != 0) {
        wd_stop(w);
        return -1;
    }
    char dir[300], size[64];
    snprintf(dir, sizeof dir, "--user-data-dir=%s", w->profile);
    snprintf(size, sizeof size, "--window-size=%d,%d", width, height);
    json_t *caps = json_pack(
        "{s:{s:{s:s,s:{s:s,s:[s,s,s,s,s,s,s,s,s,s,s]},s:{s:s}}}}", "capabilities", "alwaysMatch",
        "browserName", "chrome", "goog:chromeOptions", "binary", "/usr/bin/chromium", "args",
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--disable-dev-shm-usage", dir, size, "goog:loggingPrefs", "browser", "ALL");
    json_t *v = command(w, "POST", "/session", caps);
    json_decref(caps);
    const char *id = json_string_value(json_object_get(v, "sessionId"));
    if (id != NULL)
        snprintf(w->session, sizeof w->session, "%s", id);
    json_decref(v);
    if (w->session[0] == '\0') {
        wd_stop(w);
        return -1;
    }
    return wd_resize(w, width, height);
}

static void remove_tree(const char *dir)
{
    pid_t p = fork();
    if (p == 0) {
        execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
        _exit(127);
    }
    if (p > 0)
        waitpid(p, NULL, 0);
}

void wd_stop(wd *w)
{
    if (w->session[0] != '\0') {
        char path[160];
        snprintf(path, sizeof path, "/session/%s", w->session);
        json_decref(command(w, "DELETE", path, NULL));
        w->session[0] = '\0';
    }
    if (w->driver > 0) {
        kill(w->driver, SIGTERM);
        waitpid(w->driver, NULL, 0);
        w->driver = 0;
    }
    if (w->profile[0] != '\0') {
        remove_tree(w->profile);
        w->profile[0] = '\0';
    }
}

static json_t *session_command(wd *w, const char *method, const char *what, json_t *body)
{
    char path[256];
    snprintf(path, sizeof path, "/session/%s%s", w->session, what);
    return command(w, method, path, body);
}

json_t *wd_exec(wd *w, const char *script, json_t *args)
{
    json_t *body = json_pack("{s:s,s:o}", "script", script, "args",
                             args != NULL ? json_incref(args) : json_array());
    json_t *v = session_command(w, "POST", "/execute/sync", body);
    json_decref(body);
    return v;
}

bool wd_wait(wd *w, const char *script, int timeout_ms)
{
    for (int waited = 0; waited <= timeout_ms; waited += 50) {
        json_t *v = wd_exec(w, script, NULL);
        bool done = json_is_true(v);
        json_decref(v);
        if (done)
            return true;
        sleep_ms(50);
    }
    return false;
}

char wd_open(wd *w, const char *url, int timeout_ms)
{
    json_t *body = json_pack("{s:s}", "url", url);
    json_t *v = session_command(w, "POST", "/url", body);
    json_decref(body);
    if (v == NULL)
        return 0;
    json_decref(v);
    if (!wd_wait(w, "return ['ok','error'].includes(document.body && document.body.dataset.ready)",
                 timeout_ms))
        return 0;
    v = wd_exec(w, "return document.body.dataset.ready", NULL);
    char r = json_string_value(v) != NULL ? json_string_value(v)[0] : 0;
    json_decref(v);
    return r;
}

int wd_resize(wd *w, int width, int height)
{
    json_t *body = json_pack("{s:i,s:i}", "width", width, "height", height);
    json_t *v = session_command(w, "POST", "/window/rect", body);
    json_decref(body);
    json_decref(v);
    return v != NULL ? 0 : -1;
}

static int b64(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* Decodes base64 @p in into a new buffer (*len bytes). NULL when it is not base64. */
static unsigned char *unbase64(const char *in, size_t *len)
{
    size_t n = strlen(in);
    unsigned char *out = malloc(n / 4 * 3 + 3);
    unsigned acc = 0;
    int bits = 0;
    *len = 0;
    for (size_t i = 0; out != NULL && i < n && in[i] != '='; i++) {
        int v = b64((unsigned char)in[i]);
        if (v < 0) {
            free(out);
            return NULL;
        }
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[(*len)++] = (unsigned char)(acc >> bits);
        }
    }
    return out;
}

int wd_screenshot(wd *w, const char *path, bool full, int width, int height)
{
    if (full) {
        /* The window's size counts the browser's own bars: the page needs their height more. */
        json_t *h = wd_exec(w,
                            "return document.documentElement.scrollHeight + window.outerHeight - "
                            "window.innerHeight",
                            NULL);
        int want = json_is_integer(h) ? (int)json_integer_value(h) : height;
        json_decref(h);
        if (want > height && wd_resize(w, width, want < 6000 ? want : 6000) != 0)
            return -1;
    }
    json_t *v = session_command(w, "GET", "/screenshot", NULL);
    size_t len = 0;
    unsigned char *png = json_is_string(v) ? unbase64(json_string_value(v), &len) : NULL;
    json_decref(v);
    FILE *f = png != NULL ? fopen(path, "wb") : NULL;
    int rc = f != NULL && fwrite(png, 1, len, f) == len ? 0 : -1;
    if (f != NULL && fclose(f) != 0)
        rc = -1;
    free(png);
    if (full)
        wd_resize(w, width, height);
    return rc;
}

json_t *wd_logs(wd *w)
{
    json_t *body = json_pack("{s:s}", "type", "browser");
    json_t *v = session_command(w, "POST", "/se/log", body);
    json_decref(body);
    return v;
}
