/* arena.c — the per-sentence bump allocator's slow path (a new or recycled chunk) and its reset.
 * The fast path is inline in private/dec_arena.h. */
#include <stdlib.h>

#include "dec_arena.h"

void *arena_alloc_slow(arena *a, size_t size)
{
    arena_chunk *c = a->head;
    {
        size_t want = size > ((size_t)1 << 20) ? size : ((size_t)1 << 20);
        arena_chunk **pp = &a->spare;
        while (*pp && (*pp)->size < want)
            pp = &(*pp)->next;
        if (*pp) {
            c = *pp;
            *pp = c->next;
        } else {
            c = malloc(sizeof *c + want);
            if (!c)
                return NULL;
            c->size = want;
        }
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

void arena_reset(arena *a)
{
    while (a->head) {
        arena_chunk *c = a->head;
        a->head = c->next;
        c->next = a->spare;
        a->spare = c;
    }
}

void arena_free(arena *a)
{
    arena_reset(a);
    while (a->spare) {
        arena_chunk *c = a->spare;
        a->spare = c->next;
        free(c);
    }
}
