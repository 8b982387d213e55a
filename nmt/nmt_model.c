/* nmt_model.c — loading a model directory: config.json, the vocabularies and model.safetensors.
 *
 * safetensors: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
 * data_offsets: [begin, end]}} (plus an optional "__metadata__"), then the data; offsets are relative
 * to the end of the header. Every offset, size and shape is checked before a byte is read. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_internal.h"
#include "nmt_json.h"
#include "nmt_st.h"

static char *join(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    char *p = malloc(a + b + 2);
    if (p) {
        memcpy(p, dir, a);
        p[a] = '/';
        memcpy(p + a + 1, name, b + 1);
    }
    return p;
}

int nmt_read_file(const char *path, char **data, size_t *len, smt_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s", path);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (cap - n < 65536) {
            cap = cap ? cap * 2 : 1 << 20;
            char *nb = realloc(buf, cap + 1);
            if (!nb) {
                free(buf);
                fclose(f);
                return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
            }
            buf = nb;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        n += r;
        if (r == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return smt_err_set(err, SMT_ERR_IO, "%s: read error", path);
    }
    buf[n] = 0;
    *data = buf;
    *len = n;
    return 0;
}

/* ---- safetensors ---- */

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, e = (h >> 10) & 31, f = h & 1023, bits;
    if (e == 0) {
        float v = ldexpf((float)f, -24);
        return sign ? -v : v;
    }
    if (e == 31)
        bits = sign | 0x7F800000u | (f << 13);
    else
        bits = sign | ((e + 112) << 23) | (f << 13);
    float v;
    memcpy(&v, &bits, 4);
    return v;
}

int nmt_st_open(nmt_st *st, const char *path, smt_err *err)
{
    memset(st, 0, sizeof *st);
    st->path = path;
    int rc = nmt_read_file(path, &st->file, &st->size, err);
    if (rc)
        return rc;
    if (st->size < 8)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: shorter than a safetensors header", path);
    uint64_t hl = 0;
    for (int i = 7; i >= 0; i--)
        hl = hl << 8 | (unsigned char)st->file[i];
    if (hl > st->size - 8)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: header length %llu beyond the file", path,
                           (unsigned long long)hl);
    char msg[200];
    if (nj_parse(st->file + 8, (size_t)hl, &st->header, msg, sizeof msg))
        return smt_err_set(err, SMT_ERR_PARSE, "%s: header: %s", path, msg);
    if (st->header.type != NJ_OBJ)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: header is not a JSON object", path);
    st->data = st->file + 8 + hl;
    st->data_size = st->size - 8 - hl;
    return 0;
}

void nmt_st_close(nmt_st *st)
{
    nj_free(&st->header);
    free(st->file);
    memset(st, 0, sizeof *st);
}

int nmt_st_find(const nmt_st *st, const char *name, nmt_st_tensor *t, smt_err *err)
{
    const nj_value *v = nj_get(&st->header, name);
    if (!v)
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: no tensor '%s'", st->path, name);
    const nj_value *dt = nj_get(v, "dtype"), *sh = nj_get(v, "shape"),
                   *off = nj_get(v, "data_offsets");
    if (!dt || dt->type != NJ_STR || !sh || sh->type != NJ_ARR || !off || off->type != NJ_ARR ||
        off->n != 2 || sh->n > 4)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: tensor '%s': bad header entry", st->path, name);
    memset(t, 0, sizeof *t);
    size_t esize;
    if (strcmp(dt->str, "F32") == 0)
        t->dtype = NMT_ST_F32, esize = 4;
    else if (strcmp(dt->str, "F16") == 0)
        t->dtype = NMT_ST_F16, esize = 2;
    else if (strcmp(dt->str, "I32") == 0)
        t->dtype = NMT_ST_I32, esize = 4;
    else
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: tensor '%s': unsupported dtype %s", st->path,
                           name, dt->str);
    t->numel = 1;
    t->ndim = (int)sh->n;
    for (size_t i = 0; i < sh->n; i++) {
        double d = sh->items[i].num;
        if (sh->items[i].type != NJ_NUM || d < 0 || d > 1e12 || d != floor(d))
            return smt_err_set(err, SMT_ERR_PARSE, "%s: tensor '%s': bad shape", st->path, name);
        t->shape[i] = (int64_t)d;
        t->numel *= (size_t)d;
        if (t->numel > st->data_size)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: tensor '%s' larger than the file",
                               st->path, name);
    }
    double b = off->items[0].num, e = off->items[1].num;
    if (off->items[0].type != NJ_NUM || off->items[1].type != NJ_NUM || b < 0 || e < b ||
        e > (double)st->data_size || (size_t)(e - b) != t->numel * esize)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: tensor '%s': data offsets out of bounds",
                           st->path, name);
    t->raw = st->data + (size_t)b;
    return 0;
}

void nmt_st_to_float(const nmt_st_tensor *t, float *dst)
{
    const unsigned char *p = (const unsigned char *)t->raw;
    for (size_t i = 0; i < t->numel; i++) {
        if (t->dtype == NMT_ST_F16) {
            dst[i] = half_to_float((uint16_t)(p[2 * i] | p[2 * i + 1] << 8));
        } else if (t->dtype == NMT_ST_I32) {
            int32_t v;
            memcpy(&v, p + 4 * i, 4);
            dst[i] = (float)v;
        } else {
            memcpy(dst + i, p + 4 * i, 4);
        }
    }
}

/* ---- the model ---- */

typedef struct loader {
    nmt_model *m;
    nmt_st st;
    size_t used;
    int rc;
    smt_err *err;
} loader;

/* Copies tensor name (shape rows x cols, or a vector when cols == 0) into the arena; transposes
 * when asked (PyTorch Linear weights are (out,in); we keep (in,out)). */
static float *take(loader *L, const char *name, int rows, int cols, int transpose)
{
    if (L->rc)
        return NULL;
    nmt_st_tensor t;
    if ((L->rc = nmt_st_find(&L->st, name, &t, L->err)))
        return NULL;
    int ok = cols ? (t.ndim == 2 && t.shape[0] == rows && t.shape[1] == cols)
                  : (t.ndim == 1 && t.shape[0] == rows);
    if (!ok || t.dtype == NMT_ST_I32) {
        L->rc = smt_err_set(L->err, SMT_ERR_FORMAT,
                            "%s: tensor '%s' has the wrong shape or dtype (want %d x %d floats)",
                            L->st.path, name, rows, cols);
        return NULL;
    }
    size_t n = t.numel;
    if (L->used + n > L->m->arena_floats) { /* cannot happen with shapes checked; never trust */
        L->rc = smt_err_set(L->err, SMT_ERR_FORMAT, "%s: tensor '%s' does not fit the model",
                            L->st.path, name);
        return NULL;
    }
    float *dst = L->m->arena + L->used;
    L->used += (n + 15) & ~(size_t)15; /* 64-byte alignment inside the arena */
    if (!transpose) {
        nmt_st_to_float(&t, dst);
        return dst;
    }
    float *tmp = malloc(n * sizeof *tmp);
    if (!tmp) {
        L->rc = smt_err_set(L->err, SMT_ERR_NOMEM, "out of memory");
        return NULL;
    }
    nmt_st_to_float(&t, tmp);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            dst[(size_t)c * rows + r] = tmp[(size_t)r * cols + c];
    free(tmp);
    return dst;
}

static void take_linear(loader *L, nmt_linear *l, const char *prefix, int in, int out)
{
    char name[128];
    snprintf(name, sizeof name, "%s.weight", prefix);
    l->wt = take(L, name, out, in, 1);
    snprintf(name, sizeof name, "%s.bias", prefix);
    l->b = take(L, name, out, 0, 0);
    l->in = in;
    l->out = out;
}

static void take_norm(loader *L, nmt_norm *n, const char *prefix, int d)
{
    char name[128];
    snprintf(name, sizeof name, "%s.weight", prefix);
    n->g = take(L, name, d, 0, 0);
    snprintf(name, sizeof name, "%s.bias", prefix);
    n->b = take(L, name, d, 0, 0);
}

static size_t model_floats(const nmt_config *c)
{
    size_t d = (size_t)c->d_model, f = (size_t)c->d_ff, pad = 16;
    size_t lin = d * d + d + 2 * pad, ff = 2 * (d * f) + f + d + 4 * pad, ln = 2 * (d + pad);
    size_t enc = 4 * lin + ff + 2 * ln, dec = 8 * lin + ff + 3 * ln;
    return (size_t)c->src_vocab_size * d + (size_t)c->tgt_vocab_size * d + c->enc_layers * enc +
           c->dec_layers * dec + 2 * ln + (size_t)c->tgt_vocab_size * (d + 1) + 8 * pad;
}

static int cfg_int(const nj_value *root, const char *key, int *out, int dflt, const char *path,
                   smt_err *err)
{
    const nj_value *v = nj_get(root, key);
    if (!v) {
        if (dflt < 0)
            return smt_err_set(err, SMT_ERR_PARSE, "%s: missing key \"%s\"", path, key);
        *out = dflt;
        return 0;
    }
    if ((v->type != NJ_NUM && v->type != NJ_BOOL) || v->num < 0 || v->num > 1e8 ||
        v->num != floor(v->num))
        return smt_err_set(err, SMT_ERR_PARSE, "%s: \"%s\" is not a small non-negative integer",
                           path, key);
    *out = (int)v->num;
    return 0;
}

static int load_config(nmt_config *c, const char *dir, char **src_vocab, char **tgt_vocab,
                       char **weights, smt_err *err)
{
    char *path = join(dir, "config.json"), *text = NULL;
    size_t len;
    if (!path)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = nmt_read_file(path, &text, &len, err);
    nj_value root;
    char msg[200];
    if (!rc && nj_parse(text, len, &root, msg, sizeof msg))
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: %s", path, msg);
    free(text);
    if (rc) {
        free(path);
        return rc;
    }
    memset(c, 0, sizeof *c);
    rc = cfg_int(&root, "d_model", &c->d_model, -1, path, err);
    if (!rc) rc = cfg_int(&root, "n_heads", &c->n_heads, -1, path, err);
    if (!rc) rc = cfg_int(&root, "d_ff", &c->d_ff, -1, path, err);
    if (!rc) rc = cfg_int(&root, "enc_layers", &c->enc_layers, -1, path, err);
    if (!rc) rc = cfg_int(&root, "dec_layers", &c->dec_layers, -1, path, err);
    if (!rc) rc = cfg_int(&root, "src_vocab_size", &c->src_vocab_size, -1, path, err);
    if (!rc) rc = cfg_int(&root, "tgt_vocab_size", &c->tgt_vocab_size, -1, path, err);
    if (!rc) rc = cfg_int(&root, "shared_vocab", &c->shared_vocab, 0, path, err);
    if (!rc) rc = cfg_int(&root, "pad_id", &c->pad_id, 0, path, err);
    if (!rc) rc = cfg_int(&root, "unk_id", &c->unk_id, 1, path, err);
    if (!rc) rc = cfg_int(&root, "bos_id", &c->bos_id, 2, path, err);
    if (!rc) rc = cfg_int(&root, "eos_id", &c->eos_id, 3, path, err);
    const nj_value *eps = nj_get(&root, "layer_norm_eps");
    c->ln_eps = eps && eps->type == NJ_NUM ? (float)eps->num : 1e-5f;
    const nj_value *act = nj_get(&root, "activation"), *norm = nj_get(&root, "norm");
    if (!rc && act && (act->type != NJ_STR || strcmp(act->str, "relu") != 0))
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: only \"activation\": \"relu\" is supported",
                         path);
    if (!rc && norm && (norm->type != NJ_STR || strcmp(norm->str, "pre") != 0))
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: only \"norm\": \"pre\" is supported", path);
    if (!rc && (c->d_model == 0 || c->n_heads == 0 || c->d_model % c->n_heads || c->d_ff == 0 ||
                c->d_model % 2 || c->tgt_vocab_size < 4 || c->src_vocab_size < 4))
        rc = smt_err_set(err, SMT_ERR_PARSE,
                         "%s: inconsistent sizes (d_model must be even and divisible by n_heads)",
                         path);
    const char *names[3] = {"src_vocab", "tgt_vocab", "weights"};
    const char *dflt[3] = {"src.vocab", "tgt.vocab", "model.safetensors"};
    char **outs[3] = {src_vocab, tgt_vocab, weights};
    for (int i = 0; i < 3 && !rc; i++) {
        const nj_value *v = nj_get(&root, names[i]);
        *outs[i] = join(dir, v && v->type == NJ_STR ? v->str : dflt[i]);
        if (!*outs[i])
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    nj_free(&root);
    free(path);
    return rc;
}

static int load_vocab(smt_vocab_builder **out, char ***words, const char *path, int expect,
                      smt_err *err)
{
    char *text;
    size_t len;
    int rc = nmt_read_file(path, &text, &len, err);
    if (rc)
        return rc;
    rc = smt_vocab_builder_create(out, err);
    int n = 0;
    char *p = text, *end = text + len;
    while (!rc && p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *e = nl ? nl : end;
        size_t wl = (size_t)(e - p);
        if (wl && p[wl - 1] == '\r')
            wl--;
        uint32_t id;
        rc = smt_vocab_builder_add(*out, p, wl, &id, err);
        if (!rc && id != (uint32_t)n)
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%d: duplicate word", path, n + 1);
        if (!rc && words) {
            (*words)[n] = malloc(wl + 1);
            if (!(*words)[n])
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            else
                memcpy((*words)[n], p, wl), (*words)[n][wl] = 0;
        }
        n++;
        if (!rc && n > expect)
            break;
        p = e + 1;
    }
    free(text);
    if (!rc && n != expect)
        rc = smt_err_set(err, SMT_ERR_FORMAT, "%s: %d words, but the config says %d", path, n,
                         expect);
    return rc;
}

int nmt_model_open(nmt_model **out, const char *dir, smt_err *err)
{
    *out = NULL;
    nmt_model *m = calloc(1, sizeof *m);
    if (!m)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    char *sv = NULL, *tv = NULL, *wp = NULL;
    int rc = load_config(&m->cfg, dir, &sv, &tv, &wp, err);
    const nmt_config *c = &m->cfg;
    if (!rc) {
        m->tgt_words = calloc((size_t)c->tgt_vocab_size + 1, sizeof *m->tgt_words);
        m->w.enc = calloc((size_t)c->enc_layers + 1, sizeof *m->w.enc);
        m->w.dec = calloc((size_t)c->dec_layers + 1, sizeof *m->w.dec);
        m->arena_floats = model_floats(c);
        m->arena = malloc(m->arena_floats * sizeof(float));
        if (!m->tgt_words || !m->w.enc || !m->w.dec || !m->arena)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory for a model of %zu floats",
                             m->arena_floats);
    }
    if (!rc)
        rc = load_vocab(&m->tgt_vocab, &m->tgt_words, tv, c->tgt_vocab_size, err);
    if (!rc && c->shared_vocab && strcmp(sv, tv) == 0)
        m->src_vocab = m->tgt_vocab;
    else if (!rc)
        rc = load_vocab(&m->src_vocab, NULL, sv, c->src_vocab_size, err);
    loader L = {m, {0}, 0, 0, err};
    if (!rc)
        rc = nmt_st_open(&L.st, wp, err);
    if (!rc) {
        int d = c->d_model, f = c->d_ff;
        m->w.src_embed = take(&L, "src_embed.weight", c->src_vocab_size, d, 0);
        m->w.tgt_embed = take(&L, "tgt_embed.weight", c->tgt_vocab_size, d, 0);
        char p[96];
        for (int i = 0; i < c->enc_layers; i++) {
            nmt_enc_layer *e = &m->w.enc[i];
#define P(fmt) (snprintf(p, sizeof p, fmt, i), p)
            take_norm(&L, &e->ln1, P("enc.%d.ln1"), d);
            take_norm(&L, &e->ln2, P("enc.%d.ln2"), d);
            take_linear(&L, &e->q, P("enc.%d.attn.q"), d, d);
            take_linear(&L, &e->k, P("enc.%d.attn.k"), d, d);
            take_linear(&L, &e->v, P("enc.%d.attn.v"), d, d);
            take_linear(&L, &e->o, P("enc.%d.attn.o"), d, d);
            take_linear(&L, &e->ff1, P("enc.%d.ff1"), d, f);
            take_linear(&L, &e->ff2, P("enc.%d.ff2"), f, d);
        }
        for (int i = 0; i < c->dec_layers; i++) {
            nmt_dec_layer *e = &m->w.dec[i];
            take_norm(&L, &e->ln1, P("dec.%d.ln1"), d);
            take_norm(&L, &e->ln2, P("dec.%d.ln2"), d);
            take_norm(&L, &e->ln3, P("dec.%d.ln3"), d);
            take_linear(&L, &e->sq, P("dec.%d.self.q"), d, d);
            take_linear(&L, &e->sk, P("dec.%d.self.k"), d, d);
            take_linear(&L, &e->sv, P("dec.%d.self.v"), d, d);
            take_linear(&L, &e->so, P("dec.%d.self.o"), d, d);
            take_linear(&L, &e->cq, P("dec.%d.cross.q"), d, d);
            take_linear(&L, &e->ck, P("dec.%d.cross.k"), d, d);
            take_linear(&L, &e->cv, P("dec.%d.cross.v"), d, d);
            take_linear(&L, &e->co, P("dec.%d.cross.o"), d, d);
            take_linear(&L, &e->ff1, P("dec.%d.ff1"), d, f);
            take_linear(&L, &e->ff2, P("dec.%d.ff2"), f, d);
#undef P
        }
        take_norm(&L, &m->w.enc_ln, "enc.ln", d);
        take_norm(&L, &m->w.dec_ln, "dec.ln", d);
        take_linear(&L, &m->w.out, "out", d, c->tgt_vocab_size);
        rc = L.rc;
    }
    nmt_st_close(&L.st);
    free(sv);
    free(tv);
    free(wp);
    if (rc) {
        nmt_model_free(m);
        return rc;
    }
    *out = m;
    return 0;
}

void nmt_model_free(nmt_model *m)
{
    if (!m)
        return;
    if (m->tgt_words)
        for (int i = 0; i < m->cfg.tgt_vocab_size; i++)
            free(m->tgt_words[i]);
    free(m->tgt_words);
    if (m->src_vocab != m->tgt_vocab)
        smt_vocab_builder_free(m->src_vocab);
    smt_vocab_builder_free(m->tgt_vocab);
    free(m->w.enc);
    free(m->w.dec);
    free(m->arena);
    free(m);
}

const nmt_config *nmt_model_config(const nmt_model *m) { return &m->cfg; }

size_t nmt_model_tokenize(const nmt_model *m, int target, const char *text, int32_t *ids, size_t cap)
{
    smt_vocab v = smt_vocab_builder_view(target ? m->tgt_vocab : m->src_vocab);
    size_t n = 0;
    const char *p = text;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p || *p == '\n' || *p == '\r')
            break;
        const char *s = p;
        while (*p && *p != ' ' && *p != '\t' && *p != '\n' && *p != '\r')
            p++;
        uint32_t id = smt_vocab_find(&v, s, (size_t)(p - s));
        if (n < cap)
            ids[n] = id == SMT_VOCAB_NONE || (int)id == m->cfg.pad_id || (int)id == m->cfg.bos_id ||
                             (int)id == m->cfg.eos_id
                         ? (int32_t)m->cfg.unk_id
                         : (int32_t)id;
        n++;
    }
    return n;
}

const char *nmt_model_tgt_word(const nmt_model *m, int32_t id)
{
    return id >= 0 && id < m->cfg.tgt_vocab_size ? m->tgt_words[id] : NULL;
}
