// NEON kernels for aarch64, included by two files: kernels_neon.cpp (Armv8.0
// Advanced SIMD, on every aarch64 CPU) and kernels_neon_dotprod.cpp (built
// with +dotprod: 16 multiply-adds per SDOT instead of widening multiplies).
// Everything is in an anonymous namespace, so each file has its own copy
// compiled with its own instructions.
//
// Same canonical arithmetic as every path (kernels_common.h). Tiles are 4
// rows × 1 token: the integer dots of a block for the 4 rows are reduced into
// one int32x4 (exact integers, any order), then one vector FMA advances the 4
// outputs' float chains — lane r is the scalar chain of row r, step for step.
//
// Not measured on Arm hardware (none here): CI runs these kernels under
// qemu-user for their bits, not their speed.
#pragma once

#include "tensor/blocks.h"
#include "tensor/kernels_common.h"

#include <arm_neon.h>

#include <algorithm>
#include <cstring>

namespace cairn::tensor::kernels {
namespace {

constexpr int kRows = 4;  // rows per tile: one float32x4 of outputs

// acc + the 16 products a[i]*b[i], summed in int32 lanes (exact).
inline int32x4_t dot16(int32x4_t acc, int8x16_t a, int8x16_t b) {
#if defined(__ARM_FEATURE_DOTPROD)
    return vdotq_s32(acc, a, b);
#else
    acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(a), vget_low_s8(b)));
    return vpadalq_s16(acc, vmull_high_s8(a, b));
#endif
}

// [Σa, Σb, Σc, Σd]
inline int32x4_t sum4(int32x4_t a, int32x4_t b, int32x4_t c, int32x4_t d) {
    return vpaddq_s32(vpaddq_s32(a, b), vpaddq_s32(c, d));
}

inline float fmaScalar(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

inline float32x4_t halves4(uint16_t a, uint16_t b, uint16_t c, uint16_t d) {
    const uint16_t h[4] = {a, b, c, d};
    return vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(h)));
}

inline uint16_t load16(const uint8_t* p) {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return v;
}

// Lanes [0, n) of v to y[r0 + lane] (a tile at the end of the row range).
inline void storeRows(float32x4_t v, int n, float* y) {
    if (n == kRows) {
        vst1q_f32(y, v);
        return;
    }
    float tmp[kRows];
    vst1q_f32(tmp, v);
    for (int i = 0; i < n; ++i) y[i] = tmp[i];
}

// ---------------------------------------------------------------------------
// 32-element formats.

// Q4_0 / Q8_0 straight from the stored blocks (decode: no decoding pass),
// 4 rows × 1 token. Missing rows of a partial tile repeat the last one.
template <bool Q8>
float32x4_t matvecTile32(const uint8_t* const* rows, const int8_t* xq, const float* dx, const int32_t* xo, int64_t nb) {
    constexpr size_t bb = Q8 ? sizeof(BlockQ8_0) : sizeof(BlockQ4_0);
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    float32x4_t acc = vdupq_n_f32(0.f);
    for (int64_t b = 0; b < nb; ++b) {
        const int8x16_t x0 = vld1q_s8(xq + 32 * b), x1 = vld1q_s8(xq + 32 * b + 16);
        int32x4_t p[kRows];
        uint16_t d[kRows];
        for (int r = 0; r < kRows; ++r) {
            const uint8_t* blk = rows[r] + b * bb;
            d[r] = load16(blk);
            int8x16_t c0, c1;
            if constexpr (Q8) {
                c0 = vld1q_s8(reinterpret_cast<const int8_t*>(blk + 2));
                c1 = vld1q_s8(reinterpret_cast<const int8_t*>(blk + 18));
            } else {
                const uint8x16_t q = vld1q_u8(blk + 2);
                c0 = vreinterpretq_s8_u8(vandq_u8(q, low4));
                c1 = vreinterpretq_s8_u8(vshrq_n_u8(q, 4));
            }
            p[r] = dot16(dot16(vdupq_n_s32(0), c0, x0), c1, x1);
        }
        int32x4_t is = sum4(p[0], p[1], p[2], p[3]);
        // Q8_0: the signed codes q = u - 128 give sum u*x - 128*xs directly.
        if constexpr (!Q8) is = vsubq_s32(is, vdupq_n_s32(xo[b]));
        acc = vfmaq_f32(acc, vcvtq_f32_s32(is), vmulq_n_f32(halves4(d[0], d[1], d[2], d[3]), dx[b]));
    }
    return acc;
}

// A tile of 4 rows decoded for every token of the call: signed codes
// [r][cols] (u - 128 for Q8_0, u otherwise: <= 31), and per block [b][r]
// the scales d and m.
struct Tile32 {
    int8_t* codes;
    float* d;
    float* m;
};

void decodeTile32(const MatrixView& w, int64_t r0, int n, int64_t nb, Tile32& t) {
    const size_t bb = traits(w.type).blockBytes;
    const uint8_t flip = w.type == TensorType::Q8_0 ? 0x80 : 0;
    Decoded32 dec;
    for (int r = 0; r < kRows; ++r) {
        const int64_t row = r0 + std::min(r, n - 1);
        for (int64_t b = 0; b < nb; ++b) {
            decodeBlock32(w.type, w.row(row) + b * bb, dec);
            for (int i = 0; i < 32; ++i) t.codes[r * nb * 32 + b * 32 + i] = int8_t(dec.u[i] ^ flip);
            t.d[b * kRows + r] = dec.d;
            t.m[b * kRows + r] = dec.m;
        }
    }
}

template <bool MIN, bool SIGNED>
float32x4_t tileDot32(const Tile32& t, int64_t nb, const int8_t* xq, const float* dx, const int32_t* xo,
                      const float* sx) {
    float32x4_t acc = vdupq_n_f32(0.f);
    const int64_t stride = nb * 32;
    for (int64_t b = 0; b < nb; ++b) {
        const int8x16_t x0 = vld1q_s8(xq + 32 * b), x1 = vld1q_s8(xq + 32 * b + 16);
        int32x4_t p[kRows];
        for (int r = 0; r < kRows; ++r) {
            const int8_t* c = t.codes + r * stride + 32 * b;
            p[r] = dot16(dot16(vdupq_n_s32(0), vld1q_s8(c), x0), vld1q_s8(c + 16), x1);
        }
        int32x4_t is = sum4(p[0], p[1], p[2], p[3]);
        if constexpr (!SIGNED) is = vsubq_s32(is, vdupq_n_s32(xo[b]));
        acc = vfmaq_f32(acc, vcvtq_f32_s32(is), vmulq_n_f32(vld1q_f32(t.d + b * kRows), dx[b]));
        if constexpr (MIN) acc = vfmaq_f32(acc, vld1q_f32(t.m + b * kRows), vdupq_n_f32(sx[b]));
    }
    return acc;
}

void rows32(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t nb = a.nBlocks;
    const bool q8 = w.type == TensorType::Q8_0;
    if (a.nTokens < 4 && (q8 || w.type == TensorType::Q4_0)) {
        forEachRowTile<kRows>(w, r0, r1, [&](const uint8_t* const* rows, int n, int64_t r) {
            for (int64_t t = 0; t < a.nTokens; ++t) {
                const int8_t* xq = a.q + t * a.cols;
                const float* dx = a.d + t * nb;
                const int32_t* xo = a.xoff + t * nb;
                storeRows(q8 ? matvecTile32<true>(rows, xq, dx, xo, nb) : matvecTile32<false>(rows, xq, dx, xo, nb), n,
                          y + t * ldy + r);
            }
        });
        return;
    }
    const bool min = quantInfo(w.type).hasMin;
    Tile32 tile;
    tile.codes = reinterpret_cast<int8_t*>(scratch(1, size_t(kRows * nb * 32)));
    tile.d = reinterpret_cast<float*>(scratch(2, size_t(2 * kRows * nb) * 4));
    tile.m = tile.d + kRows * nb;
    for (int64_t r = r0; r < r1; r += kRows) {
        const int n = int(std::min<int64_t>(kRows, r1 - r));
        decodeTile32(w, r, n, nb, tile);  // once per call, reused by every token
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int8_t* xq = a.q + t * a.cols;
            const float* dx = a.d + t * nb;
            const int32_t* xo = a.xoff + t * nb;
            const float* sx = a.sx + t * nb;
            const float32x4_t v = q8 ? tileDot32<false, true>(tile, nb, xq, dx, xo, sx)
                : min                ? tileDot32<true, false>(tile, nb, xq, dx, xo, sx)
                                     : tileDot32<false, false>(tile, nb, xq, dx, xo, sx);
            storeRows(v, n, y + t * ldy + r);
        }
    }
}

// ---------------------------------------------------------------------------
// K formats: codes <= 63 as signed bytes, sub-block scales s_j and mins mn_j.

struct TileK {
    int8_t* codes;  // [r][cols]
    int16_t* s;  // [r][b][16]
    int16_t* mn;  // [r][b][16]
    float* d;  // [b][r]
    float* dmin;  // [b][r]
};

void decodeTileK(const MatrixView& w, int64_t r0, int n, int64_t nb, TileK& t) {
    const size_t bb = traits(w.type).blockBytes;
    DecodedK dec;
    for (int r = 0; r < kRows; ++r) {
        const int64_t row = r0 + std::min(r, n - 1);
        for (int64_t b = 0; b < nb; ++b) {
            decodeBlockK(w.type, w.row(row) + b * bb, dec);
            std::memcpy(t.codes + (r * nb + b) * 256, dec.u, 256);
            std::memcpy(t.s + (r * nb + b) * 16, dec.s, 32);
            std::memcpy(t.mn + (r * nb + b) * 16, dec.mn, 32);
            t.d[b * kRows + r] = dec.d;
            t.dmin[b * kRows + r] = dec.dmin;
        }
    }
}

// One row's block: [Σ_j s_j (dot_j - o·bsum_j)] and [Σ_j mn_j bsum_j] as lane sums.
inline void blockSumsK(const int8_t* u, const int16_t* s, const int16_t* mn, const int8_t* x, const int16_t* bsum,
                       int offset, bool min, int32x4_t& isum, int32x4_t& msum) {
    isum = msum = vdupq_n_s32(0);
    for (int g = 0; g < 4; ++g) {  // sub-blocks 4g … 4g+3
        int32x4_t p[4];
        for (int i = 0; i < 4; ++i) {
            const int j = 4 * g + i;
            p[i] = dot16(vdupq_n_s32(0), vld1q_s8(u + 16 * j), vld1q_s8(x + 16 * j));
        }
        const int32x4_t bs = vmovl_s16(vld1_s16(bsum + 4 * g));
        const int32x4_t dots = vmlsq_n_s32(sum4(p[0], p[1], p[2], p[3]), bs, offset);
        isum = vmlaq_s32(isum, dots, vmovl_s16(vld1_s16(s + 4 * g)));
        if (min) msum = vmlaq_s32(msum, bs, vmovl_s16(vld1_s16(mn + 4 * g)));
    }
}

template <bool MIN>
float32x4_t tileDotK(const TileK& t, int64_t nb, int offset, const int8_t* xq, const int16_t* bsum, const float* dx) {
    float32x4_t acc = vdupq_n_f32(0.f);
    for (int64_t b = 0; b < nb; ++b) {
        int32x4_t is[kRows], ms[kRows];
        for (int r = 0; r < kRows; ++r)
            blockSumsK(t.codes + (r * nb + b) * 256, t.s + (r * nb + b) * 16, t.mn + (r * nb + b) * 16, xq + 256 * b,
                       bsum + 16 * b, offset, MIN, is[r], ms[r]);
        const int32x4_t isum = sum4(is[0], is[1], is[2], is[3]);
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), vmulq_n_f32(vld1q_f32(t.d + b * kRows), dx[b]));
        if constexpr (MIN) {
            const int32x4_t msum = sum4(ms[0], ms[1], ms[2], ms[3]);
            acc = vfmaq_f32(acc, vcvtq_f32_s32(msum), vnegq_f32(vmulq_n_f32(vld1q_f32(t.dmin + b * kRows), dx[b])));
        }
    }
    return acc;
}

// Q4_K's twelve scale bytes to sc[0..7] and m[0..7] (the 6-bit fields).
inline void q4kScales(const uint8_t* scales, uint8_t sc[8], uint8_t m[8]) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = scales[j] & 63;
        m[j] = scales[j + 4] & 63;
        sc[j + 4] = (scales[j + 8] & 0xF) | ((scales[j] >> 6) << 4);
        m[j + 4] = (scales[j + 8] >> 4) | ((scales[j + 4] >> 6) << 4);
    }
}

// One Q4_K super-block of one row against one token: [Σ_i sc_i·dot_i] and
// [Σ_i m_i·(bsum_2i + bsum_2i+1)] as lane sums (32-element sub-blocks i).
inline void q4kBlock(const BlockQ4_K& blk, const int8_t* x, const int16_t* bsum, int32x4_t& isum, int32x4_t& msum) {
    uint8_t sc[8], m[8];
    q4kScales(blk.scales, sc, m);
    const uint8x16_t low4 = vdupq_n_u8(0x0F);
    isum = vdupq_n_s32(0);
    for (int c = 0; c < 4; ++c) {  // 32 bytes: low nibbles are sub-block 2c, high ones 2c + 1
        const uint8x16_t q0 = vld1q_u8(blk.qs + 32 * c), q1 = vld1q_u8(blk.qs + 32 * c + 16);
        const int8_t* xc = x + 64 * c;
        const int32x4_t lo = dot16(dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(vandq_u8(q0, low4)), vld1q_s8(xc)),
                                   vreinterpretq_s8_u8(vandq_u8(q1, low4)), vld1q_s8(xc + 16));
        const int32x4_t hi = dot16(dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(vshrq_n_u8(q0, 4)), vld1q_s8(xc + 32)),
                                   vreinterpretq_s8_u8(vshrq_n_u8(q1, 4)), vld1q_s8(xc + 48));
        isum = vmlaq_n_s32(vmlaq_n_s32(isum, lo, sc[2 * c]), hi, sc[2 * c + 1]);
    }
    // pairs of 16-element sums (|.| <= 4064) times the 8 mins
    const int16x8_t pairs = vpaddq_s16(vld1q_s16(bsum), vld1q_s16(bsum + 8));
    const int16x8_t mins = vreinterpretq_s16_u16(vmovl_u8(vld1_u8(m)));
    msum = vmlal_high_s16(vmull_s16(vget_low_s16(pairs), vget_low_s16(mins)), pairs, mins);
}

// One Q6_K super-block of one row against one token: [Σ_j s_j·(dot_j - 32·bsum_j)]
// as lane sums (16-element sub-blocks j).
inline int32x4_t q6kBlock(const BlockQ6_K& blk, const int8_t* x, const int16_t* bsum) {
    const uint8x16_t low4 = vdupq_n_u8(0x0F), three = vdupq_n_u8(3);
    int32x4_t isum = vdupq_n_s32(0);
    for (int n = 0; n < 2; ++n)
        for (int half = 0; half < 2; ++half) {  // bytes [16·half, 16·half + 16) of each 32-byte run
            const uint8x16_t l0 = vld1q_u8(blk.ql + 64 * n + 16 * half);
            const uint8x16_t l1 = vld1q_u8(blk.ql + 64 * n + 32 + 16 * half);
            const uint8x16_t h = vld1q_u8(blk.qh + 32 * n + 16 * half);
            const uint8x16_t u[4] = {vorrq_u8(vandq_u8(l0, low4), vshlq_n_u8(vandq_u8(h, three), 4)),
                                     vorrq_u8(vandq_u8(l1, low4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 2), three), 4)),
                                     vorrq_u8(vshrq_n_u8(l0, 4), vshlq_n_u8(vandq_u8(vshrq_n_u8(h, 4), three), 4)),
                                     vorrq_u8(vshrq_n_u8(l1, 4), vshlq_n_u8(vshrq_n_u8(h, 6), 4))};
            for (int k = 0; k < 4; ++k) {  // elements 128n + 32k + 16·half …: sub-block 8n + 2k + half
                const int j = 8 * n + 2 * k + half;
                isum = vmlaq_n_s32(isum, dot16(vdupq_n_s32(0), vreinterpretq_s8_u8(u[k]), vld1q_s8(x + 16 * j)),
                                   blk.scales[j]);
            }
        }
    const int16x8_t s0 = vmovl_s8(vld1_s8(blk.scales)), s1 = vmovl_s8(vld1_s8(blk.scales + 8));
    const int16x8_t b0 = vld1q_s16(bsum), b1 = vld1q_s16(bsum + 8);
    int32x4_t off = vmull_s16(vget_low_s16(s0), vget_low_s16(b0));
    off = vmlal_high_s16(off, s0, b0);
    off = vmlal_s16(off, vget_low_s16(s1), vget_low_s16(b1));
    off = vmlal_high_s16(off, s1, b1);
    return vmlsq_n_s32(isum, off, 32);
}

// Q4_K / Q6_K straight from the stored super-blocks (decode), 4 rows × 1 token.
template <TensorType T>
float32x4_t matvecTileK(const uint8_t* const* rows, const int8_t* xq, const int16_t* bsum, const float* dx,
                        int64_t nb) {
    float32x4_t acc = vdupq_n_f32(0.f);
    for (int64_t b = 0; b < nb; ++b) {
        int32x4_t is[kRows], ms[kRows];
        uint16_t d[kRows], dmin[kRows];
        for (int r = 0; r < kRows; ++r) {
            if constexpr (T == TensorType::Q4_K) {
                const auto& blk = reinterpret_cast<const BlockQ4_K*>(rows[r])[b];
                q4kBlock(blk, xq + 256 * b, bsum + 16 * b, is[r], ms[r]);
                d[r] = blk.d;
                dmin[r] = blk.dmin;
            } else {
                const auto& blk = reinterpret_cast<const BlockQ6_K*>(rows[r])[b];
                is[r] = q6kBlock(blk, xq + 256 * b, bsum + 16 * b);
                d[r] = blk.d;
            }
        }
        const int32x4_t isum = sum4(is[0], is[1], is[2], is[3]);
        acc = vfmaq_f32(acc, vcvtq_f32_s32(isum), vmulq_n_f32(halves4(d[0], d[1], d[2], d[3]), dx[b]));
        if constexpr (T == TensorType::Q4_K) {
            const int32x4_t msum = sum4(ms[0], ms[1], ms[2], ms[3]);
            acc = vfmaq_f32(acc, vcvtq_f32_s32(msum),
                            vnegq_f32(vmulq_n_f32(halves4(dmin[0], dmin[1], dmin[2], dmin[3]), dx[b])));
        }
    }
    return acc;
}

void rowsK(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const QuantInfo info = quantInfo(w.type);
    const int64_t nb = a.nBlocks;
    if (a.nTokens < 4 && (w.type == TensorType::Q4_K || w.type == TensorType::Q6_K)) {
        const bool q4 = w.type == TensorType::Q4_K;
        forEachRowTile<kRows>(w, r0, r1, [&](const uint8_t* const* rows, int n, int64_t r) {
            for (int64_t t = 0; t < a.nTokens; ++t) {
                const int8_t* xq = a.q + t * a.cols;
                const int16_t* bsum = a.bsum + t * (a.cols / 16);
                const float* dx = a.d + t * nb;
                storeRows(q4 ? matvecTileK<TensorType::Q4_K>(rows, xq, bsum, dx, nb)
                             : matvecTileK<TensorType::Q6_K>(rows, xq, bsum, dx, nb),
                          n, y + t * ldy + r);
            }
        });
        return;
    }
    TileK tile;
    tile.codes = reinterpret_cast<int8_t*>(scratch(1, size_t(kRows * nb * 256)));
    uint8_t* meta = scratch(2, size_t(kRows * nb) * (64 + 8));
    tile.s = reinterpret_cast<int16_t*>(meta);
    tile.mn = tile.s + kRows * nb * 16;
    tile.d = reinterpret_cast<float*>(tile.mn + kRows * nb * 16);
    tile.dmin = tile.d + kRows * nb;
    for (int64_t r = r0; r < r1; r += kRows) {
        const int n = int(std::min<int64_t>(kRows, r1 - r));
        decodeTileK(w, r, n, nb, tile);
        for (int64_t t = 0; t < a.nTokens; ++t) {
            const int8_t* xq = a.q + t * a.cols;
            const int16_t* bsum = a.bsum + t * (a.cols / 16);
            const float* dx = a.d + t * nb;
            const float32x4_t v = info.hasMin ? tileDotK<true>(tile, nb, info.offset, xq, bsum, dx)
                                              : tileDotK<false>(tile, nb, info.offset, xq, bsum, dx);
            storeRows(v, n, y + t * ldy + r);
        }
    }
}

// ---------------------------------------------------------------------------
// Float weights: the 16 canonical lanes as four float32x4 (lanes 0-3 … 12-15).

void decodeFloat(TensorType type, const uint8_t* row, float* out, int64_t n) {
    int64_t k = 0;
    if (type == TensorType::F16) {
        for (; k + 4 <= n; k += 4)
            vst1q_f32(out + k,
                      vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(reinterpret_cast<const uint16_t*>(row) + k))));
    } else if (type == TensorType::BF16) {
        for (; k + 4 <= n; k += 4)
            vst1q_f32(out + k,
                      vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(reinterpret_cast<const uint16_t*>(row) + k), 16)));
    }
    if (k < n) decodeFloatRow(type, row + k * floatElementBytes(type), out + k, n - k);
}

// The canonical tree of kernels_common.h on the four lane vectors.
inline float reduce16v(float32x4_t a0, float32x4_t a1, float32x4_t a2, float32x4_t a3) {
    const float32x4_t s4 = vaddq_f32(vaddq_f32(a0, a2), vaddq_f32(a1, a3));  // s8[i] = a[i] + a[i+8], then + s8[i+4]
    const float32x2_t s2 = vadd_f32(vget_low_f32(s4), vget_high_f32(s4));  // s4[0]+s4[2], s4[1]+s4[3]
    return vpadds_f32(s2);
}

void floatDot4(const float* w, int64_t K, const float* x, float* out) {
    float32x4_t acc[kRows][4];
    for (auto& row : acc)
        for (auto& v : row) v = vdupq_n_f32(0.f);
    const int64_t full = K & ~int64_t(15);
    for (int64_t k = 0; k < full; k += 16) {
        float32x4_t xv[4];
        for (int c = 0; c < 4; ++c) xv[c] = vld1q_f32(x + k + 4 * c);
        for (int r = 0; r < kRows; ++r)
            for (int c = 0; c < 4; ++c) acc[r][c] = vfmaq_f32(acc[r][c], vld1q_f32(w + r * K + k + 4 * c), xv[c]);
    }
    for (int r = 0; r < kRows; ++r) {
        if (full < K) {
            float l[16];
            for (int c = 0; c < 4; ++c) vst1q_f32(l + 4 * c, acc[r][c]);
            for (int64_t k = full; k < K; ++k) l[k & 15] = fmaScalar(w[r * K + k], x[k], l[k & 15]);
            for (int c = 0; c < 4; ++c) acc[r][c] = vld1q_f32(l + 4 * c);
        }
        out[r] = reduce16v(acc[r][0], acc[r][1], acc[r][2], acc[r][3]);
    }
}

void floatRows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    const int64_t K = a.cols;
    auto* wf = reinterpret_cast<float*>(scratch(1, size_t(kRows * K) * 4));
    for (int64_t r = r0; r < r1; r += kRows) {
        const int n = int(std::min<int64_t>(kRows, r1 - r));
        for (int i = 0; i < kRows; ++i)  // once per call, reused by every token
            decodeFloat(w.type, w.row(r + std::min(i, n - 1)), wf + i * K, K);
        for (int64_t t = 0; t < a.nTokens; ++t) {
            float out[kRows];
            floatDot4(wf, K, a.x + t * a.ldx, out);
            for (int i = 0; i < n; ++i) y[t * ldy + r + i] = out[i];
        }
    }
}

void rows(const MatrixView& w, int64_t r0, int64_t r1, const Activations& a, float* y, int64_t ldy) {
    switch (a.blockSize) {
    case 0: floatRows(w, r0, r1, a, y, ldy); break;
    case 32: rows32(w, r0, r1, a, y, ldy); break;
    default: rowsK(w, r0, r1, a, y, ldy); break;
    }
}

}  // namespace
}  // namespace cairn::tensor::kernels
