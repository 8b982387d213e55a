#define _POSIX_C_SOURCE 200809L
/* moses.ini reader: the shared tuned ini, default feature names, weights, errors with file:line. */
#include <criterion/criterion.h>
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
    cr_assert(strstr(e.msg, "-weight-overwrite") != NULL, "%s", e.msg);
    dec_ini_free(ini);
}

Test(ini, unknown_sections_are_listed)
{
    dec_ini *ini;
    smt_err e;
    cr_assert_eq(load_text("[s]\n10\n[mark-unknown]\n1\n[xml-input]\nexclusive\n", &ini, &e),
                 0);
    char buf[256];
    cr_assert_eq(dec_ini_unknown(ini, buf, sizeof buf), 2);
    cr_assert_str_eq(buf, "[mark-unknown], [xml-input]");
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
