/* nmt_out_fast.h — the CPU backend's vectorized output layer, one row at a time (private). */
#ifndef NMT_OUT_FAST_H
#define NMT_OUT_FAST_H

/* NMT_CLONES: an AVX2 version and a default one of a hot function, chosen at load time by an ifunc
 * resolver (same arithmetic, no FMA contraction in ISO C, so results do not depend on the machine).
 * The resolver runs during relocation, before a sanitizer's runtime is initialised, and crashes
 * under ASan or TSan: sanitized builds get the single default version. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define NMT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NMT_CLONES
#endif

#include <stdint.h>

#include "nmt.h"

/* nmt_out_topk for one row x (V) with one shard: val (k) log-probabilities, ids (k), *lse. */
void nmt_out_topk_fast(const float *x, const float *bias, int V, int k, float *val, int32_t *ids,
                       float *lse);

/* nmt_out_gather for one row: x[id] + bias[id] - lse (or -inf for an id out of range). */
float nmt_out_gather_fast(const float *x, const float *bias, int V, int32_t id);

#endif
