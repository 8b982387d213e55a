/* nmt_nocuda.c — the CUDA entry points of a build without CUDA: they say so. */
#include "nmt_internal.h"

int nmt_cuda_available(void) { return 0; }

int nmt_cuda_ctx_init(nmt_ctx *c, int device, smt_err *err)
{
    (void)c;
    (void)device;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of fastsmt has no CUDA backend");
}

void nmt_cuda_ctx_free(nmt_ctx *c) { (void)c; }

int nmt_gpu_create(nmt_gpu **out, int device, smt_err *err)
{
    (void)device;
    *out = NULL;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of fastsmt has no CUDA backend");
}

void nmt_gpu_free(nmt_gpu *g) { (void)g; }

int nmt_gpu_outlayer(nmt_gpu *g, const nmt_gpu_out_args *a, smt_err *err)
{
    (void)g;
    (void)a;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of fastsmt has no CUDA backend");
}

int nmt_gpu_bench_outlayer(nmt_gpu *g, int mode, int B, int V, int k, int iters, double *ms,
                           smt_err *err)
{
    (void)g, (void)mode, (void)B, (void)V, (void)k, (void)iters, (void)ms;
    return smt_err_set(err, SMT_ERR_UNSUPPORTED, "this build of fastsmt has no CUDA backend");
}
