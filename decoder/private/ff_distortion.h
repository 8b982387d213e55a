/* ff_distortion.h — Moses's Distortion: minus the jump from the previous phrase's end to this
 * phrase's start (dec_distortion). */
#ifndef DEC_FF_DISTORTION_H
#define DEC_FF_DISTORTION_H

/* included by dec_ff.h only */

static inline int ff_distortion_present(const dec_model *m) { return m->has_dist; }

static inline void ff_distortion_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                        double *score)
{
    (void)complete;
    *score -= (double)s->m->w_dist * dec_distortion(prev->end, h->start);
}

static inline void ff_distortion_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    sc[m->off_dist] -= (float)dec_distortion(prev->end, h->start);
}

#endif
