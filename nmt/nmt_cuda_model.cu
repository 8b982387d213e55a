/* nmt_cuda_model.cu — the model's operations on the GPU (the nmt_ops table of the CUDA backend):
 * cuBLAS for the linear layers, one small kernel per remaining operation, each the twin of the
 * function of the same name in nmt_cpu.c. Weights are copied to the device once per context; the
 * host-side index arrays the search builds (ids, key offsets, gather lists) are staged per call. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_cuda_impl.h"
#include "nmt_out_impl.h"

typedef struct cuda_state {
    nmt_gpu *g;
    float *d_arena;
    nmt_weights dw; /* device copy of the weights: the host pointers rebased onto d_arena */
    float *d_val, *d_lse;
    int32_t *d_ids;
    size_t out_cap;
} cuda_state;

static cuda_state *ST(nmt_ctx *c) { return (cuda_state *)c->cuda; }

/* Records a CUDA failure in the context (the ops return void; the caller checks c->failed). */
#define OK(c, stmt)                                                                                \
    do {                                                                                           \
        cudaError_t e_ = (stmt);                                                                   \
        if (e_ != cudaSuccess && !(c)->failed)                                                     \
            (c)->failed = smt_err_set((c)->err, SMT_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, \
                                      #stmt, cudaGetErrorString(e_));                              \
    } while (0)

/* Copies a host array into staging slot i (grown on demand) and returns its device address. */
static void *stage(nmt_ctx *c, int i, const void *host, size_t bytes)
{
    nmt_gpu *g = ST(c)->g;
    if (bytes > g->stage_cap[i]) {
        cudaFree(g->stage[i]); /* synchronizes: no kernel still reads the old buffer */
        g->stage[i] = NULL;
        g->stage_cap[i] = 0;
        OK(c, cudaMalloc(&g->stage[i], bytes * 2));
        if (c->failed)
            return NULL;
        g->stage_cap[i] = bytes * 2;
    }
    OK(c, cudaMemcpyAsync(g->stage[i], host, bytes, cudaMemcpyHostToDevice, g->stream));
    return g->stage[i];
}

static int blocks_for(size_t n) { return (int)(n / 256 + 1 < 8192 ? n / 256 + 1 : 8192); }

/* ---- kernels ---- */

__global__ void k_bias_relu(float *y, const float *b, int N, int out, int relu)
{
    size_t n = (size_t)N * out;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        float v = y[i] + (b ? b[i % out] : 0.0f);
        y[i] = relu && v < 0.0f ? 0.0f : v;
    }
}

/* op(s) over the block (warps by shuffles, then thread 0 over the warps from init), returned to
 * every thread. */
template <typename Op> __device__ float block_reduce(float s, float init, Op op)
{
    __shared__ float red[32];
    __shared__ float total;
    for (int o = 16; o > 0; o >>= 1)
        s = op(s, __shfl_down_sync(0xffffffffu, s, o));
    if ((threadIdx.x & 31) == 0)
        red[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x == 0) {
        float t = init;
        for (int w = 0; w < (int)(blockDim.x + 31) / 32; w++)
            t = op(t, red[w]);
        total = t;
    }
    __syncthreads();
    float r = total;
    __syncthreads();
    return r;
}

/* The sum of s over the block, returned to every thread. */
__device__ float block_sum(float s)
{
    return block_reduce(s, 0.0f, [](float a, float b) { return a + b; });
}

/* One block per row; two passes for the biased variance, as the CPU twin and PyTorch. */
__global__ void k_layernorm(const float *x, int d, const float *g, const float *b, float eps,
                            float *y)
{
    const float *xr = x + (size_t)blockIdx.x * d;
    float *yr = y + (size_t)blockIdx.x * d;
    float s = 0.0f;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        s += xr[i];
    float mean = block_sum(s) / (float)d;
    s = 0.0f;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        s += (xr[i] - mean) * (xr[i] - mean);
    float inv = 1.0f / sqrtf(block_sum(s) / (float)d + eps);
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        yr[i] = (xr[i] - mean) * inv * g[i] + b[i];
}

__global__ void k_add(float *y, const float *x, size_t n)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x)
        y[i] += x[i];
}

__global__ void k_embed(const float *table, const int32_t *ids, const int *pos, int d, float *out)
{
    int r = blockIdx.x;
    const float *e = table + (size_t)ids[r] * d;
    float *o = out + (size_t)r * d, scale = sqrtf((float)d);
    for (int i = 2 * threadIdx.x; i < d; i += 2 * blockDim.x) {
        float ang = (float)pos[r] / powf(10000.0f, (float)i / (float)d);
        o[i] = e[i] * scale + sinf(ang);
        o[i + 1] = e[i + 1] * scale + cosf(ang);
    }
}

/* Block (row, head): scores in shared memory (klen floats), softmax, weighted sum of values. */
__global__ void k_attention(const float *q, int d, int H, const float *k, const float *v,
                            const int64_t *koff, const int *klen, float *out)
{
    extern __shared__ float p[];
    int r = blockIdx.x, h = blockIdx.y, dh = d / H, L = klen[r];
    const float *qr = q + (size_t)r * d + h * dh, *K = k + koff[r] + h * dh, *Vv = v + koff[r] + h * dh;
    float scale = rsqrtf((float)dh), m = -INFINITY;
    for (int t = threadIdx.x; t < L; t += blockDim.x) {
        float s = 0.0f;
        for (int i = 0; i < dh; i++)
            s += qr[i] * K[(size_t)t * d + i];
        p[t] = s * scale;
        m = fmaxf(m, p[t]);
    }
    m = block_reduce(m, -INFINITY, [](float a, float b) { return fmaxf(a, b); });
    float s = 0.0f;
    for (int t = threadIdx.x; t < L; t += blockDim.x) {
        p[t] = expf(p[t] - m);
        s += p[t];
    }
    float inv = 1.0f / block_sum(s); /* its barriers also publish p[] to every thread */
    for (int i = threadIdx.x; i < dh; i += blockDim.x) {
        float acc = 0.0f;
        for (int t = 0; t < L; t++)
            acc += p[t] * Vv[(size_t)t * d + i];
        out[(size_t)r * d + h * dh + i] = acc * inv;
    }
}

__global__ void k_scatter_rows(float *dst, const int64_t *off, const float *src, int d)
{
    int r = blockIdx.x;
    for (int i = threadIdx.x; i < d; i += blockDim.x)
        dst[off[r] + i] = src[(size_t)r * d + i];
}

__global__ void k_gather_rows(float *dst, const float *src, const int *idx, size_t n, size_t stride)
{
    int r = blockIdx.x;
    const float *s = src + (size_t)idx[r] * stride;
    float *o = dst + (size_t)r * stride;
    for (size_t i = threadIdx.x; i < n; i += blockDim.x)
        o[i] = s[i];
}

/* ---- the operation table ---- */

static void *g_alloc(nmt_ctx *c, size_t bytes)
{
    void *p = NULL;
    if (cudaMalloc(&p, bytes ? bytes : 4) != cudaSuccess)
        return NULL;
    return p;
}

static void g_release(nmt_ctx *c, void *p)
{
    (void)c;
    cudaFree(p);
}

static void g_linear(nmt_ctx *c, const float *x, int N, const nmt_linear *l, float *y, int relu)
{
    nmt_gpu *g = ST(c)->g;
    const float one = 1.0f, zero = 0.0f;
    if (N <= 0 || c->failed)
        return;
    /* column-major view: Y(out,N) = WT-as-(out,in) * X(in,N) */
    if (cublasSgemm(g->blas, CUBLAS_OP_N, CUBLAS_OP_N, l->out, N, l->in, &one, l->wt, l->out, x,
                    l->in, &zero, y, l->out) != CUBLAS_STATUS_SUCCESS && !c->failed)
        c->failed = smt_err_set(c->err, SMT_ERR_CUDA, "%s:%d: cublasSgemm(%d,%d,%d) failed",
                                __FILE__, __LINE__, l->out, N, l->in);
    if (l->b || relu)
        k_bias_relu<<<blocks_for((size_t)N * l->out), 256, 0, g->stream>>>(y, l->b, N, l->out, relu);
}

static void g_layernorm(nmt_ctx *c, const float *x, int N, int d, const nmt_norm *n, float eps,
                        float *y)
{
    if (N > 0)
        k_layernorm<<<N, 128, 0, ST(c)->g->stream>>>(x, d, n->g, n->b, eps, y);
}

static void g_add(nmt_ctx *c, float *y, const float *x, size_t n)
{
    k_add<<<blocks_for(n), 256, 0, ST(c)->g->stream>>>(y, x, n);
}

static void g_embed(nmt_ctx *c, const float *table, const int32_t *ids, const int *pos, int R,
                    int d, float *out)
{
    const int32_t *dids = (const int32_t *)stage(c, 0, ids, (size_t)R * sizeof *ids);
    const int *dpos = (const int *)stage(c, 1, pos, (size_t)R * sizeof *pos);
    if (!c->failed && R > 0)
        k_embed<<<R, 64, 0, ST(c)->g->stream>>>(table, dids, dpos, d, out);
}

static void g_attention(nmt_ctx *c, const float *q, int R, int d, int H, const float *k,
                        const float *v, const int64_t *koff, const int *klen, float *out)
{
    int maxlen = 1;
    for (int r = 0; r < R; r++)
        maxlen = klen[r] > maxlen ? klen[r] : maxlen;
    const int64_t *dk = (const int64_t *)stage(c, 2, koff, (size_t)R * sizeof *koff);
    const int *dl = (const int *)stage(c, 3, klen, (size_t)R * sizeof *klen);
    if (!c->failed && R > 0)
        k_attention<<<dim3(R, H), 64, (size_t)maxlen * sizeof(float), ST(c)->g->stream>>>(
            q, d, H, k, v, dk, dl, out);
}

static void g_scatter_rows(nmt_ctx *c, float *dst, const int64_t *off, const float *src, int R,
                           int d)
{
    const int64_t *doff = (const int64_t *)stage(c, 2, off, (size_t)R * sizeof *off);
    if (!c->failed && R > 0)
        k_scatter_rows<<<R, 128, 0, ST(c)->g->stream>>>(dst, doff, src, d);
}

static void g_gather_rows(nmt_ctx *c, float *dst, const float *src, const int *idx, int R, size_t n,
                          size_t stride)
{
    const int *didx = (const int *)stage(c, 3, idx, (size_t)R * sizeof *idx);
    if (!c->failed && R > 0)
        k_gather_rows<<<R, 256, 0, ST(c)->g->stream>>>(dst, src, didx, n, stride);
}

static int ensure_out(nmt_ctx *c, int R, int k)
{
    cuda_state *s = ST(c);
    size_t need = (size_t)R * (k > 0 ? k : 1);
    if (need <= s->out_cap)
        return 0;
    cudaFree(s->d_val);
    cudaFree(s->d_ids);
    cudaFree(s->d_lse);
    s->out_cap = 0;
    OK(c, cudaMalloc(&s->d_val, need * sizeof(float)));
    OK(c, cudaMalloc(&s->d_ids, need * sizeof(int32_t)));
    OK(c, cudaMalloc(&s->d_lse, need * sizeof(float)));
    if (!c->failed)
        s->out_cap = need;
    return c->failed;
}

static void run_out(nmt_ctx *c, int mode, const float *x, const float *bias, int R, int V, int k,
                    const int32_t *gather_ids, float *val, int32_t *ids, float *lse)
{
    cuda_state *s = ST(c);
    if (R == 0 || ensure_out(c, R, k))
        return;
    const int32_t *dg = gather_ids ? (const int32_t *)stage(c, 0, gather_ids, (size_t)R * 4) : NULL;
    if (c->failed)
        return;
    s->g->err = c->err;
    int rc = nmt_gpu_out_device(s->g, mode, x, bias, R, V, k, 0, dg, NULL, s->d_val, s->d_ids,
                                s->d_lse);
    if (rc) {
        c->failed = rc;
        return;
    }
    size_t n = (size_t)R * (mode == NMT_GPU_GATHER ? 1 : k);
    if (val)
        OK(c, cudaMemcpyAsync(val, s->d_val, n * sizeof(float), cudaMemcpyDeviceToHost,
                              s->g->stream));
    if (ids)
        OK(c, cudaMemcpyAsync(ids, s->d_ids, n * sizeof(int32_t), cudaMemcpyDeviceToHost,
                              s->g->stream));
    if (lse)
        OK(c, cudaMemcpyAsync(lse, s->d_lse, (size_t)R * sizeof(float), cudaMemcpyDeviceToHost,
                              s->g->stream));
    OK(c, cudaStreamSynchronize(s->g->stream));
}

static void g_topk(nmt_ctx *c, const float *x, const float *bias, int R, int V, int k, float *val,
                   int32_t *ids, float *lse)
{
    run_out(c, NMT_GPU_TOPK, x, bias, R, V, k, NULL, val, ids, lse);
}

static void g_argmax(nmt_ctx *c, const float *x, const float *bias, int R, int V, int32_t *ids)
{
    run_out(c, NMT_GPU_ARGMAX, x, bias, R, V, 1, NULL, NULL, ids, NULL);
}

static void g_gather_logprob(nmt_ctx *c, const float *x, const float *bias, int R, int V,
                             const int32_t *ids, float *logprob)
{
    run_out(c, NMT_GPU_GATHER, x, bias, R, V, 0, ids, logprob, NULL, NULL);
}

static void g_download(nmt_ctx *c, float *dst, const float *src, size_t n)
{
    OK(c, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyDeviceToHost, ST(c)->g->stream));
    OK(c, cudaStreamSynchronize(ST(c)->g->stream));
}

static void g_upload(nmt_ctx *c, float *dst, const float *src, size_t n)
{
    OK(c, cudaMemcpyAsync(dst, src, n * sizeof(float), cudaMemcpyHostToDevice, ST(c)->g->stream));
}

static const nmt_ops cuda_ops = {g_alloc,       g_release,     g_linear,         g_layernorm,
                                 g_add,         g_embed,       g_attention,      g_scatter_rows,
                                 g_gather_rows, g_topk,        g_argmax,         g_gather_logprob,
                                 g_download,    g_upload};

/* Moves p from the host arena to the same offset in the device arena. */
static float *rebase(const nmt_model *m, float *d_arena, float *p)
{
    return p ? d_arena + (p - m->arena) : NULL;
}

static void rebase_linear(const nmt_model *m, float *d, nmt_linear *l)
{
    l->wt = rebase(m, d, l->wt);
    l->b = rebase(m, d, l->b);
}

static void rebase_norm(const nmt_model *m, float *d, nmt_norm *n)
{
    n->g = rebase(m, d, n->g);
    n->b = rebase(m, d, n->b);
}

extern "C" int nmt_cuda_ctx_init(nmt_ctx *c, int device, smt_err *err)
{
    cuda_state *s = (cuda_state *)calloc(1, sizeof *s);
    if (!s)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    c->cuda = s;
    int rc = nmt_gpu_create(&s->g, device, err);
    if (rc)
        return rc;
    const nmt_model *m = c->m;
    const nmt_config *cfg = &m->cfg;
    if (cudaMalloc(&s->d_arena, m->arena_floats * sizeof(float)) != cudaSuccess ||
        cudaMemcpy(s->d_arena, m->arena, m->arena_floats * sizeof(float),
                   cudaMemcpyHostToDevice) != cudaSuccess)
        return smt_err_set(err, SMT_ERR_CUDA, "%s:%d: cannot copy %zu weights to the device",
                           __FILE__, __LINE__, m->arena_floats);
    s->dw = m->w;
    s->dw.enc = (nmt_enc_layer *)malloc(((size_t)cfg->enc_layers + 1) * sizeof *s->dw.enc);
    s->dw.dec = (nmt_dec_layer *)malloc(((size_t)cfg->dec_layers + 1) * sizeof *s->dw.dec);
    if (!s->dw.enc || !s->dw.dec)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    float *d = s->d_arena;
    s->dw.src_embed = rebase(m, d, m->w.src_embed);
    s->dw.tgt_embed = rebase(m, d, m->w.tgt_embed);
    for (int i = 0; i < cfg->enc_layers; i++) {
        nmt_enc_layer *e = &s->dw.enc[i];
        *e = m->w.enc[i];
        rebase_norm(m, d, &e->ln1);
        rebase_norm(m, d, &e->ln2);
        nmt_linear *ls[] = {&e->q, &e->k, &e->v, &e->o, &e->ff1, &e->ff2};
        for (size_t j = 0; j < sizeof ls / sizeof *ls; j++)
            rebase_linear(m, d, ls[j]);
    }
    for (int i = 0; i < cfg->dec_layers; i++) {
        nmt_dec_layer *e = &s->dw.dec[i];
        *e = m->w.dec[i];
        rebase_norm(m, d, &e->ln1);
        rebase_norm(m, d, &e->ln2);
        rebase_norm(m, d, &e->ln3);
        nmt_linear *ls[] = {&e->sq, &e->sk, &e->sv, &e->so, &e->cq,  &e->ck,
                            &e->cv, &e->co, &e->ff1, &e->ff2};
        for (size_t j = 0; j < sizeof ls / sizeof *ls; j++)
            rebase_linear(m, d, ls[j]);
    }
    rebase_norm(m, d, &s->dw.enc_ln);
    rebase_norm(m, d, &s->dw.dec_ln);
    rebase_linear(m, d, &s->dw.out);
    c->w = &s->dw;
    c->ops = &cuda_ops;
    c->backend = NMT_BACKEND_CUDA;
    return 0;
}

extern "C" void nmt_cuda_ctx_free(nmt_ctx *c)
{
    cuda_state *s = ST(c);
    if (!s)
        return;
    cudaFree(s->d_arena);
    cudaFree(s->d_val);
    cudaFree(s->d_ids);
    cudaFree(s->d_lse);
    free(s->dw.enc);
    free(s->dw.dec);
    nmt_gpu_free(s->g);
    free(s);
    c->cuda = NULL;
}
