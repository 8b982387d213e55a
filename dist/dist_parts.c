/* dist_parts.c — the part files of a job over a plain file: names, checksums, assembly
 * (dist_core.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dist_core.h"
#include "smt_hash.h"

void dist_part_name(const dist *d, char *buf, size_t size, size_t chunk, int out, int tmp)
{
    if (tmp)
        snprintf(buf, size, "%s/.c%06zu.o%d.tmp%d", d->dir, chunk, out, d->rank);
    else
        snprintf(buf, size, "%s/c%06zu.o%d", d->dir, chunk, out);
}

int dist_hash_file(const char *path, uint64_t *size, uint64_t *hash, smt_err *err)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", path);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    static __thread char buf[1 << 16];
    uint64_t n = 0;
    ssize_t k;
    while ((k = read(fd, buf, sizeof buf)) > 0) {
        XXH3_64bits_update(&st, buf, (size_t)k);
        n += (uint64_t)k;
    }
    int e = errno;
    close(fd);
    if (k < 0)
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: read error", path);
    *size = n;
    *hash = XXH3_64bits_digest(&st);
    return 0;
}

int dist_copy_part(const char *part, uint64_t size, uint64_t hash, int fd, uint64_t off, FILE *f,
                   char **keep, smt_err *err)
{
    int in = open(part, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", part);
    char *buf = size < SIZE_MAX ? malloc(size ? (size_t)size : 1) : NULL;
    int rc = buf ? 0 : smt_err_set(err, SMT_ERR_NOMEM, "out of memory");
    uint64_t got = 0;
    while (!rc && got < size) {
        ssize_t k = pread(in, buf + got, (size_t)(size - got), (off_t)got);
        if (k < 0)
            rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: read error", part);
        else if (k == 0)
            rc = smt_err_set(err, SMT_ERR_CORRUPT,
                             "%s: %llu bytes, the manifest says %llu: the part is damaged; remove "
                             "its line from the manifest and resume to redo it",
                             part, (unsigned long long)got, (unsigned long long)size);
        else
            got += (uint64_t)k;
    }
    close(in);
    if (!rc && smt_hash_bytes(buf, (size_t)size) != hash)
        rc = smt_err_set(err, SMT_ERR_CORRUPT,
                         "%s: checksum differs from the manifest's: the part is damaged; remove "
                         "its line from the manifest and resume to redo it",
                         part);
    for (uint64_t w = 0; !rc && fd >= 0 && w < size;) {
        ssize_t k = pwrite(fd, buf + w, (size_t)(size - w), (off_t)(off + w));
        if (k <= 0)
            rc = smt_err_errno(err, SMT_ERR_IO, k < 0 ? errno : EIO, "write error");
        else
            w += (uint64_t)k;
    }
    if (!rc && f && size && fwrite(buf, 1, (size_t)size, f) != size)
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "<stdout>: write error");
    if (keep && !rc)
        *keep = buf;
    else
        free(buf);
    return rc;
}

void dist_parts_present(dist *d)
{
    for (size_t i = 0; i < d->n_chunks; i++) {
        dist_chunk *c = &d->chunks[i];
        for (int k = 0; k < d->job->n_out && c->done; k++) {
            char part[DIST_PATH_MAX + 64];
            struct stat st;
            dist_part_name(d, part, sizeof part, i, k, 0);
            if (stat(part, &st) || (uint64_t)st.st_size != c->size[k])
                c->done = 0; /* gone or another size: done again */
        }
    }
}

/* p past the digits at its start, or NULL when none is there. */
static const char *digits(const char *p)
{
    const char *q = p;
    while (*q >= '0' && *q <= '9')
        q++;
    return q > p ? q : NULL;
}

/* 1 when name is a part's temporary (dist_part_name with tmp): ".c<chunk>.o<out>.tmp<rank>" of any
 * chunk, output and rank. */
static int is_temporary(const char *name)
{
    const char *p = !strncmp(name, ".c", 2) ? digits(name + 2) : NULL;
    p = p && !strncmp(p, ".o", 2) ? digits(p + 2) : NULL;
    p = p && !strncmp(p, ".tmp", 4) ? digits(p + 4) : NULL;
    return p && !*p;
}

/* The temporaries a killed job's ranks left (a rank stopped while writing its part): the resumed
 * job rewrote every part under its own names, so these are nobody's. */
static void remove_temporaries(const dist *d)
{
    DIR *dir = opendir(d->dir);
    if (!dir)
        return;
    char path[DIST_PATH_MAX + 64];
    for (struct dirent *e; (e = readdir(dir));)
        if (is_temporary(e->d_name) &&
            snprintf(path, sizeof path, "%s/%s", d->dir, e->d_name) < (int)sizeof path)
            unlink(path);
    closedir(dir);
}

void dist_parts_remove(const dist *d)
{
    for (size_t i = 0; i < d->n_chunks; i++)
        for (int k = 0; k < d->job->n_out; k++) {
            char part[DIST_PATH_MAX + 64];
            dist_part_name(d, part, sizeof part, i, k, 0);
            unlink(part);
        }
    remove_temporaries(d);
    unlink(d->manifest);
    rmdir(d->dir); /* kept when something else is in it */
}
