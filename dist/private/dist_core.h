/* dist_core.h — the job runner's parts that need no MPI: the chunk plan of a plain file
 * (dist_plan.c), the job's fingerprint, the manifest (dist_manifest.c) and the part files with
 * their checksums (dist_parts.c). dist_mpi.c runs them over the ranks; the unit tests and the
 * manifest's fuzz harness call them directly. */
#ifndef FASTSMT_DIST_CORE_H
#define FASTSMT_DIST_CORE_H

#include <stdint.h>
#include <stdio.h>

#include "dist.h"
#include "smt_lines.h"

#define DIST_MSG_MAX 512
#define DIST_PATH_MAX 4096
/* -chunk-bytes's range, and so a manifest's */
#define DIST_CHUNK_MIN 1ull
#define DIST_CHUNK_MAX (1ull << 40)
/* chunks of one job (MPI counts are ints) */
#define DIST_MAX_CHUNKS (1ull << 30)

enum { DIST_MODE_FILE = 1, DIST_MODE_STREAM = 2 };

typedef struct dist_chunk {
    uint64_t start, end, first_line, nlines;
    int done;
    int32_t rc, complete;
    uint64_t size[DIST_MAX_OUT], hash[DIST_MAX_OUT];
    char msg[DIST_MSG_MAX];
} dist_chunk;

/* One job's state on one rank. */
typedef struct dist {
    const dist_job *job;
    int mode;
    int rank; /* names this rank's temporary part files */
    char dir[DIST_PATH_MAX], manifest[DIST_PATH_MAX + 16];
    uint64_t in_size, in_mtime, C;
    size_t n_chunks;
    dist_chunk *chunks;
    FILE *man; /* rank 0: the manifest, appended to */
    uint64_t lines, words, done; /* this rank's work */
    double busy;
} dist;

/* The job line of a manifest. */
typedef struct dist_head {
    uint64_t fp, in_size, in_mtime, C;
    int n_out;
} dist_head;

/* ---- the plan (dist_plan.c) */

/* The chunk count of a plain input of in_size bytes cut every C bytes: 0, or SMT_ERR_LIMIT when C
 * is outside [DIST_CHUNK_MIN, DIST_CHUNK_MAX] or the chunks would be more than DIST_MAX_CHUNKS
 * (what names the source of C in the message). */
int dist_plan_size(uint64_t in_size, uint64_t C, const char *what, size_t *n, smt_err *err);
/* The chunk size when none was asked: ~16 chunks per rank, 4 KiB to 64 MiB each. */
uint64_t dist_auto_chunk(uint64_t in_size, int ranks);
/* The first line start at or after byte s (0 < s) of the file fd (path, for messages) of size
 * bytes (size when none): 0 and *out, or SMT_ERR_IO. */
int dist_line_start_at(int fd, const char *path, uint64_t s, uint64_t size, uint64_t *out, smt_err *err);
/* The lines in the bytes [a, b) of fd: its "\n"s and an unterminated last line. */
int dist_count_lines(int fd, const char *path, uint64_t a, uint64_t b, uint64_t *out, smt_err *err);
/* The chunks' bytes from their raw starts (starts[i], i >= 1: dist_line_start_at(i * C); starts[0]
 * is 0): starts never go back, each chunk ends where the next starts, the last at in_size. */
void dist_chunk_bounds(dist_chunk *c, size_t n, const uint64_t *starts, uint64_t in_size);
/* The chunks' first lines from their line counts. */
void dist_chunk_lines(dist_chunk *c, size_t n, const uint64_t *counts);
/* 0 when the chunks cover the bytes [0, in_size) exactly, in order; else SMT_ERR_CORRUPT naming
 * what (the input) and the first chunk that does not fit. */
int dist_plan_check(const dist_chunk *c, size_t n, uint64_t in_size, const char *what,
                    smt_err *err);
/* What makes the job's output what it is: its tool, flags and outputs, and the path, size and
 * time of every file it reads (job->files). 0, or SMT_ERR_IO when one of them cannot be seen. */
int dist_fingerprint(const dist_job *job, uint64_t *fp, smt_err *err);

/* ---- the manifest (dist_manifest.c): "fastsmt-dist-manifest 1", a job line, a line per finished
 * chunk. Read through smt_lines, so a file and bytes in memory read alike. */

/* Writes a new manifest at d->manifest for d's job (C, input) with fingerprint fp. */
int dist_manifest_create(const dist *d, uint64_t fp, smt_err *err);
/* Appends chunk i's line (finished) to f; 0, or SMT_ERR_IO (f's error). */
int dist_manifest_put_done(FILE *f, const dist *d, size_t i);
/* Reads the version and the job line (the reader's first two lines); every value in its range
 * (the chunk size as -chunk-bytes, the outputs 1..DIST_MAX_OUT). 0, or SMT_ERR_FORMAT /
 * SMT_ERR_PARSE / SMT_ERR_LIMIT naming file:line. */
int dist_manifest_read_head(smt_lines *in, dist_head *h, smt_err *err);
/* Whether the job line fits d's job: fingerprint fp, the input's size and time, the outputs, a
 * chunk size the input's plan can use. 0 (d->C and d->n_chunks set) or SMT_ERR_ARG /
 * SMT_ERR_LIMIT saying what differs. */
int dist_manifest_check(dist *d, const dist_head *h, uint64_t fp, smt_err *err);
/* Reads the chunk lines after the head into d->chunks (its table known): a listed chunk is done
 * when its line is whole and matches the table. 0, or SMT_ERR_PARSE / SMT_ERR_LIMIT /
 * SMT_ERR_CORRUPT naming file:line. */
int dist_manifest_read_done(smt_lines *in, dist *d, smt_err *err);

/* ---- the part files (dist_parts.c) */

/* The name of chunk's part of output out: the finished one, or this rank's temporary one. */
void dist_part_name(const dist *d, char *buf, size_t size, size_t chunk, int out, int tmp);
/* A file's size and xxh3-64, read back; 0 or SMT_ERR_IO. */
int dist_hash_file(const char *path, uint64_t *size, uint64_t *hash, smt_err *err);
/* Reads part (size bytes, checksum hash), checks it, and writes it to fd at off (fd >= 0), to f
 * (f != NULL) and/or hands the bytes over (keep != NULL: *keep, malloc'ed). 0, SMT_ERR_IO, or
 * SMT_ERR_CORRUPT (shorter than size, or another checksum). */
int dist_copy_part(const char *part, uint64_t size, uint64_t hash, int fd, uint64_t off, FILE *f,
                   char **keep, smt_err *err);
/* Marks undone the done chunks whose part files are gone or of another size. */
void dist_parts_present(dist *d);
/* Removes the parts, the manifest and the folder (kept when something else is in it). */
void dist_parts_remove(const dist *d);

#endif
