/* Queries run on every model the glm harnesses open: see fuzz_glm_common.h. */
#include "fuzz_glm_common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "glm_internal.h"

#define MAX_WORDS 48

static int same_float(float a, float b) { return memcmp(&a, &b, sizeof a) == 0; }

void fz_glm_exercise(const glm_model *m, int strict)
{
    uint32_t V = glm_vocab_size(m);
    unsigned order = glm_order(m);
    if (V == 0 || order < 1 || order > GLM_MAX_ORDER)
        fz_fail("glm: opened a model with %u words and order %u", V, order);
    size_t n = V < MAX_WORDS ? V : MAX_WORDS;
    /* A sentence of ids: every word once, then the first words again, then <unk>. */
    glm_word seq[2 * MAX_WORDS + 1];
    size_t len = 0;
    for (size_t i = 0; i < n; i++)
        seq[len++] = (glm_word)i;
    for (size_t i = 0; i < n && i < MAX_WORDS; i++)
        seq[len++] = (glm_word)((i * 7) % V);
    seq[len++] = GLM_UNK;

    for (uint32_t id = 0; id < n; id++) {
        size_t wl = 0;
        const char *w = glm_word_str(m, id, &wl);
        if (!w || w[wl] != 0)
            fz_fail("glm: word %u has no string or is not NUL-terminated at its length", id);
        (void)glm_index(m, w, wl);
    }

    glm_state s_fast, s_ref;
    glm_state_begin(m, &s_fast);
    glm_state_begin(m, &s_ref);
    glm_word *rows = calloc(len * order, sizeof *rows);
    float *prob = calloc(len, sizeof *prob), *prob_ref = calloc(len, sizeof *prob_ref);
    float *seq_prob = calloc(len, sizeof *seq_prob);
    uint8_t *rl = calloc(len, 1), *rl_ref = calloc(len, 1);
    if (!rows || !prob || !prob_ref || !seq_prob || !rl || !rl_ref)
        fz_fail("out of memory");
    glm_word bos = glm_bos(m);
    for (size_t i = 0; i < len; i++) {
        unsigned l_fast = 0, l_ref = 0;
        float p_fast = glm_score(m, &s_fast, seq[i], &s_fast, &l_fast);
        float p_ref = glm_score_ref(m, &s_ref, seq[i], &s_ref, &l_ref);
        if (strict && (!same_float(p_fast, p_ref) || l_fast != l_ref || !glm_state_equal(&s_fast, &s_ref)))
            fz_fail("glm: glm_score (%g, %u) differs from glm_score_ref (%g, %u) at word %zu",
                    (double)p_fast, l_fast, (double)p_ref, l_ref, i);
        seq_prob[i] = p_ref;
        (void)glm_state_hash(&s_fast);
        /* The row of the same n-gram: <s> and the words before, the predicted word last. */
        glm_word *row = rows + i * order;
        for (unsigned k = 0; k < order; k++) {
            long pos = (long)i - (long)(order - 1) + (long)k; /* index into seq; -1 is <s> */
            row[k] = pos >= 0 ? seq[pos] : pos == -1 ? bos : GLM_NONE;
        }
    }
    smt_err err;
    int rc_ref = glm_score_rows_ref(m, rows, len, prob_ref, rl_ref, &err);
    int rc_fast = glm_score_rows(m, rows, len, prob, rl, 1, &err);
    if (strict && rc_ref != rc_fast)
        fz_fail("glm: glm_score_rows returned %d, the reference %d", rc_fast, rc_ref);
    if (strict && rc_ref == 0 && rc_fast == 0)
        for (size_t i = 0; i < len; i++)
            if (!same_float(prob[i], prob_ref[i]) || rl[i] != rl_ref[i])
                fz_fail("glm: row %zu: glm_score_rows (%g, %u) differs from the reference (%g, %u)",
                        i, (double)prob[i], rl[i], (double)prob_ref[i], rl_ref[i]);
    /* A row gives the float a state built from its context gives (glm.h). */
    if (strict && rc_ref == 0)
        for (size_t i = 0; i < len; i++)
            if (!same_float(prob_ref[i], seq_prob[i]))
                fz_fail("glm: row %zu scores %g, the state walk %g", i, (double)prob_ref[i],
                        (double)seq_prob[i]);
    free(rows);
    free(prob);
    free(prob_ref);
    free(seq_prob);
    free(rl);
    free(rl_ref);
}
