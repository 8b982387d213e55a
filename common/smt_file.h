/* smt_file.h — the fastsmt binary container, written once and queried in place through mmap.
 *
 * Layout (all integers little-endian as written by the host; the byte-order mark rejects others):
 *   [header, 512 bytes] [section table, n * 48 bytes] [sections, each aligned to 64 bytes]
 * The header holds a magic (8 bytes: "FSMT" + a 4-byte kind such as "PPT1"), the container version,
 * the kind's format version, a byte-order mark, a sanity block (a float, a double, a 64-bit integer
 * and type sizes, which catch a foreign architecture), the file size, up to SMT_FILE_PARAMS_MAX bytes
 * of kind-specific parameters (build options that change query results, e.g. a B-tree node size),
 * and an xxh3-64 checksum of itself and the section table. Each section table entry names a section
 * (up to 23 bytes) and gives its offset, size and xxh3-64 checksum.
 *
 * While a file is being written its magic is SMT_FILE_MAGIC_INCOMPLETE and it lives under a
 * temporary name; smt_writer_finish() writes the real magic, fsyncs the file, renames it into place
 * and fsyncs the folder, so a crashed build never leaves a file that opens as a model.
 * A symbolic link at the output path is written through to its target (as cp does; the link
 * stays); a dangling link, or anything at the path that is not a regular file (a directory, fifo,
 * device node, socket), is refused and left alone.
 *
 * Opening always checks the magic, kind, versions, byte order, sanity block, header checksum, the
 * file size and every section's bounds and alignment; section checksums are checked on request
 * (smt_mapped_verify, or SMT_OPEN_VERIFY). A file that fails a check yields an error, never a crash.
 *
 * Thread-safety: a writer is used by one thread. A mapped file is immutable once open: any number of
 * threads may read its sections concurrently. */
#ifndef SMT_FILE_H
#define SMT_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SMT_FILE_MAGIC_PREFIX "FSMT"
#define SMT_FILE_MAGIC_INCOMPLETE "FSMT-INC" /* written first, replaced on success */
#define SMT_FILE_CONTAINER_VERSION 1u
#define SMT_FILE_ALIGN 64u
#define SMT_FILE_PARAMS_MAX 256u
#define SMT_FILE_SECTION_NAME_MAX 23u /* bytes, without the terminating NUL */
#define SMT_FILE_SECTIONS_MAX 64u

/* ---- writing ---- */

typedef struct smt_writer smt_writer;

/* The file to write for the output path `path`: path itself when it is absent or a regular file,
 * the resolved target when it is a symbolic link to a regular file; SMT_ERR_IO naming path for a
 * dangling link or anything that is not a regular file. *target is malloc'ed. Every writer that
 * replaces an output by renaming a temporary file checks its path with this first. */
int smt_file_target(const char *path, char **target, smt_err *err);

/* fsyncs the folder holding path (after a rename into it). 0 or SMT_ERR_IO. */
int smt_file_sync_dir(const char *path, smt_err *err);

/* Creates `target`.tmp-<pid> (target: see smt_file_target) and writes a provisional header with the
 * incomplete magic.
 * kind: exactly 4 bytes (e.g. "PPT1"). kind_version: the component's own format version.
 * Returns 0, SMT_ERR_IO, SMT_ERR_NOMEM or SMT_ERR_ARG. */
int smt_writer_open(smt_writer **out, const char *path, const char kind[4], uint32_t kind_version,
                    smt_err *err);

/* A file in another program's format (a KenLM binary, glm/glm_build.c), written as smt_writer_open
 * writes a container: under a temporary name, synced, renamed into place (the same path checks),
 * or removed on failure. smt_writer_write appends bytes verbatim; there is no header, section or
 * checksum (the format's own checks are its reader's); smt_writer_finish or _abort ends it. */
int smt_writer_open_foreign(smt_writer **out, const char *path, smt_err *err);

/* Sets the kind-specific parameter block (at most SMT_FILE_PARAMS_MAX bytes). */
int smt_writer_set_params(smt_writer *w, const void *params, size_t size, smt_err *err);

/* Starts a new section (padding the file to SMT_FILE_ALIGN). Section names must be unique. */
int smt_writer_begin(smt_writer *w, const char *name, smt_err *err);

/* Appends bytes to the current section; the checksum is computed as data streams through. (A
 * foreign file: to the file.) */
int smt_writer_write(smt_writer *w, const void *data, size_t size, smt_err *err);

/* Ends the current section. */
int smt_writer_end(smt_writer *w, smt_err *err);

/* Convenience: begin + write + end. */
int smt_writer_section(smt_writer *w, const char *name, const void *data, size_t size, smt_err *err);

/* Writes the section table and final header, syncs, renames the file to its final path (checked
 * again with smt_file_target) and syncs the folder.
 * Frees w whatever the outcome; on failure the temporary file is removed. */
int smt_writer_finish(smt_writer *w, smt_err *err);

/* Abandons the file: closes and removes the temporary file, frees w. Accepts NULL. */
void smt_writer_abort(smt_writer *w);

/* ---- reading ---- */

typedef struct smt_mapped smt_mapped;

enum {
    SMT_OPEN_VERIFY = 1u << 0,   /* check every section's checksum at open */
    SMT_OPEN_POPULATE = 1u << 1, /* pre-fault the whole mapping (MAP_POPULATE) */
    SMT_OPEN_READ = 1u << 2      /* read the file into memory instead of mapping it */
};

/* Maps `path` read-only and validates it (see the top of this file).
 * kind: the expected 4-byte kind; kind_version: the version this code reads.
 * Returns 0, SMT_ERR_IO, SMT_ERR_FORMAT (foreign file or other kind), SMT_ERR_VERSION,
 * SMT_ERR_INCOMPLETE, SMT_ERR_CORRUPT or SMT_ERR_NOMEM; the message names the file. */
int smt_mapped_open(smt_mapped **out, const char *path, const char kind[4], uint32_t kind_version,
                    unsigned flags, smt_err *err);

/* Checks every section's xxh3-64 checksum. Returns 0 or SMT_ERR_CORRUPT naming the section. */
int smt_mapped_verify(const smt_mapped *m, smt_err *err);

/* The section `name` (64-byte aligned) and its size, or NULL when the file has no such section. */
const void *smt_mapped_section(const smt_mapped *m, const char *name, uint64_t *size);

/* Like smt_mapped_section, but a missing section or a size that is not a multiple of elem_size
 * (or, when expected_count is not UINT64_MAX, not exactly expected_count elements) is an error. */
int smt_mapped_require(const smt_mapped *m, const char *name, size_t elem_size,
                       uint64_t expected_count, const void **data, uint64_t *count, smt_err *err);

/* The parameter block stored by smt_writer_set_params (size in *size). */
const void *smt_mapped_params(const smt_mapped *m, size_t *size);

/* Information for `info` commands. */
uint64_t smt_mapped_file_size(const smt_mapped *m);
uint32_t smt_mapped_kind_version(const smt_mapped *m);
unsigned smt_mapped_section_count(const smt_mapped *m);
/* Name, size and checksum of section i (< smt_mapped_section_count). */
void smt_mapped_section_info(const smt_mapped *m, unsigned i, const char **name, uint64_t *offset,
                             uint64_t *size, uint64_t *checksum);
const char *smt_mapped_path(const smt_mapped *m);

/* Unmaps and frees. Accepts NULL. */
void smt_mapped_close(smt_mapped *m);

/* The caller has copied [p, p + n) (inside m's sections) elsewhere: a mapped file's pages of that
 * range leave the process's resident memory (they are read in again if touched; the content never
 * changes). Nothing happens for a file read into memory (SMT_OPEN_READ). */
void smt_mapped_release(const smt_mapped *m, const void *p, uint64_t n);

#ifdef __cplusplus
}
#endif
#endif
