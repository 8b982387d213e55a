/* dist_manifest.c — a job's manifest: written by rank 0 as chunks finish, read back by -resume
 * (dist_core.h). Every value read is checked against its range and the job at hand. */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <string.h>

#include "dist_core.h"
#include "smt_io.h"
#include "smt_num.h"
#include "smt_words.h"

#define MANIFEST_VERSION_LINE "fastsmt-dist-manifest 1"
#define MAX_WORDS (8 + DIST_MAX_OUT + 1)

int dist_manifest_create(const dist *d, uint64_t fp, smt_err *err)
{
    FILE *f = fopen(d->manifest, "w");
    if (!f)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot create", d->manifest);
    fprintf(f, MANIFEST_VERSION_LINE "\njob %016llx %llu %llu %llu %d\n", (unsigned long long)fp,
            (unsigned long long)d->in_size, (unsigned long long)d->in_mtime,
            (unsigned long long)d->C, d->job->n_out);
    return smt_close_output(f, d->manifest, err);
}

int dist_manifest_put_done(FILE *f, const dist *d, size_t i)
{
    const dist_chunk *c = &d->chunks[i];
    fprintf(f, "done %zu %llu %llu %llu %llu %d %d", i, (unsigned long long)c->start,
            (unsigned long long)c->end, (unsigned long long)c->first_line,
            (unsigned long long)c->nlines, (int)c->rc, (int)c->complete);
    for (int k = 0; k < d->job->n_out; k++)
        fprintf(f, " %llu:%016llx", (unsigned long long)c->size[k],
                (unsigned long long)c->hash[k]);
    fputc('\n', f);
    return fflush(f) || ferror(f) ? SMT_ERR_IO : 0;
}

/* The words of a line (at most max; one more means too many). */
static size_t words(const char *line, size_t len, const char **w, size_t *wl, size_t max)
{
    const char *pos = line, *end = line + len;
    size_t n = 0;
    while (n < max && smt_word_next(&pos, end, SMT_WS_BLANK, &w[n], &wl[n]))
        n++;
    return n;
}

/* Exactly 16 hex digits. */
static int hex64(const char *s, size_t n, uint64_t *out)
{
    if (n != 16)
        return SMT_ERR_PARSE;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)s[i], d = c >= '0' && c <= '9'   ? c - '0'
                                         : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                                : -1;
        if (d < 0)
            return SMT_ERR_PARSE;
        v = v << 4 | (uint64_t)d;
    }
    *out = v;
    return 0;
}

/* A decimal value in [lo, hi] into *out; else the error naming file:line and the field. */
static int num(smt_lines *in, const char *s, size_t n, long long lo, long long hi,
               const char *field, uint64_t *out, smt_err *err)
{
    long long v;
    int rc = smt_parse_ll(s, n, lo, hi, &v);
    if (rc)
        return smt_err_set(err, rc, "%s:%llu: %s '%.*s' is %s [%lld, %lld]", smt_lines_path(in),
                           (unsigned long long)smt_lines_lineno(in), field, (int)(n > 40 ? 40 : n),
                           s, rc == SMT_ERR_LIMIT ? "out of range" : "not an integer in", lo, hi);
    *out = (uint64_t)v;
    return 0;
}

int dist_manifest_read_head(smt_lines *in, dist_head *h, smt_err *err)
{
    char *line;
    size_t len;
    int got = smt_lines_next(in, &line, &len, err);
    if (got < 0)
        return got;
    if (!got || strcmp(line, MANIFEST_VERSION_LINE))
        return smt_err_set(err, SMT_ERR_FORMAT, "%s:1: not a fastsmt job manifest (version 1)",
                           smt_lines_path(in));
    if ((got = smt_lines_next(in, &line, &len, err)) < 0)
        return got;
    const char *w[MAX_WORDS];
    size_t wl[MAX_WORDS];
    size_t n = got && smt_lines_had_newline(in) ? words(line, len, w, wl, MAX_WORDS) : 0;
    if (n != 6 || wl[0] != 3 || memcmp(w[0], "job", 3))
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:2: damaged job line (job FINGERPRINT SIZE TIME CHUNK OUTPUTS)",
                           smt_lines_path(in));
    if (hex64(w[1], wl[1], &h->fp))
        return smt_err_set(err, SMT_ERR_PARSE, "%s:2: the fingerprint is not 16 hex digits",
                           smt_lines_path(in));
    uint64_t n_out;
    int rc = num(in, w[2], wl[2], 0, LLONG_MAX, "the input's size", &h->in_size, err);
    if (!rc)
        rc = num(in, w[3], wl[3], 0, LLONG_MAX, "the input's time", &h->in_mtime, err);
    if (!rc)
        rc = num(in, w[4], wl[4], (long long)DIST_CHUNK_MIN, (long long)DIST_CHUNK_MAX,
                 "the chunk size", &h->C, err);
    if (!rc)
        rc = num(in, w[5], wl[5], 1, DIST_MAX_OUT, "the output count", &n_out, err);
    if (!rc)
        h->n_out = (int)n_out;
    return rc;
}

int dist_manifest_check(dist *d, const dist_head *h, uint64_t fp, smt_err *err)
{
    const char *flag = strcmp(d->job->tool, "fastsmt") ? "--resume" : "-resume";
    if (h->fp != fp)
        return smt_err_set(err, SMT_ERR_ARG,
                           "%s: the job it describes had other flags, or a file it reads (a "
                           "model, a table, an LM) changed since: %s with the same command over "
                           "the same files, or remove %s",
                           d->manifest, flag, d->dir);
    if (h->in_size != d->in_size || h->in_mtime != d->in_mtime)
        return smt_err_set(err, SMT_ERR_ARG,
                           "%s: the input %s changed since (size or time): remove %s and start "
                           "again",
                           d->manifest, d->job->input, d->dir);
    if (h->n_out != d->job->n_out)
        return smt_err_set(err, SMT_ERR_ARG, "%s: the job had other outputs", d->manifest);
    int rc = dist_plan_size(d->in_size, h->C, d->manifest, &d->n_chunks, err);
    if (!rc)
        d->C = h->C;
    return rc;
}

/* One "done" line (n words at w) into d's chunk table. */
static int done_line(smt_lines *in, dist *d, const char **w, const size_t *wl, size_t n,
                     smt_err *err)
{
    const char *path = smt_lines_path(in);
    unsigned long long ln = (unsigned long long)smt_lines_lineno(in);
    int n_out = d->job->n_out;
    if (n != (size_t)(8 + n_out))
        return smt_err_set(err, SMT_ERR_PARSE,
                           "%s:%llu: damaged chunk line (%zu fields, not %d: done CHUNK START END "
                           "FIRST-LINE LINES RC COMPLETE and SIZE:CHECKSUM per output)",
                           path, ln, n, 8 + n_out);
    if (d->n_chunks == 0)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s:%llu: a chunk of an empty input", path, ln);
    uint64_t v[7];
    static const char *const field[7] = {"the chunk",  "the chunk's start", "the chunk's end",
                                         "the chunk's first line", "the chunk's lines",
                                         "the chunk's error code", "the chunk's completeness"};
    const long long lo[7] = {0, 0, 0, 0, 0, 0, 1};
    const long long hi[7] = {(long long)d->n_chunks - 1, LLONG_MAX, LLONG_MAX, LLONG_MAX,
                             LLONG_MAX, 0, 1};
    for (int j = 0; j < 7; j++) {
        int rc;
        if (j == 5) { /* 0, or an SMT_ERR_* code */
            long long e;
            rc = smt_parse_ll(w[6], wl[6], SMT_ERR_LIMIT, 0, &e);
            if (!rc && e != 0 && e > SMT_ERR_IO)
                rc = SMT_ERR_LIMIT;
            if (rc)
                return smt_err_set(err, rc, "%s:%llu: %s '%.*s' is not 0 nor an error code",
                                   path, ln, field[j], (int)(wl[6] > 40 ? 40 : wl[6]), w[6]);
            v[j] = (uint64_t)e;
            continue;
        }
        if ((rc = num(in, w[j + 1], wl[j + 1], lo[j], hi[j], field[j], &v[j], err)))
            return rc;
    }
    dist_chunk *c = &d->chunks[v[0]];
    if (v[1] != c->start || v[2] != c->end || v[3] != c->first_line || v[4] != c->nlines)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s:%llu: chunk %llu is not the input's chunk",
                           path, ln, (unsigned long long)v[0]);
    for (int k = 0; k < n_out; k++) {
        const char *s = w[8 + k], *colon = memchr(s, ':', wl[8 + k]);
        uint64_t size = 0, hash = 0;
        if (!colon)
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%llu: output %d: not SIZE:CHECKSUM", path,
                               ln, k);
        int rc = num(in, s, (size_t)(colon - s), 0, LLONG_MAX, "a part's size", &size, err);
        if (rc)
            return rc;
        if (hex64(colon + 1, wl[8 + k] - (size_t)(colon - s) - 1, &hash))
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s:%llu: output %d: the checksum is not 16 hex digits", path, ln,
                               k);
        c->size[k] = size;
        c->hash[k] = hash;
    }
    c->done = 1;
    c->rc = (int32_t)(int64_t)v[5];
    c->complete = 1;
    if (c->rc)
        snprintf(c->msg, sizeof c->msg,
                 "a line was refused (its warning was printed by the earlier run)");
    return 0;
}

int dist_manifest_read_done(smt_lines *in, dist *d, smt_err *err)
{
    char *line;
    size_t len;
    int got;
    while ((got = smt_lines_next(in, &line, &len, err)) > 0) {
        if (!smt_lines_had_newline(in))
            break; /* torn by a failure while written: not a finished chunk */
        const char *w[MAX_WORDS];
        size_t wl[MAX_WORDS];
        size_t n = words(line, len, w, wl, MAX_WORDS);
        if (n == 0 || wl[0] != 4 || memcmp(w[0], "done", 4))
            return smt_err_set(err, SMT_ERR_PARSE, "%s:%llu: not a chunk line (done ...)",
                               smt_lines_path(in), (unsigned long long)smt_lines_lineno(in));
        int rc = done_line(in, d, w, wl, n, err);
        if (rc)
            return rc;
    }
    return got < 0 ? got : 0;
}
