/* Raw TCP to the service under test, for what an HTTP library will not do: connect from a
 * chosen loopback source address, send malformed framing, send slowly, hold a connection idle. */
#ifndef EO_TEST_E2E_RAW_H
#define EO_TEST_E2E_RAW_H

#include <stdbool.h>
#include <stddef.h>

#include "e2e.h"

/* A TCP connection to @p s from source address @p src (an IPv4 literal such as "127.0.0.2";
 * NULL: any). The file descriptor, or -1. */
int e2e_raw_connect(const e2e_server *s, const char *src);

/* Writes all of @p text. 0, or -1 (the peer closed, or an error). */
int e2e_raw_send(int fd, const char *text);

/* Reads what arrives within @p timeout_ms, up to @p cap - 1 bytes (NUL-terminated), stopping
 * early when the peer closes (then *closed is true: an end of stream or a reset). Returns the
 * bytes read. */
size_t e2e_raw_read(int fd, char *buf, size_t cap, int timeout_ms, bool *closed);

/* Sends @p request on a new connection from @p src and reads until the peer closes or
 * @p timeout_ms passes. The answer text (malloc'd; "" when closed without one), or NULL when
 * the connection failed. */
char *e2e_raw_exchange(const e2e_server *s, const char *src, const char *request,
                       int timeout_ms);

/* The value of the /metrics line that begins with @p prefix (name and labels), or -1. */
double e2e_metric(const e2e_server *s, const char *prefix);

#endif
