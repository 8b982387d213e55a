/* dec_testutil.h — helpers shared by the decoder's Criterion tests (include after
 * <criterion/criterion.h> and decoder.h). */
#ifndef DEC_TESTUTIL_H
#define DEC_TESTUTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

/* Loads ini with opt and expects the error code rc, no model, and every fragment (the NULL-terminated
 * arguments after rc) in the message. */
static inline void dtu_expect_load_error(const char *ini, const dec_options *opt, int rc, ...)
{
    dec_model *m = NULL;
    smt_err e;
    smt_err_clear(&e);
    int got = dec_model_load(&m, ini, opt, &e);
    cr_assert_eq(got, rc, "rc %d (want %d): %s", got, rc, e.msg);
    cr_assert_null(m);
    va_list ap;
    va_start(ap, rc);
    for (const char *f; (f = va_arg(ap, const char *));)
        cr_assert(strstr(e.msg, f) != NULL, "'%s' lacks '%s'", e.msg, f);
    va_end(ap);
}

#endif
