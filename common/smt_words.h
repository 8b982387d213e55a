/* smt_words.h — the one word splitter: words are maximal runs of non-separator bytes, and each
 * format names its separator set. Used by every parser and tokenizer of the tree (ARPA lines,
 * phrase and reordering tables, decoder input, glm query text, n-best lists, BLEU, NMT text), so
 * that "what is a word" has one definition per format and one implementation.
 *
 * The sets:
 *   SMT_WS_BLANK  space and tab: Moses's Tokenize(" \t") — phrase/reordering tables, ARPA fields,
 *                 n-best fields.
 *   SMT_WS_LINE   space, tab, CR, LF and NUL: a sentence read as a line (decoder input, BLEU, NMT
 *                 text): a stray carriage return or NUL separates words instead of sticking to one.
 *   SMT_WS_SPACE  every ASCII white space (C's isspace, KenLM's util::kSpaces: space, tab, LF, VT,
 *                 FF, CR) and NUL: text KenLM scores (glm query), moses.ini lines.
 *   SMT_WS_ASCII  every ASCII white space, NUL not among them: Python's bytes.split(), which KenLM's
 *                 Python module splits sentences with.
 *   SMT_WS_COMMA  the comma only: a comma-separated list of a tool's flag (file names, which may
 *                 hold blanks); empty items are skipped.
 * Every function takes explicit bounds: NUL is a byte like any other, a separator only where the
 * set says so. */
#ifndef SMT_WORDS_H
#define SMT_WORDS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

typedef enum smt_ws { SMT_WS_BLANK, SMT_WS_LINE, SMT_WS_SPACE, SMT_WS_ASCII, SMT_WS_COMMA } smt_ws;

/* 1 when c separates words in set (set is a constant at every call: the test folds to a few
 * compares, faster than a table in the parsers' inner loops). */
static inline int smt_is_sep(unsigned char c, smt_ws set)
{
    switch (set) {
    case SMT_WS_BLANK:
        return c == ' ' || c == '\t';
    case SMT_WS_LINE:
        return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\0';
    case SMT_WS_COMMA:
        return c == ',';
    case SMT_WS_ASCII: /* space, 9..13 */
        return c == ' ' || (unsigned)(c - 9) <= 4u;
    default: /* SMT_WS_SPACE: space, 9..13 (tab, LF, VT, FF, CR), NUL */
        return c == ' ' || (unsigned)(c - 9) <= 4u || c == '\0';
    }
}

/* The next word of [*pos, end): returns 1 with *word and *len set and *pos just past the word
 * (on the separator that ends it, or end); returns 0 when only separators remain (*pos = end). */
static inline int smt_word_next(const char **pos, const char *end, smt_ws set, const char **word,
                                size_t *len)
{
    const unsigned char *p = (const unsigned char *)*pos, *e = (const unsigned char *)end;
    while (p < e && smt_is_sep(*p, set))
        p++;
    if (p == e) {
        *pos = end;
        return 0;
    }
    const unsigned char *q = p;
    while (q < e && !smt_is_sep(*q, set))
        q++;
    *word = (const char *)p;
    *len = (size_t)(q - p);
    *pos = (const char *)q;
    return 1;
}

/* [*b, *e) without the separators at either end. */
static inline void smt_trim(const char **b, const char **e, smt_ws set)
{
    const unsigned char *p = (const unsigned char *)*b, *q = (const unsigned char *)*e;
    while (p < q && smt_is_sep(*p, set))
        p++;
    while (q > p && smt_is_sep(q[-1], set))
        q--;
    *b = (const char *)p;
    *e = (const char *)q;
}

/* 1 when [s, s + n) holds only separators (or nothing). */
static inline int smt_words_blank(const char *s, size_t n, smt_ws set)
{
    const char *b = s, *e = s + n;
    smt_trim(&b, &e, set);
    return b == e;
}

/* The number of words of [s, s + n). */
static inline size_t smt_words_count(const char *s, size_t n, smt_ws set)
{
    const char *pos = s, *end = s + n, *w;
    size_t len, k = 0;
    while (smt_word_next(&pos, end, set, &w, &len))
        k++;
    return k;
}

/* The separators of 64 bytes at once, for hot tokenizers (glm's query text): bit i is set when
 * p[i] is a separator of set (i < n) or i >= n. SSE2 where the compiler has it, else the table. */
static inline uint64_t smt_ws_mask64(const char *p, size_t n, smt_ws set)
{
#if defined(__SSE2__)
    char tmp[64];
    if (n < 64) { /* the tail: a copy padded with a byte the set separates */
        memset(tmp, set == SMT_WS_COMMA ? ',' : ' ', sizeof tmp);
        memcpy(tmp, p, n);
        p = tmp;
    }
    const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t'), nul = _mm_setzero_si128(),
                  cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n'), nine = _mm_set1_epi8(9),
                  four = _mm_set1_epi8(4);
    uint64_t m = 0;
    for (int c = 0; c < 4; c++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * c));
        __m128i r = _mm_or_si128(_mm_cmpeq_epi8(v, sp), _mm_cmpeq_epi8(v, tab));
        if (set == SMT_WS_COMMA) {
            r = _mm_cmpeq_epi8(v, _mm_set1_epi8(','));
        } else if (set == SMT_WS_SPACE || set == SMT_WS_ASCII) { /* 9..13 (and NUL for SPACE) */
            __m128i t = _mm_sub_epi8(v, nine);
            r = _mm_or_si128(r, _mm_cmpeq_epi8(_mm_min_epu8(t, four), t));
            if (set == SMT_WS_SPACE)
                r = _mm_or_si128(r, _mm_cmpeq_epi8(v, nul));
        } else if (set == SMT_WS_LINE) {
            r = _mm_or_si128(r, _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)));
            r = _mm_or_si128(r, _mm_cmpeq_epi8(v, nul));
        }
        m |= (uint64_t)(uint16_t)_mm_movemask_epi8(r) << (16 * c);
    }
    return m;
#else
    uint64_t m = 0;
    for (size_t i = 0; i < 64; i++)
        if (i >= n || smt_is_sep((unsigned char)p[i], set))
            m |= 1ull << i;
    return m;
#endif
}

/* All the words of [s, s + n) at once, 64 bytes a step (smt_ws_mask64): the first max words'
 * starts in word[] and lengths in len[]; returns how many words there are (which may exceed max:
 * the caller may grow its arrays and call again). */
size_t smt_words_split(const char *s, size_t n, smt_ws set, const char **word, size_t *len,
                       size_t max);

#endif
