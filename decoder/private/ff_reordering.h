/* ff_reordering.h — Moses's LexicalReordering: the orientation of a phrase after the previous
 * one (dec_orientation) scored by this phrase's backward scores and by the previous phrase's
 * forward scores (a pair without a reordering entry scores 0). */
#ifndef DEC_FF_REORDERING_H
#define DEC_FF_REORDERING_H

/* included by dec_ff.h only */

static inline int ff_reordering_present(const dec_model *m) { return m->has_reo; }

/* The score indices (within the feature) and values of h after prev: up to two. */
static inline unsigned ff_reordering_values(const dec_model *m, const hyp *h, const hyp *prev,
                                            unsigned *idx, float *val)
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

static inline void ff_reordering_expand(dec_search *s, hyp *h, const hyp *prev, int complete,
                                        double *score)
{
    (void)complete;
    unsigned idx[2];
    float val[2];
    unsigned n = ff_reordering_values(s->m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        *score += (double)s->m->w_reo[idx[i]] * val[i];
}

static inline void ff_reordering_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    unsigned idx[2];
    float val[2];
    unsigned n = ff_reordering_values(m, h, prev, idx, val);
    for (unsigned i = 0; i < n; i++)
        sc[m->off_reo + idx[i]] += val[i];
}

/* The state: the last phrase's start (its end is the search's) and, with forward scores, the
 * last phrase's forward scores (a phrase without a reordering entry: none). */
static inline const float *ff_reordering_fwd_scores(const dec_model *m, const hyp *h)
{
    if (!(m->lr_dir & DEC_LR_FORWARD) || !h->cand || !h->cand->reo)
        return NULL;
    return h->cand->reo + (m->lr_dir == DEC_LR_BIDI ? (unsigned)m->lr_types : 0);
}

static inline uint64_t ff_reordering_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
    k = (k ^ (uint16_t)h->start) * 0x9E3779B97F4A7C15ull;
    const float *r = ff_reordering_fwd_scores(m, h);
    for (int i = 0; r && i < m->lr_types; i++) {
        uint32_t b;
        memcpy(&b, &r[i], 4);
        k = (k ^ b) * 0x9E3779B97F4A7C15ull;
    }
    return k;
}

static inline int ff_reordering_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
    if (a->start != b->start)
        return 0;
    const float *ra = ff_reordering_fwd_scores(m, a), *rb = ff_reordering_fwd_scores(m, b);
    if (ra == rb)
        return 1;
    if (!ra || !rb)
        return 0;
    return memcmp(ra, rb, m->lr_types * sizeof(float)) == 0;
}

#endif
