/* Tests of glm_score_states (issue 15): every batch of independent (state, word) queries gives
 * exactly what a loop of glm_score gives — the float prob, the matched length and the whole out
 * state compared with memcmp — on the hand-made fixtures (several node sizes K, with and without
 * the big-group index forced onto every group, quantized), the KenLM binaries of the fixtures,
 * and, when ../shared is present, the bible lm.5 (glm and KenLM probing). The queries are the
 * begin and null states, states reached by walking text (the fixtures' vocabulary at random, the
 * sentences of test-a), states through unknown words, and synthetic states of every length with
 * random words and backoffs (including -0.0), each followed by known words, GLM_UNK and </s>.
 * Batches of 0, 1, odd and large sizes, and in == out. Bad ids and lengths are SMT_ERR_ARG. */
#include <criterion/criterion.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glm.h"
#include "glm_internal.h" /* glm_bigidx_build: the index on every group of the tiny models */
#include "smt_buf.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(glm_states, .init = setup, .fini = teardown);

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(uint32_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)((rng >> 11) % n);
}

typedef struct qset {
    glm_state *in;
    glm_word *w;
    size_t n, cap;
} qset;

static void qadd(qset *q, const glm_state *s, glm_word w)
{
    if (q->n == q->cap) {
        size_t c = q->cap;
        cr_assert(!smt_grow(&q->in, &c, q->n + 1, sizeof *q->in, 256));
        c = q->cap;
        cr_assert(!smt_grow(&q->w, &c, q->n + 1, sizeof *q->w, 256));
        q->cap = c;
    }
    q->in[q->n] = *s;
    q->w[q->n++] = w;
}

/* A state and the words every one is followed by: a known word at random, <unk>, </s>. */
static void qadd_words(qset *q, const glm_model *m, const glm_state *s)
{
    uint32_t V = glm_vocab_size(m);
    qadd(q, s, rnd(V));
    qadd(q, s, GLM_UNK);
    qadd(q, s, glm_eos(m));
}

/* Walks a sequence of ids from the begin (or null) state, adding every state met. */
static void walk_ids(qset *q, const glm_model *m, const glm_word *ids, size_t n, int null_ctx)
{
    glm_state s;
    if (null_ctx)
        glm_state_null(&s);
    else
        glm_state_begin(m, &s);
    for (size_t i = 0; i < n; i++) {
        qadd_words(q, m, &s);
        qadd(q, &s, ids[i]); /* the text's own next word */
        glm_score(m, &s, ids[i], &s, NULL);
    }
    qadd_words(q, m, &s);
}

/* The query set of a model: begin, null, random walks (known and unknown words, <s> inside),
 * synthetic states of every length, and, when given, the sentences of a text. */
static qset make_queries(const glm_model *m, const char *text, size_t max_lines)
{
    qset q = {0};
    uint32_t V = glm_vocab_size(m), N = glm_order(m);
    glm_state s;
    glm_state_begin(m, &s);
    qadd_words(&q, m, &s);
    glm_state_null(&s);
    qadd_words(&q, m, &s);
    for (int r = 0; r < 40; r++) { /* random walks over the vocabulary */
        glm_word ids[12];
        size_t n = 1 + rnd(12);
        for (size_t i = 0; i < n; i++)
            ids[i] = rnd(4) == 0 ? GLM_UNK : rnd(V);
        walk_ids(&q, m, ids, n, r & 1);
    }
    for (unsigned len = 0; len < N; len++) /* synthetic states: any words, odd backoffs */
        for (int r = 0; r < 30; r++) {
            glm_state x;
            memset(&x, 0, sizeof x);
            x.length = (uint8_t)len;
            static const float bos[] = {0.0f, -0.0f, -0.25f, -1.5f, -100.0f};
            for (unsigned j = 0; j < len; j++) {
                x.words[j] = rnd(3) == 0 ? GLM_UNK : rnd(V);
                x.backoff[j] = bos[rnd(5)];
            }
            qadd_words(&q, m, &x);
        }
    if (text) { /* sentences: a decoder's states */
        char *buf = tu_read_file(text, NULL);
        cr_assert_not_null(buf);
        size_t lines = 0;
        glm_word *ids = malloc(4096 * sizeof *ids);
        for (char *line = strtok(buf, "\n"); line && lines < max_lines;
             line = strtok(NULL, "\n"), lines++) {
            size_t n = 0;
            for (char *p = line; *p && n < 4096;) {
                while (*p == ' ')
                    p++;
                char *e = p;
                while (*e && *e != ' ')
                    e++;
                if (e > p)
                    ids[n++] = glm_index(m, p, (size_t)(e - p));
                p = e;
            }
            walk_ids(&q, m, ids, n, 0);
        }
        free(ids);
        free(buf);
    }
    for (size_t i = q.n; i > 1; i--) { /* shuffled: neighbours share nothing */
        size_t j = rnd((uint32_t)i);
        glm_state ts = q.in[i - 1];
        q.in[i - 1] = q.in[j];
        q.in[j] = ts;
        glm_word tw = q.w[i - 1];
        q.w[i - 1] = q.w[j];
        q.w[j] = tw;
    }
    return q;
}

/* glm_score_states on in[0..n) (into separate outputs, then in place) == glm_score per query. */
static void check_batch(const glm_model *m, const glm_state *in, const glm_word *w, size_t n,
                        const char *what)
{
    float *pe = malloc(n * 4 + 4), *pg = malloc(n * 4 + 4);
    glm_state *oe = malloc(n * sizeof *oe + 1), *og = malloc(n * sizeof *og + 1);
    uint8_t *le = malloc(n + 1), *lg = malloc(n + 1);
    cr_assert(pe && pg && oe && og && le && lg);
    memset(oe, 0xAB, n * sizeof *oe); /* padding included: compared bytewise below */
    for (size_t i = 0; i < n; i++) {
        unsigned l;
        pe[i] = glm_score(m, &in[i], w[i], &oe[i], &l);
        le[i] = (uint8_t)l;
    }
    smt_err e;
    for (int alias = 0; alias < 3; alias++) {
        memset(pg, 0x5A, n * 4);
        memset(lg, 0x5A, n);
        memset(og, 0xAB, n * sizeof *og);
        if (alias == 1)
            memcpy(og, in, n * sizeof *og); /* in place: out == in */
        const glm_state *src = alias == 1 ? og : in;
        cr_assert_eq(glm_score_states(m, src, w, n, pg, og, alias == 2 ? NULL : lg, &e), 0,
                     "%s", e.msg);
        for (size_t i = 0; i < n; i++) {
            cr_assert(memcmp(&pe[i], &pg[i], 4) == 0, "%s n=%zu alias=%d query %zu: %.9g vs %.9g",
                      what, n, alias, i, pe[i], pg[i]);
            if (alias != 2)
                cr_assert_eq(le[i], lg[i], "%s n=%zu query %zu: length %u vs %u", what, n, i,
                             le[i], lg[i]);
            else
                cr_assert_eq(lg[i], 0x5A, "len NULL must not be written");
            /* words, backoffs and length; the bytes after length are padding */
            cr_assert(memcmp(&oe[i], &og[i], offsetof(glm_state, length) + 1) == 0,
                      "%s n=%zu alias=%d query %zu: out state differs", what, n, alias, i);
        }
    }
    free(pe), free(pg), free(oe), free(og), free(le), free(lg);
}

static void check_model(const glm_model *m, const char *text, size_t max_lines, const char *what)
{
    qset q = make_queries(m, text, max_lines);
    cr_assert_gt(q.n, 100);
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 7, 15, 16, 17, 33, 100};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (size_t at = 0; at + sizes[s] <= q.n && at < 200; at += 37)
            check_batch(m, q.in + at, q.w + at, sizes[s], what);
    check_batch(m, q.in, q.w, q.n, what); /* all at once */
    /* bad arguments: nothing written, SMT_ERR_ARG naming the query */
    size_t n = q.n < 50 ? q.n : 50;
    float p[50];
    glm_state o[50];
    smt_err e;
    glm_word keep = q.w[n - 1];
    q.w[n - 1] = glm_vocab_size(m);
    memset(p, 0x5A, sizeof p);
    cr_assert_eq(glm_score_states(m, q.in, q.w, n, p, o, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "out of range") != NULL, "%s", e.msg);
    cr_assert_eq(((uint8_t *)p)[0], 0x5A, "nothing is written on error");
    q.w[n - 1] = keep;
    glm_state bad = q.in[n - 1];
    q.in[n - 1].length = (uint8_t)glm_order(m);
    cr_assert_eq(glm_score_states(m, q.in, q.w, n, p, o, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "state length") != NULL, "%s", e.msg);
    q.in[n - 1].length = 1;
    q.in[n - 1].words[0] = GLM_NONE;
    cr_assert_eq(glm_score_states(m, q.in, q.w, n, p, o, NULL, &e), SMT_ERR_ARG);
    q.in[n - 1] = bad;
    cr_assert_eq(glm_score_states(m, q.in, q.w, n, p, o, NULL, &e), 0, "%s", e.msg);
    free(q.in);
    free(q.w);
}

/* tests/data/glm/<name> built with node size K (quantized when qp), opened; index_all: the
 * big-group index over every group of 2 keys or more, so its probe path runs too. */
static glm_model *build(const char *name, uint32_t K, uint32_t qp, int index_all)
{
    char rel[64];
    snprintf(rel, sizeof rel, "glm/%s", name);
    char *arpa = tu_data_path(rel);
    char *out = tu_join(dir, "m.glm");
    glm_build_options opt = {
        .K = K, .progress = -1, .warn = NULL, .prob_bits = qp, .backoff_bits = qp};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    if (index_all)
        cr_assert_eq(glm_bigidx_build(m, 2, &e), 0, "%s", e.msg);
    free(arpa);
    free(out);
    return m;
}

Test(glm_states, tiny_fixtures_equal_glm_score)
{
    const char *names[] = {"chain.arpa", "suffix.arpa", "zero_context.arpa"};
    const uint32_t Ks[] = {3, 4, 31};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++)
            for (int idx = 0; idx < 2; idx++) {
                glm_model *m = build(names[a], Ks[k], 0, idx);
                char what[96];
                snprintf(what, sizeof what, "%s K=%u index=%d", names[a], Ks[k], idx);
                check_model(m, NULL, 0, what);
                glm_close(m);
            }
}

Test(glm_states, quantized_fixtures_equal_glm_score)
{
    const char *names[] = {"chain.arpa", "suffix.arpa"};
    const uint32_t qs[] = {2, 3, 8};
    for (int a = 0; a < 2; a++)
        for (int q = 0; q < 3; q++)
            for (int idx = 0; idx < 2; idx++) {
                glm_model *m = build(names[a], 3, qs[q], idx);
                unsigned qp;
                cr_assert(glm_quantization(m, &qp, NULL) && qp == qs[q]);
                char what[96];
                snprintf(what, sizeof what, "%s -q %u index=%d", names[a], qs[q], idx);
                check_model(m, NULL, 0, what);
                glm_close(m);
            }
}

Test(glm_states, kenlm_fixtures_equal_glm_score)
{
    const char *bins[] = {"tiny.chain.probing.bin", "tiny.chain.trie.bin",
                          "tiny.chain.trie-q8-b8.bin", "tiny.chain.trie-a22.bin",
                          "tiny.suffix.trie.bin", "tiny.suffix.trie-q8-b8.bin"};
    for (int b = 0; b < 6; b++) {
        char rel[96];
        snprintf(rel, sizeof rel, "glm/kenlm/%s", bins[b]);
        char *path = tu_data_path(rel);
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_open(&m, path, 0, &e), 0, "%s", e.msg);
        cr_assert(strncmp(glm_layout_name(m), "kenlm", 5) == 0);
        check_model(m, NULL, 0, bins[b]);
        glm_close(m);
        free(path);
    }
}

Test(glm_states, bible_lm5_equal_glm_score, .timeout = 600)
{
    char *arpa = tu_shared_path("models/bible-es-en/lm.5.arpa.gz");
    char *text = tu_shared_path("data/bible/test-a.en");
    if (!arpa || !text)
        cr_skip_test("shared data absent: the bible lm.5 comparison did not run");
    char *out = tu_join(dir, "lm5.glm");
    glm_build_options opt = {.K = GLM_DEFAULT_K, .progress = -1, .warn = NULL};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), 0, "%s", e.msg);
    const unsigned flags[2] = {0, GLM_OPEN_INDEX | GLM_OPEN_HUGE};
    for (int f = 0; f < 2; f++) {
        glm_model *m;
        cr_assert_eq(glm_open(&m, out, flags[f], &e), 0, "%s", e.msg);
        check_model(m, text, 300, f ? "bible lm.5 index" : "bible lm.5");
        glm_close(m);
    }
    free(arpa);
    free(text);
    free(out);
}

/* The states of test-a's first 300 lines on a KenLM binary of the shared bible lm.5 (xz packed). */
static void bible_kenlm_states(const char *name, const char *what)
{
    char rel[96];
    snprintf(rel, sizeof rel, "reference/kenlm-binaries/%s.xz", name);
    char *xz = tu_shared_path(rel);
    char *text = tu_shared_path("data/bible/test-a.en");
    if (!xz || !text)
        cr_skip_test("shared data absent: the %s comparison did not run", what);
    char *bin = tu_join(dir, name);
    cr_assert_eq(tu_runf(NULL, NULL, "xz -dc '%s' > '%s'", xz, bin), 0);
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, bin, 0, &e), 0, "%s", e.msg);
    check_model(m, text, 300, what);
    glm_close(m);
    free(xz);
    free(text);
    free(bin);
}

Test(glm_states, bible_lm5_kenlm_probing_equal_glm_score, .timeout = 600)
{
    bible_kenlm_states("bible.lm5.probing.bin", "bible lm.5 kenlm probing");
}

Test(glm_states, bible_lm5_kenlm_quantized_trie_equal_glm_score, .timeout = 600)
{
    bible_kenlm_states("bible.lm5.trie-q8b8.bin", "bible lm.5 kenlm trie -q 8 -b 8");
}
