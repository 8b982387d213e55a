/* nmt — NMT scoring, n-best rescoring, translation, BLEU and the rescoring weight search.
 *
 *   nmt score     --model DIR --source SRC --target TGT            log-probability per line
 *   nmt rescore   --model DIR --source SRC --nbest IN [--weight W (0.3)] [--length-bonus U]
 *                 [--nbest-out FILE] > 1BEST
 *   nmt translate --model DIR [--source SRC] [--beam K] [--alpha A] [--shortlist FILE
 *                 [--shortlist-words 20] [--shortlist-frequent 500]] > OUT
 *   nmt tune      --nbest RESCORED --ref REF [--used-weight W0] [--range LO:HI:STEP]
 *                 [--len-range LO:HI:STEP] [--per-word] [--folds F] [--best-out FILE]
 *   nmt bleu      HYP REF[,REF2...]          (several references: comma-separated)
 * Common options: --gpu (CUDA backend), --device N, --threads N, --batch N. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmt.h"
#include "nmt_rescore.h"
#include "smt_bleu.h"
#include "smt_lines.h"

typedef struct args {
    const char *cmd, *model, *source, *target, *nbest, *nbest_out, *ref, *feature, *range;
    const char *len_range, *best_out, *shortlist;
    int sl_words, sl_frequent, per_word;
    const char *pos[2];
    int npos, gpu, device, threads, batch, beam, folds;
    float weight, used_weight, alpha, ratio, length_bonus;
} args;

static int usage(void)
{
    fputs("usage: nmt score     --model DIR --source SRC --target TGT\n"
          "       nmt rescore   --model DIR --source SRC --nbest IN [--weight W] [--nbest-out FILE]"
          " [--length-bonus U] [--feature NAME] > 1BEST\n"
          "       nmt translate --model DIR [--source SRC] [--beam K] [--alpha A] [--max-ratio R]\n"
          "                     [--shortlist FILE [--shortlist-words N] [--shortlist-frequent N]]\n"
          "       nmt tune      --nbest RESCORED --ref REF [--used-weight W0] [--feature NAME]"
          " [--range LO:HI:STEP] [--len-range LO:HI:STEP] [--per-word] [--folds F]"
          " [--best-out FILE]\n"
          "       nmt bleu      HYP REF[,REF2...]\n"
          "options: --gpu --device N --threads N --batch N\n",
          stderr);
    return 2;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads every line of path (NULL or "-" = stdin) into a malloc'ed array of strings. */
static char **read_all(const char *path, size_t *n, smt_err *err)
{
    smt_lines *r;
    *n = 0;
    if (smt_lines_open(&r, path ? path : "-", 0, err))
        return NULL;
    char **v = NULL, *line;
    size_t cap = 0, len;
    int rc;
    while ((rc = smt_lines_next(r, &line, &len, err)) == 1) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            char **nv = realloc(v, cap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
        }
        v[(*n)++] = strdup(line);
    }
    smt_lines_close(r);
    return v;
}

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

static nmt_sentence *tokenize_all(const nmt_model *m, int target, char **lines, size_t n)
{
    nmt_sentence *s = calloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; s && i < n; i++) {
        size_t k = nmt_model_tokenize(m, target, lines[i], NULL, 0);
        int32_t *ids = malloc((k ? k : 1) * sizeof *ids);
        if (!ids)
            exit(1);
        nmt_model_tokenize(m, target, lines[i], ids, k);
        s[i] = (nmt_sentence){ids, (int)k};
    }
    return s;
}

static void free_sents(nmt_sentence *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free((void *)s[i].ids);
    free(s);
}

/* Reads the reference files (a comma-separated list) into refs[k][line]; all must have n lines. */
static int read_refs(const char *list, char ***refs, int *nref, size_t *n, smt_err *err)
{
    char *copy = strdup(list), *save = NULL;
    *nref = 0;
    for (char *p = strtok_r(copy, ",", &save); p && *nref < 8; p = strtok_r(NULL, ",", &save)) {
        size_t k;
        refs[*nref] = read_all(p, &k, err);
        if (!refs[*nref] || (*nref > 0 && k != *n)) {
            fprintf(stderr, "nmt: %s: %s\n", p, refs[*nref] ? "line count differs" : err->msg);
            free(copy);
            return -1;
        }
        *n = k;
        (*nref)++;
    }
    free(copy);
    return *nref ? 0 : -1;
}

static void stats_for(char ***refs, int nref, size_t line, const char *hyp, smt_bleu_stat *st)
{
    const char *r[8];
    for (int k = 0; k < nref; k++)
        r[k] = refs[k][line];
    smt_bleu_stats(hyp, r, nref, st);
}

/* ---- tune: the NMT weight that maximizes BLEU of the re-ranked 1-best ----
 * score = base + w * NMT0 + u * words. u re-tunes the word penalty: adding a log-probability, which
 * falls with every word, shifts the length balance Moses's weights were tuned for. */

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

typedef struct grid {
    double lo, hi, step, ulo, uhi, ustep;
} grid;

static void search(const tune_set *T, const grid *g, int folds, int fold, double *bw, double *bu,
                   double *bleu)
{
    *bw = 0, *bu = 0, *bleu = -1;
    int nu = (int)floor((g->uhi - g->ulo) / g->ustep + 1e-6);
    int nw = (int)floor((g->hi - g->lo) / g->step + 1e-6);
    for (int iu = 0; iu <= nu; iu++)
        for (int iw = 0; iw <= nw; iw++) {
            /* grid points by index, not by accumulation: 0 stays 0 */
            double u = g->ulo + iu * g->ustep, w = g->lo + iw * g->step;
            u = fabs(u) < 1e-12 ? 0 : u;
            w = fabs(w) < 1e-12 ? 0 : w;
            double b = pick_bleu(T, w, u, folds, fold, 1);
            /* prefer the smallest change on ties: start from w = u = 0 and require a gain */
            if (b > *bleu + 1e-9 || (fabs(b - *bleu) <= 1e-9 && fabs(w) + fabs(u) < fabs(*bw) + fabs(*bu)))
                *bleu = b, *bw = w, *bu = u;
        }
}

static int cmd_tune(const args *a)
{
    smt_err err;
    size_t nr = 0, nl;
    char **refs[8], **lines = read_all(a->nbest, &nl, &err);
    int nref;
    if (!lines || read_refs(a->ref, refs, &nref, &nr, &err)) {
        fprintf(stderr, "nmt tune: cannot read %s or the references\n", a->nbest);
        return 1;
    }
    hyp_row *h = calloc(nl ? nl : 1, sizeof *h);
    smt_bleu_stat *empty = calloc(nr ? nr : 1, sizeof *empty);
    const char *fname = a->feature ? a->feature : "NMT0";
    size_t n = 0;
    for (size_t i = 0; i < nl; i++) {
        nmt_nbest_line nb;
        int found;
        if (nmt_nbest_parse(lines[i], &nb) || nb.id < 0 || (size_t)nb.id >= nr ||
            (n && nb.id < h[n - 1].id)) {
            fprintf(stderr, "nmt tune: %s:%zu: bad n-best line, id beyond the reference or out of "
                            "order\n", a->nbest, i + 1);
            return 1;
        }
        double f = nmt_nbest_feature(nb.feats, fname, &found);
        if (!found) {
            fprintf(stderr, "nmt tune: %s:%zu: no %s= feature (run nmt rescore first)\n", a->nbest,
                    i + 1, fname);
            return 1;
        }
        h[n].id = nb.id;
        h[n].base = nb.total - a->used_weight * f;
        nmt_nbest_plain(nb.words, nb.words); /* segmentation markers are not words */
        h[n].words = nb.words;
        stats_for(refs, nref, (size_t)nb.id, nb.words, &h[n].st);
        /* --per-word: the feature divided by the words + </s> it covers */
        h[n].nmt = a->per_word ? f / (double)(h[n].st.hyp_len + 1) : f;
        n++;
    }
    for (size_t i = 0; i < nr; i++)
        stats_for(refs, nref, i, "", &empty[i]);
    grid g = {0, 2, 0.02, 0, 0, 1};
    if (a->range && sscanf(a->range, "%lf:%lf:%lf", &g.lo, &g.hi, &g.step) != 3) {
        fprintf(stderr, "nmt tune: --range wants LO:HI:STEP\n");
        return 2;
    }
    if (a->len_range && sscanf(a->len_range, "%lf:%lf:%lf", &g.ulo, &g.uhi, &g.ustep) != 3) {
        fprintf(stderr, "nmt tune: --len-range wants LO:HI:STEP\n");
        return 2;
    }
    if (g.step <= 0 || g.ustep <= 0) {
        fprintf(stderr, "nmt tune: steps must be positive\n");
        return 2;
    }
    tune_set T = {h, n, (long)nr, empty};
    double base = pick_bleu(&T, 0, 0, 1, -1, 0), w, u, bleu;
    search(&T, &g, 1, -1, &w, &u, &bleu);
    printf("baseline BLEU %.2f\nbest weight %.4g length bonus %.4g BLEU %.2f (tuned on this set)\n",
           base, w, u, bleu);
    double *fw = calloc((size_t)(a->folds > 1 ? a->folds : 1), sizeof *fw),
           *fu = calloc((size_t)(a->folds > 1 ? a->folds : 1), sizeof *fu);
    fw[0] = w, fu[0] = u;
    if (a->folds > 1) {
        /* cross-validation: each fold's weights are chosen on the other folds */
        for (int f = 0; f < a->folds; f++) {
            double fb;
            search(&T, &g, a->folds, f, &fw[f], &fu[f], &fb);
            printf("fold %d: weight %.4g length bonus %.4g (train BLEU %.2f), held-out BLEU %.2f -> "
                   "%.2f\n", f, fw[f], fu[f], fb, pick_bleu(&T, 0, 0, a->folds, f, 0),
                   pick_bleu(&T, fw[f], fu[f], a->folds, f, 0));
        }
    }
    smt_bleu_stat sum;
    memset(&sum, 0, sizeof sum);
    FILE *best = a->best_out ? fopen(a->best_out, "w") : NULL;
    size_t i = 0;
    for (long id = 0; id < (long)nr; id++) {
        int f = a->folds > 1 ? (int)(id % a->folds) : 0;
        const hyp_row *b = pick(&T, &i, id, fw[f], fu[f]);
        smt_bleu_add(&sum, b ? &b->st : &empty[id]);
        if (best) {
            size_t len = b ? strlen(b->words) : 0;
            while (len && b->words[len - 1] == ' ')
                len--;
            fprintf(best, "%.*s\n", (int)len, b ? b->words : "");
        }
    }
    if (a->folds > 1)
        printf("cross-validated BLEU %.2f (baseline %.2f)\n", smt_bleu_score(&sum), base);
    if (best)
        fclose(best);
    free(fw);
    free(fu);
    free(h);
    free(empty);
    for (int k = 0; k < nref; k++)
        free_all(refs[k], nr);
    free_all(lines, nl);
    return 0;
}

static int cmd_bleu(const args *a)
{
    smt_err err;
    size_t nh, nr = 0;
    char **hyp = read_all(a->pos[0], &nh, &err), **refs[8];
    int nref;
    if (!hyp || read_refs(a->pos[1], refs, &nref, &nr, &err) || nh != nr) {
        fprintf(stderr, "nmt bleu: %s\n", !hyp ? err.msg : "cannot read the references or line counts differ");
        return 1;
    }
    smt_bleu_stat sum, st;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; i < nh; i++) {
        stats_for(refs, nref, i, hyp[i], &st);
        smt_bleu_add(&sum, &st);
    }
    printf("BLEU = %.2f\n", smt_bleu_score(&sum));
    free_all(hyp, nh);
    for (int k = 0; k < nref; k++)
        free_all(refs[k], nr);
    return 0;
}

/* ---- model commands ---- */

static int run_model(const args *a)
{
    smt_err err;
    smt_err_clear(&err);
    nmt_model *m = NULL;
    nmt_ctx *c = NULL;
    int rc = nmt_model_open(&m, a->model, &err);
    nmt_ctx_options o = {a->gpu ? NMT_BACKEND_CUDA : NMT_BACKEND_CPU, a->device,
                         (unsigned)a->threads, a->batch, 0};
    if (!rc)
        rc = nmt_ctx_create(&c, m, &o, &err);
    if (rc == SMT_ERR_UNSUPPORTED && a->gpu) { /* no CUDA here: say so and use the CPU */
        fprintf(stderr, "nmt: %s; running on the CPU\n", err.msg);
        o.backend = NMT_BACKEND_CPU;
        rc = nmt_ctx_create(&c, m, &o, &err);
    }
    double t0 = now();
    if (!rc && strcmp(a->cmd, "rescore") == 0) {
        nmt_rescore_options ro = {a->weight, a->feature, a->length_bonus};
        rc = nmt_rescore_files(c, a->source, a->nbest, &ro, a->nbest_out, "-", &err);
        if (!rc)
            fprintf(stderr, "nmt rescore: %.1f s\n", now() - t0);
    } else if (!rc) {
        size_t ns, nt = 0;
        char **src = read_all(a->source, &ns, &err), **tgt = NULL;
        if (strcmp(a->cmd, "score") == 0)
            tgt = read_all(a->target, &nt, &err);
        if (!src || (strcmp(a->cmd, "score") == 0 && (!tgt || nt != ns))) {
            rc = SMT_ERR_ARG;
            fprintf(stderr, "nmt %s: %s\n", a->cmd, !src || !tgt ? err.msg : "line counts differ");
        } else if (strcmp(a->cmd, "score") == 0) {
            nmt_sentence *s = tokenize_all(m, 0, src, ns), *t = tokenize_all(m, 1, tgt, nt);
            float *lp = malloc((ns ? ns : 1) * sizeof *lp);
            long words = 0;
            rc = nmt_score(c, ns, s, t, lp, &err);
            for (size_t i = 0; !rc && i < ns; i++) {
                printf("%.6f\n", lp[i]);
                words += t[i].len + 1;
            }
            if (!rc)
                fprintf(stderr, "nmt score: %zu sentences, %ld words, %.0f words/s\n", ns, words,
                        (double)words / (now() - t0));
            free(lp);
            free_sents(s, ns);
            free_sents(t, nt);
        } else {
            nmt_sentence *s = tokenize_all(m, 0, src, ns);
            nmt_hyp *h = calloc(ns ? ns : 1, sizeof *h);
            nmt_shortlist *sl = NULL;
            if (a->shortlist)
                rc = nmt_shortlist_load(&sl, m, a->shortlist, a->sl_words, a->sl_frequent, &err);
            nmt_search_options so = {a->beam, a->ratio, 10, a->alpha, sl};
            long words = 0;
            if (!rc)
                rc = nmt_translate(c, ns, s, &so, h, &err);
            for (size_t i = 0; !rc && i < ns; i++) {
                for (int j = 0; j < h[i].len; j++)
                    printf(j ? " %s" : "%s", nmt_model_tgt_word(m, h[i].ids[j]));
                putchar('\n');
                words += h[i].len;
            }
            if (!rc)
                fprintf(stderr, "nmt translate: %zu sentences, %ld words, %.0f words/s\n", ns,
                        words, (double)words / (now() - t0));
            nmt_hyps_free(h, ns);
            nmt_shortlist_free(sl);
            free(h);
            free_sents(s, ns);
        }
        free_all(src, ns);
        if (tgt)
            free_all(tgt, nt);
    }
    if (rc && rc != SMT_ERR_ARG)
        fprintf(stderr, "nmt %s: %s\n", a->cmd, smt_err_text(&err, rc));
    nmt_ctx_free(c);
    nmt_model_free(m);
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    args a = {0};
    a.cmd = argv[1];
    a.beam = 5;
    a.alpha = 0.6f;
    a.ratio = 2.0f;
    a.batch = 64;
    a.weight = 0.3f; /* tuned on the bible model (docs/nmt.md); pass --weight to change */
    a.sl_words = 20;
    a.sl_frequent = 500;
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
#define STR(name, field)                                                                           \
    if (strcmp(o, name) == 0 && v) {                                                               \
        a.field = v;                                                                               \
        i++;                                                                                       \
        continue;                                                                                  \
    }
#define NUM(name, field, conv)                                                                     \
    if (strcmp(o, name) == 0 && v) {                                                               \
        a.field = conv(v);                                                                         \
        i++;                                                                                       \
        continue;                                                                                  \
    }
        STR("--model", model) STR("--source", source) STR("--target", target)
        STR("--nbest", nbest) STR("--nbest-out", nbest_out) STR("--ref", ref)
        STR("--feature", feature) STR("--range", range)
        STR("--len-range", len_range) STR("--best-out", best_out) STR("--shortlist", shortlist)
        NUM("--shortlist-words", sl_words, atoi) NUM("--shortlist-frequent", sl_frequent, atoi)
        NUM("--weight", weight, (float)atof) NUM("--used-weight", used_weight, (float)atof)
        NUM("--length-bonus", length_bonus, (float)atof)
        NUM("--alpha", alpha, (float)atof) NUM("--max-ratio", ratio, (float)atof)
        NUM("--device", device, atoi) NUM("--threads", threads, atoi) NUM("--batch", batch, atoi)
        NUM("--beam", beam, atoi) NUM("--folds", folds, atoi)
#undef STR
#undef NUM
        if (strcmp(o, "--per-word") == 0) {
            a.per_word = 1;
            continue;
        }
        if (strcmp(o, "--gpu") == 0) {
            a.gpu = 1;
            continue;
        }
        if (o[0] != '-' && a.npos < 2) {
            a.pos[a.npos++] = o;
            continue;
        }
        fprintf(stderr, "nmt: unknown or incomplete option '%s'\n", o);
        return usage();
    }
    if (strcmp(a.cmd, "bleu") == 0)
        return a.npos == 2 ? cmd_bleu(&a) : usage();
    if (strcmp(a.cmd, "tune") == 0)
        return a.nbest && a.ref ? cmd_tune(&a) : usage();
    int known = !strcmp(a.cmd, "score") || !strcmp(a.cmd, "rescore") || !strcmp(a.cmd, "translate");
    if (!known || !a.model || (strcmp(a.cmd, "translate") && !a.source) ||
        (!strcmp(a.cmd, "score") && !a.target) || (!strcmp(a.cmd, "rescore") && !a.nbest))
        return usage();
    return run_model(&a);
}
