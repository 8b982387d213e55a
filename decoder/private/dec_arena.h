/* dec_arena.h — a per-sentence bump allocator (arena.c has the slow path): everything a sentence
 * allocates is released together, and its chunks are kept for the next sentence. */
#ifndef DEC_ARENA_H
#define DEC_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A per-sentence bump allocator: everything a sentence allocates dies together. */
typedef struct arena_chunk {
    struct arena_chunk *next;
    size_t size, used;
    max_align_t data[];
} arena_chunk;

typedef struct arena {
    arena_chunk *head;   /* current chunk */
    arena_chunk *spare;  /* chunks kept for the next sentence */
} arena;

void *arena_alloc_slow(arena *a, size_t size);

/* Bump allocation, 16-byte aligned; a new chunk only when the current one is full. */
static inline void *arena_alloc(arena *a, size_t size)
{
    size = (size + 15) & ~(size_t)15;
    arena_chunk *c = a->head;
    if (__builtin_expect(c != NULL && c->used + size <= c->size, 1)) {
        void *p = (char *)c->data + c->used;
        c->used += size;
        return p;
    }
    return arena_alloc_slow(a, size);
}
/* Zeroed arena memory. */
static inline void *arena_zalloc(arena *a, size_t size)
{
    void *p = arena_alloc(a, size);
    if (p)
        memset(p, 0, size);
    return p;
}
void arena_reset(arena *a);
void arena_free(arena *a);

/* Grows an arena-backed array that holds n elements of elem bytes in *cap slots (n == *cap): a copy
 * with twice the slots (initial slots when *cap is 0). Returns the new array and updates *cap, or
 * returns NULL (out of memory) leaving both as they were. */
static inline void *arena_grow(arena *a, const void *old, uint32_t n, uint32_t *cap, uint32_t initial,
                               size_t elem)
{
    uint32_t c = *cap ? *cap * 2 : initial;
    void *p = arena_alloc(a, (size_t)c * elem);
    if (!p)
        return NULL;
    if (n)
        memcpy(p, old, (size_t)n * elem);
    *cap = c;
    return p;
}

#endif
