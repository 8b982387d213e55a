/* dec_lm_batch.h — the LM queries of searches decoding in lock-step, scored in batches
 * (lm_batch.c; -lm-batch cpu|gpu). */
#ifndef DEC_LM_BATCH_H
#define DEC_LM_BATCH_H

#include "dec_search.h"

/* The run's device contexts (one per LM, the model copied once per process), shared by the
 * workers one call at a time. Returns 0, SMT_ERR_UNSUPPORTED (no CUDA build or no device, or an LM
 * without a GPU path: a KenLM binary) or SMT_ERR_CUDA, with err naming the LM. */
typedef struct dec_lm_gpu dec_lm_gpu;
int dec_lm_gpu_create(dec_lm_gpu **out, const dec_model *m, smt_err *err);
void dec_lm_gpu_free(dec_lm_gpu *g);

/* A worker's batcher: its LM cache and buffers (gpu: only for DEC_LM_BATCH_GPU). */
typedef struct dec_lm_batch dec_lm_batch;
int dec_lm_batch_create(dec_lm_batch **out, const dec_model *m, int backend, dec_lm_gpu *gpu,
                        smt_err *err);
void dec_lm_batch_free(dec_lm_batch *b);

/* Fills the LM state ids and probabilities (h->lm, dec_hyp_lm_prob) of every expansion waiting in
 * ss[0..n)->pend, exactly as ff_lm_query would; the caller then calls dec_search_finish_pending
 * on each. Returns 0, SMT_ERR_NOMEM or the back end's error. */
int dec_lm_batch_score(dec_lm_batch *b, dec_search *const *ss, size_t n, smt_err *err);

typedef struct dec_lm_batch_stats {
    uint64_t batches;    /* dec_lm_batch_score calls with waiting expansions */
    uint64_t expansions; /* expansions scored */
    uint64_t hits;       /* questions the cache answered */
    uint64_t calls;      /* calls to the LM's batch (one per LM and round) */
    uint64_t queries;    /* questions asked in them */
    double seconds;      /* wall time inside those calls */
} dec_lm_batch_stats;
void dec_lm_batch_stats_get(const dec_lm_batch *b, dec_lm_batch_stats *out);

#endif
