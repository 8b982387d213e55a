/* GPU tests of glm: the device's batch scores equal the CPU reference bit for bit (same floats
 * added in the same order), on a hand-made fixture with every row over its vocabulary and on the
 * bible lm.5 with the rows of dev.en. Without a device (or without CUDA in the build) the API must
 * say SMT_ERR_UNSUPPORTED and the comparisons skip. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glm.h"
#include "glm_internal.h"
#include "smt_buf.h"
#include "smt_lines.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(glm_gpu, .init = setup, .fini = teardown);

/* Why no device test can run here, said in the skip (ctest shows a program whose every test
 * skipped as "Skipped"); TU_SKIP_GPU fails the run instead when FASTSMT_REQUIRE_GPU is set (the GPU
 * machine). */
static const char *no_gpu_reason(void)
{
#ifdef FASTSMT_HAVE_CUDA
    return "no CUDA device visible to this process: the GPU comparisons did not run";
#else
    return "this build has no CUDA paths (FASTSMT_CUDA=OFF or no nvcc): the GPU comparisons did "
           "not run";
#endif
}

/* qp/qb: quantized to these bits (glm build -q qp -b qb), 0: floats */
static glm_model *build(char *arpa, uint32_t K, uint32_t qp, uint32_t qb)
{
    char *out = tu_join(dir, "m.glm");
    glm_build_options opt = {
        .K = K, .progress = -1, .warn = NULL, .prob_bits = qp, .backoff_bits = qb};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, 0, &e), 0, "%s", e.msg);
    free(out);
    free(arpa);
    return m;
}

/* GPU rows == CPU reference rows, bitwise, with every lane setting of the kernel. */
static void compare(glm_model *m, const glm_word *rows, size_t n)
{
    glm_gpu *g;
    smt_err e;
    cr_assert_eq(glm_gpu_create(&g, m, &e), 0, "%s", e.msg);
    float *pc = malloc(n * 4 + 4), *pg = malloc(n * 4 + 4);
    uint8_t *lc = malloc(n + 1), *lg = malloc(n + 1);
    cr_assert_eq(glm_score_rows_ref(m, rows, n, pc, lc, &e), 0);
    const unsigned lanes[] = {GLM_GPU_LANES_DEFAULT, 1, 4, 8, 16, 32};
    for (int li = 0; li < 6; li++) {
        cr_assert_eq(glm_gpu_set_lanes(g, lanes[li], &e), 0, "%s", e.msg);
        memset(pg, 0xff, n * 4);
        memset(lg, 0xff, n);
        cr_assert_eq(glm_gpu_score_rows(g, rows, n, pg, lg, &e), 0, "%s", e.msg);
        for (size_t r = 0; r < n; r++)
            cr_assert(memcmp(&pc[r], &pg[r], 4) == 0 && lc[r] == lg[r],
                      "lanes %u row %zu: cpu %.9g/%u gpu %.9g/%u", lanes[li], r, pc[r], lc[r],
                      pg[r], lg[r]);
    }
    cr_assert_eq(glm_gpu_set_lanes(g, 2, &e), SMT_ERR_ARG);
    glm_gpu_free(g);
    free(pc), free(pg), free(lc), free(lg);
}

/* glm_gpu_score_states == glm_score per query (prob, length and out state bytewise), with every
 * lane setting, in place (out == in) and through start/finish; n = 0; bad ids; misuse. */
static void compare_states(glm_model *m, const glm_state *in, const glm_word *w, size_t n)
{
    glm_gpu *g;
    smt_err e;
    cr_assert_eq(glm_gpu_create(&g, m, &e), 0, "%s", e.msg);
    float *pc = malloc(n * 4 + 4), *pg = malloc(n * 4 + 4);
    uint8_t *lc = malloc(n + 1), *lg = malloc(n + 1);
    glm_state *oc = malloc(n * sizeof *oc + 1), *og = malloc(n * sizeof *og + 1);
    for (size_t i = 0; i < n; i++) {
        unsigned l;
        pc[i] = glm_score(m, &in[i], w[i], &oc[i], &l);
        lc[i] = (uint8_t)l;
    }
    const unsigned lanes[] = {GLM_GPU_LANES_DEFAULT, 1, 4, 8, 16, 32};
    for (int li = 0; li < 6; li++)
        for (int how = 0; how < 3; how++) { /* 0: separate, 1: in place, 2: start/finish */
            cr_assert_eq(glm_gpu_set_lanes(g, lanes[li], &e), 0, "%s", e.msg);
            memset(pg, 0xff, n * 4);
            memset(lg, 0xff, n);
            memset(og, 0xab, n * sizeof *og);
            if (how == 1) {
                memcpy(og, in, n * sizeof *og);
                cr_assert_eq(glm_gpu_score_states(g, og, w, n, pg, og, lg, &e), 0, "%s", e.msg);
            } else if (how == 0) {
                cr_assert_eq(glm_gpu_score_states(g, in, w, n, pg, og, lg, &e), 0, "%s", e.msg);
            } else {
                cr_assert_eq(glm_gpu_states_start(g, in, w, n, &e), 0, "%s", e.msg);
                cr_assert_eq(glm_gpu_states_start(g, in, w, n, &e), SMT_ERR_ARG);
                cr_assert_eq(glm_gpu_states_finish(g, pg, og, lg, &e), 0, "%s", e.msg);
                cr_assert_eq(glm_gpu_states_finish(g, pg, og, lg, &e), SMT_ERR_ARG);
            }
            for (size_t i = 0; i < n; i++)
                cr_assert(memcmp(&pc[i], &pg[i], 4) == 0 && lc[i] == lg[i] &&
                              memcmp(&oc[i], &og[i], offsetof(glm_state, length) + 1) == 0,
                          "lanes %u how %d query %zu: cpu %.9g/%u gpu %.9g/%u", lanes[li], how,
                          i, pc[i], lc[i], pg[i], lg[i]);
        }
    cr_assert_eq(glm_gpu_score_states(g, in, w, 0, pg, og, NULL, &e), 0, "%s", e.msg);
    if (n > 0) {
        glm_word bad = glm_vocab_size(m);
        cr_assert_eq(glm_gpu_score_states(g, in, &bad, 1, pg, og, NULL, &e), SMT_ERR_ARG);
    }
    glm_gpu_free(g);
    free(pc), free(pg), free(lc), free(lg), free(oc), free(og);
}

/* The queries of a model: the begin and null states, every state reached by the words of text
 * (NULL: every pair of vocabulary words), each followed by every word (a small vocabulary) or by
 * the next word, a random one, <unk> and </s>. */
static size_t states_queries(glm_model *m, const char *text, glm_state **in_out, glm_word **w_out)
{
    uint32_t V = glm_vocab_size(m);
    size_t cap = 0, n = 0;
    glm_state *in = NULL;
    glm_word *w = NULL;
    uint64_t s = 88172645463325252ull;
#define ADD(st, x)                                                                                 \
    do {                                                                                           \
        if (n == cap) {                                                                            \
            size_t c_ = cap;                                                                       \
            cr_assert(!smt_grow(&in, &c_, n + 1, sizeof *in, 1 << 16));                            \
            c_ = cap;                                                                              \
            cr_assert(!smt_grow(&w, &c_, n + 1, sizeof *w, 1 << 16));                              \
            cap = c_;                                                                              \
        }                                                                                          \
        in[n] = (st);                                                                              \
        w[n++] = (x);                                                                              \
    } while (0)
    glm_state st[2];
    glm_state_begin(m, &st[0]);
    glm_state_null(&st[1]);
    if (!text) {
        for (int b = 0; b < 2; b++)
            for (uint32_t x = 0; x < V; x++)
                for (uint32_t y = 0; y < V; y++) {
                    glm_state a = st[b], c;
                    for (uint32_t z = 0; z < V; z++)
                        ADD(a, z);
                    glm_score(m, &a, x, &a, NULL);
                    for (uint32_t z = 0; z < V; z++)
                        ADD(a, z);
                    glm_score(m, &a, y, &c, NULL);
                    for (uint32_t z = 0; z < V; z++)
                        ADD(c, z);
                }
    } else {
        char *buf = tu_read_file(text, NULL);
        cr_assert_not_null(buf);
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
            glm_state a = st[0];
            for (char *p = line; *p;) {
                while (*p == ' ')
                    p++;
                char *end = p;
                while (*end && *end != ' ')
                    end++;
                if (end == p)
                    break;
                glm_word x = glm_index(m, p, (size_t)(end - p));
                s ^= s << 13, s ^= s >> 7, s ^= s << 17;
                ADD(a, x);
                ADD(a, (glm_word)(s % V));
                ADD(a, GLM_UNK);
                ADD(a, glm_eos(m));
                glm_score(m, &a, x, &a, NULL);
                p = end;
            }
            ADD(a, glm_eos(m));
        }
        free(buf);
    }
#undef ADD
    *in_out = in;
    *w_out = w;
    return n;
}

Test(glm_gpu, fixture_states)
{
    if (!glm_gpu_available())
        TU_SKIP_GPU(no_gpu_reason());
    const uint32_t Ks[] = {3, 31, 3, 4};
    const uint32_t Qp[] = {0, 0, 8, 1}, Qb[] = {0, 0, 8, 2};
    for (int k = 0; k < 4; k++) {
        glm_model *m = build(tu_data_path("glm/chain.arpa"), Ks[k], Qp[k], Qb[k]);
        glm_state *in;
        glm_word *w;
        size_t n = states_queries(m, NULL, &in, &w);
        compare_states(m, in, w, n);
        compare_states(m, in + 1, w + 1, 7); /* an odd small batch */
        free(in), free(w);
        glm_close(m);
    }
}

Test(glm_gpu, lm5_states, .timeout = 600)
{
    if (!glm_gpu_available())
        TU_SKIP_GPU(no_gpu_reason());
    char *arpa = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    char *text = tu_shared_path("data/bible/test-a.en");
    if (!arpa || !text)
        cr_skip_test("shared data absent (models/bible-es-en/lm.5.arpa.gz, data/bible/test-a.en)");
    glm_model *m = build(arpa, GLM_DEFAULT_K, 0, 0);
    glm_state *in;
    glm_word *w;
    size_t n = states_queries(m, text, &in, &w);
    compare_states(m, in, w, n);
    free(in), free(w), free(text);
    glm_close(m);
}

Test(glm_gpu, unsupported_without_device)
{
    if (glm_gpu_available())
        cr_skip_test("a CUDA device is present: the no-device path cannot be tested here");
    glm_model *m = build(tu_data_path("glm/chain.arpa"), 31, 0, 0);
    glm_gpu *g;
    smt_err e;
    cr_assert_eq(glm_gpu_create(&g, m, &e), SMT_ERR_UNSUPPORTED);
    cr_assert_null(g);
#ifndef FASTSMT_HAVE_CUDA /* the stub's states calls say so too (with CUDA, g cannot exist here) */
    glm_state st;
    glm_state_begin(m, &st);
    glm_word w = 1;
    float p;
    cr_assert_eq(glm_gpu_score_states(NULL, &st, &w, 1, &p, &st, NULL, &e), SMT_ERR_UNSUPPORTED);
    cr_assert_eq(glm_gpu_states_start(NULL, &st, &w, 1, &e), SMT_ERR_UNSUPPORTED);
    cr_assert_eq(glm_gpu_states_finish(NULL, &p, &st, NULL, &e), SMT_ERR_UNSUPPORTED);
#endif
    glm_close(m);
}

Test(glm_gpu, fixture_every_row)
{
    if (!glm_gpu_available())
        TU_SKIP_GPU(no_gpu_reason());
    /* K, and the quantization: floats, build_binary's -q 8 -b 8, and -q 1 -b 2 (two bins of
     * probabilities: the device must decode the same codes to the same centers) */
    const uint32_t Ks[] = {3, 31, 40, 3, 31, 4};
    const uint32_t Qp[] = {0, 0, 0, 8, 8, 1}, Qb[] = {0, 0, 0, 8, 8, 2};
    for (int k = 0; k < 6; k++) {
        glm_model *m = build(tu_data_path("glm/chain.arpa"), Ks[k], Qp[k], Qb[k]);
        cr_assert_eq(glm_quantization(m, NULL, NULL), Qp[k] != 0);
        uint32_t V = glm_vocab_size(m);
        size_t n = (size_t)(V + 1) * (V + 1) * V, r = 0;
        glm_word *rows = malloc(n * 3 * sizeof *rows);
        for (uint32_t x = 0; x <= V; x++) /* x == V stands for GLM_NONE padding */
            for (uint32_t y = 0; y <= V; y++)
                for (uint32_t z = 0; z < V; z++) {
                    if (x < V && y == V)
                        continue; /* padding only at the front */
                    rows[3 * r] = x == V ? GLM_NONE : x;
                    rows[3 * r + 1] = y == V ? GLM_NONE : y;
                    rows[3 * r + 2] = z;
                    r++;
                }
        compare(m, rows, r);
        free(rows);
        glm_close(m);
    }
}

/* The bible lm.5 (floats, or quantized -q 8 -b 8): query --gpu equals the CPU, and random rows. */
static void lm5_case(uint32_t qp, uint32_t qb)
{
    if (!glm_gpu_available())
        TU_SKIP_GPU(no_gpu_reason());
    char *arpa = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    char *text = tu_shared_path("data/bible/dev.en");
    if (!arpa || !text)
        cr_skip_test("shared data absent (models/bible-es-en/lm.5.arpa.gz, data/bible/dev.en)");
    glm_model *m = build(arpa, GLM_DEFAULT_K, qp, qb);
    const char *outs[2];
    char *bufs[2];
    for (int p = 0; p < 2; p++) {
        size_t len = 0;
        FILE *f = open_memstream(&bufs[p], &len);
        glm_query_options opt = {GLM_VERBOSE_WORD, 0, 1, p ? GLM_PATH_GPU : GLM_PATH_FAST, 0};
        smt_err e;
        smt_lines *in = NULL;
        cr_assert_eq(smt_lines_open(&in, text, 0, &e), 0, "%s", e.msg);
        cr_assert_eq(glm_query_lines(m, in, f, &opt, NULL, NULL, &e), 0, "%s", e.msg);
        smt_lines_close(in);
        fclose(f);
        outs[p] = bufs[p];
    }
    cr_assert_str_eq(outs[0], outs[1]);
    /* random rows: contexts of every length, ids over the whole vocabulary */
    size_t n = 200000;
    unsigned N = glm_order(m);
    glm_word *rows = malloc(n * N * sizeof *rows);
    uint64_t s = 88172645463325252ull;
    for (size_t r = 0; r < n; r++) {
        unsigned ctx = (unsigned)(r % N);
        for (unsigned i = 0; i < N; i++) {
            s ^= s << 13, s ^= s >> 7, s ^= s << 17;
            rows[r * N + i] = i + ctx + 1 < N ? GLM_NONE : (glm_word)(s % (r & 1 ? 200 : glm_vocab_size(m)));
        }
    }
    compare(m, rows, n);
    free(rows), free(bufs[0]), free(bufs[1]), free(text);
    glm_close(m);
}

Test(glm_gpu, lm5_dev_rows_and_query, .timeout = 600) { lm5_case(0, 0); }
Test(glm_gpu, lm5_quantized_dev_rows_and_query, .timeout = 600) { lm5_case(8, 8); }
