/* ff_word_penalty.c — Moses's WordPenalty: -1 per target word. */
#include "dec_ff.h"

static int present(const dec_model *m) { return m->has_wp; }

static void option(const dec_model *m, const dec_option *o, float *score)
{
    *score += (float)m->weights[m->off_wp] * -(float)o->n_words;
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    sc[m->off_wp] -= h->cand->n_words;
}

const dec_ff dec_ff_word_penalty = {"WordPenalty", present, option, NULL, NULL, path};
