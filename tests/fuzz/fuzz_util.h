/* fuzz_util.h — helpers shared by the libFuzzer harnesses (tests/fuzz/README.md).
 *
 * Every harness process gets one private directory under $TMPDIR (else /dev/shm, else /tmp),
 * created on first use
 * and removed at exit; a harness writes its input there under fixed names, so nothing accumulates
 * between runs. Fixtures come from tests/data ($FASTSMT_TESTDATA, else the source tree's).
 * A failure of the harness itself (cannot write its temporary file) aborts: it is not a finding. */
#ifndef FUZZ_UTIL_H
#define FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The process's private directory. */
const char *fz_dir(void);

/* fz_dir() + "/" + name, malloc'ed. */
char *fz_path(const char *name);

/* Writes n bytes to fz_dir()/name and returns its path (malloc'ed). */
char *fz_write(const char *name, const void *data, size_t n);

/* Copies tests/data/rel to fz_dir()/name and returns its path (malloc'ed). */
char *fz_copy_data(const char *rel, const char *name);

/* Reads tests/data/rel into a malloc'ed NUL-terminated buffer (length in *len). */
char *fz_read_data(const char *rel, size_t *len);

/* Splits data on lines "#==#" (the separator of multi-part inputs, see
 * /work/shared/reference/fuzz-findings/README.md): fills at most max parts, returns how many
 * the input has (at least 1). The separator line and its newline belong to no part. */
size_t fz_split(const uint8_t *data, size_t size, const uint8_t **part, size_t *len, size_t max);

/* A NUL-terminated malloc'ed copy. */
char *fz_strndup(const uint8_t *data, size_t n);

/* Makes a fastsmt container (smt_file.h) consistent with its bytes wherever its header can be
 * read: the file size, every in-bounds section's checksum, and the header checksum. Mutations
 * then reach the structural checks behind the checksums instead of dying at them. */
void fz_fix_container(uint8_t *buf, size_t n);

/* A libFuzzer custom mutator for container files (.glm, .ppt): libFuzzer's own mutation, applied
 * to one region picked at random (the header with its section table, or one section, each as
 * likely), the file size unchanged; one call in 16 mutates the whole input as usual. Without it
 * almost every mutation lands in the 64 KiB vocabulary hash tables of a small model. */
size_t fz_container_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed);

/* /dev/null for writing (the caller closes it). */
FILE *fz_devnull(void);

/* Aborts with a message (a broken invariant: a finding). */
void fz_fail(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

#endif
