// Arithmetic helpers shared by the reference quantizers.
//
// Our quantizers must match ggml's reference quantizers byte for byte. ggml
// builds them (ggml-quants.c, in ggml-base) without target flags, so on x86-64
// every product is rounded before it is added: no fused multiply-adds. The
// quant-zoo conformance test confirms it (a variant with GCC-style fusion
// differs in some K-quant groups). CMake therefore compiles the reference
// files with -ffp-contract=off, so a -march=native build of Cairn cannot fuse
// them either.
#pragma once

#include <bit>
#include <cstdint>

namespace cairn::tensor::detail {

// ggml's nearest_int: round to nearest, ties to even, by adding 1.5 * 2^23 and
// reading the low mantissa bits (valid for |v| <= 2^22, which ggml asserts).
inline int nearestInt(float v) {
    const float shifted = v + 12582912.f;
    return int(std::bit_cast<uint32_t>(shifted) & 0x007fffff) - 0x00400000;
}

}  // namespace cairn::tensor::detail
