/* nmt_shortlist.c — lexical shortlists (seed 001): which target words the output layer of a batch
 * considers. The search builds the batch's set (sorted ids, so the smaller-id tie rule survives the
 * renumbering) and a compact projection from it; see nmt_search.c. */
#include <stdlib.h>
#include <string.h>

#include "nmt_internal.h"
#include "nmt_shortlist.h"
#include "smt_lines.h"
#include "smt_buf.h"

int nmt_shortlist_load(nmt_shortlist **out, const nmt_model *m, const char *path, int per_word,
                       int frequent, smt_err *err)
{
    *out = NULL;
    if (per_word < 1 || frequent < 0)
        return smt_err_set(err, SMT_ERR_ARG, "%s: per_word %d must be >= 1, frequent %d >= 0",
                           path, per_word, frequent);
    int Vs = m->cfg.src_vocab_size;
    int *count = calloc((size_t)Vs + 1, sizeof *count);
    nmt_shortlist *s = calloc(1, sizeof *s);
    size_t cap = 0, n = 0, lines = 0;
    int32_t *pairs = NULL; /* (src, tgt) in file order */
    smt_lines *r = NULL;
    int rc = !count || !s ? smt_err_set(err, SMT_ERR_NOMEM, "out of memory") : 0;
    if (!rc)
        rc = smt_lines_open(&r, path, 0, err);
    char *line;
    size_t len;
    while (!rc && (rc = smt_lines_next(r, &line, &len, err)) == 1) {
        rc = 0;
        /* exactly two words: a third column (a score) would otherwise drop every line silently */
        char *sp = strpbrk(line, " \t");
        if (sp)
            *sp = 0;
        int32_t a, b;
        if (!sp || nmt_model_tokenize(m, 0, line, &a, 1) != 1 ||
            nmt_model_tokenize(m, 1, sp + 1, &b, 1) != 1) {
            rc = smt_err_set(err, SMT_ERR_PARSE, "%s:%llu: want `source_word target_word`", path,
                             (unsigned long long)smt_lines_lineno(r));
            break;
        }
        lines++;
        if (a == m->cfg.unk_id || b == m->cfg.unk_id || count[a] >= per_word)
            continue;
        if (n == cap && smt_grow(&pairs, &cap, n + 1, 2 * sizeof *pairs, 4096)) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
            break;
        }
        pairs[2 * n] = a;
        pairs[2 * n + 1] = b;
        n++;
        count[a]++;
    }
    if (rc > 0)
        rc = 0;
    if (!rc && lines == 0) /* a list of nothing: every batch would get the frequent words only */
        rc = smt_err_set(err, SMT_ERR_PARSE, "%s: no `source_word target_word` lines", path);
    smt_lines_close(r);
    if (!rc) {
        s->frequent = frequent;
        s->off = calloc((size_t)Vs + 1, sizeof *s->off);
        s->tgt = malloc((n ? n : 1) * sizeof *s->tgt);
        if (!s->off || !s->tgt)
            rc = smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    }
    if (!rc) {
        for (int w = 0; w < Vs; w++)
            s->off[w + 1] = s->off[w] + count[w];
        memset(count, 0, (size_t)Vs * sizeof *count);
        for (size_t i = 0; i < n; i++) {
            int a = pairs[2 * i];
            s->tgt[s->off[a] + count[a]++] = pairs[2 * i + 1];
        }
    }
    free(pairs);
    free(count);
    if (rc) {
        nmt_shortlist_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

void nmt_shortlist_free(nmt_shortlist *s)
{
    if (!s)
        return;
    free(s->off);
    free(s->tgt);
    free(s);
}

int nmt_shortlist_ids(const nmt_shortlist *s, const nmt_model *m, const nmt_sentence *src, int n,
                      int32_t **ids_out)
{
    int V = m->cfg.tgt_vocab_size;
    unsigned char *mark = calloc((size_t)V, 1);
    int32_t *ids = malloc((size_t)V * sizeof *ids);
    if (!mark || !ids) {
        free(mark);
        free(ids);
        return -1;
    }
    for (int i = 0; i < s->frequent && i < V; i++)
        mark[i] = 1;
    mark[m->cfg.eos_id] = 1;
    mark[m->cfg.unk_id] = 1;
    for (int i = 0; i < n; i++)
        for (int t = 0; t < src[i].len; t++) {
            int32_t w = src[i].ids[t];
            if (w >= 0 && w < m->cfg.src_vocab_size)
                for (int j = s->off[w]; j < s->off[w + 1]; j++)
                    mark[s->tgt[j]] = 1;
        }
    int S = 0;
    for (int i = 0; i < V; i++)
        if (mark[i] && i != m->cfg.pad_id && i != m->cfg.bos_id)
            ids[S++] = i;
    free(mark);
    *ids_out = ids;
    return S;
}
