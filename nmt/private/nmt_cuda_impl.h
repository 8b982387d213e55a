/* nmt_cuda_impl.h — what the CUDA files share (private, CUDA C++ only). */
#ifndef NMT_CUDA_IMPL_H
#define NMT_CUDA_IMPL_H

#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "nmt_internal.h"
}

#define CK(g, stmt)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return smt_err_set((g)->err, SMT_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #stmt, \
                               cudaGetErrorString(e_));                                            \
    } while (0)

#define CKB(g, stmt)                                                                               \
    do {                                                                                           \
        cublasStatus_t s_ = (stmt);                                                                \
        if (s_ != CUBLAS_STATUS_SUCCESS)                                                           \
            return smt_err_set((g)->err, SMT_ERR_CUDA, "%s:%d: %s: cuBLAS status %d", __FILE__,    \
                               __LINE__, #stmt, (int)s_);                                          \
    } while (0)

enum { OUT_THREADS = 256, MAX_SHARDS = 32 };

struct nmt_gpu {
    int device, n_sm;
    cudaStream_t stream;
    cublasHandle_t blas;
    smt_err *err;
    /* workspace: per-shard partial results (B * MAX_SHARDS entries of m, s and k-best lists) */
    float *part_m, *part_s, *part_val;
    int32_t *part_id;
    size_t part_cap; /* rows */
    /* staging for host index arrays */
    void *stage[4];
    size_t stage_cap[4];
};


/* Runs an output-layer mode on device arrays: x (B,V), bias (V) or NULL, gather_ids (B), tmp (B,V)
 * (unfused mode only), outputs val/ids (B,k) and lse (B) on the device. n_shards 0 = auto. */
int nmt_gpu_out_device(nmt_gpu *g, int mode, const float *x, const float *bias, int B, int V, int k,
                       int n_shards, const int32_t *gather_ids, float *tmp, float *val,
                       int32_t *ids, float *lse);

#endif
