/* fastsmt_py.h — what the extension's C files share (private to python/). */
#ifndef FASTSMT_PY_H
#define FASTSMT_PY_H

#define Py_LIMITED_API 0x030A0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

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

/* fastsmt_decoder.c: adds PhraseTable and Decoder to the module. */
int fastsmt_decoder_add_types(PyObject *module);
/* fastsmt_nmt.c: adds NMT to the module. */
int fastsmt_nmt_add_type(PyObject *module);

#endif
