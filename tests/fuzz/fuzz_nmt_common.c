/* What the NMT harnesses do with every model they open: see fuzz_nmt_common.h. */
#include "fuzz_nmt_common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

void fz_nmt_copy_tiny(const char *except)
{
    static const char *const files[] = {"config.json", "model.safetensors", "src.vocab",
                                        "tgt.vocab"};
    for (int i = 0; i < 4; i++) {
        if (strcmp(files[i], except) == 0)
            continue;
        char rel[64];
        snprintf(rel, sizeof rel, "nmt/tiny/%s", files[i]);
        free(fz_copy_data(rel, files[i]));
    }
}

void fz_nmt_exercise(const nmt_model *m)
{
    nmt_ctx_options co = {.backend = NMT_BACKEND_CPU, .threads = 1, .max_batch_sentences = 2};
    nmt_ctx *c = NULL;
    smt_err err;
    if (nmt_ctx_create(&c, m, &co, &err) != 0)
        return;
    int32_t src_ids[16], tgt_ids[16];
    size_t ns = nmt_model_tokenize(m, 0, "y dijo dios : sea la luz .", src_ids, 16);
    size_t nt = nmt_model_tokenize(m, 1, "and god said", tgt_ids, 16);
    if (ns > 16 || nt > 16)
        fz_fail("nmt: tokenize counted more words than the text has");
    nmt_sentence src[2] = {{src_ids, (int)ns}, {src_ids, 2}};
    nmt_sentence tgt[2] = {{tgt_ids, (int)nt}, {tgt_ids, 0}};
    float lp[2];
    (void)nmt_score(c, 2, src, tgt, lp, &err);
    nmt_search_options so = {.beam = 2, .max_len_ratio = 1.5f, .max_len_add = 3,
                             .length_penalty = 0.6f};
    nmt_hyp hyp[2];
    memset(hyp, 0, sizeof hyp);
    if (nmt_translate(c, 2, src, &so, hyp, &err) == 0) {
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < hyp[i].len; k++)
                (void)nmt_model_tgt_word(m, hyp[i].ids[k]);
        nmt_hyps_free(hyp, 2);
    }
    so.beam = 1;
    memset(hyp, 0, sizeof hyp);
    if (nmt_translate(c, 1, src, &so, hyp, &err) == 0)
        nmt_hyps_free(hyp, 1);
    nmt_ctx_free(c);
}
