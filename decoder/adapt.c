/* adapt.c — the decoder's models on top of probingpt (phrase table with integrated reordering)
 * and glm (LM). */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dec_internal.h"
#include "smt_sniff.h"

#include "glm.h"
#include "probingpt.h"


/* ---------------------------------------------------------------- probingpt */

void dec_pt_close(dec_pt *pt)
{
    if (!pt)
        return;
    ppt_close(pt->t);
    free(pt);
}

int dec_pt_ppt_open(dec_pt **out, const char *path, int verify, smt_err *err)
{
    *out = NULL;
    dec_pt *pt = calloc(1, sizeof *pt);
    if (!pt)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    ppt_table *t;
    int rc = ppt_open(&t, path, verify ? SMT_OPEN_VERIFY : 0, err);
    if (rc) {
        free(pt);
        return rc;
    }
    pt->t = t;
    pt->n_scores = ppt_num_scores(t);
    pt->n_reo = ppt_num_reordering_scores(t);
    pt->n_sources = ppt_get_params(t)->num_sources;
    pt->max_src_len = ppt_get_params(t)->max_src_len;
    pt->src_vocab = ppt_src_vocab(t);
    pt->tgt_vocab = ppt_tgt_vocab(t);
    *out = pt;
    return 0;
}

int dec_ppt_build(const char *pt, const char *reo, const char *out, smt_err *err)
{
    ppt_build_options opt;
    memset(&opt, 0, sizeof opt);
    opt.phrase_table = pt;
    opt.reordering = reo;
    opt.out = out;
    opt.progress = 0;
    opt.threaded_input = 1;
    /* A pair with no reordering entry gets no reordering score in Moses (without default-scores):
     * probability 1 stores exactly that, ln 1 = 0. */
    static const float one = 1.0f;
    opt.reordering_default = &one;
    opt.num_reordering_default = 1;
    return ppt_build(&opt, NULL, err);
}

static int ppt_build_fn(const char *const *in, const char *out, smt_err *err)
{
    return dec_ppt_build(in[0], in[1], out, err);
}

static int ppt_open_fn(void **obj, const char *path, int verify, smt_err *err)
{
    dec_pt *pt = NULL;
    int rc = dec_pt_ppt_open(&pt, path, verify, err);
    *obj = pt;
    return rc;
}

/* Text tables: binarized by probingpt into the model cache (or a temporary file) and mapped. */
int dec_pt_text_open(dec_pt **out, const char *pt, const char *reo, int verify,
                     const char *cache_dir, smt_err *err)
{
    const char *in[3] = {pt, reo, NULL};
    void *obj = NULL;
    int rc = dec_cached_load(&obj, "ppt", in, reo ? 2 : 1, ppt_build_fn, ppt_open_fn, verify,
                             cache_dir, err);
    *out = obj;
    return rc;
}

/* ---------------------------------------------------------------- glm */

static int glm_build_fn(const char *const *in, const char *out, smt_err *err)
{
    return dec_glm_build(in[0], out, 0, err);
}

static int glm_open_fn(void **obj, const char *path, int verify, smt_err *err)
{
    glm_model *g = NULL;
    int rc = glm_open(&g, path, GLM_OPEN_DEFAULT | (verify ? GLM_OPEN_VERIFY : 0u), err);
    *obj = g;
    return rc;
}

int dec_lm_open(glm_model **out, const char *path, int verify, const char *cache_dir,
                smt_err *err)
{
    *out = NULL;
    int kind = smt_file_kind(path, NULL, err);
    if (kind < 0)
        return kind;
    if (kind == SMT_KIND_FASTSMT) /* a .glm: mapped as it is (glm_open checks its kind) */
        return glm_open(out, path, GLM_OPEN_DEFAULT | (verify ? GLM_OPEN_VERIFY : 0u), err);
    if (kind == SMT_KIND_KENLM) /* queried in place by glm; it has no checksums to verify */
        return glm_open(out, path, GLM_OPEN_DEFAULT, err);
    const char *in[2] = {path, NULL};
    void *obj = NULL;
    int rc = dec_cached_load(&obj, "glm", in, 1, glm_build_fn, glm_open_fn, verify, cache_dir,
                             err);
    *out = obj;
    return rc;
}

int dec_glm_build(const char *arpa, const char *out, int probing, smt_err *err)
{
    glm_build_options opt = {.probing = probing};
    return glm_build(arpa, out, &opt, NULL, err);
}
