/* ff_lm.h — the n-gram LMs (Moses's KENLM; SRILM and IRSTLM features naming ARPA files): log10
 * probabilities times ln 10, and with oov-feature=1 a second score, the OOV count. An option's estimate
 * is the phrase scored from an empty context (Moses's fullScore: glm_phrase_estimate, with a KenLM
 * rest probing file's rest costs at the phrase's left edge); an expansion scores the phrase's
 * words after the previous hypothesis's state, and </s> when the sentence is complete; it keeps
 * the new state and the score (dec_hyp_lm_prob), which the n-best paths reuse. */
#ifndef DEC_FF_LM_H
#define DEC_FF_LM_H

/* included by dec_ff.h only */

static inline int ff_lm_present(const dec_model *m) { return m->n_lms > 0; }

/* The OOV count of a phrase's words for LM l (its ids: GLM_UNK when the LM does not know one). */
static inline unsigned ff_lm_oov_count(const uint32_t *lm_words, uint32_t n_words, unsigned l)
{
    unsigned k = 0;
    const uint32_t *w = lm_words + (size_t)l * n_words;
    for (uint32_t i = 0; i < n_words; i++)
        k += w[i] == GLM_UNK;
    return k;
}

/* Moses's LM OOV feature (oov-feature=1): the number of the option's target words the LM does not
 * know, a score of the phrase in isolation (Moses's LanguageModel::EvaluateInIsolation), weighted
 * by the LM's second weight; nothing without it (the static score's arithmetic is unchanged). */
static inline void ff_lm_option(const dec_model *m, const dec_option *o, float *score)
{
    if (!m->lm_oov_any || !o->lm_words)
        return;
    for (unsigned l = 0; l < m->n_lms; l++)
        if (m->lm_oov[l])
            *score += m->w_lm_oov[l] * (float)ff_lm_oov_count(o->lm_words, o->n_words, l);
}

static inline void ff_lm_estimate(const dec_model *m, const dec_option *o, float *future)
{
    if (!o->lm_words)
        return;
    for (unsigned l = 0; l < m->n_lms; l++) {
        const uint32_t *w = o->lm_words + (size_t)l * o->n_words;
        *future += m->w_lm[l] * DEC_LN10 * glm_phrase_estimate(m->lms[l], w, o->n_words);
    }
}

/* log10 p(w | *in) of LM l, through the worker's cache (made at its first use: workers decoding
 * in lock-step use their batcher's); the new state goes to *out. Out of memory: no cache. */
static inline float ff_lm_cached(dec_search *s, unsigned l, const glm_state *in, uint32_t w,
                                  glm_state *out)
{
    if (__builtin_expect(!s->lmk[0], 0) && dec_lm_cache_alloc(s->lmk, s->lmv, s->m->n_lms))
        return glm_score(s->m->lms[l], in, w, out, NULL);
    size_t slot = dec_lm_cache_slot(in, w);
    lm_cache_key *k = &s->lmk[l][slot];
    lm_cache_val *v = &s->lmv[l][slot];
    if (dec_lm_cache_hit(k, in, w)) {
        *out = v->out;
        return v->prob;
    }
    glm_state o;
    float p = glm_score(s->m->lms[l], in, w, &o, NULL);
    dec_lm_cache_put(k, v, in, w, p, &o);
    *out = o;
    return p;
}

/* The id of state st of LM l in the sentence (dec_lm_id); out of memory: 0, and s->lm_nomem set
 * (the expansion then fails). */
static inline uint32_t ff_lm_id(dec_search *s, unsigned l, const glm_state *st)
{
    uint32_t id = 0;
    if (dec_lm_id(&s->lm_ids[l], &s->ar, st, &id))
        s->lm_nomem = 1;
    return id;
}

/* ff_lm_cached for the last word of a phrase: log10 p(w | *in) and the id of the new state, kept
 * beside the cached answer for the rest of the sentence. */
static inline float ff_lm_cached_id(dec_search *s, unsigned l, const glm_state *in, uint32_t w,
                                    uint32_t *out_id)
{
    if (__builtin_expect(!s->lmk[0], 0) && dec_lm_cache_alloc(s->lmk, s->lmv, s->m->n_lms)) {
        glm_state o;
        float p = glm_score(s->m->lms[l], in, w, &o, NULL);
        *out_id = ff_lm_id(s, l, &o);
        return p;
    }
    size_t slot = dec_lm_cache_slot(in, w);
    lm_cache_key *k = &s->lmk[l][slot];
    lm_cache_val *v = &s->lmv[l][slot];
    if (!dec_lm_cache_hit(k, in, w)) {
        glm_state o;
        float p = glm_score(s->m->lms[l], in, w, &o, NULL);
        dec_lm_cache_put(k, v, in, w, p, &o);
    }
    if (v->epoch != s->lm_epoch) {
        v->out_id = ff_lm_id(s, l, &v->out);
        v->epoch = s->lm_epoch;
    }
    *out_id = v->out_id;
    return v->prob;
}

/* The LM state ids and log10 probabilities of the expansion h of prev: the phrase after prev's
 * state from the sentence's phrase cache, else one query at a time through the worker's cache
 * (the per-query path; lm_batch.c is the batched one, with the same floats), then </s>. */
static inline void ff_lm_query(dec_search *s, hyp *h, const hyp *prev, int complete)
{
    const dec_model *m = s->m;
    const dec_cand *c = h->cand;
    float *prob = dec_hyp_lm_prob(m, h);
    for (unsigned l = 0; l < m->n_lms; l++) {
        uint32_t id = prev->lm[l];
        lm_phrase *e = &s->lmp[l][dec_lm_phrase_slot(c, id)];
        float lp;
        if (e->cand == c && e->in == id && e->epoch == s->lm_epoch) {
            lp = e->prob;
            id = e->out;
        } else {
            glm_state st = s->lm_ids[l].st[id];
            const uint32_t *w = c->lm_words + (size_t)l * c->n_words;
            uint32_t out = id;
            lp = 0;
            if (c->n_words) {
                for (unsigned i = 0; i + 1 < c->n_words; i++)
                    lp += ff_lm_cached(s, l, &st, w[i], &st);
                lp += ff_lm_cached_id(s, l, &st, w[c->n_words - 1], &out);
            }
            *e = (lm_phrase){c, id, out, lp, s->lm_epoch};
            id = out;
        }
        if (complete) {
            glm_state st = s->lm_ids[l].st[id];
            lp += ff_lm_cached_id(s, l, &st, m->lm_eos[l], &id);
        }
        h->lm[l] = id;
        prob[l] = lp;
    }
}

/* Queries the LMs (unless a batch has: s->lm_deferred) and adds their weighted scores. */
static inline void ff_lm_expand(dec_search *s, hyp *h, const hyp *prev, int complete, double *score)
{
    const dec_model *m = s->m;
    if (!s->lm_deferred)
        ff_lm_query(s, h, prev, complete);
    const float *prob = dec_hyp_lm_prob(m, h);
    for (unsigned l = 0; l < m->n_lms; l++)
        *score += (double)m->w_lm[l] * (double)(prob[l] * DEC_LN10);
}

static inline void ff_lm_path(const dec_model *m, const hyp *h, const hyp *prev, float *sc)
{
    (void)prev;
    const float *prob = dec_hyp_lm_prob(m, (hyp *)h);
    for (unsigned l = 0; l < m->n_lms; l++) {
        sc[m->off_lm[l]] += prob[l] * DEC_LN10;
        if (m->lm_oov[l] && h->cand && h->cand->lm_words)
            sc[m->off_lm[l] + 1] +=
                (float)ff_lm_oov_count(h->cand->lm_words, h->cand->n_words, l);
    }
}

/* The state: KenLM's minimized right state of each LM, as its id in the sentence (equal states,
 * equal ids). */
static inline uint64_t ff_lm_state_hash(const dec_model *m, const hyp *h, uint64_t k)
{
    for (unsigned l = 0; l < m->n_lms; l++)
        k = (k ^ h->lm[l]) * 0xff51afd7ed558ccdull;
    return k;
}

static inline int ff_lm_state_equal(const dec_model *m, const hyp *a, const hyp *b)
{
    for (unsigned l = 0; l < m->n_lms; l++)
        if (a->lm[l] != b->lm[l])
            return 0;
    return 1;
}

/* Its ini line: path= (the LM, opened by model.c), order= (checked against the file's there),
 * factor=, lazyken=; oov-feature=1 (else [lmodel-oov-feature]) adds the second score. */
static inline int ff_lm_configure(dec_model *m, const dec_ff_line *l, smt_err *err)
{
    const dec_ini_feature *f = l->f;
    if (m->n_lms == DEC_MAX_LMS)
        return smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s:%u: more than %d LMs", l->ini->path,
                           f->line, DEC_MAX_LMS);
    const char *ov = dec_ini_feature_arg(f, "oov-feature");
    int oov = ov ? dec_ff_bool(ov) == 1 : l->all_oov;
    unsigned n;
    int rc = dec_ff_num_features(l, 1 + oov, &n, err);
    if (rc)
        return rc;
    if (n != 1u + oov)
        return smt_err_set(err, SMT_ERR_PARSE, "%s:%u: %s has %d score%s, not %u", l->ini->path,
                           f->line, f->name, 1 + oov, oov ? "s (oov-feature=1)" : "", n);
    l->lm_f[m->n_lms] = f;
    m->lm_oov[m->n_lms] = oov;
    m->lm_oov_any |= oov;
    m->off_lm[m->n_lms++] = m->n_scores;
    return dec_ff_add(m, l, n, 1, err);
}

static inline const dec_ff_def *ff_lm_def(void)
{
    static const char *const types[] = {"KENLM", "SRILM", "IRSTLM", NULL};
    static const dec_ff_key keys[] = {{"path", DEC_KEY_TEXT},     {"order", DEC_KEY_TEXT},
                                      {"factor", DEC_KEY_FACTOR}, {"lazyken", DEC_KEY_BOOL},
                                      {"oov-feature", DEC_KEY_BOOL}, {NULL, DEC_KEY_TEXT}};
    static const dec_ff_def def = {types, 1, keys, ff_lm_configure};
    return &def;
}

#endif
