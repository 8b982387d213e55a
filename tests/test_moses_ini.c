#define _GNU_SOURCE
/* moses.ini reader: the shared tuned ini, default feature names, weights, errors with file:line. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "moses_ini.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }
TestSuite(ini, .init = setup, .fini = teardown);

static char *write_ini(const char *text)
{
    char *p = tu_join(dir, "moses.ini");
    cr_assert_eq(tu_write_file(p, text, strlen(text)), 0);
    return p;
}

static int load_text(const char *text, dec_ini **ini, smt_err *e)
{
    char *p = write_ini(text);
    int rc = dec_ini_load(ini, p, e);
    free(p);
    return rc;
}

Test(ini, shared_tuned_ini)
{
    char *p = tu_shared_path("models/bible-es-en/moses.ini");
    if (!p)
        cr_skip_test("shared data absent");
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(dec_ini_load(&ini, p, &e), 0, "%s", e.msg);
    cr_assert_eq(ini->n_features, 7);
    const dec_ini_feature *lm = dec_ini_feature_named(ini, "LM0");
    cr_assert_not_null(lm);
    cr_assert_str_eq(lm->type, "KENLM");
    cr_assert_str_eq(dec_ini_feature_arg(lm, "order"), "5");
    char *lm_path = dec_ini_resolve(ini, dec_ini_feature_arg(lm, "path"));
    cr_assert_eq(access(lm_path, R_OK), 0, "%s", lm_path);
    free(lm_path);
    cr_assert_not_null(dec_ini_feature_named(ini, "Distortion0"));
    cr_assert_not_null(dec_ini_feature_named(ini, "UnknownWordPenalty0"));
    const dec_ini_weight *w = dec_ini_weight_named(ini, "LexicalReordering0");
    cr_assert_not_null(w);
    cr_assert_eq(w->n, 6);
    cr_assert_float_eq(w->values[2], 0.126037, 1e-12);
    cr_assert_str_eq(dec_ini_param(ini, "distortion-limit"), "6");
    cr_assert_str_eq(dec_ini_param(ini, "stack"), "100");
    cr_assert_str_eq(dec_ini_param(ini, "cube-pruning-pop-limit"), "400");
    char buf[256];
    cr_assert_eq(dec_ini_unknown(ini, buf, sizeof buf), 0, "%s", buf);
    dec_ini_free(ini);
    free(p);
}

Test(ini, default_names_count_per_type)
{
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(load_text("[feature]\nDistortion\nWordPenalty\nDistortion\n"
                           "KENLM path=a.arpa order=3\n[weight]\nDistortion0= 0.1\n",
                           &ini, &e), 0, "%s", e.msg);
    cr_assert_str_eq(ini->features[0].name, "Distortion0");
    cr_assert_str_eq(ini->features[1].name, "WordPenalty0");
    cr_assert_str_eq(ini->features[2].name, "Distortion1");
    cr_assert_str_eq(ini->features[3].name, "KENLM0");
    dec_ini_free(ini);
}

Test(ini, weight_overwrite)
{
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(load_text("[weight]\nLM0= 0.5\nTM0= 1 2 3\n", &ini, &e), 0, "%s", e.msg);
    cr_assert_eq(dec_ini_overwrite_weights(ini, "TM0= 4 5 6  New0=-1.5 LM0=0.25", &e), 0, "%s",
                 e.msg);
    const dec_ini_weight *tm = dec_ini_weight_named(ini, "TM0");
    cr_assert_eq(tm->n, 3);
    cr_assert_float_eq(tm->values[2], 6.0, 0);
    cr_assert_float_eq(dec_ini_weight_named(ini, "LM0")->values[0], 0.25, 0);
    cr_assert_float_eq(dec_ini_weight_named(ini, "New0")->values[0], -1.5, 0);
    cr_assert_eq(dec_ini_overwrite_weights(ini, "LM0= x", &e), SMT_ERR_PARSE);
    cr_assert(strncmp(e.msg, "-weight-overwrite: ", 19) == 0, "%s", e.msg);
    cr_assert_eq(dec_ini_overwrite_weights(ini, "LM0= 1e400", &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "not a finite number"), "%s", e.msg);
    dec_ini_free(ini);
}

/* Sections are classified: implemented ones load silently, those without effect on the output
 * warn, those that would change it (or are no Moses parameter) are errors naming file:line. */
Test(ini, sections_classified)
{
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(load_text("[s]\n10\n[mark-unknown]\n[description]\nes-en\n", &ini, &e), 0);
    char buf[256];
    cr_assert_eq(dec_ini_unknown(ini, buf, sizeof buf), 1);
    cr_assert_str_eq(buf, "[description]");
    char *w = NULL;
    size_t wl = 0;
    FILE *wf = open_memstream(&w, &wl);
    cr_assert_eq(dec_ini_check_sections(ini, wf, &e), 0, "%s", e.msg);
    fclose(wf);
    cr_assert(strstr(w, "moses.ini:4: [description] is ignored"), "%s", w);
    free(w);
    dec_ini_free(ini);
    static const char *const bad[] = {"[s]\n10\n[stack-diversity]\n2\n",
                                      "[s]\n10\n[stack-size]\n10\n"};
    static const char *const want[] = {"moses.ini:3: [stack-diversity] is not implemented",
                                       "moses.ini:3: [stack-size] is not a Moses parameter"};
    for (int k = 0; k < 2; k++) {
        cr_assert_eq(load_text(bad[k], &ini, &e), 0); /* the reader keeps every section */
        cr_assert_neq(dec_ini_check_sections(ini, NULL, &e), 0);
        cr_assert(strstr(e.msg, want[k]), "%s", e.msg);
        dec_ini_free(ini);
    }
}

/* Typed section values: strict numbers and booleans naming the value's own line. */
Test(ini, typed_values)
{
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(load_text("[s]\n\n  150\n[beam-threshold]\n0.25\n[t]\n[u]\nno\n[v]\n7x\n",
                           &ini, &e),
                 0, "%s", e.msg);
    long long v = 0;
    cr_assert_eq(dec_ini_param_ll(ini, "stack", 1, 1000, &v, &e), 1, "%s", e.msg);
    cr_assert_eq(v, 150);
    cr_assert_eq(dec_ini_param_line(ini, "s", 0), 3);
    cr_assert_eq(dec_ini_param_ll(ini, "s", 1, 100, &v, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "moses.ini:3: [s]: 150 is out of range [1, 100]"), "%s", e.msg);
    cr_assert_eq(dec_ini_param_ll(ini, "absent", 1, 100, &v, &e), 0);
    cr_assert_eq(dec_ini_param_ll(ini, "v", 0, 100, &v, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "moses.ini:10: [v]: '7x' is not an integer"), "%s", e.msg);
    double d = 0;
    cr_assert_eq(dec_ini_param_double(ini, "beam-threshold", 0, 1, &d, &e), 1);
    cr_assert_float_eq(d, 0.25, 0);
    int b = -1;
    cr_assert_eq(dec_ini_param_bool(ini, "t", &b, &e), 1);
    cr_assert_eq(b, 1);
    cr_assert_eq(dec_ini_param_bool(ini, "u", &b, &e), 1);
    cr_assert_eq(b, 0);
    cr_assert_eq(dec_ini_param_bool(ini, "v", &b, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "moses.ini:10: [v] '7x' is not a boolean"), "%s", e.msg);
    dec_ini_free(ini);
}

static void expect_error(const char *text, const char *fragment)
{
    dec_ini *ini = NULL;
    smt_err e;
    cr_assert_eq(load_text(text, &ini, &e), SMT_ERR_PARSE, "accepted: %s", text);
    cr_assert_null(ini);
    cr_assert(strstr(e.msg, fragment) != NULL, "'%s' lacks '%s'", e.msg, fragment);
    cr_assert(strstr(e.msg, "moses.ini:") != NULL, "%s", e.msg);
}

Test(ini, errors_name_file_and_line)
{
    expect_error("stray\n", "moses.ini:1:");
    expect_error("[feature]\nKENLM path\n", "moses.ini:2: feature argument 'path'");
    expect_error("[weight]\nLM0 0.5\n", "moses.ini:2:");
    expect_error("[weight]\nLM0= abc\n", "not a number");
    expect_error("[weight]\nLM0= 1\nLM0= 2\n", "moses.ini:3: weights for 'LM0' already given");
    expect_error("[weight]\nLM0=\n", "no weights");
    expect_error("[feature\n", "malformed section header");
    expect_error("[s]\n1\n[stack]\n2\n", "already given");
    expect_error("[feature]\nDistortion name=D\nWordPenalty name=D\n", "feature name 'D'");
    expect_error("[weight]\nLM0= 0.5x\n", "moses.ini:2: weight '0.5x' of 'LM0' is not a number");
    expect_error("[weight]\nLM0= 1 inf\n", "moses.ini:2: weight 'inf'");
    expect_error("[feature]\nKENLM path=a order=2 path=b\n", "moses.ini:2: key 'path' given twice");
}

Test(ini, missing_file)
{
    dec_ini *ini;
    smt_err e;
    char *p = tu_join(dir, "absent.ini");
    cr_assert_eq(dec_ini_load(&ini, p, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "absent.ini") != NULL);
    free(p);
}
