#define _GNU_SOURCE
/* Tests of the probingpt library: building from the fixtures in tests/data/probingpt, lookups by
 * string and by ids, the round trip through dump, reordering merge in and out of order, table
 * limits, forced hash collisions, input not grouped by source, every kind of malformed line, and
 * damaged files. The shared Bible tables are round-tripped when ../shared is there. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "probingpt.h"
#include "smt_buf.h"
#include "smt_lines.h"
#include "testutil.h"

static char *dir;
static void setup(void) { dir = tu_tmpdir(); cr_assert_not_null(dir); }
static void teardown(void) { tu_rmtree(dir); free(dir); }
TestSuite(ppt, .init = setup, .fini = teardown);

static int build(const char *pt, const char *rt, const char *out, uint32_t limit, const float *w,
                 uint32_t nw, uint64_t mask, ppt_build_report *r, smt_err *e)
{
    ppt_build_options o;
    memset(&o, 0, sizeof o);
    o.phrase_table = pt;
    o.reordering = rt;
    o.out = out;
    o.table_limit = limit;
    o.weights = w;
    o.num_weights = nw;
    o.hash_mask = mask;
    o.progress = -1;
    o.threaded_input = 1;
    return ppt_build(&o, r, e);
}

static ppt_table *build_open(const char *pt_rel, const char *rt_rel, const char *name, ppt_build_report *r)
{
    char *pt = tu_data_path(pt_rel), *rt = rt_rel ? tu_data_path(rt_rel) : NULL, *out = tu_join(dir, name);
    smt_err e;
    cr_assert_eq(build(pt, rt, out, 0, NULL, 0, 0, r, &e), 0, "%s", e.msg);
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    free(pt);
    free(rt);
    free(out);
    return t;
}

/* The dump of t (phrase-table lines, or reordering lines) as a malloc'ed string. */
static char *dump_text(const ppt_table *t, int reordering)
{
    char *p = tu_join(dir, "dump.txt"), *q = tu_join(dir, "dump.rt");
    FILE *f = fopen(p, "wb"), *g = fopen(q, "wb");
    smt_err e;
    cr_assert_eq(ppt_dump(t, f, g, &e), 0, "%s", e.msg);
    fclose(f);
    fclose(g);
    size_t len;
    char *text = tu_read_file(reordering ? q : p, &len);
    free(p);
    free(q);
    return text;
}

/* All lines of a lookup, joined, as query prints them. */
static char *lookup_text(const ppt_table *t, const char *phrase, int reordering)
{
    ppt_targets g;
    if (ppt_lookup(t, phrase, strlen(phrase), &g))
        return NULL;
    char *buf;
    size_t len;
    FILE *f = open_memstream(&buf, &len);
    ppt_target x;
    while (ppt_targets_next(&g, &x) == 1)
        (reordering ? ppt_write_reordering_line : ppt_write_line)(f, t, &g, &x);
    fclose(f);
    return buf;
}

Test(ppt, small_round_trip_and_lookups)
{
    ppt_build_report r;
    ppt_table *t = build_open("probingpt/small.pt", "probingpt/small.rt", "small.ppt", &r);
    cr_assert_eq(r.lines, 10);
    cr_assert_eq(r.sources, 6);
    cr_assert_eq(r.targets, 10);
    cr_assert_eq(r.no_reordering, 1, "la casa ||| the house has no entry");
    cr_assert_eq(r.orphan_reordering, 1, "gato ||| cat has no phrase pair");
    char *want_path = tu_data_path("probingpt/small.pt");
    size_t len;
    char *want = tu_read_file(want_path, &len);
    char *got = dump_text(t, 0);
    cr_assert_str_eq(got, want);
    free(got);
    got = lookup_text(t, "el", 0);
    cr_assert_str_eq(got, "el ||| he ||| 0.1 0.05 0.05 0.01 ||| 0-0 ||| 10 100 5 ||| |||\n"
                          "el ||| the ||| 0.9 0.8 0.95 0.85 ||| 0-0 ||| 90 100 95 ||| |||\n");
    free(got);
    got = lookup_text(t, "  la \t casa  ", 1);
    cr_assert_str_eq(got, "la casa ||| the house ||| 0.33333334 0.33333334 0.33333334 0.33333334 0.33333334 0.33333334\n");
    free(got);
    got = lookup_text(t, "perro", 1);
    cr_assert_str_eq(got, "perro ||| canine ||| 0.25 0.25 0.5 0.25 0.25 0.5\n"
                          "perro ||| dog ||| 0.6 0.2 0.2 0.6 0.2 0.2\n"
                          "perro ||| hound ||| 0.3 0.3 0.4 0.3 0.3 0.4\n");
    free(got);
    ppt_targets g;
    cr_assert_eq(ppt_lookup(t, "gato", 4, &g), SMT_ERR_NOTFOUND);
    cr_assert_eq(ppt_lookup(t, "casa blanca", 11, &g), SMT_ERR_NOTFOUND, "words known, phrase absent");
    cr_assert_eq(ppt_lookup(t, "", 0, &g), SMT_ERR_NOTFOUND);
    cr_assert_eq(ppt_lookup(t, "la casa blanca", 14, &g), 0);
    /* by ids, and the fields of a target */
    const smt_vocab *sv = ppt_src_vocab(t), *tv = ppt_tgt_vocab(t);
    uint32_t ids[3] = {smt_vocab_find(sv, "la", 2), smt_vocab_find(sv, "casa", 4), smt_vocab_find(sv, "blanca", 6)};
    cr_assert_eq(ppt_lookup_ids(t, ids, 3, &g), 0);
    cr_assert_eq(g.n, 1);
    cr_assert_eq(g.src_len, 3);
    ppt_target x;
    cr_assert_eq(ppt_targets_next(&g, &x), 1);
    cr_assert_eq(x.n_words, 3);
    cr_assert_str_eq(smt_vocab_word(tv, x.words[1], NULL), "white");
    cr_assert_eq(x.scores[1], 0.2f);
    cr_assert_eq(x.reordering[0], 0.9f);
    cr_assert_eq(x.n_align, 3);
    cr_assert(x.align[2] == 1 && x.align[3] == 2 && x.align[4] == 2 && x.align[5] == 1);
    cr_assert_eq(x.n_counts, 3);
    cr_assert_eq(x.counts[0], 2.0f);
    cr_assert_eq(x.n_fields, 6);
    size_t el;
    cr_assert_str_eq(ppt_extra_text(t, x.extra_id, &el), " |||");
    cr_assert_eq(ppt_targets_next(&g, &x), 0);
    uint32_t bad[2] = {ids[0], SMT_VOCAB_NONE};
    cr_assert_eq(ppt_lookup_ids(t, bad, 2, &g), SMT_ERR_NOTFOUND);
    cr_assert_eq(ppt_num_scores(t), 4);
    cr_assert_eq(ppt_num_reordering_scores(t), 6);
    cr_assert_eq(ppt_get_params(t)->max_src_len, 3);
    cr_assert_eq(ppt_lookup(t, "la casa blanca casa", 19, &g), SMT_ERR_NOTFOUND, "longer than any source");
    free(want);
    free(want_path);
    ppt_close(t);
}

Test(ppt, optional_fields_round_trip)
{
    ppt_build_report r;
    ppt_table *t = build_open("probingpt/fields.pt", NULL, "fields.ppt", &r);
    char *p = tu_data_path("probingpt/fields.pt");
    size_t len;
    char *want = tu_read_file(p, &len);
    char *got = dump_text(t, 0);
    cr_assert_str_eq(got, want);
    cr_assert_eq(ppt_num_reordering_scores(t), 0);
    free(got);
    free(want);
    free(p);
    ppt_close(t);
    /* more distinct extra strings than fit in a record's info word */
    char *pt = tu_join(dir, "extras.pt"), *out = tu_join(dir, "extras.ppt");
    FILE *f = fopen(pt, "w");
    for (int i = 0; i < 9000; i++)
        fprintf(f, "s%d ||| t%d ||| 0.5 ||| 0-0 ||| 1 |||  e%d |||\n", i / 3, i % 5, i);
    fclose(f);
    smt_err e;
    cr_assert_eq(build(pt, NULL, out, 0, NULL, 0, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_open(&t, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_get_params(t)->num_extra, 9000);
    want = tu_read_file(pt, &len);
    got = dump_text(t, 0);
    cr_assert_str_eq(got, want);
    free(got);
    free(want);
    free(pt);
    free(out);
    ppt_close(t);
}

/* Lines of a text, sorted, for comparing tables whose order differs. */
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static char *sorted_lines(char *text)
{
    size_t n = 0, cap = 0;
    char **v = NULL;
    for (char *s = strtok(text, "\n"); s; s = strtok(NULL, "\n")) {
        cr_assert(!smt_grow(&v, &cap, n + 1, sizeof *v, 64));
        v[n++] = s;
    }
    qsort(v, n, sizeof *v, cmp_str);
    size_t total = 1;
    for (size_t i = 0; i < n; i++)
        total += strlen(v[i]) + 1;
    char *out = malloc(total), *o = out;
    for (size_t i = 0; i < n; i++)
        o += sprintf(o, "%s\n", v[i]);
    *o = '\0';
    free(v);
    return out;
}

/* A synthetic table of n sources (a few targets each) in Moses order, and its reordering table. */
static void synth(const char *pt, const char *rt, int n, unsigned shuffle_seed, int drop_every)
{
    int lines = 0, cap = 8 * n;
    char **pl = malloc((size_t)cap * sizeof *pl), **rl = malloc((size_t)cap * sizeof *rl);
    for (int s = 0; s < n; s++) {
        int k = 1 + s % 4;
        for (int j = 0; j < k; j++) {
            char a[256], b[256];
            snprintf(a, sizeof a, "w%d x%d%s ||| t%d u%d ||| %g 0.%03d 1 0.25 ||| 0-0 1-1 ||| %d 2 1 ||| |||",
                     s % 97, s, s % 3 ? " y" : "", j, s % 13, 1.0 / (j + 1), (s * 7) % 999 + 1, j + 1);
            snprintf(b, sizeof b, "w%d x%d%s ||| t%d u%d ||| 0.%d 0.2 0.2 0.6 0.%d 0.2", s % 97, s,
                     s % 3 ? " y" : "", j, s % 13, 1 + s % 8, 1 + j % 8);
            pl[lines] = strdup(a);
            rl[lines] = strdup(b);
            lines++;
        }
    }
    if (shuffle_seed) {
        srand(shuffle_seed);
        for (int i = lines - 1; i > 0; i--) {
            int j = rand() % (i + 1);
            char *t = pl[i]; pl[i] = pl[j]; pl[j] = t;
            j = rand() % (i + 1);
            t = rl[i]; rl[i] = rl[j]; rl[j] = t;
        }
    }
    FILE *f = fopen(pt, "w"), *g = fopen(rt, "w");
    for (int i = 0; i < lines; i++) {
        fprintf(f, "%s\n", pl[i]);
        if (!drop_every || i % drop_every)
            fprintf(g, "%s\n", rl[i]);
        free(pl[i]);
        free(rl[i]);
    }
    fclose(f);
    fclose(g);
    free(pl);
    free(rl);
}

Test(ppt, unsorted_input_gives_the_same_table)
{
    char *pt1 = tu_join(dir, "a.pt"), *rt1 = tu_join(dir, "a.rt"), *pt2 = tu_join(dir, "b.pt"),
         *rt2 = tu_join(dir, "b.rt"), *o1 = tu_join(dir, "a.ppt"), *o2 = tu_join(dir, "b.ppt");
    synth(pt1, rt1, 3000, 0, 0);
    synth(pt2, rt2, 3000, 99, 0);
    ppt_build_report r1, r2;
    smt_err e;
    cr_assert_eq(build(pt1, rt1, o1, 0, NULL, 0, 0, &r1, &e), 0, "%s", e.msg);
    cr_assert_eq(build(pt2, rt2, o2, 0, NULL, 0, 0, &r2, &e), 0, "%s", e.msg);
    cr_assert_eq(r1.split_sources, 0);
    cr_assert_gt(r2.split_sources, 0);
    cr_assert_eq(r1.sources, 3000);
    cr_assert_eq(r2.sources, 3000);
    cr_assert_eq(r2.targets, r1.targets);
    cr_assert_eq(r2.no_reordering, 0);
    cr_assert_eq(r2.orphan_reordering, 0);
    ppt_table *a, *b;
    cr_assert_eq(ppt_open(&a, o1, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_open(&b, o2, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    for (int rt = 0; rt < 2; rt++) {
        char *x = dump_text(a, rt), *y = dump_text(b, rt);
        char *sx = sorted_lines(x), *sy = sorted_lines(y);
        cr_assert_str_eq(sx, sy);
        free(x); free(y); free(sx); free(sy);
    }
    ppt_close(a);
    ppt_close(b);
    /* missing reordering entries in a shuffled table: counted and defaulted */
    synth(pt2, rt2, 3000, 5, 10);
    cr_assert_eq(build(pt2, rt2, o2, 0, NULL, 0, 0, &r2, &e), 0, "%s", e.msg);
    cr_assert_eq(r2.no_reordering, (r1.targets + 9) / 10);
    cr_assert_eq(r2.orphan_reordering, 0);
    /* a table limit applies to the merged chunks exactly as to contiguous lines */
    synth(pt2, rt2, 3000, 77, 0);
    cr_assert_eq(build(pt1, rt1, o1, 2, NULL, 0, 0, &r1, &e), 0, "%s", e.msg);
    cr_assert_eq(build(pt2, rt2, o2, 2, NULL, 0, 0, &r2, &e), 0, "%s", e.msg);
    cr_assert_gt(r1.pruned, 0);
    cr_assert_eq(r1.pruned, r2.pruned);
    cr_assert_eq(ppt_open(&a, o1, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_open(&b, o2, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    for (int s = 0; s < 3000; s++) { /* the same targets in the same (best-first) order */
        char q[64];
        snprintf(q, sizeof q, "w%d x%d%s", s % 97, s, s % 3 ? " y" : "");
        char *x = lookup_text(a, q, 1), *y = lookup_text(b, q, 1);
        cr_assert(x && y, "%s", q);
        cr_assert_str_eq(x, y);
        free(x);
        free(y);
    }
    ppt_close(a);
    ppt_close(b);
    free(pt1); free(rt1); free(pt2); free(rt2); free(o1); free(o2);
}

Test(ppt, forced_collisions_are_resolved)
{
    char *pt = tu_join(dir, "c.pt"), *rt = tu_join(dir, "c.rt"), *o1 = tu_join(dir, "c1.ppt"),
         *o2 = tu_join(dir, "c2.ppt");
    synth(pt, rt, 1500, 0, 0);
    ppt_build_report r1, r2;
    smt_err e;
    cr_assert_eq(build(pt, rt, o1, 0, NULL, 0, 0, &r1, &e), 0, "%s", e.msg);
    cr_assert_eq(build(pt, rt, o2, 0, NULL, 0, 0x7, &r2, &e), 0, "%s", e.msg); /* 8 distinct keys */
    cr_assert_eq(r1.collisions, 0);
    cr_assert_gt(r2.collisions, 1000);
    ppt_table *a, *b;
    cr_assert_eq(ppt_open(&a, o1, 0, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_open(&b, o2, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    cr_assert_eq(ppt_get_params(b)->collisions, r2.collisions);
    char *x = dump_text(a, 0), *y = dump_text(b, 0);
    cr_assert_str_eq(x, y);
    free(x);
    free(y);
    for (int s = 0; s < 1500; s++) {
        char q[64];
        snprintf(q, sizeof q, "w%d x%d%s", s % 97, s, s % 3 ? " y" : "");
        char *u = lookup_text(a, q, 1), *v = lookup_text(b, q, 1);
        cr_assert(u && v, "%s", q);
        cr_assert_str_eq(u, v);
        free(u);
        free(v);
        snprintf(q, sizeof q, "w%d x%d%s", s % 97, s, s % 3 ? "" : " y"); /* never a phrase */
        cr_assert_null(lookup_text(b, q, 0), "%s", q);
    }
    ppt_close(a);
    ppt_close(b);
    free(pt); free(rt); free(o1); free(o2);
}

Test(ppt, table_limit_keeps_the_best)
{
    char *pt = tu_data_path("probingpt/small.pt"), *out = tu_join(dir, "l.ppt");
    ppt_build_report r;
    smt_err e;
    cr_assert_eq(build(pt, NULL, out, 2, NULL, 0, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.pruned, 1);
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    char *got = lookup_text(t, "perro", 0);
    /* best first; canine and hound tie, canine came first */
    cr_assert_str_eq(got, "perro ||| dog ||| 0.6 0.5 0.9 0.7 ||| 0-0 ||| 6 10 6 ||| |||\n"
                          "perro ||| canine ||| 0.4 1e-05 0.1 1.5e-07 ||| 0-0 ||| 4 10 1 ||| |||\n");
    free(got);
    ppt_close(t);
    float w[4] = {-1, -1, -1, -1};
    cr_assert_eq(build(pt, NULL, out, 1, w, 4, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.pruned, 4);
    cr_assert_eq(ppt_open(&t, out, 0, &e), 0, "%s", e.msg);
    got = lookup_text(t, "el", 0);
    cr_assert_str_eq(got, "el ||| he ||| 0.1 0.05 0.05 0.01 ||| 0-0 ||| 10 100 5 ||| |||\n");
    free(got);
    ppt_close(t);
    float w3[3] = {1, 1, 1};
    cr_assert_eq(build(pt, NULL, out, 1, w3, 3, 0, &r, &e), SMT_ERR_PARSE);
    cr_assert(strstr(e.msg, "4 scores but 3 weights"), "%s", e.msg);
    free(pt);
    free(out);
}

/* Every file in dir (the test leaves inputs only there): no output or temporary file may remain. */
static int only_inputs_left(void)
{
    DIR *d = opendir(dir);
    struct dirent *ent;
    int ok = 1;
    while ((ent = readdir(d)))
        if (strstr(ent->d_name, ".ppt"))
            ok = 0;
    closedir(d);
    return ok;
}

static void expect_parse_error(const char *pt_text, const char *rt_text, const char *where, const char *what)
{
    char *pt = tu_join(dir, "bad.pt"), *rt = tu_join(dir, "bad.rt"), *out = tu_join(dir, "bad.ppt");
    cr_assert_eq(tu_write_file(pt, pt_text, strlen(pt_text)), 0);
    if (rt_text)
        cr_assert_eq(tu_write_file(rt, rt_text, strlen(rt_text)), 0);
    smt_err e;
    int rc = build(pt, rt_text ? rt : NULL, out, 0, NULL, 0, 0, NULL, &e);
    cr_assert(rc == SMT_ERR_PARSE || rc == SMT_ERR_LIMIT, "rc %d for %s", rc, what);
    char loc[256];
    snprintf(loc, sizeof loc, "%s:%s", strcmp(where, "rt") ? pt : rt, strcmp(where, "rt") ? where : "");
    cr_assert(strstr(e.msg, what) != NULL, "message '%s' lacks '%s'", e.msg, what);
    cr_assert(strncmp(e.msg, strcmp(where, "rt") ? pt : rt, strlen(pt)) == 0, "'%s'", e.msg);
    if (strcmp(where, "rt") && *where)
        cr_assert(strstr(e.msg, loc) == e.msg, "'%s' should start with '%s'", e.msg, loc);
    cr_assert(access(out, F_OK) != 0 && only_inputs_left(), "output left after: %s", what);
    free(pt);
    free(rt);
    free(out);
}

#define OK1 "a ||| b ||| 0.5 0.5 ||| 0-0 ||| 1 1 1\n"

Test(ppt, malformed_lines)
{
    expect_parse_error(OK1 "a b\n", NULL, "2:", "found 1 field");
    expect_parse_error(OK1 "a ||| b\n", NULL, "2:", "found 2 fields");
    expect_parse_error(OK1 "  ||| b ||| 1 1\n", NULL, "2:", "empty source");
    expect_parse_error(OK1 "a ||| c |||  \n", NULL, "2:", "no scores");
    expect_parse_error(OK1 "a ||| c ||| 0.5 x\n", NULL, "2:", "bad score 'x'");
    expect_parse_error(OK1 "a ||| c ||| 0.5 nan\n", NULL, "2:", "bad score 'nan'");
    expect_parse_error(OK1 "a ||| c ||| 0.5 1e999\n", NULL, "2:", "bad score '1e999'");
    expect_parse_error(OK1 "a ||| c ||| 0.5\n", NULL, "2:", "1 scores, expected 2");
    expect_parse_error(OK1 "a ||| c ||| 0.5 1 ||| 0-x\n", NULL, "2:", "bad alignment point '0-x'");
    expect_parse_error(OK1 "a ||| c ||| 0.5 1 ||| 0-1\n", NULL, "2:", "outside the phrase pair");
    expect_parse_error(OK1 "a ||| c d ||| 0.5 1 ||| 0-1\na ||| e ||| 1 1 ||| 0-1\n", NULL, "3:",
                       "outside the phrase pair");
    expect_parse_error(OK1 "a ||| c ||| 0.5 1 ||| 0-0 ||| 1 q\n", NULL, "2:", "bad count 'q'");
    char long_src[2000] = "";
    for (int i = 0; i < 256; i++)
        strcat(long_src, "w ");
    strcat(long_src, "||| x ||| 1\n");
    expect_parse_error(long_src, NULL, "1:", "source phrase longer than 255");
    char many[1000] = "a ||| b |||";
    for (int i = 0; i < 65; i++)
        strcat(many, " 1");
    strcat(many, "\n");
    expect_parse_error(many, NULL, "1:", "more than 64 scores");
    expect_parse_error("", NULL, "", "no phrase pairs");
    /* reordering table */
    expect_parse_error(OK1, "a ||| b\n", "rt", ":1: expected source ||| target ||| scores, found 2");
    expect_parse_error(OK1, "a ||| b ||| 0.5 z\n", "rt", ":1: bad reordering score 'z'");
    expect_parse_error(OK1 OK1, "a ||| b ||| 1 1 1\na ||| b ||| 1 1\n", "rt", ":2: 2 reordering scores, expected 3");
    expect_parse_error(OK1, "", "rt", "empty reordering table");
    expect_parse_error(OK1, "a ||| b ||| 0.5 0.5 ||| 1\n", "rt", ":1: expected source ||| target ||| scores, found 4");
}

Test(ppt, crlf_duplicates_and_truncated_gzip)
{
    char *pt = tu_join(dir, "crlf.pt"), *out = tu_join(dir, "crlf.ppt");
    const char *text = "a ||| b ||| 0.5 ||| 0-0\r\na ||| b ||| 0.5 ||| 0-0\r\nc ||| d ||| 1";
    cr_assert_eq(tu_write_file(pt, text, strlen(text)), 0);
    ppt_build_report r;
    smt_err e;
    cr_assert_eq(build(pt, NULL, out, 0, NULL, 0, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.targets, 3, "duplicate pairs are kept as given");
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    char *got = dump_text(t, 0);
    cr_assert_str_eq(got, "a ||| b ||| 0.5 ||| 0-0\na ||| b ||| 0.5 ||| 0-0\nc ||| d ||| 1\n");
    free(got);
    ppt_close(t);
    /* a .gz cut short: a read error naming the file, and no model */
    char *gz = tu_join(dir, "cut.pt.gz"), *out2 = tu_join(dir, "cut.ppt");
    gzFile z = gzopen(gz, "wb");
    for (int i = 0; i < 4000; i++)
        gzprintf(z, "w%d x ||| y%d ||| 0.5 0.25 ||| 0-0 ||| 1 1 1\n", i / 3, i % 7);
    gzclose(z);
    cr_assert_eq(tu_truncate(gz, (uint64_t)tu_file_size(gz) / 2), 0);
    int rc = build(gz, NULL, out2, 0, NULL, 0, 0, &r, &e);
    cr_assert_eq(rc, SMT_ERR_IO, "rc %d: %s", rc, e.msg);
    cr_assert(strstr(e.msg, "cut.pt.gz"), "%s", e.msg);
    cr_assert_eq(access(out2, F_OK), -1);
    free(gz); free(out2); free(pt); free(out);
}

/* Random damage to a good table's text: the build either fails with a parse error naming a line,
 * or gives a table that verifies and dumps. Never a crash (ASan runs this too). */
Test(ppt, mutated_input_never_crashes)
{
    char *src = tu_data_path("probingpt/small.pt"), *srt = tu_data_path("probingpt/small.rt");
    size_t len, rlen;
    char *good = tu_read_file(src, &len), *rgood = tu_read_file(srt, &rlen);
    char *pt = tu_join(dir, "m.pt"), *rt = tu_join(dir, "m.rt"), *out = tu_join(dir, "m.ppt");
    static const char alphabet[] = "|||  -0123456789.e+xa\t";
    srand(11);
    int built = 0;
    for (int k = 0; k < 160; k++) {
        char *t = malloc(len + 1), *r = malloc(rlen + 1);
        memcpy(t, good, len + 1);
        memcpy(r, rgood, rlen + 1);
        for (int m = 0; m < 1 + k % 4; m++) {
            char *which = (k & 1) ? t : r;
            size_t n = (k & 1) ? len : rlen;
            which[(size_t)rand() % n] = alphabet[(size_t)rand() % (sizeof alphabet - 1)];
        }
        cr_assert_eq(tu_write_file(pt, t, len), 0);
        cr_assert_eq(tu_write_file(rt, r, rlen), 0);
        ppt_build_report rep;
        smt_err e;
        int rc = build(pt, rt, out, k % 3 ? 0 : 1, NULL, 0, k % 5 ? 0 : 1, &rep, &e);
        if (rc) {
            cr_assert(rc == SMT_ERR_PARSE || rc == SMT_ERR_LIMIT, "rc %d: %s", rc, e.msg);
            cr_assert(strstr(e.msg, ".pt:") || strstr(e.msg, ".rt:"), "%s", e.msg);
            cr_assert_eq(access(out, F_OK), -1);
        } else {
            ppt_table *tb;
            cr_assert_eq(ppt_open(&tb, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
            free(dump_text(tb, 1));
            ppt_close(tb);
            remove(out);
            built++;
        }
        free(t);
        free(r);
    }
    cr_assert_gt(built, 10);
    free(src); free(srt); free(good); free(rgood); free(pt); free(rt); free(out);
}

Test(ppt, missing_input_is_an_io_error)
{
    char *out = tu_join(dir, "x.ppt"), *missing = tu_join(dir, "missing.pt");
    smt_err e;
    cr_assert_eq(build(missing, NULL, out, 0, NULL, 0, 0, NULL, &e), SMT_ERR_IO);
    cr_assert(strstr(e.msg, "missing.pt"), "%s", e.msg);
    cr_assert_eq(access(out, F_OK), -1);
    free(out);
    free(missing);
}

/* Looks everything up and dumps: must not crash whatever the file holds. */
static void exercise(const ppt_table *t)
{
    const char *qs[] = {"el", "la casa", "la casa blanca", "perro", "casa", "el perro", "gato"};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++)
        free(lookup_text(t, qs[i], 0));
    FILE *f = fopen("/dev/null", "w");
    ppt_dump(t, f, f, NULL);
    fclose(f);
}

Test(ppt, truncated_and_damaged_files)
{
    char *good = tu_join(dir, "g.ppt"), *copy = tu_join(dir, "copy.ppt");
    char *pt = tu_data_path("probingpt/small.pt"), *rt = tu_data_path("probingpt/small.rt");
    smt_err e;
    cr_assert_eq(build(pt, rt, good, 0, NULL, 0, 0, NULL, &e), 0, "%s", e.msg);
    long long size = tu_file_size(good);
    for (long long cut = 0; cut < size; cut += cut < 4096 ? 61 : 1499) {
        cr_assert_eq(tu_copy_file(good, copy), 0);
        cr_assert_eq(tu_truncate(copy, (uint64_t)cut), 0);
        ppt_table *t;
        int rc = ppt_open(&t, copy, 0, &e);
        cr_assert(rc == SMT_ERR_CORRUPT || rc == SMT_ERR_FORMAT, "cut %lld: rc %d", cut, rc);
    }
    /* bit flips in every section: verify always catches them; without verify, no crash */
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, good, 0, &e), 0);
    const smt_mapped *m = ppt_mapped(t);
    unsigned ns = smt_mapped_section_count(m);
    uint64_t offs[64], sizes[64];
    for (unsigned i = 0; i < ns; i++) {
        const char *name;
        uint64_t sum;
        smt_mapped_section_info(m, i, &name, &offs[i], &sizes[i], &sum);
    }
    ppt_close(t);
    srand(3);
    int opened = 0;
    for (int k = 0; k < 300; k++) {
        unsigned s = (unsigned)k % ns;
        if (!sizes[s])
            continue;
        uint64_t off = offs[s] + (uint64_t)rand() % sizes[s];
        cr_assert_eq(tu_copy_file(good, copy), 0);
        cr_assert_eq(tu_flip_bit(copy, off, rand() % 8), 0);
        cr_assert_neq(ppt_open(&t, copy, SMT_OPEN_VERIFY, &e), 0, "flip at %llu undetected",
                      (unsigned long long)off);
        if (ppt_open(&t, copy, 0, &e) == 0) {
            opened++;
            exercise(t);
            ppt_close(t);
        }
    }
    cr_assert_gt(opened, 0);
    for (uint64_t off = 0; off < 4096; off += 23) { /* header and section table */
        cr_assert_eq(tu_copy_file(good, copy), 0);
        cr_assert_eq(tu_flip_bit(copy, off, (int)(off % 8)), 0);
        if (ppt_open(&t, copy, 0, &e) == 0) {
            exercise(t);
            ppt_close(t);
        }
    }
    free(good); free(copy); free(pt); free(rt);
}

/* A record whose target id is out of range: the lookup succeeds, the iteration stops before it and
 * says why; verify and dump report the damage. */
Test(ppt, damaged_record_ends_the_iteration)
{
    char *good = tu_join(dir, "g.ppt"), *pt = tu_data_path("probingpt/small.pt");
    smt_err e;
    cr_assert_eq(build(pt, NULL, good, 0, NULL, 0, 0, NULL, &e), 0, "%s", e.msg);
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, good, 0, &e), 0);
    uint64_t payload = 0;
    for (unsigned i = 0; i < smt_mapped_section_count(ppt_mapped(t)); i++) {
        const char *name;
        uint64_t off, size, sum;
        smt_mapped_section_info(ppt_mapped(t), i, &name, &off, &size, &sum);
        if (!strcmp(name, "payload"))
            payload = off;
    }
    ppt_close(t);
    /* the first group is "casa": src_len, n, words, src id, then info, align id, target id */
    size_t len;
    char *bytes = tu_read_file(good, &len);
    uint32_t bad = 0xfffffff0u;
    memcpy(bytes + payload + 6 * 4, &bad, 4);
    cr_assert_eq(tu_write_file(good, bytes, len), 0);
    free(bytes);
    cr_assert_eq(ppt_open(&t, good, 0, &e), 0, "%s", e.msg);
    ppt_targets g;
    ppt_target x;
    cr_assert_eq(ppt_lookup(t, "casa", 4, &g), 0);
    cr_assert_eq(g.n, 2);
    cr_assert_eq(ppt_targets_next(&g, &x), 0);
    cr_assert_eq(g.error, SMT_ERR_CORRUPT);
    cr_assert_eq(ppt_lookup(t, "perro", 5, &g), 0, "other groups still answer");
    cr_assert_eq(ppt_targets_next(&g, &x), 1);
    cr_assert_eq(ppt_verify(t, &e), SMT_ERR_CORRUPT);
    FILE *f = fopen("/dev/null", "w");
    cr_assert_eq(ppt_dump(t, f, NULL, &e), SMT_ERR_CORRUPT);
    fclose(f);
    ppt_close(t);
    free(good);
    free(pt);
}

/* The shared Bible tables: build, verify, and dump equal to the input line for line. */
static char *shared_or_env(const char *env, const char *rel)
{
    const char *p = getenv(env);
    return p && *p ? strdup(p) : tu_shared_path(rel);
}

static void compare_files(const char *want_path, const char *got_path)
{
    smt_lines *a, *b;
    smt_err e;
    cr_assert_eq(smt_lines_open(&a, want_path, SMT_LINES_THREADED, &e), 0, "%s", e.msg);
    cr_assert_eq(smt_lines_open(&b, got_path, 0, &e), 0, "%s", e.msg);
    char *la, *lb;
    size_t na, nb;
    for (;;) {
        int ra = smt_lines_next(a, &la, &na, &e), rb = smt_lines_next(b, &lb, &nb, &e);
        cr_assert_eq(ra, rb, "%s: line count differs at %llu", got_path,
                     (unsigned long long)smt_lines_lineno(a));
        if (ra != 1)
            break;
        cr_assert(na == nb && memcmp(la, lb, na) == 0, "line %llu:\n%s\n%s",
                  (unsigned long long)smt_lines_lineno(a), la, lb);
    }
    smt_lines_close(a);
    smt_lines_close(b);
}

Test(ppt, shared_table_round_trip, .timeout = 600)
{
    char *pt = shared_or_env("FASTSMT_PPT_TABLE", "models/bible-es-en/phrase-table.gz");
    char *rt = shared_or_env("FASTSMT_PPT_REORDERING", "models/bible-es-en/reordering-table.wbe-msd-bidirectional-fe.gz");
    if (!pt || !rt) {
        free(pt);
        free(rt);
        cr_skip_test("shared phrase table absent");
    }
    char *out = tu_join(dir, "bible.ppt"), *dpt = tu_join(dir, "bible.pt"), *drt = tu_join(dir, "bible.rt");
    ppt_build_report r;
    smt_err e;
    cr_assert_eq(build(pt, rt, out, 0, NULL, 0, 0, &r, &e), 0, "%s", e.msg);
    cr_assert_eq(r.lines, r.reordering_lines);
    cr_assert_eq(r.targets, r.lines);
    cr_assert_eq(r.no_reordering, 0);
    cr_assert_eq(r.orphan_reordering, 0);
    cr_assert_eq(r.split_sources, 0);
    ppt_table *t;
    cr_assert_eq(ppt_open(&t, out, SMT_OPEN_VERIFY, &e), 0, "%s", e.msg);
    FILE *f = fopen(dpt, "wb"), *g = fopen(drt, "wb");
    cr_assert_eq(ppt_dump(t, f, g, &e), 0, "%s", e.msg);
    fclose(f);
    fclose(g);
    ppt_close(t);
    compare_files(pt, dpt);
    compare_files(rt, drt);
    free(pt); free(rt); free(out); free(dpt); free(drt);
}
