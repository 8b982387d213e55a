#define _GNU_SOURCE
/* The decoder takes nothing on trust (issue 9): every number of the moses.ini and of fastsmt's
 * flags parsed strictly and range-checked, ini sections that would change the output refused,
 * binary data never echoed, the ARPA reader's declared counts and the stack size bounded (the
 * fuzz findings in tests/data/decoder/fuzz), write errors reported, and -dl, -s and
 * -cube-pruning-pop-limit each shown to act on the search. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoder.h"
#include "dec_testutil.h"
#include "testutil.h"

static char *tmp, *tiny;

static void setup(void)
{
    tmp = tu_tmpdir();
    tiny = tu_data_path("decoder/tiny");
    cr_assert_not_null(tmp);
}

static void teardown(void)
{
    tu_rmtree(tmp);
    free(tmp);
    free(tiny);
}

TestSuite(strict, .init = setup, .fini = teardown, .timeout = 60);

/* The tiny model's ini with its tables named by absolute path; pt_extra / lm_extra are appended
 * to the phrase table's and the LM's feature lines, sections come before [weight], weights_extra
 * after it. Returns the ini's path (malloc'ed); *text (may be NULL) receives the text. */
static char *tiny_ini(const char *name, const char *pt_extra, const char *lm_extra,
                      const char *sections, const char *weights_extra, char **text)
{
    char *t = NULL;
    cr_assert(asprintf(&t,
                       "[feature]\nUnknownWordPenalty\nWordPenalty\nPhrasePenalty\n"
                       "PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table input-factor=0 output-factor=0%s\n"
                       "LexicalReordering name=LexicalReordering0 num-features=6 "
                       "type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 "
                       "path=%s/reordering-table\nDistortion\n"
                       "KENLM name=LM0 factor=0 path=%s/lm.arpa order=2%s\n"
                       "[distortion-limit]\n6\n%s\n"
                       "[weight]\nLexicalReordering0= 0.1 0.1 0.1 0.1 0.1 0.1\nDistortion0= 0.3\n"
                       "LM0= 1\nWordPenalty0= 0.5\nPhrasePenalty0= 0.2\nTranslationModel0= 1\n"
                       "UnknownWordPenalty0= 1\n%s",
                       tiny, pt_extra, tiny, tiny, lm_extra, sections, weights_extra) > 0);
    char *path = tu_join(tmp, name);
    cr_assert_eq(tu_write_file(path, t, strlen(t)), 0);
    if (text)
        *text = t;
    else
        free(t);
    return path;
}

/* The 1-based line of text that holds the last character of marker (a trailing newline aside). */
static unsigned line_of(const char *text, const char *marker)
{
    const char *p = strstr(text, marker);
    cr_assert_not_null(p, "%s", marker);
    const char *last = p + strlen(marker) - 1;
    if (last > p && *last == '\n')
        last--;
    unsigned line = 1;
    for (const char *q = text; q < last; q++)
        line += *q == '\n';
    return line;
}

/* Translates line with m; returns the 1-best line without its newline (malloc'ed), the model score
 * in *score and the n-best list (n lines, malloc'ed) in *nbest when nbest is not NULL. */
static char *translate(dec_model *m, const char *line, double *score, size_t n, char **nbest)
{
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0, "%s", e.msg);
    smt_buf best = {0}, nb = {0};
    cr_assert_eq(dec_translate(w, line, strlen(line), 0, &best, nbest ? &nb : NULL, n, 0, score,
                               &e),
                 0, "%s", e.msg);
    cr_assert(best.len > 0 && best.data[best.len - 1] == '\n');
    char *out = strndup(best.data, best.len - 1);
    if (nbest)
        *nbest = strndup(nb.data ? nb.data : "", nb.len);
    smt_buf_free(&best);
    smt_buf_free(&nb);
    dec_worker_free(w);
    return out;
}

/* ---------------------------------------------------------------- the ARPA reader */

/* Writes the parts of a fuzz finding (phrase table #==# reordering table #==# ARPA) into tmp as
 * the tiny model's files, with the tiny moses.ini. Returns the ini's path. */
static char *finding_model(const char *finding)
{
    char *rel = NULL;
    cr_assert(asprintf(&rel, "decoder/fuzz/%s", finding) > 0);
    char *path = tu_data_path(rel);
    size_t len;
    char *text = tu_read_file(path, &len);
    cr_assert_not_null(text, "%s", path);
    static const char *const names[] = {"phrase-table", "reordering-table", "lm.arpa"};
    char *part = text;
    for (int k = 0; k < 3; k++) {
        char *sep = strstr(part, "#==#\n");
        cr_assert(k == 2 ? sep == NULL : sep != NULL, "%s: part %d", finding, k);
        size_t n = sep ? (size_t)(sep - part) : strlen(part);
        char *out = tu_join(tmp, names[k]);
        cr_assert_eq(tu_write_file(out, part, n), 0);
        free(out);
        part = sep ? sep + 5 : NULL;
    }
    char *src = tu_join(tiny, "moses.ini"), *ini = tu_join(tmp, "moses.ini");
    cr_assert_eq(tu_copy_file(src, ini), 0);
    free(src), free(text), free(path), free(rel);
    return ini;
}

/* "ngram 1=4294967295" wrapped the word count to 0: a size-0 array written at index 0. */
Test(strict, arpa_count_wrap)
{
    char *ini = finding_model("dec_arpa_count_wrap.txt");
    dtu_expect_load_error(ini, NULL, SMT_ERR_LIMIT, "lm.arpa:", "4294967295", NULL);
    free(ini);
}

/* A declared count near 2^62 made the table-size loop endless (the suite's timeout catches it). */
Test(strict, arpa_count_hang)
{
    char *ini = finding_model("dec_arpa_count_hang.txt");
    dtu_expect_load_error(ini, NULL, SMT_ERR_LIMIT, "lm.arpa:", "5000000000000000000", NULL);
    free(ini);
}

/* An ARPA file in tmp with the given text, loaded through the tiny ini. */
static void expect_arpa_error(const char *arpa, int rc, const char *fragment)
{
    char *lm = tu_join(tmp, "lm.arpa");
    cr_assert_eq(tu_write_file(lm, arpa, strlen(arpa)), 0);
    char *ini = NULL, *text = NULL;
    cr_assert(asprintf(&text,
                       "[feature]\nPhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table\nKENLM name=LM0 path=%s order=2\n[weight]\n"
                       "TranslationModel0= 1\nLM0= 1\n",
                       tiny, lm) > 0);
    ini = tu_join(tmp, "lm.ini");
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    dtu_expect_load_error(ini, NULL, rc, "lm.arpa:", fragment, NULL);
    free(lm), free(ini), free(text);
}

#define UNI "\\1-grams:\n-1 <unk>\n-1 <s> -0.5\n-1 </s>\n-1 A\n\n"

/* Counts are parsed strictly (glm's reader, common/smt_num.h's rule): "ngram 1=-5" is an error,
 * not 18446744073709551611 1-grams; a count above glm's limit is refused before anything is
 * allocated, and a hostile count under it costs nothing (sized from what is read: a parse error
 * naming the line, not out of memory). */
Test(strict, arpa_counts_strict)
{
    expect_arpa_error("\\data\\\nngram 1=-5\nngram 2=1\n\n" UNI, SMT_ERR_PARSE,
                      ":2: 1-gram count -5: a count cannot be negative");
    expect_arpa_error("\\data\\\nngram 1=4x\nngram 2=1\n\n" UNI, SMT_ERR_PARSE,
                      ":2: bad 1-gram count '4x'");
    expect_arpa_error("\\data\\\nngram 1=4\nngram 2=1x\n\n" UNI, SMT_ERR_PARSE,
                      ":3: bad 2-gram count '1x'");
    expect_arpa_error("\\data\\\nngram 1=4\nngram 2=99999999999999\n\n" UNI
                      "\\2-grams:\n-1 <s> A\n\\end\\\n",
                      SMT_ERR_LIMIT, ":3: 99999999999999 2-grams: at most 2^32-2");
    expect_arpa_error("\\data\\\nngram 1=4\nngram 2=4000000000\n\n" UNI
                      "\\2-grams:\n-1 <s> A\n\\end\\\n",
                      SMT_ERR_PARSE, ":13: section ends after 1 of 4000000000 declared 2-grams");
    expect_arpa_error("\\data\\\nngram 1=4000000000\nngram 2=1\n\n" UNI "\\2-grams:\n",
                      SMT_ERR_PARSE, ":10: expected a 1-gram line");
    /* probabilities and backoffs strictly too */
    expect_arpa_error("\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\nnan <unk>\n", SMT_ERR_PARSE,
                      ":6: bad log10 probability 'nan'");
    expect_arpa_error("\\data\\\nngram 1=4\nngram 2=1\n\n\\1-grams:\n-1 <s> 0.5x\n",
                      SMT_ERR_PARSE, ":6: bad log10 backoff '0.5x'");
}

/* Trigrams whose suffixes the file lacks get them inserted (KenLM's rule): the bigram table grows
 * past what the header declared instead of failing with "too many missing suffixes". */
Test(strict, arpa_tables_grow)
{
    size_t cap = 1 << 16, len = 0;
    char *arpa = malloc(cap);
    len += (size_t)snprintf(arpa + len, cap - len,
                            "\\data\\\nngram 1=44\nngram 2=1\nngram 3=40\n\n\\1-grams:\n"
                            "-1 <unk>\n-99 <s> -0.5\n-1 </s>\n-0.5 A -0.3\n");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(arpa + len, cap - len, "-2 w%d -0.1\n", i);
    len += (size_t)snprintf(arpa + len, cap - len, "\n\\2-grams:\n-0.2 <s> A -0.1\n\n\\3-grams:\n");
    for (int i = 0; i < 40; i++)
        len += (size_t)snprintf(arpa + len, cap - len, "-0.4 <s> A w%d\n", i);
    len += (size_t)snprintf(arpa + len, cap - len, "\n\\end\\\n");
    cr_assert_lt(len, cap);
    char *lm = tu_join(tmp, "lm3.arpa");
    cr_assert_eq(tu_write_file(lm, arpa, len), 0);
    char *text = NULL;
    cr_assert(asprintf(&text,
                       "[feature]\nPhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table\nKENLM name=LM0 path=%s order=3\n[weight]\n"
                       "TranslationModel0= 1\nLM0= 1\n",
                       tiny, lm) > 0);
    char *ini = tu_join(tmp, "grow.ini");
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    dec_model *m = dtu_load(ini, NULL);
    double score;
    char *out = translate(m, "a b", &score, 0, NULL);
    cr_assert_str_eq(out, "A B ");
    cr_assert(isfinite(score));
    free(out);
    dec_model_free(m);
    free(ini), free(text), free(lm), free(arpa);
}

/* ---------------------------------------------------------------- the stack size */

/* [s] 102448364 asked for 4 GiB per sentence; [s] 600000000 wrapped a 32-bit size to 0 and looped
 * forever. Both are refused at load, naming the ini line and the documented range. */
Test(strict, stack_findings)
{
    char *src = tu_data_path("decoder/fuzz/ini_stack_hang.ini");
    size_t len;
    char *text = tu_read_file(src, &len);
    cr_assert_not_null(text);
    static const char *const files[] = {"lm.arpa", "reordering-table", "phrase-table"};
    for (int k = 0; k < 3; k++) {
        char *a = tu_join(tiny, files[k]), *b = tu_join(tmp, files[k]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a), free(b);
    }
    char *ini = tu_join(tmp, "moses.ini"), *where = NULL;
    cr_assert_eq(tu_write_file(ini, text, len), 0);
    cr_assert(asprintf(&where, "moses.ini:%u: [s]", line_of(text, "600000000")) > 0);
    dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, where, "600000000 is out of range [1, 1048576]",
                      NULL);
    free(src), free(text), free(where);
    /* the other finding names a binary table (pt.ppt) it never gets to open; as found, its
     * feature line has an unknown key (inp=2), which is refused first; without that key the [s]
     * value is */
    src = tu_data_path("decoder/fuzz/dec_ini_stack_oom.ini");
    text = tu_read_file(src, &len);
    cr_assert_not_null(text);
    char *oom = tu_join(tmp, "oom.ini");
    cr_assert_eq(tu_write_file(oom, text, len), 0);
    cr_assert(asprintf(&where, "oom.ini:%u: TranslationModel0 has no key 'inp'",
                       line_of(text, "inp=2")) > 0);
    dtu_expect_load_error(oom, NULL, SMT_ERR_PARSE, where, NULL);
    free(where);
    char *key = strstr(text, " inp=2");
    cr_assert_not_null(key);
    memmove(key, key + 6, strlen(key + 6) + 1);
    cr_assert_eq(tu_write_file(oom, text, strlen(text)), 0);
    cr_assert(asprintf(&where, "oom.ini:%u: [s]", line_of(text, "102448364")) > 0);
    dtu_expect_load_error(oom, NULL, SMT_ERR_PARSE, where, "out of range", NULL);
    free(src), free(text), free(where), free(ini), free(oom);
}

/* A feature type this decoder does not implement is named as such, whatever keys its line has
 * (Moses's WordTranslationFeature simple=1, a made-up Foo bar=1); a known type's unknown key is
 * still a key error. */
Test(strict, unsupported_feature_type_named_before_its_keys)
{
    static const char *const lines[] = {"\nWordTranslationFeature simple=1", "\nFoo bar=1",
                                        "\nInputFeature num-input-features=1"};
    for (size_t k = 0; k < sizeof lines / sizeof *lines; k++) {
        char *text, *ini = tiny_ini("type.ini", "", lines[k], "", "", &text), *where = NULL;
        char type[64];
        cr_assert_eq(sscanf(lines[k] + 1, "%63s", type), 1);
        cr_assert(asprintf(&where, "type.ini:%u: feature type %s is not supported by this decoder",
                           line_of(text, lines[k] + 1), type) > 0);
        dtu_expect_load_error(ini, NULL, SMT_ERR_UNSUPPORTED, where, NULL);
        free(text), free(ini), free(where);
    }
    char *text, *ini = tiny_ini("key.ini", "", " colour=blue", "", "", &text), *where = NULL;
    cr_assert(asprintf(&where, "key.ini:%u: LM0 has no key 'colour'", line_of(text, "colour")) >
              0);
    dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, where, NULL);
    free(text), free(ini), free(where);
}

/* The documented maximum is accepted and costs memory only as the search fills the stacks (the
 * recombination tables grow): the tiny model, which never fills a stack of 100, translates the same
 * with -s 1048576. Past the maximum, dec_options are refused too. */
Test(strict, stack_maximum)
{
    char *ini = tiny_ini("s.ini", "", "", "", "", NULL);
    dec_options opt;
    dec_options_default(&opt);
    opt.stack_size = 100;
    dec_model *m = dtu_load(ini, &opt);
    double s1, s2;
    char *a = translate(m, "a b c x y", &s1, 0, NULL);
    dec_model_free(m);
    opt.stack_size = DEC_MAX_STACK;
    opt.pop_limit = DEC_MAX_POP_LIMIT;
    m = dtu_load(ini, &opt);
    char *b = translate(m, "a b c x y", &s2, 0, NULL);
    dec_model_free(m);
    cr_assert_str_eq(a, b);
    cr_assert_float_eq(s1, s2, 1e-9);
    opt.stack_size = DEC_MAX_STACK + 1;
    dtu_expect_load_error(ini, &opt, SMT_ERR_ARG, "-s 1048577 is out of range", NULL);
    opt.stack_size = 0;
    dtu_expect_load_error(ini, &opt, SMT_ERR_ARG, "-s 0", NULL);
    dec_options_default(&opt);
    opt.pop_limit = DEC_MAX_POP_LIMIT + 1;
    dtu_expect_load_error(ini, &opt, SMT_ERR_ARG, "-cube-pruning-pop-limit", NULL);
    dec_options_default(&opt);
    opt.beam_threshold = NAN;
    dtu_expect_load_error(ini, &opt, SMT_ERR_ARG, "beam threshold", NULL);
    free(a), free(b), free(ini);
}

/* ---------------------------------------------------------------- the ini's numbers */

typedef struct bad_ini {
    const char *pt_extra, *lm_extra, *sections, *weights;
    const char *marker; /* the text on the line the message must name */
    int rc;
    const char *fragment;
} bad_ini;

Test(strict, ini_numbers_strict)
{
    static const bad_ini cases[] = {
        {"", "", "[s]\n100abc\n", "", "100abc", SMT_ERR_PARSE, "[s]: '100abc' is not an integer"},
        {"", "", "[stack]\n-3\n", "", "-3", SMT_ERR_PARSE, "[s]: -3 is out of range [1, 1048576]"},
        {"", "", "[cube-pruning-pop-limit]\n1e3\n", "", "1e3", SMT_ERR_PARSE,
         "[cube-pruning-pop-limit]: '1e3' is not an integer"},
        {"", "", "[max-phrase-length]\n0\n", "", "[max-phrase-length]\n0", SMT_ERR_PARSE,
         "[max-phrase-length]: 0 is out of range"},
        {"", "", "[beam-threshold]\nabc\n", "", "abc", SMT_ERR_PARSE,
         "[beam-threshold]: 'abc' is not a number"},
        {"", "", "[beam-threshold]\n2\n", "", "[beam-threshold]\n2", SMT_ERR_PARSE,
         "[beam-threshold]: 2 is out of range [0, 1]"},
        {"", "", "[ttable-limit]\nmany\n", "", "many", SMT_ERR_PARSE,
         "[ttable-limit]: 'many' is not an integer"},
        {"", "", "[s]\n100\n200\n", "", "200", SMT_ERR_PARSE, "[s] has 2 values, expected one"},
        {"", "", "[s]\n", "", "[s]", SMT_ERR_PARSE, "[s] has no value"},
        {"", "", "[report-segmentation]\nmaybe\n", "", "maybe", SMT_ERR_PARSE, "not a boolean"},
        {" table-limit=abc", "", "", "", "table-limit=abc", SMT_ERR_PARSE,
         "TranslationModel0 table-limit=: 'abc' is not an integer"},
        {" table-limit=-1", "", "", "", "table-limit=-1", SMT_ERR_PARSE,
         "table-limit=: -1 is out of range"},
        {"", " num-features=1x", "", "", "num-features=1x", SMT_ERR_PARSE,
         "LM0 num-features=: '1x' is not an integer"},
        {"", " num-features=2", "", "", "num-features=2", SMT_ERR_PARSE, "LM0 has 1 score, not 2"},
        {"", "x", "", "", "order=2x", SMT_ERR_PARSE, "LM0 order=: '2x' is not an integer"},
        {" tuneable=maybe", "", "", "", "tuneable=maybe", SMT_ERR_PARSE, "not a boolean"},
        {" property-index=x", "", "", "", "property-index=x", SMT_ERR_PARSE,
         "TranslationModel0 property-index=: 'x' is not an integer"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const bad_ini *c = &cases[k];
        char *text, *ini = tiny_ini("bad.ini", c->pt_extra, c->lm_extra, c->sections, c->weights,
                                    &text);
        char *where = NULL;
        cr_assert(asprintf(&where, "bad.ini:%u: ", line_of(text, c->marker)) > 0);
        dtu_expect_load_error(ini, NULL, c->rc, where, c->fragment, NULL);
        free(text), free(ini), free(where);
    }
    /* weights: strict, finite */
    static const char *const weights[] = {"LM0= 1e999", "LM0= 0x10", "LM0= nan", "LM0= 1,5"};
    for (int k = 0; k < 4; k++) {
        char *text = NULL;
        cr_assert(asprintf(&text,
                           "[feature]\nPhraseDictionaryMemory name=TranslationModel0 "
                           "num-features=1 path=%s/phrase-table\n[weight]\nTranslationModel0= 1\n"
                           "%s\n",
                           tiny, weights[k]) > 0);
        char *ini = tu_join(tmp, "w.ini");
        cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
        dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, "w.ini:5: weight", "of 'LM0' is not", NULL);
        free(text), free(ini);
    }
}

/* An unsupported factor is refused by name (it used to be a key read by nobody). */
Test(strict, ini_factors)
{
    char *ini = tiny_ini("f.ini", " output-factor=1", "", "", "", NULL);
    dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, "key 'output-factor' given twice", NULL);
    free(ini);
    char *text = NULL;
    cr_assert(asprintf(&text,
                       "[feature]\nPhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table\nKENLM name=LM0 factor=1 path=%s/lm.arpa\n[weight]\n"
                       "TranslationModel0= 1\nLM0= 1\n",
                       tiny, tiny) > 0);
    ini = tu_join(tmp, "f.ini");
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    dtu_expect_load_error(ini, NULL, SMT_ERR_UNSUPPORTED, "f.ini:3: LM0 factor=1", NULL);
    free(ini), free(text);
    cr_assert(asprintf(&text,
                       "[feature]\nPhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "input-factor=0 output-factor=1 path=%s/phrase-table\n[weight]\n"
                       "TranslationModel0= 1\n",
                       tiny) > 0);
    ini = tu_join(tmp, "f.ini");
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    dtu_expect_load_error(ini, NULL, SMT_ERR_UNSUPPORTED, "f.ini:2: TranslationModel0 output-factor=1",
                      NULL);
    free(ini), free(text);
}

/* ---------------------------------------------------------------- the ini's sections */

/* Sections that would change the output and are not implemented are errors naming file:line and
 * the section; sections that cannot change it warn; a name that is no Moses parameter (a typo) is
 * an error. */
Test(strict, ini_sections_classified)
{
    static const struct {
        const char *text, *marker; /* marker: what the message's line holds */
    } refused[] = {
        {"[stack-diversity]\n2\n", "[stack-diversity]"},
        {"[inputtype]\n1\n", "[inputtype]\n1"},
        {"[cube-pruning-lazy-scoring]\ntrue\n", "[cube-pruning-lazy-scoring]"},
        {"[translation-option-threshold]\n0.1\n", "[translation-option-threshold]"},
        {"[distortion-limt]\n3\n", "[distortion-limt]"},
        {"[search-algorithm]\n0\n", "[search-algorithm]\n0"},
        {"[early-discarding-threshold]\n0.5\n", "[early-discarding-threshold]"},
        {"[phrase-drop-allowed]\n", "[phrase-drop-allowed]"},
        {"[weight-overwrite]\nLM0= 2\n", "[weight-overwrite]"},
        {"[alignment-output-file]\nal.txt\n", "[alignment-output-file]"},
    };
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
        char *text, *ini = tiny_ini("sec.ini", "", "", refused[k].text, "", &text);
        char name[64], *where = NULL;
        cr_assert_eq(sscanf(refused[k].text, "[%63[^]]]", name), 1);
        cr_assert(asprintf(&where, "sec.ini:%u: [%s]", line_of(text, refused[k].marker), name) >
                  0);
        dec_model *m = NULL;
        smt_err e;
        int rc = dec_model_load(&m, ini, NULL, &e);
        cr_assert(rc == SMT_ERR_UNSUPPORTED || rc == SMT_ERR_PARSE, "%s: rc %d", refused[k].text,
                  rc);
        cr_assert_null(m);
        cr_assert(strstr(e.msg, where), "'%s' lacks '%s'", e.msg, where);
        free(text), free(ini), free(where);
    }
    /* no effect on the output: a warning naming the line, and the same translation */
    char *buf, *text, *ini = tiny_ini("sec.ini", "", "", "[description]\nbible es-en\n", "", &text);
    dec_model *m = dtu_load_warned(ini, &buf);
    char *where = NULL;
    cr_assert(asprintf(&where, "sec.ini:%u: [description] is ignored",
                       line_of(text, "[description]")) > 0);
    cr_assert(strstr(buf, where), "%s", buf);
    double score;
    char *out = translate(m, "a b c", &score, 0, NULL);
    cr_assert_str_eq(out, "A B X ");
    free(out);
    dec_model_free(m);
    free(buf), free(text), free(ini), free(where);
}

/* The ini forms of flags this decoder has are implemented, not refused nor ignored:
 * [report-segmentation] is -t, [mark-unknown] with its prefix is -mark-unknown, [ttable-limit] and
 * [max-phrase-length] limit the candidates, [inputtype] 0 and [search-algorithm] 1 load. */
Test(strict, ini_forms_of_flags)
{
    char *ini = tiny_ini("t.ini", "", "", "[report-segmentation]\n[inputtype]\n0\n"
                                          "[search-algorithm]\n1\n",
                         "", NULL);
    dec_model *m = dtu_load(ini, NULL);
    double score;
    char *out = translate(m, "a b c", &score, 0, NULL);
    cr_assert_str_eq(out, "A |0-0| B |1-1| X |2-2| ");
    free(out), free(ini);
    dec_model_free(m);
    ini = tiny_ini("t.ini", "", "", "[report-segmentation]\nfalse\n[mark-unknown]\ntrue\n"
                                    "[unknown-word-prefix]\n<\n[unknown-word-suffix]\n>\n",
                   "", NULL);
    m = dtu_load(ini, NULL);
    out = translate(m, "a q", &score, 0, NULL);
    cr_assert_str_eq(out, "A <q> ");
    free(out), free(ini);
    dec_model_free(m);
    /* "c" has two translations, "a b" a two-word phrase: the limits show in the n-best list */
    char *nb;
    ini = tiny_ini("t.ini", "", "", "", "", NULL);
    m = dtu_load(ini, NULL);
    out = translate(m, "c", &score, 10, &nb);
    cr_assert(strstr(nb, "||| Y X  |||") && strstr(nb, "||| X  |||"), "%s", nb);
    free(out), free(nb), free(ini);
    dec_model_free(m);
    ini = tiny_ini("t.ini", "", "", "[ttable-limit]\n1\n[max-phrase-length]\n1\n", "", NULL);
    m = dtu_load(ini, NULL);
    out = translate(m, "c", &score, 10, &nb);
    cr_assert(strstr(nb, "||| Y X  |||") == NULL || strstr(nb, "||| X  |||") == NULL, "%s", nb);
    free(out), free(nb);
    out = translate(m, "a b", &score, 10, &nb);
    cr_assert(strstr(nb, "PhrasePenalty0= 1 ") == NULL, "a two-word phrase was used: %s", nb);
    free(out), free(nb), free(ini);
    dec_model_free(m);
    /* the phrase table's own table-limit= wins over [ttable-limit] */
    ini = tiny_ini("t.ini", " table-limit=2", "", "[ttable-limit]\n1\n", "", NULL);
    m = dtu_load(ini, NULL);
    out = translate(m, "c", &score, 10, &nb);
    cr_assert(strstr(nb, "||| Y X  |||") && strstr(nb, "||| X  |||"), "%s", nb);
    free(out), free(nb), free(ini);
    dec_model_free(m);
}

/* ---------------------------------------------------------------- binary data as moses.ini */

/* 1 when every byte of s is printable ASCII, a newline or part of valid UTF-8 text above ASCII. */
static int printable(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7F)
            return 0;
    return 1;
}

Test(strict, binary_ini_not_echoed)
{
#define BIN(s, line) {s, sizeof(s) - 1, line}
    static const struct {
        const char *data;
        size_t len;
        unsigned line;
    } bins[] = {
        BIN("[s]\n100\n\x00\x01\x02garbage\n", 3),
        BIN("\x7f" "ELF\x02\x01\x01\x00\x00\x00", 1),
        BIN("[feature]\nKENLM path=\xff\xfe\x1b[2J\n", 2),
        BIN("[s]\n10\n[description]\n\xc3\x28 bad utf-8\n", 4),
        BIN("# \x1b]0;title\x07\n", 1),
        BIN("[s]\n10\n# \xed\xa0\x80 a surrogate\n", 3),
    };
    char *p = tu_join(tmp, "bin.ini");
    for (size_t k = 0; k < sizeof bins / sizeof *bins; k++) {
        cr_assert_eq(tu_write_file(p, bins[k].data, bins[k].len), 0);
        char *frag = NULL;
        cr_assert(asprintf(&frag, "bin.ini: not a moses.ini (binary data at line %u)",
                           bins[k].line) > 0);
        dtu_expect_load_error(p, NULL, SMT_ERR_FORMAT, frag, NULL);
        free(frag);
    }
    /* the tool: a message, never the bytes */
    char *bin = tu_bin_path("fastsmt"), *cmd = NULL, *out = NULL, *err = NULL;
    cr_assert(asprintf(&cmd, "%s -f %s < /dev/null", bin, bin) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 1);
    cr_assert(strstr(err, "not a moses.ini (binary data at line"), "%s", err);
    cr_assert(printable(err), "raw bytes echoed");
    cr_assert_str_eq(out, "");
    free(cmd), free(out), free(err), free(bin), free(p);
}

/* A long line is echoed as a short fragment; a UTF-8 byte-order mark is not part of the text. */
Test(strict, ini_echo_truncated_and_bom)
{
    char *p = tu_join(tmp, "long.ini");
    char text[4200] = "[feature]\n";
    size_t n = strlen(text);
    memset(text + n, 'x', 4000);
    strcpy(text + n + 4000, "\n");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    dec_model *m = NULL;
    smt_err e;
    cr_assert_neq(dec_model_load(&m, p, NULL, &e), 0);
    cr_assert(strstr(e.msg, "long.ini:2:"), "%s", e.msg);
    cr_assert(strlen(e.msg) < 200, "%zu bytes: %s", strlen(e.msg), e.msg);
    free(p);
    char *t, *ini = tiny_ini("bom.ini", "", "", "", "", &t);
    char *bom = NULL;
    cr_assert(asprintf(&bom, "\xEF\xBB\xBF%s", t) > 0);
    cr_assert_eq(tu_write_file(ini, bom, strlen(bom)), 0);
    m = dtu_load(ini, NULL);
    dec_model_free(m);
    free(t), free(ini), free(bom);
}

/* ---------------------------------------------------------------- -weight-overwrite */

Test(strict, weight_overwrite_names_the_flag)
{
    char *ini = tiny_ini("wo.ini", "", "", "", "", NULL);
    static const struct {
        const char *spec, *fragment;
    } bad[] = {{"LM0= 0.5 0.3", "-weight-overwrite: LM0 has 1 scores but 2 weights"},
               {"LM0= x", "-weight-overwrite: weight 'x' of 'LM0' is not a number"},
               {"LM9= 0.5", "-weight-overwrite: 'LM9' is not a feature"},
               {"0.5", "-weight-overwrite: weight line must start with 'Name='"}};
    for (int k = 0; k < 4; k++) {
        dec_options opt;
        dec_options_default(&opt);
        opt.weight_overwrite = bad[k].spec;
        dec_model *m = NULL;
        smt_err e;
        cr_assert_eq(dec_model_load(&m, ini, &opt, &e), SMT_ERR_PARSE, "%s", bad[k].spec);
        cr_assert(strstr(e.msg, bad[k].fragment), "'%s' lacks '%s'", e.msg, bad[k].fragment);
        cr_assert(strstr(e.msg, ":0:") == NULL, "%s", e.msg);
    }
    free(ini);
}

/* ---------------------------------------------------------------- the tool's flags */

/* Runs fastsmt on the tiny model with args (and input "a b c"); returns the exit status. */
static int run_fastsmt(const char *ini, const char *args, char **out, char **err)
{
    char *bin = tu_bin_path("fastsmt"), *in = tu_join(tmp, "in.txt"), *cmd = NULL;
    cr_assert_eq(tu_write_file(in, "a b c\n", 6), 0);
    cr_assert(asprintf(&cmd, "%s -f %s %s < %s", bin, ini, args, in) > 0);
    int rc = tu_run(cmd, out, err);
    free(bin), free(in), free(cmd);
    return rc;
}

Test(strict, flags_strict)
{
    static const struct {
        const char *args, *fragment;
    } bad[] = {
        {"-threads -1", "-threads: -1 is out of range"},
        {"-threads 2x", "-threads: '2x' is not an integer"},
        {"-th 1025", "-th: 1025 is out of range"},
        {"-s 100abc", "-s: '100abc' is not an integer"},
        {"-s 600000000", "-s: 600000000 is out of range [1, 1048576]"},
        {"-stack 0", "-stack: 0 is out of range"},
        {"-dl six", "-dl: 'six' is not an integer"},
        {"-dl -2", "-dl: -2 is out of range"},
        {"-distortion-limit 1.5", "-distortion-limit: '1.5' is not an integer"},
        {"-b abc", "-b: 'abc' is not a number"},
        {"-b 2", "-b: 2 is out of range [0, 1]"},
        {"-beam-threshold nan", "-beam-threshold: 'nan' is not a number"},
        {"-cube-pruning-pop-limit 0", "-cube-pruning-pop-limit: 0 is out of range"},
        {"-cbp 10k", "-cbp: '10k' is not an integer"},
        {"-n-best-list - x", "-n-best-list N: 'x' is not an integer"},
        {"-n-best-list - -1", "-n-best-list N: -1 is out of range"},
        {"-ttable-limit abc", "-ttable-limit: 'abc' is not an integer"},
        {"-max-phrase-length 0", "-max-phrase-length: 0 is out of range"},
        {"-v x", "-v: 'x' is not an integer"},
        {"-verbose -1", "-verbose: -1 is out of range"},
        {"-search-algorithm one", "-search-algorithm: 'one' is not an integer"},
        {"-inputtype 0x", "-inputtype: '0x' is not an integer"},
        {"-s", "-s: a value is missing"},
    };
    char *ini = tu_join(tiny, "moses.ini");
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char *out = NULL, *err = NULL;
        cr_assert_eq(run_fastsmt(ini, bad[k].args, &out, &err), 2, "%s: %s", bad[k].args, err);
        cr_assert(strstr(err, bad[k].fragment), "%s: '%s' lacks '%s'", bad[k].args, err,
                  bad[k].fragment);
        cr_assert_str_eq(out, "", "%s", bad[k].args);
        free(out), free(err);
    }
    /* the limits themselves are accepted */
    char *out = NULL, *err = NULL;
    cr_assert_eq(run_fastsmt(ini, "-threads 1024 -s 1048576 -cbp 1048576 -dl -1 -b 1 -v 0",
                             &out, &err),
                 0, "%s", err);
    cr_assert_str_eq(out, "A B X \n");
    free(out), free(err), free(ini);
}

/* The numbers of the ini's sections that the tool reads itself, and [show-weights] as
 * -show-weights, [input-file] as -input-file (resolved against the ini's folder). */
Test(strict, tool_ini_sections)
{
    static const struct {
        const char *section, *fragment; /* the message names the section's last line */
    } bad[] = {{"[threads]\n-1\n", "[threads]: -1 is out of range"},
               {"[threads]\nmany\n", "[threads]: 'many' is not an integer"},
               {"[verbose]\nloud\n", "[verbose]: 'loud' is not an integer"},
               {"[n-best-list]\nnb.txt\n1x\n", "[n-best-list] N: '1x' is not an integer"},
               {"[show-weights]\nperhaps\n", "[show-weights] 'perhaps' is not a"}};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char *text, *ini = tiny_ini("tool.ini", "", "", bad[k].section, "", &text);
        char *where = NULL, *out = NULL, *err = NULL;
        cr_assert(asprintf(&where, "tool.ini:%u: ", line_of(text, bad[k].section)) > 0);
        cr_assert_neq(run_fastsmt(ini, "", &out, &err), 0, "%s", bad[k].section);
        cr_assert(strstr(err, where) && strstr(err, bad[k].fragment), "'%s' lacks '%s' '%s'", err,
                  where, bad[k].fragment);
        cr_assert_str_eq(out, "");
        free(text), free(ini), free(where), free(out), free(err);
    }
    char *ini = tiny_ini("tool.ini", "", "", "[show-weights]\n", "", NULL);
    char *out = NULL, *err = NULL;
    cr_assert_eq(run_fastsmt(ini, "", &out, &err), 0, "%s", err);
    cr_assert(strstr(out, "LM0= 1.000000\n") && strstr(out, "UnknownWordPenalty0 UNTUNEABLE\n"), "%s",
              out);
    free(out), free(err), free(ini);
    char *input = tu_join(tmp, "ini-input.txt");
    cr_assert_eq(tu_write_file(input, "b a\nc\n", 6), 0);
    ini = tiny_ini("tool.ini", "", "", "[input-file]\nini-input.txt\n[verbose]\n0\n", "", NULL);
    char *bin = tu_bin_path("fastsmt"), *cmd = NULL, *want = NULL;
    cr_assert(asprintf(&cmd, "%s -f %s < /dev/null", bin, ini) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert_str_eq(err, "", "[verbose] 0 keeps it quiet");
    free(cmd);
    cr_assert(asprintf(&cmd, "%s -f %s -input-file %s", bin, ini, input) > 0);
    cr_assert_eq(tu_run(cmd, &want, NULL), 0);
    cr_assert_str_eq(out, want);
    cr_assert(strncmp(out, "A B \n", 5) == 0, "%s", out); /* b a, reordered: the file was read */
    free(out), free(err), free(ini), free(input), free(cmd), free(bin), free(want);
}

/* --help and -h: usage on stdout, exit 0 (fastsmt and bench_decoder). */
Test(strict, help)
{
    static const char *const progs[] = {"fastsmt", "bench_decoder"};
    static const char *const flags[] = {"--help", "-h"};
    for (int p = 0; p < 2; p++)
        for (int f = 0; f < 2; f++) {
            char *bin = tu_bin_path(progs[p]), *cmd = NULL, *out = NULL, *err = NULL;
            cr_assert(asprintf(&cmd, "%s %s", bin, flags[f]) > 0);
            cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s %s: %s", progs[p], flags[f], err);
            cr_assert(strncmp(out, "usage: ", 7) == 0, "%s", out);
            cr_assert_str_eq(err, "");
            free(bin), free(cmd), free(out), free(err);
        }
    /* bench_decoder's numbers are strict too */
    char *bin = tu_bin_path("bench_decoder"), *cmd = NULL, *err = NULL;
    cr_assert(asprintf(&cmd, "%s -f x.ini -i x -s 10abc", bin) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 2);
    cr_assert(strstr(err, "-s: '10abc' is not an integer"), "%s", err);
    free(cmd), free(err);
    cr_assert(asprintf(&cmd, "%s -f x.ini -i x -t 1,two", bin) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 2);
    cr_assert(strstr(err, "-t '1,two'"), "%s", err);
    free(cmd), free(err), free(bin);
}

/* bench_decoder reads its input and references as the tools do (smt_lines): compressed files
 * too, and a file it cannot read is named. */
Test(strict, bench_decoder_reads_lines)
{
    char *ini = tu_join(tiny, "moses.ini"), *in = tu_join(tmp, "bench.in"),
         *ref = tu_join(tmp, "bench.ref"), *out = NULL, *err = NULL, *cmd = NULL;
    cr_assert_eq(tu_write_file(in, "a b c a b c\nb a c b a c\n", 24), 0);
    char *fast = tu_bin_path("fastsmt"), *bin = tu_bin_path("bench_decoder");
    cr_assert(asprintf(&cmd, "%s -f %s -input-file %s > %s", fast, ini, in, ref) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
    free(cmd), free(err);
    cr_assert_eq(tu_compress_file(in, "gz"), 0);
    cr_assert_eq(tu_compress_file(ref, "xz"), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -i %s.gz -r %s.xz -t 1 -lm-batch off", bin, ini, in, ref) >
              0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(strstr(out, " sentences=2 ") && strstr(out, " bleu=100.00 "), "%s", out);
    free(cmd), free(out), free(err);
    cr_assert(asprintf(&cmd, "%s -f %s -i %s.gz -r %s -t 1 -lm-batch off", bin, ini, in, tmp) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 1);
    cr_assert(strstr(err, tmp) && strstr(err, "directory"), "%s", err);
    free(cmd), free(err), free(bin), free(fast), free(ref), free(in), free(ini);
}

/* A full disk on standard output or on the n-best file: a message and a non-zero exit. */
Test(strict, write_errors)
{
    char *ini = tu_join(tiny, "moses.ini"), *out = NULL, *err = NULL;
    cr_assert_neq(run_fastsmt(ini, "> /dev/full", NULL, &err), 0, "exit 0 on a full disk");
    cr_assert(strstr(err, "write error"), "%s", err);
    free(err);
    cr_assert_neq(run_fastsmt(ini, "-n-best-list /dev/full 5", &out, &err), 0);
    cr_assert(strstr(err, "/dev/full") || strstr(err, "write error"), "%s", err);
    free(out), free(err);
    char *bin = tu_bin_path("fastsmt"), *cmd = NULL;
    cr_assert(asprintf(&cmd, "%s --help > /dev/full", bin) > 0);
    cr_assert_neq(tu_run(cmd, NULL, &err), 0);
    cr_assert(strstr(err, "write error"), "%s", err);
    free(err), free(cmd), free(bin), free(ini);
}

/* ---------------------------------------------------------------- -dl, -s, -cbp act */

/* The source spans of a 1-best line printed with -t ("w |s-e| w |s-e| ..."), in output order;
 * returns how many. */
static int spans(const char *line, int *start, int *end, int max)
{
    int n = 0;
    for (const char *p = strchr(line, '|'); p && n < max; p = strchr(p, '|')) {
        int s, e, used = 0;
        cr_assert_eq(sscanf(p, "|%d-%d|%n", &s, &e, &used), 2, "%s", p);
        start[n] = s, end[n] = e, n++;
        p += used;
    }
    return n;
}

static int monotone(const char *line)
{
    int s[64], e[64], n = spans(line, s, e, 64);
    cr_assert_gt(n, 0, "%s", line);
    for (int i = 0; i < n; i++)
        if (s[i] != (i ? e[i - 1] + 1 : 0))
            return 0;
    return 1;
}

/* -dl 0 is monotone decoding: each sentence's spans follow the source order and no n-best entry
 * pays a distortion cost. The tiny model reorders "b a" and "c b a" without it (checked first,
 * so that a decoder ignoring -dl fails here). The ini's [distortion-limit] 0 is the same. */
Test(strict, distortion_limit_acts)
{
    char *ini = tu_join(tiny, "moses.ini"), *in = tu_join(tmp, "dl.txt");
    const char *input = "b a\nc b a\na b c x y\n";
    cr_assert_eq(tu_write_file(in, input, strlen(input)), 0);
    char *bin = tu_bin_path("fastsmt"), *cmd = NULL, *out = NULL, *err = NULL;
    for (int dl0 = 0; dl0 < 2; dl0++) {
        cr_assert(asprintf(&cmd, "%s -f %s -v 0 -t %s < %s", bin, ini, dl0 ? "-dl 0" : "", in) >
                  0);
        cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
        int n = 0, reordered = 0;
        for (char *save = NULL, *l = strtok_r(out, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save), n++) {
            if (dl0)
                cr_assert(monotone(l), "-dl 0 reordered: %s", l);
            else
                reordered += !monotone(l);
        }
        cr_assert_eq(n, 3);
        if (!dl0)
            cr_assert_eq(reordered, 3, "the test needs inputs the model reorders");
        free(cmd), free(out), free(err);
    }
    /* every n-best entry of -dl 0 has Distortion0= 0 (and the unlimited list does not) */
    for (int dl0 = 0; dl0 < 2; dl0++) {
        cr_assert(asprintf(&cmd, "%s -f %s -v 0 %s -n-best-list - 50 < %s", bin, ini,
                           dl0 ? "-dl 0" : "-dl -1", in) > 0);
        cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
        int entries = 0, moved = 0;
        for (char *p = strstr(out, "Distortion0= "); p; p = strstr(p + 1, "Distortion0= ")) {
            entries++;
            moved += strncmp(p, "Distortion0= 0 ", 15) != 0;
        }
        cr_assert_gt(entries, 3);
        if (dl0)
            cr_assert_eq(moved, 0, "%s", out);
        else
            cr_assert_gt(moved, 0);
        free(cmd), free(out), free(err);
    }
    free(in), free(bin), free(ini);
    /* the ini's form */
    char *dl_ini = NULL;
    dl_ini = tiny_ini("dl.ini", "", "", "", "", NULL);
    char *text = tu_read_file(dl_ini, &(size_t){0});
    char *p = strstr(text, "[distortion-limit]\n6\n");
    cr_assert_not_null(p);
    p[19] = '0';
    cr_assert_eq(tu_write_file(dl_ini, text, strlen(text)), 0);
    dec_model *m = dtu_load(dl_ini, NULL);
    double score;
    char *o = translate(m, "b a", &score, 0, NULL);
    cr_assert_str_eq(o, "B A ");
    free(o), free(text), free(dl_ini);
    dec_model_free(m);
}

/* The 1-best model score and the n-best list of "c b a" and "a b c x y" with opt. */
static void search_with(const dec_options *opt, const char *line, double *score, size_t *n_nbest)
{
    char *ini = tu_join(tiny, "moses.ini"), *nb;
    dec_model *m = dtu_load(ini, opt);
    char *o = translate(m, line, score, 100, &nb);
    *n_nbest = 0;
    for (char *p = nb; (p = strchr(p, '\n')); p++)
        (*n_nbest)++;
    free(o), free(nb), free(ini);
    dec_model_free(m);
}

/* A stack of one hypothesis is a greedy search: it can only find a worse or equal score than the
 * ini's stack of 100 (which never prunes on the tiny model), and on these inputs it finds a worse
 * one. The flag and the option both act. */
Test(strict, stack_size_acts)
{
    static const char *const lines[] = {"c b a", "a b c x y"};
    for (int k = 0; k < 2; k++) {
        dec_options opt;
        dec_options_default(&opt);
        double full, greedy;
        size_t n1, n2;
        search_with(&opt, lines[k], &full, &n1);
        opt.stack_size = 1;
        search_with(&opt, lines[k], &greedy, &n2);
        cr_assert_lt(greedy, full - 1e-6, "%s: -s 1 gave %g, -s 100 %g", lines[k], greedy, full);
    }
    /* the tool's flag */
    char *ini = tu_join(tiny, "moses.ini"), *bin = tu_bin_path("fastsmt"), *in = tu_join(tmp, "s");
    cr_assert_eq(tu_write_file(in, "c b a\n", 6), 0);
    char *cmd = NULL, *a = NULL, *b = NULL;
    cr_assert(asprintf(&cmd, "%s -f %s -v 0 < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &a, NULL), 0);
    free(cmd);
    cr_assert(asprintf(&cmd, "%s -f %s -v 0 -s 1 < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &b, NULL), 0);
    cr_assert_str_neq(a, b, "-s 1 changed nothing");
    free(cmd), free(a), free(b), free(ini), free(bin), free(in);
}

/* A pop limit of one lets one hypothesis into each stack: one complete path, so the n-best list
 * has exactly one entry (the default's has several), with a score no better than the default's. */
Test(strict, pop_limit_acts)
{
    static const char *const lines[] = {"c b a", "a b c x y"};
    for (int k = 0; k < 2; k++) {
        dec_options opt;
        dec_options_default(&opt);
        double full, one;
        size_t n_full, n_one;
        search_with(&opt, lines[k], &full, &n_full);
        opt.pop_limit = 1;
        search_with(&opt, lines[k], &one, &n_one);
        cr_assert_gt(n_full, 1, "%s", lines[k]);
        cr_assert_eq(n_one, 1, "%s: %zu n-best entries with one pop per stack", lines[k], n_one);
        cr_assert_leq(one, full + 1e-9);
    }
    char *ini = tu_join(tiny, "moses.ini"), *out = NULL, *err = NULL;
    cr_assert_eq(run_fastsmt(ini, "-v 0 -cube-pruning-pop-limit 1 -n-best-list - 100", &out, &err),
                 0, "%s", err);
    int lines_out = 0;
    for (char *p = out; (p = strchr(p, '\n')); p++)
        lines_out++;
    cr_assert_eq(lines_out, 2, "1-best and one n-best entry: %s", out);
    free(out), free(err), free(ini);
}

/* The beam threshold prunes: with -b 1 only hypotheses as good as a stack's best survive, so the
 * n-best list is shorter than with no threshold (-b 0 keeps all), and its best is no better. The
 * flag and the option both act. */
Test(strict, beam_threshold_acts)
{
    static const char *const lines[] = {"c b a", "a b c x y"};
    for (int k = 0; k < 2; k++) {
        dec_options opt;
        dec_options_default(&opt);
        double all, narrow;
        size_t n_all, n_narrow;
        opt.beam_threshold = 0;
        search_with(&opt, lines[k], &all, &n_all);
        opt.beam_threshold = 1;
        search_with(&opt, lines[k], &narrow, &n_narrow);
        cr_assert_lt(n_narrow, n_all, "%s: %zu n-best entries with -b 1, %zu with -b 0", lines[k],
                     n_narrow, n_all);
        cr_assert_leq(narrow, all + 1e-9);
    }
    char *ini = tu_join(tiny, "moses.ini"), *out0 = NULL, *out1 = NULL, *err = NULL;
    cr_assert_eq(run_fastsmt(ini, "-v 0 -b 0 -n-best-list - 100", &out0, &err), 0, "%s", err);
    free(err);
    cr_assert_eq(run_fastsmt(ini, "-v 0 -b 1 -n-best-list - 100", &out1, &err), 0, "%s", err);
    cr_assert_lt(strlen(out1), strlen(out0), "-b 1 must prune: %s", out1);
    free(out0), free(out1), free(err), free(ini);
}

/* A sentence over DEC_MAX_SENTENCE tokens cannot be translated: its output line is kept (empty) so
 * the lines stay aligned, the other lines are translated, and the run fails at the end naming it —
 * an empty translation is never presented as success. */
Test(strict, overlong_sentence_fails_the_run)
{
    char *ini = tu_join(tiny, "moses.ini");
    dec_model *m = NULL;
    smt_err e;
    cr_assert_eq(dec_model_load(&m, ini, NULL, &e), 0, "%s", e.msg);
    size_t cap = 3 * (DEC_MAX_SENTENCE + 1) + 16, len = 0;
    char *in = malloc(cap);
    cr_assert_not_null(in);
    len += (size_t)sprintf(in, "x y\n");
    for (int i = 0; i < DEC_MAX_SENTENCE + 1; i++)
        len += (size_t)sprintf(in + len, "a ");
    len += (size_t)sprintf(in + len, "\na b\n");
    FILE *fin = fmemopen(in, len, "r");
    char *out = NULL, *warn = NULL;
    size_t olen = 0, wlen = 0;
    FILE *fout = open_memstream(&out, &olen), *fwarn = open_memstream(&warn, &wlen);
    cr_assert(fin && fout && fwarn);
    dec_run_stats st;
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.n_best = 0;
    ro.threads = 1;
    ro.warn = fwarn;
    int rc = dec_run(m, fin, fout, &ro, &st, &e);
    fclose(fin), fclose(fout), fclose(fwarn);
    cr_assert_eq(rc, SMT_ERR_LIMIT, "%d %s", rc, e.msg);
    cr_assert_str_eq(out, "Y X \n\nA B \n");
    cr_assert(strstr(e.msg, "1 line could not be translated") && strstr(e.msg, "line 2"), "%s",
              e.msg);
    cr_assert(strstr(warn, "line 2:"), "%s", warn);
    free(in), free(out), free(warn), free(ini);
    dec_model_free(m);
}

/* The tiny model's ini (tiny_ini, nothing extra) with the LM at lm_path. */
static char *tiny_ini_lm(const char *name, const char *lm_path)
{
    char *text = NULL, *ini = tiny_ini(name, "", "", "", "", &text);
    char *lm = strstr(text, "/lm.arpa"), *t2 = NULL;
    cr_assert_not_null(lm);
    *lm = '\0';
    const char *lm_dir_end = strrchr(text, '=') + 1; /* path=<tiny> */
    cr_assert(asprintf(&t2, "%.*s%s%s", (int)(lm_dir_end - text), text, lm_path, lm + 8) > 0);
    cr_assert_eq(tu_write_file(ini, t2, strlen(t2)), 0);
    free(text), free(t2);
    return ini;
}

/* A KenLM binary named as the LM is told by its magic (the common sniffer) and opened by glm,
 * never parsed as an ARPA file or mapped as a .glm: a damaged one is an error naming the file. */
Test(strict, kenlm_binary_lm_damaged)
{
    char *kb = tu_join(tmp, "lm.binary");
    static const char magic[] = "mmap lm http://kheafield.com/code format version 5\n\0\0\0";
    cr_assert_eq(tu_write_file(kb, magic, sizeof magic - 1), 0);
    char *ini = tiny_ini_lm("kenlm.ini", kb);
    dtu_expect_load_error(ini, NULL, SMT_ERR_CORRUPT, "lm.binary", NULL);
    free(ini), free(kb);
}

/* An LM without <unk> (the tiny LM less its <unk>: tests/data/glm/upper_nounk.arpa) as KenLM's
 * probing and trie binaries of it (KenLM made them): the decoder reads both, and its 1-best,
 * scores and 10-best lists over sentences with unknown words equal those with the ARPA file. */
Test(strict, kenlm_binary_lm_without_unk)
{
    static const char *const lms[] = {"glm/upper_nounk.arpa",
                                      "glm/kenlm/tiny.upper_nounk.probing.bin",
                                      "glm/kenlm/tiny.upper_nounk.trie.bin"};
    static const char *const lines[] = {"a q b", "q c", "x q y q", "c y q", "q"};
    char *want[5] = {0};
    for (int k = 0; k < 3; k++) {
        char *lm = tu_data_path(lms[k]), *ini = tiny_ini_lm("nounk.ini", lm);
        dec_model *m;
        smt_err e;
        cr_assert_eq(dec_model_load(&m, ini, NULL, &e), 0, "%s: %s", lms[k], e.msg);
        for (int i = 0; i < 5; i++) {
            double score;
            char *nbest = NULL, *best = translate(m, lines[i], &score, 10, &nbest), *all = NULL;
            cr_assert(strstr(best, "q"), "%s: %s", lines[i], best); /* passed through */
            cr_assert(asprintf(&all, "%s\n%.17g\n%s", best, score, nbest) > 0);
            if (k == 0)
                want[i] = all;
            else {
                cr_assert_str_eq(all, want[i], "%s, %s", lms[k], lines[i]);
                free(all);
            }
            free(best), free(nbest);
        }
        dec_model_free(m);
        free(lm), free(ini);
    }
    for (int i = 0; i < 5; i++)
        free(want[i]);
}

/* Moses's binarized phrase tables are named, with what to give instead: a CompactPT, OnDisk or
 * Binary feature type, and a folder where a ProbingPT file is expected (Moses2's CreateProbingPT
 * writes one). */
Test(strict, moses_binary_tables_named)
{
    char *text = NULL, *ini = tiny_ini("mb.ini", "", "", "", "", &text);
    char *dirp = tu_join(tmp, "probing-folder");
    cr_assert_eq(mkdir(dirp, 0755), 0);
    static const char *const types[] = {"PhraseDictionaryCompact", "PhraseDictionaryOnDisk",
                                        "PhraseDictionaryBinary"};
    static const char *const want[] = {"Moses's CompactPT", "Moses's OnDisk", "Moses's binary"};
    for (int k = 0; k < 4; k++) {
        char *t2 = strdup(text);
        char *p = strstr(t2, "PhraseDictionaryMemory"), *out = NULL;
        cr_assert_not_null(p);
        *p = '\0';
        const char *rest = p + strlen("PhraseDictionaryMemory");
        if (k < 3) {
            cr_assert(asprintf(&out, "%s%s%s", t2, types[k], rest) > 0);
        } else { /* ProbingPT naming a folder */
            char *path = strstr(rest, "path="), *sp = strchr(path, ' ');
            cr_assert(asprintf(&out, "%sProbingPT%.*spath=%s%s", t2, (int)(path - rest), rest, dirp,
                               sp) > 0);
        }
        cr_assert_eq(tu_write_file(ini, out, strlen(out)), 0);
        dtu_expect_load_error(ini, NULL, SMT_ERR_UNSUPPORTED,
                              k < 3 ? want[k] : "is a folder: Moses2's ProbingPT", "fastsmt-binarize",
                              NULL);
        free(t2), free(out);
    }
    free(text), free(ini), free(dirp);
}

/* ---------------------------------------------------------------- weight files */

/* Moses's weight file (-weight-file, [weight-file]) holds sparse feature weights only (FVector::load
 * as a sparse vector, added to the weights; dense weights come from [weight]): comment and blank
 * lines change nothing, a dense feature's name is refused (Moses would not change its weight) and
 * so is a sparse weight (no sparse features here), each naming file:line; a malformed line is a
 * parse error. */
Test(strict, weight_file)
{
    char *wf = tu_join(tmp, "weights.txt");
    char *text, *ini = tiny_ini("wf.ini", "", "", "[weight-file]\nweights.txt\n", "", &text);
    char *plain = tiny_ini("plain.ini", "", "", "", "", NULL);
    dec_model *m = dtu_load(plain, NULL);
    double s0, s1;
    char *nb0, *nb1, *out0 = translate(m, "a b c", &s0, 10, &nb0);
    dec_model_free(m);
    const char *comments = "# sparse weights\n\n  \n#LM0 2\n";
    cr_assert_eq(tu_write_file(wf, comments, strlen(comments)), 0);
    m = dtu_load(ini, NULL);
    char *out1 = translate(m, "a b c", &s1, 10, &nb1);
    cr_assert_str_eq(out1, out0);
    cr_assert_str_eq(nb1, nb0);
    dec_model_free(m);
    char *where = NULL;
    cr_assert(asprintf(&where, "([weight-file] of %s:%u)", ini, line_of(text, "[weight-file]\nweights.txt")) > 0);
    static const struct {
        const char *file, *want;
        int rc;
    } bad[] = {
        {"# c\nLM0 0.5\n", "weights.txt:2: LM0 is a dense feature: Moses reads a weight file as "
                            "sparse feature weights only", SMT_ERR_UNSUPPORTED},
        {"pp_das~the 0.1\n", "weights.txt:1: sparse feature weight 'pp_das~the': sparse features "
                              "are not supported", SMT_ERR_UNSUPPORTED},
        {"LM0\n", "weights.txt:1: expected 'name value'", SMT_ERR_PARSE},
        {"LM0 0.5 1\n", "weights.txt:1: expected 'name value'", SMT_ERR_PARSE},
        {"LM0 nan\n", "weights.txt:1: expected 'name value'", SMT_ERR_PARSE},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        cr_assert_eq(tu_write_file(wf, bad[k].file, strlen(bad[k].file)), 0);
        dtu_expect_load_error(ini, NULL, bad[k].rc, bad[k].want, where, NULL);
        /* the flag: the same, named as the flag; it replaces the ini's file */
        dec_options opt;
        dec_options_default(&opt);
        opt.weight_file = wf;
        dtu_expect_load_error(plain, &opt, bad[k].rc, bad[k].want, "(-weight-file)", NULL);
    }
    dec_options opt;
    dec_options_default(&opt);
    char *empty = tu_join(tmp, "empty.txt");
    cr_assert_eq(tu_write_file(empty, "", 0), 0);
    opt.weight_file = empty;
    dec_model_free(dtu_load(ini, &opt)); /* the flag's file, not the ini's ("LM0 nan") */
    /* a missing file names the ini's line and both places looked at */
    char *ini2 = tiny_ini("wf2.ini", "", "", "[weight-file]\nnone.txt\n", "", NULL);
    dtu_expect_load_error(ini2, NULL, SMT_ERR_IO, "none.txt: not found", NULL);
    char *ini3 = tiny_ini("wf3.ini", "", "", "[weight-file]\na.txt\nb.txt\n", "", NULL);
    dtu_expect_load_error(ini3, NULL, SMT_ERR_PARSE, "[weight-file] takes one file, not 2", NULL);
    free(out0), free(out1), free(nb0), free(nb1), free(where), free(wf), free(empty);
    free(text), free(ini), free(ini2), free(ini3), free(plain);
}

/* [early-distortion-cost] and its flag (dec_options.early_distortion_cost) are the same setting;
 * it changes the distortion features (hand-computed values: tests/test_decoder_data.c,
 * early_distortion_cost); a value that is no boolean is an error naming the line. */
Test(strict, early_distortion_cost_section_and_flag)
{
    char *plain = tiny_ini("plain.ini", "", "", "", "", NULL);
    char *on = tiny_ini("edc.ini", "", "", "[early-distortion-cost]\n", "", NULL);
    char *off = tiny_ini("edc0.ini", "", "", "[early-distortion-cost]\nfalse\n", "", NULL);
    double s;
    char *nb_plain, *nb_on, *nb_flag, *nb_off;
    dec_model *m = dtu_load(plain, NULL);
    free(translate(m, "y x a", &s, 50, &nb_plain));
    dec_model_free(m);
    m = dtu_load(on, NULL);
    free(translate(m, "y x a", &s, 50, &nb_on));
    dec_model_free(m);
    dec_options opt;
    dec_options_default(&opt);
    opt.early_distortion_cost = 1;
    m = dtu_load(plain, &opt);
    free(translate(m, "y x a", &s, 50, &nb_flag));
    dec_model_free(m);
    m = dtu_load(off, NULL);
    free(translate(m, "y x a", &s, 50, &nb_off));
    dec_model_free(m);
    cr_assert_str_eq(nb_on, nb_flag);
    cr_assert_str_eq(nb_off, nb_plain);
    cr_assert_str_neq(nb_on, nb_plain);
    char *text, *bad = tiny_ini("edcbad.ini", "", "", "[early-distortion-cost]\nmaybe\n", "", &text);
    char *where = NULL;
    cr_assert(asprintf(&where, "edcbad.ini:%u: [early-distortion-cost]",
                       line_of(text, "[early-distortion-cost]\nmaybe")) > 0);
    dtu_expect_load_error(bad, NULL, SMT_ERR_PARSE, where, NULL);
    free(nb_plain), free(nb_on), free(nb_flag), free(nb_off), free(where), free(text);
    free(plain), free(on), free(off), free(bad);
}

/* Reordering types Moses accepts that this decoder cannot make exact are refused by name: a table
 * conditioned on the source phrase only (f; probingpt reads source ||| target ||| scores) and
 * collapsed scores (collapseff), hierarchical or not. */
Test(strict, reordering_types_refused)
{
    static const struct {
        const char *type, *want;
    } bad[] = {
        {"hier-msd-bidirectional-f", "a table conditioned on the source phrase only (f)"},
        {"msd-backward-f", "a table conditioned on the source phrase only (f)"},
        {"hier-msd-bidirectional-fe-collapseff", "collapseff is not supported"},
        {"hier-bidirectional-fe", "names no model"},
        {"hier-msd-bidirectional-fe-hierx", "unknown reordering type part 'hierx'"},
        /* every part is read, however long the type (dashes are skipped as empty parts) */
        {"msd-bidirectional-fe-allff-----------------------------------------------------------"
         "------------------------------------------------------------------------------------"
         "------------------------------------------------------------------------------------"
         "------------------------------------------------------------------------------------"
         "-bogus",
         "unknown reordering type part 'bogus'"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char *fo = NULL, *plain = tiny_ini("plain.ini", "", "", "", "", NULL);
        cr_assert(asprintf(&fo, "LexicalReordering0 type=%s", bad[k].type) > 0);
        dec_options opt;
        dec_options_default(&opt);
        opt.feature_overwrite = fo;
        dec_model *m = NULL;
        smt_err e;
        int rc = dec_model_load(&m, plain, &opt, &e);
        cr_assert(rc < 0 && !m, "%s loaded", bad[k].type);
        cr_assert(strstr(e.msg, bad[k].want) && strstr(e.msg, "plain.ini:"), "%s: '%s'",
                  bad[k].type, e.msg);
        free(fo), free(plain);
    }
}
