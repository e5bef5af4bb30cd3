// Tensor element formats as GGUF stores them (the numbering is ggml's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace cairn {

enum class TensorType : uint32_t {
    F32 = 0,
    F16 = 1,
    Q4_0 = 2,
    Q4_1 = 3,
    Q5_0 = 6,
    Q5_1 = 7,
    Q8_0 = 8,
    Q8_1 = 9,
    Q2_K = 10,
    Q3_K = 11,
    Q4_K = 12,
    Q5_K = 13,
    Q6_K = 14,
    Q8_K = 15,
    IQ2_XXS = 16,
    IQ2_XS = 17,
    IQ3_XXS = 18,
    IQ1_S = 19,
    IQ4_NL = 20,
    IQ3_S = 21,
    IQ2_S = 22,
    IQ4_XS = 23,
    I8 = 24,
    I16 = 25,
    I32 = 26,
    I64 = 27,
    F64 = 28,
    IQ1_M = 29,
    BF16 = 30,
    TQ1_0 = 34,
    TQ2_0 = 35,
    MXFP4 = 39,
};

struct TensorTypeTraits {
    std::string_view name;  // "Q4_K", as llama.cpp prints it
    uint32_t blockSize;  // elements per block (1 for plain types)
    uint32_t blockBytes;  // bytes per block
    bool supported;  // Cairn can dequantize it and multiply with it
};

// Traits of a known type, or nullopt for a number no ggml version assigns.
std::optional<TensorTypeTraits> tensorTypeTraits(uint32_t type);
const TensorTypeTraits& traits(TensorType type);
std::string_view tensorTypeName(TensorType type);

// Bytes of one row of `n` elements; `n` must be a multiple of the block size.
inline size_t rowBytes(TensorType type, int64_t n) {
    const auto& t = traits(type);
    return size_t(n / t.blockSize) * t.blockBytes;
}

}  // namespace cairn
