/* dec_testutil.h — helpers shared by the decoder's Criterion tests (include after
 * <criterion/criterion.h> and decoder.h). */
#ifndef DEC_TESTUTIL_H
#define DEC_TESTUTIL_H

#include <stdio.h>

/* Loads ini with opt (NULL: the defaults); a failed load fails the test with its message. */
static inline dec_model *dtu_load(const char *ini, const dec_options *opt)
{
    smt_err e;
    dec_model *m = NULL;
    int rc = dec_model_load(&m, ini, opt, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return m;
}

/* dtu_load with the default options, the warnings written into *warnings (malloc'ed). */
static inline dec_model *dtu_load_warned(const char *ini, char **warnings)
{
    size_t len = 0;
    *warnings = NULL;
    FILE *w = open_memstream(warnings, &len);
    cr_assert_not_null(w);
    dec_options opt;
    dec_options_default(&opt);
    opt.warn = w;
    dec_model *m = dtu_load(ini, &opt);
    cr_assert_eq(fclose(w), 0);
    return m;
}

#endif
