/* nmt_cuda.h — the GPU output-layer kernels as host-callable functions, for the tests and the
 * benchmark (private to the nmt component; the model's CUDA backend lives behind nmt_ctx).
 * Every function returns 0 or SMT_ERR_UNSUPPORTED (no CUDA in this build, or no device) or
 * SMT_ERR_CUDA with the failing statement and file:line in the message. */
#ifndef NMT_CUDA_H
#define NMT_CUDA_H

#include <stdint.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device, its stream, a cuBLAS handle and a workspace (no globals: everything lives here). */
typedef struct nmt_gpu nmt_gpu;

int nmt_gpu_create(nmt_gpu **out, int device, smt_err *err);
void nmt_gpu_free(nmt_gpu *g);

enum {
    NMT_GPU_TOPK = 0,         /* fused bias + online softmax + sharded k-best */
    NMT_GPU_TOPK_UNFUSED = 1, /* add-bias, log-softmax and k-best as separate kernels */
    NMT_GPU_ARGMAX = 2,       /* k = 1 without probabilities */
    NMT_GPU_GATHER = 3        /* log-softmax and gather of given ids */
};

/* One output-layer call on host arrays (copied to the device and back): x (B,V), bias (V) or
 * NULL; results as in nmt.h's CPU twins: val (B,k) (ARGMAX: raw x+b of the best; GATHER: the
 * log-probabilities (B)), ids (B,k), lse (B) (TOPK modes only; may be NULL). n_shards 0 = auto. */
typedef struct nmt_gpu_out_args {
    int mode;
    const float *x, *bias;
    int B, V, k, n_shards;
    const int32_t *gather_ids;
    float *val;
    int32_t *ids;
    float *lse;
} nmt_gpu_out_args;

int nmt_gpu_outlayer(nmt_gpu *g, const nmt_gpu_out_args *a, smt_err *err);

/* Times `iters` calls of an output-layer mode on device-resident random logits (B,V), flushing
 * L2 before each call and timing with CUDA events; *ms is the mean per call. */
int nmt_gpu_bench_outlayer(nmt_gpu *g, int mode, int B, int V, int k, int iters, double *ms,
                           smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
