/* xml_input.c — Moses's XML input markup: see private/dec_xml.h. */
#define _GNU_SOURCE /* memmem */
#include "dec_xml.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smt_num.h"
#include "smt_words.h"

int dec_xml_mode(const char *s)
{
    static const char *const names[] = {"pass-through", "ignore", "exclusive", "inclusive",
                                        "constraint"};
    for (int i = 0; i < 5; i++)
        if (!strcmp(s, names[i]))
            return i;
    return -1;
}

void dec_xml_free(dec_xml *x)
{
    smt_buf_free(&x->clean);
    smt_buf_free(&x->words);
    free(x->word_off);
    free(x->opts);
    free(x->walls);
    free(x->zones);
    memset(x, 0, sizeof *x);
}

/* An open tag: its name, the word position it opened at and its attribute text. */
typedef struct open_tag {
    const char *name, *attrs;
    size_t name_len, attrs_len;
    size_t pos;
} open_tag;

/* The value of attribute name="..." in [a, a + n) (a backslash before a quote escapes it); 0 and
 * *v, *vl, or -1 when absent, -2 when its closing quote is missing. */
static int attribute(const char *a, size_t n, const char *name, const char **v, size_t *vl)
{
    size_t nl = strlen(name);
    for (size_t i = 0; i + nl + 2 <= n; i++) {
        if ((i > 0 && !smt_is_sep((unsigned char)a[i - 1], SMT_WS_BLANK)) ||
            memcmp(a + i, name, nl) != 0 || a[i + nl] != '=' || a[i + nl + 1] != '"')
            continue;
        size_t b = i + nl + 2, e = b;
        while (e < n && (a[e] != '"' || (e > b && a[e - 1] == '\\')))
            e++;
        if (e >= n)
            return -2;
        *v = a + b;
        *vl = e - b;
        return 0;
    }
    return -1;
}

/* Splits [s, s + n) at every "||" (Moses's TokenizeMultiCharSeparator): the start and length of
 * each piece in p[]/pl[] (at most max); returns the number of pieces. */
static size_t split_alternatives(const char *s, size_t n, const char **p, size_t *pl, size_t max)
{
    size_t k = 0, b = 0;
    for (size_t i = 0; i + 1 <= n; i++) {
        if (i + 1 < n && s[i] == '|' && s[i + 1] == '|') {
            if (k < max)
                p[k] = s + b, pl[k] = i - b;
            k++;
            b = i + 2;
            i++;
        }
    }
    if (k < max)
        p[k] = s + b, pl[k] = n - b;
    return k + 1;
}

static int add_option(dec_xml *x, size_t start, size_t end, const char *t, size_t tl, float score)
{
    if (smt_grow(&x->opts, &x->cap_opts, x->n_opts + 1, sizeof *x->opts, 8))
        return SMT_ERR_NOMEM;
    dec_xml_opt *o = &x->opts[x->n_opts];
    o->start = (uint32_t)start;
    o->end = (uint32_t)end;
    o->first = (uint32_t)x->n_words;
    o->n = 0;
    o->score = score;
    const char *pos = t, *w;
    size_t wl;
    while (smt_word_next(&pos, t + tl, SMT_WS_BLANK, &w, &wl)) {
        if (smt_grow(&x->word_off, &x->cap_words, x->n_words + 1, sizeof *x->word_off, 16))
            return SMT_ERR_NOMEM;
        x->word_off[x->n_words++] = (uint32_t)x->words.len;
        if (smt_buf_append(&x->words, w, wl) || smt_buf_putc(&x->words, '\0'))
            return SMT_ERR_NOMEM;
        o->n++;
    }
    x->n_opts++;
    return 0;
}

#define FAIL(...) return smt_err_set(err, SMT_ERR_PARSE, "xml markup: " __VA_ARGS__)

/* A completed tag (closed, or unary) over the clean line's words [start, end). */
static int complete_tag(dec_xml *x, const open_tag *t, size_t start, size_t end, int keep,
                        smt_err *err)
{
    const char *v;
    size_t vl;
    int a = attribute(t->attrs, t->attrs_len, "span", &v, &vl);
    if (a == -2)
        FAIL("tag <%.*s>: an attribute's closing quote is missing", (int)t->name_len, t->name);
    if (a == 0) { /* span="i-j" or span="i" (inclusive) overrides the position */
        const char *dash = memchr(v, '-', vl);
        long long i, j;
        if (smt_parse_ll(v, dash ? (size_t)(dash - v) : vl, 0, 100000, &i) ||
            (dash && smt_parse_ll(dash + 1, vl - (size_t)(dash + 1 - v), 0, 100000, &j)))
            FAIL("span=\"%.*s\" must be \"i-j\" or \"i\"", (int)(vl > 32 ? 32 : vl), v);
        start = (size_t)i;
        end = dash ? (size_t)j + 1 : (size_t)i + 1;
    }
#define IS(tag) (t->name_len == sizeof tag - 1 && !memcmp(t->name, tag, sizeof tag - 1))
    if (IS("wall")) { /* Moses: a wall after each word from the one before the tag to its end */
        for (size_t p = start == 0 ? 0 : start - 1; p < end; p++) {
            if (smt_grow(&x->walls, &x->cap_walls, x->n_walls + 1, sizeof *x->walls, 8))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            x->walls[x->n_walls++] = (uint32_t)p;
        }
        return 0;
    }
    if (IS("zone")) {
        if (start >= end)
            FAIL("<zone> must span at least one word");
        if (smt_grow(&x->zones, &x->cap_zones, 2 * (x->n_zones + 1), sizeof *x->zones, 8))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        x->zones[2 * x->n_zones] = (uint32_t)start;
        x->zones[2 * x->n_zones + 1] = (uint32_t)(end - 1);
        x->n_zones++;
        return 0;
    }
    if (IS("ne")) { /* a placeholder: its word only, and nothing without [placeholder-factor] */
        if (start + 1 != end)
            FAIL("<ne> (a placeholder) must span exactly one word");
        return 0;
    }
    static const char *const refused[] = {"update", "weight-overwrite"};
    for (size_t k = 0; k < sizeof refused / sizeof *refused; k++)
        if (t->name_len == strlen(refused[k]) && !memcmp(t->name, refused[k], t->name_len))
            return smt_err_set(err, SMT_ERR_UNSUPPORTED, "xml markup: <%s> is not supported",
                               refused[k]);
#undef IS
    if (start > end)
        FAIL("tag <%.*s> ends before it starts", (int)t->name_len, t->name);
    if (start == end || !keep)
        return 0; /* over no word (Moses warns and skips it), or -xml-input ignore */
    const char *alt[64], *prob[64];
    size_t altl[64], probl[64], na = 0, np = 0;
    static const char *const attrs[] = {"translation", "english"}; /* english=: Moses's legacy */
    for (int k = 0; k < 2; k++) {
        if ((a = attribute(t->attrs, t->attrs_len, attrs[k], &v, &vl)) == -2)
            FAIL("tag <%.*s>: an attribute's closing quote is missing", (int)t->name_len, t->name);
        if (a == 0 && vl) {
            size_t got = split_alternatives(v, vl, alt + na, altl + na, 64 - na);
            if (na + got > 64)
                FAIL("tag <%.*s>: more than 64 translations", (int)t->name_len, t->name);
            na += got;
        }
    }
    if ((a = attribute(t->attrs, t->attrs_len, "prob", &v, &vl)) == -2)
        FAIL("tag <%.*s>: an attribute's closing quote is missing", (int)t->name_len, t->name);
    if (a == 0 && vl && (np = split_alternatives(v, vl, prob, probl, 64)) > 64)
        FAIL("tag <%.*s>: more than 64 probabilities", (int)t->name_len, t->name);
    if (np && np != na)
        FAIL("tag <%.*s>: %zu translations but %zu probabilities", (int)t->name_len, t->name, na,
             np);
    for (size_t k = 0; k < na; k++) {
        float p = 1.0f;
        if (np && smt_parse_float(prob[k], probl[k], 0, FLT_MAX, 0, &p))
            FAIL("tag <%.*s>: probability '%.*s' is not a number in [0, FLT_MAX]",
                 (int)t->name_len, t->name, (int)(probl[k] > 32 ? 32 : probl[k]), prob[k]);
        float score = logf(p); /* Moses: FloorScore(TransformScore(prob)) */
        if (!(score >= -100.0f))
            score = -100.0f;
        if (add_option(x, start, end - 1, alt[k], altl[k], score))
            return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    return 0;
}

int dec_xml_parse(dec_xml *x, const char *line, size_t len, const char *lb, const char *rb,
                  int keep, smt_err *err)
{
    smt_buf_clear(&x->clean);
    smt_buf_clear(&x->words);
    x->n_words = x->n_opts = x->n_walls = x->n_zones = 0;
    size_t lbl = strlen(lb), rbl = strlen(rb), pos = 0, words = 0, depth = 0;
    open_tag stack[64];
    while (pos < len) {
        const char *l = memmem(line + pos, len - pos, lb, lbl);
        size_t lpos = l ? (size_t)(l - line) : len;
        const char *r = NULL;
        if (l) { /* Moses searches the closing bracket from the opening one's last byte */
            size_t from = lpos + lbl - 1;
            r = memmem(line + from, len - from, rb, rbl);
            if (!r)
                FAIL("'%s' without a closing '%s'", lb, rb);
        }
        /* the text before the tag (or to the end) */
        if (lpos > pos) {
            const char *t = line + pos;
            size_t tl = lpos - pos;
            if (x->clean.len && x->clean.data[x->clean.len - 1] != ' ' && t[0] != ' ' &&
                smt_buf_putc(&x->clean, ' '))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            if (smt_buf_append(&x->clean, t, tl))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            words = smt_words_count(x->clean.data, x->clean.len, SMT_WS_LINE);
        }
        if (!l)
            break;
        size_t rpos = (size_t)(r - line), end = rpos + rbl;
        const char *tag = line + lpos + lbl;
        size_t tl = rpos - (lpos + lbl);
        char c = tl ? tag[0] : '\0';
        if (!(c == '/' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) {
            /* not a tag (Moses: "<" then a letter or "/"): the bracketed text is text */
            if (x->clean.len && x->clean.data[x->clean.len - 1] != ' ' &&
                smt_buf_putc(&x->clean, ' '))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            if (smt_buf_append(&x->clean, line + lpos, end - lpos))
                return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            words = smt_words_count(x->clean.data, x->clean.len, SMT_WS_LINE);
            pos = end;
            continue;
        }
        const char *tb = tag, *te = tag + tl;
        smt_trim(&tb, &te, SMT_WS_BLANK);
        int closing = te > tb && tb[0] == '/', unary = te > tb && te[-1] == '/';
        if (closing && unary)
            FAIL("a tag both closing and unary: %.*s", (int)(tl > 48 ? 48 : tl), tag);
        if (closing)
            tb++;
        if (unary)
            te--;
        const char *name = tb, *sp = tb;
        while (sp < te && *sp != ' ')
            sp++;
        if (sp == name)
            FAIL("an empty tag name");
        open_tag t = {name, sp < te ? sp + 1 : te, (size_t)(sp - name),
                      sp < te ? (size_t)(te - sp - 1) : 0, words};
        if (!closing) {
            if (depth == sizeof stack / sizeof *stack)
                FAIL("tags nested more than %zu deep", depth);
            stack[depth++] = t;
        }
        if (closing || unary) {
            if (depth == 0)
                FAIL("tag <%.*s> closed but never opened", (int)t.name_len, t.name);
            open_tag o = stack[--depth];
            if (o.name_len != t.name_len || memcmp(o.name, t.name, t.name_len) != 0)
                FAIL("tag <%.*s> closed by </%.*s>", (int)o.name_len, o.name, (int)t.name_len,
                     t.name);
            int rc = complete_tag(x, &o, o.pos, words, keep, err);
            if (rc)
                return rc;
        }
        pos = end;
    }
    if (depth)
        FAIL("tag <%.*s> is never closed", (int)stack[depth - 1].name_len, stack[depth - 1].name);
    if (smt_buf_append(&x->clean, "", 0))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    for (size_t k = 0; k < x->n_opts; k++)
        if (x->opts[k].end >= words)
            FAIL("an option over words %u-%u of a sentence of %zu words", x->opts[k].start,
                 x->opts[k].end, words);
    for (size_t k = 0; k < x->n_zones; k++)
        if (x->zones[2 * k + 1] >= words)
            FAIL("a zone over words %u-%u of a sentence of %zu words", x->zones[2 * k],
                 x->zones[2 * k + 1], words);
    return 0;
}
