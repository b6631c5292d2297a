/* Internals of the instance side of libevenodds-client (eo_instance.h), shared by instance.c
 * (the game thread's calls) and instance_worker.c (the HTTP worker). Names eo__inst_*. */
#ifndef EO_INSTANCE_INTERNAL_H
#define EO_INSTANCE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "evenodds/eo_instance.h"

/* Hex characters of a token or a join secret. */
#define EO__INST_SECRET_LEN 32

/* A session as polled, with its seats' join secrets. */
typedef struct eo__inst_session {
    eo_instance_session pub;
    char secret[EO_INSTANCE_SEATS_MAX][EO__INST_SECRET_LEN + 1];
    bool closing; /* the game closed it: its secrets are no longer accepted */
} eo__inst_session;

/* A backfill or close request waiting for the worker. */
typedef struct eo__inst_cmd {
    struct eo__inst_cmd *next;
    bool close;
    char session[EO_INSTANCE_SESSION_MAX + 1];
    char body[96]; /* backfill: the request's JSON */
} eo__inst_cmd;

struct eo_instance {
    eo_instance_config cfg; /* strings point to the copies below */
    char *url, *key, *id, *address, *region, *id_esc;
    char *queues[EO_INSTANCE_QUEUES];
    char *reg_body; /* the registration's JSON */
    pthread_t thread;
    bool thread_started;
    /* everything below is guarded by mu */
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the worker waits on it (CLOCK_MONOTONIC) */
    pthread_cond_t idle; /* eo_instance_flush() waits on it */
    bool stop, busy;
    bool registered;
    bool polled; /* a heartbeat answered since the registration */
    char token[EO__INST_SECRET_LEN + 1];
    eo__inst_cmd *head, *tail;
    eo__inst_session *tab; /* the sessions as last polled */
    size_t ntab;
    int64_t beat_at_ms, retry_at_ms; /* monotonic */
    long backoff_ms;
    eo_instance_event *ev; /* a ring of events for the game thread */
    size_t ev_head, ev_count, ev_cap;
};

/* Queues an event (mu held); dropped when out of memory. */
void eo__inst_event(eo_instance *in, const eo_instance_event *ev);
/* Queues a log event (mu held). */
void eo__inst_log(eo_instance *in, eo_client_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Whether the worker has nothing left to do but heartbeat (mu held). */
bool eo__inst_idle(const eo_instance *in);
/* The worker thread. */
void *eo__inst_worker(void *arg);
/* Parses an instance document's sessions into *tab (malloc'd, *n of them). 0 or EO_EPARSE /
 * EO_ENOMEM. */
int eo__inst_parse_sessions(const char *text, size_t len, eo__inst_session **tab, size_t *n);

#endif
