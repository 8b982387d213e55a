/* nmt_json.c — see nmt_json.h. Recursive descent with a depth limit, so a hostile header cannot
 * exhaust the stack. */
#include "nmt_json.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smt_buf.h"
#include "smt_num.h"

enum { NJ_MAX_DEPTH = 64 };

typedef struct nj_parser {
    const char *s;
    size_t len, pos;
    char *msg;
    size_t msg_size;
} nj_parser;

static int fail(nj_parser *p, const char *what)
{
    snprintf(p->msg, p->msg_size, "JSON error at byte %zu: %s", p->pos, what);
    return -1;
}

static void skip_ws(nj_parser *p)
{
    while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
                               p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
        p->pos++;
}

static int put_utf8(char *out, size_t *o, unsigned cp)
{
    if (cp < 0x80) {
        out[(*o)++] = (char)cp;
    } else if (cp < 0x800) {
        out[(*o)++] = (char)(0xC0 | (cp >> 6));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out[(*o)++] = (char)(0xE0 | (cp >> 12));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    } else {
        out[(*o)++] = (char)(0xF0 | (cp >> 18));
        out[(*o)++] = (char)(0x80 | ((cp >> 12) & 0x3F));
        out[(*o)++] = (char)(0x80 | ((cp >> 6) & 0x3F));
        out[(*o)++] = (char)(0x80 | (cp & 0x3F));
    }
    return 0;
}

static int hex4(nj_parser *p, unsigned *cp)
{
    if (p->len - p->pos < 4)
        return fail(p, "truncated \\u escape");
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos++];
        unsigned d = (c >= '0' && c <= '9')   ? (unsigned)(c - '0')
                     : (c >= 'a' && c <= 'f') ? (unsigned)(c - 'a' + 10)
                     : (c >= 'A' && c <= 'F') ? (unsigned)(c - 'A' + 10)
                                              : 16u;
        if (d == 16)
            return fail(p, "bad \\u escape");
        *cp = *cp * 16 + d;
    }
    return 0;
}

/* Parses a string starting at the opening quote into a malloc'ed buffer. */
static int parse_string(nj_parser *p, char **out)
{
    p->pos++; /* opening quote */
    size_t start = p->pos, o = 0, end = start;
    /* unescaped text is never longer than its source: size the buffer by this string alone (not
     * by the rest of the document, which made a header of many strings cost gigabytes) */
    while (end < p->len && p->s[end] != '"')
        end += p->s[end] == '\\' ? 2 : 1;
    char *buf = malloc((end < p->len ? end : p->len) - start + 1);
    if (!buf)
        return fail(p, "out of memory");
    while (p->pos < p->len && p->s[p->pos] != '"') {
        char c = p->s[p->pos++];
        if (c != '\\') {
            buf[o++] = c;
            continue;
        }
        if (p->pos >= p->len)
            break;
        c = p->s[p->pos++];
        unsigned cp;
        switch (c) {
        case 'n': buf[o++] = '\n'; break;
        case 't': buf[o++] = '\t'; break;
        case 'r': buf[o++] = '\r'; break;
        case 'b': buf[o++] = '\b'; break;
        case 'f': buf[o++] = '\f'; break;
        case '"': case '\\': case '/': buf[o++] = c; break;
        case 'u':
            if (hex4(p, &cp)) {
                free(buf);
                return -1;
            }
            if (cp >= 0xD800 && cp < 0xDC00 && p->len - p->pos >= 6 && p->s[p->pos] == '\\' &&
                p->s[p->pos + 1] == 'u') {
                unsigned lo;
                p->pos += 2;
                if (hex4(p, &lo)) {
                    free(buf);
                    return -1;
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            put_utf8(buf, &o, cp);
            break;
        default:
            free(buf);
            return fail(p, "bad escape");
        }
    }
    if (p->pos >= p->len) {
        free(buf);
        return fail(p, "unterminated string");
    }
    p->pos++; /* closing quote */
    buf[o] = 0;
    *out = buf;
    return 0;
}

static int parse_value(nj_parser *p, nj_value *v, int depth);

/* Room for one more item (and, in an object, its key). */
static int append(nj_parser *p, nj_value *v, size_t *cap_items, size_t *cap_keys)
{
    if (smt_grow(&v->items, cap_items, v->n + 1, sizeof *v->items, 8) ||
        (v->type == NJ_OBJ && smt_grow(&v->keys, cap_keys, v->n + 1, sizeof *v->keys, 8)))
        return fail(p, "out of memory");
    return 0;
}

static int parse_container(nj_parser *p, nj_value *v, int depth)
{
    char close = p->s[p->pos] == '{' ? '}' : ']';
    v->type = close == '}' ? NJ_OBJ : NJ_ARR;
    p->pos++;
    size_t cap_items = 0, cap_keys = 0;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        if (append(p, v, &cap_items, &cap_keys))
            return -1;
        skip_ws(p);
        if (v->type == NJ_OBJ) {
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "expected a key");
            if (parse_string(p, &v->keys[v->n]))
                return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(v->keys[v->n]);
                return fail(p, "expected ':'");
            }
            p->pos++;
        }
        memset(&v->items[v->n], 0, sizeof v->items[0]);
        v->n++; /* counted before parsing so that nj_free releases a half-built value */
        if (parse_value(p, &v->items[v->n - 1], depth + 1))
            return -1;
        skip_ws(p);
        if (p->pos < p->len && p->s[p->pos] == ',') {
            p->pos++;
            continue;
        }
        if (p->pos < p->len && p->s[p->pos] == close) {
            p->pos++;
            return 0;
        }
        return fail(p, "expected ',' or a closing bracket");
    }
}

static int parse_value(nj_parser *p, nj_value *v, int depth)
{
    if (depth > NJ_MAX_DEPTH)
        return fail(p, "nested too deeply");
    skip_ws(p);
    if (p->pos >= p->len)
        return fail(p, "unexpected end");
    char c = p->s[p->pos];
    if (c == '{' || c == '[')
        return parse_container(p, v, depth);
    if (c == '"') {
        v->type = NJ_STR;
        return parse_string(p, &v->str);
    }
    static const struct { const char *word; nj_type type; double num; } words[] = {
        {"true", NJ_BOOL, 1}, {"false", NJ_BOOL, 0}, {"null", NJ_NULL, 0}};
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen(words[i].word);
        if (p->len - p->pos >= n && memcmp(p->s + p->pos, words[i].word, n) == 0) {
            v->type = words[i].type;
            v->num = words[i].num;
            p->pos += n;
            return 0;
        }
    }
    /* a JSON number: -?digits[.digits][(e|E)[+-]digits], parsed by the one strict parser */
    size_t n = 0;
    while (p->pos + n < p->len && p->s[p->pos + n] && strchr("+-0123456789.eE", p->s[p->pos + n]))
        n++;
    if (n == 0)
        return fail(p, "unexpected character");
    const char *tok = p->s + p->pos;
    if (tok[0] == '+' || (tok[0] == '-' ? n < 2 || tok[1] == '.' : tok[0] == '.'))
        return fail(p, "bad number");
    int rc = smt_parse_double(tok, n, -DBL_MAX, DBL_MAX, 0, &v->num);
    if (rc == SMT_ERR_LIMIT)
        return fail(p, "number out of range");
    if (rc)
        return fail(p, "bad number");
    v->integral = 1;
    for (size_t i = 0; i < n; i++)
        if (tok[i] == '.' || tok[i] == 'e' || tok[i] == 'E')
            v->integral = 0;
    v->type = NJ_NUM;
    p->pos += n;
    return 0;
}

int nj_parse(const char *text, size_t len, nj_value *root, char *msg, size_t msg_size)
{
    nj_parser p = {text, len, 0, msg, msg_size};
    memset(root, 0, sizeof *root);
    if (parse_value(&p, root, 0)) {
        nj_free(root);
        return -1;
    }
    skip_ws(&p);
    if (p.pos != len) {
        nj_free(root);
        return fail(&p, "trailing characters");
    }
    return 0;
}

void nj_free(nj_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n; i++) {
        nj_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    memset(v, 0, sizeof *v);
}

const nj_value *nj_get(const nj_value *obj, const char *key)
{
    if (!obj || obj->type != NJ_OBJ)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return &obj->items[i];
    return NULL;
}
