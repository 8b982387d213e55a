/* bench_probingpt — build time and lookup throughput of probingpt, one machine-readable line per
 * measurement ("bench=probingpt op=... key=value ...").
 * usage: bench_probingpt [--phrase-table PT] [--reordering RT] [--text FILE] [--out DIR]
 * Defaults: the shared Bible tables and test-a.es under $FASTSMT_SHARED (or ../shared).
 * Lookups: (a) every source phrase of the table, shuffled; (b) every sub-phrase of up to 5 words
 * of each sentence of the text (the decoder's pattern: mostly misses); with 1 and 2 threads. A lookup
 * here is ppt_lookup[_ids] plus reading the first target (scores, reordering). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "probingpt.h"
#include "smt_buf.h"
#include "smt_io.h"
#include "smt_lines.h"
#include "smt_progress.h"
#include "smt_words.h"

#define MOSES_SECONDS 31.7 /* ../shared/reference/anchors.md: three Moses steps, 113 MB of files */
#define MOSES_MB 113.0

typedef struct {
    uint32_t *ids;  /* all queries' ids, concatenated */
    uint64_t *off;  /* n + 1 */
    char **text;    /* the same queries as strings */
    size_t n, cap, n_ids, cap_ids;
} queries;

static void q_add(queries *q, const uint32_t *ids, size_t len, const char *text, size_t tlen)
{
    size_t c_off = q->cap, c_text = q->cap; /* off and text: q->cap entries each */
    if (smt_grow(&q->off, &c_off, q->n + 2, sizeof *q->off, 1024) ||
        smt_grow(&q->text, &c_text, q->n + 2, sizeof *q->text, 1024) ||
        smt_grow(&q->ids, &q->cap_ids, q->n_ids + len, sizeof *q->ids, 1024)) {
        fprintf(stderr, "bench_probingpt: out of memory\n");
        exit(1);
    }
    q->cap = c_off < c_text ? c_off : c_text;
    if (!q->n)
        q->off[0] = 0;
    memcpy(q->ids + q->n_ids, ids, len * sizeof *ids);
    q->n_ids += len;
    q->text[q->n] = strndup(text, tlen);
    q->off[++q->n] = q->n_ids;
}

static int collect_group(void *ctx, ppt_targets *g)
{
    queries *q = ctx;
    const smt_vocab *v = ppt_src_vocab(g->table);
    char buf[4096];
    size_t len = 0;
    for (uint32_t i = 0; i < g->src_len; i++) {
        size_t wl;
        const char *w = smt_vocab_word(v, g->src_ids[i], &wl);
        if (len + wl + 2 < sizeof buf) {
            if (i)
                buf[len++] = ' ';
            memcpy(buf + len, w, wl);
            len += wl;
        }
    }
    q_add(q, g->src_ids, g->src_len, buf, len);
    return 0;
}

static void shuffle(queries *q)
{
    /* shuffle an index and rebuild, so ids and text stay paired */
    size_t n = q->n;
    size_t *perm = malloc(n * sizeof *perm);
    for (size_t i = 0; i < n; i++)
        perm[i] = i;
    uint64_t s = 88172645463325252ull;
    for (size_t i = n - 1; i > 0; i--) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        size_t j = s % (i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    queries r = {0};
    for (size_t i = 0; i < n; i++) {
        size_t k = perm[i];
        q_add(&r, q->ids + q->off[k], q->off[k + 1] - q->off[k], q->text[k], strlen(q->text[k]));
        free(q->text[k]);
    }
    free(q->ids);
    free(q->off);
    free(q->text);
    free(perm);
    *q = r;
}

static void text_queries(const ppt_table *t, const char *path, queries *q)
{
    smt_lines *r;
    smt_err e;
    if (smt_lines_open(&r, path, 0, &e)) {
        fprintf(stderr, "bench_probingpt: %s\n", e.msg);
        exit(1);
    }
    char *line;
    size_t len;
    const smt_vocab *v = ppt_src_vocab(t);
    int rc;
    while ((rc = smt_lines_next(r, &line, &len, &e)) == 1) {
        const char *wb[1024];
        size_t wl[1024];
        uint32_t ids[1024];
        size_t n = smt_words_split(line, len, SMT_WS_BLANK, wb, wl, 1024);
        if (n > 1024)
            n = 1024;
        for (size_t i = 0; i < n; i++)
            ids[i] = smt_vocab_find(v, wb[i], wl[i]);
        for (size_t i = 0; i < n; i++)
            for (size_t k = 1; k <= 5 && i + k <= n; k++) {
                char buf[4096];
                size_t bl = 0;
                for (size_t j = i; j < i + k && bl + wl[j] + 2 < sizeof buf; j++) {
                    if (j > i)
                        buf[bl++] = ' ';
                    memcpy(buf + bl, wb[j], wl[j]);
                    bl += wl[j];
                }
                q_add(q, ids + i, k, buf, bl);
            }
    }
    if (rc < 0) {
        fprintf(stderr, "bench_probingpt: %s\n", e.msg);
        exit(1);
    }
    smt_lines_close(r);
}

typedef struct {
    const ppt_table *t;
    const queries *q;
    size_t begin, end;
    int by_text, reps;
    uint64_t hits;
    double sink;
} job;

static void *lookup_job(void *arg)
{
    job *j = arg;
    for (int rep = 0; rep < j->reps; rep++)
        for (size_t i = j->begin; i < j->end; i++) {
            ppt_targets g;
            int rc = j->by_text ? ppt_lookup(j->t, j->q->text[i], strlen(j->q->text[i]), &g)
                                : ppt_lookup_ids(j->t, j->q->ids + j->q->off[i], j->q->off[i + 1] - j->q->off[i], &g);
            if (rc)
                continue;
            j->hits++;
            ppt_target x;
            if (ppt_targets_next(&g, &x) == 1) /* touch the payload: the second random access */
                j->sink += x.scores[0] + (x.reordering ? x.reordering[0] : 0) + g.n;
        }
    return NULL;
}

static void bench_lookups(const ppt_table *t, const queries *q, const char *set, int by_text)
{
    for (int threads = 1; threads <= 2; threads++) {
        int reps = q->n ? (int)(2000000 / q->n) + 2 : 1; /* at least ~2 M lookups per line */
        job jobs[2];
        pthread_t th[2];
        double t0 = smt_now();
        for (int k = 0; k < threads; k++) {
            jobs[k] = (job){t, q, q->n * (size_t)k / (size_t)threads, q->n * (size_t)(k + 1) / (size_t)threads,
                            by_text, reps, 0, 0};
            pthread_create(&th[k], NULL, lookup_job, &jobs[k]);
        }
        uint64_t hits = 0;
        for (int k = 0; k < threads; k++) {
            pthread_join(th[k], NULL);
            hits += jobs[k].hits;
        }
        double s = smt_now() - t0;
        double total = (double)q->n * reps;
        printf("bench=probingpt op=lookup set=%s key=%s threads=%d queries=%zu hit_rate=%.4f seconds=%.3f "
               "lookups_per_s=%.0f\n",
               set, by_text ? "string" : "ids", threads, q->n, (double)hits / total, s, total / s);
        fflush(stdout);
    }
}

static double peak_rss_mb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_maxrss / 1024.0;
}

static char *shared(const char *rel)
{
    const char *root = getenv("FASTSMT_SHARED");
    char *p;
    if (asprintf(&p, "%s/%s", root && *root ? root : "../shared", rel) < 0)
        exit(1);
    return p;
}

int main(int argc, char **argv)
{
    char *pt = shared("models/bible-es-en/phrase-table.gz");
    char *rt = shared("models/bible-es-en/reordering-table.wbe-msd-bidirectional-fe.gz");
    char *text = shared("data/bible/test-a.es");
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    static const char usage[] =
        "usage: bench_probingpt [--phrase-table PT] [--reordering RT] [--text FILE] [--out DIR]\n"
        "Builds PT (+ RT; --reordering '' for none) into DIR and measures builds and lookups, one\n"
        "line per measurement. Defaults: the shared Bible tables and test-a.es under\n"
        "$FASTSMT_SHARED (or ../shared).\n";
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            fputs(usage, stdout);
            free(pt), free(rt), free(text);
            return smt_close_output(stdout, "standard output", NULL) ? 1 : 0;
        }
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 == argc) {
            fprintf(stderr, "bench_probingpt: %s needs a value\n%s", argv[i], usage);
            free(pt), free(rt), free(text);
            return 2;
        }
        if (!strcmp(argv[i], "--phrase-table")) {
            free(pt);
            pt = strdup(argv[i + 1]);
        } else if (!strcmp(argv[i], "--reordering")) {
            free(rt);
            rt = strdup(argv[i + 1]);
        } else if (!strcmp(argv[i], "--text")) {
            free(text);
            text = strdup(argv[i + 1]);
        } else if (!strcmp(argv[i], "--out")) {
            dir = argv[i + 1];
        } else {
            fprintf(stderr, "bench_probingpt: unknown argument '%s'\n%s", argv[i], usage);
            free(pt), free(rt), free(text);
            return 2;
        }
    }
    char *out;
    if (asprintf(&out, "%s/bench_probingpt.%d.ppt", dir, (int)getpid()) < 0)
        return 1;
    ppt_build_options o;
    memset(&o, 0, sizeof o);
    o.phrase_table = pt;
    o.reordering = *rt ? rt : NULL;
    o.out = out;
    o.progress = -1;
    o.threaded_input = 1;
    ppt_build_report r;
    smt_err e;
    int rc = ppt_build(&o, &r, &e);
    if (rc) {
        fprintf(stderr, "bench_probingpt: %s\n", e.msg);
        return 1;
    }
    double mb = (double)r.input_bytes / 1e6, fmb = (double)r.file_size / 1e6;
    printf("bench=probingpt op=build lines=%llu sources=%llu input_mb=%.1f seconds=%.3f input_mb_per_s=%.1f "
           "file_mb=%.1f peak_rss_mb=%.1f moses_seconds=%.1f speedup_vs_moses=%.2f moses_file_mb=%.0f "
           "size_vs_moses=%.2f\n",
           (unsigned long long)r.lines, (unsigned long long)r.sources, mb, r.seconds, mb / r.seconds, fmb,
           peak_rss_mb(), MOSES_SECONDS, MOSES_SECONDS / r.seconds, MOSES_MB, fmb / MOSES_MB);
    fflush(stdout);
    double t0 = smt_now();
    ppt_table *t;
    if ((rc = ppt_open(&t, out, 0, &e))) {
        fprintf(stderr, "bench_probingpt: %s\n", e.msg);
        return 1;
    }
    printf("bench=probingpt op=open seconds=%.4f\n", smt_now() - t0);
    t0 = smt_now();
    smt_err_clear(&e);
    int verified = ppt_verify(t, &e);
    printf("bench=probingpt op=verify seconds=%.3f ok=%d\n", smt_now() - t0, verified == 0);
    if (verified)
        fprintf(stderr, "bench_probingpt: %s\n", smt_err_text(&e, verified));
    queries all = {0}, sub = {0};
    ppt_foreach(t, collect_group, &all);
    shuffle(&all);
    bench_lookups(t, &all, "table_sources", 0);
    bench_lookups(t, &all, "table_sources", 1);
    text_queries(t, text, &sub);
    bench_lookups(t, &sub, "text_subphrases", 0);
    bench_lookups(t, &sub, "text_subphrases", 1);
    ppt_close(t);
    remove(out);
    for (size_t i = 0; i < all.n; i++)
        free(all.text[i]);
    for (size_t i = 0; i < sub.n; i++)
        free(sub.text[i]);
    free(all.ids); free(all.off); free(all.text);
    free(sub.ids); free(sub.off); free(sub.text);
    free(out); free(pt); free(rt); free(text);
    if ((rc = smt_close_output(stdout, "standard output", &e)) != 0) {
        fprintf(stderr, "bench_probingpt: %s\n", smt_err_text(&e, rc));
        return 1;
    }
    return verified ? 1 : 0;
}
