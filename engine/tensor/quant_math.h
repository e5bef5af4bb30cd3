// Arithmetic helpers shared by the reference quantizers.
//
// ggml's reference quantizers, which our quantizers must match byte for byte,
// are built by GCC with -march=native and its default -ffp-contract=fast, so
// on an FMA machine every `a * b + c` whose product has no other use becomes
// one fused multiply-add. We write those fusions explicitly with std::fma
// (exact by definition, so the result is the same on any CPU) and build these
// files with -ffp-contract=off so the compiler adds none of its own.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace cairn::tensor::detail {

inline float fusedMulAdd(float a, float b, float c) { return std::fma(a, b, c); }

// ggml's nearest_int: round to nearest, ties to even, by adding 1.5 * 2^23
// (valid for |v| <= 2^22; ggml asserts that).
inline int nearestInt(float v) {
    const float shifted = v + 12582912.f;
    return int(std::bit_cast<uint32_t>(shifted) & 0x007fffff) - 0x00400000;
}

// nearest_int(a * b) as GCC compiles it after inlining: the product is fused
// into the addition of 1.5 * 2^23, so the exact product is rounded once.
inline int nearestIntOfProduct(float a, float b) {
    const float shifted = std::fma(a, b, 12582912.f);
    return int(std::bit_cast<uint32_t>(shifted) & 0x007fffff) - 0x00400000;
}

} // namespace cairn::tensor::detail
