/* server.c — the HTTP server (libmicrohttpd, a thread per connection), its routes, the bounded
 * queue and the translation workers, metrics and the request log (server.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xmlrpc-c/server.h>

#include "server.h"
#include "smt_buf.h"
#include "smt_threads.h"
#include "srv_proto.h"

extern const unsigned char srv_page[]; /* server/page.html, embedded at build time */
extern const size_t srv_page_len;

/* Which route a request took (the metrics' "api" label). */
enum { API_RPC2, API_JSON, API_HEALTH, API_METRICS, API_PAGE, API_OTHER, N_API };
static const char *const api_names[N_API] = {"rpc2", "json", "health", "metrics", "page", "other"};
/* The latency histogram's upper bounds in seconds (and +Inf). */
static const double buckets[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
#define N_BUCKETS (sizeof buckets / sizeof *buckets)

/* A translation request between its connection's thread and a worker. */
typedef struct job {
    json_t *params; /* owns req.text */
    srv_req req;
    json_t *result;
    srv_kind kind;
    char msg[256];
    int state;     /* 0 queued, 1 translating, 2 done */
    int abandoned; /* the connection stopped waiting (timeout): the worker frees the job */
    pthread_cond_t done;
} job;

typedef struct worker {
    struct srv *s;
    dec_worker *dw;
    pthread_t th;
    int started;
} worker;

struct srv {
    srv_options o;
    struct MHD_Daemon *d;
    int port;
    xmlrpc_registry *reg;
    int xmlrpc_inited;
    pthread_mutex_t mu;
    pthread_cond_t work, idle;
    job **q;
    int q_head, q_len;
    int ready, draining, stopping, active;
    dec_model *m;
    srv_show show;
    dec_run_options wopt;
    worker *workers;
    int n_workers;
    /* metrics, under mu */
    uint64_t requests[N_API], errors[SRV_N_KINDS], sentences, words;
    uint64_t hist[N_BUCKETS + 1], lat_count;
    double lat_sum;
    pthread_mutex_t log_mu;
};

/* One HTTP request on its connection: the body as it arrives. */
typedef struct conn_req {
    smt_buf body;
    int too_big;
    int answered; /* refused before its body: the rest of the body is discarded */
    struct timespec t0;
} conn_req;

void srv_options_default(srv_options *o)
{
    memset(o, 0, sizeof *o);
    o->queue = 64;
    o->max_body = 1u << 20;
    o->max_words = 200;
    o->max_nbest = 100;
    o->max_connections = 256;
    o->request_seconds = 60;
    o->idle_seconds = 30;
    o->drain_seconds = 120;
}

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static struct timespec deadline(int seconds)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    t.tv_sec += seconds;
    return t;
}

/* A condition variable whose timed waits take CLOCK_MONOTONIC deadlines. */
static int cond_init(pthread_cond_t *c)
{
    pthread_condattr_t a;
    if (pthread_condattr_init(&a))
        return -1;
    int rc = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) || pthread_cond_init(c, &a);
    pthread_condattr_destroy(&a);
    return rc ? -1 : 0;
}

static void job_free(job *j)
{
    json_decref(j->params);
    json_decref(j->result);
    pthread_cond_destroy(&j->done);
    free(j);
}

/* ---- the workers ---- */

/* Translates j with dw: its 1-best and n-best list as data, built into j->result. */
static void translate(srv *s, dec_worker *dw, job *j, dec_translation *best, dec_nbest *nb,
                      smt_buf *line)
{
    smt_err err;
    smt_err_clear(&err);
    const srv_req *r = &j->req;
    const dec_translation *b = best;
    int rc;
    if (r->nbest > 0) {
        double score;
        smt_buf_clear(line);
        rc = dec_translate_nbest(dw, r->text, r->len, 0, line, nb, (size_t)r->nbest, r->distinct,
                                 &score, &err);
        /* the list's first entry is the 1-best when it has its words, phrases and score (the
         * workers' lines carry the segmentation); else the 1-best is asked for on its own */
        b = NULL;
        if (!rc && nb->n) {
            smt_buf f = {0};
            int same = !dec_translation_format(&nb->entries[0].t, 1, &f) &&
                       smt_buf_putc(&f, '\n') == 0 && f.len == line->len &&
                       !memcmp(f.data, line->data, f.len) && nb->entries[0].t.score == score;
            smt_buf_free(&f);
            if (same)
                b = &nb->entries[0].t;
        }
        if (!rc && !b) {
            rc = dec_translate_data(dw, r->text, r->len, best, &err);
            b = best;
        }
    } else {
        rc = dec_translate_data(dw, r->text, r->len, best, &err);
    }
    if (rc) {
        j->kind = SRV_E_INTERNAL;
        snprintf(j->msg, sizeof j->msg, "%s", smt_err_text(&err, rc));
        return;
    }
    j->result = srv_result(s->m, &s->show, r, b, r->nbest > 0 ? nb : NULL);
    if (!j->result) {
        j->kind = SRV_E_INTERNAL;
        snprintf(j->msg, sizeof j->msg, "out of memory");
    }
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    srv *s = w->s;
    dec_translation best = {0};
    dec_nbest nb = {0};
    smt_buf line = {0};
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->q_len && !s->stopping)
            pthread_cond_wait(&s->work, &s->mu);
        if (!s->q_len)
            break;
        job *j = s->q[s->q_head];
        s->q_head = (s->q_head + 1) % s->o.queue;
        s->q_len--;
        if (j->abandoned) {
            job_free(j);
            continue;
        }
        j->state = 1;
        pthread_mutex_unlock(&s->mu);
        translate(s, w->dw, j, &best, &nb, &line);
        pthread_mutex_lock(&s->mu);
        j->state = 2;
        if (j->kind == SRV_OK) {
            s->sentences++;
            s->words += j->req.words;
        }
        if (j->abandoned)
            job_free(j);
        else
            pthread_cond_signal(&j->done);
    }
    pthread_mutex_unlock(&s->mu);
    dec_translation_free(&best);
    dec_nbest_free(&nb);
    smt_buf_free(&line);
    return NULL;
}

/* Runs one translation request: params (taken) read, queued, waited for. Returns the answer,
 * or NULL with *kind and msg. */
static json_t *run_request(srv *s, json_t *params, srv_kind *kind, char *msg, size_t cap)
{
    job *j = calloc(1, sizeof *j);
    if (!j || cond_init(&j->done)) {
        free(j);
        json_decref(params);
        *kind = SRV_E_INTERNAL;
        snprintf(msg, cap, "out of memory");
        return NULL;
    }
    j->params = params;
    *kind = srv_req_parse(params, s->o.max_words, s->o.max_nbest, &j->req, msg, cap);
    if (*kind != SRV_OK) {
        job_free(j);
        return NULL;
    }
    pthread_mutex_lock(&s->mu);
    if (!s->ready || s->draining || s->q_len == s->o.queue) {
        *kind = !s->ready ? SRV_E_LOADING : s->draining ? SRV_E_DRAINING : SRV_E_BUSY;
        snprintf(msg, cap, "%s", !s->ready  ? "the model is still loading; retry later"
                                 : s->draining ? "the server is shutting down"
                                               : "the server is busy (its queue is full); retry later");
        pthread_mutex_unlock(&s->mu);
        job_free(j);
        return NULL;
    }
    s->q[(s->q_head + s->q_len) % s->o.queue] = j;
    s->q_len++;
    s->active++;
    pthread_cond_signal(&s->work);
    struct timespec end = deadline(s->o.request_seconds);
    int rc = 0;
    while (j->state != 2 && rc != ETIMEDOUT)
        rc = pthread_cond_timedwait(&j->done, &s->mu, &end);
    json_t *res = NULL;
    if (j->state != 2) {
        j->abandoned = 1; /* the worker that takes it frees it */
        *kind = SRV_E_TIMEOUT;
        snprintf(msg, cap, "the request took longer than this server's limit (%d s)",
                 s->o.request_seconds);
    } else {
        res = j->result;
        j->result = NULL;
        *kind = j->kind;
        if (*kind != SRV_OK)
            snprintf(msg, cap, "%s", j->msg);
        job_free(j);
    }
    if (--s->active == 0)
        pthread_cond_broadcast(&s->idle);
    pthread_mutex_unlock(&s->mu);
    return res;
}

/* ---- XML-RPC: the method "translate" ---- */

typedef struct call_ctx {
    srv *s;
    srv_kind kind;
    int ran;
} call_ctx;

static xmlrpc_value *method_translate(xmlrpc_env *env, xmlrpc_value *params, void *server_info,
                                      void *call_info)
{
    call_ctx local = {server_info, SRV_OK, 0};
    call_ctx *cc = call_info ? call_info : &local;
    srv *s = server_info;
    char msg[512];
    cc->ran = 1;
    int n = xmlrpc_array_size(env, params);
    if (env->fault_occurred)
        return NULL;
    if (n != 1) {
        cc->kind = SRV_E_TYPE;
        xmlrpc_env_set_fault(env, srv_kind_fault(cc->kind),
                             "translate takes one parameter, a struct with \"text\"");
        return NULL;
    }
    xmlrpc_value *p;
    xmlrpc_array_read_item(env, params, 0, &p);
    if (env->fault_occurred)
        return NULL;
    json_t *jp = srv_xmlrpc_to_json(env, p, &cc->kind, msg, sizeof msg);
    xmlrpc_DECREF(p);
    if (env->fault_occurred)
        xmlrpc_env_clean(env), xmlrpc_env_init(env);
    json_t *res = jp ? run_request(s, jp, &cc->kind, msg, sizeof msg) : NULL;
    if (!res) {
        xmlrpc_env_set_fault(env, srv_kind_fault(cc->kind), msg);
        return NULL;
    }
    xmlrpc_value *v = srv_json_to_xmlrpc(env, res);
    json_decref(res);
    if (env->fault_occurred)
        cc->kind = SRV_E_INTERNAL;
    return v;
}

/* ---- HTTP ---- */

static void record(srv *s, struct MHD_Connection *c, const char *method, const char *url,
                   int api, srv_kind kind, unsigned status, double secs)
{
    pthread_mutex_lock(&s->mu);
    s->requests[api]++;
    if (kind != SRV_OK)
        s->errors[kind]++;
    if (api == API_RPC2 || api == API_JSON) {
        size_t b = 0;
        while (b < N_BUCKETS && secs > buckets[b])
            b++;
        s->hist[b]++;
        s->lat_count++;
        s->lat_sum += secs;
    }
    pthread_mutex_unlock(&s->mu);
    if (!s->o.log)
        return;
    char host[NI_MAXHOST] = "-";
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (ci && ci->client_addr)
        getnameinfo(ci->client_addr,
                    ci->client_addr->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                                                           : sizeof(struct sockaddr_in),
                    host, sizeof host, NULL, 0, NI_NUMERICHOST);
    const char *h = strncmp(host, "::ffff:", 7) || !strchr(host, '.') ? host : host + 7;
    time_t now = time(NULL);
    struct tm tm;
    char ts[32];
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%SZ", &tm);
    pthread_mutex_lock(&s->log_mu);
    fprintf(s->o.log, "%s %s \"%s %s\" %u %.6f %s\n", ts, h, method, url, status, secs,
            srv_kind_name(kind));
    fflush(s->o.log);
    pthread_mutex_unlock(&s->log_mu);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
                             const void *data, size_t len, int retry_after, int close_conn)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (retry_after)
        MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
    if (close_conn)
        MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result rc = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return rc;
}

static int busy_kind(srv_kind k)
{
    return k == SRV_E_BUSY || k == SRV_E_DRAINING || k == SRV_E_LOADING;
}

static enum MHD_Result json_error(struct MHD_Connection *c, srv_kind kind, const char *msg)
{
    json_t *e = json_pack("{s:s}", "error", msg);
    char *txt = e ? json_dumps(e, JSON_COMPACT) : NULL;
    json_decref(e);
    enum MHD_Result rc = reply(c, srv_kind_status(kind), "application/json", txt ? txt : "{}",
                               txt ? strlen(txt) : 2, busy_kind(kind), kind == SRV_E_DRAINING);
    free(txt);
    return rc;
}

static enum MHD_Result serve_json(srv *s, struct MHD_Connection *c, conn_req *cr, srv_kind *kind)
{
    char msg[512];
    json_error_t je;
    size_t ok = srv_utf8_valid(cr->body.data ? cr->body.data : "", cr->body.len);
    json_t *p = NULL;
    if (ok < cr->body.len) {
        *kind = SRV_E_UTF8;
        snprintf(msg, sizeof msg, "the body is not valid UTF-8 (byte %zu)", ok);
    } else if (!(p = json_loadb(cr->body.data ? cr->body.data : "", cr->body.len,
                                JSON_REJECT_DUPLICATES, &je))) {
        *kind = SRV_E_MALFORMED;
        snprintf(msg, sizeof msg, "malformed JSON: %s (line %d, column %d)", je.text, je.line,
                 je.column);
    }
    json_t *res = p ? run_request(s, p, kind, msg, sizeof msg) : NULL;
    if (!res)
        return json_error(c, *kind, msg);
    char *txt = json_dumps(res, JSON_COMPACT);
    json_decref(res);
    if (!txt) {
        *kind = SRV_E_INTERNAL;
        return json_error(c, *kind, "out of memory");
    }
    enum MHD_Result rc = reply(c, 200, "application/json", txt, strlen(txt), 0, 0);
    free(txt);
    return rc;
}

static enum MHD_Result serve_rpc2(srv *s, struct MHD_Connection *c, conn_req *cr, srv_kind *kind)
{
    size_t ok = srv_utf8_valid(cr->body.data ? cr->body.data : "", cr->body.len);
    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_mem_block *out = NULL;
    call_ctx cc = {s, SRV_OK, 0};
    if (ok < cr->body.len) {
        char msg[128];
        *kind = SRV_E_UTF8;
        snprintf(msg, sizeof msg, "the body is not valid UTF-8 (byte %zu)", ok);
        xmlrpc_env fault;
        xmlrpc_env_init(&fault);
        xmlrpc_env_set_fault(&fault, srv_kind_fault(*kind), msg);
        out = XMLRPC_MEMBLOCK_NEW(char, &env, 0);
        if (out)
            xmlrpc_serialize_fault(&env, out, &fault);
        if (out && env.fault_occurred) {
            XMLRPC_MEMBLOCK_FREE(char, out);
            out = NULL;
        }
        xmlrpc_env_clean(&fault);
    } else {
        xmlrpc_registry_process_call2(&env, s->reg, cr->body.data ? cr->body.data : "",
                                      cr->body.len, &cc, &out);
        *kind = cc.kind;
    }
    xmlrpc_env_clean(&env);
    if (!out) {
        *kind = SRV_E_INTERNAL;
        return reply(c, 500, "text/plain", "internal error\n", 15, 0, 0);
    }
    const char *x = XMLRPC_MEMBLOCK_CONTENTS(char, out);
    size_t n = XMLRPC_MEMBLOCK_SIZE(char, out);
    if (!cc.ran && *kind == SRV_OK && memmem(x, n, "<fault>", 7))
        *kind = SRV_E_MALFORMED; /* not XML-RPC, or another method's fault */
    enum MHD_Result rc = reply(c, 200, "text/xml", x, n, busy_kind(*kind),
                               *kind == SRV_E_DRAINING);
    XMLRPC_MEMBLOCK_FREE(char, out);
    return rc;
}

static enum MHD_Result serve_metrics(srv *s, struct MHD_Connection *c)
{
    smt_buf b = {0};
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    rc |= smt_buf_puts(&b, "# HELP fastsmt_requests_total HTTP requests by route.\n"
                           "# TYPE fastsmt_requests_total counter\n");
    for (int a = 0; a < N_API; a++)
        rc |= smt_buf_printf(&b, "fastsmt_requests_total{api=\"%s\"} %llu\n", api_names[a],
                             (unsigned long long)s->requests[a]);
    rc |= smt_buf_puts(&b, "# HELP fastsmt_errors_total Requests answered with an error, by kind.\n"
                           "# TYPE fastsmt_errors_total counter\n");
    for (int k = 1; k < SRV_N_KINDS; k++)
        rc |= smt_buf_printf(&b, "fastsmt_errors_total{kind=\"%s\"} %llu\n",
                             srv_kind_name((srv_kind)k), (unsigned long long)s->errors[k]);
    rc |= smt_buf_printf(&b,
                         "# HELP fastsmt_sentences_total Sentences translated.\n"
                         "# TYPE fastsmt_sentences_total counter\n"
                         "fastsmt_sentences_total %llu\n"
                         "# HELP fastsmt_words_total Source words translated.\n"
                         "# TYPE fastsmt_words_total counter\n"
                         "fastsmt_words_total %llu\n"
                         "# HELP fastsmt_queue_length Requests waiting for a worker.\n"
                         "# TYPE fastsmt_queue_length gauge\n"
                         "fastsmt_queue_length %d\n"
                         "# HELP fastsmt_queue_capacity Requests the queue holds at most.\n"
                         "# TYPE fastsmt_queue_capacity gauge\n"
                         "fastsmt_queue_capacity %d\n"
                         "# HELP fastsmt_in_flight Translation requests accepted and not yet answered.\n"
                         "# TYPE fastsmt_in_flight gauge\n"
                         "fastsmt_in_flight %d\n"
                         "# HELP fastsmt_request_seconds Translation requests' time, arrival to answer.\n"
                         "# TYPE fastsmt_request_seconds histogram\n",
                         (unsigned long long)s->sentences, (unsigned long long)s->words, s->q_len,
                         s->o.queue, s->active);
    uint64_t cum = 0;
    for (size_t i = 0; i <= N_BUCKETS; i++) {
        cum += s->hist[i];
        if (i < N_BUCKETS)
            rc |= smt_buf_printf(&b, "fastsmt_request_seconds_bucket{le=\"%g\"} %llu\n", buckets[i],
                                 (unsigned long long)cum);
        else
            rc |= smt_buf_printf(&b, "fastsmt_request_seconds_bucket{le=\"+Inf\"} %llu\n",
                                 (unsigned long long)cum);
    }
    rc |= smt_buf_printf(&b, "fastsmt_request_seconds_sum %.6f\nfastsmt_request_seconds_count %llu\n",
                         s->lat_sum, (unsigned long long)s->lat_count);
    pthread_mutex_unlock(&s->mu);
    enum MHD_Result r = rc ? reply(c, 500, "text/plain", "out of memory\n", 14, 0, 0)
                           : reply(c, 200, "text/plain; version=0.0.4", b.data, b.len, 0, 0);
    smt_buf_free(&b);
    return r;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **con_cls)
{
    (void)version;
    srv *s = cls;
    conn_req *cr = *con_cls;
    int post = !strcmp(method, MHD_HTTP_METHOD_POST);
    if (!cr) {
        if (!(cr = calloc(1, sizeof *cr)))
            return MHD_NO;
        clock_gettime(CLOCK_MONOTONIC, &cr->t0);
        *con_cls = cr;
        const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
        if (post && cl && strtoull(cl, NULL, 10) > s->o.max_body) {
            cr->too_big = cr->answered = 1; /* refused before the body is read */
            record(s, c, method, url, !strcmp(url, "/RPC2") ? API_RPC2 : API_JSON, SRV_E_TOO_BIG,
                   413, 0);
            return json_error(c, SRV_E_TOO_BIG, "the request body is over this server's limit");
        }
        return MHD_YES;
    }
    if (cr->answered) {
        *size = 0;
        return MHD_YES;
    }
    if (*size) {
        if (cr->too_big || cr->body.len + *size > s->o.max_body) {
            cr->too_big = 1;
            smt_buf_free(&cr->body);
        } else if (smt_buf_append(&cr->body, data, *size)) {
            return MHD_NO;
        }
        *size = 0;
        return MHD_YES;
    }
    int api = API_OTHER;
    srv_kind kind = SRV_OK;
    enum MHD_Result rc;
    int is_get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
    if (!strcmp(url, "/RPC2") || !strcmp(url, "/translate")) {
        api = url[1] == 'R' ? API_RPC2 : API_JSON;
        if (!post) {
            kind = SRV_E_NOT_FOUND;
            rc = json_error(c, kind, "use POST");
        } else if (cr->too_big) {
            kind = SRV_E_TOO_BIG;
            rc = json_error(c, kind, "the request body is over this server's limit");
        } else {
            rc = api == API_RPC2 ? serve_rpc2(s, c, cr, &kind) : serve_json(s, c, cr, &kind);
        }
    } else if (is_get && !strcmp(url, "/health")) {
        api = API_HEALTH;
        pthread_mutex_lock(&s->mu);
        int ok = s->ready && !s->draining, loading = !s->ready;
        pthread_mutex_unlock(&s->mu);
        rc = ok ? reply(c, 200, "text/plain", "ok\n", 3, 0, 0)
                : reply(c, 503, "text/plain", loading ? "loading\n" : "draining\n",
                        loading ? 8 : 9, 1, 0);
    } else if (is_get && !strcmp(url, "/metrics")) {
        api = API_METRICS;
        rc = serve_metrics(s, c);
    } else if (is_get && (!strcmp(url, "/") || !strcmp(url, "/index.html"))) {
        api = API_PAGE;
        rc = reply(c, 200, "text/html; charset=utf-8", srv_page, srv_page_len, 0, 0);
    } else {
        kind = SRV_E_NOT_FOUND;
        rc = json_error(c, kind, "no such path (POST /RPC2, POST /translate, GET /, /health, /metrics)");
    }
    record(s, c, method, url, api, kind, rc == MHD_YES ? srv_kind_status(kind) : 0,
           since(&cr->t0));
    return rc;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    conn_req *cr = *con_cls;
    if (cr) {
        smt_buf_free(&cr->body);
        free(cr);
        *con_cls = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    srv *s = cls;
    FILE *f = s->o.warn ? s->o.warn : stderr;
    pthread_mutex_lock(&s->log_mu);
    fputs("fastsmt: server: ", f);
    vfprintf(f, fmt, ap);
    pthread_mutex_unlock(&s->log_mu);
}

/* ---- lifecycle ---- */

int srv_start(srv **out, const srv_options *o, smt_err *err)
{
    *out = NULL;
    if (o->port < 0 || o->port > 65535 || o->queue < 1 || o->queue > SRV_MAX_QUEUE ||
        o->max_body < 1 || o->max_body > SRV_MAX_BODY || o->max_words < 1 ||
        o->max_words > DEC_MAX_SENTENCE || o->max_nbest < 0 || o->max_nbest > DEC_MAX_NBEST ||
        o->max_connections < 1 || o->max_connections > SRV_MAX_CONNECTIONS ||
        o->request_seconds < 1 || o->request_seconds > SRV_MAX_SECONDS || o->idle_seconds < 1 ||
        o->idle_seconds > SRV_MAX_SECONDS || o->drain_seconds < 0 ||
        o->drain_seconds > SRV_MAX_SECONDS)
        return smt_err_set(err, SMT_ERR_ARG, "server: an option is outside its range");
    srv *s = calloc(1, sizeof *s);
    if (!s)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    s->o = *o;
    s->q = calloc((size_t)o->queue, sizeof *s->q);
    pthread_mutex_init(&s->mu, NULL);
    pthread_mutex_init(&s->log_mu, NULL);
    pthread_cond_init(&s->work, NULL);
    cond_init(&s->idle);
    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_init(&env); /* the library's global state, before any thread uses it */
    s->xmlrpc_inited = !env.fault_occurred;
    xmlrpc_limit_set(XMLRPC_XML_SIZE_LIMIT_ID, o->max_body);
    if (!env.fault_occurred)
        s->reg = xmlrpc_registry_new(&env);
    if (!env.fault_occurred) {
        struct xmlrpc_method_info3 mi = {"translate", method_translate, s, 0, "S:S",
                                         "translates params.text (Moses's server)"};
        xmlrpc_registry_add_method3(&env, s->reg, &mi);
    }
    int failed = env.fault_occurred;
    xmlrpc_env_clean(&env);
    if (!s->q || failed) {
        srv_free(s);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    /* the address: the host's first, or every interface (IPv6 and IPv4 where there is IPv6) */
    struct addrinfo *ai = NULL;
    if (o->host) {
        struct addrinfo hints = {0};
        hints.ai_flags = AI_PASSIVE;
        hints.ai_socktype = SOCK_STREAM;
        int g = getaddrinfo(o->host, NULL, &hints, &ai);
        if (g) {
            srv_free(s);
            return smt_err_set(err, SMT_ERR_IO, "server: --server-host %s: %s", o->host,
                               gai_strerror(g));
        }
        if (ai->ai_family == AF_INET)
            ((struct sockaddr_in *)ai->ai_addr)->sin_port = htons((uint16_t)o->port);
        else if (ai->ai_family == AF_INET6)
            ((struct sockaddr_in6 *)ai->ai_addr)->sin6_port = htons((uint16_t)o->port);
    }
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD |
                     MHD_USE_ITC | MHD_USE_AUTO | MHD_USE_ERROR_LOG;
    for (int tries = 0; tries < 2 && !s->d; tries++) {
        unsigned f = flags;
        if (ai && ai->ai_family == AF_INET6)
            f |= MHD_USE_IPv6;
        else if (!ai && tries == 0)
            f |= MHD_USE_DUAL_STACK;
        else if (!ai && tries == 1)
            f &= ~(unsigned)MHD_USE_DUAL_STACK;
        s->d = MHD_start_daemon(
            f, (uint16_t)o->port, NULL, NULL, on_request, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log,
            s, MHD_OPTION_CONNECTION_LIMIT, (unsigned)o->max_connections,
            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)o->idle_seconds,
            MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
            MHD_OPTION_SOCK_ADDR, ai ? ai->ai_addr : NULL, MHD_OPTION_END);
        if (ai)
            break;
    }
    if (ai)
        freeaddrinfo(ai);
    if (!s->d) {
        int e = errno;
        srv_free(s);
        return smt_err_set(err, SMT_ERR_IO, "server: cannot listen on %s port %d: %s",
                           o->host ? o->host : "every interface", o->port, strerror(e));
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : o->port;
    *out = s;
    return 0;
}

int srv_port(const srv *s) { return s->port; }

int srv_serve(srv *s, dec_model *m, const dec_run_options *run, int threads, smt_err *err)
{
    s->m = m;
    s->show.segmentation = run->report_segmentation > 0;
    s->show.word_align = run->print_alignment > 0;
    /* the workers' own lines carry the segmentation and nothing after the words */
    s->wopt = *run;
    s->wopt.report_segmentation = 1;
    s->wopt.print_alignment = 0;
    s->wopt.output_hypo_score = 0;
    s->wopt.nbest_segmentation = 0;
    s->wopt.nbest_alignment = 0;
    if (threads < 1)
        threads = (int)smt_cpu_count();
    s->workers = calloc((size_t)threads, sizeof *s->workers);
    if (!s->workers)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (int i = 0; i < threads; i++) {
        worker *w = &s->workers[i];
        w->s = s;
        int rc = dec_worker_create(&w->dw, m, err);
        if (!rc)
            rc = dec_worker_set_options(w->dw, &s->wopt, err);
        if (!rc && pthread_create(&w->th, NULL, worker_main, w))
            rc = smt_err_set(err, SMT_ERR_NOMEM, "server: cannot start a worker thread");
        s->n_workers = i + 1;
        if (rc)
            return rc;
        w->started = 1;
    }
    pthread_mutex_lock(&s->mu);
    s->ready = 1;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int srv_drain(srv *s, smt_err *err)
{
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    s->draining = 1;
    pthread_mutex_unlock(&s->mu);
    if (s->d) {
        MHD_socket fd = MHD_quiesce_daemon(s->d);
        if (fd != MHD_INVALID_SOCKET)
            close(fd);
    }
    pthread_mutex_lock(&s->mu);
    struct timespec end = deadline(s->o.drain_seconds);
    int w = 0;
    while (s->active && w != ETIMEDOUT)
        w = pthread_cond_timedwait(&s->idle, &s->mu, &end);
    if (s->active)
        rc = smt_err_set(err, SMT_ERR_LIMIT, "server: %d requests still running after %d s",
                         s->active, s->o.drain_seconds);
    pthread_mutex_unlock(&s->mu);
    if (s->d) {
        MHD_stop_daemon(s->d); /* every connection's thread ends once its request is answered */
        s->d = NULL;
    }
    pthread_mutex_lock(&s->mu);
    s->stopping = 1;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->mu);
    for (int i = 0; i < s->n_workers; i++)
        if (s->workers[i].started) {
            pthread_join(s->workers[i].th, NULL);
            s->workers[i].started = 0;
        }
    return rc;
}

void srv_free(srv *s)
{
    if (!s)
        return;
    if (s->d || s->n_workers)
        srv_drain(s, NULL);
    for (int i = 0; i < s->n_workers; i++)
        dec_worker_free(s->workers[i].dw);
    free(s->workers);
    while (s->q_len) { /* abandoned jobs no worker took */
        job_free(s->q[s->q_head]);
        s->q_head = (s->q_head + 1) % s->o.queue;
        s->q_len--;
    }
    if (s->reg)
        xmlrpc_registry_free(s->reg);
    if (s->xmlrpc_inited)
        xmlrpc_term();
    free(s->q);
    pthread_mutex_destroy(&s->mu);
    pthread_mutex_destroy(&s->log_mu);
    pthread_cond_destroy(&s->work);
    pthread_cond_destroy(&s->idle);
    free(s);
}
