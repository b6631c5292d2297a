/* A small HTTP/1.1 fault-injection proxy on 127.0.0.1 for end-to-end tests: clients talk to the
 * proxy, the proxy talks to the real service, and a test switches the proxy between passing
 * requests through and failing them in the ways a network or a dead service fails.
 *
 * Minimal HTTP: headers up to "\r\n\r\n" (at most 64 KiB), then Content-Length bytes of body
 * (at most 16 MiB); a chunked message closes the client connection. Keep-alive is supported
 * (requests on one client connection are handled one after the other); each request gets its
 * own upstream connection. An accept thread plus one thread per client connection (at most 64;
 * more are closed at once). All sockets are close-on-exec, so a service forked while the proxy
 * runs holds none of them. */
#ifndef EO_TEST_PROXY_H
#define EO_TEST_PROXY_H

typedef enum {
    PROXY_PASS,       /* forward the request, relay the full response */
    PROXY_DROP_REPLY, /* forward the request, read the full response (the service has committed
                       * it), then close the client connection without sending a byte of it
                       * (only the proxy's own "100 Continue" if the request had Expect) */
    PROXY_HANG,       /* read the request, send nothing, hold the connection open until the
                       * next proxy_set_mode, the client closes, or proxy_stop */
    PROXY_DOWN        /* close each new connection at once without reading it (and a request
                       * on an open keep-alive connection without answering it) */
} proxy_mode;

typedef struct proxy proxy; /* opaque */

/* Listens on 127.0.0.1, port 0, and forwards to 127.0.0.1:@p upstream_port, in PASS mode.
 * 0, or -1 (nothing left behind). */
int proxy_start(unsigned upstream_port, proxy **out);

/* The port the proxy listens on. */
unsigned proxy_port(const proxy *p);

/* Forwards later requests to another port (the service restarted elsewhere). */
void proxy_set_upstream(proxy *p, unsigned port);

/* Sets the mode for the next @p count requests, then back to PASS (@p count > 0), or until
 * changed (@p count <= 0). A request takes the mode once its headers are read; a connection
 * closed at accept in DOWN mode counts as one request here. Releases hung connections. */
void proxy_set_mode(proxy *p, proxy_mode m, int count);

/* Requests whose headers were received so far. */
unsigned long proxy_requests(const proxy *p);

/* Responses read from the service and not relayed (DROP_REPLY). */
unsigned long proxy_dropped(const proxy *p);

/* Closes every socket, joins every thread and frees @p; returns within a few hundred ms, hung
 * connections or not. NULL is a no-op. */
void proxy_stop(proxy *p);

#endif
