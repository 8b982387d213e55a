/* Tests of glm on hand-made fixtures (tests/data/glm): scores computed by hand with KenLM's float
 * arithmetic (backoff chains, omitted/zero backoffs, OOV, -inf, missing <unk>, an inserted
 * suffix), ARPA errors with file:line, every B-tree shape for several K, number printing, the
 * state API, every CPU path against the reference, damaged files, and the tool's exit codes. */
#define _GNU_SOURCE /* open_memstream, symlink */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glm.h"
#include "smt_lines.h"
#include "glm_internal.h"
#include "smt_progress.h" /* smt_now */
#include "smt_words.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }

TestSuite(glm, .init = setup, .fini = teardown);

static const uint32_t Ks[] = {3, 4, 5, 31, 64};

/* Builds tests/data/glm/<name> with node size K into the temp dir and opens it (verified). */
static glm_model *build_open(const char *name, uint32_t K, glm_build_stats *st)
{
    char rel[64];
    snprintf(rel, sizeof rel, "glm/%s", name);
    char *arpa = tu_data_path(rel);
    char out_name[64];
    snprintf(out_name, sizeof out_name, "%s.%u.glm", name, K);
    char *out = tu_join(dir, out_name);
    glm_build_options opt = {.K = K, .progress = -1, .warn = NULL};
    smt_err e;
    glm_build_stats s;
    cr_assert_eq(glm_build(arpa, out, &opt, st ? st : &s, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    free(arpa);
    free(out);
    return m;
}

/* Runs query on text with every CPU path; all must print the same; returns that output. */
static char *query(glm_model *m, const char *text, int verbosity, int null_context)
{
    char *in = tu_join(dir, "in.txt");
    cr_assert_eq(tu_write_file(in, text, strlen(text)), 0);
    char *first = NULL;
    const int paths[3][2] = {{GLM_PATH_FAST, 1}, {GLM_PATH_REF, 1}, {GLM_PATH_FAST, 2}};
    for (int p = 0; p < 3; p++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        glm_query_options opt = {verbosity, null_context, (unsigned)paths[p][1], paths[p][0], 0};
        smt_err e;
        smt_lines *r = NULL;
        cr_assert_eq(smt_lines_open(&r, in, 0, &e), 0, "%s", e.msg);
        cr_assert_eq(glm_query_lines(m, r, f, &opt, NULL, NULL, &e), 0, "%s", e.msg);
        smt_lines_close(r);
        fclose(f);
        if (!first)
            first = buf;
        else {
            cr_assert_str_eq(buf, first, "path %d differs", p);
            free(buf);
        }
    }
    free(in);
    return first;
}

static void fmt(char *buf, float x) { glm_format_float(buf, x); }

Test(glm, chain_scores)
{
    for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
        glm_build_stats st;
        glm_model *m = build_open("chain.arpa", Ks[k], &st);
        cr_assert_eq(glm_order(m), 3);
        cr_assert_eq(st.stored[2], 5);
        cr_assert_eq(glm_index(m, "</s>", 4), 2);
        cr_assert_eq(glm_index(m, "c", 1), 5);
        cr_assert_eq(glm_index(m, "zzz", 3), GLM_UNK);
        char *out = query(m, "a b c\nb a c\na zzz b\n", GLM_VERBOSE_WORD, 0);
        /* by hand, with KenLM's float additions (see docs/glm.md) */
        char exp[2048], n[8][40];
        float s1 = -0.3f + -0.1f + -0.15f + -0.7f;
        float w2[4] = {-0.9f + -0.5f, -0.6f + -0.2f, -1.2f + -0.3f, -0.7f};
        float s2 = 0.0f;
        for (int i = 0; i < 4; i++)
            s2 += w2[i];
        float w3 = (-1.0f + -0.3f) + -0.1f;
        float s3 = ((0.0f + -0.3f) + w3 + -0.9f) + -0.2f;
        fmt(n[0], s1), fmt(n[1], w2[0]), fmt(n[2], w2[1]), fmt(n[3], w2[2]), fmt(n[4], s2);
        fmt(n[5], w3), fmt(n[6], s3);
        double total = (double)s1 + (double)s2 + (double)s3, oov = w3;
        char p1[40], p2[40];
        glm_format_double(p1, pow(10.0, -(total / 12.0)));
        glm_format_double(p2, pow(10.0, -((total - oov) / 11.0)));
        snprintf(exp, sizeof exp,
                 "a=3 2 -0.3\tb=4 3 -0.1\tc=5 3 -0.15\t</s>=2 1 -0.7\tTotal: %s OOV: 0\n"
                 "b=4 1 %s\ta=3 1 %s\tc=5 1 %s\t</s>=2 1 -0.7\tTotal: %s OOV: 0\n"
                 "a=3 2 -0.3\tzzz=0 1 %s\tb=4 1 -0.9\t</s>=2 2 -0.2\tTotal: %s OOV: 1\n"
                 "Perplexity including OOVs:\t%s\nPerplexity excluding OOVs:\t%s\n"
                 "OOVs:\t1\nTokens:\t12\n",
                 n[0], n[1], n[2], n[3], n[4], n[5], n[6], p1, p2);
        cr_assert_str_eq(out, exp, "K=%u", Ks[k]);
        free(out);
        /* -v sentence and -n */
        out = query(m, "a b c\n", GLM_VERBOSE_SENTENCE, 0);
        char line[80];
        snprintf(line, sizeof line, "Total: %s OOV: 0\nPerplexity", n[0]);
        cr_assert(strncmp(out, line, strlen(line)) == 0, "%s", out);
        free(out);
        glm_close(m);
    }
}

/* A query split in parts (glm query over MPI ranks): each part's addends (glm_query_sums) added
 * part after part give the very summary of the whole query; the addends are the lines' float totals
 * and the OOVs' log10 p, as chain_scores computes them by hand. */
Test(glm, query_parts_sum_as_the_whole)
{
    glm_model *m = build_open("chain.arpa", 31, NULL);
    const char *text = "a b c\nb a c\na zzz b\n";
    char *whole = query(m, text, GLM_VERBOSE_SENTENCE, 0);
    char part1[] = "a b c\nb a c\n", part2[] = "a zzz b\n";
    glm_query_stats st;
    memset(&st, 0, sizeof st);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    glm_query_options opt = {GLM_VERBOSE_SENTENCE, 0, 1, GLM_PATH_FAST, 0};
    char *parts[2] = {part1, part2};
    float s1 = -0.3f + -0.1f + -0.15f + -0.7f, w3 = (-1.0f + -0.3f) + -0.1f;
    for (int i = 0; i < 2; i++) {
        smt_lines *in;
        smt_err e;
        cr_assert_eq(smt_lines_open_mem(&in, "<part>", parts[i], strlen(parts[i]), 0, &e), 0);
        glm_query_sums s = {0};
        cr_assert_eq(glm_query_lines(m, in, f, &opt, &s, NULL, &e), 0, "%s", e.msg);
        smt_lines_close(in);
        if (i == 0) {
            cr_assert_eq(s.n_lines, 2);
            cr_assert_eq(s.line_totals[0], s1);
            cr_assert_eq(s.n_oov, 0);
            cr_assert_eq(s.tokens, 8);
        } else {
            cr_assert_eq(s.n_lines, 1);
            cr_assert_eq(s.n_oov, 1);
            cr_assert_eq(s.oov_probs[0], w3); /* zzz's log10 p, chain_scores's w3 */
            cr_assert_eq(s.tokens, 4);
        }
        glm_query_stats_add(&st, &s);
        glm_query_sums_free(&s);
    }
    smt_err e;
    cr_assert_eq(glm_query_summary(f, &st, &e), 0);
    fclose(f);
    cr_assert_str_eq(buf, whole); /* the parts print no summary; the one written last is whole */
    free(buf);
    free(whole);
    glm_close(m);
}

/* Why parts keep their addends: double addition is not associative. 1 + 2^-53 rounds to 1 (ties to
 * even), so adding 1, 2^-53, 2^-53 in order gives 1, while adding the parts' own sums, 1 and
 * (2^-53 + 2^-53 = 2^-52), would give 1 + 2^-52. glm_query_stats_add must give one process's 1. */
Test(glm, query_parts_add_in_input_order)
{
    float one = 1.0f, tiny = ldexpf(1.0f, -53);
    float p1[] = {one}, p2[] = {tiny, tiny};
    glm_query_sums a = {0}, b = {0};
    a.line_totals = p1, a.n_lines = 1, a.tokens = 2;
    b.line_totals = p2, b.n_lines = 2, b.tokens = 4;
    glm_query_stats st;
    memset(&st, 0, sizeof st);
    glm_query_stats_add(&st, &a);
    glm_query_stats_add(&st, &b);
    double naive = (double)one + ((double)tiny + (double)tiny);
    cr_assert(naive != 1.0); /* the order matters for these addends */
    cr_assert_eq(st.total, 1.0, "%.17g", st.total);
    cr_assert_eq(st.lines, 3);
    cr_assert_eq(st.tokens, 6);
}

Test(glm, null_context_by_hand)
{
    glm_model *m = build_open("chain.arpa", 31, NULL);
    char *out = query(m, "a b\n", GLM_VERBOSE_WORD, 1);
    /* a: unigram, no context. b after [a]: "a b" */
    char exp[512], t[40], p[40];
    fmt(t, -0.6f + -0.4f);
    glm_format_double(p, pow(10.0, -((double)(-0.6f + -0.4f) / 2.0)));
    snprintf(exp, sizeof exp, "a=3 1 -0.6\tb=4 2 -0.4\tTotal: %s OOV: 0\n"
             "Perplexity including OOVs:\t%s\nPerplexity excluding OOVs:\t%s\nOOVs:\t0\n"
             "Tokens:\t2\n", t, p, p);
    cr_assert_str_eq(out, exp);
    free(out);
    glm_close(m);
}

Test(glm, inserted_suffix)
{
    for (size_t k = 0; k < sizeof Ks / sizeof *Ks; k++) {
        glm_build_stats st;
        glm_model *m = build_open("suffix.arpa", Ks[k], &st);
        cr_assert_eq(st.declared[2], 3);
        cr_assert_eq(st.stored[2], 4, "KenLM inserts the missing suffix 'y z'");
        char *out = query(m, "x y z\ny z\n", GLM_VERBOSE_WORD, 0);
        char exp[1024], a[40], b[40], c[40], z[40];
        fmt(z, -(0.9f - -0.2f));
        fmt(a, ((-0.4f + -0.3f) + -0.05f) + -0.8f);
        fmt(b, -0.7f + -0.5f);
        fmt(c, ((0.0f + (-0.7f + -0.5f)) + -(0.9f - -0.2f)) + -0.8f);
        snprintf(exp, sizeof exp,
                 "x=3 2 -0.4\ty=4 2 -0.3\tz=5 3 -0.05\t</s>=2 1 -0.8\tTotal: %s OOV: 0\n"
                 "y=4 1 %s\tz=5 2 %s\t</s>=2 1 -0.8\tTotal: %s OOV: 0\n",
                 a, b, z, c);
        cr_assert(strncmp(out, exp, strlen(exp)) == 0, "K=%u\n%s\n%s", Ks[k], out, exp);
        free(out);
        glm_close(m);
    }
}

Test(glm, missing_unk_and_inf)
{
    char *arpa = tu_data_path("glm/nounk_inf.arpa");
    char *out = tu_join(dir, "n.glm");
    char *warn = NULL;
    size_t wl = 0;
    FILE *wf = open_memstream(&warn, &wl);
    glm_build_options opt = {.K = 31, .progress = -1, .warn = wf};
    smt_err e;
    glm_build_stats st;
    cr_assert_eq(glm_build(arpa, out, &opt, &st, &e), 0, "%s", e.msg);
    fclose(wf);
    cr_assert(strstr(warn, "<unk>") != NULL);
    cr_assert_eq(st.unk_added, 1);
    cr_assert_eq(st.stored[1], 6);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, 0, &e), 0, "%s", e.msg);
    char *q = query(m, "e f\nd zz\n", GLM_VERBOSE_WORD, 0);
    char exp[1024], t[40];
    fmt(t, (-0.2f + -0.7f) + -0.3f);
    snprintf(exp, sizeof exp,
             "e=4 2 -0.2\tf=5 1 -0.7\t</s>=2 2 -0.3\tTotal: %s OOV: 0\n"
             "d=3 1 -inf\tzz=0 1 -100\t</s>=2 1 -0.8\tTotal: -inf OOV: 1\n"
             "Perplexity including OOVs:\tinf\nPerplexity excluding OOVs:\tinf\nOOVs:\t1\n"
             "Tokens:\t6\n",
             t);
    cr_assert_str_eq(q, exp);
    free(q);
    free(warn);
    glm_close(m);
    free(arpa);
    free(out);
}

/* ---------------------------------------------------------------- ARPA errors */

static void expect_error_n(const char *text, size_t len, int code, const char *needle)
{
    char *arpa = tu_join(dir, "bad.arpa");
    char *out = tu_join(dir, "bad.glm");
    cr_assert_eq(tu_write_file(arpa, text, len), 0);
    smt_err e;
    smt_err_clear(&e);
    int rc = glm_build(arpa, out, NULL, NULL, &e);
    cr_assert_eq(rc, code, "got %d: %s", rc, e.msg);
    cr_assert(strstr(e.msg, needle) != NULL, "'%s' lacks '%s'", e.msg, needle);
    cr_assert_eq(tu_file_size(out), -1, "no output on failure");
    free(arpa);
    free(out);
}

static void expect_error(const char *text, int code, const char *needle)
{
    expect_error_n(text, strlen(text), code, needle);
}

#define HEAD "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n-1\t</s>\n\n"

/* A NUL byte is part of no word and no number: refused with the line, never read as the end of
 * the line (which would drop what follows it) nor kept inside a word no query can match. */
Test(glm, arpa_nul_bytes)
{
    static const char uni[] = "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n"
                              "-1\t</s>\0x\n\n\\2-grams:\n-0.5\t<s> </s>\n\\end\\\n";
    expect_error_n(uni, sizeof uni - 1, SMT_ERR_PARSE, "bad.arpa:8: a NUL byte");
    static const char bi[] = HEAD "\\2-grams:\n-0.5\t<s> </\0s>\n\\end\\\n";
    expect_error_n(bi, sizeof bi - 1, SMT_ERR_PARSE, "bad.arpa:11:");
    static const char end[] = HEAD "\\2-grams:\n-0.5\t<s> </s>\n\\end\\\0junk\n";
    expect_error_n(end, sizeof end - 1, SMT_ERR_PARSE, "bad.arpa:12: a NUL byte");
    static const char num[] = HEAD "\\2-grams:\n-0.5\0\t<s> </s>\n\\end\\\n";
    expect_error_n(num, sizeof num - 1, SMT_ERR_PARSE, "bad.arpa:11: bad log10 probability");
    static const char hdr[] = "\\data\\\nngram 1=3\0\n";
    expect_error_n(hdr, sizeof hdr - 1, SMT_ERR_PARSE, "bad.arpa:2: a NUL byte");
}

Test(glm, arpa_errors)
{
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> </s>\n\n", SMT_ERR_PARSE, "unexpected end of file, "
                                                                       "expected \\end\\");
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> </s>\n\\end\\\nmore\n", SMT_ERR_PARSE,
                 "bad.arpa:13: text after");
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> </s>\n-0.5\t</s> <s>\n\\end\\\n", SMT_ERR_PARSE,
                 "bad.arpa:12: expected \\end\\");
    expect_error(HEAD "\\2-grams:\n\\end\\\n", SMT_ERR_PARSE, "bad.arpa:11: section ends after 0");
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> foo\n\\end\\\n", SMT_ERR_PARSE,
                 "bad.arpa:11: word 'foo'");
    expect_error(HEAD "\\2-grams:\n0.5\t<s> </s>\n\\end\\\n", SMT_ERR_PARSE,
                 "bad.arpa:11: positive");
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> </s>\t-0.2\n\\end\\\n", SMT_ERR_PARSE,
                 "bad.arpa:11: non-zero backoff");
    expect_error(HEAD "\\2-grams:\n-0.5\t<s> </s>\tx\n\\end\\\n", SMT_ERR_PARSE, "bad.arpa:11: bad");
    expect_error("\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-inf\n-1\t</s>"
                 "\n\n\\2-grams:\n-0.5\t<s> </s>\n\\end\\\n",
                 SMT_ERR_PARSE, "bad.arpa:7: bad log10 backoff");
    expect_error("\\data\\\nngram 1=2\n\n\\1-grams:\n-1\t<unk>\n-1\t</s>\n\n\\end\\\n",
                 SMT_ERR_PARSE, "order 1");
    expect_error("\\data\\\nngram 1=2\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n-1\t</s>\n\n\\2-grams:\n"
                 "-1\t</s> </s>\n\\end\\\n",
                 SMT_ERR_PARSE, "lack <s>");
    expect_error("junk\n\\data\\\n", SMT_ERR_PARSE, "bad.arpa:1: expected \\data\\");
    expect_error("\\data\\\nngram 1=1\nngram 3=1\n", SMT_ERR_PARSE, "bad.arpa:3: ngram 3 follows");
    expect_error("\\data\\\nngram 1=1\nngram 2=1\nngram 3=1\nngram 4=1\nngram 5=1\nngram 6=1\n"
                 "ngram 7=1\n",
                 SMT_ERR_LIMIT, "order 7");
    /* counts: whole decimal integers, never wrapped (a negative count read as 2^64-5) */
    expect_error("\\data\\\nngram 1=-5\nngram 2=1\n", SMT_ERR_PARSE,
                 "bad.arpa:2: 1-gram count -5: a count cannot be negative");
    expect_error("\\data\\\nngram 1=3\nngram 2=-1\n", SMT_ERR_PARSE, "bad.arpa:3: 2-gram count -1");
    expect_error("\\data\\\nngram 1=18446744073709551611\n", SMT_ERR_LIMIT,
                 "bad.arpa:2: 1-gram count 18446744073709551611: at most 2^32-2");
    expect_error("\\data\\\nngram 1=4294967295\n", SMT_ERR_LIMIT, "bad.arpa:2: 4294967295 1-grams");
    expect_error("\\data\\\nngram 1=3x\n", SMT_ERR_PARSE, "bad.arpa:2: bad 1-gram count '3x'");
    expect_error("\\data\\\nngram 1=\n", SMT_ERR_PARSE, "bad.arpa:2: bad 1-gram count ''");
    expect_error("\\data\\\nngram 1=0x10\n", SMT_ERR_PARSE, "bad.arpa:2: bad 1-gram count");
    expect_error("\\data\\\nngram 1=+\n", SMT_ERR_PARSE, "bad.arpa:2: bad 1-gram count");
    expect_error("\\data\\\nngram x=3\n", SMT_ERR_PARSE, "bad.arpa:2: bad order 'x'");
    expect_error("\\data\\\nngram -1=3\n", SMT_ERR_LIMIT, "bad.arpa:2: order -1 outside");
    expect_error("\\data\\\nngram 1 3\n", SMT_ERR_PARSE, "bad.arpa:2: expected 'ngram N=count'");
    expect_error("\\data\\\nngrams 1=3\n", SMT_ERR_PARSE, "bad.arpa:2: expected 'ngram N=count'");
    /* numbers: KenLM's syntax, but no value silently different from the text (NaN, a float
     * overflow read as -inf, hexadecimal) */
    const struct { const char *p, *bo, *msg; } nums[] = {
        {"nan", "-0.5", "bad.arpa:7: bad log10 probability 'nan'"},
        {"NaN", "-0.5", "bad.arpa:7: bad log10 probability 'NaN'"},
        {"-1e39", "-0.5", "bad.arpa:7: log10 probability '-1e39' is out of a float's range"},
        {"-0x1p3", "-0.5", "bad.arpa:7: bad log10 probability"},
        {"-1.5x", "-0.5", "bad.arpa:7: bad log10 probability"},
        {"inf", "-0.5", "bad.arpa:7: positive log10 probability inf"},
        {"-99", "nan", "bad.arpa:7: bad log10 backoff 'nan'"},
        {"-99", "-inf", "bad.arpa:7: bad log10 backoff '-inf'"},
        {"-99", "1e39", "bad.arpa:7: log10 backoff '1e39' is out of a float's range"},
        {"-99", "0x0", "bad.arpa:7: bad log10 backoff"},
    };
    for (size_t i = 0; i < sizeof nums / sizeof *nums; i++) {
        char text[512];
        snprintf(text, sizeof text, "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n"
                 "%s\t<s>\t%s\n-1\t</s>\n\n\\2-grams:\n-0.5\t<s> </s>\n\\end\\\n", nums[i].p, nums[i].bo);
        expect_error(text, SMT_ERR_PARSE, nums[i].msg);
    }
    char *path = tu_data_path("glm/nocontext.arpa");
    char *out = tu_join(dir, "x.glm");
    smt_err e;
    cr_assert_eq(glm_build(path, out, NULL, NULL, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "nocontext.arpa:18: the context '<s> b'") != NULL, "%s", e.msg);
    /* the output must not replace the ARPA file it is built from (also through a link) */
    char *copy = tu_join(dir, "self.arpa"), *link = tu_join(dir, "link.arpa");
    cr_assert_eq(tu_copy_file(path, copy), 0);
    cr_assert_eq(symlink(copy, link), 0);
    long long before = tu_file_size(copy);
    cr_assert_eq(glm_build(copy, copy, NULL, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "refusing to overwrite") != NULL, "%s", e.msg);
    cr_assert_eq(glm_build(copy, link, NULL, NULL, &e), SMT_ERR_ARG);
    cr_assert_eq(tu_file_size(copy), before);
    char *self = tu_read_file(copy, NULL);
    cr_assert(self && strncmp(self, "\\data\\", 6) == 0, "the ARPA file is intact");
    free(self), free(copy), free(link);
    glm_build_options bad = {.K = 2, .progress = -1, .warn = NULL};
    cr_assert_eq(glm_build(path, out, &bad, NULL, &e), SMT_ERR_ARG);
    free(path);
    free(out);
}

/* ---------------------------------------------------------------- B-tree shapes */

Test(glm, btree_every_shape)
{
    const uint32_t ks[] = {3, 4, 5, 7, 31, 33, 40};
    uint32_t *sorted = malloc(5000 * sizeof *sorted), *keys = malloc(5000 * sizeof *keys);
    uint32_t *perm = malloc(5000 * sizeof *perm);
    uint64_t counts[4] = {0, 1, 1, 1};
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        glm_layout L;
        glm_layout_setup(&L, 3, ks[ki], counts);
        for (uint32_t n = 0; n < 1200; n += (n < 300 ? 1 : 37)) {
            for (uint32_t i = 0; i < n; i++)
                sorted[i] = 2 * i + 1; /* odd keys: even values are absent */
            glm_bt_order(&L, n, perm);
            char *seen = calloc(n + 1, 1);
            for (uint32_t s = 0; s < n; s++) {
                cr_assert_lt(perm[s], n);
                cr_assert_eq(seen[perm[s]], 0);
                seen[perm[s]] = 1;
                keys[s] = sorted[perm[s]];
            }
            free(seen);
            for (uint32_t x = 0; x <= 2 * n + 1; x++) {
                int64_t got = glm_bt_find(&L, keys, n, x);
                if (x & 1 && x < 2 * n)
                    cr_assert(got >= 0 && keys[got] == x, "K=%u n=%u x=%u", ks[ki], n, x);
                else
                    cr_assert_eq(got, -1, "K=%u n=%u x=%u", ks[ki], n, x);
            }
        }
    }
    free(sorted), free(keys), free(perm);
}

/* ---------------------------------------------------------------- printing */

/* The tokenizer (64-byte SSE2 windows): every separator KenLM knows, tokens across window
 * boundaries, lines of 63..65 bytes, leading/trailing separators; the words printed must be the
 * tokens a plain scan finds. */
Test(glm, tokenizer_windows)
{
    glm_model *m = build_open("chain.arpa", 31, NULL);
    static char text[1 << 16];
    char *t = text;
    const char *seps[] = {" ", "\t", "\r", "\f", "\v", "  \t "};
    for (int line = 0; line < 40; line++) {
        size_t start = (size_t)(t - text);
        if (line % 3 == 0)
            *t++ = ' ';
        for (int w = 0; w < 6 + line % 5; w++) {
            int len = 1 + (line * 7 + w * 13) % 70;
            for (int i = 0; i < len; i++)
                *t++ = (char)("abcxyz"[(i + w) % 6]);
            const char *s = seps[(line + w) % 6];
            memcpy(t, s, strlen(s));
            t += strlen(s);
        }
        if (line % 4 == 1)
            t--; /* no separator before the newline */
        while (line % 5 == 2 && (size_t)(t - text) - start < 64)
            *t++ = 'a';
        *t++ = '\n';
    }
    *t = '\0';
    char *out = query(m, text, GLM_VERBOSE_WORD, 0);
    /* expected: split every line at the separators */
    const char *o = out;
    for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
        size_t n = strlen(line), i = 0;
        while (i < n) {
            while (i < n && strchr(" \t\r\f\v", line[i]))
                i++;
            if (i >= n)
                break;
            size_t s = i;
            while (i < n && !strchr(" \t\r\f\v", line[i]))
                i++;
            cr_assert(strncmp(o, line + s, i - s) == 0 && o[i - s] == '=', "token %.*s, printed %.20s",
                      (int)(i - s), line + s, o);
            o = strchr(o, '\t') + 1;
        }
        cr_assert(strncmp(o, "</s>=", 5) == 0, "%.20s", o);
        o = strchr(o, '\n') + 1;
    }
    free(out);
    glm_close(m);
}

Test(glm, format_numbers)
{
    char b[40];
    const struct { float x; const char *s; } f[] = {
        {-2.0209007f, "-2.0209007"}, {-0.15f, "-0.15"}, {-100.0f, "-100"}, {0.0f, "0"},
        {-0.0f, "-0"}, {-1e-6f, "-0.000001"}, {-1.5e-7f, "-1.5e-7"}, {-INFINITY, "-inf"},
        {-59.455116f, "-59.455116"}, {-1234567.0f, "-1234567"}, {1e22f, "1e22"},
        {-5e8f, "-500000000"}, {-123456.79f, "-123456.79"}, {-0.00012345678f, "-0.00012345678"},
        {-9.999999e-7f, "-9.999999e-7"}, {-999999940.0f, "-999999940"}, {-1e9f, "-1000000000"}};
    for (size_t i = 0; i < sizeof f / sizeof *f; i++) {
        glm_format_float(b, f[i].x);
        cr_assert_str_eq(b, f[i].s);
    }
    glm_format_double(b, 116.4517089292044);
    cr_assert_str_eq(b, "116.4517089292044");
    glm_format_double(b, 50.22330101559141);
    cr_assert_str_eq(b, "50.22330101559141");
    /* every float in a range reads back */
    for (uint32_t u = 0xbf800000u; u < 0xbf800000u + 200000u; u += 7) {
        float x;
        memcpy(&x, &u, 4);
        glm_format_float(b, x);
        cr_assert_eq(strtof(b, NULL), x, "%s", b);
    }
}

/* the shortest %.*e of x that strtof reads back as x, by trying each precision */
static double shortest_by_printf(float x)
{
    char t[40];
    for (int p = 1; p <= 9; p++) {
        snprintf(t, sizeof t, "%.*e", p - 1, (double)x);
        if (strtof(t, NULL) == x)
            break;
    }
    return strtod(t, NULL);
}

static void format_like_printf(uint32_t u)
{
    float x;
    char b[40];
    memcpy(&x, &u, 4);
    if (!isfinite(x))
        return;
    glm_format_float(b, x);
    cr_assert_eq(strtod(b, NULL), shortest_by_printf(x), "%s for %a", b, (double)x);
}

/* the integer path of the float printer gives printf's digits: a sample of every float, and the
 * floats of few significant bits (where rounding ties happen) over every exponent */
Test(glm, format_float_digits_as_printf)
{
    for (uint64_t u = 0; u < 0x100000000u; u += 16381)
        format_like_printf((uint32_t)u);
    for (uint32_t ex = 1; ex < 255; ex++)
        for (uint32_t top = 0; top < 256; top++)
            format_like_printf(ex << 23 | top << 15);
    for (uint32_t u = 0x3f800000u - 5000; u < 0x3f800000u + 5000; u++)
        format_like_printf(u);
    /* the edges of the 64-bit path (x in [1e-3, 2^23)) and typical log10 probabilities */
    const float edge[] = {1e-3f, 8388608.0f, 1e-4f, 2.0209007f, 0.13670383f, 100.0f};
    for (size_t i = 0; i < sizeof edge / sizeof *edge; i++) {
        uint32_t c;
        memcpy(&c, &edge[i], 4);
        for (uint32_t u = c - 3000; u < c + 3000; u++)
            format_like_printf(u);
    }
}

/* ---------------------------------------------------------------- state API and rows */

Test(glm, states_and_rows)
{
    glm_model *m = build_open("chain.arpa", 4, NULL);
    glm_word a = glm_index(m, "a", 1), b = glm_index(m, "b", 1), c = glm_index(m, "c", 1);
    glm_state s0, s1, s2, t;
    glm_state_begin(m, &s0);
    cr_assert_eq(s0.length, 1);
    unsigned len;
    float p = glm_score(m, &s0, a, &s1, &len);
    cr_assert(p == -0.3f && len == 2 && s1.length == 2);
    p = glm_score(m, &s1, b, &s2, &len);
    cr_assert(p == -0.1f && len == 3);
    p = glm_score(m, &s2, c, &t, &len);
    cr_assert(p == -0.15f && len == 3);
    cr_assert_eq(t.length, 0, "c and 'b c' are never contexts: the state is empty");
    glm_state n;
    glm_state_null(&n);
    cr_assert(glm_state_equal(&t, &n));
    cr_assert_eq(glm_state_hash(&t), glm_state_hash(&n));
    cr_assert(!glm_state_equal(&s1, &s2));
    /* in place */
    glm_state q = s0;
    cr_assert(glm_score(m, &q, a, &q, NULL) == -0.3f && glm_state_equal(&q, &s1));
    /* rows: every n-gram over the vocabulary, all paths equal to the state scores */
    uint32_t V = glm_vocab_size(m);
    size_t nr = (size_t)V * V * V;
    glm_word *rows = malloc(nr * 3 * sizeof *rows);
    float *p1 = malloc(nr * 4), *p2 = malloc(nr * 4), *p3 = malloc(nr * 4);
    uint8_t *l1 = malloc(nr), *l2 = malloc(nr), *l3 = malloc(nr);
    size_t r = 0;
    for (uint32_t x = 0; x < V; x++)
        for (uint32_t y = 0; y < V; y++)
            for (uint32_t z = 0; z < V; z++, r++) {
                rows[3 * r] = x;
                rows[3 * r + 1] = y;
                rows[3 * r + 2] = z;
            }
    smt_err e;
    cr_assert_eq(glm_score_rows_ref(m, rows, nr, p1, l1, &e), 0);
    cr_assert_eq(glm_score_rows(m, rows, nr, p2, l2, 1, &e), 0);
    cr_assert_eq(glm_score_rows(m, rows, nr, p3, l3, 2, &e), 0);
    for (r = 0; r < nr; r++) {
        glm_state st, o;
        glm_state_null(&st);
        glm_score(m, &st, rows[3 * r], &st, NULL);
        glm_score(m, &st, rows[3 * r + 1], &st, NULL);
        unsigned l;
        float want = glm_score(m, &st, rows[3 * r + 2], &o, &l);
        cr_assert(memcmp(&p1[r], &want, 4) == 0 && l1[r] == l, "row %zu", r);
        cr_assert(memcmp(&p2[r], &want, 4) == 0 && l2[r] == l, "row %zu", r);
        cr_assert(memcmp(&p3[r], &want, 4) == 0 && l3[r] == l, "row %zu", r);
    }
    /* the big-group index (GLM_OPEN_INDEX) over every group, then over groups of 2 or more */
    for (uint64_t min_n = 1; min_n <= 2; min_n++) {
        cr_assert_eq(glm_bigidx_build(m, min_n, &e), 0);
        memset(p2, 0, nr * 4);
        cr_assert_eq(glm_score_rows(m, rows, nr, p2, l2, 1, &e), 0);
        cr_assert_eq(glm_score_rows(m, rows, nr, p3, l3, 2, &e), 0);
        for (r = 0; r < nr; r++) {
            cr_assert(memcmp(&p2[r], &p1[r], 4) == 0 && l2[r] == l1[r], "index row %zu", r);
            cr_assert(memcmp(&p3[r], &p1[r], 4) == 0 && l3[r] == l1[r], "index row %zu", r);
        }
        free(query(m, "a b c\nc b a a b\n\nb b b c a\n", GLM_VERBOSE_WORD, 0));
        free(query(m, "a b c\nc b a a b\n\nb b b c a\n", GLM_VERBOSE_WORD, 1));
        /* the state API (the decoder's): glm_score (the fast walk, through the index) gives
         * the reference's floats, lengths and states, from the null and the <s> context */
        for (r = 0; r < nr; r++)
            for (int start = 0; start < 2; start++) {
                glm_state a, oa, ob;
                if (start)
                    glm_state_begin(m, &a);
                else
                    glm_state_null(&a);
                for (int k = 0; k < 3; k++) {
                    unsigned la, lb;
                    float pa = glm_score(m, &a, rows[3 * r + k], &oa, &la);
                    float pb = glm_score_ref(m, &a, rows[3 * r + k], &ob, &lb);
                    cr_assert(memcmp(&pa, &pb, 4) == 0 && la == lb && glm_state_equal(&oa, &ob),
                              "state api row %zu word %d", r, k);
                    a = oa;
                }
            }
    }
    rows[2] = V; /* out of range */
    cr_assert_eq(glm_score_rows(m, rows, 1, p1, l1, 1, &e), SMT_ERR_ARG);
    free(rows), free(p1), free(p2), free(p3), free(l1), free(l2), free(l3);
    glm_close(m);
}

/* ---------------------------------------------------------------- damaged files */

/* Every truncation of the file at path refused; every flipped bit the checksums cover refused by a
 * verified open; no unverified open of a damaged copy crashes a query. */
static void damaged(const char *path)
{
    glm_model *m;
    char *copy = tu_join(dir, "copy.glm");
    long long size = tu_file_size(path);
    smt_err e;
    for (long long cut = 0; cut < size; cut += size / 50 + 1) {
        cr_assert_eq(tu_copy_file(path, copy), 0);
        cr_assert_eq(tu_truncate(copy, (uint64_t)cut), 0);
        cr_assert_neq(glm_open(&m, copy, 0, &e), 0, "truncated at %lld", cut);
    }
    /* what the checksums cover: the header and section table (checked at every open) and each
     * section's bytes (checked by a verified open); only the padding between sections is not */
    cr_assert_eq(glm_open(&m, path, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    unsigned nsec = smt_mapped_section_count(m->map);
    uint64_t sec_off[SMT_FILE_SECTIONS_MAX], sec_size[SMT_FILE_SECTIONS_MAX];
    for (unsigned i = 0; i < nsec; i++) {
        const char *name;
        uint64_t sum;
        smt_mapped_section_info(m->map, i, &name, &sec_off[i], &sec_size[i], &sum);
    }
    glm_close(m);
    const uint64_t head_end = 512 + 48 * (uint64_t)nsec; /* smt_file.h's layout */
    unsigned in_sections = 0;
    /* every bit of the file: verified open must fail where the checksums cover it, and otherwise
     * the model must still be exact */
    for (long long off = 0; off < size; off += size / 400 + 1) {
        cr_assert_eq(tu_copy_file(path, copy), 0);
        cr_assert_eq(tu_flip_bit(copy, (uint64_t)off, (int)(off % 8)), 0);
        int covered = (uint64_t)off < head_end;
        for (unsigned i = 0; i < nsec; i++)
            if ((uint64_t)off >= sec_off[i] && (uint64_t)off < sec_off[i] + sec_size[i])
                covered = 2;
        in_sections += covered == 2;
        int rc = glm_open(&m, copy, GLM_OPEN_VERIFY, &e);
        if (covered) {
            cr_assert_neq(rc, 0, "a verified open accepted a flipped bit at %lld", off);
            cr_assert(rc == SMT_ERR_CORRUPT || rc == SMT_ERR_FORMAT || rc == SMT_ERR_VERSION ||
                          rc == SMT_ERR_INCOMPLETE,
                      "offset %lld: %d %s", off, rc, e.msg);
        }
        if (rc == 0)
            glm_close(m); /* a flipped bit in padding */
        if (covered == 1) /* the header: every open checks it */
            cr_assert_neq(glm_open(&m, copy, 0, &e), 0, "header bit at %lld accepted", off);
        /* unverified opens must never crash a query */
        if (glm_open(&m, copy, 0, &e) == 0) {
            glm_state s;
            glm_state_begin(m, &s);
            for (uint32_t w = 0; w < glm_vocab_size(m); w++)
                glm_score(m, &s, w, &s, NULL);
            glm_close(m);
        }
    }
    cr_assert_gt(in_sections, 100, "the flips must reach the sections");
    free(copy);
}

Test(glm, damaged_files)
{
    glm_model *m = build_open("chain.arpa", 31, NULL);
    glm_close(m);
    char *path = tu_join(dir, "chain.arpa.31.glm");
    damaged(path);
    smt_err e;
    cr_assert_eq(glm_open(&m, "/nonexistent/x.glm", 0, &e), SMT_ERR_IO);
    char *arpa = tu_data_path("glm/chain.arpa");
    cr_assert_eq(glm_open(&m, arpa, 0, &e), SMT_ERR_FORMAT);
    free(arpa), free(path);
}

/* ---------------------------------------------------------------- the tool */

Test(glm, tool)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa");
    char *model = tu_join(dir, "t.glm"), *in = tu_join(dir, "t.txt");
    char cmd[4096], *out = NULL, *err = NULL;
    cr_assert_eq(tu_write_file(in, "a b c\n", 6), 0);
    snprintf(cmd, sizeof cmd, "%s build %s %s -K 5", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s query -v sentence %s < %s", bin, model, in);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(strncmp(out, "Total: -1.25", 12) == 0 && strstr(out, "OOV: 0\nPerplexity"), "%s", out);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s query -v bogus %s < %s", bin, model, in);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s build %s %s -K 2", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s build /nonexistent.arpa %s", bin, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 1);
    /* an ARPA file is queried directly, as with KenLM (binarized on the way), and gives the
     * binary's output; a file that is neither is an error naming its first line */
    char *outb = NULL, *outa = NULL;
    snprintf(cmd, sizeof cmd, "%s query %s < %s", bin, model, in);
    cr_assert_eq(tu_run(cmd, &outb, NULL), 0);
    snprintf(cmd, sizeof cmd, "TMPDIR=%s %s query %s < %s", dir, bin, arpa, in);
    cr_assert_eq(tu_run(cmd, &outa, &err), 0, "%s", err);
    cr_assert_str_eq(outa, outb);
    free(outa), free(err);
    /* a $TMPDIR that is missing or takes no file (read-only; /proc/self refuses root too): the
     * ARPA file is binarized in the next temporary folder that works */
    char ro[4096];
    snprintf(ro, sizeof ro, "%s/ro", dir);
    cr_assert_eq(mkdir(ro, 0555), 0);
    const char *bad_tmp[] = {"/nonexistent-fastsmt-tmp", "/proc/self", ro};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "TMPDIR=%s %s query %s < %s", bad_tmp[i], bin, arpa, in);
        cr_assert_eq(tu_run(cmd, &outa, &err), 0, "TMPDIR=%s: %s", bad_tmp[i], err);
        cr_assert_str_eq(outa, outb, "TMPDIR=%s", bad_tmp[i]);
        free(outa), free(err);
    }
    free(outb);
    snprintf(cmd, sizeof cmd, "TMPDIR=%s %s query %s < %s", dir, bin, in, in);
    cr_assert_eq(tu_run(cmd, NULL, &err), 1);
    cr_assert(strstr(err, "t.txt:1:") != NULL, "%s", err);
    free(err);
    /* KenLM's -b (line by line, flushed) and -l load methods print the same */
    const char *variants[] = {"-b", "-l lazy", "-l populate", "-l read", "-l parallel", "-b -n"};
    char *plain = NULL, *plain_n = NULL;
    snprintf(cmd, sizeof cmd, "printf 'a b c\\nb\\n\\nc a' | %s query %s", bin, model);
    cr_assert_eq(tu_run(cmd, &plain, NULL), 0);
    snprintf(cmd, sizeof cmd, "printf 'a b c\\nb\\n\\nc a' | %s query -n %s", bin, model);
    cr_assert_eq(tu_run(cmd, &plain_n, NULL), 0);
    for (int v = 0; v < 6; v++) {
        snprintf(cmd, sizeof cmd, "printf 'a b c\\nb\\n\\nc a' | %s query %s %s", bin,
                 variants[v], model);
        cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s: %s", variants[v], err);
        cr_assert_str_eq(out, v == 5 ? plain_n : plain, "%s", variants[v]);
        free(out), free(err);
    }
    cr_assert(strstr(plain, "Tokens:\t10\n") != NULL, "%s", plain);
    free(plain), free(plain_n);
    snprintf(cmd, sizeof cmd, "%s query -l eager %s < %s", bin, model, in);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    snprintf(cmd, sizeof cmd, "ls %s | grep -c glm-arpa", dir);
    cr_assert_eq(tu_run(cmd, &out, NULL), 1, "temporary files left: %s", out); /* grep: none */
    free(out);
    snprintf(cmd, sizeof cmd, "%s --help", bin);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s", bin);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    snprintf(cmd, sizeof cmd, "%s info --verify %s", bin, model);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert(strstr(out, "K\t5\n") != NULL, "%s", out);
    free(out);
    free(bin), free(arpa), free(model), free(in);
}

/* A full disk (/dev/full) under every output of the tool: query in each mode (word mode writes in
 * 64 KB pieces, so a big output fails long before the end), -b, info and --help: each must exit 1
 * and say that writing failed, never 0 with the output lost. The library says SMT_ERR_IO too. */
Test(glm, tool_write_errors)
{
    if (access("/dev/full", W_OK) != 0)
        cr_skip_test("/dev/full is absent (a bare chroot?): write errors not tested");
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa");
    char *model = tu_join(dir, "w.glm"), *in = tu_join(dir, "w.txt");
    char cmd[4096], *err = NULL;
    FILE *f = fopen(in, "w");
    cr_assert_not_null(f);
    for (int i = 0; i < 50000; i++)
        fputs("a b c a b c zzz\n", f);
    cr_assert_eq(fclose(f), 0);
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    const char *modes[] = {"-v word", "-v sentence", "-v summary", "-b", "--threads 2", "-n"};
    for (int v = 0; v < 6; v++) {
        snprintf(cmd, sizeof cmd, "%s query %s %s < %s > /dev/full", bin, modes[v], model, in);
        cr_assert_eq(tu_run(cmd, NULL, &err), 1, "query %s: %s", modes[v], err);
        cr_assert(strstr(err, "writing the output failed") != NULL, "%s: %s", modes[v], err);
        free(err);
        /* the same with a tiny input (everything fits the buffers until the end) */
        snprintf(cmd, sizeof cmd, "echo a b | %s query %s %s > /dev/full", bin, modes[v], model);
        cr_assert_eq(tu_run(cmd, NULL, &err), 1, "small query %s: %s", modes[v], err);
        free(err);
    }
    snprintf(cmd, sizeof cmd, "%s info %s > /dev/full", bin, model);
    cr_assert_eq(tu_run(cmd, NULL, &err), 1, "info: %s", err);
    cr_assert(strstr(err, "glm info: writing the output failed") != NULL, "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "%s --help > /dev/full", bin);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 1);
    /* the library: a stream that cannot be written is SMT_ERR_IO */
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, model, 0, &e), 0, "%s", e.msg);
    FILE *full = fopen("/dev/full", "w");
    cr_assert_not_null(full);
    glm_query_options opt = {GLM_VERBOSE_WORD, 0, 1, GLM_PATH_FAST, 0};
    smt_lines *r = NULL;
    cr_assert_eq(smt_lines_open(&r, in, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_query_lines(m, r, full, &opt, NULL, NULL, &e), SMT_ERR_IO);
    smt_lines_close(r);
    cr_assert(strstr(e.msg, "No space left") != NULL, "%s", e.msg);
    fclose(full);
    glm_close(m);
    free(bin), free(arpa), free(model), free(in);
}

/* Flags: every number strict and range-checked, a missing value named, --help on stdout with exit
 * 0 for glm and each subcommand; bench_glm without anything to measure is a usage error. */
Test(glm, tool_flags)
{
    char *bin = tu_bin_path("glm"), *bench = tu_bin_path("bench_glm");
    char *arpa = tu_data_path("glm/chain.arpa"), *model = tu_join(dir, "f.glm");
    char cmd[4096], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    const struct { const char *args, *msg; } bad[] = {
        {"query --threads -1 M", "--threads: -1 is out of range"},
        {"query --threads 1x M", "--threads: '1x' is not an integer"},
        {"query --threads '' M", "--threads: '' is not an integer"},
        {"query --threads 99999999999999999999 M", "out of range"},
        {"query --threads ' 2' M", "not an integer"},
        {"query M --threads", "--threads: a value is missing"},
        {"query M -v", "-v: a value is missing"},
        {"query M -l", "-l: a value is missing"},
        {"build A O -K 1e3", "-K: '1e3' is not an integer"},
        {"build A O -K 2", "-K: 2 is out of range [3, 1024]"},
        {"build A O -K 4294967299", "out of range"},
        {"build A O -K", "-K: a value is missing"},
        {"build A O -q 0", "-q: 0 is out of range [1, 25]"},
        {"build A O -q 26", "-q: 26 is out of range [1, 25]"},
        {"build A O -q 8 -b 0", "-b: 0 is out of range [1, 25]"},
        {"build A O -q", "-q: a value is missing"},
        {"build A O -b 8", "-b: backoff quantization (-b) without probability quantization"},
        {"build probing A O -q 8", "only implemented in the trie"},
        {"info --verif M", "unknown option --verif"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char args[512];
        snprintf(args, sizeof args, "%s", bad[i].args);
        char *p;
        char expanded[1024] = "";
        for (char *t = strtok_r(args, " ", &p); t; t = strtok_r(NULL, " ", &p)) {
            const char *w = !strcmp(t, "M") ? model : !strcmp(t, "A") ? arpa : t;
            if (!strcmp(t, "O"))
                w = "/nonexistent/o.glm";
            strcat(expanded, " ");
            strcat(expanded, w);
        }
        snprintf(cmd, sizeof cmd, "echo a | %s%s", bin, expanded);
        cr_assert_eq(tu_run(cmd, &out, &err), 2, "%s: %s", bad[i].args, err);
        cr_assert(strstr(err, bad[i].msg) != NULL, "%s: '%s' lacks '%s'", bad[i].args, err,
                  bad[i].msg);
        cr_assert_str_eq(out, "", "%s: no output", bad[i].args);
        free(out), free(err);
    }
    /* good values still work: --threads 0 (all CPUs), -K at both ends */
    snprintf(cmd, sizeof cmd, "echo a b | %s query --threads 0 -v sentence %s", bin, model);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert(strncmp(out, "Total:", 6) == 0, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s build %s %s -K 3 && %s build %s %s -K 1024", bin, arpa, model,
             bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    const char *helps[] = {"--help", "-h", "build --help", "query --help", "info --help",
                           "query -n --help"};
    for (int i = 0; i < 6; i++) {
        snprintf(cmd, sizeof cmd, "%s %s", bin, helps[i]);
        cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", helps[i]);
        cr_assert(strstr(out, "usage:") != NULL && strstr(out, "glm build") != NULL, "%s: %s",
                  helps[i], out);
        cr_assert_str_eq(err, "", "%s", helps[i]);
        free(out), free(err);
    }
    snprintf(cmd, sizeof cmd, "%s", bench);
    cr_assert_eq(tu_run(cmd, &out, &err), 2);
    cr_assert(strstr(err, "usage: bench_glm") != NULL, "%s", err);
    cr_assert_str_eq(out, "");
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "%s --help", bench);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert(strstr(out, "usage: bench_glm") != NULL, "%s", out);
    free(out);
    snprintf(cmd, sizeof cmd, "%s --model %s --text %s --reps 0", bench, model, arpa);
    cr_assert_eq(tu_run(cmd, NULL, &err), 2);
    cr_assert(strstr(err, "--reps: 0 is out of range") != NULL, "%s", err);
    free(err);
    snprintf(cmd, sizeof cmd, "%s --quick", bench);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    free(bin), free(bench), free(arpa), free(model);
}

/* The number syntax KenLM accepts still reads as the same values: exponents either case, a
 * leading '+' or '.', "-0", and the backoff of an n-gram read exactly. */
Test(glm, arpa_number_syntax)
{
    const char *text = "\\data\\\nngram 1=4\nngram  2 = 1 \n\n\\1-grams:\n-1E0\t<unk>\n"
                       "-99\t<s>\t+.25\n-5e-1\t</s>\n-.5\ta\t-0\n\n\\2-grams:\n-2.5E-1\t<s> a\n"
                       "\n\\end\\\n";
    char *arpa = tu_join(dir, "syn.arpa"), *out = tu_join(dir, "syn.glm");
    /* "ngram  2 = 1": blanks after "ngram" and around the count are tolerated, but not
     * between the order and '=' */
    cr_assert_eq(tu_write_file(arpa, text, strlen(text)), 0);
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, NULL, NULL, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "syn.arpa:3: bad order '2 '") != NULL, "%s", e.msg);
    const char *good = "\\data\\\nngram 1=4\nngram  2= 1 \n\n\\1-grams:\n-1E0\t<unk>\n"
                       "-99\t<s>\t+.25\n-5e-1\t</s>\n-.5\ta\t-0\n\n\\2-grams:\n-2.5E-1\t<s> a\n"
                       "\n\\end\\\n";
    cr_assert_eq(tu_write_file(arpa, good, strlen(good)), 0);
    cr_assert_eq(glm_build(arpa, out, NULL, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    glm_state s, t;
    glm_state_begin(m, &s);
    glm_word a = glm_index(m, "a", 1), eos = glm_eos(m);
    cr_assert(glm_score(m, &s, a, &t, NULL) == -0.25f);
    cr_assert(glm_score(m, &s, eos, &t, NULL) == -0.5f + 0.25f, "backoff +.25");
    glm_state_null(&s);
    cr_assert(glm_score(m, &s, GLM_UNK, &t, NULL) == -1.0f);
    cr_assert(glm_score(m, &s, a, &t, NULL) == -0.5f);
    glm_close(m);
    free(arpa), free(out);
}

/* ---------------------------------------------------------------- hostile headers */

/* Allocations follow what the input holds, not what its header declares: the outside fuzzing
 * campaign's reproducers (a 54-byte header declaring 2^32-3 unigrams asked for 16 GiB; a 63-byte
 * one declaring 4e8 bigrams used 2.7 GB for 9 s) must fail at once with the parse error, within a
 * small address space (ulimit -v; not under ASan, whose shadow memory needs terabytes of it). */
/* ASan and TSan reserve terabytes of address space for their shadow memory: no ulimit -v there
 * (GCC says so with __SANITIZE_*__, clang with __has_feature). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZER_SHADOW 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZER_SHADOW 1
#endif
#endif
#ifndef SANITIZER_SHADOW
#define SANITIZER_SHADOW 0
#endif

Test(glm, hostile_header_counts)
{
    const struct { const char *file, *msg; } cases[] = {
        {"glm_arpa_huge_count.arpa", "glm_arpa_huge_count.arpa:6: end of file after 1 of 4294967293 "
                                     "declared 1-grams"},
        {"glm_arpa_big_mid.arpa", "glm_arpa_big_mid.arpa:7: end of file after 1 of 3 declared "
                                  "1-grams"},
    };
    char *bin = tu_bin_path("glm"), *out = tu_join(dir, "h.glm");
    for (int i = 0; i < 2; i++) {
        char rel[64], cmd[4096], *err = NULL;
        snprintf(rel, sizeof rel, "glm/%s", cases[i].file);
        char *arpa = tu_data_path(rel);
#if SANITIZER_SHADOW
        const char *limit = "";
#else
        const char *limit = "ulimit -v 400000; ";
#endif
        snprintf(cmd, sizeof cmd, "%s%s build %s %s", limit, bin, arpa, out);
        double t0 = smt_now();
        cr_assert_eq(tu_run(cmd, NULL, &err), 1, "%s: %s", cases[i].file, err);
        double secs = smt_now() - t0;
        cr_assert(strstr(err, cases[i].msg) != NULL, "'%s' lacks '%s'", err, cases[i].msg);
        cr_assert_lt(secs, 5.0, "%s: %.1f s for a 60-byte file", cases[i].file, secs);
        cr_assert_eq(tu_file_size(out), -1);
        /* the library, in this process: the same error, nothing kept */
        smt_err e;
        cr_assert_eq(glm_build(arpa, out, NULL, NULL, &e), SMT_ERR_PARSE);
        cr_assert(strstr(e.msg, cases[i].msg) != NULL, "%s", e.msg);
        free(err), free(arpa);
    }
    free(bin), free(out);
}

/* An input of unknown size (a pipe) starts with small arrays and grows them as lines arrive: a
 * model with more words and bigrams than the first allocation is read exactly as from a file. */
/* Writes a bigram model of V + 3 words and B bigrams (about 6 MB) to path. */
static void write_many(const char *path)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    const int V = 150000, B = 200000;
    fprintf(f, "\\data\\\nngram 1=%d\nngram 2=%d\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n"
               "-1\t</s>\n", V + 3, B);
    for (int i = 0; i < V; i++)
        fprintf(f, "-%d.%d\tw%d\t-0.%d\n", 1 + i % 5, i % 997, i, 1 + i % 9);
    fprintf(f, "\n\\2-grams:\n");
    for (int i = 0; i < B; i++)
        fprintf(f, "-0.%d\tw%d w%d\n", 1 + i % 97, i % V, (i * 7 + 3 + i / V * 11) % V);
    fprintf(f, "\n\\end\\\n");
    cr_assert_eq(fclose(f), 0);
}

Test(glm, arpa_from_pipe_grows)
{
    char *arpa = tu_join(dir, "many.arpa"), *a = tu_join(dir, "file.glm"), *b = tu_join(dir, "pipe.glm");
    write_many(arpa);
    smt_err e;
    cr_assert_eq(glm_build(arpa, a, NULL, NULL, &e), 0, "%s", e.msg);
    char *bin = tu_bin_path("glm"), cmd[4096];
    snprintf(cmd, sizeof cmd, "cat %s | %s build /dev/stdin %s", arpa, bin, b);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    size_t la, lb;
    char *da = tu_read_file(a, &la), *db = tu_read_file(b, &lb);
    cr_assert(da && db && la == lb && memcmp(da, db, la) == 0, "pipe and file builds differ");
    free(da), free(db), free(bin), free(arpa), free(a), free(b);
}

/* glm build --progress shows real sizes: the ARPA file's bytes read of its size, and the trie's
 * bytes filled of its size (the trie meter showed "0.0 / 0.0 MB": it counted levels). That the
 * meter moves on a long build is checked on the shared lm.5 (glm_shared/build_progress_moves). */
Test(glm, build_progress_sizes)
{
    char *arpa = tu_join(dir, "many.arpa"), *model = tu_join(dir, "p.glm"), *bin = tu_bin_path("glm");
    write_many(arpa);
    char cmd[4096], *err = NULL, want[128];
    snprintf(cmd, sizeof cmd, "%s build --progress %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
    double mb = (double)tu_file_size(arpa) / 1e6;
    snprintf(want, sizeof want, "reading ARPA: %.1f / %.1f MB (100.0%%)", mb, mb);
    cr_assert(strstr(err, want) != NULL, "'%s' lacks '%s'", err, want);
    const char *t = strstr(err, "building trie: ");
    cr_assert_not_null(t, "%s", err);
    double done, total;
    cr_assert_eq(sscanf(t, "building trie: %lf / %lf MB", &done, &total), 2, "%s", t);
    /* the trie: 150003 unigrams (12 bytes) and 200000 bigrams (4 + 4 bytes), about 3.4 MB */
    cr_assert(done == total && total > 3.0 && total < 4.0, "%s", t);
    free(err), free(arpa), free(model), free(bin);
}

/* glm info --verify and glm query --verify on a damaged file: a flipped bit in the keys (which
 * the cheap open checks do not look at) fails with the section named, and "checksums ok" is
 * printed only for an intact file. */
Test(glm, tool_verify)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa");
    char *model = tu_join(dir, "v.glm"), *bad = tu_join(dir, "bad.glm");
    char cmd[4096], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    snprintf(cmd, sizeof cmd, "%s info --verify %s", bin, model);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert(strstr(out, "checksums\tok\n") != NULL, "%s", out);
    free(out);
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, model, 0, &e), 0, "%s", e.msg);
    uint64_t off = 0, size = 0;
    for (unsigned i = 0; i < smt_mapped_section_count(m->map); i++) {
        const char *name;
        uint64_t o, sz, sum;
        smt_mapped_section_info(m->map, i, &name, &o, &sz, &sum);
        if (strcmp(name, "keys") == 0)
            off = o, size = sz;
    }
    glm_close(m);
    cr_assert_gt(size, 0);
    cr_assert_eq(tu_copy_file(model, bad), 0);
    cr_assert_eq(tu_flip_bit(bad, off + size / 2, 3), 0);
    snprintf(cmd, sizeof cmd, "%s info --verify %s", bin, bad);
    cr_assert_eq(tu_run(cmd, &out, &err), 1, "%s", out);
    cr_assert(strstr(err, "section 'keys' checksum mismatch") != NULL, "%s", err);
    cr_assert_null(strstr(out, "checksums"), "%s", out);
    free(out), free(err);
    snprintf(cmd, sizeof cmd, "echo a | %s query --verify %s", bin, bad);
    cr_assert_eq(tu_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "checksum mismatch") != NULL, "%s", err);
    cr_assert_str_eq(out, "");
    free(out), free(err);
    /* without --verify the damage is not looked for, and info does not claim it was */
    snprintf(cmd, sizeof cmd, "%s info %s", bin, bad);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert_null(strstr(out, "checksums"), "%s", out);
    free(out);
    free(bin), free(arpa), free(model), free(bad);
}

/* -b reads standard input line by line itself: a UTF-8 byte-order mark opening the input is
 * dropped there too, not glued to the first word (which then read as an OOV). */
Test(glm, tool_bom_interactive)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa"), *model = tu_join(dir, "b.glm");
    char cmd[4096], *with = NULL, *without = NULL;
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    snprintf(cmd, sizeof cmd, "printf '\\357\\273\\277a b\\n\\357\\273\\277a\\n' | %s query -b %s", bin, model);
    cr_assert_eq(tu_run(cmd, &with, NULL), 0);
    snprintf(cmd, sizeof cmd, "printf 'a b\\n\\357\\273\\277a\\n' | %s query -b %s", bin, model);
    cr_assert_eq(tu_run(cmd, &without, NULL), 0);
    cr_assert_str_eq(with, without);
    cr_assert(strncmp(with, "a=3 2 ", 6) == 0, "%s", with);
    cr_assert(strstr(with, "OOVs:\t1\n") != NULL, "only the second line's mark is a word: %s", with);
    free(with), free(without), free(bin), free(arpa), free(model);
}

/* -b on a pipe: each line's scores arrive while the input is still open (an interactive user,
 * or a program driving glm query line by line, never waits for a buffer to fill). */
Test(glm, tool_b_answers_a_pipe_line_by_line)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa"), *model = tu_join(dir, "p.glm");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    tu_proc p;
    cr_assert_eq(tu_proc_start(&p, (char *const[]){bin, "query", "-b", model, NULL}), 0);
    for (int k = 0; k < 2; k++) {
        char got[512];
        cr_assert_eq(tu_proc_ask(&p, "a b\n", got, sizeof got, 20000), 0,
                     "no answer to line %d while the input is open", k + 1);
        cr_assert(strncmp(got, "a=3 2 ", 6) == 0 && strstr(got, "Total: "), "%s", got);
    }
    cr_assert_eq(tu_proc_finish(&p), 0);
    free(bin), free(arpa), free(model);
}

/* KenLM: an n-gram with no backoff (0) that is the context of a longer one can still be extended,
 * so the state keeps it: "a b" has no backoff, "a b </s>" follows it. */
Test(glm, zero_backoff_context_kept)
{
    glm_model *m = build_open("zero_context.arpa", 31, NULL);
    char *out = query(m, "a b\n", GLM_VERBOSE_WORD, 0);
    char exp[512], t[40];
    fmt(t, ((0.0f + -0.3f) + -0.4f) + -0.05f);
    snprintf(exp, sizeof exp, "a=3 2 -0.3\tb=4 2 -0.4\t</s>=2 3 -0.05\tTotal: %s OOV: 0\n", t);
    cr_assert(strncmp(out, exp, strlen(exp)) == 0, "%s\nwanted\n%s", out, exp);
    free(out);
    glm_close(m);
}

/* The fast paths (lanes of rows, the state API's walk) against the reference on B-trees of every
 * size 0..98 and so every depth for small K, at both trie levels, without the big-group index
 * and with it over every group: bigrams "wh wj" (h < j: w_j's group holds j keys) and trigrams
 * "wa wh w99" (a < h: the group of "wh w99" holds h keys). */
Test(glm, fast_paths_every_btree_shape)
{
    enum { W = 100 };
    char *arpa = tu_join(dir, "shapes.arpa");
    FILE *f = fopen(arpa, "w");
    cr_assert_not_null(f);
    unsigned n2 = W * (W - 1) / 2, n3 = 0;
    for (unsigned h = 0; h < W - 1; h++)
        n3 += h;
    fprintf(f, "\\data\\\nngram 1=%u\nngram 2=%u\nngram 3=%u\n\n\\1-grams:\n-1\t<unk>\n"
               "-99\t<s>\t-0.5\n-1.5\t</s>\n", W + 3, n2, n3);
    for (unsigned i = 0; i < W; i++)
        fprintf(f, "-1.%u\tw%u\t-0.%u\n", i % 10, i, 1 + i % 9);
    fprintf(f, "\n\\2-grams:\n");
    for (unsigned j = 0; j < W; j++)
        for (unsigned h = 0; h < j; h++)
            fprintf(f, "-0.%u\tw%u w%u\t-0.0%u\n", 1 + (h + j) % 9, h, j, 1 + h % 9);
    fprintf(f, "\n\\3-grams:\n");
    for (unsigned h = 0; h < W - 1; h++)
        for (unsigned a = 0; a < h; a++)
            fprintf(f, "-0.0%u\tw%u w%u w%u\n", 1 + a % 9, a, h, W - 1);
    fprintf(f, "\n\\end\\\n");
    cr_assert_eq(fclose(f), 0);
    const uint32_t ks[] = {3, 4, 5, 7, 31};
    for (size_t ki = 0; ki < sizeof ks / sizeof *ks; ki++) {
        char *model = tu_join(dir, "shapes.glm");
        glm_build_options opt = {.K = ks[ki], .progress = -1, .warn = NULL};
        smt_err e;
        cr_assert_eq(glm_build(arpa, model, &opt, NULL, &e), 0, "%s", e.msg);
        glm_model *m;
        cr_assert_eq(glm_open(&m, model, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
        uint32_t V = glm_vocab_size(m);
        glm_word last = glm_index(m, "w99", 3);
        size_t nr = 0, cap = (size_t)(V + 1) * V * 3;
        glm_word *rows = malloc(cap * 3 * sizeof *rows);
        for (uint32_t x = 0; x <= V; x++) /* x == V: a row padded with GLM_NONE */
            for (uint32_t y = 0; y < V; y++) {
                const glm_word zs[3] = {last, (x * 7 + y) % V, y};
                for (int zi = 0; zi < 3; zi++, nr++) {
                    rows[3 * nr] = x == V ? GLM_NONE : x;
                    rows[3 * nr + 1] = y;
                    rows[3 * nr + 2] = zs[zi];
                }
            }
        float *pr = malloc(nr * 4), *pf = malloc(nr * 4);
        uint8_t *lr = malloc(nr), *lf = malloc(nr);
        cr_assert_eq(glm_score_rows_ref(m, rows, nr, pr, lr, &e), 0);
        for (int idx = 0; idx < 3; idx++) { /* no index, every group indexed, groups >= 8 */
            if (idx)
                cr_assert_eq(glm_bigidx_build(m, idx == 1 ? 1 : 8, &e), 0);
            cr_assert_eq(glm_score_rows(m, rows, nr, pf, lf, 1, &e), 0);
            for (size_t r = 0; r < nr; r++) {
                cr_assert(memcmp(&pf[r], &pr[r], 4) == 0 && lf[r] == lr[r],
                          "K=%u index %d row %zu (%u %u %u): fast %g/%u ref %g/%u", ks[ki], idx, r,
                          rows[3 * r], rows[3 * r + 1], rows[3 * r + 2], pf[r], lf[r], pr[r], lr[r]);
                if (rows[3 * r] == GLM_NONE)
                    continue;
                glm_state s, a, b;
                glm_state_null(&s);
                glm_score_ref(m, &s, rows[3 * r], &s, NULL);
                glm_score_ref(m, &s, rows[3 * r + 1], &s, NULL);
                unsigned la, lb;
                float fa = glm_score(m, &s, rows[3 * r + 2], &a, &la);
                float fb = glm_score_ref(m, &s, rows[3 * r + 2], &b, &lb);
                cr_assert(memcmp(&fa, &fb, 4) == 0 && la == lb && glm_state_equal(&a, &b),
                          "K=%u index %d state row %zu", ks[ki], idx, r);
            }
        }
        free(rows), free(pr), free(pf), free(lr), free(lf), free(model);
        glm_close(m);
    }
    free(arpa);
}

/* A read error on the text is an error with its reason, in both readers (-b reads standard input
 * itself), never an early end of input. */
Test(glm, tool_read_errors)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa"), *model = tu_join(dir, "r.glm");
    char cmd[4096], *out = NULL, *err = NULL;
    snprintf(cmd, sizeof cmd, "%s build %s %s", bin, arpa, model);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    const char *modes[] = {"", "-b", "-v summary"};
    for (int i = 0; i < 3; i++) {
        snprintf(cmd, sizeof cmd, "%s query %s %s < %s", bin, modes[i], model, dir);
        cr_assert_eq(tu_run(cmd, &out, &err), 1, "'%s': %s", modes[i], err);
        /* "<stdin>:1: read error: Is a directory" (or, from a reader that checks at open,
         * "<stdin>: is a directory ...") */
        cr_assert(strstr(err, "<stdin>") && strcasestr(err, "is a directory"), "'%s': %s",
                  modes[i], err);
        cr_assert_null(strstr(out, "Perplexity"), "'%s': no summary of a text never read: %s",
                       modes[i], out);
        free(out), free(err);
    }
    free(bin), free(arpa), free(model);
}

/* glm_load tells the kind by the first bytes (smt_file_kind): a .glm opens whatever its name, an
 * ARPA file is built whatever its name, a KenLM binary is read as one (glm_kenlm.c), and a
 * fastsmt file of another kind names both kinds. */
Test(glm, load_tells_the_kind_by_its_bytes)
{
    char *arpa = tu_data_path("glm/chain.arpa"), *glm = tu_join(dir, "model.arpa"),
         *kenlm = tu_join(dir, "model.binary"), *other = tu_join(dir, "model.glm");
    smt_err e;
    cr_assert_eq(glm_build(arpa, glm, NULL, NULL, &e), 0, "%s", e.msg);
    glm_model *a, *b;
    cr_assert_eq(glm_load(&a, glm, 0, NULL, &e), 0, "%s", e.msg); /* named .arpa, a binary */
    cr_assert_eq(glm_load(&b, arpa, 0, NULL, &e), 0, "%s", e.msg);
    cr_expect_eq(glm_count(a, 2), glm_count(b, 2));
    glm_close(a);
    glm_close(b);
    const char kb[] = "mmap lm http://kheafield.com/code format version 5\n\0\0\0";
    cr_assert_eq(tu_write_file(kenlm, kb, sizeof kb - 1), 0);
    cr_expect_eq(glm_load(&a, kenlm, 0, NULL, &e), SMT_ERR_CORRUPT); /* read: a header cut short */
    cr_expect(strstr(e.msg, "model.binary: a KenLM binary") != NULL, "%s", e.msg);
    cr_expect_null(a);
    const char pb[] = "FSMTPPT1\x01\0\0\0";
    cr_assert_eq(tu_write_file(other, pb, sizeof pb - 1), 0);
    cr_expect_neq(glm_load(&a, other, 0, NULL, &e), 0);
    cr_expect(strstr(e.msg, "model.glm") != NULL, "%s", e.msg);
    free(arpa), free(glm), free(kenlm), free(other);
}


/* glm_score_lines (Python's score_batch) equals the per-word glm_score sums for every bos/eos
 * combination, one thread and two, over more lines than one chunk: KenLM's white space (and NUL)
 * separate words, unknown words and empty lines count, words and OOVs are counted. */
static float sum_words(const glm_model *m, const char *s, size_t n, int bos, int eos,
                       uint32_t *words, uint32_t *oovs)
{
    glm_state st;
    if (bos)
        glm_state_begin(m, &st);
    else
        glm_state_null(&st);
    float total = 0.0f;
    *words = *oovs = 0;
    const char *pos = s, *end = s + n, *w;
    size_t len;
    while (smt_word_next(&pos, end, SMT_WS_SPACE, &w, &len)) {
        glm_word id = glm_index(m, w, len);
        total += glm_score(m, &st, id, &st, NULL);
        ++*words;
        *oovs += id == GLM_UNK;
    }
    if (eos)
        total += glm_score(m, &st, glm_eos(m), &st, NULL);
    return total;
}

Test(glm, score_lines_equals_word_scores)
{
    glm_model *m = build_open("chain.arpa", 4, NULL);
#define L(s) {s, sizeof s - 1}
    static const struct {
        const char *s;
        size_t n;
    } base[] = {L("a b c"), L(""), L("  a\tb \x0b c\r"), L("zz a b </s> c"), L("a a a a a a a a"),
                L("b"), L("c c \f c"), L("a\0b c"), L("<s> a"), L("a b c d e f g h i j k l")};
#undef L
    enum { NB = sizeof base / sizeof *base, N = 5000 };
    const char **lines = malloc(N * sizeof *lines);
    size_t *lens = malloc(N * sizeof *lens);
    float *tot = malloc(N * sizeof *tot);
    uint32_t *words = malloc(N * sizeof *words), *oovs = malloc(N * sizeof *oovs);
    cr_assert(lines && lens && tot && words && oovs);
    for (size_t i = 0; i < N; i++)
        lines[i] = base[(i * 7) % NB].s, lens[i] = base[(i * 7) % NB].n;
    smt_err e;
    for (int bos = 0; bos < 2; bos++)
        for (int eos = 0; eos < 2; eos++)
            for (unsigned th = 1; th <= 2; th++) {
                glm_lines_options opt = {.bos = bos, .eos = eos, .threads = th};
                memset(tot, 0x7f, N * sizeof *tot);
                cr_assert_eq(glm_score_lines(m, lines, lens, N, &opt, tot, words, oovs, &e), 0,
                             "%s", e.msg);
                for (size_t i = 0; i < N; i++) {
                    uint32_t w, o;
                    float want = sum_words(m, lines[i], lens[i], bos, eos, &w, &o);
                    cr_assert(memcmp(&want, &tot[i], sizeof want) == 0,
                              "bos %d eos %d threads %u line %zu: %.9g != %.9g", bos, eos, th, i,
                              (double)tot[i], (double)want);
                    cr_assert_eq(words[i], w, "line %zu", i);
                    cr_assert_eq(oovs[i], o, "line %zu", i);
                }
            }
    /* a known value: <s> a b c </s> = -0.3 + -0.1 + -0.15 + (-0.7 - 0.0 backoff of "c") */
    cr_assert_eq(glm_score_lines(m, lines, lens, 1, NULL, tot, NULL, NULL, &e), 0, "%s", e.msg);
    cr_expect_float_eq(tot[0], -0.3f + -0.1f + -0.15f + -0.7f, 1e-6f);
    /* no lines: nothing to do; NULL arguments: refused */
    cr_expect_eq(glm_score_lines(m, lines, lens, 0, NULL, tot, NULL, NULL, &e), 0);
    cr_expect_eq(glm_score_lines(m, NULL, lens, 3, NULL, tot, NULL, NULL, &e), SMT_ERR_ARG);
    const char *nul[] = {NULL};
    size_t one = 1;
    cr_expect_eq(glm_score_lines(m, nul, &one, 1, NULL, tot, NULL, NULL, &e), SMT_ERR_ARG);
    free(lines), free(lens), free(tot), free(words), free(oovs);
    glm_close(m);
}

/* One line per call (Python's score), at the lengths where the one-line block on the stack gives
 * way to the allocated one: words of one byte and one separator, the most tokens per byte. */
Test(glm, score_lines_one_line_at_every_length)
{
    glm_model *m = build_open("chain.arpa", 4, NULL);
    static char line[1200];
    for (size_t i = 0; i < sizeof line; i++)
        line[i] = i % 2 ? ' ' : "abcz"[(i / 2) % 4];
    smt_err e;
    for (size_t n = 990; n <= sizeof line; n++)
        for (int eos = 0; eos < 2; eos++) {
            const char *l = line;
            glm_lines_options opt = {.bos = 1, .eos = eos, .threads = 1};
            float tot;
            uint32_t words, oovs, w, o;
            cr_assert_eq(glm_score_lines(m, &l, &n, 1, &opt, &tot, &words, &oovs, &e), 0, "%s",
                         e.msg);
            float want = sum_words(m, line, n, 1, eos, &w, &o);
            cr_assert(memcmp(&want, &tot, sizeof want) == 0, "%zu bytes: %.9g != %.9g", n,
                      (double)tot, (double)want);
            cr_assert_eq(words, w, "%zu bytes", n);
            cr_assert_eq(oovs, o, "%zu bytes", n);
        }
    glm_close(m);
}

/* A caller's word cache (Python's score: one line a call) gives the ids the vocabulary gives,
 * used with two models in turns whose ids for the same words differ: each use with the other
 * model empties it. One line a call and many lines a call. */
Test(glm, score_lines_word_cache)
{
    glm_model *m = build_open("chain.arpa", 4, NULL);
    char *arpa = tu_join(dir, "other_ids.arpa"), *out = tu_join(dir, "other_ids.glm");
    static const char text[] = "\\data\\\nngram 1=8\nngram 2=1\n\n\\1-grams:\n-1\t<unk>\n"
                               "-99\t<s>\t-0.5\n-0.8\t</s>\n-0.5\tx\n-0.4\ty\n-0.1\tc\t-0.2\n"
                               "-0.2\tb\t-0.3\n-0.3\ta\t-0.4\n\n\\2-grams:\n-0.05\tb a\n\n"
                               "\\end\\\n";
    cr_assert_eq(tu_write_file(arpa, text, sizeof text - 1), 0);
    smt_err e;
    glm_build_options bo = {.K = 4, .progress = -1};
    cr_assert_eq(glm_build(arpa, out, &bo, NULL, &e), 0, "%s", e.msg);
    glm_model *m2, *ms[2] = {m, NULL};
    cr_assert_eq(glm_open(&m2, out, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    ms[1] = m2;
    cr_assert(glm_index(m, "a", 1) != glm_index(m2, "a", 1) ||
              glm_index(m, "c", 1) != glm_index(m2, "c", 1), "the models' ids differ");
    static const char *const base[] = {"a b c", "c b a", "b a a x", "y c zz a", "", "a"};
    enum { NB = sizeof base / sizeof *base };
    glm_word_cache *wc = glm_word_cache_new();
    cr_assert(wc);
    for (int round = 0; round < 40; round++)
        for (size_t i = 0; i < NB; i++) {
            const glm_model *mm = ms[(round + i) % 2];
            const char *l = base[i];
            size_t n = strlen(l);
            glm_lines_options opt = {.bos = 1, .eos = 1, .threads = 1, .word_cache = wc};
            float tot;
            uint32_t words, oovs, w, o;
            cr_assert_eq(glm_score_lines(mm, &l, &n, 1, &opt, &tot, &words, &oovs, &e), 0, "%s",
                         e.msg);
            float want = sum_words(mm, l, n, 1, 1, &w, &o);
            cr_assert(memcmp(&want, &tot, sizeof want) == 0, "round %d '%s': %.9g != %.9g", round,
                      l, (double)tot, (double)want);
            cr_assert_eq(oovs, o, "round %d '%s'", round, l);
        }
    enum { N = 3000 };
    const char *lines[N];
    size_t lens[N];
    float tot[N];
    for (size_t i = 0; i < N; i++)
        lines[i] = base[i % NB], lens[i] = strlen(base[i % NB]);
    for (int k = 0; k < 4; k++) {
        const glm_model *mm = ms[k % 2];
        glm_lines_options opt = {.bos = 1, .eos = 1, .threads = 1, .word_cache = wc};
        cr_assert_eq(glm_score_lines(mm, lines, lens, N, &opt, tot, NULL, NULL, &e), 0, "%s",
                     e.msg);
        for (size_t i = 0; i < N; i++) {
            uint32_t w, o;
            float want = sum_words(mm, lines[i], lens[i], 1, 1, &w, &o);
            cr_assert(memcmp(&want, &tot[i], sizeof want) == 0, "model %d line %zu", k % 2, i);
        }
    }
    glm_word_cache_free(wc);
    glm_word_cache_free(NULL);
    glm_close(m), glm_close(m2);
    free(arpa), free(out);
}

/* KenLM build_binary's -u and -i (glm_build_options): a missing <unk> gets the given log10
 * probability instead of -100; a positive log10 probability (IRSTLM's bug) reads as 0 instead of
 * being an error. The glm tool speaks the same words and refuses, by name, the ones with no
 * meaning here. */
Test(glm, build_binary_options)
{
    char *arpa = tu_join(dir, "nounk.arpa"), *out = tu_join(dir, "nounk.glm");
    static const char text[] = "\\data\\\nngram 1=3\nngram 2=1\n\n\\1-grams:\n-99\t<s>\t-0.5\n"
                               "-0.8\t</s>\n-0.6\te\n\n\\2-grams:\n0.25\t<s> e\n\n\\end\\\n";
    cr_assert_eq(tu_write_file(arpa, text, sizeof text - 1), 0);
    smt_err e;
    glm_build_options o = {.K = 31, .progress = -1};
    cr_assert_eq(glm_build(arpa, out, &o, NULL, &e), SMT_ERR_PARSE, "a positive probability");
    cr_assert(strstr(e.msg, "nounk.arpa:11: positive log10 probability"), "%s", e.msg);
    o.positive_to_zero = 1;
    o.unk_given = 1;
    o.unk_log10 = -7.5f;
    cr_assert_eq(glm_build(arpa, out, &o, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, 0, &e), 0, "%s", e.msg);
    glm_state s, t;
    glm_state_begin(m, &s);
    glm_word w_e = glm_index(m, "e", 1), w_unk = glm_index(m, "zzz", 3);
    cr_assert_eq(w_unk, GLM_UNK);
    float p = glm_score(m, &s, w_e, &t, NULL);
    cr_assert_eq(p, 0.0f, "<s> e: the positive 0.25 read as 0, got %g", (double)p);
    glm_state_begin(m, &s);
    p = glm_score(m, &s, w_unk, &t, NULL);
    cr_assert_float_eq(p, -7.5f - 0.5f, 1e-6, "<unk> after <s>: -7.5 + backoff -0.5, got %g",
                       (double)p);
    glm_close(m);
    /* the tool */
    char *bin = tu_bin_path("glm"), *cmd = NULL, *err = NULL;
    cr_assert(asprintf(&cmd, "%s build trie -i -u -7.5 %s %s", bin, arpa, out) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
    cr_assert(strstr(err, "'trie': glm's own trie"), "%s", err);
    free(cmd), free(err);
    /* probing: KenLM's probing binary with the same -u and -i, the same scores; no quantization,
     * a multiplier above 1 (test_glm_kenlm checks the bytes against KenLM's) */
    char *kb = tu_join(dir, "nounk.binary");
    o.probing = 1;
    cr_assert_eq(glm_build(arpa, kb, &o, NULL, &e), 0, "%s", e.msg);
    glm_model *k;
    cr_assert_eq(glm_open(&k, kb, 0, &e), 0, "%s", e.msg);
    cr_assert_str_eq(glm_layout_name(k), "kenlm probing");
    glm_state_begin(k, &s);
    p = glm_score(k, &s, glm_index(k, "zzz", 3), &t, NULL);
    cr_assert_float_eq(p, -7.5f - 0.5f, 1e-6, "probing: <unk> after <s>, got %g", (double)p);
    glm_state_begin(k, &s);
    p = glm_score(k, &s, glm_index(k, "e", 1), &t, NULL);
    cr_assert_eq(p, 0.0f, "probing: <s> e, got %g", (double)p);
    glm_close(k);
    o.probing_multiplier = 1.0f;
    cr_assert_eq(glm_build(arpa, kb, &o, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "multiplier"), "%s", e.msg);
    o.probing_multiplier = 0.0f;
    o.prob_bits = o.backoff_bits = 8;
    cr_assert_eq(glm_build(arpa, kb, &o, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "only implemented in the trie"), "%s", e.msg);
    free(kb);
    static const char *const refused[] = {"-b 8", "-a 22", "-p 1.5", "-s", "-v", "-w mmap"};
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        cr_assert(asprintf(&cmd, "%s build %s %s %s", bin, refused[k], arpa, out) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 2, "%s", refused[k]);
        char flag[3] = {refused[k][0], refused[k][1], 0};
        cr_assert(strstr(err, flag) && !strstr(err, "unknown option"), "%s: %s", refused[k], err);
        free(cmd), free(err);
    }
    free(bin), free(arpa), free(out);
}

/* ---------------------------------------------------------------- bounded builds (-S, -T) */

/* A build whose finished levels go through the temporary file (-S of 1 byte) writes the bytes of
 * one that holds them in memory: every fixture, float and quantized, and the sample lm.3. */
Test(glm, build_spilled_same_bytes)
{
    static const char *const names[] = {"glm/chain.arpa", "glm/chain_nounk.arpa",
                                        "glm/zero_context.arpa", "glm/upper_nounk.arpa",
                                        "../../examples/sample/lm.3.arpa.gz"};
    static const uint32_t qbits[][2] = {{0, 0}, {8, 8}, {3, 2}};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++)
        for (size_t q = 0; q < sizeof qbits / sizeof *qbits; q++) {
            char *arpa = tu_data_path(names[i]);
            char *a = tu_join(dir, "mem.glm"), *b = tu_join(dir, "spilled.glm");
            glm_build_options o = {.K = 31, .progress = -1, .prob_bits = qbits[q][0],
                                   .backoff_bits = qbits[q][1]};
            glm_build_stats st;
            smt_err e;
            cr_assert_eq(glm_build(arpa, a, &o, &st, &e), 0, "%s: %s", names[i], e.msg);
            cr_assert_eq(st.temp_bytes, 0, "%s: nothing goes to disk by default", names[i]);
            o.sort_memory = 1;
            o.temp_dir = dir;
            cr_assert_eq(glm_build(arpa, b, &o, &st, &e), 0, "%s: %s", names[i], e.msg);
            cr_assert_gt(st.temp_bytes, 0, "%s: -S 1 spills", names[i]);
            size_t na, nb;
            char *da = tu_read_file(a, &na), *db = tu_read_file(b, &nb);
            cr_assert(na == nb && memcmp(da, db, na) == 0, "%s q%u: spilled build differs",
                      names[i], qbits[q][0]);
            free(da), free(db), free(a), free(b), free(arpa);
        }
    /* nothing is left in the temporary folder: the two models only */
    DIR *d = opendir(dir);
    cr_assert_not_null(d);
    int files = 0;
    for (struct dirent *de; (de = readdir(d));)
        files += de->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(files, 2);
}

/* The spill reads back what was put, from memory or from its file; a damaged or truncated file
 * is an error naming the folder, never wrong bytes. */
Test(glm, spill_checks_its_file)
{
    size_t n = (3u << 20) + 12345;
    uint8_t *data = malloc(n), *back = malloc(n);
    cr_assert(data && back);
    for (size_t i = 0; i < n; i++)
        data[i] = (uint8_t)(i * 2654435761u >> 13);
    for (int damage = 0; damage < 4; damage++) {
        glm_spill s;
        smt_err e;
        cr_assert_eq(glm_spill_open(&s, damage == 3 ? n : 1000, dir, &e), 0, "%s", e.msg);
        for (size_t at = 0; at < n; at += 4096) /* in pieces, as the levels come */
            cr_assert_eq(glm_spill_put(&s, data + at, n - at < 4096 ? n - at : 4096, &e), 0);
        cr_assert_eq(s.spilled, damage != 3);
        cr_assert_eq(glm_spill_rewind(&s, &e), 0, "%s", e.msg);
        if (damage == 1) { /* a byte of the second block's data */
            uint8_t x = 0x5a;
            cr_assert_eq(pwrite(s.fd, &x, 1, 16 + 16 + (1u << 20) + 16 + 777), 1);
        } else if (damage == 2) {
            cr_assert_eq(ftruncate(s.fd, 16 + 2 * (16 + (1u << 20)) + 100), 0);
        }
        int rc = 0;
        for (size_t at = 0; at < n && !rc; at += 100000)
            rc = glm_spill_get(&s, back + at, n - at < 100000 ? n - at : 100000, &e);
        if (damage == 1 || damage == 2) {
            cr_assert_eq(rc, SMT_ERR_CORRUPT, "damage %d", damage);
            cr_assert(strstr(e.msg, damage == 1 ? "checksum mismatch" : "truncated") &&
                          strstr(e.msg, dir),
                      "%s", e.msg);
        } else {
            cr_assert_eq(rc, 0, "%s", e.msg);
            cr_assert(memcmp(data, back, n) == 0);
            cr_assert_eq(glm_spill_get(&s, back, 1, &e), SMT_ERR_ARG, "past the end");
        }
        glm_spill_close(&s);
    }
    free(data), free(back);
}

/* The sort on disk: records added in a scrambled order through a buffer of a few records make
 * many runs; the merged level is in order of the reversed ids, each record with its parent's
 * rank and its values, and the contexts are marked. A duplicate or a missing context is reported
 * with the record's order and index, a missing suffix inserted (FixSRI: the unigram's
 * probability less its context's backoff); a damaged or truncated run file is an error naming
 * the folder. */
enum { EXT_V = 20, EXT_W = 9 };

static float ext_prob(const uint32_t *ids, unsigned n)
{
    return -(float)(ids[0] * 400 + ids[1] * 20 + (n > 2 ? ids[2] : 0)) / 1024.0f - 0.5f;
}

/* All 2-grams over EXT_V words and all 3-grams over EXT_W (reversed ids), scrambled; extra:
 * 0 none, 1 a duplicate 3-gram, 2 a 3-gram without its suffix, 3 one without its context. */
static int ext_fill(glm_ext *x, int extra, smt_err *e)
{
    int rc = glm_ext_levels(x, 3, e);
    glm_ext_vocab(x, 2 * EXT_V);
    for (uint32_t i = 0; i < EXT_V * EXT_V && !rc; i++) {
        uint32_t j = (i * 7919u) % (EXT_V * EXT_V), ids[2] = {j / EXT_V, j % EXT_V};
        rc = glm_ext_add(x, 2, ids, ext_prob(ids, 2), -0.0f, e);
    }
    if (!rc)
        rc = glm_ext_end_order(x, 2, e);
    for (uint32_t i = 0; i < EXT_W * EXT_W * EXT_W && !rc; i++) {
        uint32_t j = (i * 7919u) % (EXT_W * EXT_W * EXT_W);
        uint32_t ids[3] = {j / (EXT_W * EXT_W), j / EXT_W % EXT_W, j % EXT_W};
        rc = glm_ext_add(x, 3, ids, ext_prob(ids, 3), 0.0f, e);
    }
    uint32_t bad[3][3] = {{3, 4, 5}, {EXT_V + 1, 2, 3}, {2, 3, EXT_V + 1}};
    if (!rc && extra)
        rc = glm_ext_add(x, 3, bad[extra - 1], -1.0f, 0.0f, e);
    if (!rc)
        rc = glm_ext_end_order(x, 3, e);
    return rc;
}

Test(glm, ext_merges_runs)
{
    for (int extra = 0; extra < 4; extra++) {
        glm_ext x;
        smt_err e;
        cr_assert_eq(glm_ext_open(&x, 1, dir, &e), 0, "%s", e.msg);
        cr_assert_eq(ext_fill(&x, extra, &e), 0, "%s", e.msg);
        cr_assert_gt(x.l[3].nr, 4, "many runs");
        cr_assert_gt(x.l[3].nc, 4, "many runs of contexts");
        float uprob[2 * EXT_V], ubo[2 * EXT_V];
        for (int w = 0; w < 2 * EXT_V; w++)
            uprob[w] = -0.25f * (float)w, ubo[w] = w == 2 ? -0.0f : -0.125f;
        glm_ext_bad bad;
        cr_assert_eq(glm_ext_check(&x, uprob, ubo, &bad, &e), 0, "extra %d: %s", extra, e.msg);
        const unsigned kinds[4] = {0, GLM_EXT_DUP, 0, GLM_EXT_NOCTX};
        cr_assert_eq(bad.kind, kinds[extra], "extra %d: %u", extra, bad.kind);
        if (bad.kind) {
            cr_assert_eq(bad.n, 3);
            cr_assert_eq(bad.index, EXT_W * EXT_W * EXT_W, "extra %d: the added 3-gram, not %llu",
                         extra, (unsigned long long)bad.index);
            cr_assert_eq(bad.ids[1], extra == 1 ? 4 : 3);
            glm_ext_close(&x);
            continue;
        }
        if (extra == 2) { /* the 2-gram {EXT_V + 1, 2} inserted, last in its level */
            cr_assert_eq(x.l[2].count, EXT_V * EXT_V + 1);
            cr_assert_eq(x.l[3].count, EXT_W * EXT_W * EXT_W + 1);
            cr_assert_eq(ubo[2], 0.0f);
            cr_assert_eq(signbit(ubo[2]), 0, "its context extends");
            glm_spill_cur c;
            uint32_t rec[5];
            cr_assert_eq(glm_ext_lev_open(&x, 2, &c, &e), 0, "%s", e.msg);
            for (uint32_t i = 0; i <= EXT_V * EXT_V; i++)
                cr_assert_eq(glm_spill_cur_get(&c, rec, sizeof rec, &e), 0, "%s", e.msg);
            glm_spill_cur_close(&c);
            float p, bo;
            memcpy(&p, &rec[2], 4);
            memcpy(&bo, &rec[3], 4);
            cr_assert(rec[0] == EXT_V + 1 && rec[1] == 2 && rec[4] == EXT_V + 1);
            cr_assert_eq(p, -(0.25f * (EXT_V + 1)), "%g", (double)p);
            cr_assert(bo == 0.0f && signbit(bo));
            glm_ext_close(&x);
            continue;
        }
        cr_assert_eq(x.l[3].count, EXT_W * EXT_W * EXT_W);
        glm_spill_cur c;
        uint32_t rec[6];
        cr_assert_eq(glm_ext_lev_open(&x, 3, &c, &e), 0, "%s", e.msg);
        for (uint32_t i = 0; i < EXT_W * EXT_W * EXT_W; i++) {
            cr_assert_eq(glm_spill_cur_get(&c, rec, sizeof rec, &e), 0, "%s", e.msg);
            uint32_t want[3] = {i / (EXT_W * EXT_W), i / EXT_W % EXT_W, i % EXT_W};
            cr_assert(memcmp(rec, want, sizeof want) == 0, "record %u out of order", i);
            float p;
            memcpy(&p, &rec[3], 4);
            cr_assert_eq(p, ext_prob(want, 3));
            cr_assert_eq(rec[5], want[0] * EXT_V + want[1], "record %u: parent %u", i, rec[5]);
        }
        cr_assert_eq(glm_spill_cur_get(&c, rec, sizeof rec, &e), 1, "the end");
        glm_spill_cur_close(&c);
        for (uint32_t r = 0; r < EXT_V * EXT_V; r++) /* contexts: the 2-grams below EXT_W */
            cr_assert_eq((int)(x.l[2].ext[r >> 6] >> (r & 63) & 1),
                         r / EXT_V < EXT_W && r % EXT_V < EXT_W, "2-gram %u", r);
        glm_ext_close(&x);
    }
    for (int damage = 1; damage <= 2; damage++) {
        glm_ext x;
        smt_err e;
        cr_assert_eq(glm_ext_open(&x, 1, dir, &e), 0, "%s", e.msg);
        cr_assert_eq(ext_fill(&x, 0, &e), 0, "%s", e.msg);
        const glm_spill_pos *m = x.l[3].rmark;
        if (damage == 1) { /* a byte inside the third run */
            uint8_t b = 0x5a;
            cr_assert_eq(pwrite(x.l[3].runs.fd, &b, 1, (off_t)m[4].off + 16 + 5), 1);
        } else {
            cr_assert_eq(ftruncate(x.l[3].runs.fd, (off_t)m[4].off + 20), 0);
        }
        float uni[2 * EXT_V] = {0};
        glm_ext_bad bad;
        cr_assert_eq(glm_ext_check(&x, uni, uni, &bad, &e), SMT_ERR_CORRUPT, "damage %d", damage);
        cr_assert(strstr(e.msg, damage == 1 ? "checksum mismatch" : "truncated") &&
                      strstr(e.msg, dir),
                  "%s", e.msg);
        glm_ext_close(&x);
    }
}

/* -S takes KenLM's sizes strictly; -T must name a folder where a file can be made, which is
 * checked before the ARPA file is read. */
Test(glm, build_size_and_temp_flags)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa");
    char *out = tu_join(dir, "flags.glm"), *file = tu_join(dir, "a-file"), *cmd, *err;
    cr_assert_eq(tu_write_file(file, "x", 1), 0);
    static const char *const good[] = {"-S 1b", "-S 64", "-S 0.5K", "-S 10M", "-S 1G", "-S 5%",
                                       "-S 1k", "-T .", "-S 1b -T /tmp"};
    for (size_t k = 0; k < sizeof good / sizeof *good; k++) {
        cr_assert(asprintf(&cmd, "%s build %s %s %s", bin, good[k], arpa, out) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s: %s", good[k], err);
        free(cmd), free(err);
    }
    static const char *const bad[] = {"-S", "-S ''", "-S 0", "-S -1", "-S 1x", "-S 1KB",
                                      "-S ' 1'", "-S %", "-S 99999999999E",
                                      "-S nan", "-T", "-T ''"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        cr_assert(asprintf(&cmd, "%s build %s %s %s", bin, arpa, out, bad[k]) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 2, "%s", bad[k]);
        char flag[3] = {bad[k][0], bad[k][1], 0};
        cr_assert(strstr(err, flag) && !strstr(err, "unknown option"), "%s: %s", bad[k], err);
        free(cmd), free(err);
    }
    unlink(out);
    const char *unusable[] = {"/nonexistent-glm-folder/x", file};
    for (size_t k = 0; k < 2; k++) {
        cr_assert(asprintf(&cmd, "%s build -T '%s' %s %s", bin, unusable[k], arpa, out) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 1, "%s", unusable[k]);
        cr_assert(strstr(err, unusable[k]) && strstr(err, "cannot create a temporary file"),
                  "%s", err);
        cr_assert(access(out, F_OK) != 0, "no model when -T is unusable");
        free(cmd), free(err);
    }
    free(bin), free(arpa), free(out), free(file);
}

/* ---------------------------------------------------------------- quantized files (-q -b) */

static glm_model *build_open_q(const char *name, uint32_t K, uint32_t qp, uint32_t qb,
                               const char *out_name)
{
    char rel[64];
    snprintf(rel, sizeof rel, "glm/%s", name);
    char *arpa = tu_data_path(rel), *out = tu_join(dir, out_name);
    glm_build_options opt = {
        .K = K, .progress = -1, .warn = NULL, .prob_bits = qp, .backoff_bits = qb};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), 0, "%s", e.msg);
    glm_model *m;
    cr_assert_eq(glm_open(&m, out, GLM_OPEN_VERIFY, &e), 0, "%s", e.msg);
    unsigned p, b;
    cr_assert_eq(glm_quantization(m, &p, &b), 1);
    cr_assert(p == qp && b == qb, "%u/%u", p, b);
    free(arpa), free(out);
    return m;
}

/* Every path of a model (rows: reference, fast on 1 and 2 threads, with the big-group index over
 * every group and over groups of 2 or more; the state API: fast and reference, from <s> and from
 * the null context) gives the same floats, lengths and states. */
static void paths_agree(glm_model *m)
{
    uint32_t V = glm_vocab_size(m);
    unsigned N = glm_order(m);
    cr_assert_eq(N, 3);
    size_t nr = (size_t)V * V * V;
    glm_word *rows = malloc(nr * 3 * sizeof *rows);
    float *p1 = malloc(nr * 4), *p2 = malloc(nr * 4);
    uint8_t *l1 = malloc(nr), *l2 = malloc(nr);
    size_t r = 0;
    for (uint32_t x = 0; x < V; x++)
        for (uint32_t y = 0; y < V; y++)
            for (uint32_t z = 0; z < V; z++, r++) {
                rows[3 * r] = x;
                rows[3 * r + 1] = y;
                rows[3 * r + 2] = z;
            }
    smt_err e;
    cr_assert_eq(glm_score_rows_ref(m, rows, nr, p1, l1, &e), 0);
    for (uint64_t min_n = 0; min_n <= 2; min_n++) {
        if (min_n)
            cr_assert_eq(glm_bigidx_build(m, min_n, &e), 0);
        for (unsigned th = 1; th <= 2; th++) {
            memset(p2, 0, nr * 4);
            cr_assert_eq(glm_score_rows(m, rows, nr, p2, l2, th, &e), 0);
            for (r = 0; r < nr; r++)
                cr_assert(memcmp(&p2[r], &p1[r], 4) == 0 && l2[r] == l1[r],
                          "index %llu threads %u row %zu", (unsigned long long)min_n, th, r);
        }
        for (r = 0; r < nr; r++)
            for (int start = 0; start < 2; start++) {
                glm_state a, oa, ob;
                if (start)
                    glm_state_begin(m, &a);
                else
                    glm_state_null(&a);
                for (int k = 0; k < 3; k++) {
                    unsigned la, lb;
                    float pa = glm_score(m, &a, rows[3 * r + k], &oa, &la);
                    float pb = glm_score_ref(m, &a, rows[3 * r + k], &ob, &lb);
                    cr_assert(memcmp(&pa, &pb, 4) == 0 && la == lb && glm_state_equal(&oa, &ob),
                              "state api row %zu word %d", r, k);
                    if (k == 2) /* the row's score is the state score after its two words */
                        cr_assert(start || (memcmp(&pa, &p1[r], 4) == 0 && la == l1[r]),
                                  "row %zu: %.9g vs %.9g", r, (double)pa, (double)p1[r]);
                    a = oa;
                }
            }
        free(query(m, "a b c\nc b a a b\n\nb b b c a\nx y z\n", GLM_VERBOSE_WORD, 0));
        free(query(m, "a b c\nc b a a b\n\nb b b c a\nx y z\n", GLM_VERBOSE_WORD, 1));
    }
    free(rows), free(p1), free(p2), free(l1), free(l2);
}

/* The center of a bin as KenLM's MakeBins computes it: a double sum divided by the count as a
 * float, rounded to float. */
static float center(const float *v, int n)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++)
        sum += v[i];
    return (float)(sum / (double)(float)n);
}

/* chain.arpa quantized to 1 probability bit and 2 backoff bits, values by hand (KenLM's binning,
 * lm/quantize.cc):
 *   bigram probabilities sorted -0.5 -0.45 | -0.4 -0.3 -0.2: bin 0 ends at 5*1/2 = 2, so the
 *     centers are c0 = mean(-0.5, -0.45) and c1 = mean(-0.4, -0.3, -0.2); a value takes the
 *     nearer center: -0.4 is 0.075 from c0 and 0.1 from c1, so "a b" reads c0; "<s> a" (-0.3)
 *     and "b </s>" (-0.2) read c1, "b c" and "a a" c0;
 *   bigram backoffs: codes 0 and 1 are -0 and 0, the non-zero ones (-0.25, -0.1) one bin each:
 *     exact; trigram probabilities (-0.15, -0.1): one bin each, exact;
 *   unigrams are not quantized. */
Test(glm, quantized_bins_by_hand)
{
    const float lo[2] = {-0.5f, -0.45f}, hi[3] = {-0.4f, -0.3f, -0.2f};
    const float c0 = center(lo, 2), c1 = center(hi, 3);
    for (uint32_t K = 3; K <= 31; K += 28) {
        glm_model *m = build_open_q("chain.arpa", K, 1, 2, "q12.glm");
        glm_word a = glm_index(m, "a", 1), b = glm_index(m, "b", 1), c = glm_index(m, "c", 1),
                 eos = glm_index(m, "</s>", 4);
        glm_state s0, s1, s2, s3;
        unsigned len;
        glm_state_begin(m, &s0);
        float p = glm_score(m, &s0, a, &s1, &len); /* "<s> a" */
        cr_assert(p == c1 && len == 2, "<s> a: %.9g, want %.9g", (double)p, (double)c1);
        cr_assert(s1.length == 2 && s1.backoff[1] == -0.1f, "the backoff of <s> a is exact");
        p = glm_score(m, &s1, b, &s2, &len); /* "<s> a b": a trigram, exact */
        cr_assert(p == -0.1f && len == 3, "%.9g", (double)p);
        p = glm_score(m, &s2, c, &s3, &len); /* "a b c" */
        cr_assert(p == -0.15f && len == 3, "%.9g", (double)p);
        glm_state_null(&s0);
        p = glm_score(m, &s0, a, &s1, &len); /* "a": a unigram, not quantized */
        cr_assert(p == -0.6f && len == 1);
        p = glm_score(m, &s1, b, &s2, &len); /* "a b": -0.4 reads c0, the nearer center */
        cr_assert(p == c0 && len == 2, "a b: %.9g, want %.9g", (double)p, (double)c0);
        cr_assert(s2.backoff[1] == -0.25f, "the backoff of a b: %.9g", (double)s2.backoff[1]);
        p = glm_score(m, &s2, eos, &s3, &len); /* "b </s>" (-0.2) reads c1, plus backoff(a b) */
        cr_assert(p == c1 + -0.25f && len == 2, "%.9g", (double)p);
        paths_agree(m);
        glm_close(m);
    }
    /* -b 1 leaves no bin for chain.arpa's non-zero backoffs: refused, not written wrong */
    char *arpa = tu_data_path("glm/chain.arpa"), *out = tu_join(dir, "b1.glm");
    glm_build_options opt = {.K = 31, .progress = -1, .prob_bits = 8, .backoff_bits = 1};
    smt_err e;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "-b 1 leaves no bin"), "%s", e.msg);
    cr_assert_eq(tu_file_size(out), -1, "nothing written");
    opt.backoff_bits = 26;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), SMT_ERR_ARG);
    opt.backoff_bits = 0;
    cr_assert_eq(glm_build(arpa, out, &opt, NULL, &e), SMT_ERR_ARG);
    free(arpa), free(out);
}

/* KenLM's query on its `build_binary trie -q 8 -b 8` of the tiny fixtures
 * (tests/data/glm/kenlm/tiny.*.trie-q8-b8.query) printed these numbers; glm's quantized build of
 * the same ARPA file prints them too, on every path. Only the word ids differ (a KenLM trie
 * numbers words by their hash), so they are cut out of both. */
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

Test(glm, quantized_is_kenlms_tiny)
{
    const char *names[2] = {"chain", "suffix"};
    for (int i = 0; i < 2; i++) {
        char arpa[64], rel[96];
        snprintf(arpa, sizeof arpa, "%s.arpa", names[i]);
        glm_model *m = build_open_q(arpa, 4, 8, 8, "q88.glm");
        snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.trie-q8-b8.txt", names[i]);
        char *txt_path = tu_data_path(rel);
        snprintf(rel, sizeof rel, "glm/kenlm/tiny.%s.trie-q8-b8.query", names[i]);
        char *want_path = tu_data_path(rel);
        size_t n;
        char *txt = tu_read_file(txt_path, &n), *want = tu_read_file(want_path, &n);
        cr_assert(txt && want);
        char *got = query(m, txt, GLM_VERBOSE_WORD, 0);
        char *g = strip_ids(got), *w = strip_ids(want);
        cr_assert_str_eq(g, w, "%s", names[i]);
        free(g), free(w), free(got), free(txt), free(want), free(txt_path), free(want_path);
        glm_close(m);
    }
}

/* Copies the .glm at src to dst with its parameter block's quantization field set to quant
 * (checksums recomputed: a file another writer could have made). */
static void rewrite_quant(const char *src, const char *dst, uint32_t quant, const char *drop)
{
    smt_mapped *mp;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&mp, src, GLM_KIND, GLM_KIND_VERSION, 0, &e), 0, "%s", e.msg);
    size_t psize;
    glm_params par;
    memcpy(&par, smt_mapped_params(mp, &psize), sizeof par);
    par.quant = quant;
    smt_writer *w;
    cr_assert_eq(smt_writer_open(&w, dst, GLM_KIND, GLM_KIND_VERSION, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_writer_set_params(w, &par, sizeof par, &e), 0);
    for (unsigned i = 0; i < smt_mapped_section_count(mp); i++) {
        const char *name;
        uint64_t off, size, sum;
        smt_mapped_section_info(mp, i, &name, &off, &size, &sum);
        if (drop && strcmp(name, drop) == 0)
            continue;
        const void *data = smt_mapped_section(mp, name, &size);
        cr_assert_eq(smt_writer_section(w, name, data, size, &e), 0, "%s", e.msg);
    }
    cr_assert_eq(smt_writer_finish(w, &e), 0, "%s", e.msg);
    smt_mapped_close(mp);
}

/* A copy of src with one section's byte at off OR-ed with or_mask and another uint32 at word
 * index wi of it set to wv (wi < 0: none); the checksums are recomputed, so only the open-time
 * checks can tell. */
static void rewrite_section(const char *src, const char *dst, const char *sec, uint64_t off,
                            uint8_t or_mask, long wi, uint32_t wv)
{
    smt_mapped *mp;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&mp, src, GLM_KIND, GLM_KIND_VERSION, 0, &e), 0, "%s", e.msg);
    size_t psize;
    const void *par = smt_mapped_params(mp, &psize);
    smt_writer *w;
    cr_assert_eq(smt_writer_open(&w, dst, GLM_KIND, GLM_KIND_VERSION, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_writer_set_params(w, par, psize, &e), 0);
    int found = 0;
    for (unsigned i = 0; i < smt_mapped_section_count(mp); i++) {
        const char *name;
        uint64_t o, size, sum;
        smt_mapped_section_info(mp, i, &name, &o, &size, &sum);
        const void *data = smt_mapped_section(mp, name, &size);
        uint8_t *copy = malloc(size + 1);
        memcpy(copy, data, size);
        if (strcmp(name, sec) == 0) {
            found = 1;
            cr_assert(off < size && (wi < 0 || (uint64_t)(wi + 1) * 4 <= size));
            copy[off] |= or_mask;
            if (wi >= 0)
                memcpy(copy + wi * 4, &wv, 4);
        }
        cr_assert_eq(smt_writer_section(w, name, copy, size, &e), 0, "%s", e.msg);
        free(copy);
    }
    cr_assert(found, "no section %s", sec);
    cr_assert_eq(smt_writer_finish(w, &e), 0, "%s", e.msg);
    smt_mapped_close(mp);
}

/* The packed quantized layout of chain.arpa -q 8 -b 8, section by section, computed by hand:
 *   6 words: ids 0..5 take 3 bits; 5 bigrams + 2 trigrams = 7 keys: 21 bits -> 3 bytes + 8;
 *   level 2: 5 entries + the sentinel, first children 0,0,..,2 (the trigrams "<s> a b", "a b c"
 *     extend the bigrams "a b" and "b c" once each): one block of 8 records (cost 6 * 2 + 32 bits,
 *     against 192 for a base per record, 6 * 2 + 64 for blocks of 4, ...), its base 0, deltas of
 *     2 bits: qshape[2] = 2 | 3 << 8;
 *   qrec: 6 records of 2 + 8 + 8 bits and 2 trigram codes of 8 bits: 124 bits -> 16 bytes + 8;
 *   qbins: 256 + 256 (order 2) + 256 (order 3) floats. */
Test(glm, quantized_packed_layout_by_hand)
{
    glm_close(build_open_q("chain.arpa", 31, 8, 8, "p.glm"));
    char *path = tu_join(dir, "p.glm");
    smt_mapped *mp;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&mp, path, GLM_KIND, GLM_KIND_VERSION, SMT_OPEN_VERIFY, &e), 0,
                 "%s", e.msg);
    const struct { const char *name; uint64_t size; } want[] = {
        {"keys", 11}, {"mid", 7 * sizeof(glm_mid)}, {"qrec", 24}, {"qbins", 768 * 4},
        {"qbase", 4}, {"qshape", GLM_QSHAPE_N * 4}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        uint64_t size;
        cr_assert_not_null(smt_mapped_section(mp, want[i].name, &size), "%s", want[i].name);
        cr_assert_eq(size, want[i].size, "%s: %llu bytes", want[i].name,
                     (unsigned long long)size);
    }
    uint64_t size;
    const uint32_t *shape = smt_mapped_section(mp, "qshape", &size),
                   *base = smt_mapped_section(mp, "qbase", &size);
    for (unsigned k = 0; k < GLM_QSHAPE_N; k++)
        cr_assert_eq(shape[k], k == 2 ? (2u | 3u << 8) : 0u, "qshape[%u] = 0x%x", k, shape[k]);
    cr_assert_eq(base[0], 0u);
    size_t psize;
    const glm_params *par = smt_mapped_params(mp, &psize);
    cr_assert_eq(par->quant, 8u | 8u << 8 | GLM_QUANT_PACKED);
    smt_mapped_close(mp);
    free(path);
}

/* Damage inside the packed layout's sections, checksums recomputed: a child shape out of range or
 * of another width, a wrong base, a key that is no word id (read only by a verified open: it
 * could only give other numbers). */
Test(glm, quantized_packed_damaged)
{
    glm_close(build_open_q("chain.arpa", 31, 8, 8, "pd.glm"));
    char *path = tu_join(dir, "pd.glm"), *bad = tu_join(dir, "pbad.glm");
    glm_model *m;
    smt_err e;
    const struct { const char *sec; uint64_t off; uint8_t or_mask; long wi; uint32_t wv;
                   unsigned flags; const char *msg; } cases[] = {
        {"qshape", 0, 0, 2, 33 | 3u << 8, 0, "qshape"},  /* 33 delta bits */
        {"qshape", 0, 0, 2, 2 | 32u << 8, 0, "qshape"},  /* a shift of 32 */
        {"qshape", 0, 0, 1, 1, 0, "qshape"},             /* a shape for the unigrams */
        {"qshape", 0, 0, 3, 1, 0, "qshape"},             /* one for the highest order */
        {"qshape", 0, 0, 2, 3 | 3u << 8, 0, "qrec"},     /* other record sizes */
        {"qshape", 0, 0, 2, 2 | 2u << 8, 0, "qbase"},    /* other block counts */
        {"qbase", 0, 0, 0, 1, 0, "child pointers"},      /* the first child is not 0 */
        {"qrec", 0, 0x03, -1, 0, 0, "child pointers"},   /* a delta past its range */
        {"keys", 0, 0x07, -1, 0, 0, NULL},               /* key 7 of 6 words: opens, */
        {"keys", 0, 0x07, -1, 0, GLM_OPEN_VERIFY, "not a word id"}, /* refused verified */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rewrite_section(path, bad, cases[i].sec, cases[i].off, cases[i].or_mask, cases[i].wi,
                        cases[i].wv);
        int rc = glm_open(&m, bad, cases[i].flags, &e);
        if (!cases[i].msg) {
            cr_assert_eq(rc, 0, "case %zu: %s", i, e.msg);
            glm_close(m);
            continue;
        }
        cr_assert_neq(rc, 0, "case %zu opened", i);
        cr_assert(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
    }
    free(path), free(bad);
}

/* A damaged quantized file: every truncation and covered bit flip refused; a parameter block that
 * claims other bits, none, or bits beyond 25, and a missing section: refused by name. */
Test(glm, quantized_damaged_and_foreign)
{
    glm_close(build_open_q("chain.arpa", 31, 8, 8, "d.glm"));
    char *path = tu_join(dir, "d.glm"), *bad = tu_join(dir, "bad.glm");
    damaged(path);
    glm_model *m;
    smt_err e;
    const uint32_t P = GLM_QUANT_PACKED;
    const struct { uint32_t quant; const char *drop, *msg; } cases[] = {
        {8 | 8 << 8 | P, NULL, NULL},                         /* the copy itself opens */
        {7 | 8 << 8 | P, NULL, "qrec"},                        /* other record sizes */
        {8 | 7 << 8 | P, NULL, "qrec"},
        {26 | 8 << 8 | P, NULL, "quantization field"},         /* beyond KenLM's 25 bits */
        {8 | 0 << 8 | P, NULL, "quantization field"},          /* no backoff bits */
        {8 | 8 << 8 | P | 1u << 17, NULL, "quantization field"}, /* unknown bits */
        {P, NULL, "quantization field"},                       /* the flag alone */
        {8 | 8 << 8, NULL, "first quantized layout"},          /* the first layout: by name */
        {0, NULL, "mid"},                                      /* read as a float file */
        {8 | 8 << 8 | P, "qbins", "qbins"},                    /* a section missing */
        {8 | 8 << 8 | P, "qbase", "qbase"},
        {8 | 8 << 8 | P, "qshape", "qshape"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        rewrite_quant(path, bad, cases[i].quant, cases[i].drop);
        int rc = glm_open(&m, bad, 0, &e);
        if (!cases[i].msg) {
            cr_assert_eq(rc, 0, "%s", e.msg);
            glm_close(m);
            continue;
        }
        cr_assert_neq(rc, 0, "case %zu opened", i);
        cr_assert(strstr(e.msg, cases[i].msg), "case %zu: %s", i, e.msg);
    }
    free(path), free(bad);
}

/* The tool: glm build -q/-b (KenLM's defaults: -b is -q's unless given), glm info states it, and
 * glm query on it is glm_query_lines's output. */
Test(glm, quantized_tool)
{
    char *bin = tu_bin_path("glm"), *arpa = tu_data_path("glm/chain.arpa");
    char *model = tu_join(dir, "t.glm");
    char *out = NULL, *err = NULL;
    cr_assert_eq(tu_runf(NULL, &err, "%s build trie -q 4 %s %s", bin, arpa, model), 0, "%s", err);
    cr_assert(strstr(err, "quantized 4/4 bits"), "%s", err);
    free(err);
    cr_assert_eq(tu_runf(&out, NULL, "%s info %s", bin, model), 0);
    cr_assert(strstr(out, "quantized\t4 prob bits, 4 backoff bits\n"), "%s", out);
    free(out);
    cr_assert_eq(tu_runf(NULL, &err, "%s build -b 3 %s %s -q 5", bin, arpa, model), 0, "%s", err);
    free(err);
    cr_assert_eq(tu_runf(&out, NULL, "%s info --verify %s", bin, model), 0);
    cr_assert(strstr(out, "quantized\t5 prob bits, 3 backoff bits\n"), "%s", out);
    free(out);
    cr_assert_eq(tu_runf(&out, NULL, "echo 'a b c' | %s query %s", bin, model), 0);
    glm_model *m;
    smt_err e;
    cr_assert_eq(glm_open(&m, model, 0, &e), 0, "%s", e.msg);
    char *want = query(m, "a b c\n", GLM_VERBOSE_WORD, 0);
    cr_assert_str_eq(out, want);
    free(out), free(want);
    glm_close(m);
    cr_assert_eq(tu_runf(NULL, &err, "%s build %s %s", bin, arpa, model), 0, "%s", err);
    free(err);
    cr_assert_eq(tu_runf(&out, NULL, "%s info %s", bin, model), 0);
    cr_assert(strstr(out, "quantized\tno\n"), "%s", out);
    free(out), free(bin), free(arpa), free(model);
}

/* The text path's word cache (glm_text.c) is exact: every token of a text made to collide in it
 * gets the id glm_index gives. The vocabulary: 3000 words of 11 to 16 bytes sharing their first 8
 * (so many share a cache entry's first key word and length), 500 sharing all but their first
 * byte, short words and their one-letter extensions and prefixes, words over 16 bytes; the text
 * adds unknown variants, tabs and words at line ends. On a .glm and a KenLM binary, and a block
 * moved from one model to the other and back keeps no id of the first. */
Test(glm, word_cache_is_exact)
{
    enum { NSAME8 = 3000, NSAMEB = 500, NSHORT = 500, NLONG = 50 };
    const char *b36 = "0123456789abcdefghijklmnopqrstuvwxyz";
    size_t cap = 2 * (NSAME8 + NSAMEB + 3 * NSHORT + NLONG) + 16, nv = 0, nw = 0;
    char **words = calloc(cap, sizeof *words);
    cr_assert_not_null(words);
    for (int i = 0; i < NSAME8; i++) /* "abcdefgh" + 3 digits of i + 0..5 'z' */
        cr_assert(asprintf(&words[nw++], "abcdefgh%c%c%c%.*s", b36[i / 1296], b36[i / 36 % 36],
                           b36[i % 36], i % 6, "zzzzz") > 0);
    for (int i = 0; i < NSAMEB; i++) /* one varying byte, then the same 15 */
        cr_assert(asprintf(&words[nw++], "%c%cbcdefghijklmn", b36[i / 36 % 36], b36[i % 36]) > 0);
    for (int i = 0; i < NSHORT; i++)
        cr_assert(asprintf(&words[nw++], "s%d", i) > 0);
    for (int i = 0; i < NLONG; i++)
        cr_assert(asprintf(&words[nw++], "abcdefghijklmnop%d", i) > 0);
    nv = nw;
    /* unknown: the short words extended and cut, the 8-byte family one 'y' longer */
    for (int i = 0; i < NSHORT; i++) {
        cr_assert(asprintf(&words[nw++], "s%dx", i) > 0);
        cr_assert(asprintf(&words[nw++], "%.*s", i < 10 ? 1 : 2, words[NSAME8 + NSAMEB + i]) > 0);
    }
    for (int i = 0; i < NSAME8; i += 7)
        cr_assert(asprintf(&words[nw++], "%sy", words[i]) > 0);
    cr_assert(nw <= cap);
    /* a bigram model of the vocabulary */
    char *arpa = tu_join(dir, "cache.arpa");
    FILE *f = fopen(arpa, "w");
    cr_assert_not_null(f);
    fprintf(f, "\\data\\\nngram 1=%zu\nngram 2=1\n\n\\1-grams:\n-1.0\t<unk>\t0\n"
               "-99\t<s>\t-0.5\n-0.7\t</s>\n", nv + 3);
    for (size_t i = 0; i < nv; i++)
        fprintf(f, "-%zu.5\t%s\t-0.25\n", 1 + i % 5, words[i]);
    fprintf(f, "\n\\2-grams:\n-0.3\t<s> %s\n\n\\end\\\n", words[0]);
    cr_assert_eq(fclose(f), 0);
    char *bin = tu_data_path("glm/kenlm/tiny.chain.probing.bin");
    glm_model *ms[2];
    smt_err e;
    cr_assert_eq(glm_load(&ms[0], arpa, 0, NULL, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_load(&ms[1], bin, 0, NULL, &e), 0, "%s", e.msg);
    cr_assert_eq(glm_vocab_size(ms[0]), nv + 3);
    /* lines of random words, each token's word remembered */
    enum { NLINES = 3000 };
    uint64_t x = 88172645463325252ull;
    size_t ntok = 0, *tok = malloc(40 * NLINES * sizeof *tok);
    char **lines = malloc(NLINES * sizeof *lines);
    cr_assert(tok && lines);
    for (int l = 0; l < NLINES; l++) {
        char *buf = NULL;
        size_t blen = 0;
        FILE *m = open_memstream(&buf, &blen);
        cr_assert_not_null(m);
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        int n = 1 + (int)(x % 40);
        for (int i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            size_t w = (size_t)(x % nw);
            fprintf(m, "%s%s", i ? ((x >> 20) & 3 ? " " : "\t ") : "", words[w]);
            tok[ntok++] = w;
        }
        fclose(m);
        lines[l] = buf;
    }
    glm_block b;
    memset(&b, 0, sizeof b);
    const int order[3] = {0, 1, 0};
    for (int r = 0; r < 3; r++) {
        const glm_model *m = ms[order[r]];
        b.ntok = b.nlines = b.ntxt = 0;
        for (int l = 0; l < NLINES; l++)
            cr_assert_eq(glm_block_add_line(&b, m, lines[l], strlen(lines[l]), 0), 0);
        cr_assert_eq(b.ntok, ntok);
        size_t known = 0;
        for (size_t t = 0; t < ntok; t++) {
            const char *w = words[tok[t]];
            glm_word want = glm_index(m, w, strlen(w));
            known += want != GLM_UNK;
            cr_assert_eq(b.ids[t], want, "round %d token %zu \"%s\": id %u, want %u", r, t, w,
                         (unsigned)b.ids[t], (unsigned)want);
        }
        cr_assert(r == 1 || known > ntok / 2, "the text is mostly the vocabulary's");
        cr_assert_not_null(b.wc, "the block made its cache (the text is long enough)");
    }
    /* a short text (a one-sentence call) makes no cache */
    glm_block s1;
    memset(&s1, 0, sizeof s1);
    cr_assert_eq(glm_block_add_line(&s1, ms[0], lines[0], strlen(lines[0]), 1), 0);
    cr_assert_null(s1.wc);
    glm_block_free(&s1);
    glm_block_free(&b);
    for (int l = 0; l < NLINES; l++)
        free(lines[l]);
    for (size_t i = 0; i < nw; i++)
        free(words[i]);
    free(lines), free(tok), free(words);
    glm_close(ms[0]), glm_close(ms[1]);
    free(arpa), free(bin);
}

/* ---------------------------------------------------------------- FixSRI and errors, sorted */

/* Writes text to dir/name and builds it with the CLI (extra: more flags) into dir/name.glm;
 * returns the exit status, the output path in *out, stderr in *errs when not NULL. */
static int cli_build(const char *name, const char *text, const char *extra, char **out,
                     char **errs)
{
    char *arpa = tu_join(dir, name), *tool = tu_bin_path("glm");
    cr_assert(asprintf(out, "%s.glm", arpa) > 0);
    cr_assert_eq(tu_write_file(arpa, text, strlen(text)), 0);
    char *e = NULL;
    int rc = tu_runf(NULL, &e, "'%s' build %s '%s' '%s'", tool, extra, arpa, *out);
    if (errs)
        *errs = e;
    else
        free(e);
    free(arpa), free(tool);
    return rc;
}

/* glm query -n -v word of text on model; the output. */
static char *cli_query(const char *model, const char *text)
{
    char *tool = tu_bin_path("glm"), *in = tu_join(dir, "q.txt"), *out = NULL;
    cr_assert_eq(tu_write_file(in, text, strlen(text)), 0);
    cr_assert_eq(tu_runf(&out, NULL, "'%s' query -n -v word '%s' < '%s'", tool, model, in), 0);
    free(tool), free(in);
    return out;
}

/* KenLM's FixSRI inserts a missing suffix when the first n-gram needing it is read, its value
 * chained from the longest stored suffix; the sign is taken (fabsf) only where a chain starts
 * from an entry stored before. Here "b a" and "c b a" are missing and b's backoff 1.5 makes
 * "b a"'s chained value -0.5 (1.0 - 1.5): read "x c b a" first, "c b a" = -0.5 - -0.25; read
 * "y d b a" first, "b a" is stored (as -0.5) and "c b a" starts from its 0.5 (0.5 - -0.25). */
Test(glm, fixsri_follows_file_order)
{
    static const char head[] =
        "\\data\\\nngram 1=9\nngram 2=4\nngram 3=2\nngram 4=2\n\n\\1-grams:\n-2\t<unk>\n"
        "-99\t<s>\t-0.5\n-1.5\t</s>\n-1.0\ta\t-0.1\n-1.2\tb\t1.5\n-1.3\tc\t-0.2\n-1.4\td\t-0.2\n"
        "-1.6\tx\t-0.3\n-1.7\ty\t-0.3\n\n\\2-grams:\n-0.6\tx c\t-0.1\n-0.7\tc b\t-0.25\n"
        "-0.8\ty d\t-0.1\n-0.9\td b\t-0.4\n\n\\3-grams:\n-0.5\tx c b\t-0.2\n"
        "-0.55\ty d b\t-0.2\n\n\\4-grams:\n";
    static const char *const lines[2] = {"-0.3\tx c b a\n", "-0.35\ty d b a\n"};
    static const char *const want[2] = {"a=3 3 -0.25\t", "a=3 3 -0.75\t"};
    static const char *const flags[] = {"", "-S 1", "-q 8 -b 8"};
    for (int first = 0; first < 2; first++) {
        char text[1024];
        snprintf(text, sizeof text, "%s%s%s\n\\end\\\n", head, lines[first], lines[!first]);
        char *ref = NULL;
        for (size_t f = 0; f < sizeof flags / sizeof *flags; f++) {
            char *out, *errs;
            int rc = cli_build("fixsri.arpa", text, flags[f], &out, &errs);
            cr_assert_eq(rc, 0, "%s: %s", flags[f], errs);
            char *q = cli_query(out, "c b a\ny d b a\nx c b a\n");
            if (f != 2) /* quantized: other values */
                cr_assert(strstr(q, want[first]), "first %d %s: %s", first, flags[f], q);
            if (!ref)
                ref = q;
            else {
                if (f != 2)
                    cr_assert_str_eq(q, ref, "first %d: %s", first, flags[f]);
                free(q);
            }
            free(out), free(errs);
        }
        free(ref);
    }
}

/* An SRILM-pruned model (many 2-grams and 3-grams missing that are no context but the suffix of
 * a longer n-gram, backoffs of both signs): every suffix is inserted, a build sorting through a
 * buffer of a few records (-S 1: many runs) writes the same bytes, and the trie scores as the
 * probing build, whose insertion is its own. Read through a pipe it is the same model. */
Test(glm, fixsri_pruned_model)
{
    enum { V = 20 };
    size_t cap = 4u << 20, len = 0;
    char *body = malloc(cap), *text = malloc(cap);
    cr_assert(body && text);
    uint64_t count[5] = {0};
    /* 4-grams (i j k l), l < 6, i+j+k+l = 0 mod 5, i+j even; 3-grams (i j k): the 4-grams'
     * contexts and those with i < V/2, i+2j+k = 0 mod 3 but every 4th of them; 2-grams: every
     * 3-gram's context and the other pairs but every 3rd (each left out a missing suffix unless
     * no longer n-gram ends with it) */
    static char in3[V][V][V], in2[V][V];
    memset(in3, 0, sizeof in3), memset(in2, 0, sizeof in2);
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++)
            for (int k = 0; k < V; k++) {
                if ((i + 2 * j + k) % 3 == 0 && (i * 7 + j * 3 + k) % 4 != 0 && i < V / 2)
                    in3[i][j][k] = 1;
                for (int l = 0; l < 6; l++)
                    if ((i + j + k + l) % 5 == 0 && (i + j) % 2 == 0)
                        in3[i][j][k] = 1;
            }
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++) {
            in2[i][j] = (i * 5 + j) % 3 != 0;
            for (int k = 0; k < V; k++)
                in2[i][j] |= in3[i][j][k];
        }
    static char sec[4][1u << 20];
    size_t sl[4] = {0};
    for (int i = 0; i < V; i++) {
        count[0]++;
        sl[0] += (size_t)snprintf(sec[0] + sl[0], sizeof sec[0] - sl[0], "-%d.%02d\tw%d\t%s%d.%d\n",
                                  1 + i % 3, i * 7 % 100, i, i % 4 ? "-" : "", i % 2, i % 10);
        for (int j = 0; j < V; j++) {
            if (in2[i][j]) {
                count[1]++;
                sl[1] += (size_t)snprintf(sec[1] + sl[1], sizeof sec[1] - sl[1],
                                          "-%d.%02d\tw%d w%d\t%s0.%d\n", (i + j) % 3,
                                          (i * j) % 100, i, j, (i + j) % 3 ? "-" : "", j % 10);
            }
            for (int k = 0; k < V; k++) {
                if (in3[i][j][k]) {
                    count[2]++;
                    sl[2] += (size_t)snprintf(sec[2] + sl[2], sizeof sec[2] - sl[2],
                                              "-%d.%02d\tw%d w%d w%d\t%s0.%d\n", (i + k) % 2,
                                              (j * k) % 100, i, j, k, k % 3 ? "-" : "", i % 10);
                }
                for (int l = 0; l < 6; l++)
                    if ((i + j + k + l) % 5 == 0 && (i + j) % 2 == 0) {
                        count[3]++;
                        sl[3] += (size_t)snprintf(sec[3] + sl[3], sizeof sec[3] - sl[3],
                                                  "-0.%02d\tw%d w%d w%d w%d\n", (i + j + k) % 100,
                                                  i, j, k, l);
                    }
            }
        }
    }
    for (int s = 0; s < 4; s++)
        cr_assert_lt(sl[s] + 1, sizeof sec[s], "section %d fits", s);
    len = (size_t)snprintf(text, cap, "\\data\\\nngram 1=%llu\nngram 2=%llu\nngram 3=%llu\n"
                           "ngram 4=%llu\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n-1.5\t</s>\n%s\n"
                           "\\2-grams:\n%s\n\\3-grams:\n%s\n\\4-grams:\n%s\n\\end\\\n",
                           (unsigned long long)count[0] + 3, (unsigned long long)count[1],
                           (unsigned long long)count[2], (unsigned long long)count[3], sec[0],
                           sec[1], sec[2], sec[3]);
    cr_assert_lt(len + 1, cap);
    free(body);
    char *a = NULL, *b = NULL, *p = NULL, *errs = NULL;
    cr_assert_eq(cli_build("pruned.arpa", text, "", &a, &errs), 0, "%s", errs);
    unsigned long long st[4] = {0};
    const char *k = strstr(errs, "K 31, ");
    cr_assert(k && sscanf(k, "K 31, %llu %llu %llu %llu", &st[0], &st[1], &st[2], &st[3]) == 4,
              "%s", errs);
    cr_assert(st[1] > count[1] && st[2] > count[2] && st[3] == count[3],
              "suffixes inserted: %s", errs);
    free(errs);
    cr_assert_eq(cli_build("pruned.arpa", text, "-S 1", &b, &errs), 0, "%s", errs);
    free(errs);
    size_t na, nb;
    char *da = tu_read_file(a, &na), *db = tu_read_file(b, &nb);
    cr_assert(na == nb && memcmp(da, db, na) == 0, "-S 1 differs");
    free(db);
    char *arpa = tu_join(dir, "pruned.arpa"), *tool = tu_bin_path("glm");
    cr_assert(asprintf(&p, "%s.bin", arpa) > 0);
    cr_assert_eq(tu_runf(NULL, &errs, "'%s' build probing -p 8 '%s' '%s'", tool, arpa, p), 0, "%s",
                 errs);
    free(errs);
    cr_assert_eq(tu_runf(NULL, &errs, "'%s' build -S 1 /dev/stdin '%s' < '%s'", tool, b, arpa),
                 0, "%s", errs);
    free(errs);
    db = tu_read_file(b, &nb);
    cr_assert(na == nb && memcmp(da, db, na) == 0, "read from a pipe, it differs");
    free(da), free(db);
    /* every 4-gram and every 3-gram of the words, each a line */
    size_t ql = 0, qcap = 1u << 22;
    char *qt = malloc(qcap);
    cr_assert_not_null(qt);
    for (int i = 0; i < V; i++)
        for (int j = 0; j < V; j++)
            for (int k = 0; k < V; k++)
                ql += (size_t)snprintf(qt + ql, qcap - ql, "w%d w%d w%d w%d\n", i, j, k,
                                       (i + j * 2 + k) % 6);
    cr_assert_lt(ql + 1, qcap);
    char *qa = cli_query(a, qt), *qp = cli_query(p, qt);
    cr_assert(strcmp(qa, qp) == 0, "the trie and the probing build score differently");
    free(qa), free(qp), free(qt);
    free(a), free(b), free(p), free(arpa), free(tool), free(text);
}

/* The first error in file order is the one given, whether the sort on disk finds it (a
 * duplicate, at the later line; a context not stored when its n-gram is read) or the reading (a
 * broken line: every n-gram before it is checked), through a file or a pipe. */
Test(glm, first_error_in_file_order)
{
    static const char head[] =
        "\\data\\\nngram 1=6\nngram 2=4\nngram 3=3\n\n\\1-grams:\n-1\t<unk>\n-99\t<s>\t-0.5\n"
        "-1.5\t</s>\n-1\ta\t-0.1\n-1\tb\t-0.2\n-1\tc\t-0.3\n\n\\2-grams:\n";
    /* 2-grams at lines 15..18, 3-grams at 21..23 */
    static const struct { const char *two[4], *three[3], *msg; } cases[] = {
        {{"a b", "b c", "a b", "c a"}, {"a b c", "b c a", "c c c"}, ":17: duplicate 2-gram"},
        {{"a b", "b c", "c a", "a c"}, {"a b c", "b b a", "a b c"}, ":22: the context 'b b'"},
        {{"a b", "b c", "c a", "a c"}, {"a b c", "b c a", "a b c"}, ":23: duplicate 3-gram"},
        {{"a b", "b c", "c a", "a c"}, {"a c a", "b c a", "b c a"}, ":23: duplicate 3-gram"},
        {{"a b", "b c", "c a", "a c"}, {"b b a", "b c a", "b b a"}, ":21: the context 'b b'"},
        {{"a b", "b c", "c a", "a c"}, {"a b c", "b c a", "JUNK"}, ":23: expected a 3-gram"},
        {{"a b", "b c", "c a", "JUNK"}, {"c c c", "b c a", "a b c"}, ":18: word 'JUNK'"},
        {{"a b", "b c", "c a", "a b"}, {"c c c", "b c a", "JUNK"}, ":18: duplicate 2-gram"},
        {{"a b", "b c", "c a", "a c"}, {"c c a", "a b c", "JUNK"}, ":21: the context 'c c'"},
        /* "b c" is inserted by the first 3-gram as the suffix of "a b c", before "b c a" needs
         * it as its context, and after it in the other order */
        {{"a b", "c a", "a c", "c b"}, {"a b c", "b c a", "c a c"}, NULL},
        {{"a b", "c a", "a c", "c b"}, {"b c a", "a b c", "c a c"}, ":21: the context 'b c'"},
        /* "c c c" is read after its suffix "c c", its own context, is inserted */
        {{"a b", "b c", "c a", "a c"}, {"a b c", "c c c", "a b c"}, ":23: duplicate 3-gram"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char text[1024];
        size_t n = (size_t)snprintf(text, sizeof text, "%s", head);
        for (int k = 0; k < 4; k++)
            n += (size_t)snprintf(text + n, sizeof text - n, "-0.5\t%s\t-0.1\n", cases[i].two[k]);
        n += (size_t)snprintf(text + n, sizeof text - n, "\n\\3-grams:\n");
        for (int k = 0; k < 3; k++)
            n += (size_t)snprintf(text + n, sizeof text - n, "-0.25\t%s\n", cases[i].three[k]);
        snprintf(text + n, sizeof text - n, "\n\\end\\\n");
        for (int s = 0; s < 3; s++) {
            char *out, *errs;
            int rc;
            if (s < 2) {
                rc = cli_build("order.arpa", text, s ? "-S 1" : "", &out, &errs);
            } else { /* a pipe */
                char *arpa = tu_join(dir, "order.arpa"), *tool = tu_bin_path("glm");
                cr_assert(asprintf(&out, "%s.glm", arpa) > 0);
                rc = tu_runf(NULL, &errs, "'%s' build /dev/stdin '%s' < '%s'", tool, out, arpa);
                free(arpa), free(tool);
            }
            if (!cases[i].msg) {
                cr_assert_eq(rc, 0, "case %zu: %s", i, errs);
                cr_assert_eq(unlink(out), 0);
            } else {
                cr_assert_eq(rc, 1, "case %zu: %s", i, errs);
                char want[128];
                snprintf(want, sizeof want, "%s%s", s == 2 ? "/dev/stdin" : "order.arpa",
                         cases[i].msg);
                cr_assert(strstr(errs, want), "case %zu (%d): %s lacks %s", i, s, errs, want);
                cr_assert_eq(access(out, F_OK), -1, "no model");
            }
            free(out), free(errs);
        }
    }
}
