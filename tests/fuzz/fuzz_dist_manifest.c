/* fuzz_dist_manifest — a job manifest (dist/private/dist_core.h) read as -resume reads it: the
 * version and job line, checked against a job that fits its input values, then (for a plan of at
 * most 4096 chunks) the chunk lines against a table cut every C bytes. Needs no MPI. */
#include <stdlib.h>
#include <string.h>

#include "dist_core.h"
#include "fuzz_util.h"

static int no_process(void *ctx, smt_lines *in, FILE **outs, uint64_t *words, int *complete,
                      smt_err *err)
{
    (void)ctx, (void)in, (void)outs, (void)words, (void)complete, (void)err;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *buf = malloc(size + 1);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    smt_lines *in;
    smt_err err;
    if (smt_lines_open_mem(&in, "manifest", buf, size, 0, &err)) {
        free(buf);
        return 0;
    }
    dist_head h;
    if (dist_manifest_read_head(in, &h, &err) == 0) {
        dist_job job;
        memset(&job, 0, sizeof job);
        job.tool = "fastsmt";
        job.input = "in.txt";
        job.n_out = h.n_out;
        job.process = no_process;
        dist d;
        memset(&d, 0, sizeof d);
        d.job = &job;
        d.in_size = h.in_size;
        d.in_mtime = h.in_mtime;
        snprintf(d.dir, sizeof d.dir, "%s/parts", fz_dir());
        snprintf(d.manifest, sizeof d.manifest, "%s/manifest", d.dir);
        if (dist_manifest_check(&d, &h, h.fp, &err) == 0 && d.n_chunks <= 4096) {
            d.chunks = calloc(d.n_chunks + 1, sizeof *d.chunks);
            uint64_t *v = calloc(d.n_chunks + 1, sizeof *v);
            if (d.chunks && v) {
                for (size_t i = 0; i < d.n_chunks; i++)
                    v[i] = i * d.C;
                dist_chunk_bounds(d.chunks, d.n_chunks, v, d.in_size);
                for (size_t i = 0; i < d.n_chunks; i++)
                    v[i] = (d.chunks[i].end - d.chunks[i].start) % 7;
                dist_chunk_lines(d.chunks, d.n_chunks, v);
                if (dist_plan_check(d.chunks, d.n_chunks, d.in_size, "in.txt", &err))
                    fz_fail("an even plan does not cover its input: %s", err.msg);
                if (dist_manifest_read_done(in, &d, &err) == 0)
                    dist_parts_present(&d);
            }
            free(v);
            free(d.chunks);
        }
    }
    smt_lines_close(in);
    free(buf);
    return 0;
}
