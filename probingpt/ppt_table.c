/* Opening a .ppt file and looking phrases up in it. Open checks everything that is O(slots) or
 * smaller; a lookup checks the one group it reads before handing it out, so a damaged payload is an
 * error, never an out-of-bounds read. ppt_verify walks everything. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppt_format.h"
#include "ppt_text.h"

struct ppt_table {
    smt_mapped *m;
    ppt_params p;
    smt_vocab src, tgt, extra;
    const ppt_slot *slots;
    const uint32_t *payload;
    const uint32_t *align_off;
    const uint8_t *align_pts;
    uint64_t n_align_pts;
};

static int load_params(ppt_table *t, smt_err *err)
{
    size_t size;
    const void *pp = smt_mapped_params(t->m, &size);
    const char *path = smt_mapped_path(t->m);
    if (!pp || size != sizeof t->p)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: parameter block of %zu bytes, expected %zu",
                           path, size, sizeof t->p);
    memcpy(&t->p, pp, sizeof t->p);
    const ppt_params *p = &t->p;
    /* Every field a reader uses as a count, size or index is checked against the others here (the
     * sections are checked against these in load_sections), so a damaged block is an error. */
    if (p->num_scores == 0 || p->num_scores > PPT_MAX_SCORES ||
        p->num_reordering_scores > PPT_MAX_SCORES || p->max_src_len > PPT_MAX_PHRASE_LEN ||
        (p->flags & ~(uint32_t)(PPT_FLAG_REORDERING | PPT_FLAG_LIMITED)) ||
        !(p->flags & PPT_FLAG_REORDERING) != !p->num_reordering_scores ||
        !(p->flags & PPT_FLAG_LIMITED) != !p->table_limit ||
        p->payload_words > PPT_MAX_PAYLOAD_WORDS || p->num_targets > p->payload_words / PPT_TARGET_HEADER ||
        p->num_targets < p->num_sources || p->collisions > p->num_sources ||
        /* a group is at least src_len, n, words, one source id and one 2-word record per target */
        p->payload_words < (PPT_GROUP_HEADER + 1) * p->num_sources + PPT_TARGET_HEADER * p->num_targets ||
        !p->num_sources != !p->payload_words || !p->num_sources != !p->max_src_len ||
        /* the builder's load factor 0.7: an exact function of num_sources */
        p->num_slots != p->num_sources + p->num_sources * 3 / 7 + 1 ||
        p->num_align > UINT32_MAX || p->num_extra > UINT32_MAX)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: implausible parameters", path);
    return 0;
}

/* smt_vocab_find probes until it meets an empty slot: a table without one would never end. */
static int vocab_has_empty_slot(const smt_vocab *v)
{
    for (uint64_t i = 0; i <= v->mask; i++)
        if (v->slots[i].id == SMT_VOCAB_NONE)
            return 1;
    return 0;
}

static int load_sections(ppt_table *t, smt_err *err)
{
    const char *path = smt_mapped_path(t->m);
    const ppt_params *p = &t->p;
    int rc;
    const void *d;
    uint64_t count;
    if ((rc = smt_vocab_load(&t->src, t->m, "src", err)) || (rc = smt_vocab_load(&t->tgt, t->m, "tgt", err)) ||
        (rc = smt_vocab_load(&t->extra, t->m, "extra", err)))
        return rc;
    if (!vocab_has_empty_slot(&t->src) || !vocab_has_empty_slot(&t->tgt) || !vocab_has_empty_slot(&t->extra))
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: a vocabulary hash table has no empty slot", path);
    if (t->extra.n != p->num_extra)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: %u extra strings, expected %llu", path,
                           t->extra.n, (unsigned long long)p->num_extra);
    if ((rc = smt_mapped_require(t->m, "hash", sizeof(ppt_slot), p->num_slots, &d, &count, err)))
        return rc;
    t->slots = d;
    if ((rc = smt_mapped_require(t->m, "payload", 4, p->payload_words, &d, &count, err)))
        return rc;
    t->payload = d;
    if ((rc = smt_mapped_require(t->m, "align.off", 4, p->num_align + 1, &d, &count, err)))
        return rc;
    t->align_off = d;
    if ((rc = smt_mapped_require(t->m, "align.pts", 2, UINT64_MAX, &d, &t->n_align_pts, err)))
        return rc;
    t->align_pts = d;
    if (t->n_align_pts > UINT32_MAX || t->align_off[0] != 0 || t->align_off[p->num_align] != t->n_align_pts)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: alignment offsets do not cover align.pts", path);
    for (uint64_t i = 0; i < p->num_align; i++)
        if (t->align_off[i] > t->align_off[i + 1])
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: alignment offset %llu decreases", path,
                               (unsigned long long)i);
    /* every occupied slot must point at a group header that lies inside the payload */
    uint64_t used = 0;
    for (uint64_t i = 0; i < p->num_slots; i++) {
        if (t->slots[i] == PPT_EMPTY)
            continue;
        uint64_t off = ppt_slot_offset(t->slots[i]);
        used++;
        if (off >= p->payload_words || p->payload_words - off < PPT_GROUP_HEADER)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: hash slot %llu points outside the payload",
                               path, (unsigned long long)i);
    }
    if (used != p->num_sources)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: %llu hash slots used, expected %llu", path,
                           (unsigned long long)used, (unsigned long long)p->num_sources);
    return 0;
}

int ppt_open(ppt_table **out, const char *path, unsigned flags, smt_err *err)
{
    *out = NULL;
    ppt_table *t = calloc(1, sizeof *t);
    if (!t)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    int rc = smt_mapped_open(&t->m, path, PPT_KIND, PPT_FORMAT_VERSION, flags, err);
    if (!rc)
        rc = load_params(t, err);
    if (!rc)
        rc = load_sections(t, err);
    if (!rc && (flags & SMT_OPEN_VERIFY))
        rc = ppt_verify(t, err);
    if (rc) {
        ppt_close(t);
        return rc;
    }
    *out = t;
    return 0;
}

void ppt_close(ppt_table *t)
{
    if (!t)
        return;
    smt_mapped_close(t->m);
    free(t);
}

/* Checks the header of the group at off; on success *words is its size. */
static int check_header(const ppt_table *t, uint64_t off, uint64_t *words)
{
    const ppt_params *p = &t->p;
    uint64_t total = p->payload_words;
    if (off >= total || total - off < PPT_GROUP_HEADER)
        return SMT_ERR_CORRUPT;
    const uint32_t *g = t->payload + off;
    uint32_t src_len = g[0], n = g[1];
    uint64_t gw = g[2];
    if (src_len == 0 || src_len > p->max_src_len || n == 0 || n > p->num_targets || gw > total - off ||
        gw < PPT_GROUP_HEADER + (uint64_t)src_len + (uint64_t)n * PPT_TARGET_HEADER)
        return SMT_ERR_CORRUPT;
    for (uint32_t i = 0; i < src_len; i++)
        if (g[PPT_GROUP_HEADER + i] >= t->src.n)
            return SMT_ERR_CORRUPT;
    *words = gw;
    return 0;
}

/* Checks the record at r, which must end by `end`; returns its size in words or 0 when damaged. */
static uint64_t check_record(const ppt_table *t, const uint32_t *r, const uint32_t *end)
{
    const ppt_params *p = &t->p;
    uint64_t room = (uint64_t)(end - r);
    if (room < PPT_TARGET_HEADER)
        return 0;
    uint32_t info = r[0], nf = ppt_info_fields(info), head = ppt_record_head(info);
    uint64_t rw = ppt_record_words(info, p->num_scores, p->num_reordering_scores);
    /* rw counts the escaped extra id's word: r[2] lies inside the record when it is read */
    if (rw > room || r[1] >= p->num_align || (nf == 6) != (ppt_info_extra(info) != 0) ||
        (ppt_info_has_reordering(info) && !p->num_reordering_scores))
        return 0;
    uint32_t eid = ppt_record_extra_id(r);
    if (nf == 6 && (eid >= p->num_extra || (head > PPT_TARGET_HEADER && eid + 1 < PPT_EXTRA_ESCAPE)))
        return 0;
    uint32_t tl = ppt_info_tgt_len(info);
    for (uint32_t i = 0; i < tl; i++)
        if (r[head + i] >= t->tgt.n)
            return 0;
    return rw;
}

/* Checks a whole group (ppt_verify, ppt_foreach). */
static int check_group(const ppt_table *t, uint64_t off, uint64_t *words)
{
    if (check_header(t, off, words))
        return SMT_ERR_CORRUPT;
    const uint32_t *g = t->payload + off, *end = g + *words;
    const uint32_t *r = g + PPT_GROUP_HEADER + g[0];
    for (uint32_t k = 0; k < g[1]; k++) {
        uint64_t rw = check_record(t, r, end);
        if (!rw)
            return SMT_ERR_CORRUPT;
        r += rw;
    }
    return r == end ? 0 : SMT_ERR_CORRUPT;
}

static void make_view(const ppt_table *t, const uint32_t *g, ppt_targets *out)
{
    out->table = t;
    out->src_len = g[0];
    out->n = g[1];
    out->src_ids = g + PPT_GROUP_HEADER;
    out->cursor = g + PPT_GROUP_HEADER + g[0];
    out->end = g + g[2];
    out->left = g[1];
    out->error = 0;
}

int ppt_lookup_ids(const ppt_table *t, const uint32_t *src_ids, size_t n, ppt_targets *out)
{
    const ppt_params *p = &t->p;
    if (n == 0 || n > p->max_src_len)
        return SMT_ERR_NOTFOUND;
    uint64_t key = ppt_key(src_ids, n, p->hash_mask);
    uint64_t i = ppt_home(key, p->num_slots);
    for (uint64_t probes = 0; probes < p->num_slots; probes++) {
        ppt_slot s = t->slots[i];
        if (s == PPT_EMPTY)
            return SMT_ERR_NOTFOUND;
        if (ppt_slot_tag_is(s, key)) {
            /* the group's own source ids settle hash collisions */
            uint64_t off = ppt_slot_offset(s);
            const uint32_t *g = t->payload + off;
            if (g[0] == n && p->payload_words - off >= PPT_GROUP_HEADER + n &&
                memcmp(g + PPT_GROUP_HEADER, src_ids, n * sizeof *src_ids) == 0) {
                uint64_t words;
                if (check_header(t, off, &words))
                    return SMT_ERR_CORRUPT;
                make_view(t, g, out);
                return 0;
            }
        }
        if (++i == p->num_slots)
            i = 0;
    }
    return SMT_ERR_NOTFOUND;
}

int ppt_lookup(const ppt_table *t, const char *phrase, size_t len, ppt_targets *out)
{
    uint32_t ids[PPT_MAX_PHRASE_LEN];
    size_t n = 0;
    ppt_span s = {phrase, phrase + len}, w;
    while (ppt_next_word(&s, &w)) {
        if (n == t->p.max_src_len)
            return SMT_ERR_NOTFOUND;
        uint32_t id = smt_vocab_find(&t->src, w.b, (size_t)(w.e - w.b));
        if (id == SMT_VOCAB_NONE)
            return SMT_ERR_NOTFOUND;
        ids[n++] = id;
    }
    return ppt_lookup_ids(t, ids, n, out);
}

int ppt_targets_next(ppt_targets *it, ppt_target *o)
{
    if (!it->left)
        return 0;
    const ppt_table *t = it->table;
    const uint32_t *r = it->cursor;
    uint64_t rw = check_record(t, r, it->end);
    if (!rw) {
        it->left = 0;
        it->error = SMT_ERR_CORRUPT;
        return 0;
    }
    uint32_t info = r[0];
    uint32_t ns = t->p.num_scores, nr = t->p.num_reordering_scores;
    o->n_words = ppt_info_tgt_len(info);
    o->n_counts = ppt_info_counts(info);
    o->n_fields = ppt_info_fields(info);
    o->align_id = r[1];
    o->extra_id = ppt_record_extra_id(r);
    o->has_reordering = ppt_info_has_reordering(info);
    o->words = r + ppt_record_head(info);
    const float *f = (const float *)(const void *)(o->words + o->n_words);
    o->scores = f;
    o->reordering = nr ? f + ns : NULL;
    o->counts = f + ns + nr;
    uint32_t a0 = t->align_off[o->align_id], a1 = t->align_off[o->align_id + 1];
    o->align = t->align_pts + 2u * a0;
    o->n_align = a1 - a0;
    /* a damaged align id would hand out points outside the phrase pair (what ppt_verify checks) */
    for (uint32_t i = 0; i < o->n_align; i++)
        if (o->align[2 * i] >= it->src_len || o->align[2 * i + 1] >= o->n_words) {
            it->left = 0;
            it->error = SMT_ERR_CORRUPT;
            return 0;
        }
    it->cursor = r + rw;
    it->left--;
    return 1;
}

int ppt_foreach(const ppt_table *t, ppt_group_fn fn, void *ctx)
{
    uint64_t off = 0;
    while (off < t->p.payload_words) {
        uint64_t words;
        if (check_group(t, off, &words))
            return SMT_ERR_CORRUPT;
        ppt_targets g;
        make_view(t, t->payload + off, &g);
        int rc = fn(ctx, &g);
        if (rc)
            return rc;
        off += words;
    }
    return 0;
}

/* Counts groups and targets, and checks what only the builder guarantees: alignment points inside
 * their phrase pair. */
static int count_group(void *ctx, ppt_targets *g)
{
    uint64_t *c = ctx;
    c[0]++;
    c[1] += g->n;
    ppt_target x;
    while (ppt_targets_next(g, &x))
        for (uint32_t i = 0; i < x.n_align; i++)
            if (x.align[2 * i] >= g->src_len || x.align[2 * i + 1] >= x.n_words)
                return SMT_ERR_CORRUPT;
    return g->error;
}

int ppt_verify(const ppt_table *t, smt_err *err)
{
    const char *path = smt_mapped_path(t->m);
    int rc = smt_mapped_verify(t->m, err);
    if (rc)
        return rc;
    uint64_t c[2] = {0, 0};
    if (ppt_foreach(t, count_group, c))
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: damaged group in the payload (bounds, ids or alignment)", path);
    if (c[0] != t->p.num_sources || c[1] != t->p.num_targets)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: %llu sources / %llu targets, expected %llu / %llu",
                           path, (unsigned long long)c[0], (unsigned long long)c[1],
                           (unsigned long long)t->p.num_sources, (unsigned long long)t->p.num_targets);
    /* every slot must find its own group */
    for (uint64_t i = 0; i < t->p.num_slots; i++) {
        uint64_t words;
        if (t->slots[i] == PPT_EMPTY)
            continue;
        uint64_t off = ppt_slot_offset(t->slots[i]);
        if (check_group(t, off, &words))
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: slot %llu points at a damaged group", path,
                               (unsigned long long)i);
        const uint32_t *g = t->payload + off;
        ppt_targets v;
        if (ppt_lookup_ids(t, g + PPT_GROUP_HEADER, g[0], &v) || v.src_ids != g + PPT_GROUP_HEADER)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: slot %llu is not reachable by its key", path,
                               (unsigned long long)i);
    }
    return 0;
}

const smt_vocab *ppt_src_vocab(const ppt_table *t) { return &t->src; }
const smt_vocab *ppt_tgt_vocab(const ppt_table *t) { return &t->tgt; }
uint32_t ppt_num_scores(const ppt_table *t) { return t->p.num_scores; }
uint32_t ppt_num_reordering_scores(const ppt_table *t) { return t->p.num_reordering_scores; }
const ppt_params *ppt_get_params(const ppt_table *t) { return &t->p; }
const smt_mapped *ppt_mapped(const ppt_table *t) { return t->m; }

const char *ppt_extra_text(const ppt_table *t, uint32_t extra_id, size_t *len)
{
    return smt_vocab_word(&t->extra, extra_id, len);
}

int ppt_format_float(char *buf, float v)
{
    /* Moses writes 6 significant digits; more only when 6 would not read back the same float */
    for (int prec = 6; prec <= 9; prec++) {
        int n = snprintf(buf, 32, "%.*g", prec, (double)v);
        float back;
        if (prec == 9 || (ppt_parse_float(buf, buf + n, &back) == 0 && back == v))
            return n;
    }
    return 0; /* not reached */
}
