/* smt_num.h — strict number parsing, the one implementation every parser, ini reader and command
 * line uses.
 *
 * "Strict" means: the whole token is the number (no leading blanks, no trailing characters), the
 * syntax is plain decimal (no hex, no "nan"; "inf"/"-inf" only when asked for), and the value is
 * range-checked. atoi/atof/strtol without an end check are not used anywhere in fastsmt.
 *
 * Return values: 0 on success; SMT_ERR_PARSE when the token is not a number of that kind;
 * SMT_ERR_LIMIT when it is one but lies outside [lo, hi]. *out is written only on success.
 * The *_arg variants also fill err with "<what>: '<token>' is not an integer" or
 * "<what>: <token> is out of range [lo, hi]", where `what` names the place (a flag such as
 * "-threads", or "moses.ini:12: [distortion-limit]").
 * Thread-safety: all functions are reentrant. */
#ifndef SMT_NUM_H
#define SMT_NUM_H

#include <stddef.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SMT_NUM_ALLOW_INF = 1u << 0 /* accept "inf", "-inf", "+inf" (case-insensitive), "infinity" */
};

/* An integer token s[0..len) in [lo, hi]: optional sign, then decimal digits only. */
int smt_parse_ll(const char *s, size_t len, long long lo, long long hi, long long *out);

/* A real number s[0..len) in [lo, hi]: [+-]digits[.digits][(e|E)[+-]digits] (".5" and "5." too).
 * NaN is never accepted; infinities only with SMT_NUM_ALLOW_INF (and then only if in [lo, hi]). A
 * finite token whose value overflows a double is out of range (SMT_ERR_LIMIT). */
int smt_parse_double(const char *s, size_t len, double lo, double hi, unsigned flags, double *out);

/* As smt_parse_double, rounded to float (correctly: one rounding from the decimal text); a finite
 * token that overflows a float is SMT_ERR_LIMIT. */
int smt_parse_float(const char *s, size_t len, float lo, float hi, unsigned flags, float *out);

/* NUL-terminated variants with a message: for flags and configuration values. */
int smt_parse_ll_arg(const char *what, const char *s, long long lo, long long hi, long long *out,
                     smt_err *err);
int smt_parse_int_arg(const char *what, const char *s, int lo, int hi, int *out, smt_err *err);
int smt_parse_double_arg(const char *what, const char *s, double lo, double hi, double *out,
                         smt_err *err);

#ifdef __cplusplus
}
#endif
#endif
