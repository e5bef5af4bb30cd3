// Internal interface between attention() and its per-ISA kernels
// (attention_scalar.cpp, attention_avx2.cpp, attention_avx512.cpp, attention_neon.cpp).
//
// The canonical arithmetic of one query (chunk row t, head h) over the keys
// j = 0 … n-1 of its KV head — identical on every path, so every path gives
// the same bits, whatever the chunk, the threads or the other positions:
//   q'   = q, or q rounded to f16 with an f16 cache (attention.cpp does this)
//   s_j  = reduce16(acc) * scale, where acc[l] = fma(q'[d], k_j[d], acc[l])
//          for the d ≡ l (mod 16) in increasing d, acc[l] from +0
//   m    = max_j s_j
//   e_j  = expCanonical(s_j - m)
//   sum  = reduce16(lane), lane[l] = lane[l] + e_j for the j ≡ l (mod 16) in
//          increasing j, lanes from +0
//   w_j  = e_j * (1 / sum), rounded to f16 with an f16 cache (as llama.cpp
//          meets V with an f16 cache)
//   o[d] = fma(w_j, v_j[d], o[d]) for j = 0 … n-1 in order, o[d] from +0
// SIMD code vectorises the scores over d (16 lanes) and reduces several keys
// at once with the same tree, the softmax over keys (lane = j mod 16), and the
// weighted sum over d (keys stay in order). No contraction by the compiler:
// these files are built with -ffp-contract=off.
#pragma once

#include "tensor/kernels_common.h"
#include "tensor/quant.h"

#include <cmath>
#include <cstdint>

namespace cairn::model::attn {

// Static inline throughout: each ISA file gets its own copy, compiled with its
// flags, and no copy built with AVX instructions can be picked by the linker
// for the baseline code.

// Builtins, not std::fma / std::bit_cast: an ISA file's out-of-line copy of an
// inline library function could be the one the linker keeps (unoptimised builds).
static inline float fmaf32(float a, float b, float c) { return __builtin_fmaf(a, b, c); }

// The fixed reduction tree of 16 lanes: 8+8, 4+4, 2+2, 1+1.
static inline float reduce16(const float* a) {
    float s8[8], s4[4];
    for (int i = 0; i < 8; ++i) s8[i] = a[i] + a[i + 8];
    for (int i = 0; i < 4; ++i) s4[i] = s8[i] + s8[i + 4];
    const float s2a = s4[0] + s4[2], s2b = s4[1] + s4[3];
    return s2a + s2b;
}

// exp(x) for the softmax (x = s - max <= 0): Cephes' expf — x = n·ln2 + r,
// |r| <= ln2/2, degree-6 polynomial in r, times 2^n built in the exponent
// bits. Every step is one IEEE operation, so SIMD code repeats it exactly.
// Below -87 (weights under 1.7e-38, nothing next to the max's 1) it is 0.
constexpr float kExpLog2e = 1.44269504088896341f;
constexpr float kExpRound = 12582912.0f;  // 1.5·2^23: adding it rounds to an integer (nearest even)
constexpr float kExpC1 = 0.693359375f;  // ln2 = C1 - C2, C1 exact in few bits
constexpr float kExpC2 = -2.12194440e-4f;
constexpr float kExpP0 = 1.9875691500e-4f, kExpP1 = 1.3981999507e-3f, kExpP2 = 8.3334519073e-3f,
                kExpP3 = 4.1665795894e-2f, kExpP4 = 1.6666665459e-1f, kExpP5 = 5.0000001201e-1f;
constexpr float kExpMin = -87.0f;

static inline float expCanonical(float x) {
    const float t = x * kExpLog2e + kExpRound;  // two roundings (no contraction in these files)
    const float n = t - kExpRound;
    float r = fmaf32(n, -kExpC1, x);
    r = fmaf32(n, -kExpC2, r);
    float p = kExpP0;
    p = fmaf32(p, r, kExpP1);
    p = fmaf32(p, r, kExpP2);
    p = fmaf32(p, r, kExpP3);
    p = fmaf32(p, r, kExpP4);
    p = fmaf32(p, r, kExpP5);
    const float z = r * r;
    float y = fmaf32(p, z, r);
    y = y + 1.0f;
    // n as an integer, in unsigned arithmetic (wraps, like the SIMD lanes, where x < kExpMin is discarded)
    const uint32_t ni = __builtin_bit_cast(uint32_t, t) - __builtin_bit_cast(uint32_t, kExpRound);
    const float scale = __builtin_bit_cast(float, (ni + 127u) << 23);
    y = y * scale;
    return x < kExpMin ? 0.0f : y;
}

static inline float roundToF16(float x) { return tensor::f16ToF32(tensor::f32ToF16(x)); }

// Element d of a cached row (f32, or f16 when F16).
template <bool F16>
static inline float cachedValue(const uint8_t* row, int64_t d) {
    if constexpr (F16) return tensor::f16ToF32(reinterpret_cast<const uint16_t*>(row)[d]);
    else return reinterpret_cast<const float*>(row)[d];
}

// Output columns [from, dim) of H heads, each on its own — the scalar chain,
// for the columns a SIMD path's vectors do not cover.
template <bool F16, int H>
static inline void accumulateColumns(const float* const* w, const uint8_t* values, size_t rowBytes, int64_t n,
                                     int64_t from, int64_t dim, float* const* o) {
    for (int h = 0; h < H; ++h)
        for (int64_t d = from; d < dim; ++d) {
            float acc = 0.0f;
            for (int64_t j = 0; j < n; ++j)
                acc = fmaf32(w[h][j], cachedValue<F16>(values + size_t(j) * rowBytes, d), acc);
            o[h][d] = acc;
        }
}

constexpr int kMaxHeads = 4;

// The SIMD kernels read a KV head's rows once, in address order, and fetch
// them kRowPrefetchBytes ahead of use: the hardware prefetchers stop at every
// 4 KiB page, which at 128-byte rows is every 32 positions, and past the L3
// the kernels spent most of their time waiting at those boundaries.
// Measured on an AMD EPYC (Zen 5), llama-1b Q4_0 with 4096 positions of f16
// context, `cairn-cli bench -p 1 -n 64 -d 4096 -t 2 -r 2`, tg t/s, interleaved
// (the machine's memory is shared, so single figures wobble): none 20.4 16.9
// 18.3 15.1, 1 KiB 23.2 20.4, 2 KiB 28.3 24.1 24.9 22.5, 3 KiB 22.5 22.7,
// 4 KiB 16.6 19.9, 8 KiB 20.3 22.8.
constexpr int64_t kRowPrefetchBytes = 2048;

// Prefetches the bytes [from, from + n) kRowPrefetchBytes ahead.
static inline void prefetchRowsAhead(const uint8_t* from, int64_t n) {
    tensor::kernels::prefetchLines(from + kRowPrefetchBytes, n);
}

// Calls fn.template operator()<F16, H>() with the run-time `f16` and `heads`
// (1 … kMaxHeads) as template arguments, for the per-path kernel templates.
// Each path passes its own lambda, so no instantiation is shared between the
// files built for different instruction sets.
template <class Fn>
inline void dispatchHeads(bool f16, int heads, Fn&& fn) {
    static_assert(kMaxHeads == 4);
    auto withF16 = [&]<bool F16>() {
        switch (heads) {
        case 1: fn.template operator()<F16, 1>(); break;
        case 2: fn.template operator()<F16, 2>(); break;
        case 3: fn.template operator()<F16, 3>(); break;
        default: fn.template operator()<F16, 4>(); break;
        }
    };
    f16 ? withF16.template operator()<true>() : withF16.template operator()<false>();
}

// One path's pieces of the arithmetic above. Rows of the cache are f32, or
// f16 when `f16`; key rows are `dim` elements apart, as are value rows.
struct Kernels {
    const char* name;
    // For each of `heads` (1 … kMaxHeads) queries of the same KV head:
    // s[h][j] = reduce16(q[h]·k_j lanes) * scale, j in [0, n).
    void (*scores)(const float* const* q, int heads, const uint8_t* keys, bool f16, int64_t n, int64_t dim, float scale,
                   float* const* s);
    // max_j s[j]
    float (*maxOf)(const float* s, int64_t n);
    // s[j] = expCanonical(s[j] - max) in place; returns their canonical sum
    float (*expSum)(float* s, int64_t n, float max);
    // w[j] = w[j] * inv, rounded to f16 when `f16`
    void (*normalize)(float* w, int64_t n, float inv, bool f16);
    // For each of `heads` (1 … kMaxHeads) queries of the same KV head:
    // o[h][d] = Σ_j w[h][j]·v_j[d] (fma, j in order, from +0), d in [0, dim).
    // One pass over the values serves them all.
    void (*accumulate)(const float* const* w, int heads, const uint8_t* values, bool f16, int64_t n, int64_t dim,
                       float* const* o);
};

const Kernels& scalarKernels();
const Kernels* avx2Kernels();  // nullptr when not compiled in
const Kernels* avx512Kernels();  // nullptr when not compiled in
const Kernels* neonKernels();  // nullptr when not compiled in

// The path matching the matmul kernels' base path (tensor::kernelPath(): the
// CAIRN_KERNELS variable, forceKernelPath or the best the CPU runs). An applied
// KernelChoice (the calibration) moves matmul only: attention is not measured.
const Kernels& activeKernels();

}  // namespace cairn::model::attn
