/* run.c — workers (one per thread) and the multi-threaded driver that keeps the input order.
 *
 * Sentences are independent: each worker has its own search state and arena; the model is shared
 * read-only (its phrase cache fills itself lock-free). The driver reads a batch of lines, lets the
 * pool translate them in any order into per-line buffers, then writes the buffers in input order,
 * so output never depends on the thread count or on scheduling. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "dec_internal.h"
#include "search.h"
#include "smt_progress.h"
#include "smt_threads.h"

struct dec_worker {
    dec_model *m;
    dec_search *s;
    char *line;
    size_t line_cap;
    char **tokens;
    uint32_t *lens;
    size_t tok_cap;
};

int dec_worker_create(dec_worker **out, dec_model *m, smt_err *err)
{
    dec_worker *w = calloc(1, sizeof *w);
    if (!w)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    w->m = m;
    int rc = dec_search_create(&w->s, m, err);
    if (rc) {
        free(w);
        return rc;
    }
    *out = w;
    return 0;
}

void dec_worker_free(dec_worker *w)
{
    if (!w)
        return;
    dec_search_free(w->s);
    free(w->line);
    free(w->tokens);
    free(w->lens);
    free(w);
}

/* Splits the line copy in place on spaces and tabs (Moses's tokenization of its input). */
static int tokenize(dec_worker *w, const char *line, size_t len, size_t *n_out)
{
    if (len + 1 > w->line_cap) {
        char *p = realloc(w->line, len + 1);
        if (!p)
            return SMT_ERR_NOMEM;
        w->line = p;
        w->line_cap = len + 1;
    }
    memcpy(w->line, line, len);
    w->line[len] = '\0';
    size_t n = 0;
    char *s = w->line, *end = w->line + len;
    while (s < end) {
        while (s < end && (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n' || *s == '\0'))
            *s++ = '\0';
        if (s == end)
            break;
        if (n == w->tok_cap) {
            size_t cap = w->tok_cap ? w->tok_cap * 2 : 64;
            char **t = realloc(w->tokens, cap * sizeof *t);
            uint32_t *l = t ? realloc(w->lens, cap * sizeof *l) : NULL;
            if (t)
                w->tokens = t;
            if (!t || !l)
                return SMT_ERR_NOMEM;
            w->lens = l;
            w->tok_cap = cap;
        }
        w->tokens[n] = s;
        while (s < end && *s != ' ' && *s != '\t' && *s != '\r' && *s != '\n' && *s != '\0')
            s++;
        w->lens[n] = (uint32_t)(s - w->tokens[n]);
        n++;
    }
    *n_out = n;
    return 0;
}

int dec_translate(dec_worker *w, const char *line, size_t len, uint64_t sent_id, dec_buf *best,
                  dec_buf *nbest, size_t n_best, int distinct, double *score, smt_err *err)
{
    size_t n = 0;
    if (score)
        *score = 0;
    int rc = tokenize(w, line, len, &n);
    if (rc)
        return smt_err_set(err, rc, "out of memory");
    if (n > DEC_MAX_SENTENCE) {
        rc = smt_err_set(err, SMT_ERR_LIMIT,
                         "sentence %llu has %zu tokens; the limit is %d: translation skipped",
                         (unsigned long long)sent_id, n, DEC_MAX_SENTENCE);
        dec_buf_append(best, "\n", 1);
        return rc;
    }
    rc = dec_search_run(w->s, w->tokens, w->lens, n, nbest && n_best > 0, err);
    if (rc) {
        dec_buf_append(best, "\n", 1);
        return rc;
    }
    if ((rc = dec_search_best(w->s, best, score)) != 0)
        return smt_err_set(err, rc, "out of memory");
    if (nbest && n_best && (rc = dec_search_nbest(w->s, sent_id, n_best, distinct, nbest)) != 0)
        return smt_err_set(err, rc, "out of memory");
    return 0;
}

/* ---------------------------------------------------------------- the driver */

/* Lines per batch: large, so that threads rarely wait for each other at a batch's end; smaller
 * with n-best lists, whose per-line buffers are big. */
#define BATCH 4096
#define BATCH_NBEST 256

typedef struct line_job {
    char *text;
    size_t len, cap;
    dec_buf best, nbest;
    double score;
    int rc;
    uint32_t tokens;
    char msg[SMT_ERR_MSG_MAX];
} line_job;

typedef struct run_ctx {
    dec_worker **workers;
    line_job *jobs;
    uint64_t first_id;
    size_t n_best;
    int distinct, want_nbest;
} run_ctx;

static void run_one(void *ctx_p, size_t task, unsigned worker)
{
    run_ctx *ctx = ctx_p;
    line_job *j = &ctx->jobs[task];
    smt_err e;
    smt_err_clear(&e);
    j->best.len = 0;
    j->nbest.len = 0;
    j->rc = dec_translate(ctx->workers[worker], j->text, j->len, ctx->first_id + task, &j->best,
                          ctx->want_nbest ? &j->nbest : NULL, ctx->n_best, ctx->distinct,
                          &j->score, &e);
    j->msg[0] = '\0';
    if (j->rc)
        snprintf(j->msg, sizeof j->msg, "%s", smt_err_text(&e, j->rc));
    uint32_t t = 0;
    for (size_t i = 0; i < j->len;) {
        while (i < j->len && (j->text[i] == ' ' || j->text[i] == '\t'))
            i++;
        if (i < j->len)
            t++;
        while (i < j->len && j->text[i] != ' ' && j->text[i] != '\t')
            i++;
    }
    j->tokens = t;
}

int dec_run(dec_model *m, FILE *in, FILE *out, FILE *nbest, size_t n_best, int distinct,
            unsigned threads, FILE *warn, dec_run_stats *stats, smt_err *err)
{
    double t0 = smt_now();
    if (!warn)
        warn = stderr;
    smt_pool *pool = NULL;
    int rc = smt_pool_create(&pool, threads, err);
    if (rc)
        return rc;
    unsigned nw = smt_pool_size(pool);
    run_ctx ctx = {0};
    ctx.workers = calloc(nw, sizeof *ctx.workers);
    ctx.jobs = calloc(BATCH, sizeof *ctx.jobs);
    ctx.n_best = n_best;
    ctx.distinct = distinct;
    ctx.want_nbest = nbest != NULL && n_best > 0;
    if (!ctx.workers || !ctx.jobs)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (unsigned i = 0; i < nw && !rc; i++)
        rc = dec_worker_create(&ctx.workers[i], m, err);
    dec_run_stats st = {0};
    char *line = NULL;
    size_t line_cap = 0;
    int eof = 0;
    size_t batch = ctx.want_nbest ? BATCH_NBEST : BATCH;
    while (!rc && !eof) {
        size_t n = 0;
        while (n < batch) {
            ssize_t len = getline(&line, &line_cap, in);
            if (len < 0) {
                eof = 1;
                break;
            }
            while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
                len--;
            line_job *j = &ctx.jobs[n];
            if ((size_t)len + 1 > j->cap) {
                char *p = realloc(j->text, (size_t)len + 1);
                if (!p) {
                    rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                    break;
                }
                j->text = p;
                j->cap = (size_t)len + 1;
            }
            memcpy(j->text, line, (size_t)len);
            j->text[len] = '\0';
            j->len = (size_t)len;
            n++;
        }
        if (rc || n == 0)
            break;
        ctx.first_id = st.lines;
        smt_pool_run(pool, n, run_one, &ctx);
        for (size_t i = 0; i < n; i++) {
            line_job *j = &ctx.jobs[i];
            if (j->rc) {
                fprintf(warn, "line %llu: %s\n", (unsigned long long)(st.lines + i + 1), j->msg);
                st.refused++;
                if (j->rc == SMT_ERR_NOMEM) {
                    rc = smt_err_set(err, j->rc, "line %llu: %s",
                                     (unsigned long long)(st.lines + i + 1), j->msg);
                    break;
                }
            }
            if (m->align_file) { /* "words ||| points\n": the points go to their own file */
                const char *sep = NULL;
                for (const char *p = j->best.data; j->best.len && (p = strstr(p, "||| ")); p++)
                    sep = p; /* the last one: the words may hold "|||" tokens, points never */
                size_t wl = sep ? (size_t)(sep - j->best.data) : j->best.len;
                if (sep)
                    fputs(sep + 4, m->align_file);
                else
                    fputc('\n', m->align_file); /* a refused line */
                if (m->align_inline || !sep) {
                    fwrite(j->best.data, 1, j->best.len, out);
                } else {
                    fwrite(j->best.data, 1, wl, out);
                    fputc('\n', out);
                }
            } else {
                fwrite(j->best.data, 1, j->best.len, out);
            }
            if (ctx.want_nbest && j->nbest.len)
                fwrite(j->nbest.data, 1, j->nbest.len, nbest);
            st.tokens += j->tokens;
            st.score_sum += j->score;
        }
        st.lines += n;
        fflush(out);
        if (ctx.want_nbest)
            fflush(nbest);
        if (m->align_file)
            fflush(m->align_file);
        if (ferror(out) || (ctx.want_nbest && ferror(nbest)) ||
            (m->align_file && ferror(m->align_file)))
            rc = smt_err_set(err, SMT_ERR_IO, "write error");
    }
    free(line);
    for (size_t i = 0; i < BATCH && ctx.jobs; i++) {
        free(ctx.jobs[i].text);
        dec_buf_free(&ctx.jobs[i].best);
        dec_buf_free(&ctx.jobs[i].nbest);
    }
    for (unsigned i = 0; i < nw && ctx.workers; i++)
        dec_worker_free(ctx.workers[i]);
    free(ctx.workers);
    free(ctx.jobs);
    smt_pool_destroy(pool);
    st.seconds = smt_now() - t0;
    if (stats)
        *stats = st;
    return rc;
}
