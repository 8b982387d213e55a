/* The bulk word splitter of smt_words.h. */
#include "smt_words.h"

size_t smt_words_split(const char *s, size_t n, smt_ws set, const char **word, size_t *len,
                       size_t max)
{
    size_t k = 0, start = 0;
    uint64_t carry = 0; /* 1: the byte before this window belongs to a word */
    for (size_t base = 0; base < n; base += 64) {
        uint64_t w = ~smt_ws_mask64(s + base, n - base, set); /* word bytes (none past n) */
        uint64_t prev = (w << 1) | carry;                        /* the byte before is a word's */
        uint64_t edges = (w & ~prev) | (~w & prev);              /* starts and ends, in order */
        carry = w >> 63;
        while (edges) {
            unsigned i = (unsigned)__builtin_ctzll(edges);
            edges &= edges - 1;
            if ((w >> i) & 1) {
                start = base + i;
            } else {
                if (k < max) {
                    word[k] = s + start;
                    len[k] = base + i - start;
                }
                k++;
            }
        }
    }
    if (carry) { /* a word runs to the end (n is a multiple of 64) */
        if (k < max) {
            word[k] = s + start;
            len[k] = n - start;
        }
        k++;
    }
    return k;
}
