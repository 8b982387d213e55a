/* fuzz_dec_input — arbitrary input lines translated with the tiny model of
 * tests/data/decoder/tiny (loaded once: a dec_model is immutable). Each line goes through
 * dec_translate with one worker (one output line each); the whole input through dec_run, which must write exactly
 * one line per input line, in order. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_dec_common.h"
#include "fuzz_util.h"

static dec_model *g_model;

static void free_model(void) { dec_model_free(g_model); }

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    static const char *const files[] = {"moses.ini", "phrase-table", "reordering-table", "lm.arpa"};
    for (int i = 0; i < 4; i++) {
        char rel[64];
        snprintf(rel, sizeof rel, "decoder/tiny/%s", files[i]);
        free(fz_copy_data(rel, files[i]));
    }
    char *ini = fz_path("moses.ini");
    g_model = fz_dec_load(ini);
    if (!g_model)
        fz_fail("cannot load the tiny model");
    free(ini);
    atexit(free_model);
    return 0;
}

static size_t count_lines(const char *s, size_t n)
{
    size_t lines = 0;
    for (size_t i = 0; i < n; i++)
        lines += s[i] == '\n';
    return lines + (n && s[n - 1] != '\n');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    size_t pos = 0;
    int k = 0;
    dec_worker *w = fz_dec_worker(g_model);
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        fz_dec_translate(w, text + pos, end - pos, k++ & 1);
        pos = end + 1;
    }
    dec_worker_free(w);

    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    char *out_text = NULL, *nbest_text = NULL;
    size_t out_len = 0, nbest_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    FILE *nbest = open_memstream(&nbest_text, &nbest_len);
    FILE *warn = fz_devnull();
    if (!in || !out || !nbest)
        fz_fail("fmemopen/open_memstream");
    dec_run_stats stats;
    smt_err err;
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.nbest = nbest;
    ro.n_best = 3;
    ro.distinct = 0;
    ro.threads = 1;
    ro.verbose = 0;
    ro.warn = warn;
    int rc = dec_run(g_model, in, out, &ro, &stats, &err);
    fclose(in);
    fclose(warn);
    if (fclose(out) != 0 || fclose(nbest) != 0)
        fz_fail("fclose of a memory stream");
    if (rc == 0) {
        size_t want = count_lines(text, size), got = count_lines(out_text, out_len);
        if (got != want || stats.lines != want)
            fz_fail("decoder: dec_run wrote %zu lines (stats %llu) for %zu input lines", got,
                    (unsigned long long)stats.lines, want);
    }
    free(out_text);
    free(nbest_text);
    return 0;
}
