/* nmt_cuda.cu — the CUDA backend: the output-layer kernels (fused and unfused) and the model's
 * operations (cuBLAS for the matrix products, small kernels for the rest). Each kernel's CPU twin is
 * in nmt_out.c / nmt_cpu.c; the output layer shares its arithmetic with them via nmt_out_impl.h.
 * No globals: the device, stream, cuBLAS handle and workspaces live in nmt_gpu. */
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_cuda_impl.h"
#include "nmt_out_impl.h"

/* ------------------------------------------------------------------ output layer kernels */

__device__ __forceinline__ float ld_biased(const float *x, const float *bias, int i)
{
    return bias ? x[i] + bias[i] : x[i];
}

/* Block-wide merge of (m,s) (every thread gets the result). */
__device__ void block_ms(float *m, float *s)
{
    __shared__ float sm[32], ss[32];
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_down_sync(0xffffffffu, *m, o), s2 = __shfl_down_sync(0xffffffffu, *s, o);
        nmt_ms_merge(m, s, m2, s2);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    if (lane == 0)
        sm[warp] = *m, ss[warp] = *s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float bm = -INFINITY, bs = 0.0f;
        for (int w = 0; w < nw; w++)
            nmt_ms_merge(&bm, &bs, sm[w], ss[w]);
        sm[0] = bm, ss[0] = bs;
    }
    __syncthreads();
    *m = sm[0];
    *s = ss[0];
    __syncthreads();
}

/* Block-wide best (value, id) under nmt_better (every thread gets it). */
__device__ void block_best(float *v, int32_t *id)
{
    __shared__ float sv[32];
    __shared__ int32_t si[32];
    for (int o = 16; o > 0; o >>= 1) {
        float v2 = __shfl_down_sync(0xffffffffu, *v, o);
        int32_t i2 = __shfl_down_sync(0xffffffffu, *id, o);
        if (nmt_better(v2, i2, *v, *id))
            *v = v2, *id = i2;
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nw = (blockDim.x + 31) >> 5;
    if (lane == 0)
        sv[warp] = *v, si[warp] = *id;
    __syncthreads();
    if (threadIdx.x == 0) {
        for (int w = 1; w < nw; w++)
            if (nmt_better(sv[w], si[w], sv[0], si[0]))
                sv[0] = sv[w], si[0] = si[w];
    }
    __syncthreads();
    *v = sv[0];
    *id = si[0];
    __syncthreads();
}

/* Stage 1 (seed 000, algorithms 4 and 6): block (shard, row) reads its slice of the row once;
 * each thread keeps a running (max, sum) and its own k best; the block then merges the sums and
 * extracts the shard's k best in k rounds of a block arg-best. KM bounds k at compile time (0: no
 * k-best, for the gather mode). SOFTMAX false skips the exponentials (arg-max, unfused k-best). */
template <int KM, bool SOFTMAX>
__global__ void k_out_partial(const float *x, const float *bias, int V, int k, int n_shards,
                              float *pm, float *ps, float *pval, int32_t *pid)
{
    int b = blockIdx.y, sh = blockIdx.x;
    int lo = (int)((long long)V * sh / n_shards), hi = (int)((long long)V * (sh + 1) / n_shards);
    const float *row = x + (size_t)b * V; // x is (B,V)
    float m = -INFINITY, s = 0.0f;
    float lv[KM > 0 ? KM : 1];
    int32_t li[KM > 0 ? KM : 1];
    if (KM > 0)
        nmt_kb_init(lv, li, k);
    for (int i = lo + threadIdx.x; i < hi; i += blockDim.x) {
        float v = ld_biased(row, bias, i);
        if (SOFTMAX)
            nmt_ms_add(&m, &s, v);
        if (KM > 0)
            nmt_kb_push(lv, li, k, v, i);
    }
    size_t slot = (size_t)b * n_shards + sh;
    if (SOFTMAX) {
        block_ms(&m, &s);
        if (threadIdx.x == 0)
            pm[slot] = m, ps[slot] = s;
    }
    if (KM == 0)
        return;
    int ptr = 0;
    for (int j = 0; j < k; j++) {
        float cv = ptr < k ? lv[ptr] : -INFINITY;
        int32_t ci = ptr < k ? li[ptr] : NMT_NO_ID;
        float bv = cv;
        int32_t bi = ci;
        block_best(&bv, &bi);
        if (bi != NMT_NO_ID && ptr < k && ci == bi) /* ids are unique: the owner advances */
            ptr++;
        if (threadIdx.x == 0)
            pval[slot * k + j] = bv, pid[slot * k + j] = bi;
    }
}

/* Stage 2: one warp per row merges the shards' (m,s) and k-best lists (one shard per lane) and
 * writes log-probabilities (SOFTMAX) or raw values. For the gather mode (k = 0) it writes
 * x[id] + b[id] - lse into val. */
template <bool SOFTMAX>
__global__ void k_out_reduce(const float *pm, const float *ps, const float *pval,
                             const int32_t *pid, int n_shards, int k, const float *x,
                             const float *bias, int V, const int32_t *gather_ids,
                             const float *lse_in, float *val, int32_t *ids, float *lse)
{
    int b = blockIdx.x, lane = threadIdx.x;
    float m = -INFINITY, s = 0.0f, l = 0.0f;
    if (SOFTMAX) {
        if (lane < n_shards)
            m = pm[(size_t)b * n_shards + lane], s = ps[(size_t)b * n_shards + lane];
        for (int o = 16; o > 0; o >>= 1) {
            float m2 = __shfl_down_sync(0xffffffffu, m, o), s2 = __shfl_down_sync(0xffffffffu, s, o);
            nmt_ms_merge(&m, &s, m2, s2);
        }
        m = __shfl_sync(0xffffffffu, m, 0);
        s = __shfl_sync(0xffffffffu, s, 0);
        l = nmt_ms_lse(m, s);
        if (lse && lane == 0)
            lse[b] = l;
    } else if (lse_in) {
        l = 0.0f; /* the unfused path already wrote log-probabilities */
    }
    if (k == 0) {
        if (lane == 0) {
            int32_t id = gather_ids[b];
            val[b] = id >= 0 && id < V ? nmt_logprob(ld_biased(x + (size_t)b * V, bias, id), l)
                                        : -INFINITY;
        }
        return;
    }
    const float *myv = pval + ((size_t)b * n_shards + lane) * k;
    const int32_t *myi = pid + ((size_t)b * n_shards + lane) * k;
    int ptr = 0;
    for (int j = 0; j < k; j++) {
        float cv = lane < n_shards && ptr < k ? myv[ptr] : -INFINITY;
        int32_t ci = lane < n_shards && ptr < k ? myi[ptr] : NMT_NO_ID;
        float bv = cv;
        int32_t bi = ci;
        for (int o = 16; o > 0; o >>= 1) {
            float v2 = __shfl_xor_sync(0xffffffffu, bv, o);
            int32_t i2 = __shfl_xor_sync(0xffffffffu, bi, o);
            if (nmt_better(v2, i2, bv, bi))
                bv = v2, bi = i2;
        }
        if (bi != NMT_NO_ID && lane < n_shards && ptr < k && ci == bi)
            ptr++;
        if (lane == 0) {
            if (val)
                val[(size_t)b * k + j] = SOFTMAX ? nmt_logprob(bv, l) : bv;
            ids[(size_t)b * k + j] = bi;
        }
    }
}

/* Unfused baseline, pass 1: tmp = x + bias. */
__global__ void k_add_bias(const float *x, const float *bias, float *tmp, int B, int V)
{
    size_t n = (size_t)B * V;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        tmp[i] = bias ? x[i] + bias[i % V] : x[i];
}

/* Unfused baseline, pass 2: in-place log-softmax of each row (max, sum and subtract passes). */
__global__ void k_log_softmax(float *x, int V, float *lse)
{
    float *row = x + (size_t)blockIdx.x * V;
    float m = -INFINITY, s = 0.0f;
    for (int i = threadIdx.x; i < V; i += blockDim.x)
        m = fmaxf(m, row[i]);
    float dummy = 0.0f;
    block_ms(&m, &dummy); /* merges maxima (sums are zero here) */
    if (m > -INFINITY)
        for (int i = threadIdx.x; i < V; i += blockDim.x)
            s += expf(row[i] - m);
    float mm = m;
    block_ms(&mm, &s);
    float l = m > -INFINITY ? m + logf(s) : -INFINITY;
    for (int i = threadIdx.x; i < V && m > -INFINITY; i += blockDim.x)
        row[i] -= l; /* an all -inf row stays -inf (not NaN) */
    if (threadIdx.x == 0)
        lse[blockIdx.x] = l;
}

/* Partial results for B rows: every array gets B * MAX_SHARDS * max(k,1) entries, so one capacity
 * check covers the (m,s) arrays and the k-best lists whatever mix of B and k came before. */
static int ensure_part(nmt_gpu *g, int B, int k)
{
    size_t need = (size_t)B * MAX_SHARDS * (k > 0 ? k : 1);
    if (need <= g->part_cap)
        return 0;
    cudaFree(g->part_m);
    cudaFree(g->part_s);
    cudaFree(g->part_val);
    cudaFree(g->part_id);
    g->part_m = g->part_s = g->part_val = NULL;
    g->part_id = NULL;
    g->part_cap = 0;
    CK(g, cudaMalloc(&g->part_m, need * sizeof(float)));
    CK(g, cudaMalloc(&g->part_s, need * sizeof(float)));
    CK(g, cudaMalloc(&g->part_val, need * sizeof(float)));
    CK(g, cudaMalloc(&g->part_id, need * sizeof(int32_t)));
    g->part_cap = need;
    return 0;
}

/* Enough blocks for two waves over the SMs, but at least 1024 entries per shard. */
static int auto_shards(const nmt_gpu *g, int B, int V)
{
    int want = (2 * g->n_sm + B - 1) / B, most = V / 1024;
    if (want > most)
        want = most;
    if (want > MAX_SHARDS)
        want = MAX_SHARDS;
    return want < 1 ? 1 : want;
}

template <int KM>
static void launch_partial(nmt_gpu *g, bool softmax, const float *x, const float *bias, int B,
                           int V, int k, int ns)
{
    dim3 grid(ns, B);
    if (softmax)
        k_out_partial<KM, true><<<grid, OUT_THREADS, 0, g->stream>>>(x, bias, V, k, ns, g->part_m,
                                                                      g->part_s, g->part_val,
                                                                      g->part_id);
    else
        k_out_partial<KM, false><<<grid, OUT_THREADS, 0, g->stream>>>(x, bias, V, k, ns, g->part_m,
                                                                       g->part_s, g->part_val,
                                                                       g->part_id);
}

static void partial(nmt_gpu *g, bool softmax, const float *x, const float *bias, int B, int V,
                    int k, int ns)
{
    if (k == 0)
        launch_partial<0>(g, softmax, x, bias, B, V, 0, ns);
    else if (k == 1)
        launch_partial<1>(g, softmax, x, bias, B, V, k, ns);
    else if (k <= 4)
        launch_partial<4>(g, softmax, x, bias, B, V, k, ns);
    else if (k <= 8)
        launch_partial<8>(g, softmax, x, bias, B, V, k, ns);
    else if (k <= 16)
        launch_partial<16>(g, softmax, x, bias, B, V, k, ns);
    else
        launch_partial<NMT_MAX_K>(g, softmax, x, bias, B, V, k, ns);
}

int nmt_gpu_out_device(nmt_gpu *g, int mode, const float *x, const float *bias, int B, int V, int k,
                      int ns, const int32_t *gather_ids, float *tmp, float *val, int32_t *ids,
                      float *lse)
{
    if (B == 0)
        return 0;
    if (k < 0 || k > NMT_MAX_K || (mode != NMT_GPU_GATHER && (k < 1 || k > V)))
        return smt_err_set(g->err, SMT_ERR_ARG, "output layer: k = %d out of range", k);
    if (mode == NMT_GPU_ARGMAX || mode == NMT_GPU_GATHER)
        k = mode == NMT_GPU_ARGMAX ? 1 : 0;
    if (ns <= 0)
        ns = auto_shards(g, B, V);
    if (ns > MAX_SHARDS)
        ns = MAX_SHARDS;
    if (ns > V)
        ns = V;
    int rc = ensure_part(g, B, k);
    if (rc)
        return rc;
    switch (mode) {
    case NMT_GPU_TOPK:
        partial(g, true, x, bias, B, V, k, ns);
        k_out_reduce<true><<<B, 32, 0, g->stream>>>(g->part_m, g->part_s, g->part_val, g->part_id,
                                                    ns, k, x, bias, V, NULL, NULL, val, ids, lse);
        break;
    case NMT_GPU_TOPK_UNFUSED:
        k_add_bias<<<(int)(((size_t)B * V + 255) / 256 < 4096 ? ((size_t)B * V + 255) / 256 : 4096),
                     256, 0, g->stream>>>(x, bias, tmp, B, V);
        k_log_softmax<<<B, OUT_THREADS, 0, g->stream>>>(tmp, V, lse);
        partial(g, false, tmp, NULL, B, V, k, ns);
        k_out_reduce<false><<<B, 32, 0, g->stream>>>(g->part_m, g->part_s, g->part_val,
                                                     g->part_id, ns, k, tmp, NULL, V, NULL, lse,
                                                     val, ids, NULL);
        break;
    case NMT_GPU_ARGMAX:
        partial(g, false, x, bias, B, V, 1, ns);
        k_out_reduce<false><<<B, 32, 0, g->stream>>>(g->part_m, g->part_s, g->part_val,
                                                     g->part_id, ns, 1, x, bias, V, NULL, NULL,
                                                     val, ids, NULL);
        break;
    case NMT_GPU_GATHER:
        partial(g, true, x, bias, B, V, 0, ns);
        k_out_reduce<true><<<B, 32, 0, g->stream>>>(g->part_m, g->part_s, g->part_val, g->part_id,
                                                    ns, 0, x, bias, V, gather_ids, NULL, val, NULL,
                                                    NULL);
        break;
    default:
        return smt_err_set(g->err, SMT_ERR_ARG, "output layer: unknown mode %d", mode);
    }
    CK(g, cudaGetLastError());
    return 0;
}

/* ------------------------------------------------------------------ nmt_gpu */

extern "C" int nmt_cuda_available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

extern "C" int nmt_gpu_create(nmt_gpu **out, int device, smt_err *err)
{
    *out = NULL;
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n <= device)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "no CUDA device %d", device);
    nmt_gpu *g = (nmt_gpu *)calloc(1, sizeof *g);
    if (!g)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    g->device = device;
    g->err = err;
    int rc = 0;
    if (cudaSetDevice(device) != cudaSuccess ||
        cudaDeviceGetAttribute(&g->n_sm, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
        cudaStreamCreate(&g->stream) != cudaSuccess)
        rc = smt_err_set(err, SMT_ERR_CUDA, "%s:%d: cannot set up CUDA device %d", __FILE__,
                         __LINE__, device);
    if (!rc && (cublasCreate(&g->blas) != CUBLAS_STATUS_SUCCESS ||
                cublasSetStream(g->blas, g->stream) != CUBLAS_STATUS_SUCCESS))
        rc = smt_err_set(err, SMT_ERR_CUDA, "%s:%d: cublasCreate failed", __FILE__, __LINE__);
    if (rc) {
        nmt_gpu_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

extern "C" void nmt_gpu_free(nmt_gpu *g)
{
    if (!g)
        return;
    cudaFree(g->part_m);
    cudaFree(g->part_s);
    cudaFree(g->part_val);
    cudaFree(g->part_id);
    for (int i = 0; i < 4; i++)
        cudaFree(g->stage[i]);
    if (g->blas)
        cublasDestroy(g->blas);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

/* The host entry points below: a failing CUDA call records the first error in rc (a local) and
 * skips the rest, so that everything allocated is still freed. */
#define TRY(stmt)                                                                                  \
    if (!rc && (stmt) != cudaSuccess)                                                              \
    rc = smt_err_set(err, SMT_ERR_CUDA, "%s:%d: %s failed", __FILE__, __LINE__, #stmt)

extern "C" int nmt_gpu_outlayer(nmt_gpu *g, const nmt_gpu_out_args *a, smt_err *err)
{
    g->err = err;
    size_t n = (size_t)a->B * a->V;
    int k = a->mode == NMT_GPU_GATHER ? 1 : a->k;
    float *x = NULL, *bias = NULL, *tmp = NULL, *val = NULL, *lse = NULL;
    int32_t *ids = NULL, *gid = NULL;
    int rc = 0;
    TRY(cudaMalloc(&x, n * sizeof(float)));
    TRY(cudaMalloc(&tmp, n * sizeof(float)));
    TRY(cudaMalloc(&bias, (size_t)a->V * sizeof(float)));
    TRY(cudaMalloc(&val, (size_t)a->B * k * sizeof(float)));
    TRY(cudaMalloc(&lse, (size_t)a->B * sizeof(float)));
    TRY(cudaMalloc(&ids, (size_t)a->B * k * sizeof(int32_t)));
    TRY(cudaMalloc(&gid, (size_t)a->B * sizeof(int32_t)));
    TRY(cudaMemcpy(x, a->x, n * sizeof(float), cudaMemcpyHostToDevice));
    if (a->bias)
        TRY(cudaMemcpy(bias, a->bias, (size_t)a->V * sizeof(float), cudaMemcpyHostToDevice));
    if (a->gather_ids)
        TRY(cudaMemcpy(gid, a->gather_ids, (size_t)a->B * sizeof(int32_t), cudaMemcpyHostToDevice));
    if (!rc)
        rc = nmt_gpu_out_device(g, a->mode, x, a->bias ? bias : NULL, a->B, a->V, a->k, a->n_shards, gid,
                        tmp, val, ids, lse);
    TRY(cudaStreamSynchronize(g->stream));
    if (a->val)
        TRY(cudaMemcpy(a->val, val, (size_t)a->B * k * sizeof(float), cudaMemcpyDeviceToHost));
    if (a->ids && a->mode != NMT_GPU_GATHER)
        TRY(cudaMemcpy(a->ids, ids, (size_t)a->B * k * sizeof(int32_t), cudaMemcpyDeviceToHost));
    if (a->lse && (a->mode == NMT_GPU_TOPK || a->mode == NMT_GPU_TOPK_UNFUSED))
        TRY(cudaMemcpy(a->lse, lse, (size_t)a->B * sizeof(float), cudaMemcpyDeviceToHost));
    cudaFree(x);
    cudaFree(tmp);
    cudaFree(bias);
    cudaFree(val);
    cudaFree(lse);
    cudaFree(ids);
    cudaFree(gid);
    return rc;
}

__global__ void k_fill_random(float *x, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 15;
        h *= 2246822519u;
        h ^= h >> 13;
        x[i] = (float)(h & 0xFFFFFF) / (float)0x1000000 * 20.0f - 10.0f;
    }
}

extern "C" int nmt_gpu_bench_outlayer(nmt_gpu *g, int mode, int B, int V, int k, int iters,
                                      double *ms, smt_err *err)
{
    g->err = err;
    size_t n = (size_t)B * V;
    float *x = NULL, *bias = NULL, *tmp = NULL, *val = NULL, *lse = NULL, *flush = NULL;
    int32_t *ids = NULL;
    size_t flush_bytes = (size_t)128 << 20; /* bigger than any L2 we know (H100: 50 MB) */
    cudaEvent_t t0 = NULL, t1 = NULL;
    int rc = 0;
    double total = 0;
    TRY(cudaMalloc(&x, n * sizeof(float)));
    TRY(cudaMalloc(&tmp, n * sizeof(float)));
    TRY(cudaMalloc(&bias, (size_t)V * sizeof(float)));
    TRY(cudaMalloc(&val, (size_t)B * k * sizeof(float)));
    TRY(cudaMalloc(&lse, (size_t)B * sizeof(float)));
    TRY(cudaMalloc(&ids, (size_t)B * (k > 0 ? k : 1) * sizeof(int32_t)));
    TRY(cudaMalloc(&flush, flush_bytes));
    TRY(cudaEventCreate(&t0));
    TRY(cudaEventCreate(&t1));
    if (!rc) {
        k_fill_random<<<1024, 256, 0, g->stream>>>(x, n, 1u);
        k_fill_random<<<64, 256, 0, g->stream>>>(bias, (size_t)V, 2u);
        rc = nmt_gpu_out_device(g, mode, x, bias, B, V, k, 0, ids, tmp, val, ids, lse); /* warm-up */
    }
    for (int it = 0; it < iters && !rc; it++) {
        TRY(cudaMemsetAsync(flush, it & 0xFF, flush_bytes, g->stream));
        TRY(cudaEventRecord(t0, g->stream));
        if (!rc)
            rc = nmt_gpu_out_device(g, mode, x, bias, B, V, k, 0, ids, tmp, val, ids, lse);
        TRY(cudaEventRecord(t1, g->stream));
        TRY(cudaEventSynchronize(t1));
        float e = 0;
        TRY(cudaEventElapsedTime(&e, t0, t1));
        total += e;
    }
    if (t0)
        cudaEventDestroy(t0);
    if (t1)
        cudaEventDestroy(t1);
    cudaFree(x);
    cudaFree(tmp);
    cudaFree(bias);
    cudaFree(val);
    cudaFree(lse);
    cudaFree(ids);
    cudaFree(flush);
    *ms = iters > 0 ? total / iters : 0;
    return rc;
}

