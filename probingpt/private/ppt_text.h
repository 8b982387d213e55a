/* ppt_text.h — private: tokenizing the Moses text format (fields, words, numbers, alignments). */
#ifndef PPT_TEXT_H
#define PPT_TEXT_H

#include <stddef.h>
#include <stdint.h>

#include "smt_words.h"

/* A byte range [b, e) of a line. */
typedef struct ppt_span {
    const char *b, *e;
} ppt_span;

#define PPT_FIELDS_MAX 5

/* Splits a line at every "|||" (as Moses does: TokenizeMultiCharSeparator, then trim) into at most
 * PPT_FIELDS_MAX trimmed fields. Returns the number of fields, counting every field after the fifth
 * as one more (so 6 means "extra text follows"); *rest is then the raw text after the fifth "|||",
 * kept verbatim so that dump reproduces it. Carriage returns ending the line are dropped first. */
int ppt_split_fields(const char *line, size_t len, ppt_span f[PPT_FIELDS_MAX], ppt_span *rest);

/* The next word of s (smt_words.h, Moses's separators: spaces and tabs). Returns 0 at the end. */
static inline int ppt_next_word(ppt_span *s, ppt_span *word)
{
    size_t len;
    if (!smt_word_next(&s->b, s->e, SMT_WS_BLANK, &word->b, &len))
        return 0;
    word->e = word->b + len;
    return 1;
}

/* Parses the whole of [b, e) as a finite float, giving exactly the float strtof would for a decimal
 * (a fast path for the short decimals Moses writes, common/smt_num's strict smt_parse_float
 * otherwise: no hex, no nan, no inf). Returns 0, or -1 when the text is not a finite number. */
int ppt_parse_float(const char *b, const char *e, float *out);

/* Parses whitespace-separated floats of s into out (at most max). Returns the count, -1 on a bad
 * number (*bad is then its span), or -2 when there are more than max. */
int ppt_parse_floats(ppt_span s, float *out, int max, ppt_span *bad);

/* The score fields of both tables are probabilities: every score must be a finite number >= 0
 * (ln is taken later). One parser for the builder and for the decoder's text tables, so that a
 * file gets one verdict. Returns the count, PPT_NUM_BAD (not a finite number) or PPT_NUM_NEGATIVE
 * with *bad the token, or PPT_NUM_TOO_MANY (more than max). */
enum { PPT_NUM_BAD = -1, PPT_NUM_TOO_MANY = -2, PPT_NUM_NEGATIVE = -3 };
int ppt_parse_probs(ppt_span s, float *out, int max, ppt_span *bad);

/* "bad" or "negative": the word for a PPT_NUM_BAD / PPT_NUM_NEGATIVE token in a message
 * ("file:line: bad score 'nan'"). */
static inline const char *ppt_num_what(int code) { return code == PPT_NUM_NEGATIVE ? "negative" : "bad"; }

/* Parses an alignment field "i-j i-j ..." into pairs (bytes). Returns the number of pairs, or -1
 * when a point is malformed or a position exceeds 254 (*bad is then the point). */
int ppt_parse_alignment(ppt_span s, uint8_t *pairs, int max_pairs, ppt_span *bad);

#endif
