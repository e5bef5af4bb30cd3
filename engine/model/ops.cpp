#include "model/ops.h"

#include "model/vector_math.h"

#include "cairn/error.h"
#include "tensor/quant.h"
#include "tensor/row_tiles.h"

#include <cmath>
#include <string>

namespace cairn::model {

void rmsNorm(const float* x, const float* w, float* y, int64_t n, float eps) {
    double sum = 0.0;  // double: the mean of squares is the one long reduction here
    for (int64_t i = 0; i < n; ++i) sum += double(x[i]) * double(x[i]);
    const float scale = float(1.0 / std::sqrt(sum / double(n) + double(eps)));
    if (w) {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
    } else {
        for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale;
    }
}

void rmsNormRows(const float* x, const float* w, float* y, int64_t n, int64_t rows, int64_t ld, float eps) {
    for (int64_t r = 0; r < rows; ++r) rmsNorm(x + r * ld, w, y + r * ld, n, eps);
}

// Vectorized: with std::exp per element it was 1.7 % of llama-1b F16 pp512
// (`perf record` of `cairn-cli bench -p 512 -n 0 -t 2`, AMD EPYC Zen 3).
CAIRN_VECTOR_CLONES
void swiglu(const float* gate, const float* up, float* out, int64_t n) {
    using namespace vec;
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes) store(out + i, vsilu(load(gate + i)) * load(up + i));
    if (i < n) storePartial(out + i, vsilu(loadPartial(gate + i, n - i)) * loadPartial(up + i, n - i), n - i);
}

float geluTanh(float x) {
    constexpr float kSqrt2OverPi = 0.7978845608028654f;
    return 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * (x + 0.044715f * x * x * x)));
}

void geglu(const float* gate, const float* up, float* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) out[i] = geluTanh(gate[i]) * up[i];
}

void forEachPosition(int64_t first, int64_t T, ExecContext& ctx, const std::function<void(int64_t)>& fn) {
    ctx.parallelFor(T - first, 1, [&](int64_t b, int64_t end) {
        for (int64_t t = first + b; t < first + end; ++t) fn(t);
    });
}

void addInPlace(float* y, const float* x, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float dot(const float* a, const float* b, int64_t n) {
    float acc[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        for (int k = 0; k < 8; ++k) acc[k] += a[i + k] * b[i + k];
    float s = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
    for (; i < n; ++i) s += a[i] * b[i];
    return s;
}

void embedTokens(const tensor::MatrixView& table, std::span<const int32_t> tokens, float* out, int64_t ld) {
    const int64_t nEmbd = table.cols, nVocab = table.rows;
    std::vector<uint8_t> scratch(table.layout == tensor::RowLayout::File ? 0 : table.rowStride);
    for (size_t t = 0; t < tokens.size(); ++t) {
        const int32_t id = tokens[t];
        if (id < 0 || id >= nVocab)
            throw Error("model",
                        "token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(nVocab) +
                            " tokens)");
        tensor::dequantizeRow(table.type, tensor::fileLayoutRow(table, id, scratch.data()), out + int64_t(t) * ld,
                              nEmbd);
    }
}

tensor::MatrixView rowSlice(const tensor::MatrixView& w, int64_t first, int64_t n) {
    if (first < 0 || n < 0 || first + n > w.rows) throw Error("model", "row slice outside the weight");
    // A Tiles16 tile cannot be split (TensorBinder::matrix's `tileable`).
    if (w.layout == tensor::RowLayout::Tiles16 &&
        (first % tensor::kTileRows != 0 || (n % tensor::kTileRows != 0 && first + n != w.rows)))
        throw Error("model", "row slice splits a tile of a re-ordered weight");
    tensor::MatrixView v = w;
    v.data = w.row(first);
    v.rows = n;
    return v;
}

tensor::MatrixView matrixView(const gguf::TensorInfo& t) {
    const std::string name(t.name);
    if (t.nDims != 2) throw Error("model", "tensor " + name + " is not a matrix");
    if (!traits(t.type).supported)
        throw Error("model",
                    "tensor " + name + " has type " + std::string(tensorTypeName(t.type)) +
                        ", which Cairn cannot compute with");
    tensor::MatrixView v;
    v.type = t.type;
    v.data = t.data;
    v.rows = t.ne[1];
    v.cols = t.ne[0];
    v.rowStride = rowBytes(t.type, t.ne[0]);
    return v;
}

std::vector<float> vectorF32(const gguf::TensorInfo& t, int64_t n) {
    const std::string name(t.name);
    if (t.elements() != n)
        throw Error("model",
                    "tensor " + name + " has " + std::to_string(t.elements()) + " elements, expected " +
                        std::to_string(n));
    if (!traits(t.type).supported || n % traits(t.type).blockSize != 0)
        throw Error("model", "tensor " + name + " has unsupported type " + std::string(tensorTypeName(t.type)));
    std::vector<float> v(static_cast<size_t>(n));
    tensor::dequantizeRow(t.type, t.data, v.data(), n);
    return v;
}

int64_t requiredInt(const gguf::File& f, const std::string& key) {
    const auto* v = f.find(key);
    if (!v) throw Error("model", "missing metadata key " + key);
    if (!v->isInteger()) throw Error("model", "metadata key " + key + " must be one integer");
    return v->asInt();
}

void checkShape(const gguf::TensorInfo& t, int64_t ne0, int64_t ne1) {
    if (t.ne[0] != ne0 || t.ne[1] != ne1 || t.ne[2] != 1 || t.ne[3] != 1)
        throw Error("model",
                    "tensor " + std::string(t.name) + " has shape [" + std::to_string(t.ne[0]) + ", " +
                        std::to_string(t.ne[1]) + "], expected [" + std::to_string(ne0) + ", " + std::to_string(ne1) +
                        "]");
}

}  // namespace cairn::model
