/* ppt_build.h — private: the state of a build, shared by ppt_build.c (phrase table, groups, file)
 * and ppt_reorder.c (merging the reordering table). ppt_build.c calls ppt_reorder.c; what both use
 * is defined here, so ppt_reorder.c never calls back up. */
#ifndef PPT_BUILD_H
#define PPT_BUILD_H

#include <stdint.h>
#include <stdlib.h>

#include "ppt_format.h"
#include "ppt_text.h"
#include "smt_buf.h"
#include "smt_lines.h"
#include "smt_vocab.h"

typedef struct {
    uint32_t *v;
    size_t n, cap;
} ppt_u32v;

/* Ensures room for `extra` more words; returns 0 or -1 (out of memory). */
static inline int ppt_u32v_reserve(ppt_u32v *b, size_t extra)
{
    if (b->n + extra <= b->cap)
        return 0;
    size_t cap = b->cap ? b->cap : 1024;
    while (cap < b->n + extra)
        cap += cap / 2;
    uint32_t *v = realloc(b->v, cap * sizeof *v);
    if (!v)
        return -1;
    b->v = v;
    b->cap = cap;
    return 0;
}

/* A target of the group being assembled. */
typedef struct {
    size_t off;      /* in cur (words) */
    uint32_t words;
    uint8_t unmatched; /* still has the default reordering scores */
    double rank;     /* weights . ln(scores), for table_limit */
    size_t index;    /* input order, the tie-break */
} ppt_tmeta;

/* One chunk of a source group in the payload; input that is not grouped by source gives several
 * chunks of one source, merged at the end. */
typedef struct {
    uint64_t key;
    uint64_t off;  /* payload words */
    uint64_t next; /* next chunk of the same source, UINT64_MAX at the last */
    uint64_t last; /* (head chunks) the last chunk, for appending */
    int head;
} ppt_chunk;

typedef struct ppt_builder {
    const ppt_build_options *opt;
    ppt_build_report *rep;
    smt_err *err;
    smt_lines *pt, *rt;
    const char *pt_path, *rt_path;
    uint32_t ns, nr;         /* scores, reordering scores */
    float rdefault[PPT_MAX_SCORES];
    float weights[PPT_MAX_SCORES];
    uint64_t mask;

    smt_vocab_builder *src, *tgt, *extra, *align_text;
    ppt_u32v align_off;      /* points; n+1 */
    uint8_t *align_pts;
    size_t n_pts, cap_pts;
    uint8_t *align_max;      /* per alignment: max source pos + 1, max target pos + 1 */
    size_t cap_align_max;

    ppt_u32v payload;
    ppt_chunk *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t *index;         /* head chunk ids + 1, 0 empty; power of two */
    uint64_t index_mask;
    uint64_t n_heads;

    /* the group being assembled */
    int have_cur;
    uint32_t cur_src[PPT_MAX_PHRASE_LEN];
    uint32_t cur_src_len;
    uint32_t max_src_len;    /* the longest source so far */
    char *cur_text;
    size_t cur_text_len, cur_text_cap;
    ppt_u32v cur;
    ppt_tmeta *meta;
    size_t n_meta, cap_meta;

    /* reordering: current line of the reordering table and what the lockstep merge left over */
    int rt_valid;
    const char *rt_key;
    size_t rt_key_len;
    float rt_scores[PPT_MAX_SCORES];
    smt_buf left_text;       /* keys of leftover entries, NUL-separated */
    uint64_t *left_off;      /* n_left offsets into left_text */
    size_t cap_left_off;
    float *left_scores;      /* n_left * nr */
    size_t n_left, cap_left;
    uint64_t *unmatched;     /* pairs (group offset, record offset) in payload */
    size_t n_unmatched, cap_unmatched;
    uint64_t rt_matched;
} ppt_builder;

/* ---- shared by both files (ppt_build.c calls ppt_reorder.c, never the reverse) */

static inline int ppt_oom(ppt_builder *b)
{
    return smt_err_set(b->err, SMT_ERR_NOMEM, "probingpt build: out of memory");
}

/* Words of s to ids of an existing vocabulary; returns 0, or -1 when a word is absent or there are
 * too many (the reordering merge uses this: an unknown word means no such phrase pair). */
static inline int ppt_map_words(const smt_vocab_builder *v, ppt_span s, uint32_t *ids, uint32_t *n)
{
    smt_vocab view = smt_vocab_builder_view(v);
    ppt_span w;
    *n = 0;
    while (ppt_next_word(&s, &w)) {
        if (*n == PPT_MAX_PHRASE_LEN)
            return -1;
        uint32_t id = smt_vocab_find(&view, w.b, (size_t)(w.e - w.b));
        if (id == SMT_VOCAB_NONE)
            return -1;
        ids[(*n)++] = id;
    }
    return 0;
}

/* ---- ppt_reorder.c: merging the reordering table */
int ppt_rt_start(ppt_builder *b);                                   /* opens, reads line 1 */
int ppt_rt_match(ppt_builder *b, const char *key, size_t key_len, float *dst, int *matched);
int ppt_rt_finish(ppt_builder *b);                                  /* phase 2 */

#endif
