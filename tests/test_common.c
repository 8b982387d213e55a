/* Tests of common/: container format (round trip, truncation, bit flips, foreign files), the line
 * reader (plain, gzip, xz, bzip2, zstd told by their magic; CRLF, long and unterminated lines,
 * byte-order mark; truncated or corrupt data, directories and I/O errors as errors naming file:line;
 * pipes answered line by line), the vocabulary, the word splitter and the growable buffer.
 * The thread pool and the reader's helper thread are tested in threaded_common.c (run under TSan). */
#define _GNU_SOURCE /* pipe2, dup2, mmap of the I/O error test */
#include <bzlib.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <lzma.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "smt_bleu.h"
#include "smt_buf.h"
#include "smt_file.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_sniff.h"
#include "smt_vocab.h"
#include "smt_words.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(file, .init = setup, .fini = teardown);

static char *write_sample(const char *name)
{
    char *path = tu_join(dir, name);
    smt_writer *w;
    smt_err e;
    cr_assert_eq(smt_writer_open(&w, path, "TST1", 7, &e), 0, "%s", e.msg);
    uint32_t params[2] = {31, 5};
    cr_assert_eq(smt_writer_set_params(w, params, sizeof params, &e), 0);
    uint64_t nums[1000];
    for (int i = 0; i < 1000; i++)
        nums[i] = (uint64_t)i * 977u;
    cr_assert_eq(smt_writer_section(w, "numbers", nums, sizeof nums, &e), 0);
    cr_assert_eq(smt_writer_begin(w, "text", &e), 0);
    cr_assert_eq(smt_writer_write(w, "hello ", 6, &e), 0);
    cr_assert_eq(smt_writer_write(w, "world", 5, &e), 0);
    cr_assert_eq(smt_writer_end(w, &e), 0);
    cr_assert_eq(smt_writer_finish(w, &e), 0, "%s", e.msg);
    return path;
}

Test(file, round_trip)
{
    char *path = write_sample("a.bin");
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    uint64_t size;
    const uint64_t *nums = smt_mapped_section(m, "numbers", &size);
    cr_assert_not_null(nums);
    cr_assert_eq(size, 8000);
    cr_assert_eq((uintptr_t)nums % SMT_FILE_ALIGN, 0);
    cr_assert_eq(nums[999], 999u * 977u);
    const char *text = smt_mapped_section(m, "text", &size);
    cr_assert_eq(size, 11);
    cr_assert_eq(memcmp(text, "hello world", 11), 0);
    cr_assert_eq((uintptr_t)text % SMT_FILE_ALIGN, 0);
    cr_assert_null(smt_mapped_section(m, "absent", NULL));
    size_t psize;
    const uint32_t *params = smt_mapped_params(m, &psize);
    cr_assert_eq(psize, 8);
    cr_assert_eq(params[0], 31);
    const void *d;
    uint64_t count;
    cr_assert_eq(smt_mapped_require(m, "numbers", 8, 1000, &d, &count, &e), 0);
    cr_assert_eq(smt_mapped_require(m, "numbers", 8, 999, &d, &count, &e), SMT_ERR_CORRUPT);
    cr_assert_eq(smt_mapped_require(m, "text", 8, UINT64_MAX, &d, &count, &e), SMT_ERR_CORRUPT);
    smt_mapped_close(m);
    /* the same through read() instead of mmap */
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, SMT_OPEN_READ | SMT_OPEN_VERIFY, &e), 0);
    smt_mapped_close(m);
    free(path);
}

Test(file, wrong_kind_and_version)
{
    char *path = write_sample("a.bin");
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&m, path, "OTHR", 7, 0, &e), SMT_ERR_FORMAT);
    cr_assert(strstr(e.msg, "TST1") != NULL, "%s", e.msg);
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 8, 0, &e), SMT_ERR_VERSION);
    free(path);
}

Test(file, foreign_and_empty_files)
{
    char *path = tu_join(dir, "foreign");
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(tu_write_file(path, "\\data\\\nngram 1=3\n", 18), 0);
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, 0, &e), SMT_ERR_FORMAT);
    cr_assert(strstr(e.msg, path) != NULL);
    cr_assert_eq(tu_write_file(path, "", 0), 0);
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, 0, &e), SMT_ERR_FORMAT);
    cr_assert_eq(smt_mapped_open(&m, dir, "TST1", 7, 0, &e), SMT_ERR_IO);
    char *missing = tu_join(dir, "missing");
    cr_assert_eq(smt_mapped_open(&m, missing, "TST1", 7, 0, &e), SMT_ERR_IO);
    free(missing);
    free(path);
}

Test(file, every_truncation_fails_cleanly)
{
    char *path = write_sample("a.bin");
    char *copy = tu_join(dir, "t.bin");
    long long size = tu_file_size(path);
    for (long long cut = 0; cut < size; cut += (cut < 5000 ? 97 : 1013)) {
        cr_assert_eq(tu_copy_file(path, copy), 0);
        cr_assert_eq(tu_truncate(copy, (uint64_t)cut), 0);
        smt_mapped *m;
        smt_err e;
        int rc = smt_mapped_open(&m, copy, "TST1", 7, 0, &e);
        cr_assert(rc == SMT_ERR_CORRUPT || rc == SMT_ERR_FORMAT, "cut %lld: rc %d", cut, rc);
    }
    free(copy);
    free(path);
}

/* Whether a byte of the file is covered by a checksum: the header (512 bytes), the used entries of
 * the section table (48 bytes each, after the header) and every section's bytes. The padding
 * between sections and the unused table entries are covered by nothing, so a flip there cannot be
 * detected (and changes nothing a reader sees). */
static int covered(const smt_mapped *m, uint64_t off)
{
    unsigned n = smt_mapped_section_count(m);
    if (off < 512 + (uint64_t)n * 48)
        return 1;
    for (unsigned i = 0; i < n; i++) {
        uint64_t o, sz;
        smt_mapped_section_info(m, i, NULL, &o, &sz, NULL);
        if (off >= o && off < o + sz)
            return 1;
    }
    return 0;
}

Test(file, bit_flips_are_detected)
{
    char *path = write_sample("a.bin");
    char *copy = tu_join(dir, "f.bin");
    long long size = tu_file_size(path);
    smt_mapped *orig;
    smt_err oe;
    cr_assert_eq(smt_mapped_open(&orig, path, "TST1", 7, 0, &oe), 0, "%s", oe.msg);
    int detected = 0, n_covered = 0;
    /* every byte, a different bit each time */
    cr_assert_eq(tu_copy_file(path, copy), 0);
    for (long long off = 0; off < size; off++) {
        if (off > 0) /* undo the previous flip */
            cr_assert_eq(tu_flip_bit(copy, (uint64_t)off - 1, (int)((off - 1) % 8)), 0);
        cr_assert_eq(tu_flip_bit(copy, (uint64_t)off, (int)(off % 8)), 0);
        smt_mapped *m;
        smt_err e;
        int rc = smt_mapped_open(&m, copy, "TST1", 7, SMT_OPEN_VERIFY, &e);
        int must = covered(orig, (uint64_t)off);
        n_covered += must;
        if (rc != 0) {
            detected++;
            cr_assert(must, "offset %lld: a flip outside every checksum was reported: %s", off,
                      e.msg);
        } else {
            smt_mapped_close(m);
            cr_assert(!must, "offset %lld bit %lld: a flip under a checksum went undetected", off,
                      off % 8);
        }
    }
    /* every flip inside the header, the used table entries or a section is caught, and only those
     * (padding and unused table entries hold nothing a reader uses) */
    cr_assert_eq(detected, n_covered);
    cr_assert_gt(n_covered, 8000); /* the sections alone are 8011 bytes */
    cr_assert_lt(n_covered, size);  /* and there is padding the test went through */
    smt_mapped_close(orig);
    /* flip inside a section payload: caught by verify */
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, 0, &e), 0);
    uint64_t off;
    smt_mapped_section_info(m, 0, NULL, &off, NULL, NULL);
    smt_mapped_close(m);
    cr_assert_eq(tu_copy_file(path, copy), 0);
    cr_assert_eq(tu_flip_bit(copy, off + 100, 3), 0);
    cr_assert_eq(smt_mapped_open(&m, copy, "TST1", 7, 0, &e), 0);
    cr_assert_eq(smt_mapped_verify(m, &e), SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "numbers") != NULL, "%s", e.msg);
    smt_mapped_close(m);
    cr_assert_eq(smt_mapped_open(&m, copy, "TST1", 7, SMT_OPEN_VERIFY, &e), SMT_ERR_CORRUPT);
    free(copy);
    free(path);
}

Test(file, aborted_build_leaves_nothing)
{
    char *path = tu_join(dir, "x.bin");
    smt_writer *w;
    smt_err e;
    cr_assert_eq(smt_writer_open(&w, path, "TST1", 1, &e), 0);
    cr_assert_eq(smt_writer_section(w, "a", "abc", 3, &e), 0);
    smt_writer_abort(w);
    cr_assert_eq(tu_file_size(path), -1);
    free(path);
}

/* A foreign file (smt_writer_open_foreign: a KenLM binary) holds exactly the bytes written, only
 * once finished (a temporary name until then); it has no sections or parameters; an aborted one
 * leaves nothing, and an existing file is replaced only by a finished one. */
Test(file, foreign_file_is_the_bytes_written)
{
    char *path = tu_join(dir, "f.bin");
    smt_writer *w;
    smt_err e;
    cr_assert_eq(tu_write_file(path, "old", 3), 0);
    cr_assert_eq(smt_writer_open_foreign(&w, path, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_writer_write(w, "mmap ", 5, &e), 0);
    cr_assert_eq(smt_writer_write(w, "lm\0x", 5, &e), 0);
    cr_assert_eq(smt_writer_begin(w, "a", &e), SMT_ERR_ARG);
    cr_assert_eq(smt_writer_set_params(w, "p", 1, &e), SMT_ERR_ARG);
    cr_assert_eq(tu_file_size(path), 3, "the old file stays until the new one is finished");
    cr_assert_eq(smt_writer_finish(w, &e), 0, "%s", e.msg);
    size_t n;
    char *got = tu_read_file(path, &n);
    cr_assert(got && n == 10 && memcmp(got, "mmap lm\0x", 10) == 0);
    free(got);
    cr_assert_eq(smt_writer_open_foreign(&w, path, &e), 0);
    cr_assert_eq(smt_writer_write(w, "abc", 3, &e), 0);
    smt_writer_abort(w);
    cr_assert_eq(tu_file_size(path), 10, "an aborted file replaces nothing");
    char *other = tu_join(dir, "g.bin");
    cr_assert_eq(smt_writer_open_foreign(&w, other, &e), 0);
    smt_writer_abort(w);
    cr_assert_eq(tu_file_size(other), -1);
    free(other), free(path);
}

Test(file, incomplete_magic_is_reported)
{
    char *path = tu_join(dir, "inc.bin");
    char buf[4096] = SMT_FILE_MAGIC_INCOMPLETE;
    cr_assert_eq(tu_write_file(path, buf, sizeof buf), 0);
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&m, path, "TST1", 7, 0, &e), SMT_ERR_INCOMPLETE);
    free(path);
}

/* Writes the sample through smt_writer to path; returns smt_writer_open's or finish's status. */
static int try_write(const char *path, smt_err *e)
{
    smt_writer *w;
    int rc = smt_writer_open(&w, path, "TST1", 7, e);
    if (rc)
        return rc;
    if ((rc = smt_writer_section(w, "text", "hello", 5, e))) {
        smt_writer_abort(w);
        return rc;
    }
    return smt_writer_finish(w, e);
}

/* Nothing but the given names is left in dir (no temporary file). */
static void only_in_dir(const char *name1, const char *name2)
{
    char *cmd = NULL, *out = NULL;
    cr_assert(asprintf(&cmd, "ls -A '%s'", dir) > 0);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    char want[256];
    snprintf(want, sizeof want, "%s\n%s%s", name1, name2 ? name2 : "", name2 ? "\n" : "");
    cr_assert_str_eq(out, want);
    free(cmd);
    free(out);
}

/* A symbolic link at the output path is written through to its target and stays a link. */
Test(file, symlink_output_is_written_through)
{
    char *real = tu_join(dir, "real.bin"), *link = tu_join(dir, "link.bin");
    cr_assert_eq(tu_write_file(real, "old", 3), 0);
    cr_assert_eq(symlink("real.bin", link), 0);
    smt_err e;
    cr_assert_eq(try_write(link, &e), 0, "%s", e.msg);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link was replaced by a regular file");
    smt_mapped *m;
    cr_assert_eq(smt_mapped_open(&m, real, "TST1", 7, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    smt_mapped_close(m);
    only_in_dir("link.bin", "real.bin");
    /* a dangling link is refused, as cp refuses it, and stays */
    cr_assert_eq(unlink(real), 0);
    cr_assert_eq(try_write(link, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "link.bin") && strstr(e.msg, "symbolic link"), "%s", e.msg);
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode));
    only_in_dir("link.bin", NULL);
    free(real);
    free(link);
}

/* Anything at the output path that is not a regular file is refused and left as it was: a fifo, a
 * directory, a character device (made when the test runs as root), or a link to one of them. */
Test(file, non_regular_output_is_refused)
{
    char *fifo = tu_join(dir, "fifo"), *sub = tu_join(dir, "sub"), *dev = tu_join(dir, "null");
    cr_assert_eq(mkfifo(fifo, 0600), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    int have_dev = geteuid() == 0 && mknod(dev, S_IFCHR | 0600, makedev(1, 3)) == 0;
    const char *paths[3] = {fifo, sub, dev};
    const char *what[3] = {"fifo", "directory", "character device"};
    mode_t kind[3] = {S_IFIFO, S_IFDIR, S_IFCHR};
    for (int i = 0; i < 3; i++) {
        if (i == 2 && !have_dev)
            continue;
        smt_err e;
        cr_assert_eq(try_write(paths[i], &e), SMT_ERR_IO, "%s", what[i]);
        cr_assert(strstr(e.msg, paths[i]) && strstr(e.msg, what[i]), "%s", e.msg);
        struct stat st;
        cr_assert_eq(lstat(paths[i], &st), 0);
        cr_assert_eq(st.st_mode & S_IFMT, kind[i], "%s was replaced", what[i]);
    }
    /* a link to the fifo is refused too */
    char *link = tu_join(dir, "to-fifo");
    cr_assert_eq(symlink("fifo", link), 0);
    smt_err e;
    cr_assert_eq(try_write(link, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "fifo"), "%s", e.msg);
    /* no temporary file was left behind */
    char *cmd = NULL, *out = NULL;
    cr_assert(asprintf(&cmd, "ls -A '%s' | grep -c tmp-", dir) > 0);
    tu_run(cmd, &out, NULL);
    cr_assert_str_eq(out, "0\n");
    free(cmd), free(out), free(link), free(fifo), free(sub), free(dev);
}

/* ------------------------------------------------------------ output streams and paths */

TestSuite(io, .init = setup, .fini = teardown);

/* A write that failed (a full disk) is reported when the output is flushed or closed, naming the
 * output and the reason; a good output closes with 0. */
Test(io, write_errors_name_the_output)
{
    char *good = tu_join(dir, "good");
    FILE *f = fopen(good, "w");
    cr_assert_not_null(f);
    fputs("text\n", f);
    smt_err e;
    cr_assert_eq(smt_flush_output(f, good, &e), 0);
    cr_assert_eq(smt_close_output(f, good, &e), 0);
    size_t len;
    char *text = tu_read_file(good, &len);
    cr_assert_str_eq(text, "text\n");
    free(text), free(good);
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("/dev/full is absent (a bare chroot?): write errors not tested");
    for (int close = 0; close < 2; close++) {
        f = fopen("/dev/full", "w");
        cr_assert_not_null(f);
        fputs("lost\n", f);
        smt_err_clear(&e);
        int rc = close ? smt_close_output(f, "the output", &e) : smt_flush_output(f, "the output", &e);
        cr_assert_eq(rc, SMT_ERR_IO);
        cr_assert(strstr(e.msg, "the output: write error: ") && strstr(e.msg, strerror(ENOSPC)),
                  "%s", e.msg);
        if (!close) { /* the error flag stays: a second flush (nothing pending) still reports it */
            cr_assert_eq(smt_flush_output(f, "the output", &e), SMT_ERR_IO);
            cr_assert(strstr(e.msg, "the output: write error: "), "%s", e.msg);
            cr_assert_eq(smt_close_output(f, "the output", NULL), SMT_ERR_IO);
        }
    }
}

/* The same file under another name (a link, another spelling) is the same file; "-", NULL, an
 * absent path and a different file are not. */
Test(io, same_file)
{
    char *a = tu_join(dir, "a"), *b = tu_join(dir, "b"), *sym = tu_join(dir, "link");
    char *hard = tu_join(dir, "hard"), *other = NULL, *none = tu_join(dir, "none");
    cr_assert(asprintf(&other, "%s/./a", dir) > 0);
    cr_assert_eq(tu_write_file(a, "a", 1), 0);
    cr_assert_eq(tu_write_file(b, "a", 1), 0);
    cr_assert_eq(symlink("a", sym), 0);
    cr_assert_eq(link(a, hard), 0);
    cr_assert_eq(smt_same_file(a, a), 1);
    cr_assert_eq(smt_same_file(a, sym), 1);
    cr_assert_eq(smt_same_file(hard, a), 1);
    cr_assert_eq(smt_same_file(other, a), 1);
    cr_assert_eq(smt_same_file(a, b), 0);
    cr_assert_eq(smt_same_file(a, none), 0);
    cr_assert_eq(smt_same_file(none, none), 0);
    cr_assert_eq(smt_same_file(a, NULL), 0);
    cr_assert_eq(smt_same_file("-", "-"), 0);
    free(a), free(b), free(sym), free(hard), free(other), free(none);
}

/* A whole file comes back byte for byte (NULs, CRs and a byte-order mark kept, past the first
 * 64 KiB read); a missing file and a directory are errors naming the path. */
Test(io, read_file)
{
    char *a = tu_join(dir, "whole"), *none = tu_join(dir, "none"), *data = NULL;
    size_t n = 200000, len = 0;
    char *want = malloc(n);
    cr_assert_not_null(want);
    for (size_t i = 0; i < n; i++)
        want[i] = i < 3 ? "\xef\xbb\xbf"[i] : (char)(i * 7 % 251);
    cr_assert_eq(tu_write_file(a, want, n), 0);
    smt_err e;
    cr_assert_eq(smt_read_file(a, &data, &len, &e), 0, "%s", e.msg);
    cr_assert(len == n && memcmp(data, want, n) == 0 && data[n] == 0);
    free(data);
    cr_assert_eq(tu_write_file(a, "", 0), 0);
    cr_assert_eq(smt_read_file(a, &data, &len, &e), 0, "%s", e.msg);
    cr_assert(len == 0 && data[0] == 0);
    free(data);
    cr_assert_eq(smt_read_file(none, &data, &len, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, none), "%s", e.msg);
    cr_assert_eq(smt_read_file(dir, &data, &len, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "read error"), "%s", e.msg);
    free(a), free(none), free(want);
}

/* ------------------------------------------------------------ line reader */

TestSuite(lines, .init = setup, .fini = teardown);

static void gz_write(const char *path, const char *text, size_t len)
{
    gzFile g = gzopen(path, "wb");
    cr_assert_not_null(g);
    cr_assert_eq(gzwrite(g, text, (unsigned)len), (int)len);
    gzclose(g);
}

static void check_lines(const char *path, unsigned flags, const char **expect, int n, int last_nl)
{
    smt_lines *r;
    smt_err e;
    cr_assert_eq(smt_lines_open(&r, path, flags, &e), 0, "%s", e.msg);
    char *line;
    size_t len;
    for (int i = 0; i < n; i++) {
        cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1, "line %d", i + 1);
        cr_assert_eq(len, strlen(expect[i]), "line %d: %zu vs %zu", i + 1, len, strlen(expect[i]));
        cr_assert_str_eq(line, expect[i]);
        cr_assert_eq(smt_lines_lineno(r), (uint64_t)i + 1);
    }
    cr_assert_eq(smt_lines_had_newline(r), last_nl);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
    smt_lines_close(r);
}

Test(lines, plain_gzip_crlf_unterminated)
{
    const char *text = "a b\r\n\nthird line\nlast";
    const char *expect[] = {"a b", "", "third line", "last"};
    char *p = tu_join(dir, "t.txt"), *g = tu_join(dir, "t.txt.gz");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    gz_write(g, text, strlen(text));
    for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
        check_lines(p, flags, expect, 4, 0);
        check_lines(g, flags, expect, 4, 0);
    }
    free(p);
    free(g);
}

/* A stream the caller has (smt_lines_open_stream) reads as a file: from where it stands, the
 * marks and "\r\n" dropped, gzip decompressed, a read error naming the stream and line; the stream
 * stays open. */
Test(lines, stream_reads_as_a_file)
{
    const char *text = "\xef\xbb\xbf" "a b\r\n\nthird line\nlast";
    const char *expect[] = {"a b", "", "third line", "last"};
    char *g = tu_join(dir, "s.gz");
    gz_write(g, text, strlen(text));
    for (int k = 0; k < 3; k++) {
        FILE *f = k == 0 ? fmemopen((void *)text, strlen(text), "r") : fopen(g, "r");
        cr_assert_not_null(f);
        if (k == 2) { /* the caller read the start: the rest is what it gets (gzip magic lost) */
            cr_assert_eq(fgetc(f), 0x1f);
        }
        smt_lines *r;
        smt_err e;
        cr_assert_eq(smt_lines_open_stream(&r, f, "<given>", &e), 0, "%s", e.msg);
        cr_assert_eq(smt_lines_ready(r), 1);
        char *line;
        size_t len;
        if (k == 2) {
            int got = smt_lines_next(r, &line, &len, &e);
            cr_assert_eq(got, 1);
            cr_assert(len > 0 && line[0] == (char)0x8b, "the bytes after the one read");
        } else {
            for (int i = 0; i < 4; i++) {
                cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1, "%d: line %d", k, i + 1);
                cr_assert_str_eq(line, expect[i]);
                cr_assert_eq(len, strlen(expect[i]));
            }
            cr_assert_eq(smt_lines_had_newline(r), 0);
            cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
        }
        smt_lines_close(r);
        cr_assert_eq(fclose(f), 0); /* still the caller's */
    }
    FILE *d = fopen(dir, "r"); /* a folder: glibc opens it, reads fail with EISDIR */
    if (d) {
        smt_lines *r;
        smt_err e;
        cr_assert_eq(smt_lines_open_stream(&r, d, "<given>", &e), 0, "%s", e.msg);
        char *line;
        size_t len;
        cr_assert_eq(smt_lines_next(r, &line, &len, &e), SMT_ERR_IO);
        cr_assert(strstr(e.msg, "<given>:1: read error"), "%s", e.msg);
        smt_lines_close(r);
        fclose(d);
    }
    free(g);
}

/* A part of a file (smt_lines_open_range), as a rank of a job over MPI reads it: the whole file's
 * line numbers, a byte-order mark dropped on line 1 only, "\r\n" as for the whole file. */
Test(lines, range_keeps_the_file_numbering)
{
    const char *text = "\xef\xbb\xbf" "a\r\nb\n\xef\xbb\xbf" "c\r\nd";
    /* bytes: BOM(3) a \r \n = 0..5, "b\n" = 6..7, line 3 starts at 8 */
    char *p = tu_join(dir, "range.txt");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    smt_lines *r;
    smt_err e;
    char *line;
    size_t len;
    cr_assert_eq(smt_lines_open_range(&r, p, 0, 8, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    cr_assert_str_eq(line, "a"); /* the mark of the file's start dropped, "\r\n" ended it */
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    cr_assert_str_eq(line, "b");
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0); /* the range ends at byte 8 */
    smt_lines_close(r);
    cr_assert_eq(smt_lines_open_range(&r, p, 8, strlen(text), 2, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    cr_assert_str_eq(line, "\xef\xbb\xbf" "c"); /* line 3 of the file keeps its bytes */
    cr_assert_eq(smt_lines_lineno(r), 3);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    cr_assert_str_eq(line, "d");
    cr_assert_eq(smt_lines_lineno(r), 4);
    cr_assert_eq(smt_lines_had_newline(r), 0);
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
    smt_lines_close(r);
    cr_assert_eq(smt_lines_open_range(&r, p, 0, 100, 0, &e), SMT_ERR_IO); /* past the end */
    free(p);
}

/* Lines handed over in memory (smt_lines_open_mem) come back as they were: "\r" and marks kept. */
Test(lines, mem_is_verbatim)
{
    char data[] = "x\r\n\xef\xbb\xbfy\n\nz";
    smt_lines *r;
    smt_err e;
    char *line;
    size_t len;
    cr_assert_eq(smt_lines_open_mem(&r, "<mem>", data, strlen(data), 10, &e), 0);
    const char *expect[] = {"x\r", "\xef\xbb\xbfy", "", "z"};
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
        cr_assert_str_eq(line, expect[i]);
        cr_assert_eq(len, strlen(expect[i]));
        cr_assert_eq(smt_lines_lineno(r), 11 + (uint64_t)i);
    }
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
    smt_lines_close(r);
}

Test(lines, long_lines_span_chunks)
{
    /* 3 lines of 5 MB each cross the 4 MB chunk boundary (and many 64 KiB ones: SMT_LINES_SMALL),
     * compressed and plain */
    size_t L = 5u << 20;
    char *text = malloc(3 * (L + 1));
    for (int i = 0; i < 3; i++) {
        memset(text + i * (L + 1), 'a' + i, L);
        text[i * (L + 1) + L] = '\n';
    }
    char *p = tu_join(dir, "long.gz"), *plain = tu_join(dir, "long.txt");
    gz_write(p, text, 3 * (L + 1));
    cr_assert_eq(tu_write_file(plain, text, 3 * (L + 1)), 0);
    static const unsigned fl[] = {0, SMT_LINES_THREADED, SMT_LINES_SMALL};
    for (unsigned k = 0; k < 6; k++) {
        unsigned flags = fl[k % 3];
        if (k == 3) {
            free(p);
            p = plain;
        }
        smt_lines *r;
        smt_err e;
        cr_assert_eq(smt_lines_open(&r, p, flags, &e), 0);
        char *line;
        size_t len;
        for (int i = 0; i < 3; i++) {
            cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
            cr_assert_eq(len, L);
            cr_assert_eq(line[0], 'a' + i);
            cr_assert_eq(line[L - 1], 'a' + i);
        }
        cr_assert_eq(smt_lines_had_newline(r), 1);
        cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
        smt_lines_close(r);
    }
    free(text);
    free(p);
}

Test(lines, many_lines_threaded_equals_plain)
{
    char *p = tu_join(dir, "many.gz");
    gzFile g = gzopen(p, "wb");
    for (int i = 0; i < 300000; i++)
        gzprintf(g, "line %d %s\n", i, (i % 7) ? "x" : "");
    gzclose(g);
    smt_lines *a, *b;
    smt_err e;
    cr_assert_eq(smt_lines_open(&a, p, 0, &e), 0);
    cr_assert_eq(smt_lines_open(&b, p, SMT_LINES_THREADED, &e), 0);
    char *la, *lb;
    size_t na, nb;
    int n = 0;
    for (;;) {
        int ra = smt_lines_next(a, &la, &na, &e), rb = smt_lines_next(b, &lb, &nb, &e);
        cr_assert_eq(ra, rb);
        if (ra == 0)
            break;
        cr_assert_eq(na, nb);
        cr_assert_eq(memcmp(la, lb, na), 0);
        n++;
    }
    cr_assert_eq(n, 300000);
    cr_assert_eq(smt_lines_bytes_read(a), (uint64_t)tu_file_size(p));
    smt_lines_close(a);
    smt_lines_close(b);
    free(p);
}

Test(lines, truncated_gzip_is_an_error)
{
    char *p = tu_join(dir, "cut.gz");
    gzFile g = gzopen(p, "wb");
    for (int i = 0; i < 100000; i++)
        gzprintf(g, "line %d with some words in it\n", i * 7919);
    gzclose(g);
    cr_assert_eq(tu_truncate(p, (uint64_t)tu_file_size(p) / 2), 0);
    for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
        smt_lines *r;
        smt_err e;
        cr_assert_eq(smt_lines_open(&r, p, flags, &e), 0);
        char *line;
        size_t len;
        int rc;
        while ((rc = smt_lines_next(r, &line, &len, &e)) == 1)
            ;
        cr_assert_eq(rc, SMT_ERR_IO, "rc %d", rc);
        cr_assert(strstr(e.msg, "cut.gz:") != NULL, "%s", e.msg);
        smt_lines_close(r);
    }
    free(p);
}

Test(lines, close_early_threaded)
{
    char *p = tu_join(dir, "early.gz");
    gzFile g = gzopen(p, "wb");
    for (int i = 0; i < 2000000; i++)
        gzprintf(g, "%d\n", i);
    gzclose(g);
    smt_lines *r;
    smt_err e;
    cr_assert_eq(smt_lines_open(&r, p, SMT_LINES_THREADED, &e), 0);
    char *line;
    size_t len;
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    smt_lines_close(r);
    free(p);
}

/* text compressed in memory with each library's own API: gzip, xz, bzip2, zstd (with a checksum) */
enum { Z_GZ, Z_XZ, Z_BZ2, Z_ZST, Z_COUNT };
static const char *const z_ext[Z_COUNT] = {"gz", "xz", "bz2", "zst"};

static char *compress_text(int kind, const char *text, size_t len, size_t *out_len)
{
    char *out = tu_compress(z_ext[kind], text, len, out_len);
    cr_assert_not_null(out, "%s", z_ext[kind]);
    return out;
}

/* Writes text compressed with `kind` to dir/name; with twice, two members/streams/frames each
 * holding half (split at a line boundary). */
static char *write_compressed(int kind, const char *name, const char *text, int twice)
{
    size_t len = strlen(text), half = len;
    if (twice) {
        const char *nl = memchr(text + len / 2, '\n', len - len / 2);
        half = nl ? (size_t)(nl - text) + 1 : len;
    }
    size_t n1, n2 = 0;
    char *a = compress_text(kind, text, half, &n1), *b = NULL;
    if (twice)
        b = compress_text(kind, text + half, len - half, &n2);
    char *all = malloc(n1 + n2 + 1);
    memcpy(all, a, n1);
    if (b)
        memcpy(all + n1, b, n2);
    char *p = tu_join(dir, name);
    cr_assert_eq(tu_write_file(p, all, n1 + n2), 0);
    free(a), free(b), free(all);
    return p;
}

/* Reads path to its end; returns the final status, the lines read in *n. */
static int read_all(const char *path, unsigned flags, uint64_t *n, smt_err *e)
{
    smt_lines *r;
    int rc = smt_lines_open(&r, path, flags, e);
    if (rc)
        return rc;
    char *line;
    size_t len;
    *n = 0;
    while ((rc = smt_lines_next(r, &line, &len, e)) == 1)
        (*n)++;
    cr_assert_eq(smt_lines_lineno(r), *n);
    smt_lines_close(r);
    return rc;
}

Test(lines, xz_bzip2_zstd_by_magic)
{
    const char *text = "a b\r\n\nthird line\nlast";
    const char *expect[] = {"a b", "", "third line", "last"};
    for (int k = 0; k < Z_COUNT; k++) {
        /* the name says nothing (".txt"): the first bytes tell */
        char name[32];
        snprintf(name, sizeof name, "%s.txt", z_ext[k]);
        char *p = write_compressed(k, name, text, 0);
        for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++)
            check_lines(p, flags, expect, 4, 0);
        free(p);
    }
    /* and plain text named .gz is plain text */
    char *p = tu_join(dir, "plain.gz");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    check_lines(p, 0, expect, 4, 0);
    free(p);
}

/* Many lines, split into two members (gzip, bzip2), streams (xz) or frames (zstd), read whole. */
Test(lines, concatenated_members_are_one_text)
{
    size_t cap = 40u << 20, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < 400000; i++)
        len += (size_t)sprintf(text + len, "line %d with words %lld\n", i, i * 7919LL);
    for (int k = 0; k < Z_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "two.%s", z_ext[k]);
        char *p = write_compressed(k, name, text, 1);
        for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
            smt_lines *r;
            smt_err e;
            cr_assert_eq(smt_lines_open(&r, p, flags, &e), 0, "%s", e.msg);
            char *line, *want = text;
            size_t n;
            int i = 0, rc;
            while ((rc = smt_lines_next(r, &line, &n, &e)) == 1) {
                char *nl = strchr(want, '\n');
                cr_assert(n == (size_t)(nl - want) && memcmp(line, want, n) == 0, "%s line %d",
                          name, i + 1);
                want = nl + 1;
                i++;
            }
            cr_assert_eq(rc, 0, "%s: %s", name, e.msg);
            cr_assert_eq(i, 400000, "%s: %d lines", name, i);
            cr_assert_eq(smt_lines_bytes_read(r), (uint64_t)tu_file_size(p));
            smt_lines_close(r);
        }
        free(p);
    }
    free(text);
}

/* Cut short or damaged compressed data is an error naming file:line, never an early end. */
Test(lines, truncated_or_corrupt_compressed_is_an_error)
{
    size_t len = 0;
    char *text = malloc(8u << 20);
    for (int i = 0; i < 100000; i++)
        len += (size_t)sprintf(text + len, "line %d with some words in it\n", i * 7919);
    for (int k = 0; k < Z_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "bad.%s", z_ext[k]);
        char *p = write_compressed(k, name, text, 0);
        long long size = tu_file_size(p);
        char *good = tu_read_file(p, NULL);
        for (int damage = 0; damage < 3; damage++) {
            cr_assert_eq(tu_write_file(p, good, (size_t)size), 0);
            if (damage == 0)
                cr_assert_eq(tu_truncate(p, (uint64_t)size / 2), 0);
            else if (damage == 1)
                cr_assert_eq(tu_truncate(p, (uint64_t)size - 1), 0);
            else
                for (int b = 0; b < 8; b++) /* a burst of flipped bits in the middle */
                    cr_assert_eq(tu_flip_bit(p, (uint64_t)size / 2 + (uint64_t)b * 13, b), 0);
            for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
                uint64_t n = 0;
                smt_err e;
                int rc = read_all(p, flags, &n, &e);
                cr_assert_eq(rc, SMT_ERR_IO, "%s damage %d: rc %d after %llu lines", name, damage,
                             rc, (unsigned long long)n);
                char where[96];
                snprintf(where, sizeof where, "%s:%llu:", name, (unsigned long long)n + 1);
                cr_assert(strstr(e.msg, where) != NULL, "%s damage %d: '%s' lacks '%s'", name,
                          damage, e.msg, where);
            }
        }
        free(good);
        free(p);
    }
    free(text);
}

/* A gzip member whose CRC does not match, or a damaged member after good ones, is reported after the
 * lines before it (this used to say line 1); data after the last member is an error too. */
Test(lines, gzip_error_mid_file_names_its_line)
{
    size_t len = 0;
    char *text = malloc(1u << 20);
    for (int i = 0; i < 1000; i++)
        len += (size_t)sprintf(text + len, "sentence %d\n", i);
    size_t n1;
    char *gz = compress_text(Z_GZ, text, len, &n1);
    char *p = tu_join(dir, "mid.gz");
    const char *tails[3] = {"", "\x1f\x8b\x09 not deflate", "trailing words\n"};
    for (int t = 0; t < 3; t++) {
        char *buf = malloc(n1 + 64);
        memcpy(buf, gz, n1);
        size_t n = n1;
        if (t == 0)
            buf[n1 - 8] ^= 0x40; /* the member's CRC-32 */
        memcpy(buf + n, tails[t], strlen(tails[t]));
        n += strlen(tails[t]);
        cr_assert_eq(tu_write_file(p, buf, n), 0);
        for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
            uint64_t lines;
            smt_err e;
            cr_assert_eq(read_all(p, flags, &lines, &e), SMT_ERR_IO, "tail %d", t);
            cr_assert_eq(lines, 1000, "tail %d", t);
            cr_assert(strstr(e.msg, "mid.gz:1001: ") != NULL, "tail %d: %s", t, e.msg);
        }
        free(buf);
    }
    free(gz);
    free(text);
    free(p);
}

Test(lines, directory_is_an_error)
{
    smt_lines *r;
    smt_err e;
    cr_assert_eq(smt_lines_open(&r, dir, 0, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, dir) && strstr(e.msg, "directory"), "%s", e.msg);
    /* and on standard input */
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    cr_assert_geq(fd, 0);
    cr_assert_eq(dup2(fd, 0), 0);
    cr_assert_eq(smt_lines_open(&r, "-", SMT_LINES_THREADED, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "<stdin>") && strstr(e.msg, "directory"), "%s", e.msg);
    close(fd);
}

/* An I/O error after some lines (read(2) fails with EIO) is an error at the next line, not the end
 * of the input. /proc/self/mem read across a mapped page into an unmapped one does exactly that. */
Test(lines, read_error_mid_file_is_an_error)
{
    long pg = sysconf(_SC_PAGESIZE);
    char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    memset(m, 'x', (size_t)pg);
    for (long i = 9; i < pg; i += 10)
        m[i] = '\n'; /* lines of 9 'x' */
    cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
    int fd = open("/proc/self/mem", O_RDONLY);
    if (fd < 0)
        cr_skip_test("no /proc/self/mem to make an I/O error with");
    cr_assert_eq(lseek(fd, (off_t)(uintptr_t)m, SEEK_SET), (off_t)(uintptr_t)m);
    cr_assert_eq(dup2(fd, 0), 0);
    for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
        cr_assert_eq(lseek(0, (off_t)(uintptr_t)m, SEEK_SET), (off_t)(uintptr_t)m);
        uint64_t n;
        smt_err e;
        int rc = read_all("-", flags, &n, &e);
        cr_assert_eq(rc, SMT_ERR_IO, "rc %d after %llu lines", rc, (unsigned long long)n);
        cr_assert_eq(n, (uint64_t)pg / 10);
        char where[64];
        snprintf(where, sizeof where, "<stdin>:%llu: ", (unsigned long long)n + 1);
        cr_assert(strstr(e.msg, where) && strstr(e.msg, "rror"), "%s", e.msg);
    }
    close(fd);
}

/* The same in the compressed path: a gzip member that ends at a page edge, then EIO where another
 * member (or the end) would be told, is an error after the member's lines; so is EIO at the very
 * first read, where the format is told. */
Test(lines, read_error_in_compressed_input_is_an_error)
{
    long pg = sysconf(_SC_PAGESIZE);
    char text[1000];
    size_t len = 0;
    for (int i = 0; i < 50; i++)
        len += (size_t)sprintf(text + len, "linea %d\n", i);
    size_t n;
    char *gz = compress_text(Z_GZ, text, len, &n);
    cr_assert_lt(n, (size_t)pg);
    char *m = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(m, MAP_FAILED);
    memcpy(m + pg - n, gz, n); /* the member's last byte is the page's */
    cr_assert_eq(munmap(m + pg, (size_t)pg), 0);
    int fd = open("/proc/self/mem", O_RDONLY);
    if (fd < 0)
        cr_skip_test("no /proc/self/mem to make an I/O error with");
    cr_assert_eq(dup2(fd, 0), 0);
    for (int at_start = 0; at_start <= 1; at_start++)
        for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
            off_t from = (off_t)(uintptr_t)(at_start ? m + pg : m + pg - n);
            cr_assert_eq(lseek(0, from, SEEK_SET), from);
            uint64_t lines;
            smt_err e;
            int rc = read_all("-", flags, &lines, &e);
            cr_assert_eq(rc, SMT_ERR_IO, "start %d flags %u: rc %d after %llu lines", at_start,
                         flags, rc, (unsigned long long)lines);
            cr_assert_eq(lines, at_start ? 0 : 50);
            char where[64];
            snprintf(where, sizeof where, "<stdin>:%d: ", at_start ? 1 : 51);
            cr_assert(strstr(e.msg, where) && strstr(e.msg, "rror"), "%s", e.msg);
        }
    close(fd);
    munmap(m, (size_t)pg);
    free(gz);
}

Test(lines, byte_order_mark_is_dropped)
{
    /* two marks in a row (concatenated files) are dropped too: found by fuzz_ppt_text, whose
     * table then dumped a word starting with the second mark, which a rebuild dropped */
    const char *text = "\xef\xbb\xbf\xef\xbb\xbfhola mundo\n\xef\xbb\xbfsecond\n";
    const char *expect[] = {"hola mundo", "\xef\xbb\xbfsecond"};
    char *p = tu_join(dir, "bom.txt");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    char *g = write_compressed(Z_GZ, "bom.gz", text, 0);
    for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
        check_lines(p, flags, expect, 2, 1);
        check_lines(g, flags, expect, 2, 1);
    }
    /* a file holding only the mark is empty; the mark alone on a terminated line is an empty line */
    cr_assert_eq(tu_write_file(p, "\xef\xbb\xbf", 3), 0);
    check_lines(p, 0, NULL, 0, 0);
    cr_assert_eq(tu_write_file(p, "\xef\xbb\xbf\xef\xbb\xbf", 6), 0);
    check_lines(p, 0, NULL, 0, 0);
    const char *empty[] = {""};
    cr_assert_eq(tu_write_file(p, "\xef\xbb\xbf\r\n", 5), 0);
    check_lines(p, 0, empty, 1, 1);
    free(p);
    free(g);
}

/* Standard input from a pipe: each line is returned as soon as it is written, while the writer
 * keeps the pipe open (tools answer line by line); compressed input on a pipe is read too. */
Test(lines, pipe_lines_arrive_one_by_one, .timeout = 20)
{
    for (unsigned flags = 0; flags <= SMT_LINES_THREADED; flags++) {
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        cr_assert_eq(dup2(fds[0], 0), 0);
        close(fds[0]);
        smt_lines *r;
        smt_err e;
        cr_assert_eq(smt_lines_open(&r, "-", flags, &e), 0, "%s", e.msg);
        char *line;
        size_t len;
        const char *words[3] = {"uno", "dos dos", "tres"};
        for (int i = 0; i < 3; i++) {
            char buf[32];
            int n = snprintf(buf, sizeof buf, "%s\n", words[i]);
            cr_assert_eq(write(fds[1], buf, (size_t)n), n);
            /* the writer still holds the pipe open: a reader that waits for more would hang */
            cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
            cr_assert_str_eq(line, words[i]);
        }
        close(fds[1]);
        cr_assert_eq(smt_lines_next(r, &line, &len, &e), 0);
        smt_lines_close(r);
    }
    /* closing early while the writer keeps the pipe open and the helper thread waits in read() */
    int w[2];
    cr_assert_eq(pipe(w), 0);
    cr_assert_eq(dup2(w[0], 0), 0);
    close(w[0]);
    cr_assert_eq(write(w[1], "one\n", 4), 4);
    smt_lines *r;
    smt_err e;
    cr_assert_eq(smt_lines_open(&r, "-", SMT_LINES_THREADED, &e), 0, "%s", e.msg);
    char *line;
    size_t len;
    cr_assert_eq(smt_lines_next(r, &line, &len, &e), 1);
    smt_lines_close(r); /* would wait forever for the writer */
    close(w[1]);
    /* an xz stream through a pipe */
    size_t n;
    char *xz = compress_text(Z_XZ, "a\nb\n", 4, &n);
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    cr_assert_eq(write(fds[1], xz, n), (ssize_t)n);
    close(fds[1]);
    cr_assert_eq(dup2(fds[0], 0), 0);
    close(fds[0]);
    const char *expect[] = {"a", "b"};
    check_lines("-", SMT_LINES_THREADED, expect, 2, 1);
    free(xz);
}

/* ------------------------------------------------------------ skips seen by ctest */

TestSuite(skip, .init = setup, .fini = teardown);

/* Runs tests/tu_skip_probe with the environment assignments `env` (every FASTSMT_ variable of this
 * run removed first); returns its exit status, its stderr in *err. */
static int probe(const char *env, char **err)
{
    char *bin = tu_bin_path("../tests/tu_skip_probe"), *cmd = NULL;
    /* BXFI_MAP: Criterion marks its own test processes with it; the probe must start as a runner */
    cr_assert(asprintf(&cmd, "env -u BXFI_MAP -u FASTSMT_SHARED -u FASTSMT_SHARED_DEFAULT "
                             "-u FASTSMT_REQUIRE_SHARED -u FASTSMT_REQUIRE_GPU -u PROBE_NO_GPU "
                             "%s '%s' --jobs 1", env, bin) > 0);
    int rc = tu_run(cmd, NULL, err);
    free(bin);
    free(cmd);
    return rc;
}

Test(skip, nothing_tested_is_a_skip_for_ctest)
{
    char *with = tu_join(dir, "with"), *without = tu_join(dir, "without");
    char *sub = tu_join(with, "probe"), *file = tu_join(sub, "present.txt");
    cr_assert_eq(mkdir(with, 0700), 0);
    cr_assert_eq(mkdir(without, 0700), 0);
    cr_assert_eq(mkdir(sub, 0700), 0);
    cr_assert_eq(tu_write_file(file, "x\n", 2), 0);
    char env[1024], *err = NULL;
    /* every test skipped: TU_SKIP_CODE (ctest's SKIP_RETURN_CODE), not 0 */
    snprintf(env, sizeof env, "FASTSMT_SHARED='%s' PROBE_NO_GPU=1", without);
    cr_assert_eq(probe(env, &err), TU_SKIP_CODE, "%s", err);
    free(err);
    /* one test ran: 0 */
    snprintf(env, sizeof env, "FASTSMT_SHARED='%s' PROBE_NO_GPU=1", with);
    cr_assert_eq(probe(env, &err), 0, "%s", err);
    free(err);
    /* the configured folder serves when FASTSMT_SHARED is unset, and FASTSMT_SHARED at test time wins */
    snprintf(env, sizeof env, "FASTSMT_SHARED_DEFAULT='%s' PROBE_NO_GPU=1", with);
    cr_assert_eq(probe(env, &err), 0, "%s", err);
    free(err);
    snprintf(env, sizeof env, "FASTSMT_SHARED_DEFAULT='%s' FASTSMT_SHARED='%s' PROBE_NO_GPU=1", with,
             without);
    cr_assert_eq(probe(env, &err), TU_SKIP_CODE, "%s", err);
    free(err);
    /* FASTSMT_REQUIRE_SHARED / FASTSMT_REQUIRE_GPU turn those skips into failures */
    snprintf(env, sizeof env, "FASTSMT_SHARED='%s' FASTSMT_REQUIRE_SHARED=1", without);
    int rc = probe(env, &err);
    cr_assert(rc != 0 && rc != TU_SKIP_CODE, "rc %d", rc);
    cr_assert(strstr(err, "FASTSMT_REQUIRE_SHARED") && strstr(err, "probe/present.txt"), "%s", err);
    free(err);
    snprintf(env, sizeof env, "FASTSMT_SHARED='%s' FASTSMT_REQUIRE_GPU=1 PROBE_NO_GPU=1", with);
    rc = probe(env, &err);
    cr_assert(rc != 0 && rc != TU_SKIP_CODE, "rc %d", rc);
    cr_assert(strstr(err, "FASTSMT_REQUIRE_GPU"), "%s", err);
    free(err);
    free(with), free(without), free(sub), free(file);
}

/* ------------------------------------------------------------ vocabulary */

TestSuite(vocab, .init = setup, .fini = teardown);

Test(vocab, build_write_map_lookup)
{
    smt_vocab_builder *b;
    smt_err e;
    cr_assert_eq(smt_vocab_builder_create(&b, &e), 0);
    char word[32];
    for (uint32_t i = 0; i < 100000; i++) {
        int n = snprintf(word, sizeof word, "w%u", i * 31u);
        uint32_t id;
        cr_assert_eq(smt_vocab_builder_add(b, word, (size_t)n, &id, &e), 0);
        cr_assert_eq(id, i);
    }
    uint32_t id;
    cr_assert_eq(smt_vocab_builder_add(b, "w31", 3, &id, &e), 0);
    cr_assert_eq(id, 1);
    cr_assert_eq(smt_vocab_builder_add(b, "", 0, &id, &e), 0);
    cr_assert_eq(id, 100000);
    char *path = tu_join(dir, "v.bin");
    smt_writer *w;
    cr_assert_eq(smt_writer_open(&w, path, "VOC1", 1, &e), 0);
    cr_assert_eq(smt_vocab_builder_write(b, w, "src", &e), 0);
    cr_assert_eq(smt_writer_finish(w, &e), 0);
    smt_mapped *m;
    cr_assert_eq(smt_mapped_open(&m, path, "VOC1", 1, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    smt_vocab v;
    cr_assert_eq(smt_vocab_load(&v, m, "src", &e), 0, "%s", e.msg);
    cr_assert_eq(v.n, 100001);
    for (uint32_t i = 0; i < 100000; i += 7) {
        int n = snprintf(word, sizeof word, "w%u", i * 31u);
        cr_assert_eq(smt_vocab_find(&v, word, (size_t)n), i);
        size_t len;
        cr_assert_str_eq(smt_vocab_word(&v, i, &len), word);
        cr_assert_eq(len, (size_t)n);
    }
    cr_assert_eq(smt_vocab_find(&v, "w32", 3), SMT_VOCAB_NONE);
    cr_assert_eq(smt_vocab_find(&v, "", 0), 100000);
    cr_assert_eq(smt_vocab_load(&v, m, "tgt", &e), SMT_ERR_CORRUPT);
    smt_mapped_close(m);
    smt_vocab_builder_free(b);
    free(path);
}

/* smt_vocab_builder_write_dense: 1,200 words sit in the builder's first table of 8,192 slots and
 * are written in 2,048 (at most 2/3 full: 59%; 1,024 would be over-full); 6,000 words sit in
 * 16,384 (the builder keeps at most half full) and stay there (8,192 would be 73% full). Every
 * word is found at its id through the written table, and absent words are not. */
Test(vocab, dense_table_is_smaller_and_finds_every_word)
{
    const uint32_t counts[2] = {1200, 6000}, want_slots[2] = {2048, 16384};
    for (int c = 0; c < 2; c++) {
        smt_vocab_builder *b;
        smt_err e;
        cr_assert_eq(smt_vocab_builder_create(&b, &e), 0);
        char word[32];
        for (uint32_t i = 0; i < counts[c]; i++) {
            int n = snprintf(word, sizeof word, "d%u", i * 7u);
            uint32_t id;
            cr_assert_eq(smt_vocab_builder_add(b, word, (size_t)n, &id, &e), 0);
        }
        cr_assert_eq(smt_vocab_builder_view(b).mask + 1, c == 0 ? 8192u : 16384u);
        char *path = tu_join(dir, c == 0 ? "d0.bin" : "d1.bin");
        smt_writer *w;
        cr_assert_eq(smt_writer_open(&w, path, "VOC1", 1, &e), 0);
        cr_assert_eq(smt_vocab_builder_write_dense(b, w, "src", &e), 0, "%s", e.msg);
        cr_assert_eq(smt_writer_finish(w, &e), 0);
        smt_mapped *m;
        cr_assert_eq(smt_mapped_open(&m, path, "VOC1", 1, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
        smt_vocab v;
        cr_assert_eq(smt_vocab_load(&v, m, "src", &e), 0, "%s", e.msg);
        cr_assert_eq(v.n, counts[c]);
        cr_assert_eq(v.mask + 1, want_slots[c]);
        for (uint32_t i = 0; i < counts[c]; i++) {
            int n = snprintf(word, sizeof word, "d%u", i * 7u);
            cr_assert_eq(smt_vocab_find(&v, word, (size_t)n), i);
            n = snprintf(word, sizeof word, "d%u", i * 7u + 1);
            cr_assert_eq(smt_vocab_find(&v, word, (size_t)n), SMT_VOCAB_NONE);
        }
        smt_mapped_close(m);
        smt_vocab_builder_free(b);
        free(path);
    }
}

/* A damaged hash table with no empty slot would make lookups probe forever: loading must refuse it,
 * even when the file's checksums match (they are only checked on request). */
Test(vocab, full_hash_table_is_refused)
{
    smt_vocab_builder *b;
    smt_err e;
    cr_assert_eq(smt_vocab_builder_create(&b, &e), 0);
    uint32_t id;
    cr_assert_eq(smt_vocab_builder_add(b, "a", 1, &id, &e), 0);
    cr_assert_eq(smt_vocab_builder_add(b, "b", 1, &id, &e), 0);
    smt_vocab v = smt_vocab_builder_view(b);
    size_t n_slots = (size_t)v.mask + 1;
    smt_vocab_slot *full = malloc(n_slots * sizeof *full);
    for (size_t i = 0; i < n_slots; i++)
        full[i] = (smt_vocab_slot){(uint32_t)(i % 2), 0};
    char *path = tu_join(dir, "full.bin");
    smt_writer *w;
    cr_assert_eq(smt_writer_open(&w, path, "VOC1", 1, &e), 0);
    cr_assert_eq(smt_writer_section(w, "v.str", v.str, (size_t)v.str_size, &e), 0);
    cr_assert_eq(smt_writer_section(w, "v.off", v.off, ((size_t)v.n + 1) * 8, &e), 0);
    cr_assert_eq(smt_writer_section(w, "v.hash", full, n_slots * sizeof *full, &e), 0);
    cr_assert_eq(smt_writer_finish(w, &e), 0);
    smt_mapped *m;
    cr_assert_eq(smt_mapped_open(&m, path, "VOC1", 1, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    smt_vocab loaded;
    cr_assert_eq(smt_vocab_load(&loaded, m, "v", &e), SMT_ERR_CORRUPT);
    cr_assert(strstr(e.msg, "hash table") != NULL, "%s", e.msg);
    smt_mapped_close(m);
    free(full);
    free(path);
    smt_vocab_builder_free(b);
}

/* ------------------------------------------------------------ BLEU */

Test(bleu, multi_bleu_formula)
{
    const char *h[] = {"the cat sat on the mat today", "a b c d e f", "there is a dog in the house"};
    const char *r[] = {"the cat sat on a mat", "a b c d e f g h", "there is a cat in the house ."};
    const char *const *one[] = {r};
    /* 53.77 from an independent implementation of multi-bleu.perl's formula */
    double b = smt_bleu_corpus(3, h, one, 1);
    cr_expect(fabs(b - 53.77) < 0.01, "BLEU %.4f", b);
    const char *const *self[] = {h};
    cr_expect(fabs(smt_bleu_corpus(3, h, self, 1) - 100.0) < 1e-9);
    const char *e[] = {"", "", ""};
    cr_expect_eq(smt_bleu_corpus(3, e, one, 1), 0.0);
    /* several references: clipped by the most generous one, the closest length */
    const char *refs[2] = {"a b c d e f g h", "the cat sat on the mat today"};
    smt_bleu_stat st;
    smt_bleu_stats(h[0], refs, 2, &st);
    cr_expect_eq(st.match[3], 4);
    cr_expect_eq(st.ref_len, 7);
    cr_expect(fabs(smt_bleu_score(&st) - 100.0) < 1e-9);
    /* two reference sets through the corpus call give the same as per-sentence statistics */
    const char *r2[] = {"the cat sat on the mat today", "a b c d e f", "there is a cat in the house"};
    const char *const *two[] = {r, r2};
    smt_bleu_stat sum = {0}, s;
    for (int i = 0; i < 3; i++) {
        const char *rr[2] = {r[i], r2[i]};
        smt_bleu_stats(h[i], rr, 2, &s);
        smt_bleu_add(&sum, &s);
    }
    cr_expect_eq(smt_bleu_corpus(3, h, two, 2), smt_bleu_score(&sum));
}


Test(num, integers_strict)
{
    long long v = 7;
    cr_expect_eq(smt_parse_ll("42", 2, 0, 100, &v), 0);
    cr_expect_eq(v, 42);
    cr_expect_eq(smt_parse_ll("-5", 2, -10, 10, &v), 0);
    cr_expect_eq(v, -5);
    cr_expect_eq(smt_parse_ll("+3", 2, 0, 10, &v), 0);
    cr_expect_eq(v, 3);
    const char *bad[] = {"", "-", "+", " 1", "1 ", "1a", "six", "0x10", "1.0", "1e3", "--1"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect_eq(smt_parse_ll(bad[i], strlen(bad[i]), -100, 100, &v), SMT_ERR_PARSE, "%s", bad[i]);
    cr_expect_eq(smt_parse_ll("101", 3, 0, 100, &v), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_ll("-1", 2, 0, 100, &v), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_ll("9223372036854775807", 19, 0, __LONG_LONG_MAX__, &v), 0);
    cr_expect_eq(v, __LONG_LONG_MAX__);
    cr_expect_eq(smt_parse_ll("-9223372036854775808", 20, -__LONG_LONG_MAX__ - 1, 0, &v), 0);
    cr_expect_eq(v, -__LONG_LONG_MAX__ - 1);
    cr_expect_eq(smt_parse_ll("9223372036854775808", 19, 0, __LONG_LONG_MAX__, &v), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_ll("18446744073709551611", 20, 0, __LONG_LONG_MAX__, &v), SMT_ERR_LIMIT);
    /* a token inside a longer line: only len bytes count */
    cr_expect_eq(smt_parse_ll("12 34", 2, 0, 100, &v), 0);
    cr_expect_eq(v, 12);
}

Test(num, reals_strict)
{
    double d = 0;
    float f = 0;
    cr_expect_eq(smt_parse_double("0.5", 3, 0, 1, 0, &d), 0);
    cr_expect_eq(d, 0.5);
    cr_expect_eq(smt_parse_double("-1e-3", 5, -1, 1, 0, &d), 0);
    cr_expect_eq(d, -1e-3);
    cr_expect_eq(smt_parse_double(".5", 2, 0, 1, 0, &d), 0);
    cr_expect_eq(smt_parse_double("5.", 2, 0, 10, 0, &d), 0);
    const char *bad[] = {"", ".", "e5", "1e", "1e+", "nan", "NaN", "0x1p3", "1.0abc", " 1", "1 ",
                         "100abc", "--1", "1..0"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        cr_expect_eq(smt_parse_double(bad[i], strlen(bad[i]), -1e300, 1e300, SMT_NUM_ALLOW_INF, &d),
                     SMT_ERR_PARSE, "%s", bad[i]);
    cr_expect_eq(smt_parse_double("inf", 3, -HUGE_VAL, HUGE_VAL, 0, &d), SMT_ERR_PARSE);
    cr_expect_eq(smt_parse_double("-inf", 4, -HUGE_VAL, HUGE_VAL, SMT_NUM_ALLOW_INF, &d), 0);
    cr_expect(isinf(d) && d < 0);
    cr_expect_eq(smt_parse_double("-Infinity", 9, -HUGE_VAL, HUGE_VAL, SMT_NUM_ALLOW_INF, &d), 0);
    cr_expect_eq(smt_parse_double("inf", 3, -1, 1, SMT_NUM_ALLOW_INF, &d), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_double("1e999", 5, -HUGE_VAL, HUGE_VAL, 0, &d), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_double("1e-999", 6, -1, 1, 0, &d), 0); /* underflow is a value: 0 */
    cr_expect_eq(smt_parse_double("2", 1, 0, 1, 0, &d), SMT_ERR_LIMIT);
    cr_expect_eq(smt_parse_float("0.1", 3, 0, 1, 0, &f), 0);
    cr_expect_eq(f, 0.1f); /* one rounding from the text */
    cr_expect_eq(smt_parse_float("1e39", 4, -HUGE_VALF, HUGE_VALF, 0, &f), SMT_ERR_LIMIT);
}

Test(num, messages_name_the_place)
{
    smt_err e;
    int i = 0;
    double d;
    cr_expect_eq(smt_parse_int_arg("-threads", "-1", 1, 256, &i, &e), SMT_ERR_ARG);
    cr_expect(strstr(e.msg, "-threads") && strstr(e.msg, "out of range"), "%s", e.msg);
    cr_expect_eq(smt_parse_int_arg("ini:3: [distortion-limit]", "six", -1, 1000, &i, &e), SMT_ERR_ARG);
    cr_expect(strstr(e.msg, "ini:3: [distortion-limit]") && strstr(e.msg, "'six' is not an integer"),
              "%s", e.msg);
    cr_expect_eq(smt_parse_double_arg("[beam-threshold]", "100abc", 0, 1, &d, &e), SMT_ERR_ARG);
    cr_expect(strstr(e.msg, "is not a number"), "%s", e.msg);
    cr_expect_eq(smt_parse_int_arg("-s", NULL, 1, 10, &i, &e), SMT_ERR_ARG);
    cr_expect(strstr(e.msg, "missing"), "%s", e.msg);
    cr_expect_eq(smt_parse_int_arg("-s", "7", 1, 10, &i, &e), 0);
    cr_expect_eq(i, 7);
}

Test(num, fast_path_equals_strtod)
{
    /* decimals of every shape the fast paths take and just past them, against the C library */
    uint64_t x = 88172645463325252ull;
    char buf[64];
    for (int i = 0; i < 200000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int digits = 1 + (int)(x % 20), point = (int)((x >> 8) % (unsigned)(digits + 1));
        int ex = (int)((x >> 16) % 61) - 30, use_exp = (int)((x >> 24) & 1), neg = (int)((x >> 25) & 1);
        size_t n = 0;
        if (neg)
            buf[n++] = '-';
        uint64_t y = x >> 26;
        for (int d = 0; d < digits; d++) {
            if (d == point && d)
                buf[n++] = '.';
            buf[n++] = (char)('0' + (y % 10));
            y = y / 10 ^ (y << 7);
        }
        if (use_exp)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "e%d", ex);
        buf[n] = '\0';
        float f, fr = strtof(buf, NULL);
        double d, dr = strtod(buf, NULL);
        if (isinf(fr)) { /* overflow: out of range, never a silent infinity */
            cr_assert_eq(smt_parse_float(buf, n, -HUGE_VALF, HUGE_VALF, 0, &f), SMT_ERR_LIMIT, "%s", buf);
            continue;
        }
        cr_assert_eq(smt_parse_float(buf, n, -HUGE_VALF, HUGE_VALF, 0, &f), 0, "%s", buf);
        cr_assert(f == fr && signbit(f) == signbit(fr), "%s: %a vs strtof %a", buf, f, fr);
        cr_assert_eq(smt_parse_double(buf, n, -HUGE_VAL, HUGE_VAL, 0, &d), 0, "%s", buf);
        cr_assert(d == dr && signbit(d) == signbit(dr), "%s: %a vs strtod %a", buf, d, dr);
    }
}

Test(num, float_midpoints_equal_strtof)
{
    /* decimals at and next to the midpoint between two floats (15 significant digits, within
     * the double fast path's mantissa): a double landing on the midpoint must not decide the
     * float by itself */
    uint64_t x = 2463534242ull;
    char buf[64];
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        float lo = (float)((double)(x % 100000000u) * 1e-7 + 1e-3);
        double mid = ((double)lo + (double)nextafterf(lo, INFINITY)) / 2;
        for (int k = -1; k <= 1; k++) {
            int n = snprintf(buf, sizeof buf, "%.14e", k ? nextafter(mid, k * INFINITY) : mid);
            float f, fr = strtof(buf, NULL);
            cr_assert_eq(smt_parse_float(buf, (size_t)n, -HUGE_VALF, HUGE_VALF, 0, &f), 0, "%s",
                         buf);
            cr_assert(f == fr, "%s: %a vs strtof %a", buf, f, fr);
        }
    }
}

/* ---- smt_sniff.h: one table of magics */

TestSuite(sniff, .init = setup, .fini = teardown);

Test(sniff, every_kind_by_its_first_bytes)
{
    static const struct {
        const char *b;
        size_t n;
        int kind;
        const char *sub;
    } cases[] = {
        {"\x1f\x8b\x08\x00", 4, SMT_KIND_GZIP, ""},
        {"\xfd" "7zXZ\0\0", 7, SMT_KIND_XZ, ""},
        {"\x28\xb5\x2f\xfd\x00", 5, SMT_KIND_ZSTD, ""},
        {"BZh91AY&SY", 10, SMT_KIND_BZIP2, ""},
        {"BZh9\x17\x72\x45\x38\x50\x90", 10, SMT_KIND_BZIP2, ""},
        {"FSMTGLM1\x01\0\0\0", 12, SMT_KIND_FASTSMT, "GLM1"},
        {"FSMTPPT1", 8, SMT_KIND_FASTSMT, "PPT1"},
        {"FSMT-INC", 8, SMT_KIND_FASTSMT, "-INC"},
        {"FSMTGL", 6, SMT_KIND_FASTSMT, "GL"}, /* cut short: still a (broken) fastsmt file */
        {"mmap lm http://kheafield.com/code format version 5\n", 51, SMT_KIND_KENLM, ""},
        {"\\data\\\nngram 1=3\n", 18, SMT_KIND_TEXT, ""},
        {"FSM", 3, SMT_KIND_TEXT, ""},       /* not the whole magic */
        {"mmap lm", 7, SMT_KIND_TEXT, ""},
        {"BZh0", 4, SMT_KIND_TEXT, ""},      /* level 0 is no bzip2 */
        {"", 0, SMT_KIND_TEXT, ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char sub[5] = "xxxx";
        cr_expect_eq(smt_sniff(cases[i].b, cases[i].n, 1, sub), cases[i].kind, "case %zu", i);
        cr_expect_str_eq(sub, cases[i].sub, "case %zu", i);
        /* the same through a file */
        char *p = tu_join(dir, "sniffed");
        cr_assert_eq(tu_write_file(p, cases[i].b, cases[i].n), 0);
        smt_err e;
        cr_expect_eq(smt_file_kind(p, sub, &e), cases[i].kind, "case %zu", i);
        cr_expect_str_eq(sub, cases[i].sub, "case %zu", i);
        free(p);
    }
    cr_expect_str_eq(smt_kind_name(SMT_KIND_KENLM), "KenLM binary");
    cr_expect_str_eq(smt_kind_name(SMT_KIND_FASTSMT), "fastsmt binary");
    cr_expect_str_eq(smt_kind_name(SMT_KIND_ZSTD), "zstd");
}

/* A stream reader waits only while a compression magic is matched in part; a partial binary magic
 * is text at once (a pipe answered line by line never waits for bytes that may not come). */
Test(sniff, undecided_only_for_a_partial_compression_magic)
{
    cr_expect_eq(smt_sniff("", 0, 0, NULL), SMT_KIND_UNDECIDED);
    cr_expect_eq(smt_sniff("\x1f", 1, 0, NULL), SMT_KIND_UNDECIDED);
    cr_expect_eq(smt_sniff("\x1f", 1, 1, NULL), SMT_KIND_TEXT);
    cr_expect_eq(smt_sniff("BZh9", 4, 0, NULL), SMT_KIND_UNDECIDED);
    cr_expect_eq(smt_sniff("BZh9", 4, 1, NULL), SMT_KIND_TEXT);
    cr_expect_eq(smt_sniff("FSM", 3, 0, NULL), SMT_KIND_TEXT);
    cr_expect_eq(smt_sniff("mmap l", 6, 0, NULL), SMT_KIND_TEXT);
    cr_expect_eq(smt_sniff("hello", 5, 0, NULL), SMT_KIND_TEXT);
}

Test(sniff, unreadable_file_names_it)
{
    char *p = tu_join(dir, "absent");
    smt_err e;
    cr_expect_eq(smt_file_kind(p, NULL, &e), SMT_ERR_IO);
    cr_expect(strstr(e.msg, "absent") != NULL, "%s", e.msg);
    free(p);
    cr_expect_eq(smt_file_kind(dir, NULL, &e), SMT_ERR_IO, "a directory cannot be read");
    cr_expect(strstr(e.msg, "a directory") != NULL, "%s", e.msg);
}

/* A fifo is not read (its reader needs every byte) and, without a writer, not waited for. */
Test(sniff, fifo_is_left_to_its_reader)
{
    char *p = tu_join(dir, "fifo");
    cr_assert_eq(mkfifo(p, 0600), 0);
    smt_err e;
    char sub[5] = "xxxx";
    cr_expect_eq(smt_file_kind(p, sub, &e), SMT_KIND_TEXT);
    cr_expect_str_eq(sub, "");
    free(p);
}


/* ---------------------------------------------------------------- temporary files */

/* $TMPDIR when it takes a file; else the next folder that does (a missing one, and /proc/self,
 * which refuses root too); an error naming each folder when none can (a name too long for all). */
Test(io, temp_file_falls_back)
{
    char *dir = tu_tmpdir(), path[4096];
    smt_err e;
    cr_assert_eq(setenv("TMPDIR", dir, 1), 0);
    cr_assert_eq(smt_temp_file("t-", path, sizeof path, &e), 0, "%s", e.msg);
    cr_assert(strncmp(path, dir, strlen(dir)) == 0 && strstr(path, "/t-"), "%s", path);
    struct stat st;
    cr_assert(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
    cr_assert_eq(unlink(path), 0);
    const char *bad[] = {"/nonexistent-fastsmt-tmp", "/proc/self"};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(setenv("TMPDIR", bad[i], 1), 0);
        cr_assert_eq(smt_temp_file("t-", path, sizeof path, &e), 0, "%s: %s", bad[i], e.msg);
        cr_assert(strncmp(path, bad[i], strlen(bad[i])) != 0 && stat(path, &st) == 0, "%s", path);
        cr_assert_eq(unlink(path), 0);
    }
    char prefix[300];
    memset(prefix, 'x', sizeof prefix - 1);
    prefix[sizeof prefix - 1] = '\0';
    char small[256];
    cr_assert_eq(smt_temp_file(prefix, small, sizeof small, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "cannot create a temporary file") &&
                  strstr(e.msg, "$TMPDIR /proc/self: ") && strstr(e.msg, "/tmp: ") &&
                  strstr(e.msg, "/var/tmp: ") && strstr(e.msg, "/dev/shm: "),
              "%s", e.msg);
    tu_rmtree(dir);
    free(dir);
}

/* ---------------------------------------------------------------- words */

/* The sets, byte by byte: what each format calls a separator. */
Test(words, separator_sets)
{
    for (int c = 0; c < 256; c++) {
        int blank = c == ' ' || c == '\t';
        int line = blank || c == '\r' || c == '\n' || c == '\0';
        int kenlm = line || c == '\v' || c == '\f';
        cr_assert_eq(smt_is_sep((unsigned char)c, SMT_WS_BLANK), blank, "byte %d", c);
        cr_assert_eq(smt_is_sep((unsigned char)c, SMT_WS_LINE), line, "byte %d", c);
        cr_assert_eq(smt_is_sep((unsigned char)c, SMT_WS_SPACE), kenlm, "byte %d", c);
        cr_assert_eq(smt_is_sep((unsigned char)c, SMT_WS_ASCII), kenlm && c != '\0', "byte %d", c);
        cr_assert_eq(smt_is_sep((unsigned char)c, SMT_WS_COMMA), c == ',', "byte %d", c);
    }
}

Test(words, iterator_trim_count)
{
    static const char s[] = " \tab  c\rd\0e\vf\t";
    size_t n = sizeof s - 1;
    const char *pos = s, *w;
    size_t len;
    cr_assert(smt_word_next(&pos, s + n, SMT_WS_BLANK, &w, &len));
    cr_assert(len == 2 && memcmp(w, "ab", 2) == 0);
    cr_assert(smt_word_next(&pos, s + n, SMT_WS_BLANK, &w, &len));
    cr_assert(len == 7 && memcmp(w, "c\rd\0e\vf", 7) == 0, "BLANK keeps CR, NUL and VT in a word");
    cr_assert_not(smt_word_next(&pos, s + n, SMT_WS_BLANK, &w, &len));
    cr_assert_eq(pos, s + n);
    cr_assert_eq(smt_words_count(s, n, SMT_WS_BLANK), 2);
    cr_assert_eq(smt_words_count(s, n, SMT_WS_LINE), 4);  /* ab c d e\vf */
    cr_assert_eq(smt_words_count(s, n, SMT_WS_SPACE), 5); /* ab c d e f */
    cr_assert_eq(smt_words_count(s, n, SMT_WS_ASCII), 4); /* ab c d\0e f */
    const char *b = s, *e = s + n;
    smt_trim(&b, &e, SMT_WS_BLANK);
    cr_assert(b == s + 2 && e == s + n - 1);
    cr_assert(smt_words_blank(" \t\r", 3, SMT_WS_LINE));
    cr_assert_not(smt_words_blank(" \t\r", 3, SMT_WS_BLANK));
    cr_assert(smt_words_blank("", 0, SMT_WS_BLANK));
}

/* The bulk splitter and the 64-byte masks against the iterator, on random text whose words and
 * runs of separators cross the 64-byte windows, for every set, with max below and above the
 * number of words. */
Test(words, bulk_split_equals_iterator)
{
    static const char alphabet[] = "ab \t\r\n\v\f\0xyz,";
    unsigned seed = 12345;
    char buf[300];
    const char *w[400], *w2[400];
    size_t l[400], l2[400];
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = (size_t)(iter % 300);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) % 64;
            buf[i] = r < 40 ? 'a' + (char)(r % 3) : alphabet[r % (sizeof alphabet - 1)];
        }
        for (int set = SMT_WS_BLANK; set <= SMT_WS_COMMA; set++) {
            for (size_t i = 0; i < n; i += 64) {
                uint64_t m = smt_ws_mask64(buf + i, n - i, (smt_ws)set);
                for (size_t k = 0; k < 64; k++) {
                    int sep = i + k >= n || smt_is_sep((unsigned char)buf[i + k], (smt_ws)set);
                    cr_assert_eq((int)((m >> k) & 1), sep, "set %d byte %zu", set, i + k);
                }
            }
            size_t k = 0;
            const char *pos = buf;
            while (smt_word_next(&pos, buf + n, (smt_ws)set, &w2[k], &l2[k]))
                k++;
            size_t got = smt_words_split(buf, n, (smt_ws)set, w, l, 400);
            cr_assert_eq(got, k, "iter %d set %d", iter, set);
            for (size_t i = 0; i < k; i++)
                cr_assert(w[i] == w2[i] && l[i] == l2[i], "iter %d set %d word %zu", iter, set, i);
            size_t max = k / 2;
            cr_assert_eq(smt_words_split(buf, n, (smt_ws)set, w, l, max), k, "max only bounds the stores");
        }
    }
}

/* ---------------------------------------------------------------- buffer */

Test(buf, append_printf_grow)
{
    smt_buf b = {0};
    cr_assert_eq(smt_buf_append(&b, "", 0), 0);
    cr_assert(b.data && b.len == 0 && b.data[0] == '\0');
    for (int i = 0; i < 1000; i++)
        cr_assert_eq(smt_buf_printf(&b, "%d ", i), 0);
    char big[1000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    cr_assert_eq(smt_buf_printf(&b, "<%s>", big), 0, "longer than printf's stack buffer");
    cr_assert_eq(smt_buf_putc(&b, '!'), 0);
    cr_assert_eq(b.data[b.len], '\0');
    cr_assert(b.len < b.cap);
    cr_assert_eq(strncmp(b.data, "0 1 2 3 ", 8), 0);
    cr_assert_eq(strlen(b.data), b.len);
    cr_assert_eq(b.data[b.len - 2], '>');
    smt_buf_clear(&b);
    cr_assert(b.len == 0 && b.data[0] == '\0');
    cr_assert_eq(smt_buf_puts(&b, "abc"), 0);
    cr_assert_str_eq(b.data, "abc");
    smt_buf_free(&b);
    cr_assert(b.data == NULL && b.len == 0 && b.cap == 0);
}

/* A size that overflows is out of memory, and nothing changes. */
Test(buf, overflow_is_refused)
{
    int *a = NULL;
    size_t cap = 0;
    cr_assert_eq(smt_grow(&a, &cap, 10, sizeof *a, 4), 0);
    cr_assert(a && cap >= 10);
    int *before = a;
    size_t cap_before = cap;
    cr_assert_eq(smt_grow(&a, &cap, SIZE_MAX / 2, sizeof *a, 4), SMT_ERR_NOMEM);
    cr_assert(a == before && cap == cap_before);
    free(a);
    smt_buf b = {0};
    cr_assert_eq(smt_buf_append(&b, "x", 1), 0);
    cr_assert_eq(smt_buf_reserve(&b, SIZE_MAX - 1), SMT_ERR_NOMEM);
    cr_assert_str_eq(b.data, "x");
    smt_buf_free(&b);
}
