#define _GNU_SOURCE
/* The decoder on a tiny hand-built model (tests/data/decoder/tiny), whose best translations and
 * scores are computed by hand below; n-best format; bad input; bad models; the README command. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "decoder.h"
#include "smt_lines.h"
#include "dec_testutil.h"
#include "testutil.h"

#define LN10 2.302585093
/* tiny/moses.ini's weights */
#define W_LR 0.1
#define W_DIST 0.3
#define W_LM 1.0
#define W_WP 0.5
#define W_PP 0.2
#define W_TM 1.0
#define W_UWP 1.0

static dec_model *model;
static dec_worker *worker;
static char *tmp;

static void setup(void)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    model = dtu_load(ini, NULL);
    smt_err e;
    cr_assert_eq(dec_worker_create(&worker, model, &e), 0);
    free(ini);
    tmp = tu_tmpdir();
}

static void teardown(void)
{
    dec_worker_free(worker);
    dec_model_free(model);
    tu_rmtree(tmp);
    free(tmp);
}

TestSuite(decoder, .init = setup, .fini = teardown);

typedef struct result {
    smt_buf best, nbest;
    double score;
    int rc;
} result;

static result translate(const char *line, size_t n_best, int distinct)
{
    result r;
    memset(&r, 0, sizeof r);
    smt_err e;
    r.rc = dec_translate(worker, line, strlen(line), 7, &r.best, &r.nbest, n_best, distinct,
                         &r.score, &e);
    return r;
}

static void result_free(result *r)
{
    smt_buf_free(&r->best);
    smt_buf_free(&r->nbest);
}

/* One parsed n-best line. */
typedef struct nline {
    char words[256];
    double total, features[16];
    int n_features;
} nline;

/* Parses "id ||| words ||| Name= v ... ||| total"; checks the id, the feature names in Moses's
 * order and that total = weights . features. */
static int parse_nbest(const char *text, nline *out, int max)
{
    static const char *const names[] = {"LexicalReordering0=", "Distortion0=", "LM0=",
                                        "WordPenalty0=", "PhrasePenalty0=", "TranslationModel0="};
    static const int counts[] = {6, 1, 1, 1, 1, 1};
    static const double w[] = {W_LR, W_LR, W_LR, W_LR, W_LR, W_LR, W_DIST, W_LM, W_WP, W_PP, W_TM};
    int n = 0;
    char *copy = strdup(text), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line && n < max;
         line = strtok_r(NULL, "\n", &save), n++) {
        nline *l = &out[n];
        memset(l, 0, sizeof *l);
        char *f1 = strstr(line, " ||| ");
        cr_assert_not_null(f1, "%s", line);
        cr_assert_eq(strncmp(line, "7", (size_t)(f1 - line)), 0, "%s", line);
        char *f2 = strstr(f1 + 5, " ||| ");
        cr_assert_not_null(f2, "%s", line);
        snprintf(l->words, sizeof l->words, "%.*s", (int)(f2 - f1 - 5), f1 + 5);
        char *f3 = strstr(f2 + 5, " ||| ");
        cr_assert_not_null(f3, "%s", line);
        l->total = atof(f3 + 5);
        *f3 = '\0';
        char *fs = NULL, *tok = strtok_r(f2 + 5, " ", &fs);
        double dot = 0;
        int k = 0;
        for (int i = 0; i < 6; i++) {
            cr_assert_str_eq(tok, names[i]);
            for (int j = 0; j < counts[i]; j++) {
                tok = strtok_r(NULL, " ", &fs);
                cr_assert_not_null(tok);
                l->features[k] = atof(tok);
                dot += w[k] * l->features[k];
                k++;
            }
            tok = strtok_r(NULL, " ", &fs);
        }
        cr_assert_null(tok, "extra fields in %s", line);
        l->n_features = k;
        /* the unknown word penalty is in the total but, like in Moses, not printed */
        double unknown = l->total - dot;
        cr_assert(fabs(unknown) < 1e-3 || fabs(unknown + 100 * W_UWP) < 1e-3 ||
                      fabs(unknown + 200 * W_UWP) < 1e-3,
                  "total %f != weights . features %f in %s", l->total, dot, line);
    }
    free(copy);
    return n;
}

Test(decoder, monotone)
{
    /* "a"+"b" -> A B beats "a b" -> A B:
     * ln .5 + ln .25 + ln10 * (p(A|<s>) -.2 + p(B|A) -.1 + p(</s>|B) -.3) + .5 * -2 + .2 * 2
     * + .1 * (ln .5 [a: M] + ln .4 [b: M] + ln .6 [a's next: M]) */
    double expect = W_TM * (log(0.5) + log(0.25)) + W_LM * LN10 * (-0.6) + W_WP * -2 + W_PP * 2 +
                    W_LR * (log(0.5) + log(0.4) + log(0.6));
    double second = W_TM * log(0.1) + W_LM * LN10 * (-0.6) + W_WP * -2 + W_PP + W_LR * log(0.7);
    result r = translate("a b", 10, 0);
    cr_assert_eq(r.rc, 0);
    cr_assert_str_eq(r.best.data, "A B \n");
    cr_assert_float_eq(r.score, expect, 1e-4);
    nline l[10];
    int n = parse_nbest(r.nbest.data, l, 10);
    cr_assert_eq(n, 3, "%s", r.nbest.data);
    cr_assert_float_eq(l[0].total, expect, 1e-4);
    cr_assert_float_eq(l[1].total, second, 1e-4);
    cr_assert_str_eq(l[1].words, "A B ");
    cr_assert_float_eq(l[0].features[0], log(0.5) + log(0.4), 1e-4); /* backward M */
    cr_assert_float_eq(l[0].features[3], log(0.6), 1e-4);            /* forward M */
    result_free(&r);
    r = translate("a b", 10, 1); /* distinct: one line per output */
    n = parse_nbest(r.nbest.data, l, 10);
    cr_assert_eq(n, 2, "%s", r.nbest.data);
    cr_assert_str_eq(l[1].words, "B A ");
    result_free(&r);
}

Test(decoder, reordered)
{
    /* y first (start 1: distortion 1, orientation D), then x (jump back 2, swap):
     * 2 ln .5 + ln10 * (p(Y|<s>) -.4 + p(X|Y) -.2 + p(</s>|X) -.3) + .5 * -2 + .2 * 2 + .3 * -3
     * + .1 * (ln .2 [y: D] + ln .2 [x: S] + ln .25 [y's next: S]) */
    double expect = W_TM * 2 * log(0.5) + W_LM * LN10 * (-0.9) + W_WP * -2 + W_PP * 2 +
                    W_DIST * -3 + W_LR * (log(0.2) + log(0.2) + log(0.25));
    result r = translate("x y", 10, 0);
    cr_assert_str_eq(r.best.data, "Y X \n");
    cr_assert_float_eq(r.score, expect, 1e-4);
    nline l[10];
    cr_assert_geq(parse_nbest(r.nbest.data, l, 10), 2);
    cr_assert_float_eq(l[0].features[6], -3, 1e-9);           /* Distortion0 */
    cr_assert_float_eq(l[0].features[1], log(0.2), 1e-4);     /* backward S */
    cr_assert_float_eq(l[0].features[2], log(0.2), 1e-4);     /* backward D */
    cr_assert_float_eq(l[0].features[4], log(0.25), 1e-4);    /* forward S */
    cr_assert_str_eq(l[1].words, "X Y ");
    result_free(&r);
    /* a heavy distortion weight makes the monotone order win */
    dec_options opt;
    dec_options_default(&opt);
    opt.weight_overwrite = "Distortion0= 10";
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    dec_model *m = dtu_load(ini, &opt);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    smt_buf b = {0};
    cr_assert_eq(dec_translate(w, "x y", 3, 0, &b, NULL, 0, 0, NULL, &e), 0);
    cr_assert_str_eq(b.data, "X Y \n");
    smt_buf_free(&b);
    /* and a distortion limit of 0 forbids the jump */
    dec_worker_free(w);
    dec_model_free(m);
    dec_options_default(&opt);
    opt.distortion_limit = 0;
    opt.distortion_limit_set = 1;
    m = dtu_load(ini, &opt);
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    cr_assert_eq(dec_translate(w, "x y", 3, 0, &b, NULL, 0, 0, NULL, &e), 0);
    cr_assert_str_eq(b.data, "X Y \n");
    smt_buf_free(&b);
    dec_worker_free(w);
    dec_model_free(m);
    free(ini);
}

Test(decoder, recombination)
{
    /* "c" -> "Y X" and "c" -> "X" end in the same state (coverage, range, LM state X, equal
     * reordering scores): "X" is recombined into "Y X" and only reachable as an arc. */
    double yx = W_TM * log(0.4) + W_LM * LN10 * (-0.4 - 0.2 - 0.3) + W_WP * -2 + W_PP +
                W_LR * log(0.5);
    double x = W_TM * log(0.5) + W_LM * LN10 * (-1.5 - 0.3) + W_WP * -1 + W_PP + W_LR * log(0.5);
    result r = translate("c", 10, 0);
    cr_assert_str_eq(r.best.data, "Y X \n");
    nline l[10];
    cr_assert_eq(parse_nbest(r.nbest.data, l, 10), 2, "%s", r.nbest.data);
    cr_assert_float_eq(l[0].total, yx, 1e-4);
    cr_assert_str_eq(l[1].words, "X ");
    cr_assert_float_eq(l[1].total, x, 1e-4);
    result_free(&r);
}

Test(decoder, unknown_word)
{
    /* q passes through: UnknownWordPenalty -100, LM p(<unk>|A) = bo(A) -.3 + p(<unk>) -1,
     * p(</s>) after <unk> (no context) -1; q has no reordering entry (no score) */
    double expect = W_TM * log(0.5) + W_LM * LN10 * (-0.2 - 1.3 - 1.0) + W_WP * -2 + W_PP * 2 +
                    W_UWP * -100 + W_LR * (log(0.5) + log(0.6));
    result r = translate("a q", 5, 1);
    cr_assert_str_eq(r.best.data, "A q \n");
    cr_assert_float_eq(r.score, expect, 1e-4);
    nline l[5];
    cr_assert_geq(parse_nbest(r.nbest.data, l, 5), 1);
    cr_assert_float_eq(l[0].total, expect, 1e-3);
    result_free(&r);
}

Test(decoder, bad_input)
{
    result r = translate("", 5, 1);
    cr_assert_eq(r.rc, 0);
    cr_assert_str_eq(r.best.data, "\n");
    nline l[5]; /* one line of zeros, so that every sentence id appears in the n-best list */
    cr_assert_eq(parse_nbest(r.nbest.data, l, 5), 1, "%s", r.nbest.data);
    cr_assert_str_eq(l[0].words, "");
    cr_assert_float_eq(l[0].total, 0, 1e-12);
    result_free(&r);
    r = translate("  \t ", 5, 1);
    cr_assert_str_eq(r.best.data, "\n");
    result_free(&r);
    r = translate("a \xff\xfe\x80 b", 5, 1);
    cr_assert_eq(r.rc, 0);
    cr_assert_str_eq(r.best.data, "A \xff\xfe\x80 B \n");
    result_free(&r);
    r = translate("a ||| b", 5, 0);
    cr_assert_eq(r.rc, 0);
    cr_assert_str_eq(r.best.data, "A ||| B \n");
    result_free(&r);
    /* 300 tokens complete; more than DEC_MAX_SENTENCE are refused with a message */
    size_t n = 300;
    char *line = malloc(4 * (DEC_MAX_SENTENCE + 2));
    line[0] = '\0';
    for (size_t i = 0; i < n; i++)
        strcat(line, i % 3 == 2 ? "q " : i % 3 ? "b " : "a ");
    r = translate(line, 0, 0);
    cr_assert_eq(r.rc, 0);
    int words = 0;
    for (char *p = r.best.data; *p; p++)
        words += *p == ' ';
    cr_assert_eq(words, 300);
    result_free(&r);
    line[0] = '\0';
    for (size_t i = 0; i < DEC_MAX_SENTENCE + 1; i++)
        strcat(line, "a ");
    smt_err e;
    smt_buf b = {0};
    cr_assert_eq(dec_translate(worker, line, strlen(line), 0, &b, NULL, 0, 0, NULL, &e),
                 SMT_ERR_LIMIT);
    cr_assert_str_eq(b.data, "\n");
    cr_assert(strstr(e.msg, "limit"), "%s", e.msg);
    smt_buf_free(&b);
    free(line);
}

static char *write_ini(const char *name, const char *feature_lines)
{
    /* a table with two scores needs two weights, so that the table itself is what fails */
    const char *tm_w = strstr(feature_lines, "num-features=2") ? "1 1" : "1";
    char *tiny = tu_data_path("decoder/tiny");
    char *p = tu_join(tmp, name), *text = NULL;
    cr_assert(asprintf(&text,
                       "[feature]\nUnknownWordPenalty\nWordPenalty\nPhrasePenalty\n%s\n"
                       "Distortion\nKENLM name=LM0 factor=0 path=%s/lm.arpa order=2\n[weight]\n"
                       "LexicalReordering0= 0.1 0.1 0.1 0.1 0.1 0.1\nDistortion0= 0.3\nLM0= 1\n"
                       "WordPenalty0= 0.5\nPhrasePenalty0= 0.2\nTranslationModel0= %s\n"
                       "UnknownWordPenalty0= 1\n",
                       feature_lines, tiny, tm_w) > 0);
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    free(text);
    free(tiny);
    return p;
}

static void expect_load_error(const char *features, int code, const char *needle)
{
    char *tiny = tu_data_path("decoder/tiny"), *lines = NULL;
    cr_assert(asprintf(&lines, features, tiny, tiny, tiny) > 0);
    char *ini = write_ini("bad.ini", lines);
    dtu_expect_load_error(ini, NULL, code, needle, NULL);
    free(lines);
    free(ini);
    free(tiny);
}

#define LR_OK "LexicalReordering name=LexicalReordering0 num-features=6 " \
              "type=wbe-msd-bidirectional-fe-allff path=%s/reordering-table"

Test(decoder, bad_models)
{
    expect_load_error("PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                      "path=%s/no-such-table\n" LR_OK,
                      SMT_ERR_IO, "no-such-table");
    expect_load_error("PhraseDictionaryMemory name=TranslationModel0 num-features=2 "
                      "path=%s/phrase-table\n" LR_OK,
                      SMT_ERR_PARSE, "num-features=2");
    expect_load_error("PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                      "path=%s/phrase-table\nLexicalReordering name=LexicalReordering0 "
                      "num-features=6 type=wbe-msd-bidirectional-fe-allff path=%s/lm.arpa",
                      SMT_ERR_PARSE, "lm.arpa");
    expect_load_error("PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                      "path=%s/phrase-table\n" LR_OK "\nDALM path=%s/lm.arpa",
                      SMT_ERR_UNSUPPORTED, "DALM"); /* SRILM/IRSTLM: read as ARPA */
}

/* An unknown key on a feature line is an error naming file:line and the key (Moses refuses it too):
 * a misspelt key must not be ignored while the line means something else. */
Test(decoder, unknown_keys_refused)
{
    char *tiny = tu_data_path("decoder/tiny"), *lines = NULL;
    cr_assert(asprintf(&lines,
                       "PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table frobnicate=1\n" LR_OK,
                       tiny, tiny) > 0);
    char *ini = write_ini("warn.ini", lines);
    dtu_expect_load_error(ini, NULL, SMT_ERR_PARSE, "warn.ini:", "'frobnicate'", NULL);
    free(lines);
    free(ini);
    free(tiny);
}

Test(decoder, run_keeps_order)
{
    const char *input = "a b\n\nx y\nc\na q\n\n";
    FILE *in = fmemopen((void *)input, strlen(input), "r");
    char *out = NULL, *nb = NULL;
    size_t out_len = 0, nb_len = 0;
    FILE *o = open_memstream(&out, &out_len), *n = open_memstream(&nb, &nb_len);
    dec_run_stats st;
    smt_err e;
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.nbest = n;
    ro.n_best = 5;
    ro.distinct = 1;
    ro.threads = 2;
    cr_assert_eq(dec_run(model, in, o, &ro, &st, &e), 0);
    fclose(in);
    fclose(o);
    fclose(n);
    cr_assert_str_eq(out, "A B \n\nY X \nY X \nA q \n\n");
    cr_assert_eq(st.lines, 6);
    cr_assert_eq(st.tokens, 7);
    cr_assert(strstr(nb, "0 ||| A B  ||| ") == nb, "%s", nb);
    cr_assert(strstr(nb, "\n2 ||| Y X  ||| "), "%s", nb);
    cr_assert(strstr(nb, "\n4 ||| A q  ||| "), "%s", nb);
    cr_assert(strstr(nb, "\n1 |||  ||| LexicalReordering0= 0 0 0 0 0 0 Distortion0= 0 LM0= 0 "), "%s", nb);
    free(out);
    free(nb);
}

/* dec_run_lines on a part of the input (lines 3..6 of run_keeps_order's): the n-best ids and the
 * "line N" warnings count from the reader's line number, as the whole run numbers them. */
Test(decoder, run_lines_keeps_global_ids)
{
    char part[] = "x y\nc\na q\n\n"; /* lines 3-6 (ids 2-5) of "a b\n\nx y\nc\na q\n\n" */
    smt_lines *in;
    smt_err e;
    cr_assert_eq(smt_lines_open_mem(&in, "<part>", part, strlen(part), 2, &e), 0);
    char *out = NULL, *nb = NULL;
    size_t out_len = 0, nb_len = 0;
    FILE *o = open_memstream(&out, &out_len), *n = open_memstream(&nb, &nb_len);
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.nbest = n;
    ro.n_best = 5;
    ro.distinct = 1;
    dec_run_stats st;
    cr_assert_eq(dec_run_lines(model, in, o, &ro, &st, &e), 0, "%s", e.msg);
    smt_lines_close(in);
    fclose(o);
    fclose(n);
    cr_assert_str_eq(out, "Y X \nY X \nA q \n\n");
    cr_assert_eq(st.lines, 4);
    cr_assert(strstr(nb, "2 ||| Y X  ||| ") == nb, "%s", nb);
    cr_assert(strstr(nb, "\n4 ||| A q  ||| "), "%s", nb);
    cr_assert(strstr(nb, "\n5 |||  ||| "), "%s", nb);
    cr_assert_null(strstr(nb, "\n0 ||| "), "%s", nb);
    free(out);
    free(nb);
}

Test(decoder, readme_command)
{
    char *bin = tu_bin_path("fastsmt"), *data = tu_data_path("../../examples/sample");
    char *nb = tu_join(tmp, "nbest.txt"), *cmd = NULL, *out = NULL, *err = NULL;
    cr_assert(asprintf(&cmd, "%s -f %s/moses.ini -threads 2 -n-best-list %s 10 distinct < %s/sample.es",
                       bin, data, nb, data) > 0);
    int rc = tu_run(cmd, &out, &err);
    cr_assert_eq(rc, 0, "%s", err);
    int lines = 0;
    for (char *p = out; *p; p++)
        lines += *p == '\n';
    cr_assert_eq(lines, 10, "%s", out);
    cr_assert(strncmp(out, "in the first talk , o teófilo", 30) == 0, "%s", out);
    size_t len;
    char *text = tu_read_file(nb, &len);
    cr_assert_not_null(text);
    cr_assert(strstr(text, "\n9 ||| "), "no n-best for the last sentence");
    free(text);
    free(cmd), free(out), free(err), free(bin), free(data), free(nb);
}

/* Strips Moses's "|s-e| " markers from text, checking that the spans of each line (1-best) or of
 * each n-best words field cover the source positions 0..n-1 exactly once; returns the text without
 * them. */
static char *strip_segmentation(const char *text, int nbest, const char *src_text)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    const char *p = text, *src = src_text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t n = eol ? (size_t)(eol - p) : strlen(p);
        /* the source line this output line translates */
        const char *se = strchr(src, '\n');
        int ntok = 0, intok = 0;
        for (const char *q = src; q < se; q++) {
            if (*q != ' ' && !intok)
                ntok++;
            intok = *q != ' ';
        }
        const char *w0 = p, *w1 = p + n;
        if (nbest) { /* the words field only */
            w0 = strstr(p, " ||| ") + 5;
            w1 = strstr(w0, " ||| ");
        }
        memcpy(o, p, (size_t)(w0 - p));
        o += w0 - p;
        char seen[1024] = {0};
        int covered = 0;
        for (const char *q = w0; q < w1;) {
            int a, b, used;
            if (*q == '|' && sscanf(q, "|%d-%d|%n", &a, &b, &used) == 2) {
                cr_assert(a >= 0 && a <= b && b < ntok, "span |%d-%d| of %d tokens", a, b, ntok);
                for (int k = a; k <= b; k++) {
                    cr_assert(!seen[k], "source position %d covered twice", k);
                    seen[k] = 1, covered++;
                }
                q += used;
                if (*q == ' ')
                    q++;
                continue;
            }
            *o++ = *q++;
        }
        cr_assert_eq(covered, ntok, "%d of %d source positions covered: %.*s", covered, ntok,
                     (int)n, p);
        memcpy(o, w1, (size_t)(p + n - w1));
        o += p + n - w1;
        if (!eol)
            break;
        *o++ = '\n';
        p = eol + 1;
        if (!nbest) /* an n-best list here holds the hypotheses of one sentence */
            src = se + 1;
    }
    *o = 0;
    return out;
}

/* -include-segmentation-in-n-best: strips Moses's field " ||| s-e=t-u ..." from the end of every
 * n-best line, checking that its phrases cover the ntok source words once and the target words in
 * order (each ranged field has start < end); returns the list without the field. */
static char *strip_segmentation_field(const char *text, int ntok)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    for (const char *p = text; *p;) {
        const char *eol = strchr(p, '\n');
        cr_assert_not_null(eol);
        const char *f = NULL;
        for (const char *q = p; q + 4 <= eol; q++)
            if (memcmp(q, " |||", 4) == 0)
                f = q; /* the last one */
        cr_assert_not_null(f);
        char seen[1024] = {0};
        int covered = 0, next_t = 0;
        for (const char *q = f + 4; q < eol;) {
            int a, b, t, u, used = 0;
            cr_assert_eq(*q, ' ', "%.*s", (int)(eol - p), p);
            q++;
            if (sscanf(q, "%d-%d=%n", &a, &b, &used) == 2 && used) {
                cr_assert(a < b, "a range is written only when it has two ends");
            } else {
                cr_assert_eq(sscanf(q, "%d=%n", &a, &used), 1, "%.*s", (int)(eol - p), p);
                b = a;
            }
            q += used;
            int tused = 0;
            if (sscanf(q, "%d-%d%n", &t, &u, &tused) == 2 && (q[tused] == ' ' || q + tused == eol)) {
                cr_assert(t < u);
            } else {
                cr_assert_eq(sscanf(q, "%d%n", &t, &tused), 1);
                u = t;
            }
            q += tused;
            cr_assert(t == next_t || u < t, "target ranges in order: %.*s", (int)(eol - p), p);
            if (u >= t)
                next_t = u + 1;
            for (int k = a; k <= b; k++) {
                cr_assert(k < ntok && !seen[k], "source %d: %.*s", k, (int)(eol - p), p);
                seen[k] = 1, covered++;
            }
        }
        cr_assert_eq(covered, ntok, "%.*s", (int)(eol - p), p);
        memcpy(o, p, (size_t)(f - p));
        o += f - p;
        *o++ = '\n';
        p = eol + 1;
    }
    *o = 0;
    return out;
}

/* Moses's -t: "|start-end| " after each phrase of the 1-best and of the n-best words (Moses's
 * OutputSurface serves both); without the markers the output is the plain one, and each line's
 * spans cover its source exactly once. -include-segmentation-in-n-best is not markers but Moses's
 * field after the total (Manager::OutputNBest), " ||| 0-2=0-2 3=3 ...". */
Test(decoder, report_segmentation)
{
    char *bin = tu_bin_path("fastsmt"), *data = tu_data_path("../../examples/sample");
    char *cmd = NULL, *plain = NULL, *seg = NULL, *nplain = NULL, *nseg = NULL, *err = NULL;
    char *src_path = tu_join(data, "sample.es");
    size_t sl;
    char *src = tu_read_file(src_path, &sl);
    cr_assert_not_null(src);
    cr_assert(asprintf(&cmd, "%s -f %s/moses.ini -threads 2 < %s", bin, data, src_path) > 0);
    cr_assert_eq(tu_run(cmd, &plain, NULL), 0);
    free(cmd);
    cr_assert(asprintf(&cmd, "%s -f %s/moses.ini -threads 2 -t < %s", bin, data, src_path) > 0);
    cr_assert_eq(tu_run(cmd, &seg, &err), 0, "%s", err);
    free(cmd), free(err);
    cr_assert(strstr(seg, "in the first |0-2| talk |3-3| ") == seg, "%s", seg);
    char *stripped = strip_segmentation(seg, 0, src);
    cr_assert_str_eq(stripped, plain);
    free(stripped);
    /* n-best: one sentence, so that every line of the list has the same source */
    const char *one = "cuando llegó el día de pentecostés , estaban todos unánimes juntos .\n";
    char *one_path = tu_join(tmp, "one.es"), *nb_path = tu_join(tmp, "seg.nbest");
    cr_assert_eq(tu_write_file(one_path, one, strlen(one)), 0);
    size_t nl;
    char *nmark = NULL;
    static const char *const flags[] = {"", "-include-segmentation-in-n-best", "-t"};
    for (int v = 0; v < 3; v++) {
        cr_assert(asprintf(&cmd, "%s -f %s/moses.ini %s -n-best-list %s 20 distinct < %s", bin,
                           data, flags[v], nb_path, one_path) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
        free(cmd), free(err);
        *(v == 0 ? &nplain : v == 1 ? &nseg : &nmark) = tu_read_file(nb_path, &nl);
    }
    cr_assert(nplain && nseg && nmark);
    cr_assert(strstr(nseg, " ||| 0") != NULL && strchr(nseg, '|') && !strstr(nseg, "|0-"),
              "a field, no markers: %s", nseg);
    char *sst = strip_segmentation_field(nseg, 12);
    cr_assert_str_eq(sst, nplain);
    free(sst);
    cr_assert(strstr(nmark, "|11-11|  ||| ") != NULL, "%s", nmark);
    sst = strip_segmentation(nmark, 1, one);
    cr_assert_str_eq(sst, nplain);
    free(nmark);
    free(sst), free(nb_path);
    free(plain), free(seg), free(nplain), free(nseg), free(src), free(src_path), free(one_path);
    free(bin), free(data);
}

/* fastsmt-binarize writes probingpt and glm files and an ini naming them; decoding with it gives
 * byte-identical 1-best and n-best output. */
Test(decoder, binarized_model_same_output)
{
    char *bin = tu_bin_path("fastsmt-binarize"), *ini = tu_data_path("decoder/tiny/moses.ini");
    char *out_dir = tu_join(tmp, "bin"), *cmd = NULL, *err = NULL;
    cr_assert(asprintf(&cmd, "%s %s %s", bin, ini, out_dir) > 0);
    cr_assert_eq(tu_run(cmd, NULL, &err), 0, "%s", err);
    char *bin_ini = tu_join(out_dir, "moses.ini");
    dec_model *m = dtu_load(bin_ini, NULL);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    static const char *const inputs[] = {"a b", "x y", "c", "a q", "b a c x y q a b", ""};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        result r = translate(inputs[i], 10, 0);
        smt_buf b = {0}, nb = {0};
        cr_assert_eq(dec_translate(w, inputs[i], strlen(inputs[i]), 7, &b, &nb, 10, 0, NULL, &e),
                     0);
        cr_assert_str_eq(b.data, r.best.data);
        cr_assert_str_eq(nb.data ? nb.data : "", r.nbest.data ? r.nbest.data : "");
        smt_buf_free(&b);
        smt_buf_free(&nb);
        result_free(&r);
    }
    dec_worker_free(w);
    dec_model_free(m);
    free(bin), free(ini), free(out_dir), free(cmd), free(err), free(bin_ini);
}

/* Translates line with a model loaded with the alignment flags, text or binarized. */
static void translate_aligned(const char *ini, const char *line, smt_buf *b, smt_buf *nb)
{
    dec_run_options o;
    dec_run_options_default(&o);
    o.print_alignment = o.nbest_alignment = 1;
    dec_model *m = dtu_load(ini, NULL);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    cr_assert_eq(dec_worker_set_options(w, &o, &e), 0, "%s", e.msg);
    cr_assert_eq(dec_translate(w, line, strlen(line), 7, b, nb, 10, 0, NULL, &e), 0);
    dec_worker_free(w);
    dec_model_free(m);
}

/* -print-alignment-info / -in-n-best: the table's phrase-internal points moved to sentence
 * positions ("c ||| Y X ||| 0.4 ||| 0-1": c aligned to X only), unknown words aligned to
 * themselves; the words are those of the plain output; text and binarized tables agree. */
Test(decoder, alignment_output)
{
    static const char *const inputs[] = {"a b", "c", "a q", "b a c x y q a b", "x y"};
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    char *bin_ini = NULL;
    {
        char *bin = tu_bin_path("fastsmt-binarize"), *out_dir = tu_join(tmp, "abin"), *cmd = NULL;
        cr_assert(asprintf(&cmd, "%s %s %s", bin, ini, out_dir) > 0);
        cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
        bin_ini = tu_join(out_dir, "moses.ini");
        free(bin), free(out_dir), free(cmd);
    }
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        result r = translate(inputs[i], 10, 0);
        smt_buf b = {0}, nb = {0};
        translate_aligned(ini, inputs[i], &b, &nb);
        /* 1-best: the plain line (its words and their trailing space), then "||| " and points */
        size_t wl = strlen(r.best.data) - 1; /* without the newline */
        cr_assert(strncmp(b.data, r.best.data, wl) == 0 && strncmp(b.data + wl, "||| ", 4) == 0,
                  "%s vs %s", b.data, r.best.data);
        int ns = 1, nt = 0;
        for (const char *p = inputs[i]; *p; p++)
            ns += *p == ' ';
        for (size_t k = 0; k < wl; k++)
            nt += r.best.data[k] == ' ';
        for (const char *p = b.data + wl + 4; *p && *p != '\n';) {
            int a, t, used;
            cr_assert_eq(sscanf(p, "%d-%d%n", &a, &t, &used), 2, "%s", b.data);
            cr_assert(a >= 0 && a < ns && t >= 0 && t < nt, "%d-%d in %s", a, t, b.data);
            p += used;
            while (*p == ' ')
                p++;
        }
        /* n-best: the plain lines with " ||| points" after the total */
        const char *pn = r.nbest.data, *an = nb.data;
        while (*pn) {
            const char *e1 = strchr(pn, '\n'), *e2 = strchr(an, '\n');
            cr_assert(e1 && e2);
            cr_assert(strncmp(an, pn, (size_t)(e1 - pn)) == 0 && strncmp(an + (e1 - pn), " ||| ", 5) == 0,
                      "%.*s vs %.*s", (int)(e2 - an), an, (int)(e1 - pn), pn);
            pn = e1 + 1, an = e2 + 1;
        }
        cr_assert_eq(*an, 0);
        if (bin_ini) {
            smt_buf bb = {0}, bnb = {0};
            translate_aligned(bin_ini, inputs[i], &bb, &bnb);
            cr_assert_str_eq(bb.data, b.data);
            cr_assert_str_eq(bnb.data, nb.data);
            smt_buf_free(&bb), smt_buf_free(&bnb);
        }
        smt_buf_free(&b), smt_buf_free(&nb);
        result_free(&r);
    }
    /* hand-checked: "c" is translated by one of its two phrases; "a q": q passes through */
    smt_buf b = {0}, nb = {0};
    translate_aligned(ini, "a q", &b, &nb);
    cr_assert_str_eq(b.data, "A q ||| 0-0 1-1 \n"); /* Moses: a space after each point */
    smt_buf_free(&b), smt_buf_free(&nb);
    translate_aligned(ini, "c", &b, &nb);
    cr_assert(!strcmp(b.data, "X ||| 0-0 \n") || !strcmp(b.data, "Y X ||| 0-1 \n"), "%s", b.data);
    cr_assert(strstr(nb.data, "Y X  ||| ") && strstr(nb.data, " ||| 0-1 \n"), "%s", nb.data);
    smt_buf_free(&b), smt_buf_free(&nb);
    free(ini), free(bin_ini);
}

/* -alignment-output-file: the 1-best stays plain, the points go to the file, one line per input
 * line (an empty input line too), the same points -print-alignment-info puts inline. */
Test(decoder, alignment_output_file)
{
    char *bin = tu_bin_path("fastsmt"), *ini = tu_data_path("decoder/tiny/moses.ini");
    char *in = tu_join(tmp, "in.txt"), *al = tu_join(tmp, "al.txt"), *cmd = NULL;
    char *plain = NULL, *inl = NULL, *out = NULL, *err = NULL;
    const char *text = "a b\n\nc\na q\nb a c x y q a b\n";
    cr_assert_eq(tu_write_file(in, text, strlen(text)), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -threads 2 < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &plain, NULL), 0);
    free(cmd);
    cr_assert(asprintf(&cmd, "%s -f %s -threads 2 -print-alignment-info < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &inl, NULL), 0);
    free(cmd);
    cr_assert(asprintf(&cmd, "%s -f %s -threads 2 -alignment-output-file %s < %s", bin, ini, al,
                       in) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, plain);
    size_t len;
    char *points = tu_read_file(al, &len);
    cr_assert_not_null(points);
    /* rebuild the inline form from the two files, line by line */
    char *rebuilt = malloc(strlen(inl) + strlen(points) + 64), *r = rebuilt;
    const char *p = plain, *q = points;
    while (*p) {
        const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
        cr_assert(pe && qe, "one alignment line per output line");
        if (pe == p) { /* an empty input line: no points either */
            cr_assert(qe == q);
            *r++ = '\n';
        } else {
            r += sprintf(r, "%.*s||| %.*s\n", (int)(pe - p), p, (int)(qe - q), q);
        }
        p = pe + 1, q = qe + 1;
    }
    *r = 0;
    cr_assert_eq(*q, 0);
    cr_assert_str_eq(rebuilt, inl);
    free(rebuilt), free(points), free(plain), free(inl), free(out), free(err), free(cmd);
    free(bin), free(ini), free(in), free(al);
}

/* Copies the tiny model's tables and LM into tmp and returns the text of its moses.ini (*len
 * bytes), which names them relative to itself: the caller writes its variant to tmp/moses.ini. */
static char *tiny_model_in_tmp(size_t *len)
{
    char *dir = tu_data_path("decoder/tiny");
    static const char *const files[] = {"lm.arpa", "reordering-table", "phrase-table"};
    for (int k = 0; k < 3; k++) {
        char *a = tu_join(dir, files[k]), *b = tu_join(tmp, files[k]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a), free(b);
    }
    char *src = tu_join(dir, "moses.ini"), *text = tu_read_file(src, len);
    cr_assert_not_null(text);
    free(src), free(dir);
    return text;
}

/* A text phrase table's alignment points must lie inside the phrase pair. */
Test(decoder, bad_alignment_is_an_error)
{
    char *ini = tu_join(tmp, "moses.ini"), *pt = tu_join(tmp, "phrase-table");
    static const char *const bad[] = {"a ||| A ||| 0.5 ||| 0-1 ||| 1 1 1\n",
                                      "a ||| A ||| 0.5 ||| 1-0\n", "a ||| A ||| 0.5 ||| 0=0\n",
                                      "a ||| A ||| 0.5 ||| 0-\n"};
    size_t il;
    char *text = tiny_model_in_tmp(&il); /* its phrase table is replaced below */
    cr_assert_eq(tu_write_file(ini, text, il), 0);
    for (int k = 0; k < 4; k++) {
        cr_assert_eq(tu_write_file(pt, bad[k], strlen(bad[k])), 0);
        dec_model *m = NULL;
        smt_err e;
        int rc = dec_model_load(&m, ini, NULL, &e);
        cr_assert_eq(rc, SMT_ERR_PARSE, "%s", bad[k]);
        cr_assert(strstr(e.msg, "phrase-table:1:") != NULL, "%s", e.msg);
        cr_assert_null(m);
    }
    free(text), free(ini), free(pt);
}

/* More of Moses's flags: -mark-unknown with its prefix and suffix (output only: the scores are
 * the same), -ttable-limit, -max-phrase-length, -b, -v 0 (no summary on stderr), and the values
 * of -search-algorithm / -inputtype this decoder does not have refused. */
Test(decoder, moses_flags)
{
    char *bin = tu_bin_path("fastsmt"), *ini = tu_data_path("decoder/tiny/moses.ini");
    char *in = tu_join(tmp, "in.txt"), *cmd = NULL, *out = NULL, *err = NULL;
    cr_assert_eq(tu_write_file(in, "a q\nq q b\n", 10), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -mu -v 0 -n-best-list - 2 < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(strstr(out, "A UNKq \n") == out, "%s", out);
    cr_assert(strstr(out, "UNKq UNKq B \n"), "%s", out);
    cr_assert(strstr(out, "\n0 ||| A UNKq  ||| "), "%s", out);
    cr_assert_str_eq(err, "");
    free(cmd), free(out), free(err);
    cr_assert(asprintf(&cmd, "%s -f %s -mark-unknown -unknown-word-prefix '<' "
                             "-unknown-word-suffix '>' < %s",
                       bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert_str_eq(out, "A <q> \n<q> <q> B \n");
    cr_assert(strstr(err, "2 lines") != NULL, "%s", err);
    free(cmd), free(out), free(err);
    /* the limits: "c" has two translations, "a b" a two-word phrase */
    cr_assert_eq(tu_write_file(in, "c\na b\n", 6), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -ttable-limit 1 -max-phrase-length 1 -b 0 "
                             "-search-algorithm 1 -inputtype 0 -n-best-list - 10 < %s",
                       bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    int c_lines = 0;
    for (char *p = strstr(out, "\n0 ||| "); p; p = strstr(p + 1, "\n0 ||| "))
        c_lines++;
    cr_assert_eq(c_lines, 1, "table limit 1 leaves one translation of c: %s", out);
    cr_assert(strstr(out, "PhrasePenalty0= 2 ") && !strstr(out, "PhrasePenalty0= 1 TranslationModel0= -2.30259"),
              "a b must be two phrases: %s", out);
    free(cmd), free(out), free(err);
    const char *bad[] = {"-search-algorithm 0", "-inputtype 1", "-ttable-limit x", "-b -1",
                         "-max-phrase-length 0", "-unknown-word-prefix"};
    for (int k = 0; k < 6; k++) {
        cr_assert(asprintf(&cmd, "%s -f %s %s < %s", bin, ini, bad[k], in) > 0);
        cr_assert_eq(tu_run(cmd, NULL, NULL), 2, "%s", bad[k]);
        free(cmd);
    }
    free(bin), free(ini), free(in);
}

/* -show-weights as Moses's mert-moses.pl reads it: "Name= values" lines give the tuneable
 * features, one name per value, in exactly the order of the n-best list's scores (the script
 * checks this); untuneable features are "Name UNTUNEABLE"; -weight-overwrite is reflected. */
Test(decoder, show_weights_matches_nbest_order)
{
    char *bin = tu_bin_path("fastsmt"), *ini = tu_data_path("decoder/tiny/moses.ini");
    char *in = tu_join(tmp, "in.txt"), *cmd = NULL, *sw = NULL, *nb = NULL;
    cr_assert_eq(tu_write_file(in, "a b\n", 4), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -inputtype 0 -show-weights -weight-overwrite 'LM0= 0.25'",
                       bin, ini) > 0);
    cr_assert_eq(tu_run(cmd, &sw, NULL), 0);
    free(cmd);
    /* Moses prints the weights fixed with six decimals (FixPrecision(cout, 6)) */
    cr_assert(strstr(sw, "\nLM0= 0.250000\n") || strncmp(sw, "LM0= 0.250000\n", 14) == 0, "%s", sw);
    cr_assert(strstr(sw, "UnknownWordPenalty0 UNTUNEABLE\n"), "%s", sw);
    cr_assert(asprintf(&cmd, "%s -f %s -n-best-list - 1 < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, &nb, NULL), 0);
    /* names, one per value, from both */
    char want[1024] = "", got[1024] = "";
    char *copy = strdup(sw), *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strstr(line, "= ");
        if (!eq)
            continue;
        *eq = 0;
        for (char *v = eq + 1; (v = strchr(v, ' ')) != NULL; v++)
            strcat(strcat(want, line), " ");
    }
    free(copy);
    char *scores = strstr(strstr(strchr(nb, '\n') + 1, " ||| ") + 5, " ||| ") + 5;
    char *end = strstr(scores, " ||| "), label[64] = "";
    for (char *t = scores; t < end;) {
        char *sp = strchr(t, ' ');
        if (!sp || sp > end)
            sp = end;
        if (sp[-1] == '=')
            snprintf(label, sizeof label, "%.*s", (int)(sp - t - 1), t);
        else
            strcat(strcat(got, label), " ");
        t = sp + 1;
    }
    cr_assert_str_eq(got, want);
    cr_assert(strlen(want) > 20, "%s", want);
    free(sw), free(nb), free(cmd), free(bin), free(ini), free(in);
}

/* The ini's [n-best-list] (FILE N [distinct], one line or several) writes the list as the flag
 * does; the flag wins over it; a malformed section is a usage error. */
Test(decoder, ini_nbest_list_section)
{
    char *bin = tu_bin_path("fastsmt");
    char *ini = tu_join(tmp, "moses.ini"), *in = tu_join(tmp, "in.txt"), *cmd = NULL;
    char *flag_nb = tu_join(tmp, "flag.nbest"), *ini_nb = tu_join(tmp, "ini.nbest");
    cr_assert_eq(tu_write_file(in, "a b\nc\n", 6), 0);
    size_t len;
    char *text = tiny_model_in_tmp(&len), *full = NULL;
    cr_assert(asprintf(&full, "%s\n[n-best-list]\n%s\n3 distinct\n", text, ini_nb) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    /* the section alone */
    cr_assert(asprintf(&cmd, "%s -f %s < %s > /dev/null", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    free(cmd);
    char *from_ini = tu_read_file(ini_nb, &len);
    cr_assert_not_null(from_ini, "the ini's n-best list was not written");
    /* the same list through the flag (the ini's file left alone) */
    cr_assert_eq(unlink(ini_nb), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -n-best-list %s 3 distinct < %s > /dev/null", bin, ini,
                       flag_nb, in) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    free(cmd);
    char *from_flag = tu_read_file(flag_nb, &len);
    cr_assert_not_null(from_flag);
    cr_assert_str_eq(from_ini, from_flag);
    cr_assert(access(ini_nb, F_OK) != 0, "the flag replaces the ini's list");
    /* malformed */
    free(full);
    cr_assert(asprintf(&full, "%s\n[n-best-list]\n%s\nmany\n", text, ini_nb) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    cr_assert(asprintf(&cmd, "%s -f %s < %s", bin, ini, in) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 2);
    free(cmd), free(full), free(text), free(from_ini), free(from_flag);
    free(bin), free(ini), free(in), free(flag_nb), free(ini_nb);
}

/* [mapping] and [input-factors] beyond one path over plain words (factored models, generation
 * steps, a second table's path) are refused by name, not ignored; Moses's usual values load. */
Test(decoder, mapping_and_factors_checked)
{
    char *ini = tu_join(tmp, "moses.ini");
    size_t len;
    char *text = tiny_model_in_tmp(&len);
    /* the tiny model has one phrase table: a second path over table 1 names a table it lacks;
     * two steps in one path (a factored join), generation steps and the named form are refused
     * by name (alternative paths over several tables: test_decoder_multi.c) */
    static const struct {
        const char *tail;
        int rc;
        const char *what;
    } cases[] = {
        {"[mapping]\n0 T 0\n[input-factors]\n0\n", 0, NULL},
        {"[mapping]\nT 0\n", 0, NULL},
        {"[mapping]\n0 T 0\n0 G 0\n", SMT_ERR_UNSUPPORTED, "generation steps"},
        {"[mapping]\n0 T 0\n0 T 0\n", SMT_ERR_UNSUPPORTED, "a second step in decoding path 0"},
        {"[mapping]\nT 0\nT 0\n", SMT_ERR_UNSUPPORTED, "a second step in decoding path 0"},
        {"[mapping]\n0 T 0\n1 T 1\n", SMT_ERR_PARSE, "there is no phrase table 1"},
        {"[mapping]\n1 T 0\n", SMT_ERR_PARSE, "decoding path 1 after path -1"},
        {"[mapping]\n0 TranslationModel0\n", SMT_ERR_UNSUPPORTED, "named by its feature"},
        {"[mapping]\n0 T x\n", SMT_ERR_PARSE, "[mapping] phrase table index"},
        {"[mapping]\n0\tT \t0\n", 0, NULL}, /* tabs separate the words too, as in Moses */
        /* every word is read, however long the line */
        {"[mapping]\n0 T 0                                                                     "
         "                                                                                    "
         "                                                                                    "
         "                                                       1\n",
         SMT_ERR_PARSE, "expected 'PATH T INDEX' or 'T INDEX'"},
        {"[decoding-graph-backoff]\n0\n1\n", SMT_ERR_PARSE, "2 values for 1 decoding path"},
        {"[input-factors]\n0\n1\n", SMT_ERR_UNSUPPORTED, "[input-factors]"}};
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        char *full = NULL;
        cr_assert(asprintf(&full, "%s\n%s", text, cases[k].tail) > 0);
        cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
        dec_model *m = NULL;
        smt_err e;
        smt_err_clear(&e);
        int rc = dec_model_load(&m, ini, NULL, &e);
        cr_assert_eq(rc, cases[k].rc, "%s: %d %s", cases[k].tail, rc, e.msg);
        if (!rc)
            dec_model_free(m);
        else
            cr_assert(strstr(e.msg, cases[k].what), "%s", e.msg);
        free(full);
    }
    free(text), free(ini);
}

/* An ini as mert-moses.pl writes it lists only the tuneable features' weights: the untuneable
 * UnknownWordPenalty0 then weighs 1, as in Moses (same output as "UnknownWordPenalty0= 1"); a
 * missing tuneable weight is still an error. */
Test(decoder, untuneable_weight_defaults_to_one)
{
    char *ini = tu_join(tmp, "moses.ini");
    size_t len;
    char *text = tiny_model_in_tmp(&len);
    for (int drop = 0; drop < 2; drop++) {
        const char *name = drop ? "LM0=" : "UnknownWordPenalty0=";
        char *out = malloc(len + 1), *o = out;
        for (char *line = text; *line;) {
            char *e = strchr(line, '\n');
            size_t n = e ? (size_t)(e - line + 1) : strlen(line);
            if (strncmp(line, name, strlen(name)) != 0)
                memcpy(o, line, n), o += n;
            line += n;
        }
        *o = 0;
        cr_assert(strlen(out) < len, "the weight line was removed");
        cr_assert_eq(tu_write_file(ini, out, strlen(out)), 0);
        dec_model *m = NULL;
        smt_err e;
        int rc = dec_model_load(&m, ini, NULL, &e);
        if (drop) {
            cr_assert_eq(rc, SMT_ERR_PARSE);
            cr_assert(strstr(e.msg, "LM0"), "%s", e.msg);
        } else {
            cr_assert_eq(rc, 0, "%s", e.msg);
            dec_worker *w;
            cr_assert_eq(dec_worker_create(&w, m, &e), 0);
            smt_buf b = {0}, nb = {0};
            cr_assert_eq(dec_translate(w, "a q", 3, 7, &b, &nb, 5, 0, NULL, &e), 0);
            result r = translate("a q", 5, 0);
            cr_assert_str_eq(b.data, r.best.data);
            cr_assert_str_eq(nb.data, r.nbest.data);
            result_free(&r);
            smt_buf_free(&b), smt_buf_free(&nb);
            dec_worker_free(w);
            dec_model_free(m);
        }
        free(out);
    }
    free(text), free(ini);
}

/* Pairs missing from the reordering table get no reordering score, text or binarized. */
Test(decoder, binarized_missing_reordering_entries)
{
    static const char *const files[] = {"moses.ini", "phrase-table", "lm.arpa"};
    char *src = tu_data_path("decoder/tiny"), *dir = tu_join(tmp, "partial");
    cr_assert_eq(mkdir(dir, 0777), 0);
    for (int i = 0; i < 3; i++) {
        char *a = tu_join(src, files[i]), *b = tu_join(dir, files[i]);
        cr_assert_eq(tu_copy_file(a, b), 0);
        free(a), free(b);
    }
    const char *rt = "a ||| A ||| 0.5 0.2 0.3 0.6 0.1 0.3\n";
    char *rtp = tu_join(dir, "reordering-table"), *ini = tu_join(dir, "moses.ini");
    cr_assert_eq(tu_write_file(rtp, rt, strlen(rt)), 0);
    char *bin = tu_bin_path("fastsmt-binarize"), *out_dir = tu_join(tmp, "pbin"), *cmd = NULL;
    cr_assert(asprintf(&cmd, "%s %s %s", bin, ini, out_dir) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    char *bin_ini = tu_join(out_dir, "moses.ini");
    dec_model *mt = dtu_load(ini, NULL), *mb = dtu_load(bin_ini, NULL);
    dec_worker *wt, *wb;
    smt_err e;
    cr_assert_eq(dec_worker_create(&wt, mt, &e), 0);
    cr_assert_eq(dec_worker_create(&wb, mb, &e), 0);
    static const char *const inputs[] = {"a b", "x y", "c a", "b q a"};
    for (size_t i = 0; i < sizeof inputs / sizeof *inputs; i++) {
        smt_buf t = {0}, b = {0};
        cr_assert_eq(dec_translate(wt, inputs[i], strlen(inputs[i]), 0, &t, &t,
                                   5, 0, NULL, &e), 0);
        cr_assert_eq(dec_translate(wb, inputs[i], strlen(inputs[i]), 0, &b, &b, 5, 0, NULL, &e), 0);
        cr_assert_str_eq(b.data, t.data);
        smt_buf_free(&t);
        smt_buf_free(&b);
    }
    /* "x y" -> "Y X": neither pair has a reordering entry, so every reordering score is 0 */
    smt_buf b = {0};
    cr_assert_eq(dec_translate(wb, "x y", 3, 0, &b, &b, 1, 0, NULL, &e), 0);
    cr_assert(strstr(b.data, "LexicalReordering0= 0 0 0 0 0 0 "), "%s", b.data);
    smt_buf_free(&b);
    dec_worker_free(wt), dec_worker_free(wb);
    dec_model_free(mt), dec_model_free(mb);
    free(src), free(dir), free(rtp), free(ini), free(bin), free(out_dir), free(cmd), free(bin_ini);
}

/* Other lexicalized reordering variants: msd-backward (3 scores) and monotonicity-bidirectional
 * (4 scores: backward M NM, forward M NM), on the reordered "x y" -> "Y X". */
static double reordered_with(const char *type, int n, const char *weights, const char *table)
{
    char *tiny = tu_data_path("decoder/tiny"), *text = NULL;
    char *rt = tu_join(tmp, "rt"), *ini = tu_join(tmp, "lr.ini");
    cr_assert_eq(tu_write_file(rt, table, strlen(table)), 0);
    cr_assert(asprintf(&text,
                       "[feature]\nUnknownWordPenalty\nWordPenalty\nPhrasePenalty\n"
                       "PhraseDictionaryMemory name=TranslationModel0 num-features=1 "
                       "path=%s/phrase-table\nLexicalReordering name=LexicalReordering0 "
                       "num-features=%d type=%s path=%s\nDistortion\n"
                       "KENLM name=LM0 factor=0 path=%s/lm.arpa order=2\n[distortion-limit]\n6\n"
                       "[weight]\nLexicalReordering0= %s\nDistortion0= 0.3\nLM0= 1\n"
                       "WordPenalty0= 0.5\nPhrasePenalty0= 0.2\nTranslationModel0= 1\n"
                       "UnknownWordPenalty0= 1\n",
                       tiny, n, type, rt, tiny, weights) > 0);
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    dec_model *m = dtu_load(ini, NULL);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    smt_buf b = {0};
    double score;
    cr_assert_eq(dec_translate(w, "x y", 3, 0, &b, NULL, 0, 0, &score, &e), 0);
    cr_assert_str_eq(b.data, "Y X \n");
    smt_buf_free(&b);
    dec_worker_free(w);
    dec_model_free(m);
    free(tiny), free(text), free(rt), free(ini);
    return score;
}

Test(decoder, reordering_variants)
{
    double base = W_TM * 2 * log(0.5) + W_LM * LN10 * (-0.9) + W_WP * -2 + W_PP * 2 + W_DIST * -3;
    /* backward only: y first (D) uses y's 3rd score, x after y (S) x's 2nd */
    double s = reordered_with("wbe-msd-backward-fe-allff", 3, "0.1 0.1 0.1",
                              "x ||| X ||| 0.5 0.2 0.3\ny ||| Y ||| 0.4 0.4 0.2\n");
    cr_assert_float_eq(s, base + 0.1 * (log(0.2) + log(0.2)), 1e-4);
    /* monotonicity: both steps non-monotone; forward: y's NM score when x follows */
    s = reordered_with("wbe-monotonicity-bidirectional-fe-allff", 4, "0.1 0.2 0.3 0.4",
                       "x ||| X ||| 0.5 0.5 0.6 0.4\ny ||| Y ||| 0.7 0.3 0.8 0.25\n");
    cr_assert_float_eq(s, base + 0.2 * (log(0.3) + log(0.5)) + 0.4 * log(0.25), 1e-4);
}

/* dec_run_options_resolve: a flag wins over the ini, the ini over the default; the ini's
 * [threads] "all" is 0, its [input-file] is resolved against the ini's folder, its [n-best-list]
 * is read on one line or several; a malformed section names ini:line. */
Test(decoder, run_options_resolved_in_the_library)
{
    char *ini = tu_join(tmp, "moses.ini");
    size_t len;
    char *text = tiny_model_in_tmp(&len), *full = NULL;
    cr_assert(asprintf(&full, "%s\n[threads]\nall\n[verbose]\n0\n[input-file]\nin.txt\n"
                              "[n-best-list]\nnb.txt\n3 distinct\n[show-weights]\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    char *in_txt = tu_join(tmp, "in.txt"); /* [input-file] must exist (issue 11: both paths) */
    cr_assert_eq(tu_write_file(in_txt, "a\n", 2), 0);
    free(in_txt);
    dec_model *m = dtu_load(ini, NULL);
    smt_err e;
    dec_run_options given, r;
    cr_assert_eq(dec_run_options_resolve(m, NULL, &r, &e), 0, "%s", e.msg);
    cr_assert(r.resolved);
    cr_assert_eq(r.threads, 0);
    cr_assert_eq(r.verbose, 0);
    cr_assert_eq(r.show_weights, 1);
    cr_assert_eq(r.n_best, 3);
    cr_assert_eq(r.distinct, 1);
    cr_assert_str_eq(r.nbest_path, "nb.txt");
    char *want_in = tu_join(tmp, "in.txt");
    cr_assert_str_eq(r.input, want_in);
    dec_run_options_release(&r);
    /* every flag given: the ini is not consulted for them */
    dec_run_options_default(&given);
    given.threads = 3, given.verbose = 2, given.show_weights = 0, given.input = "-";
    given.n_best = 0;
    cr_assert_eq(dec_run_options_resolve(m, &given, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.threads, 3);
    cr_assert_eq(r.verbose, 2);
    cr_assert_eq(r.show_weights, 0);
    cr_assert_eq(r.n_best, 0);
    cr_assert_null(r.nbest_path);
    cr_assert_str_eq(r.input, "-");
    dec_run_options_release(&r);
    dec_model_free(m);
    /* no section: the defaults */
    cr_assert_eq(tu_write_file(ini, text, strlen(text)), 0);
    m = dtu_load(ini, NULL);
    cr_assert_eq(dec_run_options_resolve(m, NULL, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.threads, 1);
    cr_assert_eq(r.verbose, 1);
    cr_assert_eq(r.show_weights, 0);
    cr_assert_eq(r.n_best, 0);
    cr_assert_null(r.input);
    cr_assert_null(r.nbest_path);
    dec_run_options_release(&r);
    dec_model_free(m);
    /* malformed */
    free(full);
    cr_assert(asprintf(&full, "%s\n[n-best-list]\nnb.txt 3 sometimes\n", text) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    m = dtu_load(ini, NULL);
    cr_assert_eq(dec_run_options_resolve(m, NULL, &r, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "moses.ini:") && strstr(e.msg, "[n-best-list] wants FILE N"), "%s",
              e.msg);
    dec_model_free(m);
    free(full), free(text), free(ini), free(want_in);
}

/* A library caller of dec_run gets the ini's [n-best-list] as the tool does, with the same lines
 * the tool writes. */
Test(decoder, dec_run_reads_the_ini_nbest_list)
{
    char *ini = tu_join(tmp, "moses.ini"), *nb_path = tu_join(tmp, "ini.nbest");
    char *in_path = tu_join(tmp, "in.txt"), *flag_nb = tu_join(tmp, "flag.nbest");
    size_t len;
    char *text = tiny_model_in_tmp(&len), *full = NULL;
    cr_assert(asprintf(&full, "%s\n[n-best-list]\n%s 4\n", text, nb_path) > 0);
    cr_assert_eq(tu_write_file(ini, full, strlen(full)), 0);
    const char *input = "a b\nc\n";
    cr_assert_eq(tu_write_file(in_path, input, strlen(input)), 0);
    dec_model *m = dtu_load(ini, NULL);
    FILE *in = fmemopen((void *)input, strlen(input), "r"), *o = fopen("/dev/null", "w");
    cr_assert(in && o);
    smt_err e;
    cr_assert_eq(dec_run(m, in, o, NULL, NULL, &e), 0, "%s", e.msg);
    fclose(in), fclose(o);
    dec_model_free(m);
    char *lib = tu_read_file(nb_path, &len);
    cr_assert_not_null(lib, "dec_run did not write the ini's n-best list");
    char *bin = tu_bin_path("fastsmt"), *cmd = NULL;
    cr_assert(asprintf(&cmd, "%s -f %s -v 0 -n-best-list %s 4 < %s > /dev/null", bin, ini,
                       flag_nb, in_path) > 0);
    cr_assert_eq(tu_run(cmd, NULL, NULL), 0);
    char *tool = tu_read_file(flag_nb, &len);
    cr_assert_not_null(tool);
    cr_assert_str_eq(lib, tool);
    cr_assert(strncmp(lib, "0 ||| ", 6) == 0, "%s", lib);
    free(lib), free(tool), free(bin), free(cmd), free(full), free(text);
    free(ini), free(nb_path), free(in_path), free(flag_nb);
}

/* The alignment goes to its stream as data, not cut out of the 1-best: the 1-best stays the plain
 * translation, one alignment line per input line (empty for an empty or too long line), and with
 * -print-alignment-info as well the inline points equal the stream's. A target word "|||" in the
 * 1-best does not confuse the split. */
Test(decoder, alignment_stream_from_data)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    size_t long_len = 4 * (DEC_MAX_SENTENCE + 1) + 64;
    char *input = malloc(long_len + 64);
    size_t n = (size_t)sprintf(input, "a b\n\n");
    for (int i = 0; i < DEC_MAX_SENTENCE + 1; i++)
        n += (size_t)sprintf(input + n, "a ");
    n += (size_t)sprintf(input + n, "\n|||\nb a c\n");
    char *plain = NULL, *out = NULL, *al = NULL, *inl = NULL, *al2 = NULL;
    size_t l1 = 0, l2 = 0, l3 = 0, l4 = 0, l5 = 0;
    smt_err e;
    for (int k = 0; k < 3; k++) {
        dec_model *m = dtu_load(ini, NULL);
        FILE *in = fmemopen(input, n, "r");
        FILE *o = open_memstream(k == 0 ? &plain : k == 1 ? &out : &inl, k == 0 ? &l1 : k == 1 ? &l2 : &l4);
        FILE *a = k == 0 ? NULL : open_memstream(k == 1 ? &al : &al2, k == 1 ? &l3 : &l5);
        FILE *warn = fopen("/dev/null", "w");
        dec_run_options ro;
        dec_run_options_default(&ro);
        ro.threads = 2, ro.n_best = 0, ro.alignment = a, ro.warn = warn;
        ro.print_alignment = k == 2;
        cr_assert_eq(dec_run(m, in, o, &ro, NULL, &e), SMT_ERR_LIMIT);
        fclose(in), fclose(o), fclose(warn);
        if (a)
            fclose(a);
        dec_model_free(m);
    }
    cr_assert_str_eq(out, plain, "the 1-best stays plain");
    /* line by line: one alignment line per input line */
    const char *p = al, *q = inl, *r = al2;
    int lines = 0;
    while (*p) {
        const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n'), *re = strchr(r, '\n');
        cr_assert(pe && qe && re);
        cr_assert_eq(pe - p, re - r);
        cr_assert(strncmp(p, r, (size_t)(pe - p)) == 0, "the same points with and without inline");
        if (pe > p) { /* the inline line ends with "||| " + the same points */
            size_t pl = (size_t)(pe - p);
            cr_assert((size_t)(qe - q) > pl + 4);
            cr_assert(strncmp(qe - pl - 4, "||| ", 4) == 0 && strncmp(qe - pl, p, pl) == 0,
                      "%.*s", (int)(qe - q), q);
        }
        if (lines == 1 || lines == 2)
            cr_assert_eq(pe, p, "an empty or refused line has no points");
        p = pe + 1, q = qe + 1, r = re + 1;
        lines++;
    }
    cr_assert_eq(lines, 5);
    free(plain), free(out), free(al), free(inl), free(al2), free(input), free(ini);
}

/* The model holds only the model: two workers of one model show their lines as each is told
 * (segmentation and alignment are run options), and a worker starts with the ini's settings. */
Test(decoder, output_settings_per_worker_not_per_model)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    dec_worker *w1, *w2;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w1, m, &e), 0);
    cr_assert_eq(dec_worker_create(&w2, m, &e), 0);
    dec_run_options o;
    dec_run_options_default(&o);
    o.report_segmentation = o.print_alignment = o.nbest_segmentation = 1;
    cr_assert_eq(dec_worker_set_options(w2, &o, &e), 0, "%s", e.msg);
    smt_buf b1 = {0}, b2 = {0}, nb1 = {0}, nb2 = {0};
    cr_assert_eq(dec_translate(w1, "a b", 3, 0, &b1, &nb1, 2, 0, NULL, &e), 0);
    cr_assert_eq(dec_translate(w2, "a b", 3, 0, &b2, &nb2, 2, 0, NULL, &e), 0);
    cr_assert_str_eq(b1.data, "A B \n");
    cr_assert(strncmp(b2.data, "A |0-0| B |1-1| ||| ", 20) == 0 ||
                  strncmp(b2.data, "A B |0-1| ||| ", 14) == 0, "%s", b2.data);
    cr_assert(strstr(nb2.data, "|0-") && !strstr(nb1.data, "|0-"), "%s", nb2.data);
    /* back to the ini's (none set in it) */
    cr_assert_eq(dec_worker_set_options(w2, NULL, &e), 0);
    b2.len = 0;
    cr_assert_eq(dec_translate(w2, "a b", 3, 0, &b2, NULL, 0, 0, NULL, &e), 0);
    cr_assert_str_eq(b2.data, "A B \n");
    smt_buf_free(&b1), smt_buf_free(&b2), smt_buf_free(&nb1), smt_buf_free(&nb2);
    dec_worker_free(w1), dec_worker_free(w2);
    dec_model_free(m);
    free(ini);
}

/* dec_binarize, the library function behind fastsmt-binarize: the binarized model translates as
 * the text one; the model's own folder (which would replace its moses.ini) is refused by name. */
Test(decoder, dec_binarize_in_the_library)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *dir = tu_join(tmp, "lib-bin");
    char *bin_ini = tu_join(dir, "moses.ini"), *report = NULL;
    size_t rlen = 0;
    FILE *rep = open_memstream(&report, &rlen);
    smt_err e;
    cr_assert_eq(dec_binarize(ini, dir, NULL, rep, &e), 0, "%s", e.msg);
    fclose(rep);
    cr_assert(strstr(report, "phrase-table.ppt"), "%s", report);
    dec_model *mt = dtu_load(ini, NULL), *mb = dtu_load(bin_ini, NULL);
    dec_worker *wt, *wb;
    cr_assert_eq(dec_worker_create(&wt, mt, &e), 0);
    cr_assert_eq(dec_worker_create(&wb, mb, &e), 0);
    smt_buf t = {0}, b = {0};
    cr_assert_eq(dec_translate(wt, "b a c x y q a b", 15, 0, &t, &t, 5, 0, NULL, &e), 0);
    cr_assert_eq(dec_translate(wb, "b a c x y q a b", 15, 0, &b, &b, 5, 0, NULL, &e), 0);
    cr_assert_str_eq(t.data, b.data);
    smt_buf_free(&t), smt_buf_free(&b);
    dec_worker_free(wt), dec_worker_free(wb);
    dec_model_free(mt), dec_model_free(mb);
    /* into the model's own folder: refused, its moses.ini untouched */
    size_t before_len, after_len;
    char *before = tu_read_file(bin_ini, &before_len);
    cr_assert_eq(dec_binarize(bin_ini, dir, NULL, NULL, &e), SMT_ERR_ARG);
    cr_assert(strstr(e.msg, "refusing to overwrite"), "%s", e.msg);
    char *after = tu_read_file(bin_ini, &after_len);
    cr_assert_str_eq(before, after);
    free(before), free(after), free(report), free(ini), free(dir), free(bin_ini);
}

/* --lm probing: the ARPA LM becomes KenLM's probing binary OUTDIR/LM0.probing (a KenLM file, not a
 * .glm), the model translates as the text one (1-best and n-best), and binarizing the new ini again
 * references that binary instead of reading it as an ARPA file. */
Test(decoder, dec_binarize_lm_probing)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini"), *dir = tu_join(tmp, "lib-bin-probing");
    char *dir2 = tu_join(tmp, "lib-bin-probing2"), *bin_ini = tu_join(dir, "moses.ini");
    char *lm = tu_join(dir, "LM0.probing"), *glm = tu_join(dir, "LM0.glm");
    char *bin_ini2 = tu_join(dir2, "moses.ini");
    dec_binarize_options opt = {.lm_probing = 1};
    smt_err e;
    cr_assert_eq(dec_binarize(ini, dir, &opt, NULL, &e), 0, "%s", e.msg);
    struct stat st;
    cr_assert_eq(stat(lm, &st), 0, "no %s", lm);
    cr_assert_neq(stat(glm, &st), 0, "%s written too", glm);
    size_t len;
    char *head = tu_read_file(lm, &len), *text = tu_read_file(bin_ini, &len);
    cr_assert(head && !strncmp(head, "mmap lm http://kheafield.com/code", 33), "not a KenLM binary");
    cr_assert(strstr(text, " path=LM0.probing "), "%s", text);
    dec_model *mt = dtu_load(ini, NULL), *mb = dtu_load(bin_ini, NULL);
    dec_worker *wt, *wb;
    cr_assert_eq(dec_worker_create(&wt, mt, &e), 0);
    cr_assert_eq(dec_worker_create(&wb, mb, &e), 0);
    smt_buf t = {0}, b = {0}, tn = {0}, bn = {0};
    cr_assert_eq(dec_translate(wt, "b a c x y q a b", 15, 0, &t, &tn, 5, 0, NULL, &e), 0);
    cr_assert_eq(dec_translate(wb, "b a c x y q a b", 15, 0, &b, &bn, 5, 0, NULL, &e), 0);
    cr_assert_str_eq(t.data, b.data);
    cr_assert_str_eq(tn.data, bn.data);
    smt_buf_free(&t), smt_buf_free(&b), smt_buf_free(&tn), smt_buf_free(&bn);
    dec_worker_free(wt), dec_worker_free(wb);
    dec_model_free(mt), dec_model_free(mb);
    /* the binarized ini again: its LM is already binary, named by absolute path, not rebuilt */
    cr_assert_eq(dec_binarize(bin_ini, dir2, &opt, NULL, &e), 0, "%s", e.msg);
    char *text2 = tu_read_file(bin_ini2, &len), *real = realpath(lm, NULL), *want = NULL;
    cr_assert(asprintf(&want, " path=%s ", real) > 0);
    cr_assert(strstr(text2, want), "%s", text2);
    char *lm2 = tu_join(dir2, "LM0.probing");
    cr_assert_neq(stat(lm2, &st), 0, "%s rebuilt", lm2);
    free(head), free(text), free(text2), free(real), free(want), free(lm2);
    free(ini), free(dir), free(dir2), free(bin_ini), free(bin_ini2), free(lm), free(glm);
}

/* fastsmt-binarize names the files of [input-file] and [weight-file] by absolute path in the new
 * ini: found beside the old ini, a relative name would no longer be found beside the new one. The
 * new-format and the old-format (converted) ini alike. */
Test(decoder, binarize_keeps_file_sections)
{
    static const char *const inis[] = {"moses.ini", "moses-old.ini"};
    static const char *const files[] = {"lm.arpa", "phrase-table", "reordering-table"};
    for (size_t v = 0; v < 2; v++) {
        char *src = tu_join(tmp, v ? "fs-src-old" : "fs-src"), *out = tu_join(src, "bin");
        cr_assert_eq(mkdir(src, 0777), 0);
        for (size_t k = 0; k < 3; k++) {
            char *from = tu_data_path("decoder/tiny"), *f = tu_join(from, files[k]);
            char *to = tu_join(src, files[k]);
            cr_assert_eq(tu_copy_file(f, to), 0);
            free(from), free(f), free(to);
        }
        char *from = tu_data_path("decoder/tiny"), *f = tu_join(from, inis[v]);
        size_t len;
        char *text = tu_read_file(f, &len), *ini_text = NULL;
        cr_assert_not_null(text);
        cr_assert(asprintf(&ini_text, "%s\n[input-file]\nin.txt\n", text) > 0);
        char *ini = tu_join(src, "moses.ini"), *input = tu_join(src, "in.txt");
        cr_assert_eq(tu_write_file(ini, ini_text, strlen(ini_text)), 0);
        cr_assert_eq(tu_write_file(input, "a b\n", 4), 0);
        smt_err e;
        cr_assert_eq(dec_binarize(ini, out, NULL, NULL, &e), 0, "%s", e.msg);
        char *bin_ini = tu_join(out, "moses.ini"), *real = realpath(input, NULL);
        size_t bl;
        char *bin_text = tu_read_file(bin_ini, &bl), *want = NULL;
        cr_assert(asprintf(&want, "[input-file]\n%s\n", real) > 0);
        cr_assert(strstr(bin_text, want), "%s: %s", inis[v], bin_text);
        dec_model *m = dtu_load(bin_ini, NULL);
        dec_run_options ro;
        cr_assert_eq(dec_run_options_resolve(m, NULL, &ro, &e), 0, "%s", e.msg);
        cr_assert_str_eq(ro.input, real, "%s", inis[v]);
        dec_run_options_release(&ro);
        dec_model_free(m);
        free(src), free(out), free(from), free(f), free(text), free(ini_text), free(ini);
        free(input), free(bin_ini), free(real), free(bin_text), free(want);
    }
}

/* -mark-unknown and its prefix/suffix are a worker's run options too: the worker keeps its own copy
 * of the strings (the caller's may go away), and the scores do not change. */
Test(decoder, mark_unknown_is_a_run_option)
{
    char *ini = tu_data_path("decoder/tiny/moses.ini");
    dec_model *m = dtu_load(ini, NULL);
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, m, &e), 0);
    dec_run_options o;
    dec_run_options_default(&o);
    char *pre = strdup("<"), *suf = strdup(">");
    o.mark_unknown = 1, o.unknown_prefix = pre, o.unknown_suffix = suf;
    cr_assert_eq(dec_worker_set_options(w, &o, &e), 0, "%s", e.msg);
    free(pre), free(suf);
    smt_buf b = {0}, plain = {0};
    double s1, s2;
    cr_assert_eq(dec_translate(w, "a q", 3, 0, &b, NULL, 0, 0, &s1, &e), 0);
    cr_assert_str_eq(b.data, "A <q> \n");
    cr_assert_eq(dec_worker_set_options(w, NULL, &e), 0);
    cr_assert_eq(dec_translate(w, "a q", 3, 0, &plain, NULL, 0, 0, &s2, &e), 0);
    cr_assert_str_eq(plain.data, "A q \n");
    cr_assert_eq(s1, s2);
    smt_buf_free(&b), smt_buf_free(&plain);
    dec_worker_free(w);
    dec_model_free(m);
    free(ini);
}

/* dec_translate_data: the 1-best as data, from which the text outputs are formatted. Rebuilding
 * the -t line and the alignment line from the data gives exactly what dec_translate prints; the
 * phrases cover every source word once; word_off locates every word; the score is the same; the
 * data arrays are reused from call to call, and a refused sentence gives an empty translation. */
Test(decoder, translation_as_data)
{
    static const char *const lines[] = {"b a c x y q a b", "a b", "q", "", "a b c x y z b a"};
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, model, &e), 0);
    dec_run_options o;
    dec_run_options_default(&o);
    o.report_segmentation = o.print_alignment = o.mark_unknown = 1;
    cr_assert_eq(dec_worker_set_options(w, &o, &e), 0, "%s", e.msg);
    dec_translation t = {0};
    for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
        const char *line = lines[i];
        size_t n_src = 0;
        for (const char *p = line; *p; p++)
            n_src += *p != ' ' && (p == line || p[-1] == ' ');
        smt_buf text = {0}, rebuilt = {0};
        double score;
        cr_assert_eq(dec_translate(w, line, strlen(line), 0, &text, NULL, 0, 0, &score, &e), 0);
        cr_assert_eq(dec_translate_data(w, line, strlen(line), &t, &e), 0, "%s", e.msg);
        cr_assert_eq(t.score, score);
        size_t covered = 0, words = 0;
        for (size_t k = 0; k < t.n_phrases; k++) {
            const dec_phrase *p = &t.phrases[k];
            cr_assert(p->src_start <= p->src_end && p->src_end < n_src);
            cr_assert_eq(p->tgt_start, words, "phrases in target order");
            covered += p->src_end - p->src_start + 1;
            words += p->n_tgt;
            for (uint32_t j = p->tgt_start; j < p->tgt_start + p->n_tgt; j++) {
                const char *wd = t.words.data + t.word_off[j];
                size_t wl = t.word_off[j + 1] - t.word_off[j] - 1;
                smt_buf_append(&rebuilt, wd, wl);
                smt_buf_putc(&rebuilt, ' ');
            }
            if (p->n_tgt) /* Moses marks only phrases with words */
                smt_buf_printf(&rebuilt, "|%u-%u| ", p->src_start, p->src_end);
        }
        cr_assert_eq(covered, n_src, "line '%s': every source word once", line);
        cr_assert_eq(words, t.n_words);
        if (n_src) {
            smt_buf_append(&rebuilt, "||| ", 4);
            for (size_t k = 0; k < t.n_align; k++) {
                cr_assert(t.align[2 * k] < n_src && t.align[2 * k + 1] < t.n_words);
                smt_buf_printf(&rebuilt, "%u-%u ", t.align[2 * k], t.align[2 * k + 1]);
            }
        }
        smt_buf_putc(&rebuilt, '\n');
        cr_assert_str_eq(rebuilt.data, text.data, "line '%s'", line);
        cr_assert_eq(strlen(t.words.data), t.words.len);
        smt_buf_free(&text), smt_buf_free(&rebuilt);
    }
    cr_assert(strstr(t.words.data, "UNKz") != NULL, "marked as -mark-unknown says: %s", t.words.data);
    /* a refused sentence: an empty translation, not the previous one */
    char *long_line = malloc(4 * DEC_MAX_SENTENCE + 8);
    size_t ll = 0;
    for (int k = 0; k <= DEC_MAX_SENTENCE; k++)
        long_line[ll++] = 'a', long_line[ll++] = ' ';
    cr_assert_eq(dec_translate_data(w, long_line, ll, &t, &e), SMT_ERR_LIMIT);
    cr_assert(t.n_words == 0 && t.n_phrases == 0 && t.n_align == 0 && t.words.len == 0);
    cr_assert_str_eq(t.words.data, "");
    free(long_line);
    dec_translation_free(&t);
    dec_worker_free(w);
}

/* The n-best line of an entry as decoder.h documents it, formatted here from the data alone. */
static void nbest_line_of(const dec_nbest *l, const dec_nbest_entry *x, uint64_t id, int seg,
                          int align, smt_buf *b)
{
    smt_buf_printf(b, "%llu ||| ", (unsigned long long)id);
    cr_assert_eq(dec_translation_format(&x->t, l->segmentation, b), 0);
    smt_buf_append(b, " |||", 4);
    for (size_t f = 0; f < dec_model_num_features(model); f++) {
        dec_feature_info fi;
        dec_model_feature(model, f, &fi);
        if (!fi.tuneable)
            continue;
        smt_buf_printf(b, " %s=", fi.name);
        for (size_t k = 0; k < fi.n_values; k++)
            smt_buf_printf(b, " %g", x->scores[fi.offset + k]);
    }
    smt_buf_printf(b, " ||| %g", x->total);
    if (seg && x->t.n_phrases) {
        smt_buf_append(b, " |||", 4);
        for (size_t k = 0; k < x->t.n_phrases; k++) {
            const dec_phrase *p = &x->t.phrases[k];
            smt_buf_printf(b, " %u", p->src_start);
            if (p->src_end > p->src_start)
                smt_buf_printf(b, "-%u", p->src_end);
            smt_buf_printf(b, "=%u", p->tgt_start);
            if (p->n_tgt > 1)
                smt_buf_printf(b, "-%u", p->tgt_start + p->n_tgt - 1);
        }
    }
    if (align && x->t.n_phrases) {
        smt_buf_append(b, " ||| ", 5);
        for (size_t k = 0; k < x->t.n_align; k++)
            smt_buf_printf(b, "%u-%u ", x->t.align[2 * k], x->t.align[2 * k + 1]);
    }
    smt_buf_putc(b, '\n');
}

/* dec_translate_nbest: the n-best list as data. Each entry formatted as decoder.h says gives
 * exactly dec_translate's n-best line (plain, and with -t, segmentation, alignment and marked
 * unknown words; distinct or not; an empty line's single entry); the 1-best and score are
 * dec_translate's; the features tile the score vector; a refused line gives no entries, and the
 * list's memory is reused from call to call. */
Test(decoder, nbest_as_data)
{
    static const char *const lines[] = {"b a c x y q a b", "a b", "q", "", "a b c x y z b a"};
    size_t nf = dec_model_num_features(model), next = 0;
    cr_assert_gt(nf, 0);
    for (size_t f = 0; f < nf; f++) {
        dec_feature_info fi;
        dec_model_feature(model, f, &fi);
        cr_assert(fi.name && *fi.name && fi.offset == next, "feature %zu", f);
        next += fi.n_values;
    }
    dec_nbest l = {0};
    for (int opts = 0; opts < 2; opts++) {
        dec_worker *w;
        smt_err e;
        cr_assert_eq(dec_worker_create(&w, model, &e), 0);
        dec_run_options o;
        dec_run_options_default(&o);
        if (opts)
            o.report_segmentation = o.nbest_segmentation = o.nbest_alignment = o.mark_unknown = 1;
        cr_assert_eq(dec_worker_set_options(w, &o, &e), 0, "%s", e.msg);
        for (size_t i = 0; i < sizeof lines / sizeof *lines; i++) {
            for (int distinct = 0; distinct < 2; distinct++) {
                const char *line = lines[i];
                smt_buf best = {0}, nb = {0}, best2 = {0}, rebuilt = {0};
                double score, score2;
                cr_assert_eq(dec_translate(w, line, strlen(line), 7, &best, &nb, 10, distinct,
                                           &score, &e), 0);
                cr_assert_eq(dec_translate_nbest(w, line, strlen(line), 7, &best2, &l, 10, distinct,
                                                 &score2, &e), 0, "%s", e.msg);
                cr_assert_str_eq(best2.data, best.data);
                cr_assert_eq(score2, score);
                cr_assert_eq(l.segmentation, opts);
                cr_assert(l.n >= 1 && l.n <= 10, "line '%s': %zu entries", line, l.n);
                for (size_t k = 0; k < l.n; k++) {
                    cr_assert_eq(l.entries[k].n_scores, next);
                    nbest_line_of(&l, &l.entries[k], 7, opts, opts, &rebuilt);
                }
                cr_assert_str_eq(rebuilt.data, nb.data, "line '%s' options %d distinct %d", line,
                                 opts, distinct);
                if (*line)
                    cr_assert_eq(l.entries[0].t.score, score, "the first entry is the 1-best");
                smt_buf_free(&best), smt_buf_free(&nb), smt_buf_free(&best2);
                smt_buf_free(&rebuilt);
            }
        }
        dec_worker_free(w);
    }
    /* a refused line: no entries (and the 1-best's empty line) */
    dec_worker *w;
    smt_err e;
    cr_assert_eq(dec_worker_create(&w, model, &e), 0);
    char *long_line = malloc(4 * DEC_MAX_SENTENCE + 8);
    size_t ll = 0;
    for (int k = 0; k <= DEC_MAX_SENTENCE; k++)
        long_line[ll++] = 'a', long_line[ll++] = ' ';
    smt_buf best = {0};
    cr_assert_eq(dec_translate_nbest(w, long_line, ll, 0, &best, &l, 10, 1, NULL, &e),
                 SMT_ERR_LIMIT);
    cr_assert(l.n == 0 && best.len == 1 && best.data[0] == '\n');
    cr_assert_eq(dec_translate_nbest(w, "a b", 3, 0, &best, &l, 0, 1, NULL, &e), 0);
    cr_assert_eq(l.n, 0, "n_best 0: no list");
    free(long_line);
    smt_buf_free(&best);
    dec_nbest_free(&l);
    cr_assert(l.entries == NULL && l.n == 0);
    dec_worker_free(w);
}

/* dec_run on text with run options; returns the 1-best text (malloc'ed), the n-best list and the
 * -output-unknowns text in *nbest / *unk when asked. */
static char *run_with(dec_model *m, const char *text, dec_run_options *ro, char **nbest, char **unk)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    char *out = NULL, *nb = NULL, *uk = NULL;
    size_t ol = 0, nl = 0, ul = 0;
    FILE *o = open_memstream(&out, &ol), *n = nbest ? open_memstream(&nb, &nl) : NULL;
    FILE *u = unk ? open_memstream(&uk, &ul) : NULL;
    ro->threads = 2;
    ro->verbose = 0;
    if (n)
        ro->nbest = n;
    if (u)
        ro->unknowns = u;
    smt_err e;
    cr_assert_eq(dec_run(m, in, o, ro, NULL, &e), 0, "%s", e.msg);
    fclose(in), fclose(o);
    if (n)
        fclose(n), *nbest = nb;
    if (u)
        fclose(u), *unk = uk;
    return out;
}

/* Moses's -output-hypo-score, -n-best-factor, -drop-unknown and -output-unknowns (run options,
 * and their ini sections). */
Test(decoder, moses_output_options)
{
    static const char text[] = "a b\na q\n\nq a r7 q\nb a c x y q a b\n";
    dec_run_options ro;
    /* -output-hypo-score: the 1-best's score as %g of a float, a space, then the plain line */
    dec_run_options_default(&ro);
    char *plain = run_with(model, text, &ro, NULL, NULL);
    dec_run_options_default(&ro);
    ro.output_hypo_score = 1;
    char *scored = run_with(model, text, &ro, NULL, NULL);
    const char *p = plain, *q = scored;
    static const char *const lines[] = {"a b", "a q", "", "q a r7 q", "b a c x y q a b"};
    for (size_t i = 0; i < 5; i++) {
        result r = translate(lines[i], 0, 0);
        char want[64];
        snprintf(want, sizeof want, "%g ", (double)(float)r.score);
        cr_assert(strncmp(q, want, strlen(want)) == 0, "line %zu: '%.40s' wants '%s'", i, q, want);
        q += strlen(want);
        const char *pe = strchr(p, '\n'), *qe = strchr(q, '\n');
        cr_assert((size_t)(pe - p) == (size_t)(qe - q) && !memcmp(p, q, (size_t)(pe - p)));
        p = pe + 1, q = qe + 1;
        result_free(&r);
    }
    free(scored);
    /* -output-unknowns: the unknown source words of each line, each followed by a space */
    dec_run_options_default(&ro);
    char *unk = NULL, *o2 = run_with(model, text, &ro, NULL, &unk);
    cr_assert_str_eq(o2, plain);
    cr_assert_str_eq(unk, "\nq \n\nq r7 q \nq \n");
    free(o2), free(unk);
    /* -drop-unknown: q is translated as nothing, r7 (a digit) still passes through; the unknown
     * word penalty stays, the word penalty and the LM lose the word */
    dec_run_options_default(&ro);
    ro.drop_unknown = 1;
    ro.n_best = 1;
    char *nb = NULL, *dropped = run_with(model, "a q\nq a r7 q\n", &ro, &nb, NULL);
    cr_assert_str_eq(dropped, "A \nA r7 \n");
    cr_assert(strstr(nb, "0 ||| A  |||") && strstr(nb, "WordPenalty0= -1 ") &&
                  strstr(nb, "PhrasePenalty0= 2 "), "%s", nb);
    const char *total = strstr(nb, " ||| -1"); /* the unknown word penalty (-100) is kept */
    double t0 = 0;
    cr_assert(total && sscanf(total, " ||| %lf", &t0) == 1 && t0 < -100 && t0 > -110, "%s", nb);
    free(dropped), free(nb);
    /* -n-best-factor: fewer steps give a prefix of the longer list; 0 is unlimited */
    char *lists[3];
    static const int factors[] = {1, 20, 0};
    for (int k = 0; k < 3; k++) {
        dec_run_options_default(&ro);
        ro.n_best = 50, ro.distinct = 1, ro.nbest_factor = factors[k];
        char *o = run_with(model, "b a c x y q a b\n", &ro, &lists[k], NULL);
        free(o);
    }
    cr_assert(strncmp(lists[1], lists[0], strlen(lists[0])) == 0, "f=1 is a prefix of f=20");
    cr_assert(strncmp(lists[2], lists[1], strlen(lists[1])) == 0, "f=20 is a prefix of f=0");
    cr_assert(strlen(lists[0]) < strlen(lists[2]), "the factor bounds the distinct list");
    for (int k = 0; k < 3; k++)
        free(lists[k]);
    free(plain);
}

/* dec_run with -xml-input mode (and brackets) on text; returns the 1-best (malloc'ed) and the
 * run's return code in *rc, the warnings in *warn. */
static char *run_xml(const char *text, const char *mode, const char *brackets, int n_best,
                     char **nbest, int *rc, char **warn)
{
    FILE *in = fmemopen((void *)text, strlen(text), "r");
    char *out = NULL, *nb = NULL, *w = NULL;
    size_t ol = 0, nl = 0, wl = 0;
    FILE *o = open_memstream(&out, &ol), *n = open_memstream(&nb, &nl), *wf = open_memstream(&w, &wl);
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.threads = 2, ro.verbose = 0, ro.xml_input = mode, ro.xml_brackets = brackets;
    ro.n_best = n_best, ro.nbest = n, ro.warn = wf;
    smt_err e;
    *rc = dec_run(model, in, o, &ro, NULL, &e);
    fclose(in), fclose(o), fclose(n), fclose(wf);
    if (nbest)
        *nbest = nb;
    else
        free(nb);
    if (warn)
        *warn = w;
    else
        free(w);
    return out;
}

/* Moses's -xml-input: a tag's translations (and probabilities: ln p / n_scores in each TM score,
 * no reordering scores, no alignment) compete with the table's options (inclusive) or replace them
 * over the tagged words (exclusive); ignore strips the markup, pass-through (the default) keeps it
 * as words. Markup errors fail their line only; <update> is refused by name. */
Test(decoder, xml_input)
{
    static const char text[] = "a <x translation=\"Q R||S\" prob=\"0.9||0.1\">b</x>\n"
                               "<x translation=\"ZZ\">a b</x> c\n";
    int rc;
    char *nb = NULL;
    /* exclusive: b only as Q R or S; "a b" only as ZZ (a word the table lacks: passed through,
     * never marked unknown) */
    char *ex = run_xml(text, "exclusive", NULL, 5, &nb, &rc, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(ex, "A S \nZZ X \n");
    /* the TM score of S is ln 0.1 (one TM score), of A the table's ln 0.5 */
    cr_assert(strstr(nb, "0 ||| A S  ||| ") && strstr(nb, "TranslationModel0= -2.99573 "), "%s", nb);
    cr_assert(strstr(nb, "0 ||| A Q R  ||| ") && strstr(nb, "TranslationModel0= -0.798508 "),
              "%s", nb);
    cr_assert_null(strstr(nb, "0 ||| A B "), "exclusive: no table option over the tagged word");
    free(ex), free(nb);
    /* inclusive: the table's options compete (A B wins line 0) */
    char *inc = run_xml(text, "inclusive", NULL, 20, &nb, &rc, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(inc, "A B \nZZ X \n");
    cr_assert(strstr(nb, "0 ||| A S  ||| ") && strstr(nb, "0 ||| A B  ||| "), "%s", nb);
    free(inc), free(nb);
    /* ignore: the markup is stripped; pass-through: the markup is words, as without the flag */
    char *ig = run_xml(text, "ignore", NULL, 0, NULL, &rc, NULL);
    char *plain = run_xml("a b\na b c\n", "pass-through", NULL, 0, NULL, &rc, NULL);
    cr_assert_str_eq(ig, plain);
    free(ig), free(plain);
    char *pt = run_xml(text, "pass-through", NULL, 0, NULL, &rc, NULL);
    cr_assert(strstr(pt, "<x translation=") != NULL, "%s", pt);
    free(pt);
    /* other brackets; a span attribute; -mark-unknown does not mark an XML option's word */
    char *br = run_xml("a {{x translation=\"ZZ\" span=\"1\"/}} b\n", "exclusive", "{{ }}", 0,
                       NULL, &rc, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(br, "A ZZ \n");
    free(br);
    /* markup errors: the line fails (an empty line and a warning), the others are translated */
    static const char *const bad[] = {"a <x translation=\"Q\">b\n", "a <x translation=\"Q\">b</y>\n",
                                      "a </x> b\n", "a <x translation=\"Q\" b\n",
                                      "a <x translation=\"Q||R\" prob=\"0.5\">b</x>\n",
                                      "a <x translation=\"Q\" prob=\"-1\">b</x>\n",
                                      "a <x translation=\"Q\" span=\"7\"/> b\n"};
    char *good = run_xml("a b\nb a\n", "exclusive", NULL, 0, NULL, &rc, NULL), *want = NULL;
    const char *nl = strchr(good, '\n');
    cr_assert(asprintf(&want, "%.*s\n%s", (int)(nl - good + 1), good, nl + 1) > 0);
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char *t = NULL, *warn = NULL;
        cr_assert(asprintf(&t, "a b\n%sb a\n", bad[k]) > 0);
        char *o = run_xml(t, "exclusive", NULL, 0, NULL, &rc, &warn);
        cr_assert_eq(rc, SMT_ERR_PARSE, "%s", bad[k]);
        cr_assert_str_eq(o, want, "%s", bad[k]);
        cr_assert(strstr(warn, "line 2: xml markup: "), "%s: %s", bad[k], warn);
        free(t), free(o), free(warn);
    }
    free(good), free(want);
    char *warn = NULL, *w = run_xml("a <update name=\"x\"/> b\n", "inclusive", NULL, 0, NULL, &rc,
                                    &warn);
    cr_assert_eq(rc, SMT_ERR_UNSUPPORTED);
    cr_assert(strstr(warn, "<update> is not supported"), "%s", warn);
    free(w), free(warn);
    /* an unknown mode is refused when the options are resolved */
    dec_run_options ro, r;
    dec_run_options_default(&ro);
    ro.xml_input = "strict";
    smt_err e;
    cr_assert_eq(dec_run_options_resolve(model, &ro, &r, &e), SMT_ERR_UNSUPPORTED);
    cr_assert(strstr(e.msg, "-xml-input strict: unknown mode"), "%s", e.msg);
}

/* Moses's -xml-input constraint (ViolatesXmlOptionsConstraint): as inclusive, but a table option
 * over a tagged span must contain one of the tag's translations as consecutive target words.
 * "b" has the table options B (alone) and A B (with "a"); "c" has X and Y X. */
Test(decoder, xml_input_constraint)
{
    static const char text[] = "a <x translation=\"ZZ\">b</x>\n"
                               "a <x translation=\"B\">b</x>\n"
                               "<x translation=\"Y\">c</x>\n";
    int rc;
    char *nb = NULL;
    char *inc = run_xml(text, "inclusive", NULL, 20, &nb, &rc, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(inc, "A B \nA B \nY X \n");
    cr_assert(strstr(nb, "2 ||| X  |||"), "inclusive keeps the table's X: %s", nb);
    free(inc), free(nb);
    char *con = run_xml(text, "constraint", NULL, 20, &nb, &rc, NULL);
    cr_assert_eq(rc, 0);
    /* ZZ: neither B nor A B holds it, both dropped; B: both kept; Y: Y X kept, X dropped */
    cr_assert_str_eq(con, "A ZZ \nA B \nY X \n");
    cr_assert_null(strstr(nb, "0 ||| A B "), "%s", nb);
    cr_assert(strstr(nb, "1 ||| A B  |||") && strstr(nb, "1 ||| B A  |||"), "%s", nb);
    cr_assert(strstr(nb, "2 ||| Y X  |||") && strstr(nb, "2 ||| Y  |||"), "%s", nb);
    cr_assert_null(strstr(nb, "2 ||| X  |||"), "%s", nb);
    free(con), free(nb);
}

/* The source orders (-include-segmentation-in-n-best's field, source=target in target order) of
 * every path of a 3-word line of one-word options ("y x y" or "x , y": 3! = 6 orders without
 * constraints, all within the distortion limit of 6), sorted, one per line. */
static char *orders(const char *line, const char *mode, int punct)
{
    FILE *in = fmemopen((void *)line, strlen(line), "r");
    char *out = NULL, *nb = NULL;
    size_t ol = 0, nl = 0;
    FILE *o = open_memstream(&out, &ol), *n = open_memstream(&nb, &nl);
    dec_run_options ro;
    dec_run_options_default(&ro);
    ro.threads = 1, ro.verbose = 0, ro.xml_input = mode, ro.n_best = 100, ro.nbest = n;
    ro.nbest_segmentation = 1, ro.monotone_at_punct = punct;
    smt_err e;
    int rc = dec_run(model, in, o, &ro, NULL, &e);
    fclose(in), fclose(o), fclose(n);
    cr_assert_eq(rc, 0, "%s", e.msg);
    char *seen[16];
    size_t k = 0;
    for (char *p = nb, *eol; (eol = strchr(p, '\n')); p = eol + 1) {
        *eol = '\0';
        char *f = strrchr(p, '|') + 2, *dup = strdup(f);
        size_t j = 0;
        while (j < k && strcmp(seen[j], dup))
            j++;
        if (j < k || k == 16)
            free(dup);
        else
            seen[k++] = dup;
    }
    for (size_t a = 1; a < k; a++) /* insertion sort */
        for (size_t b = a; b > 0 && strcmp(seen[b - 1], seen[b]) > 0; b--) {
            char *t = seen[b];
            seen[b] = seen[b - 1], seen[b - 1] = t;
        }
    char *r = NULL;
    size_t rl = 0;
    FILE *rf = open_memstream(&r, &rl);
    for (size_t j = 0; j < k; j++)
        fprintf(rf, "%s\n", seen[j]), free(seen[j]);
    fclose(rf);
    free(out), free(nb);
    return r;
}

/* Moses's ReorderingConstraint (walls, zones, local walls, -monotone-at-punctuation), checked
 * against the orders that its Check admits, worked out by hand for 3 one-word phrases:
 * - no constraint: all 6;
 * - <zone> over words 0-1: a phrase outside the zone once it is begun is refused, so (0,2,1) and
 *   (1,2,0) go;
 * - the same zone with a wall after word 0 (a local wall): also no word 1 while word 0 is open,
 *   so (1,0,2) and (2,1,0) go too;
 * - a wall after word 0 (global): nothing past it before word 0: (0,1,2) and (0,2,1) remain;
 * - -monotone-at-punctuation on "x , y": a wall after the comma (none before it: it is word 1),
 *   so (0,1,2) and (1,0,2);
 * - XML walls and zones in ignore mode act too, in pass-through mode the tags are words. */
Test(decoder, reordering_constraints)
{
    static const char all[] = "0=0 1=1 2=2\n0=0 2=1 1=2\n1=0 0=1 2=2\n1=0 2=1 0=2\n"
                              "2=0 0=1 1=2\n2=0 1=1 0=2\n";
    char *o = orders("y x y\n", "inclusive", 0);
    cr_assert_str_eq(o, all);
    free(o);
    o = orders("<zone> y x </zone> y\n", "inclusive", 0);
    cr_assert_str_eq(o, "0=0 1=1 2=2\n1=0 0=1 2=2\n2=0 0=1 1=2\n2=0 1=1 0=2\n");
    free(o);
    o = orders("<zone> y <wall/> x </zone> y\n", "exclusive", 0);
    cr_assert_str_eq(o, "0=0 1=1 2=2\n2=0 0=1 1=2\n");
    free(o);
    o = orders("y <wall/> x y\n", "ignore", 0);
    cr_assert_str_eq(o, "0=0 1=1 2=2\n0=0 2=1 1=2\n");
    free(o);
    o = orders("y x <wall/> y\n", "constraint", 0); /* a wall after word 1 */
    cr_assert_str_eq(o, "0=0 1=1 2=2\n1=0 0=1 2=2\n");
    free(o);
    o = orders("x , y\n", "pass-through", 1);
    cr_assert_str_eq(o, "0=0 1=1 2=2\n1=0 0=1 2=2\n");
    free(o);
    o = orders("x , y\n", "pass-through", 0);
    cr_assert_str_eq(o, all);
    free(o);
    /* a wall tag over words puts a wall after each word from the one before it: after 0 and 1 */
    o = orders("y <wall>x</wall> y\n", "inclusive", 0);
    cr_assert_str_eq(o, "0=0 1=1 2=2\n");
    free(o);
    /* the 1-best follows: "x y" is swapped by the LM (Y X), not across a wall */
    int rc;
    char *best = run_xml("x y\nx <wall/> y\nx <ne entity=\"n\">y</ne>\n", "exclusive", NULL, 0,
                         NULL, &rc, NULL);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(best, "Y X \nX Y \nY X \n");
    free(best);
    /* errors fail the line: an empty zone, a zone past the sentence, <ne> over two words */
    static const char *const bad[] = {"a <zone></zone> b\n", "a <zone span=\"0-5\"/> b\n",
                                      "<ne>a b</ne>\n"};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char *warn = NULL, *out = run_xml(bad[k], "inclusive", NULL, 0, NULL, &rc, &warn);
        cr_assert_eq(rc, SMT_ERR_PARSE, "%s", bad[k]);
        cr_assert_str_eq(out, "\n");
        cr_assert(strstr(warn, "xml markup: "), "%s", warn);
        free(out), free(warn);
    }
}

/* Moses's -feature-overwrite "Name key=value ..." (and the ini's [feature-overwrite]): a feature
 * line's key takes the value before the model loads; "c" has two options, so table-limit=1 gives
 * what -ttable-limit 1 gives, not the default; a feature that is not there, name= and a key that
 * is no key of the feature are errors. */
Test(decoder, feature_overwrite)
{
    char *bin = tu_bin_path("fastsmt"), *ini = tu_data_path("decoder/tiny/moses.ini");
    char *in = tu_join(tmp, "c.txt"), *cmd = NULL, *plain = NULL, *limit = NULL, *over = NULL;
    cr_assert_eq(tu_write_file(in, "c\n", 2), 0);
    static const char *const args[] = {"", "-ttable-limit 1",
                                       "-feature-overwrite 'TranslationModel0 table-limit=1'"};
    char **outs[] = {&plain, &limit, &over};
    for (int k = 0; k < 3; k++) {
        cr_assert(asprintf(&cmd, "%s -f %s -v 0 -n-best-list - 5 %s < %s", bin, ini, args[k], in) > 0);
        cr_assert_eq(tu_run(cmd, outs[k], NULL), 0, "%s", args[k]);
        free(cmd);
    }
    cr_assert_str_eq(over, limit);
    cr_assert_str_neq(over, plain);
    /* the ini's section */
    size_t len;
    char *text = tiny_model_in_tmp(&len), *full = NULL, *ini2 = tu_join(tmp, "moses.ini"), *sec = NULL;
    cr_assert(asprintf(&full, "%s\n[feature-overwrite]\nTranslationModel0 table-limit=1\n", text) > 0);
    cr_assert_eq(tu_write_file(ini2, full, strlen(full)), 0);
    cr_assert(asprintf(&cmd, "%s -f %s -v 0 -n-best-list - 5 < %s", bin, ini2, in) > 0);
    cr_assert_eq(tu_run(cmd, &sec, NULL), 0);
    cr_assert_str_eq(sec, limit);
    free(cmd);
    static const char *const bad[] = {"'Nope0 x=1'", "'TranslationModel0 name=X'",
                                      "'TranslationModel0 table-limit'", "'TranslationModel0'"};
    static const char *const want[] = {"no feature named 'Nope0'", "name cannot be overwritten",
                                       "is not key=value", "has no key=value"};
    for (int k = 0; k < 4; k++) {
        char *err = NULL;
        cr_assert(asprintf(&cmd, "%s -f %s -v 0 -feature-overwrite %s < %s", bin, ini, bad[k], in) > 0);
        cr_assert_eq(tu_run(cmd, NULL, &err), 1, "%s", bad[k]);
        cr_assert(strstr(err, "-feature-overwrite: ") && strstr(err, want[k]), "%s: %s", bad[k], err);
        free(cmd), free(err);
    }
    free(plain), free(limit), free(over), free(sec), free(text), free(full), free(ini2);
    free(bin), free(ini), free(in);
}
