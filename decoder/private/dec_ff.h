/* dec_ff.h — the decoder's features, each defined once (Moses2's FF/), and the table of them.
 *
 * A feature is one header, private/ff_NAME.h, whose static inline functions ff_NAME_HOOK are every
 * place the decoder scores it, and one entry in DEC_FEATURES below, which says which hooks it has
 * (1) and so where the drivers call it. The hooks (all but present optional):
 *   present   int (m): whether the model has the feature (the drivers skip it otherwise);
 *   option    void (m, o, float *score): a translation option is built (cands.c; an unknown
 *             word's and an XML option's in translation_options.c and xml_options.c): adds the
 *             weighted in-isolation score to its static score;
 *   estimate  void (m, o, float *future): adds the weighted estimate that is not part of the static
 *             score (the LM of the phrase alone) to the option's future score;
 *   expand    void (s, h, prev, complete, double *score): a hypothesis is expanded (search.c);
 *             complete: it covers the whole sentence (the final </s>); adds the weighted score of
 *             h after prev and keeps in h what the feature keeps (its LM states and scores);
 *   path      void (m, h, prev, float *sc): a node of an n-best path (nbest.c): adds the feature's
 *             unweighted values of h after prev (the node before it on the path) to the dense
 *             vector sc, from what the search computed (the LM is not queried again);
 *   state     uint64_t state_hash(m, h, k) and int state_equal(m, a, b): a stateful feature's
 *             state (search.c's recombination: hypotheses with the same coverage, last end and
 *             equal states of every feature recombine).
 * The drivers below expand the table at compile time: no indirect call in the search's inner
 * loop. The table's order is the order of evaluation (it fixes the float arithmetic, so output
 * stays byte-identical); the order features are printed in is the ini's (dec_model.features). */
#ifndef DEC_FF_H
#define DEC_FF_H

#include <string.h>

#include "dec_search.h"

/* A translation option as the option and estimate hooks see it. */
typedef struct dec_option {
    uint32_t n_words;
    const float *scores;      /* the table's probabilities (n_scores); NULL: an unknown word */
    const uint32_t *lm_words; /* n_lms * n_words LM ids, LM by LM; NULL: no LM estimate */
    const float *tm_ln;       /* the TM scores as ln already (an XML option), or NULL */
    unsigned table;           /* the phrase table whose scores these are (dec_model.tables) */
} dec_option;

#include "ff_distortion.h"
#include "ff_lm.h"
#include "ff_phrase_penalty.h"
#include "ff_reordering.h"
#include "ff_tm.h"
#include "ff_unknown.h"
#include "ff_word_penalty.h"

/* X(name, option, estimate, expand, path, state), in the order of evaluation. */
#define DEC_FEATURES(X)                                                                            \
    X(tm, 1, 0, 0, 1, 0)                                                                           \
    X(word_penalty, 1, 0, 0, 1, 0)                                                                 \
    X(phrase_penalty, 1, 0, 0, 1, 0)                                                               \
    X(unknown, 1, 0, 0, 1, 0)                                                                      \
    X(lm, 1, 1, 1, 1, 1)                                                                           \
    X(distortion, 0, 0, 1, 1, 0)                                                                   \
    X(reordering, 0, 0, 1, 1, 1)

#define DEC_FF_IF_0(...)
#define DEC_FF_IF_1(...) __VA_ARGS__

/* An option's static score (every option hook) and future score (then every estimate hook). */
static inline void dec_ff_option(const dec_model *m, const dec_option *o, float *stat,
                                 float *future)
{
    float s = 0;
#define X(n, op, es, ex, pa, st) DEC_FF_IF_##op(if (ff_##n##_present(m)) ff_##n##_option(m, o, &s);)
    DEC_FEATURES(X)
#undef X
    *stat = s;
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##es(if (ff_##n##_present(m)) ff_##n##_estimate(m, o, &s);)
    DEC_FEATURES(X)
#undef X
    *future = s;
}

/* Adds the weighted scores of the expansion h of prev to *score. */
static inline void dec_ff_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                 double *score)
{
    const dec_model *m = s->m;
    (void)m;
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##ex(if (ff_##n##_present(m)) ff_##n##_expand(s, h, prev, complete, score);)
    DEC_FEATURES(X)
#undef X
}

/* Adds the feature values of path node h after prev to sc. */
static inline void dec_ff_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##pa(if (ff_##n##_present(m)) ff_##n##_path(m, h, prev, sc);)
    DEC_FEATURES(X)
#undef X
}

/* The stateful features' states mixed into the hypothesis hash k. */
static inline uint64_t dec_ff_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##st(if (ff_##n##_present(m)) k = ff_##n##_state_hash(m, h, k);)
    DEC_FEATURES(X)
#undef X
    return k;
}

/* 1 when every stateful feature's states of a and b are equal. */
static inline int dec_ff_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
#define X(n, op, es, ex, pa, st)                                                                   \
    DEC_FF_IF_##st(if (ff_##n##_present(m) && !ff_##n##_state_equal(m, a, b)) return 0;)
    DEC_FEATURES(X)
#undef X
    return 1;
}

#endif
