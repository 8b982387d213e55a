/* Tests of the probingpt program: commands, exit codes (0 ok, 1 bad input, 2 usage), messages
 * naming file:line, no model left behind by a failed build, query and dump output. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"

static char *dir, *bin;
static void setup(void)
{
    dir = tu_tmpdir();
    bin = tu_bin_path("probingpt");
    cr_assert_not_null(dir);
}
static void teardown(void)
{
    tu_rmtree(dir);
    free(dir);
    free(bin);
}
TestSuite(tool, .init = setup, .fini = teardown);

static int run(char **out, char **err, const char *fmt, ...)
{
    char *args, *cmd;
    va_list ap;
    va_start(ap, fmt);
    cr_assert_geq(vasprintf(&args, fmt, ap), 0);
    va_end(ap);
    cr_assert_geq(asprintf(&cmd, "cd '%s' && '%s' %s", dir, bin, args), 0);
    int rc = tu_run(cmd, out, err);
    free(args);
    free(cmd);
    return rc;
}

Test(tool, build_query_dump_info)
{
    char *pt = tu_data_path("probingpt/small.pt"), *rt = tu_data_path("probingpt/small.rt");
    char *out, *err;
    cr_assert_eq(run(&out, &err, "build --phrase-table '%s' --reordering '%s' --out m.ppt", pt, rt), 0, "%s", err);
    cr_assert(strstr(err, "10 lines, 6 sources, 10 targets"), "%s", err);
    cr_assert(strstr(err, "1 phrase pairs without an entry got the default; 1 entries had no phrase pair"), "%s", err);
    free(out);
    free(err);
    cr_assert_eq(run(&out, &err, "query m.ppt < /dev/null"), 0);
    free(out);
    free(err);
    char *q = tu_join(dir, "q.txt");
    cr_assert_eq(tu_write_file(q, "el perro\nnada\nla casa blanca\n", 29), 0);
    cr_assert_eq(run(&out, &err, "query m.ppt < q.txt"), 0, "%s", err);
    cr_assert_str_eq(out, "el perro ||| the dog ||| 1 0.5 1 0.4 ||| 0-0 1-1 ||| 4 4 4 ||| |||\n\n\n"
                          "la casa blanca ||| the white house ||| 1 0.2 1 0.1 ||| 0-0 1-2 2-1 ||| 2 2 2 ||| |||\n\n");
    free(out);
    free(err);
    cr_assert_eq(tu_write_file(q, "el perro", 8), 0);
    cr_assert_eq(run(&out, &err, "query m.ppt --reordering < q.txt"), 0, "%s", err);
    free(q);
    cr_assert_str_eq(out, "el perro ||| the dog ||| 0.8 0.1 0.1 0.8 0.1 0.1\n\n");
    free(out);
    free(err);
    cr_assert_eq(run(&out, &err, "dump m.ppt --reordering-out d.rt"), 0, "%s", err);
    size_t len;
    char *want = tu_read_file(pt, &len);
    cr_assert_str_eq(out, want);
    free(want);
    free(out);
    free(err);
    cr_assert_eq(run(&out, &err, "info m.ppt --verify"), 0, "%s", err);
    cr_assert(strstr(out, "sources\t6\n") && strstr(out, "verified\tok"), "%s", out);
    free(out);
    free(err);
    free(pt);
    free(rt);
}

Test(tool, progress_and_single_thread_give_the_same_model)
{
    char *pt = tu_data_path("probingpt/small.pt"), *rt = tu_data_path("probingpt/small.rt");
    char *out, *err, *out2, *err2;
    cr_assert_eq(run(&out, &err, "build -p '%s' -r '%s' -o a.ppt --progress", pt, rt), 0, "%s", err);
    cr_assert(strstr(err, "probingpt build"), "%s", err);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "build -p '%s' -r '%s' -o b.ppt --no-threads --reordering-default 0.5", pt, rt), 0, "%s", err);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "dump a.ppt"), 0);
    cr_assert_eq(run(&out2, &err2, "dump b.ppt"), 0);
    cr_assert_str_eq(out, out2);
    free(out); free(err); free(out2); free(err2);
    char *q = tu_join(dir, "q");
    cr_assert_eq(tu_write_file(q, "la casa\n", 8), 0);
    free(q);
    cr_assert_eq(run(&out, &err, "query b.ppt --reordering < q"), 0, "%s", err);
    cr_assert_str_eq(out, "la casa ||| the house ||| 0.5 0.5 0.5 0.5 0.5 0.5\n\n");
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "build -p '%s' -r '%s' -o c.ppt --reordering-default 0.5,0.5", pt, rt), 2);
    free(out); free(err);
    free(pt);
    free(rt);
}

Test(tool, errors_and_exit_codes)
{
    char *out, *err;
    cr_assert_eq(run(&out, &err, ""), 2);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "frobnicate"), 2);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "build --out x.ppt"), 2);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "build --phrase-table a --out x.ppt --table-limit q"), 2);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "--help"), 0);
    cr_assert(strstr(out, "usage"));
    free(out); free(err);
    char *bad = tu_join(dir, "bad.pt");
    cr_assert_eq(tu_write_file(bad, "a ||| b ||| 1\nc ||| d ||| 1 x\n", 30), 0);
    free(bad);
    cr_assert_eq(run(&out, &err, "build --phrase-table bad.pt --out bad.ppt"), 1);
    cr_assert(strstr(err, "bad.pt:2: bad score 'x'"), "%s", err);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "info bad.ppt"), 1);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "ls"), 2);
    free(out); free(err);
    char *cmd;
    cr_assert_geq(asprintf(&cmd, "ls -A '%s'", dir), 0);
    cr_assert_eq(tu_run(cmd, &out, NULL), 0);
    cr_assert_str_eq(out, "bad.pt\n", "nothing but the input may remain");
    free(out);
    free(cmd);
    cr_assert_eq(run(&out, &err, "info bad.pt"), 1);
    cr_assert(strstr(err, "bad.pt"), "%s", err);
    free(out); free(err);
    cr_assert_eq(run(&out, &err, "dump missing.ppt"), 1);
    free(out); free(err);
}

/* Every number of a flag is parsed strictly (whole token, range, no nan): a typo is a usage
 * error (exit 2), never a silently different build. */
Test(tool, numbers_are_strict)
{
    char *pt = tu_data_path("probingpt/small.pt");
    static const char *const bad[] = {
        "--table-limit 5x", "--table-limit ' 5'", "--table-limit -1", "--table-limit 99999999999",
        "--table-limit ''", "--table-limit 5 --weights 1,nan,1,1", "--table-limit 5 --weights 1,,1,1",
        "--table-limit 5 --weights 1,2,3,4x", "--table-limit 5 --weights 0x1,1,1,1",
        "--reordering-default 0.5,inf", "--reordering-default -0.5", "--reordering-default ''",
        "--test-hash-bits 0", "--test-hash-bits 65", "--test-hash-bits 8x"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char *out, *err;
        int rc = run(&out, &err, "build --phrase-table '%s' --out m.ppt %s", pt, bad[i]);
        cr_assert_eq(rc, 2, "%s: exit %d, %s", bad[i], rc, err);
        cr_assert(strstr(err, "probingpt: bad --"), "%s: %s", bad[i], err);
        char *m = tu_join(dir, "m.ppt");
        cr_assert_eq(access(m, F_OK), -1, "%s built a model", bad[i]);
        free(m), free(out), free(err);
    }
    char *out, *err;
    cr_assert_eq(run(&out, &err, "build --phrase-table '%s' --out m.ppt --table-limit 1 "
                                 "--weights 1,-2.5,1e0,.5 --test-hash-bits 64", pt), 0, "%s", err);
    free(out), free(err), free(pt);
}

/* --help anywhere: the usage on stdout, exit 0; write errors on stdout are errors. */
Test(tool, help_and_write_errors)
{
    static const char *const helps[] = {"--help", "-h", "build --help", "dump x.ppt --help"};
    for (size_t i = 0; i < 4; i++) {
        char *out, *err;
        cr_assert_eq(run(&out, &err, "%s", helps[i]), 0, "%s", helps[i]);
        cr_assert(strstr(out, "usage: probingpt build"), "%s", out);
        cr_assert_str_eq(err, "");
        free(out), free(err);
    }
    char *out, *err;
    cr_assert_eq(run(&out, &err, "--help > /dev/full"), 1);
    free(out), free(err);
    char *pt = tu_data_path("probingpt/small.pt");
    cr_assert_eq(run(&out, &err, "build --phrase-table '%s' --out m.ppt", pt), 0, "%s", err);
    free(out), free(err);
    static const char *const cmds[] = {"info m.ppt > /dev/full", "info m.ppt --verify > /dev/full",
                                       "dump m.ppt > /dev/full", "dump m.ppt --out /dev/full",
                                       "query m.ppt < q.txt > /dev/full"};
    char *q = tu_join(dir, "q.txt");
    cr_assert_eq(tu_write_file(q, "casa\n", 5), 0);
    for (size_t i = 0; i < 5; i++) {
        int rc = run(&out, &err, "%s", cmds[i]);
        cr_assert_eq(rc, 1, "%s: exit %d", cmds[i], rc);
        cr_assert(strstr(err, "write error"), "%s: %s", cmds[i], err);
        free(out), free(err);
    }
    free(q), free(pt);
}

/* bench_probingpt: --help prints its usage and runs nothing; a flag without its value is a usage
 * error. */
Test(tool, bench_help)
{
    char *bench = tu_bin_path("bench_probingpt"), *cmd = NULL, *out, *err;
    cr_assert(asprintf(&cmd, "FASTSMT_SHARED=/nonexistent '%s' --help", bench) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 0, "%s", err);
    cr_assert(strstr(out, "usage: bench_probingpt"), "%s", out);
    cr_assert_null(strstr(out, "bench=probingpt"), "%s", out);
    free(cmd), free(out), free(err);
    cr_assert(asprintf(&cmd, "'%s' --text", bench) > 0);
    cr_assert_eq(tu_run(cmd, &out, &err), 2, "%s", err);
    cr_assert(strstr(err, "needs a value"), "%s", err);
    free(cmd), free(out), free(err), free(bench);
}
