/* dec_ff.h — the decoder's features, each defined once (Moses2's FF/).
 *
 * A feature is one dec_ff, in its own file (ff_*.c), listed once in the table of ff.c. Its hooks
 * (each may be NULL) are every place the decoder scores it:
 *   option    a translation option is built (cands.c; an unknown word's in search.c): adds the
 *             weighted in-isolation score to the option's static score;
 *   estimate  adds the weighted estimate that is not part of the static score (the LM of the
 *             phrase alone) to the option's future score;
 *   expand    a hypothesis is expanded (search.c); complete: it covers the whole sentence (the
 *             final </s>); adds the weighted score of h after prev and keeps in h what the feature
 *             keeps (its LM states, its LM scores);
 *   path      a node of an n-best path (nbest.c): adds the feature's unweighted values of h after
 *             prev (the node before it on the path) to the dense vector sc, from what the search
 *             computed (the LM is not queried again).
 * The table's order is the order of evaluation (it fixes the float arithmetic, so output stays
 * byte-identical); the order features are printed in is the ini's (dec_model.features). */
#ifndef DEC_FF_H
#define DEC_FF_H

#include "dec_search.h"

/* A translation option as the option and estimate hooks see it. */
typedef struct dec_option {
    uint32_t n_words;
    const float *scores;      /* the table's probabilities (n_scores); NULL: an unknown word */
    const uint32_t *lm_words; /* n_lms * n_words LM ids, LM by LM; NULL: no LM estimate */
} dec_option;

struct dec_ff {
    const char *name; /* Moses's feature type */
    int (*present)(const dec_model *m);
    void (*option)(const dec_model *m, const dec_option *o, float *score);
    void (*estimate)(const dec_model *m, const dec_option *o, float *future);
    void (*expand)(dec_search *s, hyp *h, const hyp *prev, int complete, double *score);
    void (*path)(const dec_model *m, const hyp *h, const hyp *prev, float *sc);
};

/* The features (ff_*.c). */
extern const dec_ff dec_ff_tm, dec_ff_word_penalty, dec_ff_phrase_penalty, dec_ff_unknown,
    dec_ff_lm, dec_ff_distortion, dec_ff_reordering;

/* An option's static and future scores: every option hook, then every estimate hook. */
static inline void dec_ff_option(const dec_model *m, const dec_option *o, float *stat,
                                 float *future)
{
    float s = 0;
    for (unsigned i = 0; i < m->n_ff_option; i++)
        m->ff_option[i]->option(m, o, &s);
    *stat = s;
    for (unsigned i = 0; i < m->n_ff_estimate; i++)
        m->ff_estimate[i]->estimate(m, o, &s);
    *future = s;
}

#endif
