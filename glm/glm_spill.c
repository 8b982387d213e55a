/* glm_spill.c — a trie build's finished levels on their way to the model file (glm_internal.h):
 * held in memory up to a limit (glm build -S), beyond it in a temporary file (-T) of checked
 * blocks. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, pread */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glm_internal.h"
#include "smt_buf.h"
#include "smt_hash.h"
#include "smt_io.h"

int glm_temp_damaged(smt_err *err, const char *dir, const char *what, ...)
{
    char buf[128];
    va_list ap;
    va_start(ap, what);
    vsnprintf(buf, sizeof buf, what, ap);
    va_end(ap);
    return smt_err_set(err, SMT_ERR_CORRUPT, "%s: temporary file damaged (%s)", dir, buf);
}

/* The temporary file: this header, then blocks of {uint64 length, uint64 hash of the block's
 * bytes seeded with its index} and the bytes. */
#define SPILL_MAGIC "GLMSPIL1"
#define SPILL_BLOCK (1u << 20)
#define SPILL_HEAD 16

static int write_all(glm_spill *s, const void *data, size_t n, smt_err *err)
{
    int e = smt_write_fd(s->fd, data, n);
    return e ? smt_err_errno(err, SMT_ERR_IO, e, "%s: temporary file: write error", s->dir) : 0;
}

/* Reads n bytes at offset off of the file. */
static int read_at(const glm_spill *s, void *data, size_t n, uint64_t off, smt_err *err)
{
    for (char *p = data, *end = p + n; p < end;) {
        ssize_t k = pread(s->fd, p, (size_t)(end - p), (off_t)off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return smt_err_errno(err, SMT_ERR_IO, errno, "%s: temporary file: read error", s->dir);
        if (k == 0)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: temporary file truncated (damaged "
                               "while the build ran)", s->dir);
        p += k;
        off += (uint64_t)k;
    }
    return 0;
}

/* Reads the block at *off (the index-th of the file) into blk, checked; *off and *len move to
 * the next block and this one's length. */
static int load_block(const glm_spill *s, uint64_t *off, uint64_t index, uint8_t *blk,
                      size_t *len, smt_err *err)
{
    uint64_t head[2];
    int rc = read_at(s, head, sizeof head, *off, err);
    if (rc)
        return rc;
    if (head[0] == 0 || head[0] > s->bsize)
        return glm_temp_damaged(err, s->dir, "block %llu: bad length", (unsigned long long)index);
    if ((rc = read_at(s, blk, (size_t)head[0], *off + sizeof head, err)))
        return rc;
    if (smt_hash_bytes_seed(blk, (size_t)head[0], index) != head[1])
        return glm_temp_damaged(err, s->dir, "block %llu: checksum mismatch",
                                (unsigned long long)index);
    *off += sizeof head + head[0];
    *len = (size_t)head[0];
    return 0;
}

int glm_spill_open(glm_spill *s, uint64_t limit, const char *dir, smt_err *err)
{
    return glm_spill_open_blocks(s, limit, SPILL_BLOCK, dir, err);
}

int glm_spill_open_blocks(glm_spill *s, uint64_t limit, size_t bsize, const char *dir,
                          smt_err *err)
{
    memset(s, 0, sizeof *s);
    s->fd = -1;
    s->limit = limit;
    s->bsize = bsize < 64 ? 64 : bsize > SPILL_BLOCK ? SPILL_BLOCK : bsize;
    size_t dl = strlen(dir);
    if (!(s->dir = malloc(dl + 1)) || !(s->blk = malloc(s->bsize))) {
        glm_spill_close(s);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    memcpy(s->dir, dir, dl + 1);
    /* the file is made now, so an unusable folder is named before the ARPA file is read, and
     * unlinked at once: nothing is left behind, whatever ends the build */
    char *path = malloc(dl + 32);
    if (!path) {
        glm_spill_close(s);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    snprintf(path, dl + 32, "%s/glm-build-XXXXXX", dir);
    s->fd = mkstemp(path);
    int e = errno;
    if (s->fd >= 0)
        unlink(path);
    free(path);
    if (s->fd < 0) {
        glm_spill_close(s);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot create a temporary file there "
                             "(-T names the folder)", dir);
    }
    return 0;
}

/* Writes the block being filled (s->blk[0..blen)) to the file. */
static int flush_block(glm_spill *s, smt_err *err)
{
    if (!s->blen)
        return 0;
    uint64_t head[2] = {s->blen, smt_hash_bytes_seed(s->blk, s->blen, s->nblocks++)};
    int rc = write_all(s, head, sizeof head, err);
    if (!rc)
        rc = write_all(s, s->blk, s->blen, err);
    s->foff += sizeof head + s->blen;
    s->blen = 0;
    return rc;
}

/* Appends to the file, through the block buffer. */
static int file_put(glm_spill *s, const uint8_t *p, size_t n, smt_err *err)
{
    while (n) {
        size_t k = s->bsize - s->blen < n ? s->bsize - s->blen : n;
        memcpy(s->blk + s->blen, p, k);
        s->blen += k;
        p += k;
        n -= k;
        int rc = s->blen == s->bsize ? flush_block(s, err) : 0;
        if (rc)
            return rc;
    }
    return 0;
}

int glm_spill_put(glm_spill *s, const void *data, size_t n, smt_err *err)
{
    if (!s->spilled && s->len + n <= s->limit) {
        if (smt_grow(&s->mem, &s->cap, s->len + n, 1, 1u << 16))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory holding the built levels");
        memcpy(s->mem + s->len, data, n);
        s->len += n;
        s->total += n;
        return 0;
    }
    int rc = 0;
    if (!s->spilled) { /* past the limit: the header, then what memory held, goes first */
        char head[SPILL_HEAD] = SPILL_MAGIC;
        s->spilled = 1;
        s->foff = SPILL_HEAD;
        if (!(rc = write_all(s, head, sizeof head, err)))
            rc = file_put(s, s->mem, s->len, err);
        free(s->mem);
        s->mem = NULL;
        s->len = s->cap = 0;
    }
    if (!rc)
        rc = file_put(s, data, n, err);
    s->total += n;
    return rc;
}

int glm_spill_rewind(glm_spill *s, smt_err *err)
{
    s->nread = 0;
    if (!s->spilled)
        return 0;
    int rc = flush_block(s, err);
    if (rc)
        return rc;
    s->bpos = s->blen = 0;
    s->nblocks = 0;
    s->roff = SPILL_HEAD;
    char head[SPILL_HEAD];
    if ((rc = read_at(s, head, sizeof head, 0, err)))
        return rc;
    if (memcmp(head, SPILL_MAGIC, sizeof SPILL_MAGIC - 1) != 0)
        return glm_temp_damaged(err, s->dir, "bad magic");
    return 0;
}

int glm_spill_get(glm_spill *s, void *data, size_t n, smt_err *err)
{
    if (n > s->total - s->nread)
        return smt_err_set(err, SMT_ERR_ARG, "internal: reading past the built levels");
    if (!s->spilled) {
        memcpy(data, s->mem + s->nread, n);
        s->nread += n;
        return 0;
    }
    uint8_t *p = data;
    while (n) {
        if (s->bpos == s->blen) { /* the next block, checked before any of it is used */
            int rc = load_block(s, &s->roff, s->nblocks, s->blk, &s->blen, err);
            if (rc)
                return rc;
            s->nblocks++;
            s->bpos = 0;
        }
        size_t k = s->blen - s->bpos < n ? s->blen - s->bpos : n;
        memcpy(p, s->blk + s->bpos, k);
        s->bpos += k;
        s->nread += k;
        p += k;
        n -= k;
    }
    return 0;
}

int glm_spill_mark(glm_spill *s, glm_spill_pos *pos, smt_err *err)
{
    int rc = 0;
    if (!s->spilled) { /* a spill of limit 0 that holds nothing yet: its header first */
        char head[SPILL_HEAD] = SPILL_MAGIC;
        if (s->len || s->limit)
            return smt_err_set(err, SMT_ERR_ARG, "internal: a mark in a spill held in memory");
        s->spilled = 1;
        s->foff = SPILL_HEAD;
        rc = write_all(s, head, sizeof head, err);
    }
    if (!rc)
        rc = flush_block(s, err);
    pos->off = s->foff;
    pos->block = s->nblocks;
    return rc;
}

int glm_spill_cur_open(glm_spill_cur *c, const glm_spill *s, glm_spill_pos from,
                       glm_spill_pos to, smt_err *err)
{
    memset(c, 0, sizeof *c);
    c->s = s;
    c->at = from;
    c->end = to;
    if (!(c->blk = malloc(s->bsize)))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory reading a temporary file");
    return 0;
}

int glm_spill_cur_get(glm_spill_cur *c, void *data, size_t n, smt_err *err)
{
    uint8_t *p = data;
    for (size_t got = 0; got < n;) {
        if (c->bpos == c->blen) {
            if (c->at.off >= c->end.off) {
                if (got)
                    return glm_temp_damaged(err, c->s->dir, "a run ends inside a record");
                return 1;
            }
            int rc = load_block(c->s, &c->at.off, c->at.block, c->blk, &c->blen, err);
            if (rc)
                return rc;
            c->at.block++;
            c->bpos = 0;
        }
        size_t k = c->blen - c->bpos < n - got ? c->blen - c->bpos : n - got;
        memcpy(p + got, c->blk + c->bpos, k);
        c->bpos += k;
        got += k;
    }
    return 0;
}

void glm_spill_cur_close(glm_spill_cur *c)
{
    free(c->blk);
    memset(c, 0, sizeof *c);
}

void glm_spill_close(glm_spill *s)
{
    if (s->fd >= 0)
        close(s->fd);
    free(s->mem);
    free(s->blk);
    free(s->dir);
    memset(s, 0, sizeof *s);
    s->fd = -1;
}
