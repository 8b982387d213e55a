/* nmt_tune.c — the rescoring weight search (nmt tune): the NMT weight and length bonus that
 * maximize BLEU of the re-ranked 1-best, over a grid, optionally cross-validated by folds.
 * score = base + w * NMT0 + u * words. u re-tunes the word penalty: adding a log-probability, which
 * falls with every word, shifts the length balance Moses's weights were tuned for. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "smt_bleu.h"

typedef struct hyp_row {
    long id;
    double base, nmt;
    smt_bleu_stat st;
    const char *words;
} hyp_row;

typedef struct tune_set {
    const hyp_row *h;
    size_t n;
    long n_ref;
    const smt_bleu_stat *empty; /* statistics of an empty output, for missing sentences */
} tune_set;

static void stats_for(char **const *refs, int nref, size_t line, const char *hyp, smt_bleu_stat *st)
{
    const char *r[SMT_BLEU_MAX_REFS];
    for (int k = 0; k < nref; k++)
        r[k] = refs[k][line];
    smt_bleu_stats(hyp, r, nref, st);
}

/* The 1-best of sentence id (h[*i..] holds its rows; *i advances past them), or NULL. */
static const hyp_row *pick(const tune_set *T, size_t *i, long id, double w, double u)
{
    const hyp_row *best = NULL;
    double bs = 0;
    for (; *i < T->n && T->h[*i].id == id; (*i)++) {
        const hyp_row *r = &T->h[*i];
        double s = r->base + w * r->nmt + u * (double)r->st.hyp_len;
        if (!best || s > bs) /* ties: the earlier line */
            best = r, bs = s;
    }
    return best;
}

/* BLEU of the picks over sentences in fold (fold < 0: all; out: all but fold). */
static double pick_bleu(const tune_set *T, double w, double u, int folds, int fold, int out)
{
    smt_bleu_stat sum;
    memset(&sum, 0, sizeof sum);
    size_t i = 0;
    for (long id = 0; id < T->n_ref; id++) {
        const hyp_row *b = pick(T, &i, id, w, u);
        int in = fold < 0 || ((id % folds == fold) != out);
        if (in)
            smt_bleu_add(&sum, b ? &b->st : &T->empty[id]);
    }
    return smt_bleu_score(&sum);
}

static void search(const tune_set *T, const nmt_tune_options *g, int folds, int fold, double *bw,
                   double *bu, double *bleu)
{
    *bw = 0, *bu = 0, *bleu = -1;
    int nu = (int)floor((g->len_hi - g->len_lo) / g->len_step + 1e-6);
    int nw = (int)floor((g->hi - g->lo) / g->step + 1e-6);
    for (int iu = 0; iu <= nu; iu++)
        for (int iw = 0; iw <= nw; iw++) {
            /* grid points by index, not by accumulation: 0 stays 0 */
            double u = g->len_lo + iu * g->len_step, w = g->lo + iw * g->step;
            u = fabs(u) < 1e-12 ? 0 : u;
            w = fabs(w) < 1e-12 ? 0 : w;
            double b = pick_bleu(T, w, u, folds, fold, 1);
            /* prefer the smallest change on ties: start from w = u = 0 and require a gain */
            if (b > *bleu + 1e-9 || (fabs(b - *bleu) <= 1e-9 && fabs(w) + fabs(u) < fabs(*bw) + fabs(*bu)))
                *bleu = b, *bw = w, *bu = u;
        }
}

/* LO <= HI, STEP > 0, all finite and at most NMT_TUNE_MAX_POINTS steps. */
static int grid_ok(double lo, double hi, double step)
{
    return isfinite(lo) && isfinite(hi) && isfinite(step) && step > 0 && lo <= hi &&
           (hi - lo) / step <= NMT_TUNE_MAX_POINTS;
}

void nmt_tune_options_default(nmt_tune_options *o)
{
    memset(o, 0, sizeof *o);
    o->hi = 2, o->step = 0.02;
    o->len_step = 1;
    o->folds = 1;
}

void nmt_tune_result_free(nmt_tune_result *r)
{
    if (!r)
        return;
    free(r->fold);
    free(r->best);
    memset(r, 0, sizeof *r);
}

int nmt_tune(char **nbest, size_t n_lines, const char *nbest_name, char **const *refs, int n_refs,
             size_t n_sentences, const nmt_tune_options *opt, nmt_tune_result *res, smt_err *err)
{
    memset(res, 0, sizeof *res);
    const char *name = nbest_name ? nbest_name : "<n-best>";
    if (!grid_ok(opt->lo, opt->hi, opt->step) || !grid_ok(opt->len_lo, opt->len_hi, opt->len_step))
        return smt_err_set(err, SMT_ERR_ARG, "nmt_tune: a grid needs finite LO <= HI, STEP > 0 "
                                             "and at most %g points", NMT_TUNE_MAX_POINTS);
    if (opt->folds < 1 || !isfinite(opt->used_weight))
        return smt_err_set(err, SMT_ERR_ARG, "nmt_tune: folds must be >= 1 and the used weight "
                                             "finite");
    if (n_refs < 1 || n_refs > SMT_BLEU_MAX_REFS)
        return smt_err_set(err, SMT_ERR_ARG, "nmt_tune: %d references (1 to %d)", n_refs,
                           SMT_BLEU_MAX_REFS);
    if (n_lines == 0)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: no n-best lines (an empty list)", name);
    hyp_row *h = calloc(n_lines, sizeof *h);
    smt_bleu_stat *empty = calloc(n_sentences ? n_sentences : 1, sizeof *empty);
    int folds = opt->folds;
    res->best = calloc(n_sentences ? n_sentences : 1, sizeof *res->best);
    res->fold = folds > 1 ? calloc((size_t)folds, sizeof *res->fold) : NULL;
    int rc = 0;
    if (!h || !empty || !res->best || (folds > 1 && !res->fold))
        rc = smt_err_set(err, SMT_ERR_NOMEM, "nmt_tune: out of memory");
    const char *fname = opt->feature ? opt->feature : "NMT0";
    if (!rc)
        rc = nmt_nbest_feature_name_check(fname, err);
    size_t n = 0;
    for (size_t i = 0; !rc && i < n_lines; i++) {
        nmt_nbest_line nb;
        double f = 0;
        int found = 0;
        if (nmt_nbest_parse(nbest[i], &nb) || (size_t)nb.id >= n_sentences ||
            (n && nb.id < h[n - 1].id)) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%zu: bad n-best line, id beyond the "
                                                 "reference or out of order", name, i + 1);
        } else if ((found = nmt_nbest_feature(nb.feats, fname, &f)) <= 0) {
            rc = smt_err_set(err, SMT_ERR_PARSE,
                             found < 0 ? "%s:%zu: the %s= score is not a number"
                                       : "%s:%zu: no %s= feature (run nmt rescore first)",
                             name, i + 1, fname);
        } else {
            h[n].id = nb.id;
            h[n].base = nb.total - opt->used_weight * f;
            nmt_nbest_plain(nb.words, nb.words); /* segmentation markers are not words */
            h[n].words = nb.words;
            stats_for(refs, n_refs, (size_t)nb.id, nb.words, &h[n].st);
            /* per_word: the feature divided by the words + </s> it covers */
            h[n].nmt = opt->per_word ? f / (double)(h[n].st.hyp_len + 1) : f;
            n++;
        }
    }
    if (!rc) {
        for (size_t i = 0; i < n_sentences; i++)
            stats_for(refs, n_refs, i, "", &empty[i]);
        tune_set T = {h, n, (long)n_sentences, empty};
        res->base_bleu = pick_bleu(&T, 0, 0, 1, -1, 0);
        search(&T, opt, 1, -1, &res->weight, &res->length_bonus, &res->bleu);
        res->folds = folds;
        /* cross-validation: each fold's weights are chosen on the other folds */
        for (int f = 0; f < folds && folds > 1; f++) {
            nmt_tune_fold *F = &res->fold[f];
            search(&T, opt, folds, f, &F->weight, &F->length_bonus, &F->train_bleu);
            F->base_bleu = pick_bleu(&T, 0, 0, folds, f, 0);
            F->bleu = pick_bleu(&T, F->weight, F->length_bonus, folds, f, 0);
        }
        smt_bleu_stat sum;
        memset(&sum, 0, sizeof sum);
        size_t i = 0;
        for (long id = 0; id < (long)n_sentences; id++) {
            const nmt_tune_fold *F = folds > 1 ? &res->fold[id % folds] : NULL;
            const hyp_row *b = pick(&T, &i, id, F ? F->weight : res->weight,
                                    F ? F->length_bonus : res->length_bonus);
            smt_bleu_add(&sum, b ? &b->st : &empty[id]);
            res->best[id] = b ? b->words : "";
        }
        res->cv_bleu = smt_bleu_score(&sum);
        res->n_sentences = n_sentences;
    }
    free(h);
    free(empty);
    if (rc)
        nmt_tune_result_free(res);
    return rc;
}
