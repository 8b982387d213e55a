/* ff_reordering.c — Moses's LexicalReordering: the orientation of a phrase after the previous
 * one (dec_orientation) scored by this phrase's backward scores and by the previous phrase's
 * forward scores (a pair without a reordering entry scores 0). */
#include "dec_ff.h"

static int present(const dec_model *m) { return m->has_reo; }

/* The score indices (within the feature) and values of h after prev: up to two. */
static unsigned values(const dec_model *m, const hyp *h, const hyp *prev, unsigned *idx,
                       float *val)
{
    int o = dec_orientation(m->lr_type, prev->start, prev->end, h->start, h->end);
    unsigned n = 0;
    if ((m->lr_dir & DEC_LR_BACKWARD) && h->cand->reo) {
        idx[n] = (unsigned)o;
        val[n++] = h->cand->reo[o];
    }
    unsigned off = m->lr_dir == DEC_LR_BIDI ? (unsigned)m->lr_types : 0;
    if ((m->lr_dir & DEC_LR_FORWARD) && prev->cand && prev->cand->reo) {
        idx[n] = off + (unsigned)o;
        val[n++] = prev->cand->reo[off + o];
    }
    return n;
}

static void expand(dec_search *s, hyp *h, const hyp *prev, int complete, double *score)
{
    (void)complete;
    unsigned idx[2];
    float val[2];
    unsigned n = values(s->m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        *score += (double)s->m->w_reo[idx[i]] * val[i];
}

static void path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    unsigned idx[2];
    float val[2];
    unsigned n = values(m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        sc[m->off_reo + idx[i]] += val[i];
}

const dec_ff dec_ff_reordering = {"LexicalReordering", present, NULL, NULL, expand, path};
