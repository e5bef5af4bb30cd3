// GGUF reader. Every length, count and offset read from the file is checked
// against the bytes that remain before it is used, so no input can make the
// reader read outside the file, allocate more than the file holds, or loop
// longer than the file is long.
#include "cairn/error.h"
#include "cairn/gguf.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <unordered_set>

namespace cairn::gguf {

constexpr uint32_t kMagic = 0x46554747;  // "GGUF" little-endian
constexpr uint32_t kMaxDims = 4;

struct File::Mapping {
    void* addr = nullptr;
    size_t size = 0;
    ~Mapping() { if (addr && size) munmap(addr, size); }
};

std::string_view valueTypeName(ValueType type) {
    static constexpr std::string_view names[] = {"uint8", "int8", "uint16", "int16", "uint32", "int32",
                                                 "float32", "bool", "string", "array", "uint64", "int64",
                                                 "float64"};
    auto i = uint32_t(type);
    return i < std::size(names) ? names[i] : std::string_view("unknown");
}

namespace {

size_t scalarSize(ValueType t) {
    switch (t) {
    case ValueType::UInt8: case ValueType::Int8: case ValueType::Bool: return 1;
    case ValueType::UInt16: case ValueType::Int16: return 2;
    case ValueType::UInt32: case ValueType::Int32: case ValueType::Float32: return 4;
    case ValueType::UInt64: case ValueType::Int64: case ValueType::Float64: return 8;
    default: return 0;
    }
}

template <typename T> T load(const uint8_t* p) { T v; std::memcpy(&v, p, sizeof v); return v; }

} // namespace

struct Parser {
    File& f;
    const uint8_t* p;
    const uint8_t* end;

    [[noreturn]] void fail(const std::string& what) const {
        throw Error(f.path_, what + " (at byte " + std::to_string(p - f.base_) + ")");
    }
    size_t remaining() const { return size_t(end - p); }
    void need(uint64_t n, const char* what) const {
        if (n > remaining())
            fail(std::string("truncated file: ") + what + " needs " + std::to_string(n) + " bytes, " +
                 std::to_string(remaining()) + " left");
    }
    template <typename T> T read(const char* what) { need(sizeof(T), what); T v = load<T>(p); p += sizeof(T); return v; }

    std::string_view readString(const char* what) {
        uint64_t n = read<uint64_t>(what);
        if (n > remaining())
            fail(std::string(what) + " length " + std::to_string(n) + " runs past the end of the file");
        std::string_view s(reinterpret_cast<const char*>(p), size_t(n));
        p += n;
        return s;
    }

    void readValue(Value& v, ValueType type, const std::string& key) {
        v.type_ = type;
        if (type == ValueType::String) {
            auto s = readString("string value");
            v.data_ = reinterpret_cast<const uint8_t*>(s.data());
            v.bytes_ = s.size();
            return;
        }
        if (type == ValueType::Array) {
            auto elem = read<uint32_t>("array type");
            if (elem > uint32_t(ValueType::Float64))
                fail("metadata key '" + key + "': unknown array element type " + std::to_string(elem));
            if (ValueType(elem) == ValueType::Array) fail("metadata key '" + key + "': nested arrays are not supported");
            v.elem_ = ValueType(elem);
            v.count_ = read<uint64_t>("array length");
            v.data_ = p;
            if (v.elem_ == ValueType::String) {
                // Each string takes at least its 8-byte length.
                if (v.count_ > remaining() / 8)
                    fail("metadata key '" + key + "': array of " + std::to_string(v.count_) +
                         " strings runs past the end of the file");
                for (uint64_t i = 0; i < v.count_; ++i) readString("string in array");
            } else {
                size_t es = scalarSize(v.elem_);
                if (v.count_ > remaining() / es)
                    fail("metadata key '" + key + "': array of " + std::to_string(v.count_) + " " +
                         std::string(valueTypeName(v.elem_)) + " runs past the end of the file");
                p += v.count_ * es;
            }
            v.bytes_ = size_t(p - v.data_);
            return;
        }
        size_t n = scalarSize(type);
        if (n == 0) fail("metadata key '" + key + "': unknown value type " + std::to_string(uint32_t(type)));
        need(n, "metadata value");
        v.data_ = p;
        v.bytes_ = n;
        p += n;
    }

    void parse() {
        if (f.size_ < 4 || load<uint32_t>(f.base_) != kMagic) {
            throw Error(f.path_, "not a GGUF file (wrong magic)");
        }
        p += 4;
        f.version_ = read<uint32_t>("version");
        if (f.version_ != 2 && f.version_ != 3)
            fail("unsupported GGUF version " + std::to_string(f.version_) + " (supported: 2, 3)");
        uint64_t nTensors = read<uint64_t>("tensor count");
        uint64_t nKv = read<uint64_t>("metadata count");
        // A key-value pair takes at least 8 (key length) + 4 (type) + 1 bytes,
        // a tensor info at least 8 + 4 + 8 + 4 + 8 bytes.
        if (nKv > remaining() / 13) fail("absurd metadata count " + std::to_string(nKv) + " for the file size");
        if (nTensors > remaining() / 32) fail("absurd tensor count " + std::to_string(nTensors) + " for the file size");

        f.values_.reserve(size_t(nKv));
        std::unordered_set<std::string_view> keys;
        for (uint64_t i = 0; i < nKv; ++i) {
            Value v;
            v.key_ = readString("metadata key");
            std::string key(v.key_);
            if (!keys.insert(v.key_).second) fail("duplicate metadata key '" + key + "'");
            auto type = read<uint32_t>("value type");
            if (type > uint32_t(ValueType::Float64))
                fail("metadata key '" + key + "': unknown value type " + std::to_string(type));
            readValue(v, ValueType(type), key);
            f.values_.push_back(v);
        }

        if (auto* a = f.find("general.alignment")) {
            if (a->type() != ValueType::UInt32) fail("general.alignment must be uint32");
            uint32_t al = uint32_t(a->asInt());
            if (al == 0 || (al & (al - 1)) != 0) fail("general.alignment " + std::to_string(al) + " is not a power of two");
            f.alignment_ = al;
        }

        f.tensors_.reserve(size_t(nTensors));
        std::unordered_set<std::string_view> names;
        for (uint64_t i = 0; i < nTensors; ++i) {
            TensorInfo t;
            t.name = readString("tensor name");
            std::string name(t.name);
            if (!names.insert(t.name).second) fail("duplicate tensor name '" + name + "'");
            t.nDims = read<uint32_t>("tensor dimension count");
            if (t.nDims == 0 || t.nDims > kMaxDims)
                fail("tensor '" + name + "': " + std::to_string(t.nDims) + " dimensions (1 to 4 supported)");
            int64_t total = 1;
            for (uint32_t d = 0; d < t.nDims; ++d) {
                uint64_t n = read<uint64_t>("tensor dimension");
                if (n == 0 || n > uint64_t(std::numeric_limits<int64_t>::max()) ||
                    int64_t(n) > std::numeric_limits<int64_t>::max() / total)
                    fail("tensor '" + name + "': dimension " + std::to_string(d) + " = " + std::to_string(n) +
                         " is zero or overflows the element count");
                t.ne[d] = int64_t(n);
                total *= int64_t(n);
            }
            uint32_t type = read<uint32_t>("tensor type");
            auto traits = tensorTypeTraits(type);
            if (!traits) fail("tensor '" + name + "': unknown tensor type " + std::to_string(type));
            t.type = TensorType(type);
            if (t.ne[0] % traits->blockSize != 0)
                fail("tensor '" + name + "': row length " + std::to_string(t.ne[0]) + " is not a multiple of the " +
                     std::string(traits->name) + " block size " + std::to_string(traits->blockSize));
            uint64_t blocks = uint64_t(total) / traits->blockSize;
            if (blocks > std::numeric_limits<uint64_t>::max() / traits->blockBytes)
                fail("tensor '" + name + "': byte size overflows");
            t.nbytes = size_t(blocks * traits->blockBytes);
            t.offset = read<uint64_t>("tensor offset");
            f.tensors_.push_back(t);
        }
        f.headerEnd_ = size_t(p - f.base_);

        uint64_t dataStart = (uint64_t(f.headerEnd_) + f.alignment_ - 1) / f.alignment_ * f.alignment_;
        if (nTensors > 0 && dataStart > f.size_) fail("truncated file: tensor data section starts past the end");
        f.dataOffset_ = dataStart;
        uint64_t dataBytes = f.size_ >= dataStart ? f.size_ - dataStart : 0;
        for (auto& t : f.tensors_) {
            std::string name(t.name);
            if (t.offset % f.alignment_ != 0)
                throw Error(f.path_, "tensor '" + name + "': data offset " + std::to_string(t.offset) +
                                         " is not aligned to " + std::to_string(f.alignment_));
            if (t.offset > dataBytes || t.nbytes > dataBytes - t.offset)
                throw Error(f.path_, "tensor '" + name + "': data [" + std::to_string(t.offset) + ", +" +
                                         std::to_string(t.nbytes) + ") lies outside the file's " +
                                         std::to_string(dataBytes) + " data bytes");
            t.data = f.base_ + dataStart + t.offset;
        }
    }
};

bool Value::isInteger() const {
    switch (type_) {
    case ValueType::UInt8: case ValueType::Int8: case ValueType::UInt16: case ValueType::Int16:
    case ValueType::UInt32: case ValueType::Int32: case ValueType::UInt64: case ValueType::Int64: return true;
    default: return false;
    }
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
[[noreturn]] void mismatch(std::string_view key, ValueType have, const char* want) {
    throw Error("metadata key '" + std::string(key) + "'",
                "is " + std::string(valueTypeName(have)) + ", expected " + want);
}
} // namespace

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
        if (v > uint64_t(std::numeric_limits<int64_t>::max())) mismatch(key_, type_, "a value below 2^63");
        return int64_t(v);
    }
    default: mismatch(key_, type_, "an integer");
    }
}

double Value::asFloat() const {
    if (!isNumber()) mismatch(key_, type_, "a number");
    return numberAt(type_, data_);
}

bool Value::asBool() const {
    if (type_ != ValueType::Bool) mismatch(key_, type_, "bool");
    return data_[0] != 0;
}

std::string_view Value::asString() const {
    if (type_ != ValueType::String) mismatch(key_, type_, "string");
    return {reinterpret_cast<const char*>(data_), bytes_};
}

std::vector<std::string_view> Value::strings() const {
    if (type_ != ValueType::Array || elem_ != ValueType::String) mismatch(key_, type_, "array of strings");
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
    if (type_ != ValueType::Array || elem_ == ValueType::String) mismatch(key_, type_, "array of numbers");
    std::vector<double> out(static_cast<size_t>(count_));
    size_t es = scalarSize(elem_);
    for (uint64_t i = 0; i < count_; ++i) out[i] = numberAt(elem_, data_ + i * es);
    return out;
}

File::File(File&&) noexcept = default;
File& File::operator=(File&&) noexcept = default;
File::~File() = default;

File File::open(const std::string& path) {
    File f;
    f.path_ = path;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw Error(path, std::string("cannot open: ") + std::strerror(errno));
    struct stat st{};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        throw Error(path, "not a regular file");
    }
    f.size_ = uint64_t(st.st_size);
    f.mapping_ = std::make_unique<Mapping>();
    if (f.size_ > 0) {
        void* addr = mmap(nullptr, size_t(f.size_), PROT_READ, MAP_SHARED, fd, 0);
        if (addr == MAP_FAILED) {
            ::close(fd);
            throw Error(path, std::string("cannot map: ") + std::strerror(errno));
        }
        f.mapping_->addr = addr;
        f.mapping_->size = size_t(f.size_);
        f.base_ = static_cast<const uint8_t*>(addr);
    }
    ::close(fd);
    Parser parser{f, f.base_, f.base_ + f.size_};
    parser.parse();
    return f;
}

File File::fromMemory(const uint8_t* data, size_t size, std::string name) {
    File f;
    f.path_ = std::move(name);
    f.base_ = data;
    f.size_ = size;
    Parser parser{f, data, data + size};
    parser.parse();
    return f;
}

const Value* File::find(std::string_view key) const {
    for (const auto& v : values_)
        if (v.key_ == key) return &v;
    return nullptr;
}

const Value& File::get(std::string_view key) const {
    if (auto* v = find(key)) return *v;
    throw Error(path_, "missing metadata key '" + std::string(key) + "'");
}

std::string_view File::getString(std::string_view key, std::string_view fallback) const {
    auto* v = find(key);
    return v ? v->asString() : fallback;
}

int64_t File::getInt(std::string_view key, int64_t fallback) const {
    auto* v = find(key);
    return v ? v->asInt() : fallback;
}

double File::getFloat(std::string_view key, double fallback) const {
    auto* v = find(key);
    return v ? v->asFloat() : fallback;
}

bool File::getBool(std::string_view key, bool fallback) const {
    auto* v = find(key);
    return v ? v->asBool() : fallback;
}

const TensorInfo* File::findTensor(std::string_view name) const {
    for (const auto& t : tensors_)
        if (t.name == name) return &t;
    return nullptr;
}

const TensorInfo& File::tensor(std::string_view name) const {
    if (auto* t = findTensor(name)) return *t;
    throw Error(path_, "missing tensor '" + std::string(name) + "'");
}

} // namespace cairn::gguf
