/* smt_io.c — output stream checks, whole-file reads and temporary files; see smt_io.h. */
#define _DEFAULT_SOURCE /* mkstemp */
#include "smt_io.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "smt_buf.h"

static int write_error(const char *name, int e, smt_err *err)
{
    return smt_err_errno(err, SMT_ERR_IO, e ? e : EIO, "%s: write error", name);
}

int smt_flush_output(FILE *f, const char *name, smt_err *err)
{
    errno = 0; /* an earlier failed write leaves only the error flag: its errno is long gone */
    if (fflush(f) != 0 || ferror(f))
        return write_error(name, errno, err);
    return 0;
}

int smt_close_output(FILE *f, const char *name, smt_err *err)
{
    int rc = smt_flush_output(f, name, err);
    errno = 0;
    if (fclose(f) != 0 && !rc)
        rc = write_error(name, errno, err);
    return rc;
}

int smt_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (!a || !b || !strcmp(a, "-") || !strcmp(b, "-") || stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int smt_read_file(const char *path, char **data, size_t *len, smt_err *err)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s", path);
    smt_buf buf = {0};
    size_t r;
    do {
        if (smt_buf_reserve(&buf, 65536)) {
            smt_buf_free(&buf);
            fclose(f);
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        }
        errno = 0;
        r = fread(buf.data + buf.len, 1, buf.cap - 1 - buf.len, f);
        buf.len += r;
        buf.data[buf.len] = '\0';
    } while (r > 0);
    int e = errno, bad = ferror(f);
    fclose(f);
    if (bad) {
        smt_buf_free(&buf);
        return smt_err_errno(err, SMT_ERR_IO, e ? e : EIO, "%s: read error", path);
    }
    *data = buf.data;
    *len = buf.len;
    return 0;
}

int smt_temp_file(const char *prefix, char *path, size_t cap, smt_err *err)
{
    const char *env = getenv("TMPDIR");
    const char *dirs[] = {env && *env ? env : NULL, "/tmp", "/var/tmp", "/dev/shm"};
    char tried[SMT_ERR_MSG_MAX] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (!dirs[i])
            continue;
        int n = snprintf(path, cap, "%s/%sXXXXXX", dirs[i], prefix);
        int e = ENAMETOOLONG;
        if (n >= 0 && (size_t)n < cap) {
            int fd = mkstemp(path);
            if (fd >= 0) {
                close(fd);
                return 0;
            }
            e = errno;
        }
        int w = snprintf(tried + used, sizeof tried - used, "%s%s%s: %s", used ? "; " : "",
                         i == 0 ? "$TMPDIR " : "", dirs[i], strerror(e));
        if (w > 0)
            used += (size_t)w < sizeof tried - used ? (size_t)w : sizeof tried - used - 1;
    }
    if (cap)
        path[0] = '\0';
    return smt_err_set(err, SMT_ERR_IO, "cannot create a temporary file (%s)", tried);
}

int smt_write_fd(int fd, const void *data, size_t n)
{
    for (const char *p = data, *end = p + n; p < end;) {
        size_t want = (size_t)(end - p) < (1u << 30) ? (size_t)(end - p) : (1u << 30);
        ssize_t k = write(fd, p, want);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return k < 0 ? errno : ENOSPC;
        p += k;
    }
    return 0;
}
