/* fastsmt_nmt.c — fastsmt.NMT for the extension fastsmt._fastsmt: a transformer NMT model
 * (nmt.h) scoring sentence pairs (nmt_score: forced decoding, ln p(target | source) with </s>) and
 * rescoring a Moses n-best list (nmt_rescore_files, what `nmt rescore` runs). CPU backend. */
#include "fastsmt_types.h"

#include <string.h>

#include "nmt.h"

typedef struct NmtObject {
    PyObject_HEAD
    nmt_model *m;
    nmt_ctx *c;
    PyThread_type_lock lock; /* one call at a time on the context (taken with the GIL released) */
    unsigned threads;
    unsigned busy;           /* calls running; close() refuses while > 0 */
} NmtObject;

static int Nmt_init(PyObject *op, PyObject *args, PyObject *kw)
{
    static char *names[] = {"dir", "threads", NULL};
    PyObject *p, *th = NULL, *fs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", names, &p, &th))
        return -1;
    NmtObject *self = (NmtObject *)op;
    unsigned threads;
    if (fastsmt_threads_arg(th, &threads) || !PyUnicode_FSConverter(p, &fs))
        return -1;
    if (self->m) {
        Py_DECREF(fs);
        PyErr_SetString(PyExc_RuntimeError, "NMT.__init__: already loaded");
        return -1;
    }
    if (!self->lock && !(self->lock = PyThread_allocate_lock())) {
        Py_DECREF(fs);
        PyErr_NoMemory();
        return -1;
    }
    nmt_model *m = NULL;
    nmt_ctx *c = NULL;
    nmt_ctx_options o = {NMT_BACKEND_CPU, 0, threads, 0, 0};
    smt_err e;
    int rc;
    const char *dir = PyBytes_AsString(fs);
    Py_BEGIN_ALLOW_THREADS
    rc = nmt_model_open(&m, dir, &e);
    if (!rc)
        rc = nmt_ctx_create(&c, m, &o, &e);
    Py_END_ALLOW_THREADS
    Py_DECREF(fs);
    if (rc) {
        nmt_model_free(m);
        fastsmt_raise(rc, e.msg);
        return -1;
    }
    self->m = m;
    self->c = c;
    self->threads = threads;
    return 0;
}

static void Nmt_dealloc(PyObject *op)
{
    NmtObject *self = (NmtObject *)op;
    nmt_ctx_free(self->c);
    nmt_model_free(self->m);
    if (self->lock)
        PyThread_free_lock(self->lock);
    fastsmt_dealloc(op);
}

static int nmt_ok(NmtObject *self)
{
    if (!self->m)
        PyErr_SetString(PyExc_ValueError, "the NMT model is closed");
    return self->m != NULL;
}

/* The ids of lines (side 0: source, 1: target); NULL with an exception set. */
static nmt_sentence *tokenize(const nmt_model *m, int side, const fastsmt_lines *l)
{
    size_t c = l->count ? (size_t)l->count : 1;
    nmt_sentence *s = PyMem_Calloc(c, sizeof *s);
    if (!s)
        return (nmt_sentence *)PyErr_NoMemory();
    for (Py_ssize_t i = 0; i < l->count; i++) {
        if (memchr(l->s[i], '\0', l->n[i])) { /* the tokenizer reads up to a NUL: refuse it */
            PyErr_Format(PyExc_ValueError, "%s %zd holds a NUL byte", side ? "target" : "source", i);
            goto fail;
        }
        size_t n = nmt_model_tokenize(m, side, l->s[i], NULL, 0);
        int32_t *ids = PyMem_Malloc((n ? n : 1) * sizeof *ids);
        if (!ids || n > INT32_MAX) {
            PyMem_Free(ids);
            PyErr_NoMemory();
            goto fail;
        }
        nmt_model_tokenize(m, side, l->s[i], ids, n);
        s[i].ids = ids;
        s[i].len = (int)n;
    }
    return s;
fail:
    for (Py_ssize_t i = 0; i < l->count; i++)
        PyMem_Free((void *)s[i].ids);
    PyMem_Free(s);
    return NULL;
}

static void sentences_free(nmt_sentence *s, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; s && i < n; i++)
        PyMem_Free((void *)s[i].ids);
    PyMem_Free(s);
}

/* Runs stmt with the context's lock held and the GIL released. */
#define WITH_CONTEXT(self, stmt)                                                                   \
    do {                                                                                           \
        (self)->busy++;                                                                            \
        Py_BEGIN_ALLOW_THREADS                                                                     \
        PyThread_acquire_lock((self)->lock, WAIT_LOCK);                                            \
        stmt;                                                                                      \
        PyThread_release_lock((self)->lock);                                                       \
        Py_END_ALLOW_THREADS                                                                       \
        (self)->busy--;                                                                            \
    } while (0)

/* score(sources, targets) -> [ln p(target | source) including </s>, ...] */
static PyObject *Nmt_score(PyObject *op, PyObject *args)
{
    NmtObject *self = (NmtObject *)op;
    PyObject *so, *to;
    if (!PyArg_UnpackTuple(args, "score", 2, 2, &so, &to) || !nmt_ok(self))
        return NULL;
    fastsmt_lines src, tgt;
    memset(&tgt, 0, sizeof tgt);
    if (fastsmt_lines_read(&src, so) || fastsmt_lines_read(&tgt, to)) {
        fastsmt_lines_free(&src);
        fastsmt_lines_free(&tgt);
        return NULL;
    }
    PyObject *out = NULL;
    nmt_sentence *s = NULL, *t = NULL;
    float *lp = NULL;
    if (src.count != tgt.count) {
        PyErr_Format(PyExc_ValueError, "%zd sources but %zd targets", src.count, tgt.count);
    } else if ((s = tokenize(self->m, 0, &src)) && (t = tokenize(self->m, 1, &tgt)) &&
               (lp = PyMem_Malloc((src.count ? (size_t)src.count : 1) * sizeof *lp))) {
        smt_err e;
        int rc;
        size_t n = (size_t)src.count;
        WITH_CONTEXT(self, rc = nmt_score(self->c, n, s, t, lp, &e));
        if (rc) {
            fastsmt_raise(rc, e.msg);
        } else if ((out = PyList_New(src.count))) {
            for (Py_ssize_t i = 0; i < src.count; i++) {
                PyObject *x = PyFloat_FromDouble(lp[i]);
                if (!x || PyList_SetItem(out, i, x)) {
                    Py_CLEAR(out);
                    break;
                }
            }
        }
    } else if (!PyErr_Occurred()) {
        PyErr_NoMemory();
    }
    PyMem_Free(lp);
    sentences_free(s, src.count);
    sentences_free(t, tgt.count);
    fastsmt_lines_free(&src);
    fastsmt_lines_free(&tgt);
    return out;
}

/* rescore(source, nbest, weight=0.3, feature="NMT0", length_bonus=0.0, nbest_out=None,
 * best_out=None): `nmt rescore` on files. */
static PyObject *Nmt_rescore(PyObject *op, PyObject *args, PyObject *kw)
{
    static char *names[] = {"source", "nbest", "weight", "feature", "length_bonus", "nbest_out",
                            "best_out", NULL};
    NmtObject *self = (NmtObject *)op;
    PyObject *src = NULL, *nb = NULL, *nbo = NULL, *bo = NULL;
    double weight = 0.3, bonus = 0.0;
    const char *feature = "NMT0";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&O&|dsdO&O&", names, PyUnicode_FSConverter, &src,
                                     PyUnicode_FSConverter, &nb, &weight, &feature, &bonus,
                                     PyUnicode_FSConverter, &nbo, PyUnicode_FSConverter, &bo) ||
        !nmt_ok(self)) {
        Py_XDECREF(src), Py_XDECREF(nb), Py_XDECREF(nbo), Py_XDECREF(bo);
        return NULL;
    }
    smt_err e;
    int rc = nmt_nbest_feature_name_check(feature, &e);
    if (!rc) {
        nmt_rescore_options o = {(float)weight, feature, (float)bonus};
        const char *sp = PyBytes_AsString(src), *np = PyBytes_AsString(nb),
                   *nop = nbo ? PyBytes_AsString(nbo) : NULL, *bop = bo ? PyBytes_AsString(bo) : NULL;
        WITH_CONTEXT(self, rc = nmt_rescore_files(self->c, sp, np, &o, nop, bop, &e));
    }
    Py_XDECREF(src), Py_XDECREF(nb), Py_XDECREF(nbo), Py_XDECREF(bo);
    if (rc) {
        fastsmt_raise(rc, e.msg);
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *Nmt_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    NmtObject *self = (NmtObject *)op;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "cannot close the NMT model: it is in use");
        return NULL;
    }
    nmt_ctx_free(self->c);
    nmt_model_free(self->m);
    self->c = NULL;
    self->m = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Nmt_methods[] = {
    {"score", Nmt_score, METH_VARARGS,
     "score(sources, targets) -> ln p(target | source) of each pair, </s> included (nmt score)"},
    {"rescore", (PyCFunction)(void (*)(void))Nmt_rescore, METH_VARARGS | METH_KEYWORDS,
     "rescore(source, nbest, weight=0.3, feature='NMT0', length_bonus=0.0, nbest_out=None, "
     "best_out=None): nmt rescore on files ('-': standard output)"},
    {"close", Nmt_close, METH_NOARGS, "Frees the model; refused while it is in use."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot Nmt_slots[] = {
    {Py_tp_doc, "NMT(dir, threads=1): a transformer NMT model directory (CPU; threads=0: every "
                "CPU)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, Nmt_init},
    {Py_tp_dealloc, Nmt_dealloc},
    {Py_tp_methods, Nmt_methods},
    {0, NULL}};

static PyType_Spec Nmt_spec = {"fastsmt._fastsmt.NMT", sizeof(NmtObject), 0, Py_TPFLAGS_DEFAULT,
                               Nmt_slots};

int fastsmt_nmt_add_type(PyObject *module)
{
    PyObject *t = PyType_FromSpec(&Nmt_spec);
    int rc = !t || PyModule_AddObjectRef(module, "NMT", t);
    Py_XDECREF(t);
    return rc ? -1 : 0;
}
