/* fuzz_kenlm — a KenLM binary (build_binary's output, any layout) through glm_open and queries
 * (glm/glm_kenlm.c). KenLM's files carry no checksums, so every mutation reaches the header checks
 * and the tables directly. A binary that opens must answer every query without a fault, and the
 * paths must agree bit for bit (they share one walk): glm_score with glm_score_ref, the text
 * query's fast path with its reference path and with two threads, the phrase estimate with the
 * plain sum of scores (but on rest probing, whose rest costs it reads). */
#define _GNU_SOURCE /* open_memstream */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "glm.h"
#include "glm_internal.h"
#include "smt_lines.h"

#define MAX_WORDS 64

static char *query(const glm_model *m, const char *text, int path, unsigned threads, int nctx)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        fz_fail("out of memory");
    glm_query_options opt = {GLM_VERBOSE_WORD, nctx, threads, path, 0};
    smt_err err;
    smt_lines *in = NULL;
    int rc = smt_lines_open(&in, text, 0, &err);
    if (!rc)
        rc = glm_query_lines(m, in, f, &opt, NULL, NULL, &err);
    smt_lines_close(in);
    fclose(f);
    if (rc)
        fz_fail("kenlm: glm_query_lines failed on an open model: %s", err.msg);
    return buf;
}

static void exercise(const glm_model *m, const char *text)
{
    uint32_t V = glm_vocab_size(m);
    unsigned order = glm_order(m);
    if (V == 0 || order < 2 || order > GLM_MAX_ORDER)
        fz_fail("kenlm: opened a model with %u words and order %u", V, order);
    uint32_t n = V < MAX_WORDS ? V : MAX_WORDS;
    glm_state a, b;
    glm_state_begin(m, &a);
    b = a;
    glm_word rows[MAX_WORDS * GLM_MAX_ORDER];
    glm_word hist[MAX_WORDS + 1];
    hist[0] = glm_bos(m);
    for (uint32_t i = 0; i < n; i++) {
        size_t wl = 0;
        const char *w = glm_word_str(m, i, &wl);
        if (w && w[wl] != 0)
            fz_fail("kenlm: word %u is not NUL-terminated at its length", i);
        if (w)
            (void)glm_index(m, w, wl);
        unsigned la, lb;
        float pa = glm_score(m, &a, i, &a, &la), pb = glm_score_ref(m, &b, i, &b, &lb);
        if (memcmp(&pa, &pb, sizeof pa) != 0 || la != lb || !glm_state_equal(&a, &b))
            fz_fail("kenlm: glm_score and glm_score_ref differ at word %u", i);
        hist[i + 1] = i;
        for (unsigned k = 0; k < order; k++) { /* the n-gram ending at word i, <s> first */
            long pos = (long)i + 1 - (long)(order - 1) + (long)k;
            rows[i * order + k] = pos >= 0 ? hist[pos] : GLM_NONE;
        }
    }
    float p1[MAX_WORDS], p2[MAX_WORDS];
    uint8_t l1[MAX_WORDS], l2[MAX_WORDS];
    smt_err err;
    int r1 = glm_score_rows_ref(m, rows, n, p1, l1, &err);
    int r2 = glm_score_rows(m, rows, n, p2, l2, 1, &err);
    if (r1 != r2 || (r1 == 0 && (memcmp(p1, p2, n * sizeof *p1) || memcmp(l1, l2, n))))
        fz_fail("kenlm: glm_score_rows differs from its reference");
    /* the phrase estimate: the plain sum from the null state, except where rest costs are stored */
    glm_state z;
    glm_state_null(&z);
    float sum = 0;
    for (uint32_t i = 0; i < n; i++)
        sum += glm_score(m, &z, hist[i + 1], &z, NULL);
    float est = glm_phrase_estimate(m, hist + 1, n);
    /* (a damaged file's NaNs may meet in either order: which payload a sum keeps is the
     * compiler's, so two NaNs count as equal) */
    if (strcmp(glm_layout_name(m), "kenlm rest probing") != 0 && !(isnan(est) && isnan(sum)) &&
        memcmp(&est, &sum, sizeof est))
        fz_fail("kenlm: glm_phrase_estimate differs from the plain sum without rest costs");
    for (int nctx = 0; nctx < 2; nctx++) {
        char *fast = query(m, text, GLM_PATH_FAST, 1, nctx);
        char *ref = query(m, text, GLM_PATH_REF, 1, nctx);
        char *two = query(m, text, GLM_PATH_FAST, 2, nctx);
        if (strcmp(fast, ref) || strcmp(fast, two))
            fz_fail("kenlm: the query paths differ (-n %d)", nctx);
        free(fast), free(ref), free(two);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char *text;
    if (!text) { /* the words of every tiny fixture, some unknown ones, a long line */
        static const char t[] = "<s> a b c </s>\nc b a </s> <unk> zzz\na a a b b c c c a b c d\n"
                                "b </s> a\n\n a b c a b c a b c a b c a b c a b c a b c\n";
        text = fz_write("text.txt", t, sizeof t - 1);
    }
    char *path = fz_write("in.bin", data, size);
    smt_err err;
    glm_model *m = NULL;
    if (glm_open(&m, path, 0, &err) == 0) {
        exercise(m, text);
        glm_close(m);
    } else if (m) {
        fz_fail("kenlm: glm_open failed but returned a model");
    }
    m = NULL;
    if (glm_open(&m, path, GLM_OPEN_POPULATE, &err) == 0) /* the mapping read in at once */
        glm_close(m);
    free(path);
    return 0;
}
