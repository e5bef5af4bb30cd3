#include "cairn/tensor_type.h"

#include <array>
#include <cassert>

namespace cairn {
namespace {

constexpr uint32_t kMaxType = 40;

// Block geometry of every ggml type, so files holding types we cannot compute
// with can still be read, inspected and refused with a precise message.
constexpr std::array<TensorTypeTraits, kMaxType> makeTable() {
    std::array<TensorTypeTraits, kMaxType> t{};
    auto set = [&](TensorType type, std::string_view name, uint32_t bs, uint32_t bb, bool ok) {
        t[uint32_t(type)] = {name, bs, bb, ok};
    };
    set(TensorType::F32, "F32", 1, 4, true);
    set(TensorType::F16, "F16", 1, 2, true);
    set(TensorType::BF16, "BF16", 1, 2, true);
    set(TensorType::Q4_0, "Q4_0", 32, 18, true);
    set(TensorType::Q4_1, "Q4_1", 32, 20, true);
    set(TensorType::Q5_0, "Q5_0", 32, 22, true);
    set(TensorType::Q5_1, "Q5_1", 32, 24, true);
    set(TensorType::Q8_0, "Q8_0", 32, 34, true);
    set(TensorType::Q8_1, "Q8_1", 32, 36, false);
    set(TensorType::Q2_K, "Q2_K", 256, 84, true);
    set(TensorType::Q3_K, "Q3_K", 256, 110, true);
    set(TensorType::Q4_K, "Q4_K", 256, 144, true);
    set(TensorType::Q5_K, "Q5_K", 256, 176, true);
    set(TensorType::Q6_K, "Q6_K", 256, 210, true);
    set(TensorType::Q8_K, "Q8_K", 256, 292, false);
    set(TensorType::IQ2_XXS, "IQ2_XXS", 256, 66, false);
    set(TensorType::IQ2_XS, "IQ2_XS", 256, 74, false);
    set(TensorType::IQ3_XXS, "IQ3_XXS", 256, 98, false);
    set(TensorType::IQ1_S, "IQ1_S", 256, 50, false);
    set(TensorType::IQ4_NL, "IQ4_NL", 32, 18, false);
    set(TensorType::IQ3_S, "IQ3_S", 256, 110, false);
    set(TensorType::IQ2_S, "IQ2_S", 256, 82, false);
    set(TensorType::IQ4_XS, "IQ4_XS", 256, 136, false);
    set(TensorType::I8, "I8", 1, 1, false);
    set(TensorType::I16, "I16", 1, 2, false);
    set(TensorType::I32, "I32", 1, 4, false);
    set(TensorType::I64, "I64", 1, 8, false);
    set(TensorType::F64, "F64", 1, 8, false);
    set(TensorType::IQ1_M, "IQ1_M", 256, 56, false);
    set(TensorType::TQ1_0, "TQ1_0", 256, 54, false);
    set(TensorType::TQ2_0, "TQ2_0", 256, 66, false);
    set(TensorType::MXFP4, "MXFP4", 32, 17, false);
    return t;
}

constexpr auto kTable = makeTable();

}  // namespace

std::optional<TensorTypeTraits> tensorTypeTraits(uint32_t type) {
    if (type >= kMaxType || kTable[type].blockSize == 0) return std::nullopt;
    return kTable[type];
}

const TensorTypeTraits& traits(TensorType type) {
    assert(uint32_t(type) < kMaxType && kTable[uint32_t(type)].blockSize != 0);
    return kTable[uint32_t(type)];
}

std::string_view tensorTypeName(TensorType type) { return traits(type).name; }

}  // namespace cairn
