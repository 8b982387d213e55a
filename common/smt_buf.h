/* smt_buf.h — the one growable buffer: bytes appended at the end, always NUL-terminated once
 * anything was appended (data may be NULL while len is 0), grown by doubling; and smt_grow, the
 * same growth for arrays of any element. Every size computation is checked for overflow: a
 * request that cannot be met returns SMT_ERR_NOMEM and leaves the buffer as it was. */
#ifndef SMT_BUF_H
#define SMT_BUF_H

#include <stddef.h>
#include <string.h>

#include "smt_error.h"

typedef struct smt_buf {
    char *data;
    size_t len, cap;
} smt_buf;

#if defined(__GNUC__)
#define SMT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define SMT_PRINTF(f, a)
#endif

/* Room for extra more bytes and the NUL. Returns 0 or SMT_ERR_NOMEM. */
int smt_buf_reserve_slow(smt_buf *b, size_t extra);
static inline int smt_buf_reserve(smt_buf *b, size_t extra)
{
    return extra < b->cap - b->len ? 0 : smt_buf_reserve_slow(b, extra);
}

static inline int smt_buf_append(smt_buf *b, const void *s, size_t n)
{
    if (smt_buf_reserve(b, n))
        return SMT_ERR_NOMEM;
    if (n)
        memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

static inline int smt_buf_putc(smt_buf *b, char c) { return smt_buf_append(b, &c, 1); }
static inline int smt_buf_puts(smt_buf *b, const char *s) { return smt_buf_append(b, s, strlen(s)); }

/* Appends the formatted text. Returns 0, SMT_ERR_NOMEM or SMT_ERR_ARG (a format error). */
int smt_buf_printf(smt_buf *b, const char *fmt, ...) SMT_PRINTF(2, 3);

/* Empties b, keeping its memory. */
static inline void smt_buf_clear(smt_buf *b)
{
    b->len = 0;
    if (b->data)
        b->data[0] = '\0';
}

/* Frees b's memory; b is then empty. */
void smt_buf_free(smt_buf *b);

/* An array of *cap elements of elem bytes at *p, grown (doubling from at least `initial`) to hold
 * need elements. Returns 0 or SMT_ERR_NOMEM (overflow or no memory; *p and *cap unchanged). */
int smt_grow(void *p, size_t *cap, size_t need, size_t elem, size_t initial);

#endif
