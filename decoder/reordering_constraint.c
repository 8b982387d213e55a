/* reordering_constraint.c — Moses's ReorderingConstraint of a sentence: walls and zones (from
 * -monotone-at-punctuation and the XML markup), made before the search and checked by it. */
#include <stdint.h>
#include <string.h>

#include "dec_search.h"
#include "dec_xml.h"

/* Moses's ReorderingConstraint of the sentence: walls before and after punctuation
 * (-monotone-at-punctuation: , . ! ? : ; " not at the sentence's ends), the XML walls (those
 * past the sentence dropped) and zones; a wall inside a zone becomes a local wall of the innermost
 * zone holding it (FinalizeWalls, zones in the order they were closed). */
int dec_reordering_constraint(dec_search *s)
{
    const dec_xml *x = s->xml;
    size_t n = s->n;
    s->rc_on = 0;
    s->n_zones = 0;
    if (!s->out.monotone_punct && !(x && (x->n_walls || x->n_zones)))
        return 0;
    s->wall = arena_zalloc(&s->ar, n);
    s->local_wall = arena_alloc(&s->ar, n * sizeof *s->local_wall);
    if (!s->wall || !s->local_wall)
        return SMT_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        s->local_wall[i] = UINT32_MAX;
    for (size_t i = 0; s->out.monotone_punct && i < n; i++) {
        if (s->lens[i] != 1 || !s->tokens[i][0] || !strchr(",.!?:;\"", s->tokens[i][0]))
            continue;
        if (i > 0 && i + 1 < n)
            s->wall[i] = 1, s->rc_on = 1;
        if (i > 1)
            s->wall[i - 1] = 1, s->rc_on = 1;
    }
    if (!x)
        return 0;
    for (size_t k = 0; k < x->n_walls; k++)
        if (x->walls[k] < n)
            s->wall[x->walls[k]] = 1, s->rc_on = 1;
    s->zones = x->zones;
    s->n_zones = x->n_zones;
    if (x->n_zones)
        s->rc_on = 1;
    for (size_t z = 0; z < x->n_zones; z++) {
        size_t zs = x->zones[2 * z], ze = x->zones[2 * z + 1];
        for (size_t p = zs; p < ze; p++) { /* a wall after the zone's last word stays global */
            if (s->wall[p]) {
                s->local_wall[p] = (uint32_t)z;
                s->wall[p] = 0;
            } else if (s->local_wall[p] != UINT32_MAX) {
                size_t a = s->local_wall[p];
                if (x->zones[2 * a] < zs || x->zones[2 * a + 1] > ze)
                    s->local_wall[p] = (uint32_t)z;
            }
        }
    }
    return 0;
}

/* Moses's ReorderingConstraint::Check: may coverage c be extended by words [start, end]? Walls:
 * no word past a wall before the words up to it; zones: once a zone's first word is translated,
 * no phrase outside it until it is complete, and none that would need a jump beyond the
 * distortion limit dl (>= 0) to come back; local walls: inside a zone, none past a local wall
 * while a word before it is open. */
int dec_reordering_ok(const dec_search *s, const cov *c, size_t start, size_t end, int dl)
{
    size_t first = c->first_gap, last = SIZE_MAX; /* SIZE_MAX: Moses's NOT_FOUND */
    if (first != start)
        for (size_t p = first; p < end; p++)
            if (s->wall[p])
                return 0;
    for (size_t w = s->nw; w-- > 0;)
        if (c->bits[w]) {
            last = w * 64 + 63 - (size_t)__builtin_clzll(c->bits[w]);
            break;
        }
    if ((last == SIZE_MAX && start == 0) || (first > last && first == start))
        return 1; /* monotone */
    for (size_t z = 0; z < s->n_zones; z++) {
        size_t zs = s->zones[2 * z], ze = s->zones[2 * z + 1];
        int outside = end < zs || start > ze;
        if ((last < zs && outside) || first > ze)
            continue; /* not reached yet, or already complete */
        size_t done = 0;
        if (last >= zs)
            for (size_t p = zs; p <= ze; p++)
                done += covered(c->bits, p);
        if (done == ze - zs + 1)
            continue;
        if (outside) {
            if (done > 0)
                return 0; /* leaving an active zone */
            continue;
        }
        if (start != first && ze - first >= (size_t)dl)
            return 0; /* a dead end: the zone's end too far from the first gap */
        if (start <= zs)
            continue;
        if (end > ze) { /* past the zone's end: only if it completes the zone */
            if (ze - start + 1 < ze - zs + 1 - done)
                return 0;
            continue;
        }
        int open_before = 0;
        for (size_t p = zs; p < ze && p < end; p++) {
            if (!covered(c->bits, p) && p < start)
                open_before = 1;
            if (open_before && s->local_wall[p] == z)
                return 0;
        }
    }
    return 1;
}
