/* The client's state file: the report sequence and the queued reports, so that a game-server
 * restart loses nothing. A line-oriented text file, small (queue_slots reports of a few KiB),
 * rewritten whole and atomically after each change. The parser treats the file as untrusted
 * (a disk can hand back anything): every line is checked, and a bad file is refused whole. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "client/client_internal.h"

#define HEADER "evenodds-client-state 1"

int eo__client_state_init(eo__client_state *st, size_t cap, int64_t epoch)
{
    memset(st, 0, sizeof *st);
    if (cap < 1 || cap > 1024)
        return EO_EINVAL;
    st->ring = calloc(cap, sizeof *st->ring);
    if (st->ring == NULL)
        return EO_ENOMEM;
    st->cap = cap;
    st->epoch = epoch;
    st->next_seq = 1;
    return 0;
}

void eo__client_state_free(eo__client_state *st)
{
    if (st == NULL)
        return;
    while (st->count > 0)
        eo__client_state_pop(st);
    free(st->ring);
    memset(st, 0, sizeof *st);
}

eo__report *eo__client_state_at(eo__client_state *st, size_t i)
{
    return &st->ring[(st->head + i) % st->cap];
}

void eo__client_state_pop(eo__client_state *st)
{
    if (st->count == 0)
        return;
    eo__report *r = &st->ring[st->head];
    free(r->id);
    free(r->text);
    r->id = r->text = NULL;
    st->head = (st->head + 1) % st->cap;
    st->count--;
}

int eo__client_state_push(eo__client_state *st, char *id, char *text, char **dropped_id)
{
    *dropped_id = NULL;
    if (st->count == st->cap) {
        char *copy = strdup(st->ring[st->head].id);
        if (copy == NULL)
            return EO_ENOMEM;
        eo__client_state_pop(st);
        st->dropped++;
        *dropped_id = copy;
    }
    eo__report *r = eo__client_state_at(st, st->count);
    r->id = id;
    r->text = text;
    st->count++;
    return 0;
}

int eo__client_state_format(const eo__client_state *st, char **out, size_t *len)
{
    size_t cap = 128;
    for (size_t i = 0; i < st->count; i++) {
        const eo__report *r = &st->ring[(st->head + i) % st->cap];
        cap += strlen(r->id) + strlen(r->text) + 9;
    }
    char *buf = malloc(cap);
    if (buf == NULL)
        return EO_ENOMEM;
    int n = snprintf(buf, cap, HEADER "\nepoch %" PRId64 "\nnext %" PRIu64 "\ndropped %" PRIu64
                     "\n", st->epoch, st->next_seq, st->dropped);
    size_t at = (size_t)n;
    for (size_t i = 0; i < st->count; i++) {
        const eo__report *r = &st->ring[(st->head + i) % st->cap];
        n = snprintf(buf + at, cap - at, "report %s %s\n", r->id, r->text);
        at += (size_t)n;
    }
    *out = buf;
    *len = at;
    return 0;
}

static int fail(char *err, size_t errlen, size_t line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int fail(char *err, size_t errlen, size_t line, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        int n = snprintf(err, errlen, "line %zu: ", line);
        if (n >= 0 && (size_t)n < errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return EO_EPARSE;
}

/* A decimal number of at most 19 digits, the whole of [s, s + n). */
static bool parse_u63(const char *s, size_t n, uint64_t *out)
{
    if (n == 0 || n > 19)
        return false;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* "NAME VALUE" with the expected name. */
static bool parse_field(const char *line, size_t n, const char *name, uint64_t *out)
{
    size_t k = strlen(name);
    return n > k + 1 && memcmp(line, name, k) == 0 && line[k] == ' ' &&
           parse_u63(line + k + 1, n - k - 1, out);
}

/* "report ID TEXT": a valid id, and TEXT a JSON object whose "id" is ID. */
static int parse_report(const char *line, size_t n, size_t lineno, char **id, char **text,
                        char *err, size_t errlen)
{
    if (n < 7 || memcmp(line, "report ", 7) != 0)
        return fail(err, errlen, lineno, "expected \"report ID TEXT\"");
    const char *s = line + 7;
    const char *sp = memchr(s, ' ', n - 7);
    if (sp == NULL)
        return fail(err, errlen, lineno, "report without text");
    size_t idlen = (size_t)(sp - s);
    if (eo_id_check(s, idlen) != 0)
        return fail(err, errlen, lineno, "invalid report id");
    size_t tlen = n - 7 - idlen - 1;
    json_error_t jerr;
    json_t *o = json_loadb(sp + 1, tlen, JSON_REJECT_DUPLICATES, &jerr);
    const json_t *jid = json_is_object(o) ? json_object_get(o, "id") : NULL;
    bool ok = json_is_string(jid) && json_string_length(jid) == idlen &&
              memcmp(json_string_value(jid), s, idlen) == 0;
    json_decref(o);
    if (!ok)
        return fail(err, errlen, lineno, "report text is not a round record with its id");
    *id = strndup(s, idlen);
    *text = strndup(sp + 1, tlen);
    if (*id == NULL || *text == NULL) {
        free(*id);
        free(*text);
        return EO_ENOMEM;
    }
    return 0;
}

int eo__client_state_parse(const char *text, size_t len, size_t cap, eo__client_state *st,
                           char *err, size_t errlen)
{
    int rc = eo__client_state_init(st, cap, 0);
    if (rc != 0)
        return rc;
    uint64_t epoch = 0, next = 0, dropped = 0;
    size_t at = 0, lineno = 0;
    while (at < len) {
        const char *line = text + at;
        const char *nl = memchr(line, '\n', len - at);
        if (nl == NULL) {
            rc = fail(err, errlen, lineno + 1, "missing end of line (truncated file)");
            goto bad;
        }
        size_t n = (size_t)(nl - line);
        at += n + 1;
        lineno++;
        if (memchr(line, '\0', n) != NULL) {
            rc = fail(err, errlen, lineno, "NUL byte");
            goto bad;
        }
        switch (lineno) {
        case 1:
            if (n != strlen(HEADER) || memcmp(line, HEADER, n) != 0) {
                rc = fail(err, errlen, lineno, "not an evenodds client state file");
                goto bad;
            }
            continue;
        case 2:
            if (!parse_field(line, n, "epoch", &epoch)) {
                rc = fail(err, errlen, lineno, "expected \"epoch N\"");
                goto bad;
            }
            continue;
        case 3:
            if (!parse_field(line, n, "next", &next) || next == 0) {
                rc = fail(err, errlen, lineno, "expected \"next N\" with N >= 1");
                goto bad;
            }
            continue;
        case 4:
            if (!parse_field(line, n, "dropped", &dropped)) {
                rc = fail(err, errlen, lineno, "expected \"dropped N\"");
                goto bad;
            }
            continue;
        default:
            break;
        }
        char *id = NULL, *rtext = NULL, *gone = NULL;
        if ((rc = parse_report(line, n, lineno, &id, &rtext, err, errlen)) != 0)
            goto bad;
        if ((rc = eo__client_state_push(st, id, rtext, &gone)) != 0) {
            free(id);
            free(rtext);
            goto bad;
        }
        if (gone != NULL)
            st->overflow++;
        free(gone);
    }
    if (lineno < 4) {
        rc = fail(err, errlen, lineno + 1, "missing header lines");
        goto bad;
    }
    st->epoch = (int64_t)epoch;
    st->next_seq = next;
    st->dropped += dropped;
    return 0;
bad:
    eo__client_state_free(st);
    return rc;
}

static int io_fail(char *err, size_t errlen, const char *what, const char *path)
{
    if (err != NULL && errlen > 0)
        snprintf(err, errlen, "%s %s: %s", what, path, strerror(errno));
    return EO_EIO;
}

int eo__client_file_write(const char *path, const char *text, size_t len, char *err,
                          size_t errlen)
{
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", path) >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return io_fail(err, errlen, "cannot write", path);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return io_fail(err, errlen, "cannot create", tmp);
    size_t done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = errno;
            close(fd);
            unlink(tmp);
            errno = e;
            return io_fail(err, errlen, "cannot write", tmp);
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0 || close(fd) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return io_fail(err, errlen, "cannot sync", tmp);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return io_fail(err, errlen, "cannot rename to", path);
    }
    /* The rename is durable only once the folder is synced. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        snprintf(dir, sizeof dir, ".");
    else if (slash == dir)
        dir[1] = '\0';
    else
        *slash = '\0';
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)fsync(dfd);
        close(dfd);
    }
    return 0;
}

int eo__client_file_read(const char *path, size_t max, char **out, size_t *len, char *err,
                         size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return EO_ENOTFOUND;
        return io_fail(err, errlen, "cannot open", path);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return io_fail(err, errlen, "cannot stat", path);
    }
    if ((uintmax_t)sb.st_size > max) {
        close(fd);
        if (err != NULL && errlen > 0)
            snprintf(err, errlen, "%s: larger than %zu bytes", path, max);
        return EO_ELIMIT;
    }
    size_t size = (size_t)sb.st_size;
    char *buf = malloc(size + 1);
    if (buf == NULL) {
        close(fd);
        return EO_ENOMEM;
    }
    size_t done = 0;
    while (done < size) {
        ssize_t r = read(fd, buf + done, size - done);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return io_fail(err, errlen, "cannot read", path);
        }
        if (r == 0)
            break;
        done += (size_t)r;
    }
    close(fd);
    buf[done] = '\0';
    *out = buf;
    *len = done;
    return 0;
}
