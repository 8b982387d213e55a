/* fuzz_ppt_text — a text phrase table and reordering table through ppt_build (probingpt's Moses
 * text parser and table builder). Input: the phrase table, then optionally a line "#==#" and the
 * reordering table. A table the builder accepts must open with every check, walk cleanly, find
 * every source, and dump to text that builds the same table again (dump, build, dump: the same
 * bytes). Built once in input order and once with --table-limit 2. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_ppt_common.h"
#include "fuzz_util.h"
#include "probingpt.h"

/* Builds pt (and rt) into out; on success opens, checks and dumps it (malloc'ed text). */
static char *build_and_dump(const char *pt, const char *rt, uint32_t limit, size_t *len, int *rc)
{
    char *out = fz_path("out.ppt");
    ppt_build_options opt = {.phrase_table = pt, .reordering = rt, .out = out,
                             .table_limit = limit, .progress = -1, .threaded_input = 0};
    smt_err err;
    char *text = NULL;
    *len = 0;
    *rc = ppt_build(&opt, NULL, &err);
    if (*rc == 0) {
        ppt_table *t = NULL;
        if (ppt_open(&t, out, SMT_OPEN_VERIFY, &err) != 0)
            fz_fail("ppt_build wrote a table ppt_open refuses: %s", err.msg);
        fz_ppt_exercise(t, 1);
        FILE *f = open_memstream(&text, len);
        if (!f || ppt_dump(t, f, NULL, &err) != 0 || fclose(f) != 0)
            fz_fail("ppt_dump of a built table failed");
        ppt_close(t);
        unlink(out);
    }
    free(out);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *part[2];
    size_t len[2];
    size_t n = fz_split(data, size, part, len, 2);
    if (n > 2)
        return 0;
    char *pt = fz_write("in.pt", part[0], len[0]);
    char *rt = n > 1 ? fz_write("in.rt", part[1], len[1]) : NULL;
    size_t dump_len = 0;
    int rc = 0;
    char *dump = build_and_dump(pt, rt, 0, &dump_len, &rc);
    if (rc == 0 && !rt) {
        /* The dump of a table built without a reordering table is a phrase table that builds the
         * same table. */
        char *again_path = fz_write("again.pt", dump, dump_len);
        size_t again_len = 0;
        char *again = build_and_dump(again_path, NULL, 0, &again_len, &rc);
        if (rc != 0)
            fz_fail("ppt: the dump of a built table does not build (%d)", rc);
        if (again_len != dump_len || memcmp(again, dump, dump_len) != 0)
            fz_fail("ppt: dump, build, dump changed the table's text");
        free(again);
        free(again_path);
    }
    if (rc == 0) {
        size_t l2 = 0;
        int rc2 = 0;
        free(build_and_dump(pt, rt, 2, &l2, &rc2));
        if (rc2 != 0)
            fz_fail("ppt: the input builds, but not with --table-limit 2 (%d)", rc2);
    }
    free(dump);
    free(pt);
    free(rt);
    return 0;
}
