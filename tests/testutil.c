#define _GNU_SOURCE
#include "testutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

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
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (n == cap) {
            cap *= 2;
            buf = realloc(buf, cap + 1);
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
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
