/* Building a .ppt file: stream the phrase table, assemble one group per source phrase (the lines of
 * a source are contiguous in what Moses writes), merge the reordering table in lockstep
 * (ppt_reorder.c), then write hash table, payload, vocabularies and alignments. Memory holds the
 * output (payload, vocabularies, one index entry per source), never the input. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppt_format.h"
#include "ppt_reorder.h"
#include "ppt_text.h"
#include "smt_buf.h"
#include "smt_lines.h"
#include "smt_progress.h"
#include "smt_vocab.h"

/* A growing array of words. */
typedef struct {
    uint32_t *v;
    size_t n, cap;
} u32v;

/* Ensures room for `extra` more words; returns 0 or -1 (out of memory). */
static inline int u32v_reserve(u32v *b, size_t extra)
{
    if (extra <= b->cap - b->n)
        return 0;
    return extra > SIZE_MAX - b->n || smt_grow(&b->v, &b->cap, b->n + extra, sizeof *b->v, 1024)
               ? -1
               : 0;
}

/* A target of the group being assembled. */
typedef struct {
    size_t off;      /* in cur (words) */
    uint32_t words;
    uint8_t unmatched; /* still has the default reordering scores */
    double rank;     /* weights . ln(scores), for table_limit */
    size_t index;    /* input order, the tie-break */
} ppt_tmeta;

/* One chunk of a source group in the payload; input that is not grouped by source gives several
 * chunks of one source, merged at the end. */
typedef struct {
    uint64_t key;
    uint64_t off;  /* payload words */
    uint64_t next; /* next chunk of the same source, UINT64_MAX at the last */
    uint64_t last; /* (head chunks) the last chunk, for appending */
    int head;
} ppt_chunk;

typedef struct ppt_builder {
    const ppt_build_options *opt;
    ppt_build_report *rep;
    smt_err *err;
    smt_lines *pt;
    const char *pt_path;
    uint32_t ns, nr;         /* scores, reordering scores */
    float rdefault[PPT_MAX_SCORES];
    float weights[PPT_MAX_SCORES];
    uint64_t mask;

    smt_vocab_builder *src, *tgt, *extra, *align_text;
    u32v align_off;          /* points; n+1 */
    uint8_t *align_pts;
    size_t n_pts, cap_pts;
    uint8_t *align_max;      /* per alignment: max source pos + 1, max target pos + 1 */
    size_t cap_align_max;

    u32v payload;
    ppt_chunk *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t *index;         /* head chunk ids + 1, 0 empty; power of two */
    uint64_t index_mask;
    uint64_t n_heads;

    /* the group being assembled */
    int have_cur;
    uint32_t cur_src[PPT_MAX_PHRASE_LEN];
    uint32_t cur_src_len;
    uint32_t max_src_len;    /* the longest source so far */
    char *cur_text;
    size_t cur_text_len, cur_text_cap;
    u32v cur;
    ppt_tmeta *meta;
    size_t n_meta, cap_meta;

    /* the reordering table, merged as the phrase table is read */
    ppt_reorder rt;
    uint64_t *unmatched;     /* pairs (group offset, record offset) in payload: no entry found */
    size_t n_unmatched, cap_unmatched;
} ppt_builder;

static int ppt_oom(ppt_builder *b)
{
    return smt_err_set(b->err, SMT_ERR_NOMEM, "probingpt build: out of memory");
}

static int perr(ppt_builder *b, const char *fmt, const char *what, int wlen)
{
    char msg[200];
    snprintf(msg, sizeof msg, fmt, wlen, what);
    return smt_err_set(b->err, SMT_ERR_PARSE, "%s:%llu: %s", b->pt_path,
                       (unsigned long long)smt_lines_lineno(b->pt), msg);
}
#define PERR(b, ...) smt_err_set((b)->err, SMT_ERR_PARSE, "%s:%llu: " __VA_ARGS__)

/* Words of s to ids, adding new words. Returns 0, -1 (too long) or an SMT_ERR_*. */
static int add_words(ppt_builder *b, smt_vocab_builder *v, ppt_span s, uint32_t *ids, uint32_t *n)
{
    ppt_span w;
    *n = 0;
    while (ppt_next_word(&s, &w)) {
        if (*n == PPT_MAX_PHRASE_LEN)
            return -1;
        int rc = smt_vocab_builder_add(v, w.b, (size_t)(w.e - w.b), &ids[(*n)++], b->err);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- groups ---- */

static int same_ids(const ppt_builder *b, const ppt_chunk *c, const uint32_t *ids, uint32_t n)
{
    const uint32_t *g = b->payload.v + c->off;
    return g[0] == n && memcmp(g + PPT_GROUP_HEADER, ids, n * sizeof *ids) == 0;
}

static int index_grow(ppt_builder *b)
{
    uint64_t size = b->index ? 2 * (b->index_mask + 1) : 1024;
    uint64_t *ix = calloc(size, sizeof *ix);
    if (!ix)
        return ppt_oom(b);
    for (uint64_t i = 0; b->index && i <= b->index_mask; i++) {
        if (!b->index[i])
            continue;
        uint64_t j = smt_hash_u64(b->chunks[b->index[i] - 1].key) & (size - 1);
        while (ix[j])
            j = (j + 1) & (size - 1);
        ix[j] = b->index[i];
    }
    free(b->index);
    b->index = ix;
    b->index_mask = size - 1;
    return 0;
}

/* Records the chunk just written at the end of the payload: a new source, or one more chunk of a
 * source seen before (input not grouped by source). */
static int register_chunk(ppt_builder *b, uint64_t off, uint64_t key, const uint32_t *ids, uint32_t n)
{
    if (b->n_chunks == b->cap_chunks &&
        smt_grow(&b->chunks, &b->cap_chunks, b->n_chunks + 1, sizeof *b->chunks, 4096))
        return ppt_oom(b);
    if (2 * (b->n_heads + 1) > (b->index ? b->index_mask + 1 : 0) && index_grow(b))
        return SMT_ERR_NOMEM;
    uint64_t id = b->n_chunks++;
    ppt_chunk *c = &b->chunks[id];
    c->key = key;
    c->off = off;
    c->next = c->last = UINT64_MAX;
    c->head = 1;
    uint64_t j = smt_hash_u64(key) & b->index_mask;
    int collided = 0;
    while (b->index[j]) {
        ppt_chunk *h = &b->chunks[b->index[j] - 1];
        if (h->key == key) {
            if (same_ids(b, h, ids, n)) {
                c->head = 0;
                if (h->last == UINT64_MAX)
                    b->rep->split_sources++;
                if (h->last == UINT64_MAX)
                    h->next = id;
                else
                    b->chunks[h->last].next = id;
                h->last = id;
                return 0;
            }
            collided = 1;
        }
        j = (j + 1) & b->index_mask;
    }
    b->index[j] = id + 1;
    b->n_heads++;
    b->rep->collisions += (uint64_t)collided;
    return 0;
}

/* Best first; ties keep the input order (a total order, so qsort's instability does not matter). */
static int by_rank(const void *pa, const void *pb)
{
    const ppt_tmeta *a = pa, *b = pb;
    if (a->rank != b->rank)
        return a->rank > b->rank ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

/* Ranks the assembled targets (table_limit) and appends the group to `out`. The kept targets are
 * in input order without a limit, best first with one (ties: input order). */
static int emit_group(ppt_builder *b, u32v *out, uint64_t *group_off, int track_unmatched)
{
    size_t n = b->n_meta, keep = n;
    if (b->opt->table_limit) { /* with a limit, always best first, so the order is input-independent */
        for (size_t i = 0; i < n; i++)
            b->meta[i].index = i;
        qsort(b->meta, n, sizeof *b->meta, by_rank);
        if (n > b->opt->table_limit) {
            keep = b->opt->table_limit;
            b->rep->pruned += n - keep;
        }
    }
    size_t words = PPT_GROUP_HEADER + b->cur_src_len;
    for (size_t i = 0; i < keep; i++)
        words += b->meta[i].words;
    if (words > UINT32_MAX)
        return smt_err_set(b->err, SMT_ERR_LIMIT, "%s: the targets of one source exceed 16 GB",
                           b->pt_path);
    if (u32v_reserve(out, words))
        return ppt_oom(b);
    uint64_t goff = out->n;
    uint32_t *g = out->v + goff;
    g[0] = b->cur_src_len;
    g[1] = (uint32_t)keep;
    g[2] = (uint32_t)words;
    memcpy(g + PPT_GROUP_HEADER, b->cur_src, b->cur_src_len * sizeof *b->cur_src);
    out->n += PPT_GROUP_HEADER + b->cur_src_len;
    for (size_t i = 0; i < keep; i++) {
        ppt_tmeta *m = &b->meta[i];
        if (track_unmatched && m->unmatched) {
            if (b->n_unmatched == b->cap_unmatched &&
                smt_grow(&b->unmatched, &b->cap_unmatched, b->n_unmatched + 1,
                         2 * sizeof *b->unmatched, 1024))
                return ppt_oom(b);
            b->unmatched[2 * b->n_unmatched] = goff;
            b->unmatched[2 * b->n_unmatched + 1] = out->n;
            b->n_unmatched++;
        }
        memcpy(out->v + out->n, b->cur.v + m->off, m->words * sizeof(uint32_t));
        out->n += m->words;
    }
    *group_off = goff;
    b->n_meta = 0;
    b->cur.n = 0;
    return 0;
}

static int flush_group(ppt_builder *b)
{
    if (!b->have_cur)
        return 0;
    b->have_cur = 0;
    uint64_t off;
    int rc = emit_group(b, &b->payload, &off, 1);
    if (rc)
        return rc;
    return register_chunk(b, off, ppt_key(b->cur_src, b->cur_src_len, b->mask), b->cur_src,
                          b->cur_src_len);
}

static double rank_of(const ppt_builder *b, const float *scores)
{
    double r = 0;
    for (uint32_t i = 0; i < b->ns; i++)
        r += (double)b->weights[i] * (scores[i] > 0 ? fmax(log((double)scores[i]), -100.0) : -100.0);
    return r;
}

/* Adds a target record (already in b->cur from `start`) to the group's metadata. */
static int add_meta(ppt_builder *b, size_t start, int unmatched)
{
    if (b->n_meta == b->cap_meta &&
        smt_grow(&b->meta, &b->cap_meta, b->n_meta + 1, sizeof *b->meta, 256))
        return ppt_oom(b);
    ppt_tmeta *m = &b->meta[b->n_meta++];
    m->off = start;
    m->words = (uint32_t)(b->cur.n - start);
    m->unmatched = (uint8_t)unmatched;
    uint32_t tl = ppt_info_tgt_len(b->cur.v[start]);
    m->rank = b->opt->table_limit
                  ? rank_of(b, (const float *)(const void *)(b->cur.v + start + ppt_record_head(b->cur.v[start]) + tl))
                  : 0;
    return 0;
}

/* ---- one phrase-table line ---- */

static int alignment_id(ppt_builder *b, ppt_span s, uint32_t src_len, uint32_t tgt_len, uint32_t *id)
{
    smt_vocab view = smt_vocab_builder_view(b->align_text);
    size_t len = (size_t)(s.e - s.b);
    uint32_t found = smt_vocab_find(&view, s.b, len);
    if (found == SMT_VOCAB_NONE) {
        uint8_t pairs[2 * 1024];
        ppt_span bad;
        int n = ppt_parse_alignment(s, pairs, 1024, &bad);
        if (n < 0)
            return perr(b, "bad alignment point '%.*s' (expected i-j, positions below 255)", bad.b,
                        (int)(bad.e - bad.b));
        int rc = smt_vocab_builder_add(b->align_text, s.b, len, &found, b->err);
        if (rc)
            return rc;
        if (smt_grow(&b->align_pts, &b->cap_pts, b->n_pts + (size_t)n, 2, 4096) ||
            smt_grow(&b->align_max, &b->cap_align_max, 2 * (size_t)(found + 1), 1, 4096))
            return ppt_oom(b);
        uint8_t ms = 0, mt = 0;
        for (int i = 0; i < n; i++) {
            ms = pairs[2 * i] + 1u > ms ? (uint8_t)(pairs[2 * i] + 1u) : ms;
            mt = pairs[2 * i + 1] + 1u > mt ? (uint8_t)(pairs[2 * i + 1] + 1u) : mt;
        }
        if (n)
            memcpy(b->align_pts + 2 * b->n_pts, pairs, 2 * (size_t)n);
        b->n_pts += (size_t)n;
        b->align_max[2 * found] = ms;
        b->align_max[2 * found + 1] = mt;
        if (u32v_reserve(&b->align_off, 1))
            return ppt_oom(b);
        b->align_off.v[b->align_off.n++] = (uint32_t)b->n_pts;
    }
    if (b->align_max[2 * found] > src_len || b->align_max[2 * found + 1] > tgt_len)
        return perr(b, "alignment '%.*s' points outside the phrase pair", s.b, (int)(s.e - s.b));
    *id = found;
    return 0;
}

static int parse_line(ppt_builder *b, char *line, size_t len)
{
    ppt_span f[PPT_FIELDS_MAX], rest = {0, 0}, bad;
    int nf = ppt_split_fields(line, len, f, &rest);
    unsigned long long ln = (unsigned long long)smt_lines_lineno(b->pt);
    if (nf < 3)
        return PERR(b, "expected source ||| target ||| scores, found %d field%s", b->pt_path, ln, nf,
                    nf == 1 ? "" : "s");
    if (f[0].b == f[0].e)
        return PERR(b, "empty source phrase", b->pt_path, ln);
    size_t slen = (size_t)(f[0].e - f[0].b);
    int rc;
    if (!b->have_cur || slen != b->cur_text_len || memcmp(f[0].b, b->cur_text, slen) != 0) {
        if ((rc = flush_group(b)))
            return rc;
        rc = add_words(b, b->src, f[0], b->cur_src, &b->cur_src_len);
        if (rc < 0 && rc != -1)
            return rc;
        if (rc == -1)
            return PERR(b, "source phrase longer than %u words", b->pt_path, ln, PPT_MAX_PHRASE_LEN);
        if (b->cur_src_len > b->max_src_len)
            b->max_src_len = b->cur_src_len;
        if (slen > b->cur_text_cap && smt_grow(&b->cur_text, &b->cur_text_cap, slen, 1, 256))
            return ppt_oom(b);
        memcpy(b->cur_text, f[0].b, slen);
        b->cur_text_len = slen;
        b->have_cur = 1;
    }
    /* the record: header, target ids, scores, reordering, counts */
    size_t start = b->cur.n;
    if (u32v_reserve(&b->cur, PPT_TARGET_HEADER + 1 + PPT_MAX_PHRASE_LEN + 2 * PPT_MAX_SCORES + PPT_MAX_COUNTS))
        return ppt_oom(b);
    uint32_t aid = 0, eid = SMT_VOCAB_NONE;
    if (nf >= 6 && (rc = smt_vocab_builder_add(b->extra, rest.b, (size_t)(rest.e - rest.b), &eid, b->err)))
        return rc;
    uint32_t *r = b->cur.v + start, tl;
    r[0] = ppt_info_pack(0, 0, (uint32_t)nf, eid); /* the head size depends on the extra id */
    uint32_t head = ppt_record_head(r[0]);
    rc = add_words(b, b->tgt, f[1], r + head, &tl);
    if (rc == -1)
        return PERR(b, "target phrase longer than %u words", b->pt_path, ln, PPT_MAX_PHRASE_LEN);
    if (rc)
        return rc;
    float *sc = (float *)(void *)(r + head + tl);
    int n = ppt_parse_probs(f[2], sc, PPT_MAX_SCORES, &bad);
    if (n == PPT_NUM_BAD || n == PPT_NUM_NEGATIVE)
        return PERR(b, "%s score '%.*s'", b->pt_path, ln, ppt_num_what(n), (int)(bad.e - bad.b), bad.b);
    if (n == PPT_NUM_TOO_MANY)
        return PERR(b, "more than %u scores", b->pt_path, ln, PPT_MAX_SCORES);
    if (n == 0)
        return PERR(b, "no scores", b->pt_path, ln);
    if (!b->ns) {
        b->ns = (uint32_t)n;
        if (b->opt->weights && b->opt->num_weights != b->ns)
            return PERR(b, "%u scores but %u weights were given", b->pt_path, ln, b->ns,
                        b->opt->num_weights);
    } else if ((uint32_t)n != b->ns) {
        return PERR(b, "%d scores, expected %u as on the first line", b->pt_path, ln, n, b->ns);
    }
    ppt_span empty = {f[0].e, f[0].e};
    if ((rc = alignment_id(b, nf >= 4 ? f[3] : empty, b->cur_src_len, tl, &aid)))
        return rc;
    int matched = 1;
    float *ro = sc + b->ns;
    if (b->nr) {
        rc = ppt_reorder_match(&b->rt, line, (size_t)(f[1].e - line), ro, &matched);
        if (rc)
            return rc;
        if (!matched)
            memcpy(ro, b->rdefault, b->nr * sizeof *ro);
    }
    float *co = ro + b->nr;
    int nc = 0;
    if (nf >= 5) {
        nc = ppt_parse_floats(f[4], co, PPT_MAX_COUNTS, &bad);
        if (nc == -1)
            return perr(b, "bad count '%.*s'", bad.b, (int)(bad.e - bad.b));
        if (nc == -2)
            return PERR(b, "more than %u counts", b->pt_path, ln, PPT_MAX_COUNTS);
    }
    r[0] = ppt_info_pack(tl, (uint32_t)nc, (uint32_t)nf, eid) | (b->nr && matched ? PPT_INFO_REORDERING : 0);
    r[1] = aid;
    if (head > PPT_TARGET_HEADER)
        r[2] = eid;
    b->cur.n = start + head + tl + b->ns + b->nr + (uint32_t)nc;
    return add_meta(b, start, !matched);
}

/* ---- after the input ---- */

/* Input not grouped by source left several chunks for some sources: rewrite the payload with one
 * group per source, in the order sources first appeared, re-applying the table limit. */
static int merge_chunks(ppt_builder *b)
{
    u32v out = {0};
    if (u32v_reserve(&out, b->payload.n))
        return ppt_oom(b);
    uint32_t ns = b->ns, nr = b->nr;
    for (size_t i = 0; i < b->n_chunks; i++) {
        ppt_chunk *c = &b->chunks[i];
        if (!c->head)
            continue;
        const uint32_t *g = b->payload.v + c->off;
        if (c->next == UINT64_MAX) {
            if (u32v_reserve(&out, g[2])) {
                free(out.v);
                return ppt_oom(b);
            }
            memcpy(out.v + out.n, g, g[2] * sizeof *g);
            c->off = out.n;
            out.n += g[2];
            continue;
        }
        b->cur_src_len = g[0];
        memcpy(b->cur_src, g + PPT_GROUP_HEADER, g[0] * sizeof *g);
        for (uint64_t k = i; k != UINT64_MAX; k = b->chunks[k].next) {
            const uint32_t *h = b->payload.v + b->chunks[k].off;
            const uint32_t *r = h + PPT_GROUP_HEADER + h[0];
            for (uint32_t t = 0; t < h[1]; t++) {
                uint64_t w = ppt_record_words(r[0], ns, nr);
                size_t start = b->cur.n;
                if (u32v_reserve(&b->cur, w)) {
                    free(out.v);
                    return ppt_oom(b);
                }
                memcpy(b->cur.v + start, r, w * sizeof *r);
                b->cur.n += w;
                int rc = add_meta(b, start, 0);
                if (rc) {
                    free(out.v);
                    return rc;
                }
                r += w;
            }
        }
        uint64_t off;
        int rc = emit_group(b, &out, &off, 0);
        if (rc) {
            free(out.v);
            return rc;
        }
        c->off = off;
    }
    free(b->payload.v);
    b->payload = out;
    return 0;
}

static int write_file(ppt_builder *b)
{
    if (b->payload.n > PPT_MAX_PAYLOAD_WORDS)
        return smt_err_set(b->err, SMT_ERR_LIMIT, "%s: more than 4 TiB of targets", b->pt_path);
    uint64_t n = b->n_heads;
    uint64_t n_slots = n + n * 3 / 7 + 1; /* load factor 0.7 */
    ppt_slot *slots = malloc(n_slots * sizeof *slots);
    if (!slots)
        return ppt_oom(b);
    for (uint64_t i = 0; i < n_slots; i++)
        slots[i] = PPT_EMPTY;
    uint64_t targets = 0;
    for (size_t i = 0; i < b->n_chunks; i++) {
        const ppt_chunk *c = &b->chunks[i];
        if (!c->head)
            continue;
        targets += b->payload.v[c->off + 1];
        uint64_t j = ppt_home(c->key, n_slots);
        while (slots[j] != PPT_EMPTY)
            j = j + 1 == n_slots ? 0 : j + 1;
        slots[j] = ppt_slot_pack(c->key, c->off);
    }
    ppt_params p;
    memset(&p, 0, sizeof p);
    p.num_scores = b->ns;
    p.num_reordering_scores = b->nr;
    p.flags = (b->nr ? PPT_FLAG_REORDERING : 0) | (b->opt->table_limit ? PPT_FLAG_LIMITED : 0);
    p.table_limit = b->opt->table_limit;
    p.num_sources = n;
    p.num_targets = targets;
    p.num_slots = n_slots;
    p.hash_mask = b->mask;
    p.payload_words = b->payload.n;
    smt_vocab av = smt_vocab_builder_view(b->align_text);
    smt_vocab ev = smt_vocab_builder_view(b->extra);
    p.num_align = av.n;
    p.num_extra = ev.n;
    p.collisions = b->rep->collisions;
    p.max_src_len = b->max_src_len;
    for (uint32_t i = 0; i < 4 && i < b->nr; i++)
        p.reordering_default[i] = b->rdefault[i];
    b->rep->sources = n;
    b->rep->targets = targets;

    smt_writer *w;
    int rc = smt_writer_open(&w, b->opt->out, PPT_KIND, PPT_FORMAT_VERSION, b->err);
    if (rc) {
        free(slots);
        return rc;
    }
    uint32_t zero = 0;
    if (!(rc = smt_writer_set_params(w, &p, sizeof p, b->err)) &&
        !(rc = smt_vocab_builder_write(b->src, w, "src", b->err)) &&
        !(rc = smt_vocab_builder_write(b->tgt, w, "tgt", b->err)) &&
        !(rc = smt_vocab_builder_write(b->extra, w, "extra", b->err)) &&
        !(rc = smt_writer_section(w, "hash", slots, n_slots * sizeof *slots, b->err)) &&
        !(rc = smt_writer_section(w, "payload", b->payload.v, b->payload.n * 4, b->err)) &&
        !(rc = smt_writer_section(w, "align.off", b->align_off.n ? (void *)b->align_off.v : (void *)&zero,
                                  (b->align_off.n ? b->align_off.n : 1) * 4, b->err)) &&
        !(rc = smt_writer_section(w, "align.pts", b->align_pts ? (void *)b->align_pts : (void *)&zero,
                                  2 * b->n_pts, b->err)))
        rc = smt_writer_finish(w, b->err);
    else
        smt_writer_abort(w);
    free(slots);
    return rc;
}

static void default_reordering(ppt_builder *b)
{
    const ppt_build_options *o = b->opt;
    for (uint32_t i = 0; i < b->nr; i++) {
        if (o->reordering_default && o->num_reordering_default)
            b->rdefault[i] = o->reordering_default[o->num_reordering_default == 1 ? 0 : i];
        else if (b->nr % 3 == 0 && b->nr <= 6) /* msd: monotone, swap, discontinuous */
            b->rdefault[i] = 1.0f / 3.0f;
        else if (b->nr == 2 || b->nr == 4) /* monotonicity */
            b->rdefault[i] = 0.5f;
        else if (b->nr == 8) /* mslr */
            b->rdefault[i] = 0.25f;
        else
            b->rdefault[i] = 1.0f / (float)b->nr;
    }
}

static int check_options(const ppt_build_options *o, smt_err *err)
{
    if (!o->phrase_table || !o->out)
        return smt_err_set(err, SMT_ERR_ARG, "probingpt build: a phrase table and an output are needed");
    if (o->num_weights > PPT_MAX_SCORES || (o->weights == NULL) != (o->num_weights == 0))
        return smt_err_set(err, SMT_ERR_ARG, "probingpt build: bad weights (at most %u)", PPT_MAX_SCORES);
    if (o->num_reordering_default > PPT_MAX_SCORES)
        return smt_err_set(err, SMT_ERR_ARG, "probingpt build: too many reordering defaults");
    return 0;
}

static int run(ppt_builder *b)
{
    const ppt_build_options *o = b->opt;
    unsigned lf = o->threaded_input ? SMT_LINES_THREADED : 0;
    int rc;
    if ((rc = smt_vocab_builder_create(&b->src, b->err)) || (rc = smt_vocab_builder_create(&b->tgt, b->err)) ||
        (rc = smt_vocab_builder_create(&b->extra, b->err)) ||
        (rc = smt_vocab_builder_create(&b->align_text, b->err)))
        return rc;
    if (u32v_reserve(&b->align_off, 1))
        return ppt_oom(b);
    b->align_off.v[b->align_off.n++] = 0;
    if ((rc = smt_lines_open(&b->pt, o->phrase_table, lf, b->err)))
        return rc;
    b->pt_path = smt_lines_path(b->pt);
    if (o->reordering) {
        if ((rc = ppt_reorder_open(&b->rt, o->reordering, lf, b->rep, b->err)))
            return rc;
        b->nr = b->rt.nr;
        if (o->num_reordering_default > 1 && o->num_reordering_default != b->nr)
            return smt_err_set(b->err, SMT_ERR_ARG, "%u reordering defaults for %u reordering scores",
                               o->num_reordering_default, b->nr);
        default_reordering(b);
    }
    smt_progress prog;
    uint64_t total = smt_lines_total_bytes(b->pt);
    smt_progress_init(&prog, "probingpt build", total, o->progress);
    char *line;
    size_t len;
    while ((rc = smt_lines_next(b->pt, &line, &len, b->err)) == 1) {
        b->rep->lines++;
        b->rep->input_bytes += len + 1;
        if ((rc = parse_line(b, line, len)))
            return rc;
        smt_progress_update(&prog, smt_lines_bytes_read(b->pt));
    }
    if (rc < 0)
        return rc;
    smt_progress_finish(&prog, smt_lines_bytes_read(b->pt));
    if (!b->rep->lines || !b->have_cur)
        return smt_err_set(b->err, SMT_ERR_PARSE, "%s: no phrase pairs", b->pt_path);
    if ((rc = flush_group(b)))
        return rc;
    if (b->nr && (rc = ppt_reorder_finish(&b->rt, b->payload.v, b->unmatched, b->n_unmatched,
                                          b->src, b->tgt, b->ns)))
        return rc;
    if (b->rep->split_sources && (rc = merge_chunks(b)))
        return rc;
    return write_file(b);
}

static void builder_free(ppt_builder *b)
{
    smt_lines_close(b->pt);
    ppt_reorder_close(&b->rt);
    smt_vocab_builder_free(b->src);
    smt_vocab_builder_free(b->tgt);
    smt_vocab_builder_free(b->extra);
    smt_vocab_builder_free(b->align_text);
    free(b->align_off.v);
    free(b->align_pts);
    free(b->align_max);
    free(b->payload.v);
    free(b->chunks);
    free(b->index);
    free(b->cur_text);
    free(b->cur.v);
    free(b->meta);
    free(b->unmatched);
}

int ppt_build(const ppt_build_options *opt, ppt_build_report *report, smt_err *err)
{
    ppt_build_report local;
    if (!report)
        report = &local;
    memset(report, 0, sizeof *report);
    int rc = check_options(opt, err);
    if (rc)
        return rc;
    double t0 = smt_now();
    ppt_builder b;
    memset(&b, 0, sizeof b);
    b.opt = opt;
    b.rep = report;
    b.err = err;
    b.mask = opt->hash_mask ? opt->hash_mask : UINT64_MAX;
    for (uint32_t i = 0; i < PPT_MAX_SCORES; i++)
        b.weights[i] = opt->weights && i < opt->num_weights ? opt->weights[i] : 1.0f;
    rc = run(&b);
    builder_free(&b);
    report->seconds = smt_now() - t0;
    if (!rc) {
        smt_mapped *m;
        if (smt_mapped_open(&m, opt->out, PPT_KIND, PPT_FORMAT_VERSION, 0, NULL) == 0) {
            report->file_size = smt_mapped_file_size(m);
            smt_mapped_close(m);
        }
    }
    return rc;
}
