/* glm_gpu.cu — the GPU path: the same trie arrays copied to the device, one warp per n-gram row.
 * A B-tree node's keys are read by the warp's lanes at once (K-1 = 30 consecutive uint32: one
 * coalesced 128-byte read) and compared with a ballot; everything else (shape, cursor, value reads,
 * the float additions) is the shared GLM_HD code of glm_layout.h, so results equal the CPU's.
 * No CUDA globals: the device arrays, workspace and stream live in glm_gpu. */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return smt_err_set(err, SMT_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,      \
                               cudaGetErrorString(e_));                                            \
    } while (0)

#define WARPS_PER_BLOCK 8

struct glm_gpu {
    glm_layout lay; /* with device pointers */
    uint32_t *d_keys;
    glm_mid *d_mid;
    float *d_top;
    uint32_t vocab;
    cudaStream_t stream;
    glm_word *d_rows; /* workspace for the host-memory API: (cap, order) */
    float *d_prob;
    uint8_t *d_len;
    size_t cap;
};

/* glm_walk with the node comparisons spread over the warp's lanes. */
static __device__ unsigned warp_walk(const glm_layout &L, glm_word w, const glm_word *hist,
                                     unsigned nh, float *prob, float *bo, unsigned lane)
{
    const glm_mid *u = L.mid + L.mid_off[1] + w;
    *prob = u->prob;
    bo[0] = u->backoff;
    unsigned len = 1;
    uint64_t e = w;
    while (len <= nh && len < L.order) {
        uint64_t first, n;
        glm_children(&L, len, e, &first, &n);
        if (n == 0)
            break;
        const uint32_t *keys = L.keys + L.key_off[len + 1] + first;
        glm_word x = hist[len - 1];
        glm_bt_cursor c;
        glm_bt_init(&L, &c, keys, n);
        int64_t got;
        for (;;) {
            uint64_t start;
            uint32_t cnt;
            glm_bt_node(&L, &c, &start, &cnt);
            uint32_t less = 0;
            int hit = 0;
            for (uint32_t base = 0; base < cnt; base += 32) { /* K > 33: several rounds */
                uint32_t i = base + lane;
                uint32_t k = i < cnt ? keys[start + i] : 0xffffffffu;
                unsigned lt = __ballot_sync(0xffffffffu, i < cnt && k < x);
                unsigned eq = __ballot_sync(0xffffffffu, i < cnt && k == x);
                less += (uint32_t)__popc(lt);
                hit |= eq != 0;
            }
            got = glm_bt_advance(&L, &c, start, cnt, less, hit);
            if (got != -2)
                break;
        }
        if (got < 0)
            break;
        e = first + (uint64_t)got;
        len++;
        if (len == L.order) {
            *prob = L.top[e];
        } else {
            const glm_mid *m = L.mid + L.mid_off[len] + e;
            *prob = m->prob;
            bo[len - 1] = m->backoff;
        }
    }
    return len;
}

/* rows (n_rows, order) → prob (n_rows), len (n_rows, optional). One warp per row. */
static __global__ void score_rows_kernel(glm_layout L, const glm_word *rows, size_t n_rows,
                                         float *prob, uint8_t *len)
{
    size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32;
    unsigned lane = threadIdx.x & 31;
    if (row >= n_rows) /* uniform per warp */
        return;
    unsigned N = L.order;
    const glm_word *r = rows + row * N;
    glm_word hist[GLM_MAX_ORDER];
    unsigned nh = 0;
    for (int i = (int)N - 2; i >= 0 && r[i] != GLM_NONE; i--)
        hist[nh++] = r[i];
    float pa, pb, boA[GLM_MAX_ORDER], boB[GLM_MAX_ORDER];
    unsigned la = warp_walk(L, r[N - 1], hist, nh, &pa, boA, lane), lb = 0;
    if (nh > 0)
        lb = warp_walk(L, hist[0], hist + 1, nh - 1, &pb, boB, lane);
    for (unsigned j = la - 1; j < lb; j++) /* glm_row_combine */
        pa += boB[j];
    if (lane == 0) {
        prob[row] = pa;
        if (len)
            len[row] = (uint8_t)la;
    }
}

static int launch(glm_gpu *g, const glm_word *d_rows, size_t n_rows, float *d_prob,
                  uint8_t *d_len, smt_err *err)
{
    if (n_rows == 0)
        return 0;
    size_t threads = WARPS_PER_BLOCK * 32;
    size_t blocks = (n_rows + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    score_rows_kernel<<<(unsigned)blocks, (unsigned)threads, 0, g->stream>>>(g->lay, d_rows,
                                                                              n_rows, d_prob, d_len);
    CK(cudaGetLastError());
    return 0;
}

extern "C" int glm_gpu_available(void)
{
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError(); /* clear the sticky "no device" error */
        return 0;
    }
    return n > 0;
}

static int gpu_init(glm_gpu *g, const glm_model *m, smt_err *err)
{
    const glm_layout *L = &m->lay;
    uint64_t nk = 0, nm = 0;
    for (unsigned k = 2; k <= L->order; k++)
        nk += L->count[k];
    for (unsigned k = 1; k < L->order; k++)
        nm += L->count[k] + 1;
    uint64_t nt = L->count[L->order];
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    CK(cudaMalloc((void **)&g->d_keys, nk * 4 + 4));
    CK(cudaMalloc((void **)&g->d_mid, nm * sizeof(glm_mid)));
    CK(cudaMalloc((void **)&g->d_top, nt * 4 + 4));
    CK(cudaMemcpy(g->d_keys, L->keys, nk * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->d_mid, L->mid, nm * sizeof(glm_mid), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->d_top, L->top, nt * 4, cudaMemcpyHostToDevice));
    g->lay = *L;
    g->lay.keys = g->d_keys;
    g->lay.mid = g->d_mid;
    g->lay.top = g->d_top;
    g->vocab = glm_vocab_size(m);
    return 0;
}

extern "C" int glm_gpu_create(glm_gpu **out, const glm_model *m, smt_err *err)
{
    *out = NULL;
    if (!glm_gpu_available())
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "no CUDA device is available");
    glm_gpu *g = (glm_gpu *)calloc(1, sizeof *g);
    if (!g)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = gpu_init(g, m, err);
    if (rc) {
        glm_gpu_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

extern "C" void glm_gpu_free(glm_gpu *g)
{
    if (!g)
        return;
    /* errors while freeing cannot be reported; the pointers are released either way */
    cudaFree(g->d_keys);
    cudaFree(g->d_mid);
    cudaFree(g->d_top);
    cudaFree(g->d_rows);
    cudaFree(g->d_prob);
    cudaFree(g->d_len);
    if (g->stream)
        cudaStreamDestroy(g->stream);
    free(g);
}

static int reserve(glm_gpu *g, size_t n_rows, smt_err *err)
{
    if (n_rows <= g->cap)
        return 0;
    size_t cap = g->cap ? g->cap : 4096;
    while (cap < n_rows)
        cap *= 2;
    CK(cudaFree(g->d_rows));
    CK(cudaFree(g->d_prob));
    CK(cudaFree(g->d_len));
    g->d_rows = NULL, g->d_prob = NULL, g->d_len = NULL, g->cap = 0;
    CK(cudaMalloc((void **)&g->d_rows, cap * g->lay.order * sizeof(glm_word)));
    CK(cudaMalloc((void **)&g->d_prob, cap * sizeof(float)));
    CK(cudaMalloc((void **)&g->d_len, cap));
    g->cap = cap;
    return 0;
}

extern "C" int glm_gpu_score_rows(glm_gpu *g, const glm_word *rows, size_t n_rows, float *prob,
                                  uint8_t *len, smt_err *err)
{
    unsigned N = g->lay.order;
    for (size_t r = 0; r < n_rows; r++) /* the kernel trusts the ids: check them here */
        for (unsigned i = 0; i < N; i++) {
            glm_word w = rows[r * N + i];
            if ((w == GLM_NONE && i + 1 == N) || (w != GLM_NONE && w >= g->vocab))
                return smt_err_set(err, SMT_ERR_ARG, "row %zu: word id out of range", r);
        }
    int rc = reserve(g, n_rows, err);
    if (rc || n_rows == 0)
        return rc;
    CK(cudaMemcpyAsync(g->d_rows, rows, n_rows * N * sizeof(glm_word), cudaMemcpyHostToDevice,
                       g->stream));
    if ((rc = launch(g, g->d_rows, n_rows, g->d_prob, g->d_len, err)))
        return rc;
    CK(cudaMemcpyAsync(prob, g->d_prob, n_rows * sizeof(float), cudaMemcpyDeviceToHost,
                       g->stream));
    if (len)
        CK(cudaMemcpyAsync(len, g->d_len, n_rows, cudaMemcpyDeviceToHost, g->stream));
    CK(cudaStreamSynchronize(g->stream));
    return 0;
}

extern "C" int glm_gpu_score_rows_device(glm_gpu *g, const glm_word *d_rows, size_t n_rows,
                                         float *d_prob, uint8_t *d_len, smt_err *err)
{
    int rc = launch(g, d_rows, n_rows, d_prob, d_len, err);
    if (rc)
        return rc;
    CK(cudaStreamSynchronize(g->stream));
    return 0;
}
