/* smt_error.h — error codes and per-call error messages shared by every fastsmt component.
 *
 * Convention (LMDB style): functions return 0 on success or a negative SMT_ERR_* code, and fill an
 * smt_err the caller owns with a message that says what went wrong and where (file:line, offset,
 * CUDA statement). An smt_err may be NULL when the caller does not want the detail.
 * Thread-safety: all functions are reentrant; an smt_err must not be shared between threads. */
#ifndef SMT_ERROR_H
#define SMT_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum {
    SMT_OK = 0,
    SMT_ERR_IO = -30001,          /* a system call failed (open, read, write, mmap) */
    SMT_ERR_NOMEM = -30002,       /* allocation failed */
    SMT_ERR_FORMAT = -30003,      /* not a fastsmt file, or a file of another kind */
    SMT_ERR_VERSION = -30004,     /* a fastsmt file of an unsupported version */
    SMT_ERR_CORRUPT = -30005,     /* a checksum, bound or size check failed (truncated or damaged) */
    SMT_ERR_INCOMPLETE = -30006,  /* the file was left by a build that did not finish */
    SMT_ERR_PARSE = -30007,       /* malformed text input; the message names file:line */
    SMT_ERR_ARG = -30008,         /* an invalid argument (programmer or user error) */
    SMT_ERR_NOTFOUND = -30009,    /* a lookup found nothing (not always an error) */
    SMT_ERR_UNSUPPORTED = -30010, /* a feature this build or device does not have (e.g. no CUDA) */
    SMT_ERR_CUDA = -30011,        /* a CUDA call failed; the message names the statement */
    SMT_ERR_LIMIT = -30012        /* an input exceeds a documented limit */
};

#define SMT_ERR_MSG_MAX 512

typedef struct smt_err {
    int code;
    char msg[SMT_ERR_MSG_MAX];
} smt_err;

/* A static string describing an error code (never NULL). */
const char *smt_strerror(int code);

/* Records code and a printf-style message in e (when e is not NULL); returns code, so that
 * `return smt_err_set(e, SMT_ERR_PARSE, "%s:%lu: ...", ...)` reads naturally. */
int smt_err_set(smt_err *e, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Like smt_err_set, with ": <strerror(errno_value)>" appended. */
int smt_err_errno(smt_err *e, int code, int errno_value, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Clears e (code 0, empty message). */
void smt_err_clear(smt_err *e);

/* The message of e, or smt_strerror(code) when e carries none. */
const char *smt_err_text(const smt_err *e, int code);

#ifdef __cplusplus
}
#endif
#endif
