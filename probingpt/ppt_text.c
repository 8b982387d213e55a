/* Tokenizing the Moses text format. Numbers are common/smt_num's (strict, correctly rounded, with a
 * fast path for the short decimals Moses writes); tests/test_probingpt_text.c checks them against
 * strtof. */
#include "ppt_text.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smt_num.h"

int ppt_split_fields(const char *line, size_t len, ppt_span f[PPT_FIELDS_MAX], ppt_span *rest)
{
    /* carriage returns ending the line are line ending, not text (the reader takes one of a "\r\n";
     * more would come back one fewer each time a dump is read again) */
    while (len && line[len - 1] == '\r')
        len--;
    const char *p = line, *end = line + len;
    int n = 0;
    for (;;) {
        if (n == PPT_FIELDS_MAX) {
            rest->b = p;
            rest->e = end;
            return n + 1;
        }
        /* find the next "|||" */
        const char *sep = p;
        for (;;) {
            sep = memchr(sep, '|', (size_t)(end - sep));
            if (!sep || (end - sep >= 3 && sep[1] == '|' && sep[2] == '|'))
                break;
            sep++;
        }
        const char *fe = sep ? sep : end;
        const char *b = p, *e = fe;
        smt_trim(&b, &e, SMT_WS_BLANK);
        f[n].b = b;
        f[n].e = e;
        n++;
        if (!sep)
            return n;
        p = sep + 3;
    }
}

int ppt_parse_float(const char *b, const char *e, float *out)
{
    return smt_parse_float(b, (size_t)(e - b), -FLT_MAX, FLT_MAX, 0, out) ? -1 : 0;
}

int ppt_parse_floats(ppt_span s, float *out, int max, ppt_span *bad)
{
    ppt_span w;
    int n = 0;
    while (ppt_next_word(&s, &w)) {
        if (n == max)
            return -2;
        if (ppt_parse_float(w.b, w.e, &out[n])) {
            *bad = w;
            return -1;
        }
        n++;
    }
    return n;
}

int ppt_parse_probs(ppt_span s, float *out, int max, ppt_span *bad)
{
    int n = ppt_parse_floats(s, out, max, bad);
    for (int i = 0; i < n; i++)
        if (out[i] < 0) {
            /* find the token again for the message */
            ppt_span w;
            for (int k = 0; k <= i; k++)
                ppt_next_word(&s, &w);
            *bad = w;
            return PPT_NUM_NEGATIVE;
        }
    return n;
}

static int parse_pos(const char **p, const char *e)
{
    int v = 0, d = 0;
    while (*p < e && (unsigned)(**p - '0') < 10u) {
        v = v * 10 + (**p - '0');
        (*p)++;
        if (++d > 3)
            return -1;
    }
    return d && v < 255 ? v : -1;
}

int ppt_parse_alignment(ppt_span s, uint8_t *pairs, int max_pairs, ppt_span *bad)
{
    ppt_span w;
    int n = 0;
    while (ppt_next_word(&s, &w)) {
        const char *p = w.b;
        int a = parse_pos(&p, w.e);
        int ok = a >= 0 && p < w.e && *p == '-';
        int b = -1;
        if (ok) {
            p++;
            b = parse_pos(&p, w.e);
            ok = b >= 0 && p == w.e;
        }
        if (!ok || n == max_pairs) {
            *bad = w;
            return -1;
        }
        pairs[2 * n] = (uint8_t)a;
        pairs[2 * n + 1] = (uint8_t)b;
        n++;
    }
    return n;
}
