// CRC-32 (zlib's polynomial) by carry-less multiplication, for the long runs of bytes a whole store is: a
// few times faster than zlib's table-driven crc32, which bounded how fast a new device could take a store.
//
// The method is Intel's "Fast CRC Computation for Generic Polynomials Using PCLMULQDQ" (Gopal et al., 2009):
// fold 64 bytes at a time into four 128-bit accumulators, fold those into one, then reduce it to 32 bits
// (Barrett). The constants are powers of x modulo the bit-reflected polynomial 0x1DB710641, as the paper
// derives them. Header-only, so that Swift's importer compiles it where zlib's shim is used.
#ifndef FOLDERSYNC_CRC32_FOLDED_H
#define FOLDERSYNC_CRC32_FOLDED_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

__attribute__((target("pclmul,sse4.1")))
static inline __m128i foldersync_crc_fold(__m128i accumulator, __m128i constants, __m128i data) {
    return _mm_xor_si128(_mm_xor_si128(_mm_clmulepi64_si128(accumulator, constants, 0x00),
                                       _mm_clmulepi64_si128(accumulator, constants, 0x11)), data);
}

/// The raw (not inverted) CRC state after `length` bytes (at least 64, a multiple of 16) from state `state`.
__attribute__((target("pclmul,sse4.1")))
static inline uint32_t foldersync_crc32_fold_blocks(uint32_t state, const unsigned char *bytes, size_t length) {
    const __m128i by4 = _mm_set_epi64x(0x1c6e41596LL, 0x154442bd4LL);   // x^(4*128+32), x^(4*128-32) mod P
    const __m128i by1 = _mm_set_epi64x(0x0ccaa009eLL, 0x1751997d0LL);   // x^(128+32), x^(128-32) mod P
    const __m128i to32 = _mm_set_epi64x(0, 0x163cd6124LL);              // x^64 mod P
    const __m128i barrett = _mm_set_epi64x(0x1f7011641LL, 0x1db710641LL); // floor(x^64 / P), P
    const __m128i low32 = _mm_set_epi32(0, 0, 0, -1);
    const __m128i *block = (const __m128i *)bytes;
    __m128i a0 = _mm_xor_si128(_mm_loadu_si128(block), _mm_cvtsi32_si128((int)state));
    __m128i a1 = _mm_loadu_si128(block + 1), a2 = _mm_loadu_si128(block + 2), a3 = _mm_loadu_si128(block + 3);
    block += 4;
    length -= 64;
    for (; length >= 64; length -= 64, block += 4) {
        a0 = foldersync_crc_fold(a0, by4, _mm_loadu_si128(block));
        a1 = foldersync_crc_fold(a1, by4, _mm_loadu_si128(block + 1));
        a2 = foldersync_crc_fold(a2, by4, _mm_loadu_si128(block + 2));
        a3 = foldersync_crc_fold(a3, by4, _mm_loadu_si128(block + 3));
    }
    __m128i a = foldersync_crc_fold(foldersync_crc_fold(foldersync_crc_fold(a0, by1, a1), by1, a2), by1, a3);
    for (; length >= 16; length -= 16, block += 1) a = foldersync_crc_fold(a, by1, _mm_loadu_si128(block));
    // 128 bits to 64, 64 to 32, then the Barrett reduction to the remainder.
    a = _mm_xor_si128(_mm_clmulepi64_si128(a, by1, 0x10), _mm_srli_si128(a, 8));
    a = _mm_xor_si128(_mm_srli_si128(a, 4), _mm_clmulepi64_si128(_mm_and_si128(a, low32), to32, 0x00));
    __m128i t = _mm_clmulepi64_si128(_mm_and_si128(a, low32), barrett, 0x10);
    t = _mm_clmulepi64_si128(_mm_and_si128(t, low32), barrett, 0x00);
    return (uint32_t)_mm_extract_epi32(_mm_xor_si128(a, t), 1);
}

static inline int foldersync_crc32_can_fold(void) {
    static int known = -1;
    if (known < 0) {
        unsigned int a, b, c, d;
        known = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_PCLMUL) && (c & bit_SSE4_1);
    }
    return known;
}
#endif

/// zlib's `crc32(crc, bytes, length)`, the same value, folded by carry-less multiplication where the CPU can.
static inline uint32_t foldersync_crc32(uint32_t crc, const unsigned char *bytes, size_t length) {
#if defined(__x86_64__)
    if (length >= 64 && foldersync_crc32_can_fold()) {
        size_t folded = length & ~(size_t)15;
        crc = ~foldersync_crc32_fold_blocks(~crc, bytes, folded);
        bytes += folded;
        length -= folded;
    }
#endif
    return (uint32_t)crc32_z(crc, bytes, length);
}

#endif
