#include "random_weights.h"

#include "tensor/quant.h"

#include <cstring>
#include <random>

namespace cairn::test {

namespace {

// Byte offsets of the half-float scale fields of one block.
std::vector<size_t> halfFields(TensorType t) {
    switch (t) {
    case TensorType::Q4_0:
    case TensorType::Q5_0:
    case TensorType::Q8_0: return {0};
    case TensorType::Q4_1:
    case TensorType::Q5_1:
    case TensorType::Q4_K:
    case TensorType::Q5_K: return {0, 2};
    case TensorType::Q2_K: return {80, 82};
    case TensorType::Q3_K: return {108};
    case TensorType::Q6_K: return {208};
    default: return {};
    }
}

}  // namespace

Weights makeWeights(TensorType type, int64_t rows, int64_t cols, uint32_t seed) {
    using namespace cairn::tensor;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    Weights w;
    const size_t rb = rowBytes(type, cols);
    w.bytes.resize(rb * size_t(rows));
    if (type == TensorType::F32 || type == TensorType::F16 || type == TensorType::BF16) {
        for (int64_t i = 0; i < rows * cols; ++i) {
            float v = uni(rng);
            if (type == TensorType::F32) std::memcpy(&w.bytes[4 * i], &v, 4);
            uint16_t h = type == TensorType::F16 ? f32ToF16(v) : f32ToBf16(v);
            if (type != TensorType::F32) std::memcpy(&w.bytes[2 * i], &h, 2);
        }
    } else {
        for (auto& b : w.bytes) b = uint8_t(rng());
        const auto& tr = traits(type);
        const size_t nBlocks = w.bytes.size() / tr.blockBytes;
        for (size_t b = 0; b < nBlocks; ++b)
            for (size_t off : halfFields(type)) {
                uint16_t h = f32ToF16(0.001f + 0.01f * (uni(rng) + 1.f));
                std::memcpy(&w.bytes[b * tr.blockBytes + off], &h, 2);
            }
    }
    w.view = {type, w.bytes.data(), rows, cols, rb};
    return w;
}

std::vector<float> makeActivations(int64_t tokens, int64_t cols, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uni(-1.f, 1.f);
    std::vector<float> x(size_t(tokens * cols));
    for (auto& v : x) v = uni(rng);
    return x;
}

}  // namespace cairn::test
