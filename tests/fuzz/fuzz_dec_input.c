/* fuzz_dec_input — arbitrary input lines translated with the tiny model of
 * tests/data/decoder/tiny (loaded once: a dec_model is immutable). Each line goes through
 * dec_translate and dec_translate_data with one worker (one output line each, data consistent
 * with the text); the whole input through dec_run with run options picked by the input's hash
 * (segmentation marks and field, alignment inline/in the n-best/in a file, -drop-unknown,
 * -output-hypo-score, -n-best-factor, -output-unknowns, -xml-input's five modes with walls and
 * zones, -monotone-at-punctuation), which must
 * write exactly one line per
 * input line, in order, to the output, the alignment file and the unknowns file. */
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
    dec_translation t = {0};
    while (pos < size) {
        const char *nl = memchr(text + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - text) : size;
        fz_dec_translate(w, text + pos, end - pos, k++ & 1);
        smt_err e;
        if (dec_translate_data(w, text + pos, end - pos, &t, &e) == 0) {
            size_t words = 0;
            for (size_t i = 0; i < t.n_phrases; i++) {
                if (t.phrases[i].tgt_start != words || t.phrases[i].src_start > t.phrases[i].src_end)
                    fz_fail("decoder: translation data: phrase %zu is inconsistent", i);
                words += t.phrases[i].n_tgt;
            }
            if (words != t.n_words || (t.n_words && t.word_off[t.n_words] != t.words.len + 1))
                fz_fail("decoder: translation data: %zu words, phrases give %zu", t.n_words, words);
            for (size_t i = 0; i < t.n_align; i++)
                if (t.align[2 * i + 1] >= t.n_words)
                    fz_fail("decoder: translation data: alignment point past the words");
        }
        pos = end + 1;
    }
    dec_translation_free(&t);
    dec_worker_free(w);

    if (size == 0)
        return 0;
    FILE *in = fmemopen((void *)data, size, "r");
    char *out_text = NULL, *nbest_text = NULL;
    size_t out_len = 0, nbest_len = 0;
    FILE *out = open_memstream(&out_text, &out_len);
    FILE *nbest = open_memstream(&nbest_text, &nbest_len);
    char *align_text = NULL, *unk_text = NULL;
    size_t align_len = 0, unk_len = 0;
    FILE *align = open_memstream(&align_text, &align_len), *unk = open_memstream(&unk_text, &unk_len);
    FILE *warn = fz_devnull();
    if (!in || !out || !nbest || !align || !unk)
        fz_fail("fmemopen/open_memstream");
    unsigned bits = 0; /* the run options: a hash of the input */
    for (size_t i = 0; i < size; i++)
        bits = bits * 31u + data[i];
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
    ro.report_segmentation = bits & 1;
    ro.nbest_segmentation = (bits >> 1) & 1;
    ro.print_alignment = (bits >> 2) & 1;
    ro.nbest_alignment = (bits >> 3) & 1;
    ro.drop_unknown = (bits >> 4) & 1;
    ro.output_hypo_score = (bits >> 5) & 1;
    ro.mark_unknown = (bits >> 6) & 1;
    ro.distinct = (bits >> 7) & 1;
    ro.nbest_factor = (int)((bits >> 8) % 3) * 10; /* 0 (unlimited), 10, 20 */
    ro.alignment = align;
    ro.unknowns = unk;
    static const char *const xml[] = {"pass-through", "ignore", "exclusive", "inclusive",
                                      "constraint"};
    ro.xml_input = xml[((bits >> 10) & 7) % 5]; /* Moses's XML markup (dec_xml.h) */
    ro.monotone_at_punct = (bits >> 13) & 1;
    int rc = dec_run(g_model, in, out, &ro, &stats, &err);
    fclose(in);
    fclose(warn);
    if (fclose(out) != 0 || fclose(nbest) != 0 || fclose(align) != 0 || fclose(unk) != 0)
        fz_fail("fclose of a memory stream");
    if (rc == 0) {
        /* the lines dec_run reads (smt_lines): after the byte-order marks that open the input */
        size_t skip = 0;
        while (size - skip >= 3 && !memcmp(text + skip, "\xEF\xBB\xBF", 3))
            skip += 3;
        size_t want = count_lines(text + skip, size - skip), got = count_lines(out_text, out_len);
        if (got != want || stats.lines != want)
            fz_fail("decoder: dec_run wrote %zu lines (stats %llu) for %zu input lines", got,
                    (unsigned long long)stats.lines, want);
        if (count_lines(align_text, align_len) != want || count_lines(unk_text, unk_len) != want)
            fz_fail("decoder: %zu alignment and %zu unknowns lines for %zu input lines",
                    count_lines(align_text, align_len), count_lines(unk_text, unk_len), want);
    }
    free(out_text);
    free(nbest_text);
    free(align_text);
    free(unk_text);
    return 0;
}
