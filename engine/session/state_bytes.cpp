#include "session/state_bytes.h"

#include "cairn/error.h"
#include "cairn/tensor_type.h"

#include "tensor/quant.h"

namespace cairn::session {
namespace {

const char* const kWhere = "snapshot";

TensorType storedType(const StateTensor& t, Session::KvStorage storage) {
    auto native = TensorType(t.typeId);
    if (!t.attention || storage == Session::KvStorage::Native) return native;
    if (storage == Session::KvStorage::Q8_0 && t.cols % 32 == 0) return TensorType::Q8_0;
    return TensorType::F16;
}

// Converts one row between the memory's type and the stored type through f32.
// Rows inside a snapshot blob sit at any byte offset, so a row to decode is
// first copied to `aligned` (block structs need their natural alignment).
void convertRow(TensorType from, const uint8_t* src, TensorType to, uint8_t* dst, int64_t cols, std::vector<float>& tmp,
                std::vector<uint64_t>& aligned) {
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

// One tensor's header and bytes in a section, as stored.
struct StoredTensor {
    std::string name;
    uint32_t type = 0;
    int64_t rows = 0, cols = 0;
    const uint8_t* data = nullptr;
    size_t bytes = 0;
};

// Reads a tensor's header and steps over its rows; the type must be one a state is stored in.
StoredTensor nextTensor(ByteReader& r) {
    StoredTensor t;
    t.name = r.str("tensor name");
    t.type = r.get<uint32_t>("tensor type");
    auto traits = tensorTypeTraits(t.type);
    auto type = TensorType(t.type);
    if (!traits || !(type == TensorType::F32 || type == TensorType::F16 || type == TensorType::Q8_0))
        throw Error(kWhere, "tensor '" + t.name + "' has unsupported storage type " + std::to_string(t.type));
    t.rows = r.get<int64_t>("tensor rows");
    t.cols = r.get<int64_t>("tensor cols");
    if (t.rows < 0 || t.cols <= 0 || t.cols % traits->blockSize != 0 || t.cols > (int64_t(1) << 32))
        throw Error(kWhere,
                    "tensor '" + t.name + "' has an impossible shape " + std::to_string(t.rows) + "×" +
                        std::to_string(t.cols));
    const size_t rb = rowBytes(type, t.cols);
    if (uint64_t(t.rows) > r.remaining() / rb) throw Error(kWhere, "truncated: tensor data runs past the end");
    t.bytes = size_t(t.rows) * rb;
    t.data = r.take(t.bytes, "tensor data");
    return t;
}

std::string shapeText(int64_t rows, int64_t cols) { return std::to_string(rows) + "×" + std::to_string(cols); }

// The views of `live`'s tensors that a checkpoint keeps.
std::vector<StateTensor> checkpointViews(Memory& live) {
    std::vector<StateTensor> out;
    for (auto& t : live.state())
        if (!t.attention) out.push_back(std::move(t));
    return out;
}

const StateTensor* findView(const std::vector<StateTensor>& views, const std::string& name) {
    for (const auto& v : views)
        if (v.name == name) return &v;
    return nullptr;
}

void copyRows(const uint8_t* src, const StateTensor& view) {
    const size_t rb = rowBytes(TensorType(view.typeId), view.cols);
    for (int64_t i = 0; i < view.rows; ++i)
        std::memcpy(view.data + size_t(i) * view.rowStride, src + size_t(i) * rb, rb);
}

}  // namespace

void ByteWriter::bytes(const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
}

const uint8_t* ByteReader::take(uint64_t n, const char* what) {
    if (n > remaining()) throw Error(kWhere, std::string("truncated: ") + what + " runs past the end");
    auto* r = p_;
    p_ += n;
    return r;
}

std::string ByteReader::str(const char* what) {
    auto n = get<uint32_t>(what);
    auto* b = take(n, what);
    return std::string(reinterpret_cast<const char*>(b), n);
}

void writeState(ByteWriter& w, Memory& memory, Session::KvStorage storage) {
    auto state = memory.state();
    w.put<uint32_t>(uint32_t(state.size()));
    std::vector<float> tmp;
    std::vector<uint64_t> aligned;
    std::vector<uint8_t> row;
    for (const auto& t : state) {
        auto from = TensorType(t.typeId);
        auto to = storedType(t, storage);
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
}

void readState(ByteReader& r, Memory& memory) {
    auto state = memory.state();
    auto nTensors = r.get<uint32_t>("tensor count");
    if (nTensors != state.size())
        throw Error(kWhere,
                    "holds " + std::to_string(nTensors) + " state tensors, the model needs " +
                        std::to_string(state.size()));
    std::vector<float> tmp;
    std::vector<uint64_t> aligned;
    for (auto& t : state) {
        const StoredTensor s = nextTensor(r);
        if (s.name != t.name) throw Error(kWhere, "tensor '" + s.name + "' where '" + t.name + "' was expected");
        if (s.rows != t.rows || s.cols != t.cols)
            throw Error(kWhere,
                        "tensor '" + s.name + "' has shape " + shapeText(s.rows, s.cols) + ", expected " +
                            shapeText(t.rows, t.cols));
        const auto from = TensorType(s.type);
        const size_t rb = rowBytes(from, s.cols);
        for (int64_t i = 0; i < s.rows; ++i)
            convertRow(from, s.data + size_t(i) * rb, TensorType(t.typeId), t.data + size_t(i) * t.rowStride, s.cols,
                       tmp, aligned);
    }
}

size_t checkpointBytes(Memory& live) {
    size_t bytes = 0;
    for (const auto& v : checkpointViews(live)) bytes += size_t(v.rows) * rowBytes(TensorType(v.typeId), v.cols);
    return bytes;
}

void skipCheckpointState(ByteReader& r, Memory& live) {
    const auto views = checkpointViews(live);
    auto n = r.get<uint32_t>("tensor count");
    if (n != views.size())
        throw Error(kWhere,
                    "a checkpoint holds " + std::to_string(n) + " state tensors, the model needs " +
                        std::to_string(views.size()));
    for (const auto& v : views) {
        const StoredTensor s = nextTensor(r);
        if (s.name != v.name)
            throw Error(kWhere, "checkpoint tensor '" + s.name + "' where '" + v.name + "' was expected");
        if (s.type != uint32_t(v.typeId) || s.rows != v.rows || s.cols != v.cols)
            throw Error(kWhere,
                        "checkpoint tensor '" + s.name + "' is stored as type " + std::to_string(s.type) + ", " +
                            shapeText(s.rows, s.cols) + "; expected type " + std::to_string(v.typeId) + ", " +
                            shapeText(v.rows, v.cols));
    }
}

void applyStoredState(const StoredState& stored, int64_t position, Memory& live) {
    live.resizeForRestore(position);  // K/V keep their first `position` rows; recurrent tensors are overwritten below
    const auto views = checkpointViews(live);
    ByteReader r(std::span(*stored.snapshot).subspan(stored.offset));
    const auto n = r.get<uint32_t>("tensor count");
    size_t filled = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const StoredTensor s = nextTensor(r);
        const StateTensor* view = findView(views, s.name);
        if (!view) continue;  // a K/V tensor of a whole state
        // Checked at restore (readState or skipCheckpointState): these are the view's own type and shape.
        if (s.type != uint32_t(view->typeId) || s.rows != view->rows || s.cols != view->cols)
            throw Error(kWhere, "stored checkpoint tensor '" + s.name + "' does not match the memory");
        copyRows(s.data, *view);
        ++filled;
    }
    if (filled != views.size()) throw Error(kWhere, "a stored checkpoint lacks some of the memory's tensors");
}

void writeStoredState(ByteWriter& w, const StoredState& stored, Memory& live) {
    const auto views = checkpointViews(live);
    ByteReader r(std::span(*stored.snapshot).subspan(stored.offset));
    const auto n = r.get<uint32_t>("tensor count");
    w.put<uint32_t>(uint32_t(views.size()));
    for (uint32_t i = 0; i < n; ++i) {
        const StoredTensor s = nextTensor(r);
        if (!findView(views, s.name)) continue;
        w.str(s.name);
        w.put<uint32_t>(s.type);
        w.put<int64_t>(s.rows);
        w.put<int64_t>(s.cols);
        w.bytes(s.data, s.bytes);
    }
}

}  // namespace cairn::session
