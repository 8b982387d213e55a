/* ppt_format.h — private: the payload layout shared by the builder and the reader (see probingpt.h). */
#ifndef PPT_FORMAT_H
#define PPT_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "probingpt.h"
#include "smt_hash.h"

#define PPT_GROUP_HEADER 3u  /* src_len, n_targets, group_words */
#define PPT_TARGET_HEADER 3u /* info, align_id, extra_id */
#define PPT_EMPTY UINT64_MAX
#define PPT_OFFSET_MASK ((1ull << PPT_SLOT_OFFSET_BITS) - 1)

static inline uint64_t ppt_slot_pack(uint64_t key, uint64_t off) { return (key >> PPT_SLOT_OFFSET_BITS) << PPT_SLOT_OFFSET_BITS | off; }
static inline uint64_t ppt_slot_offset(uint64_t slot) { return slot & PPT_OFFSET_MASK; }
static inline int ppt_slot_tag_is(uint64_t slot, uint64_t key) { return (slot >> PPT_SLOT_OFFSET_BITS) == (key >> PPT_SLOT_OFFSET_BITS); }

static inline uint32_t ppt_info_pack(uint32_t tgt_len, uint32_t n_counts, uint32_t n_fields)
{
    return tgt_len | n_counts << 8 | n_fields << 16;
}
static inline uint32_t ppt_info_tgt_len(uint32_t info) { return info & 0xffu; }
static inline uint32_t ppt_info_counts(uint32_t info) { return (info >> 8) & 0xffu; }
static inline uint32_t ppt_info_fields(uint32_t info) { return info >> 16; }

/* Words of a target record. */
static inline uint64_t ppt_record_words(uint32_t info, uint32_t ns, uint32_t nr)
{
    return PPT_TARGET_HEADER + (uint64_t)ppt_info_tgt_len(info) + ns + nr + ppt_info_counts(info);
}

/* The key of a source phrase: xxh3-64 of its ids (little-endian uint32s), masked. */
static inline uint64_t ppt_key(const uint32_t *ids, size_t n, uint64_t mask)
{
    return smt_hash_bytes(ids, n * sizeof *ids) & mask;
}

/* The home slot of a key: a multiply-shift range reduction, so any slot count works. */
static inline uint64_t ppt_home(uint64_t key, uint64_t n_slots)
{
    /* mix first: with a small hash_mask (tests) the key's high bits are zero */
    return (uint64_t)(((unsigned __int128)smt_hash_u64(key) * n_slots) >> 64);
}

#endif
