/* dec_internal.h — the decoder's private interfaces.
 *
 * The search talks to its models through two small interfaces, so that the same search runs on
 * in-memory models read from text (tests, text moses.ini files) and on the mapped binaries of
 * probingpt and glm:
 *   dec_lm  an n-gram LM with KenLM's right-state semantics (log10 scores);
 *   dec_pt  a phrase table with integrated lexicalized reordering scores (raw probabilities).
 * Both are immutable once loaded and queried from many threads without locks. */
#ifndef DEC_INTERNAL_H
#define DEC_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "decoder.h"
#include "moses_ini.h"
#include "smt_error.h"
#include "smt_vocab.h"

#define DEC_LM_MAX_ORDER 6
#define DEC_MAX_LMS 4
#define DEC_MAX_TM_SCORES 32
#define DEC_MAX_REO_SCORES 8
#define DEC_LOWEST_SCORE (-100.0f) /* Moses's LOWEST_SCORE: the floor of ln(prob) */
#define DEC_LN10 2.30258509299405f /* Moses's TransformLMScore factor */
/* Target word ids with this bit set are source tokens passed through (unknown words). */
#define DEC_PASS_BIT 0x80000000u

/* ---------------------------------------------------------------- language model */

/* KenLM's right state: the last words, most recent first, shortened to what can still extend,
 * and their log10 backoffs. Same layout as glm_state, so the glm adapter copies it bytewise.
 * Unused entries are zero so states hash and compare bytewise on words[0..length). */
typedef struct dec_lm_state {
    uint32_t words[DEC_LM_MAX_ORDER - 1];
    float backoff[DEC_LM_MAX_ORDER - 1];
    uint8_t length;
} dec_lm_state;

typedef struct dec_lm dec_lm;
struct dec_lm {
    unsigned order;
    uint32_t bos, eos; /* ids of <s> and </s>; 0 is <unk> */
    /* The id of a word, 0 when unknown. */
    uint32_t (*index)(const dec_lm *lm, const char *word, size_t len);
    /* log10 p(w | in), KenLM's FullScore; writes the new state to out (out may equal in). */
    float (*score)(const dec_lm *lm, const dec_lm_state *in, uint32_t w, dec_lm_state *out);
    void (*free)(dec_lm *lm);
    void *impl;
    const char *kind; /* "arpa" (in memory) or "glm" */
};

/* Reads an ARPA file (plain or gzip) into an in-memory hash LM with KenLM's semantics.
 * warn (may be NULL) receives a warning when <unk> is missing. Returns 0 or SMT_ERR_*. */
int dec_lm_arpa_load(dec_lm **out, const char *path, FILE *warn, smt_err *err);

/* Begin-of-sentence state (KenLM's BeginSentenceState). */
void dec_lm_begin_state(const dec_lm *lm, dec_lm_state *s);

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

/* An iteration over the targets of one source phrase; the fields are the table's own. */
typedef struct dec_pt_iter {
    const void *table;
    const void *cursor;
    uint64_t left;
    uint64_t aux;
    uint64_t opaque[12]; /* room for a table's own iterator (probingpt's ppt_targets) */
} dec_pt_iter;

typedef struct dec_pt dec_pt;
struct dec_pt {
    uint32_t n_scores, n_reo;
    uint32_t max_src_len; /* longest source phrase in the table (lookups stop there) */
    uint64_t n_sources;
    const smt_vocab *src_vocab, *tgt_vocab;
    /* Finds the targets of the source phrase given as source-vocabulary ids. Returns 1 and sets *it
     * when found, 0 when not, or a negative SMT_ERR_* (a damaged file). */
    int (*lookup)(const dec_pt *pt, const uint32_t *src, size_t n, dec_pt_iter *it, smt_err *err);
    /* Next target of an iteration: 1 and *e filled, 0 at the end, or SMT_ERR_CORRUPT (err filled)
     * when the group is damaged: the caller must not use the targets it already had. */
    int (*next)(dec_pt_iter *it, dec_pt_entry *e, smt_err *err);
    void (*free)(dec_pt *pt);
    void *impl;
    const char *kind; /* "text" (in memory) or "ppt" */
};

/* Reads a Moses phrase table and (when reo_path is not NULL) its lexicalized reordering table
 * into memory. n_scores: the number of scores per line the ini declares (0: take the first line's).
 * n_reo: reordering scores per line (checked). Returns 0 or SMT_ERR_* naming file:line. */
int dec_pt_text_load(dec_pt **out, const char *pt_path, unsigned n_scores, const char *reo_path,
                     unsigned n_reo, smt_err *err);

/* ---------------------------------------------------------------- adapters */

/* 1 when this build links probingpt and glm. */
int dec_have_binary_models(void);
/* verify: check every checksum and the whole file at open (fastsmt --verify) */
int dec_pt_ppt_open(dec_pt **out, const char *path, int verify, smt_err *err);
int dec_lm_glm_open(dec_lm **out, const char *path, int verify, smt_err *err);
/* Binarizes with probingpt / glm (SMT_ERR_UNSUPPORTED when not linked). */
int dec_ppt_build(const char *pt, const char *reo, const char *out, smt_err *err);
int dec_glm_build(const char *arpa, const char *out, smt_err *err);

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
    const uint32_t *words;        /* target ids (the table's vocabulary) */
    const uint32_t *lm_words;     /* n_lms * n_words LM ids, LM by LM */
    const float *tm;              /* ln, floored: n_scores */
    const float *reo;             /* ln, floored: n_reo, or NULL (no entry: scores 0) */
    float static_score;           /* weighted TM + word penalty + phrase penalty */
    float future;                 /* static_score + weighted LM estimate (Moses's future score) */
    const uint8_t *align;         /* the table's word alignment: n_align (source, target) pairs */
    uint16_t n_words, n_align;
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

struct dec_model {
    dec_ini *ini;
    dec_pt *pt;
    dec_lm *lms[DEC_MAX_LMS];
    unsigned n_lms;
    uint32_t **tgt2lm;            /* per LM: table target id -> LM id */
    /* feature layout */
    dec_feature *features;
    unsigned n_features, n_scores; /* n_scores: length of the dense score vector */
    double *weights;               /* n_scores */
    unsigned off_tm, off_reo, off_dist, off_lm[DEC_MAX_LMS], off_wp, off_pp, off_uwp;
    int has_reo, has_dist, has_wp, has_pp, has_uwp;
    int lr_type, lr_dir, lr_types; /* lr_types: orientations per direction (2, 3 or 4) */
    float w_lm[DEC_MAX_LMS], w_dist, w_uwp;
    float w_reo[DEC_MAX_REO_SCORES];
    /* search settings */
    int stack_size, pop_limit, distortion_limit, table_limit, max_phrase_len;
    int seg_best, seg_nbest;       /* report the source span of each phrase (Moses's -t) */
    int align_best, align_nbest;   /* report the word alignment (-print-alignment-info...) */
    int align_inline;              /* the 1-best line keeps it (else it only goes to align_file) */
    FILE *align_file;
    int mark_unknown;              /* -mark-unknown: passed-through words as prefix word suffix */
    const char *unk_prefix, *unk_suffix;
    float beam_width;              /* ln of Moses's beam-threshold (0 keeps every hypothesis) */
    /* the candidate cache: open addressing, lock-free insert (entries immutable once published) */
    _Atomic(dec_centry *) *cache;
    uint64_t cache_mask;
    atomic_uint_fast64_t n_misses; /* source phrases remembered as absent from the table */
    double load_seconds;
};

/* Finds (computing and publishing it on a miss) the ranked candidates of the source phrase src
 * (n ids). *out is NULL or has n = 0 when the table has no such phrase. Thread-safe, lock-free. */
int dec_cands_get(dec_model *m, const uint32_t *src, size_t n, const dec_centry **out, smt_err *err);
void dec_cache_free(dec_model *m);

/* The word of a target id (a table word, or a passed-through source token of the sentence). */
const char *dec_word(const dec_model *m, uint32_t id, const char *const *src_tokens,
                     const uint32_t *src_lens, size_t *len);

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

/* ---------------------------------------------------------------- search */

typedef struct dec_search dec_search;
int dec_search_create(dec_search **out, dec_model *m, smt_err *err);
void dec_search_free(dec_search *s);

/* Decodes one sentence of n tokens; keeps the search graph until the next call.
 * Returns 0, SMT_ERR_LIMIT (too long) or another SMT_ERR_*. */
int dec_search_run(dec_search *s, char **tokens, const uint32_t *lens, size_t n, int want_nbest,
                   smt_err *err);

/* Appends the 1-best (Moses's format: every word followed by a space) to buf. */
int dec_search_best(dec_search *s, dec_buf *buf, double *score);

/* Appends up to n n-best lines "id ||| words ||| features ||| total\n" to buf. */
int dec_search_nbest(dec_search *s, uint64_t id, size_t n, int distinct, dec_buf *buf);

/* The progress line of dec_run_input: "fastsmt: L lines, W words, x lines/s, y words/s, s s".
 * Returns what snprintf returns. */
int dec_progress_format(char *buf, size_t size, uint64_t lines, uint64_t words, double seconds);

/* Appends to buf; returns 0 or SMT_ERR_NOMEM. */
int dec_buf_append(dec_buf *b, const char *s, size_t len);
int dec_buf_printf(dec_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#endif
