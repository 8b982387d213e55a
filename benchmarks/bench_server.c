/* bench_server — a load generator for a translation server's XML-RPC method `translate` at /RPC2
 * (fastsmt --server, Moses's or Moses2's server: the same request bodies), on loopback.
 *
 *   bench_server -p PORT -i INPUT [-host ADDR] [-name NAME] [-c CLIENTS] [-expect FILE]
 *                [-cli-words-s X] [-timeout S]
 *   bench_server -p PORT -i INPUT -rate R [-duration S] [-conns N] [-name NAME] [-timeout S]
 *   bench_server -p PORT -i INPUT -wait S
 *
 * Closed loop (the default): CLIENTS threads, each with one keep-alive HTTP/1.1 connection, send
 * the sentences of INPUT (one request each, every sentence once, each client taking the next one
 * as soon as its previous answer came) and print one line:
 *   bench=server name=NAME clients=C sentences=N words=W seconds=S sentences_s=X words_s=Y
 *     p50_ms=.. p95_ms=.. p99_ms=.. errors=E [mismatches=M] [cli_words_s=X ratio=Y/X]
 * words are INPUT's tokens; latency is from the request's first byte sent to its answer's last
 * byte read; errors count every request not answered 200 with a result (a fault, another status,
 * a connection error or a timeout); mismatches (with -expect FILE, one line per INPUT line) count
 * answers whose "text" differs from the file's line (white space at the ends ignored).
 * Overload (-rate R): an open loop sending R requests per second for S seconds (default 10) from N
 * connections (default 128), each request timed from the moment it was due, so that a server that
 * stalls the sender is charged for it; one line:
 *   bench=server_overload name=NAME rate=R seconds=S sent=N accepted=A refused=F errors=E
 *     refused_p50_ms=.. refused_p99_ms=.. accepted_p50_ms=.. accepted_p99_ms=.. accepted_sentences_s=..
 * refused: HTTP 503 or an XML-RPC fault (how a server says that its queue is full); errors: the
 * rest (another status, a connection error, a timeout).
 * -wait S: sends INPUT's first sentence until an answer is 200 with a result (the model is loaded),
 * for at most S seconds; exits 0 then, 1 otherwise.
 * Every request and answer is timed out after -timeout seconds (default 120), so every loop ends. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "smt_buf.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_words.h"

/* ---------------------------------------------------------------- input and requests */

typedef struct corpus {
    smt_buf *req;  /* the whole HTTP request of each sentence */
    char **expect; /* the expected "text" of each, or NULL */
    size_t *words; /* its token count */
    size_t n, total_words;
} corpus;

/* Appends s[0..n) with XML's special characters escaped. */
static int xml_escape(smt_buf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *e = s[i] == '&' ? "&amp;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;" : NULL;
        if (e ? smt_buf_puts(b, e) : smt_buf_putc(b, s[i]))
            return SMT_ERR_NOMEM;
    }
    return 0;
}

/* The POST /RPC2 request calling translate with {"text": sentence}. */
static int make_request(smt_buf *req, const char *host, int port, const char *s, size_t n)
{
    smt_buf body = {0};
    int rc = smt_buf_puts(&body, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<methodCall>"
                                 "<methodName>translate</methodName><params><param><value><struct>"
                                 "<member><name>text</name><value><string>");
    rc = rc ? rc : xml_escape(&body, s, n);
    rc = rc ? rc : smt_buf_puts(&body, "</string></value></member></struct></value></param></params>"
                                       "</methodCall>\r\n");
    rc = rc ? rc : smt_buf_printf(req, "POST /RPC2 HTTP/1.1\r\nHost: %s:%d\r\nUser-Agent: bench_server\r\n"
                                       "Content-Type: text/xml\r\nContent-Length: %zu\r\n\r\n",
                                  host, port, body.len);
    rc = rc ? rc : smt_buf_append(req, body.data, body.len);
    smt_buf_free(&body);
    return rc;
}

/* Reads every line of path; each gets *fn called. Returns 0 or prints the error and returns -1. */
static int read_lines(const char *path, int (*fn)(void *ctx, const char *line, size_t len), void *ctx)
{
    smt_lines *r;
    smt_err err;
    if (smt_lines_open(&r, path, 0, &err)) {
        fprintf(stderr, "bench_server: %s\n", err.msg);
        return -1;
    }
    char *line;
    size_t len;
    int rc;
    while ((rc = smt_lines_next(r, &line, &len, &err)) == 1)
        if (fn(ctx, line, len)) {
            rc = -1;
            break;
        }
    if (rc < 0)
        fprintf(stderr, "bench_server: %s\n", rc == -1 ? "out of memory" : err.msg);
    smt_lines_close(r);
    return rc < 0 ? -1 : 0;
}

typedef struct load_ctx {
    corpus *c;
    const char *host;
    int port;
    size_t req_cap, words_cap, line;
} load_ctx;

static int add_sentence(void *ctx, const char *line, size_t len)
{
    load_ctx *l = ctx;
    corpus *c = l->c;
    if (smt_grow(&c->req, &l->req_cap, c->n + 1, sizeof *c->req, 64) ||
        smt_grow(&c->words, &l->words_cap, c->n + 1, sizeof *c->words, 64))
        return -1;
    memset(&c->req[c->n], 0, sizeof c->req[c->n]);
    if (make_request(&c->req[c->n], l->host, l->port, line, len))
        return -1;
    c->words[c->n] = smt_words_count(line, len, SMT_WS_LINE);
    c->total_words += c->words[c->n];
    c->n++;
    return 0;
}

static int add_expect(void *ctx, const char *line, size_t len)
{
    load_ctx *l = ctx;
    if (l->line >= l->c->n) {
        l->line++;
        return 0;
    }
    char *s = strndup(line, len);
    if (!s)
        return -1;
    l->c->expect[l->line++] = s;
    return 0;
}

/* ---------------------------------------------------------------- HTTP over one connection */

typedef struct conn {
    int fd;
    int port;
    double timeout;
    smt_buf in;       /* bytes read: the answer's head and body */
    size_t body, end; /* the body's offset and the answer's end in `in` */
    int status;
} conn;

enum { RES_OK, RES_FAULT, RES_REFUSED, RES_HTTP, RES_IO }; /* what became of a request */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void conn_close(conn *k)
{
    if (k->fd >= 0)
        close(k->fd);
    k->fd = -1;
}

static int conn_open(conn *k, const char *host)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)k->port)};
    if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
        return -1;
    k->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (k->fd < 0)
        return -1;
    int one = 1;
    struct timeval tv = {.tv_sec = (time_t)k->timeout,
                         .tv_usec = (suseconds_t)((k->timeout - (double)(time_t)k->timeout) * 1e6)};
    setsockopt(k->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(k->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(k->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (connect(k->fd, (struct sockaddr *)&a, sizeof a)) {
        conn_close(k);
        return -1;
    }
    return 0;
}

/* The value of header `name` in the head h[0..n) (after the status line), or NULL; *len set. */
static const char *header(const char *h, size_t n, const char *name, size_t *len)
{
    size_t nl = strlen(name);
    const char *p = memchr(h, '\n', n), *end = h + n;
    while (p && p + 1 < end) {
        const char *line = p + 1, *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            break;
        if ((size_t)(eol - line) > nl && line[nl] == ':' && !strncasecmp(line, name, nl)) {
            const char *v = line + nl + 1, *e = eol;
            smt_trim(&v, &e, SMT_WS_LINE);
            *len = (size_t)(e - v);
            return v;
        }
        p = eol;
    }
    return NULL;
}

/* Reads one answer into k->in. Returns 0, 1 when the connection closed before its first byte
 * (a keep-alive connection the server had closed), or -1 (an error, a timeout, a malformed answer). */
static int read_answer(conn *k, int *close_after)
{
    smt_buf_clear(&k->in);
    size_t head = 0, need = 0;
    for (;;) {
        if (smt_buf_reserve(&k->in, 16384))
            return -1;
        ssize_t got = recv(k->fd, k->in.data + k->in.len, k->in.cap - k->in.len - 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            if (got == 0 && k->in.len == 0)
                return 1;
            if (got == 0 && head && !need) { /* no Content-Length: the body ends with the connection */
                k->end = k->in.len;
                *close_after = 1;
                return 0;
            }
            return -1;
        }
        k->in.len += (size_t)got;
        k->in.data[k->in.len] = '\0';
        if (!head) {
            char *e = memmem(k->in.data, k->in.len, "\r\n\r\n", 4);
            if (!e)
                continue;
            head = (size_t)(e - k->in.data) + 4;
            long long st;
            if (k->in.len < 12 || strncmp(k->in.data, "HTTP/1.", 7) ||
                smt_parse_ll(k->in.data + 9, 3, 100, 599, &st))
                return -1;
            k->status = (int)st;
            size_t vl;
            const char *v = header(k->in.data, head, "Transfer-Encoding", &vl);
            if (v && !(vl == 8 && !strncasecmp(v, "identity", 8)))
                return -1; /* chunked answers: no server under test sends them */
            v = header(k->in.data, head, "Connection", &vl);
            *close_after = v && vl == 5 && !strncasecmp(v, "close", 5);
            if (!strncmp(k->in.data, "HTTP/1.0", 8) && !(v && vl == 10 && !strncasecmp(v, "keep-alive", 10)))
                *close_after = 1;
            v = header(k->in.data, head, "Content-Length", &vl);
            long long cl;
            if (v) {
                if (smt_parse_ll(v, vl, 0, 1LL << 40, &cl))
                    return -1;
                need = head + (size_t)cl;
            }
            k->body = head;
        }
        if (need && k->in.len >= need) {
            k->end = need;
            return 0;
        }
    }
}

/* Sends req and reads its answer; reconnects once when a kept-alive connection turns out closed.
 * Returns RES_OK, RES_FAULT, RES_REFUSED, RES_HTTP or RES_IO; on RES_OK the answer is in k->in. */
static int round_trip(conn *k, const char *host, const smt_buf *req)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        int fresh = 0;
        if (k->fd < 0) {
            if (conn_open(k, host))
                return RES_IO;
            fresh = 1;
        }
        size_t off = 0;
        while (off < req->len) {
            ssize_t put = send(k->fd, req->data + off, req->len - off, MSG_NOSIGNAL);
            if (put < 0 && errno == EINTR)
                continue;
            if (put <= 0)
                break;
            off += (size_t)put;
        }
        int close_after = 0, rc = off == req->len ? read_answer(k, &close_after) : 1;
        if (rc == 1 && !fresh) { /* the server closed the idle connection: once more on a new one */
            conn_close(k);
            continue;
        }
        if (rc != 0) {
            conn_close(k);
            return RES_IO;
        }
        if (close_after)
            conn_close(k);
        if (k->status == 503)
            return RES_REFUSED;
        if (k->status != 200)
            return RES_HTTP;
        if (memmem(k->in.data + k->body, k->end - k->body, "<fault>", 7))
            return RES_FAULT;
        return RES_OK;
    }
    return RES_IO;
}

/* The "text" member of an XML-RPC result in k->in, entities decoded, into out. 0 or -1. */
static int answer_text(const conn *k, smt_buf *out)
{
    const char *b = k->in.data + k->body, *e = k->in.data + k->end;
    const char *p = memmem(b, (size_t)(e - b), "<name>text</name>", 17);
    if (!p)
        return -1;
    p = memmem(p, (size_t)(e - p), "<value>", 7);
    if (!p)
        return -1;
    p += 7;
    while (p < e && smt_is_sep((unsigned char)*p, SMT_WS_SPACE))
        p++;
    if ((size_t)(e - p) >= 9 && !strncmp(p, "<string/>", 9))
        return 0;
    if ((size_t)(e - p) >= 8 && !strncmp(p, "<string>", 8))
        p += 8;
    smt_buf_clear(out);
    static const struct {
        const char *ent;
        char c;
    } ents[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
    while (p < e && *p != '<') {
        size_t i = 0, n = sizeof ents / sizeof ents[0];
        if (*p == '&') {
            for (; i < n; i++) {
                size_t l = strlen(ents[i].ent);
                if ((size_t)(e - p) >= l && !strncmp(p, ents[i].ent, l)) {
                    if (smt_buf_putc(out, ents[i].c))
                        return -1;
                    p += l;
                    break;
                }
            }
            if (i == n && (size_t)(e - p) > 3 && p[1] == '#') {
                const char *semi = memchr(p, ';', (size_t)(e - p)), *digits = p + 2;
                char *stop;
                int hex = *digits == 'x' || *digits == 'X';
                long long cp = semi && semi > digits + hex ? strtoll(digits + hex, &stop, hex ? 16 : 10) : -1;
                if (cp < 0 || cp > 0x10FFFF || stop != semi)
                    return -1;
                unsigned char u[4];
                size_t ul = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
                if (ul == 1)
                    u[0] = (unsigned char)cp;
                else {
                    for (size_t j = ul - 1; j > 0; j--, cp >>= 6)
                        u[j] = (unsigned char)(0x80 | (cp & 0x3F));
                    u[0] = (unsigned char)((ul == 2 ? 0xC0 : ul == 3 ? 0xE0 : 0xF0) | cp);
                }
                if (smt_buf_append(out, u, ul))
                    return -1;
                p = semi + 1;
                continue;
            }
            if (i < n)
                continue;
        }
        if (smt_buf_putc(out, *p++))
            return -1;
    }
    return 0;
}

/* 1 when a and b are equal but for white space at their ends. */
static int same_text(const char *a, size_t an, const char *b, size_t bn)
{
    const char *ae = a + an, *be = b + bn;
    smt_trim(&a, &ae, SMT_WS_LINE);
    smt_trim(&b, &be, SMT_WS_LINE);
    return ae - a == be - b && !memcmp(a, b, (size_t)(ae - a));
}

/* ---------------------------------------------------------------- the runs */

typedef struct run {
    const corpus *c;
    const char *host;
    int port;
    double timeout;
    /* closed loop */
    atomic_size_t next;
    double *lat; /* per sentence */
    int *result;
    atomic_size_t mismatches;
    /* open loop */
    double rate, t0;
    size_t total;
} run;

static void *closed_worker(void *arg)
{
    run *r = arg;
    conn k = {.fd = -1, .port = r->port, .timeout = r->timeout};
    smt_buf text = {0};
    size_t i;
    while ((i = atomic_fetch_add(&r->next, 1)) < r->c->n) {
        double t = now_s();
        int res = round_trip(&k, r->host, &r->c->req[i]);
        r->lat[i] = now_s() - t;
        r->result[i] = res;
        if (res == RES_OK && r->c->expect && r->c->expect[i] &&
            (answer_text(&k, &text) || !same_text(text.data ? text.data : "", text.len, r->c->expect[i],
                                                  strlen(r->c->expect[i]))))
            atomic_fetch_add(&r->mismatches, 1);
    }
    conn_close(&k);
    smt_buf_free(&k.in);
    smt_buf_free(&text);
    return NULL;
}

static void *open_worker(void *arg)
{
    run *r = arg;
    conn k = {.fd = -1, .port = r->port, .timeout = r->timeout};
    size_t i;
    while ((i = atomic_fetch_add(&r->next, 1)) < r->total) {
        double due = r->t0 + (double)i / r->rate, wait = due - now_s();
        if (wait > 0) {
            struct timespec ts = {.tv_sec = (time_t)wait, .tv_nsec = (long)((wait - (double)(time_t)wait) * 1e9)};
            while (nanosleep(&ts, &ts) && errno == EINTR) {
            }
        }
        r->result[i] = round_trip(&k, r->host, &r->c->req[i % r->c->n]);
        r->lat[i] = now_s() - due;
    }
    conn_close(&k);
    smt_buf_free(&k.in);
    return NULL;
}

/* Runs n threads of fn over r. Returns 0 or -1 (a thread could not start). */
static int run_threads(run *r, size_t n, void *(*fn)(void *))
{
    pthread_t *t = calloc(n, sizeof *t);
    if (!t)
        return -1;
    size_t started = 0;
    for (; started < n; started++)
        if (pthread_create(&t[started], NULL, fn, r))
            break;
    for (size_t i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    if (started < n) {
        fprintf(stderr, "bench_server: cannot start %zu threads\n", n);
        return -1;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile (nearest rank) of the n sorted values v, in milliseconds; 0 when n is 0. */
static double pct_ms(const double *v, size_t n, double q)
{
    if (!n)
        return 0;
    size_t i = (size_t)(q * (double)n + 0.999999);
    i = i ? i - 1 : 0;
    return 1e3 * v[i < n ? i : n - 1];
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
    fputs("usage: bench_server -p PORT -i INPUT [-host ADDR] [-name NAME] [-c CLIENTS] [-expect FILE]\n"
          "                    [-cli-words-s X] [-timeout S]\n"
          "       bench_server -p PORT -i INPUT -rate R [-duration S] [-conns N] [-name NAME] [-timeout S]\n"
          "       bench_server -p PORT -i INPUT -wait S\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv)
{
    const char *host = "127.0.0.1", *input = NULL, *expect = NULL, *name = "server";
    int port = 0, clients = 1, conns = 128;
    double cli_words_s = 0, rate = 0, duration = 10, timeout = 120, wait = 0;
    smt_err err;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "-h") || !strcmp(a, "--help"))
            usage();
        if (!v)
            usage();
        if (!strcmp(a, "-p"))
            bad = smt_parse_int_arg("-p", v, 1, 65535, &port, &err);
        else if (!strcmp(a, "-host"))
            host = v;
        else if (!strcmp(a, "-i"))
            input = v;
        else if (!strcmp(a, "-name"))
            name = v;
        else if (!strcmp(a, "-c"))
            bad = smt_parse_int_arg("-c", v, 1, 4096, &clients, &err);
        else if (!strcmp(a, "-conns"))
            bad = smt_parse_int_arg("-conns", v, 1, 4096, &conns, &err);
        else if (!strcmp(a, "-expect"))
            expect = v;
        else if (!strcmp(a, "-cli-words-s"))
            bad = smt_parse_double_arg("-cli-words-s", v, 0, 1e12, &cli_words_s, &err);
        else if (!strcmp(a, "-rate"))
            bad = smt_parse_double_arg("-rate", v, 0.001, 1e6, &rate, &err);
        else if (!strcmp(a, "-duration"))
            bad = smt_parse_double_arg("-duration", v, 0.001, 3600, &duration, &err);
        else if (!strcmp(a, "-timeout"))
            bad = smt_parse_double_arg("-timeout", v, 0.001, 3600, &timeout, &err);
        else if (!strcmp(a, "-wait"))
            bad = smt_parse_double_arg("-wait", v, 0.001, 3600, &wait, &err);
        else {
            fprintf(stderr, "bench_server: unknown option %s\n", a);
            usage();
        }
        if (bad) {
            fprintf(stderr, "bench_server: %s\n", err.msg);
            return 2;
        }
    }
    if (!port || !input)
        usage();
    struct in_addr probe;
    if (inet_pton(AF_INET, host, &probe) != 1) {
        fprintf(stderr, "bench_server: -host %s: not an IPv4 address\n", host);
        return 2;
    }

    corpus c = {0};
    load_ctx l = {.c = &c, .host = host, .port = port};
    if (read_lines(input, add_sentence, &l))
        return 1;
    if (!c.n) {
        fprintf(stderr, "bench_server: %s: no sentences\n", input);
        return 1;
    }
    if (expect) {
        c.expect = calloc(c.n, sizeof *c.expect);
        if (!c.expect || read_lines(expect, add_expect, &l))
            return 1;
        if (l.line != c.n) {
            fprintf(stderr, "bench_server: %s has %zu lines, %s %zu\n", expect, l.line, input, c.n);
            return 1;
        }
    }

    int rc = 0;
    if (wait > 0) {
        conn k = {.fd = -1, .port = port, .timeout = timeout};
        double end = now_s() + wait;
        int res = RES_IO;
        while ((res = round_trip(&k, host, &c.req[0])) != RES_OK && now_s() < end)
            usleep(200000);
        conn_close(&k);
        smt_buf_free(&k.in);
        if (res != RES_OK)
            fprintf(stderr, "bench_server: no answer from %s:%d within %g s\n", host, port, wait);
        rc = res == RES_OK ? 0 : 1;
    } else if (rate == 0) {
        run r = {.c = &c, .host = host, .port = port, .timeout = timeout};
        r.lat = calloc(c.n, sizeof *r.lat);
        r.result = calloc(c.n, sizeof *r.result);
        if (!r.lat || !r.result)
            return 1;
        double t = now_s();
        if (run_threads(&r, (size_t)clients, closed_worker))
            return 1;
        t = now_s() - t;
        size_t errors = 0;
        for (size_t i = 0; i < c.n; i++)
            errors += r.result[i] != RES_OK;
        qsort(r.lat, c.n, sizeof *r.lat, cmp_double);
        double ws = (double)c.total_words / t;
        printf("bench=server name=%s clients=%d sentences=%zu words=%zu seconds=%.3f sentences_s=%.2f "
               "words_s=%.0f p50_ms=%.1f p95_ms=%.1f p99_ms=%.1f errors=%zu",
               name, clients, c.n, c.total_words, t, (double)c.n / t, ws, pct_ms(r.lat, c.n, 0.50),
               pct_ms(r.lat, c.n, 0.95), pct_ms(r.lat, c.n, 0.99), errors);
        if (expect)
            printf(" mismatches=%zu", atomic_load(&r.mismatches));
        if (cli_words_s > 0)
            printf(" cli_words_s=%.0f ratio=%.3f", cli_words_s, ws / cli_words_s);
        printf("\n");
        free(r.lat);
        free(r.result);
    } else {
        run r = {.c = &c, .host = host, .port = port, .timeout = timeout, .rate = rate};
        double want = rate * duration;
        r.total = want < 1 ? 1 : (size_t)want;
        r.lat = calloc(r.total, sizeof *r.lat);
        r.result = calloc(r.total, sizeof *r.result);
        double *acc = calloc(r.total, sizeof *acc), *ref = calloc(r.total, sizeof *ref);
        if (!r.lat || !r.result || !acc || !ref)
            return 1;
        r.t0 = now_s() + 0.05;
        size_t threads = (size_t)conns < r.total ? (size_t)conns : r.total;
        if (run_threads(&r, threads, open_worker))
            return 1;
        double t = now_s() - r.t0;
        size_t na = 0, nr = 0, ne = 0;
        for (size_t i = 0; i < r.total; i++) {
            if (r.result[i] == RES_OK)
                acc[na++] = r.lat[i];
            else if (r.result[i] == RES_REFUSED || r.result[i] == RES_FAULT)
                ref[nr++] = r.lat[i];
            else
                ne++;
        }
        qsort(acc, na, sizeof *acc, cmp_double);
        qsort(ref, nr, sizeof *ref, cmp_double);
        printf("bench=server_overload name=%s rate=%.1f seconds=%.3f sent=%zu accepted=%zu refused=%zu "
               "errors=%zu refused_p50_ms=%.1f refused_p99_ms=%.1f accepted_p50_ms=%.1f "
               "accepted_p99_ms=%.1f accepted_sentences_s=%.2f\n",
               name, rate, t, r.total, na, nr, ne, pct_ms(ref, nr, 0.50), pct_ms(ref, nr, 0.99),
               pct_ms(acc, na, 0.50), pct_ms(acc, na, 0.99), (double)na / t);
        free(acc);
        free(ref);
        free(r.lat);
        free(r.result);
    }
    for (size_t i = 0; i < c.n; i++) {
        smt_buf_free(&c.req[i]);
        if (c.expect)
            free(c.expect[i]);
    }
    free(c.req);
    free(c.expect);
    free(c.words);
    return rc;
}
