// Row dequantization for every supported format (ggml's dequantize_row_*),
// with ggml's order of operations so the output matches it bit for bit.
//
// In the affine formats (`scale * q - offset`) every product is exact in
// float: the f16 scale has 11 significant bits, the sub-block scale at most 6
// and the quant at most 5 (22 bits < 24). So a fused or unfused multiply-add gives the same
// result, and SIMD kernels may use either.
#include "tensor/blocks.h"
#include "tensor/quant.h"

#include "cairn/error.h"

#include <cstring>
#include <string>

namespace cairn::tensor {
namespace {

template <typename Block>
const Block* blocks(const void* row) {
    return static_cast<const Block*>(row);
}

void dequantizeQ4_0(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ4_0>(row);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = f16ToF32(x[i].d);
        for (int j = 0; j < kQK / 2; ++j) {
            y[i * kQK + j] = float((x[i].qs[j] & 0x0f) - 8) * d;
            y[i * kQK + j + kQK / 2] = float((x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void dequantizeQ4_1(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ4_1>(row);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = f16ToF32(x[i].d);
        const float m = f16ToF32(x[i].m);
        for (int j = 0; j < kQK / 2; ++j) {
            y[i * kQK + j] = float(x[i].qs[j] & 0x0f) * d + m;
            y[i * kQK + j + kQK / 2] = float(x[i].qs[j] >> 4) * d + m;
        }
    }
}

// Q5 formats keep the fifth bit of element j in bit j of the 32-bit `qh`.
uint32_t highBits(const uint8_t qh[4]) {
    return uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
}

void dequantizeQ5_0(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ5_0>(row);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = f16ToF32(x[i].d);
        const uint32_t qh = highBits(x[i].qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
            const int hi = (x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
            y[i * kQK + j] = float(lo - 16) * d;
            y[i * kQK + j + kQK / 2] = float(hi - 16) * d;
        }
    }
}

void dequantizeQ5_1(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ5_1>(row);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = f16ToF32(x[i].d);
        const float m = f16ToF32(x[i].m);
        const uint32_t qh = highBits(x[i].qh);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = (x[i].qs[j] & 0x0f) | int((qh >> j) & 1) << 4;
            const int hi = (x[i].qs[j] >> 4) | int((qh >> (j + 16)) & 1) << 4;
            y[i * kQK + j] = float(lo) * d + m;
            y[i * kQK + j + kQK / 2] = float(hi) * d + m;
        }
    }
}

void dequantizeQ8_0(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ8_0>(row);
    for (int64_t i = 0; i < n / kQK; ++i) {
        const float d = f16ToF32(x[i].d);
        for (int j = 0; j < kQK; ++j) y[i * kQK + j] = float(x[i].qs[j]) * d;
    }
}

void dequantizeQ2_K(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ2_K>(row);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = f16ToF32(x[i].d);
        const float dmin = f16ToF32(x[i].dmin);
        // 16 sub-blocks of 16; sub-block s uses 2-bit field (s/2)%4 of bytes
        // 32*(s/8) + 16*(s%2) .. +15; scales[s] = scale (low nibble) | min (high).
        for (int s = 0; s < kQK_K / 16; ++s) {
            const uint8_t* q = x[i].qs + 32 * (s / 8) + 16 * (s % 2);
            const int shift = 2 * ((s / 2) % 4);
            const float dl = d * float(x[i].scales[s] & 0xf);
            const float ml = dmin * float(x[i].scales[s] >> 4);
            for (int l = 0; l < 16; ++l) *y++ = dl * float((q[l] >> shift) & 3) - ml;
        }
    }
}

// Q3_K packs 16 six-bit signed (offset 32) scales into 12 bytes: low nibbles
// in bytes 0..7, the two high bits of each in bytes 8..11.
void unpackQ3Scales(const uint8_t packed[12], int scales[16]) {
    for (int s = 0; s < 16; ++s) {
        const int low = s < 8 ? packed[s] & 0xf : packed[s - 8] >> 4;
        const int high = (packed[8 + s % 4] >> (2 * (s / 4))) & 3;
        scales[s] = (low | high << 4) - 32;
    }
}

void dequantizeQ3_K(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ3_K>(row);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = f16ToF32(x[i].d);
        int scales[16];
        unpackQ3Scales(x[i].scales, scales);
        for (int s = 0; s < kQK_K / 16; ++s) {
            const int half = s / 8;  // which 128-element half
            const int plane = (s / 2) % 4;  // which 2-bit field / hmask bit
            const int off = 16 * (s % 2);
            const uint8_t* q = x[i].qs + 32 * half + off;
            const uint8_t* hm = x[i].hmask + off;
            const uint8_t bit = uint8_t(1u << (4 * half + plane));
            const float dl = d * float(scales[s]);
            for (int l = 0; l < 16; ++l) {
                const int v = ((q[l] >> (2 * plane)) & 3) - ((hm[l] & bit) ? 0 : 4);
                *y++ = dl * float(v);
            }
        }
    }
}

// Q4_K / Q5_K: 8 six-bit scales and 8 six-bit mins packed into 12 bytes.
void scaleMinK4(int j, const uint8_t* q, uint8_t& sc, uint8_t& m) {
    if (j < 4) {
        sc = q[j] & 63;
        m = q[j + 4] & 63;
    } else {
        sc = uint8_t((q[j + 4] & 0xf) | ((q[j - 4] >> 6) << 4));
        m = uint8_t((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
    }
}

void dequantizeQ4_K(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ4_K>(row);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = f16ToF32(x[i].d);
        const float dmin = f16ToF32(x[i].dmin);
        const uint8_t* q = x[i].qs;
        for (int s = 0; s < 8; s += 2, q += 32) {
            uint8_t sc, m;
            scaleMinK4(s, x[i].scales, sc, m);
            const float d1 = d * float(sc), m1 = dmin * float(m);
            scaleMinK4(s + 1, x[i].scales, sc, m);
            const float d2 = d * float(sc), m2 = dmin * float(m);
            for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xf) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
        }
    }
}

void dequantizeQ5_K(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ5_K>(row);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = f16ToF32(x[i].d);
        const float dmin = f16ToF32(x[i].dmin);
        const uint8_t* ql = x[i].qs;
        const uint8_t* qh = x[i].qh;
        for (int s = 0; s < 8; s += 2, ql += 32) {
            uint8_t sc, m;
            scaleMinK4(s, x[i].scales, sc, m);
            const float d1 = d * float(sc), m1 = dmin * float(m);
            scaleMinK4(s + 1, x[i].scales, sc, m);
            const float d2 = d * float(sc), m2 = dmin * float(m);
            const uint8_t u1 = uint8_t(1u << s), u2 = uint8_t(2u << s);
            for (int l = 0; l < 32; ++l) *y++ = d1 * float((ql[l] & 0xf) + ((qh[l] & u1) ? 16 : 0)) - m1;
            for (int l = 0; l < 32; ++l) *y++ = d2 * float((ql[l] >> 4) + ((qh[l] & u2) ? 16 : 0)) - m2;
        }
    }
}

void dequantizeQ6_K(const void* row, float* y, int64_t n) {
    const auto* x = blocks<BlockQ6_K>(row);
    for (int64_t i = 0; i < n / kQK_K; ++i) {
        const float d = f16ToF32(x[i].d);
        const uint8_t* ql = x[i].ql;
        const uint8_t* qh = x[i].qh;
        const int8_t* sc = x[i].scales;
        for (int half = 0; half < 2; ++half, y += 128, ql += 64, qh += 32, sc += 8) {
            for (int l = 0; l < 32; ++l) {
                const int is = l / 16;
                const int q1 = ((ql[l] & 0xf) | ((qh[l] >> 0) & 3) << 4) - 32;
                const int q2 = ((ql[l + 32] & 0xf) | ((qh[l] >> 2) & 3) << 4) - 32;
                const int q3 = ((ql[l] >> 4) | ((qh[l] >> 4) & 3) << 4) - 32;
                const int q4 = ((ql[l + 32] >> 4) | ((qh[l] >> 6) & 3) << 4) - 32;
                // (d * scale) * q, in ggml's evaluation order.
                y[l + 0] = d * float(sc[is + 0]) * float(q1);
                y[l + 32] = d * float(sc[is + 2]) * float(q2);
                y[l + 64] = d * float(sc[is + 4]) * float(q3);
                y[l + 96] = d * float(sc[is + 6]) * float(q4);
            }
        }
    }
}

}  // namespace

void dequantizeRow(TensorType type, const void* row, float* out, int64_t n) {
    const auto& t = traits(type);
    if (n % t.blockSize != 0)
        throw Error("dequantize",
                    "row length " + std::to_string(n) + " is not a multiple of the " + std::string(t.name) +
                        " block size");
    switch (type) {
    case TensorType::F32: std::memcpy(out, row, size_t(n) * sizeof(float)); return;
    case TensorType::F16: {
        const auto* h = static_cast<const uint16_t*>(row);
        for (int64_t i = 0; i < n; ++i) out[i] = f16ToF32(h[i]);
        return;
    }
    case TensorType::BF16: {
        const auto* h = static_cast<const uint16_t*>(row);
        for (int64_t i = 0; i < n; ++i) out[i] = bf16ToF32(h[i]);
        return;
    }
    case TensorType::Q4_0: dequantizeQ4_0(row, out, n); return;
    case TensorType::Q4_1: dequantizeQ4_1(row, out, n); return;
    case TensorType::Q5_0: dequantizeQ5_0(row, out, n); return;
    case TensorType::Q5_1: dequantizeQ5_1(row, out, n); return;
    case TensorType::Q8_0: dequantizeQ8_0(row, out, n); return;
    case TensorType::Q2_K: dequantizeQ2_K(row, out, n); return;
    case TensorType::Q3_K: dequantizeQ3_K(row, out, n); return;
    case TensorType::Q4_K: dequantizeQ4_K(row, out, n); return;
    case TensorType::Q5_K: dequantizeQ5_K(row, out, n); return;
    case TensorType::Q6_K: dequantizeQ6_K(row, out, n); return;
    default: break;
    }
    throw Error("dequantize", "tensor type " + std::string(t.name) + " is not supported");
}

}  // namespace cairn::tensor
