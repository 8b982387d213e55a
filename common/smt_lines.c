/* Line reader: chunks of decompressed bytes, optionally produced by a helper thread. */
#define _GNU_SOURCE
#include "smt_lines.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CHUNK_SIZE (4u << 20)
#define QUEUE_LEN 4

typedef struct {
    char *data;
    size_t len;
    int eof;    /* this chunk is the last (possibly empty) */
    int error;  /* a read error after the bytes in data */
    char msg[160];
} chunk;

struct smt_lines {
    char *path;
    gzFile gz;
    uint64_t total;
    _Atomic uint64_t consumed;

    /* chunk currently being scanned */
    chunk *cur;
    size_t pos;
    /* a line that spans chunks is assembled here */
    char *carry;
    size_t carry_len, carry_cap;

    uint64_t lineno;
    int had_newline;
    int done;

    /* threaded mode: a ring of filled chunks and a free list */
    int threaded;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    chunk *full[QUEUE_LEN + 1];
    int full_head, full_count;
    chunk *free_list[QUEUE_LEN + 1];
    int free_count;
    int stop;
    chunk pool[QUEUE_LEN + 1];
};

static void fill_chunk(smt_lines *r, chunk *c)
{
    c->len = 0;
    c->eof = 0;
    c->error = 0;
    while (c->len < CHUNK_SIZE) {
        int n = gzread(r->gz, c->data + c->len, (unsigned)(CHUNK_SIZE - c->len));
        if (n < 0) {
            int zerr;
            const char *m = gzerror(r->gz, &zerr);
            c->error = 1;
            snprintf(c->msg, sizeof c->msg, "%s", zerr == Z_ERRNO ? strerror(errno) : m);
            c->eof = 1;
            break;
        }
        if (n == 0) {
            /* zlib reports a truncated gzip stream only through gzerror after EOF */
            int zerr;
            const char *m = gzerror(r->gz, &zerr);
            if (zerr != Z_OK && zerr != Z_STREAM_END) {
                c->error = 1;
                snprintf(c->msg, sizeof c->msg, "%s", m);
            }
            c->eof = 1;
            break;
        }
        c->len += (size_t)n;
    }
    z_off_t off = gzoffset(r->gz);
    if (off >= 0)
        atomic_store(&r->consumed, (uint64_t)off);
}

static void *producer(void *arg)
{
    smt_lines *r = arg;
    for (;;) {
        pthread_mutex_lock(&r->mu);
        while (!r->stop && r->free_count == 0)
            pthread_cond_wait(&r->cv, &r->mu);
        if (r->stop) {
            pthread_mutex_unlock(&r->mu);
            return NULL;
        }
        chunk *c = r->free_list[--r->free_count];
        pthread_mutex_unlock(&r->mu);

        fill_chunk(r, c);

        pthread_mutex_lock(&r->mu);
        r->full[(r->full_head + r->full_count) % (QUEUE_LEN + 1)] = c;
        r->full_count++;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        if (c->eof)
            return NULL;
    }
}

/* Hands back the current chunk and obtains the next one. */
static chunk *next_chunk(smt_lines *r)
{
    if (!r->threaded) {
        chunk *c = &r->pool[0];
        fill_chunk(r, c);
        return c;
    }
    pthread_mutex_lock(&r->mu);
    if (r->cur) {
        r->free_list[r->free_count++] = r->cur;
        pthread_cond_broadcast(&r->cv);
    }
    while (r->full_count == 0)
        pthread_cond_wait(&r->cv, &r->mu);
    chunk *c = r->full[r->full_head];
    r->full_head = (r->full_head + 1) % (QUEUE_LEN + 1);
    r->full_count--;
    pthread_mutex_unlock(&r->mu);
    return c;
}

int smt_lines_open(smt_lines **out, const char *path, unsigned flags, smt_err *err)
{
    *out = NULL;
    int is_stdin = strcmp(path, "-") == 0;
    smt_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(is_stdin ? "<stdin>" : path))) {
        free(r);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    }
    int fd = is_stdin ? dup(0) : -1;
    if (is_stdin && fd < 0) {
        int e = errno;
        free(r->path);
        free(r);
        return smt_err_errno(err, SMT_ERR_IO, e, "<stdin>: cannot read");
    }
    r->gz = is_stdin ? gzdopen(fd, "rb") : gzopen(path, "rb");
    if (!r->gz) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        free(r->path);
        free(r);
        return smt_err_errno(err, SMT_ERR_IO, e ? e : ENOMEM, "%s: cannot open", path);
    }
    gzbuffer(r->gz, 1u << 18);
    struct stat st;
    if (!is_stdin && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        r->total = (uint64_t)st.st_size;
    r->threaded = (flags & SMT_LINES_THREADED) != 0;
    int n_chunks = r->threaded ? QUEUE_LEN + 1 : 1;
    for (int i = 0; i < n_chunks; i++) {
        if (!(r->pool[i].data = malloc(CHUNK_SIZE))) {
            smt_lines_close(r);
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        }
    }
    if (r->threaded) {
        pthread_mutex_init(&r->mu, NULL);
        pthread_cond_init(&r->cv, NULL);
        for (int i = 0; i < n_chunks; i++)
            r->free_list[r->free_count++] = &r->pool[i];
        if (pthread_create(&r->thread, NULL, producer, r) != 0) {
            r->threaded = 0; /* fall back to reading inline */
            pthread_mutex_destroy(&r->mu);
            pthread_cond_destroy(&r->cv);
        }
    }
    *out = r;
    return 0;
}

static int carry_append(smt_lines *r, const char *p, size_t n)
{
    if (r->carry_len + n + 1 > r->carry_cap) {
        size_t cap = r->carry_cap ? r->carry_cap : 4096;
        while (cap < r->carry_len + n + 1)
            cap *= 2;
        char *c = realloc(r->carry, cap);
        if (!c)
            return SMT_ERR_NOMEM;
        r->carry = c;
        r->carry_cap = cap;
    }
    memcpy(r->carry + r->carry_len, p, n);
    r->carry_len += n;
    return 0;
}

static void finish_line(char *line, size_t *len)
{
    if (*len && line[*len - 1] == '\r')
        (*len)--;
    line[*len] = '\0';
}

int smt_lines_next(smt_lines *r, char **line, size_t *len, smt_err *err)
{
    r->carry_len = 0;
    int spanning = 0;
    for (;;) {
        if (r->done)
            return 0;
        if (!r->cur || r->pos >= r->cur->len) {
            if (r->cur && r->cur->eof) {
                chunk *c = r->cur;
                r->done = 1;
                if (c->error)
                    return smt_err_set(err, SMT_ERR_IO, "%s:%llu: read error: %s", r->path,
                                       (unsigned long long)(r->lineno + 1), c->msg);
                if (spanning && r->carry_len > 0) {
                    /* an unterminated last line */
                    r->lineno++;
                    r->had_newline = 0;
                    if (carry_append(r, "", 0))
                        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
                    *len = r->carry_len;
                    *line = r->carry;
                    finish_line(*line, len);
                    return 1;
                }
                return 0;
            }
            r->cur = next_chunk(r);
            r->pos = 0;
            continue;
        }
        char *start = r->cur->data + r->pos;
        size_t avail = r->cur->len - r->pos;
        char *nl = memchr(start, '\n', avail);
        if (nl) {
            size_t n = (size_t)(nl - start);
            r->pos += n + 1;
            r->lineno++;
            r->had_newline = 1;
            if (spanning) {
                if (carry_append(r, start, n))
                    return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
                *line = r->carry;
                *len = r->carry_len;
            } else {
                *line = start;
                *len = n;
            }
            finish_line(*line, len);
            return 1;
        }
        /* No newline in the rest of this chunk: keep it and continue with the next. */
        if (carry_append(r, start, avail))
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
        spanning = 1;
        r->pos = r->cur->len;
    }
}

uint64_t smt_lines_lineno(const smt_lines *r) { return r->lineno; }
int smt_lines_had_newline(const smt_lines *r) { return r->had_newline; }
uint64_t smt_lines_bytes_read(const smt_lines *r) { return atomic_load(&((smt_lines *)r)->consumed); }
uint64_t smt_lines_total_bytes(const smt_lines *r) { return r->total; }
const char *smt_lines_path(const smt_lines *r) { return r->path; }

void smt_lines_close(smt_lines *r)
{
    if (!r)
        return;
    if (r->threaded) {
        pthread_mutex_lock(&r->mu);
        r->stop = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        pthread_join(r->thread, NULL);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    if (r->gz)
        gzclose(r->gz);
    for (int i = 0; i < QUEUE_LEN + 1; i++)
        free(r->pool[i].data);
    free(r->carry);
    free(r->path);
    free(r);
}
