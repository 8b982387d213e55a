/* nmt_cpu.c — the CPU backend: the readable reference of every operation, spread over the context's
 * thread pool where the work is large enough to pay for it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_internal.h"
#include "nmt_out_fast.h"

/* ---- linear: y(N,out) = x(N,in) WT(in,out) + b ---- */

enum { LIN_ROWS = 8, LIN_COLS = 256, TILE_R = 4, TILE_C = 16 };

typedef struct lin_job {
    const float *x;
    const nmt_linear *l;
    float *y;
    int N, relu, col_tiles;
} lin_job;

/* A TILE_R x TILE_C block of outputs kept in registers while the whole input dimension streams
 * by: each weight load serves four rows and each input load sixteen columns. Fixed trip counts let
 * the compiler unroll and vectorize; the sum over the input runs in order, as in the generic loop,
 * so every path gives the same result bit for bit. */
/* GCC vector extension (allowed in ISO C mode): eight floats, lowered to two SSE registers on CPUs
 * without AVX. */
typedef float v8f __attribute__((vector_size(32)));

/* AVX2 where the CPU has it (see NMT_CLONES in nmt_out_fast.h). */
NMT_CLONES
static void lin_tile(const float *restrict x, int in, const float *restrict wt, int out, int nr,
                     float out_acc[TILE_R][TILE_C])
{
    /* eight vector accumulators (four rows x two halves) stay in registers */
    v8f a00 = {0}, a01 = {0}, a10 = {0}, a11 = {0}, a20 = {0}, a21 = {0}, a30 = {0}, a31 = {0};
    const float *x0 = x, *x1 = nr > 1 ? x + in : x, *x2 = nr > 2 ? x + 2 * (size_t)in : x,
                *x3 = nr > 3 ? x + 3 * (size_t)in : x;
    for (int i = 0; i < in; i++) {
        const float *w = wt + (size_t)i * out;
        v8f w0, w1;
        memcpy(&w0, w, sizeof w0); /* unaligned loads */
        memcpy(&w1, w + 8, sizeof w1);
        v8f b0 = x0[i] - (v8f){0}, b1 = x1[i] - (v8f){0}, b2 = x2[i] - (v8f){0},
            b3 = x3[i] - (v8f){0};
        a00 += b0 * w0, a01 += b0 * w1;
        a10 += b1 * w0, a11 += b1 * w1;
        a20 += b2 * w0, a21 += b2 * w1;
        a30 += b3 * w0, a31 += b3 * w1;
    }
    memcpy(out_acc[0], &a00, 32), memcpy(out_acc[0] + 8, &a01, 32);
    memcpy(out_acc[1], &a10, 32), memcpy(out_acc[1] + 8, &a11, 32);
    memcpy(out_acc[2], &a20, 32), memcpy(out_acc[2] + 8, &a21, 32);
    memcpy(out_acc[3], &a30, 32), memcpy(out_acc[3] + 8, &a31, 32);
}

/* Rows [r0, r0+LIN_ROWS) and columns [c0, c0+LIN_COLS) of y: full column tiles go through
 * lin_tile, a ragged right edge through the plain loop. */
static void lin_task(void *ctx, size_t task, unsigned worker)
{
    (void)worker;
    const lin_job *j = ctx;
    const nmt_linear *l = j->l;
    int r0 = (int)(task / (size_t)j->col_tiles) * LIN_ROWS;
    int c0 = (int)(task % (size_t)j->col_tiles) * LIN_COLS;
    int nr_all = j->N - r0 < LIN_ROWS ? j->N - r0 : LIN_ROWS;
    int nc = l->out - c0 < LIN_COLS ? l->out - c0 : LIN_COLS;
    float acc[TILE_R][TILE_C];
    for (int rr = 0; rr < nr_all; rr += TILE_R) {
        int nr = nr_all - rr < TILE_R ? nr_all - rr : TILE_R;
        const float *x = j->x + (size_t)(r0 + rr) * l->in;
        int c = 0;
        for (; c + TILE_C <= nc; c += TILE_C) {
            lin_tile(x, l->in, l->wt + c0 + c, l->out, nr, acc);
            for (int r = 0; r < nr; r++) {
                float *y = j->y + (size_t)(r0 + rr + r) * l->out + c0 + c;
                for (int k = 0; k < TILE_C; k++) {
                    float v = acc[r][k] + (l->b ? l->b[c0 + c + k] : 0.0f);
                    y[k] = j->relu && v < 0.0f ? 0.0f : v;
                }
            }
        }
        for (int r = 0; r < nr; r++) /* the ragged edge */
            for (int k = c; k < nc; k++) {
                float v = 0.0f;
                for (int i = 0; i < l->in; i++)
                    v += x[(size_t)r * l->in + i] * l->wt[(size_t)i * l->out + c0 + k];
                v += l->b ? l->b[c0 + k] : 0.0f;
                j->y[(size_t)(r0 + rr + r) * l->out + c0 + k] = j->relu && v < 0.0f ? 0.0f : v;
            }
    }
}

void nmt_cpu_linear(smt_pool *pool, const float *x, int N, const nmt_linear *l, float *y, int relu)
{
    lin_job j = {x, l, y, N, relu, (l->out + LIN_COLS - 1) / LIN_COLS};
    size_t tasks = (size_t)((N + LIN_ROWS - 1) / LIN_ROWS) * (size_t)j.col_tiles;
    smt_pool_run(pool, tasks, lin_task, &j);
}

static void *cpu_alloc(nmt_ctx *c, size_t bytes)
{
    (void)c;
    return malloc(bytes ? bytes : 1);
}

static void cpu_release(nmt_ctx *c, void *p)
{
    (void)c;
    free(p);
}

static void cpu_linear(nmt_ctx *c, const float *x, int N, const nmt_linear *l, float *y, int relu)
{
    nmt_cpu_linear(c->pool, x, N, l, y, relu);
}

static void cpu_layernorm(nmt_ctx *c, const float *x, int N, int d, const nmt_norm *n, float eps,
                          float *y)
{
    (void)c;
    for (int r = 0; r < N; r++) {
        const float *xr = x + (size_t)r * d;
        float *yr = y + (size_t)r * d;
        float mean = 0.0f, var = 0.0f;
        for (int i = 0; i < d; i++)
            mean += xr[i];
        mean /= (float)d;
        for (int i = 0; i < d; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        float inv = 1.0f / sqrtf(var / (float)d + eps); /* biased variance, as PyTorch */
        for (int i = 0; i < d; i++)
            yr[i] = (xr[i] - mean) * inv * n->g[i] + n->b[i];
    }
}

static void cpu_add(nmt_ctx *c, float *y, const float *x, size_t n)
{
    (void)c;
    for (size_t i = 0; i < n; i++)
        y[i] += x[i];
}

static void cpu_embed(nmt_ctx *c, const float *table, const int32_t *ids, const int *pos, int R,
                      int d, float *out)
{
    (void)c;
    float scale = sqrtf((float)d);
    for (int r = 0; r < R; r++) {
        const float *e = table + (size_t)ids[r] * d;
        float *o = out + (size_t)r * d;
        for (int i = 0; i < d; i += 2) {
            /* the trainer's table: angle = pos / 10000^(i/d), sin on even and cos on odd columns */
            float ang = (float)pos[r] / powf(10000.0f, (float)i / (float)d);
            o[i] = e[i] * scale + sinf(ang);
            o[i + 1] = e[i + 1] * scale + cosf(ang);
        }
    }
}

typedef struct att_job {
    const float *q, *k, *v;
    const int64_t *koff;
    const int *klen;
    float *out;
    int d, H;
    float *scratch; /* per worker: the longest key list */
    int scratch_len;
} att_job;

static void att_task(void *ctx, size_t task, unsigned worker)
{
    const att_job *j = ctx;
    int r = (int)task, d = j->d, dh = d / j->H, L = j->klen[r];
    float *p = j->scratch + (size_t)worker * (size_t)j->scratch_len;
    float scale = 1.0f / sqrtf((float)dh);
    const float *K = j->k + j->koff[r], *Vv = j->v + j->koff[r];
    for (int h = 0; h < j->H; h++) {
        const float *q = j->q + (size_t)r * d + h * dh;
        float m = -INFINITY;
        for (int t = 0; t < L; t++) {
            const float *kt = K + (size_t)t * d + h * dh;
            float s = 0.0f;
            for (int i = 0; i < dh; i++)
                s += q[i] * kt[i];
            p[t] = s * scale;
            if (p[t] > m)
                m = p[t];
        }
        float sum = 0.0f;
        for (int t = 0; t < L; t++) {
            p[t] = expf(p[t] - m);
            sum += p[t];
        }
        float *o = j->out + (size_t)r * d + h * dh;
        for (int i = 0; i < dh; i++)
            o[i] = 0.0f;
        for (int t = 0; t < L; t++) {
            const float *vt = Vv + (size_t)t * d + h * dh;
            float w = p[t] / sum;
            for (int i = 0; i < dh; i++)
                o[i] += w * vt[i];
        }
    }
}

static void cpu_attention(nmt_ctx *c, const float *q, int R, int d, int H, const float *k,
                          const float *v, const int64_t *koff, const int *klen, float *out)
{
    int maxlen = 1;
    for (int r = 0; r < R; r++)
        if (klen[r] > maxlen)
            maxlen = klen[r];
    unsigned nw = smt_pool_size(c->pool);
    float *scratch = malloc((size_t)nw * (size_t)maxlen * sizeof *scratch);
    if (!scratch) {
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory in attention");
        return;
    }
    att_job j = {q, k, v, koff, klen, out, d, H, scratch, maxlen};
    smt_pool_run(c->pool, (size_t)R, att_task, &j);
    free(scratch);
}

static void cpu_scatter_rows(nmt_ctx *c, float *dst, const int64_t *off, const float *src, int R,
                             int d)
{
    (void)c;
    for (int r = 0; r < R; r++)
        memcpy(dst + off[r], src + (size_t)r * d, (size_t)d * sizeof(float));
}

static void cpu_gather_rows(nmt_ctx *c, float *dst, const float *src, const int *idx, int R, size_t n,
                            size_t stride)
{
    (void)c;
    for (int r = 0; r < R; r++)
        memmove(dst + (size_t)r * stride, src + (size_t)idx[r] * stride, n * sizeof(float));
}

typedef struct out_job {
    const float *x, *bias;
    int V, k, mode;
    float *val, *lse;
    int32_t *ids;
    const int32_t *gather_ids;
} out_job;

/* The output layer spreads rows over the workers; each row is one fused pass. */
static void out_task(void *ctx, size_t task, unsigned worker)
{
    (void)worker;
    const out_job *j = ctx;
    int b = (int)task;
    const float *x = j->x + (size_t)b * j->V;
    if (j->mode == 0)
        nmt_out_topk_fast(x, j->bias, j->V, j->k, j->val + (size_t)b * j->k,
                          j->ids + (size_t)b * j->k, j->lse + b);
    else if (j->mode == 1)
        nmt_out_argmax(x, j->bias, 1, j->V, j->ids + b, NULL);
    else
        j->val[b] = nmt_out_gather_fast(x, j->bias, j->V, j->gather_ids[b]);
}

static void cpu_topk(nmt_ctx *c, const float *x, const float *bias, int R, int V, int k, float *val,
                     int32_t *ids, float *lse)
{
    out_job j = {x, bias, V, k, 0, val, lse, ids, NULL};
    smt_pool_run(c->pool, (size_t)R, out_task, &j);
}

static void cpu_argmax(nmt_ctx *c, const float *x, const float *bias, int R, int V, int32_t *ids)
{
    out_job j = {x, bias, V, 1, 1, NULL, NULL, ids, NULL};
    smt_pool_run(c->pool, (size_t)R, out_task, &j);
}

static void cpu_gather_logprob(nmt_ctx *c, const float *x, const float *bias, int R, int V,
                               const int32_t *ids, float *logprob)
{
    out_job j = {x, bias, V, 1, 2, logprob, NULL, NULL, ids};
    smt_pool_run(c->pool, (size_t)R, out_task, &j);
}

static void cpu_download(nmt_ctx *c, float *dst, const float *src, size_t n)
{
    (void)c;
    memcpy(dst, src, n * sizeof(float));
}

const nmt_ops nmt_cpu_ops = {cpu_alloc,       cpu_release, cpu_linear,    cpu_layernorm,
                             cpu_add,         cpu_embed,   cpu_attention, cpu_scatter_rows,
                             cpu_gather_rows, cpu_topk,    cpu_argmax,    cpu_gather_logprob,
                             cpu_download,    cpu_download};
