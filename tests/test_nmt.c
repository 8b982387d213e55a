/* test_nmt.c — the C model against golden values exported by the PyTorch reference
 * (tools/nmt-train.py --golden) for the tiny model in tests/data/nmt/, search and scoring
 * consistency, batch invariance, loader errors, and the CUDA backend against the CPU (skipped
 * without a GPU). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "nmt.h"
#include "nmt_st.h"
#include "testutil.h"

/* llm.c-style tolerance: |got - ref| <= abs + rel * |ref| */
#define CLOSE(got, ref, abs_tol, rel_tol) (fabsf((got) - (ref)) <= (abs_tol) + (rel_tol)*fabsf(ref))

/* Skips a CUDA twin visibly, saying why it was not run. */
static void require_cuda(void)
{
#ifndef NMT_HAVE_CUDA
    TU_SKIP_GPU("CUDA twin not run: this build has no CUDA backend (FASTSMT_CUDA=OFF or no nvcc)");
#else
    if (!nmt_cuda_available())
        TU_SKIP_GPU("CUDA twin not run: no CUDA device is visible");
#endif
}

static nmt_model *open_tiny(void)
{
    char *dir = tu_data_path("nmt/tiny");
    nmt_model *m = NULL;
    smt_err err;
    int rc = nmt_model_open(&m, dir, &err);
    cr_assert_eq(rc, 0, "open %s: %s", dir, err.msg);
    free(dir);
    return m;
}

typedef struct golden {
    nmt_st st;
    char *path;
    nmt_st_tensor src, tin, tout, enc, logits, logprob, greedy;
} golden;

static void golden_open(golden *g)
{
    smt_err err;
    g->path = tu_data_path("nmt/golden.safetensors");
    cr_assert_eq(nmt_st_open(&g->st, g->path, &err), 0, "%s", err.msg);
    const char *names[] = {"src_ids", "tgt_in", "tgt_out", "enc_out", "logits", "logprob", "greedy"};
    nmt_st_tensor *ts[] = {&g->src, &g->tin, &g->tout, &g->enc, &g->logits, &g->logprob, &g->greedy};
    for (int i = 0; i < 7; i++)
        cr_assert_eq(nmt_st_find(&g->st, names[i], ts[i], &err), 0, "%s", err.msg);
}

static void golden_close(golden *g)
{
    nmt_st_close(&g->st);
    free(g->path);
}

static int32_t geti(const nmt_st_tensor *t, size_t i)
{
    int32_t v;
    memcpy(&v, t->raw + 4 * i, 4);
    return v;
}

static float getf(const nmt_st_tensor *t, size_t i)
{
    float v;
    memcpy(&v, t->raw + 4 * i, 4);
    return v;
}

/* The golden pairs as the tool reads them: `source ||| target` lines. */
static int read_pairs(const nmt_model *m, nmt_sentence *src, nmt_sentence *tgt, int max)
{
    char *path = tu_data_path("nmt/golden-pairs.txt");
    size_t len;
    char *text = tu_read_file(path, &len);
    cr_assert_not_null(text);
    int n = 0;
    for (char *line = strtok(text, "\n"); line && n < max; line = strtok(NULL, "\n")) {
        char *sep = strstr(line, " ||| ");
        cr_assert_not_null(sep);
        *sep = 0;
        int32_t *a = malloc(128 * sizeof *a), *b = malloc(128 * sizeof *b);
        src[n] = (nmt_sentence){a, (int)nmt_model_tokenize(m, 0, line, a, 128)};
        tgt[n] = (nmt_sentence){b, (int)nmt_model_tokenize(m, 1, sep + 5, b, 128)};
        n++;
    }
    free(text);
    free(path);
    return n;
}

static void free_pairs(nmt_sentence *s, nmt_sentence *t, int n)
{
    for (int i = 0; i < n; i++) {
        free((void *)s[i].ids);
        free((void *)t[i].ids);
    }
}

Test(nmt_model, config_and_vocab)
{
    nmt_model *m = open_tiny();
    const nmt_config *c = nmt_model_config(m);
    cr_expect_eq(c->d_model, 16);
    cr_expect_eq(c->n_heads, 2);
    cr_expect_eq(c->enc_layers, 2);
    cr_expect_eq(c->dec_layers, 2);
    cr_expect_eq(c->tgt_vocab_size, 64);
    cr_expect_str_eq(nmt_model_tgt_word(m, c->eos_id), "</s>");
    cr_expect_null(nmt_model_tgt_word(m, 64));
    int32_t ids[4];
    cr_expect_eq(nmt_model_tokenize(m, 1, "  god  xyzzy </s> ", ids, 4), 3);
    cr_expect_neq(ids[0], c->unk_id);
    cr_expect_eq(ids[1], c->unk_id);
    cr_expect_eq(ids[2], c->unk_id, "a literal </s> in the text is an unknown word");
    nmt_model_free(m);
}

/* The heart of the matter: the C forward pass reproduces PyTorch's encoder output and logits. */
Test(nmt_model, logits_match_pytorch)
{
    nmt_model *m = open_tiny();
    const nmt_config *c = nmt_model_config(m);
    golden g;
    golden_open(&g);
    nmt_ctx *ctx;
    smt_err err;
    nmt_ctx_options o = {NMT_BACKEND_CPU, 0, 2, 0, 0};
    cr_assert_eq(nmt_ctx_create(&ctx, m, &o, &err), 0, "%s", err.msg);
    int B = (int)g.src.shape[0], S = (int)g.src.shape[1], T = (int)g.tin.shape[1], V = c->tgt_vocab_size;
    cr_assert_eq(g.logits.shape[2], V);
    float *logits = malloc((size_t)T * V * sizeof *logits), *enc = malloc((size_t)S * 16 * 4);
    for (int b = 0; b < B; b++) {
        int32_t src[64], tin[64];
        int s = 0, t = 0;
        while (s < S && geti(&g.src, (size_t)b * S + s) != c->pad_id)
            src[s] = geti(&g.src, (size_t)b * S + s), s++;
        while (t < T && geti(&g.tout, (size_t)b * T + t) != c->pad_id)
            tin[t] = geti(&g.tin, (size_t)b * T + t), t++;
        cr_assert_eq(nmt_forward(ctx, src, s, tin, t, logits, enc, &err), 0, "%s", err.msg);
        for (int i = 0; i < s * 16; i++) {
            float ref = getf(&g.enc, (size_t)b * S * 16 + i);
            cr_assert(CLOSE(enc[i], ref, 1e-4f, 1e-4f), "enc_out[%d][%d] %g vs %g", b, i, enc[i], ref);
        }
        for (int i = 0; i < t * V; i++) {
            float ref = getf(&g.logits, (size_t)b * T * V + i);
            cr_assert(CLOSE(logits[i], ref, 1e-4f, 1e-4f), "logits[%d][%d][%d] %g vs %g", b, i / V,
                      i % V, logits[i], ref);
        }
    }
    /* a target id outside the vocabulary is an error, never a read past the embedding table */
    int32_t src1[2] = {5, c->eos_id}, tin1[2] = {c->bos_id, V};
    cr_expect_eq(nmt_forward(ctx, src1, 2, tin1, 2, logits, NULL, &err), SMT_ERR_ARG);
    cr_expect(strstr(err.msg, "target id 64 at 1"), "%s", err.msg);
    tin1[1] = -1;
    cr_expect_eq(nmt_forward(ctx, src1, 2, tin1, 2, logits, NULL, &err), SMT_ERR_ARG);
    free(logits);
    free(enc);
    nmt_ctx_free(ctx);
    golden_close(&g);
    nmt_model_free(m);
}

static void check_scores_and_greedy(nmt_backend backend)
{
    nmt_model *m = open_tiny();
    golden g;
    golden_open(&g);
    nmt_ctx *ctx;
    smt_err err;
    nmt_ctx_options o = {backend, 0, 2, 3, 0}; /* batches of 3: forces two batches */
    cr_assert_eq(nmt_ctx_create(&ctx, m, &o, &err), 0, "%s", err.msg);
    nmt_sentence src[8], tgt[8];
    int n = read_pairs(m, src, tgt, 8);
    cr_assert_eq(n, g.logprob.shape[0]);
    /* the tool's tokenization gives the ids the trainer used */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < src[i].len; j++)
            cr_assert_eq(src[i].ids[j], geti(&g.src, (size_t)i * g.src.shape[1] + j));
    float lp[8];
    cr_assert_eq(nmt_score(ctx, (size_t)n, src, tgt, lp, &err), 0, "%s", err.msg);
    for (int i = 0; i < n; i++)
        cr_expect(CLOSE(lp[i], getf(&g.logprob, i), 1e-3f, 1e-4f), "logprob[%d] %g vs %g", i, lp[i],
                  getf(&g.logprob, i));
    nmt_hyp h[8];
    nmt_search_options so = {1, 2.0f, 10, 0.0f, NULL};
    cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, h, &err), 0, "%s", err.msg);
    int W = (int)g.greedy.shape[1];
    for (int i = 0; i < n; i++) {
        int len = 0;
        while (len < W && geti(&g.greedy, (size_t)i * W + len) != 3)
            len++;
        cr_assert_eq(h[i].len, len, "greedy length of %d", i);
        for (int j = 0; j < len; j++)
            cr_assert_eq(h[i].ids[j], geti(&g.greedy, (size_t)i * W + j), "greedy %d word %d", i, j);
    }
    nmt_hyps_free(h, (size_t)n);
    free_pairs(src, tgt, n);
    nmt_ctx_free(ctx);
    golden_close(&g);
    nmt_model_free(m);
}

Test(nmt_model, scores_and_greedy_match_pytorch) { check_scores_and_greedy(NMT_BACKEND_CPU); }

Test(nmt_model, scores_and_greedy_cuda)
{
    require_cuda();
    check_scores_and_greedy(NMT_BACKEND_CUDA);
}

/* Beam search reports the log-probability that forced decoding gives its output, and a batch
 * gives the same translations as one sentence at a time (finished sentences leave the batch). */
Test(nmt_search, beam_consistent_with_scoring_and_batching)
{
    nmt_model *m = open_tiny();
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    nmt_sentence src[8], tgt[8];
    int n = read_pairs(m, src, tgt, 8);
    for (int beam = 2; beam <= 6; beam += 4) {
        nmt_search_options so = {beam, 1.5f, 5, 0.0f, NULL};
        nmt_hyp all[8], one;
        int checked = 0;
        cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, all, &err), 0, "%s", err.msg);
        for (int i = 0; i < n; i++) {
            cr_assert_eq(nmt_translate(ctx, 1, &src[i], &so, &one, &err), 0, "%s", err.msg);
            cr_assert_eq(one.len, all[i].len, "beam %d sentence %d", beam, i);
            cr_assert_arr_eq(one.ids, all[i].ids, (size_t)one.len * sizeof(int32_t));
            nmt_sentence hyp = {all[i].ids, all[i].len};
            float lp;
            cr_assert_eq(nmt_score(ctx, 1, &src[i], &hyp, &lp, &err), 0, "%s", err.msg);
            if (all[i].len < (int)(1.5f * src[i].len) + 5) { /* ended with </s>, not forced */
                cr_expect(CLOSE(all[i].logprob, lp, 1e-3f, 1e-4f), "beam %d: %g vs scored %g",
                          beam, all[i].logprob, lp);
                checked++;
            }
            nmt_hyps_free(&one, 1);
        }
        /* the check above must not be skipped (it would then test nothing): on these pairs every
         * search ends with </s> */
        cr_assert_geq(n, 4);
        cr_assert_eq(checked, n, "beam %d: %d of %d sentences ended with </s>", beam, checked,
                      n);
        nmt_hyps_free(all, (size_t)n);
    }
    /* options out of range (a NaN would become an undefined int length) are errors */
    const nmt_search_options bad[] = {{0, 1.5f, 5, 0.0f, NULL},     {NMT_MAX_K + 1, 1.5f, 5, 0, NULL},
                                      {2, -1.0f, 5, 0.0f, NULL},    {2, NAN, 5, 0.0f, NULL},
                                      {2, 1e30f, 5, 0.0f, NULL},    {2, 1.5f, -1, 0.0f, NULL},
                                      {2, 1.5f, 5, NAN, NULL},      {2, 1.5f, 5, -0.5f, NULL}};
    for (int i = 0; i < 8; i++) {
        nmt_hyp h[8];
        cr_expect_eq(nmt_translate(ctx, (size_t)n, src, &bad[i], h, &err), SMT_ERR_ARG, "%d", i);
    }
    free_pairs(src, tgt, n);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
}

/* Scoring an n-best-like list (many targets of one source array, sharing prefixes, one a prefix of
 * another, duplicates, an empty one, an out-of-vocabulary id; in shuffled order, over batch sizes
 * that split the list) gives bit for bit the scores of each pair scored alone: the shared
 * positions are computed once (nmt_score's prefix sharing) and each source encoded once. */
static void check_prefix_sharing(nmt_backend backend)
{
    nmt_model *m = open_tiny();
    nmt_sentence src[8], tgt[8];
    int n = read_pairs(m, src, tgt, 8);
    enum { T = 40 };
    nmt_sentence ps[T], pt[T];
    int32_t ids[T][24];
    uint64_t r = 12345;
    for (int i = 0; i < T; i++) {
        const nmt_sentence *base = &tgt[i % 3];
        int len = (int)(r % 10);
        for (int j = 0; j < len && j < 24; j++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            /* mostly the base target's words, so that prefixes are shared at every depth */
            ids[i][j] = j < base->len && r % 4 ? base->ids[j] : (int32_t)(r % 40);
        }
        if (i == 7)
            ids[i][0] = 1 << 30; /* out of the vocabulary: scored as <unk> */
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        ps[i] = src[i % 2]; /* two sources, each shared by many targets (the same arrays) */
        pt[i] = (nmt_sentence){ids[i], len};
    }
    pt[5] = pt[4]; /* a duplicate */
    ps[5] = ps[4];
    pt[6] = (nmt_sentence){ids[4], pt[4].len > 0 ? pt[4].len - 1 : 0}; /* a prefix of another */
    ps[6] = ps[4];
    pt[9].len = 0; /* empty: only </s> */
    for (int batch = 1; batch <= 64; batch *= 4) {
        nmt_ctx *ctx, *plain;
        smt_err err;
        nmt_ctx_options o = {backend, 0, 2, batch, 0}, po = {backend, 0, 2, batch, 1};
        cr_assert_eq(nmt_ctx_create(&ctx, m, &o, &err), 0, "%s", err.msg);
        cr_assert_eq(nmt_ctx_create(&plain, m, &po, &err), 0, "%s", err.msg);
        float all[T], full[T], one;
        cr_assert_eq(nmt_score(ctx, T, ps, pt, all, &err), 0, "%s", err.msg);
        cr_assert_eq(nmt_score(plain, T, ps, pt, full, &err), 0, "%s", err.msg);
        for (int i = 0; i < T; i++) {
            cr_assert_eq(nmt_score(ctx, 1, &ps[i], &pt[i], &one, &err), 0, "%s", err.msg);
            cr_assert(memcmp(&one, &all[i], sizeof one) == 0 &&
                          memcmp(&one, &full[i], sizeof one) == 0,
                      "batch %d pair %d: shared %.9g unshared %.9g alone %.9g", batch, i, all[i],
                      full[i], one);
        }
        cr_assert(all[5] == all[4]);
        nmt_ctx_free(ctx);
        nmt_ctx_free(plain);
    }
    free_pairs(src, tgt, n);
    nmt_model_free(m);
}

Test(nmt_score, prefix_sharing_is_exact) { check_prefix_sharing(NMT_BACKEND_CPU); }

Test(nmt_score, prefix_sharing_is_exact_cuda)
{
    require_cuda();
    check_prefix_sharing(NMT_BACKEND_CUDA);
}

/* A damaged model is an error with a message, never a crash. */
Test(nmt_model, damaged_files)
{
    char *dir = tu_tmpdir(), *tiny = tu_data_path("nmt/tiny");
    const char *files[] = {"config.json", "model.safetensors", "src.vocab", "tgt.vocab"};
    for (int i = 0; i < 4; i++) {
        char *a = tu_join(tiny, files[i]), *b = tu_join(dir, files[i]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a);
        free(b);
    }
    nmt_model *m = NULL;
    smt_err err;
    cr_assert_eq(nmt_model_open(&m, dir, &err), 0, "%s", err.msg);
    nmt_model_free(m);
    char *w = tu_join(dir, "model.safetensors");
    long long size = tu_file_size(w);
    cr_assert_eq(tu_truncate(w, (uint64_t)size - 100), 0);
    cr_expect_eq(nmt_model_open(&m, dir, &err), SMT_ERR_CORRUPT, "truncated: %s", err.msg);
    cr_assert_eq(tu_truncate(w, 5), 0);
    cr_expect_eq(nmt_model_open(&m, dir, &err), SMT_ERR_CORRUPT);
    /* bit flips anywhere in the header: an error or a model, never a crash (ASan checks reads) */
    char *orig = tu_join(tiny, "model.safetensors");
    for (uint64_t off = 0; off < 1200; off += 37) {
        cr_assert_eq(tu_copy_file(orig, w), 0);
        cr_assert_eq(tu_flip_bit(w, off, (int)(off % 8)), 0);
        int rc = nmt_model_open(&m, dir, &err);
        if (rc == 0)
            nmt_model_free(m);
    }
    free(orig);
    char *cfg = tu_join(dir, "config.json");
    const char *bad = "{\"d_model\": 16, \"n_heads\": 2}";
    cr_assert_eq(tu_write_file(cfg, bad, strlen(bad)), 0);
    cr_expect_eq(nmt_model_open(&m, dir, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, "d_ff") != NULL, "message names the key: %s", err.msg);
    cr_assert_eq(tu_write_file(cfg, "{\"d_model\": ", 12), 0);
    cr_expect_eq(nmt_model_open(&m, dir, &err), SMT_ERR_PARSE);
    cr_expect_eq(nmt_model_open(&m, "/nonexistent/model", &err), SMT_ERR_IO);
    free(cfg);
    free(w);
    tu_rmtree(dir);
    free(dir);
    free(tiny);
}

/* ---- loading hostile or damaged models: an error naming the file, key or tensor; never a crash,
 * never a huge allocation, never a model that scores NaN ---- */

/* A copy of the tiny model in a fresh directory (malloc'ed path; tu_rmtree it). */
static char *tiny_copy(void)
{
    char *dir = tu_tmpdir(), *tiny = tu_data_path("nmt/tiny");
    const char *files[] = {"config.json", "model.safetensors", "src.vocab", "tgt.vocab"};
    for (int i = 0; i < 4; i++) {
        char *a = tu_join(tiny, files[i]), *b = tu_join(dir, files[i]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a);
        free(b);
    }
    free(tiny);
    return dir;
}

static int try_open(const char *dir, smt_err *err)
{
    nmt_model *m = NULL;
    smt_err_clear(err);
    int rc = nmt_model_open(&m, dir, err);
    cr_assert(rc != 0 || m != NULL);
    nmt_model_free(m);
    return rc;
}

/* Writes the tiny config with key's value replaced by value (NULL: the key removed) into dir. */
static void put_config(const char *dir, const char *key, const char *value)
{
    char *orig = tu_data_path("nmt/tiny/config.json"), *path = tu_join(dir, "config.json");
    size_t len;
    char *text = tu_read_file(orig, &len);
    cr_assert_not_null(text);
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    char *at = strstr(text, pat);
    cr_assert_not_null(at, "tiny config has no %s", key);
    char *v = at + strlen(pat), *end = v + strcspn(v, ",\n");
    char *out = malloc(len + 256);
    int n = value ? sprintf(out, "%.*s%s%s", (int)(v - text), text, value, end)
                  : sprintf(out, "%.*s\"unused\": 0%s", (int)(at - text), text, end);
    cr_assert_eq(tu_write_file(path, out, (size_t)n), 0);
    free(out), free(text), free(orig), free(path);
}

static void put_file(const char *dir, const char *name, const char *from_data)
{
    char *src = tu_data_path(from_data), *dst = tu_join(dir, name);
    cr_assert_eq(tu_copy_file(src, dst), 0, "%s", src);
    free(src), free(dst);
}

/* Overwrites element `elem` of tensor `name` in dir/model.safetensors with the float bits. */
static void poke_float(const char *dir, const char *name, size_t elem, uint32_t bits)
{
    char *path = tu_join(dir, "model.safetensors");
    nmt_st st;
    nmt_st_tensor t;
    smt_err err;
    cr_assert_eq(nmt_st_open(&st, path, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_st_find(&st, name, &t, &err), 0, "%s", err.msg);
    cr_assert_eq(t.dtype, NMT_ST_F32);
    cr_assert_lt(elem, t.numel);
    long off = (long)(t.raw - st.file) + 4 * (long)elem;
    nmt_st_close(&st);
    FILE *f = fopen(path, "r+b");
    cr_assert_not_null(f);
    unsigned char b[4] = {(unsigned char)bits, (unsigned char)(bits >> 8),
                          (unsigned char)(bits >> 16), (unsigned char)(bits >> 24)};
    cr_assert_eq(fseek(f, off, SEEK_SET), 0);
    cr_assert_eq(fwrite(b, 1, 4, f), 4u);
    cr_assert_eq(fclose(f), 0);
    free(path);
}

/* A NaN or an infinity anywhere in the weights refuses the model, naming the tensor (it would load
 * and score -inf or NaN). Each tensor kind: embedding, a transposed linear weight, a bias, a norm. */
Test(nmt_model, nonfinite_weights_refused)
{
    const char *names[] = {"tgt_embed.weight", "enc.1.ff1.weight", "out.bias", "dec.0.ln3.weight",
                           "out.weight"};
    const uint32_t bits[] = {0x7FC00000u, 0x7F800000u, 0xFF800000u, 0x7F800001u, 0xFFC00000u};
    const size_t elems[] = {5, 22, 63, 9, 1000};
    for (int i = 0; i < 5; i++) {
        char *dir = tiny_copy();
        smt_err err;
        cr_assert_eq(try_open(dir, &err), 0, "%s", err.msg);
        size_t elem = elems[i];
        poke_float(dir, names[i], elem, bits[i]);
        cr_expect_eq(try_open(dir, &err), SMT_ERR_CORRUPT, "%s: %s", names[i], err.msg);
        char want[96];
        snprintf(want, sizeof want, "tensor '%s' holds", names[i]);
        cr_expect(strstr(err.msg, want) && strstr(err.msg, "model.safetensors"), "%s", err.msg);
        snprintf(want, sizeof want, "element %zu", elem);
        cr_expect(strstr(err.msg, want), "%s", err.msg);
        /* a finite value in the same place loads */
        poke_float(dir, names[i], elem, 0x3F800000u);
        cr_expect_eq(try_open(dir, &err), 0, "%s", err.msg);
        tu_rmtree(dir);
        free(dir);
    }
}

/* The special ids index the embedding tables: each must be an id of both vocabularies (fuzz
 * finding: "bos_id": 100000 read out of bounds at the first score; 64 read the next tensor). */
Test(nmt_model, special_ids_checked_against_the_vocabularies)
{
    char *dir = tiny_copy();
    smt_err err;
    put_file(dir, "config.json", "nmt/regress/nmt_bos_oob.json");
    cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s", err.msg);
    cr_expect(strstr(err.msg, "config.json") && strstr(err.msg, "\"bos_id\" 100000"), "%s",
              err.msg);
    const char *keys[] = {"pad_id", "unk_id", "bos_id", "eos_id"};
    for (int i = 0; i < 4; i++) {
        put_config(dir, keys[i], "64"); /* just past the vocabulary */
        cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s: %s", keys[i], err.msg);
        cr_expect(strstr(err.msg, keys[i]) && strstr(err.msg, "64 words"), "%s", err.msg);
        put_config(dir, keys[i], "-1");
        cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s: %s", keys[i], err.msg);
    }
    put_config(dir, "bos_id", "63"); /* the last id is an id */
    cr_expect_eq(try_open(dir, &err), 0, "%s", err.msg);
    tu_rmtree(dir);
    free(dir);
}

/* Sizes in the config are proven by the tensors before anything of their size is allocated (fuzz
 * finding: "enc_layers": 100000000 asked for 17.6 GB before a tensor was looked at). */
Test(nmt_model, config_sizes_checked_before_allocating)
{
    char *dir = tiny_copy();
    smt_err err;
    put_file(dir, "config.json", "nmt/regress/nmt_enc_layers_oom.json");
    cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s", err.msg);
    cr_expect(strstr(err.msg, "\"enc_layers\" must be an integer in"), "%s", err.msg);
    /* within the key's range but more layers than the file holds tensors for */
    put_config(dir, "dec_layers", "4000");
    cr_expect_eq(try_open(dir, &err), SMT_ERR_FORMAT, "%s", err.msg);
    cr_expect(strstr(err.msg, "4000 decoder layers need 104040 tensors"), "%s", err.msg);
    /* sizes whose arena would be hundreds of GB: refused by the first tensor's shape, not by
     * malloc */
    put_config(dir, "d_model", "65536");
    cr_expect_eq(try_open(dir, &err), SMT_ERR_FORMAT, "%s", err.msg);
    cr_expect(strstr(err.msg, "'src_embed.weight' has the wrong shape"), "%s", err.msg);
    put_config(dir, "tgt_vocab_size", "100000000");
    cr_expect_eq(try_open(dir, &err), SMT_ERR_FORMAT, "%s", err.msg);
    cr_expect(strstr(err.msg, "'tgt_embed.weight' has the wrong shape"), "%s", err.msg);
    /* shared vocabularies of different sizes would index the smaller table with the larger's ids */
    put_config(dir, "shared_vocab", "true");
    char *cfg = tu_join(dir, "config.json");
    size_t len;
    char *text = tu_read_file(cfg, &len);
    char *p = strstr(text, "\"tgt_vocab_size\": 64");
    cr_assert_not_null(p);
    memcpy(p, "\"tgt_vocab_size\": 65", 20);
    cr_assert_eq(tu_write_file(cfg, text, len), 0);
    cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s", err.msg);
    cr_expect(strstr(err.msg, "shared_vocab"), "%s", err.msg);
    free(text), free(cfg);
    tu_rmtree(dir);
    free(dir);
}

/* Every number of the config is a JSON integer in range (or a number where a real is meant); a key
 * of the wrong type is an error, not a default. */
Test(nmt_model, config_numbers_strict)
{
    static const struct { const char *key, *value; } bad[] = {
        {"d_model", "16.0"},      {"d_model", "1.6e1"},       {"d_model", "\"16\""},
        {"d_model", "+16"},       {"d_model", "1e400"},       {"d_model", "16x"},
        {"n_heads", "-2"},        {"d_ff", "null"},           {"enc_layers", "true"},
        {"bos_id", "true"},       {"layer_norm_eps", "\"x\""}, {"layer_norm_eps", "-1e-5"},
        {"layer_norm_eps", "0"},  {"shared_vocab", "2"},      {"shared_vocab", "\"yes\""},
        {"src_vocab", "7"},       {"weights", "\"\""},        {"unk_id", ".5"},
        {"eos_id", "-"},          {"pad_id", "0.0"}};
    char *dir = tiny_copy();
    smt_err err;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        put_config(dir, bad[i].key, bad[i].value);
        cr_expect_eq(try_open(dir, &err), SMT_ERR_PARSE, "%s: %s gives %s", bad[i].key,
                     bad[i].value, err.msg);
        cr_expect(strstr(err.msg, "config.json"), "%s", err.msg);
    }
    put_config(dir, "layer_norm_eps", "2e-5");
    cr_expect_eq(try_open(dir, &err), 0, "%s", err.msg);
    put_config(dir, "shared_vocab", "0");
    cr_expect_eq(try_open(dir, &err), 0, "%s", err.msg);
    tu_rmtree(dir);
    free(dir);
}

/* A vocabulary with more lines than the config says is an error naming the first extra line (fuzz
 * finding: the error path leaked one word per failed open). */
Test(nmt_model, vocabulary_longer_than_the_config)
{
    char *dir = tiny_copy(), *tv = tu_join(dir, "tgt.vocab");
    smt_err err;
    size_t len;
    char *text = tu_read_file(tv, &len);
    char *longer = malloc(len + 16);
    memcpy(longer, text, len);
    memcpy(longer + len, "extra\nmore\n", 11);
    cr_assert_eq(tu_write_file(tv, longer, len + 11), 0);
    cr_expect_eq(try_open(dir, &err), SMT_ERR_FORMAT, "%s", err.msg);
    cr_expect(strstr(err.msg, "tgt.vocab:65: more words than the config's 64"), "%s", err.msg);
    cr_assert_eq(tu_write_file(tv, text, len - 5), 0); /* and shorter */
    cr_expect_eq(try_open(dir, &err), SMT_ERR_FORMAT, "%s", err.msg);
    /* the fuzzer's input: a small config against the 64-line vocabularies */
    put_file(dir, "config.json", "nmt/regress/nmt_config_vocab_leak.input");
    cr_expect_neq(try_open(dir, &err), 0);
    free(text), free(longer), free(tv);
    tu_rmtree(dir);
    free(dir);
}

/* dir/model.safetensors with the first occurrence of `from` in its header replaced by `to` (the
 * header length rewritten). */
static void edit_header(const char *dir, const char *from, const char *to)
{
    char *path = tu_join(dir, "model.safetensors");
    size_t len;
    char *file = tu_read_file(path, &len);
    cr_assert_not_null(file);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = hl << 8 | (unsigned char)file[i];
    char *hdr = malloc(hl + 1);
    memcpy(hdr, file + 8, hl);
    hdr[hl] = 0;
    char *at = strstr(hdr, from);
    cr_assert_not_null(at, "no %s in the header", from);
    size_t nl = hl - strlen(from) + strlen(to);
    char *out = malloc(8 + nl + (len - 8 - hl));
    for (int i = 0; i < 8; i++)
        out[i] = (char)(nl >> (8 * i));
    size_t pre = (size_t)(at - hdr);
    memcpy(out + 8, hdr, pre);
    memcpy(out + 8 + pre, to, strlen(to));
    memcpy(out + 8 + pre + strlen(to), at + strlen(from), hl - pre - strlen(from));
    memcpy(out + 8 + nl, file + 8 + hl, len - 8 - hl);
    cr_assert_eq(tu_write_file(path, out, 8 + nl + (len - 8 - hl)), 0);
    free(out), free(hdr), free(file), free(path);
}

/* Shapes and offsets in the safetensors header are JSON integers (16.0 is not a dimension). */
Test(nmt_model, safetensors_numbers_strict)
{
    static const char *const bad[][2] = {
        {"\"shape\":[16],", "\"shape\":[16.0],"},
        {"\"shape\":[16],", "\"shape\":[1.6e1],"},
        {"\"data_offsets\":[0,64]", "\"data_offsets\":[0,64.0]"},
        {"\"data_offsets\":[0,64]", "\"data_offsets\":[0e0,64]"},
        {"\"data_offsets\":[0,64]", "\"data_offsets\":[-0,+64]"}};
    for (int i = 0; i < 5; i++) {
        char *dir = tiny_copy();
        smt_err err;
        edit_header(dir, bad[i][0], bad[i][1]);
        int rc = try_open(dir, &err);
        cr_expect(rc == SMT_ERR_PARSE || rc == SMT_ERR_CORRUPT, "%s: %d %s", bad[i][1], rc,
                  err.msg);
        cr_expect(strstr(err.msg, "model.safetensors"), "%s", err.msg);
        tu_rmtree(dir);
        free(dir);
    }
    char *dir = tiny_copy(); /* the same edit with an integer still loads */
    smt_err err;
    edit_header(dir, "\"shape\":[16],", "\"shape\": [ 16 ] ,");
    cr_expect_eq(try_open(dir, &err), 0, "%s", err.msg);
    tu_rmtree(dir);
    free(dir);
}

/* A JSON document of many strings (a safetensors header of many tensors) costs memory in
 * proportion to its size: each string used to get a buffer the size of the rest of the document
 * (200,000 strings in 3 MB asked for hundreds of GB). Run under a 1 GiB address-space limit. */
Test(nmt_model, json_of_many_strings_costs_its_size)
{
#if defined(__SANITIZE_ADDRESS__)
    cr_skip_test("address-space limit not usable under AddressSanitizer");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    cr_skip_test("address-space limit not usable under AddressSanitizer");
#endif
#endif
    enum { N = 200000 };
    char *doc = malloc((size_t)N * 16 + 16), *q = doc;
    *q++ = '[';
    for (int i = 0; i < N; i++)
        q += sprintf(q, "%s\"k%d\\n\"", i ? "," : "", i);
    *q++ = ']';
    struct rlimit lim = {1u << 30, 1u << 30};
    cr_assert_eq(setrlimit(RLIMIT_AS, &lim), 0);
    nj_value v;
    char msg[200];
    cr_assert_eq(nj_parse(doc, (size_t)(q - doc), &v, msg, sizeof msg), 0, "%s", msg);
    cr_expect_eq(v.n, (size_t)N);
    cr_expect_str_eq(v.items[N - 1].str, "k199999\n");
    nj_free(&v);
    free(doc);
}

Test(nmt_model, cuda_unavailable_is_an_error_not_a_crash)
{
    if (nmt_cuda_available())
        cr_skip_test("a GPU is present");
    nmt_model *m = open_tiny();
    nmt_ctx *ctx = NULL;
    smt_err err;
    nmt_ctx_options o = {NMT_BACKEND_CUDA, 0, 1, 0, 0};
    cr_expect_neq(nmt_ctx_create(&ctx, m, &o, &err), 0);
    cr_expect_null(ctx);
    nmt_model_free(m);
}

/* A shortlist that holds the whole vocabulary changes nothing; a small one confines the output to
 * its words (the listed translations of the batch's source words, the frequent ids and </s>). */
Test(nmt_search, shortlist)
{
    nmt_model *m = open_tiny();
    nmt_ctx *ctx;
    smt_err err;
    cr_assert_eq(nmt_ctx_create(&ctx, m, NULL, &err), 0, "%s", err.msg);
    char *dir = tu_tmpdir(), *path = tu_join(dir, "shortlist.txt");
    const char *text = "dios god\ndios yahweh\nluz light\ntierra earth\nxyzzy said\nluz\n";
    cr_assert_eq(tu_write_file(path, text, strlen(text) - 4), 0); /* drop the bad last line */
    nmt_shortlist *all, *few;
    cr_assert_eq(nmt_shortlist_load(&all, m, path, 20, 64, &err), 0, "%s", err.msg);
    cr_assert_eq(nmt_shortlist_load(&few, m, path, 1, 10, &err), 0, "%s", err.msg);
    nmt_sentence src[8], tgt[8];
    int n = read_pairs(m, src, tgt, 8);
    nmt_search_options so = {3, 2.0f, 5, 0.6f, NULL};
    nmt_hyp ref[8], h[8];
    cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, ref, &err), 0, "%s", err.msg);
    so.shortlist = all;
    cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, h, &err), 0, "%s", err.msg);
    for (int i = 0; i < n; i++) {
        cr_assert_eq(h[i].len, ref[i].len);
        cr_assert_arr_eq(h[i].ids, ref[i].ids, (size_t)h[i].len * 4);
        /* <pad> and <s> are never outputs and never in a shortlist: renormalizing without them can
         * only raise a probability, and only a little */
        cr_expect(h[i].logprob >= ref[i].logprob - 1e-4f && h[i].logprob < ref[i].logprob + 0.5f,
                  "%g vs %g", h[i].logprob, ref[i].logprob);
    }
    nmt_hyps_free(h, (size_t)n);
    so.shortlist = few;
    cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, h, &err), 0, "%s", err.msg);
    int32_t god, yahweh;
    nmt_model_tokenize(m, 1, "god", &god, 1);
    nmt_model_tokenize(m, 1, "yahweh", &yahweh, 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < h[i].len; j++) {
            int32_t w = h[i].ids[j];
            cr_assert(w < 10 || w == god || (w != yahweh && w >= 0 && nmt_model_tgt_word(m, w) &&
                                             (!strcmp(nmt_model_tgt_word(m, w), "light") ||
                                              !strcmp(nmt_model_tgt_word(m, w), "earth"))),
                      "sentence %d word %d (%s) is not in the shortlist", i, j,
                      nmt_model_tgt_word(m, w));
        }
    nmt_hyps_free(h, (size_t)n);
    nmt_hyps_free(ref, (size_t)n);
    cr_assert_eq(tu_write_file(path, text, strlen(text)), 0);
    nmt_shortlist *bad = NULL;
    cr_expect_eq(nmt_shortlist_load(&bad, m, path, 5, 5, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, ":6") != NULL, "%s", err.msg);
    /* a third column (a score) is not a pair: an error, not every line skipped in silence */
    const char *scored = "dios god\ndios yahweh 0.5\n";
    cr_assert_eq(tu_write_file(path, scored, strlen(scored)), 0);
    cr_expect_eq(nmt_shortlist_load(&bad, m, path, 5, 5, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, "shortlist.txt:2: want") != NULL, "%s", err.msg);
    cr_assert_eq(tu_write_file(path, "", 0), 0); /* an empty list */
    cr_expect_eq(nmt_shortlist_load(&bad, m, path, 5, 5, &err), SMT_ERR_PARSE);
    cr_expect(strstr(err.msg, "no `source_word target_word` lines") != NULL, "%s", err.msg);
    cr_expect_eq(nmt_shortlist_load(&bad, m, path, 0, 5, &err), SMT_ERR_ARG);
    cr_expect_null(bad);
    nmt_shortlist_free(all);
    nmt_shortlist_free(few);
    free_pairs(src, tgt, n);
    tu_rmtree(dir);
    free(dir), free(path);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
}
