/* Threaded tests of common/: the thread pool and the line reader's decompression thread (a .gz file,
 * closing early, a pipe). CI runs this program under ThreadSanitizer. */
#define _POSIX_C_SOURCE 200809L /* pipe, dup2 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "smt_lines.h"
#include "smt_threads.h"
#include "tharness.h"
#include "testutil.h"

typedef struct {
    _Atomic unsigned long sum;
    _Atomic int hits[1000];
    unsigned long per_worker[8]; /* written only by its own worker */
} pool_ctx;

static void pool_task(void *ctx, size_t task, unsigned worker)
{
    pool_ctx *c = ctx;
    atomic_fetch_add(&c->sum, task);
    atomic_fetch_add(&c->hits[task], 1);
    c->per_worker[worker] += task;
}

static void test_pool(void)
{
    for (unsigned threads = 1; threads <= 4; threads++) {
        smt_pool *p;
        smt_err e;
        TH_CHECK(smt_pool_create(&p, threads, &e) == 0, "%s", e.msg);
        TH_CHECK(smt_pool_size(p) == threads, "size");
        static pool_ctx c;
        for (int round = 0; round < 50; round++) {
            memset(&c, 0, sizeof c);
            smt_pool_run(p, 1000, pool_task, &c);
            TH_CHECK(atomic_load(&c.sum) == 999ul * 1000ul / 2ul, "round %d", round);
            int once = 1;
            unsigned long total = 0;
            for (int i = 0; i < 1000; i++)
                once &= atomic_load(&c.hits[i]) == 1;
            for (unsigned w = 0; w < threads; w++)
                total += c.per_worker[w];
            TH_CHECK(once, "every task once (round %d)", round);
            TH_CHECK(total == 999ul * 1000ul / 2ul, "per-worker sums (round %d)", round);
        }
        smt_pool_destroy(p);
    }
}

static void test_threaded_reader(void)
{
    char *dir = tu_tmpdir();
    char *p = tu_join(dir, "many.gz");
    gzFile g = gzopen(p, "wb");
    for (int i = 0; i < 1000000; i++)
        gzprintf(g, "line %d\n", i);
    gzclose(g);
    for (int rep = 0; rep < 3; rep++) {
        smt_lines *r;
        smt_err e;
        TH_CHECK(smt_lines_open(&r, p, SMT_LINES_THREADED, &e) == 0, "%s", e.msg);
        char *line, want[32];
        size_t len;
        int n = 0, ok = 1;
        /* rep 2 stops early: closing must stop the helper thread cleanly */
        while ((rep < 2 || n < 500000) && smt_lines_next(r, &line, &len, &e) == 1) {
            snprintf(want, sizeof want, "line %d", n);
            ok &= strcmp(line, want) == 0;
            n++;
        }
        TH_CHECK(ok, "content");
        TH_CHECK(n == (rep < 2 ? 1000000 : 500000), "count %d", n);
        smt_lines_close(r);
    }
    tu_rmtree(dir);
    free(p);
    free(dir);
}

/* Standard input from a pipe whose writer stays open: lines arrive one by one through the helper
 * thread, and closing the reader while that thread waits in read() returns (it is cancelled there). */
static void test_threaded_pipe(void)
{
    int fds[2];
    TH_CHECK(pipe(fds) == 0, "pipe");
    int saved = dup(0);
    TH_CHECK(dup2(fds[0], 0) == 0, "dup2");
    close(fds[0]);
    smt_lines *r;
    smt_err e;
    TH_CHECK(smt_lines_open(&r, "-", SMT_LINES_THREADED, &e) == 0, "%s", e.msg);
    for (int i = 0; i < 50; i++) {
        char buf[32], *line;
        size_t len;
        int n = snprintf(buf, sizeof buf, "line %d\n", i);
        TH_CHECK(write(fds[1], buf, (size_t)n) == n, "write");
        TH_CHECK(smt_lines_next(r, &line, &len, &e) == 1 && len == (size_t)n - 1 &&
                     memcmp(line, buf, len) == 0, "line %d", i);
    }
    smt_lines_close(r);
    close(fds[1]);
    dup2(saved, 0);
    close(saved);
}

int main(void)
{
    test_pool();
    test_threaded_reader();
    test_threaded_pipe();
    return th_summary("threaded_common");
}
