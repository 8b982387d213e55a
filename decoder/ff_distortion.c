/* ff_distortion.c — Moses's Distortion: minus the jump from the previous phrase's end to this
 * phrase's start (dec_distortion). */
#include "dec_ff.h"

static int present(const dec_model *m) { return m->has_dist; }

static void expand(dec_search *s, hyp *h, const hyp *prev, int complete, double *score)
{
    (void)complete;
    *score -= (double)s->m->w_dist * dec_distortion(prev->end, h->start);
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    sc[m->off_dist] -= (float)dec_distortion(prev->end, h->start);
}

const dec_ff dec_ff_distortion = {"Distortion", present, NULL, NULL, expand, path};
