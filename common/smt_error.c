/* Error codes' texts and the error messages of smt_error.h. */
#include "smt_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *smt_strerror(int code)
{
    switch (code) {
    case SMT_OK: return "success";
    case SMT_ERR_IO: return "input/output error";
    case SMT_ERR_NOMEM: return "out of memory";
    case SMT_ERR_FORMAT: return "not a fastsmt file of the expected kind";
    case SMT_ERR_VERSION: return "unsupported file version";
    case SMT_ERR_CORRUPT: return "file is truncated or corrupted";
    case SMT_ERR_INCOMPLETE: return "file was left by an unfinished build";
    case SMT_ERR_PARSE: return "malformed input";
    case SMT_ERR_ARG: return "invalid argument";
    case SMT_ERR_NOTFOUND: return "not found";
    case SMT_ERR_UNSUPPORTED: return "not supported by this build or device";
    case SMT_ERR_CUDA: return "CUDA error";
    case SMT_ERR_LIMIT: return "input exceeds a documented limit";
    default: return "unknown error";
    }
}

static void set_v(smt_err *e, int code, const char *fmt, va_list ap)
{
    e->code = code;
    vsnprintf(e->msg, sizeof e->msg, fmt, ap);
}

int smt_err_set(smt_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        set_v(e, code, fmt, ap);
        va_end(ap);
    }
    return code;
}

int smt_err_errno(smt_err *e, int code, int errno_value, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        set_v(e, code, fmt, ap);
        va_end(ap);
        size_t n = strlen(e->msg);
        snprintf(e->msg + n, sizeof e->msg - n, ": %s", strerror(errno_value));
    }
    return code;
}

void smt_err_clear(smt_err *e)
{
    if (e) {
        e->code = 0;
        e->msg[0] = '\0';
    }
}

const char *smt_err_text(const smt_err *e, int code)
{
    if (e && e->msg[0])
        return e->msg;
    return smt_strerror(code);
}
