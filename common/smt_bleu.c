/* Corpus BLEU as multi-bleu.perl computes it: see smt_bleu.h. */
#include "smt_bleu.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "smt_buf.h"
#include "smt_words.h"

typedef struct tok {
    const char *s;
    int n;
} tok;

/* The words of a sentence (smt_words.h's line separators). */
static int split(const char *s, tok **out)
{
    int n = 0;
    size_t cap = 0, len;
    const char *pos = s, *end = s + strlen(s), *w;
    *out = NULL;
    while (smt_word_next(&pos, end, SMT_WS_LINE, &w, &len)) {
        if (smt_grow(out, &cap, (size_t)n + 1, sizeof **out, 64))
            return n; /* out of memory: a shorter sentence, never a crash */
        (*out)[n++] = (tok){w, (int)len};
    }
    return n;
}

static int gram_eq(const tok *a, const tok *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i].n != b[i].n || memcmp(a[i].s, b[i].s, (size_t)a[i].n) != 0)
            return 0;
    return 1;
}

void smt_bleu_stats(const char *hyp, const char *const *refs, int nref, smt_bleu_stat *st)
{
    tok *h, *r[SMT_BLEU_MAX_REFS];
    int hn = split(hyp, &h), rn[SMT_BLEU_MAX_REFS];
    if (nref > SMT_BLEU_MAX_REFS)
        nref = SMT_BLEU_MAX_REFS;
    memset(st, 0, sizeof *st);
    st->hyp_len = hn;
    for (int k = 0; k < nref; k++) {
        rn[k] = split(refs[k], &r[k]);
        /* multi-bleu.perl: the reference length closest to the hypothesis, the shorter on ties */
        int d = abs(rn[k] - hn), bd = abs((int)st->ref_len - hn);
        if (k == 0 || d < bd || (d == bd && rn[k] < st->ref_len))
            st->ref_len = rn[k];
    }
    for (int n = 1; n <= 4; n++) {
        st->total[n - 1] = hn >= n ? hn - n + 1 : 0;
        for (int i = 0; i + n <= hn; i++) {
            int first = 1, ch = 0, cr = 0;
            for (int j = 0; j < i && first; j++)
                if (gram_eq(h + i, h + j, n))
                    first = 0;
            if (!first)
                continue; /* count each distinct n-gram once, clipped by its most generous reference */
            for (int j = i; j + n <= hn; j++)
                ch += gram_eq(h + i, h + j, n);
            for (int k = 0; k < nref; k++) {
                int c = 0;
                for (int j = 0; j + n <= rn[k]; j++)
                    c += gram_eq(h + i, r[k] + j, n);
                cr = c > cr ? c : cr;
            }
            st->match[n - 1] += ch < cr ? ch : cr;
        }
    }
    free(h);
    for (int k = 0; k < nref; k++)
        free(r[k]);
}

double smt_bleu_score(const smt_bleu_stat *sum)
{
    double logp = 0;
    for (int n = 0; n < 4; n++) {
        if (sum->match[n] == 0 || sum->total[n] == 0)
            return 0.0;
        logp += log((double)sum->match[n] / (double)sum->total[n]);
    }
    double bp = sum->hyp_len < sum->ref_len
                    ? exp(1.0 - (double)sum->ref_len / (double)(sum->hyp_len ? sum->hyp_len : 1))
                    : 1.0;
    return 100.0 * bp * exp(logp / 4.0);
}

void smt_bleu_add(smt_bleu_stat *sum, const smt_bleu_stat *s)
{
    sum->hyp_len += s->hyp_len;
    sum->ref_len += s->ref_len;
    for (int n = 0; n < 4; n++) {
        sum->match[n] += s->match[n];
        sum->total[n] += s->total[n];
    }
}

double smt_bleu_corpus(size_t n, const char *const *hyp, const char *const *const *refs, int nref)
{
    smt_bleu_stat sum, s;
    memset(&sum, 0, sizeof sum);
    if (nref > SMT_BLEU_MAX_REFS)
        nref = SMT_BLEU_MAX_REFS;
    for (size_t i = 0; i < n; i++) {
        const char *r[SMT_BLEU_MAX_REFS];
        for (int k = 0; k < nref; k++)
            r[k] = refs[k][i];
        smt_bleu_stats(hyp[i], r, nref, &s);
        smt_bleu_add(&sum, &s);
    }
    return smt_bleu_score(&sum);
}
