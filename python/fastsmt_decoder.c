/* fastsmt_decoder.c — fastsmt.PhraseTable (probingpt tables) and fastsmt.Decoder (the phrase-based
 * decoder of a moses.ini) for the extension fastsmt._fastsmt. They wrap probingpt.h and decoder.h:
 * lookups give the table's targets as Python data, translations are the fastsmt tool's lines
 * (dec_translate, the same formatter), dec_translate_data's words, phrases and alignment, or
 * dec_translate_nbest's n-best entries. */
#include "fastsmt_types.h"

#include <string.h>

#include "decoder.h"
#include "probingpt.h"
#include "smt_buf.h"
#include "smt_threads.h"
#include "smt_words.h"

static int path_arg(PyObject *o, PyObject **bytes)
{
    if (!PyUnicode_Check(o) && !PyBytes_Check(o) && !PyObject_HasAttrString(o, "__fspath__")) {
        PyObject *t = PyObject_Type(o);
        PyErr_Format(PyExc_TypeError, "Cannot convert %S to string", t);
        Py_XDECREF(t);
        return -1;
    }
    return PyUnicode_FSConverter(o, bytes) ? 0 : -1;
}

/* ---------------------------------------------------------------- PhraseTable */

typedef struct PtObject {
    PyObject_HEAD
    ppt_table *t;
} PtObject;

static int Pt_init(PyObject *op, PyObject *args, PyObject *kw)
{
    static char *names[] = {"path", "verify", NULL};
    PyObject *p, *fs = NULL;
    int verify = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p", names, &p, &verify) || path_arg(p, &fs))
        return -1;
    PtObject *self = (PtObject *)op;
    if (self->t) {
        Py_DECREF(fs);
        PyErr_SetString(PyExc_RuntimeError, "PhraseTable.__init__: already open");
        return -1;
    }
    ppt_table *t = NULL;
    smt_err e;
    int rc;
    const char *path = PyBytes_AsString(fs);
    Py_BEGIN_ALLOW_THREADS
    rc = ppt_open(&t, path, verify ? SMT_OPEN_VERIFY : 0, &e);
    Py_END_ALLOW_THREADS
    Py_DECREF(fs);
    if (rc) {
        PyErr_Format(rc == SMT_ERR_NOMEM ? PyExc_MemoryError : PyExc_OSError,
                     "Cannot read phrase table '%S' (%s)", p, e.msg);
        return -1;
    }
    self->t = t;
    return 0;
}

static void Pt_dealloc(PyObject *op)
{
    ppt_close(((PtObject *)op)->t);
    fastsmt_dealloc(op);
}

static const ppt_table *pt_of(PyObject *op)
{
    const ppt_table *t = ((PtObject *)op)->t;
    if (!t)
        PyErr_SetString(PyExc_ValueError, "the phrase table is closed");
    return t;
}

static PyObject *floats(const float *v, uint32_t n)
{
    PyObject *l = PyList_New(v ? n : 0);
    for (uint32_t i = 0; l && v && i < n; i++) {
        PyObject *x = PyFloat_FromDouble(v[i]);
        if (!x || PyList_SetItem(l, i, x)) {
            Py_DECREF(l);
            return NULL;
        }
    }
    return l;
}

static PyObject *pairs(const void *v, size_t n, int u8)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        unsigned long a = u8 ? ((const uint8_t *)v)[2 * i] : ((const uint32_t *)v)[2 * i];
        unsigned long b = u8 ? ((const uint8_t *)v)[2 * i + 1] : ((const uint32_t *)v)[2 * i + 1];
        PyObject *x = Py_BuildValue("(kk)", a, b);
        if (!x || PyList_SetItem(l, (Py_ssize_t)i, x)) {
            Py_DECREF(l);
            return NULL;
        }
    }
    return l;
}

/* lookup(phrase) -> [{"target", "scores", "reordering", "alignment", "counts"}, ...] in the
 * table's order; [] when the table has no such source. */
static PyObject *Pt_lookup(PyObject *op, PyObject *phrase)
{
    const char *s;
    Py_ssize_t n;
    const ppt_table *t = pt_of(op);
    if (!t || fastsmt_text_of(phrase, &s, &n))
        return NULL;
    ppt_targets it;
    int rc = ppt_lookup(t, s, (size_t)n, &it);
    PyObject *out = PyList_New(0);
    if (!out || rc == SMT_ERR_NOTFOUND)
        return out;
    if (rc) {
        Py_DECREF(out);
        fastsmt_raise(rc, "the phrase table's group of this source is damaged");
        return NULL;
    }
    const smt_vocab *tv = ppt_tgt_vocab(t);
    uint32_t nr = ppt_num_reordering_scores(t);
    ppt_target x;
    smt_buf words = {0};
    while (ppt_targets_next(&it, &x)) {
        words.len = 0;
        for (uint32_t i = 0; i < x.n_words; i++) {
            size_t wl;
            const char *w = smt_vocab_word(tv, x.words[i], &wl);
            if ((i && smt_buf_append(&words, " ", 1)) || smt_buf_append(&words, w, wl)) {
                free(words.data);
                Py_DECREF(out);
                return PyErr_NoMemory();
            }
        }
        PyObject *d = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N}", "target",
                                    fastsmt_str(words.len ? words.data : "", words.len), "scores",
                                    floats(x.scores, ppt_num_scores(t)), "reordering",
                                    x.reordering ? floats(x.reordering, nr) : Py_NewRef(Py_None),
                                    "alignment", pairs(x.align, x.n_align, 1), "counts",
                                    floats(x.counts, x.n_counts));
        if (!d || PyList_Append(out, d)) {
            Py_XDECREF(d);
            free(words.data);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(d);
    }
    free(words.data);
    if (it.error) {
        Py_DECREF(out);
        fastsmt_raise(it.error, "the phrase table's group of this source is damaged");
        return NULL;
    }
    return out;
}

static PyObject *Pt_num_scores(PyObject *op, void *c)
{
    (void)c;
    const ppt_table *t = pt_of(op);
    return t ? PyLong_FromUnsignedLong(ppt_num_scores(t)) : NULL;
}

static PyObject *Pt_num_reordering(PyObject *op, void *c)
{
    (void)c;
    const ppt_table *t = pt_of(op);
    return t ? PyLong_FromUnsignedLong(ppt_num_reordering_scores(t)) : NULL;
}

static PyObject *Pt_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    ppt_close(((PtObject *)op)->t);
    ((PtObject *)op)->t = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef Pt_methods[] = {
    {"lookup", Pt_lookup, METH_O,
     "lookup(phrase) -> the targets of a source phrase (words separated by spaces or tabs): a "
     "list of dicts with target, scores, reordering (None without a reordering table), alignment "
     "[(source, target), ...] and counts; [] when the table has no such source"},
    {"close", Pt_close, METH_NOARGS, "Unmaps the table."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Pt_getset[] = {
    {"num_scores", Pt_num_scores, NULL, "phrase-table scores per target", NULL},
    {"num_reordering_scores", Pt_num_reordering, NULL, "reordering scores per target", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Pt_slots[] = {
    {Py_tp_doc, "PhraseTable(path, verify=False): a probingpt table (probingpt build)."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, Pt_init},
    {Py_tp_dealloc, Pt_dealloc},
    {Py_tp_methods, Pt_methods},
    {Py_tp_getset, Pt_getset},
    {0, NULL}};

static PyType_Spec Pt_spec = {"fastsmt._fastsmt.PhraseTable", sizeof(PtObject), 0,
                              Py_TPFLAGS_DEFAULT, Pt_slots};

/* ---------------------------------------------------------------- Decoder */

typedef struct DecObject {
    PyObject_HEAD
    dec_model *m;
    dec_worker **idle; /* workers not in use (taken and given back under the GIL) */
    size_t n_idle, cap_idle;
    unsigned threads;
    unsigned busy; /* calls running with the GIL released; close() refuses while > 0 */
} DecObject;

static int Dec_init(PyObject *op, PyObject *args, PyObject *kw)
{
    static char *names[] = {"ini", "threads", "model_cache", NULL};
    PyObject *p, *fs = NULL, *th = NULL, *mc = Py_None, *mcs = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OO", names, &p, &th, &mc) || path_arg(p, &fs))
        return -1;
    DecObject *self = (DecObject *)op;
    unsigned threads;
    if (fastsmt_threads_arg(th, &threads) ||
        (mc != Py_None && mc != Py_False && path_arg(mc, &mcs))) {
        Py_DECREF(fs);
        return -1;
    }
    if (self->m) {
        Py_DECREF(fs);
        PyErr_SetString(PyExc_RuntimeError, "Decoder.__init__: already loaded");
        return -1;
    }
    dec_options opt;
    dec_options_default(&opt);
    /* model_cache: None keeps text models binarized where the fastsmt tool keeps them, False or
     * "off" keeps none, else the folder named */
    const char *mcp = mcs ? PyBytes_AsString(mcs) : NULL;
    char *cache = mc == Py_None ? dec_model_cache_dir(getenv("FASTSMT_CACHE"),
                                                      getenv("XDG_CACHE_HOME"), getenv("HOME"))
                  : mcp && strcmp(mcp, "off") ? strdup(mcp)
                                              : NULL;
    Py_XDECREF(mcs);
    opt.model_cache = cache;
    dec_model *m = NULL;
    smt_err e;
    int rc;
    const char *path = PyBytes_AsString(fs);
    Py_BEGIN_ALLOW_THREADS
    rc = dec_model_load(&m, path, &opt, &e);
    Py_END_ALLOW_THREADS
    free(cache);
    Py_DECREF(fs);
    if (rc) {
        fastsmt_raise(rc == SMT_ERR_IO ? SMT_ERR_IO : rc, e.msg);
        return -1;
    }
    self->m = m;
    self->threads = threads ? threads : smt_cpu_count();
    return 0;
}

static void dec_free_workers(DecObject *self)
{
    for (size_t i = 0; i < self->n_idle; i++)
        dec_worker_free(self->idle[i]);
    PyMem_Free(self->idle);
    self->idle = NULL;
    self->n_idle = self->cap_idle = 0;
}

static void Dec_dealloc(PyObject *op)
{
    DecObject *self = (DecObject *)op;
    dec_free_workers(self);
    dec_model_free(self->m);
    fastsmt_dealloc(op);
}

static dec_model *dec_of(DecObject *self)
{
    if (!self->m)
        PyErr_SetString(PyExc_ValueError, "the decoder is closed");
    return self->m;
}

/* An idle worker, or a new one (under the GIL). */
static dec_worker *worker_take(DecObject *self)
{
    if (self->n_idle)
        return self->idle[--self->n_idle];
    dec_worker *w = NULL;
    smt_err e;
    int rc = dec_worker_create(&w, self->m, &e);
    if (rc) {
        fastsmt_raise(rc, e.msg);
        return NULL;
    }
    return w;
}

static void worker_give(DecObject *self, dec_worker *w)
{
    if (self->n_idle == self->cap_idle) {
        size_t c = self->cap_idle ? 2 * self->cap_idle : 4;
        dec_worker **p = PyMem_Realloc(self->idle, c * sizeof *p);
        if (!p) {
            dec_worker_free(w);
            return;
        }
        self->idle = p;
        self->cap_idle = c;
    }
    self->idle[self->n_idle++] = w;
}

/* The tool's line without its newline. */
static PyObject *best_line(const smt_buf *b)
{
    size_t n = b->len;
    if (n && b->data[n - 1] == '\n')
        n--;
    return fastsmt_str(n ? b->data : "", n);
}

static PyObject *Dec_translate(PyObject *op, PyObject *line)
{
    DecObject *self = (DecObject *)op;
    const char *s;
    Py_ssize_t n;
    if (!dec_of(self) || fastsmt_text_of(line, &s, &n))
        return NULL;
    dec_worker *w = worker_take(self);
    if (!w)
        return NULL;
    smt_buf best = {0};
    smt_err e;
    int rc;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    rc = dec_translate(w, s, (size_t)n, 0, &best, NULL, 0, 0, NULL, &e);
    Py_END_ALLOW_THREADS
    self->busy--;
    worker_give(self, w);
    PyObject *r = rc ? NULL : best_line(&best);
    if (rc)
        fastsmt_raise(rc, e.msg);
    free(best.data);
    return r;
}

static PyObject *Dec_translate_data(PyObject *op, PyObject *line)
{
    DecObject *self = (DecObject *)op;
    const char *s;
    Py_ssize_t n;
    if (!dec_of(self) || fastsmt_text_of(line, &s, &n))
        return NULL;
    dec_worker *w = worker_take(self);
    if (!w)
        return NULL;
    dec_translation t;
    memset(&t, 0, sizeof t);
    smt_err e;
    int rc;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    rc = dec_translate_data(w, s, (size_t)n, &t, &e);
    Py_END_ALLOW_THREADS
    self->busy--;
    worker_give(self, w);
    if (rc) {
        dec_translation_free(&t);
        fastsmt_raise(rc, e.msg);
        return NULL;
    }
    PyObject *words = PyList_New((Py_ssize_t)t.n_words);
    for (size_t i = 0; words && i < t.n_words; i++) {
        size_t a = t.word_off[i], b = t.word_off[i + 1] - 1;
        PyObject *x = fastsmt_str(t.words.data + a, b - a);
        if (!x || PyList_SetItem(words, (Py_ssize_t)i, x))
            Py_CLEAR(words);
    }
    PyObject *phrases = PyList_New((Py_ssize_t)t.n_phrases);
    for (size_t i = 0; phrases && i < t.n_phrases; i++) {
        const dec_phrase *p = &t.phrases[i];
        PyObject *x = Py_BuildValue("(kkkk)", (unsigned long)p->src_start,
                                    (unsigned long)p->src_end, (unsigned long)p->tgt_start,
                                    (unsigned long)p->n_tgt);
        if (!x || PyList_SetItem(phrases, (Py_ssize_t)i, x))
            Py_CLEAR(phrases);
    }
    PyObject *r = words && phrases ? Py_BuildValue("{s:N,s:N,s:N,s:d}", "words", words, "phrases",
                                                   phrases, "alignment",
                                                   pairs(t.align, t.n_align, 0), "score", t.score)
                                   : NULL;
    if (!r) {
        Py_XDECREF(words);
        Py_XDECREF(phrases);
    }
    dec_translation_free(&t);
    return r;
}

/* A value as the n-best list prints it (%g: six significant digits), so that an entry equals the
 * line of a list file read back. */
static double printed(double v)
{
    char text[32];
    snprintf(text, sizeof text, "%g", v);
    return strtod(text, NULL);
}

/* One n-best entry as {"words", "features": {name: [values]}, "total"}: the words as the line
 * shows them (blanks at either end trimmed), each tuneable feature's values and the total as the
 * line prints them. */
static PyObject *nbest_entry(const dec_model *m, const dec_nbest *l, const dec_nbest_entry *e,
                             smt_buf *text)
{
    smt_buf_clear(text);
    if (dec_translation_format(&e->t, l->segmentation, text))
        return PyErr_NoMemory();
    const char *ws = text->data ? text->data : "", *we = ws + text->len;
    smt_trim(&ws, &we, SMT_WS_BLANK);
    PyObject *feats = PyDict_New();
    size_t nf = dec_model_num_features(m);
    for (size_t f = 0; feats && f < nf; f++) {
        dec_feature_info fi;
        dec_model_feature(m, f, &fi);
        if (!fi.tuneable)
            continue;
        PyObject *name = fastsmt_str(fi.name, strlen(fi.name));
        PyObject *vals = PyList_New((Py_ssize_t)fi.n_values);
        for (size_t k = 0; vals && k < fi.n_values; k++) {
            PyObject *x = PyFloat_FromDouble(printed((float)e->scores[fi.offset + k]));
            if (!x || PyList_SetItem(vals, (Py_ssize_t)k, x))
                Py_CLEAR(vals);
        }
        if (!name || !vals || PyDict_SetItem(feats, name, vals))
            Py_CLEAR(feats);
        Py_XDECREF(name);
        Py_XDECREF(vals);
    }
    if (!feats)
        return NULL;
    return Py_BuildValue("{s:N,s:N,s:d}", "words", fastsmt_str(ws, (size_t)(we - ws)), "features",
                         feats, "total", printed((float)e->total));
}

typedef struct dec_batch {
    dec_worker **workers;
    const fastsmt_lines *l;
    smt_buf *best;
    dec_nbest *nbest;
    double *score;
    int *rc;
    smt_err *err;
    size_t n_best;
    int distinct;
} dec_batch;

static void dec_task(void *ctx, size_t i, unsigned worker)
{
    dec_batch *b = ctx;
    b->rc[i] = dec_translate_nbest(b->workers[worker], b->l->s[i], b->l->n[i], i, &b->best[i],
                                   &b->nbest[i], b->n_best, b->distinct, &b->score[i], &b->err[i]);
}

/* translate_batch(lines, nbest=0, distinct=True) -> [{"translation", "score", "nbest"}, ...]:
 * the lines decoded over the decoder's threads with the GIL released. */
static PyObject *Dec_translate_batch(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    static const char *const names[] = {"lines", "nbest", "distinct"};
    DecObject *self = (DecObject *)op;
    PyObject *a[3];
    if (fastsmt_parse_args(args, nargs, kwnames, names, 3, 1, "translate_batch", a) ||
        !dec_of(self))
        return NULL;
    long nb = 0;
    if (a[1]) {
        nb = PyLong_AsLong(a[1]);
        if (nb == -1 && PyErr_Occurred())
            return NULL;
        if (nb < 0 || nb > DEC_MAX_NBEST)
            return PyErr_Format(PyExc_ValueError, "nbest=%ld: want 0 .. %d", nb, DEC_MAX_NBEST);
    }
    int distinct = a[2] ? PyObject_IsTrue(a[2]) : 1;
    if (distinct < 0)
        return NULL;
    fastsmt_lines l;
    if (fastsmt_lines_read(&l, a[0])) {
        fastsmt_lines_free(&l);
        return NULL;
    }
    size_t n = (size_t)l.count, c = n ? n : 1;
    smt_pool *pool = NULL;
    smt_err pe;
    int prc = smt_pool_create(&pool, self->threads, &pe);
    unsigned nw = prc ? 0 : smt_pool_size(pool);
    dec_batch b = {PyMem_Calloc(nw ? nw : 1, sizeof(dec_worker *)), &l,
                   PyMem_Calloc(c, sizeof(smt_buf)), PyMem_Calloc(c, sizeof(dec_nbest)),
                   PyMem_Calloc(c, sizeof(double)), PyMem_Calloc(c, sizeof(int)),
                   PyMem_Calloc(c, sizeof(smt_err)), (size_t)nb, distinct};
    PyObject *out = NULL;
    unsigned got = 0;
    if (prc) {
        fastsmt_raise(prc, pe.msg);
    } else if (!b.workers || !b.best || !b.nbest || !b.score || !b.rc || !b.err) {
        PyErr_NoMemory();
    } else {
        for (; got < nw; got++)
            if (!(b.workers[got] = worker_take(self)))
                break;
    }
    if (!PyErr_Occurred()) {
        self->busy++;
        Py_BEGIN_ALLOW_THREADS
        smt_pool_run(pool, n, dec_task, &b);
        Py_END_ALLOW_THREADS
        self->busy--;
        for (size_t i = 0; i < n; i++)
            if (b.rc[i]) {
                PyErr_Format(PyExc_ValueError, "line %zu: %s", i, b.err[i].msg);
                if (b.rc[i] == SMT_ERR_NOMEM)
                    PyErr_SetString(PyExc_MemoryError, b.err[i].msg);
                break;
            }
    }
    if (!PyErr_Occurred())
        out = PyList_New((Py_ssize_t)n);
    smt_buf text = {0};
    for (size_t i = 0; out && i < n; i++) {
        const dec_nbest *l = &b.nbest[i];
        PyObject *entries = PyList_New((Py_ssize_t)l->n);
        for (size_t k = 0; entries && k < l->n; k++) {
            PyObject *x = nbest_entry(self->m, l, &l->entries[k], &text);
            if (!x || PyList_SetItem(entries, (Py_ssize_t)k, x))
                Py_CLEAR(entries);
        }
        PyObject *d = entries ? Py_BuildValue("{s:N,s:d,s:N}", "translation", best_line(&b.best[i]),
                                              "score", b.score[i], "nbest", entries)
                              : NULL;
        if (!d || PyList_SetItem(out, (Py_ssize_t)i, d))
            Py_CLEAR(out);
    }
    smt_buf_free(&text);
    for (unsigned i = 0; b.workers && i < got; i++)
        worker_give(self, b.workers[i]);
    for (size_t i = 0; b.best && b.nbest && i < n; i++)
        free(b.best[i].data), dec_nbest_free(&b.nbest[i]);
    PyMem_Free(b.workers), PyMem_Free(b.best), PyMem_Free(b.nbest), PyMem_Free(b.score);
    PyMem_Free(b.rc), PyMem_Free(b.err);
    smt_pool_destroy(pool);
    fastsmt_lines_free(&l);
    return out;
}

static PyObject *Dec_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    DecObject *self = (DecObject *)op;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cannot close the decoder: it is translating in another thread");
        return NULL;
    }
    dec_free_workers(self);
    dec_model_free(self->m);
    self->m = NULL;
    Py_RETURN_NONE;
}

static PyObject *Dec_threads(PyObject *op, void *c)
{
    (void)c;
    return PyLong_FromUnsignedLong(((DecObject *)op)->threads);
}

static PyMethodDef Dec_methods[] = {
    {"translate", Dec_translate, METH_O,
     "translate(line) -> the 1-best line as the fastsmt tool prints it (without the newline)"},
    {"translate_data", Dec_translate_data, METH_O,
     "translate_data(line) -> {words, phrases [(src_start, src_end, tgt_start, n_tgt)], "
     "alignment [(source, target)], score}"},
    {"translate_batch", (PyCFunction)(void (*)(void))Dec_translate_batch,
     METH_FASTCALL | METH_KEYWORDS,
     "translate_batch(lines, nbest=0, distinct=True) -> [{translation, score, nbest: [{words, "
     "features {name: [values]}, total}]}] over the decoder's threads, GIL released"},
    {"close", Dec_close, METH_NOARGS, "Frees the model; refused while a translation runs."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Dec_getset[] = {
    {"threads", Dec_threads, NULL, "threads of translate_batch", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Dec_slots[] = {
    {Py_tp_doc, "Decoder(ini, threads=1): the phrase-based decoder of a moses.ini (threads=0: "
                "every CPU), the fastsmt tool's output."},
    {Py_tp_new, PyType_GenericNew},
    {Py_tp_init, Dec_init},
    {Py_tp_dealloc, Dec_dealloc},
    {Py_tp_methods, Dec_methods},
    {Py_tp_getset, Dec_getset},
    {0, NULL}};

static PyType_Spec Dec_spec = {"fastsmt._fastsmt.Decoder", sizeof(DecObject), 0,
                               Py_TPFLAGS_DEFAULT, Dec_slots};

int fastsmt_decoder_add_types(PyObject *module)
{
    PyObject *pt = PyType_FromSpec(&Pt_spec), *dec = PyType_FromSpec(&Dec_spec);
    int rc = !pt || !dec || PyModule_AddObjectRef(module, "PhraseTable", pt) ||
             PyModule_AddObjectRef(module, "Decoder", dec);
    Py_XDECREF(pt);
    Py_XDECREF(dec);
    return rc ? -1 : 0;
}
