#include "model/attention.h"

#include "model/ops.h"
#include "tensor/quant.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace cairn::model {
namespace {

// f16 → f32 for every bit pattern, built once.
const float* halfTable() {
    static const std::vector<float> table = [] {
        std::vector<float> t(65536);
        for (uint32_t i = 0; i < 65536; ++i) t[i] = tensor::f16ToF32(uint16_t(i));
        return t;
    }();
    return table.data();
}

// A cached row as f32: the row itself (F32) or a converted copy in `tmp` (F16).
const float* rowF32(const uint8_t* row, int64_t n, bool f16, float* tmp) {
    if (!f16) return reinterpret_cast<const float*>(row);
    const float* table = halfTable();
    const auto* h = reinterpret_cast<const uint16_t*>(row);
    for (int64_t i = 0; i < n; ++i) tmp[i] = table[h[i]];
    return tmp;
}

float roundF16(float x) { return halfTable()[tensor::f32ToF16(x)]; }

} // namespace

void attention(const KvCache& cache, int64_t layer, const AttentionShape& s, const float* q, int64_t ldq,
               int64_t nTokens, int64_t pos0, float* out, int64_t ldo, ExecContext& ctx) {
    const bool f16 = cache.type() == KvType::F16;
    const int64_t group = s.heads / s.kvHeads;
    const size_t eb = cache.elementBytes();
    if (f16) halfTable();  // build outside the parallel region
    ctx.parallelFor(nTokens * s.heads, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> scores(size_t(pos0 + nTokens));
        std::vector<float> tmp(size_t(std::max(s.keyDim, s.valueDim))), qRound(size_t(s.keyDim));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t t = item / s.heads, h = item % s.heads, kvh = h / group;
            const int64_t last = pos0 + t;  // attends to positions 0 … last
            const float* qh = q + t * ldq + h * s.keyDim;
            if (f16) {  // as llama.cpp with an f16 cache: q meets K in f16
                for (int64_t i = 0; i < s.keyDim; ++i) qRound[size_t(i)] = roundF16(qh[i]);
                qh = qRound.data();
            }
            const uint8_t* keys = cache.keys(layer, kvh);
            const uint8_t* values = cache.values(layer, kvh);
            float maxScore = -INFINITY;
            for (int64_t j = 0; j <= last; ++j) {
                const float* k = rowF32(keys + size_t(j) * s.keyDim * eb, s.keyDim, f16, tmp.data());
                const float sc = dot(qh, k, s.keyDim) * s.scale;
                scores[size_t(j)] = sc;
                maxScore = std::max(maxScore, sc);
            }
            float sum = 0.0f;
            for (int64_t j = 0; j <= last; ++j) {
                const float w = std::exp(scores[size_t(j)] - maxScore);
                scores[size_t(j)] = w;
                sum += w;
            }
            // Normalized weights (f16 with an f16 cache, as llama.cpp meets V), then Σ w·v in position order.
            const float inv = 1.0f / sum;
            for (int64_t j = 0; j <= last; ++j) {
                const float w = scores[size_t(j)] * inv;
                scores[size_t(j)] = f16 ? roundF16(w) : w;
            }
            float* o = out + t * ldo + h * s.valueDim;
            std::fill(o, o + s.valueDim, 0.0f);
            for (int64_t j = 0; j <= last; ++j) {
                const float* v = rowF32(values + size_t(j) * s.valueDim * eb, s.valueDim, f16, tmp.data());
                const float w = scores[size_t(j)];
                for (int64_t d = 0; d < s.valueDim; ++d) o[d] += w * v[d];
            }
        }
    });
}

} // namespace cairn::model
