/* Tests of glm on KenLM binaries (glm/glm_kenlm.c): every output must be exactly what KenLM's
 * query printed for the same binary (tests/data/glm/kenlm: the tiny fixtures' binaries and KenLM's
 * output, copied from ../shared/reference/kenlm-binaries; the sample and bible binaries are read
 * from ../shared and skipped without it) in every layout build_binary writes (rest probing: made
 * here from KenLM's probing files, see make_rest), the state API and rows against the query,
 * Moses's phrase estimates with rest costs, header errors named, and
 * damaged binaries (every truncation, every flipped byte of a small one) refused or scored
 * without a crash. */
#define _GNU_SOURCE /* open_memstream */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glm.h"
#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_lines.h"
#include "smt_words.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(glm_kenlm, .init = setup, .fini = teardown);

/* tests/data/glm/kenlm/tiny.<name>.bin opened with flags. */
static glm_model *open_tiny(const char *name, unsigned flags)
{
    char rel[128];
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.bin", name);
    char *bin = tu_data_path(rel);
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, bin, flags, &e), 0, "%s: %s", bin, e.msg);
    free(bin);
    return m;
}

/* glm_query_lines's whole output for model m on the text at in. Malloc'ed. */
static char *query(const glm_model *m, const char *in, int null_context, int path,
                   unsigned threads)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    glm_query_options opt = {GLM_VERBOSE_WORD, null_context, threads, path, 0};
    smt_err e;
    smt_lines *r = NULL;
    int rc = smt_lines_open(&r, in, 0, &e);
    if (!rc)
        rc = glm_query_lines(m, r, f, &opt, NULL, NULL, &e);
    smt_lines_close(r);
    fclose(f);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return buf;
}

/* Every path (fast, reference, two threads) prints KenLM's expected output exactly, from the
 * file mapped (flags 0) and read into 2 MB pages (GLM_OPEN_HUGE). */
static void expect_query(const char *model, const char *in, const char *expected, int null_context)
{
    size_t n;
    char *want = tu_read_file(expected, &n);
    cr_assert_not_null(want, "%s", expected);
    const unsigned flags[2] = {0, GLM_OPEN_HUGE};
    for (int f = 0; f < 2; f++) {
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_load(&m, model, flags[f], NULL, &e), 0, "%s", e.msg);
        const int paths[3] = {GLM_PATH_FAST, GLM_PATH_REF, GLM_PATH_FAST};
        const unsigned threads[3] = {1, 1, 2};
        for (int i = 0; i < 3; i++) {
            char *got = query(m, in, null_context, paths[i], threads[i]);
            cr_assert_str_eq(got, want, "%s on %s (path %d, %u threads, flags %u)", model, in,
                             paths[i], threads[i], flags[f]);
            free(got);
        }
        glm_close(m);
    }
    free(want);
}

static void tiny_case(const char *name)
{
    char rel[128];
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.bin", name);
    char *bin = tu_data_path(rel);
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.txt", name);
    char *txt = tu_data_path(rel);
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.query", name);
    char *want = tu_data_path(rel);
    expect_query(bin, txt, want, 0);
    free(bin), free(txt), free(want);
}

Test(glm_kenlm, tiny_probing_query_is_kenlms) { tiny_case("chain.probing"); }

/* The probing sentence path prefetches a sliding window of tokens across sentences and keeps
 * their keys in a ring (glm_kenlm.c, probing_sentences): empty lines (sentences of no token with
 * -n), a line longer than the ring (150 words), one-word lines and unknown words between them
 * score exactly as the reference path scores them one word at a time (itself KenLM's output on
 * the fixtures above). */
Test(glm_kenlm, probing_window_across_sentences)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *txt = tu_join(dir, "window.txt");
    char text[4096] = "";
    static const char *const lines[] = {"a b c", "", "c", "", "", "zzz a b", "b"};
    for (int r = 0; r < 20; r++)
        for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
            strcat(text, lines[i]);
            strcat(text, "\n");
        }
    for (int i = 0; i < 50; i++)
        strcat(text, i % 7 == 6 ? "zzz b c " : "a b c ");
    strcat(text, "\nc b a\n\n");
    cr_assert_eq(tu_write_file(txt, text, strlen(text)), 0);
    const unsigned flags[2] = {0, GLM_OPEN_HUGE};
    for (int f = 0; f < 2; f++) {
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_open(&m, bin, flags[f], &e), 0, "%s", e.msg);
        for (int nc = 0; nc < 2; nc++) {
            char *want = query(m, txt, nc, GLM_PATH_REF, 1);
            char *fast = query(m, txt, nc, GLM_PATH_FAST, 1);
            char *two = query(m, txt, nc, GLM_PATH_FAST, 2);
            cr_assert_gt(strlen(want), 1000);
            cr_assert_str_eq(fast, want, "flags %u, -n %d", flags[f], nc);
            cr_assert_str_eq(two, want, "flags %u, -n %d, 2 threads", flags[f], nc);
            free(want), free(fast), free(two);
        }
        glm_close(m);
    }
    free(bin), free(txt);
}
/* trie word ids are KenLM's too: 1 + the rank of the word's hash (a=2, </s>=3, c=4, b=5) */
Test(glm_kenlm, tiny_trie_query_is_kenlms)
{
    tiny_case("chain.trie");
    tiny_case("suffix.trie");
}
Test(glm_kenlm, tiny_quantized_trie_query_is_kenlms)
{
    tiny_case("chain.trie-q8-b8");
    tiny_case("suffix.trie-q8-b8");
}
Test(glm_kenlm, tiny_array_compressed_trie_query_is_kenlms)
{
    tiny_case("chain.trie-a22");
    tiny_case("suffix.trie-a22");
}

/* ---------------------------------------------------------------- rest probing */

/* KenLM's rest probing (build_binary -r "lower.arpa ...": model type 1) is its probing layout
 * with a third float after each unigram's and middle entry's backoff, the n-gram's rest cost
 * (lm/value.hh: RestWeights, entries packed to 4 bytes: 12-byte unigrams, 20-byte middle
 * entries), the tables the same size. No KenLM-made rest file is at hand (its rest costs come
 * from lower-order models), so this widens a KenLM-made probing file into one, each rest cost the
 * n-gram's probability (its sign set, as KenLM reads it) plus delta, and the highest order (which
 * stores no rest) as it is. KenLM's query prints probabilities only, so the widened file must
 * print what KenLM printed for the probing file. */
static void make_rest(const char *probing, const char *out, float delta)
{
    size_t n;
    uint8_t *b = (uint8_t *)tu_read_file(probing, &n);
    cr_assert_not_null(b, "%s", probing);
    const uint8_t *fx = b + GLM_KENLM_SANITY_BYTES;
    unsigned order = fx[0];
    float mult;
    memcpy(&mult, fx + 4, 4);
    uint64_t count[GLM_MAX_ORDER + 1];
    for (unsigned k = 1; k <= order; k++)
        memcpy(&count[k], fx + GLM_KENLM_FIXED_BYTES + 8 * (k - 1), 8);
    uint8_t *o = malloc(2 * n), *q = o;
    size_t at = (size_t)glm_kenlm_header_bytes(order);
    memcpy(q, b, at);
    q[GLM_KENLM_SANITY_BYTES + 8] = 1; /* model type: rest probing */
    q += at;
    size_t vocab = 8 + 12 * (size_t)glm_kenlm_buckets(count[1], mult); /* unchanged */
    memcpy(q, b + at, vocab), q += vocab, at += vocab;
    for (uint64_t i = 0; i <= count[1]; i++, at += 8, q += 12) { /* {prob, backoff, rest} */
        float p;
        memcpy(&p, b + at, 4);
        float rest = -fabsf(p) + delta;
        memcpy(q, b + at, 8);
        memcpy(q + 8, &rest, 4);
    }
    for (unsigned k = 2; k < order; k++) /* {key, prob, backoff, rest}; empty buckets all zero */
        for (uint64_t i = 0; i < glm_kenlm_buckets(count[k], mult); i++, at += 16, q += 20) {
            float p;
            memcpy(&p, b + at + 8, 4);
            uint64_t key;
            memcpy(&key, b + at, 8);
            float rest = key ? -fabsf(p) + delta : 0.0f;
            memcpy(q, b + at, 16);
            memcpy(q + 16, &rest, 4);
        }
    memcpy(q, b + at, n - at); /* the highest order and the words */
    q += n - at;
    cr_assert_eq(tu_write_file(out, (const char *)o, (size_t)(q - o)), 0);
    free(o), free(b);
}

/* A probing table with no empty bucket (only a damaged file has one): its probes wrap at the
 * table's end and stop after their second wrap, so a missing n-gram is missing, not a hang, and
 * every stored one is found as before. The chain file's bigram and trigram tables get every empty
 * bucket filled with keys no n-gram has; each query path prints what KenLM printed. */
Test(glm_kenlm, probing_table_without_empty_bucket)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *txt = tu_data_path("glm/kenlm/tiny.chain.probing.txt");
    char *want = tu_data_path("glm/kenlm/tiny.chain.probing.query");
    char *full = tu_join(dir, "chain.full.bin");
    size_t n;
    uint8_t *b = (uint8_t *)tu_read_file(bin, &n);
    cr_assert_not_null(b, "%s", bin);
    const uint8_t *fx = b + GLM_KENLM_SANITY_BYTES;
    unsigned order = fx[0];
    cr_assert_eq(order, 3);
    float mult;
    memcpy(&mult, fx + 4, 4);
    uint64_t count[4];
    for (unsigned k = 1; k <= order; k++)
        memcpy(&count[k], fx + GLM_KENLM_FIXED_BYTES + 8 * (k - 1), 8);
    size_t at = (size_t)glm_kenlm_header_bytes(order) + 8 +
                12 * (size_t)glm_kenlm_buckets(count[1], mult) + 8 * (size_t)(count[1] + 1);
    unsigned filled = 0;
    for (unsigned k = 2; k <= order; k++) { /* {key, prob, backoff}, then {key, prob} */
        size_t esz = k < order ? 16 : 12;
        for (uint64_t i = 0; i < glm_kenlm_buckets(count[k], mult); i++, at += esz) {
            uint64_t key;
            memcpy(&key, b + at, 8);
            if (key)
                continue;
            key = 0x5bd1e9955bd1e995ull + i + k; /* no n-gram's key here */
            memcpy(b + at, &key, 8);
            filled++;
        }
    }
    cr_assert_gt(filled, 0);
    cr_assert_eq(tu_write_file(full, (const char *)b, n), 0);
    expect_query(full, txt, want, 0);
    free(b), free(bin), free(txt), free(want), free(full);
}

Test(glm_kenlm, rest_probing_query_is_kenlms)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *txt = tu_data_path("glm/kenlm/tiny.chain.probing.txt");
    char *want = tu_data_path("glm/kenlm/tiny.chain.probing.query");
    char *rest = tu_join(dir, "chain.rest.bin");
    make_rest(bin, rest, -0.25f);
    expect_query(rest, txt, want, 0);
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, rest, 0, &e), 0, "%s", e.msg);
    cr_assert_str_eq(glm_layout_name(m), "kenlm rest probing");
    glm_close(m);
    /* the probing sentence path against the reference one, across sentences, with -n too */
    char *many = tu_join(dir, "many.txt");
    char text[2048] = "";
    for (int i = 0; i < 40; i++)
        strcat(text, i % 5 == 4 ? "zzz b c </s>\n" : "a b c a a b\n");
    cr_assert_eq(tu_write_file(many, text, strlen(text)), 0);
    glm_model *p;
    cr_assert_eq(glm_open(&p, bin, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_open(&m, rest, GLM_OPEN_HUGE, &e), 0, "%s", e.msg);
    for (int nc = 0; nc < 2; nc++) {
        char *a = query(p, many, nc, GLM_PATH_FAST, 1), *b = query(m, many, nc, GLM_PATH_FAST, 1),
             *c = query(m, many, nc, GLM_PATH_REF, 1);
        cr_assert_str_eq(b, a, "-n %d", nc);
        cr_assert_str_eq(c, a, "-n %d", nc);
        free(a), free(b), free(c);
    }
    glm_close(m), glm_close(p);
    free(bin), free(txt), free(want), free(rest), free(many);
}

/* Moses's phrase estimate (glm_phrase_estimate, KenLM's RuleScore from the empty context): on the
 * probing file the plain sum of glm_score from the null state, the same float; on the rest file
 * the words at the open left edge count their match's rest cost (the probability - 0.25 here).
 * chain.arpa: a, b, c and </s> are suffixes of bigrams (they extend left), <s> and <unk> are not;
 * "a b" and "b c" are suffixes of trigrams; "a" and "b" (and "a b") have backoffs, "c" and "b c"
 * have none, so after "b c" the state is empty. */
Test(glm_kenlm, rest_probing_phrase_estimates)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *rest = tu_join(dir, "chain.rest.bin");
    make_rest(bin, rest, -0.25f);
    glm_model *p, *r;
    smt_err e;
    cr_assert_eq(glm_open(&p, bin, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_open(&r, rest, 0, &e), 0, "%s", e.msg);
    glm_word a = glm_index(p, "a", 1), b = glm_index(p, "b", 1), c = glm_index(p, "c", 1),
             eos = glm_index(p, "</s>", 4), bos = glm_index(p, "<s>", 3);
    cr_assert(a && b && c && eos && bos);
    const glm_word phrases[][4] = {{c}, {bos}, {a, b}, {b, c, eos}, {a, a, b, c}, {GLM_UNK, a}};
    const size_t lens[] = {1, 1, 2, 3, 4, 2};
    /* the rest file's estimates, as RuleScore adds them (each word's float, in order) */
    const float want[] = {
        0.0f + (-1.2f - 0.25f),                        /* c: extends left, rest */
        0.0f + -99.0f,                                 /* <s>: independent, probability */
        (0.0f + (-0.6f - 0.25f)) + (-0.4f - 0.25f),    /* a, then "a b": both open */
        ((0.0f + (-0.9f - 0.25f)) + (-0.5f - 0.25f)) + -0.7f, /* "b c" empties the state */
        /* a (rest), "a a" (a bigram nothing extends: independent, its probability; the state
         * keeps only "a", as "a a" has no extension), then b ("a b") and c (the trigram "a b c")
         * at their probabilities */
        (((0.0f + (-0.6f - 0.25f)) + -0.45f) + -0.4f) + -0.15f,
        (0.0f + -1.0f) + -0.6f,                        /* <unk> independent: the edge closed */
    };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        glm_state st;
        glm_state_null(&st);
        float sum = 0;
        for (size_t j = 0; j < lens[i]; j++)
            sum += glm_score(p, &st, phrases[i][j], &st, NULL);
        float plain = glm_phrase_estimate(p, phrases[i], lens[i]);
        cr_assert(memcmp(&plain, &sum, 4) == 0, "phrase %zu: %.9g, the sum %.9g", i, plain, sum);
        float got = glm_phrase_estimate(r, phrases[i], lens[i]);
        cr_assert(memcmp(&got, &want[i], 4) == 0, "phrase %zu: %.9g, want %.9g", i, got,
                  want[i]);
    }
    glm_close(p), glm_close(r);
    free(bin), free(rest);
}

/* The tool: `glm query` on the binary prints the same bytes (glm_load's path). */
Test(glm_kenlm, tool_query_is_kenlms)
{
    char *glm = tu_bin_path("glm");
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *txt = tu_data_path("glm/kenlm/tiny.chain.probing.txt");
    char *want = tu_data_path("glm/kenlm/tiny.chain.probing.query");
    char *out = NULL, *errs = NULL;
    int st = tu_runf(&out, &errs, "'%s' query '%s' < '%s'", glm, bin, txt);
    cr_assert_eq(st, 0, "%s", errs);
    size_t n;
    char *w = tu_read_file(want, &n);
    cr_assert_str_eq(out, w);
    free(w), free(out), free(errs), free(glm), free(bin), free(txt), free(want);
}

/* `glm build probing` writes KenLM's own bytes: its output for chain.arpa equals the fixture
 * KenLM's build_binary -s probing made of the same file, byte for byte (and for the sample lm.3
 * and the bible lm.5 against ../shared/reference/kenlm-binaries: probing_writer_shared), and glm
 * reads it back with KenLM's query output; a bad multiplier, -p without probing, -K or -q with
 * it and a missing input are refused, naming what is wrong. */
static void expect_same_bytes(const char *got_path, const char *want_path)
{
    size_t n_got, n_want;
    char *got = tu_read_file(got_path, &n_got), *w = tu_read_file(want_path, &n_want);
    cr_assert(got && w, "%s, %s", got_path, want_path);
    cr_assert_eq(n_got, n_want, "%s: %zu bytes, KenLM's %zu", got_path, n_got, n_want);
    cr_assert(memcmp(got, w, n_want) == 0, "%s: the bytes differ from KenLM's", got_path);
    free(got), free(w);
}

Test(glm_kenlm, probing_writer_is_kenlms_bytes)
{
    char *tool = tu_bin_path("glm");
    char *arpa = tu_data_path("glm/chain.arpa");
    char *want = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    char *txt = tu_data_path("glm/kenlm/tiny.chain.probing.txt");
    char *query = tu_data_path("glm/kenlm/tiny.chain.probing.query");
    char *out = tu_join(dir, "chain.probing.bin");
    char *errs = NULL;
    cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing '%s' '%s'", tool, arpa, out), 0, "%s",
                 errs);
    cr_assert(strstr(errs, "KenLM probing binary"), "%s", errs);
    free(errs);
    expect_same_bytes(out, want);
    expect_query(out, txt, query, 0);
    /* -p changes the tables' size, not the scores */
    cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing -p 3 '%s' '%s'", tool, arpa, out), 0,
                 "%s", errs);
    free(errs);
    size_t n3, n15;
    free(tu_read_file(out, &n3)), free(tu_read_file(want, &n15));
    cr_assert_gt(n3, n15);
    expect_query(out, txt, query, 0);
    const struct {
        const char *args, *says;
    } bad[] = {
        {"build probing -p 1 '%s' '%s'", "-p"},
        {"build probing -p 0.5 '%s' '%s'", "-p"},
        {"build -p 2 '%s' '%s'", "give 'probing'"},
        {"build trie -p 2 '%s' '%s'", "give 'probing'"},
        {"build probing -K 8 '%s' '%s'", "-K"},
        {"build probing -q 8 '%s' '%s'", "trie"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, bad[i].args, arpa, out);
        cr_assert_eq(tu_runf(NULL, &errs, "'%s' %s", tool, cmd), 2, "%s", cmd);
        cr_assert(strstr(errs, bad[i].says), "%s: %s", cmd, errs);
        free(errs);
    }
    cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing '%s/absent.arpa' '%s'", tool, dir, out),
                 1);
    cr_assert(strstr(errs, "absent.arpa"), "%s", errs);
    free(errs);
    free(tool), free(arpa), free(want), free(txt), free(query), free(out);
}

/* A probing build's tables are sized from the header's counts, as KenLM's: suffix.arpa's missing
 * suffixes do not fit them with -p 1.5 (refused as KenLM refuses it, naming the line, no file
 * left), and with -p 3 the file is KenLM's, byte for byte, its header holding the declared
 * counts. */
Test(glm_kenlm, probing_inserted_suffixes_are_kenlms)
{
    char *tool = tu_bin_path("glm"), *arpa = tu_data_path("glm/suffix.arpa");
    char *out = tu_join(dir, "suffix.probing.bin"), *errs = NULL;
    for (int p3 = 1; p3 >= 0; p3--) {
        int rc = tu_runf(NULL, &errs, "'%s' build probing %s '%s' '%s'", tool, p3 ? "-p 3" : "",
                         arpa, out);
        cr_assert_eq(rc, p3 ? 0 : 1, "%s", errs);
        cr_assert(p3 || strstr(errs, "suffix.arpa:20: the 2-grams' probing table is full"), "%s",
                  errs);
        free(errs);
        if (p3) {
            char *want = tu_data_path("glm/kenlm/tiny.suffix.probing-p3.bin");
            expect_same_bytes(out, want);
            free(want);
            cr_assert_eq(unlink(out), 0);
        }
    }
    cr_assert_eq(access(out, F_OK), -1, "a refused build left %s", out);
    free(tool), free(arpa), free(out);
}

/* A probing build stores each n-gram a few lines after reading it: an error still names the
 * n-gram's own line, and a broken line after a duplicate does not hide the duplicate (the first
 * error of the file is the one given). */
Test(glm_kenlm, probing_errors_name_their_line)
{
    char *tool = tu_bin_path("glm");
    char *arpa = tu_join(dir, "dup.arpa"), *out = tu_join(dir, "dup.bin");
    static const char head[] = "\\data\\\nngram 1=5\nngram 2=14\n\n\\1-grams:\n-1\t<unk>\n"
                               "-1\t<s>\t-0.5\n-1\t</s>\n-1\ta\t-0.5\n-1\tb\t-0.5\n\n\\2-grams:\n";
    static const char *const pairs[] = {"<s> a", "<s> b", "a b", "b a", "a </s>", "b </s>",
                                        "a a", "b b", "<s> a", "<s> </s>", "a <unk>",
                                        "b <unk>", "<s> <unk>", "<unk> a"};
    for (int broken = 0; broken < 2; broken++) {
        char text[2048];
        size_t n = (size_t)snprintf(text, sizeof text, "%s", head);
        for (int i = 0; i < 14; i++) /* line 13 + i; the duplicate "<s> a" at line 21 */
            n += (size_t)snprintf(text + n, sizeof text - n, "%s\t%s\n",
                                  broken && i == 11 ? "junk" : "-0.5", pairs[i]);
        n += (size_t)snprintf(text + n, sizeof text - n, "\n\\end\\\n");
        cr_assert_eq(tu_write_file(arpa, text, n), 0);
        char *errs = NULL;
        cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing '%s' '%s'", tool, arpa, out), 1,
                     "%s", errs);
        cr_assert(strstr(errs, "dup.arpa:21: duplicate 2-gram"), "%s", errs);
        cr_assert_eq(access(out, F_OK), -1);
        free(errs);
    }
    free(tool), free(arpa), free(out);
}

/* KenLM binaries of ARPA files without <unk> (tests/data/glm/chain_nounk.arpa, upper_nounk.arpa):
 * KenLM's header then counts the ARPA's unigrams, one fewer than the words, and <unk> gets -100
 * and backoff +0.0. Every layout (rest probing too), the ARPA itself and glm's own formats of it
 * print what KenLM's query printed; `glm build probing` writes KenLM's bytes. */
Test(glm_kenlm, nounk_query_is_kenlms)
{
    static const char *const names[] = {"chain_nounk.probing", "chain_nounk.rest",
                                        "chain_nounk.trie", "chain_nounk.trie-q8-b8",
                                        "chain_nounk.trie-a22", "upper_nounk.probing",
                                        "upper_nounk.trie"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        tiny_case(names[i]);
    char *tool = tu_bin_path("glm");
    char *arpa = tu_data_path("glm/chain_nounk.arpa");
    char *kb = tu_data_path("glm/kenlm/tiny.chain_nounk.probing.bin");
    char *txt = tu_data_path("glm/kenlm/tiny.chain_nounk.probing.txt");
    char *want = tu_data_path("glm/kenlm/tiny.chain_nounk.probing.query");
    expect_query(arpa, txt, want, 0);
    static const char *const builds[] = {"build probing", "build", "build -q 8 -b 8"};
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        char *out = tu_join(dir, "nounk.bin"), *errs = NULL;
        cr_assert_eq(tu_runf(NULL, &errs, "'%s' %s '%s' '%s'", tool, builds[i], arpa, out), 0,
                     "%s", errs);
        free(errs);
        if (i == 0)
            expect_same_bytes(out, kb);
        if (i < 2) /* quantized: other numbers */
            expect_query(out, txt, want, 0);
        free(out);
    }
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, kb, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_vocab_size(m), 6);
    cr_assert_eq(glm_count(m, 1), 6); /* the stored words, <unk> included */
    cr_assert_str_eq(glm_word_str(m, 0, NULL), "<unk>");
    cr_assert_eq(glm_index(m, "c", 1), 5);
    glm_close(m);
    free(tool), free(arpa), free(kb), free(txt), free(want);
}

/* A value KenLM's Python module gave on a model (the fixture's "name<TAB>value" lines). */
static long long kenlm_fact(const char *path, const char *name)
{
    size_t n;
    char *t = tu_read_file(path, &n);
    cr_assert_not_null(t, "%s", path);
    size_t k = strlen(name);
    const char *at = t;
    while (at && !(strncmp(at, name, k) == 0 && at[k] == '\t'))
        at = (at = strchr(at, '\n')) ? at + 1 : NULL;
    cr_assert_not_null(at, "%s: no %s", path, name);
    long long v = strtoll(at + k + 1, NULL, 10);
    free(t);
    return v;
}

/* After an unknown word, a model without <unk> keeps it in the state as KenLM does (its <unk>
 * backoff +0.0 "extends"): length 1, word 0, unequal to the null state, equal after <s> or not,
 * and hashed as KenLM hashes it (tiny.chain_nounk.<layout>.state: what KenLM's module gave). The
 * score is -100 either way. */
Test(glm_kenlm, nounk_state_after_unknown_is_kenlms)
{
    static const char *const layouts[] = {"probing", "rest", "trie", "trie-q8-b8", "trie-a22",
                                          "arpa"};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "glm/kenlm/tiny.chain_nounk.%s.state", layouts[i]);
        char *facts = tu_data_path(rel);
        if (strcmp(layouts[i], "arpa") == 0)
            snprintf(rel, sizeof rel, "glm/chain_nounk.arpa");
        else
            snprintf(rel, sizeof rel, "glm/kenlm/tiny.chain_nounk.%s.bin", layouts[i]);
        char *path = tu_data_path(rel);
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_load(&m, path, 0, NULL, &e), 0, "%s", e.msg);
        glm_state null, begin, unk, bunk, unk_a, a;
        glm_state_null(&null);
        glm_state_begin(m, &begin);
        glm_word zzz = glm_index(m, "zzz", 3), wa = glm_index(m, "a", 1);
        cr_assert_eq(zzz, GLM_UNK);
        float p = glm_score(m, &null, zzz, &unk, NULL);
        cr_assert(p == -100.0f, "%s: %g", path, (double)p);
        cr_assert(glm_score(m, &begin, zzz, &bunk, NULL) == -100.5f);
        cr_assert_eq(unk.length, 1, "%s", path);
        cr_assert_eq(unk.words[0], GLM_UNK);
        cr_assert(glm_state_equal(&unk, &bunk));
        cr_assert(!glm_state_equal(&unk, &null));
        glm_state ref;
        glm_score_ref(m, &null, zzz, &ref, NULL);
        cr_assert(memcmp(&ref, &unk, sizeof ref) == 0, "%s", path);
        glm_score(m, &unk, wa, &unk_a, NULL);
        glm_score(m, &null, wa, &a, NULL);
        cr_assert(glm_state_equal(&unk_a, &a));
        cr_assert_eq((long long)glm_state_hash(&null), kenlm_fact(facts, "hash(null)"));
        cr_assert_eq((long long)glm_state_hash(&unk), kenlm_fact(facts, "hash(unk)"), "%s", path);
        cr_assert_eq((long long)glm_state_hash(&a), kenlm_fact(facts, "hash(a)"), "%s", path);
        glm_close(m);
        free(facts), free(path);
    }
}

Test(glm_kenlm, probing_writer_shared, .timeout = 300)
{
    char *tool = tu_bin_path("glm");
    char *out = tu_join(dir, "out.bin");
    const char *cases[2][2] = {
        {"../../examples/sample/lm.3.arpa.gz", "reference/kenlm-binaries/sample.lm3.probing.bin"},
        {NULL, "reference/kenlm-binaries/bible.lm5.probing.bin.xz"}};
    char *bible = tu_shared_path("models/bible-es-en/lm.5.arpa.gz"); /* NULL: absent */
    for (int c = 0; c < 2; c++) {
        char *arpa = c == 0 ? tu_data_path(cases[0][0]) : bible ? strdup(bible) : NULL;
        char *want = tu_shared_path(cases[c][1]);
        if (!want || !arpa) {
            free(arpa), free(want), free(tool), free(out), free(bible);
            cr_skip_test("../shared (models, reference/kenlm-binaries) is absent");
        }
        char *errs = NULL;
        cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing '%s' '%s'", tool, arpa, out), 0,
                     "%s", errs);
        free(errs);
        if (c == 1) { /* KenLM's file is xz-compressed in ../shared */
            if (system("command -v xz > /dev/null 2>&1") != 0) {
                free(arpa), free(want), free(tool), free(out), free(bible);
                cr_skip_test("xz (to unpack KenLM's bible lm.5 binary) is not installed");
            }
            char *plain = tu_join(dir, "want.bin");
            cr_assert_eq(tu_runf(NULL, &errs, "xz -dc '%s' > '%s'", want, plain), 0, "%s", errs);
            free(errs), free(want);
            want = plain;
        }
        expect_same_bytes(out, want);
        free(arpa), free(want);
    }
    free(tool), free(out), free(bible);
}

/* KenLM's bucket is key % buckets; glm computes it with a multiplication (glm_kenlm_bucket):
 * exact for every key, checked on table sizes of every magnitude, keys at the edges and random. */
Test(glm_kenlm, bucket_is_the_remainder)
{
    uint64_t x = 0x9E3779B97F4A7C15ull;
    const uint64_t sizes[] = {1, 2, 3, 7, 9, 64, 1000, 65537, 1u << 20, 2796202, 4294967291ull,
                              (1ull << 40) + 13, UINT64_MAX / 3, UINT64_MAX};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        glm_kenlm_table t = {0};
        glm_kenlm_table_size(&t, sizes[s]);
        uint64_t b = sizes[s], top = UINT64_MAX / b * b; /* the largest multiple */
        const uint64_t edges[] = {0, 1, b - 1, b, b + 1, UINT64_MAX, UINT64_MAX - 1, 1ull << 63,
                                  top, top - 1, b > 1 ? top - b : 0, b > 1 ? top - b + 1 : 0,
                                  (UINT64_MAX / 2 / b) * b, (UINT64_MAX / 2 / b) * b - 1};
        for (size_t e = 0; e < sizeof edges / sizeof edges[0]; e++)
            cr_assert_eq(glm_kenlm_bucket(&t, edges[e]), edges[e] % sizes[s]);
        for (int i = 0; i < 100000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
            cr_assert_eq(glm_kenlm_bucket(&t, x), x % sizes[s], "%llu %% %llu",
                         (unsigned long long)x, (unsigned long long)sizes[s]);
        }
    }
}

/* MurmurHash64A (seed 0) as its reference states it: the tail's bytes one at a time. */
static uint64_t murmur64a_bytes(const uint8_t *p, size_t len)
{
    const uint64_t m = 0xc6a4a7935bd1e995ull;
    uint64_t h = (uint64_t)len * m;
    size_t i = 0;
    for (; i + 8 <= len; i += 8) {
        uint64_t k = 0;
        for (unsigned b = 0; b < 8; b++)
            k |= (uint64_t)p[i + b] << (8 * b);
        k *= m;
        k ^= k >> 47;
        k *= m;
        h ^= k;
        h *= m;
    }
    if (len - i) {
        for (size_t b = 0; b < len - i; b++)
            h ^= (uint64_t)p[i + b] << (8 * b);
        h *= m;
    }
    h ^= h >> 47;
    h *= m;
    h ^= h >> 47;
    return h;
}

/* glm_kenlm_word_hash (the tail read in 4-, 2- and 1-byte loads) is MurmurHash64A on every length
 * of 0 to 40 bytes at every alignment, bytes of every value. */
Test(glm_kenlm, word_hash_is_murmur64a)
{
    uint8_t buf[64];
    uint64_t x = 0x243F6A8885A308D3ull;
    for (int round = 0; round < 200; round++) {
        for (size_t i = 0; i < sizeof buf; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[i] = round < 2 ? (uint8_t)(0xff * round) : (uint8_t)x;
        }
        for (size_t off = 0; off < 8; off++)
            for (size_t len = 0; len <= 40; len++)
                cr_assert_eq(glm_kenlm_word_hash((const char *)buf + off, len),
                             murmur64a_bytes(buf + off, len), "round %d offset %zu length %zu",
                             round, off, len);
    }
}

/* The model's vocabulary and counts: KenLM's ids (<unk> 0, then ARPA order), the stored words. */
Test(glm_kenlm, vocabulary_and_counts)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, bin, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_order(m), 3);
    cr_assert_eq(glm_vocab_size(m), 6);
    cr_assert_eq(glm_count(m, 1), 6);
    cr_assert_eq(glm_count(m, 2), 5);
    cr_assert_eq(glm_count(m, 3), 2);
    cr_assert_eq(glm_file_size(m), 477);
    static const char *const words[6] = {"<unk>", "<s>", "</s>", "a", "b", "c"};
    for (glm_word i = 0; i < 6; i++) {
        cr_assert_eq(glm_index(m, words[i], strlen(words[i])), i, "%s", words[i]);
        size_t len;
        const char *s = glm_word_str(m, i, &len);
        cr_assert_not_null(s);
        cr_assert_eq(len, strlen(words[i]));
        cr_assert_str_eq(s, words[i]);
    }
    glm_model *v = NULL;
    cr_assert_eq(glm_open(&v, bin, GLM_OPEN_VERIFY, &e), SMT_ERR_UNSUPPORTED);
    cr_assert(strstr(e.msg, "no checksums"), "%s", e.msg);
    cr_assert_null(v);
    cr_assert_eq(glm_index(m, "zzz", 3), GLM_UNK);
    cr_assert_eq(glm_index(m, "", 0), GLM_UNK);
    cr_assert_eq(glm_bos(m), 1);
    cr_assert_eq(glm_eos(m), 2);
    glm_close(m);
    free(bin);
}

/* The state API gives KenLM's numbers (chain.arpa by hand, as test_glm checks on the .glm):
 * "<s> a b c </s>": a after <s> -0.3; b after "<s> a" -0.1 (trigram); c after "a b" -0.15
 * (trigram), </s> after "b c": no "c </s>", so p(</s>) -0.7 plus the backoff of "b c"
 * (none: -0.0) and of c (-0.0) = -0.7; and rows equal states. */
Test(glm_kenlm, states_and_rows)
{
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, bin, 0, &e), 0, "%s", e.msg);
    const glm_word sent[4] = {3, 4, 5, 2}; /* a b c </s> */
    const float want[4] = {-0.3f, -0.1f, -0.15f, -0.7f};
    const unsigned wlen[4] = {2, 3, 3, 1};
    glm_state s, r;
    glm_state_begin(m, &s);
    cr_assert_eq(s.length, 1);
    cr_assert_eq(s.words[0], 1);
    cr_assert_float_eq(s.backoff[0], -0.5f, 0);
    glm_word rows[4 * 3];
    for (int i = 0; i < 4; i++) {
        unsigned len;
        glm_state before = s;
        float p = glm_score(m, &s, sent[i], &s, &len);
        float q = glm_score_ref(m, &before, sent[i], &r, NULL);
        cr_assert(p == want[i], "word %d: %g, want %g", i, (double)p, (double)want[i]);
        cr_assert(q == p);
        cr_assert_eq(len, wlen[i], "word %d: length %u", i, len);
        cr_assert(glm_state_equal(&s, &r));
        /* the row of this word: its two previous words (<s> first), padded */
        glm_word *row = rows + i * 3;
        row[0] = i >= 2 ? sent[i - 2] : (i == 1 ? 1u : GLM_NONE);
        row[1] = i >= 1 ? sent[i - 1] : 1u;
        row[2] = sent[i];
    }
    float pr[4], pf[4];
    uint8_t lr[4], lf[4];
    cr_assert_eq(glm_score_rows_ref(m, rows, 4, pr, lr, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_score_rows(m, rows, 4, pf, lf, 1, &e), 0, "%s", e.msg);
    for (int i = 0; i < 4; i++) {
        cr_assert(pr[i] == want[i], "row %d: %g", i, (double)pr[i]);
        cr_assert(pf[i] == want[i], "row %d: %g", i, (double)pf[i]);
        cr_assert_eq(lr[i], wlen[i]);
        cr_assert_eq(lf[i], wlen[i]);
    }
    rows[0] = 6; /* out of range */
    cr_assert_eq(glm_score_rows(m, rows, 4, pf, lf, 1, &e), SMT_ERR_ARG);
    glm_gpu *g;
    cr_assert_eq(glm_gpu_create(&g, m, &e), SMT_ERR_UNSUPPORTED);
    glm_close(m);
    free(bin);
}

/* Many rows, every layout: the fast rows (two threads, a batch big enough to be split) equal the
 * reference rows bit for bit. */
Test(glm_kenlm, threaded_rows_equal_reference)
{
    static const char *const names[] = {"chain.probing", "chain.trie", "chain.trie-q8-b8",
                                        "chain.trie-a22", "suffix.trie-a22"};
    enum { ROWS = 6000 };
    glm_word *rows = malloc(ROWS * GLM_MAX_ORDER * sizeof *rows);
    float *pr = malloc(ROWS * sizeof *pr), *pf = malloc(ROWS * sizeof *pf);
    uint8_t *lr = malloc(ROWS), *lf = malloc(ROWS);
    cr_assert(rows && pr && pf && lr && lf);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        glm_model *m = open_tiny(names[i], 0);
        smt_err e;
        unsigned N = glm_order(m);
        uint32_t V = glm_vocab_size(m), x = 12345;
        for (size_t r = 0; r < ROWS; r++)
            for (unsigned k = 0; k < N; k++) {
                x = x * 1103515245u + 12345u;
                glm_word w = (x >> 8) % V;
                rows[r * N + k] = (k == 0 && (x >> 4) % 3 == 0) ? GLM_NONE : w;
            }
        cr_assert_eq(glm_score_rows_ref(m, rows, ROWS, pr, lr, &e), 0, "%s", e.msg);
        cr_assert_eq(glm_score_rows(m, rows, ROWS, pf, lf, 2, &e), 0, "%s", e.msg);
        cr_assert(memcmp(pr, pf, ROWS * sizeof *pr) == 0 && memcmp(lr, lf, ROWS) == 0, "%s",
                  names[i]);
        glm_close(m);
    }
    free(rows), free(pr), free(pf), free(lr), free(lf);
}

/* A damaged copy: every truncation is an error; every single flipped byte is an error or a model
 * that scores the text without a crash (KenLM's hash tables carry no checksum). Opened with
 * flags: mapped (0) or read into 2 MB pages (GLM_OPEN_HUGE). */
static int damaged_with(const char *name, long long checked, unsigned flags)
{
    char rel[128];
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.bin", name);
    char *src = tu_data_path(rel);
    snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.txt", name);
    char *txt = tu_data_path(rel);
    char *bad = tu_join(dir, "bad.bin");
    long long size = tu_file_size(src);
    cr_assert_gt(size, 0);
    for (long long cut = 0; cut < size; cut++) {
        cr_assert_eq(tu_copy_file(src, bad), 0);
        cr_assert_eq(tu_truncate(bad, (uint64_t)cut), 0);
        glm_model *m = NULL;
        smt_err e;
        int rc = glm_open(&m, bad, flags, &e);
        cr_assert_lt(rc, 0, "cut at %lld opened (flags %u)", cut, flags);
        cr_assert_null(m);
        cr_assert_gt(strlen(e.msg), 0);
    }
    int refused = 0;
    for (long long at = 0; at < size; at++) {
        cr_assert_eq(tu_copy_file(src, bad), 0);
        cr_assert_eq(tu_flip_bit(bad, (uint64_t)at, 5), 0);
        glm_model *m = NULL;
        smt_err e;
        int rc = glm_open(&m, bad, flags, &e);
        cr_assert(rc != 0 || at >= checked, "%s: a flip at %lld of the sanity block opened", name,
                  at);
        if (rc) {
            cr_assert_null(m);
            cr_assert(strstr(e.msg, "bad.bin"), "%s", e.msg);
            refused++;
            continue;
        }
        char *out = query(m, txt, 0, GLM_PATH_FAST, 1);
        free(out);
        glm_close(m);
    }
    free(src), free(txt), free(bad);
    return refused;
}

/* The same refusals whether the file is mapped or read into 2 MB pages; returns their number. */
static int damaged(const char *name, long long checked)
{
    int mapped = damaged_with(name, checked, 0), huge = damaged_with(name, checked, GLM_OPEN_HUGE);
    cr_assert_eq(mapped, huge, "%s: %d flips refused mapped, %d in 2 MB pages", name, mapped, huge);
    return mapped;
}

Test(glm_kenlm, damaged_binaries)
{
    /* the sanity block, the parameters (not their padding), the vocabulary table's ids and the
     * word list are checked: 195 of the 477 bytes refuse a flip of bit 5 */
    int refused = damaged("chain.probing", 88);
    cr_assert_eq(refused, 195, "%d refused", refused);
    /* the trie: the header, the sorted vocabulary, the unigrams' child pointers, the words */
    refused = damaged("chain.trie", 88);
    cr_assert_gt(refused, 100, "%d refused", refused);
    /* the quantized trie: its quantization header too (the bins are plain floats) */
    refused = damaged("chain.trie-q8-b8", 88);
    cr_assert_gt(refused, 100, "%d refused", refused);
    /* array-compressed pointers: their header and offset array too */
    refused = damaged("chain.trie-a22", 88);
    cr_assert_gt(refused, 100, "%d refused", refused);
}

/* Named header errors: a wrong count, another version, an incomplete build, another order. */
Test(glm_kenlm, header_errors_named)
{
    char *src = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    size_t n;
    char *b = tu_read_file(src, &n);
    cr_assert_not_null(b);
    char *bad = tu_join(dir, "h.bin");
    struct {
        size_t at;
        const char *bytes;
        size_t len;
        int code;
        const char *msg;
    } cases[] = {
        {0x74, "\x07", 1, SMT_ERR_CORRUPT, "too short"},             /* 7 bigrams */
        {0x6c, "\x07", 1, SMT_ERR_CORRUPT, "vocabulary holds"},      /* 7 unigrams */
        {0x31, "4", 1, SMT_ERR_VERSION, "version \"4"},              /* format version 4 */
        {0x58, "\x07", 1, SMT_ERR_UNSUPPORTED, "order 7"},           /* order 7 */
        {0x60, "\x01", 1, SMT_ERR_CORRUPT, "too short"},            /* sized as rest probing */
        {0x60, "\x09", 1, SMT_ERR_CORRUPT, "unknown model type 9"},  /* no such layout */
        {0x3f, "\x00", 1, SMT_ERR_FORMAT, "test values"},            /* 1.0f damaged */
        {0x35, "\x01", 1, SMT_ERR_FORMAT, "test values"},            /* magic's padding */
        {0x5c, "\x00\x00\x80\x3f", 4, SMT_ERR_CORRUPT, "multiplier"}, /* multiplier 1.0 */
        {0x22, "incomplete\n", 11, SMT_ERR_INCOMPLETE, "did not finish"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *c = malloc(n);
        memcpy(c, b, n);
        memcpy(c + cases[i].at, cases[i].bytes, cases[i].len);
        cr_assert_eq(tu_write_file(bad, c, n), 0);
        glm_model *m = NULL;
        smt_err e;
        cr_assert_eq(glm_load(&m, bad, 0, NULL, &e), cases[i].code, "case %zu: %s", i, e.msg);
        cr_assert(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
        free(c);
    }
    free(b), free(src), free(bad);
}

/* ../shared: the sample lm.3 and the bible lm.5 probing binaries on the first 200 lines of test-a,
 * with and without -n. */
static void shared_case(const char *bin_rel, const char *name)
{
    char *bin = tu_shared_path(bin_rel);
    char *txt = tu_shared_path("reference/kenlm-binaries/query/test-a.200.en");
    if (!bin || !txt) {
        free(bin), free(txt);
        cr_skip_test("../shared/reference/kenlm-binaries is absent");
    }
    char rel[256];
    snprintf(rel, sizeof rel, "reference/kenlm-binaries/query/%s.test-a.200.query", name);
    char *want = tu_shared_path(rel);
    snprintf(rel, sizeof rel, "reference/kenlm-binaries/query/%s.test-a.200.n.query", name);
    char *want_n = tu_shared_path(rel);
    cr_assert(want && want_n);
    char *model = bin;
    size_t bl = strlen(bin);
    if (bl > 3 && strcmp(bin + bl - 3, ".xz") == 0) { /* unpacked into the temp dir */
        model = tu_join(dir, "model.bin");
        char *err = NULL;
        int st = tu_runf(NULL, &err, "xz -dc '%s' > '%s'", bin, model);
        cr_assert_eq(st, 0, "xz: %s", err);
        free(err);
    }
    expect_query(model, txt, want, 0);
    expect_query(model, txt, want_n, 1);
    if (model != bin)
        free(model);
    free(bin), free(txt), free(want), free(want_n);
}

Test(glm_kenlm, shared_sample_lm3_probing)
{
    shared_case("reference/kenlm-binaries/sample.lm3.probing.bin", "sample.lm3.probing");
}

Test(glm_kenlm, shared_bible_lm5_probing)
{
    shared_case("reference/kenlm-binaries/bible.lm5.probing.bin.xz", "bible.lm5.probing");
}

/* The sample lm.3 widened into rest probing (make_rest) prints what KenLM printed for its probing
 * file, with and without -n. */
Test(glm_kenlm, shared_sample_lm3_rest_probing)
{
    char *bin = tu_shared_path("reference/kenlm-binaries/sample.lm3.probing.bin");
    char *txt = tu_shared_path("reference/kenlm-binaries/query/test-a.200.en");
    if (!bin || !txt) {
        free(bin), free(txt);
        cr_skip_test("../shared/reference/kenlm-binaries is absent");
    }
    char *want =
        tu_shared_path("reference/kenlm-binaries/query/sample.lm3.probing.test-a.200.query");
    char *want_n =
        tu_shared_path("reference/kenlm-binaries/query/sample.lm3.probing.test-a.200.n.query");
    cr_assert(want && want_n);
    char *rest = tu_join(dir, "lm3.rest.bin");
    make_rest(bin, rest, -0.5f);
    expect_query(rest, txt, want, 0);
    expect_query(rest, txt, want_n, 1);
    free(bin), free(txt), free(want), free(want_n), free(rest);
}

Test(glm_kenlm, shared_sample_lm3_trie)
{
    shared_case("reference/kenlm-binaries/sample.lm3.trie.bin", "sample.lm3.trie");
}

Test(glm_kenlm, shared_sample_lm3_quantized_trie)
{
    shared_case("reference/kenlm-binaries/sample.lm3.trie-q8b8.bin", "sample.lm3.trie-q8b8");
}

Test(glm_kenlm, shared_sample_lm3_array_compressed_tries)
{
    shared_case("reference/kenlm-binaries/sample.lm3.trie-a22.bin", "sample.lm3.trie-a22");
    shared_case("reference/kenlm-binaries/sample.lm3.trie-a22q8b8.bin", "sample.lm3.trie-a22q8b8");
}

Test(glm_kenlm, shared_bible_lm5_quantized_trie)
{
    shared_case("reference/kenlm-binaries/bible.lm5.trie-q8b8.bin.xz", "bible.lm5.trie-q8b8");
}

/* ---------------------------------------------------------------- glm's own quantized files */

/* The text with every "=<digits>" reduced to "=" (word ids: a KenLM trie numbers words by their
 * hash, glm by the ARPA order, so only the ids may differ). Malloc'ed. */
static char *strip_ids(const char *s)
{
    char *o = malloc(strlen(s) + 1), *q = o;
    for (const char *p = s; *p;) {
        *q++ = *p;
        if (*p++ == '=')
            while (*p >= '0' && *p <= '9')
                p++;
    }
    *q = 0;
    return o;
}

/* glm build -q 8 -b 8 of an ARPA file queried on every path prints what KenLM's query printed
 * for build_binary trie -q 8 -b 8 of the same file (KenLM's binning, reproduced exactly), ids
 * aside, with and without -n. */
static void quantized_case(char *arpa, const char *name)
{
    char *txt = tu_shared_path("reference/kenlm-binaries/query/test-a.200.en");
    if (!arpa || !txt) {
        free(arpa), free(txt);
        cr_skip_test("../shared (models, reference/kenlm-binaries) is absent");
    }
    char *model = tu_join(dir, "q.glm");
    glm_build_options opt = {
        .K = GLM_DEFAULT_K, .progress = -1, .prob_bits = 8, .backoff_bits = 8};
    smt_err e;
    cr_assert_eq(glm_build(arpa, model, &opt, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, model, GLM_OPEN_INDEX | GLM_OPEN_HUGE, &e), 0, "%s", e.msg);
    for (int nc = 0; nc < 2; nc++) {
        char rel[256];
        snprintf(rel, sizeof rel, "reference/kenlm-binaries/query/%s.test-a.200%s.query", name,
                 nc ? ".n" : "");
        char *want_path = tu_shared_path(rel);
        cr_assert_not_null(want_path, "%s", rel);
        size_t n;
        char *raw = tu_read_file(want_path, &n), *want = strip_ids(raw);
        const int paths[3] = {GLM_PATH_FAST, GLM_PATH_REF, GLM_PATH_FAST};
        const unsigned threads[3] = {1, 1, 2};
        for (int i = 0; i < 3; i++) {
            char *got = query(m, txt, nc, paths[i], threads[i]), *g = strip_ids(got);
            cr_assert_str_eq(g, want, "%s -n %d path %d threads %u", name, nc, paths[i],
                             threads[i]);
            free(got), free(g);
        }
        free(raw), free(want), free(want_path);
    }
    glm_close(m);
    free(arpa), free(txt), free(model);
}

Test(glm_kenlm, glm_quantized_sample_lm3_is_kenlms)
{
    quantized_case(tu_data_path("../../examples/sample/lm.3.arpa.gz"), "sample.lm3.trie-q8b8");
}

Test(glm_kenlm, glm_quantized_bible_lm5_is_kenlms, .timeout = 300)
{
    quantized_case(tu_shared_path("models/bible-es-en/lm.5.arpa.gz"), "bible.lm5.trie-q8b8");
}

/* glm_layout_name and glm_quantization tell each KenLM layout (what bench_glm labels sizes by and
 * glm info prints), from the files themselves. */
Test(glm_kenlm, layout_names)
{
    const struct { const char *file, *name; unsigned qp, qb; } cases[] = {
        {"tiny.chain.probing.bin", "kenlm probing", 0, 0},
        {"tiny.chain.trie.bin", "kenlm trie", 0, 0},
        {"tiny.chain.trie-q8-b8.bin", "kenlm trie -q", 8, 8},
        {"tiny.chain.trie-a22.bin", "kenlm trie -a", 0, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "glm/kenlm/%s", cases[i].file);
        char *path = tu_data_path(rel);
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_open(&m, path, 0, &e), 0, "%s", e.msg);
        cr_assert_str_eq(glm_layout_name(m), cases[i].name);
        unsigned qp = 99, qb = 99;
        cr_assert_eq(glm_quantization(m, &qp, &qb), cases[i].qp != 0, "%s", cases[i].file);
        cr_assert(qp == cases[i].qp && qb == cases[i].qb, "%s: %u/%u", cases[i].file, qp, qb);
        glm_close(m);
        free(path);
    }
    char *glm = tu_bin_path("glm"), *bin = tu_data_path("glm/kenlm/tiny.chain.trie-q8-b8.bin");
    char *out = NULL;
    cr_assert_eq(tu_runf(&out, NULL, "%s info %s", glm, bin), 0);
    cr_assert(strstr(out, "layout\tkenlm trie -q\nquantized\t8 prob bits, 8 backoff bits\n"), "%s",
              out);
    free(out), free(glm), free(bin);
}

/* glm_score_lines's per-token outputs on model m: on 5,000 lines of its words (lines of 0 to 79
 * tokens, unknown words and a NUL among them), every bos/eos setting, one and two threads, each
 * token's log10 p (bit for bit), matched length and id equal glm_score's walk word by word; too
 * small a token_cap is refused with nothing written. */
static void expect_token_scores(const glm_model *m, const char *what, size_t NL)
{
    uint32_t V = glm_vocab_size(m);
    char **lines = malloc(NL * sizeof *lines);
    size_t *lens = malloc(NL * sizeof *lens), ntok_max = 0, room = 0;
    cr_assert(lines && lens);
    uint64_t r = 88172645463325252ull;
    for (size_t i = 0; i < NL; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        unsigned nw = (unsigned)(r >> 33) % (i % 50 ? 25 : 80);
        char *s = malloc(nw * 40 + 8);
        cr_assert_not_null(s);
        size_t n = 0;
        for (unsigned w = 0; w < nw; w++) {
            r = r * 6364136223846793005ull + 1442695040888963407ull;
            uint32_t pick = (uint32_t)(r >> 35);
            size_t wl;
            const char *word = pick % 9 == 0 ? "qqunknown" : glm_word_str(m, pick % V, &wl);
            if (pick % 9 == 0)
                wl = strlen(word);
            if (wl > 32)
                wl = 32;
            memcpy(s + n, word, wl);
            n += wl;
            s[n++] = pick % 13 == 0 ? '\t' : ' ';
        }
        if (i % 97 == 5 && n > 2)
            s[n / 2] = '\0'; /* a NUL separates words, as in glm query's text */
        lines[i] = s;
        lens[i] = n;
        ntok_max += smt_words_count(s, n, SMT_WS_SPACE) + 1;
        room += (n + 1) / 2 + 1; /* the most tokens n bytes can hold, </s> included */
    }
    float *prob = malloc(room * sizeof *prob), *total = malloc(NL * sizeof *total);
    uint8_t *len = malloc(room);
    glm_word *id = malloc(room * sizeof *id);
    cr_assert(prob && total && len && id);
    smt_err e;
    for (int bos = 0; bos < 2; bos++)
        for (int eos = 0; eos < 2; eos++)
            for (unsigned th = 1; th <= 4; th++) {
                /* threads 3 and 4: 1 and 2 with arrays of room for every byte's token */
                size_t ntok = ntok_max - (eos ? 0 : NL);
                glm_lines_options o = {.bos = bos, .eos = eos, .threads = (th + 1) / 2,
                                       .token_prob = prob, .token_len = len, .token_word = id,
                                       .token_cap = th > 2 ? room : ntok};
                memset(len, 0xee, room);
                cr_assert_eq(glm_score_lines(m, (const char *const *)lines, lens, NL, &o, total,
                                             NULL, NULL, &e), 0, "%s: %s", what, e.msg);
                size_t t = 0;
                for (size_t i = 0; i < NL; i++) {
                    glm_state st;
                    if (bos)
                        glm_state_begin(m, &st);
                    else
                        glm_state_null(&st);
                    const char *pos = lines[i], *end = lines[i] + lens[i], *w;
                    size_t wl;
                    int more = 1;
                    float sum = 0;
                    while (more) {
                        glm_word want;
                        if (smt_word_next(&pos, end, SMT_WS_SPACE, &w, &wl))
                            want = glm_index(m, w, wl);
                        else if (eos)
                            want = glm_eos(m), more = 0;
                        else
                            break;
                        unsigned nl;
                        float p = glm_score(m, &st, want, &st, &nl);
                        sum += p;
                        cr_assert_lt(t, ntok, "%s", what);
                        cr_assert(memcmp(&p, &prob[t], sizeof p) == 0,
                                  "%s bos %d eos %d threads %u line %zu token %zu: %.9g != %.9g",
                                  what, bos, eos, th, i, t, (double)prob[t], (double)p);
                        cr_assert_eq(len[t], nl, "%s line %zu token %zu", what, i, t);
                        cr_assert_eq(id[t], want, "%s line %zu token %zu", what, i, t);
                        t++;
                    }
                    cr_assert(memcmp(&sum, &total[i], sizeof sum) == 0, "%s line %zu", what, i);
                }
                cr_assert_eq(t, ntok, "%s: every token written", what);
                for (size_t k = ntok; k < room; k++)
                    cr_assert_eq(len[k], 0xee, "%s: nothing written past the tokens", what);
                if (ntok == 0)
                    continue;
                o.token_cap = ntok - 1;
                memset(len, 0xee, room);
                cr_assert_eq(glm_score_lines(m, (const char *const *)lines, lens, NL, &o, total,
                                             NULL, NULL, &e), SMT_ERR_ARG, "%s", what);
                cr_assert(strstr(e.msg, "tokens"), "%s", e.msg);
                for (size_t k = 0; k < room; k++)
                    cr_assert_eq(len[k], 0xee, "%s: nothing written", what);
            }
    for (size_t i = 0; i < NL; i++)
        free(lines[i]);
    free(lines), free(lens), free(prob), free(total), free(len), free(id);
}

Test(glm_kenlm, score_lines_per_token_equals_glm_score)
{
    static const char *const bins[] = {
        "chain.probing",       "chain.trie",           "chain.trie-a22",
        "chain.trie-q8-b8",    "chain_nounk.probing",  "chain_nounk.rest",
        "chain_nounk.trie",    "chain_nounk.trie-a22", "chain_nounk.trie-q8-b8",
        "suffix.probing-p3",   "suffix.trie",          "suffix.trie-a22",
        "suffix.trie-q8-b8",   "upper_nounk.probing",  "upper_nounk.trie"};
    for (size_t i = 0; i < sizeof bins / sizeof bins[0]; i++) {
        glm_model *m = open_tiny(bins[i], GLM_OPEN_DEFAULT);
        expect_token_scores(m, bins[i], 5000); /* several tasks */
        expect_token_scores(m, bins[i], 1);
        expect_token_scores(m, bins[i], 40); /* one task */
        glm_close(m);
    }
    /* a .glm, floats and quantized */
    char *arpa = tu_data_path("glm/chain.arpa"), *model = tu_join(dir, "tok.glm");
    for (uint32_t bits = 0; bits <= 8; bits += 8) {
        glm_build_options opt = {.K = 3, .progress = -1, .prob_bits = bits, .backoff_bits = bits};
        smt_err e;
        cr_assert_eq(glm_build(arpa, model, &opt, NULL, &e), 0, "%s", e.msg);
        glm_model *m;
        cr_assert_eq(glm_open(&m, model, GLM_OPEN_INDEX, &e), 0, "%s", e.msg);
        expect_token_scores(m, bits ? "glm q8b8" : "glm", 5000);
        glm_close(m);
    }
    free(arpa), free(model);
    /* KenLM's trie -a 22 -q 8 -b 8 and a bigger vocabulary, from ../shared when present */
    char *big = tu_shared_path("reference/kenlm-binaries/sample.lm3.trie-a22q8b8.bin");
    if (big) {
        glm_model *m;
        smt_err e;
        cr_assert_eq(glm_open(&m, big, GLM_OPEN_DEFAULT, &e), 0, "%s", e.msg);
        expect_token_scores(m, "sample.lm3.trie-a22q8b8", 5000);
        glm_close(m);
        free(big);
    }
}
