/* nmt_nbest.c — the one reader of Moses n-best lists read from files (nmt rescore, nmt tune): a
 * line split into its fields, a feature's score, the plain words without segmentation markers.
 * The decoder writes its lists from data (decoder.h's dec_nbest) and never reads one back. */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <string.h>

#include "nmt.h"
#include "smt_num.h"
#include "smt_words.h"

/* A number field: blanks around it are separators, the rest must be the number (NaN never). */
static int parse_field_double(const char *f, double *out)
{
    const char *b = f, *e = f + strlen(f);
    smt_trim(&b, &e, SMT_WS_BLANK);
    return smt_parse_double(b, (size_t)(e - b), -HUGE_VAL, HUGE_VAL, SMT_NUM_ALLOW_INF, out);
}

int nmt_nbest_parse(char *line, nmt_nbest_line *out)
{
    char *f[4], *p = line;
    for (int i = 0; i < 4; i++) {
        f[i] = p;
        char *sep = strstr(p, " ||| ");
        if (!sep) {
            if (i < 3)
                return -1;
            out->rest = NULL;
            break;
        }
        *sep = 0;
        p = sep + 5;
        if (i == 3)
            out->rest = p;
    }
    long long id;
    const char *idf = f[0], *ide = f[0] + strlen(f[0]);
    smt_trim(&idf, &ide, SMT_WS_BLANK);
    if (smt_parse_ll(idf, (size_t)(ide - idf), 0, LONG_MAX, &id))
        return -1;
    out->id = (long)id;
    out->words = f[1];
    out->feats = f[2];
    if (parse_field_double(f[3], &out->total))
        return -1;
    return 0;
}

int nmt_nbest_feature(const char *feats, const char *name, double *value)
{
    size_t n = strlen(name);
    if (n == 0) /* strstr would match everywhere without moving on */
        return 0;
    const char *p = feats;
    while ((p = strstr(p, name)) != NULL) {
        if ((p == feats || p[-1] == ' ') && p[n] == '=' && p[n + 1] == ' ') {
            const char *pos = p + n + 2, *v = pos;
            size_t len = 0;
            smt_word_next(&pos, pos + strlen(pos), SMT_WS_BLANK, &v, &len);
            return smt_parse_double(v, len, -HUGE_VAL, HUGE_VAL, SMT_NUM_ALLOW_INF, value) ? -1
                                                                                            : 1;
        }
        p += n;
    }
    return 0;
}

int nmt_nbest_feature_name_check(const char *name, smt_err *err)
{
    if (!*name || name[strcspn(name, " \t=|")])
        return smt_err_set(err, SMT_ERR_ARG,
                           "feature name '%.64s' cannot name an n-best feature (empty, or holds a "
                           "blank, '=' or '|')", name);
    return 0;
}

static int is_segment_marker(const char *w, size_t n)
{
    size_t i = 1;
    if (n < 5 || w[0] != '|' || w[n - 1] != '|')
        return 0;
    while (i < n - 1 && w[i] >= '0' && w[i] <= '9')
        i++;
    if (i == 1 || w[i] != '-')
        return 0;
    size_t j = ++i;
    while (i < n - 1 && w[i] >= '0' && w[i] <= '9')
        i++;
    return i > j && i == n - 1;
}

size_t nmt_nbest_plain(const char *words, char *out)
{
    size_t o = 0, n;
    const char *pos = words, *end = words + strlen(words), *w;
    while (smt_word_next(&pos, end, SMT_WS_BLANK, &w, &n)) {
        if (is_segment_marker(w, n))
            continue;
        if (o)
            out[o++] = ' ';
        memmove(out + o, w, n); /* out may be words: o never passes w */
        o += n;
    }
    out[o] = 0;
    return o;
}
