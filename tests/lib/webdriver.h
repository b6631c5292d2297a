/* A small W3C WebDriver client for browser tests: Debian's chromedriver driving headless
 * Chromium (packages chromium and chromium-driver; scripts/deps.sh test installs them), over
 * its HTTP API with libcurl. No npm, no browser download. */
#ifndef EO_TEST_WEBDRIVER_H
#define EO_TEST_WEBDRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <jansson.h>

typedef struct wd {
    pid_t driver; /* chromedriver's pid, 0 when not running */
    unsigned port;
    char base[64];     /* "http://127.0.0.1:PORT" */
    char session[128]; /* the session id */
    char profile[256]; /* the browser's fresh user data directory (removed by wd_stop) */
} wd;

/* Starts chromedriver on a free loopback port and a headless Chromium session with the flags
 * known to work on the project's machines (a fresh profile, no background networking), the
 * window @p width x @p height. 0, or -1 with a message on stderr. */
int wd_start(wd *w, int width, int height);

/* Ends the session, stops chromedriver and removes the profile. Safe to call twice. */
void wd_stop(wd *w);

/* Opens @p url and waits (at most @p timeout_ms) until the page's script sets
 * document.body.dataset.ready to "ok" or "error"; returns that value's first letter ('o',
 * 'e'), or 0 on a time-out or a failure. */
char wd_open(wd *w, const char *url, int timeout_ms);

/* Runs @p script (a function body; arguments[] from @p args, a JSON array or NULL) in the page;
 * its return value as JSON (new reference), or NULL on an error (message on stderr). */
json_t *wd_exec(wd *w, const char *script, json_t *args);

/* Waits until @p script returns true (at most @p timeout_ms). true when it did. */
bool wd_wait(wd *w, const char *script, int timeout_ms);

/* Sets the window's size. 0 or -1. */
int wd_resize(wd *w, int width, int height);

/* Saves a PNG of the window to @p path; with @p full the window first grows to the page's height
 * (at most 6000 px) and then returns to @p width x @p height. 0 or -1. */
int wd_screenshot(wd *w, const char *path, bool full, int width, int height);

/* The browser console's entries since the last call (new reference: an array of {"level",
 * "message",…}), or NULL on a failure. */
json_t *wd_logs(wd *w);

#endif
