/* test_dist.c — the job runner's parts that need no MPI (dist/private/dist_core.h): chunk boundaries
 * at line starts covering the input exactly, the manifest (written, read back, a job that does not
 * fit refused, every value range-checked, the fuzzing findings), the fingerprint over the files a
 * job reads, and the part files' assembly with their checksums. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_core.h"
#include "smt_buf.h"
#include "smt_hash.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }
TestSuite(dist, .init = setup, .fini = teardown);

static int discard(void *ctx, smt_lines *in, FILE **outs, uint64_t *words, int *complete,
                   smt_err *err)
{
    (void)ctx, (void)in, (void)outs, (void)words, (void)complete, (void)err;
    return 0;
}

/* A job over input with n_out outputs, its parts in dir/parts. */
static void make_job(dist_job *job, dist *d, const char *input, int n_out)
{
    memset(job, 0, sizeof *job);
    memset(d, 0, sizeof *d);
    job->tool = "fastsmt";
    job->input = input;
    job->n_out = n_out;
    job->process = discard;
    d->job = job;
    d->mode = DIST_MODE_FILE;
    snprintf(d->dir, sizeof d->dir, "%s/parts", dir);
    snprintf(d->manifest, sizeof d->manifest, "%s/manifest", d->dir);
    cr_assert_eq(mkdir(d->dir, 0777), 0);
}

/* A job with two outputs over an input of 100 bytes, time 5 ns, and its manifest's head. */
#define HEAD_100 "fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 30 2\n"
static void job_of_100_bytes(dist_job *job, dist *d)
{
    make_job(job, d, "in.txt", 2);
    d->in_size = 100;
    d->in_mtime = 5;
}

/* The whole plan of path cut every C bytes, as the ranks make it together. */
static dist_chunk *plan_of(const char *path, uint64_t C, size_t *n)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0);
    uint64_t size = (uint64_t)st.st_size;
    smt_err e;
    cr_assert_eq(dist_plan_size(size, C, "test", n, &e), 0, "%s", e.msg);
    int fd = open(path, O_RDONLY);
    cr_assert_geq(fd, 0);
    uint64_t *v = calloc(*n + 1, sizeof *v);
    dist_chunk *c = calloc(*n + 1, sizeof *c);
    for (size_t i = 1; i < *n; i++)
        cr_assert_eq(dist_line_start_at(fd, path, i * C, size, &v[i], &e), 0, "%s", e.msg);
    dist_chunk_bounds(c, *n, v, size);
    for (size_t i = 0; i < *n; i++)
        cr_assert_eq(dist_count_lines(fd, path, c[i].start, c[i].end, &v[i], &e), 0, "%s", e.msg);
    dist_chunk_lines(c, *n, v);
    close(fd);
    free(v);
    cr_assert_eq(dist_plan_check(c, *n, size, path, &e), 0, "C %llu: %s", (unsigned long long)C,
                 e.msg);
    return c;
}

/* Every chunk starts at a line start, the chunks read as ranges give the file's lines in order,
 * numbered as in the whole file: for chunk sizes from 1 byte to more than the file. */
Test(dist, chunks_start_at_lines_and_cover_the_input)
{
    const char *text = "uno dos\n\nuna linea mucho mas larga que los trozos pequenos\r\ntres\n"
                       "x\ncuatro cinco seis\nsin fin";
    size_t len = strlen(text);
    char *p = tu_join(dir, "in.txt");
    cr_assert_eq(tu_write_file(p, text, len), 0);
    uint64_t sizes[] = {1, 2, 3, 7, 9, 16, 40, len - 1, len, len + 5, 1u << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t n;
        dist_chunk *c = plan_of(p, sizes[s], &n);
        cr_assert_eq(n, (len + sizes[s] - 1) / sizes[s]);
        uint64_t lines = 0;
        smt_buf joined = {0};
        for (size_t i = 0; i < n; i++) {
            cr_assert(c[i].start == 0 || c[i].start == len || text[c[i].start - 1] == '\n',
                      "C %llu chunk %zu at %llu",
                      (unsigned long long)sizes[s], i, (unsigned long long)c[i].start);
            cr_assert_eq(c[i].first_line, lines);
            smt_lines *r;
            smt_err e;
            cr_assert_eq(smt_lines_open_range(&r, p, c[i].start, c[i].end, c[i].first_line, &e), 0,
                         "%s", e.msg);
            char *line;
            size_t ll;
            int got;
            while ((got = smt_lines_next(r, &line, &ll, &e)) == 1) {
                cr_assert_eq(smt_lines_lineno(r), lines + 1);
                lines++;
                smt_buf_append(&joined, line, ll);
                smt_buf_putc(&joined, '|');
            }
            cr_assert_eq(got, 0);
            cr_assert_eq(lines, c[i].first_line + c[i].nlines, "C %llu chunk %zu",
                         (unsigned long long)sizes[s], i);
            smt_lines_close(r);
        }
        cr_assert_eq(lines, 7);
        smt_buf_putc(&joined, 0);
        cr_assert_str_eq(joined.data, "uno dos||una linea mucho mas larga que los trozos pequenos|"
                                      "tres|x|cuatro cinco seis|sin fin|");
        smt_buf_free(&joined);
        free(c);
    }
    free(p);
}

Test(dist, plan_sizes_are_range_checked)
{
    size_t n;
    smt_err e;
    cr_assert_eq(dist_plan_size(100, 0, "m", &n, &e), SMT_ERR_LIMIT);
    cr_assert(strstr(e.msg, "chunk size 0 is out of range"), "%s", e.msg);
    cr_assert_eq(dist_plan_size(100, UINT64_MAX, "m", &n, &e), SMT_ERR_LIMIT);
    cr_assert_eq(dist_plan_size(100, DIST_CHUNK_MAX + 1, "m", &n, &e), SMT_ERR_LIMIT);
    cr_assert_eq(dist_plan_size(100, DIST_CHUNK_MAX, "m", &n, &e), 0);
    cr_assert_eq(n, 1);
    cr_assert_eq(dist_plan_size(0, 5, "m", &n, &e), 0);
    cr_assert_eq(n, 0);
    cr_assert_eq(dist_plan_size(100, 7, "m", &n, &e), 0);
    cr_assert_eq(n, 15);
    cr_assert_eq(dist_plan_size(DIST_MAX_CHUNKS + 1, 1, "m", &n, &e), SMT_ERR_LIMIT);
    cr_assert_eq(dist_auto_chunk(100, 4), 4096);
    cr_assert_eq(dist_auto_chunk(1ull << 40, 1), 64u << 20);
}

Test(dist, a_plan_that_does_not_cover_the_input_is_refused)
{
    dist_chunk c[3];
    memset(c, 0, sizeof c);
    uint64_t starts[3] = {0, 10, 20};
    dist_chunk_bounds(c, 3, starts, 30);
    smt_err e;
    cr_assert_eq(dist_plan_check(c, 3, 30, "in", &e), 0);
    cr_assert_eq(dist_plan_check(c, 3, 31, "in", &e), SMT_ERR_CORRUPT); /* short of the end */
    cr_assert(strstr(e.msg, "does not cover the input"), "%s", e.msg);
    cr_assert_eq(dist_plan_check(c, 2, 30, "in", &e), SMT_ERR_CORRUPT);
    cr_assert_eq(dist_plan_check(c, 0, 30, "in", &e), SMT_ERR_CORRUPT); /* no chunk at all */
    cr_assert_eq(dist_plan_check(c, 0, 0, "in", &e), 0);
    c[1].start = 11; /* a gap */
    cr_assert_eq(dist_plan_check(c, 3, 30, "in", &e), SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "chunk 1"), "%s", e.msg);
    c[1].start = 9; /* an overlap */
    cr_assert_eq(dist_plan_check(c, 3, 30, "in", &e), SMT_ERR_CORRUPT);
    /* a line longer than the chunks: empty chunks, never going back */
    uint64_t back[3] = {0, 25, 20};
    dist_chunk_bounds(c, 3, back, 30);
    cr_assert_eq(c[2].start, 25);
    cr_assert_eq(c[1].end, 25);
    cr_assert_eq(dist_plan_check(c, 3, 30, "in", &e), 0);
}

/* A manifest's text, read with the head and the chunk lines through one reader. */
static int read_text(dist *d, const char *text, uint64_t fp, int *stage, smt_err *e)
{
    char *copy = strdup(text);
    smt_lines *in;
    cr_assert_eq(smt_lines_open_mem(&in, "man", copy, strlen(copy), 0, e), 0);
    dist_head h;
    *stage = 0;
    int rc = dist_manifest_read_head(in, &h, e);
    if (!rc) {
        *stage = 1;
        rc = dist_manifest_check(d, &h, fp, e);
    }
    if (!rc) {
        *stage = 2;
        free(d->chunks);
        d->chunks = calloc(d->n_chunks + 1, sizeof *d->chunks);
        uint64_t *starts = calloc(d->n_chunks + 1, sizeof *starts);
        uint64_t *counts = calloc(d->n_chunks + 1, sizeof *counts);
        for (size_t i = 0; i < d->n_chunks; i++)
            starts[i] = i * d->C, counts[i] = 1;
        dist_chunk_bounds(d->chunks, d->n_chunks, starts, d->in_size);
        dist_chunk_lines(d->chunks, d->n_chunks, counts);
        free(starts);
        free(counts);
        rc = dist_manifest_read_done(in, d, e);
    }
    smt_lines_close(in);
    free(copy);
    return rc;
}

Test(dist, manifest_written_and_read_back)
{
    dist_job job;
    dist d;
    make_job(&job, &d, "in.txt", 2);
    d.in_size = 100;
    d.in_mtime = 1700000000123456789ull;
    d.C = 30;
    d.n_chunks = 4;
    d.chunks = calloc(4, sizeof *d.chunks);
    uint64_t starts[4] = {0, 30, 60, 90}, counts[4] = {3, 2, 4, 1};
    dist_chunk_bounds(d.chunks, 4, starts, 100);
    dist_chunk_lines(d.chunks, 4, counts);
    smt_err e;
    cr_assert_eq(dist_manifest_create(&d, 0x0123456789abcdefull, &e), 0, "%s", e.msg);
    FILE *f = fopen(d.manifest, "a");
    for (size_t i = 0; i < 4; i += 2) { /* chunks 0 and 2 finished, 2 with a refused line */
        d.chunks[i].complete = 1;
        d.chunks[i].rc = i ? SMT_ERR_LIMIT : 0;
        d.chunks[i].size[0] = 10 + i, d.chunks[i].hash[0] = 0xfeedull + i;
        d.chunks[i].size[1] = 0, d.chunks[i].hash[1] = UINT64_MAX;
        cr_assert_eq(dist_manifest_put_done(f, &d, i), 0);
    }
    fputs("done 3 90 1", f); /* torn by a failure: not finished */
    cr_assert_eq(fclose(f), 0);

    dist r;
    r = d;
    r.chunks = NULL;
    r.C = 0;
    r.n_chunks = 0;
    smt_lines *in;
    cr_assert_eq(smt_lines_open(&in, d.manifest, 0, &e), 0);
    dist_head h;
    cr_assert_eq(dist_manifest_read_head(in, &h, &e), 0, "%s", e.msg);
    cr_assert_eq(h.fp, 0x0123456789abcdefull);
    cr_assert_eq(h.in_size, 100);
    cr_assert_eq(h.in_mtime, 1700000000123456789ull);
    cr_assert_eq(h.C, 30);
    cr_assert_eq(h.n_out, 2);
    cr_assert_eq(dist_manifest_check(&r, &h, 0x0123456789abcdefull, &e), 0, "%s", e.msg);
    cr_assert_eq(r.C, 30);
    cr_assert_eq(r.n_chunks, 4);
    r.chunks = calloc(4, sizeof *r.chunks);
    dist_chunk_bounds(r.chunks, 4, starts, 100);
    dist_chunk_lines(r.chunks, 4, counts);
    int rc = dist_manifest_read_done(in, &r, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    smt_lines_close(in);
    int done[4] = {1, 0, 1, 0};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(r.chunks[i].done, done[i], "chunk %d", i);
        if (done[i]) {
            cr_assert_eq(r.chunks[i].size[0], 10 + (uint64_t)i);
            cr_assert_eq(r.chunks[i].hash[0], 0xfeedull + (uint64_t)i);
            cr_assert_eq(r.chunks[i].hash[1], UINT64_MAX);
            cr_assert_eq(r.chunks[i].complete, 1);
        }
    }
    cr_assert_eq(r.chunks[0].rc, 0);
    cr_assert_eq(r.chunks[2].rc, SMT_ERR_LIMIT);
    cr_assert(strstr(r.chunks[2].msg, "refused"), "%s", r.chunks[2].msg);
    /* their parts are not there: done again */
    dist_parts_present(&r);
    cr_assert_eq(r.chunks[0].done, 0);
    cr_assert_eq(r.chunks[2].done, 0);
    free(r.chunks);
    free(d.chunks);
}

/* A manifest that does not describe the job at hand is refused, saying why. */
Test(dist, manifest_of_another_job_is_refused)
{
    dist_job job;
    dist d;
    job_of_100_bytes(&job, &d);
    const char *ok = HEAD_100;
    smt_err e;
    int stage;
    cr_assert_eq(read_text(&d, ok, 0xaa, &stage, &e), 0, "%s", e.msg);
    cr_assert_eq(read_text(&d, ok, 0xab, &stage, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "other flags") && strstr(e.msg, "changed since"), "%s", e.msg);
    d.in_size = 101;
    cr_assert_eq(read_text(&d, ok, 0xaa, &stage, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "the input in.txt changed"), "%s", e.msg);
    d.in_size = 100;
    d.in_mtime = 6;
    cr_assert_eq(read_text(&d, ok, 0xaa, &stage, &e), SMT_ERR_ARG);
    d.in_mtime = 5;
    job.n_out = 3;
    cr_assert_eq(read_text(&d, ok, 0xaa, &stage, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "other outputs"), "%s", e.msg);
    job.n_out = 2;
    /* a chunk line of another plan (another chunk size, another input) */
    const char *other = HEAD_100 "done 1 31 60 1 1 0 1 4:0000000000000001 0:0000000000000002\n";
    cr_assert_eq(read_text(&d, other, 0xaa, &stage, &e), SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "man:3: chunk 1 is not the input's chunk"), "%s", e.msg);
    free(d.chunks);
}

/* Every value of a manifest has its range; a damaged line names file:line. */
Test(dist, manifest_values_are_range_checked)
{
    struct {
        const char *text; /* after head when it starts with "done" */
        int rc, stage;
        const char *msg;
    } cases[] = {
        {"", SMT_ERR_FORMAT, 0, "man:1: not a fastsmt job manifest"},
        {"fastsmt-dist-manifest 2\n", SMT_ERR_FORMAT, 0, "man:1:"},
        {"fastsmt-dist-manifest 1\n", SMT_ERR_PARSE, 0, "man:2: damaged job line"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 30 2", SMT_ERR_PARSE, 0, "man:2:"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 0 2\n", SMT_ERR_LIMIT, 0,
         "man:2: the chunk size '0' is out of range"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 18446744073709551615 2\n",
         SMT_ERR_LIMIT, 0, "man:2: the chunk size"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 1099511627777 2\n", SMT_ERR_LIMIT, 0,
         "the chunk size"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 -30 2\n", SMT_ERR_LIMIT, 0,
         "the chunk size"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 30 0\n", SMT_ERR_LIMIT, 0,
         "the output count"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 30 7\n", SMT_ERR_LIMIT, 0,
         "the output count"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 3x 2\n", SMT_ERR_PARSE, 0,
         "not an integer"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa -1 5 30 2\n", SMT_ERR_LIMIT, 0,
         "the input's size"},
        {"fastsmt-dist-manifest 1\njob 0xaa 100 5 30 2\n", SMT_ERR_PARSE, 0, "fingerprint"},
        {"fastsmt-dist-manifest 1\njob 00000000000000aa 100 5 30 2 9\n", SMT_ERR_PARSE, 0,
         "damaged job line"},
        {"done 4 0 30 0 1 0 1 1:0000000000000000 1:0000000000000000\n", SMT_ERR_LIMIT, 2,
         "man:3: the chunk '4' is out of range"},
        {"done 0 0 30 0 1 0 0 1:0000000000000000 1:0000000000000000\n", SMT_ERR_LIMIT, 2,
         "completeness"},
        {"done 0 0 30 0 1 7 1 1:0000000000000000 1:0000000000000000\n", SMT_ERR_LIMIT, 2,
         "error code"},
        {"done 0 0 30 0 1 -1 1 1:0000000000000000 1:0000000000000000\n", SMT_ERR_LIMIT, 2,
         "error code"},
        {"done 0 0 30 0 1 0 1 1:000000000000000g 1:0000000000000000\n", SMT_ERR_PARSE, 2,
         "checksum"},
        {"done 0 0 30 0 1 0 1 1:0000000000000000\n", SMT_ERR_PARSE, 2, "man:3: damaged chunk line"},
        {"done 0 0 30 0 1 0 1 -1:0000000000000000 1:0000000000000000\n", SMT_ERR_LIMIT, 2,
         "a part's size"},
        {"done 0 0 30 0 1 0 1 10000000000000000000000:0000000000000000 1:0000000000000000\n",
         SMT_ERR_LIMIT, 2, "a part's size"},
        {"done 0 0 30 0 1 0 1 5 1:0000000000000000\n", SMT_ERR_PARSE, 2, "SIZE:CHECKSUM"},
        {"gone 0\n", SMT_ERR_PARSE, 2, "man:3: not a chunk line"},
    };
    dist_job job;
    dist d;
    job_of_100_bytes(&job, &d);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", strncmp(cases[i].text, "done", 4) &&
                                                    strncmp(cases[i].text, "gone", 4)
                                                ? ""
                                                : HEAD_100,
                 cases[i].text);
        smt_err e;
        int stage;
        int rc = read_text(&d, text, 0xaa, &stage, &e);
        cr_assert_eq(rc, cases[i].rc, "case %zu: %d (%s)", i, rc, rc ? e.msg : "");
        cr_assert_eq(stage, cases[i].stage, "case %zu", i);
        cr_assert(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
    }
    free(d.chunks);
}

/* The manifests an outside fuzzing campaign found (a chunk size of 0: division by zero; 2^64-1:
 * a plan of no chunk, the job "done" having translated nothing), with the job's own values in
 * place of @FP@ @SIZE@ @MTIME@, as a real job of 300 lines would have them. */
Test(dist, fuzzing_findings_are_refused)
{
    const char *names[2] = {"dist/dist-chunk-bytes-zero.manifest",
                            "dist/dist-chunk-bytes-wrap.manifest"};
    dist_job job;
    dist d;
    make_job(&job, &d, "in.txt", 2);
    d.in_size = 6000;
    d.in_mtime = 1764172620000000000ull;
    for (int i = 0; i < 2; i++) {
        char *path = tu_data_path(names[i]);
        size_t len;
        char *raw = tu_read_file(path, &len);
        cr_assert_not_null(raw, "%s", path);
        smt_buf t = {0};
        for (const char *p = raw; p < raw + len;) {
            if (!strncmp(p, "@FP@", 4))
                smt_buf_puts(&t, "1234567890abcdef"), p += 4;
            else if (!strncmp(p, "@SIZE@", 6))
                smt_buf_puts(&t, "6000"), p += 6;
            else if (!strncmp(p, "@MTIME@", 7))
                smt_buf_puts(&t, "1764172620000000000"), p += 7;
            else
                smt_buf_putc(&t, *p++);
        }
        smt_buf_putc(&t, 0);
        smt_err e;
        int stage;
        cr_assert_eq(read_text(&d, t.data, 0x1234567890abcdefull, &stage, &e), SMT_ERR_LIMIT,
                     "%s", names[i]);
        cr_assert_eq(stage, 0);
        cr_assert(strstr(e.msg, "man:2: the chunk size") && strstr(e.msg, "out of range"), "%s",
                  e.msg);
        /* the same manifest with a chunk size in range is accepted: the size is what is refused */
        char *c = strstr(t.data, i ? "18446744073709551615" : " 0 2");
        cr_assert_not_null(c);
        if (i)
            memcpy(c, "00000000000000000040", 20);
        else
            memcpy(c, " 9 2", 4);
        cr_assert_eq(read_text(&d, t.data, 0x1234567890abcdefull, &stage, &e), 0, "%s", e.msg);
        cr_assert_eq(d.n_chunks, i ? 150 : 667);
        smt_buf_free(&t);
        free(raw);
        free(path);
    }
    free(d.chunks);
}

/* The fingerprint covers the flags and every file the job reads: its size and time. */
Test(dist, fingerprint_covers_the_files_a_job_reads)
{
    char *a = tu_join(dir, "moses.ini"), *b = tu_join(dir, "phrase-table");
    cr_assert_eq(tu_write_file(a, "[feature]\n", 10), 0);
    cr_assert_eq(tu_write_file(b, "x ||| y ||| 1\n", 14), 0);
    const char *files[2] = {a, b};
    dist_job job;
    memset(&job, 0, sizeof job);
    job.tool = "fastsmt";
    job.fingerprint = "-n-best-list\nk.nbest\n5\n";
    job.n_out = 2;
    job.files = files;
    job.n_files = 2;
    uint64_t fp0, fp;
    smt_err e;
    cr_assert_eq(dist_fingerprint(&job, &fp0, &e), 0, "%s", e.msg);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_eq(fp, fp0);
    /* a table rewritten with the same size, only its time differs */
    struct timespec ts[2] = {{0, UTIME_OMIT}, {1000000000, 5}};
    cr_assert_eq(utimensat(AT_FDCWD, b, ts, 0), 0);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_neq(fp, fp0, "a table's time is not in the fingerprint");
    uint64_t fp1 = fp;
    ts[1].tv_nsec = 6; /* a nanosecond later */
    cr_assert_eq(utimensat(AT_FDCWD, b, ts, 0), 0);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_neq(fp, fp1);
    /* the same time, another size */
    cr_assert_eq(tu_write_file(b, "x ||| y ||| 0.5\n", 16), 0);
    cr_assert_eq(utimensat(AT_FDCWD, b, ts, 0), 0);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_neq(fp, fp1, "a table's size is not in the fingerprint");
    /* the ini too */
    fp1 = fp;
    cr_assert_eq(tu_write_file(a, "[feature]\n\n", 11), 0);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_neq(fp, fp1, "the ini is not in the fingerprint");
    /* flags, outputs, tool */
    fp1 = fp;
    job.fingerprint = "-n-best-list\nk.nbest\n7\n";
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), 0);
    cr_assert_neq(fp, fp1);
    /* a file that is gone fails, naming it */
    unlink(b);
    cr_assert_eq(dist_fingerprint(&job, &fp, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, b) && strstr(e.msg, "a file the job reads"), "%s", e.msg);
    free(a);
    free(b);
}

/* Parts written, checksummed, assembled at their offsets; a damaged or short part is refused. */
Test(dist, parts_assembled_with_their_checksums)
{
    dist_job job;
    dist d;
    make_job(&job, &d, "in.txt", 1);
    d.rank = 3;
    d.n_chunks = 3;
    d.chunks = calloc(3, sizeof *d.chunks);
    const char *text[3] = {"first part\n", "", "second, longer part\nwith two lines\n"};
    char name[DIST_PATH_MAX + 64];
    dist_part_name(&d, name, sizeof name, 7, 1, 1);
    cr_assert(strstr(name, "/parts/.c000007.o1.tmp3"), "%s", name);
    smt_err e;
    for (size_t i = 0; i < 3; i++) {
        dist_part_name(&d, name, sizeof name, i, 0, 0);
        cr_assert_eq(tu_write_file(name, text[i], strlen(text[i])), 0);
        cr_assert_eq(dist_hash_file(name, &d.chunks[i].size[0], &d.chunks[i].hash[0], &e), 0);
        cr_assert_eq(d.chunks[i].size[0], strlen(text[i]));
        cr_assert_eq(d.chunks[i].hash[0], smt_hash_bytes(text[i], strlen(text[i])));
        d.chunks[i].done = 1;
    }
    char *out = tu_join(dir, "out.txt");
    int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    cr_assert_geq(fd, 0);
    uint64_t off = 0;
    for (size_t i = 3; i-- > 0;) { /* any order: each part at its offset */
        off = 0;
        for (size_t j = 0; j < i; j++)
            off += d.chunks[j].size[0];
        dist_part_name(&d, name, sizeof name, i, 0, 0);
        cr_assert_eq(dist_copy_part(name, d.chunks[i].size[0], d.chunks[i].hash[0], fd, off, NULL,
                                    NULL, &e),
                     0, "%s", e.msg);
    }
    close(fd);
    size_t len;
    char *got = tu_read_file(out, &len);
    cr_assert_eq(len, strlen(text[0]) + strlen(text[2]));
    cr_assert(!memcmp(got, "first part\nsecond, longer part\nwith two lines\n", len));
    free(got);
    /* handed over in memory */
    char *keep = NULL;
    dist_part_name(&d, name, sizeof name, 2, 0, 0);
    cr_assert_eq(dist_copy_part(name, d.chunks[2].size[0], d.chunks[2].hash[0], -1, 0, NULL, &keep,
                                &e),
                 0);
    cr_assert(!memcmp(keep, text[2], strlen(text[2])));
    free(keep);
    /* a flipped bit: the checksum */
    cr_assert_eq(tu_flip_bit(name, 5, 0), 0);
    cr_assert_eq(dist_copy_part(name, d.chunks[2].size[0], d.chunks[2].hash[0], -1, 0, NULL, NULL,
                                &e),
                 SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, name) && strstr(e.msg, "checksum"), "%s", e.msg);
    /* shorter than the manifest says */
    cr_assert_eq(tu_truncate(name, 4), 0);
    cr_assert_eq(dist_copy_part(name, d.chunks[2].size[0], d.chunks[2].hash[0], -1, 0, NULL, NULL,
                                &e),
                 SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "4 bytes"), "%s", e.msg);
    /* a part of another size or gone is done again; the others stay done */
    dist_parts_present(&d);
    cr_assert_eq(d.chunks[0].done, 1);
    cr_assert_eq(d.chunks[1].done, 1);
    cr_assert_eq(d.chunks[2].done, 0);
    dist_part_name(&d, name, sizeof name, 0, 0, 0);
    unlink(name);
    dist_parts_present(&d);
    cr_assert_eq(d.chunks[0].done, 0);
    /* removed with the manifest, the temporaries a killed rank left and the folder */
    cr_assert_eq(tu_write_file(d.manifest, "x\n", 2), 0);
    dist_part_name(&d, name, sizeof name, 1, 0, 1);
    cr_assert_eq(tu_write_file(name, "half", 4), 0);
    d.rank = 12; /* a rank of the killed job beyond the resumed job's */
    dist_part_name(&d, name, sizeof name, 123456, 0, 1);
    cr_assert_eq(tu_write_file(name, "half", 4), 0);
    char *other = tu_join(d.dir, ".c000001.o0.tmp3.mine"); /* not ours: kept, and the folder */
    cr_assert_eq(tu_write_file(other, "x", 1), 0);
    dist_parts_remove(&d);
    struct stat st;
    cr_assert_eq(stat(d.dir, &st), 0, "the folder holding a file of another was removed");
    cr_assert_eq(stat(name, &st), -1, "a temporary of a killed rank was left");
    cr_assert_eq(stat(d.manifest, &st), -1);
    unlink(other);
    free(other);
    dist_parts_remove(&d);
    cr_assert_neq(stat(d.dir, &st), 0);
    free(out);
    free(d.chunks);
}
