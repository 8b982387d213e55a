/* Line reader: chunks of decompressed bytes, optionally produced by a helper thread.
 *
 * The input's format is told by its first bytes (gzip, xz, bzip2, zstd or plain), never by its name.
 * Raw bytes are read with read(2) (fread for a stream) into `in`; a decoder (or, for plain text, read itself) fills the
 * chunk. A chunk is handed over when full, at the end, on an error, or when the input is not a
 * regular file and nothing more is waiting on it (poll), so a pipe is answered line by line. */
#define _GNU_SOURCE
#include "smt_lines.h"

#include <bzlib.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "smt_buf.h"
#include "smt_sniff.h"

#define CHUNK_SIZE (4u << 20)  /* a chunk of decoded text, at most */
#define CHUNK_MIN (64u << 10) /* at least (a small regular file gets a small chunk) */
#define IN_SIZE (256u << 10)
#define QUEUE_LEN 4

typedef struct {
    char *data;
    size_t len;
    int eof;    /* this chunk is the last (possibly empty) */
    int error;  /* a read error after the bytes in data */
    char msg[160];
} chunk;

enum { FMT_UNKNOWN, FMT_PLAIN, FMT_GZIP, FMT_XZ, FMT_BZIP2, FMT_ZSTD };
static const char *const fmt_name[] = {"?", "text", "gzip", "xz", "bzip2", "zstd"};

struct smt_lines {
    char *path;
    int fd;
    FILE *stream; /* smt_lines_open_stream: read with fread instead of fd */
    int regular; /* a regular file: reads never wait, so chunks are always filled */
    int ranged;  /* smt_lines_open_range: at most `left` more bytes are read */
    uint64_t left;
    int verbatim; /* smt_lines_open_mem: lines split at "\n" only, the caller's buffer */
    size_t chunk_size; /* bytes of decoded text a chunk holds */
    uint64_t total;
    _Atomic uint64_t consumed;

    /* raw (compressed) input and the decoder state, used by the filling thread only */
    int fmt;
    unsigned char *in;
    size_t in_pos, in_len, in_size; /* in_size: the bytes at in */
    int in_eof;
    int pending;     /* the decoder's last call filled the chunk: it may hold more output */
    int member_done; /* gzip/bzip2: a member ended; more input starts another */
    int frame_done;  /* zstd: the last frame is complete */
    int dec_init;
    z_stream zs;
    lzma_stream xs;
    bz_stream bs;
    ZSTD_DStream *zd;

    /* chunk currently being scanned */
    chunk *cur;
    size_t pos;
    /* a line that spans chunks is assembled here */
    smt_buf carry;

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

static int fail(chunk *c, const char *fmt, const char *what)
{
    c->error = 1;
    c->eof = 1;
    snprintf(c->msg, sizeof c->msg, fmt, what);
    return -1;
}

/* read(2), retried on EINTR. On the helper thread this is the only place it can be cancelled, so
 * closing a reader whose input waits forever (a pipe kept open by its writer) does not hang. */
static ssize_t read_some(const smt_lines *r, void *buf, size_t n)
{
    int old;
    if (r->threaded)
        pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &old);
    ssize_t k;
    if (r->ranged && n > r->left)
        n = (size_t)r->left;
    if (r->stream) {
        errno = 0;
        k = n ? (ssize_t)fread(buf, 1, n, r->stream) : 0;
        if (k == 0 && ferror(r->stream)) {
            if (!errno)
                errno = EIO;
            k = -1;
        }
    } else {
        do
            k = n ? read(r->fd, buf, n) : 0;
        while (k < 0 && errno == EINTR);
    }
    if (r->ranged && k > 0)
        ((smt_lines *)r)->left -= (uint64_t)k;
    if (r->threaded) {
        int e = errno;
        pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
        errno = e;
    }
    return k;
}

/* Reads more raw bytes after those not yet consumed. 0, or -1 with the chunk's error set. */
static int read_input(smt_lines *r, chunk *c)
{
    if (r->in_pos == r->in_len)
        r->in_pos = r->in_len = 0;
    if (r->in_len == r->in_size)
        return 0;
    ssize_t n = read_some(r, r->in + r->in_len, r->in_size - r->in_len);
    if (n < 0)
        return fail(c, "%s", strerror(errno));
    if (n == 0)
        r->in_eof = 1;
    r->in_len += (size_t)n;
    atomic_fetch_add(&r->consumed, (uint64_t)n);
    return 0;
}

/* Whether a read would return at once (always, for a regular file). */
static int input_ready(const smt_lines *r)
{
    if (r->regular)
        return 1;
    struct pollfd p = {r->fd, POLLIN, 0};
    int n;
    do
        n = poll(&p, 1, 0);
    while (n < 0 && errno == EINTR);
    return n != 0; /* readable, hung up, or an error read() will report */
}

/* The format told by the first bytes (smt_sniff: the fastsmt and KenLM binaries read as text, and
 * their parsers say what is wrong), or FMT_UNKNOWN while more bytes are needed to tell. */
static int classify(const unsigned char *b, size_t n, int eof)
{
    switch (smt_sniff(b, n, eof, NULL)) {
    case SMT_KIND_UNDECIDED: return FMT_UNKNOWN;
    case SMT_KIND_GZIP: return FMT_GZIP;
    case SMT_KIND_XZ: return FMT_XZ;
    case SMT_KIND_BZIP2: return FMT_BZIP2;
    case SMT_KIND_ZSTD: return FMT_ZSTD;
    case SMT_KIND_TEXT:
    case SMT_KIND_FASTSMT:
    case SMT_KIND_KENLM: break;
    }
    return FMT_PLAIN;
}

static int start_decoder(smt_lines *r, chunk *c)
{
    switch (r->fmt) {
    case FMT_GZIP:
        if (inflateInit2(&r->zs, 16 + MAX_WBITS) != Z_OK)
            return fail(c, "%s", "cannot start the gzip decoder (out of memory)");
        break;
    case FMT_XZ: {
        lzma_stream init = LZMA_STREAM_INIT;
        r->xs = init;
        if (lzma_stream_decoder(&r->xs, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
            return fail(c, "%s", "cannot start the xz decoder (out of memory)");
        break;
    }
    case FMT_BZIP2:
        if (BZ2_bzDecompressInit(&r->bs, 0, 0) != BZ_OK)
            return fail(c, "%s", "cannot start the bzip2 decoder (out of memory)");
        break;
    case FMT_ZSTD:
        if (!(r->zd = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(r->zd)))
            return fail(c, "%s", "cannot start the zstd decoder (out of memory)");
        break;
    default:
        return 0;
    }
    r->dec_init = 1;
    return 0;
}

static void end_decoder(smt_lines *r)
{
    if (!r->dec_init)
        return;
    switch (r->fmt) {
    case FMT_GZIP: inflateEnd(&r->zs); break;
    case FMT_XZ: lzma_end(&r->xs); break;
    case FMT_BZIP2: BZ2_bzDecompressEnd(&r->bs); break;
    case FMT_ZSTD: ZSTD_freeDStream(r->zd); break;
    default: break;
    }
    r->dec_init = 0;
}

static int truncated(smt_lines *r, chunk *c)
{
    return fail(c, "unexpected end of file: truncated %s data", fmt_name[r->fmt]);
}

static const char *lzma_message(lzma_ret e)
{
    switch (e) {
    case LZMA_MEM_ERROR: return "out of memory";
    case LZMA_MEMLIMIT_ERROR: return "memory limit reached";
    case LZMA_FORMAT_ERROR: return "not in the xz format";
    case LZMA_OPTIONS_ERROR: return "unsupported xz options";
    case LZMA_DATA_ERROR: return "compressed data is corrupt";
    case LZMA_BUF_ERROR: return "unexpected end of file: truncated xz data";
    default: return "decoder error";
    }
}

/* One decoder call: consumes raw input and appends to the chunk. 0: go on; 1: end of data (the chunk
 * is the last); -1: an error (set in the chunk). Called only with input, pending output, or at the
 * end of the raw input. */
static int decode(smt_lines *r, chunk *c)
{
    size_t avail_in = r->in_len - r->in_pos, space = r->chunk_size - c->len;
    unsigned char *next_in = r->in + r->in_pos;
    char *next_out = c->data + c->len;
    switch (r->fmt) {
    case FMT_GZIP:
    case FMT_BZIP2: {
        if (r->member_done) { /* a member ended: the end, or another member follows */
            if (avail_in == 0) {
                if (r->in_eof) {
                    c->eof = 1;
                    return 1;
                }
                return 0;
            }
            if (r->fmt == FMT_GZIP ? inflateReset(&r->zs) != Z_OK
                                   : (BZ2_bzDecompressEnd(&r->bs),
                                      BZ2_bzDecompressInit(&r->bs, 0, 0) != BZ_OK)) {
                r->dec_init = r->fmt == FMT_GZIP;
                return fail(c, "cannot restart the %s decoder", fmt_name[r->fmt]);
            }
            r->member_done = 0;
        }
        if (!r->pending && avail_in == 0 && r->in_eof)
            return truncated(r, c);
        if (r->fmt == FMT_GZIP) {
            z_stream *z = &r->zs;
            z->next_in = next_in;
            z->avail_in = (uInt)avail_in;
            z->next_out = (Bytef *)next_out;
            z->avail_out = (uInt)space;
            int zr = inflate(z, Z_NO_FLUSH);
            r->in_pos = r->in_len - z->avail_in;
            c->len = r->chunk_size - z->avail_out;
            r->pending = z->avail_out == 0;
            if (zr == Z_STREAM_END)
                r->member_done = 1;
            else if (zr != Z_OK && zr != Z_BUF_ERROR)
                return fail(c, "gzip: %s", z->msg ? z->msg : zr == Z_MEM_ERROR ? "out of memory"
                                                                                : "corrupt data");
        } else {
            bz_stream *b = &r->bs;
            b->next_in = (char *)next_in;
            b->avail_in = (unsigned)avail_in;
            b->next_out = next_out;
            b->avail_out = (unsigned)space;
            int br = BZ2_bzDecompress(b);
            r->in_pos = r->in_len - b->avail_in;
            c->len = r->chunk_size - b->avail_out;
            r->pending = b->avail_out == 0;
            if (br == BZ_STREAM_END)
                r->member_done = 1;
            else if (br != BZ_OK)
                return fail(c, "bzip2: %s", br == BZ_MEM_ERROR ? "out of memory"
                                            : br == BZ_DATA_ERROR_MAGIC ? "not in the bzip2 format"
                                                                        : "compressed data is corrupt");
        }
        return 0;
    }
    case FMT_XZ: {
        lzma_stream *x = &r->xs;
        x->next_in = next_in;
        x->avail_in = avail_in;
        x->next_out = (uint8_t *)next_out;
        x->avail_out = space;
        lzma_ret lr = lzma_code(x, r->in_eof ? LZMA_FINISH : LZMA_RUN);
        r->in_pos = r->in_len - x->avail_in;
        c->len = r->chunk_size - x->avail_out;
        r->pending = x->avail_out == 0;
        if (lr == LZMA_STREAM_END) {
            c->eof = 1;
            return 1;
        }
        if (lr == LZMA_OK || (lr == LZMA_BUF_ERROR && !r->in_eof))
            return 0;
        return fail(c, "xz: %s", lzma_message(lr));
    }
    case FMT_ZSTD: {
        if (!r->pending && avail_in == 0 && r->in_eof) {
            if (r->frame_done) {
                c->eof = 1;
                return 1;
            }
            return truncated(r, c);
        }
        ZSTD_inBuffer zi = {r->in, r->in_len, r->in_pos};
        ZSTD_outBuffer zo = {c->data, r->chunk_size, c->len};
        size_t zr = ZSTD_decompressStream(r->zd, &zo, &zi);
        r->in_pos = zi.pos;
        c->len = zo.pos;
        r->pending = zo.pos == zo.size;
        if (ZSTD_isError(zr))
            return fail(c, "zstd: %s", ZSTD_getErrorName(zr));
        r->frame_done = zr == 0;
        return 0;
    }
    default:
        return fail(c, "%s", "internal error: no decoder");
    }
}

static void fill_chunk(smt_lines *r, chunk *c)
{
    c->len = 0;
    c->eof = 0;
    c->error = 0;
    if (r->fmt == FMT_UNKNOWN) {
        while ((r->fmt = classify(r->in, r->in_len, r->in_eof)) == FMT_UNKNOWN)
            if (read_input(r, c))
                return;
        if (start_decoder(r, c))
            return;
    }
    while (c->len < r->chunk_size) {
        if (r->fmt == FMT_PLAIN) {
            if (r->in_pos < r->in_len) { /* bytes read while telling the format */
                size_t n = r->in_len - r->in_pos;
                if (n > r->chunk_size - c->len)
                    n = r->chunk_size - c->len;
                memcpy(c->data + c->len, r->in + r->in_pos, n);
                r->in_pos += n;
                c->len += n;
                continue;
            }
            if (r->in_eof) {
                c->eof = 1;
                return;
            }
            if (c->len > 0 && !input_ready(r))
                return; /* hand over what arrived */
            ssize_t n = read_some(r, c->data + c->len, r->chunk_size - c->len);
            if (n < 0) {
                fail(c, "%s", strerror(errno));
                return;
            }
            if (n == 0)
                r->in_eof = 1;
            c->len += (size_t)n;
            atomic_fetch_add(&r->consumed, (uint64_t)n);
            continue;
        }
        if (r->in_pos < r->in_len || r->pending || r->in_eof || r->member_done) {
            size_t before_in = r->in_pos, before_out = c->len;
            int st = decode(r, c);
            if (st != 0)
                return;
            if (r->in_pos != before_in || c->len != before_out || r->in_pos < r->in_len)
                continue;
        }
        if (c->len > 0 && !input_ready(r))
            return;
        if (read_input(r, c))
            return;
    }
}

static void *producer(void *arg)
{
    smt_lines *r = arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL); /* but in read_some */
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
    if (r->verbatim)
        return &r->pool[0]; /* the caller's buffer, one chunk marked last */
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
    const char *name = is_stdin ? "<stdin>" : path;
    smt_lines *r = calloc(1, sizeof *r);
    if (r)
        r->in_size = (flags & SMT_LINES_SMALL) ? CHUNK_MIN : IN_SIZE;
    if (!r || !(r->path = strdup(name)) || !(r->in = malloc(r->in_size))) {
        if (r)
            free(r->path);
        free(r);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", name);
    }
    r->fd = is_stdin ? fcntl(0, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) != 0) {
        int e = errno;
        smt_lines_close(r);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot %s", name, is_stdin ? "read" : "open");
    }
    if (S_ISDIR(st.st_mode)) {
        smt_lines_close(r);
        return smt_err_set(err, SMT_ERR_IO, "%s: is a directory, not a file to read", name);
    }
    r->regular = S_ISREG(st.st_mode);
    if (!is_stdin && r->regular)
        r->total = (uint64_t)st.st_size;
    /* a small file needs no 4 MiB chunks (many small inputs, e.g. inis, would pay for them) */
    r->chunk_size = (flags & SMT_LINES_SMALL) ? CHUNK_MIN : CHUNK_SIZE;
    if (r->regular && (uint64_t)st.st_size < r->chunk_size)
        r->chunk_size = (uint64_t)st.st_size < CHUNK_MIN ? CHUNK_MIN : (size_t)st.st_size;
    r->threaded = (flags & SMT_LINES_THREADED) != 0;
    int n_chunks = r->threaded ? QUEUE_LEN + 1 : 1;
    for (int i = 0; i < n_chunks; i++) {
        if (!(r->pool[i].data = malloc(r->chunk_size))) {
            r->threaded = 0;
            smt_lines_close(r);
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", name);
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

/* Drops the "\r" of a "\r\n" terminator, and the UTF-8 byte-order marks at the start of the input
 * (one would otherwise stay glued to the first word; a repeated one, as concatenated files leave,
 * too: a table written back out would start with it and lose it when read again). */
static void finish_line(const smt_lines *r, char **line, size_t *len)
{
    if (r->verbatim) {
        (*line)[*len] = '\0';
        return;
    }
    if (*len && (*line)[*len - 1] == '\r')
        (*len)--;
    (*line)[*len] = '\0';
    while (r->lineno == 1 && *len >= 3 && memcmp(*line, "\xef\xbb\xbf", 3) == 0) {
        *line += 3;
        *len -= 3;
    }
}

int smt_lines_next(smt_lines *r, char **line, size_t *len, smt_err *err)
{
    r->carry.len = 0;
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
                if (spanning && r->carry.len > 0) {
                    /* an unterminated last line */
                    r->lineno++;
                    r->had_newline = 0;
                    if (smt_buf_append(&r->carry, "", 0))
                        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
                    *len = r->carry.len;
                    *line = r->carry.data;
                    finish_line(r, line, len);
                    if (r->lineno == 1 && (size_t)(*line - r->carry.data) == r->carry.len) {
                        r->lineno = 0; /* only byte-order marks: an empty input */
                        return 0;
                    }
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
                if (smt_buf_append(&r->carry, start, n))
                    return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
                *line = r->carry.data;
                *len = r->carry.len;
            } else {
                *line = start;
                *len = n;
            }
            finish_line(r, line, len);
            return 1;
        }
        /* No newline in the rest of this chunk: keep it and continue with the next. */
        if (smt_buf_append(&r->carry, start, avail))
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", r->path);
        spanning = 1;
        r->pos = r->cur->len;
    }
}

int smt_lines_ready(smt_lines *r)
{
    if (r->done || r->regular)
        return 1;
    if (r->cur && (r->cur->eof || (r->pos < r->cur->len &&
                                   memchr(r->cur->data + r->pos, '\n', r->cur->len - r->pos))))
        return 1;
    if (r->threaded) { /* the helper thread reads; a chunk it handed over is what is ready */
        pthread_mutex_lock(&r->mu);
        int n = r->full_count;
        pthread_mutex_unlock(&r->mu);
        return n > 0;
    }
    return r->in_pos < r->in_len || r->pending || input_ready(r);
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
        pthread_cancel(r->thread); /* acts only if it waits in read_some */
        pthread_join(r->thread, NULL);
        pthread_mutex_destroy(&r->mu);
        pthread_cond_destroy(&r->cv);
    }
    end_decoder(r);
    if (r->fd >= 0)
        close(r->fd);
    free(r->in);
    if (r->verbatim)
        r->pool[0].data = NULL; /* the caller's */
    for (int i = 0; i < QUEUE_LEN + 1; i++)
        free(r->pool[i].data);
    smt_buf_free(&r->carry);
    free(r->path);
    free(r);
}

int smt_lines_open_range(smt_lines **out, const char *path, uint64_t start, uint64_t end,
                         uint64_t first_lineno, smt_err *err)
{
    *out = NULL;
    if (end < start)
        return smt_err_set(err, SMT_ERR_ARG, "%s: byte range %llu-%llu is empty", path,
                           (unsigned long long)start, (unsigned long long)end);
    smt_lines *r;
    int rc = smt_lines_open(&r, path, 0, err);
    if (rc)
        return rc;
    if (!r->regular || !r->total || end > r->total) {
        smt_lines_close(r);
        return smt_err_set(err, SMT_ERR_IO, "%s: bytes %llu-%llu: not a regular file that long",
                           path, (unsigned long long)start, (unsigned long long)end);
    }
    if (lseek(r->fd, (off_t)start, SEEK_SET) < 0) {
        int e = errno;
        smt_lines_close(r);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot seek to byte %llu", path,
                             (unsigned long long)start);
    }
    r->fmt = FMT_PLAIN; /* a range of plain text: its first bytes are not the file's magic */
    r->ranged = 1;
    r->left = end - start;
    r->lineno = first_lineno;
    *out = r;
    return 0;
}

int smt_lines_open_stream(smt_lines **out, FILE *f, const char *name, smt_err *err)
{
    *out = NULL;
    smt_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(name)) || !(r->in = malloc(r->in_size = IN_SIZE)) ||
        !(r->pool[0].data = malloc(CHUNK_MIN))) {
        if (r)
            free(r->path), free(r->in);
        free(r);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", name);
    }
    r->fd = -1;
    r->stream = f;
    r->regular = 1; /* fread waits for a full chunk or the end: there is no "ready" to tell */
    r->chunk_size = CHUNK_MIN;
    *out = r;
    return 0;
}

int smt_lines_open_mem(smt_lines **out, const char *name, char *data, size_t len,
                       uint64_t first_lineno, smt_err *err)
{
    *out = NULL;
    smt_lines *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(name))) {
        free(r);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", name);
    }
    r->fd = -1;
    r->regular = 1;
    r->verbatim = 1;
    r->total = len;
    r->lineno = first_lineno;
    r->pool[0].data = data;
    r->pool[0].len = len;
    r->pool[0].eof = 1;
    atomic_store(&r->consumed, (uint64_t)len);
    *out = r;
    return 0;
}
