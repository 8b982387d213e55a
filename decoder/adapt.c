/* adapt.c — the decoder's model interfaces on top of probingpt (phrase table with integrated
 * reordering) and glm (LM). Compiled with DEC_HAVE_BINARY when both libraries are part of the
 * build; otherwise every function reports SMT_ERR_UNSUPPORTED, so a decoder-only build still runs
 * text models. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"

#ifdef DEC_HAVE_BINARY
#include "glm.h"
#include "probingpt.h"

_Static_assert(sizeof(glm_state) == sizeof(dec_lm_state), "glm_state layout");
_Static_assert(offsetof(glm_state, length) == offsetof(dec_lm_state, length), "glm_state layout");
_Static_assert(offsetof(glm_state, backoff) == offsetof(dec_lm_state, backoff), "glm_state layout");
_Static_assert(sizeof(ppt_targets) <= sizeof(((dec_pt_iter *)0)->opaque), "ppt_targets size");

int dec_have_binary_models(void) { return 1; }

/* ---------------------------------------------------------------- probingpt */

static int ppt_lookup_fn(const dec_pt *pt, const uint32_t *src, size_t n, dec_pt_iter *it,
                         smt_err *err)
{
    ppt_targets tg;
    int rc = ppt_lookup_ids(pt->impl, src, n, &tg);
    if (rc == SMT_ERR_NOTFOUND)
        return 0;
    if (rc == SMT_ERR_CORRUPT)
        return smt_err_set(err, rc, "%s: damaged group in the phrase table",
                           smt_mapped_path(ppt_mapped(pt->impl)));
    if (rc < 0)
        return smt_err_set(err, rc, "%s: phrase table lookup: %s",
                           smt_mapped_path(ppt_mapped(pt->impl)), smt_strerror(rc));
    memcpy(it->opaque, &tg, sizeof tg);
    return 1;
}

static int ppt_next_fn(dec_pt_iter *it, dec_pt_entry *e, smt_err *err)
{
    ppt_targets tg;
    memcpy(&tg, it->opaque, sizeof tg);
    ppt_target t;
    int more = ppt_targets_next(&tg, &t);
    memcpy(it->opaque, &tg, sizeof tg);
    if (!more) {
        if (tg.error) /* a damaged record: the group must not be used, not even cut short */
            return smt_err_set(err, tg.error, "%s: damaged group in the phrase table",
                               smt_mapped_path(ppt_mapped(tg.table)));
        return 0;
    }
    e->words = t.words;
    e->n_words = t.n_words;
    e->scores = t.scores;
    e->reo = t.reordering;
    e->align = t.align;
    e->n_align = t.n_align;
    return 1;
}

static void ppt_free_fn(dec_pt *pt)
{
    if (!pt)
        return;
    ppt_close(pt->impl);
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
    pt->impl = t;
    pt->n_scores = ppt_num_scores(t);
    pt->n_reo = ppt_num_reordering_scores(t);
    pt->n_sources = ppt_get_params(t)->num_sources;
    pt->max_src_len = ppt_get_params(t)->max_src_len;
    pt->src_vocab = ppt_src_vocab(t);
    pt->tgt_vocab = ppt_tgt_vocab(t);
    pt->lookup = ppt_lookup_fn;
    pt->next = ppt_next_fn;
    pt->free = ppt_free_fn;
    pt->kind = "ppt";
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

/* ---------------------------------------------------------------- glm */

static uint32_t glm_index_fn(const dec_lm *lm, const char *w, size_t len)
{
    return glm_index(lm->impl, w, len);
}

static float glm_score_fn(const dec_lm *lm, const dec_lm_state *in, uint32_t w, dec_lm_state *out)
{
    return glm_score(lm->impl, (const glm_state *)(const void *)in, w,
                     (glm_state *)(void *)out, NULL);
}

static void glm_free_fn(dec_lm *lm)
{
    if (!lm)
        return;
    glm_close(lm->impl);
    free(lm);
}

int dec_lm_glm_open(dec_lm **out, const char *path, int verify, smt_err *err)
{
    *out = NULL;
    dec_lm *lm = calloc(1, sizeof *lm);
    if (!lm)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    glm_model *g;
    int rc = glm_open(&g, path, verify ? GLM_OPEN_VERIFY : 0, err);
    if (rc) {
        free(lm);
        return rc;
    }
    lm->impl = g;
    lm->order = glm_order(g);
    lm->bos = glm_bos(g);
    lm->eos = glm_eos(g);
    lm->index = glm_index_fn;
    lm->score = glm_score_fn;
    lm->free = glm_free_fn;
    lm->kind = "glm";
    *out = lm;
    return 0;
}

int dec_glm_build(const char *arpa, const char *out, smt_err *err)
{
    return glm_build(arpa, out, NULL, NULL, err);
}

#else

int dec_have_binary_models(void) { return 0; }

static int unsupported(const char *path, smt_err *err)
{
    return smt_err_set(err, SMT_ERR_UNSUPPORTED,
                       "%s: binary models need probingpt and glm, which this build lacks", path);
}

int dec_pt_ppt_open(dec_pt **out, const char *path, int verify, smt_err *err)
{
    (void)verify;
    *out = NULL;
    return unsupported(path, err);
}

int dec_lm_glm_open(dec_lm **out, const char *path, int verify, smt_err *err)
{
    (void)verify;
    *out = NULL;
    return unsupported(path, err);
}

int dec_ppt_build(const char *pt, const char *reo, const char *out, smt_err *err)
{
    (void)reo, (void)out;
    return unsupported(pt, err);
}

int dec_glm_build(const char *arpa, const char *out, smt_err *err)
{
    (void)out;
    return unsupported(arpa, err);
}

#endif
