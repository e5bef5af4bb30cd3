// AVX-512 (F/BW/VL/DQ + VNNI) kernels. Built with those flags for this file
// only; dispatch.cpp calls in only when the CPU has them. Everything here is
// in an anonymous namespace and uses no STL containers, so no inline code
// compiled with AVX-512 can be merged into baseline code by the linker.
//
// Arithmetic: exactly the canonical one of kernels_common.h. Integer block
// sums are exact in any order; the float chain of each output is vectorized
// across outputs — tokens (GEMM, prefill) or rows (matvec, decode) — so every
// lane does the scalar sequence of fmas.
#include "tensor/avx512_float_loads.h"
#include "tensor/blocks.h"
#include "tensor/decode_rows_x86.h"
#include "tensor/float_gemm_avx512.h"
#include "tensor/kernels_common.h"
#include "tensor/q4k_scales_x86.h"

#include <immintrin.h>

// GCC 12 reports the deliberate self-initialisation inside its own
// _mm512_undefined_* helpers (the `__Y = __Y` used by many AVX-512
// intrinsics) as maybe-uninitialized at every inlining site, and as
// uninitialized where they are inlined in straight-line code (the nibble
// tile's last block step, the float tiles inside floatRows; GCC bug 105593);
// the warning is about its header.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

namespace cairn::tensor::kernels {
namespace {

// Below this many tokens a call runs the matvec per token (weights streamed
// once per token) instead of packing activations for the GEMM. Measured
// 2048x2048, 1 thread, from L2 (ms per call): Q4_0 matvec 0.10/token vs GEMM
// 0.72 at 4 and 8 tokens; Q8_0 0.16 vs 0.75; Q4_K 0.22 vs 0.80; F16 0.29 vs
// 1.13 at 4 and 1.71 at 8 tokens. From memory the matvec side only gets slower.
// Q4_K in tiles (matvecTileQ4_K, about twice the file layout's matvec from
// L2) runs the matvec below 32 tokens; from 32 its GEMM pays for gathering
// each tile's rows back (unpackWordTile). llama-1b Q4_K, Intel Xeon (family 6
// model 207), 2026-12-06, `bench -p P -n 0 -t 2 -r 3`, interleaved rounds,
// t/s, tiles with the GEMM from 4 / from 17 / file layout: pp4 19.4-28.2 /
// 48.2-55.5 / 22.4-31.1, pp8 48.3-54.6 / 61.1-90.6 / 44.3-49.8; tiles with
// the GEMM from 16 / from 33 / file layout: pp16 112-115 / 121-135 / 123-129,
// pp24 117-127 / 143-146 / 130-138, pp32 159-162 / 154-157 / 165-175.
// Q6_K in tiles (matvecTileQ6_K) takes the same threshold; llama-1b Q4_K
// (Q6_K in 40 % of its bytes), Q6_K tiled / not, `-r 3` and `-r 5`, t/s:
// pp4 73.0 / 56.7, 70.9 / 57.5; pp8 99.6 / 96.0, 102.6 / 75.8; pp32 147.3 /
// 141.6, 154.6 / 154.2, 154.4 / 157.3; pp64 192.1 / 188.6, 194.8 / 186.4,
// 187.5 / 197.8; pp128 205.9 / 207.5, 207.5 / 209.1, 206.2 / 217.1.
// The Q4_0/Q8_0 tiles (2026-12-06) run the matvec up to 8 tokens: with
// their GEMM from 6 / 17 / 33 tokens, llama-1b `bench -p N -n 1 -t 2 -r 5`,
// two rounds, t/s: Q4_0 pp6 46.17 / 80.88 / 82.23, 45.11 / 78.95 / 81.25;
// pp8 61.10 / 79.32 / 73.59, 58.07 / 102.72 / 96.88; pp12 86.92 / 94.62 /
// 127.55, 86.06 / 100.55 / 91.92; pp16 139.34 / 119.02 / 109.81, 110.31 /
// 99.58 / 100.72; Q8_0 pp6 35.95 / 58.45 / 56.78, 36.52 / 48.05 / 44.82;
// pp8 57.09 / 24.94 / 64.45, 46.05 / 51.62 / 53.71; pp12 89.69 / 72.39 /
// 64.35, 74.69 / 55.50 / 56.42 (the GEMM ahead from about 12).
inline int64_t gemmMinTokens(int blockSize, bool rowTiles = false) {
    if (blockSize == 32) return rowTiles ? 9 : 6;
    return rowTiles ? 32 : 4;
}

inline int32_t load32(const void* p) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline float halfToFloat(uint16_t h) { return _cvtsh_ss(h); }

// ---------------------------------------------------------------------------
// Activations packed for the GEMM: tokens in lanes, 16 per group. For each
// (group, block): the codes as [k/4][16 tokens][4 bytes] (one zmm per 4
// columns), then per-token block data.
//   32-formats: codes 512 B, dx[16] f32, xoff[16] i32, sx[16] f32
//   K formats:  codes 4096 B, dx[16] f32, bsum pairs [8][16 tokens][2] i16
constexpr size_t kPack32 = 512 + 3 * 64;
constexpr size_t kPackK = 4096 + 64 + 512;

PackPlan packPlan(const Activations& a) {
    if (a.blockSize == 0) return avx512::floatPackPlan(a, gemmMinTokens(0));
    if (a.nTokens < gemmMinTokens(a.blockSize, a.rowTiles)) return {};
    return {(a.nTokens + 15) / 16, size_t(a.nBlocks) * (a.blockSize == 32 ? kPack32 : kPackK)};
}

void pack(const Activations& a, uint8_t* p, int64_t g0, int64_t g1) {
    if (a.blockSize == 0) {
        avx512::packFloatTokens(a, p, g0, g1);
        return;
    }
    const int64_t nb = a.nBlocks, bs = a.blockSize;
    const size_t per = bs == 32 ? kPack32 : kPackK;
    for (int64_t g = g0; g < g1; ++g) {
        for (int64_t b = 0; b < nb; ++b) {
            uint8_t* dst = p + size_t(g * nb + b) * per;
            auto* dx = reinterpret_cast<float*>(dst + bs * 16);
            for (int t = 0; t < 16; ++t) {
                const int64_t tok = g * 16 + t;
                const bool valid = tok < a.nTokens;
                const int8_t* q = a.q + tok * a.cols + b * bs;
                for (int k4 = 0; k4 < bs / 4; ++k4) {
                    if (valid) std::memcpy(dst + k4 * 64 + t * 4, q + 4 * k4, 4);
                    else std::memset(dst + k4 * 64 + t * 4, 0, 4);
                }
                dx[t] = valid ? a.d[tok * nb + b] : 0.f;
                if (bs == 32) {
                    auto* xoff = reinterpret_cast<int32_t*>(dst + 512 + 64);
                    auto* sx = reinterpret_cast<float*>(dst + 512 + 128);
                    xoff[t] = valid ? a.xoff[tok * nb + b] : 0;
                    sx[t] = valid ? a.sx[tok * nb + b] : 0.f;
                } else {
                    auto* bp = reinterpret_cast<int16_t*>(dst + 4096 + 64);
                    for (int jp = 0; jp < 8; ++jp) {
                        bp[(jp * 16 + t) * 2] = valid ? a.bsum[tok * (a.cols / 16) + b * 16 + 2 * jp] : 0;
                        bp[(jp * 16 + t) * 2 + 1] = valid ? a.bsum[tok * (a.cols / 16) + b * 16 + 2 * jp + 1] : 0;
                    }
                }
            }
        }
    }
}

// Writes the 16 token lanes of `v` for row r (only tokens < nTokens).
inline void storeTokens(__m512 v, int64_t tok0, int64_t nTokens, float* y, int64_t ldy, int64_t r) {
    alignas(64) float tmp[16];
    _mm512_store_ps(tmp, v);
    for (int t = 0; t < 16 && tok0 + t < nTokens; ++t) y[(tok0 + t) * ldy + r] = tmp[t];
}

// ---------------------------------------------------------------------------
// 32-element formats.

// Where gemm32Tile finds codes 4k..4k+3 of block b of row r (unsigned, as
// dpbusd multiplies them): rows one after another, `stride` (K) bytes apart;
// or, from a tile (decodeTile32), in groups of 4 rows `stride` bytes apart,
// per block 128 bytes: 16 for each k, row r's 4 codes at 4 (r % 4) — a GEMM
// tile of 4 rows then reads 2 cache lines a block, as the rows' layout does
// (with the 16 rows of a tile's lanes it read 8: llama-1b Q8_0 pp512, 8
// interleaved runs, mean 161.6 against 173.3 t/s).
template <bool QUADS>
struct CodeRows {
    const uint8_t* base;
    int64_t stride;
    const uint8_t* block(int64_t b) const { return base + b * (QUADS ? 128 : 32); }
    const uint8_t* word(const uint8_t* blk, int r, int k) const {
        return QUADS ? blk + 4 * r + 16 * k : blk + r * stride + 4 * k;
    }
    CodeRows from(int r) const { return {base + (QUADS ? r / 4 : r) * stride, stride}; }
};

// A Q4_0 or Q8_0 tile for gemm32Tile: its 16 rows' d into dw[i * nb + b] (m
// zero), and its unsigned codes (Q4_0's nibbles split) into `u`, in the 4-row
// groups of the CodeRows it returns.
CodeRows<true> decodeTile32(TensorType type, const uint8_t* tile, int64_t nb, uint8_t* u, float* dw, float* mw) {
    const bool q8 = type == TensorType::Q8_0;
    const int64_t blockBytes = int64_t(q8 ? kQ8_0TileBlock : kQ4_0TileBlock);
    const int64_t g = nb * 128;  // bytes of one 4-row group
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * blockBytes;
        alignas(64) float d[16];
        _mm512_store_ps(d, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk))));
        for (int i = 0; i < 16; ++i) {
            dw[i * nb + b] = d[i];
            mw[i * nb + b] = 0.f;
        }
        // codes 4k..4k+3 of the 16 rows (row i in lane i) to the 4 groups
        uint8_t* ub = u + 128 * b;
        auto put = [&](__m512i v, int k) {
            _mm_storeu_si128(reinterpret_cast<__m128i*>(ub + 16 * k), _mm512_castsi512_si128(v));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(ub + g + 16 * k), _mm512_extracti32x4_epi32(v, 1));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(ub + 2 * g + 16 * k), _mm512_extracti32x4_epi32(v, 2));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(ub + 3 * g + 16 * k), _mm512_extracti32x4_epi32(v, 3));
        };
        for (int j = 0; j < (q8 ? 8 : 4); ++j) {
            const __m512i codes = _mm512_loadu_si512(blk + tileCodeWordAt(0, j));
            if (q8) {
                put(codes, j);
            } else {
                put(_mm512_and_si512(codes, low4), j);
                put(_mm512_and_si512(_mm512_srli_epi16(codes, 4), low4), 4 + j);
            }
        }
    }
    return {u, g};
}

// R rows x NG token groups: acc[r][g] (16 token lanes) over all blocks.
template <int R, int NG, bool MIN, bool QUADS>
void gemm32Tile(CodeRows<QUADS> codes, const float* dw, const float* mw, int64_t nb, const uint8_t* px,
                size_t groupStride, __m512* out) {
    __m512 acc[R][NG];
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        __m512i is[R][NG];
        for (int r = 0; r < R; ++r)
            for (int g = 0; g < NG; ++g) is[r][g] = _mm512_setzero_si512();
        const uint8_t* xb[NG];
        for (int g = 0; g < NG; ++g) xb[g] = px + g * groupStride + b * kPack32;
        const uint8_t* ub = codes.block(b);
        for (int k4 = 0; k4 < 8; ++k4) {
            __m512i xv[NG];
            for (int g = 0; g < NG; ++g) xv[g] = _mm512_load_si512(xb[g] + k4 * 64);
            for (int r = 0; r < R; ++r) {
                const __m512i wv = _mm512_set1_epi32(load32(codes.word(ub, r, k4)));
                for (int g = 0; g < NG; ++g) is[r][g] = _mm512_dpbusd_epi32(is[r][g], wv, xv[g]);
            }
        }
        for (int g = 0; g < NG; ++g) {
            const __m512 dx = _mm512_load_ps(xb[g] + 512);
            const __m512i xo = _mm512_load_si512(xb[g] + 576);
            for (int r = 0; r < R; ++r) {
                const __m512 s = _mm512_mul_ps(_mm512_set1_ps(dw[r * nb + b]), dx);
                acc[r][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_sub_epi32(is[r][g], xo)), s, acc[r][g]);
                if constexpr (MIN)
                    acc[r][g] = _mm512_fmadd_ps(_mm512_set1_ps(mw[r * nb + b]), _mm512_load_ps(xb[g] + 640), acc[r][g]);
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) out[r * NG + g] = acc[r][g];
}

template <int R, int NG, bool QUADS>
void gemm32Dispatch(bool min, CodeRows<QUADS> codes, const float* dw, const float* mw, int64_t nb,
                    const uint8_t* px, size_t gs, __m512* out) {
    if (min) gemm32Tile<R, NG, true>(codes, dw, mw, nb, px, gs, out);
    else gemm32Tile<R, NG, false>(codes, dw, mw, nb, px, gs, out);
}

// Rows per GEMM tile: 4 rows x 2 token groups = 8 int + 8 float accumulators,
// with the activations and broadcasts about 20 of the 32 zmm registers.
// Chosen by register count; the tile runs at 255 GFLOP/s per core against a
// measured 302 GOP/s vpdpbusd ceiling, so other shapes were not tried.
constexpr int kGemmRows = 4;

// Rows decoded together: the GEMM walks the token groups once per 16 rows, so
// the packed activations stream from L3 once per 16 rows instead of once per
// 4-row tile. Measured 2048x8192 (K = 8192, 4 MiB of packed activations)
// Q4_0: 293 -> 504 GFLOP/s (2 threads, per CPU-second); 2048x2048 gains
// nothing (its 1 MiB of packed activations stays in L2 either way).
constexpr int kChunkRows = 16;
static_assert(kChunkRows == kTileRows);  // a chunk of a Tiles16 matrix is one tile (decodeTile32, decodeChunkK)

// Rows [rc, rc + nr) of y: their codes, d (dw[i * nb + b]) and m against every token group.
template <bool QUADS>
void gemm32Chunk(bool min, CodeRows<QUADS> codes, int nr, const float* dw, const float* mw, const Activations& a,
                 int64_t rc, float* y, int64_t ldy) {
    const int64_t nb = a.nBlocks, groups = (a.nTokens + 15) / 16;
    const size_t gs = size_t(nb) * kPack32;
    for (int64_t g = 0; g < groups; g += 2) {
        const int ng = int(std::min<int64_t>(2, groups - g));
        const uint8_t* px = a.packed + size_t(g) * gs;
        for (int rt = 0; rt < nr; rt += kGemmRows) {
            const int rr = std::min(kGemmRows, nr - rt);
            const CodeRows<QUADS> ct = codes.from(rt);
            const float* dt = dw + rt * nb;
            const float* mt = mw + rt * nb;
            __m512 out[kGemmRows * 2];
            if (ng == 2) {
                switch (rr) {
                case 4: gemm32Dispatch<4, 2>(min, ct, dt, mt, nb, px, gs, out); break;
                case 3: gemm32Dispatch<3, 2>(min, ct, dt, mt, nb, px, gs, out); break;
                case 2: gemm32Dispatch<2, 2>(min, ct, dt, mt, nb, px, gs, out); break;
                default: gemm32Dispatch<1, 2>(min, ct, dt, mt, nb, px, gs, out); break;
                }
            } else {
                switch (rr) {
                case 4: gemm32Dispatch<4, 1>(min, ct, dt, mt, nb, px, gs, out); break;
                case 3: gemm32Dispatch<3, 1>(min, ct, dt, mt, nb, px, gs, out); break;
                case 2: gemm32Dispatch<2, 1>(min, ct, dt, mt, nb, px, gs, out); break;
                default: gemm32Dispatch<1, 1>(min, ct, dt, mt, nb, px, gs, out); break;
                }
            }
            for (int i = 0; i < rr; ++i)
                for (int gi = 0; gi < ng; ++gi) storeTokens(out[i * ng + gi], (g + gi) * 16, a.nTokens, y, ldy, rc + rt + i);
        }
    }
}

void gemm32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols, nb = a.nBlocks;
    const bool min = quantInfo(w.type).hasMin;
    uint8_t* u = scratch(1, size_t(kChunkRows * K));
    auto* dw = reinterpret_cast<float*>(scratch(2, size_t(2 * kChunkRows * nb) * 4));
    float* mw = dw + kChunkRows * nb;
    for (int64_t rc = r0; rc < r1; rc += kChunkRows) {
        const int nr = int(std::min<int64_t>(kChunkRows, r1 - rc));
        // A whole chunk of a Tiles16 matrix is one tile (r0 is a multiple of 16).
        if (w.layout == RowLayout::Tiles16 && nr == kChunkRows) {
            gemm32Chunk(min, decodeTile32(w.type, w.row(rc), nb, u, dw, mw), nr, dw, mw, a, rc, y, ldy);
        } else {
            for (int i = 0; i < nr; ++i) decodeRow32(w.type, w.row(rc + i), nb, u + i * K, dw + i * nb, mw + i * nb);
            gemm32Chunk(min, CodeRows<false>{u, K}, nr, dw, mw, a, rc, y, ldy);
        }
    }
}

// Bit moves within bytes by one GFNI affine transform (vgf2p8affineqb) where
// the CPU has it: output bit t of a byte is input bit s where byte 7 - t of
// the qword matrix is 1 << s. One instruction instead of shift + mask.
// Measured 1024x2048 from L2, 1 thread (side by side): Q4_K 25.1 -> 26.9,
// Q6_K 26.2 -> 28.7, Q4_0 22.8 -> 23.9 GB/s.
const bool kHasGfni = (__builtin_cpu_init(), __builtin_cpu_supports("gfni"));

// byte >> 4 (bits 4-7 to 0-3, the rest zero)
template <bool GFNI>
__attribute__((target("gfni"))) inline __m512i highNibbles(__m512i v) {
    if constexpr (GFNI) return _mm512_gf2p8affine_epi64_epi8(v, _mm512_set1_epi64(0x1020408000000000), 0);
    else return _mm512_and_si512(_mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
}

// A 4x4 transpose-add of z0..z3 per 128-bit lane: lane 4q + j of the result
// is the sum of lanes 4q .. 4q + 3 of z[j].
inline __m512i sumQuads(const __m512i* z) {
    auto pairSum = [](__m512i a, __m512i b) {
        return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    };
    const __m512i t01 = pairSum(z[0], z[1]), t23 = pairSum(z[2], z[3]);
    return _mm512_add_epi32(_mm512_unpacklo_epi64(t01, t23), _mm512_unpackhi_epi64(t01, t23));
}

// Sum of the 8 int32 lanes of each 256-bit half of z0..z7 (rows in the order
// documented at matvec16): lane i of the result is row i.
inline __m512i reduceRows16(const __m512i* z) {
    const __m512i u0 = sumQuads(z), u1 = sumQuads(z + 4);
    return _mm512_add_epi32(_mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(2, 0, 2, 0)),
                            _mm512_shuffle_i32x4(u0, u1, _MM_SHUFFLE(3, 1, 3, 1)));
}

// Q8_0 codes (u = q + 128) of a block of rows A (low 256 bits) and B (high).
inline __m512i loadPairQ8_0(const uint8_t* a, const uint8_t* b) {
    __m512i q = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 2)));
    q = _mm512_inserti64x4(q, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + 2)), 1);
    return _mm512_xor_si512(q, _mm512_set1_epi8(char(0x80)));
}

// Q8_0 decode of one token for 16 rows straight from the stored blocks: rows
// in lanes. zmm p holds rows A_p (low half) and B_p (high half) with A = 0-3,
// 8-11 and B = 4-7, 12-15, so that reduceRows16 yields rows in lane order.
template <PrefetchTo PF>
void matvec16Q8_0(const MatrixView& w, int64_t r0, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb,
                  float* out) {
    constexpr int64_t bb = 34;
    const uint8_t* rowA[8];
    const uint8_t* rowB[8];
    for (int p = 0; p < 8; ++p) {
        rowA[p] = w.row(r0 + (p < 4 ? p : p + 4));
        rowB[p] = w.row(r0 + (p < 4 ? p + 4 : p + 8));
    }
    const __m512i gidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(int32_t(w.rowStride)));
    const uint8_t* base = w.row(r0);
    const int64_t step = 16 * int64_t(w.rowStride) / nb;  // tile bytes per block step
    // One whole tile ahead rather than kPrefetchAhead: the tile is read across
    // its 16 rows at once, so an address-order prefetch is in time for every
    // row only when it covers the next tile while this one runs (kPrefetchAhead
    // is exactly one tile of 2048-column Q4_0; a Q8_0 tile of 2048 columns is
    // 34 KiB). llama-1b Q8_0 tg, `cairn-cli bench -p 1 -n 64 -t 2 -r 3`, AMD
    // EPYC Zen 5, 8 interleaved pairs on a noisy VM, 18 KiB / one tile: 15.0 /
    // 20.0, 14.1 / 18.8, 15.7 / 19.4, 13.0 / 15.8, 8.4 / 15.2, 10.7 / 11.6,
    // 10.4 / 16.0, 13.7 / 12.6 t/s. (Q4_0 ffn_down and F16 tiles one tile
    // ahead were not faster there, so they keep their distances.)
    const int64_t ahead = 16 * int64_t(w.rowStride);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchLines<PF>(base + ahead + b * step, step);
        const __m512i xx = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * b)));
        __m512i z[8];
        for (int p = 0; p < 8; ++p)
            z[p] = _mm512_dpbusd_epi32(_mm512_setzero_si512(), loadPairQ8_0(rowA[p] + b * bb, rowB[p] + b * bb), xx);
        const __m512i isum = _mm512_sub_epi32(reduceRows16(z), _mm512_set1_epi32(xo[b]));
        const __m512i hw = _mm512_i32gather_epi32(gidx, base + b * bb, 1);
        const __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(hw));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(dx[b])), acc);
    }
    _mm512_storeu_ps(out, acc);
}

// How far ahead of where a decode tile reads each of its rows that row is
// prefetched: each row is its own stream (measured for the float tiles at
// floatRowsOneToken and for the nibble tiles at matvec16Nibbles).
constexpr int64_t kRowPrefetch = 1024;

// Nibble formats (Q4_0, Q4_1, Q5_0, Q5_1) for matvec16Nibbles: block bytes,
// where the nibbles and the fifth bits are, and whether a min follows d.
template <TensorType T>
struct NibbleFormat;
template <>
struct NibbleFormat<TensorType::Q4_0> {
    static constexpr int bytes = 18, qs = 2, qh = -1;
    static constexpr bool min = false;
};
template <>
struct NibbleFormat<TensorType::Q4_1> {
    static constexpr int bytes = 20, qs = 4, qh = -1;
    static constexpr bool min = true;
};
template <>
struct NibbleFormat<TensorType::Q5_0> {
    static constexpr int bytes = 22, qs = 6, qh = 2;
    static constexpr bool min = false;
};
template <>
struct NibbleFormat<TensorType::Q5_1> {
    static constexpr int bytes = 24, qs = 8, qh = 4;
    static constexpr bool min = true;
};

// matvec16 for the nibble formats with 4 rows per zmm (one 16-byte block of
// nibbles per 128-bit lane): the low and high nibbles meet the two halves of
// the activation block in two dpbusd, so no byte shuffles; zmm p holds rows
// p, 4+p, 8+p, 12+p, which the 4x4 transpose-add below returns in lane order.
// Fifth bits (Q5_*) are added as +16 under a byte mask built from qh.
// Measured Q4_0 1024x2048 from L2, 1 thread: 63.6 -> 49.6 us per call (23.8
// GB/s) against 2 rows per zmm with byte shuffles.
//
// Each row's block is read by one 32-byte load, which holds codes and
// scale(s) (every format here is 18-24 bytes), and permutes of two such pairs
// of rows put 4 rows' codes in the 128-bit lanes and their d | m << 16 in the
// output lanes (NibbleCarryPermutes below). That replaced a 128-bit insert
// per row and a 16-lane gather of the scales, which cost as much as all the
// arithmetic. The first version loaded at the block's start and used word
// permutes for both; in the last block the load ends at the row's end
// instead (32 bytes from the block's start would run past it). AMD EPYC
// Zen 5, `cairn-cli bench-kernels --types Q4_0 --rows 1024 --cols 2048 -p 16
// -t 1 --decode-mib 1 -r 9` (from L2), us a call: gather 47.2-57.1 (20.7-25.0
// GB/s), a dword permute for the scales 29.2-29.4 (three interleaved pairs;
// the gather kept for the last block), word permutes in every block 30.4-32.3
// (36.5-38.8 GB/s). The same binary's Q4_1 34.1-37.2 us, Q5_0 56.3-60.8.

// The inner blocks of matvec16Nibbles load 32 bytes from each row at the
// block's codes: the 16 code bytes, then the next block's first dword (d, and
// m for Q4_1 / Q5_1, or qh's low half for Q5_0) in bytes 16-19, since every
// format ends with its codes. Per group p (rows p, 4+p, 8+p, 12+p, loaded as
// u = rows p | 4+p and v = 8+p | 12+p) a qword permute puts each row's codes
// in its 128-bit lane and a dword permute the next block's d to the row's
// output lane; the current block's d comes from the step before (a gather for
// block 0). It replaced two word permutes per group (codes, scales): on this
// Intel Xeon a two-source word permute (vpermt2w) occupies port 5 for two
// cycles, a dword or qword one (vpermt2d / vpermt2q) for one (a throughput
// loop of each). Intel Xeon (family 6 model 207), interleaved pairs, GB/s,
// word permutes / these: `cairn-cli bench-kernels --types Q4_0 --rows 512
// --cols 2048 -p 16 -t 1 -r 9 --decode-mib 1` (from L2) 21.2 / 26.5, 20.8 /
// 26.4; `--rows 8192 -t 2 -r 7` (from memory) 25.0 / 26.1, 23.8 / 25.5, 26.7
// / 27.6; llama-1b Q4_0 tg128 (`bench -p 1 -n 128 -t 2 -r 2`) 34.02 / 35.42,
// 33.54 / 34.05, 32.25 / 34.69 t/s. Same bits. Zen 5 measured a dword
// permute for the scales as fast as word permutes (above).
struct NibbleCarryPermutes {
    __m512i codes, next[4];
};

inline NibbleCarryPermutes nibbleCarryPermutes() {
    NibbleCarryPermutes n;
    n.codes = _mm512_setr_epi64(0, 1, 4, 5, 8, 9, 12, 13);
    for (int p = 0; p < 4; ++p) {
        alignas(64) int32_t idx[16] = {};
        for (int k = 0; k < 4; ++k) idx[4 * k + p] = 8 * k + 4;  // dword 4 of row 4k + p's load
        n.next[p] = _mm512_load_si512(idx);
    }
    return n;
}

// The last block's 32-byte loads end at the row's end instead (`back` bytes
// before the block): word permutes of (rows p | 4+p, rows 8+p | 12+p) take
// each row's codes to its 128-bit lane.
template <TensorType T>
__m512i nibbleLastCodes(int back) {
    alignas(64) uint16_t c[32];
    for (int k = 0; k < 4; ++k)
        for (int i = 0; i < 8; ++i) c[8 * k + i] = uint16_t(16 * k + (back + NibbleFormat<T>::qs) / 2 + i);
    return _mm512_load_si512(c);
}

// The 16 rows of a nibble tile as 4 groups: group p is rows p, 4+p, 8+p,
// 12+p, at first[p] + {0, 4, 8, 12} * stride. Addressed as first[p] + 4 *
// stride and first[p] + 4 * stride3 (x86 scaled indexes), the tile needs 6
// registers, where 16 row pointers left GCC moving them in and out of xmm
// registers and the stack (the same speed here, but a shorter loop).
struct NibbleTileRows {
    const uint8_t* first[4];
    int64_t stride, stride3;
    const uint8_t* row(int p, int k) const {
        return k == 0 ? first[p]
            : k == 1  ? first[p] + 4 * stride
            : k == 2  ? first[p] + 8 * stride
                      : first[p] + 4 * stride3;
    }
    // rows p | 4+p (u) and 8+p | 12+p (v), 32 bytes each from `at`
    void load(int p, int64_t at, __m512i& u, __m512i& v) const {
        auto half = [&](int k) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(row(p, k) + at)); };
        u = _mm512_inserti64x4(_mm512_castsi256_si512(half(0)), half(1), 1);
        v = _mm512_inserti64x4(_mm512_castsi256_si512(half(2)), half(3), 1);
    }
};

// One block of matvec16Nibbles from its codes: codes[p] holds rows p, 4+p,
// 8+p, 12+p in its 128-bit lanes; lane i of hw is d | m << 16 of row i.
template <TensorType T, bool GFNI>
__attribute__((target("gfni"), always_inline)) inline __m512
nibbleBlock(const NibbleTileRows& rows, int64_t o, const __m512i* codes, __m512i hw, const int8_t* xq, float dx,
            int32_t xo, float sx, __m512 acc) {
    using F = NibbleFormat<T>;
    const __m512i low4 = _mm512_set1_epi8(0x0F), sixteen = _mm512_set1_epi8(16);
    const __m512i xlo = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq)));
    const __m512i xhi = _mm512_broadcast_i32x4(_mm_loadu_si128(reinterpret_cast<const __m128i*>(xq + 16)));
    __m512i d[4];
    for (int p = 0; p < 4; ++p) {
        __m512i lo = _mm512_and_si512(codes[p], low4), hi = highNibbles<GFNI>(codes[p]);
        if constexpr (F::qh >= 0) {
            uint64_t mlo = 0, mhi = 0;
            for (int k = 0; k < 4; ++k) {
                uint32_t qh;
                std::memcpy(&qh, rows.row(p, k) + o + F::qh, 4);
                mlo |= uint64_t(qh & 0xFFFF) << (16 * k);
                mhi |= uint64_t(qh >> 16) << (16 * k);
            }
            lo = _mm512_mask_add_epi8(lo, _cvtu64_mask64(mlo), lo, sixteen);
            hi = _mm512_mask_add_epi8(hi, _cvtu64_mask64(mhi), hi, sixteen);
        }
        d[p] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), lo, xlo), hi, xhi);
    }
    const __m512i isum = _mm512_sub_epi32(sumQuads(d), _mm512_set1_epi32(xo));
    const __m512 dw = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(hw));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(dx)), acc);
    if constexpr (F::min)
        acc =
            _mm512_fmadd_ps(_mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(hw, 16))), _mm512_set1_ps(sx), acc);
    return acc;
}

template <TensorType T, bool GFNI, PrefetchTo PF>
__attribute__((target("gfni"))) void matvec16Nibbles(const MatrixView& w, int64_t r0, const int8_t* xq, const float* dx,
                                                     const int32_t* xo, const float* sx, int64_t nb, float* out) {
    using F = NibbleFormat<T>;
    // The inner loads end 16 bytes past their block, inside the next one's codes.
    static_assert(F::qs + 32 <= 2 * F::bytes, "an inner block's load stays inside the row");
    // The last block's load ends at the row's end instead, `back` bytes early.
    constexpr int back = 32 - F::bytes;
    static_assert(back >= 0 && back % 2 == 0 && F::qs % 2 == 0, "one 32-byte load, words aligned");
    const int64_t stride = int64_t(w.rowStride);
    const NibbleTileRows rows{{w.row(r0), w.row(r0 + 1), w.row(r0 + 2), w.row(r0 + 3)}, stride, 3 * stride};
    const NibbleCarryPermutes inner = nibbleCarryPermutes();
    // Each row is its own stream, prefetched kRowPrefetch bytes ahead of where
    // it is read and on into the same row of the next tile, once per cache line
    // (fewer block steps than a line holds). It replaced one address-order sweep
    // kPrefetchAhead ahead, which reached the tile's later rows too late, as it
    // did for the float tiles. AMD EPYC Zen 5, 2 threads, from memory
    // (`cairn-cli bench-kernels --types Q4_0 --rows R --cols C -p 16 -t 2 -r
    // 5`), GB/s, interleaved: 8192x2048 sweep 40.6-44.6, 512 B ahead 45.7-50.9,
    // 1 KiB 52.6-55.6, 1.5 KiB 48.9-54.5, 2 KiB 49.2-54.4; 2048x8192 sweep
    // 41.4, 1 KiB 60.6.
    constexpr int64_t kPrefetchEvery = 64 / F::bytes;
    const auto sxAt = [&](int64_t b) { return F::min ? sx[b] : 0.f; };
    const __m512i rowOffsets = _mm512_mullo_epi32(
        _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(int32_t(stride)));
    __m512i hw = _mm512_i32gather_epi32(rowOffsets, rows.first[0], 1);  // block 0's first dword, row i in lane i
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b + 1 < nb; ++b) {
        const int64_t o = b * F::bytes;
        if (b % kPrefetchEvery == 0) {
            const int64_t ahead = o + kRowPrefetch;
            const int64_t at = rowStreamOffset(ahead, stride, 16);
            for (int p = 0; p < 4; ++p)
                for (int k = 0; k < 4; ++k) prefetchLine<PF>(rows.row(p, k) + at);
        }
        __m512i codes[4], next = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p) {
            __m512i u, v;
            rows.load(p, o + F::qs, u, v);
            codes[p] = _mm512_permutex2var_epi64(u, inner.codes, v);
            next = _mm512_mask_mov_epi32(next, __mmask16(0x1111u << p), _mm512_permutex2var_epi32(u, inner.next[p], v));
        }
        acc = nibbleBlock<T, GFNI>(rows, o, codes, hw, xq + 32 * b, dx[b], xo[b], sxAt(b), acc);
        hw = next;
    }
    const int64_t b = nb - 1, o = b * F::bytes;
    const __m512i lastCodes = nibbleLastCodes<T>(back);
    __m512i codes[4];
    for (int p = 0; p < 4; ++p) {
        __m512i u, v;
        rows.load(p, o - back, u, v);
        codes[p] = _mm512_permutex2var_epi16(u, lastCodes, v);
    }
    acc = nibbleBlock<T, GFNI>(rows, o, codes, hw, xq + 32 * b, dx[b], xo[b], sxAt(b), acc);
    _mm512_storeu_ps(out, acc);
}

// The decode kernels of Tiles16 matrices (tensor/row_tiles.h), matvecTileQ4_0
// and matvecTileQ8_0 below.
//
// The tile is one stream in address order, and the next tile follows it, so
// it is prefetched kTilePrefetch bytes ahead of the block being read.
// Intel Xeon (family 6 model 207), `cairn-cli bench-kernels --types Q4_0
// --rows 8192 --cols 2048 -p 16 -t 2 -r 7` (from memory), interleaved with
// CAIRN_ROW_TILES=off: the first tile layout (f12ae94, rows in 128-bit lanes)
// 29.9 / 31.9 / 32.4 GB/s, the file layout's
// tile 29.2 / 29.1 / 29.9 (read loop 34-36); from L2 (`--rows 512 -t 1
// --decode-mib 1`, l2pf) 52.6 against 26.5. Prefetch distance, l2pf, three
// rounds: 4 KiB 29.8-31.3, 8 KiB 30.5-31.7, 16 KiB 27.6-32.1, 32 KiB
// 28.1-30.2 GB/s (the L1 path within its noise at each).
constexpr int64_t kTilePrefetch = 8192;

// With the L2 hint (avx512vnni-l2pf) each line is prefetched a second time,
// into L1, kTileNearPrefetch bytes ahead, when the L2 should have it: the
// tile's loads then find their lines in L1. Intel Xeon (family 6 model 207),
// `CAIRN_KERNELS=avx512vnni-l2pf cairn-cli bench-kernels --types Q4_0 --rows
// 8192 --cols 2048 -p 1 -t 2 -r 7`, interleaved rounds, GB/s, none / 2 KiB /
// 3 KiB / 4 KiB: 32.0 / 33.7 / 34.3 / 34.1, 31.9 / 33.7 / 34.7 / 34.4, 32.2 /
// 33.4 / 27.9 / 32.6 (a noisy round), 30.9 / 32.8 / 33.4 / 30.9 (read loop
// 34-36); llama-1b Q4_0 tg128 (`bench -p 1 -n 128 -t 2 -r 2 --kernel-cache
// F --read-loop 1024`), t/s: 40.35 / 41.97 / 42.14, 39.86 / 39.31 / 44.00,
// 40.17 / 41.81 / 42.45.
constexpr int64_t kTileNearPrefetch = 3072;

// Whether the Tiles16 decode kernels prefetch their stream in software
// (kTilePrefetch ahead, as measured on the Intel Xeon above) or leave it to
// the hardware prefetchers (avx512vnni-hwpf): a tile is one stream in
// address order, the next tile follows it, and on an AMD EPYC Zen 4 (family
// 25 model 17) the hardware prefetchers alone streamed it faster. A
// throwaway program alternating each Q4_0 tile decode call with a plain
// 2-thread read loop (the host's drift falls on both), median share of the
// read loop, host fast / slow, none against kTilePrefetch into L1 (the
// avx512vnni kernel): 16384 x 2048 1.015 / 1.006 against 0.916 / 0.995,
// 2048 x 2048 0.882 / 0.903 against 0.756 / 0.866, 512 x 2048 0.942 / 0.978
// against 0.844 / 0.933; the L2 hint with the L1 one kTileNearPrefetch ahead
// (avx512vnni-l2pf) 0.787 / 0.958, 0.693 / 0.890, 0.824 / 0.908. Any
// distance from 1 to 24 KiB, either hint, was slower than none there. In
// the engine (one process alternating the paths on 12 llama-1b-shaped layers
// from memory, each pass beside a read loop's; median share, host fast /
// slow): Q4_0 avx512vnni 0.817 / 0.932, l2pf 0.730 / 0.881, none 0.863 /
// 0.971; Q8_0 0.803 / 0.938, 0.821 / 0.919, 0.925 / 0.979; Q4_K see
// matvecTileQ4_K; Q6_K (its words stored in the order read,
// q6kTileSlot) 0.858 / 0.963, 0.764 / 0.928, 0.934 / 1.030, and host slow
// 0.981, 0.945, 1.013. The calibration chooses among the three paths by
// measurement.
enum class TileFetch { Software, Hardware };

// Prefetches for the block column of a tile at `blk`, `bytes` long: the
// column kTilePrefetch ahead, and with the L2 hint again into L1,
// kTileNearPrefetch ahead; nothing when the hardware fetches the tiles.
template <PrefetchTo PF, TileFetch TF>
inline void prefetchTileColumn(const uint8_t* blk, int64_t bytes) {
    if constexpr (TF == TileFetch::Hardware) return;
    prefetchLines<PF>(blk + kTilePrefetch, bytes);
    if constexpr (PF == PrefetchTo::L2) prefetchLines<PrefetchTo::L1>(blk + kTileNearPrefetch, bytes);
}

// Whether a tile kernel of this fetch kind prefetches the activations of a
// tile `tileBytes` long (kernels_common.h, kActivationPrefetchTileBytes):
// only the hardware-fetched ones gained from it.
template <TileFetch TF>
inline bool tilePrefetchesActivations(int64_t tileBytes) {
    return TF == TileFetch::Hardware && prefetchesActivations(tileBytes);
}

// The activations of a 32-element format's block b + 8: codes, scale, offset.
inline void prefetchActivations32(const int8_t* xq, const float* dx, const int32_t* xo, int64_t b) {
    prefetchActivationBlock(xq, 32, b, 8);
    prefetchActivationBlock(dx, 1, b, 8);
    prefetchActivationBlock(xo, 1, b, 8);
}

// The float chain step of a 32-element format's tile for one block: `isum`
// (row i in lane i, offset folded in) times the 16 rows' d (fp16, at `d16`)
// times the activations' dx.
inline __m512 tileChainStep(__m512 acc, __m512i isum, const uint8_t* d16, float dxb) {
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(d16)));
    return _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(dw, _mm512_set1_ps(dxb)), acc);
}

// Rows in int32 lanes against the first tile layout (rows in 128-bit lanes,
// a 4x4 or 16x16 transpose-add a block: 9 or 21 shuffles and adds), Intel
// Xeon (family 6 model 207), slow stretch of the host, interleaved, from L2
// (`CAIRN_KERNELS=avx512vnni-l2pf bench-kernels --types Q4_0,Q8_0 --rows 512
// --cols 2048 -p 1 -t 1 -r 200 --decode-mib 1`), GB/s, before / after: Q4_0
// 20.3 / 24.5, 23.4 / 29.5, 23.9 / 24.7; Q8_0 25.9 / 35.1, 30.7 / 35.9, 30.6 /
// 35.4. llama-1b tg128 in docs/PERFORMANCE.md ("Tiles with a lane per row").

// 4 activation bytes in every int32 lane.
inline __m512i broadcastWord(const int8_t* x) { return _mm512_set1_epi32(int32_t(load32(x))); }

// Q4_0 decode of one token for one tile of a Tiles16 matrix: chunk j (code
// bytes 4j..4j+3 of each row, row i in lane i) meets activation bytes 4j..4j+3
// in its low nibbles and 16+4j.. in its high ones. The high nibbles are
// masked in place (x 16, exact) rather than shifted down: an AND runs on
// either vector port, and the one arithmetic shift of their sum is exact.
template <PrefetchTo PF, TileFetch TF>
void matvecTileQ4_0(const uint8_t* tile, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb, float* out,
                    bool prefetchX) {
    constexpr int64_t kBlock = int64_t(kQ4_0TileBlock);
    const __m512i low4 = _mm512_set1_epi8(0x0F), high4 = _mm512_set1_epi8(char(0xF0));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        prefetchTileColumn<PF, TF>(blk, kBlock);
        if (prefetchX) prefetchActivations32(xq, dx, xo, b);
        const int8_t* x = xq + 32 * b;
        __m512i lo = _mm512_setzero_si512(), hi16 = _mm512_setzero_si512();
        for (int j = 0; j < 4; ++j) {
            const __m512i codes = _mm512_loadu_si512(blk + tileCodeWordAt(0, j));
            lo = _mm512_dpbusd_epi32(lo, _mm512_and_si512(codes, low4), broadcastWord(x + 4 * j));
            hi16 = _mm512_dpbusd_epi32(hi16, _mm512_and_si512(codes, high4), broadcastWord(x + 16 + 4 * j));
        }
        const __m512i isum = _mm512_add_epi32(lo, _mm512_srai_epi32(hi16, 4));
        acc = tileChainStep(acc, _mm512_sub_epi32(isum, _mm512_set1_epi32(xo[b])), blk, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

// Q8_0 decode of one token for one tile of a Tiles16 matrix: 8 chunks of
// stored unsigned codes, row i in lane i, against 4 broadcast activation bytes
// each, in two chains. Same integers and float chain as matvec16Q8_0.
template <PrefetchTo PF, TileFetch TF>
void matvecTileQ8_0(const uint8_t* tile, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb, float* out,
                    bool prefetchX) {
    constexpr int64_t kBlock = int64_t(kQ8_0TileBlock);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        prefetchTileColumn<PF, TF>(blk, kBlock);
        if (prefetchX) prefetchActivations32(xq, dx, xo, b);
        const int8_t* x = xq + 32 * b;
        __m512i s[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
        for (int j = 0; j < 8; ++j)
            s[j & 1] =
                _mm512_dpbusd_epi32(s[j & 1], _mm512_loadu_si512(blk + tileCodeWordAt(0, j)), broadcastWord(x + 4 * j));
        const __m512i isum = _mm512_add_epi32(s[0], s[1]);
        acc = tileChainStep(acc, _mm512_sub_epi32(isum, _mm512_set1_epi32(xo[b])), blk, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

// Horizontal sum of int32 lanes (exact).
inline int32_t hsum(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// One row, one token, any 32-element format (rows the 16-row kernel leaves).
float matvecRow32(TensorType type, const uint8_t* row, const int8_t* xq, const float* dx, const int32_t* xo,
                  const float* sx, int64_t nb, bool min) {
    const size_t bb = traits(type).blockBytes;
    float acc = 0.f;
    Decoded32 dec;
    for (int64_t b = 0; b < nb; ++b) {
        decodeBlock32(type, row + b * bb, dec);
        const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(dec.u));
        const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq + 32 * b));
        const int32_t isum = hsum(_mm256_dpbusd_epi32(_mm256_setzero_si256(), u, x)) - xo[b];
        acc = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(float(isum)), _mm_set_ss(dec.d * dx[b]), _mm_set_ss(acc)));
        if (min) acc = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(dec.m), _mm_set_ss(sx[b]), _mm_set_ss(acc)));
    }
    return acc;
}

// The 16-row decode tile of a 32-element format, chosen once per call.
using Matvec16Fn = void (*)(const MatrixView&, int64_t, const int8_t*, const float*, const int32_t*, const float*,
                            int64_t, float*);

template <TensorType T, PrefetchTo PF>
Matvec16Fn nibbleTile() {
    return kHasGfni ? matvec16Nibbles<T, true, PF> : matvec16Nibbles<T, false, PF>;
}

template <PrefetchTo PF>
Matvec16Fn matvec16For(TensorType type) {
    switch (type) {
    case TensorType::Q4_0: return nibbleTile<TensorType::Q4_0, PF>();
    case TensorType::Q4_1: return nibbleTile<TensorType::Q4_1, PF>();
    case TensorType::Q5_0: return nibbleTile<TensorType::Q5_0, PF>();
    case TensorType::Q5_1: return nibbleTile<TensorType::Q5_1, PF>();
    default:
        return [](const MatrixView& w, int64_t r, const int8_t* xq, const float* dx, const int32_t* xo, const float*,
                  int64_t nb, float* out) { matvec16Q8_0<PF>(w, r, xq, dx, xo, nb, out); };
    }
}

template <PrefetchTo PF, TileFetch TF>
void matvec32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t nb = a.nBlocks;
    const bool min = quantInfo(w.type).hasMin;
    // 16-row tiles: Q8_0's gather offsets fit int32; the nibble tiles' load of
    // the last block starts up to 14 bytes before it, inside the row (nb >= 2).
    const bool fast = w.rowStride * 16 < (1u << 31) && nb >= 2;
    const Matvec16Fn tile = matvec16For<PF>(w.type);
    const bool rowTiles = w.layout == RowLayout::Tiles16;  // Q4_0, Q8_0 (readsRowTiles)
    const auto rowTile = w.type == TensorType::Q8_0 ? matvecTileQ8_0<PF, TF> : matvecTileQ4_0<PF, TF>;
    const bool prefetchX =
        tilePrefetchesActivations<TF>(nb * int64_t(w.type == TensorType::Q8_0 ? kQ8_0TileBlock : kQ4_0TileBlock));
    for (int64_t t = 0; t < a.nTokens; ++t) {
        const int8_t* xq = a.q + t * a.cols;
        const float* dx = a.d + t * nb;
        const int32_t* xo = a.xoff + t * nb;
        const float* sx = a.sx + t * nb;
        float* yt = y + t * ldy;
        int64_t r = r0;
        if (rowTiles)
            for (; r + 16 <= r1; r += 16) rowTile(w.row(r), xq, dx, xo, nb, yt + r, prefetchX);
        else if (fast)
            for (; r + 16 <= r1; r += 16) tile(w, r, xq, dx, xo, sx, nb, yt + r);
        for (; r < r1; ++r) yt[r] = matvecRow32(w.type, w.row(r), xq, dx, xo, sx, nb, min);
    }
}

// ---------------------------------------------------------------------------
// K formats: generic decode per super-block, then the GEMM on the codes.

// Q4_K / Q6_K super-blocks unpacked with SIMD into the codes of 64 consecutive
// elements per zmm (natural element order), for the matvec and the GEMM tiles.

// Codes of elements [64c, 64c + 64) of a Q4_K super-block.
inline __m512i q4kCodes(const uint8_t* qs, int c) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * c));
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(q), _mm256_srli_epi16(q, 4), 1);
    return _mm512_and_si512(z, _mm512_set1_epi8(0x0F));
}

// Codes of elements [64c, 64c + 64) of a Q5_K super-block: Q4_K's nibbles
// plus bit 2c (first 32) or 2c + 1 (last 32) of qh[l] as bit 4.
inline __m512i q5kCodes(const uint8_t* qs, const uint8_t* qh, int c) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh));
    const __m512i hz =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(h, 2 * c)), _mm256_srli_epi16(h, 2 * c + 1), 1);
    const __m512i hi = _mm512_slli_epi16(_mm512_and_si512(hz, _mm512_set1_epi8(1)), 4);
    return _mm512_or_si512(q4kCodes(qs, c), hi);
}

// Codes of elements [128n + 64h, +64) of a Q6_K super-block.
inline __m512i q6kCodes(const uint8_t* ql, const uint8_t* qh, int n, int h) {
    const __m512i l = _mm512_loadu_si512(ql + 64 * n);
    const __m256i hh = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qh + 32 * n));
    // high bits: [qh >> (4h) | qh >> (4h + 2)] & 3, moved to bits 4-5
    const __m512i hz =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(hh, 4 * h)), _mm256_srli_epi16(hh, 4 * h + 2), 1);
    const __m512i hi = _mm512_slli_epi16(_mm512_and_si512(hz, _mm512_set1_epi8(3)), 4);
    const __m512i lo = _mm512_and_si512(h ? _mm512_srli_epi16(l, 4) : l, _mm512_set1_epi8(0x0F));
    return _mm512_or_si512(lo, hi);
}

inline int32_t hsum512(__m512i v) { return _mm512_reduce_add_epi32(v); }

// Exact integer sums of one Q4_K super-block against 256 activation codes:
// `is` (16 lanes summing to isum) and `ms` (8 lanes summing to msum).
// Also Q5_K (Blk = BlockQ5_K): same scales and mins, 5-bit codes (dots of 4
// codes still fit int16).
template <typename Blk>
inline void q4kSums(const Blk* blk, const int8_t* x, const int16_t* bs, __m512i& is, __m256i& ms) {
    const __m128i sm = q4kScales(blk->scales);
    // lanes 0-7 of chunk c: scale sc[2c]; lanes 8-15: sc[2c + 1] (dots of 4 codes fit int16)
    const __m512i sv = _mm512_cvtepu8_epi32(sm);
    is = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
        __m512i codes;
        if constexpr (std::is_same_v<Blk, BlockQ5_K>) codes = q5kCodes(blk->qs, blk->qh, c);
        else codes = q4kCodes(blk->qs, c);
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes, _mm512_loadu_si512(x + 64 * c));
        const __m512i idx = _mm512_inserti64x4(_mm512_set1_epi32(2 * c), _mm256_set1_epi32(2 * c + 1), 1);
        is = _mm512_add_epi32(is, _mm512_madd_epi16(dot, _mm512_permutexvar_epi32(idx, sv)));
    }
    // msum = sum_j m_j * (bsum[2j] + bsum[2j + 1]): mins widened to 16 int16, one madd.
    const __m128i mins = _mm_shuffle_epi8(sm, _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15));
    ms = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs)));
}

// Same for Q6_K: `is` sums to sum_j s_j * dot_j, `off` to sum_j s_j * bsum_j
// (isum = is - 32 * off).
inline void q6kSums(const BlockQ6_K* blk, const int8_t* x, const int16_t* bs, __m512i& is, __m256i& off) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
    is = _mm512_setzero_si512();
    for (int n = 0; n < 2; ++n)
        for (int h = 0; h < 2; ++h) {
            const int c = 2 * n + h;  // elements [64c, 64c + 64): sub-blocks 4c..4c+3, 4 lanes each
            const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), q6kCodes(blk->ql, blk->qh, n, h),
                                                    _mm512_loadu_si512(x + 64 * c));
            const __m512i idx =
                _mm512_setr_epi32(4 * c, 4 * c, 4 * c, 4 * c, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c + 2,
                                  4 * c + 2, 4 * c + 2, 4 * c + 2, 4 * c + 3, 4 * c + 3, 4 * c + 3, 4 * c + 3);
            const __m512i sv = _mm512_permutexvar_epi32(idx, _mm512_cvtepi8_epi32(sc));
            is = _mm512_add_epi32(is, _mm512_madd_epi16(dot, _mm512_and_si512(sv, _mm512_set1_epi32(0xFFFF))));
        }
    off = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs)));
}

// Q2_K and Q3_K: the 2-bit codes of elements [128n + 64p, +64) are bits 4p..4p+1
// (first 32) and 4p+2..4p+3 (last 32) of qs[32n + l]; Q3_K adds bit 4n + 2p
// (+1) of hmask[l] as bit 2. Sub-blocks of 16, 4 dpbusd lanes each.
inline __m512i q23kCodes(const uint8_t* qs, const uint8_t* hmask, int n, int p) {
    const __m256i q = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qs + 32 * n));
    __m512i z =
        _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(q, 4 * p)), _mm256_srli_epi16(q, 4 * p + 2), 1);
    z = _mm512_and_si512(z, _mm512_set1_epi8(3));
    if (hmask) {
        const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hmask));
        const int bit = 4 * n + 2 * p;
        const __m512i hz =
            _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_srli_epi16(h, bit)), _mm256_srli_epi16(h, bit + 1), 1);
        z = _mm512_or_si512(z, _mm512_slli_epi16(_mm512_and_si512(hz, _mm512_set1_epi8(1)), 2));
    }
    return z;
}

// sum_j s_j * dot_j over a 256-element super-block whose codes come in four
// 64-element zmm (sub-blocks 4c..4c+3 in chunk c), s_j the 16 int32 lanes of sv.
template <typename Codes>
inline __m512i scaledSums16(const int8_t* x, __m512i sv, Codes codes) {
    __m512i is = _mm512_setzero_si512();
    for (int c = 0; c < 4; ++c) {
        const __m512i dot = _mm512_dpbusd_epi32(_mm512_setzero_si512(), codes(c), _mm512_loadu_si512(x + 64 * c));
        const __m512i idx =
            _mm512_setr_epi32(4 * c, 4 * c, 4 * c, 4 * c, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c + 1, 4 * c + 2,
                              4 * c + 2, 4 * c + 2, 4 * c + 2, 4 * c + 3, 4 * c + 3, 4 * c + 3, 4 * c + 3);
        const __m512i s16 = _mm512_and_si512(_mm512_permutexvar_epi32(idx, sv), _mm512_set1_epi32(0xFFFF));
        is = _mm512_add_epi32(is, _mm512_madd_epi16(dot, s16));  // dots of 4 codes <= 7 fit int16
    }
    return is;
}

// Q2_K: `is` sums to sum_j s_j dot_j, `ms` to sum_j m_j bsum_j.
inline void q2kSums(const BlockQ2_K* blk, const int8_t* x, const int16_t* bs, __m512i& is, __m256i& ms) {
    const __m128i sc = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
    const __m512i sv = _mm512_cvtepu8_epi32(_mm_and_si128(sc, _mm_set1_epi8(0x0F)));
    is = scaledSums16(x, sv, [&](int c) { return q23kCodes(blk->qs, nullptr, c / 2, c % 2); });
    const __m128i mins = _mm_and_si128(_mm_srli_epi16(sc, 4), _mm_set1_epi8(0x0F));
    ms = _mm256_madd_epi16(_mm256_cvtepu8_epi16(mins), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs)));
}

// Q3_K: `is` sums to sum_j s_j dot_j, `off` to sum_j s_j bsum_j (isum = is - 4 off).
inline void q3kSums(const BlockQ3_K* blk, const int8_t* x, const int16_t* bs, __m512i& is, __m256i& off) {
    uint32_t aux[4];
    std::memcpy(aux, blk->scales, 12);
    const uint32_t kmask1 = 0x03030303, kmask2 = 0x0f0f0f0f, tmp = aux[2];
    aux[2] = ((aux[0] >> 4) & kmask2) | (((tmp >> 4) & kmask1) << 4);
    aux[3] = ((aux[1] >> 4) & kmask2) | (((tmp >> 6) & kmask1) << 4);
    aux[0] = (aux[0] & kmask2) | (((tmp >> 0) & kmask1) << 4);
    aux[1] = (aux[1] & kmask2) | (((tmp >> 2) & kmask1) << 4);
    __m128i sc;
    std::memcpy(&sc, aux, 16);
    sc = _mm_sub_epi8(sc, _mm_set1_epi8(32));  // signed scales
    is = scaledSums16(x, _mm512_cvtepi8_epi32(sc), [&](int c) { return q23kCodes(blk->qs, blk->hmask, c / 2, c % 2); });
    off = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bs)));
}

// Per-format facts of the K matvec: block bytes, mins, offset shift, and
// where a 32-bit load finds d (low half, dmin in the high half) or d alone
// (high half), staying inside the block.
template <TensorType T>
struct KFormat;
template <>
struct KFormat<TensorType::Q2_K> {
    using Blk = BlockQ2_K;
    static constexpr bool min = true;
    static constexpr int offShift = 0;
    static constexpr int scaleAt = 80;
    static constexpr bool dHigh = false;
};
template <>
struct KFormat<TensorType::Q3_K> {
    using Blk = BlockQ3_K;
    static constexpr bool min = false;
    static constexpr int offShift = 2;
    static constexpr int scaleAt = 106;
    static constexpr bool dHigh = true;
};
template <>
struct KFormat<TensorType::Q4_K> {
    using Blk = BlockQ4_K;
    static constexpr bool min = true;
    static constexpr int offShift = 0;
    static constexpr int scaleAt = 0;
    static constexpr bool dHigh = false;
};
template <>
struct KFormat<TensorType::Q5_K> {
    using Blk = BlockQ5_K;
    static constexpr bool min = true;
    static constexpr int offShift = 0;
    static constexpr int scaleAt = 0;
    static constexpr bool dHigh = false;
};
template <>
struct KFormat<TensorType::Q6_K> {
    using Blk = BlockQ6_K;
    static constexpr bool min = false;
    static constexpr int offShift = 5;
    static constexpr int scaleAt = 206;
    static constexpr bool dHigh = true;
};

// is/aux of one super-block: aux is the min sum (formats with mins) or the
// offset sum (isum = is - (aux << offShift)).
template <TensorType T>
inline void kSums(const uint8_t* blk, const int8_t* x, const int16_t* bs, __m512i& is, __m256i& aux) {
    using Blk = typename KFormat<T>::Blk;
    const auto* b = reinterpret_cast<const Blk*>(blk);
    if constexpr (T == TensorType::Q2_K) q2kSums(b, x, bs, is, aux);
    else if constexpr (T == TensorType::Q3_K) q3kSums(b, x, bs, is, aux);
    else if constexpr (T == TensorType::Q6_K) q6kSums(b, x, bs, is, aux);
    else q4kSums(b, x, bs, is, aux);
}

// One row of a K format against one token: the canonical chain.
template <TensorType T>
float matvecRowK(const uint8_t* row, const int8_t* xq, const int16_t* bsum, const float* dx, int64_t nb) {
    using F = KFormat<T>;
    float acc = 0.f;
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = row + b * sizeof(typename F::Blk);
        __m512i is;
        __m256i aux;
        kSums<T>(blk, xq + 256 * b, bsum + 16 * b, is, aux);
        uint32_t sc;
        std::memcpy(&sc, blk + F::scaleAt, 4);
        const float d = halfToFloat(uint16_t(F::dHigh ? sc >> 16 : sc));
        if constexpr (F::min) {
            const float dmin = halfToFloat(uint16_t(sc >> 16));
            acc = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(float(hsum512(is))), _mm_set_ss(d * dx[b]), _mm_set_ss(acc)));
            acc =
                _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(float(hsum(aux))), _mm_set_ss(-(dmin * dx[b])), _mm_set_ss(acc)));
        } else {
            const int32_t isum = hsum512(is) - (hsum(aux) << F::offShift);
            acc = _mm_cvtss_f32(_mm_fmadd_ss(_mm_set_ss(float(isum)), _mm_set_ss(d * dx[b]), _mm_set_ss(acc)));
        }
    }
    return acc;
}

// Lane r of the result = sum of the 16 lanes of v[r] (exact; 4 levels of
// transpose-add, about 3 instructions per row instead of 7 for a reduce).
inline __m512i reduce16x16(const __m512i* v) {
    auto pair32 = [](__m512i a, __m512i b) {
        return _mm512_add_epi32(_mm512_unpacklo_epi32(a, b), _mm512_unpackhi_epi32(a, b));
    };
    auto pair64 = [](__m512i a, __m512i b) {
        return _mm512_add_epi32(_mm512_unpacklo_epi64(a, b), _mm512_unpackhi_epi64(a, b));
    };
    auto lanes = [](__m512i a, __m512i b) {
        return _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    };
    __m512i u[4];
    for (int q = 0; q < 4; ++q)
        u[q] =
            pair64(pair32(v[4 * q], v[4 * q + 1]), pair32(v[4 * q + 2], v[4 * q + 3]));  // rows 4q..4q+3 per 128 bits
    return lanes(lanes(u[0], u[1]), lanes(u[2], u[3]));
}

// The K-format tiles' prefetch. With the L2 hint (avx512vnni-l2pf)
// each row is its own stream, prefetched kKRowPrefetch bytes ahead of where
// the tile reads it and on into the same row of the next tile, as the nibble
// tiles do; the address-order sweep kPrefetchAhead ahead (kept with the L1
// hint, the default path, which AMD runs and where this was not measured)
// reaches a tile's later rows too late. Intel Xeon (family 6 model 207),
// `CAIRN_KERNELS=avx512vnni-l2pf cairn-cli bench-kernels --types T --rows
// 8192 --cols 2048 -p 16 -t 2 -r 7` (from memory), median of 7 interleaved
// rounds, GB/s, sweep / 2 KiB / 3 KiB ahead: Q6_K 23.9 / 25.1 / 26.2, Q4_K
// 23.2 / 26.3 / 26.2; llama-1b tg128 (`bench -p 1 -n 128 -t 2 -r 2`), sweep /
// 3 KiB, interleaved pairs: Q4_K 29.22 / 30.16, 30.25 / 31.61, 30.96 / 32.44,
// Q4_0 (its Q6_K output matrix) 33.46 / 33.61, 32.88 / 34.47, 33.37 / 34.55
// t/s. (An older note here said GCC 12 drops the Q6_K tile's prefetch; the
// current build has it, and it matters: `bench-kernels --types Q6_K --rows
// 8192 --cols 2048 -p 1 -t 2 -r 7` (l2pf), with / without, GB/s: 23.8 / 15.1,
// 23.3 / 12.3, 24.0 / 12.7, 2026-12-06.) 1.5 or 6 KiB ahead instead of 3 was
// no faster (tools/kernel-ab, from memory, medians of 12 alternating rounds,
// 3 KiB / other: Q6_K 24.9 / 24.1 and 21.8 / 19.2, Q4_K 22.0 / 21.7 and 22.8
// / 22.8 GB/s), nor the same lines into L1 (Q6_K 18.9 / 18.1, Q4_K 19.4 /
// 17.3). rowStreamOffset wraps only once, so where a row is shorter than half
// this (Q4_K at 2048 columns: 1152 bytes) the line is the next tile's
// following row, 768 bytes further than this block, not the same row two
// tiles on; mapping it to that row instead was not faster (tools/kernel-ab,
// 2026-12-06, medians of 12 alternating rounds, from memory, GB/s as it is /
// mapped: Q4_K at 3 KiB 21.9 / 21.8, at 6 KiB 21.8 / 21.1; at 1.5 KiB, where
// it then lands in the next tile's same row, 20.6 / 19.9).
constexpr int64_t kKRowPrefetch = 3072;

// With the L1 hint: the address-order sweep, once per block step.
template <PrefetchTo PF>
inline void prefetchKSweep(const uint8_t* base, int64_t b, int64_t step) {
    if constexpr (PF == PrefetchTo::L1) prefetchLines<PF>(base + kPrefetchAhead + b * step, step);
}

// With the L2 hint: row r's stream kKRowPrefetch ahead of block b. Called
// just before the kernel reads that row's block, so the 16 rows' prefetches
// spread over the block's work; all 48-64 at the start of each block were
// slower from memory, where the rows' arithmetic then ran with none issued
// (tools/kernel-ab, medians of 12 alternating rounds, 2026-12-06, Intel Xeon
// family 6 model 207, GB/s at the block start / spread: Q6_K 22.4 / 25.0,
// 20.3 / 23.6; Q4_K 21.4 / 23.3, 23.7 / 22.9, 22.1 / 25.8, 23.5 / 26.5; a
// loads-only Q6_K tile of the same layout streams at the read loop's speed).
// ceil(blockBytes / 64) prefetches 64 bytes apart instead of prefetchLines'
// loop over the line starts in the block: every line of the row's stream
// still gets one (some two), with no trip count that changes from block to
// block. From L1 (one 16-row tile aliased, as tools/kernel-ab does), ns per
// 16-row block, best of 30 rounds, loop / fixed: Q6_K 105.6 / 98.0, 107.5 /
// 94.6, 106.5 / 96.1; Q4_K 80.1 / 77.3, 79.3 / 75.2, 79.4 / 76.3.
template <PrefetchTo PF>
inline void prefetchKRow(const uint8_t* base, int64_t stride, int64_t b, int64_t blockBytes, int r) {
    if constexpr (PF == PrefetchTo::L2) {
        const uint8_t* p = base + r * stride + rowStreamOffset(b * blockBytes + kKRowPrefetch, stride, 16);
        for (int64_t o = 0; o < blockBytes; o += 64) prefetchLine<PF>(p + o);
    }
}

// 16 rows of a K format against one token, the float chain with rows in lanes.
// Measured 1024x2048 from L2, 1 thread (us per call): Q4_K 116 -> 68,
// Q6_K 103 -> 81, against one row at a time with horizontal sums.
template <TensorType T, PrefetchTo PF>
void matvec16K(const MatrixView& w, int64_t r0, const int8_t* xq, const int16_t* bsum, const float* dx, int64_t nb,
               float* out) {
    using F = KFormat<T>;
    constexpr size_t bb = sizeof(typename F::Blk);
    const __m512i gidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(int32_t(w.rowStride)));
    const uint8_t* base = w.row(r0);
    const int64_t step = 16 * int64_t(w.rowStride) / nb;  // tile bytes per block step
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchKSweep<PF>(base, b, step);
        const int8_t* x = xq + 256 * b;
        const int16_t* bs = bsum + 16 * b;
        __m512i is[16];
        __m256i aux[16];
        // Each row's prefetch just before its sums, as in the Q4_K/Q6_K tiles:
        // tools/kernel-ab, from memory, GB/s block start / per row: Q3_K 9.6 /
        // 10.5, 9.1 / 9.8 (10 and 12 of 12 rounds), Q2_K 18.0 / 18.0, 15.9 /
        // 15.9. Both are bound by this kernel's arithmetic (from L1: Q3_K 5.7,
        // Q2_K 10.0 GB/s on one thread), Intel Xeon family 6 model 207.
        for (int r = 0; r < 16; ++r) {
            prefetchKRow<PF>(base, int64_t(w.rowStride), b, int64_t(bb), r);
            kSums<T>(base + size_t(r) * w.rowStride + b * bb, x, bs, is[r], aux[r]);
        }
        __m512i pairs[8];  // rows A_p | B_p as reduceRows16 expects
        for (int p = 0; p < 8; ++p) {
            const int A = p < 4 ? p : p + 4, B = p < 4 ? p + 4 : p + 8;
            pairs[p] = _mm512_inserti64x4(_mm512_castsi256_si512(aux[A]), aux[B], 1);
        }
        const __m512i isum = reduce16x16(is), auxSum = reduceRows16(pairs);
        const __m512i sc = _mm512_i32gather_epi32(gidx, base + b * bb + F::scaleAt, 1);
        const __m512 dxv = _mm512_set1_ps(dx[b]);
        if constexpr (F::min) {
            const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(sc));
            const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(sc, 16)));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, dxv), acc);
            const __m512 negMin = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(_mm512_mul_ps(dmin, dxv)),
                                                                       _mm512_set1_epi32(int32_t(0x80000000u))));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(auxSum), negMin, acc);
        } else {
            const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(sc, 16)));
            const __m512i total = _mm512_sub_epi32(isum, _mm512_slli_epi32(auxSum, F::offShift));
            acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(total), _mm512_mul_ps(d, dxv), acc);
        }
    }
    _mm512_storeu_ps(out, acc);
}

// ---- Decode kernels for Q4_K, Q5_K and Q6_K with fewer instructions per
// block. Same exact integers and the same float chain as matvec16K, but the
// codes come from whole 64-byte loads (no 256-bit inserts), two rows share
// each packed vector of dots, the sub-block scales are applied with vpdpwssd
// against scale vectors made by one vpermw each, and the mins / offset sums
// are folded in without scalar unpacking.

// Activations of one Q8_K block reordered to meet Q4_K's nibbles: a 64-byte
// load of qs holds elements [0,32) and [64,96) in its low nibbles and [32,64),
// [96,128) in its high ones (then the same for 128..255).
inline void q4kActivationOrder(const int8_t* x, int8_t* out) {
    for (int h = 0; h < 2; ++h)
        for (int n = 0; n < 2; ++n) {
            std::memcpy(out + 128 * h + 64 * n, x + 128 * h + 32 * n, 32);
            std::memcpy(out + 128 * h + 64 * n + 32, x + 128 * h + 64 + 32 * n, 32);
        }
}

// The 16 row sums of the K tiles from 8 row-pair vectors: pairs[p] holds rows
// 2p (int32 lanes 0, 1 of each 128-bit lane) and 2p + 1 (lanes 2, 3), as a
// vpdpwssd of packs(dots of row 2p, dots of row 2p + 1) leaves them. Lane r
// of the result is row r's sum (exact). One shuffle-add level folds each
// lane pair and brings 4 rows to every 128-bit lane, as reduce16x16's first
// two levels do for 16 row vectors: 21 instructions instead of 45.
inline __m512i reduceRowPairs(const __m512i* pairs) {
    auto rowQuad = [](__m512i a, __m512i b) {  // lanes [a0 + a1, a2 + a3, b0 + b1, b2 + b3] per 128 bits
        const __m512 fa = _mm512_castsi512_ps(a), fb = _mm512_castsi512_ps(b);
        return _mm512_add_epi32(_mm512_castps_si512(_mm512_shuffle_ps(fa, fb, _MM_SHUFFLE(2, 0, 2, 0))),
                                _mm512_castps_si512(_mm512_shuffle_ps(fa, fb, _MM_SHUFFLE(3, 1, 3, 1))));
    };
    auto lanes = [](__m512i a, __m512i b) {
        return _mm512_add_epi32(_mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                                _mm512_shuffle_i32x4(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    };
    __m512i u[4];
    for (int q = 0; q < 4; ++q) u[q] = rowQuad(pairs[2 * q], pairs[2 * q + 1]);  // rows 4q..4q+3 per 128 bits
    return lanes(lanes(u[0], u[1]), lanes(u[2], u[3]));
}

// Word indices for a row pair's scales, for a vpdpwssd against packs(dots of
// row A, dots of row B): 128-bit lane L holds 4 words of A's dot vector
// (its int32 lanes 4L..4L+3) then 4 of B's. `sub(L)` is the sub-block of
// those dot lanes; A's scale words start at word 0 of the source, B's at 16.
template <class SubBlock>
inline __m512i rowPairScaleIndex(SubBlock sub) {
    alignas(64) int16_t idx[32];
    for (int i = 0; i < 32; ++i) idx[i] = int16_t((i % 8 < 4 ? 0 : 16) + sub(i / 8));
    return _mm512_load_si512(idx);
}

// The canonical float chain step of the 16-row K kernels for one block: lane
// r of `isum` is row r's isum (offset folded in), of `msum` its msum.
template <bool MIN>
inline __m512 kChainStep(__m512 acc, __m512i isum, __m512i msum, __m512i sc, bool dHigh, float dxb) {
    const __m512 dxv = _mm512_set1_ps(dxb);
    const __m512 d = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(dHigh ? _mm512_srli_epi32(sc, 16) : sc));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum), _mm512_mul_ps(d, dxv), acc);
    if constexpr (MIN) {
        const __m512 dmin = _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(sc, 16)));
        const __m512 negMin = _mm512_castsi512_ps(
            _mm512_xor_si512(_mm512_castps_si512(_mm512_mul_ps(dmin, dxv)), _mm512_set1_epi32(int32_t(0x80000000u))));
        acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(msum), negMin, acc);
    }
    return acc;
}

// Q4_K's scale bytes of 4 rows at once: 128-bit lane k holds the 16 bytes at
// p[k] (12 scale bytes, 4 ignored) and becomes sc[0..7], m[0..7] of row k
// (get_scale_min_k4 of the reference, vectorized).
inline __m512i q4kScales4(const uint8_t* const* p) {
    __m512i s = _mm512_castsi128_si512(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p[0])));
    s = _mm512_inserti32x4(s, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[1])), 1);
    s = _mm512_inserti32x4(s, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[2])), 2);
    s = _mm512_inserti32x4(s, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p[3])), 3);
    const __m512i a = _mm512_shuffle_epi8(
        s, _mm512_broadcast_i32x4(_mm_setr_epi8(0, 1, 2, 3, 8, 9, 10, 11, 4, 5, 6, 7, 8, 9, 10, 11)));
    const __m512i b = _mm512_shuffle_epi8(
        s, _mm512_broadcast_i32x4(_mm_setr_epi8(-1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, 4, 5, 6, 7)));
    const __m512i m1 =
        _mm512_broadcast_i32x4(_mm_setr_epi8(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 0, 0, 0, 0));
    const __m512i m2 = _mm512_broadcast_i32x4(_mm_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 15, 15, 15, 15));
    // (a & m1) | ((a >> 4) & m2) | ((b >> 2) & 0x30)
    const __m512i low = _mm512_ternarylogic_epi32(_mm512_and_si512(a, m1), _mm512_srli_epi16(a, 4), m2, 0xF8);
    return _mm512_ternarylogic_epi32(low, _mm512_srli_epi16(b, 2), _mm512_set1_epi8(0x30), 0xF8);
}

// The 4 code vectors of one Q4_K or Q5_K row's block, in the order of
// q4kActivationOrder: lo(q[0,64)), hi(q[0,64)), lo(q[64,128)), hi(q[64,128)).
// Q5_K adds bit 4 from qh: byte l of each 32-byte quarter of qs takes qh[l]
// bit 2c (low nibble) or 2c + 1 (high nibble) for its 64-element chunk c, so
// with qh in both 256-bit halves, vector k takes bits (k % 2) + 4 (k / 2) in
// the low half and 2 more in the high half. Q5_K ran on the generic
// matvec16K before (a row at a time, 256-bit code inserts, reduce16x16 and a
// second reduction for the mins): tools/kernel-ab, 2026-12-06, Intel Xeon
// family 6 model 207, GB/s generic / this: compute only 12.2 / 21.4, 11.5 /
// 20.0; from memory 14.0 / 21.4, 13.1 / 19.9 (12 of 12 rounds faster).
template <TensorType T, bool GFNI>
__attribute__((target("gfni"))) inline void q45kCodes(const uint8_t* blk, __m512i* codes) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    if constexpr (T == TensorType::Q4_K) {
        const __m512i q0 = _mm512_loadu_si512(blk + 16), q1 = _mm512_loadu_si512(blk + 80);
        codes[0] = _mm512_and_si512(q0, low4);
        codes[1] = highNibbles<GFNI>(q0);
        codes[2] = _mm512_and_si512(q1, low4);
        codes[3] = highNibbles<GFNI>(q1);
    } else {
        static_assert(T == TensorType::Q5_K);
        const __m512i q0 = _mm512_loadu_si512(blk + 48), q1 = _mm512_loadu_si512(blk + 112);
        const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk + 16)));
        __m512i bit4[4];  // qh's bit for vector k at bit 4 of each byte, the rest zero
        for (int k = 0; k < 4; ++k) {
            const int lowBit = k % 2 + 4 * (k / 2), highBit = lowBit + 2;
            if constexpr (GFNI) {
                // result bit 4 = source bit n: matrix byte 3 = 1 << n
                const int64_t lo = int64_t(1) << (24 + lowBit), hi = int64_t(1) << (24 + highBit);
                bit4[k] = _mm512_gf2p8affine_epi64_epi8(h, _mm512_set_epi64(hi, hi, hi, hi, lo, lo, lo, lo), 0);
            } else {
                // 16-bit shifts by at most 4: bit 4 of each byte comes from its own
                // byte. The count in every word of a 64-bit lane: c * 0x0001000100010001.
                const int64_t words = 0x0001000100010001;
                const bool left = highBit <= 4;
                const int64_t lo = (left ? 4 - lowBit : lowBit - 4) * words,
                              hi = (left ? 4 - highBit : highBit - 4) * words;
                const __m512i count = _mm512_set_epi64(hi, hi, hi, hi, lo, lo, lo, lo);
                const __m512i t = left ? _mm512_sllv_epi16(h, count) : _mm512_srlv_epi16(h, count);
                bit4[k] = _mm512_and_si512(t, _mm512_set1_epi8(0x10));
            }
        }
        // (x & 0x0F) | bit4: ternary-logic 0xEA = (A & B) | C
        codes[0] = _mm512_ternarylogic_epi32(q0, low4, bit4[0], 0xEA);
        codes[1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(q0, 4), low4, bit4[1], 0xEA);
        codes[2] = _mm512_ternarylogic_epi32(q1, low4, bit4[2], 0xEA);
        codes[3] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(q1, 4), low4, bit4[3], 0xEA);
    }
}

// 16 rows of Q4_K or Q5_K against one token; xr: the activations in
// q4kActivationOrder. Per 4 rows the scale bytes are unpacked in one zmm. Two rows go together:
// each of their 4 dot vectors (each dot of 4 codes <= 4 * 31 * 128) is
// packed to int16 with the other row's and scaled by one vpdpwssd into the
// pair's sums; the mins of 4 rows meet the 32-element activation sums in
// one vpdpwssd. Measured 1024x2048 from L2, 1 thread: 19.3 -> 26.0 GB/s
// against one vpermw + vpdpwssd per dot vector and a scale unpack per row.
// Row pairs (reduceRowPairs) instead of one sum vector per row reduced by
// reduce16x16 save 24 of about 350 vector instructions a block; with the
// fixed-count prefetch of prefetchKRow, tools/kernel-ab against the kernel before both
// (2026-12-06, Intel Xeon family 6 model 207), GB/s before / after: compute
// only 24.4 / 26.2, 23.3 / 26.4, 26.1 / 28.5; from memory 21.0 / 20.5, 18.3 /
// 19.3, 21.9 / 20.6 (the same: see PERFORMANCE.md on what bounds K decode).
template <TensorType T, bool GFNI, PrefetchTo PF>
__attribute__((target("gfni"))) void matvec16Q45K(const MatrixView& w, int64_t r0, const int8_t* xr,
                                                  const int16_t* bsum, const float* dx, int64_t nb, float* out) {
    constexpr size_t bb = sizeof(typename KFormat<T>::Blk);
    const __m512i gidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(int32_t(w.rowStride)));
    // Dot vector k of a row: lo(q[0,64)) holds sub-blocks 0 | 2 (int32 lanes
    // 0-7 | 8-15), hi(q[0,64)) 1 | 3, lo(q[64,128)) 4 | 6, hi 5 | 7.
    static constexpr int kSub[4][2] = {{0, 2}, {1, 3}, {4, 6}, {5, 7}};
    __m512i scaleIdx[4];
    for (int k = 0; k < 4; ++k) scaleIdx[k] = rowPairScaleIndex([k](int L) { return kSub[k][L < 2 ? 0 : 1]; });
    // lane 4q + k of the 4x4 transpose-add below is row 4k + q
    const __m512i rowOrder = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const uint8_t* base = w.row(r0);
    const int64_t step = 16 * int64_t(w.rowStride) / nb;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchKSweep<PF>(base, b, step);
        const int8_t* x = xr + 256 * b;
        const __m512i xv[4] = {_mm512_loadu_si512(x), _mm512_loadu_si512(x + 64), _mm512_loadu_si512(x + 128),
                               _mm512_loadu_si512(x + 192)};
        // sums of the 8 sub-blocks of 32 activations as words, 4 times (one per row)
        const __m256i bs16 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum + 16 * b));
        const __m256i bs32 = _mm256_madd_epi16(bs16, _mm256_set1_epi16(1));  // |sum| <= 32 * 128 fits int16
        const __m512i bs4 = _mm512_broadcast_i32x4(
            _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packs_epi32(bs32, bs32), _MM_SHUFFLE(3, 1, 2, 0))));
        __m512i pairs[8], mq[4];
        for (int q = 0; q < 4; ++q) {
            const uint8_t* blk[4];
            const uint8_t* sp[4];
            for (int k = 0; k < 4; ++k) {
                blk[k] = base + size_t(4 * q + k) * w.rowStride + b * bb;
                sp[k] = blk[k] + 4;
            }
            const __m512i u4 = q4kScales4(sp);
            // scale words of rows 4q, 4q + 1 (words 0-15 | 16-31) and of 4q + 2, 4q + 3
            const __m512i sw[2] = {_mm512_cvtepu8_epi16(_mm512_castsi512_si256(u4)),
                                   _mm512_cvtepu8_epi16(_mm512_extracti64x4_epi64(u4, 1))};
            // mins of the 4 rows (bytes 8-15 of each lane) as 32 words
            const __m512i mins = _mm512_cvtepu8_epi16(
                _mm512_castsi512_si256(_mm512_permutexvar_epi64(_mm512_setr_epi64(1, 3, 5, 7, 1, 3, 5, 7), u4)));
            mq[q] = _mm512_dpwssd_epi32(_mm512_setzero_si512(), mins, bs4);
            for (int h = 0; h < 2; ++h) {
                prefetchKRow<PF>(base, int64_t(w.rowStride), b, int64_t(bb), 4 * q + 2 * h);
                prefetchKRow<PF>(base, int64_t(w.rowStride), b, int64_t(bb), 4 * q + 2 * h + 1);
                __m512i codesA[4], codesB[4];
                q45kCodes<T, GFNI>(blk[2 * h], codesA);
                q45kCodes<T, GFNI>(blk[2 * h + 1], codesB);
                const __m512i z = _mm512_setzero_si512();
                __m512i sums = z;
                for (int k = 0; k < 4; ++k) {
                    const __m512i dots = _mm512_packs_epi32(_mm512_dpbusd_epi32(z, codesA[k], xv[k]),
                                                            _mm512_dpbusd_epi32(z, codesB[k], xv[k]));
                    sums = _mm512_dpwssd_epi32(sums, dots, _mm512_permutexvar_epi16(scaleIdx[k], sw[h]));
                }
                pairs[2 * q + h] = sums;
            }
        }
        const __m512i msum = _mm512_permutexvar_epi32(rowOrder, sumQuads(mq));
        const __m512i sc = _mm512_i32gather_epi32(gidx, base + b * bb, 1);  // d | dmin << 16
        acc = kChainStep<true>(acc, reduceRowPairs(pairs), msum, sc, false, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

// The codes (0..63) of one Q6_K row's 128-element half n: chunks 2n, 2n + 1
// of `c` (the values q6kCodes gives the row paths, from one broadcast of qh). The high bits go to bits 4-5: elements [0,32) of a half take qh
// bits 0-1, [32,64) bits 2-3 (shift left 4 / 2); [64,96) bits 4-5, [96,128) 6-7.
template <bool GFNI>
__attribute__((target("gfni"))) inline void q6kHalfCodes(const BlockQ6_K* blk, int n, __m512i* c) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i l = _mm512_loadu_si512(blk->ql + 64 * n);
    const __m512i h = _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk->qh + 32 * n)));
    __m512i hb0, hb1;
    if constexpr (GFNI) {
        // GFNI matrices: bits 0,1 (2,3 in the high half) to 4,5; bits 4,5 (6,7) to 4,5
        const int64_t m01 = 0x01020000, m23 = 0x04080000, m45 = 0x10200000, m67 = 0x40800000;
        hb0 = _mm512_gf2p8affine_epi64_epi8(h, _mm512_set_epi64(m23, m23, m23, m23, m01, m01, m01, m01), 0);
        hb1 = _mm512_gf2p8affine_epi64_epi8(h, _mm512_set_epi64(m67, m67, m67, m67, m45, m45, m45, m45), 0);
    } else {
        const int64_t four = 0x0004000400040004, two = 0x0002000200020002;
        const __m512i bits45 = _mm512_set1_epi8(0x30);
        hb0 = _mm512_and_si512(_mm512_sllv_epi16(h, _mm512_set_epi64(two, two, two, two, four, four, four, four)),
                               bits45);
        hb1 = _mm512_and_si512(_mm512_srlv_epi16(h, _mm512_set_epi64(two, two, two, two, 0, 0, 0, 0)), bits45);
    }
    // (l & 0x0F) | hi bits: ternary-logic 0xEA = (A & B) | C
    c[2 * n] = _mm512_ternarylogic_epi32(l, low4, hb0, 0xEA);
    c[2 * n + 1] = _mm512_ternarylogic_epi32(_mm512_srli_epi16(l, 4), low4, hb1, 0xEA);
}

// 16 rows of Q6_K against one token (activations in natural order), two
// rows at a time as in matvec16Q45K: each chunk's dot vectors of the pair are
// packed to int16 together and scaled by one vpdpwssd, and the pair's offset
// (-32 * sum_j s_j bsum_j) is one more vpdpwssd of 32 * s_j against -bsum_j
// (before: a vpmaddwd, shift and subtract per row). About 48 of 430 vector
// instructions a block fewer; with the fixed-count prefetch of prefetchKRow,
// tools/kernel-ab against the kernel before both (2026-12-06, Intel Xeon
// family 6 model 207), GB/s before / after: compute only 28.8 / 35.4, 29.1 /
// 34.3, 31.1 / 38.4; from memory 20.3 / 20.5, 17.7 / 17.4, 24.3 / 25.3.
template <bool GFNI, PrefetchTo PF>
__attribute__((target("gfni"))) void matvec16Q6K(const MatrixView& w, int64_t r0, const int8_t* xq, const int16_t* bsum,
                                                 const float* dx, int64_t nb, float* out) {
    constexpr size_t bb = sizeof(BlockQ6_K);
    const __m512i gidx = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                            _mm512_set1_epi32(int32_t(w.rowStride)));
    // chunk c (elements [64c, 64c + 64)): sub-blocks 4c..4c+3, 4 dpbusd lanes
    // each, so the dot lanes 4L..4L+3 of chunk c are sub-block 4c + L
    __m512i scaleIdx[4];
    for (int c = 0; c < 4; ++c) scaleIdx[c] = rowPairScaleIndex([c](int L) { return 4 * c + L; });
    // The offset's words: int32 lane 2m + e of a 128-bit lane L holds row A
    // (m = 0) or B (m = 1), its words h = 0, 1 sub-block 4L + 2e + h.
    alignas(64) int16_t offWords[32], bsumWords[32];
    for (int i = 0; i < 32; ++i) {
        const int L = i / 8, m = (i % 8) / 4, e = (i % 4) / 2, h = i % 2;
        bsumWords[i] = int16_t(4 * L + 2 * e + h);
        offWords[i] = int16_t(16 * m + bsumWords[i]);
    }
    const __m512i offIdx = _mm512_load_si512(offWords), bsumIdx = _mm512_load_si512(bsumWords);
    const uint8_t* base = w.row(r0);
    const int64_t step = 16 * int64_t(w.rowStride) / nb;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        prefetchKSweep<PF>(base, b, step);
        const int8_t* x = xq + 256 * b;
        __m512i xv[4];
        for (int c = 0; c < 4; ++c) xv[c] = _mm512_loadu_si512(x + 64 * c);
        // -bsum_j (|bsum_j| <= 16 * 128) in the offset's word order
        const __m512i bs = _mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(bsum + 16 * b)));
        const __m512i negBsum = _mm512_sub_epi16(_mm512_setzero_si512(), _mm512_permutexvar_epi16(bsumIdx, bs));
        __m512i pairs[8];
        for (int p = 0; p < 8; ++p) {
            const auto* blkA = reinterpret_cast<const BlockQ6_K*>(base + size_t(2 * p) * w.rowStride + b * bb);
            const auto* blkB = reinterpret_cast<const BlockQ6_K*>(base + size_t(2 * p + 1) * w.rowStride + b * bb);
            prefetchKRow<PF>(base, int64_t(w.rowStride), b, int64_t(bb), 2 * p);
            prefetchKRow<PF>(base, int64_t(w.rowStride), b, int64_t(bb), 2 * p + 1);
            // the 16 scales of A (words 0-15) and B (16-31)
            const __m512i sw = _mm512_cvtepi8_epi16(_mm256_loadu2_m128i(
                reinterpret_cast<const __m128i*>(blkB->scales), reinterpret_cast<const __m128i*>(blkA->scales)));
            // isum = sum_j s_j dot_j - 32 sum_j s_j bsum_j, all exact int32 (32 s_j fits int16)
            __m512i sums = _mm512_dpwssd_epi32(_mm512_setzero_si512(),
                                               _mm512_slli_epi16(_mm512_permutexvar_epi16(offIdx, sw), 5), negBsum);
            __m512i cA[4], cB[4];
            for (int n = 0; n < 2; ++n) {
                q6kHalfCodes<GFNI>(blkA, n, cA);
                q6kHalfCodes<GFNI>(blkB, n, cB);
            }
            const __m512i z = _mm512_setzero_si512();
            for (int c = 0; c < 4; ++c) {
                // dots of 4 codes (<= 4 * 63 * 128) fit int16
                const __m512i dots =
                    _mm512_packs_epi32(_mm512_dpbusd_epi32(z, cA[c], xv[c]), _mm512_dpbusd_epi32(z, cB[c], xv[c]));
                sums = _mm512_dpwssd_epi32(sums, dots, _mm512_permutexvar_epi16(scaleIdx[c], sw));
            }
            pairs[p] = sums;
        }
        const __m512i sc = _mm512_i32gather_epi32(gidx, base + b * bb + 206, 1);  // d in the high half
        acc = kChainStep<false>(acc, reduceRowPairs(pairs), _mm512_setzero_si512(), sc, true, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

// Q4_K decode of one token for one tile of a Tiles16 matrix (kQ4_KTileBlock:
// each row's block words in its own int32 lane). Per pair of sub-blocks
// (2g, 2g + 1), chunk c of the pair's 32 code words meets activation bytes
// 64g + 4c.. in its low nibbles and 64g + 32 + 4c.. in its high ones (masked
// in place, x 16, shifted down once: exact); each sub-block's dot is scaled
// by its row's 6-bit scale in its lane, and the mins meet the activations'
// 32-element sums in 4 vpdpwssd. The same integers and float chain as
// matvec16Q45K, with no shuffles or reductions across rows.
// `bsPairs`: per block, 4 words of (sum of sub-block 2p, of 2p + 1) as int16.
template <PrefetchTo PF, TileFetch TF>
void matvecTileQ4_K(const uint8_t* tile, const int8_t* xq, const int32_t* bsPairs, const float* dx, int64_t nb,
                    float* out, bool prefetchX) {
    constexpr int64_t kBlock = int64_t(kQ4_KTileBlock);
    const __m512i low4 = _mm512_set1_epi8(0x0F), high4 = _mm512_set1_epi8(char(0xF0));
    const __m512i six = _mm512_set1_epi8(0x3F), four = _mm512_set1_epi8(0x0F), top2 = _mm512_set1_epi8(0x30);
    // vpshufb picks bytes within a 128-bit lane: byte k of each int32 lane
    // zero-extended (scales), and bytes 0, 1 or 2, 3 as two int16 words (mins).
    auto lanes = [](int b0, int b1, int b2, int b3) {
        alignas(16) int8_t idx[16];
        for (int d = 0; d < 4; ++d) {
            const int b[4] = {b0, b1, b2, b3};
            for (int k = 0; k < 4; ++k) idx[4 * d + k] = int8_t(b[k] < 0 ? -128 : 4 * d + b[k]);
        }
        return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i*>(idx)));
    };
    const __m512i byteIdx[4] = {lanes(0, -1, -1, -1), lanes(1, -1, -1, -1), lanes(2, -1, -1, -1), lanes(3, -1, -1, -1)};
    const __m512i words01 = lanes(0, -1, 1, -1), words23 = lanes(2, -1, 3, -1);
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        const int8_t* x = xq + 256 * b;
        if (prefetchX) {
            prefetchActivationBlock(xq, 256, b, 1);
            prefetchActivationBlock(bsPairs, 4, b, 1);
            prefetchActivationBlock(dx, 1, b, 1);
        }
        const __m512i hdr = _mm512_loadu_si512(blk);  // d | dmin << 16
        const __m512i s0 = _mm512_loadu_si512(blk + tileWordAt(0, 1)), s1 = _mm512_loadu_si512(blk + tileWordAt(0, 2)),
                      s2 = _mm512_loadu_si512(blk + tileWordAt(0, 3));
        // get_scale_min_k4 in every lane: scales 0-3, 4-7 and mins 0-3, 4-7 as bytes
        // ternary 0xF8 = A | (B & C)
        const __m512i sc[2] = {_mm512_and_si512(s0, six),
                               _mm512_ternarylogic_epi32(_mm512_and_si512(s2, four), _mm512_srli_epi32(s0, 2), top2, 0xF8)};
        const __m512i mn[2] = {
            _mm512_and_si512(s1, six),
            _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi32(s2, 4), four), _mm512_srli_epi32(s1, 2), top2,
                                      0xF8)};
        // The 4 pairs' 8 dot chains side by side: one chain of 32 dpbusd
        // would wait on each one's latency.
        __m512i lo[4], hi16[4];
        for (int g = 0; g < 4; ++g) lo[g] = hi16[g] = _mm512_setzero_si512();
        const auto step = [&](int g, int c) {
            const __m512i codes = _mm512_loadu_si512(blk + tileWordAt(0, 4 + 8 * g + c));
            lo[g] = _mm512_dpbusd_epi32(lo[g], _mm512_and_si512(codes, low4), broadcastWord(x + 64 * g + 4 * c));
            hi16[g] =
                _mm512_dpbusd_epi32(hi16[g], _mm512_and_si512(codes, high4), broadcastWord(x + 64 * g + 32 + 4 * c));
        };
        if constexpr (TF == TileFetch::Hardware) {
            // The block's words in address order, which the hardware
            // prefetchers follow; the order below reads words 512 bytes
            // apart and, without prefetch, streamed at half the speed. Zen 4,
            // one process alternating the paths on 12 llama-1b-shaped Q4_K
            // layers from memory (each pass beside a read loop's), median
            // share of the read loop, host slow: this 0.946, 0.987;
            // avx512vnni 0.889, 0.896; avx512vnni-l2pf 0.896, 0.892; the
            // order below without prefetch 0.561. From L2 this order
            // computes about 15 % slower (`bench-kernels --types Q4_K --rows
            // 512 -p 1 -t 1 --decode-mib 1`, best 43-49 against 46-57 GB/s:
            // fewer independent chains at a time), so the prefetching paths
            // keep the order below.
            for (int g = 0; g < 4; ++g)
                for (int c = 0; c < 8; ++c) step(g, c);
        } else {
            for (int c = 0; c < 8; ++c) {
                // An eighth of the block's prefetches at each step, as many lines
                // a step as the Q4_0 tile's (a burst of 36 at the block's start
                // streamed no faster than the file layout's kernel).
                prefetchTileColumn<PF, TF>(blk + c * (kBlock / 8), kBlock / 8);
                for (int g = 0; g < 4; ++g) step(g, c);
            }
        }
        __m512i isum = _mm512_setzero_si512();
        for (int g = 0; g < 4; ++g) {
            const __m512i scales = sc[g / 2];
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(lo[g], _mm512_shuffle_epi8(scales, byteIdx[2 * (g % 2)])));
            isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(_mm512_srai_epi32(hi16[g], 4),
                                                             _mm512_shuffle_epi8(scales, byteIdx[2 * (g % 2) + 1])));
        }
        __m512i msum = _mm512_setzero_si512();
        for (int p = 0; p < 4; ++p)
            msum = _mm512_dpwssd_epi32(msum, _mm512_shuffle_epi8(mn[p / 2], p % 2 ? words23 : words01),
                                       _mm512_set1_epi32(bsPairs[4 * b + p]));
        acc = kChainStep<true>(acc, isum, msum, hdr, false, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

// Q6_K decode of one token for one tile of a Tiles16 matrix (kQ6_KTileBlock:
// each row's 52 block words in its own int32 lane, then the rows' d). For
// half n and chunk c, ql words 16n + c and 16n + 8 + c and qh word
// 32 + 8n + c hold, in every lane, 4 codes of each of the half's 4 groups of
// 32 elements (the reference's q1..q4); group k meets activation bytes
// 128n + 32k + 4c.. and sums into sub-block 8n + 2k + c / 4. Then
// isum = sum_j s_j (dot_j - 32 bsum_j) with each row's int8 scales in its
// lane: the integers of matvec16Q6K, exact in int32, and its float chain.
// `offsets`: per block, 32 * bsum_j of its 16 sub-blocks, as int32.
template <bool GFNI, PrefetchTo PF, TileFetch TF>
__attribute__((target("gfni"))) void matvecTileQ6_K(const uint8_t* tile, const int8_t* xq, const int32_t* offsets,
                                                    const float* dx, int64_t nb, float* out, bool prefetchX) {
    constexpr int64_t kBlock = int64_t(kQ6_KTileBlock);
    const __m512i low4 = _mm512_set1_epi8(0x0F), bits45 = _mm512_set1_epi8(0x30);
    // GFNI bit matrices: output bit i takes the source bits set in byte 7 - i.
    const __m512i qh01 = _mm512_set1_epi64(0x01020000), qh23 = _mm512_set1_epi64(0x04080000),
                  highNibble = _mm512_set1_epi64(int64_t(0x1020408000000000ull));
    __m512 acc = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* blk = tile + b * kBlock;
        const int8_t* x = xq + 256 * b;
        if (prefetchX) {
            prefetchActivationBlock(xq, 256, b, 1);
            prefetchActivationBlock(offsets, 16, b, 1);
            prefetchActivationBlock(dx, 1, b, 1);
        }
        __m512i isum = _mm512_setzero_si512();
        for (int n = 0; n < 2; ++n) {
            __m512i dot[8];  // [2k + c / 4]: sub-block 8n + 2k + c / 4
            for (auto& d : dot) d = _mm512_setzero_si512();
            // Unrolled, so that dot[2k + c / 4] is a register: GCC 12 kept
            // the loop and dot[] on the stack, each vpdpbusd between a load
            // and a store of its sum. Intel Xeon family 6 model 207, from L2
            // (`bench-kernels --types Q6_K --rows 512 --cols 2048 -p 1 -t 1
            // -r 300 --decode-mib 1`, five alternating rounds, best GB/s of
            // the three quiet ones): 37.2-37.6 -> 44.1-44.2.
#pragma GCC unroll 8
            for (int c = 0; c < 8; ++c) {
                // A sixteenth of the block's prefetches at each step (as the Q4_K tile).
                prefetchTileColumn<PF, TF>(blk + (8 * n + c) * (kBlock / 16), kBlock / 16);
                const __m512i qlA = _mm512_loadu_si512(blk + q6kTileWordAt(0, 16 * n + c));
                const __m512i qlB = _mm512_loadu_si512(blk + q6kTileWordAt(0, 16 * n + 8 + c));
                const __m512i qh = _mm512_loadu_si512(blk + q6kTileWordAt(0, 32 + 8 * n + c));
                __m512i e[4];
                // ternary 0xEA = (A & B) | C, 0xF8 = A | (B & C)
                if constexpr (GFNI) {
                    e[0] = _mm512_ternarylogic_epi32(qlA, low4, _mm512_gf2p8affine_epi64_epi8(qh, qh01, 0), 0xEA);
                    e[1] = _mm512_ternarylogic_epi32(qlB, low4, _mm512_gf2p8affine_epi64_epi8(qh, qh23, 0), 0xEA);
                    e[2] = _mm512_ternarylogic_epi32(_mm512_gf2p8affine_epi64_epi8(qlA, highNibble, 0), qh, bits45, 0xF8);
                    e[3] = _mm512_ternarylogic_epi32(_mm512_gf2p8affine_epi64_epi8(qlB, highNibble, 0),
                                                     _mm512_srli_epi16(qh, 2), bits45, 0xF8);
                } else {
                    e[0] = _mm512_ternarylogic_epi32(qlA, low4, _mm512_and_si512(_mm512_slli_epi16(qh, 4), bits45), 0xEA);
                    e[1] = _mm512_ternarylogic_epi32(qlB, low4, _mm512_and_si512(_mm512_slli_epi16(qh, 2), bits45), 0xEA);
                    e[2] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(qlA, 4), low4), qh, bits45, 0xF8);
                    e[3] = _mm512_ternarylogic_epi32(_mm512_and_si512(_mm512_srli_epi16(qlB, 4), low4),
                                                     _mm512_srli_epi16(qh, 2), bits45, 0xF8);
                }
                for (int k = 0; k < 4; ++k)
                    dot[2 * k + c / 4] =
                        _mm512_dpbusd_epi32(dot[2 * k + c / 4], e[k], broadcastWord(x + 128 * n + 32 * k + 4 * c));
            }
            for (int j = 0; j < 8; ++j) {
                // scale 8n + j: byte j % 4 of scale word 48 + 2n + j / 4, sign-extended in its lane
                const __m512i words = _mm512_loadu_si512(blk + q6kTileWordAt(0, 48 + 2 * n + j / 4));
                const __m512i scale = _mm512_srai_epi32(_mm512_slli_epi32(words, 24 - 8 * (j % 4)), 24);
                const __m512i centered = _mm512_sub_epi32(dot[j], _mm512_set1_epi32(offsets[16 * b + 8 * n + j]));
                isum = _mm512_add_epi32(isum, _mm512_mullo_epi32(centered, scale));
            }
        }
        acc = tileChainStep(acc, isum, blk + kQ6_KTileD, dx[b]);
    }
    _mm512_storeu_ps(out, acc);
}

template <TensorType T, PrefetchTo PF, TileFetch TF>
void matvecKRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t nb = a.nBlocks;
    const bool fast = w.rowStride * 16 < (1u << 31);  // gather offsets fit int32
    for (int64_t t = 0; t < a.nTokens; ++t) {
        const int8_t* xq = a.q + t * a.cols;
        const int16_t* bsum = a.bsum + t * (a.cols / 16);
        const float* dx = a.d + t * nb;
        float* yt = y + t * ldy;
        int64_t r = r0;
        if constexpr (T == TensorType::Q4_K) {
            if (w.layout == RowLayout::Tiles16 && r + 16 <= r1) {
                auto* bsPairs = reinterpret_cast<int32_t*>(scratch(3, size_t(nb) * 16));
                q4kSubBlockPairSums(bsum, nb, bsPairs);
                const bool prefetchX = tilePrefetchesActivations<TF>(nb * int64_t(kQ4_KTileBlock));
                for (; r + 16 <= r1; r += 16) matvecTileQ4_K<PF, TF>(w.row(r), xq, bsPairs, dx, nb, yt + r, prefetchX);
            }
        }
        if constexpr (T == TensorType::Q6_K) {
            if (w.layout == RowLayout::Tiles16 && r + 16 <= r1) {
                auto* offsets = reinterpret_cast<int32_t*>(scratch(3, size_t(nb) * 64));
                q6kCodeOffsets(bsum, nb, offsets);
                const bool prefetchX = tilePrefetchesActivations<TF>(nb * int64_t(kQ6_KTileBlock));
                for (; r + 16 <= r1; r += 16)
                    kHasGfni ? matvecTileQ6_K<true, PF, TF>(w.row(r), xq, offsets, dx, nb, yt + r, prefetchX)
                             : matvecTileQ6_K<false, PF, TF>(w.row(r), xq, offsets, dx, nb, yt + r, prefetchX);
            }
        }
        if (fast && r + 16 <= r1 && w.layout == RowLayout::File) {
            if constexpr (T == TensorType::Q4_K || T == TensorType::Q5_K) {
                auto* xr = reinterpret_cast<int8_t*>(scratch(3, size_t(a.cols)));
                for (int64_t b = 0; b < nb; ++b) q4kActivationOrder(xq + 256 * b, xr + 256 * b);
                for (; r + 16 <= r1; r += 16)
                    kHasGfni ? matvec16Q45K<T, true, PF>(w, r, xr, bsum, dx, nb, yt + r)
                             : matvec16Q45K<T, false, PF>(w, r, xr, bsum, dx, nb, yt + r);
            } else if constexpr (T == TensorType::Q6_K) {
                for (; r + 16 <= r1; r += 16)
                    kHasGfni ? matvec16Q6K<true, PF>(w, r, xq, bsum, dx, nb, yt + r)
                             : matvec16Q6K<false, PF>(w, r, xq, bsum, dx, nb, yt + r);
            } else {
                for (; r + 16 <= r1; r += 16) matvec16K<T, PF>(w, r, xq, bsum, dx, nb, yt + r);
            }
        }
        for (; r < r1; ++r) yt[r] = matvecRowK<T>(w.row(r), xq, bsum, dx, nb);
    }
}

template <PrefetchTo PF, TileFetch TF>
void matvecK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    switch (w.type) {
    case TensorType::Q2_K: matvecKRows<TensorType::Q2_K, PF, TF>(w, r0, r1, a, y, ldy); break;
    case TensorType::Q3_K: matvecKRows<TensorType::Q3_K, PF, TF>(w, r0, r1, a, y, ldy); break;
    case TensorType::Q4_K: matvecKRows<TensorType::Q4_K, PF, TF>(w, r0, r1, a, y, ldy); break;
    case TensorType::Q5_K: matvecKRows<TensorType::Q5_K, PF, TF>(w, r0, r1, a, y, ldy); break;
    default: matvecKRows<TensorType::Q6_K, PF, TF>(w, r0, r1, a, y, ldy); break;
    }
}

// SMALL: every 16-element code dot fits int16, so the scale multiply is one
// vpmaddwd against (s, 0) instead of the two-uop vpmulld.
template <int R, int NG, bool MIN, bool SMALL>
void gemmKTile(const uint8_t* u, int64_t K, const int16_t* s, const int16_t* mn, const float* d, const float* dmin,
               int64_t nb, int offShift, const uint8_t* px, size_t groupStride, __m512* out) {
    __m512 acc[R][NG];
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) acc[r][g] = _mm512_setzero_ps();
    for (int64_t b = 0; b < nb; ++b) {
        const uint8_t* xb[NG];
        for (int g = 0; g < NG; ++g) xb[g] = px + g * groupStride + b * kPackK;
        __m512i isum[R][NG];
        for (int r = 0; r < R; ++r)
            for (int g = 0; g < NG; ++g) isum[r][g] = _mm512_setzero_si512();
        for (int j = 0; j < 16; ++j) {
            __m512i dot[R][NG];
            for (int r = 0; r < R; ++r)
                for (int g = 0; g < NG; ++g) dot[r][g] = _mm512_setzero_si512();
            for (int k4 = 0; k4 < 4; ++k4) {
                __m512i xv[NG];
                for (int g = 0; g < NG; ++g) xv[g] = _mm512_load_si512(xb[g] + (4 * j + k4) * 64);
                for (int r = 0; r < R; ++r) {
                    const __m512i wv = _mm512_set1_epi32(load32(u + r * K + b * 256 + 16 * j + 4 * k4));
                    for (int g = 0; g < NG; ++g) dot[r][g] = _mm512_dpbusd_epi32(dot[r][g], wv, xv[g]);
                }
            }
            for (int r = 0; r < R; ++r) {
                const int16_t sj = s[(r * nb + b) * 16 + j];
                for (int g = 0; g < NG; ++g) {
                    const __m512i scaled = SMALL ? _mm512_madd_epi16(dot[r][g], _mm512_set1_epi32(uint16_t(sj)))
                                                 : _mm512_mullo_epi32(dot[r][g], _mm512_set1_epi32(sj));
                    isum[r][g] = _mm512_add_epi32(isum[r][g], scaled);
                }
            }
        }
        for (int g = 0; g < NG; ++g) {
            const __m512 dx = _mm512_load_ps(xb[g] + 4096);
            const uint8_t* bp = xb[g] + 4096 + 64;
            for (int r = 0; r < R; ++r) {
                const int16_t* sr = s + (r * nb + b) * 16;
                const int16_t* mr = mn + (r * nb + b) * 16;
                __m512i os = _mm512_setzero_si512(), ms = _mm512_setzero_si512();
                for (int jp = 0; jp < 8; ++jp) {
                    const __m512i bsv = _mm512_load_si512(bp + jp * 64);
                    if (offShift)
                        os = _mm512_dpwssd_epi32(os,
                                                 _mm512_set1_epi32(int32_t(uint16_t(sr[2 * jp])) |
                                                                   int32_t(uint32_t(uint16_t(sr[2 * jp + 1])) << 16)),
                                                 bsv);
                    if constexpr (MIN)
                        ms = _mm512_dpwssd_epi32(ms,
                                                 _mm512_set1_epi32(int32_t(uint16_t(mr[2 * jp])) |
                                                                   int32_t(uint32_t(uint16_t(mr[2 * jp + 1])) << 16)),
                                                 bsv);
                }
                const __m512i is = _mm512_sub_epi32(isum[r][g], _mm512_sll_epi32(os, _mm_cvtsi32_si128(offShift)));
                acc[r][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(is), _mm512_mul_ps(_mm512_set1_ps(d[r * nb + b]), dx),
                                            acc[r][g]);
                if constexpr (MIN) {
                    const __m512 negMinScale = _mm512_castsi512_ps(
                        _mm512_xor_si512(_mm512_castps_si512(_mm512_mul_ps(_mm512_set1_ps(dmin[r * nb + b]), dx)),
                                         _mm512_set1_epi32(int32_t(0x80000000u))));
                    acc[r][g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(ms), negMinScale, acc[r][g]);
                }
            }
        }
    }
    for (int r = 0; r < R; ++r)
        for (int g = 0; g < NG; ++g) out[r * NG + g] = acc[r][g];
}

using GemmKFn = void (*)(const uint8_t*, int64_t, const int16_t*, const int16_t*, const float*, const float*, int64_t,
                         int, const uint8_t*, size_t, __m512*);

template <int R, int NG>
GemmKFn pickK(bool min, bool small) {
    if (min) return small ? gemmKTile<R, NG, true, true> : gemmKTile<R, NG, true, false>;
    return small ? gemmKTile<R, NG, false, true> : gemmKTile<R, NG, false, false>;
}

void gemmK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    const int64_t K = a.cols, nb = a.nBlocks, groups = (a.nTokens + 15) / 16;
    // 16-element code dots: u <= 15 (Q4_K), 7 (Q3_K), 3 (Q2_K) times |x| <= 128 fit int16.
    const bool small = w.type == TensorType::Q4_K || w.type == TensorType::Q3_K || w.type == TensorType::Q2_K;
    const int offShift = info.offset == 0 ? 0 : info.offset == 4 ? 2 : 5;  // Q3_K 4, Q6_K 32
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
                GemmKFn fn;
                if (ng == 2)
                    fn = rr == 4  ? pickK<4, 2>(info.hasMin, small)
                        : rr == 3 ? pickK<3, 2>(info.hasMin, small)
                        : rr == 2 ? pickK<2, 2>(info.hasMin, small)
                                  : pickK<1, 2>(info.hasMin, small);
                else
                    fn = rr == 4  ? pickK<4, 1>(info.hasMin, small)
                        : rr == 3 ? pickK<3, 1>(info.hasMin, small)
                        : rr == 2 ? pickK<2, 1>(info.hasMin, small)
                                  : pickK<1, 1>(info.hasMin, small);
                __m512 out[kGemmRows * 2];
                fn(u + rt * K, K, s + rt * nb * 16, mn + rt * nb * 16, d + rt * nb, dmin + rt * nb, nb, offShift,
                   a.packed + size_t(g) * gs, gs, out);
                for (int i = 0; i < rr; ++i)
                    for (int gi = 0; gi < ng; ++gi)
                        storeTokens(out[i * ng + gi], (g + gi) * 16, a.nTokens, y, ldy, rc + rt + i);
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Float weights: 16 lanes per output (lane = k % 16), fixed tree at the end.

// R rows x T tokens of float dots over the whole row; rows already f32.
template <int R, int T>
void floatTile(const float* wf, int64_t K, const float* x, int64_t ldx, float* out) {
    __m512 acc[R][T];
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) acc[r][t] = _mm512_setzero_ps();
    const int64_t full = K & ~int64_t(15);
    for (int64_t k = 0; k < full; k += 16) {
        __m512 xv[T];
        for (int t = 0; t < T; ++t) xv[t] = _mm512_loadu_ps(x + t * ldx + k);
        for (int r = 0; r < R; ++r) {
            const __m512 wv = _mm512_loadu_ps(wf + r * K + k);
            for (int t = 0; t < T; ++t) acc[r][t] = _mm512_fmadd_ps(wv, xv[t], acc[r][t]);
        }
    }
    if (full < K) {
        const __mmask16 m = __mmask16((1u << (K - full)) - 1);
        for (int r = 0; r < R; ++r) {
            const __m512 wv = _mm512_maskz_loadu_ps(m, wf + r * K + full);
            for (int t = 0; t < T; ++t)
                acc[r][t] = _mm512_mask3_fmadd_ps(wv, _mm512_maskz_loadu_ps(m, x + t * ldx + full), acc[r][t], m);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int t = 0; t < T; ++t) out[r * T + t] = reduceLanes(acc[r][t]);
}

// One token (decode), R consecutive rows at a time straight from the stored
// rows. Each row is its own stream (4 KiB apart at 2048 columns), so each is
// prefetched kRowPrefetch bytes ahead of where it is read, continuing
// into the same row of the next tile, R rows on (as the AVX2 float decode
// does). The sweep before it, 9 KiB ahead in address order at the tile's mean
// rate, reached the later rows of a 32 KiB tile after they were read.
// Measured on an AMD EPYC Zen 5 (2 cores, KVM; plain read loop 37.4 GB/s on
// 1 thread, 73-75 on 2), interleaved, GB/s (`cairn-cli bench-kernels --types
// F16 --rows R --cols C -p 1 -t T -r 7`): 8192x2048 -t 2: sweep 47.2-47.9,
// none 45.8-48.2, per row 512 B ahead 53.7-54.0, 1 KiB 55.9-61.4, 2 KiB
// 56.4-59.9, 3 KiB 56.8-59.3, 4 KiB 47.6-48.2; 2048x8192 -t 2: sweep 46.5,
// 1 KiB 54.9-57.1, 2 KiB 51.9-58.9; 8192x2048 -t 1: sweep 25.4, 1 KiB 31.3,
// 2 KiB 29.8. In the model (`cairn-cli bench -m M -p 1 -n 64 -t 2 -r 2`,
// rounds interleaved), tg64 t/s: llama-1b F16 sweep 18.1-18.7, 768 B
// 21.2-23.4, 1 KiB 20.0-23.0, 2 KiB 20.0-22.5 (llama.cpp 18.8);
// mamba-370m F16 sweep 58.2-60.3, 1 KiB 63.0-66.4, 2 KiB 61.0-64.8.

// Into L2 (the calibration's "-l2pf" paths) each row runs twice as far
// ahead: lines in flight there do not crowd L1. AMD EPYC Zen 4 (family 25
// model 17), llama-1b F16 decode on avx512vnni-l2pf, `cairn-cli bench -m M -p
// 1 -n 32 -t 2 -r 3 --read-loop 1024`, interleaved, median tg t/s 1 KiB / 2
// KiB, and decode's share of the read loop right after each run: host fast
// (60-65 GB/s) 18.3 / 18.1, 18.2 / 19.4, 18.1 / 19.0, 18.4 / 19.0, shares
// 0.71-0.74 / 0.73-0.77; host slow (35-36 GB/s) 13.1 / 13.4, shares 0.88-0.89
// / 0.96; mamba-370m F16 (`-n 64`) 49.4-51.3 / 51.9-52.2. 3 KiB: as 2 KiB
// (fast 19.4, 19.5 / 19.5, 19.0; slow 13.5, 13.2 / 13.3, 13.4).
template <PrefetchTo PF>
constexpr int64_t kFloatRowPrefetch = PF == PrefetchTo::L2 ? 2 * kRowPrefetch : kRowPrefetch;

template <int R, PrefetchTo PF>
void floatRowsOneToken(TensorType type, const uint8_t* const* rows, int64_t K, const float* x, float* out,
                       int64_t rowStride) {
    __m512 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_ps();
    const int64_t full = K & ~int64_t(15);
    const int64_t eb = floatElementBytes(type);
    for (int64_t k = 0; k < full; k += 16) {
        if ((k * eb) % 64 == 0) {  // a new cache line of each row
            const int64_t ahead = k * eb + kFloatRowPrefetch<PF>;
            const int64_t at = rowStreamOffset(ahead, rowStride, R);
            for (int r = 0; r < R; ++r) prefetchLine<PF>(rows[r] + at);
        }
        const __m512 xv = _mm512_loadu_ps(x + k);
        for (int r = 0; r < R; ++r) acc[r] = _mm512_fmadd_ps(loadFloats(type, rows[r], k), xv, acc[r]);
    }
    if (full < K) {
        const __mmask16 m = __mmask16((1u << (K - full)) - 1);
        const __m512 xv = _mm512_maskz_loadu_ps(m, x + full);
        for (int r = 0; r < R; ++r)
            acc[r] = _mm512_mask3_fmadd_ps(loadFloatsMasked(type, rows[r], full, m), xv, acc[r], m);
    }
    for (int r = 0; r < R; ++r) out[r] = reduceLanes(acc[r]);
}

// Rows per decode tile for float weights: R independent fma chains (the
// canonical order allows one per row). Measured F16, 1 thread, 256x2048 from
// L2: 4 rows 47.5, 8 rows 51 GB/s; 4096x2048 from memory, 2 threads: 23.4 -> 24.1.
// AMD EPYC Zen 5, 8192x2048 from memory, 2 threads, the per-row prefetch
// 1.5 KiB ahead (one round): 4 rows 55.7, 8 rows 54.8, 16 rows 48.9 GB/s.
constexpr int kFloatRows = 8;

// One token, a pair of rows of a float Tiles16 tile (kernels::floatRow): one
// stream, followed by the hardware prefetcher (as the AVX2 floatPairOneToken).
template <TensorType Type>
void floatPairOneToken(const uint8_t* pair, int64_t K, const float* x, float* y) {
    __m512 acc0 = _mm512_setzero_ps(), acc1 = acc0;
    for (int64_t k = 0; k < K; k += 16) {
        const __m512 xv = _mm512_loadu_ps(x + k);
        acc0 = _mm512_fmadd_ps(loadFloats(Type, pair, 2 * k), xv, acc0);  // chunk k / 16 of row 0
        acc1 = _mm512_fmadd_ps(loadFloats(Type, pair, 2 * k + 16), xv, acc1);  // and of row 1
    }
    y[0] = reduceLanes(acc0);
    y[1] = reduceLanes(acc1);
}

// The whole tiles among rows [r0, r1) (r0 a multiple of 16) of a float
// Tiles16 matrix; returns where the file rows after them start.
int64_t floatTilesOneToken(const MatrixView& w, int64_t r0, int64_t r1, const float* x, float* y) {
    return forEachFloatTilePair(w, r0, r1, [&](auto type, const uint8_t* pair, int64_t r) {
        floatPairOneToken<decltype(type)::value>(pair, w.cols, x, y + r);
    });
}

template <PrefetchTo PF>
void floatRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols;
    if (a.nTokens < gemmMinTokens(0)) {
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const float* x = a.x + t * a.ldx;
            int64_t r = w.layout == RowLayout::Tiles16 ? floatTilesOneToken(w, r0, r1, x, y + t * ldy) : r0;
            for (; r + kFloatRows <= r1; r += kFloatRows) {
                const uint8_t* rows[kFloatRows];
                for (int i = 0; i < kFloatRows; ++i) rows[i] = w.row(r + i);
                float out[kFloatRows];
                floatRowsOneToken<kFloatRows, PF>(w.type, rows, K, x, out, int64_t(w.rowStride));
                for (int i = 0; i < kFloatRows; ++i) y[t * ldy + r + i] = out[i];
            }
            for (; r < r1; ++r) {
                const uint8_t* rows[1] = {w.row(r)};
                floatRowsOneToken<1, PF>(w.type, rows, K, x, &y[t * ldy + r], int64_t(w.rowStride));
            }
        }
        return;
    }
    if (a.packed) {  // K a multiple of 16 (avx512::floatPackPlan)
        avx512::floatGemm(w, r0, r1, a, y, ldy);
        return;
    }
    // Ragged K: 4 rows converted to f32 once, then 4x4 register tiles over tokens.
    auto* wf = reinterpret_cast<float*>(scratch(1, size_t(4 * K) * 4));
    for (int64_t r = r0; r < r1; r += 4) {
        const int rr = int(std::min<int64_t>(4, r1 - r));
        for (int i = 0; i < rr; ++i) {
            const uint8_t* row = w.row(r + i);
            int64_t k = 0;
            for (; k + 16 <= K; k += 16) _mm512_storeu_ps(wf + i * K + k, loadFloats(w.type, row, k));
            if (k < K) {
                const __mmask16 m = __mmask16((1u << (K - k)) - 1);
                _mm512_mask_storeu_ps(wf + i * K + k, m, loadFloatsMasked(w.type, row, k, m));
            }
        }
        int64_t t = 0;
        float out[16];
        for (; t + 4 <= a.nTokens; t += 4) {
            const float* x = a.x + t * a.ldx;
            switch (rr) {
            case 4: floatTile<4, 4>(wf, K, x, a.ldx, out); break;
            case 3: floatTile<3, 4>(wf, K, x, a.ldx, out); break;
            case 2: floatTile<2, 4>(wf, K, x, a.ldx, out); break;
            default: floatTile<1, 4>(wf, K, x, a.ldx, out); break;
            }
            for (int i = 0; i < rr; ++i)
                for (int j = 0; j < 4; ++j) y[(t + j) * ldy + r + i] = out[i * 4 + j];
        }
        for (; t < a.nTokens; ++t) {
            const float* x = a.x + t * a.ldx;
            switch (rr) {
            case 4: floatTile<4, 1>(wf, K, x, a.ldx, out); break;
            case 3: floatTile<3, 1>(wf, K, x, a.ldx, out); break;
            case 2: floatTile<2, 1>(wf, K, x, a.ldx, out); break;
            default: floatTile<1, 1>(wf, K, x, a.ldx, out); break;
            }
            for (int i = 0; i < rr; ++i) y[t * ldy + r + i] = out[i];
        }
    }
}

// ---------------------------------------------------------------------------
// Activation quantizers: one token straight into matmul's arrays (TokenQ8),
// byte-identical to ggml's reference quantizers (quant.h) unpacked by
// quantizeTokenReference. Scalar roundf made those ~10 us per 2048-wide
// token, as much as a whole 2048x2048 Q4_0 matvec from cache; a block
// quantizer and the copy into the arrays then still took 2.6 cycles a column
// (Intel Xeon family 6 model 207, `rdtsc` in a mamba-370m Q8_0 decode).

// roundf (ties away from zero) of each lane, exactly.
inline __m512 roundHalfAway(__m512 p) {
    const __m512 t = _mm512_roundscale_ps(p, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(p, t));  // exact for |p| < 2^23
    const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    const __m512 one = _mm512_or_ps(_mm512_set1_ps(1.f), _mm512_and_ps(p, _mm512_set1_ps(-0.f)));
    return _mm512_mask_add_ps(t, up, t, one);
}

// Q8_0 blocks, sixteen at a time: their scales are divided as one vector
// (each lane the reference's scalar division), so no block waits on its own
// two divisions.
void quantizeToken32(const float* x, int64_t n, int32_t offset, const TokenQ8& out) {
    const int64_t nb = n / 32;
    for (int64_t b0 = 0; b0 < nb; b0 += 16) {
        const int m = int(std::min<int64_t>(16, nb - b0));
        alignas(64) float amax[16] = {}, id[16], d[16];
        for (int i = 0; i < m; ++i) {
            const float* xb = x + 32 * (b0 + i);
            amax[i] = _mm512_reduce_max_ps(
                _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(xb)), _mm512_abs_ps(_mm512_loadu_ps(xb + 16))));
        }
        const __m512 dv = _mm512_div_ps(_mm512_load_ps(amax), _mm512_set1_ps(127.f));
        // id = d != 0 ? 1 / d : 0 (NEQ_UQ is C's !=)
        const __mmask16 nonzero = _mm512_cmp_ps_mask(dv, _mm512_setzero_ps(), _CMP_NEQ_UQ);
        _mm512_store_ps(id, _mm512_maskz_div_ps(nonzero, _mm512_set1_ps(1.f), dv));
        // The block keeps d as fp16, and the kernels read it back as float.
        _mm512_store_ps(d, _mm512_cvtph_ps(_mm512_cvtps_ph(dv, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)));
        for (int i = 0; i < m; ++i) {
            const int64_t b = b0 + i;
            const __m512 idv = _mm512_set1_ps(id[i]);
            const __m512i q0 = _mm512_cvttps_epi32(roundHalfAway(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b), idv)));
            const __m512i q1 =
                _mm512_cvttps_epi32(roundHalfAway(_mm512_mul_ps(_mm512_loadu_ps(x + 32 * b + 16), idv)));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out.q + 32 * b), _mm512_cvtepi32_epi8(q0));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out.q + 32 * b + 16), _mm512_cvtepi32_epi8(q1));
            const int32_t s0 = _mm512_reduce_add_epi32(q0), s1 = _mm512_reduce_add_epi32(q1);
            storeBlock32(out, b, s0, s1, d[i], offset);
        }
    }
}

void quantizeTokenK(const float* x, int64_t n, const TokenQ8& out) {
    for (int64_t b = 0; b < n / 256; ++b, x += 256) {
        int8_t* q = out.q + 256 * b;
        int16_t* bsum = out.bsum + 16 * b;
        // max(|x|, m) returns m where x is NaN: like the reference, amax is
        // the largest magnitude that is a number, so the search below ends.
        __m512 mv = _mm512_setzero_ps();
        for (int j = 0; j < 256; j += 16) mv = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), mv);
        const float amax = _mm512_reduce_max_ps(mv);
        if (amax == 0.0f) {
            storeZeroBlockK(out, b);
            continue;
        }
        // The reference keeps the first element of largest magnitude: the
        // first lane equal to amax, sixteen lanes a step.
        int first = 0;
        for (;; first += 16) {
            const __mmask16 at =
                _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + first)), _mm512_set1_ps(amax), _CMP_EQ_OQ);
            if (at) {
                first += __builtin_ctz(unsigned(at));
                break;
            }
        }
        const float iscale = -127.f / x[first];
        const __m512 sv = _mm512_set1_ps(iscale);
        for (int j = 0; j < 256; j += 16) {
            // nearest_int: round to nearest even of the rounded product; a
            // NaN product (a NaN or infinite input) gives 0, as in the reference.
            const __m512 p = _mm512_mul_ps(sv, _mm512_loadu_ps(x + j));
            __m512i qv = _mm512_maskz_cvt_roundps_epi32(_mm512_cmp_ps_mask(p, p, _CMP_ORD_Q), p,
                                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
            qv = _mm512_min_epi32(qv, _mm512_set1_epi32(127));
            _mm_storeu_si128(reinterpret_cast<__m128i*>(q + j), _mm512_cvtepi32_epi8(qv));
            bsum[j / 16] = int16_t(_mm512_reduce_add_epi32(qv));
        }
        storeBlockK(out, b, 1 / iscale);
    }
}

// ---------------------------------------------------------------------------

// PF: where the decode kernels prefetch to (the GEMMs do not prefetch); TF:
// whether the Tiles16 ones prefetch at all.
template <PrefetchTo PF, TileFetch TF = TileFetch::Software>
void rows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    switch (a.blockSize) {
    case 0: floatRows<PF>(w, r0, r1, a, y, ldy); break;
    case 32:
        if (a.packed) gemm32(w, r0, r1, a, y, ldy);
        else matvec32<PF, TF>(w, r0, r1, a, y, ldy);
        break;
    default:
        if (a.packed) gemmK(w, r0, r1, a, y, ldy);
        else matvecK<PF, TF>(w, r0, r1, a, y, ldy);
        break;
    }
}

// The matvecs (matvecTileQ4_0, matvecTileQ8_0, matvecTileQ4_K,
// matvecTileQ6_K) and the GEMMs (decodeTile32; gemmK after unpackWordTile)
// read the Tiles16 layout themselves; float types through floatPairOneToken
// and the GEMM's weight packing (floatRow).
bool readsRowTiles(TensorType type, int64_t) {
    return type == TensorType::Q4_0 || type == TensorType::Q8_0 || type == TensorType::Q4_K ||
        type == TensorType::Q6_K || isFloatWeight(type);
}

}  // namespace

// Tasks of 16 rows keep the 16-row matvec and the 4-row GEMM tiles whole.
const KernelSet* avx512Kernels() {
    static const KernelSet set{"avx512vnni",  packPlan,        pack, rows<PrefetchTo::L1>, 16, readsRowTiles,
                               quantizeToken32, quantizeTokenK};
    return &set;
}

// The same kernels with the decode prefetches into L2 only (PrefetchTo).
const KernelSet* avx512L2PrefetchKernels() {
    static const KernelSet set{"avx512vnni-l2pf", packPlan,        pack, rows<PrefetchTo::L2>, 16, readsRowTiles,
                               quantizeToken32,   quantizeTokenK};
    return &set;
}

// The same kernels with the Tiles16 decode kernels issuing no prefetch
// (TileFetch); the other decode kernels, which read several streams side
// by side, prefetch into L2 as avx512vnni-l2pf's do.
const KernelSet* avx512HardwarePrefetchKernels() {
    static const KernelSet set{
        "avx512vnni-hwpf", packPlan,        pack,          rows<PrefetchTo::L2, TileFetch::Hardware>, 16,
        readsRowTiles,     quantizeToken32, quantizeTokenK};
    return &set;
}

}  // namespace cairn::tensor::kernels
