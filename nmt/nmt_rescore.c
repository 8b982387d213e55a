/* nmt_rescore.c — Moses n-best rescoring with the NMT model.
 *
 * An n-best line (nmt_nbest.c reads it) is `id ||| words ||| features ||| total [||| more
 * fields]`. Rescoring keeps every
 * field as written, appends ` NMT0= logprob` to the features, adds weight * logprob to the total and
 * re-ranks each sentence's list. All hypotheses of a chunk of sentences are scored in one nmt_score
 * call, and hypotheses of one sentence point at the same source array so its encoder runs once. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nmt_internal.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_lines.h"

/* ---- rescoring ---- */

typedef struct group {
    char **lines;        /* copies of the raw lines, parsed in place */
    nmt_nbest_line *nb;  /* parsed */
    size_t n, cap_lines, cap_nb;
} group;

static int group_push(group *g, const char *line, size_t len)
{
    if (smt_grow(&g->lines, &g->cap_lines, g->n + 1, sizeof *g->lines, 1024) ||
        smt_grow(&g->nb, &g->cap_nb, g->n + 1, sizeof *g->nb, 1024))
        return -1;
    g->lines[g->n] = malloc(len + 1);
    if (!g->lines[g->n])
        return -1;
    memcpy(g->lines[g->n], line, len + 1);
    g->n++;
    return 0;
}

static int cmp_rank(const void *a, const void *b)
{
    const nmt_nbest_line *x = *(nmt_nbest_line *const *)a, *y = *(nmt_nbest_line *const *)b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    if (x->new_total != y->new_total)
        return x->new_total > y->new_total ? -1 : 1;
    return x->order < y->order ? -1 : (x->order > y->order); /* stable: earlier line first */
}

typedef struct rescorer {
    nmt_ctx *c;
    const nmt_rescore_options *o;
    nmt_sentence *src; /* every source sentence */
    size_t n_src;
    FILE *nbest_out, *best_out;
    long next_best; /* next source id whose 1-best line is due */
    smt_err *err;
} rescorer;

static void write_best_until(rescorer *R, long id, const char *words)
{
    if (!R->best_out) /* not asked for */
        return;
    for (; R->next_best < id; R->next_best++)
        fputc('\n', R->best_out); /* sentences missing from the list */
    if (words) { /* the plain words (nmt_nbest_plain) */
        fputs(words, R->best_out);
        fputc('\n', R->best_out);
        R->next_best = id + 1;
    }
}

/* Scores, re-ranks and writes a chunk of whole sentences. */
static int flush_group(rescorer *R, group *g, const char *path)
{
    if (g->n == 0)
        return 0;
    const nmt_model *m = R->c->m;
    nmt_sentence *tgt = calloc(g->n, sizeof *tgt), *src = calloc(g->n, sizeof *src);
    float *lp = malloc(g->n * sizeof *lp);
    nmt_nbest_line **order = malloc(g->n * sizeof *order);
    char **plain = calloc(g->n, sizeof *plain); /* the words to score and print as the 1-best */
    int rc = 0;
    if (!tgt || !src || !lp || !order || !plain)
        rc = smt_err_set(R->err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < g->n && !rc; i++) {
        nmt_nbest_line *nb = &g->nb[i];
        if ((size_t)nb->id >= R->n_src) {
            rc = smt_err_set(R->err, SMT_ERR_PARSE, "%s: sentence id %ld but the source has %zu lines",
                             path, nb->id, R->n_src);
            break;
        }
        if (!(plain[i] = malloc(strlen(nb->words) + 1))) {
            rc = smt_err_set(R->err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        nmt_nbest_plain(nb->words, plain[i]);
        size_t n = nmt_model_tokenize(m, 1, plain[i], NULL, 0);
        int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
        if (!ids) {
            rc = smt_err_set(R->err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        nmt_model_tokenize(m, 1, plain[i], ids, n);
        tgt[i] = (nmt_sentence){ids, (int)n};
        src[i] = R->src[nb->id]; /* same pointer for one sentence: one encoder pass */
        order[i] = nb;
    }
    if (!rc)
        rc = nmt_score(R->c, g->n, src, tgt, lp, R->err);
    if (!rc) {
        for (size_t i = 0; i < g->n; i++) {
            g->nb[i].nmt = lp[i];
            g->nb[i].plain = plain[i];
            g->nb[i].new_total = g->nb[i].total + (double)R->o->weight * lp[i] +
                                 (double)R->o->length_bonus * tgt[i].len;
        }
        qsort(order, g->n, sizeof *order, cmp_rank);
        const char *fname = R->o->feature ? R->o->feature : "NMT0";
        for (size_t i = 0; i < g->n; i++) {
            nmt_nbest_line *nb = order[i];
            if (R->nbest_out) {
                fprintf(R->nbest_out, "%ld ||| %s ||| %s %s= %.6g ||| %.6g", nb->id, nb->words,
                        nb->feats, fname, nb->nmt, nb->new_total);
                if (nb->rest)
                    fprintf(R->nbest_out, " ||| %s", nb->rest);
                fputc('\n', R->nbest_out);
            }
            if (i == 0 || order[i - 1]->id != nb->id)
                write_best_until(R, nb->id, nb->plain);
        }
    }
    for (size_t i = 0; tgt && i < g->n; i++)
        free((void *)tgt[i].ids);
    for (size_t i = 0; plain && i < g->n; i++)
        free(plain[i]);
    free(plain);
    for (size_t i = 0; i < g->n; i++)
        free(g->lines[i]);
    g->n = 0;
    free(tgt);
    free(src);
    free(lp);
    free(order);
    return rc;
}

static int read_source(rescorer *R, const char *path)
{
    smt_lines *r;
    int rc = smt_lines_open(&r, path, 0, R->err);
    size_t cap = 0;
    char *line;
    size_t len;
    while (!rc && (rc = smt_lines_next(r, &line, &len, R->err)) == 1) {
        rc = 0;
        if (smt_grow(&R->src, &cap, R->n_src + 1, sizeof *R->src, 1024)) {
            rc = smt_err_set(R->err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        size_t n = nmt_model_tokenize(R->c->m, 0, line, NULL, 0);
        int32_t *ids = malloc((n ? n : 1) * sizeof *ids);
        if (!ids) {
            rc = smt_err_set(R->err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        nmt_model_tokenize(R->c->m, 0, line, ids, n);
        R->src[R->n_src++] = (nmt_sentence){ids, (int)n};
    }
    smt_lines_close(r);
    return rc < 0 ? rc : 0;
}

/* Opens an output path; "-" is standard output. */
static int open_out(const char *path, FILE **f, smt_err *err)
{
    *f = strcmp(path, "-") ? fopen(path, "w") : stdout;
    return *f ? 0 : smt_err_errno(err, SMT_ERR_IO, errno, "%s", path);
}

/* Flushes and closes an output (standard output is flushed, not closed); a write error at any
 * point is an error naming the output. */
static int close_out(FILE *f, const char *path, int rc, smt_err *err)
{
    if (!f)
        return rc;
    smt_err e;
    int bad = f == stdout ? smt_flush_output(f, "standard output", &e)
                          : smt_close_output(f, path, &e);
    if (bad && !rc)
        rc = smt_err_set(err, bad, "%s", e.msg);
    return rc;
}

int nmt_rescore_files(nmt_ctx *c, const char *source_path, const char *nbest_path,
                      const nmt_rescore_options *opt, const char *nbest_out_path,
                      const char *best_out_path, smt_err *err)
{
    nmt_rescore_options o = {0.0f, NULL, 0.0f};
    if (opt)
        o = *opt;
    if (nbest_out_path && best_out_path && !strcmp(nbest_out_path, "-") &&
        !strcmp(best_out_path, "-"))
        return smt_err_set(err, SMT_ERR_ARG,
                           "the rescored list and the 1-best lines cannot both go to standard "
                           "output");
    if (o.feature && nmt_nbest_feature_name_check(o.feature, err))
        return SMT_ERR_ARG;
    if (!isfinite(o.weight) || !isfinite(o.length_bonus)) /* every total would become NaN */
        return smt_err_set(err, SMT_ERR_ARG, "rescoring weight %g and length bonus %g must be "
                           "finite", (double)o.weight, (double)o.length_bonus);
    const char *outs[2] = {nbest_out_path, best_out_path}, *ins[2] = {source_path, nbest_path};
    for (int i = 0; i < 2; i++) /* opening the output would truncate the input before it is read */
        for (int j = 0; j < 2; j++)
            if (smt_same_file(outs[i], ins[j]))
                return smt_err_set(err, SMT_ERR_ARG, "%s: the output is an input (%s); refused",
                                   outs[i], ins[j]);
    rescorer R = {c, &o, NULL, 0, NULL, NULL, 0, err};
    group g = {0};
    smt_lines *in = NULL;
    int rc = read_source(&R, source_path);
    if (!rc && nbest_out_path)
        rc = open_out(nbest_out_path, &R.nbest_out, err);
    if (!rc && best_out_path)
        rc = open_out(best_out_path, &R.best_out, err);
    if (!rc)
        rc = smt_lines_open(&in, nbest_path, SMT_LINES_THREADED, err);
    char *line;
    size_t len;
    long last_id = -1, first_id = -1;
    while (!rc && (rc = smt_lines_next(in, &line, &len, err)) == 1) {
        rc = 0;
        nmt_nbest_line nb;
        char *copy = strdup(line);
        if (!copy || nmt_nbest_parse(copy, &nb)) {
            free(copy);
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%llu: not a Moses n-best line", nbest_path,
                             (unsigned long long)smt_lines_lineno(in));
            break;
        }
        free(copy);
        if (nb.id < last_id) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%llu: sentence ids must not decrease",
                             nbest_path, (unsigned long long)smt_lines_lineno(in));
            break;
        }
        /* a chunk ends at a sentence boundary once it holds enough work for a few batches */
        if (nb.id != last_id && g.n >= 2048 && first_id != nb.id) {
            rc = flush_group(&R, &g, nbest_path);
            if (rc)
                break;
        }
        if (group_push(&g, line, len)) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        nmt_nbest_parse(g.lines[g.n - 1], &g.nb[g.n - 1]);
        g.nb[g.n - 1].order = (long)smt_lines_lineno(in);
        if (g.n == 1)
            first_id = nb.id;
        last_id = nb.id;
    }
    if (rc > 0)
        rc = 0;
    /* an empty list would print an empty line per source sentence: never what was meant */
    if (!rc && last_id < 0)
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: no n-best lines (an empty list)", nbest_path);
    if (!rc)
        rc = flush_group(&R, &g, nbest_path);
    if (!rc && R.best_out)
        write_best_until(&R, (long)R.n_src, NULL);
    for (size_t i = 0; i < g.n; i++)
        free(g.lines[i]);
    free(g.lines);
    free(g.nb);
    smt_lines_close(in);
    for (size_t i = 0; i < R.n_src; i++)
        free((void *)R.src[i].ids);
    free(R.src);
    rc = close_out(R.nbest_out, nbest_out_path, rc, err);
    rc = close_out(R.best_out, best_out_path, rc, err);
    /* no partial rescored list left behind to be taken for a result (a regular file only:
     * never a device or a pipe the user named) */
    struct stat st;
    if (rc && R.nbest_out && R.nbest_out != stdout && stat(nbest_out_path, &st) == 0 &&
        S_ISREG(st.st_mode))
        remove(nbest_out_path);
    return rc;
}
