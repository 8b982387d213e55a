/* ppt_reorder.h — private: merging a lexicalized reordering table into the phrase pairs while the
 * phrase table is built (ppt_reorder.c). It sees the payload and the vocabularies it is handed,
 * never the builder: ppt_build.c calls it, it calls nothing of the build. */
#ifndef PPT_REORDER_H
#define PPT_REORDER_H

#include <stddef.h>
#include <stdint.h>

#include "ppt_format.h"
#include "smt_buf.h"
#include "smt_error.h"
#include "smt_lines.h"
#include "smt_vocab.h"

typedef struct ppt_reorder {
    smt_lines *lines;
    const char *path;
    smt_err *err;
    ppt_build_report *rep; /* reordering_lines and input_bytes as lines are read; no_reordering
                            * and orphan_reordering at the end */
    uint32_t nr;           /* scores per entry, as on the first line */

    /* the current line */
    int valid; /* 0 at the end of the table */
    const char *key; /* "source ||| target" */
    size_t key_len;
    float scores[PPT_MAX_SCORES];

    /* what the lockstep merge left over */
    smt_buf left_text;  /* keys, NUL-separated */
    uint64_t *left_off; /* n_left offsets into left_text */
    size_t cap_left_off;
    float *left_scores; /* n_left * nr */
    size_t n_left, cap_left;
} ppt_reorder;

/* Opens the table at path (smt_lines flags) and reads its first line, so that nr is known. r is
 * zeroed first; ppt_reorder_close frees it whatever this returns. Returns 0 or an SMT_ERR_*. */
int ppt_reorder_open(ppt_reorder *r, const char *path, unsigned lines_flags, ppt_build_report *rep,
                     smt_err *err);

/* The scores of the pair whose line starts with key ("source ||| target", key_len bytes), the
 * tables being read in step: *matched = 1 and the nr scores in dst, or *matched = 0 when the table
 * has no entry for it here (ppt_reorder_finish may still find one). Returns 0 or an SMT_ERR_*. */
int ppt_reorder_match(ppt_reorder *r, const char *key, size_t key_len, float *dst, int *matched);

/* After the phrase table: places every entry the lockstep merge passed over on its pair among the
 * n_unmatched pairs that got no entry (unmatched[2u]: the offset of pair u's group in payload,
 * unmatched[2u + 1]: its record's; ns scores precede the reordering scores in a record), source
 * and target words mapped with src and tgt. Returns 0 or an SMT_ERR_*. */
int ppt_reorder_finish(ppt_reorder *r, uint32_t *payload, const uint64_t *unmatched,
                       size_t n_unmatched, const smt_vocab_builder *src,
                       const smt_vocab_builder *tgt, uint32_t ns);

/* Closes the table and frees what r holds. */
void ppt_reorder_close(ppt_reorder *r);

#endif
