// GGUF writer. The output is canonical (see gguf.h): reading a file written
// the usual way (ggml, gguf-py) and writing it back with every key and tensor
// in order reproduces it byte for byte.
#include "format.h"

#include "cairn/error.h"
#include "cairn/gguf.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

namespace cairn::gguf {

using format::alignUp;
using format::quoted;

namespace {

const char* const kWhere = "gguf writer";

template <typename T>
void append(std::vector<uint8_t>& out, T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
}
void appendString(std::vector<uint8_t>& out, std::string_view s) {
    append<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

}  // namespace

Writer::Writer(uint32_t alignment) : alignment_(alignment) {
    if (!format::isValidAlignment(alignment))
        throw Error(kWhere, "alignment " + std::to_string(alignment) + " is not a power of two and a multiple of 8");
}

void Writer::put(Entry e) {
    if (e.key.empty()) throw Error(kWhere, "empty metadata key");
    if (e.key.size() > format::kMaxKeyBytes) throw Error(kWhere, "metadata key " + quoted(e.key) + " is too long");
    if (e.key == format::kAlignmentKey) {
        if (e.type != ValueType::UInt32) throw Error(kWhere, "general.alignment must be uint32");
        uint32_t a = format::load<uint32_t>(e.payload.data());
        if (!format::isValidAlignment(a))
            throw Error(kWhere,
                        "general.alignment " + std::to_string(a) + " is not a power of two and a multiple of 8");
    }
    for (auto& old : entries_)
        if (old.key == e.key) {
            old = std::move(e);
            return;
        }
    entries_.push_back(std::move(e));
}

#define CAIRN_SCALAR_SETTER(Name, CType, VType)                                                                        \
    void Writer::Name(const std::string& key, CType v) {                                                               \
        Entry e{key, ValueType::VType, ValueType::UInt8, 0, {}};                                                       \
        append<CType>(e.payload, v);                                                                                   \
        put(std::move(e));                                                                                             \
    }
CAIRN_SCALAR_SETTER(setUInt8, uint8_t, UInt8)
CAIRN_SCALAR_SETTER(setInt8, int8_t, Int8)
CAIRN_SCALAR_SETTER(setUInt16, uint16_t, UInt16)
CAIRN_SCALAR_SETTER(setInt16, int16_t, Int16)
CAIRN_SCALAR_SETTER(setInt32, int32_t, Int32)
CAIRN_SCALAR_SETTER(setUInt32, uint32_t, UInt32)
CAIRN_SCALAR_SETTER(setUInt64, uint64_t, UInt64)
CAIRN_SCALAR_SETTER(setInt64, int64_t, Int64)
CAIRN_SCALAR_SETTER(setFloat32, float, Float32)
CAIRN_SCALAR_SETTER(setFloat64, double, Float64)
#undef CAIRN_SCALAR_SETTER

void Writer::setBool(const std::string& key, bool v) {
    put({key, ValueType::Bool, ValueType::UInt8, 0, {uint8_t(v ? 1 : 0)}});
}

void Writer::setString(const std::string& key, std::string_view v) {
    Entry e{key, ValueType::String, ValueType::UInt8, 0, {}};
    appendString(e.payload, v);
    put(std::move(e));
}

void Writer::setStrings(const std::string& key, const std::vector<std::string>& v) {
    Entry e{key, ValueType::Array, ValueType::String, v.size(), {}};
    for (const auto& s : v) appendString(e.payload, s);
    put(std::move(e));
}

void Writer::setFloats(const std::string& key, const std::vector<float>& v) {
    Entry e{key, ValueType::Array, ValueType::Float32, v.size(), {}};
    for (float x : v) append(e.payload, x);
    put(std::move(e));
}

void Writer::setInt32s(const std::string& key, const std::vector<int32_t>& v) {
    Entry e{key, ValueType::Array, ValueType::Int32, v.size(), {}};
    for (int32_t x : v) append(e.payload, x);
    put(std::move(e));
}

void Writer::setArray(const std::string& key, ValueType elem, uint64_t count, std::span<const uint8_t> elementBytes) {
    size_t es = format::scalarSize(elem);
    if (es == 0) throw Error(kWhere, "metadata key " + quoted(key) + ": setArray takes fixed-size elements only");
    if (count > elementBytes.size() / es || count * es != elementBytes.size())
        throw Error(kWhere,
                    "metadata key " + quoted(key) + ": " + std::to_string(elementBytes.size()) + " bytes given for " +
                        std::to_string(count) + " elements");
    put({key, ValueType::Array, elem, count, {elementBytes.begin(), elementBytes.end()}});
}

void Writer::copyValue(const Value& v) { copyValue(std::string(v.key()), v); }

void Writer::copyValue(const std::string& key, const Value& v) {
    Entry e{key, v.type(), v.elementType(), v.size(), {}};
    if (v.type() == ValueType::String) {
        appendString(e.payload, v.asString());
    } else {
        // Scalars and arrays: the stored bytes are exactly what we write back.
        auto raw = v.isArray() ? v.rawArray() : std::span<const uint8_t>(v.data_, v.bytes_);
        e.payload.assign(raw.begin(), raw.end());
    }
    put(std::move(e));
}

void Writer::remove(const std::string& key) {
    std::erase_if(entries_, [&](const Entry& e) { return e.key == key; });
}

void Writer::addTensor(const std::string& name, TensorType type, std::vector<int64_t> ne,
                       std::span<const uint8_t> data) {
    auto copy = std::make_shared<std::vector<uint8_t>>(data.begin(), data.end());
    addTensor(name, type, std::move(ne), [copy](std::span<uint8_t> out) {
        size_t n = std::min(out.size(), copy->size());
        if (n > 0) std::memcpy(out.data(), copy->data(), n);  // empty tensors: no null pointers to memcpy
    });
    if (tensors_.back().nbytes != data.size()) {
        size_t expected = tensors_.back().nbytes;
        tensors_.pop_back();
        throw Error(kWhere,
                    "tensor " + quoted(name) + ": " + std::to_string(data.size()) + " bytes given, " +
                        std::to_string(expected) + " expected");
    }
}

void Writer::addTensor(const std::string& name, TensorType type, std::vector<int64_t> ne, Filler fill) {
    auto fail = [&](const std::string& what) { throw Error(kWhere, "tensor " + quoted(name) + ": " + what); };
    if (name.size() > format::kMaxTensorNameBytes) fail("name longer than 64 bytes");
    for (const auto& t : tensors_)
        if (t.name == name) fail("added twice");
    if (ne.size() > format::kMaxDims) fail("more than 4 dimensions");
    auto traits = tensorTypeTraits(uint32_t(type));
    if (!traits) fail("unknown tensor type " + std::to_string(uint32_t(type)));
    int64_t n = 1;
    bool empty = false;
    for (auto d : ne) {
        if (d < 0) fail("negative dimension");
        if (d == 0) {
            empty = true;
            continue;
        }
        if (n > std::numeric_limits<int64_t>::max() / d) fail("element count overflows");
        n *= d;
    }
    if (empty) n = 0;
    int64_t rowLength = ne.empty() ? 1 : ne[0];
    if (rowLength % traits->blockSize != 0) fail("row length not a multiple of the block size");
    uint64_t blocks = uint64_t(n) / traits->blockSize;
    if (blocks > std::numeric_limits<size_t>::max() / traits->blockBytes) fail("byte size overflows");
    tensors_.push_back({name, type, std::move(ne), size_t(blocks * traits->blockBytes), std::move(fill)});
}

uint32_t Writer::effectiveAlignment() const {
    for (const auto& e : entries_)
        if (e.key == format::kAlignmentKey) return format::load<uint32_t>(e.payload.data());
    return alignment_;
}

void Writer::serializeHeader(std::vector<uint8_t>& out, std::vector<uint64_t>& offsets) const {
    uint32_t alignment = effectiveAlignment();
    bool hasAlignmentKey = false;
    for (const auto& e : entries_) hasAlignmentKey |= e.key == format::kAlignmentKey;
    bool addAlignmentKey = !hasAlignmentKey && alignment != format::kDefaultAlignment;

    append<uint32_t>(out, format::kMagic);
    append<uint32_t>(out, 3);
    append<uint64_t>(out, tensors_.size());
    append<uint64_t>(out, entries_.size() + (addAlignmentKey ? 1 : 0));
    for (const auto& e : entries_) {
        appendString(out, e.key);
        append<uint32_t>(out, uint32_t(e.type));
        if (e.type == ValueType::Array) {
            append<uint32_t>(out, uint32_t(e.elem));
            append<uint64_t>(out, e.count);
        }
        out.insert(out.end(), e.payload.begin(), e.payload.end());
    }
    if (addAlignmentKey) {
        appendString(out, format::kAlignmentKey);
        append<uint32_t>(out, uint32_t(ValueType::UInt32));
        append<uint32_t>(out, alignment);
    }
    uint64_t offset = 0;
    offsets.clear();
    for (const auto& t : tensors_) {
        appendString(out, t.name);
        append<uint32_t>(out, uint32_t(t.ne.size()));
        for (auto d : t.ne) append<uint64_t>(out, uint64_t(d));
        append<uint32_t>(out, uint32_t(t.type));
        append<uint64_t>(out, offset);
        offsets.push_back(offset);
        offset = alignUp(offset + t.nbytes, alignment);
    }
    offsets.push_back(offset);  // the padded end of the data section
    if (!tensors_.empty()) out.resize(alignUp(out.size(), alignment), 0);
}

std::vector<uint8_t> Writer::toBytes() const {
    std::vector<uint8_t> out;
    std::vector<uint64_t> offsets;
    serializeHeader(out, offsets);
    size_t base = out.size();
    out.resize(base + offsets.back(), 0);
    for (size_t i = 0; i < tensors_.size(); ++i) tensors_[i].fill({out.data() + base + offsets[i], tensors_[i].nbytes});
    return out;
}

void Writer::write(const std::string& path) const {
    std::string tmp = path + ".partial";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw Error(path, std::string("cannot create: ") + std::strerror(errno));
    auto fail = [&](const char* what) {
        int err = errno;
        std::fclose(f);
        std::remove(tmp.c_str());
        throw Error(path, std::string(what) + ": " + std::strerror(err));
    };
    std::vector<uint8_t> header;
    std::vector<uint64_t> offsets;
    serializeHeader(header, offsets);
    if (std::fwrite(header.data(), 1, header.size(), f) != header.size()) fail("write failed");
    uint64_t written = 0;
    std::vector<uint8_t> buf;
    static const uint8_t zeros[64] = {};
    auto padTo = [&](uint64_t target) {
        while (written < target) {
            size_t n = size_t(std::min<uint64_t>(sizeof zeros, target - written));
            if (std::fwrite(zeros, 1, n, f) != n) fail("write failed");
            written += n;
        }
    };
    for (size_t i = 0; i < tensors_.size(); ++i) {
        padTo(offsets[i]);
        buf.assign(tensors_[i].nbytes, 0);
        tensors_[i].fill(buf);
        if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) fail("write failed");
        written += buf.size();
    }
    padTo(offsets.back());
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) fail("flush failed");
    if (std::fclose(f) != 0) {
        std::remove(tmp.c_str());
        throw Error(path, "close failed");
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        int err = errno;
        std::remove(tmp.c_str());
        throw Error(path, std::string("cannot rename into place: ") + std::strerror(err));
    }
}

}  // namespace cairn::gguf
