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
    nmt_ctx_options o = {NMT_BACKEND_CPU, 0, 0, 0, 0};
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
    c->no_sharing = o.no_sharing;
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
 * kcache[l]/vcache[l] (then the rows of cp, if any, are copied inside the caches) and attention
 * reads the cache. Keys of row r: s->koff[r], s->klen[r]; cross keys: s->ckoff[r], s->cklen[r]
 * into the encoder's ck/cv. */
void nmt_decode_rows(nmt_ctx *c, const nmt_enc *e, float *y, int R, nmt_dec_scratch *s,
                     float **kcache, float **vcache, const int64_t *cache_off,
                     const nmt_row_copy *cp)
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
            if (cp && cp->n > 0) /* shared prefixes: the rows just computed, copied */
                for (int kv = 0; kv < 2; kv++) {
                    float *cache = kv ? vcache[l] : kcache[l];
                    op->gather_rows(c, cp->tmp, cache, cp->src_row, cp->n, (size_t)d, (size_t)d);
                    op->scatter_rows(c, cache, cp->dst_off, cp->tmp, cp->n, d);
                }
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
        nmt_decode_rows(c, e, y, Nt, &s, NULL, NULL, NULL, NULL);
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
    for (int t = 0; t < T; t++) /* they index the embedding table as they are */
        if (tgt_in[t] < 0 || tgt_in[t] >= cfg->tgt_vocab_size)
            return smt_err_set(err, SMT_ERR_ARG, "nmt_forward: target id %d at %d is not in the "
                               "vocabulary (%d words)", (int)tgt_in[t], t, cfg->tgt_vocab_size);
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

/* Pairs are scored in an order that puts the pairs of one source together (the n-best list of a
 * sentence) with their targets sorted: then every target shares with the one before it the longest
 * prefix it shares with any earlier one (a trie in preorder), and those positions are not computed
 * again (see score_batch). */
typedef struct pair_ref {
    size_t i;
    const nmt_sentence *s, *t;
    int share; /* shared_inputs with the pair before it in this order */
} pair_ref;

static int cmp_pair(const void *a, const void *b)
{
    const pair_ref *x = a, *y = b;
    uintptr_t px = (uintptr_t)x->s->ids, py = (uintptr_t)y->s->ids;
    if (px != py)
        return px < py ? -1 : 1;
    if (x->s->len != y->s->len)
        return x->s->len < y->s->len ? -1 : 1;
    int n = x->t->len < y->t->len ? x->t->len : y->t->len;
    for (int j = 0; j < n; j++)
        if (x->t->ids[j] != y->t->ids[j])
            return x->t->ids[j] < y->t->ids[j] ? -1 : 1;
    if (x->t->len != y->t->len)
        return x->t->len < y->t->len ? -1 : 1;
    return x->i < y->i ? -1 : (x->i > y->i);
}

static int same_source(const nmt_ctx *c, const nmt_sentence *a, const nmt_sentence *b)
{
    return !c->no_sharing && a->ids == b->ids && a->len == b->len;
}

/* Target word j of t as the decoder sees it (</s> at j == len; out-of-range ids are <unk>). */
static int32_t tgt_word(const nmt_config *cfg, const nmt_sentence *t, int j)
{
    int32_t w = j < t->len ? t->ids[j] : cfg->eos_id;
    return w < 0 || w >= cfg->tgt_vocab_size ? cfg->unk_id : w;
}

/* How many decoder inputs (<s> y1 .. yn) pair b shares with pair a: 0 for another source, else
 * the common prefix (at least <s>). */
static int shared_inputs(const nmt_ctx *c, const pair_ref *a, const pair_ref *b)
{
    const nmt_config *cfg = &c->m->cfg;
    if (!same_source(c, a->s, b->s))
        return 0;
    int n = a->t->len < b->t->len ? a->t->len : b->t->len, p = 1;
    while (p <= n && tgt_word(cfg, a->t, p - 1) == tgt_word(cfg, b->t, p - 1))
        p++;
    return p;
}

/* Scores one batch of n pairs (in cmp_pair order) with one teacher-forced pass.
 * - A source shared by several pairs is encoded once.
 * - Pair i shares its first p[i] decoder inputs with pair i-1 (its share; 0 for a batch's first
 *   pair, and a pair with a share > 0 has the source of the pair before it); the decoder state of
 *   a position depends only on the inputs up to it, so those states are pair i-1's: only positions
 *   >= p[i] are computed ("rows"), after each layer the shared positions' keys and values are copied
 *   into pair i's part of the self-attention caches, and the output layer runs on the rows only.
 *   Position p[i]-1 has pair i-1's logits but its own next word (one extra gather per pair);
 *   earlier positions have pair i-1's log-probabilities. Each row is computed exactly as in a pass
 *   without sharing (the operations are row by row), so the scores are the same. */
static int score_batch(nmt_ctx *c, const pair_ref *pr, int n, float *logprob)
{
    const nmt_config *cfg = &c->m->cfg;
    const nmt_ops *op = c->ops;
    int V = cfg->tgt_vocab_size, d = cfg->d_model, L = cfg->dec_layers;
    nmt_sentence *us = malloc((size_t)n * sizeof *us);
    int *su = malloc((size_t)n * sizeof *su), *p = malloc((size_t)n * sizeof *p),
        *tstart = malloc((size_t)(n + 1) * sizeof *tstart);
    if (!us || !su || !p || !tstart) {
        free(us), free(su), free(p), free(tstart);
        return c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    }
    int nu = 0, Nt = 0, R = 0, C = 0, E = 0;
    for (int i = 0; i < n; i++) {
        p[i] = i > 0 ? pr[i].share : 0;
        if (p[i] == 0)
            us[nu++] = *pr[i].s;
        su[i] = nu - 1;
        tstart[i] = Nt;
        Nt += pr[i].t->len + 1;
        R += pr[i].t->len + 1 - p[i];
        if (p[i] > 0) {
            E++;
            if (p[i] <= pr[i].t->len) /* pair i computes rows that attend to the shared ones */
                C += p[i];
        }
    }
    tstart[n] = Nt;
    int32_t *tout = malloc((size_t)Nt * sizeof *tout), *rin = malloc((size_t)R * sizeof *rin),
            *rout = malloc((size_t)R * sizeof *rout), *eout = malloc((size_t)(E + 1) * sizeof *eout);
    int *rowof = malloc((size_t)Nt * sizeof *rowof), *home = malloc((size_t)Nt * sizeof *home),
        *rpos = malloc((size_t)R * sizeof *rpos), *csrc = malloc((size_t)(C + 1) * sizeof *csrc),
        *erow = malloc((size_t)(E + 1) * sizeof *erow);
    int64_t *coff = malloc((size_t)R * sizeof *coff), *cdst = malloc((size_t)(C + 1) * sizeof *cdst);
    float *lp = malloc((size_t)Nt * sizeof *lp), *lpr = malloc((size_t)R * sizeof *lpr),
          *lpe = malloc((size_t)(E + 1) * sizeof *lpe);
    float **kc = calloc((size_t)2 * L, sizeof *kc), **vc = kc ? kc + L : NULL;
    nmt_enc e;
    nmt_dec_scratch s;
    memset(&e, 0, sizeof e);
    memset(&s, 0, sizeof s);
    float *y = NULL, *logits = NULL, *tmp = NULL, *xe = NULL;
    if (!tout || !rin || !rout || !eout || !rowof || !home || !rpos || !csrc || !erow || !coff ||
        !cdst || !lp || !lpr || !lpe || !kc)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    if (!c->failed && !nmt_encode(c, nu, us, &e) && !nmt_dec_scratch_init(c, &s, R)) {
        int r = 0, ci = 0;
        for (int i = 0; i < n; i++) {
            const nmt_sentence *t = pr[i].t;
            for (int j = 0; j <= t->len; j++) {
                int at = tstart[i] + j;
                tout[at] = tgt_word(cfg, t, j);
                if (j < p[i]) { /* shared with pair i-1 */
                    rowof[at] = rowof[tstart[i - 1] + j];
                    home[at] = home[tstart[i - 1] + j];
                    if (p[i] <= t->len) {
                        csrc[ci] = home[at];
                        cdst[ci++] = (int64_t)at * d;
                    }
                    continue;
                }
                rowof[at] = r;
                home[at] = at;
                rin[r] = j == 0 ? cfg->bos_id : tgt_word(cfg, t, j - 1);
                rout[r] = tout[at];
                rpos[r] = j;
                coff[r] = (int64_t)at * d;
                s.koff[r] = (int64_t)tstart[i] * d;
                s.klen[r] = j + 1; /* causal */
                s.ckoff[r] = (int64_t)e.start[su[i]] * d;
                s.cklen[r] = e.start[su[i] + 1] - e.start[su[i]];
                r++;
            }
        }
        for (int l = 0; l < L; l++) {
            kc[l] = nmt_buf(c, (size_t)Nt * d);
            vc[l] = nmt_buf(c, (size_t)Nt * d);
        }
        y = nmt_buf(c, (size_t)R * d);
        tmp = nmt_buf(c, (size_t)(C + 1) * d);
        logits = nmt_buf(c, (size_t)R * V);
        xe = nmt_buf(c, (size_t)(E + 1) * V);
    }
    if (!c->failed) {
        nmt_row_copy cp = {C, csrc, cdst, tmp};
        op->embed(c, c->w->tgt_embed, rin, rpos, R, d, y);
        nmt_decode_rows(c, &e, y, R, &s, kc, vc, coff, &cp);
        nmt_linear proj = c->w->out;
        proj.b = NULL;
        op->linear(c, s.h, R, &proj, logits, 0);
        op->gather_logprob(c, logits, c->w->out.b, R, V, rout, lpr);
        int q = 0; /* the extra gathers: position p[i]-1 of every sharing pair */
        for (int i = 0; i < n; i++)
            if (p[i] > 0) {
                erow[q] = rowof[tstart[i] + p[i] - 1];
                eout[q++] = tout[tstart[i] + p[i] - 1];
            }
        if (E > 0) {
            op->gather_rows(c, xe, logits, erow, E, (size_t)V, (size_t)V);
            op->gather_logprob(c, xe, c->w->out.b, E, V, eout, lpe);
        }
    }
    if (!c->failed) {
        int q = 0;
        for (int i = 0; i < n; i++) {
            double sum = 0; /* double: a long sentence adds many small terms */
            for (int j = 0; j <= pr[i].t->len; j++) {
                int at = tstart[i] + j;
                if (j >= p[i])
                    lp[at] = lpr[rowof[at]];
                else if (j == p[i] - 1)
                    lp[at] = lpe[q];
                else
                    lp[at] = lp[tstart[i - 1] + j];
                sum += lp[at];
            }
            q += p[i] > 0;
            logprob[pr[i].i] = (float)sum;
        }
    }
    for (int l = 0; kc && l < L; l++) {
        nmt_buf_free(c, kc[l]);
        nmt_buf_free(c, vc[l]);
    }
    nmt_buf_free(c, y);
    nmt_buf_free(c, tmp);
    nmt_buf_free(c, logits);
    nmt_buf_free(c, xe);
    nmt_dec_scratch_free(c, &s);
    nmt_enc_free(c, &e);
    free(kc), free(us), free(su), free(p), free(tstart), free(tout), free(rin), free(rout);
    free(eout), free(rowof), free(home), free(rpos), free(csrc), free(erow), free(coff), free(cdst);
    free(lp), free(lpr), free(lpe);
    return c->failed;
}

int nmt_score(nmt_ctx *c, size_t n, const nmt_sentence *src, const nmt_sentence *tgt,
              float *logprob, smt_err *err)
{
    pair_ref *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n; i++)
        order[i] = (pair_ref){i, &src[i], &tgt[i], 0};
    qsort(order, n, sizeof *order, cmp_pair);
    for (size_t i = 1; i < n; i++)
        order[i].share = shared_inputs(c, &order[i - 1], &order[i]);
    c->err = err;
    c->failed = 0;
    const nmt_config *cfg = &c->m->cfg;
    /* the logits of a batch are (computed rows, V): keep them near 32 MB whatever the vocabulary,
     * which also keeps them under glibc's largest mmap threshold (reused, not faulted in every
     * batch); a batch holds at most max_batch sources, and its caches at most 16x the rows */
    size_t max_rows = (size_t)c->max_batch * 40;
    size_t cap = ((size_t)8 << 20) / (size_t)cfg->tgt_vocab_size;
    if (max_rows > cap)
        max_rows = cap > 64 ? cap : 64;
    for (size_t b = 0; b < n && !c->failed;) {
        size_t e = b + 1, rows = (size_t)order[b].t->len + 1, pos = rows;
        int sources = 1;
        while (e < n) {
            int sh = order[e].share;
            size_t len = (size_t)order[e].t->len + 1;
            if (!sh && sources == c->max_batch)
                break;
            if (rows + len - (size_t)sh > max_rows || pos + len > 16 * max_rows)
                break;
            rows += len - (size_t)sh;
            pos += len;
            sources += !sh;
            e++;
        }
        score_batch(c, order + b, (int)(e - b), logprob);
        b = e;
    }
    free(order);
    c->err = NULL;
    return c->failed;
}
