/* glm_text.c — KenLM's `query` on a text: blocks of lines are tokenized and looked up, scored
 * (fast lanes, reference, or GPU rows; optionally over threads), then printed and summed in input
 * order, with KenLM's float/double arithmetic: the line total is a float sum of the word scores,
 * the corpus totals doubles. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "glm_internal.h"
#include "glm_kenlm.h"
#include "smt_buf.h"
#include "smt_hash.h"
#include "smt_lines.h"
#include "smt_num.h"
#include "smt_threads.h"
#include "smt_words.h"

/* ---------------------------------------------------------------- number printing */

static const uint64_t pow10_u64[20] = {
    1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u, 1000000000u,
    10000000000u, 100000000000u, 1000000000000u, 10000000000000u, 100000000000000u,
    1000000000000000u, 10000000000000000u, 100000000000000000u, 1000000000000000000u,
    10000000000000000000u};

#ifdef __SIZEOF_INT128__
__extension__ typedef unsigned __int128 u128;

/* 10^k for k in [0, 38] */
static u128 pow10_u128(int k)
{
    return k < 20 ? (u128)pow10_u64[k] : (u128)pow10_u64[19] * pow10_u64[k - 19];
}
#endif

/* writes the n last decimal digits of v at b (v < 10^n) */
static void put_digits(char *b, uint64_t v, int n)
{
    static const char pairs[201] = "0001020304050607080910111213141516171819202122232425262728293031323334353637383940414243444546474849"
                                   "5051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    char *p = b + n;
    for (; v > UINT32_MAX && p - b >= 2; p -= 2) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        memcpy(p - 2, pairs + 2 * r, 2);
    }
    uint32_t u = (uint32_t)v; /* the rest in 32-bit steps */
    for (; p - b >= 2; p -= 2) {
        unsigned r = u % 100;
        u /= 100;
        memcpy(p - 2, pairs + 2 * r, 2);
    }
    if (p > b)
        b[0] = (char)('0' + u);
}

/* writes v in decimal at b, returns the length */
static int put_u64(char *b, uint64_t v)
{
    if (v < 10) {
        b[0] = (char)('0' + v);
        return 1;
    }
    /* the digit count from the bit length: floor(bits * log10(2)), one more when v reaches it */
    int n = (int)(((64 - __builtin_clzll(v)) * 1233) >> 12);
    n += n < 20 && v >= pow10_u64[n];
    put_digits(b, v, n);
    return n;
}

#ifdef __SIZEOF_INT128__
/* float_shortest's range: every product it forms fits 128 bits */
#define FLOAT_FAST_MIN 1e-18f
#define FLOAT_FAST_MAX 1e18f

/* The n significant digits q (10^n when rounding carried into a new decade) of x = q * 10^(E-n+1)
 * as `shortest` gives them: trailing zeros dropped, in *qo and *exp10; the count. */
static int digits_of(uint64_t *qo, int *exp10, uint64_t q, int n, int E)
{
    if (q == pow10_u64[n]) {
        q /= 10;
        E++;
    }
    while (n > 1 && q % 10 == 0) {
        q /= 10;
        n--;
    }
    *qo = q;
    *exp10 = E;
    return n;
}

/* x scaled by 10^k to 9 integer digits q9 (+ the fraction r9 / den), and its rounding interval's
 * ends in the same units (see float_shortest) */
typedef struct digit_search {
    uint64_t q9, hi_q, lo_q;
    int hi_in, lo_in, frac_half, frac_zero;
} digit_search;

/* q9's first digits above d (a power of ten), rounded half-even by the rest below them (low +
 * r9 / den against d / 2), when that lies inside the interval; else 0 */
static inline uint64_t round_in_d(const digit_search *s, uint64_t d)
{
    uint64_t q = s->q9 / d, low2 = 2 * (s->q9 - q * d);
    q += low2 > d            ? 1u
         : low2 == d         ? (uint64_t)(!s->frac_zero || (q & 1))
         : low2 + 1 == d     ? (uint64_t)(s->frac_half > 0 || (s->frac_half == 0 && (q & 1)))
                             : 0u;
    uint64_t c = q * d;
    int in = (c < s->hi_q || (c == s->hi_q && s->hi_in)) &&
             (c > s->lo_q || (c == s->lo_q && s->lo_in));
    return in ? q : 0;
}

/* round_in_d for n significant digits (1..9), each with its constant divisor */
static uint64_t rounded_in(const digit_search *s, int n)
{
    switch (n) {
    case 1: return round_in_d(s, 100000000u);
    case 2: return round_in_d(s, 10000000u);
    case 3: return round_in_d(s, 1000000u);
    case 4: return round_in_d(s, 100000u);
    case 5: return round_in_d(s, 10000u);
    case 6: return round_in_d(s, 1000u);
    case 7: return round_in_d(s, 100u);
    case 8: return round_in_d(s, 10u);
    default: return round_in_d(s, 1u);
    }
}

/* The same digits as `shortest` below for a float x in [FLOAT_FAST_MIN, FLOAT_FAST_MAX], in integer
 * arithmetic: for p = 1, 2, ... the p significant digits of x rounded half-even (as printf's %.*e),
 * the first that lies inside x's rounding interval (strtof reads it back as x). All is scaled by
 * 10^k so that x's 9 significant digits are the integer part q9: x * 10^k = m * P / den = q9 +
 * r9 / den, where den is either 2^s or 10^j (never both), so that no step divides 128 bits. */
static int float_shortest(uint64_t *digits, int *exp10, float x)
{
    uint32_t bits;
    memcpy(&bits, &x, sizeof bits);
    uint32_t m = (bits & 0x7fffffu) | 0x800000u;
    int e = (int)((bits >> 23) & 0xffu) - 150; /* x = m * 2^e, x in [2^(e+23), 2^(e+24)) */
    /* E = floor(log10(x)): first floor((e + 23) log10(2)), then set by q9's digit count */
    int E = ((e + 23) * 78913 + 64 * 262144) / 262144 - 64;
    int s = e < 0 ? -e : 0, fast = 0;
    /* The rounding interval's ends H and L in q9's units, (4m + 2) P / (4 den) and (4m - 2) P /
     * (4 den) ((4m - 1) P / (4 den) at a power of two), as their integer parts hi_q, lo_q and
     * whether each is that integer exactly; the ends belong to the interval when m is even (ties
     * read back as x). r9 / den against 1/2: frac_half (-1, 0, 1), frac_zero. */
    uint32_t mlo = m == 0x800000u ? 4 * m - 1 : 4 * m - 2;
    uint64_t q9 = 0, hi_q = 0, lo_q = 0;
    int hi_exact = 0, lo_exact = 0, frac_half = 0, frac_zero = 0;
    if (e < 0 && s <= 61) { /* x in [1e-3, 2^23) (k in 1..11): every product fits 64 bits */
        for (int tries = 0; tries < 3; tries++) {
            int k = 8 - E;
            if (k < 1 || k > 11)
                break;
            uint64_t N = (uint64_t)m * pow10_u64[k];
            q9 = N >> s;
            if (q9 >= 1000000000u) {
                E++;
            } else if (q9 < 100000000u) {
                E--;
            } else {
                uint64_t r9 = N & ((1ull << s) - 1), half = 1ull << (s - 1);
                frac_half = r9 < half ? -1 : r9 > half;
                frac_zero = r9 == 0;
                uint64_t hn = (uint64_t)(2 * m + 1) * pow10_u64[k], ln = (uint64_t)mlo * pow10_u64[k];
                hi_q = hn >> (s + 1), lo_q = ln >> (s + 2);
                hi_exact = (hn & ((2ull << s) - 1)) == 0;
                lo_exact = (ln & ((4ull << s) - 1)) == 0;
                fast = 1;
                break;
            }
        }
    }
    if (!fast) {
        int j = 0;
        u128 P = 0, r9 = 0;
        for (int tries = 0; tries < 3; tries++) {
            int k = 8 - E;
            if (k > 27 || k < -18)
                return -1;
            j = k < 0 ? -k : 0;
            P = ((u128)1 << (e > 0 ? e : 0)) * pow10_u128(k > 0 ? k : 0);
            u128 N = m * P;
            if (j) { /* x >= 1e9 > 2^23: e > 0, N = m * 2^e < 2^64 */
                q9 = (uint64_t)N / pow10_u64[j];
                r9 = (uint64_t)N - q9 * pow10_u64[j];
            } else {
                q9 = (uint64_t)(N >> s);
                r9 = N & (((u128)1 << s) - 1);
            }
            if (q9 >= 1000000000u)
                E++;
            else if (q9 < 100000000u)
                E--;
            else
                break;
        }
        if (q9 >= 1000000000u || q9 < 100000000u)
            return -1;
        if (j) { /* den = 10^j, P = 2^e: (4m + 2) 2^e / (4 10^j) = (2m + 1) 2^(e-1) / 10^j */
            uint64_t hn = (uint64_t)(2 * m + 1) << (e - 1), ln = (uint64_t)mlo << (e - 2);
            hi_q = hn / pow10_u64[j], lo_q = ln / pow10_u64[j];
            hi_exact = hn % pow10_u64[j] == 0;
            lo_exact = ln % pow10_u64[j] == 0;
        } else { /* den = 2^s: the ends times 4 den are (4m + 2) P and mlo P */
            u128 hn = (4 * (u128)m + 2) * P, ln = mlo * P, mask = ((u128)1 << (s + 2)) - 1;
            hi_q = (uint64_t)(hn >> (s + 2)), lo_q = (uint64_t)(ln >> (s + 2));
            hi_exact = (hn & mask) == 0;
            lo_exact = (ln & mask) == 0;
        }
        u128 den_half = j ? (u128)pow10_u64[j] : (u128)1 << s;
        frac_half = 2 * r9 < den_half ? -1 : 2 * r9 > den_half;
        frac_zero = r9 == 0;
    }
    /* c < H is c <= hi_q unless H is exactly hi_q; c > L is c > lo_q; c == L only when exact */
    int hi_in = !hi_exact || (m & 1u) == 0, lo_in = lo_exact && (m & 1u) == 0;
    digit_search ds = {q9, hi_q, lo_q, hi_in, lo_in, frac_half, frac_zero};
    /* Inside a symmetric interval (m not a power of two) the n digits rounded are inside exactly
     * when some multiple of 10^(9-n) is, true for every n from the shortest on: so from 9 down,
     * to the last n inside. At a power of two, from 1 up to the first inside. */
    int n = 9;
    uint64_t q = 0;
    if (m != 0x800000u && hi_q > lo_q + 10) {
        /* w = hi_q - lo_q - 1 integers lie inside, so a multiple of any power of ten d <= w does:
         * 9 - log10(d) digits are at or above the shortest; try the largest such d (a float's
         * interval spans at most ~120 units), then go down from there */
        uint64_t w = hi_q - lo_q - 1;
        if (w >= 100 && (q = round_in_d(&ds, 100u)))
            n = 7;
        else if ((q = round_in_d(&ds, 10u)))
            n = 8;
    }
    if (!q && !(q = rounded_in(&ds, 9)))
        return -1;
    if (m != 0x800000u) {
        for (uint64_t t; n > 1 && (t = rounded_in(&ds, n - 1)); n--)
            q = t;
    } else {
        for (int i = 1; i < 9; i++)
            if ((q = rounded_in(&ds, i))) {
                n = i;
                break;
            }
        if (n == 9)
            q = rounded_in(&ds, 9);
    }
    return digits_of(digits, exp10, q, n, E);
}
#endif

/* digits/exponent of the shortest %.*e form of x that reads back as x */
static int shortest(char *digits, int *exp10, double x, int is_float)
{
#ifdef __SIZEOF_INT128__
    if (is_float && x >= FLOAT_FAST_MIN && x <= FLOAT_FAST_MAX) {
        uint64_t q;
        int nd = float_shortest(&q, exp10, (float)x);
        if (nd > 0) {
            put_digits(digits, q, nd);
            digits[nd] = '\0';
            return nd;
        }
    }
#endif
    char tmp[64];
    int maxp = is_float ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        snprintf(tmp, sizeof tmp, "%.*e", p - 1, x);
        if (is_float ? strtof(tmp, NULL) == (float)x : strtod(tmp, NULL) == x)
            break;
    }
    int nd = 0;
    const char *c = tmp;
    if (*c == '-')
        c++;
    for (; *c && *c != 'e'; c++)
        if (*c != '.')
            digits[nd++] = *c;
    while (nd > 1 && digits[nd - 1] == '0')
        nd--;
    digits[nd] = '\0';
    long long e = 0; /* the exponent snprintf just wrote ("e-07"): always a small integer */
    smt_parse_ll(c + 1, strlen(c + 1), -400, 400, &e);
    *exp10 = (int)e;
    return nd;
}

/* double-conversion's ToShortest with KenLM's settings: fixed notation for decimal exponents in
 * [-6, 21), else "1.5e-7"; "inf", "-inf", "NaN"; no trailing ".0". */
static int format_shortest(char *buf, double x, int is_float)
{
    if (isnan(x))
        return sprintf(buf, "NaN");
    if (isinf(x))
        return sprintf(buf, x < 0 ? "-inf" : "inf");
    char *b = buf;
    if (signbit(x))
        *b++ = '-';
    if (x == 0) {
        *b++ = '0';
        *b = '\0';
        return (int)(b - buf);
    }
#ifdef __SIZEOF_INT128__
    double ax = fabs(x);
    if (is_float && ax >= 1e-6 && ax < 1e9) { /* fixed notation, the n digits q written at once */
        uint64_t q;
        int e, n = float_shortest(&q, &e, (float)ax);
        if (n > 0 && e >= -6 && e < 21) {
            if (e < 0) { /* "0.", -e - 1 zeros, the digits */
                memcpy(b, "0.00000", 7); /* the 2 - e - 1 <= 7 first bytes (e >= -6) */
                put_digits(b + 1 - e, q, n);
                b += 1 - e + n;
            } else if (n <= e + 1) { /* an integer: the digits, then e + 1 - n zeros */
                put_digits(b, q, n);
                memcpy(b + n, "00000000", 8); /* e + 1 - n <= 8 zeros (e <= 8) */
                b += e + 1;
            } else { /* e + 1 integer digits, '.', the n - e - 1 others */
                uint64_t f = pow10_u64[n - e - 1], ip = q / f;
                put_digits(b, ip, e + 1);
                b[e + 1] = '.';
                put_digits(b + e + 2, q - ip * f, n - e - 1);
                b += n + 1;
            }
            *b = '\0';
            return (int)(b - buf);
        }
    }
#endif
    char d[32];
    int e;
    int nd = shortest(d, &e, fabs(x), is_float);
    if (e >= -6 && e < 21) {
        if (e >= 0) {
            for (int i = 0; i <= e; i++)
                *b++ = i < nd ? d[i] : '0';
            if (nd > e + 1) {
                *b++ = '.';
                for (int i = e + 1; i < nd; i++)
                    *b++ = d[i];
            }
        } else {
            *b++ = '0';
            *b++ = '.';
            for (int i = 0; i < -e - 1; i++)
                *b++ = '0';
            for (int i = 0; i < nd; i++)
                *b++ = d[i];
        }
        *b = '\0';
        return (int)(b - buf);
    }
    *b++ = d[0];
    if (nd > 1) {
        *b++ = '.';
        for (int i = 1; i < nd; i++)
            *b++ = d[i];
    }
    b += sprintf(b, "e%d", e);
    return (int)(b - buf);
}

int glm_format_float(char *buf, float x) { return format_shortest(buf, x, 1); }
int glm_format_double(char *buf, double x) { return format_shortest(buf, x, 0); }

/* ---------------------------------------------------------------- blocks */

#define BLOCK_TOKENS (1u << 18)

typedef glm_block block; /* glm_internal.h: also filled by glm_sentences.c */

/* room for need tokens (need > b->captok) */
static int block_grow_tokens(block *b, size_t need)
{
    size_t c = b->captok;
    if (smt_grow((void **)&b->ids, &c, need, sizeof *b->ids, 1024))
        return -1;
    c = b->captok;
    if (smt_grow((void **)&b->woff, &c, need, sizeof *b->woff, 1024))
        return -1;
    c = b->captok;
    if (smt_grow((void **)&b->prob, &c, need, sizeof *b->prob, 1024))
        return -1;
    c = b->captok;
    if (smt_grow((void **)&b->len, &c, need, sizeof *b->len, 1024))
        return -1;
    b->captok = c;
    return 0;
}

static void block_free(block *b)
{
    free(b->ids), free(b->woff), free(b->sstart), free(b->nwords);
    free(b->prob), free(b->len), free(b->txt), free(b->wc);
}

/* The word cache: a direct-mapped table of word ids in front of the vocabulary's hash (a few
 * thousand frequent words are most tokens of any text). A word of at most 16 bytes is keyed by
 * its bytes (two little-endian words, zero past its end: a word holds no NUL, a separator, so the
 * key also gives its length), so a hit is exact: the id the vocabulary gave for those very bytes.
 * Longer words go to the vocabulary. */
#define WC_BITS 14
#define WC_AFTER 8192 /* words a block sees before it makes its cache */
#define WC_MISS UINT32_MAX /* ix[]: no entry to fill (word too long, or no cache) */
typedef struct wc_entry {
    uint64_t a, b; /* both 0: empty (no word is empty) */
    glm_word id;
} wc_entry;
struct glm_word_cache {
    const glm_model *m; /* the model its ids belong to */
    wc_entry e[1u << WC_BITS];
};

glm_word_cache *glm_word_cache_new(void) { return calloc(1, sizeof(glm_word_cache)); }
void glm_word_cache_free(glm_word_cache *c) { free(c); }

/* The key of word [p, p + len) (1 <= len <= 16) whose line has avail bytes from p on and before
 * bytes before p; returns its entry's index. */
static inline uint32_t wc_key(const char *p, size_t len, size_t avail, size_t before, uint64_t *a,
                              uint64_t *b)
{
    uint64_t x, y;
    if (avail >= 16) {
        memcpy(&x, p, 8), memcpy(&y, p + 8, 8);
    } else if (before + avail >= 16) { /* the line's last 16 bytes, shifted down to p */
        uint64_t lo, hi;
        unsigned sh = (unsigned)(16 - avail); /* 1..15 bytes before p */
        memcpy(&lo, p + avail - 16, 8), memcpy(&hi, p + avail - 8, 8);
        if (sh < 8) {
            x = lo >> (8 * sh) | hi << (64 - 8 * sh);
            y = hi >> (8 * sh);
        } else { /* avail <= 8: the word is in hi (and y unused: len <= 8) */
            x = hi >> (8 * (sh - 8));
            y = 0;
        }
    } else { /* a line of under 16 bytes: not a byte past it is read */
        char t[16] = {0};
        memcpy(t, p, len);
        memcpy(&x, t, 8), memcpy(&y, t + 8, 8);
    }
    /* per length, the masks of the word's bytes in x and in y */
#define WC_K(n) ((n) >= 8 ? ~0ull : (1ull << 8 * (n)) - 1)
#define WC_KEEP(n) {WC_K(n), (n) > 8 ? WC_K((n) - 8) : 0}
    static const uint64_t keep[17][2] = {
        WC_KEEP(0),  WC_KEEP(1),  WC_KEEP(2),  WC_KEEP(3),  WC_KEEP(4),  WC_KEEP(5),
        WC_KEEP(6),  WC_KEEP(7),  WC_KEEP(8),  WC_KEEP(9),  WC_KEEP(10), WC_KEEP(11),
        WC_KEEP(12), WC_KEEP(13), WC_KEEP(14), WC_KEEP(15), WC_KEEP(16)};
#undef WC_KEEP
#undef WC_K
    x &= keep[len][0];
    y &= keep[len][1];
    *a = x, *b = y;
    return (uint32_t)(((x ^ (y * 0x9E3779B97F4A7C15ull)) * 0xFF51AFD7ED558CCDull) >>
                      (64 - WC_BITS));
}

/* a[0..n) == b[0..n) with at most four loads for n <= 16 (never reading past either end) */
static inline int same_bytes(const char *a, const char *b, size_t n)
{
    if (n >= 8) {
        if (n > 16)
            return memcmp(a, b, n) == 0;
        uint64_t x, y, z, t;
        memcpy(&x, a, 8), memcpy(&y, b, 8), memcpy(&z, a + n - 8, 8), memcpy(&t, b + n - 8, 8);
        return ((x ^ y) | (z ^ t)) == 0;
    }
    if (n >= 4) {
        uint32_t x, y, z, t;
        memcpy(&x, a, 4), memcpy(&y, b, 4), memcpy(&z, a + n - 4, 4), memcpy(&t, b + n - 4, 4);
        return ((x ^ y) | (z ^ t)) == 0;
    }
    return n == 0 || (a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1]);
}

/* smt_vocab_find with the hash already computed (its slot was prefetched). */
static inline glm_word vocab_find_hashed(const smt_vocab *v, const char *word, size_t len,
                                         uint64_t h)
{
    uint32_t tag = (uint32_t)(h >> 32);
    for (uint64_t i = h & v->mask;; i = (i + 1) & v->mask) {
        const smt_vocab_slot *s = &v->slots[i];
        if (s->id == SMT_VOCAB_NONE)
            return GLM_UNK;
        if (s->tag == tag) {
            const uint64_t *o = v->off + s->id;
            const char *w = v->str + o[0];
            if (o[1] - o[0] - 1 == len && same_bytes(w, word, len))
                return s->id;
        }
    }
}

/* The separators of the line's 64-byte window at base < n, a bit a byte, the bits past the line
 * set; a line's last window, when the line has 64 bytes or more, from its last 64 bytes (no copy
 * of the tail). */
static inline uint64_t line_window(const char *line, size_t n, size_t base)
{
    size_t left = n - base;
    if (left >= 64 || n < 64)
        return smt_ws_mask64(line + base, left, SMT_WS_SPACE);
    return smt_ws_mask64(line + n - 64, 64, SMT_WS_SPACE) >> (64 - left) | ~0ull << left;
}

/* Tokenizes one line into the block: separators found 64 bytes at a time (SSE2), then for each
 * batch of tokens first every hash, prefetching its slot, then the lookups, so that the
 * vocabulary's cache misses overlap. Inlined once per keep_text. */
static inline __attribute__((always_inline)) int add_line_as(block *b, const glm_model *m,
                                                             const char *line, size_t n,
                                                             int keep_text, int eos)
{
    if (b->nlines + 2 > b->caplines) {
        size_t c = b->caplines;
        if (smt_grow((void **)&b->sstart, &c, b->nlines + 2, sizeof *b->sstart, 1024))
            return -1;
        c = b->caplines;
        if (smt_grow((void **)&b->nwords, &c, b->nlines + 2, sizeof *b->nwords, 1024))
            return -1;
        b->caplines = c;
    }
    size_t need = b->ntok + n / 2 + 2; /* a word and a separator per two bytes, and </s> */
    if (need > b->captok && block_grow_tokens(b, need))
        return -1;
    /* the text, and 16 bytes past its end that emit may read (it copies a word in 16 bytes) */
    if (keep_text && smt_grow((void **)&b->txt, &b->captxt, b->ntxt + n + 1 + 16, 1, 1024))
        return -1;
    b->sstart[b->nlines] = b->ntok;
    uint32_t words = 0;
    const smt_vocab *v = &m->vocab;
    enum { BATCH = 32 };
    /* per miss of the cache (nm of them in a batch): its token, start, length, hash, key */
    uint64_t hs[BATCH], ka[BATCH], kb[BATCH];
    uint32_t st[BATCH], ln[BATCH], ix[BATCH], mt[BATCH];
    /* the cache: made once the block has seen WC_AFTER words (clearing its 384 KB would cost a
     * one-sentence call, glm_score_lines from Python's score(), more than it saves), emptied for
     * another model; without it every word goes to the vocabulary */
    if (!b->wc && b->wseen >= WC_AFTER)
        b->wc = glm_word_cache_new();
    if (b->wc && b->wc->m != m) {
        memset(b->wc->e, 0, sizeof b->wc->e);
        b->wc->m = m;
    }
    wc_entry *wc = b->wc ? b->wc->e : NULL;
    /* the scan, 64 bytes a window: in the window at base, S has a bit at each word's first byte
     * and E at each separator that ends a word (the bytes past the line are separators); pend is
     * the start of a word whose end lies in a later window */
    size_t base = 0, pend = SIZE_MAX;
    uint64_t S = 0, E = 0, carry = 0;
    if (n) {
        uint64_t sep = line_window(line, n, 0), prev = sep << 1 | 1;
        S = ~sep & prev, E = sep & ~prev, carry = sep >> 63;
    }
    int done = n == 0;
    glm_word *ids = b->ids + b->ntok;
    size_t wc_len = wc ? 16 : 0; /* the longest word the cache keys */
    while (!done) {
        unsigned nb = 0, nm = 0; /* tokens and misses in the batch */
        while (nb < BATCH) {
            size_t start, end;
            if (S) { /* a word starts in this window (no word is pending then) */
                start = base + (unsigned)__builtin_ctzll(S);
                S &= S - 1;
                if (!E) { /* it ends in a later window (and is this one's last start) */
                    pend = start;
                    continue;
                }
                end = base + (unsigned)__builtin_ctzll(E);
                E &= E - 1;
            } else { /* the next window, or the line's end; the pending word ends there */
                base += 64;
                if (base >= n) {
                    done = 1;
                    if (pend == SIZE_MAX)
                        break;
                    end = n;
                } else {
                    uint64_t sep = line_window(line, n, base);
                    uint64_t prev = sep << 1 | carry;
                    S = ~sep & prev, E = sep & ~prev, carry = sep >> 63;
                    if (pend == SIZE_MAX || !E) /* nothing pending, or it spans the window */
                        continue;
                    end = base + (unsigned)__builtin_ctzll(E);
                    E &= E - 1;
                }
                start = pend;
                pend = SIZE_MAX;
            }
            size_t len = end - start;
            if (keep_text) {
                b->woff[b->ntok + nb] = (uint32_t)b->ntxt;
                memcpy(b->txt + b->ntxt, line + start, len);
                b->ntxt += len;
                b->txt[b->ntxt++] = '\0';
            }
            uint32_t i = WC_MISS;
            if (len <= wc_len) { /* a hit is the token's id at once */
                uint64_t x, y;
                i = wc_key(line + start, len, n - start, start, &x, &y);
                const wc_entry *e = &wc[i];
                if (((e->a ^ x) | (e->b ^ y)) == 0) {
                    ids[nb++] = e->id;
                    continue;
                }
                ka[nm] = x, kb[nm] = y;
            }
            /* a miss: hashed now, its vocabulary slot prefetched, looked up below */
            ix[nm] = i;
            mt[nm] = nb;
            st[nm] = (uint32_t)start;
            ln[nm] = (uint32_t)len;
            if (m->ken) { /* a KenLM binary: its own word hash and table (glm_kenlm.c) */
                hs[nm] = glm_kenlm_word_hash(line + start, len);
                glm_kenlm_prefetch_word(m->ken, hs[nm]);
            } else {
                hs[nm] = smt_hash_bytes(line + start, len);
                __builtin_prefetch(&v->slots[hs[nm] & v->mask]);
            }
            nm++;
            nb++;
        }
        for (unsigned k = 0; k < nm; k++) {
            glm_word id = m->ken ? glm_kenlm_find_hashed(m->ken, hs[k])
                          : v->n ? vocab_find_hashed(v, line + st[k], ln[k], hs[k])
                                 : GLM_UNK;
            if (ix[k] != WC_MISS)
                wc[ix[k]] = (wc_entry){ka[k], kb[k], id};
            ids[mt[k]] = id;
        }
        b->ntok += nb;
        ids += nb;
        words += nb;
    }
    if (eos) {
        b->ids[b->ntok] = glm_eos(m);
        b->woff[b->ntok] = UINT32_MAX;
        b->ntok++;
    }
    b->nwords[b->nlines] = words;
    b->wseen += words;
    b->nlines++;
    b->sstart[b->nlines] = b->ntok;
    return 0;
}

static int add_line(block *b, const glm_model *m, const char *line, size_t n, int keep_text,
                    int eos)
{
    return keep_text ? add_line_as(b, m, line, n, 1, eos) : add_line_as(b, m, line, n, 0, eos);
}

int glm_block_add_line(glm_block *b, const glm_model *m, const char *line, size_t n, int eos)
{
    return add_line(b, m, line, n, 0, eos);
}

void glm_block_free(glm_block *b) { block_free(b); }

typedef struct score_job {
    const glm_model *m;
    block *b;
    int null_context, fast;
    size_t chunk;
} score_job;

static void score_task(void *ctx, size_t task, unsigned worker)
{
    (void)worker;
    score_job *j = ctx;
    size_t s0 = task * j->chunk, s1 = s0 + j->chunk < j->b->nlines ? s0 + j->chunk : j->b->nlines;
    glm_score_sentences(j->m, j->b->ids, j->b->sstart, s0, s1, j->null_context, j->fast,
                        j->b->prob, j->b->len);
}

/* GPU: each token becomes a row holding its context inside its sentence. */
static int score_gpu(glm_gpu *g, const glm_model *m, block *b, int null_context, glm_word **rows,
                     size_t *caprows, smt_err *err)
{
    unsigned N = glm_order(m);
    if (smt_grow((void **)rows, caprows, b->ntok * N + 1, sizeof **rows, 1024))
        return smt_err_set(err, SMT_ERR_NOMEM, "out of memory for GPU rows");
    for (size_t s = 0; s < b->nlines; s++)
        for (uint64_t t = b->sstart[s]; t < b->sstart[s + 1]; t++) {
            glm_word *row = *rows + t * N;
            for (unsigned i = 0; i < N; i++) {
                int64_t src = (int64_t)t - (int64_t)(N - 1) + i;
                if (src >= (int64_t)b->sstart[s])
                    row[i] = b->ids[src];
                else if (!null_context && src == (int64_t)b->sstart[s] - 1)
                    row[i] = glm_bos(m);
                else
                    row[i] = GLM_NONE;
            }
        }
    return glm_gpu_score_rows(g, *rows, b->ntok, b->prob, b->len, err);
}

typedef struct outbuf {
    FILE *f;
    char *p;
    size_t n, cap;
    int werr; /* 0, or the errno of the first failed write (ENOSPC on a full disk) */
} outbuf;

static void ob_write(outbuf *o, const char *s, size_t n)
{
    if (o->werr)
        return;
    errno = 0;
    if (fwrite(s, 1, n, o->f) != n || ferror(o->f))
        o->werr = errno ? errno : EIO;
}

static void ob_flush(outbuf *o)
{
    if (o->f && o->n)
        ob_write(o, o->p, o->n);
    o->n = 0;
}

static inline void ob_put(outbuf *o, const char *s, size_t n)
{
    if (o->n + n > o->cap)
        ob_flush(o);
    if (n > o->cap) {
        ob_write(o, s, n);
        return;
    }
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

/* Everything written so far reached the stream (flushed): 0, or SMT_ERR_IO naming the error. */
static int ob_sync(outbuf *o, smt_err *err)
{
    ob_flush(o);
    if (!o->f)
        return 0;
    if (!o->werr) {
        errno = 0;
        if (fflush(o->f) || ferror(o->f))
            o->werr = errno ? errno : EIO;
    }
    return o->werr ? smt_err_errno(err, SMT_ERR_IO, o->werr, "writing the output failed") : 0;
}

/* Prints and sums a scored block in input order (KenLM's arithmetic). */
static int sums_push(float **a, size_t *n, size_t *cap, float x)
{
    if (*n == *cap && smt_grow((void **)a, cap, *n + 1, sizeof **a, 1024))
        return SMT_ERR_NOMEM;
    (*a)[(*n)++] = x;
    return 0;
}

/* A token's score p added to its line's total, and to the OOV sums when id is unknown (returned). */
static inline int add_score(float p, glm_word id, float *total, uint64_t *oov, glm_query_stats *st)
{
    *total += p;
    if (id != GLM_UNK)
        return 0;
    ++*oov;
    st->total_oov += p;
    return 1;
}

/* Prints and sums a scored block in input order (KenLM's arithmetic); sums (may be NULL) keeps the
 * addends. SMT_ERR_NOMEM (sums) or 0. */
static int emit(const glm_model *m, const block *b, int verbosity, outbuf *o, glm_query_stats *st,
                glm_query_sums *sums)
{
    char num[64]; /* the longest: "Total: " + a float (22) + " OOV: " + 20 digits + "\n" */
    int words = verbosity >= GLM_VERBOSE_WORD && o->f;
    for (size_t s = 0; s < b->nlines; s++) {
        float total = 0.0f;
        uint64_t oov = 0;
        uint64_t t0 = b->sstart[s], t1 = b->sstart[s + 1];
        if (!words && !sums) { /* the sums alone: no printer, no addends kept */
            for (uint64_t t = t0; t < t1; t++)
                add_score(b->prob[t], b->ids[t], &total, &oov, st);
            t0 = t1;
        }
        for (uint64_t t = t0; t < t1; t++) {
            float p = b->prob[t];
            if (add_score(p, b->ids[t], &total, &oov, st) && sums &&
                sums_push(&sums->oov_probs, &sums->n_oov, &sums->cap_oov_, p))
                return SMT_ERR_NOMEM;
            if (words) {
                /* the word: its length from the next word's offset (the words lie one after
                 * another in txt, each with a NUL) */
                uint32_t wo = b->woff[t], nx = t + 1 < b->ntok ? b->woff[t + 1] : UINT32_MAX;
                const char *w = wo == UINT32_MAX ? "</s>" : b->txt + wo;
                size_t wl = wo == UINT32_MAX ? 4 : nx != UINT32_MAX ? nx - wo - 1 : strlen(w);
                if (wl <= 16 && o->n + 16 + sizeof num <= o->cap && wo != UINT32_MAX) {
                    memcpy(o->p + o->n, w, 16); /* txt has 16 bytes past its last word */
                    o->n += wl;
                } else {
                    ob_put(o, w, wl);
                }
                /* "=id len prob\t", formatted in the buffer itself when it has room */
                if (o->n + sizeof num > o->cap)
                    ob_flush(o);
                char *q = o->cap >= sizeof num ? o->p + o->n : num;
                int n = 0;
                q[n++] = '=';
                n += put_u64(q + n, b->ids[t]);
                q[n++] = ' ';
                n += put_u64(q + n, b->len[t]);
                q[n++] = ' ';
                n += glm_format_float(q + n, p);
                q[n++] = '\t';
                if (q == num)
                    ob_put(o, num, (size_t)n);
                else
                    o->n += (size_t)n;
            }
        }
        st->tokens += t1 - b->sstart[s];
        if (verbosity >= GLM_VERBOSE_SENTENCE && o->f) {
            memcpy(num, "Total: ", 7);
            int n = 7 + glm_format_float(num + 7, total);
            memcpy(num + n, " OOV: ", 6);
            n += 6;
            n += put_u64(num + n, oov);
            num[n++] = '\n';
            ob_put(o, num, (size_t)n);
        }
        st->total += total;
        st->oovs += oov;
        st->lines++;
        if (sums && sums_push(&sums->line_totals, &sums->n_lines, &sums->cap_lines_, total))
            return SMT_ERR_NOMEM;
    }
    if (sums)
        sums->tokens += b->sstart[b->nlines] - b->sstart[0];
    (void)m;
    return 0;
}

void glm_query_sums_free(glm_query_sums *s)
{
    free(s->line_totals);
    free(s->oov_probs);
    memset(s, 0, sizeof *s);
}

void glm_query_stats_add(glm_query_stats *st, const glm_query_sums *s)
{
    for (size_t i = 0; i < s->n_lines; i++) /* as emit adds them */
        st->total += s->line_totals[i];
    for (size_t i = 0; i < s->n_oov; i++)
        st->total_oov += s->oov_probs[i];
    st->lines += s->n_lines;
    st->oovs += s->n_oov;
    st->tokens += s->tokens;
}

/* The perplexities of st and KenLM's four summary lines in sum (256 bytes); the length. */
static int summary_text(glm_query_stats *st, char *sum, size_t size)
{
    st->ppl_incl = pow(10.0, -(st->total / (double)st->tokens));
    st->ppl_excl = pow(10.0, -((st->total - st->total_oov) / (double)(st->tokens - st->oovs)));
    char a[40], c[40];
    glm_format_double(a, st->ppl_incl);
    glm_format_double(c, st->ppl_excl);
    return snprintf(sum, size,
                    "Perplexity including OOVs:\t%s\nPerplexity excluding OOVs:\t%s\n"
                    "OOVs:\t%llu\nTokens:\t%llu\n",
                    a, c, (unsigned long long)st->oovs, (unsigned long long)st->tokens);
}

int glm_query_summary(FILE *out, glm_query_stats *st, smt_err *err)
{
    char sum[256];
    int n = summary_text(st, sum, sizeof sum);
    errno = 0;
    if (fwrite(sum, 1, (size_t)n, out) != (size_t)n || fflush(out) || ferror(out))
        return smt_err_errno(err, SMT_ERR_IO, errno ? errno : EIO, "writing the output failed");
    return 0;
}

int glm_query_lines(const glm_model *m, smt_lines *in, FILE *out, const glm_query_options *opt,
                    glm_query_sums *sums, glm_query_stats *stats, smt_err *err)
{
    const char *in_path = smt_lines_path(in);
    glm_query_options def = {GLM_VERBOSE_WORD, 0, 1, GLM_PATH_FAST, 0};
    if (!opt)
        opt = &def;
    glm_query_stats st;
    memset(&st, 0, sizeof st);
    smt_pool *pool = NULL;
    glm_gpu *gpu = NULL;
    glm_word *rows = NULL;
    size_t caprows = 0;
    block b;
    memset(&b, 0, sizeof b);
    outbuf o = {out, malloc(1 << 16), 0, 1 << 16, 0};
    int keep_text = opt->verbosity >= GLM_VERBOSE_WORD && out;
    int rc = o.p ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    if (!rc && opt->path == GLM_PATH_GPU && m->ken)
        rc = smt_err_set(err, SMT_ERR_UNSUPPORTED,
                         "a KenLM binary is scored on the CPU only (no --gpu): build a .glm");
    if (!rc && opt->path == GLM_PATH_GPU)
        rc = glm_gpu_create(&gpu, m, err);
    if (!rc && opt->threads != 1 && opt->path != GLM_PATH_GPU)
        rc = smt_pool_create(&pool, opt->threads, err);
    int eof = 0;
    while (!rc && !eof) {
        b.ntok = b.nlines = b.ntxt = 0;
        while (b.ntok < BLOCK_TOKENS && !(opt->flush_lines && b.nlines > 0)) {
            char *line;
            size_t n;
            int got = smt_lines_next(in, &line, &n, err);
            if (got < 0) {
                rc = got;
                break;
            }
            if (got == 0) {
                eof = 1;
                break;
            }
            if (add_line(&b, m, line, n, keep_text, !opt->null_context)) {
                rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory reading %s", in_path);
                break;
            }
        }
        if (rc || b.nlines == 0)
            break;
        if (opt->path == GLM_PATH_GPU) {
            rc = score_gpu(gpu, m, &b, opt->null_context, &rows, &caprows, err);
        } else if (pool) {
            score_job j = {m, &b, opt->null_context, opt->path == GLM_PATH_FAST, 0};
            size_t tasks = (size_t)smt_pool_size(pool) * 16;
            j.chunk = (b.nlines + tasks - 1) / tasks;
            smt_pool_run(pool, (b.nlines + j.chunk - 1) / j.chunk, score_task, &j);
        } else {
            glm_score_sentences(m, b.ids, b.sstart, 0, b.nlines, opt->null_context,
                                opt->path == GLM_PATH_FAST, b.prob, b.len);
        }
        if (!rc && emit(m, &b, opt->verbosity, &o, &st, sums))
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
        if (!rc && opt->flush_lines)
            rc = ob_sync(&o, err);
        if (!rc && o.werr) /* a write failed: stop at once, the output is lost anyway */
            rc = ob_sync(&o, err);
    }
    if (!rc) {
        char sum[256];
        int n = summary_text(&st, sum, sizeof sum);
        if (out && !sums)
            ob_put(&o, sum, (size_t)n);
        rc = ob_sync(&o, err);
        if (stats && !rc)
            *stats = st;
    }
    free(o.p);
    free(rows);
    block_free(&b);
    smt_pool_destroy(pool);
    glm_gpu_free(gpu);
    return rc;
}
