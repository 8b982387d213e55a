/* glm_gpu_stub.c — the GPU API in a build without CUDA: every call says "not supported", so
 * callers fall back to the CPU paths. */
#include "glm.h"
#include "glm_internal.h"

int glm_gpu_available(void) { return 0; }

int glm_gpu_create(glm_gpu **out, const glm_model *m, smt_err *err)
{
    (void)m;
    *out = NULL;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

void glm_gpu_free(glm_gpu *g) { (void)g; }

int glm_gpu_set_lanes(glm_gpu *g, unsigned lanes, smt_err *err)
{
    (void)g, (void)lanes;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

int glm_gpu_score_rows(glm_gpu *g, const glm_word *rows, size_t n_rows, float *prob, uint8_t *len,
                       smt_err *err)
{
    (void)g, (void)rows, (void)n_rows, (void)prob, (void)len;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

int glm_gpu_score_rows_device(glm_gpu *g, const glm_word *d_rows, size_t n_rows, float *d_prob,
                              uint8_t *d_len, smt_err *err)
{
    (void)g, (void)d_rows, (void)n_rows, (void)d_prob, (void)d_len;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

int glm_gpu_score_states(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                         float *prob, glm_state *out, uint8_t *len, smt_err *err)
{
    (void)g, (void)in, (void)w, (void)n, (void)prob, (void)out, (void)len;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

int glm_gpu_states_start(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                         smt_err *err)
{
    (void)g, (void)in, (void)w, (void)n;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}

int glm_gpu_states_finish(glm_gpu *g, float *prob, glm_state *out, uint8_t *len, smt_err *err)
{
    (void)g, (void)prob, (void)out, (void)len;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of glm has no CUDA support");
}
