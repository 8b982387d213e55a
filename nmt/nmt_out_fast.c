/* nmt_out_fast.c — the CPU backend's output layer: the fused pass of nmt_out.c eight entries at a
 * time, with a vectorized exp (Cody–Waite range reduction and a degree-6 polynomial, relative error
 * about 2e-7), an AVX2 clone where the CPU has it, and the k-best test done once per block of 8
 * against the block's maximum. Same results as the reference up to rounding in the sum: the k-best
 * ids are identical (they depend on the raw values only). */
#include <math.h>
#include <string.h>

#include "nmt_out_fast.h"
#include "nmt_out_impl.h"

typedef float v8f __attribute__((vector_size(32)));
typedef int32_t v8i __attribute__((vector_size(32)));


/* Lane-wise select: m ? a : b (m lanes are all ones or all zeros). */
#define VSEL(m, a, b) ((v8f)(((v8i)(a) & (m)) | ((v8i)(b) & ~(m))))

/* exp(x) in place for x <= 0 (the callers subtract the running maximum); below -87 it gives 0.
 * Vectors travel by pointer: passing them by value would change the ABI between the clones. */
static inline void vexp_neg(v8f *px)
{
    const v8f zero = {0};
    v8f x = *px;
    v8i under = x < zero - 87.0f; /* also true for -inf */
    x = VSEL(under, zero - 87.0f, x);
    const v8f magic = zero + 12582912.0f; /* 1.5 * 2^23: adding it rounds to an integer */
    v8f t = x * 1.44269504088896341f + magic;
    v8i n = (v8i)t - (v8i)magic;
    v8f r = t - magic;
    v8f f = x - r * 0.693145751953125f - r * 1.42860682030941723212e-6f;
    v8f p = zero + 1.0f / 720.0f;
    p = p * f + 1.0f / 120.0f;
    p = p * f + 1.0f / 24.0f;
    p = p * f + 1.0f / 6.0f;
    p = p * f + 0.5f;
    p = p * f + 1.0f;
    p = p * f + 1.0f;
    v8f scale = (v8f)((n + 127) << 23);
    *px = VSEL(under, zero, p * scale);
}

static inline float hmax8(const v8f *v)
{
    float m = (*v)[0];
    for (int i = 1; i < 8; i++)
        m = (*v)[i] > m ? (*v)[i] : m;
    return m;
}

static inline float hsum8(const v8f *v)
{
    const v8f a = *v;
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

NMT_CLONES
static void row_pass(const float *x, const float *bias, int V, int k, int need_sum, float *m_out,
                     float *s_out, float *kv, int32_t *kid)
{
    float m = -INFINITY, s = 0.0f;
    const v8f ninf = {-INFINITY, -INFINITY, -INFINITY, -INFINITY,
                      -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    int i = 0;
    for (; i + 8 <= V; i += 8) {
        v8f v0, b;
        memcpy(&v0, x + i, sizeof v0);
        if (bias) {
            memcpy(&b, bias + i, sizeof b);
            v0 += b;
        }
        v8f v = VSEL(v0 == v0, v0, ninf); /* NaN counts as -inf in the sum, as in nmt_ms_add */
        float bm = hmax8(&v);
        if (!(bm > -INFINITY)) {
            if (k && kid[k - 1] == NMT_NO_ID) /* -inf entries still fill empty k-best slots */
                for (int j = 0; j < 8; j++)
                    nmt_kb_push(kv, kid, k, v0[j], i + j);
            continue;
        }
        if (need_sum) {
            if (bm > m) {
                s *= expf(m - bm);
                m = bm;
            }
            v8f e = v - m;
            vexp_neg(&e);
            s += hsum8(&e);
        }
        if (k && bm >= kv[k - 1]) /* nothing in the block can enter otherwise */
            for (int j = 0; j < 8; j++)
                nmt_kb_push(kv, kid, k, v0[j], i + j);
    }
    for (; i < V; i++) {
        float v = bias ? x[i] + bias[i] : x[i];
        if (need_sum)
            nmt_ms_add(&m, &s, v);
        if (k)
            nmt_kb_push(kv, kid, k, v, i);
    }
    *m_out = m;
    *s_out = s;
}

void nmt_out_topk_fast(const float *x, const float *bias, int V, int k, float *val, int32_t *ids,
                       float *lse)
{
    float m, s, kv[NMT_MAX_K];
    nmt_kb_init(kv, ids, k);
    row_pass(x, bias, V, k, 1, &m, &s, kv, ids);
    float l = nmt_ms_lse(m, s);
    *lse = l;
    for (int j = 0; j < k; j++)
        val[j] = nmt_logprob(kv[j], l);
}

float nmt_out_gather_fast(const float *x, const float *bias, int V, int32_t id)
{
    float m, s;
    row_pass(x, bias, V, 0, 1, &m, &s, NULL, NULL);
    if (id < 0 || id >= V)
        return -INFINITY;
    return nmt_logprob(bias ? x[id] + bias[id] : x[id], nmt_ms_lse(m, s));
}
