// Reference quantizers of the plain and 32-element formats (ports of ggml's
// quantize_row_*_ref) and the dispatcher for all formats.
#include "tensor/blocks.h"
#include "tensor/quant.h"
#include "tensor/quant_k.h"
#include "tensor/quant_math.h"

#include "cairn/error.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <string>

namespace cairn::tensor {
namespace {

// Largest magnitude of a block and the signed value that has it (first wins).
void signedAbsMax(const float* x, int n, float& amax, float& max) {
    amax = 0.0f;
    max = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (amax < std::fabs(x[j])) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
}

void minMax(const float* x, int n, float& min, float& max) {
    min = FLT_MAX;
    max = -FLT_MAX;
    for (int j = 0; j < n; ++j) {
        if (x[j] < min) min = x[j];
        if (x[j] > max) max = x[j];
    }
}

void quantizeQ4_0(const float* x, BlockQ4_0* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax, max;
        signedAbsMax(x, kQK, amax, max);
        const float d = max / -8;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32ToF16(d);
        for (int j = 0; j < kQK / 2; ++j) {
            // Truncation toward zero after adding 8.5, then clamp to 15: ggml's rounding.
            const int lo = std::min(15, int(int8_t(x[j] * id + 8.5f)));
            const int hi = std::min(15, int(int8_t(x[j + kQK / 2] * id + 8.5f)));
            y[i].qs[j] = uint8_t(lo | hi << 4);
        }
    }
}

void quantizeQ4_1(const float* x, BlockQ4_1* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min, max;
        minMax(x, kQK, min, max);
        const float d = (max - min) / 15;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32ToF16(d);
        y[i].m = f32ToF16(min);
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(15, int(int8_t((x[j] - min) * id + 0.5f)));
            const int hi = std::min(15, int(int8_t((x[j + kQK / 2] - min) * id + 0.5f)));
            y[i].qs[j] = uint8_t(lo | hi << 4);
        }
    }
}

void storeHighBits(uint32_t qh, uint8_t out[4]) {
    for (int b = 0; b < 4; ++b) out[b] = uint8_t(qh >> (8 * b));
}

void quantizeQ5_0(const float* x, BlockQ5_0* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax, max;
        signedAbsMax(x, kQK, amax, max);
        const float d = max / -16;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32ToF16(d);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            const int lo = std::min(31, int(int8_t(x[j] * id + 16.5f)));
            const int hi = std::min(31, int(int8_t(x[j + kQK / 2] * id + 16.5f)));
            y[i].qs[j] = uint8_t((lo & 0x0f) | (hi & 0x0f) << 4);
            qh |= uint32_t((lo >> 4) & 1) << j;
            qh |= uint32_t((hi >> 4) & 1) << (j + kQK / 2);
        }
        storeHighBits(qh, y[i].qh);
    }
}

void quantizeQ5_1(const float* x, BlockQ5_1* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float min, max;
        minMax(x, kQK, min, max);
        const float d = (max - min) / 31;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32ToF16(d);
        y[i].m = f32ToF16(min);
        uint32_t qh = 0;
        for (int j = 0; j < kQK / 2; ++j) {
            // No clamp here (ggml has none): the value cannot exceed 31.5.
            const int lo = uint8_t((x[j] - min) * id + 0.5f);
            const int hi = uint8_t((x[j + kQK / 2] - min) * id + 0.5f);
            y[i].qs[j] = uint8_t((lo & 0x0f) | (hi & 0x0f) << 4);
            qh |= uint32_t((lo >> 4) & 1) << j;
            qh |= uint32_t((hi >> 4) & 1) << (j + kQK / 2);
        }
        storeHighBits(qh, y[i].qh);
    }
}

}  // namespace

void quantizeRowQ8_0(const float* x, BlockQ8_0* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK; ++i, x += kQK) {
        float amax = 0.0f;
        for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[j]));
        const float d = amax / 127;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        y[i].d = f32ToF16(d);
        for (int j = 0; j < kQK; ++j) y[i].qs[j] = int8_t(std::round(x[j] * id));  // ties away from zero
    }
}

// quantize_row_q8_K_ref (activations only, so not in quant-zoo; the same
// unfused arithmetic as the K quantizers). One difference: an all-zero block
// also gets zero bsums, which ggml leaves unset.
void quantizeRowQ8K(const float* x, BlockQ8_K* y, int64_t n) {
    for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
        float amax = 0.0f, max = 0.0f;
        for (int j = 0; j < kQK_K; ++j) {
            if (std::fabs(x[j]) > amax) {
                amax = std::fabs(x[j]);
                max = x[j];
            }
        }
        if (amax == 0.0f) {
            std::memset(&y[i], 0, sizeof(y[i]));
            continue;
        }
        const float iscale = -127.f / max;
        for (int j = 0; j < kQK_K; ++j) y[i].qs[j] = int8_t(std::min(127, detail::nearestInt(iscale * x[j])));
        for (int g = 0; g < kQK_K / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += y[i].qs[16 * g + l];
            y[i].bsums[g] = int16_t(sum);
        }
        y[i].d = 1 / iscale;
    }
}

void quantizeRow(TensorType type, const float* in, void* row, int64_t n) {
    const auto& t = traits(type);
    if (n % t.blockSize != 0)
        throw Error("quantize",
                    "row length " + std::to_string(n) + " is not a multiple of the " + std::string(t.name) +
                        " block size");
    switch (type) {
    case TensorType::F32: std::memcpy(row, in, size_t(n) * sizeof(float)); return;
    case TensorType::F16: {
        auto* h = static_cast<uint16_t*>(row);
        for (int64_t i = 0; i < n; ++i) h[i] = f32ToF16(in[i]);
        return;
    }
    case TensorType::BF16: {
        auto* h = static_cast<uint16_t*>(row);
        for (int64_t i = 0; i < n; ++i) h[i] = f32ToBf16(in[i]);
        return;
    }
    case TensorType::Q4_0: quantizeQ4_0(in, static_cast<BlockQ4_0*>(row), n); return;
    case TensorType::Q4_1: quantizeQ4_1(in, static_cast<BlockQ4_1*>(row), n); return;
    case TensorType::Q5_0: quantizeQ5_0(in, static_cast<BlockQ5_0*>(row), n); return;
    case TensorType::Q5_1: quantizeQ5_1(in, static_cast<BlockQ5_1*>(row), n); return;
    case TensorType::Q8_0: quantizeRowQ8_0(in, static_cast<BlockQ8_0*>(row), n); return;
    case TensorType::Q2_K: quantizeRowQ2_K(in, static_cast<BlockQ2_K*>(row), n); return;
    case TensorType::Q3_K: quantizeRowQ3_K(in, static_cast<BlockQ3_K*>(row), n); return;
    case TensorType::Q4_K: quantizeRowQ4_K(in, static_cast<BlockQ4_K*>(row), n); return;
    case TensorType::Q5_K: quantizeRowQ5_K(in, static_cast<BlockQ5_K*>(row), n); return;
    case TensorType::Q6_K: quantizeRowQ6_K(in, static_cast<BlockQ6_K*>(row), n); return;
    default: break;
    }
    throw Error("quantize", "tensor type " + std::string(t.name) + " is not supported");
}

}  // namespace cairn::tensor
