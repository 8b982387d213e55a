/* bench_decoder — decoding speed, load time, peak memory, model score and BLEU.
 *
 *   bench_decoder -f moses.ini -i input [-r reference]... [-t 1,2] [-s S] [-cbp P] [-o out_prefix]
 *                 [-lm-batch off,cpu,gpu] [-lm-batch-width W]
 *
 * For each thread count and each -lm-batch back end: loads the model afresh (load time is reported
 * on its own line, so the phrase cache starts cold as in a real run), translates the whole input,
 * and prints one line:
 *   decoder threads=T lm_batch=B sentences=N words=W seconds=S cpu_seconds=C words_per_s=X
 *           words_per_cpu_s=Y sentences_per_s=Z score_mean=M bleu=B peak_rss_mb=R
 * and for a batched back end one more:
 *   decoder_lm threads=T lm_batch=B width=W batches=N expansions_per_batch=E calls=C
 *           queries_per_call=Q cache_hits=H lm_seconds=L lm_share=F
 * (lm_share: the LM calls' wall time over the decoding's CPU time). With several back ends the
 * outputs are compared: "decoder_identical threads=T lm_batch=B yes|no" against the first.
 * words/s = source tokens / decoding wall time (load excluded), as the anchors define it.
 * BLEU is corpus BLEU as multi-bleu.perl computes it: clipped 1- to 4-gram precisions, geometric
 * mean, brevity penalty with the closest reference length; several -r give a multi-reference BLEU.
 * With no -i, the shared test-a set ($FASTSMT_SHARED/data/bible/test-a.es, WEB reference) is used.
 * The input and references are read with smt_lines (plain or compressed). */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "decoder.h"
#include "smt_bleu.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_progress.h"
#include "smt_words.h"

/* User + system CPU seconds of the process so far (every thread). */
static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

/* ---------------------------------------------------------------- BLEU */

/* The lines of a text, each NUL-terminated in text. */
typedef struct lines {
    smt_buf text;
    char **v;
    size_t n;
} lines;

/* Reads every line of r (closed after) into l. Returns 0 or an SMT_ERR_* with err set. */
static int read_lines(smt_lines *r, lines *l, smt_err *err)
{
    memset(l, 0, sizeof *l);
    size_t *off = NULL, cap = 0;
    char *line;
    size_t len;
    int rc;
    while ((rc = smt_lines_next(r, &line, &len, err)) == 1) {
        if (smt_grow(&off, &cap, l->n + 1, sizeof *off, 1024) ||
            smt_buf_append(&l->text, line, len) || smt_buf_putc(&l->text, '\0')) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", smt_lines_path(r));
            break;
        }
        off[l->n++] = l->text.len - len - 1;
    }
    if (rc == 0 && l->n && !(l->v = malloc(l->n * sizeof *l->v)))
        rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", smt_lines_path(r));
    for (size_t i = 0; rc == 0 && i < l->n; i++)
        l->v[i] = l->text.data + off[i];
    free(off);
    smt_lines_close(r);
    return rc;
}

/* read_lines of the file at path (plain or compressed); exits with a message on an error. */
static void read_file_lines(const char *path, lines *l)
{
    smt_err err;
    smt_lines *r;
    int rc = smt_lines_open(&r, path, 0, &err);
    if (rc || (rc = read_lines(r, l, &err))) {
        fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&err, rc));
        exit(1);
    }
}

static void lines_free(lines *l)
{
    smt_buf_free(&l->text);
    free(l->v);
}

/* Corpus BLEU (percent) of hyp against n_refs reference sets (smt_bleu: multi-bleu.perl's formula);
 * a reference set shorter than the hypotheses counts its missing lines as empty. */
static double bleu(const lines *hyp, const lines *refs, int n_refs)
{
    smt_bleu_stat sum, st;
    memset(&sum, 0, sizeof sum);
    if (n_refs > SMT_BLEU_MAX_REFS)
        n_refs = SMT_BLEU_MAX_REFS;
    for (size_t i = 0; i < hyp->n; i++) {
        const char *r[SMT_BLEU_MAX_REFS];
        for (int k = 0; k < n_refs; k++)
            r[k] = i < refs[k].n ? refs[k].v[i] : "";
        smt_bleu_stats(hyp->v[i], r, n_refs, &st);
        smt_bleu_add(&sum, &st);
    }
    return smt_bleu_score(&sum);
}

/* ---------------------------------------------------------------- the benchmark */

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_decoder -f moses.ini [-i input] [-r ref]... [-t 1,2] [-s S] [-cbp P]\n"
               "                     [-o out_prefix] [-lm-batch off,cpu,gpu] [-lm-batch-width W]\n"
               "Loads the model and translates the input once per thread count of -t, printing\n"
               "load time, words/s, mean model score, BLEU against the -r references and peak\n"
               "memory. Without -i: $FASTSMT_SHARED/data/bible/test-a.es (reference test-a.en).\n"
               "The input and references may be plain or gzip, xz, bzip2 or zstd.\n"
               "-s 1..%d, -cbp 1..%d (default: the ini's). -lm-batch: the back ends to run, in order\n"
               "(default off,cpu); the outputs of each are compared with the first's.\n",
            DEC_MAX_STACK, DEC_MAX_POP_LIMIT);
}

int main(int argc, char **argv)
{
    const char *ini = NULL, *input = NULL, *refs_path[4], *threads_arg = "1,2", *prefix = NULL;
    const char *lm_arg = "off,cpu";
    int n_refs = 0, width = -1;
    dec_options opt;
    dec_options_default(&opt);
    smt_err e;
    for (int i = 1; i < argc; i += 2) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return smt_close_output(stdout, "standard output", NULL) ? 1 : 0;
        }
        if (!v) {
            fprintf(stderr, "bench_decoder: %s needs a value\n", a);
            return 2;
        }
        if (!strcmp(a, "-f"))
            ini = v;
        else if (!strcmp(a, "-i"))
            input = v;
        else if (!strcmp(a, "-r")) {
            if (n_refs == 4) {
                fprintf(stderr, "bench_decoder: at most 4 references (-r)\n");
                return 2;
            }
            refs_path[n_refs++] = v;
        } else if (!strcmp(a, "-t"))
            threads_arg = v;
        else if (!strcmp(a, "-s")) {
            if (smt_parse_int_arg("-s", v, 1, DEC_MAX_STACK, &opt.stack_size, &e)) {
                fprintf(stderr, "bench_decoder: %s\n", e.msg);
                return 2;
            }
        } else if (!strcmp(a, "-cbp")) {
            if (smt_parse_int_arg("-cbp", v, 1, DEC_MAX_POP_LIMIT, &opt.pop_limit, &e)) {
                fprintf(stderr, "bench_decoder: %s\n", e.msg);
                return 2;
            }
        } else if (!strcmp(a, "-lm-batch-width")) {
            if (smt_parse_int_arg("-lm-batch-width", v, 1, DEC_MAX_LM_BATCH_WIDTH, &width, &e)) {
                fprintf(stderr, "bench_decoder: %s\n", e.msg);
                return 2;
            }
        } else if (!strcmp(a, "-lm-batch"))
            lm_arg = v;
        else if (!strcmp(a, "-o"))
            prefix = v;
        else {
            fprintf(stderr, "bench_decoder: unknown argument %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    /* the thread counts and back ends, checked before any work */
    unsigned *thread_counts = NULL;
    size_t n_threads = 0, cap_threads = 0;
    const char *item;
    size_t len;
    for (const char *p = threads_arg, *e = p + strlen(p);
         smt_word_next(&p, e, SMT_WS_COMMA, &item, &len);) {
        long long t;
        if (smt_parse_ll(item, len, 0, 1024, &t)) {
            fprintf(stderr, "bench_decoder: -t '%s': a comma-separated list of thread counts "
                            "(0..1024) is expected\n", threads_arg);
            free(thread_counts);
            return 2;
        }
        if (smt_grow(&thread_counts, &cap_threads, n_threads + 1, sizeof *thread_counts, 8)) {
            fprintf(stderr, "bench_decoder: out of memory\n");
            free(thread_counts);
            return 1;
        }
        thread_counts[n_threads++] = (unsigned)t;
    }
    static const char *const lm_names[] = {"off", "cpu", "gpu"};
    int lm_modes[8], n_modes = 0;
    for (const char *p = lm_arg, *e = p + strlen(p);
         smt_word_next(&p, e, SMT_WS_COMMA, &item, &len);) {
        int k = -1;
        for (int j = 0; j < 3; j++)
            if (strlen(lm_names[j]) == len && !strncmp(item, lm_names[j], len))
                k = j;
        if (k < 0 || n_modes == 8) {
            fprintf(stderr, "bench_decoder: -lm-batch '%s': a comma-separated list of off, cpu "
                            "and gpu is expected\n", lm_arg);
            free(thread_counts);
            return 2;
        }
        lm_modes[n_modes++] = k;
    }
    static char def_in[4096], def_ref[4096];
    const char *shared = getenv("FASTSMT_SHARED");
    if (!input && shared) {
        snprintf(def_in, sizeof def_in, "%s/data/bible/test-a.es", shared);
        snprintf(def_ref, sizeof def_ref, "%s/data/bible/test-a.en", shared);
        input = def_in;
        if (!n_refs)
            refs_path[n_refs++] = def_ref;
    }
    if (!ini || !input || !n_threads || !n_modes) {
        usage(stderr);
        free(thread_counts);
        return 2;
    }
    /* the input, decoded from memory: its lines, each ending in "\n" */
    lines in_lines;
    read_file_lines(input, &in_lines);
    if (!in_lines.n) {
        fprintf(stderr, "bench_decoder: %s: no sentences\n", input);
        return 1;
    }
    for (size_t i = 0; i < in_lines.n; i++) { /* each line's NUL */
        char *end = i + 1 < in_lines.n ? in_lines.v[i + 1] : in_lines.text.data + in_lines.text.len;
        end[-1] = '\n';
    }
    char *in_text = in_lines.text.data;
    size_t in_len = in_lines.text.len;
    lines refs[4];
    for (int r = 0; r < n_refs; r++)
        read_file_lines(refs_path[r], &refs[r]);
    for (size_t ti = 0; ti < n_threads; ti++) {
      char *first_out = NULL;
      size_t first_len = 0;
      for (int mi = 0; mi < n_modes; mi++) {
        unsigned threads = thread_counts[ti];
        const char *lm_name = lm_names[lm_modes[mi]];
        smt_err err;
        dec_model *m;
        double t0 = smt_now();
        /* text models are kept binarized where the fastsmt tool keeps them */
        char *cache = dec_model_cache_dir(getenv("FASTSMT_CACHE"), getenv("XDG_CACHE_HOME"),
                                          getenv("HOME"));
        opt.model_cache = cache;
        int rc = dec_model_load(&m, ini, &opt, &err);
        opt.model_cache = NULL;
        free(cache);
        if (rc) {
            fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&err, rc));
            return 1;
        }
        printf("decoder_load threads=%u seconds=%.3f peak_rss_mb=%.1f\n", threads,
               smt_now() - t0, peak_rss_mb());
        FILE *in = fmemopen(in_text, in_len, "r");
        char *out = NULL;
        size_t out_len = 0;
        FILE *o = open_memstream(&out, &out_len);
        dec_run_stats st;
        dec_run_options ro;
        dec_run_options_default(&ro);
        ro.n_best = 0;
        ro.threads = (int)threads;
        ro.lm_batch = lm_modes[mi];
        ro.lm_batch_width = width;
        double c0 = cpu_seconds();
        rc = dec_run(m, in, o, &ro, &st, &err);
        double cpu = cpu_seconds() - c0;
        fclose(in);
        fclose(o);
        if (rc) {
            fprintf(stderr, "bench_decoder: -lm-batch %s: %s\n", lm_name, smt_err_text(&err, rc));
            return 1;
        }
        if (prefix) {
            char path[4096];
            snprintf(path, sizeof path, "%s.%ut.%s.out", prefix, threads, lm_name);
            FILE *f = fopen(path, "w");
            if (!f) {
                perror(path);
                return 1;
            }
            fwrite(out, 1, out_len, f); /* a short write sets the error flag: closing reports it */
            if ((rc = smt_close_output(f, path, &err)) != 0) {
                fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&err, rc));
                return 1;
            }
        }
        if (mi == 0) {
            first_out = malloc(out_len + 1);
            if (!first_out) {
                fprintf(stderr, "bench_decoder: out of memory\n");
                return 1;
            }
            memcpy(first_out, out, out_len);
            first_len = out_len;
        } else {
            printf("decoder_identical threads=%u lm_batch=%s vs=%s %s\n", threads, lm_name,
                   lm_names[lm_modes[0]],
                   out_len == first_len && !memcmp(out, first_out, out_len) ? "yes" : "no");
        }
        lines hyp;
        smt_lines *hr;
        if ((rc = smt_lines_open_mem(&hr, "the output", out, out_len, 0, &err)) ||
            (rc = read_lines(hr, &hyp, &err))) {
            fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&err, rc));
            return 1;
        }
        double b = n_refs ? bleu(&hyp, refs, n_refs) : NAN;
        printf("decoder threads=%u lm_batch=%s sentences=%llu words=%llu seconds=%.3f "
               "cpu_seconds=%.3f words_per_s=%.0f words_per_cpu_s=%.0f sentences_per_s=%.1f "
               "score_mean=%.4f bleu=%.2f peak_rss_mb=%.1f\n",
               threads, lm_name, (unsigned long long)st.lines, (unsigned long long)st.tokens,
               st.seconds, cpu, (double)st.tokens / st.seconds, (double)st.tokens / cpu,
               (double)st.lines / st.seconds, st.lines ? st.score_sum / (double)st.lines : 0, b,
               peak_rss_mb());
        if (st.lm_batch != 0)
            printf("decoder_lm threads=%u lm_batch=%s width=%d batches=%llu "
                   "expansions_per_batch=%.1f calls=%llu queries_per_call=%.1f cache_hits=%llu "
                   "queries=%llu lm_seconds=%.3f lm_share=%.3f\n",
                   threads, lm_name, width < 0 ? 16 : width, (unsigned long long)st.lm_batches,
                   st.lm_batches ? (double)st.lm_expansions / (double)st.lm_batches : 0,
                   (unsigned long long)st.lm_calls,
                   st.lm_calls ? (double)st.lm_queries / (double)st.lm_calls : 0,
                   (unsigned long long)st.lm_hits, (unsigned long long)st.lm_queries,
                   st.lm_seconds, cpu > 0 ? st.lm_seconds / cpu : 0);
        if (threads == 2)
            printf("decoder_ratio threads=2 lm_batch=%s vs_moses1=%.2f vs_moses2=%.2f (anchors "
                   "1881 and 4707 words/s)\n", lm_name,
                   (double)st.tokens / st.seconds / 1881.0, (double)st.tokens / st.seconds / 4707.0);
        fflush(stdout);
        lines_free(&hyp);
        free(out);
        dec_model_free(m);
      }
      free(first_out);
    }
    free(thread_counts);
    for (int r = 0; r < n_refs; r++)
        lines_free(&refs[r]);
    lines_free(&in_lines);
    int rc = smt_close_output(stdout, "standard output", &e);
    if (rc) {
        fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&e, rc));
        return 1;
    }
    return 0;
}
