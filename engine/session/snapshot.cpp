// Snapshot format, version 1 (all integers little-endian):
//
//   "CAIRNSNP"                 8 bytes magic
//   u32 version                = 1
//   u64 model fingerprint      modelFingerprint()
//   u32 n, n bytes             architecture
//   u32 kv storage             0 native, 1 f16, 2 q8_0 (attention memory only)
//   u64 n, n × i32             token ids
//   u64 n, n × f32             logits after the last token
//   u32 n                      state tensors, then for each:
//     u32 n, n bytes name; u32 stored type (cairn::TensorType); i64 rows; i64 cols; rows × row bytes
//   u64 checksum               XXH3-64 of every byte before it
//
// Restore verifies the checksum before reading anything else, then the magic,
// version, fingerprint, architecture and every tensor's name and shape against
// a fresh memory of the same model.
#include "cairn/error.h"
#include "cairn/session.h"
#include "cairn/gguf.h"

#include "tensor/quant.h"

#include <xxhash.h>

#include <cstring>

namespace cairn {
namespace {

constexpr char kMagic[8] = {'C', 'A', 'I', 'R', 'N', 'S', 'N', 'P'};
constexpr uint32_t kVersion = 1;
const char* const kWhere = "snapshot";

class ByteWriter {
public:
    std::vector<uint8_t> out;
    template <typename T> void put(T v) {
        uint8_t b[sizeof(T)];
        std::memcpy(b, &v, sizeof(T));
        out.insert(out.end(), b, b + sizeof(T));
    }
    void bytes(const void* p, size_t n) {
        auto* b = static_cast<const uint8_t*>(p);
        out.insert(out.end(), b, b + n);
    }
    void str(const std::string& s) { put<uint32_t>(uint32_t(s.size())); bytes(s.data(), s.size()); }
};

class ByteReader {
public:
    ByteReader(std::span<const uint8_t> data) : p_(data.data()), end_(data.data() + data.size()) {}
    template <typename T> T get(const char* what) {
        need(sizeof(T), what);
        T v;
        std::memcpy(&v, p_, sizeof(T));
        p_ += sizeof(T);
        return v;
    }
    const uint8_t* take(uint64_t n, const char* what) {
        need(n, what);
        auto* r = p_;
        p_ += n;
        return r;
    }
    std::string str(const char* what) {
        auto n = get<uint32_t>(what);
        auto* b = take(n, what);
        return std::string(reinterpret_cast<const char*>(b), n);
    }
    size_t remaining() const { return size_t(end_ - p_); }

private:
    void need(uint64_t n, const char* what) {
        if (n > remaining()) throw Error(kWhere, std::string("truncated: ") + what + " runs past the end");
    }
    const uint8_t* p_;
    const uint8_t* end_;
};

TensorType storedType(const StateTensor& t, Session::KvStorage storage, bool attention) {
    auto native = TensorType(t.typeId);
    if (!attention || storage == Session::KvStorage::Native) return native;
    if (storage == Session::KvStorage::Q8_0 && t.cols % 32 == 0) return TensorType::Q8_0;
    return TensorType::F16;
}

// Converts one row between the memory's type and the stored type through f32.
// Rows inside a snapshot blob sit at any byte offset, so a row to decode is
// first copied to `aligned` (block structs need their natural alignment).
void convertRow(TensorType from, const uint8_t* src, TensorType to, uint8_t* dst, int64_t cols,
                std::vector<float>& tmp, std::vector<uint64_t>& aligned) {
    const size_t bytes = rowBytes(from, cols);
    if (from == to) {
        std::memcpy(dst, src, bytes);
        return;
    }
    aligned.resize((bytes + 7) / 8);
    std::memcpy(aligned.data(), src, bytes);
    tmp.resize(size_t(cols));
    tensor::dequantizeRow(from, aligned.data(), tmp.data(), cols);
    tensor::quantizeRow(to, tmp.data(), dst, cols);
}

} // namespace

uint64_t modelFingerprint(const Model& model) {
    auto header = model.file().headerBytes();
    return XXH3_64bits_withSeed(header.data(), header.size(), model.file().fileSize());
}

std::vector<uint8_t> Session::snapshot(KvStorage storage) const {
    ByteWriter w;
    w.bytes(kMagic, sizeof kMagic);
    w.put<uint32_t>(kVersion);
    w.put<uint64_t>(modelFingerprint(model_));
    w.str(model_.info().architecture);
    w.put<uint32_t>(uint32_t(storage));
    w.put<uint64_t>(tokens_.size());
    w.bytes(tokens_.data(), tokens_.size() * sizeof(int32_t));
    w.put<uint64_t>(logits_.size());
    w.bytes(logits_.data(), logits_.size() * sizeof(float));
    auto state = memory_->state();
    const bool attention = memory_->canTruncate();
    w.put<uint32_t>(uint32_t(state.size()));
    std::vector<float> tmp;
    std::vector<uint64_t> aligned;
    std::vector<uint8_t> row;
    for (const auto& t : state) {
        auto from = TensorType(t.typeId);
        auto to = storedType(t, storage, attention);
        w.str(t.name);
        w.put<uint32_t>(uint32_t(to));
        w.put<int64_t>(t.rows);
        w.put<int64_t>(t.cols);
        row.resize(rowBytes(to, t.cols));
        for (int64_t r = 0; r < t.rows; ++r) {
            convertRow(from, t.data + size_t(r) * t.rowStride, to, row.data(), t.cols, tmp, aligned);
            w.bytes(row.data(), row.size());
        }
    }
    w.put<uint64_t>(XXH3_64bits(w.out.data(), w.out.size()));
    return std::move(w.out);
}

void Session::restore(std::span<const uint8_t> snapshot) {
    reset();
    if (snapshot.size() < sizeof kMagic + sizeof(uint64_t)) throw Error(kWhere, "too short to be a snapshot");
    if (std::memcmp(snapshot.data(), kMagic, sizeof kMagic) != 0) throw Error(kWhere, "not a Cairn snapshot (wrong magic)");
    auto body = snapshot.first(snapshot.size() - sizeof(uint64_t));
    uint64_t stored;
    std::memcpy(&stored, snapshot.data() + body.size(), sizeof stored);
    if (XXH3_64bits(body.data(), body.size()) != stored) throw Error(kWhere, "checksum mismatch (damaged data)");

    ByteReader r(body);
    r.take(sizeof kMagic, "magic");
    auto version = r.get<uint32_t>("version");
    if (version != kVersion)
        throw Error(kWhere, "unsupported snapshot version " + std::to_string(version) + " (this build reads " +
                                std::to_string(kVersion) + ")");
    if (r.get<uint64_t>("fingerprint") != modelFingerprint(model_))
        throw Error(kWhere, "taken with another model file");
    auto arch = r.str("architecture");
    if (arch != model_.info().architecture) throw Error(kWhere, "architecture '" + arch + "' does not match the model");
    r.get<uint32_t>("kv storage");
    auto nTokens = r.get<uint64_t>("token count");
    if (nTokens > uint64_t(memory_->capacity()))
        throw Error(kWhere, std::to_string(nTokens) + " tokens do not fit the context of " +
                                std::to_string(memory_->capacity()));
    auto* tokenBytes = r.take(nTokens * sizeof(int32_t), "tokens");
    std::vector<int32_t> tokens(static_cast<size_t>(nTokens));
    if (!tokens.empty()) std::memcpy(tokens.data(), tokenBytes, tokens.size() * sizeof(int32_t));
    for (auto t : tokens)
        if (t < 0 || t >= model_.info().vocabSize) throw Error(kWhere, "token id " + std::to_string(t) + " out of range");
    auto nLogits = r.get<uint64_t>("logit count");
    if (nLogits != (nTokens ? uint64_t(model_.info().vocabSize) : 0)) throw Error(kWhere, "logit count does not match the model");
    auto* logitBytes = r.take(nLogits * sizeof(float), "logits");
    std::vector<float> logits(static_cast<size_t>(nLogits));
    if (!logits.empty()) std::memcpy(logits.data(), logitBytes, logits.size() * sizeof(float));

    auto memory = model_.newMemory(options_.memory);
    memory->resizeForRestore(int64_t(nTokens));
    auto state = memory->state();
    auto nTensors = r.get<uint32_t>("tensor count");
    if (nTensors != state.size()) throw Error(kWhere, "holds " + std::to_string(nTensors) + " state tensors, the model needs " + std::to_string(state.size()));
    std::vector<float> tmp;
    std::vector<uint64_t> aligned;
    for (auto& t : state) {
        auto name = r.str("tensor name");
        if (name != t.name) throw Error(kWhere, "tensor '" + name + "' where '" + t.name + "' was expected");
        auto type = r.get<uint32_t>("tensor type");
        auto traits = tensorTypeTraits(type);
        auto from = TensorType(type);
        if (!traits || !(from == TensorType::F32 || from == TensorType::F16 || from == TensorType::Q8_0))
            throw Error(kWhere, "tensor '" + name + "' has unsupported storage type " + std::to_string(type));
        auto rows = r.get<int64_t>("tensor rows");
        auto cols = r.get<int64_t>("tensor cols");
        if (rows != t.rows || cols != t.cols || cols % traits->blockSize != 0)
            throw Error(kWhere, "tensor '" + name + "' has shape " + std::to_string(rows) + "×" + std::to_string(cols) +
                                    ", expected " + std::to_string(t.rows) + "×" + std::to_string(t.cols));
        size_t rb = rowBytes(from, cols);
        for (int64_t i = 0; i < rows; ++i)
            convertRow(from, r.take(rb, "tensor data"), TensorType(t.typeId), t.data + size_t(i) * t.rowStride, cols, tmp,
                       aligned);
    }
    if (r.remaining() != 0) throw Error(kWhere, std::to_string(r.remaining()) + " unexpected bytes after the state");
    memory_ = std::move(memory);
    tokens_ = std::move(tokens);
    logits_ = std::move(logits);
}

} // namespace cairn
