/* model_cache.c — text models binarized once: the .ppt / .glm that probingpt / glm build from a
 * text phrase table or ARPA file, kept in $XDG_CACHE_HOME/fastsmt (default ~/.cache/fastsmt) so a
 * second load maps it at once.
 *
 * An entry's name is a 128-bit hash of what it was built from: each input's absolute path, device,
 * inode, size and modification time (ns), the builder's kind and the decoder's build parameters
 * (DEC_CACHE_VERSION). An edited input gets a new name, so a stale entry is never found; old
 * entries are left for the user to clear. An entry is written by the component's writer (a
 * temporary name, fsync, rename: never half a file under the name) and opened with every checksum
 * verified; one that does not open is rebuilt. An input that changes during the build makes the
 * entry a temporary file. FASTSMT_CACHE=0 turns the cache off (a temporary file in $TMPDIR, removed
 * once mapped). */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dec_internal.h"
#include "smt_hash.h"

/* Bump when what the decoder asks the builders for changes (options, defaults). */
#define DEC_CACHE_VERSION "fastsmt-model-cache 1"

/* The cache folder (malloc'ed), or NULL when the cache is off or there is no home. */
static char *cache_dir(void)
{
    const char *off = getenv("FASTSMT_CACHE");
    if (off && !strcmp(off, "0"))
        return NULL;
    const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    char *dir = NULL;
    int n;
    if (x && x[0] == '/') /* the XDG rule: a relative value is ignored */
        n = asprintf(&dir, "%s/fastsmt", x);
    else if (home && home[0] == '/')
        n = asprintf(&dir, "%s/.cache/fastsmt", home);
    else
        return NULL;
    return n < 0 ? NULL : dir;
}

/* mkdir -p of dir (0700 for what it creates); 0 or -1. */
static int make_dirs(const char *dir)
{
    char *p = strdup(dir);
    if (!p)
        return -1;
    for (char *s = p + 1;; s++) {
        if (*s == '/' || *s == '\0') {
            char c = *s;
            *s = '\0';
            if (mkdir(p, 0700) != 0 && errno != EEXIST) {
                free(p);
                return -1;
            }
            if (!(*s = c))
                break;
        }
    }
    free(p);
    struct stat st;
    return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

/* What identifies the inputs: path, device, inode, size, mtime of each. 0, or -1 when one cannot
 * be read (the caller then builds without the cache, and the builder reports the error). */
static int describe(const char *const *in, size_t n, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "%s", DEC_CACHE_VERSION);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char *abs = realpath(in[i], NULL);
        if (!abs || stat(abs, &st) != 0 || !S_ISREG(st.st_mode)) {
            free(abs);
            return -1;
        }
        int k = snprintf(buf + used, size - used,
                         "\n%s\n%" PRIu64 " %" PRIu64 " %" PRIu64 " %lld.%09ld", abs,
                         (uint64_t)st.st_dev, (uint64_t)st.st_ino, (uint64_t)st.st_size,
                         (long long)st.st_mtim.tv_sec, (long)st.st_mtim.tv_nsec);
        free(abs);
        if (k < 0 || (size_t)k >= size - used)
            return -1;
        used += (size_t)k;
    }
    return 0;
}

int dec_cached_load(void **obj, const char *ext, const char *const *in, size_t n_in,
                    dec_build_fn build, dec_open_fn open_fn, int verify, int *from_cache,
                    smt_err *err)
{
    *obj = NULL;
    if (from_cache)
        *from_cache = 0;
    char desc[3 * 4096 + 256], before[sizeof desc], *dir = cache_dir(), *path = NULL;
    int cached = dir && describe(in, n_in, before, sizeof before) == 0;
    if (cached) {
        size_t len = strlen(before);
        uint64_t h1 = smt_hash_bytes_seed(before, len, 0x66736d74u);
        uint64_t h2 = smt_hash_bytes_seed(before, len, 0x63616368u);
        cached = asprintf(&path, "%s/%016" PRIx64 "%016" PRIx64 ".%s", dir, h1, h2, ext) > 0;
        if (!cached)
            path = NULL;
    }
    free(dir);
    int rc;
    if (cached && access(path, F_OK) == 0) {
        smt_err e2;
        if (open_fn(obj, path, 1, &e2) == 0) { /* every checksum checked */
            if (from_cache)
                *from_cache = 1;
            free(path);
            return 0;
        }
        unlink(path); /* damaged or from another version: rebuilt below */
    }
    if (cached) {
        char *slash = strrchr(path, '/');
        *slash = '\0';
        cached = make_dirs(path) == 0 && access(path, W_OK) == 0;
        *slash = '/';
    }
    if (cached) {
        rc = build(in, path, err);
        if (rc == 0) {
            /* an input that changed while it was read: the entry must not outlive this load */
            int same = describe(in, n_in, desc, sizeof desc) == 0 && !strcmp(desc, before);
            rc = open_fn(obj, path, verify, err);
            if (rc || !same)
                unlink(path);
            free(path);
            return rc;
        }
        if (rc != SMT_ERR_IO) { /* the input is wrong: the same error without the cache */
            free(path);
            return rc;
        }
        /* the cache could not be written (a full disk...): a temporary file instead */
    }
    free(path);
    const char *tdir = getenv("TMPDIR");
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s/fastsmt-%s-XXXXXX", tdir && *tdir ? tdir : "/tmp", ext);
    if (n < 0 || (size_t)n >= sizeof tmp)
        return smt_err_set(err, SMT_ERR_IO, "$TMPDIR is too long for a temporary file name");
    int fd = mkstemp(tmp);
    if (fd < 0)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot create a temporary file", tmp);
    close(fd);
    rc = build(in, tmp, err);
    if (!rc)
        rc = open_fn(obj, tmp, verify, err);
    unlink(tmp); /* an open model keeps its mapping */
    return rc;
}
