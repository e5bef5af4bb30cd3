// Q4_K's packed scales and mins unpacked with 128-bit shuffles, shared by the
// x86 kernel files (kernels_avx2_impl.h, kernels_avx512.cpp). Include only
// from files built with AVX2 or more; everything here has internal linkage,
// so each file keeps the copy compiled with its own instructions.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace cairn::tensor::kernels {
namespace {

// Q4_K's twelve scale bytes (the 16 bytes at `scales`, the last 4 ignored)
// as sc[0..7] (bytes 0-7) and m[0..7] (bytes 8-15): get_scale_min_k4 of the
// reference, vectorized (kernels_avx512.cpp's q4kScales4 does 4 rows at once).
// In a vector rather than written to memory: a 128-bit load over the scalar
// version's four 4-byte stores cannot take them by store-to-load forwarding.
inline __m128i q4kScales(const uint8_t* scales) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(scales));
    const __m128i a = _mm_shuffle_epi8(s, _mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11));
    const __m128i b = _mm_shuffle_epi8(s, _mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7));
    // (a & m1) | ((a >> 4) & m2) | ((b >> 2) & 0x30)
    const __m128i m1 = _mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0);
    const __m128i m2 = _mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15);
    const __m128i low = _mm_or_si128(_mm_and_si128(a, m1), _mm_and_si128(_mm_srli_epi16(a, 4), m2));
    return _mm_or_si128(low, _mm_and_si128(_mm_srli_epi16(b, 2), _mm_set1_epi8(0x30)));
}

}  // namespace
}  // namespace cairn::tensor::kernels
