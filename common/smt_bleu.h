/* smt_bleu.h — corpus BLEU as Moses's multi-bleu.perl computes it: clipped 1- to 4-gram precisions
 * (each hypothesis n-gram clipped by its largest count in any reference), their geometric mean, and
 * the brevity penalty against the reference length closest to each hypothesis (the shorter on ties).
 * Sentences are blank-separated tokens; n-grams are compared as strings (exact, no hashing).
 * Sentence statistics add up, so a tuner can re-rank and re-score cheaply.
 * Thread-safety: all functions are reentrant. */
#ifndef SMT_BLEU_H
#define SMT_BLEU_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SMT_BLEU_MAX_REFS 8

/* Sufficient statistics of BLEU: clipped matches and totals per order, lengths. */
typedef struct smt_bleu_stat {
    long match[4], total[4];
    long hyp_len, ref_len;
} smt_bleu_stat;

/* Statistics of one hypothesis against nref references (at most SMT_BLEU_MAX_REFS; more are
 * ignored). */
void smt_bleu_stats(const char *hyp, const char *const *refs, int nref, smt_bleu_stat *st);

/* sum += s. */
void smt_bleu_add(smt_bleu_stat *sum, const smt_bleu_stat *s);

/* BLEU in percent from summed statistics (0 when some order has no match). */
double smt_bleu_score(const smt_bleu_stat *sum);

/* Corpus BLEU of n hypotheses; refs[r][i] is reference r of sentence i (nref reference sets). */
double smt_bleu_corpus(size_t n, const char *const *hyp, const char *const *const *refs, int nref);

#ifdef __cplusplus
}
#endif
#endif
