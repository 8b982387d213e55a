/* run.c — workers (one per thread) and the multi-threaded driver that keeps the input order.
 *
 * Sentences are independent: each worker has its own search state and arena; the model is shared
 * read-only (its phrase cache fills itself lock-free). The driver reads a batch of lines, lets the
 * pool translate them in any order into per-line buffers, then writes the buffers in input order,
 * so output never depends on the thread count or on scheduling. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dec_internal.h"
#include "dec_lm_batch.h"
#include "dec_search.h"
#include "dec_xml.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_progress.h"
#include "smt_threads.h"
#include "smt_words.h"

struct dec_worker {
    dec_model *m;
    dec_search *s;
    char *line;
    size_t line_cap;
    char **tokens;
    uint32_t *lens;
    size_t tok_cap;
    dec_xml xml; /* the line's XML markup (-xml-input) */
};

int dec_worker_create(dec_worker **out, dec_model *m, smt_err *err)
{
    dec_worker *w = calloc(1, sizeof *w);
    if (!w)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    w->m = m;
    int rc = dec_search_create(&w->s, m, err);
    if (!rc)
        rc = dec_worker_set_options(w, NULL, err);
    if (rc) {
        dec_worker_free(w);
        return rc;
    }
    *out = w;
    return 0;
}

int dec_worker_set_options(dec_worker *w, const dec_run_options *opt, smt_err *err)
{
    dec_run_options tmp;
    int rc = 0;
    if (!opt || !opt->resolved) {
        if ((rc = dec_run_options_resolve(w->m, opt, &tmp, err)) != 0)
            return rc;
    }
    const dec_run_options *o = opt && opt->resolved ? opt : &tmp;
    w->s->out.seg_best = o->report_segmentation > 0;
    w->s->out.seg_nbest = o->nbest_segmentation > 0;
    w->s->out.align_inline = o->print_alignment > 0;
    w->s->out.align_nbest = o->nbest_alignment > 0;
    w->s->out.mark_unknown = o->mark_unknown > 0;
    w->s->out.drop_unknown = o->drop_unknown > 0;
    w->s->out.monotone_punct = o->monotone_at_punct > 0;
    w->s->out.hypo_score = o->output_hypo_score > 0;
    w->s->out.nbest_factor = o->nbest_factor < 0 ? 20u : (unsigned)o->nbest_factor;
    char *pre = strdup(o->unknown_prefix ? o->unknown_prefix : "UNK");
    char *suf = strdup(o->unknown_suffix ? o->unknown_suffix : "");
    /* -xml-input and its brackets (resolved: a known mode, two brackets) */
    int mode = dec_xml_mode(o->xml_input ? o->xml_input : "pass-through");
    const char *br = o->xml_brackets ? o->xml_brackets : "< >", *bpos = br, *b1 = "<", *b2 = ">";
    size_t l1 = 1, l2 = 1;
    if (smt_word_next(&bpos, br + strlen(br), SMT_WS_BLANK, &b1, &l1))
        smt_word_next(&bpos, br + strlen(br), SMT_WS_BLANK, &b2, &l2);
    char *lb = strndup(b1, l1), *rb = strndup(b2, l2);
    if (!pre || !suf || !lb || !rb) {
        free(pre), free(suf), free(lb), free(rb);
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    } else {
        free(w->s->out.unk_prefix), free(w->s->out.unk_suffix);
        free(w->s->out.xml_lb), free(w->s->out.xml_rb);
        w->s->out.unk_prefix = pre;
        w->s->out.unk_suffix = suf;
        w->s->out.xml_lb = lb;
        w->s->out.xml_rb = rb;
        w->s->out.xml_mode = mode < 0 ? DEC_XML_PASS : mode;
    }
    if (o == &tmp)
        dec_run_options_release(&tmp);
    return rc;
}

void dec_worker_free(dec_worker *w)
{
    if (!w)
        return;
    if (w->s) {
        free(w->s->out.unk_prefix);
        free(w->s->out.unk_suffix);
        free(w->s->out.xml_lb);
        free(w->s->out.xml_rb);
    }
    dec_xml_free(&w->xml);
    dec_search_free(w->s);
    free(w->line);
    free(w->tokens);
    free(w->lens);
    free(w);
}

/* Splits a copy of the line into its words (smt_words.h's line separators: spaces and tabs as
 * Moses, and a stray CR, LF or NUL), each NUL-terminated in the copy. */
static int tokenize(dec_worker *w, const char *line, size_t len, size_t *n_out)
{
    if (smt_grow(&w->line, &w->line_cap, len + 1, 1, 256))
        return SMT_ERR_NOMEM;
    memcpy(w->line, line, len);
    w->line[len] = '\0';
    size_t n = 0, wl;
    const char *pos = w->line, *end = w->line + len, *word;
    while (smt_word_next(&pos, end, SMT_WS_LINE, &word, &wl)) {
        if (n == w->tok_cap) {
            size_t cap = w->tok_cap;
            if (smt_grow(&w->tokens, &cap, n + 1, sizeof *w->tokens, 64) ||
                smt_grow(&w->lens, &w->tok_cap, n + 1, sizeof *w->lens, 64))
                return SMT_ERR_NOMEM;
        }
        w->tokens[n] = w->line + (word - w->line);
        w->tokens[n][wl] = '\0'; /* a separator (LINE separates at NUL too), or the copy's end */
        w->lens[n] = (uint32_t)wl;
        n++;
    }
    *n_out = n;
    return 0;
}

/* The line's markup (-xml-input other than pass-through) stripped and its options handed to the
 * search, then the words. Returns 0, SMT_ERR_PARSE / SMT_ERR_UNSUPPORTED (the markup; err says
 * what) or SMT_ERR_NOMEM. */
static int prepare(dec_worker *w, const char *line, size_t len, size_t *n, smt_err *err)
{
    const dec_output *o = &w->s->out;
    w->s->xml = NULL;
    if (o->xml_mode != DEC_XML_PASS && o->xml_lb &&
        memmem(line, len, o->xml_lb, strlen(o->xml_lb))) {
        int rc = dec_xml_parse(&w->xml, line, len, o->xml_lb, o->xml_rb,
                               o->xml_mode != DEC_XML_IGNORE, err);
        if (rc)
            return rc;
        line = w->xml.clean.data;
        len = w->xml.clean.len;
        if (w->xml.n_opts || w->xml.n_walls || w->xml.n_zones)
            w->s->xml = &w->xml;
    }
    int rc = tokenize(w, line, len, n);
    return rc ? smt_err_set(err, rc, "out of memory") : 0;
}

/* A refused or failed line: its empty output lines. */
static void line_empty(smt_buf *best, smt_buf *align, smt_buf *unk)
{
    smt_buf_append(best, "\n", 1);
    if (align)
        smt_buf_append(align, "\n", 1);
    if (unk)
        smt_buf_append(unk, "\n", 1);
}

/* Sets the line up in w's search (its markup, its words, dec_search_begin). On an error but
 * SMT_ERR_NOMEM the line's empty output lines are written. */
static int line_begin(dec_worker *w, const char *line, size_t len, uint64_t sent_id, int want_nbest,
                      smt_buf *best, smt_buf *align, smt_buf *unk, smt_err *err)
{
    size_t n = 0;
    int rc = prepare(w, line, len, &n, err);
    if (rc == SMT_ERR_NOMEM)
        return rc;
    if (!rc && n > DEC_MAX_SENTENCE)
        rc = smt_err_set(err, SMT_ERR_LIMIT,
                         "sentence %llu has %zu tokens; the limit is %d: translation skipped",
                         (unsigned long long)sent_id, n, DEC_MAX_SENTENCE);
    if (!rc)
        rc = dec_search_begin(w->s, w->tokens, w->lens, n, want_nbest, err);
    if (rc) /* a markup error, an overlong sentence, a damaged table: an empty line */
        line_empty(best, align, unk);
    return rc;
}

/* The outputs of w's finished search (the n-best list as lines to nbest, as data to data; either
 * may be NULL). */
static int line_output(dec_worker *w, uint64_t sent_id, smt_buf *best, smt_buf *align,
                       smt_buf *unk, smt_buf *nbest, dec_nbest *data, size_t n_best, int distinct,
                       double *score, smt_err *err)
{
    int rc = dec_search_best(w->s, best, align, score);
    if (rc)
        return smt_err_set(err, rc, "out of memory");
    for (size_t i = 0; unk && i < w->s->n_unk && !rc; i++) /* Moses: each word and a space */
        if (smt_buf_append(unk, w->tokens[w->s->unk[i]], w->lens[w->s->unk[i]]) ||
            smt_buf_putc(unk, ' '))
            rc = SMT_ERR_NOMEM;
    if (!rc && unk && smt_buf_putc(unk, '\n'))
        rc = SMT_ERR_NOMEM;
    if (rc)
        return smt_err_set(err, rc, "out of memory");
    if (nbest && n_best && (rc = dec_search_nbest(w->s, sent_id, n_best, distinct, nbest)) != 0)
        return smt_err_set(err, rc, "out of memory");
    if (data && n_best && (rc = dec_search_nbest_data(w->s, n_best, distinct, data)) != 0)
        return smt_err_set(err, rc, "out of memory");
    return 0;
}

/* One line start to end, one at a time (no LM batching): the outputs line_output gives. */
static int translate_line(dec_worker *w, const char *line, size_t len, uint64_t sent_id,
                          smt_buf *best, smt_buf *align, smt_buf *unk, smt_buf *nbest,
                          dec_nbest *data, size_t n_best, int distinct, double *score, smt_err *err)
{
    if (score)
        *score = 0;
    if (data)
        data->n = 0;
    w->s->lm_batch = 0;
    int rc = line_begin(w, line, len, sent_id, (nbest || data) && n_best > 0, best, align, unk,
                        err);
    if (rc)
        return rc;
    if ((rc = dec_search_step(w->s, err)) != 0) {
        line_empty(best, align, unk);
        return rc;
    }
    return line_output(w, sent_id, best, align, unk, nbest, data, n_best, distinct, score, err);
}

int dec_translate_align(dec_worker *w, const char *line, size_t len, uint64_t sent_id,
                        smt_buf *best, smt_buf *align, smt_buf *unk, smt_buf *nbest, size_t n_best,
                        int distinct, double *score, smt_err *err)
{
    return translate_line(w, line, len, sent_id, best, align, unk, nbest, NULL, n_best, distinct,
                          score, err);
}

int dec_translate(dec_worker *w, const char *line, size_t len, uint64_t sent_id, smt_buf *best,
                  smt_buf *nbest, size_t n_best, int distinct, double *score, smt_err *err)
{
    return translate_line(w, line, len, sent_id, best, NULL, NULL, nbest, NULL, n_best, distinct,
                          score, err);
}

int dec_translate_nbest(dec_worker *w, const char *line, size_t len, uint64_t sent_id,
                        smt_buf *best, dec_nbest *nbest, size_t n_best, int distinct,
                        double *score, smt_err *err)
{
    return translate_line(w, line, len, sent_id, best, NULL, NULL, NULL, nbest, n_best, distinct,
                          score, err);
}

int dec_translate_data(dec_worker *w, const char *line, size_t len, dec_translation *out,
                       smt_err *err)
{
    smt_buf_clear(&out->words);
    out->n_words = out->n_phrases = out->n_align = 0;
    out->score = 0;
    size_t n = 0;
    int rc = prepare(w, line, len, &n, err);
    if (rc)
        return rc;
    if (n > DEC_MAX_SENTENCE)
        return smt_err_set(err, SMT_ERR_LIMIT,
                           "the sentence has %zu tokens; the limit is %d: translation skipped", n,
                           DEC_MAX_SENTENCE);
    if ((rc = dec_search_run(w->s, w->tokens, w->lens, n, 0, err)) != 0)
        return rc;
    if ((rc = dec_search_best_data(w->s, out)) != 0)
        return smt_err_set(err, rc, "out of memory");
    return 0;
}

/* ---------------------------------------------------------------- the input */

/* Where the lines come from: smt_lines over a file, standard input, a pipe or a terminal
 * (dec_run_input; plain or compressed; a pipe is answered as its lines arrive), over the caller's
 * FILE (dec_run) or the caller's reader (dec_run_lines). Every read error is an error, never an
 * end of input. */
typedef struct line_src {
    smt_lines *lr;
    int own; /* opened here: closed by src_close */
} line_src;

/* Opens path (NULL or "-": standard input). */
static int src_open(line_src *s, const char *path, smt_err *err)
{
    s->own = 1;
    return smt_lines_open(&s->lr, !path ? "-" : path, 0, err);
}

static void src_close(line_src *s)
{
    if (s->own)
        smt_lines_close(s->lr);
}

/* ---------------------------------------------------------------- the driver */

/* Lines per batch: large, so that threads rarely wait for each other at a batch's end; smaller
 * with n-best lists, whose per-line buffers are big. A batch also ends when a pipe or terminal
 * has no further line ready, so that an interactive user gets each answer at once. */
#define BATCH 4096
#define BATCH_NBEST 256

typedef struct line_job {
    char *text;
    size_t len, cap;
    smt_buf best, nbest, align, unk;
    double score;
    int rc;
    uint32_t tokens;
    char msg[SMT_ERR_MSG_MAX];
} line_job;

typedef struct run_ctx {
    dec_worker **workers;
    /* -lm-batch cpu|gpu: each thread decodes `lanes` sentences in lock-step (workers[t * lanes ..
     * + lanes)), taking them from chunks of `chunk` lines, and scores their LM queries together */
    unsigned lanes;
    size_t chunk, n_lines;
    dec_lm_batch **batchers;  /* one per thread */
    dec_search **ready;       /* lanes per thread: the searches waiting for LM scores */
    size_t *line_of;          /* lanes per thread: the line each lane decodes (SIZE_MAX: none) */
    smt_err *errs;            /* lanes per thread */
    line_job *jobs; /* grown as lines arrive, up to a batch: a short run touches little memory */
    size_t n_jobs;
    uint64_t first_id;
    size_t n_best;
    int distinct, want_nbest, want_align, want_unk;
    /* the progress meter (drawn by worker 0, the calling thread) */
    int progress, drawn;
    double start, last_draw;
    uint64_t lines0, words0; /* before this batch */
    atomic_uint_fast64_t lines, words;
} run_ctx;

int dec_progress_format(char *buf, size_t size, uint64_t lines, uint64_t words, double seconds)
{
    double l = seconds > 0 ? (double)lines / seconds : 0, w = seconds > 0 ? (double)words / seconds : 0;
    return snprintf(buf, size, "fastsmt: %llu lines, %llu words, %.1f lines/s, %.1f words/s, %.1f s",
                    (unsigned long long)lines, (unsigned long long)words, l, w, seconds);
}

static void draw_progress(run_ctx *ctx, int final)
{
    char line[160];
    dec_progress_format(line, sizeof line, atomic_load(&ctx->lines), atomic_load(&ctx->words),
                        smt_now() - ctx->start);
    fprintf(stderr, "\r%s\033[K%s", line, final ? "\n" : "");
    fflush(stderr);
    ctx->drawn = !final;
}

static void job_clear(line_job *j)
{
    j->best.len = 0;
    j->nbest.len = 0;
    j->align.len = 0;
    j->unk.len = 0;
    j->score = 0;
}

/* The line's result (rc, e's message) and the progress meter. */
static void job_done(run_ctx *ctx, line_job *j, int rc, const smt_err *e, unsigned worker)
{
    j->rc = rc;
    j->msg[0] = '\0';
    if (j->rc)
        snprintf(j->msg, sizeof j->msg, "%s", smt_err_text(e, j->rc));
    j->tokens = (uint32_t)smt_words_count(j->text, j->len, SMT_WS_LINE);
    if (ctx->progress) {
        atomic_fetch_add(&ctx->lines, 1);
        atomic_fetch_add(&ctx->words, j->tokens);
        double now;
        if (worker == 0 && (now = smt_now()) - ctx->last_draw >= 0.5) {
            ctx->last_draw = now;
            draw_progress(ctx, 0);
        }
    }
}

static void run_one(void *ctx_p, size_t task, unsigned worker)
{
    run_ctx *ctx = ctx_p;
    line_job *j = &ctx->jobs[task];
    smt_err e;
    smt_err_clear(&e);
    job_clear(j);
    int rc = dec_translate_align(ctx->workers[worker], j->text, j->len, ctx->first_id + task,
                                 &j->best, ctx->want_align ? &j->align : NULL,
                                 ctx->want_unk ? &j->unk : NULL,
                                 ctx->want_nbest ? &j->nbest : NULL, ctx->n_best, ctx->distinct,
                                 &j->score, &e);
    job_done(ctx, j, rc, &e, worker);
}

/* A chunk of lines decoded in lock-step by the thread's lanes (-lm-batch): each lane steps its
 * sentence until it waits for LM scores, the waiting expansions of all lanes are scored in one
 * batch, and a lane whose sentence is done takes the chunk's next line. */
static void run_chunk(void *ctx_p, size_t task, unsigned worker)
{
    run_ctx *ctx = ctx_p;
    unsigned nl = ctx->lanes;
    dec_worker **lw = &ctx->workers[(size_t)worker * nl];
    dec_search **ready = &ctx->ready[(size_t)worker * nl];
    size_t *line_of = &ctx->line_of[(size_t)worker * nl];
    smt_err *errs = &ctx->errs[(size_t)worker * nl];
    dec_lm_batch *b = ctx->batchers[worker];
    size_t next = task * ctx->chunk, hi = next + ctx->chunk;
    if (hi > ctx->n_lines)
        hi = ctx->n_lines;
    for (unsigned g = 0; g < nl; g++)
        line_of[g] = SIZE_MAX;
    for (;;) {
        for (unsigned g = 0; g < nl; g++) /* idle lanes take the next lines */
            while (line_of[g] == SIZE_MAX && next < hi) {
                line_job *j = &ctx->jobs[next];
                smt_err_clear(&errs[g]);
                job_clear(j);
                lw[g]->s->lm_batch = 1;
                int rc = line_begin(lw[g], j->text, j->len, ctx->first_id + next,
                                    ctx->want_nbest, &j->best, ctx->want_align ? &j->align : NULL,
                                    ctx->want_unk ? &j->unk : NULL, &errs[g]);
                if (rc)
                    job_done(ctx, j, rc, &errs[g], worker);
                else
                    line_of[g] = next;
                next++;
            }
        size_t n_ready = 0;
        for (unsigned g = 0; g < nl; g++) {
            if (line_of[g] == SIZE_MAX)
                continue;
            line_job *j = &ctx->jobs[line_of[g]];
            int rc = dec_search_step(lw[g]->s, &errs[g]);
            if (rc == 1) {
                ready[n_ready++] = lw[g]->s;
                continue;
            }
            if (rc)
                line_empty(&j->best, ctx->want_align ? &j->align : NULL,
                           ctx->want_unk ? &j->unk : NULL);
            else
                rc = line_output(lw[g], ctx->first_id + line_of[g], &j->best,
                                 ctx->want_align ? &j->align : NULL, ctx->want_unk ? &j->unk : NULL,
                                 ctx->want_nbest ? &j->nbest : NULL, NULL, ctx->n_best,
                                 ctx->distinct, &j->score, &errs[g]);
            job_done(ctx, j, rc, &errs[g], worker);
            line_of[g] = SIZE_MAX;
        }
        if (!n_ready) {
            if (next >= hi)
                break;
            continue;
        }
        smt_err e;
        smt_err_clear(&e);
        int rc = dec_lm_batch_score(b, ready, n_ready, &e);
        for (unsigned g = 0; g < nl; g++) {
            if (line_of[g] == SIZE_MAX)
                continue;
            int lrc = rc;
            if (lrc)
                errs[g] = e;
            else
                lrc = dec_search_finish_pending(lw[g]->s, &errs[g]);
            if (lrc) { /* the line fails (its lane is free again) */
                line_job *j = &ctx->jobs[line_of[g]];
                lw[g]->s->n_pend = 0;
                line_empty(&j->best, ctx->want_align ? &j->align : NULL,
                           ctx->want_unk ? &j->unk : NULL);
                job_done(ctx, j, lrc, &errs[g], worker);
                line_of[g] = SIZE_MAX;
            }
        }
    }
}

/* Runs the lines of src with the resolved opt, into out and the opened nbest and align. */
static int run_src(dec_model *m, line_src *src, FILE *out, const dec_run_options *opt,
                   FILE *nbest, FILE *align, FILE *unk, int progress, dec_run_stats *stats,
                   smt_err *err)
{
    size_t n_best = (size_t)opt->n_best;
    int distinct = opt->distinct;
    unsigned threads = (unsigned)opt->threads;
    FILE *warn = opt->warn;
    double t0 = smt_now();
    if (!warn)
        warn = stderr;
    smt_pool *pool = NULL;
    int rc = smt_pool_create(&pool, threads, err);
    if (rc)
        return rc;
    unsigned nw = smt_pool_size(pool);
    run_ctx ctx = {0};
    /* -lm-batch: lanes of lock-step sentences per thread (a model without an LM has nothing to
     * batch) */
    int lm_batch = m->n_lms ? opt->lm_batch : DEC_LM_BATCH_OFF;
    ctx.lanes = lm_batch != DEC_LM_BATCH_OFF ? (unsigned)opt->lm_batch_width : 1;
    ctx.chunk = 4 * (size_t)ctx.lanes;
    size_t n_workers = (size_t)nw * ctx.lanes;
    dec_lm_gpu *gpu = NULL;
    if (lm_batch == DEC_LM_BATCH_GPU)
        rc = dec_lm_gpu_create(&gpu, m, err);
    if (lm_batch != DEC_LM_BATCH_OFF && !rc) {
        ctx.batchers = calloc(nw, sizeof *ctx.batchers);
        ctx.ready = calloc(n_workers, sizeof *ctx.ready);
        ctx.line_of = calloc(n_workers, sizeof *ctx.line_of);
        ctx.errs = calloc(n_workers, sizeof *ctx.errs);
        if (!ctx.batchers || !ctx.ready || !ctx.line_of || !ctx.errs)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        for (unsigned i = 0; i < nw && !rc; i++)
            rc = dec_lm_batch_create(&ctx.batchers[i], m, lm_batch, gpu, err);
    }
    ctx.workers = rc ? NULL : calloc(n_workers, sizeof *ctx.workers);
    ctx.n_best = n_best;
    ctx.distinct = distinct;
    ctx.want_nbest = nbest != NULL && n_best > 0;
    ctx.want_align = align != NULL;
    ctx.want_unk = unk != NULL;
    ctx.progress = progress && isatty(2);
    ctx.start = ctx.last_draw = t0;
    atomic_init(&ctx.lines, 0);
    atomic_init(&ctx.words, 0);
    if (!rc && !ctx.workers)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n_workers && !rc; i++)
        if (!(rc = dec_worker_create(&ctx.workers[i], m, err)))
            rc = dec_worker_set_options(ctx.workers[i], opt, err);
    dec_run_stats st = {0};
    int eof = 0;
    /* a line that could not be translated for a reason other than its length (a damaged table):
     * its output line stays empty, the other lines go on, and the run fails at the end */
    int failed = 0;
    uint64_t failed_line = 0, n_failed = 0;
    char failed_msg[SMT_ERR_MSG_MAX] = "";
    size_t batch = ctx.want_nbest ? BATCH_NBEST : BATCH;
    /* the reader's line number before its first line: a part of a bigger input (a range of a file
     * or lines handed over by another process) keeps the whole input's ids and line numbers */
    uint64_t base = smt_lines_lineno(src->lr);
    while (!rc && !eof) {
        size_t n = 0;
        while (n < batch) {
            if (n > 0 && !smt_lines_ready(src->lr))
                break; /* translate what has arrived before waiting for more */
            char *line;
            size_t len;
            int got = smt_lines_next(src->lr, &line, &len, err);
            if (got < 0)
                rc = got;
            if (got <= 0) {
                eof = 1;
                break;
            }
            size_t had = ctx.n_jobs; /* the jobs added start empty */
            if (smt_grow(&ctx.jobs, &ctx.n_jobs, n + 1, sizeof *ctx.jobs, 16)) {
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                break;
            }
            memset(ctx.jobs + had, 0, (ctx.n_jobs - had) * sizeof *ctx.jobs);
            line_job *j = &ctx.jobs[n];
            if (smt_grow(&j->text, &j->cap, len + 1, 1, 256)) {
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
                break;
            }
            memcpy(j->text, line, len);
            j->text[len] = '\0';
            j->len = len;
            n++;
        }
        if (n == 0 || (rc && rc != SMT_ERR_IO))
            break; /* a read error still lets the lines read before it through */
        ctx.first_id = base + st.lines;
        ctx.n_lines = n;
        if (lm_batch != DEC_LM_BATCH_OFF)
            smt_pool_run(pool, (n + ctx.chunk - 1) / ctx.chunk, run_chunk, &ctx);
        else
            smt_pool_run(pool, n, run_one, &ctx);
        if (ctx.drawn) { /* warnings start on a clean line */
            fputs("\r\033[K", stderr);
            ctx.drawn = 0;
        }
        int nomem = 0;
        for (size_t i = 0; i < n; i++) {
            line_job *j = &ctx.jobs[i];
            if (j->rc) {
                unsigned long long ln = (unsigned long long)(base + st.lines + i + 1);
                fprintf(warn, "line %llu: %s\n", ln, j->msg);
                st.refused++;
                if (j->rc == SMT_ERR_NOMEM && !rc) {
                    rc = smt_err_set(err, j->rc, "line %llu: %s", ln, j->msg);
                    nomem = 1;
                    break;
                }
                if (!failed) { /* an empty line stands for it; the run fails at the end */
                    failed = j->rc;
                    failed_line = ln;
                    snprintf(failed_msg, sizeof failed_msg, "%s", j->msg);
                }
                n_failed++;
            }
            fwrite(j->best.data, 1, j->best.len, out);
            if (align)
                fwrite(j->align.data, 1, j->align.len, align);
            if (unk)
                fwrite(j->unk.data, 1, j->unk.len, unk);
            if (ctx.want_nbest && j->nbest.len)
                fwrite(j->nbest.data, 1, j->nbest.len, nbest);
            st.tokens += j->tokens;
            st.score_sum += j->score;
        }
        if (nomem)
            break;
        st.lines += n;
        fflush(out);
        if (ctx.want_nbest)
            fflush(nbest);
        if (align)
            fflush(align);
        if (unk)
            fflush(unk);
        if (!rc && (ferror(out) || (ctx.want_nbest && ferror(nbest)) || (align && ferror(align)) ||
                    (unk && ferror(unk))))
            rc = smt_err_set(err, SMT_ERR_IO, "write error");
    }
    if (ctx.progress && atomic_load(&ctx.lines))
        draw_progress(&ctx, 1);
    if (!rc && failed)
        rc = smt_err_set(err, failed,
                         "%llu line%s could not be translated (empty output lines); the first, "
                         "line %llu: %s", (unsigned long long)n_failed, n_failed == 1 ? "" : "s",
                         (unsigned long long)failed_line, failed_msg);
    for (size_t i = 0; i < ctx.n_jobs; i++) {
        free(ctx.jobs[i].text);
        smt_buf_free(&ctx.jobs[i].best);
        smt_buf_free(&ctx.jobs[i].nbest);
        smt_buf_free(&ctx.jobs[i].align);
        smt_buf_free(&ctx.jobs[i].unk);
    }
    for (size_t i = 0; i < n_workers && ctx.workers; i++)
        dec_worker_free(ctx.workers[i]);
    free(ctx.workers);
    st.lm_batch = lm_batch;
    for (unsigned i = 0; i < nw && ctx.batchers; i++) {
        if (!ctx.batchers[i])
            continue;
        dec_lm_batch_stats bs;
        dec_lm_batch_stats_get(ctx.batchers[i], &bs);
        st.lm_batches += bs.batches;
        st.lm_expansions += bs.expansions;
        st.lm_hits += bs.hits;
        st.lm_calls += bs.calls;
        st.lm_queries += bs.queries;
        st.lm_seconds += bs.seconds;
        dec_lm_batch_free(ctx.batchers[i]);
    }
    free(ctx.batchers);
    free(ctx.ready);
    free(ctx.line_of);
    free(ctx.errs);
    dec_lm_gpu_free(gpu);
    free(ctx.jobs);
    smt_pool_destroy(pool);
    st.seconds = smt_now() - t0;
    if (stats)
        *stats = st;
    return rc;
}

/* The run's output streams: those opt gives, else the files its paths name (opened here). */
typedef struct run_outs {
    FILE *nbest, *align, *unk;
    const char *nbest_name, *align_name, *unk_name;
    int close_nbest, close_align, close_unk;
} run_outs;

static int open_out(FILE *given, const char *path, FILE *out, FILE **f, const char **name,
                    int *close_it, smt_err *err)
{
    *f = given;
    *name = given ? "output" : path;
    *close_it = 0;
    if (given || !path)
        return 0;
    if (!strcmp(path, "-")) {
        *f = out;
        *name = "<stdout>";
        return 0;
    }
    if (!(*f = fopen(path, "w")))
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open for writing", path);
    *close_it = 1;
    return 0;
}

static int outs_open(run_outs *o, const dec_run_options *opt, FILE *out, smt_err *err)
{
    memset(o, 0, sizeof *o);
    int rc = 0;
    if (opt->n_best > 0)
        rc = open_out(opt->nbest, opt->nbest_path, out, &o->nbest, &o->nbest_name,
                      &o->close_nbest, err);
    if (!rc)
        rc = open_out(opt->alignment, opt->alignment_path, out, &o->align, &o->align_name,
                      &o->close_align, err);
    if (!rc)
        rc = open_out(opt->unknowns, opt->unknowns_path, out, &o->unk, &o->unk_name,
                      &o->close_unk, err);
    return rc;
}

/* Closes what outs_open opened; the first error is kept unless rc already is one. */
static int outs_close(run_outs *o, int rc, smt_err *err)
{
    smt_err e;
    int c;
    if (o->close_nbest && (c = smt_close_output(o->nbest, o->nbest_name, &e)) && !rc)
        rc = smt_err_set(err, c, "%s", e.msg);
    if (o->close_align && (c = smt_close_output(o->align, o->align_name, &e)) && !rc)
        rc = smt_err_set(err, c, "%s", e.msg);
    if (o->close_unk && (c = smt_close_output(o->unk, o->unk_name, &e)) && !rc)
        rc = smt_err_set(err, c, "%s", e.msg);
    return rc;
}

/* The options as given when resolved, else resolved into *tmp. */
static int resolved(const dec_model *m, const dec_run_options *opt, dec_run_options *tmp,
                    const dec_run_options **use, smt_err *err)
{
    *use = opt;
    if (opt && opt->resolved)
        return 0;
    int rc = dec_run_options_resolve(m, opt, tmp, err);
    *use = rc ? NULL : tmp;
    return rc;
}

/* The three entry points' common part: the options resolved, the input (src, or opt->input
 * opened here before any output file, so that a missing input leaves none behind), the output
 * streams opened, the lines run, everything closed. */
static int run_entry(dec_model *m, line_src *src, FILE *out, const dec_run_options *opt_in,
                     int progress, dec_run_stats *stats, smt_err *err)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    dec_run_options tmp;
    const dec_run_options *opt;
    int rc = resolved(m, opt_in, &tmp, &opt, err);
    if (rc)
        return rc;
    line_src opened;
    if (!src && !(rc = src_open(&opened, opt->input, err)))
        src = &opened;
    if (!rc) {
        run_outs o;
        if (!(rc = outs_open(&o, opt, out, err)))
            rc = run_src(m, src, out, opt, o.nbest, o.align, o.unk, progress && opt->verbose > 0,
                         stats, err);
        rc = outs_close(&o, rc, err);
        if (src == &opened)
            src_close(&opened);
    }
    if (opt == &tmp)
        dec_run_options_release(&tmp);
    return rc;
}

int dec_run(dec_model *m, FILE *in, FILE *out, const dec_run_options *opt_in,
            dec_run_stats *stats, smt_err *err)
{
    if (stats)
        memset(stats, 0, sizeof *stats);
    line_src src = {NULL, 1};
    int rc = smt_lines_open_stream(&src.lr, in, "input", err);
    if (!rc)
        rc = run_entry(m, &src, out, opt_in, 0, stats, err);
    src_close(&src);
    return rc;
}

int dec_run_input(dec_model *m, FILE *out, const dec_run_options *opt_in, dec_run_stats *stats,
                  smt_err *err)
{
    return run_entry(m, NULL, out, opt_in, 1, stats, err);
}

int dec_run_lines(dec_model *m, smt_lines *in, FILE *out, const dec_run_options *opt_in,
                  dec_run_stats *stats, smt_err *err)
{
    line_src src = {in, 0};
    return run_entry(m, &src, out, opt_in, 0, stats, err);
}
