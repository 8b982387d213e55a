/* glm — build a gLM binary from an ARPA file, and score text with KenLM query's output.
 *   glm build model.arpa model.glm [-K 31] [--progress]
 *   glm query [-v summary|sentence|word] [-n] [-b] [-l lazy|populate|read|parallel]
 *             [--threads N] [--gpu|--ref] [--verify] [--mmap]
 *             [--no-index] model.glm|model.arpa
 *   glm info model.glm [--verify]
 * Every number on the command line is parsed strictly (smt_num.h); --help anywhere prints the usage
 * on stdout. Standard output is checked (flushed and closed) before a command reports success.
 * Exit codes: 0 ok, 1 bad input or file (or a failed write), 2 usage. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist.h"
#include "glm.h"
#include "smt_num.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_progress.h"
#include "smt_threads.h"

static void usage(FILE *f)
{
    fprintf(f,
            "usage:\n"
            "  glm build [trie|probing] model.arpa out [-K N] [-q N [-b M]] [-p MULT] [-u log10p]\n"
            "            [-i] [-S SIZE] [-T DIR] [--progress]\n"
            "      binarize an ARPA file: glm's B-tree trie (.glm; node size K >= 3, default\n"
            "      %d), or with 'probing' KenLM's probing binary (the bytes build_binary\n"
            "      writes: KenLM reads it too; glm's fastest CPU layout, the largest file;\n"
            "      built in its tables, the memory KenLM's build takes; the trie's build\n"
            "      sorts its n-grams on disk, its levels too past a quarter of -S).\n"
            "      KenLM's build_binary words: -q/-b (trie: probabilities and backoffs\n"
            "      quantized to N and M bits, 1..25, M defaults to N, KenLM's binning),\n"
            "      -p (probing: buckets per entry, default 1.5), -u (<unk>'s log10 p when\n"
            "      missing, default -100), -i (positive log10 p read as 0),\n"
            "      -S (trie: the memory for sorting the n-grams and for finished levels,\n"
            "      half each and at most 64M each, past which they go to temporary\n"
            "      files; a level is laid out in memory when it fits in a quarter, else\n"
            "      sorted on disk too; a number with a unit b K M G T P E, or %% of the\n"
            "      physical memory, default unit K, default 80%%), -T (trie: the temporary\n"
            "      files' folder, default the output's); -a -s -v -w -r are refused, each\n"
            "      saying why\n"
            "  glm query [-v summary|sentence|word] [-n] [-b] [-l lazy|populate|read|parallel]\n"
            "            [--threads N] [--gpu | --ref] [--verify] [--mmap] [--no-index]\n"
            "            [-input-file|--input-file FILE] [--resume] [--parts-dir DIR]\n"
            "            [--chunk-bytes N] model.glm|model.arpa [< text]\n"
            "      KenLM query's output: per word 'word=id length log10p', per line 'Total: x OOV: "
            "n',\n"
            "      then perplexities. -n: no <s> context and no </s>. One thread unless --threads.\n"
            "      An ARPA model is binarized first (into $TMPDIR, removed after loading).\n"
            "      -b: print (and flush) each line's scores as soon as it is read.\n"
            "      -l: KenLM's load methods: lazy/populate map the file (populate, the\n"
            "      default, reads it in at once), read/parallel copy it into 2 MB pages\n"
            "      (--mmap is -l lazy).\n"
            "      -input-file: the text from FILE instead of standard input.\n"
            "      Started by mpirun or srun with N ranks, the text is scored in chunks by the\n"
            "      ranks and the output is one process's, summary included (docs/scale.md);\n"
            "      --resume, --parts-dir, --chunk-bytes as fastsmt's -resume, -parts-dir, -chunk-bytes.\n"
            "  glm info model.glm [--verify]\n"
            "ARPA files and text may be plain or gzip, xz, bzip2 or zstd (told by their first bytes).\n"
            "exit codes: 0 ok, 1 bad input or file, 2 usage\n",
            GLM_DEFAULT_K);
}

#define MAX_THREADS 4096

/* A flag's value: the next argument, or NULL when the flag is the last one. */
static const char *flag_value(int argc, char **argv, int *i)
{
    return *i + 1 < argc ? argv[++*i] : NULL;
}

/* Flushes and closes standard output; a failed write (a full disk, a closed pipe) is an error, so
 * that lost output never reads as success. Returns 0 or 1 (the exit code). */
static int close_stdout(const char *cmd)
{
    smt_err e;
    int rc = smt_close_output(stdout, "standard output", &e);
    if (rc)
        fprintf(stderr, "glm %s: writing the output failed: %s\n", cmd, smt_err_text(&e, rc));
    return rc ? 1 : 0;
}

/* build_binary -S's size (GNU sort's): a non-negative decimal number, then at most one unit:
 * b, K (k), M, G, T, P, E (powers of 1024; none: K) or % of the physical memory. 0, or -1 when
 * s is not one or the size is 0 or beyond 2^64. */
static int parse_size(const char *s, uint64_t *out)
{
    static const char units[] = "bKMGTPE";
    size_t n = s ? strlen(s) : 0;
    if (!n)
        return -1;
    char u = s[n - 1];
    double scale = 1024.0;
    if (u == '%') {
        uint64_t phys = smt_phys_memory();
        if (!phys)
            return -1;
        scale = (double)phys / 100.0;
        n--;
    } else if (u == 'k' || (strchr(units, u) && u)) {
        scale = 1.0;
        for (const char *p = units; *p != (u == 'k' ? 'K' : u); p++)
            scale *= 1024.0;
        n--;
    }
    double v;
    if (smt_parse_double(s, n, 0.0, 1e30, 0, &v))
        return -1;
    v *= scale;
    if (!(v >= 1.0) || v >= 18446744073709551616.0)
        return -1;
    *out = (uint64_t)v;
    return 0;
}

static int cmd_build(int argc, char **argv)
{
    const char *in = NULL, *out = NULL;
    glm_build_options opt = {.K = GLM_DEFAULT_K, .progress = 0, .warn = stderr};
    /* the words that are not options or their values: three of them make the first a type */
    int positionals = 0, typed = 0, backoff_set = 0, k_set = 0, p_set = 0;
    for (int i = 0; i < argc; i++) {
        static const char *const valued[] = {"-K", "-u", "-q", "-b", "-a", "-p", "-w", "-T", "-S",
                                             "-r"};
        int takes = 0;
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            takes |= strcmp(argv[i], valued[k]) == 0;
        if (takes)
            i++;
        else if (argv[i][0] != '-' || !argv[i][1])
            positionals++;
    }
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "-K") == 0) {
            int K;
            smt_err e;
            if (smt_parse_int_arg("-K", flag_value(argc, argv, &i), GLM_MIN_K, GLM_MAX_K, &K, &e)) {
                fprintf(stderr, "glm build: %s\n", e.msg);
                return 2;
            }
            opt.K = (uint32_t)K;
            k_set = 1;
        } else if (strcmp(argv[i], "-p") == 0) { /* build_binary -p: probing's space multiplier */
            double p;
            smt_err e;
            if (smt_parse_double_arg("-p", flag_value(argc, argv, &i), 1.0000001, 1000.0, &p,
                                     &e)) {
                fprintf(stderr, "glm build: %s (the multiplier must be above 1)\n", e.msg);
                return 2;
            }
            opt.probing_multiplier = (float)p;
            p_set = 1;
        } else if (strcmp(argv[i], "-S") == 0) {
            const char *v = flag_value(argc, argv, &i);
            if (parse_size(v, &opt.sort_memory)) {
                fprintf(stderr, "glm build: -S: bad size '%s' (a number with an optional unit: "
                                "b K M G T P E, or %% of the physical memory; default unit K)\n",
                        v ? v : "");
                return 2;
            }
        } else if (strcmp(argv[i], "-T") == 0) {
            if (!(opt.temp_dir = flag_value(argc, argv, &i)) || !opt.temp_dir[0]) {
                fprintf(stderr, "glm build: -T: a folder for the temporary file is required\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--progress") == 0) {
            opt.progress = 1;
        } else if (strcmp(argv[i], "-u") == 0) { /* build_binary -u: <unk>'s log10 p if missing */
            smt_err e;
            double u;
            if (smt_parse_double_arg("-u", flag_value(argc, argv, &i), -1e30, 0, &u, &e)) {
                fprintf(stderr, "glm build: %s\n", e.msg);
                return 2;
            }
            opt.unk_given = 1;
            opt.unk_log10 = (float)u;
        } else if (strcmp(argv[i], "-i") == 0) { /* build_binary -i: positive log10 p read as 0 */
            opt.positive_to_zero = 1;
        } else if (strcmp(argv[i], "-q") == 0 || strcmp(argv[i], "-b") == 0) {
            /* build_binary -q N [-b M]: quantized to N (M, default N) bits, KenLM's 1..25 */
            const char *flag = argv[i];
            int bits, q = flag[1] == 'q';
            smt_err e;
            if (smt_parse_int_arg(flag, flag_value(argc, argv, &i), 1, GLM_MAX_QUANT_BITS, &bits,
                                  &e)) {
                fprintf(stderr, "glm build: %s (KenLM quantizes to 1..%d bits)\n", e.msg,
                        GLM_MAX_QUANT_BITS);
                return 2;
            }
            if (q) {
                opt.prob_bits = (uint32_t)bits;
                if (!backoff_set)
                    opt.backoff_bits = (uint32_t)bits;
            } else {
                opt.backoff_bits = (uint32_t)bits;
                backoff_set = 1;
            }
        } else if (argv[i][0] == '-' && argv[i][1]) {
            /* build_binary's other options, refused by what they would mean here */
            static const struct {
                const char *flag, *why;
            } refused[] = {
                {"-a", "-a compresses a KenLM trie's pointers; glm's B-tree has none to compress"},
                {"-s", "-s builds a model without <s> and </s>; glm refuses one"},
                {"-v", "-v leaves the vocabulary out; a glm file always has it"},
                {"-w", "-w chooses how KenLM writes its file; glm writes one way (temporary, fsync, "
                       "rename)"},
                {"-r", "-r adds rest costs from lower-order models (KenLM's rest probing); glm "
                       "reads such files but does not write them"},
            };
            for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
                if (strcmp(argv[i], refused[k].flag) == 0) {
                    fprintf(stderr, "glm build: %s: %s\n", argv[i], refused[k].why);
                    return 2;
                }
            fprintf(stderr, "glm build: unknown option %s\n", argv[i]);
            return 2;
        } else if (!in && !typed && positionals == 3 &&
                   (strcmp(argv[i], "trie") == 0 || strcmp(argv[i], "probing") == 0)) {
            typed = 1;
            /* build_binary's type word: 'probing' writes KenLM's probing binary, 'trie' glm's own
             * trie (a B-tree, the .glm; KenLM's bit-packed trie is read, never written) */
            opt.probing = strcmp(argv[i], "probing") == 0;
            if (!opt.probing)
                fprintf(stderr, "glm build: 'trie': glm's own trie, a B-tree (.glm)\n");
        } else if (!in) {
            in = argv[i];
        } else if (!out) {
            out = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!in || !out) {
        usage(stderr);
        return 2;
    }
    if (backoff_set && !opt.prob_bits) { /* build_binary's own refusal */
        fprintf(stderr, "glm build: -b: backoff quantization (-b) without probability "
                        "quantization (-q)\n");
        return 2;
    }
    if (p_set && !opt.probing) {
        fprintf(stderr, "glm build: -p: -p sizes a KenLM probing table; give 'probing' (glm "
                        "build writes its B-tree trie otherwise)\n");
        return 2;
    }
    if (k_set && opt.probing) {
        fprintf(stderr, "glm build: -K: -K sizes the B-tree's nodes; a probing binary has none\n");
        return 2;
    }
    smt_err e;
    glm_build_stats st;
    double t0 = smt_now();
    int rc = glm_build(in, out, &opt, &st, &e);
    if (rc) {
        fprintf(stderr, "glm build: %s\n", smt_err_text(&e, rc));
        return rc == SMT_ERR_ARG ? 2 : 1;
    }
    if (opt.probing)
        fprintf(stderr, "glm build: %s: KenLM probing binary, order %u, multiplier %g,", out,
                st.order, opt.probing_multiplier ? (double)opt.probing_multiplier : 1.5);
    else
        fprintf(stderr, "glm build: %s: order %u, K %u,", out, st.order, opt.K);
    if (opt.prob_bits)
        fprintf(stderr, " quantized %u/%u bits,", opt.prob_bits, opt.backoff_bits);
    for (unsigned k = 1; k <= st.order; k++)
        fprintf(stderr, " %llu", (unsigned long long)st.stored[k]);
    fprintf(stderr, " n-grams, %llu bytes,", (unsigned long long)st.file_size);
    if (st.temp_bytes)
        fprintf(stderr, " %llu through a temporary file (-S),", (unsigned long long)st.temp_bytes);
    fprintf(stderr, " %.2f s\n", smt_now() - t0);
    return 0;
}

/* A query over MPI ranks (dist.h): output 0 the text, output 1 the chunk's addends. */
typedef struct gq_dist {
    const glm_model *m;
    const glm_query_options *opt;
    glm_query_stats total; /* rank 0: the addends of every chunk, in order */
} gq_dist;

#define SUMS_MAGIC "glmsums1"

static int gq_process(void *ctx, smt_lines *in, FILE **outs, uint64_t *words, int *complete,
                      smt_err *err)
{
    gq_dist *d = ctx;
    *complete = 0;
    glm_query_sums s = {0};
    glm_query_stats st;
    int rc = glm_query_lines(d->m, in, outs[0], d->opt, &s, &st, err);
    if (!rc) {
        *words = st.tokens - (d->opt->null_context ? 0 : st.lines);
        uint64_t h[3] = {s.n_lines, s.n_oov, s.tokens};
        errno = 0;
        if (fwrite(SUMS_MAGIC, 1, 8, outs[1]) != 8 || fwrite(h, sizeof h, 1, outs[1]) != 1 ||
            (s.n_lines && fwrite(s.line_totals, sizeof(float), s.n_lines, outs[1]) != s.n_lines) ||
            (s.n_oov && fwrite(s.oov_probs, sizeof(float), s.n_oov, outs[1]) != s.n_oov))
            rc = smt_err_errno(err, SMT_ERR_IO, errno ? errno : EIO, "writing a part failed");
    }
    glm_query_sums_free(&s);
    return rc;
}

static int gq_absorb(void *ctx, int out, const char *data, size_t len, smt_err *err)
{
    gq_dist *d = ctx;
    (void)out;
    uint64_t h[3];
    if (len < 8 + sizeof h || memcmp(data, SUMS_MAGIC, 8))
        return smt_err_set(err, SMT_ERR_CORRUPT, "a chunk's sums are damaged (no %s header)",
                           SUMS_MAGIC);
    memcpy(h, data + 8, sizeof h);
    if (h[0] > len || h[1] > len || len != 8 + sizeof h + 4 * (h[0] + h[1]))
        return smt_err_set(err, SMT_ERR_CORRUPT, "a chunk's sums are damaged (sizes)");
    glm_query_sums s = {0};
    s.n_lines = h[0];
    s.n_oov = h[1];
    s.tokens = h[2];
    s.line_totals = malloc(4 * (h[0] + 1));
    s.oov_probs = malloc(4 * (h[1] + 1));
    if (!s.line_totals || !s.oov_probs) {
        glm_query_sums_free(&s);
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    memcpy(s.line_totals, data + 8 + sizeof h, 4 * h[0]);
    memcpy(s.oov_probs, data + 8 + sizeof h + 4 * h[0], 4 * h[1]);
    glm_query_stats_add(&d->total, &s);
    glm_query_sums_free(&s);
    return 0;
}

static int gq_finish(void *ctx, FILE *out, smt_err *err)
{
    gq_dist *d = ctx;
    return glm_query_summary(out, &d->total, err);
}

static int g_rank, g_size, g_collective;

static int cmd_query(int argc, char **argv)
{
    const char *input = "-", *parts = NULL;
    int resume = 0;
    long long chunk = 0;
    smt_buf fp = {0}; /* the flags the output depends on (--resume checks them) */
    glm_query_options opt = {GLM_VERBOSE_WORD, 0, 1, GLM_PATH_FAST, 0};
    const char *model = NULL;
    unsigned flags = GLM_OPEN_DEFAULT | GLM_OPEN_INDEX;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-v") == 0) {
            const char *v = flag_value(argc, argv, &i);
            if (!v) {
                fprintf(stderr, "glm query: -v: a value is missing\n");
                return 2;
            } else if (strcmp(v, "summary") == 0)
                opt.verbosity = GLM_VERBOSE_SUMMARY;
            else if (strcmp(v, "sentence") == 0)
                opt.verbosity = GLM_VERBOSE_SENTENCE;
            else if (strcmp(v, "word") == 0)
                opt.verbosity = GLM_VERBOSE_WORD;
            else {
                fprintf(stderr, "glm query: -v wants summary, sentence or word\n");
                return 2;
            }
        } else if (strcmp(a, "-n") == 0) {
            opt.null_context = 1;
        } else if (strcmp(a, "-b") == 0) {
            opt.flush_lines = 1;
        } else if (strcmp(a, "-l") == 0) { /* KenLM's load methods */
            const char *l = flag_value(argc, argv, &i);
            flags &= ~(unsigned)(GLM_OPEN_HUGE | GLM_OPEN_POPULATE);
            if (!l) {
                fprintf(stderr, "glm query: -l: a value is missing\n");
                return 2;
            } else if (strcmp(l, "read") == 0 || strcmp(l, "parallel") == 0)
                flags |= GLM_OPEN_HUGE; /* a copy in memory (2 MB pages) */
            else if (strcmp(l, "populate") == 0)
                flags |= GLM_OPEN_POPULATE; /* the mapped file, read in at once: the default */
            else if (strcmp(l, "lazy") != 0) { /* lazy: the mapped file, paged in on use */
                fprintf(stderr, "glm query: -l wants lazy, populate, read or parallel\n");
                return 2;
            }
        } else if (strcmp(a, "--threads") == 0) {
            int t;
            smt_err e;
            if (smt_parse_int_arg("--threads", flag_value(argc, argv, &i), 0, MAX_THREADS, &t,
                                  &e)) {
                fprintf(stderr, "glm query: %s (0: all CPUs)\n", e.msg);
                return 2;
            }
            opt.threads = (unsigned)t;
        } else if (strcmp(a, "--gpu") == 0) {
            opt.path = GLM_PATH_GPU;
        } else if (strcmp(a, "--ref") == 0) {
            opt.path = GLM_PATH_REF;
        } else if (strcmp(a, "--verify") == 0) {
            flags |= GLM_OPEN_VERIFY;
        } else if (strcmp(a, "--mmap") == 0) {
            flags &= ~(unsigned)(GLM_OPEN_HUGE | GLM_OPEN_POPULATE);
        } else if (strcmp(a, "--no-index") == 0) {
            flags &= ~(unsigned)GLM_OPEN_INDEX;
        } else if (strcmp(a, "-input-file") == 0 || strcmp(a, "--input-file") == 0) {
            if (!(input = flag_value(argc, argv, &i))) {
                fprintf(stderr, "glm query: %s needs a file\n", a);
                return 2;
            }
        } else if (strcmp(a, "--resume") == 0 || strcmp(a, "-resume") == 0) {
            resume = 1;
        } else if (strcmp(a, "--parts-dir") == 0 || strcmp(a, "-parts-dir") == 0) {
            if (!(parts = flag_value(argc, argv, &i))) {
                fprintf(stderr, "glm query: %s needs a folder\n", a);
                return 2;
            }
        } else if (strcmp(a, "--chunk-bytes") == 0 || strcmp(a, "-chunk-bytes") == 0) {
            smt_err e;
            if (smt_parse_ll_arg(a, flag_value(argc, argv, &i), 1, 1ll << 40, &chunk, &e)) {
                fprintf(stderr, "glm query: %s\n", e.msg);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "glm query: unknown option %s\n", a);
            return 2;
        } else if (!model) {
            model = a;
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!model) {
        usage(stderr);
        return 2;
    }
    int dist = g_size > 1 || resume;
    if (dist && !dist_available()) {
        fprintf(stderr, "glm query: --resume: this build has no MPI (docs/scale.md)\n");
        return 2;
    }
    if (!dist && (parts || chunk)) {
        fprintf(stderr, "glm query: %s: only for a query over MPI ranks (mpirun, srun)\n",
                parts ? "--parts-dir" : "--chunk-bytes");
        return 2;
    }
    if (dist && opt.flush_lines) {
        fprintf(stderr, "glm query: -b over MPI ranks: lines are answered chunk by chunk, not "
                        "one by one; run -b in one process\n");
        return 2;
    }
    smt_err e;
    glm_model *m;
    glm_build_options bopt = {.K = GLM_DEFAULT_K, .progress = 0, .warn = stderr}; /* an ARPA file: binarized first */
    int rc = glm_load(&m, model, flags, &bopt, &e);
    if (rc) {
        fprintf(stderr, "glm query: %s\n", smt_err_text(&e, rc));
        return 1;
    }
    if (dist) {
        gq_dist d;
        memset(&d, 0, sizeof d);
        d.m = m;
        d.opt = &opt;
        dist_job job;
        memset(&job, 0, sizeof job);
        job.tool = "glm query";
        job.input = input;
        job.n_out = 2;
        job.out_kind[0] = DIST_OUT_STDOUT;
        job.out_kind[1] = DIST_OUT_PRIVATE;
        smt_buf_printf(&fp, "v%d n%d\n", opt.verbosity, opt.null_context);
        job.fingerprint = fp.data;
        job.files = &model;
        job.n_files = 1;
        job.parts_dir = parts;
        job.resume = resume;
        job.chunk_bytes = (uint64_t)chunk;
        job.stream_chunk_bytes = 1u << 20;
        job.report = 1;
        job.process = gq_process;
        job.absorb = gq_absorb;
        job.finish = gq_finish;
        job.ctx = &d;
        g_collective = 1;
        rc = dist_run(&job, &e);
        smt_buf_free(&fp);
    } else {
        /* smt_lines hands a pipe's lines over as they arrive, so -b answers each line at once */
        smt_lines *in = NULL;
        rc = smt_lines_open(&in, input, 0, &e);
        if (!rc)
            rc = glm_query_lines(m, in, stdout, &opt, NULL, NULL, &e);
        smt_lines_close(in);
    }
    glm_close(m);
    if (rc) {
        if (g_rank == 0) /* rank 0 says what failed, once */
            fprintf(stderr, "glm query: %s\n", smt_err_text(&e, rc));
        return 1;
    }
    return close_stdout("query");
}

static int cmd_info(int argc, char **argv)
{
    const char *model = NULL;
    unsigned flags = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--verify") == 0)
            flags |= GLM_OPEN_VERIFY;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "glm info: unknown option %s\n", argv[i]);
            return 2;
        } else if (model) {
            usage(stderr);
            return 2;
        } else
            model = argv[i];
    }
    if (!model) {
        usage(stderr);
        return 2;
    }
    smt_err e;
    glm_model *m;
    int rc = glm_open(&m, model, flags, &e);
    if (rc) {
        fprintf(stderr, "glm info: %s\n", smt_err_text(&e, rc));
        return 1;
    }
    printf("order\t%u\nK\t%u\nvocabulary\t%u\n", glm_order(m), glm_node_size(m), glm_vocab_size(m));
    printf("layout\t%s\n", glm_layout_name(m));
    unsigned qp, qb;
    if (glm_quantization(m, &qp, &qb))
        printf("quantized\t%u prob bits, %u backoff bits\n", qp, qb);
    else
        printf("quantized\tno\n");
    uint64_t total = 0;
    for (unsigned k = 1; k <= glm_order(m); k++) {
        printf("ngram %u\t%llu\n", k, (unsigned long long)glm_count(m, k));
        total += glm_count(m, k);
    }
    printf("bytes\t%llu\nbytes/ngram\t%.2f\n%s", (unsigned long long)glm_file_size(m),
           (double)glm_file_size(m) / (double)total, flags ? "checksums\tok\n" : "");
    glm_close(m);
    return close_stdout("info");
}

static int tool_main(int argc, char **argv);

int main(int argc, char **argv)
{
    smt_err e;
    if (dist_start(&argc, &argv, &g_rank, &g_size, &e)) {
        fprintf(stderr, "glm: %s\n", e.msg);
        return 2;
    }
    int rc = tool_main(argc, argv);
    dist_end(g_collective ? 0 : rc); /* an error before the ranks met ends them all */
    return rc;
}

static int tool_main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            usage(stdout);
            return close_stdout("--help");
        }
    if (g_size > 1 && strcmp(argv[1], "query") != 0) { /* N ranks would each write the model */
        if (g_rank == 0)
            fprintf(stderr, "glm %s: runs in one process; only glm query runs over MPI ranks\n",
                    argv[1]);
        return 2;
    }
    if (strcmp(argv[1], "build") == 0)
        return cmd_build(argc - 2, argv + 2);
    if (strcmp(argv[1], "query") == 0)
        return cmd_query(argc - 2, argv + 2);
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 2, argv + 2);
    fprintf(stderr, "glm: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
