#define _GNU_SOURCE
/* The decoder's data path (issue 9): damaged binary tables, the text table parser, the input,
 * fastsmt-binarize, progress, and expected reordering scores for every orientation kind. Uses the
 * tiny hand-built model (tests/data/decoder/tiny). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dec_internal.h"
#include "glm.h"
#include "decoder.h"
#include "dec_testutil.h"
#include "testutil.h"
#include "probingpt.h"

static char *tmp;

static void setup(void) { tmp = tu_tmpdir(); }

static void teardown(void)
{
    tu_rmtree(tmp);
    free(tmp);
}

TestSuite(dec_data, .init = setup, .fini = teardown);

/* Copies the tiny model (ini, tables, LM) into tmp/name and returns that folder. */
static char *tiny_copy(const char *name)
{
    static const char *const files[] = {"moses.ini", "phrase-table", "reordering-table", "lm.arpa"};
    char *src = tu_data_path("decoder/tiny"), *dir = tu_join(tmp, name);
    cr_assert_eq(mkdir(dir, 0777), 0);
    for (int i = 0; i < 4; i++) {
        char *a = tu_join(src, files[i]), *b = tu_join(dir, files[i]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a), free(b);
    }
    free(src);
    return dir;
}

/* ---------------------------------------------------------------- damaged binary tables */

/* Binarizes the tiny model into tmp/name; returns that folder. */
static char *tiny_binarized(const char *name)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *bin = tu_bin_path("fastsmt-binarize");
    char *dir = tu_join(tmp, name), *err = NULL;
    int rc = tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, dir);
    cr_assert_eq(rc, 0, "%s", err);
    free(ini), free(bin), free(err);
    return dir;
}

/* The file offset of the word `word` (counted from the group's start) of the group of source
 * phrase src in the .ppt at path. */
static long group_word_offset(const char *path, const char *src, unsigned word)
{
    ppt_table *t;
    smt_err e;
    cr_assert_eq(ppt_open(&t, path, 0, &e), 0, "%s", e.msg);
    ppt_targets g;
    cr_assert_eq(ppt_lookup(t, src, strlen(src), &g), 0, "%s", src);
    uint64_t size, off = UINT64_MAX;
    const char *payload = smt_mapped_section(ppt_mapped(t), "payload", &size);
    for (unsigned i = 0; i < smt_mapped_section_count(ppt_mapped(t)); i++) {
        const char *name;
        uint64_t o, sz, sum;
        smt_mapped_section_info(ppt_mapped(t), i, &name, &o, &sz, &sum);
        if (!strcmp(name, "payload"))
            off = o;
    }
    cr_assert_neq(off, UINT64_MAX);
    /* the group starts 3 words before its source ids (src_len, n_targets, group_words) */
    const char *group = (const char *)(g.src_ids - 3);
    long r = (long)(off + (uint64_t)(group - payload) + 4u * word);
    ppt_close(t);
    return r;
}

static void put_u32(const char *path, long off, uint32_t v)
{
    size_t len;
    char *bytes = tu_read_file(path, &len);
    cr_assert_not_null(bytes);
    cr_assert_lt((size_t)off + 4, len);
    memcpy(bytes + off, &v, 4);
    cr_assert_eq(tu_write_file(path, bytes, len), 0);
    free(bytes);
}

/* A damaged group (its first record names a target id outside the vocabulary) is never decoded
 * with: the sentence that needs it gets an empty line and a message with its line number, the
 * other lines are translated, and the run fails at the end. */
Test(dec_data, damaged_group_is_an_error_for_its_sentence)
{
    char *dir = tiny_binarized("bin"), *ppt = tu_join(dir, "phrase-table.ppt");
    char *ini = tu_join(dir, "moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    char *in = tu_join(tmp, "in.txt"), *out = NULL, *err = NULL;
    cr_assert_eq(tu_write_file(in, "x y\na b\nx\n", 10), 0);
    int rc = tu_runf(&out, &err, "'%s' -f '%s' -threads 2 < '%s'", fastsmt, ini, in);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "Y X \nA B \nX \n");
    free(out), free(err);
    /* group "a b": header (3 words), source id (1), then the record: info, align id, target id */
    put_u32(ppt, group_word_offset(ppt, "a b", 6), 0xfffffff0u);
    rc = tu_runf(&out, &err, "'%s' -f '%s' -threads 2 < '%s'", fastsmt, ini, in);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert_str_eq(out, "Y X \n\nX \n");
    cr_assert(strstr(err, "line 2: ") && strstr(err, "phrase-table.ppt: damaged group") &&
                  strstr(err, "'a b'"),
              "%s", err);
    free(out), free(err);
    /* the library says the same for one sentence */
    dec_model *m = dtu_load(ini, NULL);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    smt_buf b = {0};
    cr_assert_eq(dec_translate(w, "a b", 3, 0, &b, NULL, 0, 0, NULL, &e), SMT_ERR_CORRUPT);
    cr_assert_str_eq(b.data, "\n");
    cr_assert(strstr(e.msg, "damaged group"), "%s", e.msg);
    b.len = 0;
    cr_assert_eq(dec_translate(w, "x", 1, 0, &b, NULL, 0, 0, NULL, &e), 0, "%s", e.msg);
    cr_assert_str_eq(b.data, "X \n");
    smt_buf_free(&b);
    dec_worker_free(w);
    dec_model_free(m);
    /* an alignment id that names another pair's points (0-0 1-1, outside the 1 x 1 pair "x") */
    put_u32(ppt, group_word_offset(ppt, "x", 5), 1);
    rc = tu_runf(&out, &err, "'%s' -f '%s' -threads 2 < '%s'", fastsmt, ini, in);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert_str_eq(out, "\n\n\n");
    cr_assert(strstr(err, "line 1: ") && strstr(err, "line 3: ") && strstr(err, "'x'"), "%s", err);
    free(out), free(err);
    /* --verify refuses the file at load */
    rc = tu_runf(&out, &err, "'%s' -f '%s' --verify < '%s'", fastsmt, ini, in);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert_str_eq(out, "");
    cr_assert(strstr(err, "phrase-table.ppt"), "%s", err);
    free(out), free(err);
    free(dir), free(ppt), free(ini), free(fastsmt), free(in);
}

/* Damage only a checksum catches (a score's bits) decodes without --verify, as a lookup cannot see
 * it; --verify and -verify-models refuse it at load, for the phrase table and for the glm LM. */
Test(dec_data, verify_checks_every_checksum_at_load)
{
    char *dir = tiny_binarized("bin"), *ppt = tu_join(dir, "phrase-table.ppt");
    char *glm = tu_join(dir, "LM0.glm");
    char *ini = tu_join(dir, "moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    char *out = NULL, *err = NULL;
    int rc = tu_runf(&out, &err, "echo x | '%s' -f '%s' --verify", fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "X \n");
    free(out), free(err);
    /* group "x": header 3, source 1, info, align id, target id, then the score 0.5 */
    long off = group_word_offset(ppt, "x", 7);
    cr_assert_eq(tu_flip_bit(ppt, (uint64_t)off, 0), 0);
    rc = tu_runf(&out, &err, "echo x | '%s' -f '%s'", fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    free(out), free(err);
    static const char *const flags[] = {"--verify", "-verify-models"};
    for (int k = 0; k < 2; k++) {
        rc = tu_runf(&out, &err, "echo x | '%s' -f '%s' %s", fastsmt, ini, flags[k]);
        cr_assert_eq(rc, 1, "%s: %s", flags[k], err);
        cr_assert_str_eq(out, "");
        cr_assert(strstr(err, "phrase-table.ppt") && strstr(err, "payload"), "%s", err);
        free(out), free(err);
    }
    cr_assert_eq(tu_flip_bit(ppt, (uint64_t)off, 0), 0); /* repaired */
    long long size = tu_file_size(glm);
    cr_assert_gt(size, 0);
    /* the last section of a glm holds data that a lookup may not touch: damage its last byte but
     * one... any byte past the header works for the checksum; take the middle */
    cr_assert_eq(tu_flip_bit(glm, (uint64_t)size / 2, 3), 0);
    rc = tu_runf(&out, &err, "echo x | '%s' -f '%s' --verify", fastsmt, ini);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, "LM0.glm"), "%s", err);
    free(out), free(err);
    free(dir), free(ppt), free(glm), free(ini), free(fastsmt);
}

/* ---------------------------------------------------------------- the input */

/* dec_run of in into o on one thread, without an n-best list, refused lines reported on warn. */
static int run_stream(dec_model *m, FILE *in, FILE *o, FILE *warn, dec_run_stats *st, smt_err *e)
{
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.n_best = 0;
    ro.threads = 1;
    ro.warn = warn;
    return dec_run(m, in, o, &ro, st, e);
}

/* A directory as input is a read error, not an empty input: named file, redirected standard
 * input, and the library's FILE reader. */
Test(dec_data, read_error_is_an_error)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    char *out = NULL, *err = NULL;
    int rc = tu_runf(&out, &err, "'%s' -f '%s' -input-file '%s'", fastsmt, ini, tmp);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, tmp) && strstr(err, "is a directory"), "%s", err);
    cr_assert_null(strstr(err, "0 lines"), "%s", err);
    free(out), free(err);
    rc = tu_runf(&out, &err, "'%s' -f '%s' < '%s'", fastsmt, ini, tmp);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, "<stdin>") && strstr(err, "is a directory"), "%s", err);
    free(out), free(err);
    dec_model *m = dtu_load(ini, NULL);
    FILE *in = fopen(tmp, "r"), *o = fopen("/dev/null", "w");
    cr_assert(in && o);
    smt_err e;
    cr_assert_eq(run_stream(m, in, o, NULL, NULL, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "read error"), "%s", e.msg);
    fclose(in), fclose(o);
    dec_model_free(m);
    free(ini), free(fastsmt);
}

/* dec_run reads its stream as fastsmt reads a file: a byte-order mark and "\r\n" dropped, an
 * unterminated last line translated, gzip decompressed; the lines' numbers in its messages. */
Test(dec_data, dec_run_stream_lines)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *gz = tu_join(tmp, "s.gz");
    static const char text[] = "\xef\xbb\xbfx y\r\na b\n\nc";
    cr_assert_eq(tu_write_file(gz, text, sizeof text - 1), 0);
    cr_assert_eq(tu_runf(NULL, NULL, "gzip -f '%s' && mv '%s.gz' '%s'", gz, gz, gz), 0);
    dec_model *m = dtu_load(ini, NULL);
    for (int k = 0; k < 2; k++) {
        FILE *in = k ? fopen(gz, "r") : fmemopen((void *)text, sizeof text - 1, "r");
        char *got = NULL;
        size_t glen = 0;
        FILE *o = open_memstream(&got, &glen);
        cr_assert(in && o);
        smt_err e;
        dec_run_stats st;
        cr_assert_eq(run_stream(m, in, o, NULL, &st, &e), 0, "%s", e.msg);
        fclose(in), fclose(o);
        cr_assert_str_eq(got, "Y X \nA B \n\nY X \n", "%s", k ? "gzip" : "plain");
        cr_assert_eq(st.lines, 4);
        free(got);
    }
    /* a refused line is named by its number */
    char *warn = NULL, *got = NULL;
    size_t wlen = 0, glen = 0;
    FILE *w = open_memstream(&warn, &wlen), *o = open_memstream(&got, &glen);
    smt_buf bad = {0};
    smt_buf_puts(&bad, "x\n");
    for (int i = 0; i <= DEC_MAX_SENTENCE; i++)
        smt_buf_puts(&bad, "x ");
    cr_assert_eq(smt_buf_puts(&bad, "\n"), 0);
    FILE *in = fmemopen(bad.data, bad.len, "r");
    smt_err e;
    cr_assert_eq(run_stream(m, in, o, w, NULL, &e), SMT_ERR_LIMIT);
    fclose(in), fclose(o), fclose(w);
    smt_buf_free(&bad);
    cr_assert(strstr(warn, "line 2: "), "%s", warn);
    cr_assert_str_eq(got, "X \n\n");
    free(warn), free(got);
    dec_model_free(m);
    free(ini), free(gz);
}

/* -input-file x.gz and a redirected x.gz are decompressed; a gzip stream cut short mid-file is an
 * error after the lines before it are translated. */
Test(dec_data, compressed_input)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    char *in = tu_join(tmp, "in.txt"), *gz = tu_join(tmp, "in.txt.gz"), *out = NULL, *err = NULL;
    cr_assert_eq(tu_write_file(in, "x y\na b\nc\n", 10), 0);
    cr_assert_eq(tu_runf(NULL, NULL, "gzip -k '%s'", in), 0);
    int rc = tu_runf(&out, &err, "'%s' -f '%s' -input-file '%s'", fastsmt, ini, gz);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "Y X \nA B \nY X \n");
    free(out), free(err);
    rc = tu_runf(&out, &err, "'%s' -f '%s' < '%s'", fastsmt, ini, gz);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "Y X \nA B \nY X \n");
    free(out), free(err);
    /* through a pipe too (never translated as raw bytes) */
    rc = tu_runf(&out, &err, "cat '%s' | '%s' -f '%s'", gz, fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "Y X \nA B \nY X \n");
    free(out), free(err);
    /* a byte-order mark on a pipe is not part of the first word */
    rc = tu_runf(&out, &err, "printf '\\357\\273\\277x y\\n' | '%s' -f '%s'", fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "Y X \n");
    free(out), free(err);
    /* many lines, compressed, then cut: lines come out, then an error naming the file */
    char *big = tu_join(tmp, "big.txt"), *bgz = tu_join(tmp, "big.txt.gz");
    FILE *f = fopen(big, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 200000; i++)
        fprintf(f, "%s %d\n", i % 2 ? "x y" : "a b", i);
    cr_assert_eq(fclose(f), 0);
    cr_assert_eq(tu_runf(NULL, NULL, "gzip -1 -k '%s'", big), 0);
    long long size = tu_file_size(bgz);
    cr_assert_eq(tu_truncate(bgz, (uint64_t)size / 2), 0);
    rc = tu_runf(&out, &err, "'%s' -f '%s' -v 0 -threads 2 -input-file '%s'", fastsmt, ini, bgz);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, bgz), "%s", err);
    cr_assert(strlen(out) > 0);
    free(out), free(err);
    free(ini), free(fastsmt), free(in), free(gz), free(big), free(bgz);
}

/* The models are read through glm and probingpt, so any compression they read works: an xz ARPA,
 * a zstd phrase table and a bzip2 reordering table give the plain model's 1-best and n-best. */
Test(dec_data, compressed_models)
{
    char *dir = tiny_copy("z"), *fastsmt = tu_bin_path("fastsmt"), *ini = tu_join(dir, "moses.ini");
    char *in = tu_join(tmp, "in.txt"), *nb = tu_join(tmp, "out.nbest");
    cr_assert_eq(tu_write_file(in, "x y\na b\nc a\n", 12), 0);
    char *out[2] = {NULL, NULL}, *nbest[2] = {NULL, NULL}, *err = NULL;
    for (int k = 0; k < 2; k++) {
        if (k == 1) { /* compress each file with another compressor */
            static const char *const file[3] = {"lm.arpa", "phrase-table", "reordering-table"};
            static const char *const ext[3] = {"xz", "zst", "bz2"};
            for (int i = 0; i < 3; i++) { /* the libraries' own encoders: no zstd(1) needed */
                char *p = tu_join(dir, file[i]);
                cr_assert_eq(tu_compress_file(p, ext[i]), 0, "%s.%s", p, ext[i]);
                free(p);
            }
            int rc = tu_runf(NULL, &err,
                             "cd '%s' && sed -i -e 's/path=lm.arpa/path=lm.arpa.xz/' "
                             "-e 's/path=phrase-table/path=phrase-table.zst/' "
                             "-e 's/path=reordering-table/path=reordering-table.bz2/' moses.ini",
                             dir);
            cr_assert_eq(rc, 0, "%s", err);
            free(err);
        }
        int rc = tu_runf(&out[k], &err, "'%s' -f '%s' -n-best-list '%s' 10 < '%s'", fastsmt, ini,
                         nb, in);
        cr_assert_eq(rc, 0, "%s", err);
        free(err);
        size_t len;
        nbest[k] = tu_read_file(nb, &len);
        cr_assert_not_null(nbest[k]);
    }
    cr_assert(strlen(out[0]) > 0 && strlen(nbest[0]) > strlen(out[0]));
    cr_assert_str_eq(out[1], out[0]);
    cr_assert_str_eq(nbest[1], nbest[0]);
    for (int k = 0; k < 2; k++)
        free(out[k]), free(nbest[k]);
    free(dir), free(fastsmt), free(ini), free(in), free(nb);
}

/* ---------------------------------------------------------------- the model cache */

/* The entries of the cache folder dir ending in ext; the path of the last one in *path (may be
 * NULL). */
static int cache_entries(const char *dir, const char *ext, char **path)
{
    char *out = NULL;
    int rc = tu_runf(&out, NULL, "ls '%s' 2>/dev/null | grep '[.]%s$' || true", dir, ext);
    cr_assert_eq(rc, 0);
    int n = 0;
    char *last = NULL;
    for (char *save = NULL, *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
        n++, last = l;
    if (path)
        *path = last ? tu_join(dir, last) : NULL;
    free(out);
    return n;
}

static char *translate(const char *ini, const char *text)
{
    char *fastsmt = tu_bin_path("fastsmt"), *out = NULL, *err = NULL;
    int rc = tu_runf(&out, &err, "printf '%s' | '%s' -f '%s'", text, fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    free(fastsmt), free(err);
    return out;
}

/* Text tables are binarized once into $XDG_CACHE_HOME/fastsmt: a second load maps that file; a
 * damaged entry is found by its checksums and rebuilt; an edited input gets a new entry (never the
 * stale one) that replaces the old; FASTSMT_CACHE=0 writes nothing. */
Test(dec_data, model_cache)
{
    char *cache = tu_join(tmp, "cache"), *cdir = tu_join(cache, "fastsmt");
    cr_assert_eq(setenv("XDG_CACHE_HOME", cache, 1), 0);
    char *dir = tiny_copy("c"), *ini = tu_join(dir, "moses.ini");
    char *out = translate(ini, "x\\nx y\\n");
    cr_assert_str_eq(out, "X \nY X \n");
    free(out);
    char *ppt = NULL, *glm = NULL;
    cr_assert_eq(cache_entries(cdir, "ppt", &ppt), 1);
    cr_assert_eq(cache_entries(cdir, "glm", &glm), 1);
    struct stat a, b;
    cr_assert_eq(stat(ppt, &a), 0);
    usleep(20000); /* a rebuilt file would have a later mtime */
    /* the second load uses the entry as it is */
    out = translate(ini, "x\\nx y\\n");
    cr_assert_str_eq(out, "X \nY X \n");
    free(out);
    cr_assert_eq(stat(ppt, &b), 0);
    cr_assert(a.st_ino == b.st_ino && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
              a.st_mtim.tv_nsec == b.st_mtim.tv_nsec);
    /* a damaged entry is rebuilt (a new file under the same name), the output unchanged */
    cr_assert_eq(tu_flip_bit(ppt, (uint64_t)a.st_size / 2, 3), 0);
    cr_assert_eq(tu_flip_bit(glm, (uint64_t)tu_file_size(glm) / 2, 5), 0);
    out = translate(ini, "x\\nx y\\n");
    cr_assert_str_eq(out, "X \nY X \n");
    free(out);
    cr_assert_eq(cache_entries(cdir, "ppt", NULL), 1);
    ppt_table *t;
    smt_err e;
    cr_assert_eq(ppt_open(&t, ppt, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    ppt_close(t);
    glm_model *g;
    cr_assert_eq(glm_open(&g, glm, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    glm_close(g);
    /* the same size, edited in place, a later mtime: a new entry with the new table */
    char *pt = tu_join(dir, "phrase-table");
    size_t len;
    char *text = tu_read_file(pt, &len), *x = strstr(text, "x ||| X");
    cr_assert_not_null(x);
    struct stat before;
    cr_assert_eq(stat(pt, &before), 0);
    FILE *f = fopen(pt, "r+");
    cr_assert_not_null(f);
    cr_assert_eq(fseek(f, (long)(x - text) + 6, SEEK_SET), 0);
    cr_assert_eq(fputc('B', f), 'B');
    cr_assert_eq(fclose(f), 0);
    struct timespec times[2] = {before.st_atim, before.st_mtim};
    times[1].tv_sec += 1;
    cr_assert_eq(utimensat(AT_FDCWD, pt, times, 0), 0);
    out = translate(ini, "x\\n");
    cr_assert_str_eq(out, "B \n");
    free(out);
    /* one entry per set of inputs: the old version's is gone */
    char *ppt2 = NULL;
    cr_assert_eq(cache_entries(cdir, "ppt", &ppt2), 1);
    cr_assert_str_neq(ppt2, ppt);
    cr_assert_eq(cache_entries(cdir, "glm", NULL), 1);
    free(ppt2);
    /* off */
    char *dir2 = tiny_copy("d"), *ini2 = tu_join(dir2, "moses.ini");
    char *cache2 = tu_join(tmp, "cache2"), *fastsmt = tu_bin_path("fastsmt"), *err = NULL;
    int rc = tu_runf(&out, &err, "echo x | XDG_CACHE_HOME='%s' FASTSMT_CACHE=0 '%s' -f '%s'",
                     cache2, fastsmt, ini2);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "X \n");
    cr_assert_neq(access(cache2, F_OK), 0);
    free(out), free(err), free(fastsmt), free(cache2), free(dir2), free(ini2);
    free(text), free(pt), free(ppt), free(glm), free(dir), free(ini), free(cdir), free(cache);
}

/* The -model-cache flag wins over the environment: a folder receives the entries, off writes
 * nothing anywhere. */
Test(dec_data, model_cache_flag)
{
    char *env = tu_join(tmp, "env-cache"), *flag = tu_join(tmp, "flag-cache");
    char *dir = tiny_copy("f"), *ini = tu_join(dir, "moses.ini");
    char *fastsmt = tu_bin_path("fastsmt"), *out = NULL, *err = NULL;
    int rc = tu_runf(&out, &err, "echo x | XDG_CACHE_HOME='%s' '%s' -model-cache '%s' -f '%s'",
                     env, fastsmt, flag, ini);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "X \n");
    free(out), free(err);
    cr_assert_eq(cache_entries(flag, "ppt", NULL), 1);
    cr_assert_eq(cache_entries(flag, "glm", NULL), 1);
    cr_assert_neq(access(env, F_OK), 0);
    rc = tu_runf(&out, &err, "echo x | XDG_CACHE_HOME='%s' HOME='%s' '%s' -model-cache off -f '%s'",
                 env, env, fastsmt, ini);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(out, "X \n");
    free(out), free(err);
    cr_assert_neq(access(env, F_OK), 0);
    rc = tu_runf(NULL, &err, "echo x | '%s' -f '%s' -model-cache", fastsmt, ini);
    cr_assert_eq(rc, 2);
    cr_assert(strstr(err, "-model-cache needs a folder or off"), "%s", err);
    free(err), free(fastsmt), free(env), free(flag), free(dir), free(ini);
}

/* Loads the tiny model of ini with opt and checks its translation of "x y". */
static void load_and_translate_xy(const char *ini, const dec_options *opt)
{
    dec_model *m;
    smt_err e;
    const char *t = getenv("TMPDIR");
    cr_assert_eq(dec_model_load(&m, ini, opt, &e), 0, "TMPDIR=%s: %s", t ? t : "", e.msg);
    dec_worker *w;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0, "%s", e.msg);
    smt_buf best = {0};
    cr_assert_eq(dec_translate(w, "x y", 3, 0, &best, NULL, 0, 0, NULL, &e), 0, "%s", e.msg);
    cr_assert_str_eq(best.data, "Y X \n");
    smt_buf_free(&best);
    dec_worker_free(w);
    dec_model_free(m);
}

/* The library keeps its cache where dec_options.model_cache says, and with no folder writes none:
 * it reads no environment ($HOME, $XDG_CACHE_HOME and $FASTSMT_CACHE point at a folder that must
 * stay empty). */
Test(dec_data, model_cache_option)
{
    char *home = tu_join(tmp, "home"), *xdg = tu_join(home, "xdg"), *mine = tu_join(tmp, "mine");
    char *cdir = tu_join(mine, "fastsmt-models");
    cr_assert_eq(mkdir(home, 0700), 0);
    cr_assert_eq(setenv("HOME", home, 1), 0);
    cr_assert_eq(setenv("XDG_CACHE_HOME", xdg, 1), 0);
    cr_assert_eq(setenv("FASTSMT_CACHE", home, 1), 0);
    char *dir = tiny_copy("o"), *ini = tu_join(dir, "moses.ini");
    for (int k = 0; k < 2; k++) {
        dec_options opt;
        dec_options_default(&opt);
        cr_assert_null(opt.model_cache);
        if (k)
            opt.model_cache = cdir;
        load_and_translate_xy(ini, &opt);
        char *ls = NULL;
        cr_assert_eq(tu_runf(&ls, NULL, "ls -A '%s'", home), 0);
        cr_assert_str_eq(ls, "", "the library wrote into $HOME: %s", ls);
        free(ls);
        cr_assert_eq(cache_entries(cdir, "ppt", NULL), k);
        cr_assert_eq(cache_entries(cdir, "glm", NULL), k);
    }
    free(home), free(xdg), free(mine), free(cdir), free(dir), free(ini);
}

/* No cache folder and a $TMPDIR that is missing or takes no file (read-only; /proc/self refuses
 * root too): the text tables and the ARPA LM are binarized in the next temporary folder that
 * works (smt_temp_file), and the load succeeds. */
Test(dec_data, load_without_a_usable_tmpdir)
{
    char *ro = tu_join(tmp, "ro");
    cr_assert_eq(mkdir(ro, 0555), 0);
    const char *bad[] = {"/nonexistent-fastsmt-tmp", "/proc/self", ro};
    char *dir = tiny_copy("t"), *ini = tu_join(dir, "moses.ini");
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(setenv("TMPDIR", bad[i], 1), 0);
        dec_options opt;
        dec_options_default(&opt);
        load_and_translate_xy(ini, &opt);
    }
    free(ro), free(dir), free(ini);
}

/* The tools' folder: $FASTSMT_CACHE=0 turns it off; then $XDG_CACHE_HOME (absolute), then $HOME. */
Test(dec_data, model_cache_dir_rule)
{
    static const struct {
        const char *fc, *xdg, *home, *want;
    } cases[] = {
        {NULL, "/x", "/h", "/x/fastsmt"},      {"1", "/x", "/h", "/x/fastsmt"},
        {"0", "/x", "/h", NULL},               {NULL, "rel", "/h", "/h/.cache/fastsmt"},
        {NULL, NULL, "/h", "/h/.cache/fastsmt"}, {NULL, "", "", NULL},
        {NULL, NULL, "rel", NULL},             {NULL, NULL, NULL, NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *d = dec_model_cache_dir(cases[i].fc, cases[i].xdg, cases[i].home);
        if (cases[i].want)
            cr_assert(d && !strcmp(d, cases[i].want), "case %zu: %s", i, d ? d : "(null)");
        else
            cr_assert_null(d, "case %zu: %s", i, d);
        free(d);
    }
}

/* A pipe is answered line by line: the first line's translation arrives while the input is still
 * open. */
Test(dec_data, pipe_is_answered_line_by_line)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    tu_proc p;
    cr_assert_eq(tu_proc_start(&p, (char *const[]){fastsmt, "-f", ini, "-v", "0", NULL}), 0);
    for (int k = 0; k < 2; k++) {
        const char *line = k ? "a b\n" : "x y\n", *want = k ? "A B \n" : "Y X \n";
        char got[64];
        cr_assert_eq(tu_proc_ask(&p, line, got, sizeof got, 20000), 0,
                     "no answer to line %d while the input is open", k + 1);
        cr_assert_str_eq(got, want);
    }
    cr_assert_eq(tu_proc_finish(&p), 0);
    free(ini), free(fastsmt);
}

/* ---------------------------------------------------------------- progress */

Test(dec_data, progress_format)
{
    char buf[160];
    dec_progress_format(buf, sizeof buf, 10, 55, 2.0);
    cr_assert_str_eq(buf, "fastsmt: 10 lines, 55 words, 5.0 lines/s, 27.5 words/s, 2.0 s");
    dec_progress_format(buf, sizeof buf, 0, 0, 0);
    cr_assert_str_eq(buf, "fastsmt: 0 lines, 0 words, 0.0 lines/s, 0.0 words/s, 0.0 s");
}

/* On a pipe, no meter (only the summary); on a terminal (script(1) gives one), the meter shows
 * unless -v 0. */
Test(dec_data, progress_only_on_a_terminal)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *fastsmt = tu_bin_path("fastsmt");
    char *in = tu_join(tmp, "in.txt"), *out = NULL;
    cr_assert_eq(tu_write_file(in, "x y\na b\n", 8), 0);
    int rc = tu_runf(&out, NULL, "'%s' -f '%s' -input-file '%s' 2>&1 >/dev/null | cat", fastsmt, ini, in);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "fastsmt: 2 lines"), "%s", out);
    cr_assert_null(strstr(out, "lines/s"), "%s", out);
    cr_assert_null(strchr(out, '\r'), "%s", out);
    free(out);
    if (system("script -qec true /dev/null >/dev/null 2>&1") != 0) {
        free(ini), free(fastsmt), free(in);
        cr_skip_test("no script(1) to give the program a terminal");
    }
    rc = tu_runf(&out, NULL, "script -qec \"'%s' -f '%s' -input-file '%s' >/dev/null\" /dev/null",
             fastsmt, ini, in);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "2 lines, 4 words,") && strstr(out, "lines/s"), "%s", out);
    free(out);
    rc = tu_runf(&out, NULL, "script -qec \"'%s' -f '%s' -v 0 -input-file '%s' >/dev/null\" /dev/null",
             fastsmt, ini, in);
    cr_assert_eq(rc, 0);
    cr_assert_null(strstr(out, "lines/s"), "%s", out);
    free(out);
    free(ini), free(fastsmt), free(in);
}

/* ---------------------------------------------------------------- one parser, one verdict */

/* The message of a load error from "name:" (the file's base name) to the end of its line. */
static char *from_name(const char *msg, const char *name)
{
    const char *p = strstr(msg, name);
    cr_assert_not_null(p, "'%s' not in %s", name, msg);
    size_t n = strcspn(p, "\n");
    return strndup(p, n);
}

/* NaN, infinities, overflows, hex and negative probabilities in a text phrase or reordering table:
 * the decoder refuses the file with file:line, and probingpt build refuses it with the same
 * message (the same parser). */
Test(dec_data, text_tables_one_verdict)
{
    static const char *const bad_scores[] = {"nan", "inf", "-inf", "-0.5", "1e999", "0x10", "0.5x"};
    char *dir = tiny_copy("m"), *ini = tu_join(dir, "moses.ini");
    char *pt = tu_join(dir, "phrase-table"), *rt = tu_join(dir, "reordering-table");
    size_t pt_len, rt_len;
    char *pt_text = tu_read_file(pt, &pt_len), *rt_text = tu_read_file(rt, &rt_len);
    cr_assert(pt_text && rt_text);
    char *probingpt = tu_bin_path("probingpt"), *ppt = tu_join(tmp, "out.ppt");
    for (int table = 0; table < 2; table++) {
        for (size_t k = 0; k < sizeof bad_scores / sizeof *bad_scores; k++) {
            /* line 2 of the table gets the bad score in its first score */
            char *text = NULL;
            if (table == 0)
                cr_assert(asprintf(&text, "%s" "b ||| B ||| %s ||| 0-0 ||| 1 1 1\n", "a ||| A ||| 0.5 ||| 0-0 ||| 1 1 1\n",
                                   bad_scores[k]) > 0);
            else
                cr_assert(asprintf(&text, "a ||| A ||| 0.5 0.2 0.3 0.6 0.1 0.3\n"
                                          "b ||| B ||| 0.4 0.4 0.2 0.5 %s 0.25\n", bad_scores[k]) > 0);
            char *path = table == 0 ? pt : rt;
            cr_assert_eq(tu_write_file(path, text, strlen(text)), 0);
            dec_model *m = NULL;
            smt_err e;
            int rc = dec_model_load(&m, ini, NULL, &e);
            cr_assert_eq(rc, SMT_ERR_PARSE, "%s in %s: %d %s", bad_scores[k], path, rc, e.msg);
            cr_assert_null(m);
            const char *name = table == 0 ? "phrase-table:2: " : "reordering-table:2: ";
            char *dec_msg = from_name(e.msg, name);
            char *want = NULL;
            cr_assert(asprintf(&want, "%s%s %sscore '%s'", name,
                               bad_scores[k][0] == '-' && strcmp(bad_scores[k], "-inf") ? "negative" : "bad",
                               table ? "reordering " : "", bad_scores[k]) > 0);
            cr_assert_str_eq(dec_msg, want);
            char *err = NULL;
            if (table == 0)
                rc = tu_runf(NULL, &err, "'%s' build --phrase-table '%s' --out '%s'", probingpt, pt, ppt);
            else
                rc = tu_runf(NULL, &err, "'%s' build --phrase-table '%s' --reordering '%s' --out '%s'",
                         probingpt, pt, rt, ppt);
            cr_assert_eq(rc, 1, "%s", err);
            char *build_msg = from_name(err, name);
            cr_assert_str_eq(build_msg, dec_msg);
            free(err), free(build_msg);
            free(text), free(dec_msg), free(want);
            /* restore this table for the other one's cases */
            cr_assert_eq(tu_write_file(path, table == 0 ? pt_text : rt_text, table == 0 ? pt_len : rt_len), 0);
        }
    }
    free(probingpt), free(ppt);
    free(dir), free(ini), free(pt), free(rt), free(pt_text), free(rt_text);
}

/* ---------------------------------------------------------------- reordering orientations */

/* Each phrase's reordering scores are distinct (x: .11 .12 ..., y: .21 ..., a: .31 ...), so the
 * n-best features show which orientation each step took. Input "x y a" (positions 0 1 2). */
static const char *const reo_table_fmt = "a ||| A ||| %s\nx ||| X ||| %s\ny ||| Y ||| %s\n";

static void reo_scores(char *buf, int first, int n)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        sprintf(buf + strlen(buf), "%s0.%d", i ? " " : "", first + i);
}

/* The LexicalReordering0 features of the n-best line with these words, or fails. */
static void reo_features(const char *nbest, const char *words, double *f, int n)
{
    char *want = NULL;
    cr_assert(asprintf(&want, " ||| %s ||| LexicalReordering0= ", words) > 0);
    const char *p = strstr(nbest, want);
    cr_assert_not_null(p, "no '%s' in\n%s", words, nbest);
    p += strlen(want);
    for (int i = 0; i < n; i++) {
        char *end;
        f[i] = strtod(p, &end);
        cr_assert(end != p, "%s", p);
        p = end;
    }
    free(want);
}

/* Expected features: per path, the (phrase, index) pairs scored; ln of phrase p's score i
 * (p: 0 x, 1 y, 2 a; in the five-word model 0 p .. 4 t) is ln(0.(p+1)(i+1)). */
typedef struct reo_step {
    int phrase, index;
} reo_step;

static void check_path(const char *nbest, const char *words, const reo_step *steps, int n_steps,
                       int n, const char *what)
{
    double want[8] = {0}, got[8];
    static const int base[] = {11, 21, 31, 41, 51};
    for (int s = 0; s < n_steps; s++)
        want[steps[s].index] += log((base[steps[s].phrase] + steps[s].index) / 100.0);
    reo_features(nbest, words, got, n);
    for (int i = 0; i < n; i++)
        cr_assert_float_eq(got[i], want[i], 1e-3, "%s, %s: feature %d is %g, expected %g", what,
                           words, i, got[i], want[i]);
}

/* The model of the tiny folder with `type` (n scores), the reordering table rt_text (and the
 * phrase table pt_text when not NULL), early: [early-distortion-cost]; the n-best of `input` with
 * every hypothesis kept, from the text tables and from their binarized copy. */
static void reo_nbests_ex(const char *type, int n, const char *pt_text, const char *rt_text,
                          const char *input, int early, char **text_nbest, char **bin_nbest)
{
    static int calls;
    char name[200];
    snprintf(name, sizeof name, "%s.%d", type, calls++); /* a folder per call */
    char *dir = tiny_copy(name), *ini = tu_join(dir, "moses.ini"), *rt = tu_join(dir, "reordering-table");
    char *ini_text = NULL;
    cr_assert_eq(tu_write_file(rt, rt_text, strlen(rt_text)), 0);
    if (pt_text) {
        char *pt = tu_join(dir, "phrase-table");
        cr_assert_eq(tu_write_file(pt, pt_text, strlen(pt_text)), 0);
        free(pt);
    }
    char weights[80];
    reo_scores(weights, 1, n); /* any weights: the features are checked */
    cr_assert(asprintf(&ini_text,
                       "[feature]\nUnknownWordPenalty\nWordPenalty\nPhrasePenalty\n"
                       "PhraseDictionaryMemory name=TranslationModel0 num-features=1 path=phrase-table\n"
                       "LexicalReordering name=LexicalReordering0 num-features=%d type=%s "
                       "path=reordering-table\nDistortion\nKENLM name=LM0 factor=0 path=lm.arpa order=2\n"
                       "[distortion-limit]\n6\n%s[weight]\nLexicalReordering0= %s\nDistortion0= 0.3\n"
                       "LM0= 1\nWordPenalty0= 0.5\nPhrasePenalty0= 0.2\nTranslationModel0= 1\n"
                       "UnknownWordPenalty0= 1\n",
                       n, type, early ? "[early-distortion-cost]\ntrue\n" : "", weights) > 0);
    cr_assert_eq(tu_write_file(ini, ini_text, strlen(ini_text)), 0);
    dec_options opt;
    dec_options_default(&opt);
    opt.beam_threshold = 0; /* keep every hypothesis */
    for (int b = 0; b < 2; b++) {
        char *use = ini, *bin_dir = NULL;
        if (b) {
            char *bin = tu_bin_path("fastsmt-binarize"), *err = NULL;
            bin_dir = tu_join(dir, "bin");
            cr_assert_eq(tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, bin_dir), 0, "%s", err);
            use = tu_join(bin_dir, "moses.ini");
            free(bin), free(err);
        }
        dec_model *m = dtu_load(use, &opt);
        dec_worker *w;
        smt_err e;
        cr_assert_eq(dec_worker_create(&w, m, &e), 0);
        smt_buf best = {0}, nb = {0};
        cr_assert_eq(dec_translate(w, input, strlen(input), 0, &best, &nb, 1000, 0, NULL, &e), 0,
                     "%s", e.msg);
        *(b ? bin_nbest : text_nbest) = strdup(nb.data);
        smt_buf_free(&best), smt_buf_free(&nb);
        dec_worker_free(w);
        dec_model_free(m);
        if (b)
            free(use), free(bin_dir);
    }
    free(dir), free(ini), free(rt), free(ini_text);
}

/* The tiny model with the reordering table above: n-best of "x y a". */
static void reo_nbests(const char *type, int n, char **text_nbest, char **bin_nbest)
{
    char sx[80], sy[80], sa[80], *table = NULL;
    reo_scores(sx, 11, n), reo_scores(sy, 21, n), reo_scores(sa, 31, n);
    cr_assert(asprintf(&table, reo_table_fmt, sa, sx, sy) > 0);
    reo_nbests_ex(type, n, NULL, table, "x y a", 0, text_nbest, bin_nbest);
    free(table);
}

enum { X, Y, A };

/* The n-best list is ordered by the search's own scores, while each printed total is weights ·
 * features recomputed from the path: the totals must come out best first, so a search that scored
 * an orientation with the wrong table column or weight disagrees with its own n-best. */
static void check_search_agrees(const char *nbest, const char *what)
{
    double prev = INFINITY;
    int lines = 0;
    for (const char *l = nbest; *l;) {
        const char *nl = strchr(l, '\n'), *sep = NULL;
        cr_assert_not_null(nl);
        for (const char *p = l; p < nl && (p = strstr(p, "||| ")) && p < nl; p++)
            sep = p;
        cr_assert_not_null(sep, "%s", l);
        double total = strtod(sep + 4, NULL);
        cr_assert_leq(total, prev + 1e-4, "%s: n-best line %d's total %g follows %g", what,
                      lines + 1, total, prev);
        prev = total;
        lines++;
        l = nl + 1;
    }
    cr_assert_gt(lines, 3, "%s", what);
}

/* Paths of "x y a": X Y A (monotone), A X Y (a first at 2, x jumps left over y, y follows x),
 * Y X A (y first at 1, x swaps, a jumps right). Backward scores are the phrase's own for the
 * orientation of its step; forward ones the previous phrase's for the same orientation (offset
 * by the number of orientations); the last phrase has no forward score. */
static void check_type_n(const char *type, int n, const reo_step *xya, int n1,
                         const reo_step *axy, int n2, const reo_step *yxa, int n3)
{
    char *t = NULL, *b = NULL;
    reo_nbests(type, n, &t, &b);
    cr_assert_str_eq(t, b, "%s: the binarized model's n-best differs from the text model's", type);
    for (int pass = 0; pass < 2; pass++) {
        const char *nb = pass ? b : t;
        if (!nb)
            continue;
        const char *what = pass ? "binarized" : "text";
        check_search_agrees(nb, what);
        check_path(nb, "X Y A ", xya, n1, n, what);
        check_path(nb, "A X Y ", axy, n2, n, what);
        check_path(nb, "Y X A ", yxa, n3, n, what);
    }
    free(t), free(b);
}

static void check_type(const char *type, int k, const reo_step *xya, int n1, const reo_step *axy,
                       int n2, const reo_step *yxa, int n3)
{
    check_type_n(type, 2 * k, xya, n1, axy, n2, yxa, n3);
}

Test(dec_data, reordering_msd)
{
    /* M 0, S 1, D 2; forward + 3 */
    const reo_step xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 3}, {Y, 3}};
    const reo_step axy[] = {{A, 2}, {X, 2}, {Y, 0}, {A, 5}, {X, 3}};
    const reo_step yxa[] = {{Y, 2}, {X, 1}, {A, 2}, {Y, 4}, {X, 5}};
    check_type("wbe-msd-bidirectional-fe-allff", 3, xya, 5, axy, 5, yxa, 5);
}

Test(dec_data, reordering_mslr)
{
    /* M 0, S 1, DL 2, DR 3; forward + 4. A first phrase not at 0 is DR. */
    const reo_step xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 4}, {Y, 4}};
    const reo_step axy[] = {{A, 3}, {X, 2}, {Y, 0}, {A, 6}, {X, 4}};
    const reo_step yxa[] = {{Y, 3}, {X, 1}, {A, 3}, {Y, 5}, {X, 7}};
    check_type("wbe-mslr-bidirectional-fe-allff", 4, xya, 5, axy, 5, yxa, 5);
}

Test(dec_data, reordering_leftright)
{
    /* R 0 (the first phrase, and a step that does not go left), L 1; forward + 2 */
    const reo_step xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 2}, {Y, 2}};
    const reo_step axy[] = {{A, 0}, {X, 1}, {Y, 0}, {A, 3}, {X, 2}};
    const reo_step yxa[] = {{Y, 0}, {X, 1}, {A, 0}, {Y, 3}, {X, 2}};
    check_type("wbe-leftright-bidirectional-fe-allff", 2, xya, 5, axy, 5, yxa, 5);
}

/* Hierarchical models (Galley & Manning, Moses's HReordering*State) on the same paths. Backward:
 * the orientation against the top block of the shift-reduce stack; forward: against the previous
 * phrase, with the coverage once the next phrase is added. Where they differ from the
 * phrase-based model:
 *   A X Y: forward A -> X is a swap (x at 0 is left of a at 2 and word 1, between them, is still
 *          uncovered), where the phrase-based model says discontinuous;
 *   Y X A: after Y (1) and X (0, a swap: d = 0 - 1 = -1) the stack's top is the block [0, 1],
 *          so A (2) is monotone (d = 2 - 1 = 1), where the phrase-based model (A after X at 0)
 *          says discontinuous. */
Test(dec_data, reordering_hier_msd)
{
    /* M 0, S 1, D 2; forward + 3 */
    const reo_step xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 3}, {Y, 3}};
    const reo_step axy[] = {{A, 2}, {X, 2}, {Y, 0}, {A, 4}, {X, 3}};
    const reo_step yxa[] = {{Y, 2}, {X, 1}, {A, 0}, {Y, 4}, {X, 5}};
    check_type("hier-msd-bidirectional-fe", 3, xya, 5, axy, 5, yxa, 5);
}

Test(dec_data, reordering_hier_mslr)
{
    /* M 0, S 1, DL 2, DR 3; forward + 4. The first phrase: d = start + 1, DR unless at 0. The
     * last step of Y X A forward: x (0) then a (2) with word 1 covered: DR (7). */
    const reo_step xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 4}, {Y, 4}};
    const reo_step axy[] = {{A, 3}, {X, 2}, {Y, 0}, {A, 5}, {X, 4}};
    const reo_step yxa[] = {{Y, 3}, {X, 1}, {A, 0}, {Y, 5}, {X, 7}};
    check_type("hier-mslr-bidirectional-fe", 4, xya, 5, axy, 5, yxa, 5);
}

Test(dec_data, reordering_hier_monotonicity_leftright)
{
    /* monotonicity: M 0, NM 1 (a swap is NM too); forward + 2 */
    const reo_step m_xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 2}, {Y, 2}};
    const reo_step m_axy[] = {{A, 1}, {X, 1}, {Y, 0}, {A, 3}, {X, 2}};
    const reo_step m_yxa[] = {{Y, 1}, {X, 1}, {A, 0}, {Y, 3}, {X, 3}};
    check_type("hier-monotonicity-bidirectional-fe", 2, m_xya, 5, m_axy, 5, m_yxa, 5);
    /* leftright: R 0, L 1 (d >= 1 is R); the same as the phrase-based model on these paths */
    const reo_step l_xya[] = {{X, 0}, {Y, 0}, {A, 0}, {X, 2}, {Y, 2}};
    const reo_step l_axy[] = {{A, 0}, {X, 1}, {Y, 0}, {A, 3}, {X, 2}};
    const reo_step l_yxa[] = {{Y, 0}, {X, 1}, {A, 0}, {Y, 3}, {X, 2}};
    check_type("hier-leftright-bidirectional-fe", 2, l_xya, 5, l_axy, 5, l_yxa, 5);
}

Test(dec_data, reordering_hier_one_direction)
{
    /* backward only (the default direction, and "backward"): the first three scores above */
    const reo_step b_xya[] = {{X, 0}, {Y, 0}, {A, 0}};
    const reo_step b_axy[] = {{A, 2}, {X, 2}, {Y, 0}};
    const reo_step b_yxa[] = {{Y, 2}, {X, 1}, {A, 0}};
    check_type_n("hier-msd-backward-fe", 3, b_xya, 3, b_axy, 3, b_yxa, 3);
    check_type_n("hier-msd-fe", 3, b_xya, 3, b_axy, 3, b_yxa, 3);
    /* forward only: the forward scores at offset 0 */
    const reo_step f_xya[] = {{X, 0}, {Y, 0}};
    const reo_step f_axy[] = {{A, 1}, {X, 0}};
    const reo_step f_yxa[] = {{Y, 1}, {X, 3}};
    check_type_n("hier-mslr-forward-fe", 4, f_xya, 2, f_axy, 2, f_yxa, 2);
}

/* A deeper stack, five words p q r s t (0..4), one phrase each: the path S P R Q T. Backward:
 * S (3): d = 4, D; stack [3]. P (0): d = 0 - 3 = -3, D; [3][0]. R (2): d = 2 - 0 = 2, D;
 * [3][0][2]. Q (1): d = 1 - 2 = -1, S: merged [1,2], then with [0] (monotone) [0,2], then with
 * [3] (swap) [0,3]: the stack is one block. T (4): d = 4 - 3 = 1, M (the phrase-based model says
 * D: t does not follow q). Forward: S -> P swap (word 2 uncovered), P -> R monotone (word 1
 * uncovered), R -> Q swap, Q -> T discontinuous. */
Test(dec_data, reordering_hier_stack_reduces)
{
    static const char *const words = "pqrst";
    char *pt = NULL, *rt = NULL;
    for (int i = 0; i < 5; i++) {
        char sc[80], *a = NULL, *b = NULL;
        reo_scores(sc, 11 + 10 * i, 6);
        cr_assert(asprintf(&a, "%s%c ||| %c ||| 0.5 ||| 0-0\n", pt ? pt : "", words[i],
                           words[i] - 'a' + 'A') > 0);
        cr_assert(asprintf(&b, "%s%c ||| %c ||| %s\n", rt ? rt : "", words[i],
                           words[i] - 'a' + 'A', sc) > 0);
        free(pt), free(rt);
        pt = a, rt = b;
    }
    char *t = NULL, *b = NULL;
    reo_nbests_ex("hier-msd-bidirectional-fe", 6, pt, rt, "p q r s t", 0, &t, &b);
    cr_assert_str_eq(t, b);
    enum { P, Q, R, S, T };
    const reo_step spqrt[] = {{S, 2}, {P, 2}, {R, 2}, {Q, 1}, {T, 0},
                              {S, 4}, {P, 3}, {R, 4}, {Q, 5}};
    const reo_step pqrst[] = {{P, 0}, {Q, 0}, {R, 0}, {S, 0}, {T, 0},
                              {P, 3}, {Q, 3}, {R, 3}, {S, 3}};
    for (int pass = 0; pass < 2; pass++) {
        const char *nb = pass ? b : t, *what = pass ? "binarized" : "text";
        check_search_agrees(nb, what);
        check_path(nb, "S P R Q T ", spqrt, 9, 6, what);
        check_path(nb, "P Q R S T ", pqrst, 9, 6, what);
    }
    free(t), free(b);
    /* the phrase-based model on the same path: T after Q is discontinuous, and so are the
     * forward steps S -> P and P -> R */
    reo_nbests_ex("msd-bidirectional-fe", 6, pt, rt, "p q r s t", 0, &t, &b);
    const reo_step phrase[] = {{S, 2}, {P, 2}, {R, 2}, {Q, 1}, {T, 2},
                               {S, 5}, {P, 5}, {R, 4}, {Q, 5}};
    check_path(t, "S P R Q T ", phrase, 9, 6, "phrase-based");
    free(t), free(b), free(pt), free(rt);
}

/* Moses's early distortion cost (Moore & Quirk), by hand from DistortionScoreProducer:
 *   X Y A: 0 + 0 + 0 = 0;
 *   A X Y: A (2) leaves words 0-1 behind: -2 (2 + 1) = -6; X at the first gap 0; Y at gap 1:
 *          -6 (the standard cost: -(2 + 3 + 0) = -5);
 *   X A Y: X 0; A (2) after the prefix [0]: -2 (1 + 1) = -4; Y at the gap: 0; -4 (standard -3);
 *   Y X A: Y -2 (1 + 1) = -4, X and A at the first gap: -4 (standard -4).
 * In five words p q r s t, the other two cases: Q S ...: S (3) after Q (1), which is not in the
 * translated prefix (empty): -2 (3 - 1 - 1 + 1) = -4, after Q's -4; S Q ...: Q (1) left of S (3)
 * but not at the first gap 0: -2 · 1, after S's -2 (3 + 1) = -8. */
static double distortion_feature(const char *nbest, const char *words)
{
    char *want = NULL;
    cr_assert(asprintf(&want, " ||| %s ||| ", words) > 0);
    const char *p = strstr(nbest, want);
    cr_assert_not_null(p, "no '%s' in\n%s", words, nbest);
    const char *d = strstr(p, "Distortion0= ");
    cr_assert_not_null(d);
    free(want);
    return strtod(d + strlen("Distortion0= "), NULL);
}

Test(dec_data, early_distortion_cost)
{
    char sx[80], sy[80], sa[80], *table = NULL, *t = NULL, *b = NULL;
    reo_scores(sx, 11, 6), reo_scores(sy, 21, 6), reo_scores(sa, 31, 6);
    cr_assert(asprintf(&table, reo_table_fmt, sa, sx, sy) > 0);
    reo_nbests_ex("msd-bidirectional-fe", 6, NULL, table, "x y a", 1, &t, &b);
    cr_assert_str_eq(t, b);
    check_search_agrees(t, "early");
    cr_assert_float_eq(distortion_feature(t, "X Y A "), 0, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "A X Y "), -6, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "X A Y "), -4, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "Y X A "), -4, 1e-6);
    free(t), free(b);
    /* without it: the standard cost */
    reo_nbests_ex("msd-bidirectional-fe", 6, NULL, table, "x y a", 0, &t, &b);
    cr_assert_float_eq(distortion_feature(t, "A X Y "), -5, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "X A Y "), -3, 1e-6);
    free(t), free(b), free(table);
    /* five words: the cases "right of a phrase outside the prefix" and "left of the previous
     * phrase"; Q S P R T ends at the sentence end: -4 - 4 + 0 + 0 + 0 = -8; S Q P R T:
     * -8 - 2 + 0 + 0 + 0 = -10; S Q T P R: -8 - 2, T (4) after Q (1) outside the prefix:
     * -2 (4 - 1 - 1 + 1) = -6, P at the gap, R at the gap: -16 (standard -(3 + 3 + 2 + 5 + 1)) */
    static const char *const words = "pqrst";
    char *pt = NULL, *rt = NULL;
    for (int i = 0; i < 5; i++) {
        char sc[80], *x = NULL, *y = NULL;
        reo_scores(sc, 11 + 10 * i, 6);
        cr_assert(asprintf(&x, "%s%c ||| %c ||| 0.5 ||| 0-0\n", pt ? pt : "", words[i],
                           words[i] - 'a' + 'A') > 0);
        cr_assert(asprintf(&y, "%s%c ||| %c ||| %s\n", rt ? rt : "", words[i],
                           words[i] - 'a' + 'A', sc) > 0);
        free(pt), free(rt);
        pt = x, rt = y;
    }
    reo_nbests_ex("msd-bidirectional-fe", 6, pt, rt, "p q r s t", 1, &t, &b);
    cr_assert_str_eq(t, b);
    check_search_agrees(t, "early, five words");
    cr_assert_float_eq(distortion_feature(t, "Q S P R T "), -8, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "S Q P R T "), -10, 1e-6);
    cr_assert_float_eq(distortion_feature(t, "S Q T P R "), -16, 1e-6);
    free(t), free(b), free(pt), free(rt);
}

/* ---------------------------------------------------------------- fastsmt-binarize */

/* The model's own folder as OUTDIR would replace its moses.ini: refused, nothing written. */
Test(dec_data, binarize_never_overwrites_an_input)
{
    char *dir = tiny_copy("own"), *ini = tu_join(dir, "moses.ini"), *bin = tu_bin_path("fastsmt-binarize");
    char *ppt = tu_join(dir, "phrase-table.ppt"), *err = NULL;
    size_t before_len, after_len;
    char *before = tu_read_file(ini, &before_len);
    int rc = tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, dir);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, "refusing to overwrite"), "%s", err);
    char *after = tu_read_file(ini, &after_len);
    cr_assert_eq(after_len, before_len);
    cr_assert_eq(memcmp(before, after, before_len), 0);
    cr_assert_eq(access(ppt, F_OK), -1, "nothing is written");
    free(err), free(before), free(after);
    /* the same through another spelling of the folder */
    rc = tu_runf(NULL, &err, "cd '%s' && '%s' moses.ini ../own/.", dir, bin);
    cr_assert_eq(rc, 1, "%s", err);
    free(err);
    free(dir), free(ini), free(bin), free(ppt);
}

/* An ini that already names binaries, given by a relative path: the new ini names them so that it
 * works from OUTDIR, and translates as the first one does. */
Test(dec_data, binarize_rewrites_paths_for_outdir)
{
    char *first = tiny_binarized("bin1"), *bin = tu_bin_path("fastsmt-binarize"), *err = NULL;
    cr_assert_not_null(first);
    int rc = tu_runf(NULL, &err, "cd '%s' && mkdir out && '%s' bin1/moses.ini out/bin2", tmp, bin);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    char *a = tu_join(first, "moses.ini"), *d = tu_join(tmp, "out/bin2"), *b = tu_join(d, "moses.ini");
    dec_model *ma = dtu_load(a, NULL), *mb = dtu_load(b, NULL);
    dec_worker *wa, *wb;
    smt_err e;
    cr_assert_eq(dec_worker_create(&wa, ma, &e), 0);
    cr_assert_eq(dec_worker_create(&wb, mb, &e), 0);
    smt_buf ba = {0}, bb = {0};
    cr_assert_eq(dec_translate(wa, "x y a b", 7, 0, &ba, &ba, 5, 0, NULL, &e), 0);
    cr_assert_eq(dec_translate(wb, "x y a b", 7, 0, &bb, &bb, 5, 0, NULL, &e), 0);
    cr_assert_str_eq(ba.data, bb.data);
    smt_buf_free(&ba), smt_buf_free(&bb);
    dec_worker_free(wa), dec_worker_free(wb);
    dec_model_free(ma), dec_model_free(mb);
    free(first), free(bin), free(a), free(d), free(b);
}

/* The new moses.ini follows the common writer's rules: a symbolic link at OUTDIR/moses.ini is
 * written through (the link stays, its target gets the new ini); a fifo or a folder there is
 * refused and left as it was, and no temporary file stays behind. */
Test(dec_data, binarize_output_ini_follows_the_writer_rules)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *bin = tu_bin_path("fastsmt-binarize");
    char *dir = tu_join(tmp, "linked"), *link = tu_join(dir, "moses.ini");
    char *real = tu_join(dir, "real.ini"), *err = NULL;
    cr_assert_eq(mkdir(dir, 0777), 0);
    cr_assert_eq(tu_write_file(real, "old\n", 4), 0);
    cr_assert_eq(symlink("real.ini", link), 0);
    int rc = tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, dir);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    struct stat st;
    cr_assert_eq(lstat(link, &st), 0);
    cr_assert(S_ISLNK(st.st_mode), "the link was replaced");
    size_t len;
    char *text = tu_read_file(real, &len);
    cr_assert(strstr(text, "Written by fastsmt-binarize") && strstr(text, "phrase-table.ppt"), "%s",
              text);
    cr_assert(strstr(text, " path=phrase-table.ppt "), "relative to the folder: %s", text);
    free(text);
    dec_model_free(dtu_load(link, NULL));
    /* a link to a file in another folder: the ini is read from either place, so it names its
     * files by absolute path, the binaries and a [weight-file] beside the link's target alike */
    char *away = tu_join(tmp, "away"), *away_ini = tu_join(away, "real.ini");
    char *dir2 = tu_join(tmp, "linked-away"), *link2 = tu_join(dir2, "moses.ini");
    char *src = tu_join(tmp, "away-src"), *tiny = tu_data_path("decoder/tiny");
    cr_assert_eq(mkdir(away, 0777), 0);
    cr_assert_eq(mkdir(dir2, 0777), 0);
    cr_assert_eq(tu_write_file(away_ini, "old\n", 4), 0);
    cr_assert_eq(symlink("../away/real.ini", link2), 0);
    rc = tu_runf(NULL, &err, "mkdir '%s' && cp '%s'/* '%s'/ && printf '[weight-file]\\n%s/w.txt\\n' "
                 ">> '%s/moses.ini' && echo '# none' > '%s/w.txt' && '%s' '%s/moses.ini' '%s'",
                 src, tiny, src, away, src, away, bin, src, dir2);
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    char *real2 = realpath(dir2, NULL), *want = NULL;
    cr_assert(asprintf(&want, " path=%s/phrase-table.ppt ", real2) > 0);
    text = tu_read_file(away_ini, &len);
    cr_assert(strstr(text, want), "%s", text);
    free(want);
    cr_assert(asprintf(&want, "\n[weight-file]\n%s/w.txt\n", away) > 0);
    cr_assert(strstr(text, want), "%s", text);
    dec_model_free(dtu_load(link2, NULL));
    dec_model_free(dtu_load(away_ini, NULL));
    free(text), free(want), free(real2), free(away), free(away_ini), free(dir2);
    free(link2), free(src), free(tiny);
    for (int k = 0; k < 2; k++) { /* a fifo, a folder */
        char *out_dir = tu_join(tmp, k ? "folder" : "fifo"), *out_ini = tu_join(out_dir, "moses.ini");
        cr_assert_eq(mkdir(out_dir, 0777), 0);
        cr_assert_eq(k ? mkdir(out_ini, 0777) : mkfifo(out_ini, 0600), 0);
        char *out = NULL;
        rc = tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, out_dir);
        cr_assert_eq(rc, 1, "%s", err);
        cr_assert(strstr(err, out_ini) && strstr(err, k ? "directory" : "fifo") &&
                  strstr(err, "refusing to replace"), "%s", err);
        cr_assert_eq(lstat(out_ini, &st), 0);
        cr_assert(k ? S_ISDIR(st.st_mode) : S_ISFIFO(st.st_mode), "%s was replaced", out_ini);
        rc = tu_runf(&out, NULL, "ls -A '%s'", out_dir);
        cr_assert_str_eq(out, "moses.ini\n", "nothing else is written: %s", out);
        free(out), free(err), free(out_dir), free(out_ini);
    }
    free(ini), free(bin), free(dir), free(link), free(real);
}

/* A feature this decoder does not have: the binarized ini would not load, so no success and no
 * moses.ini in OUTDIR. --help: usage on stdout, exit 0. */
Test(dec_data, binarize_checks_the_new_ini_loads)
{
    char *dir = tiny_copy("unsup"), *ini = tu_join(dir, "moses.ini"), *bin = tu_bin_path("fastsmt-binarize");
    size_t len;
    char *text = tu_read_file(ini, &len), *more = NULL;
    cr_assert(asprintf(&more, "%s\n[feature]\nOpSequenceModel name=OpSequenceModel0 num-features=5 "
                              "path=osm.bin\n[weight]\nOpSequenceModel0= 0.1 0.1 0.1 0.1 0.1\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, more, strlen(more)), 0);
    char *out_dir = tu_join(tmp, "unsup-bin"), *out_ini = tu_join(out_dir, "moses.ini"), *err = NULL;
    int rc = tu_runf(NULL, &err, "'%s' '%s' '%s'", bin, ini, out_dir);
    cr_assert_eq(rc, 1, "%s", err);
    cr_assert(strstr(err, "does not load") && strstr(err, "OpSequenceModel"), "%s", err);
    cr_assert_eq(access(out_ini, F_OK), -1);
    free(err);
    char *out = NULL;
    rc = tu_runf(&out, &err, "'%s' --help", bin);
    cr_assert_eq(rc, 0);
    cr_assert(strstr(out, "usage: fastsmt-binarize"), "%s", out);
    cr_assert_str_eq(err, "");
    free(out), free(err);
    free(dir), free(ini), free(bin), free(text), free(more), free(out_dir), free(out_ini);
}
