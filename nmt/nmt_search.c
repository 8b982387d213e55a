/* nmt_search.c — greedy and beam search over batches of sentences (seed 000, algorithm 2).
 *
 * Every alive hypothesis is one decoder row; rows of a sentence are contiguous. Each step runs the
 * decoder over all rows, takes each row's k best words from the fused output layer (or the arg-max
 * when the beam is 1), keeps the best (beam - finished) continuations per sentence, and gathers the
 * surviving rows' self-attention caches into a compact block. A hypothesis that emits </s> leaves
 * the beam, so a sentence's beam and the whole batch shrink as sentences finish: no dead rows are
 * ever computed. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_run.h"
#include "nmt_shortlist.h"

enum { NMT_MAX_OUT_LEN = 1024 };

typedef struct cand {
    float score;
    int row;
    int32_t id;
} cand;

static int cand_cmp(const void *a, const void *b)
{
    const cand *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->row != y->row)
        return x->row < y->row ? -1 : 1;
    return x->id < y->id ? -1 : (x->id > y->id);
}

typedef struct sent_state {
    int fin, maxlen, done;
    nmt_hyp best;
    int has_best;
} sent_state;

/* Records a finished hypothesis (words hist[0..len)) when it beats the sentence's best. */
static int finish(sent_state *s, const int32_t *hist, int len, float logprob, float alpha)
{
    float score = alpha > 0 ? logprob / powf((float)(len + 1), alpha) : logprob;
    if (logprob != logprob)
        score = 0; /* greedy: no probabilities, one hypothesis */
    s->fin++;
    if (s->has_best && !(score > s->best.score))
        return 0;
    int32_t *ids = malloc((size_t)(len ? len : 1) * sizeof *ids);
    if (!ids)
        return SMT_ERR_NOMEM;
    memcpy(ids, hist, (size_t)len * sizeof *ids);
    free(s->best.ids);
    s->best = (nmt_hyp){ids, len, logprob, score};
    s->has_best = 1;
    return 0;
}

static int translate_batch(nmt_ctx *c, const nmt_sentence *src, const size_t *which, int nb,
                           const nmt_search_options *o, nmt_hyp *out)
{
    const nmt_config *cfg = &c->m->cfg;
    const nmt_ops *op = c->ops;
    int d = cfg->d_model, V = cfg->tgt_vocab_size, L = cfg->dec_layers, K = o->beam;
    nmt_sentence *bs = malloc((size_t)nb * sizeof *bs);
    sent_state *ss = calloc((size_t)nb, sizeof *ss);
    if (!bs || !ss) {
        free(bs);
        free(ss);
        return c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    }
    int Tmax = 1;
    for (int i = 0; i < nb; i++) {
        bs[i] = src[which[i]];
        int ml = (int)(o->max_len_ratio * (float)bs[i].len) + o->max_len_add;
        ss[i].maxlen = ml < 1 ? 1 : ml > NMT_MAX_OUT_LEN ? NMT_MAX_OUT_LEN : ml;
        if (ss[i].maxlen > Tmax)
            Tmax = ss[i].maxlen;
    }
    int cap = nb * K;
    nmt_enc e;
    nmt_dec_scratch s;
    memset(&s, 0, sizeof s);
    float **kc = calloc((size_t)4 * L, sizeof *kc), **vc = kc + L, **kc2 = kc + 2 * L,
          **vc2 = kc + 3 * L;
    int *row_sent = malloc((size_t)cap * 3 * sizeof *row_sent), *parent = row_sent + cap,
        *row_sent2 = row_sent + 2 * (size_t)cap;
    int32_t *cur = malloc((size_t)cap * 2 * sizeof *cur), *nxt_tok = cur + cap;
    int32_t *hist = malloc((size_t)cap * 2 * Tmax * sizeof *hist), *hist2 = hist + (size_t)cap * Tmax;
    float *score = malloc((size_t)cap * 2 * sizeof *score), *score2 = score + cap;
    float *val = malloc((size_t)cap * K * sizeof *val), *lse = malloc((size_t)cap * sizeof *lse);
    int32_t *kid = malloc((size_t)cap * K * sizeof *kid);
    int *pos = malloc((size_t)cap * sizeof *pos);
    int64_t *coff = malloc((size_t)cap * sizeof *coff);
    cand *cands = malloc((size_t)K * K * sizeof *cands);
    float *y = NULL, *logits = NULL;
    if (!kc || !row_sent || !cur || !hist || !score || !val || !lse || !kid || !pos || !coff ||
        !cands)
        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
    if (!c->failed)
        nmt_encode(c, nb, bs, &e);
    else
        memset(&e, 0, sizeof e);
    if (!c->failed) {
        for (int l = 0; l < 4 * L; l++)
            kc[l] = nmt_buf(c, (size_t)cap * Tmax * d);
        y = nmt_buf(c, (size_t)cap * d);
        nmt_dec_scratch_init(c, &s, cap);
    }
    nmt_linear proj = c->w->out;
    proj.b = NULL; /* the output layer adds the bias in its fused pass */
    const float *obias = c->w->out.b;
    int Vo = V; /* output-layer width: V, or the shortlist's size */
    int32_t *sl = NULL;
    float *sub_w = NULL, *sub_b = NULL;
    if (o->shortlist && !c->failed) {
        /* a compact projection over the batch's shortlist, built from the host weights */
        int S = nmt_shortlist_ids(o->shortlist, c->m, bs, nb, &sl);
        const nmt_linear *hw = &c->m->w.out;
        float *hsub = S >= K ? malloc((size_t)d * S * sizeof *hsub + (size_t)S * sizeof *hsub) : NULL;
        if (S < 0)
            c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
        if (hsub && !c->failed) {
            for (int i = 0; i < d; i++)
                for (int j = 0; j < S; j++)
                    hsub[(size_t)i * S + j] = hw->wt[(size_t)i * V + sl[j]];
            for (int j = 0; j < S; j++)
                hsub[(size_t)d * S + j] = hw->b[sl[j]];
            sub_w = nmt_buf(c, (size_t)d * S);
            sub_b = nmt_buf(c, (size_t)S);
            if (sub_w && sub_b) {
                op->upload(c, sub_w, hsub, (size_t)d * S);
                op->upload(c, sub_b, hsub + (size_t)d * S, (size_t)S);
                proj = (nmt_linear){sub_w, NULL, d, S};
                obias = sub_b;
                Vo = S;
            }
        }
        free(hsub); /* fewer words than the beam: the whole vocabulary instead */
    }
    if (!c->failed)
        logits = nmt_buf(c, (size_t)cap * Vo);
    int R = nb;
    for (int r = 0; r < R; r++) {
        row_sent[r] = r;
        cur[r] = cfg->bos_id;
        score[r] = K == 1 ? NAN : 0.0f;
    }
    for (int t = 0; R > 0 && !c->failed; t++) {
        for (int r = 0; r < R; r++) {
            pos[r] = t;
            coff[r] = ((int64_t)r * Tmax + t) * d;
            s.koff[r] = (int64_t)r * Tmax * d;
            s.klen[r] = t + 1;
            s.ckoff[r] = (int64_t)e.start[row_sent[r]] * d;
            s.cklen[r] = e.start[row_sent[r] + 1] - e.start[row_sent[r]];
        }
        op->embed(c, c->w->tgt_embed, cur, pos, R, d, y);
        nmt_decode_rows(c, &e, y, R, &s, kc, vc, coff, NULL);
        op->linear(c, s.h, R, &proj, logits, 0);
        if (K == 1) {
            op->argmax(c, logits, obias, R, Vo, kid);
            for (int r = 0; r < R; r++)
                val[r] = NAN;
        } else {
            op->topk(c, logits, obias, R, Vo, K, val, kid, lse);
        }
        if (c->failed)
            break;
        if (Vo != V) /* back to vocabulary ids; sl is sorted, so ties keep their order */
            for (int i = 0; i < R * K; i++)
                if (kid[i] != INT32_MAX)
                    kid[i] = sl[kid[i]];
        int R2 = 0;
        for (int r0 = 0; r0 < R;) {
            int sid = row_sent[r0], r1 = r0, nc = 0;
            while (r1 < R && row_sent[r1] == sid)
                r1++;
            sent_state *st = &ss[sid];
            for (int r = r0; r < r1; r++)
                for (int j = 0; j < K; j++)
                    if (kid[r * K + j] != INT32_MAX)
                        cands[nc++] = (cand){score[r] + val[r * K + j], r, kid[r * K + j]};
            qsort(cands, (size_t)nc, sizeof *cands, cand_cmp);
            int width = K - st->fin;
            for (int j = 0; j < nc && j < width; j++) {
                cand *cd = &cands[j];
                const int32_t *h = hist + (size_t)cd->row * Tmax;
                if (cd->id == cfg->eos_id || t + 1 >= st->maxlen) {
                    int len = t;
                    if (cd->id != cfg->eos_id) { /* forced stop: keep the last word */
                        hist[(size_t)cd->row * Tmax + t] = cd->id;
                        len = t + 1;
                    }
                    if (finish(st, h, len, cd->score, o->length_penalty))
                        c->failed = smt_err_set(c->err, SMT_ERR_NOMEM, "out of memory");
                    continue;
                }
                parent[R2] = cd->row;
                nxt_tok[R2] = cd->id;
                score2[R2] = cd->score;
                memcpy(hist2 + (size_t)R2 * Tmax, h, (size_t)t * sizeof *h);
                hist2[(size_t)R2 * Tmax + t] = cd->id;
                row_sent2[R2] = sid;
                R2++;
            }
            st->done = st->fin >= K || t + 1 >= st->maxlen; /* then it added no rows */
            r0 = r1;
        }
        /* compact the surviving rows' caches (a gather; also drops finished sentences) */
        for (int l = 0; l < L && R2 > 0; l++) {
            op->gather_rows(c, kc2[l], kc[l], parent, R2, (size_t)(t + 1) * d, (size_t)Tmax * d);
            op->gather_rows(c, vc2[l], vc[l], parent, R2, (size_t)(t + 1) * d, (size_t)Tmax * d);
            float *tmp = kc[l];
            kc[l] = kc2[l];
            kc2[l] = tmp;
            tmp = vc[l];
            vc[l] = vc2[l];
            vc2[l] = tmp;
        }
        int32_t *th = hist;
        hist = hist2;
        hist2 = th;
        float *ts = score;
        score = score2;
        score2 = ts;
        memcpy(cur, nxt_tok, (size_t)R2 * sizeof *cur);
        memcpy(row_sent, row_sent2, (size_t)R2 * sizeof *row_sent);
        R = R2;
    }
    for (int i = 0; i < nb; i++) {
        out[which[i]] = ss[i].best;
        ss[i].best.ids = NULL;
    }
    for (int i = 0; i < nb; i++)
        free(ss[i].best.ids);
    for (int l = 0; kc && l < 4 * L; l++)
        nmt_buf_free(c, kc[l]);
    nmt_buf_free(c, y);
    nmt_buf_free(c, logits);
    nmt_buf_free(c, sub_w);
    nmt_buf_free(c, sub_b);
    free(sl);
    nmt_dec_scratch_free(c, &s);
    nmt_enc_free(c, &e);
    free(hist < hist2 ? hist : hist2);
    free(score < score2 ? score : score2);
    free(kc);
    free(row_sent);
    free(cur);
    free(val);
    free(lse);
    free(kid);
    free(pos);
    free(coff);
    free(cands);
    free(bs);
    free(ss);
    return c->failed;
}

int nmt_translate(nmt_ctx *c, size_t n, const nmt_sentence *src, const nmt_search_options *opt,
                  nmt_hyp *out, smt_err *err)
{
    nmt_search_options o = {5, 2.0f, 10, 0.6f, NULL};
    if (opt)
        o = *opt;
    if (o.beam < 1 || o.beam > NMT_MAX_K)
        return smt_err_set(err, SMT_ERR_ARG, "beam %d out of range 1..%d", o.beam, NMT_MAX_K);
    /* the length limit is converted to an int: a NaN or a huge ratio would be undefined */
    if (!(o.max_len_ratio >= 0 && o.max_len_ratio <= 1000) || o.max_len_add < 0 ||
        o.max_len_add > 100000 || !(o.length_penalty >= 0 && o.length_penalty <= 10))
        return smt_err_set(err, SMT_ERR_ARG,
                           "search options out of range: max_len_ratio %g (0..1000), max_len_add "
                           "%d (0..100000), length_penalty %g (0..10)",
                           (double)o.max_len_ratio, o.max_len_add, (double)o.length_penalty);
    memset(out, 0, n * sizeof *out);
    size_t *which = malloc((n ? n : 1) * sizeof *which);
    if (!which)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    c->err = err;
    c->failed = 0;
    int per_batch = c->max_batch / (o.beam > 4 ? 4 : o.beam);
    if (per_batch < 1)
        per_batch = 1;
    for (size_t b = 0; b < n && !c->failed; b += (size_t)per_batch) {
        int nb = (int)(n - b < (size_t)per_batch ? n - b : (size_t)per_batch);
        for (int i = 0; i < nb; i++)
            which[i] = b + (size_t)i;
        translate_batch(c, src, which, nb, &o, out);
    }
    free(which);
    c->err = NULL;
    if (c->failed) {
        nmt_hyps_free(out, n);
        return c->failed;
    }
    return 0;
}

void nmt_hyps_free(nmt_hyp *h, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(h[i].ids);
        h[i].ids = NULL;
    }
}
