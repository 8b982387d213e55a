/* smt_hash.h — the hash every fastsmt structure uses: xxh3-64 (Debian's libxxhash, inlined). */
#ifndef SMT_HASH_H
#define SMT_HASH_H

#include <stddef.h>
#include <stdint.h>

#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

static inline uint64_t smt_hash_bytes(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

static inline uint64_t smt_hash_bytes_seed(const void *data, size_t len, uint64_t seed)
{
    return XXH3_64bits_withSeed(data, len, seed);
}

/* Cheap mixing of a 64-bit integer (murmur3 finalizer), for ids and n-gram keys. */
static inline uint64_t smt_hash_u64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

#endif
