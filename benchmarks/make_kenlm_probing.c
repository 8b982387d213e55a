/* make_kenlm_probing.c — a benchmark helper (not a tool, not installed): writes an ARPA model as a
 * KenLM probing binary (format version 5, model type 0), exactly the layout glm/glm_kenlm.c reads
 * (its header comment describes it), so glm's probing query path can be timed (bench_glm) on a
 * model for which no KenLM binary exists here (the mono lm.5; issue 12).
 *
 *   make_kenlm_probing [-m MULTIPLIER] model.arpa[.xz] out.binary
 *
 * The ARPA file is read by glm's own reader (glm_arpa_read: KenLM's semantics, missing suffixes
 * inserted). Word ids are glm's (ARPA order, <unk> 0), as KenLM's probing layout numbers them.
 * Each stored probability of an order below the highest has its sign bit clear when some n-gram
 * one order up has it as its suffix (KenLM's "extends left"), set otherwise (a unigram: as read).
 * Checked: byte-identical to KenLM's build_binary -s probing of tests/data/glm/chain.arpa, the
 * sample lm.3 and the bible lm.5 (../shared/reference/kenlm-binaries). The multiplier is
 * KenLM's default, 1.5. No checksums: KenLM's format has none (this is why a glm-native hashed
 * layout would be its own container). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_num.h"

static const char magic[] = "mmap lm http://kheafield.com/code format version 5\n";

static uint64_t buckets_for(uint64_t entries, float mult)
{
    float f = mult * (float)entries; /* as KenLM (and glm_kenlm.c) size a table */
    uint64_t b = (uint64_t)f;
    return b > entries + 1 ? b : entries + 1;
}

static uint64_t combine(uint64_t cur, uint32_t next)
{
    return (cur * 8978948897894561157ull) ^ ((uint64_t)(1u + (uint64_t)next) * 17894857484156487943ull);
}

static float set_sign(float p, int negative)
{
    uint32_t u;
    memcpy(&u, &p, 4);
    u = negative ? (u | 0x80000000u) : (u & 0x7fffffffu);
    memcpy(&p, &u, 4);
    return p;
}

/* Inserts an entry (key first, esz bytes) by linear probing; returns -1 on a zero or duplicate
 * key (a KenLM binary cannot hold either). */
static int put(uint8_t *tab, uint64_t buckets, size_t esz, uint64_t key, const void *payload,
               size_t plen)
{
    if (key == 0)
        return -1;
    uint64_t i = key % buckets;
    for (;;) {
        uint8_t *e = tab + i * esz;
        uint64_t got;
        memcpy(&got, e, 8);
        if (got == 0) {
            memcpy(e, &key, 8);
            memcpy(e + 8, payload, plen);
            return 0;
        }
        if (got == key)
            return -1;
        if (++i == buckets)
            i = 0;
    }
}

static int write_all(FILE *f, const void *p, size_t n, const char *path)
{
    if (n && fwrite(p, 1, n, f) != n) {
        fprintf(stderr, "%s: write error: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    float mult = 1.5f;
    int ai = 1;
    if (argc == 5 && strcmp(argv[1], "-m") == 0) {
        double d;
        smt_err e;
        if (smt_parse_double_arg("-m", argv[2], 1.0000001, 1000.0, &d, &e)) {
            fprintf(stderr, "make_kenlm_probing: %s\n", e.msg);
            return 2;
        }
        mult = (float)d;
        ai = 3;
    }
    if (argc - ai != 2) {
        fprintf(stderr, "usage: make_kenlm_probing [-m MULTIPLIER>1] model.arpa[.xz] out.binary\n");
        return 2;
    }
    const char *in = argv[ai], *out = argv[ai + 1];
    glm_arpa a;
    smt_err err = {0};
    if (glm_arpa_read(&a, in, 0, stderr, -100.0f, 0, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    unsigned N = a.order;
    uint64_t count[GLM_MAX_ORDER + 1] = {0};
    count[1] = a.nvocab;
    for (unsigned n = 2; n <= N; n++)
        count[n] = a.o[n].count;

    /* "extends left": the n-gram is the suffix (the reversed ids' prefix) of an (n+1)-gram */
    uint8_t *ext[GLM_MAX_ORDER + 1] = {0};
    for (unsigned n = 1; n < N; n++) {
        ext[n] = calloc(count[n], 1);
        if (!ext[n])
            return fprintf(stderr, "out of memory\n"), 1;
    }
    for (unsigned n = 2; n <= N; n++) {
        const glm_ostore *s = &a.o[n];
        for (uint64_t r = 0; r < s->count; r++) {
            const uint32_t *ids = s->ids + r * n;
            if (n == 2) {
                ext[1][ids[0]] = 1;
            } else {
                int64_t j = glm_ostore_find(&a.o[n - 1], ids);
                if (j < 0) {
                    fprintf(stderr, "a %u-gram without its suffix (cannot happen)\n", n);
                    return 1;
                }
                ext[n - 1][j] = 1;
            }
        }
    }

    FILE *f = fopen(out, "wb");
    if (!f)
        return fprintf(stderr, "%s: %s\n", out, strerror(errno)), 1;
    /* the sanity header (88 bytes) and the fixed parameters (20 bytes), counts, padded to 8 */
    uint8_t hdr[256] = {0};
    memcpy(hdr, magic, sizeof magic - 1);
    const float tf[3] = {0.0f, 1.0f, -0.5f};
    const uint32_t tu[3] = {1u, UINT32_MAX, 0u};
    const uint64_t one = 1;
    memcpy(hdr + 56, tf, sizeof tf);
    memcpy(hdr + 68, tu, sizeof tu);
    memcpy(hdr + 80, &one, 8);
    uint8_t *fx = hdr + 88;
    fx[0] = (uint8_t)N;
    memcpy(fx + 4, &mult, 4);
    int32_t type = 0;
    memcpy(fx + 8, &type, 4);
    fx[12] = 1; /* has_vocabulary: the words follow the tables */
    uint32_t sv = 0;
    memcpy(fx + 16, &sv, 4);
    for (unsigned n = 1; n <= N; n++)
        memcpy(fx + 20 + 8 * (n - 1), &count[n], 8);
    size_t hlen = (88 + 20 + 8 * (size_t)N + 7) & ~(size_t)7;
    if (write_all(f, hdr, hlen, out))
        return 1;

    /* the vocabulary: {uint32 version 0, uint32 bound}, then {hash, id} for every word but <unk> */
    smt_vocab v = smt_vocab_builder_view(a.vocab);
    uint32_t vh[2] = {0, (uint32_t)count[1]};
    if (write_all(f, vh, 8, out))
        return 1;
    uint64_t vb = buckets_for(count[1], mult);
    uint8_t *tab = calloc(vb, 12);
    if (!tab)
        return fprintf(stderr, "out of memory\n"), 1;
    for (uint32_t id = 1; id < count[1]; id++) {
        size_t len;
        const char *w = smt_vocab_word(&v, id, &len);
        if (put(tab, vb, 12, glm_kenlm_word_hash(w, len), &id, 4))
            return fprintf(stderr, "word %u: zero or colliding hash\n", id), 1;
    }
    if (write_all(f, tab, vb * 12, out))
        return 1;
    free(tab);

    /* unigrams {prob, backoff} x (count[1] + 1) */
    float *uni = calloc(2 * (count[1] + 1), sizeof *uni);
    if (!uni)
        return fprintf(stderr, "out of memory\n"), 1;
    for (uint64_t w = 0; w < count[1]; w++) {
        /* KenLM clears the sign of an extended unigram and leaves the others as read, so the
         * "0" of <s> stays +0.0 (glm's reader gives -0.0); only a walk predicting <s> sees it */
        uni[2 * w] = ext[1][w] || a.uprob[w] == 0.0f ? set_sign(a.uprob[w], 0) : a.uprob[w];
        uni[2 * w + 1] = a.ubo[w];
    }
    if (write_all(f, uni, 8 * (count[1] + 1), out))
        return 1;
    free(uni);

    /* orders 2..N: {key, prob, backoff} (16 bytes), the highest {key, prob} (12 bytes) */
    for (unsigned n = 2; n <= N; n++) {
        const glm_ostore *s = &a.o[n];
        size_t esz = n < N ? 16 : 12;
        uint64_t nb = buckets_for(count[n], mult);
        tab = calloc(nb, esz);
        if (!tab)
            return fprintf(stderr, "out of memory\n"), 1;
        for (uint64_t r = 0; r < s->count; r++) {
            const uint32_t *ids = s->ids + r * n;
            uint64_t key = ids[0];
            for (unsigned i = 1; i < n; i++)
                key = combine(key, ids[i]);
            float pay[2] = {n < N ? set_sign(s->prob[r], !ext[n][r]) : s->prob[r],
                            n < N ? s->bo[r] : 0.0f};
            if (put(tab, nb, esz, key, pay, esz - 8))
                return fprintf(stderr, "%u-gram %llu: zero or colliding key\n", n,
                               (unsigned long long)r), 1;
        }
        if (write_all(f, tab, nb * esz, out))
            return 1;
        free(tab);
    }
    /* the words in id order, NUL-terminated, <unk> first */
    for (uint32_t id = 0; id < count[1]; id++) {
        size_t len;
        const char *w = smt_vocab_word(&v, id, &len);
        if (write_all(f, w, len + 1, out)) /* the vocabulary's strings are NUL-terminated */
            return 1;
    }
    if (fclose(f)) {
        fprintf(stderr, "%s: %s\n", out, strerror(errno));
        return 1;
    }
    for (unsigned n = 1; n < N; n++)
        free(ext[n]);
    glm_arpa_free(&a);
    return 0;
}
