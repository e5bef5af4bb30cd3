// Constants and small helpers of the GGUF byte layout, shared by the reader and
// the writer (internal to cairn_gguf).
#pragma once

#include "cairn/gguf.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cairn::gguf::format {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" read as a little-endian uint32
constexpr uint32_t kDefaultAlignment = 32;  // when general.alignment is absent
constexpr uint32_t kMaxDims = 4;
constexpr uint64_t kMaxTensorNameBytes = 64;  // the spec's limit
constexpr uint64_t kMaxKeyBytes = 65535;  // the spec's limit (2^16 - 1)
constexpr std::string_view kAlignmentKey = "general.alignment";

// Smallest possible encodings, used to refuse counts the file cannot hold:
// a key-value pair is a key length (8), a key of at least 1 byte, a type (4)
// and a value of at least 1 byte; a tensor info is a name length (8), a
// dimension count (4), a type (4) and an offset (8).
constexpr uint64_t kMinKvBytes = 8 + 1 + 4 + 1;
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 4 + 8;

// Bytes of one scalar of `t`; 0 for String and Array (and unknown numbers).
inline size_t scalarSize(ValueType t) {
    switch (t) {
    case ValueType::UInt8:
    case ValueType::Int8:
    case ValueType::Bool: return 1;
    case ValueType::UInt16:
    case ValueType::Int16: return 2;
    case ValueType::UInt32:
    case ValueType::Int32:
    case ValueType::Float32: return 4;
    case ValueType::UInt64:
    case ValueType::Int64:
    case ValueType::Float64: return 8;
    default: return 0;
    }
}

inline bool isKnownValueType(uint32_t t) { return t <= uint32_t(ValueType::Float64); }

// The spec asks for a multiple of 8; ggml additionally needs a power of two.
// We accept what satisfies both.
inline bool isValidAlignment(uint64_t a) { return a >= 8 && (a & (a - 1)) == 0; }

inline uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

template <typename T>
T load(const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

// A name from the file made safe for a one-line message: quoted, control and
// non-ASCII bytes escaped, cut after 64 bytes.
inline std::string quoted(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out = "'";
    size_t n = std::min<size_t>(s.size(), 64);
    for (size_t i = 0; i < n; ++i) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
            out += char(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    if (s.size() > n) out += "...";
    return out + "'";
}

}  // namespace cairn::gguf::format

namespace cairn::gguf {
// Parses and validates `size` bytes at `data` into `f` (reader.cpp).
void parseInto(File& f, const uint8_t* data, uint64_t size);
}  // namespace cairn::gguf
