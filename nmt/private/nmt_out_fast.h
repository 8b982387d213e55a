/* nmt_out_fast.h — private: how the CPU backend's vectorized output layer is compiled. */
#ifndef NMT_OUT_FAST_H
#define NMT_OUT_FAST_H

/* NMT_CLONES: an AVX2 version and a default one of a hot function, chosen at load time by an ifunc
 * resolver (same arithmetic, no FMA contraction in ISO C, so results do not depend on the machine).
 * The resolver runs during relocation, before a sanitizer's runtime is initialised, and crashes
 * under ASan or TSan: sanitized builds get the single default version. */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__) &&                             \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define NMT_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define NMT_CLONES
#endif

#include <stdint.h>

#include "nmt.h"

/* nmt_out_topk_fast and nmt_out_gather_fast (declared in nmt.h) are defined with NMT_CLONES. */

#endif
