/* dist_plan.c — the chunks of a plain input file and the job's fingerprint (dist_core.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_core.h"
#include "smt_buf.h"
#include "smt_hash.h"

int dist_plan_size(uint64_t in_size, uint64_t C, const char *what, size_t *n, smt_err *err)
{
    if (C < DIST_CHUNK_MIN || C > DIST_CHUNK_MAX)
        return smt_err_set(err, SMT_ERR_LIMIT, "%s: chunk size %llu is out of range [%llu, %llu]",
                           what, (unsigned long long)C, DIST_CHUNK_MIN, DIST_CHUNK_MAX);
    uint64_t k = in_size / C + (in_size % C != 0);
    if (k > DIST_MAX_CHUNKS)
        return smt_err_set(err, SMT_ERR_LIMIT,
                           "%s: chunks of %llu bytes cut the input (%llu bytes) into more than "
                           "%llu chunks: give larger chunks",
                           what, (unsigned long long)C, (unsigned long long)in_size,
                           DIST_MAX_CHUNKS);
    *n = (size_t)k;
    return 0;
}

uint64_t dist_auto_chunk(uint64_t in_size, int ranks)
{
    uint64_t C = in_size / (16 * (uint64_t)(ranks > 0 ? ranks : 1));
    return C < 4096 ? 4096 : C > (64u << 20) ? (64u << 20) : C;
}

int dist_line_start_at(int fd, const char *path, uint64_t s, uint64_t size, uint64_t *out, smt_err *err)
{
    char buf[1 << 16];
    uint64_t pos = s - 1;
    while (pos < size) {
        ssize_t k = pread(fd, buf, sizeof buf, (off_t)pos);
        if (k <= 0)
            return smt_err_errno(err, SMT_ERR_IO, k < 0 ? errno : EIO, "%s: read error", path);
        char *nl = memchr(buf, '\n', (size_t)k);
        if (nl) {
            *out = pos + (uint64_t)(nl - buf) + 1;
            return 0;
        }
        pos += (uint64_t)k;
    }
    *out = size;
    return 0;
}

int dist_count_lines(int fd, const char *path, uint64_t a, uint64_t b, uint64_t *out, smt_err *err)
{
    enum { BUF = 1 << 20 };
    char *buf = b > a ? malloc(BUF) : NULL;
    if (b > a && !buf)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    uint64_t n = 0, pos = a;
    char last = '\n';
    int rc = 0;
    while (pos < b) {
        size_t want = b - pos < BUF ? (size_t)(b - pos) : BUF;
        ssize_t k = pread(fd, buf, want, (off_t)pos);
        if (k <= 0) {
            rc = smt_err_errno(err, SMT_ERR_IO, k < 0 ? errno : EIO, "%s: read error", path);
            break;
        }
        for (const char *p = buf, *e = buf + k; (p = memchr(p, '\n', (size_t)(e - p))); p++)
            n++;
        last = buf[k - 1];
        pos += (uint64_t)k;
    }
    free(buf);
    if (!rc)
        *out = n + (b > a && last != '\n');
    return rc;
}

void dist_chunk_bounds(dist_chunk *c, size_t n, const uint64_t *starts, uint64_t in_size)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t s = i ? starts[i] : 0;
        c[i].start = i && s < c[i - 1].start ? c[i - 1].start : s; /* a line longer than chunks */
    }
    for (size_t i = 0; i < n; i++)
        c[i].end = i + 1 < n ? c[i + 1].start : in_size;
}

void dist_chunk_lines(dist_chunk *c, size_t n, const uint64_t *counts)
{
    uint64_t line = 0;
    for (size_t i = 0; i < n; i++) {
        c[i].first_line = line;
        c[i].nlines = counts[i];
        line += counts[i];
    }
}

int dist_plan_check(const dist_chunk *c, size_t n, uint64_t in_size, const char *what,
                    smt_err *err)
{
    uint64_t at = 0, line = 0;
    for (size_t i = 0; i < n; i++) {
        if (c[i].start != at || c[i].end < c[i].start || c[i].end > in_size ||
            c[i].first_line != line)
            return smt_err_set(err, SMT_ERR_CORRUPT,
                               "%s: chunk %zu (bytes %llu-%llu) does not follow the chunks before "
                               "it: the plan does not cover the input",
                               what, i, (unsigned long long)c[i].start,
                               (unsigned long long)c[i].end);
        at = c[i].end;
        line += c[i].nlines;
    }
    if (at != in_size)
        return smt_err_set(err, SMT_ERR_CORRUPT,
                           "%s: the chunks end at byte %llu of %llu: the plan does not cover the "
                           "input",
                           what, (unsigned long long)at, (unsigned long long)in_size);
    return 0;
}

int dist_fingerprint(const dist_job *job, uint64_t *fp, smt_err *err)
{
    smt_buf b = {0};
    int rc = 0, nomem = smt_buf_printf(&b, "%s\n%s\n%d\n", job->tool,
                                       job->fingerprint ? job->fingerprint : "", job->n_out) != 0;
    for (size_t i = 0; i < job->n_files && !rc; i++) {
        struct stat st;
        if (stat(job->files[i], &st))
            rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot see it (a file the job reads)",
                               job->files[i]);
        else
            nomem |= smt_buf_printf(&b, "%s %lld %lld.%09ld\n", job->files[i],
                                    (long long)st.st_size, (long long)st.st_mtim.tv_sec,
                                    (long)st.st_mtim.tv_nsec) != 0;
    }
    if (!rc && nomem)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc)
        *fp = smt_hash_bytes(b.data, b.len);
    smt_buf_free(&b);
    return rc;
}
