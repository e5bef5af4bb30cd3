// Float-weight loads and the lane reduction shared by the AVX-512 kernel
// files (kernels_avx512.cpp, float_gemm_avx512.cpp). Include only from files
// built with the AVX-512 flags; everything here has internal linkage.
#pragma once

#include "cairn/tensor_type.h"

#include <immintrin.h>

#include <cstdint>

namespace cairn::tensor::kernels {
namespace {

// 16 weights of a float row (F16, BF16 or F32) from column k, as f32.
inline __m512 loadFloats(TensorType type, const uint8_t* row, int64_t k) {
    switch (type) {
    case TensorType::F16: return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k)));
    case TensorType::BF16:
        return _mm512_castsi512_ps(_mm512_slli_epi32(
            _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * k))), 16));
    default: return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + k);
    }
}

inline __m512 loadFloatsMasked(TensorType type, const uint8_t* row, int64_t k, __mmask16 m) {
    switch (type) {
    case TensorType::F16: return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(m, row + 2 * k));
    case TensorType::BF16:
        return _mm512_castsi512_ps(
            _mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, row + 2 * k)), 16));
    default: return _mm512_maskz_loadu_ps(m, reinterpret_cast<const float*>(row) + k);
    }
}

// reduce16 of kernels_common.h, in registers.
inline float reduceLanes(__m512 v) {
    const __m256 s8 = _mm256_add_ps(_mm512_castps512_ps256(v), _mm512_extractf32x8_ps(v, 1));
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));  // [s4[0]+s4[2], s4[1]+s4[3]]
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

}  // namespace
}  // namespace cairn::tensor::kernels
