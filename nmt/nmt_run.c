/* nmt_run.c — contexts and the transformer passes, written once against the backend operation table
 * (nmt_ops), so the CPU reference and the CUDA path run the same sequence of operations.
 *
 * Sentences are packed, never padded: a batch of sentences is one (N,d) matrix with N the total
 * number of tokens, and attention finds each row's keys through (offset, length) pairs. The same
 * trick gives causal self-attention in teacher forcing (row t sees t+1 keys) and lets finished
 * sentences leave a beam-search batch by simply not being gathered into the next step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_internal.h"
#include "nmt_run.h"

int nmt_ctx_create(nmt_ctx **out, const nmt_model *m, const nmt_ctx_options *opt, smt_err *err)
{
    *out = NULL;
    nmt_ctx_options o = {NMT_BACKEND_CPU, 0, 0, 0};
    if (opt)
        o = *opt;
    nmt_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    c->m = m;
    c->ops = &nmt_cpu_ops;
    c->w = &m->w;
    c->backend = NMT_BACKEND_CPU;
    c->max_batch = o.max_batch_sentences > 0 ? o.max_batch_sentences : 64;
    int rc = smt_pool_create(&c->pool, o.backend == NMT_BACKEND_CUDA ? 1 : o.threads, err);
    if (!rc && o.backend == NMT_BACKEND_CUDA)
        rc = nmt_cuda_ctx_init(c, o.device, err);
    if (rc) {
        nmt_ctx_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

void nmt_ctx_free(nmt_ctx *c)
{
    if (!c)
        return;
    if (c->cuda)
        nmt_cuda_ctx_free(c);
    smt_pool_destroy(c->pool);
    free(c);
}

/* ---- buffers ---- */

float *nmt_buf(nmt_ctx *c, size_t floats)
{
    float *p = c->ops->alloc(c, floats * sizeof(float));
    if (!p && !c->failed)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory (%zu floats)", floats);
    return p;
}

void nmt_buf_free(nmt_ctx *c, void *p)
{
    if (p)
        c->ops->release(c, p);
}

/* ---- encoder ---- */

int nmt_encode(nmt_ctx *c, int n, const nmt_sentence *src, nmt_enc *e)
{
    const nmt_config *cfg = &c->m->cfg;
    const nmt_ops *op = c->ops;
    int d = cfg->d_model, L = cfg->dec_layers;
    memset(e, 0, sizeof *e);
    e->n = n;
    e->start = malloc((size_t)(n + 1) * sizeof *e->start);
    e->ck = calloc((size_t)L + 1, sizeof *e->ck);
    e->cv = calloc((size_t)L + 1, sizeof *e->cv);
    if (!e->start || !e->ck || !e->cv)
        return c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    int N = 0;
    for (int i = 0; i < n; i++) {
        e->start[i] = N;
        N += src[i].len + 1; /* + </s> */
    }
    e->start[n] = N;
    e->N = N;
    int32_t *ids = malloc((size_t)N * sizeof *ids);
    int *pos = malloc((size_t)N * sizeof *pos), *klen = malloc((size_t)N * sizeof *klen);
    int64_t *koff = malloc((size_t)N * sizeof *koff);
    float *x = nmt_buf(c, (size_t)N * d), *h = nmt_buf(c, (size_t)N * d),
          *q = nmt_buf(c, (size_t)N * d), *k = nmt_buf(c, (size_t)N * d),
          *v = nmt_buf(c, (size_t)N * d), *f = nmt_buf(c, (size_t)N * cfg->d_ff);
    if (!ids || !pos || !klen || !koff)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    if (!c->failed) {
        for (int i = 0; i < n; i++)
            for (int t = 0; t <= src[i].len; t++) {
                int r = e->start[i] + t;
                ids[r] = t < src[i].len ? src[i].ids[t] : cfg->eos_id;
                if (ids[r] < 0 || ids[r] >= cfg->src_vocab_size)
                    ids[r] = cfg->unk_id;
                pos[r] = t;
                koff[r] = (int64_t)e->start[i] * d;
                klen[r] = src[i].len + 1;
            }
        op->embed(c, c->w->src_embed, ids, pos, N, d, x);
        for (int l = 0; l < cfg->enc_layers && !c->failed; l++) {
            const nmt_enc_layer *E = &c->w->enc[l];
            op->layernorm(c, x, N, d, &E->ln1, cfg->ln_eps, h);
            op->linear(c, h, N, &E->q, q, 0);
            op->linear(c, h, N, &E->k, k, 0);
            op->linear(c, h, N, &E->v, v, 0);
            op->attention(c, q, N, d, cfg->n_heads, k, v, koff, klen, h);
            op->linear(c, h, N, &E->o, q, 0);
            op->add(c, x, q, (size_t)N * d);
            op->layernorm(c, x, N, d, &E->ln2, cfg->ln_eps, h);
            op->linear(c, h, N, &E->ff1, f, 1);
            op->linear(c, f, N, &E->ff2, q, 0);
            op->add(c, x, q, (size_t)N * d);
        }
        e->out = nmt_buf(c, (size_t)N * d);
        if (e->out) {
            op->layernorm(c, x, N, d, &c->w->enc_ln, cfg->ln_eps, e->out);
            /* cross-attention keys and values depend only on the source: computed once */
            for (int l = 0; l < L && !c->failed; l++) {
                e->ck[l] = nmt_buf(c, (size_t)N * d);
                e->cv[l] = nmt_buf(c, (size_t)N * d);
                if (e->ck[l] && e->cv[l]) {
                    op->linear(c, e->out, N, &c->w->dec[l].ck, e->ck[l], 0);
                    op->linear(c, e->out, N, &c->w->dec[l].cv, e->cv[l], 0);
                }
            }
        }
    }
    free(ids);
    free(pos);
    free(klen);
    free(koff);
    nmt_buf_free(c, x);
    nmt_buf_free(c, h);
    nmt_buf_free(c, q);
    nmt_buf_free(c, k);
    nmt_buf_free(c, v);
    nmt_buf_free(c, f);
    return c->failed;
}

void nmt_enc_free(nmt_ctx *c, nmt_enc *e)
{
    for (int l = 0; e->ck && l < c->m->cfg.dec_layers; l++) {
        nmt_buf_free(c, e->ck[l]);
        nmt_buf_free(c, e->cv[l]);
    }
    nmt_buf_free(c, e->out);
    free(e->ck);
    free(e->cv);
    free(e->start);
    memset(e, 0, sizeof *e);
}

/* ---- decoder ---- */

int nmt_dec_scratch_init(nmt_ctx *c, nmt_dec_scratch *s, int R)
{
    int d = c->m->cfg.d_model;
    memset(s, 0, sizeof *s);
    s->cap = R;
    s->h = nmt_buf(c, (size_t)R * d);
    s->q = nmt_buf(c, (size_t)R * d);
    s->k = nmt_buf(c, (size_t)R * d);
    s->v = nmt_buf(c, (size_t)R * d);
    s->a = nmt_buf(c, (size_t)R * d);
    s->f = nmt_buf(c, (size_t)R * c->m->cfg.d_ff);
    s->koff = malloc((size_t)R * sizeof *s->koff);
    s->klen = malloc((size_t)R * sizeof *s->klen);
    s->ckoff = malloc((size_t)R * sizeof *s->ckoff);
    s->cklen = malloc((size_t)R * sizeof *s->cklen);
    if (!s->koff || !s->klen || !s->ckoff || !s->cklen)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    return c->failed;
}

void nmt_dec_scratch_free(nmt_ctx *c, nmt_dec_scratch *s)
{
    nmt_buf_free(c, s->h);
    nmt_buf_free(c, s->q);
    nmt_buf_free(c, s->k);
    nmt_buf_free(c, s->v);
    nmt_buf_free(c, s->a);
    nmt_buf_free(c, s->f);
    free(s->koff);
    free(s->klen);
    free(s->ckoff);
    free(s->cklen);
    memset(s, 0, sizeof *s);
}

/* The decoder stack over R rows whose embeddings are in y (R,d); leaves the final-norm output in
 * s->h. Self-attention keys and values: when kcache is NULL they are this call's rows themselves
 * (teacher forcing); otherwise each layer's new k,v rows are written at cache_off[r] of
 * kcache[l]/vcache[l] and attention reads the cache. Keys of row r: s->koff[r], s->klen[r]; cross
 * keys: s->ckoff[r], s->cklen[r] into the encoder's ck/cv. */
void nmt_decode_rows(nmt_ctx *c, const nmt_enc *e, float *y, int R, nmt_dec_scratch *s,
                     float **kcache, float **vcache, const int64_t *cache_off)
{
    const nmt_config *cfg = &c->m->cfg;
    const nmt_ops *op = c->ops;
    int d = cfg->d_model, H = cfg->n_heads;
    float eps = cfg->ln_eps;
    for (int l = 0; l < cfg->dec_layers && !c->failed; l++) {
        const nmt_dec_layer *D = &c->w->dec[l];
        op->layernorm(c, y, R, d, &D->ln1, eps, s->h);
        op->linear(c, s->h, R, &D->sq, s->q, 0);
        op->linear(c, s->h, R, &D->sk, s->k, 0);
        op->linear(c, s->h, R, &D->sv, s->v, 0);
        const float *K = s->k, *V = s->v;
        if (kcache) {
            op->scatter_rows(c, kcache[l], cache_off, s->k, R, d);
            op->scatter_rows(c, vcache[l], cache_off, s->v, R, d);
            K = kcache[l];
            V = vcache[l];
        }
        op->attention(c, s->q, R, d, H, K, V, s->koff, s->klen, s->a);
        op->linear(c, s->a, R, &D->so, s->h, 0);
        op->add(c, y, s->h, (size_t)R * d);
        op->layernorm(c, y, R, d, &D->ln2, eps, s->h);
        op->linear(c, s->h, R, &D->cq, s->q, 0);
        op->attention(c, s->q, R, d, H, e->ck[l], e->cv[l], s->ckoff, s->cklen, s->a);
        op->linear(c, s->a, R, &D->co, s->h, 0);
        op->add(c, y, s->h, (size_t)R * d);
        op->layernorm(c, y, R, d, &D->ln3, eps, s->h);
        op->linear(c, s->h, R, &D->ff1, s->f, 1);
        op->linear(c, s->f, R, &D->ff2, s->a, 0);
        op->add(c, y, s->a, (size_t)R * d);
    }
    op->layernorm(c, y, R, d, &c->w->dec_ln, eps, s->h);
}

/* Teacher forcing over packed target rows: tin (Nt ids) holds <s> y1 .. yn for every sentence;
 * tstart[i] is where sentence i (source i of e) begins. Leaves logits (Nt,V) without bias. */
static int teacher_forced(nmt_ctx *c, const nmt_enc *e, int n, const int32_t *tin,
                          const int *tstart, float *logits)
{
    const nmt_config *cfg = &c->m->cfg;
    int d = cfg->d_model, Nt = tstart[n];
    nmt_dec_scratch s;
    int *pos = malloc((size_t)Nt * sizeof *pos);
    float *y = nmt_buf(c, (size_t)Nt * d);
    if (!pos)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    if (!nmt_dec_scratch_init(c, &s, Nt) && !c->failed) {
        for (int i = 0; i < n; i++)
            for (int r = tstart[i]; r < tstart[i + 1]; r++) {
                pos[r] = r - tstart[i];
                s.koff[r] = (int64_t)tstart[i] * d;
                s.klen[r] = pos[r] + 1; /* causal */
                s.ckoff[r] = (int64_t)e->start[i] * d;
                s.cklen[r] = e->start[i + 1] - e->start[i];
            }
        c->ops->embed(c, c->w->tgt_embed, tin, pos, Nt, d, y);
        nmt_decode_rows(c, e, y, Nt, &s, NULL, NULL, NULL);
        nmt_linear proj = c->w->out;
        proj.b = NULL;
        c->ops->linear(c, s.h, Nt, &proj, logits, 0);
    }
    nmt_dec_scratch_free(c, &s);
    nmt_buf_free(c, y);
    free(pos);
    return c->failed;
}

int nmt_forward(nmt_ctx *c, const int32_t *src, int S, const int32_t *tgt_in, int T, float *logits,
                float *enc_out, smt_err *err)
{
    const nmt_config *cfg = &c->m->cfg;
    if (S < 1 || T < 1 || src[S - 1] != cfg->eos_id)
        return smt_err_set(err, SMT_ERR_ARG, "nmt_forward: the source must end with </s>");
    c->err = err;
    c->failed = 0;
    nmt_sentence sent = {src, S - 1};
    nmt_enc e;
    int V = cfg->tgt_vocab_size, tstart[2] = {0, T};
    float *dl = NULL;
    if (!nmt_encode(c, 1, &sent, &e)) {
        if (enc_out)
            c->ops->download(c, enc_out, e.out, (size_t)S * cfg->d_model);
        dl = nmt_buf(c, (size_t)T * V);
        if (dl && !teacher_forced(c, &e, 1, tgt_in, tstart, dl)) {
            c->ops->download(c, logits, dl, (size_t)T * V);
            for (int t = 0; t < T; t++)
                for (int i = 0; i < V; i++)
                    logits[(size_t)t * V + i] += c->m->w.out.b[i]; /* host copy */
        }
    }
    nmt_buf_free(c, dl);
    nmt_enc_free(c, &e);
    c->err = NULL;
    return c->failed;
}

/* ---- scoring ---- */

typedef struct by_len {
    size_t i;
    int len;
} by_len;

static int cmp_len(const void *a, const void *b)
{
    const by_len *x = a, *y = b;
    if (x->len != y->len)
        return x->len < y->len ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

/* Scores one batch (n pairs, given by index) with one teacher-forced pass. */
static int score_batch(nmt_ctx *c, const nmt_sentence *src, const nmt_sentence *tgt,
                       const by_len *idx, int n, float *logprob)
{
    const nmt_config *cfg = &c->m->cfg;
    int V = cfg->tgt_vocab_size;
    nmt_sentence *bs = malloc((size_t)n * sizeof *bs);
    int *tstart = malloc((size_t)(n + 1) * sizeof *tstart);
    if (!bs || !tstart) {
        free(bs);
        free(tstart);
        return c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    }
    int Nt = 0;
    for (int i = 0; i < n; i++) {
        bs[i] = src[idx[i].i];
        tstart[i] = Nt;
        Nt += tgt[idx[i].i].len + 1;
    }
    tstart[n] = Nt;
    int32_t *tin = malloc((size_t)Nt * sizeof *tin), *tout = malloc((size_t)Nt * sizeof *tout);
    float *lp = malloc((size_t)Nt * sizeof *lp);
    nmt_enc e;
    memset(&e, 0, sizeof e);
    float *logits = NULL;
    if (!tin || !tout || !lp)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    if (!c->failed && !nmt_encode(c, n, bs, &e)) {
        for (int i = 0; i < n; i++) {
            const nmt_sentence *t = &tgt[idx[i].i];
            for (int j = 0; j <= t->len; j++) {
                int32_t w = j < t->len ? t->ids[j] : cfg->eos_id;
                if (w < 0 || w >= V)
                    w = cfg->unk_id;
                tout[tstart[i] + j] = w;
                tin[tstart[i] + j] = j == 0 ? cfg->bos_id : tout[tstart[i] + j - 1];
            }
        }
        logits = nmt_buf(c, (size_t)Nt * V);
        if (logits && !teacher_forced(c, &e, n, tin, tstart, logits)) {
            c->ops->gather_logprob(c, logits, c->w->out.b, Nt, V, tout, lp);
            for (int i = 0; i < n; i++) {
                double sum = 0; /* double: a long sentence adds many small terms */
                for (int r = tstart[i]; r < tstart[i + 1]; r++)
                    sum += lp[r];
                logprob[idx[i].i] = (float)sum;
            }
        }
    }
    nmt_buf_free(c, logits);
    nmt_enc_free(c, &e);
    free(bs);
    free(tstart);
    free(tin);
    free(tout);
    free(lp);
    return c->failed;
}

int nmt_score(nmt_ctx *c, size_t n, const nmt_sentence *src, const nmt_sentence *tgt,
              float *logprob, smt_err *err)
{
    by_len *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++) {
        order[i].i = i;
        order[i].len = tgt[i].len > src[i].len ? tgt[i].len : src[i].len;
    }
    /* similar lengths together keep every batch's work even; packing means no padding anyway */
    qsort(order, n, sizeof *order, cmp_len);
    c->err = err;
    c->failed = 0;
    /* the logits of a batch are (tokens, V): keep them near 32 MB whatever the vocabulary, which
     * also keeps them under glibc's largest mmap threshold (reused, not faulted in every batch) */
    size_t max_tokens = (size_t)c->max_batch * 40;
    size_t cap = ((size_t)8 << 20) / (size_t)c->m->cfg.tgt_vocab_size;
    if (max_tokens > cap)
        max_tokens = cap > 64 ? cap : 64;
    for (size_t b = 0; b < n && !c->failed;) {
        size_t e = b, tokens = 0;
        while (e < n && (int)(e - b) < c->max_batch &&
               (e == b || tokens + (size_t)tgt[order[e].i].len + 1 <= max_tokens))
            tokens += (size_t)tgt[order[e++].i].len + 1;
        score_batch(c, src, tgt, order + b, (int)(e - b), logprob);
        b = e;
    }
    free(order);
    c->err = NULL;
    return c->failed;
}
