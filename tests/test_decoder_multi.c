#define _GNU_SOURCE
/* Several phrase tables (issue 11, item 4): alternative decoding paths ([mapping] "0 T 0",
 * "1 T 1") and [decoding-graph-backoff], as Moses's TranslationOptionCollection makes their
 * options; each option with its own table's scores and 0 for the other table's feature; the
 * reordering model looked up for an option of any table; text and binarized tables alike; the
 * old format's several [ttable-file] lines.
 *
 * The model (tests/data/decoder/twotable): no LM, no distortion (distortion limit 0: monotone),
 * weights WordPenalty0 0.1, PhrasePenalty0 0.2, TranslationModel0 1, TranslationModel1 1.
 *   table0: a → A 0.5, b → B 0.5, a b → AB0 0.1
 *   table1: a → A 0.25, a b → AB1 0.9, a b c → ABC 0.01, b c → BC 0.4, c → C 0.5
 * ln 0.5 = -0.693147, ln 0.25 = -1.386294, ln 0.1 = -2.302585, ln 0.9 = -0.105361,
 * ln 0.01 = -4.605170, ln 0.4 = -0.916291. A translation of P phrases and W words scores
 * TM0 + TM1 - 0.1 W + 0.2 P. For "a b c" (every segmentation, each option of each table):
 *   AB1 C        TM1 -0.105361 - 0.693147 = -0.798508            -0.798508 - 0.2 + 0.4 = -0.598508
 *   A(0) BC      TM0 -0.693147, TM1 -0.916291                    -1.609438 + 0.2       = -1.409438
 *   A(0) B C     TM0 -1.386294, TM1 -0.693147                    -2.079442 + 0.3       = -1.779442
 *   A(1) BC      TM1 -1.386294 - 0.916291 = -2.302585            -2.302585 + 0.2       = -2.102585
 *   A(1) B C     TM0 -0.693147, TM1 -1.386294 - 0.693147         -2.772589 + 0.3       = -2.472589
 *   AB0 C        TM0 -2.302585, TM1 -0.693147                    -2.995732 + 0.2       = -2.795732
 *   ABC          TM1 -4.605170                                   -4.605170 + 0.1       = -4.505170
 * (n-best totals printed with 6 significant digits). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoder.h"
#include "dec_testutil.h"
#include "testutil.h"

static char *tmp, *data;

static void setup(void)
{
    tmp = tu_tmpdir();
    data = tu_data_path("decoder/twotable");
    cr_assert_not_null(tmp);
}

static void teardown(void)
{
    tu_rmtree(tmp);
    free(tmp);
    free(data);
}

TestSuite(multi, .init = setup, .fini = teardown, .timeout = 120);

/* The model's ini with extra appended, written into tmp as name (its tables named absolutely).
 * Returns the path (malloc'ed). */
static char *ini_with(const char *name, const char *extra)
{
    char *src = tu_join(data, "moses.ini");
    size_t len;
    char *text = tu_read_file(src, &len);
    cr_assert_not_null(text);
    /* path=table0 -> path=<data>/table0 */
    size_t cap = len + 4096 + strlen(extra);
    char *out = malloc(cap), *o = out;
    for (const char *p = text; *p;) {
        const char *hit = strstr(p, "path=");
        if (!hit) {
            o += sprintf(o, "%s", p);
            break;
        }
        hit += 5;
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        o += sprintf(o, "%s/", data);
        p = hit;
    }
    o += sprintf(o, "\n%s", extra);
    char *path = tu_join(tmp, name);
    cr_assert_eq(tu_write_file(path, out, (size_t)(o - out)), 0);
    free(out), free(text), free(src);
    return path;
}

/* Translates line with model m; the n-best list (n, distinct) in *nbest, the 1-best returned. */
static char *translate(dec_model *m, const char *line, size_t n, int distinct, char **nbest)
{
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0, "%s", e.msg);
    smt_buf best = {0}, nb = {0};
    double score;
    cr_assert_eq(dec_translate(w, line, strlen(line), 0, &best, &nb, n, distinct, &score, &e), 0,
                 "%s", e.msg);
    dec_worker_free(w);
    char *b = strndup(best.data, best.len);
    *nbest = strndup(nb.data ? nb.data : "", nb.len);
    smt_buf_free(&best), smt_buf_free(&nb);
    return b;
}

static dec_model *load_quiet(const char *ini)
{
    char *warn;
    dec_model *m = dtu_load_warned(ini, &warn);
    free(warn);
    return m;
}

#define NB(words, wp, pp, tm0, tm1, total)                                                         \
    "0 ||| " words "  ||| WordPenalty0= " wp " PhrasePenalty0= " pp " TranslationModel0= " tm0       \
    " TranslationModel1= " tm1 " ||| " total "\n"

/* Every option of both tables, kept apart even when their words are equal (A from table 0 and
 * A from table 1), each with its own table's score and 0 in the other table's feature. */
static const char *const all_paths =
    NB("AB1 C", "-2", "2", "0", "-0.798508", "-0.598508")
    NB("A BC", "-2", "2", "-0.693147", "-0.916291", "-1.40944")
    NB("A B C", "-3", "3", "-1.38629", "-0.693147", "-1.77944")
    NB("A BC", "-2", "2", "0", "-2.30259", "-2.10259")
    NB("A B C", "-3", "3", "-0.693147", "-2.07944", "-2.47259")
    NB("AB0 C", "-2", "2", "-2.30259", "-0.693147", "-2.79573")
    NB("ABC", "-1", "1", "0", "-4.60517", "-4.50517");

Test(multi, alternative_paths_keep_each_tables_options_and_scores)
{
    char *ini = ini_with("moses.ini", "");
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(best, "AB1 C \n");
    cr_assert_str_eq(nb, all_paths);
    free(best), free(nb);
    /* distinct: the words compare equal across the tables (one id per target word) */
    best = translate(m, "a b c", 100, 1, &nb);
    cr_assert_str_eq(nb, NB("AB1 C", "-2", "2", "0", "-0.798508", "-0.598508")
                             NB("A BC", "-2", "2", "-0.693147", "-0.916291", "-1.40944")
                             NB("A B C", "-3", "3", "-1.38629", "-0.693147", "-1.77944")
                             NB("AB0 C", "-2", "2", "-2.30259", "-0.693147", "-2.79573")
                             NB("ABC", "-1", "1", "0", "-4.60517", "-4.50517"));
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
}

/* c is only in table 1: unknown (passed through, -100) without the second path; with it, C. */
Test(multi, a_word_is_unknown_only_when_no_path_has_it)
{
    char *ini = ini_with("moses.ini", "");
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "c", 10, 0, &nb);
    cr_assert_str_eq(best, "C \n");
    cr_assert_str_eq(nb, NB("C", "-1", "1", "0", "-0.693147", "-0.593147"));
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
    /* one path over table 0: table 1 is loaded, scored 0, and named in a warning */
    char *one = ini_with("one.ini", "");
    char *text = tu_read_file(one, NULL);
    char *p = strstr(text, "1 T 1");
    cr_assert_not_null(p);
    memcpy(p, "     ", 5);
    cr_assert_eq(tu_write_file(one, text, strlen(text)), 0);
    char *warn;
    m = dtu_load_warned(one, &warn);
    cr_assert(strstr(warn, "TranslationModel1 is in no decoding path"), "%s", warn);
    free(warn);
    best = translate(m, "c", 10, 0, &nb);
    cr_assert_str_eq(best, "c \n");
    /* -100 unknown word penalty, -0.1 word penalty, 0.2 phrase penalty */
    cr_assert_str_eq(nb, NB("c", "-1", "1", "0", "0", "-99.9"));
    free(best), free(nb), free(text), free(one);
    dec_model_free(m);
}

/* [decoding-graph-backoff] "0 1", Moses's current rule: path 1 is skipped for a span of at most
 * 1 word and for a span path 0 already translates; a single word no path translated is asked
 * again (ProcessUnknownWord). So: a, b: table 0 only (no A from table 1); a b: table 0 has AB0,
 * table 1 not consulted (no AB1); b c: table 0 has none, table 1 gives BC; c: table 1 through the
 * unknown-word retry; a b c: ABC. Totals from the header. */
Test(multi, backoff_consults_the_second_table_only_where_the_first_has_nothing)
{
    char *ini = ini_with("backoff1.ini", "[decoding-graph-backoff]\n0\n1\n");
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(best, "A BC \n");
    cr_assert_str_eq(nb, NB("A BC", "-2", "2", "-0.693147", "-0.916291", "-1.40944")
                             NB("A B C", "-3", "3", "-1.38629", "-0.693147", "-1.77944")
                             NB("AB0 C", "-2", "2", "-2.30259", "-0.693147", "-2.79573")
                             NB("ABC", "-1", "1", "0", "-4.60517", "-4.50517"));
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
    /* 2: spans of 1 and 2 words skipped (b c too), c still from the retry, a b c (3 words) not */
    ini = ini_with("backoff2.ini", "[decoding-graph-backoff]\n0\n2\n");
    m = load_quiet(ini);
    best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(best, "A B C \n");
    cr_assert_str_eq(nb, NB("A B C", "-3", "3", "-1.38629", "-0.693147", "-1.77944")
                             NB("AB0 C", "-2", "2", "-2.30259", "-0.693147", "-2.79573")
                             NB("ABC", "-1", "1", "0", "-4.60517", "-4.50517"));
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
    /* the first path's value is never used (Moses: "only skip subsequent graphs"); 0 = always */
    ini = ini_with("backoff0.ini", "[decoding-graph-backoff]\n5\n0\n");
    m = load_quiet(ini);
    best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(nb, all_paths);
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
    ini = ini_with("backoffbad.ini", "[decoding-graph-backoff]\n0\n-1\n");
    dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, "[decoding-graph-backoff]", NULL);
    free(ini);
}

/* table-limit applies per table: table 1 limited to 1 keeps AB1 (its best for a b), and for a
 * its only A; table 0 keeps its own. */
Test(multi, table_limit_is_per_table)
{
    char *ini = ini_with("limit.ini", "");
    char *text = tu_read_file(ini, NULL);
    char *p = strstr(text, "path=");
    p = strstr(p + 1, "path=");
    cr_assert_not_null(p);
    char *full = NULL;
    cr_assert(asprintf(&full, "%.*stable-limit=1 %s", (int)(p - text), text, p) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(nb, all_paths); /* every source phrase of table 1 has one target */
    free(best), free(nb);
    dec_model_free(m);
    free(full), free(text), free(ini);
}

/* The lexicalized reordering model is looked up by the option's (source, target) pair, whatever
 * table gave it (tests/data/decoder/twotable/reordering: a ||| A 0.5 0.25 0.25 0.5 0.25 0.25,
 * c ||| C 0.8 0.1 0.1 0.4 0.3 0.3; msd-bidirectional-fe, weights 0.1). "c": C (table 1 only)
 * starts at 0: monotone, backward score ln 0.8 = -0.223144, no next phrase. "a c": A then C,
 * monotone: A backward ln 0.5, C backward ln 0.8 (M backward -0.693147 - 0.223144 = -0.916291),
 * A forward ln 0.5 = -0.693147 (M forward); for both A options (table 0 and table 1 have the
 * pair). "b c": BC has no reordering entry: scores 0. */
static const char *lr_lines =
    "LexicalReordering name=LexicalReordering0 num-features=6 "
    "type=wbe-msd-bidirectional-fe-allff input-factor=0 output-factor=0 path=%s/reordering\n";

static char *lr_ini(const char *name)
{
    char *line = NULL, *full = NULL;
    cr_assert(asprintf(&line, lr_lines, data) > 0);
    char *ini = ini_with(name, "");
    char *text = tu_read_file(ini, NULL);
    char *p = strstr(text, "PhraseDictionaryMemory name=TranslationModel0");
    char *w = strstr(text, "[weight]\n");
    cr_assert(p && w && w > p);
    w += strlen("[weight]\n");
    cr_assert(asprintf(&full, "%.*s%s%.*sLexicalReordering0= 0.1 0.1 0.1 0.1 0.1 0.1\n%s",
                       (int)(p - text), text, line, (int)(w - p), p, w) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    free(full), free(text), free(line);
    return ini;
}

#define NBR(words, lr, wp, pp, tm0, tm1, total)                                                    \
    "0 ||| " words "  ||| LexicalReordering0= " lr " WordPenalty0= " wp " PhrasePenalty0= " pp     \
    " TranslationModel0= " tm0 " TranslationModel1= " tm1 " ||| " total "\n"

Test(multi, reordering_is_looked_up_for_an_option_of_any_table)
{
    char *ini = lr_ini("lr.ini");
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "c", 10, 0, &nb);
    /* total: -0.593147 + 0.1 * -0.223144 = -0.6154616 */
    cr_assert_str_eq(nb, NBR("C", "-0.223144 0 0 0 0 0", "-1", "1", "0", "-0.693147", "-0.615462"));
    free(best), free(nb);
    /* "a c": A(0) C: TM0 -0.693147, TM1 -0.693147, -0.2 + 0.4; LR backward M -0.916291,
     * forward M -0.693147: 0.1 * -1.609438; total -1.386294 + 0.2 - 0.160944 = -1.347238.
     * A(1) C: TM1 -1.386294 - 0.693147, the same LR: -2.079442 + 0.2 - 0.160944 = -2.040386. */
    best = translate(m, "a c", 10, 0, &nb);
    cr_assert_str_eq(nb, NBR("A C", "-0.916291 0 0 -0.693147 0 0", "-2", "2", "-0.693147",
                             "-0.693147", "-1.34724")
                             NBR("A C", "-0.916291 0 0 -0.693147 0 0", "-2", "2", "0",
                                 "-2.07944", "-2.04039"));
    free(best), free(nb);
    /* "b c": BC (table 1) has no reordering entry: 0 0 0 0 0 0; B C: B none, C backward M */
    best = translate(m, "b c", 10, 0, &nb);
    cr_assert_str_eq(nb, NBR("BC", "0 0 0 0 0 0", "-1", "1", "0", "-0.916291", "-0.816291")
                             NBR("B C", "-0.223144 0 0 0 0 0", "-2", "2", "-0.693147",
                                 "-0.693147", "-1.20861"));
    free(best), free(nb);
    dec_model_free(m);
    free(ini);
}

/* fastsmt-binarize binarizes each table (the reordering table integrated into each) and writes an
 * ini naming each binary; the binarized model, and one mixing a text and a binary table (no
 * reordering model), translate byte for byte as the text model does. */
Test(multi, binarized_tables_translate_as_the_text_tables)
{
    static const char *const inputs[] = {"a b c", "c", "a c", "b c", "a d c b"};
    char *ini = lr_ini("lr.ini");
    char *dir = tu_join(tmp, "bin");
    smt_err e;
    cr_assert_eq(dec_binarize(ini, dir, NULL, NULL, &e), 0, "%s", e.msg);
    char *bini = tu_join(dir, "moses.ini");
    char *btext = tu_read_file(bini, NULL);
    cr_assert(strstr(btext, "ProbingPT name=TranslationModel0"), "%s", btext);
    cr_assert(strstr(btext, " path=phrase-table.ppt "), "%s", btext);
    cr_assert(strstr(btext, "ProbingPT name=TranslationModel1"), "%s", btext);
    cr_assert(strstr(btext, " path=phrase-table.1.ppt "), "%s", btext);
    dec_model *mt = load_quiet(ini), *mb = load_quiet(bini);
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        char *nt, *nbb, *bt = translate(mt, inputs[i], 100, 0, &nt);
        char *bb = translate(mb, inputs[i], 100, 0, &nbb);
        cr_assert_str_eq(bt, bb, "%s", inputs[i]);
        cr_assert_str_eq(nt, nbb, "%s", inputs[i]);
        free(nt), free(nbb), free(bt), free(bb);
    }
    dec_model_free(mb);
    /* text table 0 with binary table 1 (a model without reordering) */
    char *mixed = ini_with("mixed.ini", "");
    char *text = tu_read_file(mixed, NULL), *full = NULL;
    char *p = strstr(text, "/table1");
    cr_assert_not_null(p);
    char *q = strstr(text, "path=");
    q = strstr(q + 1, "path=") + 5;
    cr_assert(asprintf(&full, "%.*s%s/phrase-table.1.ppt%s", (int)(q - text), text, dir,
                       p + strlen("/table1")) > 0);
    cr_assert_eq(tu_write_file(mixed, full, strlen(full)), 0);
    char *plain = ini_with("plain.ini", "");
    dec_model *mm = load_quiet(mixed), *mp = load_quiet(plain);
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        char *nt, *nbb, *bt = translate(mp, inputs[i], 100, 0, &nt);
        char *bb = translate(mm, inputs[i], 100, 0, &nbb);
        cr_assert_str_eq(nt, nbb, "%s", inputs[i]);
        free(nt), free(nbb), free(bt), free(bb);
    }
    dec_model_free(mm), dec_model_free(mp), dec_model_free(mt);
    /* the text reordering table with a binary table among text ones: refused by name (the
     * binary's integrated scores may come from another reordering table) */
    free(full), free(text);
    text = tu_read_file(ini, NULL);
    p = strstr(text, "/table1");
    cr_assert_not_null(p);
    cr_assert(asprintf(&full, "%.*s%s/phrase-table.1.ppt%s", (int)(p - text - strlen(data)),
                       text, dir, p + strlen("/table1")) > 0);
    char *lrmixed = tu_join(tmp, "lrmixed.ini");
    cr_assert_eq(tu_write_file(lrmixed, full, strlen(full)), 0);
    dtu_expect_load_error(lrmixed, NULL, SMT_ERR_UNSUPPORTED,
                          "a binary phrase table needs its reordering scores integrated",
                          "TranslationModel1", NULL);
    free(lrmixed);
    free(full), free(text), free(mixed), free(plain), free(btext), free(bini), free(dir), free(ini);
}

/* The old format's [ttable-file] lines become one PhraseDictionaryMemory each (Moses's names:
 * PhraseDictionaryMemory0, PhraseDictionaryMemory1), with their [weight-t] weights in order; the
 * translations and totals are the new format's. */
Test(multi, old_format_ttable_lines_become_several_tables)
{
    char *old = NULL;
    cr_assert(asprintf(&old,
                       "[mapping]\n0 T 0\n1 T 1\n\n[ttable-file]\n0 0 0 1 %s/table0\n"
                       "0 0 0 1 %s/table1\n\n[ttable-limit]\n20\n\n[weight-t]\n1\n1\n\n"
                       "[weight-w]\n0.1\n\n[weight-p]\n0.2\n\n[distortion-limit]\n0\n\n"
                       "[beam-threshold]\n0\n",
                       data, data) > 0);
    char *ini = tu_join(tmp, "old.ini");
    cr_assert_eq(tu_write_file(ini, old, strlen(old)), 0);
    dec_model *m = load_quiet(ini);
    char *nb, *best = translate(m, "a b c", 100, 0, &nb);
    cr_assert_str_eq(best, "AB1 C \n");
    /* Moses's order for the converted ini: PhrasePenalty, WordPenalty, then the tables */
    cr_assert_str_eq(nb,
                     "0 ||| AB1 C  ||| PhrasePenalty0= 2 WordPenalty0= -2 "
                     "PhraseDictionaryMemory0= 0 PhraseDictionaryMemory1= -0.798508 ||| "
                     "-0.598508\n"
                     "0 ||| A BC  ||| PhrasePenalty0= 2 WordPenalty0= -2 "
                     "PhraseDictionaryMemory0= -0.693147 PhraseDictionaryMemory1= -0.916291 ||| "
                     "-1.40944\n"
                     "0 ||| A B C  ||| PhrasePenalty0= 3 WordPenalty0= -3 "
                     "PhraseDictionaryMemory0= -1.38629 PhraseDictionaryMemory1= -0.693147 ||| "
                     "-1.77944\n"
                     "0 ||| A BC  ||| PhrasePenalty0= 2 WordPenalty0= -2 "
                     "PhraseDictionaryMemory0= 0 PhraseDictionaryMemory1= -2.30259 ||| -2.10259\n"
                     "0 ||| A B C  ||| PhrasePenalty0= 3 WordPenalty0= -3 "
                     "PhraseDictionaryMemory0= -0.693147 PhraseDictionaryMemory1= -2.07944 ||| "
                     "-2.47259\n"
                     "0 ||| AB0 C  ||| PhrasePenalty0= 2 WordPenalty0= -2 "
                     "PhraseDictionaryMemory0= -2.30259 PhraseDictionaryMemory1= -0.693147 ||| "
                     "-2.79573\n"
                     "0 ||| ABC  ||| PhrasePenalty0= 1 WordPenalty0= -1 "
                     "PhraseDictionaryMemory0= 0 PhraseDictionaryMemory1= -4.60517 ||| "
                     "-4.50517\n");
    free(best), free(nb);
    dec_model_free(m);
    free(ini), free(old);
}
