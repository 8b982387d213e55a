/* fastsmt_module.c — the CPython extension fastsmt._fastsmt (stable ABI, Python >= 3.10): glm
 * language models with the API of KenLM's Python module (fastsmt/kenlm.py re-exports it), plus the
 * batch calls KenLM's module lacks. It wraps glm's public API; no scoring logic lives here.
 *
 * Types: Model (a glm model: score, perplexity, full_scores, the State calls, score_batch,
 * perplexity_batch, close), State (a glm_state: ordered and hashed as KenLM orders and hashes its
 * State's words), FullScoreReturn (log_prob, ngram_length, oov).
 * Words are split at ASCII white space and looked up whole; a str is scored as its UTF-8 bytes, as
 * KenLM's module does. A NUL byte ends what KenLM's module reads (its C strings): the sentence of
 * score and perplexity, else each word (kenlm_word, score_nul_text). */
#include "fastsmt_types.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "glm.h"
#include "smt_hash.h"
#include "smt_words.h"

typedef struct module_state {
    PyObject *model_type, *state_type, *fsr_type;
} module_state;

static struct PyModuleDef module_def;

static module_state *state_of_module(PyObject *module)
{
    return (module_state *)PyModule_GetState(module);
}

/* ---------------------------------------------------------------- text arguments */

/* A truth value argument (default when not given). */
static int flag_arg(PyObject *o, int def)
{
    return o ? PyObject_IsTrue(o) : def;
}

/* ---------------------------------------------------------------- State */

typedef struct StateObject {
    PyObject_HEAD
    glm_state st;
} StateObject;

static PyObject *State_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    if ((args && PyTuple_Size(args) > 0) || (kw && PyDict_Size(kw) > 0)) {
        PyErr_SetString(PyExc_TypeError, "State() takes no arguments");
        return NULL;
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    StateObject *s = (StateObject *)alloc(type, 0);
    if (s)
        glm_state_null(&s->st);
    return (PyObject *)s;
}

/* KenLM's State::Compare: the shorter state first, then the words' bytes. */
static int state_compare(const glm_state *a, const glm_state *b)
{
    if (a->length != b->length)
        return a->length < b->length ? -1 : 1;
    return memcmp(a->words, b->words, a->length * sizeof a->words[0]);
}

static PyObject *State_richcompare(PyObject *a, PyObject *b, int op)
{
    if (Py_TYPE(a) != Py_TYPE(b) && !PyObject_TypeCheck(b, Py_TYPE(a)))
        Py_RETURN_NOTIMPLEMENTED;
    int r = state_compare(&((StateObject *)a)->st, &((StateObject *)b)->st);
    int v;
    switch (op) {
    case Py_LT: v = r < 0; break;
    case Py_LE: v = r <= 0; break;
    case Py_EQ: v = r == 0; break;
    case Py_NE: v = r != 0; break;
    case Py_GT: v = r > 0; break;
    default: v = r >= 0; break;
    }
    return PyBool_FromLong(v);
}

static Py_hash_t State_hash(PyObject *self)
{
    Py_hash_t h = (Py_hash_t)glm_state_hash(&((StateObject *)self)->st);
    return h == -1 ? -2 : h;
}

static PyObject *State_copy(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyTypeObject *tp = Py_TYPE(self);
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    StateObject *s = (StateObject *)alloc(tp, 0);
    if (s)
        s->st = ((StateObject *)self)->st;
    return (PyObject *)s;
}

/* __deepcopy__(memo=None): KenLM's module takes no memo (so copy.deepcopy fails there); both work */
static PyObject *State_deepcopy(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    if (nargs > 1) {
        PyErr_Format(PyExc_TypeError, "__deepcopy__() takes at most 1 argument (%zd given)", nargs);
        return NULL;
    }
    return State_copy(self, NULL);
}

static PyObject *State_get_length(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((StateObject *)self)->st.length);
}

static PyObject *State_repr(PyObject *self)
{
    const glm_state *s = &((StateObject *)self)->st;
    PyObject *ids = PyList_New(s->length);
    if (!ids)
        return NULL;
    for (unsigned i = 0; i < s->length; i++) {
        PyObject *v = PyLong_FromUnsignedLong(s->words[i]);
        if (!v || PyList_SetItem(ids, i, v)) {
            Py_DECREF(ids);
            return NULL;
        }
    }
    PyObject *r = PyUnicode_FromFormat("State(words=%R)", ids);
    Py_DECREF(ids);
    return r;
}

static PyMethodDef State_methods[] = {
    {"__copy__", State_copy, METH_NOARGS, "A copy of the state."},
    {"__deepcopy__", (PyCFunction)(void (*)(void))State_deepcopy, METH_FASTCALL,
     "A copy of the state."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef State_getset[] = {
    {"length", State_get_length, NULL, "number of context words the state keeps", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot State_slots[] = {
    {Py_tp_doc, "The context after some words (KenLM's State): comparable, hashable, copyable. "
                "State() is the empty (null) context."},
    {Py_tp_new, State_new},
    {Py_tp_dealloc, fastsmt_dealloc},
    {Py_tp_richcompare, State_richcompare},
    {Py_tp_hash, State_hash},
    {Py_tp_repr, State_repr},
    {Py_tp_methods, State_methods},
    {Py_tp_getset, State_getset},
    {0, NULL}};

static PyType_Spec State_spec = {"fastsmt._fastsmt.State", sizeof(StateObject), 0,
                                 Py_TPFLAGS_DEFAULT, State_slots};

/* ---------------------------------------------------------------- FullScoreReturn */

typedef struct FsrObject {
    PyObject_HEAD
    float log_prob;
    int ngram_length;
    int oov;
} FsrObject;

static PyObject *fsr_make(PyTypeObject *tp, float log_prob, int ngram_length, int oov)
{
    allocfunc alloc = (allocfunc)PyType_GetSlot(tp, Py_tp_alloc);
    FsrObject *r = (FsrObject *)alloc(tp, 0);
    if (r) {
        r->log_prob = log_prob;
        r->ngram_length = ngram_length;
        r->oov = oov;
    }
    return (PyObject *)r;
}

static PyObject *Fsr_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *names[] = {"log_prob", "ngram_length", "oov", NULL};
    double lp;
    int n, oov;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "dip", names, &lp, &n, &oov))
        return NULL;
    return fsr_make(type, (float)lp, n, oov);
}

static PyObject *Fsr_log_prob(PyObject *self, void *c)
{
    (void)c;
    return PyFloat_FromDouble(((FsrObject *)self)->log_prob);
}
static PyObject *Fsr_ngram_length(PyObject *self, void *c)
{
    (void)c;
    return PyLong_FromLong(((FsrObject *)self)->ngram_length);
}
static PyObject *Fsr_oov(PyObject *self, void *c)
{
    (void)c;
    return PyBool_FromLong(((FsrObject *)self)->oov);
}

/* KenLM's repr: FullScoreReturn(-1.5, 2, False) */
static PyObject *Fsr_repr(PyObject *self)
{
    FsrObject *r = (FsrObject *)self;
    PyObject *lp = PyFloat_FromDouble(r->log_prob), *oov = PyBool_FromLong(r->oov);
    PyObject *s = lp && oov ? PyUnicode_FromFormat("FullScoreReturn(%R, %d, %R)", lp,
                                                   r->ngram_length, oov)
                            : NULL;
    Py_XDECREF(lp);
    Py_XDECREF(oov);
    return s;
}

static PyGetSetDef Fsr_getset[] = {
    {"log_prob", Fsr_log_prob, NULL, "log10 p(word | context)", NULL},
    {"ngram_length", Fsr_ngram_length, NULL, "length of the matched n-gram", NULL},
    {"oov", Fsr_oov, NULL, "True when the word is not in the vocabulary", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Fsr_slots[] = {
    {Py_tp_doc, "FullScoreReturn(log_prob, ngram_length, oov): what BaseFullScore returns."},
    {Py_tp_new, Fsr_new},
    {Py_tp_dealloc, fastsmt_dealloc},
    {Py_tp_repr, Fsr_repr},
    {Py_tp_getset, Fsr_getset},
    {0, NULL}};

static PyType_Spec Fsr_spec = {"fastsmt._fastsmt.FullScoreReturn", sizeof(FsrObject), 0,
                               Py_TPFLAGS_DEFAULT, Fsr_slots};

/* ---------------------------------------------------------------- Model */

/* full_scores' tuples a model keeps to hand out again: a direct-mapped table keyed by the whole
 * value (log10 prob's bits, ngram length, oov), so a hit is the equal, immutable tuple. */
#define TUPLE_CACHE_SLOTS 4096
typedef struct tuple_slot {
    uint64_t key; /* the value, as cached_tuple packs it (never 0); 0: an empty slot */
    PyObject *t;
} tuple_slot;

typedef struct ModelObject {
    PyObject_HEAD
    glm_model *m;
    PyObject *path;     /* bytes (absolute, as KenLM's module keeps it) or NULL (None) */
    int loaded;         /* __init__ succeeded (m is NULL again after close()) */
    PyObject *module;   /* for the State and FullScoreReturn types */
    PyObject *state_type; /* the module's State type (the module holds it), set with module */
    unsigned busy;      /* batches running with the GIL released; close() refuses while > 0 */
    tuple_slot *tuples; /* TUPLE_CACHE_SLOTS, allocated at the first full_scores */
    glm_word_cache *words; /* m's word ids for one-sentence calls (made at the first), or NULL */
} ModelObject;

/* The model's word cache, made at its first use (NULL when out of memory: words looked up). */
static glm_word_cache *word_cache_of(ModelObject *self)
{
    if (!self->words)
        self->words = glm_word_cache_new();
    return self->words;
}

/* Closes the model and its word cache (whose ids are the model's). */
static void close_model(ModelObject *self)
{
    glm_close(self->m);
    self->m = NULL;
    glm_word_cache_free(self->words);
    self->words = NULL;
}

static PyObject *Model_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    (void)args, (void)kw;
    allocfunc alloc = (allocfunc)PyType_GetSlot(type, Py_tp_alloc);
    ModelObject *self = (ModelObject *)alloc(type, 0);
    if (self) {
        self->m = NULL;
        self->path = NULL;
        self->loaded = 0;
        self->module = NULL;
        self->state_type = NULL;
        self->busy = 0;
        self->tuples = NULL;
        self->words = NULL;
    }
    return (PyObject *)self;
}

/* KenLM's util::LoadMethod values (lm/config.hh), as fastsmt.kenlm.LoadMethod names them. */
enum { LOAD_LAZY = 0, LOAD_POPULATE_OR_LAZY = 1, LOAD_POPULATE_OR_READ = 2, LOAD_READ = 3,
       LOAD_PARALLEL_READ = 4 };

/* A fastsmt.kenlm.Config field as a C long; -1 with an exception set. */
static int config_long(PyObject *config, const char *name, long *out)
{
    PyObject *v = PyObject_GetAttrString(config, name);
    if (!v)
        return -1;
    *out = PyLong_AsLong(v);
    Py_DECREF(v);
    return *out == -1 && PyErr_Occurred() ? -1 : 0;
}

/* The load flags and build options of config (None: Config()'s defaults). Anything but a
 * fastsmt.kenlm.Config is a TypeError, as KenLM's module refuses anything but its Config. */
static int config_flags(PyObject *config, unsigned *flags, glm_build_options *bopt)
{
    *flags = GLM_OPEN_DEFAULT | GLM_OPEN_INDEX; /* as glm query's default (POPULATE_OR_READ) */
    memset(bopt, 0, sizeof *bopt);
    bopt->K = 0;
    bopt->progress = 0;  /* show_progress: a meter on stderr when it is a terminal */
    bopt->warn = stderr; /* KenLM's default arpa_complain = ALL prints its warnings */
    if (!config || config == Py_None)
        return 0;
    PyObject *kenlm = PyImport_ImportModule("fastsmt.kenlm");
    PyObject *cls = kenlm ? PyObject_GetAttrString(kenlm, "Config") : NULL;
    Py_XDECREF(kenlm);
    int ok = cls ? PyObject_IsInstance(config, cls) : -1;
    Py_XDECREF(cls);
    if (ok < 0)
        return -1;
    if (!ok) {
        PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(config), "__name__");
        if (name)
            PyErr_Format(PyExc_TypeError, "Argument 'config' has incorrect type (expected "
                         "fastsmt.kenlm.Config, got %S)", name);
        Py_XDECREF(name);
        return -1;
    }
    long lm, complain, progress;
    if (config_long(config, "load_method", &lm) || config_long(config, "arpa_complain", &complain) ||
        config_long(config, "show_progress", &progress))
        return -1;
    switch (lm) {
    case LOAD_LAZY: *flags = GLM_OPEN_INDEX; break;
    case LOAD_POPULATE_OR_LAZY: *flags = GLM_OPEN_POPULATE | GLM_OPEN_INDEX; break;
    case LOAD_POPULATE_OR_READ: break;
    case LOAD_READ:
    case LOAD_PARALLEL_READ: *flags = GLM_OPEN_HUGE | GLM_OPEN_INDEX; break;
    default:
        PyErr_Format(PyExc_ValueError, "Config.load_method %ld: not one of LoadMethod's values", lm);
        return -1;
    }
    if (complain == 2) /* ARPALoadComplain.NONE */
        bopt->warn = NULL;
    if (!progress)
        bopt->progress = -1;
    return 0;
}

static int Model_init(PyObject *op, PyObject *args, PyObject *kw)
{
    ModelObject *self = (ModelObject *)op;
    static char *names[] = {"path", "config", NULL};
    PyObject *path_arg, *config = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|O", names, &path_arg, &config))
        return -1;
    if (self->m) {
        PyErr_SetString(PyExc_RuntimeError, "Model.__init__: the model is already loaded");
        return -1;
    }
    PyObject *fs = NULL; /* bytes */
    if (PyUnicode_Check(path_arg) || PyBytes_Check(path_arg) ||
        PyObject_HasAttrString(path_arg, "__fspath__")) {
        if (!PyUnicode_FSConverter(path_arg, &fs))
            return -1;
    } else {
        PyObject *t = PyObject_Type(path_arg);
        PyErr_Format(PyExc_TypeError, "Cannot convert %S to string", t);
        Py_XDECREF(t);
        return -1;
    }
    PyObject *ospath = PyImport_ImportModule("os.path");
    PyObject *abs = ospath ? PyObject_CallMethod(ospath, "abspath", "O", fs) : NULL;
    Py_XDECREF(ospath);
    Py_DECREF(fs);
    if (!abs)
        return -1;
    unsigned flags;
    glm_build_options bopt;
    if (config_flags(config, &flags, &bopt)) {
        Py_DECREF(abs);
        return -1;
    }
    const char *p = PyBytes_AsString(abs);
    if (!p) {
        Py_DECREF(abs);
        return -1;
    }
    glm_model *m = NULL;
    smt_err e;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = glm_load(&m, p, flags, &bopt, &e);
    Py_END_ALLOW_THREADS
    if (rc) {
        /* KenLM's module: IOError('Cannot read model ...') for a missing or unreadable file */
        if (rc == SMT_ERR_NOMEM)
            PyErr_Format(PyExc_MemoryError, "Cannot read model '%S' (%s)", path_arg, e.msg);
        else
            PyErr_Format(PyExc_OSError, "Cannot read model '%S' (%s)", path_arg, e.msg);
        Py_DECREF(abs);
        return -1;
    }
    PyObject *module = PyState_FindModule(&module_def);
    if (!module) {
        glm_close(m);
        Py_DECREF(abs);
        PyErr_SetString(PyExc_RuntimeError, "fastsmt._fastsmt is not initialized");
        return -1;
    }
    Py_INCREF(module);
    self->module = module;
    self->state_type = state_of_module(module)->state_type;
    glm_word_cache_free(self->words); /* __init__ again: the cache held the other model's ids */
    self->words = NULL;
    self->m = m;
    self->path = abs;
    self->loaded = 1;
    return 0;
}

static void Model_dealloc(PyObject *op)
{
    ModelObject *self = (ModelObject *)op;
    close_model(self);
    if (self->tuples) {
        for (size_t i = 0; i < TUPLE_CACHE_SLOTS; i++)
            Py_XDECREF(self->tuples[i].t);
        PyMem_Free(self->tuples);
    }
    Py_XDECREF(self->path);
    Py_XDECREF(self->module);
    fastsmt_dealloc(op);
}

static const glm_model *model_of(ModelObject *self)
{
    if (!self->m)
        PyErr_SetString(PyExc_ValueError, self->loaded ? "the model is closed"
                                                       : "the model is not loaded (Model.__init__)");
    return self->m;
}

static module_state *mstate(PyObject *self);

static PyObject *Model_get_order(PyObject *op, void *c)
{
    (void)c;
    const glm_model *m = model_of((ModelObject *)op);
    return m ? PyLong_FromUnsignedLong(glm_order(m)) : NULL;
}

static PyObject *Model_get_path(PyObject *op, void *c)
{
    (void)c;
    ModelObject *self = (ModelObject *)op;
    if (!self->path)
        Py_RETURN_NONE;
    Py_INCREF(self->path);
    return self->path;
}

/* KenLM's `cdef public bytes path`: bytes or None */
static int Model_set_path(PyObject *op, PyObject *v, void *c)
{
    (void)c;
    ModelObject *self = (ModelObject *)op;
    if (!v) {
        PyErr_SetString(PyExc_AttributeError, "the attribute path cannot be deleted");
        return -1;
    }
    if (v != Py_None && !PyBytes_CheckExact(v)) {
        PyObject *name = PyObject_GetAttrString((PyObject *)Py_TYPE(v), "__name__");
        if (name)
            PyErr_Format(PyExc_TypeError, "Expected bytes, got %S", name);
        Py_XDECREF(name);
        return -1;
    }
    PyObject *old = self->path;
    self->path = v == Py_None ? NULL : Py_NewRef(v);
    Py_XDECREF(old);
    return 0;
}

static PyObject *Model_get_closed(PyObject *op, void *c)
{
    (void)c;
    return PyBool_FromLong(((ModelObject *)op)->m == NULL);
}

/* The bytes of a word KenLM's module looks up: up to its first NUL (a C string). */
static size_t kenlm_word(const char *w, size_t n)
{
    const char *z = memchr(w, '\0', n);
    return z ? (size_t)(z - w) : n;
}

/* The state a sentence starts from: <s>, or the null context. */
static void state_start(const glm_model *m, int bos, glm_state *st)
{
    if (bos)
        glm_state_begin(m, st);
    else
        glm_state_null(st);
}

/* A text holding NUL, as KenLM's module reads it: with <s> and </s> (its ScoreSentence takes a C
 * string) the text ends at the first NUL; otherwise (bytes.split(), then a C string per word) each
 * word ends at its first NUL. *words: the words of the whole text, as its perplexity counts them.
 * The float sum of glm_score per word, in order: the same arithmetic as glm_score_lines. */
static void score_nul_text(const glm_model *m, const char *s, size_t n, int bos, int eos,
                           float *total, uint32_t *words)
{
    *words = (uint32_t)smt_words_count(s, n, SMT_WS_ASCII);
    const char *pos = s, *end = bos && eos ? s + kenlm_word(s, n) : s + n, *w;
    size_t len;
    glm_state st;
    state_start(m, bos, &st);
    float t = 0;
    while (smt_word_next(&pos, end, SMT_WS_ASCII, &w, &len))
        t += glm_score(m, &st, glm_index(m, w, kenlm_word(w, len)), &st, NULL);
    if (eos)
        t += glm_score(m, &st, glm_eos(m), &st, NULL);
    *total = t;
}

/* The sum of the line's word scores (and </s>), KenLM's float arithmetic, and its words: glm's
 * batch path for one line (measured faster than a glm_score walk per word, and than the line's
 * n-gram rows through glm_score_rows: 0.42 s, 1.0 s, 0.54 s of CPU for 100k mono lines). */
static int score_text(const glm_model *m, glm_word_cache *wc, const char *s, size_t n, int bos,
                      int eos, float *total, size_t *nwords)
{
    if (memchr /* read as KenLM's module reads it */(s, '\0', n)) {
        uint32_t words;
        score_nul_text(m, s, n, bos, eos, total, &words);
        if (nwords)
            *nwords = words;
        return 0;
    }
    glm_lines_options opt = {.bos = bos, .eos = eos, .threads = 1, .word_cache = wc};
    uint32_t words;
    smt_err e;
    int rc = glm_score_lines(m, &s, &n, 1, &opt, total, &words, NULL, &e);
    if (rc) {
        PyErr_SetString(rc == SMT_ERR_NOMEM ? PyExc_MemoryError : PyExc_ValueError, e.msg);
        return -1;
    }
    if (nwords)
        *nwords = words;
    return 0;
}

static const char *const score_names[] = {"sentence", "bos", "eos"};

/* The (sentence, bos=True, eos=True) arguments of score and full_scores, and the open model;
 * -1 with a Python exception set. */
static int sentence_args(PyObject *op, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                         const char *fn, const char **s, Py_ssize_t *n, int *bos, int *eos,
                         const glm_model **m)
{
    PyObject *a[3];
    if (fastsmt_parse_args(args, nargs, kwnames, score_names, 3, 1, fn, a) ||
        fastsmt_text_of(a[0], s, n))
        return -1;
    *bos = flag_arg(a[1], 1);
    *eos = flag_arg(a[2], 1);
    if (*bos < 0 || *eos < 0 || !(*m = model_of((ModelObject *)op)))
        return -1;
    return 0;
}

static PyObject *Model_score(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    const char *s;
    Py_ssize_t n;
    int bos, eos;
    const glm_model *m;
    if (sentence_args(op, args, nargs, kwnames, "score", &s, &n, &bos, &eos, &m))
        return NULL;
    float total;
    if (score_text(m, word_cache_of((ModelObject *)op), s, (size_t)n, bos, eos, &total, NULL))
        return NULL;
    return PyFloat_FromDouble(total);
}

/* KenLM: 10 ** (-score(sentence) / (words + 1)) */
static double perplexity_of(float total, size_t words)
{
    return pow(10.0, -(double)total / (double)(words + 1));
}

static PyObject *Model_perplexity(PyObject *op, PyObject *sentence)
{
    const char *s;
    Py_ssize_t n;
    if (fastsmt_text_of(sentence, &s, &n))
        return NULL;
    const glm_model *m = model_of((ModelObject *)op);
    if (!m)
        return NULL;
    size_t words;
    float total;
    if (score_text(m, word_cache_of((ModelObject *)op), s, (size_t)n, 1, 1, &total, &words))
        return NULL;
    return PyFloat_FromDouble(perplexity_of(total, words));
}

/* KenLM's tuple (log10 prob, ngram length, oov). Holding a float, an int and a bool, it can be in
 * no reference cycle: it is untracked at once, as the collector would untrack it at its first
 * pass, so collections triggered by a long loop do not walk every tuple. */
static PyObject *score_tuple(float p, unsigned nl, int oov)
{
    PyObject *f = PyFloat_FromDouble((double)p), *l = PyLong_FromUnsignedLong(nl);
    PyObject *t = f && l ? PyTuple_Pack(3, f, l, oov ? Py_True : Py_False) : NULL;
    Py_XDECREF(f);
    Py_XDECREF(l);
    if (t)
        PyObject_GC_UnTrack(t);
    return t;
}

/* score_tuple's tuple through the model's cache (a new reference). */
static PyObject *cached_tuple(tuple_slot *cache, float p, unsigned nl, int oov)
{
    uint32_t bits;
    memcpy(&bits, &p, sizeof bits);
    uint64_t key = (uint64_t)bits | (uint64_t)(nl & 0xff) << 32 | (uint64_t)(oov != 0) << 40 |
                   1ull << 41;
    tuple_slot *e = &cache[smt_hash_u64(key) & (TUPLE_CACHE_SLOTS - 1)];
    if (e->key != key) {
        PyObject *t = score_tuple(p, nl, oov);
        if (!t)
            return NULL;
        Py_XDECREF(e->t);
        e->t = t;
        e->key = key;
    }
    Py_INCREF(e->t);
    return e->t;
}

/* The tokens of a text holding NUL, scored word by word as KenLM's module reads it: each word of
 * bytes.split() up to its first NUL. */
static void nul_tokens(const glm_model *m, const char *s, size_t n, int bos, float *prob,
                      uint8_t *len, glm_word *id, size_t nt)
{
    glm_state st;
    state_start(m, bos, &st);
    const char *pos = s, *end = s + n, *w;
    size_t wl;
    for (size_t i = 0; i < nt; i++) {
        id[i] = smt_word_next(&pos, end, SMT_WS_ASCII, &w, &wl) ? glm_index(m, w, kenlm_word(w, wl))
                                                                : glm_eos(m);
        unsigned nl;
        prob[i] = glm_score(m, &st, id[i], &st, &nl);
        len[i] = (uint8_t)nl;
    }
}

#define FS_STACK 256 /* tokens of a line scored with buffers on the stack */

static PyObject *Model_full_scores(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    const char *s;
    Py_ssize_t n;
    int bos, eos;
    const glm_model *m;
    if (sentence_args(op, args, nargs, kwnames, "full_scores", &s, &n, &bos, &eos, &m))
        return NULL;
    /* a line of at most FS_STACK tokens (a word and a separator per two bytes) without NUL is
     * read once, its words counted by the scoring; else counted first */
    int nul = memchr /* read as KenLM's module reads it */ (s, '\0', (size_t)n) != NULL;
    int small = !nul && ((size_t)n + 1) / 2 + (eos ? 1 : 0) <= FS_STACK;
    size_t nw = small ? 0 : smt_words_count(s, (size_t)n, SMT_WS_ASCII), nt = nw + (eos ? 1 : 0);
    float prob_s[FS_STACK], *prob = prob_s;
    uint8_t len_s[FS_STACK], *len = len_s;
    glm_word id_s[FS_STACK], *id = id_s;
    PyObject *tup = NULL, *it = NULL;
    if (!small && nt > FS_STACK) {
        prob = PyMem_Malloc(nt * sizeof *prob);
        len = PyMem_Malloc(nt * sizeof *len);
        id = PyMem_Malloc(nt * sizeof *id);
        if (!prob || !len || !id) {
            PyErr_NoMemory();
            goto done;
        }
    }
    if (nul) {
        nul_tokens(m, s, (size_t)n, bos, prob, len, id, nt);
    } else {
        glm_lines_options opt = {.bos = bos, .eos = eos, .threads = 1, .token_prob = prob,
                                 .word_cache = word_cache_of((ModelObject *)op),
                                 .token_len = len, .token_word = id,
                                 .token_cap = small ? FS_STACK : nt};
        size_t sn = (size_t)n;
        float total;
        uint32_t words;
        smt_err e;
        int rc = glm_score_lines(m, &s, &sn, 1, &opt, &total, &words, NULL, &e);
        if (rc) {
            fastsmt_raise(rc, e.msg);
            goto done;
        }
        nw = words;
        nt = nw + (eos ? 1 : 0);
    }
    /* a tuple of the tuples, untracked as they are (it holds only them), iterated */
    ModelObject *self = (ModelObject *)op;
    if (!self->tuples && !(self->tuples = PyMem_Calloc(TUPLE_CACHE_SLOTS, sizeof(tuple_slot)))) {
        PyErr_NoMemory();
        goto done;
    }
    tup = PyTuple_New((Py_ssize_t)nt);
    if (tup)
        PyObject_GC_UnTrack(tup);
    for (size_t i = 0; tup && i < nt; i++) {
        PyObject *t = cached_tuple(self->tuples, prob[i], len[i], i < nw && id[i] == GLM_UNK);
        if (!t || PyTuple_SetItem(tup, (Py_ssize_t)i, t))
            Py_CLEAR(tup);
    }
    if (tup)
        it = PyObject_GetIter(tup);
    Py_XDECREF(tup);
done:
    if (prob != prob_s) {
        PyMem_Free(prob);
        PyMem_Free(len);
        PyMem_Free(id);
    }
    return it;
}

static StateObject *state_arg(ModelObject *self, PyObject *o, const char *what)
{
    PyObject *tp = self->state_type;
    int ok = (PyObject *)Py_TYPE(o) == tp ? 1 : PyObject_IsInstance(o, tp);
    if (ok < 0)
        return NULL;
    if (!ok) {
        PyObject *t = PyObject_Type(o);
        PyErr_Format(PyExc_TypeError, "%s must be a State, not %S", what, t);
        Py_XDECREF(t);
        return NULL;
    }
    return (StateObject *)o;
}

static PyObject *Model_BeginSentenceWrite(PyObject *op, PyObject *arg)
{
    ModelObject *self = (ModelObject *)op;
    const glm_model *m = model_of(self);
    StateObject *s = m ? state_arg(self, arg, "state") : NULL;
    if (!s)
        return NULL;
    glm_state_begin(m, &s->st);
    Py_RETURN_NONE;
}

static PyObject *Model_NullContextWrite(PyObject *op, PyObject *arg)
{
    ModelObject *self = (ModelObject *)op;
    const glm_model *m = model_of(self);
    StateObject *s = m ? state_arg(self, arg, "state") : NULL;
    if (!s)
        return NULL;
    glm_state_null(&s->st);
    Py_RETURN_NONE;
}

static const char *const base_names[] = {"in_state", "word", "out_state"};

/* (in_state, word, out_state), by position or KenLM's keyword names → the score, out_state
 * written; *oov and *nl set. */
static int base_score(ModelObject *self, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, const char *fname, float *p, unsigned *nl, int *oov)
{
    PyObject *a[3];
    if (!kwnames && nargs == 3) /* the usual call: by position */
        a[0] = args[0], a[1] = args[1], a[2] = args[2];
    else if (fastsmt_parse_args(args, nargs, kwnames, base_names, 3, 3, fname, a))
        return -1;
    const glm_model *m = model_of(self);
    StateObject *si = m ? state_arg(self, a[0], "in_state") : NULL;
    StateObject *so = si ? state_arg(self, a[2], "out_state") : NULL;
    const char *w;
    Py_ssize_t n;
    if (!so || fastsmt_text_of(a[1], &w, &n))
        return -1;
    glm_word id = glm_index(m, w, kenlm_word(w, (size_t)n));
    *oov = id == GLM_UNK;
    *p = glm_score(m, &si->st, id, &so->st, nl);
    return 0;
}

static PyObject *Model_BaseScore(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                 PyObject *kwnames)
{
    float p;
    unsigned nl;
    int oov;
    if (base_score((ModelObject *)op, args, nargs, kwnames, "BaseScore", &p, &nl, &oov))
        return NULL;
    return PyFloat_FromDouble(p);
}

static PyObject *Model_BaseFullScore(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames)
{
    float p;
    unsigned nl;
    int oov;
    if (base_score((ModelObject *)op, args, nargs, kwnames, "BaseFullScore", &p, &nl, &oov))
        return NULL;
    return fsr_make((PyTypeObject *)mstate(op)->fsr_type, p, (int)nl, oov);
}

static int Model_contains(PyObject *op, PyObject *word)
{
    const char *w;
    Py_ssize_t n;
    if (fastsmt_text_of(word, &w, &n))
        return -1;
    const glm_model *m = model_of((ModelObject *)op);
    if (!m)
        return -1;
    return glm_index(m, w, kenlm_word(w, (size_t)n)) != GLM_UNK;
}

static PyObject *Model_repr(PyObject *op)
{
    ModelObject *self = (ModelObject *)op;
    if (!self->path)
        return PyUnicode_FromString(self->loaded ? "<Model (path None)>" : "<Model (not loaded)>");
    PyObject *ospath = PyImport_ImportModule("os.path");
    PyObject *base = ospath ? PyObject_CallMethod(ospath, "basename", "O", self->path) : NULL;
    Py_XDECREF(ospath);
    if (!base)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("<Model from %S>", base);
    Py_DECREF(base);
    return r;
}

static PyObject *Model_reduce(PyObject *op, PyObject *unused)
{
    (void)unused;
    ModelObject *self = (ModelObject *)op;
    if (!self->path) {
        PyErr_SetString(PyExc_ValueError, "a model without a path cannot be pickled");
        return NULL;
    }
    return Py_BuildValue("(O(O))", (PyObject *)Py_TYPE(op), self->path);
}

/* ---- batches */

typedef struct batch {
    fastsmt_lines l;
    float *total;
    uint32_t *words;
} batch;

static void batch_free(batch *b)
{
    fastsmt_lines_free(&b->l);
    PyMem_Free(b->total);
    PyMem_Free(b->words);
}

static int batch_read(batch *b, PyObject *sentences)
{
    b->total = NULL;
    b->words = NULL;
    if (fastsmt_lines_read(&b->l, sentences))
        return -1;
    size_t c = b->l.count > 0 ? (size_t)b->l.count : 1;
    b->total = PyMem_Malloc(c * sizeof *b->total);
    b->words = PyMem_Malloc(c * sizeof *b->words);
    if (!b->total || !b->words) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* Scores the batch with the GIL released; the model cannot be closed meanwhile. */
static int batch_score(ModelObject *self, batch *b, int bos, int eos, unsigned threads)
{
    const glm_model *m = model_of(self);
    if (!m)
        return -1;
    glm_lines_options opt = {.bos = bos, .eos = eos, .threads = threads};
    smt_err e;
    int rc;
    self->busy++;
    Py_BEGIN_ALLOW_THREADS
    rc = glm_score_lines(m, b->l.s, b->l.n, (size_t)b->l.count, &opt, b->total, b->words, NULL,
                         &e);
    Py_END_ALLOW_THREADS
    self->busy--;
    if (rc) {
        if (rc == SMT_ERR_NOMEM)
            PyErr_SetString(PyExc_MemoryError, e.msg);
        else
            PyErr_SetString(PyExc_ValueError, e.msg);
        return -1;
    }
    for (Py_ssize_t i = 0; i < b->l.count; i++) /* as score() reads them */
        if (memchr(b->l.s[i], '\0', b->l.n[i]))
            score_nul_text(m, b->l.s[i], b->l.n[i], bos, eos, &b->total[i], &b->words[i]);
    return 0;
}

/* values[0..n) as a list of floats, or a float64 NumPy array when as_numpy */
static PyObject *doubles_out(const double *values, Py_ssize_t n, int as_numpy)
{
    if (as_numpy) {
        PyObject *np = PyImport_ImportModule("numpy");
        if (!np)
            return NULL;
        PyObject *buf = PyByteArray_FromStringAndSize((const char *)values,
                                                      n * (Py_ssize_t)sizeof(double));
        PyObject *arr = buf ? PyObject_CallMethod(np, "frombuffer", "Os", buf, "float64") : NULL;
        Py_XDECREF(buf);
        Py_DECREF(np);
        return arr;
    }
    PyObject *list = PyList_New(n);
    if (!list)
        return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyFloat_FromDouble(values[i]);
        if (!v || PyList_SetItem(list, i, v)) {
            Py_DECREF(list);
            return NULL;
        }
    }
    return list;
}

static PyObject *batch_call(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames, int perplexity)
{
    static const char *const sb_names[] = {"sentences", "bos", "eos", "threads", "numpy"};
    static const char *const pb_names[] = {"sentences", "threads", "numpy"};
    PyObject *a[5] = {NULL, NULL, NULL, NULL, NULL};
    int bos = 1, eos = 1, as_numpy = 0;
    unsigned threads;
    if (perplexity) {
        PyObject *p[3];
        if (fastsmt_parse_args(args, nargs, kwnames, pb_names, 3, 1, "perplexity_batch", p))
            return NULL;
        a[0] = p[0], a[3] = p[1], a[4] = p[2];
    } else if (fastsmt_parse_args(args, nargs, kwnames, sb_names, 5, 1, "score_batch", a)) {
        return NULL;
    }
    bos = flag_arg(a[1], 1), eos = flag_arg(a[2], 1), as_numpy = flag_arg(a[4], 0);
    if (bos < 0 || eos < 0 || as_numpy < 0 || fastsmt_threads_arg(a[3], &threads))
        return NULL;
    batch b;
    if (batch_read(&b, a[0]) || batch_score((ModelObject *)op, &b, bos, eos, threads)) {
        batch_free(&b);
        return NULL;
    }
    double *v = PyMem_Malloc((b.l.count ? (size_t)b.l.count : 1) * sizeof *v);
    if (!v) {
        batch_free(&b);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < b.l.count; i++)
        v[i] = perplexity ? perplexity_of(b.total[i], b.words[i]) : (double)b.total[i];
    PyObject *r = doubles_out(v, b.l.count, as_numpy);
    PyMem_Free(v);
    batch_free(&b);
    return r;
}

static PyObject *Model_score_batch(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                   PyObject *kwnames)
{
    return batch_call(op, args, nargs, kwnames, 0);
}

static PyObject *Model_perplexity_batch(PyObject *op, PyObject *const *args, Py_ssize_t nargs,
                                        PyObject *kwnames)
{
    return batch_call(op, args, nargs, kwnames, 1);
}

static PyObject *Model_close(PyObject *op, PyObject *unused)
{
    (void)unused;
    ModelObject *self = (ModelObject *)op;
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError,
                        "cannot close the model: a batch is scoring with it in another thread");
        return NULL;
    }
    close_model(self);
    Py_RETURN_NONE;
}

static PyObject *Model_enter(PyObject *op, PyObject *unused)
{
    (void)unused;
    if (!model_of((ModelObject *)op))
        return NULL;
    Py_INCREF(op);
    return op;
}

static PyObject *Model_exit(PyObject *op, PyObject *args)
{
    (void)args;
    PyObject *r = Model_close(op, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyMethodDef Model_methods[] = {
    {"score", (PyCFunction)(void (*)(void))Model_score, METH_FASTCALL | METH_KEYWORDS,
     "score(sentence, bos=True, eos=True) -> log10 p(sentence </s> | <s>), a float sum as KenLM's"},
    {"perplexity", Model_perplexity, METH_O,
     "perplexity(sentence) -> 10 ** (-score(sentence) / (words + 1)), as KenLM computes it"},
    {"full_scores", (PyCFunction)(void (*)(void))Model_full_scores, METH_FASTCALL | METH_KEYWORDS,
     "full_scores(sentence, bos=True, eos=True) -> iterator of (log10 prob, ngram length, oov)"},
    {"BeginSentenceWrite", Model_BeginSentenceWrite, METH_O, "Sets state to the <s> context."},
    {"NullContextWrite", Model_NullContextWrite, METH_O, "Sets state to the empty context."},
    {"BaseScore", (PyCFunction)(void (*)(void))Model_BaseScore, METH_FASTCALL | METH_KEYWORDS,
     "BaseScore(in_state, word, out_state) -> log10 p(word | in_state); writes out_state"},
    {"BaseFullScore", (PyCFunction)(void (*)(void))Model_BaseFullScore,
     METH_FASTCALL | METH_KEYWORDS,
     "BaseFullScore(in_state, word, out_state) -> FullScoreReturn; writes out_state"},
    {"score_batch", (PyCFunction)(void (*)(void))Model_score_batch, METH_FASTCALL | METH_KEYWORDS,
     "score_batch(sentences, bos=True, eos=True, threads=1, numpy=False) -> score() of each "
     "sentence (a list, or a float64 NumPy array), scored in C with the GIL released; threads=0: "
     "all CPUs"},
    {"perplexity_batch", (PyCFunction)(void (*)(void))Model_perplexity_batch,
     METH_FASTCALL | METH_KEYWORDS,
     "perplexity_batch(sentences, threads=1, numpy=False) -> perplexity() of each sentence"},
    {"close", Model_close, METH_NOARGS,
     "Frees the model; refused (RuntimeError) while a batch runs in another thread."},
    {"__enter__", Model_enter, METH_NOARGS, NULL},
    {"__exit__", Model_exit, METH_VARARGS, NULL},
    {"__reduce__", Model_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef Model_getset[] = {
    {"order", Model_get_order, NULL, "the n-gram order", NULL},
    {"path", Model_get_path, Model_set_path,
     "the model's absolute path (bytes, or None; writable, as in KenLM's module)", NULL},
    {"closed", Model_get_closed, NULL, "True after close()", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot Model_slots[] = {
    {Py_tp_doc, "Model(path, config=None): a language model (ARPA, plain or compressed, or a glm "
                "binary) with the API of KenLM's Python module."},
    {Py_tp_new, Model_new},
    {Py_tp_init, Model_init},
    {Py_tp_dealloc, Model_dealloc},
    {Py_tp_repr, Model_repr},
    {Py_tp_methods, Model_methods},
    {Py_tp_getset, Model_getset},
    {Py_sq_contains, Model_contains},
    {0, NULL}};

static PyType_Spec Model_spec = {"fastsmt._fastsmt.Model", sizeof(ModelObject), 0,
                                 Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE, Model_slots};

/* ---------------------------------------------------------------- the module */

/* The module state of a loaded model (its module was found by Model_init). */
static module_state *mstate(PyObject *self)
{
    return state_of_module(((ModelObject *)self)->module);
}

static int module_exec(PyObject *module)
{
    module_state *st = state_of_module(module);
    st->state_type = PyType_FromSpec(&State_spec);
    st->fsr_type = PyType_FromSpec(&Fsr_spec);
    st->model_type = PyType_FromSpec(&Model_spec);
    if (!st->state_type || !st->fsr_type || !st->model_type)
        return -1;
    if (PyModule_AddObjectRef(module, "State", st->state_type) ||
        PyModule_AddObjectRef(module, "FullScoreReturn", st->fsr_type) ||
        PyModule_AddObjectRef(module, "Model", st->model_type))
        return -1;
#ifdef FASTSMT_PY_DECODER
    if (fastsmt_decoder_add_types(module))
        return -1;
#endif
#ifdef FASTSMT_PY_NMT
    if (fastsmt_nmt_add_type(module))
        return -1;
#endif
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    module_state *st = state_of_module(module);
    Py_VISIT(st->state_type);
    Py_VISIT(st->fsr_type);
    Py_VISIT(st->model_type);
    return 0;
}

static int module_clear(PyObject *module)
{
    module_state *st = state_of_module(module);
    Py_CLEAR(st->state_type);
    Py_CLEAR(st->fsr_type);
    Py_CLEAR(st->model_type);
    return 0;
}

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "fastsmt._fastsmt",
    "fastsmt's C extension: glm language models with KenLM's Python API (see fastsmt.kenlm).",
    sizeof(module_state), NULL, NULL, module_traverse, module_clear, NULL};

PyMODINIT_FUNC PyInit__fastsmt(void)
{
    PyObject *module = PyModule_Create(&module_def);
    if (!module)
        return NULL;
    if (module_exec(module) || PyState_AddModule(module, &module_def)) {
        Py_DECREF(module);
        return NULL;
    }
    return module;
}
