// GGUF (v2, v3) reading by memory mapping, and writing.
//
// Reading validates the whole header up front (see reader.cpp and docs/GGUF.md
// for the list of checks) and never copies tensor data: every TensorInfo::data
// and every string or array value is a view into the mapping owned by the File.
// Any problem is a cairn::Error "PATH: what is wrong (at byte N)".
#pragma once

#include "cairn/tensor_type.h"

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cairn::gguf {

enum class ValueType : uint32_t {
    UInt8 = 0,
    Int8 = 1,
    UInt16 = 2,
    Int16 = 3,
    UInt32 = 4,
    Int32 = 5,
    Float32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    UInt64 = 10,
    Int64 = 11,
    Float64 = 12,
};
std::string_view valueTypeName(ValueType type);

// One metadata value. Scalars are decoded; strings and arrays point into the file.
class Value {
public:
    ValueType type() const { return type_; }
    bool isInteger() const;
    bool isNumber() const { return isInteger() || type_ == ValueType::Float32 || type_ == ValueType::Float64; }

    // Scalar access; throws cairn::Error naming the key on a type mismatch.
    int64_t asInt() const;
    double asFloat() const;  // any number
    bool asBool() const;
    std::string_view asString() const;

    // Array access.
    bool isArray() const { return type_ == ValueType::Array; }
    ValueType elementType() const { return elem_; }
    uint64_t size() const { return count_; }
    std::vector<std::string_view> strings() const;  // String arrays
    std::vector<double> numbers() const;  // numeric or bool arrays
    std::span<const uint8_t> rawArray() const { return {data_, bytes_}; }  // element bytes as stored

    std::string_view key() const { return key_; }

private:
    friend class File;
    friend class Writer;
    friend struct Parser;
    std::string_view key_;
    ValueType type_ = ValueType::UInt8;
    ValueType elem_ = ValueType::UInt8;
    uint64_t count_ = 0;  // array length
    const uint8_t* data_ = nullptr;  // scalar bytes, string bytes, or array element bytes
    size_t bytes_ = 0;
};

struct TensorInfo {
    std::string_view name;
    TensorType type = TensorType::F32;
    uint32_t nDims = 0;  // 0 to 4; dimensions past nDims are 1
    std::array<int64_t, 4> ne{1, 1, 1, 1};  // ggml order: ne[0] is the contiguous row length
    uint64_t offset = 0;  // relative to the data section
    const uint8_t* data = nullptr;  // view into the mapping
    size_t nbytes = 0;

    int64_t elements() const { return ne[0] * ne[1] * ne[2] * ne[3]; }
    int64_t rows() const { return ne[1] * ne[2] * ne[3]; }
    const uint8_t* row(int64_t i) const { return data + size_t(i) * rowBytes(type, ne[0]); }
};

// Parsing a file of `fileSize` bytes allocates at most this many bytes (its
// tables plus, on failure, the error message), whatever the bytes hold.
constexpr uint64_t parseAllocationBound(uint64_t fileSize) { return fileSize > 64 * 1024 ? fileSize : 64 * 1024; }

class File {
public:
    // Maps and validates `path`; throws cairn::Error("path", reason) on any problem.
    static File open(const std::string& path);
    // Parses a buffer that outlives the File (tests, in-memory writers).
    static File fromMemory(const uint8_t* data, size_t size, std::string name);

    File(File&&) noexcept;
    File& operator=(File&&) noexcept;
    ~File();

    const std::string& path() const { return path_; }
    uint32_t version() const { return version_; }
    uint64_t fileSize() const { return size_; }
    uint32_t alignment() const { return alignment_; }
    // Start of the tensor data section: the end of the tensor infos rounded up
    // to the alignment. A file without tensors may end before that (writers
    // need not pad it); then this is the file size.
    uint64_t dataOffset() const { return dataOffset_; }
    // Bytes from the start of the file to the end of the tensor infos (for fingerprints).
    std::span<const uint8_t> headerBytes() const { return {base_, headerEnd_}; }
    const uint8_t* base() const { return base_; }

    const std::vector<Value>& metadata() const { return values_; }
    const Value* find(std::string_view key) const;
    const Value& get(std::string_view key) const;  // throws "missing metadata key"
    std::string_view getString(std::string_view key, std::string_view fallback = {}) const;
    int64_t getInt(std::string_view key, int64_t fallback) const;
    double getFloat(std::string_view key, double fallback) const;
    bool getBool(std::string_view key, bool fallback) const;
    std::string architecture() const { return std::string(getString("general.architecture")); }

    const std::vector<TensorInfo>& tensors() const { return tensors_; }
    // Tells the system this process will not read [p, p + n) of the mapping
    // soon (the whole pages inside it leave this process's memory; a later
    // read maps them again from the file). Nothing for a File::fromMemory.
    void releasePages(const uint8_t* p, size_t n) const;
    const TensorInfo* findTensor(std::string_view name) const;
    const TensorInfo& tensor(std::string_view name) const;  // throws "missing tensor"

private:
    File() = default;
    friend struct Parser;
    struct Mapping;
    std::unique_ptr<Mapping> mapping_;
    std::string path_;
    const uint8_t* base_ = nullptr;
    uint64_t size_ = 0;
    uint32_t version_ = 0;
    uint32_t alignment_ = 32;
    uint64_t dataOffset_ = 0;
    size_t headerEnd_ = 0;
    std::vector<Value> values_;
    std::vector<TensorInfo> tensors_;
};

// Builds a GGUF v3 file in canonical form: header, key-value pairs in insertion
// order, tensor infos in insertion order, zero padding to the alignment, then
// each tensor's bytes followed by zero padding to the alignment (as ggml and
// gguf-py write them). A file without tensors ends right after its metadata.
// Setting a key again replaces its value in place. The alignment is the
// constructor's, written as general.alignment when it is not 32, unless a
// general.alignment (uint32) value is set, which then rules.
class Writer {
public:
    using Filler = std::function<void(std::span<uint8_t> out)>;

    explicit Writer(uint32_t alignment = 32);

    void setUInt8(const std::string& key, uint8_t v);
    void setInt8(const std::string& key, int8_t v);
    void setUInt16(const std::string& key, uint16_t v);
    void setInt16(const std::string& key, int16_t v);
    void setInt32(const std::string& key, int32_t v);
    void setUInt32(const std::string& key, uint32_t v);
    void setUInt64(const std::string& key, uint64_t v);
    void setInt64(const std::string& key, int64_t v);
    void setFloat32(const std::string& key, float v);
    void setFloat64(const std::string& key, double v);
    void setBool(const std::string& key, bool v);
    void setString(const std::string& key, std::string_view v);
    void setStrings(const std::string& key, const std::vector<std::string>& v);
    void setFloats(const std::string& key, const std::vector<float>& v);
    void setInt32s(const std::string& key, const std::vector<int32_t>& v);
    // An array of fixed-size elements given as their little-endian bytes
    // (`elementBytes.size()` must be `count` times the element size).
    void setArray(const std::string& key, ValueType elem, uint64_t count, std::span<const uint8_t> elementBytes);
    // Copies a value read from another file, keeping its exact type.
    void copyValue(const Value& v);
    void copyValue(const std::string& key, const Value& v);
    void remove(const std::string& key);

    // `ne` in ggml order (row length first). Data is copied now or produced at write time.
    void addTensor(const std::string& name, TensorType type, std::vector<int64_t> ne, std::span<const uint8_t> data);
    void addTensor(const std::string& name, TensorType type, std::vector<int64_t> ne, Filler fill);

    // Writes to `path` atomically (temporary file, fsync, rename).
    void write(const std::string& path) const;
    std::vector<uint8_t> toBytes() const;

private:
    struct Entry {
        std::string key;
        ValueType type;
        ValueType elem;
        uint64_t count;
        std::vector<uint8_t> payload;
    };
    struct Tensor {
        std::string name;
        TensorType type;
        std::vector<int64_t> ne;
        size_t nbytes;
        Filler fill;
    };
    void put(Entry e);
    uint32_t effectiveAlignment() const;
    void serializeHeader(std::vector<uint8_t>& out, std::vector<uint64_t>& offsets) const;
    uint32_t alignment_;
    std::vector<Entry> entries_;
    std::vector<Tensor> tensors_;
};

}  // namespace cairn::gguf
