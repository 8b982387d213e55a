/* ff_phrase_penalty.h — Moses's PhrasePenalty: 1 per phrase. */
#ifndef DEC_FF_PHRASE_PENALTY_H
#define DEC_FF_PHRASE_PENALTY_H

/* included by dec_ff.h only */

static inline int ff_phrase_penalty_present(const dec_model *m) { return m->has_pp; }

static inline void ff_phrase_penalty_option(const dec_model *m, const dec_option *o, float *score)
{
    (void)o;
    *score += (float)m->weights[m->off_pp];
}

static inline void ff_phrase_penalty_path(const dec_model *m, const hyp *h, const hyp *prev,
                                          float *sc)
{
    (void)h;
    (void)prev;
    sc[m->off_pp] += 1;
}

/* Its ini line: one score, no key of its own. */
DEC_FF_SINGLE_SCORE(phrase_penalty, "PhrasePenalty", has_pp, off_pp, 1, 0)

#endif
