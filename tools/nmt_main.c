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
 * Common options: --gpu (CUDA backend), --device N, --threads N, --batch N.
 * Every path may be "-" (standard input or output). Every number is parsed strictly and range-
 * checked (common/smt_num.h); a read or write error is an error (exit 1). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmt.h"
#include "smt_bleu.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_buf.h"
#include "smt_words.h"

typedef struct args {
    const char *cmd, *model, *source, *target, *nbest, *nbest_out, *ref, *feature, *range;
    const char *len_range, *best_out, *shortlist;
    int sl_words, sl_frequent, per_word;
    const char *pos[2];
    int npos, gpu, device, threads, batch, beam, folds;
    float weight, used_weight, alpha, ratio, length_bonus;
} args;

static const char *const usage_text[][2] = {
    {"score", "nmt score     --model DIR --source SRC --target TGT\n"
              "    one log-probability per line (ln p(target | source), </s> included)\n"},
    {"rescore", "nmt rescore   --model DIR --source SRC --nbest IN [--weight W (0.3)]\n"
                "              [--length-bonus U (0)] [--feature NAME (NMT0)] [--nbest-out FILE]\n"
                "    adds NAME= logprob to each hypothesis, total += W * logprob + U * words,\n"
                "    re-ranks; prints the 1-best lines (--nbest-out -: the list instead)\n"},
    {"translate", "nmt translate --model DIR [--source SRC (stdin)] [--beam K (5)] [--alpha A (0.6)]\n"
                  "              [--max-ratio R (2)] [--shortlist FILE [--shortlist-words N (20)]\n"
                  "              [--shortlist-frequent N (500)]]\n"},
    {"tune", "nmt tune      --nbest RESCORED --ref REF[,REF2...] [--used-weight W0 (0)]\n"
             "              [--feature NAME] [--range LO:HI:STEP (0:2:0.02)]\n"
             "              [--len-range LO:HI:STEP (0:0:1)] [--per-word] [--folds F (1)]\n"
             "              [--best-out FILE (-: the 1-best lines on stdout, the report on stderr)]\n"},
    {"bleu", "nmt bleu      HYP REF[,REF2...]\n"}};

/* The usage of cmd (NULL or unknown: all commands) to f. */
static void usage_to(FILE *f, const char *cmd)
{
    int known = 0;
    for (size_t i = 0; cmd && i < sizeof usage_text / sizeof usage_text[0]; i++)
        known |= !strcmp(cmd, usage_text[i][0]);
    fputs("usage:\n", f);
    for (size_t i = 0; i < sizeof usage_text / sizeof usage_text[0]; i++)
        if (!known || !strcmp(cmd, usage_text[i][0]))
            fputs(usage_text[i][1], f);
    fputs("options of the model commands: --gpu --device N (0) --threads N (0: all CPUs)\n"
          "    --batch N (64)\n"
          "every path may be - (standard input or output); --help prints this\n",
          f);
}

static int usage(const char *cmd)
{
    usage_to(stderr, cmd);
    return 2;
}

/* Standard output flushed and closed: a write error (a full disk, a closed pipe) is an error. */
static int close_stdout(const char *cmd, int rc)
{
    smt_err e;
    int bad = smt_close_output(stdout, "standard output", &e);
    if (bad) {
        fprintf(stderr, "nmt%s%s: %s\n", cmd ? " " : "", cmd ? cmd : "", smt_err_text(&e, bad));
        return rc ? rc : 1;
    }
    return rc;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void free_all(char **v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        free(v[i]);
    free(v);
}

/* Reads every line of path (NULL or "-" = stdin) into a malloc'ed array of strings; NULL with err
 * set on a read error or out of memory (never a silently shortened list). */
static char **read_all(const char *path, size_t *n, smt_err *err)
{
    smt_lines *r;
    *n = 0;
    if (smt_lines_open(&r, path ? path : "-", 0, err))
        return NULL;
    char **v = malloc(sizeof *v), *line;
    size_t cap = 1, len;
    int rc = v ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    while (!rc && (rc = smt_lines_next(r, &line, &len, err)) == 1) {
        rc = 0;
        if (*n == cap && smt_grow(&v, &cap, *n + 1, sizeof *v, 0)) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        if (!(v[*n] = strdup(line))) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        (*n)++;
    }
    smt_lines_close(r);
    if (rc < 0) {
        free_all(v, *n);
        *n = 0;
        return NULL;
    }
    return v;
}

static void free_sents(nmt_sentence *s, size_t n)
{
    for (size_t i = 0; s && i < n; i++)
        free((void *)s[i].ids);
    free(s);
}

/* The word ids of every line; NULL when out of memory. */
static nmt_sentence *tokenize_all(const nmt_model *m, int target, char **lines, size_t n)
{
    nmt_sentence *s = calloc(n ? n : 1, sizeof *s);
    for (size_t i = 0; s && i < n; i++) {
        size_t k = nmt_model_tokenize(m, target, lines[i], NULL, 0);
        int32_t *ids = malloc((k ? k : 1) * sizeof *ids);
        if (!ids || k > INT32_MAX) {
            free(ids);
            free_sents(s, i);
            return NULL;
        }
        nmt_model_tokenize(m, target, lines[i], ids, k);
        s[i] = (nmt_sentence){ids, (int)k};
    }
    return s;
}

/* Reads the reference files (a comma-separated list, at most SMT_BLEU_MAX_REFS) into
 * refs[k][line]; all must have the same number of lines. Prints the error. */
static int read_refs(const char *cmd, const char *list, char ***refs, int *nref, size_t *n)
{
    smt_err err;
    int rc = 0;
    *nref = 0;
    const char *pos = list, *end = list + strlen(list), *w;
    size_t wl;
    while (!rc && smt_word_next(&pos, end, SMT_WS_COMMA, &w, &wl)) {
        size_t k;
        char *p = strndup(w, wl);
        if (!p) {
            fprintf(stderr, "nmt %s: out of memory\n", cmd);
            rc = -1;
            break;
        }
        if (*nref == SMT_BLEU_MAX_REFS) {
            fprintf(stderr, "nmt %s: more than %d references\n", cmd, SMT_BLEU_MAX_REFS);
            rc = -1;
        } else if (!(refs[*nref] = read_all(p, &k, &err))) {
            fprintf(stderr, "nmt %s: %s\n", cmd, err.msg);
            rc = -1;
        } else if (*nref > 0 && k != *n) {
            fprintf(stderr, "nmt %s: %s: %zu lines, but the first reference has %zu\n", cmd, p, k,
                    *n);
            free_all(refs[*nref], k);
            rc = -1;
        } else {
            *n = k;
            (*nref)++;
        }
        free(p);
    }
    if (!rc && *nref == 0) {
        fprintf(stderr, "nmt %s: no reference file given\n", cmd);
        rc = -1;
    }
    if (rc) {
        for (int k = 0; k < *nref; k++)
            free_all(refs[k], *n);
        *nref = 0;
    }
    return rc;
}

static void stats_for(char ***refs, int nref, size_t line, const char *hyp, smt_bleu_stat *st)
{
    const char *r[8];
    for (int k = 0; k < nref; k++)
        r[k] = refs[k][line];
    smt_bleu_stats(hyp, r, nref, st);
}

/* 1 when path is one of the files of a comma-separated list. */
static int in_list(const char *path, const char *list)
{
    const char *pos = list, *end = list ? list + strlen(list) : NULL, *w;
    size_t wl;
    int found = 0;
    while (path && list && !found && smt_word_next(&pos, end, SMT_WS_COMMA, &w, &wl)) {
        char *p = strndup(w, wl);
        found = p && smt_same_file(path, p);
        free(p);
    }
    return found;
}

/* LO:HI:STEP, each a finite number, STEP > 0, LO <= HI and at most a million points. */
static int parse_range(const char *flag, const char *text, double *lo, double *hi, double *step)
{
    double *out[3] = {lo, hi, step};
    const char *p = text;
    for (int i = 0; i < 3; i++) {
        size_t n = strcspn(p, ":");
        if ((i < 2 && p[n] != ':') || (i == 2 && p[n]) ||
            smt_parse_double(p, n, -1e9, 1e9, 0, out[i])) {
            fprintf(stderr, "nmt tune: %s: '%s' is not LO:HI:STEP (three numbers)\n", flag, text);
            return -1;
        }
        p += n + 1;
    }
    if (!(*step > 0) || *lo > *hi || (*hi - *lo) / *step > 1e6) {
        fprintf(stderr, "nmt tune: %s: '%s' needs STEP > 0, LO <= HI and at most 1e6 points\n",
                flag, text);
        return -1;
    }
    return 0;
}

/* tune: the NMT weight (and length bonus) that maximize BLEU of the re-ranked 1-best (nmt_tune in
 * nmt.h); the report on standard output (standard error when the 1-best lines go there). */
static int cmd_tune(const args *a)
{
    smt_err err;
    size_t nr = 0, nl;
    char **refs[SMT_BLEU_MAX_REFS], **lines = NULL;
    int nref = 0, rc = 0;
    nmt_tune_options o;
    nmt_tune_options_default(&o);
    o.feature = a->feature;
    o.used_weight = a->used_weight;
    o.per_word = a->per_word;
    o.folds = a->folds > 1 ? a->folds : 1;
    if ((a->range && parse_range("--range", a->range, &o.lo, &o.hi, &o.step)) ||
        (a->len_range && parse_range("--len-range", a->len_range, &o.len_lo, &o.len_hi, &o.len_step)))
        return 2;
    if (smt_same_file(a->best_out, a->nbest) || in_list(a->best_out, a->ref)) {
        fprintf(stderr, "nmt tune: --best-out %s is an input; refused\n", a->best_out);
        return 1;
    }
    if (!(lines = read_all(a->nbest, &nl, &err))) {
        fprintf(stderr, "nmt tune: %s\n", err.msg);
        return 1;
    }
    if (read_refs("tune", a->ref, refs, &nref, &nr)) {
        free_all(lines, nl);
        return 1;
    }
    const char *nbest_name = a->nbest && strcmp(a->nbest, "-") ? a->nbest : "<stdin>";
    nmt_tune_result t;
    int trc = nmt_tune(lines, nl, nbest_name, refs, nref, nr, &o, &t, &err);
    if (trc) {
        fprintf(stderr, "nmt tune: %s\n", smt_err_text(&err, trc));
        rc = 1;
    }
    FILE *best = NULL, *report = stdout;
    if (!rc && a->best_out) {
        /* the 1-best lines on standard output: the report goes to standard error */
        if (!strcmp(a->best_out, "-"))
            best = stdout, report = stderr;
        else if (!(best = fopen(a->best_out, "w"))) {
            fprintf(stderr, "nmt tune: %s: %s\n", a->best_out, strerror(errno));
            rc = 1;
        }
    }
    if (!rc) {
        fprintf(report,
                "baseline BLEU %.2f\nbest weight %.4g length bonus %.4g BLEU %.2f (tuned on this "
                "set)\n",
                t.base_bleu, t.weight, t.length_bonus, t.bleu);
        for (int f = 0; f < t.folds && t.fold; f++)
            fprintf(report,
                    "fold %d: weight %.4g length bonus %.4g (train BLEU %.2f), held-out BLEU "
                    "%.2f -> %.2f\n",
                    f, t.fold[f].weight, t.fold[f].length_bonus, t.fold[f].train_bleu,
                    t.fold[f].base_bleu, t.fold[f].bleu);
        for (size_t i = 0; best && i < t.n_sentences; i++) {
            size_t len = strlen(t.best[i]);
            while (len && t.best[i][len - 1] == ' ')
                len--;
            fprintf(best, "%.*s\n", (int)len, t.best[i]);
        }
        if (t.folds > 1)
            fprintf(report, "cross-validated BLEU %.2f (baseline %.2f)\n", t.cv_bleu, t.base_bleu);
    }
    smt_err e;
    int bad = best && best != stdout ? smt_close_output(best, a->best_out, &e) : 0;
    if (bad && !rc) {
        fprintf(stderr, "nmt tune: %s\n", smt_err_text(&e, bad));
        rc = 1;
    }
    if (!trc)
        nmt_tune_result_free(&t);
    for (int k = 0; k < nref; k++)
        free_all(refs[k], nr);
    free_all(lines, nl);
    return rc;
}

static int cmd_bleu(const args *a)
{
    smt_err err;
    size_t nh, nr = 0;
    char **hyp = read_all(a->pos[0], &nh, &err), **refs[SMT_BLEU_MAX_REFS];
    int nref;
    if (!hyp) {
        fprintf(stderr, "nmt bleu: %s\n", err.msg);
        return 1;
    }
    if (read_refs("bleu", a->pos[1], refs, &nref, &nr)) {
        free_all(hyp, nh);
        return 1;
    }
    int rc = 0;
    if (nh != nr || nh == 0) {
        fprintf(stderr, nh ? "nmt bleu: %s has %zu lines, the references %zu\n"
                           : "nmt bleu: %s is empty (%zu lines; references %zu)\n",
                a->pos[0], nh, nr);
        rc = 1;
    } else {
        smt_bleu_stat sum, st;
        memset(&sum, 0, sizeof sum);
        for (size_t i = 0; i < nh; i++) {
            stats_for(refs, nref, i, hyp[i], &st);
            smt_bleu_add(&sum, &st);
        }
        printf("BLEU = %.2f\n", smt_bleu_score(&sum));
    }
    free_all(hyp, nh);
    for (int k = 0; k < nref; k++)
        free_all(refs[k], nr);
    return rc;
}

/* ---- model commands ---- */

static int cmd_score(const args *a, const nmt_model *m, nmt_ctx *c, smt_err *err)
{
    double t0 = now();
    size_t ns, nt;
    char **src = read_all(a->source, &ns, err), **tgt = src ? read_all(a->target, &nt, err) : NULL;
    nmt_sentence *s = NULL, *t = NULL;
    float *lp = NULL;
    int rc = 0;
    if (!src || !tgt)
        rc = err->code ? err->code : SMT_ERR_IO;
    else if (nt != ns)
        rc = smt_err_set(err, SMT_ERR_ARG, "%s has %zu lines but %s has %zu", a->source, ns,
                         a->target, nt);
    else if (!(s = tokenize_all(m, 0, src, ns)) || !(t = tokenize_all(m, 1, tgt, nt)) ||
             !(lp = malloc((ns ? ns : 1) * sizeof *lp)))
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc)
        rc = nmt_score(c, ns, s, t, lp, err);
    long words = 0;
    for (size_t i = 0; !rc && i < ns; i++) {
        printf("%.6f\n", lp[i]);
        words += t[i].len + 1;
    }
    if (!rc && !smt_flush_output(stdout, "standard output", NULL)) /* else close_stdout reports */
        fprintf(stderr, "nmt score: %zu sentences, %ld words, %.0f words/s\n", ns, words,
                (double)words / (now() - t0));
    free(lp);
    free_sents(s, ns);
    free_sents(t, ns);
    free_all(src, ns);
    free_all(tgt, nt);
    return rc;
}

static int cmd_translate(const args *a, const nmt_model *m, nmt_ctx *c, smt_err *err)
{
    double t0 = now();
    size_t ns;
    char **src = read_all(a->source, &ns, err);
    nmt_sentence *s = NULL;
    nmt_hyp *h = NULL;
    nmt_shortlist *sl = NULL;
    int rc = 0;
    if (!src)
        rc = err->code ? err->code : SMT_ERR_IO;
    else if (!(s = tokenize_all(m, 0, src, ns)) || !(h = calloc(ns ? ns : 1, sizeof *h)))
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc && a->shortlist)
        rc = nmt_shortlist_load(&sl, m, a->shortlist, a->sl_words, a->sl_frequent, err);
    nmt_search_options so = {a->beam, a->ratio, 10, a->alpha, sl};
    if (!rc)
        rc = nmt_translate(c, ns, s, &so, h, err);
    long words = 0;
    for (size_t i = 0; !rc && i < ns; i++) {
        for (int j = 0; j < h[i].len; j++)
            printf(j ? " %s" : "%s", nmt_model_tgt_word(m, h[i].ids[j]));
        putchar('\n');
        words += h[i].len;
    }
    if (!rc && !smt_flush_output(stdout, "standard output", NULL)) /* else close_stdout reports */
        fprintf(stderr, "nmt translate: %zu sentences, %ld words, %.0f words/s\n", ns, words,
                (double)words / (now() - t0));
    if (h)
        nmt_hyps_free(h, ns);
    free(h);
    nmt_shortlist_free(sl);
    free_sents(s, ns);
    free_all(src, ns);
    return rc;
}

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
        /* --nbest-out -: the rescored list on standard output instead of the 1-best lines */
        int list_to_stdout = a->nbest_out && !strcmp(a->nbest_out, "-");
        rc = nmt_rescore_files(c, a->source, a->nbest, &ro, a->nbest_out,
                               list_to_stdout ? NULL : "-", &err);
        if (!rc && !smt_flush_output(stdout, "standard output", NULL))
            fprintf(stderr, "nmt rescore: %.1f s\n", now() - t0);
    } else if (!rc && strcmp(a->cmd, "score") == 0) {
        rc = cmd_score(a, m, c, &err);
    } else if (!rc) {
        rc = cmd_translate(a, m, c, &err);
    }
    if (rc)
        fprintf(stderr, "nmt %s: %s\n", a->cmd, smt_err_text(&err, rc));
    nmt_ctx_free(c);
    nmt_model_free(m);
    return rc ? 1 : 0;
}

/* Flags: strings, integers and reals, each number strict and within its range, each accepted
 * only by the commands it applies to (a flag another command would use is not ignored in silence).
 */
enum { C_SCORE = 1, C_RESCORE = 2, C_TRANSLATE = 4, C_TUNE = 8, C_BLEU = 16,
       C_MODEL = C_SCORE | C_RESCORE | C_TRANSLATE };

typedef struct flag {
    const char *name;
    char kind; /* 's' string, 'i' int, 'f' float, 'b' boolean (no value) */
    size_t off;
    double lo, hi;
    unsigned cmds; /* C_* of the commands that use it */
} flag;

#define F(name, kind, field, lo, hi, cmds) {name, kind, offsetof(args, field), lo, hi, cmds}
static const flag flags[] = {
    F("--model", 's', model, 0, 0, C_MODEL), F("--source", 's', source, 0, 0, C_MODEL),
    F("--target", 's', target, 0, 0, C_SCORE), F("--nbest", 's', nbest, 0, 0, C_RESCORE | C_TUNE),
    F("--nbest-out", 's', nbest_out, 0, 0, C_RESCORE), F("--ref", 's', ref, 0, 0, C_TUNE),
    F("--feature", 's', feature, 0, 0, C_RESCORE | C_TUNE),
    F("--range", 's', range, 0, 0, C_TUNE), F("--len-range", 's', len_range, 0, 0, C_TUNE),
    F("--best-out", 's', best_out, 0, 0, C_TUNE), F("--shortlist", 's', shortlist, 0, 0, C_TRANSLATE),
    F("--shortlist-words", 'i', sl_words, 1, 1000000, C_TRANSLATE),
    F("--shortlist-frequent", 'i', sl_frequent, 0, 100000000, C_TRANSLATE),
    F("--device", 'i', device, 0, 1023, C_MODEL), F("--threads", 'i', threads, 0, 4096, C_MODEL),
    F("--batch", 'i', batch, 1, 1000000, C_MODEL), F("--beam", 'i', beam, 1, NMT_MAX_K, C_TRANSLATE),
    F("--folds", 'i', folds, 1, 1000000, C_TUNE),
    F("--weight", 'f', weight, -1e6, 1e6, C_RESCORE),
    F("--used-weight", 'f', used_weight, -1e6, 1e6, C_TUNE),
    F("--length-bonus", 'f', length_bonus, -1e6, 1e6, C_RESCORE),
    F("--alpha", 'f', alpha, 0, 10, C_TRANSLATE), F("--max-ratio", 'f', ratio, 0, 1000, C_TRANSLATE),
    F("--per-word", 'b', per_word, 0, 0, C_TUNE), F("--gpu", 'b', gpu, 0, 0, C_MODEL)};
#undef F

static int is_help(const char *s)
{
    return !strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage(NULL);
    if (is_help(argv[1])) {
        usage_to(stdout, argc > 2 ? argv[2] : NULL);
        return close_stdout(NULL, 0);
    }
    args a = {0};
    a.cmd = argv[1];
    a.beam = 5;
    a.alpha = 0.6f;
    a.ratio = 2.0f;
    a.batch = 64;
    a.weight = 0.3f; /* tuned on the bible model (docs/nmt.md); pass --weight to change */
    a.sl_words = 20;
    a.sl_frequent = 500;
    a.folds = 1;
    int sl_tuned = 0;
    unsigned cmd_bit = 0; /* usage_text's order is C_*'s */
    for (size_t i = 0; i < sizeof usage_text / sizeof usage_text[0]; i++)
        if (!strcmp(a.cmd, usage_text[i][0]))
            cmd_bit = 1u << i;
    if (!cmd_bit) {
        fprintf(stderr, "nmt: unknown command '%s'\n", a.cmd);
        return usage(NULL);
    }
    for (int i = 2; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage_to(stdout, a.cmd);
            return close_stdout(NULL, 0);
        }
        const flag *f = NULL;
        for (size_t k = 0; k < sizeof flags / sizeof flags[0] && !f; k++)
            if (!strcmp(o, flags[k].name))
                f = &flags[k];
        if (!f) {
            if ((o[0] != '-' || !o[1]) && a.npos < 2) { /* "-" alone is a path */
                a.pos[a.npos++] = o;
                continue;
            }
            fprintf(stderr, "nmt %s: unknown option or extra argument '%s'\n", a.cmd, o);
            return usage(a.cmd);
        }
        if (!(f->cmds & cmd_bit)) {
            fprintf(stderr, "nmt %s: %s does not apply to this command\n", a.cmd, o);
            return usage(a.cmd);
        }
        if (!strncmp(o, "--shortlist-", 12))
            sl_tuned = 1;
        char *field = (char *)&a + f->off;
        if (f->kind == 'b') {
            *(int *)field = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "nmt %s: %s needs a value\n", a.cmd, o);
            return usage(a.cmd);
        }
        i++;
        smt_err err;
        int rc = 0;
        double d;
        if (f->kind == 's')
            *(const char **)field = v;
        else if (f->kind == 'i')
            rc = smt_parse_int_arg(o, v, (int)f->lo, (int)f->hi, (int *)field, &err);
        else if (!(rc = smt_parse_double_arg(o, v, f->lo, f->hi, &d, &err)))
            *(float *)field = (float)d;
        if (rc) {
            fprintf(stderr, "nmt %s: %s\n", a.cmd, err.msg);
            return 2;
        }
    }
    if (sl_tuned && !a.shortlist) {
        fprintf(stderr, "nmt %s: --shortlist-words and --shortlist-frequent need --shortlist\n",
                a.cmd);
        return usage(a.cmd);
    }
    int rc;
    if (!strcmp(a.cmd, "bleu")) {
        if (a.npos != 2)
            return usage(a.cmd);
        rc = cmd_bleu(&a);
    } else if (!strcmp(a.cmd, "tune")) {
        if (!a.nbest || !a.ref || a.npos)
            return usage(a.cmd);
        rc = cmd_tune(&a);
    } else {
        if (!a.model || a.npos || (strcmp(a.cmd, "translate") && !a.source) ||
            (!strcmp(a.cmd, "score") && !a.target) || (!strcmp(a.cmd, "rescore") && !a.nbest))
            return usage(a.cmd);
        rc = run_model(&a);
    }
    return close_stdout(a.cmd, rc);
}
