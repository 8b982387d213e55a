/* ff_lm.h — the n-gram LMs (Moses's KENLM): log10 probabilities times ln 10. An option's estimate
 * is the phrase scored from an empty context (Moses's fullScore); an expansion scores the phrase's
 * words after the previous hypothesis's state, and </s> when the sentence is complete; it keeps
 * the new state and the score (dec_hyp_lm_prob), which the n-best paths reuse. */
#ifndef DEC_FF_LM_H
#define DEC_FF_LM_H

/* included by dec_ff.h only */

static inline int ff_lm_present(const dec_model *m) { return m->n_lms > 0; }

static inline void ff_lm_estimate(const dec_model *m, const dec_option *o, float *future)
{
    if (!o->lm_words)
        return;
    for (unsigned l = 0; l < m->n_lms; l++) {
        const uint32_t *w = o->lm_words + (size_t)l * o->n_words;
        glm_state st;
        glm_state_null(&st);
        float total = 0;
        for (uint32_t i = 0; i < o->n_words; i++)
            total += glm_score(m->lms[l], &st, w[i], &st, NULL);
        *future += m->w_lm[l] * DEC_LN10 * total;
    }
}

static inline void ff_lm_expand(dec_search *s, hyp *h, const hyp *prev, int complete, double *score)
{
    const dec_model *m = s->m;
    const dec_cand *c = h->cand;
    float *prob = dec_hyp_lm_prob(m, h);
    for (unsigned l = 0; l < m->n_lms; l++) {
        glm_state st = prev->lm[l];
        const uint32_t *w = c->lm_words + (size_t)l * c->n_words;
        float lp = 0;
        for (unsigned i = 0; i < c->n_words; i++)
            lp += dec_lm_cached(s, l, &st, w[i], &st);
        if (complete)
            lp += dec_lm_cached(s, l, &st, m->lm_eos[l], &st);
        h->lm[l] = st;
        prob[l] = lp;
        *score += (double)m->w_lm[l] * (double)(lp * DEC_LN10);
    }
}

static inline void ff_lm_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    const float *prob = dec_hyp_lm_prob(m, (hyp *)h);
    for (unsigned l = 0; l < m->n_lms; l++)
        sc[m->off_lm[l]] += prob[l] * DEC_LN10;
}

/* The state: KenLM's minimized right state of each LM (unused entries zero). */
static inline uint64_t ff_lm_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
    for (unsigned l = 0; l < m->n_lms; l++) {
        k = (k ^ h->lm[l].length) * 0xff51afd7ed558ccdull;
        for (unsigned i = 0; i < h->lm[l].length; i++)
            k = (k ^ h->lm[l].words[i]) * 0xc4ceb9fe1a85ec53ull;
    }
    return k;
}

static inline int ff_lm_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
    for (unsigned l = 0; l < m->n_lms; l++)
        if (a->lm[l].length != b->lm[l].length ||
            memcmp(a->lm[l].words, b->lm[l].words, a->lm[l].length * 4) != 0)
            return 0;
    return 1;
}

#endif
