/* ff_distortion.h — Moses's Distortion: minus the jump from the previous phrase's end to this
 * phrase's start (dec_distortion); with [early-distortion-cost], Moore & Quirk's cost, paid as
 * soon as a gap is left (dec_distortion_early, from the previous phrase's end and the first gap
 * of the coverage before this phrase). */
#ifndef DEC_FF_DISTORTION_H
#define DEC_FF_DISTORTION_H

/* included by dec_ff.h only */

static inline int ff_distortion_present(const dec_model *m) { return m->has_dist; }

__attribute__((noinline, cold)) static int ff_distortion_early_value(const hyp *h, const hyp *prev)
{
    return dec_distortion_early(prev->end, (int)prev->cov->first_gap, h->start, h->end);
}

static inline void ff_distortion_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                        double *score)
{
    (void)complete;
    /* s + w·(−d) is s − w·d exactly: one expression for both costs */
    int v = __builtin_expect(s->m->early_distortion, 0) ? ff_distortion_early_value(h, prev)
                                                         : -dec_distortion(prev->end, h->start);
    *score += (double)s->m->w_dist * v;
}

static inline void ff_distortion_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    if (m->early_distortion)
        sc[m->off_dist] += (float)ff_distortion_early_value(h, prev);
    else
        sc[m->off_dist] -= (float)dec_distortion(prev->end, h->start);
}

/* Its ini line: one score, no key of its own. */
DEC_FF_SINGLE_SCORE(distortion, "Distortion", has_dist, off_dist, 1, 1)

#endif
