/* dec_xml.h — private: Moses's XML input markup (-xml-input), parsed from one input line.
 *
 * `src <tag translation="a b||c" prob="0.8||0.2">words</tag> more` becomes the clean line
 * `src words more` and one option per alternative translation over the tagged span (word
 * positions of the clean line; a span="i-j" or span="i" attribute overrides them). As in Moses
 * (XmlOption.cpp), the legacy attribute english= adds alternatives, an alternative's score is
 * ln(prob) floored at -100 (prob 1 when absent), a tag over no word is skipped, and a markup error
 * (an unclosed or mismatched tag, a missing bracket, unequal counts of translations and
 * probabilities) fails the line. <wall/> and <zone>...</zone> are Moses's reordering constraints
 * (ReorderingConstraint: a wall after word i, a zone of words to translate without leaving it);
 * <ne> (a placeholder) has no effect without [placeholder-factor], as in Moses; <update> and
 * <weight-overwrite> are refused by name. */
#ifndef DEC_XML_H
#define DEC_XML_H

#include <stddef.h>
#include <stdint.h>

#include "smt_buf.h"
#include "smt_error.h"

/* -xml-input's modes (Moses's XmlInputType): pass-through leaves markup as words. */
enum { DEC_XML_PASS = 0, DEC_XML_IGNORE, DEC_XML_EXCLUSIVE, DEC_XML_INCLUSIVE, DEC_XML_CONSTRAINT };

typedef struct dec_xml_opt {
    uint32_t start, end;   /* source words, inclusive */
    uint32_t first, n;     /* target words: word_off[first .. first + n) of dec_xml.words */
    float score;           /* ln(prob) floored at -100, as a float (Moses's TransformScore) */
} dec_xml_opt;

typedef struct dec_xml {
    smt_buf clean;         /* the line without markup */
    smt_buf words;         /* the options' target words, each NUL-terminated */
    uint32_t *word_off;    /* start of each word in words */
    size_t n_words, cap_words;
    dec_xml_opt *opts;
    size_t n_opts, cap_opts;
    uint32_t *walls;       /* a wall after each of these words (Moses's xmlWalls; positions past
                            * the sentence are dropped, as Moses drops them) */
    size_t n_walls, cap_walls;
    uint32_t *zones;       /* zone k: words zones[2k] .. zones[2k + 1], inclusive */
    size_t n_zones, cap_zones;
} dec_xml;

/* Parses line (len bytes) with the brackets lb/rb; keep: store the options (not for -xml-input
 * ignore; walls and zones are kept in every mode but pass-through, as in Moses). Returns 0, SMT_ERR_PARSE (the message says what is wrong with the markup) or
 * SMT_ERR_NOMEM. x is reused from line to line. */
int dec_xml_parse(dec_xml *x, const char *line, size_t len, const char *lb, const char *rb,
                  int keep, smt_err *err);
void dec_xml_free(dec_xml *x);

/* The mode named by s ("pass-through", "ignore", "exclusive", "inclusive", "constraint"), or -1. */
int dec_xml_mode(const char *s);

#endif
