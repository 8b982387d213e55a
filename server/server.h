/* server.h — a translation server over HTTP: Moses's XML-RPC protocol (POST /RPC2, method
 * "translate"), a JSON API (POST /translate), GET /health, GET /metrics (Prometheus text) and a
 * page for people (GET /). One dec_model is shared by a fixed set of worker threads, each with its
 * own dec_worker; requests wait in a bounded queue, and a request that finds it full is refused at
 * once. docs/server.md is the user guide.
 *
 * Lifecycle: srv_start binds and serves (/health answers 503 until a model is given), srv_serve
 * starts the workers on a loaded model, srv_drain stops accepting, finishes every accepted request
 * and stops; srv_free releases the server. Returns are 0 or a negative SMT_ERR_* code with err
 * filled (may be NULL). */
#ifndef SERVER_H
#define SERVER_H

#include <stddef.h>
#include <stdio.h>

#include "decoder.h"
#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The documented ranges of the limits (docs/server.md). */
#define SRV_MAX_QUEUE 100000
#define SRV_MAX_CONNECTIONS 100000
#define SRV_MAX_BODY (1u << 30)
#define SRV_MAX_SECONDS 86400

typedef struct srv_options {
    const char *host;       /* the address to bind (a name or a numeric IPv4/IPv6 address);
                             * NULL: every interface */
    int port;               /* 0: an ephemeral port (srv_port says which) */
    int queue;              /* requests waiting for a worker at most (default 64); past it a
                             * request is refused at once */
    size_t max_body;        /* request body bytes at most (default 1 MiB) */
    int max_words;          /* words of a sentence at most, 1 .. DEC_MAX_SENTENCE (default 200) */
    int max_nbest;          /* n-best size at most, 0 .. DEC_MAX_NBEST (default 100) */
    int max_connections;    /* open connections at most (default 256) */
    int request_seconds;    /* a request's time, queue and translation, at most (default 60) */
    int idle_seconds;       /* a connection that sends nothing this long is closed (default 30) */
    int drain_seconds;      /* srv_drain waits this long at most for accepted requests (default 120) */
    FILE *log;              /* one line per request (Moses's --server-log), or NULL */
    FILE *warn;             /* where the server's own messages go; NULL: stderr */
} srv_options;

void srv_options_default(srv_options *o);

typedef struct srv srv;

/* Binds and starts serving HTTP; until srv_serve, translation requests and /health answer 503.
 * Returns 0, SMT_ERR_ARG (an option outside its range), SMT_ERR_IO (the address cannot be bound)
 * or SMT_ERR_NOMEM. */
int srv_start(srv **out, const srv_options *o, smt_err *err);
/* The port bound. */
int srv_port(const srv *s);
/* Starts threads workers (0: one per CPU; each its own dec_worker) translating with m and what run says (its
 * unknown-word marking, -t and -print-alignment-info, resolved by dec_run_options_resolve); m
 * and run must outlive the server. Returns 0, SMT_ERR_NOMEM or what dec_worker_create returns. */
int srv_serve(srv *s, dec_model *m, const dec_run_options *run, int threads, smt_err *err);
/* Stops accepting connections (and answers 503 on open ones), waits until every accepted
 * request is answered (o->drain_seconds at most) and stops the HTTP server and the workers.
 * Returns 0, or SMT_ERR_LIMIT when requests were still running at the bound. */
int srv_drain(srv *s, smt_err *err);
void srv_free(srv *s);

#ifdef __cplusplus
}
#endif
#endif
