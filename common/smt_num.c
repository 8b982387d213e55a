/* Strict number parsing: see smt_num.h. */
#include "smt_num.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NUM_MAX 128 /* longer tokens are not numbers we accept (keeps the copy on the stack) */

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int smt_parse_ll(const char *s, size_t len, long long lo, long long hi, long long *out)
{
    size_t i = 0;
    int neg = 0;
    if (len == 0)
        return SMT_ERR_PARSE;
    if (s[0] == '+' || s[0] == '-') {
        neg = s[0] == '-';
        i = 1;
    }
    if (i == len)
        return SMT_ERR_PARSE;
    /* accumulate as a negative number so that LLONG_MIN is representable */
    long long v = 0;
    int overflow = 0;
    for (; i < len; i++) {
        if (!is_digit(s[i]))
            return SMT_ERR_PARSE;
        int d = s[i] - '0';
        if (v < (-__LONG_LONG_MAX__ - 1 + d) / 10)
            overflow = 1;
        else
            v = v * 10 - d;
    }
    if (overflow)
        return SMT_ERR_LIMIT;
    if (!neg) {
        if (v < -__LONG_LONG_MAX__)
            return SMT_ERR_LIMIT;
        v = -v;
    }
    if (v < lo || v > hi)
        return SMT_ERR_LIMIT;
    *out = v;
    return 0;
}

/* 1: s[0..len) is a case-insensitive match of the lowercase word w. */
static int word_eq(const char *s, size_t len, const char *w)
{
    size_t n = strlen(w);
    if (len != n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[i])
            return 0;
    }
    return 1;
}

/* Checks the decimal syntax; returns 1 for a plain number, 2 for an infinity (sign in *neg), 0
 * otherwise. */
static int real_syntax(const char *s, size_t len, int *neg)
{
    size_t i = 0;
    *neg = 0;
    if (len && (s[0] == '+' || s[0] == '-')) {
        *neg = s[0] == '-';
        i = 1;
    }
    if (word_eq(s + i, len - i, "inf") || word_eq(s + i, len - i, "infinity"))
        return 2;
    size_t digits = 0;
    while (i < len && is_digit(s[i]))
        i++, digits++;
    if (i < len && s[i] == '.') {
        i++;
        while (i < len && is_digit(s[i]))
            i++, digits++;
    }
    if (digits == 0)
        return 0;
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t ed = 0;
        while (i < len && is_digit(s[i]))
            i++, ed++;
        if (ed == 0)
            return 0;
    }
    return i == len ? 1 : 0;
}

static int parse_real(const char *s, size_t len, unsigned flags, int as_float, double *dv, float *fv)
{
    int neg;
    int kind = real_syntax(s, len, &neg);
    if (kind == 0)
        return SMT_ERR_PARSE;
    if (kind == 2) {
        if (!(flags & SMT_NUM_ALLOW_INF))
            return SMT_ERR_PARSE;
        *dv = neg ? -HUGE_VAL : HUGE_VAL;
        *fv = neg ? -HUGE_VALF : HUGE_VALF;
        return 0;
    }
    if (len >= NUM_MAX)
        return SMT_ERR_PARSE;
    char buf[NUM_MAX];
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    if (as_float) {
        *fv = strtof(buf, &end);
        *dv = *fv;
    } else {
        *dv = strtod(buf, &end);
        *fv = (float)*dv;
    }
    if (end != buf + len)
        return SMT_ERR_PARSE;
    if (errno == ERANGE && isinf(as_float ? *fv : *dv))
        return SMT_ERR_LIMIT; /* overflow; an underflow to 0 or a subnormal is the right value */
    return 0;
}

/* The fast path for the short decimals model files are made of: [+-]digits[.digits][e[+-]digits]
 * with at most 19 significant digits, fully consumed. Returns 1 with the value m * 10^exp10 (sign
 * in *neg), or 0 when the token needs the general path (which also judges its syntax). */
static int scan_decimal(const char *s, size_t len, int *neg, uint64_t *m, int *exp10)
{
    const char *p = s, *e = s + len;
    uint64_t v = 0;
    int ex = 0, digits = 0, sig = 0;
    *neg = 0;
    if (p < e && (*p == '-' || *p == '+')) {
        *neg = *p == '-';
        p++;
    }
    for (int frac = 0;; frac = 1) {
        while (p < e && is_digit(*p)) {
            if (v || *p != '0')
                sig++;
            if (sig > 19)
                return 0;
            v = v * 10u + (unsigned)(*p - '0');
            ex -= frac;
            digits++;
            p++;
        }
        if (frac || p == e || *p != '.')
            break;
        p++;
    }
    if (!digits)
        return 0;
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, x = 0, ed = 0;
        if (p < e && (*p == '-' || *p == '+')) {
            eneg = *p == '-';
            p++;
        }
        while (p < e && is_digit(*p)) {
            if (x < 100000)
                x = x * 10 + (*p - '0');
            ed++;
            p++;
        }
        if (!ed)
            return 0;
        ex += eneg ? -x : x;
    }
    if (p != e)
        return 0;
    *m = v;
    *exp10 = ex;
    return 1;
}

static const double pow10_tab[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                     1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
                                     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

int smt_parse_double(const char *s, size_t len, double lo, double hi, unsigned flags, double *out)
{
    double d;
    float f;
    int neg, ex;
    uint64_t m;
    /* Clinger's fast path: m < 2^53 and 10^|ex| <= 10^22 are exact doubles, so one IEEE operation
     * gives the correctly rounded result, as strtod does. */
    if (scan_decimal(s, len, &neg, &m, &ex) && m <= (UINT64_C(1) << 53) && ex >= -22 && ex <= 22) {
        d = (double)m;
        d = ex < 0 ? d / pow10_tab[-ex] : d * pow10_tab[ex];
        if (neg)
            d = -d;
    } else {
        int rc = parse_real(s, len, flags, 0, &d, &f);
        if (rc)
            return rc;
    }
    if (!(d >= lo && d <= hi))
        return SMT_ERR_LIMIT;
    *out = d;
    return 0;
}

/* *f = d rounded to float, when that is the float nearest the exact value d was rounded from:
 * 1, or 0 (the caller's general path then decides). d is a normal float's magnitude here, so every
 * midpoint between two floats is a double and rounding to double keeps the exact value's side of
 * each; only a d landing on a midpoint (the low 29 of its 52 fraction bits 1000...0) may have
 * come from either side. */
static int float_of_double(double d, float *f)
{
    if (!(d >= FLT_MIN && d <= FLT_MAX))
        return 0;
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    if ((b & ((UINT64_C(1) << 29) - 1)) == (UINT64_C(1) << 28))
        return 0;
    *f = (float)d;
    return 1;
}

int smt_parse_float(const char *s, size_t len, float lo, float hi, unsigned flags, float *out)
{
    double d;
    float f;
    int neg, ex;
    uint64_t m;
    /* m <= 2^24 and 10^|ex| <= 10^10 are exact floats; a double operation on two floats rounded
     * again to float is the correctly rounded float (53 >= 2*24+2 bits; Figueroa, "When is double
     * rounding innocuous?", 1995), which is what strtof gives. */
    int fast = scan_decimal(s, len, &neg, &m, &ex);
    if (fast && m <= (UINT64_C(1) << 24) && ex >= -10 && ex <= 10) {
        d = (double)m;
        f = (float)(ex < 0 ? d / pow10_tab[-ex] : d * pow10_tab[ex]);
        if (neg)
            f = -f;
    } else if (fast && m <= (UINT64_C(1) << 53) && ex >= -22 && ex <= 22 &&
               float_of_double(ex < 0 ? (double)m / pow10_tab[-ex] : (double)m * pow10_tab[ex],
                               &f)) {
        /* longer mantissas (8 digits: lmplz's output): the correctly rounded double (Clinger),
         * rounded to float where that is the correctly rounded float */
        if (neg)
            f = -f;
    } else {
        int rc = parse_real(s, len, flags, 1, &d, &f);
        if (rc)
            return rc;
    }
    if (!(f >= lo && f <= hi))
        return SMT_ERR_LIMIT;
    *out = f;
    return 0;
}

int smt_parse_ll_arg(const char *what, const char *s, long long lo, long long hi, long long *out,
                     smt_err *err)
{
    if (!s)
        return smt_err_set(err, SMT_ERR_ARG, "%s: a value is missing", what);
    int rc = smt_parse_ll(s, strlen(s), lo, hi, out);
    if (rc == SMT_ERR_PARSE)
        return smt_err_set(err, SMT_ERR_ARG, "%s: '%.64s' is not an integer", what, s);
    if (rc == SMT_ERR_LIMIT)
        return smt_err_set(err, SMT_ERR_ARG, "%s: %.64s is out of range [%lld, %lld]", what, s, lo,
                           hi);
    return 0;
}

int smt_parse_int_arg(const char *what, const char *s, int lo, int hi, int *out, smt_err *err)
{
    long long v;
    int rc = smt_parse_ll_arg(what, s, lo, hi, &v, err);
    if (rc == 0)
        *out = (int)v;
    return rc;
}

int smt_parse_double_arg(const char *what, const char *s, double lo, double hi, double *out,
                         smt_err *err)
{
    if (!s)
        return smt_err_set(err, SMT_ERR_ARG, "%s: a value is missing", what);
    int rc = smt_parse_double(s, strlen(s), lo, hi, 0, out);
    if (rc == SMT_ERR_PARSE)
        return smt_err_set(err, SMT_ERR_ARG, "%s: '%.64s' is not a number", what, s);
    if (rc == SMT_ERR_LIMIT)
        return smt_err_set(err, SMT_ERR_ARG, "%s: %.64s is out of range [%g, %g]", what, s, lo, hi);
    return 0;
}
