/* smt_sniff.h — what a file is, told by its first bytes (never by its name): the one place that
 * knows the magic numbers. smt_lines reads the compressed kinds; a model loader asks smt_file_kind
 * whether it was given a fastsmt binary (and of which kind), a KenLM binary, or text to build from.
 *
 * Kinds: a fastsmt container starts with "FSMT" and a 4-byte kind ("GLM1", "PPT1"; "-INC" while it
 * is being written: see smt_file.h); a KenLM binary with "mmap lm "; gzip, xz, bzip2 and zstd with
 * their own magics (bzip2: "BZh1".."BZh9" and the first block's or the empty stream's magic).
 * Anything else is text, whatever its bytes: the reader that parses it reports what is wrong. */
#ifndef SMT_SNIFF_H
#define SMT_SNIFF_H

#include <stddef.h>

#include "smt_error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum smt_kind {
    SMT_KIND_UNDECIDED = -1, /* smt_sniff only: too few bytes yet to tell a compressed input */
    SMT_KIND_TEXT = 0,
    SMT_KIND_GZIP,
    SMT_KIND_XZ,
    SMT_KIND_BZIP2,
    SMT_KIND_ZSTD,
    SMT_KIND_FASTSMT, /* a fastsmt container (complete or not, of any kind: see `sub`) */
    SMT_KIND_KENLM    /* a KenLM binary (lm/binary_format.cc) */
} smt_kind;

/* Bytes read at most to tell a kind. */
#define SMT_SNIFF_BYTES 16u

/* The kind of an input whose first n bytes are b (eof: there are no more). SMT_KIND_UNDECIDED only
 * while a compression magic is matched in part and more bytes may come, so a stream reader can wait
 * for them; the binary kinds need their whole magic, else the input is text. For SMT_KIND_FASTSMT,
 * sub (when not NULL, 5 bytes) gets the 4-byte kind after "FSMT", NUL-terminated ("" when the
 * input ends first); otherwise sub is "". */
smt_kind smt_sniff(const void *b, size_t n, int eof, char sub[5]);

/* The kind of the regular file at path (its first SMT_SNIFF_BYTES bytes; an empty file is text), or
 * SMT_ERR_IO naming the file when it cannot be opened or read, or is a directory. A fifo, device or
 * socket is not read (the bytes would be lost to the reader that follows): SMT_KIND_TEXT, and
 * smt_lines tells its compression as it reads. sub: as for smt_sniff. */
int smt_file_kind(const char *path, char sub[5], smt_err *err);

/* A short name of a kind for messages: "text", "gzip", "xz", "bzip2", "zstd", "fastsmt binary",
 * "KenLM binary". */
const char *smt_kind_name(smt_kind k);

#ifdef __cplusplus
}
#endif
#endif
