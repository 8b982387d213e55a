/* dec_lm_cache.h — a worker's cache of LM queries (lm_cache.c): one direct-mapped table per LM,
 * read by the LM feature's per-query path (ff_lm.h) and by the batched one (lm_batch.c); the
 * sentence's LM states by id (lm_ids) and the cache of whole phrases after a state (lm_phrase). */
#ifndef DEC_LM_CACHE_H
#define DEC_LM_CACHE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "dec_arena.h"
#include "glm.h"

/* A direct-mapped cache of LM queries, one per worker and LM: decoding asks the same (state, word)
 * questions many times (every cube row with one LM state meets the same candidates). The key is
 * compared exactly, so a hit returns what the LM would. */
typedef struct lm_cache_key {  /* 32 bytes: a probe reads half a cache line */
    uint32_t in_words[GLM_MAX_ORDER - 1];
    uint32_t w;
    uint8_t in_len, valid, pad[6];
} lm_cache_key;

typedef struct lm_cache_val {  /* read only on a hit */
    float prob;
    glm_state out;
    uint32_t out_id, epoch;   /* out's id in the sentence epoch (lm_ids; epoch 0: none) */
} lm_cache_val;

#ifndef DEC_LM_CACHE_BITS
#define DEC_LM_CACHE_BITS 13
#endif

/* The cache slot of the question (in, w). */
static inline size_t dec_lm_cache_slot(const glm_state *in, uint32_t w)
{
    uint64_t h = (uint64_t)w * 0x9E3779B97F4A7C15ull ^ in->length;
    for (unsigned i = 0; i < in->length; i++)
        h = (h ^ in->words[i]) * 0xff51afd7ed558ccdull;
    h ^= h >> 29;
    return h & ((1u << DEC_LM_CACHE_BITS) - 1);
}

/* 1 when key k holds the question (in, w). */
static inline int dec_lm_cache_hit(const lm_cache_key *k, const glm_state *in, uint32_t w)
{
    return k->valid && k->w == w && k->in_len == in->length &&
           memcmp(k->in_words, in->words, sizeof k->in_words) == 0;
}

/* Keeps the answer (prob, out) to (in, w) in slot k, v. */
static inline void dec_lm_cache_put(lm_cache_key *k, lm_cache_val *v, const glm_state *in,
                                    uint32_t w, float prob, const glm_state *out)
{
    memcpy(k->in_words, in->words, sizeof k->in_words);
    k->in_len = in->length;
    k->w = w;
    k->valid = 1;
    v->prob = prob;
    v->out = *out;
    v->epoch = 0;
}

/* The distinct LM states of one sentence and LM, each named by its index: equal states (the same
 * length and words) have one id, so hypotheses keep ids, and their LM states compare and hash as
 * ids. Arena memory, made empty by dec_lm_ids_reset at each sentence. */
typedef struct lm_ids {
    glm_state *st;            /* by id */
    uint32_t n, cap;
    uint32_t *slots;          /* open addressing: id + 1, 0 when empty */
    uint32_t mask;
} lm_ids;

/* Forgets every state (the arena that held them was reset). */
static inline void dec_lm_ids_reset(lm_ids *t) { memset(t, 0, sizeof *t); }

/* The id of state st, given it when new. Returns 0 or SMT_ERR_NOMEM. */
int dec_lm_id(lm_ids *t, arena *ar, const glm_state *st, uint32_t *id);

/* A direct-mapped cache of whole phrases, one per worker and LM: the log10 probability of a
 * candidate's words after the state in (summed word by word, as the per-word path sums them) and
 * the state id after them. Valid within one sentence (epoch): candidates and ids are the
 * sentence's. */
typedef struct lm_phrase {
    const void *cand;
    uint32_t in, out;
    float prob;
    uint32_t epoch;
} lm_phrase;

#define DEC_LM_PHRASE_BITS 15

static inline size_t dec_lm_phrase_slot(const void *cand, uint32_t in)
{
    uint64_t h = ((uint64_t)(uintptr_t)cand ^ ((uint64_t)in << 40)) * 0x9E3779B97F4A7C15ull;
    return (size_t)(h >> (64 - DEC_LM_PHRASE_BITS));
}

/* Makes the phrase caches of n LMs (zeroed: epoch 0 is never a sentence's) unless they exist.
 * Returns 0 or SMT_ERR_NOMEM. */
int dec_lm_phrase_alloc(lm_phrase **p, unsigned n);
void dec_lm_phrase_free(lm_phrase **p, unsigned n);

/* Makes the cache of n LMs (zeroed keys) unless it exists. Returns 0 or SMT_ERR_NOMEM. */
int dec_lm_cache_alloc(lm_cache_key **keys, lm_cache_val **vals, unsigned n);
/* Frees the caches of n LMs (those made); the pointers are then NULL. */
void dec_lm_cache_free(lm_cache_key **keys, lm_cache_val **vals, unsigned n);

#endif
