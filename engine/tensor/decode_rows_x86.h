// Decoding weight rows for the GEMMs (codes, scales, mins), shared by the x86
// kernel files (kernels_avx2_impl.h, kernels_avx512.cpp). Include only from
// files built with AVX2 and F16C or more; everything here has internal
// linkage, so each file keeps the copy compiled with its own instructions.
#pragma once

#include "cairn/tensor_type.h"
#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/q4k_scales_x86.h"
#include "tensor/row_tiles.h"

#include <immintrin.h>

#include <cstdint>
#include <cstring>

namespace cairn::tensor::kernels {
namespace {

// The 8x8 int32 transpose: v[j] lane i becomes out[i] lane j.
inline void transpose8x8(const __m256i (&v)[8], __m256i (&out)[8]) {
    __m256i a[8], b[8];
    for (int k = 0; k < 4; ++k) {
        a[2 * k] = _mm256_unpacklo_epi32(v[2 * k], v[2 * k + 1]);
        a[2 * k + 1] = _mm256_unpackhi_epi32(v[2 * k], v[2 * k + 1]);
    }
    for (int k = 0; k < 2; ++k)
        for (int h = 0; h < 2; ++h) {
            b[4 * k + h] = _mm256_unpacklo_epi64(a[4 * k + h], a[4 * k + 2 + h]);
            b[4 * k + 2 + h] = _mm256_unpackhi_epi64(a[4 * k + h], a[4 * k + 2 + h]);
        }
    // b[0], b[2], b[1], b[3] hold lane 0, 1, 2, 3 of v[0..3] in their low 128
    // bits and lane 4, 5, 6, 7 in their high ones; b[4..7] the same of v[4..7].
    for (int r = 0; r < 4; ++r) {
        const int m = r == 0 ? 0 : r == 1 ? 2 : r == 2 ? 1 : 3;
        out[r] = _mm256_permute2x128_si256(b[m], b[4 + m], 0x20);
        out[r + 4] = _mm256_permute2x128_si256(b[m], b[4 + m], 0x31);
    }
}

// A word tile's rows (Q4_K, Q6_K: row_tiles.h) back in the file layout
// (`rowBytes` apart), for the GEMM: per block column and half tile, 8 words
// of its 8 rows at a time by one 8x8 transpose, then the last 4 (both blocks
// are 8k + 4 whole words: Q4_K 36, Q6_K 52), then Q6_K's d. matmul's copy
// word by word (unpackRowTile) made llama-1b Q4_K's short prefills about 30 %
// slower than the file layout (`CAIRN_KERNELS=avx2`, pp8 31.9, 21.9 against
// 42.5, 35.1 t/s; on AVX-512 pp8 37-47 against 53-68). Intel Xeon family 6
// model 207.
void unpackWordTile(TensorType type, const uint8_t* tile, int64_t nb, size_t rowBytes, uint8_t* rows) {
    const bool q6 = type == TensorType::Q6_K;
    const size_t fileBlock = q6 ? sizeof(BlockQ6_K) : sizeof(BlockQ4_K);
    const int64_t tileBlock = int64_t(q6 ? kQ6_KTileBlock : kQ4_KTileBlock);
    const int words = int(fileBlock / 4), eights = words / 8;
    static_assert(sizeof(BlockQ4_K) / 4 % 8 == 4 && sizeof(BlockQ6_K) / 4 % 8 == 4);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* col = tile + b * tileBlock;
        uint8_t* out = rows + b * int64_t(fileBlock);
        for (int half = 0; half < 2; ++half) {
            uint8_t* rowsOut = out + size_t(8 * half) * rowBytes;
            __m256i v[8], row[8];
            for (int g = 0; g < eights; ++g) {
                for (int j = 0; j < 8; ++j)
                    v[j] = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(col + tileWordAt(8 * half, wordTileSlot(q6, 8 * g + j))));
                transpose8x8(v, row);
                for (int i = 0; i < 8; ++i)
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(rowsOut + size_t(i) * rowBytes + 32 * g), row[i]);
            }
            for (int j = 0; j < 8; ++j)
                v[j] = j < 4 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(
                                   col + tileWordAt(8 * half, wordTileSlot(q6, 8 * eights + j))))
                             : _mm256_setzero_si256();
            transpose8x8(v, row);
            for (int i = 0; i < 8; ++i)
                _mm_storeu_si128(reinterpret_cast<__m128i*>(rowsOut + size_t(i) * rowBytes + 32 * eights),
                                 _mm256_castsi256_si128(row[i]));
        }
        if (q6)
            for (int i = 0; i < 16; ++i) std::memcpy(out + size_t(i) * rowBytes + 4 * words, col + kQ6_KTileD + 2 * i, 2);
    }
}

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


// Q6_K's codes (0-63) of four quarters k from 32 bytes of ql of quarters 0
// and 2 (lA: low / high nibbles), of 1 and 3 (lB) and 32 of qh: code bits
// 4-5 are qh bits 2k, 2k + 1, each moved to bits 4-5 by one 16-bit shift
// (its spill into the neighbouring byte is masked off), then masked.
inline void q6kQuarterCodes(__m256i lA, __m256i lB, __m256i h, __m256i (&u)[4]) {
    const __m256i low4 = _mm256_set1_epi8(0x0F), bits45 = _mm256_set1_epi8(0x30);
    u[0] = _mm256_or_si256(_mm256_and_si256(lA, low4), _mm256_and_si256(_mm256_slli_epi16(h, 4), bits45));
    u[1] = _mm256_or_si256(_mm256_and_si256(lB, low4), _mm256_and_si256(_mm256_slli_epi16(h, 2), bits45));
    u[2] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lA, 4), low4), _mm256_and_si256(h, bits45));
    u[3] = _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi16(lB, 4), low4),
                           _mm256_and_si256(_mm256_srli_epi16(h, 2), bits45));
}

// One row's K-format super-blocks as decodeBlockK gives them (codes u[256 nb],
// the 16 sub-blocks' scales s and mins mn, d, dmin), Q4_K, Q5_K and Q6_K with
// SIMD, for the same reason: llama-1b Q4_K on `CAIRN_KERNELS=avx2`, where
// decodeBlockK took 21 % of pp8's perf samples (the GEMM tiles 35 %), t/s
// scalar / this: pp8 39.0 / 56.8, 48.4 / 60.3, 49.6 / 57.8, 48.5 / 60.2; pp64
// 84.2 / 96.9, 92.1 / 97.7, 92.0 / 89.0, 90.8 / 97.5; `bench-kernels --types
// Q5_K --rows 2048 --cols 2048 -p 8 -t 1 --path avx2`, GFLOP/s: 37.4 / 60.3,
// 37.8 / 85.9, 37.2 / 87.1.
void decodeRowK(TensorType type, const uint8_t* row, int64_t nb, uint8_t* u, int16_t* s, int16_t* mn, float* d,
                float* dmin) {
    const size_t bb = traits(type).blockBytes;
    if (type == TensorType::Q4_K || type == TensorType::Q5_K) {
        const __m256i low4 = _mm256_set1_epi8(0x0F), one = _mm256_set1_epi8(1);
        const __m128i pairs = _mm_setr_epi8(0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7);
        const bool q5 = type == TensorType::Q5_K;
        for (int64_t b = 0; b < nb; ++b) {
            // Q5_K has Q4_K's d, dmin and scales at the same offsets, its qh before its qs.
            const auto* blk = reinterpret_cast<const BlockQ4_K*>(row + b * bb);
            const auto* blk5 = reinterpret_cast<const BlockQ5_K*>(row + b * bb);
            const __m128i sm = q4kScales(blk->scales);  // sc 0-7, m 0-7
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + 16 * b), _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sm, pairs)));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(mn + 16 * b),
                                _mm256_cvtepu8_epi16(_mm_shuffle_epi8(_mm_srli_si128(sm, 8), pairs)));
            const uint8_t* qs = q5 ? blk5->qs : blk->qs;
            const __m256i qh = q5 ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk5->qh)) : _mm256_setzero_si256();
            for (int c = 0; c < 4; ++c) {
                // Elements 64c.. are the low nibbles of qs[32c..], 64c + 32.. the
                // high ones; Q5_K adds bit 2c, 2c + 1 of qh[l] as bit 4.
                const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
                __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                if (q5) {
                    lo = _mm256_or_si256(lo, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c), one), 4));
                    hi = _mm256_or_si256(hi, _mm256_slli_epi16(_mm256_and_si256(_mm256_srli_epi16(qh, 2 * c + 1), one), 4));
                }
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 256 * b + 64 * c), lo);
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 256 * b + 64 * c + 32), hi);
            }
            d[b] = _cvtsh_ss(blk->d);
            dmin[b] = _cvtsh_ss(blk->dmin);
        }
        return;
    }
    if (type == TensorType::Q6_K) {
        for (int64_t b = 0; b < nb; ++b) {
            const auto* blk = reinterpret_cast<const BlockQ6_K*>(row + b * bb);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + 16 * b),
                                _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales))));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(mn + 16 * b), _mm256_setzero_si256());
            for (int n = 0; n < 2; ++n) {
                __m256i q[4];  // quarter k: elements 128n + 32k..
                q6kQuarterCodes(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->ql + 64 * n)),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->ql + 64 * n + 32)),
                                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qh + 32 * n)), q);
                for (int k = 0; k < 4; ++k)
                    _mm256_storeu_si256(reinterpret_cast<__m256i*>(u + 256 * b + 128 * n + 32 * k), q[k]);
            }
            d[b] = _cvtsh_ss(blk->d);
            dmin[b] = 0.f;
        }
        return;
    }
    DecodedK dec;
    for (int64_t b = 0; b < nb; ++b) {
        decodeBlockK(type, row + b * bb, dec);
        std::memcpy(u + 256 * b, dec.u, 256);
        std::memcpy(s + 16 * b, dec.s, 32);
        std::memcpy(mn + 16 * b, dec.mn, 32);
        d[b] = dec.d;
        dmin[b] = dec.dmin;
    }
}

// Rows [rc, rc + nr) of a K-format matrix decoded for the GEMM (decodeRowK):
// row i's codes at u + i * K, its blocks' scales and mins at s / mn + 16 nb
// i, d and dmin at + nb i. A whole tile of a Tiles16 matrix (Q4_K, Q6_K; rc
// a multiple of 16) is gathered back into the file layout in scratch first.
void decodeChunkK(const MatrixView& w, int64_t rc, int nr, int64_t nb, int64_t K, uint8_t* u, int16_t* s,
                  int16_t* mn, float* d, float* dmin) {
    const uint8_t* rows = w.row(rc);
    if (w.layout == RowLayout::Tiles16 && nr == kTileRows) {
        uint8_t* unpacked = scratch(kUnpackedTileSlot, size_t(kTileRows) * w.rowStride);
        unpackWordTile(w.type, rows, nb, w.rowStride, unpacked);
        rows = unpacked;
    }
    for (int i = 0; i < nr; ++i)
        decodeRowK(w.type, rows + size_t(i) * w.rowStride, nb, u + i * K, s + i * nb * 16, mn + i * nb * 16,
                   d + i * nb, dmin + i * nb);
}

}  // namespace
}  // namespace cairn::tensor::kernels
