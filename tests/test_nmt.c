/* test_nmt.c — the C model against golden values exported by the PyTorch reference
 * (tools/nmt-train.py --golden) for the tiny model in tests/data/nmt/, search and scoring
 * consistency, batch invariance, loader errors, and the CUDA backend against the CPU (skipped
 * without a GPU). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nmt.h"
#include "nmt_st.h"
#include "testutil.h"

/* llm.c-style tolerance: |got - ref| <= abs + rel * |ref| */
#define CLOSE(got, ref, abs_tol, rel_tol) (fabsf((got) - (ref)) <= (abs_tol) + (rel_tol)*fabsf(ref))

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
    if (!nmt_cuda_available())
        cr_skip_test("no CUDA device (or a build without CUDA)");
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
        cr_assert_eq(nmt_translate(ctx, (size_t)n, src, &so, all, &err), 0, "%s", err.msg);
        for (int i = 0; i < n; i++) {
            cr_assert_eq(nmt_translate(ctx, 1, &src[i], &so, &one, &err), 0, "%s", err.msg);
            cr_assert_eq(one.len, all[i].len, "beam %d sentence %d", beam, i);
            cr_assert_arr_eq(one.ids, all[i].ids, (size_t)one.len * sizeof(int32_t));
            nmt_sentence hyp = {all[i].ids, all[i].len};
            float lp;
            cr_assert_eq(nmt_score(ctx, 1, &src[i], &hyp, &lp, &err), 0, "%s", err.msg);
            if (all[i].len < (int)(1.5f * src[i].len) + 5) /* ended with </s>, not forced */
                cr_expect(CLOSE(all[i].logprob, lp, 1e-3f, 1e-4f), "beam %d: %g vs scored %g",
                          beam, all[i].logprob, lp);
            nmt_hyps_free(&one, 1);
        }
        nmt_hyps_free(all, (size_t)n);
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
    if (!nmt_cuda_available())
        cr_skip_test("no CUDA device (or a build without CUDA)");
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
    nmt_shortlist_free(all);
    nmt_shortlist_free(few);
    free_pairs(src, tgt, n);
    tu_rmtree(dir);
    free(dir), free(path);
    nmt_ctx_free(ctx);
    nmt_model_free(m);
}
