/* nmt_out_fast.h — the CPU backend's vectorized output layer, one row at a time (private). */
#ifndef NMT_OUT_FAST_H
#define NMT_OUT_FAST_H

#include <stdint.h>

#include "nmt.h"

/* nmt_out_topk for one row x (V) with one shard: val (k) log-probabilities, ids (k), *lse. */
void nmt_out_topk_fast(const float *x, const float *bias, int V, int k, float *val, int32_t *ids,
                       float *lse);

/* nmt_out_gather for one row: x[id] + bias[id] - lse (or -inf for an id out of range). */
float nmt_out_gather_fast(const float *x, const float *bias, int V, int32_t id);

#endif
