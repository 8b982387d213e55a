/* dist.h — one job over many processes (MPI ranks, from mpirun or srun): what fastsmt and glm query
 * share to run beyond one machine (docs/scale.md).
 *
 * The input is cut into chunks of whole lines; ranks ask rank 0 for the next chunk as they finish
 * one (long and short sentences balance themselves), process it with the tool's function (its own
 * threads inside) and the outputs are put together in input order, so that they are byte-identical
 * to one process's whatever the number of ranks and threads.
 * - A plain file (-input-file): chunk i is the bytes from the first line start at or after i * C to
 *   the next chunk's start; each rank reads its own chunks' bytes and writes their outputs as part
 *   files (temporary name, then renamed) in a parts folder every rank sees, and rank 0 keeps a
 *   manifest there. At the end each named output file is assembled by all ranks at once (each
 *   copies its share of parts to their offsets in the file's temporary name, which rank 0 renames);
 *   standard output is written by rank 0, part after part. A failed job keeps its finished chunks:
 *   the same command with resume redoes only the missing ones.
 * - Standard input or a compressed file: rank 0 reads it, hands chunks out in messages and writes
 *   the answers in order as they come back.
 * Built without MPI (FASTSMT_MPI OFF or Open MPI absent) dist_start refuses a start by mpirun/srun
 * with several ranks and dist_run refuses to run. Thread-safety: one job per process. */
#ifndef FASTSMT_DIST_H
#define FASTSMT_DIST_H

#include <stdint.h>
#include <stdio.h>

#include "smt_error.h"
#include "smt_lines.h"

#define DIST_MAX_OUT 6
enum {
    DIST_OUT_STDOUT,  /* standard output (rank 0 writes it) */
    DIST_OUT_FILE,    /* a named file, replaced only when the whole job succeeded */
    DIST_OUT_PRIVATE, /* bytes only the tool reads back (job.absorb), in input order */
};

typedef struct dist_job {
    const char *tool;  /* for messages: "fastsmt", "glm query" */
    const char *input; /* a file; NULL or "-": standard input */
    int n_out;
    int out_kind[DIST_MAX_OUT];
    const char *out_path[DIST_MAX_OUT]; /* DIST_OUT_FILE: the file */
    const char *parts_dir;  /* NULL: ./<input's name>.<tool>-parts */
    const char *fingerprint; /* what makes the output what it is (the flags): -resume checks it */
    /* every file the job reads besides the input (the models): their paths, sizes and times are
     * part of the fingerprint, so that -resume refuses a job whose models changed; one that
     * cannot be seen fails the job */
    const char *const *files;
    size_t n_files;
    int resume;              /* finish the job the parts folder's manifest describes */
    uint64_t chunk_bytes;    /* 0: a file in ~16 chunks per rank (4 KiB .. 64 MiB each) */
    uint64_t stream_chunk_bytes; /* chunks read from standard input (0: 64 KiB) */
    int report;               /* rank 0 prints each rank's lines, words and words/s at the end */
    /* Processes the lines of in (a part of the input, numbered as in the whole input) into outs
     * (one stream per output, in the order of out_kind). *words: the words read. Returns 0, or an
     * SMT_ERR_*: *complete = 1 when the outputs are still whole (refused lines: the job goes on
     * and fails at the end with the first such error, as one process does), else the job stops. */
    int (*process)(void *ctx, smt_lines *in, FILE **outs, uint64_t *words, int *complete,
                   smt_err *err);
    /* rank 0: the bytes of a DIST_OUT_PRIVATE output, chunk after chunk in input order */
    int (*absorb)(void *ctx, int out, const char *data, size_t len, smt_err *err);
    /* rank 0, after standard output's parts: what follows them (glm's summary); may be NULL */
    int (*finish)(void *ctx, FILE *out, smt_err *err);
    void *ctx;
} dist_job;

/* Starts MPI when this process was started by mpirun or srun (their environment tells), before the
 * tool reads its arguments. *rank, *size: this process's place (0 and 1 without MPI). Returns 0, or
 * SMT_ERR_UNSUPPORTED (with err) when several ranks were started and this build has no MPI. */
int dist_start(int *argc, char ***argv, int *rank, int *size, smt_err *err);

/* 1 when this build has MPI. */
int dist_available(void);

/* Runs the job over every rank (a collective call: every rank calls it with the same job).
 * Returns 0 (rank 0: every output complete and in place), or an error on rank 0 (a chunk's
 * non-fatal error: the outputs are complete; else they are absent and err says which rank failed
 * and how to resume). A fatal error on another rank ends the job through rank 0 (MPI_Abort). */
int dist_run(const dist_job *job, smt_err *err);

/* Ends MPI (after dist_run, or on an error: exit_code != 0 aborts the other ranks too). */
void dist_end(int exit_code);

#endif
