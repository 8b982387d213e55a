/* lm_batch.c — the LM queries of many expansions scored together (-lm-batch cpu|gpu).
 *
 * Searches decoding in lock-step (run.c) stop whenever expansions wait for their LM scores
 * (dec_search_step); this scores the waiting expansions of all of them at once. An expansion's
 * queries form a chain — each word after the state the previous word left, then </s> when the
 * sentence is complete — so the chains advance together, one word each per round: a round first
 * answers what the worker's cache knows, then asks the LM the rest in one call (glm's batched
 * walks on the CPU, or its CUDA kernel). Each expansion adds its words' probabilities in the same
 * order as ff_lm_query, the cache holds exact answers, and glm's batch gives glm_score's floats and
 * states bit for bit, so every hypothesis gets the very scores the per-query path gives. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "dec_lm_batch.h"
#include "smt_progress.h"

typedef struct chain {
    hyp *h;
    dec_search *s;         /* its search, whose cache answers first */
    const uint32_t *words; /* the phrase's ids for this LM */
    uint32_t n, pos;       /* queries: the phrase's words, then </s> when complete */
    uint32_t eos;          /* </s>, or GLM_NONE */
    float lp;
    glm_state st;
} chain;

struct dec_lm_batch {
    const dec_model *m;
    int backend;
    dec_lm_gpu *gpu;
    chain *chains;
    size_t cap_chains;
    /* one round's questions the cache could not answer */
    glm_state *q_in, *q_out;
    glm_word *q_w;
    float *q_p;
    uint32_t *q_chain;
    size_t cap_q;
    dec_lm_batch_stats st;
};

struct dec_lm_gpu {
    glm_gpu *g[DEC_MAX_LMS];
    unsigned n;
    pthread_mutex_t mu; /* a glm_gpu context serves one thread at a time */
};

int dec_lm_gpu_create(dec_lm_gpu **out, const dec_model *m, smt_err *err)
{
    *out = NULL;
    dec_lm_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    pthread_mutex_init(&g->mu, NULL);
    int rc = 0;
    for (unsigned l = 0; l < m->n_lms && !rc; l++) {
        smt_err e;
        smt_err_clear(&e);
        if ((rc = glm_gpu_create(&g->g[l], m->lms[l], &e)) != 0)
            rc = smt_err_set(err, rc, "-lm-batch gpu: LM %u: %s", l, smt_err_text(&e, rc));
        else
            g->n = l + 1;
    }
    if (rc) {
        dec_lm_gpu_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

void dec_lm_gpu_free(dec_lm_gpu *g)
{
    if (!g)
        return;
    for (unsigned l = 0; l < g->n; l++)
        glm_gpu_free(g->g[l]);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

int dec_lm_batch_create(dec_lm_batch **out, const dec_model *m, int backend, dec_lm_gpu *gpu,
                        smt_err *err)
{
    *out = NULL;
    if (backend == DEC_LM_BATCH_GPU && !gpu)
        return smt_err_set(err, SMT_ERR_ARG, "-lm-batch gpu without a device context");
    dec_lm_batch *b = calloc(1, sizeof *b);
    if (!b)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    b->m = m;
    b->backend = backend;
    b->gpu = gpu;
    *out = b;
    return 0;
}

void dec_lm_batch_free(dec_lm_batch *b)
{
    if (!b)
        return;
    free(b->chains);
    free(b->q_in);
    free(b->q_out);
    free(b->q_w);
    free(b->q_p);
    free(b->q_chain);
    free(b);
}

void dec_lm_batch_stats_get(const dec_lm_batch *b, dec_lm_batch_stats *out) { *out = b->st; }

/* Room for need questions in the five arrays glm's batch reads and writes, grown together (one
 * capacity). */
static int grow_q(dec_lm_batch *b, size_t need)
{
    if (need <= b->cap_q) /* the common case: one compare per batch, no call */
        return 0;
    size_t c_in = b->cap_q, c_out = c_in, c_w = c_in, c_p = c_in, c_chain = c_in;
    if (smt_grow(&b->q_in, &c_in, need, sizeof *b->q_in, 256) ||
        smt_grow(&b->q_out, &c_out, need, sizeof *b->q_out, 256) ||
        smt_grow(&b->q_w, &c_w, need, sizeof *b->q_w, 256) ||
        smt_grow(&b->q_p, &c_p, need, sizeof *b->q_p, 256) ||
        smt_grow(&b->q_chain, &c_chain, need, sizeof *b->q_chain, 256))
        return SMT_ERR_NOMEM;
    b->cap_q = c_in;
    return 0;
}

/* The LM's answers to the n questions in b->q_*. */
static int ask(dec_lm_batch *b, unsigned l, size_t n, smt_err *err)
{
    const glm_model *lm = b->m->lms[l];
    double t0 = smt_now();
    int rc = 0;
    if (b->backend == DEC_LM_BATCH_GPU) {
        pthread_mutex_lock(&b->gpu->mu);
        rc = glm_gpu_score_states(b->gpu->g[l], b->q_in, b->q_w, n, b->q_p, b->q_out, NULL, err);
        pthread_mutex_unlock(&b->gpu->mu);
    } else {
        rc = glm_score_states(lm, b->q_in, b->q_w, n, b->q_p, b->q_out, NULL, err);
    }
    b->st.seconds += smt_now() - t0;
    b->st.calls++;
    b->st.queries += n;
    return rc;
}

int dec_lm_batch_score(dec_lm_batch *b, dec_search *const *ss, size_t n_ss, smt_err *err)
{
    const dec_model *m = b->m;
    size_t n = 0;
    for (size_t i = 0; i < n_ss; i++)
        n += ss[i]->n_pend;
    if (n == 0 || m->n_lms == 0)
        return 0;
    if ((n > b->cap_chains && smt_grow(&b->chains, &b->cap_chains, n, sizeof *b->chains, 64)) ||
        grow_q(b, n))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_ss; i++) /* each sentence asks its own cache, as it would alone */
        if (dec_lm_cache_alloc(ss[i]->lmk, ss[i]->lmv, m->n_lms))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    b->st.batches++;
    b->st.expansions += n;
    for (unsigned l = 0; l < m->n_lms; l++) {
        size_t live = 0;
        for (size_t i = 0; i < n_ss; i++)
            for (size_t j = 0; j < ss[i]->n_pend; j++) {
                const lm_pend *p = &ss[i]->pend[j];
                const dec_cand *c = p->h->cand;
                chain *ch = &b->chains[live++];
                ch->h = p->h;
                ch->s = ss[i];
                ch->words = c->lm_words + (size_t)l * c->n_words;
                ch->n = c->n_words + (p->complete ? 1u : 0u);
                ch->eos = p->complete ? m->lm_eos[l] : GLM_NONE;
                ch->pos = 0;
                ch->lp = 0;
                ch->st = ss[i]->lm_ids[l].st[p->h->prev->lm[l]];
            }
        /* rounds: every live chain asks its next word; a chain that is done leaves the front */
        size_t n_live = live;
        while (n_live) {
            size_t nq = 0, keep = 0;
            for (size_t i = 0; i < n_live; i++) {
                chain *ch = &b->chains[i];
                if (ch->pos == ch->n) { /* done: its results go to its hypothesis */
                    if (dec_lm_id(&ch->s->lm_ids[l], &ch->s->ar, &ch->st, &ch->h->lm[l]))
                        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                    dec_hyp_lm_prob(m, ch->h)[l] = ch->lp;
                    continue;
                }
                if (keep != i)
                    b->chains[keep] = *ch;
                ch = &b->chains[keep++];
                uint32_t w = ch->pos < ch->n - (ch->eos != GLM_NONE) ? ch->words[ch->pos] : ch->eos;
                size_t slot = dec_lm_cache_slot(&ch->st, w);
                if (dec_lm_cache_hit(&ch->s->lmk[l][slot], &ch->st, w)) {
                    const lm_cache_val *v = &ch->s->lmv[l][slot];
                    ch->lp += v->prob;
                    ch->st = v->out;
                    ch->pos++;
                    b->st.hits++;
                    continue;
                }
                b->q_in[nq] = ch->st;
                b->q_w[nq] = w;
                b->q_chain[nq] = (uint32_t)(keep - 1);
                nq++;
            }
            n_live = keep;
            if (nq) {
                int rc = ask(b, l, nq, err);
                if (rc)
                    return rc;
                for (size_t q = 0; q < nq; q++) {
                    chain *ch = &b->chains[b->q_chain[q]];
                    size_t slot = dec_lm_cache_slot(&b->q_in[q], b->q_w[q]);
                    dec_lm_cache_put(&ch->s->lmk[l][slot], &ch->s->lmv[l][slot], &b->q_in[q],
                                     b->q_w[q], b->q_p[q], &b->q_out[q]);
                    ch->lp += b->q_p[q];
                    ch->st = b->q_out[q];
                    ch->pos++;
                }
            }
        }
    }
    return 0;
}
