/* nmt_rescore.h — n-best parsing and BLEU statistics, shared by rescoring, the tool's weight search
 * and the tests (private to the nmt component). */
#ifndef NMT_RESCORE_H
#define NMT_RESCORE_H

#include "nmt.h"

/* One n-best line, parsed in place (the pointers point into the line). */
typedef struct nmt_nbest_line {
    long id;
    char *words, *feats, *rest; /* rest: fields after the total, or NULL */
    double total, nmt, new_total;
    long order; /* line number, for a stable ranking */
} nmt_nbest_line;

/* Splits `id ||| words ||| features ||| total [||| rest]` in place. Returns 0 or -1. */
int nmt_nbest_parse(char *line, nmt_nbest_line *out);

/* The first score of feature `name` (as `name= score`) in a feature string; *found says whether. */
double nmt_nbest_feature(const char *feats, const char *name, int *found);

/* Sufficient statistics of BLEU for one sentence: clipped matches and totals per order. */
typedef struct nmt_bleu_stat {
    long match[4], total[4];
    long hyp_len, ref_len;
} nmt_bleu_stat;

void nmt_bleu_stats(const char *hyp, const char *ref, nmt_bleu_stat *st);
/* The same against several references (at most 8): n-gram counts clipped by the largest count in any
 * reference, reference length the closest to the hypothesis (the shorter on ties). */
void nmt_bleu_stats_multi(const char *hyp, const char *const *refs, int nref, nmt_bleu_stat *st);
void nmt_bleu_add(nmt_bleu_stat *sum, const nmt_bleu_stat *s);
/* BLEU in percent from summed statistics (0 when some order has no match). */
double nmt_bleu_from_stats(const nmt_bleu_stat *sum);

#endif
