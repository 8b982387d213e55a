/* Many threads looking up one probingpt table at once, by string and by ids, hits and misses:
 * every thread must see exactly what one thread sees. A plain program (tests/tharness.h) so that
 * CI can run it under ThreadSanitizer. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probingpt.h"
#include "smt_hash.h"
#include "tharness.h"
#include "testutil.h"

#define N_SOURCES 20000
#define N_THREADS 4

static ppt_table *table;
static char queries[2 * N_SOURCES][48];

static void make_table(const char *pt)
{
    FILE *f = fopen(pt, "w");
    for (int s = 0; s < N_SOURCES; s++) {
        for (int j = 0; j <= s % 3; j++)
            fprintf(f, "s%d m%d ||| t%d u%d ||| %g 0.5 ||| 0-0 1-1 ||| 1 2 3 ||| |||\n", s % 50, s, j, s % 7,
                    1.0 / (j + 2));
        snprintf(queries[2 * s], sizeof queries[0], "s%d m%d", s % 50, s);
        snprintf(queries[2 * s + 1], sizeof queries[0], "s%d m%d", (s + 1) % 50, s); /* a miss */
    }
    fclose(f);
}

/* A digest of everything one query returns (0 for a miss). */
static uint64_t digest(const char *q, int by_ids)
{
    ppt_targets g;
    int rc;
    if (by_ids) {
        uint32_t ids[8];
        size_t n = 0;
        const smt_vocab *v = ppt_src_vocab(table);
        const char *p = q;
        while (*p && n < 8) {
            const char *e = strchr(p, ' ');
            size_t len = e ? (size_t)(e - p) : strlen(p);
            ids[n++] = smt_vocab_find(v, p, len);
            p += len + (e ? 1 : 0);
        }
        rc = ppt_lookup_ids(table, ids, n, &g);
    } else {
        rc = ppt_lookup(table, q, strlen(q), &g);
    }
    if (rc)
        return (uint64_t)(-rc);
    uint64_t h = g.n;
    ppt_target x;
    while (ppt_targets_next(&g, &x) == 1) {
        h = smt_hash_u64(h ^ smt_hash_bytes(x.words, x.n_words * 4));
        h = smt_hash_u64(h ^ smt_hash_bytes(x.scores, ppt_num_scores(table) * 4));
        h = smt_hash_u64(h ^ smt_hash_bytes(x.align, 2 * x.n_align));
        h = smt_hash_u64(h ^ smt_hash_bytes(x.counts, 4 * x.n_counts));
    }
    return h;
}

static uint64_t expected[2 * N_SOURCES];

typedef struct {
    int id;
    int mismatches;
} worker;

static void *run(void *arg)
{
    worker *w = arg;
    for (int rep = 0; rep < 2; rep++)
        for (int k = 0; k < 2 * N_SOURCES; k++) {
            int i = (k * 7919 + w->id * 104729) % (2 * N_SOURCES); /* a different order per thread */
            if (digest(queries[i], (i + w->id + rep) & 1) != expected[i])
                w->mismatches++;
        }
    return NULL;
}

int main(void)
{
    char *dir = tu_tmpdir();
    char *pt = tu_join(dir, "t.pt"), *out = tu_join(dir, "t.ppt");
    make_table(pt);
    ppt_build_options o;
    memset(&o, 0, sizeof o);
    o.phrase_table = pt;
    o.out = out;
    o.progress = -1;
    o.threaded_input = 1;
    smt_err e;
    TH_CHECK(ppt_build(&o, NULL, &e) == 0, "%s", e.msg);
    TH_CHECK(ppt_open(&table, out, SMT_OPEN_VERIFY, &e) == 0, "%s", e.msg);
    if (!table)
        return th_summary("threaded_probingpt");
    int hits = 0;
    for (int i = 0; i < 2 * N_SOURCES; i++) {
        expected[i] = digest(queries[i], 0);
        TH_CHECK(digest(queries[i], 1) == expected[i], "ids and string differ for %s", queries[i]);
        hits += expected[i] != (uint64_t)(-SMT_ERR_NOTFOUND);
    }
    TH_CHECK(hits == N_SOURCES, "%d hits", hits);
    pthread_t th[N_THREADS];
    worker w[N_THREADS];
    for (int i = 0; i < N_THREADS; i++) {
        w[i].id = i;
        w[i].mismatches = 0;
        pthread_create(&th[i], NULL, run, &w[i]);
    }
    for (int i = 0; i < N_THREADS; i++) {
        pthread_join(th[i], NULL);
        TH_CHECK(w[i].mismatches == 0, "thread %d: %d answers differ from one thread's", i, w[i].mismatches);
    }
    ppt_close(table);
    tu_rmtree(dir);
    free(dir);
    free(pt);
    free(out);
    return th_summary("threaded_probingpt");
}
