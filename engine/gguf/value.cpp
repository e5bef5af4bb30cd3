// Typed access to metadata values (views into the mapped file).
#include "format.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <limits>

namespace cairn::gguf {

using format::load;
using format::scalarSize;

std::string_view valueTypeName(ValueType type) {
    static constexpr std::string_view names[] = {"uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
                                                 "bool",  "string", "array",  "uint64", "int64",  "float64"};
    auto i = uint32_t(type);
    return i < std::size(names) ? names[i] : std::string_view("unknown");
}

namespace {

double numberAt(ValueType t, const uint8_t* p) {
    switch (t) {
    case ValueType::UInt8: return load<uint8_t>(p);
    case ValueType::Int8: return load<int8_t>(p);
    case ValueType::Bool: return load<uint8_t>(p) != 0;
    case ValueType::UInt16: return load<uint16_t>(p);
    case ValueType::Int16: return load<int16_t>(p);
    case ValueType::UInt32: return load<uint32_t>(p);
    case ValueType::Int32: return load<int32_t>(p);
    case ValueType::Float32: return load<float>(p);
    case ValueType::UInt64: return double(load<uint64_t>(p));
    case ValueType::Int64: return double(load<int64_t>(p));
    case ValueType::Float64: return load<double>(p);
    default: return 0;
    }
}

std::string typeName(ValueType type, ValueType elem) {
    if (type != ValueType::Array) return std::string(valueTypeName(type));
    return "array of " + std::string(valueTypeName(elem));
}

[[noreturn]] void mismatch(std::string_view key, const std::string& have, const char* want) {
    throw Error("metadata key " + format::quoted(key), "is " + have + ", expected " + want);
}

}  // namespace

bool Value::isInteger() const {
    switch (type_) {
    case ValueType::UInt8:
    case ValueType::Int8:
    case ValueType::UInt16:
    case ValueType::Int16:
    case ValueType::UInt32:
    case ValueType::Int32:
    case ValueType::UInt64:
    case ValueType::Int64: return true;
    default: return false;
    }
}

int64_t Value::asInt() const {
    switch (type_) {
    case ValueType::UInt8: return load<uint8_t>(data_);
    case ValueType::Int8: return load<int8_t>(data_);
    case ValueType::UInt16: return load<uint16_t>(data_);
    case ValueType::Int16: return load<int16_t>(data_);
    case ValueType::UInt32: return load<uint32_t>(data_);
    case ValueType::Int32: return load<int32_t>(data_);
    case ValueType::Int64: return load<int64_t>(data_);
    case ValueType::UInt64: {
        auto v = load<uint64_t>(data_);
        if (v > uint64_t(std::numeric_limits<int64_t>::max()))
            mismatch(key_, "uint64 " + std::to_string(v), "a value below 2^63");
        return int64_t(v);
    }
    default: mismatch(key_, typeName(type_, elem_), "an integer");
    }
}

double Value::asFloat() const {
    if (!isNumber()) mismatch(key_, typeName(type_, elem_), "a number");
    return numberAt(type_, data_);
}

bool Value::asBool() const {
    if (type_ != ValueType::Bool) mismatch(key_, typeName(type_, elem_), "bool");
    return data_[0] != 0;
}

std::string_view Value::asString() const {
    if (type_ != ValueType::String) mismatch(key_, typeName(type_, elem_), "string");
    return {reinterpret_cast<const char*>(data_), bytes_};
}

std::vector<std::string_view> Value::strings() const {
    if (type_ != ValueType::Array || elem_ != ValueType::String)
        mismatch(key_, typeName(type_, elem_), "array of string");
    std::vector<std::string_view> out;
    out.reserve(size_t(count_));
    const uint8_t* p = data_;
    for (uint64_t i = 0; i < count_; ++i) {  // lengths were validated by the parser
        auto n = load<uint64_t>(p);
        out.emplace_back(reinterpret_cast<const char*>(p + 8), size_t(n));
        p += 8 + n;
    }
    return out;
}

std::vector<double> Value::numbers() const {
    if (type_ != ValueType::Array || elem_ == ValueType::String || elem_ == ValueType::Array)
        mismatch(key_, typeName(type_, elem_), "array of numbers");
    std::vector<double> out(static_cast<size_t>(count_));
    size_t es = scalarSize(elem_);
    for (uint64_t i = 0; i < count_; ++i) out[i] = numberAt(elem_, data_ + i * es);
    return out;
}

}  // namespace cairn::gguf
