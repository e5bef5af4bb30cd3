// AVX2 + FMA + F16C kernels for x86-64 CPUs, included by two files:
// kernels_avx2.cpp (every AVX2 CPU) and kernels_avx2_vnni.cpp (built with
// AVX-VNNI as well, CAIRN_AVX_VNNI: one vpdpbusd for each maddubs + madd +
// add of 32 bytes, on Intel Alder Lake and later client cores, which have no
// AVX-512). Everything is in an anonymous namespace and uses no STL
// containers, so each file has its own copy compiled with its own
// instructions and none can leak into baseline code through the linker.
//
// Same canonical arithmetic as every path (kernels_common.h): each row is
// decoded once per call (reused by every token of the call), the integer dot
// of a block is vectorized inside the block (exact integers, any order), the
// float chain stays one scalar fma per block per output.
#pragma once

#include "tensor/blocks.h"
#include "tensor/kernels_common.h"
#include "tensor/decode_rows_x86.h"
#include "tensor/q4k_scales_x86.h"
#include "tensor/row_tiles.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace cairn::tensor::kernels {
namespace {

#if CAIRN_AVX_VNNI
constexpr bool kAvxVnni = true;
#else
constexpr bool kAvxVnni = false;
#endif

inline int32_t load32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

inline int32_t hsum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

inline float halfToFloatF16C(uint16_t h) { return _cvtsh_ss(h); }

inline float fmaScalar(float a, float b, float c) {
    return _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(a), _mm_set_ss(b), _mm_set_ss(c)));
}

// acc + the sums of u*x over each 4 bytes (int32 lane i: bytes 4i..4i+3), u
// unsigned, x signed. Every caller's bounds keep maddubs's pairs from
// saturating, so vpdpbusd (AVX-VNNI) gives the same integers in one
// instruction where maddubs + madd + add take three. Intel Xeon (family 6
// model 207, whose cores are those of Intel's client CPUs), `cairn-cli
// bench-kernels --path avx2|avx2-vnni --types T --rows 1024 --cols 2048 -p 64
// -t 1 -r 300 --decode-mib 0` (from L2), three interleaved rounds, prefill
// GFLOP/s avx2 / avx2-vnni: Q4_0 57 / 89, 95 / 135, 94 / 110; Q8_0 43 / 83,
// 67 / 84, 65 / 92; Q4_K 55 / 120, 93 / 125, 95 / 132; Q6_K 51 / 126, 90 /
// 123, 92 / 136; decode GB/s Q4_K 7.4 / 15.1, 13.7 / 15.7, 14.3 / 16.9; Q6_K
// 9.2 / 20.3, 18.3 / 20.6, 16.6 / 21.0 (the host's speed moved by half
// between rounds; Q4_0 and Q8_0 decode level).
inline __m256i dotAdd(__m256i acc, __m256i u, __m256i x) {
#if CAIRN_AVX_VNNI
    return _mm256_dpbusd_avx_epi32(acc, u, x);
#else
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), _mm256_set1_epi16(1)));
#endif
}

// sum u*x over 32 bytes, u unsigned <= 127 (no maddubs saturation), x signed.
inline __m256i dotU(__m256i u, __m256i x) { return dotAdd(_mm256_setzero_si256(), u, x); }

// sum q*x over 32 bytes, both signed (|q| <= 128, |x| <= 127): sign trick.
inline __m256i dotS(__m256i q, __m256i x) { return dotU(_mm256_sign_epi8(q, q), _mm256_sign_epi8(x, q)); }

// ---------------------------------------------------------------------------
// 32-element formats.

// Bit i of qh as 0x10 in byte i: the fifth bit of element i of a Q5_0/Q5_1
// block (low lane: elements 0-15, high lane: 16-31, as the nibbles below).
inline __m256i fifthBits(uint32_t qh) {
    const __m256i bytes = _mm256_shuffle_epi8(_mm256_set1_epi32(int(qh)),
                                              _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2,
                                                               2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ULL));
    return _mm256_and_si256(_mm256_cmpeq_epi8(_mm256_and_si256(bytes, bit), bit), _mm256_set1_epi8(0x10));
}

// The 32 nibbles of 16 bytes: low ones (elements 0-15) in the low lane.
inline __m256i nibbles(const uint8_t* qs) {
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
    return _mm256_and_si256(_mm256_set_m128i(_mm_srli_epi16(q, 4), q), _mm256_set1_epi8(0x0F));
}

// [Σ a, Σ b, Σ c, Σ d] of four vectors of 8 int32 lanes (exact).
inline __m128i sum4(__m256i a, __m256i b, __m256i c, __m256i d) {
    const __m256i s = _mm256_hadd_epi32(_mm256_hadd_epi32(a, b), _mm256_hadd_epi32(c, d));
    return _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
}

inline __m128 halves4(const uint16_t* h) { return _mm_cvtph_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(h))); }

// The f16 at `at` in each of 4 rows' blocks, as floats, read straight from the
// blocks. Copying them to a uint16 array and reading that back as one 64-bit
// load (halves4) stalls: the load spans four 2-byte stores, which store-to-load
// forwarding cannot merge.
inline __m128 rowHalves4(const uint8_t* const* rows, size_t at) {
    auto h = [&](int r) {
        uint16_t v;
        std::memcpy(&v, rows[r] + at, 2);
        return v;
    };
    __m128i v = _mm_cvtsi32_si128(h(0));
    v = _mm_insert_epi16(v, h(1), 1);
    v = _mm_insert_epi16(v, h(2), 2);
    v = _mm_insert_epi16(v, h(3), 3);
    return _mm_cvtph_ps(v);
}

constexpr int kMatvecRows = 4;

// One token, 4 consecutive rows of a 32-element format straight from the
// stored blocks (decode), the rows' bytes prefetched in address order (as the
// AVX-512 kernels do). Lane r of the result is row r's canonical float chain.
// Measured llama-1b, 2 threads, CAIRN_KERNELS=avx2 (`cairn-cli bench -p 64
// -n 32 -t 2 -r 2`), tg t/s: one row at a time without prefetch Q4_0 12.2,
// Q8_0 9.6; this tile 21.5, 18.0. 1024x2048 from L2, 1 thread, GB/s: Q4_0
// 4.6 -> 10.3, Q4_1 4.1 -> 9.8, Q5_0 4.8 -> 9.8, Q5_1 4.5 -> 9.5.
template <TensorType T>
__m128 matvecTile32(const uint8_t* const* rows, const int8_t* xq, const float* dx, const int32_t* xo, const float* sx,
                    int64_t nb, int64_t tileBytes) {
    constexpr size_t bytes = T == TensorType::Q4_0 ? sizeof(BlockQ4_0)
        : T == TensorType::Q4_1                    ? sizeof(BlockQ4_1)
        : T == TensorType::Q5_0                    ? sizeof(BlockQ5_0)
        : T == TensorType::Q5_1                    ? sizeof(BlockQ5_1)
                                                   : sizeof(BlockQ8_0);
    constexpr bool kMin = T == TensorType::Q4_1 || T == TensorType::Q5_1;
    const int64_t step = tileBytes / nb;
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchLines(rows[0] + kPrefetchAhead + b * step, step);
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * b));
        __m256i p[kMatvecRows];
        alignas(16) uint16_t d[kMatvecRows], m[kMatvecRows] = {};
        for (int r = 0; r < kMatvecRows; ++r) {
            const uint8_t* blk = rows[r] + b * bytes;
            std::memcpy(&d[r], blk, 2);
            if constexpr (T == TensorType::Q8_0) {
                p[r] = dotS(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 2)), x);
            } else if constexpr (T == TensorType::Q4_0) {
                p[r] = dotU(nibbles(blk + 2), x);
            } else if constexpr (T == TensorType::Q4_1) {
                std::memcpy(&m[r], blk + 2, 2);
                p[r] = dotU(nibbles(blk + 4), x);
            } else {
                constexpr size_t qhAt = T == TensorType::Q5_0 ? 2 : 4;
                uint32_t qh;
                std::memcpy(&qh, blk + qhAt, 4);
                if constexpr (T == TensorType::Q5_1) std::memcpy(&m[r], blk + 2, 2);
                p[r] = dotU(_mm256_or_si256(nibbles(blk + qhAt + 4), fifthBits(qh)), x);
            }
        }
        // Q8_0's signed codes give sum u*x - 128*xs directly; the others subtract o*xs.
        __m128i isum = sum4(p[0], p[1], p[2], p[3]);
        if constexpr (T != TensorType::Q8_0) isum = _mm_sub_epi32(isum, _mm_set1_epi32(xo[b]));
        acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(halves4(d), _mm_set1_ps(dx[b])), acc);
        if constexpr (kMin) acc = _mm_fmadd_ps(halves4(m), _mm_set1_ps(sx[b]), acc);
    }
    return acc;
}

// One token, 8 consecutive rows of Q4_0 (decode). Rows r and r + 4 share a
// register: row r's 16 code bytes in the low 128-bit lane, row r + 4's in the
// high one, so one shift and two masks give both rows' low and high nibbles
// against activations broadcast to both lanes, and three hadds reduce the
// eight rows' sums into one vector in row order. Per block that is one
// horizontal reduction and one 8-lane fma chain for 8 rows where the 4-row
// tile paid one for 4; the codes are the same exact integers, so the bits
// are those of every path.
// Measured on an AMD EPYC (Zen 3 class, 2 cores), same binary, interleaved:
// 2048x2048 from L3 (`cairn-cli bench-kernels --types Q4_0 --rows 2048 --cols
// 2048 --decode-mib 8 -p 4 -t 2 -r 9`) 13.3-13.7 -> 17.4-18.3 GB/s; llama-1b
// Q4_0 (`cairn-cli bench -p 16 -n 128 -t 2 -r 2`, 3 runs each) tg 16.1-16.9
// -> 16.9-17.1 t/s. From memory both stream 14-16 GB/s of the 17.9 a plain
// 2-thread read gets; the software prefetch matters there (none: 6-7 GB/s),
// its distance (9-72 KiB) and hint (t0/t1/t2/nta) did not, within the noise.
__m256 matvecQ4_0x8(const uint8_t* const* rows, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb,
                    int64_t tileBytes) {
    constexpr size_t bytes = sizeof(BlockQ4_0);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const int64_t step = tileBytes / nb;
    __m256 acc = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchLines(rows[0] + kPrefetchAhead + b * step, step);
        const __m256i xlo = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 32 * b)));
        const __m256i xhi =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 32 * b + 16)));
        __m256i p[4];
        __m128i d = _mm_setzero_si128();
        for (int r = 0; r < 4; ++r) {
            const uint8_t* lo = rows[r] + b * bytes;
            const uint8_t* hi = rows[r + 4] + b * bytes;
            const __m256i q = _mm256_inserti128_si256(
                _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(lo + 2))),
                _mm_loadu_si128(reinterpret_cast<const __m128i*>(hi + 2)), 1);
            const __m256i lo4 = _mm256_and_si256(q, low4), hi4 = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
#if CAIRN_AVX_VNNI
            p[r] = dotAdd(dotAdd(_mm256_setzero_si256(), lo4, xlo), hi4, xhi);
#else
            // the two nibbles' pairs summed as words first (<= 2 * 2 * 15 * 128)
            p[r] = _mm256_madd_epi16(_mm256_add_epi16(_mm256_maddubs_epi16(lo4, xlo), _mm256_maddubs_epi16(hi4, xhi)),
                                     _mm256_set1_epi16(1));
#endif
            uint16_t dl, dh;
            std::memcpy(&dl, lo, 2);
            std::memcpy(&dh, hi, 2);
            d = _mm_insert_epi16(d, dl, r);
            d = _mm_insert_epi16(d, dh, r + 4);
        }
        // Lanes 0-3: rows 0-3, lanes 4-7: rows 4-7.
        const __m256i isum = _mm256_sub_epi32(
            _mm256_hadd_epi32(_mm256_hadd_epi32(p[0], p[1]), _mm256_hadd_epi32(p[2], p[3])), _mm256_set1_epi32(xo[b]));
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(_mm256_cvtph_ps(d), _mm256_set1_ps(dx[b])), acc);
    }
    return acc;
}

// The 16 rows of the whole Q4_0 or Q8_0 tile at `tile` (row_tiles.h) as
// decodeBlock32 gives their blocks: row i's codes at u + i * K, its d at
// dw[i * nb], its m (0) at mw[i * nb]. Block column by block column, each half
// tile's code words turned into its 8 rows by one 8x8 transpose (Q4_0: 4
// low-nibble words, then 4 high); Q8_0's codes are stored as
// decodeBlock32's unsigned ones.
void decodeTile16(TensorType type, const uint8_t* tile, int64_t nb, int64_t K, uint8_t* u, float* dw, float* mw) {
    const bool q8 = type == TensorType::Q8_0;
    const size_t column = kTileRows * traits(type).blockBytes;
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* col = tile + size_t(b) * column;
        alignas(32) float d[kTileRows];
        _mm256_store_ps(d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col))));
        _mm256_store_ps(d + 8, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(col + 16))));
        for (int i = 0; i < kTileRows; ++i) {
            dw[i * nb + b] = d[i];
            mw[i * nb + b] = 0.f;
        }
        uint8_t* ub = u + 32 * b;
        for (int half = 0; half < 2; ++half) {
            // Word j of rows 8 half + i: Q8_0's 8 code words, Q4_0's 4 low-nibble words then its 4 high ones.
            __m256i v[8], rows[8];
            for (int j = 0; j < (q8 ? 8 : 4); ++j) {
                const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(col + tileCodeWordAt(8 * half, j)));
                if (q8) {
                    v[j] = c;
                } else {
                    v[j] = _mm256_and_si256(c, low4);
                    v[4 + j] = _mm256_and_si256(_mm256_srli_epi16(c, 4), low4);
                }
            }
            transpose8x8(v, rows);
            for (int i = 0; i < 8; ++i)
                _mm256_storeu_si256(reinterpret_cast<__m256i*>(ub + (8 * half + i) * K), rows[i]);
        }
    }
}

// One token, one tile of a Tiles16 Q4_0 or Q8_0 matrix (row_tiles.h): in
// each 64-byte chunk rows 0-7 take the first 32 bytes and rows 8-15 the
// second, one int32 lane a row as in the AVX-512 tile, so the 16 rows' sums
// need no horizontal reduction and the rows' d are one fp16 load per half.
// The integers are the exact ones of every path: Q4_0's nibbles through
// maddubs, whose pairs (<= 2 * 15 * 127) summed as words over the block's
// four chunks and both nibbles stay below 2^15 (8 * 3810); Q8_0's stored
// codes flipped back to signed q for the sign trick (dotS) — or, with
// AVX-VNNI, unsigned codes and the offset term as on AVX-512.
// Why: from the file layout the 8-row Q4_0 tile moved bytes into lanes
// (inserts, hadds) as much as it multiplied. Intel Xeon (family 6 model
// 207), `cairn-cli bench-kernels --types Q4_0,Q8_0 --path avx2`, GB/s, file
// layout (CAIRN_ROW_TILES=off) / tiles: from L2 (`--rows 512 --cols 2048 -p 1
// -t 1 -r 100 --decode-mib 1`) Q4_0 20.1 / 32.2, Q8_0 28.3 / 40.7; from
// memory (`--rows 8192 --cols 2048 -p 1 -t 2 -r 5`) Q4_0 25.3, 25.6 / 27.0,
// 27.2, Q8_0 24.3, 26.5 / 27.6, 28.4 (read loop 33-34); llama-1b in
// docs/PERFORMANCE.md ("AVX2 tiles").
// Prefetch distance 4 / 8 / 18 KiB (the same command from memory, three
// rounds): Q4_0 27.4 / 27.1 / 24.0, 24.7 / 24.7 / 26.8, 26.5 / 26.9 / 26.8,
// Q8_0 28.9 / 27.9 / 27.3, 26.0 / 27.6 / 27.6, 28.0 / 28.3 / 28.0: within the
// noise, so the AVX-512 tile's distance.
constexpr int64_t kAvx2TilePrefetch = 8192;

template <TensorType T>
void matvecTile16(const uint8_t* tile, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb, float* out) {
    static_assert(T == TensorType::Q4_0 || T == TensorType::Q8_0);
    constexpr bool kQ8 = T == TensorType::Q8_0;
    constexpr int64_t kBlock = int64_t(kQ8 ? kQ8_0TileBlock : kQ4_0TileBlock);
    constexpr int kChunks = kQ8 ? 8 : 4;
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        prefetchLines(blk + kAvx2TilePrefetch, kBlock);
        const int8_t* x = xq + 32 * b;
        __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
        const auto codes = [&](int j, int half) {
            return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + tileCodeWordAt(8 * half, j)));
        };
        const auto word = [&](int at) { return _mm256_set1_epi32(int32_t(load32(x + at))); };
        if constexpr (kQ8) {
            for (int j = 0; j < kChunks; ++j) {
                const __m256i xj = word(4 * j);
#if CAIRN_AVX_VNNI
                s0 = dotAdd(s0, codes(j, 0), xj);
                s1 = dotAdd(s1, codes(j, 1), xj);
#else
                const __m256i flip = _mm256_set1_epi8(char(kQ8_0TileCodeFlip));
                s0 = _mm256_add_epi32(s0, dotS(_mm256_xor_si256(codes(j, 0), flip), xj));
                s1 = _mm256_add_epi32(s1, dotS(_mm256_xor_si256(codes(j, 1), flip), xj));
#endif
            }
        } else {
#if CAIRN_AVX_VNNI
            for (int j = 0; j < kChunks; ++j) {
                const __m256i xl = word(4 * j), xh = word(16 + 4 * j);
                const __m256i c0 = codes(j, 0), c1 = codes(j, 1);
                s0 = dotAdd(dotAdd(s0, _mm256_and_si256(c0, low4), xl), _mm256_and_si256(_mm256_srli_epi16(c0, 4), low4),
                            xh);
                s1 = dotAdd(dotAdd(s1, _mm256_and_si256(c1, low4), xl), _mm256_and_si256(_mm256_srli_epi16(c1, 4), low4),
                            xh);
            }
#else
            __m256i w0 = _mm256_setzero_si256(), w1 = _mm256_setzero_si256();
            for (int j = 0; j < kChunks; ++j) {
                const __m256i xl = word(4 * j), xh = word(16 + 4 * j);
                const __m256i c0 = codes(j, 0), c1 = codes(j, 1);
                w0 = _mm256_add_epi16(w0, _mm256_maddubs_epi16(_mm256_and_si256(c0, low4), xl));
                w0 = _mm256_add_epi16(w0, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(c0, 4), low4), xh));
                w1 = _mm256_add_epi16(w1, _mm256_maddubs_epi16(_mm256_and_si256(c1, low4), xl));
                w1 = _mm256_add_epi16(w1, _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(c1, 4), low4), xh));
            }
            s0 = _mm256_madd_epi16(w0, _mm256_set1_epi16(1));
            s1 = _mm256_madd_epi16(w1, _mm256_set1_epi16(1));
#endif
        }
        // Unsigned codes (Q4_0; Q8_0 with AVX-VNNI) carry the offset term.
        if (!kQ8 || kAvxVnni) {
            s0 = _mm256_sub_epi32(s0, _mm256_set1_epi32(xo[b]));
            s1 = _mm256_sub_epi32(s1, _mm256_set1_epi32(xo[b]));
        }
        const __m256 d0 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk)));
        const __m256 d1 = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + 16)));
        const __m256 dxb = _mm256_set1_ps(dx[b]);
        acc0 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s0), _mm256_mul_ps(d0, dxb), acc0);
        acc1 = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s1), _mm256_mul_ps(d1, dxb), acc1);
    }
    _mm256_storeu_ps(out, acc0);
    _mm256_storeu_ps(out + 8, acc1);
}

using MatvecTile32Fn = __m128 (*)(const uint8_t* const*, const int8_t*, const float*, const int32_t*, const float*,
                                  int64_t, int64_t);
MatvecTile32Fn matvecTile32For(TensorType type) {
    switch (type) {
    case TensorType::Q4_0: return matvecTile32<TensorType::Q4_0>;
    case TensorType::Q4_1: return matvecTile32<TensorType::Q4_1>;
    case TensorType::Q5_0: return matvecTile32<TensorType::Q5_0>;
    case TensorType::Q5_1: return matvecTile32<TensorType::Q5_1>;
    default: return matvecTile32<TensorType::Q8_0>;
    }
}

void rows32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    if (w.layout == RowLayout::Tiles16) {  // Q4_0 and Q8_0 under gemmMinTokens (readsRowTiles)
        const auto tile = w.type == TensorType::Q8_0 ? matvecTile16<TensorType::Q8_0> : matvecTile16<TensorType::Q4_0>;
        const int64_t nb = a.nBlocks, tiled = r0 + (r1 - r0) / kTileRows * kTileRows;
        for (int64_t t = 0; t < a.nTokens; ++t)
            for (int64_t r = r0; r < tiled; r += kTileRows)
                tile(w.row(r), a.q + t * a.cols, a.d + t * nb, a.xoff + t * nb, nb, y + t * ldy + r);
        if (tiled == r1) return;
        MatrixView rest = w;  // rows past the last whole tile are stored as in the file
        rest.layout = RowLayout::File;
        return rows32(rest, tiled, r1, a, y, ldy);
    }
    // Under gemmMinTokens: a token at a time through the matvec tiles, which
    // from the second token on read the rows from cache (also for the rows
    // matmul unpacks from tiles for a path that does not read them). 4 and 5
    // tokens went through a per-row loop with a horizontal sum per row and
    // token; the GEMM there was slower too. llama-1b Q4_0, `CAIRN_ROW_TILES=off
    // CAIRN_KERNELS=avx2 bench -p N -n 1 -t 2 -r 10`, Intel Xeon family 6
    // model 207, alternating, t/s per-row loop / matvec: pp4 21.12 / 46.63,
    // 19.76 / 40.56, 21.34 / 52.11; pp5 22.48 / 52.04, 21.58 / 53.50, 20.79 /
    // 55.17 (pp6, the GEMM: 46.9-50.6 either way); GEMM / 4-row matvec: pp4
    // 32.41 / 38.78, 30.80 / 41.61, 31.96 / 40.66; pp5 42.29 / 40.01, 36.25 /
    // 41.66, 42.16 / 41.79.
    prefetchRowsStart(w, r0, r1);
    const int64_t nb = a.nBlocks;
    if (w.type == TensorType::Q4_0) {
        const int64_t tileBytes = 8 * int64_t(w.rowStride);
        for (int64_t t = 0; t < a.nTokens; ++t)
            forEachRowTile<8>(w, r0, r1, [&](const uint8_t* const* rows, int n, int64_t r) {
                alignas(32) float out[8];
                _mm256_store_ps(out,
                                matvecQ4_0x8(rows, a.q + t * a.cols, a.d + t * nb, a.xoff + t * nb, nb, tileBytes));
                for (int i = 0; i < n; ++i) y[t * ldy + r + i] = out[i];
            });
        return;
    }
    const MatvecTile32Fn matvec = matvecTile32For(w.type);
    const int64_t tileBytes = kMatvecRows * int64_t(w.rowStride);
    for (int64_t t = 0; t < a.nTokens; ++t)
        forEachRowTile<kMatvecRows>(w, r0, r1, [&](const uint8_t* const* rows, int n, int64_t r) {
            alignas(16) float out[kMatvecRows];
            _mm_store_ps(out,
                         matvec(rows, a.q + t * a.cols, a.d + t * nb, a.xoff + t * nb, a.sx + t * nb, nb, tileBytes));
            for (int i = 0; i < n; ++i) y[t * ldy + r + i] = out[i];
        });
}

// ---------------------------------------------------------------------------
// K formats.

// v's 16-bit words shifted left by n (right by -n when n < 0).
inline __m256i shiftBits(__m256i v, int n) { return n >= 0 ? _mm256_slli_epi16(v, n) : _mm256_srli_epi16(v, -n); }

// Shuffle control for _mm256_shuffle_epi8 that puts int16 word `lo` of the
// low 128-bit lane in all 8 words of the low lane, and word `hi` of the high
// lane in all of the high lane.
// A table, not _mm_set1_epi16: GCC 12 built each control from an immediate
// with three instructions (vmovd, vpshufd, vinserti128) inside the loops,
// where a table entry is a memory operand of the shuffle. Measured on an AMD
// EPYC (`lscpu` family 25 model 1, Zen 3), Q4_K decode from L2 (`cairn-cli
// bench-kernels --types Q4_K,Q6_K --rows 256 --cols 2048 -p 1 -t 1 -r 2000
// --decode-mib 0`), median of 6 interleaved rounds, us: 24.1 before, 23.3
// with rowHalves4 for d and dmin, 20.7 with this table too; Q6_K 23.7-24.0
// in all three.
struct alignas(32) ShuffleControl {
    int8_t b[32];
};
constexpr ShuffleControl wordBroadcastControl(int lo, int hi) {
    ShuffleControl c{};
    for (int i = 0; i < 16; i += 2) {
        c.b[i] = int8_t(2 * lo), c.b[i + 1] = int8_t(2 * lo + 1);
        c.b[16 + i] = int8_t(2 * hi), c.b[17 + i] = int8_t(2 * hi + 1);
    }
    return c;
}
constexpr auto kWordBroadcast = [] {
    std::array<std::array<ShuffleControl, 8>, 8> t{};
    for (int lo = 0; lo < 8; ++lo)
        for (int hi = 0; hi < 8; ++hi) t[lo][hi] = wordBroadcastControl(lo, hi);
    return t;
}();
inline __m256i wordBroadcast(int lo, int hi) {
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(kWordBroadcast[lo][hi].b));
}

#if CAIRN_AVX_VNNI
// The K tiles' scales for two dot vectors packed to words (vpackssdw: per
// 128-bit lane the first vector's 4 int32 lanes, then the second's): words
// 0-3 of the low lane take word a, 4-7 word b; of the high lane c and d.
constexpr ShuffleControl packedScaleControl(int a, int b, int c, int d) {
    ShuffleControl s{};
    const int w[4] = {a, b, c, d};
    for (int i = 0; i < 16; ++i) {
        const int word = w[(i >= 8 ? 2 : 0) + (i % 8 >= 4 ? 1 : 0)];
        s.b[2 * i] = int8_t(2 * word), s.b[2 * i + 1] = int8_t(2 * word + 1);
    }
    return s;
}
// Q4_K/Q5_K chunk c: low nibbles (sub-block 2c) then high (2c + 1), both lanes.
constexpr ShuffleControl kQ4kPackedScales[4] = {packedScaleControl(0, 1, 0, 1), packedScaleControl(2, 3, 2, 3),
                                                packedScaleControl(4, 5, 4, 5), packedScaleControl(6, 7, 6, 7)};
// Q6_K quarters 2j, 2j + 1 of a half: sub-blocks 4j, 4j + 2 (low lane), 4j + 1, 4j + 3 (high).
constexpr ShuffleControl kQ6kPackedScales[2] = {packedScaleControl(0, 2, 1, 3), packedScaleControl(4, 6, 5, 7)};

inline __m256i packedScales(__m256i words, const ShuffleControl& c) {
    return _mm256_shuffle_epi8(words, _mm256_load_si256(reinterpret_cast<const __m256i*>(c.b)));
}

// acc + the scaled sums of two dot vectors (each lane <= 32767, so packing
// to words is exact): one vpdpwssd where the scales pair with packedScales.
inline __m256i scaledPairAdd(__m256i acc, __m256i dotsA, __m256i dotsB, __m256i scales) {
    return _mm256_dpwssd_avx_epi32(acc, _mm256_packs_epi32(dotsA, dotsB), scales);
}
#endif

// One token, 4 consecutive rows of Q4_K/Q5_K/Q6_K straight from the stored
// super-blocks (decode), prefetched in address order like matvecTile32. Lane r
// of the result is row r's canonical float chain; the four rows share the
// activation loads, one horizontal reduction (sum4) for all four integer sums
// and one vector fma for the four chains, where one row at a time paid a
// reduction per sum and per row and a scalar fma chain.
// Measured on an AMD EPYC (Zen 3 class), one row at a time -> this tile,
// interleaved runs: 1024x2048 from L2, 1 thread (`cairn-cli bench-kernels
// --types Q4_K,Q6_K --rows 1024 --cols 2048 -t 1 -r 100 -p 1`), decode GB/s
// Q4_K 5.6 -> 7.2, Q6_K 6.8 -> 8.7; llama-1b Q4_K on 2 threads (`cairn-cli
// bench -p 16 -n 64 -t 2 -r 2`), tg 13.1 -> 14.3 t/s.
// Fewer instructions a block: Q4_K/Q5_K scales unpacked in one xmm
// (q4kScales) instead of general registers, and each high bit of Q5_K/Q6_K
// moved into place by one shift. `ISA=avx2 tools/kernel-ab/run.sh`, Intel
// Xeon (family 6 model 207, AVX2 path forced), 2026-12-06, compute only (L1,
// 1 thread), medians of 12 alternating rounds, GB/s before / after: Q4_K
// 10.8 / 11.9, 13.9 / 15.0, 11.2 / 12.5 (one round 13.2 / 12.8); Q5_K 9.0 /
// 10.2, 12.8 / 13.7 (the scales alone: 3 % slower, 13.4 / 13.0); Q6_K 12.8 /
// 14.2, 17.5 / 18.9. From memory (2 threads) the same within 1-7 %.
template <TensorType T>
__m128 matvecTileK(const uint8_t* const* rows, const int8_t* xq, const int16_t* bsum, const float* dx, int64_t nb,
                   int64_t tileBytes) {
    constexpr size_t bytes = T == TensorType::Q4_K ? sizeof(BlockQ4_K)
        : T == TensorType::Q5_K                    ? sizeof(BlockQ5_K)
                                                   : sizeof(BlockQ6_K);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    const int64_t step = tileBytes / nb;
    __m128 acc = _mm_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchLines(rows[0] + kPrefetchAhead + b * step, step);
        const int8_t* x = xq + 256 * b;
        const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum + 16 * b));
        const __m128 dxv = _mm_set1_ps(dx[b]);
        __m256i is[kMatvecRows], side[kMatvecRows];  // side: Σ scale·bsum (Q6_K offset) or Σ min·bsum
        for (int r = 0; r < kMatvecRows; ++r) {
            const uint8_t* blk = rows[r] + b * bytes;
            is[r] = _mm256_setzero_si256();
            if constexpr (T == TensorType::Q6_K) {
                const auto* q6 = reinterpret_cast<const BlockQ6_K*>(blk);
                const __m256i sc = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q6->scales)));
                side[r] = _mm256_madd_epi16(sc, bs);
                for (int n = 0; n < 2; ++n) {
                    // Scales 8n..8n+7 as words in both lanes.
                    const __m256i scn =
                        _mm256_broadcastsi128_si256(n ? _mm256_extracti128_si256(sc, 1) : _mm256_castsi256_si128(sc));
                    const __m256i l0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q6->ql + 64 * n));
                    const __m256i l1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q6->ql + 64 * n + 32));
                    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q6->qh + 32 * n));
                    __m256i u[4];
                    q6kQuarterCodes(l0, l1, h, u);
#if CAIRN_AVX_VNNI
                    // dots of 4 codes <= 4 * 63 * 128
                    const __m256i z = _mm256_setzero_si256();
                    for (int j = 0; j < 2; ++j) {
                        const auto* xj = reinterpret_cast<const __m256i*>(x + 128 * n + 64 * j);
                        is[r] = scaledPairAdd(is[r], dotAdd(z, u[2 * j], _mm256_loadu_si256(xj)),
                                              dotAdd(z, u[2 * j + 1], _mm256_loadu_si256(xj + 1)),
                                              packedScales(scn, kQ6kPackedScales[j]));
                    }
#else
                    for (int k = 0; k < 4; ++k) {
                        // Sub-blocks 8n + 2k (bytes 0-15) and 8n + 2k + 1 (16-31).
                        const __m256i scv = _mm256_shuffle_epi8(scn, wordBroadcast(2 * k, 2 * k + 1));
                        const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 128 * n + 32 * k));
                        is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(u[k], xv), scv));
                    }
#endif
                }
            } else {
                // Q4_K and Q5_K share d, dmin and the scales at the same offsets.
                const auto* q4 = reinterpret_cast<const BlockQ4_K*>(blk);
                const uint8_t* qs = T == TensorType::Q4_K ? q4->qs : reinterpret_cast<const BlockQ5_K*>(blk)->qs;
                const __m128i s8 = q4kScales(q4->scales);
                const __m128i mins =
                    _mm_shuffle_epi8(s8, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
                side[r] = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins), bs);
                const __m256i scw =
                    _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(s8));  // sc[0..7] as words, both lanes
                __m256i h = _mm256_setzero_si256();
                if constexpr (T == TensorType::Q5_K)
                    h = _mm256_loadu_si256(
                        reinterpret_cast<const __m256i*>(reinterpret_cast<const BlockQ5_K*>(blk)->qh));
                for (int c = 0; c < 4; ++c) {
                    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
                    __m256i lo = _mm256_and_si256(q, low4), hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
                    if constexpr (T == TensorType::Q5_K) {
                        // qh bit 2c (low nibbles) or 2c + 1 (high) to bit 4 by one
                        // 16-bit shift each: bits stay within their byte where
                        // the mask looks.
                        const __m256i bit4 = _mm256_set1_epi8(0x10);
                        lo = _mm256_or_si256(lo, _mm256_and_si256(shiftBits(h, 4 - 2 * c), bit4));
                        hi = _mm256_or_si256(hi, _mm256_and_si256(shiftBits(h, 3 - 2 * c), bit4));
                    }
                    const __m256i xlo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 * c));
                    const __m256i xhi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + 64 * c + 32));
#if CAIRN_AVX_VNNI
                    // dots of 4 codes <= 4 * 31 * 128
                    const __m256i z = _mm256_setzero_si256();
                    is[r] = scaledPairAdd(is[r], dotAdd(z, lo, xlo), dotAdd(z, hi, xhi),
                                          packedScales(scw, kQ4kPackedScales[c]));
#else
                    const __m256i slo = _mm256_shuffle_epi8(scw, wordBroadcast(2 * c, 2 * c));
                    const __m256i shi = _mm256_shuffle_epi8(scw, wordBroadcast(2 * c + 1, 2 * c + 1));
                    is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, xlo), slo));
                    is[r] = _mm256_add_epi32(is[r], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, xhi), shi));
#endif
                }
            }
        }
        const __m128i isum = sum4(is[0], is[1], is[2], is[3]);
        const __m128i sideSum = sum4(side[0], side[1], side[2], side[3]);
        // Q5_K's d and dmin sit where Q4_K's do (static_assert below the tile).
        const __m128 d =
            rowHalves4(rows, b * bytes + (T == TensorType::Q6_K ? offsetof(BlockQ6_K, d) : offsetof(BlockQ4_K, d)));
        if constexpr (T == TensorType::Q6_K) {
            // Codes are stored + 32: subtract 32 · Σ scale·bsum.
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(_mm_sub_epi32(isum, _mm_slli_epi32(sideSum, 5))),
                               _mm_mul_ps(d, dxv), acc);
        } else {
            acc = _mm_fmadd_ps(_mm_cvtepi32_ps(isum), _mm_mul_ps(d, dxv), acc);
            // fma(msum, -(dmin·dx), acc): negating the product is exact, so fnmadd gives the same bits.
            const __m128 dmin = rowHalves4(rows, b * bytes + offsetof(BlockQ4_K, dmin));
            acc = _mm_fnmadd_ps(_mm_cvtepi32_ps(sideSum), _mm_mul_ps(dmin, dxv), acc);
        }
    }
    return acc;
}

static_assert(offsetof(BlockQ5_K, d) == offsetof(BlockQ4_K, d));
static_assert(offsetof(BlockQ5_K, dmin) == offsetof(BlockQ4_K, dmin));

// 8 fp16 values, one in the low 16 bits of each int32 lane of v, as floats.
inline __m256 halvesOfLanes(__m256i v) {
    const __m256i packed = _mm256_packus_epi32(_mm256_and_si256(v, _mm256_set1_epi32(0xFFFF)), _mm256_setzero_si256());
    return _mm256_cvtph_ps(_mm256_castsi256_si128(_mm256_permute4x64_epi64(packed, 0x08)));  // qwords 0, 2
}

// In each int32 lane, byte b0..b3 of that lane (-1: zero), for _mm256_shuffle_epi8.
inline __m256i laneBytes(int b0, int b1, int b2, int b3) {
    alignas(32) int8_t idx[32];
    const int b[4] = {b0, b1, b2, b3};
    for (int d = 0; d < 8; ++d)
        for (int k = 0; k < 4; ++k) idx[4 * d + k] = int8_t(b[k] < 0 ? -128 : 4 * (d % 4) + b[k]);
    return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
}

// Q4_K decode of one token for one tile of a Tiles16 matrix (row_tiles.h:
// dword k of row i at 64k + 4i), rows 0-7 and 8-15 in the two 256-bit halves
// of each 64 bytes, as the AVX-512 tile (matvecTileQ4_K): get_scale_min_k4
// in every row's lane, each sub-block's dot in its row's lane (maddubs pairs
// of nibbles summed as words over the sub-block's 8 chunks stay below 2^15,
// 16 * 15 * 127), times its row's scale, the mins against the activations'
// sub-block sums by madd; the integers and float chain of matvecTileK.
// `bsPairs`: per block, 4 words of (sum of sub-block 2p, of 2p + 1) as int16.
// Intel Xeon (family 6 model 207), `cairn-cli bench-kernels --types Q4_K
// --path avx2`, GB/s, file layout (CAIRN_ROW_TILES=off) / tiles: from L2
// (`--rows 512 --cols 2048 -p 1 -t 1 -r 100 --decode-mib 1`) 10.9, 15.2 /
// 27.7, 27.6; from memory (`--rows 8192 --cols 2048 -p 1 -t 2 -r 5`) 22.6,
// 22.0 / 25.2, 26.0. llama-1b Q4_K_M tg128, interleaved: 26.61 / 28.29,
// 26.06 / 28.81, 25.03 / 28.08 t/s (pp512 through matmul's copy: 99.1 /
// 84.9, 98.6 / 100.1, 91.6 / 89.2).
// Without AVX-VNNI the word sums meet their scale in one madd (the scale
// byte as both words of its lane) instead of madd by 1 then mullo, and the
// scales are read from the tile at each step rather than held for both
// halves across the block, which GCC 12 had spilled to the stack. AMD EPYC
// Zen 4 (family 25 model 17) with `--path avx2`, interleaved, best GB/s
// before / after: from L2 (`--rows 512 --cols 2048 -p 1 -t 1 -r 1000
// --decode-mib 1`) 31.9 / 32.6, 32.1 / 32.9, 31.9 / 32.3, 31.6 / 33.0,
// 32.0 / 33.0, 32.1 / 32.1; from memory (`--rows 8192 -t 2 -r 7`) level (33-34). One
// half at a time, re-reading the activations for the second, was slower
// (28.0-28.9 from L2).
void matvecTileQ4_K16(const uint8_t* tile, const int8_t* xq, const int32_t* bsPairs, const float* dx, int64_t nb,
                      float* out) {
    constexpr int64_t kBlock = int64_t(kQ4_KTileBlock);
    const __m256i low4 = _mm256_set1_epi8(0x0F), six = _mm256_set1_epi8(0x3F), top2 = _mm256_set1_epi8(0x30);
    // Scale byte j of each lane as the int32 mullo takes it (AVX-VNNI sums
    // are int32), or twice as int16 for madd against the word pairs of the
    // maddubs sums: s * w0 + s * w1 = s * (w0 + w1), the same integer.
    const auto scaleIndex = [](int j) { return kAvxVnni ? laneBytes(j, -1, -1, -1) : laneBytes(j, -1, j, -1); };
    const __m256i scaleIdx[4] = {scaleIndex(0), scaleIndex(1), scaleIndex(2), scaleIndex(3)};
    const __m256i words01 = laneBytes(0, -1, 1, -1), words23 = laneBytes(2, -1, 3, -1);
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        const int8_t* x = xq + 256 * b;
        const __m256 dxv = _mm256_set1_ps(dx[b]);
        const auto word = [&](int k, int h) {
            return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + tileWordAt(8 * h, k)));
        };
        __m256i isum[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
#pragma GCC unroll 4
        for (int g = 0; g < 4; ++g) {  // sub-blocks 2g (low nibbles) and 2g + 1 (high)
            // A quarter of the block's prefetches at each step.
            prefetchLines(blk + kAvx2TilePrefetch + g * (kBlock / 4), kBlock / 4);
            __m256i lo[2], hi[2];
            for (int h = 0; h < 2; ++h) lo[h] = hi[h] = _mm256_setzero_si256();
            for (int c = 0; c < 8; ++c) {
                const __m256i xl = _mm256_set1_epi32(load32(x + 64 * g + 4 * c));
                const __m256i xh = _mm256_set1_epi32(load32(x + 64 * g + 32 + 4 * c));
                for (int h = 0; h < 2; ++h) {
                    const __m256i codes = word(4 + 8 * g + c, h);
                    const __m256i l = _mm256_and_si256(codes, low4);
                    const __m256i u = _mm256_and_si256(_mm256_srli_epi16(codes, 4), low4);
#if CAIRN_AVX_VNNI
                    lo[h] = dotAdd(lo[h], l, xl);
                    hi[h] = dotAdd(hi[h], u, xh);
#else
                    lo[h] = _mm256_add_epi16(lo[h], _mm256_maddubs_epi16(l, xl));
                    hi[h] = _mm256_add_epi16(hi[h], _mm256_maddubs_epi16(u, xh));
#endif
                }
            }
            for (int h = 0; h < 2; ++h) {
                // get_scale_min_k4's scales of sub-blocks 4 (g / 2) .. + 3,
                // from the tile again rather than held across the block (16
                // ymm registers: both halves' scales and sums spilled).
                const __m256i scales =
                    g < 2 ? _mm256_and_si256(word(1, h), six)
                          : _mm256_or_si256(_mm256_and_si256(word(3, h), low4),
                                            _mm256_and_si256(_mm256_srli_epi32(word(1, h), 2), top2));
                const __m256i sl = _mm256_shuffle_epi8(scales, scaleIdx[2 * (g % 2)]);
                const __m256i sh = _mm256_shuffle_epi8(scales, scaleIdx[2 * (g % 2) + 1]);
                if constexpr (kAvxVnni) {
                    isum[h] = _mm256_add_epi32(isum[h], _mm256_mullo_epi32(lo[h], sl));
                    isum[h] = _mm256_add_epi32(isum[h], _mm256_mullo_epi32(hi[h], sh));
                } else {
                    isum[h] = _mm256_add_epi32(isum[h], _mm256_madd_epi16(lo[h], sl));
                    isum[h] = _mm256_add_epi32(isum[h], _mm256_madd_epi16(hi[h], sh));
                }
            }
        }
        for (int h = 0; h < 2; ++h) {
            const __m256i s1 = word(2, h), s2 = word(3, h);
            const __m256i mn[2] = {_mm256_and_si256(s1, six),
                                   _mm256_or_si256(_mm256_and_si256(_mm256_srli_epi32(s2, 4), low4),
                                                   _mm256_and_si256(_mm256_srli_epi32(s1, 2), top2))};
            __m256i msum = _mm256_setzero_si256();
            for (int p = 0; p < 4; ++p)
                msum = _mm256_add_epi32(msum, _mm256_madd_epi16(_mm256_shuffle_epi8(mn[p / 2], p % 2 ? words23 : words01),
                                                                _mm256_set1_epi32(bsPairs[4 * b + p])));
            const __m256i hdr = word(0, h);  // d | dmin << 16
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[h]), _mm256_mul_ps(halvesOfLanes(hdr), dxv), acc[h]);
            // fma(msum, -(dmin·dx), acc): negating the product is exact, so fnmadd gives the same bits.
            acc[h] = _mm256_fnmadd_ps(_mm256_cvtepi32_ps(msum),
                                      _mm256_mul_ps(halvesOfLanes(_mm256_srli_epi32(hdr, 16)), dxv), acc[h]);
        }
    }
    _mm256_storeu_ps(out, acc[0]);
    _mm256_storeu_ps(out + 8, acc[1]);
}

// Q6_K decode of one token for one tile of a Tiles16 matrix (kQ6_KTileBlock:
// each row's 52 block words in its own int32 lane, then the rows' d), a half
// tile (8 rows, one 256-bit half of each 64 bytes) at a time, as the AVX-512
// tile (matvecTileQ6_K): for half n and chunk c, ql words 16n + c and
// 16n + 8 + c and qh word 32 + 8n + c hold 4 codes of each of the half's 4
// groups of 32 elements; group k meets activation bytes 128n + 32k + 4c.. and
// sums into sub-block 8n + 2k + c / 4. Codes <= 63, so two chunks' maddubs
// pairs summed as words stay below 2^15 (2 * 2 * 63 * 127). Then
// isum = sum_j s_j (dot_j - 32 bsum_j): the integers and float chain of
// matvecTileK. `offsets`: per block, 32 * bsum_j of its 16 sub-blocks.
// Intel Xeon (family 6 model 207), `cairn-cli bench-kernels --types Q6_K
// --path avx2`, GB/s, file layout / tiles: from L2 (`--rows 512 --cols 2048
// -p 1 -t 1 -r 100 --decode-mib 1`) 18.7, 18.5 / 21.5, 21.5; from memory on
// 2 threads (`--rows 8192`) 22.8, 21.2 / 21.7, 21.7, the same. With the Q4_K
// tile, llama-1b Q4_K_M tg (`bench -p 16 -n 256 -t 2 -r 1`, alternating)
// 21.27 / 23.21, 25.52 / 25.95, 26.54 / 28.02, 26.50 / 28.15 t/s.
void matvecTileQ6_K16(const uint8_t* tile, const int8_t* xq, const int32_t* offsets, const float* dx, int64_t nb,
                      float* out) {
    constexpr int64_t kBlock = int64_t(kQ6_KTileBlock);
    static_assert(kBlock % 16 == 0, "the prefetches below cover the block in 16 equal steps");
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        const int8_t* x = xq + 256 * b;
        for (int h = 0; h < 2; ++h) {
            const auto word = [&](int k) {
                return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + q6kTileWordAt(8 * h, k)));
            };
            __m256i isum = _mm256_setzero_si256();
            for (int n = 0; n < 2; ++n) {
                __m256i dot[8];  // [2k + c / 4]: sub-block 8n + 2k + c / 4
                for (auto& d : dot) d = _mm256_setzero_si256();
                // Unrolled, so that dot[2k + c0 / 4] is not indexed at run
                // time (GCC 12 kept the loop, and dot[] on the stack). Intel
                // Xeon family 6 model 207 with `--path avx2`, from L2
                // (`bench-kernels --types Q6_K --rows 512 --cols 2048 -p 1 -t
                // 1 -r 300 --decode-mib 1`, six alternating rounds), best GB/s
                // 15.2-21.6 -> 16.4-23.9.
#pragma GCC unroll 4
                for (int c0 = 0; c0 < 8; c0 += 2) {
                    // A sixteenth of the block's prefetches (3-4 lines) at
                    // each step: all 53 lines at the block's start held
                    // decode from memory far below the read loop. AMD EPYC
                    // Zen 4 (family 25 model 17), `--path avx2`, interleaved,
                    // GB/s, one burst / a quarter per (h, n) / a sixteenth:
                    // `bench-kernels --types Q6_K --rows 8192 --cols 2048 -p 1
                    // -t 2 -r 7` 21.1 / 27.2 / 33.2, 18.8 / 25.7 / 31.4, 21.4
                    // / 29.5 / 33.1 (2-thread read loop 32.7-34.3); from L2
                    // (`--rows 512 -t 1 -r 1000 --decode-mib 1`) 30.6, 31.6
                    // -> 35.6, 36.6. llama-1b Q4_K_M tg with CAIRN_KERNELS=avx2
                    // (`bench -p 1 -n 64 -t 2 -r 3 --read-loop 1024`, median
                    // of 3 runs, interleaved) 31.1 / 35.8, 30.5 / 35.5, 28.3 /
                    // 34.7 t/s; share of the read loop right after each run
                    // 0.73-0.74 -> 0.88-0.90. (The Q4_K tile's quarters as
                    // sixteenths: level, 29-33 GB/s from memory either way.)
                    const int64_t step = 4 * (2 * h + n) + c0 / 2;
                    prefetchLines(blk + kAvx2TilePrefetch + step * (kBlock / 16), kBlock / 16);
                    __m256i pairs[4];  // two chunks' pairs of group k, as words (or int32 with AVX-VNNI)
                    for (auto& p : pairs) p = _mm256_setzero_si256();
                    for (int c = c0; c < c0 + 2; ++c) {
                        const __m256i qlA = word(16 * n + c), qlB = word(16 * n + 8 + c), qh = word(32 + 8 * n + c);
                        __m256i e[4];
                        q6kQuarterCodes(qlA, qlB, qh, e);
                        for (int k = 0; k < 4; ++k) {
                            const __m256i xk = _mm256_set1_epi32(load32(x + 128 * n + 32 * k + 4 * c));
#if CAIRN_AVX_VNNI
                            pairs[k] = dotAdd(pairs[k], e[k], xk);
#else
                            pairs[k] = _mm256_add_epi16(pairs[k], _mm256_maddubs_epi16(e[k], xk));
#endif
                        }
                    }
                    for (int k = 0; k < 4; ++k)
                        dot[2 * k + c0 / 4] = _mm256_add_epi32(
                            dot[2 * k + c0 / 4], kAvxVnni ? pairs[k] : _mm256_madd_epi16(pairs[k], _mm256_set1_epi16(1)));
                }
                for (int j = 0; j < 8; ++j) {
                    // scale 8n + j: byte j % 4 of scale word 48 + 2n + j / 4, sign-extended in its lane
                    const __m256i scale = _mm256_srai_epi32(_mm256_slli_epi32(word(48 + 2 * n + j / 4), 24 - 8 * (j % 4)), 24);
                    const __m256i centered = _mm256_sub_epi32(dot[j], _mm256_set1_epi32(offsets[16 * b + 8 * n + j]));
                    isum = _mm256_add_epi32(isum, _mm256_mullo_epi32(centered, scale));
                }
            }
            const __m256 d = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(blk + kQ6_KTileD + 16 * h)));
            acc[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(d, _mm256_set1_ps(dx[b])), acc[h]);
        }
    }
    _mm256_storeu_ps(out, acc[0]);
    _mm256_storeu_ps(out + 8, acc[1]);
}

using MatvecTileKFn = __m128 (*)(const uint8_t* const*, const int8_t*, const int16_t*, const float*, int64_t, int64_t);
MatvecTileKFn matvecTileKFor(TensorType type) {
    switch (type) {
    case TensorType::Q4_K: return matvecTileK<TensorType::Q4_K>;
    case TensorType::Q5_K: return matvecTileK<TensorType::Q5_K>;
    default: return matvecTileK<TensorType::Q6_K>;
    }
}

void rowsK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    if (w.layout == RowLayout::Tiles16) {  // Q4_K and Q6_K under gemmMinTokens (readsRowTiles)
        const int64_t nb = a.nBlocks, tiled = r0 + (r1 - r0) / kTileRows * kTileRows;
        auto* side = reinterpret_cast<int32_t*>(scratch(3, size_t(nb) * 64));
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int16_t* bsum = a.bsum + t * (a.cols / 16);
            if (w.type == TensorType::Q4_K) {
                q4kSubBlockPairSums(bsum, nb, side);
                for (int64_t r = r0; r < tiled; r += kTileRows)
                    matvecTileQ4_K16(w.row(r), a.q + t * a.cols, side, a.d + t * nb, nb, y + t * ldy + r);
            } else {
                q6kCodeOffsets(bsum, nb, side);
                for (int64_t r = r0; r < tiled; r += kTileRows)
                    matvecTileQ6_K16(w.row(r), a.q + t * a.cols, side, a.d + t * nb, nb, y + t * ldy + r);
            }
        }
        if (tiled == r1) return;
        MatrixView rest = w;  // rows past the last whole tile are stored as in the file
        rest.layout = RowLayout::File;
        return rowsK(rest, tiled, r1, a, y, ldy);
    }
    // Under gemmMinTokens: a token at a time (also the file-layout rows that
    // matmul unpacks from tiles for a path that does not read them, 4-8 tokens).
    if (w.type == TensorType::Q4_K || w.type == TensorType::Q5_K || w.type == TensorType::Q6_K) {
        prefetchRowsStart(w, r0, r1);
        const MatvecTileKFn matvec = matvecTileKFor(w.type);
        const int64_t nb = a.nBlocks, tileBytes = kMatvecRows * int64_t(w.rowStride);
        for (int64_t t = 0; t < a.nTokens; ++t)
            forEachRowTile<kMatvecRows>(w, r0, r1, [&](const uint8_t* const* rows, int n, int64_t r) {
                alignas(16) float out[kMatvecRows];
                _mm_store_ps(out,
                             matvec(rows, a.q + t * a.cols, a.bsum + t * (a.cols / 16), a.d + t * nb, nb, tileBytes));
                for (int i = 0; i < n; ++i) y[t * ldy + r + i] = out[i];
            });
        return;
    }
    const int64_t nb = a.nBlocks;
    const size_t bb = traits(w.type).blockBytes;
    auto* dec = reinterpret_cast<DecodedK*>(scratch(1, size_t(nb) * sizeof(DecodedK)));
    for (int64_t r = r0; r < r1; ++r) {
        for (int64_t b = 0; b < nb; ++b) decodeBlockK(w.type, w.row(r) + b * bb, dec[b]);
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int8_t* q = a.q + t * a.cols;
            const int16_t* bsum = a.bsum + t * (a.cols / 16);
            const float* dx = a.d + t * nb;
            float acc = 0.f;
            for (int64_t b = 0; b < nb; ++b) {
                const DecodedK& k = dec[b];
                const int16_t* bs = bsum + 16 * b;
                // codes <= 63: maddubs pairs fit int16; madd by the sub-block
                // scale (lanes 0-7: sub-block 2i, 8-15: 2i + 1) gives int32.
                __m256i is = _mm256_setzero_si256();
                for (int i = 0; i < 8; ++i) {
                    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.u + 32 * i));
                    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q + 256 * b + 32 * i));
                    const __m256i sc = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_set1_epi16(k.s[2 * i])),
                                                               _mm_set1_epi16(k.s[2 * i + 1]), 1);
                    is = _mm256_add_epi32(is, _mm256_madd_epi16(_mm256_maddubs_epi16(u, x), sc));
                }
                const __m256i bsv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs));
                const int32_t off =
                    hsum(_mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.s)), bsv));
                const int32_t isum = hsum(is) - info.offset * off;
                acc = fmaScalar(float(isum), k.d * dx[b], acc);
                if (info.hasMin) {
                    const int32_t msum =
                        hsum(_mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.mn)), bsv));
                    acc = fmaScalar(float(msum), -(k.dmin * dx[b]), acc);
                }
            }
            y[t * ldy + r] = acc;
        }
    }
}

// ---------------------------------------------------------------------------
// Float weights: the 16 canonical lanes as two ymm (lanes 0-7, 8-15).

inline __m256 load8(TensorType type, const uint8_t* row, int64_t k) {
    switch (type) {
    case TensorType::F16: return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k)));
    case TensorType::BF16:
        return _mm256_castsi256_ps(_mm256_slli_epi32(
            _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + 2 * k))), 16));
    default: return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + k);
    }
}

inline float reduce16v(__m256 lo, __m256 hi) {
    const __m256 s8 = _mm256_add_ps(lo, hi);
    const __m128 s4 = _mm_add_ps(_mm256_castps256_ps128(s8), _mm256_extractf128_ps(s8, 1));
    const __m128 s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    return _mm_cvtss_f32(_mm_add_ss(s2, _mm_movehdup_ps(s2)));
}

// 4 rows (f32) x 1 token over the whole row.
template <int R>
void floatDot(const float* const* rows, int64_t K, const float* x, float* out) {
    __m256 lo[R], hi[R];
    for (int r = 0; r < R; ++r) lo[r] = hi[r] = _mm256_setzero_ps();
    const int64_t full = K & ~int64_t(15);
    for (int64_t k = 0; k < full; k += 16) {
        const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
        for (int r = 0; r < R; ++r) {
            lo[r] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[r] + k), x0, lo[r]);
            hi[r] = _mm256_fmadd_ps(_mm256_loadu_ps(rows[r] + k + 8), x1, hi[r]);
        }
    }
    for (int r = 0; r < R; ++r) {
        alignas(32) float l[16];
        _mm256_store_ps(l, lo[r]);
        _mm256_store_ps(l + 8, hi[r]);
        for (int64_t k = full; k < K; ++k) l[k & 15] = fmaScalar(rows[r][k], x[k], l[k & 15]);
        out[r] = reduce16v(_mm256_load_ps(l), _mm256_load_ps(l + 8));
    }
}

// One token (decode), 4 rows straight from the stored rows (no f32 copy).
// llama-1b F16, 2 threads, CAIRN_KERNELS=avx2, tg: 6.0-6.1 t/s through the
// f32 copy (with or without prefetch there); this 10.0-10.1.
//
// Each row is its own stream (4 KiB apart at 2048 columns), so each is
// prefetched kFloatRowPrefetch bytes ahead of where it is read, continuing
// into the same row of the next tile. The quantized kernels' single sweep in
// address order at the tile's mean rate reached row 3's first KiB after it
// was read. Measured on an AMD EPYC (Zen 3, 2 cores, KVM), interleaved, GB/s
// (`cairn-cli bench-kernels --types F16 --rows R --cols C -p 1 -t T -r 7`):
// 8192x2048 -t 1: sweep 12.3-13.0, per row 1 KiB ahead 14.3-15.3, 2 KiB
// 15.0-15.1 (a plain 1-thread read loop: 16.7); 512x2048 -t 1: 11.9-14.6 ->
// 15.2-15.4 (2 KiB); 8192x2048 -t 2: 23.0-24.3 -> 26.6-27.9 (2 KiB).
// llama-1b F16 tg64 (`cairn-cli bench -p 1 -n 64 -t 2 -r 1`, 3 rounds beside
// `llama-bench -p 0 -n 64 -t 2 -r 1`): sweep 9.4-9.9 t/s, 1 KiB 9.7-11.3,
// 2 KiB 8.5-11.0, llama.cpp 10.0-11.4.
//
// The lines go to L2 (prefetcht1), not L1: Zen 3 and older fill L1 either way
// (PrefetchTo), Intel's cores measured the same (F16 33.3 / 33.1 GB/s on the
// AVX-512 tile there), and Zen 4 gains by far. AMD EPYC Zen 4 (family 25
// model 17, 2 cores, KVM), interleaved, L1 -> L2: `bench-kernels --types F16
// --rows 16384 --cols 2048 -p 1 -t 2 -r 10 --path avx2` 21.5 -> 38.9, 26.1 ->
// 42.8, 22.4 -> 32.7, 25.1 -> 29.7 GB/s; `CAIRN_KERNELS=avx2 bench -p 16 -n 64
// -t 2 -r 2` tg, llama-1b F16 9.85 / 9.53 / 9.19 -> 16.85 / 14.24 / 15.07,
// mamba-370m F16 25.4 / 26.1 / 25.8 -> 42.6 / 34.6 / 37.2 t/s. (The same
// change on the Q4_0 / Q8_0 tiles' prefetch was slower there, 28-32 -> 22-28
// GB/s, so they keep L1.)
constexpr int64_t kFloatRowPrefetch = 2048;

// One token, a pair of rows of a float Tiles16 tile (kernels::floatRow): the
// two rows are one stream, so the hardware prefetcher follows it and the
// kernel issues none. AMD EPYC Zen 4 (family 25 model 17), in the model
// (docs/PERFORMANCE.md, "Float rows in pairs").
template <TensorType Type>
void floatPairOneToken(const uint8_t* pair, int64_t K, const float* x, float* y) {
    __m256 lo0 = _mm256_setzero_ps(), hi0 = lo0, lo1 = lo0, hi1 = lo0;
    for (int64_t k = 0; k < K; k += 16) {
        const int64_t at = 2 * k;  // chunk k / 16 of row 0, then of row 1
        const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
        lo0 = _mm256_fmadd_ps(load8(Type, pair, at), x0, lo0);
        hi0 = _mm256_fmadd_ps(load8(Type, pair, at + 8), x1, hi0);
        lo1 = _mm256_fmadd_ps(load8(Type, pair, at + 16), x0, lo1);
        hi1 = _mm256_fmadd_ps(load8(Type, pair, at + 24), x1, hi1);
    }
    y[0] = reduce16v(lo0, hi0);
    y[1] = reduce16v(lo1, hi1);
}

// The whole tiles among rows [r0, r1) (r0 a multiple of 16) of a float
// Tiles16 matrix; returns where the file rows after them start.
int64_t floatTilesOneToken(const MatrixView& w, int64_t r0, int64_t r1, const float* x, float* y) {
    return forEachFloatTilePair(w, r0, r1, [&](auto type, const uint8_t* pair, int64_t r) {
        floatPairOneToken<decltype(type)::value>(pair, w.cols, x, y + r);
    });
}

void floatRowsOneToken(const MatrixView& w, int64_t r0, int64_t r1, const float* x, float* y) {
    if (w.layout == RowLayout::Tiles16) r0 = floatTilesOneToken(w, r0, r1, x, y);
    if (r0 >= r1) return;
    const int64_t K = w.cols, full = K & ~int64_t(15);
    const int64_t eb = floatElementBytes(w.type), rowBytes = int64_t(w.rowStride);
    prefetchRowsStart(w, r0, r1);
    for (int64_t r = r0; r < r1; r += 4) {
        const int n = int(std::min<int64_t>(4, r1 - r));
        const uint8_t* rows[4];
        for (int i = 0; i < 4; ++i) rows[i] = w.row(r + std::min(i, n - 1));
        __m256 lo[4], hi[4];
        for (int i = 0; i < 4; ++i) lo[i] = hi[i] = _mm256_setzero_ps();
        for (int64_t k = 0; k < full; k += 16) {
            if ((k * eb) % 64 == 0) {  // a new cache line of each row
                const int64_t ahead = k * eb + kFloatRowPrefetch;
                const int64_t at = rowStreamOffset(ahead, rowBytes, 4);
                for (int i = 0; i < 4; ++i) prefetchLine<PrefetchTo::L2>(rows[i] + at);
            }
            const __m256 x0 = _mm256_loadu_ps(x + k), x1 = _mm256_loadu_ps(x + k + 8);
            for (int i = 0; i < 4; ++i) {
                lo[i] = _mm256_fmadd_ps(load8(w.type, rows[i], k), x0, lo[i]);
                hi[i] = _mm256_fmadd_ps(load8(w.type, rows[i], k + 8), x1, hi[i]);
            }
        }
        for (int i = 0; i < n; ++i) {
            alignas(32) float l[16], tail[16];
            _mm256_store_ps(l, lo[i]);
            _mm256_store_ps(l + 8, hi[i]);
            if (full < K) {
                decodeFloatRow(w.type, rows[i] + full * eb, tail, K - full);
                for (int64_t k = full; k < K; ++k) l[k & 15] = fmaScalar(tail[k - full], x[k], l[k & 15]);
            }
            y[r + i] = reduce16v(_mm256_load_ps(l), _mm256_load_ps(l + 8));
        }
    }
}

// Prefill with float weights (K a multiple of 16): the outer-product GEMM,
// vectorized across rows instead of along k. The canonical chain of output
// (r, t) in lane l runs over k = l, l+16, l+32, ...; here one ymm holds that
// chain for 8 rows at once, so each step is a BLIS-style outer product of 16
// rows (2 vector loads) by 6 tokens (6 broadcasts) into 12 accumulators, and
// the fixed reduce16 tree becomes vector adds across lanes (bit for bit the
// same sums, 8 rows per add). Layouts, each 16 lanes of `steps` = K/16 steps:
//   activations (packed once per call by pack(), shared by the threads):
//     per tile of 6 tokens, per chunk of kFloatChunk columns (contiguous, so
//     each is one long stream) [l][k/16][6 tokens], missing tokens zero;
//   weights (per 16-row tile and chunk, converted to f32 by the calling
//     thread): [l][k/16][16 rows], lanes floatLanePitch() floats apart, missing rows zero;
//   accumulators: per token tile [l][6 tokens][2 halves of 8 rows], kept
//     across chunks (storing a vector is exact, so the order is canonical).
// Loops: 32-row block > chunk > token tile > row tile > lane: the block's
// chunk of weights (256 KiB at 2048 columns) stays in L2, each token tile's chunk is read
// from L3 once per block. Measured on an AMD EPYC Zen 3 class (busy shared
// VM, old/new interleaved, `cairn-cli bench-kernels --types F16 --rows R
// --cols C -p 512 -t 1 -r 8`), GFLOP/s one thread, 4 x 3 half passes ->
// this: 2048x2048 38-48 -> 52-80 (3 pairs), 2048x8192 31 -> 55-66, 8192x2048
// 46 -> 74-77. The first version (16-row tiles, activations lane-major)
// ran 25 at 2048x8192: per-call streams of 1.5-3 KiB from L3/memory.
// Chunks of 8192 columns, not 2048: a K of several chunks keeps every token
// tile's accumulators in memory between chunks (1 MiB for 32 rows x 512
// tokens), which evicted the block's packed weights from L2 at each chunk;
// one chunk for llama-1b's ffn_down (K = 8192) reads its 1 MiB panel from L2
// and L3 instead. AMD EPYC Zen 4 (family 25 model 17) with `--path avx2`, 3
// interleaved rounds, GFLOP/s chunk 2048 / 8192 (`bench-kernels --types F16
// --rows R --cols C -p 512 -t T -r 5 --decode-mib 0`): 2048x8192 -t 1
// 75.1-76.3 / 95.4-96.8, -t 2 153.3-162.0 / 201.3-204.8; 8192x2048 (one
// chunk either way) -t 1 106.3-106.9 / 107.0-107.1. llama-1b F16 pp512 with
// CAIRN_KERNELS=avx2 (`bench -p 512 -n 0 -t 2 -r 2`) 99.8 / 101.0, 99.0 / 101.1.
constexpr int kFloatTileRows = 16, kFloatTileTok = 6;
constexpr int64_t kFloatChunk = 8192, kFloatBlockRows = 32;

// 16 rows x T tokens, one lane, `steps` steps of the chain. Named registers,
// not arrays: GCC 12 at -O3 kept an array of accumulators mirrored in memory
// (12 stores per step, 25 GFLOP/s instead of the FMA-bound loop).
// Fresh: the chains start at zero (the first K chunk) instead of from acc.
template <int T, bool Fresh>
void floatLaneTile(const float* wp, const float* xp, int64_t steps, __m256* acc) {
    const __m256 z = _mm256_setzero_ps();
    auto start = [&](int i) { return Fresh || i >= 2 * T ? z : acc[i]; };
    __m256 a0 = start(0), b0 = start(1);
    __m256 a1 = start(2), b1 = start(3);
    __m256 a2 = start(4), b2 = start(5);
    __m256 a3 = start(6), b3 = start(7);
    __m256 a4 = start(8), b4 = start(9);
    __m256 a5 = start(10), b5 = start(11);
    // Two steps per iteration: AMD EPYC Zen 3 (`lscpu` family 25 model 1),
    // interleaved with the plain loop, `bench-kernels --types F16 --rows 2048
    // --cols 2048 -p 512 -r 5` median of 8 rounds 73.2 -> 76.7 GFLOP/s (-t 1),
    // 133.7 -> 138.2 (-t 2); llama-1b F16 pp512 (`bench -p 512 -n 0 -t 2 -r
    // 2`) 58.0 / 63.6 / 61.3 -> 62.1 / 65.5 / 66.4 t/s in three pairs.
#pragma GCC unroll 2
    for (int64_t s = 0; s < steps; ++s, wp += kFloatTileRows, xp += kFloatTileTok) {
        const __m256 w0 = _mm256_load_ps(wp), w1 = _mm256_load_ps(wp + 8);
        auto fma2 = [&](__m256& lo, __m256& hi, int t) {
            const __m256 x = _mm256_broadcast_ss(xp + t);
            lo = _mm256_fmadd_ps(w0, x, lo);
            hi = _mm256_fmadd_ps(w1, x, hi);
        };
        forEachPair<T>(fma2, a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5);
    }
    auto store2 = [&](__m256& lo, __m256& hi, int t) {
        acc[2 * t] = lo;
        acc[2 * t + 1] = hi;
    };
    forEachPair<T>(store2, a0, b0, a1, b1, a2, b2, a3, b3, a4, b4, a5, b5);
}

using FloatLaneTileFn = void (*)(const float*, const float*, int64_t, __m256*);
template <bool Fresh>
FloatLaneTileFn floatLaneTileFor(int t) {
    switch (t) {
    case 6: return floatLaneTile<6, Fresh>;
    case 5: return floatLaneTile<5, Fresh>;
    case 4: return floatLaneTile<4, Fresh>;
    case 3: return floatLaneTile<3, Fresh>;
    case 2: return floatLaneTile<2, Fresh>;
    default: return floatLaneTile<1, Fresh>;
    }
}

// 8x8 transpose of f32 (v[i] row i in, v[j] column j out).
inline void transpose8(__m256* v) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(v[i], v[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
    }
    for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
        v[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
    }
}

// Floats between the starts of two lanes of a packed weight tile: the lane's
// steps plus 128 bytes, so the 8 stores of one transposed block do not fall in
// one L1 set (unpadded, lanes are 8 KiB apart at 2048 columns). Measured AMD
// EPYC Zen 5 with CAIRN_KERNELS=avx2, `cairn-cli bench-kernels --types F16
// --rows 4096 --cols 2048 -p 128 -t 1 -r 15 --decode-mib 0`, 3 interleaved
// rounds, GFLOP/s: unpadded 91-92, padded 96-98.
constexpr int64_t floatLanePitch(int64_t steps) { return steps * kFloatTileRows + 32; }

// Half h (rows 8h..8h+7, null when missing) of a packed weight tile. The row
// type and whether all 8 rows exist are template arguments, so the loop has
// no per-row test and no type switch.
template <TensorType Type, bool Full>
void packFloatHalf(const FloatRow* rows, int64_t kc, int64_t len, int h, float* out) {
    const int64_t steps = len / 16;
    for (int64_t k = 0; k < len; k += 8) {
        __m256 v[8];
        for (int i = 0; i < 8; ++i)
            v[i] = Full || rows[i].start ? load8(Type, rows[i].start, rows[i].at(kc + k)) : _mm256_setzero_ps();
        transpose8(v);
        for (int j = 0; j < 8; ++j) {
            const int64_t kk = k + j;
            _mm256_store_ps(out + (kk & 15) * floatLanePitch(steps) + kk / 16 * kFloatTileRows + 8 * h, v[j]);
        }
    }
}

template <TensorType Type>
void packFloatHalfOf(const FloatRow* rows, bool full, int64_t kc, int64_t len, int h, float* out) {
    if (full) packFloatHalf<Type, true>(rows, kc, len, h, out);
    else packFloatHalf<Type, false>(rows, kc, len, h, out);
}

// Rows [r, r + n) (n <= 16), columns [kc, kc + len), as f32 in the weight
// layout above (steps = len / 16).
void packFloatWeights(const MatrixView& w, int64_t r, int n, int64_t kc, int64_t len, float* out) {
    for (int h = 0; h < 2; ++h) {
        FloatRow rows[8];
        for (int i = 0; i < 8; ++i) rows[i] = 8 * h + i < n ? floatRow(w, r + 8 * h + i) : FloatRow{};
        const bool full = n >= 8 * h + 8;
        switch (w.type) {
        case TensorType::F16: packFloatHalfOf<TensorType::F16>(rows, full, kc, len, h, out); break;
        case TensorType::BF16: packFloatHalfOf<TensorType::BF16>(rows, full, kc, len, h, out); break;
        default: packFloatHalfOf<TensorType::F32>(rows, full, kc, len, h, out); break;
        }
    }
}

PackPlan floatPackPlan(const Activations& a) {
    if (a.nTokens < 2 || a.cols % 16 != 0) return {};
    return {(a.nTokens + kFloatTileTok - 1) / kFloatTileTok, size_t(kFloatTileTok * a.cols) * 4};
}

// Each step (16 columns) of a token tile: the 6 tokens' two 8-column halves
// transposed (2 zero rows make them 8x8), and each lane's 6 floats stored as
// 4 + 2. The scalar copy it replaces read a column of 6 lines per float: 2.1 %
// of llama-1b F16 pp512 (`perf`, AMD EPYC Zen 4, family 25 model 17), 1.0 %
// after.
void packFloatTokens(const Activations& a, uint8_t* p, int64_t g0, int64_t g1) {
    const int64_t K = a.cols;
    for (int64_t g = g0; g < g1; ++g) {
        const float* x[kFloatTileTok];
        for (int t = 0; t < kFloatTileTok; ++t) {
            const int64_t tok = g * kFloatTileTok + t;
            x[t] = tok < a.nTokens ? a.x + tok * a.ldx : nullptr;
        }
        for (int64_t kc = 0; kc < K; kc += kFloatChunk) {
            const int64_t cs = std::min(kFloatChunk, K - kc) / 16;
            float* dst = reinterpret_cast<float*>(p) + (g * K + kc) * kFloatTileTok;
            for (int64_t s = 0; s < cs; ++s)
                for (int h = 0; h < 2; ++h) {
                    const int64_t k = kc + 16 * s + 8 * h;
                    __m256 v[8];
                    for (int t = 0; t < kFloatTileTok; ++t)
                        v[t] = x[t] ? _mm256_loadu_ps(x[t] + k) : _mm256_setzero_ps();
                    v[6] = v[7] = _mm256_setzero_ps();
                    transpose8(v);
                    for (int j = 0; j < 8; ++j) {
                        float* d = dst + ((8 * h + j) * cs + s) * kFloatTileTok;
                        _mm_storeu_ps(d, _mm256_castps256_ps128(v[j]));
                        _mm_storel_pi(reinterpret_cast<__m64*>(d + 4), _mm256_extractf128_ps(v[j], 1));
                    }
                }
        }
    }
}

// One token tile's 16 lanes reduced by the reduce16 tree, 8 rows per add;
// rows [r, r + n) of tokens [tok, tok + nt) stored.
void reduceFloatTile(const __m256* acc, int nt, int64_t tok, int64_t r, int n, float* y, int64_t ldy) {
    constexpr int kLaneVecs = 2 * kFloatTileTok;
    for (int t = 0; t < nt; ++t)
        for (int h = 0; h < 2; ++h) {
            const int o = 2 * t + h;
            __m256 s8[8], s4[4];
            for (int i = 0; i < 8; ++i) s8[i] = _mm256_add_ps(acc[i * kLaneVecs + o], acc[(i + 8) * kLaneVecs + o]);
            for (int i = 0; i < 4; ++i) s4[i] = _mm256_add_ps(s8[i], s8[i + 4]);
            const __m256 sum = _mm256_add_ps(_mm256_add_ps(s4[0], s4[2]), _mm256_add_ps(s4[1], s4[3]));
            float* dst = y + (tok + t) * ldy + r + 8 * h;
            const int m = std::min(8, n - 8 * h);
            if (m == 8) {
                _mm256_storeu_ps(dst, sum);
            } else if (m > 0) {
                alignas(32) float tmp[8];
                _mm256_store_ps(tmp, sum);
                std::memcpy(dst, tmp, size_t(m) * 4);
            }
        }
}

void floatGemm(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols;
    const int64_t tiles = (a.nTokens + kFloatTileTok - 1) / kFloatTileTok;
    const int64_t chunk = std::min(K, kFloatChunk), chunks = (K + chunk - 1) / chunk;
    constexpr int kTileVecs = 16 * 2 * kFloatTileTok;  // accumulators per token tile
    const int64_t blockTiles = kFloatBlockRows / kFloatTileRows;
    // One K chunk: each (row tile, token tile) is reduced as soon as it is
    // done, so one slot per row tile; otherwise they live across chunks.
    const int64_t accTiles = chunks == 1 ? 1 : tiles;
    auto* wp = reinterpret_cast<float*>(scratch(1, size_t(blockTiles * 16 * floatLanePitch(chunk / 16)) * 4));
    auto* acc = reinterpret_cast<__m256*>(scratch(2, size_t(blockTiles * accTiles * kTileVecs) * 32));
    const auto* xp = reinterpret_cast<const float*>(a.packed);
    for (int64_t rb = r0; rb < r1; rb += kFloatBlockRows) {
        const int64_t rbEnd = std::min(r1, rb + kFloatBlockRows);
        const int nrt = int((rbEnd - rb + kFloatTileRows - 1) / kFloatTileRows);
        for (int64_t kc = 0; kc < K; kc += chunk) {
            const int64_t len = std::min(chunk, K - kc), cs = len / 16;
            for (int rt = 0; rt < nrt; ++rt) {
                const int64_t r = rb + rt * kFloatTileRows;
                packFloatWeights(w, r, int(std::min<int64_t>(kFloatTileRows, rbEnd - r)), kc, len,
                                 wp + rt * 16 * floatLanePitch(cs));
            }
            for (int64_t tt = 0; tt < tiles; ++tt) {
                const int nt = int(std::min<int64_t>(kFloatTileTok, a.nTokens - tt * kFloatTileTok));
                const FloatLaneTileFn fn = kc == 0 ? floatLaneTileFor<true>(nt) : floatLaneTileFor<false>(nt);
                const float* xt = xp + (tt * K + kc) * kFloatTileTok;
                for (int rt = 0; rt < nrt; ++rt) {
                    __m256* tacc = acc + (rt * accTiles + (chunks == 1 ? 0 : tt)) * kTileVecs;
                    const float* wt = wp + rt * 16 * floatLanePitch(cs);
                    // The next tile's accumulators (from L3 after the first chunk)
                    // ahead of the loads at a call's start, which would stall it.
                    const bool lastTile = rt + 1 == nrt && tt + 1 == tiles;
                    const auto* nextAcc = kc == 0 || lastTile
                        ? nullptr
                        : reinterpret_cast<const uint8_t*>(rt + 1 < nrt ? tacc + accTiles * kTileVecs
                                                                        : acc + (tt + 1) * kTileVecs);
                    for (int l = 0; l < 16; ++l) {
                        if (nextAcc) prefetchLines(nextAcc + l * 384 - 1, 384);
                        fn(wt + l * floatLanePitch(cs), xt + l * cs * kFloatTileTok, cs, tacc + l * 2 * kFloatTileTok);
                    }
                    if (kc + len == K) {
                        const int64_t r = rb + rt * kFloatTileRows;
                        reduceFloatTile(tacc, nt, tt * kFloatTileTok, r,
                                        int(std::min<int64_t>(kFloatTileRows, rbEnd - r)), y, ldy);
                    }
                }
            }
        }
    }
}

void floatRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols;
    if (a.nTokens == 1) {
        floatRowsOneToken(w, r0, r1, a.x, y);
        return;
    }
    if (K % 16 == 0) {
        floatGemm(w, r0, r1, a, y, ldy);
        return;
    }
    auto* wf = reinterpret_cast<float*>(scratch(1, size_t(4 * K) * 4));
    for (int64_t r = r0; r < r1; r += 4) {
        const int rr = int(std::min<int64_t>(4, r1 - r));
        for (int i = 0; i < rr; ++i) {  // once per call, reused by every token
            const uint8_t* row = w.row(r + i);
            int64_t k = 0;
            for (; k + 8 <= K; k += 8) _mm256_storeu_ps(wf + i * K + k, load8(w.type, row, k));
            if (k < K) decodeFloatRow(w.type, row + k * floatElementBytes(w.type), wf + i * K + k, K - k);
        }
        const float* rows[4] = {wf, wf + K, wf + 2 * K, wf + 3 * K};
        for (int64_t t = 0; t < a.nTokens; ++t) {
            float out[4];
            const float* x = a.x + t * a.ldx;
            switch (rr) {
            case 4: floatDot<4>(rows, K, x, out); break;
            case 3: floatDot<3>(rows, K, x, out); break;
            case 2: floatDot<2>(rows, K, x, out); break;
            default: floatDot<1>(rows, K, x, out); break;
            }
            for (int i = 0; i < rr; ++i) y[t * ldy + r + i] = out[i];
        }
    }
}

// ---------------------------------------------------------------------------
// GEMM with tokens in lanes (8 per ymm), as the AVX-512 path does with 16:
// activations packed per (group, block) as [k/4][8 tokens][4 bytes], weights
// decoded once per call, 4 weight bytes broadcast against 8 tokens; maddubs
// and madd (3 instructions per 32 multiply-adds) instead of vpdpbusd.

// The fewest tokens the GEMM takes (fewer: rows32 / rowsK, a token at a
// time). Under two groups of 8 tokens the GEMM decodes every weight for few
// tokens, and on the tiles the matvec, reading the rows from cache after the
// first token, is well ahead there: the Q4_0/Q8_0 tiles run it up to 16
// tokens, the Q4_K/Q6_K tiles up to 8, the file layout up to 5 (32-element
// formats) or 3 (K formats). Intel Xeon family 6 model 207, `CAIRN_KERNELS=avx2
// bench -m llama-1b-T.gguf -p N -n 1 -t 2 -r 5` (`CAIRN_ROW_TILES=off` for the
// file layout), t/s, two rounds each:
//   Q4_0 tiles, GEMM from 6 / 9 / 17: pp6 39.47 / 76.38 / 76.81, 36.32 / 53.59
//   / 60.17; pp8 58.70 / 68.46 / 73.11, 49.14 / 85.75 / 84.98; pp12 56.26 /
//   60.42 / 75.40, 56.40 / 61.13 / 85.76; pp16 62.53 / 62.13 / 94.79, 77.50 /
//   79.57 / 99.64. (From 6 / 17 / 33: pp24 88.86 / 92.43 / 105.12, 90.95 /
//   89.63 / 98.56; pp32 94.60 / 90.75 / 107.24, 93.29 / 96.14 / 102.63; from
//   33 / 65 at pp64 95.97 / 110.23, 101.68 / 109.53: on this core the matvec
//   stays ahead further, which a CPU with a stronger GEMM or a smaller L3 may
//   not show, so 17.)
//   Q8_0 tiles, from 6 / 9 / 17: pp6 33.91 / 46.00 / 45.47, 33.76 / 46.06 /
//   48.57; pp8 43.88 / 41.56 / 49.59, 44.53 / 51.58 / 50.14; pp12 44.65 /
//   40.64 / 53.33, 44.47 / 45.70 / 57.75; pp16 59.23 / 60.57 / 57.79, 60.63 /
//   60.50 / 60.79.
//   Q4_K tiles, from 4 / 9 / 17 / 33: pp4 31.03 / 54.24 / 47.26 / 45.30,
//   30.74 / 44.57 / 54.28 / 54.25; pp8 60.92 / 64.71 / 64.51 / 53.41, 59.65 /
//   61.78 / 65.94 / 53.31; pp16 76.31 / 72.06 / 71.50 / 71.42, 61.48 / 61.64
//   / 68.26 / 74.23; pp32 81.47 / 87.54 / 86.69 / 77.00, 91.82 / 90.57 /
//   89.30 / 71.18. Its file layout, from 4 / 9 / 17: pp8 56.01 / 34.90 /
//   36.63, 68.98 / 37.50 / 45.07.
inline int64_t gemmMinTokens(int blockSize, bool rowTiles) {
    if (blockSize == 32) return rowTiles ? 17 : 6;
    return rowTiles ? 9 : 4;
}

constexpr size_t kPack32 = 256 + 3 * 32;  // codes, dx, xoff, sx
constexpr size_t kPackK = 2048 + 32 + 256;  // codes, dx, bsum pairs [8][8 tokens][2]

PackPlan packPlan(const Activations& a) {
    if (a.blockSize == 0) return floatPackPlan(a);
    if (a.nTokens < gemmMinTokens(a.blockSize, a.rowTiles)) return {};
    return {(a.nTokens + 7) / 8, size_t(a.nBlocks) * (a.blockSize == 32 ? kPack32 : kPackK)};
}

void pack(const Activations& a, uint8_t* p, int64_t g0, int64_t g1) {
    if (a.blockSize == 0) {
        packFloatTokens(a, p, g0, g1);
        return;
    }
    const int64_t nb = a.nBlocks, bs = a.blockSize;
    const size_t per = bs == 32 ? kPack32 : kPackK;
    for (int64_t g = g0; g < g1; ++g) {
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t* dst = p + size_t(g * nb + b) * per;
            auto* dx = reinterpret_cast<float*>(dst + bs * 8);
            for (int t = 0; t < 8; ++t) {
                const int64_t tok = g * 8 + t;
                const bool valid = tok < a.nTokens;
                const int8_t* q = a.q + tok * a.cols + b * bs;
                for (int k4 = 0; k4 < bs / 4; ++k4) {
                    if (valid) std::memcpy(dst + k4 * 32 + t * 4, q + 4 * k4, 4);
                    else std::memset(dst + k4 * 32 + t * 4, 0, 4);
                }
                dx[t] = valid ? a.d[tok * nb + b] : 0.f;
                if (bs == 32) {
                    reinterpret_cast<int32_t*>(dst + 256 + 32)[t] = valid ? a.xoff[tok * nb + b] : 0;
                    reinterpret_cast<float*>(dst + 256 + 64)[t] = valid ? a.sx[tok * nb + b] : 0.f;
                } else {
                    auto* bp = reinterpret_cast<int16_t*>(dst + 2048 + 32);
                    for (int jp = 0; jp < 8; ++jp) {
                        bp[(jp * 8 + t) * 2] = valid ? a.bsum[tok * (a.cols / 16) + b * 16 + 2 * jp] : 0;
                        bp[(jp * 8 + t) * 2 + 1] = valid ? a.bsum[tok * (a.cols / 16) + b * 16 + 2 * jp + 1] : 0;
                    }
                }
            }
        }
    }
}

inline void storeTokens8(__m256 v, int64_t tok0, int64_t nTokens, float* y, int64_t ldy, int64_t r) {
    alignas(32) float tmp[8];
    _mm256_store_ps(tmp, v);
    for (int t = 0; t < 8 && tok0 + t < nTokens; ++t) y[(tok0 + t) * ldy + r] = tmp[t];
}

// acc + the sum of 4 code bytes x 4 activation bytes per token lane. SIGNED:
// codes are Q8_0's u = q + 128, used as q with the sign trick (maddubs would
// saturate).
template <bool SIGNED>
inline __m256i dot4Add(__m256i acc, __m256i wv, __m256i xv) {
    if constexpr (SIGNED) {
        const __m256i q = _mm256_xor_si256(wv, _mm256_set1_epi8(char(0x80)));
        return dotAdd(acc, _mm256_sign_epi8(q, q), _mm256_sign_epi8(xv, q));
    } else {
        return dotAdd(acc, wv, xv);
    }
}

// Decoded tiles: codes u[r][K], d/m per block (32) or s/mn per 16 and d/dmin (K).
template <int R, int NG, bool MIN, bool SIGNED>
void gemm32Tile(const uint8_t* u, int64_t K, const float* dw, const float* mw, int64_t nb, const uint8_t* px,
                size_t groupStride, __m256* out) {
    __m256 acc[R][NG];
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* xb[NG];
        for (int g = 0; g < NG; ++g) xb[g] = px + g * groupStride + b * kPack32;
        __m256i is[R][NG];
        for (int r = 0; r < R; ++r)
            for (int g = 0; g < NG; ++g) is[r][g] = _mm256_setzero_si256();
        for (int k4 = 0; k4 < 8; ++k4) {
            __m256i xv[NG];
            for (int g = 0; g < NG; ++g) xv[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xb[g] + k4 * 32));
            for (int r = 0; r < R; ++r) {
                const __m256i wv = _mm256_set1_epi32(load32(u + r * K + b * 32 + 4 * k4));
                for (int g = 0; g < NG; ++g) is[r][g] = dot4Add<SIGNED>(is[r][g], wv, xv[g]);
            }
        }
        for (int g = 0; g < NG; ++g) {
            const __m256 dx = _mm256_load_ps(reinterpret_cast<const float*>(xb[g] + 256));
            const __m256i xo = _mm256_load_si256(reinterpret_cast<const __m256i*>(xb[g] + 288));
            for (int r = 0; r < R; ++r) {
                const __m256i isum = SIGNED ? is[r][g] : _mm256_sub_epi32(is[r][g], xo);
                acc[r][g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(_mm256_set1_ps(dw[r * nb + b]), dx),
                                            acc[r][g]);
                if constexpr (MIN)
                    acc[r][g] = _mm256_fmadd_ps(_mm256_set1_ps(mw[r * nb + b]),
                                                _mm256_load_ps(reinterpret_cast<const float*>(xb[g] + 320)), acc[r][g]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) out[r * NG + g] = acc[r][g];
}

using Gemm32Fn = void (*)(const uint8_t*, int64_t, const float*, const float*, int64_t, const uint8_t*, size_t,
                          __m256*);
template <int R, int NG>
Gemm32Fn pick32(bool min, bool sign) {
    if (sign) return gemm32Tile<R, NG, false, true>;
    return min ? gemm32Tile<R, NG, true, false> : gemm32Tile<R, NG, false, false>;
}

constexpr int kGemmRows = 2, kChunkRows = 16;  // rows a GEMM tile computes, rows decoded at a time

void gemm32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols, nb = a.nBlocks, groups = (a.nTokens + 7) / 8;
    const bool min = quantInfo(w.type).hasMin, sign = w.type == TensorType::Q8_0;
    const size_t gs = size_t(nb) * kPack32;
    uint8_t* u = scratch(1, size_t(kChunkRows * K));
    auto* dw = reinterpret_cast<float*>(scratch(2, size_t(2 * kChunkRows * nb) * 4));
    float* mw = dw + kChunkRows * nb;
    for (int64_t rc = r0; rc < r1; rc += kChunkRows) {
        const int nr = int(std::min<int64_t>(kChunkRows, r1 - rc));
        // A chunk is a whole Tiles16 tile (Q4_0, Q8_0: readsRowTiles) or rows in the file layout.
        static_assert(kChunkRows == kTileRows);
        if (w.layout == RowLayout::Tiles16 && rc + kChunkRows <= w.rows / kChunkRows * kChunkRows)
            decodeTile16(w.type, w.row(rc), nb, K, u, dw, mw);
        else
            for (int i = 0; i < nr; ++i) decodeRow32(w.type, w.row(rc + i), nb, u + i * K, dw + i * nb, mw + i * nb);
        for (int64_t g = 0; g < groups; g += 2) {
            const int ng = int(std::min<int64_t>(2, groups - g));
            for (int rt = 0; rt < nr; rt += kGemmRows) {
                const int rr = std::min(kGemmRows, nr - rt);
                const Gemm32Fn fn = ng == 2 ? (rr == 2 ? pick32<2, 2>(min, sign) : pick32<1, 2>(min, sign))
                                            : (rr == 2 ? pick32<2, 1>(min, sign) : pick32<1, 1>(min, sign));
                __m256 out[kGemmRows * 2];
                fn(u + rt * K, K, dw + rt * nb, mw + rt * nb, nb, a.packed + size_t(g) * gs, gs, out);
                for (int i = 0; i < rr; ++i)
                    for (int gi = 0; gi < ng; ++gi)
                        storeTokens8(out[i * ng + gi], (g + gi) * 8, a.nTokens, y, ldy, rc + rt + i);
            }
        }
    }
}

template <int R, int NG, bool MIN, bool SMALL>
void gemmKTile(const uint8_t* u, int64_t K, const int16_t* s, const int16_t* mn, const float* d, const float* dmin,
               int64_t nb, int offset, const uint8_t* px, size_t groupStride, __m256* out) {
    __m256 acc[R][NG];
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm256_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* xb[NG];
        for (int g = 0; g < NG; ++g) xb[g] = px + g * groupStride + b * kPackK;
        __m256i is[R][NG];
        for (int r = 0; r < R; ++r)
            for (int g = 0; g < NG; ++g) is[r][g] = _mm256_setzero_si256();
        for (int j = 0; j < 16; ++j) {
            __m256i dot[R][NG];
            for (int r = 0; r < R; ++r)
                for (int g = 0; g < NG; ++g) dot[r][g] = _mm256_setzero_si256();
            for (int k4 = 0; k4 < 4; ++k4) {
                __m256i xv[NG];
                for (int g = 0; g < NG; ++g)
                    xv[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(xb[g] + (4 * j + k4) * 32));
                for (int r = 0; r < R; ++r) {
                    const __m256i wv = _mm256_set1_epi32(load32(u + r * K + b * 256 + 16 * j + 4 * k4));
                    for (int g = 0; g < NG; ++g) dot[r][g] = dot4Add<false>(dot[r][g], wv, xv[g]);
                }
            }
            for (int r = 0; r < R; ++r) {
                const int16_t sj = s[(r * nb + b) * 16 + j];
                for (int g = 0; g < NG; ++g)
                    is[r][g] = _mm256_add_epi32(is[r][g],
                                                SMALL ? _mm256_madd_epi16(dot[r][g], _mm256_set1_epi32(uint16_t(sj)))
                                                      : _mm256_mullo_epi32(dot[r][g], _mm256_set1_epi32(sj)));
            }
        }
        for (int g = 0; g < NG; ++g) {
            const __m256 dx = _mm256_load_ps(reinterpret_cast<const float*>(xb[g] + 2048));
            const uint8_t* bp = xb[g] + 2048 + 32;
            for (int r = 0; r < R; ++r) {
                const int16_t* sr = s + (r * nb + b) * 16;
                const int16_t* mr = mn + (r * nb + b) * 16;
                __m256i os = _mm256_setzero_si256(), ms = _mm256_setzero_si256();
                for (int jp = 0; jp < 8; ++jp) {
                    const __m256i bsv = _mm256_load_si256(reinterpret_cast<const __m256i*>(bp + jp * 32));
                    if (offset)
                        os = _mm256_add_epi32(
                            os,
                            _mm256_madd_epi16(_mm256_set1_epi32(int32_t(uint16_t(sr[2 * jp])) |
                                                                int32_t(uint32_t(uint16_t(sr[2 * jp + 1])) << 16)),
                                              bsv));
                    if constexpr (MIN)
                        ms = _mm256_add_epi32(
                            ms,
                            _mm256_madd_epi16(_mm256_set1_epi32(int32_t(uint16_t(mr[2 * jp])) |
                                                                int32_t(uint32_t(uint16_t(mr[2 * jp + 1])) << 16)),
                                              bsv));
                }
                const __m256i isum = _mm256_sub_epi32(is[r][g], _mm256_mullo_epi32(os, _mm256_set1_epi32(offset)));
                acc[r][g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum), _mm256_mul_ps(_mm256_set1_ps(d[r * nb + b]), dx),
                                            acc[r][g]);
                if constexpr (MIN) {
                    const __m256 negMin =
                        _mm256_xor_ps(_mm256_mul_ps(_mm256_set1_ps(dmin[r * nb + b]), dx), _mm256_set1_ps(-0.f));
                    acc[r][g] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(ms), negMin, acc[r][g]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) out[r * NG + g] = acc[r][g];
}

using GemmKFn = void (*)(const uint8_t*, int64_t, const int16_t*, const int16_t*, const float*, const float*, int64_t,
                         int, const uint8_t*, size_t, __m256*);
template <int R, int NG>
GemmKFn pickK(bool min, bool small) {
    if (min) return small ? gemmKTile<R, NG, true, true> : gemmKTile<R, NG, true, false>;
    return small ? gemmKTile<R, NG, false, true> : gemmKTile<R, NG, false, false>;
}

void gemmK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    const int64_t K = a.cols, nb = a.nBlocks, groups = (a.nTokens + 7) / 8;
    // 16-element code dots fit int16 for codes <= 15 (Q4_K), 7 (Q3_K), 3 (Q2_K).
    const bool small = w.type == TensorType::Q4_K || w.type == TensorType::Q3_K || w.type == TensorType::Q2_K;
    const size_t gs = size_t(nb) * kPackK;
    uint8_t* u = scratch(1, size_t(kChunkRows * K));
    uint8_t* meta = scratch(2, size_t(kChunkRows * nb) * (64 + 8));
    auto* s = reinterpret_cast<int16_t*>(meta);
    int16_t* mn = s + kChunkRows * nb * 16;
    auto* d = reinterpret_cast<float*>(mn + kChunkRows * nb * 16);
    float* dmin = d + kChunkRows * nb;
    for (int64_t rc = r0; rc < r1; rc += kChunkRows) {
        const int nr = int(std::min<int64_t>(kChunkRows, r1 - rc));
        decodeChunkK(w, rc, nr, nb, K, u, s, mn, d, dmin);
        for (int64_t g = 0; g < groups; g += 2) {
            const int ng = int(std::min<int64_t>(2, groups - g));
            for (int rt = 0; rt < nr; rt += kGemmRows) {
                const int rr = std::min(kGemmRows, nr - rt);
                const GemmKFn fn = ng == 2
                    ? (rr == 2 ? pickK<2, 2>(info.hasMin, small) : pickK<1, 2>(info.hasMin, small))
                    : (rr == 2 ? pickK<2, 1>(info.hasMin, small) : pickK<1, 1>(info.hasMin, small));
                __m256 out[kGemmRows * 2];
                fn(u + rt * K, K, s + rt * nb * 16, mn + rt * nb * 16, d + rt * nb, dmin + rt * nb, nb, info.offset,
                   a.packed + size_t(g) * gs, gs, out);
                for (int i = 0; i < rr; ++i)
                    for (int gi = 0; gi < ng; ++gi)
                        storeTokens8(out[i * ng + gi], (g + gi) * 8, a.nTokens, y, ldy, rc + rt + i);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Activation quantizers: one token straight into matmul's arrays, the bytes
// of quantizeRowQ8_0 / quantizeRowQ8K unpacked by quantizeTokenReference (as
// the AVX-512 ones): the scalar roundf was 2 % of qwen3.5-0.8b's decode under
// perf (quantizeRowQ8_0 1.5 %, roundf 0.8 %) on an AMD EPYC.

// roundf (ties away from zero) of each lane, exactly (|p| < 2^23).
inline __m256 roundHalfAway(__m256 p) {
    const __m256 sign = _mm256_set1_ps(-0.f);
    const __m256 t = _mm256_round_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = _mm256_andnot_ps(sign, _mm256_sub_ps(p, t));
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    const __m256 one = _mm256_or_ps(_mm256_set1_ps(1.f), _mm256_and_ps(p, sign));
    return _mm256_add_ps(t, _mm256_and_ps(up, one));
}

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

// 32 int32 lanes (|v| <= 127) to 32 bytes in order.
inline void storeBytes32(int8_t* out, __m256i q0, __m256i q1, __m256i q2, __m256i q3) {
    const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(q0, q1), _mm256_packs_epi32(q2, q3));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out),
                        _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
}

// Q8_0 blocks straight into matmul's arrays (TokenQ8), eight at a time:
// their scales are divided as one vector (each lane the reference's scalar
// division), so no block waits on its own two divisions.
void quantizeToken32(const float* x, int64_t n, int32_t offset, const TokenQ8& out) {
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    const int64_t nb = n / 32;
    for (int64_t b0 = 0; b0 < nb; b0 += 8) {
        const int m = int(std::min<int64_t>(8, nb - b0));
        alignas(32) float amax[8] = {}, id[8], d[8];
        for (int i = 0; i < m; ++i) {
            __m256 mv = _mm256_setzero_ps();
            for (int j = 0; j < 4; ++j)
                mv = _mm256_max_ps(mv, _mm256_and_ps(_mm256_loadu_ps(x + 32 * (b0 + i) + 8 * j), absMask));
            amax[i] = hmax(mv);
        }
        const __m256 dv = _mm256_div_ps(_mm256_load_ps(amax), _mm256_set1_ps(127.f));
        // id = d != 0 ? 1 / d : 0 (NEQ_UQ is C's !=)
        const __m256 nonzero = _mm256_cmp_ps(dv, _mm256_setzero_ps(), _CMP_NEQ_UQ);
        _mm256_store_ps(id, _mm256_and_ps(nonzero, _mm256_div_ps(_mm256_set1_ps(1.f), dv)));
        // The block keeps d as fp16, and the kernels read it back as float.
        _mm256_store_ps(d, _mm256_cvtph_ps(_mm256_cvtps_ph(dv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
        for (int i = 0; i < m; ++i) {
            const int64_t b = b0 + i;
            const __m256 idv = _mm256_set1_ps(id[i]);
            __m256i q[4];
            for (int j = 0; j < 4; ++j)
                q[j] = _mm256_cvttps_epi32(roundHalfAway(_mm256_mul_ps(_mm256_loadu_ps(x + 32 * b + 8 * j), idv)));
            storeBytes32(out.q + 32 * b, q[0], q[1], q[2], q[3]);
            const int32_t s0 = hsum(_mm256_add_epi32(q[0], q[1])), s1 = hsum(_mm256_add_epi32(q[2], q[3]));
            storeBlock32(out, b, s0, s1, d[i], offset);
        }
    }
}

void quantizeTokenK(const float* x, int64_t n, const TokenQ8& out) {
    const __m256 absMask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    for (int64_t b = 0; b < n / 256; ++b, x += 256) {
        int8_t* q = out.q + 256 * b;
        int16_t* bsum = out.bsum + 16 * b;
        __m256 m = _mm256_setzero_ps();
        // max(|x|, m) returns m where x is NaN: like the reference, amax is
        // the largest magnitude that is a number, so the search below ends.
        for (int j = 0; j < 256; j += 8) m = _mm256_max_ps(_mm256_and_ps(_mm256_loadu_ps(x + j), absMask), m);
        const float amax = hmax(m);
        if (amax == 0.0f) {
            storeZeroBlockK(out, b);
            continue;
        }
        // The reference keeps the first element of largest magnitude: the
        // first lane equal to amax, eight lanes a step.
        int first = 0;
        for (;; first += 8) {
            const int at = _mm256_movemask_ps(
                _mm256_cmp_ps(_mm256_and_ps(_mm256_loadu_ps(x + first), absMask), _mm256_set1_ps(amax), _CMP_EQ_OQ));
            if (at) {
                first += __builtin_ctz(unsigned(at));
                break;
            }
        }
        const float iscale = -127.f / x[first];
        const __m256 sv = _mm256_set1_ps(iscale);
        const __m256i most = _mm256_set1_epi32(127);
        for (int j = 0; j < 256; j += 32) {
            __m256i qv[4];
            // nearest_int: round to nearest even of the rounded product (the
            // default MXCSR mode); a NaN product (a NaN or infinite input)
            // gives 0, as in the reference.
            for (int k = 0; k < 4; ++k) {
                const __m256 p = _mm256_mul_ps(sv, _mm256_loadu_ps(x + j + 8 * k));
                qv[k] = _mm256_min_epi32(_mm256_cvtps_epi32(_mm256_and_ps(p, _mm256_cmp_ps(p, p, _CMP_ORD_Q))), most);
            }
            storeBytes32(q + j, qv[0], qv[1], qv[2], qv[3]);
            bsum[j / 16] = int16_t(hsum(_mm256_add_epi32(qv[0], qv[1])));
            bsum[j / 16 + 1] = int16_t(hsum(_mm256_add_epi32(qv[2], qv[3])));
        }
        storeBlockK(out, b, 1 / iscale);
    }
}

// Q4_0 and Q8_0 in Tiles16: the matvec tiles read them as they are (a token
// at a time, under gemmMinTokens), the GEMM through decodeTile16. Q4_K and
// Q6_K: the matvec tiles, and the GEMM through unpackWordTile. Float types:
// the one-token pairs and the GEMM's weight packing (floatRow).
bool readsRowTiles(TensorType type, int64_t) {
    return type == TensorType::Q4_0 || type == TensorType::Q8_0 || type == TensorType::Q4_K ||
        type == TensorType::Q6_K || isFloatWeight(type);
}

void rows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    switch (a.blockSize) {
    case 0: floatRows(w, r0, r1, a, y, ldy); break;
    case 32:
        if (a.packed) gemm32(w, r0, r1, a, y, ldy);
        else rows32(w, r0, r1, a, y, ldy);
        break;
    default:
        if (a.packed) gemmK(w, r0, r1, a, y, ldy);
        else rowsK(w, r0, r1, a, y, ldy);
        break;
    }
}

}  // namespace
}  // namespace cairn::tensor::kernels
