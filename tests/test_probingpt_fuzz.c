#define _GNU_SOURCE
/* Damaged-but-valid files: a small table is built, its sections are read back through smt_mapped,
 * damaged in a copy (random bytes and bits, boundary values in 32- and 64-bit words, sections a few
 * bytes shorter or longer, every field of the parameter block) and written again with smt_writer,
 * so every checksum matches the damaged content and only the reader's own bounds checks stand
 * between the damage and a crash. Each such file is opened WITHOUT verification and then looked up
 * (every source of the fixture, by string and by ids), iterated, dumped and verified: any of these
 * may report an error, none may crash (run under ASan/UBSan too). Also: older layouts (format
 * version 1, 16-byte hash slots) fail to open, and the per-target reordering bit. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ppt_format.h"
#include "probingpt.h"
#include "smt_file.h"
#include "testutil.h"

static char *dir;
static void setup(void)
{
    /* a thousand small files are written (and synced): on tmpfs when there is one */
    char tmpl[] = "/dev/shm/fastsmt-pptfuzz-XXXXXX";
    dir = access("/dev/shm", W_OK) == 0 && mkdtemp(tmpl) ? strdup(tmpl) : tu_tmpdir();
    cr_assert_not_null(dir);
}
static void teardown(void) { tu_rmtree(dir); free(dir); }
TestSuite(ppt_fuzz, .init = setup, .fini = teardown);

#define N_SRC 48

/* The fixture: N_SRC sources of 1-4 words with 1-4 targets each, every field layout (3 to 6 fields,
 * several distinct extra strings, empty alignments and counts), a reordering entry for most pairs. */
static char *srcs[N_SRC];

static void write_fixture(const char *pt_path, const char *rt_path)
{
    FILE *pt = fopen(pt_path, "w"), *rt = fopen(rt_path, "w");
    cr_assert(pt && rt);
    static const char *const extra[] = {" |||", " ||| x", " ||| y z", ""};
    for (int i = 0; i < N_SRC; i++) {
        char s[64];
        int len = 1 + i % 4, n = 0;
        for (int k = 0; k < len; k++)
            n += snprintf(s + n, sizeof s - (size_t)n, k ? " w%d" : "s%d", k ? (i * 7 + k * 3) % 11 : i);
        free(srcs[i]);
        srcs[i] = strdup(s);
        int nt = 1 + (i * 5) % 4;
        for (int j = 0; j < nt; j++) {
            int tl = j && (i + j) % 3 == 0 ? 1 : (i + j) % 3; /* 0: an empty target, once per source */
            char t[64] = "";
            for (int k = 0, m = 0; k < tl; k++)
                m += snprintf(t + m, sizeof t - (size_t)m, k ? " t%d" : "t%d", (i + j * 13 + k) % 17);
            int nf = 3 + (i + j) % 4;
            fprintf(pt, "%s ||| %s ||| 0.%d 0.5 0.25", s, t, 1 + j);
            if (nf >= 4) {
                fprintf(pt, " |||");
                for (int k = 0; k < (j % 2 ? len : 0) && tl; k++)
                    fprintf(pt, " %d-%d", k, k % tl);
            }
            if (nf >= 5)
                fprintf(pt, " |||%s", j % 3 ? " 1 2 3" : "");
            if (nf >= 6)
                fprintf(pt, " |||%s", extra[(i + j) % 4]);
            fprintf(pt, "\n");
            if ((i + j) % 5)
                fprintf(rt, "%s ||| %s ||| 0.%d 0.2 0.3 0.4 0.5 0.6\n", s, t, 1 + j);
        }
    }
    fclose(pt);
    fclose(rt);
}

static int build(const char *pt, const char *rt, const char *out)
{
    ppt_build_options o;
    memset(&o, 0, sizeof o);
    o.phrase_table = pt;
    o.reordering = rt;
    o.out = out;
    o.progress = -1;
    smt_err e;
    int rc = ppt_build(&o, NULL, &e);
    cr_assert_eq(rc, 0, "%s", e.msg);
    return rc;
}

/* ---- a file as sections, to damage and write back ---- */

typedef struct {
    char name[SMT_FILE_SECTION_NAME_MAX + 1];
    unsigned char *data;
    uint64_t size;
} section;

typedef struct {
    unsigned char params[SMT_FILE_PARAMS_MAX];
    size_t params_size;
    uint32_t version;
    unsigned n;
    section s[SMT_FILE_SECTIONS_MAX];
} image;

static void image_load(image *im, const char *path)
{
    smt_mapped *m;
    smt_err e;
    cr_assert_eq(smt_mapped_open(&m, path, PPT_KIND, PPT_FORMAT_VERSION, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    memset(im, 0, sizeof *im);
    const void *pp = smt_mapped_params(m, &im->params_size);
    memcpy(im->params, pp, im->params_size);
    im->version = PPT_FORMAT_VERSION;
    im->n = smt_mapped_section_count(m);
    for (unsigned i = 0; i < im->n; i++) {
        const char *name;
        uint64_t off, size, sum;
        smt_mapped_section_info(m, i, &name, &off, &size, &sum);
        snprintf(im->s[i].name, sizeof im->s[i].name, "%s", name);
        const void *d = smt_mapped_section(m, name, &size);
        im->s[i].size = size;
        im->s[i].data = malloc(size + 64);
        cr_assert_not_null(im->s[i].data);
        memcpy(im->s[i].data, d, size);
    }
    smt_mapped_close(m);
}

static void image_copy(image *dst, const image *src)
{
    *dst = *src;
    for (unsigned i = 0; i < src->n; i++) {
        dst->s[i].data = malloc(src->s[i].size + 64);
        cr_assert_not_null(dst->s[i].data);
        memcpy(dst->s[i].data, src->s[i].data, src->s[i].size);
    }
}

static void image_free(image *im)
{
    for (unsigned i = 0; i < im->n; i++)
        free(im->s[i].data);
}

static void image_write(const image *im, const char *path)
{
    smt_writer *w;
    smt_err e;
    cr_assert_eq(smt_writer_open(&w, path, PPT_KIND, im->version, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_writer_set_params(w, im->params, im->params_size, &e), 0, "%s", e.msg);
    for (unsigned i = 0; i < im->n; i++)
        cr_assert_eq(smt_writer_section(w, im->s[i].name, im->s[i].data, im->s[i].size, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_writer_finish(w, &e), 0, "%s", e.msg);
}

/* Moves section i to the end of the file: the reader finds sections by name, and with SMT_OPEN_READ
 * (a heap copy of the file) ASan then sees any read past the end of that section. Sections in the
 * middle of a mapping would hide such a read. */
static void image_move_last(image *im, unsigned i)
{
    section s = im->s[i];
    memmove(im->s + i, im->s + i + 1, (im->n - i - 1) * sizeof s);
    im->s[im->n - 1] = s;
}

static section *image_section(image *im, const char *name)
{
    for (unsigned i = 0; i < im->n; i++)
        if (!strcmp(im->s[i].name, name))
            return &im->s[i];
    cr_assert_fail("no section %s", name);
    return NULL;
}

/* ---- using a table every way there is ---- */

static volatile uint64_t sink;

static void touch_target(const ppt_table *t, const ppt_targets *g, const ppt_target *x)
{
    uint64_t h = 0;
    size_t len;
    for (uint32_t i = 0; i < g->src_len; i++)
        h += (uint64_t)smt_vocab_word(ppt_src_vocab(t), g->src_ids[i], &len)[0] + len;
    for (uint32_t i = 0; i < x->n_words; i++)
        h += (uint64_t)smt_vocab_word(ppt_tgt_vocab(t), x->words[i], &len)[0] + len;
    for (uint32_t i = 0; i < ppt_num_scores(t); i++)
        h += (uint64_t)(x->scores[i] != 0);
    for (uint32_t i = 0; x->reordering && i < ppt_num_reordering_scores(t); i++)
        h += (uint64_t)(x->reordering[i] != 0);
    for (uint32_t i = 0; i < x->n_counts; i++)
        h += (uint64_t)(x->counts[i] != 0);
    for (uint32_t i = 0; i < 2 * x->n_align; i++)
        h += x->align[i];
    if (x->extra_id != SMT_VOCAB_NONE)
        h += (uint64_t)ppt_extra_text(t, x->extra_id, &len)[0] + len;
    h += (uint64_t)x->has_reordering + x->n_fields;
    sink += h;
}

static int iterate(const ppt_table *t, ppt_targets *g)
{
    ppt_target x;
    uint32_t n = 0;
    while (ppt_targets_next(g, &x)) {
        touch_target(t, g, &x);
        n++;
    }
    cr_assert_leq(n, g->n);
    return g->error;
}

static int foreach_fn(void *ctx, ppt_targets *g)
{
    (void)ctx;
    return iterate(g->table, g);
}

static void exercise(const ppt_table *t)
{
    for (int i = 0; i < N_SRC; i++) {
        ppt_targets g;
        int rc = ppt_lookup(t, srcs[i], strlen(srcs[i]), &g);
        cr_assert(rc == 0 || rc == SMT_ERR_NOTFOUND || rc == SMT_ERR_CORRUPT, "lookup rc %d", rc);
        if (rc == 0) {
            iterate(t, &g);
            /* the same phrase by ids (from the group), then ids that are rarely in the table */
            uint32_t ids[PPT_MAX_PHRASE_LEN];
            memcpy(ids, g.src_ids, g.src_len * sizeof *ids);
            if (ppt_lookup_ids(t, ids, g.src_len, &g) == 0)
                iterate(t, &g);
        }
    }
    uint32_t odd[4] = {0, 1, UINT32_MAX - 1, UINT32_MAX};
    for (size_t n = 1; n <= 4; n++) {
        ppt_targets g;
        if (ppt_lookup_ids(t, odd, n, &g) == 0)
            iterate(t, &g);
        if (ppt_lookup_ids(t, odd + 4 - n, n, &g) == 0)
            iterate(t, &g);
    }
    ppt_foreach(t, foreach_fn, NULL);
    FILE *f = fopen("/dev/null", "w");
    cr_assert_not_null(f);
    smt_err e;
    ppt_dump(t, f, f, &e);
    fclose(f);
    ppt_verify(t, &e);
}

/* Writes im to path, opens it without verification (flags: 0 or SMT_OPEN_READ) and exercises it.
 * Returns 1 when it opened. */
static int try_image(const image *im, const char *path, unsigned flags)
{
    image_write(im, path);
    ppt_table *t;
    smt_err e;
    int rc = ppt_open(&t, path, flags, &e);
    if (rc) {
        cr_assert(rc == SMT_ERR_CORRUPT || rc == SMT_ERR_FORMAT || rc == SMT_ERR_VERSION,
                  "open rc %d: %s", rc, e.msg);
        cr_assert(strstr(e.msg, path) != NULL, "message names the file: %s", e.msg);
        return 0;
    }
    exercise(t);
    ppt_close(t);
    return 1;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 7;
    rnd_state ^= rnd_state << 17;
    return rnd_state;
}

/* One damage at a random place of d[0..size). */
static void damage(unsigned char *d, uint64_t size)
{
    static const uint32_t v32[] = {0, 1, 2, 3, 4, 6, 0xff, 0x100, 0x1fff, 0x7fffffff, 0x80000000u,
                                   0xfffffffeu, 0xffffffffu};
    static const uint64_t v64[] = {0, 1, 2, 3, 64, 1ull << 32, (1ull << 40) - 1, 1ull << 40,
                                   0x7fffffffffffffffull, UINT64_MAX - 1, UINT64_MAX};
    uint64_t pos = rnd() % size;
    switch (rnd() % 6) {
    case 0:
        d[pos] = (unsigned char)rnd();
        break;
    case 1:
        d[pos] ^= (unsigned char)(1u << rnd() % 8);
        break;
    case 2: /* a 32-bit word: a boundary value, or off by one */
    case 3:
        if (size >= 4) {
            uint32_t w;
            pos = pos / 4 * 4 + 4 <= size ? pos / 4 * 4 : size - 4;
            memcpy(&w, d + pos, 4);
            uint64_t k = rnd() % (sizeof v32 / sizeof *v32 + 2);
            w = k == 0 ? w + 1 : k == 1 ? w - 1 : v32[k - 2];
            memcpy(d + pos, &w, 4);
        }
        break;
    default: /* a 64-bit word (hash slots, vocabulary offsets, params) */
        if (size >= 8) {
            uint64_t w;
            pos = pos / 8 * 8 + 8 <= size ? pos / 8 * 8 : size - 8;
            memcpy(&w, d + pos, 8);
            uint64_t k = rnd() % (sizeof v64 / sizeof *v64 + 3);
            w = k == 0 ? w + 1 : k == 1 ? w - 1 : k == 2 ? w ^ 1ull << (rnd() % 64) : v64[k - 3];
            memcpy(d + pos, &w, 8);
        }
        break;
    }
}

Test(ppt_fuzz, damaged_files_with_valid_checksums_never_crash)
{
    char *pt = tu_join(dir, "f.pt"), *rt = tu_join(dir, "f.rt"), *good = tu_join(dir, "g.ppt"),
         *bad = tu_join(dir, "bad.ppt");
    write_fixture(pt, rt);
    build(pt, rt, good);
    image base;
    image_load(&base, good);
    cr_assert_gt(base.n, 10);
    /* the rewrite itself is faithful: the undamaged copy opens with verification and answers */
    image_write(&base, bad);
    ppt_table *t;
    smt_err e;
    cr_assert_eq(ppt_open(&t, bad, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    for (int i = 0; i < N_SRC; i++) {
        ppt_targets g;
        cr_assert_eq(ppt_lookup(t, srcs[i], strlen(srcs[i]), &g), 0, "%s", srcs[i]);
        cr_assert_eq(iterate(t, &g), 0);
    }
    uint32_t src_words = ppt_src_vocab(t)->n;
    ppt_close(t);

    int trials = 0, opened = 0;
    /* every section, and the parameter block (index base.n) */
    for (unsigned s = 0; s <= base.n; s++) {
        for (int k = 0; k < 60; k++) {
            image im;
            image_copy(&im, &base);
            unsigned char *d = s < base.n ? im.s[s].data : im.params;
            uint64_t size = s < base.n ? im.s[s].size : im.params_size;
            if (size == 0) {
                image_free(&im);
                break;
            }
            int nd = 1 + (int)(rnd() % 3);
            for (int j = 0; j < nd; j++)
                damage(d, size);
            if (s < base.n && k % 15 == 14) { /* a few elements more or fewer */
                int64_t delta = (int64_t)(rnd() % 17) - 8;
                if (delta < 0 && (uint64_t)-delta > im.s[s].size)
                    delta = -(int64_t)im.s[s].size;
                if (delta > 0)
                    memset(im.s[s].data + im.s[s].size, (int)(rnd() & 0xff), (size_t)delta);
                im.s[s].size = (uint64_t)((int64_t)im.s[s].size + delta);
            }
            if (s < base.n)
                image_move_last(&im, s);
            opened += try_image(&im, bad, k % 2 ? SMT_OPEN_READ : 0);
            trials++;
            image_free(&im);
        }
    }
    /* every 32-bit field of the parameter block, set to each boundary value */
    for (size_t pos = 0; pos + 4 <= base.params_size; pos += 4) {
        static const uint32_t v[] = {0, 1, 0xffffffffu, 0x80000000u};
        for (size_t k = 0; k < 4; k++) {
            image im;
            image_copy(&im, &base);
            memcpy(im.params + pos, &v[k], 4);
            opened += try_image(&im, bad, 0);
            trials++;
            image_free(&im);
        }
    }
    cr_assert_gt(opened, trials / 10, "%d of %d damaged files opened: the test damages too much", opened, trials);

    /* structure-aware: each field of group headers and records set to a boundary value */
    section *pl = image_section(&base, "payload");
    const uint32_t *w = (const uint32_t *)(const void *)pl->data;
    uint64_t words = pl->size / 4, groups = 0;
    ppt_params p;
    memcpy(&p, base.params, sizeof p);
    unsigned pli = (unsigned)(pl - base.s);
    for (uint64_t off = 0; off < words; off += w[off + 2], groups++) {
        if (groups % 3 && off + w[off + 2] < words) /* every third group, and the last */
            continue;
        uint64_t r = off + PPT_GROUP_HEADER + w[off], rl = r;
        for (uint32_t k = 1; k < w[off + 1]; k++)
            rl += ppt_record_words(w[rl], p.num_scores, p.num_reordering_scores);
        uint32_t info = w[r], il = w[rl];
        /* one or two words changed: a field of the group header, of its first or last record (at2 0:
         * none, word 0 is never a second change) */
        struct { uint64_t at; uint32_t v; uint64_t at2; uint32_t v2; } m[] = {
            {off, 0, 0, 0}, {off, w[off] + 1, 0, 0}, {off, 0xffffffffu, 0, 0}, {off + 1, 0, 0, 0}, {off + 1, w[off + 1] + 1, 0, 0},
            {off + 1, 0xffffffffu, 0, 0}, {off + 2, 0, 0, 0}, {off + 2, w[off + 2] + 1, 0, 0}, {off + 2, w[off + 2] - 1, 0, 0},
            {off + 2, 0xffffffffu, 0, 0}, {off + 3, src_words, 0, 0}, {off + 3, 0xffffffffu, 0, 0},
            {r, info | 0xffu, 0, 0}, {r, info + 1, 0, 0}, {r, info | 0xff00u, 0, 0}, {r, info + 0x100u, 0, 0},
            {r, info & ~0x30000u, 0, 0}, {r, info | 0x30000u, 0, 0}, {r, info ^ PPT_INFO_REORDERING, 0, 0},
            {r, (info & 0x7ffffu) | 0x1fffu << 19, 0, 0}, {r, (info & 0x7ffffu) | 0x1ffeu << 19, 0, 0},
            {r, (info & 0x7ffffu) | (uint32_t)(p.num_extra + 1) << 19, 0, 0}, {r, (info & 0x7ffffu) | 1u << 19, 0, 0},
            {r + 1, (uint32_t)p.num_align, 0, 0}, {r + 1, 0xffffffffu, 0, 0}, {r + 2, 0xffffffffu, 0, 0}, {r + 2, w[r + 2] + 1000, 0, 0},
            {rl, il | 0xff00u, 0, 0}, {rl, il | 0xffu, 0, 0}, {rl, il + 0x100u, 0, 0},
            {off + 2, 0xffffffffu, rl, il | 0xff00u}, {off + 2, w[off + 2] + 1, rl, il + 0x100u},
            {off + 2, w[off + 2] + 1, rl, il | 0xffu}, {off + 1, w[off + 1] + 1, off + 2, 0xffffffffu},
        };
        for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
            if (m[k].at >= words)
                continue;
            image im;
            image_copy(&im, &base);
            memcpy(im.s[pli].data + 4 * m[k].at, &m[k].v, 4);
            if (m[k].at2 && m[k].at2 < words)
                memcpy(im.s[pli].data + 4 * m[k].at2, &m[k].v2, 4);
            image_move_last(&im, pli);
            try_image(&im, bad, k % 2 ? SMT_OPEN_READ : 0);
            trials++;
            image_free(&im);
        }
    }
    cr_assert_gt(groups, 10);
    image_free(&base);
    free(pt); free(rt); free(good); free(bad);
}

/* Files of an older layout give a clear error at open, not garbage at the first lookup. */
Test(ppt_fuzz, older_layouts_fail_to_open)
{
    char *pt = tu_join(dir, "f.pt"), *rt = tu_join(dir, "f.rt"), *good = tu_join(dir, "g.ppt"),
         *bad = tu_join(dir, "bad.ppt");
    write_fixture(pt, rt);
    build(pt, rt, good);
    image base;
    image_load(&base, good);
    ppt_table *t;
    smt_err e;

    /* format version 1 (16-byte slots, then 3-word target headers, then no reordering bit) */
    image im;
    image_copy(&im, &base);
    im.version = 1;
    image_write(&im, bad);
    cr_assert_eq(ppt_open(&t, bad, 0, &e), SMT_ERR_VERSION);
    cr_assert(strstr(e.msg, "version 1") && strstr(e.msg, "bad.ppt"), "%s", e.msg);
    image_free(&im);

    /* the first layout under the current version number: 16-byte {key, offset} slots */
    image_copy(&im, &base);
    section *h = image_section(&im, "hash");
    uint64_t n = h->size / 8;
    unsigned char *wide = malloc(16 * n + 64);
    cr_assert_not_null(wide);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t s, key, off;
        memcpy(&s, h->data + 8 * i, 8);
        key = s == UINT64_MAX ? 0 : s;
        off = s == UINT64_MAX ? UINT64_MAX : s & ((1ull << PPT_SLOT_OFFSET_BITS) - 1);
        memcpy(wide + 16 * i, &key, 8);
        memcpy(wide + 16 * i + 8, &off, 8);
    }
    free(h->data);
    h->data = wide;
    h->size = 16 * n;
    image_write(&im, bad);
    cr_assert_eq(ppt_open(&t, bad, 0, &e), SMT_ERR_CORRUPT, "%s", e.msg);
    /* with num_slots doubled in the parameters to match the section */
    ppt_params p;
    memcpy(&p, im.params, sizeof p);
    p.num_slots *= 2;
    memcpy(im.params, &p, sizeof p);
    image_write(&im, bad);
    cr_assert_eq(ppt_open(&t, bad, 0, &e), SMT_ERR_CORRUPT, "%s", e.msg);
    image_free(&im);

    /* the current layout still opens */
    cr_assert_eq(ppt_open(&t, good, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    ppt_close(t);
    image_free(&base);
    free(pt); free(rt); free(good); free(bad);
}

/* has_reordering: 1 exactly for the pairs the reordering table had; the others hold the defaults. */
Test(ppt_fuzz, has_reordering_marks_pairs_with_an_entry)
{
    char *pt = tu_join(dir, "f.pt"), *rt = tu_join(dir, "f.rt"), *good = tu_join(dir, "g.ppt"),
         *nort = tu_join(dir, "n.ppt");
    write_fixture(pt, rt);
    build(pt, rt, good);
    build(pt, NULL, nort);
    ppt_table *t, *u;
    smt_err e;
    cr_assert_eq(ppt_open(&t, good, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_open(&u, nort, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    int with = 0, without = 0;
    for (int i = 0; i < N_SRC; i++) {
        ppt_targets g, h;
        ppt_target x, y;
        cr_assert_eq(ppt_lookup(t, srcs[i], strlen(srcs[i]), &g), 0);
        cr_assert_eq(ppt_lookup(u, srcs[i], strlen(srcs[i]), &h), 0);
        for (int j = 0; ppt_targets_next(&g, &x); j++) {
            cr_assert_eq(ppt_targets_next(&h, &y), 1);
            cr_assert_eq(y.has_reordering, 0);
            cr_assert_null(y.reordering);
            int expect = (i + j) % 5 != 0;
            cr_assert_eq(x.has_reordering, expect, "source %d target %d: %d, n_words %u", i, j, x.has_reordering, x.n_words);
            if (expect) {
                with++;
                cr_assert_float_eq(x.reordering[5], 0.6f, 1e-6);
            } else {
                without++;
                for (int k = 0; k < 6; k++) /* the default for 6 scores: 1/3 */
                    cr_assert_float_eq(x.reordering[k], 1.0f / 3.0f, 1e-6);
            }
        }
        cr_assert_eq(g.error, 0);
    }
    cr_assert_gt(with, 0);
    cr_assert_gt(without, 0);
    ppt_close(t);
    ppt_close(u);
    free(pt); free(rt); free(good); free(nort);
}
