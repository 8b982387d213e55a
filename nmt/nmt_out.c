/* nmt_out.c — the output layer on the CPU: the readable reference of the CUDA kernels and the path
 * the CPU backend runs. Shapes: x is (B,V) logits without bias, bias is (V). */
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "nmt_out_impl.h"

static inline float biased(const float *x, const float *bias, int i)
{
    return bias ? x[i] + bias[i] : x[i];
}

/* One shard [lo,hi) of one row: running max/sum and its k best (seed 000, algorithm 4). */
static void shard_pass(const float *x, const float *bias, int lo, int hi, int k, float *m, float *s,
                       float *val, int32_t *id)
{
    *m = -INFINITY;
    *s = 0.0f;
    nmt_kb_init(val, id, k);
    for (int i = lo; i < hi; i++) {
        float v = biased(x, bias, i);
        nmt_ms_add(m, s, v);
        nmt_kb_push(val, id, k, v, i);
    }
}

void nmt_out_topk(const float *x, const float *bias, int B, int V, int k, int n_shards, float *val,
                  int32_t *ids, float *lse)
{
    if (n_shards < 1)
        n_shards = 1;
    if (n_shards > V)
        n_shards = V > 0 ? V : 1;
    float sv[NMT_MAX_K];
    int32_t si[NMT_MAX_K];
    for (int b = 0; b < B; b++) {
        const float *row = x + (size_t)b * V;
        float m = -INFINITY, s = 0.0f, kv[NMT_MAX_K];
        int32_t *kid = ids + (size_t)b * k;
        nmt_kb_init(kv, kid, k);
        /* algorithm 6: per-shard k-best, then a reduction of the shards' lists */
        for (int sh = 0; sh < n_shards; sh++) {
            int lo = (int)((int64_t)V * sh / n_shards), hi = (int)((int64_t)V * (sh + 1) / n_shards);
            float pm, ps;
            shard_pass(row, bias, lo, hi, k, &pm, &ps, sv, si);
            nmt_ms_merge(&m, &s, pm, ps);
            for (int j = 0; j < k && si[j] != NMT_NO_ID; j++)
                nmt_kb_push(kv, kid, k, sv[j], si[j]);
        }
        float l = nmt_ms_lse(m, s);
        if (lse)
            lse[b] = l;
        if (val)
            for (int j = 0; j < k; j++)
                val[(size_t)b * k + j] = nmt_logprob(kv[j], l);
    }
}

void nmt_out_topk_unfused(const float *x, const float *bias, int B, int V, int k, float *tmp,
                          float *val, int32_t *ids, float *lse)
{
    size_t n = (size_t)B * V;
    for (size_t i = 0; i < n; i++) /* pass 1: add the bias */
        tmp[i] = bias ? x[i] + bias[i % (size_t)V] : x[i];
    for (int b = 0; b < B; b++) {
        float *row = tmp + (size_t)b * V;
        float m = -INFINITY, s = 0.0f;
        for (int i = 0; i < V; i++) /* pass 2: max */
            if (row[i] > m)
                m = row[i];
        if (m > -INFINITY)
            for (int i = 0; i < V; i++) /* pass 3: sum */
                s += expf(row[i] - m);
        float l = m > -INFINITY ? m + logf(s) : -INFINITY;
        for (int i = 0; i < V && m > -INFINITY; i++) /* pass 4: log-softmax in place */
            row[i] -= l;
        float kv[NMT_MAX_K];
        int32_t *kid = ids + (size_t)b * k;
        nmt_kb_init(kv, kid, k);
        for (int i = 0; i < V; i++) /* pass 5: k-best */
            nmt_kb_push(kv, kid, k, row[i], i);
        if (lse)
            lse[b] = l;
        if (val)
            memcpy(val + (size_t)b * k, kv, (size_t)k * sizeof *kv);
    }
}

void nmt_out_argmax(const float *x, const float *bias, int B, int V, int32_t *ids, float *val)
{
    /* seed 000, algorithm 5: when only the best word is needed the softmax is monotone and can go */
    for (int b = 0; b < B; b++) {
        const float *row = x + (size_t)b * V;
        float bv = -INFINITY;
        int32_t bi = NMT_NO_ID;
        for (int i = 0; i < V; i++) {
            float v = biased(row, bias, i);
            if (v == v && nmt_better(v, i, bv, bi))
                bv = v, bi = i;
        }
        ids[b] = bi;
        if (val)
            val[b] = bv;
    }
}

void nmt_out_gather(const float *x, const float *bias, int B, int V, const int32_t *ids,
                    float *logprob)
{
    for (int b = 0; b < B; b++) {
        const float *row = x + (size_t)b * V;
        float m = -INFINITY, s = 0.0f;
        for (int i = 0; i < V; i++)
            nmt_ms_add(&m, &s, biased(row, bias, i));
        int32_t id = ids[b];
        logprob[b] = id >= 0 && id < V ? nmt_logprob(biased(row, bias, id), nmt_ms_lse(m, s))
                                        : -INFINITY;
    }
}
