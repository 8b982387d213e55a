/* fastsmt_py.h — the helpers every file of the extension shares (private to python/), defined in
 * fastsmt_py.c, which depends on no other file of the extension. */
#ifndef FASTSMT_PY_H
#define FASTSMT_PY_H

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "smt_error.h"

/* The bytes of a str (UTF-8) or bytes object; TypeError('Cannot convert <type> to string'). */
int fastsmt_text_of(PyObject *o, const char **s, Py_ssize_t *n);
/* Fast-call arguments by position or name (out[i] NULL when not given); -1 with TypeError. */
int fastsmt_parse_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       const char *const *names, int nnames, int nrequired, const char *fname,
                       PyObject **out);
/* A thread count 0..4096 (default 1 when o is NULL); -1 with ValueError/TypeError. */
int fastsmt_threads_arg(PyObject *o, unsigned *threads);
/* PyUnicode from UTF-8 bytes, undecodable bytes kept as surrogates (nothing lost). */
PyObject *fastsmt_str(const char *s, size_t n);
/* The sentences of an iterable of str/bytes: a new list holding them, and their bytes. */
typedef struct fastsmt_lines {
    PyObject *list;
    const char **s;
    size_t *n;
    Py_ssize_t count;
} fastsmt_lines;
int fastsmt_lines_read(fastsmt_lines *l, PyObject *iterable);
void fastsmt_lines_free(fastsmt_lines *l);
/* An error of the C libraries (SMT_ERR_*) as the Python exception of its kind: MemoryError,
 * ValueError (a bad argument, a limit, a parse error), NotImplementedError, else OSError. */
void fastsmt_raise(int rc, const char *msg);
/* tp_dealloc of a heap type whose objects own nothing else. */
void fastsmt_dealloc(PyObject *self);

#endif
