/* nmt_model.c — loading a model directory: config.json, the vocabularies and model.safetensors.
 *
 * safetensors: 8-byte little-endian header length N, N bytes of JSON {name: {dtype, shape,
 * data_offsets: [begin, end]}} (plus an optional "__metadata__"), then the data; offsets are relative
 * to the end of the header. Every offset, size and shape is checked before a byte is read. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmt_internal.h"
#include "nmt_json.h"
#include "nmt_st.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_words.h"

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
    int rc = smt_read_file(path, &st->file, &st->size, err);
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
        if (sh->items[i].type != NJ_NUM || !sh->items[i].integral || d < 0 || d > 1e12)
            return smt_err_set(err, SMT_ERR_PARSE, "%s: tensor '%s': bad shape", st->path, name);
        t->shape[i] = (int64_t)d;
        if (d != 0 && t->numel > st->data_size / (size_t)d) /* also keeps numel from wrapping */
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: tensor '%s' larger than the file",
                               st->path, name);
        t->numel *= (size_t)d;
        if (t->numel > st->data_size)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: tensor '%s' larger than the file",
                               st->path, name);
    }
    double b = off->items[0].num, e = off->items[1].num;
    if (off->items[0].type != NJ_NUM || off->items[1].type != NJ_NUM || !off->items[0].integral ||
        !off->items[1].integral || b < 0 || e < b ||
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
    int dry; /* 1: check every tensor's presence, dtype and shape and count the arena; copy nothing */
    size_t used;
    int rc;
    smt_err *err;
} loader;

/* Index of the first NaN or infinity among x[0..n), or n. One branch-free pass (vectorizes): the
 * check costs a fraction of the conversion it follows. */
static size_t first_nonfinite(const float *x, size_t n)
{
    const size_t block = 4096;
    for (size_t b = 0; b < n; b += block) {
        size_t e = n - b < block ? n : b + block;
        uint32_t bad = 0;
        for (size_t i = b; i < e; i++) {
            uint32_t u;
            memcpy(&u, x + i, 4);
            bad |= (uint32_t)((u & 0x7F800000u) == 0x7F800000u);
        }
        if (bad)
            for (size_t i = b; i < e; i++)
                if (!isfinite(x[i]))
                    return i;
    }
    return n;
}

/* Copies tensor name (shape rows x cols, or a vector when cols == 0) into the arena; transposes
 * when asked (PyTorch Linear weights are (out,in); we keep (in,out)). A NaN or an infinity refuses
 * the model: it would turn every score it touches into NaN or -inf. */
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
    if (L->dry) {
        L->used += (n + 15) & ~(size_t)15;
        return NULL;
    }
    if (L->used + n > L->m->arena_floats) { /* cannot happen with shapes checked; never trust */
        L->rc = smt_err_set(L->err, SMT_ERR_FORMAT, "%s: tensor '%s' does not fit the model",
                            L->st.path, name);
        return NULL;
    }
    float *dst = L->m->arena + L->used;
    L->used += (n + 15) & ~(size_t)15; /* 64-byte alignment inside the arena */
    float *tmp = transpose ? malloc(n * sizeof *tmp) : dst;
    if (!tmp) {
        L->rc = smt_err_set(L->err, SMT_ERR_NOMEM, "out of memory");
        return NULL;
    }
    nmt_st_to_float(&t, tmp);
    size_t bad = first_nonfinite(tmp, n);
    if (bad < n) {
        L->rc = smt_err_set(L->err, SMT_ERR_CORRUPT,
                            "%s: tensor '%s' holds %s at element %zu: the model is damaged",
                            L->st.path, name, isnan(tmp[bad]) ? "NaN" : "an infinity", bad);
        if (transpose)
            free(tmp);
        return NULL;
    }
    if (!transpose)
        return dst;
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

/* An integer key in [lo, hi], written as a JSON integer (dflt < lo: the key is required). */
static int cfg_int(const nj_value *root, const char *key, int *out, int dflt, int lo, int hi,
                   const char *path, smt_err *err)
{
    const nj_value *v = nj_get(root, key);
    if (!v) {
        if (dflt < lo)
            return smt_err_set(err, SMT_ERR_PARSE, "%s: missing key \"%s\"", path, key);
        *out = dflt;
        return 0;
    }
    if (v->type != NJ_NUM || !v->integral || v->num < lo || v->num > hi)
        return smt_err_set(err, SMT_ERR_PARSE, "%s: \"%s\" must be an integer in [%d, %d]", path,
                           key, lo, hi);
    *out = (int)v->num;
    return 0;
}

/* The special ids index both embedding tables (</s> ends every source, <s> starts every target,
 * <unk> replaces unknown words on both sides): each must be an id of both vocabularies. */
static int check_special_ids(const nmt_config *c, const char *path, smt_err *err)
{
    const char *names[4] = {"pad_id", "unk_id", "bos_id", "eos_id"};
    const int ids[4] = {c->pad_id, c->unk_id, c->bos_id, c->eos_id};
    for (int i = 0; i < 4; i++) {
        if (ids[i] >= c->src_vocab_size || ids[i] >= c->tgt_vocab_size)
            return smt_err_set(err, SMT_ERR_PARSE,
                               "%s: \"%s\" %d is not an id of the %s vocabulary (%d words)", path,
                               names[i], ids[i], ids[i] >= c->src_vocab_size ? "source" : "target",
                               ids[i] >= c->src_vocab_size ? c->src_vocab_size : c->tgt_vocab_size);
    }
    return 0;
}

static int load_config(nmt_config *c, const char *dir, char **src_vocab, char **tgt_vocab,
                       char **weights, smt_err *err)
{
    char *path = join(dir, "config.json"), *text = NULL;
    size_t len;
    if (!path)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    int rc = smt_read_file(path, &text, &len, err);
    nj_value root;
    char msg[200];
    if (!rc && nj_parse(text, len, &root, msg, sizeof msg))
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: %s", path, msg);
    free(text);
    if (!rc && root.type != NJ_OBJ) {
        nj_free(&root);
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: not a JSON object", path);
    }
    if (rc) {
        free(path);
        return rc;
    }
    memset(c, 0, sizeof *c);
    /* generous bounds; the tensors' shapes (checked against the file's size) bound them again
     * before anything of their size is allocated */
    enum { BIG = 100000000 };
    rc = cfg_int(&root, "d_model", &c->d_model, -1, 2, 1 << 16, path, err);
    if (!rc) rc = cfg_int(&root, "n_heads", &c->n_heads, -1, 1, 1 << 12, path, err);
    if (!rc) rc = cfg_int(&root, "d_ff", &c->d_ff, -1, 1, 1 << 20, path, err);
    if (!rc) rc = cfg_int(&root, "enc_layers", &c->enc_layers, -1, 0, 1 << 12, path, err);
    if (!rc) rc = cfg_int(&root, "dec_layers", &c->dec_layers, -1, 0, 1 << 12, path, err);
    if (!rc) rc = cfg_int(&root, "src_vocab_size", &c->src_vocab_size, -1, 4, BIG, path, err);
    if (!rc) rc = cfg_int(&root, "tgt_vocab_size", &c->tgt_vocab_size, -1, 4, BIG, path, err);
    if (!rc) rc = cfg_int(&root, "pad_id", &c->pad_id, 0, 0, BIG, path, err);
    if (!rc) rc = cfg_int(&root, "unk_id", &c->unk_id, 1, 0, BIG, path, err);
    if (!rc) rc = cfg_int(&root, "bos_id", &c->bos_id, 2, 0, BIG, path, err);
    if (!rc) rc = cfg_int(&root, "eos_id", &c->eos_id, 3, 0, BIG, path, err);
    if (!rc)
        rc = check_special_ids(c, path, err);
    const nj_value *sv = nj_get(&root, "shared_vocab");
    if (!rc && sv && (sv->type == NJ_BOOL || (sv->type == NJ_NUM && sv->integral && sv->num >= 0 &&
                                              sv->num <= 1)))
        c->shared_vocab = sv->num != 0;
    else if (!rc && sv)
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: \"shared_vocab\" must be true or false", path);
    if (!rc && c->shared_vocab && c->src_vocab_size != c->tgt_vocab_size)
        rc = smt_err_set(err, SMT_ERR_PARSE,
                         "%s: \"shared_vocab\" with src_vocab_size %d != tgt_vocab_size %d", path,
                         c->src_vocab_size, c->tgt_vocab_size);
    const nj_value *eps = nj_get(&root, "layer_norm_eps");
    c->ln_eps = 1e-5f;
    if (!rc && eps && (eps->type != NJ_NUM || !(eps->num > 0 && eps->num < 1)))
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: \"layer_norm_eps\" must be a number in (0, 1)",
                         path);
    else if (!rc && eps)
        c->ln_eps = (float)eps->num;
    const nj_value *act = nj_get(&root, "activation"), *norm = nj_get(&root, "norm");
    if (!rc && act && (act->type != NJ_STR || strcmp(act->str, "relu") != 0))
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: only \"activation\": \"relu\" is supported",
                         path);
    if (!rc && norm && (norm->type != NJ_STR || strcmp(norm->str, "pre") != 0))
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED, "%s: only \"norm\": \"pre\" is supported", path);
    if (!rc && (c->d_model % c->n_heads || c->d_model % 2))
        rc = smt_err_set(err, SMT_ERR_PARSE,
                         "%s: inconsistent sizes (d_model must be even and divisible by n_heads)",
                         path);
    const char *names[3] = {"src_vocab", "tgt_vocab", "weights"};
    const char *dflt[3] = {"src.vocab", "tgt.vocab", "model.safetensors"};
    char **outs[3] = {src_vocab, tgt_vocab, weights};
    for (int i = 0; i < 3 && !rc; i++) {
        const nj_value *v = nj_get(&root, names[i]);
        if (v && (v->type != NJ_STR || !v->str[0])) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s: \"%s\" must be a file name", path, names[i]);
            break;
        }
        *outs[i] = join(dir, v ? v->str : dflt[i]);
        if (!*outs[i])
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    nj_free(&root);
    free(path);
    return rc;
}

/* Reads a vocabulary of exactly `expect` lines (the line number is the id); words, when not NULL,
 * has room for expect strings and receives copies (freed by the caller, whatever the outcome). */
static int load_vocab(smt_vocab_builder **out, char **words, const char *path, int expect,
                      smt_err *err)
{
    smt_lines *in;
    int rc = smt_lines_open(&in, path, 0, err);
    if (rc)
        return rc;
    rc = smt_vocab_builder_create(out, err);
    int n = 0;
    char *p;
    size_t wl;
    while (!rc && (rc = smt_lines_next(in, &p, &wl, err)) == 1) {
        rc = 0;
        if (n == expect) {
            rc = smt_err_set(err, SMT_ERR_FORMAT, "%s:%d: more words than the config's %d", path,
                             n + 1, expect);
            break;
        }
        uint32_t id;
        rc = smt_vocab_builder_add(*out, p, wl, &id, err);
        if (!rc && id != (uint32_t)n)
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%d: duplicate word", path, n + 1);
        if (!rc && words) {
            words[n] = malloc(wl + 1);
            if (!words[n])
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            else
                memcpy(words[n], p, wl), words[n][wl] = 0;
        }
        n++;
    }
    smt_lines_close(in);
    if (rc > 0)
        rc = 0;
    if (!rc && n != expect)
        rc = smt_err_set(err, SMT_ERR_FORMAT, "%s: %d words, but the config says %d", path, n,
                         expect);
    return rc;
}

/* An attention block's four d x d projections, PREFIX.q .k .v .o, in that (arena) order. */
static void take_attention(loader *L, nmt_linear *q, nmt_linear *k, nmt_linear *v, nmt_linear *o,
                           const char *prefix, int d)
{
    nmt_linear *proj[4] = {q, k, v, o};
    char p[112];
    for (int j = 0; j < 4; j++) {
        snprintf(p, sizeof p, "%s.%c", prefix, "qkvo"[j]);
        take_linear(L, proj[j], p, d, d);
    }
}

/* Every tensor of the model, in arena order: a dry pass checks them all and sizes the arena, the
 * second copies them. enc and dec hold a layer each in the dry pass. */
static void load_tensors(loader *L, nmt_enc_layer *enc, nmt_dec_layer *dec)
{
    nmt_model *m = L->m;
    const nmt_config *c = &m->cfg;
    int d = c->d_model, f = c->d_ff;
    m->w.src_embed = take(L, "src_embed.weight", c->src_vocab_size, d, 0);
    m->w.tgt_embed = take(L, "tgt_embed.weight", c->tgt_vocab_size, d, 0);
    char p[96];
#define P(fmt) (snprintf(p, sizeof p, fmt, i), p)
    for (int i = 0; i < c->enc_layers && !L->rc; i++) {
        nmt_enc_layer *e = L->dry ? enc : &enc[i];
        take_norm(L, &e->ln1, P("enc.%d.ln1"), d);
        take_norm(L, &e->ln2, P("enc.%d.ln2"), d);
        take_attention(L, &e->q, &e->k, &e->v, &e->o, P("enc.%d.attn"), d);
        take_linear(L, &e->ff1, P("enc.%d.ff1"), d, f);
        take_linear(L, &e->ff2, P("enc.%d.ff2"), f, d);
    }
    for (int i = 0; i < c->dec_layers && !L->rc; i++) {
        nmt_dec_layer *e = L->dry ? dec : &dec[i];
        take_norm(L, &e->ln1, P("dec.%d.ln1"), d);
        take_norm(L, &e->ln2, P("dec.%d.ln2"), d);
        take_norm(L, &e->ln3, P("dec.%d.ln3"), d);
        take_attention(L, &e->sq, &e->sk, &e->sv, &e->so, P("dec.%d.self"), d);
        take_attention(L, &e->cq, &e->ck, &e->cv, &e->co, P("dec.%d.cross"), d);
        take_linear(L, &e->ff1, P("dec.%d.ff1"), d, f);
        take_linear(L, &e->ff2, P("dec.%d.ff2"), f, d);
    }
#undef P
    take_norm(L, &m->w.enc_ln, "enc.ln", d);
    take_norm(L, &m->w.dec_ln, "dec.ln", d);
    take_linear(L, &m->w.out, "out", d, c->tgt_vocab_size);
}

/* Nothing of the config's sizes is allocated before the tensors prove them: the weights file must
 * hold as many tensors as the layer counts need, and each tensor's shape (bounded by the file's
 * size) must match the config. */
int nmt_model_open(nmt_model **out, const char *dir, smt_err *err)
{
    *out = NULL;
    nmt_model *m = calloc(1, sizeof *m);
    if (!m)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    char *sv = NULL, *tv = NULL, *wp = NULL;
    int rc = load_config(&m->cfg, dir, &sv, &tv, &wp, err);
    const nmt_config *c = &m->cfg;
    loader L = {m, {0}, 1, 0, 0, err};
    if (!rc)
        rc = nmt_st_open(&L.st, wp, err);
    if (!rc) {
        /* per layer: encoder 2 norms + 6 linears, decoder 3 norms + 10 linears (weight and bias
         * each); embeddings, final norms and the output layer: 8 */
        long long need = 16LL * c->enc_layers + 26LL * c->dec_layers + 8;
        if ((unsigned long long)need > L.st.header.n)
            rc = smt_err_set(err, SMT_ERR_FORMAT,
                             "%s/config.json: %d encoder and %d decoder layers need %lld tensors, "
                             "but %s holds %zu",
                             dir, c->enc_layers, c->dec_layers, need, wp, L.st.header.n);
    }
    if (!rc) {
        nmt_enc_layer e1;
        nmt_dec_layer d1;
        load_tensors(&L, &e1, &d1);
        rc = L.rc;
    }
    if (!rc) {
        m->tgt_words = calloc((size_t)c->tgt_vocab_size, sizeof *m->tgt_words);
        if (!m->tgt_words)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    if (!rc)
        rc = load_vocab(&m->tgt_vocab, m->tgt_words, tv, c->tgt_vocab_size, err);
    if (!rc && c->shared_vocab && strcmp(sv, tv) == 0)
        m->src_vocab = m->tgt_vocab;
    else if (!rc)
        rc = load_vocab(&m->src_vocab, NULL, sv, c->src_vocab_size, err);
    if (!rc) {
        m->w.enc = calloc((size_t)c->enc_layers + 1, sizeof *m->w.enc);
        m->w.dec = calloc((size_t)c->dec_layers + 1, sizeof *m->w.dec);
        m->arena_floats = L.used;
        m->arena = malloc((m->arena_floats ? m->arena_floats : 1) * sizeof(float));
        if (!m->w.enc || !m->w.dec || !m->arena)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory for a model of %zu floats",
                             m->arena_floats);
    }
    if (!rc) {
        L.dry = 0;
        L.used = 0;
        load_tensors(&L, m->w.enc, m->w.dec);
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
    size_t n = 0, len;
    const char *pos = text, *end = text + strlen(text), *s;
    while (smt_word_next(&pos, end, SMT_WS_LINE, &s, &len)) {
        uint32_t id = smt_vocab_find(&v, s, len);
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
