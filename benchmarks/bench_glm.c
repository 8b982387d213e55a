/* bench_glm — speed of glm: build time and size, the perplexity task end to end (reference vs fast
 * path, 1 and 2 threads), n-gram queries/s against batch size and node size K, and the GPU with and
 * without host<->device copies. One machine-readable line per measurement:
 *   glm_bench <name> key=value ...
 * usage: bench_glm [--arpa big.arpa | --model big.glm] [--text sample.txt] [--karpa small.arpa]
 *                  [--out dir] [--reps N] [--quick] [-q N [-b M] | --probing]
 * The KenLM anchors (same files, same machine kind; ../shared/reference/anchors.md) are printed as
 * ratios for the model they were measured on, recognized by its n-gram count: the mono lm.5
 * (probing 4.4 M tokens/s single thread and 183.5 MB, trie 2.3 M tokens/s and 98.5 MB) and the
 * bible lm.5 (sizes only: probing 60.0 MB, trie 26.9 MB); any other model gets vs_kenlm=none or
 * size_vs_kenlm=none. A model's size is set beside the anchor of its own layout: a KenLM probing
 * binary against KenLM's probing size, a KenLM trie against the trie's, a .glm (floats or
 * quantized) against both; the anchors have no size for KenLM's -q/-a tries. Peak RSS is the
 * process's: run one --quick per model to compare models. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#ifdef FASTSMT_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "glm.h"
#include "glm_internal.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_io.h"
#include "smt_progress.h"
#include "smt_words.h"

/* KenLM's figures for the models of anchors.md, found by the model's total n-gram count (stored,
 * with the suffixes KenLM adds); 0: not measured. */
typedef struct kenlm_anchor {
    uint64_t ngrams;
    double probing_tps, trie_tps, probing_bytes, trie_bytes;
} kenlm_anchor;
static const kenlm_anchor known_anchors[] = {
    {7796802, 4.4e6, 2.3e6, 183.5e6, 98.5e6}, /* mono lm.5, on the mono sample */
    {2764727, 0, 0, 60.0e6, 26.9e6},          /* bible lm.5 */
};

static const kenlm_anchor *anchor_for(uint64_t ngrams)
{
    for (size_t i = 0; i < sizeof known_anchors / sizeof known_anchors[0]; i++)
        if (known_anchors[i].ngrams == ngrams)
            return &known_anchors[i];
    return NULL;
}

static uint64_t model_ngrams(const glm_model *m)
{
    uint64_t n = 0;
    for (unsigned k = 1; k <= glm_order(m); k++)
        n += glm_count(m, k);
    return n;
}

static long peak_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

static double cpu_s(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (double)u.ru_utime.tv_sec + u.ru_utime.tv_usec * 1e-6 + (double)u.ru_stime.tv_sec +
           u.ru_stime.tv_usec * 1e-6;
}

static glm_model *open_model(const char *path, unsigned flags)
{
    glm_model *m;
    smt_err e;
    int rc = glm_open(&m, path, flags, &e);
    if (rc) {
        fprintf(stderr, "bench_glm: %s\n", smt_err_text(&e, rc));
        exit(1);
    }
    return m;
}

static uint32_t quant_p, quant_b; /* -q/-b: the models built are quantized */
static int build_probing;          /* --probing: --arpa builds KenLM's probing binary */

static void build(const char *arpa, const char *out, uint32_t K, const char *name, int anchors)
{
    glm_build_options opt = {.K = K,
                             .progress = 0,
                             .warn = stderr,
                             .prob_bits = quant_p,
                             .backoff_bits = quant_b,
                             .probing = build_probing};
    glm_build_stats st;
    smt_err e;
    double t0 = smt_now();
    int rc = glm_build(arpa, out, &opt, &st, &e);
    if (rc) {
        fprintf(stderr, "bench_glm: %s\n", smt_err_text(&e, rc));
        exit(1);
    }
    double t = smt_now() - t0;
    uint64_t n = 0;
    for (unsigned k = 1; k <= st.order; k++)
        n += st.stored[k];
    printf("glm_bench build model=%s layout=%s K=%u quant=%u/%u ngrams=%llu seconds=%.3f "
           "bytes=%llu bytes_per_ngram=%.2f",
           name, build_probing ? "kenlm-probing" : "glm", build_probing ? 0 : K, quant_p, quant_b,
           (unsigned long long)n, t, (unsigned long long)st.file_size,
           (double)st.file_size / (double)n);
    const kenlm_anchor *A = anchor_for(n);
    if (anchors && A) /* the peak is this process's */
        printf(" size_vs_kenlm_trie=%.3f size_vs_kenlm_probing=%.3f peak_rss_kb=%ld",
               (double)st.file_size / A->trie_bytes, (double)st.file_size / A->probing_bytes,
               peak_rss_kb());
    else if (anchors)
        printf(" size_vs_kenlm=none peak_rss_kb=%ld", peak_rss_kb());
    printf("\n");
    fflush(stdout);
}

static void perplexity(const glm_model *m, const char *text, int path, unsigned threads, int reps,
                       const char *extra)
{
    FILE *null = fopen("/dev/null", "w");
    double best = 1e30, best_cpu = 1e30;
    glm_query_stats st;
    for (int r = 0; r < reps; r++) {
        glm_query_options opt = {GLM_VERBOSE_SUMMARY, 0, threads, path, 0};
        smt_err e;
        double t0 = smt_now(), c0 = cpu_s();
        smt_lines *in = NULL;
        int rc = smt_lines_open(&in, text, 0, &e);
        if (!rc)
            rc = glm_query_lines(m, in, null, &opt, NULL, &st, &e);
        smt_lines_close(in);
        double t = smt_now() - t0, c = cpu_s() - c0;
        if (rc) {
            printf("glm_bench perplexity path=%s error=\"%s\"\n", path == GLM_PATH_GPU ? "gpu" : "cpu",
                   smt_err_text(&e, rc));
            fclose(null);
            return;
        }
        if (t < best)
            best = t, best_cpu = c;
    }
    fclose(null);
    double tps = (double)st.tokens / best, tpc = (double)st.tokens / best_cpu;
    const char *pn = path == GLM_PATH_REF ? "reference" : path == GLM_PATH_GPU ? "gpu" : "fast";
    /* the run with the best wall time; the CPU-time rate is the fair one on a loaded machine
     * (single thread: wall minus time spent waiting for a core) */
    const kenlm_anchor *A = anchor_for(model_ngrams(m));
    char vs[128] = " vs_kenlm=none";
    if (A && A->probing_tps > 0)
        snprintf(vs, sizeof vs,
                 " vs_kenlm_probing=%.2f vs_kenlm_probing_cpu=%.2f vs_kenlm_trie=%.2f",
                 tps / A->probing_tps, tpc / A->probing_tps, tps / A->trie_tps);
    printf("glm_bench perplexity path=%s threads=%u%s tokens=%llu oovs=%llu ppl_incl=%.16g "
           "ppl_excl=%.16g seconds=%.3f cpu_seconds=%.3f tokens_per_s=%.0f "
           "tokens_per_cpu_s=%.0f%s peak_rss_kb=%ld\n",
           pn, threads, extra, (unsigned long long)st.tokens, (unsigned long long)st.oovs,
           st.ppl_incl, st.ppl_excl, best, best_cpu, tps, tpc, vs, peak_rss_kb());
    fflush(stdout);
}

/* Rows (n, order) for every token of the text: its context inside its sentence, <s> first. */
static glm_word *text_rows(const glm_model *m, const char *text, size_t max, size_t *n_out)
{
    unsigned N = glm_order(m);
    glm_word *rows = malloc(max * N * sizeof *rows);
    smt_lines *in;
    smt_err e;
    if (!rows || smt_lines_open(&in, text, 0, &e)) {
        fprintf(stderr, "bench_glm: cannot read %s\n", text);
        exit(1);
    }
    size_t n = 0;
    char *line;
    size_t len;
    glm_word hist[64];
    while (n < max && smt_lines_next(in, &line, &len, &e) > 0) {
        unsigned nh = 0;
        hist[nh++] = glm_bos(m);
        const char *pos = line, *end = line + len, *tok;
        size_t tl;
        for (int more = 1; more && n < max;) {
            more = smt_word_next(&pos, end, SMT_WS_SPACE, &tok, &tl); /* as glm query splits */
            glm_word w = more ? glm_index(m, tok, tl) : glm_eos(m);
            glm_word *row = rows + n++ * N;
            for (unsigned i = 0; i + 1 < N; i++) {
                int src = (int)nh - (int)(N - 1) + (int)i;
                row[i] = src >= 0 ? hist[src] : GLM_NONE;
            }
            row[N - 1] = w;
            if (nh == 64) {
                memmove(hist, hist + 32, 32 * sizeof *hist);
                nh = 32;
            }
            hist[nh++] = w;
        }
    }
    smt_lines_close(in);
    *n_out = n;
    return rows;
}

static void rows_speed(const glm_model *m, const glm_word *rows, size_t n, size_t batch, int ref,
                       unsigned threads, const char *extra)
{
    unsigned N = glm_order(m);
    float *prob = malloc(n * sizeof *prob);
    uint8_t *len = malloc(n);
    smt_err e;
    double best = 1e30;
    for (int rep = 0; rep < 2; rep++) {
        double t0 = smt_now();
        for (size_t r = 0; r < n; r += batch) {
            size_t b = r + batch <= n ? batch : n - r;
            if (ref)
                glm_score_rows_ref(m, rows + r * N, b, prob + r, len + r, &e);
            else
                glm_score_rows(m, rows + r * N, b, prob + r, len + r, threads, &e);
        }
        double t = smt_now() - t0;
        if (t < best)
            best = t;
    }
    printf("glm_bench rows path=%s threads=%u batch=%zu queries=%zu seconds=%.3f "
           "queries_per_s=%.0f%s\n",
           ref ? "reference" : "fast", threads, batch, n, best, (double)n / best, extra);
    fflush(stdout);
    free(prob);
    free(len);
}

/* --states: decoder-like queries (state, next word) for every token of the text, the states
 * reached by walking each sentence from <s> with glm_score (</s> included); shuffled unless
 * keep_order (a decoder's batch mixes the hypotheses of many partial translations). */
static size_t text_states(const glm_model *m, const char *text, size_t max, int keep_order,
                          glm_state **in_out, glm_word **w_out)
{
    glm_state *in = malloc(max * sizeof *in);
    glm_word *w = malloc(max * sizeof *w);
    smt_lines *lr;
    smt_err e;
    if (!in || !w || smt_lines_open(&lr, text, 0, &e)) {
        fprintf(stderr, "bench_glm: cannot read %s\n", text);
        exit(1);
    }
    size_t n = 0;
    char *line;
    size_t len;
    while (n < max && smt_lines_next(lr, &line, &len, &e) > 0) {
        glm_state st;
        glm_state_begin(m, &st);
        const char *pos = line, *end = line + len, *tok;
        size_t tl;
        for (int more = 1; more && n < max;) {
            more = smt_word_next(&pos, end, SMT_WS_SPACE, &tok, &tl);
            glm_word x = more ? glm_index(m, tok, tl) : glm_eos(m);
            in[n] = st;
            w[n++] = x;
            glm_score(m, &st, x, &st, NULL);
        }
    }
    smt_lines_close(lr);
    uint64_t r = 0x2545F4914F6CDD1Dull;
    for (size_t i = n; !keep_order && i > 1; i--) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t j = (size_t)(r % i);
        glm_state ts = in[i - 1];
        in[i - 1] = in[j];
        in[j] = ts;
        glm_word tw = w[i - 1];
        w[i - 1] = w[j];
        w[j] = tw;
    }
    *in_out = in;
    *w_out = w;
    return n;
}

/* path 0: a loop of glm_score; 1: glm_score_states; 2: glm_gpu_score_states (g). Every query
 * scored in batches of `batch`; returns wall seconds, *cpu the process CPU seconds. */
static double states_run(const glm_model *m, glm_gpu *g, int path, const glm_state *in,
                         const glm_word *w, size_t n, size_t batch, float *prob, glm_state *out,
                         uint8_t *len, double *cpu)
{
    smt_err e;
    double c0 = cpu_s(), t0 = smt_now();
    for (size_t r = 0; r < n; r += batch) {
        size_t b = r + batch <= n ? batch : n - r;
        if (path == 0) {
            for (size_t i = r; i < r + b; i++) {
                unsigned l;
                prob[i] = glm_score(m, &in[i], w[i], &out[i], &l);
                len[i] = (uint8_t)l;
            }
        } else {
            int rc = path == 1 ? glm_score_states(m, in + r, w + r, b, prob + r, out + r, len + r, &e)
                               : glm_gpu_score_states(g, in + r, w + r, b, prob + r, out + r,
                                                      len + r, &e);
            if (rc) {
                fprintf(stderr, "bench_glm: %s\n", smt_err_text(&e, rc));
                exit(1);
            }
        }
    }
    double t = smt_now() - t0;
    *cpu = cpu_s() - c0;
    return t;
}

/* Best of reps (the paths alternate, so all see the same load), one line per path and batch size
 * with the least wall and the least CPU time (the process's, user + system) over the reps; the
 * batch path's line carries its speed-ups over the loop (wall and CPU; on a loaded machine the CPU
 * time is the steadier); every run's results are checked against the loop's. */
static void states_speed(const glm_model *m, const char *text, int reps, int keep_order)
{
    glm_state *in;
    glm_word *w;
    size_t n = text_states(m, text, 1u << 19, keep_order, &in, &w);
    float *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1);
    glm_state *o0 = calloc(n, sizeof *o0), *o1 = calloc(n, sizeof *o1);
    uint8_t *l0 = malloc(n), *l1 = malloc(n);
    glm_gpu *g = NULL;
    smt_err e;
    int gpu = glm_gpu_available() && glm_node_size(m) > 0 && glm_gpu_create(&g, m, &e) == 0;
    const size_t batches[] = {1, 2, 4, 16, 64, 256, 4096};
    for (size_t bi = 0; bi < sizeof batches / sizeof *batches; bi++) {
        size_t batch = batches[bi];
        double best[3] = {1e30, 1e30, 1e30}, bcpu[3] = {1e30, 1e30, 1e30};
        for (int rep = 0; rep < reps; rep++)
            for (int path = 0; path < 2 + gpu; path++) {
                double c, t = states_run(m, g, path, in, w, n, batch, path ? p1 : p0,
                                         path ? o1 : o0, path ? l1 : l0, &c);
                if (t < best[path]) /* best wall and best CPU time, each its own minimum */
                    best[path] = t;
                if (c < bcpu[path])
                    bcpu[path] = c;
                if (path && (memcmp(p0, p1, n * sizeof *p0) || memcmp(l0, l1, n))) {
                    fprintf(stderr, "bench_glm: path %d differs from glm_score\n", path);
                    exit(1);
                }
            }
        static const char *names[3] = {"loop", "batch", "gpu"};
        for (int path = 0; path < 2 + gpu; path++) {
            printf("glm_bench states path=%s order=%s batch=%zu queries=%zu reps=%d wall_s=%.4f "
                   "cpu_s=%.4f queries_per_s=%.0f",
                   names[path], keep_order ? "text" : "shuffled", batch, n, reps, best[path],
                   bcpu[path], (double)n / best[path]);
            if (path)
                printf(" speedup_vs_loop=%.2f cpu_speedup_vs_loop=%.2f", best[0] / best[path],
                       bcpu[0] / bcpu[path]);
            printf("\n");
        }
        fflush(stdout);
    }
    glm_gpu_free(g);
    free(in), free(w), free(p0), free(p1), free(o0), free(o1), free(l0), free(l1);
}

#ifdef FASTSMT_HAVE_CUDA
static void gpu_speed(const glm_model *m, const glm_word *rows, size_t n)
{
    glm_gpu *g;
    smt_err e;
    int rc = glm_gpu_create(&g, m, &e);
    if (rc) {
        printf("glm_bench gpu skipped=\"%s\"\n", smt_err_text(&e, rc));
        return;
    }
    unsigned N = glm_order(m);
    float *prob = malloc(n * sizeof *prob);
    uint8_t *len = malloc(n);
    glm_word *d_rows;
    float *d_prob;
    uint8_t *d_len;
    cudaMalloc((void **)&d_rows, n * N * sizeof *d_rows);
    cudaMalloc((void **)&d_prob, n * sizeof *d_prob);
    cudaMalloc((void **)&d_len, n);
    cudaMemcpy(d_rows, rows, n * N * sizeof *d_rows, cudaMemcpyHostToDevice);
    const size_t batches[4] = {1024, 16384, 262144, n};
    for (int bi = 0; bi < 4; bi++) {
        size_t batch = batches[bi] < n ? batches[bi] : n;
        for (int copies = 1; copies >= 0; copies--) {
            double best = 1e30;
            for (int rep = 0; rep < 3; rep++) {
                double t0 = smt_now();
                for (size_t r = 0; r + batch <= n; r += batch) {
                    if (copies)
                        rc = glm_gpu_score_rows(g, rows + r * N, batch, prob + r, len + r, &e);
                    else
                        rc = glm_gpu_score_rows_device(g, d_rows + r * N, batch, d_prob + r,
                                                       d_len + r, &e);
                }
                double t = smt_now() - t0;
                if (t < best)
                    best = t;
            }
            size_t done = (n / batch) * batch;
            printf("glm_bench gpu copies=%d batch=%zu queries=%zu seconds=%.4f queries_per_s=%.0f "
                   "vs_target_1.5G=%.3f%s\n",
                   copies, batch, done, best, (double)done / best, (double)done / best / 1.5e9,
                   rc ? " error=1" : "");
        }
    }
    /* lanes per row (the kernel's tile size; 1 = a thread per row), whole batch, no copies */
    const unsigned lanes[] = {1, 4, 8, 16, 32};
    for (int li = 0; li < 5; li++) {
        rc = glm_gpu_set_lanes(g, lanes[li], &e);
        double best = 1e30;
        for (int rep = 0; rep < 5 && !rc; rep++) {
            double t0 = smt_now();
            rc = glm_gpu_score_rows_device(g, d_rows, n, d_prob, d_len, &e);
            double t = smt_now() - t0;
            if (t < best)
                best = t;
        }
        printf("glm_bench gpu copies=0 lanes=%u batch=%zu queries=%zu seconds=%.5f "
               "queries_per_s=%.0f vs_target_1.5G=%.3f%s\n",
               lanes[li], n, n, best, (double)n / best, (double)n / best / 1.5e9,
               rc ? " error=1" : "");
    }
    cudaFree(d_rows), cudaFree(d_prob), cudaFree(d_len);
    free(prob), free(len);
    glm_gpu_free(g);
}
#else
static void gpu_speed(const glm_model *m, const glm_word *rows, size_t n)
{
    (void)m, (void)rows, (void)n;
    printf("glm_bench gpu skipped=\"built without CUDA\"\n");
}
#endif

static void usage(FILE *f)
{
    fprintf(f, "usage: bench_glm [--arpa big.arpa | --model big.glm] [--text sample] "
               "[--karpa small.arpa] [--out dir] [--reps N] [--quick | --gpu-only | --states] [--probing] "
               "[-q N [-b M]]\n"
               "  --arpa: build time and size (then the model measured is the one built;\n"
               "    --probing: KenLM's probing binary, glm build probing)\n"
               "  -q/-b: the models built are quantized (glm build -q N -b M; M defaults to N)\n"
               "  --model with --text: the perplexity task, rows/s against batch size, the GPU\n"
               "  --states (with --model, --text): glm_score_states (and the GPU's) against a loop "
               "of glm_score,\n    decoder-like queries from walking the text, batches of 1 to "
               "4096, best of --reps\n"
               "  --karpa with --text: build and query speed for several node sizes K\n"
               "  one line per measurement on stdout: glm_bench <name> key=value ...\n");
}

/* Flushes and closes stdout: 0, or 1 with a message when a write failed. */
static int close_stdout(void)
{
    smt_err e;
    int rc = smt_close_output(stdout, "standard output", &e);
    if (rc)
        fprintf(stderr, "bench_glm: %s\n", smt_err_text(&e, rc));
    return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
    const char *arpa = NULL, *model = NULL, *text = NULL, *karpa = NULL, *outdir = "/tmp";
    int reps = 3, quick = 0, gpu_only = 0, states = 0, backoff_set = 0;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return close_stdout();
        }
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--arpa") == 0)
            arpa = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--model") == 0)
            model = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--text") == 0)
            text = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--karpa") == 0)
            karpa = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--out") == 0)
            outdir = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--gpu-only") == 0)
            gpu_only = 1;
        else if (strcmp(argv[i], "--states") == 0)
            states = 1;
        else if (strcmp(argv[i], "--probing") == 0)
            build_probing = 1;
        else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "-b") == 0) {
            const char *flag = argv[i];
            int bits;
            smt_err e;
            if (smt_parse_int_arg(flag, i + 1 < argc ? argv[++i] : NULL, 1, GLM_MAX_QUANT_BITS,
                                  &bits, &e)) {
                fprintf(stderr, "bench_glm: %s\n", e.msg);
                return 2;
            }
            if (flag[1] == 'q') {
                quant_p = (uint32_t)bits;
                if (!backoff_set)
                    quant_b = (uint32_t)bits;
            } else {
                quant_b = (uint32_t)bits;
                backoff_set = 1;
            }
        }
        else if (strcmp(argv[i], "--reps") == 0) {
            smt_err e;
            if (smt_parse_int_arg("--reps", i + 1 < argc ? argv[++i] : NULL, 1, 1000000, &reps,
                                  &e)) {
                fprintf(stderr, "bench_glm: %s\n", e.msg);
                return 2;
            }
        } else {
            fprintf(stderr, "bench_glm: unknown or incomplete option %s\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (build_probing && (quant_p || karpa || !arpa)) {
        fprintf(stderr, "bench_glm: --probing builds KenLM's probing binary from --arpa (no -q, "
                        "no --karpa)\n");
        return 2;
    }
    if (backoff_set && !quant_p) {
        fprintf(stderr, "bench_glm: -b without -q\n");
        return 2;
    }
    /* something to measure: a build, or a model (given or built) with a text */
    if (!arpa && !((model && text) || (karpa && text))) {
        fprintf(stderr, "bench_glm: nothing to measure: give --arpa, or --model/--arpa with "
                        "--text, or --karpa with --text\n");
        usage(stderr);
        return 2;
    }
    char path[4096];
    if (arpa) {
        snprintf(path, sizeof path, "%s/bench_glm.%s", outdir, build_probing ? "binary" : "glm");
        build(arpa, path, GLM_DEFAULT_K, arpa, 1);
        model = path;
    }
    if (model && text) {
        double t0 = smt_now();
        glm_model *m = open_model(model, GLM_OPEN_HUGE | GLM_OPEN_INDEX);
        double open_s = smt_now() - t0, bytes = (double)glm_file_size(m);
        const char *lay = glm_layout_name(m);
        unsigned qp, qb;
        glm_quantization(m, &qp, &qb);
        char vs[128]; /* the anchor of the model's own layout */
        const kenlm_anchor *A = anchor_for(model_ngrams(m));
        if (!A)
            snprintf(vs, sizeof vs, "size_vs_kenlm=none");
        else if (strcmp(lay, "glm") == 0)
            snprintf(vs, sizeof vs, "size_vs_kenlm_trie=%.3f size_vs_kenlm_probing=%.3f",
                     bytes / A->trie_bytes, bytes / A->probing_bytes);
        else if (strcmp(lay, "kenlm probing") == 0)
            snprintf(vs, sizeof vs, "size_vs_kenlm_probing=%.3f", bytes / A->probing_bytes);
        else if (strcmp(lay, "kenlm trie") == 0)
            snprintf(vs, sizeof vs, "size_vs_kenlm_trie=%.3f", bytes / A->trie_bytes);
        else
            snprintf(vs, sizeof vs, "size_vs_kenlm=none");
        printf("glm_bench open model=%s layout=\"%s\" quant=%u/%u flags=huge,index seconds=%.3f "
               "file_bytes=%llu index_bytes=%llu %s\n",
               model, lay, qp, qb, open_s, (unsigned long long)glm_file_size(m),
               (unsigned long long)glm_index_bytes(m), vs);
        if (states) { /* --states: glm_score_states against a loop of glm_score */
            states_speed(m, text, reps, 0);
            states_speed(m, text, reps, 1);
            glm_close(m);
            return close_stdout();
        }
        if (gpu_only) { /* --gpu-only: the GPU lines (and the CPU rows line to compare with) */
            size_t n;
            glm_word *rows = text_rows(m, text, 1u << 20, &n);
            rows_speed(m, rows, n, n, 0, 1, "");
            gpu_speed(m, rows, n);
            free(rows);
            glm_close(m);
            return close_stdout();
        }
        if (quick) { /* --quick: only the single-thread fast path, the issue-3 measurement */
            perplexity(m, text, GLM_PATH_FAST, 1, reps, " index=1");
            glm_close(m);
            return close_stdout();
        }
        perplexity(m, text, GLM_PATH_REF, 1, 1, "");
        perplexity(m, text, GLM_PATH_FAST, 1, reps, " index=1");
        perplexity(m, text, GLM_PATH_FAST, 2, reps, " index=1");
        glm_close(m);
        m = open_model(model, GLM_OPEN_HUGE);
        perplexity(m, text, GLM_PATH_FAST, 1, reps, " index=0");
        glm_close(m);
        m = open_model(model, GLM_OPEN_INDEX);
        printf("glm_bench note=\"mmap without 2 MB pages\"\n");
        perplexity(m, text, GLM_PATH_FAST, 1, reps, " index=1 mmap=1");
        glm_close(m);
        m = open_model(model, GLM_OPEN_HUGE | GLM_OPEN_INDEX);
        size_t n;
        glm_word *rows = text_rows(m, text, 1u << 20, &n);
        rows_speed(m, rows, n, n, 1, 1, "");
        for (size_t b = 1; b <= n; b *= 16)
            rows_speed(m, rows, n, b, 0, 1, "");
        rows_speed(m, rows, n, n, 0, 1, "");
        rows_speed(m, rows, n, n, 0, 2, "");
        gpu_speed(m, rows, n);
        free(rows);
        glm_close(m);
    }
    if (karpa && text) { /* node size K: build size/time and query speed */
        const uint32_t Ks[] = {3, 8, 17, 31, 64, 128};
        for (size_t i = 0; i < sizeof Ks / sizeof *Ks; i++) {
            snprintf(path, sizeof path, "%s/bench_glm_k%u.glm", outdir, Ks[i]);
            build(karpa, path, Ks[i], karpa, 0);
            glm_model *m = open_model(path, GLM_OPEN_HUGE | GLM_OPEN_INDEX);
            size_t n;
            glm_word *rows = text_rows(m, text, 1u << 19, &n);
            char extra[64];
            snprintf(extra, sizeof extra, " K=%u", Ks[i]);
            rows_speed(m, rows, n, 65536, 0, 1, extra);
            free(rows);
            glm_close(m);
            remove(path);
        }
    }
    return close_stdout();
}
