#include "cairn/error.h"
#include "cairn/gguf.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace cairn::gguf {
namespace {

template <typename T> void append(std::vector<uint8_t>& out, T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
}
void appendString(std::vector<uint8_t>& out, std::string_view s) {
    append<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}
uint64_t alignUp(uint64_t n, uint64_t a) { return (n + a - 1) / a * a; }

} // namespace

void Writer::put(Entry e) {
    for (auto& old : entries_)
        if (old.key == e.key) { old = std::move(e); return; }
    entries_.push_back(std::move(e));
}

#define CAIRN_SCALAR_SETTER(Name, CType, VType)                             \
    void Writer::Name(const std::string& key, CType v) {                    \
        Entry e{key, ValueType::VType, ValueType::UInt8, 0, {}};            \
        append<CType>(e.payload, v);                                        \
        put(std::move(e));                                                  \
    }
CAIRN_SCALAR_SETTER(setUInt8, uint8_t, UInt8)
CAIRN_SCALAR_SETTER(setInt32, int32_t, Int32)
CAIRN_SCALAR_SETTER(setUInt32, uint32_t, UInt32)
CAIRN_SCALAR_SETTER(setUInt64, uint64_t, UInt64)
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
        std::memcpy(out.data(), copy->data(), std::min(out.size(), copy->size()));
    });
    if (tensors_.back().nbytes != data.size())
        throw Error("gguf writer", "tensor '" + name + "': " + std::to_string(data.size()) + " bytes given, " +
                                       std::to_string(tensors_.back().nbytes) + " expected");
}

void Writer::addTensor(const std::string& name, TensorType type, std::vector<int64_t> ne, Filler fill) {
    if (ne.empty() || ne.size() > 4) throw Error("gguf writer", "tensor '" + name + "': 1 to 4 dimensions");
    const auto& t = traits(type);
    if (ne[0] % t.blockSize != 0)
        throw Error("gguf writer", "tensor '" + name + "': row length not a multiple of the block size");
    int64_t n = 1;
    for (auto d : ne) n *= d;
    tensors_.push_back({name, type, std::move(ne), size_t(n / t.blockSize) * t.blockBytes, std::move(fill)});
}

void Writer::serializeHeader(std::vector<uint8_t>& out, std::vector<uint64_t>& offsets) const {
    append<uint32_t>(out, 0x46554747);
    append<uint32_t>(out, 3);
    append<uint64_t>(out, tensors_.size());
    bool hasAlignment = false;
    for (const auto& e : entries_) hasAlignment |= e.key == "general.alignment";
    append<uint64_t>(out, entries_.size() + (alignment_ != 32 && !hasAlignment ? 1 : 0));
    for (const auto& e : entries_) {
        appendString(out, e.key);
        append<uint32_t>(out, uint32_t(e.type));
        if (e.type == ValueType::Array) {
            append<uint32_t>(out, uint32_t(e.elem));
            append<uint64_t>(out, e.count);
        }
        out.insert(out.end(), e.payload.begin(), e.payload.end());
    }
    if (alignment_ != 32 && !hasAlignment) {
        appendString(out, "general.alignment");
        append<uint32_t>(out, uint32_t(ValueType::UInt32));
        append<uint32_t>(out, alignment_);
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
        offset = alignUp(offset + t.nbytes, alignment_);
    }
    out.resize(alignUp(out.size(), alignment_), 0);
}

std::vector<uint8_t> Writer::toBytes() const {
    std::vector<uint8_t> out;
    std::vector<uint64_t> offsets;
    serializeHeader(out, offsets);
    size_t base = out.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        out.resize(base + offsets[i], 0);
        out.resize(base + offsets[i] + tensors_[i].nbytes, 0);
        tensors_[i].fill({out.data() + base + offsets[i], tensors_[i].nbytes});
    }
    return out;
}

void Writer::write(const std::string& path) const {
    std::string tmp = path + ".partial";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw Error(path, std::string("cannot create: ") + std::strerror(errno));
    auto fail = [&](const char* what) {
        std::fclose(f);
        std::remove(tmp.c_str());
        throw Error(path, std::string(what) + ": " + std::strerror(errno));
    };
    std::vector<uint8_t> header;
    std::vector<uint64_t> offsets;
    serializeHeader(header, offsets);
    if (std::fwrite(header.data(), 1, header.size(), f) != header.size()) fail("write failed");
    uint64_t written = 0;
    std::vector<uint8_t> buf;
    for (size_t i = 0; i < tensors_.size(); ++i) {
        static const uint8_t zeros[64] = {};
        while (written < offsets[i]) {
            size_t n = size_t(std::min<uint64_t>(sizeof zeros, offsets[i] - written));
            if (std::fwrite(zeros, 1, n, f) != n) fail("write failed");
            written += n;
        }
        buf.assign(tensors_[i].nbytes, 0);
        tensors_[i].fill(buf);
        if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) fail("write failed");
        written += buf.size();
    }
    if (std::fflush(f) != 0 || fsync(fileno(f)) != 0) fail("flush failed");
    if (std::fclose(f) != 0) { std::remove(tmp.c_str()); throw Error(path, "close failed"); }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error(path, std::string("cannot rename into place: ") + std::strerror(errno));
    }
}

} // namespace cairn::gguf
