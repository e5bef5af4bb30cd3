// Element-wise float math on whole SIMD vectors, shared by the kernels of
// model/ that are compiled as CAIRN_VECTOR_CLONES: exp, log, SiLU and softplus
// written once with the GCC/Clang vector extension, so every lane (and every
// clone's lowering of it) runs the same operations.
#pragma once

#include "tensor/vector_clones.h"

#include <cstdint>
#include <cstring>

// The helpers are always inlined into the clones, so returning 64-byte
// vectors never crosses a function boundary (hence no -Wpsabi notes).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif
#define CAIRN_INLINE inline __attribute__((always_inline))

namespace cairn::model::vec {

constexpr int64_t kLanes = 16;

// kLanes floats as one value (GCC/Clang vector extension): the element-wise
// math below is written once on whole vectors and lowered to the widest SIMD
// the clone targets, with selects as bit blends (no branches, no vectorizer
// heuristics), so each lane does exactly the same operations.
typedef float vf __attribute__((vector_size(kLanes * sizeof(float))));
typedef int32_t vi __attribute__((vector_size(kLanes * sizeof(float))));
typedef uint32_t vu __attribute__((vector_size(kLanes * sizeof(float))));

CAIRN_INLINE vf splat(float x) { return vf{} + x; }

// Selects are built from sign bits, not from `a < b ? a : b`: GCC 12 lowers a
// comparison of 64-byte vectors for an AVX2 target one lane at a time, with a
// branch per lane (the x86-64-v3 clones of the SSM kernels and swiglu ran
// 16 vcomiss per vmin). Shifts and bit operations split into two ymm halves.

// All ones in the lanes whose sign bit is set, zero elsewhere.
CAIRN_INLINE vi signMask(const vf& x) { return (vi)x >> 31; }
// a in the lanes where m is all ones, b elsewhere.
CAIRN_INLINE vf select(const vi& m, const vf& a, const vf& b) { return (vf)(((vi)a & m) | ((vi)b & ~m)); }
// a < b exactly when a − b is negative (subnormal differences keep their
// sign; a ≠ b never rounds to zero). They differ from `a < b ? a : b` only
// for NaNs and for min(−0, +0), which is −0 here.
CAIRN_INLINE vf vmin(const vf& a, const vf& b) { return select(signMask(a - b), a, b); }
CAIRN_INLINE vf vmax(const vf& a, const vf& b) { return select(signMask(b - a), a, b); }

CAIRN_INLINE vf load(const float* p) {
    vf v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
CAIRN_INLINE void store(float* p, const vf& v) { std::memcpy(p, &v, sizeof v); }
// n ≤ kLanes lanes from p, the rest zero.
CAIRN_INLINE vf loadPartial(const float* p, int64_t n) {
    if (n == kLanes) return load(p);
    float tmp[kLanes] = {};
    std::memcpy(tmp, p, sizeof(float) * size_t(n));
    return load(tmp);
}
CAIRN_INLINE void storePartial(float* p, const vf& v, int64_t n) {
    if (n == kLanes) return store(p, v);
    float tmp[kLanes];
    store(tmp, v);
    std::memcpy(p, tmp, sizeof(float) * size_t(n));
}

// e^x of each of K vectors in place, with a relative error of a few ulp; x
// clamped to [−87.3, 88.7]. Each step is taken across the K before the next,
// the same operations on every lane (so the same bits for any K), so that K
// independent chains are in flight: one exp is a chain of about 30 dependent
// operations, and the out-of-order window held too few of them (Mamba's
// one-token scan ran at half the FP ports' rate; ssm_ops.cpp, kExpGroup).
// k = round(x / ln 2) by the 1.5·2^23 trick (exact for |x / ln 2| < 2^22),
// r = x − k·ln 2 in two parts (Cody–Waite), e^r by a polynomial, times 2^k.
template <int K>
CAIRN_INLINE void vexpEach(vf (&x)[K]) {
    vf k[K], r[K], p[K];
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) x[j] = vmin(vmax(x[j], splat(-87.3f)), splat(88.7f));
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) k[j] = (x[j] * 1.44269504088896341f + 12582912.f) - 12582912.f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) r[j] = x[j] - k[j] * 0.693359375f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) r[j] = r[j] - k[j] * -2.12194440e-4f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) p[j] = splat(1.9875691500e-4f) * r[j] + 1.3981999507e-3f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) p[j] = p[j] * r[j] + 8.3334519073e-3f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) p[j] = p[j] * r[j] + 4.1665795894e-2f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) p[j] = p[j] * r[j] + 1.6666665459e-1f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) p[j] = p[j] * r[j] + 5.0000001201e-1f;
#pragma GCC unroll 16
    for (int j = 0; j < K; ++j) {
        const vf er = p[j] * (r[j] * r[j]) + r[j] + 1.0f;
        const vi e = __builtin_convertvector(k[j], vi) + 127;  // in [1, 255) after the clamp
        x[j] = er * (vf)(e << 23);
    }
}

// e^x of one vector (vexpEach of one).
CAIRN_INLINE vf vexp(const vf& x0) {
    vf x[1] = {x0};
    vexpEach(x);
    return x[0];
}

// ln(u) for finite u ≥ 1, cephes-style: u = m·2^e with m in [√½, √2).
CAIRN_INLINE vf vlog(const vf& u) {
    const vu bits = (vu)u;
    vf e = __builtin_convertvector((vi)(bits >> 23) - 126, vf);
    const vf m = (vf)((bits & 0x007fffffu) | 0x3f000000u);  // [0.5, 1)
    const vi small = signMask(m - 0.707106781186547524f);
    e = select(small, e - 1.0f, e);
    const vf f = select(small, m + m - 1.0f, m - 1.0f);
    const vf z = f * f;
    vf p = splat(7.0376836292e-2f);
    p = p * f - 1.1514610310e-1f;
    p = p * f + 1.1676998740e-1f;
    p = p * f - 1.2420140846e-1f;
    p = p * f + 1.4249322787e-1f;
    p = p * f - 1.6668057665e-1f;
    p = p * f + 2.0000714765e-1f;
    p = p * f - 2.4999993993e-1f;
    p = p * f + 3.3333331174e-1f;
    vf y = p * f * z;
    y = y + e * -2.12194440e-4f;
    y = y - 0.5f * z;
    return (f + y) + e * 0.693359375f;
}

CAIRN_INLINE vf vsilu(const vf& x) { return x / (1.0f + vexp(-x)); }

// softplus(v) = v > 20 ? v : ln(1 + e^v), evaluated as max(v, 0) + log1p(e^−|v|)
// with log1p(w) = ln(u)·w/(u − 1), u = 1 + w (accurate for small w).
CAIRN_INLINE vf vsoftplus(const vf& v) {
    const vf w = vexp(vmin(v, -v));
    const vf u = 1.0f + w;
    const vf d = u - 1.0f;
    const vi exact = ((vi)d - 1) >> 31;  // d == +0 (d = u − 1 is never negative)
    const vf ratio = vlog(u) * (w / select(exact, splat(1.0f), d));
    const vf sp = vmax(v, splat(0.0f)) + select(exact, w, ratio);
    return select(signMask(20.0f - v), v, sp);
}

}  // namespace cairn::model::vec
