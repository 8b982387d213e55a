/* probingpt — build, query, dump and inspect binarized phrase tables (docs/probingpt.md).
 * Exit status: 0 success, 1 bad input or file, 2 usage error. */
#include <errno.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probingpt.h"
#include "smt_lines.h"
#include "smt_num.h"

static const char usage[] =
    "usage: probingpt build --phrase-table PT[.gz] [--reordering RT[.gz]] --out MODEL.ppt\n"
    "                       [--table-limit N --weights w1,w2,...] [--reordering-default v[,v...]]\n"
    "                       [--progress] [--no-threads]\n"
    "       probingpt query MODEL.ppt [--reordering]   (source phrases on stdin)\n"
    "       probingpt dump MODEL.ppt [--out PT] [--reordering-out RT]\n"
    "       probingpt info MODEL.ppt [--verify]\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "probingpt: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* Parses "a,b,c" into out (at most max), each a number in [lo, hi] (common/smt_num: whole token,
 * no nan); returns the count or -1. */
static int parse_list(const char *s, float *out, int max, float lo, float hi)
{
    int n = 0;
    for (;;) {
        size_t len = strcspn(s, ",");
        if (n == max || smt_parse_float(s, len, lo, hi, 0, &out[n]))
            return -1;
        n++;
        if (!s[len])
            return n;
        s += len + 1;
    }
}

/* Writes stdout's pending output; 0, or 1 with a message naming the error. */
static int flush_stdout(void)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "probingpt: write error on standard output: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}

static int cmd_build(int argc, char **argv)
{
    ppt_build_options o;
    memset(&o, 0, sizeof o);
    o.threaded_input = 1;
    float weights[PPT_MAX_SCORES], rdef[PPT_MAX_SCORES];
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--progress")) {
            o.progress = 1;
            continue;
        }
        if (!strcmp(a, "--no-threads")) {
            o.threaded_input = 0;
            continue;
        }
        if (!v)
            return usage_error("%s: missing value (or unknown option)", a);
        i++;
        if (!strcmp(a, "--phrase-table") || !strcmp(a, "-p")) {
            o.phrase_table = v;
        } else if (!strcmp(a, "--reordering") || !strcmp(a, "-r")) {
            o.reordering = v;
        } else if (!strcmp(a, "--out") || !strcmp(a, "-o")) {
            o.out = v;
        } else if (!strcmp(a, "--table-limit")) {
            long long n;
            if (smt_parse_ll(v, strlen(v), 0, UINT32_MAX, &n))
                return usage_error("bad --table-limit '%s' (an integer from 0 to 4294967295)", v);
            o.table_limit = (uint32_t)n;
        } else if (!strcmp(a, "--weights")) {
            int n = parse_list(v, weights, PPT_MAX_SCORES, -FLT_MAX, FLT_MAX);
            if (n <= 0)
                return usage_error("bad --weights '%s'", v);
            o.weights = weights;
            o.num_weights = (uint32_t)n;
        } else if (!strcmp(a, "--reordering-default")) {
            int n = parse_list(v, rdef, PPT_MAX_SCORES, 0, FLT_MAX); /* probabilities */
            if (n <= 0)
                return usage_error("bad --reordering-default '%s'", v);
            o.reordering_default = rdef;
            o.num_reordering_default = (uint32_t)n;
        } else if (!strcmp(a, "--test-hash-bits")) { /* testing only: forces key collisions */
            long long bits;
            if (smt_parse_ll(v, strlen(v), 1, 64, &bits))
                return usage_error("bad --test-hash-bits '%s'", v);
            o.hash_mask = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        } else {
            return usage_error("unknown option %s", a);
        }
    }
    if (!o.phrase_table || !o.out)
        return usage_error("%s", "build needs --phrase-table and --out");
    ppt_build_report r;
    smt_err e;
    smt_err_clear(&e);
    int rc = ppt_build(&o, &r, &e);
    if (rc) {
        fprintf(stderr, "probingpt: %s\n", smt_err_text(&e, rc));
        return rc == SMT_ERR_ARG ? 2 : 1;
    }
    fprintf(stderr,
            "probingpt build: %llu lines, %llu sources, %llu targets (%llu pruned by the table limit), "
            "%llu bytes, %.2f s\n",
            (unsigned long long)r.lines, (unsigned long long)r.sources, (unsigned long long)r.targets,
            (unsigned long long)r.pruned, (unsigned long long)r.file_size, r.seconds);
    if (o.reordering)
        fprintf(stderr,
                "probingpt build: reordering: %llu lines; %llu phrase pairs without an entry got the "
                "default; %llu entries had no phrase pair\n",
                (unsigned long long)r.reordering_lines, (unsigned long long)r.no_reordering,
                (unsigned long long)r.orphan_reordering);
    if (r.split_sources || r.collisions)
        fprintf(stderr,
                "probingpt build: %llu source phrases had non-contiguous lines (merged); %llu hash "
                "collisions (resolved)\n",
                (unsigned long long)r.split_sources, (unsigned long long)r.collisions);
    return 0;
}

static int open_table(ppt_table **t, const char *path, unsigned flags)
{
    smt_err e;
    smt_err_clear(&e);
    int rc = ppt_open(t, path, flags, &e);
    if (rc)
        fprintf(stderr, "probingpt: %s\n", smt_err_text(&e, rc));
    return rc;
}

static int cmd_query(int argc, char **argv)
{
    const char *path = NULL;
    int reord = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--reordering"))
            reord = 1;
        else if (argv[i][0] == '-' || path)
            return usage_error("query: unexpected argument %s", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return usage_error("%s", "query needs MODEL.ppt");
    ppt_table *t;
    if (open_table(&t, path, 0))
        return 1;
    if (reord && !ppt_num_reordering_scores(t)) {
        ppt_close(t);
        fprintf(stderr, "probingpt: %s has no reordering scores\n", path);
        return 1;
    }
    smt_lines *in;
    smt_err e;
    int rc = smt_lines_open(&in, "-", 0, &e);
    char *line;
    size_t len;
    while (!rc && (rc = smt_lines_next(in, &line, &len, &e)) == 1) {
        rc = 0;
        ppt_targets g;
        int lr = ppt_lookup(t, line, len, &g);
        if (lr == SMT_ERR_CORRUPT) {
            fprintf(stderr, "probingpt: %s: damaged entry for '%s'\n", path, line);
            rc = 1;
            break;
        }
        ppt_target x;
        int werr = 0;
        while (lr == 0 && !werr && ppt_targets_next(&g, &x))
            werr = (reord ? ppt_write_reordering_line : ppt_write_line)(stdout, t, &g, &x);
        if (lr == 0 && g.error) {
            fprintf(stderr, "probingpt: %s: damaged entry for '%s'\n", path, line);
            rc = 1;
            break;
        }
        if (werr || fputs("\n", stdout) == EOF) { /* an empty line ends each answer */
            fprintf(stderr, "probingpt: write error on standard output: %s\n", strerror(errno));
            rc = 1;
            break;
        }
    }
    if (rc < 0)
        fprintf(stderr, "probingpt: %s\n", smt_err_text(&e, rc));
    smt_lines_close(in);
    ppt_close(t);
    return rc ? 1 : flush_stdout();
}

static int cmd_dump(int argc, char **argv)
{
    const char *path = NULL, *out = NULL, *rout = NULL;
    for (int i = 0; i < argc; i++) {
        if ((!strcmp(argv[i], "--out") || !strcmp(argv[i], "-o")) && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--reordering-out") && i + 1 < argc)
            rout = argv[++i];
        else if (argv[i][0] == '-' || path)
            return usage_error("dump: unexpected argument %s", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return usage_error("%s", "dump needs MODEL.ppt");
    ppt_table *t;
    if (open_table(&t, path, 0))
        return 1;
    FILE *pf = out ? fopen(out, "wb") : stdout;
    FILE *rf = rout ? fopen(rout, "wb") : NULL;
    int rc = 1;
    smt_err e;
    smt_err_clear(&e);
    if (!pf || (rout && !rf)) {
        fprintf(stderr, "probingpt: %s: %s\n", !pf ? out : rout, strerror(errno));
    } else {
        int d = ppt_dump(t, pf, rf, &e);
        if (d)
            fprintf(stderr, "probingpt: %s\n", smt_err_text(&e, d));
        else
            rc = 0;
    }
    if (pf && pf != stdout && (ferror(pf) | fclose(pf))) {
        fprintf(stderr, "probingpt: %s: write error: %s\n", out, strerror(errno));
        rc = 1;
    }
    if (pf == stdout && flush_stdout())
        rc = 1;
    if (rf && (ferror(rf) | fclose(rf))) {
        fprintf(stderr, "probingpt: %s: write error: %s\n", rout, strerror(errno));
        rc = 1;
    }
    ppt_close(t);
    return rc;
}

static int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    unsigned flags = 0;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--verify"))
            flags |= SMT_OPEN_VERIFY;
        else if (argv[i][0] == '-' || path)
            return usage_error("info: unexpected argument %s", argv[i]);
        else
            path = argv[i];
    }
    if (!path)
        return usage_error("%s", "info needs MODEL.ppt");
    ppt_table *t;
    if (open_table(&t, path, flags))
        return 1;
    const ppt_params *p = ppt_get_params(t);
    const smt_mapped *m = ppt_mapped(t);
    printf("file\t%s\nsize\t%llu\nformat\t%s version %u\n", path, (unsigned long long)smt_mapped_file_size(m),
           PPT_KIND, smt_mapped_kind_version(m));
    printf("scores\t%u\nreordering_scores\t%u\ntable_limit\t%u\n", p->num_scores, p->num_reordering_scores,
           p->table_limit);
    printf("sources\t%llu\ntargets\t%llu\nslots\t%llu\nalignments\t%llu\nextra_strings\t%llu\n",
           (unsigned long long)p->num_sources, (unsigned long long)p->num_targets,
           (unsigned long long)p->num_slots, (unsigned long long)p->num_align,
           (unsigned long long)p->num_extra);
    printf("src_words\t%u\ntgt_words\t%u\ncollisions\t%llu\n", ppt_src_vocab(t)->n, ppt_tgt_vocab(t)->n,
           (unsigned long long)p->collisions);
    for (unsigned i = 0; i < smt_mapped_section_count(m); i++) {
        const char *name;
        uint64_t off, size, sum;
        smt_mapped_section_info(m, i, &name, &off, &size, &sum);
        printf("section\t%s\t%llu\t%llu\t%016llx\n", name, (unsigned long long)off, (unsigned long long)size,
               (unsigned long long)sum);
    }
    if (flags & SMT_OPEN_VERIFY)
        printf("verified\tok\n");
    ppt_close(t);
    return flush_stdout();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage_error("%s", "no command");
    const char *c = argv[1];
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(usage, stdout);
            return flush_stdout();
        }
    if (!strcmp(c, "build"))
        return cmd_build(argc - 2, argv + 2);
    if (!strcmp(c, "query"))
        return cmd_query(argc - 2, argv + 2);
    if (!strcmp(c, "dump"))
        return cmd_dump(argc - 2, argv + 2);
    if (!strcmp(c, "info"))
        return cmd_info(argc - 2, argv + 2);
    return usage_error("unknown command %s", c);
}
