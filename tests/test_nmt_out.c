/* test_nmt_out.c — the output-layer kernels: the fused CPU pass against a naive reference and the
 * unfused passes, sharded against unsharded, and every CUDA kernel against its CPU twin on awkward
 * sizes (vocabulary not a multiple of the block, k > 1, ties, -inf entries), with exact ids.
 * GPU cases skip without a device. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "nmt_cuda.h"
#include "nmt_out_fast.h"

#define CLOSE(got, ref, a, r) (fabsf((got) - (ref)) <= (a) + (r)*fabsf(ref) || (got) == (ref))

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)(rng >> 40) / (float)(1u << 24);
}

/* Logits with structure that trips kernels: exact ties (a quantized copy of values), -inf
 * entries, large outliers, and optionally a row that is entirely -inf. */
static void fill(float *x, float *bias, int B, int V, int with_neg_inf_row)
{
    for (int i = 0; i < B * V; i++) {
        float u = frand();
        x[i] = (float)(int)(u * 64.0f) / 8.0f - 4.0f; /* quantized: many exact ties */
        if (u > 0.999f)
            x[i] = 30.0f + (float)(i % 3); /* outliers, tied by construction */
        if (u < 0.01f)
            x[i] = -INFINITY;
    }
    for (int i = 0; i < V; i++)
        bias[i] = (float)((i * 7) % 5) * 0.25f; /* exact in float: keeps ties tied */
    if (with_neg_inf_row)
        for (int i = 0; i < V; i++)
            x[(size_t)(B - 1) * V + i] = -INFINITY;
}

/* The naive reference: sort all (value, id) with the documented tie rule. */
static void naive_topk(const float *x, const float *bias, int V, int k, int32_t *ids, double *lse)
{
    double m = -INFINITY, s = 0;
    for (int i = 0; i < V; i++)
        m = fmax(m, (double)(x[i] + bias[i]));
    for (int i = 0; i < V && m > -INFINITY; i++)
        s += exp((double)(x[i] + bias[i]) - m);
    *lse = m > -INFINITY ? m + log(s) : -INFINITY;
    for (int j = 0; j < k; j++) {
        int best = -1;
        for (int i = 0; i < V; i++) {
            int used = 0;
            for (int p = 0; p < j; p++)
                used |= ids[p] == i;
            if (used)
                continue;
            float v = x[i] + bias[i];
            float bv = best < 0 ? 0 : x[best] + bias[best];
            if (best < 0 || v > bv)
                best = i;
        }
        ids[j] = best;
    }
}

static const int sizes[][3] = {{1, 1, 1},   {3, 7, 3},     {2, 255, 4},  {5, 257, 9},
                               {4, 1000, 1}, {3, 4099, 16}, {2, 33333, 9}, {1, 65537, 32}};

Test(nmt_out, fused_matches_naive_and_unfused)
{
    for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
        int B = sizes[c][0], V = sizes[c][1], k = sizes[c][2];
        float *x = malloc((size_t)B * V * 4), *bias = malloc((size_t)V * 4),
              *tmp = malloc((size_t)B * V * 4), *val = malloc((size_t)B * k * 4),
              *val2 = malloc((size_t)B * k * 4), lse[8], lse2[8];
        int32_t *ids = malloc((size_t)B * k * 4), *ids2 = malloc((size_t)B * k * 4), ref[64];
        fill(x, bias, B, V, B > 2);
        for (int shards = 1; shards <= 7; shards += 3) {
            nmt_out_topk(x, bias, B, V, k, shards, val, ids, lse);
            nmt_out_topk_unfused(x, bias, B, V, k, tmp, val2, ids2, lse2);
            for (int b = 0; b < B; b++) {
                double l;
                naive_topk(x + (size_t)b * V, bias, V, k, ref, &l);
                cr_assert(CLOSE(lse[b], (float)l, 1e-4f, 1e-5f), "V=%d row %d lse %g vs %g", V, b,
                          lse[b], l);
                cr_assert(CLOSE(lse2[b], (float)l, 1e-4f, 1e-5f));
                for (int j = 0; j < k; j++) {
                    int32_t id = ids[b * k + j];
                    if (isinf(l) && l < 0) /* all -inf: ids are the smallest ones, in order */
                        cr_assert_eq(id, j);
                    else
                        cr_assert_eq(id, ref[j], "B=%d V=%d k=%d shards=%d row %d rank %d: %d vs %d",
                                     B, V, k, shards, b, j, id, ref[j]);
                    if (isinf(l)) { /* an empty row: no distribution, every word gets -inf */
                        cr_assert(isinf(val[b * k + j]) && val[b * k + j] < 0, "empty row: %g",
                                  val[b * k + j]);
                        continue;
                    }
                    float want = x[(size_t)b * V + id] + bias[id] - lse[b];
                    cr_assert(CLOSE(val[b * k + j], want, 1e-5f, 1e-6f) ||
                              (isinf(want) && val[b * k + j] == want));
                    cr_assert(CLOSE(val2[b * k + j], want, 1e-4f, 1e-5f) || isinf(want));
                }
                cr_assert_arr_eq(ids + b * k, ids2 + b * k, (size_t)k * 4,
                                 "fused and unfused ids differ (V=%d row %d)", V, b);
            }
        }
        free(x), free(bias), free(tmp), free(val), free(val2), free(ids), free(ids2);
    }
}

/* The CPU backend's vectorized pass against the reference: identical ids, NaN skipped, -inf rows. */
Test(nmt_out, fast_cpu_path_matches_reference)
{
    for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
        int B = sizes[c][0], V = sizes[c][1], k = sizes[c][2];
        float *x = malloc((size_t)B * V * 4), *bias = malloc((size_t)V * 4), val[NMT_MAX_K],
              fval[NMT_MAX_K], lse, flse;
        int32_t ids[NMT_MAX_K], fids[NMT_MAX_K];
        fill(x, bias, B, V, B > 2);
        if (V > 20)
            x[13] = NAN;
        for (int b = 0; b < B; b++) {
            const float *row = x + (size_t)b * V;
            for (int withbias = 0; withbias < 2; withbias++) {
                const float *bb = withbias ? bias : NULL;
                nmt_out_topk(row, bb, 1, V, k, 1, val, ids, &lse);
                nmt_out_topk_fast(row, bb, V, k, fval, fids, &flse);
                cr_assert_arr_eq(fids, ids, (size_t)k * 4, "V=%d k=%d row %d bias %d", V, k, b,
                                 withbias);
                cr_assert(CLOSE(flse, lse, 1e-5f, 1e-6f), "lse %g vs %g", flse, lse);
                for (int j = 0; j < k && !isinf(lse); j++)
                    cr_assert(CLOSE(fval[j], val[j], 1e-5f, 1e-6f), "val %g vs %g", fval[j], val[j]);
                int32_t g = (b * 31 + 7) % V;
                float lp;
                nmt_out_gather(row, bb, 1, V, &g, &lp);
                float flp = nmt_out_gather_fast(row, bb, V, g);
                cr_assert(CLOSE(flp, lp, 1e-5f, 1e-6f) || flp == lp || (isnan(lp) && isnan(flp)),
                          "gather %g vs %g", flp, lp);
            }
        }
        free(x), free(bias);
    }
}

Test(nmt_out, argmax_and_gather)
{
    int B = 5, V = 3001;
    float *x = malloc((size_t)B * V * 4), bias[3001], val[5], lse[5], lp[5], best[5];
    int32_t ids[5], ids1[5], g[5] = {0, 17, 3000, 5, -1};
    fill(x, bias, B, V, 0);
    x[2 * V + 10] = 100.0f; /* a tie at the maximum: the smaller id wins */
    x[2 * V + 20] = 100.0f;
    nmt_out_argmax(x, bias, B, V, ids, best);
    nmt_out_topk(x, bias, B, V, 1, 3, val, ids1, lse);
    cr_assert_arr_eq(ids, ids1, sizeof ids);
    cr_expect(ids[2] == 10 || bias[20] > bias[10]);
    nmt_out_gather(x, bias, B, V, g, lp);
    for (int b = 0; b < 4; b++) {
        float want = x[(size_t)b * V + g[b]] + bias[g[b]] - lse[b];
        cr_assert(CLOSE(lp[b], want, 1e-5f, 1e-6f), "row %d: %g vs %g", b, lp[b], want);
    }
    cr_expect(isinf(lp[4]) && lp[4] < 0, "an out-of-range id has probability 0");
    free(x);
}

/* ---- GPU twins ---- */

static nmt_gpu *gpu_or_skip(void)
{
#ifndef NMT_HAVE_CUDA
    cr_skip_test("CUDA twin not run: this build has no CUDA backend (FASTSMT_CUDA=OFF or no nvcc)");
#else
    if (!nmt_cuda_available())
        cr_skip_test("CUDA twin not run: no CUDA device is visible");
#endif
    nmt_gpu *g = NULL;
    smt_err err;
    cr_assert_eq(nmt_gpu_create(&g, 0, &err), 0, "%s", err.msg);
    return g;
}

Test(nmt_out_gpu, topk_fused_and_unfused_match_cpu)
{
    nmt_gpu *g = gpu_or_skip();
    smt_err err;
    for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
        int B = sizes[c][0], V = sizes[c][1], k = sizes[c][2];
        float *x = malloc((size_t)B * V * 4), *bias = malloc((size_t)V * 4),
              *val = malloc((size_t)B * k * 4), *gval = malloc((size_t)B * k * 4), lse[8], glse[8];
        int32_t *ids = malloc((size_t)B * k * 4), *gids = malloc((size_t)B * k * 4);
        fill(x, bias, B, V, B > 2);
        nmt_out_topk(x, bias, B, V, k, 1, val, ids, lse);
        for (int mode = NMT_GPU_TOPK; mode <= NMT_GPU_TOPK_UNFUSED; mode++)
            for (int shards = 0; shards <= 5; shards += 5) {
                nmt_gpu_out_args a = {mode, x, bias, B, V, k, shards, NULL, gval, gids, glse};
                cr_assert_eq(nmt_gpu_outlayer(g, &a, &err), 0, "%s", err.msg);
                cr_assert_arr_eq(gids, ids, (size_t)B * k * 4, "mode %d B=%d V=%d k=%d", mode, B,
                                 V, k);
                for (int i = 0; i < B * k; i++)
                    cr_assert(CLOSE(gval[i], val[i], 1e-4f, 1e-5f) || (isinf(val[i]) && isinf(gval[i])),
                              "mode %d shards %d B=%d V=%d k=%d i=%d: gpu %.9g cpu %.9g", mode,
                              shards, B, V, k, i, gval[i], val[i]);
                for (int b = 0; b < B; b++)
                    cr_assert(CLOSE(glse[b], lse[b], 1e-4f, 1e-5f) || glse[b] == lse[b],
                              "mode %d shards %d B=%d V=%d k=%d row %d: lse gpu %.9g cpu %.9g", mode,
                              shards, B, V, k, b, glse[b], lse[b]);
            }
        free(x), free(bias), free(val), free(gval), free(ids), free(gids);
    }
    nmt_gpu_free(g);
}

Test(nmt_out_gpu, argmax_and_gather_match_cpu)
{
    nmt_gpu *g = gpu_or_skip();
    smt_err err;
    for (size_t c = 0; c < sizeof sizes / sizeof *sizes; c++) {
        int B = sizes[c][0], V = sizes[c][1];
        float *x = malloc((size_t)B * V * 4), *bias = malloc((size_t)V * 4), lp[8], glp[8];
        int32_t ids[8], gids[8], gi[8];
        fill(x, bias, B, V, 0);
        for (int b = 0; b < B; b++)
            gi[b] = (b * 7919) % V;
        nmt_out_argmax(x, bias, B, V, ids, NULL);
        nmt_gpu_out_args a = {NMT_GPU_ARGMAX, x, bias, B, V, 1, 0, NULL, NULL, gids, NULL};
        cr_assert_eq(nmt_gpu_outlayer(g, &a, &err), 0, "%s", err.msg);
        cr_assert_arr_eq(gids, ids, (size_t)B * 4, "argmax V=%d", V);
        nmt_out_gather(x, bias, B, V, gi, lp);
        nmt_gpu_out_args b2 = {NMT_GPU_GATHER, x, bias, B, V, 0, 3, gi, glp, NULL, NULL};
        cr_assert_eq(nmt_gpu_outlayer(g, &b2, &err), 0, "%s", err.msg);
        for (int b = 0; b < B; b++)
            cr_assert(CLOSE(glp[b], lp[b], 1e-4f, 1e-5f) || glp[b] == lp[b], "gather V=%d row %d", V, b);
        free(x), free(bias);
    }
    nmt_gpu_free(g);
}
