/* model_cache.c — text models binarized once: the .ppt / .glm that probingpt / glm build from a
 * text phrase table or ARPA file, kept in the folder dec_options.model_cache names (the tools':
 * $XDG_CACHE_HOME/fastsmt, default ~/.cache/fastsmt) so a second load maps it at once.
 *
 * An entry's name is a 128-bit hash of what it was built from: each input's absolute path, device,
 * inode, size and modification time (ns), the builder's kind and the decoder's build parameters
 * (DEC_CACHE_VERSION), after a hash of the paths alone. An edited input gets a new name, so a
 * stale entry is never found; building it removes the entries of the same paths' older versions
 * (one entry per set of inputs; entries of files that were deleted stay until the user clears
 * them). An entry is written by the component's writer (a
 * temporary name, fsync, rename: never half a file under the name) and opened with every checksum
 * verified; one that does not open is rebuilt. An input that changes during the build makes the
 * entry a temporary file. No cache folder: a temporary file (smt_temp_file), removed once mapped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dec_internal.h"
#include "smt_hash.h"
#include "smt_io.h"

/* Bump when what the decoder asks the builders for changes (options, defaults). */
#define DEC_CACHE_VERSION "fastsmt-model-cache 1"

char *dec_model_cache_dir(const char *fastsmt_cache, const char *xdg_cache_home, const char *home)
{
    if (fastsmt_cache && !strcmp(fastsmt_cache, "0"))
        return NULL;
    char *dir = NULL;
    int n;
    if (xdg_cache_home && xdg_cache_home[0] == '/') /* the XDG rule: a relative value is ignored */
        n = asprintf(&dir, "%s/fastsmt", xdg_cache_home);
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

/* What identifies the inputs: path, device, inode, size, mtime of each (into buf), and their paths
 * alone (into who, may be NULL). 0, or -1 when one cannot be read (the caller then builds without
 * the cache, and the builder reports the error). */
static int describe(const char *ext, const char *const *in, size_t n, char *buf, size_t size,
                    char *who, size_t who_size)
{
    size_t used = (size_t)snprintf(buf, size, "%s %s", DEC_CACHE_VERSION, ext), wused = 0;
    if (who)
        wused = (size_t)snprintf(who, who_size, "%s %s", DEC_CACHE_VERSION, ext);
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
        int w = who ? snprintf(who + wused, who_size - wused, "\n%s", abs) : 0;
        free(abs);
        if (k < 0 || (size_t)k >= size - used || w < 0 || (who && (size_t)w >= who_size - wused))
            return -1;
        used += (size_t)k;
        wused += (size_t)w;
    }
    return 0;
}

/* Removes the entries of dir built from the same input paths as `keep` (named "<paths hash>-...")
 * but from other versions of the files: one entry per set of inputs, so that editing a table does
 * not fill the cache. A process that has an old entry mapped keeps it. */
static void evict_others(const char *dir, const char *keep)
{
    const char *dash = strchr(keep, '-'), *dot = strrchr(keep, '.');
    if (!dash || !dot)
        return;
    DIR *d = opendir(dir);
    if (!d)
        return;
    size_t plen = (size_t)(dash - keep) + 1;
    for (struct dirent *e; (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        if (strcmp(e->d_name, keep) && len == strlen(keep) && !strncmp(e->d_name, keep, plen) &&
            !strcmp(e->d_name + len - strlen(dot), dot))
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

int dec_cached_load(void **obj, const char *ext, const char *const *in, size_t n_in,
                    dec_build_fn build, dec_open_fn open_fn, int verify, const char *cache_dir,
                    smt_err *err)
{
    *obj = NULL;
    char desc[3 * 4096 + 256], before[sizeof desc], who[sizeof desc];
    const char *dir = cache_dir && *cache_dir ? cache_dir : NULL;
    char *path = NULL;
    int cached = dir && describe(ext, in, n_in, before, sizeof before, who, sizeof who) == 0;
    if (cached) { /* <hash of the paths>-<128-bit hash of paths and versions>.ext */
        size_t len = strlen(before);
        uint64_t h0 = smt_hash_bytes_seed(who, strlen(who), 0x66736d74u);
        uint64_t h1 = smt_hash_bytes_seed(before, len, 0x66736d74u);
        uint64_t h2 = smt_hash_bytes_seed(before, len, 0x63616368u);
        cached = asprintf(&path, "%s/%016" PRIx64 "-%016" PRIx64 "%016" PRIx64 ".%s", dir, h0, h1,
                          h2, ext) > 0;
        if (!cached)
            path = NULL;
    }
    int rc;
    if (cached && access(path, F_OK) == 0) {
        smt_err e2;
        if (open_fn(obj, path, 1, &e2) == 0) { /* every checksum checked */
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
            int same = describe(ext, in, n_in, desc, sizeof desc, NULL, 0) == 0 &&
                       !strcmp(desc, before);
            rc = open_fn(obj, path, verify, err);
            if (rc || !same)
                unlink(path);
            else
                evict_others(dir, strrchr(path, '/') + 1);
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
    char tmp[4096], prefix[64];
    snprintf(prefix, sizeof prefix, "fastsmt-%s-", ext);
    if ((rc = smt_temp_file(prefix, tmp, sizeof tmp, err)))
        return rc;
    rc = build(in, tmp, err);
    if (!rc)
        rc = open_fn(obj, tmp, verify, err);
    unlink(tmp); /* an open model keeps its mapping */
    return rc;
}
