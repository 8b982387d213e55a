/* ff_word_penalty.h — Moses's WordPenalty: -1 per target word. */
#ifndef DEC_FF_WORD_PENALTY_H
#define DEC_FF_WORD_PENALTY_H

/* included by dec_ff.h only */

static inline int ff_word_penalty_present(const dec_model *m) { return m->has_wp; }

static inline void ff_word_penalty_option(const dec_model *m, const dec_option *o, float *score)
{
    *score += (float)m->weights[m->off_wp] * -(float)o->n_words;
}

static inline void ff_word_penalty_path(const dec_model *m, const hyp *h, const hyp *prev,
                                        float *sc)
{
    (void)prev;
    sc[m->off_wp] -= h->cand->n_words;
}

/* Its ini line: one score, no key of its own. */
DEC_FF_SINGLE_SCORE(word_penalty, "WordPenalty", has_wp, off_wp, 1, 0)

#endif
