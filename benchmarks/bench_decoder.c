/* bench_decoder — decoding speed, load time, peak memory, model score and BLEU.
 *
 *   bench_decoder -f moses.ini -i input [-r reference]... [-t 1,2] [-s S] [-cbp P] [-o out_prefix]
 *
 * For each thread count: loads the model afresh (load time is reported on its own line, so the
 * phrase cache starts cold as in a real run), translates the whole input, and prints one line:
 *   decoder threads=T sentences=N words=W seconds=S words_per_s=X sentences_per_s=Y
 *           score_mean=M bleu=B peak_rss_mb=R
 * words/s = source tokens / decoding wall time (load excluded), as the anchors define it.
 * BLEU is corpus BLEU as multi-bleu.perl computes it: clipped 1- to 4-gram precisions, geometric
 * mean, brevity penalty with the closest reference length; several -r give a multi-reference BLEU.
 * With no -i, the shared test-a set ($FASTSMT_SHARED/data/bible/test-a.es, WEB reference) is used. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "decoder.h"
#include "smt_bleu.h"
#include "smt_progress.h"

/* ---------------------------------------------------------------- BLEU */

typedef struct lines {
    char **v;
    size_t n;
} lines;

static lines split_lines(char *text)
{
    lines l = {0};
    size_t cap = 1024;
    l.v = malloc(cap * sizeof *l.v);
    for (char *p = text; p && *p;) {
        char *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        if (l.n == cap)
            l.v = realloc(l.v, (cap *= 2) * sizeof *l.v);
        l.v[l.n++] = p;
        p = nl ? nl + 1 : NULL;
    }
    return l;
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

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    if (b) {
        b[n] = '\0';
        *len = (size_t)n;
    }
    return b;
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss / 1024.0;
}

int main(int argc, char **argv)
{
    const char *ini = NULL, *input = NULL, *refs_path[4], *threads_arg = "1,2", *prefix = NULL;
    int n_refs = 0;
    dec_options opt;
    dec_options_default(&opt);
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-f"))
            ini = argv[i + 1];
        else if (!strcmp(argv[i], "-i"))
            input = argv[i + 1];
        else if (!strcmp(argv[i], "-r") && n_refs < 4)
            refs_path[n_refs++] = argv[i + 1];
        else if (!strcmp(argv[i], "-t"))
            threads_arg = argv[i + 1];
        else if (!strcmp(argv[i], "-s"))
            opt.stack_size = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-cbp"))
            opt.pop_limit = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-o"))
            prefix = argv[i + 1];
        else {
            fprintf(stderr, "bench_decoder: unknown argument %s\n", argv[i]);
            return 2;
        }
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
    if (!ini || !input) {
        fprintf(stderr, "usage: bench_decoder -f moses.ini [-i input] [-r ref]... [-t 1,2] "
                        "[-s S] [-cbp P] [-o out_prefix]\n");
        return 2;
    }
    size_t in_len;
    char *in_text = read_all(input, &in_len);
    if (!in_text) {
        perror(input);
        return 1;
    }
    lines refs[4];
    for (int r = 0; r < n_refs; r++) {
        size_t len;
        char *t = read_all(refs_path[r], &len);
        if (!t) {
            perror(refs_path[r]);
            return 1;
        }
        refs[r] = split_lines(t);
    }
    char *targs = strdup(threads_arg), *save = NULL;
    for (char *tk = strtok_r(targs, ",", &save); tk; tk = strtok_r(NULL, ",", &save)) {
        unsigned threads = (unsigned)atoi(tk);
        smt_err err;
        dec_model *m;
        double t0 = smt_now();
        int rc = dec_model_load(&m, ini, &opt, &err);
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
        rc = dec_run(m, in, o, NULL, 0, 0, threads, stderr, &st, &err);
        fclose(in);
        fclose(o);
        if (rc) {
            fprintf(stderr, "bench_decoder: %s\n", smt_err_text(&err, rc));
            return 1;
        }
        if (prefix) {
            char path[4096];
            snprintf(path, sizeof path, "%s.%ut.out", prefix, threads);
            FILE *f = fopen(path, "w");
            if (f) {
                fwrite(out, 1, out_len, f);
                fclose(f);
            }
        }
        lines hyp = split_lines(out);
        double b = n_refs ? bleu(&hyp, refs, n_refs) : NAN;
        printf("decoder threads=%u sentences=%llu words=%llu seconds=%.3f words_per_s=%.0f "
               "sentences_per_s=%.1f score_mean=%.4f bleu=%.2f peak_rss_mb=%.1f\n",
               threads, (unsigned long long)st.lines, (unsigned long long)st.tokens, st.seconds,
               (double)st.tokens / st.seconds, (double)st.lines / st.seconds,
               st.lines ? st.score_sum / (double)st.lines : 0, b, peak_rss_mb());
        if (threads == 2)
            printf("decoder_ratio threads=2 vs_moses1=%.2f vs_moses2=%.2f (anchors 1881 and 4707 "
                   "words/s)\n",
                   (double)st.tokens / st.seconds / 1881.0, (double)st.tokens / st.seconds / 4707.0);
        fflush(stdout);
        free(hyp.v);
        free(out);
        dec_model_free(m);
    }
    free(targs);
    for (int r = 0; r < n_refs; r++) {
        free(refs[r].v[0] ? refs[r].v : NULL);
    }
    free(in_text);
    return 0;
}
