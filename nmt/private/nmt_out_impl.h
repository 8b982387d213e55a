/* nmt_out_impl.h — the arithmetic of the output layer, shared by the CPU reference (nmt_out.c) and
 * the CUDA kernels (nmt_cuda.cu) so that both break ties and treat -inf the same way (private).
 *
 * Online softmax (Milakov & Gimelshein 2018; seed 000, algorithm 4): a running max m and the sum s of
 * exp(v - m), rescaled whenever m grows, so max, sum and k-best need one read of the row. Partial
 * results of shards merge associatively, which is what lets threads and blocks split a row. */
#ifndef NMT_OUT_IMPL_H
#define NMT_OUT_IMPL_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define NMT_HD __host__ __device__ __forceinline__
#else
#define NMT_HD static inline
#endif

/* An id that sorts after every real one: fills k-best slots that no entry has claimed. */
#define NMT_NO_ID INT32_MAX

/* True when (v1,i1) ranks before (v2,i2): larger value, then smaller id. */
NMT_HD int nmt_better(float v1, int32_t i1, float v2, int32_t i2)
{
    return v1 > v2 || (v1 == v2 && i1 < i2);
}

/* Adds v to the running (max, sum); -inf and NaN contribute nothing. */
NMT_HD void nmt_ms_add(float *m, float *s, float v)
{
    if (!(v > -INFINITY))
        return;
    if (v > *m) {
        *s = *s * expf(*m - v) + 1.0f;
        *m = v;
    } else {
        *s += expf(v - *m);
    }
}

/* Merges (m2,s2) into (m,s). */
NMT_HD void nmt_ms_merge(float *m, float *s, float m2, float s2)
{
    if (!(m2 > -INFINITY))
        return;
    if (!(*m > -INFINITY)) {
        *m = m2;
        *s = s2;
        return;
    }
    float mx = *m > m2 ? *m : m2;
    *s = *s * expf(*m - mx) + s2 * expf(m2 - mx);
    *m = mx;
}

/* log-sum-exp from (m,s); -inf for an empty row. */
NMT_HD float nmt_ms_lse(float m, float s) { return m > -INFINITY ? m + logf(s) : -INFINITY; }

/* The log-probability of a logit v in a row with log-sum-exp lse. A row whose logits are all -inf
 * has no distribution: its words get -inf, never the NaN of -inf - -inf, which would poison every
 * score it is added to. */
NMT_HD float nmt_logprob(float v, float lse) { return lse > -INFINITY ? v - lse : -INFINITY; }

/* Resets a k-best list (sorted best first) to k empty slots. */
NMT_HD void nmt_kb_init(float *val, int32_t *id, int k)
{
    for (int j = 0; j < k; j++) {
        val[j] = -INFINITY;
        id[j] = NMT_NO_ID;
    }
}

/* Offers (v,i) to a sorted k-best list; NaN never enters. */
NMT_HD void nmt_kb_push(float *val, int32_t *id, int k, float v, int32_t i)
{
    if (v != v || !nmt_better(v, i, val[k - 1], id[k - 1]))
        return;
    int j = k - 1;
    while (j > 0 && nmt_better(v, i, val[j - 1], id[j - 1])) {
        val[j] = val[j - 1];
        id[j] = id[j - 1];
        j--;
    }
    val[j] = v;
    id[j] = i;
}

#endif
