/* glm_model.c — opening a model (a .glm file, or a KenLM binary through glm_kenlm.c), vocabulary,
 * decoder states, and the readable reference scoring (one walk per query, no interleaving). */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, madvise */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_io.h"
#include "smt_sniff.h"

/* Every child range must be monotone and end at the next level's count: then no walk, whatever
 * the keys say, reads outside the arrays. Cheap next to reading the file. */
static int check_children(const glm_model *m, smt_err *err)
{
    const glm_layout *L = &m->lay;
    for (unsigned k = 1; k < L->order; k++) {
        uint64_t n = L->count[k], first, cnt, end = 0;
        for (uint64_t i = 0; i < n; i++) {
            glm_children(L, k, i, &first, &cnt, L->qp != 0);
            if (first != end || cnt > L->count[k + 1] - first) /* wrapped: not monotone */
                goto bad;
            end = first + cnt;
        }
        if (end != L->count[k + 1])
            goto bad;
        continue;
    bad:
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: level %u child pointers corrupted",
                           smt_mapped_path(m->map), k);
    }
    return 0;
}

/* GLM_OPEN_VERIFY on a quantized file: every packed key is a word id (a damaged key could only
 * give other numbers, never a read outside the arrays; the checksums were verified already). */
static int check_keys(const glm_model *m, smt_err *err)
{
    const glm_layout *L = &m->lay;
    for (unsigned k = 2; k <= L->order; k++) {
        glm_keys r = glm_keys_at(L, k, 0, 1);
        for (uint64_t i = 0; i < L->count[k]; i++)
            if (glm_keys_get(r, i) >= L->count[1])
                return smt_err_set(err, SMT_ERR_CORRUPT, "%s: level %u key %llu is not a word id",
                                   smt_mapped_path(m->map), k, (unsigned long long)i);
    }
    return 0;
}

/* Copies the sections queries touch into anonymous memory backed by 2 MB pages: a query is a
 * chain of random reads over the whole model, and with 4 KB pages nearly every one also misses
 * the TLB (the page cache cannot give a file mapping huge pages). */
static int load_huge(glm_model *m, smt_err *err)
{
    static const char *const plain[6] = {"vocab.str", "vocab.off", "vocab.hash", "keys", "mid",
                                         "top"};
    static const char *const quant[8] = {"vocab.str", "vocab.off", "vocab.hash", "keys", "mid",
                                         "qrec", "qbins", "qbase"};
    const char *const *names = m->lay.qp ? quant : plain;
    int ns = m->lay.qp ? 8 : 6;
    const void *src[8];
    uint64_t size[8], total = 0;
    for (int i = 0; i < ns; i++) {
        src[i] = smt_mapped_section(m->map, names[i], &size[i]);
        total += (size[i] + 63) & ~63ull;
    }
    const uint64_t huge = 2u << 20;
    size_t len = (size_t)((total + 2 * huge - 1) & ~(huge - 1));
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: cannot allocate %zu bytes",
                           smt_mapped_path(m->map), len);
    char *base = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
#ifdef MADV_HUGEPAGE
    madvise(base, (size_t)(raw + len - base), MADV_HUGEPAGE); /* a hint: failure is harmless */
#endif
    void *dst[8];
    char *p = base;
    for (int i = 0; i < ns; i++) {
        dst[i] = p;
        /* 8 MB at a time, each piece of the mapping released once copied: the model is resident
         * once (the copy), never twice, not even while it is being copied */
        for (uint64_t off = 0; off < size[i]; off += 8u << 20) {
            uint64_t n = size[i] - off < (8u << 20) ? size[i] - off : (8u << 20);
            memcpy(p + off, (const char *)src[i] + off, n);
            smt_mapped_release(m->map, (const char *)src[i] + off, n);
        }
        p += (size[i] + 63) & ~63ull;
    }
    m->vocab.str = dst[0];
    m->vocab.off = dst[1];
    m->vocab.slots = dst[2];
    m->lay.mid = dst[4];
    if (m->lay.qp) {
        m->lay.pkeys = dst[3];
        m->lay.qrec = dst[5];
        m->lay.qbins = dst[6];
        m->lay.qbase = dst[7];
    } else {
        m->lay.keys = dst[3];
        m->lay.top = dst[5];
    }
    glm_layout_levels(&m->lay);
    m->huge = raw;
    m->huge_len = len;
    return 0;
}

static void free_bigidx(glm_bigidx *X)
{
    if (X->mem)
        munmap(X->mem, X->mem_len);
    memset(X, 0, sizeof *X);
}

/* Hash tables over the children of every entry with at least min_n of them, ~70% full. */
static int bigidx_tables(glm_model *m, uint64_t min_n, smt_err *err)
{
    const glm_layout *L = &m->lay;
    glm_bigidx *X = &m->bix;
    free_bigidx(X);
    if (min_n == 0)
        min_n = 1;
    uint64_t nk[GLM_MAX_ORDER + 1] = {0}, total = 0;
    for (unsigned k = 2; k <= L->order; k++) {
        for (uint64_t p = 0; p < L->count[k - 1]; p++) {
            uint64_t first, n;
            glm_children(L, k - 1, p, &first, &n, L->qp != 0);
            if (n >= min_n)
                nk[k] += n;
        }
        if (nk[k]) {
            uint64_t ns = nk[k] + nk[k] * 3 / 7 + 1;
            if (ns >= UINT32_MAX)
                return 0; /* cannot happen for counts < 2^32 - 1 at 70%; no index then */
            X->nslots[k] = (uint32_t)ns;
            total += (ns * sizeof(glm_hslot) + 63) & ~63ull;
        }
    }
    if (!total)
        return 0;
    char *base = glm_alloc_huge((size_t)total, &X->mem, &X->mem_len);
    if (!base)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: cannot allocate the index (%llu bytes)",
                           smt_mapped_path(m->map), (unsigned long long)total);
    for (unsigned k = 2; k <= L->order; k++) {
        if (!X->nslots[k])
            continue;
        glm_hslot *t = (glm_hslot *)base;
        base += ((uint64_t)X->nslots[k] * sizeof(glm_hslot) + 63) & ~63ull;
        memset(t, 0xff, (size_t)X->nslots[k] * sizeof *t);
        glm_keys keys = glm_keys_at(L, k, 0, L->qp != 0);
        for (uint64_t p = 0; p < L->count[k - 1]; p++) {
            uint64_t first64, n64;
            glm_children(L, k - 1, p, &first64, &n64, L->qp != 0);
            uint32_t first = (uint32_t)first64, n = (uint32_t)n64;
            if (n < min_n)
                continue;
            for (uint32_t c = first; c < first + n; c++) {
                uint32_t key = glm_keys_get(keys, c);
                uint32_t i = glm_bigidx_slot((uint32_t)p, key, X->nslots[k]);
                while (t[i].idx != UINT32_MAX)
                    i = i + 1 == X->nslots[k] ? 0 : i + 1;
                t[i].key = key;
                t[i].idx = c;
            }
        }
        X->slots[k] = t;
    }
    X->min_n = (uint32_t)min_n;
    return 0;
}

int glm_bigidx_build(glm_model *m, uint64_t min_n, smt_err *err)
{
    int rc = bigidx_tables(m, min_n, err);
    /* the fast view holds the index's pointers: renewed whatever happened to the index */
    int rf = glm_fast_refresh(m);
    if (!rc && rf)
        rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    return rc;
}

int glm_open(glm_model **out, const char *path, unsigned flags, smt_err *err)
{
    *out = NULL;
    glm_model *m = calloc(1, sizeof *m);
    if (!m)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    int rc;
    if (smt_file_kind(path, NULL, NULL) == SMT_KIND_KENLM) { /* the second backend */
        if ((rc = glm_kenlm_open(m, path, flags, err)))
            goto fail;
        *out = m;
        return 0;
    }
    unsigned f = 0;
    if (flags & GLM_OPEN_VERIFY)
        f |= SMT_OPEN_VERIFY;
    if (flags & GLM_OPEN_POPULATE)
        f |= SMT_OPEN_POPULATE;
    if (flags & GLM_OPEN_READ)
        f |= SMT_OPEN_READ;
    rc = smt_mapped_open(&m->map, path, GLM_KIND, GLM_KIND_VERSION, f, err);
    if (rc)
        goto fail;
    size_t psize;
    const void *p = smt_mapped_params(m->map, &psize);
    if (!p || psize != sizeof m->par) {
        rc = smt_err_set(err, SMT_ERR_CORRUPT, "%s: parameter block has the wrong size", path);
        goto fail;
    }
    memcpy(&m->par, p, sizeof m->par);
    glm_params *par = &m->par;
    if (par->order < 2 || par->order > GLM_MAX_ORDER || par->K < GLM_MIN_K || par->K > GLM_MAX_K) {
        rc = smt_err_set(err, SMT_ERR_CORRUPT, "%s: bad order %u or node size %u", path,
                         par->order, par->K);
        goto fail;
    }
    for (unsigned k = 1; k <= par->order; k++)
        if (par->count[k] >= UINT32_MAX - 1) {
            rc = smt_err_set(err, SMT_ERR_CORRUPT, "%s: bad count of order %u", path, k);
            goto fail;
        }
    if ((rc = smt_vocab_load(&m->vocab, m->map, "vocab", err)))
        goto fail;
    if (m->vocab.n != par->count[1] || par->bos >= m->vocab.n || par->eos >= m->vocab.n) {
        rc = smt_err_set(err, SMT_ERR_CORRUPT, "%s: vocabulary does not match the unigrams", path);
        goto fail;
    }
    glm_layout *L = &m->lay;
    glm_layout_setup(L, par->order, par->K, par->count);
    uint32_t qp = par->quant & 0xff, qb = par->quant >> 8 & 0xff;
    if (par->quant && !(par->quant & GLM_QUANT_PACKED) && (par->quant >> 16) == 0) {
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                         "%s: a quantized .glm of the first quantized layout (32-bit keys, "
                         "written before the packed layout): no longer read; rebuild it with "
                         "glm build -q %u -b %u",
                         path, qp, qb);
        goto fail;
    }
    if (par->quant && ((par->quant >> 16) != (GLM_QUANT_PACKED >> 16) || qp < 1 ||
                       qp > GLM_MAX_QUANT_BITS || qb < 1 || qb > GLM_MAX_QUANT_BITS)) {
        rc = smt_err_set(err, SMT_ERR_CORRUPT,
                         "%s: quantization field 0x%x: not 1..%d probability and backoff bits",
                         path, par->quant, GLM_MAX_QUANT_BITS);
        goto fail;
    }
    uint64_t total_keys = 0, total_mid;
    for (unsigned k = 2; k <= par->order; k++)
        total_keys += par->count[k];
    const void *keys, *mid, *top = NULL, *qrec = NULL, *qbins = NULL, *qbase = NULL,
                            *qshape = NULL;
    uint64_t cnt;
    if (par->quant) {
        if ((rc = smt_mapped_require(m->map, "qshape", 4, GLM_QSHAPE_N, &qshape, &cnt, err)))
            goto fail;
        uint32_t shape[GLM_QSHAPE_N];
        memcpy(shape, qshape, sizeof shape);
        if (glm_layout_quant(L, qp, qb, shape)) {
            rc = smt_err_set(err, SMT_ERR_CORRUPT, "%s: section 'qshape' out of range", path);
            goto fail;
        }
    }
    total_mid = glm_layout_nmid(L);
    /* mid first: a quantized file read as a float file is told by its unigram-only mid */
    if ((rc = smt_mapped_require(m->map, "mid", sizeof(glm_mid), total_mid, &mid, &cnt, err)) ||
        (par->quant ? (rc = smt_mapped_require(m->map, "keys", 1, L->pkey_bytes, &keys, &cnt,
                                               err))
                    : (rc = smt_mapped_require(m->map, "keys", 4, total_keys, &keys, &cnt,
                                               err))) ||
        (par->quant
             ? (rc = smt_mapped_require(m->map, "qrec", 1, L->qrec_bytes, &qrec, &cnt, err)) ||
                   (rc = smt_mapped_require(m->map, "qbins", 4, L->nqbins, &qbins, &cnt, err)) ||
                   (rc = smt_mapped_require(m->map, "qbase", 4, L->nqbase, &qbase, &cnt, err))
             : (rc = smt_mapped_require(m->map, "top", 4, par->count[par->order], &top, &cnt,
                                        err))))
        goto fail;
    L->keys = par->quant ? NULL : keys;
    L->pkeys = par->quant ? keys : NULL;
    L->mid = mid;
    L->top = top;
    L->qrec = qrec;
    L->qbins = qbins;
    L->qbase = qbase;
    glm_layout_levels(L);
    if ((rc = check_children(m, err)) ||
        ((flags & GLM_OPEN_VERIFY) && L->kbits && (rc = check_keys(m, err))))
        goto fail;
    if ((flags & GLM_OPEN_HUGE) && (rc = load_huge(m, err)))
        goto fail;
    /* the default index: groups of at least GLM_INDEX_MIN keys (with K = 31: every B-tree 3 or
     * more nodes deep and the bigger 2-node ones) */
    if ((flags & GLM_OPEN_INDEX) && (rc = glm_bigidx_build(m, GLM_INDEX_MIN, err)))
        goto fail;
    if (!(flags & GLM_OPEN_INDEX) && glm_fast_refresh(m)) {
        rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    *out = m;
    return 0;
fail:
    glm_close(m);
    return rc;
}

void glm_close(glm_model *m)
{
    if (!m)
        return;
    if (m->huge)
        munmap(m->huge, m->huge_len);
    free_bigidx(&m->bix);
    glm_fast_free(m);
    glm_kenlm_close(m->ken);
    smt_mapped_close(m->map);
    free(m);
}

unsigned glm_order(const glm_model *m) { return m->par.order; }
uint32_t glm_node_size(const glm_model *m) { return m->par.K; }
uint64_t glm_count(const glm_model *m, unsigned n)
{
    return n >= 1 && n <= m->par.order ? m->par.count[n] : 0;
}
uint64_t glm_file_size(const glm_model *m)
{
    return m->ken ? m->ken->map_len : smt_mapped_file_size(m->map);
}
uint32_t glm_vocab_size(const glm_model *m) { return m->vocab.n; }
const char *glm_layout_name(const glm_model *m)
{
    static const char *const ken[6] = {"kenlm probing", "kenlm rest probing", "kenlm trie",
                                       "kenlm trie -q", "kenlm trie -a", "kenlm trie -a -q"};
    if (!m->ken)
        return "glm";
    return m->ken->type >= 0 && m->ken->type < 6 ? ken[m->ken->type] : "kenlm";
}

int glm_quantization(const glm_model *m, unsigned *prob_bits, unsigned *backoff_bits)
{
    unsigned p = 0, b = 0;
    if (m->ken && m->ken->quant) {
        p = m->ken->prob_bits;
        b = m->ken->backoff_bits;
    } else if (!m->ken && m->lay.qp) {
        p = m->lay.qp;
        b = m->lay.qb;
    }
    if (prob_bits)
        *prob_bits = p;
    if (backoff_bits)
        *backoff_bits = b;
    return p != 0;
}
uint64_t glm_index_bytes(const glm_model *m)
{
    uint64_t b = 0;
    for (unsigned k = 2; k <= m->par.order; k++)
        b += (uint64_t)m->bix.nslots[k] * sizeof(glm_hslot);
    return b;
}
glm_word glm_bos(const glm_model *m) { return m->par.bos; }
glm_word glm_eos(const glm_model *m) { return m->par.eos; }

glm_word glm_index(const glm_model *m, const char *word, size_t len)
{
    if (m->ken)
        return glm_kenlm_find_hashed(m->ken, glm_kenlm_word_hash(word, len));
    uint32_t id = smt_vocab_find(&m->vocab, word, len);
    return id == SMT_VOCAB_NONE ? GLM_UNK : id;
}

const char *glm_word_str(const glm_model *m, glm_word id, size_t *len)
{
    if (m->ken)
        return glm_kenlm_word(m->ken, id, len);
    return smt_vocab_word(&m->vocab, id, len);
}

/* ---------------------------------------------------------------- states */

void glm_state_null(glm_state *s) { memset(s, 0, sizeof *s); }

void glm_state_begin(const glm_model *m, glm_state *s)
{
    if (m->ken)
        glm_kenlm_state_start(m->ken, 0, s);
    else
        glm_state_start(&m->lay, m->par.bos, 0, s);
}

int glm_state_equal(const glm_state *a, const glm_state *b)
{
    return a->length == b->length &&
           memcmp(a->words, b->words, a->length * sizeof a->words[0]) == 0;
}

/* KenLM's hash_value(State): MurmurHash64A (seed 0) of the words' bytes, so hashes equal KenLM's */
uint64_t glm_state_hash(const glm_state *s)
{
    return glm_kenlm_word_hash((const char *)s->words, s->length * sizeof s->words[0]);
}

/* ---------------------------------------------------------------- scoring one word */

float glm_score_ref(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                    unsigned *ngram_length)
{
    if (m->ken)
        return glm_kenlm_score(m, in, w, out, ngram_length);
    return glm_score_walk(&m->lay, in, w, out, ngram_length);
}

float glm_phrase_estimate(const glm_model *m, const glm_word *w, size_t n)
{
    if (m->ken && glm_kenlm_has_rest(m->ken)) /* the rest costs at the phrase's left edge */
        return glm_kenlm_phrase_estimate(m, w, n);
    glm_state st;
    glm_state_null(&st);
    float total = 0;
    for (size_t i = 0; i < n; i++)
        total += glm_score(m, &st, w[i], &st, NULL);
    return total;
}

float glm_score(const glm_model *m, const glm_state *in, glm_word w, glm_state *out,
                unsigned *ngram_length)
{
    if (m->ken)
        return glm_kenlm_score(m, in, w, out, ngram_length);
    if (m->fast)
        return glm_score_fast(m, in, w, out, ngram_length);
    return glm_score_walk(&m->lay, in, w, out, ngram_length);
}

int glm_load(glm_model **out, const char *path, unsigned flags, const glm_build_options *bopt,
             smt_err *err)
{
    *out = NULL;
    int kind = smt_file_kind(path, NULL, err);
    if (kind < 0)
        return kind;
    if (kind == SMT_KIND_FASTSMT) /* glm_open names another kind, or an incomplete file */
        return glm_open(out, path, flags, err);
    if (kind == SMT_KIND_KENLM) /* queried in place (glm_kenlm.c) */
        return glm_open(out, path, flags, err);
    char tmp[4096];
    int rc = smt_temp_file("glm-arpa-", tmp, sizeof tmp, err);
    if (rc)
        return rc;
    rc = glm_build(path, tmp, bopt, NULL, err);
    if (!rc)
        rc = glm_open(out, tmp, flags, err);
    unlink(tmp); /* an open model keeps its mapping (or its copy) */
    return rc;
}
