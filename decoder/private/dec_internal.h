/* dec_internal.h — the decoder's private interfaces.
 *
 * The LMs are glm models, called directly; the phrase table is reached through dec_pt (a phrase
 * table with integrated lexicalized reordering scores, raw probabilities). Both are immutable
 * once loaded and queried from many threads without locks. */
#ifndef DEC_INTERNAL_H
#define DEC_INTERNAL_H

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder.h"
#include "glm.h"
#include "probingpt.h"
#include "moses_ini.h"
#include "smt_error.h"
#include "smt_vocab.h"

#define DEC_MAX_LMS 4
#define DEC_MAX_TM_SCORES 32
#define DEC_MAX_REO_SCORES 8
#define DEC_LOWEST_SCORE (-100.0f) /* Moses's LOWEST_SCORE: the floor of ln(prob) */
#define DEC_LN10 2.30258509299405f /* Moses's TransformLMScore factor */
/* ln p floored at DEC_LOWEST_SCORE (nan too), as Moses does for the table's scores. */
static inline float dec_floor_ln(float p)
{
    float v = logf(p);
    return v < DEC_LOWEST_SCORE || isnan(v) ? DEC_LOWEST_SCORE : v;
}
/* Target word ids with this bit set are source tokens passed through (unknown words). */
#define DEC_PASS_BIT 0x80000000u

/* ---------------------------------------------------------------- language model */

/* The LMs are glm models, called directly (glm_score, glm_index); glm_state is the decoder's LM
 * state (KenLM's right state; unused entries zero, so states hash and compare bytewise on
 * words[0..length)). */

/* Opens an LM for the decoder: a .glm binary is mapped; an ARPA file (plain, gzip, xz, bzip2 or
 * zstd) is binarized by glm (glm_load). verify: check every checksum at open. */
int dec_lm_open(glm_model **out, const char *path, int verify, const char *cache_dir,
                smt_err *err);

/* ---------------------------------------------------------------- phrase table */

/* One target of a source phrase. Scores are as stored in the table (probabilities). */
typedef struct dec_pt_entry {
    const uint32_t *words; /* ids of the table's target vocabulary */
    uint32_t n_words;
    const float *scores;   /* n_scores */
    const float *reo;      /* n_reo, or NULL when the pair has no reordering entry */
    const uint8_t *align;  /* n_align (source, target) position pairs inside the phrase pair, as
                            * the table lists them (none when the table has no alignments) */
    uint32_t n_align;
} dec_pt_entry;

/* The phrase table: a probingpt table (a text table is binarized at load), called directly
 * (ppt_lookup_ids, ppt_targets_next); the fields cache what the search asks for often. */
typedef struct dec_pt {
    ppt_table *t;
    uint32_t n_scores, n_reo;
    uint32_t max_src_len; /* longest source phrase in the table (lookups stop there) */
    uint64_t n_sources;
    const smt_vocab *src_vocab, *tgt_vocab;
} dec_pt;

void dec_pt_close(dec_pt *pt);

/* ---------------------------------------------------------------- adapters */

/* verify: check every checksum and the whole file at open (fastsmt --verify) */
int dec_pt_ppt_open(dec_pt **out, const char *path, int verify, smt_err *err);
/* A text phrase table (plain or compressed) and its reordering table (reo: NULL for none),
 * binarized by probingpt (dec_ppt_build) and opened as a .ppt. */
int dec_pt_text_open(dec_pt **out, const char *pt, const char *reo, int verify,
                     const char *cache_dir, smt_err *err);
/* Binarizes with probingpt / glm (as fastsmt-binarize does). */
int dec_ppt_build(const char *pt, const char *reo, const char *out, smt_err *err);
int dec_glm_build(const char *arpa, const char *out, int probing, smt_err *err);

/* The model cache (model_cache.c): builds in[0..n_in) (in[n_in] is NULL) into a .ext file with
 * build, or finds the one built before from the same inputs (same paths, sizes, mtimes) in
 * cache_dir (dec_options.model_cache), and opens it with open_fn (a cached file with every
 * checksum checked; one that fails is rebuilt). No cache_dir (NULL or "") or a cache that cannot
 * be written: a temporary file (smt_temp_file), removed once open. */
typedef int (*dec_build_fn)(const char *const *in, const char *out, smt_err *err);
typedef int (*dec_open_fn)(void **obj, const char *path, int verify, smt_err *err);
int dec_cached_load(void **obj, const char *ext, const char *const *in, size_t n_in,
                    dec_build_fn build, dec_open_fn open_fn, int verify, const char *cache_dir,
                    smt_err *err);

/* ---------------------------------------------------------------- the model */

/* Kinds of lexicalized reordering model (Moses's LRModel). */
enum { DEC_LR_MSD, DEC_LR_MSLR, DEC_LR_MONO, DEC_LR_LEFTRIGHT };
enum { DEC_LR_BACKWARD = 1, DEC_LR_FORWARD = 2, DEC_LR_BIDI = 3 };

/* A feature's place in the score vector (Moses's n-best order). */
typedef struct dec_feature {
    char *name;
    unsigned offset, n;
    int tuneable; /* printed in n-best lists */
} dec_feature;

/* A candidate target phrase of a source phrase after table-limit pruning, with everything the
 * search needs precomputed. Owned by the model's candidate cache. */
typedef struct dec_cand {
    const uint32_t *words;        /* model target ids (dec_word; the first table's ids, then the
                                   * other tables' words it lacks) */
    const uint32_t *lm_words;     /* n_lms * n_words LM ids, LM by LM */
    const float *tm;              /* ln, floored: n_scores */
    const float *reo;             /* ln, floored: n_reo, or NULL (no entry: scores 0) */
    float static_score;           /* weighted TM + word penalty + phrase penalty */
    float future;                 /* static_score + weighted LM estimate (Moses's future score) */
    const uint8_t *align;         /* the table's word alignment: n_align (source, target) pairs */
    uint16_t n_words, n_align;
    uint16_t table;               /* the phrase table whose scores tm holds (dec_model.tables) */
} dec_cand;

/* The pruned, ranked candidates of one source phrase (an immutable cache entry); n = 0 for a
 * phrase the table does not have. */
typedef struct dec_centry {
    uint64_t key;
    uint32_t n_src;
    uint32_t n;
    uint32_t *src;                /* n_src source ids, to rule out key collisions */
    dec_cand *cands;              /* n, best first */
} dec_centry;

/* One phrase table (a PhraseDictionaryMemory or ProbingPT feature, in ini order: the index
 * [mapping] names), with its own scores in the score vector (Moses's TranslationModel<k>: an
 * option of another table has 0 there), its own table limit and its own candidate cache. */
typedef struct dec_table {
    dec_pt *pt;
    unsigned off_tm, n_scores;    /* its feature's place in the score vector */
    int table_limit;
    uint32_t *to_model;           /* target id -> model target id (NULL for the first table: the
                                   * same ids) */
    /* the candidate cache: open addressing, lock-free insert (entries immutable once published) */
    _Atomic(dec_centry *) *cache;
    uint64_t cache_mask;
    atomic_uint_fast64_t n_misses; /* source phrases remembered as absent from the table */
} dec_table;

/* A decoding path ([mapping] "p T k"): one translation step over table k. backoff: Moses's
 * [decoding-graph-backoff] value of the path (0: always consulted; see translation_options.c). */
typedef struct dec_path {
    unsigned table, backoff;
} dec_path;

#define DEC_MAX_TABLES 64

struct dec_model {
    dec_ini *ini;
    dec_table *tables;             /* n_tables, in ini order */
    unsigned n_tables;
    dec_path *paths;               /* n_paths ([mapping], default "0 T 0") */
    unsigned n_paths;
    /* the model's target vocabulary: the first table's, then the other tables' words it lacks
     * (tgt_extra: ids n_tgt0 + i); one id per word, so that words compare by id */
    uint32_t n_tgt0, n_tgt;
    smt_vocab_builder *tgt_extra_b;
    smt_vocab tgt_extra;
    glm_model *lms[DEC_MAX_LMS];
    uint32_t lm_eos[DEC_MAX_LMS];  /* glm_eos of each LM (read in the search's inner loop) */
    unsigned n_lms;
    uint32_t **tgt2lm;            /* per LM: table target id -> LM id */
    /* feature layout */
    dec_feature *features;
    unsigned n_features, n_scores; /* n_scores: length of the dense score vector */
    double *weights;               /* n_scores */
    unsigned off_reo, off_dist, off_lm[DEC_MAX_LMS], off_wp, off_pp, off_uwp;
    int has_reo, has_dist, has_wp, has_pp, has_uwp;
    int lr_type, lr_dir, lr_types; /* lr_types: orientations per direction (2, 3 or 4) */
    int lr_hier;                   /* hier-: Galley & Manning's hierarchical orientations (the
                                    * backward model's shift-reduce stack, ff_reordering.h) */
    int early_distortion;          /* [early-distortion-cost]: Moore & Quirk's distortion cost,
                                    * charged as soon as a gap is left (ff_distortion.h) */
    float w_lm[DEC_MAX_LMS], w_dist, w_uwp;
    int lm_oov[DEC_MAX_LMS], lm_oov_any; /* oov-feature=1: the LM's second score, its OOV count */
    float w_lm_oov[DEC_MAX_LMS];
    int verbose;                   /* the load's verbosity (-v; 2: which path each file is) */
    float w_reo[DEC_MAX_REO_SCORES];
    /* search settings */
    int stack_size, pop_limit, distortion_limit, max_phrase_len;
    float beam_width;              /* ln of Moses's beam-threshold (0 keeps every hypothesis) */
    double load_seconds;
    size_t cap_features;           /* features' room (smt_grow; last: the hot fields keep their
                                    * places) */
};

/* Finds (computing and publishing it on a miss) the ranked candidates of the source phrase src
 * (n ids of table t's source vocabulary) in table t. *out is NULL or has n = 0 when the table has
 * no such phrase. Thread-safe, lock-free. */
int dec_cands_get(dec_model *m, unsigned t, const uint32_t *src, size_t n, const dec_centry **out,
                  smt_err *err);
void dec_cache_free(dec_model *m);

/* The word of a model target id (a table word, or a passed-through source token of the
 * sentence). */
const char *dec_word(const dec_model *m, uint32_t id, const char *const *src_tokens,
                     const uint32_t *src_lens, size_t *len);
/* The model target id of a word, or SMT_VOCAB_NONE when no table has it. */
uint32_t dec_tgt_find(const dec_model *m, const char *w, size_t len);

/* Orientation of cur after prev (prev_start < 0: the first phrase), Moses's LRModel. */
static inline int dec_orientation(int type, int prev_start, int prev_end, int cur_start,
                                  int cur_end)
{
    if (prev_start < 0) {
        if (type == DEC_LR_LEFTRIGHT)
            return 0; /* R */
        return cur_start == 0 ? 0 : (type == DEC_LR_MSD ? 2 : type == DEC_LR_MSLR ? 3 : 1);
    }
    if (type == DEC_LR_LEFTRIGHT)
        return prev_end <= cur_start ? 0 : 1;
    if (cur_start == prev_end + 1)
        return 0; /* M */
    if (type == DEC_LR_MONO)
        return 1; /* NM */
    if (prev_start == cur_end + 1)
        return 1; /* S */
    if (type == DEC_LR_MSD)
        return 2; /* D */
    return cur_start > prev_end ? 3 : 2; /* DR : DL */
}

/* Moses's ComputeDistortionDistance (prev_end < 0: nothing translated yet). */
static inline int dec_distortion(int prev_end, int cur_start)
{
    int d = prev_end < 0 ? cur_start : prev_end - cur_start + 1;
    return d < 0 ? -d : d;
}

/* Moses's early distortion cost (Moore & Quirk 2007; DistortionScoreProducer with
 * [early-distortion-cost]): the distortion feature (≤ 0) of [cur_start, cur_end] after a phrase
 * ending at prev_end (-1: none yet), first_gap being the first uncovered word before it. 0 when
 * the phrase starts at the first gap; -2·len when it lies left of the previous phrase (its cost
 * was paid when the gap was left); else -2·(the words it skips + len), counted from the end of
 * the translated prefix when the previous phrase lies in it, else from the previous phrase. */
static inline int dec_distortion_early(int prev_end, int first_gap, int cur_start, int cur_end)
{
    int prefix_end = first_gap - 1, len = cur_end - cur_start + 1;
    if (cur_start == prefix_end + 1)
        return 0;
    if (cur_end < prev_end)
        return -2 * len;
    if (prev_end <= prefix_end)
        return -2 * (cur_start - prefix_end - 1 + len);
    return -2 * (cur_start - prev_end - 1 + len);
}

/* ---------------------------------------------------------------- search */

/* What a worker's lines show (dec_run_options' output settings). */
typedef struct dec_output {
    int seg_best, seg_nbest;       /* the source span of each phrase (Moses's -t) */
    int align_inline, align_nbest; /* the word alignment in the 1-best / n-best lines
                                    * (-print-alignment-info, -print-alignment-info-in-n-best) */
    int mark_unknown;              /* -mark-unknown: passed-through words as prefix word suffix */
    int drop_unknown;              /* -drop-unknown: unknown words without a digit give nothing */
    int monotone_punct;            /* -monotone-at-punctuation: walls around punctuation */
    int hypo_score;                /* -output-hypo-score: the score before the 1-best's words */
    unsigned nbest_factor;         /* -n-best-factor (0: unlimited) */
    int xml_mode;                  /* -xml-input (dec_xml.h's DEC_XML_*) */
    char *xml_lb, *xml_rb;         /* -xml-brackets (the worker's copies) */
    char *unk_prefix, *unk_suffix; /* the worker's copies */
} dec_output;

typedef struct dec_search dec_search;
int dec_search_create(dec_search **out, dec_model *m, smt_err *err);
void dec_search_free(dec_search *s);

/* Decodes one sentence of n tokens; keeps the search graph until the next call.
 * Returns 0, SMT_ERR_LIMIT (too long) or another SMT_ERR_*. */
int dec_search_run(dec_search *s, char **tokens, const uint32_t *lens, size_t n, int want_nbest,
                   smt_err *err);

/* Appends the 1-best (Moses's format: every word followed by a space; " ||| points" after them
 * with -print-alignment-info) and its newline to buf; align (may be NULL) receives the word
 * alignment's points and a newline (only the newline when there is no 1-best). */
int dec_search_best(dec_search *s, smt_buf *buf, smt_buf *align, double *score);
/* The 1-best as data, with its word alignment (an empty translation when there is none). */
int dec_search_best_data(dec_search *s, dec_translation *out);

/* dec_translate, the word alignment of the 1-best also appended to align (may be NULL): its
 * points and a newline, an empty line for a refused sentence; and the sentence's unknown source
 * words to unk (may be NULL; -output-unknowns): each followed by a space, then a newline. */
int dec_translate_align(dec_worker *w, const char *line, size_t len, uint64_t sent_id,
                        smt_buf *best, smt_buf *align, smt_buf *unk, smt_buf *nbest,
                        size_t n_best, int distinct, double *score, smt_err *err);

/* Appends up to n n-best lines "id ||| words ||| features ||| total\n" to buf. */
int dec_search_nbest(dec_search *s, uint64_t id, size_t n, int distinct, smt_buf *buf);
/* The same list as data: out->entries[0 .. out->n), each with its word alignment. */
int dec_search_nbest_data(dec_search *s, size_t n, int distinct, dec_nbest *out);

/* The progress line of dec_run_input: "fastsmt: L lines, W words, x lines/s, y words/s, s s".
 * Returns what snprintf returns. */
int dec_progress_format(char *buf, size_t size, uint64_t lines, uint64_t words, double seconds);

#endif
