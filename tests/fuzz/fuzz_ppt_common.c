/* What the probingpt harnesses do with every table they open: see fuzz_ppt_common.h. */
#include "fuzz_ppt_common.h"

#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

typedef struct walk {
    const ppt_table *t;
    FILE *out;
    int strict;
    uint64_t groups;
} walk;

static int on_group(void *ctx, ppt_targets *g)
{
    walk *w = ctx;
    const ppt_table *t = w->t;
    uint32_t n = g->n, seen = 0;
    const uint32_t *src = g->src_ids;
    uint32_t src_len = g->src_len;
    ppt_target x;
    while (ppt_targets_next(g, &x)) {
        seen++;
        if (ppt_write_line(w->out, t, g, &x) != 0 ||
            ppt_write_reordering_line(w->out, t, g, &x) != 0)
            fz_fail("ppt: writing a line to /dev/null failed");
    }
    if (w->strict && (g->error || seen != n))
        fz_fail("ppt: a built table's group %llu gave %u of %u targets (error %d)",
                (unsigned long long)w->groups, seen, n, g->error);
    ppt_targets again;
    int rc = ppt_lookup_ids(t, src, src_len, &again);
    if (rc == 0)
        while (ppt_targets_next(&again, &x))
            ;
    if (w->strict && (rc != 0 || again.n != n || again.src_len != src_len))
        fz_fail("ppt: a built table's group %llu is not found by its own source (rc %d)",
                (unsigned long long)w->groups, rc);
    /* The same lookup through the text of the source words. */
    const smt_vocab *sv = ppt_src_vocab(t);
    char text[4096];
    size_t len = 0;
    int ok = 1;
    for (uint32_t i = 0; i < src_len && ok; i++) {
        size_t wl = 0;
        const char *word = src[i] < sv->n ? smt_vocab_word(sv, src[i], &wl) : NULL;
        if (!word || len + wl + 1 >= sizeof text)
            ok = 0;
        else {
            for (size_t k = 0; k < wl; k++)
                if ((unsigned char)word[k] <= ' ')
                    ok = 0;
            if (len)
                text[len++] = ' ';
            memcpy(text + len, word, wl);
            len += wl;
        }
    }
    if (ok && len) {
        rc = ppt_lookup(t, text, len, &again);
        if (rc == 0)
            while (ppt_targets_next(&again, &x))
                ;
        if (w->strict && (rc != 0 || again.n != n))
            fz_fail("ppt: a built table's group %llu is not found by its source text (rc %d)",
                    (unsigned long long)w->groups, rc);
    }
    w->groups++;
    return 0;
}

int fz_ppt_exercise(const ppt_table *t, int strict)
{
    walk w = {.t = t, .out = fz_devnull(), .strict = strict};
    int rc = ppt_foreach(t, on_group, &w);
    if (strict && rc != 0)
        fz_fail("ppt: ppt_foreach on a built table returned %d", rc);
    if (strict && w.groups != ppt_get_params(t)->num_sources)
        fz_fail("ppt: a built table has %llu groups, its parameters say %llu",
                (unsigned long long)w.groups, (unsigned long long)ppt_get_params(t)->num_sources);
    smt_err err;
    int vrc = ppt_verify(t, &err);
    if (strict && vrc != 0)
        fz_fail("ppt: ppt_verify refuses a built table: %s", err.msg);
    int drc = ppt_dump(t, w.out, w.out, &err);
    if (strict && drc != 0)
        fz_fail("ppt: ppt_dump of a built table failed: %s", err.msg);
    if (vrc == 0 && drc != 0)
        fz_fail("ppt: ppt_verify accepts the table, ppt_dump fails: %s", err.msg);
    fclose(w.out);
    return vrc;
}
