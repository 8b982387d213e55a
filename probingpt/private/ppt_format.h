/* ppt_format.h — private: the payload layout shared by the builder and the reader (see probingpt.h). */
#ifndef PPT_FORMAT_H
#define PPT_FORMAT_H

#include <stdint.h>
#include <string.h>

#include "probingpt.h"
#include "smt_hash.h"

#define PPT_GROUP_HEADER 3u  /* src_len, n_targets, group_words */
#define PPT_TARGET_HEADER 2u /* info, align_id (then the extra id when it does not fit in info) */
#define PPT_EMPTY UINT64_MAX
#define PPT_OFFSET_MASK ((1ull << PPT_SLOT_OFFSET_BITS) - 1)
#define PPT_EXTRA_ESCAPE 0x1fffu /* info's 13-bit extra code: 0 none, id + 1, or this: id follows */

static inline uint64_t ppt_slot_pack(uint64_t key, uint64_t off) { return (key >> PPT_SLOT_OFFSET_BITS) << PPT_SLOT_OFFSET_BITS | off; }
static inline uint64_t ppt_slot_offset(uint64_t slot) { return slot & PPT_OFFSET_MASK; }
static inline int ppt_slot_tag_is(uint64_t slot, uint64_t key) { return (slot >> PPT_SLOT_OFFSET_BITS) == (key >> PPT_SLOT_OFFSET_BITS); }

/* info = tgt_len | n_counts << 8 | (n_fields - 3) << 16 | reordering << 18 | extra code << 19
 * (format version 2; version 1 had n_fields in 3 bits and no reordering bit). reordering: the pair
 * had an entry in the reordering table (else its reordering scores are the defaults). A few distinct
 * extra strings is the rule (Moses writes " |||" on every line), so the id usually costs no word. */
#define PPT_INFO_REORDERING (1u << 18)
static inline uint32_t ppt_extra_code(uint32_t n_fields, uint32_t extra_id)
{
    if (n_fields < 6)
        return 0;
    return extra_id + 1 < PPT_EXTRA_ESCAPE ? extra_id + 1 : PPT_EXTRA_ESCAPE;
}
/* n_fields: 3..6 */
static inline uint32_t ppt_info_pack(uint32_t tgt_len, uint32_t n_counts, uint32_t n_fields, uint32_t extra_id)
{
    return tgt_len | n_counts << 8 | (n_fields - 3) << 16 | ppt_extra_code(n_fields, extra_id) << 19;
}
static inline uint32_t ppt_info_tgt_len(uint32_t info) { return info & 0xffu; }
static inline uint32_t ppt_info_counts(uint32_t info) { return (info >> 8) & 0xffu; }
static inline uint32_t ppt_info_fields(uint32_t info) { return ((info >> 16) & 0x3u) + 3; }
static inline int ppt_info_has_reordering(uint32_t info) { return (info & PPT_INFO_REORDERING) != 0; }
static inline uint32_t ppt_info_extra(uint32_t info) { return info >> 19; }

/* Words before the target ids: 2, or 3 with an escaped extra id. */
static inline uint32_t ppt_record_head(uint32_t info)
{
    return PPT_TARGET_HEADER + (ppt_info_extra(info) == PPT_EXTRA_ESCAPE);
}

/* The extra id of a record (SMT_VOCAB_NONE for none). */
static inline uint32_t ppt_record_extra_id(const uint32_t *r)
{
    uint32_t c = ppt_info_extra(r[0]);
    return c == 0 ? UINT32_MAX : c == PPT_EXTRA_ESCAPE ? r[2] : c - 1;
}

/* Words of a target record. */
static inline uint64_t ppt_record_words(uint32_t info, uint32_t ns, uint32_t nr)
{
    return ppt_record_head(info) + (uint64_t)ppt_info_tgt_len(info) + ns + nr + ppt_info_counts(info);
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
