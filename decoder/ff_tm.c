/* ff_tm.c — the phrase table's scores: ln of the table's probabilities, floored at -100
 * (dec_floor_ln), Moses's PhraseDictionary. An unknown word has none (see ff_unknown.c). */
#include "dec_ff.h"

static int present(const dec_model *m)
{
    (void)m;
    return 1; /* a model has one phrase table (its scores may be none) */
}

static void option(const dec_model *m, const dec_option *o, float *score)
{
    if (!o->scores)
        return;
    const double *w = m->weights + m->off_tm;
    for (unsigned k = 0; k < m->pt->n_scores; k++)
        *score += (float)w[k] * dec_floor_ln(o->scores[k]);
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    const dec_cand *c = h->cand;
    if (c->tm)
        for (unsigned k = 0; k < m->pt->n_scores; k++)
            sc[m->off_tm + k] += c->tm[k];
}

const dec_ff dec_ff_tm = {"PhraseDictionary", present, option, NULL, NULL, path};
