/* ff_tm.h — the phrase tables' scores: ln of the table's probabilities, floored at -100
 * (dec_floor_ln), Moses's PhraseDictionary. Each table has its own feature (TranslationModel<k>):
 * an option carries the scores of the table that gave it, and the other tables' features are 0
 * for it (Moses's ScoreComponentCollection: a feature never assigned stays 0). An unknown word has
 * none (see ff_unknown.h). */
#ifndef DEC_FF_TM_H
#define DEC_FF_TM_H

/* included by dec_ff.h only */

static inline int ff_tm_present(const dec_model *m)
{
    (void)m;
    return 1; /* a model has at least one phrase table */
}

static inline void ff_tm_option(const dec_model *m, const dec_option *o, float *score)
{
    const dec_table *t = &m->tables[o->table];
    const double *w = m->weights + t->off_tm;
    if (o->tm_ln) { /* an XML option: ln(prob) / n_scores in each score (Moses's SetXMLScore) */
        for (unsigned k = 0; k < t->n_scores; k++)
            *score += (float)w[k] * o->tm_ln[k];
        return;
    }
    if (!o->scores)
        return;
    for (unsigned k = 0; k < t->n_scores; k++)
        *score += (float)w[k] * dec_floor_ln(o->scores[k]);
}

static inline void ff_tm_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    const dec_cand *c = h->cand;
    if (c->tm) {
        const dec_table *t = &m->tables[c->table];
        for (unsigned k = 0; k < t->n_scores; k++)
            sc[t->off_tm + k] += c->tm[k];
    }
}

#endif
