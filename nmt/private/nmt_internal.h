/* nmt_internal.h — the model in memory, the backend operation table and the context (private).
 *
 * Weights are kept transposed: a linear layer y = x W^T + b stores WT (in,out) row-major, so the CPU
 * inner loop runs along `out` (vectorizes without -ffast-math) and cuBLAS reads it as a column-major
 * (out,in) matrix without a transpose flag. */
#ifndef NMT_INTERNAL_H
#define NMT_INTERNAL_H

#include <stdint.h>

#include "nmt.h"
#include "smt_threads.h"
#include "smt_vocab.h"

typedef struct nmt_linear {
    float *wt; /* (in,out) */
    float *b;  /* (out) */
    int in, out;
} nmt_linear;

typedef struct nmt_norm {
    float *g, *b; /* (d) */
} nmt_norm;

typedef struct nmt_enc_layer {
    nmt_norm ln1, ln2;
    nmt_linear q, k, v, o, ff1, ff2;
} nmt_enc_layer;

typedef struct nmt_dec_layer {
    nmt_norm ln1, ln2, ln3;
    nmt_linear sq, sk, sv, so; /* self-attention */
    nmt_linear cq, ck, cv, co; /* cross-attention */
    nmt_linear ff1, ff2;
} nmt_dec_layer;

/* The tensors of a model; pointers into one arena (host) or device memory (CUDA copy). */
typedef struct nmt_weights {
    float *src_embed, *tgt_embed; /* (Vs,d), (Vt,d) */
    nmt_enc_layer *enc;
    nmt_dec_layer *dec;
    nmt_norm enc_ln, dec_ln;
    nmt_linear out; /* (d,Vt) transposed projection and bias (Vt) */
} nmt_weights;

/* A shortlist in CSR form by source id: targets of word w are tgt[off[w] .. off[w+1]). */
struct nmt_shortlist {
    int frequent;
    int *off;
    int32_t *tgt;
};

struct nmt_model {
    nmt_config cfg;
    nmt_weights w;
    float *arena; /* every host tensor */
    size_t arena_floats;
    smt_vocab_builder *src_vocab, *tgt_vocab; /* tgt_vocab == src_vocab when shared */
    char **tgt_words;
};

/* ---- backend operations: every array argument lives in the backend's memory ----
 * A linear layer whose b is NULL adds no bias (the output layer adds it in its fused pass). */
typedef struct nmt_ops {
    void *(*alloc)(nmt_ctx *c, size_t bytes);
    void (*release)(nmt_ctx *c, void *p);
    /* y(N,out) = x(N,in) WT + b, optionally followed by ReLU */
    void (*linear)(nmt_ctx *c, const float *x, int N, const nmt_linear *l, float *y, int relu);
    /* y(N,d) = LayerNorm(x) * g + b */
    void (*layernorm)(nmt_ctx *c, const float *x, int N, int d, const nmt_norm *n, float eps,
                      float *y);
    /* y(n) += x(n) */
    void (*add)(nmt_ctx *c, float *y, const float *x, size_t n);
    /* out(R,d) = table[ids[r]] * sqrt(d) + sinusoid(pos[r]); ids and pos are host arrays */
    void (*embed)(nmt_ctx *c, const float *table, const int32_t *ids, const int *pos, int R, int d,
                  float *out);
    /* For each query row r: attention of q[r] (heads of d/H) over klen[r] keys at k + koff[r] and
     * values at v + koff[r] (rows of stride d); out (R,d). koff and klen are host arrays. */
    void (*attention)(nmt_ctx *c, const float *q, int R, int d, int H, const float *k,
                      const float *v, const int64_t *koff, const int *klen, float *out);
    /* dst + off[r] (d floats) = src row r, for r < R; off is a host array */
    void (*scatter_rows)(nmt_ctx *c, float *dst, const int64_t *off, const float *src, int R,
                         int d);
    /* dst + r*stride (n floats) = src + idx[r]*stride, for r < R; idx is a host array */
    void (*gather_rows)(nmt_ctx *c, float *dst, const float *src, const int *idx, int R, size_t n,
                        size_t stride);
    /* Output layer over logits (R,V) without bias; results land in host arrays. */
    void (*topk)(nmt_ctx *c, const float *x, const float *bias, int R, int V, int k, float *val,
                 int32_t *ids, float *lse);
    void (*argmax)(nmt_ctx *c, const float *x, const float *bias, int R, int V, int32_t *ids);
    void (*gather_logprob)(nmt_ctx *c, const float *x, const float *bias, int R, int V,
                           const int32_t *ids, float *logprob);
    /* copies n floats from backend memory to the host, and from the host to backend memory */
    void (*download)(nmt_ctx *c, float *dst, const float *src, size_t n);
    void (*upload)(nmt_ctx *c, float *dst, const float *src, size_t n);
} nmt_ops;

struct nmt_ctx {
    const nmt_model *m;
    const nmt_ops *ops;
    const nmt_weights *w; /* host weights, or the device copy */
    nmt_backend backend;
    smt_pool *pool;
    int max_batch;
    int no_sharing; /* nmt_ctx_options.no_sharing */
    void *cuda; /* nmt_cuda_state (CUDA backend) */
    smt_err *err; /* sticky error of the current call (CUDA failures) */
    int failed;
};

extern const nmt_ops nmt_cpu_ops;

/* CUDA backend (nmt_cuda.cu); stubs return SMT_ERR_UNSUPPORTED when built without CUDA. */
int nmt_cuda_ctx_init(nmt_ctx *c, int device, smt_err *err);
void nmt_cuda_ctx_free(nmt_ctx *c);

/* Multithreaded CPU helpers (nmt_cpu.c). */
void nmt_cpu_linear(smt_pool *pool, const float *x, int N, const nmt_linear *l, float *y, int relu);

#endif
