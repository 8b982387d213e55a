/* threaded_server.c — fastsmt --server as a process, driven over HTTP: every field of Moses's
 * XML-RPC answer and of the JSON answer equals the command line's output for the same sentence
 * and flags, with 16 clients at once; each refused request (malformed, wrong types, no text, bad
 * UTF-8, empty, too big, too long, unknown key, queue full) is an error naming the problem and the
 * server goes on; clients that hang up disturb nothing; SIGTERM with requests in flight answers
 * every accepted one correctly and exits 0. A plain program (tharness.h) so that CI runs it under
 * TSan, where the server binary is instrumented too. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xmlrpc-c/base.h>

#include "srv_proto.h"
#include "tharness.h"
#include "testutil.h"

extern char **environ;

#define NB 5 /* the n-best size the requests ask for */

static char *ini_path, *fastsmt_bin;
static char *sent[16];
static size_t n_sent;

/* ---- the command line's answers ---- */

/* One n-best line's fields. */
typedef struct nb_line {
    char *words, *feats, *total, *seg, *align;
} nb_line;

typedef struct expect {
    char *plain, *seg;  /* the 1-best without and with -t */
    char *walign;       /* -alignment-output-file's line */
    nb_line nb[2][NB]; /* the n-best list, and the distinct one */
    size_t n_nb[2];
} expect;
static expect want[16];

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    memcpy(d, s, n);
    d[n] = 0;
    return d;
}

/* Runs fastsmt with args over the sentences; returns its standard output. */
static char *run_cli(const char *dir, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' -f '%s' -v 0 %s < '%s/in.txt' > '%s/out.txt'", fastsmt_bin,
             ini_path, args, dir, dir);
    if (system(cmd) != 0)
        return NULL;
    char *p = tu_join(dir, "out.txt");
    char *t = tu_read_file(p, NULL);
    free(p);
    return t;
}

/* The i-th line of text (without its newline), malloc'ed. */
static char *line_of(const char *text, size_t i)
{
    const char *p = text;
    for (size_t k = 0; k < i && p; k++)
        if ((p = strchr(p, '\n')))
            p++;
    if (!p)
        return NULL;
    const char *e = strchr(p, '\n');
    return dupn(p, e ? (size_t)(e - p) : strlen(p));
}

/* The n-best lines of nb into want[id].nb[d]. */
static void read_nbest(const char *nb, int d)
{
    for (size_t k = 0;; k++) {
        char *l = line_of(nb, k);
        if (!l || !*l) {
            free(l);
            break;
        }
        char *f[6] = {0};
        size_t nf = 0;
        char *s = l;
        while (nf < 6) {
            char *e = strstr(s, " ||| ");
            f[nf++] = e ? dupn(s, (size_t)(e - s)) : strdup(s);
            if (!e)
                break;
            s = e + 5;
        }
        size_t id = (size_t)atoi(f[0]);
        if (id < n_sent && want[id].n_nb[d] < NB && nf >= 4) {
            nb_line *n = &want[id].nb[d][want[id].n_nb[d]++];
            n->words = dupn(f[1], strlen(f[1]));
            n->feats = f[2], n->total = f[3];
            n->seg = nf > 4 ? f[4] : strdup("");
            n->align = nf > 5 ? f[5] : strdup("");
            f[2] = f[3] = f[4] = f[5] = NULL;
        }
        for (size_t j = 0; j < 6; j++)
            free(f[j]);
        free(l);
    }
}

static int load_expected(const char *dir)
{
    smt_buf in = {0};
    for (size_t i = 0; i < n_sent; i++)
        smt_buf_printf(&in, "%s\n", sent[i]);
    char *p = tu_join(dir, "in.txt");
    tu_write_file(p, in.data, in.len);
    free(p);
    smt_buf_free(&in);
    char a[1024], b[1024];
    snprintf(a, sizeof a, "-alignment-output-file '%s/al.txt'", dir);
    snprintf(b, sizeof b, "-t -n-best-list '%s/nb.txt' %d -include-segmentation-in-n-best "
                          "-print-alignment-info-in-n-best", dir, NB);
    char *plain = run_cli(dir, a), *seg = run_cli(dir, b);
    snprintf(b, sizeof b, "-t -n-best-list '%s/nbd.txt' %d distinct "
                          "-include-segmentation-in-n-best -print-alignment-info-in-n-best", dir, NB);
    char *segd = run_cli(dir, b);
    char *alp = tu_join(dir, "al.txt"), *nbp = tu_join(dir, "nb.txt"), *nbdp = tu_join(dir, "nbd.txt");
    char *al = tu_read_file(alp, NULL), *nb = tu_read_file(nbp, NULL), *nbd = tu_read_file(nbdp, NULL);
    free(alp);
    free(nbp);
    free(nbdp);
    if (!plain || !seg || !segd || !al || !nb || !nbd) {
        free(plain), free(seg), free(segd), free(al), free(nb), free(nbd);
        return -1;
    }
    for (size_t i = 0; i < n_sent; i++) {
        want[i].plain = line_of(plain, i);
        want[i].seg = line_of(seg, i);
        want[i].walign = line_of(al, i);
    }
    read_nbest(nb, 0);
    read_nbest(nbd, 1);
    free(plain);
    free(seg);
    free(al);
    free(nb);
    free(nbd);
    free(segd);
    return 0;
}

/* ---- checking an answer ---- */

/* Trailing blanks off, for alignment lines ("0-0 1-1 "). */
static void rtrim(char *s)
{
    size_t n = strlen(s);
    while (n && s[n - 1] == ' ')
        s[--n] = 0;
}

static char *words_align(const json_t *a)
{
    smt_buf b = {0};
    smt_buf_puts(&b, "");
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *o = json_array_get(a, i);
        smt_buf_printf(&b, "%lld-%lld ", (long long)json_integer_value(json_object_get(o, "source-word")),
                       (long long)json_integer_value(json_object_get(o, "target-word")));
    }
    rtrim(b.data);
    return b.data;
}

/* The phrase alignment as -include-segmentation-in-n-best prints it. */
static char *phrase_align(const json_t *a)
{
    smt_buf b = {0};
    smt_buf_puts(&b, "");
    for (size_t i = 0; i < json_array_size(a); i++) {
        const json_t *o = json_array_get(a, i);
        long long ss = json_integer_value(json_object_get(o, "src-start"));
        long long se = json_integer_value(json_object_get(o, "src-end"));
        long long ts = json_integer_value(json_object_get(o, "tgt-start"));
        long long te = json_integer_value(json_object_get(o, "tgt-end"));
        smt_buf_printf(&b, ss == se ? "%lld" : "%lld-%lld", ss, se);
        smt_buf_printf(&b, te <= ts ? "=%lld " : "=%lld-%lld ", ts, te);
    }
    rtrim(b.data);
    return b.data;
}

/* 1 when res (an answer to sentence i; full: align, word-align, n-best with scores asked for,
 * 2: a distinct n-best list) equals the command line's; why says what differs. */
static int answer_ok(const json_t *res, size_t i, int full, char *why, size_t cap)
{
    const expect *w = &want[i];
    const int d = full == 2;
    const char *text = json_string_value(json_object_get(res, "text"));
    snprintf(why, cap, "sentence %zu", i);
    if (!text || strcmp(text, full ? w->seg : w->plain)) {
        snprintf(why, cap, "sentence %zu: text '%s', want '%s'", i, text ? text : "(none)",
                 full ? w->seg : w->plain);
        return 0;
    }
    if (!full)
        return json_object_size(res) == 1;
    char *wa = words_align(json_object_get(res, "word-align"));
    char *ww = strdup(w->walign);
    rtrim(ww);
    int ok = !strcmp(wa, ww);
    if (!ok)
        snprintf(why, cap, "sentence %zu: word-align '%s', want '%s'", i, wa, ww);
    free(wa);
    free(ww);
    const json_t *nb = json_object_get(res, "nbest");
    if (ok && json_array_size(nb) != w->n_nb[d]) {
        snprintf(why, cap, "sentence %zu: %zu n-best entries, want %zu", i, json_array_size(nb),
                 w->n_nb[d]);
        ok = 0;
    }
    char *pa = phrase_align(json_object_get(res, "align"));
    if (ok && w->n_nb[d] && strcmp(pa, w->nb[d][0].seg)) {
        snprintf(why, cap, "sentence %zu: align '%s', want '%s'", i, pa, w->nb[d][0].seg);
        ok = 0;
    }
    free(pa);
    for (size_t k = 0; ok && k < w->n_nb[d]; k++) {
        const json_t *e = json_array_get(nb, k);
        const nb_line *n = &w->nb[d][k];
        const char *hyp = json_string_value(json_object_get(e, "hyp"));
        const char *fv = json_string_value(json_object_get(e, "fvals"));
        char total[64];
        snprintf(total, sizeof total, "%g", json_real_value(json_object_get(e, "totalScore")));
        char *ea = phrase_align(json_object_get(e, "align"));
        char *ew = words_align(json_object_get(e, "word-align"));
        char *nw = strdup(n->align);
        rtrim(nw);
        if (!hyp || strcmp(hyp, n->words))
            snprintf(why, cap, "sentence %zu, hyp %zu: '%s', want '%s'", i, k, hyp ? hyp : "", n->words), ok = 0;
        else if (!fv || fv[0] != ' ' || strcmp(fv + 1, n->feats))
            snprintf(why, cap, "sentence %zu, hyp %zu: fvals '%s', want ' %s'", i, k, fv ? fv : "", n->feats), ok = 0;
        else if (strcmp(total, n->total))
            snprintf(why, cap, "sentence %zu, hyp %zu: totalScore %s, want %s", i, k, total, n->total), ok = 0;
        else if (strcmp(ea, n->seg) || strcmp(ew, nw))
            snprintf(why, cap, "sentence %zu, hyp %zu: align '%s' / '%s', want '%s' / '%s'", i, k, ea, ew, n->seg, nw), ok = 0;
        free(ea);
        free(ew);
        free(nw);
    }
    return ok;
}

/* ---- a server process ---- */

typedef struct server {
    pid_t pid;
    int port, err_fd;
} server;

static int start_server(server *s, const char *const *extra)
{
    const char *argv[32] = {fastsmt_bin, "-f", ini_path, "--server", "--server-port", "0"};
    size_t n = 6;
    for (size_t i = 0; extra && extra[i]; i++)
        argv[n++] = extra[i];
    argv[n] = NULL;
    int fd[2];
    if (pipe(fd))
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    int rc = posix_spawn(&s->pid, fastsmt_bin, &fa, NULL, (char *const *)argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc) {
        close(fd[0]);
        return -1;
    }
    s->err_fd = fd[0];
    s->port = -1;
    /* read stderr until "server ready" (the port comes first) */
    char buf[4096];
    size_t len = 0;
    for (;;) {
        ssize_t r = read(fd[0], buf + len, sizeof buf - 1 - len);
        if (r <= 0)
            break;
        len += (size_t)r;
        buf[len] = 0;
        const char *p = strstr(buf, "server listening on port ");
        if (p && s->port < 0)
            s->port = atoi(p + strlen("server listening on port "));
        if (strstr(buf, "server ready"))
            return s->port > 0 ? 0 : -1;
    }
    fprintf(stderr, "server did not start: %s\n", buf);
    return -1;
}

/* Sends SIGTERM and waits; returns the exit status (-1: not an exit) with stderr's rest in log. */
static int stop_server(server *s, char **log)
{
    kill(s->pid, SIGTERM);
    smt_buf b = {0};
    char buf[4096];
    ssize_t r;
    while ((r = read(s->err_fd, buf, sizeof buf)) > 0)
        smt_buf_append(&b, buf, (size_t)r);
    smt_buf_putc(&b, 0);
    close(s->err_fd);
    int st;
    waitpid(s->pid, &st, 0);
    *log = b.data;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- HTTP ---- */

typedef struct reply {
    int status;       /* 0: no answer (connection refused or closed) */
    int retry_after;
    char *body;
    size_t len;
} reply;

static int connect_to(int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof a)) {
        close(fd);
        return -1;
    }
    return fd;
}

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
        if (w <= 0)
            return -1;
        p += w, n -= (size_t)w;
    }
    return 0;
}

static reply http(int port, const char *method, const char *path, const char *ctype,
                  const char *body, size_t len)
{
    reply r = {0};
    int fd = connect_to(port);
    if (fd < 0)
        return r;
    char head[512];
    int hn = snprintf(head, sizeof head,
                      "%s %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
                      "Content-Type: %s\r\nContent-Length: %zu\r\n\r\n",
                      method, path, ctype, len);
    smt_buf in = {0};
    if (!write_all(fd, head, (size_t)hn) && !write_all(fd, body, len)) {
        char buf[8192];
        ssize_t n;
        while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
            smt_buf_append(&in, buf, (size_t)n);
    }
    close(fd);
    smt_buf_putc(&in, 0);
    char *end = strstr(in.data, "\r\n\r\n");
    if (end && !strncmp(in.data, "HTTP/1.1 ", 9)) {
        r.status = atoi(in.data + 9);
        *end = 0;
        r.retry_after = strcasestr(in.data, "\r\nRetry-After:") != NULL;
        r.len = in.len - 1 - (size_t)(end + 4 - in.data);
        r.body = dupn(end + 4, r.len);
    }
    smt_buf_free(&in);
    return r;
}

/* A JSON request; *res: the parsed answer (NULL when it is not JSON). */
static reply post_json(int port, const json_t *req, json_t **res)
{
    char *b = json_dumps(req, JSON_COMPACT);
    reply r = http(port, "POST", "/translate", "application/json", b, strlen(b));
    free(b);
    *res = r.body ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    return r;
}

/* An XML-RPC call of translate with params (a JSON object, converted); *res: the result as JSON,
 * or NULL with the fault's text in fault. */
static reply post_rpc(int port, const json_t *params, json_t **res, char *fault, size_t cap)
{
    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_value *p = srv_json_to_xmlrpc(&env, params);
    xmlrpc_value *arr = xmlrpc_array_new(&env);
    xmlrpc_array_append_item(&env, arr, p);
    xmlrpc_mem_block *mb = XMLRPC_MEMBLOCK_NEW(char, &env, 0);
    xmlrpc_serialize_call(&env, mb, "translate", arr);
    reply r = http(port, "POST", "/RPC2", "text/xml", XMLRPC_MEMBLOCK_CONTENTS(char, mb),
                   XMLRPC_MEMBLOCK_SIZE(char, mb));
    XMLRPC_MEMBLOCK_FREE(char, mb);
    xmlrpc_DECREF(p);
    xmlrpc_DECREF(arr);
    *res = NULL;
    fault[0] = 0;
    if (r.status == 200) {
        xmlrpc_value *v = NULL;
        int code = 0;
        const char *fs = NULL;
        xmlrpc_parse_response2(&env, r.body, r.len, &v, &code, &fs);
        if (env.fault_occurred) {
            snprintf(fault, cap, "unparsable answer: %s", env.fault_string);
        } else if (fs) {
            snprintf(fault, cap, "%d %s", code, fs);
            free((void *)fs);
        } else {
            srv_kind k;
            char msg[256];
            *res = srv_xmlrpc_to_json(&env, v, &k, msg, sizeof msg);
            xmlrpc_DECREF(v);
        }
    }
    xmlrpc_env_clean(&env);
    return r;
}

/* The request for sentence i: plain, or full (align, word-align, n-best with scores). Moses's
 * users send the booleans as strings ("true"), as contrib/server/client.py does. */
static json_t *request(size_t i, int full)
{
    if (!full)
        return json_pack("{s:s}", "text", sent[i]);
    return json_pack("{s:s,s:s,s:b,s:i,s:b,s:b}", "text", sent[i], "align", "true", "word-align",
                     1, "nbest", NB, "add-score-breakdown", 1, "nbest-distinct", full == 2);
}

/* ---- the tests ---- */

static void test_single(int port)
{
    char why[1024], fault[512];
    for (size_t i = 0; i < n_sent; i++)
        for (int full = 0; full < 3; full++) {
            json_t *req = request(i, full), *res;
            reply r = post_rpc(port, req, &res, fault, sizeof fault);
            TH_CHECK(r.status == 200 && res, "XML-RPC sentence %zu: status %d %s", i, r.status, fault);
            if (res)
                TH_CHECK(answer_ok(res, i, full, why, sizeof why), "XML-RPC: %s", why);
            json_decref(res);
            free(r.body);
            r = post_json(port, req, &res);
            TH_CHECK(r.status == 200 && res, "JSON sentence %zu: status %d", i, r.status);
            if (res)
                TH_CHECK(answer_ok(res, i, full, why, sizeof why), "JSON: %s", why);
            json_decref(res);
            free(r.body);
            json_decref(req);
        }
}

typedef struct client {
    int port, id, n, ok, answered, refused;
    char why[1024];
} client;

/* n requests, both protocols and both kinds in turn; counts the correct ones. */
static void *client_main(void *arg)
{
    client *c = arg;
    char fault[512];
    for (int k = 0; k < c->n; k++) {
        size_t i = (size_t)(c->id + k) % n_sent;
        int full = (c->id + k) % 3, rpc = (c->id + k / 3) % 2;
        json_t *req = request(i, full), *res;
        fault[0] = 0;
        reply r = rpc ? post_rpc(c->port, req, &res, fault, sizeof fault) : post_json(c->port, req, &res);
        json_decref(req);
        if (r.status == 200 && res && !fault[0]) {
            c->answered++;
            if (answer_ok(res, i, full, c->why, sizeof c->why))
                c->ok++;
        } else if (r.status == 503 || r.status == 0 || (rpc && r.status == 200 && strstr(fault, "-509"))) {
            c->refused++;
        } else {
            snprintf(c->why, sizeof c->why, "status %d %s", r.status, rpc ? fault : "");
        }
        json_decref(res);
        free(r.body);
    }
    return NULL;
}

static void run_clients(int port, int n_clients, int n_req, client *cs)
{
    pthread_t th[64];
    for (int c = 0; c < n_clients; c++) {
        memset(&cs[c], 0, sizeof cs[c]);
        cs[c].port = port, cs[c].id = c, cs[c].n = n_req;
        pthread_create(&th[c], NULL, client_main, &cs[c]);
    }
    for (int c = 0; c < n_clients; c++)
        pthread_join(th[c], NULL);
}

static void test_parallel(int port)
{
    client cs[16];
    run_clients(port, 16, 30, cs);
    for (int c = 0; c < 16; c++)
        TH_CHECK(cs[c].ok == 30, "client %d: %d of 30 correct: %s", c, cs[c].ok, cs[c].why);
}

/* A JSON body (raw bytes) answered with status and an error containing what. */
static void json_fault(int port, const char *body, int status, const char *what)
{
    size_t len = strlen(body);
    reply r = http(port, "POST", "/translate", "application/json", body, len);
    TH_CHECK(r.status == status && r.body && strstr(r.body, "\"error\"") && strstr(r.body, what),
             "JSON %.40s: status %d '%s', want %d with '%s'", body, r.status, r.body ? r.body : "",
             status, what);
    free(r.body);
}

/* An XML-RPC body (raw) answered with a fault containing what. */
static void rpc_fault(int port, const char *body, const char *what)
{
    reply r = http(port, "POST", "/RPC2", "text/xml", body, strlen(body));
    TH_CHECK(r.status == 200 && r.body && strstr(r.body, "<fault>") && strstr(r.body, what),
             "XML-RPC %.60s: status %d '%s', want a fault with '%s'", body, r.status,
             r.body ? r.body : "", what);
    free(r.body);
}

static const char *xml_call(const char *members, char *buf, size_t cap)
{
    snprintf(buf, cap, "<?xml version=\"1.0\"?><methodCall><methodName>translate</methodName>"
                       "<params><param><value><struct>%s</struct></value></param></params></methodCall>",
             members);
    return buf;
}

static void still_serving(int port)
{
    char why[1024];
    json_t *req = request(0, 1), *res;
    reply r = post_json(port, req, &res);
    TH_CHECK(r.status == 200 && res && answer_ok(res, 0, 1, why, sizeof why),
             "after the faults: status %d %s", r.status, res ? why : "");
    json_decref(res);
    json_decref(req);
    free(r.body);
}

static void test_faults(int port)
{
    char x[4096];
    json_fault(port, "{\"text\": ", 400, "malformed JSON");
    json_fault(port, "[1, 2]", 400, "struct");
    json_fault(port, "{\"text\": 5}", 400, "'text' must be a string");
    json_fault(port, "{\"text\": \"a\", \"nbest\": \"five\"}", 400, "'nbest'");
    json_fault(port, "{\"text\": \"a\", \"align\": [1]}", 400, "'align'");
    json_fault(port, "{\"align\": true}", 400, "Missing source text");
    json_fault(port, "{\"text\": \"a \xff b\"}", 400, "UTF-8");
    json_fault(port, "{\"text\": \" \\t \"}", 400, "empty");
    json_fault(port, "{\"text\": \"a\", \"sg\": true}", 400, "'sg'");
    json_fault(port, "{\"text\": \"a\", \"nbest\": 11}", 400, "limit");
    smt_buf big = {0};
    smt_buf_puts(&big, "{\"text\": \"");
    for (int i = 0; i < 60; i++)
        smt_buf_puts(&big, "de ");
    smt_buf_puts(&big, "\"}");
    json_fault(port, big.data, 413, "words");
    smt_buf_clear(&big);
    smt_buf_puts(&big, "{\"text\": \"");
    for (int i = 0; i < 5000; i++)
        smt_buf_putc(&big, 'a');
    smt_buf_puts(&big, "\"}");
    json_fault(port, big.data, 413, "body");
    smt_buf_free(&big);

    rpc_fault(port, "<?xml version=\"1.0\"?><methodCall><methodName>translate", "faultCode");
    rpc_fault(port, "not xml at all", "faultCode");
    rpc_fault(port, xml_call("", x, sizeof x), "Missing source text");
    rpc_fault(port, xml_call("<member><name>text</name><value><int>5</int></value></member>", x,
                             sizeof x), "'text' must be a string");
    rpc_fault(port, xml_call("<member><name>text</name><value>a</value></member>"
                             "<member><name>nbest</name><value>five</value></member>", x, sizeof x),
              "'nbest'");
    rpc_fault(port, xml_call("<member><name>text</name><value>a \xc3\x28 b</value></member>", x,
                             sizeof x), "UTF-8");
    rpc_fault(port, xml_call("<member><name>text</name><value>   </value></member>", x, sizeof x),
              "empty");
    rpc_fault(port, xml_call("<member><name>text</name><value>a</value></member>"
                             "<member><name>topt</name><value>true</value></member>", x, sizeof x),
              "'topt'");
    rpc_fault(port, xml_call("<member><name>text</name><value>a</value></member>"
                             "<member><name>lambda</name><value><array><data/></array></value></member>",
                             x, sizeof x), "'lambda'");
    reply r = http(port, "GET", "/nothing", "text/plain", "", 0);
    TH_CHECK(r.status == 404, "GET /nothing: %d", r.status);
    free(r.body);
    still_serving(port);
}

/* Clients that hang up: in the headers, in the body, and before reading the answer. */
static void test_disconnects(int port)
{
    for (int k = 0; k < 3; k++) {
        int fd = connect_to(port);
        char req[512];
        json_t *rq = request(1, 1);
        char *body = json_dumps(rq, JSON_COMPACT);
        json_decref(rq);
        int n = snprintf(req, sizeof req, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: %zu\r\n\r\n%s",
                         strlen(body), body);
        size_t send_n = k == 0 ? 20 : k == 1 ? (size_t)n - 10 : (size_t)n;
        if (fd >= 0) {
            write_all(fd, req, send_n);
            close(fd);
        }
        free(body);
    }
    still_serving(port);
}

static void test_health_metrics(int port)
{
    reply r = http(port, "GET", "/health", "text/plain", "", 0);
    TH_CHECK(r.status == 200 && r.body && !strcmp(r.body, "ok\n"), "/health: %d", r.status);
    free(r.body);
    r = http(port, "GET", "/metrics", "text/plain", "", 0);
    TH_CHECK(r.status == 200 && r.body && strstr(r.body, "fastsmt_requests_total{api=\"json\"}") &&
                 strstr(r.body, "fastsmt_request_seconds_bucket{le=\"+Inf\"}") &&
                 strstr(r.body, "fastsmt_queue_length 0"),
             "/metrics: %d %s", r.status, r.body ? r.body : "");
    if (r.body) {
        const char *p = strstr(r.body, "\nfastsmt_sentences_total ");
        TH_CHECK(p && atol(p + 25) > 0, "no sentences counted");
        p = strstr(r.body, "fastsmt_errors_total{kind=\"malformed\"} ");
        TH_CHECK(p && atol(strchr(p, ' ') + 1) > 0, "no malformed requests counted");
    }
    free(r.body);
    r = http(port, "GET", "/", "text/plain", "", 0);
    TH_CHECK(r.status == 200 && r.body && strstr(r.body, "id=\"src\""), "/: %d", r.status);
    free(r.body);
}

/* A connection that sends nothing, and one that stops in the middle of its headers, are closed
 * after --server-idle-timeout (1 s here). */
static void test_idle(int port)
{
    for (int k = 0; k < 2; k++) {
        int fd = connect_to(port);
        TH_CHECK(fd >= 0, "connect");
        if (fd < 0)
            return;
        if (k == 1)
            write_all(fd, "POST /translate HTTP/1.1\r\nHost: x\r\n", 35);
        struct timeval tv = {10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        ssize_t r = recv(fd, &c, 1, 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
        TH_CHECK(r <= 0 && secs < 8, "connection %d: recv %zd after %.1f s, want closed within ~1 s", k,
                 r, secs);
        close(fd);
    }
}

/* One worker, a queue of one: most of 24 simultaneous requests are refused at once, with 503 and
 * Retry-After (JSON) or a fault (XML-RPC); every answered one is right. */
static void test_queue_full(void)
{
    server s;
    const char *extra[] = {"-threads", "1", "--server-queue", "1", "--server-idle-timeout", "1", NULL};
    TH_CHECK(start_server(&s, extra) == 0, "server with a queue of one");
    if (s.port <= 0)
        return;
    test_idle(s.port);
    client cs[24];
    run_clients(s.port, 24, 4, cs);
    int refused = 0, answered = 0, ok = 0;
    for (int c = 0; c < 24; c++)
        refused += cs[c].refused, answered += cs[c].answered, ok += cs[c].ok;
    TH_CHECK(refused > 0, "no request refused (%d answered)", answered);
    TH_CHECK(answered > 0 && ok == answered, "%d of %d answered requests correct", ok, answered);
    TH_CHECK(refused + answered == 24 * 4, "%d refused + %d answered of %d", refused, answered, 96);
    json_t *req = request(2, 1), *res;
    int saw503 = 0;
    for (int k = 0; k < 50 && !saw503; k++) { /* a 503's Retry-After, while the queue is full */
        client bg;
        memset(&bg, 0, sizeof bg);
        bg.port = s.port, bg.n = 3;
        pthread_t th[2];
        client bgs[2] = {bg, bg};
        for (int t = 0; t < 2; t++)
            pthread_create(&th[t], NULL, client_main, &bgs[t]);
        reply r = post_json(s.port, req, &res);
        saw503 = r.status == 503 && r.retry_after;
        json_decref(res);
        free(r.body);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
    }
    json_decref(req);
    TH_CHECK(saw503, "no 503 with Retry-After");
    char *log;
    TH_CHECK(stop_server(&s, &log) == 0, "exit status: %s", log);
    free(log);
}

/* A sentence that takes longer than --server-request-timeout (a wide search over 75 words) is
 * answered 504 when the time is up, not when the translation ends; the server then exits 0. */
static void test_request_timeout(void)
{
    server s;
    const char *extra[] = {"-threads", "1", "--server-request-timeout", "1", "-s", "1000",
                           "-cube-pruning-pop-limit", "2000", "-dl", "-1", NULL};
    TH_CHECK(start_server(&s, extra) == 0, "server with a 1 s request limit");
    if (s.port <= 0)
        return;
    smt_buf text = {0};
    for (size_t i = 0; i < 3; i++)
        smt_buf_printf(&text, "%s ", sent[i]);
    json_t *req = json_pack("{s:s}", "text", text.data), *res;
    smt_buf_free(&text);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    reply r = post_json(s.port, req, &res);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    TH_CHECK(r.status == 504 && r.body && strstr(r.body, "longer than"), "status %d %s", r.status,
             r.body ? r.body : "");
    TH_CHECK(secs < 3, "the 504 came after %.1f s", secs);
    json_decref(res);
    json_decref(req);
    free(r.body);
    char *log;
    TH_CHECK(stop_server(&s, &log) == 0, "exit status: %s", log);
    free(log);
}

/* SIGTERM while 8 clients keep sending: every answered request is right, the server exits 0. */
static void test_sigterm(void)
{
    server s;
    const char *extra[] = {"-threads", "2", NULL};
    TH_CHECK(start_server(&s, extra) == 0, "server for SIGTERM");
    if (s.port <= 0)
        return;
    client cs[8];
    pthread_t th[8];
    for (int c = 0; c < 8; c++) {
        memset(&cs[c], 0, sizeof cs[c]);
        cs[c].port = s.port, cs[c].id = c, cs[c].n = 40;
        pthread_create(&th[c], NULL, client_main, &cs[c]);
    }
    usleep(300 * 1000);
    char *log;
    int st = stop_server(&s, &log);
    for (int c = 0; c < 8; c++)
        pthread_join(th[c], NULL);
    int answered = 0, ok = 0;
    for (int c = 0; c < 8; c++)
        answered += cs[c].answered, ok += cs[c].ok;
    TH_CHECK(st == 0 && strstr(log, "server stopped"), "exit status %d: %s", st, log);
    TH_CHECK(answered > 0 && ok == answered, "%d of %d answered requests correct", ok, answered);
    int refused = 0;
    for (int c = 0; c < 8; c++)
        refused += cs[c].refused;
    TH_CHECK(answered + refused == 8 * 40, "%d answered + %d refused of %d: %s", answered, refused,
             8 * 40, cs[0].why);
    free(log);
}

int main(void)
{
    const char *data = getenv("FASTSMT_TESTDATA"), *bin = getenv("FASTSMT_BIN");
    if (!data || !bin)
        return th_skip("threaded_server", "FASTSMT_TESTDATA and FASTSMT_BIN are not set (ctest sets them)");
    signal(SIGPIPE, SIG_IGN);
    xmlrpc_env env;
    xmlrpc_env_init(&env);
    xmlrpc_init(&env); /* before the client threads use the library */
    char p[4096];
    snprintf(p, sizeof p, "%s/../../examples/sample/moses.ini", data);
    ini_path = strdup(p);
    snprintf(p, sizeof p, "%s/fastsmt", bin);
    fastsmt_bin = strdup(p);
    snprintf(p, sizeof p, "%s/../../examples/sample/sample.es", data);
    char *text = tu_read_file(p, NULL);
    for (char *l = text; l && *l && n_sent < 8;) {
        char *e = strchr(l, '\n');
        sent[n_sent++] = dupn(l, e ? (size_t)(e - l) : strlen(l));
        l = e ? e + 1 : l + strlen(l);
    }
    free(text);
    char *dir = tu_tmpdir();
    TH_CHECK(load_expected(dir) == 0, "the command line's outputs");
    char *log_path = tu_join(dir, "access.log");
    server s;
    const char *extra[] = {"-threads", "3", "--server-max-body", "4096", "--server-max-words",
                           "50", "--server-max-nbest", "10", "--server-log", log_path, NULL};
    TH_CHECK(start_server(&s, extra) == 0, "the server starts");
    if (s.port > 0) {
        test_single(s.port);
        test_parallel(s.port);
        test_faults(s.port);
        test_disconnects(s.port);
        test_health_metrics(s.port);
        char *log;
        int st = stop_server(&s, &log);
        TH_CHECK(st == 0 && !strstr(log, "Sanitizer"), "exit status %d: %s", st, log);
        free(log);
        char *access = tu_read_file(log_path, NULL);
        TH_CHECK(access && strstr(access, " 127.0.0.1 \"POST /RPC2\" 200 ") &&
                     strstr(access, "\"POST /translate\" 400 ") && strstr(access, " malformed\n"),
                 "--server-log: %.300s", access ? access : "(no file)");
        free(access);
    }
    free(log_path);
    tu_rmtree(dir);
    free(dir);
    test_queue_full();
    test_sigterm();
    test_request_timeout();
    xmlrpc_term();
    xmlrpc_env_clean(&env);
    return th_summary("threaded_server");
}
