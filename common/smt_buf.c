/* The growable buffer and array growth of smt_buf.h. */
#include "smt_buf.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int smt_grow(void *p, size_t *cap, size_t need, size_t elem, size_t initial)
{
    if (need <= *cap)
        return 0;
    if (elem == 0 || need > SIZE_MAX / elem)
        return SMT_ERR_NOMEM;
    size_t c = *cap ? *cap : (initial ? initial : 1);
    while (c < need)
        c = c > SIZE_MAX / 2 / elem ? need : 2 * c;
    void **pp = p;
    void *q = realloc(*pp, c * elem);
    if (!q)
        return SMT_ERR_NOMEM;
    *pp = q;
    *cap = c;
    return 0;
}

int smt_buf_reserve_slow(smt_buf *b, size_t extra)
{
    if (extra > SIZE_MAX - 1 - b->len)
        return SMT_ERR_NOMEM;
    return smt_grow(&b->data, &b->cap, b->len + extra + 1, 1, 256);
}

int smt_buf_printf(smt_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char tmp[256];
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return SMT_ERR_ARG;
    if ((size_t)n < sizeof tmp)
        return smt_buf_append(b, tmp, (size_t)n);
    if (smt_buf_reserve(b, (size_t)n))
        return SMT_ERR_NOMEM;
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
    return 0;
}

void smt_buf_free(smt_buf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}
