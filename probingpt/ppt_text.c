/* Tokenizing the Moses text format. The float parser is exact: for a decimal m * 10^e with
 * m < 2^24 and |e| <= 10 both m and 10^|e| are floats, and an IEEE double operation on two floats
 * rounded again to float gives the correctly rounded float (double has 53 >= 2*24+2 bits; Figueroa,
 * "When is double rounding innocuous?", 1995), which is what strtof returns. Anything else goes to
 * strtof itself. tests/test_probingpt_text.c checks this against strtof. */
#include "ppt_text.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smt_num.h"

int ppt_split_fields(const char *line, size_t len, ppt_span f[PPT_FIELDS_MAX], ppt_span *rest)
{
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
        const char *b = p;
        while (b < fe && (*b == ' ' || *b == '\t'))
            b++;
        const char *e = fe;
        while (e > b && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        f[n].b = b;
        f[n].e = e;
        n++;
        if (!sep)
            return n;
        p = sep + 3;
    }
}

static const double pow10_tab[11] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10};

static int slow_float(const char *b, const char *e, float *out)
{
    return smt_parse_float(b, (size_t)(e - b), -FLT_MAX, FLT_MAX, 0, out) ? -1 : 0;
}

int ppt_parse_float(const char *b, const char *e, float *out)
{
    const char *p = b;
    int neg = 0;
    if (p < e && (*p == '-' || *p == '+')) {
        neg = *p == '-';
        p++;
    }
    uint64_t m = 0;
    int exp10 = 0, digits = 0, sig = 0;
    while (p < e && (unsigned)(*p - '0') < 10u) {
        if (m || *p != '0')
            sig++;
        m = m * 10u + (unsigned)(*p - '0');
        digits++;
        p++;
        if (sig > 18)
            return slow_float(b, e, out);
    }
    if (p < e && *p == '.') {
        p++;
        while (p < e && (unsigned)(*p - '0') < 10u) {
            if (m || *p != '0')
                sig++;
            m = m * 10u + (unsigned)(*p - '0');
            exp10--;
            digits++;
            p++;
            if (sig > 18)
                return slow_float(b, e, out);
        }
    }
    if (!digits)
        return slow_float(b, e, out); /* "inf", "nan", hex... strtof decides */
    if (p < e && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, ex = 0, ed = 0;
        if (p < e && (*p == '-' || *p == '+')) {
            eneg = *p == '-';
            p++;
        }
        while (p < e && (unsigned)(*p - '0') < 10u) {
            if (ex < 100000)
                ex = ex * 10 + (*p - '0');
            ed++;
            p++;
        }
        if (!ed)
            return -1;
        exp10 += eneg ? -ex : ex;
    }
    if (p != e)
        return slow_float(b, e, out);
    if (m == 0) {
        *out = neg ? -0.0f : 0.0f;
        return 0;
    }
    if (m > (1u << 24) || exp10 < -10 || exp10 > 10)
        return slow_float(b, e, out);
    double v = (double)m;
    v = exp10 < 0 ? v / pow10_tab[-exp10] : v * pow10_tab[exp10];
    float f = (float)v;
    if (!isfinite(f))
        return -1;
    *out = neg ? -f : f;
    return 0;
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
