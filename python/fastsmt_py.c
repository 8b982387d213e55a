/* fastsmt_py.c — the helpers every file of the extension shares (fastsmt_py.h). */
#include "fastsmt_py.h"

#include <string.h>

/* ---------------------------------------------------------------- arguments */

/* The bytes of a sentence or word: a str as UTF-8 (cached in the str), bytes as they are. KenLM's
 * module raises TypeError('Cannot convert <type> to string') for anything else. */
int fastsmt_text_of(PyObject *o, const char **s, Py_ssize_t *n)
{
    if (PyUnicode_Check(o)) {
        *s = PyUnicode_AsUTF8AndSize(o, n);
        return *s ? 0 : -1;
    }
    if (PyBytes_Check(o)) {
        char *p;
        if (PyBytes_AsStringAndSize(o, &p, n))
            return -1;
        *s = p;
        return 0;
    }
    PyObject *t = PyObject_Type(o);
    PyErr_Format(PyExc_TypeError, "Cannot convert %S to string", t);
    Py_XDECREF(t);
    return -1;
}

/* Fast-call arguments: up to npos positionals, then keywords among names[0..nnames) (the
 * positional names first). out[i] is the value or NULL when not given. */
int fastsmt_parse_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                       const char *const *names, int nnames, int nrequired, const char *fname,
                       PyObject **out)
{
    for (int i = 0; i < nnames; i++)
        out[i] = NULL;
    if (nargs > nnames) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d arguments (%zd given)", fname, nnames,
                     nargs);
        return -1;
    }
    for (Py_ssize_t i = 0; i < nargs; i++)
        out[i] = args[i];
    Py_ssize_t nkw = kwnames ? PyTuple_Size(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GetItem(kwnames, k);
        int found = -1;
        for (int i = 0; i < nnames && found < 0; i++)
            if (PyUnicode_CompareWithASCIIString(key, names[i]) == 0)
                found = i;
        if (found < 0) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument %R", fname, key);
            return -1;
        }
        if (out[found]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fname,
                         names[found]);
            return -1;
        }
        out[found] = args[nargs + k];
    }
    for (int i = 0; i < nrequired; i++)
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fname, names[i]);
            return -1;
        }
    return 0;
}

/* ---------------------------------------------------------------- results and errors */

PyObject *fastsmt_str(const char *s, size_t n)
{
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, "surrogateescape");
}

void fastsmt_lines_free(fastsmt_lines *l)
{
    Py_XDECREF(l->list);
    PyMem_Free(l->s);
    PyMem_Free(l->n);
    memset(l, 0, sizeof *l);
}

int fastsmt_lines_read(fastsmt_lines *l, PyObject *sentences)
{
    memset(l, 0, sizeof *l);
    if (PyUnicode_Check(sentences) || PyBytes_Check(sentences)) {
        PyErr_SetString(PyExc_TypeError,
                        "expected an iterable of sentences, not one string");
        return -1;
    }
    l->list = PySequence_List(sentences);
    if (!l->list)
        return -1;
    l->count = PyList_Size(l->list);
    size_t c = l->count > 0 ? (size_t)l->count : 1;
    l->s = PyMem_Malloc(c * sizeof *l->s);
    l->n = PyMem_Malloc(c * sizeof *l->n);
    if (!l->s || !l->n) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < l->count; i++) {
        Py_ssize_t n;
        if (fastsmt_text_of(PyList_GetItem(l->list, i), &l->s[i], &n)) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_Format(type ? type : PyExc_TypeError, "sentence %zd: %S", i,
                         value ? value : Py_None);
            Py_XDECREF(type), Py_XDECREF(value), Py_XDECREF(tb);
            return -1;
        }
        l->n[i] = (size_t)n;
    }
    return 0;
}

int fastsmt_threads_arg(PyObject *o, unsigned *threads)
{
    *threads = 1;
    if (!o)
        return 0;
    long t = PyLong_AsLong(o);
    if (t == -1 && PyErr_Occurred())
        return -1;
    if (t < 0 || t > 4096) {
        PyErr_Format(PyExc_ValueError, "threads=%ld: want 0 (all CPUs) to 4096", t);
        return -1;
    }
    *threads = (unsigned)t;
    return 0;
}

void fastsmt_raise(int rc, const char *msg)
{
    PyObject *kind = rc == SMT_ERR_NOMEM                           ? PyExc_MemoryError
                     : rc == SMT_ERR_ARG || rc == SMT_ERR_LIMIT ||
                               rc == SMT_ERR_PARSE                 ? PyExc_ValueError
                     : rc == SMT_ERR_UNSUPPORTED                   ? PyExc_NotImplementedError
                                                                   : PyExc_OSError;
    PyErr_SetString(kind, msg);
}

void fastsmt_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    freefunc tp_free = (freefunc)PyType_GetSlot(tp, Py_tp_free);
    tp_free(self);
    Py_DECREF(tp);
}
