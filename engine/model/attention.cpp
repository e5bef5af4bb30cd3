#include "model/attention.h"

#include "model/attention_kernels.h"

#include <algorithm>
#include <vector>

namespace cairn::model {

void attention(const KvCache& cache, int64_t layer, const AttentionShape& s, const float* q, int64_t ldq,
               int64_t nTokens, int64_t pos0, float* out, int64_t ldo, ExecContext& ctx) {
    const bool f16 = cache.type() == KvType::F16;
    const int64_t group = s.heads / s.kvHeads;
    const attn::Kernels& k = attn::activeKernels();
    // Work items (t, h), one query each; see attention_kernels.h for the arithmetic.
    ctx.parallelFor(nTokens * s.heads, 1, [&](int64_t begin, int64_t end) {
        std::vector<float> weights(size_t(pos0 + nTokens)), qRound(size_t(s.keyDim));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t t = item / s.heads, h = item % s.heads, kvh = h / group;
            const int64_t n = pos0 + t + 1;  // attends to positions 0 … pos0 + t
            const float* qh = q + t * ldq + h * s.keyDim;
            if (f16) {  // as llama.cpp with an f16 cache: q meets K in f16
                for (int64_t i = 0; i < s.keyDim; ++i) qRound[size_t(i)] = attn::roundToF16(qh[i]);
                qh = qRound.data();
            }
            k.scores(qh, cache.keys(layer, kvh), f16, n, s.keyDim, s.scale, weights.data());
            const float sum = k.expSum(weights.data(), n, k.maxOf(weights.data(), n));
            k.normalize(weights.data(), n, 1.0f / sum, f16);
            k.accumulate(weights.data(), cache.values(layer, kvh), f16, n, s.valueDim, out + t * ldo + h * s.valueDim);
        }
    });
}

} // namespace cairn::model
