#define _GNU_SOURCE
#include "testutil.h"
#include "smt_buf.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bzlib.h>
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>

char *tu_join(const char *dir, const char *name)
{
    char *p = NULL;
    if (asprintf(&p, "%s/%s", dir, name) < 0)
        return NULL;
    return p;
}

static int tu_env_on(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

char *tu_shared_path(const char *rel)
{
    const char *root = getenv("FASTSMT_SHARED");
    if (!root)
        root = getenv("FASTSMT_SHARED_DEFAULT");
    char *p = root && *root ? tu_join(root, rel) : NULL;
    if (p && access(p, R_OK) != 0) {
        free(p);
        p = NULL;
    }
    if (!p && tu_env_on("FASTSMT_REQUIRE_SHARED")) {
        fprintf(stderr, "FASTSMT_REQUIRE_SHARED is set but the shared file %s/%s is absent: "
                "failing instead of skipping\n", root && *root ? root : "<no shared folder>", rel);
        fflush(stderr);
        abort();
    }
    return p;
}

void tu_gpu_absent(const char *why)
{
    if (tu_env_on("FASTSMT_REQUIRE_GPU")) {
        fprintf(stderr, "FASTSMT_REQUIRE_GPU is set but %s: failing instead of skipping\n", why);
        fflush(stderr);
        abort();
    }
}

char *tu_data_path(const char *rel)
{
    const char *root = getenv("FASTSMT_TESTDATA");
    return tu_join(root ? root : "tests/data", rel);
}

char *tu_bin_path(const char *name)
{
    const char *root = getenv("FASTSMT_BIN");
    return tu_join(root ? root : "build/bin", name);
}

char *tu_tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    char *tmpl = tu_join(t && *t ? t : "/tmp", "fastsmt-test-XXXXXX");
    if (tmpl && !mkdtemp(tmpl)) {
        free(tmpl);
        return NULL;
    }
    return tmpl;
}

void tu_rmtree(const char *dir)
{
    if (!dir || !*dir)
        return;
    char *cmd = NULL;
    if (asprintf(&cmd, "rm -rf '%s'", dir) >= 0) {
        int rc = system(cmd);
        (void)rc;
    }
    free(cmd);
}

int tu_write_file(const char *path, const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(text, 1, len, f);
    return (fclose(f) == 0 && w == len) ? 0 : -1;
}

char *tu_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    smt_buf b = {0};
    int bad = 0;
    for (;;) {
        if (smt_buf_reserve(&b, 1 << 16)) {
            bad = 1;
            break;
        }
        size_t r = fread(b.data + b.len, 1, b.cap - b.len - 1, f); /* the last byte: the NUL's */
        if (r == 0)
            break;
        b.len += r;
    }
    bad |= ferror(f);
    fclose(f);
    if (bad) {
        smt_buf_free(&b);
        return NULL;
    }
    b.data[b.len] = '\0';
    if (len)
        *len = b.len;
    return b.data;
}

int tu_copy_file(const char *src, const char *dst)
{
    size_t n;
    char *b = tu_read_file(src, &n);
    if (!b)
        return -1;
    int rc = tu_write_file(dst, b, n);
    free(b);
    return rc;
}

int tu_truncate(const char *path, uint64_t size) { return truncate(path, (off_t)size); }

int tu_flip_bit(const char *path, uint64_t offset, int bit)
{
    int fd = open(path, O_RDWR);
    if (fd < 0)
        return -1;
    unsigned char c;
    int rc = -1;
    if (pread(fd, &c, 1, (off_t)offset) == 1) {
        c ^= (unsigned char)(1u << bit);
        if (pwrite(fd, &c, 1, (off_t)offset) == 1)
            rc = 0;
    }
    close(fd);
    return rc;
}

long long tu_file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long long)st.st_size : -1;
}

int tu_run(const char *cmd, char **out, char **err)
{
    char *dir = tu_tmpdir();
    if (!dir)
        return -1;
    char *o = tu_join(dir, "out"), *e = tu_join(dir, "err"), *full = NULL;
    int status = -1;
    if (asprintf(&full, "(%s) >'%s' 2>'%s'", cmd, o, e) >= 0) {
        int rc = system(full);
        if (rc != -1 && WIFEXITED(rc))
            status = WEXITSTATUS(rc);
    }
    if (out)
        *out = tu_read_file(o, NULL);
    if (err)
        *err = tu_read_file(e, NULL);
    free(full);
    free(o);
    free(e);
    tu_rmtree(dir);
    free(dir);
    return status;
}

int tu_runf(char **out, char **err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *cmd = NULL;
    int n = vasprintf(&cmd, fmt, ap);
    va_end(ap);
    int rc = n < 0 ? -1 : tu_run(cmd, out, err);
    if (n >= 0)
        free(cmd);
    if (out && (n < 0 || !*out))
        *out = strdup("");
    if (err && (n < 0 || !*err))
        *err = strdup("");
    return rc;
}

int tu_proc_start(tu_proc *p, char *const argv[])
{
    int to[2], from[2];
    if (pipe(to) != 0)
        return -1;
    if (pipe(from) != 0) {
        close(to[0]), close(to[1]);
        return -1;
    }
    pid_t pid = fork();
    if (pid < 0) {
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        return -1;
    }
    if (pid == 0) {
        dup2(to[0], 0);
        dup2(from[1], 1);
        close(to[0]), close(to[1]), close(from[0]), close(from[1]);
        execv(argv[0], argv);
        _exit(127);
    }
    close(to[0]), close(from[1]);
    p->pid = pid;
    p->to = to[1];
    p->from = from[0];
    return 0;
}

int tu_proc_ask(tu_proc *p, const char *line, char *buf, size_t size, int timeout_ms)
{
    size_t len = strlen(line), n = 0;
    if (size == 0 || write(p->to, line, len) != (ssize_t)len)
        return -1;
    buf[0] = '\0';
    while (!memchr(buf, '\n', n)) {
        struct pollfd pf = {.fd = p->from, .events = POLLIN};
        if (n + 1 >= size || poll(&pf, 1, timeout_ms) != 1)
            return -1;
        ssize_t r = read(p->from, buf + n, size - 1 - n);
        if (r <= 0)
            return -1;
        n += (size_t)r;
        buf[n] = '\0';
    }
    return 0;
}

int tu_proc_finish(tu_proc *p)
{
    close(p->to);
    int status, rc = -1;
    if (waitpid(p->pid, &status, 0) == p->pid && WIFEXITED(status))
        rc = WEXITSTATUS(status);
    close(p->from);
    return rc;
}

char *tu_compress(const char *ext, const void *text, size_t len, size_t *out_len)
{
    size_t cap = len + len / 50 + 4096;
    char *out = malloc(cap);
    int ok = 0;
    if (!out)
        return NULL;
    if (!strcmp(ext, "gz")) {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
            z.next_in = (Bytef *)text;
            z.avail_in = (uInt)len;
            z.next_out = (Bytef *)out;
            z.avail_out = (uInt)cap;
            ok = deflate(&z, Z_FINISH) == Z_STREAM_END;
            *out_len = z.total_out;
            deflateEnd(&z);
        }
    } else if (!strcmp(ext, "xz")) {
        size_t pos = 0;
        ok = lzma_easy_buffer_encode(1, LZMA_CHECK_CRC64, NULL, (const uint8_t *)text, len,
                                     (uint8_t *)out, &pos, cap) == LZMA_OK;
        *out_len = pos;
    } else if (!strcmp(ext, "bz2")) {
        unsigned n = (unsigned)cap;
        ok = BZ2_bzBuffToBuffCompress(out, &n, (char *)text, (unsigned)len, 1, 0, 0) == BZ_OK;
        *out_len = n;
    } else if (!strcmp(ext, "zst")) {
        ZSTD_CCtx *c = ZSTD_createCCtx();
        if (c && !ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1))) {
            size_t n = ZSTD_compress2(c, out, cap, text, len);
            ok = !ZSTD_isError(n);
            *out_len = n;
        }
        ZSTD_freeCCtx(c);
    }
    if (!ok) {
        free(out);
        return NULL;
    }
    return out;
}

int tu_compress_file(const char *src, const char *ext)
{
    size_t len, n;
    char *text = tu_read_file(src, &len), *z = text ? tu_compress(ext, text, len, &n) : NULL;
    char *dst = NULL;
    int rc = -1;
    if (z && (dst = malloc(strlen(src) + strlen(ext) + 2))) {
        sprintf(dst, "%s.%s", src, ext);
        rc = tu_write_file(dst, z, n) == 0 && unlink(src) == 0 ? 0 : -1;
    }
    free(text), free(z), free(dst);
    return rc;
}
