// IEEE binary16 and bfloat16 <-> binary32, round to nearest even, done on the
// bit patterns so the result never depends on the FPU's rounding mode or on
// hardware conversion instructions.
#include "tensor/quant.h"

#include <bit>
#include <cstdint>

namespace cairn::tensor {

float f16ToF32(uint16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000) << 16;
    const uint32_t exp = (h >> 10) & 0x1f;
    const uint32_t mant = h & 0x3ff;
    if (exp == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));  // inf, NaN
    if (exp == 0) {
        // Zero or subnormal: mant * 2^-24, exact in binary32.
        const float v = float(mant) * 0x1.0p-24f;
        return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(v));
    }
    return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t f32ToF16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    const uint16_t sign = uint16_t((x >> 16) & 0x8000);
    const uint32_t a = x & 0x7fffffffu;
    if (a > 0x7f800000u) return sign | 0x7e00;  // NaN -> quiet NaN, as ggml does
    if (a >= 0x477ff000u) return sign | 0x7c00;  // >= 65520 rounds to inf (65504 is the max)
    if (a >= 0x38800000u) {
        // Normal half: rebias the exponent (127 -> 15), round the 13 dropped
        // mantissa bits to nearest even; a carry correctly bumps the exponent.
        const uint32_t rounded = a + 0xfffu + ((a >> 13) & 1u);
        return sign | uint16_t((rounded >> 13) - (112u << 10));
    }
    if (a <= 0x33000000u) return sign;  // <= 2^-25 (the tie to 0) rounds to zero
    // Subnormal half: value / 2^-24 = m * 2^(e - 126), rounded to nearest even.
    const uint32_t e = a >> 23;
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1);
    const uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) ++q;
    return sign | uint16_t(q);  // q == 0x400 is the smallest normal, correctly encoded
}

float bf16ToF32(uint16_t h) { return std::bit_cast<float>(uint32_t(h) << 16); }

uint16_t f32ToBf16(float f) {
    const uint32_t x = std::bit_cast<uint32_t>(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 64);  // NaN: keep payload top, force quiet
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace cairn::tensor
