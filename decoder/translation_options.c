/* translation_options.c — the translation options of a sentence (Moses's
 * TranslationOptionCollection): every span's candidates from the decoding paths' tables and the
 * XML markup, the unknown words' candidates, and the future cost of every span. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "dec_xml.h"

/* 1 when the word holds an ASCII digit. */
static int memchr_digit(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (w[i] >= '0' && w[i] <= '9')
            return 1;
    return 0;
}

/* Appends table options (best first) to span list l, keeping it best first: a stable merge by
 * future score, the options already there first on a tie. Moses keeps every decoding path's
 * options as separate translation options, equal target words included. */
static int merge_options(dec_search *s, cand_list *l, const dec_cand *c, uint32_t n)
{
    if (!l->n) {
        *l = (cand_list){c, n};
        return 0;
    }
    dec_cand *out = arena_alloc(&s->ar, ((size_t)l->n + n) * sizeof *out);
    if (!out)
        return SMT_ERR_NOMEM;
    uint32_t a = 0, b = 0, k = 0;
    while (a < l->n && b < n)
        out[k++] = c[b].future > l->c[a].future ? c[b++] : l->c[a++];
    while (a < l->n)
        out[k++] = l->c[a++];
    while (b < n)
        out[k++] = c[b++];
    *l = (cand_list){out, k};
    return 0;
}

/* Looks span (i, len) up in the table of decoding path p and adds its options to the span's
 * list. Returns 0, 1 when the table cannot have the span or any longer one from i (a word it does
 * not know, or longer than its longest source phrase), or an error. */
static int path_options(dec_search *s, const dec_path *p, size_t i, int len, smt_err *err)
{
    const dec_table *tb = &s->m->tables[p->table];
    const uint32_t *ids = s->src_ids + (size_t)p->table * s->n;
    if (tb->pt->max_src_len && (uint32_t)len > tb->pt->max_src_len)
        return 1;
    for (int k = len - 1; k >= 0; k--) /* the last word first: the shorter spans were checked */
        if (ids[i + k] == SMT_VOCAB_NONE)
            return 1;
    const dec_centry *ce;
    int rc = dec_cands_get(s->m, p->table, ids + i, (size_t)len, &ce, err);
    if (rc)
        return rc;
    if (!ce || !ce->n)
        return 0;
    cand_list l = {ce->cands, ce->n};
    const dec_xml *x = s->xml; /* -xml-input constraint: each path's options are filtered */
    if (x && x->n_opts && s->out.xml_mode == DEC_XML_CONSTRAINT &&
        dec_xml_overlap(x, i, i + (size_t)len - 1) &&
        dec_xml_constrain(s, i, i + (size_t)len - 1, &l))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (l.n && merge_options(s, &s->opts[i * s->max_len + len - 1], l.c, l.n))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    return 0;
}

/* The candidates of every span, an unknown-word candidate where a word has none, and the future
 * cost table (best estimate of every span, then the best split of longer spans).
 *
 * Several decoding paths ([mapping] "0 T 0", "1 T 1", ...) are Moses's
 * TranslationOptionCollection::CreateTranslationOptions: path by path, every span is looked up
 * in the path's table and its options join the span's list. A path after the first with a
 * [decoding-graph-backoff] value b > 0 skips a span of at most b words, and a span that earlier
 * paths already gave options (Moses's test, as its current source has it: "ePos-sPos+1 <=
 * backoff || options so far"). Then ProcessUnknownWord: every path, in order, is asked again for
 * each single word that still has no option; a word no path translates is unknown. */
int dec_collect_options(dec_search *s, smt_err *err)
{
    dec_model *m = s->m;
    size_t n = s->n;
    s->max_len = m->max_phrase_len < (int)n ? m->max_phrase_len : (int)n;
    uint32_t longest = 0; /* the longest source phrase of the paths' tables */
    int known = 1;        /* every table knows its longest (0: not recorded) */
    for (unsigned g = 0; g < m->n_paths; g++) {
        uint32_t l = m->tables[m->paths[g].table].pt->max_src_len;
        known &= l != 0;
        longest = l > longest ? l : longest;
    }
    if (known && (int)longest < s->max_len)
        s->max_len = (int)longest; /* longer spans cannot be in the tables */
    const dec_xml *x = s->xml;
    int exclusive = x && s->out.xml_mode == DEC_XML_EXCLUSIVE;
    s->n_tok = s->cap_tok = n;
    if (x) { /* XML options: their spans fit the phrase length; room for their words */
        for (size_t k = 0; k < x->n_opts; k++) {
            size_t len = (size_t)x->opts[k].end - x->opts[k].start + 1;
            if (len > (size_t)m->max_phrase_len)
                return smt_err_set(err, SMT_ERR_PARSE, "xml markup: an option over %zu words; "
                                   "the maximum phrase length is %d", len, m->max_phrase_len);
            if ((int)len > s->max_len)
                s->max_len = (int)len;
        }
        char **toks = arena_alloc(&s->ar, (n + x->n_words + 1) * sizeof *toks);
        uint32_t *lens = arena_alloc(&s->ar, (n + x->n_words + 1) * sizeof *lens);
        if (!toks || !lens)
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        memcpy(toks, s->tokens, n * sizeof *toks);
        memcpy(lens, s->lens, n * sizeof *lens);
        s->tokens = toks;
        s->lens = lens;
        s->cap_tok = n + x->n_words;
    }
    s->opts = arena_zalloc(&s->ar, n * s->max_len * sizeof *s->opts);
    s->src_ids = arena_alloc(&s->ar, n * m->n_tables * sizeof *s->src_ids);
    s->unk = arena_alloc(&s->ar, (n + 1) * sizeof *s->unk);
    s->n_unk = 0;
    s->fc = arena_alloc(&s->ar, n * n * sizeof *s->fc);
    if (!s->opts || !s->src_ids || !s->fc || !s->unk)
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (unsigned t = 0; t < m->n_tables; t++)
        for (size_t i = 0; i < n; i++)
            s->src_ids[t * n + i] =
                smt_vocab_find(m->tables[t].pt->src_vocab, s->tokens[i], s->lens[i]);
    /* the first path, and the XML options (Moses makes them with the first path's) */
    for (size_t i = 0; i < n; i++) {
        for (int len = 1; len <= s->max_len && i + len <= n; len++) {
            if (exclusive && dec_xml_overlap(x, i, i + len - 1))
                continue; /* -xml-input exclusive: only the tag's options over its words */
            int rc = path_options(s, &m->paths[0], i, len, err);
            if (rc < 0)
                return rc;
            if (rc)
                break;
        }
        for (int len = 1; x && len <= s->max_len && i + len <= n; len++)
            if (dec_xml_add_options(s, i, (size_t)len))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    /* the other paths, each after the paths before it */
    for (unsigned g = 1; g < m->n_paths; g++) {
        const dec_path *p = &m->paths[g];
        for (size_t i = 0; i < n; i++)
            for (int len = 1; len <= s->max_len && i + len <= n; len++) {
                if (p->backoff && ((unsigned)len <= p->backoff ||
                                   s->opts[i * s->max_len + len - 1].n))
                    continue; /* Moses: "No backoff to graph g for span" */
                if (exclusive && dec_xml_overlap(x, i, i + len - 1))
                    continue;
                int rc = path_options(s, p, i, len, err);
                if (rc < 0)
                    return rc;
                if (rc)
                    break;
            }
    }
    /* a word without options: every path asked again (only a path that skipped it can answer) */
    for (unsigned g = 1; g < m->n_paths; g++)
        for (size_t i = 0; m->paths[g].backoff && i < n; i++)
            if (!s->opts[i * s->max_len].n && !(exclusive && dec_xml_overlap(x, i, i))) {
                int rc = path_options(s, &m->paths[g], i, 1, err);
                if (rc < 0)
                    return rc;
            }
    for (size_t i = 0; i < n; i++) {
        if (s->opts[i * s->max_len].n)
            continue;
        /* an unknown word: passed through, Moses's UnknownWordPenalty (ln 0 floored = -100); with
         * -drop-unknown translated as nothing unless it holds a digit (Moses keeps those) */
        s->unk[s->n_unk++] = (uint32_t)i;
        dec_cand *c = arena_zalloc(&s->ar, sizeof *c);
        uint32_t *w = arena_alloc(&s->ar, (1 + m->n_lms) * sizeof *w);
        if (!c || !w)
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        int drop = s->out.drop_unknown && !memchr_digit(s->tokens[i], s->lens[i]);
        w[0] = DEC_PASS_BIT | (uint32_t)i;
        static const uint8_t self[2] = {0, 0}; /* a passed-through word is aligned to itself */
        c->words = w;
        c->lm_words = w + 1;
        c->n_words = drop ? 0 : 1;
        c->align = self;
        c->n_align = drop ? 0 : 1;
        for (unsigned l = 0; l < m->n_lms; l++)
            w[1 + l] = glm_index(m->lms[l], s->tokens[i], s->lens[i]);
        dec_option opt = {c->n_words, NULL, w + 1, NULL, 0};
        dec_ff_option(m, &opt, &c->static_score, &c->future);
        s->opts[i * s->max_len] = (cand_list){c, 1};
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i; j < n; j++) {
            size_t len = j - i + 1;
            const cand_list *o = len <= (size_t)s->max_len ? &s->opts[i * s->max_len + len - 1]
                                                           : NULL;
            s->fc[i * n + j] = o && o->n ? o->c[0].future : -INFINITY;
        }
    for (size_t len = 2; len <= n; len++)
        for (size_t i = 0; i + len <= n; i++) {
            size_t j = i + len - 1;
            double best = s->fc[i * n + j];
            for (size_t k = i; k < j; k++) {
                double v = s->fc[i * n + k] + s->fc[(k + 1) * n + j];
                if (v > best)
                    best = v;
            }
            s->fc[i * n + j] = best;
        }
    return 0;
}
