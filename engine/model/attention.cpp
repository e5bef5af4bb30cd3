#include "model/attention.h"

#include "model/attention_kernels.h"
#include "tensor/half_rows.h"

#include <algorithm>
#include <vector>

namespace cairn::model {

void attention(const memory::KvCache& cache, int64_t layer, const AttentionShape& s, const float* q, int64_t ldq,
               int64_t nTokens, int64_t pos0, float* out, int64_t ldo, ExecContext& ctx) {
    const bool f16 = cache.type() == KvType::F16;
    const int64_t group = s.heads / s.kvHeads;
    const int64_t blocks = (group + attn::kMaxHeads - 1) / attn::kMaxHeads;  // head blocks per KV head
    const attn::Kernels& k = attn::activeKernels();
    // A work item is (KV head, t, block of up to kMaxHeads query heads of that
    // KV head): its values are read once for the block. KV head outermost, so
    // a thread's consecutive items read the same keys and values. Each query's
    // arithmetic is its own (attention_kernels.h): items, chunks and threads
    // never change a bit.
    ctx.parallelFor(s.kvHeads * nTokens * blocks, 1, [&](int64_t begin, int64_t end) {
        // Per-thread scratch, kept between calls (nothing in here waits for
        // other tasks, so no other item runs on this thread meanwhile).
        thread_local std::vector<float> weights, qRound;
        const size_t cap = size_t(pos0 + nTokens);
        if (weights.size() < cap * attn::kMaxHeads) weights.resize(cap * attn::kMaxHeads);
        if (qRound.size() < size_t(s.keyDim * attn::kMaxHeads)) qRound.resize(size_t(s.keyDim * attn::kMaxHeads));
        for (int64_t item = begin; item < end; ++item) {
            const int64_t kvh = item / (nTokens * blocks), t = item / blocks % nTokens, b = item % blocks;
            const int64_t h0 = kvh * group + b * attn::kMaxHeads;
            const int heads = int(std::min<int64_t>(attn::kMaxHeads, (kvh + 1) * group - h0));
            const int64_t end = pos0 + t + 1;  // attends to positions first … pos0 + t
            const int64_t first = s.window > 0 ? std::max<int64_t>(0, end - s.window) : 0;
            const int64_t n = end - first;
            const float* qh[attn::kMaxHeads];
            float* w[attn::kMaxHeads];
            float* o[attn::kMaxHeads];
            for (int i = 0; i < heads; ++i) {
                qh[i] = q + t * ldq + (h0 + i) * s.keyDim;
                if (f16) {  // as llama.cpp with an f16 cache: q meets K in f16
                    float* r = &qRound[size_t(i * s.keyDim)];
                    tensor::roundRowThroughF16(qh[i], r, s.keyDim);
                    qh[i] = r;
                }
                w[i] = &weights[cap * size_t(i)];
                o[i] = out + t * ldo + (h0 + i) * s.valueDim;
            }
            const size_t skip = size_t(first) * cache.elementBytes();
            k.scores(qh, heads, cache.keys(layer, kvh) + skip * size_t(s.keyDim), f16, n, s.keyDim, s.scale, w);
            for (int i = 0; i < heads; ++i) {
                const float sum = k.expSum(w[i], n, k.maxOf(w[i], n));
                k.normalize(w[i], n, 1.0f / sum, f16);
            }
            k.accumulate(w, heads, cache.values(layer, kvh) + skip * size_t(s.valueDim), f16, n, s.valueDim, o);
        }
    });
}

}  // namespace cairn::model
