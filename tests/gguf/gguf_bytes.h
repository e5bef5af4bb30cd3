// Helpers for GGUF tests that patch bytes of a file: where a field lies
// (found through the reader's public views) and little-endian stores.
#pragma once

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace cairn::test {

using Bytes = std::vector<uint8_t>;

template <typename T>
void store(Bytes& b, uint64_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof v);
}
template <typename T>
T fetch(const Bytes& b, uint64_t at) {
    T v;
    std::memcpy(&v, b.data() + at, sizeof v);
    return v;
}

// Byte offsets of the fields of one metadata entry in a parsed buffer.
struct KvFields {
    uint64_t keyLength;  // the uint64 before the key
    uint64_t type;  // the uint32 value type
    uint64_t value;  // first byte after the type (for arrays: the element type)
};
inline KvFields kvFields(const gguf::File& f, std::string_view key) {
    const auto& v = f.get(key);
    uint64_t k = uint64_t(reinterpret_cast<const uint8_t*>(v.key().data()) - f.base());
    return {k - 8, k + v.key().size(), k + v.key().size() + 4};
}

// Byte offsets of the fields of one tensor info.
struct TensorFields {
    uint64_t nameLength, nDims, dims, type, offset;
};
inline TensorFields tensorFields(const gguf::File& f, std::string_view name) {
    const auto& t = f.tensor(name);
    uint64_t n = uint64_t(reinterpret_cast<const uint8_t*>(t.name.data()) - f.base());
    uint64_t nd = n + t.name.size();
    return {n - 8, nd, nd + 4, nd + 4 + 8 * t.nDims, nd + 4 + 8 * t.nDims + 4};
}

// The message of the cairn::Error that parsing `bytes` throws, or nullopt if it loads.
inline std::optional<std::string> parseError(const Bytes& bytes, const std::string& name = "test.gguf") {
    try {
        gguf::File::fromMemory(bytes.data(), bytes.size(), name);
        return std::nullopt;
    } catch (const Error& e) {
        return std::string(e.what());
    }
}

}  // namespace cairn::test
