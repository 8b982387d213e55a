/* Helpers shared by the libFuzzer harnesses: see fuzz_util.h. */
#define _GNU_SOURCE
#include "fuzz_util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "testutil.h"

#ifndef FASTSMT_FUZZ_TESTDATA
#define FASTSMT_FUZZ_TESTDATA "tests/data"
#endif

static char *g_dir;

static void remove_dir(void)
{
    tu_rmtree(g_dir);
    free(g_dir);
    g_dir = NULL;
}

void fz_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz harness: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

const char *fz_dir(void)
{
    if (!g_dir) {
        /* $TMPDIR, else /dev/shm (memory: a run writes its input at least once), else /tmp. */
        const char *base = getenv("TMPDIR");
        if (!base || !*base)
            base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        g_dir = tu_join(base, "fastsmt-fuzz-XXXXXX");
        if (!g_dir || !mkdtemp(g_dir))
            fz_fail("cannot create a temporary directory under %s", base);
        atexit(remove_dir);
    }
    return g_dir;
}

char *fz_path(const char *name)
{
    char *p = tu_join(fz_dir(), name);
    if (!p)
        fz_fail("out of memory");
    return p;
}

char *fz_write(const char *name, const void *data, size_t n)
{
    char *p = fz_path(name);
    if (tu_write_file(p, (const char *)data, n) != 0)
        fz_fail("cannot write %s", p);
    return p;
}

static char *data_path(const char *rel)
{
    const char *root = getenv("FASTSMT_TESTDATA");
    char *p = tu_join(root && *root ? root : FASTSMT_FUZZ_TESTDATA, rel);
    if (!p)
        fz_fail("out of memory");
    return p;
}

char *fz_read_data(const char *rel, size_t *len)
{
    char *src = data_path(rel);
    char *text = tu_read_file(src, len);
    if (!text)
        fz_fail("cannot read the fixture %s (set FASTSMT_TESTDATA to tests/data)", src);
    free(src);
    return text;
}

char *fz_copy_data(const char *rel, const char *name)
{
    size_t len = 0;
    char *text = fz_read_data(rel, &len);
    char *p = fz_write(name, text, len);
    free(text);
    return p;
}

size_t fz_split(const uint8_t *data, size_t size, const uint8_t **part, size_t *len, size_t max)
{
    static const char sep[] = "#==#";
    size_t n = 0, start = 0, pos = 0;
    while (pos <= size) {
        /* pos is at the start of a line */
        const uint8_t *nl = pos < size ? memchr(data + pos, '\n', size - pos) : NULL;
        size_t end = nl ? (size_t)(nl - data) : size;
        size_t line_len = end - pos;
        if (line_len == 4 && memcmp(data + pos, sep, 4) == 0) {
            if (n < max) {
                part[n] = data + start;
                len[n] = pos - start;
            }
            n++;
            start = nl ? end + 1 : size;
        }
        if (!nl)
            break;
        pos = end + 1;
    }
    if (n < max) {
        part[n] = data + start;
        len[n] = size - start;
    }
    return n + 1;
}

char *fz_strndup(const uint8_t *data, size_t n)
{
    char *s = malloc(n + 1);
    if (!s)
        fz_fail("out of memory");
    if (n)
        memcpy(s, data, n);
    s[n] = 0;
    return s;
}

/* The container's layout (common/smt_file.c), restated for the harnesses. */
enum {
    HDR_SIZE = 512,
    HDR_N_SECTIONS = 24,
    HDR_FILE_SIZE = 32,
    HDR_CHECKSUM = 64,
    ENTRY_SIZE = 48,
    ENTRY_OFFSET = 24,
    ENTRY_SIZE_FIELD = 32,
    ENTRY_CHECKSUM = 40,
    MAX_SECTIONS = 64
};

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

void fz_fix_container(uint8_t *buf, size_t n)
{
    if (n < HDR_SIZE)
        return;
    put64(buf + HDR_FILE_SIZE, (uint64_t)n);
    uint32_t ns;
    memcpy(&ns, buf + HDR_N_SECTIONS, 4);
    if (ns > MAX_SECTIONS || HDR_SIZE + (size_t)ns * ENTRY_SIZE > n)
        return;
    for (uint32_t i = 0; i < ns; i++) {
        uint8_t *e = buf + HDR_SIZE + (size_t)i * ENTRY_SIZE;
        uint64_t off = get64(e + ENTRY_OFFSET), sz = get64(e + ENTRY_SIZE_FIELD);
        if (off <= n && sz <= n - off)
            put64(e + ENTRY_CHECKSUM, XXH3_64bits(buf + off, (size_t)sz));
    }
    put64(buf + HDR_CHECKSUM, 0);
    XXH3_state_t st;
    XXH3_64bits_reset(&st);
    XXH3_64bits_update(&st, buf, HDR_SIZE);
    XXH3_64bits_update(&st, buf + HDR_SIZE, (size_t)ns * ENTRY_SIZE);
    put64(buf + HDR_CHECKSUM, XXH3_64bits_digest(&st));
}

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

size_t fz_container_mutate(uint8_t *data, size_t size, size_t max_size, unsigned seed)
{
    uint32_t ns = 0;
    if (size >= HDR_SIZE)
        memcpy(&ns, data + HDR_N_SECTIONS, 4);
    if (size < HDR_SIZE || seed % 16 == 0 || ns == 0 || ns > MAX_SECTIONS ||
        HDR_SIZE + (size_t)ns * ENTRY_SIZE > size)
        return LLVMFuzzerMutate(data, size, max_size);
    uint32_t pick = (seed / 16) % (ns + 1);
    size_t off = 0, len = HDR_SIZE + (size_t)ns * ENTRY_SIZE;
    if (pick < ns) {
        const uint8_t *e = data + HDR_SIZE + (size_t)pick * ENTRY_SIZE;
        uint64_t o = get64(e + ENTRY_OFFSET), sz = get64(e + ENTRY_SIZE_FIELD);
        if (sz == 0 || o > size || sz > size - o)
            return LLVMFuzzerMutate(data, size, max_size);
        off = (size_t)o;
        len = (size_t)sz;
    }
    (void)LLVMFuzzerMutate(data + off, len, len); /* a shrink leaves the old tail: same size */
    return size;
}

FILE *fz_devnull(void)
{
    FILE *f = fopen("/dev/null", "w");
    if (!f)
        fz_fail("cannot open /dev/null");
    return f;
}
