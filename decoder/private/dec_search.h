/* dec_search.h — the search's data structures, shared by search.c (cube pruning), its sentence
 * set-up (translation_options.c, xml_options.c, reordering_constraint.c), coverage.c and
 * nbest.c; the arena is dec_arena.h, the queue dec_queue.h, the LM query cache dec_lm_cache.h. */
#ifndef DEC_SEARCH_H
#define DEC_SEARCH_H

#include <stddef.h>
#include <string.h>

#include "dec_arena.h"
#include "dec_internal.h"
#include "dec_lm_cache.h"

struct cov;

/* A partial translation. */
typedef struct hyp {
    struct hyp *prev;
    const dec_cand *cand;     /* the last phrase (NULL for the empty hypothesis) */
    struct cov *cov;          /* its coverage (one object per coverage and stack) */
    double score;             /* model score so far */
    double total;             /* score + future cost estimate of what is not covered */
    struct hyp *arcs;         /* hypotheses recombined into this one (n-best) */
    struct hyp *next_arc;
    struct hyp *hnext;        /* chain of the stack's recombination table */
    uint64_t hash;
    uint32_t id;              /* creation order: the deterministic tie-break */
    int16_t start, end;       /* source range of the last phrase; -1 for the empty hypothesis */
    uint8_t alive;            /* in its stack (not pruned, not recombined away) */
    float lm_prob[DEC_MAX_LMS]; /* log10 p of the phrase per LM (dec_hyp_lm_prob) */
    uint32_t lm[DEC_MAX_LMS]; /* the LM state after it per LM: its id in dec_search.lm_ids */
} hyp;

/* The hierarchical reordering model's stack (Moses's ReorderingStack), one block per run of source
 * words translated contiguously. Each hypothesis holds its stack's top block (after its LM states,
 * only when the model has a hierarchical backward model: dec_hyp_size), pointing at the blocks
 * below, which are held by the hypotheses it extends: a persistent list, with nothing to allocate.
 * depth 0: the empty stack (the empty hypothesis). */
typedef struct reo_block {
    const struct reo_block *below;
    int16_t start, end;
    uint32_t depth;           /* blocks from this one down, itself included; 0: empty stack */
} reo_block;

static inline size_t dec_hyp_reo_offset(const dec_model *m)
{
    (void)m;
    return (sizeof(hyp) + _Alignof(reo_block) - 1) & ~(_Alignof(reo_block) - 1);
}

static inline int dec_hyp_has_reo_stack(const dec_model *m)
{
    return m->lr_hier && (m->lr_dir & DEC_LR_BACKWARD);
}

/* The bytes of one hypothesis of model m. */
static inline size_t dec_hyp_size(const dec_model *m)
{
    if (!dec_hyp_has_reo_stack(m))
        return sizeof(hyp);
    return dec_hyp_reo_offset(m) + sizeof(reo_block);
}

/* h's top block (only with dec_hyp_has_reo_stack). */
static inline reo_block *dec_hyp_reo(const dec_model *m, const hyp *h)
{
    return (reo_block *)(void *)((char *)(uintptr_t)h + dec_hyp_reo_offset(m));
}

/* The top of h's stack, NULL when empty. */
static inline const reo_block *dec_hyp_reo_top(const dec_model *m, const hyp *h)
{
    const reo_block *b = dec_hyp_reo(m, h);
    return b->depth ? b : NULL;
}

/* The log10 probability LM l gave h's phrase (with </s> when complete): [n_lms] (ff_lm.h; the
 * n-best paths' LM features). */
static inline float *dec_hyp_lm_prob(const dec_model *m, hyp *h)
{
    (void)m;
    return h->lm_prob;
}

/* The hypotheses of one stack that share a coverage (Moses's BitmapContainer). */
typedef struct cov {
    uint64_t *bits;
    struct cov *hnext;
    uint64_t hash;
    double future;            /* future cost of the uncovered words */
    hyp **hyps;               /* after pruning: the survivors, best first */
    uint32_t n_hyps, first_gap;
} cov;

/* Expanding one coverage by one source range: a cube of (hypothesis, candidate) pairs. */
typedef struct edge {
    cov *to;
    hyp **hyps;               /* the parent coverage's hypotheses within the distortion limit */
    const dec_cand *cands;    /* best first */
    uint32_t n_hyps, n_cands;
    int16_t start, end;
    uint8_t *seen;            /* n_hyps * n_cands bits */
} edge;

typedef struct stack {
    hyp **hyps;               /* every hypothesis added (alive or not) */
    uint32_t n, cap, n_alive;
    hyp **table;              /* recombination buckets (grown to twice the live hypotheses) */
    size_t table_mask;
    cov **covs;               /* coverage objects of this stack */
    uint32_t n_covs, cap_covs;
    cov **cov_table;
    uint32_t cov_mask;
    edge **edges;
    uint32_t n_edges, cap_edges;
    double best, worst;
} stack;

typedef struct cand_list {
    const dec_cand *c;
    uint32_t n;
} cand_list;

/* An expansion waiting for its LM scores (-lm-batch): its cube cell's queue slot and whether it
 * completes the sentence (</s>). */
typedef struct lm_pend {
    hyp *h;
    uint32_t slot;
    uint8_t complete;
} lm_pend;

struct dec_search {
    lm_cache_key *lmk[DEC_MAX_LMS];
    lm_cache_val *lmv[DEC_MAX_LMS];
    lm_phrase *lmp[DEC_MAX_LMS];
    uint32_t lm_epoch;        /* the sentence's number in lmp (from 1) */
    int lm_nomem;             /* an LM state id could not be given (out of memory) */
    lm_ids lm_ids[DEC_MAX_LMS]; /* the sentence's LM states (hyp.lm) */
    dec_model *m;
    arena ar;
    /* the sentence */
    char **tokens;
    const uint32_t *lens;
    size_t n;
    uint32_t nw;              /* 64-bit words per coverage bitmap */
    uint32_t *src_ids;
    cand_list *opts;          /* n * max_len: options of span (i, i+len-1) at [i*max_len+len-1] */
    int max_len;
    double *fc;               /* n * n future costs, fc[i*n+j] for span i..j */
    stack *stacks;            /* n + 1 */
    uint32_t next_id;
    int nbest;
    size_t hyp_size;
    hyp *best;
    dec_output out;           /* what the lines show */
    const struct dec_xml *xml; /* the sentence's XML options (NULL: none) */
    size_t n_tok, cap_tok;    /* tokens: n source words, then XML words the table lacks */
    uint32_t *unk;            /* the sentence's unknown source positions (no candidate), in order */
    size_t n_unk;
    /* the sentence's reordering constraints (Moses's ReorderingConstraint), when rc_on */
    int rc_on;
    uint8_t *wall;            /* n: a wall after word i (not inside a zone) */
    uint32_t *local_wall;     /* n: the innermost zone with a local wall after word i, or
                               * UINT32_MAX */
    const uint32_t *zones;    /* zone k: words zones[2k] .. zones[2k + 1] */
    size_t n_zones;
    dec_translation tr;       /* the path being formatted (nbest.c) */
    /* batched LM scoring (lm_batch.c): with lm_batch set, an expansion is made without its LM
     * scores and waits in pend; dec_search_step returns 1 until they are given
     * (dec_search_finish_pending, which sets lm_deferred while it completes them) */
    int lm_batch, lm_deferred;
    lm_pend *pend;
    size_t n_pend, cap_pend;
    /* where the resumable search stands (dec_search_begin, dec_search_step) */
    uint32_t k;               /* the stack being filled */
    int phase;                /* search.c's PH_* */
    int pops;
};

/* 1 when source position i is covered in bits. */
static inline int covered(const uint64_t *bits, size_t i) { return (bits[i >> 6] >> (i & 63)) & 1; }

/* The coverage of stack st with these bits, made (with the future cost of its gaps) when new;
 * NULL when out of memory (coverage.c). */
cov *dec_cov_get(dec_search *s, stack *st, const uint64_t *bits);

/* The sentence's translation options (translation_options.c): s->opts, s->max_len, s->unk and the
 * future costs s->fc, from the decoding paths and s->xml. Returns 0 or SMT_ERR_* with err set. */
int dec_collect_options(dec_search *s, smt_err *err);

/* The sentence's XML options (xml_options.c). Overlap: 1 when words [i, j] overlap an option's
 * span. Add: the options over [i, i + len - 1] merged into that span's list. Constrain: l without
 * the table options the constraint mode drops over [i, j]. Both return 0 or SMT_ERR_NOMEM. */
int dec_xml_overlap(const struct dec_xml *x, size_t i, size_t j);
int dec_xml_add_options(dec_search *s, size_t i, size_t len);
int dec_xml_constrain(dec_search *s, size_t i, size_t j, cand_list *l);

/* The sentence's reordering constraint (reordering_constraint.c): made from s->out and s->xml
 * (s->rc_on, walls, zones; 0 or SMT_ERR_NOMEM), and checked for extending c by [start, end]. */
int dec_reordering_constraint(dec_search *s);
int dec_reordering_ok(const dec_search *s, const cov *c, size_t start, size_t end, int dl);

/* The feature values of a path (hypotheses first to last) as a dense vector scores[m->n_scores],
 * from what the search computed (each feature's path hook, dec_ff.h). */
void dec_path_features(const dec_search *s, hyp *const *path, size_t len, double *scores);

/* The resumable search (search.c), which lets one worker decode several sentences in lock-step and
 * score their LM queries together (run.c, lm_batch.c). dec_search_begin sets a sentence up (as
 * dec_search_run, which is begin + step); dec_search_step runs it until it is done (0) or, with
 * s->lm_batch, until expansions wait in s->pend for their LM scores (1): the caller fills each
 * pending hypothesis's LM state ids and probabilities (h->lm, dec_hyp_lm_prob) and calls
 * dec_search_finish_pending before stepping again. The search pops exactly what dec_search_run
 * pops. Errors: SMT_ERR_* with err set. */
int dec_search_begin(dec_search *s, char **tokens, const uint32_t *lens, size_t n, int want_nbest,
                     smt_err *err);
int dec_search_step(dec_search *s, smt_err *err);
int dec_search_finish_pending(dec_search *s, smt_err *err);

#endif
