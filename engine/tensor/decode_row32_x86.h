// Decoding rows of the 32-element formats for the GEMMs, shared by the x86
// kernel files (kernels_avx2_impl.h, kernels_avx512.cpp). Include only from
// files built with AVX2 and F16C or more; everything here has internal
// linkage, so each file keeps the copy compiled with its own instructions.
#pragma once

#include "cairn/tensor_type.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace cairn::tensor::kernels {
namespace {

// One row's 32-element blocks as decodeBlock32 gives them (unsigned codes
// u[32 nb], d[nb], m[nb]), with SIMD: the GEMM decodes each block once per
// call, so for short prompts the scalar decode was a large part of it.
// `bench-kernels --rows 2048 --cols 2048 -p 8 -t 1 -r 30 --decode-mib 1`,
// Intel Xeon family 6 model 207, GFLOP/s scalar / this: `--path avx2-file`
// Q4_0 55.0 / 78.2, Q8_0 43.4 / 56.5, Q5_0 21.4 / 73.3, Q4_1 49.6 / 74.5.
void decodeRow32(TensorType type, const uint8_t* row, int64_t nb, uint8_t* u, float* dw, float* mw) {
    const size_t bb = traits(type).blockBytes;
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    // Q5's 32 high bits: byte i of the vector takes qh byte i / 8, tests bit i % 8.
    const __m256i spread = _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3,
                                            3, 3, 3, 3, 3, 3, 3);
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    // Element i < 16 is the low nibble of qs[i], element 16 + i its high nibble.
    const auto nibbles = [&](const uint8_t* qs) {
        const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
        return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), low4);
    };
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = row + b * bb;
        uint16_t dh;
        std::memcpy(&dh, blk, 2);  // each of these formats' blocks starts with its d
        __m256i codes;
        float d = _cvtsh_ss(dh), m = 0.f;
        switch (type) {
        case TensorType::Q4_0: codes = nibbles(reinterpret_cast<const BlockQ4_0*>(blk)->qs); break;
        case TensorType::Q4_1:
            codes = nibbles(reinterpret_cast<const BlockQ4_1*>(blk)->qs);
            m = _cvtsh_ss(reinterpret_cast<const BlockQ4_1*>(blk)->m);
            break;
        case TensorType::Q5_0:
        case TensorType::Q5_1: {
            const bool q51 = type == TensorType::Q5_1;
            const uint8_t* qh = q51 ? reinterpret_cast<const BlockQ5_1*>(blk)->qh : reinterpret_cast<const BlockQ5_0*>(blk)->qh;
            const uint8_t* qs = q51 ? reinterpret_cast<const BlockQ5_1*>(blk)->qs : reinterpret_cast<const BlockQ5_0*>(blk)->qs;
            int32_t h;
            std::memcpy(&h, qh, 4);
            const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(h), spread);
            const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit);
            codes = _mm256_or_si256(nibbles(qs), _mm256_and_si256(set, _mm256_set1_epi8(0x10)));
            if (q51) m = _cvtsh_ss(reinterpret_cast<const BlockQ5_1*>(blk)->m);
            break;
        }
        case TensorType::Q8_0:
            codes = _mm256_xor_si256(
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ8_0*>(blk)->qs)),
                _mm256_set1_epi8(char(0x80)));
            break;
        default: {
            Decoded32 dec;
            decodeBlock32(type, blk, dec);
            codes = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dec.u));
            d = dec.d;
            m = dec.m;
            break;
        }
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 32 * b), codes);
        dw[b] = d;
        mw[b] = m;
    }
}

}  // namespace
}  // namespace cairn::tensor::kernels
