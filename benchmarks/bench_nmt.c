/* bench_nmt — output layer fused vs unfused (CPU, and GPU when present) and words/s of scoring and
 * translation. One machine-readable line per measurement:
 *   outlayer backend=cpu mode=fused V=32000 beam=4 batch=16 rows=64 ms=1.234 speedup=3.1
 * (cpu modes: unfused = add-bias, log-softmax, k-best passes; fused = the reference one-pass kernel;
 * fused_vec = the CPU backend's vectorized one-pass kernel; argmax = k = 1 without probabilities;
 * speedup is against unfused)
 *   words backend=cpu task=score sentences=500 words=15000 seconds=2.1 words_per_s=7100
 *   nbest backend=cpu sharing=1 sentences=200 hypotheses=15000 ... hyps_per_s=2900 (n-best scoring,
 *   with and without prefix sharing)
 *   load backend=cpu seconds=0.41 (model load: read, shape and finiteness checks, conversion)
 * Usage: bench_nmt [--quick] [--no-cpu-outlayer] [--model DIR [--load]] [--source SRC --target TGT
 *                  [--n N]] [--beam K] [--threads N] [--nbest LIST]; --help */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nmt.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_num.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill(float *x, size_t n, unsigned seed)
{
    uint64_t s = 0x9E3779B97F4A7C15ull ^ seed;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        x[i] = (float)(s >> 40) / (float)(1u << 24) * 20.0f - 10.0f;
    }
}

/* Best of `reps` timings of fn over the same inputs (ms); the CPU caches stay warm on purpose:
 * the unfused passes get the same help the fused one gets. */
static void bench_cpu_outlayer(int quick)
{
    static const int vocab[] = {32000, 64000, 250000}, beams[] = {1, 4, 9}, batches[] = {1, 16, 64};
    for (int vi = 0; vi < 3; vi++)
        for (int bi = 0; bi < 3; bi++)
            for (int si = 0; si < 3; si++) {
                int V = vocab[vi], k = beams[bi], rows = batches[si] * k;
                if (quick && (si == 2 || vi == 2))
                    continue;
                float *x = malloc((size_t)rows * V * 4), *bias = malloc((size_t)V * 4),
                      *tmp = malloc((size_t)rows * V * 4), *val = malloc((size_t)rows * k * 4),
                      *lse = malloc((size_t)rows * 4);
                int32_t *ids = malloc((size_t)rows * k * 4);
                fill(x, (size_t)rows * V, 1);
                fill(bias, (size_t)V, 2);
                int reps = rows * (double)V > 4e6 ? 2 : 5;
                double fused = 1e30, unfused = 1e30, argmax = 1e30, fast = 1e30;
                for (int r = 0; r < reps; r++) {
                    double t0 = now();
                    nmt_out_topk(x, bias, rows, V, k, 1, val, ids, lse);
                    double t1 = now();
                    nmt_out_topk_unfused(x, bias, rows, V, k, tmp, val, ids, lse);
                    double t2 = now();
                    if (k == 1)
                        nmt_out_argmax(x, bias, rows, V, ids, val);
                    double t3 = now();
                    for (int b = 0; b < rows; b++) /* the CPU backend's vectorized pass */
                        nmt_out_topk_fast(x + (size_t)b * V, bias, V, k, val + (size_t)b * k,
                                          ids + (size_t)b * k, lse + b);
                    double t4 = now();
                    fast = fmin(fast, (t4 - t3) * 1e3);
                    fused = fmin(fused, (t1 - t0) * 1e3);
                    unfused = fmin(unfused, (t2 - t1) * 1e3);
                    argmax = fmin(argmax, (t3 - t2) * 1e3);
                }
                printf("outlayer backend=cpu mode=unfused V=%d beam=%d batch=%d rows=%d ms=%.3f\n", V,
                       k, batches[si], rows, unfused);
                printf("outlayer backend=cpu mode=fused V=%d beam=%d batch=%d rows=%d ms=%.3f "
                       "speedup=%.2f\n",
                       V, k, batches[si], rows, fused, unfused / fused);
                printf("outlayer backend=cpu mode=fused_vec V=%d beam=%d batch=%d rows=%d ms=%.3f "
                       "speedup=%.2f\n",
                       V, k, batches[si], rows, fast, unfused / fast);
                if (k == 1)
                    printf("outlayer backend=cpu mode=argmax V=%d beam=1 batch=%d rows=%d ms=%.3f "
                           "speedup=%.2f\n",
                           V, batches[si], rows, argmax, unfused / argmax);
                fflush(stdout);
                free(x), free(bias), free(tmp), free(val), free(lse), free(ids);
            }
}

static void bench_gpu_outlayer(void)
{
    nmt_gpu *g;
    smt_err err;
    if (!nmt_cuda_available() || nmt_gpu_create(&g, 0, &err)) {
        printf("outlayer backend=cuda skipped=no_device\n");
        return;
    }
    static const int vocab[] = {32000, 64000, 250000}, beams[] = {1, 4, 9},
                     batches[] = {1, 8, 32, 128};
    for (int vi = 0; vi < 3; vi++)
        for (int bi = 0; bi < 3; bi++)
            for (int si = 0; si < 4; si++) {
                int V = vocab[vi], k = beams[bi], rows = batches[si] * k;
                double fused, unfused, argmax = 0;
                if (nmt_gpu_bench_outlayer(g, NMT_GPU_TOPK, rows, V, k, 20, &fused, &err) ||
                    nmt_gpu_bench_outlayer(g, NMT_GPU_TOPK_UNFUSED, rows, V, k, 20, &unfused, &err) ||
                    (k == 1 && nmt_gpu_bench_outlayer(g, NMT_GPU_ARGMAX, rows, V, 1, 20, &argmax, &err))) {
                    printf("outlayer backend=cuda error=\"%s\"\n", err.msg);
                    nmt_gpu_free(g);
                    return;
                }
                printf("outlayer backend=cuda mode=unfused V=%d beam=%d batch=%d rows=%d ms=%.4f\n",
                       V, k, batches[si], rows, unfused);
                printf("outlayer backend=cuda mode=fused V=%d beam=%d batch=%d rows=%d ms=%.4f "
                       "speedup=%.2f\n",
                       V, k, batches[si], rows, fused, unfused / fused);
                if (k == 1)
                    printf("outlayer backend=cuda mode=argmax V=%d beam=1 batch=%d rows=%d ms=%.4f "
                           "speedup=%.2f\n",
                           V, batches[si], rows, argmax, unfused / argmax);
                fflush(stdout);
            }
    nmt_gpu_free(g);
}

static nmt_sentence *read_sents(const nmt_model *m, int target, const char *path, int max, int *n)
{
    smt_lines *r;
    smt_err err;
    *n = 0;
    if (smt_lines_open(&r, path, 0, &err)) {
        fprintf(stderr, "bench_nmt: %s\n", err.msg);
        return NULL;
    }
    nmt_sentence *s = calloc((size_t)max, sizeof *s);
    char *line;
    size_t len;
    while (*n < max && smt_lines_next(r, &line, &len, &err) == 1) {
        size_t k = nmt_model_tokenize(m, target, line, NULL, 0);
        int32_t *ids = malloc((k ? k : 1) * sizeof *ids);
        nmt_model_tokenize(m, target, line, ids, k);
        s[(*n)++] = (nmt_sentence){ids, (int)k};
    }
    smt_lines_close(r);
    return s;
}

static void bench_words(const char *model, const char *src_path, const char *tgt_path, int max,
                        int beam, unsigned threads)
{
    nmt_model *m;
    smt_err err;
    if (nmt_model_open(&m, model, &err)) {
        fprintf(stderr, "bench_nmt: %s\n", err.msg);
        return;
    }
    int ns, nt;
    nmt_sentence *src = read_sents(m, 0, src_path, max, &ns), *tgt = read_sents(m, 1, tgt_path, max, &nt);
    for (int b = 0; b < 2 && src && tgt; b++) {
        nmt_ctx *c;
        nmt_ctx_options o = {b ? NMT_BACKEND_CUDA : NMT_BACKEND_CPU, 0, threads, 64, 0};
        const char *name = b ? "cuda" : "cpu";
        if (nmt_ctx_create(&c, m, &o, &err)) {
            printf("words backend=%s skipped=\"%s\"\n", name, err.msg);
            continue;
        }
        float *lp = malloc((size_t)ns * sizeof *lp);
        long words = 0;
        for (int i = 0; i < nt; i++)
            words += tgt[i].len + 1;
        double t0 = now();
        int rc = nmt_score(c, (size_t)(ns < nt ? ns : nt), src, tgt, lp, &err);
        double t1 = now();
        if (!rc)
            printf("words backend=%s task=score sentences=%d words=%ld seconds=%.3f words_per_s=%.0f\n",
                   name, nt, words, t1 - t0, (double)words / (t1 - t0));
        nmt_hyp *h = calloc((size_t)ns, sizeof *h);
        nmt_search_options so = {beam, 2.0f, 10, 0.6f, NULL};
        t0 = now();
        rc = nmt_translate(c, (size_t)ns, src, &so, h, &err);
        t1 = now();
        words = 0;
        for (int i = 0; i < ns; i++)
            words += h[i].len;
        if (!rc)
            printf("words backend=%s task=translate beam=%d sentences=%d words=%ld seconds=%.3f "
                   "words_per_s=%.0f\n",
                   name, beam, ns, words, t1 - t0, (double)words / (t1 - t0));
        else
            printf("words backend=%s error=\"%s\"\n", name, err.msg);
        fflush(stdout);
        nmt_hyps_free(h, (size_t)ns);
        free(h);
        free(lp);
        nmt_ctx_free(c);
    }
    for (int i = 0; src && i < ns; i++)
        free((void *)src[i].ids);
    for (int i = 0; tgt && i < nt; i++)
        free((void *)tgt[i].ids);
    free(src);
    free(tgt);
    nmt_model_free(m);
}

/* Scoring an n-best list (the work of nmt rescore): hypotheses of sentence ids < max against their
 * source lines, with and without prefix sharing (same scores; nmt_ctx_options.no_sharing). */
static int bench_nbest(const char *model, const char *src_path, const char *nbest_path, int max,
                       unsigned threads)
{
    nmt_model *m;
    smt_err err;
    if (nmt_model_open(&m, model, &err)) {
        fprintf(stderr, "bench_nmt: %s\n", err.msg);
        return 1;
    }
    int ns;
    nmt_sentence *src = read_sents(m, 0, src_path, max, &ns);
    smt_lines *r;
    if (!src || smt_lines_open(&r, nbest_path, 0, &err)) {
        fprintf(stderr, "bench_nmt: %s\n", src ? err.msg : "cannot read the source");
        nmt_model_free(m);
        return 1;
    }
    size_t n = 0, cap = 1024;
    nmt_sentence *hs = malloc(cap * sizeof *hs), *hsrc = malloc(cap * sizeof *hsrc);
    char *line;
    size_t len;
    long words = 0;
    int rc;
    while ((rc = smt_lines_next(r, &line, &len, &err)) == 1) {
        nmt_nbest_line nb;
        if (nmt_nbest_parse(line, &nb)) {
            rc = smt_err_set(&err, SMT_ERR_PARSE, "%s:%llu: not a Moses n-best line", nbest_path,
                             (unsigned long long)smt_lines_lineno(r));
            break;
        }
        if (nb.id >= ns) /* beyond the --n sentences measured */
            continue;
        long id = nb.id;
        if (n == cap) {
            size_t c = cap;
            if (smt_grow(&hs, &c, n + 1, sizeof *hs, 0) ||
                smt_grow(&hsrc, &cap, n + 1, sizeof *hsrc, 0)) {
                rc = smt_err_set(&err, SMT_ERR_NOMEM, "out of memory");
                break;
            }
        }
        size_t k = nmt_model_tokenize(m, 1, nb.words, NULL, 0);
        int32_t *ids = malloc((k ? k : 1) * sizeof *ids);
        nmt_model_tokenize(m, 1, nb.words, ids, k);
        hs[n] = (nmt_sentence){ids, (int)k};
        hsrc[n++] = src[id]; /* one array per sentence, as nmt rescore passes them */
        words += (long)k + 1;
    }
    smt_lines_close(r);
    if (rc < 0) /* nothing measured on a list that could not be read */
        fprintf(stderr, "bench_nmt: %s\n", err.msg);
    float *lp = malloc((n ? n : 1) * sizeof *lp);
    for (int b = 0; b < 2 && rc >= 0; b++)
        for (int share = 1; share >= 0; share--) {
            nmt_ctx *c;
            nmt_ctx_options o = {b ? NMT_BACKEND_CUDA : NMT_BACKEND_CPU, 0, threads, 64, !share};
            const char *name = b ? "cuda" : "cpu";
            if (nmt_ctx_create(&c, m, &o, &err)) {
                printf("nbest backend=%s skipped=\"%s\"\n", name, err.msg);
                break;
            }
            double t0 = now();
            int src_rc = nmt_score(c, n, hsrc, hs, lp, &err);
            double t = now() - t0;
            if (src_rc)
                printf("nbest backend=%s error=\"%s\"\n", name, err.msg);
            else
                printf("nbest backend=%s sharing=%d sentences=%d hypotheses=%zu words=%ld "
                       "seconds=%.3f hyps_per_s=%.0f words_per_s=%.0f\n",
                       name, share, ns, n, words, t, (double)n / t, (double)words / t);
            fflush(stdout);
            nmt_ctx_free(c);
        }
    for (size_t i = 0; i < n; i++)
        free((void *)hs[i].ids);
    for (int i = 0; i < ns; i++)
        free((void *)src[i].ids);
    free(hs), free(hsrc), free(src), free(lp);
    nmt_model_free(m);
    return rc < 0;
}

/* Loading a model: reading, checking (shapes, and every weight finite) and converting. */
static int bench_load(const char *model)
{
    double best = 1e30;
    for (int r = 0; r < 3; r++) {
        nmt_model *m;
        smt_err err;
        double t0 = now();
        if (nmt_model_open(&m, model, &err)) {
            fprintf(stderr, "bench_nmt: %s\n", err.msg);
            return 1;
        }
        best = fmin(best, now() - t0);
        nmt_model_free(m);
    }
    printf("load backend=cpu seconds=%.3f\n", best);
    fflush(stdout);
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: bench_nmt [--quick] [--no-cpu-outlayer] [--model DIR [--load]] [--source SRC]\n"
          "                 [--target TGT] [--nbest LIST] [--n N] [--beam K] [--threads N]\n"
          "  output layer (CPU, and CUDA when present) fused vs unfused; with --model, --source\n"
          "  and --target: words/s of scoring and translation; with --model, --source and --nbest:\n"
          "  n-best scoring with and without prefix sharing; --load: model load time only.\n",
          f);
}

int main(int argc, char **argv)
{
    const char *model = NULL, *src = NULL, *tgt = NULL, *nbest = NULL;
    int quick = 0, cpu_out = 1, n = 200, beam = 5, threads = 0, load_only = 0;
    smt_err err;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int rc = 0;
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return smt_close_output(stdout, "standard output", NULL) ? 1 : 0;
        } else if (!strcmp(o, "--quick"))
            quick = 1;
        else if (!strcmp(o, "--no-cpu-outlayer"))
            cpu_out = 0;
        else if (!strcmp(o, "--load"))
            load_only = 1;
        else if (!v) {
            fprintf(stderr, "bench_nmt: unknown option or missing value: '%s'\n", o);
            usage(stderr);
            return 2;
        } else if (!strcmp(o, "--model"))
            model = v, i++;
        else if (!strcmp(o, "--source"))
            src = v, i++;
        else if (!strcmp(o, "--target"))
            tgt = v, i++;
        else if (!strcmp(o, "--nbest"))
            nbest = v, i++;
        else if (!strcmp(o, "--n"))
            rc = smt_parse_int_arg(o, v, 1, 100000000, &n, &err), i++;
        else if (!strcmp(o, "--beam"))
            rc = smt_parse_int_arg(o, v, 1, NMT_MAX_K, &beam, &err), i++;
        else if (!strcmp(o, "--threads"))
            rc = smt_parse_int_arg(o, v, 0, 4096, &threads, &err), i++;
        else {
            fprintf(stderr, "bench_nmt: unknown option '%s'\n", o);
            usage(stderr);
            return 2;
        }
        if (rc) {
            fprintf(stderr, "bench_nmt: %s\n", err.msg);
            return 2;
        }
    }
    if (load_only && !model) {
        fprintf(stderr, "bench_nmt: --load needs --model\n");
        return 2;
    }
    if (load_only)
        return bench_load(model);
    if (cpu_out)
        bench_cpu_outlayer(quick);
    bench_gpu_outlayer();
    if (model && bench_load(model))
        return 1;
    if (model && src && tgt)
        bench_words(model, src, tgt, n, beam, (unsigned)threads);
    if (model && src && nbest && bench_nbest(model, src, nbest, n, (unsigned)threads))
        return 1;
    int rc = smt_close_output(stdout, "standard output", &err);
    if (rc)
        fprintf(stderr, "bench_nmt: %s\n", smt_err_text(&err, rc));
    return rc ? 1 : 0;
}
