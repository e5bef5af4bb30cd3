#include "gguf_peek.h"

#include "cairn/error.h"

#include <algorithm>
#include <cstring>

namespace cairn::hub {
namespace {

// Little-endian reads that report running out instead of reading past the end.
struct Reader {
    const uint8_t* p;
    size_t size;
    size_t at = 0;

    bool take(void* out, size_t n) {
        if (n > size - at) return false;
        std::memcpy(out, p + at, n);
        at += n;
        return true;
    }
    bool skip(uint64_t n) {
        if (n > size - at) return false;
        at += size_t(n);
        return true;
    }
    bool u32(uint32_t& v) { return take(&v, 4); }
    bool u64(uint64_t& v) { return take(&v, 8); }
    bool string(std::string& s, size_t keep) {
        uint64_t n = 0;
        if (!u64(n) || n > size - at) return false;
        s.assign(reinterpret_cast<const char*>(p + at), size_t(std::min<uint64_t>(n, keep)));
        at += size_t(n);
        return true;
    }
};

// Bytes of a scalar of GGUF value type `t` (0 for strings, arrays and unknown types).
size_t scalarBytes(uint32_t t) {
    switch (t) {
    case 0:
    case 1:
    case 7: return 1;  // u8 i8 bool
    case 2:
    case 3: return 2;  // u16 i16
    case 4:
    case 5:
    case 6: return 4;  // u32 i32 f32
    case 10:
    case 11:
    case 12: return 8;  // u64 i64 f64
    default: return 0;
    }
}

bool isIntegerType(uint32_t t) { return t <= 5 || t == 10 || t == 11; }

// The little-endian T at `b` (any alignment).
template <class T>
T load(const uint8_t* b) {
    T v;
    std::memcpy(&v, b, sizeof v);
    return v;
}

int64_t readInteger(const uint8_t* b, uint32_t t) {
    switch (t) {
    case 0: return b[0];
    case 1: return int8_t(b[0]);
    case 2: return load<uint16_t>(b);
    case 3: return load<int16_t>(b);
    case 4: return load<uint32_t>(b);
    case 5: return load<int32_t>(b);
    case 10: {
        const uint64_t v = load<uint64_t>(b);
        return v > uint64_t(INT64_MAX) ? -1 : int64_t(v);
    }
    default: return load<int64_t>(b);
    }
}

}  // namespace

GgufPeek peekGguf(const QByteArray& bytes, const QString& where) {
    const std::string w = where.toStdString();
    Reader r{reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size())};
    char magic[4];
    uint32_t version = 0;
    uint64_t tensors = 0, pairs = 0;
    if (!r.take(magic, 4) || std::memcmp(magic, "GGUF", 4) != 0) throw Error(w, "not a GGUF file (no GGUF magic)");
    if (!r.u32(version) || (version != 2 && version != 3))
        throw Error(w, "GGUF version " + std::to_string(version) + " is not supported (2 or 3)");
    if (!r.u64(tensors) || !r.u64(pairs)) throw Error(w, "the GGUF header is cut short");

    GgufPeek out;
    std::string key, text;
    for (uint64_t i = 0; i < pairs; ++i) {
        uint32_t type = 0;
        if (!r.string(key, 256) || !r.u32(type)) return out;
        if (type == 8) {  // string
            if (!r.string(text, 256)) return out;
            if (key == "general.architecture")
                out.architecture = QString::fromUtf8(text.data(), qsizetype(text.size()));
            else if (key == "general.name") out.name = QString::fromUtf8(text.data(), qsizetype(text.size()));
        } else if (type == 9) {  // array: element type, count, elements
            uint32_t elem = 0;
            uint64_t count = 0;
            if (!r.u32(elem) || !r.u64(count)) return out;
            if (elem == 8) {
                for (uint64_t k = 0; k < count; ++k)
                    if (!r.string(text, 0)) return out;
            } else {
                const size_t each = scalarBytes(elem);
                if (each == 0)
                    throw Error(w, "metadata key '" + key + "' has an array of unknown type " + std::to_string(elem));
                if (count > (r.size - r.at) / each) return out;
                const uint8_t* first = r.p + r.at;
                r.skip(count * each);
                const std::string arch = out.architecture.toStdString();
                if (!arch.empty() && key == arch + ".attention.head_count_kv" && isIntegerType(elem) && count <= 4096)
                    for (uint64_t k = 0; k < count; ++k)
                        out.kvHeadsPerLayer.push_back(readInteger(first + k * each, elem));
            }
        } else {
            const size_t n = scalarBytes(type);
            if (n == 0) throw Error(w, "metadata key '" + key + "' has unknown type " + std::to_string(type));
            uint8_t b[8];
            if (!r.take(b, n)) return out;
            if (isIntegerType(type) && out.integers.size() < 1000) out.integers[key] = readInteger(b, type);
        }
    }
    out.complete = true;
    return out;
}

std::optional<uint64_t> kvCacheBytes(const GgufPeek& peek, int64_t ctx) {
    const std::string a = peek.architecture.toStdString();
    auto get = [&](const std::string& k, int64_t fallback) {
        auto it = peek.integers.find(a + "." + k);
        return it == peek.integers.end() ? fallback : it->second;
    };
    if (a.empty()) return std::nullopt;
    if (a == "mamba" || a == "mamba2") return 0;
    const int64_t layers = get("block_count", 0), embd = get("embedding_length", 0),
                  heads = get("attention.head_count", 0);
    if (layers < 1 || layers > 4096 || heads < 1 || heads > 1 << 16 || embd < 1 || ctx < 1 || ctx > int64_t(1) << 24)
        return std::nullopt;
    const int64_t keyLen = get("attention.key_length", embd / heads),
                  valueLen = get("attention.value_length", embd / heads);
    if (keyLen < 0 || valueLen < 0 || keyLen > 1 << 16 || valueLen > 1 << 16) return std::nullopt;
    std::vector<int64_t> kv = peek.kvHeadsPerLayer;
    if (kv.empty()) kv.assign(size_t(layers), get("attention.head_count_kv", heads));
    if (const int64_t every = get("full_attention_interval", 0); every > 0)
        for (size_t l = 0; l < kv.size(); ++l)
            if ((int64_t(l) + 1) % every != 0) kv[l] = 0;
    uint64_t total = 0;
    for (int64_t h : kv) {
        if (h < 0 || h > 1 << 16) return std::nullopt;
        const uint64_t layer = uint64_t(ctx) * uint64_t(h) * uint64_t(keyLen + valueLen) * 2;  // < 2^58
        if (__builtin_add_overflow(total, layer, &total)) return std::nullopt;
    }
    return total;
}

}  // namespace cairn::hub
