/* glm_gpu.cu — the GPU path: the same trie arrays copied to the device, one warp per n-gram row
 * (the default; its 32 lanes read a B-tree node's keys at once, one coalesced 128-byte read, and
 * compare with ballots), or with glm_gpu_set_lanes a tile of 4, 8 or 16 lanes per row (each lane
 * counts its share of the node, the tile adds the counts) or one thread per row (the CPU
 * reference's walk as device code). Everything else (shape, cursor, value reads, the float
 * additions) is the shared GLM_HD code of glm_layout.h, so results equal the CPU's.
 * No CUDA globals: the device arrays, workspace and stream live in glm_gpu. */
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"

namespace cg = cooperative_groups;

#define CK(call)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return smt_err_set(err, SMT_ERR_CUDA, "%s:%d: %s: %s", __FILE__, __LINE__, #call,      \
                               cudaGetErrorString(e_));                                            \
    } while (0)

struct glm_gpu {
    glm_layout lay; /* with device pointers */
    uint32_t *d_keys;  /* uint32 keys, or a quantized file's packed keys (glm_layout.h) */
    glm_mid *d_mid;
    float *d_top;
    uint8_t *d_qrec; /* a quantized file's records, bins and child bases (glm_layout.h) */
    float *d_qbins;
    uint32_t *d_qbase;
    uint32_t vocab;
    cudaStream_t stream;
    glm_word *d_rows; /* workspace for the host-memory API: (cap, order) */
    float *d_prob;
    uint8_t *d_len;
    size_t cap;
    unsigned lanes; /* per row: 32 (a warp), a tile of 4, 8 or 16, or 1 (a thread) */
    /* glm_gpu_score_states: staging, grown as needed. in-block: states then words (scap each);
     * out-block: states, probs, lengths (scap each); page-locked on the host (h_), and on the
     * device (d_). */
    unsigned char *h_sin, *h_sout, *d_sin, *d_sout;
    size_t scap;
    size_t s_n;   /* queries of the batch in flight */
    int s_active; /* 1 between glm_gpu_states_start and glm_gpu_states_finish */
};

/* glm_walk on the device: its level step (glm_layout.h's glm_walk_cur), the node search done by
 * count(keys, cnt, x, &less, &hit) with all the row's lanes (every lane gets the same less and
 * hit; keys: glm_layout.h's handle of uint32 or packed keys). */
template <typename Count>
static __device__ unsigned dev_walk(const glm_layout &L, glm_word w, const glm_word *hist,
                                    unsigned nh, float *prob, float *bo, Count count)
{
    const int q = L.qp != 0;
    unsigned lim = nh < L.order - 1 ? nh : L.order - 1; /* the deepest match's length - 1 */
    glm_walk_cur c;
    *prob = glm_walk_start(&L, &c, w, bo);
    while (c.len <= lim && glm_walk_children(&L, &c, q)) {
        glm_word x = hist[c.len - 1];
        glm_keys keys = glm_walk_keys(&L, &c, q);
        glm_bt_cursor bt;
        glm_bt_init(&L, &bt, c.n);
        int64_t got;
        for (;;) {
            uint64_t start;
            uint32_t cnt, less;
            int hit;
            glm_bt_node(&L, &bt, &start, &cnt);
            count(glm_keys_add(keys, start), cnt, x, &less, &hit);
            got = glm_bt_advance(&L, &bt, start, less, hit);
            if (got != -2)
                break;
        }
        if (got < 0)
            break;
        *prob = glm_walk_enter(&L, &c, (uint32_t)got, bo, q);
    }
    return c.len;
}

/* A node searched by a warp's 32 lanes at once (ballots; K > 33 takes several rounds): lanes = 32,
 * the default (which kernels ran on a GPU: docs/glm.md, "GPU"). */
static __device__ void warp_count(glm_keys k, uint32_t cnt, uint32_t x, unsigned lane,
                                  uint32_t *less, int *hit)
{
    *less = 0;
    *hit = 0;
    for (uint32_t base = 0; base < cnt; base += 32) {
        uint32_t i = base + lane;
        uint32_t v = i < cnt ? glm_keys_get(k, i) : 0xffffffffu;
        unsigned lt = __ballot_sync(0xffffffffu, i < cnt && v < x);
        unsigned eq = __ballot_sync(0xffffffffu, i < cnt && v == x);
        *less += (uint32_t)__popc(lt);
        *hit |= eq != 0;
    }
}

/* A node searched by a tile of G lanes (G = 4, 8 or 16; consecutive lanes read consecutive keys, so
 * a node is read in coalesced sectors): each lane counts its share, the tile adds the counts. Fewer
 * lanes per row leave more rows in flight and repeat the scalar shape arithmetic on fewer lanes. */
template <int G>
static __device__ void tile_count(glm_keys k, uint32_t cnt, uint32_t x,
                                  const cg::thread_block_tile<G> &t, uint32_t *less, int *hit)
{
    uint32_t lt = 0, eq = 0;
    for (uint32_t i = t.thread_rank(); i < cnt; i += G) {
        uint32_t v = k.bits ? glm_keys_get(k, i) : __ldg(k.w + i);
        lt += v < x;
        eq |= v == x;
    }
    *less = cg::reduce(t, lt, cg::plus<uint32_t>());
    *hit = t.any(eq);
}

/* A row's context (most recent word first) and the two walks combined by glm_row_combine. */
template <typename Walk>
static __device__ float score_row(const glm_layout &L, const glm_word *r, unsigned *len_out,
                                  Walk walk)
{
    unsigned N = L.order;
    glm_word hist[GLM_MAX_ORDER];
    unsigned nh = 0;
    for (int i = (int)N - 2; i >= 0 && r[i] != GLM_NONE; i--)
        hist[nh++] = r[i];
    float pa, pb, boA[GLM_MAX_ORDER], boB[GLM_MAX_ORDER];
    unsigned la = walk(r[N - 1], hist, nh, &pa, boA), lb = 0;
    if (nh > 0)
        lb = walk(hist[0], hist + 1, nh - 1, &pb, boB);
    *len_out = la;
    return glm_row_combine(la, pa, lb, boB);
}

/* The walk of one row or query by a tile of G lanes (see score_rows_kernel). */
template <int G>
static __device__ unsigned walk_g(const glm_layout &L, const cg::thread_block_tile<G> &t,
                                  glm_word w, const glm_word *h, unsigned nh, float *pr, float *bo)
{
    if constexpr (G == 1)
        return glm_walk(&L, w, h, nh, pr, bo);
    else
        return dev_walk(L, w, h, nh, pr, bo,
                        [&](glm_keys k, uint32_t cnt, uint32_t x, uint32_t *less, int *hit) {
                            if constexpr (G == 32)
                                warp_count(k, cnt, x, t.thread_rank(), less, hit);
                            else
                                tile_count<G>(k, cnt, x, t, less, hit);
                        });
}

/* glm_score of each query (in[q], w[q]) by a tile of G lanes: the walk, then glm_finish (the
 * CPU's state logic), so prob and out equal the CPU's. out/prob/len: n entries each. */
template <int G>
static __global__ void score_states_kernel(glm_layout L, const glm_state *in, const glm_word *w,
                                           size_t n, glm_state *out, float *prob, uint8_t *len)
{
    cg::thread_block_tile<G> t = cg::tiled_partition<G>(cg::this_thread_block());
    size_t q = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (q >= n) /* uniform per tile */
        return;
    glm_state s = in[q];
    glm_word x = w[q];
    float pr, bo[GLM_MAX_ORDER];
    unsigned l = walk_g<G>(L, t, x, s.words, s.length, &pr, bo);
    if (t.thread_rank() == 0) {
        glm_state o;
        prob[q] = glm_finish(&L, &s, x, l, pr, bo, &o);
        out[q] = o;
        len[q] = (uint8_t)l;
    }
}

/* rows (n_rows, order) → prob (n_rows), len (n_rows, optional), G lanes per row: 32 a warp
 * (ballots), 4/8/16 a tile (counts added), 1 a thread running the CPU reference's own walk
 * (glm_walk of glm_layout.h, a binary search in full nodes). */
template <int G>
static __global__ void score_rows_kernel(glm_layout L, const glm_word *rows, size_t n_rows,
                                         float *prob, uint8_t *len)
{
    cg::thread_block_tile<G> t = cg::tiled_partition<G>(cg::this_thread_block());
    size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / G;
    if (row >= n_rows) /* uniform per tile */
        return;
    unsigned la;
    float p = score_row(L, rows + row * L.order, &la,
                        [&](glm_word w, const glm_word *h, unsigned nh, float *pr, float *bo) {
                            return walk_g<G>(L, t, w, h, nh, pr, bo);
                        });
    if (t.thread_rank() == 0) {
        prob[row] = p;
        if (len)
            len[row] = (uint8_t)la;
    }
}

#define BLOCK_THREADS 256

static int launch(glm_gpu *g, const glm_word *d_rows, size_t n_rows, float *d_prob,
                  uint8_t *d_len, smt_err *err)
{
    if (n_rows == 0)
        return 0;
    unsigned G = g->lanes;
    size_t blocks = (n_rows * G + BLOCK_THREADS - 1) / BLOCK_THREADS;
    if (blocks > 0x7fffffffu)
        return smt_err_set(err, SMT_ERR_ARG, "batch of %zu rows is too large", n_rows);
    dim3 grid((unsigned)blocks), block(BLOCK_THREADS);
    switch (G) {
    case 1:
        score_rows_kernel<1><<<grid, block, 0, g->stream>>>(g->lay, d_rows, n_rows, d_prob, d_len);
        break;
    case 4:
        score_rows_kernel<4><<<grid, block, 0, g->stream>>>(g->lay, d_rows, n_rows, d_prob, d_len);
        break;
    case 8:
        score_rows_kernel<8><<<grid, block, 0, g->stream>>>(g->lay, d_rows, n_rows, d_prob, d_len);
        break;
    case 16:
        score_rows_kernel<16><<<grid, block, 0, g->stream>>>(g->lay, d_rows, n_rows, d_prob, d_len);
        break;
    default:
        score_rows_kernel<32><<<grid, block, 0, g->stream>>>(g->lay, d_rows, n_rows, d_prob, d_len);
        break;
    }
    CK(cudaGetLastError());
    return 0;
}

extern "C" int glm_gpu_set_lanes(glm_gpu *g, unsigned lanes, smt_err *err)
{
    if (lanes != 1 && lanes != 4 && lanes != 8 && lanes != 16 && lanes != 32)
        return smt_err_set(err, SMT_ERR_ARG, "lanes per row must be 1, 4, 8, 16 or 32, not %u",
                           lanes);
    g->lanes = lanes;
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
    uint64_t nk = 0, nm = glm_layout_nmid(L);
    for (unsigned k = 2; k <= L->order; k++)
        nk += L->count[k];
    uint64_t nt = L->count[L->order];
    CK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    uint64_t key_bytes = L->qp ? L->pkey_bytes : nk * 4;
    CK(cudaMalloc((void **)&g->d_keys, key_bytes + 4));
    CK(cudaMalloc((void **)&g->d_mid, nm * sizeof(glm_mid)));
    CK(cudaMemcpy(g->d_keys, L->qp ? (const void *)L->pkeys : (const void *)L->keys, key_bytes,
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(g->d_mid, L->mid, nm * sizeof(glm_mid), cudaMemcpyHostToDevice));
    g->lay = *L;
    if (L->qp) {
        CK(cudaMalloc((void **)&g->d_qrec, L->qrec_bytes));
        CK(cudaMalloc((void **)&g->d_qbins, L->nqbins * 4));
        CK(cudaMalloc((void **)&g->d_qbase, L->nqbase * 4 + 4));
        CK(cudaMemcpy(g->d_qrec, L->qrec, L->qrec_bytes, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(g->d_qbins, L->qbins, L->nqbins * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(g->d_qbase, L->qbase, L->nqbase * 4, cudaMemcpyHostToDevice));
        g->lay.qrec = g->d_qrec;
        g->lay.qbins = g->d_qbins;
        g->lay.qbase = g->d_qbase;
        g->lay.pkeys = (const uint8_t *)g->d_keys;
        g->lay.top = NULL;
    } else {
        CK(cudaMalloc((void **)&g->d_top, nt * 4 + 4));
        CK(cudaMemcpy(g->d_top, L->top, nt * 4, cudaMemcpyHostToDevice));
        g->lay.top = g->d_top;
    }
    g->lay.keys = L->qp ? NULL : g->d_keys;
    g->lay.mid = g->d_mid;
    glm_layout_levels(&g->lay);
    g->vocab = glm_vocab_size(m);
    g->lanes = GLM_GPU_LANES_DEFAULT;
    return 0;
}

extern "C" int glm_gpu_create(glm_gpu **out, const glm_model *m, smt_err *err)
{
    *out = NULL;
    if (m->ken) /* a KenLM binary (glm_kenlm.c): no device copy of its hash tables */
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "a KenLM binary is scored on the CPU only");
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
    cudaFree(g->d_qrec);
    cudaFree(g->d_qbins);
    cudaFree(g->d_qbase);
    cudaFree(g->d_rows);
    cudaFree(g->d_prob);
    cudaFree(g->d_len);
    cudaFreeHost(g->h_sin);
    cudaFreeHost(g->h_sout);
    cudaFree(g->d_sin);
    cudaFree(g->d_sout);
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

/* ---------------------------------------------------------------- states */

#define SIN_BYTES (sizeof(glm_state) + sizeof(glm_word))         /* per query, in-block */
#define SOUT_BYTES (sizeof(glm_state) + sizeof(float) + 1)       /* per query, out-block */

static int reserve_states(glm_gpu *g, size_t n, smt_err *err)
{
    if (n <= g->scap)
        return 0;
    if (n > ((size_t)1 << 40) / SOUT_BYTES)
        return smt_err_set(err, SMT_ERR_ARG, "batch of %zu queries is too large", n);
    size_t cap = g->scap ? g->scap : 1024;
    while (cap < n)
        cap *= 2;
    CK(cudaFreeHost(g->h_sin));
    CK(cudaFreeHost(g->h_sout));
    CK(cudaFree(g->d_sin));
    CK(cudaFree(g->d_sout));
    g->h_sin = g->h_sout = g->d_sin = g->d_sout = NULL;
    g->scap = 0;
    CK(cudaMallocHost((void **)&g->h_sin, cap * SIN_BYTES));
    CK(cudaMallocHost((void **)&g->h_sout, cap * SOUT_BYTES));
    CK(cudaMalloc((void **)&g->d_sin, cap * SIN_BYTES));
    CK(cudaMalloc((void **)&g->d_sout, cap * SOUT_BYTES));
    g->scap = cap;
    return 0;
}

template <int G>
static void launch_states(glm_gpu *g, dim3 grid, dim3 block, size_t n)
{
    size_t S = g->scap * sizeof(glm_state);
    score_states_kernel<G><<<grid, block, 0, g->stream>>>(
        g->lay, (const glm_state *)g->d_sin, (const glm_word *)(g->d_sin + S), n,
        (glm_state *)g->d_sout, (float *)(g->d_sout + S), (uint8_t *)(g->d_sout + S + 4 * g->scap));
}

extern "C" int glm_gpu_states_start(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                                    smt_err *err)
{
    if (g->s_active)
        return smt_err_set(err, SMT_ERR_ARG, "a batch of states is in flight: finish it first");
    int rc = glm_states_check(g->lay.order, g->vocab, in, w, n, err);
    if (rc || (rc = reserve_states(g, n, err)))
        return rc;
    g->s_n = n;
    g->s_active = 1;
    if (n == 0)
        return 0;
    size_t S = g->scap * sizeof(glm_state);
    memcpy(g->h_sin, in, n * sizeof(glm_state));
    memcpy(g->h_sin + S, w, n * sizeof(glm_word));
    g->s_active = 0; /* until everything is queued */
    CK(cudaMemcpyAsync(g->d_sin, g->h_sin, n * sizeof(glm_state), cudaMemcpyHostToDevice,
                       g->stream));
    CK(cudaMemcpyAsync(g->d_sin + S, g->h_sin + S, n * sizeof(glm_word), cudaMemcpyHostToDevice,
                       g->stream));
    unsigned G = g->lanes;
    size_t blocks = (n * G + BLOCK_THREADS - 1) / BLOCK_THREADS;
    if (blocks > 0x7fffffffu)
        return smt_err_set(err, SMT_ERR_ARG, "batch of %zu queries is too large", n);
    dim3 grid((unsigned)blocks), block(BLOCK_THREADS);
    switch (G) {
    case 1: launch_states<1>(g, grid, block, n); break;
    case 4: launch_states<4>(g, grid, block, n); break;
    case 8: launch_states<8>(g, grid, block, n); break;
    case 16: launch_states<16>(g, grid, block, n); break;
    default: launch_states<32>(g, grid, block, n); break;
    }
    CK(cudaGetLastError());
    CK(cudaMemcpyAsync(g->h_sout, g->d_sout, n * sizeof(glm_state), cudaMemcpyDeviceToHost,
                       g->stream));
    CK(cudaMemcpyAsync(g->h_sout + S, g->d_sout + S, n * sizeof(float), cudaMemcpyDeviceToHost,
                       g->stream));
    CK(cudaMemcpyAsync(g->h_sout + S + 4 * g->scap, g->d_sout + S + 4 * g->scap, n,
                       cudaMemcpyDeviceToHost, g->stream));
    g->s_active = 1;
    return 0;
}

extern "C" int glm_gpu_states_finish(glm_gpu *g, float *prob, glm_state *out, uint8_t *len,
                                     smt_err *err)
{
    if (!g->s_active)
        return smt_err_set(err, SMT_ERR_ARG, "no batch of states in flight");
    g->s_active = 0;
    size_t n = g->s_n;
    if (n == 0)
        return 0;
    CK(cudaStreamSynchronize(g->stream));
    size_t S = g->scap * sizeof(glm_state);
    memcpy(out, g->h_sout, n * sizeof(glm_state));
    memcpy(prob, g->h_sout + S, n * sizeof(float));
    if (len)
        memcpy(len, g->h_sout + S + 4 * g->scap, n);
    return 0;
}

extern "C" int glm_gpu_score_states(glm_gpu *g, const glm_state *in, const glm_word *w, size_t n,
                                    float *prob, glm_state *out, uint8_t *len, smt_err *err)
{
    int rc = glm_gpu_states_start(g, in, w, n, err);
    if (rc)
        return rc;
    return glm_gpu_states_finish(g, prob, out, len, err);
}
