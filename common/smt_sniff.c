/* smt_sniff.c — the magic numbers of every input kind, in one table. */
#define _POSIX_C_SOURCE 200809L /* O_CLOEXEC */
#include "smt_sniff.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smt_file.h"

/* 1: b[0..n) starts with pat[0..len) ('?' in pat: any digit 1-9); 0: it cannot; -1: n is too short
 * to tell and what there is matches. */
static int magic_match(const unsigned char *b, size_t n, const char *pat, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (i == n)
            return -1;
        unsigned char p = (unsigned char)pat[i];
        if (p == '?' ? !(b[i] >= '1' && b[i] <= '9') : b[i] != p)
            return 0;
    }
    return 1;
}

static const struct {
    const char *magic;
    size_t len;
    smt_kind kind;
    int stream; /* a compression a stream reader must know before decoding: worth waiting for */
} magics[] = {
    {"\x1f\x8b", 2, SMT_KIND_GZIP, 1},
    {"\xfd" "7zXZ\0", 6, SMT_KIND_XZ, 1},
    {"\x28\xb5\x2f\xfd", 4, SMT_KIND_ZSTD, 1},
    {"BZh?\x31\x41\x59\x26\x53\x59", 10, SMT_KIND_BZIP2, 1}, /* first block */
    {"BZh?\x17\x72\x45\x38\x50\x90", 10, SMT_KIND_BZIP2, 1}, /* empty stream */
    {SMT_FILE_MAGIC_PREFIX, 4, SMT_KIND_FASTSMT, 0},
    {"mmap lm ", 8, SMT_KIND_KENLM, 0},
};
_Static_assert(sizeof SMT_FILE_MAGIC_PREFIX - 1 == 4, "the container's magic is 4 bytes + kind");

smt_kind smt_sniff(const void *bytes, size_t n, int eof, char sub[5])
{
    const unsigned char *b = bytes;
    if (sub)
        sub[0] = '\0';
    int undecided = 0;
    for (size_t i = 0; i < sizeof magics / sizeof magics[0]; i++) {
        int m = magic_match(b, n, magics[i].magic, magics[i].len);
        if (m == 1) {
            if (magics[i].kind == SMT_KIND_FASTSMT && sub) {
                size_t k = n - 4 < 4 ? n - 4 : 4;
                memcpy(sub, b + 4, k);
                sub[k] = '\0';
            }
            return magics[i].kind;
        }
        if (m == -1 && !eof && magics[i].stream)
            undecided = 1;
    }
    return undecided ? SMT_KIND_UNDECIDED : SMT_KIND_TEXT;
}

int smt_file_kind(const char *path, char sub[5], smt_err *err)
{
    if (sub)
        sub[0] = '\0';
    int fd; /* O_NONBLOCK: opening a fifo without a writer must not wait */
    do
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s", path);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s", path);
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return smt_err_set(err, SMT_ERR_IO, "%s: a directory, not a file", path);
    }
    if (!S_ISREG(st.st_mode)) { /* reading would take bytes its reader needs */
        close(fd);
        return SMT_KIND_TEXT;
    }
    unsigned char b[SMT_SNIFF_BYTES];
    size_t n = 0;
    while (n < sizeof b) {
        ssize_t got = read(fd, b + n, sizeof b - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            return smt_err_errno(err, SMT_ERR_IO, e, "%s", path);
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    close(fd);
    return (int)smt_sniff(b, n, 1, sub);
}

const char *smt_kind_name(smt_kind k)
{
    switch (k) {
    case SMT_KIND_GZIP: return "gzip";
    case SMT_KIND_XZ: return "xz";
    case SMT_KIND_BZIP2: return "bzip2";
    case SMT_KIND_ZSTD: return "zstd";
    case SMT_KIND_FASTSMT: return "fastsmt binary";
    case SMT_KIND_KENLM: return "KenLM binary";
    case SMT_KIND_TEXT: return "text";
    case SMT_KIND_UNDECIDED: break;
    }
    return "?";
}
