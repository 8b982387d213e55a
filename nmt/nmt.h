/* nmt.h — neural machine translation inference for fastsmt: a small transformer encoder–decoder
 * loaded from safetensors + a JSON config (written by tools/nmt-train.py), with scoring (forced
 * decoding), greedy and beam search, a fused output layer (bias + online softmax + k-best in one pass)
 * and Moses n-best rescoring.
 *
 * Model directory (see docs/nmt.md): config.json, model.safetensors (F32 or F16 tensors named as in
 * the trainer), src.vocab and tgt.vocab (one token per line; the line number is the id).
 *
 * Conventions: functions return 0 or a negative SMT_ERR_* code and fill an smt_err (may be NULL).
 * Thread-safety: an nmt_model is immutable after nmt_model_open, so many threads may share it; an
 * nmt_ctx (workspaces, thread pool, CUDA stream and cuBLAS handle) is used by one thread at a time.
 * This header compiles as C and as CUDA C++. */
#ifndef NMT_H
#define NMT_H

#include <stddef.h>
#include <stdint.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The hyper-parameters and special ids of a model (from config.json). */
typedef struct nmt_config {
    int d_model, n_heads, d_ff;
    int enc_layers, dec_layers;
    int src_vocab_size, tgt_vocab_size;
    int shared_vocab;
    int pad_id, unk_id, bos_id, eos_id;
    float ln_eps;
} nmt_config;

typedef struct nmt_model nmt_model;

/* Loads the model directory dir. Checks every tensor's presence, dtype and shape against the config.
 * Returns 0, SMT_ERR_IO, SMT_ERR_PARSE (config or header; the message names the file and key),
 * SMT_ERR_FORMAT (missing or misshapen tensor), SMT_ERR_CORRUPT (offsets beyond the file) or
 * SMT_ERR_NOMEM. */
int nmt_model_open(nmt_model **out, const char *dir, smt_err *err);

/* Frees a model (accepts NULL). */
void nmt_model_free(nmt_model *m);

/* The model's configuration. */
const nmt_config *nmt_model_config(const nmt_model *m);

/* Splits text into words (smt_words.h: spaces, tabs, CR, LF) and maps each word to its id (unknown words → unk_id) on the source
 * (target = 0) or target (target = 1) side. Writes at most cap ids; returns the number of words
 * (which may exceed cap: the caller then retries with a larger buffer). No </s> is added. */
size_t nmt_model_tokenize(const nmt_model *m, int target, const char *text, int32_t *ids, size_t cap);

/* The target word with id (NULL when out of range). */
const char *nmt_model_tgt_word(const nmt_model *m, int32_t id);

/* ---- execution contexts ---- */

typedef enum nmt_backend { NMT_BACKEND_CPU = 0, NMT_BACKEND_CUDA = 1 } nmt_backend;

typedef struct nmt_ctx_options {
    nmt_backend backend;
    int device;             /* CUDA device ordinal */
    unsigned threads;       /* CPU threads including the caller (0 = all CPUs) */
    int max_batch_sentences; /* sentences per batch (0 = 64) */
    int no_sharing; /* 1: nmt_score computes every pair in full (no shared sources or prefixes;
                     * the same scores, slower: for comparisons) */
} nmt_ctx_options;

typedef struct nmt_ctx nmt_ctx;

/* Creates a context for model m (which must outlive it). opt may be NULL (CPU, all threads).
 * Returns 0, SMT_ERR_NOMEM, SMT_ERR_UNSUPPORTED (CUDA requested in a build without it, or no
 * device) or SMT_ERR_CUDA. */
int nmt_ctx_create(nmt_ctx **out, const nmt_model *m, const nmt_ctx_options *opt, smt_err *err);

/* Frees a context (accepts NULL). */
void nmt_ctx_free(nmt_ctx *c);

/* 1 when this build has the CUDA backend and a device is visible, else 0. */
int nmt_cuda_available(void);

/* ---- inference ---- */

/* Teacher-forced logits of one sentence pair: src (S ids, including the final </s>), tgt_in (T ids
 * starting with <s>). logits is (T, V) with V = tgt_vocab_size, bias included. enc_out, when not
 * NULL, receives the encoder output (S, d_model). Used by the golden-value tests. Returns 0,
 * SMT_ERR_ARG (no final </s>, or a target id outside the vocabulary; source ids outside it are read
 * as <unk>, as in nmt_score), SMT_ERR_NOMEM or SMT_ERR_CUDA. */
int nmt_forward(nmt_ctx *c, const int32_t *src, int S, const int32_t *tgt_in, int T, float *logits,
                float *enc_out, smt_err *err);

/* A sentence for scoring or translation: word ids without </s> (it is added internally). */
typedef struct nmt_sentence {
    const int32_t *ids;
    int len;
} nmt_sentence;

/* Forced decoding: logprob[i] = Σ_t ln p(tgt[i]_t | src[i], tgt[i]_<t), including the final </s>.
 * Pairs are sorted by length and batched; finished sentences leave the batch. */
int nmt_score(nmt_ctx *c, size_t n, const nmt_sentence *src, const nmt_sentence *tgt,
              float *logprob, smt_err *err);

/* A lexical shortlist (seed 001): the output layer of a batch is restricted to the target words
 * listed for its source words plus the most frequent target words, and the softmax normalizes over
 * that set only. */
typedef struct nmt_shortlist nmt_shortlist;

/* Loads `source_word target_word` lines (best first for each source word; e.g. the single-word
 * pairs of a phrase table sorted by p(e|f)), keeping per_word targets per source word; every batch
 * also gets the `frequent` first target ids (the trainer orders the vocabulary by frequency) and
 * </s>. Unknown words are skipped. Returns 0, SMT_ERR_IO, SMT_ERR_PARSE (file:line: a line that is
 * not exactly two words, or a file without lines), SMT_ERR_ARG (per_word < 1, frequent < 0) or
 * NOMEM. */
int nmt_shortlist_load(nmt_shortlist **out, const nmt_model *m, const char *path, int per_word,
                       int frequent, smt_err *err);
void nmt_shortlist_free(nmt_shortlist *s);

typedef struct nmt_search_options {
    int beam;            /* 1 = greedy (arg-max path, no softmax) */
    float max_len_ratio; /* output at most ratio * source length + max_len_add words */
    int max_len_add;
    float length_penalty; /* final score = logprob / len^alpha (0 = raw log-probability) */
    const nmt_shortlist *shortlist; /* NULL: the whole vocabulary */
} nmt_search_options;

/* A translation: ids (without </s>), its log-probability and its final (normalized) score. */
typedef struct nmt_hyp {
    int32_t *ids;
    int len;
    float logprob, score;
} nmt_hyp;

/* Translates n sentences with beam search (opt NULL: beam 5, ratio 2, add 10, alpha 0.6, no
 * shortlist).
 * out[i] receives the best hypothesis of sentence i; free with nmt_hyps_free. Returns 0,
 * SMT_ERR_ARG (beam outside 1..NMT_MAX_K, max_len_ratio outside 0..1000, max_len_add outside
 * 0..100000, length_penalty outside 0..10, NaN included), SMT_ERR_NOMEM or SMT_ERR_CUDA. */
int nmt_translate(nmt_ctx *c, size_t n, const nmt_sentence *src, const nmt_search_options *opt,
                  nmt_hyp *out, smt_err *err);

/* Frees the ids of n hypotheses. */
void nmt_hyps_free(nmt_hyp *h, size_t n);

/* ---- the output layer (CPU reference kernels, the CPU backend's vectorized ones, CUDA twins) ----
 * All take logits x (B,V) without bias and the bias (V) (NULL = zero). Ties in the k-best are broken
 * by the smaller id; -inf entries never win over finite ones; a row of -inf has lse = -inf. */

/* Fused: for each row, one pass keeps the running max and the rescaled running sum and the k best
 * (value, id), over n_shards shards of the row, then reduces the shards. Writes val (B,k) as log-
 * probabilities x+b-lse, ids (B,k), lse (B) (each may be NULL except ids). k ≤ NMT_MAX_K. */
#define NMT_MAX_K 32
void nmt_out_topk(const float *x, const float *bias, int B, int V, int k, int n_shards, float *val,
                  int32_t *ids, float *lse);

/* Unfused reference of the same result: add bias (writes tmp (B,V)), log-softmax (in place), then
 * a k-best pass. tmp must hold B*V floats. */
void nmt_out_topk_unfused(const float *x, const float *bias, int B, int V, int k, float *tmp,
                          float *val, int32_t *ids, float *lse);

/* Arg-max of x+b per row (k = 1 without probabilities); ids (B), val (B) raw x+b (may be NULL). */
void nmt_out_argmax(const float *x, const float *bias, int B, int V, int32_t *ids, float *val);

/* Log-softmax and gather: logprob[b] = x[b,id[b]] + bias[id[b]] - lse(row b). */
void nmt_out_gather(const float *x, const float *bias, int B, int V, const int32_t *ids,
                    float *logprob);

/* The CPU backend's vectorized kernels, one row x (V) at a time (AVX2 where the CPU has it, chosen
 * at load time; the same arithmetic, so the same results on every machine):
 * nmt_out_topk with B = 1 and one shard: val (k) log-probabilities, ids (k), *lse. */
void nmt_out_topk_fast(const float *x, const float *bias, int V, int k, float *val, int32_t *ids,
                       float *lse);
/* nmt_out_gather for one row: x[id] + bias[id] - lse (or -inf for an id out of range). */
float nmt_out_gather_fast(const float *x, const float *bias, int V, int32_t id);

/* The GPU output-layer kernels as host-callable functions (the model's CUDA backend uses them
 * behind nmt_ctx; tests and benchmarks call them directly). Every function returns 0 or
 * SMT_ERR_UNSUPPORTED (no CUDA in this build, or no device) or SMT_ERR_CUDA with the failing
 * statement and file:line in the message. */

/* A device, its stream, a cuBLAS handle and a workspace (no globals: everything lives here). */
typedef struct nmt_gpu nmt_gpu;

int nmt_gpu_create(nmt_gpu **out, int device, smt_err *err);
void nmt_gpu_free(nmt_gpu *g);

enum {
    NMT_GPU_TOPK = 0,         /* fused bias + online softmax + sharded k-best */
    NMT_GPU_TOPK_UNFUSED = 1, /* add-bias, log-softmax and k-best as separate kernels */
    NMT_GPU_ARGMAX = 2,       /* k = 1 without probabilities */
    NMT_GPU_GATHER = 3        /* log-softmax and gather of given ids */
};

/* One output-layer call on host arrays (copied to the device and back): x (B,V), bias (V) or
 * NULL; results as in the CPU twins above: val (B,k) (ARGMAX: raw x+b of the best; GATHER: the
 * log-probabilities (B)), ids (B,k), lse (B) (TOPK modes only; may be NULL). n_shards 0 = auto. */
typedef struct nmt_gpu_out_args {
    int mode;
    const float *x, *bias;
    int B, V, k, n_shards;
    const int32_t *gather_ids;
    float *val;
    int32_t *ids;
    float *lse;
} nmt_gpu_out_args;

int nmt_gpu_outlayer(nmt_gpu *g, const nmt_gpu_out_args *a, smt_err *err);

/* Times `iters` calls of an output-layer mode on device-resident random logits (B,V), flushing
 * L2 before each call and timing with CUDA events; *ms is the mean per call. */
int nmt_gpu_bench_outlayer(nmt_gpu *g, int mode, int B, int V, int k, int iters, double *ms,
                           smt_err *err);

/* ---- n-best rescoring and BLEU ---- */

typedef struct nmt_rescore_options {
    float weight;            /* weight of the NMT0 feature */
    const char *feature;     /* feature name (NULL = "NMT0") */
    float length_bonus;      /* added to the total per target word (a re-tuned word penalty) */
} nmt_rescore_options;

/* Rescores a Moses n-best list (`id ||| words ||| features ||| total`) against the source file
 * (one sentence per line; line i is sentence id i): adds `NMT0= logprob`, sets total += weight *
 * logprob + length_bonus * words, re-ranks each sentence's list (stable on ties: the earlier line wins) and writes it to
 * nbest_out (NULL: not written) and one 1-best line per source sentence to best_out (an empty line for
 * sentences missing from the list). Either output path may be "-" (standard output; not both).
 * Returns 0, SMT_ERR_PARSE naming file:line (also for an empty list), SMT_ERR_IO (a read or
 * write error, naming the file; a rescored list written in part is removed) or SMT_ERR_ARG (an
 * output that is one of the inputs, which opening it would destroy; a weight that is not finite). */
int nmt_rescore_files(nmt_ctx *c, const char *source_path, const char *nbest_path,
                      const nmt_rescore_options *opt, const char *nbest_out_path,
                      const char *best_out_path, smt_err *err);

/* Moses n-best lines. One line, parsed in place (the pointers point into the line). */
typedef struct nmt_nbest_line {
    long id;
    char *words, *feats, *rest; /* rest: fields after the total, or NULL */
    char *plain;                /* rescoring: the words as scored (nmt_nbest_plain) */
    double total, nmt, new_total;
    long order; /* line number, for a stable ranking */
} nmt_nbest_line;

/* Splits `id ||| words ||| features ||| total [||| rest]` in place. The id (a non-negative
 * integer) and the total (a number; infinities allowed, NaN not) are parsed strictly (smt_num.h):
 * blanks around them are allowed, anything else is an error. Returns 0 or -1. */
int nmt_nbest_parse(char *line, nmt_nbest_line *out);

/* The translation in an n-best words field: its words separated by single blanks, without
 * the trailing blank and without Moses's segmentation markers ("|3-5|", from
 * -include-segmentation-in-n-best). Writes into out (strlen(words) + 1 bytes; out may be words
 * itself) and returns its length. */
size_t nmt_nbest_plain(const char *words, char *out);

/* The first score of feature `name` (as `name= score`) in a feature string, parsed strictly.
 * Returns 1 and sets *value, 0 when the feature is absent (always for an empty name), -1 when its
 * score is not a number. */
int nmt_nbest_feature(const char *feats, const char *name, double *value);

/* 0 when name can name a feature of an n-best list (not empty; no blank, '=' or '|'), else
 * SMT_ERR_ARG with a message: rescoring writes `name= score` into the list, tuning reads it back. */
int nmt_nbest_feature_name_check(const char *name, smt_err *err);

/* ---- tuning the rescoring weight (`nmt tune`) ----
 * Over a rescored n-best list, each hypothesis scores base + w * F + u * words, where F is the
 * rescoring feature (NMT0=), base the list's total less used_weight * F, and words its length; the
 * re-ranked 1-best of each sentence is compared with the references (BLEU, common/smt_bleu.h). The
 * grid of (w, u) giving the best BLEU wins; on ties the smallest |w| + |u| (starting from 0, 0). u
 * re-tunes the word penalty: adding a log-probability, which falls with every word, shifts the
 * length balance Moses's weights were tuned for. With folds > 1, sentence i belongs to fold
 * i % folds and each fold's weights are chosen on the other folds (cross-validation). */
#define NMT_TUNE_MAX_POINTS 1e6 /* grid steps per axis */

typedef struct nmt_tune_options {
    const char *feature;             /* the rescoring feature (NULL = "NMT0") */
    double used_weight;              /* the weight the list was rescored with */
    double lo, hi, step;             /* the weight grid: finite, LO <= HI, STEP > 0 */
    double len_lo, len_hi, len_step; /* the length-bonus grid (0, 0, 1: no bonus) */
    int per_word;                    /* 1: F divided by the words + </s> it covers */
    int folds;                       /* >= 1 */
} nmt_tune_options;

/* The defaults of `nmt tune`: NMT0, used weight 0, weights 0:2:0.02, no length bonus, 1 fold. */
void nmt_tune_options_default(nmt_tune_options *o);

typedef struct nmt_tune_fold {
    double weight, length_bonus; /* chosen on the other folds */
    double train_bleu;           /* their BLEU on the other folds */
    double base_bleu, bleu;      /* on this fold: the list's own 1-best, and with these weights */
} nmt_tune_fold;

typedef struct nmt_tune_result {
    double base_bleu;                  /* the list's own 1-best (w = u = 0) */
    double weight, length_bonus, bleu; /* the best on the whole set */
    int folds;
    nmt_tune_fold *fold;               /* [folds] when folds > 1, else NULL */
    double cv_bleu;                    /* each sentence picked with its fold's weights (folds 1:
                                        * the whole set's, so equal to bleu) */
    const char **best;                 /* [n_sentences]: those picks' words (nmt_nbest_plain),
                                        * "" for a sentence the list lacks; they point into the
                                        * n-best lines */
    size_t n_sentences;
} nmt_tune_result;

/* Tunes over the n-best lines nbest[0..n_lines) (parsed and rewritten in place; sentence ids in
 * order, each below n_sentences) against n_refs references refs[k][0..n_sentences). nbest_name
 * names the list in messages ("name:line: ..."). Fills *res (free with nmt_tune_result_free).
 * Returns 0, SMT_ERR_PARSE (an empty list, a line that is not an n-best line, an id out of order
 * or beyond the references, a missing or non-numeric feature), SMT_ERR_ARG (a bad grid, folds < 1,
 * a used weight that is not finite, n_refs outside 1..SMT_BLEU_MAX_REFS) or SMT_ERR_NOMEM. */
int nmt_tune(char **nbest, size_t n_lines, const char *nbest_name, char **const *refs, int n_refs,
             size_t n_sentences, const nmt_tune_options *opt, nmt_tune_result *res, smt_err *err);
void nmt_tune_result_free(nmt_tune_result *r);


#ifdef __cplusplus
}
#endif
#endif
