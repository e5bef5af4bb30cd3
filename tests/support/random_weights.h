// Random weight matrices of every tensor format and random activations, for
// the kernel tests (Qt-free: the aarch64 cross check uses them too).
#pragma once

#include "cairn/tensor_type.h"
#include "tensor/matmul.h"

#include <cstdint>
#include <vector>

namespace cairn::test {

// Every format the matmul kernels take.
inline constexpr TensorType kKernelTypes[] = {TensorType::F32,  TensorType::F16,  TensorType::BF16, TensorType::Q4_0,
                                              TensorType::Q4_1, TensorType::Q5_0, TensorType::Q5_1, TensorType::Q8_0,
                                              TensorType::Q2_K, TensorType::Q3_K, TensorType::Q4_K, TensorType::Q5_K,
                                              TensorType::Q6_K};

struct Weights {
    std::vector<uint8_t> bytes;
    tensor::MatrixView view;
};

// Float formats: values in [-1, 1]. Quantized formats: random bytes (any bit
// pattern is a valid block) with the half-float scales set to 0.001 … 0.021.
Weights makeWeights(TensorType type, int64_t rows, int64_t cols, uint32_t seed);

// tokens × cols values in [-1, 1].
std::vector<float> makeActivations(int64_t tokens, int64_t cols, uint32_t seed);

}  // namespace cairn::test
