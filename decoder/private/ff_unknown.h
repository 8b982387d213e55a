/* ff_unknown.h — Moses's UnknownWordPenalty: a source word the table lacks is passed through,
 * scored ln 0 floored (-100); every other option scores 0. */
#ifndef DEC_FF_UNKNOWN_H
#define DEC_FF_UNKNOWN_H

/* included by dec_ff.h only */

static inline int ff_unknown_present(const dec_model *m) { return m->has_uwp; }

static inline void ff_unknown_option(const dec_model *m, const dec_option *o, float *score)
{
    if (!o->scores && !o->tm_ln) /* neither a table's option nor an XML one */
        *score += m->w_uwp * DEC_LOWEST_SCORE;
}

static inline void ff_unknown_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    if (!h->cand->tm)
        sc[m->off_uwp] += DEC_LOWEST_SCORE;
}

/* Its ini line: one score, no key of its own; untuneable unless it says tuneable=true (Moses). */
DEC_FF_SINGLE_SCORE(unknown, "UnknownWordPenalty", has_uwp, off_uwp, 0, 0)

#endif
