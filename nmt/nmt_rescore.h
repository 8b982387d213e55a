/* nmt_rescore.h — n-best parsing and BLEU statistics, shared by rescoring, the tool's weight search
 * and the tests (private to the nmt component). */
#ifndef NMT_RESCORE_H
#define NMT_RESCORE_H

#include "nmt.h"

/* One n-best line, parsed in place (the pointers point into the line). */
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
 * Returns 1 and sets *value, 0 when the feature is absent, -1 when its score is not a number. */
int nmt_nbest_feature(const char *feats, const char *name, double *value);

/* 1 when paths a and b name the same existing file (after links), else 0 ("-" is never a file). */
int nmt_same_file(const char *a, const char *b);

#endif
