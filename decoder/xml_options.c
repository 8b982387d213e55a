/* xml_options.c — the sentence's XML options (-xml-input, parsed by xml_input.c) in the search:
 * candidates over their spans, and the constraint mode's filter of the tables' options. */
#include <stdlib.h>
#include <string.h>

#include "dec_ff.h"
#include "dec_xml.h"

/* 1 when source words [i, j] overlap the span of one of the sentence's XML options. */
int dec_xml_overlap(const dec_xml *x, size_t i, size_t j)
{
    for (size_t k = 0; k < x->n_opts; k++)
        if (!(i > x->opts[k].end || j < x->opts[k].start))
            return 1;
    return 0;
}

/* The sentence's words for output: the source tokens, then the XML options' words that the
 * table's target vocabulary lacks (a passed-through id past the source: DEC_PASS_BIT | n + k). */
static int xml_word_id(dec_search *s, const char *w, size_t wl, uint32_t *id)
{
    uint32_t v = dec_tgt_find(s->m, w, wl);
    if (v != SMT_VOCAB_NONE) {
        *id = v;
        return 0;
    }
    size_t k = s->n;
    while (k < s->n_tok && !(s->lens[k] == wl && !memcmp(s->tokens[k], w, wl)))
        k++;
    if (k == s->n_tok) {
        if (k >= s->cap_tok)
            return SMT_ERR_NOMEM; /* cannot happen: room for every XML word was made */
        s->tokens[k] = (char *)w;
        ((uint32_t *)s->lens)[k] = (uint32_t)wl;
        s->n_tok++;
    }
    *id = DEC_PASS_BIT | (uint32_t)k;
    return 0;
}

/* The XML options over words [i, i + len - 1] (Moses's XmlOption): each alternative a candidate
 * with ln(prob) / n_scores in every TM score, no reordering entry and no alignment, merged into
 * the span's list best first (stable: a table's option stays before an XML one it ties). */
int dec_xml_add_options(dec_search *s, size_t i, size_t len)
{
    const dec_xml *x = s->xml;
    dec_model *m = s->m;
    size_t k = 0;
    for (size_t o = 0; o < x->n_opts; o++)
        k += x->opts[o].start == i && x->opts[o].end == i + len - 1;
    if (!k)
        return 0;
    cand_list *l = &s->opts[i * s->max_len + len - 1];
    dec_cand *c = arena_alloc(&s->ar, (l->n + k) * sizeof *c);
    if (!c)
        return SMT_ERR_NOMEM;
    if (l->n)
        memcpy(c, l->c, l->n * sizeof *c);
    size_t n = l->n;
    for (size_t o = 0; o < x->n_opts; o++) {
        const dec_xml_opt *xo = &x->opts[o];
        if (xo->start != i || xo->end != i + len - 1)
            continue;
        uint32_t *w = arena_alloc(&s->ar, (xo->n * (1 + m->n_lms) + 1) * sizeof *w);
        unsigned ntm = m->tables[0].n_scores; /* Moses's SetXMLScore: the first table's */
        float *tm = arena_alloc(&s->ar, (ntm + 1) * sizeof *tm);
        if (!w || !tm)
            return SMT_ERR_NOMEM;
        for (uint32_t j = 0; j < xo->n; j++) {
            const char *word = x->words.data + x->word_off[xo->first + j];
            size_t wl = strlen(word);
            int rc = xml_word_id(s, word, wl, &w[j]);
            if (rc)
                return rc;
            for (unsigned lm = 0; lm < m->n_lms; lm++)
                w[xo->n + lm * xo->n + j] = glm_index(m->lms[lm], word, wl);
        }
        for (unsigned q = 0; q < ntm; q++)
            tm[q] = xo->score / (float)ntm;
        dec_cand nc;
        memset(&nc, 0, sizeof nc);
        nc.words = w;
        nc.lm_words = w + xo->n;
        nc.tm = tm;
        nc.n_words = (uint16_t)xo->n;
        dec_option opt = {xo->n, NULL, w + xo->n, tm, 0};
        dec_ff_option(m, &opt, &nc.static_score, &nc.future);
        size_t at = n;
        while (at > 0 && c[at - 1].future < nc.future)
            at--;
        memmove(c + at + 1, c + at, (n - at) * sizeof *c);
        c[at] = nc;
        n++;
    }
    *l = (cand_list){c, (uint32_t)n};
    return 0;
}

/* Moses's -xml-input constraint (ViolatesXmlOptionsConstraint): a table option over words [i, j]
 * is dropped when the first sub-span of [i, j] (by start, then end) that has XML options has none
 * whose words occur in the option's target words, contiguously. */
static int xml_violates(const dec_search *s, size_t i, size_t j, const dec_cand *c)
{
    const dec_xml *x = s->xml;
    for (size_t a = i; a <= j; a++)
        for (size_t b = a; b <= j; b++) {
            int any = 0;
            for (size_t o = 0; o < x->n_opts; o++) {
                const dec_xml_opt *xo = &x->opts[o];
                if (xo->start != a || xo->end != b)
                    continue;
                any = 1;
                for (size_t off = 0; xo->n <= c->n_words && off <= c->n_words - xo->n; off++) {
                    uint32_t k = 0;
                    while (k < xo->n) {
                        const char *w = x->words.data + x->word_off[xo->first + k];
                        if (dec_tgt_find(s->m, w, strlen(w)) != c->words[off + k])
                            break;
                        k++;
                    }
                    if (k == xo->n)
                        return 0;
                }
            }
            if (any)
                return 1;
        }
    return 0;
}

/* The table's candidates of span [i, j] that -xml-input constraint keeps (a copy in the arena when
 * some are dropped). */
int dec_xml_constrain(dec_search *s, size_t i, size_t j, cand_list *l)
{
    dec_cand *keep = NULL;
    uint32_t n = 0;
    for (uint32_t k = 0; k < l->n; k++) {
        if (!xml_violates(s, i, j, &l->c[k])) {
            if (keep)
                keep[n] = l->c[k];
            n++;
            continue;
        }
        if (!keep) { /* the first dropped one: copy the ones kept so far */
            if (!(keep = arena_alloc(&s->ar, l->n * sizeof *keep)))
                return SMT_ERR_NOMEM;
            memcpy(keep, l->c, n * sizeof *keep);
        }
    }
    if (keep)
        *l = (cand_list){keep, n};
    return 0;
}
