/* The fastsmt binary container: see smt_file.h for the layout and the checks. */
#define _GNU_SOURCE
#include "smt_file.h"
#include "smt_io.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define WRITER_BUF (1u << 20) /* the stdio buffer of a writer */

#define BYTE_ORDER_MARK 0x01020304u
#define SANITY_U64 0x0123456789abcdefull
#define SANITY_DOUBLE (-1.0 / 3.0)
#define SANITY_FLOAT 0.1f
#define HEADER_SIZE 512u

typedef struct {
    char magic[8];
    uint32_t container_version;
    uint32_t kind_version;
    uint32_t byte_order;
    uint32_t header_size;
    uint32_t n_sections;
    uint32_t params_size;
    uint64_t file_size;
    double sanity_double;
    float sanity_float;
    uint8_t sizeof_ptr, sizeof_long, sizeof_float, sizeof_double;
    uint64_t sanity_u64;
    uint64_t header_checksum; /* xxh3 of the header (this field zero) and the used table entries */
    uint8_t reserved[184];
    uint8_t params[SMT_FILE_PARAMS_MAX];
} file_header;

typedef struct {
    char name[SMT_FILE_SECTION_NAME_MAX + 1];
    uint64_t offset;
    uint64_t size;
    uint64_t checksum;
} section_entry;

_Static_assert(sizeof(file_header) == HEADER_SIZE, "header layout");
_Static_assert(sizeof(section_entry) == 48, "section entry layout");

#define TABLE_BYTES (SMT_FILE_SECTIONS_MAX * sizeof(section_entry))
#define DATA_START (HEADER_SIZE + TABLE_BYTES)
_Static_assert(DATA_START % SMT_FILE_ALIGN == 0, "first section aligned");

static uint64_t header_checksum(const file_header *h, const section_entry *table)
{
    file_header copy = *h;
    copy.header_checksum = 0;
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, &copy, sizeof copy);
    XXH3_64bits_update(&st, table, (size_t)h->n_sections * sizeof(section_entry));
    return XXH3_64bits_digest(&st);
}

/* ------------------------------------------------------------------ writer */

struct smt_writer {
    FILE *f;
    char *path;
    char *tmp_path;
    char *iobuf;
    file_header header;
    section_entry table[SMT_FILE_SECTIONS_MAX];
    uint64_t pos;
    int in_section;
    int foreign; /* smt_writer_open_foreign: bytes verbatim, no container */
    XXH3_state_t hash;
};

static const char *file_type(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISFIFO(m) ? "a fifo"
           : S_ISCHR(m)  ? "a character device"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
                         : "not a regular file";
}

int smt_file_target(const char *path, char **target, smt_err *err)
{
    *target = NULL;
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT)
            return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot write", path);
        if (!(*target = strdup(path)))
            return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
        return 0;
    }
    if (S_ISLNK(st.st_mode)) {
        if (stat(path, &st) != 0)
            return smt_err_errno(err, SMT_ERR_IO, errno,
                                 "%s: a symbolic link to a missing file; not writing through it",
                                 path);
        if (!S_ISREG(st.st_mode))
            return smt_err_set(err, SMT_ERR_IO, "%s: a symbolic link to %s; refusing to replace it",
                               path, file_type(st.st_mode));
        if (!(*target = realpath(path, NULL)))
            return smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot resolve the symbolic link",
                                 path);
        return 0;
    }
    if (!S_ISREG(st.st_mode))
        return smt_err_set(err, SMT_ERR_IO, "%s: exists and is %s; refusing to replace it", path,
                           file_type(st.st_mode));
    if (!(*target = strdup(path)))
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    return 0;
}

int smt_file_sync_dir(const char *path, smt_err *err)
{
    char *copy = strdup(path);
    if (!copy)
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    int rc = 0;
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0 || (fsync(fd) != 0 && errno != EINVAL && errno != EROFS))
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot sync its folder", path);
    if (fd >= 0)
        close(fd);
    free(copy);
    return rc;
}

/* The temporary file for path (see smt_file_target), opened for writing; w->path, w->tmp_path. */
static int writer_create(smt_writer **out, const char *path, smt_err *err)
{
    *out = NULL;
    /* the file written: path, or the file a symbolic link at path names (written through, as cp
     * does); anything else that is not a regular file is refused, never replaced */
    char *target;
    int rc = smt_file_target(path, &target, err);
    if (rc)
        return rc;
    smt_writer *w = calloc(1, sizeof *w);
    size_t n = strlen(target);
    if (!w || !(w->path = malloc(n + 1)) || !(w->tmp_path = malloc(n + 32)) ||
        !(w->iobuf = malloc(WRITER_BUF))) {
        if (w) {
            free(w->path);
            free(w->tmp_path);
        }
        free(w);
        free(target);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    }
    memcpy(w->path, target, n + 1);
    free(target);
    snprintf(w->tmp_path, n + 32, "%s.tmp-%ld", w->path, (long)getpid());
    /* O_EXCL: a leftover temporary name (or a link planted there) is never followed */
    unlink(w->tmp_path);
    int fd = open(w->tmp_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    w->f = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!w->f) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(w->tmp_path);
        }
        free(w->iobuf);
        free(w->path);
        free(w->tmp_path);
        free(w);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: cannot create", path);
    }
    setvbuf(w->f, w->iobuf, _IOFBF, WRITER_BUF);
    *out = w;
    return 0;
}

int smt_writer_open_foreign(smt_writer **out, const char *path, smt_err *err)
{
    if (!path)
        return smt_err_set(err, SMT_ERR_ARG, "smt_writer_open_foreign: NULL argument");
    int rc = writer_create(out, path, err);
    if (!rc)
        (*out)->foreign = 1;
    return rc;
}

int smt_writer_open(smt_writer **out, const char *path, const char kind[4], uint32_t kind_version,
                    smt_err *err)
{
    *out = NULL;
    if (!path || !kind)
        return smt_err_set(err, SMT_ERR_ARG, "smt_writer_open: NULL argument");
    smt_writer *w;
    int rc = writer_create(&w, path, err);
    if (rc)
        return rc;
    file_header *h = &w->header;
    memcpy(h->magic, SMT_FILE_MAGIC_PREFIX, 4);
    memcpy(h->magic + 4, kind, 4);
    h->container_version = SMT_FILE_CONTAINER_VERSION;
    h->kind_version = kind_version;
    h->byte_order = BYTE_ORDER_MARK;
    h->header_size = HEADER_SIZE;
    h->sanity_double = SANITY_DOUBLE;
    h->sanity_float = SANITY_FLOAT;
    h->sizeof_ptr = (uint8_t)sizeof(void *);
    h->sizeof_long = (uint8_t)sizeof(long);
    h->sizeof_float = (uint8_t)sizeof(float);
    h->sizeof_double = (uint8_t)sizeof(double);
    h->sanity_u64 = SANITY_U64;

    /* Provisional header and empty table: the incomplete magic marks the file as unusable. */
    file_header provisional = *h;
    memcpy(provisional.magic, SMT_FILE_MAGIC_INCOMPLETE, 8);
    static const section_entry empty[SMT_FILE_SECTIONS_MAX];
    if (fwrite(&provisional, sizeof provisional, 1, w->f) != 1 ||
        fwrite(empty, sizeof empty, 1, w->f) != 1) {
        int e = errno;
        smt_writer_abort(w);
        return smt_err_errno(err, SMT_ERR_IO, e, "%s: write failed", path);
    }
    w->pos = DATA_START;
    *out = w;
    return 0;
}

int smt_writer_set_params(smt_writer *w, const void *params, size_t size, smt_err *err)
{
    if (w->foreign)
        return smt_err_set(err, SMT_ERR_ARG, "%s: a foreign file has no parameter block", w->path);
    if (size > SMT_FILE_PARAMS_MAX)
        return smt_err_set(err, SMT_ERR_ARG, "%s: parameter block of %zu bytes exceeds %u", w->path,
                           size, SMT_FILE_PARAMS_MAX);
    memset(w->header.params, 0, sizeof w->header.params);
    if (size)
        memcpy(w->header.params, params, size);
    w->header.params_size = (uint32_t)size;
    return 0;
}

/* A block of at least the buffer's size goes to the file from where it is, not through the
 * buffer (which a large table's writer would otherwise add to its peak memory). */
static int write_raw(smt_writer *w, const void *data, size_t size, smt_err *err)
{
    if (size >= WRITER_BUF) {
        if (fflush(w->f) != 0)
            return smt_err_errno(err, SMT_ERR_IO, errno, "%s: write failed", w->path);
        int e = smt_write_fd(fileno(w->f), data, size);
        if (e)
            return smt_err_errno(err, SMT_ERR_IO, e, "%s: write failed", w->path);
    } else if (size && fwrite(data, 1, size, w->f) != size) {
        return smt_err_errno(err, SMT_ERR_IO, errno, "%s: write failed", w->path);
    }
    w->pos += size;
    return 0;
}

int smt_writer_begin(smt_writer *w, const char *name, smt_err *err)
{
    file_header *h = &w->header;
    if (w->foreign)
        return smt_err_set(err, SMT_ERR_ARG, "%s: a foreign file has no sections", w->path);
    if (w->in_section)
        return smt_err_set(err, SMT_ERR_ARG, "%s: section '%s' begun inside another", w->path, name);
    if (strlen(name) > SMT_FILE_SECTION_NAME_MAX || !name[0])
        return smt_err_set(err, SMT_ERR_ARG, "%s: bad section name '%s'", w->path, name);
    if (h->n_sections >= SMT_FILE_SECTIONS_MAX)
        return smt_err_set(err, SMT_ERR_LIMIT, "%s: more than %u sections", w->path,
                           SMT_FILE_SECTIONS_MAX);
    for (uint32_t i = 0; i < h->n_sections; i++)
        if (strcmp(w->table[i].name, name) == 0)
            return smt_err_set(err, SMT_ERR_ARG, "%s: duplicate section '%s'", w->path, name);
    static const char zeros[SMT_FILE_ALIGN];
    size_t pad = (size_t)((SMT_FILE_ALIGN - w->pos % SMT_FILE_ALIGN) % SMT_FILE_ALIGN);
    int rc = write_raw(w, zeros, pad, err);
    if (rc)
        return rc;
    section_entry *s = &w->table[h->n_sections];
    memset(s, 0, sizeof *s);
    strcpy(s->name, name);
    s->offset = w->pos;
    XXH3_64bits_reset(&w->hash);
    w->in_section = 1;
    return 0;
}

int smt_writer_write(smt_writer *w, const void *data, size_t size, smt_err *err)
{
    if (w->foreign)
        return write_raw(w, data, size, err);
    if (!w->in_section)
        return smt_err_set(err, SMT_ERR_ARG, "%s: write outside a section", w->path);
    XXH3_64bits_update(&w->hash, data, size);
    return write_raw(w, data, size, err);
}

int smt_writer_end(smt_writer *w, smt_err *err)
{
    if (!w->in_section)
        return smt_err_set(err, SMT_ERR_ARG, "%s: end without a section", w->path);
    section_entry *s = &w->table[w->header.n_sections];
    s->size = w->pos - s->offset;
    s->checksum = XXH3_64bits_digest(&w->hash);
    w->header.n_sections++;
    w->in_section = 0;
    return 0;
}

int smt_writer_section(smt_writer *w, const char *name, const void *data, size_t size, smt_err *err)
{
    int rc = smt_writer_begin(w, name, err);
    if (!rc)
        rc = smt_writer_write(w, data, size, err);
    if (!rc)
        rc = smt_writer_end(w, err);
    return rc;
}

static void writer_free(smt_writer *w)
{
    free(w->path);
    free(w->tmp_path);
    free(w->iobuf);
    free(w);
}

int smt_writer_finish(smt_writer *w, smt_err *err)
{
    int rc = 0;
    if (w->in_section) {
        rc = smt_err_set(err, SMT_ERR_ARG, "%s: finish inside a section", w->path);
        smt_writer_abort(w);
        return rc;
    }
    file_header *h = &w->header;
    if (!w->foreign) { /* a container's header and table, rewritten at the start below */
        h->file_size = w->pos;
        h->header_checksum = header_checksum(h, w->table);
    }
    if (fflush(w->f) != 0 ||
        (!w->foreign && (fseek(w->f, 0, SEEK_SET) != 0 || fwrite(h, sizeof *h, 1, w->f) != 1 ||
                         fwrite(w->table, sizeof w->table, 1, w->f) != 1 || fflush(w->f) != 0)) ||
        fsync(fileno(w->f)) != 0) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: write failed", w->path);
        smt_writer_abort(w);
        return rc;
    }
    if (fclose(w->f) != 0) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: close failed", w->path);
        w->f = NULL;
        smt_writer_abort(w);
        return rc;
    }
    w->f = NULL;
    /* the output path may have become something else while the file was written */
    char *target = NULL;
    if ((rc = smt_file_target(w->path, &target, err)) == 0 && rename(w->tmp_path, w->path) != 0)
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot rename %s into place", w->path,
                           w->tmp_path);
    free(target);
    if (rc)
        unlink(w->tmp_path);
    else
        rc = smt_file_sync_dir(w->path, err); /* the rename itself reaches the disk */
    writer_free(w);
    return rc;
}

void smt_writer_abort(smt_writer *w)
{
    if (!w)
        return;
    if (w->f)
        fclose(w->f);
    unlink(w->tmp_path);
    writer_free(w);
}

/* ------------------------------------------------------------------ reader */

struct smt_mapped {
    char *path;
    uint8_t *base;
    uint64_t size;
    int mapped; /* 1: munmap, 0: free */
    const file_header *header;
    const section_entry *table;
};

static int validate(smt_mapped *m, const char kind[4], uint32_t kind_version, smt_err *err)
{
    const char *p = m->path;
    if (m->size < 8 || (memcmp(m->base, SMT_FILE_MAGIC_PREFIX, 4) != 0))
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: not a fastsmt file (bad magic)", p);
    if (memcmp(m->base, SMT_FILE_MAGIC_INCOMPLETE, 8) == 0)
        return smt_err_set(err, SMT_ERR_INCOMPLETE,
                           "%s: incomplete file (the build that wrote it did not finish)", p);
    if (m->size < DATA_START)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: truncated (%llu bytes, header needs %u)", p,
                           (unsigned long long)m->size, (unsigned)DATA_START);
    const file_header *h = (const file_header *)m->base;
    if (memcmp(h->magic + 4, kind, 4) != 0)
        return smt_err_set(err, SMT_ERR_FORMAT, "%s: a fastsmt '%.4s' file, expected '%.4s'", p,
                           h->magic + 4, kind);
    if (h->byte_order != BYTE_ORDER_MARK)
        return smt_err_set(err, SMT_ERR_FORMAT,
                           "%s: written on a machine of another byte order or damaged", p);
    if (h->container_version != SMT_FILE_CONTAINER_VERSION)
        return smt_err_set(err, SMT_ERR_VERSION, "%s: container version %u, this build reads %u", p,
                           h->container_version, SMT_FILE_CONTAINER_VERSION);
    if (h->kind_version != kind_version)
        return smt_err_set(err, SMT_ERR_VERSION, "%s: '%.4s' format version %u, this build reads %u",
                           p, kind, h->kind_version, kind_version);
    if (h->header_size != HEADER_SIZE || h->sanity_u64 != SANITY_U64 ||
        h->sanity_double != SANITY_DOUBLE || h->sanity_float != SANITY_FLOAT ||
        h->sizeof_ptr != sizeof(void *) || h->sizeof_long != sizeof(long) ||
        h->sizeof_float != sizeof(float) || h->sizeof_double != sizeof(double))
        return smt_err_set(err, SMT_ERR_FORMAT,
                           "%s: sanity block does not match this machine (foreign architecture "
                           "or damaged header)", p);
    if (h->n_sections > SMT_FILE_SECTIONS_MAX || h->params_size > SMT_FILE_PARAMS_MAX)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: corrupted header (section count %u)", p,
                           h->n_sections);
    if (h->header_checksum != header_checksum(h, (const section_entry *)(m->base + HEADER_SIZE)))
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: header checksum mismatch (file damaged)", p);
    if (h->file_size != m->size)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: truncated or extended: header says %llu "
                           "bytes, file has %llu", p, (unsigned long long)h->file_size,
                           (unsigned long long)m->size);
    const section_entry *t = (const section_entry *)(m->base + HEADER_SIZE);
    for (uint32_t i = 0; i < h->n_sections; i++) {
        if (memchr(t[i].name, 0, sizeof t[i].name) == NULL || t[i].offset % SMT_FILE_ALIGN ||
            t[i].offset < DATA_START || t[i].offset > m->size || t[i].size > m->size - t[i].offset)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: section %u out of bounds", p, i);
    }
    m->header = h;
    m->table = t;
    return 0;
}

int smt_mapped_open(smt_mapped **out, const char *path, const char kind[4], uint32_t kind_version,
                    unsigned flags, smt_err *err)
{
    *out = NULL;
    smt_mapped *m = calloc(1, sizeof *m);
    if (!m || !(m->path = strdup(path))) {
        free(m);
        return smt_err_set(err, SMT_ERR_NOMEM, "%s: out of memory", path);
    }
    int rc = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot open", path);
        goto fail;
    }
    if (fstat(fd, &st) != 0) {
        rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot stat", path);
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) {
        rc = smt_err_set(err, SMT_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    m->size = (uint64_t)st.st_size;
    if (m->size < 8) {
        rc = smt_err_set(err, SMT_ERR_FORMAT, "%s: not a fastsmt file (%llu bytes)", path,
                         (unsigned long long)m->size);
        goto fail;
    }
    if (flags & SMT_OPEN_READ) {
        size_t alloc = (size_t)((m->size + SMT_FILE_ALIGN - 1) / SMT_FILE_ALIGN * SMT_FILE_ALIGN);
        m->base = aligned_alloc(SMT_FILE_ALIGN, alloc);
        if (!m->base) {
            rc = smt_err_set(err, SMT_ERR_NOMEM, "%s: cannot allocate %zu bytes", path, alloc);
            goto fail;
        }
        uint64_t got = 0;
        while (got < m->size) {
            ssize_t r = pread(fd, m->base + got, (size_t)(m->size - got), (off_t)got);
            if (r <= 0) {
                rc = smt_err_errno(err, SMT_ERR_IO, r < 0 ? errno : EIO, "%s: read failed", path);
                goto fail;
            }
            got += (uint64_t)r;
        }
    } else {
        int mflags = MAP_SHARED;
#ifdef MAP_POPULATE
        if (flags & SMT_OPEN_POPULATE)
            mflags |= MAP_POPULATE;
#endif
        void *p = mmap(NULL, (size_t)m->size, PROT_READ, mflags, fd, 0);
        if (p == MAP_FAILED) {
            rc = smt_err_errno(err, SMT_ERR_IO, errno, "%s: cannot map", path);
            goto fail;
        }
        m->base = p;
        m->mapped = 1;
    }
    close(fd);
    fd = -1;
    rc = validate(m, kind, kind_version, err);
    if (!rc && (flags & SMT_OPEN_VERIFY))
        rc = smt_mapped_verify(m, err);
    if (rc)
        goto fail;
    *out = m;
    return 0;
fail:
    if (fd >= 0)
        close(fd);
    smt_mapped_close(m);
    return rc;
}

int smt_mapped_verify(const smt_mapped *m, smt_err *err)
{
    for (uint32_t i = 0; i < m->header->n_sections; i++) {
        const section_entry *s = &m->table[i];
        if (XXH3_64bits(m->base + s->offset, (size_t)s->size) != s->checksum)
            return smt_err_set(err, SMT_ERR_CORRUPT, "%s: section '%s' checksum mismatch "
                               "(file damaged)", m->path, s->name);
    }
    return 0;
}

const void *smt_mapped_section(const smt_mapped *m, const char *name, uint64_t *size)
{
    for (uint32_t i = 0; i < m->header->n_sections; i++)
        if (strcmp(m->table[i].name, name) == 0) {
            if (size)
                *size = m->table[i].size;
            return m->base + m->table[i].offset;
        }
    if (size)
        *size = 0;
    return NULL;
}

int smt_mapped_require(const smt_mapped *m, const char *name, size_t elem_size,
                       uint64_t expected_count, const void **data, uint64_t *count, smt_err *err)
{
    uint64_t size;
    const void *p = smt_mapped_section(m, name, &size);
    if (!p)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: missing section '%s'", m->path, name);
    if (elem_size == 0 || size % elem_size)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: section '%s' has %llu bytes, not a multiple "
                           "of %zu", m->path, name, (unsigned long long)size, elem_size);
    uint64_t n = size / elem_size;
    if (expected_count != UINT64_MAX && n != expected_count)
        return smt_err_set(err, SMT_ERR_CORRUPT, "%s: section '%s' has %llu entries, expected %llu",
                           m->path, name, (unsigned long long)n,
                           (unsigned long long)expected_count);
    *data = p;
    if (count)
        *count = n;
    return 0;
}

const void *smt_mapped_params(const smt_mapped *m, size_t *size)
{
    if (size)
        *size = m->header->params_size;
    return m->header->params;
}

uint64_t smt_mapped_file_size(const smt_mapped *m) { return m->size; }
uint32_t smt_mapped_kind_version(const smt_mapped *m) { return m->header->kind_version; }
unsigned smt_mapped_section_count(const smt_mapped *m) { return m->header->n_sections; }
const char *smt_mapped_path(const smt_mapped *m) { return m->path; }

void smt_mapped_section_info(const smt_mapped *m, unsigned i, const char **name, uint64_t *offset,
                             uint64_t *size, uint64_t *checksum)
{
    const section_entry *s = &m->table[i];
    if (name)
        *name = s->name;
    if (offset)
        *offset = s->offset;
    if (size)
        *size = s->size;
    if (checksum)
        *checksum = s->checksum;
}

void smt_mapped_release(const smt_mapped *m, const void *p, uint64_t n)
{
    if (!m || !m->mapped || !p || !n)
        return;
    const uint8_t *b = p, *e = b + n;
    if (b < m->base || e > m->base + m->size)
        return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t from = ((uintptr_t)b + page - 1) & ~(page - 1), to = (uintptr_t)e & ~(page - 1);
    if (to > from) /* whole pages only: a neighbour's bytes stay resident */
        madvise((void *)from, (size_t)(to - from), MADV_DONTNEED);
}

void smt_mapped_close(smt_mapped *m)
{
    if (!m)
        return;
    if (m->base) {
        if (m->mapped)
            munmap(m->base, (size_t)m->size);
        else
            free(m->base);
    }
    free(m->path);
    free(m);
}
