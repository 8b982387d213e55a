#define _GNU_SOURCE
/* -lm-batch: the search's LM queries gathered from sentences decoded in lock-step and scored in
 * batches must give byte for byte what the per-query path (off, the reference) gives: the 1-best,
 * distinct and plain n-best lists (every feature score and total), the word alignments and the
 * unknown words, for every lock-step width and thread count; on the sample model (its 3-gram),
 * the hand-built tiny model, XML walls and zones, and, with ../shared, the tuned 5-gram. The GPU
 * back end is compared the same way where a GPU is present and refused clearly where not. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "dec_testutil.h"
#include "glm.h"
#include "testutil.h"

typedef struct outputs {
    char *best, *nbest, *align, *unk;
    int rc;
    dec_run_stats st;
} outputs;

static void outputs_free(outputs *o)
{
    free(o->best), free(o->nbest), free(o->align), free(o->unk);
}

/* dec_run of text with -lm-batch mode, width and threads; xml: -xml-input's mode (NULL: none). */
static outputs run(dec_model *m, const char *text, int mode, int width, int threads, int n_best,
                   int distinct, const char *xml)
{
    outputs r;
    memset(&r, 0, sizeof r);
    size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0;
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    FILE *o = open_memstream(&r.best, &l1), *n = open_memstream(&r.nbest, &l2);
    FILE *a = open_memstream(&r.align, &l3), *u = open_memstream(&r.unk, &l4);
    FILE *warn = fopen("/dev/null", "w");
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.threads = threads;
    ro.verbose = 0;
    ro.nbest = n;
    ro.n_best = n_best;
    ro.distinct = distinct;
    ro.alignment = a;
    ro.unknowns = u;
    ro.warn = warn;
    ro.lm_batch = mode;
    ro.lm_batch_width = width;
    ro.xml_input = xml;
    smt_err e;
    r.rc = dec_run(m, in, o, &ro, &r.st, &e);
    fclose(in), fclose(o), fclose(n), fclose(a), fclose(u), fclose(warn);
    return r;
}

static void same(const outputs *ref, const outputs *got, const char *what)
{
    cr_assert_eq(got->rc, ref->rc, "%s: rc %d, off gave %d", what, got->rc, ref->rc);
    cr_assert_str_eq(got->best, ref->best, "%s: the 1-best differs", what);
    cr_assert_str_eq(got->nbest, ref->nbest, "%s: the n-best list differs", what);
    cr_assert_str_eq(got->align, ref->align, "%s: the alignments differ", what);
    cr_assert_str_eq(got->unk, ref->unk, "%s: the unknown words differ", what);
    cr_assert_eq(got->st.lines, ref->st.lines, "%s", what);
    cr_assert_eq(got->st.score_sum, ref->st.score_sum, "%s: summed scores differ", what);
}

/* Every width (1: one sentence at a time through the batch; 3: chunks that do not divide the
 * input; 16: the default; 64: more lanes than lines) and thread count against off. */
static void compare_all(dec_model *m, const char *text, int n_best, int distinct, const char *xml,
                        const char *name)
{
    outputs ref = run(m, text, DEC_LM_BATCH_OFF, -1, 1, n_best, distinct, xml);
    cr_assert(ref.st.lines > 0);
    static const int widths[] = {1, 2, 3, 16, 64};
    for (size_t k = 0; k < sizeof widths / sizeof *widths; k++)
        for (int threads = 1; threads <= 2; threads++) {
            outputs got = run(m, text, DEC_LM_BATCH_CPU, widths[k], threads, n_best, distinct, xml);
            char what[128];
            snprintf(what, sizeof what, "%s, width %d, %d threads", name, widths[k], threads);
            same(&ref, &got, what);
            cr_assert_eq(got.st.lm_batch, DEC_LM_BATCH_CPU, "%s", what);
            cr_assert(got.st.lm_batches > 0 && got.st.lm_expansions >= got.st.lm_batches, "%s",
                      what);
            cr_assert(got.st.lm_queries + got.st.lm_hits > 0, "%s: no LM question", what);
            outputs_free(&got);
        }
    cr_assert_eq(ref.st.lm_batches, 0, "off gathers nothing");
    outputs_free(&ref);
}

/* The sample sentences, an empty line, unknown words and a repeated sentence. */
static char *sample_text(void)
{
    char *path = tu_data_path("../../examples/sample/sample.es");
    size_t len;
    char *src = tu_read_file(path, &len), *text = NULL;
    cr_assert_not_null(src);
    cr_assert(asprintf(&text, "%s\nzzyzx qqq el\n%.60s\n", src, src) > 0);
    free(path), free(src);
    return text;
}

Test(lm_batch, sample_model_same_output, .timeout = 300)
{
    char *ini = tu_data_path("../../examples/sample/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    char *text = sample_text();
    compare_all(m, text, 0, 0, NULL, "sample 1-best");
    compare_all(m, text, 20, 1, NULL, "sample 20-best distinct");
    compare_all(m, text, 50, 0, NULL, "sample 50-best");
    dec_model_free(m);
    free(ini), free(text);
}

/* Walls and zones (the constraints prune the cubes' rows), an XML option, and markup errors
 * (a line refused: an empty line in every mode). */
Test(lm_batch, xml_constraints_same_output, .timeout = 300)
{
    char *ini = tu_data_path("../../examples/sample/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    const char *text =
        "en el primer tratado , <wall/> oh teófilo , he hablado de todas las cosas\n"
        "<zone> hasta el día </zone> en que , habiendo dado mandamientos\n"
        "a los cuales <np translation=\"to whom\">después</np> de haber padecido\n"
        "a los <zone> cuales\n"
        "se presentó vivo con muchas pruebas indubitables\n";
    compare_all(m, text, 10, 1, "inclusive", "xml inclusive");
    compare_all(m, text, 10, 0, "constraint", "xml constraint");
    dec_model_free(m);
    free(ini);
}

/* The hand-built tiny model (tests/data/decoder/tiny): reordering, recombination, unknown words. */
Test(lm_batch, tiny_model_same_output)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    const char *text = "a b\n\nx y\nc\na q\nb a c x y\nq q q\n";
    compare_all(m, text, 10, 1, NULL, "tiny distinct");
    compare_all(m, text, 10, 0, NULL, "tiny");
    dec_model_free(m);
    free(ini);
}

/* A model without an LM has nothing to batch: the per-query path runs whatever is asked. */
Test(lm_batch, no_lm_runs_off)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    size_t len;
    char *text = tu_read_file(ini, &len), *dir = tu_tmpdir();
    cr_assert_not_null(text);
    /* drop the LM feature line and its weight line */
    char *out = NULL;
    size_t out_len = 0;
    FILE *o = open_memstream(&out, &out_len);
    char *folder = strdup(ini);
    *strrchr(folder, '/') = '\0';
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line;
         line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "KENLM", 5) || !strncmp(line, "LM0=", 4))
            continue;
        char *p = strstr(line, "path=");
        if (p && p[5] != '/') /* relative paths: against the fixture's folder */
            fprintf(o, "%.*spath=%s/%s\n", (int)(p - line), line, folder, p + 5);
        else
            fprintf(o, "%s\n", line);
    }
    fclose(o);
    char *nini = tu_join(dir, "nolm.ini");
    cr_assert_eq(tu_write_file(nini, out, out_len), 0);
    dec_model *m = dtu_load(nini, NULL);
    outputs ref = run(m, "a b\nx y\n", DEC_LM_BATCH_OFF, -1, 1, 5, 1, NULL);
    outputs got = run(m, "a b\nx y\n", DEC_LM_BATCH_CPU, 4, 2, 5, 1, NULL);
    same(&ref, &got, "no LM");
    cr_assert_eq(got.st.lm_batch, DEC_LM_BATCH_OFF);
    outputs_free(&ref), outputs_free(&got);
    dec_model_free(m);
    tu_rmtree(dir);
    free(ini), free(text), free(dir), free(out), free(folder), free(nini);
}

/* -lm-batch gpu: the same output on a GPU; without one (or in a build without CUDA) a clear
 * refusal before any line is translated. */
Test(lm_batch, gpu_same_output_or_refused, .timeout = 300)
{
    char *ini = tu_data_path("../../examples/sample/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    char *text = sample_text();
    outputs ref = run(m, text, DEC_LM_BATCH_OFF, -1, 1, 20, 1, NULL);
    outputs got = run(m, text, DEC_LM_BATCH_GPU, 16, 2, 20, 1, NULL);
    if (!glm_gpu_available()) {
        cr_assert_eq(got.rc, SMT_ERR_UNSUPPORTED, "rc %d", got.rc);
        cr_assert_str_eq(got.best, "", "nothing is translated");
        outputs_free(&ref), outputs_free(&got);
        dec_model_free(m);
        free(ini), free(text);
        TU_SKIP_GPU("no GPU: -lm-batch gpu refused as it should be; the comparison did not run");
    }
    same(&ref, &got, "gpu");
    outputs_free(&ref), outputs_free(&got);
    dec_model_free(m);
    free(ini), free(text);
}

/* The tuned 5-gram of ../shared with the sample tables (test_decoder_shared's setting). */
Test(lm_batch, shared_5gram_same_output, .timeout = 600)
{
    char *lm = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    if (!lm)
        cr_skip_test("shared data absent");
    char *sample = tu_data_path("../../examples/sample");
    char *ini_src = tu_join(sample, "moses.ini"), *dir = tu_tmpdir();
    size_t len;
    char *text = tu_read_file(ini_src, &len), *ini_text = NULL;
    char *p = strstr(text, "path=lm.3.arpa.gz order=3");
    cr_assert_not_null(p);
    *p = '\0';
    char *rest = p + strlen("path=lm.3.arpa.gz order=3");
    /* the tables' relative paths against the sample folder */
    char *pt = strstr(text, "path=phrase-table.gz"), *reo = strstr(text, "path=reordering-table");
    cr_assert(pt && reo && pt < reo);
    *pt = *reo = '\0';
    cr_assert(asprintf(&ini_text, "%spath=%s/phrase-table.gz%spath=%s/reordering-table%spath=%s "
                       "order=5%s", text, sample, pt + strlen("path=phrase-table.gz"), sample,
                       reo + strlen("path=reordering-table"), lm, rest) > 0);
    char *ini = tu_join(dir, "moses.ini");
    cr_assert_eq(tu_write_file(ini, ini_text, strlen(ini_text)), 0);
    dec_model *m = dtu_load(ini, NULL);
    char *src = sample_text();
    compare_all(m, src, 100, 1, NULL, "5-gram 100-best distinct");
    dec_model_free(m);
    tu_rmtree(dir);
    free(lm), free(sample), free(ini_src), free(dir), free(text), free(ini_text), free(ini);
    free(src);
}
