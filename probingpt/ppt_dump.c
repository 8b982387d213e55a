/* Moses text output of a table: query and dump. Lines are assembled in a buffer and written with
 * one fwrite, since a dump writes millions of them. */
#include <string.h>

#include "ppt_format.h"

typedef struct {
    char buf[16384];
    size_t n;
} line_buf;

static void put(line_buf *l, const char *s, size_t n)
{
    if (n > sizeof l->buf - l->n)
        n = sizeof l->buf - l->n; /* cannot happen within the format's limits; never overflow */
    memcpy(l->buf + l->n, s, n);
    l->n += n;
}

static void put_words(line_buf *l, const smt_vocab *v, const uint32_t *ids, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len;
        const char *w = smt_vocab_word(v, ids[i], &len);
        if (i)
            put(l, " ", 1);
        put(l, w, len);
    }
}

static void put_floats(line_buf *l, const float *f, uint32_t n)
{
    char tmp[32];
    for (uint32_t i = 0; i < n; i++) {
        int k = ppt_format_float(tmp, f[i]);
        if (i)
            put(l, " ", 1);
        put(l, tmp, (size_t)k);
    }
}

/* A field after the first: " |||", then " content" unless it is empty, so "a ||| ||| b" reads back. */
static void sep(line_buf *l, int nonempty)
{
    put(l, nonempty ? " ||| " : " |||", nonempty ? 5 : 4);
}

static void put_pair(line_buf *l, const ppt_table *t, const ppt_targets *g, const ppt_target *x)
{
    put_words(l, ppt_src_vocab(t), g->src_ids, g->src_len);
    sep(l, x->n_words != 0);
    put_words(l, ppt_tgt_vocab(t), x->words, x->n_words);
}

static int flush_line(FILE *out, line_buf *l)
{
    put(l, "\n", 1);
    return fwrite(l->buf, 1, l->n, out) == l->n ? 0 : SMT_ERR_IO;
}

int ppt_write_line(FILE *out, const ppt_table *t, const ppt_targets *g, const ppt_target *x)
{
    line_buf l;
    l.n = 0;
    put_pair(&l, t, g, x);
    sep(&l, 1);
    put_floats(&l, x->scores, ppt_num_scores(t));
    if (x->n_fields >= 4) {
        sep(&l, x->n_align != 0);
        for (uint32_t i = 0; i < x->n_align; i++) {
            char tmp[16];
            int k = snprintf(tmp, sizeof tmp, i ? " %u-%u" : "%u-%u", x->align[2 * i], x->align[2 * i + 1]);
            put(&l, tmp, (size_t)k);
        }
    }
    if (x->n_fields >= 5) {
        sep(&l, x->n_counts != 0);
        put_floats(&l, x->counts, x->n_counts);
    }
    if (x->n_fields >= 6) {
        size_t len;
        const char *e = ppt_extra_text(t, x->extra_id, &len);
        put(&l, " |||", 4);
        put(&l, e, len);
    }
    return flush_line(out, &l);
}

int ppt_write_reordering_line(FILE *out, const ppt_table *t, const ppt_targets *g, const ppt_target *x)
{
    line_buf l;
    l.n = 0;
    put_pair(&l, t, g, x);
    sep(&l, 1);
    put_floats(&l, x->reordering, ppt_num_reordering_scores(t));
    return flush_line(out, &l);
}

typedef struct {
    const ppt_table *t;
    FILE *pt, *rt;
} dump_ctx;

static int dump_group(void *ctx, ppt_targets *g)
{
    dump_ctx *d = ctx;
    ppt_target x;
    while (ppt_targets_next(g, &x)) {
        if (ppt_write_line(d->pt, d->t, g, &x))
            return SMT_ERR_IO;
        if (d->rt && ppt_write_reordering_line(d->rt, d->t, g, &x))
            return SMT_ERR_IO;
    }
    return g->error;
}

int ppt_dump(const ppt_table *t, FILE *pt_out, FILE *rt_out, smt_err *err)
{
    dump_ctx d = {t, pt_out, ppt_num_reordering_scores(t) ? rt_out : NULL};
    int rc = ppt_foreach(t, dump_group, &d);
    if (rc == SMT_ERR_IO)
        return smt_err_set(err, rc, "dump: write error");
    if (rc)
        return smt_err_set(err, rc, "%s: damaged group in the payload", smt_mapped_path(ppt_mapped(t)));
    return 0;
}
